#pragma once
// `--accuracy` (simulate, plan): how the model did on the published runs like a scenario
// (validate/accuracy_context.hpp), as an Output block: the nearest runs, their summary, and where
// the scenario reaches beyond them.
#include "report/output.hpp"
#include "spec/scenario.hpp"
#include "validate/accuracy_context.hpp"

namespace sextant {

// JSON under /accuracy; text: a table of the nearest runs and notes under it.
void add_accuracy(Output& out, const Scenario& s, const AccuracyContext& c);

}  // namespace sextant
