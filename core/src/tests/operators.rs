//! Operator state machines (§6.2): the gaps left by the unit tests next to each
//! operator — message content and throttling, statuses from the right and the wrong
//! node, node loss, task removal and the post-finish effects on the span controller.

use super::harness::*;
use crate::config::SchedulerConfig;
use crate::maintainer::operator::controller::AdmitError;
use crate::maintainer::operator::move_op::MoveState;
use crate::maintainer::operator::*;
use crate::maintainer::span_controller::{ReplicaState, SpanController, SpanReplication};
use crate::messages::*;
use crate::types::*;
use std::collections::BTreeSet;

const T: TableId = 3;
const ID: DispatcherId = DispatcherId(9);

fn task(id: DispatcherId, span: TableSpan, node: Option<u32>, state: ReplicaState, cp: Ts) -> SpanReplication {
    SpanReplication {
        id,
        span,
        schema_id: SCHEMA,
        node: node.map(NodeId),
        state,
        checkpoint_ts: cp,
        last_state: None,
        block_state: None,
    }
}

/// A span controller with one full-table task `ID` of table `T`.
fn sc_with(node: Option<u32>, state: ReplicaState, cp: Ts) -> SpanController {
    let mut sc = SpanController::new(d(1), n(0), 100, SchedulerConfig::default());
    sc.insert(task(ID, TableSpan::full(T), node, state, cp));
    sc
}

fn state_of(sc: &SpanController, id: DispatcherId) -> (ReplicaState, Option<NodeId>) {
    let r = sc.get(&id).expect("task exists");
    (r.state, r.node)
}

fn alive() -> BTreeSet<NodeId> {
    nodes(&[0, 1, 2])
}

fn ids_from(start: u64) -> impl FnMut() -> DispatcherId {
    let mut next = start;
    move || {
        next += 1;
        DispatcherId(next)
    }
}

fn sched_of(m: Option<(NodeId, OpRequest)>) -> (NodeId, ScheduleDispatcherRequest) {
    match m {
        Some((to, OpRequest::Schedule(r))) => (to, r),
        other => panic!("expected a schedule request, got {:?}", other),
    }
}

// ---------------------------------------------------------------- Add

#[test]
fn add_create_message_carries_operator_type_span_and_config() {
    let mut sc = sc_with(None, ReplicaState::Absent, 130);
    let mut op = Operator::Add(AddDispatcherOperator::new(ID, n(2), OperatorType::Split));
    op.start(&mut sc);
    assert_eq!(state_of(&sc, ID), (ReplicaState::Scheduling, Some(n(2))));
    let (to, req) = sched_of(op.schedule(&sc, 0, 9));
    assert_eq!(to, n(2));
    assert_eq!(req.action, ScheduleAction::Create);
    assert_eq!(req.operator_type, OperatorType::Split, "the original operator type travels with the Create");
    assert_eq!(req.maintainer_epoch, 9);
    assert_eq!(req.config.dispatcher_id, ID);
    assert_eq!(req.config.span, TableSpan::full(T));
    assert_eq!(req.config.schema_id, SCHEMA);
    assert_eq!(req.config.start_ts, 130, "start ts = task checkpoint (above the committed 100)");
    assert!(!req.config.skip_dml_as_start_ts);
    // 10 s throttle: not at 9.999 s, again at 10 s.
    assert!(op.schedule(&sc, 9_999, 9).is_none());
    assert!(op.schedule(&sc, 10_000, 9).is_some());
}

#[test]
fn add_removed_status_from_dest_finishes_as_removed_and_marks_absent() {
    let mut sc = sc_with(None, ReplicaState::Absent, 100);
    let mut op = AddDispatcherOperator::new(ID, n(2), OperatorType::Add);
    op.start(&mut sc);
    // Stopped is ignored (only a warning in TiCDC); Removed from another node too.
    op.check(n(2), &st(ID, ComponentState::Stopped, 0));
    op.check(n(1), &st(ID, ComponentState::Removed, 0));
    assert!(!op.finished);
    op.check(n(2), &st(ID, ComponentState::Removed, 0));
    assert!(op.finished && op.removed);
    op.post_finish(&mut sc);
    assert_eq!(state_of(&sc, ID), (ReplicaState::Absent, None));
    assert!(op.schedule(&sc, 20_000, 1).is_none(), "a finished add sends nothing");
}

