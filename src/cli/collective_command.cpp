// `sextant collective`: an nccl-tests-style sweep of one collective on a cluster preset.
#include <iostream>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "collective/network_model.hpp"
#include "core/error.hpp"
#include "profile/profile.hpp"
#include "report/table.hpp"
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
    bool json = false;
};

double parse_size(const std::string& text, const std::string& flag) {
    const std::string rule = "must be a size in bytes with an optional K, M or G suffix (powers of 1024), e.g. 8, 64K, 8G";
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        throw InputError(flag, "\"" + text + "\"", rule);
    }
    std::string suffix = text.substr(used);
    double scale = 1;
    if (suffix == "K" || suffix == "k") scale = 1024.0;
    else if (suffix == "M" || suffix == "m") scale = 1024.0 * 1024;
    else if (suffix == "G" || suffix == "g") scale = 1024.0 * 1024 * 1024;
    else if (!suffix.empty()) throw InputError(flag, "\"" + text + "\"", rule);
    if (v <= 0) throw InputError(flag, "\"" + text + "\"", rule);
    return v * scale;
}

Span parse_span(const std::string& text, std::int64_t ranks, const ClusterSpec& c) {
    if (text.empty()) return ranks <= c.nvlink_domain_gpus ? Span::Node : Span::Pod;
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
            if (ranks > c.nvlink_domain_gpus) fail("a node span holds at most the NVLink domain's GPUs");
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
    const double lo = parse_size(a.min, "--min"), hi = parse_size(a.max, "--max");
    if (hi < lo) throw InputError("--max", a.max, "must not be below --min");

    json rows = json::array();
    TextTable table({"size (B)", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "algorithm"});
    for (double bytes = lo; bytes <= hi * 1.0000001; bytes *= 2) {
        const CollectiveResult r = model.cost(op, Bytes(bytes), shape);
        rows.push_back({{"bytes", bytes}, {"time_us", r.time.value() * 1e6}, {"algbw_gbps", r.algbw_gbps},
                        {"busbw_gbps", r.busbw_gbps}, {"algorithm", std::string(r.algorithm)}});
        table.add_row({fmt::format("{:.0f}", bytes), fmt::format("{:.2f}", r.time.value() * 1e6), fmt::format("{:.2f}", r.algbw_gbps),
                       fmt::format("{:.2f}", r.busbw_gbps), std::string(r.algorithm)});
    }
    if (a.json) {
        std::cout << json({{"op", a.op}, {"cluster", cluster.name}, {"gpu", cluster.gpu.name}, {"ranks", a.ranks},
                           {"span", span_name(shape.span)}, {"concurrent_groups", a.concurrent}, {"rows", rows}})
                         .dump(2)
                  << "\n";
        return;
    }
    std::cout << fmt::format("# {} on {} x {} ({}), {} ranks spanning {} ({} NVLink domains, {} per domain), {} concurrent group{}\n",
                             a.op, cluster.gpus, cluster.gpu.name, cluster.name, a.ranks, span_name(shape.span), shape.domains,
                             shape.per_domain, a.concurrent, a.concurrent > 1 ? "s" : "");
    std::cout << "# busbw = algbw x " << (op == CollectiveOp::AllReduce ? "2(n-1)/n" : bus_factor(op, 2) == 1 ? "1" : "(n-1)/n")
              << " (nccl-tests convention); calibration: " << profile.source() << "\n\n";
    std::cout << table.render();
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
    cmd->add_flag("--json", args.json, "one JSON document");
    cmd->callback([] { run(args); });
}

}  // namespace sextant::cli
