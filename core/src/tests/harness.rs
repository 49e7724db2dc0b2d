//! Shared test harness: a deterministic `Ctx` (seeded ChaCha8Rng), a schema stub with
//! tables and a DDL history, message builders and a maintainer driven through bootstrap.

use crate::bugs::{Bug, Bugs};
use crate::config::ChangefeedConfig;
use crate::dispatcher::DispatcherManager;
use crate::effects::*;
use crate::maintainer::operator::{remove_request, Operator};
use crate::maintainer::span_controller::ReplicaState;
use crate::maintainer::Maintainer;
use crate::messages::*;
use crate::types::*;
use crate::upstream::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

pub const EPOCH: Epoch = 5;
/// Start checkpoint of the maintainer and start ts of its table trigger.
pub const START: Ts = 100;
pub const SCHEMA: SchemaId = 1;

pub fn cf() -> ChangefeedId {
    ChangefeedId("cf".into())
}
pub fn n(i: u32) -> NodeId {
    NodeId(i)
}
pub fn d(i: u64) -> DispatcherId {
    DispatcherId(i)
}
pub fn nodes(v: &[u32]) -> BTreeSet<NodeId> {
    v.iter().map(|i| NodeId(*i)).collect()
}

// ---------------------------------------------------------------- Ctx

/// Everything a `Ctx` borrows, owned by the test.
pub struct Env {
    pub now: u64,
    pub node: NodeId,
    pub rng: ChaCha8Rng,
    pub bugs: Bugs,
    pub fps: Failpoints,
    pub out: Out,
    /// The downstream's `ddl_ts` rows the managers read (with syncpoints on).
    pub ddl_ts: TestDdlTs,
    /// `Inline` (the default): batches go out at the end of the step that filled them;
    /// `Deferred`: they wait for their window's continuation, which the test runs.
    pub continuations: ContinuationMode,
}

/// `ddl_ts` rows set by a test.
#[derive(Default)]
pub struct TestDdlTs {
    pub rows: BTreeMap<TableId, crate::sink::ddl_ts::DdlTsRow>,
    pub sync_point: Option<crate::sink::ddl_ts::DdlTsRow>,
}
impl crate::sink::ddl_ts::DdlTsView for TestDdlTs {
    fn table_row(&self, t: TableId) -> Option<crate::sink::ddl_ts::DdlTsRow> {
        self.rows.get(&t).copied()
    }
    fn syncpoint_row(&self) -> Option<crate::sink::ddl_ts::DdlTsRow> {
        self.sync_point
    }
}

impl Env {
    pub fn new(node: u32) -> Self {
        Env {
            now: 0,
            node: NodeId(node),
            rng: ChaCha8Rng::seed_from_u64(7),
            bugs: Bugs::none(),
            fps: Failpoints::default(),
            out: Out::default(),
            ddl_ts: TestDdlTs::default(),
            continuations: ContinuationMode::Inline,
        }
    }
    pub fn with_bug(mut self, b: Bug) -> Self {
        self.bugs = self.bugs.with(b);
        self
    }
    pub fn with_fix(mut self, f: crate::bugs::Fix) -> Self {
        self.bugs = self.bugs.with_fix(f);
        self
    }
    pub fn ctx(&mut self) -> Ctx<'_> {
        Ctx {
            now_ms: self.now,
            node: self.node,
            rng: &mut self.rng,
            bugs: &self.bugs,
            failpoints: &self.fps,
            out: &mut self.out,
            ddl_ts: &self.ddl_ts,
            continuations: self.continuations,
        }
    }
    pub fn take(&mut self) -> Out {
        std::mem::take(&mut self.out)
    }
    pub fn fp_on(&mut self, name: &str) {
        self.fps.0.insert(name.to_string());
    }
    pub fn fp_off(&mut self, name: &str) {
        self.fps.0.remove(name);
    }
}

/// Whether `out` holds a trace event of this kind.
pub fn traced(out: &Out, kind: &str) -> bool {
    out.trace.iter().any(|t| t.kind == kind)
}

