//! Syncpoints (`core_sched::syncpoint`): the dispatcher side (flush, WAITING, write of
//! the record by the trigger, pass), the barrier (All influence, the trigger writes,
//! the pass fans out), start ts of a moved or merged dispatcher while a syncpoint is
//! pending, and a DDL and a syncpoint at the same ts.

use super::fencing::{ddl_event, owned};
use super::harness::*;
use crate::dispatcher::basic_dispatcher::{DispatcherEffects, QueuedStatus};
use crate::dispatcher::manager::merged_start_ts_candidate;
use crate::dispatcher::DispatcherManager;
use crate::effects::*;
use crate::maintainer::barrier::forward_barrier_event;
use crate::maintainer::operator::Operator;
use crate::maintainer::span_controller::{ReplicaState, SpanReplication};
use crate::messages::*;
use crate::types::*;
use crate::upstream::*;

use BlockStage::{Done, Waiting};

const X: DispatcherId = DispatcherId(1000); // table 10 on node 1
const Y: DispatcherId = DispatcherId(1001); // table 11 on node 2
const TRIG: DispatcherId = DispatcherId(3000);
const A: DispatcherId = DispatcherId(2000);
const B: DispatcherId = DispatcherId(2001);
const M: DispatcherId = DispatcherId(2002);
/// A syncpoint ts (aligned on 1 s of physical time, logical 0).
const S: Ts = 10_000 << TSO_LOGICAL_BITS;

fn all() -> InfluencedTables {
    InfluencedTables { influence_type: InfluenceType::All, table_ids: vec![], schema_id: 0 }
}

/// A syncpoint block state as a dispatcher reports it.
fn sp(ts: Ts, stage: BlockStage) -> BlockState {
    BlockState {
        is_blocked: true,
        block_ts: ts,
        block_tables: Some(all()),
        need_dropped_tables: None,
        need_added_tables: vec![],
        updated_schemas: vec![],
        is_sync_point: true,
        stage,
    }
}

fn setup() -> MH {
    let mut h = MH::new(&[0, 1, 2], TestSchema::with_tables(&[10, 11]));
    h.bootstrap(vec![
        (1, NodeReport::spans(vec![bspan(X, TableSpan::full(10), ComponentState::Working, 150)])),
        (2, NodeReport::spans(vec![bspan(Y, TableSpan::full(11), ComponentState::Working, 150)])),
    ]);
    h
}

fn report(h: &mut MH, from: u32, id: DispatcherId, b: BlockState) -> Out {
    h.handle(from, block_statuses(vec![(id, b)]))
}

/// Actions with their influence (the Normal list, or All).
fn actions_any(out: &Out) -> Vec<(NodeId, ActionKind, Ts, bool, InfluencedDispatchers)> {
    hb_statuses(out)
        .into_iter()
        .filter_map(|(to, s)| s.action.map(|a| (to, a.action, a.commit_ts, a.is_sync_point, s.influenced)))
        .collect()
}

fn block_reports(out: &Out) -> Vec<(DispatcherId, BlockState)> {
    out.msgs
        .iter()
        .filter_map(|e| match &e.msg {
            Message::BlockStatusRequest { statuses, .. } => {
                Some(statuses.iter().map(|s| (s.id, s.state.clone())).collect::<Vec<_>>())
            }
            _ => None,
        })
        .flatten()
        .collect()
}

fn action_msg(kind: ActionKind, ts: Ts, sync_point: bool, infl: InfluencedDispatchers) -> Message {
    let st = DispatcherStatus {
        influenced: infl,
        action: Some(DispatcherAction { action: kind, commit_ts: ts, is_sync_point: sync_point }),
        ack: None,
        ignored_block_status: None,
    };
    Message::HeartBeatResponse { mode: Mode::Default, cf: cf(), statuses: vec![st], maintainer_epoch: EPOCH }
}

fn trace_field(out: &Out, kind: &str, field: &str) -> Option<String> {
    out.trace
        .iter()
        .find(|t| t.kind == kind)
        .and_then(|t| t.fields.iter().find(|(k, _)| *k == field).map(|(_, v)| v.clone()))
}

// ---------------------------------------------------------------- barrier

