// The fitter recovers known factors from synthetic step times, refuses what the data cannot
// support, and reads the logs Megatron-LM and torchtitan print.
#include <doctest/doctest.h>

#include <cmath>

#include "core/error.hpp"
#include "fit/job_logs.hpp"
#include "fit/least_squares.hpp"

using namespace sextant;

namespace {
// A step time model with a compute part and a communication part, each scaled by an efficiency
// factor: t = c_i / f_compute + m_i / f_comm.
struct Synthetic {
    std::vector<double> compute = {1.0, 2.0, 0.5, 3.0, 1.5, 0.8};
    std::vector<double> comm = {0.2, 0.1, 0.4, 0.3, 0.05, 0.6};
    double predict(const std::vector<double>& f, std::size_t i) const { return compute[i] / f[0] + comm[i] / f[1]; }
};

FitProblem problem(const Synthetic& s, std::vector<double> truth) {
    FitProblem p;
    p.factor_names = {"compute", "communication"};
    p.initial = {1.0, 1.0};
    p.lower = {0.2, 0.2};
    p.upper = {2.0, 2.0};
    p.observations = s.compute.size();
    for (std::size_t i = 0; i < p.observations; ++i) p.measured.push_back(s.predict(truth, i));
    p.predict = [s](const std::vector<double>& f, std::size_t i) { return s.predict(f, i); };
    return p;
}
}  // namespace

TEST_CASE("least squares recovers the factors that generated the step times") {
    Synthetic s;
    FitResult r = fit_least_squares(problem(s, {0.85, 0.6}));
    CHECK(r.factors[0] == doctest::Approx(0.85).epsilon(1e-4));
    CHECK(r.factors[1] == doctest::Approx(0.6).epsilon(1e-4));
    CHECK(r.rms_error_before_pct > 10.0);
    CHECK(r.rms_error_after_pct < 0.01);
    CHECK(r.leave_one_out_pct < 0.01);
}

TEST_CASE("with noisy measurements the leave-one-out error exceeds the in-sample error") {
    Synthetic s;
    FitProblem p = problem(s, {0.85, 0.6});
    const double noise[] = {0.03, -0.02, 0.04, -0.03, 0.01, -0.04};
    for (std::size_t i = 0; i < p.observations; ++i) p.measured[i] *= 1.0 + noise[i];
    FitResult r = fit_least_squares(p);
    CHECK(r.rms_error_after_pct > 0.5);
    CHECK(r.leave_one_out_pct > r.rms_error_after_pct);
}

TEST_CASE("the fitter refuses more factors than the runs support") {
    Synthetic s;
    FitProblem p = problem(s, {0.85, 0.6});
    p.observations = 2;
    p.measured.resize(2);
    CHECK_THROWS_AS(fit_least_squares(p), InputError);
    p.observations = 3;  // each leave-one-out fit is then determined by the other two
    p.measured = {s.predict({0.85, 0.6}, 0), s.predict({0.85, 0.6}, 1), s.predict({0.85, 0.6}, 2)};
    const FitResult r = fit_least_squares(p);
    CHECK(r.factors[0] == doctest::Approx(0.85).epsilon(1e-4));
    CHECK(r.leave_one_out_pct < 0.01);

    FitProblem insensitive = problem(s, {0.85, 0.6});
    insensitive.factor_names.push_back("overlap");
    insensitive.initial.push_back(1.0);
    insensitive.lower.push_back(0.5);
    insensitive.upper.push_back(1.5);
    CHECK_THROWS_WITH_AS(fit_least_squares(insensitive), doctest::Contains("cannot fit"), InputError);
}

TEST_CASE("Megatron-LM logs: elapsed time per iteration") {
    const std::string log =
        " iteration        1/  100 | consumed samples: 1536 | elapsed time per iteration (ms): 25113.2 | lr: 0\n"
        " iteration        2/  100 | consumed samples: 3072 | elapsed time per iteration (ms): 14600.0 | lr: 0\n"
        " iteration        3/  100 | elapsed time per iteration (ms): 14500.0 |\n"
        " iteration        4/  100 | elapsed time per iteration (ms): 14400.0 |\n"
        " iteration        5/  100 | elapsed time per iteration (ms): 14420.0 |\n"
        " iteration        6/  100 | elapsed time per iteration (ms): 14480.0 |\n";
    auto steps = parse_step_times(log, LogFormat::Megatron);
    REQUIRE(steps.size() == 6);
    CHECK(steps[0] == doctest::Approx(25.1132));
    CHECK(steady_step_time(steps, "megatron.log", 2) == doctest::Approx(14.45));
}

TEST_CASE("torchtitan logs: step time from tokens per second per GPU") {
    // 8 GPUs, global batch 8 x 8192 tokens; tps 5,219 per GPU -> 65536 / (5219 x 8) s per step.
    const std::string log =
        "[rank0]: step:  1  loss: 12.2508  memory: 24.38GiB(25.66%)  tps: 1,024  tflops: 59.30  mfu: 6.00%\n"
        "[rank0]: step: 10  loss:  9.1018  memory: 30.12GiB(31.70%)  tps: 5,219  tflops: 302.23  mfu: 30.56%\n"
        "[rank0]: step: 20  loss:  8.0012  memory: 30.12GiB(31.70%)  tps: 5,219  tflops: 302.23  mfu: 30.56%\n";
    auto steps = parse_step_times(log, LogFormat::Torchtitan, 8.0 * 8192, 8.0);
    REQUIRE(steps.size() == 3);
    CHECK(steps[2] == doctest::Approx(65536.0 / (5219.0 * 8.0)));
    CHECK(steady_step_time(steps, "torchtitan.log", 1) == doctest::Approx(65536.0 / (5219.0 * 8.0)));
    CHECK_THROWS_WITH_AS(steady_step_time(steps, "torchtitan.log", 3), doctest::Contains("torchtitan.log"), InputError);
}
