// The run-level Monte Carlo against closed forms and constructed cases.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <limits>
#include <queue>
#include <tuple>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "reliability/interval_formulas.hpp"
#include "reliability/interval_study.hpp"
#include "reliability/rng.hpp"
#include "reliability/run_simulator.hpp"

using namespace sextant;
using namespace sextant::reliability;

namespace {
constexpr double kHour = 3600.0;

// The simple model: one exponential failure process, fixed restart, blocking saves.
RunModel simple_model(double work, double interval, double stall, double mtbf, double restart) {
    RunModel m;
    m.work_s = work;
    m.checkpoint.interval_s = interval;
    m.checkpoint.stall_s = stall;
    m.recovery.reschedule_s = restart;
    if (mtbf > 0) m.failures.push_back({"any", GapKind::Exponential, mtbf, 1.0, false});
    return m;
}

double sum_of_buckets(const TrialResult& r) {
    double downtime = 0;
    for (double d : r.downtime_s) downtime += d;
    // The per-cause downtime is the same time as detection + spare wait + restart.
    CHECK(downtime == doctest::Approx(r.detection_s + r.spare_wait_s + r.restart_s).epsilon(1e-12));
    return r.work_s + r.lost_work_total() + r.stall_s + r.detection_s + r.spare_wait_s + r.restart_s +
           r.maintenance_s;
}
}  // namespace

TEST_CASE("The random source is xoshiro256** seeded by splitmix64") {
    // splitmix64 from state 0: its first output is 0xE220A8397B1DCDAF (Vigna's reference code).
    std::uint64_t state = 0;
    CHECK(splitmix64(state) == 0xE220A8397B1DCDAFull);
    Rng a(42), b(42), c(43);
    for (int i = 0; i < 100; ++i) {
        const auto x = a.next();
        CHECK(x == b.next());
        CHECK(x != c.next());
    }
    // Exponential draws by inversion have the requested mean: 200,000 draws, 5 standard errors.
    Rng r(7);
    double sum = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) sum += r.exponential(10.0);
    CHECK(std::fabs(sum / n - 10.0) < 5 * 10.0 / std::sqrt(n));
    // Weibull with shape 2: mean scale * Gamma(1.5) = scale * sqrt(pi)/2.
    double wsum = 0;
    for (int i = 0; i < n; ++i) wsum += r.weibull(2.0, 1.0);
    const double mean = std::sqrt(M_PI) / 2, sd = std::sqrt(1 - M_PI / 4);
    CHECK(std::fabs(wsum / n - mean) < 5 * sd / std::sqrt(n));
}

TEST_CASE("Draws read from a shared stream of logarithms are Rng's draws, to the bit, for every reader") {
    // Two readers of one stream (two models' runs of a trial): the first reads 10,000 draws (many
    // blocks), each equal to a plain Rng's; the second, from the start after it, reads the same.
    LogUniforms stream;
    stream.reset(2024);
    Rng plain(2024);
    Draws first(stream);
    std::vector<double> drawn;
    for (int i = 0; i < 10000; ++i) {
        INFO("draw ", i);
        const bool weibull = i % 3 == 2;
        const double x = weibull ? plain.weibull(0.7, 5.0) : plain.exponential(3600.0 + i);
        REQUIRE((weibull ? first.weibull(0.7, 5.0) : first.exponential(3600.0 + i)) == x);
        drawn.push_back(x);
    }
    Draws second(stream);
    for (int i = 0; i < 10000; ++i) {
        INFO("draw ", i);
        REQUIRE((i % 3 == 2 ? second.weibull(0.7, 5.0) : second.exponential(3600.0 + i)) == drawn[i]);
    }
    // A new seed starts a new stream: nothing of the old one is read again, however far it went.
    stream.reset(7);
    Rng other(7);
    Draws third(stream);
    for (int i = 0; i < 600; ++i) REQUIRE(third.exponential(10.0) == other.exponential(10.0));
    // Past what the stream keeps (a ring of kKept): a run that reads further still reads Rng's
    // draws, and so does the next run of the trial, which starts the stream over.
    const std::size_t far = LogUniforms::kKept + 3000;
    stream.reset(11);
    for (int reader = 0; reader < 2; ++reader) {
        Rng again(11);
        Draws long_run(stream);
        for (std::size_t i = 0; i < far; ++i) {
            INFO("reader ", reader, ", draw ", i);
            REQUIRE(long_run.exponential(1.0) == again.exponential(1.0));
        }
    }
}

