#include <cstdio>
#include <exception>
#include <iostream>

#include "cli/command_words.hpp"
#include "cli/commands.hpp"
#include "cli/version.hpp"
#include "core/error.hpp"

int main(int argc, char** argv) {
    CLI::App app{"Sextant: simulator and planner for cluster-scale LLM training"};
    app.require_subcommand(1);
    app.set_help_all_flag("--help-all", "help for every command");
    app.set_version_flag("--version", sextant::cli::version_text(), "print the release and git revision, and exit");
    sextant::cli::add_info_commands(app);
    sextant::cli::add_memory_command(app);
    sextant::cli::add_collective_command(app);
    sextant::cli::add_simulate_command(app);
    sextant::cli::add_validate_command(app);
    sextant::cli::add_plan_command(app);
    sextant::cli::add_calibrate_command(app);
    sextant::cli::add_whatif_command(app);
    sextant::cli::add_report_command(app);
    try {
        sextant::cli::check_command_words(app, argc, argv);
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int code = app.exit(e);
        return code == 0 ? 0 : 2;
    } catch (const sextant::InputError& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "internal error: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
