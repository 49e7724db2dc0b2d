//! Run reports: `reports/<scenario>-<seed>.md` and `.json` for one run.
//!
//! The centrepiece is the *causal slice*: the trace records that touch the entities the
//! first violation names (dispatcher IDs, table IDs), plus cluster lifecycle events
//! (captures started/killed, owner campaigns, maintainer creation and bootstrap,
//! changefeed errors and stops, failpoints, fault steps). A full trace has hundreds to
//! thousands of records; the slice is capped so a reader sees the story in one screen,
//! in the style of the "Timeline from logs" of a bug report.
//!
//! Matching is generic on purpose: entities are pulled out of free text (the violation
//! detail, trace field values) by shape, and trace fields are considered by name
//! (`dispatcher`, `table`, `span`, `op`, `id`, `detail`, ...), so new core events are
//! picked up without touching this module.

use crate::error::CliError;
use crate::result::{RunResult, TraceRecord, Violation};
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// At most this many lines in the slice (violation lines included).
pub const SLICE_CAP: usize = 42;
/// Of the cap, at most this many records after the first violation (the aftermath:
/// errors, restarts).
const AFTER_CAP: usize = 21;

/// Something a violation can be about.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Entity {
    Dispatcher(String),
    Table(i64),
}

impl std::fmt::Display for Entity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Entity::Dispatcher(d) => write!(f, "dispatcher {}", d),
            Entity::Table(t) => write!(f, "table {}", t),
        }
    }
}

/// Entities named in free text: 16-hex-digit tokens are dispatcher IDs; a number after
/// the word `table` (or `tableID`, `table_id`) and a span's `t<ID>` prefix are table IDs.
pub fn entities_in(text: &str) -> BTreeSet<Entity> {
    let mut out = BTreeSet::new();
    let tokens: Vec<&str> =
        text.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').filter(|t| !t.is_empty()).collect();
    for (i, t) in tokens.iter().enumerate() {
        if t.len() == 16 && t.chars().all(|c| c.is_ascii_hexdigit()) {
            out.insert(Entity::Dispatcher(t.to_ascii_lowercase()));
        } else if let Some(id) = t.strip_prefix('t').and_then(|n| n.parse::<i64>().ok()) {
            out.insert(Entity::Table(id));
        } else if matches!(t.to_ascii_lowercase().as_str(), "table" | "tableid" | "table_id") {
            if let Some(id) = tokens.get(i + 1).and_then(|n| n.parse::<i64>().ok()) {
                out.insert(Entity::Table(id));
            }
        }
    }
    out
}

/// Trace fields whose values can name an entity (substring of the field name).
const ENTITY_KEYS: &[&str] = &["dispatcher", "table", "span", "op", "id", "detail", "error", "reason", "trigger"];

/// Entities a trace record touches.
pub fn record_entities(r: &TraceRecord) -> BTreeSet<Entity> {
    let mut out = BTreeSet::new();
    for (k, v) in &r.fields {
        if !ENTITY_KEYS.iter().any(|h| k.contains(h)) {
            continue;
        }
        match (k.as_str(), v.parse::<i64>()) {
            ("table", Ok(id)) => {
                out.insert(Entity::Table(id));
            }
            _ => out.extend(entities_in(v)),
        }
    }
    out
}

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

/// One line of the slice: a trace record or a violation.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SliceLine {
    Record {
        #[serde(flatten)]
        record: TraceRecord,
        /// Why it is in the slice: `violation`, `entity` or `lifecycle`.
        reason: &'static str,
    },
    Violation(Violation),
}

