//! Start ts of a Create (§6.3, `operator::add_dispatcher_config`).

use super::harness::*;
use crate::config::SchedulerConfig;
use crate::maintainer::operator::*;
use crate::maintainer::span_controller::{ReplicaState, SpanController, SpanReplication};
use crate::messages::*;
use crate::types::*;

const ID: DispatcherId = DispatcherId(9);

fn rep(cp: Ts, block_state: Option<BlockState>) -> SpanReplication {
    SpanReplication {
        id: ID,
        span: TableSpan::full(3),
        schema_id: SCHEMA,
        node: None,
        state: ReplicaState::Absent,
        checkpoint_ts: cp,
        last_state: None,
        block_state,
    }
}

fn blocked(ts: Ts, stage: BlockStage, sync_point: bool) -> Option<BlockState> {
    let mut b = block(ts, normal(&[3, 4]), stage);
    b.is_blocked = true;
    b.is_sync_point = sync_point;
    Some(b)
}

fn cfg(cp: Ts, b: Option<BlockState>, committed: Ts) -> (Ts, bool) {
    let c = add_dispatcher_config(&rep(cp, b), committed);
    (c.start_ts, c.skip_dml_as_start_ts)
}

#[test]
fn ddl_blocked_in_writing_starts_at_block_ts_minus_one_and_skips_dml() {
    assert_eq!(cfg(100, blocked(200, BlockStage::Writing, false), 0), (199, true));
    assert_eq!(cfg(100, blocked(200, BlockStage::Waiting, false), 0), (199, true));
}

#[test]
fn syncpoint_starts_at_block_ts_without_skip() {
    assert_eq!(cfg(100, blocked(200, BlockStage::Writing, true), 0), (200, false));
}

#[test]
fn done_none_or_unblocked_states_do_not_move_the_start() {
    assert_eq!(cfg(100, blocked(200, BlockStage::Done, false), 0), (100, false));
    assert_eq!(cfg(100, blocked(200, BlockStage::None, false), 0), (100, false));
    let mut b = blocked(200, BlockStage::Waiting, false);
    b.as_mut().unwrap().is_blocked = false;
    assert_eq!(cfg(100, b, 0), (100, false));
    assert_eq!(cfg(100, blocked(0, BlockStage::Waiting, false), 0), (100, false), "block ts 0 is no block");
}

#[test]
fn checkpoint_already_past_block_ts_minus_one_keeps_checkpoint_and_no_skip() {
    // The task's checkpoint is above blockTs-1: start there; skipping would drop rows at start+1.
    assert_eq!(cfg(250, blocked(200, BlockStage::Waiting, false), 0), (250, false));
    // Exactly blockTs-1: skip applies.
    assert_eq!(cfg(199, blocked(200, BlockStage::Waiting, false), 0), (199, true));
}

#[test]
fn clamp_to_committed_checkpoint_drops_skip() {
    assert_eq!(cfg(100, blocked(200, BlockStage::Waiting, false), 250), (250, false));
    assert_eq!(cfg(100, blocked(200, BlockStage::Waiting, true), 250), (250, false));
    // Equal to the committed checkpoint: no clamp, the skip stays.
    assert_eq!(cfg(100, blocked(200, BlockStage::Waiting, false), 199), (199, true));
    assert_eq!(cfg(100, None, 150), (150, false));
    assert_eq!(cfg(180, None, 150), (180, false), "never lowered to the committed checkpoint");
}

#[test]
fn add_and_move_creates_use_the_rules_with_the_controllers_committed_checkpoint() {
    let mut sc = SpanController::new(d(1), n(0), 100, SchedulerConfig::default());
    sc.insert(rep(100, blocked(200, BlockStage::Writing, false)));
    let mut add = AddDispatcherOperator::new(ID, n(1), OperatorType::Add);
    add.start(&mut sc);
    let (_, req) = add.schedule(&sc, 0, 1).unwrap();
    assert_eq!((req.config.start_ts, req.config.skip_dml_as_start_ts), (199, true));
    sc.committed_checkpoint = 300;
    let mut mv = MoveDispatcherOperator::new(ID, None, n(2));
    mv.start(&mut sc);
    mv.on_node_remove(NodeId(u32::MAX), &mut sc);
    let (_, req) = mv.schedule(&sc, 0, 1).unwrap();
    assert_eq!(
        (req.action, req.config.start_ts, req.config.skip_dml_as_start_ts),
        (ScheduleAction::Create, 300, false)
    );
}
