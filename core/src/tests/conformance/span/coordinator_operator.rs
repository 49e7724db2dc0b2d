//! `coordinator/operator/operator_{add,move,controller}_test.go`: the coordinator's
//! maintainer operators. The model has no operator objects: the add and move operators
//! are states of [`Coordinator`]'s per-changefeed runtime (`operator_in_flight`,
//! `maintainer_of`, the requests it sends), driven by `tick`, `on_node_change`,
//! `handle_message` and `move_maintainer`. Go's `Stopped` maintainer status is a status
//! with `removed`; Go's node IDs `n1`, `n2` are `n(1)`, `n(2)`; the coordinator runs on
//! `n(0)`.

use crate::config::ChangefeedConfig;
use crate::coordinator::{ChangefeedInfo, Coordinator, MetaStore, COORDINATOR_RESEND_MS};
use crate::effects::Out;
use crate::messages::*;
use crate::tests::harness::*;
use crate::types::*;

/// Epoch persisted for the changefeed before the tests' first placement.
const OLD_EPOCH: Epoch = 1 << 50;

struct CH {
    c: Coordinator,
    meta: MetaStore,
    env: Env,
}

impl CH {
    /// A coordinator with `alive` nodes, all reported (discovery over), and one Normal
    /// changefeed at epoch [`OLD_EPOCH`] not placed yet.
    fn new(alive: &[u32]) -> Self {
        let mut meta = MetaStore::default();
        meta.changefeeds.insert(
            cf(),
            ChangefeedInfo {
                id: cf(),
                config: ChangefeedConfig::default(),
                epoch: OLD_EPOCH,
                checkpoint_ts: START,
                state: FeedState::Normal,
                last_error: None,
                created: true,
            },
        );
        let mut h = CH { c: Coordinator::new(n(0), nodes(alive)), meta, env: Env::new(0) };
        for a in alive {
            h.handle(*a, vec![]);
        }
        h
    }
    fn handle(&mut self, from: u32, statuses: Vec<MaintainerStatus>) -> Out {
        self.c.handle_message(&mut self.env.ctx(), n(from), Message::MaintainerHeartbeat { statuses }, &mut self.meta);
        self.env.take()
    }
    fn tick(&mut self) -> Out {
        self.c.tick(&mut self.env.ctx(), &mut self.meta);
        self.env.take()
    }
    /// A membership change; nodes that join report (no maintainers) right away.
    fn nodes(&mut self, alive: &[u32]) -> Out {
        let joined: Vec<u32> = alive.iter().copied().filter(|a| !self.c.alive.contains(&n(*a))).collect();
        self.c.on_node_change(&mut self.env.ctx(), &nodes(alive), &mut self.meta);
        let mut out = self.env.take();
        for a in joined {
            out.msgs.extend(self.handle(a, vec![]).msgs);
        }
        out
    }
    fn status(&mut self, from: u32, epoch: Epoch, bootstrap_done: bool, removed: bool) -> Out {
        let st = MaintainerStatus {
            changefeed: cf(),
            checkpoint_ts: START,
            bootstrap_done,
            errors: vec![],
            maintainer_epoch: epoch,
            removed,
        };
        self.handle(from, vec![st])
    }
    fn move_to(&mut self, dest: u32) -> Option<NodeId> {
        let r = self.c.move_maintainer(&mut self.env.ctx(), &cf(), n(dest), &mut self.meta);
        self.env.take();
        r
    }
    fn persisted_epoch(&self) -> Epoch {
        self.meta.changefeeds[&cf()].epoch
    }
}

/// AddMaintainerRequests in `out`: (destination, epoch).
fn adds(out: &Out) -> Vec<(NodeId, Epoch)> {
    out.msgs
        .iter()
        .filter_map(|e| match &e.msg {
            Message::AddMaintainerRequest { maintainer_epoch, .. } => Some((e.to, *maintainer_epoch)),
            _ => None,
        })
        .collect()
}

/// RemoveMaintainerRequests in `out`: (destination, epoch, cascade).
fn removes(out: &Out) -> Vec<(NodeId, Epoch, bool)> {
    out.msgs
        .iter()
        .filter_map(|e| match &e.msg {
            Message::RemoveMaintainerRequest { maintainer_epoch, cascade, .. } => {
                Some((e.to, *maintainer_epoch, *cascade))
            }
            _ => None,
        })
        .collect()
}

