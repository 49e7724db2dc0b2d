//! Maintainer bootstrap (§4): restore of schedule requests (§4.3), of merges (§4.4),
//! working dispatchers of tables missing from the snapshot, and failures — driven
//! through `Maintainer::new` and `handle_message(MaintainerBootstrapResponse)` from
//! every node.

use super::harness::*;
use crate::bugs::Bug;
use crate::effects::Out;
use crate::maintainer::operator::{Operator, RemovePostFinish};
use crate::maintainer::span_controller::ReplicaState;
use crate::maintainer::MaintainerState;
use crate::messages::*;
use crate::types::*;

use ComponentState::*;
use ReplicaState::{Absent, Replicating, Scheduling};

const X: DispatcherId = DispatcherId(1000);
const Y: DispatcherId = DispatcherId(1001);
const Z: DispatcherId = DispatcherId(1002);
const A: DispatcherId = DispatcherId(2000);
const B: DispatcherId = DispatcherId(2001);
const M: DispatcherId = DispatcherId(2002);

fn full(t: TableId) -> TableSpan {
    TableSpan::full(t)
}

fn ops(v: Vec<ScheduleDispatcherRequest>) -> NodeReport {
    NodeReport { operators: v, ..Default::default() }
}

fn stopped(h: &mut MH, from: u32, id: DispatcherId) {
    h.handle(from, heartbeat(START, 1, vec![st(id, Stopped, START)]));
    h.execute();
}

// ---------------------------------------------------------------- §4.3 Create

#[test]
fn restored_create_for_table_in_snapshot_becomes_add_operator_to_reporter() {
    let mut h = MH::new(&[0, 1, 2], TestSchema::with_tables(&[10]));
    let out = h.bootstrap(vec![(1, ops(vec![create_req(X, full(10), 90, OperatorType::Move, EPOCH)]))]);
    assert!(traced(&out, "restore create operator"));
    assert_eq!(h.table_tasks(10), vec![X], "no second span for the table");
    assert!(matches!(h.op(X), Some(Operator::Add(a)) if a.dest == n(1) && a.op_type == OperatorType::Add));
    assert_eq!(h.state(X), Some((Scheduling, Some(n(1)))));
    let o = h.execute();
    let reqs = schedule_reqs(&o);
    assert_eq!(reqs.len(), 1);
    let (to, req) = &reqs[0];
    assert_eq!(
        (*to, req.action, req.config.dispatcher_id, req.maintainer_epoch),
        (n(1), ScheduleAction::Create, X, EPOCH)
    );
    assert_eq!(req.config.start_ts, START, "the restored start 90 is clamped to the committed checkpoint");
    h.handle(1, heartbeat(START, 1, vec![st(X, Working, START)]));
    h.execute();
    assert_eq!(h.state(X), Some((Replicating, Some(n(1)))));
    assert!(h.op(X).is_none());
}

#[test]
fn stale_create_for_dropped_table_is_skipped() {
    let mut h = MH::new(&[0, 1], TestSchema::with_tables(&[10]).dropped_at(11, 50));
    let out = h.bootstrap(vec![(1, ops(vec![create_req(Y, full(11), 40, OperatorType::Add, EPOCH)]))]);
    assert!(traced(&out, "skip stale bootstrap create for dropped table"));
    assert!(h.state(Y).is_none());
    assert!(h.op(Y).is_none());
    assert!(h.table_tasks(11).is_empty());
    assert_eq!(h.table_tasks(10).len(), 1, "the live table is added as usual");
}

#[test]
fn create_for_already_reported_dispatcher_is_not_restored() {
    let mut h = MH::new(&[0, 1], TestSchema::with_tables(&[10]));
    let r = NodeReport {
        spans: vec![bspan(X, full(10), Working, 120)],
        operators: vec![create_req(X, full(10), 90, OperatorType::Add, EPOCH)],
        merges: vec![],
    };
    let out = h.bootstrap(vec![(1, r)]);
    assert!(!traced(&out, "restore create operator"));
    assert!(h.op(X).is_none());
    assert_eq!(h.state(X), Some((Replicating, Some(n(1)))));
    assert_eq!(h.table_tasks(10), vec![X]);
}

