#!/usr/bin/env python3
"""Refresh the seed corpus after an intended behaviour change.

Run from the repository root after `cargo build --release`:

    scripts/refresh_seeds.py [--repick] [FILE...]

For every seed file (default: seeds/*.json and seeds/findings/*.json) the recorded seed
is run again. If it still shows the recorded outcome and invariants (and, for a finding,
passes with its `fixed_by` fixes), only `trace_hash` is rewritten. Otherwise, with
`--repick`, seeds 0..2000 of the same scenario and bugs are searched for the first one
that meets the whole expectation (its control included: the same seed with the bugs
off must avoid `control.absent`, or pass); the file is rewritten under its new name with a
note saying so. Without `--repick` such files are only listed; a file that expects
`pass` is never re-picked (a failing regression seed is a regression).

A file that records a swarm plan (`swarm_plan`) runs its own seed with that plan
(`scenario --seed-file`). A re-picked seed has no recorded plan (the swarm draws it):
run `ticdc-sim pin-plans` on the file afterwards to record it.
"""
import json, os, subprocess, sys, tempfile

SIM = "target/release/ticdc-sim"


def run(f, seed, bugs, fixes=()):
    """The JSON report of `seed` of the file's scenario with `bugs` and `fixes`; the file's
    own seed runs with the file's recorded swarm plan, if it has one."""
    tmp = None
    if "swarm_plan" in f and seed == f["seed"]:
        # The run with other bugs (a control, bugs off) keeps the file's plan: a copy
        # of the file with those bugs.
        g = {k: v for k, v in f.items() if k not in ("control", "fixed_by")}
        g["bugs"] = list(bugs)
        tmp = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        tmp.write(json.dumps(g))
        tmp.close()
        cmd = [SIM, "scenario", "--seed-file", tmp.name, "--json", "--no-report"]
    else:
        # A file without `engine` was recorded under the older engine (seeds/README.md).
        engine = f.get("engine", "capture-loops")
        cmd = [SIM, "scenario", f["scenario"], "--seed", str(seed), "--engine", engine, "--json", "--no-report"]
        for b in bugs:
            cmd += ["--bug", b]
    for x in fixes:
        cmd += ["--fix", x]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if tmp is not None:
        os.remove(tmp.name)
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError:
        sys.exit(f"cannot parse the output of {' '.join(cmd)}: {out.stderr[:500]}")


def invariants(r):
    return [v["invariant"] for v in r.get("violations", [])]


def meets(f, seed):
    """The run with the file's bugs, or None when the seed does not meet the file."""
    r = run(f, seed, f["bugs"])
    e = f["expect"]
    if r["outcome"] != e["outcome"]:
        return None
    inv = invariants(r)
    if e.get("invariant") and (not inv or inv[0] != e["invariant"]):
        return None
    for a in e.get("also", []):
        if a not in inv:
            return None
    c = f.get("control")
    if c is not None:
        cr = run(f, seed, c.get("bugs", []))
        if any(a in invariants(cr) for a in c.get("absent", [])):
            return None
    control_is_bugs_off = c is not None and not c.get("bugs")
    # On an open finding's scenario the bugs-off run fails by design: the control's
    # `absent` list judges it (as `replay` does, `SeedFile::on_finding_scenario`).
    on_finding_scenario = "findings/" in f["scenario"]
    if f["bugs"] and e["outcome"] != "pass" and not control_is_bugs_off and not on_finding_scenario:
        # The same seed with the bugs off must pass.
        if run(f, seed, [])["outcome"] != "pass":
            return None
    if f.get("fixed_by"):
        if run(f, seed, f["bugs"], f["fixed_by"])["outcome"] != "pass":
            return None
    return r


def candidates(f, limit):
    """Seeds in 0..limit whose run with the file's bugs fails with the recorded outcome
    and first invariant (a fast `fuzz` pass; `meets` then checks the rest)."""
    cmd = [SIM, "fuzz", f["scenario"], "--seeds", f"0..{limit}", "--json"]
    for b in f["bugs"]:
        cmd += ["--bug", b]
    out = subprocess.run(cmd, capture_output=True, text=True)
    d = json.loads(out.stdout)
    want = f["expect"].get("invariant")
    return [x["seed"] for x in d["failing_seeds"]
            if x["outcome"] == f["expect"]["outcome"] and (not want or x.get("invariant") == want)]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    repick = "--repick" in sys.argv
    files = args or sorted(
        [os.path.join("seeds", n) for n in os.listdir("seeds") if n.endswith(".json")]
        + [os.path.join("seeds/findings", n) for n in os.listdir("seeds/findings") if n.endswith(".json")])
    for path in files:
        f = json.load(open(path))
        r = meets(f, f["seed"])
        if r is not None:
            if r["trace_hash"] != f["trace_hash"]:
                f["trace_hash"] = r["trace_hash"]
                open(path, "w").write(json.dumps(f, indent=2, ensure_ascii=False) + "\n")
                print(f"hash     {path}")
            continue
        if not repick or f["expect"]["outcome"] == "pass":
            # A regression seed that no longer passes is a regression, never re-picked.
            why = "a seed expected to pass fails: a regression" if f["expect"]["outcome"] == "pass" else "rerun with --repick"
            print(f"BROKEN   {path} ({why})")
            continue
        found = None
        limit = int(os.environ.get("REPICK_SEEDS", "2000"))
        for seed in candidates(f, limit):
            r = meets(f, seed)
            if r is not None:
                found = (seed, r)
                break
        if found is None:
            print(f"NO SEED  {path}: no seed in 0..{limit} meets it")
            continue
        seed, r = found
        old = f["seed"]
        f["seed"] = seed
        # The recorded plan was the old seed's; the new seed's run is its draw.
        if f.pop("swarm_plan", None) is not None:
            print(f"unpinned {path}: run `{SIM} pin-plans` on the new file to record its plan")
        f["trace_hash"] = r["trace_hash"]
        f["note"] = (f"Re-picked seed {old} -> {seed} after a behaviour change; the account below "
                     f"was written for seed {old}, so its times and IDs differ at seed {seed}: " + f["note"])
        suffix = f"-{old}.json"
        new_path = path[: -len(suffix)] + f"-{seed}.json" if path.endswith(suffix) else path
        if new_path != path and os.path.exists(new_path):
            print(f"CLASH    {path}: {new_path} exists already; left as it is")
            continue
        open(new_path, "w").write(json.dumps(f, indent=2, ensure_ascii=False) + "\n")
        if new_path != path:
            os.remove(path)
        print(f"repicked {path} -> {new_path}")


if __name__ == "__main__":
    main()
