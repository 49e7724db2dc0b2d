//! `downstreamadapter/dispatchermanager/dispatcher_manager_test.go` at b813e76f9: merges,
//! the merge journal, the status collector's watermark, the close and the local fence.

use super::support::*;
use crate::dispatcher::DispatcherOrchestrator;
use crate::effects::*;
use crate::messages::*;
use crate::tests::harness::*;
use crate::types::*;

const A: DispatcherId = DispatcherId(11);
const B: DispatcherId = DispatcherId(12);
const C: DispatcherId = DispatcherId(13);
const M: DispatcherId = DispatcherId(20);
const T: DispatcherId = DispatcherId(3000);

/// `doMerge` alone: the merge check runs, but no dispatcher finishes its `TryClose` in
/// this heartbeat (Go checks the state before `aggregateDispatcherHeartbeats`).
fn merge_check_only(dm: &mut crate::dispatcher::DispatcherManager, env: &mut Env) {
    env.fp_on(FP_NOT_READY_TO_CLOSE_DISPATCHER);
    run_merge_check(dm, env);
    env.fp_off(FP_NOT_READY_TO_CLOSE_DISPATCHER);
}

// dispatcher_manager_test.go:275 (default mode only; the redo watermark is not modelled):
// a status change goes out with the collector's watermark whose sequence number (100) is
// kept although the status carries an older one.
#[test]
fn ticdc_dispatcher_manager_TestCollectComponentStatusWhenChangedWatermarkSeqNoFallback() {
    let (mut dm, mut env) = owned_manager(None);
    dm_handle(&mut dm, &mut env, 0, sched(create_req(A, TableSpan::full(1), 0, OperatorType::Add, EPOCH)));
    let wm = Watermark { checkpoint_ts: 1000, resolved_ts: 1000, seq: 100 };
    dm.latest_watermark = wm;
    dm.status_snapshot = wm;
    let o = dm_feed(&mut dm, &mut env, A, vec![], 900);
    let w = o
        .msgs
        .iter()
        .find_map(|e| match &e.msg {
            Message::HeartBeatRequest { watermark, statuses, .. }
                if statuses.iter().any(|s| s.id == A && s.state == ComponentState::Working) =>
            {
                Some(*watermark)
            }
            _ => None,
        })
        .expect("status heartbeat");
    assert!(dm.dispatchers[&A].seq < 100);
    assert_eq!(w.seq, 100);
}

// dispatcher_manager_test.go:447: two adjacent Working spans merge into a Preparing
// dispatcher covering both.
#[test]
fn ticdc_dispatcher_manager_TestMergeDispatcherNormal() {
    let (mut dm, mut env) = owned_manager(None);
    working(&mut dm, &mut env, A, span1('a', 'm'));
    working(&mut dm, &mut env, B, span1('m', 'z'));
    dm_handle(&mut dm, &mut env, 0, merge_msg(&[A, B], M, EPOCH));
    let m = dm.dispatchers.get(&M).expect("merged dispatcher");
    assert_eq!(m.state, ComponentState::Preparing);
    assert_eq!((m.span.start, m.span.end), (key('a'), key('z')));
}

// dispatcher_manager_test.go:480: a merge of one dispatcher creates nothing.
#[test]
fn ticdc_dispatcher_manager_TestMergeDispatcherInvalidIDs() {
    let (mut dm, mut env) = owned_manager(None);
    working(&mut dm, &mut env, A, span1('a', 'z'));
    dm_handle(&mut dm, &mut env, 0, merge_msg(&[A], M, EPOCH));
    assert!(!dm.dispatchers.contains_key(&M));
}

// dispatcher_manager_test.go:500 (the close contract): once closed, TryClose(removed)
// succeeds at once, and again. The removal cleanup it triggers is not modelled.
#[test]
fn ticdc_dispatcher_manager_TestTryCloseRemovedRequestAfterClosedReturnsImmediatelyAndTriggersCleanup() {
    let (mut dm, mut env) = owned_manager(None);
    dm.close_finished = true;
    assert!(dm.try_close(&mut env.ctx()));
    assert!(dm.try_close(&mut env.ctx()));
}

