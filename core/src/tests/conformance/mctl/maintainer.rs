//! `maintainer/maintainer_test.go` at b813e76f9: the maintainer's event handlers, its remove
//! flow and `calculateNewCheckpointTs`.
//!
//! The harness starts every maintainer at checkpoint [`START`] (100) and commits the
//! checkpoint monotonically, so where Go expects a checkpoint below 100 the cases use the
//! same shape shifted above it (noted at each case).

use super::support::*;
use crate::maintainer::span_controller::{ReplicaState, SpanReplication};
use crate::maintainer::MaintainerState;
use crate::messages::*;
use crate::types::*;
use ComponentState::*;

const X: DispatcherId = DispatcherId(8001);

fn post_bootstrap_resp(epoch: Epoch) -> Message {
    Message::MaintainerPostBootstrapResponse {
        cf: cf(),
        table_trigger_event_dispatcher_id: DispatcherId(0),
        err: None,
        maintainer_epoch: epoch,
    }
}

/// A maintainer on node 0 (and the given others), bootstrapped, post-bootstrap not answered.
fn bootstrapped_no_post(alive: &[u32], schema: TestSchema) -> MH {
    let mut h = MH::new(alive, schema);
    for a in alive {
        h.respond(*a, NodeReport::default());
    }
    assert!(h.m.initialized());
    h
}

// maintainer_test.go:267 — a post-bootstrap response of another epoch does not stop the
// post-bootstrap resends; one of the current epoch does.
#[test]
fn ticdc_maintainer_TestMaintainerPostBootstrapResponseRequiresCurrentEpoch() {
    let mut h = bootstrapped_no_post(&[0], TestSchema::default());
    h.handle(0, post_bootstrap_resp(EPOCH - 1));
    assert!(!h.m.post_bootstrap_done);
    h.handle(0, post_bootstrap_resp(EPOCH));
    assert!(h.m.post_bootstrap_done);
}

fn remove_accepted(maintainer_epoch: Epoch, request_epoch: Epoch) -> bool {
    let mut env = Env::new(0);
    let mut mm = crate::maintainer::manager::MaintainerManager::new(n(0));
    mm.coordinator = Some(n(9));
    mm.alive = nodes(&[0]);
    let add = Message::AddMaintainerRequest {
        cf: cf(),
        config: crate::config::ChangefeedConfig::default(),
        checkpoint_ts: START,
        is_new_changefeed: false,
        maintainer_epoch,
    };
    mm.handle_message(&mut env.ctx(), n(9), add, &TestSchema::default());
    assert_eq!(mm.maintainers[&cf()].epoch, maintainer_epoch);
    let rm =
        Message::RemoveMaintainerRequest { cf: cf(), cascade: true, removed: false, maintainer_epoch: request_epoch };
    mm.handle_message(&mut env.ctx(), n(9), rm, &TestSchema::default());
    mm.maintainers[&cf()].state == MaintainerState::Removing
}

// maintainer_test.go:299 — a compatibility maintainer (epoch 0) takes remove requests of
// any epoch; a strict one (epoch 2) only of its own epoch, not 0 nor 1.
#[test]
fn ticdc_maintainer_TestMaintainerEpochRequestRequiresCompatOrCurrentEpoch() {
    assert!(remove_accepted(0, 0));
    assert!(remove_accepted(0, 2));
    assert!(!remove_accepted(2, 0));
    assert!(!remove_accepted(2, 1));
    assert!(remove_accepted(2, 2));
}

// maintainer_test.go:310 — a successful close response (compat epoch 0) reaching a
// maintainer that is not removing records nothing and does not start a removal.
#[test]
fn ticdc_maintainer_TestMaintainerCloseResponseIgnoredBeforeRemoving() {
    let mut h = MH::new(&[0, 1], TestSchema::default());
    h.bootstrap(vec![]);
    h.handle(1, Message::MaintainerCloseResponse { cf: cf(), success: true, maintainer_epoch: 0 });
    assert_eq!(h.m.state, MaintainerState::Working);
    assert!(h.m.close_pending.is_empty());
    // Nothing was recorded: a later cascade removal still waits for node 1.
    h.m.remove(&mut h.env.ctx(), true, false);
    assert!(h.m.close_pending.contains(&n(1)));
}

