//! The redo half of a dispatcher manager (`dispatcher_manager_redo.go`): the redo state,
//! the redo table trigger, and the per-mode helpers the rest of the manager calls.
//!
//! Both modes share one dispatcher map (dispatcher IDs are unique across modes); every
//! place where TiCDC has two maps filters by [`Dispatcher::mode`]. The redo map keeps
//! its own sequence number (`redoDispatcherMap.seq`).

use super::*;
use crate::sink::redo_meta::{LogMeta, MetaOutcome, RedoMeta};

/// The manager's redo components (`initRedoComponet`), present only when the
/// changefeed's `consistent.level` is `eventual`.
#[derive(Debug)]
pub struct RedoState {
    /// `redoReady`: published once the first bootstrap has built every redo component;
    /// redo schedule requests are dropped until then, and the bootstrap response reports
    /// no redo span.
    pub ready: bool,
    /// The redo log writer (`redo.Sink`).
    pub sink: RedoSink,
    /// `tableTriggerRedoDispatcher`.
    pub trigger_id: Option<DispatcherId>,
    /// The redo trigger the write path's close dropped (see `fenced_trigger`).
    pub fenced_trigger: Option<DispatcherId>,
    /// `redoDispatcherMap.seq`.
    pub seq: u64,
    /// `latestRedoWatermark`: the last periodic redo aggregate; the bootstrap's start ts
    /// until the first one.
    pub latest_watermark: Watermark,
    /// The status collector's copy of `latest_watermark`.
    pub status_snapshot: Watermark,
    /// `redoGlobalTs`: the redo resolved ts the maintainer forwarded; no event dispatcher
    /// handles an event above it. A fresh manager starts at 0.
    pub global_ts: Ts,
    /// The redo trigger's redo meta (`SetRedoMeta`), while the trigger is in its slot.
    pub meta: Option<RedoMeta>,
    /// `collectRedoMeta`'s `preResolvedTs`, once the goroutine runs (started with the
    /// redo trigger, for the manager's life).
    pub collect_pre_resolved_ts: Option<Ts>,
    /// The storage instance of this manager's writers (op ids carry it).
    pub instance: u64,
}

impl RedoState {
    pub fn new(sink: RedoSink, instance: u64) -> Self {
        RedoState {
            meta: None,
            collect_pre_resolved_ts: None,
            instance,
            ready: false,
            sink,
            trigger_id: None,
            fenced_trigger: None,
            seq: 0,
            latest_watermark: Watermark::default(),
            status_snapshot: Watermark::default(),
            global_ts: 0,
        }
    }
}

/// The redo trigger's name in errors and traces (`bootstrapRedoTableTrigger`).
const REDO_TRIGGER: &str = "table trigger redo dispatcher";

/// Why the redo trigger could not be created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedoTriggerError {
    /// `ErrDispatcherManagerWritePathClosed`: an expected stop.
    WritePathClosed,
    /// `ErrChangefeedInitTableTriggerDispatcherFailed("table trigger redo dispatcher existed")`.
    Exists,
}

impl RedoState {
    /// The trigger left its slot: its meta's context is cancelled.
    pub fn stop_meta(&mut self) {
        if let Some(mut m) = self.meta.take() {
            m.stop();
        }
    }
}

impl DispatcherManager {
    pub fn redo_ready(&self) -> bool {
        self.redo.as_ref().is_some_and(|r| r.ready)
    }

    pub fn redo_trigger_id(&self) -> Option<DispatcherId> {
        self.redo.as_ref().and_then(|r| r.trigger_id)
    }

    /// `dispatcherMap.Set` of the dispatcher's mode: bump that map's sequence.
    pub(super) fn bump_seq(&mut self, mode: Mode) -> u64 {
        match (mode, self.redo.as_mut()) {
            (Mode::Redo, Some(r)) => {
                r.seq += 1;
                r.seq
            }
            _ => {
                self.seq += 1;
                self.seq
            }
        }
    }

