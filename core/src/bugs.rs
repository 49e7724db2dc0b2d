//! Historical bugs as switches. Each switch re-introduces one historical behaviour at
//! the place TiCDC had it; all are off by default (the fixed behaviour).

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Bug {
    IgnoreUnknownWorkingTable,
    EscalateClosingWriterError,
    NonatomicOperatorAdmission,
    AcceptNonownerBlockStatus,
    NoEpochFencing,
    ReplaceMismatchedTrigger,
    DropStaleRemoveOperators,
    AcceptNilTriggerBootstrap,
    LeakFenceLockWhenFenced,
    WritePathClosedIsError,
    IgnorePendingBlockStartTs,
    LeakFenceLockOnClosedWritePath,
    RedoMessagesNotFenced,
    ReplaceMismatchedRedoTrigger,
}

pub struct BugInfo {
    pub bug: Bug,
    pub name: &'static str,
    pub origin: &'static str,
    pub behaviour: &'static str,
}

pub const ALL_BUGS: &[BugInfo] = &[
    BugInfo { bug: Bug::IgnoreUnknownWorkingTable, name: "ignore-unknown-working-table", origin: "seed 000, TiCDC #6202", behaviour: "bootstrap ignores dispatchers of tables missing from its table set (no task, no operator)" },
    BugInfo { bug: Bug::EscalateClosingWriterError, name: "escalate-closing-writer-error", origin: "seed 000", behaviour: "a flush error of a dispatcher being closed becomes a changefeed retryable error" },
    BugInfo { bug: Bug::NonatomicOperatorAdmission, name: "nonatomic-operator-admission", origin: "seed 002, TiCDC #6069", behaviour: "AddOperator checks for an existing operator and inserts in two steps; an Add and an empty-origin Move for one dispatcher can both be admitted" },
    BugInfo { bug: Bug::AcceptNonownerBlockStatus, name: "accept-nonowner-block-status", origin: "seed 002", behaviour: "the barrier accepts block statuses from a node that does not own the dispatcher" },
    BugInfo { bug: Bug::NoEpochFencing, name: "no-epoch-fencing", origin: "seed 004 stack", behaviour: "dispatcher managers accept control messages from any maintainer epoch" },
    BugInfo { bug: Bug::ReplaceMismatchedTrigger, name: "replace-mismatched-trigger", origin: "seed 004", behaviour: "a reused dispatcher manager replaces a mismatched table trigger dispatcher in place" },
    BugInfo { bug: Bug::DropStaleRemoveOperators, name: "drop-stale-remove-operators", origin: "seed 004", behaviour: "bootstrap responses drop stale-owner Remove operators even when the dispatcher is reported" },
    BugInfo { bug: Bug::AcceptNilTriggerBootstrap, name: "accept-nil-trigger-bootstrap", origin: "seed 004 review", behaviour: "a bootstrap without a trigger ID is accepted by a reused manager that has a different trigger" },
    BugInfo { bug: Bug::LeakFenceLockWhenFenced, name: "leak-fence-lock-when-fenced", origin: "seed 004 review", behaviour: "the post-bootstrap handler's orchestrator-level fenced return (a capture-local fence during the trigger's schema-store initialisation) keeps the manager's fence lock; the manager's close never finishes and the capture never exits" },
    BugInfo { bug: Bug::WritePathClosedIsError, name: "write-path-closed-is-error", origin: "seed 004 review", behaviour: "creating a trigger on a closed write path is reported as an error instead of a clean stop" },
    BugInfo { bug: Bug::IgnorePendingBlockStartTs, name: "ignore-pending-block-start-ts", origin: "TiCDC #3663 (PR #3677)", behaviour: "a dispatcher moved or merged while its span waits on a DDL or syncpoint restarts from its checkpoint, not from the pending event (a syncpoint's ts; a DDL's ts - 1 skipping its DMLs)" },
    BugInfo { bug: Bug::LeakFenceLockOnClosedWritePath, name: "leak-fence-lock-on-closed-write-path", origin: "seed 004 (before TiCDC PR #5436)", behaviour: "the post-bootstrap handler returns on a closed write path (a capture-local fence during the trigger's schema-store initialisation) without releasing the manager's fence lock; the manager's close never finishes and the capture never exits" },
    BugInfo { bug: Bug::RedoMessagesNotFenced, name: "redo-messages-not-fenced", origin: "TiCDC PR #5436 (redo half)", behaviour: "dispatcher managers apply redo meta and redo resolved-ts forward messages from any maintainer owner or epoch" },
    BugInfo { bug: Bug::ReplaceMismatchedRedoTrigger, name: "replace-mismatched-redo-trigger", origin: "TiCDC PR #5436 (redo half)", behaviour: "a reused dispatcher manager replaces a mismatched table trigger redo dispatcher in place" },
];