// dispatcher_manager_test.go:519: LocalFence cancels the write path at once, without
// waiting for the manager's cleanup (a write in flight); the close completes afterwards.
#[test]
fn ticdc_dispatcher_manager_TestLocalFenceCancelsWritePathWithoutWaitingForCleanup() {
    let (mut dm, mut env) = owned_manager(None);
    working(&mut dm, &mut env, A, TableSpan::full(1));
    dm_feed(&mut dm, &mut env, A, vec![ev_row(10)], 20);
    dm.flush_sink(&mut env.ctx());
    let o = env.take();
    let [StorageRequest::Put { op_id, .. }] = &o.storage[..] else { panic!("{:?}", o.storage) };
    dm.local_fence(&mut env.ctx());
    assert!(dm.write_path_closed, "cancelled at once");
    assert!(dm.sink.inflight_count() > 0, "cleanup still pending");
    dm.heartbeat(&mut env.ctx(), true);
    assert!(!dm.try_close(&mut env.ctx()));
    dm.on_storage_result(&mut env.ctx(), *op_id, Ok(()));
    dm.heartbeat(&mut env.ctx(), true);
    assert!(dm.try_close(&mut env.ctx()));
}

// dispatcher_manager_test.go:631: a manager whose registration as initializing is refused
// (the orchestrator fenced meanwhile) fails with the write-path-closed error and is
// closed; the bootstrap gets no response and no manager stays.
#[test]
fn ticdc_dispatcher_manager_TestNewDispatcherManagerReturnsFenceErrorWhenInitializingRegistrationRejected() {
    let mut env = Env::new(1);
    env.fp_on(FP_NEW_DISPATCHER_MANAGER_DELAY);
    let mut orch = DispatcherOrchestrator::new(n(1), 1);
    orch.handle_message(&mut env.ctx(), n(0), bootstrap_req(1, None, 1));
    orch.local_fence(&mut env.ctx());
    env.now += crate::dispatcher::orchestrator::NEW_DISPATCHER_MANAGER_DELAY_MS;
    orch.poll_failpoints(&mut env.ctx());
    let o = env.take();
    assert!(orch.managers.is_empty());
    assert!(!orch.in_flight());
    assert!(traced(&o, "dispatcher manager write path closed while creating dispatcher manager"));
    assert!(!o.msgs.iter().any(|e| matches!(e.msg, Message::MaintainerBootstrapResponse { .. })));
}

// dispatcher_manager_test.go:731 (the event trigger; redo is not modelled): with the write
// path closed no table trigger is created, and that is the write-path-closed outcome (no
// error response).
#[test]
fn ticdc_dispatcher_manager_TestNewTableTriggerDispatchersReturnFenceErrorWhenWritePathClosed() {
    let mut env = Env::new(1);
    let mut dm = dm_on(1);
    dm.write_path_closed = true;
    let (r, o) = dm_handle(&mut dm, &mut env, 0, bootstrap_req(1, Some(T), EPOCH));
    assert!(r.is_none(), "{:?}", r);
    assert!(traced(&o, "dispatcher manager write path closed while creating table trigger dispatcher"));
    assert_eq!(dm.trigger_id, None);
    assert!(dm.dispatchers.is_empty());
}

// dispatcher_manager_test.go:750 (the event trigger; redo is not modelled): initialising
// the trigger on a closed write path fails as write-path-closed and the trigger does not
// register with the event collector.
#[test]
fn ticdc_dispatcher_manager_TestInitializeTableTriggerEventDispatcherReturnsFenceErrorWhenWritePathClosed() {
    let (mut dm, mut env) = owned_manager(Some(T));
    dm.write_path_closed = true;
    let (r, o) = dm_handle(&mut dm, &mut env, 0, post_bootstrap_req(T, EPOCH));
    assert!(r.is_none(), "{:?}", r);
    assert!(traced(&o, "dispatcher manager write path closed while initializing table trigger event dispatcher"));
    assert!(!dm.dispatchers[&T].registered);
}

// dispatcher_manager_test.go:783: a Create on a fenced manager creates nothing and keeps
// the create operator journaled.
#[test]
fn ticdc_dispatcher_manager_TestCreateDispatcherByInfoKeepsCreateOperatorWhenFenced() {
    let (mut dm, mut env) = owned_manager(None);
    dm.write_path_closed = true;
    let req = create_req(A, TableSpan { table_id: 1, start: 0, end: TABLE_KEY_END }, 1, OperatorType::Add, EPOCH);
    dm_handle(&mut dm, &mut env, 0, sched(req.clone()));
    assert!(!dm.dispatchers.contains_key(&A));
    assert_eq!(dm.current_operator_map.get(&A).map(|e| &e.req), Some(&req));
}

