//! Span controller: the maintainer's desired state, one `SpanReplication` task per
//! dispatcher (plus the DDL span), with the Absent / Scheduling / Replicating sets.

use super::books::BooksChanged;
use super::split_balance::{CheckerTuning, SplitGroupChecker};
use crate::assertions::{Assertion as A, Failures};
use crate::config::SchedulerConfig;
use crate::coverage::{hit, Point as P};
use crate::messages::*;
use crate::types::*;
use crate::upstream::TableInfo;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ReplicaState {
    Absent,
    Scheduling,
    Replicating,
}

/// Complete-table spans live in the default group; pieces of a split table in a group
/// of their own (`GenGroupID(GroupTable, tableID)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum GroupId {
    Default,
    Table(TableId),
}

#[derive(Clone, Debug)]
pub struct SpanReplication {
    pub id: DispatcherId,
    pub span: TableSpan,
    pub schema_id: SchemaId,
    pub node: Option<NodeId>,
    pub state: ReplicaState,
    pub checkpoint_ts: Ts,
    pub last_state: Option<ComponentState>,
    pub block_state: Option<BlockState>,
}

impl SpanReplication {
    pub fn group(&self) -> GroupId {
        if self.span.is_full() {
            GroupId::Default
        } else {
            GroupId::Table(self.span.table_id)
        }
    }
}

#[derive(Debug)]
pub struct SpanController {
    pub tasks: BTreeMap<DispatcherId, SpanReplication>,
    pub by_table: BTreeMap<TableId, BTreeSet<DispatcherId>>,
    pub ddl_span_id: DispatcherId,
    pub committed_checkpoint: Ts,
    pub cfg: SchedulerConfig,
    /// The mode of every task here (`NewController(.., mode)`); a redo controller's DDL
    /// span is the redo table trigger.
    pub mode: Mode,
    /// The `ignore-pending-block-start-ts` bug (set by the maintainer from its context):
    /// Creates ignore the task's pending block event.
    pub ignore_pending_block_start_ts: bool,
    /// The split-span checker of every split-table group (`GetNewGroupChecker`: only
    /// with table-across-nodes). A group's checker lives from its first task to its last.
    pub split_checkers: BTreeMap<TableId, SplitGroupChecker>,
    /// The thresholds every split checker is created with (TiCDC's production values;
    /// tests lower them as Go's `SetEasyThresholdForTest` does, see
    /// [`super::Maintainer::set_split_checker_tuning`]).
    pub split_tuning: CheckerTuning,
    /// Failed assertions, moved out by the maintainer ([`crate::assertions`]).
    pub failed: Failures,
    /// Marked when a task comes or goes (a task's span and ID never change in place).
    pub books: BooksChanged,
}

impl SpanController {
    pub fn new(ddl_span_id: DispatcherId, node: NodeId, checkpoint: Ts, cfg: SchedulerConfig) -> Self {
        let mut sc = SpanController {
            tasks: BTreeMap::new(),
            by_table: BTreeMap::new(),
            ddl_span_id,
            committed_checkpoint: checkpoint,
            cfg,
            mode: Mode::Default,
            ignore_pending_block_start_ts: false,
            split_checkers: BTreeMap::new(),
            split_tuning: CheckerTuning::default(),
            failed: Failures::default(),
            books: BooksChanged::default(),
        };
        sc.insert(SpanReplication {
            id: ddl_span_id,
            span: TableSpan::ddl_span(),
            schema_id: 0,
            node: Some(node),
            state: ReplicaState::Replicating,
            checkpoint_ts: checkpoint,
            last_state: Some(ComponentState::Working),
            block_state: None,
        });
        sc
    }

    pub fn insert(&mut self, r: SpanReplication) {
        let live = self.tasks.get(&r.id);
        self.failed.check(A::SpanInsertNewId, live.is_none(), || {
            format!(
                "dispatcher={} live={:?} inserted={:?}",
                r.id,
                live.map(|t| (t.span, t.state, t.node)),
                (r.span, r.state, r.node)
            )
        });
        self.failed.check(A::SpanReplicatingHasNode, r.state != ReplicaState::Replicating || r.node.is_some(), || {
            format!("dispatcher={} span={:?} inserted Replicating without a node", r.id, r.span)
        });
        self.books.mark();
        self.by_table.entry(r.span.table_id).or_default().insert(r.id);
        if let GroupId::Table(t) = r.group() {
            if self.cfg.enable_table_across_nodes {
                // `AddReplica`: a fresh status, no traffic sample yet.
                let tuning = &self.split_tuning;
                self.split_checkers
                    .entry(t)
                    .or_insert_with(|| SplitGroupChecker { tuning: tuning.clone(), ..Default::default() })
                    .spans
                    .insert(r.id, Default::default());
            }
        }
        self.tasks.insert(r.id, r);
    }

