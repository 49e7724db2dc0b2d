//! The `shrink` command: arguments in, the minimized scenario and its seed file out, and
//! the before/after summary.

use super::{faults, shrink, Request, ShrinkError, Shrunk, Stop};
use crate::args::{parse_bugs, parse_fixes, reproduce_command, ShrinkArgs};
use crate::error::{write_atomic, CliError};
use crate::result::RunResult;
use crate::scenario::{load, Scenario};
use crate::seedfile::{Control, SeedFile};
use crate::target::RunTarget;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// How big a scenario and its run are.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Size {
    pub steps: usize,
    pub checks: usize,
    /// The faults that are on: swarm families, then `faults.<knob>`.
    pub faults: Vec<String>,
    pub tables: usize,
    pub nodes: u32,
    pub events: u64,
    pub sim_time_ms: u64,
}

impl Size {
    pub fn of(scn: &Scenario, r: &RunResult) -> Size {
        Size {
            steps: scn.steps.len(),
            checks: scn.checks.len(),
            faults: faults::active(scn).iter().map(|a| a.name()).collect(),
            tables: scn.tables.len(),
            nodes: scn.cluster.nodes,
            events: r.events,
            sim_time_ms: r.sim_time_ms,
        }
    }

    /// One line for progress and the file header.
    pub fn short(&self) -> String {
        format!(
            "steps {}, faults {}, tables {}, nodes {}, events {}, simulated {}",
            self.steps,
            self.faults.len(),
            self.tables,
            self.nodes,
            self.events,
            secs(self.sim_time_ms)
        )
    }
}

fn secs(ms: u64) -> String {
    format!("{:.3}s", ms as f64 / 1000.0)
}

/// The JSON summary (`--json`).
#[derive(Serialize)]
struct Summary<'a> {
    scenario: &'a str,
    seed: u64,
    bugs: &'a [String],
    outcome: &'a str,
    invariant: Option<String>,
    runs: usize,
    max_runs: usize,
    invalid_candidates: usize,
    stopped: Option<&'static str>,
    pinned_same_hash: Option<bool>,
    before: Size,
    after: Size,
    scenario_file: String,
    seed_file: String,
    reproduce: String,
}

fn stop_name(s: Option<Stop>) -> Option<&'static str> {
    s.map(|s| match s {
        Stop::Budget => "budget",
        Stop::Interrupted => "interrupted",
    })
}

/// `ticdc-sim shrink`.
pub fn cli_shrink(a: &ShrinkArgs) -> Result<(String, i32), CliError> {
    let t = RunTarget::resolve(a.scenario.as_deref(), a.seed.as_deref(), &a.bugs, a.seed_file.as_deref())?;
    let seed = t.seed;
    let bugs = parse_fixes(parse_bugs(&t.bug_names)?, &a.fixes)?;
    if a.max_runs == 0 {
        return Err(ShrinkError::ZeroRuns.into());
    }
    if a.out.exists() && !a.out.is_dir() {
        return Err(ShrinkError::OutNotDir { path: a.out.clone() }.into());
    }
    std::fs::create_dir_all(&a.out).map_err(CliError::create_dir("--out directory", &a.out))?;
    // Bugs joined by '.': a scenario's file name has no '+' (seed file names do).
    let bug_names = if bugs.0.is_empty() { "nobug".to_string() } else { bugs.names().join(".") };
    let stem = format!("{}-{}-{}-min", t.scenario.name, bug_names, seed);
    crate::interrupt::install();
    let req = Request {
        scenario: t.scenario.clone(),
        seed,
        bugs,
        max_runs: a.max_runs,
        path: a.out.join(format!("{}.toml", stem)),
    };
    let shrunk = shrink(&req, &mut |line| eprintln!("{}", line))?;
    // A seed file with a bugs-off control must name a findings scenario (see `replay`).
    let dir = if shrunk.control { a.out.join("findings") } else { a.out.clone() };
    std::fs::create_dir_all(&dir).map_err(CliError::create_dir("--out directory", &dir))?;
    let toml_path = dir.join(format!("{}.toml", stem));
    let json_path = dir.join(format!("{}.json", stem));
    let (toml_text, seed_file, reproduce) = files(a, &t, &shrunk, &toml_path);
    write_atomic(&toml_path, &toml_text).map_err(CliError::write_file(&toml_path))?;
    write_atomic(&json_path, seed_file.to_json()).map_err(CliError::write_file(&json_path))?;
    // What was written must load as it was run (the candidates went through the same
    // parser and validation, but not through the file name check).
    load::load_path(&toml_path)?;
    let before = Size::of(&shrunk.start, &shrunk.start_run);
    let after = Size::of(&shrunk.best, &shrunk.best_run);
    let code = if shrunk.stop == Some(Stop::Interrupted) { crate::interrupt::EXIT_INTERRUPTED } else { 0 };
    let out = if a.json {
        let s = Summary {
            scenario: &t.scenario_ref,
            seed,
            bugs: &seed_file.bugs,
            outcome: shrunk.best_run.outcome.as_str(),
            invariant: seed_file.expect.invariant.clone(),
            runs: shrunk.runs,
            max_runs: a.max_runs,
            invalid_candidates: shrunk.invalid,
            stopped: stop_name(shrunk.stop),
            pinned_same_hash: shrunk.pinned_same_hash,
            before,
            after,
            scenario_file: toml_path.display().to_string(),
            seed_file: json_path.display().to_string(),
            reproduce,
        };
        serde_json::to_string(&s).map_err(CliError::serialize("summary"))? + "\n"
    } else {
        human(a.max_runs, &t, &shrunk, &toml_path, &json_path, &reproduce)
    };
    Ok((out, code))
}

