#include "core/input_file.hpp"

#include <fstream>
#include <iterator>

#include "core/error.hpp"
#include "core/work_limits.hpp"

namespace sextant {

std::string read_input_file(const std::filesystem::path& file, const std::string& path) {
    const std::string shown = "\"" + file.string() + "\"";
    std::error_code ec;
    const auto status = std::filesystem::status(file, ec);
    if (ec || !std::filesystem::exists(status)) throw InputError(path, shown, "file not found or not readable");
    if (!std::filesystem::is_regular_file(status))
        throw InputError(path, shown, "is not a regular file (a directory, device or pipe)");
    const auto size = std::filesystem::file_size(file, ec);
    if (ec) throw InputError(path, shown, "file not readable: " + ec.message());
    check_work(Work::InputBytes, static_cast<double>(size), path, shown);
    std::ifstream in(file, std::ios::binary);
    if (!in) throw InputError(path, shown, "file not found or not readable");
    std::string text(static_cast<std::size_t>(size), '\0');
    in.read(text.data(), static_cast<std::streamsize>(size));
    if (in.bad()) throw InputError(path, shown, "file not readable");
    text.resize(static_cast<std::size_t>(in.gcount()));  // a file that shrank while being read
    return text;
}

}  // namespace sextant
