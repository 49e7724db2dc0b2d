//! One event dispatcher: replicates one span of one table (or, as the table trigger
//! event dispatcher, the DDL span) from its start ts into the sink.
//!
//! States as reported: Initializing -> Working -> (removing) -> Stopped. Block events
//! (DDLs, syncpoints) follow `BasicDispatcher.DealWithBlockEvent`: flush prior rows,
//! report WAITING (resent every 5 s until ACK), then Write or Pass on the maintainer's
//! action, report DONE. The trigger writes non-blocking table-creating DDLs first, then
//! reports them (stage NONE) and caps its checkpoint at commitTs-1 until the ACK.
//!
//! Syncpoints always block (`shouldBlock`); the table trigger holds one (like every
//! DB/All event) while non-blocking reports are unacknowledged. While a dispatcher waits
//! on a syncpoint at `s` its checkpoint may be `s` itself (TiCDC: the resolved ts,
//! which can equal `s` because the syncpoint at `s` goes out only after a resolved ts
//! above it); while it writes one, `s-1` (the event is in its table progress).

use crate::coverage::{hit, Point as P};
use crate::messages::*;
use crate::types::*;
use crate::upstream::{BlockEvent, DdlEvent, DdlKind, UpstreamEvent};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Minimum gap between two fast resends of one WAITING status after ignores.
pub const IGNORED_RESEND_MIN_MS: u64 = 50;
/// Block status resend period (`resendTimeInterval`).
pub const BLOCK_STATUS_RESEND_MS: u64 = 5_000;

#[derive(Clone, Debug)]
pub struct PendingBlock {
    pub event: BlockEvent,
    pub stage: BlockStage,
    pub last_report_ms: u64,
    pub acked: bool,
    pub last_ignored_resend_ms: u64,
    /// An `IgnoredBlockStatus` came within `IGNORED_RESEND_MIN_MS` of the last fast
    /// resend: the resend is due at the next heartbeat tick past that window.
    pub ignored_resend_deferred: bool,
    /// `(commitTs, isSyncPoint)` of the action being executed: TiCDC reports DONE with
    /// the action's key (`reportBlockedEventDone(actionCommitTs, actionIsSyncPoint)`).
    pub action_key: Option<(Ts, bool)>,
}

/// One dispatcher status held while the dispatcher writes a block event.
#[derive(Clone, Debug)]
pub struct QueuedStatus {
    pub ack: Option<AckEvent>,
    pub action: Option<DispatcherAction>,
    pub ignored: Option<AckEvent>,
    pub match_sync_point: bool,
}

#[derive(Clone, Debug)]
pub struct PendingNonBlocking {
    pub state: BlockState,
    pub last_report_ms: u64,
}

/// What the dispatcher asks its manager to do after handling events.
#[derive(Debug, Default)]
pub struct DispatcherEffects {
    pub rows: Vec<crate::upstream::RowChange>,
    /// A block event to write downstream (a DDL's schema file or a syncpoint record).
    pub write_block: Option<BlockEvent>,
    pub flush_rows: bool,
    pub block_statuses: Vec<BlockState>,
    pub became_working: bool,
    /// Trace lines the manager records (with the dispatcher and its table added).
    pub notes: Vec<(&'static str, Vec<(&'static str, String)>)>,
    /// Failed assertions, moved into the context by the manager ([`crate::assertions`]).
    pub failed: crate::assertions::Failures,
}

impl DispatcherEffects {
    /// Nothing to apply: most dispatchers on most event polls. Every field is named, so a
    /// new one cannot be left out of the test.
    pub fn is_empty(&self) -> bool {
        let DispatcherEffects { rows, write_block, flush_rows, block_statuses, became_working, notes, failed } = self;
        rows.is_empty()
            && write_block.is_none()
            && !flush_rows
            && block_statuses.is_empty()
            && !became_working
            && notes.is_empty()
            && failed.is_empty()
    }
}

