//! maintainer/operator/operator_controller_test.go.
//!
//! Go's hand-written test operators (`countingOperator`, `neverFinishOperator`,
//! `blockingFinishOperator`, `blockingScheduleOperator`, `blockingStartOperator`) are
//! the model's `Operator::Probe`, which counts the controller's calls. The model's
//! controller runs each entry point as one step, so the Go cases that block a goroutine
//! inside `Schedule`/`Start`/`IsFinished` to open a window become the same calls in
//! sequence (the window cannot be entered); their post-conditions are kept.

use super::support::*;

fn alive_a() -> BTreeSet<NodeId> {
    nodes(&[1])
}

fn add_probe(oc: &mut OperatorController, sc: &mut SpanController, p: ProbeOperator) -> Result<(), AdmitError> {
    oc.add_operator(Operator::Probe(p), sc, &alive_a(), 0)
}

/// operator_controller_test.go:35 `TestController_CountInflightDrainMovesFromNode`: one
/// unfinished move away from each of A and B; none from an unknown node.
#[test]
fn ticdc_operator_controller_TestController_CountInflightDrainMovesFromNode() {
    let mut sc = setup();
    let other = d(101);
    sc.insert(working(other, TableSpan::full(101), NODE_B, 1000));
    let alive = nodes(&[1, 2]);

    let mut oc = OperatorController::new();
    let mv = |id, from, to| Operator::Move(MoveDispatcherOperator::new(id, Some(from), to));
    assert!(oc.add_operator(mv(RS, NODE_A, NODE_B), &mut sc, &alive, 0).is_ok());
    assert!(oc.add_operator(mv(other, NODE_B, NODE_A), &mut sc, &alive, 0).is_ok());

    assert_eq!(oc.count_inflight_drain_moves_from_node(NODE_A), 1);
    assert_eq!(oc.count_inflight_drain_moves_from_node(NODE_B), 1);
    assert_eq!(oc.count_inflight_drain_moves_from_node(n(3)), 0);
}

/// operator_controller_test.go:264 `TestController_PostFinishCalledOnceOnReplace`: an
/// operator replaced by `removeReplicaSet` while the queue poll has it in hand gets
/// PostFinish once. Here the replacement comes first and the poll then meets the stale
/// heap entry (Go: the poll had popped it already).
#[test]
fn ticdc_operator_controller_TestController_PostFinishCalledOnceOnReplace() {
    let mut sc = setup();
    let mut oc = OperatorController::with_batch_size(1);
    let mut p = ProbeOperator::new(RS, None, false);
    p.finish_on_task_removed = true;
    let counts = p.counts.clone();
    assert!(add_probe(&mut oc, &mut sc, p).is_ok());

    let rm =
        RemoveDispatcherOperator::new(RS, TableSpan::full(TABLE), NODE_A, OperatorType::Remove, RemovePostFinish::None);
    assert!(oc.remove_replica_set(Operator::Remove(rm), &mut sc, &alive_a(), 0));
    for _ in 0..3 {
        let _ = oc.poll_queueing_operator(&mut sc, 0, &mut ids_from(500));
    }

    assert_eq!(cnt(&counts.post_finish), 1);
}

/// operator_controller_test.go:289
/// `TestController_OnNodeRemoved_WithOccupyOperatorMarksSpanAbsent`: a task held by an
/// occupy operator on the removed node becomes absent and unbound.
#[test]
fn ticdc_operator_controller_TestController_OnNodeRemoved_WithOccupyOperatorMarksSpanAbsent() {
    let mut sc = setup();
    let mut oc = OperatorController::new();
    let occupy = Operator::Occupy(OccupyDispatcherOperator::new(RS, node_of(&sc, RS)));
    assert!(oc.add_operator(occupy, &mut sc, &alive_a(), 0).is_ok());

    let before = absent_size(&sc);
    oc.on_node_removed(NODE_A, &mut sc);
    assert_eq!(absent_size(&sc), before + 1);
    assert_eq!(node_of(&sc, RS), None);
}

/// operator_controller_test.go:308 `TestController_AddMergeOperatorFailureCleansOccupyOperators`:
/// when the second source cannot be occupied, the merge is refused and the first
/// source's occupy operator is cancelled; only the blocking operator remains.
#[test]
fn ticdc_operator_controller_TestController_AddMergeOperatorFailureCleansOccupyOperators() {
    let mut sc = setup_merge(1000, 1000);
    let mut oc = OperatorController::new();

    assert!(add_probe(&mut oc, &mut sc, ProbeOperator::new(M2, None, false)).is_ok());

    let ret = oc.add_merge_operator(vec![M1, M2], MERGED, &mut sc, &alive_a(), 0);
    assert!(ret.is_err());

    assert!(oc.get(&M1).is_none());
    assert!(oc.get(&M2).is_some());
    assert_eq!(oc.size(), 1);
}

