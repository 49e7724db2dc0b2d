//! `FinishBootstrap` (§4.2-§4.5): rebuild desired state from the schema snapshot at
//! the table trigger's start ts and from every node's bootstrap response.

use super::operator::{AddDispatcherOperator, Operator, RemoveDispatcherOperator, RemovePostFinish};
use super::span_controller::{ReplicaState, SpanReplication};
use super::*;
use crate::upstream::{DdlKind, SchemaView};

impl Maintainer {
    pub(crate) fn finish_bootstrap(&mut self, ctx: &mut Ctx, schema: &dyn SchemaView) {
        let responses: Vec<(NodeId, Message)> = self.bootstrap_responses.iter().filter_map(|(n, r)| r.clone().map(|r| (*n, r))).collect();
        // 1. startTs = max of the responses' trigger start ts.
        let mut start_ts = 0;
        for (_, r) in &responses {
            if let Message::MaintainerBootstrapResponse { checkpoint_ts, .. } = r {
                start_ts = start_ts.max(*checkpoint_ts);
            }
        }
        if start_ts == 0 {
            self.trace(ctx, "bootstrap failed: no table trigger start ts", vec![]);
            self.errors.push(RunningError { node: self.node, code: ErrorCode::InitTableTriggerDispatcherFailed, message: "ErrChangefeedInitTableTriggerDispatcherFailed".into() });
            return;
        }
        let ddl_id = self.sc.ddl_span_id;
        if let Some(d) = self.sc.get_mut(&ddl_id) {
            d.checkpoint_ts = start_ts;
        }
        // 2. Tables as of startTs.
        let tables = schema.tables_at(start_ts);
        let table_set: BTreeMap<TableId, &crate::upstream::TableInfo> = tables.iter().map(|t| (t.table_id, t)).collect();
        // 3. Working task map: every reported span, by table.
        let mut working: BTreeMap<TableId, Vec<SpanReplication>> = BTreeMap::new();
        let mut node_spans: BTreeMap<NodeId, BTreeMap<DispatcherId, BootstrapTableSpan>> = BTreeMap::new();
        for (n, r) in &responses {
            let Message::MaintainerBootstrapResponse { spans, .. } = r else { continue };
            for s in spans {
                node_spans.entry(*n).or_default().insert(s.id, s.clone());
                if s.id.is_zero() || s.id == ddl_id || s.span.table_id == DDL_SPAN_TABLE_ID || matches!(s.state, ComponentState::Stopped | ComponentState::Removed) {
                    continue;
                }
                working.entry(s.span.table_id).or_default().push(SpanReplication { id: s.id, span: s.span, schema_id: s.schema_id, node: Some(*n), state: ReplicaState::Replicating, checkpoint_ts: s.checkpoint_ts.max(1), last_state: Some(s.state), block_state: s.block_state.clone() });
            }
        }
        // 3b. Restore in-flight schedule requests (§4.3).
        let mut restored_ops: Vec<Operator> = Vec::new();
        for (n, r) in &responses {
            let Message::MaintainerBootstrapResponse { operators, .. } = r else { continue };
            for req in operators {
                let id = req.config.dispatcher_id;
                let reported = node_spans.get(n).and_then(|m| m.get(&id)).cloned();
                match req.action {
                    ScheduleAction::Create => {
                        if !table_set.contains_key(&req.config.span.table_id) {
                            self.trace(ctx, "skip stale bootstrap create for dropped table", vec![("dispatcher", id.to_string())]);
                            continue;
                        }
                        if reported.is_some() || self.sc.get(&id).map(|t| t.node.is_some()).unwrap_or(false) {
                            continue;
                        }
                        self.sc.insert(SpanReplication { id, span: req.config.span, schema_id: req.config.schema_id, node: None, state: ReplicaState::Absent, checkpoint_ts: req.config.start_ts.max(1), last_state: None, block_state: None });
                        restored_ops.push(Operator::Add(AddDispatcherOperator::new(id, *n, OperatorType::Add)));
                        self.trace(ctx, "restore create operator", vec![("dispatcher", id.to_string()), ("table", req.config.span.table_id.to_string()), ("node", n.to_string()), ("op", format!("{:?}", req.operator_type))]);
                    }
                    ScheduleAction::Remove => {
                        let Some(rep) = reported else { continue };
                        if self.sc.get(&id).is_none() {
                            // Take it out of the working map: the remove operator owns it now.
                            if let Some(v) = working.get_mut(&rep.span.table_id) {
                                v.retain(|s| s.id != id);
                            }
                            self.sc.insert(SpanReplication { id, span: rep.span, schema_id: rep.schema_id, node: Some(*n), state: ReplicaState::Replicating, checkpoint_ts: rep.checkpoint_ts.max(1), last_state: Some(rep.state), block_state: rep.block_state.clone() });
                        }
                        let post = match req.operator_type {
                            OperatorType::Move | OperatorType::Split => RemovePostFinish::MarkAbsent,
                            _ => RemovePostFinish::RemoveTask,
                        };
                        if !table_set.contains_key(&rep.span.table_id) {
                            // Table dropped: the operator only drives runtime cleanup.
                            self.sc.remove(&id);
                        }
                        restored_ops.push(Operator::Remove(RemoveDispatcherOperator::new(id, rep.span, *n, req.operator_type, post)));
                        self.trace(ctx, "restore remove operator", vec![("dispatcher", id.to_string()), ("node", n.to_string()), ("op", format!("{:?}", req.operator_type))]);
                    }
                }
            }
        }
        // 4. Tables of the snapshot: adopt working spans, fill holes, or add new.
        let region_of = |t: TableId| schema.region_count(t);
        for t in &tables {
            let spans = working.remove(&t.table_id);
            if spans.is_some() || self.sc.is_table_exists(t.table_id) {
                for s in spans.unwrap_or_default() {
                    if self.sc.get(&s.id).is_none() {
                        self.sc.insert(s);
                    }
                }
                self.fill_holes(ctx, t.table_id, t.schema_id, start_ts);
            } else {
                let rng = &mut *ctx.rng;
                let mut new_id = || new_id_from(rng);
                self.sc.add_new_table(t, self.start_checkpoint, region_of(t.table_id), &mut new_id);
            }
        }
        // 5. Working tables that are not in the snapshot.
        self.handle_remaining_working_tasks(ctx, working, start_ts, schema, &mut restored_ops);
        // 6. Barrier from block states, then operators, then working.
        self.barrier.rebuild(&self.sc);
        for op in restored_ops {
            let d = op.describe();
            match self.oc.add_operator(op, &mut self.sc, &self.alive, ctx.now_ms) {
                Ok(()) => self.trace(ctx, "add operator", vec![("operator", d)]),
                Err(e) => self.trace(ctx, "add restored operator failed", vec![("operator", d), ("reason", format!("{:?}", e))]),
            }
        }
        self.state = MaintainerState::Working;
        self.trace(ctx, "maintainer bootstrap finished", vec![("start_ts", start_ts.to_string()), ("tables", tables.len().to_string()), ("tasks", self.sc.tasks.len().to_string())]);
        self.send_post_bootstrap(ctx, schema);
    }

