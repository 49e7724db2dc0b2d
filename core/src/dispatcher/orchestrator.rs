//! Dispatcher orchestrator: one per node. Creates or reuses the dispatcher manager of
//! a changefeed on `MaintainerBootstrapRequest`, routes post-bootstrap and close
//! requests, and keeps close tombstones (`closedMaintainerEpochs`) so a delayed
//! bootstrap of an already-closed generation cannot recreate a manager.

use super::manager::DispatcherManager;
use crate::bugs::Bug;
use crate::coverage::{hit, Point as P};
use crate::effects::*;
use crate::messages::*;
use crate::trace_ev;
use crate::types::*;
use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub struct DispatcherOrchestrator {
    pub node: NodeId,
    pub managers: BTreeMap<ChangefeedId, DispatcherManager>,
    pub closed_maintainer_epochs: BTreeMap<ChangefeedId, Epoch>,
    next_sink_instance: u64,
    /// Distinguishes sink op ids across node restarts.
    pub instance: u64,
    /// Schema-store initialisation latency given to the managers this node creates
    /// (see `DispatcherManager::schema_store_init_ms`).
    pub schema_store_init_ms: [u64; 2],
    /// Trigger-creation latency given to the managers this node creates
    /// (see `DispatcherManager::trigger_create_ms`).
    pub trigger_create_ms: [u64; 2],
    /// Delay range of a table dispatcher's first events (see
    /// `DispatcherManager::first_event_ms`).
    pub first_event_ms: [u64; 2],
    /// `fenced`: the capture lost its etcd session and local-fenced; the message handler
    /// is deregistered (new maintainer messages are dropped).
    pub fenced: bool,
    /// `Close` started (the server is closing).
    pub closing: bool,
    /// `Close` returned: every manager was closed and deleted.
    pub closed: bool,
    /// Managers whose creation is held by `NewDispatcherManagerDelay`, with the
    /// changefeed's messages that wait behind it (the bootstrap first).
    initializing: BTreeMap<ChangefeedId, Initializing>,
}

/// How long `NewDispatcherManager` takes with `NewDispatcherManagerDelay` on: the
/// integration test `capture_session_done_during_task` sets it to `sleep(4000)`.
pub const NEW_DISPATCHER_MANAGER_DELAY_MS: u64 = 4000;

/// A manager being created (`registerInitializingDispatcherManager`) by the bootstrap
/// `running`. The orchestrator handles one changefeed's control messages one at a time
/// (its shard), so the bootstrap, post-bootstrap and close requests that arrive
/// meanwhile wait in the shard's pending queue: at most one per message kind, a newer
/// maintainer epoch replacing the waiting one, and a close with `removed` upgrading a
/// waiting close of no newer epoch (`pendingMessageQueue.TryEnqueue`); the kind keeps
/// its place in the queue. The dispatcher-side messages (schedule, merge, heartbeat
/// responses) travel through the heartbeat collector's per-changefeed stream instead,
/// which exists only once the manager registered it, so they are dropped meanwhile.
#[derive(Debug)]
struct Initializing {
    ready_at_ms: u64,
    running: (NodeId, Message),
    queue: PendingMessageQueue,
}

/// The orchestrator's queue key (`getPendingMessageKey`): the kind of a control message
/// it queues; `None` for the messages it does not handle.
pub fn pending_kind(msg: &Message) -> Option<std::mem::Discriminant<Message>> {
    match msg {
        Message::MaintainerBootstrapRequest { .. }
        | Message::MaintainerPostBootstrapRequest { .. }
        | Message::MaintainerCloseRequest { .. } => Some(std::mem::discriminant(msg)),
        _ => None,
    }
}

fn pending_epoch(msg: &Message) -> Epoch {
    match msg {
        Message::MaintainerBootstrapRequest { maintainer_epoch, .. }
        | Message::MaintainerPostBootstrapRequest { maintainer_epoch, .. }
        | Message::MaintainerCloseRequest { maintainer_epoch, .. } => *maintainer_epoch,
        _ => 0,
    }
}

/// `shouldReplacePendingMessage`.
pub fn replaces(old: &Message, new: &Message) -> bool {
    if pending_epoch(new) > pending_epoch(old) {
        return true;
    }
    match (old, new) {
        (
            Message::MaintainerCloseRequest { removed: false, maintainer_epoch: o, .. },
            Message::MaintainerCloseRequest { removed: true, maintainer_epoch: n, .. },
        ) => n >= o,
        _ => false,
    }
}

