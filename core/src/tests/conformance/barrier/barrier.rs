//! `maintainer/barrier_test.go` at b813e76f9.
//!
//! Not translated (routes are not modelled, docs/fidelity.md #39): TestBarrierPrechecksDDLRoute,
//! TestBarrierRejectsNonblockingRouteConflict, TestBarrierAppliesRecoveredRouteEventBeforeActionResend,
//! TestBarrierCommitsForwardedRouteEventBeforeLaterRouteEvent, TestBarrierRejectsRouteConflict,
//! TestBarrierKeepsBlockedRouteConflict.

use super::support::*;
use crate::maintainer::barrier::{Barrier, BarrierFixes};
use crate::maintainer::span_controller::ReplicaState;
use crate::messages::*;
use crate::types::*;

// barrier_test.go:39 TestOneBlockEvent: an All syncpoint reported by the trigger and the
// only table is written by the trigger (ACK then Write in one answer), the Write is
// resent, both DONEs finish the event with an ACK, and a repeated DONE gets no answer.
#[test]
fn ticdc_barrier_TestOneBlockEvent() {
    let mut w = World::new(false);
    let stm = w.add_new_table(1, 1, 10)[0];
    w.bind_replicating(stm, NODE1);

    let st = sync_point(waiting(10, all_tables()));
    let o = w.handle(NODE1, vec![(DDL, st.clone()), (stm, st)]);
    assert!(!o.responses.is_empty());
    let key = (10, true);
    let ev = w.ev(key);
    assert_eq!(ev.commit_ts, 10);
    assert_eq!(ev.writer, Some(DDL));
    assert!(ev.selected);
    assert!(!ev.writer_advanced);
    let r = resp(&o, NODE1);
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].ack.as_ref().unwrap().commit_ts, 10);
    let a = r[1].action.as_ref().unwrap();
    assert_eq!(a.commit_ts, 10);
    assert_eq!(a.action, ActionKind::Write);
    assert!(a.is_sync_point);

    // The Write is resent once the resend clock is two seconds old.
    w.ev_mut(key).last_resend_ms = w.now - 2_000;
    let o = w.resend();
    assert_eq!(targets(&o).len(), 1);
    let r = resp(&o, NODE1);
    let a = r[0].action.as_ref().unwrap();
    assert_eq!(a.action, ActionKind::Write);
    assert!(a.is_sync_point);

    let d = sync_point(done(10));
    let o = w.handle(NODE1, vec![(DDL, d.clone()), (stm, d.clone())]);
    assert!(!o.responses.is_empty());
    assert_eq!(resp(&o, NODE1)[0].ack.as_ref().unwrap().commit_ts, 10);
    assert!(w.barrier.events.is_empty());

    // DONE again: the event is gone, nothing to acknowledge.
    let o = w.handle(NODE1, vec![(DDL, d.clone()), (stm, d)]);
    assert!(w.barrier.events.is_empty());
    assert_eq!(resp(&o, NODE1).len(), 0);
}

// barrier_test.go:171 TestNormalBlock: a Normal event over three tables (one on node2)
// that adds a table: one ACK names both reporters of a request, the last reporter writes,
// repeated WAITING changes nothing, and the event ends when the writer and then the
// others report DONE.
#[test]
fn ticdc_barrier_TestNormalBlock() {
    let mut w = World::new(false);
    let ids = w.replicating_tables(1..4, 10);
    // The last one moves to node2 and writes.
    let selected = ids[2];
    w.bind_replicating(selected, NODE2);

    let st = with_added(waiting(10, normal_tables(&[1, 2, 3])), vec![table(1, 10)]);
    let o = w.handle(NODE1, vec![(ids[0], st.clone()), (ids[1], st.clone())]);
    let r = resp(&o, NODE1);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].ack.as_ref().unwrap().commit_ts, 10);
    assert_eq!(super::support::ids(&r[0]).len(), 2);

    let o = w.handle(NODE2, vec![(selected, st.clone())]);
    assert!(!o.responses.is_empty());
    let key = (10, false);
    let ev = w.ev(key);
    assert_eq!(ev.commit_ts, 10);
    assert_eq!(ev.writer, Some(selected));
    // Selection starts the DONE phase from scratch.
    assert!(ev.done.is_empty());

    // Repeated WAITING.
    w.handle(NODE1, vec![(ids[0], st.clone()), (ids[1], st)]);
    let ev = w.ev(key);
    assert_eq!(ev.commit_ts, 10);
    assert_eq!(ev.writer, Some(selected));

    w.handle(NODE2, vec![(ids[2], done(10))]);
    assert_eq!(w.barrier.events.len(), 1);
    w.handle(NODE1, vec![(ids[0], done(10)), (ids[1], done(10))]);
    assert_eq!(w.barrier.events.len(), 0);
}

