//! `downstreamadapter/dispatcher/event_dispatcher_test.go` at b813e76f9: one event
//! dispatcher handling DMLs, DDLs, syncpoints and the maintainer's statuses.

use super::support::*;
use crate::dispatcher::basic_dispatcher::{has_table_schedule_changes, PendingBlock};
use crate::messages::*;
use crate::tests::harness::*;
use crate::types::*;
use crate::upstream::*;

fn done(ts: Ts, sp: bool) -> (Ts, bool, BlockStage) {
    (ts, sp, BlockStage::Done)
}
fn keys(v: &[BlockState]) -> Vec<(Ts, bool, BlockStage)> {
    v.iter().map(|s| (s.block_ts, s.is_sync_point, s.stage)).collect()
}

// ---------------------------------------------------------------- TestHasTableScheduleChanges
// event_dispatcher_test.go:90 (table of cases, run at :141): whether a DDL's add/drop
// payloads ask the maintainer to schedule tables.

fn schedule_case(added: Vec<TableRef>, dropped: Option<InfluencedTables>, expected: bool) {
    assert_eq!(has_table_schedule_changes(&added, dropped.as_ref()), expected);
}
fn any(t: InfluenceType) -> Option<InfluencedTables> {
    Some(InfluencedTables { influence_type: t, table_ids: vec![], schema_id: 0 })
}

// event_dispatcher_test.go:98 "no add drop payload": nothing to schedule.
#[test]
fn ticdc_event_dispatcher_TestHasTableScheduleChanges_no_add_drop_payload() {
    schedule_case(vec![], None, false);
}

// event_dispatcher_test.go:102 "empty add payload": an empty (non-nil) add list schedules nothing.
#[test]
fn ticdc_event_dispatcher_TestHasTableScheduleChanges_empty_add_payload() {
    schedule_case(Vec::with_capacity(1), None, false);
}

// event_dispatcher_test.go:107 "non empty add payload": an added table is a schedule change.
#[test]
fn ticdc_event_dispatcher_TestHasTableScheduleChanges_non_empty_add_payload() {
    schedule_case(vec![TableRef { table_id: 1, schema_id: 1, splitable: true }], None, true);
}

// event_dispatcher_test.go:112 "empty normal drop payload": a Normal drop naming no table is none.
#[test]
fn ticdc_event_dispatcher_TestHasTableScheduleChanges_empty_normal_drop_payload() {
    schedule_case(vec![], any(InfluenceType::Normal), false);
}

// event_dispatcher_test.go:119 "non empty normal drop payload": dropping a named table is one.
#[test]
fn ticdc_event_dispatcher_TestHasTableScheduleChanges_non_empty_normal_drop_payload() {
    schedule_case(vec![], Some(drop_normal(&[1])), true);
}

// event_dispatcher_test.go:127 "db drop payload": a DB drop is one without table IDs.
#[test]
fn ticdc_event_dispatcher_TestHasTableScheduleChanges_db_drop_payload() {
    schedule_case(vec![], any(InfluenceType::Db), true);
}

// event_dispatcher_test.go:134 "all drop payload": an All drop is one without table IDs.
#[test]
fn ticdc_event_dispatcher_TestHasTableScheduleChanges_all_drop_payload() {
    schedule_case(vec![], any(InfluenceType::All), true);
}

// ---------------------------------------------------------------- TestDispatcherHandleEvents

