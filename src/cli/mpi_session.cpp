#include "cli/mpi_session.hpp"

#include <cstdlib>
#include <type_traits>

#ifdef SEXTANT_HAVE_MPI
#include <mpi.h>
#endif

namespace sextant::cli {

namespace {
bool launched_by_mpi() {
    for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_STEP_NUM_TASKS"})
        if (std::getenv(var)) return true;
    return false;
}
}  // namespace

static_assert(std::is_trivially_copyable_v<ScreenedCandidate>, "gathered as raw bytes");

MpiSession::MpiSession() {
#ifdef SEXTANT_HAVE_MPI
    if (!launched_by_mpi()) return;
    MPI_Init(nullptr, nullptr);
    initialized_ = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
#else
    (void)launched_by_mpi;
    (void)initialized_;
#endif
}

MpiSession::~MpiSession() {
#ifdef SEXTANT_HAVE_MPI
    if (initialized_) MPI_Finalize();
#endif
}

std::vector<ScreenedCandidate> MpiSession::gather_to_root(const std::vector<ScreenedCandidate>& mine) const {
    if (size_ == 1) return mine;
    std::vector<ScreenedCandidate> all;
#ifdef SEXTANT_HAVE_MPI
    const int bytes = static_cast<int>(mine.size() * sizeof(ScreenedCandidate));
    std::vector<int> counts(static_cast<std::size_t>(size_)), offsets(static_cast<std::size_t>(size_));
    MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; r < size_; ++r) {
        offsets[static_cast<std::size_t>(r)] = total;
        total += counts[static_cast<std::size_t>(r)];
    }
    if (rank_ == 0) all.resize(static_cast<std::size_t>(total) / sizeof(ScreenedCandidate));
    MPI_Gatherv(mine.data(), bytes, MPI_BYTE, all.data(), counts.data(), offsets.data(), MPI_BYTE, 0,
                MPI_COMM_WORLD);
#endif
    return all;
}

}  // namespace sextant::cli
