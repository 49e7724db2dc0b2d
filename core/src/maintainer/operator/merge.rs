use super::*;
use crate::coverage::{hit, Point as P};

/// Merge: replace two or more consecutive spans of one table on one node by a new
/// dispatcher (new ID) covering their union (`MergeDispatcherOperator`).
///
/// The merged task is inserted as Scheduling on the origin node before the operator is
/// admitted (`AddSchedulingReplicaSet`); every source is held by an
/// [`OccupyDispatcherOperator`] so no other operator can touch it while merging. The
/// operator sends `MergeDispatcherRequest` to the origin node until the merged
/// dispatcher reports Working there. It does not hold the checkpoint back
/// (`BlockTsForward` is false): the dispatcher manager's watermark covers the merge.
#[derive(Clone, Debug)]
pub struct MergeDispatcherOperator {
    /// The merged dispatcher's ID (the operator's ID).
    pub id: DispatcherId,
    pub sources: Vec<DispatcherId>,
    pub origin: NodeId,
    pub finished: bool,
    pub aborted: bool,
    pub aborted_by_ddl: bool,
    pub checkpoint_ts: Ts,
    /// Built from a bootstrap merge journal (`NewRestoredMergeDispatcherOperator`).
    pub restored: bool,
    throttle: SendThrottle,
}

impl MergeDispatcherOperator {
    pub fn new(id: DispatcherId, sources: Vec<DispatcherId>, origin: NodeId, restored: bool) -> Self {
        MergeDispatcherOperator {
            id,
            sources,
            origin,
            finished: false,
            aborted: false,
            aborted_by_ddl: false,
            checkpoint_ts: 0,
            restored,
            throttle: SendThrottle::default(),
        }
    }
    /// `NewMergeDispatcherOperator` (maintainer/operator/operator_merge.go:126-160): the
    /// merged task (the union of the sources' spans) is registered as Scheduling on the
    /// sources' node with the sources' minimum checkpoint (at least 1), then the operator
    /// is built. The sources must have passed [`check_merge`].
    pub fn new_with_merged_task(sc: &mut SpanController, sources: Vec<DispatcherId>, merged: DispatcherId) -> Self {
        let first = sc.get(&sources[0]).expect("merge source exists").clone();
        let last = sc.get(&sources[sources.len() - 1]).expect("merge source exists").span;
        let node = first.node.expect("merge source has a node");
        let cp = sources.iter().filter_map(|s| sc.get(s)).map(|r| r.checkpoint_ts).min().unwrap_or(1).max(1);
        sc.insert(crate::maintainer::span_controller::SpanReplication {
            id: merged,
            span: TableSpan { table_id: first.span.table_id, start: first.span.start, end: last.end },
            schema_id: first.schema_id,
            node: Some(node),
            state: crate::maintainer::span_controller::ReplicaState::Scheduling,
            checkpoint_ts: cp,
            last_state: None,
            block_state: None,
        });
        MergeDispatcherOperator::new(merged, sources, node, false)
    }
    pub fn start(&mut self, sc: &mut SpanController) {
        for s in &self.sources {
            sc.mark_scheduling(s);
        }
    }
    pub fn schedule(&mut self, now: u64, epoch: Epoch) -> Option<(NodeId, MergeDispatcherRequest)> {
        if self.finished || self.aborted {
            return None;
        }
        // The throttle keys on (node, action); a merge request is neither Create nor
        // Remove, so it uses Create's slot (only this operator uses this throttle).
        if !self.throttle.should_send(now, self.origin, ScheduleAction::Create) {
            return None;
        }
        Some((
            self.origin,
            MergeDispatcherRequest {
                // The operator controller stamps its mode on what its operators send.
                mode: Mode::Default,
                dispatcher_ids: self.sources.clone(),
                merged_dispatcher_id: self.id,
                maintainer_epoch: epoch,
            },
        ))
    }
    pub fn check(&mut self, from: NodeId, st: &TableSpanStatus) {
        if from == self.origin && st.state == ComponentState::Working {
            hit(P::OpMergeWorking);
            self.checkpoint_ts = st.checkpoint_ts;
            self.finished = true;
        }
    }
    pub fn on_node_remove(&mut self, n: NodeId) {
        if n == self.origin {
            hit(P::OpMergeOriginLost);
            self.aborted = true;
            self.finished = true;
        }
    }
    pub fn on_task_removed(&mut self) {
        hit(P::OpMergeTaskRemoved);
        self.aborted_by_ddl = true;
        self.aborted = true;
        self.finished = true;
    }
    /// Success: sources' tasks go, the merged task is Replicating. Aborted by node loss:
    /// sources Absent (rescheduled), merged task removed. Aborted by a DDL drop: sources
    /// back to Replicating so the drop path still sees their nodes, merged task removed.
    /// The controller finishes the occupy operators after this.
    pub fn post_finish(&mut self, sc: &mut SpanController) {
        if self.aborted {
            for s in &self.sources {
                if self.aborted_by_ddl {
                    sc.mark_replicating(s);
                } else {
                    sc.mark_absent(s);
                }
            }
            sc.remove(&self.id);
            return;
        }
        for s in &self.sources {
            sc.remove(s);
        }
        hit(P::OpMergeCommitted);
        if self.checkpoint_ts > 0 {
            sc.update_status(
                &self.id,
                &TableSpanStatus {
                    mode: sc.mode,
                    id: self.id,
                    state: ComponentState::Working,
                    checkpoint_ts: self.checkpoint_ts,
                    event_size_per_second: 0,
                },
            );
        }
        sc.mark_replicating(&self.id);
    }
}

