#pragma once
// A fixed, portable random source: xoshiro256** seeded through splitmix64, and distributions
// written out here. std:: distributions differ between standard libraries, so a seed would not
// reproduce a run across compilers; these do (given the same libm log/pow).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sextant::reliability {

// splitmix64 (Steele, Lea, Flood 2014): spreads any 64-bit seed over the state of xoshiro.
constexpr std::uint64_t splitmix64(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// xoshiro256** (Blackman and Vigna 2018).
class Rng {
public:
    explicit Rng(std::uint64_t seed) {
        for (auto& word : s_) word = splitmix64(seed);
    }

    std::uint64_t next() {
        const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }

    // Uniform on (0, 1]: the top 53 bits, shifted off zero so that log() is always finite.
    double uniform_open0() { return (static_cast<double>(next() >> 11) + 1.0) * 0x1.0p-53; }

    // Exponential with the given mean, by inversion.
    double exponential(double mean) { return exponential_of(mean, std::log(uniform_open0())); }

    // Weibull with shape k and scale, by inversion: scale * (-ln U)^(1/k).
    double weibull(double shape, double scale) { return weibull_of(shape, scale, std::log(uniform_open0())); }

    // The inversions, from ln U.
    static double exponential_of(double mean, double log_u) { return -mean * log_u; }
    static double weibull_of(double shape, double scale, double log_u) { return scale * std::pow(-log_u, 1.0 / shape); }

private:
    static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    std::uint64_t s_[4]{};
};

// The logarithms of one seed's uniforms, ln U_0, ln U_1, ..., made in blocks as far as a reader
// has asked and kept until the next seed. Several runs of the same trial (the points of a sweep
// share the trial's random numbers) read the same logarithms, each computed once for all of
// them; a block's logarithms do not wait on each other, and a reader finds its next one ready
// instead of waiting for `log` on its chain of dependent steps. Readers read in order, one after
// another. The last kKept are kept (a trial of the Llama 3 405B study reads a few thousand), in a
// ring, so memory stays bounded however long a trial runs; a reader that starts after the ring
// has gone round starts the stream over from its seed.
class LogUniforms {
public:
    static constexpr std::size_t kKept = std::size_t{1} << 16;  // 512 KiB

    void reset(std::uint64_t seed) {
        seed_ = seed;
        rng_ = Rng(seed);
        made_ = kept_from_ = 0;
    }
    // ln U_i, for i = 0 or the index after the last one asked.
    double operator[](std::size_t i) {
        if (i - kept_from_ >= made_ - kept_from_) make_through(i);  // past the end, or before what is kept
        return values_[i % kKept];
    }

private:
    static constexpr std::size_t kBlock = 256;
    static_assert(kKept % kBlock == 0, "blocks fill the ring exactly");
    // Through the end of i's block. Out of line: it runs once a block, and inlined at every draw
    // it would crowd the trial's event loop.
    [[gnu::noinline]] void make_through(std::size_t i) {
        if (i < kept_from_) reset(seed_);  // a new reader, and the ring has gone round
        const std::size_t end = (i / kBlock + 1) * kBlock;
        if (values_.size() < std::min(end, kKept)) values_.resize(std::min(end, kKept));
        for (; made_ < end; ++made_) values_[made_ % kKept] = std::log(rng_.uniform_open0());
        kept_from_ = end > kKept ? end - kKept : 0;
    }
    std::uint64_t seed_ = 0;
    Rng rng_{0};  // at uniform made_
    std::vector<double> values_;
    std::size_t made_ = 0;
    std::size_t kept_from_ = 0;  // the first index still in the ring
};

// One run's reader of a LogUniforms, from its start: Rng's draws of the same seed, to the bit
// (the same inversions of the same ln U, in the same order).
class Draws {
public:
    explicit Draws(LogUniforms& stream) : stream_(stream) {}
    double exponential(double mean) { return Rng::exponential_of(mean, stream_[next_++]); }
    double weibull(double shape, double scale) { return Rng::weibull_of(shape, scale, stream_[next_++]); }

private:
    LogUniforms& stream_;
    std::size_t next_ = 0;
};

// The seed of trial `trial` of a study seeded with `seed`: each trial has its own stream, so a
// trial's draws do not depend on how many draws earlier trials made (common random numbers
// across the points of a sweep).
constexpr std::uint64_t trial_seed(std::uint64_t seed, std::uint64_t trial) {
    std::uint64_t state = seed ^ (trial * 0xD1B54A32D192ED03ull);
    splitmix64(state);
    return splitmix64(state);
}

}  // namespace sextant::reliability
