#pragma once
// Every table of settings of the scenario format and its data files, in document order: what
// `sextant schema` prints and the README documents.
#include <vector>

#include "spec/fields.hpp"

namespace sextant {

std::vector<FieldTable> all_field_tables();

}  // namespace sextant
