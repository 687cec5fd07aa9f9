#!/usr/bin/env bash
# Regenerates the README's pictures (docs/*.png): one chart of each kind, cut out of the pages
# sextant writes and rendered by headless Chromium (Debian: apt-get install chromium). Run from
# anywhere after a build: bash docs/screenshots.sh [path/to/sextant]
set -euo pipefail
cd "$(dirname "$0")/.."
sextant=$(realpath "${1:-build/sextant}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$sextant" report scenarios/llama3-405b-h100.json -o "$tmp/report405.html" > /dev/null
"$sextant" plan scenarios/llama3-70b-h100.json --search-all --top 10 --html "$tmp/plan.html" > /dev/null
"$sextant" plan scenarios/llama3-70b-h100.json --search-all --gpus 256..2048 --html "$tmp/sweep.html" > /dev/null
"$sextant" whatif checkpoint scenarios/llama3-70b-h100.json --html "$tmp/goodput.html" > /dev/null
"$sextant" whatif spares scenarios/llama3-405b-h100.json --interval 10m --html "$tmp/spares.html" > /dev/null
"$sextant" collective --cluster dgx-h100-superpod --ranks 64 --span pod --min 1K --max 4G --html "$tmp/collective.html" > /dev/null

# shoot PAGE SVG_ID PNG: the chart alone, at its own size.
shoot() {
  local svg="$tmp/$2.svg"
  awk -v id="id=\"$2\"" 'index($0, "<svg xmlns") == 1 && index($0, id) { on = 1 } on { print } on && /<\/svg>/ { exit }' "$tmp/$1" > "$svg"
  local w h
  w=$(sed -n '1s/.* width="\([0-9.]*\)".*/\1/p' "$svg" | cut -d. -f1)
  h=$(sed -n '1s/.* height="\([0-9.]*\)".*/\1/p' "$svg" | cut -d. -f1)
  { echo '<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0} svg{display:block}</style></head><body>'
    cat "$svg"; echo '</body></html>'; } > "$tmp/$2.html"
  local profile
  profile=$(mktemp -d)
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$profile" --hide-scrollbars \
    --window-size="$w,$h" --screenshot="docs/$3" "file://$tmp/$2.html" > /dev/null 2>&1
  rm -rf "$profile"
  echo "docs/$3 (${w}x${h})"
}
shoot report405.html memory-chart memory.png
shoot report405.html breakdown-chart breakdown.png
shoot report405.html timeline-chart timeline.png
shoot plan.html candidates-chart planner.png
shoot sweep.html sweep-chart gpu-sweep.png
shoot goodput.html goodput-chart goodput.png
shoot spares.html goodput-sweep-chart goodput-spares.png
shoot collective.html busbw-chart-0 busbw.png