// event_dispatcher_test.go:231: a complete-table dispatcher through a DML, a local DDL, a
// non-blocking drop/add DDL (reported, resent until ACK), a blocking DDL (WAITING, ACK,
// Write), a syncpoint (WAITING, ACK, Pass) and a resolved ts, checking its checkpoint
// (the table progress's) after each. The unsupported action value (`Action(2)`) has no
// counterpart in the model's `ActionKind` and is left out.
#[test]
#[ignore = "deviation: a written or passed block event lifts the dispatcher's resolved ts to its commit ts (Go: table progress at commitTs-1); the simulator relies on it so a restarted span does not write a DDL twice"]
fn ticdc_event_dispatcher_TestDispatcherHandleEvents() {
    let mut t = Disp::complete();
    assert_eq!(t.d.checkpoint_ts(), 0);
    assert_eq!(t.d.resolved_ts, 0);
    assert!(t.d.progress.is_empty());
    // DML at 2.
    let fx = t.handle(vec![ev_row(2)]);
    assert_eq!(fx.rows.len(), 1);
    assert!(!t.d.progress.is_empty());
    assert_eq!(t.d.checkpoint_ts(), 1);
    t.flush();
    assert!(t.d.progress.is_empty());
    assert_eq!(t.d.checkpoint_ts(), 1);
    // 1. A non-blocking DDL the dispatcher writes alone.
    let fx = t.handle(vec![ev_ddl(ddl(2, normal(&[0])))]);
    assert!(fx.write_block.is_some() && fx.rows.is_empty() && fx.block_statuses.is_empty());
    t.written(2, false);
    assert_eq!(t.pending(), (None, BlockStage::None));
    assert_eq!(t.d.checkpoint_ts(), 1);
    // 2.1 Non-blocking, dropping a table: reported after the write, resent until ACK.
    let e = DdlEvent { need_dropped_tables: Some(drop_normal(&[1])), ..ddl(3, normal(&[0])) };
    let fx = t.handle(vec![ev_ddl(e)]);
    assert!(fx.write_block.is_some());
    let fx = t.written(3, false);
    assert_eq!(keys(&fx.block_statuses), vec![(3, false, BlockStage::None)]);
    assert_eq!(t.pending(), (None, BlockStage::None));
    assert_eq!(t.d.checkpoint_ts(), 2);
    assert_eq!(t.resend_tasks(), 1);
    t.ack(3, false);
    assert_eq!(t.resend_tasks(), 0);
    // 2.2 Non-blocking, adding a table.
    let e = DdlEvent {
        need_added_tables: vec![TableRef { table_id: 1, schema_id: 1, splitable: true }],
        updated_schemas: vec![],
        ..ddl(4, normal(&[0]))
    };
    t.handle(vec![ev_ddl(e)]);
    t.written(4, false);
    assert_eq!(t.pending(), (None, BlockStage::None));
    assert_eq!(t.d.checkpoint_ts(), 3);
    assert_eq!(t.resend_tasks(), 1);
    t.ack(2, false);
    assert_eq!(t.resend_tasks(), 1, "the ACK of an earlier DDL cancels nothing");
    t.ack(4, false);
    assert_eq!(t.resend_tasks(), 0);
    assert_eq!(t.d.checkpoint_ts(), 3);
    // 3. A blocking DDL (two tables).
    let fx = t.handle(vec![ev_ddl(ddl(5, normal(&[0, 1])))]);
    assert!(fx.write_block.is_none());
    assert_eq!(t.pending(), (Some((5, false)), BlockStage::Waiting));
    assert_eq!(t.d.checkpoint_ts(), 3);
    assert_eq!(t.resend_tasks(), 1);
    t.ack(5, false);
    assert_eq!(t.resend_tasks(), 0);
    assert_eq!(t.pending(), (Some((5, false)), BlockStage::Waiting));
    assert_eq!(t.d.checkpoint_ts(), 3);
    let fx = t.action(ActionKind::Write, 5, false);
    assert!(fx.write_block.is_some());
    let fx = t.written(5, false);
    assert_eq!(keys(&fx.block_statuses), vec![done(5, false)]);
    assert_eq!(t.d.checkpoint_ts(), 4);
    assert_eq!(t.pending(), (None, BlockStage::None));
    // A syncpoint at 6.
    t.handle(vec![UpstreamEvent::SyncPoint(6)]);
    assert_eq!(t.pending(), (Some((6, true)), BlockStage::Waiting));
    assert_eq!(t.d.checkpoint_ts(), 4);
    t.ack(6, true);
    assert_eq!(t.resend_tasks(), 0);
    assert_eq!(t.pending(), (Some((6, true)), BlockStage::Waiting));
    let fx = t.action(ActionKind::Pass, 6, true);
    assert_eq!(keys(&fx.block_statuses), vec![done(6, true)]);
    assert_eq!(t.d.checkpoint_ts(), 5);
    // A resolved ts.
    t.handle(vec![UpstreamEvent::Resolved(7)]);
    assert_eq!(t.d.resolved_ts, 7);
    assert_eq!(t.d.checkpoint_ts(), 7);
}

