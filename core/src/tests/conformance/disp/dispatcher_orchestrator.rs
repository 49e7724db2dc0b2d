//! `downstreamadapter/dispatcherorchestrator/dispatcher_orchestrator_test.go` at
//! b813e76f9: the orchestrator's pending message queue, local fence, bootstrap and close
//! handling, and its close tombstones.

use super::support::*;
use crate::dispatcher::manager::JournalEntry;
use crate::dispatcher::orchestrator::{pending_kind, PendingMessageQueue, NEW_DISPATCHER_MANAGER_DELAY_MS};
use crate::dispatcher::{DispatcherManager, DispatcherOrchestrator};
use crate::effects::*;
use crate::messages::*;
use crate::tests::harness::*;
use crate::types::*;

const CURRENT: NodeId = NodeId(2);
const OLD: NodeId = NodeId(1);
const NEW: NodeId = NodeId(3);

fn orch() -> (DispatcherOrchestrator, Env) {
    (DispatcherOrchestrator::new(n(9), 1), Env::new(9))
}

/// `NewDispatcherManager(..., trigger, startTs 100, owner, epoch)` through the orchestrator.
fn with_manager(owner: NodeId, epoch: Epoch, trigger: Option<DispatcherId>) -> (DispatcherOrchestrator, Env) {
    let (mut o, mut env) = orch();
    o.handle_message(&mut env.ctx(), owner, bootstrap_req(100, trigger, epoch));
    let out = env.take();
    assert!(
        out.msgs.iter().any(|e| matches!(e.msg, Message::MaintainerBootstrapResponse { err: None, .. })),
        "{:?}",
        out.msgs
    );
    assert_eq!((o.managers[&cf()].maintainer_id, o.managers[&cf()].maintainer_epoch), (owner, epoch));
    (o, env)
}

fn dm(o: &mut DispatcherOrchestrator) -> &mut DispatcherManager {
    o.managers.get_mut(&cf()).expect("manager")
}

fn handle(o: &mut DispatcherOrchestrator, env: &mut Env, from: NodeId, msg: Message) -> Out {
    o.handle_message(&mut env.ctx(), from, msg);
    env.take()
}

fn only_msg(out: &Out) -> &Message {
    let [e] = &out.msgs[..] else { panic!("one message expected: {:?}", out.msgs) };
    &e.msg
}

fn bootstrap_with_config(epoch: Epoch) -> Message {
    bootstrap_req(100, None, epoch)
}

// ---------------------------------------------------------------- shard

// dispatcher_orchestrator_test.go:37: closing waits for the handler that is running (here a
// bootstrap whose manager creation is held) and finishes once it returns.
#[test]
fn ticdc_dispatcher_orchestrator_TestOrchestratorShard_CloseWaitsForRunningHandler() {
    let (mut o, mut env) = orch();
    env.fp_on(FP_NEW_DISPATCHER_MANAGER_DELAY);
    handle(&mut o, &mut env, CURRENT, bootstrap_req(100, None, 2));
    assert!(o.in_flight(), "the handler started");
    o.close(&mut env.ctx());
    env.now += NEW_DISPATCHER_MANAGER_DELAY_MS / 2;
    o.poll_failpoints(&mut env.ctx());
    assert!(!o.closed, "closed before the running handler returned");
    env.now += NEW_DISPATCHER_MANAGER_DELAY_MS;
    o.poll_failpoints(&mut env.ctx());
    assert!(o.closed, "close finished after the handler returned");
}

// ---------------------------------------------------------------- pending message queue

// dispatcher_orchestrator_test.go:213: one message per key waits; a duplicate is dropped
// while it is queued and accepted again once it was popped.
#[test]
fn ticdc_dispatcher_orchestrator_TestPendingMessageQueue_TryEnqueueDropsDuplicatesOnlyWhileQueued() {
    let mut q = PendingMessageQueue::default();
    let msg = bootstrap_req(100, None, 0);
    assert!(q.try_enqueue(CURRENT, msg.clone()));
    assert!(!q.try_enqueue(CURRENT, msg.clone()));
    assert_eq!(q.pop().map(|(_, m)| m), Some(msg.clone()));
    assert!(q.try_enqueue(CURRENT, msg.clone()));
    assert!(!q.try_enqueue(CURRENT, msg.clone()));
    assert_eq!(q.pop().map(|(_, m)| m), Some(msg.clone()));
    assert!(q.try_enqueue(CURRENT, msg));
}

