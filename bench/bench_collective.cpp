// Collective cost queries per second after the first query of a group shape (target: well under
// a microsecond per query).
#include <chrono>
#include <cstdio>

#include "collective/network_model.hpp"
#include "profile/profile.hpp"
#include "spec/presets.hpp"
#include "spec/scenario.hpp"

using namespace sextant;

int main() {
    json c = load_preset("topologies", "llama3-24k-roce", "/cluster");
    c["gpus"] = 16384;
    const ClusterSpec cluster = parse_cluster(c, "/cluster", load_gpu);
    const CalibrationProfile profile = CalibrationProfile::for_gpu(cluster.gpu);
    const NetworkModel model(cluster, profile.comm());
    GroupPlacement dp;
    for (std::int64_t i = 0; i < 128; ++i) dp.gpus.push_back(i * 128);
    for (std::int64_t i = 0; i < 128; ++i) dp.offsets.push_back(i);
    dp.concurrent_groups = 128;
    auto t0 = std::chrono::steady_clock::now();
    const GroupShape shape = model.analyse(dp);
    auto t1 = std::chrono::steady_clock::now();
    const int queries = 10'000'000;
    double sink = 0;
    for (int i = 0; i < queries; ++i)
        sink += model.cost(CollectiveOp::AllReduce, Bytes(1e6 + 64.0 * (i & 1023)), shape).time.value();
    auto t2 = std::chrono::steady_clock::now();
    const double first = std::chrono::duration<double>(t1 - t0).count();
    const double each = std::chrono::duration<double>(t2 - t1).count() / queries;
    std::printf("first query (route 128 DP groups of 128 ranks over 16,384 GPUs): %.1f ms\n", first * 1e3);
    std::printf("cached queries: %.0f ns each, %.1f million per second (checksum %.3g)\n", each * 1e9, 1e-6 / each, sink);
}