/// The changefeed placed on n1 (its add in flight); returns the epoch of the add.
fn placed_on_n1() -> (CH, Epoch) {
    let mut h = CH::new(&[1]);
    let out = h.tick();
    let a = adds(&out);
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].0, n(1));
    (h, a[0].1)
}

/// The changefeed replicating on n1 (bootstrap done), n2 alive, and a move n1 -> n2
/// admitted; returns the epoch of the maintainer on n1.
fn moving_n1_to_n2() -> (CH, Epoch) {
    let (mut h, e) = placed_on_n1();
    h.status(1, e, true, false);
    h.nodes(&[1, 2]);
    assert_eq!(h.move_to(2), Some(n(1)));
    (h, e)
}

// ---------------------------------------------------------------- operator_add_test.go

// operator_add_test.go:29 — losing another node does not cancel the add; losing its
// destination does, and nothing more is sent.
#[test]
fn ticdc_coordinator_operator_add_TestAddMaintainerOperator_OnNodeRemove() {
    let (mut h, _) = placed_on_n1();
    h.nodes(&[1, 2]);
    h.nodes(&[1]);
    assert!(h.c.operator_in_flight(&cf()), "the add is still in flight");
    assert_eq!(h.c.maintainer_of(&cf()), Some(n(1)));
    let out = h.nodes(&[]);
    assert_eq!(h.c.maintainer_of(&cf()), None);
    assert!(adds(&out).is_empty());
    h.env.now += COORDINATOR_RESEND_MS;
    assert!(h.tick().msgs.is_empty(), "no more requests");
}

// operator_add_test.go:56 — the add finishes only on a Working status with BootstrapDone
// from its destination.
#[test]
fn ticdc_coordinator_operator_add_TestAddMaintainerOperator_CheckRequiresBootstrapDone() {
    let (mut h, e) = placed_on_n1();
    h.status(1, e, false, false);
    assert!(h.c.operator_in_flight(&cf()));
    h.status(1, e, true, false);
    assert!(!h.c.operator_in_flight(&cf()));
}

// operator_add_test.go:80 — a status without an epoch (an older capture during a rolling
// upgrade) is accepted.
#[test]
fn ticdc_coordinator_operator_add_TestAddMaintainerOperator_CheckAcceptsCompatEpochDuringRollingUpgrade() {
    let (mut h, _) = placed_on_n1();
    h.status(1, 0, true, false);
    assert!(!h.c.operator_in_flight(&cf()));
}

// ---------------------------------------------------------------- operator_move_test.go

// operator_move_test.go:28 (sub-case "dest removed before origin stopped keeps removing
// origin") — the move keeps removing the origin (with its epoch); the changefeed stays
// on n1.
#[test]
fn ticdc_coordinator_operator_move_TestMoveMaintainerOperator_OnNodeRemove_dest_removed_before_origin_stopped_keeps_removing_origin(
) {
    let (mut h, e) = moving_n1_to_n2();
    h.nodes(&[1]);
    h.env.now += COORDINATOR_RESEND_MS;
    let out = h.tick();
    assert_eq!(removes(&out), vec![(n(1), e, false)]);
    assert_eq!(h.c.maintainer_of(&cf()), Some(n(1)));
}

// operator_move_test.go:43 (sub-case "dest removed after origin stopped adds back to
// origin") — the add goes to the origin instead.
#[test]
fn ticdc_coordinator_operator_move_TestMoveMaintainerOperator_OnNodeRemove_dest_removed_after_origin_stopped_adds_back_to_origin(
) {
    let (mut h, e) = moving_n1_to_n2();
    h.status(1, e, false, true);
    let mut out = h.nodes(&[1]);
    out.msgs.extend(h.tick().msgs);
    let a = adds(&out);
    assert_eq!(a.len(), 1, "{:?}", a);
    assert_eq!(a[0].0, n(1));
    assert_eq!(h.c.maintainer_of(&cf()), Some(n(1)));
}

// operator_move_test.go:64 (sub-case "dest removed after add starts marks absent") —
// losing the destination once its add was sent leaves the changefeed absent.
#[test]
#[ignore = "deviation: on_node_change re-places a changefeed that lost its node at once (the coordinator's basic scheduler runs in the same step), so the absent state is not observable"]
fn ticdc_coordinator_operator_move_TestMoveMaintainerOperator_OnNodeRemove_dest_removed_after_add_starts_marks_absent()
{
    let (mut h, e) = moving_n1_to_n2();
    h.status(1, e, false, true);
    let out = h.tick();
    assert_eq!(adds(&out).len(), 1);
    assert_eq!(h.c.maintainer_of(&cf()), Some(n(2)));
    let out = h.nodes(&[1]);
    assert_eq!(h.c.maintainer_of(&cf()), None, "absent");
    assert!(adds(&out).is_empty());
}

