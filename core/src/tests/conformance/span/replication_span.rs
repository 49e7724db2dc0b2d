//! `maintainer/replica/replication_span_test.go`: a span's status updates and the
//! Create / Remove requests built for it (`NewAddDispatcherMessage`: start ts from the
//! checkpoint, an in-flight barrier and the committed checkpoint). The model builds them
//! in the Add and Remove operators ([`crate::maintainer::operator::create_config`]).

use super::support::*;
use crate::maintainer::operator::{AddDispatcherOperator, RemoveDispatcherOperator, RemovePostFinish};
use crate::maintainer::span_controller::SpanController;
use crate::messages::*;
use crate::tests::harness::*;
use crate::types::*;

/// A controller holding `NewSpanReplication(.., table 4, checkpoint cp)` as `d(11)`.
fn with_span(cp: Ts) -> SpanController {
    let mut sc = controller(false);
    sc.insert(span_rep(11, 1, 4, cp));
    sc
}

fn block_state(ts: Ts, sync_point: bool, stage: BlockStage) -> BlockState {
    BlockState {
        is_blocked: true,
        block_ts: ts,
        block_tables: None,
        need_dropped_tables: None,
        need_added_tables: vec![],
        updated_schemas: vec![],
        is_sync_point: sync_point,
        stage,
    }
}

/// `NewAddDispatcherMessage("node1", O_Add, 7)`.
fn create(sc: &SpanController) -> (NodeId, ScheduleDispatcherRequest) {
    AddDispatcherOperator::new(d(11), n(1), OperatorType::Add).schedule(sc, 0, 7).expect("a Create")
}

// replication_span_test.go:25 — a lower checkpoint does not replace a higher one.
#[test]
fn ticdc_replication_span_TestUpdateStatus() {
    let mut sc = with_span(10);
    sc.update_status(&d(11), &working(d(11), 9));
    assert_eq!(sc.get(&d(11)).unwrap().checkpoint_ts, 10);
    sc.update_status(&d(11), &working(d(11), 11));
    assert_eq!(sc.get(&d(11)).unwrap().checkpoint_ts, 11);
}

// replication_span_test.go:35 — the Remove request names the dispatcher, its span, the
// epoch, and goes to the node.
#[test]
fn ticdc_replication_span_TestNewRemoveDispatcherMessage() {
    let sc = with_span(10);
    let r = sc.get(&d(11)).unwrap();
    let mut op = RemoveDispatcherOperator::new(r.id, r.span, n(1), OperatorType::Remove, RemovePostFinish::None);
    let (to, req) = op.schedule(0, 7).expect("a Remove");
    assert_eq!(req.action, ScheduleAction::Remove);
    assert_eq!(req.config.dispatcher_id, r.id);
    assert_eq!(req.config.span, r.span);
    assert_eq!(req.maintainer_epoch, 7);
    assert_eq!(to, n(1));
}

// replication_span_test.go:48 — the Create request: node, dispatcher, schema, start ts
// at the checkpoint, no DML skip, the epoch.
#[test]
fn ticdc_replication_span_TestSpanReplication_NewAddDispatcherMessage() {
    let mut sc = with_span(10);
    sc.committed_checkpoint = 0;
    let (to, req) = create(&sc);
    assert_eq!(to, n(1));
    assert_eq!(req.action, ScheduleAction::Create);
    assert_eq!(req.config.dispatcher_id, d(11));
    assert_eq!(req.config.schema_id, 1);
    assert_eq!(req.config.start_ts, 10);
    assert!(!req.config.skip_dml_as_start_ts);
    assert_eq!(req.maintainer_epoch, 7);
}

// replication_span_test.go:64 — the start ts is raised to the committed checkpoint.
#[test]
fn ticdc_replication_span_TestSpanReplication_NewAddDispatcherMessage_ClampToCommittedCheckpoint() {
    let mut sc = with_span(10);
    sc.advance_committed_checkpoint(20);
    let (_, req) = create(&sc);
    assert_eq!(req.config.start_ts, 20);
    assert!(!req.config.skip_dml_as_start_ts);
}

