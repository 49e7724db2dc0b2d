//! `downstreamadapter/dispatchermanager/helper_test.go` at b813e76f9: the dispatcher
//! manager's admission of maintainer messages (owner and epoch fencing).

use crate::dispatcher::DispatcherManager;
use crate::messages::*;
use crate::tests::harness::*;
use crate::types::*;

const X: DispatcherId = DispatcherId(1000);

/// A manager whose owner meta is `(maintainer, epoch)` (`meta.maintainerID/Epoch`).
fn with_meta(maintainer: NodeId, epoch: Epoch) -> (DispatcherManager, Env) {
    let mut dm = dm_on(1);
    dm.maintainer_id = maintainer;
    dm.maintainer_epoch = epoch;
    (dm, Env::new(1))
}

fn create(epoch: Epoch) -> Message {
    sched(create_req(X, TableSpan::full(1), 1, OperatorType::Add, epoch))
}

// helper_test.go:149: a Remove for a dispatcher this manager does not have is let through,
// so the manager answers Stopped and the maintainer converges. (The owner is node 1 in
// compatibility mode so that the answer has somewhere to go; Go leaves it empty.)
#[test]
fn ticdc_helper_TestPreCheckForSchedulerHandler_RemoveAllowedWhenDispatcherMissing() {
    let (mut dm, mut env) = with_meta(n(1), 0);
    let (_, o) = dm_handle(&mut dm, &mut env, 1, sched(remove_req(X, TableSpan::full(1), OperatorType::Remove, 0)));
    let stopped = o.msgs.iter().any(|e| {
        e.to == n(1)
            && matches!(&e.msg, Message::HeartBeatRequest { statuses, .. }
                if statuses.iter().any(|s| s.id == X && s.state == ComponentState::Stopped))
    });
    assert!(stopped, "{:?}", o.msgs);
}

// helper_test.go:179: a Create for a dispatcher that exists is dropped as a no-op.
#[test]
fn ticdc_helper_TestPreCheckForSchedulerHandler_CreateSkippedWhenDispatcherExists() {
    let (mut dm, mut env) = with_meta(n(1), 0);
    dm_handle(&mut dm, &mut env, 1, create(0));
    assert!(dm.dispatchers.contains_key(&X));
    let seq = dm.seq;
    let (_, o) = dm_handle(&mut dm, &mut env, 1, create(0));
    assert_eq!(dm.seq, seq, "no second dispatcher");
    assert!(dm.current_operator_map.is_empty(), "not journaled");
    assert!(!traced(&o, "store current working add operator"));
}

// helper_test.go:208: schedule requests need the owner's exact epoch (an older epoch and
// epoch 0 are refused by an epoch-2 owner); a compatibility owner (epoch 0) takes epoch 0
// from itself; a journal entry of an older owner is dropped when the current one's
// request comes.
#[test]
fn ticdc_helper_TestPreCheckForSchedulerHandler_MaintainerEpochFence() {
    let current = n(2);
    let old = n(3);
    let (mut dm, mut env) = with_meta(current, 2);
    let (_, o) = dm_handle(&mut dm, &mut env, old.0, create(1));
    assert!(traced(&o, "drop stale schedule request"));
    let (_, o) = dm_handle(&mut dm, &mut env, current.0, create(0));
    assert!(traced(&o, "drop stale schedule request"));
    assert!(dm.dispatchers.is_empty());
    let (_, o) = dm_handle(&mut dm, &mut env, current.0, create(2));
    assert!(!traced(&o, "drop stale schedule request"));
    assert!(dm.dispatchers.contains_key(&X));

    let (mut compat, mut env) = with_meta(current, 0);
    dm_handle(&mut compat, &mut env, current.0, create(0));
    assert!(compat.dispatchers.contains_key(&X));

    // A journal entry left by the old owner.
    let (mut dm, mut env) = with_meta(current, 2);
    env.fp_on(crate::effects::FP_BLOCK_CREATE_DISPATCHER);
    let old_req = create_req(X, TableSpan::full(1), 1, OperatorType::Add, 1);
    dm.current_operator_map.insert(X, crate::dispatcher::manager::JournalEntry { req: old_req, from: old, epoch: 1 });
    let (_, o) = dm_handle(&mut dm, &mut env, current.0, create(2));
    assert!(!traced(&o, "drop stale schedule request"), "the current owner's request goes on");
    let e = dm.current_operator_map.get(&X).expect("the current request is journaled");
    assert_eq!((e.from, e.epoch), (current, 2), "the old owner's entry is gone");
}

// helper_test.go:259: an epoch-2 owner cannot be replaced by epoch 0, can be by epoch 3
// (the check alone changes nothing); a compatibility owner is replaced by another at
// epoch 0.
#[test]
fn ticdc_helper_TestDispatcherManagerTryUpdateMaintainerEpoch() {
    let current = n(2);
    let (mut strict, mut env) = with_meta(current, 2);
    {
        let ctx = env.ctx();
        assert!(!strict.can_update_maintainer(&ctx, current, 0));
        assert!(strict.can_update_maintainer(&ctx, n(4), 3));
    }
    assert_eq!((strict.maintainer_id, strict.maintainer_epoch), (current, 2));
    // `TryUpdateMaintainer(current, 0)` is the bootstrap's owner switch: refused.
    let (r, o) = dm_handle(&mut strict, &mut env, current.0, bootstrap_req(1, None, 0));
    assert!(r.is_none() && traced(&o, "reject stale bootstrap"));
    assert_eq!((strict.maintainer_id, strict.maintainer_epoch), (current, 2));

    let (mut compat, mut env) = with_meta(n(3), 0);
    let (r, _) = dm_handle(&mut compat, &mut env, 4, bootstrap_req(1, None, 0));
    assert!(matches!(r, Some(Message::MaintainerBootstrapResponse { err: None, .. })), "{:?}", r);
    assert_eq!((compat.maintainer_id, compat.maintainer_epoch), (n(4), 0));
}

