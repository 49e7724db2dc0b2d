//! Dispatcher manager: one per (changefeed, node).
//!
//! Owns the dispatchers, the table trigger event dispatcher (on the maintainer's
//! node), the operator journal (`currentOperatorMap`) reported at bootstrap, the owner
//! meta `(maintainerID, maintainerEpoch)` that fences every control message, the sink,
//! heartbeats and error collection.
//!
//! `MaintainerFenceMu` is modelled explicitly: while a Create is paused inside the
//! failpoint `BlockCreateDispatcher` the lock is held, and every later control message
//! of this manager (including a new maintainer's bootstrap) waits in `fence_waiters`
//! until the paused Create has completed, exactly as the Go code serialises them.
//!
//! Closing is asynchronous, as `TryClose` is: the owner's first `MaintainerCloseRequest`
//! closes the write path (no dispatcher can be created, nothing is reported any more)
//! and is answered `success=false`; the close finishes in the background; a later
//! allowed close request then gets `success=true` and the orchestrator deletes the
//! manager. Until then the manager stays reachable by control messages.

use super::basic_dispatcher::{Dispatcher, DispatcherEffects, QueuedStatus};
use crate::bugs::Bug;
use crate::config::ChangefeedConfig;
use crate::coverage::{hit, Point as P};
use crate::effects::*;
use crate::messages::*;
use crate::sink::cloudstorage::{CloudStorageSink, FlushOutcome, WriteKind};
use crate::sink::redo::RedoSink;
use crate::trace_ev;
use crate::types::*;
use crate::upstream::{BlockEvent, UpstreamEvent};
use std::collections::{BTreeMap, BTreeSet};

mod redo;
pub use redo::{RedoState, RedoTriggerError};

/// The status collector's batching window: statuses that arrive within 10 ms of the
/// batch's first go out together (`delay.Reset(10 * time.Millisecond)` in
/// `collectComponentStatusWhenChanged`, dispatchermanager/dispatcher_manager.go:852).
pub const STATUS_BATCH_WINDOW_MS: u64 = 10;
/// The block-status collector's batching window, from the batch's first status
/// (`deadline := time.Now().Add(10 * time.Millisecond)` in `collectBlockStatusRequest`,
/// dispatchermanager/dispatcher_manager.go:767).
pub const BLOCK_STATUS_BATCH_WINDOW_MS: u64 = 10;
/// Periodic heartbeat (`HeartBeatRequest`) period.
pub const HEARTBEAT_INTERVAL_MS: u64 = 200;
/// `defaultHeartbeatInitialDelay`: the heartbeat task's first run after its creation.
pub const HEARTBEAT_INITIAL_DELAY_MS: u64 = 1_000;
/// Complete statuses are attached every 10 s.
pub const COMPLETE_STATUS_INTERVAL_MS: u64 = 10_000;
/// The first error is resent every 5 s until the manager is closed.
pub const ERROR_RESEND_MS: u64 = 5_000;
/// Period of a merge's check task (`MergeCheckTask`).
pub const MERGE_CHECK_INTERVAL_MS: u64 = 1_000;

/// A post-bootstrap request admitted by the orchestrator (`msgGuardWaitGroup` holds it)
/// whose handler holds `MaintainerFenceMu` while the trigger's schema store initialises.
#[derive(Clone, Debug)]
pub struct PostBootstrapInFlight {
    pub from: NodeId,
    pub epoch: Epoch,
    pub trigger: DispatcherId,
    pub ready_at_ms: u64,
}

/// A bootstrap of a reused manager whose table trigger is being created
/// (`NewTableTriggerEventDispatcher` inside the handler's `MaintainerFenceMu`).
#[derive(Clone, Debug)]
pub struct BootstrapInFlight {
    pub from: NodeId,
    pub epoch: Epoch,
    pub trigger: DispatcherId,
    /// The redo trigger the bootstrap names, created right after the event one.
    pub redo_trigger: Option<DispatcherId>,
    pub start_ts: Ts,
    pub ready_at_ms: u64,
}

/// A merge in progress on this manager (`MergeCheckTask`).
#[derive(Clone, Debug)]
pub struct MergeTask {
    pub sources: Vec<DispatcherId>,
    pub next_check_ms: u64,
}

#[derive(Clone, Debug)]
pub struct JournalEntry {
    pub req: ScheduleDispatcherRequest,
    pub from: NodeId,
    pub epoch: Epoch,
}

/// A control message waiting for `MaintainerFenceMu`.
#[derive(Clone, Debug)]
pub struct FenceWaiter {
    pub from: NodeId,
    pub msg: Message,
}

/// Go's mutex switches to handing itself to the waiter once one has waited this long
/// (`starvationThresholdNs` in Go's sync/mutex.go).
const MUTEX_STARVATION_MS: u64 = 1;

#[derive(Debug)]
pub struct DispatcherManager {
    pub cf: ChangefeedId,
    pub node: NodeId,
    pub config: ChangefeedConfig,
    pub maintainer_id: NodeId,
    pub maintainer_epoch: Epoch,
    pub dispatchers: BTreeMap<DispatcherId, Dispatcher>,
    pub trigger_id: Option<DispatcherId>,
    /// Candidate fix `drop-bootstrap-of-removed-trigger`: the table triggers this manager
    /// removed (a maintainer generation's trigger leaves only when the generation leaves).
    pub removed_triggers: BTreeSet<DispatcherId>,
    /// The trigger `stop_write_path` dropped (TiCDC still holds it until its asynchronous
    /// removal completes; see `handle_post_bootstrap`).
    pub fenced_trigger: Option<DispatcherId>,
    pub current_operator_map: BTreeMap<DispatcherId, JournalEntry>,
    /// Merge journal (`mergeOperatorMap`): in-flight merge requests, reported at every
    /// bootstrap whatever their epoch, kept while any source still exists.
    pub merge_operator_map: BTreeMap<DispatcherId, (MergeDispatcherRequest, NodeId, Epoch)>,
    pub merge_tasks: BTreeMap<DispatcherId, MergeTask>,
    /// `dispatcherMap.seq`: bumped each time a dispatcher is added (a created table
    /// dispatcher, the trigger, a merged dispatcher at registration). A heartbeat's
    /// watermark carries it so the maintainer can drop an older aggregate that did not
    /// see a new dispatcher yet.
    pub seq: u64,
    /// `latestWatermark`: the watermark of the last periodic aggregate (the heartbeat
    /// task), the bootstrap's start ts with seq 0 until the first one.
    pub latest_watermark: Watermark,
    /// The status collector's copy of `latest_watermark`
    /// (`collectComponentStatusWhenChanged`), taken at the top of its loop: when the
    /// manager starts and right after each status batch goes out, before it waits for the
    /// next status. Aggregates computed while it waits are not seen by the next batch.
    pub status_snapshot: Watermark,
    /// The status collector's open batch: status changes with their sequence numbers
    /// (see `send_status_change`), sent when its 10 ms window closes.
    status_batch: Vec<(TableSpanStatus, u64)>,
    /// Aggregates of the heartbeat collector that ran while `status_batch` was open.
    aggregates_in_status_batch: u32,
    /// The block-status collector's open batch, sent when its 10 ms window closes.
    block_status_batch: Vec<TableSpanBlockStatus>,
    /// When the heartbeat task runs first (`None`: no dispatcher was ever added, so
    /// there is no task yet).
    pub heartbeat_task_at_ms: Option<u64>,
    pub sink: CloudStorageSink,
    pub errors: Vec<RunningError>,
    last_error_sent_ms: Option<u64>,
    last_heartbeat_ms: u64,
    last_complete_ms: u64,
    /// Creates paused by `BlockCreateDispatcher`, holding the fence lock.
    pub blocked_creates: Vec<JournalEntry>,
    pub fence_waiters: Vec<FenceWaiter>,
    /// Block event writes (DDLs, syncpoints) held by failpoint `BlockOrWaitBeforeWrite`.
    pub blocked_writes: Vec<(DispatcherId, BlockEvent)>,
    /// Dispatchers whose barrier-write DONE `BlockOrWaitReportAfterWrite` holds.
    pub held_dones: Vec<DispatcherId>,
    /// The write path closed while a block-event worker was parked in
    /// `BlockOrWaitReportAfterWrite`: the close waits for the worker (closing the
    /// executor waits for its goroutines, block_event_executor.go:118-125, from
    /// `stopWritePath`, dispatcher_manager.go:1139-1141) until the failpoint is off.
    pub close_waits_for_parked_worker: bool,
    /// Latency range [min, max] in ms of the table trigger's first schema-store
    /// initialisation (`InitalizeTableTriggerEventDispatcher`) inside the post-bootstrap
    /// handler, drawn per request from the seeded rng; [0, 0] (the default) runs the
    /// handler in one step. Simplification: a handler in flight completes at the first
    /// dispatcher-manager tick (200 ms) after the drawn instant.
    pub schema_store_init_ms: [u64; 2],
    /// The post-bootstrap handler in flight (it holds the fence lock until it returns).
    pub post_bootstrap_in_flight: Option<PostBootstrapInFlight>,
    /// Latency range [min, max] in ms of creating the table trigger when a bootstrap
    /// reuses this manager (`ensure` -> `NewTableTriggerEventDispatcher`), drawn per
    /// creation; [0, 0] (the default) creates it within the handler's step. A capture's
    /// local fence (`LocalFence` does not take the fence lock) can close the write path
    /// meanwhile. Simplification: the latency stands for a MySQL-class sink's
    /// recovery-info query (`getTableRecoveryInfoFromMysqlSink` in `newEventDispatchers`,
    /// a downstream round trip); for other sinks, the cloud-storage sink modelled here
    /// included, the creation is CPU work only and the race with a local fence is much
    /// narrower. The creation completes at the first dispatcher-manager tick (200 ms)
    /// after the drawn instant, which widens the window. A manager created by the bootstrap itself
    /// creates its trigger in `NewDispatcherManager` (see `NewDispatcherManagerDelay`).
    pub trigger_create_ms: [u64; 2],
    /// Delay range [min, max] in ms between a table dispatcher's creation (a merged
    /// dispatcher: its commit) and its first events, drawn per dispatcher from the seeded
    /// rng; [0, 0] (the default) draws nothing. It stands for the time a new event-store
    /// subscription needs for its first resolved ts, which decides when the dispatcher
    /// turns Working.
    pub first_event_ms: [u64; 2],
    /// The bootstrap handler in flight while the trigger is created (holds the fence lock).
    pub bootstrap_in_flight: Option<BootstrapInFlight>,
    /// No bootstrap has been handled yet: this manager is being created by the current
    /// one (TiCDC's `exists` is false in `handleBootstrapRequest`).
    fresh: bool,
    /// Set by the `leak-fence-lock-when-fenced` bug: the orchestrator-level fenced return
    /// of the post-bootstrap handler never released the lock.
    pub fence_leaked: bool,
    /// When a local fence landed while the post-bootstrap handler held `writePathMu` for
    /// the trigger's schema-store initialisation: `stopWritePath` waits for that mutex
    /// (dispatcher_manager.go:486-502, 1072-1079), so the write path closes when the
    /// initialisation ends (see [`Self::finish_post_bootstrap`]).
    pub fence_waiting_since: Option<u64>,
    /// `closing`: `TryClose` started the asynchronous close.
    pub closing: bool,
    /// `writePathClosed`: set first thing by the close; from then on no dispatcher can
    /// be created and the manager no longer reports to the maintainer, but it stays in
    /// the orchestrator's map (control messages still reach it) until a later allowed
    /// close request finds the close finished.
    pub write_path_closed: bool,
    /// `closed` of TiCDC's manager: the asynchronous close has finished.
    pub close_finished: bool,
    /// `TryClose` returned true: the orchestrator deletes the manager.
    pub closed: bool,
    /// The redo components; `None` when the changefeed has no redo.
    pub redo: Option<RedoState>,
}

