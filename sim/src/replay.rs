//! `replay`: rerun seed files and compare with what they recorded.
//!
//! An outcome or invariant that differs from the file is a failure: the behaviour the
//! seed pins down changed. A trace hash that differs alone is only a warning: any change
//! to the core or the simulator reorders events, and the file still proves what it
//! should. A file that expects a failure with bugs on also proves the bugs are the
//! cause: the same seed with the bugs off must pass, unless its scenario is an open
//! finding's (under `scenarios/findings/`, which the fixed core fails too): then the
//! bugs-off run must only avoid the control's `absent` invariants (and a control naming
//! no bugs is that run).

use crate::args::{parse_bugs, parse_fixes};
use crate::error::CliError;
use crate::fuzz::first_invariant;
use crate::result::{Outcome, RunResult};
use crate::runner::{run_on_fresh_thread, RunOptions};
use crate::scenario::Scenario;
use crate::seedfile::{SeedFile, SeedFileError};
use core_sched::bugs::Bugs;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A seed file with its scenario loaded and bugs parsed: ready to run.
pub struct Prepared {
    pub path: PathBuf,
    pub file: SeedFile,
    pub scenario: Scenario,
    pub bugs: Bugs,
    /// The control run's bugs, if the file has one.
    pub control_bugs: Option<Bugs>,
    /// The file's bugs plus its `fixed_by` candidate fixes, if it names any.
    pub fixed_bugs: Option<Bugs>,
}

/// Load and check one seed file (bad input is an `Err` naming the file).
pub fn prepare(path: &Path) -> Result<Prepared, SeedFileError> {
    let file = SeedFile::load(path)?;
    let p = || path.to_path_buf();
    let scenario = file.run_scenario(path)?;
    let names = |field: &'static str| move |source| SeedFileError::Name { path: p(), field, source };
    let bugs = parse_bugs(&file.bugs).map_err(names("bugs"))?;
    let control_bugs = match &file.control {
        Some(c) => Some(parse_bugs(&c.bugs).map_err(names("control"))?),
        None => None,
    };
    let fixed_bugs = match file.fixed_by.is_empty() {
        true => None,
        false => Some(parse_fixes(bugs.clone(), &file.fixed_by).map_err(names("fixed_by"))?),
    };
    for inv in file.expect.also.iter().chain(file.control.iter().flat_map(|c| c.absent.iter())) {
        if !crate::checkers::is_known_invariant(inv) && !inv.starts_with("check:") {
            return Err(SeedFileError::UnknownInvariant { path: p(), name: inv.clone() });
        }
    }
    // A bugs-off control replaces the bugs-off-must-pass check, so it must be as strong
    // where it applies: only on an open finding's scenario (one the fixed core fails), and
    // the fixed core must avoid every invariant the file claims for its bugs.
    if let (Some(c), Some(cb)) = (&file.control, &control_bugs) {
        if cb.0.is_empty() && !bugs.0.is_empty() {
            if !file.on_finding_scenario() {
                return Err(SeedFileError::BugsOffControlOutsideFindings {
                    path: p(),
                    scenario: file.scenario.clone(),
                });
            }
            let mut claimed = file.expect.invariant.iter().chain(file.expect.also.iter());
            if let Some(missing) = claimed.find(|i| !c.absent.contains(i)) {
                return Err(SeedFileError::BugsOffControlMissesInvariant { path: p(), missing: missing.clone() });
            }
        }
    }
    Ok(Prepared { path: path.to_path_buf(), file, scenario, bugs, control_bugs, fixed_bugs })
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Ok,
    /// Outcome and invariant as expected, only the trace hash changed.
    Warning(String),
    /// Something the file pins down changed; one message per mismatch.
    Fail(Vec<String>),
}

