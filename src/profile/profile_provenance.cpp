#include "profile/profile_provenance.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "profile/collective_sweeps.hpp"
#include "profile/comm_calibration.hpp"
#include "profile/profile.hpp"
#include "spec/precision_recipe.hpp"

namespace sextant {

namespace {
// Counts of bases and sources over a section's numbers, in first-seen order.
struct Tally {
    std::vector<std::pair<std::string, int>> bases, sources;
    static void bump(std::vector<std::pair<std::string, int>>& v, const std::string& key) {
        for (auto& [k, n] : v)
            if (k == key) {
                ++n;
                return;
            }
        v.emplace_back(key, 1);
    }
    void add(const std::string& source) {
        bump(bases, source_basis(source));
        bump(sources, source.empty() ? "(no source given)" : source);
    }
    std::string basis() const {
        if (bases.size() == 1) return bases.front().first;
        std::string out;
        for (const auto& [b, n] : bases) out += (out.empty() ? "" : ", ") + b + " " + std::to_string(n);
        return out;
    }
};

std::string text(const json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// "x1.03 median (x0.95..x1.10, 10 points)" for the ratios of profile to published values.
std::string ratio_summary(std::vector<double> ratios) {
    if (ratios.empty()) return "no published counterpart";
    std::sort(ratios.begin(), ratios.end());
    const double median = ratios[ratios.size() / 2];
    if (std::abs(ratios.front() - 1) < 1e-9 && std::abs(ratios.back() - 1) < 1e-9) return "same values";
    return fmt::format("x{:.3f} median (x{:.3f}..x{:.3f}, {} points)", median, ratios.front(), ratios.back(), ratios.size());
}

std::string number(double v) { return fmt::format("{:.4g}", v); }

std::string change(double published, double value) {
    if (std::abs(published - value) <= 1e-12 * std::max(1.0, std::abs(published))) return "same";
    return number(published) + " -> " + number(value);
}

void gemm_lines(const json& p, const json& pub, const CalibrationProfile& base, std::vector<ProvenanceLine>& out) {
    for (auto it = p["gemm"].begin(); it != p["gemm"].end(); ++it) {
        Tally t;
        std::vector<double> ratios;
        const bool published = pub["gemm"].contains(it.key());  // the shipped tables: bf16, fp16, fp8
        const bool same = published && pub["gemm"][it.key()] == it.value();
        for (const json& point : it.value()) {
            t.add(text(point, "source"));
            // Read by the table's recipe name: fp8_rowwise and fp8_blockwise are tables, not precisions.
            if (published)
                ratios.push_back(point["tflops"].get<double>() /
                                 base.gemm_tflops(it.key(), precision_recipe(it.key(), "/gemm").operands, point["m"].get<std::int64_t>(),
                                                  point["n"].get<std::int64_t>(), point["k"].get<std::int64_t>()));
        }
        const std::string versus = same ? "same" : published ? ratio_summary(ratios) : "added (no published table)";
        out.push_back({"gemm " + it.key(), t.basis(), std::to_string(it.value().size()) + " points", t.sources, versus});
    }
}

void attention_lines(const json& p, const json& pub, const CalibrationProfile& base, std::vector<ProvenanceLine>& out) {
    Tally t;
    std::vector<double> fwd, bwd;
    // Points of another kernel than the profile's (marked "kernel") are not the published
    // table's kind: counted, not compared.
    const std::string own = p.value("attention_kernel", std::string("fused"));
    std::size_t others = 0;
    for (const json& a : p["attention"]) {
        t.add(text(a, "source"));
        if (a.value("kernel", own) != own) {
            ++others;
            continue;
        }
        const auto seq = a["seq"].get<std::int64_t>(), hd = a["head_dim"].get<std::int64_t>();
        const bool causal = a.value("causal", true);
        fwd.push_back(a["fwd_tflops"].get<double>() / base.attention_tflops(Precision::Bf16, seq, hd, causal, false));
        bwd.push_back(a["bwd_tflops"].get<double>() / base.attention_tflops(Precision::Bf16, seq, hd, causal, true));
    }
    const bool same = p["attention"] == pub["attention"];
    const std::string count = std::to_string(p["attention"].size()) + " points" +
                              (others ? " (" + std::to_string(others) + " of other kernels)" : "");
    out.push_back({"attention", t.basis(), count, t.sources,
                   same ? "same" : "forward " + ratio_summary(fwd) + "; backward " + ratio_summary(bwd)});
}

void memory_line(const json& p, const json& pub, std::vector<ProvenanceLine>& out) {
    Tally t;
    t.add(text(p["memory"], "source"));
    const double copy = p["memory"]["copy_tbps"].get<double>();
    const double elementwise = p["memory"].value("elementwise_tbps", copy);
    const double pub_copy = pub["memory"]["copy_tbps"].get<double>();
    const double pub_elementwise = pub["memory"].value("elementwise_tbps", pub_copy);
    out.push_back({"memory", t.basis(), fmt::format("copy {:.3g} TB/s, elementwise {:.3g} TB/s", copy, elementwise), t.sources,
                   p["memory"] == pub["memory"] ? "same"
                                                : "copy " + change(pub_copy, copy) + ", elementwise " + change(pub_elementwise, elementwise)});
}

void comm_lines(const json& p, const json& pub, std::vector<ProvenanceLine>& out) {
    const json empty = json::object();
    const json& comm = p.contains("comm") ? p["comm"] : empty;
    const json& pub_comm = pub.contains("comm") ? pub["comm"] : empty;
    const CommCalibration defaults;
    const std::pair<const char*, double> fields[] = {{"nvlink_ring_efficiency", defaults.nvlink_ring_efficiency},
                                                     {"nvls_allreduce_efficiency", defaults.nvls_allreduce_efficiency},
                                                     {"nic_efficiency", defaults.nic_efficiency},
                                                     {"nvlink_latency_us", defaults.nvlink_latency_us},
                                                     {"network_latency_us", defaults.network_latency_us}};
    for (const auto& [name, fallback] : fields) {
        Tally t;
        const bool given = comm.contains(name);
        if (given) t.add(text(comm, "source"));
        else Tally::bump(t.bases, "default"), Tally::bump(t.sources, "the collective model's default (comm_calibration.hpp)");
        const double value = comm.value(name, fallback), published = pub_comm.value(name, fallback);
        out.push_back({std::string("comm ") + name, t.basis(), number(value), t.sources, change(published, value)});
    }
}

void collective_line(const json& p, const json& pub, const std::vector<CollectiveSweep>& sweeps, std::vector<ProvenanceLine>& out) {
    if (sweeps.empty()) return;
    Tally t;
    std::size_t points = 0;
    for (const CollectiveSweep& s : sweeps) {
        points += s.samples.size();
        std::string hosts;
        for (const auto& h : s.provenance.hosts) hosts += (hosts.empty() ? "" : ", ") + h;
        Tally::bump(t.bases, s.provenance.kind);
        Tally::bump(t.sources, s.provenance.tool + (hosts.empty() ? "" : " on " + hosts) +
                                   (s.provenance.date.empty() ? "" : " (" + s.provenance.date.substr(0, 10) + ")"));
    }
    const bool had = pub.contains("collectives") && !pub["collectives"].empty();
    out.push_back({"collectives", t.basis(), fmt::format("{} sweeps, {} points", sweeps.size(), points), t.sources,
                   !had ? "added (the published profile has none)" : p["collectives"] == pub["collectives"] ? "same" : "replaced"});
}

// The fit record that set `factor`, newest first: provenance.fit, then provenance.earlier_fits.
const json* fit_of(const json& provenance, const std::string& factor) {
    std::vector<const json*> fits;
    if (provenance.contains("fit")) fits.push_back(&provenance["fit"]);
    if (provenance.contains("earlier_fits"))
        for (const json& f : provenance["earlier_fits"]) fits.push_back(&f);
    for (const json* f : fits) {
        const std::string names = text(*f, "factors");
        std::size_t start = 0;
        while (start <= names.size()) {
            const std::size_t comma = std::min(names.find(',', start), names.size());
            if (names.substr(start, comma - start) == factor) return f;
            start = comma + 1;
        }
    }
    return nullptr;
}

void factor_lines(const json& p, const json& pub, std::vector<ProvenanceLine>& out) {
    const json empty = json::object();
    const json& provenance = p.contains("provenance") ? p["provenance"] : empty;
    for (const char* name : {"compute", "communication", "overlap"}) {
        const double value = p.contains("factors") ? p["factors"].value(name, 1.0) : 1.0;
        const double published = pub.contains("factors") ? pub["factors"].value(name, 1.0) : 1.0;
        ProvenanceLine line{std::string("factors ") + name, "", number(value), {}, change(published, value)};
        if (const json* fit = fit_of(provenance, name)) {
            line.basis = "fit";
            std::string jobs;
            if (fit->contains("jobs"))
                for (const json& j : (*fit)["jobs"]) jobs += (jobs.empty() ? "" : ", ") + j.get<std::string>();
            // Runs files name where the jobs come from; SCENARIO:LOG inputs repeat the job ids.
            std::string runs;
            if (fit->contains("inputs"))
                for (const json& i : (*fit)["inputs"])
                    if (i.get<std::string>().find(':') == std::string::npos) runs += (runs.empty() ? "" : ", ") + i.get<std::string>();
            line.sources.emplace_back(fmt::format("fit to {} ({}{}), RMS {:.1f}% -> {:.1f}%, leave-one-out {:.1f}%", jobs,
                                                  runs.empty() ? "" : runs + "; ", text(*fit, "framework"),
                                                  fit->value("rms_error_before_pct", 0.0), fit->value("rms_error_after_pct", 0.0),
                                                  fit->value("leave_one_out_pct", 0.0)),
                                      1);
        } else if (value == 1.0) {
            line.basis = "default";
            line.sources.emplace_back("no fit: the microbenchmarks as they are", 1);
        } else {
            line.basis = "unsourced";
            line.sources.emplace_back("set by hand: no fit record in provenance", 1);
        }
        out.push_back(std::move(line));
    }
}
}  // namespace

std::string source_basis(const std::string& source) {
    if (source.empty()) return "unsourced";
    // sextant-calibrate's own points, and points measured beside it that say so first ("measured
    // with calibration/compare_torch.py: ...").
    if (source.rfind("sextant-calibrate", 0) == 0 || source.rfind("measured", 0) == 0) return "measured";
    // The shipped profiles say how a figure was derived from published ones: "(derived)",
    // "scaled to", "assuming", "x 0.83", "at 0.6x", "H100 figures used for H200".
    for (const char* word : {"derived", "scaled", "assuming", "x 0.", "at 0.", "used for"})
        if (source.find(word) != std::string::npos) return "derived";
    return "published";
}

std::vector<ProvenanceLine> describe_profile(const json& p, const json& pub, const GpuSpec& gpu) {
    const CalibrationProfile profile = CalibrationProfile::from_json(p, "", gpu);
    const CalibrationProfile base = CalibrationProfile::from_json(pub, "", gpu).with_factors({});
    std::vector<ProvenanceLine> out;
    gemm_lines(p, pub, base, out);
    attention_lines(p, pub, base, out);
    memory_line(p, pub, out);
    comm_lines(p, pub, out);
    collective_line(p, pub, profile.collective_sweeps(), out);
    factor_lines(p, pub, out);
    return out;
}

}  // namespace sextant
