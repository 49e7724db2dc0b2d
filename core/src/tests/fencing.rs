//! Epoch fencing in the dispatcher manager (§11) for every control message, each with
//! the `no-epoch-fencing` bug letting it through; orchestrator close tombstones.

use super::harness::*;
use crate::bugs::Bug;
use crate::dispatcher::{DispatcherManager, DispatcherOrchestrator};
use crate::effects::{Observation, Out};
use crate::messages::*;
use crate::types::*;
use crate::upstream::*;

const X: DispatcherId = DispatcherId(1000);
const A: DispatcherId = DispatcherId(2000);
const B: DispatcherId = DispatcherId(2001);
const M: DispatcherId = DispatcherId(2002);
const T: DispatcherId = DispatcherId(3000);
const STALE: Epoch = EPOCH - 1;

/// A manager on `node` owned by the maintainer on node 0 at [`EPOCH`].
pub fn owned(node: u32, trigger: Option<DispatcherId>, env: Env) -> (DispatcherManager, Env) {
    let mut env = env;
    let mut dm = dm_on(node);
    let (r, _) = dm_handle(&mut dm, &mut env, 0, bootstrap_req(START, trigger, EPOCH));
    assert!(matches!(r, Some(Message::MaintainerBootstrapResponse { err: None, .. })), "{:?}", r);
    assert_eq!((dm.maintainer_id, dm.maintainer_epoch), (n(0), EPOCH));
    (dm, env)
}

fn create(
    dm: &mut DispatcherManager,
    env: &mut Env,
    from: u32,
    id: DispatcherId,
    span: TableSpan,
    epoch: Epoch,
) -> Out {
    dm_handle(dm, env, from, sched(create_req(id, span, START, OperatorType::Add, epoch))).1
}

pub fn ddl_event(ts: Ts, blocked: InfluencedTables) -> DdlEvent {
    DdlEvent {
        commit_ts: ts,
        kind: DdlKind::AddColumn,
        schema_id: SCHEMA,
        schema_name: "db1".into(),
        table_id: 10,
        table_name: "t10".into(),
        query: "ALTER".into(),
        blocked_tables: blocked,
        need_dropped_tables: None,
        need_added_tables: vec![],
        updated_schemas: vec![],
    }
}

// ---------------------------------------------------------------- ScheduleDispatcherRequest

#[test]
fn create_from_stale_epoch_or_other_node_is_dropped() {
    let (mut dm, mut env) = owned(2, None, Env::new(2));
    let o = create(&mut dm, &mut env, 0, X, TableSpan::full(10), STALE);
    assert!(traced(&o, "drop stale schedule request"));
    create(&mut dm, &mut env, 1, X, TableSpan::full(10), EPOCH);
    create(&mut dm, &mut env, 0, X, TableSpan::full(10), 0);
    assert!(dm.dispatchers.is_empty());
    assert!(dm.current_operator_map.is_empty(), "a dropped request is not journaled");
    create(&mut dm, &mut env, 0, X, TableSpan::full(10), EPOCH);
    assert!(dm.dispatchers.contains_key(&X));
    assert_eq!(dm.seq, 1);
}

#[test]
fn bug_no_epoch_fencing_lets_a_stale_create_through() {
    let (mut dm, mut env) = owned(2, None, Env::new(2).with_bug(Bug::NoEpochFencing));
    let o = create(&mut dm, &mut env, 1, X, TableSpan::full(10), STALE);
    assert!(dm.dispatchers.contains_key(&X));
    // The epoch-fencing checker sees the stale apply as a typed observation, placed before
    // the trace line that tells it, and the new dispatcher as a placement change.
    let stale = o.observations.iter().find_map(|ob| match &ob.what {
        Observation::ControlFromOlderEpochApplied { epoch, current_epoch, .. } => {
            Some((ob.before_trace, *epoch, *current_epoch))
        }
        _ => None,
    });
    let (at, epoch, current) = stale.expect("observed");
    assert_eq!((epoch, current), (STALE, EPOCH));
    assert_eq!(o.trace[at].kind, "applied control message from older epoch");
    assert!(o.observations.iter().any(|ob| ob.what == Observation::DispatchersChanged));
}

fn remove_x(fencing_bug: bool, epoch: Epoch) -> bool {
    let env = if fencing_bug { Env::new(2).with_bug(Bug::NoEpochFencing) } else { Env::new(2) };
    let (mut dm, mut env) = owned(2, None, env);
    create(&mut dm, &mut env, 0, X, TableSpan::full(10), EPOCH);
    dm_handle(&mut dm, &mut env, 0, sched(remove_req(X, TableSpan::full(10), OperatorType::Remove, epoch)));
    dm.dispatchers[&X].try_removing
}

