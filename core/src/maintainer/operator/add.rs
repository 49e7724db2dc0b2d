use super::*;
use crate::coverage::{hit, Point as P};

/// Add: bind the span to `dest`, send Create until `dest` reports Working.
#[derive(Clone, Debug)]
pub struct AddDispatcherOperator {
    pub id: DispatcherId,
    pub dest: NodeId,
    pub op_type: OperatorType,
    pub finished: bool,
    pub removed: bool,
    throttle: SendThrottle,
}

impl AddDispatcherOperator {
    pub fn new(id: DispatcherId, dest: NodeId, op_type: OperatorType) -> Self {
        AddDispatcherOperator { id, dest, op_type, finished: false, removed: false, throttle: SendThrottle::default() }
    }
    pub fn start(&mut self, sc: &mut SpanController) {
        if !self.finished && !self.removed {
            sc.bind_to_node(&self.id, self.dest);
        }
    }
    pub fn schedule(&mut self, sc: &SpanController, now: u64, epoch: Epoch) -> Option<OpMessage> {
        if self.finished {
            return None;
        }
        let r = sc.get(&self.id)?;
        if !self.throttle.should_send(now, self.dest, ScheduleAction::Create) {
            return None;
        }
        let config = create_config(sc, r);
        Some((
            self.dest,
            ScheduleDispatcherRequest {
                config,
                action: ScheduleAction::Create,
                operator_type: self.op_type,
                maintainer_epoch: epoch,
            },
        ))
    }
    pub fn check(&mut self, from: NodeId, st: &TableSpanStatus) {
        // A finished add ignores later statuses (maintainer/operator/operator_add.go:81-84).
        if self.finished || from != self.dest {
            return;
        }
        match st.state {
            ComponentState::Working => {
                hit(P::OpAddWorking);
                self.finished = true;
            }
            ComponentState::Removed => {
                hit(P::OpAddReportedRemoved);
                self.finished = true;
                self.removed = true;
            }
            _ => {}
        }
    }
    pub fn on_node_remove(&mut self, n: NodeId) {
        if n == self.dest {
            hit(P::OpAddDestRemoved);
            self.finished = true;
            self.removed = true;
        }
    }
    pub fn on_task_removed(&mut self) {
        hit(P::OpAddTaskRemoved);
        self.finished = true;
        self.removed = true;
    }
    pub fn post_finish(&mut self, sc: &mut SpanController) {
        if self.removed {
            hit(P::OpAddPostFinishAbsent);
            if sc.get(&self.id).is_some() {
                sc.mark_absent(&self.id);
            }
        } else {
            sc.mark_replicating(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SchedulerConfig;
    use crate::maintainer::span_controller::ReplicaState;
    use crate::upstream::TableInfo;

    fn sc_with_table() -> (SpanController, DispatcherId) {
        let mut sc = SpanController::new(DispatcherId(1), NodeId(0), 100, SchedulerConfig::default());
        let mut n = 10;
        let ids = sc.add_new_table(
            &TableInfo { table_id: 5, schema_id: 1, schema_name: "s".into(), name: "t".into(), splitable: true },
            100,
            1,
            &mut || {
                n += 1;
                DispatcherId(n)
            },
        );
        (sc, ids[0])
    }

    #[test]
    fn add_lifecycle() {
        let (mut sc, id) = sc_with_table();
        let mut op = AddDispatcherOperator::new(id, NodeId(2), OperatorType::Add);
        op.start(&mut sc);
        assert_eq!(sc.get(&id).unwrap().state, ReplicaState::Scheduling);
        assert_eq!(sc.get(&id).unwrap().node, Some(NodeId(2)));
        let (to, req) = op.schedule(&sc, 0, 7).unwrap();
        assert_eq!(
            (to, req.action, req.maintainer_epoch, req.config.start_ts),
            (NodeId(2), ScheduleAction::Create, 7, 100)
        );
        assert!(op.schedule(&sc, 500, 7).is_none(), "throttled");
        assert!(op.schedule(&sc, 10_000, 7).is_some(), "resent after 10 s");
        // Status from another node is ignored; Working from dest finishes.
        op.check(
            NodeId(1),
            &TableSpanStatus {
                mode: Mode::Default,
                id,
                state: ComponentState::Working,
                checkpoint_ts: 0,
                event_size_per_second: 0,
            },
        );
        assert!(!op.finished);
        op.check(
            NodeId(2),
            &TableSpanStatus {
                mode: Mode::Default,
                id,
                state: ComponentState::Working,
                checkpoint_ts: 0,
                event_size_per_second: 0,
            },
        );
        assert!(op.finished);
        op.post_finish(&mut sc);
        assert_eq!(sc.get(&id).unwrap().state, ReplicaState::Replicating);
    }

    #[test]
    fn add_dest_gone_marks_absent() {
        let (mut sc, id) = sc_with_table();
        let mut op = AddDispatcherOperator::new(id, NodeId(2), OperatorType::Add);
        op.start(&mut sc);
        op.on_node_remove(NodeId(1));
        assert!(!op.finished);
        op.on_node_remove(NodeId(2));
        assert!(op.finished && op.removed);
        op.post_finish(&mut sc);
        assert_eq!(sc.get(&id).unwrap().state, ReplicaState::Absent);
    }

    #[test]
    fn start_ts_clamped_to_committed_checkpoint_and_ddl_rules() {
        let (mut sc, id) = sc_with_table();
        sc.committed_checkpoint = 150;
        let c = add_dispatcher_config(sc.get(&id).unwrap(), sc.committed_checkpoint);
        assert_eq!(c.start_ts, 150);
        sc.committed_checkpoint = 0;
        sc.get_mut(&id).unwrap().block_state = Some(BlockState {
            is_blocked: true,
            block_ts: 200,
            block_tables: None,
            need_dropped_tables: None,
            need_added_tables: vec![],
            updated_schemas: vec![],
            is_sync_point: false,
            stage: BlockStage::Waiting,
        });
        let c = add_dispatcher_config(sc.get(&id).unwrap(), 0);
        assert_eq!((c.start_ts, c.skip_dml_as_start_ts), (199, true));
        sc.get_mut(&id).unwrap().block_state.as_mut().unwrap().is_sync_point = true;
        let c = add_dispatcher_config(sc.get(&id).unwrap(), 0);
        assert_eq!((c.start_ts, c.skip_dml_as_start_ts), (200, false));
    }
}
