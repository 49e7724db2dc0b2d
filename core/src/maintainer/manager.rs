//! Maintainer manager: one per node. Hosts this node's maintainers, handles
//! `AddMaintainerRequest` / `RemoveMaintainerRequest`, routes dispatcher-manager
//! messages to the right maintainer, and reports `MaintainerHeartbeat` to the
//! coordinator every 200 ms.

use super::{Maintainer, MaintainerState};
use crate::coverage::{hit, Point as P};
use crate::effects::*;
use crate::messages::*;
use crate::trace_ev;
use crate::types::*;
use crate::upstream::SchemaView;
use std::collections::{BTreeMap, BTreeSet};

pub const MAINTAINER_HEARTBEAT_MS: u64 = 200;

#[derive(Debug, Default)]
pub struct MaintainerManager {
    pub node: NodeId,
    pub maintainers: BTreeMap<ChangefeedId, Maintainer>,
    pub alive: BTreeSet<NodeId>,
    pub coordinator: Option<NodeId>,
}

impl MaintainerManager {
    pub fn new(node: NodeId) -> Self {
        MaintainerManager { node, ..Default::default() }
    }

    fn cf_of(msg: &Message) -> Option<&ChangefeedId> {
        match msg {
            Message::MaintainerBootstrapResponse { cf, .. }
            | Message::MaintainerPostBootstrapResponse { cf, .. }
            | Message::MaintainerCloseResponse { cf, .. }
            | Message::HeartBeatRequest { cf, .. }
            | Message::BlockStatusRequest { cf, .. }
            | Message::RedoResolvedTsProgressMessage { cf, .. }
            | Message::CheckpointTsMessage { cf, .. } => Some(cf),
            _ => None,
        }
    }

    pub fn handle_message(&mut self, ctx: &mut Ctx, from: NodeId, msg: Message, schema: &dyn SchemaView) {
        // `onDispatchMaintainerRequest`: add/remove requests only from the current
        // coordinator (an old owner may still act until it notices its lost session).
        if let Message::AddMaintainerRequest { cf, maintainer_epoch, .. }
        | Message::RemoveMaintainerRequest { cf, maintainer_epoch, .. } = &msg
        {
            if self.coordinator != Some(from) {
                hit(P::MmIgnoreNonCurrentCoordinator);
                trace_ev!(
                    ctx,
                    Role::Maintainer,
                    *maintainer_epoch,
                    "ignore maintainer request from non-current coordinator",
                    changefeed = cf,
                    from = from,
                    coordinator = self.coordinator.map(|c| c.to_string()).unwrap_or_default()
                );
                return;
            }
        }
        match msg {
            Message::AddMaintainerRequest { cf, config, checkpoint_ts, is_new_changefeed, maintainer_epoch } => {
                // A zero checkpoint is invalid: the request is dropped
                // (`handleAddMaintainer`, maintainer/maintainer_manager_maintainers.go:195-200).
                if checkpoint_ts == 0 {
                    hit(P::MmIgnoreZeroCheckpoint);
                    trace_ev!(
                        ctx,
                        Role::Maintainer,
                        maintainer_epoch,
                        "ignore add maintainer request with invalid checkpointTs",
                        changefeed = cf
                    );
                    return;
                }
                if let Some(m) = self.maintainers.get(&cf) {
                    // Replace only a fully stopped maintainer, and only with a newer epoch.
                    if m.state != MaintainerState::Stopped || maintainer_epoch <= m.epoch || maintainer_epoch == 0 {
                        hit(P::MmRejectAdd);
                        trace_ev!(
                            ctx,
                            Role::Maintainer,
                            m.epoch,
                            "reject add maintainer",
                            changefeed = cf,
                            epoch = maintainer_epoch
                        );
                        return;
                    }
                    hit(P::MmReplaceStopped);
                }
                hit(P::MmAddMaintainer);
                let m = Maintainer::new(
                    ctx,
                    cf.clone(),
                    config,
                    checkpoint_ts,
                    maintainer_epoch,
                    is_new_changefeed,
                    self.alive.clone(),
                );
                self.maintainers.insert(cf, m);
            }
            Message::RemoveMaintainerRequest { cf, cascade, removed, maintainer_epoch } => {
                match self.maintainers.get_mut(&cf) {
                    Some(m) if maintainer_epoch == m.epoch || m.epoch == 0 => {
                        hit(P::MmRemove);
                        m.remove(ctx, cascade, removed)
                    }
                    Some(_) => hit(P::MmRemoveStaleEpoch),
                    // `handleRemoveMaintainer`: a non-cascade remove of a maintainer this
                    // node does not host (e.g. it stopped and was forgotten after a report
                    // that got lost) is answered Stopped with the request's epoch, so a
                    // coordinator resending a move's remove learns the origin is gone.
                    None if !cascade => {
                        hit(P::MmRemoveUnknown);
                        if let Some(c) = self.coordinator {
                            trace_ev!(
                                ctx,
                                Role::Maintainer,
                                maintainer_epoch,
                                "ignore remove maintainer request, since the maintainer not found",
                                changefeed = cf
                            );
                            let st = MaintainerStatus {
                                changefeed: cf,
                                checkpoint_ts: 0,
                                bootstrap_done: false,
                                errors: vec![],
                                maintainer_epoch,
                                removed: true,
                            };
                            ctx.send(c, Message::MaintainerHeartbeat { statuses: vec![st] });
                        }
                    }
                    // The cascade remove of a maintainer this node does not host starts one
                    // that closes every dispatcher manager and then reports Stopped
                    // (maintainer/maintainer_manager_maintainers.go:344-362).
                    None => {
                        hit(P::MmRemoveUnknownCascade);
                        let mut m = Maintainer::new_for_remove(ctx, cf.clone(), maintainer_epoch, self.alive.clone());
                        m.remove(ctx, true, removed);
                        self.maintainers.insert(cf, m);
                    }
                }
                self.send_heartbeat(ctx);
            }
            Message::CheckpointTsMessage { .. } => {}
            other => {
                let Some(cf) = Self::cf_of(&other).cloned() else { return };
                if let Some(m) = self.maintainers.get_mut(&cf) {
                    m.handle_message(ctx, from, other, schema);
                } else {
                    hit(P::MmRouteUnknownChangefeed);
                }
            }
        }
    }

    pub fn on_node_change(&mut self, ctx: &mut Ctx, alive: &BTreeSet<NodeId>, schema: &dyn SchemaView) {
        self.alive = alive.clone();
        for m in self.maintainers.values_mut() {
            m.on_node_change(ctx, alive, schema);
        }
    }

    /// `MaintainerHeartbeat` to the coordinator.
    /// [`super::Maintainer::flush_assertions`] of every maintainer on the node: the
    /// caller runs it after each step that may have touched one.
    pub fn flush_assertions(&mut self, ctx: &mut Ctx) {
        for m in self.maintainers.values_mut() {
            m.flush_assertions(ctx);
        }
    }

    pub fn send_heartbeat(&mut self, ctx: &mut Ctx) {
        let Some(c) = self.coordinator else { return };
        // Sent even with no maintainer: a new coordinator waits for every capture's report.
        let statuses: Vec<MaintainerStatus> = self.maintainers.values_mut().map(|m| m.status()).collect();
        ctx.send(c, Message::MaintainerHeartbeat { statuses });
        // A stopped maintainer is forgotten once reported.
        self.maintainers.retain(|_, m| m.state != MaintainerState::Stopped);
    }
}
