//! What one seed's run produces.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Pass,
    Safety,
    Liveness,
    Crash,
    Nondeterminism,
}

impl Outcome {
    pub fn exit_code(self) -> i32 {
        match self {
            Outcome::Pass => 0,
            Outcome::Safety => 1,
            Outcome::Liveness => 3,
            Outcome::Crash => 4,
            Outcome::Nondeterminism => 5,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Safety => "safety",
            Outcome::Liveness => "liveness",
            Outcome::Crash => "crash",
            Outcome::Nondeterminism => "nondeterminism",
        }
    }
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Violation {
    pub invariant: String,
    pub at_ms: u64,
    pub detail: String,
}

/// A failed end check that proves wrong data downstream or a wrong protocol value: a
/// sync-diff (`sync_diff`, `sync_diff snapshot=..`) or a `trace_field` assertion. Every
/// other failed check (counts, convergence-like waits) is a liveness failure.
pub fn is_safety_check(check: &str) -> bool {
    check.starts_with("sync_diff") || check.starts_with("trace_field")
}

/// Whether a violation (an invariant name, or `check:<check>`) is a safety violation.
/// `converges` is the one liveness invariant; a failed check is safety per
/// [`is_safety_check`].
pub fn is_safety_violation(invariant: &str) -> bool {
    match invariant.strip_prefix("check:") {
        Some(check) => is_safety_check(check),
        None => invariant != crate::checkers::CONVERGES,
    }
}

/// A run's violations in the order its outcome reads them: the invariants fired during
/// the run, then the liveness failure (`converges`), then the failed end checks (all
/// evaluated at `at_ms`), safety checks first.
pub fn order_violations(
    invariants: Vec<Violation>,
    liveness: &[Violation],
    checks: &[CheckResult],
    at_ms: u64,
) -> Vec<Violation> {
    let mut violations = invariants;
    violations.extend(liveness.iter().cloned());
    let mut failed: Vec<&CheckResult> = checks.iter().filter(|c| !c.passed).collect();
    failed.sort_by_key(|c| !is_safety_check(&c.check));
    violations.extend(failed.into_iter().map(|c| Violation {
        invariant: format!("check:{}", c.check),
        at_ms,
        detail: c.detail.clone(),
    }));
    violations
}

/// The outcome of a run is that of its first violation (`violations` in the run's order:
/// invariants fired during the run, then `converges`, then the failed end checks, safety
/// checks first). A run that did not converge and then fails `sync_diff` is a liveness
/// failure: the rows it misses are the ones it never got to replicate
/// ([`outcome_note`] says so in the report).
pub fn outcome_of(violations: &[Violation]) -> Outcome {
    match violations.first() {
        None => Outcome::Pass,
        Some(v) if is_safety_violation(&v.invariant) => Outcome::Safety,
        Some(_) => Outcome::Liveness,
    }
}

/// Why a liveness run also lists safety checks: one line for the report, or none.
pub fn outcome_note(outcome: Outcome, violations: &[Violation]) -> Option<String> {
    if outcome != Outcome::Liveness {
        return None;
    }
    let later: Vec<&str> =
        violations.iter().filter(|v| is_safety_violation(&v.invariant)).map(|v| v.invariant.as_str()).collect();
    if later.is_empty() {
        return None;
    }
    Some(format!(
        "liveness, not safety: the first violation is `{}`; {} failed after it, on a run that had not converged (rows it \
         never replicated)",
        violations[0].invariant,
        later.join(", ")
    ))
}

#[derive(Clone, Debug, Serialize)]
pub struct CheckResult {
    pub check: String,
    pub passed: bool,
    pub detail: String,
}

/// One structured trace record: simulated time, node, role, epoch, event, fields.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct TraceRecord {
    pub at_ms: u64,
    pub node: String,
    /// Role, event and field names are literals but for a few tools' records: no copy.
    pub role: Cow<'static, str>,
    pub epoch: u64,
    pub event: Cow<'static, str>,
    pub fields: Vec<(Cow<'static, str>, String)>,
}

impl TraceRecord {
    pub fn line(&self) -> String {
        let f: Vec<String> = self.fields.iter().map(|(k, v)| format!("{}={}", k, v)).collect();
        format!(
            "{:>9.3}s {} {:<17} e={} {} {}",
            self.at_ms as f64 / 1000.0,
            self.node,
            self.role,
            self.epoch,
            self.event,
            f.join(" ")
        )
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    pub scenario: String,
    pub seed: u64,
    pub bugs: Vec<String>,
    /// Candidate fixes switched on (`--fix`); absent from the JSON when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fixes: Vec<String>,
    pub outcome: Outcome,
    pub violations: Vec<Violation>,
    /// Running hash over every delivered message and state change, as 16 hex digits.
    pub trace_hash: String,
    pub sim_time_ms: u64,
    pub wall_ms: u64,
    /// Protocol steps executed (handled messages, ticks, storage completions).
    pub events: u64,
    /// Of `events`: wake-ups of a role's loop on a capture that did not hold the role
    /// (nothing ran; none under the `role-loops` engine).
    #[serde(skip)]
    pub idle_steps: u64,
    /// The configuration drawn from the seed (fault plan included), one `key = value` per line.
    pub config: Vec<String>,
    pub phases: Vec<(String, u64)>,
    pub checks: Vec<CheckResult>,
    #[serde(skip)]
    pub trace: Vec<TraceRecord>,
    /// A panic message, for `crash`.
    pub crash: Option<String>,
    /// What the network did (fault counters).
    #[serde(default)]
    pub net: NetStats,
    /// How often goroutines TiCDC runs concurrently interleaved at a lock boundary, by
    /// kind (`crate::world::INTERLEAVE_*`), counted from typed observations.
    #[serde(skip)]
    pub interleavings: std::collections::BTreeMap<String, u64>,
    /// How often the run passed each of the core's coverage points.
    #[serde(skip)]
    pub coverage: core_sched::coverage::Hits,
    /// Typed cause records (heartbeats, watermarks, checkpoint rounds, schedule requests)
    /// for the report's causal slice.
    #[serde(skip)]
    pub causes: Vec<crate::causes::CauseRecord>,
    /// The table of every dispatcher the run created.
    #[serde(skip)]
    pub dispatcher_tables: std::collections::BTreeMap<core_sched::types::DispatcherId, core_sched::types::TableId>,
    /// Scenario names of the run's captures and tables.
    #[serde(skip)]
    pub names: crate::names::Names,
    /// Messages and lifetimes for the `--html` page, when the run recorded them.
    #[serde(skip)]
    pub timeline: Option<Box<crate::timeline::Recorded>>,
}

/// Network counters of one run: how often each seeded network fault struck.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct NetStats {
    pub delivered: u64,
    /// Dropped for any reason (loss, dead or partitioned receiver, queue cap).
    pub dropped: u64,
    pub lost: u64,
    pub duplicated: u64,
    pub spiked: u64,
    /// Heartbeat or block-status requests held back in a collector queue.
    #[serde(default)]
    pub lagged: u64,
    /// Injected transient storage failures.
    pub storage_errors: u64,
    /// Message-center stream reconnects (`stream-reconnect`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reconnects: u64,
    /// Old-stream messages read before a reconnect's reset, delivered on time.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read_before_reset: u64,
    /// Old-stream messages read before a reconnect's reset and handled behind the new
    /// stream's messages (the older engine's straggler model).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub straggled: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

#[cfg(test)]
mod outcome_tests {
    use super::*;

