//! Dispatcher orchestrator: one per node. Creates or reuses the dispatcher manager of
//! a changefeed on `MaintainerBootstrapRequest`, routes post-bootstrap and close
//! requests, and keeps close tombstones (`closedMaintainerEpochs`) so a delayed
//! bootstrap of an already-closed generation cannot recreate a manager.

use super::manager::DispatcherManager;
use crate::bugs::Bug;
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
    /// `fenced`: the capture lost its etcd session and local-fenced; the message handler
    /// is deregistered (new maintainer messages are dropped).
    pub fenced: bool,
    /// `Close` started (the server is closing).
    pub closing: bool,
    /// `Close` returned: every manager was closed and deleted.
    pub closed: bool,
}

impl DispatcherOrchestrator {
    pub fn new(node: NodeId, instance: u64) -> Self {
        DispatcherOrchestrator { node, instance, ..Default::default() }
    }

    fn cf_of(msg: &Message) -> Option<&ChangefeedId> {
        match msg {
            Message::MaintainerBootstrapRequest { cf, .. }
            | Message::MaintainerPostBootstrapRequest { cf, .. }
            | Message::MaintainerCloseRequest { cf, .. }
            | Message::ScheduleDispatcherRequest { cf, .. }
            | Message::MergeDispatcherRequest { cf, .. }
            | Message::HeartBeatResponse { cf, .. } => Some(cf),
            _ => None,
        }
    }

    /// Handle a message for the dispatcher side of this node; replies go to `from`.
    pub fn handle_message(&mut self, ctx: &mut Ctx, from: NodeId, msg: Message) {
        if self.fenced || self.closing {
            // The handler of the maintainer topic is deregistered.
            return;
        }
        let Some(cf) = Self::cf_of(&msg).cloned() else { return };
        if let Message::MaintainerBootstrapRequest { maintainer_epoch, config, .. } = &msg {
            if let Some(&closed) = self.closed_maintainer_epochs.get(&cf) {
                if *maintainer_epoch <= closed && *maintainer_epoch != 0 && !ctx.bug(Bug::NoEpochFencing) {
                    trace_ev!(ctx, Role::Orchestrator, *maintainer_epoch, "ignore bootstrap of closed generation", changefeed = cf, closed_epoch = closed);
                    return;
                }
            }
            if !self.managers.contains_key(&cf) {
                self.next_sink_instance += 1;
                let inst = (self.instance << 16) | self.next_sink_instance;
                let mut dm = DispatcherManager::new(cf.clone(), self.node, config.clone(), inst);
                dm.schema_store_init_ms = self.schema_store_init_ms;
                trace_ev!(ctx, Role::Orchestrator, *maintainer_epoch, "create dispatcher manager", changefeed = cf);
                self.managers.insert(cf.clone(), dm);
            }
        }
        if let Message::MaintainerCloseRequest { maintainer_epoch, .. } = &msg {
            if !self.managers.contains_key(&cf) {
                let e = *maintainer_epoch;
                ctx.send(from, Message::MaintainerCloseResponse { cf, success: true, maintainer_epoch: e });
                return;
            }
        }
        let Some(dm) = self.managers.get_mut(&cf) else { return };
        let reply = dm.handle_control(ctx, from, msg);
        self.after(ctx, &cf, from, reply);
    }

    fn after(&mut self, ctx: &mut Ctx, cf: &ChangefeedId, to: NodeId, reply: Option<Message>) {
        if let Some(r) = reply {
            ctx.send(to, r);
        }
        if let Some(dm) = self.managers.get(cf) {
            if dm.closed {
                self.closed_maintainer_epochs.insert(cf.clone(), dm.maintainer_epoch);
                self.managers.remove(cf);
            }
        }
    }

    /// Re-check failpoints on every manager (a paused Create may now proceed), finish
    /// post-bootstrap handlers whose schema-store initialisation is done, and advance a
    /// running `Close`.
    pub fn poll_failpoints(&mut self, ctx: &mut Ctx) {
        let cfs: Vec<ChangefeedId> = self.managers.keys().cloned().collect();
        for cf in cfs {
            let fenced = self.fenced;
            let Some(dm) = self.managers.get_mut(&cf) else { continue };
            let mut replies = dm.finish_post_bootstrap(ctx, fenced);
            replies.extend(dm.poll_failpoints(ctx));
            for (to, r) in replies {
                self.after(ctx, &cf, to, Some(r));
            }
        }
        self.poll_close(ctx);
    }

    /// Whether a handler admitted before the fence is still running (`msgGuardWaitGroup`).
    pub fn in_flight(&self) -> bool {
        self.managers.values().any(|dm| dm.post_bootstrap_in_flight.is_some())
    }

    /// `LocalFence`: set `fenced`, deregister the handler, local-fence every manager, wait
    /// for admitted messages (their handlers see `fenced` and fence their manager again
    /// on return, see `DispatcherManager::finish_post_bootstrap`), fence again.
    ///
    /// Simplification: the wait is not a blocking call here; `Close` (which waits for the
    /// same in-flight handlers first) is what the capture's exit depends on.
    pub fn local_fence(&mut self, ctx: &mut Ctx) {
        if !self.fenced {
            self.fenced = true;
            trace_ev!(ctx, Role::Orchestrator, 0, "dispatcher orchestrator local fence triggered", managers = self.managers.len());
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
        if !self.closing || self.closed || self.in_flight() {
            return;
        }
        let cfs: Vec<ChangefeedId> = self.managers.keys().cloned().collect();
        for cf in cfs {
            if self.managers.get_mut(&cf).unwrap().try_close(ctx) {
                self.managers.remove(&cf);
            }
        }
        if self.managers.is_empty() {
            self.closed = true;
            trace_ev!(ctx, Role::Orchestrator, 0, "dispatcher orchestrator closed");
        }
    }
}
