//! Trigger takeover validation on a reused manager (§15, #5436), bootstrap-response
//! operator filtering, and the fence lock (`MaintainerFenceMu`).

use super::fencing::owned;
use super::harness::*;
use crate::bugs::Bug;
use crate::dispatcher::manager::JournalEntry;
use crate::dispatcher::{DispatcherManager, DispatcherOrchestrator};
use crate::effects::FP_BLOCK_CREATE_DISPATCHER;
use crate::messages::*;
use crate::types::*;

const X: DispatcherId = DispatcherId(1000);
const Y: DispatcherId = DispatcherId(1001);
const Z: DispatcherId = DispatcherId(1002);
const T: DispatcherId = DispatcherId(3000);
const T2: DispatcherId = DispatcherId(3001);
const NEW: Epoch = EPOCH + 1;

fn err_of(r: &Option<Message>) -> Option<ErrorCode> {
    match r {
        Some(Message::MaintainerBootstrapResponse { err, .. }) => err.as_ref().map(|e| e.code),
        other => panic!("expected a bootstrap response, got {:?}", other),
    }
}

// ---------------------------------------------------------------- trigger validation

#[test]
fn mismatched_trigger_is_rejected_before_switching_owner() {
    let (mut dm, mut env) = owned(0, Some(T), Env::new(0));
    let (r, _) = dm_handle(&mut dm, &mut env, 1, bootstrap_req(200, Some(T2), NEW));
    assert_eq!(err_of(&r), Some(ErrorCode::InitTableTriggerDispatcherFailed));
    assert_eq!((dm.maintainer_id, dm.maintainer_epoch), (n(0), EPOCH), "owner unchanged");
    assert_eq!(dm.trigger_id, Some(T));
    assert!(dm.dispatchers.contains_key(&T) && !dm.dispatchers.contains_key(&T2));
    // The same trigger ID is fine.
    let (r, _) = dm_handle(&mut dm, &mut env, 1, bootstrap_req(200, Some(T), NEW));
    assert_eq!(err_of(&r), None);
    assert_eq!((dm.maintainer_id, dm.maintainer_epoch), (n(1), NEW));
}

#[test]
fn bug_replace_mismatched_trigger_replaces_it_in_place() {
    let (mut dm, mut env) = owned(0, Some(T), Env::new(0).with_bug(Bug::ReplaceMismatchedTrigger));
    let old_registered = dm.dispatchers[&T].registered;
    let (r, o) = dm_handle(&mut dm, &mut env, 1, bootstrap_req(200, Some(T2), NEW));
    assert_eq!(err_of(&r), None);
    assert!(traced(&o, "replace mismatched table trigger"));
    assert_eq!(dm.trigger_id, Some(T2));
    // The slot now names the new trigger, but nothing closed the old one: two DDL owners.
    assert!(dm.dispatchers.contains_key(&T2) && dm.dispatchers[&T2].is_trigger);
    let old = &dm.dispatchers[&T];
    assert!(old.is_trigger && !old.try_removing && old.registered == old_registered, "the old trigger keeps running");
    assert!(matches!(r, Some(Message::MaintainerBootstrapResponse { checkpoint_ts: 200, .. })));
    assert_eq!((dm.maintainer_id, dm.maintainer_epoch), (n(1), NEW));
}

#[test]
fn bootstrap_without_trigger_id_is_rejected_when_a_trigger_exists() {
    let (mut dm, mut env) = owned(0, Some(T), Env::new(0));
    let (r, _) = dm_handle(&mut dm, &mut env, 1, bootstrap_req(200, None, NEW));
    assert_eq!(err_of(&r), Some(ErrorCode::InitTableTriggerDispatcherFailed));
    assert_eq!((dm.maintainer_id, dm.maintainer_epoch), (n(0), EPOCH));
}

