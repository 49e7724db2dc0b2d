#!/usr/bin/env bash
# The performance benchmark: a fixed set of scenarios, each run on one core, with the
# measured figures next to their targets. Informational: it never fails on a number.
#
#   scripts/bench.sh                 # the full set (about 10 minutes on a shared 2-core machine)
#   QUICK=1 scripts/bench.sh         # fewer seeds and no callgrind (a smoke run)
#
# For every scenario of the set it reports
#   - seeds/s and simulated/wall: `fuzz <scenario> --seeds 0..N --jobs 1 --json`
#     (`seeds_per_sec`, `sim_wall_ratio`);
#   - CPU per seed: user + system time of that campaign (/usr/bin/time) over N;
#   - instructions per seed: `valgrind --tool=callgrind` over the first K seeds, total
#     instructions over K (the process's start-up included; skipped without valgrind).
# Then the cost exponent from 100 to 1,000 tables: log10 of the instructions per seed
# (and of the CPU per seed) of bench_10node_1000table over bench_10node_100table.
# Environment:
#   SIM=path       the binary (default target/release/ticdc-sim; target/fuzz/ticdc-sim for the
#                  `fuzz` profile; the script builds nothing)
#   OUT=file       also write the result as a Markdown section (scripts/measurements.sh
#                  embeds it in docs/measurements.md)
#   CALLGRIND=0    skip the callgrind part
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SIM=${SIM:-target/release/ticdc-sim}
OUT=${OUT:-}
QUICK=${QUICK:-0}
CALLGRIND=${CALLGRIND:-1}
[ -x "$SIM" ] || { echo "error: $SIM not found; run cargo build --release first" >&2; exit 2; }
command -v jq >/dev/null || { echo "error: jq is needed to read the fuzz JSON" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "error: /usr/bin/time is needed for the CPU time (Debian: apt-get install time)" >&2; exit 2; }
have_cg=0
if [ "$CALLGRIND" != 0 ] && [ "$QUICK" = 0 ] && command -v valgrind >/dev/null; then have_cg=1; fi

load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$SIM" "$work/ticdc-sim"
BIN="$work/ticdc-sim"

# name | scenario argument | fuzz seeds | callgrind seeds | target instr/seed (M, or -)
SET=(
    "canonical|maintainer_failover_when_operator|200|20|10"
    "swarm|swarm|200|10|28"
    "bench_3node_10table|bench_3node_10table|40|1|130"
    "bench_10node_100table|scenarios/bench/bench_10node_100table.toml|10|1|-"
    "bench_10node_1000table|scenarios/bench/bench_10node_1000table.toml|2|1|-"
)
TARGET_EXPONENT=1.05
TARGET_CPU_1000=2.0

declare -A SPS RATIO CPU INSTR
rows=""
for entry in "${SET[@]}"; do
    IFS='|' read -r name scn n k target <<<"$entry"
    if [ "$QUICK" != 0 ]; then n=$(( n / 10 > 0 ? n / 10 : 1 )); fi
    echo "bench: $name: fuzz --seeds 0..$n --jobs 1" >&2
    rc=0
    /usr/bin/time -f '%U %S' -o "$work/time" "$BIN" fuzz "$scn" --seeds "0..$n" --jobs 1 --json \
        >"$work/fuzz.json" 2>"$work/fuzz.err" || rc=$?
    if [ "$rc" -gt 1 ]; then
        echo "error: fuzz $scn exited $rc: $(tail -n 1 "$work/fuzz.err")" >&2
        continue
    fi
    read -r user sys < <(tail -n 1 "$work/time")
    SPS[$name]=$(jq -r .seeds_per_sec "$work/fuzz.json")
    RATIO[$name]=$(jq -r .sim_wall_ratio "$work/fuzz.json")
    CPU[$name]=$(awk -v u="$user" -v s="$sys" -v n="$n" 'BEGIN { printf "%.3f", (u + s) / n }')
    passes=$(jq -r '"\(.passes) of \(.runs)"' "$work/fuzz.json")
    INSTR[$name]=""
    if [ "$have_cg" = 1 ]; then
        echo "bench: $name: callgrind over seeds 0..$k" >&2
        valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$BIN" fuzz "$scn" --seeds "0..$k" --jobs 1 \
            >/dev/null 2>"$work/cg.err" || true
        total=$(awk '/^(summary|totals):/ { print $2; exit }' "$work/cg.out" 2>/dev/null || true)
        [ -n "$total" ] && INSTR[$name]=$(awk -v t="$total" -v k="$k" 'BEGIN { printf "%.1f", t / k / 1e6 }')
        rm -f "$work/cg.out"
    fi
    instr=n/a
    [ -n "${INSTR[$name]}" ] && instr="${INSTR[$name]} M (seeds 0..$k)"
    verdict="-"
    if [ "$target" != - ] && [ -n "${INSTR[$name]}" ]; then
        verdict=$(awk -v m="${INSTR[$name]}" -v t="$target" 'BEGIN { print (m <= t ? "met" : "missed") }')
    fi
    tgt=$([ "$target" = - ] && echo - || echo "<= $target M")
    rows+="| \`$name\` | $passes pass | ${SPS[$name]} | ${RATIO[$name]}x | ${CPU[$name]} s | $instr | $tgt | $verdict |"$'\n'
