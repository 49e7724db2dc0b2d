//! Checkpoint computation (§9, `Maintainer::calc_checkpoint`) and heartbeat acceptance.

use super::harness::*;
use crate::config::SchedulerConfig;
use crate::maintainer::operator::*;
use crate::maintainer::span_controller::{ReplicaState, SpanController, SpanReplication};
use crate::messages::*;
use crate::types::*;

const X: DispatcherId = DispatcherId(1000); // table 10 on node 1
const Y: DispatcherId = DispatcherId(1001); // table 11 on node 2

fn setup_with(r1: NodeReport) -> MH {
    let mut h = MH::new(&[0, 1, 2], TestSchema::with_tables(&[10, 11]));
    h.bootstrap(vec![
        (1, r1),
        (2, NodeReport::spans(vec![bspan(Y, TableSpan::full(11), ComponentState::Working, 150)])),
    ]);
    h
}
fn setup() -> MH {
    setup_with(NodeReport::spans(vec![bspan(X, TableSpan::full(10), ComponentState::Working, 150)]))
}

fn wm(h: &mut MH, node: u32, cp: Ts, seq: u64) {
    h.handle(node, heartbeat(cp, seq, vec![]));
}
fn wm_all(h: &mut MH, cp: Ts, seq: u64) {
    for i in 0..3 {
        wm(h, i, cp, seq);
    }
}

#[test]
fn every_node_with_tasks_and_the_maintainers_own_node_need_a_watermark() {
    let mut h = setup();
    assert_eq!(h.m.calc_checkpoint(), None);
    wm(&mut h, 1, 300, 1);
    wm(&mut h, 2, 250, 1);
    assert_eq!(h.m.calc_checkpoint(), None, "own node 0 hosts only the trigger but is always required");
    assert_eq!(h.m.pipe.committed_checkpoint, START);
    wm(&mut h, 0, 400, 1);
    assert_eq!(h.m.calc_checkpoint(), Some(250));
    assert_eq!(h.m.pipe.committed_checkpoint, 250);
    assert_eq!(
        h.m.pipe.sc.committed_checkpoint, 250,
        "the span controller sees the committed checkpoint (start-ts clamp)"
    );
}

#[test]
fn a_node_without_tasks_is_not_required() {
    let mut h = setup();
    // Node 2 loses its only task: it is no longer required.
    h.m.pipe.sc.remove(&Y);
    wm(&mut h, 0, 400, 1);
    wm(&mut h, 1, 300, 1);
    assert_eq!(h.m.calc_checkpoint(), Some(300));
}

#[test]
fn absent_and_scheduling_spans_cap_the_checkpoint() {
    let mut h = setup();
    wm_all(&mut h, 300, 1);
    h.m.pipe.sc.mark_absent(&X);
    h.m.pipe.sc.get_mut(&X).unwrap().checkpoint_ts = 180;
    // Node 1 no longer has tasks (X is absent): only nodes 0 and 2 count.
    assert_eq!(h.m.calc_checkpoint(), Some(180));
    h.m.pipe.sc.bind_to_node(&X, n(1));
    h.m.pipe.sc.get_mut(&X).unwrap().checkpoint_ts = 190;
    assert_eq!(h.m.calc_checkpoint(), Some(190), "Scheduling caps too");
    h.m.pipe.sc.mark_replicating(&X);
    assert_eq!(h.m.calc_checkpoint(), Some(300));
}

#[test]
fn restored_remove_on_a_replicating_task_does_not_cap() {
    let r1 = NodeReport {
        spans: vec![bspan(X, TableSpan::full(10), ComponentState::Working, 120)],
        operators: vec![remove_req(X, TableSpan::full(10), OperatorType::Move, EPOCH)],
        merges: vec![],
    };
    let mut h = setup_with(r1);
    assert!(matches!(h.op(X), Some(Operator::Remove(_))));
    assert_eq!(h.m.pipe.sc.get(&X).unwrap().checkpoint_ts, 120);
    wm_all(&mut h, 300, 1);
    assert_eq!(h.m.calc_checkpoint(), Some(300));
}

