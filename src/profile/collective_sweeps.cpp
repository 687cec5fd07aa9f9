#include "profile/collective_sweeps.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace sextant {

namespace {
constexpr FieldDef kSweepFields[] = {
    {"op", FieldType::String, "collective, as nccl-tests names its tests", "", "", -1e300, 1e300,
     "all_reduce|all_gather|reduce_scatter|all_to_all|broadcast|reduce|send_recv"},
    {"span", FieldType::String, "what the group crossed: one node, one rail (a GPU per node), several nodes", "", "",
     -1e300, 1e300, "node|rail|cluster"},
    {"ranks", FieldType::Integer, "GPUs in the group", "", "", 2, 1 << 24},
    {"nodes", FieldType::Integer, "hosts the ranks ran on", "", "1", 1, 1 << 24},
    {"dtype", FieldType::String, "element type of the run (nccl-tests' type column)"},
    {"algorithm", FieldType::String, "NCCL algorithm if known (Ring, Tree, NVLS)"},
    {"provenance", FieldType::Object, "where and how the sweep was measured"},
    {"points", FieldType::Array, "one entry per size [{bytes, time_us, busbw_gbps, in_place_time_us, line}]"},
};
constexpr FieldDef kSampleFields[] = {
    {"bytes", FieldType::Number, "nccl-tests' size: the larger of the input and output buffer", "B", "", 1, 1.0e15},
    {"time_us", FieldType::Number, "time of one out-of-place collective", "us", "", 1e-3, 1.0e12},
    {"busbw_gbps", FieldType::Number, "bus bandwidth as nccl-tests reports it (checked against bytes and time)", "GB/s", "", 0},
    {"in_place_time_us", FieldType::Number, "time of one in-place collective", "us", "", 1e-3, 1.0e12},
    {"line", FieldType::Integer, "line of the log the row came from", "", "", 1},
};
constexpr FieldDef kProvenanceFields[] = {
    {"kind", FieldType::String, "measured or published", "", "measured", -1e300, 1e300, "measured|published"},
    {"tool", FieldType::String, "what measured it, with its version"},
    {"file", FieldType::String, "the log it was read from"},
    {"date", FieldType::String, "when it was measured (ISO 8601)"},
    {"date_from", FieldType::String, "what the date rests on: log, file modification time, clock"},
    {"nccl", FieldType::String, "NCCL version"},
    {"hosts", FieldType::Array, "host names of the run"},
    {"device", FieldType::String, "CUDA device name the run reported"},
    {"command", FieldType::String, "command line"},
    {"verified", FieldType::Boolean, "every result was checked (nccl-tests #wrong 0)", "", "true"},
};

std::string string_or_empty(const ObjectReader& r, std::string_view key) { return r.string(key).value_or(""); }

SweepProvenance parse_provenance(const json& object, const std::string& path) {
    ObjectReader r(object, path, kProvenanceFields);
    SweepProvenance p;
    p.kind = r.string("kind").value_or("measured");
    p.tool = string_or_empty(r, "tool");
    p.file = string_or_empty(r, "file");
    p.date = string_or_empty(r, "date");
    p.date_from = string_or_empty(r, "date_from");
    p.nccl = string_or_empty(r, "nccl");
    p.device = string_or_empty(r, "device");
    p.command = string_or_empty(r, "command");
    p.verified = r.boolean("verified").value_or(true);
    if (const json* hosts = r.raw("hosts"))
        for (std::size_t i = 0; i < hosts->size(); ++i) {
            if (!(*hosts)[i].is_string())
                throw InputError(r.path_of("hosts") + "/" + std::to_string(i), value_text((*hosts)[i]), "must be a string");
            p.hosts.push_back((*hosts)[i].get<std::string>());
        }
    return p;
}

// nccl-tests prints busbw with two decimals (one or none above 1,000 GB/s) and times to a few
// significant digits: a reported busbw within 0.06 GB/s or 1% of bytes / time x factor agrees.
void check_busbw(const ObjectReader& r, const CollectiveSweep& sweep, const CollectiveSample& s) {
    const auto reported = r.number("busbw_gbps");
    if (!reported) return;
    const double computed = sample_busbw_gbps(sweep, s);
    if (std::abs(*reported - computed) > 0.06 + 0.01 * computed)
        throw InputError(r.path_of("busbw_gbps"), std::to_string(*reported),
                         "disagrees with bytes / time_us x the bus factor of " + std::string(nccl_test_op_name(sweep.op)) +
                             " on " + std::to_string(sweep.ranks) + " ranks (" + std::to_string(computed) +
                             " GB/s, nccl-tests' convention)");
}

void check_span(const ObjectReader& r, const CollectiveSweep& s) {
    const auto fail = [&](const std::string& rule) {
        throw InputError(r.path_of("nodes"), std::to_string(s.nodes), rule);
    };
    if (s.nodes > s.ranks) fail("cannot exceed ranks (" + std::to_string(s.ranks) + ")");
    switch (s.span) {
        case MeasuredSpan::Node:
            if (s.nodes != 1) fail("a node span runs on one node");
            break;
        case MeasuredSpan::Rail:
            if (s.nodes != s.ranks) fail("a rail span has one GPU per node: nodes = ranks (" + std::to_string(s.ranks) + ")");
            break;
        case MeasuredSpan::Cluster:
            if (s.nodes < 2 || s.nodes == s.ranks)
                fail("a cluster span has several GPUs on each of several nodes (one per node is a rail span)");
            if (s.ranks % s.nodes != 0) fail("ranks (" + std::to_string(s.ranks) + ") must split evenly over the nodes");
            break;
    }
}
}  // namespace