#[derive(Clone, Debug)]
pub struct Dispatcher {
    pub id: DispatcherId,
    pub span: TableSpan,
    pub schema_id: SchemaId,
    pub start_ts: Ts,
    pub is_trigger: bool,
    pub state: ComponentState,
    pub skip_dml_as_start_ts: bool,
    /// `skipSyncpointAtStartTs`: the syncpoint at the start ts is not delivered (set only
    /// by the MySQL sink's recovery info, see [`crate::sink::ddl_ts`]).
    pub skip_sync_point_at_start_ts: bool,
    /// Registered with the event collector (the trigger only after post-bootstrap).
    pub registered: bool,
    /// Events with commit ts <= fed_ts were queued by the event service.
    pub fed_ts: Ts,
    pub queue: VecDeque<UpstreamEvent>,
    pub resolved_ts: Ts,
    /// Table progress: commit ts of rows handed to the sink and not yet durable.
    pub progress: BTreeMap<Ts, u32>,
    /// `TableProgress.maxCommitTs`: the commit ts of the last row handed to the sink.
    pub max_commit_ts: Ts,
    /// A block event write in flight (a DDL, or a syncpoint if `writing_sync_point`);
    /// this dispatcher waits for it.
    pub ddl_writing: Option<Ts>,
    pub writing_sync_point: bool,
    /// The last syncpoint this dispatcher logged as received.
    pub received_sync_point: Option<Ts>,
    /// Rows abandoned by a write failure while closing: the checkpoint stays below them.
    pub lost_floor: Option<Ts>,
    pub block: Option<PendingBlock>,
    /// Commit ts of the last block event this dispatcher passed (for idempotent DONE).
    pub try_removing: bool,
    /// A merge source detached from the event collector while its merge closes it.
    pub merging: bool,
    // --- table trigger event dispatcher only ---
    pub pending_acks: BTreeMap<Ts, PendingNonBlocking>,
    pub add_table_blockers: BTreeSet<Ts>,
    /// The stage-NONE report of a non-blocking DDL whose write is in flight.
    pub nonblocking_written: Option<BlockState>,
    /// `TableProgress.lastQueryTime`: when the traffic was last queried (the creation,
    /// then every complete-status heartbeat that lists the dispatcher).
    pub traffic_since_ms: u64,
    /// Dispatcher statuses (ack, action, ignored, with the `match_sync_point` switch) that
    /// arrived while this dispatcher executes a barrier Write: TiCDC's status path awaits
    /// the write (`HandleDispatcherStatus` returns `await = true`, basic_dispatcher.go:846-849)
    /// and handles the next statuses only after DONE is reported.
    pub awaiting_statuses: VecDeque<QueuedStatus>,
    /// The DONE of a barrier write held by failpoint `BlockOrWaitReportAfterWrite`: the
    /// write is durable and the event path goes on (TiCDC's post-flush callbacks clear the
    /// block status and wake the event stream before `reportBlockedEventDone`,
    /// basic_dispatcher.go:835-842, 894-903), while the DONE and the status path wait.
    pub held_done: Option<BlockState>,
    /// `SetSeq`: the manager's dispatcher-map sequence right after this dispatcher was
    /// added. Its Working status carries it (`TableSpanStatusWithSeq`).
    pub seq: u64,
    /// The event service feeds it from this instant on (see
    /// `DispatcherManager::first_event_ms`; 0: at once).
    pub events_from_ms: u64,
    /// `Default` for an event dispatcher, `Redo` for a redo dispatcher (TiCDC's
    /// `RedoDispatcher`: the same basic dispatcher over the redo sink).
    pub mode: Mode,
    /// An event dispatcher of a redo changefeed stopped at a queued event above the redo
    /// global resolved ts (see [`Self::handle_events_held`]).
    pub held_by_redo: bool,
}

impl Dispatcher {
    pub fn new(
        id: DispatcherId,
        span: TableSpan,
        schema_id: SchemaId,
        start_ts: Ts,
        is_trigger: bool,
        skip_dml: bool,
    ) -> Self {
        Dispatcher {
            id,
            span,
            schema_id,
            start_ts,
            is_trigger,
            state: ComponentState::Initializing,
            skip_dml_as_start_ts: skip_dml,
            skip_sync_point_at_start_ts: false,
            registered: !is_trigger,
            fed_ts: start_ts,
            queue: VecDeque::new(),
            resolved_ts: start_ts,
            progress: BTreeMap::new(),
            max_commit_ts: 0,
            ddl_writing: None,
            writing_sync_point: false,
            received_sync_point: None,
            lost_floor: None,
            block: None,
            try_removing: false,
            merging: false,
            pending_acks: BTreeMap::new(),
            add_table_blockers: BTreeSet::new(),
            nonblocking_written: None,
            traffic_since_ms: 0,
            awaiting_statuses: VecDeque::new(),
            held_done: None,
            seq: 0,
            events_from_ms: 0,
            mode: Mode::Default,
            held_by_redo: false,
        }
    }

    pub fn is_redo(&self) -> bool {
        self.mode == Mode::Redo
    }

