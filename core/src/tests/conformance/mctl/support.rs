//! Helpers of the mctl group (maintainer, its controller and its manager).

use crate::maintainer::span_controller::{ReplicaState, SpanReplication};
use crate::messages::*;
pub use crate::tests::harness::*;
use crate::types::*;

/// Go `node1`, `node2`, `node3`: node 0 hosts the maintainer and its trigger.
pub const NODE1: u32 = 0;
pub const NODE2: u32 = 1;
pub const NODE3: u32 = 2;

fn count(h: &MH, s: ReplicaState) -> usize {
    h.m.pipe.sc.tasks.values().filter(|r| r.id != h.ddl() && r.state == s).count()
}
/// `GetAbsentSize` (the table trigger is not a task of the span controller's sets).
pub fn absent_size(h: &MH) -> usize {
    count(h, ReplicaState::Absent)
}
/// `GetSchedulingSize`.
pub fn scheduling_size(h: &MH) -> usize {
    count(h, ReplicaState::Scheduling)
}
/// `GetReplicatingSize`.
pub fn replicating_size(h: &MH) -> usize {
    count(h, ReplicaState::Replicating)
}
/// `GetTaskSizeByNodeID`.
pub fn node_size(h: &MH, node: u32) -> usize {
    h.m.pipe.sc.tasks_on_node(n(node)).len()
}
/// `OperatorSize`.
pub fn op_size(h: &MH) -> usize {
    h.m.pipe.oc.size()
}
/// Kinds of the running operators, sorted.
pub fn op_kinds(h: &MH) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = h.m.pipe.oc.running().map(|o| o.kind()).collect();
    v.sort();
    v
}
/// The kind of the operator of `id`, if any.
pub fn op_kind(h: &MH, id: DispatcherId) -> Option<&'static str> {
    h.op(id).map(|o| o.kind())
}

/// A maintainer bootstrapped on the given nodes with no table (Go's bare `NewController`),
/// its scheduler configuration changed by `cfg` first.
pub fn controller(alive: &[u32], cfg: impl FnOnce(&mut crate::config::SchedulerConfig)) -> MH {
    let mut h = MH::new(alive, TestSchema::default());
    cfg(&mut h.m.config.scheduler);
    h.m.pipe.sc.cfg = h.m.config.scheduler.clone();
    h.bootstrap(vec![]);
    h
}

/// `AddReplicatingSpan` of a span bound to `node`.
pub fn add_replicating(h: &mut MH, id: DispatcherId, span: TableSpan, node: u32) {
    h.m.pipe.sc.insert(SpanReplication {
        id,
        span,
        schema_id: SCHEMA,
        node: Some(n(node)),
        state: ReplicaState::Replicating,
        checkpoint_ts: 1,
        last_state: Some(ComponentState::Working),
        block_state: None,
    });
}

/// `AddNewTable` (checkpoint `ts`).
pub fn add_new_table(h: &mut MH, table: TableId, ts: Ts) -> Vec<DispatcherId> {
    let regions = h.schema.region_count(table);
    let info = table_info(table, SCHEMA);
    let rng = &mut h.env.rng;
    let mut new_id = || crate::maintainer::new_id_from(rng);
    h.m.pipe.sc.add_new_table(&info, ts, regions, &mut new_id)
}

/// A status as the Go tests send it through `HandleStatus` / `op.Check`.
pub fn status(h: &mut MH, from: u32, id: DispatcherId, state: ComponentState, cp: Ts) {
    h.handle(from, heartbeat(cp, 1, vec![st(id, state, cp)]));
}

/// Run the basic scheduler once.
pub fn basic(h: &mut MH) {
    let mut ctx = h.env.ctx();
    h.m.run_basic_scheduler(&mut ctx);
}
/// Run the balance scheduler once, whatever its next check time.
pub fn balance(h: &mut MH) {
    h.m.pipe.next_balance_check_ms = 0;
    let mut ctx = h.env.ctx();
    h.m.run_balance_scheduler(&mut ctx, &h.schema);
}

/// Drive every running Add operator to completion: send its Create, answer Working.
pub fn finish_adds(h: &mut MH) {
    let out = h.execute();
    for (to, req) in schedule_reqs(&out) {
        if req.action == ScheduleAction::Create {
            status(h, to.0, req.config.dispatcher_id, ComponentState::Working, 10);
        }
    }
    h.execute();
}

use crate::upstream::SchemaView;

// ---------------------------------------------------------------- merge bootstrap env

/// `newMergeBootstrapTestEnv`: one node, table 1 (splittable) with table-across-nodes on.
pub struct MergeEnv {
    pub s1: TableSpan,
    pub s2: TableSpan,
    pub merged: TableSpan,
}
pub const SRC1: DispatcherId = DispatcherId(3001);
pub const SRC2: DispatcherId = DispatcherId(3002);
pub const MERGED: DispatcherId = DispatcherId(3003);

impl MergeEnv {
    pub fn new() -> Self {
        let (s1, s2) = halves(1);
        MergeEnv { s1, s2, merged: TableSpan::full(1) }
    }
    pub fn mh(&self, schema: TestSchema) -> MH {
        self.mh_with(Env::new(0), schema)
    }
    pub fn mh_with(&self, env: Env, schema: TestSchema) -> MH {
        let mut h = MH::with_env(env, &[NODE1], schema);
        h.m.config.scheduler.enable_table_across_nodes = true;
        h.m.pipe.sc.cfg = h.m.config.scheduler.clone();
        h
    }
    pub fn span(&self, id: DispatcherId, span: TableSpan, state: ComponentState) -> BootstrapTableSpan {
        bspan(id, span, state, 10)
    }
    pub fn merge_req(&self) -> MergeDispatcherRequest {
        merge_req(&[SRC1, SRC2], MERGED, EPOCH)
    }
    pub fn standalone_remove(&self, id: DispatcherId, span: TableSpan) -> ScheduleDispatcherRequest {
        remove_req(id, span, OperatorType::Remove, EPOCH)
    }
    /// `FinishBootstrap` with one node's snapshot.
    pub fn boot(
        &self,
        h: &mut MH,
        merges: Vec<MergeDispatcherRequest>,
        spans: Vec<BootstrapTableSpan>,
        operators: Vec<ScheduleDispatcherRequest>,
    ) -> crate::effects::Out {
        h.bootstrap(vec![(NODE1, NodeReport { spans, operators, merges })])
    }
}
