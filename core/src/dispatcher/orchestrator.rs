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
                let dm = DispatcherManager::new(cf.clone(), self.node, config.clone(), inst);
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

    /// Re-check failpoints on every manager (a paused Create may now proceed).
    pub fn poll_failpoints(&mut self, ctx: &mut Ctx) {
        let cfs: Vec<ChangefeedId> = self.managers.keys().cloned().collect();
        for cf in cfs {
            let replies = self.managers.get_mut(&cf).unwrap().poll_failpoints(ctx);
            for (to, r) in replies {
                self.after(ctx, &cf, to, Some(r));
            }
        }
    }
}
