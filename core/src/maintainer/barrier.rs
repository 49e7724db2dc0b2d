//! Barrier: coordinates DDLs and syncpoints ("block events") across dispatchers (§8).
//!
//! Events are keyed by `(commitTs, isSyncPoint)`, so a DDL and a syncpoint at the same
//! ts are two events, and schedule-requiring events are applied in key order (the DDL
//! first). A syncpoint influences all tables: it is selected once every task (and the
//! table trigger) reported WAITING, the table trigger is its writer, and the Pass fans
//! out to every alive node (`InfluenceType_All`), each dispatcher manager applying it to
//! all its dispatchers.
//!
//! Schema-level DDLs (`InfluenceType_DB`, e.g. DROP DATABASE) block every task of the
//! schema and the table trigger, which writes them; the Pass fans out (`InfluenceType_DB`
//! with the schema ID) to the nodes hosting tasks of the schema and the writer's node,
//! each manager applying it to its dispatchers of the schema and its trigger. DROP
//! DATABASE drops the schema's tasks when the writer reports DONE
//! (`RemoveTasksBySchemaID`), so its Pass finds no task left and the event is covered at
//! once (`sendPassAction` marks the range checker covered).

use super::operator::{Operator, OperatorController, RemoveDispatcherOperator, RemovePostFinish};
use super::span_controller::{ReplicaState, SpanController};
use crate::coverage::{hit, Point as P};
use crate::messages::*;
use crate::types::*;
use crate::upstream::{SchemaView, TableInfo};
use std::collections::{BTreeMap, BTreeSet};

/// Per-event resend period.
pub const BARRIER_RESEND_MS: u64 = 1_000;
/// `fanoutPassResendQuietInterval`: a DB/All pass is not broadcast again while DONE
/// statuses arrived within this window after the previous broadcast.
pub const FANOUT_PASS_QUIET_MS: u64 = 1_000;

pub type EventKey = (Ts, bool);

#[derive(Clone, Debug)]
pub struct BarrierEvent {
    pub commit_ts: Ts,
    pub is_sync_point: bool,
    pub block_tables: Option<InfluencedTables>,
    pub need_dropped: Option<InfluencedTables>,
    pub need_added: Vec<TableRef>,
    /// `schemaIDChange`: applied after the drops and adds.
    pub schema_changes: Vec<SchemaIdChange>,
    /// `reportedDispatchers`: the dispatchers whose reports cover the event's range. Before
    /// selection their WAITINGs; a selection by all-reported starts afresh, after which only
    /// DONEs count (`onAllDispatcherReportedBlockEvent`, maintainer/barrier_event.go:284-288).
    /// An event selected otherwise (advanced past, rebuilt at bootstrap) keeps what it had.
    pub reported: BTreeSet<DispatcherId>,
    pub last_reporter: Option<DispatcherId>,
    pub selected: bool,
    pub writer: Option<DispatcherId>,
    pub writer_advanced: bool,
    pub done: BTreeSet<DispatcherId>,
    pub last_resend_ms: u64,
    /// Last status accepted after selection (`lastStatusReceivedTime`).
    pub last_status_ms: u64,
    /// A pass went out since selection (`passActionSent`).
    pub pass_sent: bool,
    /// A DB event whose schema has no task left when its Pass is due (the range
    /// checker's `MarkCovered`): finished without further DONE.
    pub covered: bool,
    /// Blocked tables of a Normal event found without any task when a Pass went out
    /// (`sendPassAction` -> `markTableDone`, maintainer/barrier_event.go:541-544): only
    /// then does a vanished table count as done.
    pub covered_tables: BTreeSet<TableId>,
    /// The writer is done: the next resend is due at once, whatever `last_resend_ms`
    /// says (`lastResendTime` moved 20 s back).
    pub resend_due: bool,
}

impl BarrierEvent {
    pub fn new(key: EventKey, st: &BlockState) -> Self {
        BarrierEvent {
            commit_ts: key.0,
            is_sync_point: key.1,
            block_tables: st.block_tables.clone(),
            need_dropped: st.need_dropped_tables.clone(),
            need_added: st.need_added_tables.clone(),
            schema_changes: st.updated_schemas.clone(),
            reported: BTreeSet::new(),
            last_reporter: None,
            selected: false,
            writer: None,
            writer_advanced: false,
            done: BTreeSet::new(),
            last_resend_ms: 0,
            last_status_ms: 0,
            pass_sent: false,
            covered: false,
            covered_tables: BTreeSet::new(),
            resend_due: false,
        }
    }
    /// Candidate fix `selection-resets-reports`: only DONE reports keep covering the event.
    fn keep_only_done_reports(&mut self) {
        let BarrierEvent { reported, done, .. } = self;
        reported.retain(|id| done.contains(id));
    }

