//! Operator controller: admission, the running queue and status routing.
//!
//! TiCDC keeps `operators map[DispatcherID]*OperatorWithTime` plus a running heap that
//! owns its own references: when two operators for one ID slip through admission,
//! the map holds only the last one but both stay in the heap and keep sending. This
//! model keeps the same two structures (`by_id` and `queue` over `slots`) so that the
//! historical race has its historical consequence.
//!
//! The running queue is a min-heap by next poll time ([`OperatorQueue`]). One
//! [`OperatorController::execute`] pass pops entries until the heap is empty or its
//! earliest entry is not yet due (maintainer/operator/operator_controller.go:151-168,
//! 368-427). A popped finished operator is finalized whatever its poll time; but one
//! queued behind an entry that is not yet due waits, PostFinish included, until that
//! entry is due. A scheduled operator is polled again 500 ms later.
//!
//! Admission comes in two shapes:
//! - fixed (PR #6070): [`OperatorController::add_operator`] checks and inserts in one step;
//! - historical (`nonatomic-operator-admission`): [`OperatorController::admission_check`]
//!   and [`OperatorController::admission_insert`] are separate steps the simulator may
//!   interleave with another goroutine, as `AddOperator` did across its two lock sections.
//!
//! Quiescing (a removing maintainer, `QuiesceExcept`) freezes every operator whose ID is
//! not allowed: it is not admitted, gets no statuses, is dropped from the running queue
//! when popped, and keeps holding the checkpoint; node removals are ignored
//! (operator_controller.go:97-131, 229-303, 381-386).

use super::queue::{OperatorQueue, QueueEntry};
use super::*;
use crate::assertions::{Assertion as A, Failures};
use crate::coverage::{hit, Point as P};
use crate::maintainer::books::BooksChanged;
use crate::maintainer::span_controller::SpanController;
use std::collections::{BTreeMap, BTreeSet};