#[test]
fn every_dispatcher_waits_the_trigger_writes_then_the_pass_fans_out_to_all_nodes() {
    let mut h = setup();
    let ddl = h.ddl();
    // Table dispatchers first: ACKed, but no writer until the trigger reported too.
    let o = report(&mut h, 1, X, sp(S, Waiting));
    assert_eq!(acks(&o), vec![(n(1), S, vec![X])]);
    let o = report(&mut h, 2, Y, sp(S, Waiting));
    assert!(actions_any(&o).is_empty());
    assert!(!h.m.pipe.barrier.events[&(S, true)].selected);
    // The trigger reports: every task reported, the trigger is the writer.
    let o = report(&mut h, 0, ddl, sp(S, Waiting));
    assert_eq!(actions_any(&o), vec![(n(0), ActionKind::Write, S, true, InfluencedDispatchers::Normal(vec![ddl]))]);
    assert_eq!(h.m.pipe.barrier.events[&(S, true)].writer, Some(ddl));
    // The Write is resent while the trigger has not reported DONE.
    h.env.now = 1_000;
    assert_eq!(
        actions_any(&h.tick()),
        vec![(n(0), ActionKind::Write, S, true, InfluencedDispatchers::Normal(vec![ddl]))]
    );
    // DONE from the writer: the Pass goes to every alive node, for all its dispatchers, at
    // the next resend (due at once).
    let o = report(&mut h, 0, ddl, sp(S, Done));
    assert!(actions_any(&o).is_empty(), "no action in the answer to a DONE");
    let mut a = actions_any(&h.tick());
    a.sort_by_key(|x| x.0);
    assert_eq!(
        a,
        vec![
            (n(0), ActionKind::Pass, S, true, InfluencedDispatchers::All),
            (n(1), ActionKind::Pass, S, true, InfluencedDispatchers::All),
            (n(2), ActionKind::Pass, S, true, InfluencedDispatchers::All)
        ]
    );
    // DONE statuses keep arriving: the fan-out is not repeated within the quiet window.
    h.env.now = 2_000;
    report(&mut h, 1, X, sp(S, Done));
    h.env.now = 2_500;
    assert!(actions_any(&h.tick()).is_empty(), "quiet after a fresh DONE");
    h.env.now = 3_100;
    assert_eq!(actions_any(&h.tick()).len(), 3, "then the pass is broadcast again");
    report(&mut h, 2, Y, sp(S, Done));
    assert!(h.m.pipe.barrier.events.is_empty(), "every task reported DONE: finished");
    // A syncpoint needs no scheduling and does not hold the checkpoint for new tables.
    assert!(h.m.pipe.barrier.pending_events.is_empty());
    assert_eq!(h.m.pipe.barrier.min_blocked_checkpoint_for_new_tables(), None);
}

#[test]
fn a_task_not_replicating_keeps_the_syncpoint_from_being_selected() {
    let mut h = setup();
    let ddl = h.ddl();
    h.m.pipe.sc.mark_scheduling(&Y);
    report(&mut h, 1, X, sp(S, Waiting));
    let o = report(&mut h, 2, Y, sp(S, Waiting));
    assert_eq!(
        hb_statuses(&o)[0].1.ignored_block_status,
        Some(AckEvent { commit_ts: S, is_sync_point: true }),
        "fast retry"
    );
    let o = report(&mut h, 0, ddl, sp(S, Waiting));
    assert!(actions_any(&o).is_empty(), "Y's span is not covered yet");
    h.m.pipe.sc.mark_replicating(&Y);
    let o = report(&mut h, 2, Y, sp(S, Waiting));
    assert_eq!(actions_any(&o), vec![(n(0), ActionKind::Write, S, true, InfluencedDispatchers::Normal(vec![ddl]))]);
}

#[test]
fn checkpoint_at_the_syncpoint_ts_is_not_past_it() {
    // A dispatcher recreated at the syncpoint's ts may report that ts as its checkpoint
    // before the syncpoint is written: only a checkpoint above it proves it was written.
    let mut r = SpanReplication {
        id: X,
        span: TableSpan::full(10),
        schema_id: SCHEMA,
        node: Some(n(1)),
        state: ReplicaState::Replicating,
        checkpoint_ts: S,
        last_state: None,
        block_state: None,
    };
    assert!(!forward_barrier_event(&r, (S, true)));
    r.checkpoint_ts = S + 1;
    assert!(forward_barrier_event(&r, (S, true)));
    let mut h = setup();
    let ddl = h.ddl();
    h.m.pipe.sc.get_mut(&X).unwrap().checkpoint_ts = S;
    report(&mut h, 0, ddl, sp(S, Waiting));
    h.env.now = 5_000;
    let o = h.tick();
    assert!(actions_any(&o).is_empty(), "not forwarded: nobody is past the syncpoint");
    assert!(!h.m.pipe.barrier.events[&(S, true)].selected);
}

// ---------------------------------------------------------------- dispatcher side

/// The trigger on node 0 and X on node 1, both past `START`.
fn managers() -> (DispatcherManager, DispatcherManager, Env) {
    let (mut dm0, env) = owned(0, Some(TRIG), Env::new(0));
    let (mut dm1, mut env) = owned(1, None, env);
    dm_handle(&mut dm1, &mut env, 0, sched(create_req(X, TableSpan::full(10), START, OperatorType::Add, EPOCH)));
    env.node = NodeId(0);
    dm0.dispatchers.get_mut(&TRIG).unwrap().registered = true;
    (dm0, dm1, env)
}