/// `onHeartbeatRequest` ignores heartbeats until the maintainer is bootstrapped; TiCDC
/// sets `initialized` when the bootstrap finishes, before the post-bootstrap response
/// (which only stops the post-bootstrap resends), so a status reported in between
/// (e.g. the one Stopped report of a restored removal) is not lost.
#[test]
fn heartbeats_are_ignored_until_bootstrapped_but_not_until_post_bootstrap_is_done() {
    let mut h = MH::new(&[0, 1], TestSchema::with_tables(&[10]));
    h.respond(0, NodeReport::default());
    h.handle(1, heartbeat(START, 1, vec![st(X, Working, START)]));
    assert!(h.m.pipe.node_watermarks.is_empty(), "a heartbeat during the bootstrap is dropped");
    h.respond(1, ops(vec![create_req(X, full(10), 90, OperatorType::Add, EPOCH)]));
    assert_eq!(h.m.state, MaintainerState::Working);
    assert!(!h.m.post_bootstrap_done, "the post-bootstrap response has not arrived");
    assert!(h.m.initialized(), "initialized does not wait for it");
    assert!(matches!(h.op(X), Some(Operator::Add(_))));
    h.handle(1, heartbeat(START, 1, vec![st(X, Working, START)]));
    h.execute();
    assert!(h.m.pipe.node_watermarks.contains_key(&n(1)), "the watermark is recorded");
    assert!(h.op(X).is_none(), "the Working status finished the restored Add");
}

// ---------------------------------------------------------------- §4.3 Remove

#[test]
fn remove_restore_for_move_and_split_marks_span_absent() {
    for op_type in [OperatorType::Move, OperatorType::Split] {
        let mut h = MH::new(&[0, 1], TestSchema::with_tables(&[10]));
        let r = NodeReport {
            spans: vec![bspan(X, full(10), Working, 120)],
            operators: vec![remove_req(X, full(10), op_type, EPOCH)],
            merges: vec![],
        };
        let out = h.bootstrap(vec![(1, r)]);
        assert!(traced(&out, "restore remove operator"));
        assert!(
            matches!(h.op(X), Some(Operator::Remove(o)) if o.post == RemovePostFinish::MarkAbsent && o.node == n(1) && o.op_type == op_type),
            "{:?}",
            op_type
        );
        assert_eq!(h.state(X), Some((Replicating, Some(n(1)))));
        let reqs = schedule_reqs(&h.execute());
        assert_eq!(
            reqs.iter().map(|(to, r)| (*to, r.action, r.operator_type, r.config.dispatcher_id)).collect::<Vec<_>>(),
            vec![(n(1), ScheduleAction::Remove, op_type, X)]
        );
        stopped(&mut h, 1, X);
        assert!(h.op(X).is_none());
        assert_eq!(h.state(X), Some((Absent, None)), "the basic scheduler re-adds it with fresh placement");
        assert_eq!(h.table_tasks(10), vec![X]);
    }
}

#[test]
fn plain_remove_restore_removes_the_task_after_stop() {
    // An orphan duplicate X on node 1 that the old maintainer was removing; Z covers the table.
    let mut h = MH::new(&[0, 1, 2], TestSchema::with_tables(&[10]));
    let r1 = NodeReport {
        spans: vec![bspan(X, full(10), Working, 120)],
        operators: vec![remove_req(X, full(10), OperatorType::Remove, EPOCH)],
        merges: vec![],
    };
    let r2 = NodeReport::spans(vec![bspan(Z, full(10), Working, 130)]);
    h.bootstrap(vec![(1, r1), (2, r2)]);
    assert!(
        matches!(h.op(X), Some(Operator::Remove(o)) if matches!(o.post, RemovePostFinish::RemoveTaskAndRepair { .. })),
        "a restored O_Remove of an existing table repairs coverage when done"
    );
    assert!(h.op(Z).is_none());
    // A Stopped from another node does not finish it.
    h.handle(2, heartbeat(START, 1, vec![st(X, Stopped, START)]));
    h.execute();
    assert!(h.op(X).is_some());
    stopped(&mut h, 1, X);
    assert!(h.state(X).is_none());
    assert_eq!(h.table_tasks(10), vec![Z]);
    h.assert_partition(10);
}

