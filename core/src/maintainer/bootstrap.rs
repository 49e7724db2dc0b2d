//! `FinishBootstrap` (§4.2-§4.5): rebuild desired state from the schema snapshot at
//! the table trigger's start ts and from every node's bootstrap response.

use super::operator::controller::AdmitError;
use super::operator::{AddDispatcherOperator, Operator, RemoveDispatcherOperator, RemovePostFinish};
use super::span_controller::{ReplicaState, SpanReplication};
use super::*;
use crate::bugs::Fix;
use crate::coverage::{hit, Point as P};
use crate::upstream::SchemaView;

impl Maintainer {
    pub(crate) fn finish_bootstrap(&mut self, ctx: &mut Ctx, schema: &dyn SchemaView) {
        hit(P::BootstrapFinishStart);
        let responses: Vec<(NodeId, Message)> =
            self.bootstrap_responses.iter().filter_map(|(n, r)| r.clone().map(|r| (*n, r))).collect();
        // 1. startTs = max of the responses' trigger start ts: the schema snapshot's ts
        //    (`determineStartTs`). With a MySQL sink it can be above the start checkpoint
        //    (the trigger's ddl_ts row); spans created here still start at the checkpoint.
        //    The redo start ts is the largest redo trigger start ts (redo only).
        let mut start_ts = 0;
        let mut redo_start_ts = 0;
        for (n, r) in &responses {
            if let Message::MaintainerBootstrapResponse { checkpoint_ts, spans, redo_checkpoint_ts, .. } = r {
                redo_start_ts = redo_start_ts.max(*redo_checkpoint_ts);
                self.trace(
                    ctx,
                    "handle bootstrap response",
                    vec![
                        ("node", n.to_string()),
                        ("checkpoint_ts", checkpoint_ts.to_string()),
                        ("spans", spans.len().to_string()),
                    ],
                );
                start_ts = start_ts.max(*checkpoint_ts);
            }
        }
        if start_ts == 0 {
            hit(P::BootstrapNoTriggerStartTs);
            self.trace(ctx, "bootstrap failed: no table trigger start ts", vec![]);
            self.handle_error(
                ctx,
                ErrorCode::InitTableTriggerDispatcherFailed,
                "ErrChangefeedInitTableTriggerDispatcherFailed".into(),
            );
            return;
        }
        if self.redo_pipe.is_some() && redo_start_ts == 0 {
            hit(P::BootstrapNoRedoTriggerStartTs);
            self.trace(ctx, "bootstrap failed: no redo table trigger start ts", vec![]);
            self.handle_error(
                ctx,
                ErrorCode::InitTableTriggerDispatcherFailed,
                "ErrChangefeedInitTableTriggerDispatcherFailed".into(),
            );
            return;
        }
        let ddl_id = self.pipe.sc.ddl_span_id;
        if let Some(d) = self.pipe.sc.get_mut(&ddl_id) {
            d.checkpoint_ts = start_ts;
        }
        if let Some(r) = self.redo_pipe.as_mut() {
            let id = r.sc.ddl_span_id;
            if let Some(d) = r.sc.get_mut(&id) {
                d.checkpoint_ts = redo_start_ts;
            }
        }
        // 2. Tables as of startTs (`loadTables`), and as of the redo start ts. On failure
        //    nothing else has changed: the responses stay with the bootstrapper and a later
        //    round (a node joining) runs this again from the start.
        let Some(tables) = self.load_bootstrap_tables(ctx, schema, start_ts) else { return };
        let redo_tables = match self.redo_pipe.is_some() {
            true => match self.load_bootstrap_tables(ctx, schema, redo_start_ts) {
                Some(t) => Some(t),
                None => return,
            },
            false => None,
        };
        // 3-6 per mode, each over its own spans, operators and merges.
        self.bootstrap_pipeline(ctx, schema, &responses_of_mode(&responses, Mode::Default), start_ts, &tables);
        if let Some(redo_tables) = redo_tables {
            hit(P::BootstrapRedoPipeline);
            let redo_responses = responses_of_mode(&responses, Mode::Redo);
            self.in_mode(Mode::Redo, |m| {
                m.bootstrap_pipeline(ctx, schema, &redo_responses, redo_start_ts, &redo_tables)
            });
        }
        self.state = MaintainerState::Working;
        self.bootstrapped = true;
        // The partition check starts with the bootstrap.
        self.pipe.sc.books.mark();
        self.trace(
            ctx,
            "maintainer bootstrap finished",
            vec![
                ("start_ts", start_ts.to_string()),
                ("tables", tables.len().to_string()),
                ("tasks", self.pipe.sc.tasks.len().to_string()),
            ],
        );
        self.send_post_bootstrap(ctx, schema);
    }