// barrier_test.go:340 TestNormalBlockWithTableTrigger: a Normal event that involves the
// trigger, drops table 2 and adds table 10: the trigger writes even though a table
// reported first; after the writer's and table 1's DONE the event waits until a Pass
// round finds table 2 gone.
#[test]
fn ticdc_barrier_TestNormalBlockWithTableTrigger() {
    let mut w = World::new(false);
    let ids = w.replicating_tables(1..3, 10);
    let st = with_added(with_dropped(waiting(10, normal_tables(&[0, 1, 2])), normal_tables(&[2])), vec![table(1, 10)]);
    let key = (10, false);
    let o = w.handle(NODE1, vec![(ids[0], st.clone())]);
    let r = resp(&o, NODE1);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].ack.as_ref().unwrap().commit_ts, 10);
    assert_eq!(super::support::ids(&r[0]).len(), 1);
    // Not related to the trigger yet.
    assert!(!w.ev(key).reported.contains(&DDL));

    let o = w.handle(NODE1, vec![(DDL, st.clone()), (ids[1], st)]);
    assert!(!o.responses.is_empty());
    let ev = w.ev(key);
    assert_eq!(ev.commit_ts, 10);
    assert_eq!(ev.writer, Some(DDL));
    assert!(ev.done.is_empty());
    // All reported: the reports are reset (Go: the range checker is no longer covered).
    assert!(ev.reported.is_empty());

    w.handle(NODE1, vec![(DDL, done(10))]);
    assert_eq!(w.barrier.events.len(), 1);
    w.handle(NODE1, vec![(ids[0], done(10))]);
    assert_eq!(w.barrier.events.len(), 1);
    // The resend's Pass round finds the dropped table without tasks.
    w.ev_mut(key).last_resend_ms = w.now - 2_000;
    w.resend();
    assert_eq!(w.barrier.events.len(), 0);
}

// barrier_test.go:959 TestSchemaBlock: a DB event that drops the schema's two tables and
// adds one to another schema: the trigger writes once the schema's tables reported; after
// its DONE the resend finds no task of the schema (no Pass, event covered), two Remove
// operators run, the new table is Absent and the other schema's table still replicates.
#[test]
fn ticdc_barrier_TestSchemaBlock() {
    let mut w = World::new(true).with_alive(&[NODE1, NODE2]);
    w.add_new_table(1, 1, 1);
    w.add_new_table(1, 2, 1);
    w.add_new_table(2, 3, 1);
    for id in w.sc.absent() {
        w.bind_replicating(id, NODE1);
    }
    let dispatcher_ids = [w.task_of(1), w.task_of(2)];

    let st = with_added(with_dropped(waiting(10, db_tables(1)), normal_tables(&[1, 2])), vec![table(2, 10)]);
    let o = w.handle(NODE1, vec![(DDL, st.clone()), (dispatcher_ids[0], st.clone())]);
    let r = resp(&o, NODE1);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].ack.as_ref().unwrap().commit_ts, 10);

    let o = w.handle(NODE1, vec![(dispatcher_ids[1], st.clone())]);
    let r = resp(&o, NODE1);
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].ack.as_ref().unwrap().commit_ts, 10);
    assert_eq!(r[1].action.as_ref().unwrap().commit_ts, 10);
    assert_eq!(r[1].action.as_ref().unwrap().action, ActionKind::Write);
    let ev = w.ev((10, false));
    assert_eq!(ev.commit_ts, 10);
    assert_eq!(ev.writer, Some(DDL));

    // Repeated status: ACK only.
    let o = w.handle(NODE1, vec![(dispatcher_ids[1], st)]);
    assert_eq!(resp(&o, NODE1).len(), 1);

    w.handle(NODE2, vec![(DDL, done(10))]);
    // No Pass: the schema's tables are removed.
    let o = w.resend();
    assert_eq!(targets(&o).len(), 0);
    assert_eq!(w.barrier.events.len(), 0);

    assert_eq!(w.absent_size(), 1);
    assert_eq!(w.oc.size(), 2);
    assert_eq!(w.replicating_size(), 1);
    // The replicating task has no operator to finish.
    let replicating: Vec<DispatcherId> =
        w.sc.tasks.values().filter(|r| r.id != DDL && r.state == ReplicaState::Replicating).map(|r| r.id).collect();
    for id in replicating {
        assert!(w.oc.get(&id).is_none());
    }
    assert_eq!(w.replicating_size(), 1);
}