// dispatcher_manager_test.go:820: a merge whose merged ID is an existing dispatcher leaves
// that dispatcher as it is.
#[test]
fn ticdc_dispatcher_manager_TestMergeDispatcherExistingID() {
    let (mut dm, mut env) = owned_manager(None);
    working(&mut dm, &mut env, A, span1('a', 'z'));
    dm_handle(&mut dm, &mut env, 0, merge_msg(&[A], A, EPOCH));
    assert_eq!(dm.dispatchers.get(&A).map(|d| d.state), Some(ComponentState::Working));
    assert_eq!(dm.dispatchers.len(), 1);
}

// dispatcher_manager_test.go:841: a merge of an unknown dispatcher creates nothing.
#[test]
fn ticdc_dispatcher_manager_TestMergeDispatcherNonExistent() {
    let (mut dm, mut env) = owned_manager(None);
    dm_handle(&mut dm, &mut env, 0, merge_msg(&[DispatcherId(99)], M, EPOCH));
    assert!(!dm.dispatchers.contains_key(&M));
}

// dispatcher_manager_test.go:854: a merge of a dispatcher that is not Working creates nothing.
#[test]
fn ticdc_dispatcher_manager_TestMergeDispatcherNotWorking() {
    let (mut dm, mut env) = owned_manager(None);
    working(&mut dm, &mut env, A, span1('a', 'z'));
    dm.dispatchers.get_mut(&A).unwrap().state = ComponentState::Stopped;
    dm_handle(&mut dm, &mut env, 0, merge_msg(&[A], M, EPOCH));
    assert!(!dm.dispatchers.contains_key(&M));
}

// dispatcher_manager_test.go:875: spans that do not touch are not merged.
#[test]
fn ticdc_dispatcher_manager_TestMergeDispatcherNonAdjacent() {
    let (mut dm, mut env) = owned_manager(None);
    working(&mut dm, &mut env, A, span1('a', 'm'));
    working(&mut dm, &mut env, B, span1('n', 'z'));
    dm_handle(&mut dm, &mut env, 0, merge_msg(&[A, B], M, EPOCH));
    assert!(!dm.dispatchers.contains_key(&M));
}

// dispatcher_manager_test.go:903: three adjacent spans merge into one Preparing dispatcher;
// the sources wait for the merge.
#[test]
fn ticdc_dispatcher_manager_TestMergeDispatcherThreeDispatchers() {
    let (mut dm, mut env) = owned_manager(None);
    working(&mut dm, &mut env, A, span1('a', 'm'));
    working(&mut dm, &mut env, B, span1('m', 't'));
    working(&mut dm, &mut env, C, span1('t', 'z'));
    dm_handle(&mut dm, &mut env, 0, merge_msg(&[A, B, C], M, EPOCH));
    let m = dm.dispatchers.get(&M).expect("merged dispatcher");
    assert_eq!(m.state, ComponentState::Preparing);
    assert_eq!((m.span.start, m.span.end), (key('a'), key('z')));
    for s in [A, B, C] {
        assert_eq!(dm.dispatchers[&s].state, ComponentState::WaitingMerge);
    }
}

// dispatcher_manager_test.go:960: the merge commits the merged dispatcher as Initializing
// from the sources' smallest checkpoint (200), and the sources are removed.
#[test]
fn ticdc_dispatcher_manager_TestDoMerge() {
    let (mut dm, mut env) = owned_manager(None);
    working(&mut dm, &mut env, A, span1('a', 'm'));
    working(&mut dm, &mut env, B, span1('m', 'z'));
    dm_feed(&mut dm, &mut env, A, vec![], 300);
    dm_feed(&mut dm, &mut env, B, vec![], 200);
    dm_handle(&mut dm, &mut env, 0, merge_msg(&[A, B], M, EPOCH));
    run_merge_check(&mut dm, &mut env);
    let m = dm.dispatchers.get(&M).expect("merged dispatcher");
    assert_eq!(m.state, ComponentState::Initializing);
    assert_eq!(m.start_ts, 200);
    assert!(!dm.dispatchers.contains_key(&A));
    assert!(!dm.dispatchers.contains_key(&B));
}

