use super::*;
use crate::coverage::{hit, Point as P};

/// What a Remove does once it has finished (and was not cancelled by task removal).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RemovePostFinish {
    /// Barrier drops and self-healing: nothing.
    None,
    /// Move/Split restore: mark the span absent (the basic scheduler re-adds it).
    MarkAbsent,
    /// Bootstrap cleanup of a dispatcher that must not stay: remove the task.
    RemoveTask,
    /// Bootstrap O_Remove restore of a table that exists (`repairBootstrapTableCoverage`):
    /// remove the task (temporary coverage while the remove ran), then add Absent spans,
    /// at the bootstrap start ts, for whatever of the table no other task covers.
    RemoveTaskAndRepair { start_ts: Ts, schema_id: SchemaId },
}

#[derive(Clone, Debug)]
pub struct RemoveDispatcherOperator {
    pub id: DispatcherId,
    pub span: TableSpan,
    pub node: NodeId,
    pub op_type: OperatorType,
    pub post: RemovePostFinish,
    pub finished: bool,
    pub removed: bool,
    /// Candidate fix `restored-remove-blocks-checkpoint` (not TiCDC): this restored
    /// removal holds the checkpoint at its span's checkpoint until it finishes.
    pub blocks_checkpoint: bool,
    throttle: SendThrottle,
}

impl RemoveDispatcherOperator {
    pub fn new(id: DispatcherId, span: TableSpan, node: NodeId, op_type: OperatorType, post: RemovePostFinish) -> Self {
        RemoveDispatcherOperator {
            id,
            span,
            node,
            op_type,
            post,
            finished: false,
            removed: false,
            blocks_checkpoint: false,
            throttle: SendThrottle::default(),
        }
    }
    pub fn schedule(&mut self, now: u64, epoch: Epoch) -> Option<OpMessage> {
        if self.finished || !self.throttle.should_send(now, self.node, ScheduleAction::Remove) {
            return None;
        }
        Some((self.node, remove_request(self.id, self.span, self.op_type, epoch)))
    }
    /// A terminal status from the node is recorded on the task and ends the removal; a
    /// finished removal ignores further statuses (maintainer/operator/operator_remove.go:93-106).
    pub fn check(&mut self, from: NodeId, st: &TableSpanStatus, sc: &mut SpanController) {
        if !self.finished && from == self.node && matches!(st.state, ComponentState::Stopped | ComponentState::Removed)
        {
            sc.update_status(&self.id, st);
            hit(P::OpRemoveStopped);
            self.finished = true;
        }
    }
    pub fn on_node_remove(&mut self, n: NodeId) {
        if n == self.node {
            hit(P::OpRemoveNodeLost);
            self.finished = true;
        }
    }
    pub fn on_task_removed(&mut self) {
        hit(P::OpRemoveTaskRemoved);
        self.finished = true;
        self.removed = true;
    }
    pub fn post_finish(&mut self, sc: &mut SpanController, new_id: &mut dyn FnMut() -> DispatcherId) {
        if self.removed {
            return;
        }
        match self.post {
            RemovePostFinish::None => {}
            RemovePostFinish::MarkAbsent => {
                hit(P::OpRemovePostFinishAbsent);
                if sc.get(&self.id).is_some() {
                    sc.mark_absent(&self.id);
                }
            }
            RemovePostFinish::RemoveTask => {
                hit(P::OpRemovePostFinishRemoveTask);
                sc.remove(&self.id);
            }
            RemovePostFinish::RemoveTaskAndRepair { start_ts, schema_id } => {
                sc.remove(&self.id);
                let table = self.span.table_id;
                let spans: Vec<TableSpan> = sc.tasks_of_table(table).iter().map(|r| r.span).collect();
                for hole in find_holes(table, &spans) {
                    hit(P::OpRemoveRepairHole);
                    let id = new_id();
                    sc.insert(crate::maintainer::span_controller::SpanReplication {
                        id,
                        span: hole,
                        schema_id,
                        node: None,
                        state: crate::maintainer::span_controller::ReplicaState::Absent,
                        checkpoint_ts: start_ts.max(1),
                        last_state: None,
                        block_state: None,
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn remove_finishes_only_on_terminal_status_from_its_node() {
        let mut op = RemoveDispatcherOperator::new(
            DispatcherId(3),
            TableSpan::full(1),
            NodeId(1),
            OperatorType::Remove,
            RemovePostFinish::None,
        );
        let mut sc = crate::maintainer::span_controller::SpanController::new(
            DispatcherId(1),
            NodeId(0),
            100,
            crate::config::SchedulerConfig::default(),
        );
        assert!(op.schedule(0, 1).is_some());
        op.check(
            NodeId(1),
            &TableSpanStatus {
                mode: Mode::Default,
                id: DispatcherId(3),
                state: ComponentState::WaitingMerge,
                checkpoint_ts: 0,
                event_size_per_second: 0,
            },
            &mut sc,
        );
        assert!(!op.finished, "WaitingMerge does not finish a remove");
        op.check(
            NodeId(2),
            &TableSpanStatus {
                mode: Mode::Default,
                id: DispatcherId(3),
                state: ComponentState::Stopped,
                checkpoint_ts: 0,
                event_size_per_second: 0,
            },
            &mut sc,
        );
        assert!(!op.finished, "status from another node");
        op.check(
            NodeId(1),
            &TableSpanStatus {
                mode: Mode::Default,
                id: DispatcherId(3),
                state: ComponentState::Stopped,
                checkpoint_ts: 0,
                event_size_per_second: 0,
            },
            &mut sc,
        );
        assert!(op.finished);
        assert!(op.schedule(20_000, 1).is_none());
    }
}
