// Chrome traces of a simulated step against the trace-event format as Perfetto and catapult read it
// (docs: catapult "Trace Event Format"; Perfetto's JSON importer): valid JSON, a category and args
// on every slice, slices on one thread nested or disjoint, children tiling their parent, every
// flow with its start and its end inside slices, monotone counters whose peak is the memory
// model's, and timestamps that are the simulator's integer nanoseconds exactly.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "report/trace.hpp"
#include "sim/simulate.hpp"
#include "spec/presets.hpp"

using namespace sextant;
using nlohmann::json;

namespace {
Scenario pipeline(std::int64_t pp, std::int64_t microbatches, std::int64_t vp, const char* framework) {
    json doc = {{"model", {{"name", "uniform"}, {"arch", "llama"}, {"layers", 32}, {"hidden", 4096}, {"ffn_hidden", 14336},
                           {"heads", 32}, {"kv_heads", 8}, {"vocab", 32000}}},
                {"cluster", {{"preset", "dgx-h100-superpod"}, {"gpus", pp * 16}}},
                {"seq_len", 4096},
                {"global_batch", microbatches * 2},
                {"framework", framework},
                {"layout", {{"tp", 8}, {"pp", pp}, {"dp", 2}, {"vp", vp}, {"microbatch", 1}, {"zero_stage", 1}}}};
    return parse_scenario(doc, data_dir());
}

// "1234.567" -> 1234567 ns, from the text: what an exact reader gets.
std::int64_t text_ns(const std::string& t) {
    const auto dot = t.find('.');
    return std::stoll(t.substr(0, dot)) * 1000 + std::stoll(t.substr(dot + 1));
}

struct Slice {
    std::int64_t start, end;
    std::string cat;
};

struct Parsed {
    json doc;
    std::vector<std::pair<std::string, std::string>> raw_ts_dur;  // as written
};

// Every "ts" and "dur" as written in the text, in order.
std::vector<std::string> raw_numbers(const std::string& text, const char* key) {
    std::vector<std::string> out;
    const std::regex re(std::string("\"") + key + "\":([0-9.eE+-]+)");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) out.push_back((*it)[1]);
    return out;
}

std::int64_t ns_of(const json& v) { return static_cast<std::int64_t>(std::llround(v.get<double>() * 1000.0)); }