    /// `loadTables` at `ts`; a failure is the changefeed's error and `None`.
    fn load_bootstrap_tables(
        &mut self,
        ctx: &mut Ctx,
        schema: &dyn SchemaView,
        ts: Ts,
    ) -> Option<Vec<crate::upstream::TableInfo>> {
        match schema.get_all_physical_tables(ts) {
            Ok(t) => Some(t),
            Err(e) => {
                hit(P::BootstrapLoadTablesFailed);
                self.trace(
                    ctx,
                    "load table from scheme store failed",
                    vec![("start_ts", ts.to_string()), ("error", e.to_string())],
                );
                self.handle_error(ctx, e.code(), e.to_string());
                None
            }
        }
    }

    /// Steps 3-6 of `FinishBootstrap` for the active pipeline (`buildTaskInfo`, the merge
    /// restore, `handleRemainingWorkingTasks` and `initializeComponents` of one mode):
    /// `responses` hold only this mode's spans, operators and merges, and `start_ts` and
    /// `tables` are this mode's trigger start ts and snapshot.
    fn bootstrap_pipeline(
        &mut self,
        ctx: &mut Ctx,
        schema: &dyn SchemaView,
        responses: &[(NodeId, Message)],
        start_ts: Ts,
        tables: &[crate::upstream::TableInfo],
    ) {
        let ddl_id = self.pipe.sc.ddl_span_id;
        let table_set: BTreeMap<TableId, &crate::upstream::TableInfo> =
            tables.iter().map(|t| (t.table_id, t)).collect();
        // 3. Working task map: every reported span, by table.
        let mut working: BTreeMap<TableId, Vec<SpanReplication>> = BTreeMap::new();
        let mut node_spans: BTreeMap<NodeId, BTreeMap<DispatcherId, BootstrapTableSpan>> = BTreeMap::new();
        for (n, r) in responses {
            let Message::MaintainerBootstrapResponse { spans, .. } = r else { continue };
            for s in spans {
                node_spans.entry(*n).or_default().insert(s.id, s.clone());
                // Merge targets not yet committed (Preparing/MergeReady) are abortable and
                // overlap their sources: the merge journal decides about them below.
                if s.id.is_zero()
                    || s.id == ddl_id
                    || s.span.table_id == DDL_SPAN_TABLE_ID
                    || matches!(
                        s.state,
                        ComponentState::Stopped
                            | ComponentState::Removed
                            | ComponentState::Preparing
                            | ComponentState::MergeReady
                    )
                {
                    continue;
                }
                working.entry(s.span.table_id).or_default().push(SpanReplication {
                    id: s.id,
                    span: s.span,
                    schema_id: s.schema_id,
                    node: Some(*n),
                    state: ReplicaState::Replicating,
                    checkpoint_ts: s.checkpoint_ts.max(1),
                    last_state: Some(s.state),
                    block_state: s.block_state.clone(),
                });
            }
        }
        // 3b. Restore in-flight schedule requests (§4.3).
        let mut restored_ops: Vec<Operator> = Vec::new();
        for (n, r) in responses {
            let Message::MaintainerBootstrapResponse { operators, .. } = r else { continue };
            for req in operators {
                let id = req.config.dispatcher_id;
                let reported = node_spans.get(n).and_then(|m| m.get(&id)).cloned();
                match req.action {
                    ScheduleAction::Create => {
                        if !table_set.contains_key(&req.config.span.table_id) {
                            hit(P::BootstrapRestoreCreateDropped);
                            self.trace(
                                ctx,
                                "skip stale bootstrap create for dropped table",
                                vec![("dispatcher", id.to_string())],
                            );
                            continue;
                        }
                        if reported.is_some() || self.pipe.sc.get(&id).map(|t| t.node.is_some()).unwrap_or(false) {
                            hit(P::BootstrapRestoreCreateAlreadyReported);
                            continue;
                        }
                        self.pipe.sc.insert(SpanReplication {
                            id,
                            span: req.config.span,
                            schema_id: req.config.schema_id,
                            node: None,
                            state: ReplicaState::Absent,
                            checkpoint_ts: req.config.start_ts.max(1),
                            last_state: None,
                            block_state: None,
                        });
                        restored_ops.push(Operator::Add(AddDispatcherOperator::new(id, *n, OperatorType::Add)));
                        hit(P::BootstrapRestoreCreate);
                        self.trace(
                            ctx,
                            "restore create operator",
                            vec![
                                ("dispatcher", id.to_string()),
                                ("table", req.config.span.table_id.to_string()),
                                ("node", n.to_string()),
                                ("op", format!("{:?}", req.operator_type)),
                            ],
                        );
                    }
                    ScheduleAction::Remove => {
                        let Some(rep) = reported else { continue };
                        hit(P::BootstrapRestoreRemove);
                        if self.pipe.sc.get(&id).is_none() {
                            // Take it out of the working map: the remove operator owns it now.
                            if let Some(v) = working.get_mut(&rep.span.table_id) {
                                v.retain(|s| s.id != id);
                            }
                            self.pipe.sc.insert(SpanReplication {
                                id,
                                span: rep.span,
                                schema_id: rep.schema_id,
                                node: Some(*n),
                                state: ReplicaState::Replicating,
                                checkpoint_ts: rep.checkpoint_ts.max(1),
                                last_state: Some(rep.state),
                                block_state: rep.block_state.clone(),
                            });
                        }
                        let post = match req.operator_type {
                            OperatorType::Move | OperatorType::Split => RemovePostFinish::MarkAbsent,
                            _ if table_set.contains_key(&rep.span.table_id) => RemovePostFinish::RemoveTaskAndRepair {
                                start_ts: self.start_checkpoint,
                                schema_id: rep.schema_id,
                            },
                            _ => RemovePostFinish::RemoveTask,
                        };
                        // Table dropped: a standalone O_Remove only drives the runtime
                        // cleanup, so its task goes; the remove phase of a Move/Split keeps its
                        // task and marks it absent when done (`restoreCurrentWorkingRemoveAction`,
                        // maintainer/maintainer_controller_bootstrap.go:1147-1153).
                        if !table_set.contains_key(&rep.span.table_id) && req.operator_type == OperatorType::Remove {
                            hit(P::BootstrapRestoreRemoveDroppedTable);
                            self.pipe.sc.remove(&id);
                        }
                        hit(match post {
                            RemovePostFinish::MarkAbsent => P::BootstrapRestoreRemoveOfMoveOrSplit,
                            RemovePostFinish::RemoveTaskAndRepair { .. } => P::BootstrapRestoreRemoveRepair,
                            _ => P::BootstrapRestoreRemoveTaskGone,
                        });
                        let mut op = RemoveDispatcherOperator::new(id, rep.span, *n, req.operator_type, post);
                        // Candidate fix (not TiCDC): a restored removal whose span stays
                        // (placed again or repaired) blocks the checkpoint meanwhile.
                        op.blocks_checkpoint = ctx.fix(Fix::RestoredRemoveBlocksCheckpoint)
                            && !matches!(op.post, RemovePostFinish::RemoveTask);
                        restored_ops.push(Operator::Remove(op));
                        self.trace(
                            ctx,
                            "restore remove operator",
                            vec![
                                ("dispatcher", id.to_string()),
                                ("node", n.to_string()),
                                ("op", format!("{:?}", req.operator_type)),
                            ],
                        );
                    }
                }
            }
        }
        // 3c. Overlaps no operator or merge evidence explains (`removeUnexpectedBootstrapOverlaps`).
        self.remove_unexpected_overlaps(ctx, responses, &node_spans, &table_set, &mut working, &mut restored_ops);
        // 4. Tables of the snapshot: adopt working spans, fill holes, or add new.
        let region_of = |t: TableId| schema.region_count(t);
        let mut to_fill: Vec<(TableId, SchemaId)> = Vec::new();
        for t in tables {
            let spans = working.remove(&t.table_id);
            hit(P::BootstrapAdoptWorkingTable);
            if spans.is_some() || self.pipe.sc.is_table_exists(t.table_id) {
                for s in spans.unwrap_or_default() {
                    if self.pipe.sc.get(&s.id).is_none() {
                        self.pipe.sc.insert(s);
                    }
                }
                to_fill.push((t.table_id, t.schema_id));
            } else {
                hit(P::BootstrapAddAbsentTable);
                let regions = region_of(t.table_id);
                let ids = {
                    let rng = &mut *ctx.rng;
                    let mut new_id = || new_id_from(rng);
                    self.pipe.sc.add_new_table(t, self.start_checkpoint, regions, &mut new_id)
                };
                if ids.len() > 1 {
                    hit(P::BootstrapNewTableSplit);
                    self.trace(
                        ctx,
                        "split span by region count",
                        vec![
                            ("table", t.table_id.to_string()),
                            ("spans", ids.len().to_string()),
                            ("regions", regions.to_string()),
                        ],
                    );
                }
            }
        }
        // 4b. Merges from the merge journals (§4.4), before leftovers are judged.
        let mut merges = Vec::new();
        self.restore_merge_operators(ctx, responses, &node_spans, &table_set, &mut restored_ops, &mut merges);
        // 4c. Holes of the snapshot's tables, once the merge targets are tasks: TiCDC adopts a
        //    reported merge target with the working spans before it looks for holes, so an
        //    abortable target is coverage until its cleanup Remove repairs the range
        //    (`processTableSpans`, maintainer/maintainer_controller_bootstrap.go:264-324).
        //    New spans start at the maintainer's start checkpoint (`c.startTs`), not at the
        //    trigger's start ts, which a MySQL sink's ddl_ts row may have lifted.
        for (table, schema_id) in to_fill {
            self.fill_holes(ctx, table, schema_id, self.start_checkpoint);
        }
        // 5. Working tables that are not in the snapshot.
        self.handle_remaining_working_tasks(ctx, working, start_ts, schema, &mut restored_ops);
        // 6. Barrier from block states, then operators, then working.
        self.pipe.barrier.rebuild(&self.pipe.sc, super::barrier::BarrierFixes::from_ctx(ctx));
        for op in restored_ops {
            let d = op.describe();
            // A Remove restored for a dropped table has no task any more (removed above):
            // it only drives the runtime cleanup, so it is admitted without the task
            // check, as the barrier's drop path admits its removes.
            let admitted = match self.pipe.oc.admission_check(&op.id(), &self.pipe.sc) {
                Err(AdmitError::NoTask) if matches!(op, Operator::Remove(_)) => {
                    hit(P::BootstrapRestoredRemoveWithoutTask);
                    self.pipe.oc.admission_insert(op, &mut self.pipe.sc, &self.alive, ctx.now_ms);
                    Ok(())
                }
                _ => self.pipe.oc.add_operator(op, &mut self.pipe.sc, &self.alive, ctx.now_ms),
            };
            match admitted {
                Ok(()) => self.trace(ctx, "add operator", vec![("operator", d)]),
                Err(e) => {
                    hit(P::BootstrapRestoredOperatorRefused);
                    self.trace(
                        ctx,
                        "add restored operator failed",
                        vec![("operator", d), ("reason", format!("{:?}", e))],
                    )
                }
            }
        }
        for (sources, merged, n, committed) in merges {
            let table = self.pipe.sc.get(&merged).map(|r| r.span.table_id).unwrap_or_default();
            match self.pipe.oc.add_restored_merge_operator(
                sources.clone(),
                merged,
                &mut self.pipe.sc,
                &self.alive,
                ctx.now_ms,
            ) {
                Ok(()) => {
                    hit(P::BootstrapRestoreMerge);
                    self.trace(
                        ctx,
                        "restore merge operator",
                        vec![
                            ("dispatcher", merged.to_string()),
                            ("table", table.to_string()),
                            ("node", n.to_string()),
                            ("sources", format!("{:?}", sources.iter().map(|s| s.to_string()).collect::<Vec<_>>())),
                        ],
                    )
                }
                Err(e) => {
                    hit(P::BootstrapRestoreMergeRefused);
                    self.trace(
                        ctx,
                        "restore merge operator failed",
                        vec![("dispatcher", merged.to_string()), ("reason", e)],
                    );
                    if let Some(op) = self.reconcile_unrestorable_merge(merged, n, committed, &sources) {
                        let _ = self.pipe.oc.add_operator(op, &mut self.pipe.sc, &self.alive, ctx.now_ms);
                    }
                }
            }
        }
    }

