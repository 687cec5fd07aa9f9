#pragma once
// The planner's evaluator backed by Sextant's own cost models: the closed-form estimate screens,
// the discrete-event simulator ranks.
#include <memory>

#include "planner/evaluator.hpp"
#include "spec/scenario.hpp"

namespace sextant {

std::unique_ptr<Evaluator> make_step_evaluator(const Scenario& scenario);

}  // namespace sextant
