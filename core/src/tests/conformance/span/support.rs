//! Builders shared by the span group: a span controller set up like TiCDC's
//! `newControllerForCheckpointTsTrackerTest` / `newControllerWithCheckerForTest`, and a
//! split-span checker set up like `newTestSplitChecker` with the spans of
//! `createTestSplitSpanReplications`.
//!
//! Go's node IDs `"node1"`, `"node2"`, `"node3"` are `n(1)`, `n(2)`, `n(3)`; `"target"`,
//! `"dest"` and the maintainer's own node are spelled out where they are used.

use crate::tests::harness::*;

use crate::config::SchedulerConfig;
use crate::maintainer::span_controller::{ReplicaState, SpanController, SpanReplication};
use crate::maintainer::split_balance::*;
use crate::messages::*;
use crate::types::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;

// ---------------------------------------------------------------- span controller

/// The table trigger's dispatcher ID in the controller tests.
pub const DDL_ID: DispatcherId = DispatcherId(1);

/// `NewController` with a Working DDL span on node1 at checkpoint 1. `across`:
/// `EnableTableAcrossNodes` (`newControllerWithCheckerForTest` sets it).
pub fn controller(across: bool) -> SpanController {
    let cfg = SchedulerConfig { enable_table_across_nodes: across, ..Default::default() };
    SpanController::new(DDL_ID, n(1), 1, cfg)
}

/// `NewSpanReplication` of a whole table: Absent, no node, checkpoint `cp`.
pub fn span_rep(id: u64, schema: SchemaId, table: TableId, cp: Ts) -> SpanReplication {
    SpanReplication {
        id: d(id),
        span: TableSpan::full(table),
        schema_id: schema,
        node: None,
        state: ReplicaState::Absent,
        checkpoint_ts: cp,
        last_state: None,
        block_state: None,
    }
}

/// `NewWorkingSpanReplication` + `AddReplicatingSpan`: Replicating on `node`.
pub fn add_replicating(sc: &mut SpanController, mut r: SpanReplication, node: NodeId) {
    r.node = Some(node);
    r.state = ReplicaState::Replicating;
    r.last_state = Some(ComponentState::Working);
    sc.insert(r);
}

/// `AddSchedulingReplicaSet`: inserted and bound to `node` (Scheduling).
pub fn add_scheduling(sc: &mut SpanController, r: SpanReplication, node: NodeId) {
    let id = r.id;
    sc.insert(r);
    sc.bind_to_node(&id, node);
}

/// `GetMinCheckpointTsForNonReplicatingSpans(cur)`: the tracked minimum if below `cur`.
pub fn min_non_replicating(sc: &SpanController, cur: Ts) -> Ts {
    sc.min_non_replicating_checkpoint().filter(|t| *t < cur).unwrap_or(cur)
}

/// A Working status with checkpoint `cp`.
pub fn working(id: DispatcherId, cp: Ts) -> TableSpanStatus {
    st(id, ComponentState::Working, cp)
}

/// Tasks in `state`, the DDL span not counted (`GetAbsentSize`, `GetSchedulingSize`,
/// `GetReplicatingSize`: TiCDC keeps the DDL span out of those sets).
pub fn count_state(sc: &SpanController, state: ReplicaState) -> usize {
    sc.tasks.values().filter(|r| r.id != sc.ddl_span_id && r.state == state).count()
}

/// `GetTaskSizePerNode`: non-DDL tasks per node.
pub fn task_size_per_node(sc: &SpanController) -> std::collections::BTreeMap<NodeId, usize> {
    let mut m = std::collections::BTreeMap::new();
    for r in sc.tasks.values().filter(|r| r.id != sc.ddl_span_id) {
        if let Some(n) = r.node {
            *m.entry(n).or_insert(0) += 1;
        }
    }
    m
}

/// `RemoveByTableIDs`: every task of the tables (the maintainer's table-drop path).
pub fn remove_by_table_ids(sc: &mut SpanController, tables: &[TableId]) {
    for t in tables {
        let ids: Vec<DispatcherId> = sc.tasks_of_table(*t).iter().map(|r| r.id).collect();
        for id in ids {
            sc.remove(&id);
        }
    }
}

/// `RemoveBySchemaID`: every task of the schema (the DDL span excluded).
pub fn remove_by_schema_id(sc: &mut SpanController, schema: SchemaId) {
    let ids: Vec<DispatcherId> = sc.tasks_of_schema(schema).iter().map(|r| r.id).collect();
    for id in ids {
        sc.remove(&id);
    }
}

