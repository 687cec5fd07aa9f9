// Measured collective sweeps drive collective costs: synthetic profiles whose points differ from
// the model in known ways change predictions exactly as they should (interpolated where measured,
// the fitted latency-bandwidth law at other rank counts, fitted fabric constants elsewhere, and
// the model's contention on top), in `sextant collective` and in the simulated step.
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "collective/network_model.hpp"
#include "collective_fixtures.hpp"
#include "core/error.hpp"
#include "profile/collective_sweeps.hpp"
#include "profile/profile.hpp"
#include "sim/simulate.hpp"
#include "spec/presets.hpp"
#include "spec/scenario.hpp"

using namespace sextant;
using namespace sextant::testing;

namespace {

// Powers of two from 1 KiB to 16 GiB, as nccl-tests -f 2 sweeps them.
std::vector<double> sizes() {
    std::vector<double> v;
    for (double s = 1024; s <= 16.0 * (1u << 30); s *= 2) v.push_back(s);
    return v;
}

CollectiveSweep sweep(NcclTestOp op, MeasuredSpan span, std::int64_t ranks, std::int64_t nodes) {
    CollectiveSweep s;
    s.op = op;
    s.span = span;
    s.ranks = ranks;
    s.nodes = nodes;
    s.provenance.tool = "synthetic";
    return s;
}

// A profile for the cluster's GPU: its published preset plus these sweeps.
CalibrationProfile measured_profile(const ClusterSpec& c, const std::vector<CollectiveSweep>& sweeps) {
    json doc = {{"preset", c.gpu.name}, {"gpu", c.gpu.name}, {"collectives", json::array()}};
    for (const auto& s : sweeps) doc["collectives"].push_back(collective_sweep_json(s));
    return CalibrationProfile::from_json(doc, "/calibration", c.gpu);
}

double seconds(const NetworkModel& m, CollectiveOp op, double bytes, const GroupShape& g) {
    return m.cost(op, Bytes(bytes), g).time.value();
}

// t = alpha x steps + S x busbw_factor / busbw: the law the fit assumes, so it must recover it.
CollectiveSweep alpha_beta_sweep(NcclTestOp op, MeasuredSpan span, std::int64_t ranks, std::int64_t nodes, double alpha_us,
                                 double busbw_gbps) {
    CollectiveSweep s = sweep(op, span, ranks, nodes);
    for (double S : sizes())
        s.samples.push_back({S, alpha_us * latency_steps(op, ranks) + S * busbw_factor(op, ranks) / (busbw_gbps * 1e3), 0, 0});
    return s;
}
}  // namespace

TEST_CASE("a measured point at twice the model's bandwidth halves the time at that size, log-log between points") {
    const ClusterSpec c = cluster("dgx-h100-superpod");
    const CalibrationProfile published = CalibrationProfile::for_gpu(c.gpu);
    const NetworkModel model(c, published.comm());
    const GroupShape node = model.analyse(group(range(8)));
    CollectiveSweep s = sweep(NcclTestOp::AllGather, MeasuredSpan::Node, 8, 1);
    for (double S : sizes()) s.samples.push_back({S, seconds(model, CollectiveOp::AllGather, S, node) / 2 * 1e6, 0, 0});
    const NetworkModel measured(c, measured_profile(c, {s}));
    for (double S : sizes()) {
        CAPTURE(S);
        const CollectiveResult r = measured.cost(CollectiveOp::AllGather, Bytes(S), node);
        CHECK(r.busbw_gbps == doctest::Approx(2 * model.cost(CollectiveOp::AllGather, Bytes(S), node).busbw_gbps).epsilon(1e-9));
        CHECK(r.algorithm == "measured");
    }
    // Between two measured sizes the time is the geometric interpolation of theirs.
    const double lo = 1 << 20, hi = 1 << 21, mid = std::sqrt(lo * hi);
    const double t_lo = seconds(model, CollectiveOp::AllGather, lo, node) / 2, t_hi = seconds(model, CollectiveOp::AllGather, hi, node) / 2;
    CHECK(seconds(measured, CollectiveOp::AllGather, mid, node) == doctest::Approx(std::sqrt(t_lo * t_hi)).epsilon(1e-9));
    // Another op on the same span is no measurement: the model prices it (with the fitted NVLink).
    CHECK(measured.cost(CollectiveOp::AllToAll, Bytes(1 << 20), node).algorithm != "measured");
}

