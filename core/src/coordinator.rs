//! Coordinator (§10.5, §11): one per cluster, on the owner node. Places one maintainer
//! per changefeed, persists the changefeed epoch *before* every new maintainer
//! generation, persists the checkpoint the maintainer reports (monotonically), and
//! turns retryable errors into a cascade stop and a restart after exponential backoff.
//!
//! Simplifications: no GC safepoint; changefeed creation/removal APIs are not modelled
//! (changefeeds are created by the scenario through [`MetaStore`]); the backoff has no
//! randomization (TiCDC uses 0.1) so restart times are exact in timelines.

use crate::assertions::Assertion as A;
use crate::config::ChangefeedConfig;
use crate::coverage::{hit, Point as P};
use crate::effects::*;
use crate::messages::*;
use crate::trace_ev;
use crate::types::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Initial restart backoff.
pub const BACKOFF_INITIAL_MS: u64 = 10_000;
/// Maximum restart backoff.
pub const BACKOFF_MAX_MS: u64 = 600_000;

/// The persisted (etcd) part of a changefeed; survives every node kill.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChangefeedInfo {
    pub id: ChangefeedId,
    pub config: ChangefeedConfig,
    pub epoch: Epoch,
    pub checkpoint_ts: Ts,
    pub state: FeedState,
    pub last_error: Option<String>,
    pub created: bool,
}

/// The etcd model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MetaStore {
    pub changefeeds: BTreeMap<ChangefeedId, ChangefeedInfo>,
}

impl MetaStore {
    /// `BumpChangefeedEpoch`: max(candidate, persisted + 1), persisted before use.
    pub fn bump_epoch(&mut self, cf: &ChangefeedId, candidate: Epoch) -> Epoch {
        let info = self.changefeeds.get_mut(cf).expect("changefeed exists");
        info.epoch = candidate.max(info.epoch + 1);
        info.epoch
    }
}

#[derive(Clone, Debug, Default)]
struct Runtime {
    node: Option<NodeId>,
    epoch: Epoch,
    bootstrap_done: bool,
    stopping: bool,
    next_retry_ms: u64,
    backoff_ms: u64,
    last_checkpoint_advance_ms: u64,
    /// The backoff's checkpoint (`Backoff.checkpointTs`): the highest checkpoint a status
    /// reported; `None` until the first status (then the persisted checkpoint).
    backoff_checkpoint_ts: Option<Ts>,
    /// The add operator of the current generation is in flight: it finishes on the first
    /// status reporting `BootstrapDone` (`AddMaintainerOperator.Check`); until then no
    /// other operator (a move) is admitted (`precheckAddOperatorLocked`).
    adding: bool,
    /// Destination of a maintainer move in progress (`MoveMaintainerOperator`).
    move_to: Option<NodeId>,
    /// The epoch the move's destination gets: bumped and persisted when the move was
    /// admitted (`AddOperator`, coordinator/operator/operator_controller.go:121-159), while
    /// the origin keeps being removed with its own epoch.
    move_epoch: Option<Epoch>,
    /// Last status from the current maintainer (or when it was added).
    last_status_ms: u64,
    last_send_ms: u64,
    add_request: Option<Message>,
    /// A `failed` changefeed whose `StopChangefeed` is held by failpoint
    /// `BlockBeforeStopChangefeed` (its maintainer keeps running meanwhile).
    stop_blocked: bool,
    /// The stop in flight is `StopRemoteMaintainerWithMaintainerEpoch` of a maintainer the
    /// discovery found with an older epoch than the persisted one: its statuses reach only
    /// the stop (`UpdateOperatorStatus`), never the changefeed's status, which takes the
    /// persisted epoch only (coordinator/controller.go:602-624).
    stale_stop: bool,
}