#[test]
fn add_task_removed_finishes_without_resurrecting_the_task() {
    let mut sc = sc_with(None, ReplicaState::Absent, 100);
    let mut op = AddDispatcherOperator::new(ID, n(2), OperatorType::Add);
    op.start(&mut sc);
    op.on_task_removed();
    assert!(op.finished && op.removed);
    sc.remove(&ID);
    op.post_finish(&mut sc);
    assert!(sc.get(&ID).is_none(), "post-finish of a removed add must not re-create the task");
    // With the task still present, the removed add leaves it absent (rescheduled later).
    let mut sc = sc_with(None, ReplicaState::Absent, 100);
    let mut op = AddDispatcherOperator::new(ID, n(2), OperatorType::Add);
    op.start(&mut sc);
    op.on_task_removed();
    op.post_finish(&mut sc);
    assert_eq!(state_of(&sc, ID), (ReplicaState::Absent, None));
}

#[test]
fn add_through_controller_repolls_every_500ms_but_resends_every_10s() {
    let mut sc = sc_with(None, ReplicaState::Absent, 100);
    let mut oc = OperatorController::new();
    oc.add_operator(Operator::Add(AddDispatcherOperator::new(ID, n(1), OperatorType::Add)), &mut sc, &alive(), 0)
        .unwrap();
    let mut sent = vec![];
    for t in (0..=10_500).step_by(500) {
        let (msgs, fin, _) = oc.execute(&mut sc, &alive(), t, 1, &mut ids_from(100));
        assert!(fin.is_empty());
        if !msgs.is_empty() {
            sent.push(t);
        }
    }
    assert_eq!(sent, vec![0, 10_000]);
    // Working from the wrong node does not finish it; from the dest it does.
    oc.update_operator_status(&ID, n(2), &st(ID, ComponentState::Working, 120), &mut sc);
    let (_, fin, _) = oc.execute(&mut sc, &alive(), 11_000, 1, &mut ids_from(100));
    assert!(fin.is_empty());
    oc.update_operator_status(&ID, n(1), &st(ID, ComponentState::Working, 120), &mut sc);
    let (_, fin, _) = oc.execute(&mut sc, &alive(), 11_001, 1, &mut ids_from(100));
    assert_eq!(fin.len(), 1);
    assert_eq!(state_of(&sc, ID), (ReplicaState::Replicating, Some(n(1))));
    assert!(!oc.has(&ID));
}

// ---------------------------------------------------------------- Remove

#[test]
fn remove_message_carries_original_operator_type_and_is_throttled() {
    let mut op = Operator::Remove(RemoveDispatcherOperator::new(
        ID,
        TableSpan::full(T),
        n(1),
        OperatorType::Move,
        RemovePostFinish::MarkAbsent,
    ));
    let sc = sc_with(Some(1), ReplicaState::Replicating, 100);
    let (to, req) = sched_of(op.schedule(&sc, 0, 4));
    assert_eq!(
        (to, req.action, req.operator_type, req.maintainer_epoch),
        (n(1), ScheduleAction::Remove, OperatorType::Move, 4)
    );
    assert_eq!((req.config.dispatcher_id, req.config.span), (ID, TableSpan::full(T)));
    assert!(op.schedule(&sc, 9_999, 4).is_none());
    assert!(op.schedule(&sc, 10_000, 4).is_some());
    assert!(!op.block_ts_forward());
}

#[test]
fn remove_finishes_on_removed_status_and_runs_post_finish() {
    // MarkAbsent (restored move/split remove): the span goes back to the scheduler.
    let mut sc = sc_with(Some(1), ReplicaState::Replicating, 100);
    let mut op =
        RemoveDispatcherOperator::new(ID, TableSpan::full(T), n(1), OperatorType::Split, RemovePostFinish::MarkAbsent);
    op.check(n(1), &st(ID, ComponentState::Working, 0), &mut sc);
    assert!(!op.finished, "Working does not finish a remove");
    op.check(n(1), &st(ID, ComponentState::Removed, 0), &mut sc);
    assert!(op.finished);
    op.post_finish(&mut sc, &mut || DispatcherId(0));
    assert_eq!(state_of(&sc, ID), (ReplicaState::Absent, None));
    // RemoveTask (bootstrap O_Remove restore / cleanup): the task is deleted.
    let mut sc = sc_with(Some(1), ReplicaState::Replicating, 100);
    let mut op =
        RemoveDispatcherOperator::new(ID, TableSpan::full(T), n(1), OperatorType::Remove, RemovePostFinish::RemoveTask);
    op.check(n(1), &st(ID, ComponentState::Stopped, 0), &mut sc);
    op.post_finish(&mut sc, &mut || DispatcherId(0));
    assert!(sc.get(&ID).is_none());
    // None (barrier drop): the span controller is untouched.
    let mut sc = sc_with(Some(1), ReplicaState::Replicating, 100);
    let mut op =
        RemoveDispatcherOperator::new(ID, TableSpan::full(T), n(1), OperatorType::Remove, RemovePostFinish::None);
    op.check(n(1), &st(ID, ComponentState::Stopped, 0), &mut sc);
    op.post_finish(&mut sc, &mut || DispatcherId(0));
    assert_eq!(state_of(&sc, ID), (ReplicaState::Replicating, Some(n(1))));
}

