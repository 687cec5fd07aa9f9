// nccl-tests logs as nccl-tests writes them (tests/data/nccl-tests/, see generate.py there):
// every header variant from 2.12 to 2.17, one and several processes, several nodes, in-place
// columns, -c 0, timestamps; wrong results, non-MPI builds and cut rows refused with the line;
// and the import into a profile whose sweeps `sextant collective` and `simulate` then use.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_run.hpp"
#include "core/error.hpp"
#include "profile/nccl_tests_log.hpp"

using namespace sextant;
using namespace sextant::test;

namespace {
const std::string kData = std::string(SEXTANT_SOURCE_DIR) + "/tests/data/nccl-tests/";

std::string read(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::vector<NcclTestsRun> parse_fixture(const std::string& name) { return parse_nccl_tests_log(read(kData + name), kData + name); }

// The InputError path ("FILE:LINE") and rule of parsing `text`.
std::pair<std::string, std::string> parse_error(const std::string& text, const std::string& file = "x.log") {
    try {
        parse_nccl_tests_log(text, file);
    } catch (const InputError& e) {
        return {e.path(), e.rule()};
    }
    return {"", "accepted"};
}

// A minimal log in the 2.13 layout: `ranks` GPUs on one host, rows as given.
std::string log_213(int ranks, const std::vector<std::string>& rows, const std::string& footer = "") {
    std::string s = "# nThread 1 nGpus " + std::to_string(ranks) +
                    " minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
                    "#\n# Using devices\n";
    for (int r = 0; r < ranks; ++r)
        s += "#  Rank " + std::to_string(r) + " Group  0 Pid  1000 on       node device " + std::to_string(r) +
             " [0x18] NVIDIA H100 80GB HBM3\n";
    s += "#\n#                                                              out-of-place                       in-place          \n"
         "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
         "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n";
    for (const auto& r : rows) s += r + "\n";
    return s + footer;
}

std::string temp_path(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() / ("sextant-import-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return (dir / name).string();
}
}  // namespace

TEST_CASE("nccl-tests 2.17: version lines, one process driving 8 GPUs, in-place results and the footer") {
    const auto runs = parse_fixture("node-all_reduce_perf.log");
    REQUIRE(runs.size() == 1);
    const NcclTestsRun& r = runs.front();
    CHECK(r.op == NcclTestOp::AllReduce);
    CHECK(r.op_from == "log");
    CHECK(r.version == "2.17.6");
    CHECK(r.nccl == "2.27.7");
    CHECK(r.ranks.size() == 8);
    CHECK(r.hosts() == std::vector<std::string>{"dgx-a07"});
    CHECK(r.span() == MeasuredSpan::Node);
    CHECK(r.ranks[5].device == 5);
    CHECK(r.ranks[5].device_name == "NVIDIA H100 80GB HBM3");
    REQUIRE(r.rows.size() == 31);
    CHECK(r.rows.front().bytes == 8);
    CHECK(r.rows.back().bytes == 8589934592.0);
    // Line 49: 8589934592 2147483648 float sum -1 31054.7 276.61 484.06 0 31285.5 274.57 480.49 0
    CHECK(r.rows.back().line == 49);
    CHECK(r.rows.back().out_of_place.time_us == 31054.7);
    CHECK(r.rows.back().out_of_place.busbw_gbps == 484.06);
    CHECK(r.rows.back().in_place->time_us == 31285.5);
    CHECK(r.rows.back().type == "float");
    CHECK(r.rows.back().redop == "sum");
    CHECK(r.rows.back().root == -1);
    CHECK(*r.out_of_bounds == 0);
    CHECK(*r.avg_busbw_gbps == 135.729);
    CHECK(r.command.find("all_reduce_perf -b 8 -e 8G") != std::string::npos);
    CHECK(gpu_type_of_device(r.ranks[0].device_name) == "H100-SXM5-80GB");
}

TEST_CASE("nccl-tests 2.13 under mpirun: one process per GPU, the test named by the file, size-0 rows left out") {
    const auto runs = parse_fixture("node-all_gather_perf.log");
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].op == NcclTestOp::AllGather);
    CHECK(runs[0].op_from == "file name");
    CHECK(runs[0].version.empty());
    CHECK(runs[0].ranks.size() == 8);
    const ImportedSweeps s = nccl_tests_sweeps(runs, "node-all_gather_perf.log", WrongResults::Reject, "2026-01-02T03:04:05Z", "file modification time");
    REQUIRE(s.sweeps.size() == 1);
    const CollectiveSweep& sweep = s.sweeps[0];
    CHECK(sweep.samples.size() == 29);  // 31 sizes, 8 and 16 B round to 0 B on 8 ranks
    CHECK(sweep.samples.front().bytes == 32);
    CHECK(sweep.dtype == "float");
    CHECK(sweep.provenance.date == "2026-01-02T03:04:05Z");
    CHECK(sweep.provenance.date_from == "file modification time");
    CHECK(sweep.provenance.tool == "nccl-tests (before 2.17)");  // 2.17 began printing its version
    CHECK(sweep.provenance.verified);
    REQUIRE(s.notes.size() == 1);
    CHECK(s.notes[0].find("2 rows of size 0") != std::string::npos);
    // Line 39: 67108864 2097152 float none -1 246.1 272.68 238.59 0 247.9 270.74 236.90 0
    const auto row = std::find_if(sweep.samples.begin(), sweep.samples.end(), [](const CollectiveSample& x) { return x.bytes == 67108864; });
    REQUIRE(row != sweep.samples.end());
    CHECK(row->time_us == 246.1);
    CHECK(row->in_place_time_us == 247.9);
    CHECK(row->line == 39);
}

