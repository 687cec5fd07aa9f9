#include "reliability/run_simulator.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <exception>
#include <iterator>
#include <thread>
#include <cmath>
#include <limits>
#include <span>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/progress.hpp"
#include "core/work_limits.hpp"
#include "reliability/rng.hpp"

namespace sextant::reliability {

namespace {
constexpr double kNever = std::numeric_limits<double>::infinity();
// A trial whose wall time passes this multiple of its failure-free time is not converging:
// failures strike faster than the job can reach its next durable checkpoint.
constexpr double kGiveUpFactor = 100.0;

// The scale that gives a gap distribution its mean: a Weibull of shape k has mean
// scale * Gamma(1 + 1/k); the others are their mean.
double gap_scale(GapKind gap, double mean, double shape) {
    return gap == GapKind::Weibull ? mean / std::tgamma(1.0 + 1.0 / shape) : mean;
}

double draw_gap(Draws& rng, GapKind gap, double scale, double shape) {
    switch (gap) {
        case GapKind::Exponential: return rng.exponential(scale);
        case GapKind::Weibull: return rng.weibull(shape, scale);
        case GapKind::Fixed: return scale;
    }
    return scale;
}

// floor(x) for x >= 1: below 2^62 a conversion to an integer truncates, and truncation is floor
// for positive numbers (exact: such an x and its integer part are both doubles).
double whole_part(double x) {
    return x < 0x1p62 ? static_cast<double>(static_cast<std::int64_t>(x)) : std::floor(x);
}

// Failure processes whose earliest pending failure is found by a minimum written out over this
// many slots (a preset has five) in refresh_next_failure().
constexpr std::size_t kFailureSlots = 8;

// The hot spares and the failed nodes in repair. Every node goes to repair at the current time
// and comes back a fixed `replacement_s` later, and a trial's time only moves forward, so the
// nodes return in the order they left: the pool is a ring of one slot per spare node, the k-th
// take uses slot k mod spares, and the slot then holds when the node of take k - spares returns,
// the earliest return of the nodes in the pool (what a min-heap would give, without its
// sifting). A node back from repair stays in its slot until it is needed: it is a spare whenever
// its time has passed. Until the ring has gone round once, a slot's node was never used.
class SparePool {
public:
    // The ring (sized here, kept between trials) is not refilled per trial: a slot is read only
    // after this trial wrote it.
    SparePool(std::vector<double>& ring, int spares, double repair_s) : slots_(sized(ring, spares)), repair_s_(repair_s) {}

    // Seconds until a replacement node is ready at time `now`: none with a spare at hand or a node
    // back from repair, else until the earliest repair ends. The failed node goes to repair and
    // returns to the pool `replacement_s` later. Without spares the job waits for its own node.
    double take(double now) {
        if (slots_.empty()) return repair_s_;
        const double wait = wrapped_ ? std::max(slots_[next_] - now, 0.0) : 0.0;
        slots_[next_] = now + repair_s_;
        if (++next_ == slots_.size()) {
            next_ = 0;
            wrapped_ = true;
        }
        return wait;
    }

private:
    static std::span<double> sized(std::vector<double>& ring, int spares) {
        ring.resize(static_cast<std::size_t>(spares));
        return ring;
    }

    std::span<double> slots_;
    double repair_s_;
    std::size_t next_ = 0;  // the slot of the next take
    bool wrapped_ = false;  // the ring went round: every slot holds a node that was used
};


// The state of one trial and the steps it moves through. Members, not locals, so that each
// step is a small function. Every random draw happens at the same point of the trial, in the
// same order, and every time is computed by the same arithmetic, whatever shortcut a step takes.
class Trial {
public:
    Trial(const RunModel& m, const std::vector<double>& scales, LogUniforms& draws,
          std::vector<double>& next_failure, std::vector<double>& repairs, TrialResult& out)
        : m_(m), scale_(scales.data()), rng_(draws), next_(next_failure.data()), slots_(next_failure.size()),
          spares_(repairs, m.recovery.hot_spares, m.recovery.replacement_s), out_(out), events_(out.events.data()),
          lost_work_(out.lost_work_s.data()), downtime_(out.downtime_s.data()),
          maintenance_cause_(m.failures.size()), processes_(m.failures.size()), give_up_s_(kGiveUpFactor * m.work_s),
          restart_s_(m.recovery.restart_s()), cycle_s_(m.checkpoint.interval_s + m.checkpoint.stall_s),
          async_(m.checkpoint.async && m.checkpoint.write_s > 0),
          periodic_(!async_ || m.checkpoint.write_s <= m.checkpoint.interval_s) {}

