//! The maintainer's per-mode pipelines: `in_mode` runs code over the redo controllers
//! and puts them back, and each controller stamps its mode on what it sends.

use super::harness::*;
use crate::config::SchedulerConfig;
use crate::maintainer::barrier::BarrierOut;
use crate::maintainer::operator::{AddDispatcherOperator, Operator, OperatorController};
use crate::maintainer::span_controller::{ReplicaState, SpanController, SpanReplication};
use crate::maintainer::Pipeline;
use crate::messages::*;
use crate::types::*;

const REDO_DDL: DispatcherId = DispatcherId(777);
const T: TableId = 10;

fn bootstrapped() -> MH {
    let mut h = MH::new(&[0, 1], TestSchema::with_tables(&[T]));
    h.bootstrap(vec![]);
    h
}

/// A redo pipeline, as a redo changefeed's maintainer would hold, with one absent task.
fn with_redo_pipe(h: &mut MH, task: DispatcherId) {
    let mut sc = SpanController::new(REDO_DDL, n(0), START, SchedulerConfig::default());
    sc.insert(SpanReplication {
        id: task,
        span: TableSpan::full(T),
        schema_id: SCHEMA,
        node: None,
        state: ReplicaState::Absent,
        checkpoint_ts: START,
        last_state: None,
        block_state: None,
    });
    h.m.redo_pipe = Some(Pipeline::new(Mode::Redo, sc, OperatorController::default(), START));
}

#[test]
fn in_mode_without_redo_runs_nothing() {
    let mut h = bootstrapped();
    assert_eq!(h.m.pipe.mode, Mode::Default);
    assert!(h.m.redo_pipe.is_none());
    assert_eq!(h.m.in_mode(Mode::Redo, |_| unreachable!("no redo pipeline")), None::<()>);
    assert_eq!(h.m.in_mode(Mode::Default, |m| m.pipe.sc.ddl_span_id), Some(h.ddl()));
}

#[test]
fn in_mode_redo_swaps_and_restores() {
    let mut h = bootstrapped();
    let ddl = h.ddl();
    with_redo_pipe(&mut h, d(900));
    let seen = h.m.in_mode(Mode::Redo, |m| (m.pipe.mode, m.pipe.sc.ddl_span_id, m.pipe.sc.get(&d(900)).is_some()));
    assert_eq!(seen, Some((Mode::Redo, REDO_DDL, true)));
    assert_eq!((h.m.pipe.mode, h.m.pipe.sc.ddl_span_id), (Mode::Default, ddl));
    assert!(h.m.pipe.sc.get(&d(900)).is_none(), "the redo task stays in the redo pipeline");
    let redo = h.m.redo_pipe.as_ref().expect("restored");
    assert_eq!(
        (redo.mode, redo.sc.mode, redo.oc.mode, redo.barrier.mode),
        (Mode::Redo, Mode::Redo, Mode::Redo, Mode::Redo)
    );
}

/// A redo operator's Create carries `Mode::Redo`; the default pipeline's stay default.
#[test]
fn operators_carry_their_controllers_mode() {
    let mut h = bootstrapped();
    with_redo_pipe(&mut h, d(900));
    let mut env = std::mem::replace(&mut h.env, Env::new(0));
    let out = h.m.in_mode(Mode::Redo, |m| {
        let p = &mut m.pipe;
        let op = Operator::Add(AddDispatcherOperator::new(d(900), n(1), OperatorType::Add));
        p.oc.add_operator(op, &mut p.sc, &m.alive, 0).expect("admitted");
        m.execute_operators(&mut env.ctx());
        env.take()
    });
    h.env = env;
    let reqs = schedule_reqs(&out.expect("redo pipeline"));
    assert_eq!(reqs.len(), 1, "{reqs:?}");
    assert_eq!((reqs[0].0, reqs[0].1.config.dispatcher_id, reqs[0].1.config.mode), (n(1), d(900), Mode::Redo));

    h.m.pipe.sc.insert(SpanReplication {
        id: d(901),
        span: TableSpan::full(11),
        schema_id: SCHEMA,
        node: None,
        state: ReplicaState::Absent,
        checkpoint_ts: START,
        last_state: None,
        block_state: None,
    });
    let p = &mut h.m.pipe;
    let op = Operator::Add(AddDispatcherOperator::new(d(901), n(1), OperatorType::Add));
    p.oc.add_operator(op, &mut p.sc, &h.m.alive, 0).expect("admitted");
    let reqs = schedule_reqs(&h.execute());
    assert_eq!(
        reqs.iter().map(|(_, r)| (r.config.dispatcher_id, r.config.mode)).collect::<Vec<_>>(),
        [(d(901), Mode::Default)]
    );
}

/// The barrier's responses carry its mode.
#[test]
fn barrier_responses_carry_its_mode() {
    let mut h = bootstrapped();
    with_redo_pipe(&mut h, d(900));
    let status = || DispatcherStatus {
        influenced: InfluencedDispatchers::Normal(vec![d(900)]),
        action: None,
        ack: Some(AckEvent { commit_ts: START + 1, is_sync_point: false }),
        ignored_block_status: None,
    };
    let mut env = std::mem::replace(&mut h.env, Env::new(0));
    for mode in [Mode::Redo, Mode::Default] {
        let mut out = BarrierOut::default();
        out.responses.insert(n(1), vec![status()]);
        h.m.in_mode(mode, |m| m.emit_barrier(&mut env.ctx(), out)).expect("pipeline exists");
        let sent: Vec<Mode> = env
            .take()
            .msgs
            .iter()
            .filter_map(|e| match &e.msg {
                Message::HeartBeatResponse { mode, .. } => Some(*mode),
                _ => None,
            })
            .collect();
        assert_eq!(sent, [mode]);
    }
}

/// The "no span found, remove it" Remove carries the status's mode
/// (`maintainer_controller.go:239-247`).
#[test]
fn orphan_remove_carries_the_status_mode() {
    let mut h = bootstrapped();
    with_redo_pipe(&mut h, d(900));
    let mut s = st(d(950), ComponentState::Working, START);
    s.mode = Mode::Redo;
    let mut out = h.handle(1, heartbeat(START, 1, vec![s]));
    h.m.drain_heartbeat_statuses(&mut h.env.ctx());
    out.msgs.extend(h.env.take().msgs);
    let reqs = schedule_reqs(&out);
    assert_eq!(reqs.len(), 1, "{reqs:?}");
    assert_eq!(
        (reqs[0].1.action, reqs[0].1.config.dispatcher_id, reqs[0].1.config.mode),
        (ScheduleAction::Remove, d(950), Mode::Redo)
    );
}