    /// `needSchedule` (maintainer/barrier_event.go:212-223): drops, adds or schema moves.
    pub fn need_schedule(&self) -> bool {
        self.need_dropped.is_some() || !self.need_added.is_empty() || !self.schema_changes.is_empty()
    }
    /// DB/All influence: the table trigger writes; the pass fans out.
    pub fn is_db_all(&self) -> bool {
        self.block_tables.as_ref().map(|b| b.influence_type != InfluenceType::Normal).unwrap_or(false)
    }
    fn is_all(&self) -> bool {
        self.block_tables.as_ref().map(|b| b.influence_type == InfluenceType::All).unwrap_or(false)
    }
}

/// Side effects of barrier handling: responses per node and trace lines.
#[derive(Default, Debug)]
pub struct BarrierOut {
    pub responses: BTreeMap<NodeId, Vec<DispatcherStatus>>,
    pub notes: Vec<(&'static str, String)>,
}
impl BarrierOut {
    fn push(&mut self, n: NodeId, s: DispatcherStatus) {
        self.responses.entry(n).or_default().push(s);
    }
}

#[derive(Debug, Default)]
pub struct Barrier {
    pub events: BTreeMap<EventKey, BarrierEvent>,
    /// Schedule-requiring events, applied in (commitTs, isSyncPoint) order.
    pub pending_events: BTreeSet<EventKey>,
    /// Events finished since the last drain (for the trace).
    pub finished: Vec<EventKey>,
    /// Events whose vanished writer was replaced since the last drain, with the new one.
    pub reselected: Vec<(EventKey, DispatcherId)>,
    /// Failed assertions, moved out by the maintainer ([`crate::assertions`]).
    pub failed: crate::assertions::Failures,
    /// Stamped on its `HeartBeatResponse`s (`NewBarrier(.., mode)`).
    pub mode: Mode,
}

fn ack(ts: Ts, sp: bool, id: DispatcherId) -> DispatcherStatus {
    DispatcherStatus {
        influenced: InfluencedDispatchers::Normal(vec![id]),
        action: None,
        ack: Some(AckEvent { commit_ts: ts, is_sync_point: sp }),
        ignored_block_status: None,
    }
}
fn action(kind: ActionKind, ts: Ts, sp: bool, infl: InfluencedDispatchers) -> DispatcherStatus {
    DispatcherStatus {
        influenced: infl,
        action: Some(DispatcherAction { action: kind, commit_ts: ts, is_sync_point: sp }),
        ack: None,
        ignored_block_status: None,
    }
}

/// The answer to a request's sender (maintainer/barrier.go:153-162): ignored statuses
/// first, then the ACKs merged per event in first-seen order, then the rest (actions).
fn group_acks(v: Vec<DispatcherStatus>) -> Vec<DispatcherStatus> {
    let mut ignored = Vec::new();
    let mut acks: Vec<DispatcherStatus> = Vec::new();
    let mut rest = Vec::new();
    for s in v {
        if s.ignored_block_status.is_some() {
            ignored.push(s);
        } else if s.ack.is_some() && s.action.is_none() {
            let ids = match &s.influenced {
                InfluencedDispatchers::Normal(ids) => ids.clone(),
                _ => vec![],
            };
            match acks.iter_mut().find(|a| a.ack == s.ack) {
                Some(a) => {
                    if let InfluencedDispatchers::Normal(v) = &mut a.influenced {
                        v.extend(ids);
                    }
                }
                None => acks.push(s),
            }
        } else {
            rest.push(s);
        }
    }
    ignored.into_iter().chain(acks).chain(rest).collect()
}

/// Context the barrier needs from the maintainer.
pub struct BarrierCtx<'a> {
    pub sc: &'a mut SpanController,
    pub oc: &'a mut OperatorController,
    pub schema: &'a dyn SchemaView,
    pub alive: &'a BTreeSet<NodeId>,
    pub now: u64,
    pub accept_nonowner: bool,
    pub fixes: BarrierFixes,
    pub new_id: &'a mut dyn FnMut() -> DispatcherId,
}