#[test]
fn rows_before_the_syncpoint_are_flushed_before_waiting_then_the_trigger_writes_the_record() {
    let (mut dm0, mut dm1, mut env) = managers();
    // X: two rows, then the syncpoint (a row at its ts belongs to the snapshot).
    env.node = NodeId(1);
    let o = dm_feed(
        &mut dm1,
        &mut env,
        X,
        vec![UpstreamEvent::Dml(row(10, 1, S - 5)), UpstreamEvent::Dml(row(10, 2, S)), UpstreamEvent::SyncPoint(S)],
        S + 7,
    );
    assert!(traced(&o, "dispatcher receive sync point event"));
    assert_eq!(trace_field(&o, "dispatcher receive sync point event", "commitTs"), Some(S.to_string()));
    assert!(block_reports(&o).is_empty(), "not WAITING before the rows are flushed");
    let puts: Vec<_> = o
        .storage
        .iter()
        .filter_map(|r| match r {
            StorageRequest::Put { op_id, content: ObjectContent::Rows(rows), .. } => Some((*op_id, rows.len())),
            _ => None,
        })
        .collect();
    assert_eq!(puts.len(), 1, "a forced flush of both rows: {:?}", o.storage);
    assert_eq!(puts[0].1, 2);
    dm1.on_storage_result(&mut env.ctx(), puts[0].0, Ok(()));
    env.take();
    dm1.on_storage_result(&mut env.ctx(), puts[0].0, Ok(()));
    dm1.process(&mut env.ctx());
    let o = env.take();
    assert_eq!(block_reports(&o), vec![(X, sp(S, Waiting))], "WAITING once durable");
    assert!(dm1.dispatchers[&X].checkpoint_ts() <= S, "at most the syncpoint's ts while waiting on it");
    // The trigger: WAITING too (no rows), then Write.
    env.node = NodeId(0);
    // Its resolved ts reached S before the syncpoint (which goes out only after something
    // above it): waiting, its checkpoint is S.
    let o = dm_feed(&mut dm0, &mut env, TRIG, vec![UpstreamEvent::Resolved(S), UpstreamEvent::SyncPoint(S)], S + 7);
    assert_eq!(block_reports(&o), vec![(TRIG, sp(S, Waiting))]);
    assert_eq!(dm0.dispatchers[&TRIG].checkpoint_ts(), S);
    let (_, o) = dm_handle(
        &mut dm0,
        &mut env,
        0,
        action_msg(ActionKind::Write, S, true, InfluencedDispatchers::Normal(vec![TRIG])),
    );
    assert_eq!(trace_field(&o, "pending event get the action", "innerAction").as_deref(), Some("0"));
    assert_eq!(trace_field(&o, "pending event get the action", "pendingEventCommitTs"), Some(S.to_string()));
    let put = o
        .storage
        .iter()
        .find_map(|r| match r {
            StorageRequest::Put { op_id, path, content: ObjectContent::SyncPoint(rec) } => {
                Some((*op_id, path.clone(), rec.clone()))
            }
            _ => None,
        })
        .expect("the record is written");
    assert_eq!(put.2.primary_ts, S);
    assert!(put.1.starts_with(&crate::syncpoint::record_path("cf", S)), "{}", put.1);
    assert_eq!(dm0.dispatchers[&TRIG].checkpoint_ts(), S - 1, "writing: the event is in the table progress");
    assert!(traced(&o, "write sync point"));
    // Durable: DONE with the syncpoint's key.
    dm0.on_storage_result(&mut env.ctx(), put.0, Ok(()));
    assert!(block_reports(&env.take()).is_empty());
    dm0.on_storage_result(&mut env.ctx(), put.0, Ok(()));
    let o = env.take();
    assert_eq!(
        block_reports(&o).into_iter().map(|(id, b)| (id, b.block_ts, b.is_sync_point, b.stage)).collect::<Vec<_>>(),
        vec![(TRIG, S, true, Done)]
    );
    assert!(dm0.dispatchers[&TRIG].block.is_none());
    // The Pass (All) releases X, which goes on past the syncpoint.
    env.node = NodeId(1);
    let (_, o) = dm_handle(&mut dm1, &mut env, 0, action_msg(ActionKind::Pass, S, true, InfluencedDispatchers::All));
    assert_eq!(
        block_reports(&o).into_iter().map(|(id, b)| (id, b.block_ts, b.is_sync_point, b.stage)).collect::<Vec<_>>(),
        vec![(X, S, true, Done)]
    );
    dm1.process(&mut env.ctx());
    assert_eq!(dm1.dispatchers[&X].checkpoint_ts(), S + 7);
}

#[test]
fn the_trigger_holds_a_syncpoint_while_a_create_table_is_unacknowledged() {
    let (mut dm0, _, mut env) = managers();
    let o = dm_feed(
        &mut dm0,
        &mut env,
        TRIG,
        vec![UpstreamEvent::Ddl(create_table_ddl(12, S - 3)), UpstreamEvent::SyncPoint(S)],
        S + 1,
    );
    let put = first_put(&o).unwrap();
    dm0.on_storage_result(&mut env.ctx(), put, Ok(()));
    dm0.on_storage_result(&mut env.ctx(), put, Ok(()));
    dm0.process(&mut env.ctx());
    let o = env.take();
    assert_eq!(block_reports(&o).len(), 1, "the CREATE's stage-NONE report only");
    assert_eq!(block_reports(&o)[0].1.stage, BlockStage::None);
    assert!(dm0.dispatchers[&TRIG].block.is_none(), "the syncpoint is held");
    // An ACK of a syncpoint at the CREATE's ts would not release it; the CREATE's ACK does.
    let ack = |sync_point: bool| Message::HeartBeatResponse {
        mode: Mode::Default,
        cf: cf(),
        statuses: vec![DispatcherStatus {
            influenced: InfluencedDispatchers::Normal(vec![TRIG]),
            action: None,
            ack: Some(AckEvent { commit_ts: S - 3, is_sync_point: sync_point }),
            ignored_block_status: None,
        }],
        maintainer_epoch: EPOCH,
    };
    dm_handle(&mut dm0, &mut env, 0, ack(true));
    assert!(!dm0.dispatchers[&TRIG].pending_acks.is_empty());
    dm_handle(&mut dm0, &mut env, 0, ack(false));
    dm0.process(&mut env.ctx());
    assert_eq!(block_reports(&env.take()), vec![(TRIG, sp(S, Waiting))]);
}

