//! maintainer/operator/operator_move_test.go.

use super::support::*;
use crate::maintainer::operator::move_op::MoveState;

fn move_op() -> MoveDispatcherOperator {
    MoveDispatcherOperator::new(RS, Some(NODE_A), NODE_B)
}

/// operator_move_test.go:88 `TestMoveOperator_DestNodeRemovedBeforeOriginStopped`: losing
/// the destination before the origin stopped aborts to AbortRemoveOrigin, which keeps
/// sending Remove (epoch 7) to the origin; the origin's Stopped then finishes the move
/// with the span absent and unbound.
#[test]
fn ticdc_operator_move_TestMoveOperator_DestNodeRemovedBeforeOriginStopped() {
    let mut sc = setup();
    let mut op = move_op();
    op.start(&mut sc);
    assert!(!op.is_finished());
    assert_eq!(op.state, MoveState::RemoveOrigin);

    op.on_node_remove(NODE_B, &mut sc);
    assert_eq!(op.state, MoveState::AbortRemoveOrigin);
    assert_eq!(op.dest, NODE_B);
    assert_eq!(op.origin, Some(NODE_A));

    let (_, req) = op.schedule(&sc, 0, EPOCH).expect("a schedule request");
    assert_eq!(req.action, ScheduleAction::Remove);
    assert_eq!(req.config.dispatcher_id, RS);
    assert_eq!(req.maintainer_epoch, EPOCH);

    let before = absent_size(&sc);
    op.check(NODE_A, &status(RS, ComponentState::Stopped, 1500), &mut sc);
    assert!(op.is_finished());
    assert_eq!(absent_size(&sc), before + 1);
    assert_eq!(node_of(&sc, RS), None);
}

/// operator_move_test.go:132 `TestMoveOperator_DestNodeRemovedAfterOriginStopped`: once
/// the origin stopped (AddDest), losing the destination finishes the move with the span
/// absent and unbound.
#[test]
fn ticdc_operator_move_TestMoveOperator_DestNodeRemovedAfterOriginStopped() {
    let mut sc = setup();
    let mut op = move_op();
    op.start(&mut sc);
    assert!(!op.is_finished());

    op.check(NODE_A, &status(RS, ComponentState::Stopped, 1500), &mut sc);
    assert_eq!(op.state, MoveState::AddDest);

    let before = absent_size(&sc);
    op.on_node_remove(NODE_B, &mut sc);
    assert!(op.is_finished());
    assert_eq!(absent_size(&sc), before + 1);
    assert_eq!(node_of(&sc, RS), None);
}

/// operator_move_test.go:162 `TestMoveOperator_OriginNodeRemovedBeforeOriginStopped`:
/// losing the origin moves on to AddDest (Create to the destination); the move finishes
/// only when the destination reports Working.
#[test]
fn ticdc_operator_move_TestMoveOperator_OriginNodeRemovedBeforeOriginStopped() {
    let mut sc = setup();
    let mut op = move_op();
    op.start(&mut sc);
    assert!(!op.is_finished());
    assert_eq!(op.state, MoveState::RemoveOrigin);

    op.on_node_remove(NODE_A, &mut sc);
    assert_eq!(op.state, MoveState::AddDest);
    assert_eq!(op.origin, Some(NODE_A));
    assert_eq!(op.dest, NODE_B);

    let (to, req) = op.schedule(&sc, 0, EPOCH).expect("a schedule request");
    assert_eq!(req.action, ScheduleAction::Create);
    assert_eq!(to, NODE_B);
    assert_eq!(req.config.dispatcher_id, RS);
    assert!(!op.is_finished());

    op.check(NODE_B, &status(RS, ComponentState::Working, 2000), &mut sc);
    assert!(op.is_finished());
}

