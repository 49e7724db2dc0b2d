//! `maintainer/barrier_event_test.go` at b813e76f9. The Go tests drive a lone
//! `BarrierEvent`; here it is the barrier's only event, driven through the barrier's
//! entry points (`resend`, `send_pass`, `schedule_block_event`).

use super::support::*;
use crate::maintainer::barrier::BarrierEvent;
use crate::messages::*;

fn splitable(schema_id: i64, table_id: i64) -> TableRef {
    TableRef { table_id, schema_id, splitable: true }
}

// barrier_event_test.go:33 TestScheduleEvent: scheduling a block event drops first, then
// adds: drop table 1 and add two tables (2 Absent); drop schema 1 and add one (1 Absent);
// drop that table and add another (1 Absent).
#[test]
fn ticdc_barrier_event_TestScheduleEvent() {
    let mut w = World::new(true);
    w.add_new_table(1, 1, 1);
    let schedule = |w: &mut World, st: BlockState| {
        let ev = BarrierEvent::new((st.block_ts, st.is_sync_point), &st);
        w.with_ctx(|b, bc, out| b.schedule_block_event(&ev, bc, out));
    };
    let st = with_added(
        with_dropped(state(10, None, BlockStage::Waiting), normal_tables(&[1])),
        vec![splitable(1, 2), splitable(1, 3)],
    );
    schedule(&mut w, st);
    assert_eq!(w.absent_size(), 2);

    let st = with_added(with_dropped(state(10, None, BlockStage::Waiting), db_tables(1)), vec![splitable(1, 4)]);
    schedule(&mut w, st);
    assert_eq!(w.absent_size(), 1);

    let st = with_added(with_dropped(state(10, None, BlockStage::Waiting), normal_tables(&[4])), vec![splitable(1, 5)]);
    schedule(&mut w, st);
    assert_eq!(w.absent_size(), 1);
}

// barrier_event_test.go:333 TestUpdateSchemaID: an All event whose `UpdatedSchemas` moves
// table 1 from schema 1 to 2; scheduling it adds and drops nothing (the task stays Absent)
// and the task is now found under schema 2 only.
#[test]
fn ticdc_barrier_event_TestUpdateSchemaID() {
    let mut w = World::new(true);
    w.add_new_table(1, 1, 1);
    assert_eq!(w.absent_size(), 1);
    assert_eq!(w.sc.tasks_of_schema(1).len(), 1);
    let mut st = state(10, Some(all_tables()), BlockStage::Waiting);
    st.updated_schemas = vec![SchemaIdChange { table_id: 1, old_schema_id: 1, new_schema_id: 2 }];
    let ev = BarrierEvent::new((st.block_ts, st.is_sync_point), &st);
    assert!(ev.need_schedule(), "a schema move alone needs scheduling (needSchedule)");
    w.with_ctx(|b, bc, out| b.schedule_block_event(&ev, bc, out));
    assert_eq!(w.absent_size(), 1);
    assert_eq!(w.sc.tasks_of_schema(1).len(), 0);
    assert_eq!(w.sc.tasks_of_schema(2).len(), 1);
    assert_eq!(w.sc.tasks_of_table(1)[0].schema_id, 2);
}

/// barrier_event_test.go:84 setup: node1 alive, tables 1 and 2 replicating on node1.
fn resend_world() -> (World, Vec<crate::types::DispatcherId>) {
    let mut w = World::new(false).with_alive(&[NODE1]);
    w.add_new_table(1, 1, 1);
    w.add_new_table(1, 2, 1);
    let ids = w.sc.absent();
    for id in &ids {
        w.bind_replicating(*id, NODE1);
    }
    (w, ids)
}

/// The statuses sent by a resend (`msgs`, one per target node).
fn sent(o: &crate::maintainer::barrier::BarrierOut) -> Vec<DispatcherStatus> {
    o.responses.values().flatten().cloned().collect()
}

// barrier_event_test.go:84 TestResendAction, the All event: nothing while the resend
// clock is fresh, nothing while the event is not selected, the Write once a writer is
// chosen.
#[test]
fn ticdc_barrier_event_TestResendAction_write() {
    let (mut w, ids) = resend_world();
    let key = w.new_event(&waiting(10, all_tables()));
    // Time not reached.
    w.ev_mut(key).last_resend_ms = w.now;
    w.ev_mut(key).selected = true;
    assert_eq!(targets(&w.resend()).len(), 0);
    // Not selected.
    w.ev_mut(key).last_resend_ms = 0;
    w.ev_mut(key).selected = false;
    assert_eq!(targets(&w.resend()).len(), 0);
    // Resend the Write.
    let ev = w.ev_mut(key);
    ev.selected = true;
    ev.writer_advanced = false;
    ev.writer = Some(ids[0]);
    let o = w.resend();
    assert_eq!(targets(&o).len(), 1);
}

// barrier_event_test.go:84 TestResendAction, the DB event: a written DB event resends a
// Pass of influence type DB.
#[test]
fn ticdc_barrier_event_TestResendAction_db_pass() {
    let (mut w, _) = resend_world();
    let key = w.new_event(&waiting(10, db_tables(1)));
    w.ev_mut(key).selected = true;
    w.ev_mut(key).writer_advanced = true;
    let o = w.resend();
    assert_eq!(targets(&o).len(), 1);
    let r = sent(&o);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].action.as_ref().unwrap().action, ActionKind::Pass);
    assert_eq!(r[0].influenced, InfluencedDispatchers::Db(1));
    assert_eq!(r[0].action.as_ref().unwrap().commit_ts, 10);
}

