//! Errors a user would see: `no-retryable-error-after-failover` (after a maintainer
//! failover, no sink write error is raised to the changefeed; a closing writer's failure
//! is expected and swallowed). The scenarios' `no_error_logged` end check covers the
//! Error-level log lines in general.
//!
//! TiCDC's promise: a dispatcher closed by its maintainer (a move, a removal, a takeover)
//! does not restart the changefeed because its cancelled flush failed. Caught:
//! `escalate-closing-writer-error` (seed 000).

use super::*;
use core_sched::types::*;

/// `no-retryable-error-after-failover` for an observed escalation, `detail` as logged.
pub fn retryable_after_failover(n: NodeId, detail: &str) -> (&'static str, String) {
    (NO_RETRYABLE_ERROR_AFTER_FAILOVER, format!("retryable sink error on {} after failover: {}", n, detail))
}