/// Schedule requests in `out`, with their destination.
pub fn schedule_reqs(out: &Out) -> Vec<(NodeId, ScheduleDispatcherRequest)> {
    out.msgs
        .iter()
        .filter_map(|e| match &e.msg {
            Message::ScheduleDispatcherRequest { req, .. } => Some((e.to, req.clone())),
            _ => None,
        })
        .collect()
}

/// Dispatcher statuses of heartbeat responses in `out`, with their destination.
pub fn hb_statuses(out: &Out) -> Vec<(NodeId, DispatcherStatus)> {
    out.msgs
        .iter()
        .filter_map(|e| match &e.msg {
            Message::HeartBeatResponse { statuses, .. } => {
                Some(statuses.iter().map(|s| (e.to, s.clone())).collect::<Vec<_>>())
            }
            _ => None,
        })
        .flatten()
        .collect()
}

/// Actions (Write/Pass) sent in `out`: (node, kind, commit ts, dispatchers).
pub fn actions(out: &Out) -> Vec<(NodeId, ActionKind, Ts, Vec<DispatcherId>)> {
    hb_statuses(out)
        .into_iter()
        .filter_map(|(to, s)| {
            let a = s.action?;
            let ids = match s.influenced {
                InfluencedDispatchers::Normal(v) => v,
                _ => vec![],
            };
            Some((to, a.action, a.commit_ts, ids))
        })
        .collect()
}

pub fn acks(out: &Out) -> Vec<(NodeId, Ts, Vec<DispatcherId>)> {
    hb_statuses(out)
        .into_iter()
        .filter_map(|(to, s)| {
            let a = s.ack?;
            let ids = match s.influenced {
                InfluencedDispatchers::Normal(v) => v,
                _ => vec![],
            };
            Some((to, a.commit_ts, ids))
        })
        .collect()
}

// ---------------------------------------------------------------- schema

pub fn table_info(id: TableId, schema: SchemaId) -> TableInfo {
    TableInfo {
        table_id: id,
        schema_id: schema,
        schema_name: format!("db{}", schema),
        name: format!("t{}", id),
        splitable: true,
    }
}

/// A schema store stub: tables with creation/drop ts, and a DDL history.
#[derive(Default)]
pub struct TestSchema {
    pub tables: Vec<(TableInfo, Ts, Option<Ts>)>,
    pub ddls: Vec<DdlEvent>,
    pub regions: BTreeMap<TableId, u64>,
    /// `getAllPhysicalTablesGCFastFail` on the maintainer's node: the table load at
    /// bootstrap fails with `ErrSnapshotLostByGC`.
    pub gc_fast_fail: bool,
}

impl TestSchema {
    /// Tables that exist since ts 1 (before every start ts used in the tests).
    pub fn with_tables(ids: &[TableId]) -> Self {
        let mut s = TestSchema::default();
        for id in ids {
            s.tables.push((table_info(*id, SCHEMA), 1, None));
        }
        s
    }
    /// A table created by a CREATE TABLE committed at `ts` (recorded in the history).
    pub fn create_at(mut self, id: TableId, ts: Ts) -> Self {
        self.tables.push((table_info(id, SCHEMA), ts, None));
        self.ddls.push(create_table_ddl(id, ts));
        self
    }
    /// A table dropped at `ts` (existing since ts 1).
    pub fn dropped_at(mut self, id: TableId, ts: Ts) -> Self {
        self.tables.push((table_info(id, SCHEMA), 1, Some(ts)));
        self
    }
}