    /// The dispatcher's checkpoint: everything at or below it is durable downstream.
    pub fn checkpoint_ts(&self) -> Ts {
        // `BasicDispatcher.GetCheckpointTs` over `TableProgress.GetCheckpointTs`
        // (basic_dispatcher.go:522-530, table_progress.go:172-183): the first row not yet
        // durable minus one; with none, the last row handed to the sink minus one, or the
        // resolved ts if that is higher; the resolved ts if no row was ever handed over.
        let (tp, empty) = match self.progress.keys().next() {
            Some(&min) => (min.saturating_sub(1), false),
            None => (self.max_commit_ts.saturating_sub(1), true),
        };
        let mut cp = if tp == 0 {
            self.resolved_ts
        } else if empty {
            tp.max(self.resolved_ts)
        } else {
            tp
        };
        if let Some(t) = self.ddl_writing {
            cp = cp.min(t.saturating_sub(1));
        }
        if let Some(b) = &self.block {
            // Everything before the event is flushed; rows at a syncpoint's ts come before
            // it, so a syncpoint at `s` leaves the checkpoint at up to `s`.
            let cap = match &b.event {
                BlockEvent::SyncPoint(s) => *s,
                BlockEvent::Ddl(d) => d.commit_ts.saturating_sub(1),
            };
            cp = cp.min(cap);
        }
        if let Some(&t) = self.add_table_blockers.iter().next() {
            cp = cp.min(t.saturating_sub(1));
        }
        if let Some(l) = self.lost_floor {
            cp = cp.min(l.saturating_sub(1));
        }
        cp
    }

    /// The status a complete-status heartbeat lists: with `EventSizePerSecond` since the
    /// last query, which it resets (`GetEventSizePerSecond`).
    pub fn complete_status(&mut self, now_ms: u64, traffic: &dyn crate::upstream::TrafficView) -> TableSpanStatus {
        let bytes = traffic.span_write_bytes(&self.span, self.traffic_since_ms, now_ms);
        let rate = crate::upstream::event_size_per_second(bytes, now_ms.saturating_sub(self.traffic_since_ms));
        self.traffic_since_ms = now_ms;
        TableSpanStatus { event_size_per_second: rate, ..self.status() }
    }

    pub fn status(&self) -> TableSpanStatus {
        TableSpanStatus {
            mode: self.mode,
            id: self.id,
            state: self.state,
            checkpoint_ts: self.checkpoint_ts(),
            event_size_per_second: 0,
        }
    }

    /// Whether `TryClose` may succeed (progress empty, no add-table blocker, no DDL write).
    pub fn can_close(&self) -> bool {
        self.progress.is_empty() && self.add_table_blockers.is_empty() && self.ddl_writing.is_none()
    }

    /// `shouldBlock` of `DealWithBlockEvent`.
    pub fn should_block(&self, ev: &DdlEvent) -> bool {
        match ev.blocked_tables.influence_type {
            InfluenceType::All | InfluenceType::Db => true,
            InfluenceType::Normal => ev.blocked_tables.table_ids.len() > 1 || !self.span.is_full(),
        }
    }

    fn block_state(&self, ev: &BlockEvent, stage: BlockStage, blocked: bool) -> BlockState {
        BlockState {
            is_blocked: blocked,
            block_ts: ev.commit_ts(),
            block_tables: Some(ev.blocked_tables()),
            need_dropped_tables: ev.need_dropped_tables(),
            need_added_tables: ev.need_added_tables(),
            updated_schemas: ev.updated_schemas(),
            is_sync_point: ev.is_sync_point(),
            stage,
        }
    }

    /// `GetBlockEventStatus`: the pending blocking event and its stage (reported at
    /// bootstrap, and read by a merge when it closes its sources).
    pub fn pending_block_state(&self) -> Option<BlockState> {
        self.block.as_ref().map(|b| self.block_state(&b.event, b.stage, true))
    }

    /// Process queued events until the queue is empty or the dispatcher must wait.
    pub fn handle_events(&mut self, now_ms: u64, sink_has_buffered: bool, fx: &mut DispatcherEffects) {
        self.handle_events_held(now_ms, sink_has_buffered, None, fx)
    }

