//! The dispatcher manager's two watermark paths: the periodic aggregate (the heartbeat
//! task) and the status-change heartbeat (`collectComponentStatusWhenChanged`), whose
//! watermark is the collector's copy of the last aggregate, taken when its previous
//! batch went out (finding `status_watermark_snapshot`).

use super::fencing::owned;
use super::harness::*;
use crate::bugs::Fix;
use crate::dispatcher::manager::{HEARTBEAT_INITIAL_DELAY_MS, HEARTBEAT_INTERVAL_MS};
use crate::dispatcher::DispatcherManager;
use crate::effects::Out;
use crate::messages::*;
use crate::types::*;
use crate::upstream::UpstreamEvent;

const A: DispatcherId = DispatcherId(1000); // an old table, caught up
const C: DispatcherId = DispatcherId(1001); // a new table with unflushed rows
const D: DispatcherId = DispatcherId(1002); // another new table, added after C

/// The watermarks of the heartbeats in `out`, with the ids of their statuses.
fn heartbeats(out: &Out) -> Vec<(Watermark, Vec<DispatcherId>)> {
    out.msgs
        .iter()
        .filter_map(|e| match &e.msg {
            Message::HeartBeatRequest { watermark, statuses, .. } => {
                Some((*watermark, statuses.iter().map(|s| s.id).collect()))
            }
            _ => None,
        })
        .collect()
}

fn add(dm: &mut DispatcherManager, env: &mut Env, id: DispatcherId, table: TableId, start: Ts) {
    dm_handle(dm, env, 0, sched(create_req(id, TableSpan::full(table), start, OperatorType::Add, EPOCH)));
}

/// Run the heartbeat task now (the periodic aggregate).
fn aggregate(dm: &mut DispatcherManager, env: &mut Env) -> Vec<(Watermark, Vec<DispatcherId>)> {
    dm.heartbeat(&mut env.ctx(), true);
    heartbeats(&env.take())
}

/// A is caught up at 5000, the aggregate says so, and the collector's copy is taken
/// from it (A's Working status went out after the aggregate). C is added at 2000 and
/// turns Working with a row at 2001 in flight; then D is added at 5000 and turns
/// Working, before any aggregate ran since C was added. Returns D's status heartbeat.
fn race(env: Env) -> (Watermark, Watermark) {
    let (mut dm, mut env) = owned(1, None, env);
    add(&mut dm, &mut env, A, 10, 1000);
    aggregate(&mut dm, &mut env);
    dm_feed(&mut dm, &mut env, A, vec![UpstreamEvent::Resolved(5000)], 5000);
    let agg = aggregate(&mut dm, &mut env);
    assert_eq!(agg[0].0.checkpoint_ts, 5000);
    // A status batch goes out (the outdated-merge answer of A): the collector copies the
    // aggregate (5000, seq 1) when it is done.
    dm_handle(
        &mut dm,
        &mut env,
        0,
        Message::MergeDispatcherRequest {
            cf: cf(),
            req: MergeDispatcherRequest {
                mode: Mode::Default,
                dispatcher_ids: vec![DispatcherId(7), DispatcherId(8)],
                merged_dispatcher_id: A,
                maintainer_epoch: EPOCH,
            },
        },
    );
    add(&mut dm, &mut env, C, 11, 2000);
    let out =
        dm_feed(&mut dm, &mut env, C, vec![UpstreamEvent::Dml(row(11, 1, 2001)), UpstreamEvent::Resolved(5000)], 5000);
    let c_beat = heartbeats(&out);
    assert_eq!(c_beat.len(), 1, "C's Working status goes out at once");
    assert_eq!((c_beat[0].0.checkpoint_ts, c_beat[0].0.seq), (2000, 2), "C's own status carries its checkpoint");
    add(&mut dm, &mut env, D, 12, 5000);
    let out = dm_feed(&mut dm, &mut env, D, vec![UpstreamEvent::Resolved(6000)], 6000);
    let d_beat = heartbeats(&out);
    assert_eq!(d_beat.len(), 1);
    assert_eq!(d_beat[0].1, vec![D]);
    (d_beat[0].0, dm.watermark())
}