TEST_CASE("a multi-node run: 16 ranks on two hosts is a cluster span, the test comes from the mpirun line") {
    const auto runs = parse_fixture("cluster-all_reduce_perf.log");
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].op_from == "command line");
    CHECK(runs[0].ranks.size() == 16);
    CHECK(runs[0].hosts() == std::vector<std::string>{"dgx-a07", "dgx-a08"});
    CHECK(runs[0].span() == MeasuredSpan::Cluster);
    CHECK(runs[0].nccl.empty());  // printed from 2.17 on
    const auto s = nccl_tests_sweeps(runs, "c.log", WrongResults::Reject, "", "");
    CHECK(s.sweeps[0].nodes == 2);
    CHECK(s.sweeps[0].span == MeasuredSpan::Cluster);
}

TEST_CASE("one GPU per node is a rail span, -c 0 results are unverified, timestamps date the sweep") {
    const auto runs = parse_fixture("rail-reduce_scatter_perf.log");
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].span() == MeasuredSpan::Rail);
    CHECK(!runs[0].rows[0].out_of_place.wrong.has_value());
    const auto s = nccl_tests_sweeps(runs, "r.log", WrongResults::Reject, "2026-11-01T00:00:00Z", "file modification time");
    REQUIRE(s.sweeps.size() == 1);
    CHECK(!s.sweeps[0].provenance.verified);
    CHECK(s.sweeps[0].provenance.date == "2026-03-17T14:21:00");
    CHECK(s.sweeps[0].provenance.date_from == "log (local time)");
    CHECK(s.sweeps[0].nodes == 4);
    CHECK(s.sweeps[0].samples[0].time_us == 20.56);
}

TEST_CASE("nccl-tests before 2.13: no Group, an error column, no root column for all-reduce") {
    const auto runs = parse_fixture("old-2.12-all_reduce_perf.log");
    REQUIRE(runs.size() == 1);
    CHECK(!runs[0].counts_wrong);
    CHECK(runs[0].ranks.size() == 8);
    CHECK(runs[0].rows[23].bytes == 67108864);
    CHECK(runs[0].rows[23].out_of_place.time_us == 766.3);
    CHECK(gpu_type_of_device(runs[0].ranks[0].device_name) == "A100-SXM4-80GB");
    const auto s = nccl_tests_sweeps(runs, "old.log", WrongResults::Reject, "", "");
    CHECK(s.sweeps[0].provenance.verified);  // checked, and the footer counts no failure
}