#[test]
fn bug_accept_nil_trigger_bootstrap_accepts_and_reports_the_old_trigger() {
    let (mut dm, mut env) = owned(0, Some(T), Env::new(0).with_bug(Bug::AcceptNilTriggerBootstrap));
    let (r, _) = dm_handle(&mut dm, &mut env, 1, bootstrap_req(200, None, NEW));
    assert_eq!(err_of(&r), None);
    assert_eq!((dm.maintainer_id, dm.maintainer_epoch), (n(1), NEW));
    assert_eq!(dm.trigger_id, Some(T), "the old maintainer's trigger stays");
    // The response reports the old trigger's start ts as if it were the new maintainer's.
    assert!(matches!(r, Some(Message::MaintainerBootstrapResponse { checkpoint_ts: START, .. })));
}

// ---------------------------------------------------------------- operator filtering

/// A manager on node 2 owned by (node 0, EPOCH) with: X created then being removed
/// (Remove journaled), a Create of Y admitted but not completed, and a Remove of Z
/// whose dispatcher is not there.
fn with_journal(env: Env) -> (DispatcherManager, Env) {
    let (mut dm, mut env) = owned(2, None, env);
    dm_handle(&mut dm, &mut env, 0, sched(create_req(X, TableSpan::full(10), START, OperatorType::Add, EPOCH)));
    dm_handle(&mut dm, &mut env, 0, sched(remove_req(X, TableSpan::full(10), OperatorType::Move, EPOCH)));
    assert!(dm.dispatchers[&X].try_removing);
    dm.current_operator_map.insert(
        Y,
        JournalEntry {
            req: create_req(Y, TableSpan::full(11), START, OperatorType::Add, EPOCH),
            from: n(0),
            epoch: EPOCH,
        },
    );
    dm.current_operator_map.insert(
        Z,
        JournalEntry { req: remove_req(Z, TableSpan::full(12), OperatorType::Remove, EPOCH), from: n(0), epoch: EPOCH },
    );
    (dm, env)
}

fn reported_ops(r: &Option<Message>) -> Vec<(DispatcherId, ScheduleAction)> {
    match r {
        Some(Message::MaintainerBootstrapResponse { operators, .. }) => {
            operators.iter().map(|o| (o.config.dispatcher_id, o.action)).collect()
        }
        other => panic!("{:?}", other),
    }
}

#[test]
fn bootstrap_response_reports_current_owner_operators() {
    let (mut dm, mut env) = with_journal(Env::new(2));
    let (r, _) = dm_handle(&mut dm, &mut env, 0, bootstrap_req(START, None, EPOCH));
    assert_eq!(
        reported_ops(&r),
        vec![(X, ScheduleAction::Remove), (Y, ScheduleAction::Create), (Z, ScheduleAction::Remove)]
    );
}

#[test]
fn bootstrap_response_drops_stale_create_and_keeps_stale_remove_of_reported_dispatcher() {
    let (mut dm, mut env) = with_journal(Env::new(2));
    let (r, _) = dm_handle(&mut dm, &mut env, 1, bootstrap_req(START, None, NEW));
    assert_eq!(
        reported_ops(&r),
        vec![(X, ScheduleAction::Remove)],
        "stale Create Y dropped, stale Remove Z (not reported) dropped"
    );
    let Some(Message::MaintainerBootstrapResponse { spans, .. }) = &r else { unreachable!() };
    // X is reported with its component status (TiCDC's `GetComponentStatus`), not as
    // Stopped: a closing dispatcher keeps its status until `TryClose` succeeds.
    let x = dm.dispatchers[&X].state;
    assert_ne!(x, ComponentState::Stopped);
    assert!(spans.iter().any(|s| s.id == X && s.state == x), "X is reported (closing) with its component status");
}

#[test]
fn bug_drop_stale_remove_operators_drops_it() {
    let (mut dm, mut env) = with_journal(Env::new(2).with_bug(Bug::DropStaleRemoveOperators));
    let (r, _) = dm_handle(&mut dm, &mut env, 1, bootstrap_req(START, None, NEW));
    assert_eq!(reported_ops(&r), vec![]);
}

