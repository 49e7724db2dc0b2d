//! maintainer/operator/operator_split_test.go.
//!
//! Go's `NewSplitDispatcherOperator` takes a PostFinish callback that admits an Add
//! operator per new span (scheduler/balance_splits.go:141-149); the model's split returns
//! those Add operators and the controller admits them during the same pass. Split
//! targets given as empty node IDs (`""`) have no model equivalent and are written as no
//! targets.

use super::support::*;

fn split_op(
    sc: &SpanController,
    id: DispatcherId,
    pieces: Vec<TableSpan>,
    targets: Vec<NodeId>,
) -> SplitDispatcherOperator {
    let r = sc.get(&id).expect("task exists");
    SplitDispatcherOperator::new(id, r.span, r.node.expect("task has a node"), pieces, targets)
}

/// The replica set to split (`a..m`) and one kept in its table (`m..z`), both on node A.
const TO_SPLIT: DispatcherId = DispatcherId(21);
const TO_KEEP: DispatcherId = DispatcherId(22);

fn setup_two() -> SpanController {
    let mut sc = SpanController::new(d(1), NODE_A, 1, crate::config::SchedulerConfig::default());
    sc.insert(working(TO_SPLIT, a_m(TABLE), NODE_A, 1000));
    sc.insert(working(TO_KEEP, m_z(TABLE), NODE_A, 1000));
    sc
}

/// `a..h` and `h..m`.
fn halves_of_a_m() -> Vec<TableSpan> {
    vec![part(TABLE, (0, 1), (1, 4)), part(TABLE, (1, 4), (1, 2))]
}

/// operator_split_test.go:32 `TestSplitOperator_OriginNodeRemovedBeforeStopped`: a
/// Remove is sent to the origin; losing the origin finishes the split as removed and
/// PostFinish only marks the span absent.
#[test]
fn ticdc_operator_split_TestSplitOperator_OriginNodeRemovedBeforeStopped() {
    let mut sc = setup();
    let mut op = split_op(&sc, RS, vec![a_m(TABLE), m_z(TABLE)], vec![]);
    op.start(&mut sc);
    assert!(!op.finished);

    let (_, req) = op.schedule(&sc, 0, EPOCH).expect("a schedule request");
    assert_eq!(req.action, ScheduleAction::Remove);

    op.on_node_remove(NODE_A);
    assert!(op.finished);
    assert!(op.removed);

    let before = absent_size(&sc);
    let follow = op.post_finish(&mut sc, &mut ids_from(500));
    assert!(follow.is_empty());
    assert_eq!(absent_size(&sc), before + 1);
}

/// operator_split_test.go:83 `TestSplitOperator_OriginNodeRemovedAfterStopped`: the
/// origin's removal after its Stopped still turns the split into a removal: the span is
/// marked absent and not split.
#[test]
fn ticdc_operator_split_TestSplitOperator_OriginNodeRemovedAfterStopped() {
    let mut sc = setup();
    let mut op = split_op(&sc, RS, vec![a_m(TABLE), m_z(TABLE)], vec![]);
    op.start(&mut sc);
    assert!(!op.finished);

    op.check(NODE_A, &status(RS, ComponentState::Stopped, 1500));
    assert!(op.finished);
    assert!(!op.removed);

    op.on_node_remove(NODE_A);
    assert!(op.finished);
    assert!(op.removed);

    let before = absent_size(&sc);
    op.post_finish(&mut sc, &mut ids_from(500));
    assert_eq!(absent_size(&sc), before + 1);
}

/// operator_split_test.go:139 `TestSplitOperator_SuccessfulSplitCreatesAbsentSpans`:
/// without targets, PostFinish replaces the task by two absent, unbound spans.
#[test]
fn ticdc_operator_split_TestSplitOperator_SuccessfulSplitCreatesAbsentSpans() {
    let mut sc = setup();
    let mut op = split_op(&sc, RS, vec![a_m(TABLE), m_z(TABLE)], vec![]);
    op.start(&mut sc);

    op.check(NODE_A, &status(RS, ComponentState::Stopped, 1500));
    assert!(op.finished);
    assert!(!op.removed);

    op.post_finish(&mut sc, &mut ids_from(500));
    assert!(sc.get(&RS).is_none());
    assert_eq!(sc.tasks_of_table(TABLE).len(), 2);
    assert_eq!(absent_size(&sc), 2);
    for r in sc.tasks_of_table(TABLE) {
        assert_eq!(r.node, None);
    }
}