#[test]
fn remove_from_stale_epoch_is_dropped() {
    assert!(!remove_x(false, STALE));
    assert!(remove_x(false, EPOCH));
    assert!(remove_x(true, STALE), "no-epoch-fencing");
}

// ---------------------------------------------------------------- HeartBeatResponse

/// X waits on a two-table DDL at 200; returns whether a Pass with `epoch` released it.
fn pass_x(env: Env, epoch: Epoch) -> (bool, Out) {
    let (mut dm, mut env) = owned(2, None, env);
    create(&mut dm, &mut env, 0, X, TableSpan::full(10), EPOCH);
    let o = dm_feed(&mut dm, &mut env, X, vec![UpstreamEvent::Ddl(ddl_event(200, normal(&[10, 11])))], 200);
    assert!(o.msgs.iter().any(|e| matches!(&e.msg, Message::BlockStatusRequest { statuses, .. } if statuses[0].state.stage == BlockStage::Waiting)));
    assert!(dm.dispatchers[&X].block.is_some());
    let pass = DispatcherStatus {
        influenced: InfluencedDispatchers::Normal(vec![X]),
        action: Some(DispatcherAction { action: ActionKind::Pass, commit_ts: 200, is_sync_point: false }),
        ack: None,
        ignored_block_status: None,
    };
    let (_, o) = dm_handle(
        &mut dm,
        &mut env,
        0,
        Message::HeartBeatResponse { mode: Mode::Default, cf: cf(), statuses: vec![pass], maintainer_epoch: epoch },
    );
    (dm.dispatchers[&X].block.is_none(), o)
}

#[test]
fn heartbeat_response_from_stale_epoch_is_dropped() {
    let (released, o) = pass_x(Env::new(2), STALE);
    assert!(!released);
    assert!(traced(&o, "drop stale heartbeat response"));
    let (released, o) = pass_x(Env::new(2), EPOCH);
    assert!(released);
    assert!(o.msgs.iter().any(|e| matches!(&e.msg, Message::BlockStatusRequest { statuses, .. } if statuses[0].state.stage == BlockStage::Done)), "DONE reported");
    let (released, _) = pass_x(Env::new(2).with_bug(Bug::NoEpochFencing), STALE);
    assert!(released, "no-epoch-fencing");
}

// ---------------------------------------------------------------- MergeDispatcherRequest

fn merge_with(env: Env, epoch: Epoch) -> DispatcherManager {
    let (mut dm, mut env) = owned(2, None, env);
    let (ha, hb) = halves(10);
    create(&mut dm, &mut env, 0, A, ha, EPOCH);
    create(&mut dm, &mut env, 0, B, hb, EPOCH);
    dm_feed(&mut dm, &mut env, A, vec![], 150);
    dm_feed(&mut dm, &mut env, B, vec![], 150);
    assert_eq!(dm.dispatchers[&A].state, ComponentState::Working);
    dm_handle(&mut dm, &mut env, 0, Message::MergeDispatcherRequest { cf: cf(), req: merge_req(&[A, B], M, epoch) });
    dm
}

#[test]
fn merge_request_from_stale_epoch_is_dropped() {
    let dm = merge_with(Env::new(2), STALE);
    assert!(!dm.dispatchers.contains_key(&M));
    assert!(dm.merge_operator_map.is_empty(), "not journaled");
    assert_eq!(dm.dispatchers[&A].state, ComponentState::Working);
    let dm = merge_with(Env::new(2), EPOCH);
    assert_eq!(dm.dispatchers[&M].state, ComponentState::Preparing);
    assert_eq!(dm.dispatchers[&A].state, ComponentState::WaitingMerge);
    assert!(dm.merge_operator_map.contains_key(&M));
    let dm = merge_with(Env::new(2).with_bug(Bug::NoEpochFencing), STALE);
    assert!(dm.dispatchers.contains_key(&M), "no-epoch-fencing");
}

// ---------------------------------------------------------------- MaintainerPostBootstrapRequest

