//! Builders for the dispatcher-side conformance cases: a lone dispatcher driven like
//! TiCDC's `newDispatcherForTest` (start ts 0, a test sink whose flush the case decides),
//! DDL events shaped like the Go tests', and status messages.

use crate::dispatcher::basic_dispatcher::{DispatcherEffects, QueuedStatus};
use crate::dispatcher::Dispatcher;
use crate::messages::*;
use crate::tests::harness::*;
use crate::types::*;
use crate::upstream::*;

pub const ID: DispatcherId = DispatcherId(1);

/// One dispatcher and its clock. `flush` stands for the test sink's `FlushDMLs`: every row
/// handed to the sink becomes durable.
pub struct Disp {
    pub d: Dispatcher,
    pub now: u64,
    /// How often the dispatcher asked for a flush before a block event.
    pub flushes: u32,
}

impl Disp {
    pub fn new(span: TableSpan, start_ts: Ts, skip_dml: bool) -> Self {
        let is_trigger = span == TableSpan::ddl_span();
        let mut d = Dispatcher::new(ID, span, SCHEMA, start_ts, is_trigger, skip_dml);
        d.registered = true;
        Disp { d, now: 0, flushes: 0 }
    }
    /// A table dispatcher on the whole of table 1 (`getCompleteTableSpan`).
    pub fn complete() -> Self {
        Self::new(TableSpan::full(1), 0, false)
    }
    /// A table dispatcher on a part of table 1 (`getUncompleteTableSpan`).
    pub fn uncomplete() -> Self {
        Self::new(halves(1).0, 0, false)
    }
    /// The table trigger event dispatcher (`KeyspaceDDLSpan`).
    pub fn trigger() -> Self {
        Self::new(TableSpan::ddl_span(), 0, false)
    }
    /// `HandleEvents`: queue the events and let the dispatcher handle them.
    pub fn handle(&mut self, evs: Vec<UpstreamEvent>) -> DispatcherEffects {
        self.d.queue.extend(evs);
        self.run()
    }
    /// Let the dispatcher go on with its queue (after a flush, a write, an ACK).
    pub fn run(&mut self) -> DispatcherEffects {
        self.run_with(false)
    }
    /// As [`Self::run`], with the sink still holding rows to flush before a block event
    /// (a `FlushDMLBeforeBlock` that has not returned yet).
    pub fn run_with(&mut self, sink_has_buffered: bool) -> DispatcherEffects {
        let mut fx = DispatcherEffects::default();
        self.d.handle_events(self.now, sink_has_buffered, &mut fx);
        if fx.flush_rows {
            self.flushes += 1;
        }
        fx
    }
    pub fn flush(&mut self) {
        self.d.progress.clear();
    }
    /// The sink finished the block event write the dispatcher issued.
    pub fn written(&mut self, ts: Ts, sync_point: bool) -> DispatcherEffects {
        let mut fx = DispatcherEffects::default();
        self.d.on_block_written(ts, sync_point, false, self.now, &mut fx);
        fx
    }
    /// `HandleDispatcherStatus`.
    pub fn status(
        &mut self,
        ack: Option<AckEvent>,
        action: Option<DispatcherAction>,
        ignored: Option<AckEvent>,
    ) -> DispatcherEffects {
        let mut fx = DispatcherEffects::default();
        let q = QueuedStatus { ack, action, ignored, match_sync_point: false };
        self.d.handle_status(q, self.now, &mut fx);
        fx
    }
    pub fn ack(&mut self, ts: Ts, sync_point: bool) -> DispatcherEffects {
        self.status(Some(AckEvent { commit_ts: ts, is_sync_point: sync_point }), None, None)
    }
    pub fn action(&mut self, kind: ActionKind, ts: Ts, sync_point: bool) -> DispatcherEffects {
        self.status(None, Some(DispatcherAction { action: kind, commit_ts: ts, is_sync_point: sync_point }), None)
    }
    /// `blockEventStatus.getEventAndStage`: the pending event's key and stage.
    pub fn pending(&self) -> (Option<(Ts, bool)>, BlockStage) {
        match &self.d.block {
            Some(b) => (Some(b.event.key()), b.stage),
            None => (None, BlockStage::None),
        }
    }
    /// `resendTaskMap.Len()`: statuses resent until the maintainer's ACK.
    pub fn resend_tasks(&self) -> usize {
        let waiting = self.d.block.as_ref().is_some_and(|b| b.stage == BlockStage::Waiting && !b.acked);
        usize::from(waiting) + self.d.pending_acks.len()
    }
    /// Resends due after `ms` more milliseconds.
    pub fn resend_after(&mut self, ms: u64) -> Vec<BlockState> {
        self.now += ms;
        let mut out = Vec::new();
        self.d.resend_block_statuses(self.now, &mut out);
        out
    }
}