// dispatcher_orchestrator_test.go:242: messages of different keys pop in arrival order.
// (Go's keys are two changefeeds; the model's queue is one changefeed's, so the keys are
// two message kinds.)
#[test]
fn ticdc_dispatcher_orchestrator_TestPendingMessageQueue_OrderPreservedAcrossKeys() {
    let mut q = PendingMessageQueue::default();
    assert!(q.try_enqueue(CURRENT, bootstrap_req(100, None, 0)));
    assert!(q.try_enqueue(CURRENT, close_req(0, false)));
    assert!(matches!(q.pop(), Some((_, Message::MaintainerBootstrapRequest { .. }))));
    assert!(matches!(q.pop(), Some((_, Message::MaintainerCloseRequest { .. }))));
    assert!(q.pop().is_none());
}

// dispatcher_orchestrator_test.go:285: a removing close replaces a waiting non-removing one.
#[test]
fn ticdc_dispatcher_orchestrator_TestPendingMessageQueue_CloseRequestRemovedTrueOverridesPendingFalse() {
    let mut q = PendingMessageQueue::default();
    assert!(q.try_enqueue(CURRENT, close_req(0, false)));
    assert!(q.try_enqueue(CURRENT, close_req(0, true)));
    assert!(matches!(q.pop(), Some((_, Message::MaintainerCloseRequest { removed: true, .. }))));
}

// dispatcher_orchestrator_test.go:316: a removing close of an older epoch does not replace
// a waiting close of a newer one.
#[test]
fn ticdc_dispatcher_orchestrator_TestPendingMessageQueue_StaleRemovedCloseCannotOverrideNewerEpochClose() {
    let mut q = PendingMessageQueue::default();
    assert!(q.try_enqueue(CURRENT, close_req(2, false)));
    assert!(!q.try_enqueue(CURRENT, close_req(1, true)));
    assert!(matches!(q.pop(), Some((_, Message::MaintainerCloseRequest { maintainer_epoch: 2, removed: false, .. }))));
}

// dispatcher_orchestrator_test.go:355: a request of a newer maintainer epoch replaces the
// waiting one.
#[test]
fn ticdc_dispatcher_orchestrator_TestPendingMessageQueue_NewerMaintainerEpochOverridesPendingRequest() {
    let mut q = PendingMessageQueue::default();
    assert!(q.try_enqueue(CURRENT, bootstrap_req(100, None, 1)));
    assert!(q.try_enqueue(CURRENT, bootstrap_req(100, None, 2)));
    assert!(matches!(q.pop(), Some((_, Message::MaintainerBootstrapRequest { maintainer_epoch: 2, .. }))));
}

// dispatcher_orchestrator_test.go:385: a removing close that comes after the
// non-removing one was popped is queued for the next round (the popped one is unchanged).
#[test]
fn ticdc_dispatcher_orchestrator_TestPendingMessageQueue_CloseRequestUpgradeAfterPopRequeuesNextRound() {
    let mut q = PendingMessageQueue::default();
    assert!(q.try_enqueue(CURRENT, close_req(0, false)));
    let popped = q.pop();
    assert!(matches!(popped, Some((_, Message::MaintainerCloseRequest { removed: false, .. }))));
    assert!(q.try_enqueue(CURRENT, close_req(0, true)));
    assert!(matches!(popped, Some((_, Message::MaintainerCloseRequest { removed: false, .. }))));
    assert!(matches!(q.pop(), Some((_, Message::MaintainerCloseRequest { removed: true, .. }))));
}

// dispatcher_orchestrator_test.go:440: bootstrap, post-bootstrap and close requests each
// have their own queue key.
#[test]
fn ticdc_dispatcher_orchestrator_TestGetPendingMessageKey_SupportedTypes() {
    let b = pending_kind(&bootstrap_req(100, None, 0));
    let p = pending_kind(&post_bootstrap_req(DispatcherId(1), 0));
    let c = pending_kind(&close_req(0, false));
    assert!(b.is_some() && p.is_some() && c.is_some());
    assert!(b != p && p != c && b != c);
}

// ---------------------------------------------------------------- local fence