    fn v(inv: &str) -> Violation {
        Violation { invariant: inv.into(), at_ms: 0, detail: String::new() }
    }

    #[test]
    fn a_run_is_classified_by_its_first_violation() {
        assert_eq!(outcome_of(&[]), Outcome::Pass);
        // The issue-21 shape: not converged, then sync_diff misses the rows.
        let vs = [v("converges"), v("check:sync_diff")];
        assert_eq!(outcome_of(&vs), Outcome::Liveness);
        let note = outcome_note(Outcome::Liveness, &vs).unwrap();
        assert!(note.contains("`converges`") && note.contains("check:sync_diff"), "{}", note);
        // An invariant that fired during the run comes first and makes it safety.
        let vs = [v("no-data-loss"), v("converges"), v("check:sync_diff")];
        assert_eq!(outcome_of(&vs), Outcome::Safety);
        assert_eq!(outcome_note(Outcome::Safety, &vs), None);
        // Checks alone: sync_diff and trace_field are safety, others liveness.
        assert_eq!(outcome_of(&[v("check:sync_diff snapshot=5")]), Outcome::Safety);
        assert_eq!(outcome_of(&[v("check:trace_field x")]), Outcome::Safety);
        assert_eq!(outcome_of(&[v("check:replication_count t1")]), Outcome::Liveness);
        assert_eq!(outcome_of(&[v("converges")]), Outcome::Liveness);
        assert_eq!(outcome_note(Outcome::Liveness, &[v("converges")]), None);
    }

    #[test]
    fn failed_safety_checks_come_before_liveness_checks() {
        let c = |check: &str, passed| CheckResult { check: check.into(), passed, detail: String::new() };
        let checks = [c("replication_count t6", false), c("no_error_logged", true), c("sync_diff", false)];
        let vs = order_violations(vec![], &[], &checks, 7);
        let names: Vec<&str> = vs.iter().map(|v| v.invariant.as_str()).collect();
        assert_eq!(names, ["check:sync_diff", "check:replication_count t6"]);
        assert_eq!(outcome_of(&vs), Outcome::Safety);
        // Not converged: `converges` precedes every check, and the run is liveness.
        let vs = order_violations(vec![], &[v("converges")], &checks, 7);
        assert_eq!(vs[0].invariant, "converges");
        assert_eq!(outcome_of(&vs), Outcome::Liveness);
        // An invariant of the run precedes both.
        let vs = order_violations(vec![v("no-data-loss")], &[v("converges")], &checks, 7);
        assert_eq!(outcome_of(&vs), Outcome::Safety);
    }
}
