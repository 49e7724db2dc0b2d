//! The dispatcher side's redo meta: the redo trigger's `RedoMeta` (started by the
//! trigger's creation, from the storage's meta files), the redo meta and forward
//! messages with their owner/epoch admission, and `collectRedoMeta`.

use super::harness::*;
use crate::bugs::Bug;
use crate::config::{ChangefeedConfig, ConsistentLevel};
use crate::dispatcher::DispatcherManager;
use crate::effects::*;
use crate::messages::*;
use crate::sink::redo_meta::LogMeta;
use crate::types::*;

const TE: DispatcherId = DispatcherId(7201);
const TR: DispatcherId = DispatcherId(7202);
const ED: DispatcherId = DispatcherId(7203);

fn redo_config() -> ChangefeedConfig {
    let mut c = ChangefeedConfig::default();
    c.consistent.level = ConsistentLevel::Eventual;
    c
}

fn bootstrap(epoch: Epoch) -> Message {
    Message::MaintainerBootstrapRequest {
        table_trigger_redo_dispatcher_id: Some(TR),
        cf: cf(),
        config: redo_config(),
        start_ts: START,
        table_trigger_event_dispatcher_id: Some(TE),
        is_new_changefeed: false,
        maintainer_epoch: epoch,
    }
}

fn meta_msg(cp: Ts, rs: Ts, epoch: Epoch) -> Message {
    Message::RedoMetaMessage { cf: cf(), checkpoint_ts: cp, resolved_ts: rs, maintainer_epoch: epoch }
}

fn forward(rs: Ts, epoch: Epoch) -> Message {
    Message::RedoResolvedTsForwardMessage { cf: cf(), resolved_ts: rs, maintainer_epoch: epoch }
}

/// The only meta file write in `o`.
fn meta_put(o: &Out) -> (u64, String, LogMeta) {
    let puts: Vec<_> = o
        .storage
        .iter()
        .filter_map(|r| match r {
            StorageRequest::Put { op_id, path, content: ObjectContent::RedoMeta(m) } => {
                Some((*op_id, path.clone(), *m))
            }
            _ => None,
        })
        .collect();
    assert_eq!(puts.len(), 1, "{:?}", o.storage);
    puts[0].clone()
}