    /// `NewTableTriggerRedoDispatcher`: the redo trigger, Working on this node, with no
    /// recovery info and never registered with the event collector before the
    /// post-bootstrap request initialises it.
    pub(super) fn create_redo_trigger(
        &mut self,
        ctx: &mut Ctx,
        t: DispatcherId,
        start_ts: Ts,
    ) -> Result<(), RedoTriggerError> {
        if self.write_path_closed {
            hit(P::RedoTriggerWritePathClosed);
            return Err(RedoTriggerError::WritePathClosed);
        }
        let Some(r) = self.redo.as_mut() else { return Ok(()) };
        if r.trigger_id.is_some() {
            hit(P::RedoTriggerExists);
            return Err(RedoTriggerError::Exists);
        }
        r.trigger_id = Some(t);
        // `SetRedoMeta`: the trigger's meta starts its `PreStart`; `collectRedoMeta` runs.
        let mut meta = RedoMeta::new(&self.cf, self.node, start_ts, r.instance);
        meta.pre_start(&mut ctx.out.storage);
        r.meta = Some(meta);
        // Each creation starts another `collectRedoMeta` with its own `preResolvedTs`;
        // the one modelled restarts from 0 (an older one's sends would be duplicates).
        r.collect_pre_resolved_ts = Some(0);
        self.init_redo_watermark(start_ts);
        let mut d = Dispatcher::new(t, TableSpan::ddl_span(), 0, start_ts, true, false);
        d.mode = Mode::Redo;
        d.traffic_since_ms = ctx.now_ms;
        self.add_dispatcher(ctx, d);
        hit(P::RedoTriggerCreated);
        ctx.observe(Observation::DispatchersChanged);
        self.trace(
            ctx,
            "table trigger redo dispatcher created",
            vec![("dispatcher", t.to_string()), ("start_ts", start_ts.to_string())],
        );
        Ok(())
    }

    /// `newRedoDispatchers`: a redo watermark never set takes the start ts.
    pub(super) fn init_redo_watermark(&mut self, start_ts: Ts) {
        if let Some(r) = self.redo.as_mut() {
            if r.latest_watermark.checkpoint_ts == 0 {
                r.latest_watermark = Watermark { checkpoint_ts: start_ts, resolved_ts: start_ts, seq: 0 };
            }
        }
    }

    /// `NewDispatcherManager`'s redo part for a fresh manager: the redo watermark starts
    /// at the bootstrap's start ts, as the default one does.
    pub(super) fn start_redo_watermark(&mut self, start_ts: Ts) {
        if let Some(r) = self.redo.as_mut() {
            r.latest_watermark = Watermark { checkpoint_ts: start_ts, resolved_ts: start_ts, seq: 0 };
            r.status_snapshot = r.latest_watermark;
        }
    }

    /// End of `initRedoComponet`: redo is ready (unless the write path closed meanwhile).
    pub(super) fn publish_redo_ready(&mut self, ctx: &mut Ctx) {
        let closed = self.write_path_closed;
        let Some(r) = self.redo.as_mut() else { return };
        if r.ready || closed {
            return;
        }
        r.ready = true;
        hit(P::RedoReady);
        self.trace(ctx, "redo components ready", vec![]);
    }

    /// `redoTrigger.validate` (dispatcher_orchestrator.go:402-414), before the owner
    /// changes: a bootstrap naming no redo trigger while this manager holds one, or
    /// naming another one, is refused.
    pub(super) fn validate_redo_trigger(&self, requested: Option<DispatcherId>) -> Option<String> {
        let cur = self.redo_trigger_id()?;
        match requested {
            None => {
                hit(P::RedoBootstrapRejectNoTrigger);
                Some(format!("{} present during nil trigger bootstrap", REDO_TRIGGER))
            }
            Some(t) if t != cur => {
                hit(P::RedoBootstrapRejectTriggerMismatch);
                Some(format!("{} id mismatch during bootstrap", REDO_TRIGGER))
            }
            Some(_) => None,
        }
    }