done

# The cost exponent from 100 to 1,000 tables (10x the tables): log10 of the ratio.
exponent() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", log(b / a) / log(10); else print "n/a" }'; }
exp_instr=n/a
exp_cpu=n/a
[ -n "${INSTR[bench_10node_100table]:-}" ] && [ -n "${INSTR[bench_10node_1000table]:-}" ] \
    && exp_instr=$(exponent "${INSTR[bench_10node_100table]}" "${INSTR[bench_10node_1000table]}")
[ -n "${CPU[bench_10node_100table]:-}" ] && [ -n "${CPU[bench_10node_1000table]:-}" ] \
    && exp_cpu=$(exponent "${CPU[bench_10node_100table]}" "${CPU[bench_10node_1000table]}")
judge() { awk -v m="$1" -v t="$2" 'BEGIN { if (m == "n/a" || m == "") print "-"; else print (m + 0 <= t + 0 ? "met" : "missed") }'; }
cpu1000=${CPU[bench_10node_1000table]:-n/a}

{
    echo "Every scenario on one core: \`fuzz <scenario> --seeds 0..N --jobs 1 --json\` (seeds/s and"
    echo "simulated/wall from its JSON, CPU per seed from \`/usr/bin/time\`), and instructions per seed"
    echo "from \`valgrind --tool=callgrind\` over the first seeds (start-up included). canonical is the"
    echo "README's main scenario, \`maintainer_failover_when_operator\`; the two scale scenarios are"
    echo "\`scenarios/bench/\` (10 captures, the same skeleton with 100 and 1,000 tables). seeds/s and"
    echo "simulated/wall follow the machine's load (load average at start: $load); CPU and instructions"
    echo "per seed much less so."
    echo
    echo "| scenario | seeds | seeds/s | simulated/wall | CPU/seed | instructions/seed | target | |"
    echo "|---|---|---|---|---|---|---|---|"
    printf '%s' "$rows"
    echo
    echo "| scale | measured | target | |"
    echo "|---|---|---|---|"
    echo "| exponent 100 -> 1,000 tables, instructions | $exp_instr | <= $TARGET_EXPONENT | $(judge "$exp_instr" "$TARGET_EXPONENT") |"
    echo "| exponent 100 -> 1,000 tables, CPU time | $exp_cpu | <= $TARGET_EXPONENT | $(judge "$exp_cpu" "$TARGET_EXPONENT") |"
    echo "| CPU per seed at 1,000 tables | $cpu1000 s | <= $TARGET_CPU_1000 s | $(judge "$cpu1000" "$TARGET_CPU_1000") |"
    [ "$have_cg" = 1 ] || { echo; echo "(no instruction counts: valgrind not installed, QUICK or CALLGRIND=0)"; }
} >"$work/section.md"
cat "$work/section.md"
[ -n "$OUT" ] && cp "$work/section.md" "$OUT"
exit 0
