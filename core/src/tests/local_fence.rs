//! Capture-local fence (`DispatcherOrchestrator::LocalFence`) and the post-bootstrap
//! handler's window: the handler is admitted, holds the manager's fence lock while the
//! table trigger's schema store initialises, and only then checks `fenced`.

use super::harness::*;
use crate::bugs::Bug;
use crate::dispatcher::orchestrator::NEW_DISPATCHER_MANAGER_DELAY_MS;
use crate::dispatcher::DispatcherOrchestrator;
use crate::effects::Out;
use crate::messages::*;
use crate::types::*;

const T: DispatcherId = DispatcherId(3000);
const X: DispatcherId = DispatcherId(1000);
const INIT_MS: u64 = 50;

fn post_bootstrap_req() -> Message {
    Message::MaintainerPostBootstrapRequest {
        redo_schemas: vec![],
        cf: cf(),
        table_trigger_event_dispatcher_id: T,
        schemas: vec![],
        maintainer_epoch: EPOCH,
    }
}

/// An orchestrator on n0 whose manager was bootstrapped by the maintainer on n0 (with
/// the trigger T) and whose post-bootstrap handler is now in flight.
fn in_flight(env: Env) -> (DispatcherOrchestrator, Env) {
    let mut env = env;
    env.node = n(0);
    let mut orch = DispatcherOrchestrator::new(n(0), 1);
    orch.schema_store_init_ms = [INIT_MS, INIT_MS];
    orch.handle_message(&mut env.ctx(), n(0), bootstrap_req(START, Some(T), EPOCH));
    env.take();
    orch.handle_message(&mut env.ctx(), n(0), post_bootstrap_req());
    let out = env.take();
    assert!(out.msgs.is_empty(), "no response while the schema store initialises");
    assert!(traced(&out, "initializing table trigger event dispatcher"));
    assert!(orch.in_flight());
    (orch, env)
}

fn tick(orch: &mut DispatcherOrchestrator, env: &mut Env) -> Out {
    for dm in orch.managers.values_mut() {
        dm.heartbeat(&mut env.ctx(), false);
    }
    orch.poll_failpoints(&mut env.ctx());
    env.take()
}

fn post_bootstrap_responses(out: &Out) -> usize {
    out.msgs.iter().filter(|e| matches!(e.msg, Message::MaintainerPostBootstrapResponse { .. })).count()
}

#[test]
fn post_bootstrap_holds_the_fence_lock_until_the_schema_store_is_initialised() {
    let (mut orch, mut env) = in_flight(Env::new(0));
    orch.handle_message(
        &mut env.ctx(),
        n(0),
        sched(create_req(X, TableSpan::full(10), START, OperatorType::Add, EPOCH)),
    );
    let dm = &orch.managers[&cf()];
    assert!(dm.fence_locked());
    assert!(!dm.dispatchers.contains_key(&X), "the Create waits for the lock");
    env.now = INIT_MS - 1;
    assert_eq!(post_bootstrap_responses(&tick(&mut orch, &mut env)), 0);
    env.now = INIT_MS;
    let out = tick(&mut orch, &mut env);
    assert_eq!(post_bootstrap_responses(&out), 1);
    let dm = &orch.managers[&cf()];
    assert!(dm.dispatchers[&T].registered);
    assert!(dm.dispatchers.contains_key(&X), "the waiting Create ran once the lock was released");
}

#[test]
fn a_resent_post_bootstrap_of_an_initialised_trigger_is_answered_at_once() {
    let (mut orch, mut env) = in_flight(Env::new(0));
    env.now = INIT_MS;
    tick(&mut orch, &mut env);
    orch.handle_message(&mut env.ctx(), n(0), post_bootstrap_req());
    assert_eq!(post_bootstrap_responses(&env.take()), 1);
    assert!(!orch.in_flight());
}

#[test]
fn fenced_orchestrator_drops_new_maintainer_messages() {
    let mut env = Env::new(0);
    let mut orch = DispatcherOrchestrator::new(n(0), 1);
    orch.local_fence(&mut env.ctx());
    assert!(traced(&env.take(), "dispatcher orchestrator local fence triggered"));
    orch.handle_message(&mut env.ctx(), n(0), bootstrap_req(START, Some(T), EPOCH));
    assert!(orch.managers.is_empty());
    assert!(env.take().msgs.is_empty());
}