/// The candidate fixes the barrier applies; none is TiCDC's behaviour.
#[derive(Clone, Copy, Debug, Default)]
pub struct BarrierFixes {
    /// `keep-newer-block-state` (TiCDC's `UpdateBlockState` stores every status): a span's
    /// block state never moves back to an older `(commitTs, isSyncPoint)`.
    pub keep_newer_block_state: bool,
    /// `db-past-check-includes-trigger`: a DB event's "someone already past it" check
    /// also looks at the table trigger (TiCDC's looks at the schema's tasks only).
    pub db_past_check_includes_trigger: bool,
    /// `db-pass-reaches-trigger`: a DB event's Pass also goes to the table trigger's node
    /// (TiCDC's goes to the schema's tasks' nodes and the writer's).
    pub db_pass_reaches_trigger: bool,
    /// `selection-resets-reports`: an event selected otherwise than by all-reported keeps
    /// only its DONE reports (TiCDC resets them only at a selection by all-reported).
    pub selection_resets_reports: bool,
}

impl BarrierFixes {
    pub fn from_ctx(ctx: &crate::effects::Ctx) -> Self {
        use crate::bugs::Fix;
        BarrierFixes {
            keep_newer_block_state: ctx.fix(Fix::KeepNewerBlockState),
            db_past_check_includes_trigger: ctx.fix(Fix::DbPastCheckIncludesTrigger),
            db_pass_reaches_trigger: ctx.fix(Fix::DbPassReachesTrigger),
            selection_resets_reports: ctx.fix(Fix::SelectionResetsReports),
        }
    }
}

impl Barrier {
    /// `pendingScheduleEventMap.popIfHead` (maintainer/barrier_helper.go:66-86): whether
    /// `key` heads the schedule queue (then it leaves the queue), and the head seen.
    pub fn pending_pop_if_head(&mut self, key: EventKey) -> (bool, Option<EventKey>) {
        let head = self.pending_events.iter().next().copied();
        if head == Some(key) {
            self.pending_events.remove(&key);
            return (true, head);
        }
        (false, head)
    }

    /// Rebuild from bootstrap block states (§8.6).
    pub fn rebuild(&mut self, sc: &SpanController, fixes: BarrierFixes) {
        for r in sc.tasks.values() {
            let Some(b) = &r.block_state else { continue };
            // Only WAITING, WRITING and DONE rebuild an event (maintainer/barrier.go:204-207).
            if !b.is_blocked || b.stage == BlockStage::None {
                continue;
            }
            let key = (b.block_ts, b.is_sync_point);
            let ev = self.events.entry(key).or_insert_with(|| BarrierEvent::new(key, b));
            match b.stage {
                BlockStage::Waiting => {
                    hit(P::BarrierRebuildWaiting);
                    ev.reported.insert(r.id);
                }
                BlockStage::Writing => {
                    hit(P::BarrierRebuildWriting);
                    ev.reported.insert(r.id);
                    ev.selected = true;
                    ev.writer = Some(r.id);
                }
                BlockStage::Done => {
                    hit(P::BarrierRebuildDone);
                    ev.selected = true;
                    ev.writer_advanced = true;
                    ev.done.insert(r.id);
                    ev.reported.insert(r.id);
                }
                BlockStage::None => {}
            }
        }
        if fixes.selection_resets_reports {
            for ev in self.events.values_mut().filter(|e| e.selected) {
                ev.keep_only_done_reports();
            }
        }
    }

    /// Tasks `checkBlockedDispatchers` looks at to see whether someone is already past
    /// the event: for a DB event the schema's tasks only (`GetTasksBySchemaID`; the DDL
    /// span belongs to no schema), otherwise the related tasks.
    fn past_check_tasks(&self, ev: &BarrierEvent, sc: &SpanController, fixes: BarrierFixes) -> Vec<DispatcherId> {
        match &ev.block_tables {
            Some(bt) if bt.influence_type == InfluenceType::Db => {
                let mut v: Vec<DispatcherId> = sc.tasks_of_schema(bt.schema_id).iter().map(|r| r.id).collect();
                if fixes.db_past_check_includes_trigger {
                    v.push(sc.ddl_span_id);
                }
                v
            }
            _ => self.related_tasks(ev, sc),
        }
    }

    /// Tasks whose dispatchers an event blocks.
    pub fn related_tasks(&self, ev: &BarrierEvent, sc: &SpanController) -> Vec<DispatcherId> {
        let Some(bt) = &ev.block_tables else { return vec![] };
        match bt.influence_type {
            InfluenceType::Normal => {
                let mut v = Vec::new();
                for t in &bt.table_ids {
                    if *t == DDL_SPAN_TABLE_ID {
                        v.push(sc.ddl_span_id);
                    } else {
                        v.extend(sc.tasks_of_table(*t).iter().map(|r| r.id));
                    }
                }
                v
            }
            InfluenceType::Db => {
                let mut v: Vec<DispatcherId> = sc.tasks_of_schema(bt.schema_id).iter().map(|r| r.id).collect();
                v.push(sc.ddl_span_id);
                v
            }
            InfluenceType::All => sc.tasks.keys().copied().collect(),
        }
    }