// barrier_test.go:1135 TestSyncPointBlock: an All syncpoint over three tables (one on
// node2): one ACK names the three reporters of node1 (the trigger among them), node2's
// report gets its ACK while the Write goes to the trigger's node; after the trigger's DONE
// the resend passes to both nodes, and the three DONEs finish the event.
#[test]
fn ticdc_barrier_TestSyncPointBlock() {
    let mut w = World::new(true).with_alive(&[NODE1, NODE2]);
    // The Go test sends the third dispatcher's DONE from node1 though it lives on node2;
    // b813e76f9 does not check the sender (barrier.go:91-121).
    w.accept_nonowner = true;
    w.add_new_table(1, 1, 1);
    w.add_new_table(1, 2, 1);
    w.add_new_table(2, 3, 1);
    for id in w.sc.absent() {
        w.bind_replicating(id, NODE1);
    }
    let dispatcher_ids = [w.task_of(1), w.task_of(2), w.task_of(3)];
    w.bind_replicating(dispatcher_ids[2], NODE2);

    let mut bt = all_tables();
    bt.schema_id = 1;
    let st = sync_point(waiting(10, bt));
    let o = w.handle(NODE1, vec![(DDL, st.clone()), (dispatcher_ids[0], st.clone()), (dispatcher_ids[1], st.clone())]);
    let r = resp(&o, NODE1);
    assert_eq!(r.len(), 1);
    assert_eq!(super::support::ids(&r[0]).len(), 3);
    assert_eq!(r[0].ack.as_ref().unwrap().commit_ts, 10);

    let o = w.handle(NODE2, vec![(dispatcher_ids[2], st)]);
    assert_eq!(targets(&o).len(), 2);
    let r = resp(&o, NODE2);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].ack.as_ref().unwrap().commit_ts, 10);
    let a = resp(&o, NODE1);
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].action.as_ref().unwrap().commit_ts, 10);
    assert_eq!(a[0].action.as_ref().unwrap().action, ActionKind::Write);
    let ev = w.ev((10, true));
    assert_eq!(ev.commit_ts, 10);
    assert_eq!(ev.writer, Some(DDL));

    w.handle(NODE2, vec![(DDL, sync_point(done(10)))]);
    let o = w.resend();
    // A Pass to each node.
    assert_eq!(targets(&o).len(), 2);
    assert_eq!(w.barrier.events.len(), 1);
    let d = sync_point(done(10));
    w.handle(NODE1, vec![(dispatcher_ids[0], d.clone()), (dispatcher_ids[1], d.clone()), (dispatcher_ids[2], d)]);
    assert_eq!(w.barrier.events.len(), 0);
}

// barrier_test.go:1310 TestNonBlocked: a non-blocking status that drops three tables and
// adds two is applied at once and ACKed to its dispatcher; no event is kept and the two
// new tables are Absent.
#[test]
fn ticdc_barrier_TestNonBlocked() {
    let mut w = World::new(false);
    // The Go test marks the spans replicating without binding them to a node.
    w.accept_nonowner = true;
    let mut ids = vec![];
    for t in 1..4 {
        let id = w.add_new_table(1, t, 10)[0];
        w.sc.mark_replicating(&id);
        ids.push(id);
    }
    let st = with_added(
        with_dropped(state(10, None, BlockStage::None), normal_tables(&[1, 2, 3])),
        vec![table(1, 1), table(2, 2)],
    );
    let o = w.handle(NODE1, vec![(ids[0], st)]);
    let r = resp(&o, NODE1);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].ack.as_ref().unwrap().commit_ts, 10);
    assert!(matches!(r[0].influenced, InfluencedDispatchers::Normal(_)));
    assert_eq!(super::support::ids(&r[0])[0], ids[0]);
    assert_eq!(w.barrier.events.len(), 0);
    assert_eq!(w.absent_size(), 2);
}