#[test]
fn the_failpoint_holds_only_a_barrier_write() {
    let (mut dm0, _, mut env) = managers();
    env.fp_on(FP_BLOCK_OR_WAIT_BEFORE_WRITE);
    // A non-blocking CREATE TABLE is written at once.
    let o = dm_feed(&mut dm0, &mut env, TRIG, vec![UpstreamEvent::Ddl(create_table_ddl(12, S - 3))], S - 1);
    assert!(o.storage.iter().any(|r| matches!(r, StorageRequest::Put { content: ObjectContent::Ddl(_), .. })));
    dm0.dispatchers.get_mut(&TRIG).unwrap().ddl_writing = None;
    dm0.dispatchers.get_mut(&TRIG).unwrap().add_table_blockers.clear();
    dm0.dispatchers.get_mut(&TRIG).unwrap().nonblocking_written = None;
    // The syncpoint's barrier write is held until the failpoint is off.
    dm_feed(&mut dm0, &mut env, TRIG, vec![UpstreamEvent::SyncPoint(S)], S + 1);
    let (_, o) = dm_handle(
        &mut dm0,
        &mut env,
        0,
        action_msg(ActionKind::Write, S, true, InfluencedDispatchers::Normal(vec![TRIG])),
    );
    assert!(traced(&o, "block before write sync point"));
    assert!(o.storage.is_empty());
    env.fp_off(FP_BLOCK_OR_WAIT_BEFORE_WRITE);
    dm0.poll_failpoints(&mut env.ctx());
    assert!(env
        .take()
        .storage
        .iter()
        .any(|r| matches!(r, StorageRequest::Put { content: ObjectContent::SyncPoint(_), .. })));
}

#[test]
fn report_after_write_holds_the_done_and_the_next_block_event_waits_behind_it() {
    let (mut dm0, _, mut env) = managers();
    env.fp_on(FP_BLOCK_OR_WAIT_REPORT_AFTER_WRITE);
    let write = |ts| action_msg(ActionKind::Write, ts, true, InfluencedDispatchers::Normal(vec![TRIG]));
    let put_of = |o: &Out, ddl: bool| {
        o.storage.iter().find_map(|r| match r {
            StorageRequest::Put { op_id, content: ObjectContent::SyncPoint(_), .. } if !ddl => Some(*op_id),
            StorageRequest::Put { op_id, content: ObjectContent::Ddl(_), .. } if ddl => Some(*op_id),
            _ => None,
        })
    };
    dm_feed(&mut dm0, &mut env, TRIG, vec![UpstreamEvent::SyncPoint(S)], S + 1);
    let (_, o) = dm_handle(&mut dm0, &mut env, 0, write(S));
    let put = put_of(&o, false).expect("the syncpoint is written");
    // The sink's write completes in two steps.
    dm0.on_storage_result(&mut env.ctx(), put, Ok(()));
    dm0.on_storage_result(&mut env.ctx(), put, Ok(()));
    let o = env.take();
    assert!(block_reports(&o).is_empty(), "the DONE is held: {:?}", block_reports(&o));
    assert!(dm0.dispatchers[&TRIG].block.is_none(), "the block status is cleared (post-flush)");
    assert!(dm0.dispatchers[&TRIG].checkpoint_ts() >= S, "the checkpoint passes the written event");
    // The next block event (a CREATE TABLE) waits behind the held executor task.
    let o = dm_feed(&mut dm0, &mut env, TRIG, vec![UpstreamEvent::Ddl(create_table_ddl(12, S + 3))], S + 5);
    assert!(put_of(&o, true).is_none(), "nothing written behind the held DONE");
    // The status path awaits too: a resent Write waits behind the held DONE.
    dm_handle(&mut dm0, &mut env, 0, write(S));
    assert_eq!(dm0.dispatchers[&TRIG].awaiting_statuses.len(), 1);
    dm0.poll_failpoints(&mut env.ctx());
    assert!(block_reports(&env.take()).is_empty(), "still held while the failpoint is on");
    env.fp_off(FP_BLOCK_OR_WAIT_REPORT_AFTER_WRITE);
    dm0.poll_failpoints(&mut env.ctx());
    // The DONE, then the awaited (outdated) Write answered DONE again.
    let reports: Vec<_> =
        block_reports(&env.take()).into_iter().map(|(_, b)| (b.block_ts, b.is_sync_point, b.stage)).collect();
    assert!(!reports.is_empty() && reports.iter().all(|r| *r == (S, true, Done)), "{:?}", reports);
    assert!(dm0.dispatchers[&TRIG].held_done.is_none() && dm0.dispatchers[&TRIG].awaiting_statuses.is_empty());
    // Now the CREATE is written, after the DONE.
    dm0.process(&mut env.ctx());
    assert!(put_of(&env.take(), true).is_some(), "the CREATE is written once the DONE is out");
}