void check_trace(const Simulation& sim, std::int64_t expected_flows) {
    const std::string text = chrome_trace(sim, "test");
    REQUIRE(json::accept(text));
    // The work limit prices a trace before the step is simulated: its estimate must bound it.
    CHECK(static_cast<double>(text.size()) <= estimated_trace_bytes(static_cast<double>(sim.engine.tasks().size())));
    const json doc = json::parse(text);
    const json& events = doc["traceEvents"];
    // Times in the step: the trace's timestamps less its origin (a power of two of microseconds
    // that puts every timestamp in one binade).
    const std::int64_t origin_us = doc["otherData"]["time_origin_us"];
    CHECK((origin_us & (origin_us - 1)) == 0);
    auto ns_of = [&](const json& v) { return ::ns_of(v) - origin_us * 1000; };

    // Timestamps: microseconds with exactly three decimals, and a reader that multiplies the
    // double by 1000 and rounds recovers the same integer nanoseconds as one that reads the text.
    const auto ts_text = raw_numbers(text, "ts");
    const std::regex three_decimals(R"(\d+\.\d{3})");
    std::size_t bad = 0, ts_i = 0;
    for (const auto& t : ts_text) bad += !std::regex_match(t, three_decimals);
    for (const auto& e : events)
        if (e.contains("ts")) bad += ::ns_of(e["ts"]) != text_ns(ts_text[ts_i++]);
    CHECK(bad == 0);
    // Readers that add doubles: wherever a slice ends at a nanosecond where another on its thread
    // starts or ends, end = ts + dur is that same double; and so it is after subtracting the
    // thread's first timestamp in doubles, as speedscope does (src/import/trace-event.ts).
    std::map<std::pair<int, int>, double> first;
    for (const auto& e : events)
        if (e["ph"] == "X") {
            const std::pair<int, int> key{e["pid"].get<int>(), e["tid"].get<int>()};
            first[key] = first.count(key) ? std::min(first[key], e["ts"].get<double>()) : e["ts"].get<double>();
        }
    for (bool shifted : {false, true}) {
        std::map<std::pair<int, int>, std::map<std::int64_t, std::set<double>>> at_ns;
        for (const auto& e : events)
            if (e["ph"] == "X") {
                const std::pair<int, int> key{e["pid"].get<int>(), e["tid"].get<int>()};
                const double ts = e["ts"].get<double>() - (shifted ? first[key] : 0.0), end = ts + e["dur"].get<double>();
                at_ns[key][ns_of(e["ts"])].insert(ts);
                at_ns[key][ns_of(e["ts"]) + ::ns_of(e["dur"])].insert(end);
            }
        for (const auto& [key, times] : at_ns)
            for (const auto& [ns, doubles] : times) bad += doubles.size() != 1;
        CAPTURE(shifted);
        CHECK(bad == 0);
    }

    // Every task with a duration is one top-level slice, at its simulated nanoseconds.
    std::multiset<std::pair<std::int64_t, std::int64_t>> tasks, slices;
    for (const TaskRecord& t : sim.engine.tasks())
        if (t.duration > 0) tasks.insert({t.start, t.duration});
    std::map<std::pair<int, int>, std::vector<Slice>> tracks;
    for (const auto& e : events) {
        if (e["ph"] != "X") continue;
        REQUIRE(e.contains("cat"));
        REQUIRE(e["args"].contains("stage"));
        const std::string cat = e["cat"];
        const Slice s{ns_of(e["ts"]), ns_of(e["ts"]) + ::ns_of(e["dur"]), cat};
        tracks[{e["pid"].get<int>(), e["tid"].get<int>()}].push_back(s);
        static const std::set<std::string> parents = {"forward", "backward", "pp_send", "dp_reduce", "dp_gather", "optimizer", "wait"};
        if (parents.count(cat)) slices.insert({s.start, s.end - s.start});
        const json& a = e["args"];
        if (cat == "forward" || cat == "backward") bad += !a.contains("microbatch") || !a.contains("chunk") || !a.contains("layers");
        if (cat == "pp_send" || cat == "dp_reduce")
            bad += !(a["bytes"].get<double>() > 0) || a["algorithm"].get<std::string>().empty() || !a.contains("group_span") || !a.contains("op");
        if (cat == "communication") bad += !a.contains("parallelism");
    }
    CHECK(bad == 0);
    CHECK(slices == tasks);

    // On one thread, slices are disjoint or nested, and children tile their parent exactly.
    for (auto& [key, list] : tracks) {
        std::sort(list.begin(), list.end(), [](const Slice& a, const Slice& b) { return a.start != b.start ? a.start < b.start : a.end > b.end; });
        std::vector<const Slice*> open;
        std::map<const Slice*, std::int64_t> covered;
        for (const Slice& s : list) {
            while (!open.empty() && open.back()->end <= s.start) open.pop_back();
            if (!open.empty()) {
                bad += s.end > open.back()->end;  // nested, never overlapping
                covered[open.back()] += s.end - s.start;
            }
            open.push_back(&s);
        }
        for (const auto& [parent, sum] : covered) bad += sum != parent->end - parent->start;
    }
    CHECK(bad == 0);

    // Flows: each id has one start and one end, the end no earlier, each inside a slice of its
    // thread (Perfetto binds "s" to the enclosing slice and "f" with bp "e" likewise).
    std::map<std::int64_t, std::vector<json>> flows;
    for (const auto& e : events)
        if (e["ph"] == "s" || e["ph"] == "f") flows[e["id"].get<std::int64_t>()].push_back(e);
    CHECK(static_cast<std::int64_t>(flows.size()) == expected_flows);
    auto inside_slice = [&](const json& e) {
        for (const Slice& s : tracks[{e["pid"].get<int>(), e["tid"].get<int>()}])
            if (s.start <= ns_of(e["ts"]) && ns_of(e["ts"]) < s.end) return true;
        return false;
    };
    for (const auto& [id, pair] : flows) {
        REQUIRE(pair.size() == 2);
        const json& start = pair[0]["ph"] == "s" ? pair[0] : pair[1];
        const json& end = pair[0]["ph"] == "s" ? pair[1] : pair[0];
        bad += start["ph"] != "s" || end["ph"] != "f" || end["bp"] != "e";
        bad += start["cat"] != end["cat"] || start["name"] != end["name"];
        bad += ns_of(start["ts"]) > ns_of(end["ts"]);
        bad += !inside_slice(start) || !inside_slice(end);
        bad += start["pid"] == end["pid"];  // a pipeline transfer crosses stages
    }
    CHECK(bad == 0);

    // Counters: per stage, time never goes back; the first value is the static memory, the peak
    // the memory model's stage total.
    std::map<int, std::vector<std::pair<std::int64_t, double>>> counters;
    for (const auto& e : events)
        if (e["ph"] == "C") counters[e["pid"].get<int>()].emplace_back(ns_of(e["ts"]), e["args"]["allocated_bytes"].get<double>());
    const auto& stages = sim.result.memory.stages;
    REQUIRE(counters.size() == stages.size());
    for (const auto& [pid, values] : counters) {
        CAPTURE(pid);
        for (std::size_t i = 1; i < values.size(); ++i) bad += values[i].first < values[i - 1].first;
        CHECK(bad == 0);
        const StageMemory& m = stages[static_cast<std::size_t>(pid)];
        CHECK(values.front().second == doctest::Approx((m.total() - m.activations).value()));
        double peak = 0;
        for (const auto& v : values) peak = std::max(peak, v.second);
        CHECK(peak == doctest::Approx(m.total().value()));
        CHECK(values.back().second == doctest::Approx(values.front().second));  // every activation freed
    }

    // Metadata: every stage is a named process, every stream a named thread.
    std::set<int> named;
    for (const auto& e : events)
        if (e["ph"] == "M" && e["name"] == "process_name") named.insert(e["pid"].get<int>());
    for (const auto& [key, list] : tracks) CHECK(named.count(key.first));
}
}  // namespace