#[test]
fn a_status_heartbeat_pairs_the_new_seq_with_the_collectors_stale_copy() {
    let (sent, fresh) = race(Env::new(1));
    assert_eq!(fresh.checkpoint_ts, 2000, "C's row at 2001 is not durable: the node's watermark is 2000");
    assert_eq!(sent.seq, 3, "D's seq: the maintainer takes it over every aggregate of seq 2");
    assert_eq!(sent.checkpoint_ts, 5000, "the copy predates C: the heartbeat claims 5000 with C's 2000 left out");
}

#[test]
fn with_the_fix_the_status_heartbeat_computes_its_watermark_afresh() {
    let (sent, fresh) = race(Env::new(1).with_fix(Fix::FreshStatusWatermark));
    assert_eq!((sent.checkpoint_ts, sent.seq), (2000, 3));
    assert_eq!(fresh.checkpoint_ts, 2000);
}

/// The maintainer takes the higher seq and then drops the aggregates of the same seq
/// with the lower checkpoint, so the node stays at the claimed value.
#[test]
fn the_maintainer_keeps_the_claimed_checkpoint_against_later_aggregates_of_the_same_seq() {
    let mut h = MH::new(&[0, 1], TestSchema::with_tables(&[10]));
    h.bootstrap(vec![(1, NodeReport::spans(vec![bspan(A, TableSpan::full(10), ComponentState::Working, 150)]))]);
    h.handle(0, heartbeat(9000, 1, vec![]));
    h.handle(1, heartbeat(2000, 2, vec![]));
    h.handle(1, heartbeat(5000, 3, vec![]));
    h.handle(1, heartbeat(2000, 3, vec![]));
    assert_eq!(h.m.calc_checkpoint(), Some(5000), "same seq, lower checkpoint: dropped");
}

#[test]
fn the_heartbeat_task_starts_with_the_first_dispatcher_and_first_runs_a_second_later() {
    let (mut dm, mut env) = owned(1, None, Env::new(1));
    env.now = 10_000;
    dm.heartbeat(&mut env.ctx(), false);
    assert!(heartbeats(&env.take()).is_empty(), "no dispatcher yet: no heartbeat task");
    add(&mut dm, &mut env, A, 10, 1000);
    assert_eq!(dm.heartbeat_task_at_ms, Some(10_000 + HEARTBEAT_INITIAL_DELAY_MS));
    env.now += HEARTBEAT_INTERVAL_MS;
    dm.heartbeat(&mut env.ctx(), false);
    assert!(heartbeats(&env.take()).is_empty(), "the task's first run is a second after its creation");
    env.now = 10_000 + HEARTBEAT_INITIAL_DELAY_MS;
    dm.heartbeat(&mut env.ctx(), false);
    let beats = heartbeats(&env.take());
    assert_eq!(beats.len(), 1);
    assert_eq!(beats[0].0.checkpoint_ts, 1000);
    assert_eq!(dm.latest_watermark, beats[0].0, "the aggregate becomes the manager's latest watermark");
}