impl Bug {
    pub fn info(self) -> &'static BugInfo {
        ALL_BUGS.iter().find(|b| b.bug == self).expect("every bug has info")
    }
    pub fn name(self) -> &'static str {
        self.info().name
    }
    pub fn from_name(name: &str) -> Option<Bug> {
        ALL_BUGS.iter().find(|b| b.name == name).map(|b| b.bug)
    }
    pub fn names() -> Vec<&'static str> {
        ALL_BUGS.iter().map(|b| b.name).collect()
    }
}
impl fmt::Display for Bug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Candidate fixes for open findings (README "Open work and findings"): departures from
/// TiCDC's behaviour, off by default, that a user switches on (`--fix NAME`) to measure
/// whether a finding goes away. They are not TiCDC's code; each says which finding it
/// answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Fix {
    RestoredRemoveBlocksCheckpoint,
    KeepNewerBlockState,
    MatchActionOnSyncPoint,
    FinishedMoveChecksNode,
    CloseOlderOwnerManager,
    DropBootstrapOfRemovedTrigger,
    IgnorePostBootstrapErrorWhenRemoving,
    FreshStatusWatermark,
    DbPastCheckIncludesTrigger,
    DbPassReachesTrigger,
    StickyBootstrapError,
    SelectionResetsReports,
}

pub struct FixInfo {
    pub fix: Fix,
    pub name: &'static str,
    pub finding: &'static str,
    pub behaviour: &'static str,
}

