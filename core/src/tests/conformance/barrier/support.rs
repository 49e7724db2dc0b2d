//! Builders for the barrier group: a span controller, an operator controller and a
//! barrier wired together the way TiCDC's barrier tests build them (`span.NewController`
//! with a Working table trigger on node1 at checkpoint 1, `operator.NewOperatorController`,
//! `NewBarrier`), with the barrier's own entry points.

use crate::config::SchedulerConfig;
use crate::maintainer::barrier::{Barrier, BarrierCtx, BarrierEvent, BarrierFixes, BarrierOut, EventKey};
use crate::maintainer::operator::OperatorController;
use crate::maintainer::span_controller::{ReplicaState, SpanController, SpanReplication};
use crate::messages::*;
use crate::tests::harness::TestSchema;
use crate::types::*;
use crate::upstream::TableInfo;
use std::collections::BTreeSet;

pub const NODE1: NodeId = NodeId(1);
pub const NODE2: NodeId = NodeId(2);
/// The table trigger's dispatcher ID.
pub const DDL: DispatcherId = DispatcherId(0xdd1);

/// The barrier and the controllers it works on.
pub struct World {
    pub sc: SpanController,
    pub oc: OperatorController,
    pub barrier: Barrier,
    pub schema: TestSchema,
    /// The node manager's alive nodes (`getAllNodes`).
    pub alive: BTreeSet<NodeId>,
    pub now: u64,
    /// b813e76f9's `HandleStatus` does not check which node sent a status; the core
    /// does by default (PR #6070). Cases whose Go test sends a status from another node
    /// than the dispatcher's, or for a dispatcher bound to no node, set this.
    pub accept_nonowner: bool,
    /// Candidate fixes switched on (none: TiCDC's behaviour).
    pub fixes: BarrierFixes,
    next_id: u64,
}

impl World {
    /// `splitTableEnabled` is the span controller's table-across-nodes switch.
    pub fn new(split_table_enabled: bool) -> Self {
        let cfg = SchedulerConfig { enable_table_across_nodes: split_table_enabled, ..SchedulerConfig::default() };
        World {
            sc: SpanController::new(DDL, NODE1, 1, cfg),
            oc: OperatorController::new(),
            barrier: Barrier::default(),
            schema: TestSchema::default(),
            alive: [NODE1].into_iter().collect(),
            // Far from 0, so "two seconds ago" is expressible.
            now: 100_000,
            accept_nonowner: false,
            fixes: BarrierFixes::default(),
            next_id: 1,
        }
    }

    pub fn with_alive(mut self, nodes: &[NodeId]) -> Self {
        self.alive = nodes.iter().copied().collect();
        self
    }

    /// `AddNewTable(commonEvent.Table{SchemaID, TableID}, startTs)`; the new task IDs.
    pub fn add_new_table(&mut self, schema_id: SchemaId, table_id: TableId, start_ts: Ts) -> Vec<DispatcherId> {
        let info = TableInfo {
            table_id,
            schema_id,
            schema_name: format!("db{}", schema_id),
            name: format!("t{}", table_id),
            splitable: true,
        };
        let next = &mut self.next_id;
        let mut new_id = || {
            *next += 1;
            DispatcherId(*next)
        };
        self.sc.add_new_table(&info, start_ts, 1, &mut new_id)
    }

    /// `replica.NewSpanReplication` + `AddReplicatingSpan`: a task for `span`.
    pub fn add_span(&mut self, schema_id: SchemaId, span: TableSpan, start_ts: Ts) -> DispatcherId {
        self.next_id += 1;
        let id = DispatcherId(self.next_id);
        self.sc.insert(SpanReplication {
            id,
            span,
            schema_id,
            node: None,
            state: ReplicaState::Replicating,
            checkpoint_ts: start_ts,
            last_state: None,
            block_state: None,
        });
        id
    }

    /// `BindSpanToNode(.., node, stm)` then `MarkSpanReplicating(stm)`.
    pub fn bind_replicating(&mut self, id: DispatcherId, node: NodeId) {
        self.sc.bind_to_node(&id, node);
        self.sc.mark_replicating(&id);
    }

    /// Tables `tables` of schema 1, each one span from `start_ts`, replicating on node1.
    pub fn replicating_tables(&mut self, tables: std::ops::Range<TableId>, start_ts: Ts) -> Vec<DispatcherId> {
        tables
            .map(|t| {
                let id = self.add_new_table(1, t, start_ts)[0];
                self.bind_replicating(id, NODE1);
                id
            })
            .collect()
    }

    /// The only task of a table (`GetTasksByTableID(t)[0]`).
    pub fn task_of(&self, t: TableId) -> DispatcherId {
        self.sc.tasks_of_table(t)[0].id
    }

    /// `HandleStatus(from, BlockStatusRequest{statuses})`.
    pub fn handle(&mut self, from: NodeId, statuses: Vec<(DispatcherId, BlockState)>) -> BarrierOut {
        let statuses: Vec<TableSpanBlockStatus> =
            statuses.into_iter().map(|(id, state)| TableSpanBlockStatus { mode: Mode::Default, id, state }).collect();
        let mut out = BarrierOut::default();
        let next = &mut self.next_id;
        let mut new_id = || {
            *next += 1;
            DispatcherId(*next)
        };
        let mut bc = BarrierCtx {
            sc: &mut self.sc,
            oc: &mut self.oc,
            schema: &self.schema,
            alive: &self.alive,
            now: self.now,
            accept_nonowner: self.accept_nonowner,
            fixes: self.fixes,
            new_id: &mut new_id,
        };
        self.barrier.handle_request(from, &statuses, &mut bc, &mut out);
        out
    }

