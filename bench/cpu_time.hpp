#pragma once
// CPU seconds (user + system) of this process: what a benchmark reports beside the wall clock,
// since on a shared machine the load changes the wall clock more than the work done; and the load
// average it ran under, printed beside them.
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>

namespace sextant::bench {
inline double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    const auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
    return s(u.ru_utime) + s(u.ru_stime);
}

// "LABEL: 1-, 5- and 15-minute load averages" on stdout (/proc/loadavg; "?" where unreadable).
inline void print_load(const char* label) {
    std::printf("%s: ", label);
    std::fflush(stdout);
    if (std::system("cut -d' ' -f1-3 /proc/loadavg") != 0) std::printf("?\n");
}
}  // namespace sextant::bench
