//! maintainer/operator/operator_occupy_test.go.

use super::support::*;

/// operator_occupy_test.go:26 `TestOccupyOperator_NodeRemoved`: another node's removal
/// does nothing; the replica's node's removal marks the span absent and finishes the
/// operator (not as removed); it never sends.
#[test]
fn ticdc_operator_occupy_TestOccupyOperator_NodeRemoved() {
    let mut sc = setup();
    let mut op = OccupyDispatcherOperator::new(RS, node_of(&sc, RS));
    Operator::Occupy(op.clone()).start(&mut sc);
    assert!(!op.finished);

    op.on_node_remove(NODE_B, &mut sc);
    assert!(!op.finished);
    assert!(!op.removed);

    let before = absent_size(&sc);
    op.on_node_remove(NODE_A, &mut sc);
    assert!(op.finished);
    assert!(!op.removed);
    assert_eq!(absent_size(&sc), before + 1);

    let mut wrapped = Operator::Occupy(op);
    assert!(wrapped.schedule(&sc, 0, EPOCH).is_none());
    wrapped.post_finish(&mut sc, &mut ids_from(500));
}

/// operator_occupy_test.go:62 `TestOccupyOperator_TaskRemoved`: task removal finishes
/// the operator as removed without touching the span.
#[test]
fn ticdc_operator_occupy_TestOccupyOperator_TaskRemoved() {
    let mut sc = setup();
    let mut op = Operator::Occupy(OccupyDispatcherOperator::new(RS, node_of(&sc, RS)));
    op.start(&mut sc);
    assert!(!op.is_finished());

    let before = absent_size(&sc);
    op.on_task_removed(&mut sc);
    assert!(op.is_finished());
    let Operator::Occupy(o) = &op else { unreachable!() };
    assert!(o.removed);
    assert_eq!(absent_size(&sc), before);
    assert_eq!(node_of(&sc, RS), Some(NODE_A));

    op.post_finish(&mut sc, &mut ids_from(500));
}
