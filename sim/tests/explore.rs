//! `fuzz --explore`: the same campaign seed and budget give the same runs whatever
//! `--jobs`; the corpus grows from the runs that reach new coverage; a failing mutant is
//! saved as a scenario and seed file that `replay` reproduces exactly.

use std::path::PathBuf;
use std::process::{Command, Output};
use ticdc_sim::explore::{run, Explore, Origin};
use ticdc_sim::result::Outcome;

const BIN: &str = env!("CARGO_BIN_EXE_ticdc-sim");

fn sim(args: &[&str]) -> Output {
    Command::new(BIN).args(args).env_remove("TICDC_SIM_SCENARIOS").output().expect("run ticdc-sim")
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ticdc-sim-explore-{}-{}", tag, std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A cheap scenario with a random workload, its faults drawn by the swarm (so every
/// mutation kind applies).
fn scenario() -> ticdc_sim::scenario::Scenario {
    let mut s = ticdc_sim::scenario::load::resolve("ddl_with_random_move_table").unwrap().scenario;
    s.faults.swarm = true;
    s
}

#[test]
fn same_campaign_seed_same_runs_whatever_the_jobs() {
    let scn = scenario();
    let detect = |r: &ticdc_sim::result::RunResult| r.outcome != Outcome::Pass;
    let campaign = |jobs: usize, campaign_seed: u64| {
        let c = Explore {
            scenario: &scn,
            bugs: Default::default(),
            first_seed: 0,
            budget: 20,
            campaign_seed,
            jobs,
            mutate: true,
            stop_after: None,
            detect: &detect,
        };
        run(&c, &mut |_, _| {})
    };
    let (one, two) = (campaign(1, 5), campaign(2, 5));
    let seq = |r: &ticdc_sim::explore::ExploreResult| -> Vec<(u64, Origin, String, bool)> {
        r.runs.iter().map(|x| (x.seed, x.origin.clone(), x.trace_hash.clone(), x.kept)).collect()
    };
    assert_eq!(one.runs.len(), 20);
    assert_eq!(seq(&one), seq(&two));
    assert_eq!(one.sequence_hash, two.sequence_hash);
    assert_eq!((one.corpus_size, one.admitted, one.features_seen), (two.corpus_size, two.admitted, two.features_seen));
    assert!(one.runs.iter().any(|x| x.origin != Origin::Plain), "mutants ran");
    // The first runs are the plain seeds, in order, as `fuzz` runs them.
    assert_eq!(
        one.runs[..4].iter().map(|x| (x.seed, x.origin.clone())).collect::<Vec<_>>(),
        (0..4).map(|s| (s, Origin::Plain)).collect::<Vec<_>>()
    );
    // The corpus grows from runs that reach new points: the first run reaches only new
    // ones; later runs that bring none are not kept.
    assert!(one.runs[0].kept);
    assert!(one.corpus_size >= 2 && one.admitted as usize >= one.corpus_size);
    assert!(one.features_seen > 0);
    // Another campaign seed makes other choices.
    assert_ne!(campaign(2, 6).sequence_hash, one.sequence_hash);
}

#[test]
fn cli_summary_does_not_depend_on_jobs() {
    let json = |jobs: &str| {
        let o = sim(&[
            "fuzz",
            "capture_local_fence_during_bootstrap",
            "--explore",
            "--runs",
            "16",
            "--campaign-seed",
            "3",
            "--jobs",
            jobs,
            "--json",
        ]);
        assert!(o.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&o.stderr));
        let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        for k in ["jobs", "wall_ms", "runs_per_sec"] {
            v.as_object_mut().unwrap().remove(k);
        }
        v
    };
    let one = json("1");
    assert_eq!(one["runs"], 16);
    assert_eq!(one, json("2"));
}

#[test]
fn a_failing_mutant_is_saved_and_replays() {
    let dir = temp_dir("save");
    let d = dir.to_str().unwrap();
    let args = ["fuzz", "ddl_with_random_move_table", "--explore", "--runs", "16", "--jobs", "2"];
    let o = sim(&[&args[..], &["--bug", "escalate-closing-writer-error", "--save", d, "--json"]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let failing = v["failing_runs"].as_array().unwrap();
    let mutant = failing.iter().find(|f| f["origin"] == "mutant").expect("a mutant failed");
    let file = mutant["scenario_file"].as_str().unwrap();
    assert!(std::path::Path::new(file).is_file());
    assert!(mutant["reproduce"].as_str().unwrap().contains(file));
    // Every failing run has a seed file; replay reruns each exactly (no hash warning).
    let seed_files = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "json"))
        .count();
    assert_eq!(seed_files, failing.len());
    let r = sim(&["replay", d]);
    let out = String::from_utf8_lossy(&r.stdout);
    assert_eq!(r.status.code(), Some(0), "{out}");
    assert!(out.contains(&format!("{} ok, 0 warnings, 0 failed", failing.len())), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_explore_flags_are_one_error_line() {
    let o = sim(&["fuzz", "fail_over", "--explore", "--runs", "0"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(err.trim(), "error: invalid --runs 0: need at least one run");
    let o = sim(&["fuzz", "fail_over", "--runs", "5"]);
    assert_eq!(o.status.code(), Some(2), "--runs needs --explore");
    let o = sim(&["fuzz", "fail_over", "--explore", "--runs", "5", "--seeds", "0..5"]);
    assert_eq!(o.status.code(), Some(2), "--runs conflicts with --seeds");
}