    /// `restoreCurrentMergeOperators` (§4.4): rebuild each journaled merge. Sources
    /// missing from the span controller are rebuilt from the node's reported spans; a
    /// merge touching a table outside the snapshot is skipped; a merge whose source or
    /// target already has a restored Create/Remove is stale (that later concrete action
    /// wins). A target reported Working means the merge finished. With sources missing,
    /// a committed target (Initializing/Working) survives and an abortable one
    /// (Preparing/MergeReady) gets a cleanup operator. Otherwise the merged task is
    /// created (Scheduling on the node) and a restored merge operator is queued.
    /// Returns the merges to admit as `(sources, merged, node, target committed)`.
    fn restore_merge_operators(
        &mut self,
        ctx: &mut Ctx,
        responses: &[(NodeId, Message)],
        node_spans: &BTreeMap<NodeId, BTreeMap<DispatcherId, BootstrapTableSpan>>,
        table_set: &BTreeMap<TableId, &crate::upstream::TableInfo>,
        restored_ops: &mut Vec<Operator>,
        merges: &mut Vec<(Vec<DispatcherId>, DispatcherId, NodeId, bool)>,
    ) {
        let empty = BTreeMap::new();
        for (n, r) in responses {
            let Message::MaintainerBootstrapResponse { merge_operators, .. } = r else { continue };
            let spans = node_spans.get(n).unwrap_or(&empty);
            for req in merge_operators {
                let merged = req.merged_dispatcher_id;
                if req.dispatcher_ids.len() < 2 || merged.is_zero() {
                    continue;
                }
                let mut sources: Vec<DispatcherId> = Vec::new();
                let mut created = Vec::new();
                let (mut complete, mut skip) = (true, false);
                for id in &req.dispatcher_ids {
                    if sources.contains(id) {
                        continue;
                    }
                    if let Some(t) = self.pipe.sc.get(id) {
                        if !table_set.contains_key(&t.span.table_id) {
                            skip = true;
                            break;
                        }
                        sources.push(*id);
                        continue;
                    }
                    match spans.get(id) {
                        Some(b) if !matches!(b.state, ComponentState::Stopped | ComponentState::Removed) => {
                            if !table_set.contains_key(&b.span.table_id) {
                                skip = true;
                                break;
                            }
                            self.pipe.sc.insert(SpanReplication {
                                id: *id,
                                span: b.span,
                                schema_id: b.schema_id,
                                node: Some(*n),
                                state: ReplicaState::Replicating,
                                checkpoint_ts: b.checkpoint_ts.max(1),
                                last_state: Some(b.state),
                                block_state: b.block_state.clone(),
                            });
                            created.push(*id);
                            sources.push(*id);
                        }
                        _ => {
                            complete = false;
                            break;
                        }
                    }
                }
                let minfo = spans.get(&merged).cloned();
                if skip || minfo.as_ref().map(|m| !table_set.contains_key(&m.span.table_id)).unwrap_or(false) {
                    hit(P::BootstrapMergeJournalDroppedTable);
                    for id in created {
                        self.pipe.sc.remove(&id);
                    }
                    continue;
                }
                let committed = minfo
                    .as_ref()
                    .map(|m| matches!(m.state, ComponentState::Initializing | ComponentState::Working))
                    .unwrap_or(false);
                if restored_ops.iter().any(|o| o.id() == merged || sources.contains(&o.id())) {
                    hit(P::BootstrapMergeJournalConflict);
                    self.trace(
                        ctx,
                        "merge journal conflicts with a restored operator",
                        vec![("dispatcher", merged.to_string())],
                    );
                    if let Some(op) = self.reconcile_unrestorable_merge_info(merged, *n, minfo.as_ref(), &sources) {
                        restored_ops.push(op);
                    }
                    continue;
                }
                if let Some(m) = minfo.as_ref().filter(|m| m.state == ComponentState::Working) {
                    self.ensure_merged_task(merged, *n, m, ReplicaState::Replicating);
                    for s in &sources {
                        self.pipe.sc.remove(s);
                    }
                    hit(P::BootstrapMergeAlreadyFinished);
                    self.trace(
                        ctx,
                        "merge already finished before bootstrap",
                        vec![("dispatcher", merged.to_string())],
                    );
                    continue;
                }
                if !complete || sources.len() < 2 {
                    hit(P::BootstrapMergeSourcesMissing);
                    if committed || minfo.is_some() {
                        if let Some(op) = self.reconcile_unrestorable_merge_info(merged, *n, minfo.as_ref(), &sources) {
                            restored_ops.push(op);
                        }
                    } else {
                        for id in created {
                            self.pipe.sc.remove(&id);
                        }
                    }
                    continue;
                }
                sources.sort_by_key(|s| self.pipe.sc.get(s).map(|r| r.span.start).unwrap_or(0));
                if self.pipe.sc.get(&merged).is_none() {
                    match &minfo {
                        Some(m) => self.ensure_merged_task(merged, *n, m, ReplicaState::Scheduling),
                        None => {
                            let reps: Vec<&SpanReplication> =
                                sources.iter().filter_map(|s| self.pipe.sc.get(s)).collect();
                            let span = TableSpan {
                                table_id: reps[0].span.table_id,
                                start: reps[0].span.start,
                                end: reps[reps.len() - 1].span.end,
                            };
                            let cp = reps.iter().map(|r| r.checkpoint_ts).min().unwrap_or(1);
                            let schema_id = reps[0].schema_id;
                            self.pipe.sc.insert(SpanReplication {
                                id: merged,
                                span,
                                schema_id,
                                node: Some(*n),
                                state: ReplicaState::Scheduling,
                                checkpoint_ts: cp,
                                last_state: Some(ComponentState::Preparing),
                                block_state: None,
                            });
                        }
                    }
                }
                hit(P::BootstrapMergeJournalRestored);
                merges.push((sources, merged, *n, committed));
            }
        }
    }

