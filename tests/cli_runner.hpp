#pragma once
// Runs the sextant binary the tests were built with, capturing its output and exit code.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace sextant::testing {

struct Output {
    int code = -1;
    std::string out;  // stdout and stderr together
};

inline Output run_sextant(const std::string& args) {
    const std::string cmd = std::string(SEXTANT_BINARY) + " " + args + " 2>&1";
    Output o;
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) return o;
    std::array<char, 4096> buf{};
    while (fgets(buf.data(), static_cast<int>(buf.size()), pipe)) o.out += buf.data();
    const int status = pclose(pipe);
    o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return o;
}

}  // namespace sextant::testing
