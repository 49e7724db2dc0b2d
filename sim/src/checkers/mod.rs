//! The invariant checkers. Each file guards one family of TiCDC's promises (its opening
//! comment says which, and which historical bugs it has caught); [`REGISTRY`] lists every
//! invariant with its family, and `ticdc-sim invariants` prints it.
//!
//! Checkers are pure: they get what they look at (the nodes' managers and maintainers,
//! upstream, storage, typed observations of a step) and return `(invariant, detail)`
//! pairs; the world (`world/checks.rs`) decides when each runs and records what they find. They run
//! incrementally: placement only after a step that changed a live dispatcher set, the
//! maintainer's books only after a maintainer step that may have changed them (not after a
//! message for the node's dispatcher side), `no-data-loss` only over the upstream
//! changes the persisted checkpoint newly covers, `barrier-owner-only` only for
//! block-status requests (what the maintainer holds about each non-owner-reported
//! dispatcher, before and after). Placement and the maintainer's books test their predicates
//! in one sorted sweep; `--full-checks` runs the pairwise reference versions
//! (`check_dispatchers_full`, `check_maintainer_full`), which must report the same.

mod barrier;
mod data_loss;
mod drop;
mod errors;
mod fencing;
mod maintainer;
mod placement;
mod redo;

pub use barrier::*;
pub use data_loss::*;
pub use drop::*;
pub use errors::*;
pub use fencing::*;
pub use maintainer::*;
pub use placement::*;
pub use redo::*;

pub const ONE_DISPATCHER_PER_KEY: &str = "one-dispatcher-per-key";
pub const ONE_INSTANCE_PER_ID: &str = "one-instance-per-dispatcher-id";
pub const ONE_TABLE_TRIGGER: &str = "one-table-trigger";
pub const ONE_REDO_TABLE_TRIGGER: &str = "one-redo-table-trigger";
/// The table trigger event dispatcher (the changefeed's DDL owner) is created on the
/// maintainer's capture by that maintainer's bootstrap (TiCDC #431 places it with the
/// maintainer) and serves only it until it has left the manager: a dispatcher manager
/// holding a trigger (running, or still closing under its maintainer's Remove) is owned
/// by the maintainer of its own capture. A bootstrap that hands such a manager to another
/// maintainer (one without a trigger ID, from another capture) leaves "stale DDL
/// ownership" (PR #5436: a nil trigger ID is valid only once the local trigger cleanup
/// removed the previous owner, `validateBootstrapNoTableTriggerDispatcher`): the trigger
/// then reports its block statuses, heartbeats and finally its Stopped to a maintainer
/// that does not own it.
pub const TABLE_TRIGGER_OWNER: &str = "table-trigger-owner";
pub const ONE_OPERATOR_PER_DISPATCHER: &str = "one-operator-per-dispatcher";
pub const SPAN_PARTITION: &str = "span-partition";
pub const EPOCH_FENCING: &str = "epoch-fencing";
pub const BARRIER_WRITES_ONCE: &str = "barrier-writes-once";
pub const CHECKPOINT_MONOTONIC: &str = "checkpoint-monotonic";
pub const NO_DATA_LOSS: &str = "no-data-loss";
pub const NO_RETRYABLE_ERROR_AFTER_FAILOVER: &str = "no-retryable-error-after-failover";
pub const CONVERGES: &str = "converges";
/// A capture that local-fenced (lost its etcd session) issues no downstream write.
pub const NO_WRITE_AFTER_FENCE: &str = "no-write-after-fence";
/// Reference §16 #11/#19: a block status counts only from the node the dispatcher's task
/// is bound to; one from any other node (a stale or duplicate instance) must leave the
/// barrier and the task as they were.
pub const BARRIER_OWNER_ONLY: &str = "barrier-owner-only";
/// A dropped table (DROP TABLE, TRUNCATE's old ID, every table of a DROP DATABASE) gets
/// no downstream write once its drop is written and the changefeed's checkpoint passed
/// it (see [`check_no_write_after_drop`]).
pub const NO_WRITE_AFTER_DROP: &str = "no-write-after-drop";
/// With redo on: no event dispatcher writes a row or DDL downstream before the redo log
/// holds it (see [`writes_beyond_redo`]).
pub const NO_WRITE_BEYOND_REDO: &str = "no-write-beyond-redo";
/// With redo on: a durable redo meta is a recovery point (see [`RedoMetaChecker`]).
pub const REDO_META_DURABLE: &str = "redo-meta-durable";
pub const ALL_INVARIANTS: &[&str] = &[
    ONE_DISPATCHER_PER_KEY,
    ONE_INSTANCE_PER_ID,
    ONE_TABLE_TRIGGER,
    ONE_REDO_TABLE_TRIGGER,
    TABLE_TRIGGER_OWNER,
    ONE_OPERATOR_PER_DISPATCHER,
    SPAN_PARTITION,
    BARRIER_WRITES_ONCE,
    EPOCH_FENCING,
    CHECKPOINT_MONOTONIC,
    NO_DATA_LOSS,
    NO_RETRYABLE_ERROR_AFTER_FAILOVER,
    NO_WRITE_AFTER_FENCE,
    BARRIER_OWNER_ONLY,
    NO_WRITE_AFTER_DROP,
    NO_WRITE_BEYOND_REDO,
    REDO_META_DURABLE,
    CONVERGES,
];

