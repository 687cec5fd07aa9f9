#include "cli/command_words.hpp"

#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/suggest.hpp"

namespace sextant::cli {

void check_command_words(const CLI::App& app, int argc, const char* const* argv) {
    const CLI::App* level = &app;
    std::string path = "sextant";
    // Only the words right after a command that requires a subcommand are command words: after
    // the first option, a word may be an option's value.
    for (int i = 1; i < argc && level->get_require_subcommand_min() > 0; ++i) {
        const std::string word = argv[i];
        if (word.empty() || word[0] == '-') return;
        std::vector<std::string> names;
        const CLI::App* next = nullptr;
        for (const CLI::App* sub : level->get_subcommands([](const CLI::App*) { return true; })) {
            names.push_back(sub->get_name());
            if (sub->get_name() == word) next = sub;
        }
        if (!next) {
            std::string rule = "unknown command; the commands of " + path + " are ";
            for (std::size_t k = 0; k < names.size(); ++k) rule += (k ? ", " : "") + names[k];
            if (!closest_names(word, names).empty()) rule += "; " + suggestion_text(word, names);
            throw InputError(path, "\"" + word + "\"", rule);
        }
        path += " " + word;
        level = next;
    }
}

}  // namespace sextant::cli
