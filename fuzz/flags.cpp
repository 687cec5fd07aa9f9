// Command-line values that are more than one number: plan --gpus/--global-batch sweeps,
// collective --min/--max sizes, whatif --interval durations and ranges, --values lists. The
// first byte picks the parser, the rest is the flag's text.
#include "core/flag_values.hpp"
#include "fuzz_input.hpp"
#include "reliability/duration_text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string text(sextant::fuzz::text_of(data + 1, size - 1));
    return sextant::fuzz::read_input([&] {
        switch (data[0] % 5) {
            case 0: (void)sextant::parse_count_sweep(text, "--gpus"); break;
            case 1: (void)sextant::parse_byte_size(text, "--max"); break;
            case 2: (void)sextant::reliability::parse_duration(text, "--interval"); break;
            case 3: (void)sextant::reliability::parse_duration_range(text, "--interval"); break;
            default: (void)sextant::reliability::parse_number_list(text, "--values", 0); break;
        }
    });
}
