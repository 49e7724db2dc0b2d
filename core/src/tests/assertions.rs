//! Every core assertion ([`crate::assertions`]) fired at its bad transition: through a
//! bug switch or a race where one exists, otherwise by putting the role into the state
//! the transition must never start from. Each test also runs the good path and sees no
//! failure, so an assertion that fires on correct behaviour shows here too.

use super::harness::*;
use crate::assertions::Assertion as A;
use crate::bugs::Bug;
use crate::config::SchedulerConfig;
use crate::coordinator::{ChangefeedInfo, Coordinator, MetaStore};
use crate::dispatcher::basic_dispatcher::{Dispatcher, DispatcherEffects};
use crate::effects::{Observation, Out};
use crate::maintainer::operator::*;
use crate::maintainer::span_controller::{ReplicaState, SpanController, SpanReplication};
use crate::maintainer::MaintainerState;
use crate::messages::*;
use crate::types::*;
use crate::upstream::*;

const X: DispatcherId = DispatcherId(1000); // table 10 on node 1
const Y: DispatcherId = DispatcherId(1001); // table 11 on node 2
const TS: Ts = 200;

/// The details of every failure of `a` in `out`.
fn fired(out: &Out, a: A) -> Vec<String> {
    out.observations
        .iter()
        .filter_map(|o| match &o.what {
            Observation::AssertionFailed { assertion, detail } if *assertion == a => Some(detail.clone()),
            _ => None,
        })
        .collect()
}

fn any_fired(out: &Out) -> Vec<String> {
    out.observations
        .iter()
        .filter_map(|o| match &o.what {
            Observation::AssertionFailed { assertion, detail } => Some(format!("{}: {}", assertion.name(), detail)),
            _ => None,
        })
        .collect()
}

/// A working maintainer on node 0 with X on node 1 and Y on node 2.
fn maintainer(env: Env) -> MH {
    let mut h = MH::with_env(env, &[0, 1, 2], TestSchema::with_tables(&[10, 11]));
    h.bootstrap(vec![
        (1, NodeReport::spans(vec![bspan(X, TableSpan::full(10), ComponentState::Working, 150)])),
        (2, NodeReport::spans(vec![bspan(Y, TableSpan::full(11), ComponentState::Working, 150)])),
    ]);
    h
}

/// The failures the maintainer's controllers and barrier recorded, as observations.
fn flushed(h: &mut MH) -> Out {
    h.m.flush_assertions(&mut h.env.ctx());
    h.env.take()
}

fn task(id: DispatcherId, node: Option<u32>, state: ReplicaState) -> SpanReplication {
    SpanReplication {
        id,
        span: TableSpan::full(10),
        schema_id: SCHEMA,
        node: node.map(NodeId),
        state,
        checkpoint_ts: 150,
        last_state: None,
        block_state: None,
    }
}

fn drained(f: &mut crate::assertions::Failures) -> Out {
    let mut out = Out::default();
    f.drain_into(&mut out);
    out
}

// ---------------------------------------------------------------- maintainer

#[test]
fn removing_maintainer_sending_a_table_request_fires() {
    // Removed properly, only the trigger's Remove goes out.
    let mut h = maintainer(Env::new(0));
    h.m.pipe
        .oc
        .add_operator(Operator::Move(MoveDispatcherOperator::new(X, Some(n(1)), n(2))), &mut h.m.pipe.sc, &h.m.alive, 0)
        .unwrap();
    h.m.remove(&mut h.env.ctx(), false, false);
    h.env.take();
    let o = h.execute();
    assert!(schedule_reqs(&o).iter().any(|(_, r)| r.config.dispatcher_id == h.ddl()), "{:?}", o.msgs);
    assert!(any_fired(&o).is_empty(), "{:?}", any_fired(&o));
    // Removing without the quiesce: the Move of X still sends.
    let mut h = maintainer(Env::new(0));
    h.m.pipe
        .oc
        .add_operator(Operator::Move(MoveDispatcherOperator::new(X, Some(n(1)), n(2))), &mut h.m.pipe.sc, &h.m.alive, 0)
        .unwrap();
    h.m.state = MaintainerState::Removing;
    let o = h.execute();
    let f = fired(&o, A::MaintainerRemovingSendsNoSchedule);
    assert!(f.len() == 1 && f[0].contains(&format!("dispatcher={}", X)), "{:?}", f);
}