/// The minimized scenario's text (a header, then the scenario), its seed file and the
/// command that reproduces it.
fn files(a: &ShrinkArgs, t: &RunTarget, s: &Shrunk, toml_path: &Path) -> (String, SeedFile, String) {
    let reference = load::seed_file_reference(toml_path);
    let names: Vec<&str> = s.best_run.bugs.iter().map(|b| b.as_str()).collect();
    let reproduce = reproduce_command(&reference, s.best_run.seed, &names, &[]);
    let target = crate::fuzz::first_invariant(&s.best_run);
    let what = match &target {
        Some(i) => format!("{} ({})", s.best_run.outcome.as_str(), i),
        None => s.best_run.outcome.as_str().to_string(),
    };
    let mut cmd = format!("ticdc-sim shrink {}", t.args());
    for f in &a.fixes {
        let _ = write!(cmd, " --fix {}", f);
    }
    let mut head = String::new();
    let _ = writeln!(head, "# Written by `{}` ({} runs): fails as {}.", cmd, s.runs, what);
    let _ = writeln!(head, "# before: {}", Size::of(&s.start, &s.start_run).short());
    let _ = writeln!(head, "# after:  {}", Size::of(&s.best, &s.best_run).short());
    let _ = writeln!(head, "# reproduce: {}", reproduce);
    let note = format!("shrunk by `{}` ({} runs); fails as {}", cmd, s.runs, what);
    let mut f = SeedFile::of(&s.best_run, &reference, note, s.best.engine);
    if s.control {
        f.control = Some(Control { bugs: vec![], absent: target.into_iter().collect() });
    }
    (format!("{}\n{}", head, s.best_text), f, reproduce)
}

fn human(max_runs: usize, t: &RunTarget, s: &Shrunk, toml_path: &Path, json_path: &Path, reproduce: &str) -> String {
    let (before, after) = (&Size::of(&s.start, &s.start_run), &Size::of(&s.best, &s.best_run));
    let mut o = String::new();
    let bugs = if t.bug_names.is_empty() { "none".to_string() } else { t.bug_names.join(",") };
    let what = match crate::fuzz::first_invariant(&s.best_run) {
        Some(i) => format!("{} ({})", s.best_run.outcome.as_str(), i),
        None => s.best_run.outcome.as_str().to_string(),
    };
    let _ = writeln!(o, "shrink {} seed {} bugs {}: fails as {}", t.scenario_ref, t.seed, bugs, what);
    let stop = match s.stop {
        None => "no smaller candidate fails the same way".to_string(),
        Some(Stop::Budget) => format!("stopped at the run budget (--max-runs {})", max_runs),
        Some(Stop::Interrupted) => "interrupted: the best scenario so far is written".to_string(),
    };
    let _ = writeln!(o, "runs: {} ({} invalid candidates skipped); {}", s.runs, s.invalid, stop);
    if let Some(same) = s.pinned_same_hash {
        let _ = writeln!(
            o,
            "swarm plan pinned: {}",
            if same { "same trace hash as the swarm run" } else { "same failure, another trace hash" }
        );
    }
    let rows = [
        ("steps", before.steps.to_string(), after.steps.to_string()),
        ("checks", before.checks.to_string(), after.checks.to_string()),
        ("faults", before.faults.len().to_string(), after.faults.len().to_string()),
        ("tables", before.tables.to_string(), after.tables.to_string()),
        ("nodes", before.nodes.to_string(), after.nodes.to_string()),
        ("events", before.events.to_string(), after.events.to_string()),
        ("simulated time", secs(before.sim_time_ms), secs(after.sim_time_ms)),
    ];
    let _ = writeln!(o, "  {:<16}{:>12}  {:>12}", "", "before", "after");
    for (k, b, f) in rows {
        let _ = writeln!(o, "  {:<16}{:>12}  {:>12}", k, b, f);
    }
    let list = |v: &[String]| if v.is_empty() { "none".to_string() } else { v.join(", ") };
    let _ = writeln!(o, "faults before: {}", list(&before.faults));
    let _ = writeln!(o, "faults after:  {}", list(&after.faults));
    let _ = writeln!(o, "scenario: {}", toml_path.display());
    let _ = writeln!(o, "seed file: {}", json_path.display());
    let _ = writeln!(o, "reproduce: {}", reproduce);
    let _ = writeln!(o, "replay: cargo run --release -- replay {}", json_path.display());
    o
}
