//! The maintainer of a redo changefeed (`consistent.level = "eventual"`), driven with
//! hand-built responses: the redo table trigger, the per-mode bootstrap, routing by mode,
//! the redo watermark and checkpoint, the redo meta round, `onRedoPersisted` and removal.

use super::harness::*;
use crate::config::{ChangefeedConfig, ConsistentLevel};
use crate::effects::Out;
use crate::maintainer::span_controller::ReplicaState;
use crate::maintainer::{MaintainerState, Pipeline};
use crate::messages::*;
use crate::types::*;

const T: TableId = 10;
const U: TableId = 11;
/// Default-mode dispatcher of table T on node 1.
const A: DispatcherId = DispatcherId(5001);
/// Redo-mode dispatcher of table T on node 1.
const B: DispatcherId = DispatcherId(5002);
/// Redo-mode dispatcher of table U on node 1, under an interrupted move.
const C: DispatcherId = DispatcherId(5003);

fn redo_config() -> ChangefeedConfig {
    let mut c = ChangefeedConfig::default();
    c.consistent.level = ConsistentLevel::Eventual;
    c
}

fn redo_mh(alive: &[u32], schema: TestSchema) -> MH {
    MH::with_config(Env::new(0), alive, schema, redo_config())
}

fn redo(h: &MH) -> &Pipeline {
    h.m.redo_pipe.as_ref().expect("redo pipeline")
}

fn redo_ddl(h: &MH) -> DispatcherId {
    redo(h).sc.ddl_span_id
}

fn redo_bspan(id: DispatcherId, span: TableSpan, cp: Ts) -> BootstrapTableSpan {
    BootstrapTableSpan { mode: Mode::Redo, ..bspan(id, span, ComponentState::Working, cp) }
}

/// Node 0's answer: both triggers, the redo one at `redo_start`.
fn respond_self(h: &mut MH, redo_start: Ts, spans: Vec<BootstrapTableSpan>) -> Out {
    let mut all = vec![
        bspan(h.ddl(), TableSpan::ddl_span(), ComponentState::Working, START),
        redo_bspan(redo_ddl(h), TableSpan::ddl_span(), redo_start),
    ];
    all.extend(spans);
    let Message::MaintainerBootstrapResponse { spans, checkpoint_ts, operators, merge_operators, err, .. } =
        bootstrap_resp(all, START, vec![], vec![])
    else {
        unreachable!()
    };
    h.handle(
        0,
        Message::MaintainerBootstrapResponse {
            cf: cf(),
            spans,
            checkpoint_ts,
            redo_checkpoint_ts: redo_start,
            operators,
            merge_operators,
            err,
            maintainer_epoch: EPOCH,
        },
    )
}

/// Bootstrapped on nodes 0 and 1: node 1 runs A (default) and B (redo) of table T.
fn bootstrapped() -> MH {
    let mut h = redo_mh(&[0, 1], TestSchema::with_tables(&[T]));
    let spans =
        vec![bspan(A, TableSpan::full(T), ComponentState::Working, START), redo_bspan(B, TableSpan::full(T), START)];
    h.handle(1, bootstrap_resp(spans, 0, vec![], vec![]));
    respond_self(&mut h, START, vec![]);
    assert_eq!(h.m.state, MaintainerState::Working);
    h
}

fn sent(out: &Out) -> Vec<(NodeId, Message)> {
    out.msgs.iter().map(|e| (e.to, e.msg.clone())).collect()
}

/// The redo trigger's ID is drawn after the event trigger's, and only with redo: a
/// redo-off maintainer's draws are unchanged. The self bootstrap carries both IDs, other
/// nodes' neither (maintainer.go:187-192, 1287-1325).
#[test]
fn redo_trigger_is_drawn_after_the_event_one_and_only_with_redo() {
    let off = MH::new(&[0, 1], TestSchema::with_tables(&[T]));
    let on = redo_mh(&[0, 1], TestSchema::with_tables(&[T]));
    assert!(off.m.redo_pipe.is_none());
    assert_eq!(off.ddl(), on.ddl(), "the event trigger is the first draw either way");
    let r = redo(&on);
    assert_ne!(r.sc.ddl_span_id, on.ddl());
    assert_eq!((r.mode, r.sc.mode, r.oc.mode, r.barrier.mode), (Mode::Redo, Mode::Redo, Mode::Redo, Mode::Redo));
    let trigger = r.sc.get(&r.sc.ddl_span_id).expect("redo trigger task");
    assert_eq!((trigger.state, trigger.node, trigger.checkpoint_ts), (ReplicaState::Replicating, Some(n(0)), START));

    let mut env = Env::new(0);
    let m =
        crate::maintainer::Maintainer::new(&mut env.ctx(), cf(), redo_config(), START, EPOCH, false, nodes(&[0, 1]));
    let boots: Vec<(NodeId, Option<DispatcherId>, Option<DispatcherId>)> = env
        .take()
        .msgs
        .iter()
        .filter_map(|e| match &e.msg {
            Message::MaintainerBootstrapRequest {
                table_trigger_event_dispatcher_id,
                table_trigger_redo_dispatcher_id,
                ..
            } => Some((e.to, *table_trigger_event_dispatcher_id, *table_trigger_redo_dispatcher_id)),
            _ => None,
        })
        .collect();
    let redo_id = m.redo_pipe.as_ref().unwrap().sc.ddl_span_id;
    assert_eq!(boots, [(n(0), Some(m.pipe.sc.ddl_span_id), Some(redo_id)), (n(1), None, None)]);
}

