//! `maintainer/maintainer_manager_test.go` at b813e76f9: the maintainer manager's add/remove
//! admission by epoch, and its integration cases driven with mock dispatcher managers.

use super::support::*;
use crate::config::ChangefeedConfig;
use crate::maintainer::manager::MaintainerManager;
use crate::maintainer::MaintainerState;
use crate::messages::*;
use crate::types::*;
use ComponentState::*;

const COORD: u32 = 9;

pub(super) struct MM {
    pub env: Env,
    pub mm: MaintainerManager,
    pub schema: TestSchema,
}

impl MM {
    pub fn new() -> Self {
        let mut mm = MaintainerManager::new(n(0));
        mm.coordinator = Some(n(COORD));
        mm.alive = nodes(&[0]);
        MM { env: Env::new(0), mm, schema: TestSchema::default() }
    }
    pub fn handle(&mut self, msg: Message) -> crate::effects::Out {
        self.mm.handle_message(&mut self.env.ctx(), n(COORD), msg, &self.schema);
        self.env.take()
    }
    /// `newAddMaintainerRequestForEpoch` (checkpoint 1).
    pub fn add(&mut self, epoch: Epoch) {
        self.handle(Message::AddMaintainerRequest {
            cf: cf(),
            config: ChangefeedConfig::default(),
            checkpoint_ts: 1,
            is_new_changefeed: false,
            maintainer_epoch: epoch,
        });
    }
    /// The registered maintainer's identity (its trigger's dispatcher ID is drawn at
    /// creation) and epoch.
    pub fn current(&self) -> Option<(DispatcherId, Epoch)> {
        self.mm.maintainers.get(&cf()).map(|m| (m.pipe.sc.ddl_span_id, m.epoch))
    }
    pub fn stop_current(&mut self) {
        let m = self.mm.maintainers.get_mut(&cf()).unwrap();
        m.state = MaintainerState::Stopped;
    }
}

// maintainer_manager_test.go:141 — a live maintainer (epoch 1) is not replaced by an add of
// a newer epoch (2).
#[test]
fn ticdc_maintainer_manager_TestManagerMaintainerSet_AddMaintainerRejectsLiveNewerEpoch() {
    let mut m = MM::new();
    m.add(1);
    let old = m.current().unwrap();
    assert_eq!(old.1, 1);
    m.add(2);
    assert_eq!(m.current(), Some(old));
    assert_eq!(m.mm.maintainers.len(), 1);
}

// maintainer_manager_test.go:165 — a fully stopped maintainer is replaced by a newer add; the
// stale cleanup keeps the replacement, which goes once it stopped in turn.
#[test]
fn ticdc_maintainer_manager_TestManagerMaintainerSet_AddMaintainerAfterStoppedKeepsReplacement() {
    let mut m = MM::new();
    m.add(1);
    let old = m.current().unwrap();
    m.stop_current();
    m.add(2);
    let cur = m.current().unwrap();
    assert_ne!(cur, old);
    assert_eq!(cur.1, 2);
    assert_eq!(m.mm.maintainers.len(), 1);
    // The manager's cleanup of stopped maintainers (after their report) keeps the new one.
    m.mm.send_heartbeat(&mut m.env.ctx());
    assert_eq!(m.current(), Some(cur));
    m.stop_current();
    m.mm.send_heartbeat(&mut m.env.ctx());
    assert_eq!(m.current(), None);
}

// maintainer_manager_test.go:200 — an add of epoch 0 creates a compatibility maintainer
// (epoch 0), which a retried epoch-0 add does not replace.
#[test]
fn ticdc_maintainer_manager_TestManagerMaintainerSet_AddMaintainerKeepsCompatibilityEpoch() {
    let mut m = MM::new();
    m.add(0);
    let compat = m.current().unwrap();
    assert_eq!(compat.1, 0);
    m.add(0);
    assert_eq!(m.current(), Some(compat));
}

// maintainer_manager_test.go:216 — a live maintainer of epoch 2 stays on adds of epoch 1
// and 0.
#[test]
fn ticdc_maintainer_manager_TestManagerMaintainerSet_AddMaintainerRejectsOlderEpoch() {
    let mut m = MM::new();
    m.add(2);
    let cur = m.current().unwrap();
    assert_eq!(cur.1, 2);
    m.add(1);
    assert_eq!(m.current(), Some(cur));
    m.add(0);
    assert_eq!(m.current(), Some(cur));
}

fn rejected_duplicate(request_epoch: Epoch) {
    let mut m = MM::new();
    m.add(2);
    let cur = m.current().unwrap();
    assert_eq!(cur.1, 2);
    let out = m.handle(Message::AddMaintainerRequest {
        cf: cf(),
        config: ChangefeedConfig::default(),
        checkpoint_ts: 1,
        is_new_changefeed: false,
        maintainer_epoch: request_epoch,
    });
    assert!(traced(&out, "reject add maintainer"));
    assert!(!traced(&out, "maintainer created"), "no maintainer is created for a rejected add");
    assert_eq!(m.current(), Some(cur));
}