TEST_CASE("wrong results: refused at their line, or left out with --drop-wrong") {
    const auto runs = parse_fixture("wrong-all_reduce_perf.log");
    try {
        nccl_tests_sweeps(runs, "wrong.log", WrongResults::Reject, "", "");
        FAIL("a log with #wrong 3 was accepted");
    } catch (const InputError& e) {
        CHECK(e.path() == "wrong.log:41");
        CHECK(e.value() == "#wrong 3");
        CHECK(e.rule().find("--drop-wrong") != std::string::npos);
    }
    const auto s = nccl_tests_sweeps(runs, "wrong.log", WrongResults::Drop, "", "");
    CHECK(s.sweeps[0].samples.size() == 30);
    for (const auto& p : s.sweeps[0].samples) CHECK(p.bytes != 67108864);
    CHECK(s.notes.front().find("1 rows whose out-of-place result was wrong") != std::string::npos);
}

TEST_CASE("malformed logs are input errors at their file and line") {
    const std::string nompi = kData + "nompi-all_reduce_perf.log";
    auto [where, rule] = parse_error(read(nompi), nompi);
    CHECK(where == nompi + ":2");
    CHECK(rule.find("MPI=1") != std::string::npos);
    const std::string cut = kData + "truncated-all_gather_perf.log";
    std::tie(where, rule) = parse_error(read(cut), cut);
    CHECK(where == cut + ":31");
    CHECK(rule.find("cut or edited row") != std::string::npos);

    const std::string row = "     1048576        262144     float     sum      -1    10.00  104.86  183.50      0    10.00  104.86  183.50      0";
    CHECK(parse_error(log_213(8, {row})).second == "accepted");
    // busbw of an 8-rank all-reduce on a log that lists 4 ranks.
    std::tie(where, rule) = parse_error(log_213(4, {row}), "all_reduce_perf.log");
    CHECK(where == "all_reduce_perf.log:12");
    CHECK(rule.find("bus factor") != std::string::npos);
    // algbw that is not size / time: columns slipped.
    const std::string slipped = "     1048576        262144     float     sum      -1    10.00  183.50  104.86      0    10.00  104.86  183.50      0";
    CHECK(parse_error(log_213(8, {slipped})).second.find("size / time") != std::string::npos);
    // A footer whose average is not the rows' mean.
    CHECK(parse_error(log_213(8, {row}, "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 91.2 \n")).first == "x.log:18");
    // CPU times.
    std::string cpu = log_213(8, {row});
    cpu.replace(cpu.find("   time   algbw"), 15, "cputime   algbw");
    CHECK(parse_error(cpu).second.find("-C") != std::string::npos);
    // A single GPU moves nothing.
    CHECK(parse_error(log_213(1, {"        1024           256     float     sum      -1     3.00    0.34    0.00      0     3.00    0.34    0.00      0"}))
              .second.find("single-GPU") != std::string::npos);
    CHECK(parse_error("just text\n").second.find("no nccl-tests run") != std::string::npos);
    // A rank line that is not nccl-tests'.
    std::string bad_rank = log_213(8, {row});
    bad_rank.replace(bad_rank.find("Pid  1000 on"), 12, "Pid  1000 at");
    CHECK(parse_error(bad_rank).first == "x.log:4");
    // Thread and GPU counts whose product would overflow (a fuzzer's find): refused, not wrapped.
    std::string huge = log_213(8, {row});
    huge.replace(huge.find("nThread 1"), 9, "nThread 2049638230000072400");
    CHECK(parse_error(huge).second.find("at most 65536") != std::string::npos);
}

TEST_CASE("the test is named by the log, a command line, the file name, or else by its bus factor and reduction") {
    // 16 MiB reduce-scatter on 8 ranks: (n-1)/n with a reduction is reduce_scatter alone.
    const std::string rs = "    16777216        524288     float     sum      -1    100.0  167.77  146.80      0    100.0  167.77  146.80      0";
    auto runs = parse_nccl_tests_log(log_213(8, {rs}), "fabric-check.log");
    CHECK(runs[0].op == NcclTestOp::ReduceScatter);
    CHECK(runs[0].op_from == "bus factor");
    // Without a reduction, (n-1)/n is all_gather or alltoall: the log must say which.
    const std::string ag = "    16777216        524288     float    none      -1    100.0  167.77  146.80      0    100.0  167.77  146.80      0";
    CHECK(parse_error(log_213(8, {ag}), "fabric-check.log").second.find("cannot tell which") != std::string::npos);
    CHECK(parse_nccl_tests_log(log_213(8, {ag}), "alltoall.log")[0].op == NcclTestOp::AllToAll);
    CHECK(parse_nccl_tests_log("srun ./nccl-tests/build/all_gather_perf -b 8\n" + log_213(8, {ag}), "x.log")[0].op_from == "command line");
    // Tests Sextant has no model for.
    CHECK(parse_error("mpirun ./build/alltoallv_perf\n" + log_213(8, {ag})).second.find("none of them") != std::string::npos);
}