#[derive(Debug, Default)]
pub struct Coordinator {
    pub node: NodeId,
    pub alive: BTreeSet<NodeId>,
    runtime: BTreeMap<ChangefeedId, Runtime>,
    /// A new owner first learns running maintainers from node heartbeats: it places no
    /// changefeed until every live node has reported or the discovery window ends.
    reported: BTreeSet<NodeId>,
    /// Discovery is over (TiCDC's `initialized`): from then on running maintainers are
    /// never adopted, a status counts only from the changefeed's recorded node
    /// (`handleBootstrapResponses` returns once initialized, coordinator/controller.go:553;
    /// `validateMaintainerNode`, :658-676).
    pub(crate) initialized: bool,
    /// Maintainers the discovery found with another epoch than the persisted one, by
    /// (changefeed, node): stopped when the discovery ends (`selectBootstrapMaintainer`,
    /// `stopStaleBootstrapMaintainers`, coordinator/controller.go:746-776, 815-891).
    stale_discovered: BTreeMap<(ChangefeedId, NodeId), Epoch>,
}

/// How long a new owner waits for maintainer heartbeats before placing changefeeds.
/// Resend period of the coordinator's add/remove maintainer requests.
pub const COORDINATOR_RESEND_MS: u64 = 1_000;
/// Resend period of a move's remove request to the origin.
pub const MOVE_REMOVE_RESEND_MS: u64 = 1_000;

impl Coordinator {
    pub fn new(node: NodeId, alive: BTreeSet<NodeId>) -> Self {
        Coordinator {
            node,
            alive,
            runtime: BTreeMap::new(),
            reported: BTreeSet::new(),
            initialized: false,
            stale_discovered: BTreeMap::new(),
        }
    }

    /// A new coordinator schedules nothing until every live capture has reported its
    /// maintainers (TiCDC's coordinator bootstrap waits for all nodes' responses), so a
    /// maintainer that is still running is discovered, never duplicated.
    fn discovering(&self) -> bool {
        !self.alive.is_subset(&self.reported)
    }

    /// Whether discovery is over: before, the API and moves are refused.
    pub fn discovery_done(&self) -> bool {
        self.initialized
    }

    /// Current maintainer node of a changefeed, as the coordinator sees it.
    pub fn maintainer_of(&self, cf: &ChangefeedId) -> Option<NodeId> {
        self.runtime.get(cf).and_then(|r| r.node)
    }