#[test]
fn remove_of_a_dropped_table_drops_the_task_and_still_removes_the_dispatcher() {
    let mut h = MH::new(&[0, 1], TestSchema::with_tables(&[10]).dropped_at(11, 50));
    let r = NodeReport {
        spans: vec![bspan(Y, full(11), Working, 45)],
        operators: vec![remove_req(Y, full(11), OperatorType::Remove, EPOCH)],
        merges: vec![],
    };
    let out = h.bootstrap(vec![(1, r)]);
    assert!(h.state(Y).is_none(), "the task of a dropped table is removed immediately");
    assert!(h.table_tasks(11).is_empty());
    assert!(!traced(&out, "add restored operator failed"), "{:?}", out.trace);
    // The operator drives the runtime cleanup: the dispatcher on node 1 is removed.
    let reqs = schedule_reqs(&h.execute());
    assert_eq!(
        reqs.iter().map(|(to, r)| (*to, r.action, r.config.dispatcher_id)).collect::<Vec<_>>(),
        vec![(n(1), ScheduleAction::Remove, Y)]
    );
    stopped(&mut h, 1, Y);
    assert!(h.op(Y).is_none());
    assert!(h.table_tasks(11).is_empty(), "no task comes back");
}

// ---------------------------------------------------------------- §4.4 merges

fn merge_report(spans: Vec<BootstrapTableSpan>) -> NodeReport {
    NodeReport { spans, operators: vec![], merges: vec![merge_req(&[A, B], M, EPOCH - 1)] }
}