/// A dispatcher-ID generator starting at `from`.
pub fn id_gen(from: u64) -> impl FnMut() -> DispatcherId {
    let mut next = from;
    move || {
        next += 1;
        DispatcherId(next)
    }
}

// ---------------------------------------------------------------- split-span checker

/// The table of `createTestSplitSpanReplications(cfID, 100000, n)`.
pub const GO_TABLE: TableId = 100_000;
/// The PD clock of the checker tests (ms).
pub const NOW_MS: u64 = 1_000_000_000;

/// `SetEasyThresholdForTest` (`maintainer/replica/split_span_checker.go:1273`) with
/// `MinTrafficPercentage: 0.8`, `MaxTrafficPercentage: 1.2` as every checker test sets.
pub fn easy_tuning() -> CheckerTuning {
    CheckerTuning {
        min_traffic_balance_threshold: 1.0,
        max_merge_lag_ms: 120_000,
        merge_check_threshold: 1,
        min_traffic_percentage: 0.8,
        max_traffic_percentage: 1.2,
    }
}

/// `createTestSplitSpanReplications`: `count` contiguous spans of [`GO_TABLE`] with start
/// ts 1 (so a huge lag until a test sets a recent checkpoint); node1 until a test sets
/// another (every test sets the node before it checks).
pub fn split_reps(count: usize) -> Vec<GroupSpan> {
    split_span_evenly(&TableSpan::full(GO_TABLE), count as u64)
        .into_iter()
        .enumerate()
        .map(|(i, span)| GroupSpan { id: d(1000 + i as u64), span, node: n(1), regions: 0, checkpoint_ts: 1 })
        .collect()
}

/// `newTestSplitChecker` + `AddReplica` of every span.
pub fn new_checker(spans: &[GroupSpan]) -> SplitGroupChecker {
    let mut c = SplitGroupChecker { tuning: easy_tuning(), ..Default::default() };
    for s in spans {
        c.spans.insert(s.id, SpanTraffic::default());
    }
    c
}

/// Sets a span's `trafficScore` and `lastThreeTraffic` as the Go tests do by hand.
pub fn set_traffic(c: &mut SplitGroupChecker, id: DispatcherId, score: u32, last_three: [f64; 3]) {
    let s = c.spans.get_mut(&id).expect("span added");
    s.score = score;
    s.last_three = last_three;
}

/// `replica.UpdateStatus` with a checkpoint 10 s before the PD clock.
pub fn low_lag(spans: &mut [GroupSpan]) {
    for s in spans {
        s.checkpoint_ts = ts_from_ms(NOW_MS - 10_000);
    }
}

/// The scheduler config fields of a checker test.
pub struct CheckCfg {
    pub write_threshold: u64,
    pub region_threshold: u64,
    pub balance_score_threshold: u32,
}

/// `checker.Check(batch)` with the alive nodes `alive`.
pub fn check(
    c: &mut SplitGroupChecker,
    spans: &[GroupSpan],
    alive: &[u32],
    cfg: &CheckCfg,
    batch: usize,
) -> Vec<SplitCheckResult> {
    let alive: BTreeSet<NodeId> = nodes(alive);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    c.check(
        &GroupCheck {
            table: GO_TABLE,
            spans,
            alive: &alive,
            region_threshold: cfg.region_threshold,
            write_threshold: cfg.write_threshold,
            balance_score_threshold: cfg.balance_score_threshold,
            now_ms: NOW_MS,
            batch,
        },
        &mut rng,
    )
}

/// The span a Split result splits.
pub fn split_of(r: &SplitCheckResult) -> Option<DispatcherId> {
    match r {
        SplitCheckResult::Split { id, .. } => Some(*id),
        _ => None,
    }
}

/// The spans a Merge result merges.
pub fn merge_of(r: &SplitCheckResult) -> Option<Vec<DispatcherId>> {
    match r {
        SplitCheckResult::Merge { ids, .. } => Some(ids.clone()),
        _ => None,
    }
}

/// The spans and target of a Move result.
pub fn move_of(r: &SplitCheckResult) -> Option<(Vec<DispatcherId>, NodeId)> {
    match r {
        SplitCheckResult::Move { ids, target, .. } => Some((ids.clone(), *target)),
        _ => None,
    }
}