// ---------------------------------------------------------------- fence lock

/// An orchestrator on n1 owned by n0 (epoch `EPOCH`) whose Create of X is paused by
/// `BlockCreateDispatcher`.
fn paused_create() -> (DispatcherOrchestrator, Env) {
    let mut env = Env::new(1);
    let mut o = DispatcherOrchestrator::new(n(1), 1);
    o.handle_message(&mut env.ctx(), n(0), bootstrap_req(START, None, EPOCH));
    env.take();
    env.fp_on(FP_BLOCK_CREATE_DISPATCHER);
    o.handle_message(&mut env.ctx(), n(0), sched(create_req(X, TableSpan::full(10), START, OperatorType::Add, EPOCH)));
    (o, env)
}

#[test]
fn paused_create_holds_the_fence_lock_and_a_later_bootstrap_waits() {
    let (mut o, mut env) = paused_create();
    let dm = &o.managers[&cf()];
    assert!(dm.fence_locked());
    assert!(!dm.dispatchers.contains_key(&X));
    assert!(dm.current_operator_map.contains_key(&X), "journaled before the failpoint");
    env.take();
    // The new maintainer's bootstrap waits for the lock.
    o.handle_message(&mut env.ctx(), n(2), bootstrap_req(START, None, NEW));
    assert!(env.take().msgs.is_empty());
    assert_eq!(o.managers[&cf()].maintainer_epoch, EPOCH, "owner not switched while the Create is paused");
    o.poll_failpoints(&mut env.ctx());
    assert!(env.take().msgs.is_empty(), "still paused");
    env.fp_off(FP_BLOCK_CREATE_DISPATCHER);
    o.poll_failpoints(&mut env.ctx());
    let out = env.take();
    let dm = &o.managers[&cf()];
    assert!(dm.dispatchers.contains_key(&X), "an admitted Create completes");
    assert!(!dm.fence_locked());
    assert_eq!((dm.maintainer_id, dm.maintainer_epoch), (n(2), NEW));
    let resp: Vec<_> = out.msgs.iter().filter(|e| e.to == n(2)).collect();
    assert_eq!(resp.len(), 1);
    match &resp[0].msg {
        Message::MaintainerBootstrapResponse { spans, operators, err: None, .. } => {
            assert!(spans.iter().any(|s| s.id == X), "the new maintainer learns about X");
            assert!(operators.is_empty(), "the Create finished: no journal entry left");
        }
        m => panic!("{:?}", m),
    }
}

/// A local fence does not take the fence lock, so it can close the write path while a
/// Create is paused; the resumed Create is then refused and stays journaled, as
/// `newEventDispatchers` refuses it in TiCDC (dispatcher_manager.go:566-568).
#[test]
fn paused_create_resumed_after_a_local_fence_creates_no_dispatcher() {
    let (mut o, mut env) = paused_create();
    o.local_fence(&mut env.ctx());
    env.take();
    env.fp_off(FP_BLOCK_CREATE_DISPATCHER);
    o.poll_failpoints(&mut env.ctx());
    let out = env.take();
    let failed: Vec<_> = out
        .observations
        .iter()
        .filter(|o| matches!(o.what, crate::effects::Observation::AssertionFailed { .. }))
        .collect();
    assert!(failed.is_empty(), "{:?}", failed);
    let dm = &o.managers[&cf()];
    assert!(dm.write_path_closed);
    assert!(!dm.dispatchers.contains_key(&X), "no dispatcher on a closed write path");
    assert!(dm.current_operator_map.contains_key(&X), "the add operator stays journaled");
    assert!(!dm.fence_locked(), "the paused handler still releases the lock");
}