// maintainer_test.go:328 — single-node lifecycle: bootstrap with 100 tables, every table
// replicating on the node, then a (non-cascade) remove closes the maintainer.
#[test]
fn ticdc_maintainer_TestMaintainerSchedule() {
    let tables: Vec<TableId> = (1..=100).collect();
    let mut h = MH::new(&[0], TestSchema::with_tables(&tables));
    h.m.config.scheduler.add_table_batch_size = 10000;
    h.m.config.scheduler.check_balance_interval_ms = 60_000;
    h.bootstrap(vec![]);
    assert!(h.m.initialized());
    assert_eq!(h.m.pipe.sc.get(&h.ddl()).and_then(|r| r.last_state), Some(Working));
    basic(&mut h);
    finish_adds(&mut h);
    assert_eq!(replicating_size(&h), 100);
    assert_eq!(node_size(&h, 0), 100);
    h.m.remove(&mut h.env.ctx(), false, false);
    let out = h.execute();
    let reqs = schedule_reqs(&out);
    assert_eq!(reqs.len(), 1);
    assert_eq!((reqs[0].0, reqs[0].1.action, reqs[0].1.config.dispatcher_id), (n(0), ScheduleAction::Remove, h.ddl()));
    let ddl = h.ddl();
    status(&mut h, 0, ddl, Stopped, 100);
    h.execute();
    h.tick();
    assert_eq!(h.m.state, MaintainerState::Stopped);
    assert!(h.m.status().removed);
}

// maintainer_test.go:433 — the status reports the committed checkpoint (20), not the
// last reported watermark (30), with the maintainer epoch. LastSyncedTs is not modelled.
#[test]
fn ticdc_maintainer_TestMaintainer_GetMaintainerStatusUsesCommittedCheckpoint() {
    let mut h = MH::new(&[0], TestSchema::default());
    h.bootstrap(vec![]);
    // Go's 20 / 30, shifted above START: committed 120, watermark 130.
    h.m.pipe.committed_checkpoint = 120;
    h.m.pipe.sc.committed_checkpoint = 120;
    h.handle(0, heartbeat(130, 1, vec![]));
    let s = h.m.status();
    assert_eq!(s.checkpoint_ts, 120);
    assert_eq!(s.maintainer_epoch, EPOCH);
}

fn working_span_maintainer() -> MH {
    let mut h = MH::new(&[0], TestSchema::with_tables(&[1]));
    h.bootstrap(vec![(0, NodeReport::spans(vec![bspan(X, TableSpan::full(1), Working, 110)]))]);
    assert_eq!(h.state(X), Some((ReplicaState::Replicating, Some(n(0)))));
    h
}

// maintainer_test.go:547 (sub-case of :470) — a Stopped status without an operator makes a
// working maintainer mark the span absent (unbound).
#[test]
fn ticdc_maintainer_TestMaintainerHeartbeatDuringRemovingSkipsFailoverRecovery_normal_maintainer_still_self_heals() {
    let mut h = working_span_maintainer();
    h.handle(0, heartbeat(120, 1, vec![st(X, Stopped, 120)]));
    assert_eq!(absent_size(&h), 1);
    assert_eq!(h.m.pipe.sc.get(&X).and_then(|r| r.last_state), Some(Stopped));
    assert_eq!(h.state(X).and_then(|s| s.1), None);
}