/// The self manager (maintainer on node 0) right after its bootstrap, its meta's walk
/// still out; returns the walk's op id.
fn bootstrapped(env: &mut Env) -> (DispatcherManager, u64) {
    let mut dm = DispatcherManager::new(cf(), n(0), redo_config(), 1);
    let (_, o) = dm_handle(&mut dm, env, 0, bootstrap(EPOCH));
    let lists: Vec<_> = o
        .storage
        .iter()
        .filter_map(|r| match r {
            StorageRequest::ListRedoMeta { op_id, dir } => Some((*op_id, dir.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(lists.len(), 1, "the redo trigger's meta walks the storage: {:?}", o.storage);
    assert_eq!(lists[0].1, "redo/cf");
    (dm, lists[0].0)
}

/// The self manager with a running meta that started at [`START`].
fn running(env: &mut Env) -> DispatcherManager {
    let (mut dm, list) = bootstrapped(env);
    dm.on_redo_meta_listed(&mut env.ctx(), list, Ok(vec![]));
    let (op, _, m) = meta_put(&env.take());
    assert_eq!(m, LogMeta { checkpoint_ts: START, resolved_ts: START });
    dm.on_storage_result(&mut env.ctx(), op, Ok(()));
    env.take();
    dm
}

/// Flush the meta once and complete the write.
fn flush(dm: &mut DispatcherManager, env: &mut Env) -> LogMeta {
    dm.flush_redo_meta(&mut env.ctx());
    let (op, _, m) = meta_put(&env.take());
    dm.on_storage_result(&mut env.ctx(), op, Ok(()));
    env.take();
    m
}

fn progress_sent(o: &Out) -> Vec<(NodeId, Ts)> {
    o.msgs
        .iter()
        .filter_map(|e| match &e.msg {
            Message::RedoResolvedTsProgressMessage { resolved_ts, .. } => Some((e.to, *resolved_ts)),
            _ => None,
        })
        .collect()
}

#[test]
fn the_meta_starts_from_the_largest_of_the_start_ts_and_the_stored_metas_then_deletes_them() {
    let mut env = Env::new(0);
    let (mut dm, list) = bootstrapped(&mut env);
    assert_eq!(dm.redo_flushed_meta(), Some(LogMeta::default()), "nothing flushed before initMeta");
    let found = vec![
        ("redo/cf/old_a.meta".to_string(), LogMeta { checkpoint_ts: START - 50, resolved_ts: START + 20 }),
        ("redo/cf/old_b.meta".to_string(), LogMeta { checkpoint_ts: START + 5, resolved_ts: START + 10 }),
    ];
    dm.on_redo_meta_listed(&mut env.ctx(), list, Ok(found));
    let (op, path, m) = meta_put(&env.take());
    assert_eq!(m, LogMeta { checkpoint_ts: START + 5, resolved_ts: START + 20 }, "each the largest on its own");
    assert!(path.starts_with("redo/cf/") && path.ends_with(".meta"), "{}", path);
    // Not running until the first file is durable: an update is ignored.
    dm_handle(&mut dm, &mut env, 0, meta_msg(START + 30, START + 40, EPOCH));
    dm.on_storage_result(&mut env.ctx(), op, Ok(()));
    let o = env.take();
    assert!(
        o.storage.iter().any(
            |r| matches!(r, StorageRequest::Delete { paths } if paths.len() == 2 && paths[0] == "redo/cf/old_a.meta")
        ),
        "{:?}",
        o.storage
    );
    assert_eq!(dm.redo_flushed_meta(), Some(LogMeta { checkpoint_ts: START + 5, resolved_ts: START + 20 }));
    dm.flush_redo_meta(&mut env.ctx());
    assert!(env.take().storage.is_empty(), "the early update was dropped");
}

#[test]
fn a_current_meta_message_is_flushed_on_the_next_tick_and_replaces_the_previous_file() {
    let mut env = Env::new(0);
    let mut dm = running(&mut env);
    dm_handle(&mut dm, &mut env, 0, meta_msg(START + 3, START + 8, EPOCH));
    dm.flush_redo_meta(&mut env.ctx());
    let (op, path, m) = meta_put(&env.take());
    assert_eq!(m, LogMeta { checkpoint_ts: START + 3, resolved_ts: START + 8 });
    assert_eq!(dm.redo_flushed_meta().unwrap().resolved_ts, START, "flushed only once durable");
    dm.on_storage_result(&mut env.ctx(), op, Ok(()));
    let o = env.take();
    assert!(o
        .storage
        .iter()
        .any(|r| matches!(r, StorageRequest::Delete { paths } if paths.len() == 1 && paths[0] != path)));
    assert_eq!(dm.redo_flushed_meta(), Some(m));
    assert!(o
        .observations
        .iter()
        .any(|ob| matches!(ob.what, Observation::RedoMetaFlushed { resolved_ts, .. } if resolved_ts == START + 8)));
}

#[test]
fn a_meta_message_of_another_epoch_or_owner_is_dropped() {
    let mut env = Env::new(0);
    let mut dm = running(&mut env);
    let (_, o) = dm_handle(&mut dm, &mut env, 0, meta_msg(START + 3, START + 8, EPOCH - 1));
    assert!(traced(&o, "drop stale redo meta message"));
    let (_, o) = dm_handle(&mut dm, &mut env, 1, meta_msg(START + 3, START + 8, EPOCH));
    assert!(traced(&o, "drop stale redo meta message"), "the right epoch from another node");
    dm.flush_redo_meta(&mut env.ctx());
    assert!(env.take().storage.is_empty(), "nothing to flush");
}

#[test]
fn with_redo_messages_not_fenced_an_older_epochs_meta_is_applied_and_observed() {
    let mut env = Env::new(0).with_bug(Bug::RedoMessagesNotFenced);
    let mut dm = running(&mut env);
    let (_, o) = dm_handle(&mut dm, &mut env, 0, meta_msg(START + 3, START + 8, EPOCH - 1));
    assert!(o.observations.iter().any(|ob| matches!(
        &ob.what,
        Observation::ControlFromOlderEpochApplied { message, .. } if message == "RedoMetaMessage"
    )));
    assert_eq!(flush(&mut dm, &mut env).resolved_ts, START + 8);
    // The other control messages are still fenced.
    let (_, o) = dm_handle(
        &mut dm,
        &mut env,
        0,
        sched(create_req(ED, TableSpan::full(10), START, OperatorType::Add, EPOCH - 1)),
    );
    assert!(traced(&o, "drop stale schedule request"));
}

#[test]
fn a_forward_of_the_current_owner_raises_the_redo_global_ts_and_a_stale_one_is_dropped() {
    let mut env = Env::new(0);
    let mut dm = running(&mut env);
    dm_handle(&mut dm, &mut env, 0, forward(START + 50, EPOCH - 1));
    assert_eq!(dm.redo.as_ref().unwrap().global_ts, 0);
    dm_handle(&mut dm, &mut env, 0, forward(START + 50, EPOCH));
    assert_eq!(dm.redo.as_ref().unwrap().global_ts, START + 50);
    dm_handle(&mut dm, &mut env, 0, forward(START + 40, EPOCH));
    assert_eq!(dm.redo.as_ref().unwrap().global_ts, START + 50, "monotonic");
}

#[test]
fn redo_messages_need_the_registered_paths_ready_and_not_closed() {
    // A manager whose redo is not ready yet (no bootstrap) has no redo message paths.
    let mut env = Env::new(0);
    let mut dm = DispatcherManager::new(cf(), n(0), redo_config(), 1);
    let (_, o) = dm_handle(&mut dm, &mut env, 0, forward(START + 50, 0));
    assert_eq!(dm.redo.as_ref().unwrap().global_ts, 0, "{:?}", o.trace);
    // Once the write path closed (`RemoveRedoMessage`), forwards are dropped too.
    let mut dm = running(&mut env);
    dm.local_fence(&mut env.ctx());
    dm_handle(&mut dm, &mut env, 0, forward(START + 50, EPOCH));
    assert_eq!(dm.redo.as_ref().unwrap().global_ts, 0);
}

#[test]
fn collect_sends_a_raised_flushed_resolved_ts_to_the_maintainer_once() {
    let mut env = Env::new(0);
    let (mut dm, list) = bootstrapped(&mut env);
    dm.collect_redo_meta(&mut env.ctx());
    assert!(progress_sent(&env.take()).is_empty(), "nothing flushed yet");
    dm.on_redo_meta_listed(&mut env.ctx(), list, Ok(vec![]));
    let (op, _, _) = meta_put(&env.take());
    dm.on_storage_result(&mut env.ctx(), op, Ok(()));
    env.take();
    dm.collect_redo_meta(&mut env.ctx());
    assert_eq!(progress_sent(&env.take()), vec![(n(0), START)], "to the maintainer");
    dm.collect_redo_meta(&mut env.ctx());
    assert!(progress_sent(&env.take()).is_empty(), "not above the last one sent");
    dm_handle(&mut dm, &mut env, 0, meta_msg(START, START + 9, EPOCH));
    dm.collect_redo_meta(&mut env.ctx());
    assert!(progress_sent(&env.take()).is_empty(), "unflushed does not count");
    flush(&mut dm, &mut env);
    dm.collect_redo_meta(&mut env.ctx());
    assert_eq!(progress_sent(&env.take()), vec![(n(0), START + 9)]);
}

#[test]
fn a_manager_without_a_redo_trigger_collects_nothing_and_ignores_meta_messages() {
    let mut env = Env::new(1);
    let mut dm = DispatcherManager::new(cf(), n(1), redo_config(), 2);
    let msg = Message::MaintainerBootstrapRequest {
        table_trigger_redo_dispatcher_id: None,
        cf: cf(),
        config: redo_config(),
        start_ts: START,
        table_trigger_event_dispatcher_id: None,
        is_new_changefeed: false,
        maintainer_epoch: EPOCH,
    };
    let (_, o) = dm_handle(&mut dm, &mut env, 0, msg);
    assert!(dm.redo_ready());
    assert!(!o.storage.iter().any(|r| matches!(r, StorageRequest::ListRedoMeta { .. })));
    dm_handle(&mut dm, &mut env, 0, meta_msg(START + 1, START + 2, EPOCH));
    assert_eq!(dm.redo_flushed_meta(), None);
    dm.collect_redo_meta(&mut env.ctx());
    assert!(progress_sent(&env.take()).is_empty());
    // A forward reaches every manager.
    dm_handle(&mut dm, &mut env, 0, forward(START + 2, EPOCH));
    assert_eq!(dm.redo.as_ref().unwrap().global_ts, START + 2);
}

#[test]
fn a_failed_meta_write_is_a_retryable_changefeed_error() {
    let mut env = Env::new(0);
    let mut dm = running(&mut env);
    dm_handle(&mut dm, &mut env, 0, meta_msg(START + 1, START + 2, EPOCH));
    dm.flush_redo_meta(&mut env.ctx());
    let (op, _, _) = meta_put(&env.take());
    dm.on_storage_result(&mut env.ctx(), op, Err(StorageError::Transient("m".into())));
    assert!(dm.errors.iter().any(|e| e.code == ErrorCode::ChangefeedRetryable && e.message.starts_with("redo meta")));
    assert_eq!(dm.redo_flushed_meta().unwrap().resolved_ts, START);
}

#[test]
fn the_meta_leaves_with_the_redo_trigger() {
    let mut env = Env::new(0);
    let mut dm = running(&mut env);
    dm.local_fence(&mut env.ctx());
    assert_eq!(dm.redo_flushed_meta(), None);
    dm.flush_redo_meta(&mut env.ctx());
    dm.collect_redo_meta(&mut env.ctx());
    let o = env.take();
    assert!(o.storage.is_empty() && progress_sent(&o).is_empty());
}
