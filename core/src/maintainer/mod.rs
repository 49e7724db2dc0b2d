//! The maintainer: one per changefeed, on one node (§4-§9).
//!
//! Entry points mirror the goroutines of TiCDC's maintainer so the simulator can
//! interleave them: [`Maintainer::handle_message`] (event loop: bootstrap responses,
//! heartbeats, block statuses), [`Maintainer::on_tick`] (100 ms event-loop period:
//! resends), [`Maintainer::execute_operators`] (operator controller task),
//! [`Maintainer::run_basic_scheduler`] (basic scheduler task, with its admission as
//! one step or, under `nonatomic-operator-admission`, as two),
//! [`Maintainer::run_balance_scheduler`] (checker-scheduler task: balance and split-group
//! balance, [`split_balance`]), [`Maintainer::calc_checkpoint`]
//! (checkpoint goroutine) and the API handlers (`api_move_table`, `api_split_table`).
//!
//! With redo (`consistent.level = "eventual"`) the per-mode state is twice, in
//! [`Pipeline`]s, and [`Maintainer::in_mode`] runs the same code over the redo one; the
//! redo entry points are [`Maintainer::run_redo_meta`] (1 s), [`Maintainer::execute_redo_operators`]
//! and [`Maintainer::run_redo_basic_scheduler`].

pub mod barrier;
pub mod books;
pub mod bootstrap;
pub mod manager;
pub mod operator;
pub mod pipeline;
pub mod scheduler;
pub mod span_controller;
pub mod split_balance;

use crate::bugs::Bug;
use crate::config::ChangefeedConfig;
use crate::coverage::{hit, Point as P};
use crate::effects::*;
use crate::messages::*;
use crate::types::*;
use crate::upstream::SchemaView;
use barrier::{BarrierCtx, BarrierFixes, BarrierOut};
use operator::{
    MoveDispatcherOperator, Operator, OperatorController, RemoveDispatcherOperator, RemovePostFinish,
    SplitDispatcherOperator,
};
pub use pipeline::Pipeline;
use span_controller::{ReplicaState, SpanController};
use std::collections::{BTreeMap, BTreeSet};

/// Event-loop period (`periodEventInterval`).
pub const MAINTAINER_TICK_MS: u64 = 100;
/// Bootstrap request resend to nodes that have not answered.
pub const BOOTSTRAP_RESEND_MS: u64 = 500;
/// Gap between the two halves of a heartbeat's handling (watermark stored, statuses
/// applied) when they run as separate steps. In Go the gap is the time between releasing
/// the `checkpointTsByCapture` lock and taking the controllers' (microseconds, unbounded
/// under load). The simulator's clock puts every periodic task and delivery on a
/// millisecond grid (madsim adds 50 ns per timer advance, so no two timers coincide): with
/// no gap no other task could ever run in between, so the gap is the simulator's 1 ms
/// quantum (as local delivery).
pub const HEARTBEAT_HALVES_GAP_MS: u64 = 1;
/// Checkpoint calculation period.
pub const CHECKPOINT_INTERVAL_MS: u64 = 100;
/// `DefaultRegionRefreshInterval`: the region count refresher's default period
/// (`region-count-refresh-interval`).
pub const REGION_REFRESH_INTERVAL_MS: u64 = 300_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaintainerState {
    Bootstrapping,
    Working,
    /// Removing mode: quiesced, closing dispatcher managers (cascade) or its trigger.
    Removing,
    Stopped,
}

#[derive(Debug)]
pub struct Maintainer {
    pub cf: ChangefeedId,
    pub node: NodeId,
    pub epoch: Epoch,
    pub config: ChangefeedConfig,
    pub start_checkpoint: Ts,
    pub is_new: bool,
    pub state: MaintainerState,
    pub alive: BTreeSet<NodeId>,
    /// The default mode's controllers, or the redo ones while [`Self::in_mode`] runs redo.
    pub pipe: Pipeline,
    /// The redo mode's controllers (redo on only), swapped with `pipe` by [`Self::in_mode`].
    pub redo_pipe: Option<Pipeline>,
    /// `redoMetaTs`: the (checkpoint, resolved) last sent to the redo trigger's manager,
    /// each raised only (both start at the changefeed checkpoint).
    pub redo_meta_ts: (Ts, Ts),
    /// `redoResolvedTs`: the highest flushed redo resolved ts a redo trigger reported,
    /// forwarded to every node.
    pub redo_resolved_ts: Ts,
    pub bootstrap_responses: BTreeMap<NodeId, Option<Message>>,
    /// The bootstrapper's `allNodesReady`: every tracked node has answered and the
    /// responses were handed to `FinishBootstrap` once. A failed `FinishBootstrap` keeps
    /// the responses (they are cleared only on success), so a node joining later resets
    /// this and its answer hands the whole set over again.
    pub all_nodes_ready: bool,
    bootstrap_last_sent: BTreeMap<NodeId, u64>,
    pub post_bootstrap_done: bool,
    /// TiCDC's `initialized`: set when the bootstrap finished (see [`Self::initialized`]).
    pub bootstrapped: bool,
    post_bootstrap_last_sent: u64,
    pub errors: Vec<RunningError>,
    /// With the candidate fix `sticky-bootstrap-error`: the errors of a failed bootstrap,
    /// sent with every status until the maintainer bootstraps (TiCDC sends them once).
    pub bootstrap_errors: Vec<RunningError>,
    pub cascade: bool,
    pub removed_feed: bool,
    pub close_pending: BTreeSet<NodeId>,
    /// The time of the region count refresher's last full refresh.
    pub region_refresh_ms: u64,
    /// Nodes that joined after bootstrap and have not answered their bootstrap request
    /// yet (the bootstrapper keeps resending to them).
    pub late_bootstrap: BTreeSet<NodeId>,
    /// Heartbeats whose watermark is stored and whose statuses wait for their own step
    /// ([`Self::apply_heartbeat_statuses`]): `onHeartbeatRequest` releases the
    /// `checkpointTsByCapture` lock after `Set` and takes the controllers' locks in
    /// `HandleStatus`, so the checkpoint goroutine can run in between
    /// (maintainer/maintainer.go:916-963). The event loop finishes them before its next
    /// event (one goroutine): every event-loop entry point drains this queue first.
    pub pending_heartbeats: std::collections::VecDeque<PendingHeartbeat>,
}

/// The second half of a heartbeat: (sender, statuses, complete-status flag).
#[derive(Clone, Debug)]
pub struct PendingHeartbeat {
    pub from: NodeId,
    pub statuses: Vec<TableSpanStatus>,
    pub complete: bool,
}

/// Traffic state of a whole-table span in the default group's split checker.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DefaultSpanTraffic {
    /// `trafficScore`: consecutive samples at or over `write-key-threshold` (always 0
    /// with the threshold at 0).
    pub score: u32,
    /// `latestTraffic`: the last sample at or over the threshold.
    pub latest: f64,
}

impl DefaultSpanTraffic {
    /// `defaultSpanSplitChecker.UpdateStatus` with a sample (`EventSizePerSecond != 0`).
    pub fn sample(&mut self, event_size: u64, write_threshold: u64) {
        if event_size == 0 {
            return;
        }
        if write_threshold == 0 || event_size < write_threshold {
            self.score = 0;
        } else {
            self.score += 1;
            self.latest = event_size as f64;
        }
    }
}

impl Maintainer {
    fn unstarted(
        ctx: &mut Ctx,
        cf: ChangefeedId,
        config: ChangefeedConfig,
        checkpoint: Ts,
        epoch: Epoch,
        is_new: bool,
        alive: BTreeSet<NodeId>,
    ) -> Self {
        let ddl_id = ctx.new_dispatcher_id();
        let mut sc = SpanController::new(ddl_id, ctx.node, checkpoint, config.scheduler.clone());
        sc.ignore_pending_block_start_ts = ctx.bug(Bug::IgnorePendingBlockStartTs);
        let oc = OperatorController::with_batch_size(config.scheduler.add_table_batch_size);
        // The redo table trigger: its own ID, drawn after the event trigger's and only
        // with redo, Working on this node and never scheduled (maintainer.go:187-192).
        let redo_pipe = config.redo_enabled().then(|| {
            hit(P::MaintainerRedoPipeline);
            let redo_ddl_id = ctx.new_dispatcher_id();
            let mut sc = SpanController::new(redo_ddl_id, ctx.node, checkpoint, config.scheduler.clone());
            sc.ignore_pending_block_start_ts = ctx.bug(Bug::IgnorePendingBlockStartTs);
            let oc = OperatorController::with_batch_size(config.scheduler.add_table_batch_size);
            Pipeline::new(Mode::Redo, sc, oc, checkpoint)
        });
        let m = Maintainer {
            cf,
            node: ctx.node,
            epoch,
            config,
            start_checkpoint: checkpoint,
            is_new,
            state: MaintainerState::Bootstrapping,
            alive: alive.clone(),
            pipe: Pipeline::new(Mode::Default, sc, oc, checkpoint),
            redo_pipe,
            redo_meta_ts: (checkpoint, checkpoint),
            redo_resolved_ts: checkpoint,
            bootstrap_responses: BTreeMap::new(),
            all_nodes_ready: false,
            bootstrap_last_sent: BTreeMap::new(),
            post_bootstrap_done: false,
            bootstrapped: false,
            post_bootstrap_last_sent: 0,
            pending_heartbeats: Default::default(),
            errors: Vec::new(),
            bootstrap_errors: Vec::new(),
            cascade: false,
            removed_feed: false,
            close_pending: BTreeSet::new(),
            region_refresh_ms: ctx.now_ms,
            late_bootstrap: BTreeSet::new(),
        };
        let mut fields = vec![("checkpoint_ts", checkpoint.to_string()), ("table_trigger", ddl_id.to_string())];
        if let Some(r) = &m.redo_pipe {
            fields.push(("redo_table_trigger", r.sc.ddl_span_id.to_string()));
        }
        m.trace(ctx, "maintainer created", fields);
        m
    }