// event_dispatcher_test.go:553: an IgnoredBlockStatus for an event the dispatcher is
// already writing is stale: no fast resend.
#[test]
fn ticdc_event_dispatcher_TestDispatcherIgnoresStaleIgnoredBlockStatus() {
    let mut t = Disp::uncomplete();
    t.d.block = Some(PendingBlock {
        event: BlockEvent::Ddl(ddl(30, normal(&[1]))),
        stage: BlockStage::Writing,
        last_report_ms: 0,
        acked: false,
        last_ignored_resend_ms: 0,
        ignored_resend_deferred: false,
        action_key: None,
    });
    let ignored = AckEvent { commit_ts: 30, is_sync_point: false };
    let mut out = Vec::new();
    assert!(!t.d.on_ignored(&ignored, t.now, &mut out), "ignoredStatusMatches is false while WRITING");
    assert!(out.is_empty());
    let fx = t.status(None, None, Some(ignored));
    assert!(fx.block_statuses.is_empty(), "no fast resend: {:?}", fx.block_statuses);
    assert!(t.resend_after(200).is_empty());
}

// event_dispatcher_test.go:604: a blocking DDL flushes the prior rows before it reports
// WAITING (nothing pending or reported while the flush runs), and the Write does not flush
// again; DONE follows the write.
#[test]
fn ticdc_event_dispatcher_TestBlockingDDLFlushBeforeWaitingAndWriteDoesNotFlushAgain() {
    let mut t = Disp::uncomplete();
    t.d.queue.push_back(ev_ddl(ddl(10, normal(&[1]))));
    let fx = t.run_with(true);
    assert!(fx.flush_rows, "the local flush starts");
    assert_eq!(t.pending(), (None, BlockStage::None));
    assert!(fx.block_statuses.is_empty());
    let fx = t.run();
    assert_eq!(keys(&fx.block_statuses), vec![(10, false, BlockStage::Waiting)]);
    assert!(fx.block_statuses[0].is_blocked);
    assert_eq!(t.pending(), (Some((10, false)), BlockStage::Waiting));
    assert_eq!(t.flushes, 1);
    let fx = t.action(ActionKind::Write, 10, false);
    assert!(!fx.flush_rows && fx.write_block.is_some());
    // `await == true`: the status path waits for the write, so a resent Write arriving
    // meanwhile is held and answered (DONE, as an outdated action) only after the write.
    let fx = t.action(ActionKind::Write, 10, false);
    assert!(fx.block_statuses.is_empty() && fx.write_block.is_none(), "held while writing");
    let fx = t.written(10, false);
    assert_eq!(keys(&fx.block_statuses), vec![done(10, false), done(10, false)]);
    assert!(fx.block_statuses[0].is_blocked);
    assert_eq!(t.pending(), (None, BlockStage::None));
    assert_eq!(t.flushes, 1);
}