    /// `HandleStatus` for one `BlockStatusRequest` from node `from`
    /// (maintainer/barrier.go:79-196): the answer to `from` lists the `IgnoredBlockStatus`es
    /// first, then one ACK per event naming every acknowledged dispatcher of the request,
    /// then the actions for `from`; actions for other nodes go to them.
    pub fn handle_request(
        &mut self,
        from: NodeId,
        statuses: &[TableSpanBlockStatus],
        bc: &mut BarrierCtx,
        out: &mut BarrierOut,
    ) {
        let mut part = BarrierOut::default();
        for st in statuses {
            self.handle_status(from, st, bc, &mut part);
        }
        out.notes.append(&mut part.notes);
        for (n, v) in part.responses {
            let v = if n == from { group_acks(v) } else { v };
            out.responses.entry(n).or_default().extend(v);
        }
    }

    /// `HandleStatus` for one block status from node `from`.
    pub fn handle_status(
        &mut self,
        from: NodeId,
        st: &TableSpanBlockStatus,
        bc: &mut BarrierCtx,
        out: &mut BarrierOut,
    ) {
        let id = st.id;
        let s = &st.state;
        let key = (s.block_ts, s.is_sync_point);
        let is_ddl_span = id == bc.sc.ddl_span_id;
        if !is_ddl_span {
            let Some(task) = bc.sc.get(&id) else {
                hit(P::BarrierStatusUnknownDispatcher);
                return;
            };
            if !bc.accept_nonowner && task.node != Some(from) {
                hit(P::BarrierStatusNonOwner);
                out.notes.push((
                    "ignore block status from non-owner",
                    format!("dispatcher={} from={} owner={:?}", id, from, task.node),
                ));
                return;
            }
            let owner = task.node;
            self.failed.check(crate::assertions::Assertion::BarrierStatusFromOwner, owner == Some(from), || {
                format!("dispatcher={} from={} owner={:?} block_ts={} stage={:?}", id, from, owner, s.block_ts, s.stage)
            });
            if task.state != ReplicaState::Replicating {
                hit(P::BarrierStatusNotReplicating);
                out.push(
                    from,
                    DispatcherStatus {
                        influenced: InfluencedDispatchers::Normal(vec![id]),
                        action: None,
                        ack: None,
                        ignored_block_status: Some(AckEvent { commit_ts: s.block_ts, is_sync_point: s.is_sync_point }),
                    },
                );
                return;
            }
        }
        // The dispatcher has flushed everything before the event.
        if let Some(t) = bc.sc.get_mut(&id) {
            if s.block_ts > 0 && s.block_ts - 1 > t.checkpoint_ts {
                t.checkpoint_ts = s.block_ts - 1;
            }
            let older = |b: &BlockState| (s.block_ts, s.is_sync_point) < (b.block_ts, b.is_sync_point);
            if !(bc.fixes.keep_newer_block_state && t.block_state.as_ref().map(older).unwrap_or(false)) {
                hit(P::BarrierBlockStateReplaced);
                t.block_state = Some(s.clone());
            }
        }
        match s.stage {
            BlockStage::Done => {
                // A DONE for a tracked event is ACKed, even if it finishes the event
                // (`handleOneStatus` returns needACK for DONE, maintainer/barrier.go:364-366).
                hit(P::BarrierDone);
                let tracked = self.events.contains_key(&key);
                self.handle_done(from, id, key, bc, out);
                if tracked {
                    out.push(from, ack(key.0, key.1, id));
                }
            }
            BlockStage::None => {
                // Non-blocking, written by the trigger first.
                hit(P::BarrierNonBlocking);
                let mut ev = BarrierEvent::new(key, s);
                ev.writer = Some(id);
                if ev.need_schedule() {
                    self.pending_events.insert(key);
                    if !self.pending_pop_if_head(key).0 {
                        hit(P::BarrierNonBlockingNotHead);
                        return; // not the head: wait for the resend, no ACK
                    }
                    self.schedule_block_event(&ev, bc, out);
                }
                out.push(from, ack(key.0, key.1, id));
            }
            BlockStage::Waiting | BlockStage::Writing => {
                let now = bc.now;
                let ev = self.events.entry(key).or_insert_with(|| BarrierEvent::new(key, s));
                if ev.selected {
                    // Only ACKed; the event may be done by now (maintainer/barrier.go:440-453).
                    hit(P::BarrierWaitingAfterSelected);
                    ev.last_status_ms = now;
                    out.push(from, ack(key.0, key.1, id));
                    self.maybe_finish(key, bc.sc);
                    return;
                }
                // The trigger's DB/All report builds the event's task snapshot: while a
                // schedule-requiring event is still pending (its tables not added or dropped
                // yet) it is dropped without ACK, and the trigger's resend brings it back.
                let db_all =
                    s.block_tables.as_ref().map(|b| b.influence_type != InfluenceType::Normal).unwrap_or(false);
                if is_ddl_span && db_all && !self.pending_events.is_empty() {
                    hit(P::BarrierDbAllDiscardedPending);
                    out.notes.push((
                        "discard db/all block event from ddl dispatcher due to pending schedule events",
                        format!("commit_ts={} sync_point={} pending={}", key.0, key.1, self.pending_events.len()),
                    ));
                    return;
                }
                hit(P::BarrierWaitingReported);
                ev.reported.insert(id);
                ev.last_reporter = Some(id);
                out.push(from, ack(key.0, key.1, id));
                self.try_select(key, bc, out);
            }
        }
    }

