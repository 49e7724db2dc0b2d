#!/usr/bin/env bash
# Whether two builds run the same, bit for bit: the check for a change meant to keep every
# run (a performance change, a refactor). It compares
#   - the trace hash of seeds 0..K of every scenario (scenarios/ and scenarios/bench/);
#   - every named bug on its zoo scenario (the table of reports/bug-zoo.md), seeds 0..N:
#     the failing seed files `fuzz --save` writes (seed, outcome, violations, trace hash);
# and replays seeds/ and seeds/findings/ with the new build (their recorded hashes).
#
#   cp target/release/ticdc-sim /tmp/old     # before the change
#   cargo build --release                    # after it
#   scripts/same_runs.sh /tmp/old target/release/ticdc-sim
#
# Environment: K (default 4), N (default 60). Exit 0: the same runs; 1: a difference,
# listed; 2: bad arguments.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

[ $# = 2 ] || { echo "usage: scripts/same_runs.sh OLD_BINARY NEW_BINARY" >&2; exit 2; }
old=$1 new=$2
for b in "$old" "$new"; do
    [ -x "$b" ] || { echo "error: $b is not an executable" >&2; exit 2; }
done
K=${K:-4}
N=${N:-60}
[[ "$K" =~ ^[0-9]+$ && "$N" =~ ^[0-9]+$ ]] || { echo "error: K and N must be numbers" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
diffs=0

hash_of() { "$1" scenario "$2" --seed "$3" --no-report 2>/dev/null | grep '^trace hash' || true; }

runs=0
for f in scenarios/*.toml scenarios/bench/*.toml; do
    for ((s = 0; s < K; s++)); do
        a=$(hash_of "$old" "$f" "$s")
        b=$(hash_of "$new" "$f" "$s")
        runs=$((runs + 1))
        if [ -z "$a" ] || [ "$a" != "$b" ]; then
            echo "differs: $f seed $s: '$a' against '$b'"
            diffs=$((diffs + 1))
        fi
    done
done
echo "scenarios: $runs runs compared (seeds 0..$K of each)"

bugs=0
# | bug | origin | scenario | ...
while IFS='|' read -r _ bug _ scn _; do
    bug=$(echo "$bug" | xargs) scn=$(echo "$scn" | xargs)
    [[ "$bug" =~ ^[a-z][a-z0-9-]*$ && -n "$scn" && "$bug" != bug ]] || continue
    rm -rf "$work/a" "$work/b"
    "$old" fuzz "$scn" --bug "$bug" --seeds "0..$N" --save "$work/a" --json >/dev/null 2>&1 || true
    "$new" fuzz "$scn" --bug "$bug" --seeds "0..$N" --save "$work/b" --json >/dev/null 2>&1 || true
    bugs=$((bugs + 1))
    if ! diff -r "$work/a" "$work/b" >/dev/null 2>&1; then
        echo "differs: --bug $bug on $scn (seeds 0..$N): the failing seed files"
        diffs=$((diffs + 1))
    fi
done <reports/bug-zoo.md
[ "$bugs" -gt 0 ] || { echo "error: no bug rows read from reports/bug-zoo.md" >&2; exit 2; }
echo "bugs: $bugs compared (seeds 0..$N of each)"

for dir in seeds/ seeds/findings/; do
    if ! "$new" replay "$dir" >"$work/replay" 2>&1; then
        diffs=$((diffs + 1))
    fi
    tail -1 "$work/replay"
done

if [ "$diffs" -gt 0 ]; then
    echo "same_runs: $diffs differences"
    exit 1
fi
echo "same_runs: the same runs"