TEST_CASE("what surrounds nccl-tests' lines: NCCL INFO, CRLF, OpenMPI tags, several runs in one file") {
    const std::string row = "     1048576        262144     float     sum      -1    10.00  104.86  183.50      0    10.00  104.86  183.50      0";
    std::string text = log_213(8, {row, "node:1000:1000 [0] NCCL INFO comm 0x5555 rank 0 nranks 8 - Init COMPLETE", row},
                               "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 183.5 \n#\n");
    CHECK(parse_nccl_tests_log(text, "all_reduce_perf.log")[0].rows.size() == 2);
    std::string crlf;
    for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    CHECK(parse_nccl_tests_log(crlf, "all_reduce_perf.log")[0].rows.size() == 2);
    std::string tagged;
    std::istringstream lines(text);
    for (std::string l; std::getline(lines, l);) tagged += "[1,0]<stdout>:" + l + "\n";
    CHECK(parse_nccl_tests_log(tagged, "all_reduce_perf.log")[0].rows.size() == 2);
    const auto two = parse_nccl_tests_log(text + text, "all_reduce_perf.log");
    REQUIRE(two.size() == 2);
    CHECK(two[1].first_line == 22);
}

TEST_CASE("sextant calibrate import-nccl-tests writes a profile that collective and simulate read") {
    const std::string out = temp_path("cluster.json");
    std::filesystem::remove(out);
    const std::string logs = kData + "node-all_gather_perf.log " + kData + "node-reduce_scatter_perf.log " + kData +
                             "node-all_reduce_perf.log " + kData + "rail-all_reduce_perf.log";
    Output o = run_sextant("calibrate import-nccl-tests " + logs + " --out " + out);
    REQUIRE(o.code == 0);
    CHECK(o.out.find("wrote " + out) != std::string::npos);
    const auto doc = nlohmann::json::parse(read(out));
    CHECK(doc["preset"] == "H100-SXM5-80GB");
    CHECK(doc["collectives"].size() == 4);
    CHECK(doc["collectives"][0]["provenance"]["file"] == kData + "node-all_gather_perf.log");
    CHECK(doc["collectives"][0]["provenance"]["hosts"][0] == "dgx-a07");
    // Never over an existing file without --force.
    o = run_sextant("calibrate import-nccl-tests " + logs + " --out " + out);
    CHECK(o.code == 2);
    CHECK(o.out.find("--out") != std::string::npos);
    CHECK(o.out.find("--force") != std::string::npos);
    CHECK(run_sextant("calibrate import-nccl-tests " + logs + " --out " + out + " --force").code == 0);
    // A malformed log: exit 2, naming the file and line; nothing written.
    const std::string other = temp_path("other.json");
    o = run_sextant("calibrate import-nccl-tests " + kData + "truncated-all_gather_perf.log --out " + other);
    CHECK(o.code == 2);
    CHECK(o.out.find("truncated-all_gather_perf.log:31") != std::string::npos);
    CHECK(!std::filesystem::exists(other));
    CHECK(run_sextant("calibrate import-nccl-tests " + kData + "wrong-all_reduce_perf.log --out " + other).code == 2);
    // A device without a Sextant GPU type needs --gpu.
    const std::string pcie = temp_path("pcie-all_reduce_perf.log");
    std::string text = read(kData + "node-all_reduce_perf.log");
    for (std::size_t at = text.find("NVIDIA H100 80GB HBM3"); at != std::string::npos; at = text.find("NVIDIA H100 80GB HBM3", at))
        text.replace(at, 21, "NVIDIA H100 PCIe");
    std::ofstream(pcie) << text;
    o = run_sextant("calibrate import-nccl-tests " + pcie + " --out " + other);
    CHECK(o.code == 2);
    CHECK(o.out.find("\"NVIDIA H100 PCIe\": no Sextant GPU type is known for this device; name one with --gpu") != std::string::npos);
    CHECK(run_sextant("calibrate import-nccl-tests " + pcie + " --gpu H100-SXM5-80GB --out " + other + " --force").code == 0);
    std::filesystem::remove(other);
    CHECK(run_sextant("calibrate import-nccl-tests " + kData + "wrong-all_reduce_perf.log --out " + other + " --drop-wrong").code == 0);

    // `sextant collective` with the profile: at a measured size, the log's own time.
    // node-all_gather_perf.log line 39: 67108864 B in 246.1 us out-of-place.
    o = run_sextant("collective --cluster dgx-h100-superpod --op all_gather --ranks 8 --min 64M --max 64M --json --calibration " + out);
    REQUIRE(o.code == 0);
    const auto sweep = nlohmann::json::parse(o.out);
    CHECK(sweep["rows"][0]["time_us"].get<double>() == doctest::Approx(246.1).epsilon(1e-9));
    CHECK(sweep["rows"][0]["algorithm"] == "measured");

    // `sextant simulate` of a TP-8 scenario that names the profile: TP collectives now measured.
    nlohmann::json scenario = nlohmann::json::parse(read(std::string(SEXTANT_SOURCE_DIR) + "/scenarios/llama3-8b-h100.json"));
    scenario["cluster"] = {{"preset", "dgx-h100-superpod"}, {"gpus", 8}};
    scenario["training"]["global_batch"] = 8;
    scenario["layout"] = {{"tp", 8}, {"pp", 1}, {"dp", 1}, {"cp", 1}, {"microbatch", 1}, {"zero_stage", 1}, {"sequence_parallel", true}};
    const std::string published = temp_path("published.json"), measured = temp_path("measured.json");
    std::ofstream(published) << scenario.dump();
    scenario["calibration"] = out;
    std::ofstream(measured) << scenario.dump();
    const Output a = run_sextant("simulate " + published + " --json"), b = run_sextant("simulate " + measured + " --json");
    REQUIRE(a.code == 0);
    REQUIRE(b.code == 0);
    const double tp_a = nlohmann::json::parse(a.out)["breakdown"]["tp_s"], tp_b = nlohmann::json::parse(b.out)["breakdown"]["tp_s"];
    // Sequence-parallel TP moves 64 MiB per all-gather and reduce-scatter, six gathers and four
    // scatters per layer (forward and backward): the exposed TP time moves from the model's to
    // the log's in that proportion.
    const auto at_64m = [&](const char* op, const std::string& calibration) {
        const Output c = run_sextant(std::string("collective --cluster dgx-h100-superpod --ranks 8 --min 64M --max 64M --json --op ") + op + calibration);
        return nlohmann::json::parse(c.out)["rows"][0]["time_us"].get<double>();
    };
    const double g_a = at_64m("all_gather", ""), s_a = at_64m("reduce_scatter", "");
    const double g_b = at_64m("all_gather", " --calibration " + out), s_b = at_64m("reduce_scatter", " --calibration " + out);
    CHECK(g_b == doctest::Approx(246.1));
    CHECK(tp_b / tp_a == doctest::Approx((6 * g_b + 4 * s_b) / (6 * g_a + 4 * s_a)).epsilon(1e-4));
    CHECK(tp_b != doctest::Approx(tp_a));
    std::filesystem::remove_all(std::filesystem::path(out).parent_path());
}

