#!/usr/bin/env bash
# Regenerates docs/measurements.md: the throughput of every standard scenario, the bug
# zoo and the findings report, each from a run of target/release/ticdc-sim on this
# machine. Run it from anywhere; it works from the repository root.
#
#   scripts/measurements.sh          # N = 1000 (what the committed file uses)
#   scripts/measurements.sh 20       # a quick run: N = 20
#
# N is the number of seeds (0..N) per bug for `zoo`, per finding scenario for
# `findings`, and per scenario for the throughput table (bench_3node_10table, about 20
# times slower per seed than most, runs N/5). Environment:
#   JOBS=k         worker threads (default: the number of cores)
#   OUT=file       where the page goes (default: docs/measurements.md)
#   REPORT_DIR=d   where zoo and findings write their .md/.json (default: reports, the
#                  committed reports/bug-zoo.* and reports/findings.*)
#   FINDINGS_DOCS=d  the finding pages whose generated blocks the findings part rewrites
#                  (`findings --write-docs`; default: docs/findings)
#   SKIP=list      comma-separated parts to leave out: throughput, zoo, findings, shrink,
#                  explore, campaign, memory, bench (explore: `explore-measure`, seeds to first
#                  failure of every finding and bug, plain vs --explore, EXPLORE_BUDGET runs
#                  (default 200) per campaign, 3 campaigns; shrink: `shrink` of every seed file of seeds/findings/
#                  and every seeds/*.json with bugs, default budget; campaign:
#                  scripts/campaign.sh, 20,000 swarm seeds; memory: peak RSS of fuzz swarm
#                  --jobs 1 over 300 and 10,000 seeds; always that many; bench:
#                  scripts/bench.sh, one core, its fixed seed counts, about 10 minutes)
#
# The script builds nothing: build first (`cargo build --release`). It always exits 0
# once the page is written; each command's exit code is recorded in the page.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

N=${1:-1000}
case "$N" in '' | *[!0-9]* | 0) echo "error: N must be a positive integer, got '$N'" >&2; exit 2 ;; esac
JOBS=${JOBS:-$(nproc)}
OUT=${OUT:-docs/measurements.md}
REPORT_DIR=${REPORT_DIR:-reports}
FINDINGS_DOCS=${FINDINGS_DOCS:-docs/findings}
SKIP=${SKIP:-}
SIM=target/release/ticdc-sim
BENCH_N=$(( N / 5 > 0 ? N / 5 : 1 ))

[ -x "$SIM" ] || { echo "error: $SIM not found; run cargo build --release first" >&2; exit 2; }
command -v jq >/dev/null || { echo "error: jq is needed to read the fuzz JSON" >&2; exit 2; }
skip() { case ",$SKIP," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Run a private copy, so a rebuild of target/release during the run does not mix binaries.
cp "$SIM" "$work/ticdc-sim"
BIN="$work/ticdc-sim"
mkdir -p "$REPORT_DIR" "$(dirname "$OUT")"

started=$(date -u '+%Y-%m-%d %H:%M UTC')
t_start=$(date +%s)
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //' || true)
load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
commit=$(git rev-parse --short HEAD 2>/dev/null || echo '?')
dirty=$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo ' (work tree has uncommitted changes)' || true)
bin_time=$(date -u -r "$SIM" '+%Y-%m-%d %H:%M UTC')
echo "measurements: N=$N (bench_3node_10table $BENCH_N), jobs=$JOBS, $(nproc) cores, load $load" >&2
echo "measurements: writing $OUT, zoo/findings reports to $REPORT_DIR/" >&2

