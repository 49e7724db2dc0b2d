//! Builders of the op group, after the helpers of TiCDC's operator tests
//! (`setupTestEnvironment`, `setupMergeTestEnvironment`, `setupReplicaSetWithID` in
//! maintainer/operator/*_test.go at b813e76f9).
//!
//! Differences that every case shares: dispatcher and node IDs are small integers
//! (`node-a` = n(1), `node-b` = n(2)); key ranges are integers, so the Go test's
//! `"a".."m".."z"` become fractions of the table's key space; a task the Go test keeps
//! outside the span controller is inserted anyway, because the model's operators act on
//! tasks through the span controller.

pub use crate::maintainer::operator::controller::{AdmitError, Poll};
pub use crate::maintainer::operator::probe::{ProbeCounts, ProbeOperator};
pub use crate::maintainer::operator::*;
pub use crate::maintainer::span_controller::{ReplicaState, SpanController, SpanReplication};
pub use crate::messages::*;
pub use crate::tests::harness::{d, n, nodes, st};
pub use crate::types::*;
pub use std::collections::BTreeSet;

use crate::config::SchedulerConfig;

pub const NODE_A: NodeId = NodeId(1);
pub const NODE_B: NodeId = NodeId(2);
/// The table of `GetTableSpanByID(100)`.
pub const TABLE: TableId = 100;
/// The dispatcher of the environment's replica set.
pub const RS: DispatcherId = DispatcherId(100);
pub const EPOCH: Epoch = 7;

/// `setupTestEnvironment`: a span controller whose DDL span (checkpoint 1) is Working on
/// node A, and the replica set `RS` of table 100, Working on node A at checkpoint 1000,
/// in the span controller (whether or not the Go test calls `AddReplicatingSpan`; see
/// the module comment).
pub fn setup() -> SpanController {
    let mut sc = SpanController::new(d(1), NODE_A, 1, SchedulerConfig::default());
    sc.insert(working(RS, TableSpan::full(TABLE), NODE_A, 1000));
    sc
}

/// `NewWorkingSpanReplication`: a Replicating task on `node`.
pub fn working(id: DispatcherId, span: TableSpan, node: NodeId, cp: Ts) -> SpanReplication {
    SpanReplication {
        id,
        span,
        schema_id: 1,
        node: Some(node),
        state: ReplicaState::Replicating,
        checkpoint_ts: cp,
        last_state: Some(ComponentState::Working),
        block_state: None,
    }
}

/// `NewSpanReplication` + `AddAbsentReplicaSet`: an Absent task.
pub fn absent(id: DispatcherId, span: TableSpan, cp: Ts) -> SpanReplication {
    SpanReplication {
        id,
        span,
        schema_id: 2,
        node: None,
        state: ReplicaState::Absent,
        checkpoint_ts: cp,
        last_state: None,
        block_state: None,
    }
}

/// `setupReplicaSetWithID`: a Working task of its own table (`id + 100`) at checkpoint 10.
pub fn replica_with_id(sc: &mut SpanController, id: DispatcherId, node: NodeId) {
    sc.insert(working(id, TableSpan::full(id.0 as TableId + 100), node, 10));
}

/// The part `[num/den_a, num/den_b)` of table `t`'s key space, for the Go tests' letters.
pub fn part(t: TableId, from: (u64, u64), to: (u64, u64)) -> TableSpan {
    let at = |(a, b): (u64, u64)| TABLE_KEY_END / b * a;
    TableSpan { table_id: t, start: at(from), end: at(to) }
}

/// `"a".."m"` and `"m".."z"` of table `t`.
pub fn a_m(t: TableId) -> TableSpan {
    part(t, (0, 1), (1, 2))
}
pub fn m_z(t: TableId) -> TableSpan {
    part(t, (1, 2), (1, 1))
}

/// `setupMergeTestEnvironmentWithCheckpointTs`: two consecutive Working spans of table
/// 100 on node A (`d(11)` = a..m, `d(12)` = m..z) in the span controller.
pub const M1: DispatcherId = DispatcherId(11);
pub const M2: DispatcherId = DispatcherId(12);
/// The merged dispatcher's ID (`common.NewDispatcherID()` in the constructor).
pub const MERGED: DispatcherId = DispatcherId(99);

pub fn setup_merge(cp1: Ts, cp2: Ts) -> SpanController {
    let mut sc = SpanController::new(d(1), NODE_A, 1, SchedulerConfig::default());
    sc.insert(working(M1, a_m(TABLE), NODE_A, cp1));
    sc.insert(working(M2, m_z(TABLE), NODE_A, cp2));
    sc
}

/// The occupy operators of `setupMergeTestEnvironment`, held by a controller (in the
/// model, the controller finishes a merge's occupy operators after its PostFinish).
pub fn occupy_all(
    oc: &mut OperatorController,
    sc: &mut SpanController,
    ids: &[DispatcherId],
    alive: &BTreeSet<NodeId>,
) {
    for id in ids {
        let node = sc.get(id).and_then(|r| r.node);
        oc.add_operator(Operator::Occupy(OccupyDispatcherOperator::new(*id, node)), sc, alive, 0).unwrap();
    }
}

pub fn occupy_finished(oc: &OperatorController, id: DispatcherId) -> bool {
    match oc.get(&id) {
        Some(Operator::Occupy(o)) => o.finished,
        other => panic!("expected an occupy operator for {}, got {:?}", id, other),
    }
}

/// `GetAbsentSize` / `GetSchedulingSize` / `GetReplicatingSize` (the DDL span is not
/// part of the replication DB these count).
pub fn count(sc: &SpanController, state: ReplicaState) -> usize {
    sc.tasks.values().filter(|r| r.id != sc.ddl_span_id && r.state == state).count()
}
pub fn absent_size(sc: &SpanController) -> usize {
    count(sc, ReplicaState::Absent)
}
pub fn scheduling_size(sc: &SpanController) -> usize {
    count(sc, ReplicaState::Scheduling)
}
pub fn replicating_size(sc: &SpanController) -> usize {
    count(sc, ReplicaState::Replicating)
}

pub fn node_of(sc: &SpanController, id: DispatcherId) -> Option<NodeId> {
    sc.get(&id).expect("task exists").node
}

/// A status with a state and checkpoint.
pub fn status(id: DispatcherId, state: ComponentState, cp: Ts) -> TableSpanStatus {
    st(id, state, cp)
}

/// A schedule request from an operator's `schedule()`, with its destination.
pub fn sched_req(m: Option<(NodeId, OpRequest)>) -> (NodeId, ScheduleDispatcherRequest) {
    match m {
        Some((to, OpRequest::Schedule(r))) => (to, r),
        other => panic!("expected a schedule request, got {:?}", other),
    }
}

/// Dispatcher IDs handed out in order from `start + 1`.
pub fn ids_from(start: u64) -> impl FnMut() -> DispatcherId {
    let mut next = start;
    move || {
        next += 1;
        DispatcherId(next)
    }
}

pub fn cnt(c: &std::sync::atomic::AtomicU32) -> u32 {
    ProbeCounts::get(c)
}
