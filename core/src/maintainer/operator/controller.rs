//! Operator controller: admission, the running queue and status routing.
//!
//! TiCDC keeps `operators map[DispatcherID]*OperatorWithTime` plus a running heap that
//! owns its own references: when two operators for one ID slip through admission,
//! the map holds only the last one but both stay in the heap and keep sending. This
//! model keeps the same two structures (`by_id` and `queue` over `slots`) so that the
//! historical race has its historical consequence.
//!
//! Admission comes in two shapes:
//! - fixed (PR #6070): [`OperatorController::add_operator`] checks and inserts in one step;
//! - historical (`nonatomic-operator-admission`): [`OperatorController::admission_check`]
//!   and [`OperatorController::admission_insert`] are separate steps the simulator may
//!   interleave with another goroutine, as `AddOperator` did across its two lock sections.

use super::*;
use crate::maintainer::span_controller::SpanController;
use std::collections::{BTreeMap, BTreeSet};

/// What one `execute` round yields: requests to send, finished operators with the
/// reason they ended, and follow-up operators to admit.
pub type ExecuteRound = (Vec<(NodeId, OpRequest)>, Vec<(Operator, &'static str)>, Vec<Operator>);

/// Delay before an operator is polled again after `schedule()`.
pub const OPERATOR_REPOLL_MS: u64 = 500;

#[derive(Debug)]
pub struct Slot {
    pub op: Operator,
    pub notify_at: u64,
    pub done: bool,
}

#[derive(Debug, Default)]
pub struct OperatorController {
    pub slots: BTreeMap<u64, Slot>,
    pub by_id: BTreeMap<DispatcherId, u64>,
    next_slot: u64,
    /// IDs allowed while quiescing (maintainer removing mode); None = not quiescing.
    pub quiesce_except: Option<BTreeSet<DispatcherId>>,
}

#[derive(Debug, PartialEq, Eq)]
pub enum AdmitError {
    Quiescing,
    AlreadyExists,
    NoTask,
}

impl OperatorController {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn get(&self, id: &DispatcherId) -> Option<&Operator> {
        self.by_id.get(id).and_then(|s| self.slots.get(s)).map(|s| &s.op)
    }

    pub fn has(&self, id: &DispatcherId) -> bool {
        self.by_id.contains_key(id)
    }

    pub fn size(&self) -> usize {
        self.by_id.len()
    }

    /// Every operator still running, including ones that lost the `by_id` entry.
    pub fn running(&self) -> impl Iterator<Item = &Operator> {
        self.slots.values().filter(|s| !s.done).map(|s| &s.op)
    }

    fn allowed(&self, id: &DispatcherId) -> bool {
        self.quiesce_except.as_ref().map(|s| s.contains(id)).unwrap_or(true)
    }

    /// First admission step: quiesce, duplicate and task checks (read side).
    pub fn admission_check(&self, id: &DispatcherId, sc: &SpanController) -> Result<(), AdmitError> {
        if !self.allowed(id) {
            return Err(AdmitError::Quiescing);
        }
        if self.by_id.contains_key(id) {
            return Err(AdmitError::AlreadyExists);
        }
        if sc.get(id).is_none() {
            return Err(AdmitError::NoTask);
        }
        Ok(())
    }

    /// Second admission step: register (overwriting!), start, check affected nodes, queue.
    pub fn admission_insert(&mut self, mut op: Operator, sc: &mut SpanController, alive: &BTreeSet<NodeId>, now: u64) {
        let id = op.id();
        op.start(sc);
        for n in op.affected_nodes() {
            match n {
                None => op.on_node_remove(NodeId(u32::MAX), sc),
                Some(n) if !alive.contains(&n) => op.on_node_remove(n, sc),
                _ => {}
            }
        }
        self.next_slot += 1;
        let slot = self.next_slot;
        self.slots.insert(slot, Slot { op, notify_at: now, done: false });
        self.by_id.insert(id, slot);
    }

    /// Atomic admission (the fixed behaviour). Returns false when rejected.
    pub fn add_operator(
        &mut self,
        op: Operator,
        sc: &mut SpanController,
        alive: &BTreeSet<NodeId>,
        now: u64,
    ) -> Result<(), AdmitError> {
        self.admission_check(&op.id(), sc)?;
        self.admission_insert(op, sc, alive, now);
        Ok(())
    }

    /// A status from `from` for dispatcher `id` (every status of every heartbeat).
    pub fn update_operator_status(
        &mut self,
        id: &DispatcherId,
        from: NodeId,
        st: &TableSpanStatus,
        sc: &mut SpanController,
    ) {
        if let Some(slot) = self.by_id.get(id) {
            if let Some(s) = self.slots.get_mut(slot) {
                s.op.check(from, st, sc);
            }
        }
    }

    /// `OnNodeRemoved`: tasks on the node without operator become absent; every operator sees the loss.
    pub fn on_node_removed(&mut self, n: NodeId, sc: &mut SpanController) {
        for id in sc.tasks_on_node(n) {
            if !self.by_id.contains_key(&id) {
                sc.mark_absent(&id);
            }
        }
        for s in self.slots.values_mut() {
            if !s.done {
                s.op.on_node_remove(n, sc);
            }
        }
    }

    /// Cancel the operator of a task that is being removed (barrier drop path).
    pub fn on_task_removed(&mut self, id: &DispatcherId, sc: &mut SpanController) {
        if let Some(slot) = self.by_id.remove(id) {
            let mut occupied = Vec::new();
            if let Some(s) = self.slots.get_mut(&slot) {
                s.op.on_task_removed(sc);
                s.done = true;
                let _ = s.op.post_finish(sc, &mut || DispatcherId(0));
                if let Operator::Merge(m) = &s.op {
                    occupied = m.sources.clone();
                }
            }
            self.slots.remove(&slot);
            self.finish_occupy(&occupied);
        }
    }

    /// A merge's occupy operators are finished after the merge's own post-finish, so
    /// late statuses of its sources still find an operator until then.
    fn finish_occupy(&mut self, sources: &[DispatcherId]) {
        for id in sources {
            if let Some(s) = self.by_id.get(id).and_then(|slot| self.slots.get_mut(slot)) {
                if let Operator::Occupy(o) = &mut s.op {
                    o.finished = true;
                }
            }
        }
    }

    /// `AddMergeOperator`: check the sources (>= 2, consecutive, one node), occupy each
    /// (rolling back on failure), insert the merged task as Scheduling on the node, then
    /// admit the merge operator keyed by the merged ID.
    pub fn add_merge_operator(
        &mut self,
        sources: Vec<DispatcherId>,
        merged: DispatcherId,
        sc: &mut SpanController,
        alive: &BTreeSet<NodeId>,
        now: u64,
    ) -> Result<(), String> {
        let (node, span) = merge::check_merge(sc, &sources)?;
        if sc.get(&merged).is_some() {
            return Err(format!("merged dispatcher {} already exists", merged));
        }
        self.occupy_all(&sources, sc, alive, now)?;
        let first = sc.get(&sources[0]).unwrap().clone();
        let cp = sources.iter().filter_map(|s| sc.get(s)).map(|r| r.checkpoint_ts).min().unwrap_or(1).max(1);
        sc.insert(crate::maintainer::span_controller::SpanReplication {
            id: merged,
            span,
            schema_id: first.schema_id,
            node: Some(node),
            state: crate::maintainer::span_controller::ReplicaState::Scheduling,
            checkpoint_ts: cp,
            last_state: None,
            block_state: None,
        });
        let op = Operator::Merge(MergeDispatcherOperator::new(merged, sources.clone(), node, false));
        if let Err(e) = self.add_operator(op, sc, alive, now) {
            self.cancel_occupy(&sources);
            sc.remove(&merged);
            return Err(format!("merge operator not admitted: {:?}", e));
        }
        Ok(())
    }

    /// `AddRestoredMergeOperator`: like [`Self::add_merge_operator`] with a merged task
    /// that already exists (rebuilt at bootstrap from the merge journal).
    pub fn add_restored_merge_operator(
        &mut self,
        sources: Vec<DispatcherId>,
        merged: DispatcherId,
        sc: &mut SpanController,
        alive: &BTreeSet<NodeId>,
        now: u64,
    ) -> Result<(), String> {
        let (node, _) = merge::check_merge(sc, &sources)?;
        if sc.get(&merged).is_none() {
            return Err(format!("merged task {} missing", merged));
        }
        self.occupy_all(&sources, sc, alive, now)?;
        let op = Operator::Merge(MergeDispatcherOperator::new(merged, sources.clone(), node, true));
        if let Err(e) = self.add_operator(op, sc, alive, now) {
            self.cancel_occupy(&sources);
            return Err(format!("restored merge operator not admitted: {:?}", e));
        }
        sc.mark_scheduling(&merged);
        Ok(())
    }

    fn occupy_all(
        &mut self,
        sources: &[DispatcherId],
        sc: &mut SpanController,
        alive: &BTreeSet<NodeId>,
        now: u64,
    ) -> Result<(), String> {
        let mut done = Vec::new();
        for id in sources {
            let node = sc.get(id).and_then(|r| r.node);
            if let Err(e) =
                self.add_operator(Operator::Occupy(OccupyDispatcherOperator::new(*id, node)), sc, alive, now)
            {
                self.cancel_occupy(&done);
                return Err(format!("cannot occupy {}: {:?}", id, e));
            }
            done.push(*id);
        }
        Ok(())
    }

    /// `cancelOperator` for occupy operators, by identity: only an Occupy is cancelled,
    /// never a later operator that took the same ID (PR #6070).
    fn cancel_occupy(&mut self, ids: &[DispatcherId]) {
        for id in ids {
            let Some(&slot) = self.by_id.get(id) else { continue };
            if matches!(self.slots.get(&slot).map(|s| &s.op), Some(Operator::Occupy(_))) {
                self.by_id.remove(id);
                self.slots.remove(&slot);
            }
        }
    }

    /// One `Execute()` round: finalize finished operators, schedule due ones.
    /// Returns messages to send and follow-up operators to admit.
    pub fn execute(
        &mut self,
        sc: &mut SpanController,
        now: u64,
        epoch: Epoch,
        new_id: &mut dyn FnMut() -> DispatcherId,
    ) -> ExecuteRound {
        let mut msgs = Vec::new();
        let mut finished = Vec::new();
        let mut follow = Vec::new();
        let slots: Vec<u64> = self.slots.keys().copied().collect();
        for slot in slots {
            let s = self.slots.get_mut(&slot).unwrap();
            let id = s.op.id();
            if !self.quiesce_except.as_ref().map(|q| q.contains(&id)).unwrap_or(true) {
                continue;
            }
            if s.op.is_finished() {
                s.done = true;
                follow.extend(s.op.post_finish(sc, new_id));
                let s = self.slots.remove(&slot).unwrap();
                if self.by_id.get(&id) == Some(&slot) {
                    self.by_id.remove(&id);
                }
                if let Operator::Merge(m) = &s.op {
                    let sources = m.sources.clone();
                    self.finish_occupy(&sources);
                }
                finished.push((s.op, "finished"));
                continue;
            }
            if now >= s.notify_at {
                s.notify_at = now + OPERATOR_REPOLL_MS;
                if let Some(m) = s.op.schedule(sc, now, epoch) {
                    msgs.push(m);
                }
            }
        }
        (msgs, finished, follow)
    }

    /// `GetMinCheckpointTs`: min checkpoint of tasks under operators that block the checkpoint.
    pub fn min_checkpoint_ts(&self, sc: &SpanController) -> Option<Ts> {
        self.slots
            .values()
            .filter(|s| !s.done && s.op.block_ts_forward())
            .filter_map(|s| sc.get(&s.op.id()).map(|r| r.checkpoint_ts))
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SchedulerConfig;
    use crate::maintainer::span_controller::{ReplicaState, SpanReplication};

    fn setup() -> (OperatorController, SpanController, BTreeSet<NodeId>) {
        let mut sc = SpanController::new(DispatcherId(1), NodeId(0), 100, SchedulerConfig::default());
        sc.insert(SpanReplication {
            id: DispatcherId(9),
            span: TableSpan::full(3),
            schema_id: 1,
            node: None,
            state: ReplicaState::Absent,
            checkpoint_ts: 100,
            last_state: None,
            block_state: None,
        });
        (OperatorController::new(), sc, [NodeId(0), NodeId(1), NodeId(2)].into_iter().collect())
    }

    #[test]
    fn atomic_admission_admits_one_of_add_and_empty_origin_move() {
        let (mut oc, mut sc, alive) = setup();
        let add = Operator::Add(AddDispatcherOperator::new(DispatcherId(9), NodeId(1), OperatorType::Add));
        let mv = Operator::Move(MoveDispatcherOperator::new(DispatcherId(9), None, NodeId(2)));
        assert!(oc.add_operator(add, &mut sc, &alive, 0).is_ok());
        assert_eq!(oc.add_operator(mv, &mut sc, &alive, 0), Err(AdmitError::AlreadyExists));
        assert_eq!(oc.running().count(), 1);
    }

    #[test]
    fn interleaved_two_step_admission_admits_both() {
        // The historical race: both callers pass the check before either inserts.
        let (mut oc, mut sc, alive) = setup();
        let add = Operator::Add(AddDispatcherOperator::new(DispatcherId(9), NodeId(1), OperatorType::Add));
        let mv = Operator::Move(MoveDispatcherOperator::new(DispatcherId(9), None, NodeId(2)));
        assert!(oc.admission_check(&add.id(), &sc).is_ok());
        assert!(oc.admission_check(&mv.id(), &sc).is_ok());
        oc.admission_insert(add, &mut sc, &alive, 0);
        oc.admission_insert(mv, &mut sc, &alive, 0);
        assert_eq!(oc.running().count(), 2, "both operators are running");
        assert_eq!(oc.size(), 1, "the map holds only the last one");
        let (msgs, _, _) = oc.execute(&mut sc, 0, 1, &mut || DispatcherId(77));
        let creates: BTreeSet<NodeId> = msgs
            .iter()
            .filter(|(_, r)| matches!(r, OpRequest::Schedule(r) if r.action == ScheduleAction::Create))
            .map(|(n, _)| *n)
            .collect();
        assert_eq!(
            creates,
            [NodeId(1), NodeId(2)].into_iter().collect(),
            "Create for one dispatcher ID sent to two nodes"
        );
    }

    #[test]
    fn quiesce_rejects_ordinary_operators() {
        let (mut oc, mut sc, alive) = setup();
        oc.quiesce_except = Some(BTreeSet::new());
        let add = Operator::Add(AddDispatcherOperator::new(DispatcherId(9), NodeId(1), OperatorType::Add));
        assert_eq!(oc.add_operator(add, &mut sc, &alive, 0), Err(AdmitError::Quiescing));
    }

    #[test]
    fn add_to_dead_node_finishes_removed() {
        let (mut oc, mut sc, _) = setup();
        let alive: BTreeSet<NodeId> = [NodeId(0)].into_iter().collect();
        let add = Operator::Add(AddDispatcherOperator::new(DispatcherId(9), NodeId(1), OperatorType::Add));
        oc.add_operator(add, &mut sc, &alive, 0).unwrap();
        let (_, fin, _) = oc.execute(&mut sc, 0, 1, &mut || DispatcherId(77));
        assert_eq!(fin.len(), 1);
        assert_eq!(sc.get(&DispatcherId(9)).unwrap().state, ReplicaState::Absent);
        assert!(oc.min_checkpoint_ts(&sc).is_none());
    }
}
