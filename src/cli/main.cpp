#include <cstdio>
#include <exception>
#include <iostream>
#include <string_view>

#include "cli/command_words.hpp"
#include "cli/commands.hpp"
#include "cli/version.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"
#include "core/work_limits.hpp"

namespace {

double g_work_limit = 1.0;

// Every command that runs takes --work-limit (core/work_limits.hpp); commands with subcommands
// pass it on to them.
void add_work_limit_flag(CLI::App& app) {
    const auto subcommands = app.get_subcommands([](CLI::App*) { return true; });
    for (CLI::App* sub : subcommands) add_work_limit_flag(*sub);
    if (subcommands.empty() && app.get_parent())
        app.add_option(std::string(sextant::kWorkLimitFlag), g_work_limit,
                       "multiply every work limit (simulated GPUs and tasks, trace bytes, Monte Carlo events, sweep points) by X")
            ->check(CLI::Validator(
                [](std::string& text) -> std::string {
                    try {
                        std::size_t used = 0;
                        const double v = std::stod(text, &used);
                        if (used == text.size() && v >= 1 && v <= 1e6) {
                            sextant::set_work_limit_factor(v);  // before the command's callback runs
                            return "";
                        }
                    } catch (const std::exception&) {
                    }
                    return "\"" + text + "\": must be a factor from 1 to 1e6";
                },
                "X", ""));
}

// Output that could not be written (a full disk, a closed pipe, /dev/full) is the user's
// destination failing: exit 2, never a silent exit 0.
int finish_stdout() {
    std::cout.flush();
    if (std::cout.good() && std::fflush(stdout) == 0 && !std::ferror(stdout)) return 0;
    std::cerr << "error: standard output: cannot be written (a full disk or a closed pipe)\n";
    return 2;
}

}  // namespace

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
    add_work_limit_flag(app);
    sextant::install_interrupt_handler();
    // One JSON document on stdout: nothing else on the terminal either.
    for (int i = 1; i < argc; ++i)
        if (std::string_view(argv[i]) == "--json") sextant::set_progress_quiet(true);
    try {
        sextant::cli::check_command_words(app, argc, argv);
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int code = app.exit(e);
        return code == 0 ? 0 : 2;
    } catch (const sextant::Interrupted&) {
        std::cerr << "\ninterrupted: stopped before writing any file\n";
        return 130;
    } catch (const sextant::InputError& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "internal error: " << e.what() << "\n";
        return 1;
    }
    return finish_stdout();
}
