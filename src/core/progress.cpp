#include "core/progress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <unistd.h>

namespace sextant {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;
std::atomic<bool> g_quiet{false};

// The first Ctrl-C asks the work to stop at its next check; a second one is the default action
// (the process ends at once; a file being written is then only its temporary sibling).
extern "C" void on_sigint(int) {
    if (g_interrupted) {
        std::signal(SIGINT, SIG_DFL);
        std::raise(SIGINT);
    }
    g_interrupted = 1;
}

// The first line appears after a second (short work stays silent) and is redrawn 4 times a second.
constexpr std::int64_t kFirstDrawNs = 1'000'000'000;
constexpr std::int64_t kRedrawNs = 250'000'000;

}  // namespace

void install_interrupt_handler() {
    struct sigaction action {};
    action.sa_handler = on_sigint;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
}

bool interrupted() { return g_interrupted != 0; }

void throw_if_interrupted() {
    if (interrupted()) throw Interrupted();
}

void set_progress_quiet(bool quiet) { g_quiet.store(quiet); }

Progress::Progress(std::string label, double total)
    : label_(std::move(label)),
      total_(total),
      start_(std::chrono::steady_clock::now()),
      next_draw_ns_(kFirstDrawNs),
      enabled_(!g_quiet.load() && isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() {
    if (drawn_.load()) std::fputs("\r\033[K", stderr);  // clear the line for what follows
}

void Progress::advance(double units) {
    if (!tick(units)) throw Interrupted();
}

bool Progress::tick(double units) {
    if (interrupted()) return false;
    const double done = done_.fetch_add(units) + units;
    if (!enabled_) return true;
    const std::int64_t now =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count();
    std::int64_t due = next_draw_ns_.load();
    if (now < due || !next_draw_ns_.compare_exchange_strong(due, now + kRedrawNs)) return true;
    const double fraction = total_ > 0 ? std::min(done / total_, 1.0) : 0.0;
    const double elapsed = static_cast<double>(now) * 1e-9;
    const double left = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0.0;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(fraction * kWidth);
    std::fputs(fmt::format("\r{} [{}{}] {:.0f}% {:.0f} s left (Ctrl-C stops)\033[K", label_, std::string(static_cast<std::size_t>(filled), '#'),
                           std::string(static_cast<std::size_t>(kWidth - filled), ' '), 100 * fraction, left)
                   .c_str(),
               stderr);
    drawn_.store(true);
    return true;
}

}  // namespace sextant
