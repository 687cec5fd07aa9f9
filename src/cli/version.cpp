#include "cli/version.hpp"

namespace sextant::cli {

std::string version_text() {
    const std::string revision = git_revision();
    return std::string("sextant ") + SEXTANT_VERSION +
           (revision.empty() ? " (git revision unknown: not built from a git checkout)" : " (git " + revision + ")");
}

}  // namespace sextant::cli
