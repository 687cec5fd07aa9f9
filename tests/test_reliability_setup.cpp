// From a scenario to the run model: checkpoint size and times, step time, presets, and the
// errors of the /reliability table.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "model/params.hpp"
#include "reliability/checkpoint_cost.hpp"
#include "reliability/run_setup.hpp"
#include "sim/simulate.hpp"
#include "spec/presets.hpp"
#include "spec/scenario.hpp"

using namespace sextant;
using namespace sextant::reliability;

namespace {
Scenario llama405() { return load_scenario(data_dir() / "scenarios" / "llama3-405b-h100.json"); }

std::string error_of(const json& reliability) {
    try {
        parse_reliability(reliability, "/reliability");
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("Checkpoint size: bf16 weights, fp32 master and two fp32 moments are 14 bytes a parameter") {
    Scenario s = llama405();
    const CheckpointSize c = checkpoint_size(s);
    const double params = count_params(s.model).total();
    CHECK(c.bytes_per_param == 14);
    CHECK(c.total_bytes == doctest::Approx(14 * params));
    // ZeRO-1 over dp 128 under tp 8 x pp 16: each rank holds 1/128 of the weights (2 B) and
    // 1/16,384 of the optimizer state (12 B).
    CHECK(c.per_rank_load_bytes == doctest::Approx(params * (2.0 / 128 + 12.0 / 16384)));
    CHECK(c.per_rank_write_bytes == doctest::Approx(14 * params / 16384));

    s.training.optimizer.master_weights = false;
    CHECK(checkpoint_size(s).bytes_per_param == 10);
    s.training.optimizer.state_dtype = Precision::Bf16;
    CHECK(checkpoint_size(s).bytes_per_param == 6);
}

TEST_CASE("Checkpoint write and load times follow the storage or the node NICs") {
    Scenario s = llama405();
    ReliabilitySpec spec = parse_reliability(json(), "/reliability");
    const CheckpointSize c = checkpoint_size(s);
    // Tectonic: 2 TB/s write, 7 TB/s read; saves reach 40% of the write bandwidth.
    CheckpointTimes t = checkpoint_times(s, spec, c);
    CHECK(t.write_limit == "storage");
    CHECK(t.write_s == doctest::Approx(c.total_bytes / (0.4 * 2000e9)));
    CHECK(t.load_s == doctest::Approx(c.per_rank_load_bytes * 16384 / 7000e9));
    CHECK(t.snapshot_s == doctest::Approx(c.per_rank_write_bytes / 25e9));
    // Unbounded storage: each node writes its 1/2,048 through 8 x 400 Gb/s.
    s.cluster.storage.write_gbps = 1e9;
    s.cluster.storage.read_gbps = 1e9;
    t = checkpoint_times(s, spec, c);
    CHECK(t.write_limit == "node NIC");
    CHECK(t.write_s == doctest::Approx(c.total_bytes / 2048 / (8 * 400e9 / 8)));
    CHECK(t.load_s == doctest::Approx(c.per_rank_load_bytes * 8 / (8 * 400e9 / 8)));
    // No storage described and no times given: the error names /cluster/storage.
    s.cluster.storage = {};
    CHECK_THROWS_WITH_AS(checkpoint_times(s, spec, c), doctest::Contains("/cluster/storage"), InputError);
}

TEST_CASE("Step time: the scenario's value, else the simulated step of its layout") {
    Scenario s = llama405();
    ReliabilitySpec spec = parse_reliability(json(), "/reliability");
    const double simulated = simulate(StepContext(s), resolve_layout(s, s.layout)).result.step_time_s;
    CHECK(step_time(s, spec).seconds == simulated);
    CHECK(step_time(s, spec).source.find("sextant simulate") != std::string::npos);
    spec.step_time_s = 5.5;
    CHECK(step_time(s, spec).seconds == 5.5);
    CHECK(step_time(s, spec).source.find("step_time_s") != std::string::npos);
}

TEST_CASE("The Llama 3 preset reproduces its observation: 419 failures and 47 stops in 54 days") {
    const RunSetup r = make_run_setup(llama405());
    const double days54 = 54 * 86400.0;
    CHECK(days54 * r.model.failure_rate() == doctest::Approx(419).epsilon(1e-4));
    CHECK(days54 / r.model.maintenance.mean_gap_s == doctest::Approx(47).epsilon(1e-3));
    CHECK(r.model.work_s == doctest::Approx(15.6e12 / (8192.0 * 2048) * r.step.seconds));
}

TEST_CASE("Meta RSC-1's 6.50 failures per 1,000 node-days project to a 1.8 h MTTF at 16,384 GPUs") {
    // Kokolis et al. (reference-data.md 14a): MTTF = 1 / (N_nodes r_f) = 1.8 h for 16,384 GPUs.
    Scenario s = llama405();
    set_scenario_part(s, "reliability", {{"preset", "meta-rsc1"}});
    const RunSetup r = make_run_setup(s);
    CHECK(r.job_mtbf_s() / 3600 == doctest::Approx(1.8).epsilon(0.01));
    CHECK(r.model.maintenance.mean_gap_s == 0);
}

TEST_CASE("Inline failures: rates or MTBFs, scaled by the node count and the multiplier") {
    Scenario s = llama405();
    set_scenario_part(s, "reliability",
                      {{"failures", {{{"component", "gpu"}, {"mtbf_node_h", 2048.0}, {"distribution", "weibull"}, {"shape", 0.7}},
                                     {{"component", "software"}, {"rate_per_1000_node_days", 1.0}}}},
                       {"rate_multiplier", 2.0}});
    const RunSetup r = make_run_setup(s);
    REQUIRE(r.model.failures.size() == 2);
    CHECK(r.spec.preset.empty());
    CHECK(r.model.failures[0].mean_s == doctest::Approx(3600.0 / 2));  // 2,048 nodes, x2
    CHECK(r.model.failures[0].gap == GapKind::Weibull);
    CHECK(r.model.failures[0].needs_spare);
    CHECK_FALSE(r.model.failures[1].needs_spare);
    CHECK(r.model.failures[1].mean_s == doctest::Approx(86400.0 / (2.048 * 2)));
}

TEST_CASE("Bad /reliability input names the path, the value and the rule") {
    CHECK(error_of({{"chekpoint", json::object()}}).find("/reliability/chekpoint") != std::string::npos);
    CHECK(error_of({{"chekpoint", json::object()}}).find("checkpoint") != std::string::npos);
    CHECK(error_of({{"checkpoint", {{"interval_s", 0}}}}).find("/reliability/checkpoint/interval_s") != std::string::npos);
    CHECK(error_of({{"restart", {{"hot_spares", -1}}}}).find("/reliability/restart/hot_spares") != std::string::npos);
    CHECK(error_of({{"preset", "llama3-405"}}).find("llama3-405b-h100") != std::string::npos);
    CHECK(error_of({{"failures", {{{"component", "gpu"}}}}}).find("/reliability/failures/0") != std::string::npos);
    CHECK(error_of({{"failures", {{{"component", "gpu"}, {"rate_per_1000_node_days", 1}, {"mtbf_node_h", 5}}}}})
              .find("exactly one") != std::string::npos);
    CHECK(error_of({{"failures", {{{"component", "gpu"}, {"rate_per_1000_node_days", 1}, {"shape", 0.5}}}}})
              .find("/reliability/failures/0/shape") != std::string::npos);
    CHECK(error_of({{"failures", {{{"component", "gpuu"}, {"rate_per_1000_node_days", 1}}}}})
              .find("did you mean 'gpu'") != std::string::npos);
    CHECK(error_of({{"step_time_s", 0}}).find("/reliability/step_time_s") != std::string::npos);
    CHECK(error_of(json::object()).empty());
}

TEST_CASE("A run-level study needs a token budget") {
    Scenario s = llama405();
    s.training.train_tokens = 0;
    CHECK_THROWS_WITH_AS(make_run_setup(s), doctest::Contains("/training/train_tokens"), InputError);
    set_scenario_part(s, "reliability", {{"train_tokens", 1e12}});
    CHECK(make_run_setup(s).train_tokens == 1e12);
}
