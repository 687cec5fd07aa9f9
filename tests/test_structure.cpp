// The structure the README promises: its map of src/ lists the folders in data-flow order, and a
// folder includes only folders listed above it (no cycles, dependencies pointing down).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {
const fs::path kSource = SEXTANT_SOURCE_DIR;

std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The folders of the README's "Map of `src/`" table, top to bottom.
std::vector<std::string> map_order() {
    const std::string readme = read(kSource / "README.md");
    const auto start = readme.find("## Map of `src/`");
    REQUIRE(start != std::string::npos);
    const auto end = readme.find("\n## ", start + 1);
    std::istringstream section(readme.substr(start, end - start));
    std::vector<std::string> order;
    const std::regex row(R"(^\| `([a-z_]+)/` \|)");
    std::smatch m;
    for (std::string line; std::getline(section, line);)
        if (std::regex_search(line, m, row)) order.push_back(m[1]);
    return order;
}
}  // namespace

TEST_CASE("the README's map of src/ lists every folder, and every include points to a folder above it") {
    const std::vector<std::string> order = map_order();
    std::set<std::string> folders;
    for (const auto& e : fs::directory_iterator(kSource / "src"))
        if (e.is_directory()) folders.insert(e.path().filename().string());
    CHECK(std::set<std::string>(order.begin(), order.end()) == folders);
    REQUIRE(order.size() == folders.size());

    const auto rank = [&](const std::string& folder) {
        return std::find(order.begin(), order.end(), folder) - order.begin();
    };
    const std::regex include(R"(#include "([a-z_]+)/)");
    std::size_t edges = 0;
    for (const auto& e : fs::recursive_directory_iterator(kSource / "src")) {
        const std::string ext = e.path().extension().string();
        if (ext != ".hpp" && ext != ".cpp" && ext != ".cu" && ext != ".cuh") continue;
        const std::string from = fs::relative(e.path(), kSource / "src").begin()->string();
        const std::string text = read(e.path());
        for (std::sregex_iterator it(text.begin(), text.end(), include), last; it != last; ++it) {
            const std::string to = (*it)[1];
            if (to == from) continue;
            ++edges;
            CAPTURE(e.path().string());
            CAPTURE(to);
            CHECK_MESSAGE(rank(to) < rank(from), from << "/ includes " << to << "/, which the map puts below it");
        }
    }
    CHECK(edges > 50);  // the scan saw the code
}

TEST_CASE("no test case's name holds a semicolon, which CTest would split into a name that runs nothing") {
    // doctest_discover_tests registers each case as `--test-case=NAME`; CMake splits lists at ';',
    // so a name with one reaches doctest cut short, matches no case and passes without running.
    const std::regex name(R"re(TEST_CASE\("([^"]*)"\))re");
    std::vector<std::string> offending;
    for (const auto& entry : fs::recursive_directory_iterator(kSource / "tests")) {
        if (entry.path().extension() != ".cpp") continue;
        const std::string text = read(entry.path());
        for (std::sregex_iterator it(text.begin(), text.end(), name), end; it != end; ++it)
            if ((*it)[1].str().find(';') != std::string::npos) offending.push_back(entry.path().filename().string() + ": " + (*it)[1].str());
    }
    INFO((offending.empty() ? std::string() : offending.front()));
    CHECK(offending.empty());
}