    /// [`Self::validate_redo_trigger`] as a bootstrap applies it. With
    /// `replace-mismatched-redo-trigger` a mismatched redo trigger is not refused: the
    /// bootstrap's trigger takes the slot (`SetTableTriggerRedoDispatcher` with its own
    /// redo meta) and the old one stays in the map, registered and handling the redo DDL
    /// span, so the changefeed has two redo DDL writers: the duplicated ownership PR
    /// #5436's check prevents, for both triggers.
    pub(super) fn admit_redo_trigger(&mut self, ctx: &mut Ctx, requested: Option<DispatcherId>) -> Option<String> {
        if let (Some(t), Some(cur)) = (requested, self.redo_trigger_id()) {
            if t != cur && ctx.bug(Bug::ReplaceMismatchedRedoTrigger) {
                hit(P::RedoBootstrapReplaceTrigger);
                ctx.observe(Observation::DispatchersChanged);
                self.trace(
                    ctx,
                    "replace mismatched table trigger redo dispatcher",
                    vec![("old", cur.to_string()), ("new", t.to_string())],
                );
                if let Some(r) = self.redo.as_mut() {
                    r.trigger_id = None;
                    // The meta belongs to the slot: the new trigger brings its own.
                    r.stop_meta();
                }
                return None;
            }
        }
        self.validate_redo_trigger(requested)
    }

    /// `redoTrigger.ensure` of a bootstrap (and the redo part of `NewDispatcherManager`):
    /// create the requested redo trigger if there is none. `Err(reply)` ends the
    /// bootstrap with that reply (none for a write-path-closed stop).
    pub(super) fn ensure_redo_trigger(
        &mut self,
        ctx: &mut Ctx,
        requested: Option<DispatcherId>,
        start_ts: Ts,
        epoch: Epoch,
    ) -> Result<(), Box<Option<Message>>> {
        let Some(t) = requested else { return Ok(()) };
        if self.redo.is_none() {
            // Only a redo changefeed's maintainer names a redo trigger.
            hit(P::RedoTriggerWithoutRedo);
            return Ok(());
        }
        match self.redo_trigger_id() {
            Some(cur) if cur == t => Ok(()),
            Some(_) => {
                let e = self.validate_redo_trigger(requested).unwrap_or_default();
                self.trace(ctx, "bootstrap rejected", vec![("reason", e.clone())]);
                Err(Box::new(Some(self.bootstrap_error(epoch, ErrorCode::InitTableTriggerDispatcherFailed, e))))
            }
            None => match self.create_redo_trigger(ctx, t, start_ts) {
                Ok(()) => Ok(()),
                Err(RedoTriggerError::WritePathClosed) => Err(Box::new(self.write_path_closed_response(ctx, t, epoch))),
                Err(RedoTriggerError::Exists) => Err(Box::new(Some(self.bootstrap_error(
                    epoch,
                    ErrorCode::InitTableTriggerDispatcherFailed,
                    format!("{} existed", REDO_TRIGGER),
                )))),
            },
        }
    }

    /// `InitalizeTableTriggerRedoDispatcher` when redo is ready: the redo trigger
    /// registers with the event collector.
    pub(super) fn register_redo_trigger(&mut self, ctx: &mut Ctx) {
        if !self.redo_ready() || self.write_path_closed {
            return;
        }
        let Some(t) = self.redo_trigger_id() else { return };
        if let Some(d) = self.dispatchers.get_mut(&t).filter(|d| !d.registered) {
            d.registered = true;
            hit(P::RedoTriggerRegistered);
            self.trace(ctx, "table trigger redo dispatcher registered", vec![("dispatcher", t.to_string())]);
        }
    }

    /// The sequence number of a mode's dispatcher map.
    pub(super) fn seq_of(&self, mode: Mode) -> u64 {
        match mode {
            Mode::Default => self.seq,
            Mode::Redo => self.redo.as_ref().map_or(0, |r| r.seq),
        }
    }

    /// `newRedoDispatchers` for one Create: no MySQL recovery info, the request's
    /// skip-DML flag, no syncpoint skip, and the redo watermark initialised.
    pub(super) fn create_redo_dispatcher(&mut self, ctx: &mut Ctx, req: &ScheduleDispatcherRequest) {
        let c = &req.config;
        self.init_redo_watermark(c.start_ts);
        let mut d = Dispatcher::new(c.dispatcher_id, c.span, c.schema_id, c.start_ts, false, c.skip_dml_as_start_ts);
        d.mode = Mode::Redo;
        d.traffic_since_ms = ctx.now_ms;
        d.events_from_ms = self.first_events_at(ctx);
        self.add_dispatcher(ctx, d);
        hit(P::RedoCreateDispatcher);
        ctx.observe(Observation::DispatchersChanged);
        self.trace(
            ctx,
            "create redo dispatcher",
            vec![
                ("dispatcher", c.dispatcher_id.to_string()),
                ("table", c.span.table_id.to_string()),
                ("span", c.span.to_string()),
                ("start_ts", c.start_ts.to_string()),
                ("op", format!("{:?}", req.operator_type)),
            ],
        );
    }