// barrier_event_test.go:84 TestResendAction, the All event with a schema: a written All
// event resends a Pass of influence type All.
#[test]
fn ticdc_barrier_event_TestResendAction_all_pass() {
    let (mut w, _) = resend_world();
    let mut bt = all_tables();
    bt.schema_id = 1;
    let key = w.new_event(&waiting(10, bt));
    w.ev_mut(key).selected = true;
    w.ev_mut(key).writer_advanced = true;
    let o = w.resend();
    assert_eq!(targets(&o).len(), 1);
    let r = sent(&o);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].action.as_ref().unwrap().action, ActionKind::Pass);
    assert_eq!(r[0].influenced, InfluencedDispatchers::All);
    assert_eq!(r[0].action.as_ref().unwrap().commit_ts, 10);
}

// barrier_event_test.go:84 TestResendAction, the Normal event: a written Normal event
// resends one Pass naming both tables' dispatchers.
#[test]
fn ticdc_barrier_event_TestResendAction_normal_pass() {
    let (mut w, _) = resend_world();
    let mut bt = normal_tables(&[1, 2]);
    bt.schema_id = 1;
    let key = w.new_event(&waiting(10, bt));
    w.ev_mut(key).selected = true;
    w.ev_mut(key).writer_advanced = true;
    let o = w.resend();
    assert_eq!(targets(&o).len(), 1);
    let r = sent(&o);
    assert_eq!(r.len(), 1);
    assert!(matches!(r[0].influenced, InfluencedDispatchers::Normal(_)));
    assert_eq!(ids(&r[0]).len(), 2);
    assert_eq!(r[0].action.as_ref().unwrap().action, ActionKind::Pass);
    assert_eq!(r[0].action.as_ref().unwrap().commit_ts, 10);
}

/// barrier_event_test.go:191 body, for one influence type.
fn fanout_quiet(influence_type: InfluenceType) {
    let (mut w, _) = resend_world();
    let bt = InfluencedTables { influence_type, table_ids: vec![], schema_id: 1 };
    let key = w.new_event(&waiting(10, bt));
    let now = w.now;
    let ev = w.ev_mut(key);
    ev.selected = true;
    ev.writer_advanced = true;
    ev.last_resend_ms = now - 2_000;
    assert_eq!(targets(&w.resend()).len(), 1);

    // A status arrived just now: the fan-out waits.
    w.ev_mut(key).last_resend_ms = now - 2_000;
    w.ev_mut(key).last_status_ms = now;
    assert_eq!(targets(&w.resend()).len(), 0);

    // Quiet for two seconds: the fan-out goes out again.
    w.ev_mut(key).last_resend_ms = now - 2_000;
    w.ev_mut(key).last_status_ms = now - 2_000;
    assert_eq!(targets(&w.resend()).len(), 1);
}

// barrier_event_test.go:191 TestFanoutPassResendWaitsForQuietStatus, All: after the first
// fan-out Pass, a resend waits while statuses arrived within the quiet interval.
#[test]
fn ticdc_barrier_event_TestFanoutPassResendWaitsForQuietStatus_all() {
    fanout_quiet(InfluenceType::All);
}

// barrier_event_test.go:191 TestFanoutPassResendWaitsForQuietStatus, DB: the same for a
// DB Pass.
#[test]
fn ticdc_barrier_event_TestFanoutPassResendWaitsForQuietStatus_db() {
    fanout_quiet(InfluenceType::Db);
}

// barrier_event_test.go:245 TestNormalPassResendDoesNotWaitForQuietStatus: a Normal Pass
// is resent even right after a status arrived.
#[test]
fn ticdc_barrier_event_TestNormalPassResendDoesNotWaitForQuietStatus() {
    let (mut w, _) = resend_world();
    let key = w.new_event(&waiting(10, normal_tables(&[1, 2])));
    let now = w.now;
    let ev = w.ev_mut(key);
    ev.selected = true;
    ev.writer_advanced = true;
    ev.pass_sent = true;
    ev.last_resend_ms = now - 2_000;
    ev.last_status_ms = now;
    assert_eq!(targets(&w.resend()).len(), 1);
}

// barrier_event_test.go:286 TestSendPassActionTypeDBIncludesWriterNode: a DB Pass goes to
// the nodes of the schema's tasks and to the writer's (the trigger's) node.
#[test]
fn ticdc_barrier_event_TestSendPassActionTypeDBIncludesWriterNode() {
    let mut w = World::new(false).with_alive(&[NODE1, NODE2]);
    // The trigger lives on node2.
    w.sc.get_mut(&DDL).unwrap().node = Some(NODE2);
    w.add_new_table(1, 1, 1);
    w.add_new_table(1, 2, 1);
    for id in w.sc.absent() {
        w.bind_replicating(id, NODE1);
    }
    let key = w.new_event(&waiting(10, db_tables(1)));
    let ev = w.ev_mut(key);
    ev.selected = true;
    ev.writer = Some(DDL);
    ev.writer_advanced = true;
    let ((), o) = w.with_ctx(|b, bc, out| b.send_pass(key, bc, out));
    assert_eq!(targets(&o).len(), 2);
    assert_eq!(targets(&o), vec![NODE1, NODE2]);
}