pub const ALL_FIXES: &[FixInfo] = &[
    FixInfo { fix: Fix::RestoredRemoveBlocksCheckpoint, name: "restored-remove-blocks-checkpoint", finding: "restored_remove_*", behaviour: "a Remove restored at bootstrap with a mark-absent or repair post-finish holds the checkpoint at its span's checkpoint (BlockTsForward true) until it finishes" },
    FixInfo { fix: Fix::MatchActionOnSyncPoint, name: "match-action-on-sync-point", finding: "ddl_at_syncpoint_ts", behaviour: "a dispatcher matches a barrier action to its pending block event on (commitTs, isSyncPoint), not on commitTs alone (BlockEventStatus.actionMatchs), so a late DDL action at a syncpoint's ts is outdated for the pending syncpoint" },
    FixInfo { fix: Fix::FinishedMoveChecksNode, name: "finished-move-checks-node", finding: "move_finished_after_dest_removed", behaviour: "when an operator finishes, a span its PostFinish leaves Replicating on a capture the cluster already removed is marked absent and placed again" },
    FixInfo { fix: Fix::CloseOlderOwnerManager, name: "close-older-owner-manager", finding: "stale_bootstrap_resend_recreates_trigger", behaviour: "a MaintainerCloseRequest of a newer maintainer epoch closes a dispatcher manager still owned by an older epoch (IsMaintainerRequestAllowed admits only the owner's epoch, so the restart's cascade close never reaches a manager whose newer bootstraps were all rejected)" },
    FixInfo { fix: Fix::DropBootstrapOfRemovedTrigger, name: "drop-bootstrap-of-removed-trigger", finding: "stale_bootstrap_resend_recreates_trigger", behaviour: "a dispatcher manager remembers the table trigger IDs it removed and drops, without a response, a bootstrap request that would create one of them again (a departed generation's delayed resend), so no trigger outlives its maintainer" },
    FixInfo { fix: Fix::IgnorePostBootstrapErrorWhenRemoving, name: "ignore-post-bootstrap-error-when-removing", finding: "stale_bootstrap_resend_recreates_trigger (its restarts)", behaviour: "a maintainer that is removing (a move removed its table trigger) ignores a post-bootstrap error instead of reporting it to the coordinator, which would restart the changefeed (the post-bootstrap request waited in the orchestrator queue and found the trigger gone)" },
    FixInfo { fix: Fix::FreshStatusWatermark, name: "fresh-status-watermark", finding: "status_watermark_snapshot", behaviour: "a status-change heartbeat carries a watermark computed afresh over the manager's dispatchers, not the status collector's snapshot of the last aggregate, so it never pairs a sequence number with a checkpoint that leaves out a dispatcher added under that number" },
    FixInfo { fix: Fix::KeepNewerBlockState, name: "keep-newer-block-state", finding: "outdated_done_block_state", behaviour: "the barrier never moves a span's block state back to an older (commitTs, isSyncPoint), so an outdated DONE cannot hide that the span passed a later event" },
    FixInfo { fix: Fix::DbPastCheckIncludesTrigger, name: "db-past-check-includes-trigger", finding: "table_set_ddl_lost_on_failover (swarm: a rebuilt DB event waits for a trigger already past it)", behaviour: "a DB-level event not yet selected counts the table trigger among the dispatchers it checks for one already past the event (checkBlockedDispatchers looks at the schema's tasks only), so an event the old trigger wrote before a maintainer move is passed" },
    FixInfo { fix: Fix::DbPassReachesTrigger, name: "db-pass-reaches-trigger", finding: "table_set_ddl_lost_on_failover (a DB Pass misses a new table trigger)", behaviour: "a DB-level event's Pass also goes to the table trigger's node, not only to the nodes of the schema's tasks and the writer's" },
    FixInfo { fix: Fix::StickyBootstrapError, name: "sticky-bootstrap-error", finding: "lost_bootstrap_error", behaviour: "a maintainer whose FinishBootstrap failed sends that error with every status until it bootstraps, not once (GetMaintainerStatus clears it when read), so one lost status cannot hide a failed bootstrap from the coordinator" },
    FixInfo { fix: Fix::SelectionResetsReports, name: "selection-resets-reports", finding: "rebuilt_writing_event_finished", behaviour: "an event selected otherwise than by all-reported (rebuilt at bootstrap from a WRITING or DONE report, or advanced because a dispatcher is past it) keeps only DONE reports as covering it, as a selection by all-reported does, so WAITING reports cannot finish it before its Pass went out" },
];

impl Fix {
    pub fn info(self) -> &'static FixInfo {
        ALL_FIXES.iter().find(|f| f.fix == self).expect("every fix has info")
    }
    pub fn name(self) -> &'static str {
        self.info().name
    }
    pub fn from_name(name: &str) -> Option<Fix> {
        ALL_FIXES.iter().find(|f| f.name == name).map(|f| f.fix)
    }
    pub fn names() -> Vec<&'static str> {
        ALL_FIXES.iter().map(|f| f.name).collect()
    }
}

/// The set of historical behaviours switched back on (and of candidate fixes switched
/// on). Both empty = fixed core, TiCDC's current behaviour.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bugs(pub BTreeSet<Bug>, #[serde(default, skip)] pub BTreeSet<Fix>);
impl Bugs {
    pub fn with_fix(mut self, f: Fix) -> Self {
        self.1.insert(f);
        self
    }
    pub fn fix_on(&self, f: Fix) -> bool {
        self.1.contains(&f)
    }
    pub fn fix_names(&self) -> Vec<&'static str> {
        self.1.iter().map(|f| f.name()).collect()
    }
    pub fn none() -> Self {
        Bugs::default()
    }
    pub fn on(&self, b: Bug) -> bool {
        self.0.contains(&b)
    }
    pub fn with(mut self, b: Bug) -> Self {
        self.0.insert(b);
        self
    }
    pub fn names(&self) -> Vec<&'static str> {
        self.0.iter().map(|b| b.name()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn names_round_trip() {
        for b in ALL_BUGS {
            assert_eq!(Bug::from_name(b.name), Some(b.bug));
        }
        assert_eq!(Bug::from_name("no-such-bug"), None);
        for f in ALL_FIXES {
            assert_eq!(Fix::from_name(f.name), Some(f.fix));
        }
        assert_eq!(Fix::from_name("no-such-fix"), None);
    }
}