// operator_move_test.go:87 (sub-case "origin removed falls through to destination add")
// — losing the origin goes straight to adding on the destination.
#[test]
fn ticdc_coordinator_operator_move_TestMoveMaintainerOperator_OnNodeRemove_origin_removed_falls_through_to_destination_add(
) {
    let (mut h, _) = moving_n1_to_n2();
    let mut out = h.nodes(&[2]);
    out.msgs.extend(h.tick().msgs);
    let a = adds(&out);
    assert_eq!(a.len(), 1, "{:?}", a);
    assert_eq!(a[0].0, n(2));
    assert_eq!(h.c.maintainer_of(&cf()), Some(n(2)));
}

// operator_move_test.go:101 (sub-case "fallback origin removed marks absent") — losing
// the destination, then the origin: absent, nothing sent.
#[test]
fn ticdc_coordinator_operator_move_TestMoveMaintainerOperator_OnNodeRemove_fallback_origin_removed_marks_absent() {
    let (mut h, _) = moving_n1_to_n2();
    h.nodes(&[1]);
    let out = h.nodes(&[]);
    assert_eq!(h.c.maintainer_of(&cf()), None);
    assert!(out.msgs.is_empty(), "{:?}", out.msgs);
    h.env.now += COORDINATOR_RESEND_MS;
    assert!(h.tick().msgs.is_empty());
}

// operator_move_test.go:114 (sub-case "origin removed before fallback target marks
// absent") — losing the origin, then the destination: absent on both.
#[test]
fn ticdc_coordinator_operator_move_TestMoveMaintainerOperator_OnNodeRemove_origin_removed_before_fallback_target_marks_absent(
) {
    let (mut h, _) = moving_n1_to_n2();
    h.nodes(&[2]);
    assert_ne!(h.c.maintainer_of(&cf()), Some(n(1)), "the origin is gone");
    let out = h.nodes(&[]);
    assert_eq!(h.c.maintainer_of(&cf()), None);
    assert!(adds(&out).is_empty());
    h.env.now += COORDINATOR_RESEND_MS;
    assert!(h.tick().msgs.is_empty());
}

// operator_move_test.go:161 — once the origin stopped the destination is added; the move
// finishes only on the destination's BootstrapDone, then sends nothing more. (The Go
// statuses carry no epoch, which matches any generation.)
#[test]
fn ticdc_coordinator_operator_move_TestMoveMaintainerOperator_CheckRequiresDestBootstrapDone() {
    let (mut h, _) = moving_n1_to_n2();
    h.status(1, 0, false, true);
    assert!(h.c.operator_in_flight(&cf()));
    let out = h.tick();
    let a = adds(&out);
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].0, n(2));
    h.status(2, 0, false, false);
    assert!(h.c.operator_in_flight(&cf()));
    h.status(2, 0, true, false);
    assert!(!h.c.operator_in_flight(&cf()));
    assert!(h.tick().msgs.is_empty());
}

// operator_move_test.go:193 — the destination's status without an epoch (rolling
// upgrade) finishes the move.
#[test]
fn ticdc_coordinator_operator_move_TestMoveMaintainerOperator_CheckAcceptsCompatDestEpochDuringRollingUpgrade() {
    let (mut h, e) = moving_n1_to_n2();
    h.status(1, e, false, true);
    assert_eq!(adds(&h.tick()).len(), 1);
    h.status(2, 0, true, false);
    assert!(!h.c.operator_in_flight(&cf()));
}

// operator_move_test.go:220 — losing the destination after the move finished leaves the
// changefeed absent.
#[test]
#[ignore = "deviation: on_node_change re-places a changefeed that lost its node at once (the coordinator's basic scheduler runs in the same step), so the absent state is not observable"]
fn ticdc_coordinator_operator_move_TestMoveMaintainerOperator_OnNodeRemoveAfterFinishMarksAbsent() {
    let (mut h, _) = moving_n1_to_n2();
    h.status(1, 0, false, true);
    assert_eq!(adds(&h.tick()).len(), 1);
    assert_eq!(h.c.maintainer_of(&cf()), Some(n(2)));
    h.status(2, 0, true, false);
    assert!(!h.c.operator_in_flight(&cf()));
    h.nodes(&[1]);
    assert_eq!(h.c.maintainer_of(&cf()), None, "absent");
}

