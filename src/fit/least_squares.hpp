#pragma once
// Fitting a few named factors of a model to measurements by least squares on relative errors,
// with a leave-one-out error and a refusal to fit more factors than the data supports.
#include <functional>
#include <string>
#include <vector>

namespace sextant {

struct FitProblem {
    std::vector<std::string> factor_names;
    std::vector<double> initial;   // starting values (1.0 = the profile as shipped)
    std::vector<double> lower, upper;
    std::size_t observations = 0;
    std::vector<double> measured;  // one per observation, > 0
    // Predicted value of observation i with the given factors.
    std::function<double(const std::vector<double>& factors, std::size_t i)> predict;
};

struct FitResult {
    std::vector<double> factors;
    double rms_error_before_pct = 0;  // relative RMS error with `initial`
    double rms_error_after_pct = 0;
    double leave_one_out_pct = 0;     // RMS relative error of each point predicted without it
    std::size_t iterations = 0;
};

// Throws InputError when the problem is underdetermined: fewer than factors + 1 observations (no
// leave-one-out fit would be determined), or a factor that no observation is sensitive to (the
// Jacobian loses rank).
FitResult fit_least_squares(const FitProblem& problem);

}  // namespace sextant