    fn trace(&self, ctx: &mut Ctx, epoch: Epoch, kind: &'static str, fields: Vec<(&'static str, String)>) {
        ctx.trace(Role::Coordinator, epoch, kind, fields);
    }

    /// Periodic work: place changefeeds without a maintainer.
    pub fn tick(&mut self, ctx: &mut Ctx, meta: &mut MetaStore) {
        if self.discovering() {
            hit(P::CoordDiscovering);
            return;
        }
        if !self.initialized {
            self.stop_stale_discovered(ctx);
        }
        self.initialized = true;
        let cfs: Vec<ChangefeedId> = meta.changefeeds.keys().cloned().collect();
        for cf in cfs {
            let info = meta.changefeeds[&cf].clone();
            let rt = self.runtime.entry(cf.clone()).or_default();
            if info.state == FeedState::Failed || info.state == FeedState::Stopped {
                // Never placed again (failed) or not while paused (stopped); a maintainer still
                // running (its stop held, one a new coordinator discovered, or a paused
                // changefeed's) is stopped, resent until it reports removed.
                Self::stop_failed(ctx, &cf, rt, info.state == FeedState::Failed);
                continue;
            }
            // Operators resend their request until the maintainer answers (messages can be lost).
            if let (Some(n), false) = (rt.node, rt.stopping) {
                if ctx.now_ms >= rt.last_status_ms.max(rt.last_send_ms) + COORDINATOR_RESEND_MS {
                    if let Some(req) = rt.add_request.clone() {
                        hit(P::CoordResendAdd);
                        rt.last_send_ms = ctx.now_ms;
                        ctx.send(n, req);
                    }
                }
                continue;
            }
            if let (Some(n), true, None) = (rt.node, rt.stopping, rt.move_to) {
                if ctx.now_ms >= rt.last_send_ms + COORDINATOR_RESEND_MS {
                    hit(P::CoordResendStop);
                    rt.last_send_ms = ctx.now_ms;
                    let epoch = rt.epoch;
                    ctx.send(
                        n,
                        Message::RemoveMaintainerRequest {
                            cf: cf.clone(),
                            cascade: true,
                            removed: false,
                            maintainer_epoch: epoch,
                        },
                    );
                }
                continue;
            }
            if let (Some(n), true, Some(_)) = (rt.node, rt.stopping, rt.move_to) {
                // MoveMaintainerOperator.Schedule: resend the origin's remove until it stops.
                if ctx.now_ms >= rt.next_retry_ms {
                    hit(P::CoordResendMoveRemove);
                    rt.next_retry_ms = ctx.now_ms + MOVE_REMOVE_RESEND_MS;
                    let epoch = rt.epoch;
                    ctx.send(
                        n,
                        Message::RemoveMaintainerRequest {
                            cf: cf.clone(),
                            cascade: false,
                            removed: false,
                            maintainer_epoch: epoch,
                        },
                    );
                }
                continue;
            }
            if rt.node.is_some() || rt.stopping || ctx.now_ms < rt.next_retry_ms || self.alive.is_empty() {
                continue;
            }
            // Persist the new epoch before the new generation exists.
            let alive: Vec<NodeId> = self.alive.iter().copied().collect();
            let pick = alive[(ctx.rng.next_u64() % alive.len() as u64) as usize];
            let move_epoch = rt.move_epoch.take();
            let (n, move_epoch) = match rt.move_to.take() {
                Some(d) if self.alive.contains(&d) => {
                    hit(P::CoordAddMoveDestination);
                    (d, move_epoch)
                }
                _ => (pick, None),
            };
            // Drawn for a move's destination too, so the draws after it stay the same.
            let candidate = ctx.rng.next_u64() >> 24;
            let persisted = meta.changefeeds.get(&cf).map(|i| i.epoch).unwrap_or(0);
            // A move's destination takes the epoch persisted at its admission (a later
            // bump, by a stop and resume meanwhile, supersedes it).
            let (epoch, bumped_now) = match move_epoch {
                Some(e) if e == persisted => (e, false),
                _ => (meta.bump_epoch(&cf, candidate), true),
            };
            let last = self.runtime.get(&cf).map(|rt| rt.epoch).unwrap_or(0);
            let above_persisted = if bumped_now { epoch > persisted } else { epoch == persisted };
            ctx.always(A::CoordinatorEpochIncreases, above_persisted && epoch > last, || {
                format!("changefeed={} persisted_epoch={} epoch={} new_epoch={}", cf, persisted, last, epoch)
            });
            let info = meta.changefeeds.get_mut(&cf).unwrap();
            let is_new = !info.created;
            info.created = true;
            if info.state == FeedState::Warning {
                info.state = FeedState::Normal;
            }
            let rt = self.runtime.get_mut(&cf).unwrap();
            rt.node = Some(n);
            rt.epoch = epoch;
            rt.adding = true;
            // `bootstrap_done` is the last status's flag and survives the restart or move
            // (TiCDC keeps the `Changefeed` object and its status): the new generation's
            // first status flips it back.
            rt.last_checkpoint_advance_ms = ctx.now_ms;
            let checkpoint_ts = info.checkpoint_ts;
            let config = info.config.clone();
            trace_ev!(
                ctx,
                Role::Coordinator,
                epoch,
                "add maintainer",
                changefeed = cf,
                node = n,
                checkpoint_ts = checkpoint_ts
            );
            let req = Message::AddMaintainerRequest {
                cf,
                config,
                checkpoint_ts,
                is_new_changefeed: is_new,
                maintainer_epoch: epoch,
            };
            hit(P::CoordAddMaintainer);
            rt.add_request = Some(req.clone());
            rt.last_send_ms = ctx.now_ms;
            rt.last_status_ms = ctx.now_ms;
            ctx.send(n, req);
        }
    }

    pub fn handle_message(&mut self, ctx: &mut Ctx, from: NodeId, msg: Message, meta: &mut MetaStore) {
        let Message::MaintainerHeartbeat { statuses } = msg else { return };
        // This report is part of the discovery if it is still on (the last node's report
        // completes it).
        let discovery = !self.initialized;
        self.reported.insert(from);
        let blocked = self.state_change_blocked();
        for st in statuses {
            // Discovery: adopt a running maintainer of the current (persisted) epoch. Only
            // during discovery: afterwards a status of a generation this coordinator stopped
            // (a status sent before its stop report and handled after it) must not revive it.
            let persisted_epoch = meta.changefeeds.get(&st.changefeed).map(|i| i.epoch);
            // `selectBootstrapMaintainer`: a report whose epoch is not the persisted one (an
            // epoch-less report matches any) is a stale owner, stopped when discovery ends.
            if discovery
                && st.maintainer_epoch != 0
                && persisted_epoch.is_some_and(|e| e != 0 && e != st.maintainer_epoch)
            {
                self.stale_discovered.insert((st.changefeed.clone(), from), st.maintainer_epoch);
            }
            let rt = self.runtime.entry(st.changefeed.clone()).or_default();
            if discovery
                && rt.node.is_none()
                && !rt.stopping
                && !st.removed
                && persisted_epoch == Some(st.maintainer_epoch)
            {
                hit(P::CoordDiscoverMaintainer);
                rt.node = Some(from);
                let old = rt.epoch;
                ctx.always(A::CoordinatorEpochNoRegress, st.maintainer_epoch >= old, || {
                    format!("changefeed={} epoch={} new_epoch={}", st.changefeed, old, st.maintainer_epoch)
                });
                rt.epoch = st.maintainer_epoch;
                trace_ev!(
                    ctx,
                    Role::Coordinator,
                    st.maintainer_epoch,
                    "discover running maintainer",
                    changefeed = st.changefeed,
                    node = from
                );
            }
            let rt = self.runtime.get_mut(&st.changefeed).unwrap();
            // A status without an epoch (a capture of an older version) matches any
            // generation (`MaintainerEpochMatches`, `pkg/common/maintainer_epoch.go:23`;
            // `coordinator/controller.go:617`).
            let epoch_matches = st.maintainer_epoch == 0 || rt.epoch == 0 || st.maintainer_epoch == rt.epoch;
            if rt.node != Some(from) || !epoch_matches {
                hit(P::CoordStatusOtherGeneration);
                continue; // status of another node or generation
            }
            if rt.stale_stop {
                // `StopChangefeedOperator.Check`: the stale owner reported stopped; the
                // changefeed, still absent, is placed with a new epoch.
                if st.removed {
                    hit(P::CoordStaleMaintainerStopped);
                    rt.stale_stop = false;
                    rt.stopping = false;
                    rt.node = None;
                    let epoch = rt.epoch;
                    self.trace(ctx, epoch, "changefeed stopped", vec![("changefeed", st.changefeed.to_string())]);
                }
                continue;
            }
            rt.last_status_ms = ctx.now_ms;
            // `Changefeed.UpdateStatus`: a fast-fail error always counts; a retryable one
            // only in a status that neither flips `BootstrapDone` (returns early) nor
            // advances the backoff's checkpoint (`Backoff.CheckStatus` returns Normal
            // first). The maintainer clears its errors once sent, so such an error is gone.
            let persisted = meta.changefeeds.get(&st.changefeed).map(|i| i.checkpoint_ts).unwrap_or(0);
            let flipped = st.bootstrap_done != rt.bootstrap_done;
            // The backoff's checkpoint is fixed when the changefeed is loaded (`NewBackoff`),
            // here at its first status, and moves only in `CheckStatus`.
            let advanced = st.checkpoint_ts > *rt.backoff_checkpoint_ts.get_or_insert(persisted);
            let fatal = st.errors.iter().find(|e| e.code.fails_changefeed()).cloned();
            let acted = fatal.clone().or_else(|| if flipped || advanced { None } else { st.errors.first().cloned() });
            if acted.is_none() && !st.errors.is_empty() {
                hit(P::CoordErrorIgnored);
                trace_ev!(
                    ctx,
                    Role::Coordinator,
                    rt.epoch,
                    "ignore maintainer error",
                    changefeed = st.changefeed,
                    error = st.errors[0].message,
                    reason = if flipped { "bootstrap done changed" } else { "checkpoint advanced" }
                );
            }
            if advanced && !flipped {
                rt.backoff_checkpoint_ts = Some(st.checkpoint_ts);
            }
            if rt.stopping {
                if st.removed {
                    hit(P::CoordChangefeedStopped);
                    rt.stopping = false;
                    rt.node = None;
                    if rt.move_to.is_some() {
                        rt.next_retry_ms = 0; // the move adds the target right away
                    }
                    let epoch = rt.epoch;
                    self.trace(ctx, epoch, "changefeed stopped", vec![("changefeed", st.changefeed.to_string())]);
                    continue;
                }
                // A move in flight does not hold back the changefeed's error handling: the
                // warning stops this generation (`StopChangefeedWithMaintainerEpoch`), and
                // `pushStopChangefeedOperator` replaces the MoveMaintainerOperator.
                if rt.move_to.is_none() || acted.is_none() {
                    continue;
                }
                hit(P::CoordMoveReplacedByStop);
                rt.move_to = None;
                rt.stopping = false;
                trace_ev!(
                    ctx,
                    Role::Coordinator,
                    rt.epoch,
                    "move maintainer replaced by stop",
                    changefeed = st.changefeed
                );
            }
            rt.bootstrap_done = st.bootstrap_done;
            if st.bootstrap_done {
                rt.adding = false;
            }
            let Some(info) = meta.changefeeds.get_mut(&st.changefeed) else { continue };
            if info.state == FeedState::Failed {
                // `checkFailedStatus`: a failed changefeed changes no more; its stop (held or
                // in progress) is driven by `tick`.
                continue;
            }
            // While a state change is held before its stop, the coordinator's run loop
            // (which also persists checkpoints) is paused.
            if st.checkpoint_ts > info.checkpoint_ts && blocked {
                hit(P::CoordCheckpointHeld);
            }
            if st.checkpoint_ts > info.checkpoint_ts && !blocked {
                hit(P::CoordCheckpointAdvanced);
                info.checkpoint_ts = st.checkpoint_ts;
                rt.last_checkpoint_advance_ms = ctx.now_ms;
                rt.backoff_ms = 0;
            }
            // `findFastFailError`: any fast-fail / unretryable error fails the changefeed.
            if let Some(e) = acted.as_ref() {
                match e.code.fails_changefeed() {
                    true => {
                        // `handleStateChange(failed)`: persist the state and the error, then
                        // `StopChangefeed` (cascade, not removed) unless the failpoint holds it.
                        hit(P::CoordChangefeedFailed);
                        info.state = FeedState::Failed;
                        info.last_error = Some(e.message.clone());
                        let epoch = rt.epoch;
                        let cf = st.changefeed.clone();
                        self.trace(
                            ctx,
                            epoch,
                            "changefeed failed",
                            vec![
                                ("changefeed", cf.to_string()),
                                ("code", e.code.rfc().to_string()),
                                ("error", e.message.clone()),
                            ],
                        );
                        let rt = self.runtime.get_mut(&cf).unwrap();
                        Self::stop_failed(ctx, &cf, rt, true);
                    }
                    false => {
                        // StateWarning: the persisted epoch is bumped with the state and the
                        // error, then this generation is stopped (cascade) with its own epoch
                        // and the changefeed retried after the backoff, which bumps again
                        // (`updateChangefeedEpoch`, coordinator/coordinator.go:273-285,
                        // controller.go:1201-1223). So a later coordinator's discovery finds
                        // this generation stale instead of adopting it. The bump draws
                        // nothing: epochs only need to grow (TiCDC takes a PD TSO).
                        hit(P::CoordRetryableError);
                        info.state = FeedState::Warning;
                        info.last_error = Some(e.message.clone());
                        info.epoch += 1;
                        let backoff = if rt.backoff_ms == 0 {
                            BACKOFF_INITIAL_MS
                        } else {
                            (rt.backoff_ms * 2).min(BACKOFF_MAX_MS)
                        };
                        rt.backoff_ms = backoff;
                        rt.next_retry_ms = ctx.now_ms + backoff;
                        rt.stopping = true;
                        rt.last_send_ms = ctx.now_ms;
                        let old_epoch = rt.epoch;
                        let cf = st.changefeed.clone();
                        let n = from;
                        trace_ev!(
                            ctx,
                            Role::Coordinator,
                            old_epoch,
                            "changefeed retryable error, stop and restart",
                            changefeed = cf,
                            error = e.message,
                            next_retry_ms = rt.next_retry_ms
                        );
                        ctx.send(
                            n,
                            Message::RemoveMaintainerRequest {
                                cf,
                                cascade: true,
                                removed: false,
                                maintainer_epoch: old_epoch,
                            },
                        );
                    }
                }
            }
        }
    }

    /// `StopChangefeed` of a failed changefeed (cascade, not removed), held while
    /// `BlockBeforeStopChangefeed` is on; resent until the maintainer reports removed.
    fn stop_failed(ctx: &mut Ctx, cf: &ChangefeedId, rt: &mut Runtime, failed: bool) {
        let Some(n) = rt.node else {
            rt.stop_blocked = false;
            return;
        };
        let epoch = rt.epoch;
        if rt.stopping {
            if ctx.now_ms >= rt.last_send_ms + COORDINATOR_RESEND_MS {
                hit(P::CoordResendStop);
                rt.last_send_ms = ctx.now_ms;
                ctx.send(
                    n,
                    Message::RemoveMaintainerRequest {
                        cf: cf.clone(),
                        cascade: true,
                        removed: false,
                        maintainer_epoch: epoch,
                    },
                );
            }
            return;
        }
        // The failpoint sits on the failed state change's path only (coordinator.go:305-307);
        // a pause stops the changefeed directly (controller.go:978-1012).
        if failed && ctx.fp(FP_BLOCK_BEFORE_STOP_CHANGEFEED) {
            if !rt.stop_blocked {
                hit(P::CoordStopBlocked);
                rt.stop_blocked = true;
                trace_ev!(ctx, Role::Coordinator, epoch, "block before stop changefeed", changefeed = cf);
            }
            return;
        }
        hit(P::CoordStopChangefeed);
        rt.stop_blocked = false;
        rt.stopping = true;
        rt.last_send_ms = ctx.now_ms;
        trace_ev!(ctx, Role::Coordinator, epoch, "stop changefeed", changefeed = cf, node = n, removed = false);
        ctx.send(
            n,
            Message::RemoveMaintainerRequest { cf: cf.clone(), cascade: true, removed: false, maintainer_epoch: epoch },
        );
    }

    /// `stopStaleBootstrapMaintainers` (coordinator/controller.go:855-891): each maintainer
    /// the discovery found with a stale epoch is stopped (cascade). A changefeed whose slot
    /// is free gets a stop that occupies it until the old owner reports stopped
    /// (`StopRemoteMaintainerWithMaintainerEpoch`, coordinator/operator/operator_controller.go:270-289),
    /// so no new generation is added while the old one runs; otherwise a one-shot remove.
    fn stop_stale_discovered(&mut self, ctx: &mut Ctx) {
        for ((cf, n), epoch) in std::mem::take(&mut self.stale_discovered) {
            trace_ev!(
                ctx,
                Role::Coordinator,
                epoch,
                "ignore running maintainer with stale epoch when bootstrapping",
                changefeed = cf,
                node = n
            );
            let remove = Message::RemoveMaintainerRequest {
                cf: cf.clone(),
                cascade: true,
                removed: false,
                maintainer_epoch: epoch,
            };
            let rt = self.runtime.entry(cf).or_default();
            if rt.node.is_some() {
                hit(P::CoordStaleMaintainerRemoveSent);
                ctx.send(n, remove);
                continue;
            }
            hit(P::CoordStaleMaintainerStop);
            rt.node = Some(n);
            rt.epoch = epoch;
            rt.stopping = true;
            rt.stale_stop = true;
            rt.last_send_ms = ctx.now_ms;
            ctx.send(n, remove);
        }
    }

    /// Whether a `failed` state change is held by `BlockBeforeStopChangefeed`.
    fn state_change_blocked(&self) -> bool {
        self.runtime.values().any(|r| r.stop_blocked)
    }

    /// Node membership change: a maintainer on a lost node is re-placed with a new epoch.
    pub fn on_node_change(&mut self, ctx: &mut Ctx, alive: &BTreeSet<NodeId>, meta: &mut MetaStore) {
        self.alive = alive.clone();
        for (cf, rt) in self.runtime.iter_mut() {
            if let Some(n) = rt.node {
                if !alive.contains(&n) {
                    hit(P::CoordNodeLost);
                    trace_ev!(ctx, Role::Coordinator, rt.epoch, "maintainer node lost", changefeed = cf, node = n);
                    rt.node = None;
                    rt.stopping = false;
                    rt.stale_stop = false;
                    if rt.move_to.is_some() {
                        // A move whose origin is lost goes on to add the destination at
                        // once, as when the origin reports stopped
                        // (`coordinator/operator/operator_move.go:133`).
                        hit(P::CoordMoveOriginLost);
                        rt.next_retry_ms = 0;
                    }
                }
            }
        }
        self.tick(ctx, meta);
    }

    /// `cdc cli changefeed pause`: persist the Stopped state and stop the maintainer
    /// (cascade: every dispatcher manager closes). Returns false if the changefeed does
    /// not exist or is not running.
    /// Refused while discovery is on: the changefeeds are loaded only when it ends
    /// (`finishBootstrap`, coordinator/controller.go:711-812), so TiCDC's API finds none
    /// before (`changefeed not found`, :981-985, :1026-1029) and its schedulers, which ask
    /// for moves, start there too (:803-806); the same holds for resume and move.
    pub fn pause_changefeed(&mut self, ctx: &mut Ctx, cf: &ChangefeedId, meta: &mut MetaStore) -> bool {
        if !self.initialized {
            hit(P::CoordApiBeforeDiscovery);
            return false;
        }
        let Some(info) = meta.changefeeds.get_mut(cf) else { return false };
        if info.state == FeedState::Stopped || info.state == FeedState::Failed {
            return false;
        }
        hit(P::CoordPause);
        info.state = FeedState::Stopped;
        let rt = self.runtime.entry(cf.clone()).or_default();
        rt.move_to = None;
        let epoch = rt.epoch;
        trace_ev!(
            ctx,
            Role::Coordinator,
            epoch,
            "pause changefeed",
            changefeed = cf,
            node = rt.node.map(|n| n.to_string()).unwrap_or_default()
        );
        if let Some(n) = rt.node {
            rt.stopping = true;
            rt.last_send_ms = ctx.now_ms;
            ctx.send(
                n,
                Message::RemoveMaintainerRequest {
                    cf: cf.clone(),
                    cascade: true,
                    removed: false,
                    maintainer_epoch: epoch,
                },
            );
        }
        true
    }

    /// `cdc cli changefeed resume`: back to Normal with the error cleared; the next tick
    /// places a maintainer (with a new epoch, from the persisted checkpoint and
    /// configuration) once the paused one has stopped. TiCDC resumes a stopped or a
    /// failed changefeed (`FeedState.IsResumable`, pkg/config/changefeed.go:113-118;
    /// `Controller.ResumeChangefeed`, coordinator/controller.go:1031-1039; the error is
    /// cleared, etcd_backend.go:328-342). A failed one is resumed here only once its stop
    /// has finished (docs/fidelity.md row 51). Returns false if the changefeed is neither.
    pub fn resume_changefeed(&mut self, ctx: &mut Ctx, cf: &ChangefeedId, meta: &mut MetaStore) -> bool {
        if !self.initialized {
            hit(P::CoordApiBeforeDiscovery);
            return false;
        }
        let Some(info) = meta.changefeeds.get_mut(cf) else { return false };
        let stop_pending = self.runtime.get(cf).is_some_and(|rt| rt.node.is_some() || rt.stop_blocked);
        match info.state {
            FeedState::Stopped => {}
            FeedState::Failed if !stop_pending => hit(P::CoordResumeFailed),
            _ => return false,
        }
        hit(P::CoordResume);
        info.state = FeedState::Normal;
        info.last_error = None;
        // `ResumeChangefeed` persists a new epoch at once (controller.go:1045-1046,
        // etcd_backend.go:328-342): a coordinator taking over before the re-add finds the
        // stopping maintainer stale instead of adopting it. The stop in flight keeps its own
        // epoch (`rt.epoch`); the add bumps again, as TiCDC's add operator does. The model's
        // candidate is the next epoch (TiCDC's is a TSO).
        info.epoch += 1;
        let rt = self.runtime.entry(cf.clone()).or_default();
        rt.stop_blocked = false;
        rt.next_retry_ms = 0;
        rt.backoff_ms = 0;
        // A resume starts from a status without `BootstrapDone` (`GetStatusForResume`)
        // and a new backoff from the checkpoint (`NewChangefeed`).
        rt.bootstrap_done = false;
        rt.backoff_checkpoint_ts = None;
        trace_ev!(
            ctx,
            Role::Coordinator,
            rt.epoch,
            "resume changefeed",
            changefeed = cf,
            checkpoint_ts = info.checkpoint_ts
        );
        self.tick(ctx, meta);
        true
    }

    /// Whether an operator of the changefeed is in flight (or it is not placed): a move
    /// request now would be refused, and one later may be admitted.
    pub fn operator_in_flight(&self, cf: &ChangefeedId) -> bool {
        self.runtime.get(cf).is_none_or(|rt| rt.stopping || rt.adding || rt.node.is_none())
    }

    /// Move a changefeed's maintainer to another live node (`MoveMaintainerOperator`):
    /// the origin is removed non-cascade first; the destination is added by the next tick.
    /// `MoveMaintainerOperator`: remove the maintainer from its node (non-cascade: the
    /// dispatchers keep running, only the table trigger is removed), wait for it to report
    /// removed, then add it on `dest` with a bumped epoch. Returns the origin.
    ///
    /// Refused (`None`) while another operator of the changefeed is in flight (its add
    /// until `BootstrapDone`, a move or a stop; [`Self::operator_in_flight`]), as
    /// `AddOperator` refuses it; TiCDC's schedulers (balance, drain) try again later.
    pub fn move_maintainer(
        &mut self,
        ctx: &mut Ctx,
        cf: &ChangefeedId,
        dest: NodeId,
        meta: &mut MetaStore,
    ) -> Option<NodeId> {
        if !self.initialized {
            hit(P::CoordApiBeforeDiscovery);
            return None;
        }
        let rt = self.runtime.get_mut(cf)?;
        let n = rt.node?;
        if rt.stopping || rt.adding || n == dest {
            hit(P::CoordMoveRefused);
            return None;
        }
        hit(P::CoordMoveMaintainer);
        let epoch = rt.epoch;
        // `AddOperator` bumps and persists the next owner epoch before the move is queued
        // (TiCDC asks PD for a TSO candidate; persisted + 1 here, as its unit tests expect).
        rt.move_epoch = Some(meta.bump_epoch(cf, 0));
        rt.stopping = true;
        rt.move_to = Some(dest);
        rt.next_retry_ms = ctx.now_ms + MOVE_REMOVE_RESEND_MS;
        trace_ev!(ctx, Role::Coordinator, epoch, "move maintainer", changefeed = cf, from = n, to = dest);
        ctx.send(
            n,
            Message::RemoveMaintainerRequest {
                cf: cf.clone(),
                cascade: false,
                removed: false,
                maintainer_epoch: epoch,
            },
        );
        Some(n)
    }
}