/// A close of the write path while a worker is parked in `BlockOrWaitReportAfterWrite`
/// waits for it: closing the executor waits for its goroutines (block_event_executor.go:
/// 118-125, from `stopWritePath`, dispatcher_manager.go:1139-1141), so the close finishes
/// only once the failpoint is off.
#[test]
fn a_close_waits_for_a_worker_parked_in_report_after_write() {
    let (mut dm0, _, mut env) = managers();
    env.fp_on(FP_BLOCK_OR_WAIT_REPORT_AFTER_WRITE);
    dm_feed(&mut dm0, &mut env, TRIG, vec![UpstreamEvent::SyncPoint(S)], S + 1);
    let (_, o) = dm_handle(
        &mut dm0,
        &mut env,
        0,
        action_msg(ActionKind::Write, S, true, InfluencedDispatchers::Normal(vec![TRIG])),
    );
    let put = first_put(&o).expect("the syncpoint is written");
    dm0.on_storage_result(&mut env.ctx(), put, Ok(()));
    dm0.on_storage_result(&mut env.ctx(), put, Ok(()));
    assert_eq!(dm0.held_dones, vec![TRIG]);
    let close = Message::MaintainerCloseRequest { cf: cf(), removed: false, maintainer_epoch: EPOCH };
    dm_handle(&mut dm0, &mut env, 0, close);
    assert!(dm0.write_path_closed);
    env.now += 1_000;
    dm0.heartbeat(&mut env.ctx(), true);
    assert!(!dm0.close_finished, "the close waits for the parked worker");
    env.fp_off(FP_BLOCK_OR_WAIT_REPORT_AFTER_WRITE);
    env.now += 1_000;
    dm0.heartbeat(&mut env.ctx(), true);
    assert!(dm0.close_finished);
}

#[test]
fn a_status_replay_that_starts_a_write_makes_the_later_statuses_wait_again() {
    // The status path wakes after a write's DONE and replays what waited; one of those may
    // be a Write that starts the next write: the statuses after it wait for that one.
    let (mut dm0, _, mut env) = managers();
    let write = |ts| action_msg(ActionKind::Write, ts, true, InfluencedDispatchers::Normal(vec![TRIG]));
    dm_feed(&mut dm0, &mut env, TRIG, vec![UpstreamEvent::SyncPoint(S)], S + 1);
    dm_handle(&mut dm0, &mut env, 0, write(S));
    let d = dm0.dispatchers.get_mut(&TRIG).unwrap();
    // Two statuses queued behind the write, the first a Write that matches a new pending
    // event once the current one is done (as after a held DONE).
    d.awaiting_statuses.clear();
    assert_eq!(d.block.as_ref().map(|b| b.stage), Some(BlockStage::Writing));
    let q = |ts| QueuedStatus {
        ack: None,
        ignored: None,
        action: Some(DispatcherAction { action: ActionKind::Write, commit_ts: ts, is_sync_point: true }),
        match_sync_point: false,
    };
    d.awaiting_statuses.push_back(q(S + 10));
    d.awaiting_statuses.push_back(q(S));
    d.queue.push_back(UpstreamEvent::SyncPoint(S + 10));
    d.block = None;
    d.ddl_writing = None;
    let mut fx = DispatcherEffects::default();
    d.report_waiting(BlockEvent::SyncPoint(S + 10), 0, &mut fx);
    d.held_done = Some(BlockState {
        is_blocked: true,
        block_ts: S,
        block_tables: None,
        need_dropped_tables: None,
        need_added_tables: vec![],
        updated_schemas: vec![],
        is_sync_point: true,
        stage: BlockStage::Done,
    });
    let mut fx = DispatcherEffects::default();
    assert!(d.release_held_done(0, &mut fx), "terminates");
    assert_eq!(d.block.as_ref().map(|b| b.stage), Some(BlockStage::Writing));
    assert_eq!(d.awaiting_statuses.len(), 1, "the status after the Write waits for that write");
}

// ---------------------------------------------------------------- start ts of moved / merged dispatchers

#[test]
fn a_moved_dispatcher_waiting_on_a_syncpoint_restarts_at_its_ts() {
    let mut h = setup();
    report(&mut h, 1, X, sp(S, Waiting));
    assert_eq!(h.m.pipe.sc.get(&X).unwrap().checkpoint_ts, S - 1, "forced to blockTs-1");
    h.m.api_move_table(&mut h.env.ctx(), 10, n(2)).unwrap();
    h.env.take();
    let o = h.execute();
    assert!(schedule_reqs(&o).iter().any(|(to, r)| *to == n(1) && r.action == ScheduleAction::Remove), "{:?}", o.msgs);
    h.handle(1, heartbeat(S - 1, 1, vec![st(X, ComponentState::Stopped, S - 1)]));
    h.env.now += 1_000;
    let o = h.execute();
    let creates: Vec<_> = schedule_reqs(&o).into_iter().filter(|(_, r)| r.action == ScheduleAction::Create).collect();
    assert_eq!(creates.len(), 1, "{:?} {:?} {:?}", o.msgs, o.trace, h.op(X));
    assert_eq!(creates[0].0, n(2));
    assert_eq!(
        (creates[0].1.config.start_ts, creates[0].1.config.skip_dml_as_start_ts),
        (S, false),
        "not syncpoint_ts - 1"
    );
    assert!(matches!(h.op(X), Some(Operator::Move(_))));
}

