#include "schedule/schedule.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "schedule/definitions.hpp"

namespace sextant {

namespace {
// In the order of the Schedule enum.
const std::vector<ScheduleDef>& registry() {
    static const std::vector<ScheduleDef> all = {make_gpipe(),          make_one_f_one_b(),   make_interleaved(),
                                                 make_zero_bubble_h1(), make_zero_bubble_v(), make_dualpipe(),
                                                 make_interleaved_zero_bubble(), make_dualpipe_v()};
    return all;
}
}  // namespace

void ScheduledTask::too_large() {
    throw InternalError("a scheduled task's microbatch or chunk is past its 32- or 16-bit field");
}

std::span<const ScheduleDef> schedules() { return registry(); }

const ScheduleDef& schedule_def(Schedule s) { return registry().at(static_cast<std::size_t>(s)); }

std::optional<Schedule> schedule_from_name(const std::string& name) {
    for (const ScheduleDef& d : registry())
        if (name == d.name) return d.id;
    return std::nullopt;
}

std::string schedule_name(Schedule s) { return schedule_def(s).name; }

std::string schedule_choices() {
    std::string out;
    for (const ScheduleDef& d : registry()) out += (out.empty() ? "" : "|") + std::string(d.name);
    return out;
}

bool schedule_takes_vp(const ScheduleDef& def, std::int64_t vp) {
    if (def.chunks == 0) return vp >= 2;
    return def.placement == Placement::V ? vp == 2 : vp == 1;
}

std::int64_t schedule_chunks(const ScheduleDef& def, std::int64_t vp) { return def.chunks == 0 ? vp : def.chunks; }

StageSum stage_sum(std::span<const StageTimes> stages) {
    StageSum s;
    for (std::size_t i = 0; i < stages.size(); ++i) {
        const double t = stages[i].forward + stages[i].backward;
        s.sum += t;
        if (t > s.max) {
            s.max = t;
            s.critical = i;
        }
    }
    return s;
}

bool next_hop(const ScheduleDef& def, const PipelineShape& shape, std::int64_t, std::int64_t stage, std::int64_t chunk, bool forward,
              std::int64_t& to_stage, std::int64_t& to_chunk) {
    const std::int64_t pp = shape.pp, chunks = schedule_chunks(def, shape.vp);
    switch (def.placement) {
        case Placement::Looped: {
            const std::int64_t v = chunk * pp + stage + (forward ? 1 : -1);
            if (v < 0 || v >= chunks * pp) return false;
            to_stage = v % pp;
            to_chunk = v / pp;
            return true;
        }
        case Placement::V: {
            const std::int64_t v = (chunk == 0 ? stage : 2 * pp - 1 - stage) + (forward ? 1 : -1);
            if (v < 0 || v >= 2 * pp) return false;
            to_stage = v < pp ? v : 2 * pp - 1 - v;
            to_chunk = v < pp ? 0 : 1;
            return true;
        }
        case Placement::Dual: {
            // Chunk 0 carries the microbatches fed at stage 0 downwards, chunk 1 those fed at the
            // last stage upwards.
            const bool down = (chunk == 0) == forward;
            const std::int64_t next = stage + (down ? 1 : -1);
            if (next < 0 || next >= pp) return false;
            to_stage = next;
            to_chunk = chunk;
            return true;
        }
    }
    return false;
}

std::int64_t chunk_visits(const ScheduleDef& def, const PipelineShape& shape, std::int64_t chunk) {
    if (def.placement != Placement::Dual) return shape.microbatches;
    const std::int64_t down = (shape.microbatches + 1) / 2;
    return chunk == 0 ? down : shape.microbatches - down;
}

std::int64_t chunk_model_stage(const ScheduleDef& def, std::int64_t pp, std::int64_t stage, std::int64_t chunk) {
    return def.placement == Placement::Dual && chunk == 1 ? pp - 1 - stage : stage;
}

bool chunk_has_embedding(const ScheduleDef& def, std::int64_t pp, std::int64_t stage, std::int64_t chunk, std::int64_t) {
    if (def.placement == Placement::Dual) return chunk_model_stage(def, pp, stage, chunk) == 0;
    return stage == 0 && chunk == 0;
}

bool chunk_has_output(const ScheduleDef& def, std::int64_t pp, std::int64_t stage, std::int64_t chunk, std::int64_t chunks) {
    switch (def.placement) {
        case Placement::Looped: return stage == pp - 1 && chunk == chunks - 1;
        case Placement::V: return stage == 0 && chunk == 1;
        case Placement::Dual: return chunk_model_stage(def, pp, stage, chunk) == pp - 1;
    }
    return false;
}

std::int64_t interleaved_warmup(const PipelineShape& shape, std::int64_t stage) {
    const std::int64_t pp = shape.pp, vp = shape.vp;
    if (vp == 1) return pp - stage - 1;
    const std::int64_t megatron = 2 * (pp - stage - 1) + (vp - 1) * pp;
    if (shape.warmup <= 0) return megatron;
    // Stage s's first backward needs microbatch 0 through all its chunks, (vp - 1) pp forwards
    // in, and the stages after it one step ahead: (vp - 1) pp + pp - s - 1.
    const std::int64_t least = (vp - 1) * pp + pp - stage - 1;
    return std::clamp(shape.warmup - 2 * stage, least, megatron);
}

}  // namespace sextant