impl DispatcherManager {
    pub fn new(cf: ChangefeedId, node: NodeId, config: ChangefeedConfig, sink_instance: u64) -> Self {
        let redo =
            config.redo_enabled().then(|| RedoState::new(RedoSink::new(&cf, node, sink_instance), sink_instance));
        DispatcherManager {
            cf,
            node,
            config: config.clone(),
            maintainer_id: NodeId::default(),
            maintainer_epoch: 0,
            dispatchers: BTreeMap::new(),
            trigger_id: None,
            removed_triggers: BTreeSet::new(),
            fenced_trigger: None,
            current_operator_map: BTreeMap::new(),
            merge_operator_map: BTreeMap::new(),
            merge_tasks: BTreeMap::new(),
            seq: 0,
            latest_watermark: Watermark::default(),
            status_snapshot: Watermark::default(),
            status_batch: Vec::new(),
            aggregates_in_status_batch: 0,
            block_status_batch: Vec::new(),
            heartbeat_task_at_ms: None,
            sink: CloudStorageSink::new(sink_instance),
            errors: Vec::new(),
            last_error_sent_ms: None,
            last_heartbeat_ms: 0,
            last_complete_ms: 0,
            blocked_creates: Vec::new(),
            fence_waiters: Vec::new(),
            blocked_writes: Vec::new(),
            held_dones: Vec::new(),
            close_waits_for_parked_worker: false,
            schema_store_init_ms: [0, 0],
            post_bootstrap_in_flight: None,
            trigger_create_ms: [0, 0],
            first_event_ms: [0, 0],
            bootstrap_in_flight: None,
            fresh: true,
            fence_leaked: false,
            fence_waiting_since: None,
            closing: false,
            write_path_closed: false,
            close_finished: false,
            closed: false,
            redo,
        }
    }

    pub fn fence_locked(&self) -> bool {
        !self.blocked_creates.is_empty()
            || self.fence_leaked
            || self.post_bootstrap_in_flight.is_some()
            || self.bootstrap_in_flight.is_some()
    }

    /// `IsMaintainerRequestAllowed`: exact owner and epoch (epoch 0 = compatibility).
    pub fn request_allowed(&self, ctx: &Ctx, from: NodeId, epoch: Epoch) -> bool {
        if ctx.bug(Bug::NoEpochFencing) {
            return true;
        }
        if epoch == 0 {
            return self.maintainer_epoch == 0
                && (self.maintainer_id == NodeId::default() || self.maintainer_id == from);
        }
        epoch == self.maintainer_epoch && from == self.maintainer_id
    }

    /// `CanUpdateMaintainer`: newer epoch, or the same epoch from the same node.
    pub fn can_update_maintainer(&self, ctx: &Ctx, from: NodeId, epoch: Epoch) -> bool {
        if ctx.bug(Bug::NoEpochFencing) {
            return true;
        }
        if epoch < self.maintainer_epoch {
            return false;
        }
        if epoch == self.maintainer_epoch && self.maintainer_epoch != 0 && from != self.maintainer_id {
            return false;
        }
        !(epoch == 0 && self.maintainer_epoch != 0)
    }

    /// Record that a control message from an older maintainer epoch is being applied
    /// (only reachable with `no-epoch-fencing`); the simulator's `epoch-fencing`
    /// invariant watches for this event.
    fn note_if_stale(&self, ctx: &mut Ctx, what: &str, from: NodeId, epoch: Epoch) {
        if epoch != 0 && epoch < self.maintainer_epoch {
            ctx.observe(Observation::ControlFromOlderEpochApplied {
                cf: self.cf.clone(),
                message: what.to_string(),
                from,
                epoch,
                current_epoch: self.maintainer_epoch,
            });
            self.trace(
                ctx,
                "applied control message from older epoch",
                vec![
                    ("message", what.to_string()),
                    ("from", from.to_string()),
                    ("epoch", epoch.to_string()),
                    ("current_epoch", self.maintainer_epoch.to_string()),
                ],
            );
        }
    }