#[test]
fn stored_watermark_going_back_fires() {
    let mut h = maintainer(Env::new(0));
    // Heartbeats out of order: the older one is not stored, nothing fires.
    let o1 = h.handle(1, heartbeat(160, 3, vec![]));
    let o2 = h.handle(1, heartbeat(150, 2, vec![]));
    let o3 = h.handle(1, heartbeat(170, 3, vec![]));
    for o in [&o1, &o2, &o3] {
        assert!(any_fired(o).is_empty(), "{:?}", any_fired(o));
    }
    assert_eq!(h.m.pipe.node_watermarks[&n(1)].checkpoint_ts, 170);
    // The update rule never regresses, so the transition is driven directly.
    let (new, old) = (Watermark { checkpoint_ts: 150, resolved_ts: 150, seq: 3 }, h.m.pipe.node_watermarks[&n(1)]);
    h.m.assert_watermark_kept(&mut h.env.ctx(), n(1), old, new);
    let older_seq = Watermark { checkpoint_ts: 900, resolved_ts: 900, seq: 2 };
    h.m.assert_watermark_kept(&mut h.env.ctx(), n(1), old, older_seq);
    assert_eq!(fired(&h.env.take(), A::MaintainerWatermarkNoRegress).len(), 2);
}

// ---------------------------------------------------------------- operator controller

#[test]
fn two_step_admission_of_two_operators_for_one_dispatcher_fires() {
    let alive = nodes(&[0, 1, 2]);
    let mut sc = SpanController::new(d(1), n(0), 100, SchedulerConfig::default());
    sc.insert(task(X, None, ReplicaState::Absent));
    let mut oc = OperatorController::new();
    // The historical admission (`nonatomic-operator-admission`): both pass the check...
    let add = Operator::Add(AddDispatcherOperator::new(X, n(1), OperatorType::Add));
    let mv = Operator::Move(MoveDispatcherOperator::new(X, None, n(2)));
    assert!(oc.admission_check(&X, &sc).is_ok() && oc.admission_check(&X, &sc).is_ok());
    oc.admission_insert(add, &mut sc, &alive, 0);
    assert!(drained(&mut oc.failed).observations.is_empty());
    // ... and the second insert replaces the running Add.
    oc.admission_insert(mv, &mut sc, &alive, 0);
    let f = fired(&drained(&mut oc.failed), A::OcOneOperatorPerDispatcher);
    assert!(f.len() == 1 && f[0].contains("running=add"), "{:?}", f);
}

#[test]
fn post_finish_of_a_running_operator_fires() {
    let alive = nodes(&[0, 1, 2]);
    let mut sc = SpanController::new(d(1), n(0), 100, SchedulerConfig::default());
    sc.insert(task(X, None, ReplicaState::Absent));
    sc.insert(task(Y, Some(1), ReplicaState::Replicating));
    let mut oc = OperatorController::new();
    oc.add_operator(Operator::Add(AddDispatcherOperator::new(X, n(1), OperatorType::Add)), &mut sc, &alive, 0).unwrap();
    oc.add_operator(Operator::Add(AddDispatcherOperator::new(Y, n(1), OperatorType::Add)), &mut sc, &alive, 0).unwrap();
    // Cancelled by a DDL: finished first, then finalized.
    oc.on_task_removed(&Y, &mut sc);
    assert!(drained(&mut oc.failed).observations.is_empty());
    // Finalized while it still waits for its dispatcher.
    oc.finalize_operator(&X, &mut sc, &mut || d(99)).unwrap();
    let f = fired(&drained(&mut oc.failed), A::OcPostFinishOnFinished);
    assert!(f.len() == 1 && f[0].contains(&format!("dispatcher={}", X)), "{:?}", f);
}