impl SliceLine {
    fn at_ms(&self) -> u64 {
        match self {
            SliceLine::Record { record, .. } => record.at_ms,
            SliceLine::Violation(v) => v.at_ms,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Slice {
    /// The entities of the first violation (plus dispatchers of its tables).
    pub entities: Vec<Entity>,
    pub lines: Vec<SliceLine>,
    /// Matching records left out to respect the cap.
    pub omitted: usize,
    pub trace_len: usize,
}

/// The causal slice of a run (for a passing run: its lifecycle events).
pub fn causal_slice(r: &RunResult) -> Slice {
    let first = r.violations.first();
    let mut ents = first.map(|v| entities_in(&v.detail)).unwrap_or_default();
    // One expansion round: a table-level violation ("table 104: holes ...") is about the
    // dispatchers of that table, and records like "operator finished" name only those.
    let tables: BTreeSet<Entity> = ents.iter().filter(|e| matches!(e, Entity::Table(_))).cloned().collect();
    if !tables.is_empty() {
        // Only records up to the violation: later incarnations of the table (after a
        // restart, say) are not part of the story.
        let until = first.map(|v| v.at_ms).unwrap_or(u64::MAX);
        for rec in r.trace.iter().take_while(|rec| rec.at_ms <= until) {
            let re = record_entities(rec);
            if re.iter().any(|e| tables.contains(e)) {
                ents.extend(re.into_iter().filter(|e| matches!(e, Entity::Dispatcher(_))));
            }
        }
    }
    let mut lines: Vec<SliceLine> = Vec::new();
    for rec in &r.trace {
        let reason = if rec.event == VIOLATION_EVENT {
            "violation"
        } else if !ents.is_empty() && record_entities(rec).iter().any(|e| ents.contains(e)) {
            "entity"
        } else if is_lifecycle(rec) {
            "lifecycle"
        } else {
            continue;
        };
        lines.push(SliceLine::Record { record: rec.clone(), reason });
    }
    let matched = lines.len();
    let lines = match first {
        Some(v) => around(lines, v, &r.violations),
        None => lines.into_iter().take(SLICE_CAP).collect(),
    };
    let shown = lines.iter().filter(|l| matches!(l, SliceLine::Record { .. })).count();
    Slice { entities: ents.into_iter().collect(), lines, omitted: matched - shown, trace_len: r.trace.len() }
}

/// The event of the trace record the world writes for each violation it detects.
const VIOLATION_EVENT: &str = "INVARIANT VIOLATED";

/// Whether the trace has a record of this violation (safety violations are recorded as
/// they happen; liveness and end-check failures are only known at the end).
fn recorded(v: &Violation, trace: &[SliceLine]) -> bool {
    trace.iter().any(|l| matches!(l, SliceLine::Record { record: r, .. } if r.event == VIOLATION_EVENT && r.at_ms == v.at_ms && r.fields.iter().any(|(k, d)| k == "detail" && *d == v.detail)))
}

/// Keep the records leading up to the first violation (the story) and a few after it,
/// and interleave by time the violations the trace does not record.
fn around(lines: Vec<SliceLine>, first: &Violation, all: &[Violation]) -> Vec<SliceLine> {
    let vios: Vec<&Violation> = all.iter().take(3).filter(|v| !recorded(v, &lines)).collect();
    let split = lines.partition_point(|l| l.at_ms() <= first.at_ms);
    let (before, after) = lines.split_at(split);
    let room = SLICE_CAP.saturating_sub(vios.len());
    // The aftermath: violations and records of the involved entities first, then
    // lifecycle records, shown in time order.
    let rank = |l: &SliceLine| match l {
        SliceLine::Record { reason: "violation", .. } | SliceLine::Violation(_) => 0,
        SliceLine::Record { reason: "entity", .. } => 1,
        _ => 2,
    };
    let mut idx: Vec<usize> = (0..after.len()).collect();
    idx.sort_by_key(|i| (rank(&after[*i]), *i));
    let mut keep: Vec<usize> = idx.into_iter().take(AFTER_CAP.min(room)).collect();
    keep.sort();
    let n_before = before.len().min(room - keep.len());
    let mut out: Vec<SliceLine> =
        before[before.len() - n_before..].iter().cloned().chain(keep.iter().map(|i| after[*i].clone())).collect();
    for v in vios {
        let at = out.partition_point(|l| l.at_ms() <= v.at_ms);
        out.insert(at, SliceLine::Violation(v.clone()));
    }
    out
}

/// `simulated-time  node  epoch  event  key fields` (the changefeed ID is left out:
/// every scenario has one changefeed).
pub fn format_line(l: &SliceLine) -> String {
    match l {
        SliceLine::Record { record: r, reason: "violation" } => {
            let get = |k: &str| r.fields.iter().find(|(f, _)| f == k).map(|(_, v)| v.as_str()).unwrap_or("?");
            format!("{:>9.3}s  !!!   VIOLATION {}: {}", r.at_ms as f64 / 1000.0, get("invariant"), get("detail"))
        }
        SliceLine::Record { record: r, .. } => {
            let f: Vec<String> =
                r.fields.iter().filter(|(k, _)| k != "changefeed").map(|(k, v)| format!("{}={}", k, v)).collect();
            let epoch = if r.epoch == 0 { "-".to_string() } else { format!("e={}", r.epoch) };
            format!("{:>9.3}s  {:<4}  {:<15}  {}  {}", r.at_ms as f64 / 1000.0, r.node, epoch, r.event, f.join(" "))
                .trim_end()
                .to_string()
        }
        SliceLine::Violation(v) => {
            format!("{:>9.3}s  !!!   VIOLATION {}: {}", v.at_ms as f64 / 1000.0, v.invariant, v.detail)
        }
    }
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
    for v in &r.violations {
        // The slice below shows each in full; keep this list to one short line each.
        let d: String = if v.detail.chars().count() > 110 {
            v.detail.chars().take(107).collect::<String>() + "..."
        } else {
            v.detail.clone()
        };
        let _ = writeln!(o, "- `{}` at {:.3}s: {}", v.invariant, v.at_ms as f64 / 1000.0, d);
    }
    if let Some(c) = &r.crash {
        let _ = writeln!(o, "- crash: {}", c.replace('\n', " | "));
    }
    let _ = writeln!(o, "\n## Causal slice\n");
    let ents: Vec<String> = s.entities.iter().map(|e| e.to_string()).collect();
    let about = if ents.is_empty() {
        "no entities named by a violation; lifecycle events only".to_string()
    } else {
        format!("entities of the first violation: {}", ents.join(", "))
    };
    let shown = s.lines.iter().filter(|l| matches!(l, SliceLine::Record { .. })).count();
    let _ = writeln!(
        o,
        "{} trace records of {} ({}), lifecycle events included{}.\n",
        shown,
        s.trace_len,
        about,
        if s.omitted > 0 {
            format!("; {} more matching records left out (full trace: `-v`)", s.omitted)
        } else {
            String::new()
        }
    );
    let _ = writeln!(o, "```\n{:>10}  {:<4}  {:<15}  event  fields", "sim-time", "node", "epoch");
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
mod tests {
    use super::*;

    fn rec(at_ms: u64, event: &str, fields: &[(&str, &str)]) -> TraceRecord {
        TraceRecord {
            at_ms,
            node: "8301".into(),
            role: "DispatcherManager".into(),
            epoch: 7,
            event: event.into(),
            fields: fields.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        }
    }

    #[test]
    fn entities_from_violation_text() {
        let e = entities_in("table 106: dispatchers 68731c8c971a94e5 on 8301 t106[0,100) and b030db3d9011ec6f on 8302 t106[0,100) cover the same keys");
        let want: BTreeSet<Entity> = [
            Entity::Table(106),
            Entity::Dispatcher("68731c8c971a94e5".into()),
            Entity::Dispatcher("b030db3d9011ec6f".into()),
        ]
        .into_iter()
        .collect();
        assert_eq!(e, want);
        assert!(entities_in("event budget of 100000 exhausted").is_empty());
    }

    #[test]
    fn slice_keeps_entity_and_lifecycle_records() {
        let trace = vec![
            rec(1, "create dispatcher", &[("dispatcher", "68731c8c971a94e5"), ("table", "106")]),
            rec(2, "create dispatcher", &[("dispatcher", "1111111111111111"), ("table", "104")]),
            rec(3, "operator finished", &[("operator", "add 2222222222222222 -> 8302")]),
            rec(4, "changefeed stopped", &[]),
            rec(5, "create dispatcher", &[("dispatcher", "2222222222222222"), ("span", "t106[0,5)")]),
        ];
        let mut r = crate::runner::crash_result(
            &toml::from_str("name = \"x\"\ndescription = \"x\"\n").unwrap(),
            1,
            &Default::default(),
            String::new(),
        );
        r.trace = trace;
        r.violations = vec![Violation {
            invariant: "one-dispatcher-per-key".into(),
            at_ms: 5,
            detail: "table 106: overlap".into(),
        }];
        let s = causal_slice(&r);
        let events: Vec<u64> = s.lines.iter().map(|l| l.at_ms()).collect();
        // 1 and 5 name table 106; 3 names a dispatcher of table 106 (known from 5, which is
        // not later than the violation); 4 is lifecycle; the violation sits at its time.
        assert_eq!(events, vec![1, 3, 4, 5, 5]);
        assert!(matches!(s.lines[4], SliceLine::Violation(_)));
        // A dispatcher of the table that only appears after the violation is not pulled in.
        r.violations[0].at_ms = 4;
        let s = causal_slice(&r);
        let events: Vec<u64> = s.lines.iter().map(|l| l.at_ms()).collect();
        assert_eq!(events, vec![1, 4, 4, 5]);
        assert!(format_markdown(&r, "cmd", &s).contains("VIOLATION one-dispatcher-per-key"));
    }
}