    /// Run `f` with `mode`'s controllers as `self.pipe` (TiCDC's `getSpanController(mode)`
    /// and the like): for redo, `pipe` and `redo_pipe` are swapped for the call and
    /// swapped back, so code over "the active pipeline" serves both modes. `None` (and
    /// `f` not run): redo mode on a changefeed without redo. Calls do not nest.
    pub fn in_mode<R>(&mut self, mode: Mode, f: impl FnOnce(&mut Self) -> R) -> Option<R> {
        debug_assert_eq!(self.pipe.mode, Mode::Default, "in_mode does not nest");
        match mode {
            Mode::Default => Some(f(self)),
            Mode::Redo => {
                let mut other = self.redo_pipe.take()?;
                std::mem::swap(&mut self.pipe, &mut other);
                let r = f(self);
                std::mem::swap(&mut self.pipe, &mut other);
                debug_assert!(self.pipe.mode == Mode::Default && other.mode == Mode::Redo && self.redo_pipe.is_none());
                self.redo_pipe = Some(other);
                Some(r)
            }
        }
    }

    /// A maintainer added by the coordinator: it bootstraps every alive node at once
    /// (`EventInit` -> `initialize`).
    pub fn new(
        ctx: &mut Ctx,
        cf: ChangefeedId,
        config: ChangefeedConfig,
        checkpoint: Ts,
        epoch: Epoch,
        is_new: bool,
        alive: BTreeSet<NodeId>,
    ) -> Self {
        let mut m = Self::unstarted(ctx, cf, config, checkpoint, epoch, is_new, alive.clone());
        for n in alive {
            m.bootstrap_responses.insert(n, None);
            m.send_bootstrap(ctx, n);
        }
        m
    }

    /// `NewMaintainerForRemove` (maintainer/maintainer.go:289-305): the cascade remove of a
    /// changefeed this node hosts no maintainer for starts one that only closes every
    /// dispatcher manager (checkpoint 1, default config, the request's epoch). It gets no
    /// `EventInit`, so it never bootstraps.
    pub fn new_for_remove(ctx: &mut Ctx, cf: ChangefeedId, epoch: Epoch, alive: BTreeSet<NodeId>) -> Self {
        Self::unstarted(ctx, cf, ChangefeedConfig::default(), 1, epoch, false, alive)
    }

    /// Move the failed assertions of the controllers and the barrier (which have no
    /// [`Ctx`]) into `ctx`; the caller runs it after each entry point.
    pub fn flush_assertions(&mut self, ctx: &mut Ctx) {
        for p in std::iter::once(&mut self.pipe).chain(self.redo_pipe.as_mut()) {
            p.oc.failed.drain_into(ctx.out);
            p.sc.failed.drain_into(ctx.out);
            p.barrier.failed.drain_into(ctx.out);
        }
    }