// ---------------------------------------------------------------- span controller

#[test]
fn replicating_without_a_node_fires() {
    let mut sc = SpanController::new(d(1), n(0), 100, SchedulerConfig::default());
    sc.insert(task(X, None, ReplicaState::Absent));
    sc.insert(task(Y, Some(2), ReplicaState::Replicating));
    sc.mark_replicating(&Y);
    assert!(drained(&mut sc.failed).observations.is_empty());
    sc.mark_replicating(&X);
    sc.insert(task(d(5), None, ReplicaState::Replicating));
    assert_eq!(fired(&drained(&mut sc.failed), A::SpanReplicatingHasNode).len(), 2);
}

#[test]
fn inserting_over_a_live_task_fires() {
    let mut sc = SpanController::new(d(1), n(0), 100, SchedulerConfig::default());
    sc.insert(task(X, Some(1), ReplicaState::Replicating));
    assert!(drained(&mut sc.failed).observations.is_empty());
    sc.insert(task(X, None, ReplicaState::Absent));
    let f = fired(&drained(&mut sc.failed), A::SpanInsertNewId);
    assert!(f.len() == 1 && f[0].contains(&format!("dispatcher={}", X)), "{:?}", f);
}

// ---------------------------------------------------------------- barrier

#[test]
fn block_status_taken_from_a_non_owner_fires_under_the_bug() {
    let bt = normal(&[10, 11]);
    let mut h = maintainer(Env::new(0));
    h.handle(2, block_statuses(vec![(X, block(TS, bt.clone(), BlockStage::Waiting))]));
    assert!(any_fired(&flushed(&mut h)).is_empty(), "the fixed barrier ignores it");
    let mut h = maintainer(Env::new(0).with_bug(Bug::AcceptNonownerBlockStatus));
    h.handle(1, block_statuses(vec![(X, block(TS, bt.clone(), BlockStage::Waiting))]));
    assert!(any_fired(&flushed(&mut h)).is_empty(), "from its owner");
    h.handle(2, block_statuses(vec![(X, block(TS, bt, BlockStage::Waiting))]));
    let f = fired(&flushed(&mut h), A::BarrierStatusFromOwner);
    assert!(f.len() == 1 && f[0].contains(&format!("from={}", n(2))), "{:?}", f);
}

#[test]
fn a_writer_that_never_reported_fires() {
    let bt = normal(&[10, 11]);
    let mut h = maintainer(Env::new(0));
    h.handle(1, block_statuses(vec![(X, block(TS, bt.clone(), BlockStage::Waiting))]));
    h.handle(2, block_statuses(vec![(Y, block(TS, bt.clone(), BlockStage::Waiting))]));
    assert_eq!(h.m.pipe.barrier.events[&(TS, false)].writer, Some(Y));
    assert!(any_fired(&flushed(&mut h)).is_empty());
    // An event whose reporters' record names a dispatcher that is not among them.
    let mut h = maintainer(Env::new(0));
    h.handle(1, block_statuses(vec![(X, block(TS, bt, BlockStage::Waiting))]));
    let ev = h.m.pipe.barrier.events.get_mut(&(TS, false)).unwrap();
    ev.reported.insert(Y);
    ev.last_reporter = Some(d(77));
    h.env.now = 10_000;
    h.tick();
    let f = fired(&flushed(&mut h), A::BarrierWriterReported);
    assert!(f.len() == 1 && f[0].contains(&format!("writer={}", d(77))), "{:?}", f);
}

// ---------------------------------------------------------------- dispatcher