/// A shard's `pendingMessageQueue` for one changefeed: at most one message per kind
/// waits, in arrival order of the kinds.
#[derive(Debug, Default)]
pub struct PendingMessageQueue {
    items: Vec<(NodeId, Message)>,
}

impl PendingMessageQueue {
    /// `Pop`: the oldest waiting message; its kind may be queued again afterwards.
    pub fn pop(&mut self) -> Option<(NodeId, Message)> {
        (!self.items.is_empty()).then(|| self.items.remove(0))
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// `TryEnqueue`; false when the message is dropped.
    pub fn try_enqueue(&mut self, from: NodeId, msg: Message) -> bool {
        let Some(kind) = pending_kind(&msg) else { return false };
        match self.items.iter_mut().find(|(_, m)| pending_kind(m) == Some(kind)) {
            Some(slot) => {
                if replaces(&slot.1, &msg) {
                    hit(P::OrchQueueReplaced);
                    *slot = (from, msg);
                    true
                } else {
                    false
                }
            }
            None => {
                self.items.push((from, msg));
                true
            }
        }
    }
}

impl Initializing {
    fn enqueue(&mut self, from: NodeId, msg: Message) -> bool {
        self.queue.try_enqueue(from, msg)
    }
}

impl DispatcherOrchestrator {
    pub fn new(node: NodeId, instance: u64) -> Self {
        DispatcherOrchestrator { node, instance, ..Default::default() }
    }

    pub fn cf_of(msg: &Message) -> Option<&ChangefeedId> {
        match msg {
            Message::MaintainerBootstrapRequest { cf, .. }
            | Message::MaintainerPostBootstrapRequest { cf, .. }
            | Message::MaintainerCloseRequest { cf, .. }
            | Message::ScheduleDispatcherRequest { cf, .. }
            | Message::MergeDispatcherRequest { cf, .. }
            | Message::HeartBeatResponse { cf, .. }
            | Message::RedoMetaMessage { cf, .. }
            | Message::RedoResolvedTsForwardMessage { cf, .. } => Some(cf),
            _ => None,
        }
    }

    /// Handle a message for the dispatcher side of this node; replies go to `from`.
    pub fn handle_message(&mut self, ctx: &mut Ctx, from: NodeId, msg: Message) {
        if self.fenced || self.closing {
            // The handler of the maintainer topic is deregistered.
            hit(P::OrchDropFenced);
            return;
        }
        let Some(cf) = Self::cf_of(&msg).cloned() else { return };
        if let Some(init) = self.initializing.get_mut(&cf) {
            let what = msg.name();
            if init.enqueue(from, msg) {
                hit(P::OrchQueuedWhileCreating);
            } else {
                hit(P::OrchDropWhileCreating);
                trace_ev!(
                    ctx,
                    Role::Orchestrator,
                    0,
                    "drop message while dispatcher manager is created",
                    changefeed = cf,
                    message = what,
                    from = from
                );
            }
            return;
        }
        self.dispatch(ctx, from, msg, true);
    }