    /// Whether every dispatcher the event blocks has reported it (`allDispatcherReported`).
    pub fn all_reported(&mut self, key: EventKey, sc: &SpanController) -> bool {
        let Some(ev) = self.events.get(&key) else { return false };
        let related = self.related_tasks(ev, sc);
        let ev = self.events.get_mut(&key).unwrap();
        // Purge reporters whose task vanished or stopped replicating.
        ev.reported.retain(|id| {
            sc.get(id).map(|r| r.state == ReplicaState::Replicating || *id == sc.ddl_span_id).unwrap_or(false)
        });
        match &ev.block_tables {
            // A Normal event is checked by key-range coverage of each blocked table by the
            // spans of its reporters (`newRangeCheck`, maintainer/barrier_event.go:150-164;
            // `allDispatcherReported`, :424-502): a task that cannot report (Absent,
            // Scheduling) does not matter when reporters cover its range, and a blocked
            // table without any task is never covered.
            Some(bt) if bt.influence_type == InfluenceType::Normal => {
                !bt.table_ids.is_empty()
                    && bt.table_ids.iter().all(|t| {
                        if *t == DDL_SPAN_TABLE_ID {
                            return ev.reported.contains(&sc.ddl_span_id);
                        }
                        // A blocked table a Pass round found without tasks (`markTableDone`).
                        if ev.covered_tables.contains(t) {
                            return true;
                        }
                        let spans: Vec<TableSpan> = ev
                            .reported
                            .iter()
                            .filter_map(|id| sc.get(id))
                            .filter(|r| r.span.table_id == *t)
                            .map(|r| r.span)
                            .collect();
                        // Without table-across-nodes TiCDC counts tables, not key ranges
                        // (`NewTableCountChecker`, maintainer/range_checker/table_count_range_checker.go).
                        !spans.is_empty() && (!sc.cfg.enable_table_across_nodes || find_holes(*t, &spans).is_empty())
                    })
            }
            _ => !related.is_empty() && related.iter().all(|id| ev.reported.contains(id)),
        }
    }

    fn try_select(&mut self, key: EventKey, bc: &mut BarrierCtx, out: &mut BarrierOut) {
        if !self.all_reported(key, bc.sc) {
            return;
        }
        let ddl = bc.sc.ddl_span_id;
        let ev = self.events.get_mut(&key).unwrap();
        let db_all = ev.block_tables.as_ref().map(|b| b.influence_type != InfluenceType::Normal).unwrap_or(false);
        // After a bootstrap rebuild nobody has re-reported yet: any reporter of the
        // event's tables can write it (never the trigger of a Normal event it does not see).
        let writer = if db_all || ev.reported.contains(&ddl) {
            hit(P::BarrierWriterIsTrigger);
            ddl
        } else {
            ev.last_reporter.or_else(|| ev.reported.iter().copied().find(|id| *id != ddl)).unwrap_or(ddl)
        };
        self.failed.check(
            crate::assertions::Assertion::BarrierWriterReported,
            (writer == ddl && db_all) || ev.reported.contains(&writer),
            || format!("commit_ts={} sync_point={} writer={} reported={:?}", key.0, key.1, writer, ev.reported),
        );
        hit(P::BarrierWriterSelected);
        ev.selected = true;
        ev.writer = Some(writer);
        // From here only DONEs cover the event (the range checker is reset).
        ev.reported.clear();
        ev.last_resend_ms = bc.now;
        if ev.need_schedule() {
            self.pending_events.insert(key);
        }
        if let Some(n) = bc.sc.get(&writer).and_then(|r| r.node) {
            out.push(n, action(ActionKind::Write, key.0, key.1, InfluencedDispatchers::Normal(vec![writer])));
        }
        out.notes.push(("barrier select writer", format!("commit_ts={} writer={}", key.0, writer)));
    }