/// Rerun a prepared seed file and judge it.
pub fn replay(p: &Prepared) -> Verdict {
    let opts = RunOptions::default();
    let r = run_on_fresh_thread(&p.scenario, p.file.seed, &p.bugs, &opts);
    let mut fails = Vec::new();
    let (want, got) = (expected(&p.file), describe(&r));
    if want != got {
        fails.push(format!("expected {}, got {}", want, got));
    }
    let violated = crate::fuzz::all_invariants(&r);
    for inv in &p.file.expect.also {
        if !violated.contains(inv) {
            fails.push(format!("expected {} to be violated too, got [{}]", inv, violated.join(", ")));
        }
    }
    if let (Some(c), Some(cb)) = (&p.file.control, &p.control_bugs) {
        let ctl = run_on_fresh_thread(&p.scenario, p.file.seed, cb, &opts);
        let ctl_violated = crate::fuzz::all_invariants(&ctl);
        for inv in c.absent.iter().filter(|i| ctl_violated.contains(i)) {
            fails.push(format!(
                "control run (bugs {}) violates {} too, so the file's bugs are not its cause",
                c.bugs.join(","),
                inv
            ));
        }
    }
    let control_is_bugs_off = p.control_bugs.as_ref().is_some_and(|b| b.0.is_empty());
    if !p.bugs.0.is_empty() && p.file.expect.outcome != Outcome::Pass && !control_is_bugs_off {
        let clean = run_on_fresh_thread(&p.scenario, p.file.seed, &Bugs::none(), &opts);
        match &p.file.control {
            // An open finding's scenario fails on the fixed core too: there the bugs-off
            // run must only avoid what the control says the bugs cause.
            Some(c) if p.file.on_finding_scenario() => {
                let clean_violated = crate::fuzz::all_invariants(&clean);
                for inv in c.absent.iter().filter(|i| clean_violated.contains(i)) {
                    fails
                        .push(format!("with the bugs off: violates {} too, so the file's bugs are not its cause", inv));
                }
            }
            _ if clean.outcome != Outcome::Pass => {
                fails.push(format!("with the bugs off: expected pass, got {}", describe(&clean)));
            }
            _ => {}
        }
    }
    if let Some(fb) = &p.fixed_bugs {
        let fixed = run_on_fresh_thread(&p.scenario, p.file.seed, fb, &opts);
        if fixed.outcome != Outcome::Pass {
            fails.push(format!(
                "with the fixes {}: expected pass, got {}",
                p.file.fixed_by.join(","),
                describe(&fixed)
            ));
        }
    }
    if !fails.is_empty() {
        return Verdict::Fail(fails);
    }
    if r.trace_hash != p.file.trace_hash {
        return Verdict::Warning(format!(
            "trace hash changed (code changed?): recorded {}, now {}",
            p.file.trace_hash, r.trace_hash
        ));
    }
    Verdict::Ok
}

fn expected(f: &SeedFile) -> String {
    match &f.expect.invariant {
        Some(i) => format!("{} ({})", f.expect.outcome.as_str(), i),
        None => f.expect.outcome.as_str().to_string(),
    }
}

fn describe(r: &RunResult) -> String {
    match first_invariant(r) {
        Some(i) => format!("{} ({})", r.outcome.as_str(), i),
        None => r.outcome.as_str().to_string(),
    }
}

/// One line per file: `ok`, `warning:` or `FAIL`.
pub fn format_line(p: &Prepared, v: &Verdict) -> String {
    let bugs = if p.file.bugs.is_empty() { "none".to_string() } else { p.file.bugs.join(",") };
    let what = format!("{} seed {} bugs {}", p.file.scenario, p.file.seed, bugs);
    match v {
        Verdict::Ok => format!("ok       {}: {}: {}\n", p.path.display(), what, expected(&p.file)),
        Verdict::Warning(w) => format!("warning: {}: {}: {}\n", p.path.display(), what, w),
        Verdict::Fail(f) => format!("FAIL     {}: {}: {}\n", p.path.display(), what, f.join("; ")),
    }
}

/// The `replay` command: every file is checked before any runs, so a malformed file is
/// reported (exit 2) without waiting for the others.
pub fn cli_replay(arg: &str) -> Result<(String, i32), CliError> {
    let files = crate::seedfile::collect(Path::new(arg))?;
    if files.is_empty() {
        return Err(CliError::NoSeedFiles { what: "replay", path: arg.into() });
    }
    let prepared = files.iter().map(|f| prepare(f)).collect::<Result<Vec<_>, _>>()?;
    let (mut out, mut warnings, mut failed) = (String::new(), 0, 0);
    let mut stdout = std::io::stdout();
    for p in &prepared {
        let v = replay(p);
        let line = format_line(p, &v);
        // Print as we go: a corpus can take a while, and CI logs should show progress.
        let _ = std::io::Write::write_all(&mut stdout, line.as_bytes());
        match v {
            Verdict::Ok => {}
            Verdict::Warning(_) => warnings += 1,
            Verdict::Fail(_) => failed += 1,
        }
    }
    let ok = prepared.len() - warnings - failed;
    let _ = writeln!(
        out,
        "replayed {} file{} from {}: {} ok, {} warning{}, {} failed",
        prepared.len(),
        if prepared.len() == 1 { "" } else { "s" },
        arg,
        ok,
        warnings,
        if warnings == 1 { "" } else { "s" },
        failed
    );
    Ok((out, if failed > 0 { 1 } else { 0 }))
}