    pub fn trace(&self, ctx: &mut Ctx, kind: &'static str, mut fields: Vec<(&'static str, String)>) {
        fields.insert(0, ("changefeed", self.cf.to_string()));
        ctx.trace(Role::Maintainer, self.epoch, kind, fields);
    }

    fn send_bootstrap(&mut self, ctx: &mut Ctx, n: NodeId) {
        let own = n == self.node;
        self.bootstrap_last_sent.insert(n, ctx.now_ms);
        ctx.send(
            n,
            Message::MaintainerBootstrapRequest {
                table_trigger_redo_dispatcher_id: if own {
                    self.redo_pipe.as_ref().map(|r| r.sc.ddl_span_id)
                } else {
                    None
                },
                cf: self.cf.clone(),
                config: self.config.clone(),
                start_ts: self.start_checkpoint,
                table_trigger_event_dispatcher_id: if own { Some(self.pipe.sc.ddl_span_id) } else { None },
                is_new_changefeed: own && self.is_new,
                maintainer_epoch: self.epoch,
            },
        );
    }

    /// TiCDC's `initialized`: set once `FinishBootstrap` built the post-bootstrap request,
    /// before the post-bootstrap response arrives (that response only stops the resends).
    /// Heartbeats, block statuses, the checkpoint, a move's non-cascade remove and the
    /// coordinator's `BootstrapDone` all follow it, so a move can remove the trigger while
    /// its post-bootstrap request still waits in the capture's orchestrator queue.
    /// A maintainer removed (cascade) before its bootstrap finished never becomes
    /// initialized, although it is `Removing`.
    pub fn initialized(&self) -> bool {
        self.bootstrapped
    }

    /// `GetMaintainerStatus`: the errors kept since the last status go with it, once
    /// (maintainer.go:380-390); a failed bootstrap's errors go with every status under the
    /// candidate fix `sticky-bootstrap-error`.
    pub fn status(&mut self) -> MaintainerStatus {
        let mut errors = std::mem::take(&mut self.errors);
        if !self.bootstrapped {
            for e in &self.bootstrap_errors {
                if !errors.contains(e) {
                    hit(P::MaintainerBootstrapErrorResent);
                    errors.push(e.clone());
                }
            }
        }
        MaintainerStatus {
            changefeed: self.cf.clone(),
            checkpoint_ts: self.pipe.committed_checkpoint,
            bootstrap_done: self.bootstrapped,
            errors,
            maintainer_epoch: self.epoch,
            removed: self.state == MaintainerState::Stopped,
        }
    }

    // ------------------------------------------------------------------ messages

    pub fn handle_message(&mut self, ctx: &mut Ctx, from: NodeId, msg: Message, schema: &dyn SchemaView) {
        if self.state == MaintainerState::Stopped {
            return;
        }
        // The event loop is one goroutine: a heartbeat it is handling finishes before the
        // next event.
        self.drain_heartbeat_statuses(ctx);
        match msg {
            Message::MaintainerBootstrapResponse { maintainer_epoch, .. } => {
                self.trace(ctx, "maintainer received bootstrap response", vec![("node", from.to_string())]);
                hit(P::MaintainerBootstrapResponse);
                if !epoch_matches(maintainer_epoch, self.epoch) {
                    hit(P::MaintainerBootstrapResponseStaleEpoch);
                    return;
                }
                // `onMaintainerBootstrapResponse`: an error goes to the coordinator in any
                // state, and the node stays unanswered (the bootstrapper keeps resending).
                if let Message::MaintainerBootstrapResponse { err: Some(e), .. } = &msg {
                    self.trace(
                        ctx,
                        "bootstrap response error",
                        vec![("node", from.to_string()), ("error", e.message.clone())],
                    );
                    hit(P::MaintainerBootstrapResponseError);
                    self.errors.push(e.clone());
                    return;
                }
                if self.state != MaintainerState::Bootstrapping {
                    // A node that joined later: FinishBootstrap returns nil; stop resending.
                    self.late_bootstrap.remove(&from);
                    hit(P::MaintainerLateBootstrapResponse);
                    return;
                }
                if !self.bootstrap_responses.contains_key(&from) {
                    // `HandleBootstrapResponse`: a node the bootstrapper does not track.
                    hit(P::MaintainerBootstrapResponseUntracked);
                    return;
                }
                self.bootstrap_responses.insert(from, Some(msg));
                self.on_bootstrap_responses(ctx, schema);
            }
            Message::MaintainerPostBootstrapResponse { maintainer_epoch, err, .. } => {
                hit(P::MaintainerPostBootstrapResponse);
                if !epoch_matches(maintainer_epoch, self.epoch) {
                    return;
                }
                match err {
                    // `onMaintainerPostBootstrapResponse` -> `onError`: the error goes to
                    // the coordinator with the next status; the resends go on.
                    // Candidate fix `ignore-post-bootstrap-error-when-removing`: once a move
                    // removes this generation's trigger, its post-bootstrap is moot.
                    Some(e)
                        if self.state == MaintainerState::Removing
                            && ctx.fix(crate::bugs::Fix::IgnorePostBootstrapErrorWhenRemoving) =>
                    {
                        hit(P::MaintainerPostBootstrapErrorIgnoredWhileRemoving);
                        self.trace(
                            ctx,
                            "ignore post bootstrap error while removing",
                            vec![("node", from.to_string()), ("error", e.message.clone())],
                        );
                    }
                    Some(e) => {
                        hit(P::MaintainerPostBootstrapError);
                        self.trace(
                            ctx,
                            "post bootstrap failed",
                            vec![("node", from.to_string()), ("error", e.message.clone())],
                        );
                        self.errors.push(e);
                    }
                    None if !self.post_bootstrap_done => {
                        self.post_bootstrap_done = true;
                        self.trace(ctx, "post bootstrap done", vec![]);
                        hit(P::MaintainerPostBootstrapDone);
                    }
                    None => {}
                }
            }
            Message::MaintainerCloseResponse { maintainer_epoch, success, .. }
                if epoch_matches(maintainer_epoch, self.epoch) && success =>
            {
                self.close_pending.remove(&from);
                hit(P::MaintainerCloseResponse);
                self.maybe_stopped(ctx);
            }
            Message::MaintainerCloseResponse { .. } => {}
            Message::HeartBeatRequest { watermark, redo_watermark, statuses, err, complete_status, .. } => {
                // `onHeartbeatRequest` ignores heartbeats until the maintainer is
                // bootstrapped (`initialized` is set when the bootstrap finishes, before the
                // post-bootstrap response: that one only stops the resends).
                if !self.initialized() {
                    hit(P::MaintainerHeartbeatBeforeBootstrap);
                    // TiCDC returns silently; the trace names the terminal statuses lost
                    // this way (a one-shot Stopped report is never sent again).
                    for st in statuses.iter().filter(|st| st.state != ComponentState::Working) {
                        self.trace(
                            ctx,
                            "ignore heartbeat before bootstrap",
                            vec![
                                ("dispatcher", st.id.to_string()),
                                ("node", from.to_string()),
                                ("state", format!("{:?}", st.state)),
                                ("checkpoint_ts", st.checkpoint_ts.to_string()),
                            ],
                        );
                    }
                    return;
                }
                // `onHeartbeatRequest` returns before `onError` until initialized.
                if let Some(e) = err {
                    hit(P::MaintainerHeartbeatError);
                    self.trace(
                        ctx,
                        "dispatcher manager reported error",
                        vec![("node", from.to_string()), ("error", e.message.clone())],
                    );
                    self.errors.push(e);
                }
                // The watermark is stored before statuses are processed (checkpoint race fix):
                // `checkpointTsByCapture.Set` under the map's own lock
                // (maintainer/maintainer.go:916-919). The statuses follow as a step of their
                // own (`HandleStatus` under the controllers' locks, :948-963): the checkpoint
                // goroutine may run in between.
                let e = self.pipe.node_watermarks.entry(from).or_default();
                let before = *e;
                if watermark.seq > e.seq
                    || (watermark.seq == e.seq && watermark.checkpoint_ts > e.checkpoint_ts)
                    || e.seq == 0 && e.checkpoint_ts == 0
                {
                    *e = watermark;
                    hit(P::MaintainerWatermarkAdvanced);
                }
                let after = *e;
                self.assert_watermark_kept(ctx, from, before, after);
                if let (Some(w), Some(r)) = (redo_watermark, self.redo_pipe.as_mut()) {
                    store_redo_watermark(&mut r.node_watermarks, from, w);
                }
                hit(P::MaintainerHeartbeatFirstHalf);
                ctx.observe(Observation::HeartbeatWatermarkStored {
                    cf: self.cf.clone(),
                    maintainer_epoch: self.epoch,
                    from,
                    received: watermark,
                    stored: after,
                });
                self.pending_heartbeats.push_back(PendingHeartbeat { from, statuses, complete: complete_status });
                ctx.wake(HEARTBEAT_HALVES_GAP_MS, Continuation::MaintainerHeartbeatStatuses { cf: self.cf.clone() });
                if ctx.inline_continuations() {
                    self.drain_heartbeat_statuses(ctx);
                }
            }
            Message::BlockStatusRequest { statuses, mode, .. } => {
                if !self.initialized() || self.state == MaintainerState::Removing {
                    hit(P::MaintainerBlockStatusDropped);
                    return;
                }
                // To the barrier of the request's mode (maintainer.go:1006-1022).
                if mode == Mode::Default {
                    self.handle_block_statuses(ctx, from, &statuses, schema);
                } else if self.in_mode(mode, |m| m.handle_block_statuses(ctx, from, &statuses, schema)).is_none() {
                    hit(P::MaintainerRedoWithoutRedo);
                }
            }
            Message::RedoResolvedTsProgressMessage { resolved_ts, .. } => self.on_redo_persisted(ctx, resolved_ts),
            _ => {}
        }
    }

    /// `onRedoPersisted` (maintainer.go:602-617): a higher flushed redo resolved ts is
    /// forwarded to every node the bootstrapper tracks. No epoch or `initialized` check.
    fn on_redo_persisted(&mut self, ctx: &mut Ctx, resolved_ts: Ts) {
        if resolved_ts <= self.redo_resolved_ts {
            hit(P::MaintainerRedoProgressStale);
            return;
        }
        hit(P::MaintainerRedoProgressForwarded);
        self.redo_resolved_ts = resolved_ts;
        for n in self.alive.clone() {
            ctx.send(
                n,
                Message::RedoResolvedTsForwardMessage {
                    cf: self.cf.clone(),
                    resolved_ts,
                    maintainer_epoch: self.epoch,
                },
            );
        }
    }

    /// The active pipeline's barrier takes a block-status request (`Barrier.HandleStatus`).
    fn handle_block_statuses(
        &mut self,
        ctx: &mut Ctx,
        from: NodeId,
        statuses: &[TableSpanBlockStatus],
        schema: &dyn SchemaView,
    ) {
        self.run_barrier(ctx, schema, |barrier, bc, out| barrier.handle_request(from, statuses, bc, out));
    }

    /// Run one call of the active pipeline's barrier with its context (the pipeline's span
    /// and operator controllers, the schema, liveness, the bug and fix switches), then emit
    /// what it produced.
    fn run_barrier(
        &mut self,
        ctx: &mut Ctx,
        schema: &dyn SchemaView,
        f: impl FnOnce(&mut barrier::Barrier, &mut BarrierCtx, &mut BarrierOut),
    ) {
        let mut out = BarrierOut::default();
        {
            let now = ctx.now_ms;
            let accept_nonowner = ctx.bug(Bug::AcceptNonownerBlockStatus);
            let fixes = BarrierFixes::from_ctx(ctx);
            let rng = &mut *ctx.rng;
            let mut new_id = || new_id_from(rng);
            let mut bc = BarrierCtx {
                sc: &mut self.pipe.sc,
                oc: &mut self.pipe.oc,
                schema,
                alive: &self.alive,
                now,
                accept_nonowner,
                fixes,
                new_id: &mut new_id,
            };
            f(&mut self.pipe.barrier, &mut bc, &mut out);
        }
        self.emit_barrier(ctx, out);
    }

    /// `maintainer.watermark_no_regress` over one update of `from`'s stored watermark.
    pub fn assert_watermark_kept(&self, ctx: &mut Ctx, from: NodeId, before: Watermark, after: Watermark) {
        ctx.always(
            crate::assertions::Assertion::MaintainerWatermarkNoRegress,
            after.seq > before.seq || (after.seq == before.seq && after.checkpoint_ts >= before.checkpoint_ts),
            || format!("changefeed={} node={} stored={:?} now={:?}", self.cf, from, before, after),
        );
    }

    /// Second half of `onHeartbeatRequest` (maintainer/maintainer.go:948-963): the oldest
    /// heartbeat's statuses go to the operator and span controllers
    /// (`Controller.HandleStatus`). A step of its own, woken by the first half.
    pub fn apply_heartbeat_statuses(&mut self, ctx: &mut Ctx) {
        let Some(hb) = self.pending_heartbeats.pop_front() else { return };
        if self.state == MaintainerState::Stopped {
            self.pending_heartbeats.clear();
            return;
        }
        hit(P::MaintainerHeartbeatSecondHalf);
        ctx.observe(Observation::HeartbeatStatusesApplied {
            cf: self.cf.clone(),
            maintainer_epoch: self.epoch,
            from: hb.from,
        });
        for st in hb.statuses {
            // `HandleStatus` routes by the status's mode (maintainer_controller.go:214-216).
            if st.mode == Mode::Default {
                self.handle_status(ctx, hb.from, &st, hb.complete);
            } else if self.in_mode(st.mode, |m| m.handle_status(ctx, hb.from, &st, hb.complete)).is_none() {
                hit(P::MaintainerRedoWithoutRedo);
            }
        }
    }

    /// Finish every heartbeat whose statuses still wait (see [`Self::pending_heartbeats`]).
    pub fn drain_heartbeat_statuses(&mut self, ctx: &mut Ctx) {
        while !self.pending_heartbeats.is_empty() {
            self.apply_heartbeat_statuses(ctx);
        }
    }

    pub(crate) fn emit_barrier(&mut self, ctx: &mut Ctx, out: BarrierOut) {
        for (k, v) in out.notes {
            self.trace(ctx, k, vec![("detail", v)]);
        }
        for ((ts, sp), writer) in std::mem::take(&mut self.pipe.barrier.reselected) {
            ctx.observe(Observation::BarrierWriterReselected {
                cf: self.cf.clone(),
                maintainer_epoch: self.epoch,
                commit_ts: ts,
                sync_point: sp,
                writer,
            });
        }
        for (ts, sp) in std::mem::take(&mut self.pipe.barrier.finished) {
            ctx.observe(Observation::BarrierEventDone {
                cf: self.cf.clone(),
                maintainer_epoch: self.epoch,
                commit_ts: ts,
                sync_point: sp,
            });
            self.trace(ctx, "barrier event done", vec![("commit_ts", ts.to_string()), ("sync_point", sp.to_string())]);
        }
        for (n, statuses) in out.responses {
            ctx.send(
                n,
                Message::HeartBeatResponse {
                    mode: self.pipe.barrier.mode,
                    cf: self.cf.clone(),
                    statuses,
                    maintainer_epoch: self.epoch,
                },
            );
        }
    }

    /// `Controller.handleStatus` (§4.5): operator check first, then task status and self-healing.
    /// A Working status goes to the span's split checker (`UpdateStatus`); one of a
    /// complete-status heartbeat carries the span's traffic (`EventSizePerSecond`), a
    /// sample for the checker (the split-group checker, or the default group's for a
    /// whole-table span).
    fn handle_status(&mut self, ctx: &mut Ctx, from: NodeId, st: &TableSpanStatus, complete: bool) {
        self.pipe.oc.update_operator_status(&st.id, from, st, &mut self.pipe.sc);
        let removing = self.state == MaintainerState::Removing;
        match self.pipe.sc.get(&st.id).map(|r| r.node) {
            None => {
                if st.state == ComponentState::Working && !self.pipe.oc.has(&st.id) && !removing {
                    hit(P::MaintainerStatusUnknownDispatcherRemoved);
                    self.trace(
                        ctx,
                        "no span found, remove it",
                        vec![("dispatcher", st.id.to_string()), ("node", from.to_string())],
                    );
                    let mut req =
                        operator::remove_request(st.id, TableSpan::default(), OperatorType::Remove, self.epoch);
                    req.config.mode = st.mode;
                    ctx.send(from, Message::ScheduleDispatcherRequest { cf: self.cf.clone(), req });
                }
            }
            Some(node) => {
                if node != Some(from) {
                    hit(P::MaintainerStatusWrongNode);
                    return; // nodeID not match
                }
                self.pipe.sc.update_status(&st.id, st);
                if st.state == ComponentState::Working {
                    debug_assert!(complete || st.event_size_per_second == 0);
                    let wt = self.config.scheduler.write_key_threshold;
                    self.pipe.sc.update_split_status(&st.id, st.event_size_per_second, wt);
                    let default_group =
                        self.pipe.sc.get(&st.id).is_some_and(|r| r.group() == span_controller::GroupId::Default);
                    if st.event_size_per_second != 0 && default_group && st.id != self.pipe.sc.ddl_span_id {
                        self.pipe.default_traffic.entry(st.id).or_default().sample(st.event_size_per_second, wt);
                    }
                }
                if matches!(st.state, ComponentState::Stopped | ComponentState::Removed)
                    && !self.pipe.oc.has(&st.id)
                    && !removing
                    && st.id != self.pipe.sc.ddl_span_id
                {
                    // A terminal span inside a Replicating span of its table (a merge source left
                    // over after a failover) is obsolete: it goes instead of being placed again
                    // (`removeTerminalSpanCoveredByMergedSpan`, maintainer/maintainer_controller.go:290-336).
                    let span = self.pipe.sc.get(&st.id).map(|r| r.span);
                    let covering = span.and_then(|sp| {
                        self.pipe
                            .sc
                            .tasks_of_table(sp.table_id)
                            .into_iter()
                            .find(|c| {
                                c.id != st.id
                                    && c.state == ReplicaState::Replicating
                                    && c.span.start <= sp.start
                                    && c.span.end >= sp.end
                            })
                            .map(|c| c.id)
                    });
                    if let Some(c) = covering {
                        hit(P::MaintainerTerminalSpanCovered);
                        self.trace(
                            ctx,
                            "remove terminal span covered by merged span",
                            vec![("dispatcher", st.id.to_string()), ("covering", c.to_string())],
                        );
                        self.pipe.sc.remove(&st.id);
                        return;
                    }
                    hit(P::MaintainerStoppedWithoutOperator);
                    self.trace(
                        ctx,
                        "dispatcher stopped without operator, mark absent",
                        vec![("dispatcher", st.id.to_string())],
                    );
                    self.pipe.sc.mark_absent(&st.id);
                }
            }
        }
    }

    // ------------------------------------------------------------------ periodic tasks

    /// Event-loop tick: bootstrap / post-bootstrap / close resends, barrier resend.
    pub fn on_tick(&mut self, ctx: &mut Ctx, schema: &dyn SchemaView) {
        // A period event of the event loop: after the heartbeat it is handling.
        self.drain_heartbeat_statuses(ctx);
        match self.state {
            MaintainerState::Bootstrapping => {
                let pending: Vec<NodeId> =
                    self.bootstrap_responses.iter().filter(|(_, r)| r.is_none()).map(|(n, _)| *n).collect();
                for n in pending {
                    if ctx.now_ms >= self.bootstrap_last_sent.get(&n).copied().unwrap_or(0) + BOOTSTRAP_RESEND_MS {
                        hit(P::MaintainerBootstrapResend);
                        self.send_bootstrap(ctx, n);
                    }
                }
            }
            MaintainerState::Working => {
                let late: Vec<NodeId> = self.late_bootstrap.iter().copied().collect();
                for n in late {
                    hit(P::MaintainerLateBootstrapResend);
                    if ctx.now_ms >= self.bootstrap_last_sent.get(&n).copied().unwrap_or(0) + BOOTSTRAP_RESEND_MS {
                        self.send_bootstrap(ctx, n);
                    }
                }
                if !self.post_bootstrap_done && ctx.now_ms >= self.post_bootstrap_last_sent + MAINTAINER_TICK_MS {
                    hit(P::MaintainerPostBootstrapResend);
                    self.send_post_bootstrap(ctx, schema);
                }
                // The redo barrier resends first (maintainer.go:1205-1212).
                self.in_mode(Mode::Redo, |m| m.resend_barrier(ctx, schema));
                self.resend_barrier(ctx, schema);
            }
            MaintainerState::Removing => {
                // Every period event resends them (handleResendMessage, maintainer.go:1192-1199).
                if self.cascade {
                    self.send_close_requests(ctx);
                }
                self.maybe_stopped(ctx);
            }
            MaintainerState::Stopped => {}
        }
    }

    /// `trySendMaintainerCloseRequestToAllNode` (maintainer.go:1232-1256): a close request
    /// to every node that has not answered success.
    fn send_close_requests(&mut self, ctx: &mut Ctx) {
        hit(P::MaintainerCloseSend);
        for n in self.close_pending.iter().copied() {
            ctx.send(
                n,
                Message::MaintainerCloseRequest {
                    cf: self.cf.clone(),
                    removed: self.removed_feed,
                    maintainer_epoch: self.epoch,
                },
            );
        }
    }

    /// The active pipeline's barrier resends its pending actions (`Barrier.Resend`).
    fn resend_barrier(&mut self, ctx: &mut Ctx, schema: &dyn SchemaView) {
        self.run_barrier(ctx, schema, |barrier, bc, out| {
            hit(P::MaintainerBarrierTick);
            barrier.resend(bc, out);
        });
    }

    fn send_post_bootstrap(&mut self, ctx: &mut Ctx, schema: &dyn SchemaView) {
        self.post_bootstrap_last_sent = ctx.now_ms;
        let schemas = schema_infos(&self.pipe, schema);
        // The redo trigger's schemas, at its own start ts (`RedoSchemas`).
        let redo_schemas = self.redo_pipe.as_ref().map(|r| schema_infos(r, schema)).unwrap_or_default();
        let me = self.node;
        ctx.send(
            me,
            Message::MaintainerPostBootstrapRequest {
                redo_schemas,
                cf: self.cf.clone(),
                table_trigger_event_dispatcher_id: self.pipe.sc.ddl_span_id,
                schemas,
                maintainer_epoch: self.epoch,
            },
        );
    }

    /// Operator controller task of the redo mode, a task of its own (§3): the redo
    /// operators' [`Self::execute_operators`]. Nothing without redo.
    pub fn execute_redo_operators(&mut self, ctx: &mut Ctx) {
        self.in_mode(Mode::Redo, |m| m.execute_operators(ctx));
    }

    /// The redo basic scheduler, a task of its own. Nothing without redo.
    pub fn run_redo_basic_scheduler(&mut self, ctx: &mut Ctx) {
        self.in_mode(Mode::Redo, |m| m.run_basic_scheduler(ctx));
    }

    /// One round of `handleRedoMetaTsMessage` (maintainer.go:639-692, every 1 s): the redo
    /// checkpoint R (the checkpoint round over the redo controllers and redo watermarks)
    /// becomes the redo controllers' committed checkpoint, the meta's resolved ts is
    /// raised to R and its checkpoint to the event checkpoint; if either moved, the meta
    /// goes to this node's manager (the redo trigger's). Nothing without redo or before
    /// the bootstrap.
    pub fn run_redo_meta(&mut self, ctx: &mut Ctx) {
        if self.redo_pipe.is_none() || self.state == MaintainerState::Stopped {
            return;
        }
        if !self.initialized() {
            hit(P::RedoMetaBeforeBootstrap);
            return;
        }
        let redo_cp = self.in_mode(Mode::Redo, |m| m.checkpoint_round().0).flatten();
        let (mut cp, mut rs) = self.redo_meta_ts;
        if let Some(r) = redo_cp.filter(|r| *r > rs) {
            rs = r;
        }
        cp = cp.max(self.pipe.committed_checkpoint);
        if (cp, rs) == self.redo_meta_ts {
            hit(P::RedoMetaUnchanged);
            return;
        }
        hit(P::RedoMetaSent);
        self.redo_meta_ts = (cp, rs);
        let me = self.node;
        ctx.send(
            me,
            Message::RedoMetaMessage {
                cf: self.cf.clone(),
                checkpoint_ts: cp,
                resolved_ts: rs,
                maintainer_epoch: self.epoch,
            },
        );
    }

    /// Operator controller task: finalize finished operators, send due messages.
    pub fn execute_operators(&mut self, ctx: &mut Ctx) {
        if self.state == MaintainerState::Bootstrapping || self.state == MaintainerState::Stopped {
            return;
        }
        let now = ctx.now_ms;
        self.pipe.sc.ignore_pending_block_start_ts = ctx.bug(Bug::IgnorePendingBlockStartTs);
        let (msgs, finished, follow) = {
            let rng = &mut *ctx.rng;
            let mut new_id = || new_id_from(rng);
            self.pipe.oc.execute(&mut self.pipe.sc, &self.alive, now, self.epoch, &mut new_id)
        };
        let recheck_node = ctx.fix(crate::bugs::Fix::FinishedMoveChecksNode);
        for (op, _) in finished {
            hit(P::MaintainerOperatorFinished);
            self.trace(
                ctx,
                "operator finished",
                vec![("operator", op.describe()), ("dispatcher", op.id().to_string())],
            );
            // Candidate fix (not TiCDC): a span that PostFinish bound to a capture the
            // cluster removed meanwhile is placed again, as `OnNodeRemoved` would have
            // done had the operator still been running.
            if recheck_node {
                let id = op.id();
                if let Some(n) =
                    self.pipe.sc.get(&id).filter(|t| t.state == ReplicaState::Replicating).and_then(|t| t.node)
                {
                    if !self.alive.contains(&n) {
                        hit(P::MaintainerFinishedOnRemovedNode);
                        self.pipe.sc.mark_absent(&id);
                        self.trace(
                            ctx,
                            "finished operator bound a removed node, mark absent",
                            vec![("dispatcher", id.to_string()), ("node", n.to_string())],
                        );
                    }
                }
            }
        }
        for d in follow {
            hit(P::MaintainerFollowUpOperator);
            self.trace(ctx, "add operator", vec![("operator", d)]);
        }
        let removing = self.state == MaintainerState::Removing;
        for (n, req) in msgs {
            if removing {
                let id = match &req {
                    operator::OpRequest::Schedule(r) => r.config.dispatcher_id,
                    operator::OpRequest::Merge(r) => r.merged_dispatcher_id,
                };
                let allowed = self.pipe.oc.quiesce_except.as_ref().is_some_and(|a| a.contains(&id));
                ctx.always(crate::assertions::Assertion::MaintainerRemovingSendsNoSchedule, allowed, || {
                    format!("changefeed={} dispatcher={} to={} request={:?}", self.cf, id, n, req)
                });
            }
            let msg = match req {
                operator::OpRequest::Schedule(req) => Message::ScheduleDispatcherRequest { cf: self.cf.clone(), req },
                operator::OpRequest::Merge(req) => Message::MergeDispatcherRequest { cf: self.cf.clone(), req },
            };
            ctx.send(n, msg);
        }
    }

    /// Basic scheduler task. With `nonatomic-operator-admission` on, only the check step
    /// runs here; [`Maintainer::finish_pending_admissions`] is the insert step.
    pub fn run_basic_scheduler(&mut self, ctx: &mut Ctx) {
        if !self.initialized() || self.state == MaintainerState::Removing {
            return;
        }
        let available = self.config.scheduler.add_table_batch_size.saturating_sub(self.pipe.oc.size());
        let ops = scheduler::basic_schedule(
            &self.pipe.sc,
            &self.alive,
            available,
            self.config.scheduler.scheduling_task_count_per_node,
            &mut *ctx.rng,
        );
        for op in ops {
            self.admit(ctx, op);
        }
    }

    /// The checker-scheduler task (`pkg/scheduler.Controller.Start`): one loop runs the
    /// balance scheduler (§7.2, `balance_default_group`) and, with
    /// table-across-nodes (TiCDC creates the splitter, and with it that scheduler, only
    /// then), the split-group balance scheduler (§7.3, `balance_split_groups`), then sleeps
    /// until the earliest next check time they return: `check-balance-interval` for the
    /// first, a fixed 15 s for the second. Neither compares the time itself, so both run at
    /// every wake-up, every `min(check-balance-interval, 15 s)` with table-across-nodes.
    /// The region-count refresher is polled first.
    ///
    /// Simplified: TiCDC runs the two in the order of a Go map, fixed per maintainer; here
    /// the balance scheduler always runs first. Each of them skips a round while any
    /// operator runs, so the order only decides which one acts first.
    pub fn run_balance_scheduler(&mut self, ctx: &mut Ctx, schema: &dyn SchemaView) {
        if !self.initialized() || self.state == MaintainerState::Removing {
            return;
        }
        // One region count refresher serves both modes: one full-refresh decision a round.
        let full = self.region_refresh_due(ctx.now_ms);
        self.balance_round(ctx, schema, full);
        // The redo balance schedulers share the checker loop; they run after the default
        // ones (the order row 22 fixes), each with its own next check time.
        self.in_mode(Mode::Redo, |m| m.balance_round(ctx, schema, full));
    }

    /// One mode's balance and split-group balance schedulers (the active pipeline).
    fn balance_round(&mut self, ctx: &mut Ctx, schema: &dyn SchemaView, full_refresh: bool) {
        self.refresh_region_counts(full_refresh, schema);
        if ctx.now_ms < self.pipe.next_balance_check_ms {
            return;
        }
        let across_nodes = self.config.scheduler.enable_table_across_nodes;
        let mut interval = self.config.scheduler.check_balance_interval_ms;
        if across_nodes {
            interval = interval.min(split_balance::BALANCE_SPLIT_INTERVAL_MS);
        }
        self.pipe.next_balance_check_ms = ctx.now_ms + interval;
        self.balance_default_group(ctx, schema);
        if across_nodes {
            self.balance_split_groups(ctx, schema);
        }
    }

    /// Balance scheduler (§7.2, `balanceScheduler.Execute`), unless the
    /// `StopBalanceScheduler` failpoint is on, and only when no operator is running and no
    /// span is Absent:
    /// 1. the default-group split check (`defaultSpanSplitChecker`, table-across-nodes
    ///    on, split enabled for the table): a whole-table span whose traffic score reached
    ///    3 (three samples in a row at or over `write-key-threshold`) is split into
    ///    `max(2 * ceil(traffic / write-threshold), 2 * nodes)` pieces, by write bytes
    ///    when it has fewer than 5000 regions; otherwise one whose region count reached
    ///    `region-threshold` into `max(2 * ceil(regions / threshold), 2 * nodes)` pieces
    ///    by region count; a Split operator without targets (the basic scheduler places
    ///    the pieces);
    /// 2. moves of Replicating default-group spans (the DDL span excluded) until every
    ///    alive node holds `floor(total / nodes)`, within the batch left by the splits.
    ///
    /// Simplified: the drain pause is not modelled; split-ready spans are taken in
    /// dispatcher-ID order (TiCDC: Go map order).
    fn balance_default_group(&mut self, ctx: &mut Ctx, schema: &dyn SchemaView) {
        if ctx.fp(crate::effects::FP_STOP_BALANCE_SCHEDULER)
            || self.pipe.oc.size() > 0
            || !self.pipe.sc.absent().is_empty()
        {
            hit(P::BalanceSkippedBusy);
            return;
        }
        let batch = self.config.scheduler.balance_move_batch_size;
        let splits = self.balance_split_check(ctx, batch, schema);
        if splits >= batch {
            return;
        }
        let ddl = self.pipe.sc.ddl_span_id;
        let mut per_node: BTreeMap<NodeId, usize> = BTreeMap::new();
        let mut replicating = Vec::new();
        for r in self.pipe.sc.tasks.values().filter(|r| r.id != ddl && r.group() == span_controller::GroupId::Default) {
            if let Some(n) = r.node {
                *per_node.entry(n).or_default() += 1;
                if r.state == ReplicaState::Replicating {
                    replicating.push((r.id, n));
                }
            }
        }
        if scheduler::check_balance_status(&per_node, &self.alive) == 0 {
            hit(P::BalanceAlreadyBalanced);
            return;
        }
        let moves = scheduler::balance_moves(&replicating, &self.alive, batch - splits, &mut *ctx.rng);
        let mut moved = 0;
        for (id, origin, dest) in moves {
            if self.admit(ctx, Operator::Move(MoveDispatcherOperator::new(id, Some(origin), dest))) {
                moved += 1;
            }
        }
        if moved > 0 {
            self.trace(ctx, "scheduler: balance done", vec![("moved", moved.to_string())]);
            hit(P::BalanceMoved);
        }
    }

    /// Whether the split checker tracks a task (`ShouldEnableSplit` of its table, and the
    /// refresher only runs with table-across-nodes and a region threshold).
    fn split_checked(&self, r: &span_controller::SpanReplication, splitable: &BTreeMap<TableId, bool>) -> bool {
        let cfg = &self.config.scheduler;
        r.id != self.pipe.sc.ddl_span_id
            && r.group() == span_controller::GroupId::Default
            && cfg.enable_table_across_nodes
            && cfg.region_threshold > 0
            && (!cfg.enable_splittable_check || splitable.get(&r.span.table_id).copied().unwrap_or(false))
    }

    /// `RegionCountRefresher`: a span's region count is loaded when a checker first
    /// tracks it and reloaded for every span every `region-count-refresh-interval`
    /// (5 minutes by default). The default group's split checker tracks the whole-table
    /// spans it may split, the split-span checkers every span of their groups; both only
    /// with a region threshold.
    ///
    /// Simplified: "first tracks" is observed at the next balance poll (at most a second
    /// later) rather than inside `AddReplica`.
    /// Whether the region count refresher reloads every count this round (and if so, it
    /// notes the time). The refresher only runs with table-across-nodes and a threshold.
    fn region_refresh_due(&mut self, now: u64) -> bool {
        if !self.config.scheduler.enable_table_across_nodes || self.config.scheduler.region_threshold == 0 {
            return false;
        }
        // A zero interval falls back to the default, as in `NewRegionCountRefresher`.
        let interval = match self.config.scheduler.region_count_refresh_interval_ms {
            0 => REGION_REFRESH_INTERVAL_MS,
            i => i,
        };
        let full = now >= self.region_refresh_ms + interval;
        if full {
            self.region_refresh_ms = now;
        }
        full
    }

    fn refresh_region_counts(&mut self, full: bool, schema: &dyn SchemaView) {
        if !self.config.scheduler.enable_table_across_nodes || self.config.scheduler.region_threshold == 0 {
            return; // the refresher only runs with table-across-nodes and a threshold
        }
        let splitable: BTreeMap<TableId, bool> = if self.config.scheduler.enable_splittable_check {
            schema.tables_at(Ts::MAX).into_iter().map(|t| (t.table_id, t.splitable)).collect()
        } else {
            BTreeMap::new()
        };
        let split_group =
            |r: &span_controller::SpanReplication| matches!(r.group(), span_controller::GroupId::Table(_));
        let tracked: Vec<(DispatcherId, TableSpan)> = self
            .pipe
            .sc
            .tasks
            .values()
            .filter(|r| self.split_checked(r, &splitable) || split_group(r))
            .map(|r| (r.id, r.span))
            .collect();
        let mut counts = BTreeMap::new();
        for (id, span) in tracked {
            let c = match self.pipe.region_counts.get(&id) {
                Some(c) if !full => *c,
                _ => schema.span_region_count(&span),
            };
            counts.insert(id, c);
        }
        self.pipe.region_counts = counts;
    }

    /// Step 1 of the balance scheduler; returns the number of Split operators admitted.
    fn balance_split_check(&mut self, ctx: &mut Ctx, batch: usize, schema: &dyn SchemaView) -> usize {
        let cfg = &self.config.scheduler;
        let (threshold, wt) = (cfg.region_threshold, cfg.write_key_threshold);
        // Spans the default checker no longer tracks leave its traffic state.
        let ddl = self.pipe.sc.ddl_span_id;
        let tasks = &self.pipe.sc.tasks;
        self.pipe.default_traffic.retain(|id, _| {
            tasks.get(id).is_some_and(|r| r.group() == span_controller::GroupId::Default) && *id != ddl
        });
        let traffic_on = cfg.enable_table_across_nodes && wt > 0;
        let splitable: BTreeMap<TableId, bool> = if traffic_on && cfg.enable_splittable_check {
            schema.tables_at(Ts::MAX).into_iter().map(|t| (t.table_id, t.splitable)).collect()
        } else {
            BTreeMap::new()
        };
        let split_enabled = |t: TableId| !cfg.enable_splittable_check || splitable.get(&t).copied().unwrap_or(false);
        let candidates: BTreeSet<DispatcherId> =
            self.pipe.region_counts.keys().chain(self.pipe.default_traffic.keys()).copied().collect();
        // (id, span, node, regions, traffic that made it ready, if traffic did)
        let mut ready: Vec<(DispatcherId, TableSpan, NodeId, u64, Option<f64>)> = Vec::new();
        for id in candidates {
            let Some(r) = self
                .pipe
                .sc
                .get(&id)
                .filter(|r| r.state == ReplicaState::Replicating && r.group() == span_controller::GroupId::Default)
            else {
                continue;
            };
            let Some(node) = r.node else { continue };
            let regions = self.pipe.region_counts.get(&id).copied().unwrap_or(0);
            let tr = self.pipe.default_traffic.get(&id).copied().unwrap_or_default();
            if traffic_on && tr.score >= split_balance::TRAFFIC_SCORE_THRESHOLD && split_enabled(r.span.table_id) {
                ready.push((id, r.span, node, regions, Some(tr.latest)));
                hit(P::BalanceSplitReadyByTraffic);
            } else if threshold > 0 && self.pipe.region_counts.get(&id).is_some_and(|c| *c >= threshold) {
                ready.push((id, r.span, node, regions, None));
                hit(P::BalanceSplitReadyByRegions);
            }
        }
        let mut admitted = 0;
        for (id, span, node, regions, traffic) in ready.into_iter().take(batch) {
            let alive2 = 2 * self.alive.len() as u64;
            let (spans_num, pieces) = match traffic {
                Some(t) => {
                    let n = (2 * (t / wt as f64).ceil() as u64).max(alive2);
                    let pieces = if split_balance::split_by_write_bytes(regions) {
                        self.pipe.sc.split_by_write_bytes(&span, schema.span_region_count(&span), n)
                    } else {
                        self.pipe.sc.split_by_region_count(&span, regions, n)
                    };
                    (n, pieces)
                }
                None => {
                    let n = (2 * regions.div_ceil(threshold)).max(alive2);
                    (n, self.pipe.sc.split_by_region_count(&span, regions, n))
                }
            };
            if pieces.len() > 1
                && self.admit(ctx, Operator::Split(SplitDispatcherOperator::new(id, span, node, pieces, vec![])))
            {
                let mut fields = vec![
                    ("dispatcher", id.to_string()),
                    ("regions", regions.to_string()),
                    ("spans", spans_num.to_string()),
                ];
                if let Some(t) = traffic {
                    fields.push(("traffic", format!("{}", t as u64)));
                }
                self.trace(ctx, "balance scheduler split span", fields);
                hit(P::BalanceSplitAdmitted);
                admitted += 1;
            }
        }
        admitted
    }

    /// Sets the thresholds of the split checkers, the existing ones and those created
    /// later: the test-facing counterpart of TiCDC's `SetEasyThresholdForTest`
    /// (`maintainer/replica/split_span_checker.go:1273`), which lowers package variables
    /// every checker reads. The maintainer itself always runs with the defaults.
    pub fn set_split_checker_tuning(&mut self, tuning: split_balance::CheckerTuning) {
        for c in self.pipe.sc.split_checkers.values_mut() {
            c.tuning = tuning.clone();
        }
        self.pipe.sc.split_tuning = tuning;
    }

    /// Split-group balance scheduler (§7.3, `balanceSplitsScheduler.Execute`): skipped
    /// while any operator runs or any span is Absent; otherwise every split-table group
    /// whose tasks are all Replicating is checked ([`split_balance::SplitGroupChecker`])
    /// and the results are admitted as Split (with targets), Move and Merge operators,
    /// within a budget of `add-table-batch-size` operators (a merge costs one plus one per
    /// source, as its occupy operators do).
    ///
    /// Not stopped by `StopBalanceScheduler`: TiCDC's failpoint is in
    /// `balanceScheduler.Execute` only; `balanceSplitsScheduler.Execute` has none and runs
    /// in the same checker loop.
    fn balance_split_groups(&mut self, ctx: &mut Ctx, schema: &dyn SchemaView) {
        if self.pipe.oc.size() > 0 || !self.pipe.sc.absent().is_empty() {
            return;
        }
        let mut available = self.config.scheduler.add_table_batch_size as i64;
        let groups: Vec<TableId> = self.pipe.sc.split_checkers.keys().copied().collect();
        for table in groups {
            let group = span_controller::GroupId::Table(table);
            let tasks: Vec<&span_controller::SpanReplication> =
                self.pipe.sc.tasks_of_table(table).into_iter().filter(|r| r.group() == group).collect();
            if tasks.is_empty() || tasks.iter().any(|r| r.state != ReplicaState::Replicating || r.node.is_none()) {
                hit(P::SplitGroupNotReplicating);
                continue; // "some spans in the group are not in the replicating state"
            }
            let spans: Vec<split_balance::GroupSpan> = tasks
                .iter()
                .map(|r| split_balance::GroupSpan {
                    id: r.id,
                    span: r.span,
                    node: r.node.unwrap_or_default(),
                    regions: self.pipe.region_counts.get(&r.id).copied().unwrap_or(0),
                    checkpoint_ts: r.checkpoint_ts,
                })
                .collect();
            let cfg = &self.config.scheduler;
            let check = split_balance::GroupCheck {
                table,
                spans: &spans,
                alive: &self.alive,
                region_threshold: cfg.region_threshold,
                write_threshold: cfg.write_key_threshold,
                balance_score_threshold: cfg.balance_score_threshold,
                now_ms: ctx.now_ms,
                batch: available.max(0) as usize,
            };
            let Some(checker) = self.pipe.sc.split_checkers.get_mut(&table) else { continue };
            let results = checker.check(&check, &mut *ctx.rng);
            for r in results {
                available -= self.apply_split_check_result(ctx, table, &spans, r, schema);
            }
            if available <= 0 {
                return;
            }
        }
    }

    /// Admit the operators of one check result; returns the budget they used.
    fn apply_split_check_result(
        &mut self,
        ctx: &mut Ctx,
        table: TableId,
        spans: &[split_balance::GroupSpan],
        r: split_balance::SplitCheckResult,
        schema: &dyn SchemaView,
    ) -> i64 {
        use split_balance::SplitCheckResult as R;
        let node_of = |id: &DispatcherId| spans.iter().find(|s| s.id == *id).map(|s| s.node);
        match r {
            R::Split { id, regions, span_num, targets, by_write_bytes } => {
                let Some(s) = spans.iter().find(|s| s.id == id) else { return 0 };
                // The write-bytes splitter scans the span's regions in PD itself.
                let pieces = if by_write_bytes {
                    self.pipe.sc.split_by_write_bytes(&s.span, schema.span_region_count(&s.span), span_num)
                } else {
                    self.pipe.sc.split_by_region_count(&s.span, regions, span_num)
                };
                if pieces.len() < 2 {
                    return 0;
                }
                let n = pieces.len();
                if self.admit(ctx, Operator::Split(SplitDispatcherOperator::new(id, s.span, s.node, pieces, targets))) {
                    hit(P::SplitGroupSplit);
                    self.trace(
                        ctx,
                        "balance split scheduler split span",
                        vec![
                            ("dispatcher", id.to_string()),
                            ("table", table.to_string()),
                            ("regions", regions.to_string()),
                            ("spans", n.to_string()),
                        ],
                    );
                    return 1;
                }
                0
            }
            R::Move { ids, target, step } => {
                let mut used = 0;
                for id in ids {
                    let Some(origin) = node_of(&id) else { continue };
                    if self.admit(ctx, Operator::Move(MoveDispatcherOperator::new(id, Some(origin), target))) {
                        hit(P::SplitGroupMove);
                        self.trace(
                            ctx,
                            "balance split scheduler move span",
                            vec![
                                ("dispatcher", id.to_string()),
                                ("table", table.to_string()),
                                ("from", origin.to_string()),
                                ("to", target.to_string()),
                                ("step", step.to_string()),
                            ],
                        );
                        used += 1;
                    }
                }
                used
            }
            R::Merge { ids, step } => {
                let merged = ctx.new_dispatcher_id();
                let now = ctx.now_ms;
                let sources = format!("[{}]", ids.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", "));
                let n = ids.len() as i64;
                match self.pipe.oc.add_merge_operator(ids, merged, &mut self.pipe.sc, &self.alive, now) {
                    Ok(()) => {
                        hit(P::SplitGroupMerge);
                        self.trace(
                            ctx,
                            "balance split scheduler merge spans",
                            vec![
                                ("dispatcher", merged.to_string()),
                                ("table", table.to_string()),
                                ("sources", sources),
                                ("step", step.to_string()),
                            ],
                        );
                        1 + n
                    }
                    Err(e) => {
                        hit(P::SplitGroupMergeRefused);
                        self.trace(
                            ctx,
                            "balance split scheduler merge failed",
                            vec![("table", table.to_string()), ("sources", sources), ("reason", e)],
                        );
                        0
                    }
                }
            }
        }
    }

    /// Admit an operator the way the configured core does.
    pub fn admit(&mut self, ctx: &mut Ctx, op: Operator) -> bool {
        let d = op.describe();
        if ctx.bug(Bug::NonatomicOperatorAdmission) {
            if self.pipe.oc.admission_check(&op.id(), &self.pipe.sc).is_ok() {
                self.pipe.pending_admissions.push(op);
                hit(P::AdmitTwoStep);
                return true;
            }
            return false;
        }
        match self.pipe.oc.add_operator(op, &mut self.pipe.sc, &self.alive, ctx.now_ms) {
            Ok(()) => {
                self.trace(ctx, "add operator", vec![("operator", d)]);
                hit(P::AdmitAccepted);
                true
            }
            Err(e) => {
                self.trace(ctx, "add operator failed", vec![("operator", d), ("reason", format!("{:?}", e))]);
                hit(P::AdmitRefused);
                false
            }
        }
    }

    /// [`Self::finish_pending_admissions`] of the redo mode. Nothing without redo.
    pub fn finish_redo_pending_admissions(&mut self, ctx: &mut Ctx) {
        self.in_mode(Mode::Redo, |m| m.finish_pending_admissions(ctx));
    }

    /// Second step of the historical two-step admission.
    pub fn finish_pending_admissions(&mut self, ctx: &mut Ctx) {
        for op in std::mem::take(&mut self.pipe.pending_admissions) {
            let d = op.describe();
            self.pipe.oc.admission_insert(op, &mut self.pipe.sc, &self.alive, ctx.now_ms);
            self.trace(ctx, "add operator", vec![("operator", d)]);
        }
    }

    /// One round of the checkpoint goroutine (`calCheckpointTs`, maintainer/maintainer.go:696-733)
    /// as a step: [`Self::calc_checkpoint`], with an observation saying how many
    /// heartbeats were between their halves (watermark stored, statuses not applied yet).
    pub fn run_checkpoint(&mut self, ctx: &mut Ctx) -> Option<Ts> {
        let half_applied = self.pending_heartbeats.len();
        let (cp, inputs) = self.checkpoint_round();
        if self.initialized() {
            ctx.observe(Observation::CheckpointCalculated {
                cf: self.cf.clone(),
                maintainer_epoch: self.epoch,
                heartbeats_half_applied: half_applied,
                checkpoint: cp,
                inputs,
            });
        }
        cp
    }

    /// Checkpoint goroutine (§9). A removing maintainer keeps computing and committing it:
    /// the operators it froze still cap it (`calCheckpointTs` only checks `initialized`,
    /// maintainer/maintainer.go:696-733).
    pub fn calc_checkpoint(&mut self) -> Option<Ts> {
        self.checkpoint_round().0
    }

    /// [`Self::calc_checkpoint`] with what the round took the minimum of.
    fn checkpoint_round(&mut self) -> (Option<Ts>, CheckpointInputs) {
        let mut inputs = CheckpointInputs::default();
        if !self.initialized() {
            hit(P::CheckpointBeforeBootstrap);
            return (None, inputs);
        }
        let mut cp = u64::MAX;
        let by_operator = self.pipe.oc.min_checkpoint_ts(&self.pipe.sc);
        let by_absent = self.pipe.sc.min_non_replicating_checkpoint();
        let by_barrier = self.pipe.barrier.min_blocked_checkpoint_for_new_tables();
        (inputs.by_operator, inputs.by_absent, inputs.by_barrier) = (by_operator, by_absent, by_barrier);
        for t in [by_operator, by_absent, by_barrier].into_iter().flatten() {
            cp = cp.min(t);
        }
        // `calculateNewCheckpointTs` reads the watermark of every node the bootstrapper
        // tracks (the alive nodes) that has tasks, and of the maintainer's own node. A
        // task bound to a removed node is not consulted: `OnNodeRemoved` has marked it
        // absent (then the absent-span bound above holds it), or an operator holds it
        // (the operator bound). A removing maintainer keeps its node set (see
        // [`Self::on_node_change`]), so a departed node's last watermark still holds it.
        let mut nodes: BTreeSet<NodeId> =
            self.pipe.sc.nodes_with_tasks().into_iter().filter(|n| self.alive.contains(n)).collect();
        nodes.insert(self.node);
        for n in nodes {
            match self.pipe.node_watermarks.get(&n) {
                Some(w) if w.seq > 0 || w.checkpoint_ts > 0 => {
                    inputs.watermarks.push((n, Some(*w)));
                    cp = cp.min(w.checkpoint_ts)
                }
                _ => {
                    inputs.watermarks.push((n, None));
                    hit(P::CheckpointNoWatermark);
                    return (None, inputs);
                }
            }
        }
        if cp == u64::MAX {
            return (None, inputs);
        }
        // Which bound held the checkpoint (several may tie).
        let capped = |b: Option<Ts>| b == Some(cp);
        if capped(by_operator) {
            hit(P::CheckpointCappedByOperator);
        }
        if capped(by_absent) {
            hit(P::CheckpointCappedByAbsentSpan);
        }
        if capped(by_barrier) {
            hit(P::CheckpointCappedByBarrier);
        }
        // Monotonic commit: never below what is already committed.
        if cp > self.pipe.committed_checkpoint {
            hit(P::CheckpointAdvanced);
            self.pipe.committed_checkpoint = cp;
            self.pipe.sc.committed_checkpoint = cp;
        } else {
            hit(P::CheckpointHeld);
        }
        (Some(self.pipe.committed_checkpoint), inputs)
    }

    /// `collectBootstrapResponses` + `onBootstrapResponses`: once every tracked node has
    /// answered (and the set was not handed over yet), run `FinishBootstrap`.
    fn on_bootstrap_responses(&mut self, ctx: &mut Ctx, schema: &dyn SchemaView) {
        if self.state != MaintainerState::Bootstrapping || self.all_nodes_ready {
            return;
        }
        if self.bootstrap_responses.is_empty() || !self.bootstrap_responses.values().all(|r| r.is_some()) {
            return;
        }
        self.all_nodes_ready = true;
        self.finish_bootstrap(ctx, schema);
    }

    /// `handleError`: keep the error for the next maintainer status; the coordinator
    /// decides between `warning` (restart) and `failed`.
    pub(crate) fn handle_error(&mut self, ctx: &mut Ctx, code: ErrorCode, message: String) {
        self.trace(
            ctx,
            "an error occurred in maintainer",
            vec![("code", code.rfc().to_string()), ("error", message.clone())],
        );
        let e = RunningError { node: self.node, code, message };
        if ctx.fix(crate::bugs::Fix::StickyBootstrapError)
            && !self.bootstrapped
            && self.state == MaintainerState::Bootstrapping
            && !self.bootstrap_errors.contains(&e)
        {
            self.bootstrap_errors.push(e.clone());
        }
        self.errors.push(e);
    }

    /// Node membership change (`onNodeChanged`).
    pub fn on_node_change(&mut self, ctx: &mut Ctx, alive: &BTreeSet<NodeId>, schema: &dyn SchemaView) {
        let removed: Vec<NodeId> = self.alive.difference(alive).copied().collect();
        let added: Vec<NodeId> = alive.difference(&self.alive).copied().collect();
        if matches!(self.state, MaintainerState::Removing | MaintainerState::Stopped) {
            // `checkNodeChanged` does nothing once the maintainer is removing
            // (maintainer.go:361-364): the node set, the watermarks the checkpoint needs
            // (`calculateNewCheckpointTs` keeps requiring a departed node's, :767-781) and
            // the operators stay as they were. Only the close flow sees the live nodes
            // (`trySendMaintainerCloseRequestToAllNode`, :1232-1256).
            if !removed.is_empty() {
                hit(P::MaintainerNodeRemovedRemoving);
            }
            if !added.is_empty() {
                hit(P::MaintainerNodeAddedRemoving);
            }
            for n in &removed {
                self.close_pending.remove(n);
            }
            if self.state == MaintainerState::Removing {
                self.maybe_stopped(ctx);
            }
            return;
        }
        self.alive = alive.clone();
        // Bootstrapping or Working from here on.
        if !removed.is_empty() || !added.is_empty() {
            let list = |v: &[NodeId]| v.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(",");
            self.trace(ctx, "maintainer node changed", vec![("added", list(&added)), ("removed", list(&removed))]);
        }
        for n in removed {
            self.pipe.node_watermarks.remove(&n);
            if let Some(r) = self.redo_pipe.as_mut() {
                r.node_watermarks.remove(&n);
            }
            self.late_bootstrap.remove(&n);
            self.close_pending.remove(&n);
            match self.state {
                MaintainerState::Bootstrapping => {
                    hit(P::MaintainerNodeRemovedBootstrapping);
                    self.bootstrap_responses.remove(&n);
                }
                _ => {
                    self.trace(ctx, "node removed", vec![("node", n.to_string())]);
                    hit(P::MaintainerNodeRemoved);
                    self.pipe.oc.on_node_removed(n, &mut self.pipe.sc);
                    // `RemoveNode` tells both modes' controllers (maintainer_controller.go:346-366).
                    if let Some(r) = self.redo_pipe.as_mut() {
                        r.oc.on_node_removed(n, &mut r.sc);
                    }
                }
            }
        }
        for n in added {
            // A capture that joins is a new capture: TiCDC gives every server start a new
            // capture ID, while the model reuses the node's ID. A watermark still kept under
            // it belongs to an earlier incarnation, sent after that one had left the cluster
            // (its session lost, so already removed above) but before it noticed and fenced;
            // TiCDC files such a late heartbeat under the old capture ID, which
            // `calculateNewCheckpointTs` never reads again (it iterates the bootstrapper's
            // nodes). Kept here, its higher `seq` would shadow every watermark of the new
            // incarnation (`onHeartbeatRequest` keeps the higher seq): the checkpoint would
            // stall at the old value, or pass rows the new incarnation has not written.
            self.pipe.node_watermarks.remove(&n);
            if let Some(r) = self.redo_pipe.as_mut() {
                r.node_watermarks.remove(&n);
            }
            if self.state == MaintainerState::Bootstrapping {
                hit(P::MaintainerNodeAddedBootstrapping);
                self.bootstrap_responses.insert(n, None);
                self.all_nodes_ready = false;
            } else {
                hit(P::MaintainerNodeAddedWorking);
                self.late_bootstrap.insert(n);
            }
            self.send_bootstrap(ctx, n);
        }
        // A removed node may have been the last one the bootstrap was waiting for.
        self.on_bootstrap_responses(ctx, schema);
    }

    /// `RemoveMaintainerRequest`: cascade closes every dispatcher manager; otherwise
    /// only the trigger is removed and the other dispatchers keep running.
    pub fn remove(&mut self, ctx: &mut Ctx, cascade: bool, removed: bool) {
        if self.state == MaintainerState::Stopped {
            return;
        }
        // An event of the event loop (`onRemoveMaintainer`): after the heartbeat it is handling.
        self.drain_heartbeat_statuses(ctx);
        if !self.initialized() && !cascade && !removed {
            // A move's non-cascade remove can overtake the bootstrap; the coordinator
            // resends it until this maintainer can hand over cleanly.
            self.trace(ctx, "ignore non-cascade remove request before bootstrap", vec![]);
            hit(P::MaintainerRemoveBeforeBootstrap);
            return;
        }
        self.state = MaintainerState::Removing;
        self.cascade = cascade;
        self.removed_feed = removed;
        let ddl = self.pipe.sc.ddl_span_id;
        // Both modes' operator controllers freeze everything but the two triggers
        // (`EnterRemovingMode`, maintainer.go:578-583).
        let redo_ddl = self.redo_pipe.as_ref().map(|r| r.sc.ddl_span_id);
        let allowed: BTreeSet<DispatcherId> = [ddl].into_iter().chain(redo_ddl).collect();
        self.pipe.oc.quiesce_except = Some(allowed.clone());
        if let Some(r) = self.redo_pipe.as_mut() {
            r.oc.quiesce_except = Some(allowed);
        }
        self.trace(ctx, "maintainer removing", vec![("cascade", cascade.to_string())]);
        if cascade {
            hit(P::MaintainerRemoveCascade);
            self.close_pending = self.alive.clone();
        } else {
            let me = self.node;
            hit(P::MaintainerRemoveNonCascade);
            let op = Operator::Remove(RemoveDispatcherOperator::new(
                ddl,
                TableSpan::ddl_span(),
                me,
                OperatorType::Remove,
                RemovePostFinish::None,
            ));
            let _ = self.pipe.oc.add_operator(op, &mut self.pipe.sc, &self.alive, ctx.now_ms);
            // The redo trigger goes too (`tryCloseChangefeed`, maintainer.go:1215-1226).
            let now = ctx.now_ms;
            self.in_mode(Mode::Redo, |m| {
                hit(P::MaintainerRemoveRedoTrigger);
                let id = m.pipe.sc.ddl_span_id;
                let op = Operator::Remove(RemoveDispatcherOperator::new(
                    id,
                    TableSpan::ddl_span(),
                    me,
                    OperatorType::Remove,
                    RemovePostFinish::None,
                ));
                let _ = m.pipe.oc.add_operator(op, &mut m.pipe.sc, &m.alive, now);
            });
        }
        self.on_tick(ctx, &NoSchema);
    }

    fn maybe_stopped(&mut self, ctx: &mut Ctx) {
        if self.state != MaintainerState::Removing {
            return;
        }
        // A non-cascade close is done when neither trigger is still being removed.
        let removing_trigger = |p: &Pipeline| p.oc.has(&p.sc.ddl_span_id);
        let done = if self.cascade {
            self.close_pending.is_empty()
        } else {
            !removing_trigger(&self.pipe) && !self.redo_pipe.as_ref().is_some_and(removing_trigger)
        };
        if done {
            self.state = MaintainerState::Stopped;
            self.trace(ctx, "maintainer stopped", vec![]);
            hit(P::MaintainerStopped);
        }
    }

    // ------------------------------------------------------------------ API handlers

    /// [`Self::api_move_table`] on `mode`'s controllers. Redo mode on a changefeed
    /// without redo does nothing and succeeds, as Go's helpers return nil
    /// (maintainer_controller_helper.go:39-46).
    pub fn api_move_table_in(
        &mut self,
        ctx: &mut Ctx,
        mode: Mode,
        table: TableId,
        dest: NodeId,
    ) -> Result<usize, String> {
        self.in_mode(mode, |m| m.api_move_table(ctx, table, dest)).unwrap_or_else(|| {
            hit(P::ApiRedoWithoutRedo);
            Ok(0)
        })
    }

    /// [`Self::api_split_table`] on `mode`'s controllers (redo without redo: a no-op).
    pub fn api_split_table_in(
        &mut self,
        ctx: &mut Ctx,
        mode: Mode,
        table: TableId,
        schema: &dyn SchemaView,
    ) -> Result<usize, String> {
        self.in_mode(mode, |m| m.api_split_table(ctx, table, schema)).unwrap_or_else(|| {
            hit(P::ApiRedoWithoutRedo);
            Ok(0)
        })
    }

    /// [`Self::api_merge_table`] on `mode`'s controllers (redo without redo: a no-op).
    pub fn api_merge_table_in(&mut self, ctx: &mut Ctx, mode: Mode, table: TableId) -> Result<String, String> {
        self.in_mode(mode, |m| m.api_merge_table(ctx, table)).unwrap_or_else(|| {
            hit(P::ApiRedoWithoutRedo);
            Ok(String::new())
        })
    }

    /// `moveTable`: move every span of a table to `dest` (an absent span moves with an empty origin).
    pub fn api_move_table(&mut self, ctx: &mut Ctx, table: TableId, dest: NodeId) -> Result<usize, String> {
        hit(P::ApiMoveTable);
        if !self.initialized() {
            return Err("maintainer not initialized".into());
        }
        let tasks: Vec<(DispatcherId, Option<NodeId>)> =
            self.pipe.sc.tasks_of_table(table).iter().map(|r| (r.id, r.node)).collect();
        if tasks.is_empty() {
            return Err(format!("table {} not found", table));
        }
        let mut n = 0;
        let mut pending = 0;
        for (id, origin) in tasks {
            let settled = origin == Some(dest)
                && self.pipe.sc.get(&id).map(|r| r.state == ReplicaState::Replicating).unwrap_or(false)
                && !self.pipe.oc.has(&id);
            if settled {
                continue;
            }
            if self.admit(ctx, Operator::Move(MoveDispatcherOperator::new(id, origin, dest))) {
                n += 1;
            } else {
                pending += 1;
            }
        }
        if pending > 0 {
            hit(P::ApiMoveTableBusy);
            return Err(format!("{} spans of table {} have a running operator", pending, table));
        }
        Ok(n)
    }

    /// `splitTableByRegionCount`: split a whole-table span into pieces by region count.
    pub fn api_split_table(&mut self, ctx: &mut Ctx, table: TableId, schema: &dyn SchemaView) -> Result<usize, String> {
        hit(P::ApiSplitTable);
        if !self.initialized() {
            return Err("maintainer not initialized".into());
        }
        let tasks: Vec<_> =
            self.pipe.sc.tasks_of_table(table).iter().map(|r| (r.id, r.span, r.node, r.state)).collect();
        let [(id, span, Some(node), ReplicaState::Replicating)] = tasks[..] else {
            return Err(format!("table {} is not one replicating span", table));
        };
        let regions = schema.region_count(table);
        // By region count first; a table under the threshold is cut into two.
        let mut pieces = self.pipe.sc.split_by_region_count(&span, regions, 0);
        if pieces.len() < 2 {
            pieces = self.pipe.sc.split_by_region_count(&span, regions, 2);
        }
        if pieces.len() < 2 {
            return Err("table cannot be split".into());
        }
        let n = pieces.len();
        if self.admit(ctx, Operator::Split(SplitDispatcherOperator::new(id, span, node, pieces, vec![]))) {
            Ok(n)
        } else {
            Err("operator exists".into())
        }
    }

    /// `mergeTable` (test API): merge the first two consecutive spans of the table that
    /// are on one node. If no such pair exists, move the second span to the first span's
    /// node (the caller retries, as the integration test's helper does).
    pub fn api_merge_table(&mut self, ctx: &mut Ctx, table: TableId) -> Result<String, String> {
        hit(P::ApiMergeTable);
        if !self.initialized() {
            return Err("maintainer not initialized".into());
        }
        let mut reps: Vec<(DispatcherId, TableSpan, Option<NodeId>)> =
            self.pipe.sc.tasks_of_table(table).iter().map(|r| (r.id, r.span, r.node)).collect();
        if reps.is_empty() {
            return Err(format!("table {} not found", table));
        }
        if reps.len() == 1 {
            return Ok("only one replication, nothing to merge".into());
        }
        reps.sort_by_key(|r| r.1.start);
        let pair = reps
            .windows(2)
            .find(|w| w[0].2.is_some() && w[0].2 == w[1].2 && w[0].1.end == w[1].1.start)
            .map(|w| (w[0].0, w[1].0));
        let Some((a, b)) = pair else {
            let Some(dest) = reps[0].2 else { return Err("first span is not scheduled".into()) };
            self.admit(ctx, Operator::Move(MoveDispatcherOperator::new(reps[1].0, reps[1].2, dest)));
            hit(P::ApiMergeTableMovesFirst);
            return Err(format!("no two consecutive spans on one node; moving {} to {}", reps[1].0, dest));
        };
        let merged = ctx.new_dispatcher_id();
        let now = ctx.now_ms;
        self.pipe.oc.add_merge_operator(vec![a, b], merged, &mut self.pipe.sc, &self.alive, now)?;
        self.trace(
            ctx,
            "add merge operator",
            vec![
                ("dispatcher", merged.to_string()),
                ("table", table.to_string()),
                ("sources", format!("[{}, {}]", a, b)),
            ],
        );
        Ok(format!("merging {} and {} into {}", a, b, merged))
    }

    /// Replication count of a table (`GET /api/v2/changefeeds/{id}/tables`): tasks of any state.
    pub fn replication_count(&self, table: TableId) -> usize {
        self.pipe.sc.task_count_of_table(table)
    }

    /// `mode`'s controllers (`None`: redo on a changefeed without redo).
    pub fn pipeline(&self, mode: Mode) -> Option<&Pipeline> {
        match mode {
            Mode::Default => Some(&self.pipe),
            Mode::Redo => self.redo_pipe.as_ref(),
        }
    }
}