fn post_bootstrap(env: Env, from: u32, epoch: Epoch) -> (Option<Message>, bool) {
    let (mut dm, mut env) = owned(0, Some(T), env);
    assert!(!dm.dispatchers[&T].registered, "the trigger waits for post-bootstrap");
    let (r, _) = dm_handle(
        &mut dm,
        &mut env,
        from,
        Message::MaintainerPostBootstrapRequest {
            redo_schemas: vec![],
            cf: cf(),
            table_trigger_event_dispatcher_id: T,
            schemas: vec![],
            maintainer_epoch: epoch,
        },
    );
    (r, dm.dispatchers[&T].registered)
}

#[test]
fn post_bootstrap_from_stale_owner_is_dropped() {
    assert_eq!(post_bootstrap(Env::new(0), 0, STALE), (None, false));
    assert_eq!(post_bootstrap(Env::new(0), 1, EPOCH), (None, false));
    let (r, registered) = post_bootstrap(Env::new(0), 0, EPOCH);
    assert!(registered);
    assert!(matches!(r, Some(Message::MaintainerPostBootstrapResponse { err: None, maintainer_epoch: EPOCH, .. })));
    assert!(post_bootstrap(Env::new(0).with_bug(Bug::NoEpochFencing), 1, STALE).1, "no-epoch-fencing");
}

// ---------------------------------------------------------------- MaintainerCloseRequest

/// One close request; returns the reply and whether the close started (write path closed).
fn close(env: Env, from: u32, epoch: Epoch) -> (Option<Message>, bool) {
    let (mut dm, mut env) = owned(2, None, env);
    create(&mut dm, &mut env, 0, X, TableSpan::full(10), EPOCH);
    let (r, _) = dm_handle(
        &mut dm,
        &mut env,
        from,
        Message::MaintainerCloseRequest { cf: cf(), removed: false, maintainer_epoch: epoch },
    );
    (r, dm.write_path_closed)
}

#[test]
fn close_from_stale_owner_is_answered_success_without_closing() {
    let (r, closing) = close(Env::new(2), 0, STALE);
    assert!(matches!(r, Some(Message::MaintainerCloseResponse { success: true, maintainer_epoch: STALE, .. })));
    assert!(!closing);
    // The owner's first request starts the asynchronous close and is answered false.
    let (r, closing) = close(Env::new(2), 0, EPOCH);
    assert!(matches!(r, Some(Message::MaintainerCloseResponse { success: false, .. })));
    assert!(closing);
    assert!(close(Env::new(2).with_bug(Bug::NoEpochFencing), 1, STALE).1, "no-epoch-fencing");
}

#[test]
fn close_is_asynchronous_and_the_manager_stays_until_asked_again() {
    let (mut dm, mut env) = owned(2, None, Env::new(2));
    create(&mut dm, &mut env, 0, X, TableSpan::full(10), EPOCH);
    let req = || Message::MaintainerCloseRequest { cf: cf(), removed: false, maintainer_epoch: EPOCH };
    let (r, out) = dm_handle(&mut dm, &mut env, 0, req());
    assert!(matches!(r, Some(Message::MaintainerCloseResponse { success: false, .. })));
    assert!(traced(&out, "stopping dispatcher manager write path"));
    assert!(dm.write_path_closed && dm.dispatchers.is_empty() && !dm.closed);
    // Still closing: asked again, still false; it reports nothing any more.
    let (r, _) = dm_handle(&mut dm, &mut env, 0, req());
    assert!(matches!(r, Some(Message::MaintainerCloseResponse { success: false, .. })));
    env.now += 1_000;
    dm.heartbeat(&mut env.ctx(), true);
    let out = env.take();
    assert!(traced(&out, "event dispatcher manager closed"));
    assert!(out.msgs.is_empty(), "no heartbeat from a closed write path");
    assert!(dm.close_finished && !dm.closed);
    let (r, out) = dm_handle(&mut dm, &mut env, 0, req());
    assert!(matches!(r, Some(Message::MaintainerCloseResponse { success: true, .. })));
    assert!(traced(&out, "dispatcher manager closed"));
    assert!(dm.closed);
}

// ---------------------------------------------------------------- MaintainerBootstrapRequest

