#pragma once
// Runs the sextant binary of this build as a user would, for end-to-end tests of the CLI.
#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace sextant::test {

struct Output {
    int code = -1;
    std::string out;  // stdout, and stderr too unless `stderr_too` is false
};

// A shell command line, its stdout (redirect stderr in `cmd` to see it) and exit code.
inline Output run_shell(const std::string& cmd) {
    Output o;
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) return o;
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) o.out.append(buf.data(), n);
    const int status = pclose(pipe);
    o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return o;
}

// `args` after the binary, as a shell would split them.
inline Output run_sextant(const std::string& args, bool stderr_too = true) {
    return run_shell(std::string(SEXTANT_BINARY) + " " + args + (stderr_too ? " 2>&1" : " 2>/dev/null"));
}

inline std::string source_path(const std::string& relative) { return std::string(SEXTANT_SOURCE_DIR) + "/" + relative; }

}  // namespace sextant::test
