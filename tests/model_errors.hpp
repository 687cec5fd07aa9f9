#pragma once
// The message of the input error a model object is refused with, for tests of the model rules.
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "spec/model_spec.hpp"

namespace sextant::test {

// What parse_model says of `model` at /model; empty where it accepts it.
inline std::string model_input_error(const json& model) {
    try {
        parse_model(model, "/model");
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

}  // namespace sextant::test