    pub fn get(&self, id: &DispatcherId) -> Option<&SpanReplication> {
        self.tasks.get(id)
    }
    pub fn get_mut(&mut self, id: &DispatcherId) -> Option<&mut SpanReplication> {
        self.tasks.get_mut(id)
    }

    pub fn remove(&mut self, id: &DispatcherId) -> Option<SpanReplication> {
        let r = self.tasks.remove(id)?;
        self.books.mark();
        if let Some(s) = self.by_table.get_mut(&r.span.table_id) {
            s.remove(id);
            if s.is_empty() {
                self.by_table.remove(&r.span.table_id);
            }
        }
        if let GroupId::Table(t) = r.group() {
            if let Some(c) = self.split_checkers.get_mut(&t) {
                c.spans.remove(id);
                if c.spans.is_empty() {
                    self.split_checkers.remove(&t);
                }
            }
        }
        Some(r)
    }

    /// A split-group span reported Working: `UpdateStatus` of its group's checker, with a
    /// traffic sample when the status came in a complete-status heartbeat
    /// (`event_size != 0`, see [`super::split_balance`]).
    pub fn update_split_status(&mut self, id: &DispatcherId, event_size: u64, write_threshold: u64) {
        let Some(GroupId::Table(t)) = self.tasks.get(id).map(|r| r.group()) else { return };
        if let Some(c) = self.split_checkers.get_mut(&t) {
            c.update_status(id, event_size, write_threshold);
        }
    }

    pub fn is_table_exists(&self, t: TableId) -> bool {
        self.by_table.get(&t).map(|s| !s.is_empty()).unwrap_or(false)
    }

    pub fn tasks_of_table(&self, t: TableId) -> Vec<&SpanReplication> {
        self.by_table.get(&t).map(|s| s.iter().filter_map(|id| self.tasks.get(id)).collect()).unwrap_or_default()
    }

    pub fn task_count_of_table(&self, t: TableId) -> usize {
        self.by_table.get(&t).map(|s| s.len()).unwrap_or(0)
    }

    pub fn tasks_of_schema(&self, s: SchemaId) -> Vec<&SpanReplication> {
        self.tasks.values().filter(|r| r.schema_id == s && r.id != self.ddl_span_id).collect()
    }

    /// `AddNewTable`: one span (split by region count when table-across-nodes is on),
    /// Absent with checkpoint `start_ts`; a no-op if the table already has tasks.
    /// Returns the new dispatcher IDs.
    pub fn add_new_table(
        &mut self,
        table: &TableInfo,
        start_ts: Ts,
        region_count: u64,
        new_id: &mut dyn FnMut() -> DispatcherId,
    ) -> Vec<DispatcherId> {
        if self.is_table_exists(table.table_id) {
            return vec![];
        }
        let full = TableSpan::full(table.table_id);
        let spans = if self.cfg.enable_table_across_nodes && (table.splitable || !self.cfg.enable_splittable_check) {
            hit(P::SpanAddTableSplittable);
            self.split_by_region_count(&full, region_count, 0)
        } else {
            vec![full]
        };
        let mut ids = Vec::new();
        for s in spans {
            let id = new_id();
            self.insert(SpanReplication {
                id,
                span: s,
                schema_id: table.schema_id,
                node: None,
                state: ReplicaState::Absent,
                checkpoint_ts: start_ts.max(1),
                last_state: None,
                block_state: None,
            });
            ids.push(id);
        }
        ids
    }

    /// Region-count splitter (`region_count_splitter.go`).
    pub fn split_by_region_count(&self, span: &TableSpan, regions: u64, spans_num: u64) -> Vec<TableSpan> {
        if spans_num == 0 {
            if self.cfg.region_threshold == 0 || regions <= self.cfg.region_threshold {
                return vec![*span];
            }
            let per = self.cfg.effective_region_count_per_span();
            let n = regions.div_ceil(per).min(1000);
            split_span_evenly(span, n)
        } else {
            if regions < spans_num {
                return vec![*span];
            }
            split_span_evenly(span, spans_num)
        }
    }

    /// The write-bytes splitter (`write_bytes_splitter.go`) with a span's bytes spread
    /// evenly over its `regions` regions: `min(spans_num, regions)` equal pieces, cut on
    /// region boundaries in TiCDC (so never more pieces than regions); the span whole if
    /// that is fewer than two.
    pub fn split_by_write_bytes(&self, span: &TableSpan, regions: u64, spans_num: u64) -> Vec<TableSpan> {
        let n = spans_num.min(regions);
        if n < 2 {
            return vec![*span];
        }
        split_span_evenly(span, n)
    }

    /// `UpdateSchemaID` (`maintainer/span/span_controller.go:326`): every task of the
    /// table moves to `new_schema`.
    pub fn update_schema_id(&mut self, table: TableId, new_schema: SchemaId) {
        hit(P::SpanUpdateSchemaId);
        let ids: Vec<DispatcherId> = self.by_table.get(&table).map(|s| s.iter().copied().collect()).unwrap_or_default();
        for id in ids {
            if let Some(r) = self.tasks.get_mut(&id) {
                r.schema_id = new_schema;
            }
        }
    }