    /// Handle one message of a changefeed that no manager creation holds up.
    /// `may_delay`: the creation of a manager may be held by `NewDispatcherManagerDelay`
    /// (false for the bootstrap whose held creation has just returned).
    fn dispatch(&mut self, ctx: &mut Ctx, from: NodeId, msg: Message, may_delay: bool) {
        let Some(cf) = Self::cf_of(&msg).cloned() else { return };
        if let Message::MaintainerBootstrapRequest { maintainer_epoch, config, .. } = &msg {
            // Only a bootstrap that would create a manager consults the tombstone, and
            // epoch 0 (no ordering) is refused by any tombstone: one at epoch 0 exists only
            // for a removed changefeed (dispatcher_orchestrator.go:201-209).
            let tomb = if self.managers.contains_key(&cf) { None } else { self.closed_maintainer_epochs.get(&cf) };
            if let Some(&closed) = tomb {
                if (*maintainer_epoch == 0 || *maintainer_epoch <= closed) && !ctx.bug(Bug::NoEpochFencing) {
                    hit(P::OrchIgnoreClosedGeneration);
                    trace_ev!(
                        ctx,
                        Role::Orchestrator,
                        *maintainer_epoch,
                        "ignore bootstrap of closed generation",
                        changefeed = cf,
                        closed_epoch = closed
                    );
                    return;
                }
            }
            if !self.managers.contains_key(&cf) && may_delay && ctx.fp(FP_NEW_DISPATCHER_MANAGER_DELAY) {
                let ready_at_ms = ctx.now_ms + NEW_DISPATCHER_MANAGER_DELAY_MS;
                hit(P::OrchManagerDelayed);
                trace_ev!(
                    ctx,
                    Role::Orchestrator,
                    *maintainer_epoch,
                    "new dispatcher manager delayed",
                    changefeed = cf,
                    ready_at_ms = ready_at_ms
                );
                self.initializing.insert(
                    cf,
                    Initializing { ready_at_ms, running: (from, msg), queue: PendingMessageQueue::default() },
                );
                return;
            }
            if self.managers.contains_key(&cf) {
                hit(P::OrchReuseManager);
            } else {
                hit(P::OrchCreateManager);
                self.next_sink_instance += 1;
                let inst = (self.instance << 16) | self.next_sink_instance;
                let mut dm = DispatcherManager::new(cf.clone(), self.node, config.clone(), inst);
                dm.schema_store_init_ms = self.schema_store_init_ms;
                dm.trigger_create_ms = self.trigger_create_ms;
                dm.first_event_ms = self.first_event_ms;
                trace_ev!(ctx, Role::Orchestrator, *maintainer_epoch, "create dispatcher manager", changefeed = cf);
                self.managers.insert(cf.clone(), dm);
                // A new manager clears the changefeed's tombstone (dispatcher_orchestrator.go:263-264).
                self.closed_maintainer_epochs.remove(&cf);
            }
        }
        if let Message::MaintainerCloseRequest { maintainer_epoch, removed, .. } = &msg {
            if !self.managers.contains_key(&cf) {
                // No manager: the generation is closed here all the same; remember it so
                // a late bootstrap of it cannot create one (`recordClosedMaintainerEpochLocked`:
                // epoch 0 only for a removal, never backwards).
                let e = *maintainer_epoch;
                hit(P::OrchCloseWithoutManager);
                self.record_closed_epoch(&cf, e, *removed);
                ctx.send(from, Message::MaintainerCloseResponse { cf, success: true, maintainer_epoch: e });
                return;
            }
        }
        let removed = matches!(msg, Message::MaintainerCloseRequest { removed: true, .. });
        let Some(dm) = self.managers.get_mut(&cf) else { return };
        let reply = dm.handle_control(ctx, from, msg);
        self.after_close(ctx, &cf, from, reply, removed);
    }

    /// `recordClosedMaintainerEpochLocked` (dispatcher_orchestrator.go:769-780): epoch 0
    /// is remembered only for a removal; a tombstone never moves backwards.
    fn record_closed_epoch(&mut self, cf: &ChangefeedId, e: Epoch, removed: bool) {
        if e == 0 && !removed {
            return;
        }
        let cur = self.closed_maintainer_epochs.entry(cf.clone()).or_insert(e);
        *cur = (*cur).max(e);
    }

    fn after(&mut self, ctx: &mut Ctx, cf: &ChangefeedId, to: NodeId, reply: Option<Message>) {
        self.after_close(ctx, cf, to, reply, false)
    }

    fn after_close(&mut self, ctx: &mut Ctx, cf: &ChangefeedId, to: NodeId, reply: Option<Message>, removed: bool) {
        // The close request's epoch (`recordClosedMaintainerEpochLocked`, never lowered):
        // it can be newer than the manager's owner under `close-older-owner-manager`.
        let close_epoch = match &reply {
            Some(Message::MaintainerCloseResponse { maintainer_epoch, .. }) => *maintainer_epoch,
            _ => 0,
        };
        if let Some(r) = reply {
            ctx.send(to, r);
        }
        if let Some(dm) = self.managers.get(cf) {
            if dm.closed {
                let e = dm.maintainer_epoch.max(close_epoch);
                hit(P::OrchManagerDeleted);
                self.managers.remove(cf);
                self.record_closed_epoch(cf, e, removed);
            }
        }
    }

