// Megatron-LM and torchtitan training logs (calibrate fit --job): src/fit/job_logs.cpp.
#include "fit/job_logs.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(sextant::fuzz::text_of(data, size));
    for (const auto format : {sextant::LogFormat::Megatron, sextant::LogFormat::Torchtitan})
        sextant::fuzz::read_input([&] {
            const auto steps = sextant::parse_step_times(text, format, 1048576.0, 8.0);
            (void)sextant::steady_step_time(steps, "fuzz.log");
        });
    return 0;
}
