//! `downstreamadapter/dispatcher/redo_dispatcher_test.go` at b813e76f9: a redo dispatcher
//! is the basic dispatcher over the redo sink.

use super::support::*;
use crate::dispatcher::DispatcherManager;
use crate::effects::*;
use crate::messages::*;
use crate::tests::harness::*;
use crate::types::*;

// redo_dispatcher_test.go:533 (first block): a redo dispatcher with a row not yet flushed
// cannot close; once flushed it closes with checkpoint 1 (the row at 2 minus one) and
// resolved ts 0.
#[test]
fn ticdc_redo_dispatcher_TestRedoDispatcherClose() {
    let mut t = Disp::complete();
    t.d.mode = Mode::Redo;
    t.handle(vec![ev_row(2)]);
    assert!(!t.d.can_close());
    t.flush();
    assert!(t.d.can_close());
    assert_eq!(t.d.checkpoint_ts(), 1);
    assert_eq!(t.d.resolved_ts, 0);
}

// redo_dispatcher_test.go:533 (second block): over a redo sink that is no longer normal
// the redo dispatcher closes with its row unflushed, at checkpoint 1.
#[test]
fn ticdc_redo_dispatcher_TestRedoDispatcherClose_sink_not_normal() {
    const TE: DispatcherId = DispatcherId(81);
    const TR: DispatcherId = DispatcherId(82);
    const RD: DispatcherId = DispatcherId(83);
    let mut env = Env::new(0);
    let mut dm = DispatcherManager::new(cf(), n(0), redo_config(), 1);
    dm_handle(&mut dm, &mut env, 0, redo_bootstrap_req(0, Some(TE), Some(TR), EPOCH));
    let mut req = create_req(RD, TableSpan::full(1), 0, OperatorType::Add, EPOCH);
    req.config.mode = Mode::Redo;
    dm_handle(&mut dm, &mut env, 0, sched(req.clone()));
    dm_feed(&mut dm, &mut env, RD, vec![ev_row(2)], 2);
    // The flush fails: the redo sink is not normal any more.
    dm.flush_redo_sink(&mut env.ctx());
    let o = env.take();
    let StorageRequest::Put { op_id, .. } = o.storage[0] else { panic!("{:?}", o.storage) };
    dm.on_storage_result(&mut env.ctx(), op_id, Err(StorageError::Transient("redo".into())));
    let mut rm = remove_req(RD, TableSpan::full(1), OperatorType::Remove, EPOCH);
    rm.config.mode = Mode::Redo;
    dm_handle(&mut dm, &mut env, 0, sched(rm));
    assert!(!dm.dispatchers[&RD].can_close(), "its row never became durable");
    dm.heartbeat(&mut env.ctx(), true);
    let o = env.take();
    assert!(!dm.dispatchers.contains_key(&RD), "TryClose succeeded");
    let stopped = o.msgs.iter().find_map(|e| match &e.msg {
        Message::HeartBeatRequest { statuses, .. } => statuses.iter().find(|s| s.id == RD).cloned(),
        _ => None,
    });
    let st = stopped.expect("reported Stopped");
    assert_eq!((st.state, st.checkpoint_ts, st.mode), (ComponentState::Stopped, 1, Mode::Redo));
}