    fn handle_done(
        &mut self,
        from: NodeId,
        id: DispatcherId,
        key: EventKey,
        bc: &mut BarrierCtx,
        out: &mut BarrierOut,
    ) {
        if let Some(ev) = self.events.get_mut(&key) {
            if ev.selected {
                ev.last_status_ms = bc.now;
            }
        }
        let Some(ev) = self.events.get(&key) else {
            hit(P::BarrierDoneUntracked);
            return;
        };
        if ev.writer == Some(id) && !ev.writer_advanced {
            hit(P::BarrierWriterDone);
            if ev.need_schedule() {
                let ev = ev.clone();
                if !self.pending_pop_if_head(key).0 {
                    hit(P::BarrierWriterDoneNotHead);
                    return; // wait for resend
                }
                self.schedule_block_event(&ev, bc, out);
            }
            // The Pass goes out at the next resend, which is due at once
            // (`lastResendTime` moved 20 s back, maintainer/barrier.go:408-413, 610-612).
            let ev = self.events.get_mut(&key).unwrap();
            ev.writer_advanced = true;
            ev.resend_due = true;
        }
        let _ = from;
        let known = bc.sc.get(&id).is_some();
        if let Some(ev) = self.events.get_mut(&key) {
            ev.done.insert(id);
            // `markDispatcherEventDone` (maintainer/barrier_event.go:386-400): a DONE covers
            // the dispatcher's span, whatever the event's stage.
            if known {
                ev.reported.insert(id);
            }
        }
        self.maybe_finish(key, bc.sc);
    }

    /// `checkEventFinish` (maintainer/barrier.go:565-577): a selected event is done once its
    /// reporters cover its range again (`allDispatcherReported`). After a selection by
    /// all-reported those are the DONEs; an event advanced past or rebuilt keeps its
    /// WAITINGs. A span past the event counts only by its report: it answers the Pass with
    /// DONE (an outdated action, `basic_dispatcher.go:883-884`).
    fn maybe_finish(&mut self, key: EventKey, sc: &SpanController) {
        let Some(ev) = self.events.get(&key) else { return };
        if !ev.selected {
            return;
        }
        if ev.covered {
            hit(P::BarrierFinishedCovered);
            self.events.remove(&key);
            self.finished.push(key);
            return;
        }
        // A blocked table left without tasks counts only once a Pass round found it so.
        if let Some(bt) = ev.block_tables.as_ref().filter(|b| b.influence_type == InfluenceType::Normal) {
            if bt
                .table_ids
                .iter()
                .any(|t| *t != DDL_SPAN_TABLE_ID && !sc.is_table_exists(*t) && !ev.covered_tables.contains(t))
            {
                hit(P::BarrierFinishWaitsEmptyTable);
                return;
            }
        }
        if self.all_reported(key, sc) {
            hit(P::BarrierFinished);
            self.events.remove(&key);
            self.finished.push(key);
        }
    }