// event_dispatcher_test.go:690: on a partial table span a single-table DDL blocks: WAITING
// with a resend task, the ACK stops the resend, the Write writes it and the checkpoint
// reaches commitTs-1.
#[test]
#[ignore = "deviation: a written block event lifts the dispatcher's resolved ts to its commit ts (Go: checkpoint commitTs-1 until the next resolved ts); the simulator relies on it so a restarted span does not write a DDL twice"]
fn ticdc_event_dispatcher_TestUncompeleteTableSpanDispatcherHandleEvents() {
    let mut t = Disp::uncomplete();
    let fx = t.handle(vec![ev_ddl(ddl(2, normal(&[0])))]);
    assert_eq!(keys(&fx.block_statuses), vec![(2, false, BlockStage::Waiting)]);
    assert_eq!(t.pending(), (Some((2, false)), BlockStage::Waiting));
    assert_eq!(t.resend_tasks(), 1);
    assert_eq!(t.d.checkpoint_ts(), 0);
    t.ack(2, false);
    assert_eq!(t.resend_tasks(), 0);
    assert_eq!(t.pending(), (Some((2, false)), BlockStage::Waiting));
    assert_eq!(t.d.checkpoint_ts(), 0);
    let fx = t.action(ActionKind::Write, 2, false);
    assert!(fx.write_block.is_some());
    t.written(2, false);
    assert_eq!(t.d.checkpoint_ts(), 1);
}

// event_dispatcher_test.go:934 (first block): a dispatcher with a row in its sink cannot
// close; once flushed it closes with checkpoint 1 (the row at 2 minus one) and resolved ts
// 0. The second block (a sink that is not normal closes at once) has no counterpart: the
// model's sink has no abnormal state.
#[test]
fn ticdc_event_dispatcher_TestDispatcherClose() {
    let mut t = Disp::complete();
    t.handle(vec![ev_row(2)]);
    assert!(!t.d.can_close());
    t.flush();
    assert!(t.d.can_close());
    assert_eq!(t.d.checkpoint_ts(), 1);
    assert_eq!(t.d.resolved_ts, 0);
}

// event_dispatcher_test.go:1217: with skipDMLAsStartTs and start ts 99, the row at 100 is
// dropped (it was written before the restart), 99 and 101 are handed to the sink, and the
// checkpoint passes 99.
#[test]
fn ticdc_event_dispatcher_TestDispatcher_SkipDMLAsStartTs_FilterCorrectly() {
    let mut t = Disp::new(TableSpan::full(1), 99, true);
    let fx = t.handle(vec![ev_row(99)]);
    assert_eq!(fx.rows.len(), 1, "row at 99 handled");
    t.flush();
    let fx = t.handle(vec![ev_row(100)]);
    assert_eq!(fx.rows.len(), 0, "row at 100 skipped");
    let fx = t.handle(vec![ev_row(101)]);
    assert_eq!(fx.rows.len(), 1, "row at 101 handled");
    t.flush();
    assert!(t.d.checkpoint_ts() > 99, "{}", t.d.checkpoint_ts());
}

// event_dispatcher_test.go:1292: without skipDMLAsStartTs the row at start ts + 1 is handled.
#[test]
fn ticdc_event_dispatcher_TestDispatcher_SkipDMLAsStartTs_Disabled() {
    let mut t = Disp::new(TableSpan::full(1), 99, false);
    let fx = t.handle(vec![ev_row(100)]);
    assert_eq!(fx.rows.len(), 1);
}

// event_dispatcher_test.go:1336: the trigger holds a DB-level DDL while a CREATE TABLE's
// schedule report waits for its ACK; after the ACK the held DDL flushes first, then
// reports WAITING (DB, schema 1).
#[test]
fn ticdc_event_dispatcher_TestHoldBlockEventUntilNoResendTasks() {
    let mut t = Disp::trigger();
    let fx = t.handle(vec![ev_ddl(add_table_ddl(10, 101))]);
    assert!(fx.write_block.is_some());
    let fx = t.written(10, false);
    assert_eq!(keys(&fx.block_statuses), vec![(10, false, BlockStage::None)]);
    assert!(!fx.block_statuses[0].is_blocked);
    assert_eq!(t.resend_tasks(), 1);
    let fx = t.handle(vec![ev_ddl(ddl(20, db(SCHEMA)))]);
    assert!(fx.block_statuses.is_empty(), "held: {:?}", fx.block_statuses);
    assert_eq!(t.pending(), (None, BlockStage::None));
    t.ack(10, false);
    let fx = t.run_with(true);
    assert!(fx.flush_rows, "the held DDL's flush starts");
    assert!(fx.block_statuses.is_empty(), "nothing before the flush returns");
    let fx = t.run();
    let [st] = &fx.block_statuses[..] else { panic!("{:?}", fx.block_statuses) };
    assert!(st.is_blocked && !st.is_sync_point);
    assert_eq!((st.block_ts, st.stage), (20, BlockStage::Waiting));
    let bt = st.block_tables.as_ref().unwrap();
    assert_eq!((bt.influence_type, bt.schema_id), (InfluenceType::Db, 1));
}

