//! maintainer/operator/operator_add_test.go.

use super::support::*;

/// `newAddTestReplicaSet`: an absent task of table 200 (`"a".."b"`), schema 2, at 1000.
const ADD_ID: DispatcherId = DispatcherId(200);

fn setup_add() -> SpanController {
    let mut sc = setup();
    sc.insert(absent(ADD_ID, part(200, (0, 2), (1, 2)), 1000));
    sc
}

fn add_op() -> AddDispatcherOperator {
    AddDispatcherOperator::new(ADD_ID, NODE_B, OperatorType::Add)
}

/// operator_add_test.go:54 `TestAddOperator_DestNodeRemoved`: the Create goes to the
/// destination with the epoch; losing the destination finishes the add as removed and
/// its PostFinish leaves the span absent.
#[test]
fn ticdc_operator_add_TestAddOperator_DestNodeRemoved() {
    let mut sc = setup_add();
    let mut op = add_op();
    op.start(&mut sc);
    assert!(!op.finished);

    let (to, req) = op.schedule(&sc, 0, EPOCH).expect("a create request");
    assert_eq!(to, NODE_B);
    assert_eq!(req.maintainer_epoch, EPOCH);

    op.on_node_remove(NODE_B);
    assert!(op.finished);
    assert!(op.removed);

    op.post_finish(&mut sc);
    assert_eq!(absent_size(&sc), 1);
}

/// operator_add_test.go:88 `TestAddOperator_DestReportsWorking`: Start moves the span to
/// scheduling; Working from the destination finishes the add; PostFinish marks it
/// replicating on the destination.
#[test]
fn ticdc_operator_add_TestAddOperator_DestReportsWorking() {
    let mut sc = setup_add();
    let mut op = add_op();
    op.start(&mut sc);
    assert_eq!(absent_size(&sc), 0);
    assert_eq!(scheduling_size(&sc), 1);

    op.check(NODE_B, &status(ADD_ID, ComponentState::Working, 1000));
    assert!(op.finished);
    assert!(!op.removed);
    assert!(op.schedule(&sc, 0, EPOCH).is_none());

    op.post_finish(&mut sc);
    assert_eq!(absent_size(&sc), 0);
    assert_eq!(scheduling_size(&sc), 0);
    assert_eq!(replicating_size(&sc), 2, "the add's span and the environment's replica set");
    assert_eq!(node_of(&sc, ADD_ID), Some(NODE_B));
}

/// operator_add_test.go:120 `TestAddOperator_DestReportsRemoved`: Removed from the
/// destination finishes the add as removed; PostFinish leaves the span absent, unbound.
#[test]
fn ticdc_operator_add_TestAddOperator_DestReportsRemoved() {
    let mut sc = setup_add();
    let mut op = add_op();
    op.start(&mut sc);
    assert_eq!(scheduling_size(&sc), 1);

    op.check(NODE_B, &status(ADD_ID, ComponentState::Removed, 1000));
    assert!(op.finished);
    assert!(op.removed);

    op.post_finish(&mut sc);
    assert_eq!(absent_size(&sc), 1);
    assert_eq!(scheduling_size(&sc), 0);
    assert_eq!(replicating_size(&sc), 1, "only the environment's replica set");
    assert_eq!(node_of(&sc, ADD_ID), None);
}

/// operator_add_test.go:150 `TestAddOperator_StoppedStatusIgnored`: Stopped from the
/// destination neither finishes the add nor stops its Create requests.
#[test]
fn ticdc_operator_add_TestAddOperator_StoppedStatusIgnored() {
    let mut sc = setup_add();
    let mut op = add_op();
    op.start(&mut sc);
    assert!(!op.finished);

    op.check(NODE_B, &status(ADD_ID, ComponentState::Stopped, 1000));
    assert!(!op.finished);

    let (to, _) = op.schedule(&sc, 0, EPOCH).expect("a create request");
    assert_eq!(to, NODE_B);
}

/// operator_add_test.go:177 `TestAddOperator_TaskRemovedDoesNotReintroduceSpan`: after
/// the task left the span controller, task removal and PostFinish do not bring it back.
#[test]
fn ticdc_operator_add_TestAddOperator_TaskRemovedDoesNotReintroduceSpan() {
    let mut sc = setup_add();
    let mut op = add_op();
    op.start(&mut sc);
    assert!(sc.get(&ADD_ID).is_some());

    sc.remove(&ADD_ID);
    assert!(sc.get(&ADD_ID).is_none());

    let before = absent_size(&sc);
    op.on_task_removed();
    op.post_finish(&mut sc);
    assert_eq!(absent_size(&sc), before);
}