/// The session is lost during the trigger's initialisation: the manager's fence waits for
/// `writePathMu`, which the initialisation holds, and closes the write path as soon as
/// the initialisation releases it; the handler then returns on the closed write path (no
/// response) releasing the lock, and the close finishes: the orchestrator is closed.
#[test]
fn local_fence_during_post_bootstrap_lets_the_close_finish() {
    let (mut orch, mut env) = in_flight(Env::new(0));
    env.now = 10;
    orch.local_fence(&mut env.ctx());
    orch.close(&mut env.ctx());
    let out = env.take();
    assert!(traced(&out, "local fence waits for the table trigger's schema-store initialisation"));
    assert!(!orch.managers[&cf()].write_path_closed, "stopWritePath waits for writePathMu");
    assert!(!orch.closed, "Close waits for the admitted handler");
    env.now = INIT_MS;
    let out = tick(&mut orch, &mut env);
    assert_eq!(post_bootstrap_responses(&out), 0, "a fenced handler does not answer");
    assert!(traced(&out, "stopping dispatcher manager write path"));
    assert!(traced(&out, "dispatcher manager write path closed while initializing table trigger event dispatcher"));
    assert!(!orch.managers[&cf()].dispatchers.contains_key(&T), "the trigger was not registered");
    for t in 1..=3 {
        env.now = INIT_MS + t * 200;
        tick(&mut orch, &mut env);
    }
    assert!(orch.closed, "every manager closed");
    assert!(orch.managers.is_empty());
}

/// `leak-fence-lock-on-closed-write-path`: before TiCDC PR #5436 the handler's return on a
/// closed write path kept the fence lock; the manager's close never finishes.
#[test]
fn bug_leak_fence_lock_on_closed_write_path_keeps_the_capture_from_closing() {
    leaks_the_fence_lock(
        Bug::LeakFenceLockOnClosedWritePath,
        10,
        "post bootstrap write path closed return without releasing fence lock",
    );
}

/// A fence that waited through the initialisation never reaches the `fenced` return, so
/// `leak-fence-lock-when-fenced` does not keep the capture from closing then.
#[test]
fn bug_leak_fence_lock_when_fenced_misses_a_fence_that_waited_for_the_init() {
    let (mut orch, mut env) = in_flight(Env::new(0).with_bug(Bug::LeakFenceLockWhenFenced));
    env.now = 10;
    orch.local_fence(&mut env.ctx());
    orch.close(&mut env.ctx());
    for t in 0..=3 {
        env.now = INIT_MS + t * 200;
        tick(&mut orch, &mut env);
    }
    assert!(orch.closed);
}

/// `leak-fence-lock-when-fenced`: a fence that did not wait past the mutex's starvation
/// threshold loses `writePathMu` to the handler, which registers the trigger and then
/// returns on `fenced`; the historical (review) revision kept the fence lock there.
#[test]
fn bug_leak_fence_lock_when_fenced_keeps_the_capture_from_closing() {
    leaks_the_fence_lock(
        Bug::LeakFenceLockWhenFenced,
        INIT_MS,
        "post bootstrap fenced return without releasing fence lock",
    );
}

/// With `bug`, a local fence at `fence_at` during the post-bootstrap handler's window
/// leaks the fence lock (`event` traced at the initialisation's end): the manager's close
/// never finishes and the orchestrator never closes.
fn leaks_the_fence_lock(bug: Bug, fence_at: u64, event: &str) {
    let (mut orch, mut env) = in_flight(Env::new(0).with_bug(bug));
    env.now = fence_at;
    orch.local_fence(&mut env.ctx());
    orch.close(&mut env.ctx());
    env.take();
    env.now = INIT_MS;
    let out = tick(&mut orch, &mut env);
    assert!(traced(&out, event));
    for t in 1..=50 {
        env.now = INIT_MS + t * 200;
        tick(&mut orch, &mut env);
    }
    let dm = &orch.managers[&cf()];
    assert!(dm.fence_locked() && !dm.close_finished);
    assert!(!orch.closed, "the capture never finishes closing");
}

/// Outside the window (the handler finished before the fence), the fixed and the
/// historical code behave alike: the close finishes.
#[test]
fn local_fence_after_post_bootstrap_closes_with_the_bug_too() {
    let (mut orch, mut env) = in_flight(Env::new(0).with_bug(Bug::LeakFenceLockWhenFenced));
    env.now = INIT_MS;
    tick(&mut orch, &mut env);
    orch.local_fence(&mut env.ctx());
    orch.close(&mut env.ctx());
    for t in 1..=3 {
        env.now = INIT_MS + t * 200;
        tick(&mut orch, &mut env);
    }
    assert!(orch.closed);
}

/// An orchestrator on n0 with `NewDispatcherManagerDelay` on, whose manager creation
/// for node 1's bootstrap (epoch `EPOCH`) has just started.
fn creating_manager() -> (DispatcherOrchestrator, Env) {
    let mut env = Env::new(0);
    env.fp_on(crate::effects::FP_NEW_DISPATCHER_MANAGER_DELAY);
    let mut orch = DispatcherOrchestrator::new(n(0), 1);
    orch.handle_message(&mut env.ctx(), n(1), bootstrap_req(START, None, EPOCH));
    (orch, env)
}

