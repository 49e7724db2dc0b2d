//! Why a running scenario step (or an end check) failed. A step error stops the run as a
//! `converges` violation and a check error fails the check; either way its `Display`
//! text is the violation's or the check's detail in the run's report, so the messages are
//! part of what seed files pin down.

use crate::scenario::{DurationError, FieldOp, Predicate};
use crate::upstream::UpstreamError;
use core_sched::messages::FeedState;
use core_sched::types::NodeId;

#[derive(Clone, Debug, thiserror::Error)]
pub enum StepError {
    #[error("unknown table '{0}'")]
    UnknownTable(String),
    #[error("bad node reference '{0}'")]
    BadNodeRef(String),
    #[error("unknown variable ${0}")]
    UnknownVariable(String),
    #[error("no node left for ${0}")]
    NoNodeLeft(String),
    #[error("no maintainer yet")]
    NoMaintainer,
    #[error("no owner")]
    NoOwner,
    #[error("no changefeed")]
    NoChangefeed,
    #[error("value ${0} was not captured (a trace_seen wait with capture must run first)")]
    NotCaptured(String),
    #[error("'{value}' (from '{reference}') is not a ts")]
    NotATs { value: String, reference: String },
    #[error("event budget of {0} exhausted")]
    EventBudget(u64),
    #[error("simulated-time limit of {0} ms reached")]
    SimTimeLimit(u64),
    /// A scheduling API call that kept failing: `last` is the maintainer's last answer.
    #[error("{what} did not succeed within {timeout_ms} ms: {last}")]
    ApiTimeout { what: &'static str, timeout_ms: u64, last: String },
    /// `action`: `pause` or `resume`; `state`: the changefeed's (None: no changefeed).
    #[error("{action} changefeed refused (state {state:?})")]
    ChangefeedRefused { action: &'static str, state: Option<FeedState> },
    #[error("update changefeed: the changefeed must be paused first (state {0:?})")]
    UpdateNotPaused(FeedState),
    #[error("start {0}: the capture was already started")]
    AlreadyStarted(NodeId),
    #[error("wait timed out after {timeout_ms} ms: {until:?}")]
    WaitTimeout { timeout_ms: u64, until: Box<Predicate> },
    #[error("trace event '{event}' has no field '{field}' to capture as ${name}")]
    CaptureMissingField { event: String, field: String, name: String },
    #[error("cannot compare '{got}' {op:?} '{want}': not numbers")]
    NotNumbers { got: String, op: FieldOp, want: String },
    #[error(transparent)]
    Duration(#[from] DurationError),
    #[error(transparent)]
    Upstream(#[from] UpstreamError),
}