#[test]
fn a_second_pending_block_event_fires() {
    let ddl = |ts| UpstreamEvent::Ddl(super::fencing::ddl_event(ts, normal(&[10, 11])));
    let mut dsp = Dispatcher::new(X, TableSpan::full(10), SCHEMA, START, false, false);
    dsp.queue.extend([UpstreamEvent::Resolved(150), ddl(TS), ddl(TS + 10)]);
    let mut fx = DispatcherEffects::default();
    dsp.handle_events(0, false, &mut fx);
    assert_eq!(dsp.block.as_ref().map(|b| b.event.commit_ts()), Some(TS));
    assert!(fx.failed.is_empty(), "the dispatcher waits on its pending event");
    dsp.handle_events(0, false, &mut fx);
    assert!(fx.failed.is_empty() && dsp.block.as_ref().map(|b| b.event.commit_ts()) == Some(TS));
    // The wait check is what keeps the report from replacing it: driven past it.
    let next = BlockEvent::Ddl(super::fencing::ddl_event(TS + 10, normal(&[10, 11])));
    dsp.report_waiting(next, 0, &mut fx);
    let f = fired(&drained(&mut fx.failed), A::DispatcherOnePendingBlock);
    assert!(f.len() == 1 && f[0].contains(&format!("dispatcher={}", X)), "{:?}", f);
}

#[test]
fn a_block_write_with_rows_in_flight_fires() {
    let (mut dm, mut env) = super::fencing::owned(1, None, Env::new(1));
    dm_handle(&mut dm, &mut env, 0, sched(create_req(X, TableSpan::full(10), START, OperatorType::Add, EPOCH)));
    let ddl = UpstreamEvent::Ddl(super::fencing::ddl_event(TS, normal(&[10, 11])));
    // Rows first: the DDL waits for their flush and nothing fires.
    let o = dm_feed(&mut dm, &mut env, X, vec![UpstreamEvent::Dml(row(10, 1, 150)), ddl], TS);
    assert!(any_fired(&o).is_empty(), "{:?}", any_fired(&o));
    assert!(dm.dispatchers[&X].block.is_none(), "waits for the flush");
    // A Write action that arrives while rows are still in flight.
    let d = dm.dispatchers.get_mut(&X).unwrap();
    d.queue.pop_front();
    let pending = crate::dispatcher::basic_dispatcher::PendingBlock {
        event: BlockEvent::Ddl(super::fencing::ddl_event(TS, normal(&[10, 11]))),
        stage: BlockStage::Waiting,
        last_report_ms: 0,
        acked: true,
        last_ignored_resend_ms: 0,
        ignored_resend_deferred: false,
        action_key: None,
    };
    d.block = Some(pending);
    let action = DispatcherStatus {
        influenced: InfluencedDispatchers::Normal(vec![X]),
        action: Some(DispatcherAction { action: ActionKind::Write, commit_ts: TS, is_sync_point: false }),
        ack: None,
        ignored_block_status: None,
    };
    env.node = n(1);
    dm.handle_control(
        &mut env.ctx(),
        n(0),
        Message::HeartBeatResponse { mode: Mode::Default, cf: cf(), statuses: vec![action], maintainer_epoch: EPOCH },
    );
    let f = fired(&env.take(), A::DispatcherBlockWriteAfterRows);
    assert!(f.len() == 1 && f[0].contains(&format!("dispatcher={}", X)), "{:?}", f);
}

// ---------------------------------------------------------------- dispatcher manager

#[test]
fn a_create_on_a_closed_write_path_fires() {
    let (mut dm, mut env) = super::fencing::owned(1, None, Env::new(1));
    let o =
        dm_handle(&mut dm, &mut env, 0, sched(create_req(X, TableSpan::full(10), START, OperatorType::Add, EPOCH))).1;
    assert!(any_fired(&o).is_empty() && dm.dispatchers.contains_key(&X));
    // A create request is refused on a closed write path.
    dm.write_path_closed = true;
    let o =
        dm_handle(&mut dm, &mut env, 0, sched(create_req(Y, TableSpan::full(11), START, OperatorType::Add, EPOCH))).1;
    assert!(any_fired(&o).is_empty() && !dm.dispatchers.contains_key(&Y));
    // The dispatcher map itself, past that check.
    dm.add_dispatcher(&mut env.ctx(), Dispatcher::new(Y, TableSpan::full(11), SCHEMA, START, false, false));
    let f = fired(&env.take(), A::DmNoCreateAfterClose);
    assert!(f.len() == 1 && f[0].contains(&format!("dispatcher={}", Y)), "{:?}", f);
}