// event_dispatcher_test.go:1426: an add-table DDL on the trigger is reported (not blocked)
// and caps the checkpoint at commitTs-1 although the resolved ts moves on, until its ACK.
// (Go also counts the sink's wake callback, which has no counterpart here.)
#[test]
fn ticdc_event_dispatcher_TestAddTableCheckpointBlockerWaitsForMaintainerACK() {
    let mut t = Disp::trigger();
    t.handle(vec![ev_ddl(add_table_ddl(100, 101))]);
    let fx = t.written(100, false);
    let [st] = &fx.block_statuses[..] else { panic!("{:?}", fx.block_statuses) };
    assert!(!st.is_blocked);
    assert_eq!(st.block_ts, 100);
    assert_eq!(t.resend_tasks(), 1);
    assert_eq!(t.d.add_table_blockers.len(), 1);
    let fx = t.handle(vec![UpstreamEvent::Resolved(200)]);
    assert!(fx.write_block.is_none() && fx.block_statuses.is_empty());
    assert_eq!(t.d.resolved_ts, 200);
    assert_eq!(t.d.checkpoint_ts(), 99);
    t.ack(100, false);
    assert_eq!(t.resend_tasks(), 0);
    assert_eq!(t.d.add_table_blockers.len(), 0);
    assert_eq!(t.d.checkpoint_ts(), 200);
}

// event_dispatcher_test.go:1460: the add-table blocker is installed before the (delayed)
// write; an ACK before the report changes nothing; after the write the report goes out and
// its ACK clears the blocker.
#[test]
fn ticdc_event_dispatcher_TestAddTableCheckpointBlockerInstalledBeforeAsyncWrite() {
    let mut t = Disp::trigger();
    let fx = t.handle(vec![ev_ddl(add_table_ddl(100, 101))]);
    assert!(fx.write_block.is_some(), "the write is submitted, not done");
    assert_eq!(t.d.add_table_blockers.len(), 1);
    assert!(t.d.nonblocking_written.is_some(), "pending ACK counted");
    assert_eq!(t.resend_tasks(), 0);
    t.ack(100, false);
    assert_eq!(t.d.add_table_blockers.len(), 1);
    assert!(t.d.nonblocking_written.is_some());
    let fx = t.written(100, false);
    assert_eq!(keys(&fx.block_statuses), vec![(100, false, BlockStage::None)]);
    assert_eq!(t.resend_tasks(), 1);
    t.ack(100, false);
    assert_eq!(t.d.add_table_blockers.len(), 0);
    assert!(t.d.pending_acks.is_empty() && t.d.nonblocking_written.is_none());
}

// event_dispatcher_test.go:1508: with three add-table DDLs unacknowledged the checkpoint
// is capped by the smallest one; ACKs in any order release it step by step.
#[test]
fn ticdc_event_dispatcher_TestAddTableCheckpointBlockerUsesSmallestPendingBlockTs() {
    let mut t = Disp::trigger();
    for (ts, table) in [(100, 101), (120, 102), (140, 103)] {
        t.handle(vec![ev_ddl(add_table_ddl(ts, table))]);
        let fx = t.written(ts, false);
        assert_eq!(keys(&fx.block_statuses), vec![(ts, false, BlockStage::None)]);
    }
    assert_eq!(t.d.add_table_blockers.len(), 3);
    t.handle(vec![UpstreamEvent::Resolved(200)]);
    assert_eq!(t.d.checkpoint_ts(), 99);
    t.ack(120, false);
    assert_eq!(t.d.add_table_blockers.len(), 2);
    assert_eq!(t.d.checkpoint_ts(), 99);
    t.ack(100, false);
    assert_eq!(t.d.add_table_blockers.len(), 1);
    assert_eq!(t.d.checkpoint_ts(), 139);
    t.ack(140, false);
    assert_eq!(t.d.add_table_blockers.len(), 0);
    assert_eq!(t.d.checkpoint_ts(), 200);
}

