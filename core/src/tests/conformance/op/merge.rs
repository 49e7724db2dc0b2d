//! maintainer/operator/operator_merge_test.go.
//!
//! The Go tests build the merge operator with its occupy operators and call its methods
//! directly. In the model a merge's occupy operators are held by the controller, which
//! finishes them right after the merge's PostFinish; so the occupy and merge operators
//! are admitted to a controller (node A alive, nothing else happens at admission), the
//! merge's methods are called on it directly, and its PostFinish runs through the
//! controller's `finalizeOperator`.

use super::support::*;

struct MergeEnv {
    sc: SpanController,
    oc: OperatorController,
    sources: Vec<DispatcherId>,
}

fn merge_env(mut sc: SpanController, sources: Vec<DispatcherId>) -> MergeEnv {
    let alive = nodes(&[1]);
    let mut oc = OperatorController::new();
    occupy_all(&mut oc, &mut sc, &sources, &alive);
    // `NewMergeDispatcherOperator` + `Start()`.
    let op = MergeDispatcherOperator::new_with_merged_task(&mut sc, sources.clone(), MERGED);
    oc.add_operator(Operator::Merge(op), &mut sc, &alive, 0).unwrap();
    MergeEnv { sc, oc, sources }
}

impl MergeEnv {
    fn op(&mut self) -> &mut Operator {
        self.oc.get_mut(&MERGED).expect("merge operator")
    }
    fn merge(&self) -> &MergeDispatcherOperator {
        match self.oc.get(&MERGED) {
            Some(Operator::Merge(m)) => m,
            other => panic!("expected the merge operator, got {:?}", other),
        }
    }
    fn check(&mut self, from: NodeId, s: TableSpanStatus) {
        self.oc.get_mut(&MERGED).expect("merge operator").check(from, &s, &mut self.sc);
    }
    fn on_node_remove(&mut self, n: NodeId) {
        self.oc.get_mut(&MERGED).expect("merge operator").on_node_remove(n, &mut self.sc);
    }
    fn on_task_removed(&mut self) {
        self.oc.get_mut(&MERGED).expect("merge operator").on_task_removed(&mut self.sc);
    }
    fn post_finish(&mut self) {
        let f = self.oc.finalize_operator(&MERGED, &mut self.sc, &mut ids_from(500));
        assert_eq!(f.map(|f| f.len()), Some(0), "a merge has no follow-ups");
    }
    fn assert_occupy_finished(&self) {
        for id in &self.sources {
            assert!(occupy_finished(&self.oc, *id), "occupy operator of {} finished", id);
        }
    }
}

/// operator_merge_test.go:147 `TestMergeOperator_NodeRemovedBeforeWorking`: the merge
/// request goes to node A; losing node A aborts the merge, PostFinish marks both sources
/// absent and the occupy operators finish.
#[test]
fn ticdc_operator_merge_TestMergeOperator_NodeRemovedBeforeWorking() {
    let mut e = merge_env(setup_merge(1000, 1000), vec![M1, M2]);
    assert!(!e.op().is_finished());

    let msg = e.oc.get_mut(&MERGED).expect("merge operator").schedule(&e.sc, 0, EPOCH);
    let Some((to, OpRequest::Merge(_))) = msg else { panic!("expected a merge request, got {:?}", msg) };
    assert_eq!(to, NODE_A);

    e.on_node_remove(NODE_A);
    assert!(e.op().is_finished());
    assert!(e.merge().aborted);

    let before = absent_size(&e.sc);
    e.post_finish();
    assert_eq!(absent_size(&e.sc), before + 2);
    e.assert_occupy_finished();
}

/// operator_merge_test.go:188 `TestMergeOperator_TaskRemovedByDDLBeforeWorking`: a DDL
/// removal aborts the merge without marking the sources absent (they keep node A), the
/// merged task is removed and the occupy operators finish.
#[test]
fn ticdc_operator_merge_TestMergeOperator_TaskRemovedByDDLBeforeWorking() {
    let mut e = merge_env(setup_merge(1000, 1000), vec![M1, M2]);
    assert!(!e.op().is_finished());

    let before = absent_size(&e.sc);
    assert!(e.sc.get(&MERGED).is_some());

    e.on_task_removed();
    assert!(e.op().is_finished());
    assert!(e.merge().aborted);
    assert!(e.merge().aborted_by_ddl);

    e.post_finish();
    assert_eq!(absent_size(&e.sc), before);
    for id in [M1, M2] {
        assert_eq!(node_of(&e.sc, id), Some(NODE_A));
    }
    assert!(e.sc.get(&MERGED).is_none());
    e.assert_occupy_finished();
}

