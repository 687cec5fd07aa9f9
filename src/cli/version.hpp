#pragma once
// `sextant --version`: the release and the git revision the binary was built from.
#include <string>

namespace sextant::cli {

// `git describe --always --dirty` of the source tree at build time; "" outside a git checkout.
// Defined in the file cmake/revision.cmake generates.
const char* git_revision();

// "sextant 0.1.0 (git 0123456789ab)" or "sextant 0.1.0 (git revision unknown: ...)".
std::string version_text();

}  // namespace sextant::cli