/// operator_controller_test.go:330 `TestMergeDispatcherOperatorScheduleMaintainerEpoch`:
/// the merge request carries the maintainer epoch.
#[test]
fn ticdc_operator_controller_TestMergeDispatcherOperatorScheduleMaintainerEpoch() {
    let mut sc = setup_merge(1000, 1000);
    let mut op = MergeDispatcherOperator::new_with_merged_task(&mut sc, vec![M1, M2], MERGED);
    let (_, req) = op.schedule(0, EPOCH).expect("a merge request");
    assert_eq!(req.maintainer_epoch, EPOCH);
}

/// operator_controller_test.go:340 `TestControllerRestoredMergeOperatorScheduleMaintainerEpoch`:
/// a merge restored through the controller (merged task already Scheduling on A) sends
/// its request with the controller's epoch, not zero. The model's controller gets the
/// epoch with each pass.
#[test]
fn ticdc_operator_controller_TestControllerRestoredMergeOperatorScheduleMaintainerEpoch() {
    let mut sc = setup_merge(1000, 1000);
    let mut oc = OperatorController::new();
    let first = sc.get(&M1).unwrap().clone();
    let last = sc.get(&M2).unwrap().span;
    sc.insert(SpanReplication {
        id: MERGED,
        span: TableSpan { table_id: first.span.table_id, start: first.span.start, end: last.end },
        schema_id: first.schema_id,
        node: Some(NODE_A),
        state: ReplicaState::Scheduling,
        checkpoint_ts: first.checkpoint_ts,
        last_state: None,
        block_state: None,
    });

    assert!(oc.add_restored_merge_operator(vec![M1, M2], MERGED, &mut sc, &alive_a(), 0).is_ok());
    let (msgs, _, _) = oc.execute(&mut sc, &alive_a(), 0, EPOCH, &mut ids_from(500));
    let merges: Vec<&MergeDispatcherRequest> = msgs
        .iter()
        .filter_map(|(_, r)| match r {
            OpRequest::Merge(m) => Some(m),
            _ => None,
        })
        .collect();
    assert_eq!(merges.len(), 1);
    assert_eq!(merges[0].maintainer_epoch, EPOCH);
}

/// operator_controller_test.go:379 `TestController_RemoveReplicaSet_ReplacesRemoveOperatorOnTaskRemoved`:
/// replacing a Remove that has a post-finish hook (a move/split restore, here: mark the
/// span absent) by another Remove cancels it without running the hook, and the new one
/// is registered.
#[test]
fn ticdc_operator_controller_TestController_RemoveReplicaSet_ReplacesRemoveOperatorOnTaskRemoved() {
    let mut sc = setup();
    let mut oc = OperatorController::new();
    let hooked = RemoveDispatcherOperator::new(
        RS,
        TableSpan::full(TABLE),
        NODE_A,
        OperatorType::Move,
        RemovePostFinish::MarkAbsent,
    );
    assert!(oc.add_operator(Operator::Remove(hooked), &mut sc, &alive_a(), 0).is_ok());

    let plain =
        RemoveDispatcherOperator::new(RS, TableSpan::full(TABLE), NODE_A, OperatorType::Remove, RemovePostFinish::None);
    oc.remove_replica_set(Operator::Remove(plain), &mut sc, &alive_a(), 0);

    assert_eq!(sc.get(&RS).map(|r| (r.state, r.node)), Some((ReplicaState::Replicating, Some(NODE_A))), "hook not run");
    assert!(oc.get(&RS).is_some());
}

/// operator_controller_test.go:408 `TestController_QuiesceExceptFreezesNonAllowedOperators`:
/// while quiescing, only the allowed operator gets statuses and is scheduled; node
/// removal is ignored; new ordinary operators are refused; the frozen operator still
/// holds the checkpoint and stays registered.
#[test]
fn ticdc_operator_controller_TestController_QuiesceExceptFreezesNonAllowedOperators() {
    let mut sc = setup();
    let allowed_id = d(21);
    replica_with_id(&mut sc, allowed_id, NODE_A);
    sc.update_status(&allowed_id, &status(allowed_id, ComponentState::Working, 20));
    let blocked_id = d(22);
    replica_with_id(&mut sc, blocked_id, NODE_A);

    let mut oc = OperatorController::with_batch_size(10);
    let allowed_op = ProbeOperator::new(allowed_id, Some(NODE_A), true);
    let blocked_op = ProbeOperator::new(blocked_id, Some(NODE_A), true);
    let (ac, bc) = (allowed_op.counts.clone(), blocked_op.counts.clone());
    assert!(add_probe(&mut oc, &mut sc, allowed_op).is_ok());
    assert!(add_probe(&mut oc, &mut sc, blocked_op).is_ok());

    oc.quiesce_except([allowed_id]);

    oc.update_operator_status(&allowed_id, NODE_A, &status(allowed_id, ComponentState::Working, 0), &mut sc);
    oc.update_operator_status(&blocked_id, NODE_A, &status(blocked_id, ComponentState::Working, 0), &mut sc);
    assert_eq!(cnt(&ac.check), 1);
    assert_eq!(cnt(&bc.check), 0);

    oc.on_node_removed(NODE_A, &mut sc);
    assert_eq!(cnt(&ac.node_removed), 0);
    assert_eq!(cnt(&bc.node_removed), 0);
    assert_eq!(absent_size(&sc), 0);

    let new_blocked_id = d(23);
    replica_with_id(&mut sc, new_blocked_id, NODE_A);
    assert!(add_probe(&mut oc, &mut sc, ProbeOperator::new(new_blocked_id, Some(NODE_A), false)).is_err());

    assert_eq!(oc.min_checkpoint_ts(&sc), Some(10));

    let (msgs, _, _) = oc.execute(&mut sc, &alive_a(), 0, EPOCH, &mut ids_from(500));
    assert_ne!(oc.next_execute_at, 0);
    assert_eq!(cnt(&ac.schedule), 1);
    assert_eq!(cnt(&bc.schedule), 0);
    assert_eq!(msgs.len(), 1);
    assert_eq!(oc.size(), 2);
}