/// `FinishBootstrap` per mode: each span goes to its own mode's controller, the redo
/// trigger takes the redo start ts, and a journaled redo operator is restored into the
/// redo operator controller only (maintainer_controller_bootstrap.go:100-236).
#[test]
fn bootstrap_rebuilds_each_mode_from_its_own_spans_and_operators() {
    let mut h = redo_mh(&[0, 1], TestSchema::with_tables(&[T, U]));
    let spans = vec![
        bspan(A, TableSpan::full(T), ComponentState::Working, START),
        redo_bspan(B, TableSpan::full(T), START),
        redo_bspan(C, TableSpan::full(U), START),
    ];
    let mut mv = remove_req(C, TableSpan::full(U), OperatorType::Move, EPOCH);
    mv.config.mode = Mode::Redo;
    h.handle(1, bootstrap_resp(spans, 0, vec![mv], vec![]));
    respond_self(&mut h, START - 5, vec![]);
    assert_eq!(h.m.state, MaintainerState::Working);

    // Default: A adopted; table U has no default span, so it is added absent.
    assert_eq!(h.state(A), Some((ReplicaState::Replicating, Some(n(1)))));
    assert!(h.m.pipe.sc.get(&B).is_none() && h.m.pipe.sc.get(&C).is_none());
    assert_eq!(h.table_tasks(U).len(), 1);
    assert!(h.op(C).is_none());
    // Redo: B adopted, C restored under its remove, the trigger at the redo start ts.
    let r = redo(&h);
    assert_eq!(r.sc.get(&B).map(|t| (t.state, t.node)), Some((ReplicaState::Replicating, Some(n(1)))));
    assert!(r.sc.get(&A).is_none());
    assert!(r.oc.get(&C).is_some(), "the redo move's remove is restored in the redo controller");
    assert_eq!(r.sc.get(&r.sc.ddl_span_id).map(|t| t.checkpoint_ts), Some(START - 5));
    assert_eq!(h.m.pipe.sc.get(&h.ddl()).map(|t| t.checkpoint_ts), Some(START));
}

/// A redo changefeed whose responses carry no redo trigger start ts fails its bootstrap
/// with `ErrChangefeedInitTableTriggerDispatcherFailed` (:200-206).
#[test]
fn bootstrap_without_redo_start_ts_fails() {
    let mut h = redo_mh(&[0], TestSchema::with_tables(&[T]));
    respond_self(&mut h, 0, vec![]);
    assert_eq!(h.m.state, MaintainerState::Bootstrapping);
    assert!(!h.m.initialized());
    let st = h.m.status();
    assert_eq!(st.errors.iter().map(|e| e.code).collect::<Vec<_>>(), [ErrorCode::InitTableTriggerDispatcherFailed]);
}

/// The post-bootstrap request carries the redo trigger's schemas.
#[test]
fn post_bootstrap_carries_redo_schemas() {
    let mut h = redo_mh(&[0], TestSchema::with_tables(&[T]));
    let o = respond_self(&mut h, START, vec![]);
    let post = sent(&o).into_iter().find_map(|(to, m)| match m {
        Message::MaintainerPostBootstrapRequest { schemas, redo_schemas, .. } => Some((to, schemas, redo_schemas)),
        _ => None,
    });
    let (to, schemas, redo_schemas) = post.expect("post-bootstrap request");
    assert_eq!(to, n(0));
    assert_eq!(redo_schemas, schemas);
    assert_eq!(redo_schemas[0].tables, vec![(T, "t10".to_string())]);
}