// dispatcher_orchestrator_test.go:477: after LocalFence new maintainer messages are dropped.
#[test]
fn ticdc_dispatcher_orchestrator_TestDispatcherOrchestratorLocalFenceDropsNewMessages() {
    let (mut o, mut env) = orch();
    o.local_fence(&mut env.ctx());
    env.take();
    let out = handle(&mut o, &mut env, CURRENT, close_req(0, false));
    assert!(out.msgs.is_empty(), "{:?}", out.msgs);
    assert!(o.closed_maintainer_epochs.is_empty() && o.managers.is_empty());
}

// dispatcher_orchestrator_test.go:513: LocalFence fences every manager at once: its write
// path is closed (initialising the trigger would fail so).
#[test]
fn ticdc_dispatcher_orchestrator_TestDispatcherOrchestratorLocalFenceFencesManagersImmediately() {
    let (mut o, mut env) = with_manager(CURRENT, 2, None);
    o.local_fence(&mut env.ctx());
    assert!(dm(&mut o).write_path_closed);
}

// dispatcher_orchestrator_test.go:539: LocalFence also fences a manager still being
// created: it never comes into service.
#[test]
fn ticdc_dispatcher_orchestrator_TestDispatcherOrchestratorLocalFenceFencesInitializingManagersImmediately() {
    let (mut o, mut env) = orch();
    env.fp_on(FP_NEW_DISPATCHER_MANAGER_DELAY);
    handle(&mut o, &mut env, CURRENT, bootstrap_req(100, Some(DispatcherId(7)), 2));
    o.local_fence(&mut env.ctx());
    env.now += NEW_DISPATCHER_MANAGER_DELAY_MS;
    o.poll_failpoints(&mut env.ctx());
    let out = env.take();
    assert!(traced(&out, "dispatcher manager write path closed while creating dispatcher manager"));
    assert!(o.managers.is_empty());
    assert!(!out.msgs.iter().any(|e| matches!(e.msg, Message::MaintainerBootstrapResponse { .. })));
}

// ---------------------------------------------------------------- bootstrap response

fn journal(dm: &mut DispatcherManager, id: DispatcherId, from: NodeId, req: ScheduleDispatcherRequest) {
    let epoch = req.maintainer_epoch;
    dm.current_operator_map.insert(id, JournalEntry { req, from, epoch });
}

fn operators_of(out: &Out) -> Vec<ScheduleDispatcherRequest> {
    out.msgs
        .iter()
        .find_map(|e| match &e.msg {
            Message::MaintainerBootstrapResponse { operators, .. } => Some(operators.clone()),
            _ => None,
        })
        .expect("bootstrap response")
}

// dispatcher_orchestrator_test.go:566: the bootstrap response restores the current owner's
// operators, leaves out an older owner's Create, and keeps an older owner's Remove
// (O_Move) of a dispatcher it reports.
#[test]
fn ticdc_dispatcher_orchestrator_TestBootstrapResponseRestoresCurrentOperatorsAndStaleRemoves() {
    let (cur, old_create, stale_remove) = (DispatcherId(41), DispatcherId(42), DispatcherId(43));
    let (mut o, mut env) = with_manager(CURRENT, 2, Some(stale_remove));
    let m = dm(&mut o);
    journal(m, cur, CURRENT, create_req(cur, TableSpan::full(1), 100, OperatorType::Add, 2));
    journal(m, old_create, OLD, create_req(old_create, TableSpan::full(1), 100, OperatorType::Add, 1));
    let mut rm = create_req(stale_remove, TableSpan::full(1), 100, OperatorType::Move, 1);
    rm.action = ScheduleAction::Remove;
    journal(m, stale_remove, OLD, rm);
    let out = handle(&mut o, &mut env, CURRENT, bootstrap_req(100, Some(stale_remove), 2));
    let ops = operators_of(&out);
    assert_eq!(ops.len(), 2, "{:?}", ops);
    let find = |id| ops.iter().find(|r| r.config.dispatcher_id == id);
    let c = find(cur).expect("current operator");
    assert_eq!((c.maintainer_epoch, c.action), (2, ScheduleAction::Create));
    assert!(find(old_create).is_none());
    let r = find(stale_remove).expect("stale remove");
    assert_eq!((r.maintainer_epoch, r.action, r.operator_type), (1, ScheduleAction::Remove, OperatorType::Move));
}