TEST_CASE("Monte Carlo mean run time agrees with the closed form of the simple model") {
    struct Case { double work, interval, stall, mtbf, restart; };
    // Daly's setting (delta 5 min, R 10 min) at M = 6 h and a short-MTBF case; the intervals do
    // not divide the work, so the last segment is shorter and has no save.
    for (Case c : {Case{100 * kHour, kHour, 300, 6 * kHour, 600}, Case{20 * kHour, 1500, 120, 1800, 300}}) {
        const RunModel m = simple_model(c.work, c.interval, c.stall, c.mtbf, c.restart);
        const RunSummary s = simulate_runs(m, 4000, 2024);
        const double oracle = expected_run_time(c.work, c.interval, c.stall, 1.0 / c.mtbf, c.restart);
        CAPTURE(oracle);
        CAPTURE(s.wall_s.mean);
        CHECK(s.wall_s.ci_low <= oracle);
        CHECK(oracle <= s.wall_s.ci_high);
        // The interval is informative: well under 1% of the mean.
        CHECK(s.wall_s.ci_high - s.wall_s.ci_low < 0.01 * oracle);
    }
}

TEST_CASE("With no failures the overhead is exactly the checkpoint stalls") {
    RunModel m = simple_model(10 * kHour + 123, 1800, 45, 0, 600);
    TrialResult r;
    RunSimulator(m).run_trial(1, r);
    const double saves = 20;  // 10 h 2 min of work cut every 30 min: 21 segments, 20 saves
    CHECK(r.wall_s == doctest::Approx(m.work_s + saves * 45).epsilon(1e-14));
    CHECK(r.stall_s == doctest::Approx(saves * 45).epsilon(1e-14));
    CHECK(r.lost_work_total() == 0);
    CHECK(r.restart_s == 0);
}

TEST_CASE("Async saves block only for the snapshot, and queue behind a slow write") {
    RunModel m = simple_model(10 * kHour, 1800, 0, 0, 0);
    m.checkpoint.async = true;
    m.checkpoint.stall_s = 2;
    m.checkpoint.write_s = 600;
    TrialResult r;
    RunSimulator(m).run_trial(1, r);
    CHECK(r.stall_s == doctest::Approx(19 * 2).epsilon(1e-14));  // 20 segments, 19 saves
    CHECK(r.wall_s == doctest::Approx(m.work_s + 19 * 2).epsilon(1e-14));

    // A write longer than the interval: every save after the first waits for the one before,
    // write_s - interval, before its own stall.
    m.checkpoint.write_s = 2000;
    RunSimulator(m).run_trial(1, r);
    CHECK(r.stall_s == doctest::Approx(19 * 2 + 18 * (2000 - 1800)).epsilon(1e-12));
}