#[test]
fn bootstrap_from_older_epoch_or_same_epoch_other_node_is_rejected() {
    let (mut dm, mut env) = owned(2, None, Env::new(2));
    let (r, o) = dm_handle(&mut dm, &mut env, 0, bootstrap_req(START, None, STALE));
    assert!(r.is_none());
    assert!(traced(&o, "reject stale bootstrap"));
    let (r, _) = dm_handle(&mut dm, &mut env, 1, bootstrap_req(START, None, EPOCH));
    assert!(r.is_none(), "equal epoch from another node");
    let (r, _) = dm_handle(&mut dm, &mut env, 1, bootstrap_req(START, None, 0));
    assert!(r.is_none(), "epoch 0 after a non-zero epoch");
    assert_eq!((dm.maintainer_id, dm.maintainer_epoch), (n(0), EPOCH));
    // The same owner may re-bootstrap; a newer epoch takes over.
    let (r, _) = dm_handle(&mut dm, &mut env, 0, bootstrap_req(START, None, EPOCH));
    assert!(matches!(r, Some(Message::MaintainerBootstrapResponse { err: None, .. })));
    let (r, _) = dm_handle(&mut dm, &mut env, 1, bootstrap_req(START, None, EPOCH + 1));
    assert!(
        matches!(r, Some(Message::MaintainerBootstrapResponse { err: None, maintainer_epoch, .. }) if maintainer_epoch == EPOCH + 1)
    );
    assert_eq!((dm.maintainer_id, dm.maintainer_epoch), (n(1), EPOCH + 1));
}

#[test]
fn bug_no_epoch_fencing_lets_an_older_bootstrap_take_over() {
    let (mut dm, mut env) = owned(2, None, Env::new(2).with_bug(Bug::NoEpochFencing));
    let (r, _) = dm_handle(&mut dm, &mut env, 1, bootstrap_req(START, None, STALE));
    assert!(r.is_some());
    assert_eq!((dm.maintainer_id, dm.maintainer_epoch), (n(1), STALE));
}

// ---------------------------------------------------------------- orchestrator tombstones

fn orch_handle(o: &mut DispatcherOrchestrator, env: &mut Env, from: u32, msg: Message) -> Out {
    env.node = o.node;
    o.handle_message(&mut env.ctx(), n(from), msg);
    env.take()
}

fn closed_orchestrator(env: Env) -> (DispatcherOrchestrator, Env) {
    let mut env = env;
    let mut o = DispatcherOrchestrator::new(n(2), 1);
    let out = orch_handle(&mut o, &mut env, 0, bootstrap_req(START, None, EPOCH));
    assert!(out.msgs.iter().any(|e| e.to == n(0) && matches!(e.msg, Message::MaintainerBootstrapResponse { .. })));
    let close = || Message::MaintainerCloseRequest { cf: cf(), removed: false, maintainer_epoch: EPOCH };
    let out = orch_handle(&mut o, &mut env, 0, close());
    assert!(out.msgs.iter().any(|e| matches!(e.msg, Message::MaintainerCloseResponse { success: false, .. })));
    assert!(o.managers.contains_key(&cf()), "kept while its close runs");
    env.now += 1_000;
    o.managers.get_mut(&cf()).unwrap().heartbeat(&mut env.ctx(), true);
    env.take();
    let out = orch_handle(&mut o, &mut env, 0, close());
    assert!(out.msgs.iter().any(|e| matches!(e.msg, Message::MaintainerCloseResponse { success: true, .. })));
    assert!(o.managers.is_empty());
    assert_eq!(o.closed_maintainer_epochs.get(&cf()), Some(&EPOCH));
    (o, env)
}

#[test]
fn bootstrap_of_a_closed_epoch_does_not_recreate_the_manager() {
    let (mut o, mut env) = closed_orchestrator(Env::new(2));
    for e in [EPOCH, STALE] {
        let out = orch_handle(&mut o, &mut env, 0, bootstrap_req(START, None, e));
        assert!(o.managers.is_empty(), "epoch {}", e);
        assert!(out.msgs.is_empty());
        assert!(traced(&out, "ignore bootstrap of closed generation"));
    }
    // A close for a manager that no longer exists is answered success.
    let out = orch_handle(
        &mut o,
        &mut env,
        0,
        Message::MaintainerCloseRequest { cf: cf(), removed: false, maintainer_epoch: EPOCH },
    );
    assert!(out.msgs.iter().any(|e| matches!(e.msg, Message::MaintainerCloseResponse { success: true, .. })));
    // A newer generation creates a fresh manager.
    let out = orch_handle(&mut o, &mut env, 1, bootstrap_req(START, None, EPOCH + 1));
    assert!(o.managers.contains_key(&cf()));
    assert!(out
        .msgs
        .iter()
        .any(|e| e.to == n(1) && matches!(e.msg, Message::MaintainerBootstrapResponse { err: None, .. })));
}