// maintainer_test.go:560 (sub-case of :470) — once removing, the same status only updates
// the span's runtime status: it stays bound, nothing absent, no operator.
#[test]
fn ticdc_maintainer_TestMaintainerHeartbeatDuringRemovingSkipsFailoverRecovery_removing_maintainer_skips_self_healing()
{
    let mut h = working_span_maintainer();
    // Go sets only the removing flag (no trigger close operator): a cascade removal.
    h.m.remove(&mut h.env.ctx(), true, false);
    h.env.take();
    h.handle(0, heartbeat(120, 1, vec![st(X, Stopped, 120)]));
    assert_eq!(absent_size(&h), 0);
    assert_eq!(h.m.pipe.sc.get(&X).and_then(|r| r.last_state), Some(Stopped));
    assert_eq!(h.state(X).and_then(|s| s.1), Some(n(0)));
    assert_eq!(op_size(&h), 0);
}

// maintainer_test.go:573 — a removing maintainer resends neither bootstrap, post-bootstrap
// nor barrier messages and ignores block statuses; once cascade, it sends a close request
// to each of the 2 nodes.
#[test]
fn ticdc_maintainer_TestMaintainerRemovingSuppressesLegacyControlPlaneActions() {
    let mut h = bootstrapped_no_post(&[0, 1], TestSchema::default());
    h.m.remove(&mut h.env.ctx(), false, false);
    h.env.take();
    h.env.now += 10_000;
    let out = h.tick();
    assert!(out.msgs.is_empty(), "{:?}", out.msgs);
    let out = h.handle(0, block_statuses(vec![]));
    assert!(out.msgs.is_empty());
    let ddl = h.ddl();
    let out = h.handle(0, block_statuses(vec![(ddl, block(150, normal(&[DDL_SPAN_TABLE_ID]), BlockStage::Waiting))]));
    assert!(out.msgs.is_empty());
    h.env.now += 10_000;
    h.m.remove(&mut h.env.ctx(), true, false);
    let out = h.env.take();
    let closes: Vec<NodeId> = out
        .msgs
        .iter()
        .filter_map(|e| match &e.msg {
            Message::MaintainerCloseRequest { cf: c, .. } if *c == cf() => Some(e.to),
            _ => None,
        })
        .collect();
    assert_eq!(closes.len(), 2);
    assert_eq!(out.msgs.len(), 2);
}

// maintainer_test.go:624 (sub-case of :623) — the own node's reported watermark is the
// checkpoint. Go's 100 is shifted to 150 (100 is the harness's start checkpoint).
#[test]
fn ticdc_maintainer_TestMaintainerCalculateNewCheckpointTs_uses_reported_checkpoint() {
    let mut h = MH::new(&[0], TestSchema::default());
    h.bootstrap(vec![]);
    h.handle(0, heartbeat(150, 1, vec![]));
    assert_eq!(h.m.calc_checkpoint(), Some(150));
}

// maintainer_test.go:639 (sub-case of :623) — a watermark of MaxUint64 is no checkpoint.
#[test]
fn ticdc_maintainer_TestMaintainerCalculateNewCheckpointTs_drops_max_checkpoint() {
    let mut h = MH::new(&[0], TestSchema::default());
    h.bootstrap(vec![]);
    h.handle(0, heartbeat(u64::MAX, 1, vec![]));
    assert_eq!(h.m.calc_checkpoint(), None);
    assert_eq!(h.m.pipe.committed_checkpoint, START);
}