// maintainer_manager_test.go:249 (sub-case of :237) — with a live epoch-2 maintainer, an add
// of epoch 3 creates no maintainer and keeps the current one.
#[test]
fn ticdc_maintainer_manager_TestManagerMaintainerSet_AddMaintainerDoesNotCreateRejectedDuplicate_request_epoch3() {
    rejected_duplicate(3);
}

// maintainer_manager_test.go:249 (sub-case of :237) — same for epoch 2.
#[test]
fn ticdc_maintainer_manager_TestManagerMaintainerSet_AddMaintainerDoesNotCreateRejectedDuplicate_request_epoch2() {
    rejected_duplicate(2);
}

// maintainer_manager_test.go:249 (sub-case of :237) — same for epoch 1.
#[test]
fn ticdc_maintainer_manager_TestManagerMaintainerSet_AddMaintainerDoesNotCreateRejectedDuplicate_request_epoch1() {
    rejected_duplicate(1);
}

// maintainer_manager_test.go:249 (sub-case of :237) — same for epoch 0.
#[test]
fn ticdc_maintainer_manager_TestManagerMaintainerSet_AddMaintainerDoesNotCreateRejectedDuplicate_request_epoch0() {
    rejected_duplicate(0);
}

// maintainer_manager_test.go:263 — a non-cascade remove of a maintainer the node does not
// host is answered Stopped with the request's epoch (7).
#[test]
fn ticdc_maintainer_manager_TestManagerMaintainerSet_RemoveMissingMaintainerReportsRequestEpoch() {
    let mut m = MM::new();
    let out =
        m.handle(Message::RemoveMaintainerRequest { cf: cf(), cascade: false, removed: false, maintainer_epoch: 7 });
    let st: Vec<MaintainerStatus> = out
        .msgs
        .iter()
        .filter(|e| e.to == n(COORD))
        .filter_map(|e| match &e.msg {
            Message::MaintainerHeartbeat { statuses } => Some(statuses.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(st.len(), 1);
    assert!(st[0].removed, "reported Stopped");
    assert_eq!(st[0].maintainer_epoch, 7);
    assert_eq!(st[0].changefeed, cf());
}

// ---------------------------------------------------------------- integration cases

/// The mock dispatcher managers of the Go integration tests: every node answers bootstrap
/// requests with `reports` (empty otherwise), Creates with Working and Removes with Stopped;
/// the schedulers run between rounds (balance check interval 0).
fn drive(h: &mut MH, reports: &[(u32, NodeReport)], rounds: usize) {
    for _ in 0..rounds {
        h.env.now += 500;
        let mut out = h.tick();
        basic(h);
        balance(h);
        let o = h.execute();
        out.msgs.extend(o.msgs);
        for e in out.msgs {
            if !h.m.alive.contains(&e.to) {
                continue;
            }
            match e.msg {
                Message::MaintainerBootstrapRequest { .. } => {
                    let r = reports.iter().find(|(n, _)| *n == e.to.0).map(|(_, r)| r.clone()).unwrap_or_default();
                    h.respond(e.to.0, r);
                }
                Message::ScheduleDispatcherRequest { req, .. } => {
                    let state = if req.action == ScheduleAction::Create { Working } else { Stopped };
                    status(h, e.to.0, req.config.dispatcher_id, state, 10);
                }
                Message::MaintainerCloseRequest { .. } => {
                    h.handle(
                        e.to.0,
                        Message::MaintainerCloseResponse { cf: cf(), success: true, maintainer_epoch: EPOCH },
                    );
                }
                _ => {}
            }
        }
        h.execute();
    }
}

/// `RemoveTasksByTableIDs`: the tasks go, a Remove operator removes each placed dispatcher.
fn remove_tasks_by_table_ids(h: &mut MH, tables: &[TableId]) {
    use crate::maintainer::operator::{Operator, RemoveDispatcherOperator, RemovePostFinish};
    for t in tables {
        for id in h.table_tasks(*t) {
            let r = h.m.pipe.sc.get(&id).cloned().unwrap();
            h.m.pipe.oc.on_task_removed(&id, &mut h.m.pipe.sc);
            if let Some(node) = r.node {
                let op = Operator::Remove(RemoveDispatcherOperator::new(
                    id,
                    r.span,
                    node,
                    OperatorType::Remove,
                    RemovePostFinish::None,
                ));
                let now = h.env.now;
                h.m.pipe.oc.admission_insert(op, &mut h.m.pipe.sc, &h.m.alive.clone(), now);
            }
            h.m.pipe.sc.remove(&id);
        }
    }
}

// maintainer_manager_test.go:284 — scale out and in, remove and add tables, then remove the
// maintainer: 4 tables on one node; 3 nodes join (1 table each); 2 leave (2 + 2); tables
// 2 and 3 removed (2 left on the 2 nodes); tables 5 and 6 added (4 on the 2 nodes); a
// cascade removal stops the maintainer and the manager forgets it.
#[test]
fn ticdc_maintainer_manager_TestMaintainerSchedulesNodeChanges() {
    let mut h = MH::new(&[0], TestSchema::with_tables(&[1, 2, 3, 4]));
    h.m.config.scheduler.add_table_batch_size = 1000;
    h.m.config.scheduler.check_balance_interval_ms = 0;
    h.bootstrap(vec![]);
    basic(&mut h);
    assert_eq!(scheduling_size(&h), 4);
    assert_eq!(node_size(&h, 0), 4);
    // case 2: three nodes join
    h.node_change(&[0, 1, 2, 3]);
    drive(&mut h, &[], 20);
    assert_eq!(replicating_size(&h), 4);
    for node in 0..4 {
        assert_eq!(node_size(&h, node), 1, "node {}", node);
    }
    // case 3: nodes 2 and 3 leave
    h.node_change(&[0, 1]);
    drive(&mut h, &[], 20);
    assert_eq!(replicating_size(&h), 4);
    assert_eq!(node_size(&h, 0), 2);
    assert_eq!(node_size(&h, 1), 2);
    // case 4: tables 2 and 3 removed
    remove_tasks_by_table_ids(&mut h, &[2, 3]);
    drive(&mut h, &[], 10);
    assert_eq!(replicating_size(&h), 2);
    assert_eq!(node_size(&h, 0) + node_size(&h, 1), 2);
    assert_eq!(node_size(&h, 2), 0);
    assert_eq!(node_size(&h, 3), 0);
    // case 5: tables 5 and 6 added
    add_new_table(&mut h, 5, 3);
    add_new_table(&mut h, 6, 3);
    drive(&mut h, &[], 10);
    assert_eq!(replicating_size(&h), 4);
    assert_eq!(node_size(&h, 0) + node_size(&h, 1), 4);
    assert_eq!(node_size(&h, 2), 0);
    assert_eq!(node_size(&h, 3), 0);
    // case 6: cascade removal
    h.m.remove(&mut h.env.ctx(), true, false);
    drive(&mut h, &[], 10);
    assert_eq!(h.m.state, MaintainerState::Stopped);
    let mut mm = MaintainerManager::new(n(0));
    mm.coordinator = Some(n(COORD));
    mm.maintainers.insert(cf(), std::mem::replace(&mut h.m, MH::new(&[0], TestSchema::default()).m));
    mm.send_heartbeat(&mut h.env.ctx());
    assert!(mm.maintainers.is_empty(), "a stopped maintainer is forgotten once reported");
}

// maintainer_manager_test.go:516 — tables 1 and 2 reported Working by the node are adopted
// with their dispatcher IDs, tables 3 and 4 created: 4 replicating on the node, and the
// table trigger is not among the replicating spans.
#[test]
fn ticdc_maintainer_manager_TestMaintainerBootstrapWithTablesReported() {
    let mut h = MH::new(&[0], TestSchema::with_tables(&[1, 2, 3, 4]));
    let remote = [DispatcherId(9101), DispatcherId(9102)];
    let report = NodeReport::spans(vec![
        bspan(remote[0], TableSpan::full(1), Working, 10),
        bspan(remote[1], TableSpan::full(2), Working, 10),
    ]);
    h.bootstrap(vec![(0, report.clone())]);
    drive(&mut h, &[(0, report)], 5);
    assert_eq!(replicating_size(&h), 4);
    assert_eq!(node_size(&h, 0), 4);
    let ddl = h.ddl();
    let replicating: Vec<_> =
        h.m.pipe
            .sc
            .tasks
            .values()
            .filter(|r| r.id != ddl && r.state == crate::maintainer::span_controller::ReplicaState::Replicating)
            .collect();
    assert!(!replicating.iter().any(|r| r.span == TableSpan::ddl_span()));
    let found: Vec<TableId> = replicating.iter().filter(|r| remote.contains(&r.id)).map(|r| r.span.table_id).collect();
    assert_eq!(found.len(), 2);
    assert!(found.iter().all(|t| *t == 1 || *t == 2));
}

// maintainer_manager_test.go:644 — a cascade remove of a changefeed the node does not host
// eventually leaves the manager without a maintainer for it: the removal-only maintainer
// it starts closes the (mock) dispatcher manager, stops, and is cleaned up.
#[test]
fn ticdc_maintainer_manager_TestStopNotExistsMaintainer() {
    let mut m = MM::new();
    m.handle(Message::RemoveMaintainerRequest { cf: cf(), cascade: true, removed: true, maintainer_epoch: 0 });
    m.env.now = 5_000;
    m.mm.maintainers.get_mut(&cf()).unwrap().on_tick(&mut m.env.ctx(), &m.schema);
    let out = m.env.take();
    assert!(out.msgs.iter().any(|e| e.to == n(0) && matches!(e.msg, Message::MaintainerCloseRequest { .. })));
    m.mm.handle_message(
        &mut m.env.ctx(),
        n(0),
        Message::MaintainerCloseResponse { cf: cf(), success: true, maintainer_epoch: 0 },
        &m.schema,
    );
    m.mm.send_heartbeat(&mut m.env.ctx());
    assert!(!m.mm.maintainers.contains_key(&cf()));
}
