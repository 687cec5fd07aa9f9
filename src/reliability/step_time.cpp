#include "reliability/step_time.hpp"

#include <fmt/format.h>

#include "model/params.hpp"

namespace sextant::reliability {

StepTime step_time(const Scenario& s, const ReliabilitySpec& spec) {
    if (spec.step_time_s) return {*spec.step_time_s, "scenario /reliability/step_time_s"};
    const double active = count_params(s.model).active(s.model);
    const double flops = 6.0 * active * s.training.tokens_per_step();
    const double peak = s.cluster.gpu.peak_tflops(s.training.precision) * 1e12;
    const double seconds = flops / (static_cast<double>(s.cluster.gpus) * peak * spec.assumed_mfu);
    return {seconds, fmt::format("closed form 6 N tokens / (gpus x peak x MFU) at assumed MFU {:.2f}",
                                 spec.assumed_mfu)};
}

}  // namespace sextant::reliability