TEST_CASE("A failure during an async write loses that checkpoint") {
    // One rare exponential process: a trial's first failure is the first draw of its stream,
    // so the case is built around it. The first save ends its stall 90 s before that failure;
    // a 500 s write is still in flight when it strikes, so the job rolls back to the start and
    // loses all but the 10 s stall of what it did; a 50 s write was durable 40 s earlier, so
    // only the 90 s since the save are lost.
    const double mean = 1e7;
    Rng rng(10);
    const double t1 = rng.exponential(mean), t2 = t1 + rng.exponential(mean);
    const double interval = t1 - 100;
    RunModel m = simple_model(t1 + 1000, interval, 0, 0, 0);
    m.checkpoint.async = true;
    m.checkpoint.stall_s = 10;
    m.failures.push_back({"rare", GapKind::Exponential, mean, 1.0, false});
    // The redo must end before the second failure for the case to be the one described.
    REQUIRE(t2 > 2 * t1 + 1010);
    TrialResult r;

    m.checkpoint.write_s = 500;
    RunSimulator(m).run_trial(10, r);
    CHECK(r.events[0] == 1);
    CHECK(r.lost_checkpoints == 1);
    CHECK(r.lost_work_s[0] == doctest::Approx(t1 - 10).epsilon(1e-12));
    // Redo everything from t1: the interval, its stall, the rest of the work.
    CHECK(r.wall_s == doctest::Approx(t1 + m.work_s + 10).epsilon(1e-12));

    m.checkpoint.write_s = 50;
    RunSimulator(m).run_trial(10, r);
    CHECK(r.lost_checkpoints == 0);
    CHECK(r.lost_work_s[0] == doctest::Approx(90).epsilon(1e-9));
    CHECK(r.wall_s == doctest::Approx(t1 + (m.work_s - interval)).epsilon(1e-12));
}

TEST_CASE("Without a hot spare a hardware failure waits for the repair") {
    // Failures every 1,400 s (fixed), saves every 1,000 s (no stall), 2,500 s of work, repair
    // 100 s. With no spare: fail at 1,400 (lose 400), wait 100, save at work 2,000 (t = 2,500),
    // fail at 2,800 (lose 300), wait 100, finish at 3,400. With one spare (back from repair at
    // 1,500) the waits vanish: fail at 1,400 and 2,800 (lose 400 each), finish at 3,300.
    RunModel m = simple_model(2500, 1000, 0, 0, 0);
    m.failures.push_back({"gpu", GapKind::Fixed, 1400, 1.0, true});
    m.recovery.replacement_s = 100;
    TrialResult r;
    m.recovery.hot_spares = 0;
    RunSimulator(m).run_trial(1, r);
    CHECK(r.wall_s == doctest::Approx(3400));
    CHECK(r.spare_wait_s == doctest::Approx(200));
    CHECK(r.lost_work_s[0] == doctest::Approx(700));
    m.recovery.hot_spares = 1;
    RunSimulator(m).run_trial(1, r);
    CHECK(r.wall_s == doctest::Approx(3300));
    CHECK(r.spare_wait_s == 0);
    CHECK(r.lost_work_s[0] == doctest::Approx(800));
}

TEST_CASE("Planned maintenance checkpoints first, so it loses no work") {
    RunModel m = simple_model(10 * kHour, 1800, 30, 0, 0);
    m.recovery.process_start_s = 200;
    m.recovery.load_s = 50;
    m.maintenance = {4 * kHour, GapKind::Fixed, 900};
    TrialResult r;
    RunSimulator(m).run_trial(1, r);
    // Stops at 4 h and 8 h of wall time: each costs a save (30 s), 900 s down, 250 s restart.
    CHECK(r.events[0] == 2);  // no failure processes: maintenance is cause 0
    CHECK(r.maintenance_s == doctest::Approx(2 * (30 + 900)));
    CHECK(r.restart_s == doctest::Approx(2 * 250));
    CHECK(r.lost_work_total() == 0);
    CHECK(r.wall_s == doctest::Approx(sum_of_buckets(r)).epsilon(1e-12));
}

