#!/usr/bin/env bash
# Times the refusal of each input of issue 20 that used to run for minutes or die of memory:
# bench/bounded_work.sh [build/sextant]. Each must exit 2 in well under a second, naming its
# limit; the README's Benchmarks table quotes the slowest. Not a test (timings are not tested).
set -uo pipefail
cd "$(dirname "$0")/.."
sextant=${1:-build/sextant}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo '[1e400]' > "$tmp/overflow.json"
head -c 100000 /dev/zero | tr '\0' '[' > "$tmp/deep.json"
scenario() {  # NAME JSON-PATCH: the Llama 3 8B scenario with the patch merged over it
  python3 - "$tmp/$1.json" "$2" <<'PY'
import json, sys
doc = json.load(open("scenarios/llama3-8b-h100.json"))
def merge(a, b):
    for k, v in b.items():
        if isinstance(v, dict) and isinstance(a.get(k), dict): merge(a[k], v)
        else: a[k] = v
merge(doc, json.loads(sys.argv[2]))
json.dump(doc, open(sys.argv[1], "w"))
PY
}
scenario huge '{"cluster": {"gpus": 16777216}, "layout": {"tp": 8, "pp": 1, "dp": 2097152, "cp": 1}, "training": {"global_batch": 2097152}}'
scenario many '{"cluster": {"gpus": 8}, "layout": {"tp": 8, "pp": 1, "dp": 1, "cp": 1}, "training": {"global_batch": 65536}}'
scenario zero '{"model": "/dev/zero"}'
s8=scenarios/llama3-8b-h100.json
s405=scenarios/llama3-405b-h100.json
while IFS= read -r args; do
  start=$(date +%s.%N)
  out=$(eval "$sextant $args" 2>&1 >/dev/null)
  code=$?
  end=$(date +%s.%N)
  printf '%6.3f s  exit %d  sextant %s\n        %s\n' "$(echo "$end - $start" | bc)" "$code" "$args" "${out:0:160}"
done <<EOF2
check $tmp/overflow.json
check $tmp/deep.json
check $tmp/zero.json
plan $s8 --gpus 1..9223372036854775807
plan $s8 --global-batch 4611686018427387905..9223372036854775807
plan $s8 --gpus 8..16777216 --global-batch 1..1073741824
collective --max inf
collective --min nan
collective --ranks 16777216
simulate $tmp/huge.json
plan $tmp/huge.json
simulate $tmp/many.json --trace $tmp/many.trace.json
whatif checkpoint $s405 --trials 100000000
whatif checkpoint $s405 --days 3650
EOF2