    /// The heartbeat's redo watermark (`aggregateDispatcherHeartbeats`): `None` without
    /// redo; before redo is ready, the max watermark (it bounds nothing); once ready, the
    /// minimum over the redo dispatchers and those that stopped in this heartbeat,
    /// stored as `latestRedoWatermark`.
    pub(super) fn aggregate_redo_watermark(&mut self, closed_floor: Ts) -> Option<Watermark> {
        let ready = self.redo.as_ref()?.ready;
        if !ready {
            hit(P::RedoWatermarkNotReady);
            return Some(Watermark { checkpoint_ts: u64::MAX, resolved_ts: u64::MAX, seq: 0 });
        }
        let mut wm = self.watermark_of(Mode::Redo);
        wm.checkpoint_ts = wm.checkpoint_ts.min(closed_floor);
        wm.resolved_ts = wm.resolved_ts.min(closed_floor);
        if let Some(r) = self.redo.as_mut() {
            r.latest_watermark = wm;
        }
        hit(P::RedoWatermarkAggregated);
        Some(wm)
    }

    /// The status collector's redo watermark: its copy of the last redo aggregate,
    /// lowered by the batch's redo statuses (when non-zero), with their largest sequence
    /// (dispatcher_manager.go:817-881, the same rule as the event watermark). With the
    /// candidate fix `fresh-status-watermark` (`fresh`), computed afresh over the redo
    /// dispatchers instead, as for the event watermark.
    pub(super) fn status_batch_redo_watermark(
        &self,
        batch: &[(TableSpanStatus, u64)],
        fresh: bool,
    ) -> Option<Watermark> {
        let snapshot = self.redo.as_ref()?.status_snapshot;
        let mut wm = if fresh && self.redo_ready() {
            hit(P::RedoStatusWatermarkFresh);
            self.watermark_of(Mode::Redo)
        } else {
            snapshot
        };
        for (st, seq) in batch.iter().filter(|(st, _)| st.mode == Mode::Redo) {
            hit(P::RedoStatusInBatch);
            wm.seq = wm.seq.max(*seq);
            if st.checkpoint_ts != 0 && st.checkpoint_ts < wm.checkpoint_ts {
                wm.checkpoint_ts = st.checkpoint_ts;
            }
        }
        Some(wm)
    }

    /// `TryClose` of a dispatcher being removed: its table progress has drained, or it
    /// is a redo dispatcher whose redo sink is no longer normal (its rows are lost anyway).
    pub(super) fn can_close(&self, d: &Dispatcher) -> bool {
        if d.is_redo() && self.redo.as_ref().is_some_and(|r| !r.sink.is_normal()) {
            hit(P::RedoCloseSinkNotNormal);
            return true;
        }
        d.can_close()
    }

    /// The redo flush tick (`FlushIntervalInMs`): buffered redo rows are written.
    pub fn flush_redo_sink(&mut self, ctx: &mut Ctx) {
        if let Some(r) = self.redo.as_mut() {
            r.sink.flush(&mut ctx.out.storage);
        }
    }

    /// `SetRedoResolvedTs` (a monotonic raise) and the wake-up of the held event
    /// dispatchers (`HandleCacheEvents`), in one step. Returns whether it rose.
    pub fn set_redo_global_ts(&mut self, ctx: &mut Ctx, ts: Ts) -> bool {
        let Some(r) = self.redo.as_mut() else { return false };
        if ts <= r.global_ts {
            hit(P::RedoGlobalTsStale);
            return false;
        }
        r.global_ts = ts;
        hit(P::RedoGlobalTsRaised);
        if self.dispatchers.values().any(|d| d.held_by_redo) {
            self.process(ctx);
        }
        true
    }