impl SchemaView for TestSchema {
    fn tables_at(&self, ts: Ts) -> Vec<TableInfo> {
        self.tables
            .iter()
            .filter(|(_, c, dr)| *c <= ts && dr.map(|x| x > ts).unwrap_or(true))
            .map(|(t, _, _)| t.clone())
            .collect()
    }
    fn ddl_history(&self, from: Ts, to: Ts) -> Vec<DdlEvent> {
        self.ddls.iter().filter(|e| e.commit_ts > from && e.commit_ts <= to).cloned().collect()
    }
    fn region_count(&self, t: TableId) -> u64 {
        self.regions.get(&t).copied().unwrap_or(1)
    }
    fn get_all_physical_tables(&self, snap_ts: Ts) -> Result<Vec<TableInfo>, SchemaStoreError> {
        if self.gc_fast_fail {
            return Err(SchemaStoreError::SnapshotLostByGC { snap_ts: 0, gc_ts: 1 });
        }
        Ok(self.tables_at(snap_ts))
    }
}

pub fn normal(tables: &[TableId]) -> InfluencedTables {
    InfluencedTables { influence_type: InfluenceType::Normal, table_ids: tables.to_vec(), schema_id: SCHEMA }
}
pub fn db(schema: SchemaId) -> InfluencedTables {
    InfluencedTables { influence_type: InfluenceType::Db, table_ids: vec![], schema_id: schema }
}
pub fn table_ref(id: TableId) -> TableRef {
    TableRef { table_id: id, schema_id: SCHEMA, splitable: true }
}

pub fn create_table_ddl(id: TableId, ts: Ts) -> DdlEvent {
    DdlEvent {
        commit_ts: ts,
        kind: DdlKind::CreateTable,
        schema_id: SCHEMA,
        schema_name: format!("db{}", SCHEMA),
        table_id: id,
        table_name: format!("t{}", id),
        query: format!("CREATE TABLE t{}", id),
        blocked_tables: normal(&[DDL_SPAN_TABLE_ID]),
        need_dropped_tables: None,
        need_added_tables: vec![table_ref(id)],
        updated_schemas: vec![],
    }
}

/// A block state as a dispatcher reports it.
pub fn block(ts: Ts, blocked: InfluencedTables, stage: BlockStage) -> BlockState {
    BlockState {
        is_blocked: stage != BlockStage::None,
        block_ts: ts,
        block_tables: Some(blocked),
        need_dropped_tables: None,
        need_added_tables: vec![],
        updated_schemas: vec![],
        is_sync_point: false,
        stage,
    }
}

// ---------------------------------------------------------------- messages

pub fn st(id: DispatcherId, state: ComponentState, cp: Ts) -> TableSpanStatus {
    TableSpanStatus { mode: Mode::Default, id, state, checkpoint_ts: cp, event_size_per_second: 0 }
}

pub fn bspan(id: DispatcherId, span: TableSpan, state: ComponentState, cp: Ts) -> BootstrapTableSpan {
    BootstrapTableSpan { mode: Mode::Default, id, schema_id: SCHEMA, span, state, checkpoint_ts: cp, block_state: None }
}

pub fn halves(t: TableId) -> (TableSpan, TableSpan) {
    let v = split_span_evenly(&TableSpan::full(t), 2);
    (v[0], v[1])
}

pub fn dconfig(id: DispatcherId, span: TableSpan, start: Ts) -> DispatcherConfig {
    DispatcherConfig {
        mode: Mode::Default,
        span,
        start_ts: start,
        dispatcher_id: id,
        schema_id: SCHEMA,
        skip_dml_as_start_ts: false,
    }
}

pub fn create_req(
    id: DispatcherId,
    span: TableSpan,
    start: Ts,
    op: OperatorType,
    epoch: Epoch,
) -> ScheduleDispatcherRequest {
    ScheduleDispatcherRequest {
        config: dconfig(id, span, start),
        action: ScheduleAction::Create,
        operator_type: op,
        maintainer_epoch: epoch,
    }
}

pub fn remove_req(id: DispatcherId, span: TableSpan, op: OperatorType, epoch: Epoch) -> ScheduleDispatcherRequest {
    remove_request(id, span, op, epoch)
}

pub fn merge_req(sources: &[DispatcherId], merged: DispatcherId, epoch: Epoch) -> MergeDispatcherRequest {
    MergeDispatcherRequest {
        mode: Mode::Default,
        dispatcher_ids: sources.to_vec(),
        merged_dispatcher_id: merged,
        maintainer_epoch: epoch,
    }
}

