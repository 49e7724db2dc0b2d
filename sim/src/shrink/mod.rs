//! `shrink`: reduce a failing seed of a scenario to a smaller scenario that fails the
//! same way (same outcome, same first invariant) on the same seed.
//!
//! A swarm scenario is first pinned: the plan the seed draws is written into the scenario
//! (`runner::swarm::SwarmPlan::pin`), so a fault family can be dropped while the others
//! keep their drawn strength. Then delta debugging (ddmin) drops steps, end checks, fault
//! families and knobs, tables, nodes and workload ops, and narrowing halves durations,
//! counts, probabilities and time ranges ([`passes`]). Every candidate goes through the
//! scenario file format (serialized, parsed, validated: an invalid one is skipped) and is
//! run on a fresh thread; it is kept if it fails the same way with at most the original
//! run's events, and, for a run with bugs on, if the same seed with the bugs off still
//! passes (so the bugs stay the cause and the seed file replays). The work is bounded by
//! a run budget; an interrupt keeps the best scenario so far.

pub(crate) mod faults;
mod output;
mod passes;

pub use output::{cli_shrink, Size};

use crate::fuzz::first_invariant;
use crate::result::{Outcome, RunResult};
use crate::runner::{run_on_fresh_thread, RunOptions};
use crate::scenario::{load, Scenario};
use core_sched::bugs::Bugs;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Default budget of runs (every run counts: the first ones and the bugs-off checks too).
pub const DEFAULT_MAX_RUNS: usize = 300;

/// Rounds of all passes at most (a round that keeps nothing ends the search earlier).
const MAX_ROUNDS: usize = 6;

/// Bad input or a seed `shrink` cannot work on.
#[derive(Debug, thiserror::Error)]
pub enum ShrinkError {
    #[error("seed {seed} passes: nothing to shrink")]
    Passes { seed: u64 },
    #[error("invalid --max-runs 0: need at least one run")]
    ZeroRuns,
    #[error("--out {}: not a directory", path.display())]
    OutNotDir { path: PathBuf },
    #[error("seed {seed} fails the same way ({what}) with the bugs off too: the bugs are not its cause, so there is no seed file to shrink toward (run without --bug)")]
    BugsNotCause { seed: u64, what: String },
    /// The scenario with its swarm plan pinned does not load or runs differently: a bug
    /// of `shrink` itself.
    #[error("pinning the swarm plan of seed {seed} changed the run ({detail}); please report this")]
    PinDiverged { seed: u64, detail: String },
}

/// What to shrink.
pub struct Request {
    /// The scenario as loaded.
    pub scenario: Scenario,
    pub seed: u64,
    /// Bugs and candidate fixes of the run (fixes are written into the minimized
    /// scenario's `mask-findings`, as seed files do not record fixes).
    pub bugs: Bugs,
    pub max_runs: usize,
    /// The file the minimized scenario will be written to (named after it; also used in
    /// validation messages).
    pub path: PathBuf,
}

/// Why the search stopped before it ran out of reductions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    Budget,
    Interrupted,
}

/// The result of a search.
pub struct Shrunk {
    /// The scenario the search started from (the swarm plan pinned) and its run.
    pub start: Scenario,
    pub start_run: RunResult,
    pub best: Scenario,
    pub best_run: RunResult,
    /// The minimized scenario as written (the TOML text, without the header comment).
    pub best_text: String,
    pub runs: usize,
    pub invalid: usize,
    pub stop: Option<Stop>,
    /// Whether the pinned scenario replayed the swarm run exactly (same trace hash).
    pub pinned_same_hash: Option<bool>,
    /// With bugs on whose bugs-off run fails too (with another invariant): the seed file
    /// needs a bugs-off control (`absent`: the target invariant).
    pub control: bool,
}

/// The failure a candidate must keep.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Target {
    outcome: Outcome,
    invariant: Option<String>,
}

impl Target {
    fn of(r: &RunResult) -> Target {
        Target { outcome: r.outcome, invariant: first_invariant(r) }
    }
    fn describe(&self) -> String {
        match &self.invariant {
            Some(i) => format!("{} ({})", self.outcome.as_str(), i),
            None => self.outcome.as_str().to_string(),
        }
    }
}

/// The search state: the best scenario so far and the budget.
struct Shrinker<'a> {
    seed: u64,
    /// The bugs of every candidate run (fixes are in the scenario's mask).
    bugs: Bugs,
    /// With bugs on: the bugs-off check (`Some(true)`: must pass; `Some(false)`: must
    /// not violate the target invariant).
    off_must_pass: Option<bool>,
    target: Target,
    max_events: u64,
    /// The scenario as loaded, before pinning (what a dropped family goes back to).
    base: Scenario,
    best: Scenario,
    best_run: RunResult,
    best_text: String,
    path: PathBuf,
    runs: usize,
    max_runs: usize,
    invalid: usize,
    stop: Option<Stop>,
    /// Candidate texts already run or rejected (a pass may propose one twice).
    seen: BTreeSet<String>,
    /// Reductions kept in the current round.
    kept: usize,
    log: &'a mut dyn FnMut(&str),
}

/// Whether `r` violates the target's invariant anywhere (a target without one: fails).
fn violates(r: &RunResult, t: &Target) -> bool {
    match &t.invariant {
        Some(i) => crate::fuzz::all_invariants(r).contains(i),
        None => r.outcome != Outcome::Pass,
    }
}

fn run(scn: &Scenario, seed: u64, bugs: &Bugs) -> RunResult {
    run_on_fresh_thread(scn, seed, bugs, &RunOptions::default())
}