#[test]
fn adding_over_a_live_dispatcher_fires() {
    let (mut dm, mut env) = super::fencing::owned(1, None, Env::new(1));
    dm_handle(&mut dm, &mut env, 0, sched(create_req(X, TableSpan::full(10), START, OperatorType::Add, EPOCH)));
    // A repeated create is idempotent.
    let o =
        dm_handle(&mut dm, &mut env, 0, sched(create_req(X, TableSpan::full(10), START, OperatorType::Add, EPOCH))).1;
    assert!(any_fired(&o).is_empty() && dm.dispatchers.len() == 1);
    dm.add_dispatcher(&mut env.ctx(), Dispatcher::new(X, TableSpan::full(10), SCHEMA, START, false, false));
    let f = fired(&env.take(), A::DmDispatcherIdUnique);
    assert!(f.len() == 1 && f[0].contains(&format!("dispatcher={}", X)), "{:?}", f);
}

// ---------------------------------------------------------------- coordinator

const HIGH_EPOCH: Epoch = u64::MAX / 2;

/// A coordinator that placed the changefeed (persisted epoch above any drawn candidate),
/// then lost every node, and a metadata store rolled back to epoch `rolled_back`.
fn placed_then_lost(rolled_back: Epoch) -> (Coordinator, MetaStore, Env, Epoch) {
    let mut env = Env::new(0);
    let mut meta = MetaStore::default();
    meta.changefeeds.insert(
        cf(),
        ChangefeedInfo {
            id: cf(),
            config: Default::default(),
            epoch: HIGH_EPOCH,
            checkpoint_ts: START,
            state: FeedState::Normal,
            last_error: None,
            created: true,
        },
    );
    let mut c = Coordinator::new(n(0), nodes(&[0]));
    c.handle_message(&mut env.ctx(), n(0), Message::MaintainerHeartbeat { statuses: vec![] }, &mut meta);
    c.tick(&mut env.ctx(), &mut meta);
    let o = env.take();
    assert!(any_fired(&o).is_empty(), "{:?}", any_fired(&o));
    let epoch = meta.changefeeds[&cf()].epoch;
    assert_eq!(epoch, HIGH_EPOCH + 1);
    c.on_node_change(&mut env.ctx(), &nodes(&[]), &mut meta);
    env.take();
    meta.changefeeds.get_mut(&cf()).unwrap().epoch = rolled_back;
    (c, meta, env, epoch)
}

#[test]
fn a_new_maintainer_below_the_last_epoch_fires() {
    let (mut c, mut meta, mut env, epoch) = placed_then_lost(1);
    c.on_node_change(&mut env.ctx(), &nodes(&[0]), &mut meta);
    let f = fired(&env.take(), A::CoordinatorEpochIncreases);
    assert!(f.len() == 1 && f[0].contains(&format!(" epoch={} ", epoch)), "{:?}", f);
}

#[test]
fn discovering_a_maintainer_of_an_older_epoch_fires() {
    let (mut c, mut meta, mut env, epoch) = placed_then_lost(7);
    // Adoption happens only during discovery: put the coordinator back into it (the bad
    // state is the rolled-back store, not the discovery).
    c.initialized = false;
    let st = MaintainerStatus {
        changefeed: cf(),
        checkpoint_ts: START,
        bootstrap_done: true,
        errors: vec![],
        maintainer_epoch: 7,
        removed: false,
    };
    c.handle_message(&mut env.ctx(), n(0), Message::MaintainerHeartbeat { statuses: vec![st] }, &mut meta);
    let f = fired(&env.take(), A::CoordinatorEpochNoRegress);
    assert!(f.len() == 1 && f[0].contains(&format!("epoch={} new_epoch=7", epoch)), "{:?}", f);
}