    /// A redo dispatcher's block event: a DDL goes to the redo log as one object; the
    /// redo sink ignores anything else.
    pub(super) fn write_redo_block(&mut self, ctx: &mut Ctx, id: DispatcherId, schema: &str, ev: BlockEvent) {
        let BlockEvent::Ddl(ev) = ev else { return };
        let Some(r) = self.redo.as_mut() else { return };
        let mut rec = ev.record();
        if rec.schema_name.is_empty() {
            rec.schema_name = schema.to_string();
        }
        r.sink.write_ddl(id, rec, &mut ctx.out.storage);
        self.trace(
            ctx,
            "write redo ddl",
            vec![
                ("dispatcher", id.to_string()),
                ("table", ev.table_id.to_string()),
                ("commit_ts", ev.commit_ts.to_string()),
                ("query", ev.query.clone()),
            ],
        );
    }

    /// A redo write failed: the redo sink's `Run` returns and the manager reports the
    /// error (`handleError`), a retryable changefeed error.
    pub(super) fn on_redo_write_failed(&mut self, ctx: &mut Ctx, dispatcher: DispatcherId, error: StorageError) {
        self.trace(
            ctx,
            "redo log write failed",
            vec![("dispatcher", dispatcher.to_string()), ("error", error.to_string())],
        );
        self.errors.push(RunningError {
            node: self.node,
            code: ErrorCode::ChangefeedRetryable,
            message: format!("redo: {}", error),
        });
    }

    /// Whether the heartbeat collector routes the redo meta and forward messages to this
    /// manager: `RegisterRedoMessageDs` at the end of `initRedoComponet` (just before
    /// `redoReady`), `RemoveRedoMessage` when the write path stops.
    fn redo_messages_registered(&self) -> bool {
        self.redo_ready() && !self.write_path_closed
    }

    /// The owner/epoch admission of the two redo messages (`isRedoMetaMessageAllowed`,
    /// `isRedoResolvedTsForwardMessageAllowed`: `maintainerRequestAdmission`, helper.go:826-852).
    fn redo_message_allowed(&self, ctx: &mut Ctx, what: &'static str, from: NodeId, epoch: Epoch) -> bool {
        if !self.redo_messages_registered() {
            hit(P::RedoMessageUnregistered);
            return false;
        }
        if ctx.bug(Bug::RedoMessagesNotFenced) || self.request_allowed(ctx, from, epoch) {
            self.note_if_stale(ctx, what, from, epoch);
            return true;
        }
        hit(P::RedoMessageStale);
        let kind = match what {
            "RedoMetaMessage" => "drop stale redo meta message",
            _ => "drop stale redo resolved ts forward message",
        };
        self.trace(
            ctx,
            kind,
            vec![
                ("from", from.to_string()),
                ("requestMaintainerEpoch", epoch.to_string()),
                ("currentMaintainerEpoch", self.maintainer_epoch.to_string()),
            ],
        );
        false
    }

    /// `RedoMetaMessageHandler.Handle` (helper.go:807-822): under the fence lock, an
    /// admitted message updates the redo trigger's meta (`UpdateRedoMeta`: not once the
    /// write path closed; only a running meta takes it, redo_dispatcher.go:118-123).
    pub(super) fn handle_redo_meta(&mut self, ctx: &mut Ctx, from: NodeId, epoch: Epoch, cp: Ts, rs: Ts) {
        if !self.redo_message_allowed(ctx, "RedoMetaMessage", from, epoch) {
            return;
        }
        let Some(r) = self.redo.as_mut() else { return };
        let Some(m) = r.meta.as_mut().filter(|_| r.trigger_id.is_some()) else {
            hit(P::RedoMetaNoTrigger);
            return;
        };
        if !m.running() {
            hit(P::RedoMetaNotRunning);
            return;
        }
        hit(P::RedoMetaUpdated);
        m.update(cp, rs);
    }

    /// `RedoResolvedTsForwardMessageHandler.Handle` (helper.go:714-735): an admitted
    /// message raises the redo global ts and wakes the held event dispatchers.
    pub(super) fn handle_redo_forward(&mut self, ctx: &mut Ctx, from: NodeId, epoch: Epoch, ts: Ts) {
        if !self.redo_message_allowed(ctx, "RedoResolvedTsForwardMessage", from, epoch) {
            return;
        }
        self.set_redo_global_ts(ctx, ts);
    }