/// Statuses go to their mode's controllers (maintainer_controller.go:214-216) and block
/// statuses to their mode's barrier, whose responses carry redo mode (maintainer.go:1006-1022).
#[test]
fn statuses_and_block_statuses_route_by_mode() {
    let mut h = bootstrapped();
    let mut s = st(B, ComponentState::Working, START + 50);
    s.mode = Mode::Redo;
    h.handle(1, heartbeat(START, 2, vec![s, st(A, ComponentState::Working, START + 20)]));
    h.m.drain_heartbeat_statuses(&mut h.env.ctx());
    h.env.take();
    assert_eq!(redo(&h).sc.get(&B).map(|t| t.checkpoint_ts), Some(START + 50));
    assert_eq!(h.m.pipe.sc.get(&A).map(|t| t.checkpoint_ts), Some(START + 20));

    let o = h.handle(
        1,
        Message::BlockStatusRequest {
            cf: cf(),
            statuses: vec![TableSpanBlockStatus {
                id: B,
                state: block(START + 60, normal(&[T]), BlockStage::Waiting),
                mode: Mode::Redo,
            }],
            mode: Mode::Redo,
        },
    );
    assert!(!redo(&h).barrier.events.is_empty(), "the redo barrier took the event");
    assert!(h.m.pipe.barrier.events.is_empty(), "the default barrier did not");
    let modes: Vec<Mode> = sent(&o)
        .into_iter()
        .filter_map(|(_, m)| match m {
            Message::HeartBeatResponse { mode, .. } => Some(mode),
            _ => None,
        })
        .collect();
    assert!(!modes.is_empty() && modes.iter().all(|m| *m == Mode::Redo), "{modes:?}");
}

/// A redo status or block status reaching a maintainer without redo is dropped.
#[test]
fn redo_reports_without_redo_are_dropped() {
    let mut h = MH::new(&[0, 1], TestSchema::with_tables(&[T]));
    h.bootstrap(vec![(1, NodeReport::spans(vec![bspan(A, TableSpan::full(T), ComponentState::Working, START)]))]);
    let mut s = st(A, ComponentState::Working, START + 50);
    s.mode = Mode::Redo;
    let mut o = h.handle(1, heartbeat(START, 2, vec![s]));
    h.m.drain_heartbeat_statuses(&mut h.env.ctx());
    o.msgs.extend(h.env.take().msgs);
    assert!(o.msgs.is_empty(), "{:?}", o.msgs);
    assert_eq!(h.m.pipe.sc.get(&A).map(|t| t.checkpoint_ts), Some(START), "a redo status is not the default span's");
    let o = h.handle(1, Message::BlockStatusRequest { cf: cf(), statuses: vec![], mode: Mode::Redo });
    assert!(o.msgs.is_empty());
}

fn redo_heartbeat(cp: Ts, redo_cp: Ts, redo_seq: u64) -> Message {
    Message::HeartBeatRequest {
        cf: cf(),
        watermark: Watermark { checkpoint_ts: cp, resolved_ts: cp, seq: 1 },
        redo_watermark: Some(Watermark { checkpoint_ts: redo_cp, resolved_ts: redo_cp, seq: redo_seq }),
        statuses: vec![],
        complete_status: false,
        err: None,
    }
}

/// `redoTsByCapture` (maintainer.go:931-937): a newer seq wins even if it regresses; the
/// same seq only with a higher checkpoint; a departed node's entry goes (:630).
#[test]
fn redo_watermark_keeps_newer_seq_and_forgets_departed_nodes() {
    let mut h = bootstrapped();
    let stored = |h: &MH| redo(h).node_watermarks.get(&n(1)).map(|w| (w.checkpoint_ts, w.seq));
    h.handle(1, redo_heartbeat(START, START + 30, 5));
    assert_eq!(stored(&h), Some((START + 30, 5)));
    h.handle(1, redo_heartbeat(START, START + 20, 5));
    assert_eq!(stored(&h), Some((START + 30, 5)), "same seq, lower checkpoint: kept");
    h.handle(1, redo_heartbeat(START, START + 40, 5));
    assert_eq!(stored(&h), Some((START + 40, 5)));
    h.handle(1, redo_heartbeat(START, START + 10, 6));
    assert_eq!(stored(&h), Some((START + 10, 6)), "newer seq wins even backwards");
    assert_eq!(h.m.pipe.node_watermarks.get(&n(1)).map(|w| w.checkpoint_ts), Some(START), "the event one is separate");
    h.node_change(&[0]);
    assert_eq!(stored(&h), None);
}