// dispatcher_orchestrator_test.go:631: an older owner's Remove is kept only when its
// dispatcher is among the reported spans.
#[test]
fn ticdc_dispatcher_orchestrator_TestBootstrapResponseUsesSpanSnapshotForStaleRemove() {
    let (reported, missing) = (DispatcherId(51), DispatcherId(52));
    let (mut o, mut env) = with_manager(CURRENT, 2, None);
    // The reported dispatcher: a Working span of table 1.
    handle(&mut o, &mut env, CURRENT, sched(create_req(reported, TableSpan::full(1), 100, OperatorType::Add, 2)));
    let m = dm(&mut o);
    m.dispatchers.get_mut(&reported).expect("created").state = ComponentState::Working;
    let mut r1 = create_req(reported, TableSpan::full(1), 100, OperatorType::Move, 1);
    r1.action = ScheduleAction::Remove;
    journal(m, reported, OLD, r1);
    let mut r2 = create_req(missing, TableSpan::full(1), 100, OperatorType::Split, 1);
    r2.action = ScheduleAction::Remove;
    journal(m, missing, OLD, r2);
    let out = handle(&mut o, &mut env, CURRENT, bootstrap_req(100, None, 2));
    let ops = operators_of(&out);
    assert_eq!(ops.len(), 1, "{:?}", ops);
    assert_eq!(ops[0].config.dispatcher_id, reported);
    assert_eq!((ops[0].action, ops[0].operator_type), (ScheduleAction::Remove, OperatorType::Move));
}

// ---------------------------------------------------------------- bootstrap validation

// dispatcher_orchestrator_test.go:687: a bootstrap naming another table trigger is answered
// with an error at its epoch and leaves the old owner in place, whose close still works
// (the first close starts it: success false).
#[test]
fn ticdc_dispatcher_orchestrator_TestHandleBootstrapTriggerMismatchKeepsOldMaintainerOwner() {
    let (old_trigger, new_trigger) = (DispatcherId(61), DispatcherId(62));
    let (mut o, mut env) = with_manager(OLD, 2, Some(old_trigger));
    let out = handle(&mut o, &mut env, NEW, bootstrap_req(100, Some(new_trigger), 3));
    let Message::MaintainerBootstrapResponse { maintainer_epoch, err, .. } = only_msg(&out) else {
        panic!("{:?}", out.msgs)
    };
    assert_eq!(*maintainer_epoch, 3);
    assert!(err.is_some());
    assert_eq!((dm(&mut o).maintainer_id, dm(&mut o).maintainer_epoch), (OLD, 2));
    let out = handle(&mut o, &mut env, OLD, close_req(2, false));
    let Message::MaintainerCloseResponse { maintainer_epoch, success, .. } = only_msg(&out) else {
        panic!("{:?}", out.msgs)
    };
    assert_eq!(*maintainer_epoch, 2);
    assert!(!success);
}

// dispatcher_orchestrator_test.go:742: a bootstrap without a table trigger while the
// manager has one is answered with an error and does not change the owner.
#[test]
fn ticdc_dispatcher_orchestrator_TestHandleBootstrapNilTriggerRejectsExistingTableTrigger() {
    let (mut o, mut env) = with_manager(OLD, 2, Some(DispatcherId(71)));
    let out = handle(&mut o, &mut env, NEW, bootstrap_req(100, None, 3));
    let Message::MaintainerBootstrapResponse { maintainer_epoch, err, .. } = only_msg(&out) else {
        panic!("{:?}", out.msgs)
    };
    assert_eq!(*maintainer_epoch, 3);
    assert!(err.is_some());
    assert_eq!((dm(&mut o).maintainer_id, dm(&mut o).maintainer_epoch), (OLD, 2));
}

// ---------------------------------------------------------------- close and post-bootstrap

// dispatcher_orchestrator_test.go:808: a close from an older epoch is acknowledged
// (success, its epoch) without closing the manager or leaving a tombstone.
#[test]
fn ticdc_dispatcher_orchestrator_TestHandleCloseRequestAcksStaleMaintainerEpoch() {
    let (mut o, mut env) = with_manager(CURRENT, 2, None);
    let out = handle(&mut o, &mut env, OLD, close_req(1, false));
    let Message::MaintainerCloseResponse { maintainer_epoch, success, .. } = only_msg(&out) else {
        panic!("{:?}", out.msgs)
    };
    assert!(*success);
    assert_eq!(*maintainer_epoch, 1);
    assert!(o.managers.contains_key(&cf()));
    assert!(!dm(&mut o).closing);
    assert!(!o.closed_maintainer_epochs.contains_key(&cf()));
}