/// operator_split_test.go:184 `TestSplitOperator_SuccessfulSplitToSchedulingTargets`:
/// with one target per new span, the new spans are scheduling on nodes A and B.
#[test]
fn ticdc_operator_split_TestSplitOperator_SuccessfulSplitToSchedulingTargets() {
    let mut sc = setup_two();
    let alive = nodes(&[1, 2]);
    let mut oc = OperatorController::new();
    let op = split_op(&sc, TO_SPLIT, halves_of_a_m(), vec![NODE_A, NODE_B]);
    oc.add_operator(Operator::Split(op), &mut sc, &alive, 0).unwrap();

    oc.update_operator_status(&TO_SPLIT, NODE_A, &status(TO_SPLIT, ComponentState::Stopped, 1500), &mut sc);
    assert!(oc.get(&TO_SPLIT).unwrap().is_finished());

    // PostFinish (and its Add operators) in the controller's pass.
    let (_, fin, _) = oc.execute(&mut sc, &alive, 0, EPOCH, &mut ids_from(500));
    assert_eq!(fin.len(), 1);

    assert!(sc.get(&TO_SPLIT).is_none());
    assert_eq!(absent_size(&sc), 0);
    assert_eq!(scheduling_size(&sc), 2);
    let seen: BTreeSet<Option<NodeId>> = sc.tasks_of_table(TABLE).iter().map(|r| r.node).collect();
    assert!(seen.contains(&Some(NODE_A)));
    assert!(seen.contains(&Some(NODE_B)));
}

/// operator_split_test.go:279 `TestSplitOperator_PostFinishCallbackFailureMarksSpanAbsent`:
/// when the Add operator of one new span (target B) cannot be admitted, that span stays
/// absent and unbound; the other is scheduling on A. The model's callback is the
/// controller's admission; it fails here because an operator already holds the new
/// span's ID (the second ID the split draws).
#[test]
fn ticdc_operator_split_TestSplitOperator_PostFinishCallbackFailureMarksSpanAbsent() {
    let mut sc = setup_two();
    let alive = nodes(&[1, 2]);
    let mut oc = OperatorController::new();
    let op = split_op(&sc, TO_SPLIT, halves_of_a_m(), vec![NODE_A, NODE_B]);
    oc.add_operator(Operator::Split(op), &mut sc, &alive, 0).unwrap();
    // The new spans get IDs 501 (target A) and 502 (target B); 502 is taken.
    oc.admission_insert(Operator::Probe(ProbeOperator::new(DispatcherId(502), None, false)), &mut sc, &alive, 0);

    oc.update_operator_status(&TO_SPLIT, NODE_A, &status(TO_SPLIT, ComponentState::Stopped, 1500), &mut sc);
    assert!(oc.get(&TO_SPLIT).unwrap().is_finished());
    let (_, fin, _) = oc.execute(&mut sc, &alive, 0, EPOCH, &mut ids_from(500));
    assert_eq!(fin.len(), 1);

    assert_eq!(absent_size(&sc), 1);
    assert_eq!(scheduling_size(&sc), 1);
    let seen: BTreeSet<Option<NodeId>> = sc.tasks_of_table(TABLE).iter().map(|r| r.node).collect();
    assert!(seen.contains(&Some(NODE_A)));
    assert!(seen.contains(&None));
}

/// operator_split_test.go:376 `TestSplitOperator_PostFinishSkipsWhenTargetNodesMismatch`:
/// one target for two spans: the new spans are absent, unbound, and no Add operator is
/// created.
#[test]
fn ticdc_operator_split_TestSplitOperator_PostFinishSkipsWhenTargetNodesMismatch() {
    let mut sc = setup();
    let mut op = split_op(&sc, RS, vec![a_m(TABLE), m_z(TABLE)], vec![NODE_A]);
    op.start(&mut sc);

    op.check(NODE_A, &status(RS, ComponentState::Stopped, 1500));
    assert!(op.finished);
    assert!(!op.removed);

    let follow = op.post_finish(&mut sc, &mut ids_from(500));
    assert_eq!(follow.len(), 0, "the callback is not invoked");
    assert!(sc.get(&RS).is_none());
    assert_eq!(sc.tasks_of_table(TABLE).len(), 2);
    assert_eq!(absent_size(&sc), 2);
    assert_eq!(scheduling_size(&sc), 0);
    for r in sc.tasks_of_table(TABLE) {
        assert_eq!(r.node, None);
    }
}

/// operator_split_test.go:431 `TestSplitOperator_TaskRemovedByDDLDoesNotSplit`: task
/// removal before the origin stopped finishes the split as removed; PostFinish does not
/// split (one task, absent).
#[test]
fn ticdc_operator_split_TestSplitOperator_TaskRemovedByDDLDoesNotSplit() {
    let mut sc = setup();
    let mut op = split_op(&sc, RS, vec![a_m(TABLE), m_z(TABLE)], vec![]);
    op.start(&mut sc);
    op.on_task_removed();
    assert!(op.finished);
    assert!(op.removed);

    op.post_finish(&mut sc, &mut ids_from(500));
    assert_eq!(sc.tasks_of_table(TABLE).len(), 1);
    assert_eq!(absent_size(&sc), 1);
}