/// A close for a changefeed that has no manager on the capture still records the
/// closed generation (`recordClosedMaintainerEpochLocked`): a late bootstrap of it (or
/// of an older one) cannot create a manager afterwards; a newer one can.
#[test]
fn close_without_a_manager_leaves_a_tombstone() {
    let mut env = Env::new(2);
    let mut o = DispatcherOrchestrator::new(n(2), 1);
    let out = orch_handle(
        &mut o,
        &mut env,
        0,
        Message::MaintainerCloseRequest { cf: cf(), removed: false, maintainer_epoch: EPOCH },
    );
    assert!(out.msgs.iter().any(|e| matches!(e.msg, Message::MaintainerCloseResponse { success: true, .. })));
    assert_eq!(o.closed_maintainer_epochs.get(&cf()), Some(&EPOCH));
    // An older close does not move the tombstone backwards; epoch 0 without removal leaves none.
    orch_handle(
        &mut o,
        &mut env,
        0,
        Message::MaintainerCloseRequest { cf: cf(), removed: false, maintainer_epoch: STALE },
    );
    assert_eq!(o.closed_maintainer_epochs.get(&cf()), Some(&EPOCH));
    let mut fresh = DispatcherOrchestrator::new(n(2), 2);
    orch_handle(
        &mut fresh,
        &mut env,
        0,
        Message::MaintainerCloseRequest { cf: cf(), removed: false, maintainer_epoch: 0 },
    );
    assert!(fresh.closed_maintainer_epochs.is_empty());
    let out = orch_handle(&mut o, &mut env, 0, bootstrap_req(START, None, EPOCH));
    assert!(o.managers.is_empty());
    assert!(traced(&out, "ignore bootstrap of closed generation"));
    orch_handle(&mut o, &mut env, 1, bootstrap_req(START, None, EPOCH + 1));
    assert!(o.managers.contains_key(&cf()));
}

#[test]
fn bug_no_epoch_fencing_recreates_a_closed_manager() {
    let (mut o, mut env) = closed_orchestrator(Env::new(2).with_bug(Bug::NoEpochFencing));
    orch_handle(&mut o, &mut env, 0, bootstrap_req(START, None, EPOCH));
    assert!(o.managers.contains_key(&cf()));
}

// ---------------------------------------------------------------- write path closed

/// A manager on node 2 (no trigger) owned by node 0's maintainer, whose close has
/// started; then the changefeed's new maintainer (node 2, newer epoch) bootstraps it
/// with a table trigger to create.
fn trigger_bootstrap_on_closing_manager(env: Env) -> (DispatcherManager, Env, Option<Message>, Out) {
    let (mut dm, mut env) = owned(2, None, env);
    create(&mut dm, &mut env, 0, X, TableSpan::full(10), EPOCH);
    let (r, _) = dm_handle(
        &mut dm,
        &mut env,
        0,
        Message::MaintainerCloseRequest { cf: cf(), removed: false, maintainer_epoch: EPOCH },
    );
    assert!(matches!(r, Some(Message::MaintainerCloseResponse { success: false, .. })));
    let (r, out) = dm_handle(&mut dm, &mut env, 2, bootstrap_req(START, Some(T), EPOCH + 1));
    (dm, env, r, out)
}

#[test]
fn trigger_creation_on_a_closed_write_path_is_a_clean_stop() {
    let (dm, _, r, out) = trigger_bootstrap_on_closing_manager(Env::new(2));
    assert!(r.is_none(), "no response, no error: {:?}", r);
    assert!(traced(&out, "dispatcher manager write path closed while creating table trigger dispatcher"));
    assert_eq!(dm.trigger_id, None);
    assert!(dm.dispatchers.is_empty());
    // The owner was updated before the trigger step (TryUpdateMaintainer).
    assert_eq!((dm.maintainer_id, dm.maintainer_epoch), (n(2), EPOCH + 1));
}

#[test]
fn bug_write_path_closed_is_error_reports_it_to_the_maintainer() {
    let (dm, _, r, out) = trigger_bootstrap_on_closing_manager(Env::new(2).with_bug(Bug::WritePathClosedIsError));
    match r {
        Some(Message::MaintainerBootstrapResponse { err: Some(e), maintainer_epoch, .. }) => {
            assert_eq!(e.code, ErrorCode::DispatcherManagerWritePathClosed);
            assert!(!e.code.fails_changefeed(), "a retryable error: warning and restart");
            assert_eq!(maintainer_epoch, EPOCH + 1);
        }
        other => panic!("expected an error response, got {:?}", other),
    }
    assert!(traced(&out, "failed to create table trigger dispatcher"));
    assert_eq!(dm.trigger_id, None);
}

