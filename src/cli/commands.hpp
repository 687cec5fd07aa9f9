#pragma once
// Each subcommand lives in its own file and adds itself to the app here. A command's callback
// throws InputError for bad input; main() maps it to exit code 2.
#include <CLI/CLI.hpp>

namespace sextant::cli {

void add_info_commands(CLI::App& app);      // schema, presets, check
void add_memory_command(CLI::App& app);
void add_collective_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_simulate_command(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);  // calibrate fit, and the two below
void add_calibrate_import_command(CLI::App& calibrate);  // calibrate import-nccl-tests
void add_calibrate_show_command(CLI::App& calibrate);    // calibrate show
void add_whatif_command(CLI::App& app);     // whatif checkpoint|spares|async|storage|failure-rate
void add_report_command(CLI::App& app);     // one HTML page of every chart

}  // namespace sextant::cli