TEST_CASE("trace: interleaved 1F1B with overlapped sends") {
    const Scenario s = pipeline(4, 8, 2, "megatron-core-2024");
    const StepContext ctx(s);
    const Layout l = resolve_layout(s, s.layout);
    const Simulation sim = simulate(ctx, l, TaskLabels::Describe);
    CHECK(estimated_tasks(l, l.microbatches(s.training.global_batch)) >= static_cast<double>(sim.engine.tasks().size()));
    // One flow per send: every forward but the last chunk's on the last stage, every backward but
    // the first chunk's on the first stage.
    check_trace(sim, 2 * 8 * (4 * 2 - 1));
}

TEST_CASE("trace: blocking sends (Megatron-LM 2022) flow from compute slice to compute slice") {
    const Scenario s = pipeline(4, 8, 1, "megatron-lm-2022");
    const StepContext ctx(s);
    const Simulation sim = simulate(ctx, resolve_layout(s, s.layout), TaskLabels::Describe);
    check_trace(sim, 2 * 8 * (4 - 1));
    const json doc = json::parse(chrome_trace(sim, "blocking"));
    // Metadata events have no category (const operator[] on a missing key is undefined).
    for (const auto& e : doc["traceEvents"]) CHECK(e.value("cat", "") != "pp_send");
}

TEST_CASE("trace: a preset scenario (Llama 3 405B, pp 16, vp 4) keeps every invariant") {
    const Scenario s = load_scenario(data_dir() / "scenarios" / "llama3-405b-h100.json");
    const StepContext ctx(s);
    const Layout l = resolve_layout(s, s.layout);
    const Simulation sim = simulate(ctx, l, TaskLabels::Describe);
    const std::int64_t m = l.microbatches(s.training.global_batch);
    check_trace(sim, 2 * m * (l.pp * l.vp - 1));
    // The work limit's task estimate bounds the tasks the simulation made.
    CHECK(estimated_tasks(l, m) >= static_cast<double>(sim.engine.tasks().size()));
}

TEST_CASE("trace: a host-bound MoE step's host wait and exposed activation offload are children that tile their tasks") {
    // Qwen3-30B-A3B on 64 GB200s without expert parallelism. At microbatch 1 each dropless MoE
    // layer's host time is above its GPU work (the host floor); at microbatch 8, with 47 of 48
    // layers' activations waiting in host memory, their moves outlast the compute that hides
    // them. Both are parts of the forward and backward tasks, and the children must still tile
    // them.
    json doc = {{"model", "qwen3-30b-a3b"},
                {"cluster", {{"preset", "gb200-nvl72"}, {"gpus", 64}}},
                {"training", {{"seq_len", 4096}, {"global_batch", 512}, {"precision", "mxfp8"}, {"framework", "nemo-2026"}}},
                {"layout", {{"tp", 1}, {"pp", 1}, {"dp", 64}, {"ep", 1}, {"microbatch", 1}, {"zero_stage", 3}}}};
    const auto traced = [&](const json& d, const char* child, double Breakdown::*part) {
        CAPTURE(child);
        const Scenario s = parse_scenario(d, data_dir());
        const StepContext ctx(s);
        const Simulation sim = simulate(ctx, resolve_layout(s, s.layout), TaskLabels::Describe);
        REQUIRE(sim.result.breakdown.*part > 0.0);
        check_trace(sim, 0);
        std::set<std::string> children;
        const json trace = json::parse(chrome_trace(sim, "moe"));
        for (const auto& e : trace["traceEvents"])
            if (e.value("ph", "") == "X") children.insert(e.value("name", ""));
        CHECK(children.count(child) == 1);
    };
    traced(doc, "host (issuing MoE kernels)", &Breakdown::host);
    doc["layout"]["microbatch"] = 8;
    doc["layout"]["activation_offload_layers"] = 47;
    traced(doc, "activation offload (exposed)", &Breakdown::offload);
}
