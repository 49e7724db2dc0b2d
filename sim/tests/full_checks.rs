//! The fast invariant checks (reused buffers, one sweep per table, the full description
//! only once something is found) against the reference ones (`--full-checks`): the same
//! violations at the same moments, hence the same trace, over the seed corpus (every
//! recorded bug and finding seed, which do violate), every named bug on its zoo scenario
//! (seeds 0 and 1) and seed 0 of every scenario. The release-mode sweep over many seeds is
//! `fuzz <scenario> --json` with and without `--full-checks` (same failing seeds and hashes).

use core_sched::bugs::{Bugs, ALL_BUGS};
use std::path::PathBuf;
use ticdc_sim::replay::prepare;
use ticdc_sim::runner::{run_on_fresh_thread, RunOptions};
use ticdc_sim::scenario::{load, Scenario};
use ticdc_sim::seedfile::collect;

const FULL: RunOptions =
    RunOptions { verbose: false, inject_nondeterminism: false, progress: None, timeline: false, full_checks: true };

/// Run one seed both ways; a difference is described.
fn differs(what: &str, scn: &Scenario, seed: u64, bugs: &Bugs) -> Option<String> {
    let fast = run_on_fresh_thread(scn, seed, bugs, &RunOptions::default());
    let full = run_on_fresh_thread(scn, seed, bugs, &FULL);
    let v = |r: &ticdc_sim::result::RunResult| {
        r.violations.iter().map(|v| (v.invariant.clone(), v.at_ms, v.detail.clone())).collect::<Vec<_>>()
    };
    (fast.trace_hash != full.trace_hash || v(&fast) != v(&full)).then(|| {
        format!("{what} seed {seed}: fast {} {:?}, full {} {:?}", fast.trace_hash, v(&fast), full.trace_hash, v(&full))
    })
}

#[test]
fn fast_and_full_checks_agree_on_every_seed_file() {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../seeds"));
    let mut files = collect(&dir).unwrap();
    files.extend(collect(&dir.join("findings")).unwrap());
    let mut violating = 0;
    let mut diffs = Vec::new();
    for f in &files {
        let p = prepare(f).unwrap();
        violating += usize::from(p.file.expect.outcome != ticdc_sim::result::Outcome::Pass);
        diffs.extend(differs(&f.display().to_string(), &p.scenario, p.file.seed, &p.bugs));
    }
    assert!(violating >= 10, "the corpus should hold violating seeds, found {violating}");
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

#[test]
fn fast_and_full_checks_agree_on_every_bug_and_scenario() {
    let mut diffs = Vec::new();
    for info in ALL_BUGS {
        let plan = ticdc_sim::zoo::plan_for(info.bug);
        let scn = load::resolve(ticdc_sim::zoo::resolve_scenario(info.bug)).unwrap().scenario;
        let mut bugs = Bugs::none().with(info.bug);
        for c in plan.companions {
            bugs = bugs.with(*c);
        }
        for seed in 0..2 {
            diffs.extend(differs(info.name, &scn, seed, &bugs));
        }
    }
    for (name, _) in load::list() {
        let scn = load::resolve(&name).unwrap().scenario;
        diffs.extend(differs(&name, &scn, 0, &Bugs::none()));
    }
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}
