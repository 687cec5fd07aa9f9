#include "sim/simulate.hpp"

namespace sextant {

std::vector<ScheduledTask> stage_schedule(const Layout& l, std::int64_t stage, std::int64_t m) {
    std::vector<ScheduledTask> order;
    const std::int64_t pp = l.pp, vp = l.vp;
    if (l.schedule == Schedule::GPipe) {
        for (std::int64_t i = 0; i < m; ++i) order.push_back({true, i, 0});
        for (std::int64_t i = 0; i < m; ++i) order.push_back({false, i, 0});
        return order;
    }
    // Megatron's 1F1B and interleaved 1F1B: virtual microbatch k runs chunk (k mod pp*vp) / pp of
    // microbatch (k / (pp*vp)) * pp + k mod pp; backward walks the chunks in reverse. Warm-up
    // forwards fill the pipeline, then forward and backward alternate, then the backlog drains.
    const std::int64_t total = m * vp;
    const std::int64_t group = pp * vp;
    const std::int64_t warmup = std::min(total, vp == 1 ? pp - stage - 1 : 2 * (pp - stage - 1) + (vp - 1) * pp);
    auto virtual_task = [&](std::int64_t k, bool forward) {
        const std::int64_t in_group = k % group;
        const std::int64_t chunk = forward ? in_group / pp : vp - 1 - in_group / pp;
        const std::int64_t microbatch = (k / group) * pp + k % pp;
        return ScheduledTask{forward, vp == 1 ? k : microbatch, vp == 1 ? 0 : chunk};
    };
    for (std::int64_t k = 0; k < warmup; ++k) order.push_back(virtual_task(k, true));
    for (std::int64_t i = 0; i < total - warmup; ++i) {
        order.push_back(virtual_task(warmup + i, true));
        order.push_back(virtual_task(i, false));
    }
    for (std::int64_t i = total - warmup; i < total; ++i) order.push_back(virtual_task(i, false));
    return order;
}

}  // namespace sextant
