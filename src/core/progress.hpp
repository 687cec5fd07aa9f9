#pragma once
// Long work on a terminal: a progress line on stderr (only when stderr is a TTY, never with
// --json, and only once the work has run a second), and Ctrl-C that stops the work between two
// units of it. Nothing is written after an interrupt: outputs are written whole at the end
// (core/output_file.hpp), so a stopped run leaves no partial file.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace sextant {

// Ctrl-C: the CLI prints that nothing was written and exits 130 (128 + SIGINT, as shells do).
class Interrupted : public std::runtime_error {
public:
    Interrupted() : std::runtime_error("interrupted") {}
};

// SIGINT sets a flag that interrupted() reads, instead of killing the process mid-write; loops
// with progress check it, and so does every file write (core/output_file.hpp).
void install_interrupt_handler();
bool interrupted();
// Throws Interrupted once Ctrl-C was pressed; call between units of work (never inside a thread
// that cannot pass an exception on: check interrupted() there instead).
void throw_if_interrupted();

// Progress lines off (--json, or tests); they are also off when stderr is not a TTY.
void set_progress_quiet(bool quiet);

// One piece of long work of `total` units. tick() is cheap and thread-safe: it counts units,
// redraws at most a few times a second and says whether to go on (false after Ctrl-C); advance()
// throws Interrupted instead, for loops that can pass an exception on.
class Progress {
public:
    Progress(std::string label, double total);
    ~Progress();
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    bool tick(double units = 1);
    void advance(double units = 1);

private:
    std::string label_;
    double total_;
    std::atomic<double> done_{0};
    std::chrono::steady_clock::time_point start_;
    std::atomic<std::int64_t> next_draw_ns_;
    std::atomic<bool> drawn_{false};
    bool enabled_;
};

}  // namespace sextant