    /// [`Self::handle_events`] for a redo changefeed: `redo_global_ts` is the redo global
    /// resolved ts (`None` with redo off). An event dispatcher handles nothing whose
    /// commit ts (a resolved event's ts) is above it, so it never writes, nor reports a
    /// checkpoint, beyond what the redo log holds (`event_dispatcher.go` caches the
    /// batch; here it stops at the first such event, see fidelity).
    pub fn handle_events_held(
        &mut self,
        now_ms: u64,
        sink_has_buffered: bool,
        redo_global_ts: Option<Ts>,
        fx: &mut DispatcherEffects,
    ) {
        if self.try_removing
            || self.merging
            || matches!(self.state, ComponentState::Preparing | ComponentState::MergeReady)
        {
            return;
        }
        while let Some(ev) = self.queue.front() {
            if self.ddl_writing.is_some() || self.block.is_some() {
                return;
            }
            // A block event's write or report runs in the block-event executor, one task
            // per dispatcher at a time (block_event_executor.go:55-77): behind a task held
            // after its write (`BlockOrWaitReportAfterWrite`) the next block event waits,
            // and the event stream with it; the rows before it go on.
            if self.held_done.is_some() && matches!(ev, UpstreamEvent::Ddl(_) | UpstreamEvent::SyncPoint(_)) {
                hit(P::DispatcherBlockEventBehindHeldDone);
                return;
            }
            if let Some(g) = redo_global_ts.filter(|_| !self.is_redo()) {
                let held = event_ts(ev) > g;
                if held != self.held_by_redo {
                    hit(if held { P::RedoEventHeld } else { P::RedoEventReleased });
                    self.held_by_redo = held;
                }
                if held {
                    return;
                }
            }
            match ev {
                UpstreamEvent::Resolved(ts) => {
                    let ts = *ts;
                    self.queue.pop_front();
                    if ts > self.resolved_ts {
                        self.resolved_ts = ts;
                    }
                    self.mark_working(fx);
                }
                UpstreamEvent::Dml(r) => {
                    let r = r.clone();
                    self.queue.pop_front();
                    // A stale row (below the resolved ts) is ignored, and so is one at the
                    // start ts + 1 with `skipDMLAsStartTs` (basic_dispatcher.go:620-628, 652-661).
                    if r.commit_ts < self.resolved_ts || (self.skip_dml_as_start_ts && r.commit_ts == self.start_ts + 1)
                    {
                        if r.commit_ts < self.resolved_ts {
                            hit(P::DispatcherDmlStale);
                        } else {
                            hit(P::DispatcherDmlSkippedAtStart);
                        }
                        continue;
                    }
                    *self.progress.entry(r.commit_ts).or_insert(0) += 1;
                    self.max_commit_ts = r.commit_ts;
                    fx.rows.push(r);
                    self.mark_working(fx);
                }
                UpstreamEvent::Ddl(d) => {
                    let d = d.clone();
                    if d.commit_ts <= self.start_ts && !(self.skip_dml_as_start_ts && d.commit_ts == self.start_ts + 1)
                    {
                        hit(P::DispatcherDdlBeforeStartSkipped);
                        self.queue.pop_front();
                        continue;
                    }
                    // Every prior row is durable before a DDL. An event dispatcher flushes
                    // them (`FlushDMLBeforeBlock`). The redo sink's flush is a no-op, but a
                    // redo dispatcher's DML batch blocks its event path until the batch's
                    // log is written (the wake is `PostEnqueue`, which the redo writer
                    // calls from `PostFlush` after the file is flushed:
                    // basic_dispatcher.go:317-325, dml_event.go:664-684, file_worker.go:217-227),
                    // so it waits here for the redo flush tick.
                    if !self.progress.is_empty() || sink_has_buffered || !fx.rows.is_empty() {
                        if self.is_redo() {
                            hit(P::RedoDdlWaitsForRows);
                        } else {
                            hit(P::DispatcherFlushBeforeDdl);
                            fx.flush_rows = true;
                        }
                        return;
                    }
                    self.mark_working(fx);
                    // A RENAME across databases moves this table's dispatcher to the new
                    // schema as soon as it handles the DDL, before any Write/Pass
                    // (basic_dispatcher.go:1175-1201); a repeat finds the new ID and skips.
                    if !self.is_trigger {
                        if let Some(c) = d
                            .updated_schemas
                            .iter()
                            .find(|c| c.table_id == self.span.table_id && c.old_schema_id == self.schema_id)
                        {
                            self.schema_id = c.new_schema_id;
                        }
                    }
                    if self.is_trigger {
                        let blocking =
                            matches!(d.blocked_tables.influence_type, InfluenceType::All | InfluenceType::Db)
                                || d.blocked_tables.table_ids.iter().any(|t| *t != DDL_SPAN_TABLE_ID);
                        if !blocking {
                            // Non-blocking (e.g. CREATE TABLE): write first, report after.
                            hit(P::DispatcherTriggerNonBlockingDdl);
                            self.queue.pop_front();
                            self.write_non_blocking(d, fx);
                            return;
                        }
                        // A DB/All event waits while non-blocking reports are unacknowledged.
                        if matches!(d.blocked_tables.influence_type, InfluenceType::All | InfluenceType::Db)
                            && !self.pending_acks.is_empty()
                        {
                            hit(P::DispatcherTriggerWaitsAcks);
                            return;
                        }
                    } else if !self.should_block(&d) {
                        // Single-table DDL on a complete-table span: the dispatcher writes it itself.
                        hit(P::DispatcherSelfWrittenDdl);
                        self.queue.pop_front();
                        self.write_non_blocking(d, fx);
                        return;
                    }
                    hit(P::DispatcherDdlWaiting);
                    self.report_waiting(BlockEvent::Ddl(d), now_ms, fx);
                    return;
                }
                UpstreamEvent::SyncPoint(s) => {
                    let s = *s;
                    // A redo dispatcher ignores syncpoints (basic_dispatcher.go:719-721).
                    if self.is_redo() {
                        hit(P::RedoSyncPointSkipped);
                        self.queue.pop_front();
                        continue;
                    }
                    // A stale event (`commitTs < resolvedTs`) is ignored, and so is the
                    // syncpoint at the start ts when the recovery info says it was written
                    // (`CalculateStartSyncPointTs` with `skipSyncpointAtStartTs`).
                    if s < self.resolved_ts || (self.skip_sync_point_at_start_ts && s == self.start_ts) {
                        if s < self.resolved_ts {
                            hit(P::DispatcherSyncPointStale);
                        } else {
                            hit(P::SyncPointSkippedAtStart);
                        }
                        self.queue.pop_front();
                        continue;
                    }
                    if self.received_sync_point != Some(s) {
                        self.received_sync_point = Some(s);
                        fx.notes.push(("dispatcher receive sync point event", vec![("commitTs", s.to_string())]));
                    }
                    // A syncpoint always blocks: flush every prior row first.
                    if !self.progress.is_empty() || sink_has_buffered || !fx.rows.is_empty() {
                        hit(P::DispatcherFlushBeforeSyncPoint);
                        fx.flush_rows = true;
                        return;
                    }
                    self.mark_working(fx);
                    // The trigger holds a DB/All event while non-blocking reports are unacknowledged.
                    if self.is_trigger && !self.pending_acks.is_empty() {
                        hit(P::DispatcherTriggerSyncPointWaitsAcks);
                        return;
                    }
                    hit(P::DispatcherSyncPointWaiting);
                    self.report_waiting(BlockEvent::SyncPoint(s), now_ms, fx);
                    return;
                }
            }
        }
    }

