#pragma once
// The command words of a command line (`sextant whatif checkpoint ...`), checked before CLI11
// parses it: CLI11 reports an unknown word as "A subcommand is required" or "argument was not
// expected" without naming the commands there are.
#include <CLI/CLI.hpp>

namespace sextant::cli {

// Throws InputError naming the valid commands (and the closest ones) when a word where a command
// is required names none.
void check_command_words(const CLI::App& app, int argc, const char* const* argv);

}  // namespace sextant::cli