/// operator_merge_test.go:218
/// `TestMergeOperator_NewReplicaSetCheckpointTsUsesMinOfMergedReplicas`: the merged task
/// starts at the smaller checkpoint of its sources.
#[test]
fn ticdc_operator_merge_TestMergeOperator_NewReplicaSetCheckpointTsUsesMinOfMergedReplicas() {
    let mut sc = setup_merge(1500, 1000);
    let _op = MergeDispatcherOperator::new_with_merged_task(&mut sc, vec![M1, M2], MERGED);
    assert_eq!(sc.get(&MERGED).unwrap().checkpoint_ts, 1000);
}

/// operator_merge_test.go:231 `TestMergeOperator_SuccessfulMerge`: Working of the merged
/// dispatcher on node A finishes the merge; PostFinish removes the sources, keeps the
/// merged task replicating, and the occupy operators finish.
#[test]
fn ticdc_operator_merge_TestMergeOperator_SuccessfulMerge() {
    let mut e = merge_env(setup_merge(1000, 1000), vec![M1, M2]);

    e.check(NODE_A, status(MERGED, ComponentState::Working, 2000));
    assert!(e.op().is_finished());
    assert!(!e.merge().aborted);

    e.post_finish();
    assert!(e.sc.get(&M1).is_none());
    assert!(e.sc.get(&M2).is_none());
    assert!(e.sc.get(&MERGED).is_some());
    assert_eq!(absent_size(&e.sc), 0);
    assert_eq!(scheduling_size(&e.sc), 0);
    assert_eq!(replicating_size(&e.sc), 1);
    e.assert_occupy_finished();
}

/// operator_merge_test.go:262 `TestMergeOperator_PostFinishReleasesOccupyAfterRemovingOldReplicas`:
/// with 4096 sources, PostFinish removes every old task before it finishes the occupy
/// operators. Go watches for the window from another goroutine; here PostFinish is one
/// step, so the case checks the state once it is done: every source gone, every occupy
/// operator finished.
#[test]
fn ticdc_operator_merge_TestMergeOperator_PostFinishReleasesOccupyAfterRemovingOldReplicas() {
    let count = 4096u64;
    let mut sc = SpanController::new(d(1), NODE_A, 1, crate::config::SchedulerConfig::default());
    let width = TABLE_KEY_END / count;
    let mut sources = Vec::new();
    for i in 0..count {
        let id = DispatcherId(1_000 + i);
        let end = if i + 1 == count { TABLE_KEY_END } else { (i + 1) * width };
        sc.insert(working(id, TableSpan { table_id: TABLE, start: i * width, end }, NODE_A, 1000 + i));
        sources.push(id);
    }
    let mut e = merge_env(sc, sources.clone());
    e.check(NODE_A, status(MERGED, ComponentState::Working, 5000));
    assert!(e.op().is_finished());

    let last = *sources.last().unwrap();
    e.post_finish();
    assert!(e.sc.get(&last).is_none());
    e.assert_occupy_finished();
}

/// operator_merge_test.go:311 `TestMergeOperator_NodeRemovedAfterWorking`: node A lost
/// after Working but before PostFinish aborts the merge: merged task removed, both
/// sources absent and unbound, occupy operators finished.
#[test]
fn ticdc_operator_merge_TestMergeOperator_NodeRemovedAfterWorking() {
    let mut e = merge_env(setup_merge(1000, 1000), vec![M1, M2]);
    e.check(NODE_A, status(MERGED, ComponentState::Working, 2000));
    assert!(e.op().is_finished());

    e.on_node_remove(NODE_A);
    assert!(e.merge().aborted);

    e.post_finish();
    assert!(e.sc.get(&MERGED).is_none());
    assert_eq!(absent_size(&e.sc), 2);
    assert_eq!(scheduling_size(&e.sc), 0);
    assert_eq!(replicating_size(&e.sc), 0);
    assert_eq!(node_of(&e.sc, M1), None);
    assert_eq!(node_of(&e.sc, M2), None);
    e.assert_occupy_finished();
}

/// operator_merge_test.go:348 `TestMergeOperator_TaskRemovedByDDLAfterWorking`: a DDL
/// removal after Working aborts the merge but keeps the sources replicating on node A.
#[test]
fn ticdc_operator_merge_TestMergeOperator_TaskRemovedByDDLAfterWorking() {
    let mut e = merge_env(setup_merge(1000, 1000), vec![M1, M2]);
    e.check(NODE_A, status(MERGED, ComponentState::Working, 2000));
    assert!(e.op().is_finished());

    e.on_task_removed();
    assert!(e.merge().aborted);
    assert!(e.merge().aborted_by_ddl);

    e.post_finish();
    assert!(e.sc.get(&MERGED).is_none());
    assert_eq!(absent_size(&e.sc), 0);
    assert_eq!(scheduling_size(&e.sc), 0);
    assert_eq!(replicating_size(&e.sc), 2);
    assert_eq!(node_of(&e.sc, M1), Some(NODE_A));
    assert_eq!(node_of(&e.sc, M2), Some(NODE_A));
    e.assert_occupy_finished();
}
