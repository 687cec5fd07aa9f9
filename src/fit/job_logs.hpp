#pragma once
// Step times from the logs that training jobs print, so users can fit to what they have:
// Megatron-LM's "elapsed time per iteration (ms): X" and torchtitan's "tps: N" (tokens per second
// per GPU).
#include <string>
#include <vector>

namespace sextant {

enum class LogFormat { Megatron, Torchtitan };

// Every step time found, in seconds, in log order. For torchtitan, the step time follows from
// tps and the tokens one step trains: global_tokens / (tps x gpus).
std::vector<double> parse_step_times(const std::string& text, LogFormat format, double global_tokens = 0,
                                     double gpus = 0);

// The median of the steps after warm-up: the first `warmup` steps (compilation, allocator growth,
// NCCL setup) are dropped.
double steady_step_time(const std::vector<double>& steps, const std::string& log, std::size_t warmup = 3);

}  // namespace sextant
