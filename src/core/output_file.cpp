#include "core/output_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "core/error.hpp"
#include "core/progress.hpp"

namespace sextant {

namespace {

namespace fs = std::filesystem;

// A sibling name, so that the rename stays on one file system and is atomic.
fs::path temporary_beside(const fs::path& target) {
    std::random_device entropy;
    const auto tag = std::to_string(entropy());
    return target.parent_path() / (std::string(".") + target.filename().string() + ".tmp-" + tag);
}

[[noreturn]] void fail(std::string_view flag, const std::string& path, const std::string& why) {
    throw InputError(std::string(flag), "\"" + path + "\"", "cannot be written: " + why);
}

}  // namespace

void write_output_file(const std::string& path, std::string_view text, std::string_view flag) {
    throw_if_interrupted();  // Ctrl-C during work that does not check for it: write nothing
    const fs::path target(path);
    std::error_code ec;
    if (target.filename().empty() || fs::is_directory(target, ec)) fail(flag, path, "is a directory");
    // Devices (/dev/stdout, /dev/null, /dev/full) cannot be replaced by a rename: write them in
    // place, still checking every byte and the final flush.
    const bool special = fs::exists(target, ec) && !fs::is_regular_file(target, ec);
    const fs::path tmp = special ? target : temporary_beside(target);
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) fail(flag, path, std::strerror(errno));
    const std::size_t written = std::fwrite(text.data(), 1, text.size(), f);
    int err = written == text.size() ? 0 : errno;
    if (std::fflush(f) != 0 && err == 0) err = errno;
    if (std::fclose(f) != 0 && err == 0) err = errno;
    if (err != 0 || written != text.size()) {
        if (!special) fs::remove(tmp, ec);
        fail(flag, path, err ? std::strerror(err) : "short write");
    }
    if (special) return;
    fs::rename(tmp, target, ec);
    if (ec) {
        fs::remove(tmp, ec);
        fail(flag, path, ec.message());
    }
}

void refuse_existing_unless_forced(const std::string& path, std::string_view flag, bool force) {
    std::error_code ec;
    if (!force && fs::exists(path, ec)) throw InputError(std::string(flag), "\"" + path + "\"", "exists; pass --force to replace it");
}

}  // namespace sextant