    /// `AdvanceMaintainerCommittedCheckpointTs` (`maintainer/span/span_controller.go:167`):
    /// the committed checkpoint that clamps new dispatchers' start ts never goes back.
    pub fn advance_committed_checkpoint(&mut self, ts: Ts) {
        if ts > self.committed_checkpoint {
            self.committed_checkpoint = ts;
        }
    }

    pub fn mark_absent(&mut self, id: &DispatcherId) {
        if let Some(r) = self.tasks.get_mut(id) {
            r.state = ReplicaState::Absent;
            r.node = None;
        }
    }
    pub fn mark_scheduling(&mut self, id: &DispatcherId) {
        if let Some(r) = self.tasks.get_mut(id) {
            r.state = ReplicaState::Scheduling;
        }
    }
    pub fn mark_replicating(&mut self, id: &DispatcherId) {
        if let Some(r) = self.tasks.get_mut(id) {
            r.state = ReplicaState::Replicating;
            let span = r.span;
            self.failed.check(A::SpanReplicatingHasNode, r.node.is_some(), || {
                format!("dispatcher={} span={:?} marked Replicating without a node", id, span)
            });
        }
    }
    pub fn bind_to_node(&mut self, id: &DispatcherId, node: NodeId) {
        if let Some(r) = self.tasks.get_mut(id) {
            r.node = Some(node);
            r.state = ReplicaState::Scheduling;
        }
    }

    /// `UpdateStatus`: a lower checkpoint never replaces a higher one.
    pub fn update_status(&mut self, id: &DispatcherId, st: &TableSpanStatus) {
        if let Some(r) = self.tasks.get_mut(id) {
            r.last_state = Some(st.state);
            if st.checkpoint_ts > r.checkpoint_ts {
                r.checkpoint_ts = st.checkpoint_ts;
            }
        }
    }

    /// `ReplaceReplicaSet` (split): remove `old`, add `new_spans` with checkpoint
    /// `min(checkpoint, old checkpoint)`, Absent.
    pub fn replace_replica_set(
        &mut self,
        old: &DispatcherId,
        new_spans: &[TableSpan],
        checkpoint: Ts,
        new_id: &mut dyn FnMut() -> DispatcherId,
    ) -> Vec<DispatcherId> {
        let Some(o) = self.remove(old) else { return vec![] };
        let cp = checkpoint.min(o.checkpoint_ts).max(1);
        new_spans
            .iter()
            .map(|s| {
                let id = new_id();
                self.insert(SpanReplication {
                    id,
                    span: *s,
                    schema_id: o.schema_id,
                    node: None,
                    state: ReplicaState::Absent,
                    checkpoint_ts: cp,
                    last_state: None,
                    block_state: None,
                });
                id
            })
            .collect()
    }

    pub fn absent(&self) -> Vec<DispatcherId> {
        self.tasks
            .values()
            .filter(|r| r.state == ReplicaState::Absent && r.id != self.ddl_span_id)
            .map(|r| r.id)
            .collect()
    }

    /// Checkpoints of non-DDL spans that are Absent or Scheduling (the non-replicating tracker).
    pub fn min_non_replicating_checkpoint(&self) -> Option<Ts> {
        self.tasks
            .values()
            .filter(|r| r.id != self.ddl_span_id && r.state != ReplicaState::Replicating)
            .map(|r| r.checkpoint_ts)
            .min()
    }

    pub fn tasks_on_node(&self, n: NodeId) -> Vec<DispatcherId> {
        self.tasks.values().filter(|r| r.node == Some(n) && r.id != self.ddl_span_id).map(|r| r.id).collect()
    }

    pub fn nodes_with_tasks(&self) -> BTreeSet<NodeId> {
        self.tasks.values().filter(|r| r.id != self.ddl_span_id).filter_map(|r| r.node).collect()
    }

    /// Number of Scheduling tasks of a group per node.
    pub fn scheduling_count_per_node(&self, group: GroupId) -> BTreeMap<NodeId, usize> {
        let mut m = BTreeMap::new();
        for r in self.tasks.values() {
            if r.state == ReplicaState::Scheduling && r.group() == group {
                if let Some(n) = r.node {
                    *m.entry(n).or_insert(0) += 1;
                }
            }
        }
        m
    }

    /// Span-partition check for one table: sorted spans, overlaps and holes.
    pub fn table_partition_problems(&self, t: TableId) -> (Vec<(TableSpan, TableSpan)>, Vec<TableSpan>) {
        let mut spans: Vec<TableSpan> = self.tasks_of_table(t).iter().map(|r| r.span).collect();
        spans.sort();
        let mut overlaps = Vec::new();
        for w in spans.windows(2) {
            if w[0].overlaps(&w[1]) {
                overlaps.push((w[0], w[1]));
            }
        }
        (overlaps, find_holes(t, &spans))
    }
}
