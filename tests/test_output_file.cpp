#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "core/error.hpp"
#include "core/output_file.hpp"

using namespace sextant;
namespace fs = std::filesystem;

namespace {

std::string read_all(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

fs::path fresh_dir(const char* name) {
    const fs::path dir = fs::temp_directory_path() / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

}  // namespace

TEST_CASE("an output file is replaced whole and leaves no temporary beside it") {
    const fs::path dir = fresh_dir("sextant-output-file");
    const fs::path target = dir / "out.txt";
    write_output_file(target.string(), "first version, longer than the second\n", "--out");
    write_output_file(target.string(), "second\n", "--out");
    CHECK(read_all(target) == "second\n");
    CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
}

TEST_CASE("a write that fails is an input error naming the flag and the path, and keeps the old file") {
    const fs::path dir = fresh_dir("sextant-output-file-fail");
    CHECK_THROWS_WITH_AS(write_output_file(dir.string(), "x", "--trace"), doctest::Contains("--trace"), InputError);
    CHECK_THROWS_WITH_AS(write_output_file((dir / "missing" / "x.json").string(), "x", "--out"),
                         doctest::Contains("cannot be written"), InputError);
    if (fs::exists("/dev/full"))  // a full disk: every byte is refused
        CHECK_THROWS_WITH_AS(write_output_file("/dev/full", "x", "--csv"), doctest::Contains("No space left"), InputError);
    const fs::path target = dir / "keep.txt";
    write_output_file(target.string(), "kept\n", "--out");
    fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
    const bool root_ignores_permissions = ::access(dir.c_str(), W_OK) == 0;
    if (!root_ignores_permissions) CHECK_THROWS_AS(write_output_file(target.string(), "new\n", "--out"), InputError);
    fs::permissions(dir, fs::perms::owner_all);
    if (!root_ignores_permissions) CHECK(read_all(target) == "kept\n");
}