// event_dispatcher_test.go:1592: a DDL with empty add and drop payloads needs no schedule
// ACK: no pending ACK, no blocker, no resend task, no status.
#[test]
fn ticdc_event_dispatcher_TestEmptyAddDropPayloadsDoNotNeedScheduleACK() {
    let mut t = Disp::trigger();
    let e = DdlEvent {
        need_added_tables: Vec::new(),
        updated_schemas: vec![],
        need_dropped_tables: Some(drop_normal(&[])),
        ..ddl(100, normal(&[DDL_SPAN_TABLE_ID]))
    };
    let fx = t.handle(vec![ev_ddl(e)]);
    assert!(fx.write_block.is_some());
    assert!(t.d.nonblocking_written.is_none());
    assert_eq!(t.d.add_table_blockers.len(), 0);
    let fx = t.written(100, false);
    assert!(fx.block_statuses.is_empty(), "{:?}", fx.block_statuses);
    assert_eq!(t.resend_tasks(), 0);
    assert!(t.d.pending_acks.is_empty());
}

// event_dispatcher_test.go:1624 (first half): the add-table blocker keeps the trigger from
// closing. The second half (a sink that is not normal closes anyway, at 99/200) has no
// counterpart: the model's sink has no abnormal state.
#[test]
fn ticdc_event_dispatcher_TestAddTableCheckpointBlockerControlsTryClose() {
    let mut t = Disp::trigger();
    t.handle(vec![ev_ddl(add_table_ddl(100, 101))]);
    let fx = t.written(100, false);
    assert_eq!(fx.block_statuses.len(), 1);
    t.handle(vec![UpstreamEvent::Resolved(200)]);
    assert_eq!(t.d.checkpoint_ts(), 99);
    assert!(!t.d.can_close());
}

// ---------------------------------------------------------------- TestAddTableCheckpointBlockerCleanedOnLocalErrors
// event_dispatcher_test.go:1546 (cases run at :1568): a local error on the add-table path
// reports the error and drops the pending ACK, the blocker and the resend task.

// "write error": the trigger's write of the add-table DDL fails in the sink.
#[test]
fn ticdc_event_dispatcher_TestAddTableCheckpointBlockerCleanedOnLocalErrors_write_error() {
    use crate::effects::StorageRequest;
    const T: DispatcherId = DispatcherId(3000);
    let mut env = Env::new(0);
    let mut dm = dm_on(0);
    let (r, _) = dm_handle(&mut dm, &mut env, 0, bootstrap_req(0, Some(T), EPOCH));
    assert!(matches!(r, Some(Message::MaintainerBootstrapResponse { err: None, .. })), "{:?}", r);
    let o = dm_feed(&mut dm, &mut env, T, vec![ev_ddl(add_table_ddl(100, 101))], 100);
    let [StorageRequest::Put { op_id, path, .. }] = &o.storage[..] else { panic!("{:?}", o.storage) };
    assert_eq!(dm.dispatchers[&T].add_table_blockers.len(), 1);
    dm.on_storage_result(&mut env.ctx(), *op_id, Err(crate::effects::StorageError::Transient(path.clone())));
    assert_eq!(dm.errors.len(), 1, "the error is reported");
    let d = &dm.dispatchers[&T];
    assert!(d.nonblocking_written.is_none() && d.pending_acks.is_empty(), "no pending ACK, no resend task");
    assert_eq!(d.add_table_blockers.len(), 0);
}