TEST_CASE("The time buckets of a trial add up to its wall time") {
    RunModel m = simple_model(30 * 24 * kHour, 1200, 20, 0, 0);
    m.failures = {{"gpu", GapKind::Weibull, 5 * kHour, 0.7, true}, {"software", GapKind::Exponential, 20 * kHour, 1.0, false}};
    m.recovery = {150, 120, 300, 15, 2, 12 * kHour};
    m.checkpoint.async = true;
    m.checkpoint.write_s = 400;
    m.maintenance = {27 * kHour, GapKind::Exponential, 600};
    RunSimulator sim(m);
    TrialResult r;
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        sim.run_trial(seed, r);
        CHECK(r.wall_s == doctest::Approx(sum_of_buckets(r)).epsilon(1e-9));
        CHECK(r.wall_s > m.work_s);
    }
}

TEST_CASE("The same seed gives identical results, another seed does not") {
    RunModel m = simple_model(54 * 24 * kHour, 1800, 10, 3 * kHour, 600);
    m.failures.push_back({"gpu", GapKind::Weibull, 5 * kHour, 0.8, true});
    m.recovery.hot_spares = 4;
    m.recovery.replacement_s = 24 * kHour;
    const RunSummary a = simulate_runs(m, 50, 99), b = simulate_runs(m, 50, 99), c = simulate_runs(m, 50, 100);
    CHECK(a.wall_s.mean == b.wall_s.mean);
    CHECK(a.goodput.ci_low == b.goodput.ci_low);
    CHECK(a.causes[1].lost_work_s == b.causes[1].lost_work_s);
    CHECK(a.spare_wait_s == b.spare_wait_s);
    CHECK(a.wall_s.mean != c.wall_s.mean);
}

TEST_CASE("Trials split across threads give the same summary to the bit as one thread") {
    RunModel m = simple_model(54 * 24 * kHour, 1800, 10, 3 * kHour, 600);
    m.failures.push_back({"gpu", GapKind::Weibull, 5 * kHour, 0.8, true});
    m.recovery.hot_spares = 2;
    m.recovery.replacement_s = 24 * kHour;
    const RunSummary one = simulate_runs(m, 700, 5, 1);
    for (unsigned threads : {2u, 3u, 8u}) {
        const RunSummary many = simulate_runs(m, 700, 5, threads);
        INFO(threads, " threads");
        CHECK(many.wall_s.mean == one.wall_s.mean);
        CHECK(many.wall_s.ci_high == one.wall_s.ci_high);
        CHECK(many.goodput.mean == one.goodput.mean);
        CHECK(many.goodput.ci_low == one.goodput.ci_low);
        CHECK(many.stall_s == one.stall_s);
        CHECK(many.spare_wait_s == one.spare_wait_s);
        CHECK(many.lost_checkpoints == one.lost_checkpoints);
        for (std::size_t k = 0; k < one.causes.size(); ++k) {
            CHECK(many.causes[k].events == one.causes[k].events);
            CHECK(many.causes[k].lost_work_s == one.causes[k].lost_work_s);
            CHECK(many.causes[k].downtime_s == one.causes[k].downtime_s);
        }
    }
}

namespace {
// Every number of two summaries equal, to the bit.
void check_same_summary(const RunSummary& a, const RunSummary& b) {
    CHECK(a.trials == b.trials);
    CHECK(a.work_s == b.work_s);
    for (auto [x, y] : {std::pair{a.wall_s, b.wall_s}, std::pair{a.goodput, b.goodput}}) {
        CHECK(x.mean == y.mean);
        CHECK(x.ci_low == y.ci_low);
        CHECK(x.ci_high == y.ci_high);
    }
    CHECK(a.stall_s == b.stall_s);
    CHECK(a.detection_s == b.detection_s);
    CHECK(a.spare_wait_s == b.spare_wait_s);
    CHECK(a.restart_s == b.restart_s);
    CHECK(a.maintenance_s == b.maintenance_s);
    CHECK(a.lost_checkpoints == b.lost_checkpoints);
    REQUIRE(a.causes.size() == b.causes.size());
    for (std::size_t k = 0; k < a.causes.size(); ++k) {
        CHECK(a.causes[k].cause == b.causes[k].cause);
        CHECK(a.causes[k].events == b.causes[k].events);
        CHECK(a.causes[k].lost_work_s == b.causes[k].lost_work_s);
        CHECK(a.causes[k].downtime_s == b.causes[k].downtime_s);
    }
}
}  // namespace