TEST_CASE("rank counts that were not measured follow the alpha-beta law fitted to those that were") {
    const ClusterSpec c = cluster("dgx-h100-superpod");
    const double alpha_us = 7.5, busbw = 44.0;  // per ring step; bus bandwidth of one 400G NIC
    const auto s2 = alpha_beta_sweep(NcclTestOp::AllReduce, MeasuredSpan::Rail, 2, 2, alpha_us, busbw);
    const auto s4 = alpha_beta_sweep(NcclTestOp::AllReduce, MeasuredSpan::Rail, 4, 4, alpha_us, busbw);
    const MeasuredCollectives measured({s2, s4});
    const AlphaBetaFit* f = measured.fit(NcclTestOp::AllReduce, MeasuredSpan::Rail);
    REQUIRE(f != nullptr);
    CHECK(f->step_latency_us == doctest::Approx(alpha_us).epsilon(1e-9));
    CHECK(f->busbw_gbps == doctest::Approx(busbw).epsilon(1e-9));
    CHECK(f->rms_error_pct < 1e-6);
    CHECK(f->sweeps.size() == 2);

    const NetworkModel m(c, measured_profile(c, {s2, s4}));
    const GroupShape rail16 = m.analyse(group(range(16, 8)));  // GPU 0 of 16 nodes: one rail
    for (double S : {8.0, 65536.0, 64.0 * (1 << 20), 4.0 * (1u << 30)}) {
        CAPTURE(S);
        const CollectiveResult r = m.cost(CollectiveOp::AllReduce, Bytes(S), rail16);
        CHECK(r.algorithm == "measured-fit");
        CHECK(r.time.value() == doctest::Approx(alpha_us * 1e-6 * 30 + S * 2 * 15 / 16 / (busbw * 1e9)).epsilon(1e-9));
    }
    // The measured rank counts themselves are read from their sweeps.
    CHECK(m.cost(CollectiveOp::AllReduce, Bytes(1 << 20), m.analyse(group(range(4, 8)))).algorithm == "measured");
}

TEST_CASE("beyond the measured sizes a sweep continues along its fitted law") {
    const ClusterSpec c = cluster("dgx-h100-superpod");
    CollectiveSweep s = alpha_beta_sweep(NcclTestOp::ReduceScatter, MeasuredSpan::Rail, 4, 4, 6.0, 45.0);
    s.samples.erase(s.samples.begin() + 10, s.samples.end());  // 1 KiB to 512 KiB only
    const MeasuredCollectives measured({s});
    const double big = 1u << 30;
    const auto t = measured.idle_time(NcclTestOp::ReduceScatter, MeasuredSpan::Rail, 4, 4, big);
    REQUIRE(t.has_value());
    CHECK(t->seconds == doctest::Approx(measured.fit(NcclTestOp::ReduceScatter, MeasuredSpan::Rail)->seconds(4, big)).epsilon(1e-9));
    CHECK(!measured.idle_time(NcclTestOp::AllGather, MeasuredSpan::Rail, 4, 4, big).has_value());
    CHECK(!measured.idle_time(NcclTestOp::ReduceScatter, MeasuredSpan::Node, 4, 1, big).has_value());
}

TEST_CASE("contention stays on top of measured idle times: a seventh across a 1:7 pod boundary") {
    const ClusterSpec c = cluster("llama3-24k-roce", 6144);
    CollectiveSweep s = alpha_beta_sweep(NcclTestOp::SendRecv, MeasuredSpan::Rail, 2, 2, 9.0, 40.0);
    const NetworkModel m(c, measured_profile(c, {s}));
    const std::vector<std::int64_t> pair = {0, 3072};
    const double S = 1u << 30;
    const double alone = seconds(m, CollectiveOp::SendRecv, S, m.analyse(group(pair)));
    const double all = seconds(m, CollectiveOp::SendRecv, S, m.analyse(group(pair, range(3072))));
    CHECK(alone == doctest::Approx(9e-6 + S / 40e9).epsilon(1e-9));  // the measurement itself
    CHECK(all / alone == doctest::Approx(7.0).epsilon(0.01));
}