/// What one `execute` round yields: requests to send, finished operators with the
/// reason they ended, and the follow-up operators (a split's Add operators) that were
/// admitted during the round, by description.
pub type ExecuteRound = (Vec<(NodeId, OpRequest)>, Vec<(Operator, &'static str)>, Vec<String>);

/// Delay before an operator is polled again after `schedule()`
/// (operator_controller.go:424, `NotifyAt = now + 500ms`).
pub const OPERATOR_REPOLL_MS: u64 = 500;
/// `emptyPollInterval`: the next `Execute` after a pass that ran out of due operators
/// (operator_controller.go:38).
pub const EMPTY_POLL_INTERVAL_MS: u64 = 200;
/// `nextPollInterval`: the next `Execute` after a pass that hit the batch size
/// (operator_controller.go:40).
pub const NEXT_POLL_INTERVAL_MS: u64 = 50;
/// Operators scheduled per pass by default: the maintainer passes `AddTableBatchSize`
/// (maintainer/maintainer.go:211), whose default is 10000.
pub const DEFAULT_OPERATOR_BATCH_SIZE: usize = 10_000;

#[derive(Debug)]
pub struct Slot {
    pub op: Operator,
    /// When the operator was admitted (`CreatedAt`).
    pub created_at: u64,
    pub done: bool,
}

#[derive(Debug)]
pub struct OperatorController {
    pub slots: BTreeMap<u64, Slot>,
    pub by_id: BTreeMap<DispatcherId, u64>,
    /// The running heap (entries of finalized slots stay until popped, as Go's
    /// `IsRemoved` items do).
    pub queue: OperatorQueue,
    next_slot: u64,
    /// IDs allowed while quiescing (maintainer removing mode); None = not quiescing.
    pub quiesce_except: Option<BTreeSet<DispatcherId>>,
    /// Operators scheduled per `execute` pass at most (`batchSize`).
    pub batch_size: usize,
    /// When the last `execute` pass asks to run again (`Execute`'s return value).
    pub next_execute_at: u64,
    /// Failed assertions, moved out by the maintainer ([`crate::assertions`]).
    pub failed: Failures,
    /// Stamped on every request its operators send (`NewOperatorController(.., mode)`).
    pub mode: Mode,
    /// Marked when an operator comes or goes (an operator's kind, ID and the dispatchers
    /// it names never change in place).
    pub books: BooksChanged,
}

impl Default for OperatorController {
    fn default() -> Self {
        OperatorController {
            slots: BTreeMap::new(),
            by_id: BTreeMap::new(),
            queue: OperatorQueue::new(),
            next_slot: 0,
            quiesce_except: None,
            batch_size: DEFAULT_OPERATOR_BATCH_SIZE,
            next_execute_at: 0,
            failed: Failures::default(),
            mode: Mode::Default,
            books: BooksChanged::default(),
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum AdmitError {
    Quiescing,
    AlreadyExists,
    NoTask,
}

/// One `pollQueueingOperator` result. Go's `(op, next)` pair: `End` is `(nil, false)`,
/// `Skipped` and `Finished` are `(nil, true)`, `Due` is `(op, true)`.
#[derive(Debug)]
pub enum Poll {
    /// The heap is empty, or its earliest entry is not due (put back).
    End,
    /// A finalized (cancelled) entry, or a frozen operator dropped from the heap.
    Skipped,
    /// A finished operator, finalized now; with the follow-ups its PostFinish created.
    Finished(Operator, Vec<Operator>),
    /// This slot is due: it was queued again 500 ms later and is to be scheduled.
    Due(u64),
}

impl OperatorController {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_batch_size(batch_size: usize) -> Self {
        OperatorController { batch_size, ..Self::default() }
    }

    /// `QuiesceExcept`: only `ids` may keep running (operator_controller.go:102-117).
    pub fn quiesce_except(&mut self, ids: impl IntoIterator<Item = DispatcherId>) {
        self.quiesce_except = Some(ids.into_iter().collect());
    }

    pub fn get(&self, id: &DispatcherId) -> Option<&Operator> {
        self.by_id.get(id).and_then(|s| self.slots.get(s)).map(|s| &s.op)
    }

    pub fn get_mut(&mut self, id: &DispatcherId) -> Option<&mut Operator> {
        let slot = *self.by_id.get(id)?;
        self.slots.get_mut(&slot).map(|s| &mut s.op)
    }

    pub fn has(&self, id: &DispatcherId) -> bool {
        self.by_id.contains_key(id)
    }

    pub fn size(&self) -> usize {
        self.by_id.len()
    }

    /// Entries in the running heap (`runningQueue.Len()`).
    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }

    /// Every operator still running, including ones that lost the `by_id` entry.
    pub fn running(&self) -> impl Iterator<Item = &Operator> {
        self.slots.values().filter(|s| !s.done).map(|s| &s.op)
    }

    fn allowed(&self, id: &DispatcherId) -> bool {
        self.quiesce_except.as_ref().map(|s| s.contains(id)).unwrap_or(true)
    }

    /// `CountInflightDrainMovesFromNode`: unfinished moves away from `origin`
    /// (operator_controller.go:326-345).
    pub fn count_inflight_drain_moves_from_node(&self, origin: NodeId) -> usize {
        self.by_id
            .values()
            .filter_map(|slot| self.slots.get(slot))
            .filter(|s| matches!(&s.op, Operator::Move(m) if !m.is_finished() && m.origin == Some(origin)))
            .count()
    }

    /// First admission step: quiesce, duplicate and task checks (read side).
    pub fn admission_check(&self, id: &DispatcherId, sc: &SpanController) -> Result<(), AdmitError> {
        if !self.allowed(id) {
            hit(P::OcRefusedQuiescing);
            return Err(AdmitError::Quiescing);
        }
        if self.by_id.contains_key(id) {
            hit(P::OcRefusedExists);
            return Err(AdmitError::AlreadyExists);
        }
        if sc.get(id).is_none() {
            hit(P::OcRefusedNoTask);
            return Err(AdmitError::NoTask);
        }
        Ok(())
    }

    /// Second admission step (`pushOperatorWithAdmission`): register (overwriting!),
    /// start, check affected nodes, queue as due now.
    pub fn admission_insert(&mut self, mut op: Operator, sc: &mut SpanController, alive: &BTreeSet<NodeId>, now: u64) {
        let id = op.id();
        if let Some(running) = self.get(&id).map(|o| o.describe()) {
            self.failed.check(A::OcOneOperatorPerDispatcher, false, || {
                format!("dispatcher={} running={} admitted={}", id, running, op.describe())
            });
        }
        op.start(sc);
        for n in op.affected_nodes() {
            match n {
                None => {
                    hit(P::OcAdmittedEmptyOrigin);
                    op.on_node_remove(NodeId(u32::MAX), sc)
                }
                Some(n) if !alive.contains(&n) => {
                    hit(P::OcAdmittedDeadNode);
                    op.on_node_remove(n, sc)
                }
                _ => {}
            }
        }
        self.next_slot += 1;
        let slot = self.next_slot;
        self.books.mark();
        self.slots.insert(slot, Slot { op, created_at: now, done: false });
        self.by_id.insert(id, slot);
        self.queue.heap_push(QueueEntry { slot, notify_at: now });
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

    /// A status from `from` for dispatcher `id` (every status of every heartbeat). A
    /// frozen operator gets none (operator_controller.go:265-279).
    pub fn update_operator_status(
        &mut self,
        id: &DispatcherId,
        from: NodeId,
        st: &TableSpanStatus,
        sc: &mut SpanController,
    ) {
        if !self.allowed(id) {
            hit(P::OcStatusFrozen);
            return;
        }
        if let Some(slot) = self.by_id.get(id) {
            if let Some(s) = self.slots.get_mut(slot) {
                s.op.check(from, st, sc);
            }
        }
    }

    /// `OnNodeRemoved`: tasks on the node without operator become absent; every operator
    /// sees the loss. Nothing happens while quiescing (operator_controller.go:284-303).
    pub fn on_node_removed(&mut self, n: NodeId, sc: &mut SpanController) {
        if self.quiesce_except.is_some() {
            hit(P::OcNodeRemovedQuiescing);
            return;
        }
        for id in sc.tasks_on_node(n) {
            if !self.by_id.contains_key(&id) {
                hit(P::OcNodeRemovedSpanAbsent);
                sc.mark_absent(&id);
            }
        }
        for s in self.slots.values_mut() {
            if !s.done {
                s.op.on_node_remove(n, sc);
            }
        }
    }

    /// `finalizeOperator`: PostFinish, then drop the operator (its heap entry goes when
    /// popped). A merge's occupy operators finish after the merge's PostFinish
    /// (operator_merge.go:252). Returns the operator and its follow-ups.
    fn finalize_slot(
        &mut self,
        slot: u64,
        sc: &mut SpanController,
        new_id: &mut dyn FnMut() -> DispatcherId,
    ) -> Option<(Operator, Vec<Operator>)> {
        let mut s = self.slots.remove(&slot)?;
        self.books.mark();
        self.failed.check(A::OcPostFinishOnFinished, s.op.is_finished(), || {
            format!("dispatcher={} operator={}", s.op.id(), s.op.describe())
        });
        s.done = true;
        let follow = s.op.post_finish(sc, new_id);
        let id = s.op.id();
        if self.by_id.get(&id) == Some(&slot) {
            self.by_id.remove(&id);
        }
        if let Operator::Merge(m) = &s.op {
            let sources = m.sources.clone();
            self.finish_occupy(&sources);
        }
        Some((s.op, follow))
    }

    /// `finalizeOperator` of the operator registered for `id` (tests drive an operator's
    /// PostFinish through it). Returns the follow-ups, or None without an operator.
    pub fn finalize_operator(
        &mut self,
        id: &DispatcherId,
        sc: &mut SpanController,
        new_id: &mut dyn FnMut() -> DispatcherId,
    ) -> Option<Vec<Operator>> {
        let slot = *self.by_id.get(id)?;
        self.finalize_slot(slot, sc, new_id).map(|(_, f)| f)
    }

    /// Cancel the operator of a task that is being removed (`cancelOperator`, barrier
    /// drop path): OnTaskRemoved, then finalize (operator_controller.go:456-465).
    pub fn on_task_removed(&mut self, id: &DispatcherId, sc: &mut SpanController) {
        if let Some(&slot) = self.by_id.get(id) {
            if let Some(s) = self.slots.get_mut(&slot) {
                hit(P::OcTaskRemovedCancel);
                s.op.on_task_removed(sc);
            }
            let _ = self.finalize_slot(slot, sc, &mut || DispatcherId(0));
        }
    }

    /// `removeReplicaSet`: replace whatever operator runs for the task by `op` (a
    /// Remove), without the task check; skipped while quiescing unless allowed
    /// (operator_controller.go:467-492). Returns whether `op` was queued.
    pub fn remove_replica_set(
        &mut self,
        op: Operator,
        sc: &mut SpanController,
        alive: &BTreeSet<NodeId>,
        now: u64,
    ) -> bool {
        let id = op.id();
        if !self.allowed(&id) {
            return false;
        }
        hit(P::OcRemoveReplicaSet);
        self.on_task_removed(&id, sc);
        self.admission_insert(op, sc, alive, now);
        true
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
        merge::check_merge(sc, &sources)?;
        if sc.get(&merged).is_some() {
            hit(P::OcMergeTargetExists);
            return Err(format!("merged dispatcher {} already exists", merged));
        }
        self.occupy_all(&sources, sc, alive, now)?;
        let op = Operator::Merge(MergeDispatcherOperator::new_with_merged_task(sc, sources.clone(), merged));
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
                hit(P::OcMergeOccupyFailed);
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
                self.books.mark();
                self.by_id.remove(id);
                self.slots.remove(&slot);
            }
        }
    }

    /// `pollQueueingOperator` (operator_controller.go:368-427): pop the earliest entry;
    /// drop it if its operator was finalized or is frozen; finalize it if finished (even
    /// before its poll time); put it back and end the pass if not yet due; otherwise queue
    /// it again 500 ms later and hand it out for scheduling.
    pub fn poll_queueing_operator(
        &mut self,
        sc: &mut SpanController,
        now: u64,
        new_id: &mut dyn FnMut() -> DispatcherId,
    ) -> Poll {
        let Some(e) = self.queue.heap_pop() else { return Poll::End };
        let Some(s) = self.slots.get(&e.slot) else { return Poll::Skipped };
        if !self.allowed(&s.op.id()) {
            hit(P::OcPollFrozen);
            return Poll::Skipped;
        }
        if s.op.is_finished() {
            return match self.finalize_slot(e.slot, sc, new_id) {
                Some((op, follow)) => Poll::Finished(op, follow),
                None => Poll::Skipped,
            };
        }
        if now < e.notify_at {
            hit(P::OcPollNotDue);
            self.queue.heap_push(e);
            return Poll::End;
        }
        self.queue.heap_push(QueueEntry { slot: e.slot, notify_at: now + OPERATOR_REPOLL_MS });
        Poll::Due(e.slot)
    }

    /// One `Execute()` pass (operator_controller.go:151-189): poll until the queue ends,
    /// scheduling each due operator, at most `batch_size` of them. Follow-ups of a
    /// finished operator (a split's Add operators, admitted by its PostFinish through
    /// `AddOperator`, operator_split.go:187-197 and scheduler/balance_splits.go:141-149)
    /// are admitted at once, due now, so the same pass can schedule them.
    pub fn execute(
        &mut self,
        sc: &mut SpanController,
        alive: &BTreeSet<NodeId>,
        now: u64,
        epoch: Epoch,
        new_id: &mut dyn FnMut() -> DispatcherId,
    ) -> ExecuteRound {
        let mut msgs = Vec::new();
        let mut finished = Vec::new();
        let mut admitted = Vec::new();
        let mut executed = 0;
        self.next_execute_at = now + EMPTY_POLL_INTERVAL_MS;
        loop {
            match self.poll_queueing_operator(sc, now, new_id) {
                Poll::End => break,
                Poll::Skipped => {}
                Poll::Finished(op, follow) => {
                    finished.push((op, "finished"));
                    for f in follow {
                        let d = f.describe();
                        if self.add_operator(f, sc, alive, now).is_ok() {
                            hit(P::OcFollowUpAdmitted);
                            admitted.push(d);
                        }
                    }
                }
                Poll::Due(slot) => {
                    // `scheduleOperator`: a frozen operator does not send.
                    let allowed = self.slots.get(&slot).map(|s| self.allowed(&s.op.id())).unwrap_or(false);
                    if allowed {
                        if let Some((to, r)) = self.slots.get_mut(&slot).and_then(|s| s.op.schedule(sc, now, epoch)) {
                            msgs.push((to, r.with_mode(self.mode)));
                        }
                    }
                    executed += 1;
                    if executed >= self.batch_size {
                        hit(P::OcExecuteBatchFull);
                        self.next_execute_at = now + NEXT_POLL_INTERVAL_MS;
                        break;
                    }
                }
            }
        }
        (msgs, finished, admitted)
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

    /// The maintainer checker re-reads the books only when these flags say they changed:
    /// an operator or a task that comes or goes marks them, scheduling does not.
    #[test]
    fn the_books_change_when_an_operator_or_a_task_comes_or_goes() {
        let (mut oc, mut sc, alive) = setup();
        assert!(oc.books.take() & sc.books.take(), "new controllers were never looked at");
        let add = Operator::Add(AddDispatcherOperator::new(DispatcherId(9), NodeId(1), OperatorType::Add));
        assert!(oc.add_operator(add, &mut sc, &alive, 0).is_ok());
        assert!(oc.books.take(), "an operator came");
        let (msgs, _, _) = oc.execute(&mut sc, &alive, 0, 1, &mut || DispatcherId(77));
        assert_eq!(msgs.len(), 1);
        assert!(!oc.books.take() && !sc.books.take(), "scheduling moves no task and no operator");
        let task = sc.remove(&DispatcherId(9)).unwrap();
        assert!(sc.books.take(), "a task went");
        oc.on_task_removed(&DispatcherId(9), &mut sc);
        assert!(oc.books.take() && oc.running().next().is_none(), "the operator went");
        sc.insert(task);
        assert!(sc.books.take(), "a task came");
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
        let (msgs, _, _) = oc.execute(&mut sc, &alive, 0, 1, &mut || DispatcherId(77));
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
        let (_, fin, _) = oc.execute(&mut sc, &alive, 0, 1, &mut || DispatcherId(77));
        assert_eq!(fin.len(), 1);
        assert_eq!(sc.get(&DispatcherId(9)).unwrap().state, ReplicaState::Absent);
        assert!(oc.min_checkpoint_ts(&sc).is_none());
    }

    /// The running heap (operator_controller.go:368-427): a pass stops at the first
    /// entry not yet due, so a finished operator queued behind it is not finalized (no
    /// PostFinish) until that entry's poll time; once reached it is finalized even though
    /// its own poll time has not come.
    #[test]
    fn finished_operator_waits_behind_an_entry_not_yet_due() {
        let (mut oc, mut sc, alive) = setup();
        sc.insert(SpanReplication {
            id: DispatcherId(8),
            span: TableSpan::full(4),
            schema_id: 1,
            node: None,
            state: ReplicaState::Absent,
            checkpoint_ts: 100,
            last_state: None,
            block_state: None,
        });
        let add = |id| Operator::Add(AddDispatcherOperator::new(DispatcherId(id), NodeId(1), OperatorType::Add));
        // A is scheduled at 0 (next poll 500); B is admitted at 100 and scheduled at 200
        // (next poll 700).
        oc.add_operator(add(9), &mut sc, &alive, 0).unwrap();
        let (msgs, _, _) = oc.execute(&mut sc, &alive, 0, 1, &mut || DispatcherId(77));
        assert_eq!(msgs.len(), 1);
        oc.add_operator(add(8), &mut sc, &alive, 100).unwrap();
        let (msgs, _, _) = oc.execute(&mut sc, &alive, 200, 1, &mut || DispatcherId(77));
        assert_eq!(msgs.len(), 1, "only B was due");
        assert_eq!(oc.next_execute_at, 400, "emptyPollInterval after a pass that ran out");
        // B finishes at 300; A (unfinished) heads the heap until 500.
        oc.update_operator_status(&DispatcherId(8), NodeId(1), &st_working(8), &mut sc);
        assert!(oc.get(&DispatcherId(8)).unwrap().is_finished());
        let (msgs, fin, _) = oc.execute(&mut sc, &alive, 400, 1, &mut || DispatcherId(77));
        assert!(msgs.is_empty() && fin.is_empty(), "B waits behind A, which is not due");
        assert_eq!(sc.get(&DispatcherId(8)).unwrap().state, ReplicaState::Scheduling, "no PostFinish yet");
        assert!(oc.has(&DispatcherId(8)));
        // At 600 A is due (re-queued for 1100) and B, next in the heap, is finalized before
        // its own poll time (700).
        let (_, fin, _) = oc.execute(&mut sc, &alive, 600, 1, &mut || DispatcherId(77));
        assert_eq!(fin.len(), 1);
        assert_eq!(fin[0].0.id(), DispatcherId(8));
        assert_eq!(sc.get(&DispatcherId(8)).unwrap().state, ReplicaState::Replicating);
        assert!(!oc.has(&DispatcherId(8)));
        assert_eq!(oc.queue_len(), 1);
        assert_eq!(oc.queue.entries()[0].notify_at, 1_100);
    }

    /// A finished operator at the head of the heap is finalized at the next pass.
    #[test]
    fn finished_operator_at_the_head_is_finalized_at_once() {
        let (mut oc, mut sc, alive) = setup();
        let add = Operator::Add(AddDispatcherOperator::new(DispatcherId(9), NodeId(1), OperatorType::Add));
        oc.add_operator(add, &mut sc, &alive, 0).unwrap();
        oc.execute(&mut sc, &alive, 0, 1, &mut || DispatcherId(77));
        oc.update_operator_status(&DispatcherId(9), NodeId(1), &st_working(9), &mut sc);
        let (_, fin, _) = oc.execute(&mut sc, &alive, 200, 1, &mut || DispatcherId(77));
        assert_eq!(fin.len(), 1);
        assert_eq!(oc.queue_len(), 0);
    }

    /// `Execute` schedules at most `batch_size` operators, then asks to run again after
    /// `nextPollInterval`.
    #[test]
    fn execute_stops_at_the_batch_size() {
        let (_, mut sc, alive) = setup();
        let mut oc = OperatorController::with_batch_size(1);
        sc.insert(SpanReplication {
            id: DispatcherId(8),
            span: TableSpan::full(4),
            schema_id: 1,
            node: None,
            state: ReplicaState::Absent,
            checkpoint_ts: 100,
            last_state: None,
            block_state: None,
        });
        for id in [9, 8] {
            let add = Operator::Add(AddDispatcherOperator::new(DispatcherId(id), NodeId(1), OperatorType::Add));
            oc.add_operator(add, &mut sc, &alive, 0).unwrap();
        }
        let (msgs, _, _) = oc.execute(&mut sc, &alive, 0, 1, &mut || DispatcherId(77));
        assert_eq!(msgs.len(), 1);
        assert_eq!(oc.next_execute_at, NEXT_POLL_INTERVAL_MS);
        let (msgs, _, _) = oc.execute(&mut sc, &alive, 50, 1, &mut || DispatcherId(77));
        assert_eq!(msgs.len(), 1);
    }

    fn st_working(id: u64) -> TableSpanStatus {
        TableSpanStatus {
            mode: Mode::Default,
            id: DispatcherId(id),
            state: ComponentState::Working,
            checkpoint_ts: 120,
            event_size_per_second: 0,
        }
    }
}