/// A post-bootstrap request of an older epoch is dropped under the lock and releases
/// it; `leak-fence-lock-when-fenced` no longer sits on this epoch-fenced return (its
/// TiCDC location is the orchestrator-level `fenced` return, see `local_fence.rs`).
#[test]
fn stale_post_bootstrap_releases_the_lock_with_or_without_the_bug() {
    for env in [Env::new(1), Env::new(1).with_bug(Bug::LeakFenceLockWhenFenced)] {
        let (mut dm, mut env) = owned(1, None, env);
        dm_handle(
            &mut dm,
            &mut env,
            3,
            Message::MaintainerPostBootstrapRequest {
                redo_schemas: vec![],
                cf: cf(),
                table_trigger_event_dispatcher_id: T,
                schemas: vec![],
                maintainer_epoch: EPOCH - 1,
            },
        );
        assert!(!dm.fence_locked());
        dm_handle(&mut dm, &mut env, 0, sched(create_req(X, TableSpan::full(10), START, OperatorType::Add, EPOCH)));
        assert!(dm.dispatchers.contains_key(&X));
    }
}

// ---------------------------------------------------------------- closing watermark

/// The heartbeat that reports a dispatcher Stopped carries the watermark the dispatcher
/// closed with (`getDispatcherStatus` returns `TryClose`'s watermark), so a node's
/// watermark does not skip over a span before the maintainer has seen it stop; the next
/// heartbeat no longer includes it.
#[test]
fn the_stopped_heartbeat_carries_the_closed_dispatchers_watermark() {
    let (mut dm, mut env) = owned(2, None, Env::new(2));
    dm_handle(&mut dm, &mut env, 0, sched(create_req(X, TableSpan::full(10), 100, OperatorType::Add, EPOCH)));
    dm_handle(&mut dm, &mut env, 0, sched(create_req(Y, TableSpan::full(11), 500, OperatorType::Add, EPOCH)));
    dm_handle(&mut dm, &mut env, 0, sched(remove_req(X, TableSpan::full(10), OperatorType::Move, EPOCH)));
    let beat = |dm: &mut DispatcherManager, env: &mut Env| {
        dm.heartbeat(&mut env.ctx(), true);
        let out = env.take();
        out.msgs
            .iter()
            .find_map(|e| match &e.msg {
                Message::HeartBeatRequest { watermark, statuses, .. } => Some((
                    watermark.checkpoint_ts,
                    statuses.iter().any(|s| s.id == X && s.state == ComponentState::Stopped),
                )),
                _ => None,
            })
            .expect("a heartbeat")
    };
    assert_eq!(beat(&mut dm, &mut env), (100, true), "X stops in this heartbeat and still holds its watermark");
    assert!(!dm.dispatchers.contains_key(&X));
    assert_eq!(beat(&mut dm, &mut env), (500, false), "the next heartbeat is without X");
}

// ---------------------------------------------------------------- remove of a missing maintainer

fn remove_maintainer(
    mm: &mut crate::maintainer::manager::MaintainerManager,
    cascade: bool,
) -> Vec<crate::messages::Envelope> {
    let mut env = Env::new(1);
    let req = Message::RemoveMaintainerRequest { cf: cf(), cascade, removed: false, maintainer_epoch: 7 };
    mm.handle_message(&mut env.ctx(), n(0), req, &crate::maintainer::NoSchema);
    env.take().msgs
}

/// `handleRemoveMaintainer`: a non-cascade remove of a maintainer the node does not host
/// is answered Stopped with the request's epoch (a move's origin whose removed report
/// was lost is not waited for forever).
#[test]
fn non_cascade_remove_of_a_missing_maintainer_is_answered_stopped() {
    let mut mm = crate::maintainer::manager::MaintainerManager::new(n(1));
    mm.coordinator = Some(n(0));
    let msgs = remove_maintainer(&mut mm, false);
    let stopped: Vec<MaintainerStatus> = msgs
        .iter()
        .filter(|e| e.to == n(0))
        .flat_map(|e| match &e.msg {
            Message::MaintainerHeartbeat { statuses } => statuses.clone(),
            _ => vec![],
        })
        .collect();
    assert_eq!(stopped.len(), 1);
    assert!(stopped[0].removed && stopped[0].maintainer_epoch == 7);
}

