#pragma once
// A step's breakdown as JSON: "<cause>_s" seconds, the keys `simulate --json` and
// `validate --json` share.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace sextant {

// `items` as Breakdown::items() and PlanScore::breakdown list them: (cause, seconds).
nlohmann::json breakdown_json(const std::vector<std::pair<std::string, double>>& items);

}  // namespace sextant