#[test]
fn bug_write_path_closed_is_error_is_quiet_on_an_open_write_path() {
    let (mut dm, mut env) = owned(2, None, Env::new(2).with_bug(Bug::WritePathClosedIsError));
    let (r, out) = dm_handle(&mut dm, &mut env, 2, bootstrap_req(START, Some(T), EPOCH + 1));
    assert!(matches!(r, Some(Message::MaintainerBootstrapResponse { err: None, .. })));
    assert!(traced(&out, "create table trigger event dispatcher"));
    assert_eq!(dm.trigger_id, Some(T));
}

#[test]
fn closed_write_path_keeps_add_operators_and_post_bootstrap_fails_without_trigger() {
    let (mut dm, mut env, _, _) = trigger_bootstrap_on_closing_manager(Env::new(2));
    let out = create(&mut dm, &mut env, 2, A, TableSpan::full(11), EPOCH + 1);
    assert!(traced(&out, "dispatcher manager write path closed, keep add operators"));
    assert!(dm.dispatchers.is_empty());
    assert!(dm.current_operator_map.contains_key(&A));
    // The trigger was never created (its creation met the closed write path): the
    // handler checks for it before initialising it and fails on the missing trigger.
    let (r, out) = dm_handle(
        &mut dm,
        &mut env,
        2,
        Message::MaintainerPostBootstrapRequest {
            redo_schemas: vec![],
            cf: cf(),
            table_trigger_event_dispatcher_id: T,
            schemas: vec![],
            maintainer_epoch: EPOCH + 1,
        },
    );
    assert!(
        matches!(r, Some(Message::MaintainerPostBootstrapResponse { err: Some(ref e), .. }) if e.message.contains("no table trigger")),
        "{:?}",
        r
    );
    assert!(traced(&out, "post bootstrap rejected"));
}

/// A trigger created before the capture local-fenced: the post-bootstrap request still
/// finds it (the model drops it at once; TiCDC only when its removal completes), and its
/// initialisation on the closed write path is a clean stop (no response).
#[test]
fn post_bootstrap_on_closed_write_path_is_a_clean_stop() {
    let (mut dm, mut env) = owned(2, Some(T), Env::new(2));
    dm.local_fence(&mut env.ctx());
    env.take();
    let (r, out) = dm_handle(
        &mut dm,
        &mut env,
        0,
        Message::MaintainerPostBootstrapRequest {
            redo_schemas: vec![],
            cf: cf(),
            table_trigger_event_dispatcher_id: T,
            schemas: vec![],
            maintainer_epoch: EPOCH,
        },
    );
    assert!(r.is_none(), "{:?}", r);
    assert!(traced(&out, "dispatcher manager write path closed while initializing table trigger event dispatcher"));
}

/// A move removed the trigger (schedule stream) while the post-bootstrap request waited in
/// the orchestrator queue: the request fails on the missing trigger, and a mismatched
/// trigger ID fails too.
#[test]
fn post_bootstrap_without_its_trigger_is_an_error() {
    let (mut dm, mut env) = owned(2, Some(T), Env::new(2));
    let (r, _) = dm_handle(
        &mut dm,
        &mut env,
        0,
        Message::MaintainerPostBootstrapRequest {
            redo_schemas: vec![],
            cf: cf(),
            table_trigger_event_dispatcher_id: X,
            schemas: vec![],
            maintainer_epoch: EPOCH,
        },
    );
    assert!(
        matches!(r, Some(Message::MaintainerPostBootstrapResponse { err: Some(ref e), .. }) if e.message.contains("not match")),
        "{:?}",
        r
    );
    dm_handle(&mut dm, &mut env, 0, sched(remove_req(T, TableSpan::ddl_span(), OperatorType::Remove, EPOCH)));
    for _ in 0..20 {
        env.now += 100;
        dm.heartbeat(&mut env.ctx(), false);
    }
    assert_eq!(dm.trigger_id, None, "the trigger's removal finished");
    let (r, _) = dm_handle(
        &mut dm,
        &mut env,
        0,
        Message::MaintainerPostBootstrapRequest {
            redo_schemas: vec![],
            cf: cf(),
            table_trigger_event_dispatcher_id: T,
            schemas: vec![],
            maintainer_epoch: EPOCH,
        },
    );
    assert!(
        matches!(r, Some(Message::MaintainerPostBootstrapResponse { err: Some(ref e), .. }) if e.message.contains("no table trigger")),
        "{:?}",
        r
    );
}

