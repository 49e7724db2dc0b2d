//! Not ports: the barrier's schedule-order branches (`barrier.non_blocking_not_head`,
//! `barrier.writer_done_not_head`), which no TiCDC barrier test drives and no run reaches
//! (the trigger reports nothing after a schedule event it writes before that event's DONE:
//! its block events run one executor task at a time, block_event_executor.go:55-77). These
//! feed the barrier statuses out of that order, as TiCDC's own tests do
//! (`TestDeferAllDBBlockEventFromDDLDispatcherWhilePendingSchedule` reports a syncpoint
//! before the TRUNCATE's DONE), and check that scheduling keeps commit-ts order
//! (`pendingScheduleEventMap.popIfHead`, maintainer/barrier_helper.go:66-85;
//! `tryScheduleEvent`, maintainer/barrier.go:579-614).

use super::support::*;
use crate::coverage::{self, Point as P};
use crate::maintainer::barrier::BarrierOut;
use crate::messages::*;
use crate::types::*;

/// A TRUNCATE TABLE of `old` at `ts` that adds `new` (blocks `old` and the trigger).
fn truncate(ts: Ts, old: TableId, new: TableId) -> BlockState {
    with_added(
        with_dropped(waiting(ts, normal_tables(&[old, DDL_SPAN_TABLE_ID])), normal_tables(&[old])),
        vec![table(1, new)],
    )
}

/// A CREATE TABLE of `new` at `ts` as the trigger reports it after writing it.
fn create(ts: Ts, new: TableId) -> BlockState {
    with_added(state(ts, Some(normal_tables(&[DDL_SPAN_TABLE_ID])), BlockStage::None), vec![table(1, new)])
}

fn acked(o: &BarrierOut, ts: Ts) -> bool {
    resp(o, NODE1).iter().any(|s| s.ack.as_ref().map(|a| a.commit_ts == ts).unwrap_or(false))
}

fn has_task(w: &World, t: TableId) -> bool {
    !w.sc.tasks_of_table(t).is_empty()
}

/// One replicating table 1 on node 1, with its TRUNCATE at 10 written by the trigger
/// (selected, waiting for the trigger's DONE to schedule).
fn truncate_pending() -> (World, DispatcherId) {
    let mut w = World::new(false);
    let t1 = w.add_new_table(1, 1, 1)[0];
    w.bind_replicating(t1, NODE1);
    w.handle(NODE1, vec![(DDL, truncate(10, 1, 101)), (t1, truncate(10, 1, 101))]);
    assert!(w.ev((10, false)).selected);
    assert!(w.barrier.pending_events.contains(&(10, false)));
    (w, t1)
}

#[test]
fn a_non_blocking_create_waits_for_an_earlier_pending_truncate() {
    let (mut w, _) = truncate_pending();
    coverage::reset();
    // CREATE TABLE 102 at 30 reaches the barrier before the TRUNCATE's DONE.
    let o = w.handle(NODE1, vec![(DDL, create(30, 102))]);
    assert_eq!(coverage::take().get(P::BarrierNonBlockingNotHead), 1);
    assert!(!acked(&o, 30), "not the head: no ACK, the trigger resends");
    assert!(!has_task(&w, 102), "not scheduled before the earlier TRUNCATE");
    // The TRUNCATE's DONE schedules it (101 added), then the CREATE's resend is taken.
    w.handle(NODE1, vec![(DDL, done(10))]);
    assert!(has_task(&w, 101) && !has_task(&w, 102));
    let o = w.handle(NODE1, vec![(DDL, create(30, 102))]);
    assert!(acked(&o, 30));
    assert!(has_task(&w, 102));
    assert!(w.barrier.pending_events.is_empty());
}

#[test]
fn a_later_truncates_writer_done_waits_for_the_earlier_one() {
    let (mut w, _) = truncate_pending();
    let t2 = w.add_new_table(1, 2, 1)[0];
    w.bind_replicating(t2, NODE1);
    // A second TRUNCATE (table 2 at 20) is selected while the first still waits.
    w.handle(NODE1, vec![(DDL, truncate(20, 2, 201)), (t2, truncate(20, 2, 201))]);
    assert!(w.ev((20, false)).selected);
    assert_eq!(w.barrier.pending_events.len(), 2);
    coverage::reset();
    // Its writer's DONE arrives first: ACKed, but not scheduled (table 2 kept, 201 absent).
    let o = w.handle(NODE1, vec![(DDL, done(20))]);
    assert_eq!(coverage::take().get(P::BarrierWriterDoneNotHead), 1);
    assert!(acked(&o, 20));
    assert!(!has_task(&w, 201) && has_task(&w, 2));
    assert!(!w.ev((20, false)).writer_advanced);
    // The earlier DONE schedules the first TRUNCATE; the second is now the head.
    w.handle(NODE1, vec![(DDL, done(10))]);
    assert!(has_task(&w, 101) && !has_task(&w, 201));
    assert_eq!(w.barrier.pending_events.iter().copied().collect::<Vec<_>>(), vec![(20, false)]);
    // The resend asks the writer again; its DONE now schedules the second.
    w.now += 2_000;
    let o = w.resend();
    assert!(
        resp(&o, NODE1).iter().any(|s| s.action.as_ref().map(|a| a.commit_ts == 20).unwrap_or(false)),
        "the Write of 20 is resent"
    );
    w.handle(NODE1, vec![(DDL, done(20))]);
    assert!(has_task(&w, 201) && !has_task(&w, 2));
    assert!(w.barrier.pending_events.is_empty());
}
