#pragma once
// Closed forms for the checkpoint interval (reference-data.md §15) and the expected run time of
// the simple model, which is the oracle the Monte Carlo is tested against.
namespace sextant::reliability {

// Young (1974): sqrt(2 delta M), first order in delta/M.
double young_interval(double stall_s, double mtbf_s);

// Daly (2006) eq. 37: sqrt(2 delta M) [1 + sqrt(delta/2M)/3 + (delta/2M)/9] - delta for
// delta < 2M, else M.
double daly_interval(double stall_s, double mtbf_s);

// Expected wall time to finish one segment of `length_s` (work plus its checkpoint stall) that
// is lost entirely when a Poisson failure (rate lambda) strikes before it ends; each failure
// costs a restart of `restart_s` during which failures also strike and start it over.
//
// Renewal argument: an attempt at a span L succeeds with probability e^{-lambda L}; the number
// of failed attempts is geometric with mean e^{lambda L} - 1, and a failed attempt lasts
// E[t | t < L] = 1/lambda - L / (e^{lambda L} - 1). So a failure-free restart R gives
//   E[segment] = L + (e^{lambda L} - 1)(E[t | t < L] + R) = (e^{lambda L} - 1)(1/lambda + R).
// A restart that failures interrupt is itself such a span with nothing else to pay: its
// expected duration is R' = (e^{lambda R} - 1)/lambda, and with R' for R:
//   E[segment] = (e^{lambda L} - 1) e^{lambda R} / lambda,
// which is Daly's T_w per segment, M e^{R/M} (e^{(tau+delta)/M} - 1).
double expected_segment_time(double length_s, double rate_per_s, double restart_s);

// The whole run of the simple model: `work_s` of training cut into segments of `interval_s`,
// each but the last followed by a blocking save of `stall_s`.
double expected_run_time(double work_s, double interval_s, double stall_s, double rate_per_s,
                         double restart_s);

}  // namespace sextant::reliability
