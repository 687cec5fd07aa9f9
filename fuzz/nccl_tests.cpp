// nccl-tests output (calibrate import-nccl-tests): src/profile/nccl_tests_log.cpp, the log and
// the sweeps built from its runs.
#include "fuzz_input.hpp"
#include "profile/nccl_tests_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return sextant::fuzz::read_input([&] {
        const auto runs = sextant::parse_nccl_tests_log(sextant::fuzz::text_of(data, size), "fuzz.log");
        (void)sextant::nccl_tests_sweeps(runs, "fuzz.log", sextant::WrongResults::Drop, "", "");
    });
}
