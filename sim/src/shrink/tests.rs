//! Tests of `shrink`: the pinned swarm plan replays the swarm run, a bug's seed shrinks
//! to a smaller scenario that fails the same way, a passing seed is refused, and two
//! searches give the same result.

use super::*;
use crate::args::{parse_bugs, ShrinkArgs};
use std::sync::atomic::{AtomicUsize, Ordering};

fn temp_dir() -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "ticdc-sim-shrink-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn request(scenario: &str, seed: u64, bugs: &[&str], max_runs: usize) -> Request {
    let bugs: Vec<String> = bugs.iter().map(|b| b.to_string()).collect();
    Request {
        scenario: load::resolve(scenario).unwrap().scenario,
        seed,
        bugs: parse_bugs(&bugs).unwrap(),
        max_runs,
        path: temp_dir().join("t-min.toml"),
    }
}

/// Load the minimized scenario from its text, as `scenario <file>` would.
fn reload(s: &Shrunk) -> Scenario {
    let dir = temp_dir();
    let path = dir.join("t-min.toml");
    std::fs::write(&path, &s.best_text).unwrap();
    load::load_path(&path).unwrap().scenario
}

#[test]
fn pinned_swarm_plan_replays_the_swarm_run() {
    let swarm = load::resolve("swarm").unwrap().scenario;
    for seed in [3, 156] {
        let mut pinned = swarm.clone();
        crate::runner::swarm::plan(seed).pin(&mut pinned);
        let (pinned, _) = normalize(&pinned, Path::new("x/swarm-pinned.toml")).expect("pinned scenario loads");
        assert!(!pinned.faults.swarm && pinned.faults.swarm_families.is_some());
        let a = run(&swarm, seed, &Bugs::none());
        let b = run(&pinned, seed, &Bugs::none());
        assert_eq!((a.trace_hash, a.outcome), (b.trace_hash, b.outcome), "seed {seed}");
    }
}

/// Dropping the `redo` family of a pinned plan switches the redo log off: the run is the
/// pinned run of the same plan with redo off.
#[test]
fn dropping_the_redo_family_switches_redo_off() {
    let swarm = load::resolve("swarm").unwrap().scenario;
    let seed = (0..100).find(|s| crate::runner::swarm::plan(*s).families["redo"]).unwrap();
    let plan = crate::runner::swarm::plan(seed);
    let mut pinned = swarm.clone();
    plan.pin(&mut pinned);
    assert_eq!(pinned.changefeed.consistent_level.as_deref(), Some("eventual"));
    faults::drop(&mut pinned, &faults::FaultAtom::Family("redo".into()), &swarm);
    assert_eq!(pinned.changefeed.consistent_level, swarm.changefeed.consistent_level);
    let mut off = plan.clone();
    off.families.insert("redo".into(), false);
    let mut expected = swarm.clone();
    off.pin(&mut expected);
    assert_eq!(toml::to_string(&pinned).unwrap(), toml::to_string(&expected).unwrap());
}

#[test]
fn a_bugs_seed_shrinks_to_a_smaller_scenario_that_fails_the_same_way() {
    let req = request("ddl_with_random_move_table", 0, &["nonatomic-operator-admission"], 40);
    let s = shrink(&req, &mut |_| {}).unwrap();
    let target = (s.start_run.outcome, first_invariant(&s.start_run));
    assert_eq!(target.1.as_deref(), Some("one-operator-per-dispatcher"));
    assert_eq!((s.best_run.outcome, first_invariant(&s.best_run)), target);
    assert!(s.best.steps.len() < s.start.steps.len(), "steps {} -> {}", s.start.steps.len(), s.best.steps.len());
    assert!(s.best_run.events < s.start_run.events);
    assert!(s.runs <= 40);
    // The written scenario reproduces the run, and with the bugs off it passes.
    let scn = reload(&s);
    let again = run(&scn, 0, &req.bugs);
    assert_eq!((again.trace_hash, again.outcome), (s.best_run.trace_hash.clone(), s.best_run.outcome));
    assert_eq!(run(&scn, 0, &Bugs::none()).outcome, Outcome::Pass);
}