// barrier_test.go:1364 TestUpdateCheckpointTs: an event blocking only the trigger is
// written by it at once (ACK then Write, not a syncpoint), and the trigger's checkpoint
// is forced to blockTs - 1, the start ts a re-created trigger would get.
#[test]
fn ticdc_barrier_TestUpdateCheckpointTs() {
    let mut w = World::new(false);
    let o = w.handle(NODE1, vec![(DDL, waiting(10, normal_tables(&[0])))]);
    assert!(!o.responses.is_empty());
    let ev = w.ev((10, false));
    assert_eq!(ev.commit_ts, 10);
    assert_eq!(ev.writer, Some(DDL));
    assert!(ev.selected);
    assert!(!ev.writer_advanced);
    let r = resp(&o, NODE1);
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].ack.as_ref().unwrap().commit_ts, 10);
    let a = r[1].action.as_ref().unwrap();
    assert_eq!(a.commit_ts, 10);
    assert_eq!(a.action, ActionKind::Write);
    assert!(!a.is_sync_point);
    let start_ts = w.sc.get(&DDL).unwrap().checkpoint_ts;
    assert_eq!(start_ts, 9);
    assert_ne!(start_ts, 0);
}

/// barrier_test.go:1419 setup: three tables on node1; `states` are the bootstrap block
/// states of the first two; a fresh barrier is rebuilt from them.
fn bootstrap_world(states: [Option<BlockState>; 2]) -> World {
    bootstrap_world_with(states, BarrierFixes::default())
}

/// `bootstrap_world` with candidate fixes on, for the rebuild and every later call.
fn bootstrap_world_with(states: [Option<BlockState>; 2], fixes: BarrierFixes) -> World {
    let mut w = World::new(false);
    let ids = w.replicating_tables(1..4, 2);
    for (id, s) in ids.iter().zip(states) {
        w.sc.get_mut(id).unwrap().block_state = s;
    }
    w.barrier = Barrier::default();
    w.barrier.rebuild(&w.sc, fixes);
    w.fixes = fixes;
    w
}

fn boot_state(stage: BlockStage) -> BlockState {
    let mut s = state(6, Some(normal_tables(&[1, 2])), stage);
    s.is_blocked = true;
    s
}

// barrier_test.go:1419 TestHandleBlockBootstrapResponse, first barrier: two WAITING
// dispatchers rebuild an unselected event that every dispatcher reported.
#[test]
fn ticdc_barrier_TestHandleBlockBootstrapResponse_two_waiting() {
    let mut w = bootstrap_world([Some(boot_state(BlockStage::Waiting)), Some(boot_state(BlockStage::Waiting))]);
    let ev = w.ev((6, false));
    assert!(!ev.selected);
    assert!(!ev.writer_advanced);
    assert!(w.barrier.all_reported((6, false), &w.sc));
}

// barrier_test.go:1419 TestHandleBlockBootstrapResponse, "one waiting dispatcher, and one
// writing": the event is selected, its writer not done.
#[test]
fn ticdc_barrier_TestHandleBlockBootstrapResponse_one_waiting_one_writing() {
    let w = bootstrap_world([Some(boot_state(BlockStage::Waiting)), Some(boot_state(BlockStage::Writing))]);
    let ev = w.ev((6, false));
    assert!(ev.selected);
    assert!(!ev.writer_advanced);
}

// The "one waiting, one writing" rebuild continued (TiCDC's test stops at the rebuild): the
// bootstrap marked both dispatchers reported, so the first `Resend` resends the Write and
// `checkEventFinish` deletes the event at once (maintainer/barrier.go:281-286, 565-577).
// No Pass ever goes to the WAITING dispatcher, whose WAITING an older maintainer ACKed.
#[test]
fn a_rebuilt_event_with_a_writing_writer_is_finished_by_the_next_resend_without_a_pass() {
    let mut w = bootstrap_world([Some(boot_state(BlockStage::Waiting)), Some(boot_state(BlockStage::Writing))]);
    let writer = w.task_of(2);
    let o = w.resend();
    let actions: Vec<_> = o.responses.values().flatten().filter_map(|s| s.action.clone()).collect();
    assert!(actions.iter().all(|a| a.action == ActionKind::Write), "{:?}", actions);
    assert_eq!(actions.len(), 1);
    assert!(!w.barrier.events.contains_key(&(6, false)), "finished on the rebuilt reports");
    // The writer's DONE after its write finds no event.
    w.handle(NODE1, vec![(writer, done(6))]);
    assert!(w.barrier.events.is_empty());
}