    /// `Barrier.Resend()`.
    pub fn resend(&mut self) -> BarrierOut {
        let mut out = BarrierOut::default();
        let next = &mut self.next_id;
        let mut new_id = || {
            *next += 1;
            DispatcherId(*next)
        };
        let mut bc = BarrierCtx {
            sc: &mut self.sc,
            oc: &mut self.oc,
            schema: &self.schema,
            alive: &self.alive,
            now: self.now,
            accept_nonowner: self.accept_nonowner,
            fixes: self.fixes,
            new_id: &mut new_id,
        };
        self.barrier.resend(&mut bc, &mut out);
        out
    }

    /// Run `f` with a barrier context (for the barrier's event-level entry points).
    pub fn with_ctx<R>(
        &mut self,
        f: impl FnOnce(&mut Barrier, &mut BarrierCtx, &mut BarrierOut) -> R,
    ) -> (R, BarrierOut) {
        let mut out = BarrierOut::default();
        let next = &mut self.next_id;
        let mut new_id = || {
            *next += 1;
            DispatcherId(*next)
        };
        let mut bc = BarrierCtx {
            sc: &mut self.sc,
            oc: &mut self.oc,
            schema: &self.schema,
            alive: &self.alive,
            now: self.now,
            accept_nonowner: self.accept_nonowner,
            fixes: self.fixes,
            new_id: &mut new_id,
        };
        let r = f(&mut self.barrier, &mut bc, &mut out);
        (r, out)
    }

    /// `NewBlockEvent(..)` registered in the barrier's event map (the Go event tests
    /// drive a lone event; here it is the barrier's only event).
    pub fn new_event(&mut self, st: &BlockState) -> EventKey {
        let key = (st.block_ts, st.is_sync_point);
        self.barrier.events.insert(key, BarrierEvent::new(key, st));
        key
    }

    pub fn ev(&self, key: EventKey) -> &BarrierEvent {
        &self.barrier.events[&key]
    }
    pub fn ev_mut(&mut self, key: EventKey) -> &mut BarrierEvent {
        self.barrier.events.get_mut(&key).unwrap()
    }

    /// Absent tasks (`GetAbsentSize`).
    pub fn absent_size(&self) -> usize {
        self.sc.absent().len()
    }
    /// Replicating table tasks (`GetReplicatingSize`, the trigger not counted).
    pub fn replicating_size(&self) -> usize {
        self.sc.tasks.values().filter(|r| r.id != DDL && r.state == ReplicaState::Replicating).count()
    }
}

/// The statuses of the answer to `node` (`msgs[i].Message[0].DispatcherStatuses`); empty
/// if the barrier sent it nothing.
pub fn resp(out: &BarrierOut, node: NodeId) -> Vec<DispatcherStatus> {
    out.responses.get(&node).cloned().unwrap_or_default()
}

/// Nodes that get a message.
pub fn targets(out: &BarrierOut) -> Vec<NodeId> {
    out.responses.iter().filter(|(_, v)| !v.is_empty()).map(|(n, _)| *n).collect()
}

/// The dispatcher IDs of a Normal `InfluencedDispatchers`.
pub fn ids(s: &DispatcherStatus) -> Vec<DispatcherId> {
    match &s.influenced {
        InfluencedDispatchers::Normal(v) => v.clone(),
        _ => vec![],
    }
}

pub fn normal_tables(t: &[TableId]) -> InfluencedTables {
    InfluencedTables { influence_type: InfluenceType::Normal, table_ids: t.to_vec(), schema_id: 0 }
}
pub fn db_tables(schema: SchemaId) -> InfluencedTables {
    InfluencedTables { influence_type: InfluenceType::Db, table_ids: vec![], schema_id: schema }
}
pub fn all_tables() -> InfluencedTables {
    InfluencedTables { influence_type: InfluenceType::All, table_ids: vec![], schema_id: 0 }
}
pub fn table(schema_id: SchemaId, table_id: TableId) -> TableRef {
    TableRef { table_id, schema_id, splitable: false }
}

/// A `heartbeatpb.State`: `IsBlocked` with no stage is WAITING here (the core keys the
/// non-blocking path on stage NONE).
pub fn state(ts: Ts, blocked: Option<InfluencedTables>, stage: BlockStage) -> BlockState {
    BlockState {
        is_blocked: stage != BlockStage::None,
        block_ts: ts,
        block_tables: blocked,
        need_dropped_tables: None,
        need_added_tables: vec![],
        updated_schemas: vec![],
        is_sync_point: false,
        stage,
    }
}
pub fn waiting(ts: Ts, blocked: InfluencedTables) -> BlockState {
    state(ts, Some(blocked), BlockStage::Waiting)
}
pub fn done(ts: Ts) -> BlockState {
    state(ts, None, BlockStage::Done)
}
pub fn sync_point(mut s: BlockState) -> BlockState {
    s.is_sync_point = true;
    s
}
pub fn with_dropped(mut s: BlockState, d: InfluencedTables) -> BlockState {
    s.need_dropped_tables = Some(d);
    s
}
pub fn with_added(mut s: BlockState, a: Vec<TableRef>) -> BlockState {
    s.need_added_tables = a;
    s
}