// maintainer_test.go:652 (sub-case of :623) — a removing maintainer, ordinary operators
// frozen, still computes the checkpoint, capped by the in-flight Add's span. Go's span
// checkpoint 10 / watermark 100 are shifted to 120 / 200.
#[test]
fn ticdc_maintainer_TestMaintainerCalculateNewCheckpointTs_removing_keeps_blocked_add_operator_checkpoint_constraint() {
    let mut h = MH::new(&[0], TestSchema::default());
    h.bootstrap(vec![]);
    h.m.pipe.sc.insert(SpanReplication {
        id: X,
        span: TableSpan::full(101),
        schema_id: SCHEMA,
        node: None,
        state: ReplicaState::Absent,
        checkpoint_ts: 120,
        last_state: Some(Working),
        block_state: None,
    });
    let op = crate::maintainer::operator::Operator::Add(crate::maintainer::operator::AddDispatcherOperator::new(
        X,
        n(0),
        OperatorType::Add,
    ));
    assert!(h.m.admit(&mut h.env.ctx(), op));
    h.m.remove(&mut h.env.ctx(), false, false);
    assert_eq!(h.m.state, MaintainerState::Removing);
    h.handle(0, heartbeat(200, 1, vec![]));
    assert_eq!(h.m.calc_checkpoint(), Some(120));
    assert_eq!(h.m.pipe.committed_checkpoint, 120);
}

// maintainer_test.go:700 — while the only watermark is MaxUint64 the committed checkpoint
// does not move; a valid watermark then commits. Go's 1 -> 2 is shifted to START -> 120.
#[test]
fn ticdc_maintainer_TestMaintainerCalCheckpointTsSkipsInvalidGlobalCheckpoint() {
    let mut h = MH::new(&[0], TestSchema::default());
    h.bootstrap(vec![]);
    h.handle(0, heartbeat(u64::MAX, 1, vec![]));
    for _ in 0..5 {
        h.m.calc_checkpoint();
        assert_eq!(h.m.pipe.committed_checkpoint, START);
        assert_eq!(h.m.status().checkpoint_ts, START);
    }
    h.handle(0, heartbeat(120, 2, vec![]));
    h.m.calc_checkpoint();
    assert_eq!(h.m.pipe.committed_checkpoint, 120);
    assert_eq!(h.m.pipe.sc.committed_checkpoint, 120);
    assert_eq!(h.m.status().checkpoint_ts, 120);
}

// maintainer_test.go:781 — with the event checkpoint at 100 and the maintainer node's
// redo watermark at 40, one redo meta round advances the **redo** span controller's
// committed checkpoint to 40. Shifted above the harness's start: event START + 100, redo
// START + 40.
#[test]
fn ticdc_maintainer_TestMaintainerHandleRedoMetaTsMessageUsesRedoCheckpointForRedoController() {
    let mut config = crate::config::ChangefeedConfig::default();
    config.consistent.level = crate::config::ConsistentLevel::Eventual;
    let mut h = MH::with_config(Env::new(0), &[0], TestSchema::with_tables(&[]), config);
    let redo_ddl = h.m.redo_pipe.as_ref().unwrap().sc.ddl_span_id;
    let spans = vec![
        bspan(h.ddl(), TableSpan::ddl_span(), Working, START),
        BootstrapTableSpan { mode: Mode::Redo, ..bspan(redo_ddl, TableSpan::ddl_span(), Working, START) },
    ];
    h.handle(
        0,
        Message::MaintainerBootstrapResponse {
            cf: cf(),
            spans,
            checkpoint_ts: START,
            redo_checkpoint_ts: START,
            operators: vec![],
            merge_operators: vec![],
            err: None,
            maintainer_epoch: EPOCH,
        },
    );
    assert!(h.m.initialized());
    h.handle(
        0,
        Message::HeartBeatRequest {
            cf: cf(),
            watermark: Watermark { checkpoint_ts: START + 100, resolved_ts: START + 100, seq: 1 },
            redo_watermark: Some(Watermark { checkpoint_ts: START + 40, resolved_ts: START + 40, seq: 1 }),
            statuses: vec![],
            complete_status: false,
            err: None,
        },
    );
    assert_eq!(h.m.calc_checkpoint(), Some(START + 100));
    h.m.run_redo_meta(&mut h.env.ctx());
    assert_eq!(h.m.redo_pipe.as_ref().unwrap().sc.committed_checkpoint, START + 40);
    assert_eq!(h.m.pipe.sc.committed_checkpoint, START + 100);
}
