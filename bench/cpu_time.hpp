#pragma once
// CPU seconds (user + system) of this process: what a benchmark reports beside the wall clock,
// since on a shared machine the load changes the wall clock more than the work done.
#include <sys/resource.h>

namespace sextant::bench {
inline double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    const auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
    return s(u.ru_utime) + s(u.ru_stime);
}
}  // namespace sextant::bench