pub fn sched(req: ScheduleDispatcherRequest) -> Message {
    Message::ScheduleDispatcherRequest { cf: cf(), req }
}

pub fn bootstrap_req(start: Ts, trigger: Option<DispatcherId>, epoch: Epoch) -> Message {
    Message::MaintainerBootstrapRequest {
        table_trigger_redo_dispatcher_id: None,
        cf: cf(),
        config: ChangefeedConfig::default(),
        start_ts: start,
        table_trigger_event_dispatcher_id: trigger,
        is_new_changefeed: false,
        maintainer_epoch: epoch,
    }
}

pub fn bootstrap_resp(
    spans: Vec<BootstrapTableSpan>,
    checkpoint_ts: Ts,
    operators: Vec<ScheduleDispatcherRequest>,
    merges: Vec<MergeDispatcherRequest>,
) -> Message {
    Message::MaintainerBootstrapResponse {
        redo_checkpoint_ts: 0,
        cf: cf(),
        spans,
        checkpoint_ts,
        operators,
        merge_operators: merges,
        err: None,
        maintainer_epoch: EPOCH,
    }
}

pub fn heartbeat(cp: Ts, seq: u64, statuses: Vec<TableSpanStatus>) -> Message {
    Message::HeartBeatRequest {
        redo_watermark: None,
        cf: cf(),
        watermark: Watermark { checkpoint_ts: cp, resolved_ts: cp, seq },
        statuses,
        complete_status: false,
        err: None,
    }
}

pub fn block_statuses(v: Vec<(DispatcherId, BlockState)>) -> Message {
    Message::BlockStatusRequest {
        mode: Mode::Default,
        cf: cf(),
        statuses: v.into_iter().map(|(id, state)| TableSpanBlockStatus { mode: Mode::Default, id, state }).collect(),
    }
}

// ---------------------------------------------------------------- maintainer

/// What one node answers to the bootstrap request.
#[derive(Default, Clone)]
pub struct NodeReport {
    pub spans: Vec<BootstrapTableSpan>,
    pub operators: Vec<ScheduleDispatcherRequest>,
    pub merges: Vec<MergeDispatcherRequest>,
}

impl NodeReport {
    pub fn spans(spans: Vec<BootstrapTableSpan>) -> Self {
        NodeReport { spans, ..Default::default() }
    }
}

/// A maintainer on node 0 (epoch [`EPOCH`], checkpoint [`START`]) and its environment.
pub struct MH {
    pub env: Env,
    pub m: Maintainer,
    pub schema: TestSchema,
}

