#!/usr/bin/env bash
# The long campaign to run on every change to the core (CI runs 0..300 per scenario):
# 20,000 swarm seeds, 3000..23000, on the fixed core. Failures that match a known open
# finding (seeds/findings/) are listed, not counted; every failing seed is saved as a seed
# file. Prints one line and exits like `fuzz` (0: nothing new failed, 1: a new failure).
#
#   scripts/campaign.sh [SAVE_DIR]
#
# SAVE_DIR defaults to a fresh temporary directory. Environment: SCENARIO (default
# swarm), SEEDS (default 3000..23000), JOBS (default 2; the machine is shared),
# SIM (default target/release/ticdc-sim, built with `cargo build --release` if missing).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scenario=${SCENARIO:-swarm}
seeds=${SEEDS:-3000..23000}
jobs=${JOBS:-2}
sim=${SIM:-target/release/ticdc-sim}
save=${1:-$(mktemp -d "${TMPDIR:-/tmp}/campaign-$scenario.XXXXXX")}
mkdir -p "$save"

if [ ! -x "$sim" ]; then
    cargo build --release >&2
fi

log="$save/fuzz.log"
start=$(date +%s)
rc=0
"$sim" fuzz "$scenario" --seeds "$seeds" --jobs "$jobs" --known seeds/findings/ --save "$save" \
    >"$log" 2>"$save/progress.log" || rc=$?
secs=$(($(date +%s) - start))
if [ "$rc" -gt 1 ]; then
    echo "campaign $scenario $seeds: error (exit $rc), see $save/progress.log" >&2
    cat "$save/progress.log" >&2
    exit "$rc"
fi

runs=$(sed -n 's/^runs: \([0-9]*\).*/\1/p' "$log")
passes=$(sed -n 's/.*passes: \([0-9]*\).*/\1/p' "$log")
failures=$(sed -n 's/.*failures: \([0-9]*\).*/\1/p' "$log")
known=$(sed -n 's/^known open findings.*seeds \[\(.*\)\]$/\1/p' "$log")
nknown=0
if [ -n "$known" ]; then
    nknown=$(echo "$known" | tr ',' '\n' | wc -l)
fi
new=""
if [ "$failures" -gt 0 ]; then
    new=" ($(sed -n 's/^  seed \([0-9]*\) *\([a-z]*\) *\([^ ]*\).*/\1 \2 \3/p' "$log" | paste -sd, -))"
fi
result=ok
[ "$rc" -eq 0 ] || result=FAIL
echo "campaign $scenario $seeds: $result: $runs runs, $passes pass, $nknown known (seeds ${known:-none}), $failures new failures$new; ${secs}s with --jobs $jobs; seed files and log in $save"
exit "$rc"