    fn trace(&self, ctx: &mut Ctx, kind: &'static str, mut fields: Vec<(&'static str, String)>) {
        fields.insert(0, ("changefeed", self.cf.to_string()));
        ctx.trace(Role::DispatcherManager, self.maintainer_epoch, kind, fields);
    }

    // ------------------------------------------------------------------ control messages

    /// Entry point for every control message addressed to this manager. Messages wait
    /// while the fence lock is held by a paused Create.
    pub fn handle_control(&mut self, ctx: &mut Ctx, from: NodeId, msg: Message) -> Option<Message> {
        if self.closed {
            return None;
        }
        if self.fence_locked() {
            hit(P::DmFenceWait);
            self.fence_waiters.push(FenceWaiter { from, msg });
            return None;
        }
        self.apply_control(ctx, from, msg)
    }

    /// One control message (the status changes it makes join the status collector's batch).
    fn apply_control(&mut self, ctx: &mut Ctx, from: NodeId, msg: Message) -> Option<Message> {
        let r = self.apply_control_message(ctx, from, msg);
        self.collect_batches_if_inline(ctx);
        r
    }

    fn apply_control_message(&mut self, ctx: &mut Ctx, from: NodeId, msg: Message) -> Option<Message> {
        match msg {
            Message::ScheduleDispatcherRequest { req, .. } => {
                self.handle_schedule(ctx, from, req);
                None
            }
            Message::HeartBeatResponse { statuses, maintainer_epoch, mode, .. } => {
                if !self.request_allowed(ctx, from, maintainer_epoch) {
                    trace_ev!(
                        ctx,
                        Role::DispatcherManager,
                        self.maintainer_epoch,
                        "drop stale heartbeat response",
                        from = from,
                        epoch = maintainer_epoch
                    );
                    hit(P::DmHeartbeatResponseStale);
                    return None;
                }
                self.note_if_stale(ctx, "HeartBeatResponse", from, maintainer_epoch);
                hit(P::DmHeartbeatResponse);
                self.handle_heartbeat_response(ctx, statuses, mode);
                None
            }
            Message::MaintainerBootstrapRequest {
                start_ts,
                table_trigger_event_dispatcher_id,
                table_trigger_redo_dispatcher_id,
                maintainer_epoch,
                config,
                ..
            } => self.handle_bootstrap(
                ctx,
                from,
                maintainer_epoch,
                start_ts,
                (table_trigger_event_dispatcher_id, table_trigger_redo_dispatcher_id),
                config,
            ),
            Message::MaintainerPostBootstrapRequest { table_trigger_event_dispatcher_id, maintainer_epoch, .. } => {
                self.handle_post_bootstrap(ctx, from, maintainer_epoch, table_trigger_event_dispatcher_id)
            }
            Message::MaintainerCloseRequest { maintainer_epoch, .. } => self.handle_close(ctx, from, maintainer_epoch),
            Message::MergeDispatcherRequest { req, .. } => {
                if !self.request_allowed(ctx, from, req.maintainer_epoch) {
                    self.trace(
                        ctx,
                        "drop stale merge dispatcher request",
                        vec![
                            ("dispatcher", req.merged_dispatcher_id.to_string()),
                            ("from", from.to_string()),
                            ("epoch", req.maintainer_epoch.to_string()),
                        ],
                    );
                    hit(P::DmMergeStale);
                    return None;
                }
                self.note_if_stale(ctx, "MergeDispatcherRequest", from, req.maintainer_epoch);
                // `TrackMergeOperator` refuses a zero merged ID (dispatcher_manager_merge.go:26-37).
                if !req.merged_dispatcher_id.is_zero() {
                    self.merge_operator_map.insert(req.merged_dispatcher_id, (req.clone(), from, req.maintainer_epoch));
                }
                if !self.merge_dispatcher(ctx, &req) {
                    self.maybe_cleanup_merge_operator(&req);
                }
                None
            }
            Message::RedoMetaMessage { checkpoint_ts, resolved_ts, maintainer_epoch, .. } => {
                self.handle_redo_meta(ctx, from, maintainer_epoch, checkpoint_ts, resolved_ts);
                None
            }
            Message::RedoResolvedTsForwardMessage { resolved_ts, maintainer_epoch, .. } => {
                self.handle_redo_forward(ctx, from, maintainer_epoch, resolved_ts);
                None
            }
            _ => None,
        }
    }

    /// Release the fence lock once `BlockCreateDispatcher` is off: finish the paused
    /// Creates, then run the waiting control messages in order. Returns replies.
    pub fn poll_failpoints(&mut self, ctx: &mut Ctx) -> Vec<(NodeId, Message)> {
        let mut replies = Vec::new();
        if !self.blocked_writes.is_empty() && !ctx.fp(FP_BLOCK_OR_WAIT_BEFORE_WRITE) {
            for (id, ev) in std::mem::take(&mut self.blocked_writes) {
                // A dispatcher removed meanwhile drops its write.
                if let Some(d) = self.dispatchers.get(&id) {
                    if !d.try_removing {
                        hit(P::DmBlockWriteReleased);
                        let schema = format!("db{}", d.schema_id);
                        self.write_block(ctx, id, &schema, ev);
                    }
                }
            }
        }
        if !self.held_dones.is_empty() && !ctx.fp(FP_BLOCK_OR_WAIT_REPORT_AFTER_WRITE) {
            for id in std::mem::take(&mut self.held_dones) {
                // A dispatcher removed meanwhile reports nothing.
                let mut fx = DispatcherEffects::default();
                let released = self.dispatchers.get_mut(&id).map(|d| d.release_held_done(ctx.now_ms, &mut fx));
                if released == Some(true) {
                    self.apply_effects(ctx, id, fx);
                }
            }
            self.collect_batches_if_inline(ctx);
        }
        if self.blocked_creates.is_empty() || ctx.fp(FP_BLOCK_CREATE_DISPATCHER) {
            return replies;
        }
        let paused = std::mem::take(&mut self.blocked_creates);
        hit(P::DmCreatePausedResumed);
        for j in paused {
            // A local fence may have closed the write path while the Creates were paused
            // (it does not take the fence lock): `newEventDispatchers` then refuses them
            // and they stay journaled (helper.go:438-448, dispatcher_manager.go:566-568).
            if self.write_path_closed {
                hit(P::DmCreateWritePathClosed);
                self.trace(
                    ctx,
                    "dispatcher manager write path closed, keep add operators",
                    vec![("dispatcher", j.req.config.dispatcher_id.to_string())],
                );
                continue;
            }
            self.create_dispatcher(ctx, &j.req);
        }
        self.release_fence_waiters(ctx, &mut replies);
        replies
    }

    fn handle_schedule(&mut self, ctx: &mut Ctx, from: NodeId, req: ScheduleDispatcherRequest) {
        let id = req.config.dispatcher_id;
        if id.is_zero() {
            return;
        }
        if !self.request_allowed(ctx, from, req.maintainer_epoch) {
            self.trace(
                ctx,
                "drop stale schedule request",
                vec![
                    ("dispatcher", id.to_string()),
                    ("from", from.to_string()),
                    ("epoch", req.maintainer_epoch.to_string()),
                ],
            );
            hit(P::DmScheduleStale);
            return;
        }
        self.note_if_stale(ctx, "ScheduleDispatcherRequest", from, req.maintainer_epoch);
        // A redo request waits for the redo components (the maintainer resends it).
        if req.config.mode == Mode::Redo && !self.redo_ready() {
            hit(P::RedoScheduleNotReady);
            self.trace(ctx, "drop redo schedule request, redo not ready", vec![("dispatcher", id.to_string())]);
            return;
        }
        if let Some(e) = self.current_operator_map.get(&id) {
            if e.from != self.maintainer_id || e.epoch != self.maintainer_epoch {
                hit(P::DmScheduleOldJournalDropped);
                self.current_operator_map.remove(&id);
            } else if req.action == ScheduleAction::Create {
                hit(P::DmCreateDuplicateJournaled);
                return;
            }
        }
        match req.action {
            ScheduleAction::Create => {
                if self.dispatchers.contains_key(&id) {
                    hit(P::DmCreateExisting);
                    return;
                }
                self.current_operator_map
                    .insert(id, JournalEntry { req: req.clone(), from, epoch: req.maintainer_epoch });
                self.trace(
                    ctx,
                    "store current working add operator",
                    vec![
                        ("dispatcher", id.to_string()),
                        ("table", req.config.span.table_id.to_string()),
                        ("span", req.config.span.to_string()),
                        ("op", format!("{:?}", req.operator_type)),
                        ("epoch", req.maintainer_epoch.to_string()),
                    ],
                );
                if self.write_path_closed {
                    // `newEventDispatchers` refuses; the add operator stays journaled.
                    hit(P::DmCreateWritePathClosed);
                    self.trace(
                        ctx,
                        "dispatcher manager write path closed, keep add operators",
                        vec![("dispatcher", id.to_string())],
                    );
                    return;
                }
                if ctx.fp(FP_BLOCK_CREATE_DISPATCHER) {
                    hit(P::DmCreatePaused);
                    self.blocked_creates.push(JournalEntry { req, from, epoch: self.maintainer_epoch });
                    return;
                }
                self.create_dispatcher(ctx, &req);
            }
            ScheduleAction::Remove => {
                if self.dispatchers.contains_key(&id) {
                    self.current_operator_map
                        .insert(id, JournalEntry { req: req.clone(), from, epoch: req.maintainer_epoch });
                }
                self.remove_dispatcher(ctx, id, req.config.mode);
            }
        }
    }

    fn create_dispatcher(&mut self, ctx: &mut Ctx, req: &ScheduleDispatcherRequest) {
        let c = &req.config;
        self.current_operator_map.remove(&c.dispatcher_id);
        if self.dispatchers.contains_key(&c.dispatcher_id) {
            return;
        }
        if c.mode == Mode::Redo {
            self.create_redo_dispatcher(ctx, req);
            return;
        }
        let r = self.recovery_info(ctx, c.span.table_id, c.start_ts);
        // `resolveSkipDMLAsStartTs`: the request's skip flag stands only while the start ts
        // is unchanged.
        let skip_dml = if r.start_ts == c.start_ts {
            c.skip_dml_as_start_ts || r.skip_dml_as_start_ts
        } else {
            r.skip_dml_as_start_ts
        };
        self.init_watermark(r.start_ts);
        let mut d = Dispatcher::new(c.dispatcher_id, c.span, c.schema_id, r.start_ts, false, skip_dml);
        d.skip_sync_point_at_start_ts = r.skip_sync_point_at_start_ts;
        if r.start_ts != c.start_ts {
            hit(P::DmCreateRecoveryLifted);
            self.trace(
                ctx,
                "get table recovery info for dispatchers",
                vec![
                    ("dispatcher", c.dispatcher_id.to_string()),
                    ("table", c.span.table_id.to_string()),
                    ("receiveStartTs", c.start_ts.to_string()),
                    ("realStartTs", r.start_ts.to_string()),
                    ("skipSyncpointAtStartTs", r.skip_sync_point_at_start_ts.to_string()),
                    ("skipDMLAsStartTs", skip_dml.to_string()),
                ],
            );
        }
        d.traffic_since_ms = ctx.now_ms;
        d.events_from_ms = self.first_events_at(ctx);
        self.add_dispatcher(ctx, d);
        hit(P::DmCreateDispatcher);
        ctx.observe(Observation::DispatchersChanged);
        self.trace(
            ctx,
            "create dispatcher",
            vec![
                ("dispatcher", c.dispatcher_id.to_string()),
                ("table", c.span.table_id.to_string()),
                ("span", c.span.to_string()),
                ("start_ts", r.start_ts.to_string()),
                ("op", format!("{:?}", req.operator_type)),
            ],
        );
    }

    /// `removeDispatcher`: detach from the event collector, close its sink writer, and
    /// let the heartbeat loop report Stopped once `TryClose` succeeds. An unknown
    /// dispatcher answers Stopped at once so the maintainer converges, in the request's
    /// mode and with that mode's map sequence.
    fn remove_dispatcher(&mut self, ctx: &mut Ctx, id: DispatcherId, mode: Mode) {
        match self.dispatchers.get_mut(&id) {
            Some(d) => {
                if d.try_removing {
                    hit(P::DmRemoveAlreadyRemoving);
                    return;
                }
                hit(P::DmRemoveDispatcher);
                d.try_removing = true;
                d.registered = false;
                d.queue.clear();
                // A block event write held by a failpoint is abandoned with the dispatcher.
                if self.blocked_writes.iter().any(|(b, _)| *b == id) {
                    hit(P::DmRemoveAbandonsBlockedWrite);
                    self.blocked_writes.retain(|(b, _)| *b != id);
                    d.ddl_writing = None;
                    d.writing_sync_point = false;
                }
                // The writer's last flush and its cleanup race (see `close_dispatcher`);
                // TryClose waits until the table progress has drained either way.
                // A redo dispatcher's buffered rows still go out with the next redo flush.
                if d.mode == Mode::Default {
                    self.sink.close_dispatcher(id, &mut *ctx.rng, &mut ctx.out.storage);
                }
                ctx.observe(Observation::DispatchersChanged);
                self.trace(
                    ctx,
                    "remove dispatcher",
                    vec![("dispatcher", id.to_string()), ("table", self.dispatchers[&id].span.table_id.to_string())],
                );
            }
            None => {
                hit(P::DmRemoveUnknown);
                if mode == Mode::Redo {
                    hit(P::RedoRemoveUnknown);
                }
                self.current_operator_map.remove(&id);
                let seq = self.seq_of(mode);
                self.send_status_change(
                    ctx,
                    TableSpanStatus {
                        mode,
                        id,
                        state: ComponentState::Stopped,
                        checkpoint_ts: 0,
                        event_size_per_second: 0,
                    },
                    seq,
                );
            }
        }
    }

    /// A bootstrap response that carries only an error (`handleDispatcherError`).
    fn bootstrap_error(&self, epoch: Epoch, code: ErrorCode, message: String) -> Message {
        Message::MaintainerBootstrapResponse {
            redo_checkpoint_ts: 0,
            cf: self.cf.clone(),
            spans: vec![],
            checkpoint_ts: 0,
            operators: vec![],
            merge_operators: vec![],
            err: Some(RunningError { node: self.node, code, message }),
            maintainer_epoch: epoch,
        }
    }

    fn handle_bootstrap(
        &mut self,
        ctx: &mut Ctx,
        from: NodeId,
        epoch: Epoch,
        start_ts: Ts,
        (trigger, redo_trigger): (Option<DispatcherId>, Option<DispatcherId>),
        config: ChangefeedConfig,
    ) -> Option<Message> {
        if !self.can_update_maintainer(ctx, from, epoch) {
            self.trace(ctx, "reject stale bootstrap", vec![("from", from.to_string()), ("epoch", epoch.to_string())]);
            hit(P::DmBootstrapStale);
            return None;
        }
        self.note_if_stale(ctx, "MaintainerBootstrapRequest", from, epoch);
        // Trigger takeover validation (PR #5436) before switching owner.
        let mut err = None;
        if let Some(cur) = self.trigger_id {
            match trigger {
                None if !ctx.bug(Bug::AcceptNilTriggerBootstrap) => {
                    hit(P::DmBootstrapRejectNoTrigger);
                    err = Some("bootstrap without table trigger id but a trigger exists")
                }
                Some(t) if t != cur && !ctx.bug(Bug::ReplaceMismatchedTrigger) => {
                    hit(P::DmBootstrapRejectTriggerMismatch);
                    err = Some("table trigger event dispatcher id mismatch")
                }
                Some(t) if t != cur => {
                    // `replace-mismatched-trigger`: the bootstrap owner's trigger replaces the
                    // manager's trigger slot (`SetTableTriggerEventDispatcher`) and is added
                    // to the dispatcher map next to the old one. Nothing closes the old
                    // trigger: it stays in the map, registered with the event collector,
                    // and keeps handling the DDL span's events, so the changefeed has two
                    // DDL owners ("replacing it in place can duplicate DDL ownership", the
                    // comment of PR #5436 that rejects the bootstrap instead). Removing it
                    // from the map here would hide exactly that consequence.
                    // Note: no TiCDC release replaced in place; before #5436 a reused
                    // manager with a trigger created none and answered the bootstrap (the
                    // post-bootstrap request then failed on the ID mismatch). The switch
                    // models the in-place replacement the PR names as the hazard.
                    hit(P::DmBootstrapReplaceTrigger);
                    ctx.observe(Observation::DispatchersChanged);
                    self.trace(
                        ctx,
                        "replace mismatched table trigger",
                        vec![("old", cur.to_string()), ("new", t.to_string())],
                    );
                    self.trigger_id = None;
                }
                _ => {}
            }
        }
        if let Some(e) = err {
            self.trace(ctx, "bootstrap rejected", vec![("reason", e.to_string())]);
            return Some(self.bootstrap_error(epoch, ErrorCode::InitTableTriggerDispatcherFailed, e.to_string()));
        }
        // The redo flavor is validated after the event one (dispatcher_orchestrator.go:288-291).
        if let Some(e) = self.admit_redo_trigger(ctx, redo_trigger) {
            self.trace(ctx, "bootstrap rejected", vec![("reason", e.clone())]);
            return Some(self.bootstrap_error(epoch, ErrorCode::InitTableTriggerDispatcherFailed, e));
        }
        // Candidate fix: a departed generation's delayed resend, before it changes anything.
        if let (Some(t), None) = (trigger, self.trigger_id) {
            if self.removed_triggers.contains(&t) && ctx.fix(crate::bugs::Fix::DropBootstrapOfRemovedTrigger) {
                hit(P::DmBootstrapDropRemovedTrigger);
                self.trace(
                    ctx,
                    "drop bootstrap of a removed table trigger",
                    vec![("dispatcher", t.to_string()), ("from", from.to_string()), ("epoch", epoch.to_string())],
                );
                return None;
            }
        }
        let changed = self.maintainer_id != from || self.maintainer_epoch != epoch;
        self.maintainer_id = from;
        self.maintainer_epoch = epoch;
        self.config = config;
        if changed {
            hit(P::DmBootstrapOwnerChanged);
            ctx.observe(Observation::DispatchersChanged);
            self.trace(
                ctx,
                "dispatcher manager owner updated",
                vec![("maintainer", from.to_string()), ("epoch", epoch.to_string())],
            );
        }
        let reused = !std::mem::replace(&mut self.fresh, false);
        if !reused {
            // `NewDispatcherManager`: the watermark starts at the bootstrap's start ts
            // (seq 0), and the status collector's first copy is taken from it.
            self.latest_watermark = Watermark { checkpoint_ts: start_ts, resolved_ts: start_ts, seq: 0 };
            self.status_snapshot = self.latest_watermark;
            self.start_redo_watermark(start_ts);
        }
        if let (Some(t), None) = (trigger, self.trigger_id) {
            let [lo, hi] = self.trigger_create_ms;
            if reused && hi > 0 && !self.write_path_closed {
                let ready_at_ms = ctx.now_ms + rand::Rng::random_range(&mut *ctx.rng, lo..=hi.max(lo));
                hit(P::DmBootstrapTriggerDelayed);
                self.bootstrap_in_flight =
                    Some(BootstrapInFlight { from, epoch, trigger: t, redo_trigger, start_ts, ready_at_ms });
                self.trace(
                    ctx,
                    "creating table trigger event dispatcher",
                    vec![("dispatcher", t.to_string()), ("ready_at_ms", ready_at_ms.to_string())],
                );
                return None;
            }
            if !self.create_trigger(ctx, t, start_ts) {
                return self.write_path_closed_response(ctx, t, epoch);
            }
        }
        if let Err(reply) = self.ensure_redo_trigger(ctx, redo_trigger, start_ts, epoch) {
            return *reply;
        }
        if !reused {
            self.publish_redo_ready(ctx);
        }
        Some(self.bootstrap_response(ctx, epoch))
    }

    /// `getTableRecoveryInfoFromMysqlSink`: with syncpoints on (TiCDC allows them only
    /// with a MySQL sink) the `ddl_ts` row of the table lifts the start ts; otherwise the
    /// start ts stands (see [`crate::sink::ddl_ts`]).
    fn recovery_info(&self, ctx: &Ctx, table: TableId, start_ts: Ts) -> crate::sink::ddl_ts::Recovery {
        if self.config.sync_point_interval().is_some() {
            crate::sink::ddl_ts::table_recovery_info(ctx.ddl_ts, table, start_ts)
        } else {
            crate::sink::ddl_ts::Recovery { start_ts, skip_sync_point_at_start_ts: false, skip_dml_as_start_ts: false }
        }
    }

    /// `NewTableTriggerEventDispatcher`: false when the write path is closed
    /// (`ErrDispatcherManagerWritePathClosed`).
    fn create_trigger(&mut self, ctx: &mut Ctx, t: DispatcherId, start_ts: Ts) -> bool {
        if self.write_path_closed {
            return false;
        }
        // `NewTableTriggerEventDispatcher` goes through `newEventDispatchers` too: with a
        // MySQL sink the trigger starts at the DDL span's row (the bootstrap response then
        // reports that start ts, and the maintainer builds its tables there). Simplification:
        // the rows a new changefeed removes (`removeDDLTs`) do not exist yet here.
        let r = self.recovery_info(ctx, DDL_SPAN_TABLE_ID, start_ts);
        let start_ts = r.start_ts;
        self.init_watermark(start_ts);
        let mut d = Dispatcher::new(t, TableSpan::ddl_span(), 0, start_ts, true, r.skip_dml_as_start_ts);
        d.skip_sync_point_at_start_ts = r.skip_sync_point_at_start_ts;
        d.traffic_since_ms = ctx.now_ms;
        self.add_dispatcher(ctx, d);
        self.trigger_id = Some(t);
        hit(P::DmTriggerCreated);
        ctx.observe(Observation::DispatchersChanged);
        self.trace(
            ctx,
            "create table trigger event dispatcher",
            vec![("dispatcher", t.to_string()), ("start_ts", start_ts.to_string())],
        );
        true
    }

    /// The trigger could not be created because the write path is closed (the manager is
    /// closing or the capture local-fenced). TiCDC treats that as an expected stop
    /// (`handleBootstrapTriggerError`: Info, no response); the historical behaviour
    /// (`write-path-closed-is-error`) answered the bootstrap with the error, which the
    /// maintainer reports as a changefeed error (warning, cascade stop, restart).
    fn write_path_closed_response(&mut self, ctx: &mut Ctx, t: DispatcherId, epoch: Epoch) -> Option<Message> {
        if ctx.bug(Bug::WritePathClosedIsError) {
            hit(P::DmTriggerWritePathClosedError);
            self.trace(
                ctx,
                "failed to create table trigger dispatcher",
                vec![
                    ("dispatcher", t.to_string()),
                    ("error", ErrorCode::DispatcherManagerWritePathClosed.rfc().to_string()),
                ],
            );
            let code = ErrorCode::DispatcherManagerWritePathClosed;
            return Some(self.bootstrap_error(
                epoch,
                code,
                format!("[{}] dispatcher manager write path is closed", code.rfc()),
            ));
        }
        hit(P::DmTriggerWritePathClosed);
        self.trace(
            ctx,
            "dispatcher manager write path closed while creating table trigger dispatcher",
            vec![("dispatcher", t.to_string())],
        );
        None
    }

    /// The rest of `handleBootstrapRequest` once a reused manager's trigger creation
    /// returned: the bootstrap response (or the write-path-closed handling), then the
    /// lock is released and the control messages that waited run. A capture fenced
    /// meanwhile has closed the write path (the orchestrator's `LocalFence` fences every
    /// manager at once), so the creation fails. Returns the replies.
    pub fn finish_bootstrap(&mut self, ctx: &mut Ctx) -> Vec<(NodeId, Message)> {
        let mut replies = Vec::new();
        match &self.bootstrap_in_flight {
            Some(b) if ctx.now_ms >= b.ready_at_ms => {}
            _ => return replies,
        }
        let b = self.bootstrap_in_flight.take().unwrap();
        hit(P::DmBootstrapTriggerDelayedDone);
        let reply = if self.create_trigger(ctx, b.trigger, b.start_ts) {
            match self.ensure_redo_trigger(ctx, b.redo_trigger, b.start_ts, b.epoch) {
                Ok(()) => Some(self.bootstrap_response(ctx, b.epoch)),
                Err(reply) => *reply,
            }
        } else {
            self.write_path_closed_response(ctx, b.trigger, b.epoch)
        };
        if let Some(r) = reply {
            replies.push((b.from, r));
        }
        self.release_fence_waiters(ctx, &mut replies);
        replies
    }

    /// The fence lock was released: the control messages that waited for it run, in
    /// order, until one takes the lock again. Their replies are appended to `replies`.
    fn release_fence_waiters(&mut self, ctx: &mut Ctx, replies: &mut Vec<(NodeId, Message)>) {
        while !self.fence_locked() && !self.fence_waiters.is_empty() {
            let w = self.fence_waiters.remove(0);
            if let Some(r) = self.apply_control(ctx, w.from, w.msg) {
                replies.push((w.from, r));
            }
        }
    }

    /// `MaintainerBootstrapResponse`: every dispatcher (the redo ones only once redo is
    /// ready), the journal, the merge journal, and both triggers' start ts.
    fn bootstrap_response(&mut self, ctx: &mut Ctx, epoch: Epoch) -> Message {
        let redo_ready = self.redo_ready();
        let spans = self
            .dispatchers
            .values()
            .filter(|d| !d.is_redo() || redo_ready)
            // Each dispatcher reports its component status (`GetComponentStatus`): a
            // dispatcher being removed stays Working until its `TryClose` succeeds and it
            // leaves the map, exactly as TiCDC reports it. The cleanup intent of such a
            // dispatcher travels only in the operator journal below.
            .map(|d| BootstrapTableSpan {
                mode: d.mode,
                id: d.id,
                schema_id: d.schema_id,
                span: d.span,
                state: d.state,
                checkpoint_ts: d.checkpoint_ts(),
                block_state: d.pending_block_state(),
            })
            .collect::<Vec<_>>();
        // Operators: only the current owner's, plus stale Removes whose dispatcher is reported.
        let mut operators = Vec::new();
        let mut stale_removes = Vec::new();
        for e in self.current_operator_map.values() {
            if e.from == self.maintainer_id && e.epoch == self.maintainer_epoch {
                operators.push(e.req.clone());
            } else if e.req.action == ScheduleAction::Remove
                && !ctx.bug(Bug::DropStaleRemoveOperators)
                && spans.iter().any(|s| s.id == e.req.config.dispatcher_id)
            {
                operators.push(e.req.clone());
                stale_removes.push((e.req.config.dispatcher_id, e.from, e.epoch));
            }
        }
        for (id, from, epoch) in stale_removes {
            hit(P::DmBootstrapStaleRemoveReported);
            self.trace(
                ctx,
                "include stale remove operator in bootstrap response",
                vec![("dispatcher", id.to_string()), ("from", from.to_string()), ("epoch", epoch.to_string())],
            );
        }
        // The merge journal is reported whatever the request's epoch (`GetMergeOperators`).
        let merge_operators = self.merge_operator_map.values().map(|(r, _, _)| r.clone()).collect();
        let checkpoint_ts = self.trigger_id.and_then(|t| self.dispatchers.get(&t)).map(|d| d.start_ts).unwrap_or(0);
        let redo_checkpoint_ts = if redo_ready {
            self.redo_trigger_id().and_then(|t| self.dispatchers.get(&t)).map(|d| d.start_ts).unwrap_or(0)
        } else {
            0
        };
        if redo_checkpoint_ts != 0 {
            hit(P::RedoBootstrapResponseTrigger);
        }
        Message::MaintainerBootstrapResponse {
            redo_checkpoint_ts,
            cf: self.cf.clone(),
            spans,
            checkpoint_ts,
            operators,
            merge_operators,
            err: None,
            maintainer_epoch: epoch,
        }
    }

    /// `handlePostBootstrapRequest` up to the trigger initialisation: the handler takes
    /// `MaintainerFenceMu` (a message arriving while it is held waits in
    /// `fence_waiters`), checks the owner, and starts initialising the trigger's schema
    /// store, which takes a drawn time; [`Self::finish_post_bootstrap`] runs the rest.
    fn handle_post_bootstrap(
        &mut self,
        ctx: &mut Ctx,
        from: NodeId,
        epoch: Epoch,
        trigger: DispatcherId,
    ) -> Option<Message> {
        if !self.request_allowed(ctx, from, epoch) {
            self.trace(
                ctx,
                "drop stale maintainer post bootstrap request",
                vec![("from", from.to_string()), ("epoch", epoch.to_string())],
            );
            hit(P::DmPostBootstrapStale);
            return None;
        }
        self.note_if_stale(ctx, "MaintainerPostBootstrapRequest", from, epoch);
        // The trigger the request names must be the one this manager holds: a move can
        // remove it (schedule stream) before a post-bootstrap request waiting in the
        // orchestrator queue is handled. `stop_write_path` here drops the trigger at
        // once, where TiCDC clears it only when its asynchronous removal completes, so the
        // trigger the write path's close dropped still counts as held.
        let held = self.trigger_id.or(if self.write_path_closed { self.fenced_trigger } else { None });
        let reason = match held {
            None => {
                hit(P::DmPostBootstrapNoTrigger);
                Some("receive post bootstrap request but there is no table trigger event dispatcher")
            }
            Some(t) if t != trigger => {
                hit(P::DmPostBootstrapTriggerMismatch);
                Some("receive post bootstrap request but the table trigger event dispatcher id is not match")
            }
            Some(_) => None,
        };
        if let Some(reason) = reason {
            self.trace(
                ctx,
                "post bootstrap rejected",
                vec![("dispatcher", trigger.to_string()), ("reason", reason.to_string())],
            );
            let err = RunningError {
                node: self.node,
                code: ErrorCode::InitTableTriggerDispatcherFailed,
                message: reason.to_string(),
            };
            return Some(Message::MaintainerPostBootstrapResponse {
                cf: self.cf.clone(),
                table_trigger_event_dispatcher_id: trigger,
                err: Some(err),
                maintainer_epoch: epoch,
            });
        }
        // `InitalizeTableTriggerEventDispatcher` on a closed write path: a clean stop.
        if self.write_path_closed {
            hit(P::DmPostBootstrapWritePathClosed);
            self.post_bootstrap_closed_return(ctx);
            return None;
        }
        let first_init = self.dispatchers.get(&trigger).map(|d| d.is_trigger && !d.registered).unwrap_or(false);
        let [lo, hi] = self.schema_store_init_ms;
        // `InitializeTableSchemaStore` of an already initialised trigger (a resent
        // request) returns at once (`needAddDispatcher` false); with no modelled latency
        // the whole handler runs in this step.
        if !first_init || hi == 0 {
            hit(P::DmPostBootstrapInline);
            self.register_trigger(ctx, trigger);
            return Some(Message::MaintainerPostBootstrapResponse {
                cf: self.cf.clone(),
                table_trigger_event_dispatcher_id: trigger,
                err: None,
                maintainer_epoch: epoch,
            });
        }
        let ready_at_ms = ctx.now_ms + rand::Rng::random_range(&mut *ctx.rng, lo..=hi.max(lo));
        self.post_bootstrap_in_flight = Some(PostBootstrapInFlight { from, epoch, trigger, ready_at_ms });
        hit(P::DmPostBootstrapDelayed);
        self.trace(
            ctx,
            "initializing table trigger event dispatcher",
            vec![("dispatcher", trigger.to_string()), ("ready_at_ms", ready_at_ms.to_string())],
        );
        None
    }

    /// The rest of `handlePostBootstrapRequest` once the schema store is initialised:
    /// register the trigger, then the orchestrator-level `fenced` check. Fenced: release
    /// the fence lock and local-fence this manager, no response (the historical code,
    /// `leak-fence-lock-when-fenced`, returned without releasing the lock). Otherwise
    /// answer `MaintainerPostBootstrapResponse` and release the lock (waiting control
    /// messages then run). Returns the replies.
    pub fn finish_post_bootstrap(&mut self, ctx: &mut Ctx, orchestrator_fenced: bool) -> Vec<(NodeId, Message)> {
        let mut replies = Vec::new();
        match &self.post_bootstrap_in_flight {
            Some(p) if ctx.now_ms >= p.ready_at_ms => {}
            _ => return replies,
        }
        let p = self.post_bootstrap_in_flight.take().unwrap();
        match self.fence_waiting_since.take() {
            // Go's mutex hands itself to a waiter blocked for over 1 ms
            // (`starvationThresholdNs`, sync/mutex.go): the fence closes the write path as
            // the initialisation releases `writePathMu`, and the handler's next checks see
            // it closed (dispatcher_manager.go:506-521).
            Some(since) if p.ready_at_ms >= since + MUTEX_STARVATION_MS => {
                self.close_write_path_for_fence(ctx);
                hit(P::DmPostBootstrapClosedAfterInit);
                self.post_bootstrap_closed_return(ctx);
                return replies;
            }
            // A fence that waited less may lose the mutex to the handler, which then
            // registers the trigger before the write path closes and returns on `fenced`.
            Some(_) => {
                self.register_trigger(ctx, p.trigger);
                self.close_write_path_for_fence(ctx);
            }
            None => self.register_trigger(ctx, p.trigger),
        }
        if orchestrator_fenced {
            if ctx.bug(Bug::LeakFenceLockWhenFenced) {
                hit(P::DmPostBootstrapLeakLock);
                self.fence_leaked = true;
                self.trace(
                    ctx,
                    "post bootstrap fenced return without releasing fence lock",
                    vec![("dispatcher", p.trigger.to_string())],
                );
                return replies;
            }
            hit(P::DmPostBootstrapFenced);
            self.local_fence(ctx);
            return replies;
        }
        hit(P::DmPostBootstrapDelayedDone);
        replies.push((
            p.from,
            Message::MaintainerPostBootstrapResponse {
                cf: self.cf.clone(),
                table_trigger_event_dispatcher_id: p.trigger,
                err: None,
                maintainer_epoch: p.epoch,
            },
        ));
        self.release_fence_waiters(ctx, &mut replies);
        replies
    }

    /// The initialised trigger registers with the event collector, and then, once redo
    /// is ready, the redo trigger (`InitalizeTableTriggerRedoDispatcher`).
    /// Simplification: the redo trigger's schema-store initialisation takes no time of its
    /// own; it completes with the event trigger's.
    fn register_trigger(&mut self, ctx: &mut Ctx, trigger: DispatcherId) {
        if let Some(d) = self.dispatchers.get_mut(&trigger) {
            if d.is_trigger && !d.registered {
                d.registered = true;
                hit(P::DmTriggerRegistered);
                self.trace(ctx, "table trigger event dispatcher registered", vec![("dispatcher", trigger.to_string())]);
            }
        }
        self.register_redo_trigger(ctx);
    }

    /// `LocalFence`: stop the write path at once (no drain), and let the close finish in
    /// the background (see [`Self::heartbeat`]). Does not take the fence lock.
    pub fn local_fence(&mut self, ctx: &mut Ctx) {
        if self.closed {
            return;
        }
        hit(P::DmLocalFence);
        self.closing = true;
        if self.post_bootstrap_in_flight.is_some() {
            if self.fence_waiting_since.is_none() {
                hit(P::DmLocalFenceWaitsForInit);
                self.fence_waiting_since = Some(ctx.now_ms);
                self.trace(ctx, "local fence waits for the table trigger's schema-store initialisation", vec![]);
            }
            return;
        }
        self.close_write_path_for_fence(ctx);
    }

    /// `stopWritePath(cancelFirst = true)`: the writers' context goes first.
    fn close_write_path_for_fence(&mut self, ctx: &mut Ctx) {
        self.sink.cancel();
        if let Some(r) = self.redo.as_mut() {
            r.sink.cancel();
        }
        self.stop_write_path(ctx);
    }

    /// The post-bootstrap handler's return on a write-path-closed error: no response, the
    /// fence lock released (dispatcher_orchestrator.go:582-587); before TiCDC PR #5436
    /// this return kept the lock (`leak-fence-lock-on-closed-write-path`).
    fn post_bootstrap_closed_return(&mut self, ctx: &mut Ctx) {
        if ctx.bug(Bug::LeakFenceLockOnClosedWritePath) {
            hit(P::DmPostBootstrapClosedLeakLock);
            self.fence_leaked = true;
            self.trace(ctx, "post bootstrap write path closed return without releasing fence lock", vec![]);
            return;
        }
        self.trace(
            ctx,
            "dispatcher manager write path closed while initializing table trigger event dispatcher",
            vec![],
        );
    }

    fn handle_close(&mut self, ctx: &mut Ctx, from: NodeId, epoch: Epoch) -> Option<Message> {
        // Candidate fix `close-older-owner-manager`: a newer generation's close also
        // closes a manager that never accepted that generation's bootstrap.
        let newer = epoch > self.maintainer_epoch
            && self.maintainer_epoch != 0
            && ctx.fix(crate::bugs::Fix::CloseOlderOwnerManager);
        if newer {
            hit(P::DmCloseOlderOwner);
            self.trace(
                ctx,
                "close dispatcher manager of an older maintainer epoch",
                vec![("from", from.to_string()), ("epoch", epoch.to_string())],
            );
        }
        if !newer && !self.request_allowed(ctx, from, epoch) {
            // A stale owner is answered Success without closing.
            hit(P::DmCloseStaleOwner);
            return Some(Message::MaintainerCloseResponse {
                cf: self.cf.clone(),
                success: true,
                maintainer_epoch: epoch,
            });
        }
        self.note_if_stale(ctx, "MaintainerCloseRequest", from, epoch);
        let success = self.try_close(ctx);
        Some(Message::MaintainerCloseResponse { cf: self.cf.clone(), success, maintainer_epoch: epoch })
    }

    /// `TryClose`: true once the asynchronous close has finished (the orchestrator then
    /// deletes the manager); otherwise start it if needed and answer false, so the
    /// maintainer asks again.
    pub fn try_close(&mut self, ctx: &mut Ctx) -> bool {
        if self.close_finished {
            hit(P::DmClosed);
            self.closed = true;
            ctx.observe(Observation::DispatchersChanged);
            self.trace(ctx, "dispatcher manager closed", vec![]);
            return true;
        }
        if !self.closing {
            hit(P::DmCloseStarted);
            self.closing = true;
            self.stop_write_path(ctx);
        } else {
            hit(P::DmClosePending);
        }
        false
    }

    /// `stopWritePath`: close the write path, every dispatcher and the sink writers, and
    /// leave the heartbeat collector.
    ///
    /// Simplification: TiCDC removes the dispatchers asynchronously (the trigger is
    /// cleared when its removal completes); here they are gone at once. The rest of
    /// the close (`finishClose`: the manager's goroutines exiting) ends at the next
    /// heartbeat tick with no storage operation in flight (see [`Self::heartbeat`]).
    fn stop_write_path(&mut self, ctx: &mut Ctx) {
        if self.write_path_closed {
            return;
        }
        self.write_path_closed = true;
        hit(P::DmStopWritePath);
        let ids: Vec<DispatcherId> = self.dispatchers.keys().copied().collect();
        for id in ids {
            self.sink.abandon_dispatcher(id);
            if let Some(r) = self.redo.as_mut() {
                r.sink.abandon_dispatcher(id);
            }
        }
        self.dispatchers.clear();
        self.merge_tasks.clear();
        self.blocked_writes.clear();
        self.close_waits_for_parked_worker = !self.held_dones.is_empty();
        self.held_dones.clear();
        self.fenced_trigger = self.trigger_id.take();
        if let Some(r) = self.redo.as_mut() {
            r.fenced_trigger = r.trigger_id.take();
            r.stop_meta();
        }
        ctx.observe(Observation::DispatchersChanged);
        self.trace(ctx, "stopping dispatcher manager write path", vec![]);
    }

    /// A barrier's response goes to the dispatchers of its mode only (the map of that
    /// mode; for DB, that mode's trigger too: helper.go:567-589).
    fn handle_heartbeat_response(&mut self, ctx: &mut Ctx, statuses: Vec<DispatcherStatus>, mode: Mode) {
        let mut fx_all = Vec::new();
        if mode == Mode::Redo {
            hit(P::RedoHeartbeatResponse);
        }
        for st in statuses {
            let of_mode = self.dispatchers.values().filter(|d| d.mode == mode);
            let ids: Vec<DispatcherId> = match &st.influenced {
                InfluencedDispatchers::Normal(v) => v.clone(),
                InfluencedDispatchers::Db(s) => {
                    of_mode.filter(|d| d.schema_id == *s || d.is_trigger).map(|d| d.id).collect()
                }
                InfluencedDispatchers::All => of_mode.map(|d| d.id).collect(),
            };
            for id in ids {
                let Some(d) = self.dispatchers.get_mut(&id).filter(|d| d.mode == mode) else { continue };
                let mut fx = DispatcherEffects::default();
                let q = QueuedStatus {
                    ack: st.ack.clone(),
                    action: st.action.clone(),
                    ignored: st.ignored_block_status.clone(),
                    match_sync_point: ctx.fix(crate::bugs::Fix::MatchActionOnSyncPoint),
                };
                d.handle_status(q, ctx.now_ms, &mut fx);
                fx_all.push((id, fx));
            }
        }
        for (id, fx) in fx_all {
            self.apply_effects(ctx, id, fx);
        }
    }

    // ------------------------------------------------------------------ merge

    /// `mergeEventDispatcher`: validate the sources (>= 2, existing, Working, one table,
    /// consecutive), create the merged dispatcher in Preparing and mark the sources
    /// WaitingMerge. Returns false when no merge task was started.
    fn merge_dispatcher(&mut self, ctx: &mut Ctx, req: &MergeDispatcherRequest) -> bool {
        let merged = req.merged_dispatcher_id;
        if req.dispatcher_ids.len() < 2 || merged.is_zero() {
            return false;
        }
        if let Some(d) = self.dispatchers.get(&merged) {
            // Outdated request: report Working again, or let the running merge go on.
            hit(P::DmMergeOutdated);
            if d.state == ComponentState::Working {
                let st = d.status();
                let seq = self.seq_of(d.mode);
                self.send_status_change(ctx, st, seq);
            }
            return false;
        }
        let mut span: Option<TableSpan> = None;
        let mut start = u64::MAX;
        let mut schema_id = 0;
        for id in &req.dispatcher_ids {
            let ok = match self.dispatchers.get(id) {
                // The sources are looked up in the request's mode's map.
                Some(d)
                    if d.mode == req.mode && d.state == ComponentState::Working && !d.try_removing && !d.is_trigger =>
                {
                    match span {
                        None => {
                            span = Some(d.span);
                            schema_id = d.schema_id;
                            true
                        }
                        Some(s) if s.table_id == d.span.table_id && s.end == d.span.start => {
                            span = Some(TableSpan { table_id: s.table_id, start: s.start, end: d.span.end });
                            true
                        }
                        _ => false,
                    }
                }
                _ => false,
            };
            if !ok {
                hit(P::DmMergeSourceInvalid);
                self.trace(
                    ctx,
                    "merge dispatcher failed",
                    vec![("dispatcher", merged.to_string()), ("source", id.to_string())],
                );
                return false;
            }
            start = start.min(self.dispatchers[id].checkpoint_ts());
        }
        let span = span.unwrap();
        let mut d = Dispatcher::new(merged, span, schema_id, start, false, false);
        d.mode = req.mode;
        if req.mode == Mode::Redo {
            hit(P::RedoMergeStarted);
        }
        d.traffic_since_ms = ctx.now_ms;
        d.state = ComponentState::Preparing;
        d.registered = false;
        self.add_dispatcher(ctx, d);
        for id in &req.dispatcher_ids {
            self.dispatchers.get_mut(id).unwrap().state = ComponentState::WaitingMerge;
        }
        hit(P::DmMergeStarted);
        self.merge_tasks.insert(
            merged,
            MergeTask { sources: req.dispatcher_ids.clone(), next_check_ms: ctx.now_ms + MERGE_CHECK_INTERVAL_MS },
        );
        self.trace(
            ctx,
            "new dispatcher created(merge dispatcher)",
            vec![
                ("dispatcher", merged.to_string()),
                ("table", span.table_id.to_string()),
                ("span", span.to_string()),
                ("sources", format!("{:?}", req.dispatcher_ids.iter().map(|d| d.to_string()).collect::<Vec<_>>())),
            ],
        );
        true
    }

    /// Run due merge check tasks: abort when a side is missing or removing; otherwise
    /// (once the merged dispatcher is MergeReady) detach the sources and, when every
    /// source can close, commit: the merged dispatcher starts at the sources' minimum
    /// checkpoint as Initializing and the sources are removed.
    ///
    /// Simplification: TiCDC's `doMerge` loops every 10 ms inside the task until all
    /// sources close; here the check repeats every `MERGE_CHECK_INTERVAL_MS`. The
    /// merged start ts follows `resolveMergedDispatcherStartTs` (see
    /// [`merged_start_ts_candidate`]).
    fn run_merge_checks(&mut self, ctx: &mut Ctx) {
        let due: Vec<DispatcherId> =
            self.merge_tasks.iter().filter(|(_, t)| ctx.now_ms >= t.next_check_ms).map(|(id, _)| *id).collect();
        for merged in due {
            let sources = self.merge_tasks[&merged].sources.clone();
            self.merge_tasks.get_mut(&merged).unwrap().next_check_ms = ctx.now_ms + MERGE_CHECK_INTERVAL_MS;
            let abort = match self.dispatchers.get(&merged) {
                None => Some("merged_dispatcher_missing"),
                Some(d) if d.try_removing => Some("merged_dispatcher_removing"),
                _ => sources.iter().find_map(|s| match self.dispatchers.get(s) {
                    None => Some("source_dispatcher_missing"),
                    Some(d) if d.try_removing => Some("source_dispatcher_removing"),
                    _ => None,
                }),
            };
            if let Some(reason) = abort {
                hit(P::DmMergeAborted);
                self.merge_tasks.remove(&merged);
                for s in &sources {
                    if let Some(d) = self.dispatchers.get_mut(s) {
                        if d.try_removing {
                            continue;
                        }
                        if d.state == ComponentState::WaitingMerge {
                            d.state = ComponentState::Working;
                        }
                        d.merging = false;
                        d.registered = true;
                    }
                }
                self.trace(
                    ctx,
                    "abort merge",
                    vec![("dispatcher", merged.to_string()), ("reason", reason.to_string())],
                );
                if self.dispatchers.contains_key(&merged) {
                    let mode = self.dispatchers[&merged].mode;
                    self.remove_dispatcher(ctx, merged, mode);
                }
                self.merge_operator_map.remove(&merged);
                continue;
            }
            let d = self.dispatchers.get_mut(&merged).unwrap();
            if d.state == ComponentState::Preparing {
                hit(P::DmMergeReady);
                d.state = ComponentState::MergeReady;
            }
            let not_ready = ctx.fp(FP_NOT_READY_TO_CLOSE_DISPATCHER);
            let mut all_closed = true;
            let mut min_cp = u64::MAX;
            let mut pending = Vec::new();
            for s in &sources {
                let d = self.dispatchers.get_mut(s).unwrap();
                if !d.merging {
                    d.merging = true;
                    d.registered = false;
                    d.queue.clear();
                }
                if not_ready || !d.can_close() {
                    all_closed = false;
                }
                min_cp = min_cp.min(d.checkpoint_ts());
                pending.push(d.pending_block_state());
            }
            if !all_closed {
                hit(P::DmMergeWaitSources);
                continue;
            }
            self.merge_tasks.remove(&merged);
            let c = if ctx.bug(Bug::IgnorePendingBlockStartTs) {
                hit(P::DmMergeIgnorePendingBlock);
                MergedStartTs { start_ts: min_cp, skip_dml_as_start_ts: false, pending: None }
            } else {
                merged_start_ts_candidate(min_cp, &pending)
            };
            let table = self.dispatchers[&merged].span.table_id;
            // `mergeMergedStartTsCandidateWithMySQLRecovery`: a later row wins with its
            // flags; an equal one adds its flags.
            // A redo merge has no MySQL recovery (dispatcher_manager_merge.go:127-131).
            let r = if self.dispatchers[&merged].is_redo() {
                crate::sink::ddl_ts::Recovery {
                    start_ts: c.start_ts,
                    skip_sync_point_at_start_ts: false,
                    skip_dml_as_start_ts: false,
                }
            } else {
                self.recovery_info(ctx, table, c.start_ts)
            };
            let mut c = c;
            let mut skip_sp = false;
            if r.start_ts > c.start_ts {
                hit(P::DmMergeRecoveryLifted);
                c.start_ts = r.start_ts;
                c.skip_dml_as_start_ts = r.skip_dml_as_start_ts;
                skip_sp = r.skip_sync_point_at_start_ts;
            } else if r.start_ts == c.start_ts {
                c.skip_dml_as_start_ts |= r.skip_dml_as_start_ts;
                skip_sp = r.skip_sync_point_at_start_ts;
            }
            if let Some((ts, sp)) = c.pending {
                hit(P::DmMergePendingBlockStart);
                self.trace(
                    ctx,
                    "merge dispatcher uses pending block event to calculate start ts",
                    vec![
                        ("dispatcher", merged.to_string()),
                        ("table", table.to_string()),
                        ("pendingCommitTs", ts.to_string()),
                        ("pendingIsSyncPoint", sp.to_string()),
                        ("startTs", c.start_ts.to_string()),
                        ("skipDMLAsStartTs", c.skip_dml_as_start_ts.to_string()),
                        ("minCheckpointTs", min_cp.to_string()),
                    ],
                );
            }
            let events_from = self.first_events_at(ctx);
            let d = self.dispatchers.get_mut(&merged).unwrap();
            d.start_ts = c.start_ts;
            d.fed_ts = c.start_ts;
            d.resolved_ts = c.start_ts;
            d.skip_dml_as_start_ts = c.skip_dml_as_start_ts;
            d.skip_sync_point_at_start_ts = skip_sp;
            d.state = ComponentState::Initializing;
            d.registered = true;
            d.events_from_ms = events_from;
            hit(P::DmMergeCommitted);
            self.trace(
                ctx,
                "merge dispatcher commit",
                vec![
                    ("dispatcher", merged.to_string()),
                    ("table", table.to_string()),
                    ("start_ts", c.start_ts.to_string()),
                ],
            );
            for s in &sources {
                let mode = self.dispatchers.get(s).map_or(Mode::Default, |d| d.mode);
                self.remove_dispatcher(ctx, *s, mode);
            }
        }
    }

    /// `isMergeOperatorFinished`: an invalid request, or no source left and the merged
    /// dispatcher Working or gone.
    fn merge_finished(&self, req: &MergeDispatcherRequest) -> bool {
        if req.dispatcher_ids.len() < 2 {
            return true;
        }
        if req.dispatcher_ids.iter().any(|s| self.dispatchers.contains_key(s)) {
            return false;
        }
        self.dispatchers.get(&req.merged_dispatcher_id).map(|d| d.state == ComponentState::Working).unwrap_or(true)
    }

    /// `MaybeCleanupMergeOperator`: drop the journal entry of a finished merge, or of one
    /// whose merged dispatcher does not exist.
    fn maybe_cleanup_merge_operator(&mut self, req: &MergeDispatcherRequest) {
        if self.merge_finished(req) || !self.dispatchers.contains_key(&req.merged_dispatcher_id) {
            self.merge_operator_map.remove(&req.merged_dispatcher_id);
        }
    }

    /// `cleanupFinishedMergeOperators`, run with every heartbeat.
    fn cleanup_finished_merge_operators(&mut self) {
        let done: Vec<DispatcherId> =
            self.merge_operator_map.iter().filter(|(_, (r, _, _))| self.merge_finished(r)).map(|(id, _)| *id).collect();
        for id in done {
            self.merge_operator_map.remove(&id);
        }
    }

    // ------------------------------------------------------------------ data path

    /// Dispatchers registered with the event collector: (id, span, fed_ts, is_trigger, queue len).
    pub fn event_cursors(&self, now_ms: u64) -> Vec<(DispatcherId, TableSpan, Ts, bool, usize)> {
        self.dispatchers
            .values()
            .filter(|d| d.registered && !d.try_removing && now_ms >= d.events_from_ms)
            .map(|d| (d.id, d.span, d.fed_ts, d.is_trigger, d.queue.len()))
            .collect()
    }

    /// When a new table dispatcher may get its first events (`first_event_ms`).
    fn first_events_at(&self, ctx: &mut Ctx) -> u64 {
        let [lo, hi] = self.first_event_ms;
        if hi == 0 {
            return 0;
        }
        ctx.now_ms + rand::Rng::random_range(&mut *ctx.rng, lo..=hi.max(lo))
    }

    /// The event service delivers events in commit-ts order up to `up_to`.
    pub fn feed(&mut self, id: DispatcherId, events: Vec<UpstreamEvent>, up_to: Ts) {
        if let Some(d) = self.dispatchers.get_mut(&id) {
            // An event dispatcher held by the redo global ts has cached its batch and told
            // the dynamic stream it blocks (event_dispatcher.go:137-142): its path gets
            // nothing more until `HandleCacheEvents` wakes it.
            if d.held_by_redo {
                hit(P::RedoFeedPaused);
                return;
            }
            if up_to > d.fed_ts {
                // A blocked dispatcher stops reading its queue; without this, a resolved ts per
                // 50 ms poll would pile up for as long as it stays blocked. Adjacent resolved
                // events are handled as one (only the newest counts), so this changes nothing.
                if events.is_empty() && matches!(d.queue.back(), Some(UpstreamEvent::Resolved(_))) {
                    hit(P::DmFeedCoalesceResolved);
                    d.queue.pop_back();
                }
                d.queue.extend(events);
                d.queue.push_back(UpstreamEvent::Resolved(up_to));
                d.fed_ts = up_to;
            }
        }
    }

    /// Let every dispatcher handle its queued events (`handleEvents`).
    pub fn process(&mut self, ctx: &mut Ctx) {
        let ids: Vec<DispatcherId> = self.dispatchers.keys().copied().collect();
        // With redo, event dispatchers handle nothing above the redo global resolved ts.
        let hold = self.redo.as_ref().map(|r| r.global_ts);
        for id in ids {
            let has_buf = self.sink.has_buffered(id);
            let d = self.dispatchers.get_mut(&id).unwrap();
            let mut fx = DispatcherEffects::default();
            d.handle_events_held(ctx.now_ms, has_buf, hold, &mut fx);
            // Applying nothing does nothing (and moving the effects costs a copy).
            if !fx.is_empty() {
                self.apply_effects(ctx, id, fx);
            }
        }
        self.collect_batches_if_inline(ctx);
    }

    fn apply_effects(&mut self, ctx: &mut Ctx, id: DispatcherId, mut fx: DispatcherEffects) {
        fx.failed.drain_into(ctx.out);
        let Some(d) = self.dispatchers.get(&id) else { return };
        if let Some(ev) = &fx.write_block {
            // Rows handed to the sink and not yet durable (`progress`) must all be flushed
            // before a block event is written (`FlushDMLBeforeBlock`; for redo, the
            // DML batch's block until its log is written).
            let flushed = d.progress.is_empty();
            ctx.always(crate::assertions::Assertion::DispatcherBlockWriteAfterRows, flushed, || {
                format!("dispatcher={} block={:?} rows_in_flight={:?}", id, ev.key(), d.progress)
            });
        }
        let span = d.span;
        let mode = d.mode;
        // Built only for a write: this runs for every dispatcher on every event poll.
        let schema_id = d.schema_id;
        let schema = || format!("db{}", schema_id);
        for (kind, mut fields) in fx.notes {
            fields.insert(0, ("dispatcher", id.to_string()));
            fields.insert(1, ("table", span.table_id.to_string()));
            self.trace(ctx, kind, fields);
        }
        if !fx.rows.is_empty() {
            if let (Mode::Redo, Some(r)) = (mode, self.redo.as_mut()) {
                for row in fx.rows {
                    r.sink.append_row(id, row);
                }
            } else {
                let schema = schema();
                for r in fx.rows {
                    self.sink.append_row(id, span, &schema, r);
                }
            }
        }
        if fx.flush_rows {
            let rng = &mut *ctx.rng;
            self.sink.flush(Some(id), rng, &mut ctx.out.storage);
        }
        if let Some(ev) = fx.write_block {
            // The failpoint sits in `ExecuteBlockEventDDL`, the write of a barrier's Write
            // action; non-blocking DDLs (written before they are reported) and DDLs a
            // dispatcher writes alone take another path and are not held.
            let barrier_write = self
                .dispatchers
                .get(&id)
                .and_then(|d| d.block.as_ref())
                .map(|b| b.stage == BlockStage::Writing && b.event.key() == ev.key())
                .unwrap_or(false);
            if barrier_write && ctx.fp(FP_BLOCK_OR_WAIT_BEFORE_WRITE) {
                // The block-event executor waits before the sink write; the dispatcher
                // stays in its writing state (its checkpoint below the event).
                hit(P::DmBlockWriteHeld);
                let (kind, table) = match &ev {
                    BlockEvent::Ddl(d) => ("block before write ddl", d.table_id),
                    BlockEvent::SyncPoint(_) => ("block before write sync point", span.table_id),
                };
                self.trace(
                    ctx,
                    kind,
                    vec![
                        ("dispatcher", id.to_string()),
                        ("table", table.to_string()),
                        ("commit_ts", ev.commit_ts().to_string()),
                    ],
                );
                self.blocked_writes.push((id, ev));
            } else {
                self.write_block(ctx, id, &schema(), ev);
            }
        }
        if fx.became_working {
            let st = self.dispatchers[&id].status();
            let seq = self.dispatchers[&id].seq;
            ctx.observe(Observation::DispatchersChanged);
            self.trace(
                ctx,
                "dispatcher working",
                vec![("dispatcher", id.to_string()), ("table", span.table_id.to_string())],
            );
            self.send_status_change(ctx, st, seq);
        }
        if !fx.block_statuses.is_empty() {
            let statuses =
                fx.block_statuses.into_iter().map(|state| TableSpanBlockStatus { mode, id, state }).collect();
            self.send_block_statuses(ctx, statuses);
        }
    }

    fn write_block(&mut self, ctx: &mut Ctx, id: DispatcherId, schema: &str, ev: BlockEvent) {
        if self.dispatchers.get(&id).is_some_and(|d| d.is_redo()) {
            self.write_redo_block(ctx, id, schema, ev);
            return;
        }
        match ev {
            BlockEvent::Ddl(d) => self.write_ddl(ctx, id, schema, d),
            BlockEvent::SyncPoint(ts) => self.write_sync_point(ctx, id, ts),
        }
    }

    /// The trigger writes the syncpoint record (`SendSyncPointEvent`; see
    /// [`crate::syncpoint`]): the secondary ts is the writer's clock.
    fn write_sync_point(&mut self, ctx: &mut Ctx, id: DispatcherId, ts: Ts) {
        let rec = crate::syncpoint::SyncPointRecord {
            changefeed: self.cf.to_string(),
            primary_ts: ts,
            secondary_ts: ts_from_ms(ctx.now_ms),
        };
        self.sink.write_sync_point(id, rec, &mut *ctx.rng, &mut ctx.out.storage);
        let barrier = self
            .dispatchers
            .get(&id)
            .and_then(|d| d.block.as_ref())
            .map(|b| b.event.key() == (ts, true) && b.stage == BlockStage::Writing)
            .unwrap_or(false);
        if barrier {
            hit(P::SyncPointWriteBarrier);
            ctx.observe(Observation::BarrierWrite {
                cf: self.cf.clone(),
                maintainer_epoch: self.maintainer_epoch,
                commit_ts: ts,
                sync_point: true,
                dispatcher: id,
            });
        }
        self.trace(
            ctx,
            "write sync point",
            vec![
                ("dispatcher", id.to_string()),
                ("commit_ts", ts.to_string()),
                ("mode", if barrier { "barrier" } else { "self" }.to_string()),
            ],
        );
    }

    fn write_ddl(&mut self, ctx: &mut Ctx, id: DispatcherId, schema: &str, ev: crate::upstream::DdlEvent) {
        let mut rec = ev.record();
        if rec.schema_name.is_empty() {
            rec.schema_name = schema.to_string();
        }
        self.sink.write_ddl(id, rec, &mut *ctx.rng, &mut ctx.out.storage);
        // `barrier`: the barrier chose this dispatcher as the writer (Write action);
        // `self`: a DDL only this dispatcher sees (single-table on a full span, or the
        // trigger's non-blocking events), which a restarted span may write again.
        let barrier = self
            .dispatchers
            .get(&id)
            .and_then(|d| d.block.as_ref())
            .map(|b| b.event.key() == (ev.commit_ts, false) && b.stage == BlockStage::Writing)
            .unwrap_or(false);
        if barrier {
            hit(P::DmWriteDdlBarrier);
            ctx.observe(Observation::BarrierWrite {
                cf: self.cf.clone(),
                maintainer_epoch: self.maintainer_epoch,
                commit_ts: ev.commit_ts,
                sync_point: false,
                dispatcher: id,
            });
        } else {
            hit(P::DmWriteDdlSelf);
        }
        self.trace(
            ctx,
            "write ddl",
            vec![
                ("dispatcher", id.to_string()),
                ("table", ev.table_id.to_string()),
                ("commit_ts", ev.commit_ts.to_string()),
                ("query", ev.query.clone()),
                ("mode", if barrier { "barrier" } else { "self" }.to_string()),
            ],
        );
    }

    /// Periodic sink flush (`flush-interval`).
    pub fn flush_sink(&mut self, ctx: &mut Ctx) {
        self.sink.flush(None, &mut *ctx.rng, &mut ctx.out.storage);
    }

    /// Completion of a storage request issued by this manager's sink.
    pub fn on_storage_result(&mut self, ctx: &mut Ctx, op_id: u64, res: Result<(), StorageError>) {
        self.on_storage_outcome(ctx, op_id, res);
        self.collect_batches_if_inline(ctx);
    }

    fn on_storage_outcome(&mut self, ctx: &mut Ctx, op_id: u64, res: Result<(), StorageError>) {
        if self.on_redo_meta_put(ctx, op_id, &res) {
            return;
        }
        let outcome = match self.redo.as_mut().and_then(|r| r.sink.on_result(op_id, &res)) {
            Some(FlushOutcome::Failed { dispatcher, error, .. }) => {
                self.on_redo_write_failed(ctx, dispatcher, error);
                return;
            }
            Some(o) => o,
            None => self.sink.on_result(op_id, res, &mut ctx.out.storage),
        };
        match outcome {
            FlushOutcome::Pending | FlushOutcome::Unknown | FlushOutcome::Cancelled => {}
            FlushOutcome::Durable { dispatcher, commit_ts, kind } => {
                let Some(d) = self.dispatchers.get_mut(&dispatcher) else {
                    hit(P::SinkDurableDispatcherGone);
                    return;
                };
                if kind != WriteKind::Rows {
                    hit(P::SinkDurableBlock);
                    let mut fx = DispatcherEffects::default();
                    let hold = ctx.fp(FP_BLOCK_OR_WAIT_REPORT_AFTER_WRITE);
                    d.on_block_written(commit_ts[0], kind == WriteKind::SyncPoint, hold, ctx.now_ms, &mut fx);
                    if d.held_done.is_some() && !self.held_dones.contains(&dispatcher) {
                        self.held_dones.push(dispatcher);
                    }
                    self.apply_effects(ctx, dispatcher, fx);
                } else {
                    hit(P::SinkDurableRows);
                    for ts in commit_ts {
                        if let Some(c) = d.progress.get_mut(&ts) {
                            *c -= 1;
                            if *c == 0 {
                                d.progress.remove(&ts);
                            }
                        }
                    }
                }
            }
            FlushOutcome::Failed { dispatcher, error, closing, kind } => {
                let escalate = !closing || ctx.bug(Bug::EscalateClosingWriterError);
                if escalate {
                    hit(P::SinkErrorEscalated);
                    if closing {
                        hit(P::SinkClosingErrorEscalated);
                    }
                    ctx.observe(Observation::SinkErrorEscalated {
                        cf: self.cf.clone(),
                        dispatcher,
                        error: error.to_string(),
                        closing,
                    });
                }
                self.trace(
                    ctx,
                    "cloud storage write failed",
                    vec![
                        ("dispatcher", dispatcher.to_string()),
                        ("error", error.to_string()),
                        ("closing", closing.to_string()),
                        ("escalated", escalate.to_string()),
                    ],
                );
                if let Some(d) = self.dispatchers.get_mut(&dispatcher) {
                    // A failed DDL write of the non-blocking path drops its add-table
                    // checkpoint blocker and its schedule report (basic_dispatcher.go:1142-1152).
                    if kind == WriteKind::Ddl {
                        if let Some(ts) = d.ddl_writing {
                            if d.add_table_blockers.contains(&ts) {
                                hit(P::SinkFailedDdlDropsBlocker);
                            }
                            d.add_table_blockers.remove(&ts);
                            d.nonblocking_written.take_if(|st| st.block_ts == ts);
                        }
                    }
                    // Abandoned rows: keep the checkpoint below them, release progress so
                    // the close can finish.
                    if let Some(&min) = d.progress.keys().next() {
                        d.lost_floor = Some(d.lost_floor.map_or(min, |l| l.min(min)));
                    }
                    if closing {
                        d.progress.clear();
                        d.ddl_writing = None;
                        d.writing_sync_point = false;
                    }
                }
                if escalate {
                    self.errors.push(RunningError {
                        node: self.node,
                        code: ErrorCode::ChangefeedRetryable,
                        message: format!("ErrS3StorageAPI: {}", error),
                    });
                }
            }
        }
    }

    /// The heartbeat task (every 200 ms): finish removals whose `TryClose` succeeds,
    /// resend block statuses, report watermark and statuses, and the first error.
    pub fn heartbeat(&mut self, ctx: &mut Ctx, force: bool) {
        self.heartbeat_with_traffic(ctx, force, &crate::upstream::NoTraffic)
    }

    /// [`Self::heartbeat`] with the upstream's write traffic: each status of a
    /// complete-status heartbeat carries its dispatcher's `EventSizePerSecond`
    /// (`getDispatcherStatus`).
    pub fn heartbeat_with_traffic(&mut self, ctx: &mut Ctx, force: bool, traffic: &dyn crate::upstream::TrafficView) {
        if self.closed {
            return;
        }
        if self.write_path_closed {
            // Left the heartbeat collector: nothing is reported any more. The close
            // finishes once the sink has nothing in flight.
            // Simplification: the close waits for the manager's fence lock. In TiCDC
            // `finishClose` itself does not take `MaintainerFenceMu`; the dispatcher
            // manager's request handlers do (schedule, heartbeat response, merge:
            // `dispatchermanager/helper.go`), so with the lock leaked the next such
            // message parks its handler goroutine forever and the capture's shutdown,
            // which waits for those handlers, cannot finish. Modelled as "the close
            // cannot finish while the lock is held", a handler in flight included.
            if self.closing
                && !self.close_finished
                && self.sink.inflight_count() == 0
                && self.redo.as_ref().is_none_or(|r| r.sink.inflight_count() == 0)
                && !self.fence_leaked
                && self.post_bootstrap_in_flight.is_none()
                && self.bootstrap_in_flight.is_none()
                && !(self.close_waits_for_parked_worker && ctx.fp(FP_BLOCK_OR_WAIT_REPORT_AFTER_WRITE))
            {
                hit(P::DmCloseFinishedAsync);
                self.close_finished = true;
                self.trace(ctx, "event dispatcher manager closed", vec![]);
            }
            return;
        }
        self.collect_batches_if_inline(ctx);
        self.run_merge_checks(ctx);
        self.resend_block_statuses(ctx);
        if ctx.inline_continuations() {
            self.collect_block_status_batch(ctx);
        }
        // The heartbeat task (`HeartBeatTask`) exists from the first dispatcher on and
        // first runs `defaultHeartbeatInitialDelay` after it; before that nothing is
        // aggregated (no watermark, no TryClose). `force` stands for a run of the task
        // now (unit tests drive the manager with it).
        let task_due = self.heartbeat_task_at_ms.is_some_and(|t| ctx.now_ms >= t);
        if !force && (!task_due || ctx.now_ms < self.last_heartbeat_ms + HEARTBEAT_INTERVAL_MS) {
            // The error collector reports on its own (`collectErrors`), heartbeat task
            // or not: a request with the error and no watermark.
            if !task_due {
                if let (Some(err), Some(to)) = (self.error_to_send(ctx.now_ms), self.report_target()) {
                    hit(P::DmHeartbeatErrorOnly);
                    ctx.send(
                        to,
                        Message::HeartBeatRequest {
                            redo_watermark: None,
                            cf: self.cf.clone(),
                            watermark: Watermark::default(),
                            statuses: vec![],
                            complete_status: false,
                            err: Some(err),
                        },
                    );
                }
            }
            return;
        }
        let not_ready = ctx.fp(FP_NOT_READY_TO_CLOSE_DISPATCHER);
        let closable: Vec<DispatcherId> = self
            .dispatchers
            .values()
            .filter(|d| d.try_removing && !not_ready && self.can_close(d))
            .map(|d| d.id)
            .collect();
        let mut statuses = Vec::new();
        // `getDispatcherStatus`: a dispatcher whose `TryClose` succeeds contributes the
        // watermark it closed with to this heartbeat (the one reporting it Stopped), so
        // the node watermark never skips over it before the maintainer has seen the stop.
        let mut closed_floor = u64::MAX;
        let mut redo_closed_floor = u64::MAX;
        for id in closable {
            let d = self.dispatchers.remove(&id).unwrap();
            hit(P::DmHeartbeatDispatcherStopped);
            if d.is_redo() {
                redo_closed_floor = redo_closed_floor.min(d.checkpoint_ts());
            } else {
                closed_floor = closed_floor.min(d.checkpoint_ts());
            }
            self.current_operator_map.remove(&id);
            if self.trigger_id == Some(id) {
                hit(P::DmHeartbeatTriggerRemoved);
                self.trigger_id = None;
                self.removed_triggers.insert(id);
            }
            // `cleanRedoDispatcher` clears the redo trigger slot.
            if let Some(r) = self.redo.as_mut().filter(|r| r.trigger_id == Some(id)) {
                hit(P::RedoTriggerRemoved);
                r.trigger_id = None;
                // `Remove` cancels the meta's context.
                r.stop_meta();
            }
            ctx.observe(Observation::DispatchersChanged);
            self.trace(
                ctx,
                "dispatcher stopped",
                vec![
                    ("dispatcher", id.to_string()),
                    ("table", d.span.table_id.to_string()),
                    ("checkpoint_ts", d.checkpoint_ts().to_string()),
                ],
            );
            statuses.push(TableSpanStatus {
                mode: d.mode,
                id,
                state: ComponentState::Stopped,
                checkpoint_ts: d.checkpoint_ts(),
                event_size_per_second: 0,
            });
        }
        self.cleanup_finished_merge_operators();
        self.last_heartbeat_ms = ctx.now_ms;
        let complete = ctx.now_ms >= self.last_complete_ms + COMPLETE_STATUS_INTERVAL_MS;
        if complete {
            self.last_complete_ms = ctx.now_ms;
            let now = ctx.now_ms;
            for d in self.dispatchers.values_mut() {
                if d.state != ComponentState::Initializing && !d.try_removing && !statuses.iter().any(|s| s.id == d.id)
                {
                    statuses.push(d.complete_status(now, traffic));
                }
            }
        }
        let err = self.error_to_send(ctx.now_ms);
        let mut wm = self.watermark();
        wm.checkpoint_ts = wm.checkpoint_ts.min(closed_floor);
        wm.resolved_ts = wm.resolved_ts.min(closed_floor);
        self.latest_watermark = wm;
        let redo_watermark = self.aggregate_redo_watermark(redo_closed_floor);
        // `aggregateDispatcherHeartbeats` runs in the heartbeat collector's goroutine,
        // independently of the status and block-status collectors' open batches.
        if !self.status_batch.is_empty() {
            hit(P::DmHeartbeatInsideStatusBatch);
            self.aggregates_in_status_batch += 1;
        }
        ctx.observe(Observation::HeartbeatAggregated {
            cf: self.cf.clone(),
            status_batch: self.status_batch.len(),
            block_status_batch: self.block_status_batch.len(),
        });
        let Some(to) = self.report_target() else { return };
        ctx.send(
            to,
            Message::HeartBeatRequest {
                redo_watermark,
                cf: self.cf.clone(),
                watermark: wm,
                statuses,
                complete_status: complete,
                err,
            },
        );
    }

    /// The first error, due now and every `ERROR_RESEND_MS` after (`collectErrors`).
    fn error_to_send(&mut self, now_ms: u64) -> Option<RunningError> {
        let e = self.errors.first()?;
        if self.last_error_sent_ms.is_some_and(|t| now_ms < t + ERROR_RESEND_MS) {
            return None;
        }
        self.last_error_sent_ms = Some(now_ms);
        hit(P::DmErrorReported);
        Some(e.clone())
    }

    /// Block statuses still waiting for the maintainer's answer are sent again.
    fn resend_block_statuses(&mut self, ctx: &mut Ctx) {
        let mut resend = Vec::new();
        for d in self.dispatchers.values_mut() {
            let mut v = Vec::new();
            d.resend_block_statuses(ctx.now_ms, &mut v);
            for state in v {
                resend.push(TableSpanBlockStatus { mode: d.mode, id: d.id, state });
            }
        }
        if !resend.is_empty() {
            hit(P::DmBlockStatusResent);
            self.send_block_statuses(ctx, resend);
        }
    }

    /// A dispatcher offers block statuses (`sharedInfo.blockStatusesChan`, also the resend
    /// tasks'): they join the block-status collector's batch; the first of a batch opens
    /// its 10 ms window (`collectBlockStatusRequest`, dispatcher_manager.go:734-801).
    /// Simplification: one request per batch (TiCDC splits beyond
    /// `maxBlockStatusesPerRequest`).
    fn send_block_statuses(&mut self, ctx: &mut Ctx, statuses: Vec<TableSpanBlockStatus>) {
        if self.block_status_batch.is_empty() {
            ctx.wake(BLOCK_STATUS_BATCH_WINDOW_MS, Continuation::DmBlockStatusBatch { cf: self.cf.clone() });
        }
        self.block_status_batch.extend(statuses);
    }

    /// The block-status collector's window closed: the batch goes to the maintainer the
    /// manager knows now (`GetMaintainerID()` at enqueue).
    pub fn collect_block_status_batch(&mut self, ctx: &mut Ctx) {
        if self.block_status_batch.is_empty() {
            return;
        }
        let statuses = std::mem::take(&mut self.block_status_batch);
        if self.closed {
            hit(P::DmBlockStatusBatchDropped);
            return;
        }
        // One request per mode, default first (`collectBlockStatusRequest`).
        let to = self.maintainer_id;
        let (statuses, redo): (Vec<_>, Vec<_>) = statuses.into_iter().partition(|s| s.mode == Mode::Default);
        if !statuses.is_empty() {
            ctx.send(to, Message::BlockStatusRequest { mode: Mode::Default, cf: self.cf.clone(), statuses });
        }
        if !redo.is_empty() {
            hit(P::RedoBlockStatusRequest);
            ctx.send(to, Message::BlockStatusRequest { mode: Mode::Redo, cf: self.cf.clone(), statuses: redo });
        }
    }

    /// The status collector's window closed: its batch goes out (see
    /// [`Self::flush_status_batch`]).
    pub fn collect_status_batch(&mut self, ctx: &mut Ctx) {
        if self.closed {
            if !self.status_batch.is_empty() {
                hit(P::DmStatusBatchDropped);
            }
            self.status_batch.clear();
            self.aggregates_in_status_batch = 0;
            return;
        }
        self.flush_status_batch(ctx);
    }

    /// Both collectors' windows closed now (unit tests driving the manager directly).
    pub fn collect_batches_now(&mut self, ctx: &mut Ctx) {
        self.collect_status_batch(ctx);
        self.collect_block_status_batch(ctx);
    }

    /// With [`ContinuationMode::Inline`] the batches go out at the end of the step that
    /// filled them (the step is the batching window).
    fn collect_batches_if_inline(&mut self, ctx: &mut Ctx) {
        if ctx.inline_continuations() {
            self.collect_batches_now(ctx);
        }
    }

    /// `dispatcherMap.Set` + `SetSeq`: the map's sequence number is bumped and given to
    /// the dispatcher; the heartbeat task starts with the first dispatcher added
    /// (`newHeartBeatTask`).
    pub(crate) fn add_dispatcher(&mut self, ctx: &mut Ctx, mut d: Dispatcher) {
        let now_ms = ctx.now_ms;
        ctx.always(crate::assertions::Assertion::DmNoCreateAfterClose, !self.write_path_closed, || {
            format!("changefeed={} dispatcher={} span={:?}", self.cf, d.id, d.span)
        });
        let live = self.dispatchers.get(&d.id).map(|x| (x.span, x.state));
        ctx.always(crate::assertions::Assertion::DmDispatcherIdUnique, live.is_none(), || {
            format!("changefeed={} dispatcher={} live={:?} added={:?}", self.cf, d.id, live, d.span)
        });
        d.seq = self.bump_seq(d.mode);
        self.heartbeat_task_at_ms.get_or_insert(now_ms + HEARTBEAT_INITIAL_DELAY_MS);
        self.dispatchers.insert(d.id, d);
    }

    /// `newEventDispatchers`: a manager whose watermark was never set (zero) takes the
    /// start ts of the dispatchers it creates.
    fn init_watermark(&mut self, start_ts: Ts) {
        if self.latest_watermark.checkpoint_ts == 0 {
            self.latest_watermark =
                Watermark { checkpoint_ts: start_ts, resolved_ts: start_ts, seq: self.latest_watermark.seq };
        }
    }

    /// Where reports go: the owning maintainer, unless the manager has none yet.
    fn report_target(&self) -> Option<NodeId> {
        let to = self.maintainer_id;
        (!(to == NodeId::default() && self.maintainer_epoch == 0)).then_some(to)
    }

    /// `collectComponentStatusWhenChanged`: a status change (a dispatcher turning
    /// Working, the Working answer to an outdated merge request, the Stopped answer to
    /// the removal of an unknown dispatcher) joins the status batch, which goes out in a
    /// HeartBeatRequest of its own, to whoever owns the manager by then. The first status
    /// of a batch opens its window: the batch goes out [`STATUS_BATCH_WINDOW_MS`] later
    /// ([`Self::collect_status_batch`], a step of its own), with every status that
    /// joined meanwhile. The heartbeat collector may aggregate in between.
    fn send_status_change(&mut self, ctx: &mut Ctx, st: TableSpanStatus, seq: u64) {
        if self.status_batch.is_empty() {
            ctx.wake(STATUS_BATCH_WINDOW_MS, Continuation::DmStatusBatch { cf: self.cf.clone() });
        }
        self.status_batch.push((st, seq));
    }

    /// Send the status batch. Its watermark is not computed afresh: it is the
    /// collector's copy of the last aggregate, lowered to each status's checkpoint
    /// (when non-zero), with the largest of the sequence numbers. Then the collector
    /// takes its next copy.
    fn flush_status_batch(&mut self, ctx: &mut Ctx) {
        if self.status_batch.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.status_batch);
        let aggregated_inside = std::mem::take(&mut self.aggregates_in_status_batch);
        ctx.observe(Observation::StatusBatchSent { cf: self.cf.clone(), statuses: batch.len(), aggregated_inside });
        let fresh = self.watermark();
        // Candidate fix: the status path computes the watermark afresh, as the periodic
        // aggregate does, so it never claims a sequence number whose dispatchers it did
        // not include.
        // Not over a closed write path: TiCDC keeps the fenced dispatchers in its map
        // (`closeAllDispatchers` does not delete them), where the model has dropped them,
        // so a fresh minimum here would skip them; the snapshot is what TiCDC sends.
        let fresh_fix = ctx.fix(crate::bugs::Fix::FreshStatusWatermark) && !self.write_path_closed;
        let mut wm = if fresh_fix { fresh } else { self.status_snapshot };
        let redo_watermark = self.status_batch_redo_watermark(&batch, fresh_fix);
        for (st, seq) in batch.iter().filter(|(st, _)| st.mode == Mode::Default) {
            wm.seq = wm.seq.max(*seq);
            if st.checkpoint_ts != 0 && st.checkpoint_ts < wm.checkpoint_ts {
                wm.checkpoint_ts = st.checkpoint_ts;
            }
        }
        // The report claims more than the node has when a dispatcher added under its seq
        // or before is behind it (the finding's first step, shown in timelines).
        let behind: Vec<String> = self
            .dispatchers
            .values()
            .filter(|d| {
                !d.is_redo()
                    && d.seq <= wm.seq
                    && !matches!(d.state, ComponentState::Preparing | ComponentState::MergeReady)
                    && d.checkpoint_ts() < wm.checkpoint_ts
            })
            .map(|d| d.id.to_string())
            .collect();
        if !behind.is_empty() {
            hit(P::DmStatusClaimsMore);
            let node_cp = fresh.checkpoint_ts;
            let ids: Vec<String> = batch.iter().map(|(st, _)| st.id.to_string()).collect();
            self.trace(
                ctx,
                "status heartbeat claims more than the node has",
                vec![
                    ("dispatcher", ids.join(",")),
                    ("seq", wm.seq.to_string()),
                    ("checkpoint_ts", wm.checkpoint_ts.to_string()),
                    ("node_checkpoint_ts", node_cp.to_string()),
                    ("behind_dispatchers", behind.join(",")),
                ],
            );
        }
        if let Some(to) = self.report_target() {
            let statuses = batch.into_iter().map(|(st, _)| st).collect();
            ctx.send(
                to,
                Message::HeartBeatRequest {
                    redo_watermark,
                    cf: self.cf.clone(),
                    watermark: wm,
                    statuses,
                    complete_status: false,
                    err: None,
                },
            );
        }
        self.status_snapshot = self.latest_watermark;
        if let Some(r) = self.redo.as_mut() {
            r.status_snapshot = r.latest_watermark;
        }
    }

    /// Min over the event dispatchers (except merge targets not yet Initializing).
    pub fn watermark(&self) -> Watermark {
        self.watermark_of(Mode::Default)
    }

    /// [`Self::watermark`] over one mode's dispatchers, with that map's sequence.
    pub fn watermark_of(&self, mode: Mode) -> Watermark {
        let mut cp = u64::MAX;
        for d in self.dispatchers.values().filter(|d| d.mode == mode) {
            if matches!(d.state, ComponentState::Preparing | ComponentState::MergeReady) {
                continue;
            }
            cp = cp.min(d.checkpoint_ts());
        }
        Watermark { checkpoint_ts: cp, resolved_ts: cp, seq: self.seq_of(mode) }
    }
}

