//! A test double for the controller's tests (built only with `cfg(test)`): an operator
//! that counts how often the controller calls each of its entry points, like the
//! hand-written operators of TiCDC's controller tests
//! (`countingOperator`, `neverFinishOperator`, `blockingFinishOperator`).

use super::*;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// Call counters, shared between the operator and the test (they survive the operator).
#[derive(Debug, Default)]
pub struct ProbeCounts {
    pub start: AtomicU32,
    pub schedule: AtomicU32,
    pub check: AtomicU32,
    pub node_removed: AtomicU32,
    pub task_removed: AtomicU32,
    pub post_finish: AtomicU32,
}

impl ProbeCounts {
    pub fn get(c: &AtomicU32) -> u32 {
        c.load(Ordering::SeqCst)
    }
}

#[derive(Clone, Debug)]
pub struct ProbeOperator {
    pub id: DispatcherId,
    /// Where its (dummy) message goes; also its only affected node.
    pub target: Option<NodeId>,
    pub finished: bool,
    /// `OnTaskRemoved` finishes it (as `blockingFinishOperator` does).
    pub finish_on_task_removed: bool,
    pub blocks_checkpoint: bool,
    pub counts: Arc<ProbeCounts>,
}

impl ProbeOperator {
    pub fn new(id: DispatcherId, target: Option<NodeId>, blocks_checkpoint: bool) -> Self {
        ProbeOperator {
            id,
            target,
            finished: false,
            finish_on_task_removed: false,
            blocks_checkpoint,
            counts: Arc::new(ProbeCounts::default()),
        }
    }
    fn bump(c: &AtomicU32) {
        c.fetch_add(1, Ordering::SeqCst);
    }
    pub fn start(&mut self) {
        Self::bump(&self.counts.start);
    }
    pub fn schedule(&mut self, epoch: Epoch) -> Option<OpMessage> {
        Self::bump(&self.counts.schedule);
        let to = self.target?;
        Some((to, remove_request(self.id, TableSpan::default(), OperatorType::Remove, epoch)))
    }
    pub fn check(&mut self) {
        Self::bump(&self.counts.check);
    }
    pub fn on_node_remove(&mut self) {
        Self::bump(&self.counts.node_removed);
    }
    pub fn on_task_removed(&mut self) {
        Self::bump(&self.counts.task_removed);
        if self.finish_on_task_removed {
            self.finished = true;
        }
    }
    pub fn post_finish(&mut self) {
        Self::bump(&self.counts.post_finish);
    }
}