// ---------------------------------------------------------------- operator_controller_test.go

// operator_controller_test.go:226 (sub-case "add-maintainer") — admitting an add bumps
// the epoch to persisted + 1, persisted before the add request carries it.
#[test]
fn ticdc_coordinator_operator_controller_TestController_AddOperatorBumpsAndPersistsOwnershipEpoch_add_maintainer() {
    let mut h = CH::new(&[1]);
    let out = h.tick();
    assert_eq!(h.persisted_epoch(), OLD_EPOCH + 1);
    assert_eq!(adds(&out), vec![(n(1), OLD_EPOCH + 1)]);
}

// operator_controller_test.go:226 (sub-case "move-maintainer") — admitting a move bumps
// and persists the epoch at once; the origin is removed with the old epoch, the
// destination added with the new one.
#[test]
fn ticdc_coordinator_operator_controller_TestController_AddOperatorBumpsAndPersistsOwnershipEpoch_move_maintainer() {
    let (mut h, e) = moving_n1_to_n2();
    let expected = e + 1;
    assert_eq!(h.persisted_epoch(), expected);
    h.env.now += COORDINATOR_RESEND_MS;
    assert_eq!(removes(&h.tick()), vec![(n(1), e, false)]);
    h.status(1, e, false, true);
    assert_eq!(adds(&h.tick()), vec![(n(2), expected)]);
}

/// `TestController_StopChangefeedDuringMoveUsesOriginEpoch`, both sub-cases.
fn stop_during_move(origin_stopped_before_stop: bool) {
    let (mut h, e) = moving_n1_to_n2();
    assert_eq!(h.persisted_epoch(), e + 1, "the move's epoch is persisted at admission");
    if origin_stopped_before_stop {
        h.status(1, e, false, true);
    }
    assert!(h.c.pause_changefeed(&mut h.env.ctx(), &cf(), &mut h.meta));
    let out = h.env.take();
    assert_eq!(removes(&out), vec![(n(1), e, true)], "the stop removes the origin with its epoch");
    h.status(1, e + 1, false, true);
    assert!(h.c.operator_in_flight(&cf()));
    assert_eq!(h.c.maintainer_of(&cf()), Some(n(1)), "a status of another epoch does not finish the stop");
    h.status(1, e, false, true);
    assert_eq!(h.c.maintainer_of(&cf()), None, "stopped");
}

// operator_controller_test.go:367 (sub-case "before-origin-stopped") — a stop during a
// move removes the origin with the origin's epoch and finishes on its Stopped status.
#[test]
fn ticdc_coordinator_operator_controller_TestController_StopChangefeedDuringMoveUsesOriginEpoch_before_origin_stopped()
{
    stop_during_move(false);
}

// operator_controller_test.go:367 (sub-case "after-origin-stopped-before-dest-bind") —
// the same once the origin already stopped and the destination is not bound yet.
#[test]
#[ignore = "deviation: no cascade remove of a maintainer a node does not host (docs/fidelity.md #24), so a stop after the origin stopped sends nothing"]
fn ticdc_coordinator_operator_controller_TestController_StopChangefeedDuringMoveUsesOriginEpoch_after_origin_stopped_before_dest_bind(
) {
    stop_during_move(true);
}

// operator_controller_test.go:146 — one operator per changefeed: a second one is refused
// while the first is in flight, and a changefeed the coordinator does not know gets none.
// (The model's operators are the coordinator's own: the add it places, a move it is
// asked for.)
#[test]
fn ticdc_coordinator_operator_controller_TestController_AddOperator() {
    let (mut h, e) = placed_on_n1();
    h.nodes(&[1, 2]);
    assert!(h.c.operator_in_flight(&cf()), "the add is in flight");
    assert_eq!(h.move_to(2), None, "refused while the add runs");
    h.status(1, e, true, false);
    assert_eq!(h.move_to(2), Some(n(1)), "admitted");
    assert_eq!(h.move_to(2), None, "refused while the move runs");
    let cf2 = ChangefeedId("test2".into());
    assert_eq!(h.c.move_maintainer(&mut h.env.ctx(), &cf2, n(2), &mut h.meta), None);
    assert!(h.c.operator_in_flight(&cf()));
    assert_eq!(h.c.maintainer_of(&cf2), None);
}
