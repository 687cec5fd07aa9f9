#include "report/breakdown_json.hpp"

namespace sextant {

nlohmann::json breakdown_json(const Breakdown& b) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [name, value] : b.items()) out[name + "_s"] = value;
    return out;
}

}  // namespace sextant
