#pragma once
// Every file Sextant reads (scenarios and their parts, profiles, published runs, training and
// nccl-tests logs) is read whole through here: a regular file no larger than the input limit of
// core/work_limits.hpp, so that "/dev/zero", a FIFO or a directory is an input error, not a read
// that never ends.
#include <filesystem>
#include <string>

namespace sextant {

// The file's bytes; an InputError at `path` (a JSON pointer or a flag) naming the file when it
// is missing, not a regular file, unreadable or over the limit.
std::string read_input_file(const std::filesystem::path& file, const std::string& path);

}  // namespace sextant
