//! Cloud-storage sink through the dispatcher manager: a flush racing the close of its
//! dispatcher (`DispatcherManager::on_storage_result`).

use super::fencing::owned;
use super::harness::*;
use crate::bugs::Bug;
use crate::dispatcher::DispatcherManager;
use crate::effects::*;
use crate::messages::*;
use crate::types::*;
use crate::upstream::UpstreamEvent;

const X: DispatcherId = DispatcherId(1000);

/// X on node 1 has two rows (110, 120) and resolved 130; its flush's put succeeded and
/// the rename is in flight. Returns the op id and the temporary path.
fn flushing(env: Env) -> (DispatcherManager, Env, u64, String) {
    let (mut dm, mut env) = owned(1, None, env);
    dm_handle(&mut dm, &mut env, 0, sched(create_req(X, TableSpan::full(10), START, OperatorType::Add, EPOCH)));
    let o = dm_feed(
        &mut dm,
        &mut env,
        X,
        vec![UpstreamEvent::Dml(row(10, 1, 110)), UpstreamEvent::Dml(row(10, 2, 120))],
        130,
    );
    assert!(o.msgs.iter().any(|e| matches!(&e.msg, Message::HeartBeatRequest { statuses, .. } if statuses.iter().any(|s| s.id == X && s.state == ComponentState::Working))));
    assert_eq!(dm.dispatchers[&X].checkpoint_ts(), 109, "held below the unflushed rows");
    dm.flush_sink(&mut env.ctx());
    let out = env.take();
    let [StorageRequest::Put { op_id, path, content: ObjectContent::Rows(rows) }] = &out.storage[..] else {
        panic!("{:?}", out.storage)
    };
    assert_eq!(rows.len(), 2);
    let (op_id, path) = (*op_id, path.clone());
    dm.on_storage_result(&mut env.ctx(), op_id, Ok(()));
    let out = env.take();
    assert!(matches!(&out.storage[..], [StorageRequest::Rename { from, .. }] if *from == path));
    (dm, env, op_id, path)
}

#[test]
fn successful_rename_releases_progress() {
    let (mut dm, mut env, op_id, _) = flushing(Env::new(1));
    dm.on_storage_result(&mut env.ctx(), op_id, Ok(()));
    assert_eq!(dm.dispatchers[&X].checkpoint_ts(), 130);
    assert!(dm.errors.is_empty());
}

/// Remove X while its rename is in flight; the storage answers NotFound.
fn close_during_flush(env: Env) -> (DispatcherManager, Env, Out) {
    let (mut dm, mut env, op_id, path) = flushing(env);
    let (_, o) =
        dm_handle(&mut dm, &mut env, 0, sched(remove_req(X, TableSpan::full(10), OperatorType::Remove, EPOCH)));
    assert!(
        o.storage.contains(&StorageRequest::Delete { paths: vec![path.clone()] }),
        "the writer cleanup removes the temporary object"
    );
    env.now = 1_000;
    dm.on_storage_result(&mut env.ctx(), op_id, Err(StorageError::NotFound(path)));
    let o = env.take();
    let t = o.trace.iter().find(|t| t.kind == "cloud storage write failed").expect("traced");
    assert!(t.fields.contains(&("closing", "true".to_string())));
    // The checkers learn of an escalation only from the typed observation.
    let escalated = env.bugs.on(Bug::EscalateClosingWriterError);
    let observed = o.observations.iter().any(
        |ob| matches!(&ob.what, Observation::SinkErrorEscalated { dispatcher, closing: true, .. } if *dispatcher == X),
    );
    assert_eq!(observed, escalated, "an escalated error is observed, a swallowed one is not");
    (dm, env, o)
}

fn heartbeat_of(dm: &mut DispatcherManager, env: &mut Env) -> (Vec<TableSpanStatus>, Option<RunningError>) {
    dm.heartbeat(&mut env.ctx(), true);
    let out = env.take();
    let hb = out.msgs.iter().find_map(|e| match &e.msg {
        Message::HeartBeatRequest { statuses, err, .. } => Some((statuses.clone(), err.clone())),
        _ => None,
    });
    hb.expect("a heartbeat")
}

#[test]
fn closing_writer_failure_is_not_a_changefeed_error() {
    let (mut dm, mut env, _) = close_during_flush(Env::new(1));
    assert!(dm.errors.is_empty());
    let (statuses, err) = heartbeat_of(&mut dm, &mut env);
    assert!(err.is_none());
    // The abandoned rows released the progress: the close finishes, below the lost rows.
    let s = statuses.iter().find(|s| s.id == X).expect("X reported");
    assert_eq!(s.state, ComponentState::Stopped);
    assert!(s.checkpoint_ts < 110, "checkpoint stays below the rows that were not written: {}", s.checkpoint_ts);
    assert!(!dm.dispatchers.contains_key(&X));
}

#[test]
fn bug_escalate_closing_writer_error_records_a_retryable_error() {
    let (mut dm, mut env, _) = close_during_flush(Env::new(1).with_bug(Bug::EscalateClosingWriterError));
    assert_eq!(dm.errors.len(), 1);
    assert_eq!(dm.errors[0].code, ErrorCode::ChangefeedRetryable);
    assert!(dm.errors[0].message.contains("ErrS3StorageAPI"));
    let (_, err) = heartbeat_of(&mut dm, &mut env);
    assert_eq!(err.map(|e| e.code), Some(ErrorCode::ChangefeedRetryable), "the error goes to the maintainer");
}

#[test]
fn failure_of_an_open_writer_is_a_retryable_error() {
    let (mut dm, mut env, op_id, path) = flushing(Env::new(1));
    dm.on_storage_result(&mut env.ctx(), op_id, Err(StorageError::Transient(path)));
    let o = env.take();
    assert!(o.observations.iter().any(|ob| matches!(&ob.what, Observation::SinkErrorEscalated { closing: false, .. })));
    assert_eq!(dm.errors.len(), 1);
    assert_eq!(dm.errors[0].code, ErrorCode::ChangefeedRetryable);
    assert!(dm.dispatchers[&X].checkpoint_ts() < 110, "lost rows keep the checkpoint below them");
}