// helper_test.go:284: heartbeat responses are admitted only from the owner at its epoch;
// epoch 0 only by a compatibility owner.
#[test]
fn ticdc_helper_TestHeartBeatResponseAllowedByMaintainerEpoch() {
    let current = n(2);
    let (strict, mut env) = with_meta(current, 2);
    let ctx = env.ctx();
    assert!(!strict.request_allowed(&ctx, n(3), 1));
    assert!(!strict.request_allowed(&ctx, current, 0));
    assert!(strict.request_allowed(&ctx, current, 2));
    let (compat, _) = with_meta(n(5), 0);
    assert!(compat.request_allowed(&ctx, n(5), 0));
}

// helper_test.go:337: a stale heartbeat response (with a Pass for all dispatchers) is
// dropped without effect.
#[test]
fn ticdc_helper_TestHeartBeatResponseHandlerDropsStaleMaintainerEpoch() {
    let (mut dm, mut env) = with_meta(n(2), 2);
    let msg = Message::HeartBeatResponse {
        mode: Mode::Default,
        cf: cf(),
        statuses: vec![DispatcherStatus {
            influenced: InfluencedDispatchers::Normal(vec![X]),
            action: Some(DispatcherAction { action: ActionKind::Pass, commit_ts: 0, is_sync_point: false }),
            ack: None,
            ignored_block_status: None,
        }],
        maintainer_epoch: 1,
    };
    let (r, o) = dm_handle(&mut dm, &mut env, 3, msg);
    assert!(r.is_none());
    assert!(traced(&o, "drop stale heartbeat response"));
    assert!(o.msgs.is_empty());
}

// helper_test.go:436: a manager of a redo changefeed has its redo components but is not
// redo-ready until they are published (the end of the first bootstrap's handling).
#[test]
fn ticdc_helper_TestDispatcherManagerIsRedoReadyRequiresPublication() {
    let mut env = Env::new(1);
    let mut dm = crate::dispatcher::DispatcherManager::new(cf(), n(1), super::support::redo_config(), 1);
    assert!(dm.redo.is_some(), "redo enabled");
    assert!(!dm.redo_ready());
    dm_handle(&mut dm, &mut env, 0, super::support::redo_bootstrap_req(1, None, None, EPOCH));
    assert!(dm.redo_ready());
}

const TR: DispatcherId = DispatcherId(1001);

/// A redo manager with a running redo meta, its owner meta then set to `(maintainer, epoch)`.
fn redo_with_meta(maintainer: NodeId, epoch: Epoch) -> (DispatcherManager, Env) {
    let (mut dm, env) = super::support::redo_meta_running(100, TR, vec![]);
    dm.maintainer_id = maintainer;
    dm.maintainer_epoch = epoch;
    (dm, env)
}

fn redo_meta(epoch: Epoch) -> Message {
    Message::RedoMetaMessage { cf: cf(), checkpoint_ts: 150, resolved_ts: 200, maintainer_epoch: epoch }
}

fn redo_forward(ts: Ts, epoch: Epoch) -> Message {
    Message::RedoResolvedTsForwardMessage { cf: cf(), resolved_ts: ts, maintainer_epoch: epoch }
}

// helper_test.go:370: an epoch-2 owner refuses the redo meta and forward messages of an
// older maintainer at epoch 1 and takes the current one's; a compatibility owner (epoch 0)
// takes its own epoch-0 redo meta. (Admission is seen through its effect: the meta
// flushed, the redo global ts.)
#[test]
fn ticdc_helper_TestRedoControlMessagesAllowedByMaintainerEpoch() {
    let (current, old) = (n(2), n(3));
    let (mut dm, mut env) = redo_with_meta(current, 2);
    dm_handle(&mut dm, &mut env, old.0, redo_meta(1));
    assert_eq!(super::support::redo_meta_tick(&mut dm, &mut env), None, "old maintainer refused");
    dm_handle(&mut dm, &mut env, current.0, redo_meta(2));
    assert_eq!(super::support::redo_meta_tick(&mut dm, &mut env).map(|m| m.resolved_ts), Some(200));
    dm_handle(&mut dm, &mut env, old.0, redo_forward(200, 1));
    assert_eq!(dm.redo.as_ref().unwrap().global_ts, 0, "old maintainer refused");
    dm_handle(&mut dm, &mut env, current.0, redo_forward(200, 2));
    assert_eq!(dm.redo.as_ref().unwrap().global_ts, 200);

    let compat = n(4);
    let (mut dm, mut env) = redo_with_meta(compat, 0);
    dm_handle(&mut dm, &mut env, compat.0, redo_meta(0));
    assert_eq!(super::support::redo_meta_tick(&mut dm, &mut env).map(|m| m.resolved_ts), Some(200));
}

// helper_test.go:408: with the redo global ts at 50, an older maintainer's forward of 100
// leaves it at 50; the current maintainer's forward of 120 raises it to 120.
#[test]
fn ticdc_helper_TestRedoResolvedTsForwardMessageHandlerDropsStaleMaintainerEpoch() {
    let (current, old) = (n(2), n(3));
    let (mut dm, mut env) = redo_with_meta(current, 2);
    dm.redo.as_mut().unwrap().global_ts = 50;
    dm_handle(&mut dm, &mut env, old.0, redo_forward(100, 1));
    assert_eq!(dm.redo.as_ref().unwrap().global_ts, 50);
    dm_handle(&mut dm, &mut env, current.0, redo_forward(120, 2));
    assert_eq!(dm.redo.as_ref().unwrap().global_ts, 120);
}