    void run() {
        for (std::size_t k = 0; k < processes_; ++k) next_[k] = draw_failure(k);
        refresh_next_failure();
        next_maintenance_ = m_.maintenance.mean_gap_s > 0 ? draw_maintenance() : kNever;
        const double total = m_.work_s;
        while (work_ < total) {
            check_progress();
            skip_quiet_cycles();
            switch (advance()) {
                case Stop::Failure: fail(soonest_cause_); break;
                case Stop::Maintenance: planned_maintenance(); break;
                case Stop::None: break;
            }
        }
        out_.wall_s = t_;
        out_.work_s = total;
    }

private:
    double draw_failure(std::size_t k) { return draw_failure_from(k, t_); }
    double draw_maintenance() {
        return t_ + draw_gap(rng_, m_.maintenance.gap, scale_[maintenance_cause_], 1.0);
    }

    void check_progress() const {
        if (t_ > give_up_s_)
            throw InputError("/reliability", "",
                             "the run does not finish: after 100x its failure-free time, failures still strike "
                             "before the job reaches its next durable checkpoint; lower the failure rates or the "
                             "restart cost, add spares, or checkpoint more often");
    }

    // The earliest pending failure and its cause (the lowest-numbered on a tie), in two passes
    // without a branch on the draws (which process fails next is random): the earliest time, as a
    // minimum pairwise over the kFailureSlots slots (the slots past the last process never fail),
    // then the first process holding it, every process compared from the last to the first and
    // the latest match kept. The minimum is one of the times, so a slot holds it when its bits are
    // the minimum's (times are +0 or positive: no -0 that would equal +0 with other bits).
    // Beyond the slots, both passes are scans.
    void refresh_next_failure() {
        const double* next = next_;
        double soonest = kNever;
        if (slots_ == kFailureSlots) {
            static_assert(kFailureSlots == 8, "the minimum below is written for eight slots");
            const double a = std::min(std::min(next[0], next[1]), std::min(next[2], next[3]));
            const double b = std::min(std::min(next[4], next[5]), std::min(next[6], next[7]));
            soonest = std::min(a, b);
        } else {
            for (std::size_t k = 0; k < slots_; ++k) soonest = std::min(soonest, next[k]);
        }
        const auto bits = std::bit_cast<std::uint64_t>(soonest);
        std::size_t cause = 0;
        for (std::size_t k = processes_; k-- > 0;) cause = std::bit_cast<std::uint64_t>(next[k]) == bits ? k : cause;
        soonest_failure_ = soonest;
        soonest_cause_ = cause;
    }

    // Whole cycles of (compute an interval, save) that end before the next failure or
    // maintenance, in one step: between interruptions a run is periodic, and stepping through
    // it save by save would be the inner loop of a long run. Only when no save waits for the
    // previous write (write_s <= interval), so that every cycle is alike.
    void skip_quiet_cycles() {
        const CheckpointPolicy& c = m_.checkpoint;
        if (work_ != segment_start_ || !periodic_) return;
        if (write_pending_ && write_done_ > t_ + c.interval_s) return;
        const double horizon = std::min(soonest_failure_, next_maintenance_);
        const double ahead = horizon - t_;
        // At most one cycle ahead: ahead / cycle <= 1, so fewer than the two cycles worth a skip
        // (the common case right before an interruption, decided without a division).
        if (!(ahead > cycle_s_)) return;
        double cycles = whole_part(ahead / cycle_s_);
        if (cycles > 0 && t_ + cycles * cycle_s_ >= horizon) cycles -= 1;
        cycles = std::min(cycles, cycles_left_bound(cycles));
        if (cycles < 2) return;
        work_ += cycles * c.interval_s;
        t_ += cycles * cycle_s_;
        out_.stall_s += cycles * c.stall_s;
        segment_start_ = work_;
        if (async_) {
            write_pending_ = true;
            write_position_ = work_;
            write_done_ = t_ + c.write_s;
            durable_ = work_ - c.interval_s;
        } else {
            write_pending_ = false;
            durable_ = work_;
        }
    }