// replication_span_test.go:76 — an in-flight syncpoint: start at its block ts.
#[test]
fn ticdc_replication_span_TestSpanReplication_NewAddDispatcherMessage_UseBlockTsForInFlightSyncPoint() {
    let mut sc = with_span(9);
    sc.committed_checkpoint = 0;
    sc.get_mut(&d(11)).unwrap().block_state = Some(block_state(10, true, BlockStage::Waiting));
    let (_, req) = create(&sc);
    assert_eq!(req.config.start_ts, 10);
    assert!(!req.config.skip_dml_as_start_ts);
}

// replication_span_test.go:93 — an in-flight syncpoint above the committed checkpoint
// wins over it.
#[test]
fn ticdc_replication_span_TestSpanReplication_NewAddDispatcherMessage_UseSyncPointBlockTsWhenCommittedIsLower() {
    let mut sc = with_span(10);
    sc.advance_committed_checkpoint(20);
    sc.get_mut(&d(11)).unwrap().block_state = Some(block_state(30, true, BlockStage::Waiting));
    let (_, req) = create(&sc);
    assert_eq!(req.config.start_ts, 30);
    assert!(!req.config.skip_dml_as_start_ts);
}

// replication_span_test.go:111 — a syncpoint that is DONE does not move the start ts.
#[test]
fn ticdc_replication_span_TestSpanReplication_NewAddDispatcherMessage_DontUseBlockTsAfterSyncPointDone() {
    let mut sc = with_span(20);
    sc.committed_checkpoint = 0;
    sc.get_mut(&d(11)).unwrap().block_state = Some(block_state(10, true, BlockStage::Done));
    let (_, req) = create(&sc);
    assert_eq!(req.config.start_ts, 20);
    assert!(!req.config.skip_dml_as_start_ts);
}

// replication_span_test.go:128 — an in-flight DDL: start at block ts - 1, skipping DMLs
// at the block ts.
#[test]
fn ticdc_replication_span_TestSpanReplication_NewAddDispatcherMessage_UseBlockTsMinusOneForDDLInFlight() {
    let mut sc = with_span(9);
    sc.committed_checkpoint = 0;
    sc.get_mut(&d(11)).unwrap().block_state = Some(block_state(10, false, BlockStage::Waiting));
    let (_, req) = create(&sc);
    assert_eq!(req.config.start_ts, 9);
    assert!(req.config.skip_dml_as_start_ts);
}

// replication_span_test.go:145 — a DDL barrier the committed checkpoint has passed is
// stale: start at the committed checkpoint, no DML skip.
#[test]
fn ticdc_replication_span_TestSpanReplication_NewAddDispatcherMessage_UseCommittedCheckpointForStaleDDLBarrier() {
    let mut sc = with_span(9);
    sc.advance_committed_checkpoint(10);
    sc.get_mut(&d(11)).unwrap().block_state = Some(block_state(10, false, BlockStage::Waiting));
    let (_, req) = create(&sc);
    assert_eq!(req.config.start_ts, 10);
    assert!(!req.config.skip_dml_as_start_ts);
}

// replication_span_test.go:163 — the same for a barrier in the WRITING stage.
#[test]
fn ticdc_replication_span_TestSpanReplication_NewAddDispatcherMessage_UseCommittedCheckpointForStaleDDLBarrierWritingStage(
) {
    let mut sc = with_span(9);
    sc.advance_committed_checkpoint(11);
    sc.get_mut(&d(11)).unwrap().block_state = Some(block_state(10, false, BlockStage::Writing));
    let (_, req) = create(&sc);
    assert_eq!(req.config.start_ts, 11);
    assert!(!req.config.skip_dml_as_start_ts);
}