#[test]
fn a_dispatcher_restarted_at_the_syncpoint_ts_receives_it_again() {
    // The event service computes the first syncpoint from the start ts: an aligned start
    // ts is itself a syncpoint (no skip for non-MySQL sinks).
    assert_eq!(crate::syncpoint::calculate_start_sync_point_ts(S, 1_000, false), S);
    assert_eq!(crate::syncpoint::sync_points_in(S, S + 1, 1_000), vec![S]);
    let (_, mut dm1, mut env) = managers();
    env.node = NodeId(1);
    dm_handle(&mut dm1, &mut env, 0, sched(create_req(Y, TableSpan::full(11), S, OperatorType::Move, EPOCH)));
    let o = dm_feed(&mut dm1, &mut env, Y, vec![UpstreamEvent::SyncPoint(S)], S + 1);
    assert!(o.msgs.iter().any(|e| matches!(&e.msg, Message::HeartBeatRequest { statuses, .. } if statuses.iter().any(|s| s.id == Y && s.state == ComponentState::Working))), "the syncpoint is its first event");
    assert_eq!(block_reports(&o), vec![(Y, sp(S, Waiting))]);
    assert_eq!(dm1.dispatchers[&Y].checkpoint_ts(), S);
}

/// A and B (halves of table 10) on node 1; `events` fed to each; then a merge into M.
fn merge(events_a: Vec<UpstreamEvent>, events_b: Vec<UpstreamEvent>, up_to: (Ts, Ts)) -> (DispatcherManager, Env, Out) {
    let (mut dm, mut env) = owned(1, None, Env::new(1));
    let (ha, hb) = halves(10);
    dm_handle(&mut dm, &mut env, 0, sched(create_req(A, ha, START, OperatorType::Add, EPOCH)));
    dm_handle(&mut dm, &mut env, 0, sched(create_req(B, hb, START, OperatorType::Add, EPOCH)));
    dm_feed(&mut dm, &mut env, A, events_a, up_to.0);
    dm_feed(&mut dm, &mut env, B, events_b, up_to.1);
    dm_handle(&mut dm, &mut env, 0, Message::MergeDispatcherRequest { cf: cf(), req: merge_req(&[A, B], M, EPOCH) });
    for t in [1_000, 2_000, 3_000] {
        env.now = t;
        dm.heartbeat(&mut env.ctx(), true);
    }
    let o = env.take();
    (dm, env, o)
}

#[test]
fn a_merged_dispatcher_whose_sources_wait_on_one_syncpoint_starts_at_its_ts() {
    let (mut dm, mut env, o) =
        merge(vec![UpstreamEvent::SyncPoint(S)], vec![UpstreamEvent::SyncPoint(S)], (S + 10, S + 10));
    assert_eq!(
        trace_field(&o, "merge dispatcher uses pending block event to calculate start ts", "pendingCommitTs"),
        Some(S.to_string())
    );
    assert_eq!(
        trace_field(&o, "merge dispatcher uses pending block event to calculate start ts", "pendingIsSyncPoint")
            .as_deref(),
        Some("true")
    );
    assert_eq!(
        trace_field(&o, "merge dispatcher uses pending block event to calculate start ts", "startTs"),
        Some(S.to_string())
    );
    let m = &dm.dispatchers[&M];
    assert_eq!((m.start_ts, m.skip_dml_as_start_ts, m.fed_ts), (S, false, S));
    // Fed again from the syncpoint's ts, it receives the syncpoint and re-joins the barrier.
    let o = dm_feed(&mut dm, &mut env, M, vec![UpstreamEvent::SyncPoint(S)], S + 20);
    assert_eq!(block_reports(&o), vec![(M, sp(S, Waiting))]);
}

#[test]
fn merged_start_ts_candidates() {
    let cp = S - 100;
    let ddl = |ts| Some(block(ts, normal(&[10, 11]), Waiting));
    let spw = |ts| Some(sp(ts, Waiting));
    assert_eq!(merged_start_ts_candidate(cp, &[spw(S), spw(S)]).start_ts, S);
    let c = merged_start_ts_candidate(cp, &[ddl(S), ddl(S)]);
    assert_eq!(
        (c.start_ts, c.skip_dml_as_start_ts, c.pending),
        (S - 1, true, Some((S, false))),
        "a DDL replays from blockTs-1, skipping its DMLs"
    );
    for mixed in [vec![spw(S), None], vec![spw(S), ddl(S)], vec![spw(S), spw(S + 1)], vec![None, None]] {
        let c = merged_start_ts_candidate(cp, &mixed);
        assert_eq!((c.start_ts, c.skip_dml_as_start_ts, c.pending), (cp, false, None), "{:?}", mixed);
    }
}