// Candidate fix `selection-resets-reports`: the rebuilt event keeps only DONE reports, so
// it waits for the writer's DONE, sends the Pass and finishes on the other span's DONE.
#[test]
fn fix_selection_resets_reports_passes_the_waiting_span_of_a_rebuilt_event() {
    let fixes = BarrierFixes { selection_resets_reports: true, ..Default::default() };
    let mut w =
        bootstrap_world_with([Some(boot_state(BlockStage::Waiting)), Some(boot_state(BlockStage::Writing))], fixes);
    let ids = [w.task_of(1), w.task_of(2)];
    w.resend();
    assert!(w.barrier.events.contains_key(&(6, false)), "waits for the writer");
    w.handle(NODE1, vec![(ids[1], done(6))]);
    w.now += 100;
    let o = w.resend();
    let passed: Vec<_> = o
        .responses
        .values()
        .flatten()
        .filter(|s| s.action.as_ref().is_some_and(|a| a.action == ActionKind::Pass))
        .collect();
    assert!(!passed.is_empty());
    assert!(w.barrier.events.contains_key(&(6, false)));
    w.handle(NODE1, vec![(ids[0], done(6))]);
    assert!(w.barrier.events.is_empty());
}

// An event selected by all-reported counts a dispatcher only by its DONE: one whose span is
// already past the event (a later block state) keeps the event open until it answers the
// Pass (`checkEventFinish`; "past" serves only `checkBlockedDispatchers`).
#[test]
fn a_span_past_the_event_counts_only_once_it_reports_done() {
    let mut w = World::new(false);
    let ids = w.replicating_tables(1..3, 10);
    let st = waiting(10, normal_tables(&[1, 2]));
    w.handle(NODE1, vec![(ids[0], st.clone()), (ids[1], st)]);
    let writer = w.ev((10, false)).writer.unwrap();
    let other = if writer == ids[0] { ids[1] } else { ids[0] };
    w.handle(NODE1, vec![(writer, done(10))]);
    // The other span moves past the event without a DONE (its block state is a later one).
    w.sc.get_mut(&other).unwrap().block_state = Some(waiting(20, normal_tables(&[1, 2])));
    w.now += 2_000;
    let o = w.resend();
    assert!(o.responses.values().flatten().any(|s| s.action.as_ref().is_some_and(|a| a.action == ActionKind::Pass)));
    assert!(w.barrier.events.contains_key(&(10, false)), "past, but not reported");
    w.handle(NODE1, vec![(other, done(10))]);
    assert!(w.barrier.events.is_empty());
}

// barrier_test.go:1419 TestHandleBlockBootstrapResponse, "two done dispatchers": the event
// is selected and written.
#[test]
fn ticdc_barrier_TestHandleBlockBootstrapResponse_two_done() {
    let w = bootstrap_world([Some(boot_state(BlockStage::Done)), Some(boot_state(BlockStage::Done))]);
    let ev = w.ev((6, false));
    assert!(ev.selected);
    assert!(ev.writer_advanced);
}

// barrier_test.go:1419 TestHandleBlockBootstrapResponse, "nil, none stage": a NONE block
// state and a missing one rebuild no event.
#[test]
fn ticdc_barrier_TestHandleBlockBootstrapResponse_nil_none_stage() {
    let w = bootstrap_world([Some(boot_state(BlockStage::None)), None]);
    assert!(!w.barrier.events.contains_key(&(6, false)));
}