/// `maintainer_test.go:781` TestMaintainerHandleRedoMetaTsMessageUsesRedoCheckpointForRedoController,
/// adapted: with the event checkpoint well ahead and the redo watermarks lower, one redo
/// meta round moves the **redo** controller's committed checkpoint to the redo minimum
/// (the model's committed checkpoints start at the changefeed checkpoint, so the values
/// are above it). The meta goes to the maintainer's own node: checkpoint = the event
/// checkpoint, resolved = the redo checkpoint (maintainer.go:639-692).
#[test]
fn redo_meta_round_advances_the_redo_controller_only() {
    let mut h = bootstrapped();
    for from in [0, 1] {
        h.handle(from, redo_heartbeat(START + 100, START + 40 + from as Ts, 1));
    }
    assert_eq!(h.m.calc_checkpoint(), Some(START + 100));
    let mut ctx = h.env.ctx();
    h.m.run_redo_meta(&mut ctx);
    let o = h.env.take();
    assert_eq!(redo(&h).sc.committed_checkpoint, START + 40);
    assert_eq!(redo(&h).committed_checkpoint, START + 40);
    assert_eq!(h.m.pipe.sc.committed_checkpoint, START + 100);
    assert_eq!(
        sent(&o),
        [(
            n(0),
            Message::RedoMetaMessage {
                cf: cf(),
                checkpoint_ts: START + 100,
                resolved_ts: START + 40,
                maintainer_epoch: EPOCH
            }
        )]
    );
    // Nothing moved: nothing sent.
    h.m.run_redo_meta(&mut h.env.ctx());
    assert!(h.env.take().msgs.is_empty());
    // A node with redo tasks and no redo watermark holds the redo checkpoint; the meta's
    // checkpoint still follows the event one.
    h.m.redo_pipe.as_mut().unwrap().node_watermarks.remove(&n(1));
    h.handle(0, heartbeat(START + 150, 2, vec![]));
    h.handle(1, heartbeat(START + 150, 2, vec![]));
    assert_eq!(h.m.calc_checkpoint(), Some(START + 150));
    h.m.run_redo_meta(&mut h.env.ctx());
    let o = h.env.take();
    assert_eq!(
        sent(&o),
        [(
            n(0),
            Message::RedoMetaMessage {
                cf: cf(),
                checkpoint_ts: START + 150,
                resolved_ts: START + 40,
                maintainer_epoch: EPOCH
            }
        )]
    );
}

/// No redo meta round before the bootstrap, nor without redo.
#[test]
fn redo_meta_waits_for_bootstrap_and_needs_redo() {
    let mut h = redo_mh(&[0], TestSchema::with_tables(&[T]));
    h.m.run_redo_meta(&mut h.env.ctx());
    assert!(h.env.take().msgs.is_empty());
    let mut off = MH::new(&[0], TestSchema::with_tables(&[T]));
    off.bootstrap(vec![]);
    off.m.run_redo_meta(&mut off.env.ctx());
    assert!(off.env.take().msgs.is_empty());
    assert_eq!(off.m.redo_meta_ts, (START, START));
}

/// `onRedoPersisted` (maintainer.go:602-617): a higher flushed redo resolved ts goes to
/// every tracked node with the epoch; a lower or equal one does nothing.
#[test]
fn redo_progress_is_forwarded_to_every_node() {
    let mut h = bootstrapped();
    let o = h.handle(0, Message::RedoResolvedTsProgressMessage { cf: cf(), resolved_ts: START + 7 });
    let fwd = |to: u32| {
        (n(to), Message::RedoResolvedTsForwardMessage { cf: cf(), resolved_ts: START + 7, maintainer_epoch: EPOCH })
    };
    assert_eq!(sent(&o), [fwd(0), fwd(1)]);
    assert_eq!(h.m.redo_resolved_ts, START + 7);
    for ts in [START + 7, START + 3] {
        let o = h.handle(0, Message::RedoResolvedTsProgressMessage { cf: cf(), resolved_ts: ts });
        assert!(o.msgs.is_empty());
    }
}