#[test]
fn remove_node_gone_finishes_with_post_finish() {
    let mut sc = sc_with(Some(1), ReplicaState::Replicating, 100);
    let mut op =
        RemoveDispatcherOperator::new(ID, TableSpan::full(T), n(1), OperatorType::Remove, RemovePostFinish::RemoveTask);
    op.on_node_remove(n(2));
    assert!(!op.finished);
    op.on_node_remove(n(1));
    assert!(op.finished && !op.removed);
    op.post_finish(&mut sc, &mut || DispatcherId(0));
    assert!(sc.get(&ID).is_none(), "the dispatcher died with its node: the task goes");
}

#[test]
fn remove_task_removed_skips_post_finish() {
    let mut sc = sc_with(Some(1), ReplicaState::Replicating, 100);
    let mut op =
        RemoveDispatcherOperator::new(ID, TableSpan::full(T), n(1), OperatorType::Move, RemovePostFinish::MarkAbsent);
    op.on_task_removed();
    assert!(op.finished && op.removed);
    op.post_finish(&mut sc, &mut || DispatcherId(0));
    assert_eq!(state_of(&sc, ID), (ReplicaState::Replicating, Some(n(1))), "postFinish skipped");
}

// ---------------------------------------------------------------- Move

#[test]
fn move_messages_throttle_and_reset_on_add_dest() {
    let mut sc = sc_with(Some(1), ReplicaState::Replicating, 140);
    let mut op = Operator::Move(MoveDispatcherOperator::new(ID, Some(n(1)), n(2)));
    op.start(&mut sc);
    assert_eq!(state_of(&sc, ID), (ReplicaState::Scheduling, Some(n(1))), "origin kept until it stopped");
    let (to, req) = sched_of(op.schedule(&sc, 0, 6));
    assert_eq!(
        (to, req.action, req.operator_type, req.maintainer_epoch, req.config.dispatcher_id),
        (n(1), ScheduleAction::Remove, OperatorType::Move, 6, ID)
    );
    assert!(op.schedule(&sc, 5_000, 6).is_none(), "Remove throttled");
    // Working from the origin does not count as stopped.
    op.check(n(1), &st(ID, ComponentState::Working, 150), &mut sc);
    assert!(matches!(&op, Operator::Move(m) if m.state == MoveState::RemoveOrigin));
    op.check(n(1), &st(ID, ComponentState::Stopped, 150), &mut sc);
    assert_eq!(state_of(&sc, ID), (ReplicaState::Scheduling, Some(n(2))));
    // The throttle is reset: the Create goes out at once, not 10 s after the Remove.
    let (to, req) = sched_of(op.schedule(&sc, 5_001, 6));
    assert_eq!(
        (to, req.action, req.operator_type, req.config.start_ts),
        (n(2), ScheduleAction::Create, OperatorType::Move, 150)
    );
    assert!(op.schedule(&sc, 5_002, 6).is_none());
    // A Working status from the old origin does not finish the move.
    op.check(n(1), &st(ID, ComponentState::Working, 150), &mut sc);
    assert!(!op.is_finished());
    op.check(n(2), &st(ID, ComponentState::Working, 150), &mut sc);
    assert!(op.is_finished());
    op.post_finish(&mut sc, &mut ids_from(0));
    assert_eq!(state_of(&sc, ID), (ReplicaState::Replicating, Some(n(2))));
}

