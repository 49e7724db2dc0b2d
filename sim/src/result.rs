//! What one seed's run produces.

use serde::{Deserialize, Serialize};

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
    pub role: String,
    pub epoch: u64,
    pub event: String,
    pub fields: Vec<(String, String)>,
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
}