TEST_CASE("A sweep runs each trial on every model from draws made once: each model's own summary, to the bit") {
    // Models that read different numbers of draws from a trial's stream (intervals from 5 min to
    // 4 h, doubled failure rates, no failures at all, Weibull gaps with async saves) and hold
    // different numbers of causes, each against simulate_runs alone, on 1 and 3 threads.
    RunModel base = simple_model(20 * 24 * kHour, 900, 7, 0, 0);
    for (auto [name, mtbf, spare] : {std::tuple{"gpu", 4.8, true}, {"software", 20.5, false}, {"host", 28.0, true}})
        base.failures.push_back({name, GapKind::Exponential, mtbf * kHour, 1.0, spare});
    base.recovery = {150, 120, 300, 15.5, 2, 24 * kHour};
    base.maintenance = {27.574 * kHour, GapKind::Fixed, 600};
    std::vector<RunModel> models{base};
    for (double interval : {300.0, 4 * kHour}) {
        models.push_back(base);
        models.back().checkpoint.interval_s = interval;
    }
    models.push_back(base);
    for (auto& f : models.back().failures) f.mean_s /= 2;
    models.push_back(base);
    models.back().failures.clear();
    models.push_back(base);
    for (auto& f : models.back().failures) {
        f.gap = GapKind::Weibull;
        f.shape = 0.7;
    }
    models.back().checkpoint = {1800, 2, true, 600};

    std::vector<RunSummary> alone;
    for (const RunModel& m : models) alone.push_back(simulate_runs(m, 200, 9));
    CHECK(alone[1].causes[0].events != alone[2].causes[0].events);  // the runs differ: different draws read
    for (unsigned threads : {1u, 3u}) {
        const std::vector<RunSummary> swept = simulate_sweep(models, 200, 9, threads);
        REQUIRE(swept.size() == models.size());
        for (std::size_t i = 0; i < models.size(); ++i) {
            INFO(threads, " threads, model ", i);
            check_same_summary(swept[i], alone[i]);
        }
    }
    // A model of the sweep that cannot finish stops it with the input error.
    RunModel stuck = simple_model(2000, 1500, 0, 0, 0);
    stuck.failures.push_back({"fixed", GapKind::Fixed, 1000, 1.0, false});
    CHECK_THROWS_AS(simulate_sweep({base, stuck}, 100, 1, 2), InputError);
}

TEST_CASE("A run that cannot finish is an input error from any thread") {
    RunModel m = simple_model(2000, 1500, 0, 0, 0);
    m.failures.push_back({"fixed", GapKind::Fixed, 1000, 1.0, false});
    CHECK_THROWS_AS(simulate_runs(m, 300, 1, 2), InputError);
}

TEST_CASE("A run that failures never let finish is an input error, not a hang") {
    RunModel m = simple_model(2000, 1500, 0, 0, 0);
    m.failures.push_back({"fixed", GapKind::Fixed, 1000, 1.0, false});
    TrialResult r;
    CHECK_THROWS_AS(RunSimulator(m).run_trial(1, r), InputError);
}