    /// `removeUnexpectedBootstrapOverlaps` (maintainer/maintainer_controller_bootstrap.go:665-729):
    /// per table, the working spans are taken narrowest-first in key order and accepted
    /// greedily; one that overlaps an accepted span, with neither under a restored
    /// operator and no merge relation between them, is rejected. A rejected span stays as
    /// a Replicating task (temporary coverage, so nothing is placed over it) under a
    /// cleanup O_Remove that, once the dispatcher stopped, drops the task and adds Absent
    /// spans for what no other task covers (`addBootstrapCleanupOperator`,
    /// `repairBootstrapTableCoverage`, :731-800).
    ///
    /// Only tables of the snapshot are checked here: the working spans of other tables are
    /// adopted or cleaned up as a whole by [`Self::handle_remaining_working_tasks`] (TiCDC
    /// checks them too, and its repair would then add spans for a table it does not track).
    fn remove_unexpected_overlaps(
        &mut self,
        ctx: &mut Ctx,
        responses: &[(NodeId, Message)],
        node_spans: &BTreeMap<NodeId, BTreeMap<DispatcherId, BootstrapTableSpan>>,
        table_set: &BTreeMap<TableId, &crate::upstream::TableInfo>,
        working: &mut BTreeMap<TableId, Vec<SpanReplication>>,
        ops: &mut Vec<Operator>,
    ) {
        let evidence = merge_evidence(responses, node_spans);
        let related = |a: DispatcherId, b: DispatcherId| evidence.contains(&(a, b)) || evidence.contains(&(b, a));
        let has_op: BTreeSet<DispatcherId> = ops.iter().map(|o| o.id()).collect();
        for (table, spans) in working.iter_mut().filter(|(t, _)| table_set.contains_key(t)) {
            let mut candidates = std::mem::take(spans);
            // Abortable merge targets last (`Preparing`/`MergeReady`), then by key, narrower first.
            candidates.sort_by_key(|s| {
                let abortable = matches!(s.last_state, Some(ComponentState::Preparing | ComponentState::MergeReady));
                (abortable, s.span.start, s.span.end)
            });
            let mut accepted: Vec<SpanReplication> = Vec::new();
            for c in candidates {
                let conflict = accepted.iter().find(|e| {
                    e.span.start < c.span.end
                        && c.span.start < e.span.end
                        && !has_op.contains(&e.id)
                        && !has_op.contains(&c.id)
                        && !self.pipe.oc.has(&e.id)
                        && !self.pipe.oc.has(&c.id)
                        && !related(e.id, c.id)
                        && !waiting_merge_covered(e, &c)
                        && !waiting_merge_covered(&c, e)
                });
                let Some(kept) = conflict.map(|e| e.id) else {
                    accepted.push(c);
                    continue;
                };
                let Some(node) = c.node else { continue };
                hit(P::BootstrapOverlapCleanup);
                self.trace(
                    ctx,
                    "remove unexpected overlapping dispatcher reported during bootstrap",
                    vec![
                        ("table", table.to_string()),
                        ("kept", kept.to_string()),
                        ("removed", c.id.to_string()),
                        ("node", node.to_string()),
                    ],
                );
                let (id, span, schema_id) = (c.id, c.span, c.schema_id);
                if self.pipe.sc.get(&id).is_none() {
                    self.pipe.sc.insert(c);
                }
                ops.push(Operator::Remove(RemoveDispatcherOperator::new(
                    id,
                    span,
                    node,
                    OperatorType::Remove,
                    RemovePostFinish::RemoveTaskAndRepair { start_ts: self.start_checkpoint, schema_id },
                )));
            }
            *spans = accepted;
        }
    }