    /// The non-blocking path of `DealWithBlockEvent` (basic_dispatcher.go:1073-1177): the
    /// DDL is written first; one that adds or drops tables is reported afterwards (stage
    /// NONE, resent until ACK) by any dispatcher, and on the trigger an added table also
    /// caps the checkpoint below the DDL until the ACK, from before the write on.
    fn write_non_blocking(&mut self, d: DdlEvent, fx: &mut DispatcherEffects) {
        if has_table_schedule_changes(&d.need_added_tables, d.need_dropped_tables.as_ref()) {
            // The NONE status carries drops and adds only (basic_dispatcher.go:1160-1168).
            let mut st = self.block_state(&BlockEvent::Ddl(d.clone()), BlockStage::None, false);
            st.updated_schemas.clear();
            self.nonblocking_written = Some(st);
        }
        if self.is_trigger && !d.need_added_tables.is_empty() {
            hit(P::DispatcherAddTableBlocker);
            self.add_table_blockers.insert(d.commit_ts);
        }
        self.ddl_writing = Some(d.commit_ts);
        self.writing_sync_point = false;
        fx.write_block = Some(BlockEvent::Ddl(d));
    }

    /// `reportBlockedEventToMaintainer`: the event is pending in WAITING and reported.
    pub(crate) fn report_waiting(&mut self, ev: BlockEvent, now_ms: u64, fx: &mut DispatcherEffects) {
        let st = self.block_state(&ev, BlockStage::Waiting, true);
        let pending = self.block.as_ref().map(|b| (b.event.key(), b.stage));
        fx.failed.check(crate::assertions::Assertion::DispatcherOnePendingBlock, pending.is_none(), || {
            format!("dispatcher={} pending={:?} new={:?}", self.id, pending, ev.key())
        });
        self.block = Some(PendingBlock {
            event: ev,
            stage: BlockStage::Waiting,
            last_report_ms: now_ms,
            acked: false,
            last_ignored_resend_ms: 0,
            ignored_resend_deferred: false,
            action_key: None,
        });
        fx.block_statuses.push(st);
    }

