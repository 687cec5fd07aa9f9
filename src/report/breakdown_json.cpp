#include "report/breakdown_json.hpp"

namespace sextant {

nlohmann::json breakdown_json(const std::vector<std::pair<std::string, double>>& items) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [name, value] : items) out[name + "_s"] = value;
    return out;
}

}  // namespace sextant