fn bootstrap_responses(out: &Out) -> usize {
    out.msgs.iter().filter(|e| matches!(e.msg, Message::MaintainerBootstrapResponse { .. })).count()
}

/// `NewDispatcherManagerDelay`: the first bootstrap of a changefeed on this capture is
/// answered only once the manager's creation returned. A Create sent meanwhile is
/// dropped (its stream is registered by the creation), a resent bootstrap of the same
/// epoch waits once in the shard's queue, and the two are answered in order.
#[test]
fn new_dispatcher_manager_delay_holds_the_bootstrap_and_queues_control_messages_once() {
    let (mut orch, mut env) = creating_manager();
    let out = env.take();
    assert_eq!(bootstrap_responses(&out), 0);
    assert!(traced(&out, "new dispatcher manager delayed"));
    assert!(orch.managers.is_empty(), "the manager does not exist while it is created");
    orch.handle_message(
        &mut env.ctx(),
        n(1),
        sched(create_req(X, TableSpan::full(10), START, OperatorType::Add, EPOCH)),
    );
    assert!(traced(&env.take(), "drop message while dispatcher manager is created"));
    for _ in 0..3 {
        orch.handle_message(&mut env.ctx(), n(1), bootstrap_req(START, None, EPOCH));
    }
    env.now = NEW_DISPATCHER_MANAGER_DELAY_MS - 1;
    assert_eq!(bootstrap_responses(&tick(&mut orch, &mut env)), 0);
    env.now = NEW_DISPATCHER_MANAGER_DELAY_MS;
    let out = tick(&mut orch, &mut env);
    assert_eq!(bootstrap_responses(&out), 2, "the bootstrap and one queued resend");
    assert!(!orch.managers[&cf()].dispatchers.contains_key(&X), "the Create was dropped");
    // Only a new manager is delayed: a later bootstrap of the existing one is answered at once.
    orch.handle_message(&mut env.ctx(), n(1), bootstrap_req(START, None, EPOCH));
    assert_eq!(bootstrap_responses(&env.take()), 1);
}

/// A newer generation's bootstrap replaces the older one waiting in the queue.
#[test]
fn a_newer_epoch_replaces_the_waiting_bootstrap() {
    let (mut orch, mut env) = creating_manager();
    orch.handle_message(&mut env.ctx(), n(1), bootstrap_req(START, None, EPOCH));
    orch.handle_message(&mut env.ctx(), n(2), bootstrap_req(START, None, EPOCH + 1));
    env.take();
    env.now = NEW_DISPATCHER_MANAGER_DELAY_MS;
    let out = tick(&mut orch, &mut env);
    let epochs: Vec<Epoch> = out
        .msgs
        .iter()
        .filter_map(|e| match e.msg {
            Message::MaintainerBootstrapResponse { maintainer_epoch, .. } => Some(maintainer_epoch),
            _ => None,
        })
        .collect();
    assert_eq!(epochs, vec![EPOCH, EPOCH + 1]);
    assert_eq!(orch.managers[&cf()].maintainer_epoch, EPOCH + 1);
}

/// Without the failpoint the bootstrap is answered in the same step.
#[test]
fn without_new_dispatcher_manager_delay_the_bootstrap_is_answered_at_once() {
    let mut env = Env::new(0);
    let mut orch = DispatcherOrchestrator::new(n(0), 1);
    orch.handle_message(&mut env.ctx(), n(1), bootstrap_req(START, None, EPOCH));
    assert_eq!(bootstrap_responses(&env.take()), 1);
}

/// A local fence while the manager is being created: the creation returns a closed
/// write path, no manager is kept and nothing is answered.
#[test]
fn local_fence_while_a_manager_is_created_drops_it_without_a_response() {
    let (mut orch, mut env) = creating_manager();
    env.take();
    orch.local_fence(&mut env.ctx());
    orch.close(&mut env.ctx());
    env.now = NEW_DISPATCHER_MANAGER_DELAY_MS - 1;
    tick(&mut orch, &mut env);
    assert!(!orch.closed, "Close waits for the shard's message in progress");
    env.now = NEW_DISPATCHER_MANAGER_DELAY_MS;
    let out = tick(&mut orch, &mut env);
    assert_eq!(bootstrap_responses(&out), 0);
    assert!(traced(&out, "dispatcher manager write path closed while creating dispatcher manager"));
    assert!(orch.managers.is_empty());
    assert!(orch.closed, "then it returns");
}