#[test]
fn a_passing_seed_is_refused() {
    let e = shrink(&request("basic_replication", 7, &[], 10), &mut |_| {}).err().expect("a passing seed");
    assert_eq!(e.to_string(), "seed 7 passes: nothing to shrink");
}

#[test]
fn shrinking_twice_gives_the_same_scenario() {
    let req = request("scenarios/findings/status_watermark_snapshot.toml", 228, &[], 30);
    let (mut l1, mut l2) = (Vec::new(), Vec::new());
    let a = shrink(&req, &mut |l| l1.push(l.to_string())).unwrap();
    let b = shrink(&req, &mut |l| l2.push(l.to_string())).unwrap();
    assert_eq!((&a.best_text, a.runs, &a.best_run.trace_hash), (&b.best_text, b.runs, &b.best_run.trace_hash));
    assert_eq!(l1, l2);
    assert!(!l1.is_empty(), "the search kept nothing");
}

#[test]
fn the_budget_bounds_the_runs() {
    let s =
        shrink(&request("ddl_with_random_move_table", 0, &["nonatomic-operator-admission"], 3), &mut |_| {}).unwrap();
    assert!(s.runs <= 3, "{} runs", s.runs);
    assert_eq!(s.stop, Some(Stop::Budget));
}

fn args(scenario: &str, seed: &str, out: PathBuf) -> ShrinkArgs {
    ShrinkArgs {
        scenario: Some(scenario.into()),
        seed: Some(seed.into()),
        bugs: vec![],
        seed_file: None,
        fixes: vec![],
        out,
        max_runs: 5,
        json: false,
    }
}

#[test]
fn bad_input_is_one_clear_error() {
    let dir = temp_dir();
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let e = cli_shrink(&args("basic_replication", "7", file.clone())).err().unwrap().to_string();
    assert_eq!(e, format!("--out {}: not a directory", file.display()));
    let e = cli_shrink(&args("no_such_scenario", "7", dir.clone())).err().unwrap().to_string();
    assert!(e.starts_with("unknown scenario 'no_such_scenario'"), "{e}");
    let e = cli_shrink(&args("basic_replication", "x", dir.clone())).err().unwrap().to_string();
    assert!(e.starts_with("invalid seed 'x'"), "{e}");
    let mut a = args("basic_replication", "7", dir.clone());
    a.max_runs = 0;
    assert_eq!(cli_shrink(&a).err().unwrap().to_string(), "invalid --max-runs 0: need at least one run");
    let e = cli_shrink(&args("basic_replication", "7", dir)).err().unwrap().to_string();
    assert_eq!(e, "seed 7 passes: nothing to shrink");
}

#[test]
fn the_command_writes_a_scenario_and_a_replayable_seed_file() {
    let dir = temp_dir();
    let mut a = args("scenarios/findings/status_watermark_snapshot.toml", "228", dir.clone());
    a.max_runs = 20;
    let (out, code) = cli_shrink(&a).unwrap();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("reproduce: cargo run --release -- scenario "), "{out}");
    let seed_file = dir.join("status_watermark_snapshot-nobug-228-min.json");
    let p = crate::replay::prepare(&seed_file).unwrap();
    assert_eq!(crate::replay::replay(&p), crate::replay::Verdict::Ok);
}

#[test]
fn a_pinned_plan_is_validated() {
    let path = Path::new("x/s.toml");
    let check = |faults: &str| {
        let src = format!("description = \"d\"\n[faults]\n{}\n", faults);
        load::validate(&load::parse(path, src).unwrap()).err().map(|e| e.to_string())
    };
    assert_eq!(check("swarm-families = { kill_restart = false }"), None);
    let e = check("swarm = true\nswarm-families = { kill_restart = false }").unwrap();
    assert!(e.contains("faults.swarm-families pins a drawn plan: it needs swarm = false"), "{e}");
    let e = check("swarm-families = { kill = true }").unwrap();
    assert!(e.contains("unknown family 'kill'; valid families: net.loss,"), "{e}");
    assert!(e.starts_with("x/s.toml:3:"), "{e}");
}
