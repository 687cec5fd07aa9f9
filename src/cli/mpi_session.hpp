#pragma once
// MPI for commands that split work across processes. Active only when the binary was built with
// MPI and launched by mpirun/srun; otherwise a single process of rank 0.
#include <vector>

#include "planner/planner.hpp"

namespace sextant::cli {

class MpiSession {
public:
    MpiSession();
    ~MpiSession();
    MpiSession(const MpiSession&) = delete;
    MpiSession& operator=(const MpiSession&) = delete;

    int rank() const { return rank_; }
    int size() const { return size_; }
    bool is_root() const { return rank_ == 0; }

    // Every process's list, concatenated on rank 0 (empty elsewhere).
    std::vector<ScreenedCandidate> gather_to_root(const std::vector<ScreenedCandidate>& mine) const;

private:
    int rank_ = 0;
    int size_ = 1;
    bool initialized_ = false;
};

}  // namespace sextant::cli