/// `MaintainerEpochMatches`: equal, or either side 0 (compatibility).
pub fn epoch_matches(a: Epoch, b: Epoch) -> bool {
    a == b || a == 0 || b == 0
}

/// The schemas and tables of the snapshot at a pipeline's trigger start ts, for the
/// post-bootstrap request.
fn schema_infos(p: &Pipeline, schema: &dyn SchemaView) -> Vec<SchemaInfo> {
    let mut schemas: BTreeMap<SchemaId, SchemaInfo> = BTreeMap::new();
    for t in schema.tables_at(p.sc.get(&p.sc.ddl_span_id).map(|r| r.checkpoint_ts).unwrap_or(0)) {
        schemas
            .entry(t.schema_id)
            .or_insert_with(|| SchemaInfo {
                schema_id: t.schema_id,
                schema_name: t.schema_name.clone(),
                tables: vec![],
            })
            .tables
            .push((t.table_id, t.name.clone()));
    }
    schemas.into_values().collect()
}

/// `redoTsByCapture.Set` (maintainer.go:931-937): a newer seq wins even if it regresses;
/// the same seq only with a strictly higher checkpoint.
fn store_redo_watermark(map: &mut BTreeMap<NodeId, Watermark>, from: NodeId, w: Watermark) {
    let newer = match map.get(&from) {
        None => true,
        Some(old) => w.seq > old.seq || (w.seq == old.seq && w.checkpoint_ts > old.checkpoint_ts),
    };
    if newer {
        hit(P::MaintainerRedoWatermarkStored);
        map.insert(from, w);
    }
}

pub fn new_id_from(rng: &mut dyn rand::RngCore) -> DispatcherId {
    loop {
        let v = rng.next_u64();
        if v != 0 {
            return DispatcherId(v);
        }
    }
}

/// A schema view with no tables (used where no schema lookup can happen).
pub struct NoSchema;
impl SchemaView for NoSchema {
    fn tables_at(&self, _: Ts) -> Vec<crate::upstream::TableInfo> {
        vec![]
    }
    fn ddl_history(&self, _: Ts, _: Ts) -> Vec<crate::upstream::DdlEvent> {
        vec![]
    }
    fn region_count(&self, _: TableId) -> u64 {
        1
    }
}