#[test]
fn merge_restore_with_preparing_target_and_waiting_sources() {
    let (ha, hb) = halves(10);
    let mut h = MH::new(&[0, 1], TestSchema::with_tables(&[10]));
    let out = h.bootstrap(vec![(
        1,
        merge_report(vec![
            bspan(A, ha, WaitingMerge, 120),
            bspan(B, hb, WaitingMerge, 110),
            bspan(M, full(10), Preparing, 0),
        ]),
    )]);
    assert!(traced(&out, "restore merge operator"), "{:?}", out.trace);
    assert!(matches!(h.op(M), Some(Operator::Merge(m)) if m.restored && m.sources == vec![A, B] && m.origin == n(1)));
    assert!(matches!(h.op(A), Some(Operator::Occupy(_))));
    assert!(matches!(h.op(B), Some(Operator::Occupy(_))));
    assert_eq!(h.state(A), Some((Scheduling, Some(n(1)))));
    assert_eq!(h.state(B), Some((Scheduling, Some(n(1)))));
    assert_eq!(h.state(M), Some((Scheduling, Some(n(1)))));
    // The restored merge resends the request with the new epoch.
    let o = h.execute();
    let merges: Vec<(NodeId, MergeDispatcherRequest)> = o
        .msgs
        .iter()
        .filter_map(|e| match &e.msg {
            Message::MergeDispatcherRequest { req, .. } => Some((e.to, req.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(merges, vec![(n(1), merge_req(&[A, B], M, EPOCH))]);
    h.handle(1, heartbeat(START, 2, vec![st(M, Working, 130)]));
    h.execute();
    h.execute();
    assert_eq!(h.table_tasks(10), vec![M]);
    assert_eq!(h.state(M), Some((Replicating, Some(n(1)))));
    assert_eq!(h.m.pipe.oc.running().count(), 0);
    h.assert_partition(10);
}

#[test]
fn merge_restore_with_working_target_removes_source_tasks() {
    let (ha, hb) = halves(10);
    let mut h = MH::new(&[0, 1], TestSchema::with_tables(&[10]));
    let out = h.bootstrap(vec![(
        1,
        merge_report(vec![
            bspan(A, ha, WaitingMerge, 120),
            bspan(B, hb, WaitingMerge, 110),
            bspan(M, full(10), Working, 130),
        ]),
    )]);
    assert!(traced(&out, "merge already finished before bootstrap"));
    assert!(h.state(A).is_none() && h.state(B).is_none());
    assert_eq!(h.state(M), Some((Replicating, Some(n(1)))));
    assert!(h.op(M).is_none() && h.op(A).is_none());
    h.assert_partition(10);
}

#[test]
fn merge_restore_with_missing_source_and_committed_target_keeps_target() {
    let (_, hb) = halves(10);
    let mut h = MH::new(&[0, 1], TestSchema::with_tables(&[10]));
    // After the commit the DM removes the sources: A is gone, B is still closing.
    h.bootstrap(vec![(1, merge_report(vec![bspan(B, hb, Stopped, 110), bspan(M, full(10), Initializing, 105)]))]);
    assert_eq!(h.state(M), Some((Replicating, Some(n(1)))));
    assert!(h.op(M).is_none(), "a committed target is not cleaned up");
    assert!(h.state(B).is_none() && h.state(A).is_none());
    assert_eq!(h.table_tasks(10), vec![M]);
    h.assert_partition(10);
}

#[test]
fn merge_restore_with_missing_source_and_preparing_target_cleans_up_target() {
    let (ha, hb) = halves(10);
    let mut h = MH::new(&[0, 1], TestSchema::with_tables(&[10]));
    h.bootstrap(vec![(1, merge_report(vec![bspan(B, hb, WaitingMerge, 110), bspan(M, full(10), Preparing, 0)]))]);
    assert!(
        matches!(h.op(M), Some(Operator::Remove(o)) if o.node == n(1) && matches!(o.post, RemovePostFinish::RemoveTaskAndRepair { .. }))
    );
    assert!(h.op(B).is_none());
    assert_eq!(h.state(B), Some((Replicating, Some(n(1)))));
    // The target is temporary coverage: no filler yet (TiCDC adopts the target before it
    // looks for holes, maintainer_controller_test.go:1860 sub-case Preparing).
    assert_eq!(h.table_tasks(10).len(), 2, "B and M only");
    let reqs = schedule_reqs(&h.execute());
    assert!(reqs
        .iter()
        .any(|(to, r)| *to == n(1) && r.action == ScheduleAction::Remove && r.config.dispatcher_id == M));
    stopped(&mut h, 1, M);
    assert!(h.state(M).is_none());
    // The missing source's range is then repaired with a fresh absent span.
    let filler: Vec<_> =
        h.m.pipe.sc.tasks_of_table(10).into_iter().filter(|r| r.id != B).map(|r| (r.span, r.state)).collect();
    assert_eq!(filler, vec![(ha, Absent)]);
    h.assert_partition(10);
}

#[test]
fn merge_journal_conflicting_with_restored_remove_is_reconciled() {
    let (ha, hb) = halves(10);
    let mut h = MH::new(&[0, 1], TestSchema::with_tables(&[10]));
    let mut r =
        merge_report(vec![bspan(A, ha, Working, 120), bspan(B, hb, Working, 110), bspan(M, full(10), Preparing, 0)]);
    r.operators = vec![remove_req(A, ha, OperatorType::Move, EPOCH)];
    let out = h.bootstrap(vec![(1, r)]);
    assert!(traced(&out, "merge journal conflicts with a restored operator"));
    assert!(!traced(&out, "restore merge operator"));
    assert!(h.m.pipe.oc.running().all(|o| !matches!(o, Operator::Merge(_) | Operator::Occupy(_))));
    assert!(matches!(h.op(A), Some(Operator::Remove(o)) if o.post == RemovePostFinish::MarkAbsent));
    assert!(
        matches!(h.op(M), Some(Operator::Remove(o)) if matches!(o.post, RemovePostFinish::RemoveTaskAndRepair { .. }))
    );
    assert_eq!(h.state(B), Some((Replicating, Some(n(1)))));
    h.handle(1, heartbeat(START, 2, vec![st(A, Stopped, 120), st(M, Stopped, 0)]));
    h.execute();
    assert_eq!(h.state(A), Some((Absent, None)));
    assert!(h.state(M).is_none());
    h.assert_partition(10);
}

// ---------------------------------------------------------------- §4.5 working tables

fn schema_with_late_table() -> TestSchema {
    TestSchema::with_tables(&[10]).create_at(12, 150)
}

fn replay_create(h: &mut MH, table: TableId, ts: Ts) -> Out {
    let mut b = block(ts, normal(&[DDL_SPAN_TABLE_ID]), BlockStage::None);
    b.need_added_tables = vec![table_ref(table)];
    let ddl = h.ddl();
    h.handle(0, block_statuses(vec![(ddl, b)]))
}

#[test]
fn working_dispatcher_of_table_created_after_start_ts_is_adopted() {
    let mut h = MH::new(&[0, 1], schema_with_late_table());
    let out = h.bootstrap(vec![(1, NodeReport::spans(vec![bspan(X, full(12), Working, 160)]))]);
    assert!(traced(&out, "adopt working dispatcher of table created after start ts"));
    assert_eq!(h.state(X), Some((Replicating, Some(n(1)))));
    assert!(h.op(X).is_none());
    // The trigger replays the CREATE TABLE: it finds the table and adds nothing.
    let o = replay_create(&mut h, 12, 150);
    assert_eq!(acks(&o), vec![(n(0), 150, vec![h.ddl()])]);
    assert_eq!(h.table_tasks(12), vec![X], "one span for the table");
}

#[test]
fn adopted_partial_span_gets_its_holes_filled_from_the_create_ts() {
    let (ha, hb) = halves(12);
    let mut h = MH::new(&[0, 1], schema_with_late_table());
    h.bootstrap(vec![(1, NodeReport::spans(vec![bspan(X, ha, Working, 160)]))]);
    let others: Vec<_> =
        h.m.pipe
            .sc
            .tasks_of_table(12)
            .into_iter()
            .filter(|r| r.id != X)
            .map(|r| (r.span, r.state, r.checkpoint_ts))
            .collect();
    assert_eq!(others, vec![(hb, Absent, 150)]);
    h.assert_partition(12);
}

#[test]
fn restored_remove_of_the_only_span_of_a_table_created_after_start_ts_leaves_nothing_to_adopt() {
    // The table's only reported span is owned by its restored Remove (taken out of the
    // working map): the table has an adding DDL in the history but no span left to adopt.
    let mut h = MH::new(&[0, 1], schema_with_late_table());
    let r = NodeReport {
        spans: vec![bspan(X, full(12), Working, 160)],
        operators: vec![remove_req(X, full(12), OperatorType::Remove, EPOCH)],
        merges: vec![],
    };
    let out = h.bootstrap(vec![(1, r)]);
    assert_eq!(h.m.state, MaintainerState::Working);
    assert!(!traced(&out, "adopt working dispatcher of table created after start ts"));
    assert!(matches!(h.op(X), Some(Operator::Remove(o)) if o.node == n(1)), "the restored Remove drives the cleanup");
}

#[test]
fn working_dispatcher_below_the_ddl_that_re_added_its_table_is_cleaned_up_not_adopted() {
    // Table 12 is (re-)added at 150 (a RECOVER TABLE after a DROP before the start ts);
    // X's checkpoint 140 shows it is left from the earlier life of the ID (swarm seed 89 of
    // the coverage families: adopting it filled its holes at 150, above a pending syncpoint).
    let mut h = MH::new(&[0, 1], schema_with_late_table());
    let out = h.bootstrap(vec![(1, NodeReport::spans(vec![bspan(X, full(12), Working, 140)]))]);
    assert!(!traced(&out, "adopt working dispatcher of table created after start ts"));
    assert!(traced(&out, "cleanup working dispatcher of unknown table"));
    assert!(matches!(h.op(X), Some(Operator::Remove(o)) if o.node == n(1) && o.post == RemovePostFinish::RemoveTask));
    stopped(&mut h, 1, X);
    assert!(h.table_tasks(12).is_empty());
    // The replayed adding DDL then schedules the table afresh.
    replay_create(&mut h, 12, 150);
    let tasks = h.table_tasks(12);
    assert_eq!(tasks.len(), 1);
    assert_ne!(tasks[0], X);
}

#[test]
fn working_dispatcher_of_unknown_table_without_create_gets_cleanup_remove() {
    let mut h = MH::new(&[0, 1], TestSchema::with_tables(&[10]));
    let out = h.bootstrap(vec![(1, NodeReport::spans(vec![bspan(X, full(13), Working, 160)]))]);
    assert!(traced(&out, "cleanup working dispatcher of unknown table"));
    assert!(matches!(h.op(X), Some(Operator::Remove(o)) if o.node == n(1) && o.post == RemovePostFinish::RemoveTask));
    assert_eq!(h.state(X), Some((Replicating, Some(n(1)))), "kept as coverage until it stopped");
    stopped(&mut h, 1, X);
    assert!(h.table_tasks(13).is_empty());
}

#[test]
fn bug_ignore_unknown_working_table_leaves_it_untracked_and_the_replay_adds_a_second_span() {
    let env = Env::new(0).with_bug(Bug::IgnoreUnknownWorkingTable);
    let mut h = MH::with_env(env, &[0, 1], schema_with_late_table());
    let out = h.bootstrap(vec![(1, NodeReport::spans(vec![bspan(X, full(12), Working, 160)]))]);
    assert!(traced(&out, "found a working table that is not in initial table map, just ignore it"));
    assert!(h.state(X).is_none());
    assert!(h.op(X).is_none());
    replay_create(&mut h, 12, 150);
    let tasks = h.table_tasks(12);
    assert_eq!(tasks.len(), 1);
    assert_ne!(tasks[0], X, "a second dispatcher is scheduled for the range X still replicates");
    assert_eq!(h.state(tasks[0]), Some((Absent, None)));
}

// ---------------------------------------------------------------- failures

#[test]
fn bootstrap_without_trigger_start_ts_fails() {
    let mut h = MH::new(&[0, 1], TestSchema::with_tables(&[10]));
    h.handle(0, bootstrap_resp(vec![], 0, vec![], vec![]));
    let out = h.handle(1, bootstrap_resp(vec![], 0, vec![], vec![]));
    assert!(traced(&out, "bootstrap failed: no table trigger start ts"));
    assert_eq!(h.m.state, MaintainerState::Bootstrapping);
    assert!(h.m.errors.iter().any(|e| e.code == ErrorCode::InitTableTriggerDispatcherFailed));
    assert!(h.table_tasks(10).is_empty());
}

#[test]
fn error_or_stale_response_does_not_complete_bootstrap() {
    let mut h = MH::new(&[0, 1], TestSchema::with_tables(&[10]));
    h.respond(0, NodeReport::default());
    let stale = Message::MaintainerBootstrapResponse {
        redo_checkpoint_ts: 0,
        cf: cf(),
        spans: vec![],
        checkpoint_ts: 0,
        operators: vec![],
        merge_operators: vec![],
        err: None,
        maintainer_epoch: EPOCH - 1,
    };
    h.handle(1, stale);
    assert_eq!(h.m.state, MaintainerState::Bootstrapping, "a response of another epoch does not count");
    let err =
        RunningError { node: n(1), code: ErrorCode::InitTableTriggerDispatcherFailed, message: "mismatch".into() };
    h.handle(
        1,
        Message::MaintainerBootstrapResponse {
            redo_checkpoint_ts: 0,
            cf: cf(),
            spans: vec![],
            checkpoint_ts: 0,
            operators: vec![],
            merge_operators: vec![],
            err: Some(err.clone()),
            maintainer_epoch: EPOCH,
        },
    );
    assert_eq!(h.m.state, MaintainerState::Bootstrapping);
    assert_eq!(h.m.errors, vec![err]);
}

/// Candidate fix `restored-remove-blocks-checkpoint` (not TiCDC): a restored Move/Split
/// removal blocks the checkpoint at its span's checkpoint; without the fix it does not
/// (`BlockTsForward` false, as in TiCDC).
#[test]
fn fix_restored_remove_blocks_checkpoint_only_when_switched_on() {
    for fix in [false, true] {
        let env =
            if fix { Env::new(0).with_fix(crate::bugs::Fix::RestoredRemoveBlocksCheckpoint) } else { Env::new(0) };
        let mut h = MH::with_env(env, &[0, 1], TestSchema::with_tables(&[10]));
        let r = NodeReport {
            spans: vec![bspan(X, full(10), Working, 120)],
            operators: vec![remove_req(X, full(10), OperatorType::Move, EPOCH)],
            merges: vec![],
        };
        h.bootstrap(vec![(1, r)]);
        match h.op(X) {
            Some(op @ Operator::Remove(_)) => assert_eq!(op.block_ts_forward(), fix),
            other => panic!("expected the restored remove, got {:?}", other),
        }
    }
}

/// Candidate fix `finished-move-checks-node` (not TiCDC): a move whose destination
/// reported Working and which is polled only after the cluster removed that capture binds
/// the span there (`MoveDispatcherOperator.OnNodeRemove` ignores a finished move,
/// `PostFinish` marks it Replicating, as in TiCDC); with the fix the span is placed again.
#[test]
fn fix_finished_move_checks_node_places_again_a_span_bound_to_a_removed_capture() {
    for fix in [false, true] {
        let env = if fix { Env::new(0).with_fix(crate::bugs::Fix::FinishedMoveChecksNode) } else { Env::new(0) };
        let mut h = MH::with_env(env, &[0, 1, 2], TestSchema::with_tables(&[10]));
        h.bootstrap(vec![(1, NodeReport::spans(vec![bspan(X, full(10), Working, 120)]))]);
        h.m.api_move_table(&mut h.env.ctx(), 10, n(2)).expect("move admitted");
        h.execute();
        stopped(&mut h, 1, X);
        assert!(matches!(h.op(X), Some(Operator::Move(_))), "the move now creates on node 2");
        // The destination reports Working: the move is done but not polled yet.
        h.handle(2, heartbeat(START, 1, vec![st(X, Working, START)]));
        h.node_change(&[0, 1]);
        h.execute();
        assert!(h.op(X).is_none());
        if fix {
            assert_eq!(h.state(X).map(|s| s.0), Some(Absent), "placed again");
        } else {
            assert_eq!(h.state(X), Some((Replicating, Some(n(2)))), "TiCDC binds it to the removed capture");
        }
    }
}

/// A maintainer removed (cascade: a restart or a stop) before its bootstrap finished is
/// `Removing` but was never initialized: it keeps ignoring heartbeats and is not
/// reported as bootstrapped.
#[test]
fn a_maintainer_removed_during_its_bootstrap_is_not_initialized() {
    let mut h = MH::new(&[0, 1], TestSchema::with_tables(&[10]));
    h.respond(0, NodeReport::default());
    let mut ctx = h.env.ctx();
    h.m.remove(&mut ctx, true, false);
    h.env.take();
    assert_eq!(h.m.state, MaintainerState::Removing);
    assert!(!h.m.initialized());
    assert!(!h.m.status().bootstrap_done);
    h.handle(1, heartbeat(START, 1, vec![st(X, Working, START)]));
    assert!(h.m.pipe.node_watermarks.is_empty(), "heartbeats still ignored");
}

/// `onMaintainerBootstrapResponse` reports an error in any state: a capture that joined
/// after the bootstrap answers with an error, the error goes to the coordinator and the
/// capture stays unanswered, so the bootstrap is resent to it.
#[test]
fn a_late_capture_s_bootstrap_error_is_reported_and_the_bootstrap_resent() {
    let mut h = MH::new(&[0], TestSchema::with_tables(&[10]));
    h.respond(0, NodeReport::default());
    assert!(h.m.initialized());
    h.node_change(&[0, 1]);
    assert!(h.m.late_bootstrap.contains(&n(1)));
    let err = RunningError {
        node: n(1),
        code: ErrorCode::InitTableTriggerDispatcherFailed,
        message: "table trigger event dispatcher present during nil trigger bootstrap".into(),
    };
    let out = h.handle(
        1,
        Message::MaintainerBootstrapResponse {
            redo_checkpoint_ts: 0,
            cf: cf(),
            spans: vec![],
            checkpoint_ts: 0,
            operators: vec![],
            merge_operators: vec![],
            err: Some(err),
            maintainer_epoch: h.m.epoch,
        },
    );
    assert!(traced(&out, "bootstrap response error"));
    assert_eq!(h.m.errors.len(), 1);
    assert!(h.m.late_bootstrap.contains(&n(1)), "still waiting for a good answer");
    h.env.now += 1_000;
    let out = h.tick();
    assert!(
        out.msgs.iter().any(|e| e.to == n(1) && matches!(e.msg, Message::MaintainerBootstrapRequest { .. })),
        "resent"
    );
}

/// `onHeartbeatRequest` returns before `onError` until the maintainer is initialized: an
/// error carried by an early heartbeat is not reported.
#[test]
fn a_heartbeat_error_before_the_bootstrap_is_not_reported() {
    let mut h = MH::new(&[0, 1], TestSchema::with_tables(&[10]));
    h.respond(0, NodeReport::default());
    let err = RunningError { node: n(1), code: ErrorCode::DispatcherManagerWritePathClosed, message: "closed".into() };
    let hb = match heartbeat(START, 1, vec![]) {
        Message::HeartBeatRequest { cf, watermark, statuses, complete_status, .. } => {
            Message::HeartBeatRequest { redo_watermark: None, cf, watermark, statuses, err: Some(err), complete_status }
        }
        _ => unreachable!(),
    };
    h.handle(1, hb);
    assert!(h.m.errors.is_empty());
}