fn heartbeat_statuses(msgs: &[crate::messages::Envelope]) -> Vec<MaintainerStatus> {
    msgs.iter()
        .flat_map(|e| match &e.msg {
            Message::MaintainerHeartbeat { statuses } => statuses.clone(),
            _ => vec![],
        })
        .collect()
}

/// `NewMaintainerForRemove`: the cascade remove of a maintainer the node does not host
/// starts one that sends no bootstrap, closes every dispatcher manager, and reports
/// Stopped once all answered success.
#[test]
fn cascade_remove_of_a_missing_maintainer_closes_every_manager_then_reports_stopped() {
    let mut mm = crate::maintainer::manager::MaintainerManager::new(n(1));
    mm.coordinator = Some(n(0));
    mm.alive = nodes(&[1, 2]);
    let mut msgs = remove_maintainer(&mut mm, true);
    // The close requests go out at removal and again on every period event.
    let mut env = Env::new(1);
    env.now = 5_000;
    mm.maintainers.get_mut(&cf()).unwrap().on_tick(&mut env.ctx(), &crate::maintainer::NoSchema);
    msgs.extend(env.take().msgs);
    assert!(!msgs.iter().any(|e| matches!(e.msg, Message::MaintainerBootstrapRequest { .. })), "it never bootstraps");
    let mut closes: Vec<NodeId> = msgs
        .iter()
        .filter(|e| matches!(e.msg, Message::MaintainerCloseRequest { maintainer_epoch: 7, .. }))
        .map(|e| e.to)
        .collect();
    closes.sort();
    assert_eq!(closes, vec![n(1), n(1), n(2), n(2)], "one round at removal, one at the tick");
    assert!(heartbeat_statuses(&msgs).iter().all(|s| !s.removed), "not stopped before the managers closed");
    for from in [1, 2] {
        let resp = Message::MaintainerCloseResponse { cf: cf(), success: true, maintainer_epoch: 7 };
        mm.handle_message(&mut env.ctx(), n(from), resp, &crate::maintainer::NoSchema);
    }
    mm.send_heartbeat(&mut env.ctx());
    let st = heartbeat_statuses(&env.take().msgs);
    assert!(st.iter().any(|s| s.removed && s.maintainer_epoch == 7), "{:?}", st);
}

/// `onDispatchMaintainerRequest`: a capture takes add/remove maintainer requests only
/// from its current coordinator; an old owner that has not noticed its lost session yet
/// cannot place a second maintainer generation.
#[test]
fn maintainer_requests_from_a_non_current_coordinator_are_ignored() {
    use crate::maintainer::manager::MaintainerManager;
    let mut env = Env::new(1);
    let mut mm = MaintainerManager::new(n(1));
    mm.alive = nodes(&[0, 1, 2]);
    mm.coordinator = Some(n(2));
    let add = |epoch| Message::AddMaintainerRequest {
        cf: cf(),
        config: Default::default(),
        checkpoint_ts: START,
        is_new_changefeed: false,
        maintainer_epoch: epoch,
    };
    mm.handle_message(&mut env.ctx(), n(0), add(EPOCH), &crate::maintainer::NoSchema);
    let out = env.take();
    assert!(mm.maintainers.is_empty(), "the old owner's request placed a maintainer");
    assert!(traced(&out, "ignore maintainer request from non-current coordinator"));
    mm.handle_message(&mut env.ctx(), n(2), add(EPOCH + 1), &crate::maintainer::NoSchema);
    assert_eq!(mm.maintainers.len(), 1, "the current coordinator's request is taken");
}