#[test]
fn move_to_its_own_node_is_done_at_start() {
    let mut sc = sc_with(Some(1), ReplicaState::Replicating, 100);
    let mut op = MoveDispatcherOperator::new(ID, Some(n(1)), n(1));
    op.start(&mut sc);
    assert!(op.is_finished());
    assert!(op.schedule(&sc, 0, 1).is_none());
    op.post_finish(&mut sc);
    assert_eq!(state_of(&sc, ID), (ReplicaState::Replicating, Some(n(1))));
}

#[test]
fn move_origin_gone_skips_to_add_dest() {
    let mut sc = sc_with(Some(1), ReplicaState::Replicating, 100);
    let mut op = MoveDispatcherOperator::new(ID, Some(n(1)), n(2));
    op.start(&mut sc);
    op.on_node_remove(n(0), &mut sc);
    assert_eq!(op.state, MoveState::RemoveOrigin, "an unrelated node");
    op.on_node_remove(n(1), &mut sc);
    assert_eq!(op.state, MoveState::AddDest);
    assert_eq!(state_of(&sc, ID), (ReplicaState::Scheduling, Some(n(2))));
    let (to, req) = op.schedule(&sc, 0, 1).unwrap();
    assert_eq!((to, req.action), (n(2), ScheduleAction::Create));
}

#[test]
fn move_dest_gone_in_add_dest_marks_absent_without_post_finish() {
    let mut sc = sc_with(Some(1), ReplicaState::Replicating, 100);
    let mut op = MoveDispatcherOperator::new(ID, Some(n(1)), n(2));
    op.start(&mut sc);
    op.check(n(1), &st(ID, ComponentState::Stopped, 110), &mut sc);
    op.on_node_remove(n(2), &mut sc);
    assert_eq!(op.state, MoveState::DoneNoPostFinish);
    op.post_finish(&mut sc);
    assert_eq!(state_of(&sc, ID), (ReplicaState::Absent, None));
}

#[test]
fn move_abort_keeps_sending_remove_to_origin_and_finishes_when_origin_dies() {
    let mut sc = sc_with(Some(1), ReplicaState::Replicating, 100);
    let mut op = MoveDispatcherOperator::new(ID, Some(n(1)), n(2));
    op.start(&mut sc);
    assert!(op.schedule(&sc, 0, 1).is_some());
    op.on_node_remove(n(2), &mut sc);
    assert_eq!(op.state, MoveState::AbortRemoveOrigin);
    // The throttle was reset: the Remove to the origin is resent immediately.
    let (to, req) = op.schedule(&sc, 1, 1).unwrap();
    assert_eq!((to, req.action), (n(1), ScheduleAction::Remove));
    assert_eq!(state_of(&sc, ID), (ReplicaState::Scheduling, Some(n(1))), "span not absent while origin may still run");
    // A Working status from the origin is not a stop.
    op.check(n(1), &st(ID, ComponentState::Working, 0), &mut sc);
    assert_eq!(op.state, MoveState::AbortRemoveOrigin);
    op.on_node_remove(n(1), &mut sc);
    assert_eq!(op.state, MoveState::DoneNoPostFinish);
    assert_eq!(state_of(&sc, ID), (ReplicaState::Absent, None));
}

#[test]
fn move_task_removed_finishes_without_post_finish() {
    let mut sc = sc_with(Some(1), ReplicaState::Replicating, 100);
    let mut op = MoveDispatcherOperator::new(ID, Some(n(1)), n(2));
    op.start(&mut sc);
    op.on_task_removed(&mut sc);
    assert!(op.is_finished());
    assert_eq!(op.state, MoveState::DoneNoPostFinish);
    assert_eq!(state_of(&sc, ID), (ReplicaState::Replicating, Some(n(1))), "the drop path sees the origin node");
}

#[test]
fn empty_origin_move_through_controller_sends_create_first() {
    let mut sc = sc_with(None, ReplicaState::Absent, 100);
    let mut oc = OperatorController::new();
    oc.add_operator(Operator::Move(MoveDispatcherOperator::new(ID, None, n(2))), &mut sc, &alive(), 0).unwrap();
    let (msgs, _, _) = oc.execute(&mut sc, &alive(), 0, 3, &mut ids_from(0));
    assert_eq!(msgs.len(), 1);
    let (to, req) = sched_of(msgs.into_iter().next());
    assert_eq!((to, req.action, req.operator_type), (n(2), ScheduleAction::Create, OperatorType::Move));
}