#[test]
fn a_move_caps_at_the_tasks_checkpoint_until_it_finishes() {
    let mut h = setup();
    h.m.pipe.sc.remove(&Y); // node 2 is to hold only the moved span
    wm_all(&mut h, 300, 1);
    assert_eq!(h.m.api_move_table(&mut h.env.ctx(), 10, n(2)), Ok(1));
    assert_eq!(h.m.calc_checkpoint(), Some(150));
    h.execute();
    h.handle(1, heartbeat(300, 2, vec![st(X, ComponentState::Stopped, 160)]));
    h.execute();
    h.handle(2, heartbeat(300, 2, vec![st(X, ComponentState::Working, 170)]));
    h.execute();
    assert!(h.op(X).is_none());
    assert_eq!(h.m.calc_checkpoint(), Some(300));
}

#[test]
fn blocked_event_adding_tables_caps_at_its_commit_ts() {
    let mut h = setup();
    wm_all(&mut h, 300, 1);
    let ddl = h.ddl();
    let mut b = block(220, normal(&[10, DDL_SPAN_TABLE_ID]), BlockStage::Waiting);
    b.need_added_tables = vec![table_ref(14)];
    h.handle(0, block_statuses(vec![(ddl, b)]));
    assert_eq!(h.m.calc_checkpoint(), Some(220));
}

#[test]
fn committed_checkpoint_never_goes_backwards() {
    let mut h = setup();
    wm_all(&mut h, 300, 1);
    assert_eq!(h.m.calc_checkpoint(), Some(300));
    // A new low-start dispatcher legitimately lowers node 1's watermark (higher seq).
    wm(&mut h, 1, 250, 2);
    assert_eq!(h.m.pipe.node_watermarks[&n(1)].checkpoint_ts, 250);
    assert_eq!(h.m.calc_checkpoint(), Some(300));
    assert_eq!(h.m.pipe.committed_checkpoint, 300);
    // An absent span far behind does not lower it either.
    h.m.pipe.sc.mark_absent(&Y);
    h.m.pipe.sc.get_mut(&Y).unwrap().checkpoint_ts = 120;
    assert_eq!(h.m.calc_checkpoint(), Some(300));
}

#[test]
fn heartbeat_watermark_acceptance_by_seq() {
    let mut h = setup();
    wm(&mut h, 1, 300, 3);
    wm(&mut h, 1, 400, 2);
    assert_eq!(h.m.pipe.node_watermarks[&n(1)].checkpoint_ts, 300, "lower seq is stale");
    wm(&mut h, 1, 280, 3);
    assert_eq!(h.m.pipe.node_watermarks[&n(1)].checkpoint_ts, 300, "same seq must advance");
    wm(&mut h, 1, 320, 3);
    assert_eq!(h.m.pipe.node_watermarks[&n(1)].checkpoint_ts, 320);
    wm(&mut h, 1, 200, 4);
    assert_eq!(h.m.pipe.node_watermarks[&n(1)].checkpoint_ts, 200, "higher seq replaces");
}

#[test]
fn a_rejoining_capture_is_not_shadowed_by_its_previous_incarnations_watermark() {
    let mut h = setup();
    wm_all(&mut h, 300, 5);
    assert_eq!(h.m.calc_checkpoint(), Some(300));
    // Node 1's etcd session is gone: it leaves the cluster (X is marked absent) ...
    h.node_change(&[0, 2]);
    assert!(!h.m.pipe.node_watermarks.contains_key(&n(1)));
    // ... but runs on until it notices, and one more heartbeat of it arrives.
    wm(&mut h, 1, 320, 9);
    // It exits and is started again: a new capture (a new ID in TiCDC, the same node
    // here), whose dispatcher manager counts its seq from the start. X is placed on it.
    h.node_change(&[0, 1, 2]);
    h.m.pipe.sc.bind_to_node(&X, n(1));
    h.m.pipe.sc.mark_replicating(&X);
    wm(&mut h, 0, 500, 6);
    wm(&mut h, 2, 500, 6);
    wm(&mut h, 1, 450, 1);
    assert_eq!(
        h.m.pipe.node_watermarks[&n(1)].checkpoint_ts,
        450,
        "the old incarnation's seq 9 does not shadow the new capture"
    );
    assert_eq!(h.m.calc_checkpoint(), Some(450));
}

