#!/usr/bin/env bash
# One fuzz target for a bounded time: fuzz/run.sh BINARY SECONDS WORKDIR SEED_DIR...
# The corpus grows in WORKDIR/corpus (seeded from the repository's own files, the SEED_DIRs);
# a finding is written to WORKDIR/findings/ and fails the run. CI runs each target for
# SEXTANT_FUZZ_SECONDS (CMake cache, default 10); README "Fuzzing" gives the longer command.
set -euo pipefail
bin=$1 seconds=$2 work=$3
shift 3
mkdir -p "$work/corpus" "$work/findings"
# -timeout: an input that takes 10 s is a hang; -rss_limit_mb: 3 GiB is beyond any bounded input.
# -use_value_profile helps past comparisons against key names and numbers.
exec "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=3072 -use_value_profile=1 -print_final_stats=1 \
  -artifact_prefix="$work/findings/" "$work/corpus" "$@"