/// operator_move_test.go:205 `TestMoveOperator_OriginNodeRemovedAfterOriginStopped`: the
/// origin's removal after it stopped changes nothing: Create to the destination, done on
/// its Working.
#[test]
fn ticdc_operator_move_TestMoveOperator_OriginNodeRemovedAfterOriginStopped() {
    let mut sc = setup();
    let mut op = move_op();
    op.start(&mut sc);
    assert!(!op.is_finished());

    op.check(NODE_A, &status(RS, ComponentState::Stopped, 1500), &mut sc);
    assert_eq!(op.state, MoveState::AddDest);

    op.on_node_remove(NODE_A, &mut sc);
    assert_eq!(op.origin, Some(NODE_A));
    assert_eq!(op.dest, NODE_B);

    let (to, req) = op.schedule(&sc, 0, EPOCH).expect("a schedule request");
    assert_eq!(req.action, ScheduleAction::Create);
    assert_eq!(to, NODE_B);
    assert_eq!(req.config.dispatcher_id, RS);
    assert!(!op.is_finished());

    op.check(NODE_B, &status(RS, ComponentState::Working, 2000), &mut sc);
    assert!(op.is_finished());
}

/// operator_move_test.go:247
/// `TestMoveOperator_BothNodesRemovedBeforeStartDoesNotLeaveSchedulingWithoutNodeID`: a
/// move admitted with both nodes gone ends with the span absent, not Scheduling without
/// a node (affected nodes are checked after Start).
#[test]
fn ticdc_operator_move_TestMoveOperator_BothNodesRemovedBeforeStartDoesNotLeaveSchedulingWithoutNodeID() {
    let mut sc = setup();
    let alive = nodes(&[]);
    let mut oc = OperatorController::new();
    assert!(oc.add_operator(Operator::Move(move_op()), &mut sc, &alive, 0).is_ok());

    assert_eq!(absent_size(&sc), 1);
    assert_eq!(scheduling_size(&sc), 0);
    assert_eq!(node_of(&sc, RS), None);
}

/// operator_move_test.go:271 `TestMoveOperator_DestThenOriginRemovedAbortsToAbsent`:
/// destination lost, then origin lost: the move finishes with the span absent, and
/// PostFinish changes nothing more.
#[test]
fn ticdc_operator_move_TestMoveOperator_DestThenOriginRemovedAbortsToAbsent() {
    let mut sc = setup();
    let mut op = move_op();
    op.start(&mut sc);
    assert!(!op.is_finished());

    op.on_node_remove(NODE_B, &mut sc);
    assert_eq!(op.state, MoveState::AbortRemoveOrigin);
    assert!(!op.is_finished());

    let before = absent_size(&sc);
    op.on_node_remove(NODE_A, &mut sc);
    assert!(op.is_finished());
    assert_eq!(absent_size(&sc), before + 1);

    op.post_finish(&mut sc);
    assert_eq!(absent_size(&sc), before + 1);
    assert_eq!(node_of(&sc, RS), None);
}

/// operator_move_test.go:298 `TestMoveOperator_TaskRemovedByDDL`: task removal ends the
/// move as DoneNoPostFinish with the span back to replicating on the origin; nothing is
/// sent any more and PostFinish changes nothing.
#[test]
fn ticdc_operator_move_TestMoveOperator_TaskRemovedByDDL() {
    let mut sc = setup();
    let mut op = move_op();
    op.start(&mut sc);
    assert_eq!(op.state, MoveState::RemoveOrigin);
    assert_eq!(scheduling_size(&sc), 1);

    op.on_task_removed(&mut sc);
    assert!(op.is_finished());
    assert_eq!(op.state, MoveState::DoneNoPostFinish);
    assert_eq!(replicating_size(&sc), 1);
    assert_eq!(scheduling_size(&sc), 0);
    assert_eq!(node_of(&sc, RS), Some(NODE_A));
    assert!(op.schedule(&sc, 0, EPOCH).is_none());

    op.post_finish(&mut sc);
    assert_eq!(replicating_size(&sc), 1);
}