/// One invariant: its stable name (reports, JSON, seed files), the checker file that
/// holds it and what it guards.
#[derive(Clone, Copy, Debug)]
pub struct InvariantInfo {
    pub name: &'static str,
    pub family: &'static str,
    pub guards: &'static str,
}

/// Every invariant, in the order of [`ALL_INVARIANTS`].
pub const REGISTRY: &[InvariantInfo] = &[
    InvariantInfo { name: ONE_DISPATCHER_PER_KEY, family: "placement", guards: "no two writable dispatchers cover the same keys of a table" },
    InvariantInfo { name: ONE_INSTANCE_PER_ID, family: "placement", guards: "a dispatcher ID lives on one capture" },
    InvariantInfo { name: ONE_TABLE_TRIGGER, family: "placement", guards: "one registered table trigger event dispatcher (DDL owner) per changefeed" },
    InvariantInfo { name: ONE_REDO_TABLE_TRIGGER, family: "placement", guards: "one registered table trigger redo dispatcher (redo DDL writer and redo meta owner) per redo changefeed" },
    InvariantInfo { name: TABLE_TRIGGER_OWNER, family: "placement", guards: "a manager holding the table trigger is owned by its own capture's maintainer" },
    InvariantInfo { name: ONE_OPERATOR_PER_DISPATCHER, family: "maintainer", guards: "at most one running operator per dispatcher" },
    InvariantInfo { name: SPAN_PARTITION, family: "maintainer", guards: "a bootstrapped maintainer's spans cover every live table without holes or overlaps" },
    InvariantInfo { name: BARRIER_WRITES_ONCE, family: "barrier", guards: "one writer per open barrier; a DDL or syncpoint is durable only after the rows it follows" },
    InvariantInfo { name: EPOCH_FENCING, family: "fencing", guards: "no control message of an older maintainer epoch is applied" },
    InvariantInfo { name: CHECKPOINT_MONOTONIC, family: "data_loss", guards: "the persisted checkpoint never goes back" },
    InvariantInfo { name: NO_DATA_LOSS, family: "data_loss", guards: "every change at or below the persisted checkpoint, and every due syncpoint and DDL below it, is durable downstream" },
    InvariantInfo { name: NO_RETRYABLE_ERROR_AFTER_FAILOVER, family: "errors", guards: "no sink error is raised to the changefeed after a maintainer failover" },
    InvariantInfo { name: NO_WRITE_AFTER_FENCE, family: "fencing", guards: "a local-fenced capture issues no downstream write" },
    InvariantInfo { name: BARRIER_OWNER_ONLY, family: "barrier", guards: "a block status counts only from the node its dispatcher's task is bound to" },
    InvariantInfo { name: NO_WRITE_AFTER_DROP, family: "drop", guards: "no write of a dropped table once its drop is written and the checkpoint passed it" },
    InvariantInfo { name: NO_WRITE_BEYOND_REDO, family: "redo", guards: "with redo on, an event dispatcher writes a row or DDL downstream only once the redo log holds it durably" },
    InvariantInfo { name: REDO_META_DURABLE, family: "redo", guards: "a durable redo meta's checkpoint is at most its resolved ts, every change at or below its resolved ts is in the redo log, every change at or below its checkpoint downstream" },
    InvariantInfo { name: CONVERGES, family: "end of run (runner)", guards: "the cluster settles after the faults stop: every table scheduled, the barrier and checkpoint move, the end checks hold" },
];

/// The prefix of a core assertion's violation: `assert:<name>` (see
/// `core_sched::assertions`).
pub const ASSERT_PREFIX: &str = "assert:";

/// The invariant a failed core assertion is reported as.
pub fn assertion_invariant(a: core_sched::assertions::Assertion) -> String {
    format!("{}{}", ASSERT_PREFIX, a.name())
}

/// Whether `name` names an invariant a run can report: a checker's, or a declared core
/// assertion's `assert:<name>` (end checks, `check:<name>`, are not covered here).
pub fn is_known_invariant(name: &str) -> bool {
    ALL_INVARIANTS.contains(&name)
        || name.strip_prefix(ASSERT_PREFIX).is_some_and(|a| core_sched::assertions::by_name(a).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assertion_invariants_are_known_by_their_declared_names() {
        for d in core_sched::assertions::ASSERTIONS {
            assert!(is_known_invariant(&assertion_invariant(d.assertion)), "{}", d.name);
        }
        assert!(!is_known_invariant("assert:no.such"));
        assert!(crate::result::is_safety_violation("assert:oc.one_operator_per_dispatcher"));
    }

    #[test]
    fn the_registry_lists_every_invariant_once_in_order() {
        let names: Vec<&str> = REGISTRY.iter().map(|i| i.name).collect();
        assert_eq!(names, ALL_INVARIANTS);
    }
}