#[test]
fn an_error_goes_out_before_the_heartbeat_task_exists() {
    let (mut dm, mut env) = owned(1, None, Env::new(1));
    dm.errors.push(RunningError { node: n(1), code: ErrorCode::ChangefeedRetryable, message: "boom".into() });
    dm.heartbeat(&mut env.ctx(), false);
    let out = env.take();
    let errs: Vec<_> = out
        .msgs
        .iter()
        .filter_map(|e| match &e.msg {
            Message::HeartBeatRequest { watermark, err: Some(er), .. } => Some((*watermark, er.message.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(errs, vec![(Watermark::default(), "boom".to_string())], "the error alone, without a watermark");
}

/// The copy is taken when the previous batch went out, not when the next one does: an
/// aggregate in between is not seen.
#[test]
fn a_batch_uses_the_copy_taken_after_the_previous_batch_not_the_latest_aggregate() {
    let (mut dm, mut env) = owned(1, None, Env::new(1));
    add(&mut dm, &mut env, A, 10, 1000);
    aggregate(&mut dm, &mut env);
    // A turns Working: that batch goes out and the collector copies the aggregate (1000).
    let out = dm_feed(&mut dm, &mut env, A, vec![UpstreamEvent::Resolved(3000)], 3000);
    assert_eq!(heartbeats(&out).len(), 1);
    let agg = aggregate(&mut dm, &mut env);
    assert_eq!(agg[0].0.checkpoint_ts, 3000);
    assert_eq!(dm.latest_watermark.checkpoint_ts, 3000);
    // The Stopped answer for an unknown dispatcher (checkpoint 0) carries the copy as is.
    let (_, out) = dm_handle(
        &mut dm,
        &mut env,
        0,
        sched(remove_req(DispatcherId(99), TableSpan::full(99), OperatorType::Remove, EPOCH)),
    );
    let beats = heartbeats(&out);
    assert_eq!(beats.len(), 1);
    assert_eq!(beats[0].1, vec![DispatcherId(99)]);
    assert_eq!(beats[0].0.checkpoint_ts, 1000, "the copy from before the aggregate of 3000");
    assert_eq!(beats[0].0.seq, 1);
    // ...and then the collector copies the latest aggregate.
    assert_eq!(dm.status_snapshot.checkpoint_ts, 3000);
}

/// Statuses of one step go out in one batch: its checkpoint is the smallest of theirs,
/// its seq the largest (TiCDC's 10 ms batch).
#[test]
fn statuses_of_one_step_go_in_one_batch_with_the_smallest_checkpoint() {
    let (mut dm, mut env) = owned(1, None, Env::new(1));
    add(&mut dm, &mut env, A, 10, 1000);
    aggregate(&mut dm, &mut env);
    dm_feed(&mut dm, &mut env, A, vec![UpstreamEvent::Resolved(5000)], 5000);
    aggregate(&mut dm, &mut env);
    dm_handle(
        &mut dm,
        &mut env,
        0,
        sched(remove_req(DispatcherId(99), TableSpan::full(99), OperatorType::Remove, EPOCH)),
    );
    assert_eq!(dm.status_snapshot.checkpoint_ts, 5000);
    add(&mut dm, &mut env, C, 11, 2000);
    add(&mut dm, &mut env, D, 12, 5000);
    dm.feed(C, vec![UpstreamEvent::Dml(row(11, 1, 2001))], 5000);
    dm.feed(D, vec![], 6000);
    dm.process(&mut env.ctx());
    let beats = heartbeats(&env.take());
    assert_eq!(beats.len(), 1, "one batch for the step");
    assert_eq!(beats[0].1, vec![C, D]);
    assert_eq!((beats[0].0.checkpoint_ts, beats[0].0.seq), (2000, 3), "C's checkpoint is in the batch");
}

/// With the fix, a status batch whose window closes after a local fence must not compute
/// its watermark over the dispatcher map the fence emptied (TiCDC keeps the fenced
/// dispatchers in its map): a lagging dispatcher's checkpoint still bounds it.
#[test]
fn with_the_fix_a_batch_flushed_after_a_local_fence_does_not_skip_the_fenced_dispatchers() {
    let (mut dm, mut env) = owned(1, None, Env::new(0).with_fix(Fix::FreshStatusWatermark));
    add(&mut dm, &mut env, A, 10, 1000);
    aggregate(&mut dm, &mut env);
    add(&mut dm, &mut env, C, 11, 2000);
    dm_feed(&mut dm, &mut env, C, vec![UpstreamEvent::Dml(row(11, 1, 2001)), UpstreamEvent::Resolved(5000)], 5000);
    env.take();
    // D turns Working; its batch waits for its window, and the fence lands inside it.
    env.continuations = crate::effects::ContinuationMode::Deferred;
    add(&mut dm, &mut env, D, 12, 5000);
    dm_feed(&mut dm, &mut env, D, vec![UpstreamEvent::Resolved(6000)], 6000);
    assert!(heartbeats(&env.take()).is_empty(), "the batch waits for its window");
    dm.local_fence(&mut env.ctx());
    dm.collect_status_batch(&mut env.ctx());
    let beats = heartbeats(&env.take());
    assert_eq!(beats.len(), 1, "the batch still goes out, as in TiCDC");
    assert!(beats[0].0.checkpoint_ts <= 2000, "C (2000, a row in flight) was skipped: {:?}", beats[0].0);
}
