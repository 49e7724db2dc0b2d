//! Run reports: `reports/<scenario>-<seed>.md` and `.json` for one run.
//!
//! The centrepiece is the *causal slice* ([`slice`]): walking back from the violations
//! through the typed cause records (`crate::causes`) and the trace records of the
//! entities involved, to the heartbeats, checkpoint rounds, schedule requests, operators
//! and bootstraps that led there, in at most [`SLICE_CAP`] lines named as the scenario
//! names things ([`lines`], `crate::names`), in the style of the "Timeline from logs" of
//! a bug report.
//!
//! - [`entities`]: what a violation or a record is about;
//! - [`slice`]: which records, by priority; [`lines`]: each as named text.

pub mod entities;
pub mod lines;
pub mod slice;

pub use entities::{entities_in, entities_named, record_entities, Entity};
pub use slice::{causal_slice, group_violations, Reason, Slice, SliceLine, ViolationGroup, SLICE_CAP};

use crate::error::CliError;
use crate::result::{RunResult, TraceRecord};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Lifecycle events always belong in the slice (matched on the event name).
const LIFECYCLE: &[&str] = &[
    "capture",
    "campaign",
    "maintainer",
    "bootstrap",
    "changefeed failed",
    "changefeed stopped",
    "changefeed restart",
    "retryable",
    "error",
    "failed",
    "failpoint",
    "node removed",
    "split span by region count",
    "restore merge operator",
    "pause changefeed",
    "resume changefeed",
];
/// Scenario steps that only feed data or wait are not part of the story.
const QUIET_STEPS: &[&str] = &["Insert", "Update", "Delete", "Sleep", "Wait", "EnableFailpoint", "DisableFailpoint"];

pub fn is_lifecycle(r: &TraceRecord) -> bool {
    if r.role == "Scenario" && r.event == "step" {
        return r.fields.iter().any(|(k, v)| k == "step" && !QUIET_STEPS.iter().any(|q| v.starts_with(q)));
    }
    r.role == "Scenario" || LIFECYCLE.iter().any(|l| r.event.contains(l))
}

/// A slice line as the report prints it.
pub fn format_line(l: &SliceLine) -> String {
    l.text().to_string()
}

/// The `.json` report: the run result plus the slice.
#[derive(Serialize)]
struct JsonReport<'a> {
    #[serde(flatten)]
    result: &'a RunResult,
    reproduce: &'a str,
    causal_slice: &'a Slice,
}