// dispatcher_manager_test.go:1017: the merge journal is kept while the merged dispatcher
// is not Working (after its sources are gone) and dropped by the heartbeat once it is.
#[test]
fn ticdc_dispatcher_manager_TestDoMergeKeepsMergeJournalUntilSourcesAreCleaned() {
    let (mut dm, mut env) = owned_manager(None);
    working(&mut dm, &mut env, A, span1('a', 'm'));
    working(&mut dm, &mut env, B, span1('m', 'z'));
    dm_handle(&mut dm, &mut env, 0, merge_msg(&[A, B], M, EPOCH));
    assert!(dm.merge_tasks.contains_key(&M));
    assert_eq!(dm.merge_operator_map.len(), 1);
    run_merge_check(&mut dm, &mut env);
    assert_eq!(dm.merge_operator_map.len(), 1);
    assert!(!dm.dispatchers.contains_key(&A));
    assert!(!dm.dispatchers.contains_key(&B));
    dm.dispatchers.get_mut(&M).expect("merged").state = ComponentState::Working;
    dm.heartbeat(&mut env.ctx(), true);
    assert!(dm.merge_operator_map.is_empty());
}

// dispatcher_manager_test.go:1067: a merge request from an older maintainer epoch is not
// journaled.
#[test]
fn ticdc_dispatcher_manager_TestMergeDispatcherRequestRecvDoesNotTrackStaleMaintainerEpoch() {
    let mut env = Env::new(1);
    let mut dm = dm_on(1);
    dm_handle(&mut dm, &mut env, 2, bootstrap_req(0, None, 2));
    assert_eq!((dm.maintainer_id, dm.maintainer_epoch), (n(2), 2));
    dm_handle(&mut dm, &mut env, 3, merge_msg(&[DispatcherId(31), DispatcherId(32)], DispatcherId(33), 1));
    assert!(dm.merge_operator_map.is_empty());
}

// dispatcher_manager_test.go:1139: a merge request with a zero merged ID is not journaled.
#[test]
fn ticdc_dispatcher_manager_TestTrackMergeOperatorRejectsZeroMergedDispatcherID() {
    let (mut dm, mut env) = owned_manager(None);
    working(&mut dm, &mut env, A, span1('a', 'm'));
    working(&mut dm, &mut env, B, span1('m', 'z'));
    dm_handle(&mut dm, &mut env, 0, merge_msg(&[A, B], DispatcherId(0), EPOCH));
    assert!(dm.merge_operator_map.is_empty());
}

// dispatcher_manager_test.go:1150: three sources merge from their smallest checkpoint (100).
#[test]
fn ticdc_dispatcher_manager_TestDoMergeWithThreeDispatchers() {
    let (mut dm, mut env) = owned_manager(None);
    working(&mut dm, &mut env, A, span1('a', 'm'));
    working(&mut dm, &mut env, B, span1('m', 't'));
    working(&mut dm, &mut env, C, span1('t', 'z'));
    dm_feed(&mut dm, &mut env, A, vec![], 300);
    dm_feed(&mut dm, &mut env, B, vec![], 100);
    dm_feed(&mut dm, &mut env, C, vec![], 200);
    dm_handle(&mut dm, &mut env, 0, merge_msg(&[A, B, C], M, EPOCH));
    run_merge_check(&mut dm, &mut env);
    let m = dm.dispatchers.get(&M).expect("merged dispatcher");
    assert_eq!(m.state, ComponentState::Initializing);
    assert_eq!(m.start_ts, 100);
    for s in [A, B, C] {
        assert!(!dm.dispatchers.contains_key(&s));
    }
}

// dispatcher_manager_test.go:1218: a source gone before the merge check aborts the merge:
// the merged dispatcher is removed, the other source is Working again.
#[test]
fn ticdc_dispatcher_manager_TestDoMergeAbortWhenSourceDispatcherMissing() {
    let (mut dm, mut env) = owned_manager(None);
    working(&mut dm, &mut env, A, span1('a', 'm'));
    working(&mut dm, &mut env, B, span1('m', 'z'));
    dm_handle(&mut dm, &mut env, 0, merge_msg(&[A, B], M, EPOCH));
    assert!(dm.merge_tasks.contains_key(&M));
    dm.dispatchers.remove(&A);
    merge_check_only(&mut dm, &mut env);
    let m = dm.dispatchers.get(&M).expect("merged dispatcher still there");
    assert!(m.try_removing);
    assert_eq!(dm.dispatchers[&B].state, ComponentState::Working);
}

// dispatcher_manager_test.go:1259: a source being removed aborts the merge the same way.
#[test]
fn ticdc_dispatcher_manager_TestDoMergeAbortWhenSourceDispatcherRemoving() {
    let (mut dm, mut env) = owned_manager(None);
    working(&mut dm, &mut env, A, span1('a', 'm'));
    working(&mut dm, &mut env, B, span1('m', 'z'));
    dm_handle(&mut dm, &mut env, 0, merge_msg(&[A, B], M, EPOCH));
    dm.dispatchers.get_mut(&A).unwrap().try_removing = true;
    merge_check_only(&mut dm, &mut env);
    let m = dm.dispatchers.get(&M).expect("merged dispatcher still there");
    assert!(m.try_removing);
    assert_eq!(dm.dispatchers[&B].state, ComponentState::Working);
}