#[test]
fn empty_origin_move_to_dead_dest_finishes_absent() {
    let mut sc = sc_with(None, ReplicaState::Absent, 100);
    let mut oc = OperatorController::new();
    oc.add_operator(Operator::Move(MoveDispatcherOperator::new(ID, None, n(7))), &mut sc, &alive(), 0).unwrap();
    let (msgs, fin, _) = oc.execute(&mut sc, &alive(), 0, 3, &mut ids_from(0));
    assert!(msgs.is_empty());
    assert_eq!(fin.len(), 1);
    assert_eq!(state_of(&sc, ID), (ReplicaState::Absent, None));
    assert!(oc.min_checkpoint_ts(&sc).is_none());
}

// ---------------------------------------------------------------- Split

fn split_op(targets: Vec<NodeId>) -> (SpanController, SplitDispatcherOperator, Vec<TableSpan>) {
    let mut sc = sc_with(Some(1), ReplicaState::Replicating, 120);
    let pieces = split_span_evenly(&TableSpan::full(T), 3);
    let mut op = SplitDispatcherOperator::new(ID, TableSpan::full(T), n(1), pieces.clone(), targets);
    op.start(&mut sc);
    (sc, op, pieces)
}

#[test]
fn split_sends_remove_to_origin_and_is_throttled() {
    let (sc, mut op, _) = split_op(vec![]);
    assert_eq!(state_of(&sc, ID), (ReplicaState::Scheduling, Some(n(1))));
    let (to, req) = op.schedule(&sc, 0, 8).unwrap();
    assert_eq!(
        (to, req.action, req.operator_type, req.maintainer_epoch, req.config.dispatcher_id, req.config.span),
        (n(1), ScheduleAction::Remove, OperatorType::Split, 8, ID, TableSpan::full(T))
    );
    assert!(op.schedule(&sc, 9_999, 8).is_none());
    assert!(op.schedule(&sc, 10_000, 8).is_some());
}

#[test]
fn split_without_targets_replaces_the_span_by_absent_pieces() {
    let (mut sc, mut op, pieces) = split_op(vec![]);
    op.check(n(1), &st(ID, ComponentState::Working, 130));
    op.check(n(2), &st(ID, ComponentState::Stopped, 130));
    assert!(!op.finished, "Working from origin / Stopped from elsewhere do not finish");
    op.check(n(1), &st(ID, ComponentState::Stopped, 130));
    assert!(op.finished && !op.removed);
    assert_eq!(op.checkpoint_ts, 130);
    let follow = op.post_finish(&mut sc, &mut ids_from(500));
    assert!(follow.is_empty(), "no targets: the basic scheduler places the pieces");
    assert!(sc.get(&ID).is_none());
    let tasks = sc.tasks_of_table(T);
    assert_eq!(tasks.len(), 3);
    let mut spans: Vec<TableSpan> = tasks.iter().map(|r| r.span).collect();
    spans.sort();
    assert_eq!(spans, pieces);
    for r in tasks {
        assert_eq!((r.state, r.node), (ReplicaState::Absent, None));
        assert!(
            r.checkpoint_ts <= 130 && r.checkpoint_ts >= 120,
            "new pieces start no later than the origin stopped: {}",
            r.checkpoint_ts
        );
    }
    assert_eq!(sc.table_partition_problems(T), (vec![], vec![]));
}

#[test]
fn split_with_targets_yields_add_operators_of_type_split() {
    let targets = vec![n(0), n(1), n(2)];
    let mut sc = sc_with(Some(1), ReplicaState::Replicating, 120);
    let pieces = split_span_evenly(&TableSpan::full(T), 3);
    let mut oc = OperatorController::new();
    oc.add_operator(
        Operator::Split(SplitDispatcherOperator::new(ID, TableSpan::full(T), n(1), pieces, targets.clone())),
        &mut sc,
        &alive(),
        0,
    )
    .unwrap();
    oc.update_operator_status(&ID, n(1), &st(ID, ComponentState::Stopped, 125), &mut sc);
    // The split's PostFinish admits the Add operators at once, due now, so the same
    // pass sends their Creates (operator_split.go:187-197).
    let (msgs, fin, follow) = oc.execute(&mut sc, &alive(), 1, 2, &mut ids_from(500));
    assert_eq!(fin.len(), 1);
    assert_eq!(follow.len(), 3);
    let mut dests = vec![];
    for r in sc.tasks_of_table(T) {
        let Some(Operator::Add(a)) = oc.get(&r.id) else { panic!("no add operator for {}", r.id) };
        assert_eq!(a.op_type, OperatorType::Split);
        dests.push(a.dest);
    }
    assert_eq!(dests, targets);
    let mut creates: Vec<(NodeId, OperatorType)> =
        msgs.into_iter().map(|m| sched_of(Some(m))).map(|(to, r)| (to, r.operator_type)).collect();
    creates.sort();
    assert_eq!(creates, targets.iter().map(|t| (*t, OperatorType::Split)).collect::<Vec<_>>());
    for r in sc.tasks_of_table(T) {
        assert_eq!(r.state, ReplicaState::Scheduling);
    }
}