/// A DDL as the Go tests build it: commit ts, blocked tables, and the schedule payloads.
pub fn ddl(ts: Ts, blocked: InfluencedTables) -> DdlEvent {
    DdlEvent {
        commit_ts: ts,
        kind: DdlKind::AddColumn,
        schema_id: SCHEMA,
        schema_name: format!("db{}", SCHEMA),
        table_id: 1,
        table_name: "t1".into(),
        query: format!("DDL at {}", ts),
        blocked_tables: blocked,
        need_dropped_tables: None,
        need_added_tables: vec![],
        updated_schemas: vec![],
    }
}

/// `newAddTableDDL(commitTs, tableID)`: a non-blocking DDL of the trigger adding a table.
pub fn add_table_ddl(ts: Ts, table: TableId) -> DdlEvent {
    DdlEvent {
        kind: DdlKind::CreateTable,
        need_added_tables: vec![TableRef { table_id: table, schema_id: SCHEMA, splitable: true }],
        updated_schemas: vec![],
        ..ddl(ts, normal(&[DDL_SPAN_TABLE_ID]))
    }
}

pub fn drop_normal(tables: &[TableId]) -> InfluencedTables {
    InfluencedTables { influence_type: InfluenceType::Normal, table_ids: tables.to_vec(), schema_id: SCHEMA }
}

pub fn ev_ddl(e: DdlEvent) -> UpstreamEvent {
    UpstreamEvent::Ddl(e)
}
pub fn ev_row(ts: Ts) -> UpstreamEvent {
    UpstreamEvent::Dml(row(1, ts, ts))
}

/// Dispatcher statuses of one heartbeat response for `ids`.
#[allow(dead_code)]
pub fn hb_response(epoch: Epoch, statuses: Vec<DispatcherStatus>) -> Message {
    Message::HeartBeatResponse { mode: Mode::Default, cf: cf(), statuses, maintainer_epoch: epoch }
}

#[allow(dead_code)]
pub fn pass_all() -> DispatcherStatus {
    DispatcherStatus {
        influenced: InfluencedDispatchers::All,
        action: Some(DispatcherAction { action: ActionKind::Pass, commit_ts: 0, is_sync_point: false }),
        ack: None,
        ignored_block_status: None,
    }
}

/// A manager on node 1 owned by the maintainer on node 0 at [`EPOCH`] (`createTestManager`
/// with an owner), optionally with a table trigger.
pub fn owned_manager(trigger: Option<DispatcherId>) -> (crate::dispatcher::DispatcherManager, Env) {
    let mut env = Env::new(1);
    let mut dm = dm_on(1);
    let (r, _) = dm_handle(&mut dm, &mut env, 0, bootstrap_req(0, trigger, EPOCH));
    assert!(matches!(r, Some(Message::MaintainerBootstrapResponse { err: None, .. })), "{:?}", r);
    (dm, env)
}

/// `createTestDispatcher` + `dispatcherMap.Set`: a Working dispatcher on `span` from ts 0.
pub fn working(dm: &mut crate::dispatcher::DispatcherManager, env: &mut Env, id: DispatcherId, span: TableSpan) {
    dm_handle(dm, env, 0, sched(create_req(id, span, 0, OperatorType::Add, EPOCH)));
    dm.dispatchers.get_mut(&id).expect("created").state = ComponentState::Working;
}

/// Table 1's key space cut at the Go tests' keys "a" < "m" < "t" < "z".
pub fn key(k: char) -> u64 {
    match k {
        'a' => 0,
        'm' => TABLE_KEY_END / 2,
        'n' => TABLE_KEY_END / 2 + 1,
        't' => TABLE_KEY_END / 4 * 3,
        'z' => TABLE_KEY_END,
        _ => unreachable!(),
    }
}
pub fn span1(from: char, to: char) -> TableSpan {
    TableSpan { table_id: 1, start: key(from), end: key(to) }
}