/// Occupy: a placeholder holding a merge source; sends nothing, finished by its merge.
#[derive(Clone, Debug)]
pub struct OccupyDispatcherOperator {
    pub id: DispatcherId,
    pub node: Option<NodeId>,
    pub finished: bool,
    /// Ended by the task's removal (maintainer/operator/operator_occupy.go:89-92).
    pub removed: bool,
}

impl OccupyDispatcherOperator {
    pub fn new(id: DispatcherId, node: Option<NodeId>) -> Self {
        OccupyDispatcherOperator { id, node, finished: false, removed: false }
    }
    pub fn on_task_removed(&mut self) {
        self.finished = true;
        self.removed = true;
    }
    pub fn on_node_remove(&mut self, n: NodeId, sc: &mut SpanController) {
        if self.node == Some(n) && !self.finished {
            hit(P::OpOccupyNodeLost);
            sc.mark_absent(&self.id);
            self.finished = true;
        }
    }
}

/// `checkMergeOperator`: at least two spans, consecutive in key order, on one node.
pub fn check_merge(sc: &SpanController, sources: &[DispatcherId]) -> Result<(NodeId, TableSpan), String> {
    if sources.len() < 2 {
        return Err("fewer than two spans".into());
    }
    let mut reps = Vec::new();
    for id in sources {
        reps.push(sc.get(id).ok_or_else(|| format!("no task {}", id))?);
    }
    let node = reps[0].node.ok_or("first span has no node")?;
    let table = reps[0].span.table_id;
    for w in reps.windows(2) {
        if w[1].span.table_id != table || w[0].span.end != w[1].span.start {
            return Err(format!("spans {} and {} are not consecutive", w[0].span, w[1].span));
        }
    }
    if reps.iter().any(|r| r.node != Some(node)) {
        return Err("spans are not on one node".into());
    }
    Ok((node, TableSpan { table_id: table, start: reps[0].span.start, end: reps[reps.len() - 1].span.end }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SchedulerConfig;
    use crate::maintainer::span_controller::{ReplicaState, SpanReplication};
    use std::collections::BTreeSet;

    fn sc_two_halves() -> SpanController {
        let mut sc = SpanController::new(DispatcherId(1), NodeId(0), 100, SchedulerConfig::default());
        let halves = split_span_evenly(&TableSpan::full(6), 2);
        for (i, s) in halves.into_iter().enumerate() {
            sc.insert(SpanReplication {
                id: DispatcherId(10 + i as u64),
                span: s,
                schema_id: 1,
                node: Some(NodeId(1)),
                state: ReplicaState::Replicating,
                checkpoint_ts: 100 + i as u64,
                last_state: None,
                block_state: None,
            });
        }
        sc
    }
    fn alive() -> BTreeSet<NodeId> {
        [NodeId(0), NodeId(1), NodeId(2)].into_iter().collect()
    }
    fn working(id: u64, cp: Ts) -> TableSpanStatus {
        TableSpanStatus {
            mode: Mode::Default,
            id: DispatcherId(id),
            state: ComponentState::Working,
            checkpoint_ts: cp,
            event_size_per_second: 0,
        }
    }

    #[test]
    fn merge_success_replaces_sources_by_merged_span() {
        let mut sc = sc_two_halves();
        let mut oc = OperatorController::new();
        oc.add_merge_operator(vec![DispatcherId(10), DispatcherId(11)], DispatcherId(99), &mut sc, &alive(), 0)
            .unwrap();
        assert_eq!(sc.get(&DispatcherId(99)).unwrap().state, ReplicaState::Scheduling);
        assert_eq!(sc.get(&DispatcherId(99)).unwrap().checkpoint_ts, 100, "min of the sources");
        assert_eq!(sc.get(&DispatcherId(10)).unwrap().state, ReplicaState::Scheduling);
        assert_eq!(oc.running().count(), 3, "merge + two occupy");
        let (msgs, _, _) = oc.execute(&mut sc, &alive(), 0, 5, &mut || DispatcherId(0));
        assert_eq!(msgs.len(), 1);
        assert!(
            matches!(&msgs[0], (NodeId(1), OpRequest::Merge(r)) if r.merged_dispatcher_id == DispatcherId(99) && r.maintainer_epoch == 5)
        );
        // A Working status from another node does not finish it.
        oc.update_operator_status(&DispatcherId(99), NodeId(2), &working(99, 150), &mut sc);
        let (_, fin, _) = oc.execute(&mut sc, &alive(), 1, 5, &mut || DispatcherId(0));
        assert!(fin.is_empty());
        oc.update_operator_status(&DispatcherId(99), NodeId(1), &working(99, 150), &mut sc);
        let (_, fin, _) = oc.execute(&mut sc, &alive(), 2, 5, &mut || DispatcherId(0));
        // The merge is popped first and finalized although not due; its PostFinish
        // finishes the occupy operators, which the same pass pops and finalizes.
        let kinds: Vec<&str> = fin.iter().map(|(op, _)| op.kind()).collect();
        assert_eq!(kinds, vec!["merge", "occupy", "occupy"], "occupy operators finish after the merge");
        assert!(sc.get(&DispatcherId(10)).is_none() && sc.get(&DispatcherId(11)).is_none());
        assert_eq!(sc.get(&DispatcherId(99)).unwrap().state, ReplicaState::Replicating);
        assert_eq!(sc.table_partition_problems(6), (vec![], vec![]));
        assert_eq!(oc.running().count(), 0);
    }

    #[test]
    fn merge_origin_lost_marks_sources_absent_and_drops_merged_task() {
        let mut sc = sc_two_halves();
        let mut oc = OperatorController::new();
        oc.add_merge_operator(vec![DispatcherId(10), DispatcherId(11)], DispatcherId(99), &mut sc, &alive(), 0)
            .unwrap();
        oc.on_node_removed(NodeId(1), &mut sc);
        oc.execute(&mut sc, &alive(), 0, 5, &mut || DispatcherId(0));
        oc.execute(&mut sc, &alive(), 1, 5, &mut || DispatcherId(0));
        assert!(sc.get(&DispatcherId(99)).is_none());
        assert_eq!(sc.get(&DispatcherId(10)).unwrap().state, ReplicaState::Absent);
        assert_eq!(sc.get(&DispatcherId(11)).unwrap().state, ReplicaState::Absent);
        assert_eq!(oc.running().count(), 0);
    }

    #[test]
    fn merge_removed_by_ddl_keeps_source_nodes_for_the_drop() {
        let mut sc = sc_two_halves();
        let mut oc = OperatorController::new();
        oc.add_merge_operator(vec![DispatcherId(10), DispatcherId(11)], DispatcherId(99), &mut sc, &alive(), 0)
            .unwrap();
        oc.on_task_removed(&DispatcherId(99), &mut sc);
        assert!(sc.get(&DispatcherId(99)).is_none());
        let r = sc.get(&DispatcherId(10)).unwrap();
        assert_eq!((r.state, r.node), (ReplicaState::Replicating, Some(NodeId(1))));
        // The occupy operators are done too, so the drop path can install removes.
        oc.execute(&mut sc, &alive(), 0, 5, &mut || DispatcherId(0));
        assert_eq!(oc.running().count(), 0);
    }

    #[test]
    fn merge_rejects_spans_on_two_nodes_and_leaves_no_trace() {
        let mut sc = sc_two_halves();
        sc.get_mut(&DispatcherId(11)).unwrap().node = Some(NodeId(2));
        let mut oc = OperatorController::new();
        assert!(oc
            .add_merge_operator(vec![DispatcherId(10), DispatcherId(11)], DispatcherId(99), &mut sc, &alive(), 0)
            .is_err());
        assert!(sc.get(&DispatcherId(99)).is_none());
        assert_eq!(oc.running().count(), 0);
    }

    #[test]
    fn occupied_source_rejects_other_operators() {
        let mut sc = sc_two_halves();
        let mut oc = OperatorController::new();
        oc.add_merge_operator(vec![DispatcherId(10), DispatcherId(11)], DispatcherId(99), &mut sc, &alive(), 0)
            .unwrap();
        let mv = Operator::Move(MoveDispatcherOperator::new(DispatcherId(10), Some(NodeId(1)), NodeId(2)));
        assert_eq!(oc.add_operator(mv, &mut sc, &alive(), 0), Err(controller::AdmitError::AlreadyExists));
    }
}