impl MH {
    pub fn new(alive: &[u32], schema: TestSchema) -> Self {
        Self::with_env(Env::new(0), alive, schema)
    }
    pub fn with_env(env: Env, alive: &[u32], schema: TestSchema) -> Self {
        Self::with_config(env, alive, schema, ChangefeedConfig::default())
    }
    pub fn with_config(mut env: Env, alive: &[u32], schema: TestSchema, config: ChangefeedConfig) -> Self {
        let m = Maintainer::new(&mut env.ctx(), cf(), config, START, EPOCH, false, nodes(alive));
        env.take();
        MH { env, m, schema }
    }
    pub fn ddl(&self) -> DispatcherId {
        self.m.pipe.sc.ddl_span_id
    }
    pub fn handle(&mut self, from: u32, msg: Message) -> Out {
        let mut ctx = self.env.ctx();
        self.m.handle_message(&mut ctx, NodeId(from), msg, &self.schema);
        self.env.take()
    }
    /// Node `from` answers the bootstrap; node 0 (the maintainer's node) hosts the
    /// trigger and reports its start ts [`START`].
    pub fn respond(&mut self, from: u32, r: NodeReport) -> Out {
        let mut spans = r.spans;
        let cp = if from == 0 {
            spans.insert(0, bspan(self.ddl(), TableSpan::ddl_span(), ComponentState::Working, START));
            START
        } else {
            0
        };
        self.handle(from, bootstrap_resp(spans, cp, r.operators, r.merges))
    }
    /// Every node answers (missing nodes answer empty), then the post-bootstrap completes.
    /// Returns the output of the bootstrap (traces of `FinishBootstrap`).
    pub fn bootstrap(&mut self, reports: Vec<(u32, NodeReport)>) -> Out {
        let mut reports: BTreeMap<u32, NodeReport> = reports.into_iter().collect();
        let alive: Vec<u32> = self.m.alive.iter().map(|n| n.0).collect();
        let mut all = Out::default();
        for a in alive {
            let o = self.respond(a, reports.remove(&a).unwrap_or_default());
            all.msgs.extend(o.msgs);
            all.trace.extend(o.trace);
        }
        assert_eq!(self.m.state, crate::maintainer::MaintainerState::Working, "bootstrap finished: {:?}", all.trace);
        self.handle(
            0,
            Message::MaintainerPostBootstrapResponse {
                cf: cf(),
                table_trigger_event_dispatcher_id: self.ddl(),
                err: None,
                maintainer_epoch: EPOCH,
            },
        );
        assert!(self.m.initialized());
        all
    }
    pub fn execute(&mut self) -> Out {
        let mut ctx = self.env.ctx();
        self.m.execute_operators(&mut ctx);
        self.env.take()
    }
    /// A membership change seen by the maintainer (`onNodeChanged`).
    pub fn node_change(&mut self, alive: &[u32]) -> Out {
        let mut ctx = self.env.ctx();
        self.m.on_node_change(&mut ctx, &nodes(alive), &self.schema);
        self.env.take()
    }
    pub fn tick(&mut self) -> Out {
        let mut ctx = self.env.ctx();
        self.m.on_tick(&mut ctx, &self.schema);
        self.env.take()
    }
    pub fn state(&self, id: DispatcherId) -> Option<(ReplicaState, Option<NodeId>)> {
        self.m.pipe.sc.get(&id).map(|r| (r.state, r.node))
    }
    pub fn op(&self, id: DispatcherId) -> Option<&Operator> {
        self.m.pipe.oc.get(&id)
    }
    /// Dispatcher IDs of the tasks of a table.
    pub fn table_tasks(&self, t: TableId) -> Vec<DispatcherId> {
        self.m.pipe.sc.tasks_of_table(t).iter().map(|r| r.id).collect()
    }
    pub fn assert_partition(&self, t: TableId) {
        assert_eq!(self.m.pipe.sc.table_partition_problems(t), (vec![], vec![]), "table {} is not a partition", t);
    }
}

// ---------------------------------------------------------------- dispatcher manager

pub fn dm_on(node: u32) -> DispatcherManager {
    DispatcherManager::new(cf(), NodeId(node), ChangefeedConfig::default(), 1)
}

/// Deliver a control message to a manager; returns the reply and the effects.
pub fn dm_handle(dm: &mut DispatcherManager, env: &mut Env, from: u32, msg: Message) -> (Option<Message>, Out) {
    env.node = dm.node;
    let r = dm.handle_control(&mut env.ctx(), NodeId(from), msg);
    (r, env.take())
}

/// Let the event service deliver `events` up to `up_to` and the dispatchers handle them.
pub fn dm_feed(
    dm: &mut DispatcherManager,
    env: &mut Env,
    id: DispatcherId,
    events: Vec<UpstreamEvent>,
    up_to: Ts,
) -> Out {
    dm.feed(id, events, up_to);
    dm.process(&mut env.ctx());
    env.take()
}

pub fn row(table: TableId, key: u64, ts: Ts) -> RowChange {
    RowChange { table_id: table, key, commit_ts: ts, op: RowOp::Insert, value: key }
}

/// The op ID of the first storage Put a step issued.
pub fn first_put(o: &Out) -> Option<u64> {
    o.storage.iter().find_map(|r| match r {
        StorageRequest::Put { op_id, .. } => Some(*op_id),
        _ => None,
    })
}
