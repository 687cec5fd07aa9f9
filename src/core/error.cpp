#include "core/error.hpp"

namespace sextant {

namespace {
std::string render(const std::string& path, const std::string& value, const std::string& rule) {
    std::string where = path.empty() ? std::string("(document)") : path;
    if (value.empty()) return where + ": " + rule;
    return where + " = " + value + ": " + rule;
}
}  // namespace

InputError::InputError(std::string path, std::string value, std::string rule)
    : std::runtime_error(render(path, value, rule)),
      path_(std::move(path)),
      value_(std::move(value)),
      rule_(std::move(rule)) {}

}  // namespace sextant