// barrier_test.go:1580 TestSyncPointBlockPerf: 999 tables report an All syncpoint in one
// request, then DONE in one request; each request is answered (one ACK naming them all:
// the event exists, the trigger has not reported, nobody is selected).
#[test]
fn ticdc_barrier_TestSyncPointBlockPerf() {
    let mut w = World::new(true);
    for t in 1..1000 {
        w.add_new_table(1, t, 1);
    }
    let ids = w.sc.absent();
    for id in &ids {
        w.bind_replicating(*id, NODE1);
    }
    let mut bt = all_tables();
    bt.schema_id = 1;
    let st = sync_point(waiting(10, bt));
    let o = w.handle(NODE1, ids.iter().map(|id| (*id, st.clone())).collect());
    let r = resp(&o, NODE1);
    assert_eq!(r.len(), 1);
    assert_eq!(super::support::ids(&r[0]).len(), ids.len());
    assert!(!w.ev((10, true)).selected);

    let d = sync_point(done(10));
    let o = w.handle(NODE1, ids.iter().map(|id| (*id, d.clone())).collect());
    let r = resp(&o, NODE1);
    assert_eq!(r.len(), 1);
    assert_eq!(super::support::ids(&r[0]).len(), ids.len());
}

// barrier_test.go:1659 TestBarrierEventWithDispatcherReallocation: a table's spans A, B, C
// are replaced by E, F, G while the event waits: A's report is dropped once A is gone,
// E and F alone do not cover the table, G completes the coverage and the event is
// selected.
#[test]
fn ticdc_barrier_TestBarrierEventWithDispatcherReallocation() {
    let mut w = World::new(true);
    let (table_id, schema_id, start_ts, ddl_ts) = (1, 1, 10, 10);
    w.add_new_table(schema_id, table_id, start_ts);
    let full = TableSpan::full(table_id);
    let (ka, kb) = (TABLE_KEY_END / 4, TABLE_KEY_END / 2);
    let span = |s: u64, e: u64| TableSpan { table_id, start: s, end: e };
    let a = w.add_span(schema_id, span(full.start, ka), start_ts);
    let b = w.add_span(schema_id, span(ka, kb), start_ts);
    let c = w.add_span(schema_id, span(kb, full.end), start_ts);
    for id in [a, b, c] {
        w.bind_replicating(id, NODE1);
    }
    let st = waiting(ddl_ts, normal_tables(&[table_id]));
    let key = (ddl_ts, false);

    let o = w.handle(NODE1, vec![(a, st.clone())]);
    assert!(!o.responses.is_empty());
    let ev = w.ev(key);
    assert!(!ev.selected);
    assert!(ev.reported.contains(&a));

    for id in [a, b, c] {
        w.sc.remove(&id);
    }
    for id in [a, b, c] {
        assert!(w.sc.get(&id).is_none());
    }
    let e = w.add_span(schema_id, span(ka, kb), start_ts);
    let f = w.add_span(schema_id, span(kb, full.end), start_ts);
    let g = w.add_span(schema_id, span(full.start, ka), start_ts);
    for id in [e, f, g] {
        w.bind_replicating(id, NODE1);
    }

    let o = w.handle(NODE1, vec![(e, st.clone()), (f, st.clone())]);
    assert!(!o.responses.is_empty());
    assert!(w.barrier.events.contains_key(&key));
    assert!(!w.barrier.all_reported(key, &w.sc));
    let ev = w.ev(key);
    assert!(!ev.reported.contains(&a));
    assert!(ev.reported.contains(&e));
    assert!(ev.reported.contains(&f));
    assert!(!w.barrier.all_reported(key, &w.sc));

    let o = w.handle(NODE1, vec![(g, st)]);
    assert!(!o.responses.is_empty());
    assert!(w.ev(key).selected);
}

// barrier_test.go:1865 TestBarrierEventWithDispatcherScheduling: an event over a table and
// the trigger: the table's report alone selects nothing; while the table's dispatcher is
// scheduling its report is dropped, so the trigger's report selects nothing either; the
// table's report after it replicates again selects the event.
#[test]
fn ticdc_barrier_TestBarrierEventWithDispatcherScheduling() {
    let mut w = World::new(true);
    let (table_id, schema_id, start_ts, ddl_ts) = (1, 1, 9, 10);
    let a = w.add_span(schema_id, TableSpan::full(table_id), start_ts);
    w.bind_replicating(a, NODE1);
    assert_eq!(w.sc.get(&a).unwrap().state, ReplicaState::Replicating);
    let st = waiting(ddl_ts, normal_tables(&[table_id, 0]));
    let key = (ddl_ts, false);

    let o = w.handle(NODE1, vec![(a, st.clone())]);
    assert!(!o.responses.is_empty());
    let ev = w.ev(key);
    assert!(!ev.selected);
    assert!(ev.reported.contains(&a));

    w.sc.mark_scheduling(&a);
    let o = w.handle(NODE1, vec![(DDL, st.clone())]);
    assert!(!o.responses.is_empty());
    let ev = w.ev(key);
    assert!(!ev.selected);
    assert!(ev.reported.contains(&DDL));
    assert!(!ev.reported.contains(&a));

    w.sc.mark_replicating(&a);
    let o = w.handle(NODE1, vec![(a, st)]);
    assert!(!o.responses.is_empty());
    assert!(w.ev(key).selected);
}