    fn mark_working(&mut self, fx: &mut DispatcherEffects) {
        if self.state == ComponentState::Initializing {
            hit(P::DispatcherWorking);
            self.state = ComponentState::Working;
            fx.became_working = true;
        }
    }

    /// The block event write this dispatcher issued (a DDL, or a syncpoint if
    /// `is_sync_point`) became durable.
    ///
    /// `hold_done`: failpoint `BlockOrWaitReportAfterWrite` is on, so the DONE of a barrier
    /// write waits in [`Self::held_done`] until [`Self::release_held_done`].
    pub fn on_block_written(
        &mut self,
        commit_ts: Ts,
        is_sync_point: bool,
        hold_done: bool,
        now_ms: u64,
        fx: &mut DispatcherEffects,
    ) {
        if self.ddl_writing != Some(commit_ts) || self.writing_sync_point != is_sync_point {
            return;
        }
        self.ddl_writing = None;
        self.writing_sync_point = false;
        // Everything up to the event is handled (events are processed in commit-ts order):
        // the dispatcher's progress includes the event itself now, so a span restarted from
        // its checkpoint (move, merge) does not execute a DDL a second time.
        self.resolved_ts = self.resolved_ts.max(commit_ts);
        let writing = self
            .block
            .as_ref()
            .filter(|b| b.event.key() == (commit_ts, is_sync_point) && b.stage == BlockStage::Writing)
            .map(|b| (b.event.clone(), b.action_key));
        if let Some((ev, action_key)) = writing {
            let st = Self::done_state(&ev, action_key);
            self.block = None;
            self.queue.pop_front();
            if hold_done {
                hit(P::DispatcherDoneHeldAfterWrite);
                self.held_done = Some(st);
                return;
            }
            hit(P::DispatcherBlockWrittenDone);
            fx.block_statuses.push(st);
            self.wake_status_path(now_ms, fx);
            return;
        }
        if is_sync_point {
            return;
        }
        // A non-blocking DDL that changes the table set: report stage NONE with the schedule
        // info, resent until the maintainer's ACK.
        if let Some(st) = self.nonblocking_written.take_if(|st| st.block_ts == commit_ts) {
            hit(P::DispatcherNonBlockingReported);
            fx.block_statuses.push(st.clone());
            self.pending_acks.insert(commit_ts, PendingNonBlocking { state: st, last_report_ms: now_ms });
        }
    }

    /// The status path wakes (`reportBlockedEventDone`): the statuses that waited behind
    /// the write are handled now, in arrival order. One of them may start the next write
    /// (a Write for the event pending after a held DONE): the rest wait behind that one.
    fn wake_status_path(&mut self, now_ms: u64, fx: &mut DispatcherEffects) {
        for q in std::mem::take(&mut self.awaiting_statuses) {
            hit(P::DispatcherAwaitedStatusReplayed);
            self.handle_status(q, now_ms, fx);
        }
    }

    /// `BlockOrWaitReportAfterWrite` is off again: the held DONE is reported, then the
    /// status path wakes. Whether there was one.
    pub fn release_held_done(&mut self, now_ms: u64, fx: &mut DispatcherEffects) -> bool {
        let Some(st) = self.held_done.take() else { return false };
        hit(P::DispatcherHeldDoneReleased);
        fx.block_statuses.push(st);
        self.wake_status_path(now_ms, fx);
        true
    }

    /// The DONE status of a finished block event: TiCDC reports the key of the action it
    /// executed (`offerDoneBlockStatus(actionCommitTs, actionIsSyncPoint)`).
    fn done_state(ev: &BlockEvent, action_key: Option<(Ts, bool)>) -> BlockState {
        let (ts, sp) = action_key.unwrap_or_else(|| ev.key());
        BlockState {
            is_blocked: true,
            block_ts: ts,
            block_tables: None,
            need_dropped_tables: None,
            need_added_tables: vec![],
            updated_schemas: vec![],
            is_sync_point: sp,
            stage: BlockStage::Done,
        }
    }