    // The last segment has no save and goes through the ordinary path: at most
    // ceil(work left / interval) - 1 cycles. When `cycles` + 1 whole intervals fit in the work
    // left, that bound is at least `cycles` (for cycles < 2^50 the rounding of the product and
    // of the quotient cannot bring it below), and the division is not needed.
    double cycles_left_bound(double cycles) const {
        const double left = m_.work_s - work_;
        const double interval = m_.checkpoint.interval_s;
        if (cycles < 0x1p50 && left >= (cycles + 1.0) * interval) return cycles;
        return std::ceil(left / interval) - 1.0;
    }

    // A checkpoint write in flight becomes durable once its end has passed.
    void settle_write(double now) {
        if (write_pending_ && write_done_ <= now) {
            durable_ = write_position_;
            write_pending_ = false;
        }
    }

    void compute_until(double when) {
        work_ += when - t_;
        t_ = when;
        settle_write(t_);
    }

    // What ended a step of the job: an interruption, or nothing (the job saved, or finished).
    enum class Stop { None, Failure, Maintenance };

    // Computes to the end of the segment and saves, or stops at the interruption that comes
    // first (the job's clock is then at it).
    Stop advance() {
        const double total = m_.work_s;
        const double boundary = std::min(segment_start_ + m_.checkpoint.interval_s, total);
        const double reach = t_ + (boundary - work_);
        if (next_maintenance_ <= std::min(reach, soonest_failure_)) {  // one branch, not two
            compute_until(std::max(next_maintenance_, t_));
            return Stop::Maintenance;
        }
        if (soonest_failure_ < reach) {
            compute_until(soonest_failure_);
            return Stop::Failure;
        }
        compute_until(reach);
        work_ = boundary;  // exact, whatever the rounding of reach - t
        if (work_ >= total) return Stop::None;
        return save() ? Stop::None : Stop::Failure;
    }

    // Blocks training for the save (waiting for the previous write, then the stall); a failure
    // in between wins. Returns whether the save finished.
    bool save() {
        const CheckpointPolicy& c = m_.checkpoint;
        const double start = write_pending_ ? std::max(t_, write_done_) : t_;
        const double until = start + c.stall_s;
        const double stopped = std::min(soonest_failure_, until);  // the failure, if it comes first
        out_.stall_s += stopped - t_;
        t_ = stopped;
        settle_write(t_);
        if (soonest_failure_ < until) return false;
        segment_start_ = work_;
        if (async_) {
            write_pending_ = true;
            write_position_ = work_;
            write_done_ = t_ + c.write_s;
        } else {
            durable_ = work_;
        }
        return true;
    }

    void fail(std::size_t cause) {
        events_[cause] += 1;
        lost_work_[cause] += work_ - durable_;
        if (write_pending_) out_.lost_checkpoints += 1;
        write_pending_ = false;
        work_ = durable_;
        segment_start_ = durable_;
        next_[cause] = draw_failure(cause);
        refresh_next_failure();
        recover(cause, m_.recovery.detection_s, m_.failures[cause].needs_spare, restart_s_);
    }

    // Detection, then a spare (or the wait for one), then the restart. A failure on the way
    // starts the recovery over, charged to the new cause.
    void recover(std::size_t cause, double detection, bool needs_spare, double restart) {
        for (;;) {
            check_progress();
            const double wait = needs_spare ? spares_.take(t_) : 0.0;
            const double end = t_ + detection + wait + restart;
            const double elapsed = std::min(end, soonest_failure_) - t_;
            charge_recovery(cause, elapsed, detection, wait);
            if (soonest_failure_ >= end) {
                t_ = end;
                return;
            }
            t_ = soonest_failure_;
            cause = soonest_cause_;
            events_[cause] += 1;
            next_[cause] = draw_failure(cause);
            refresh_next_failure();
            detection = m_.recovery.detection_s;
            needs_spare = m_.failures[cause].needs_spare;
            restart = restart_s_;
        }
    }

    // Recovery time goes to its phases in order, as far as it got.
    void charge_recovery(std::size_t cause, double elapsed, double detection, double wait) {
        downtime_[cause] += elapsed;
        const double d = std::min(elapsed, detection);
        const double w = std::min(elapsed - d, wait);
        out_.detection_s += d;
        out_.spare_wait_s += w;
        out_.restart_s += elapsed - d - w;
    }