#[test]
fn split_with_misaligned_targets_leaves_pieces_absent() {
    let (mut sc, mut op, _) = split_op(vec![n(0)]);
    SplitDispatcherOperator::check(&mut op, n(1), &st(ID, ComponentState::Stopped, 125));
    let follow = op.post_finish(&mut sc, &mut ids_from(500));
    assert!(follow.is_empty());
    assert!(sc.tasks_of_table(T).iter().all(|r| r.state == ReplicaState::Absent));
}

#[test]
fn split_origin_lost_marks_original_absent_and_does_not_split() {
    let (mut sc, mut op, _) = split_op(vec![]);
    op.on_node_remove(n(2));
    assert!(!op.finished);
    op.on_node_remove(n(1));
    assert!(op.finished && op.removed);
    assert!(op.schedule(&sc, 20_000, 1).is_none());
    let follow = op.post_finish(&mut sc, &mut ids_from(500));
    assert!(follow.is_empty());
    assert_eq!(sc.tasks_of_table(T).len(), 1);
    assert_eq!(state_of(&sc, ID), (ReplicaState::Absent, None));
}

#[test]
fn split_task_removed_is_a_no_op_on_a_dropped_task() {
    let (mut sc, mut op, _) = split_op(vec![]);
    op.on_task_removed();
    sc.remove(&ID);
    op.post_finish(&mut sc, &mut ids_from(500));
    assert!(sc.tasks_of_table(T).is_empty(), "no pieces for a dropped table");
}

// ---------------------------------------------------------------- Merge / Occupy

fn sc_halves(node_b: u32) -> SpanController {
    let mut sc = SpanController::new(d(1), n(0), 100, SchedulerConfig::default());
    let (a, b) = halves(T);
    sc.insert(task(d(10), a, Some(1), ReplicaState::Replicating, 110));
    sc.insert(task(d(11), b, Some(node_b), ReplicaState::Replicating, 105));
    sc
}

#[test]
fn merge_request_is_throttled_and_stops_after_finish() {
    let mut op = MergeDispatcherOperator::new(d(99), vec![d(10), d(11)], n(1), false);
    let (to, req) = op.schedule(0, 3).unwrap();
    assert_eq!(
        (to, req.dispatcher_ids, req.merged_dispatcher_id, req.maintainer_epoch),
        (n(1), vec![d(10), d(11)], d(99), 3)
    );
    assert!(op.schedule(9_999, 3).is_none());
    assert!(op.schedule(10_000, 3).is_some());
    // A non-Working status (the target Preparing) does not finish it.
    op.check(n(1), &st(d(99), ComponentState::Preparing, 0));
    op.check(n(1), &st(d(99), ComponentState::Initializing, 0));
    assert!(!op.finished);
    op.on_node_remove(n(2));
    assert!(!op.finished && !op.aborted);
    op.check(n(1), &st(d(99), ComponentState::Working, 140));
    assert!(op.finished && !op.aborted);
    assert_eq!(op.checkpoint_ts, 140);
    assert!(op.schedule(20_000, 3).is_none());
    assert!(!Operator::Merge(op).block_ts_forward());
}

