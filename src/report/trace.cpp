#include "report/trace.hpp"

#include <map>
#include <nlohmann/json.hpp>

namespace sextant {

std::string chrome_trace(const Simulation& sim, const std::string& title) {
    using nlohmann::json;
    const Engine& e = sim.engine;
    json events = json::array();
    std::map<std::uint32_t, bool> named;
    for (std::size_t s = 0; s < e.streams().size(); ++s) {
        const StreamInfo& info = e.streams()[s];
        if (!named[info.group]) {
            named[info.group] = true;
            events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", info.group}, {"tid", 0},
                              {"args", {{"name", info.name == "step" ? std::string("step") : "stage " + std::to_string(info.group)}}}});
        }
        events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", info.group}, {"tid", s}, {"args", {{"name", info.name}}}});
    }
    for (const TaskRecord& t : e.tasks()) {
        if (t.duration == 0) continue;
        events.push_back({{"ph", "X"}, {"name", sim.labels[t.label]}, {"pid", e.streams()[t.stream].group}, {"tid", t.stream},
                          {"ts", static_cast<double>(t.start) / 1000.0}, {"dur", static_cast<double>(t.duration) / 1000.0}});
    }
    json doc = {{"traceEvents", events}, {"displayTimeUnit", "ms"}, {"otherData", {{"scenario", title}}}};
    return doc.dump();
}

}  // namespace sextant