    /// One tick of `collectRedoMeta` (every `consistent.flush-interval`,
    /// dispatcher_manager_redo.go:378-411), running since the redo trigger's creation: a
    /// flushed redo resolved ts above the last one sent goes to the maintainer.
    pub fn collect_redo_meta(&mut self, ctx: &mut Ctx) {
        if self.closed || self.write_path_closed {
            return;
        }
        let to = self.maintainer_id;
        let Some(r) = self.redo.as_mut() else { return };
        let Some(pre) = r.collect_pre_resolved_ts else { return };
        let Some(flushed) = r.meta.as_ref().filter(|_| r.trigger_id.is_some()).map(|m| m.flushed()) else {
            hit(P::RedoCollectNoTrigger);
            return;
        };
        if pre >= flushed.resolved_ts {
            hit(P::RedoCollectUnchanged);
            return;
        }
        hit(P::RedoCollectSent);
        r.collect_pre_resolved_ts = Some(flushed.resolved_ts);
        ctx.send(to, Message::RedoResolvedTsProgressMessage { cf: self.cf.clone(), resolved_ts: flushed.resolved_ts });
    }

    /// A `bgFlushMeta` tick of the redo trigger's meta (every `consistent.meta-flush-interval`).
    pub fn flush_redo_meta(&mut self, ctx: &mut Ctx) {
        if let Some(m) = self.redo.as_mut().and_then(|r| r.meta.as_mut()) {
            m.tick_flush(&mut ctx.out.storage);
        }
    }

    /// The flushed redo meta of this manager's redo trigger, if it has one.
    pub fn redo_flushed_meta(&self) -> Option<LogMeta> {
        self.redo.as_ref().and_then(|r| r.meta.as_ref()).map(|m| m.flushed())
    }

    /// The `initMeta` walk is back.
    pub fn on_redo_meta_listed(
        &mut self,
        ctx: &mut Ctx,
        op_id: u64,
        res: Result<Vec<(String, LogMeta)>, StorageError>,
    ) {
        let Some(m) = self.redo.as_mut().and_then(|r| r.meta.as_mut()) else { return };
        let o = m.on_listed(op_id, res, &mut ctx.out.storage);
        self.on_redo_meta_outcome(ctx, o);
        self.collect_batches_if_inline(ctx);
    }

    /// A meta file write completed (`None`: not a redo meta op).
    pub(super) fn on_redo_meta_put(&mut self, ctx: &mut Ctx, op_id: u64, res: &Result<(), StorageError>) -> bool {
        if !RedoMeta::is_meta_op(op_id) {
            return false;
        }
        let o = match self.redo.as_mut().and_then(|r| r.meta.as_mut()) {
            Some(m) => m.on_put_result(op_id, res, &mut ctx.out.storage),
            None => MetaOutcome::Ignored,
        };
        self.on_redo_meta_outcome(ctx, o);
        true
    }

    fn on_redo_meta_outcome(&mut self, ctx: &mut Ctx, o: MetaOutcome) {
        match o {
            MetaOutcome::Ignored => {}
            MetaOutcome::Started(m) | MetaOutcome::Flushed(m) => {
                ctx.observe(Observation::RedoMetaFlushed {
                    cf: self.cf.clone(),
                    checkpoint_ts: m.checkpoint_ts,
                    resolved_ts: m.resolved_ts,
                });
                self.trace(
                    ctx,
                    "redo meta flushed",
                    vec![("checkpoint_ts", m.checkpoint_ts.to_string()), ("resolved_ts", m.resolved_ts.to_string())],
                );
            }
            MetaOutcome::Failed(e) => {
                // `rd.HandleError`: the trigger reports the error to the maintainer.
                self.trace(ctx, "redo meta failed", vec![("error", e.to_string())]);
                self.errors.push(RunningError {
                    node: self.node,
                    code: ErrorCode::ChangefeedRetryable,
                    message: format!("redo meta: {}", e),
                });
            }
        }
    }
}