/// A manager on node 2 hosting X, reused by a newer maintainer on node 2 whose bootstrap
/// creates the trigger T with a creation latency: the handler is in flight (fence lock
/// held, no response yet).
fn trigger_creation_in_flight(env: Env) -> (DispatcherManager, Env) {
    let (mut dm, mut env) = owned(2, None, env);
    create(&mut dm, &mut env, 0, X, TableSpan::full(10), EPOCH);
    dm.trigger_create_ms = [50, 50];
    let (r, out) = dm_handle(&mut dm, &mut env, 2, bootstrap_req(START, Some(T), EPOCH + 1));
    assert!(r.is_none(), "answered only once the trigger is created: {:?}", r);
    assert!(traced(&out, "creating table trigger event dispatcher"));
    assert!(dm.fence_locked());
    (dm, env)
}

#[test]
fn reused_manager_answers_the_bootstrap_once_the_trigger_is_created() {
    let (mut dm, mut env) = trigger_creation_in_flight(Env::new(2));
    // A Create of the new owner waits behind the handler.
    let (r, _) =
        dm_handle(&mut dm, &mut env, 2, sched(create_req(M, TableSpan::full(11), START, OperatorType::Add, EPOCH + 1)));
    assert!(r.is_none());
    assert!(!dm.dispatchers.contains_key(&M));
    env.now = 49;
    assert!(dm.finish_bootstrap(&mut env.ctx()).is_empty());
    env.now = 50;
    let replies = dm.finish_bootstrap(&mut env.ctx());
    assert!(
        matches!(replies.as_slice(), [(to, Message::MaintainerBootstrapResponse { err: None, .. })] if *to == n(2)),
        "{:?}",
        replies
    );
    assert_eq!(dm.trigger_id, Some(T));
    assert!(dm.dispatchers.contains_key(&M), "the waiting Create ran after the handler");
}

#[test]
fn local_fence_during_trigger_creation_is_a_clean_stop() {
    let (mut dm, mut env) = trigger_creation_in_flight(Env::new(2));
    dm.local_fence(&mut env.ctx());
    env.take();
    env.now = 50;
    let replies = dm.finish_bootstrap(&mut env.ctx());
    assert!(replies.is_empty(), "no response, no error: {:?}", replies);
    assert!(traced(&env.take(), "dispatcher manager write path closed while creating table trigger dispatcher"));
    assert_eq!(dm.trigger_id, None);
    assert!(!dm.fence_locked());
}

#[test]
fn bug_write_path_closed_is_error_answers_a_fenced_trigger_creation_with_the_error() {
    let (mut dm, mut env) = trigger_creation_in_flight(Env::new(2).with_bug(Bug::WritePathClosedIsError));
    dm.local_fence(&mut env.ctx());
    env.now = 50;
    let replies = dm.finish_bootstrap(&mut env.ctx());
    match replies.as_slice() {
        [(_, Message::MaintainerBootstrapResponse { err: Some(e), .. })] => {
            assert_eq!(e.code, ErrorCode::DispatcherManagerWritePathClosed)
        }
        other => panic!("expected an error response, got {:?}", other),
    }
}

/// A manager created by the bootstrap itself creates its trigger at once (the creation
/// of a new manager is `NewDispatcherManager`, see `NewDispatcherManagerDelay`).
#[test]
fn a_fresh_manager_creates_its_trigger_within_the_bootstrap() {
    let mut env = Env::new(2);
    let mut dm = dm_on(2);
    dm.trigger_create_ms = [50, 50];
    let (r, _) = dm_handle(&mut dm, &mut env, 2, bootstrap_req(START, Some(T), EPOCH));
    assert!(matches!(r, Some(Message::MaintainerBootstrapResponse { err: None, .. })), "{:?}", r);
    assert_eq!(dm.trigger_id, Some(T));
}