TEST_CASE("The simulated optimum of the simple model lands on Daly's interval") {
    // Daly's figure setting: delta = 5 min, R = 10 min, M = 6 h (tau_opt 56.7 min). The curve
    // is flat at the top, so the check allows 5%, well inside one grid step (a factor of 1.41).
    const RunModel m = simple_model(500 * kHour, kHour, 300, 6 * kHour, 600);
    const IntervalStudy s = sweep_intervals(m, 10 * 60, 4 * kHour, 10, 2000, 11);
    CAPTURE(s.optimal_interval_s / 60);
    CHECK(s.daly_interval_s / 60 == doctest::Approx(56.71).epsilon(0.001));
    CHECK(s.optimal_interval_s == doctest::Approx(s.daly_interval_s).epsilon(0.05));
    // And its goodput matches the closed form at that interval.
    const double oracle = m.work_s / expected_run_time(m.work_s, s.optimal_interval_s, 300, 1 / (6 * kHour), 600);
    CHECK(s.at_optimum.goodput.mean == doctest::Approx(oracle).epsilon(0.005));
}

namespace {
// The run model stepped plainly, as its header describes it: every segment and every save one at
// a time (no skipping of quiet cycles), the soonest failure by a scan over the processes, the
// repairs in a min-heap. It makes the same draws in the same order as RunSimulator, so a trial
// must count the same events per cause and lose the same checkpoints, and its times must agree
// up to rounding (RunSimulator adds a run of quiet cycles as one product).
class PlainRun {
public:
    PlainRun(const RunModel& m, std::uint64_t seed) : m_(m), rng_(seed), spares_(m.recovery.hot_spares) {
        const std::size_t causes = m.failures.size() + 1;
        r.events.assign(causes, 0.0);
        r.lost_work_s.assign(causes, 0.0);
        r.downtime_s.assign(causes, 0.0);
        for (std::size_t k = 0; k < m.failures.size(); ++k) next_.push_back(draw(k));
        next_maintenance_ = m.maintenance.mean_gap_s > 0 ? t_ + draw_gap(m.maintenance.gap, m.maintenance.mean_gap_s, 1.0) : kNever;
        while (work_ < m.work_s) step();
        r.wall_s = t_;
        r.work_s = m.work_s;
    }
    TrialResult r;

private:
    static constexpr double kNever = std::numeric_limits<double>::infinity();

    double draw_gap(GapKind gap, double mean, double shape) {
        if (gap == GapKind::Exponential) return rng_.exponential(mean);
        if (gap == GapKind::Weibull) return rng_.weibull(shape, mean / std::tgamma(1.0 + 1.0 / shape));
        return mean;
    }
    double draw(std::size_t k) { return t_ + draw_gap(m_.failures[k].gap, m_.failures[k].mean_s, m_.failures[k].shape); }
    std::size_t soonest() const {
        std::size_t best = 0;
        for (std::size_t k = 1; k < next_.size(); ++k)
            if (next_[k] < next_[best]) best = k;
        return best;
    }
    double soonest_time() const { return next_.empty() ? kNever : next_[soonest()]; }

    // Moves the clock to `when`, computing (or blocked in a save, into `stalled`).
    void go_to(double when, double* stalled) {
        if (stalled) *stalled += when - t_;
        else work_ += when - t_;
        t_ = when;
        if (writing_ && write_done_ <= t_) {
            durable_ = write_position_;
            writing_ = false;
        }
    }

    void step() {
        const CheckpointPolicy& c = m_.checkpoint;
        const double end = std::min(segment_start_ + c.interval_s, m_.work_s);
        const double reach = t_ + (end - work_);
        if (next_maintenance_ <= reach && next_maintenance_ <= soonest_time()) {
            go_to(std::max(next_maintenance_, t_), nullptr);
            return maintenance();
        }
        if (soonest_time() < reach) {
            go_to(soonest_time(), nullptr);
            return fail();
        }
        go_to(reach, nullptr);
        work_ = end;
        if (work_ >= m_.work_s) return;
        const double until = (writing_ ? std::max(t_, write_done_) : t_) + c.stall_s;
        if (soonest_time() < until) {
            go_to(soonest_time(), &r.stall_s);
            return fail();
        }
        go_to(until, &r.stall_s);
        segment_start_ = work_;
        if (c.async && c.write_s > 0) {
            writing_ = true;
            write_position_ = work_;
            write_done_ = t_ + c.write_s;
        } else {
            durable_ = work_;
        }
    }