#[test]
fn sources_not_all_waiting_on_the_syncpoint_merge_from_the_minimum_checkpoint() {
    // A waits on the syncpoint; B is not there yet (resolved S-50).
    let (dm, _, o) = merge(vec![UpstreamEvent::Resolved(S - 1), UpstreamEvent::SyncPoint(S)], vec![], (S + 10, S - 50));
    assert!(!traced(&o, "merge dispatcher uses pending block event to calculate start ts"));
    assert_eq!(dm.dispatchers[&M].start_ts, S - 50, "B's checkpoint (the minimum)");
}

// ---------------------------------------------------------------- a DDL and a syncpoint at one ts

#[test]
fn a_ddl_and_a_syncpoint_at_one_ts_the_ddl_goes_first() {
    let (_, mut dm1, mut env) = managers();
    env.node = NodeId(1);
    let o = dm_feed(
        &mut dm1,
        &mut env,
        X,
        vec![UpstreamEvent::Ddl(ddl_event(S, normal(&[10, 11]))), UpstreamEvent::SyncPoint(S)],
        S + 1,
    );
    assert_eq!(
        block_reports(&o).into_iter().map(|(_, b)| (b.block_ts, b.is_sync_point, b.stage)).collect::<Vec<_>>(),
        vec![(S, false, Waiting)],
        "the DDL's barrier first"
    );
    assert!(dm1.dispatchers[&X].checkpoint_ts() < S);
    let (_, o) = dm_handle(
        &mut dm1,
        &mut env,
        0,
        action_msg(ActionKind::Pass, S, false, InfluencedDispatchers::Normal(vec![X])),
    );
    dm1.process(&mut env.ctx());
    let mut r = block_reports(&o);
    r.extend(block_reports(&env.take()));
    assert_eq!(
        r.into_iter().map(|(_, b)| (b.block_ts, b.is_sync_point, b.stage)).collect::<Vec<_>>(),
        vec![(S, false, Done), (S, true, Waiting)],
        "then the syncpoint's"
    );
    assert_eq!(dm1.dispatchers[&X].checkpoint_ts(), S, "past the DDL at S, waiting on the syncpoint at S");
}

#[test]
fn the_barrier_orders_a_ddl_and_a_syncpoint_at_one_ts() {
    let mut h = setup();
    let ddl = h.ddl();
    // DROP TABLE 10 at S: blocking, needs scheduling (pending until the trigger's DONE).
    let mut drop = block(S, normal(&[10, DDL_SPAN_TABLE_ID]), Waiting);
    drop.need_dropped_tables = Some(normal(&[10]));
    report(&mut h, 1, X, drop.clone());
    let o = report(&mut h, 0, ddl, drop.clone());
    assert_eq!(actions_any(&o), vec![(n(0), ActionKind::Write, S, false, InfluencedDispatchers::Normal(vec![ddl]))]);
    assert!(h.m.pipe.barrier.pending_events.contains(&(S, false)));
    // Y already reached the syncpoint at S: reported and ACKed.
    let o = report(&mut h, 2, Y, sp(S, Waiting));
    assert_eq!(acks(&o), vec![(n(2), S, vec![Y])]);
    // The trigger's syncpoint report while the DROP is not scheduled yet: dropped, no ACK
    // (its task snapshot would still hold the dropped table).
    let o = report(&mut h, 0, ddl, sp(S, Waiting));
    assert!(acks(&o).is_empty() && actions_any(&o).is_empty());
    assert!(traced(&o, "discard db/all block event from ddl dispatcher due to pending schedule events"));
    assert!(!h.m.pipe.barrier.events[&(S, true)].reported.contains(&ddl));
    // A task blocked on the syncpoint at S is past the DDL at S, not past the syncpoint.
    let y = h.m.pipe.sc.get(&Y).unwrap().clone();
    assert!(forward_barrier_event(&y, (S, false)));
    assert!(!forward_barrier_event(&y, (S, true)));
    // The DROP is written: table 10 goes; the trigger's resent report selects the syncpoint.
    report(&mut h, 0, ddl, block(S, normal(&[10, DDL_SPAN_TABLE_ID]), Done));
    assert!(h.m.pipe.barrier.pending_events.is_empty());
    assert!(h.m.pipe.sc.get(&X).is_none(), "table 10 dropped");
    let o = report(&mut h, 0, ddl, sp(S, Waiting));
    assert_eq!(actions_any(&o), vec![(n(0), ActionKind::Write, S, true, InfluencedDispatchers::Normal(vec![ddl]))]);
}

/// Dispatcher X on node 1 (candidate fix `match-action-on-sync-point` on or off) passed
/// the DDL at S and now waits on the syncpoint at S.
fn waiting_on_syncpoint_after_ddl(match_sync_point: bool) -> (DispatcherManager, Env) {
    let (_, mut dm1, mut env) = managers();
    env.node = NodeId(1);
    if match_sync_point {
        env.bugs = env.bugs.clone().with_fix(crate::bugs::Fix::MatchActionOnSyncPoint);
    }
    dm_feed(
        &mut dm1,
        &mut env,
        X,
        vec![UpstreamEvent::Ddl(ddl_event(S, normal(&[10, 11]))), UpstreamEvent::SyncPoint(S)],
        S + 1,
    );
    dm_handle(&mut dm1, &mut env, 0, action_msg(ActionKind::Pass, S, false, InfluencedDispatchers::Normal(vec![X])));
    dm1.process(&mut env.ctx());
    env.take();
    assert_eq!(dm1.dispatchers[&X].block.as_ref().map(|b| b.event.key()), Some((S, true)));
    (dm1, env)
}