#[test]
fn a_move_finished_after_its_destination_was_removed_leaves_the_span_there_unconsulted() {
    // The path of scenarios/findings/move_finished_after_dest_removed.toml, as in TiCDC:
    // the destination reports Working, is removed before the operator is polled (the
    // finished move ignores OnNodeRemove; the span has an operator, so it is not marked
    // absent), and PostFinish binds the span to the removed node.
    let mut h = setup();
    h.m.pipe.sc.remove(&Y); // node 2 is to hold only the moved span
    wm_all(&mut h, 300, 1);
    assert_eq!(h.m.api_move_table(&mut h.env.ctx(), 10, n(2)), Ok(1));
    h.execute();
    h.handle(1, heartbeat(300, 2, vec![st(X, ComponentState::Stopped, 310)]));
    h.execute();
    h.handle(2, heartbeat(300, 2, vec![st(X, ComponentState::Working, 310)]));
    h.node_change(&[0, 1]);
    h.execute();
    assert!(h.op(X).is_none());
    assert_eq!(h.m.pipe.sc.get(&X).map(|r| (r.state, r.node)), Some((ReplicaState::Replicating, Some(n(2)))));
    // `calculateNewCheckpointTs` reads only the bootstrapper's (alive) nodes: the span on
    // the removed node does not hold the checkpoint, which passes whatever it had not
    // written (the finding's data loss).
    wm(&mut h, 0, 400, 3);
    wm(&mut h, 1, 400, 3);
    assert_eq!(h.m.calc_checkpoint(), Some(400));
}

#[test]
fn checkpoint_keeps_advancing_while_removing() {
    // `calCheckpointTs` only checks `initialized` (maintainer/maintainer.go:696-733).
    let mut h = setup();
    wm_all(&mut h, 300, 1);
    h.m.remove(&mut h.env.ctx(), true, false);
    assert_eq!(h.m.calc_checkpoint(), Some(300));
    assert_eq!(h.m.pipe.committed_checkpoint, 300);
}

fn task(sc: &mut SpanController, id: u64, span: TableSpan, cp: Ts) {
    sc.insert(SpanReplication {
        id: d(id),
        span,
        schema_id: SCHEMA,
        node: Some(n(1)),
        state: ReplicaState::Replicating,
        checkpoint_ts: cp,
        last_state: None,
        block_state: None,
    });
}

#[test]
fn operator_constraint_counts_add_move_split_but_not_remove_or_merge() {
    let mut sc = SpanController::new(d(1), n(0), 100, SchedulerConfig::default());
    let (a, b) = halves(20);
    task(&mut sc, 10, TableSpan::full(10), 50); // Remove
    task(&mut sc, 20, a, 60); // merge sources
    task(&mut sc, 21, b, 70);
    task(&mut sc, 30, TableSpan::full(30), 140); // Add
    task(&mut sc, 31, TableSpan::full(31), 130); // Move
    task(&mut sc, 32, TableSpan::full(32), 120); // Split
    let alive = nodes(&[0, 1, 2]);
    let mut oc = OperatorController::new();
    oc.add_operator(
        Operator::Remove(RemoveDispatcherOperator::new(
            d(10),
            TableSpan::full(10),
            n(1),
            OperatorType::Remove,
            RemovePostFinish::None,
        )),
        &mut sc,
        &alive,
        0,
    )
    .unwrap();
    oc.add_merge_operator(vec![d(20), d(21)], d(29), &mut sc, &alive, 0).unwrap();
    assert_eq!(oc.min_checkpoint_ts(&sc), None, "remove, merge and occupy do not hold the checkpoint");
    oc.add_operator(Operator::Add(AddDispatcherOperator::new(d(30), n(2), OperatorType::Add)), &mut sc, &alive, 0)
        .unwrap();
    assert_eq!(oc.min_checkpoint_ts(&sc), Some(140));
    oc.add_operator(Operator::Move(MoveDispatcherOperator::new(d(31), Some(n(1)), n(2))), &mut sc, &alive, 0).unwrap();
    assert_eq!(oc.min_checkpoint_ts(&sc), Some(130));
    oc.add_operator(
        Operator::Split(SplitDispatcherOperator::new(
            d(32),
            TableSpan::full(32),
            n(1),
            split_span_evenly(&TableSpan::full(32), 2),
            vec![],
        )),
        &mut sc,
        &alive,
        0,
    )
    .unwrap();
    assert_eq!(oc.min_checkpoint_ts(&sc), Some(120));
    // The merge is covered by the non-replicating tracker instead (sources and target Scheduling).
    assert_eq!(sc.min_non_replicating_checkpoint(), Some(60));
}