    pub fn send_pass(&mut self, key: EventKey, bc: &mut BarrierCtx, out: &mut BarrierOut) {
        let Some(ev) = self.events.get_mut(&key) else { return };
        ev.pass_sent = true;
        if ev.is_all() {
            // All: to every alive node; each manager applies it to all its dispatchers.
            hit(P::BarrierPassAll);
            for n in bc.alive.iter().copied() {
                out.notes.push((
                    "barrier pass",
                    format!("commit_ts={} sync_point={} node={} dispatchers=all", key.0, key.1, n),
                ));
                out.push(n, action(ActionKind::Pass, key.0, key.1, InfluencedDispatchers::All));
            }
            return;
        }
        let ev = self.events.get(&key).unwrap();
        if let Some(bt) = ev.block_tables.as_ref().filter(|b| b.influence_type == InfluenceType::Db) {
            // DB: to every node hosting a task of the schema, and the writer's (the
            // trigger's) node; each manager applies it to its dispatchers of the schema.
            let schema = bt.schema_id;
            let tasks = bc.sc.tasks_of_schema(schema);
            if tasks.is_empty() {
                // The schema's tables are gone (dropped by this event): covered.
                hit(P::BarrierPassDbCovered);
                self.events.get_mut(&key).unwrap().covered = true;
                out.notes
                    .push(("barrier pass", format!("commit_ts={} schema={} no tasks left, covered", key.0, schema)));
                return;
            }
            hit(P::BarrierPassDb);
            let mut nodes: BTreeSet<NodeId> = tasks.iter().filter_map(|r| r.node).collect();
            if let Some(n) = ev.writer.and_then(|w| bc.sc.get(&w)).and_then(|r| r.node) {
                nodes.insert(n);
            }
            if bc.fixes.db_pass_reaches_trigger {
                if let Some(n) = bc.sc.get(&bc.sc.ddl_span_id).and_then(|r| r.node) {
                    nodes.insert(n);
                }
            }
            for n in nodes {
                out.notes.push(("barrier pass", format!("commit_ts={} node={} schema={}", key.0, n, schema)));
                out.push(n, action(ActionKind::Pass, key.0, key.1, InfluencedDispatchers::Db(schema)));
            }
            return;
        }
        // Normal: every task of the blocked tables, by node (`sendPassAction` lists them all,
        // the writer and those already DONE included: a dispatcher recreated since, e.g.
        // after a move that ended in a re-add, waits on the event again and needs the Pass;
        // one already past it answers the outdated action DONE).
        let empty: Vec<TableId> = ev
            .block_tables
            .iter()
            .flat_map(|b| b.table_ids.iter().copied())
            .filter(|t| *t != DDL_SPAN_TABLE_ID && !bc.sc.is_table_exists(*t))
            .collect();
        let related = self.related_tasks(ev, bc.sc);
        self.events.get_mut(&key).unwrap().covered_tables.extend(empty);
        hit(P::BarrierPassNormal);
        let mut by_node: BTreeMap<NodeId, Vec<DispatcherId>> = BTreeMap::new();
        for id in related {
            if let Some(n) = bc.sc.get(&id).and_then(|r| r.node) {
                by_node.entry(n).or_default().push(id);
            }
        }
        for (n, ids) in by_node {
            out.notes.push((
                "barrier pass",
                format!(
                    "commit_ts={} node={} dispatchers={:?}",
                    key.0,
                    n,
                    ids.iter().map(|i| i.to_string()).collect::<Vec<_>>()
                ),
            ));
            out.push(n, action(ActionKind::Pass, key.0, key.1, InfluencedDispatchers::Normal(ids)));
        }
    }

    /// Apply a block event's scheduling side effects (§8.3).
    pub fn schedule_block_event(&mut self, ev: &BarrierEvent, bc: &mut BarrierCtx, out: &mut BarrierOut) {
        if let Some(d) = &ev.need_dropped {
            let ids: Vec<DispatcherId> = match d.influence_type {
                InfluenceType::Normal => d
                    .table_ids
                    .iter()
                    .flat_map(|t| bc.sc.tasks_of_table(*t).iter().map(|r| r.id).collect::<Vec<_>>())
                    .collect(),
                InfluenceType::Db => {
                    hit(P::BarrierDropSchema);
                    bc.sc.tasks_of_schema(d.schema_id).iter().map(|r| r.id).collect()
                }
                InfluenceType::All => vec![],
            };
            for id in ids {
                let r = bc.sc.get(&id).cloned().unwrap();
                hit(P::BarrierDropTask);
                bc.oc.on_task_removed(&id, bc.sc);
                if let Some(n) = r.node {
                    let op = Operator::Remove(RemoveDispatcherOperator::new(
                        id,
                        r.span,
                        n,
                        OperatorType::Remove,
                        RemovePostFinish::None,
                    ));
                    bc.oc.admission_insert(op, bc.sc, bc.alive, bc.now);
                }
                bc.sc.remove(&id);
                out.notes.push(("remove table task by ddl", format!("dispatcher={} table={}", id, r.span.table_id)));
            }
        }
        for t in &ev.need_added {
            let info = TableInfo {
                table_id: t.table_id,
                schema_id: t.schema_id,
                schema_name: String::new(),
                name: String::new(),
                splitable: t.splitable,
            };
            if bc.sc.is_table_exists(t.table_id) {
                hit(P::BarrierAddExisting);
                out.notes.push(("table already add, ignore", format!("table={}", t.table_id)));
                continue;
            }
            let regions = bc.schema.region_count(t.table_id);
            hit(P::BarrierAddTable);
            let ids = bc.sc.add_new_table(&info, ev.commit_ts, regions, bc.new_id);
            out.notes.push(("add new table by ddl", format!("table={} spans={} ids={:?}", t.table_id, ids.len(), ids)));
        }
        // `UpdateSchemaID` for each moved table (maintainer/barrier_event.go:352-361).
        for c in &ev.schema_changes {
            bc.sc.update_schema_id(c.table_id, c.new_schema_id);
            out.notes.push((
                "update schema id by ddl",
                format!("table={} old_schema={} new_schema={}", c.table_id, c.old_schema_id, c.new_schema_id),
            ));
        }
    }

