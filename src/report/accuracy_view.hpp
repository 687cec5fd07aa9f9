#pragma once
// `--accuracy` (simulate, plan) and the report's section: how the model did on the published runs
// like a scenario (validate/accuracy_context.hpp): the nearest runs, their summary, and where the
// scenario reaches beyond them.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/output.hpp"
#include "validate/accuracy_context.hpp"

namespace sextant {

// The runs' table heading: "published GB200 MoE runs, nearest first".
std::string accuracy_heading(const AccuracyContext& c);
// The sentences under the runs: their summary (saying how many of them `listed` leaves out), then
// each way the scenario reaches beyond them.
std::vector<std::string> accuracy_notes(const AccuracyContext& c, std::size_t listed);
// JSON under /accuracy; text: a table of the nearest runs and the notes under it.
void add_accuracy(Output& out, const AccuracyContext& c);
// The same JSON object on its own (the report's "accuracy").
nlohmann::json accuracy_json(const AccuracyContext& c);

}  // namespace sextant
