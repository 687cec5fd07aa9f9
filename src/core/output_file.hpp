#pragma once
// Every file Sextant writes (traces, profiles, reports, exports, CSV, SVG) goes through here, so
// that a reader never sees half a file: the text is written to a temporary name beside the target
// and renamed over it only once it is whole. A failure is the user's input error (a path that
// cannot be written, a full disk), naming the flag and the path, and leaves no partial file.
#include <string>
#include <string_view>

namespace sextant {

// Writes `text` to `path` whole or not at all. `flag` names the option the path came from
// ("--trace"); the error says why the write failed.
void write_output_file(const std::string& path, std::string_view text, std::string_view flag);

// Files a person keeps (calibration profiles) are not replaced by accident: an existing `path`
// is an InputError at `flag` unless `force` (the command's --force). Call before the work.
void refuse_existing_unless_forced(const std::string& path, std::string_view flag, bool force);

}  // namespace sextant