    /// Periodic resend (each maintainer tick, at most once a second per event).
    pub fn resend(&mut self, bc: &mut BarrierCtx, out: &mut BarrierOut) {
        let keys: Vec<EventKey> = self.events.keys().copied().collect();
        for key in keys {
            let Some(ev) = self.events.get(&key) else { continue };
            if !ev.resend_due && bc.now < ev.last_resend_ms + BARRIER_RESEND_MS {
                continue;
            }
            let (selected, advanced, writer) = (ev.selected, ev.writer_advanced, ev.writer);
            // DB/All passes fan out to many nodes: while DONE statuses keep arriving after
            // the previous broadcast, wait for them to settle (the resend clock stays).
            if selected
                && advanced
                && ev.pass_sent
                && ev.is_db_all()
                && bc.now < ev.last_status_ms + FANOUT_PASS_QUIET_MS
            {
                hit(P::BarrierResendQuiet);
                continue;
            }
            // An event not selected yet keeps its resend clock: it is checked on every
            // resend (maintainer/barrier_event.go:704-717 returns before the clock moves).
            if selected {
                let e = self.events.get_mut(&key).unwrap();
                e.last_resend_ms = bc.now;
                e.resend_due = false;
            }
            if !selected {
                // Someone already past the event: it was written (`checkBlockedDispatchers`).
                let related = self.past_check_tasks(self.events.get(&key).unwrap(), bc.sc, bc.fixes);
                let past =
                    related.iter().any(|id| bc.sc.get(id).map(|r| forward_barrier_event(r, key)).unwrap_or(false));
                if past {
                    // Advanced without a writer; the Pass goes out on the next round (the
                    // resend clock of an unselected event has not moved, so it is due).
                    hit(P::BarrierResendSomeonePast);
                    let ev = self.events.get_mut(&key).unwrap();
                    ev.selected = true;
                    ev.writer_advanced = true;
                    if bc.fixes.selection_resets_reports {
                        ev.keep_only_done_reports();
                    }
                } else {
                    hit(P::BarrierResendTrySelect);
                    self.try_select(key, bc, out);
                }
            } else if !advanced {
                let mut w = writer.filter(|w| bc.sc.get(w).is_some());
                if w.is_none() {
                    // Only a Normal event's writer can vanish (split/merge of its table);
                    hit(P::BarrierWriterReselected);
                    // a DB/All event is always written by the table trigger.
                    let ev = self.events.get(&key).unwrap();
                    w = if ev.is_db_all() {
                        Some(bc.sc.ddl_span_id)
                    } else {
                        self.related_tasks(ev, bc.sc).first().copied()
                    };
                    self.events.get_mut(&key).unwrap().writer = w;
                    if let Some(w) = w {
                        self.reselected.push((key, w));
                    }
                }
                if let Some(w) = w {
                    if let Some(n) = bc.sc.get(&w).and_then(|r| r.node) {
                        hit(P::BarrierResendWrite);
                        out.push(n, action(ActionKind::Write, key.0, key.1, InfluencedDispatchers::Normal(vec![w])));
                    }
                }
            } else {
                hit(P::BarrierResendPass);
                self.send_pass(key, bc, out);
            }
        }
        // Every event is checked after the round, due or not (maintainer/barrier.go:280-285).
        let keys: Vec<EventKey> = self.events.keys().copied().collect();
        for key in keys {
            self.maybe_finish(key, bc.sc);
        }
    }

    /// Events that add tables cap the changefeed checkpoint at their commit ts.
    pub fn min_blocked_checkpoint_for_new_tables(&self) -> Option<Ts> {
        self.events.values().filter(|e| !e.need_added.is_empty()).map(|e| e.commit_ts).min()
    }
}

/// `forwardBarrierEvent`: whether a task is known to be past the event `key`. Its
/// checkpoint must be strictly above the event's ts (a dispatcher recreated at a
/// syncpoint's ts reports that ts as its checkpoint before the syncpoint is written), or
/// its block state beyond the event: a later block event, or a syncpoint at the ts of a
/// DDL event (events at one ts are ordered DDL first).
pub fn forward_barrier_event(r: &super::span_controller::SpanReplication, key: EventKey) -> bool {
    if r.checkpoint_ts > key.0 {
        return true;
    }
    match &r.block_state {
        Some(b) if b.block_ts > key.0 => true,
        Some(b) if b.block_ts == key.0 => b.is_sync_point && !key.1,
        _ => false,
    }
}
