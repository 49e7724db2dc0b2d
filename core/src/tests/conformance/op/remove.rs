//! maintainer/operator/operator_remove_test.go.

use super::support::*;

/// `newRemoveDispatcherOperator(spanController, replicaSet, O_Remove, 7)`: the node is
/// taken from the task when the operator is built.
fn remove_op(sc: &SpanController, id: DispatcherId) -> RemoveDispatcherOperator {
    let r = sc.get(&id).expect("task exists");
    RemoveDispatcherOperator::new(
        id,
        r.span,
        r.node.expect("task has a node"),
        OperatorType::Remove,
        RemovePostFinish::None,
    )
}

/// operator_remove_test.go:28 `TestRemoveOperator_NodeRemovedBeforeStopped`: the remove
/// request goes to node A with the epoch; node A's removal finishes the operator.
#[test]
fn ticdc_operator_remove_TestRemoveOperator_NodeRemovedBeforeStopped() {
    let mut sc = setup();
    let mut op = Operator::Remove(remove_op(&sc, RS));
    op.start(&mut sc);
    assert!(!op.is_finished());

    let (to, req) = sched_req(op.schedule(&sc, 0, EPOCH));
    assert_eq!(req.action, ScheduleAction::Remove);
    assert_eq!(to, NODE_A);
    assert_eq!(req.maintainer_epoch, EPOCH);

    op.on_node_remove(NODE_A, &mut sc);
    assert!(op.is_finished());
    op.post_finish(&mut sc, &mut ids_from(500));
}

/// operator_remove_test.go:54 `TestRemoveOperator_SnapshotNodeIDAfterMarkAbsent`: the
/// node is fixed at construction, so marking the span absent afterwards does not
/// redirect the request, and a Stopped status from that node still finishes it.
#[test]
fn ticdc_operator_remove_TestRemoveOperator_SnapshotNodeIDAfterMarkAbsent() {
    let mut sc = setup();
    let mut op = remove_op(&sc, RS);

    sc.mark_absent(&RS);
    assert_eq!(node_of(&sc, RS), None);

    let (to, _) = op.schedule(0, EPOCH).expect("a remove request");
    assert_eq!(to, NODE_A);

    op.check(NODE_A, &status(RS, ComponentState::Stopped, 1500), &mut sc);
    assert!(op.finished);
}

/// operator_remove_test.go:77 `TestRemoveOperator_NotFinishedOnWaitingMerge`:
/// WaitingMerge does not finish a remove; Stopped does.
#[test]
fn ticdc_operator_remove_TestRemoveOperator_NotFinishedOnWaitingMerge() {
    let mut sc = setup();
    let mut op = remove_op(&sc, RS);

    op.check(NODE_A, &status(RS, ComponentState::WaitingMerge, 1500), &mut sc);
    assert!(!op.finished);

    op.check(NODE_A, &status(RS, ComponentState::Stopped, 1500), &mut sc);
    assert!(op.finished);
}

/// operator_remove_test.go:100 `TestRemoveOperator_FinishedOnRemovedStatus`: Removed
/// finishes the remove and is recorded as the task's component status.
#[test]
fn ticdc_operator_remove_TestRemoveOperator_FinishedOnRemovedStatus() {
    let mut sc = setup();
    let mut op = remove_op(&sc, RS);

    op.check(NODE_A, &status(RS, ComponentState::Removed, 1500), &mut sc);
    assert!(op.finished);
    assert_eq!(sc.get(&RS).unwrap().last_state, Some(ComponentState::Removed));
}