    void fail() {
        const std::size_t k = soonest();
        r.events[k] += 1;
        r.lost_work_s[k] += work_ - durable_;
        if (writing_) r.lost_checkpoints += 1;
        writing_ = false;
        work_ = segment_start_ = durable_;
        next_[k] = draw(k);
        recover(k, m_.recovery.detection_s, m_.failures[k].needs_spare, m_.recovery.restart_s());
    }

    void maintenance() {
        const CheckpointPolicy& c = m_.checkpoint;
        const double saved = (writing_ ? std::max(t_, write_done_) : t_) + c.stall_s + (c.async ? c.write_s : 0.0);
        const double back = saved + m_.maintenance.duration_s;
        r.maintenance_s += back - t_;
        r.events.back() += 1;
        t_ = back;
        writing_ = false;
        durable_ = segment_start_ = work_;
        for (std::size_t k = 0; k < next_.size(); ++k)
            while (next_[k] < t_) next_[k] += draw_gap(m_.failures[k].gap, m_.failures[k].mean_s, m_.failures[k].shape);
        next_maintenance_ = t_ + draw_gap(m_.maintenance.gap, m_.maintenance.mean_gap_s, 1.0);
        recover(next_.size(), 0.0, false, m_.recovery.process_start_s + m_.recovery.load_s);
    }

    double take_spare() {
        if (m_.recovery.hot_spares == 0) return m_.recovery.replacement_s;
        while (!repairs_.empty() && repairs_.top() <= t_) {
            repairs_.pop();
            ++spares_;
        }
        double wait = 0;
        if (spares_ > 0) {
            --spares_;
        } else {
            wait = repairs_.top() - t_;
            repairs_.pop();
        }
        repairs_.push(t_ + m_.recovery.replacement_s);
        return wait;
    }

    void recover(std::size_t cause, double detection, bool spare, double restart) {
        for (;;) {
            const double wait = spare ? take_spare() : 0.0;
            const double end = t_ + detection + wait + restart;
            const double failure = soonest_time();
            const double elapsed = std::min(end, failure) - t_;
            r.downtime_s[cause] += elapsed;
            const double d = std::min(elapsed, detection), w = std::min(elapsed - d, wait);
            r.detection_s += d;
            r.spare_wait_s += w;
            r.restart_s += elapsed - d - w;
            if (failure >= end) {
                t_ = end;
                return;
            }
            t_ = failure;
            cause = soonest();
            r.events[cause] += 1;
            next_[cause] = draw(cause);
            detection = m_.recovery.detection_s;
            spare = m_.failures[cause].needs_spare;
            restart = m_.recovery.restart_s();
        }
    }

    const RunModel& m_;
    Rng rng_;
    std::vector<double> next_;
    double next_maintenance_ = kNever;
    std::priority_queue<double, std::vector<double>, std::greater<>> repairs_;
    int spares_;
    double t_ = 0, work_ = 0, durable_ = 0, segment_start_ = 0;
    bool writing_ = false;
    double write_position_ = 0, write_done_ = 0;
};

void check_same_run(const TrialResult& fast, const TrialResult& plain) {
    auto close = [](double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b)); };
    CHECK(close(fast.wall_s, plain.wall_s));
    CHECK(fast.work_s == plain.work_s);
    CHECK(close(fast.stall_s, plain.stall_s));
    CHECK(close(fast.detection_s, plain.detection_s));
    CHECK(close(fast.spare_wait_s, plain.spare_wait_s));
    CHECK(close(fast.restart_s, plain.restart_s));
    CHECK(close(fast.maintenance_s, plain.maintenance_s));
    CHECK(fast.lost_checkpoints == plain.lost_checkpoints);
    REQUIRE(fast.events.size() == plain.events.size());
    for (std::size_t k = 0; k < plain.events.size(); ++k) {
        CHECK(fast.events[k] == plain.events[k]);
        CHECK(close(fast.lost_work_s[k], plain.lost_work_s[k]));
        CHECK(close(fast.downtime_s[k], plain.downtime_s[k]));
    }
}
}  // namespace