// dispatcher_orchestrator_test.go:847: a post-bootstrap request on a locally fenced manager
// returns write-path-closed and releases the manager's fence lock: a close right after is
// handled, not blocked.
#[test]
fn ticdc_dispatcher_orchestrator_TestHandlePostBootstrapWritePathClosedReleasesMaintainerFence() {
    let trigger = DispatcherId(81);
    let (mut o, mut env) = with_manager(CURRENT, 2, Some(trigger));
    dm(&mut o).local_fence(&mut env.ctx());
    env.take();
    let out = handle(&mut o, &mut env, CURRENT, post_bootstrap_req(trigger, 2));
    assert!(out.msgs.is_empty(), "{:?}", out.msgs);
    assert!(!dm(&mut o).fence_locked());
    let out = handle(&mut o, &mut env, CURRENT, close_req(2, false));
    assert!(matches!(only_msg(&out), Message::MaintainerCloseResponse { maintainer_epoch: 2, .. }));
}

// dispatcher_orchestrator_test.go:900: a post-bootstrap request for a manager without a
// table trigger is answered with ErrChangefeedInitTableTriggerDispatcherFailed at its epoch.
#[test]
fn ticdc_dispatcher_orchestrator_TestHandlePostBootstrapMissingTriggerReportsError() {
    let (mut o, mut env) = with_manager(CURRENT, 2, None);
    let out = handle(&mut o, &mut env, CURRENT, post_bootstrap_req(DispatcherId(91), 2));
    let Message::MaintainerPostBootstrapResponse { maintainer_epoch, err, .. } = only_msg(&out) else {
        panic!("{:?}", out.msgs)
    };
    assert_eq!(*maintainer_epoch, 2);
    let err = err.as_ref().expect("error");
    assert_eq!(err.code, ErrorCode::InitTableTriggerDispatcherFailed);
    assert!(err.message.contains("no table trigger event dispatcher"), "{}", err.message);
}

// dispatcher_orchestrator_test.go:943: creating the table trigger on a fenced manager fails
// as write-path-closed, and that is no bootstrap error: nothing is sent.
#[test]
fn ticdc_dispatcher_orchestrator_TestHandleBootstrapWritePathClosedDoesNotReportBootstrapError() {
    let (mut o, mut env) = with_manager(CURRENT, 2, None);
    dm(&mut o).local_fence(&mut env.ctx());
    env.take();
    let out = handle(&mut o, &mut env, CURRENT, bootstrap_req(100, Some(DispatcherId(95)), 2));
    assert!(out.msgs.is_empty(), "{:?}", out.msgs);
    assert!(traced(&out, "dispatcher manager write path closed while creating table trigger dispatcher"));
}

// ---------------------------------------------------------------- tombstones

// dispatcher_orchestrator_test.go:1044: a tombstone at epoch 2 refuses a bootstrap of
// epoch 1: no manager is created.
#[test]
fn ticdc_dispatcher_orchestrator_TestHandleBootstrapRequestRejectsClosedOlderMaintainerEpoch() {
    let (mut o, mut env) = orch();
    o.closed_maintainer_epochs.insert(cf(), 2);
    let out = handle(&mut o, &mut env, OLD, bootstrap_with_config(1));
    assert!(o.managers.is_empty());
    assert!(out.msgs.is_empty(), "{:?}", out.msgs);
}

// dispatcher_orchestrator_test.go:1063: a compatibility close (epoch 0, not removing) of a
// changefeed without a manager leaves no tombstone.
#[test]
fn ticdc_dispatcher_orchestrator_TestHandleCloseRequestDoesNotRecordEpochZeroTombstoneForCompatClose() {
    let (mut o, mut env) = orch();
    handle(&mut o, &mut env, NodeId(5), close_req(0, false));
    assert!(!o.closed_maintainer_epochs.contains_key(&cf()));
}