pub fn format_markdown(r: &RunResult, reproduce: &str, s: &Slice) -> String {
    let mut o = String::new();
    let bugs = if r.bugs.is_empty() { "none".to_string() } else { r.bugs.join(", ") };
    let _ = writeln!(o, "# {} seed {}: {}\n", r.scenario, r.seed, r.outcome.as_str());
    let _ = writeln!(o, "- scenario: `{}`", r.scenario);
    let _ = writeln!(o, "- seed: {}", r.seed);
    let _ = writeln!(o, "- bugs: {}", bugs);
    let _ = writeln!(o, "- outcome: **{}**", r.outcome.as_str());
    if let Some(n) = crate::result::outcome_note(r.outcome, &r.violations) {
        let _ = writeln!(o, "  ({})", n);
    }
    let _ = writeln!(o, "- trace hash: `{}`", if r.trace_hash.is_empty() { "-" } else { &r.trace_hash });
    let _ = writeln!(
        o,
        "- simulated time: {:.3}s, {} events, {} trace records",
        r.sim_time_ms as f64 / 1000.0,
        r.events,
        r.trace.len()
    );
    let _ = writeln!(o, "- reproduce: `{}`\n", reproduce);
    let _ = writeln!(o, "## Violations\n");
    if r.violations.is_empty() {
        let _ = writeln!(o, "None.");
    }
    for g in &s.violations {
        // The slice below shows each group in full; keep this list to one short line each.
        let d: String = if g.named.chars().count() > 110 {
            g.named.chars().take(107).collect::<String>() + "..."
        } else {
            g.named.clone()
        };
        let times = if g.count > 1 {
            format!("x{} {:.3}s..{:.3}s", g.count, g.first_ms as f64 / 1000.0, g.last_ms as f64 / 1000.0)
        } else {
            format!("at {:.3}s", g.first_ms as f64 / 1000.0)
        };
        let on = if g.tables.is_empty() { String::new() } else { format!(" on {}", g.tables.join(", ")) };
        let _ = writeln!(o, "- `{}` {}{}: {}", g.invariant, times, on, d);
    }
    if let Some(c) = &r.crash {
        let _ = writeln!(o, "- crash: {}", c.replace('\n', " | "));
    }
    let _ = writeln!(o, "\n## Causal slice\n");
    let count = |f: &dyn Fn(&SliceLine) -> bool| s.lines.iter().filter(|l| f(l)).count();
    let records = count(&|l| matches!(l, SliceLine::Record { .. }));
    let causes = count(&|l| matches!(l, SliceLine::Cause { .. }));
    let walked = count(&|l| l.reason() == Reason::Checkpoint);
    let _ = writeln!(
        o,
        "{} of {} trace records and {} of {} cause records (heartbeats, watermarks, checkpoint rounds, schedule \
         requests){}; lifecycle events included{}.\n",
        records,
        s.trace_len,
        causes,
        s.causes_len,
        if walked > 0 {
            format!(", {} of them on the walk back from the checkpoint violation", walked)
        } else {
            String::new()
        },
        if s.omitted > 0 {
            format!("; {} more matching records left out (full trace: `-v`)", s.omitted)
        } else {
            String::new()
        }
    );
    if s.named.is_empty() {
        let _ = writeln!(o, "No entity named by a violation.\n");
    } else {
        let mut by_table: Vec<String> = Vec::new();
        for n in &s.named {
            match &n.entity {
                Entity::Table(_) => by_table.push(n.name.clone()),
                Entity::Dispatcher(d) => by_table.push(format!("{} = {}", n.name, d)),
            }
        }
        let _ = writeln!(o, "Involved: {}.\n", by_table.join(", "));
    }
    if !s.generations.is_empty() {
        let g: Vec<String> = s.generations.iter().enumerate().map(|(i, e)| format!("g{} = {}", i + 1, e)).collect();
        let _ = writeln!(o, "Maintainer generations (epochs): {}.\n", g.join(", "));
    }
    let _ = writeln!(o, "```\n{:>10}  {:<4}  {:<4}  event  fields", "sim-time", "node", "gen");
    for l in &s.lines {
        let _ = writeln!(o, "{}", format_line(l));
    }
    let _ = writeln!(o, "```\n\n## Checks\n");
    if r.checks.is_empty() {
        let _ = writeln!(o, "None ran (the steps did not finish).");
    }
    let passed = r.checks.iter().filter(|c| c.passed).count();
    for c in r.checks.iter().filter(|c| !c.passed) {
        let _ = writeln!(o, "- FAIL `{}`: {}", c.check, c.detail);
    }
    if passed > 0 {
        let names: Vec<&str> = r.checks.iter().filter(|c| c.passed).map(|c| c.check.as_str()).collect();
        let _ = writeln!(o, "- {} passed: {}", passed, names.join(", "));
    }
    let _ = writeln!(o, "\n## Configuration and fault plan\n\n```");
    for c in &r.config {
        let _ = writeln!(o, "{}", c);
    }
    let phases: Vec<String> = r.phases.iter().map(|(p, at)| format!("{} {:.3}s", p, *at as f64 / 1000.0)).collect();
    let _ = writeln!(o, "phases: {}", phases.join(", "));
    let _ = writeln!(o, "```");
    o
}

/// Write `<dir>/<scenario>-<seed>.md` and `.json`, creating `dir`.
pub fn write(dir: &Path, r: &RunResult, reproduce: &str) -> Result<(PathBuf, PathBuf), CliError> {
    std::fs::create_dir_all(dir).map_err(CliError::create_dir("report directory", dir))?;
    let slice = causal_slice(r);
    let stem = format!("{}-{}", r.scenario, r.seed);
    let (md, json) = (dir.join(format!("{}.md", stem)), dir.join(format!("{}.json", stem)));
    let j = serde_json::to_string_pretty(&JsonReport { result: r, reproduce, causal_slice: &slice })
        .map_err(CliError::serialize("report"))?;
    crate::error::write_atomic(&md, format_markdown(r, reproduce, &slice)).map_err(CliError::write_file(&md))?;
    crate::error::write_atomic(&json, j + "\n").map_err(CliError::write_file(&json))?;
    Ok((md, json))
}

#[cfg(test)]
mod tests;