#[test]
fn merge_success_records_checkpoint_on_merged_task() {
    let mut sc = sc_halves(1);
    let mut oc = OperatorController::new();
    oc.add_merge_operator(vec![d(10), d(11)], d(99), &mut sc, &alive(), 0).unwrap();
    assert_eq!(sc.get(&d(99)).unwrap().checkpoint_ts, 105);
    oc.update_operator_status(&d(99), n(1), &st(d(99), ComponentState::Working, 160), &mut sc);
    oc.execute(&mut sc, &alive(), 1, 1, &mut ids_from(0));
    let r = sc.get(&d(99)).unwrap();
    assert_eq!((r.state, r.node, r.checkpoint_ts), (ReplicaState::Replicating, Some(n(1)), 160));
}

#[test]
fn merge_of_non_consecutive_or_single_spans_is_rejected() {
    let mut sc = sc_halves(1);
    let mut oc = OperatorController::new();
    assert!(oc.add_merge_operator(vec![d(10)], d(99), &mut sc, &alive(), 0).is_err());
    // Reversed order: not consecutive in key order.
    assert!(oc.add_merge_operator(vec![d(11), d(10)], d(99), &mut sc, &alive(), 0).is_err());
    // The merged ID must be new.
    assert!(oc.add_merge_operator(vec![d(10), d(11)], d(10), &mut sc, &alive(), 0).is_err());
    assert_eq!(oc.running().count(), 0);
    assert_eq!(state_of(&sc, d(10)), (ReplicaState::Replicating, Some(n(1))));
}

#[test]
fn merge_rolls_back_occupy_when_a_source_already_has_an_operator() {
    let mut sc = sc_halves(1);
    let mut oc = OperatorController::new();
    oc.add_operator(Operator::Move(MoveDispatcherOperator::new(d(11), Some(n(1)), n(2))), &mut sc, &alive(), 0)
        .unwrap();
    assert!(oc.add_merge_operator(vec![d(10), d(11)], d(99), &mut sc, &alive(), 0).is_err());
    assert!(!oc.has(&d(10)), "the occupy of the first source is rolled back");
    assert!(matches!(oc.get(&d(11)), Some(Operator::Move(_))), "the move keeps its ID");
    assert!(sc.get(&d(99)).is_none());
}

#[test]
fn occupy_sends_nothing_ignores_statuses_and_goes_absent_with_its_node() {
    let mut sc = sc_halves(1);
    let mut op = Operator::Occupy(OccupyDispatcherOperator::new(d(10), Some(n(1))));
    op.start(&mut sc);
    assert!(op.schedule(&sc, 0, 1).is_none());
    op.check(n(1), &st(d(10), ComponentState::Stopped, 0), &mut sc);
    assert!(!op.is_finished());
    assert!(!op.block_ts_forward());
    op.on_node_remove(n(2), &mut sc);
    assert!(!op.is_finished());
    op.on_node_remove(n(1), &mut sc);
    assert!(op.is_finished());
    assert_eq!(state_of(&sc, d(10)), (ReplicaState::Absent, None));
    // Task removed: finished, and its post-finish leaves the span controller alone.
    let mut sc = sc_halves(1);
    let mut op = Operator::Occupy(OccupyDispatcherOperator::new(d(11), Some(n(1))));
    op.on_task_removed(&mut sc);
    assert!(op.is_finished());
    assert!(op.post_finish(&mut sc, &mut ids_from(0)).is_empty());
    assert_eq!(state_of(&sc, d(11)), (ReplicaState::Replicating, Some(n(1))));
}

#[test]
fn merge_status_routing_and_abort_by_node_via_controller() {
    let mut sc = sc_halves(1);
    let mut oc = OperatorController::new();
    oc.add_merge_operator(vec![d(10), d(11)], d(99), &mut sc, &alive(), 0).unwrap();
    // A source's status reaches its occupy operator, which ignores it.
    oc.update_operator_status(&d(10), n(1), &st(d(10), ComponentState::Stopped, 0), &mut sc);
    assert!(matches!(oc.get(&d(10)), Some(Operator::Occupy(o)) if !o.finished));
    // Other node lost: nothing happens.
    oc.on_node_removed(n(2), &mut sc);
    let (_, fin, _) = oc.execute(&mut sc, &alive(), 0, 1, &mut ids_from(0));
    assert!(fin.is_empty());
    assert_eq!(oc.running().count(), 3);
}

// ---------------------------------------------------------------- controller