TEST_CASE("node and rail sweeps refit the fabric constants the model uses where nothing was measured") {
    const ClusterSpec c = cluster("dgx-h100-superpod");
    const CalibrationProfile published = CalibrationProfile::for_gpu(c.gpu);
    const auto ag = alpha_beta_sweep(NcclTestOp::AllGather, MeasuredSpan::Node, 8, 1, 2.5, 342.0);
    const auto ar = alpha_beta_sweep(NcclTestOp::AllReduce, MeasuredSpan::Node, 8, 1, 2.0, 455.0);
    const auto rail = alpha_beta_sweep(NcclTestOp::AllGather, MeasuredSpan::Rail, 4, 4, 8.0, 42.0);
    const NetworkModel m(c, measured_profile(c, {ag, ar, rail}));
    const CommCalibration& k = m.calibration();
    // The model inverted at the ends of each curve: busbw at 16 GiB with Simple's ramp
    // S / (S + 24 MiB) undone, the step latency at 1 KiB.
    const double big = 16.0 * (1u << 30), ramp = 1 + 24.0 * (1 << 20) / big;
    const auto busbw = [&](const CollectiveSweep& s) { return big * busbw_factor(s.op, s.ranks) / (s.samples.back().time_us * 1e3); };
    const auto step_us = [&](const CollectiveSweep& s) { return s.samples.front().time_us / latency_steps(s.op, s.ranks); };
    CHECK(k.nvlink_ring_efficiency == doctest::Approx(busbw(ag) * ramp / 450.0));
    CHECK(k.nvlink_ring_efficiency == doctest::Approx(342.0 / 450.0).epsilon(0.003));
    CHECK(k.nvlink_latency_us == doctest::Approx(step_us(ag)));
    CHECK(k.nvls_allreduce_efficiency == doctest::Approx(busbw(ar) / 1.75 * ramp * 1.75 / 450.0));
    CHECK(k.nic_efficiency == doctest::Approx(busbw(rail) * ramp / 50.0));
    CHECK(k.network_latency_us == doctest::Approx(step_us(rail)));
    CHECK(m.fitted_constants().size() == 5);
    // An unmeasured op on a measured span runs on the refitted constants: the same as the model
    // built from them directly.
    const NetworkModel refitted(c, k);
    const GroupShape node = m.analyse(group(range(8)));
    for (double S : {4096.0, 1.0 * (1 << 28)})
        CHECK(seconds(m, CollectiveOp::Broadcast, S, node) == doctest::Approx(seconds(refitted, CollectiveOp::Broadcast, S, node)));
    // Spans nobody measured (a pod-wide group of whole nodes) too.
    const GroupShape nodes64 = m.analyse(group(range(64)));
    CHECK(seconds(m, CollectiveOp::AllReduce, 1 << 28, nodes64) ==
          doctest::Approx(seconds(refitted, CollectiveOp::AllReduce, 1 << 28, nodes64)));
    CHECK(published.comm().nvlink_ring_efficiency != doctest::Approx(k.nvlink_ring_efficiency));
}

TEST_CASE("a network step latency read from the cluster's own rail sweeps already holds its NICs: the fabric adds only switches") {
    const ClusterSpec reference = cluster("dgx-h100-superpod");
    ClusterSpec c = reference;
    c.fabric.nic_latency_us = 5.0;  // 3 us above the reference fabric the published figure is for
    const auto rail = alpha_beta_sweep(NcclTestOp::AllGather, MeasuredSpan::Rail, 4, 4, 8.0, 42.0);
    const CalibrationProfile profile = measured_profile(c, {rail});
    const CommCalibration published = CalibrationProfile::for_gpu(c.gpu).comm();
    // Reduce-scatter, which nobody measured, runs on the constants: with the measured profile the
    // cluster's NIC latency is already in them, with the published ones it is added. GPU 0 of 16
    // nodes: one rail inside one 256-GPU leaf.
    const GroupPlacement members = group(range(16, 8));
    const auto us = [&](const NetworkModel& m) { return seconds(m, CollectiveOp::ReduceScatter, 1024, m.analyse(members)) * 1e6; };
    CHECK(us(NetworkModel(c, profile)) == doctest::Approx(us(NetworkModel(reference, profile))).epsilon(1e-9));
    CHECK(us(NetworkModel(c, published)) - us(NetworkModel(reference, published)) == doctest::Approx(15 * 3.0).epsilon(1e-6));
}