# ---------------------------------------------------------------- throughput
t_part=$(date +%s)
tp_rows=""
tp_rc=0
if ! skip throughput; then
    for f in scenarios/*.toml; do
        name=$(basename "$f" .toml)
        n=$N
        [ "$name" = bench_3node_10table ] && n=$BENCH_N
        echo "measurements: fuzz $name --seeds 0..$n" >&2
        rc=0
        "$BIN" fuzz "$name" --seeds "0..$n" --jobs "$JOBS" --json --coverage >"$work/fuzz.json" 2>/dev/null || rc=$?
        cp "$work/fuzz.json" "$work/cov-$name.json"
        [ "$rc" -gt 1 ] && { echo "error: fuzz $name exited $rc" >&2; tp_rc=$rc; continue; }
        [ "$rc" -eq 1 ] && tp_rc=1
        row=$(jq -r --arg n "$name" '
            def fmt: (. * 1 | floor | tostring | if length > 3 then .[:length-3] + "," + .[length-3:] else . end);
            "| `\($n)` | \(.passes) of \(.runs) pass"
            + (if .failures > 0 then " (failing: \([.failing_seeds[:5][] | "\(.seed) \(.outcome)"] | join(", "))\(if .failures > 5 then ", ..." else "" end))" else "" end)
            + " | \(.seeds_per_sec | fmt) | \(.sim_wall_ratio | fmt)x | \(.wall_ms / 10 | floor / 100) |"' "$work/fuzz.json")
        tp_rows+="$row"$'\n'
    done
    echo "measurements: fuzz bench_3node_10table --seeds 0..$BENCH_N --jobs 1" >&2
    "$BIN" fuzz bench_3node_10table --seeds "0..$BENCH_N" --jobs 1 --json >"$work/bench1.json" 2>/dev/null || true
fi
t_throughput=$(( $(date +%s) - t_part ))

# ---------------------------------------------------------------- zoo
t_part=$(date +%s)
zoo_rc=skipped
if ! skip zoo; then
    echo "measurements: zoo --seeds $N" >&2
    zoo_rc=0
    "$BIN" zoo --seeds "$N" --jobs "$JOBS" --report-dir "$REPORT_DIR" >"$work/zoo.out" 2>"$work/zoo.err" || zoo_rc=$?
fi
t_zoo=$(( $(date +%s) - t_part ))

# ---------------------------------------------------------------- findings
t_part=$(date +%s)
findings_rc=skipped
if ! skip findings; then
    echo "measurements: findings --seeds $N --write-docs $FINDINGS_DOCS" >&2
    findings_rc=0
    "$BIN" findings --seeds "$N" --jobs "$JOBS" --report-dir "$REPORT_DIR" --write-docs "$FINDINGS_DOCS" \
        >"$work/findings.out" 2>"$work/findings.err" || findings_rc=$?
fi
t_findings=$(( $(date +%s) - t_part ))

# ---------------------------------------------------------------- shrink
t_part=$(date +%s)
shrink_rows=""
shrink_rc=skipped
if ! skip shrink; then
    shrink_rc=0
    for f in seeds/findings/*.json seeds/*.json; do
        jq -e '.expect.outcome != "pass" and (.bugs | length > 0 or (input_filename | test("/findings/")))' "$f" \
            >/dev/null 2>&1 || continue
        # The file's own run: its scenario, seed, bugs, recorded swarm plan and engine.
        echo "measurements: shrink --seed-file $f" >&2
        rc=0
        "$BIN" shrink --seed-file "$f" --out "$work/shrink" --json >"$work/shrink.json" \
            2>"$work/shrink.err" || rc=$?
        if [ "$rc" -ne 0 ]; then
            shrink_rc=$rc
            shrink_rows+="| \`${f#seeds/}\` | exit $rc: $(tail -n 1 "$work/shrink.err") | | | | | |"$'\n'
            continue
        fi
        row=$(jq -r --arg f "${f#seeds/}" '
            def t: (. / 100 | floor | . / 10 | tostring) + " s";
            "| `\($f)` | \(.before.steps) -> \(.after.steps) | \(.before.faults | length) -> \(.after.faults | length) | \(.before.tables) -> \(.after.tables) | \(.before.events) -> \(.after.events) | \(.before.sim_time_ms | t) -> \(.after.sim_time_ms | t) | \(.runs)\(if .stopped then " (\(.stopped))" else "" end) |"' "$work/shrink.json")
        shrink_rows+="$row"$'\n'
    done
fi
t_shrink=$(( $(date +%s) - t_part ))

# ---------------------------------------------------------------- explore
t_part=$(date +%s)
explore_rc=skipped
EXPLORE_BUDGET=${EXPLORE_BUDGET:-200}
if ! skip explore; then
    echo "measurements: explore-measure --budget $EXPLORE_BUDGET --campaigns 3" >&2
    explore_rc=0
    "$BIN" explore-measure --budget "$EXPLORE_BUDGET" --campaigns 3 --jobs "$JOBS" >"$work/explore.md" \
        2>"$work/explore.err" || explore_rc=$?
fi
t_explore=$(( $(date +%s) - t_part ))

# ---------------------------------------------------------------- campaign
t_part=$(date +%s)
campaign_rc=skipped
if ! skip campaign; then
    echo "measurements: scripts/campaign.sh (swarm 3000..23000)" >&2
    campaign_rc=0
    SIM="$BIN" JOBS="$JOBS" scripts/campaign.sh "$work/campaign" >"$work/campaign.out" 2>"$work/campaign.err" \
        || campaign_rc=$?
fi
t_campaign=$(( $(date +%s) - t_part ))

# ---------------------------------------------------------------- memory
t_part=$(date +%s)
mem_rows=""
if ! skip memory; then
    for range in 0..300 0..10000; do
        echo "measurements: memory: fuzz swarm --seeds $range --jobs 1" >&2
        /usr/bin/time -f '%M %e' -o "$work/mem.time" "$BIN" fuzz swarm --seeds "$range" --jobs 1 --known seeds/findings/ \
            >/dev/null 2>&1 || true
        # time(1) puts "Command exited with non-zero status" first when fuzz found failures.
        read -r rss wall < <(tail -n 1 "$work/mem.time")
        mem_rows+="| \`fuzz swarm --seeds $range --jobs 1\` | $(( rss / 1024 )) MB | ${wall} s |"$'\n'
    done
fi
t_memory=$(( $(date +%s) - t_part ))

# ---------------------------------------------------------------- bench
t_part=$(date +%s)
bench_rc=skipped
if ! skip bench; then
    echo "measurements: scripts/bench.sh" >&2
    bench_rc=0
    SIM="$BIN" OUT="$work/bench.md" scripts/bench.sh >/dev/null 2>"$work/bench.err" || bench_rc=$?
fi
t_bench=$(( $(date +%s) - t_part ))
t_total=$(( $(date +%s) - t_start ))
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')

# Body of a generated report without its title line; its headings one level down.
embed() { sed '1{/^# /d}' "$1" | sed 's/^## /### /'; }

{
    echo "# Measurements"
    echo
    echo "Generated by \`scripts/measurements.sh $N\`; do not edit by hand (rerun the script)."
    echo
    echo "| | |"
    echo "|---|---|"
    echo "| run started | $started |"
    echo "| machine | $(nproc) cores${cpu:+, $cpu}; load average at start $load, at end $load_end |"
    echo "| binary | \`$SIM\` built $bin_time, repository at $commit$dirty |"
    echo "| seeds | N = $N (\`bench_3node_10table\`: $BENCH_N), \`--jobs $JOBS\` |"
    echo "| wall time | throughput ${t_throughput} s, zoo ${t_zoo} s, findings ${t_findings} s, shrink ${t_shrink} s, explore ${t_explore} s, campaign ${t_campaign} s, memory ${t_memory} s, bench ${t_bench} s, total ${t_total} s |"
    echo
    echo "Rates depend on the machine and on what else runs on it: on a shared machine"
    echo "(the load average above) they drop, and other builds running at the same time"
    echo "can halve them. Pass/fail counts do not depend on the machine: a seed replays"
    echo "exactly."
    echo
    echo "## Throughput"
    echo
    if skip throughput; then
        echo "(skipped: \`SKIP=$SKIP\`)"
    else
        echo "Every scenario in \`scenarios/\` on the fixed core with its default mask:"
        echo "\`$SIM fuzz <scenario> --seeds 0..$N --jobs $JOBS --json\`"
        echo "(\`bench_3node_10table\`: \`--seeds 0..$BENCH_N\`). seeds/s and simulated/wall are"
        echo "the JSON's \`seeds_per_sec\` and \`sim_wall_ratio\` (simulated time of all seeds over"
        echo "the campaign's wall time); wall is \`wall_ms\`."
        echo
        echo "| scenario | seeds on the fixed core | seeds/s | simulated/wall | wall (s) |"
        echo "|---|---|---|---|---|"
        printf '%s' "$tp_rows"
        echo
        if [ -s "$work/bench1.json" ]; then
            jq -r '"The reference run, one core: `'"$SIM"' fuzz bench_3node_10table --seeds \(.seeds) --jobs 1`: \(.seeds_per_sec) seeds/s, simulated/wall \(.sim_wall_ratio)x (3 captures, 10 tables, about 3 minutes simulated per seed)."' "$work/bench1.json"
            echo
        fi
        [ "$tp_rc" -ne 0 ] && { echo "Some campaign exited $tp_rc (a failing seed: see its row)."; echo; }
    fi
    echo "## Coverage"
    echo
    if skip throughput; then
        echo "(skipped with the throughput part: \`SKIP=$SKIP\`)"
    else
        echo "The core's coverage points (\`core/src/coverage/points.rs\`) reached by the throughput"
        echo "campaigns above (\`--coverage\`): swarm alone, and every scenario of \`scenarios/\` together."
        echo "Must-reach points never reached fail CI's gate (\`coverage --seeds 0..300 --gate\`); gaps are"
        echo "reachable branches no scenario reaches yet; the rest need a bug switch or cannot happen in the model."
        echo
        echo "The last column leaves out the points no fixed-core campaign can reach (\`may\`: a bug"
        echo "switch, a candidate fix or a unit test reaches them), so it can reach 100%; the share of all"
        echo "points is capped at the share of must and gap points."
        echo
        echo "| campaigns | runs | points reached | must-reach never reached | gaps never reached | other never reached | of the must and gap points |"
        echo "|---|---|---|---|---|---|---|"
        # One row over the union of the given --coverage JSON files.
        cov_row() {
            local what=$1; shift
            jq -s -r --arg what "$what" '
                def union: reduce .[] as $r ({}; reduce ($r.coverage.points | to_entries[]) as $e (.;
                    .[$e.key] = {hits: ((.[$e.key].hits // 0) + $e.value.hits), reach: $e.value.reach}));
                def pct(a; b): "\(a * 1000 / b | floor / 10)%";
                (map(.runs) | add) as $runs | union as $u | ($u | length) as $total
                | ([$u[] | select(.hits > 0)] | length) as $reached
                | [$u[] | select(.reach != "may")] as $open
                | ([$open[] | select(.hits > 0)] | length) as $open_reached
                | "| \($what) | \($runs) | \($reached) of \($total) (\(pct($reached; $total))) | \([$u[] | select(.hits == 0 and .reach == "must")] | length) | \([$u[] | select(.hits == 0 and .reach == "gap")] | length) | \([$u[] | select(.hits == 0 and .reach == "may")] | length) | \($open_reached) of \($open | length) (\(pct($open_reached; $open | length))) |"
            ' "$@"
        }
        cov_row "swarm, seeds 0..$N" "$work/cov-swarm.json"
        cov_row "every scenario together" "$work"/cov-*.json
        echo
        echo "\`$SIM coverage --seeds 0..300\` lists every point never reached with its reason."
    fi
    echo
    echo "## Bug zoo"
    echo
    if [ "$zoo_rc" = skipped ]; then
        echo "(skipped: \`SKIP=$SKIP\`)"
    else
        echo "\`$SIM zoo --seeds $N --jobs $JOBS --report-dir $REPORT_DIR\` (exit code $zoo_rc; it also wrote"
        echo "\`$REPORT_DIR/bug-zoo.md\` and \`.json\`):"
        echo
        embed "$REPORT_DIR/bug-zoo.md"
        if [ "$zoo_rc" != 0 ]; then echo; echo '```'; tail -n 5 "$work/zoo.err"; echo '```'; fi
    fi
    echo
    echo "## Findings"
    echo
    if [ "$findings_rc" = skipped ]; then
        echo "(skipped: \`SKIP=$SKIP\`)"
    else
        echo "\`$SIM findings --seeds $N --jobs $JOBS --report-dir $REPORT_DIR --write-docs $FINDINGS_DOCS\` (exit code"
        echo "$findings_rc; it also wrote \`$REPORT_DIR/findings.md\` and \`.json\`, and the generated blocks of the"
        echo "pages in [\`docs/findings/\`](findings/README.md): each page's seed shrunk, its timeline and rates)."
        echo
        embed "$REPORT_DIR/findings.md"
        if [ "$findings_rc" != 0 ]; then echo; echo '```'; tail -n 5 "$work/findings.err"; echo '```'; fi
    fi
    echo
    echo "## Shrink"
    echo
    if [ "$shrink_rc" = skipped ]; then
        echo "(skipped: \`SKIP=$SKIP\`)"
    else
        echo "\`$SIM shrink --seed-file FILE --json\` (default budget of 300 runs) for every"
        echo "seed file of \`seeds/findings/\` and every failing \`seeds/*.json\` with bugs: the file's run"
        echo "(its scenario with its recorded plan and engine) before, the minimized scenario that fails the"
        echo "same way (outcome and first invariant) after. Faults are the swarm families on and the"
        echo "\`[faults]\` knobs away from their defaults; runs counts every run of the search, a"
        echo "\`(budget)\` one stopped at the budget."
        echo
        echo "| seed file | steps | faults | tables | events | simulated time | runs |"
        echo "|---|---|---|---|---|---|---|"
        printf '%s' "$shrink_rows"
        [ "$shrink_rc" != 0 ] && { echo; echo "Some shrink exited $shrink_rc (see its row)."; }
    fi
    echo
    echo "## Coverage-guided search"
    echo
    if [ "$explore_rc" = skipped ]; then
        echo "(skipped: \`SKIP=$SKIP\`)"
    else
        echo "\`$SIM explore-measure --budget $EXPLORE_BUDGET --campaigns 3 --jobs $JOBS\` (exit code $explore_rc): runs to"
        echo "the first failure of every open finding (the seed-file groups of \`seeds/findings/\`, any failure"
        echo "counts) and every named bug (the zoo's scenario and companions; only the zoo's \`detect\`"
        echo "invariant counts where it names one, without the zoo's control run). Campaign k of the plain side"
        echo "runs seeds from k * 1000 in order; campaign k of \`fuzz --explore\` starts from the same seeds"
        echo "with campaign seed k, so both share their first batch of 8 runs. Each cell lists the three"
        echo "campaigns; \`*\` marks a first failure found by a mutant, \`>$EXPLORE_BUDGET\` none within the"
        echo "budget (counted as $EXPLORE_BUDGET + 1 in the median)."
        echo
        cat "$work/explore.md"
        if [ "$explore_rc" != 0 ]; then echo; echo '```'; tail -n 5 "$work/explore.err"; echo '```'; fi
    fi
    echo
    echo "## Memory over a campaign"
    echo
    if [ -z "$mem_rows" ]; then
        echo "(skipped)"
    else
        echo "Peak RSS (\`/usr/bin/time -f %M\`) of one worker over 300 and 10,000 swarm seeds: nothing of a"
        echo "finished seed stays reachable (\`sim/tests/memory.rs\` checks the heap's live bytes)."
        echo
        echo "| command | peak RSS | wall |"
        echo "|---|---|---|"
        printf '%s' "$mem_rows"
    fi
    echo
    echo "## Benchmark"
    echo
    if [ "$bench_rc" = skipped ]; then
        echo "(skipped: \`SKIP=$SKIP\`)"
    elif [ -s "$work/bench.md" ]; then
        echo "\`scripts/bench.sh\` (exit code $bench_rc): measured against the performance targets."
        echo
        cat "$work/bench.md"
    else
        echo "\`scripts/bench.sh\` exited $bench_rc without a result:"
        echo; echo '```'; tail -n 5 "$work/bench.err"; echo '```'
    fi
    echo
    echo "## Long campaign"
    echo
    if [ "$campaign_rc" = skipped ]; then
        echo "(skipped: \`SKIP=$SKIP\`)"
    else
        echo "\`scripts/campaign.sh\` (\`fuzz swarm --seeds 3000..23000 --known seeds/findings/ --save DIR\`,"
        echo "exit code $campaign_rc), the campaign to run on every change to the core; seeds that fail"
        echo "with a known open finding are listed, not counted:"
        echo
        echo '```'
        sed "s|$work/campaign|DIR|" "$work/campaign.out"
        [ "$campaign_rc" != 0 ] && tail -n 5 "$work/campaign.err"
        echo '```'
    fi
} >"$work/page.md"
mv "$work/page.md" "$OUT"
echo "measurements: wrote $OUT in ${t_total} s (throughput ${t_throughput} s, zoo ${t_zoo} s, findings ${t_findings} s, shrink ${t_shrink} s, explore ${t_explore} s, campaign ${t_campaign} s, bench ${t_bench} s)" >&2