/// `buildMergedStartTsCandidate` (`dispatchermanager/task.go`): the merged dispatcher's
/// start ts. From the sources' minimum checkpoint, unless every source waits on the same
/// block event `(commitTs, isSyncPoint)`: then a syncpoint restarts at its commit ts
/// (so the merged dispatcher receives that syncpoint again and re-joins its barrier, and
/// does not replay rows at or below it), a DDL at `commitTs-1` with `skipDMLAsStartTs`
/// (replay the DDL, not the DMLs at its ts). MySQL's `ddl_ts` recovery does not apply
/// to the storage sink.
pub fn merged_start_ts_candidate(min_checkpoint: Ts, pending: &[Option<BlockState>]) -> MergedStartTs {
    let mut c = MergedStartTs { start_ts: min_checkpoint, skip_dml_as_start_ts: false, pending: None };
    let Some(Some(first)) = pending.first() else { return c };
    let key = (first.block_ts, first.is_sync_point);
    if !pending.iter().all(|p| p.as_ref().map(|b| (b.block_ts, b.is_sync_point)) == Some(key)) {
        return c;
    }
    c.pending = Some(key);
    if key.1 {
        hit(P::SyncPointMergeRestart);
        c.start_ts = key.0;
    } else if key.0 > 0 {
        hit(P::DmMergePendingDdlRestart);
        c.start_ts = key.0 - 1;
        c.skip_dml_as_start_ts = true;
    }
    c
}

/// Result of [`merged_start_ts_candidate`]; `pending` is the shared pending event, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergedStartTs {
    pub start_ts: Ts,
    pub skip_dml_as_start_ts: bool,
    pub pending: Option<(Ts, bool)>,
}