/// TiCDC matches an action to the pending event by commit ts only
/// (`BlockEventStatus.actionMatchs`): a late Pass of the DDL at S reaching a dispatcher
/// that already waits on the syncpoint at S releases the syncpoint, and the DONE carries
/// the action's key. The model keeps TiCDC's behaviour; see the README's open work.
#[test]
fn a_late_ddl_action_at_the_syncpoints_ts_matches_the_pending_syncpoint() {
    let (mut dm1, mut env) = waiting_on_syncpoint_after_ddl(false);
    // The Pass resent for the DDL arrives late.
    let (_, o) = dm_handle(
        &mut dm1,
        &mut env,
        0,
        action_msg(ActionKind::Pass, S, false, InfluencedDispatchers::Normal(vec![X])),
    );
    assert!(dm1.dispatchers[&X].block.is_none(), "the syncpoint was passed");
    assert_eq!(
        block_reports(&o).into_iter().map(|(_, b)| (b.block_ts, b.is_sync_point, b.stage)).collect::<Vec<_>>(),
        vec![(S, false, Done)]
    );
}

/// Candidate fix `match-action-on-sync-point` (not TiCDC): the late Pass of the DDL at S
/// is outdated for the pending syncpoint at S; it is answered DONE for the DDL and the
/// syncpoint stays pending.
#[test]
fn fix_match_action_on_sync_point_keeps_the_syncpoint_pending() {
    let (mut dm1, mut env) = waiting_on_syncpoint_after_ddl(true);
    let (_, o) = dm_handle(
        &mut dm1,
        &mut env,
        0,
        action_msg(ActionKind::Pass, S, false, InfluencedDispatchers::Normal(vec![X])),
    );
    assert_eq!(
        dm1.dispatchers[&X].block.as_ref().map(|b| (b.event.key(), b.stage)),
        Some(((S, true), Waiting)),
        "the syncpoint is still pending"
    );
    assert_eq!(
        block_reports(&o).into_iter().map(|(_, b)| (b.block_ts, b.is_sync_point, b.stage)).collect::<Vec<_>>(),
        vec![(S, false, Done)]
    );
    // The syncpoint's own Pass still releases it.
    dm_handle(&mut dm1, &mut env, 0, action_msg(ActionKind::Pass, S, true, InfluencedDispatchers::Normal(vec![X])));
    assert!(dm1.dispatchers[&X].block.is_none());
}

/// With syncpoints on (TiCDC: MySQL sinks only) a dispatcher created below its table's
/// `ddl_ts` row starts at the row (`getTableRecoveryInfoFromMysqlSink`), so a DDL already
/// written downstream is not replayed; a finished syncpoint row at least as new is skipped
/// at the start ts; without syncpoints the request's start ts stands.
#[test]
fn with_syncpoints_a_created_dispatcher_starts_at_its_tables_ddl_ts_row() {
    use crate::sink::ddl_ts::DdlTsRow;
    let t = S + (50 << TSO_LOGICAL_BITS);
    let mut env = Env::new(1);
    env.ddl_ts.rows.insert(10, DdlTsRow { ddl_ts: t, finished: true, is_syncpoint: false });
    env.ddl_ts.rows.insert(11, DdlTsRow { ddl_ts: S - 7, finished: true, is_syncpoint: false });
    env.ddl_ts.sync_point = Some(DdlTsRow { ddl_ts: S, finished: true, is_syncpoint: true });
    let (mut dm, mut env) = owned(1, None, env);
    dm.config.enable_sync_point = true;
    dm.config.sync_point_interval_ms = 1_000;
    let (_, o) =
        dm_handle(&mut dm, &mut env, 0, sched(create_req(X, TableSpan::full(10), START, OperatorType::Add, EPOCH)));
    assert_eq!(dm.dispatchers[&X].start_ts, t, "lifted to the written DDL");
    assert_eq!(trace_field(&o, "get table recovery info for dispatchers", "realStartTs"), Some(t.to_string()));
    // Table 11: the syncpoint row is newer than its own and finished: start there, skip it.
    dm_handle(&mut dm, &mut env, 0, sched(create_req(Y, TableSpan::full(11), START, OperatorType::Add, EPOCH)));
    assert_eq!((dm.dispatchers[&Y].start_ts, dm.dispatchers[&Y].skip_sync_point_at_start_ts), (S, true));
    let o = dm_feed(&mut dm, &mut env, Y, vec![UpstreamEvent::SyncPoint(S)], S + 1);
    assert_eq!(block_reports(&o), vec![], "the written syncpoint is not waited on again");
    // Without syncpoints (any other sink) the rows are not read.
    let (mut dm2, mut env) = owned(1, None, env);
    dm_handle(&mut dm2, &mut env, 0, sched(create_req(X, TableSpan::full(10), START, OperatorType::Add, EPOCH)));
    assert_eq!(dm2.dispatchers[&X].start_ts, START);
}
