#pragma once
// x added k times to zero, one addition after another: the bits a loop of k additions gives (k x
// x rounds differently), so a sum of equal terms can skip its loop and change no bit of what
// the loop gave. The partial sums of the last few terms asked for are kept, each as far as it
// was asked; a per-thread helper of the hot paths (collective/group_shape.cpp link loads,
// memory/stage_params.cpp a stage's parameters), not shared between threads.
#include <array>
#include <cstddef>
#include <vector>

namespace sextant {

class RepeatedSum {
public:
    double operator()(double x, std::size_t k) {
        if (x == 1.0) return static_cast<double>(k);  // exact below 2^53 additions
        Table* table = nullptr;
        for (Table& t : tables_)
            if (t.used && t.x == x) table = &t;
        if (!table) {
            table = &tables_[next_];
            next_ = (next_ + 1) % kTables;
            *table = Table{true, x, {0.0}};
        }
        while (table->sums.size() <= k) table->sums.push_back(table->sums.back() + x);
        return table->sums[k];
    }

private:
    // A screen alternates between a few terms (a dense and a MoE layer's parameters, say).
    static constexpr std::size_t kTables = 4;
    struct Table {
        bool used = false;
        double x = 0;
        std::vector<double> sums;  // sums[k]: x added k times
    };
    std::array<Table, kTables> tables_{};
    std::size_t next_ = 0;
};

}  // namespace sextant