#[test]
fn node_removed_marks_tasks_without_operator_absent_and_leaves_operated_ones_to_their_operator() {
    let mut sc = sc_halves(1);
    let mut oc = OperatorController::new();
    oc.add_operator(
        Operator::Remove(RemoveDispatcherOperator::new(
            d(11),
            halves(T).1,
            n(1),
            OperatorType::Move,
            RemovePostFinish::None,
        )),
        &mut sc,
        &alive(),
        0,
    )
    .unwrap();
    oc.on_node_removed(n(1), &mut sc);
    assert_eq!(state_of(&sc, d(10)), (ReplicaState::Absent, None));
    assert_eq!(
        state_of(&sc, d(11)),
        (ReplicaState::Replicating, Some(n(1))),
        "its operator decides (post-finish None)"
    );
    let (_, fin, _) = oc.execute(&mut sc, &alive(), 0, 1, &mut ids_from(0));
    assert_eq!(fin.len(), 1);
}

#[test]
fn admission_rejects_operator_without_task() {
    let mut sc = sc_halves(1);
    let mut oc = OperatorController::new();
    let op = Operator::Add(AddDispatcherOperator::new(d(77), n(1), OperatorType::Add));
    assert_eq!(oc.add_operator(op, &mut sc, &alive(), 0), Err(AdmitError::NoTask));
    assert_eq!(oc.running().count(), 0);
}

#[test]
fn task_removed_via_controller_cancels_the_operator() {
    let mut sc = sc_halves(1);
    let mut oc = OperatorController::new();
    oc.add_operator(Operator::Move(MoveDispatcherOperator::new(d(10), Some(n(1)), n(2))), &mut sc, &alive(), 0)
        .unwrap();
    oc.on_task_removed(&d(10), &mut sc);
    assert!(!oc.has(&d(10)));
    assert_eq!(oc.running().count(), 0);
    let (msgs, _, _) = oc.execute(&mut sc, &alive(), 0, 1, &mut ids_from(0));
    assert!(msgs.is_empty(), "a cancelled operator sends nothing");
}

#[test]
fn remove_restored_at_bootstrap_repairs_the_coverage_it_leaves() {
    use crate::maintainer::span_controller::{ReplicaState, SpanReplication};
    let mut sc = SpanController::new(DispatcherId(1), NodeId(0), 100, crate::config::SchedulerConfig::default());
    let halves = split_span_evenly(&TableSpan::full(4), 2);
    for (i, s) in halves.iter().enumerate() {
        sc.insert(SpanReplication {
            id: DispatcherId(10 + i as u64),
            span: *s,
            schema_id: 2,
            node: Some(NodeId(1)),
            state: ReplicaState::Replicating,
            checkpoint_ts: 100,
            last_state: None,
            block_state: None,
        });
    }
    let mut op = RemoveDispatcherOperator::new(
        DispatcherId(10),
        halves[0],
        NodeId(1),
        OperatorType::Remove,
        RemovePostFinish::RemoveTaskAndRepair { start_ts: 90, schema_id: 2 },
    );
    op.check(
        NodeId(1),
        &TableSpanStatus {
            mode: Mode::Default,
            id: DispatcherId(10),
            state: ComponentState::Stopped,
            checkpoint_ts: 120,
            event_size_per_second: 0,
        },
        &mut sc,
    );
    assert!(op.finished);
    op.post_finish(&mut sc, &mut || DispatcherId(77));
    assert!(sc.get(&DispatcherId(10)).is_none());
    let new = sc.get(&DispatcherId(77)).expect("the uncovered half is re-added");
    assert_eq!((new.span, new.state, new.checkpoint_ts, new.schema_id), (halves[0], ReplicaState::Absent, 90, 2));
    assert_eq!(sc.table_partition_problems(4), (vec![], vec![]));
    // Nothing to repair when another task still covers the range.
    let mut op2 = RemoveDispatcherOperator::new(
        DispatcherId(77),
        halves[0],
        NodeId(1),
        OperatorType::Remove,
        RemovePostFinish::RemoveTaskAndRepair { start_ts: 90, schema_id: 2 },
    );
    sc.insert(SpanReplication {
        id: DispatcherId(99),
        span: TableSpan::full(4),
        schema_id: 2,
        node: Some(NodeId(2)),
        state: ReplicaState::Replicating,
        checkpoint_ts: 100,
        last_state: None,
        block_state: None,
    });
    op2.on_node_remove(NodeId(1));
    op2.post_finish(&mut sc, &mut || DispatcherId(78));
    assert!(sc.get(&DispatcherId(78)).is_none());
}