    // The job saves synchronously, stops, and restarts; failures in the window are repaired
    // there.
    void planned_maintenance() {
        const CheckpointPolicy& c = m_.checkpoint;
        const double start = write_pending_ ? std::max(t_, write_done_) : t_;
        const double saved = start + c.stall_s + (c.async ? c.write_s : 0.0);
        const double back = saved + m_.maintenance.duration_s;
        out_.maintenance_s += back - t_;
        events_[maintenance_cause_] += 1;
        t_ = back;
        write_pending_ = false;
        durable_ = work_;
        segment_start_ = work_;
        for (std::size_t k = 0; k < processes_; ++k)
            while (next_[k] < t_) next_[k] = draw_failure_from(k, next_[k]);
        refresh_next_failure();
        next_maintenance_ = draw_maintenance();
        recover(maintenance_cause_, 0.0, false, m_.recovery.process_start_s + m_.recovery.load_s);
    }

    double draw_failure_from(std::size_t k, double from) {
        const FailureProcess& p = m_.failures[k];
        return from + draw_gap(rng_, p.gap, scale_[k], p.shape);
    }

    const RunModel& m_;
    const double* scale_;  // of each failure process's gaps, then maintenance's
    Draws rng_;
    double* next_;         // pending failure of each process, then slots that never fail
    std::size_t slots_;
    SparePool spares_;
    TrialResult& out_;
    double* events_;  // out_'s per-cause counts, sized before the trial
    double* lost_work_;
    double* downtime_;
    std::size_t maintenance_cause_;
    std::size_t processes_;  // failure processes
    // Constants of the model, computed once.
    double give_up_s_;  // a trial past this wall time does not converge
    double restart_s_;  // reschedule + process start + load
    double cycle_s_;    // interval + stall: one quiet cycle
    bool async_;        // saves write in the background
    bool periodic_;     // every quiet cycle is alike (no save waits for the previous write)