// dispatcher_manager_test.go:1300: aborting a merge whose sources were detached from the
// event collector (WaitingMerge) registers them again as Working.
#[test]
fn ticdc_dispatcher_manager_TestAbortMergeRestoresSourceDispatchersRegistration() {
    let (mut dm, mut env) = owned_manager(None);
    working(&mut dm, &mut env, A, span1('a', 'm'));
    working(&mut dm, &mut env, B, span1('m', 'z'));
    // A row of A not yet durable keeps the merge from committing at its first check.
    dm_feed(&mut dm, &mut env, A, vec![ev_row(10)], 20);
    dm_handle(&mut dm, &mut env, 0, merge_msg(&[A, B], M, EPOCH));
    run_merge_check(&mut dm, &mut env);
    for s in [A, B] {
        let d = &dm.dispatchers[&s];
        assert_eq!(d.state, ComponentState::WaitingMerge);
        assert!(!d.registered, "detached from the event collector");
    }
    // The merge is aborted (its merged dispatcher is being removed).
    dm_handle(&mut dm, &mut env, 0, sched(remove_req(M, span1('a', 'z'), OperatorType::Remove, EPOCH)));
    run_merge_check(&mut dm, &mut env);
    for s in [A, B] {
        let d = &dm.dispatchers[&s];
        assert_eq!(d.state, ComponentState::Working);
        assert!(d.registered, "registered with the event collector again");
    }
}

// dispatcher_manager_test.go:718: a local fence of a redo changefeed's manager whose redo
// components were never published (no bootstrap yet) does not fail, and the close finishes.
#[test]
fn ticdc_dispatcher_manager_TestLocalFenceWithRedoEnabledBeforeRedoSinkInitialized() {
    let mut env = Env::new(1);
    let mut dm = crate::dispatcher::DispatcherManager::new(cf(), n(1), redo_config(), 1);
    assert!(dm.redo.is_some() && !dm.redo_ready());
    dm.local_fence(&mut env.ctx());
    assert!(dm.write_path_closed);
    dm.heartbeat(&mut env.ctx(), false);
    assert!(dm.try_close(&mut env.ctx()), "TryClose completes");
}

// dispatcher_manager_test.go:731 (redo half): on a closed write path the redo trigger is
// not created; that is the write-path-closed outcome (no error response).
#[test]
fn ticdc_dispatcher_manager_TestNewTableTriggerDispatchersReturnFenceErrorWhenWritePathClosed_redo() {
    let mut env = Env::new(1);
    let mut dm = crate::dispatcher::DispatcherManager::new(cf(), n(1), redo_config(), 1);
    dm_handle(&mut dm, &mut env, 0, redo_bootstrap_req(1, None, None, EPOCH));
    dm.write_path_closed = true;
    let (r, o) = dm_handle(&mut dm, &mut env, 0, redo_bootstrap_req(1, None, Some(T), EPOCH));
    assert!(r.is_none(), "{:?}", r);
    assert!(traced(&o, "dispatcher manager write path closed while creating table trigger dispatcher"));
    assert_eq!(dm.redo_trigger_id(), None);
    assert!(dm.dispatchers.is_empty());
}

// dispatcher_manager_test.go:750 (redo half): initialising the redo trigger on a closed
// write path fails as write-path-closed and it does not register with the event collector.
#[test]
fn ticdc_dispatcher_manager_TestInitializeTableTriggerEventDispatcherReturnsFenceErrorWhenWritePathClosed_redo() {
    const TR: DispatcherId = DispatcherId(91);
    let mut env = Env::new(1);
    let mut dm = crate::dispatcher::DispatcherManager::new(cf(), n(1), redo_config(), 1);
    dm_handle(&mut dm, &mut env, 0, redo_bootstrap_req(1, Some(T), Some(TR), EPOCH));
    dm.write_path_closed = true;
    let (r, o) = dm_handle(&mut dm, &mut env, 0, post_bootstrap_req(T, EPOCH));
    assert!(r.is_none(), "{:?}", r);
    assert!(traced(&o, "dispatcher manager write path closed while initializing table trigger event dispatcher"));
    assert!(!dm.dispatchers[&TR].registered);
}