    fn fill_holes(&mut self, ctx: &mut Ctx, table: TableId, schema_id: SchemaId, start_ts: Ts) {
        let spans: Vec<TableSpan> = self.sc.tasks_of_table(table).iter().map(|r| r.span).collect();
        for h in find_holes(table, &spans) {
            let id = ctx.new_dispatcher_id();
            self.sc.insert(SpanReplication { id, span: h, schema_id, node: None, state: ReplicaState::Absent, checkpoint_ts: start_ts.max(1), last_state: None, block_state: None });
        }
    }

    /// Dispatchers reported by nodes whose table is not in the snapshot at startTs.
    ///
    /// TiCDC at b813e76f9 only logs "found a working table that is not in initial table
    /// map, just ignore it" (bug `ignore-unknown-working-table`): nothing tracks the
    /// dispatcher, and the replayed CREATE TABLE schedules a second full-span
    /// dispatcher for the same table.
    ///
    /// The fix adopts them, as TiCDC's open fix (PR #6207) proposes: the table must have
    /// been created after startTs, so the DDL history after startTs holds the DDL that
    /// added it (CREATE/TRUNCATE with NeedAddedTables). The surviving dispatchers become
    /// Replicating tasks (holes filled with Absent spans), so the key range is owned
    /// before the trigger replays anything, and the replayed CREATE then finds the table
    /// and is a no-op ("table already add, ignore"). If that DDL is followed by a DROP,
    /// the replayed DROP removes the adopted tasks like any other. Adoption was chosen
    /// over removal because removal leaves a window where the table has no task at all
    /// and nothing would re-add it once the replayed CREATE has been skipped.
    /// A dispatcher whose table has no adding DDL in the history (it cannot be valid)
    /// gets a cleanup Remove operator, keeping its task as coverage until it stops.
    fn handle_remaining_working_tasks(&mut self, ctx: &mut Ctx, working: BTreeMap<TableId, Vec<SpanReplication>>, start_ts: Ts, schema: &dyn SchemaView, ops: &mut Vec<Operator>) {
        if working.is_empty() {
            return;
        }
        let history = if ctx.bug(Bug::IgnoreUnknownWorkingTable) { vec![] } else { schema.ddl_history(start_ts, u64::MAX) };
        for (table, spans) in working {
            if ctx.bug(Bug::IgnoreUnknownWorkingTable) {
                for s in &spans {
                    self.trace(ctx, "found a working table that is not in initial table map, just ignore it", vec![("table", table.to_string()), ("dispatcher", s.id.to_string()), ("node", s.node.map(|n| n.to_string()).unwrap_or_default())]);
                }
                continue;
            }
            let adder = history.iter().find(|d| matches!(d.kind, DdlKind::CreateTable | DdlKind::TruncateTable) && d.need_added_tables.iter().any(|t| t.table_id == table));
            match adder {
                Some(ddl) => {
                    let schema_id = spans[0].schema_id;
                    for s in spans {
                        self.trace(ctx, "adopt working dispatcher of table created after start ts", vec![("table", table.to_string()), ("dispatcher", s.id.to_string()), ("node", s.node.map(|n| n.to_string()).unwrap_or_default()), ("create_ts", ddl.commit_ts.to_string())]);
                        if self.sc.get(&s.id).is_none() {
                            self.sc.insert(s);
                        }
                    }
                    let cp = ddl.commit_ts;
                    self.fill_holes(ctx, table, schema_id, cp);
                }
                None => {
                    for s in spans {
                        self.trace(ctx, "cleanup working dispatcher of unknown table", vec![("table", table.to_string()), ("dispatcher", s.id.to_string())]);
                        let (id, span, node) = (s.id, s.span, s.node.unwrap_or(self.node));
                        self.sc.insert(s);
                        ops.push(Operator::Remove(RemoveDispatcherOperator::new(id, span, node, OperatorType::Remove, RemovePostFinish::RemoveTask)));
                    }
                }
            }
        }
    }
}
