// `sextant collective`: an nccl-tests sweep of one collective on a cluster preset, predicted, printed
// as nccl-tests prints its own.
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/version.hpp"
#include "collective/network_model.hpp"
#include "core/error.hpp"
#include "core/flag_values.hpp"
#include "core/output_file.hpp"
#include "core/work_limits.hpp"
#include "profile/profile.hpp"
#include "report/html_report.hpp"
#include "report/nccl_tests.hpp"
#include "spec/presets.hpp"
#include "spec/scenario.hpp"

namespace sextant::cli {

namespace {
struct CollectiveArgs {
    std::string cluster = "dgx-h100-superpod";
    std::string gpu;
    std::int64_t gpus = 0;
    std::string op = "all_reduce";
    std::int64_t ranks = 8;
    std::string span;
    std::string calibration;  // profile: calibration/ preset or file; default the GPU's
    std::int64_t concurrent = 1;
    std::string min = "8";
    std::string max = "8G";
    std::string html;
    bool json = false;
};


Span parse_span(const std::string& text, std::int64_t ranks, const ClusterSpec& c) {
    if (text.empty()) return ranks <= c.job_domain_gpus() ? Span::Node : Span::Pod;
    for (Span s : {Span::Node, Span::Rail, Span::Pod, Span::Cluster})
        if (span_name(s) == text) return s;
    throw InputError("--span", "\"" + text + "\"", "must be node, rail, pod or cluster");
}

// A representative group of `ranks` GPUs with the requested span.
std::vector<std::int64_t> place(Span span, std::int64_t ranks, const ClusterSpec& c) {
    const std::int64_t per_node = c.gpus_per_node, nodes = c.gpus / per_node;
    auto fail = [&](const std::string& rule) {
        throw InputError("--ranks", std::to_string(ranks), rule + " (" + c.name + ": " + std::to_string(c.gpus) + " GPUs, " +
                                                               std::to_string(per_node) + " per node)");
    };
    std::vector<std::int64_t> gpus;
    switch (span) {
        case Span::Node:
            if (ranks > c.job_domain_gpus()) fail("a node span holds at most the job's GPUs in one NVLink domain");
            for (std::int64_t i = 0; i < ranks; ++i) gpus.push_back(i);
            break;
        case Span::Rail:
            if (ranks > nodes) fail("a rail span takes one GPU per node");
            for (std::int64_t i = 0; i < ranks; ++i) gpus.push_back(i * per_node);
            break;
        case Span::Pod:
            if (ranks > c.gpus) fail("more ranks than GPUs");
            for (std::int64_t i = 0; i < ranks; ++i) gpus.push_back(i);
            break;
        case Span::Cluster: {
            // One GPU per node on one rail, the nodes spread evenly over the whole cluster (so
            // across pods), or whole nodes spread likewise when there are more ranks than nodes.
            const bool whole_nodes = ranks > nodes;
            if (whole_nodes && ranks % per_node != 0) fail("more ranks than nodes needs whole nodes");
            const std::int64_t used_nodes = whole_nodes ? ranks / per_node : ranks;
            if (used_nodes > nodes) fail("more ranks than GPUs");
            const std::int64_t stride = nodes / used_nodes;
            for (std::int64_t i = 0; i < ranks; ++i)
                gpus.push_back(whole_nodes ? (i / per_node) * stride * per_node + i % per_node : i * stride * per_node);
            break;
        }
    }
    return gpus;
}

void run(const CollectiveArgs& a) {
    json cluster_json = resolve_part(json(a.cluster), "topologies", std::filesystem::current_path(), "--cluster");
    if (!a.gpu.empty()) cluster_json["gpu"] = a.gpu;
    if (a.gpus > 0) cluster_json["gpus"] = a.gpus;
    ClusterSpec cluster = parse_cluster(cluster_json, "--cluster", load_gpu);
    const CollectiveOp op = parse_op(a.op, "--op");
    if (a.ranks < 2) throw InputError("--ranks", std::to_string(a.ranks), "must be at least 2");
    check_work(Work::ClusterGpus, static_cast<double>(a.ranks), "--ranks", std::to_string(a.ranks));
    const Span span = parse_span(a.span, a.ranks, cluster);
    GroupPlacement group;
    group.gpus = place(span, a.ranks, cluster);
    if (a.concurrent < 1) throw InputError("--concurrent-groups", std::to_string(a.concurrent), "must be at least 1");
    group.offsets = disjoint_offsets(group.gpus, a.concurrent, cluster.gpus);
    if (static_cast<std::int64_t>(group.offsets.size()) < a.concurrent)
        throw InputError("--concurrent-groups", std::to_string(a.concurrent),
                         "only " + std::to_string(group.offsets.size()) + " disjoint groups of this shape fit in the cluster");
    group.concurrent_groups = a.concurrent;

    const CalibrationProfile profile =
        a.calibration.empty()
            ? CalibrationProfile::for_gpu(cluster.gpu)
            : CalibrationProfile::from_json(resolve_part(json(a.calibration), "calibration", std::filesystem::current_path(), "--calibration"),
                                            "--calibration", cluster.gpu);
    NetworkModel model(cluster, profile);
    const GroupShape shape = model.analyse(group, op == CollectiveOp::AllToAll);
    const double lo = parse_byte_size(a.min, "--min"), hi = parse_byte_size(a.max, "--max");
    if (hi < lo) throw InputError("--max", a.max, "must not be below --min");
    check_work(Work::SweepPoints, std::floor(std::log2(hi / lo)) + 1, "--max", a.max);  // sizes double from --min

    PredictedSweep sweep = sweep_collective(model, op, shape, lo, hi);
    sweep.cluster = cluster.name;
    sweep.gpu = cluster.gpu.name;
    sweep.concurrent_groups = a.concurrent;
    sweep.calibration = profile.source();
    sweep.measured = measured_points(profile, op, span, a.ranks);
    if (!a.html.empty()) {
        ReportModel report;
        report.title = fmt::format("sextant collective: {} over {} ranks on {} x {}", a.op, a.ranks, cluster.gpus, cluster.gpu.name);
        report.facts = {fmt::format("cluster: {} ({}), {} ranks spanning {}, {} concurrent group{}", cluster.name, cluster.gpu.name, a.ranks,
                                    span_name(shape.span), a.concurrent, a.concurrent > 1 ? "s" : "")};
        report.generator = version_text();
        report.collectives.push_back(sweep);
        write_output_file(a.html, html_report(report), "--html");
    }
    if (a.json) {
        std::cout << collective_json(sweep).dump(2) << "\n";
        return;
    }
    const std::string bus = op == CollectiveOp::AllReduce ? "2(n-1)/n" : bus_factor(op, 2) == 1 ? "1" : "(n-1)/n";
    std::cout << nccl_tests_table(
        sweep, {fmt::format("sextant collective: {} predicted on {} x {} ({}), {} ranks spanning {} ({} NVLink domains, {} per domain), "
                            "{} concurrent group{}",
                            a.op, cluster.gpus, cluster.gpu.name, cluster.name, a.ranks, span_name(shape.span), shape.domains,
                            shape.per_domain, a.concurrent, a.concurrent > 1 ? "s" : ""),
                "busbw = algbw x " + bus + " (nccl-tests convention); calibration: " + profile.source(),
                "a prediction: out-of-place and in-place are the same; #wrong is N/A (no data is checked); "
                "algorithm: the one NCCL's tuner would pick"});
}
}  // namespace

void add_collective_command(CLI::App& app) {
    static CollectiveArgs args;
    auto* cmd = app.add_subcommand("collective", "Predict an nccl-tests sweep of one collective on a cluster");
    cmd->add_option("--cluster", args.cluster, "topologies/ preset or file")->capture_default_str();
    cmd->add_option("--gpu", args.gpu, "override the cluster's GPU type");
    cmd->add_option("--gpus", args.gpus, "override the cluster's GPU count");
    cmd->add_option("--op", args.op, "all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, send_recv")->capture_default_str();
    cmd->add_option("--ranks", args.ranks, "ranks in the group")->capture_default_str();
    cmd->add_option("--span", args.span, "node, rail, pod or cluster (default: node when it fits, else pod)");
    cmd->add_option("--calibration", args.calibration, "calibration profile (calibration/ preset or file; default: the GPU's)");
    cmd->add_option("--concurrent-groups", args.concurrent, "groups of this shape running at once")->capture_default_str();
    cmd->add_option("--min", args.min, "smallest size")->capture_default_str();
    cmd->add_option("--max", args.max, "largest size")->capture_default_str();
    cmd->add_option("--html", args.html, "also write the sweep as an HTML report to FILE, with the profile's measured points");
    cmd->add_flag("--json", args.json, "one JSON document");
    cmd->callback([] { run(args); });
}

}  // namespace sextant::cli