/// A non-cascade remove freezes both controllers except the two triggers and removes
/// both; the maintainer stops only when neither is still being removed
/// (maintainer.go:578-583, 1215-1226).
#[test]
fn non_cascade_remove_closes_both_triggers() {
    let mut h = bootstrapped();
    let (ddl, rddl) = (h.ddl(), redo_ddl(&h));
    let mut ctx = h.env.ctx();
    h.m.remove(&mut ctx, false, false);
    h.env.take();
    let allowed: std::collections::BTreeSet<DispatcherId> = [ddl, rddl].into_iter().collect();
    assert_eq!(h.m.pipe.oc.quiesce_except.as_ref(), Some(&allowed));
    assert_eq!(redo(&h).oc.quiesce_except.as_ref(), Some(&allowed));
    assert!(h.op(ddl).is_some() && redo(&h).oc.get(&rddl).is_some());
    let mut o = h.execute();
    h.m.execute_redo_operators(&mut h.env.ctx());
    o.msgs.extend(h.env.take().msgs);
    let removes: Vec<(DispatcherId, Mode)> = schedule_reqs(&o)
        .into_iter()
        .filter(|(_, r)| r.action == ScheduleAction::Remove)
        .map(|(_, r)| (r.config.dispatcher_id, r.config.mode))
        .collect();
    assert_eq!(removes, [(ddl, Mode::Default), (rddl, Mode::Redo)]);

    // The event trigger stops first: still removing.
    h.handle(0, heartbeat(START, 3, vec![st(ddl, ComponentState::Stopped, START)]));
    h.m.drain_heartbeat_statuses(&mut h.env.ctx());
    h.execute();
    h.tick();
    assert_eq!(h.m.state, MaintainerState::Removing);
    let mut s = st(rddl, ComponentState::Stopped, START);
    s.mode = Mode::Redo;
    h.handle(0, heartbeat(START, 4, vec![s]));
    h.m.drain_heartbeat_statuses(&mut h.env.ctx());
    h.m.execute_redo_operators(&mut h.env.ctx());
    h.tick();
    assert_eq!(h.m.state, MaintainerState::Stopped);
}

/// The table APIs act on the controllers of the mode they name; redo mode without redo
/// is a no-op success (maintainer_controller_helper.go:39-46).
#[test]
fn table_api_acts_on_the_named_mode() {
    let mut h = bootstrapped();
    let mut ctx = h.env.ctx();
    assert_eq!(h.m.api_move_table_in(&mut ctx, Mode::Redo, T, n(0)), Ok(1));
    assert!(h.m.redo_pipe.as_ref().unwrap().oc.get(&B).is_some(), "the redo span moves");
    assert!(h.m.pipe.oc.get(&A).is_none(), "the default one stays");
    assert_eq!(h.m.api_move_table_in(&mut ctx, Mode::Default, T, n(0)), Ok(1));
    assert!(h.m.pipe.oc.get(&A).is_some());

    let mut off = MH::new(&[0, 1], TestSchema::with_tables(&[T]));
    off.bootstrap(vec![(1, NodeReport::spans(vec![bspan(A, TableSpan::full(T), ComponentState::Working, START)]))]);
    let mut ctx = off.env.ctx();
    assert_eq!(off.m.api_move_table_in(&mut ctx, Mode::Redo, T, n(0)), Ok(0));
    assert_eq!(off.m.api_merge_table_in(&mut ctx, Mode::Redo, T), Ok(String::new()));
    assert_eq!(off.m.api_split_table_in(&mut ctx, Mode::Redo, T, &off.schema), Ok(0));
    assert!(off.m.pipe.oc.get(&A).is_none());
}

/// Under `nonatomic-operator-admission`, the redo basic scheduler's checked admissions
/// wait in the redo pipeline and its insert step puts them into the redo operator
/// controller, never the default one.
#[test]
fn two_step_admission_stays_in_its_mode() {
    let mut h = MH::with_config(
        Env::new(0).with_bug(crate::bugs::Bug::NonatomicOperatorAdmission),
        &[0, 1],
        TestSchema::with_tables(&[T]),
        redo_config(),
    );
    h.handle(1, bootstrap_resp(vec![], 0, vec![], vec![]));
    respond_self(&mut h, START, vec![]);
    let redo_task = redo(&h).sc.tasks_of_table(T)[0].id;
    h.m.run_redo_basic_scheduler(&mut h.env.ctx());
    assert_eq!(redo(&h).pending_admissions.len(), 1);
    assert!(h.m.pipe.pending_admissions.is_empty());
    h.m.finish_pending_admissions(&mut h.env.ctx());
    assert!(redo(&h).oc.get(&redo_task).is_none(), "the default insert step leaves redo admissions alone");
    h.m.finish_redo_pending_admissions(&mut h.env.ctx());
    assert!(redo(&h).oc.get(&redo_task).is_some());
    assert!(h.m.pipe.oc.get(&redo_task).is_none());
    assert!(redo(&h).pending_admissions.is_empty());
}
