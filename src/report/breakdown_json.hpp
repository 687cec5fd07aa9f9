#pragma once
// A step's breakdown as JSON: "<cause>_s" seconds, the keys `simulate --json` and
// `validate --json` share.
#include <nlohmann/json.hpp>

#include "sim/simulate.hpp"

namespace sextant {

nlohmann::json breakdown_json(const Breakdown& b);

}  // namespace sextant