/// operator_controller_test.go:469 `TestController_QuiesceExceptDropsBlockedOnlyQueueFromExecution`:
/// a queue of only frozen operators: the first poll drops the entry from the heap (the
/// operator stays registered and holds the checkpoint), the second ends the pass; the
/// operator is never scheduled.
#[test]
fn ticdc_operator_controller_TestController_QuiesceExceptDropsBlockedOnlyQueueFromExecution() {
    let mut sc = setup();
    let mut oc = OperatorController::with_batch_size(10);
    let blocked_op = ProbeOperator::new(RS, Some(NODE_A), true);
    let bc = blocked_op.counts.clone();
    assert!(add_probe(&mut oc, &mut sc, blocked_op).is_ok());

    oc.quiesce_except([d(55)]);

    let p = oc.poll_queueing_operator(&mut sc, 0, &mut ids_from(500));
    assert!(matches!(p, Poll::Skipped), "op nil, next true: {:?}", p);
    assert_eq!(oc.queue_len(), 0);
    assert_eq!(oc.size(), 1);
    assert_eq!(oc.min_checkpoint_ts(&sc), Some(1000));

    let p = oc.poll_queueing_operator(&mut sc, 0, &mut ids_from(500));
    assert!(matches!(p, Poll::End), "op nil, next false: {:?}", p);
    assert_eq!(cnt(&bc.schedule), 0);
}

/// operator_controller_test.go:501 `TestController_QuiesceExceptWaitsForInFlightSchedule`:
/// a Schedule that ran before the quiesce has sent its message; later passes do not
/// schedule the frozen operator again. The later pass runs when the operator would be
/// due (500 ms), so it could only stay silent because it is frozen.
#[test]
fn ticdc_operator_controller_TestController_QuiesceExceptWaitsForInFlightSchedule() {
    let mut sc = setup();
    let mut oc = OperatorController::with_batch_size(10);
    let op = ProbeOperator::new(RS, Some(NODE_A), false);
    let c = op.counts.clone();
    assert!(add_probe(&mut oc, &mut sc, op).is_ok());

    let (mut sent, _, _) = oc.execute(&mut sc, &alive_a(), 0, EPOCH, &mut ids_from(500));
    oc.quiesce_except([d(55)]);

    assert_eq!(cnt(&c.schedule), 1);
    assert_eq!(sent.len(), 1);

    let (more, _, _) = oc.execute(&mut sc, &alive_a(), 500, EPOCH, &mut ids_from(500));
    sent.extend(more);
    assert_eq!(cnt(&c.schedule), 1);
    assert_eq!(sent.len(), 1);
}

/// operator_controller_test.go:566 `TestController_QuiesceExceptWaitsForInFlightPush`: an
/// operator admitted before the quiesce was started once; an ordinary operator offered
/// after it is refused without being started.
#[test]
fn ticdc_operator_controller_TestController_QuiesceExceptWaitsForInFlightPush() {
    let mut sc = setup();
    let mut oc = OperatorController::with_batch_size(10);
    let op = ProbeOperator::new(RS, Some(NODE_A), false);
    let c = op.counts.clone();

    assert!(add_probe(&mut oc, &mut sc, op).is_ok());
    oc.quiesce_except([d(55)]);
    assert_eq!(cnt(&c.start), 1);

    let blocked_id = d(23);
    replica_with_id(&mut sc, blocked_id, NODE_A);
    let blocked = ProbeOperator::new(blocked_id, Some(NODE_A), false);
    let bc = blocked.counts.clone();
    assert!(add_probe(&mut oc, &mut sc, blocked).is_err());
    assert_eq!(cnt(&bc.start), 0);
}
