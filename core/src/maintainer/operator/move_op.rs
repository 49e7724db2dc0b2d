use super::*;
use crate::coverage::{hit, Point as P};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveState {
    RemoveOrigin,
    AbortRemoveOrigin,
    AddDest,
    DoneSuccess,
    DoneNoPostFinish,
}

/// Move keeps the dispatcher ID: remove it from `origin` (confirmed stopped) before
/// creating it on `dest`. An empty origin (moving an absent span through the API) is
/// treated as a dead node and jumps straight to AddDest.
#[derive(Clone, Debug)]
pub struct MoveDispatcherOperator {
    pub id: DispatcherId,
    pub origin: Option<NodeId>,
    pub dest: NodeId,
    pub state: MoveState,
    throttle: SendThrottle,
}

impl MoveDispatcherOperator {
    pub fn new(id: DispatcherId, origin: Option<NodeId>, dest: NodeId) -> Self {
        MoveDispatcherOperator { id, origin, dest, state: MoveState::RemoveOrigin, throttle: SendThrottle::default() }
    }
    pub fn is_finished(&self) -> bool {
        matches!(self.state, MoveState::DoneSuccess | MoveState::DoneNoPostFinish)
    }
    pub fn start(&mut self, sc: &mut SpanController) {
        if self.origin == Some(self.dest) {
            hit(P::OpMoveToSameNode);
            self.state = MoveState::DoneSuccess;
            return;
        }
        sc.mark_scheduling(&self.id);
    }
    fn enter_add_dest(&mut self, sc: &mut SpanController) {
        self.state = MoveState::AddDest;
        self.throttle.reset();
        sc.bind_to_node(&self.id, self.dest);
    }
    pub fn schedule(&mut self, sc: &SpanController, now: u64, epoch: Epoch) -> Option<OpMessage> {
        let r = sc.get(&self.id)?;
        match self.state {
            MoveState::RemoveOrigin | MoveState::AbortRemoveOrigin => {
                let origin = self.origin?;
                if !self.throttle.should_send(now, origin, ScheduleAction::Remove) {
                    return None;
                }
                Some((origin, remove_request(self.id, r.span, OperatorType::Move, epoch)))
            }
            MoveState::AddDest => {
                if !self.throttle.should_send(now, self.dest, ScheduleAction::Create) {
                    return None;
                }
                let config = create_config(sc, r);
                Some((
                    self.dest,
                    ScheduleDispatcherRequest {
                        config,
                        action: ScheduleAction::Create,
                        operator_type: OperatorType::Move,
                        maintainer_epoch: epoch,
                    },
                ))
            }
            _ => None,
        }
    }
    pub fn check(&mut self, from: NodeId, st: &TableSpanStatus, sc: &mut SpanController) {
        match self.state {
            MoveState::RemoveOrigin if Some(from) == self.origin && st.state != ComponentState::Working => {
                hit(P::OpMoveOriginStopped);
                sc.update_status(&self.id, st);
                self.enter_add_dest(sc);
            }
            MoveState::AbortRemoveOrigin if Some(from) == self.origin && st.state != ComponentState::Working => {
                hit(P::OpMoveAbortOriginStopped);
                sc.mark_absent(&self.id);
                self.state = MoveState::DoneNoPostFinish;
            }
            MoveState::AddDest if from == self.dest && st.state == ComponentState::Working => {
                hit(P::OpMoveDestWorking);
                self.state = MoveState::DoneSuccess;
            }
            _ => {}
        }
    }
    pub fn on_node_remove(&mut self, n: NodeId, sc: &mut SpanController) {
        let origin_gone = match self.origin {
            Some(o) => o == n,
            None => true,
        };
        if n == self.dest {
            match self.state {
                MoveState::RemoveOrigin => {
                    hit(P::OpMoveDestLostRemovingOrigin);
                    self.state = MoveState::AbortRemoveOrigin;
                    self.throttle.reset();
                    if self.origin.is_none() {
                        sc.mark_absent(&self.id);
                        self.state = MoveState::DoneNoPostFinish;
                    }
                }
                MoveState::AddDest => {
                    hit(P::OpMoveDestLostAdding);
                    sc.mark_absent(&self.id);
                    self.state = MoveState::DoneNoPostFinish;
                }
                _ => {}
            }
            return;
        }
        if origin_gone {
            match self.state {
                MoveState::RemoveOrigin => {
                    hit(P::OpMoveOriginLost);
                    self.enter_add_dest(sc)
                }
                MoveState::AbortRemoveOrigin => {
                    hit(P::OpMoveAbortedOriginLost);
                    sc.mark_absent(&self.id);
                    self.state = MoveState::DoneNoPostFinish;
                }
                _ => {}
            }
        }
    }
    pub fn on_task_removed(&mut self, sc: &mut SpanController) {
        hit(P::OpMoveTaskRemoved);
        sc.mark_replicating(&self.id);
        self.state = MoveState::DoneNoPostFinish;
    }
    pub fn post_finish(&mut self, sc: &mut SpanController) {
        if self.state == MoveState::DoneSuccess {
            sc.mark_replicating(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SchedulerConfig;
    use crate::maintainer::span_controller::{ReplicaState, SpanReplication};

    fn sc() -> SpanController {
        let mut sc = SpanController::new(DispatcherId(1), NodeId(0), 100, SchedulerConfig::default());
        sc.insert(SpanReplication {
            id: DispatcherId(9),
            span: TableSpan::full(3),
            schema_id: 1,
            node: Some(NodeId(1)),
            state: ReplicaState::Replicating,
            checkpoint_ts: 100,
            last_state: None,
            block_state: None,
        });
        sc
    }
    fn st(state: ComponentState) -> TableSpanStatus {
        TableSpanStatus {
            mode: Mode::Default,
            id: DispatcherId(9),
            state,
            checkpoint_ts: 120,
            event_size_per_second: 0,
        }
    }

    #[test]
    fn move_removes_origin_before_creating_on_dest() {
        let mut sc = sc();
        let mut op = MoveDispatcherOperator::new(DispatcherId(9), Some(NodeId(1)), NodeId(2));
        op.start(&mut sc);
        let (to, req) = op.schedule(&sc, 0, 3).unwrap();
        assert_eq!((to, req.action), (NodeId(1), ScheduleAction::Remove));
        op.check(NodeId(2), &st(ComponentState::Working), &mut sc);
        assert_eq!(op.state, MoveState::RemoveOrigin);
        op.check(NodeId(1), &st(ComponentState::Stopped), &mut sc);
        assert_eq!(op.state, MoveState::AddDest);
        let (to, req) = op.schedule(&sc, 1, 3).unwrap();
        assert_eq!((to, req.action, req.config.start_ts), (NodeId(2), ScheduleAction::Create, 120));
        op.check(NodeId(2), &st(ComponentState::Working), &mut sc);
        assert!(op.is_finished());
        op.post_finish(&mut sc);
        assert_eq!(sc.get(&DispatcherId(9)).unwrap().state, ReplicaState::Replicating);
        assert_eq!(sc.get(&DispatcherId(9)).unwrap().node, Some(NodeId(2)));
    }

    #[test]
    fn dest_gone_while_removing_origin_aborts_and_waits_for_origin() {
        let mut sc = sc();
        let mut op = MoveDispatcherOperator::new(DispatcherId(9), Some(NodeId(1)), NodeId(2));
        op.start(&mut sc);
        op.on_node_remove(NodeId(2), &mut sc);
        assert_eq!(op.state, MoveState::AbortRemoveOrigin);
        assert!(!op.is_finished(), "must not mark absent while origin may still run");
        op.check(NodeId(1), &st(ComponentState::Stopped), &mut sc);
        assert!(op.is_finished());
        assert_eq!(sc.get(&DispatcherId(9)).unwrap().state, ReplicaState::Absent);
    }

    #[test]
    fn empty_origin_jumps_to_add_dest() {
        let mut sc = sc();
        sc.mark_absent(&DispatcherId(9));
        let mut op = MoveDispatcherOperator::new(DispatcherId(9), None, NodeId(2));
        op.start(&mut sc);
        op.on_node_remove(NodeId(1000), &mut sc); // checkAffectedNodes treats "" as dead
        assert_eq!(op.state, MoveState::AddDest);
        assert_eq!(sc.get(&DispatcherId(9)).unwrap().node, Some(NodeId(2)));
    }
}