    double t_ = 0;
    double work_ = 0;
    double durable_ = 0;
    double segment_start_ = 0;
    bool write_pending_ = false;
    double write_position_ = 0;
    double write_done_ = 0;
    double soonest_failure_ = kNever;
    std::size_t soonest_cause_ = 0;
    double next_maintenance_ = kNever;
};

Estimate estimate(double sum, double sum_sq, std::int64_t n) {
    const double count = static_cast<double>(n);
    const double mean = sum / count;
    const double var = n > 1 ? std::max(0.0, (sum_sq - count * mean * mean) / (count - 1.0)) : 0.0;
    const double half = 1.959963984540054 * std::sqrt(var / count);
    return {mean, mean - half, mean + half};
}
}  // namespace

double RunModel::failure_rate() const {
    double rate = 0;
    for (const auto& f : failures) rate += 1.0 / f.mean_s;
    return rate;
}

double TrialResult::lost_work_total() const {
    double sum = 0;
    for (double v : lost_work_s) sum += v;
    return sum;
}

void TrialResult::reset(std::size_t causes) {
    wall_s = work_s = stall_s = detection_s = spare_wait_s = restart_s = maintenance_s = 0;
    lost_checkpoints = 0;
    events.assign(causes, 0.0);
    lost_work_s.assign(causes, 0.0);
    downtime_s.assign(causes, 0.0);
}

double RunSummary::lost_work_s() const {
    double sum = 0;
    for (const auto& c : causes) sum += c.lost_work_s;
    return sum;
}

RunSimulator::RunSimulator(const RunModel& model) : model_(model) {
    check_run_model(model);
    // Slots past the last process stay at "never" for every trial.
    const std::size_t processes = model.failures.size();
    next_failure_.assign(processes <= kFailureSlots ? kFailureSlots : processes, kNever);
    for (const auto& f : model.failures) scales_.push_back(gap_scale(f.gap, f.mean_s, f.shape));
    scales_.push_back(gap_scale(model.maintenance.gap, model.maintenance.mean_gap_s, 1.0));
    repairs_.reserve(static_cast<std::size_t>(model.recovery.hot_spares));
}

void RunSimulator::run_trial(std::uint64_t seed, TrialResult& out) {
    own_draws_.reset(seed);
    run_trial(own_draws_, out);
}

void RunSimulator::run_trial(LogUniforms& draws, TrialResult& out) {
    out.reset(model_.failures.size() + 1);
    Trial(model_, scales_, draws, next_failure_, repairs_, out).run();
}

void check_run_model(const RunModel& m) {
    auto bad = [](double v) { return !std::isfinite(v) || v < 0; };
    if (!(m.work_s > 0) || !std::isfinite(m.work_s)) throw InternalError("run model: work must be positive");
    if (!(m.checkpoint.interval_s > 0)) throw InternalError("run model: checkpoint interval must be positive");
    if (bad(m.checkpoint.stall_s) || bad(m.checkpoint.write_s) || bad(m.recovery.detection_s) ||
        bad(m.recovery.restart_s()) || bad(m.recovery.replacement_s) || m.recovery.hot_spares < 0 ||
        bad(m.maintenance.mean_gap_s) || bad(m.maintenance.duration_s))
        throw InternalError("run model: costs must be finite and non-negative");
    for (const auto& f : m.failures)
        if (!(f.mean_s > 0) || !(f.shape > 0)) throw InternalError("run model: failure '" + f.cause + "' needs a positive mean gap");
}

double expected_events_per_trial(const RunModel& m) {
    const double maintenance = m.maintenance.mean_gap_s > 0 ? 1.0 / m.maintenance.mean_gap_s : 0.0;
    // A run lasts longer than its work by the interruptions' downtime; 2x covers goodput >= 50%,
    // and check_progress() stops runs that stretch past 100x.
    return 4.0 * m.work_s * (m.failure_rate() + maintenance) + 4.0;
}

void check_study_work(const RunModel& model, std::int64_t trials, std::int64_t points) {
    const double per_trial = expected_events_per_trial(model);
    check_work(Work::RunEvents, per_trial * static_cast<double>(trials) * static_cast<double>(points), "--trials",
               fmt::format("{} trials x {} runs of about {:.3g} events", trials, points, per_trial));
}

namespace {
// One trial's numbers in a flat row: the eight totals, then events, lost work and downtime per cause.
constexpr std::size_t kTotals = 8;

void store(const TrialResult& r, double* row) {
    const double totals[kTotals] = {r.wall_s, r.work_s, r.stall_s, r.detection_s, r.spare_wait_s, r.restart_s, r.maintenance_s, r.lost_checkpoints};
    std::copy(std::begin(totals), std::end(totals), row);
    const std::size_t causes = r.events.size();
    std::copy(r.events.begin(), r.events.end(), row + kTotals);
    std::copy(r.lost_work_s.begin(), r.lost_work_s.end(), row + kTotals + causes);
    std::copy(r.downtime_s.begin(), r.downtime_s.end(), row + kTotals + 2 * causes);
}

// Where one window's trials go: model i's rows start at rows[i], each of width[i] numbers.
struct WindowRows {
    std::vector<std::vector<double>> rows;
    std::vector<std::size_t> width;
};

// Runs trials [first, first + count) of every model on `threads` threads into their rows. Threads
// take chunks of trials in turn and run each trial on every model, reading the trial's draws
// made once (LogUniforms); each trial's seed is fixed by its index, so the rows do not depend on
// which thread ran them. A run that throws (one that cannot finish) stops the window; the error
// of the lowest such trial (of the first model there) is rethrown, as one thread would have met
// it first.
void run_window(const std::vector<RunModel>& models, std::uint64_t seed, std::int64_t first, std::int64_t count,
                unsigned threads, WindowRows& out) {
    // About 32 runs a chunk: a chunk's trials are its unit of balance between the threads.
    const std::int64_t chunk = std::max<std::int64_t>(1, 32 / static_cast<std::int64_t>(models.size()));
    std::atomic<std::int64_t> next{0};
    std::atomic<bool> failed{false};
    std::vector<std::pair<std::int64_t, std::exception_ptr>> errors(threads, {std::numeric_limits<std::int64_t>::max(), nullptr});
    auto work = [&](unsigned t) {
        std::vector<RunSimulator> sims(models.begin(), models.end());
        LogUniforms draws;
        TrialResult r;
        std::int64_t trial = 0;  // this thread's, not written into the shared errors per trial (false sharing)
        try {
            for (std::int64_t begin = next.fetch_add(chunk); begin < count && !failed; begin = next.fetch_add(chunk))
                for (trial = begin; trial < std::min(begin + chunk, count); ++trial) {
                    draws.reset(trial_seed(seed, static_cast<std::uint64_t>(first + trial)));
                    for (std::size_t i = 0; i < sims.size(); ++i) {
                        sims[i].run_trial(draws, r);
                        store(r, out.rows[i].data() + static_cast<std::size_t>(trial) * out.width[i]);
                    }
                }
        } catch (...) {
            errors[t] = {trial, std::current_exception()};
            failed = true;
        }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
    for (auto& th : pool) th.join();
    const std::pair<std::int64_t, std::exception_ptr>* worst = nullptr;
    for (const auto& e : errors)
        if (e.second && (!worst || e.first < worst->first)) worst = &e;
    if (worst) std::rethrow_exception(worst->second);
}

// Sums one window's rows of a model into its summary, in trial order (the same bits for any
// thread count and window); wall and goodput as sums and sums of squares.
struct Sums {
    double wall = 0, wall_sq = 0, good = 0, good_sq = 0;
};

void add_rows(const double* rows, std::int64_t count, std::size_t width, RunSummary& s, Sums& sums) {
    const std::size_t causes = s.causes.size();
    for (std::int64_t i = 0; i < count; ++i) {
        const double* r = rows + static_cast<std::size_t>(i) * width;
        const double g = r[1] / r[0];
        sums.wall += r[0];
        sums.wall_sq += r[0] * r[0];
        sums.good += g;
        sums.good_sq += g * g;
        s.stall_s += r[2];
        s.detection_s += r[3];
        s.spare_wait_s += r[4];
        s.restart_s += r[5];
        s.maintenance_s += r[6];
        s.lost_checkpoints += r[7];
        for (std::size_t k = 0; k < causes; ++k) {
            s.causes[k].events += r[kTotals + k];
            s.causes[k].lost_work_s += r[kTotals + causes + k];
            s.causes[k].downtime_s += r[kTotals + 2 * causes + k];
        }
    }
}

RunSummary empty_summary(const RunModel& model, std::int64_t trials) {
    RunSummary s;
    s.trials = trials;
    s.work_s = model.work_s;
    s.causes.resize(model.failures.size() + 1);
    for (std::size_t k = 0; k < model.failures.size(); ++k) s.causes[k].cause = model.failures[k].cause;
    s.causes.back().cause = "maintenance";
    return s;
}

void finish_summary(const Sums& sums, RunSummary& s) {
    const double n = static_cast<double>(s.trials);
    s.wall_s = estimate(sums.wall, sums.wall_sq, s.trials);
    s.goodput = estimate(sums.good, sums.good_sq, s.trials);
    for (double* v : {&s.stall_s, &s.detection_s, &s.spare_wait_s, &s.restart_s, &s.maintenance_s,
                      &s.lost_checkpoints})
        *v /= n;
    for (auto& c : s.causes) {
        c.events /= n;
        c.lost_work_s /= n;
        c.downtime_s /= n;
    }
}
}  // namespace

std::vector<RunSummary> simulate_sweep(const std::vector<RunModel>& models, std::int64_t trials, std::uint64_t seed,
                                       unsigned threads) {
    for (const RunModel& m : models) {
        check_run_model(m);
        check_study_work(m, trials, 1);
    }
    std::vector<RunSummary> summaries;
    std::vector<Sums> sums(models.size());
    WindowRows window;
    for (const RunModel& m : models) {
        summaries.push_back(empty_summary(m, trials));
        window.width.push_back(kTotals + 3 * summaries.back().causes.size());
    }
    window.rows.resize(models.size());
    if (models.empty()) return summaries;
    // Trials run in windows (bounded memory: about 16,384 rows), in parallel; their rows are then
    // summed in trial order, so each summary is the same to the bit for any thread count.
    const std::int64_t per_window = std::max<std::int64_t>(64, 16384 / static_cast<std::int64_t>(models.size()));
    Progress progress("Monte Carlo trials", static_cast<double>(trials) * static_cast<double>(models.size()));
    for (std::int64_t first = 0; first < trials; first += per_window) {
        const std::int64_t count = std::min(per_window, trials - first);
        for (std::size_t i = 0; i < models.size(); ++i) window.rows[i].resize(static_cast<std::size_t>(count) * window.width[i]);
        const unsigned used = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(count / 64 + 1)));
        run_window(models, seed, first, count, used, window);
        progress.advance(static_cast<double>(count) * static_cast<double>(models.size()));  // Ctrl-C stops between windows
        for (std::size_t i = 0; i < models.size(); ++i) add_rows(window.rows[i].data(), count, window.width[i], summaries[i], sums[i]);
    }
    for (std::size_t i = 0; i < models.size(); ++i) finish_summary(sums[i], summaries[i]);
    return summaries;
}

RunSummary simulate_runs(const RunModel& model, std::int64_t trials, std::uint64_t seed, unsigned threads) {
    return simulate_sweep({model}, trials, seed, threads).front();
}

}  // namespace sextant::reliability
