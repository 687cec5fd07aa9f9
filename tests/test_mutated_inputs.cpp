// Bad input is an InputError, never a crash, a hang or a nonsense number: the preset scenarios,
// with their model and cluster written out in full, mutated at random (keys deleted, values
// replaced by wrong types, zero, negative, huge and fractional numbers). Whatever parses must then
// give a finite memory estimate and step time.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "memory/memory_model.hpp"
#include "sim/simulate.hpp"
#include "spec/presets.hpp"
#include "spec/scenario.hpp"

using namespace sextant;

namespace {
// Each preset scenario as written, and with its model and cluster presets written out, so that
// mutations reach every nested key.
std::vector<json> scenario_documents() {
    std::vector<json> docs;
    for (const auto& entry : std::filesystem::directory_iterator(data_dir() / "scenarios")) {
        json doc = load_json_file(entry.path(), "");
        docs.push_back(doc);
        if (doc["model"].is_string())
            doc["model"] = load_json_file(data_dir() / "models" / (doc["model"].get<std::string>() + ".json"), "/model");
        json cluster = load_json_file(data_dir() / "topologies" / (doc["cluster"]["preset"].get<std::string>() + ".json"), "/cluster");
        cluster["gpus"] = doc["cluster"]["gpus"];
        doc["cluster"] = cluster;
        docs.push_back(doc);
    }
    return docs;
}

// A JSON pointer to every value in `doc` but the root.
void collect_pointers(const json& value, const json::json_pointer& at, std::vector<json::json_pointer>& out) {
    if (!at.empty()) out.push_back(at);
    if (value.is_object())
        for (auto it = value.begin(); it != value.end(); ++it) collect_pointers(it.value(), at / it.key(), out);
    else if (value.is_array())
        for (std::size_t i = 0; i < value.size(); ++i) collect_pointers(value[i], at / i, out);
}

json mutated(json doc, std::mt19937_64& rng) {
    static const std::vector<json> odd = {nullptr, -1, 0, 1, 3, 7, 0.5, 1e-300, 1e30, -1e30,
                                          4611686018427387904LL, "x", "", json::array(), json::object(), true};
    const int changes = 1 + static_cast<int>(rng() % 3);
    for (int c = 0; c < changes; ++c) {
        std::vector<json::json_pointer> pointers;
        collect_pointers(doc, json::json_pointer(), pointers);
        if (pointers.empty()) break;
        const json::json_pointer& at = pointers[rng() % pointers.size()];
        if (rng() % 6 == 0) {
            json& parent = doc[at.parent_pointer()];
            if (parent.is_object()) parent.erase(at.back());
        } else {
            doc[at] = odd[rng() % odd.size()];
        }
    }
    return doc;
}
}  // namespace

TEST_CASE("mutated scenarios are input errors or finite answers, never a crash") {
    const std::vector<json> docs = scenario_documents();
    REQUIRE(docs.size() >= 12);
    std::mt19937_64 rng(20261125);
    int parsed = 0, refused = 0;
    for (int i = 0; i < 1000; ++i) {
        const json doc = mutated(docs[rng() % docs.size()], rng);
        CAPTURE(doc.dump());
        try {
            const Scenario s = parse_scenario(doc, data_dir());
            const Layout l = resolve_layout(s, s.layout);
            CHECK(std::isfinite(estimate_memory(s, l).peak.value()));
            const StepContext ctx(s);
            const double step = simulate(ctx, l).result.step_time_s;
            CHECK(std::isfinite(step));
            CHECK(step > 0);
            ++parsed;
        } catch (const InputError& e) {
            CHECK_FALSE(e.path().empty());
            ++refused;
        }
    }
    // Both outcomes must occur, or the mutations are not exercising the parser.
    CHECK(parsed > 20);
    CHECK(refused > 100);
}