    /// Re-check failpoints on every manager (a paused Create may now proceed), finish
    /// post-bootstrap handlers whose schema-store initialisation is done, and advance a
    /// running `Close`.
    pub fn poll_failpoints(&mut self, ctx: &mut Ctx) {
        self.finish_initializing(ctx);
        let cfs: Vec<ChangefeedId> = self.managers.keys().cloned().collect();
        for cf in cfs {
            let fenced = self.fenced;
            let Some(dm) = self.managers.get_mut(&cf) else { continue };
            let mut replies = dm.finish_bootstrap(ctx);
            replies.extend(dm.finish_post_bootstrap(ctx, fenced));
            replies.extend(dm.poll_failpoints(ctx));
            for (to, r) in replies {
                self.after(ctx, &cf, to, Some(r));
            }
        }
        self.poll_close(ctx);
    }

    /// Creations held by `NewDispatcherManagerDelay` that are due return: on a fenced or
    /// closing orchestrator the new manager is fenced and dropped without a response
    /// ("write path closed while creating dispatcher manager", the queued messages go
    /// with the shard); otherwise the bootstrap goes on with the new manager, then the
    /// messages that waited behind it, in queue order.
    ///
    /// Simplification: a plain server close (no fence first) drops the waiting messages
    /// too; TiCDC's shards would still handle them (each failing to register). No
    /// scenario closes a capture without fencing it first.
    fn finish_initializing(&mut self, ctx: &mut Ctx) {
        let due: Vec<ChangefeedId> =
            self.initializing.iter().filter(|(_, i)| ctx.now_ms >= i.ready_at_ms).map(|(cf, _)| cf.clone()).collect();
        for cf in due {
            let init = self.initializing.remove(&cf).unwrap();
            if self.fenced || self.closing {
                hit(P::OrchDelayedCreationFenced);
                trace_ev!(
                    ctx,
                    Role::Orchestrator,
                    0,
                    "dispatcher manager write path closed while creating dispatcher manager",
                    changefeed = cf,
                    dropped = init.queue.len()
                );
                continue;
            }
            let (from, msg) = init.running;
            hit(P::OrchDelayedCreationDone);
            self.dispatch(ctx, from, msg, false);
            let mut queue = init.queue;
            while let Some((from, msg)) = queue.pop() {
                if let Some(again) = self.initializing.get_mut(&cf) {
                    again.enqueue(from, msg);
                } else {
                    self.dispatch(ctx, from, msg, true);
                }
            }
        }
    }

    /// Whether a handler admitted before the fence is still running: `Close` waits for
    /// every shard's current message (`shard.Wait()`), a manager being created included.
    pub fn in_flight(&self) -> bool {
        !self.initializing.is_empty()
            || self
                .managers
                .values()
                .any(|dm| dm.post_bootstrap_in_flight.is_some() || dm.bootstrap_in_flight.is_some())
    }

    /// `LocalFence`: set `fenced`, deregister the handler, local-fence every manager, wait
    /// for admitted messages (their handlers see `fenced` and fence their manager again
    /// on return, see `DispatcherManager::finish_post_bootstrap`), fence again.
    ///
    /// Simplification: the wait is not a blocking call here; `Close` (which waits for the
    /// same in-flight handlers first) is what the capture's exit depends on.
    pub fn local_fence(&mut self, ctx: &mut Ctx) {
        if !self.fenced {
            hit(P::OrchLocalFence);
            self.fenced = true;
            trace_ev!(
                ctx,
                Role::Orchestrator,
                0,
                "dispatcher orchestrator local fence triggered",
                managers = self.managers.len()
            );
        }
        for dm in self.managers.values_mut() {
            dm.local_fence(ctx);
        }
    }

    /// Start `Close` (server close): the handler is deregistered; once no admitted
    /// handler is in flight, `TryClose` every manager until all are closed.
    pub fn close(&mut self, ctx: &mut Ctx) {
        if self.closing {
            return;
        }
        self.closing = true;
        trace_ev!(ctx, Role::Orchestrator, 0, "dispatcher orchestrator is closing", managers = self.managers.len());
        self.poll_close(ctx);
    }

    fn poll_close(&mut self, ctx: &mut Ctx) {
        if !self.closing || self.closed {
            return;
        }
        if self.in_flight() {
            hit(P::OrchCloseWaitsInFlight);
            return;
        }
        let cfs: Vec<ChangefeedId> = self.managers.keys().cloned().collect();
        for cf in cfs {
            if self.managers.get_mut(&cf).unwrap().try_close(ctx) {
                self.managers.remove(&cf);
            }
        }
        if self.managers.is_empty() {
            hit(P::OrchClosed);
            self.closed = true;
            trace_ev!(ctx, Role::Orchestrator, 0, "dispatcher orchestrator closed");
        }
    }
}