TEST_CASE("Every trial matches the run stepped save by save: same draws, same events, same times") {
    // The Llama 3 405B preset's processes over 2,048 nodes (gpu, software, host, switch, NIC per
    // 1,000 node-days; Dubey et al. 2024, Table 5), 16 spares repaired in 24 h, maintenance every
    // 27.6 h; then the same with Weibull gaps, asynchronous saves (shorter and longer than the
    // interval), no spares (each repair 1 h) and one spare repaired in 6 h, exponential
    // maintenance gaps, two processes whose fixed gaps tie, and nine processes.
    RunModel base = simple_model(20 * 24 * kHour, 900, 7, 0, 0);
    const double nodes = 2048;
    for (auto [name, rate, spare] : {std::tuple{"gpu", 2.42332, true}, {"software", 0.56966, false}, {"host", 0.41594, true},
                                     {"switch", 0.31648, false}, {"nic", 0.0633, true}})
        base.failures.push_back({name, GapKind::Exponential, 24 * kHour / (rate / 1000 * nodes), 1.0, spare});
    base.recovery = {150, 120, 300, 15.5, 16, 24 * kHour};
    base.maintenance = {27.574 * kHour, GapKind::Fixed, 600};

    std::vector<std::pair<const char*, RunModel>> models{{"preset", base}};
    RunModel weibull = base;
    for (auto& f : weibull.failures) {
        f.gap = GapKind::Weibull;
        f.shape = 0.7;
    }
    weibull.checkpoint = {1800, 2, true, 600};
    models.emplace_back("weibull, async", weibull);
    RunModel slow_write = base;
    slow_write.checkpoint = {600, 1, true, 900};
    models.emplace_back("async write longer than the interval", slow_write);
    RunModel no_spares = base;
    no_spares.recovery.hot_spares = 0;
    no_spares.recovery.replacement_s = kHour;  // the job waits for its own node: an hour each time
    no_spares.maintenance.gap = GapKind::Exponential;
    models.emplace_back("no spares, exponential maintenance", no_spares);
    RunModel one_spare = base;
    one_spare.recovery.hot_spares = 1;
    one_spare.recovery.replacement_s = 6 * kHour;
    models.emplace_back("one spare", one_spare);
    RunModel tied = base;  // two processes fail at the same instants: the lower-numbered one first
    tied.failures.push_back({"fixed a", GapKind::Fixed, 7 * kHour, 1.0, false});
    tied.failures.push_back({"fixed b", GapKind::Fixed, 7 * kHour, 1.0, true});
    models.emplace_back("tied fixed gaps", tied);
    RunModel nine = base;  // past the eight slots of the written-out minimum: a scan
    for (const char* extra : {"a", "b", "c", "d"}) nine.failures.push_back({extra, GapKind::Exponential, 40 * kHour, 1.0, false});
    models.emplace_back("nine processes", nine);

    TrialResult fast;
    for (const auto& [name, m] : models) {
        RunSimulator sim(m);
        double events = 0, waits = 0;
        for (std::uint64_t trial = 0; trial < 25; ++trial) {
            INFO(name, ", trial ", trial);
            const std::uint64_t seed = trial_seed(3, trial);
            sim.run_trial(seed, fast);
            const PlainRun plain(m, seed);
            check_same_run(fast, plain.r);
            for (double e : plain.r.events) events += e;
            waits += plain.r.spare_wait_s;
        }
        // The cases are what they say: failures happen, and the spare-starved ones wait.
        CHECK(events > 25 * 50);
        if (m.recovery.hot_spares < 2) CHECK(waits > 0);
    }
}