    /// `HandleDispatcherStatus` (basic_dispatcher.go:779-887): the ack first, then an
    /// ignored-status notice that matches the pending WAITING event (fast resend; the
    /// action is then not looked at), then the action. While a barrier Write is being
    /// executed the whole status waits (see `awaiting_statuses`).
    pub fn handle_status(&mut self, q: QueuedStatus, now_ms: u64, fx: &mut DispatcherEffects) {
        if self.held_done.is_some() || self.block.as_ref().is_some_and(|b| b.stage == BlockStage::Writing) {
            hit(P::DispatcherStatusAwaitsWrite);
            self.awaiting_statuses.push_back(q);
            return;
        }
        if let Some(a) = &q.ack {
            self.on_ack(a);
        }
        if let Some(ig) = &q.ignored {
            if self.on_ignored(ig, now_ms, &mut fx.block_statuses) {
                return;
            }
        }
        if let Some(a) = &q.action {
            self.on_action(a, fx, q.match_sync_point);
        }
    }

    /// Handle a barrier action for the pending block event (`HandleDispatcherStatus`).
    ///
    /// As in TiCDC (`BlockEventStatus.actionMatchs`), an action matches the pending
    /// event when the event is WAITING and the commit ts are equal; `isSyncPoint` is not
    /// compared. A dispatcher executing an action does not look at further statuses
    /// until it is done (TiCDC's status path awaits the write/pass); here they are
    /// dropped, and the maintainer's resend brings them again.
    ///
    /// `match_sync_point`: the candidate fix `match-action-on-sync-point` (not TiCDC)
    /// compares `(commitTs, isSyncPoint)`, so a late action for a DDL at a syncpoint's ts
    /// is outdated for the pending syncpoint (DDLs come first at one ts) and a syncpoint's
    /// action is in the future for a pending DDL at its ts.
    ///
    /// Called directly (not through [`Self::handle_status`]) on a dispatcher writing its
    /// block event, an action is dropped: the status path never hands one over then.
    pub fn on_action(&mut self, action: &DispatcherAction, fx: &mut DispatcherEffects, match_sync_point: bool) {
        let sp = |x: bool| match_sync_point && x;
        let pending = self.block.as_ref().map(|b| ((b.event.commit_ts(), sp(b.event.is_sync_point())), b.stage));
        if let Some((_, BlockStage::Writing)) = pending {
            return;
        }
        let action_key = (action.commit_ts, sp(action.is_sync_point));
        if pending != Some((action_key, BlockStage::Waiting)) {
            // Not the pending event: an action for a future event is ignored (no pending
            // event and beyond the resolved ts, or beyond the pending one); an outdated
            // one is answered DONE, so a barrier whose DONE was lost (or whose writer was
            // moved after writing) can finish.
            let future = match pending {
                None => action.commit_ts > self.resolved_ts,
                Some((key, _)) => action_key > key,
            };
            if future {
                hit(P::DispatcherActionFuture);
            } else {
                hit(P::DispatcherActionOutdated);
                fx.block_statuses.push(BlockState {
                    is_blocked: true,
                    block_ts: action.commit_ts,
                    block_tables: None,
                    need_dropped_tables: None,
                    need_added_tables: vec![],
                    updated_schemas: vec![],
                    is_sync_point: action.is_sync_point,
                    stage: BlockStage::Done,
                });
            }
            return;
        }
        let Some(b) = &mut self.block else { return };
        let (inner, name) = match action.action {
            ActionKind::Write => (0, "Write"),
            ActionKind::Pass => (1, "Pass"),
        };
        fx.notes.push((
            "pending event get the action",
            vec![
                ("action", name.to_string()),
                ("innerAction", inner.to_string()),
                ("actionIsSyncPoint", action.is_sync_point.to_string()),
                ("pendingEventCommitTs", b.event.commit_ts().to_string()),
                ("pendingIsSyncPoint", b.event.is_sync_point().to_string()),
            ],
        ));
        b.action_key = Some((action.commit_ts, action.is_sync_point));
        match action.action {
            ActionKind::Write => {
                hit(P::DispatcherActionWrite);
                b.stage = BlockStage::Writing;
                self.ddl_writing = Some(b.event.commit_ts());
                self.writing_sync_point = b.event.is_sync_point();
                fx.write_block = Some(b.event.clone());
            }
            ActionKind::Pass => {
                hit(P::DispatcherActionPass);
                let (ev, key) = (b.event.clone(), b.action_key);
                self.resolved_ts = self.resolved_ts.max(ev.commit_ts());
                let st = Self::done_state(&ev, key);
                self.block = None;
                self.queue.pop_front();
                fx.block_statuses.push(st);
            }
        }
    }

