#!/usr/bin/env bash
# `mpirun -np 2 sextant plan` must print the same plans as one process.
set -euo pipefail
sextant=$1 mpiexec=$2 scenario=$3
single=$("$sextant" plan "$scenario" --json --threads 1 --top 5 --simulate-top 10)
multi=$("$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$sextant" plan "$scenario" --json --threads 1 --top 5 --simulate-top 10)
python3 - "$single" "$multi" <<'PY'
import json, sys
a, b = (json.loads(x) for x in sys.argv[1:3])
assert a["candidates_screened"] == b["candidates_screened"], (a["candidates_screened"], b["candidates_screened"])
assert [p["layout"] for p in a["plans"]] == [p["layout"] for p in b["plans"]], "rankings differ"
assert [p["step_time_s"] for p in a["plans"]] == [p["step_time_s"] for p in b["plans"]], "times differ"
print(f"{len(a['plans'])} plans identical under mpirun -np 2")
PY