// barrier_test.go:1997 TestDeferAllDBBlockEventFromDDLDispatcherWhilePendingSchedule: while
// a TRUNCATE waits for scheduling, the trigger's report of an All syncpoint is dropped
// without answer (the event exists, its task set not taken); once the TRUNCATE is
// scheduled, the resent report is taken and the syncpoint waits on the new table 101.
#[test]
fn ticdc_barrier_TestDeferAllDBBlockEventFromDDLDispatcherWhilePendingSchedule() {
    let mut w = World::new(false);
    let (old_table, new_table) = (1, 101);
    w.add_new_table(1, old_table, 1);
    let absents = w.sc.absent();
    assert_eq!(absents.len(), 1);
    let old_dispatcher = absents[0];
    w.bind_replicating(old_dispatcher, NODE1);

    let truncate = with_added(
        with_dropped(waiting(10, normal_tables(&[old_table, DDL_SPAN_TABLE_ID])), normal_tables(&[old_table])),
        vec![table(1, new_table)],
    );
    w.handle(NODE1, vec![(DDL, truncate.clone()), (old_dispatcher, truncate)]);
    assert!(!w.barrier.pending_events.is_empty());

    let syncpoint = sync_point(waiting(20, all_tables()));
    let o = w.handle(NODE1, vec![(DDL, syncpoint.clone())]);
    assert_eq!(resp(&o, NODE1).len(), 0);
    let key = (20, true);
    assert!(w.barrier.events.contains_key(&key));
    // No task set taken for the syncpoint yet.
    assert!(!w.ev(key).reported.contains(&DDL));

    w.handle(NODE1, vec![(DDL, done(10))]);
    assert_eq!(w.barrier.pending_events.len(), 0);

    w.handle(NODE1, vec![(DDL, syncpoint)]);
    let ev = w.ev(key);
    assert!(ev.reported.contains(&DDL));
    // The syncpoint now waits on the new table's dispatcher.
    let t101 = w.task_of(new_table);
    assert!(w.barrier.related_tasks(ev, &w.sc).contains(&t101));
    assert!(!ev.reported.contains(&t101));
    assert!(!ev.selected);
}

// barrier_test.go:2115 TestBarrierReturnsTemporaryIgnoreForUnreplicatingWaitingStatus: a
// WAITING status of a dispatcher that is still scheduling is answered with
// IgnoredBlockStatus only (no ACK, no action); no event is created and the span's block
// state is not stored.
#[test]
fn ticdc_barrier_TestBarrierReturnsTemporaryIgnoreForUnreplicatingWaitingStatus() {
    let mut w = World::new(false);
    let stm = w.add_new_table(1, 1, 10)[0];
    w.sc.bind_to_node(&stm, NODE1);

    let mut st = waiting(10, normal_tables(&[1]));
    st.stage = BlockStage::Waiting;
    let o = w.handle(NODE1, vec![(stm, st)]);
    assert_eq!(targets(&o).len(), 1);
    let r = resp(&o, NODE1);
    assert_eq!(r.len(), 1);
    let s = &r[0];
    assert!(s.ack.is_none());
    assert!(s.action.is_none());
    let ig = s.ignored_block_status.as_ref().unwrap();
    assert_eq!(ig.commit_ts, 10);
    assert!(!ig.is_sync_point);
    assert!(matches!(s.influenced, InfluencedDispatchers::Normal(_)));
    assert_eq!(super::support::ids(s), vec![stm]);
    assert_eq!(w.barrier.events.len(), 0);
    assert!(w.sc.get(&stm).unwrap().block_state.is_none());
}