TEST_CASE("the walk-through: nccl-tests logs, then job logs, to a fitted profile and a validated prediction") {
    // tests/data/jobs/generate.py wrote the three job logs from this import with compute 0.70.
    const std::string imported = temp_path("walk.json"), fitted = temp_path("walk-fitted.json"), refit = temp_path("walk-refit.json");
    for (const auto& f : {imported, fitted, refit}) std::filesystem::remove(f);
    std::string logs;
    for (const char* f : {"cluster-all_reduce_perf", "node-all_gather_perf", "node-all_reduce_perf", "node-alltoall_perf",
                          "node-reduce_scatter_perf", "rail-all_reduce_perf", "rail-reduce_scatter_perf", "rail-sendrecv_perf"})
        logs += " " + kData + f + ".log";
    REQUIRE(run_sextant("calibrate import-nccl-tests" + logs + " --out " + imported).code == 0);
    const std::string jobs = std::string(SEXTANT_SOURCE_DIR) + "/tests/data/jobs/";
    std::string job_args;
    for (int tp : {2, 4, 8}) {
        const std::string name = jobs + "llama3-8b-tp" + std::to_string(tp);
        job_args += " --job " + name + ".json:" + name + ".log";
    }
    Output o = run_sextant("calibrate fit --calibration " + imported + job_args + " --factors compute --json --out " + fitted);
    REQUIRE(o.code == 0);
    const auto fit = nlohmann::json::parse(o.out);
    CHECK(fit["factors"]["compute"].get<double>() == doctest::Approx(0.70).epsilon(0.005));
    CHECK(fit["leave_one_out_pct"].get<double>() < 1.0);  // each job predicted from the other two
    const auto profile = nlohmann::json::parse(read(fitted));
    CHECK(profile["preset"] == "H100-SXM5-80GB");    // still the imported profile,
    CHECK(profile["collectives"].size() == 8);        // with its measured sweeps,
    CHECK(profile["provenance"]["fit"]["factors"] == "compute");
    // A later fit of another factor keeps the record of the one that set compute.
    REQUIRE(run_sextant("calibrate fit --calibration " + fitted + job_args + " --factors communication --out " + refit).code == 0);
    const auto later = nlohmann::json::parse(read(refit));
    CHECK(later["provenance"]["fit"]["factors"] == "communication");
    CHECK(later["provenance"]["earlier_fits"][0]["factors"] == "compute");
    o = run_sextant("calibrate show " + refit + " --json");
    REQUIRE(o.code == 0);
    for (const auto& section : nlohmann::json::parse(o.out)["sections"])
        if (section["section"] == "factors compute") CHECK(section["basis"] == "fit");
    // simulate --calibration: the fitted profile's step time for a job is its log's.
    o = run_sextant("simulate " + jobs + "llama3-8b-tp8.json --json --calibration " + fitted);
    REQUIRE(o.code == 0);
    const double step = nlohmann::json::parse(o.out)["step_time_s"];
    for (const auto& job : fit["jobs"])
        if (job["id"].get<std::string>().find("tp8") != std::string::npos)
            CHECK(step == doctest::Approx(job["measured_step_time_s"].get<double>()).epsilon(0.01));
    std::filesystem::remove_all(std::filesystem::path(imported).parent_path());
}