TEST_CASE("a profile's collective points are checked: busbw against bytes and time, spans against nodes") {
    const ClusterSpec c = cluster("dgx-h100-superpod");
    json doc = {{"preset", c.gpu.name},
                {"gpu", c.gpu.name},
                {"collectives", {{{"op", "all_reduce"}, {"span", "node"}, {"ranks", 8}, {"nodes", 1},
                                  {"points", {{{"bytes", 1073741824}, {"time_us", 4000.0}, {"busbw_gbps", 469.76}}}}}}}};
    CHECK_NOTHROW(CalibrationProfile::from_json(doc, "/calibration", c.gpu));
    auto expect_error = [&](json bad, const std::string& path) {
        try {
            CalibrationProfile::from_json(bad, "/calibration", c.gpu);
            FAIL("accepted " << bad.dump());
        } catch (const InputError& e) {
            CHECK(e.path() == path);
        }
    };
    json wrong_busbw = doc;
    wrong_busbw["collectives"][0]["points"][0]["busbw_gbps"] = 400.0;
    expect_error(wrong_busbw, "/calibration/collectives/0/points/0/busbw_gbps");
    json rail_on_one_node = doc;
    rail_on_one_node["collectives"][0]["span"] = "rail";
    expect_error(rail_on_one_node, "/calibration/collectives/0/nodes");
    json unknown_op = doc;
    unknown_op["collectives"][0]["op"] = "allreduce";
    expect_error(unknown_op, "/calibration/collectives/0/op");
    json no_points = doc;
    no_points["collectives"][0]["points"] = json::array();
    expect_error(no_points, "/calibration/collectives/0/points");
}

TEST_CASE("simulate: a profile measuring TP collectives at twice the model's bandwidth halves the exposed TP time") {
    json doc = load_preset("scenarios", "llama3-8b-h100", "/");
    doc["cluster"] = {{"preset", "dgx-h100-superpod"}, {"gpus", 8}};
    doc["training"]["global_batch"] = 8;
    doc["layout"] = {{"tp", 8}, {"pp", 1}, {"dp", 1}, {"cp", 1}, {"microbatch", 1}, {"zero_stage", 1},
                     {"recompute", "none"}, {"sequence_parallel", true}};
    const Scenario base = parse_scenario(doc, data_dir());
    const StepContext published(base);
    const Layout layout = resolve_layout(base, base.layout);
    const GroupShape tp = published.groups(layout).tp;
    json profile = {{"preset", "H100-SXM5-80GB"}, {"gpu", "H100-SXM5-80GB"}, {"collectives", json::array()}};
    for (NcclTestOp op : {NcclTestOp::AllGather, NcclTestOp::ReduceScatter}) {
        CollectiveSweep s = sweep(op, MeasuredSpan::Node, 8, 1);
        const CollectiveOp model_op = op == NcclTestOp::AllGather ? CollectiveOp::AllGather : CollectiveOp::ReduceScatter;
        for (double S : sizes()) s.samples.push_back({S, seconds(published.network(), model_op, S, tp) / 2 * 1e6, 0, 0});
        profile["collectives"].push_back(collective_sweep_json(s));
    }
    doc["calibration"] = profile;
    const Scenario measured_scenario = parse_scenario(doc, data_dir());
    const StepContext measured(measured_scenario);
    const StepResult before = simulate(published, layout).result, after = simulate(measured, layout).result;
    // Sequence-parallel TP moves T x h x 2 = 64 MiB per gather and scatter, a measured size.
    CHECK(before.breakdown.tp > 0);
    CHECK(after.breakdown.tp == doctest::Approx(before.breakdown.tp / 2).epsilon(1e-6));
    // The hidden part shrinks with it, and so does its SM contention on the compute it overlaps.
    CHECK(after.breakdown.compute < before.breakdown.compute);
    CHECK(after.step_time_s < before.step_time_s);
}