    fn ensure_merged_task(&mut self, merged: DispatcherId, n: NodeId, m: &BootstrapTableSpan, state: ReplicaState) {
        match self.pipe.sc.get_mut(&merged) {
            Some(t) => t.state = state,
            None => self.pipe.sc.insert(SpanReplication {
                id: merged,
                span: m.span,
                schema_id: m.schema_id,
                node: Some(n),
                state,
                checkpoint_ts: m.checkpoint_ts.max(1),
                last_state: Some(m.state),
                block_state: m.block_state.clone(),
            }),
        }
    }

    /// `reconcileUnrestorableBootstrapMerge` with the target's reported span.
    fn reconcile_unrestorable_merge_info(
        &mut self,
        merged: DispatcherId,
        n: NodeId,
        minfo: Option<&BootstrapTableSpan>,
        sources: &[DispatcherId],
    ) -> Option<Operator> {
        let committed =
            minfo.map(|m| matches!(m.state, ComponentState::Initializing | ComponentState::Working)).unwrap_or(false);
        if let Some(m) = minfo {
            self.ensure_merged_task(
                merged,
                n,
                m,
                if committed { ReplicaState::Replicating } else { ReplicaState::Scheduling },
            );
        }
        self.reconcile_unrestorable_merge(merged, n, committed, sources)
    }

