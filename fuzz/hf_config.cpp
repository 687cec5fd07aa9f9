// A Hugging Face config.json read as a model: src/spec/hf_config.cpp.
#include "fuzz_input.hpp"
#include "spec/model_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return sextant::fuzz::read_input([&] { (void)sextant::parse_hf_config(sextant::fuzz::json_of(data, size), "/model"); });
}