    /// An ACK cancels the resend of the status with that `(commitTs, isSyncPoint)`.
    pub fn on_ack(&mut self, ack: &AckEvent) {
        if let Some(b) = &mut self.block {
            if b.event.key() == (ack.commit_ts, ack.is_sync_point) {
                hit(P::DispatcherAckBlock);
                b.acked = true;
            }
        }
        // Non-blocking reports are DDLs (never syncpoints).
        if !ack.is_sync_point && self.pending_acks.remove(&ack.commit_ts).is_some() {
            hit(P::DispatcherAckNonBlocking);
            self.add_table_blockers.remove(&ack.commit_ts);
        }
    }

    /// Periodic resend of unacknowledged block statuses (every 5 s).
    pub fn resend_block_statuses(&mut self, now_ms: u64, out: &mut Vec<BlockState>) {
        if let Some(b) = &mut self.block {
            let deferred = b.ignored_resend_deferred && now_ms >= b.last_ignored_resend_ms + IGNORED_RESEND_MIN_MS;
            if b.stage == BlockStage::Waiting
                && !b.acked
                && (deferred || now_ms >= b.last_report_ms + BLOCK_STATUS_RESEND_MS)
            {
                if deferred {
                    hit(P::DispatcherResendDeferredIgnored);
                    b.last_ignored_resend_ms = now_ms;
                } else {
                    hit(P::DispatcherResendWaiting);
                    b.last_report_ms = now_ms;
                }
                b.ignored_resend_deferred = false;
                let ev = b.event.clone();
                out.push(self.block_state(&ev, BlockStage::Waiting, true));
            }
        }
        for p in self.pending_acks.values_mut() {
            if now_ms >= p.last_report_ms + BLOCK_STATUS_RESEND_MS {
                hit(P::DispatcherResendNonBlocking);
                p.last_report_ms = now_ms;
                out.push(p.state.clone());
            }
        }
    }

    /// Fast resend on `IgnoredBlockStatus` (`HandleDispatcherStatus` executes the resend
    /// task at once, so a dispatcher whose task is still Scheduling keeps reporting until
    /// the maintainer takes the status).
    ///
    /// Simplification: TiCDC resends at once on every ignore. The simulated network can
    /// duplicate messages, and an immediate resend per (duplicated) ignore amplifies
    /// without bound, so here a WAITING status is resent at most once per
    /// `IGNORED_RESEND_MIN_MS`; an ignore inside that window defers the resend to the next
    /// heartbeat tick past it (dropping it would leave the dispatcher to the 5 s resend).
    /// Returns whether the notice matched the pending event (`ignoredStatusMatches`).
    pub fn on_ignored(&mut self, ev: &AckEvent, now_ms: u64, out: &mut Vec<BlockState>) -> bool {
        if let Some(b) = &mut self.block {
            // `ignoredStatusMatches` compares the commit ts and `isSyncPoint`.
            if b.event.key() != (ev.commit_ts, ev.is_sync_point) || b.stage != BlockStage::Waiting {
                hit(P::DispatcherIgnoredMismatch);
                return false;
            }
            if now_ms >= b.last_ignored_resend_ms + IGNORED_RESEND_MIN_MS {
                hit(P::DispatcherIgnoredResend);
                b.last_ignored_resend_ms = now_ms;
                b.ignored_resend_deferred = false;
                let e = b.event.clone();
                out.push(self.block_state(&e, BlockStage::Waiting, true));
            } else {
                hit(P::DispatcherIgnoredDeferred);
                b.ignored_resend_deferred = true;
            }
            return true;
        }
        false
    }

    pub fn is_create_table(ev: &DdlEvent) -> bool {
        ev.kind == DdlKind::CreateTable
    }
}

/// The commit ts an event is ordered by (a resolved event's ts).
fn event_ts(ev: &UpstreamEvent) -> Ts {
    match ev {
        UpstreamEvent::Resolved(ts) | UpstreamEvent::SyncPoint(ts) => *ts,
        UpstreamEvent::Dml(r) => r.commit_ts,
        UpstreamEvent::Ddl(d) => d.commit_ts,
    }
}

/// `hasTableScheduleChanges` (basic_dispatcher.go:1041-1055): added tables, or dropped
/// tables that name one (a Normal payload) or a scope (DB/All).
pub fn has_table_schedule_changes(added: &[TableRef], dropped: Option<&InfluencedTables>) -> bool {
    if !added.is_empty() {
        return true;
    }
    match dropped {
        None => false,
        Some(d) => d.influence_type != InfluenceType::Normal || !d.table_ids.is_empty(),
    }
}