std::span<const FieldDef> collective_sweep_fields() { return kSweepFields; }
std::span<const FieldDef> collective_sample_fields() { return kSampleFields; }
std::span<const FieldDef> sweep_provenance_fields() { return kProvenanceFields; }

double sample_busbw_gbps(const CollectiveSweep& sweep, const CollectiveSample& sample) {
    return busbw_gbps(sweep.op, sweep.ranks, sample.bytes, sample.time_us);
}

std::string sweep_label(const CollectiveSweep& s) {
    std::string label = std::string(nccl_test_op_name(s.op)) + " on " + std::to_string(s.ranks) + " ranks";
    if (s.span == MeasuredSpan::Cluster) return label + " (" + std::to_string(s.nodes) + " nodes, cluster)";
    return label + " (" + std::string(measured_span_name(s.span)) + ")";
}

std::vector<CollectiveSweep> parse_collective_sweeps(const json& array, const std::string& path) {
    if (!array.is_array()) throw InputError(path, value_text(array), "must be an array of sweeps {op, span, ranks, points}");
    std::vector<CollectiveSweep> sweeps;
    for (std::size_t i = 0; i < array.size(); ++i) {
        ObjectReader r(array[i], path + "/" + std::to_string(i), kSweepFields);
        CollectiveSweep s;
        s.op = *parse_nccl_test_op(r.require_string("op"));
        s.span = *parse_measured_span(r.require_string("span"));
        s.ranks = r.require_integer("ranks");
        s.nodes = r.integer("nodes").value_or(1);
        check_span(r, s);
        s.dtype = string_or_empty(r, "dtype");
        s.algorithm = string_or_empty(r, "algorithm");
        if (const json* p = r.raw("provenance")) s.provenance = parse_provenance(*p, r.path_of("provenance"));
        const json* points = r.raw("points");
        if (!points || points->empty()) throw InputError(r.path_of("points"), "", "is required: at least one measured size");
        for (std::size_t k = 0; k < points->size(); ++k) {
            ObjectReader p((*points)[k], r.path_of("points") + "/" + std::to_string(k), kSampleFields);
            CollectiveSample sample;
            sample.bytes = p.require_number("bytes");
            sample.time_us = p.require_number("time_us");
            sample.in_place_time_us = p.number("in_place_time_us").value_or(0);
            sample.line = p.integer("line").value_or(0);
            check_busbw(p, s, sample);
            s.samples.push_back(sample);
        }
        sweeps.push_back(std::move(s));
    }
    return sweeps;
}

json collective_sweep_json(const CollectiveSweep& s) {
    const SweepProvenance& p = s.provenance;
    json provenance = {{"kind", p.kind}};
    const std::pair<const char*, const std::string*> texts[] = {{"tool", &p.tool}, {"file", &p.file}, {"date", &p.date},
                                                                {"date_from", &p.date_from}, {"nccl", &p.nccl},
                                                                {"device", &p.device}, {"command", &p.command}};
    for (const auto& [key, value] : texts)
        if (!value->empty()) provenance[key] = *value;
    if (!p.hosts.empty()) provenance["hosts"] = p.hosts;
    provenance["verified"] = p.verified;
    json points = json::array();
    for (const CollectiveSample& sample : s.samples) {
        json point = {{"bytes", sample.bytes}, {"time_us", sample.time_us},
                      {"busbw_gbps", std::round(sample_busbw_gbps(s, sample) * 1000.0) / 1000.0}};
        if (sample.in_place_time_us > 0) point["in_place_time_us"] = sample.in_place_time_us;
        if (sample.line > 0) point["line"] = sample.line;
        points.push_back(std::move(point));
    }
    json out = {{"op", nccl_test_op_name(s.op)}, {"span", measured_span_name(s.span)}, {"ranks", s.ranks}, {"nodes", s.nodes}};
    if (!s.dtype.empty()) out["dtype"] = s.dtype;
    if (!s.algorithm.empty()) out["algorithm"] = s.algorithm;
    out["provenance"] = std::move(provenance);
    out["points"] = std::move(points);
    return out;
}

}  // namespace sextant