pub fn merge_msg(sources: &[DispatcherId], merged: DispatcherId, epoch: Epoch) -> Message {
    Message::MergeDispatcherRequest { cf: cf(), req: merge_req(sources, merged, epoch) }
}

/// `doMerge`: the merge check task runs (one interval later), inside a heartbeat run that
/// also aggregates (`aggregateDispatcherHeartbeats`).
pub fn run_merge_check(dm: &mut crate::dispatcher::DispatcherManager, env: &mut Env) -> crate::effects::Out {
    env.now += crate::dispatcher::manager::MERGE_CHECK_INTERVAL_MS;
    dm.heartbeat(&mut env.ctx(), true);
    env.take()
}

pub fn post_bootstrap_req(trigger: DispatcherId, epoch: Epoch) -> Message {
    Message::MaintainerPostBootstrapRequest {
        redo_schemas: vec![],
        cf: cf(),
        table_trigger_event_dispatcher_id: trigger,
        schemas: vec![],
        maintainer_epoch: epoch,
    }
}

pub fn close_req(epoch: Epoch, removed: bool) -> Message {
    Message::MaintainerCloseRequest { cf: cf(), maintainer_epoch: epoch, removed }
}

/// A redo changefeed's config (`consistent.level = "eventual"`).
pub fn redo_config() -> crate::config::ChangefeedConfig {
    let mut c = crate::config::ChangefeedConfig::default();
    c.consistent.level = crate::config::ConsistentLevel::Eventual;
    c
}

/// A bootstrap of a redo changefeed naming both triggers.
pub fn redo_bootstrap_req(
    start: Ts,
    trigger: Option<DispatcherId>,
    redo_trigger: Option<DispatcherId>,
    epoch: Epoch,
) -> Message {
    Message::MaintainerBootstrapRequest {
        table_trigger_redo_dispatcher_id: redo_trigger,
        cf: cf(),
        config: redo_config(),
        start_ts: start,
        table_trigger_event_dispatcher_id: trigger,
        is_new_changefeed: false,
        maintainer_epoch: epoch,
    }
}

/// A redo changefeed's manager on node 0 whose redo trigger `tr` (at `start`) holds a
/// running redo meta that started from `found` (the meta files `initMeta` read).
pub fn redo_meta_running(
    start: Ts,
    tr: DispatcherId,
    found: Vec<(String, crate::sink::redo_meta::LogMeta)>,
) -> (crate::dispatcher::DispatcherManager, Env) {
    use crate::effects::{ObjectContent, StorageRequest};
    let mut env = Env::new(0);
    let mut dm = crate::dispatcher::DispatcherManager::new(cf(), n(0), redo_config(), 1);
    let (_, o) = dm_handle(&mut dm, &mut env, 0, redo_bootstrap_req(start, None, Some(tr), EPOCH));
    let list = o
        .storage
        .iter()
        .find_map(|r| match r {
            StorageRequest::ListRedoMeta { op_id, .. } => Some(*op_id),
            _ => None,
        })
        .expect("the meta walks the storage");
    dm.on_redo_meta_listed(&mut env.ctx(), list, Ok(found));
    let o = env.take();
    let put = o
        .storage
        .iter()
        .find_map(|r| match r {
            StorageRequest::Put { op_id, content: ObjectContent::RedoMeta(_), .. } => Some(*op_id),
            _ => None,
        })
        .expect("the init meta is written");
    dm.on_storage_result(&mut env.ctx(), put, Ok(()));
    env.take();
    (dm, env)
}

/// One `bgFlushMeta` tick with its write completed; the meta it wrote, if any.
pub fn redo_meta_tick(
    dm: &mut crate::dispatcher::DispatcherManager,
    env: &mut Env,
) -> Option<crate::sink::redo_meta::LogMeta> {
    use crate::effects::{ObjectContent, StorageRequest};
    dm.flush_redo_meta(&mut env.ctx());
    let o = env.take();
    let (op, m) = o.storage.iter().find_map(|r| match r {
        StorageRequest::Put { op_id, content: ObjectContent::RedoMeta(m), .. } => Some((*op_id, *m)),
        _ => None,
    })?;
    dm.on_storage_result(&mut env.ctx(), op, Ok(()));
    env.take();
    Some(m)
}