/// A manager left owned by an older epoch (every newer bootstrap was rejected) and a
/// newer generation's cascade close: TiCDC admits the close only from the owner's epoch
/// and acknowledges it without closing; the candidate fix `close-older-owner-manager`
/// closes it.
#[test]
fn close_from_a_newer_epoch_closes_only_with_the_candidate_fix() {
    let close = Message::MaintainerCloseRequest { cf: cf(), removed: false, maintainer_epoch: EPOCH + 1 };
    let (mut dm, mut env) = owned(2, Some(T), Env::new(2));
    let (r, _) = dm_handle(&mut dm, &mut env, 1, close.clone());
    assert!(matches!(r, Some(Message::MaintainerCloseResponse { success: true, .. })), "{:?}", r);
    assert!(!dm.closing, "acknowledged, not closed");
    assert_eq!(dm.trigger_id, Some(T));
    let (mut dm, mut env) = owned(2, Some(T), Env::new(2).with_fix(crate::bugs::Fix::CloseOlderOwnerManager));
    let (r, out) = dm_handle(&mut dm, &mut env, 1, close);
    assert!(traced(&out, "close dispatcher manager of an older maintainer epoch"));
    assert!(dm.closing);
    assert!(
        matches!(r, Some(Message::MaintainerCloseResponse { success: false, .. })),
        "closing: asked again until done, {:?}",
        r
    );
    // An older epoch's close is still only acknowledged.
    let (mut dm, mut env) = owned(2, Some(T), Env::new(2).with_fix(crate::bugs::Fix::CloseOlderOwnerManager));
    dm_handle(
        &mut dm,
        &mut env,
        1,
        Message::MaintainerCloseRequest { cf: cf(), removed: false, maintainer_epoch: EPOCH - 1 },
    );
    assert!(!dm.closing);
}

/// The finding `stale_bootstrap_resend_recreates_trigger` at the manager: a bootstrap
/// resend of the trigger's own generation, handled after the move removed the trigger,
/// creates it again (TiCDC: `CanUpdateMaintainer` admits the same epoch and owner, and
/// `ensure` creates a missing trigger); the candidate fix drops it.
#[test]
fn a_resend_after_the_trigger_removal_recreates_it_unless_the_fix_drops_it() {
    for fix in [false, true] {
        let env = if fix { Env::new(2).with_fix(crate::bugs::Fix::DropBootstrapOfRemovedTrigger) } else { Env::new(2) };
        let (mut dm, mut env) = owned(2, Some(T), env);
        dm_handle(&mut dm, &mut env, 0, sched(remove_req(T, TableSpan::ddl_span(), OperatorType::Remove, EPOCH)));
        for _ in 0..20 {
            env.now += 100;
            dm.heartbeat(&mut env.ctx(), false);
        }
        assert_eq!(dm.trigger_id, None, "the trigger's removal finished");
        let (r, out) = dm_handle(&mut dm, &mut env, 0, bootstrap_req(START, Some(T), EPOCH));
        if fix {
            assert!(r.is_none(), "{:?}", r);
            assert!(traced(&out, "drop bootstrap of a removed table trigger"));
            assert_eq!(dm.trigger_id, None);
        } else {
            assert!(matches!(r, Some(Message::MaintainerBootstrapResponse { err: None, .. })), "{:?}", r);
            assert!(traced(&out, "create table trigger event dispatcher"));
            assert_eq!(dm.trigger_id, Some(T), "recreated under the departed epoch");
        }
    }
}

/// Under `close-older-owner-manager` a newer generation's close closes a manager still
/// owned by an older one; the tombstone records the close's (newer) epoch, so a late
/// bootstrap of the closing generation cannot create a manager afterwards.
#[test]
fn a_close_of_an_older_owner_leaves_the_newer_epoch_as_tombstone() {
    let mut env = Env::new(2).with_fix(crate::bugs::Fix::CloseOlderOwnerManager);
    let mut o = DispatcherOrchestrator::new(n(2), 1);
    orch_handle(&mut o, &mut env, 2, bootstrap_req(START, Some(T), EPOCH));
    let close = || Message::MaintainerCloseRequest { cf: cf(), removed: false, maintainer_epoch: EPOCH + 1 };
    let out = orch_handle(&mut o, &mut env, 0, close());
    assert!(traced(&out, "close dispatcher manager of an older maintainer epoch"));
    env.now += 1_000;
    o.managers.get_mut(&cf()).unwrap().heartbeat(&mut env.ctx(), true);
    env.take();
    orch_handle(&mut o, &mut env, 0, close());
    assert!(o.managers.is_empty());
    assert_eq!(o.closed_maintainer_epochs.get(&cf()), Some(&(EPOCH + 1)));
    let out = orch_handle(&mut o, &mut env, 0, bootstrap_req(START, None, EPOCH + 1));
    assert!(o.managers.is_empty() && traced(&out, "ignore bootstrap of closed generation"));
}
