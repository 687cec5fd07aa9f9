// `sextant memory SCENARIO [--json]` (implementation in progress; see src/memory/).
#include "cli/commands.hpp"

namespace sextant::cli {
void add_memory_command(CLI::App&) {}
}  // namespace sextant::cli