    /// The merge commit point picks the survivor: a committed target stays and the
    /// sources' tasks go; an abortable target gets a cleanup Remove (its task stays as
    /// temporary coverage until the target has stopped).
    fn reconcile_unrestorable_merge(
        &mut self,
        merged: DispatcherId,
        n: NodeId,
        committed: bool,
        sources: &[DispatcherId],
    ) -> Option<Operator> {
        let span = self.pipe.sc.get(&merged)?.span;
        if committed {
            hit(P::BootstrapMergeReconcileCommitted);
            self.pipe.sc.mark_replicating(&merged);
            for s in sources {
                if *s != merged {
                    self.pipe.sc.remove(s);
                }
            }
            return None;
        }
        // `addBootstrapCleanupOperator`: once stopped, the range is repaired
        // (maintainer/maintainer_controller_bootstrap.go:731-765).
        hit(P::BootstrapMergeReconcileAbort);
        let schema_id = self.pipe.sc.get(&merged)?.schema_id;
        Some(Operator::Remove(RemoveDispatcherOperator::new(
            merged,
            span,
            n,
            OperatorType::Remove,
            RemovePostFinish::RemoveTaskAndRepair { start_ts: self.start_checkpoint, schema_id },
        )))
    }

    fn fill_holes(&mut self, ctx: &mut Ctx, table: TableId, schema_id: SchemaId, start_ts: Ts) {
        let spans: Vec<TableSpan> = self.pipe.sc.tasks_of_table(table).iter().map(|r| r.span).collect();
        for h in find_holes(table, &spans) {
            hit(P::BootstrapHoleFilled);
            let id = ctx.new_dispatcher_id();
            self.pipe.sc.insert(SpanReplication {
                id,
                span: h,
                schema_id,
                node: None,
                state: ReplicaState::Absent,
                checkpoint_ts: start_ts.max(1),
                last_state: None,
                block_state: None,
            });
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
    /// A dispatcher whose table has no adding DDL in the history (it cannot be valid), or
    /// whose checkpoint is below that DDL (an earlier life of the table ID), gets a
    /// cleanup Remove operator, keeping its task as coverage until it stops.
    fn handle_remaining_working_tasks(
        &mut self,
        ctx: &mut Ctx,
        working: BTreeMap<TableId, Vec<SpanReplication>>,
        start_ts: Ts,
        schema: &dyn SchemaView,
        ops: &mut Vec<Operator>,
    ) {
        if working.is_empty() {
            return;
        }
        let history =
            if ctx.bug(Bug::IgnoreUnknownWorkingTable) { vec![] } else { schema.ddl_history(start_ts, u64::MAX) };
        for (table, spans) in working {
            // A table whose only reported span went to a restored Remove (step 3b) has
            // nothing left to adopt or clean up.
            if spans.is_empty() {
                continue;
            }
            if ctx.bug(Bug::IgnoreUnknownWorkingTable) {
                hit(P::BootstrapUnknownWorkingIgnored);
                for s in &spans {
                    self.trace(
                        ctx,
                        "found a working table that is not in initial table map, just ignore it",
                        vec![
                            ("table", table.to_string()),
                            ("dispatcher", s.id.to_string()),
                            ("node", s.node.map(|n| n.to_string()).unwrap_or_default()),
                        ],
                    );
                }
                continue;
            }
            // Any DDL that adds the table: CREATE TABLE(S), TRUNCATE, RECOVER, partition DDLs.
            let adder = history.iter().find(|d| d.need_added_tables.iter().any(|t| t.table_id == table));
            // A dispatcher the adding DDL created starts at its commit ts; one below it is
            // left from an earlier life of the table ID (dropped before the start ts, then
            // recovered after it) and must not be adopted into the new one.
            let adder = adder.filter(|d| {
                let same_life = spans.iter().all(|s| s.checkpoint_ts >= d.commit_ts);
                if !same_life {
                    hit(P::BootstrapUnknownWorkingOlderLife);
                }
                same_life
            });
            match adder {
                Some(ddl) => {
                    hit(P::BootstrapUnknownWorkingAdopted);
                    let schema_id = spans[0].schema_id;
                    for s in spans {
                        self.trace(
                            ctx,
                            "adopt working dispatcher of table created after start ts",
                            vec![
                                ("table", table.to_string()),
                                ("dispatcher", s.id.to_string()),
                                ("node", s.node.map(|n| n.to_string()).unwrap_or_default()),
                                ("create_ts", ddl.commit_ts.to_string()),
                            ],
                        );
                        if self.pipe.sc.get(&s.id).is_none() {
                            self.pipe.sc.insert(s);
                        }
                    }
                    let cp = ddl.commit_ts;
                    self.fill_holes(ctx, table, schema_id, cp);
                }
                None => {
                    for s in spans {
                        hit(P::BootstrapUnknownWorkingCleanup);
                        self.trace(
                            ctx,
                            "cleanup working dispatcher of unknown table",
                            vec![("table", table.to_string()), ("dispatcher", s.id.to_string())],
                        );
                        let (id, span, node) = (s.id, s.span, s.node.unwrap_or(self.node));
                        self.pipe.sc.insert(s);
                        ops.push(Operator::Remove(RemoveDispatcherOperator::new(
                            id,
                            span,
                            node,
                            OperatorType::Remove,
                            RemovePostFinish::RemoveTask,
                        )));
                    }
                }
            }
        }
    }
}

/// `buildBootstrapMergeEvidence` (maintainer/maintainer_controller_bootstrap.go:505-584): the
/// (source, target) pairs of every merge journal whose target is reported in a merge-target
/// state and whose sources (two or more, distinct, WaitingMerge, of the target's table) are
/// consecutive and exactly span the target.
/// The responses with only `mode`'s spans, in-flight operators and merge journals
/// (`buildWorkingTaskMap` and the restores skip other modes' entries).
fn responses_of_mode(responses: &[(NodeId, Message)], mode: Mode) -> Vec<(NodeId, Message)> {
    let mut out = responses.to_vec();
    for (_, r) in &mut out {
        if let Message::MaintainerBootstrapResponse { spans, operators, merge_operators, .. } = r {
            spans.retain(|s| s.mode == mode);
            operators.retain(|o| o.config.mode == mode);
            merge_operators.retain(|m| m.mode == mode);
        }
    }
    out
}

fn merge_evidence(
    responses: &[(NodeId, Message)],
    node_spans: &BTreeMap<NodeId, BTreeMap<DispatcherId, BootstrapTableSpan>>,
) -> BTreeSet<(DispatcherId, DispatcherId)> {
    let mut pairs = BTreeSet::new();
    for (n, r) in responses {
        let Message::MaintainerBootstrapResponse { merge_operators, .. } = r else { continue };
        let Some(reported) = node_spans.get(n) else { continue };
        for req in merge_operators {
            let merged = req.merged_dispatcher_id;
            let Some(target) = reported.get(&merged).filter(|_| !merged.is_zero()) else { continue };
            if !matches!(
                target.state,
                ComponentState::Preparing
                    | ComponentState::MergeReady
                    | ComponentState::Initializing
                    | ComponentState::Working
            ) {
                continue;
            }
            let mut ids = BTreeSet::new();
            let mut spans = Vec::new();
            let mut valid = true;
            for id in &req.dispatcher_ids {
                if id.is_zero() || *id == merged {
                    valid = false;
                    break;
                }
                if !ids.insert(*id) {
                    continue;
                }
                match reported.get(id) {
                    Some(s) if s.state == ComponentState::WaitingMerge && s.span.table_id == target.span.table_id => {
                        spans.push(s.span)
                    }
                    _ => {
                        valid = false;
                        break;
                    }
                }
            }
            if !valid || ids.len() < 2 {
                continue;
            }
            spans.sort_by_key(|s| s.start);
            let covers = spans[0].start == target.span.start && spans[spans.len() - 1].end == target.span.end;
            if !covers || spans.windows(2).any(|w| w[0].end != w[1].start) {
                continue;
            }
            pairs.extend(ids.into_iter().map(|s| (s, merged)));
        }
    }
    pairs
}

/// `isWaitingMergeSpanCoveredByTarget` (maintainer/maintainer_controller_bootstrap.go:634-652):
/// a WaitingMerge source inside a committed (Initializing/Working) target of its table.
fn waiting_merge_covered(source: &SpanReplication, target: &SpanReplication) -> bool {
    source.last_state == Some(ComponentState::WaitingMerge)
        && matches!(target.last_state, Some(ComponentState::Initializing | ComponentState::Working))
        && source.span.table_id == target.span.table_id
        && target.span.start <= source.span.start
        && target.span.end >= source.span.end
}