// dispatcher_orchestrator_test.go:1082: a removing close at epoch 0 leaves a tombstone at 0,
// and a later epoch-0 bootstrap then creates no manager.
#[test]
fn ticdc_dispatcher_orchestrator_TestHandleCloseRequestRecordsEpochZeroTombstoneForRemovedChangefeed() {
    let (mut o, mut env) = orch();
    handle(&mut o, &mut env, NodeId(5), close_req(0, true));
    assert_eq!(o.closed_maintainer_epochs.get(&cf()), Some(&0));
    handle(&mut o, &mut env, NodeId(5), bootstrap_with_config(0));
    assert!(o.managers.is_empty());
}

// ---------------------------------------------------------------- redo trigger

/// A redo changefeed's manager owned by `owner` at `epoch` with both triggers.
fn with_redo_manager(owner: NodeId, epoch: Epoch, redo: DispatcherId) -> (DispatcherOrchestrator, Env) {
    let (mut o, mut env) = orch();
    let out = handle(&mut o, &mut env, owner, redo_bootstrap_req(100, Some(DispatcherId(60)), Some(redo), epoch));
    assert!(matches!(only_msg(&out), Message::MaintainerBootstrapResponse { err: None, .. }), "{:?}", out.msgs);
    (o, env)
}

fn bootstrap_err(out: &Out) -> (Epoch, String) {
    let Message::MaintainerBootstrapResponse { maintainer_epoch, err, .. } = only_msg(out) else {
        panic!("{:?}", out.msgs)
    };
    (*maintainer_epoch, err.as_ref().map(|e| e.message.clone()).unwrap_or_default())
}

// dispatcher_orchestrator_test.go:784: a bootstrap naming no redo trigger while the
// manager holds one is refused with "table trigger redo dispatcher present during nil
// trigger bootstrap".
#[test]
fn ticdc_dispatcher_orchestrator_TestValidateBootstrapNilRedoTriggerRejectsExistingRedoTrigger() {
    let (mut o, mut env) = with_redo_manager(OLD, 2, DispatcherId(63));
    let out = handle(&mut o, &mut env, NEW, redo_bootstrap_req(100, Some(DispatcherId(60)), None, 3));
    let (epoch, msg) = bootstrap_err(&out);
    assert_eq!(epoch, 3);
    assert!(msg.contains("table trigger redo dispatcher present during nil trigger bootstrap"), "{msg}");
    assert_eq!((dm(&mut o).maintainer_id, dm(&mut o).maintainer_epoch), (OLD, 2));
}

// dispatcher_orchestrator_test.go:687, redo variant: a bootstrap naming another redo
// trigger is refused at its epoch and the old owner stays.
#[test]
fn ticdc_dispatcher_orchestrator_TestHandleBootstrapTriggerMismatchKeepsOldMaintainerOwner_redo() {
    let (mut o, mut env) = with_redo_manager(OLD, 2, DispatcherId(63));
    let out = handle(&mut o, &mut env, NEW, redo_bootstrap_req(100, Some(DispatcherId(60)), Some(DispatcherId(64)), 3));
    let (epoch, msg) = bootstrap_err(&out);
    assert_eq!(epoch, 3);
    assert!(msg.contains("table trigger redo dispatcher id mismatch during bootstrap"), "{msg}");
    assert_eq!((dm(&mut o).maintainer_id, dm(&mut o).maintainer_epoch), (OLD, 2));
    assert_eq!(dm(&mut o).redo_trigger_id(), Some(DispatcherId(63)));
}

// dispatcher_orchestrator_test.go:742, redo variant: the event trigger is validated first,
// so a bootstrap naming neither trigger is refused on the event one, owner unchanged.
#[test]
fn ticdc_dispatcher_orchestrator_TestHandleBootstrapNilTriggerRejectsExistingTableTrigger_redo() {
    let (mut o, mut env) = with_redo_manager(OLD, 2, DispatcherId(63));
    let out = handle(&mut o, &mut env, NEW, redo_bootstrap_req(100, None, None, 3));
    let (epoch, msg) = bootstrap_err(&out);
    assert_eq!(epoch, 3);
    assert!(!msg.contains("redo"), "the event flavor is checked first: {msg}");
    assert_eq!((dm(&mut o).maintainer_id, dm(&mut o).maintainer_epoch), (OLD, 2));
}