TEST_CASE("a rank count nobody measured: 8 nodes predicted from the 4-node rail sweep, against its held-out log") {
    const std::string profile = temp_path("rail.json");
    std::filesystem::remove(profile);
    REQUIRE(run_sextant("calibrate import-nccl-tests " + kData + "rail-all_reduce_perf.log --out " + profile).code == 0);
    const Output o = run_sextant("collective --cluster dgx-h100-superpod --op all_reduce --ranks 8 --span rail --min 8 --max 8G --json --calibration " + profile);
    REQUIRE(o.code == 0);
    const auto rows = nlohmann::json::parse(o.out)["rows"];
    const auto held_out = parse_fixture("held-out/rail8-all_reduce_perf.log").front();
    REQUIRE(held_out.ranks.size() == 8);
    REQUIRE(rows.size() == held_out.rows.size());
    double worst = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        CHECK(rows[i]["bytes"].get<double>() == held_out.rows[i].bytes);
        CHECK(rows[i]["algorithm"] == "measured-fit");
        worst = std::max(worst, std::abs(rows[i]["time_us"].get<double>() / held_out.rows[i].out_of_place.time_us - 1));
    }
    // The 4-node curve carries its protocol steps; the fitted law, 14 ring steps against 6 and
    // the bus factor 1.75 against 1.5, carries it to 8 nodes.
    CHECK(worst < 0.08);
    std::filesystem::remove_all(std::filesystem::path(profile).parent_path());
}
