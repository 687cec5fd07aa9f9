// A published-runs/1 file (tests/validation/): the document, and each run's scenario keys as
// `sextant validate` reads them before it simulates (src/spec/scenario.cpp).
#include "fuzz_input.hpp"
#include "spec/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return sextant::fuzz::read_input([&] {
        const sextant::json doc = sextant::fuzz::json_of(data, size);
        if (!doc.is_object() || !doc.contains("runs") || !doc["runs"].is_array()) return;
        for (std::size_t i = 0; i < doc["runs"].size(); ++i) {
            try {
                (void)sextant::parse_scenario(doc["runs"][i], sextant::data_dir() / "tests" / "validation");
            } catch (const sextant::InputError&) {
                // each run is read on its own: one bad run does not stop the others
            }
        }
    });
}