/// The scenario's file stem.
fn stem(path: &Path) -> String {
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// `scn` as the scenario file would load it: serialized, parsed and validated. `None` for
/// a candidate the loader rejects.
fn normalize(scn: &Scenario, path: &Path) -> Option<(Scenario, String)> {
    let mut scn = scn.clone();
    scn.name = stem(path);
    let text = toml::to_string(&scn).ok()?;
    let mut loaded = load::parse(path, text.clone()).ok()?;
    loaded.scenario.name = scn.name.clone();
    load::validate(&loaded).ok()?;
    Some((loaded.scenario, text))
}

/// Shrink `req`'s failing seed; `log` gets one progress line per kept reduction.
pub fn shrink(req: &Request, log: &mut dyn FnMut(&str)) -> Result<Shrunk, ShrinkError> {
    if req.max_runs == 0 {
        return Err(ShrinkError::ZeroRuns);
    }
    let seed = req.seed;
    let first = run(&req.scenario, seed, &req.bugs);
    if first.outcome == Outcome::Pass {
        return Err(ShrinkError::Passes { seed });
    }
    let target = Target::of(&first);
    let mut runs = 1;
    let diverged = |detail: String| ShrinkError::PinDiverged { seed, detail };

    // Pin the drawn plan and the candidate fixes into the scenario.
    let mut pinned = req.scenario.clone();
    if pinned.faults.swarm {
        crate::runner::swarm::plan(seed).pin(&mut pinned);
    }
    let fixes = req.bugs.fix_names();
    if !fixes.is_empty() {
        let mut mask: Vec<String> = pinned.masked_fixes().iter().map(|f| f.name().to_string()).collect();
        mask.extend(fixes.iter().map(|f| f.to_string()));
        mask.sort();
        mask.dedup();
        pinned.mask_findings = Some(mask);
    }
    let bugs = Bugs(req.bugs.0.clone(), Default::default());
    let (pinned, text) =
        normalize(&pinned, &req.path).ok_or_else(|| diverged("the pinned scenario does not load".into()))?;
    let mut pinned_same_hash = None;
    let start_run = if req.scenario.faults.swarm || !fixes.is_empty() {
        let r = run(&pinned, seed, &bugs);
        runs += 1;
        if Target::of(&r) != target {
            return Err(diverged(format!("{} instead of {}", Target::of(&r).describe(), target.describe())));
        }
        pinned_same_hash = Some(r.trace_hash == first.trace_hash);
        r
    } else {
        first
    };

    // With bugs on, the bugs must stay the cause: the bugs-off run passes, or (on a
    // scenario the fixed core fails too) at least avoids the target invariant.
    let mut off_must_pass = None;
    if !bugs.0.is_empty() {
        let off = run(&pinned, seed, &Bugs::none());
        runs += 1;
        if off.outcome == Outcome::Pass {
            off_must_pass = Some(true);
        } else if violates(&off, &target) {
            return Err(ShrinkError::BugsNotCause { seed, what: target.describe() });
        } else {
            off_must_pass = Some(false);
        }
    }

    let mut s = Shrinker {
        seed,
        bugs,
        off_must_pass,
        target,
        max_events: start_run.events,
        base: req.scenario.clone(),
        best: pinned.clone(),
        best_run: start_run.clone(),
        best_text: text.clone(),
        path: req.path.clone(),
        runs,
        max_runs: req.max_runs,
        invalid: 0,
        stop: None,
        seen: BTreeSet::from([text]),
        kept: 0,
        log,
    };
    for _ in 0..MAX_ROUNDS {
        s.kept = 0;
        passes::round(&mut s);
        if s.kept == 0 || s.stop.is_some() {
            break;
        }
    }
    Ok(Shrunk {
        start: pinned,
        start_run,
        best: s.best,
        best_run: s.best_run,
        best_text: s.best_text,
        runs: s.runs,
        invalid: s.invalid,
        stop: s.stop,
        pinned_same_hash,
        control: off_must_pass == Some(false),
    })
}

impl Shrinker<'_> {
    fn stopped(&self) -> bool {
        self.stop.is_some()
    }

    /// Run a candidate; keep it if it fails the same way. `what` names the reduction for
    /// the progress line.
    fn try_candidate(&mut self, cand: &Scenario, what: &str) -> bool {
        if self.stopped() {
            return false;
        }
        let Some((cand, text)) = normalize(cand, &self.path) else {
            self.invalid += 1;
            return false;
        };
        if !self.seen.insert(text.clone()) {
            return false;
        }
        if crate::interrupt::requested() {
            self.stop = Some(Stop::Interrupted);
            return false;
        }
        if self.runs >= self.max_runs {
            self.stop = Some(Stop::Budget);
            return false;
        }
        let r = self.counted_run(&cand, &self.bugs.clone());
        let mut keep = Target::of(&r) == self.target && r.events <= self.max_events;
        if keep {
            if let Some(must_pass) = self.off_must_pass {
                if self.runs >= self.max_runs {
                    self.stop = Some(Stop::Budget);
                    return false;
                }
                let off = self.counted_run(&cand, &Bugs::none());
                keep = if must_pass { off.outcome == Outcome::Pass } else { !violates(&off, &self.target) };
            }
        }
        if keep {
            self.best = cand;
            self.best_run = r;
            self.best_text = text;
            self.kept += 1;
            let line = format!(
                "shrink: run {}/{}: {}: {}",
                self.runs,
                self.max_runs,
                what,
                output::Size::of(&self.best, &self.best_run).short()
            );
            (self.log)(&line);
        }
        keep
    }

    fn counted_run(&mut self, scn: &Scenario, bugs: &Bugs) -> RunResult {
        let r = run(scn, self.seed, bugs);
        self.runs += 1;
        if crate::interrupt::after_from_env().is_some_and(|k| self.runs as u64 >= k) {
            crate::interrupt::request();
        }
        r
    }
}

#[cfg(test)]
mod tests;
