use super::*;
use crate::coverage::{hit, Point as P};

/// Split: remove the original dispatcher, then replace its task by new spans (new
/// IDs) that the basic scheduler places (or Add operators on given targets).
#[derive(Clone, Debug)]
pub struct SplitDispatcherOperator {
    pub id: DispatcherId,
    pub span: TableSpan,
    pub origin: NodeId,
    pub split_spans: Vec<TableSpan>,
    pub targets: Vec<NodeId>,
    pub checkpoint_ts: Ts,
    pub finished: bool,
    pub removed: bool,
    throttle: SendThrottle,
}

impl SplitDispatcherOperator {
    pub fn new(
        id: DispatcherId,
        span: TableSpan,
        origin: NodeId,
        split_spans: Vec<TableSpan>,
        targets: Vec<NodeId>,
    ) -> Self {
        SplitDispatcherOperator {
            id,
            span,
            origin,
            split_spans,
            targets,
            checkpoint_ts: 0,
            finished: false,
            removed: false,
            throttle: SendThrottle::default(),
        }
    }
    /// The split starts from the task's checkpoint; a stop status can only raise it
    /// (maintainer/operator/operator_split.go:90, 137-140; taken here when the operator
    /// starts, which admission does right after construction).
    pub fn start(&mut self, sc: &mut SpanController) {
        if let Some(r) = sc.get(&self.id) {
            self.checkpoint_ts = self.checkpoint_ts.max(r.checkpoint_ts);
        }
        sc.mark_scheduling(&self.id);
    }
    pub fn schedule(&mut self, _sc: &SpanController, now: u64, epoch: Epoch) -> Option<OpMessage> {
        if self.finished || !self.throttle.should_send(now, self.origin, ScheduleAction::Remove) {
            return None;
        }
        Some((self.origin, remove_request(self.id, self.span, OperatorType::Split, epoch)))
    }
    pub fn check(&mut self, from: NodeId, st: &TableSpanStatus) {
        if from == self.origin && st.state != ComponentState::Working {
            hit(P::OpSplitOriginStopped);
            self.checkpoint_ts = self.checkpoint_ts.max(st.checkpoint_ts);
            self.finished = true;
        }
    }
    pub fn on_node_remove(&mut self, n: NodeId) {
        if n == self.origin {
            hit(P::OpSplitOriginLost);
            self.finished = true;
            self.removed = true;
        }
    }
    pub fn on_task_removed(&mut self) {
        hit(P::OpSplitTaskRemoved);
        self.finished = true;
        self.removed = true;
    }
    pub fn post_finish(&mut self, sc: &mut SpanController, new_id: &mut dyn FnMut() -> DispatcherId) -> Vec<Operator> {
        if self.removed {
            if sc.get(&self.id).is_some() {
                sc.mark_absent(&self.id);
            }
            return vec![];
        }
        let cp = if self.checkpoint_ts == 0 {
            sc.get(&self.id).map(|r| r.checkpoint_ts).unwrap_or(1)
        } else {
            self.checkpoint_ts
        };
        hit(P::OpSplitReplaced);
        let ids = sc.replace_replica_set(&self.id, &self.split_spans, cp, new_id);
        if self.targets.len() == ids.len() && !ids.is_empty() {
            hit(P::OpSplitWithTargets);
            return ids
                .iter()
                .zip(self.targets.iter())
                .map(|(id, n)| Operator::Add(AddDispatcherOperator::new(*id, *n, OperatorType::Split)))
                .collect();
        }
        vec![]
    }
}
