//! The dispatcher side of a redo changefeed (`consistent.level = "eventual"`): the redo
//! table trigger, redo dispatchers next to event dispatchers in one manager, their
//! statuses and watermarks by mode, the redo sink, and the event dispatchers' hold-back
//! below the redo global resolved ts.

use super::harness::*;
use crate::config::{ChangefeedConfig, ConsistentLevel};
use crate::dispatcher::DispatcherManager;
use crate::messages::*;
use crate::types::*;

/// The event trigger.
const TE: DispatcherId = DispatcherId(7001);
/// The redo trigger.
const TR: DispatcherId = DispatcherId(7002);

fn redo_config() -> ChangefeedConfig {
    let mut c = ChangefeedConfig::default();
    c.consistent.level = ConsistentLevel::Eventual;
    c
}

fn redo_bootstrap(start: Ts, trigger: Option<DispatcherId>, redo: Option<DispatcherId>, epoch: Epoch) -> Message {
    Message::MaintainerBootstrapRequest {
        table_trigger_redo_dispatcher_id: redo,
        cf: cf(),
        config: redo_config(),
        start_ts: start,
        table_trigger_event_dispatcher_id: trigger,
        is_new_changefeed: false,
        maintainer_epoch: epoch,
    }
}

/// A redo changefeed's manager on node 0, bootstrapped by the maintainer on node 0 with
/// both triggers at [`START`]; returns the bootstrap response too.
fn self_manager() -> (DispatcherManager, Env, Message) {
    let mut env = Env::new(0);
    let mut dm = DispatcherManager::new(cf(), n(0), redo_config(), 1);
    let (r, _) = dm_handle(&mut dm, &mut env, 0, redo_bootstrap(START, Some(TE), Some(TR), EPOCH));
    (dm, env, r.expect("bootstrap response"))
}

fn response_err(m: &Message) -> Option<&str> {
    match m {
        Message::MaintainerBootstrapResponse { err, .. } => err.as_ref().map(|e| e.message.as_str()),
        _ => panic!("not a bootstrap response: {:?}", m),
    }
}

// ---------------------------------------------------------------- redo trigger, bootstrap

#[test]
fn the_redo_trigger_is_created_at_bootstrap_and_reported_in_the_response() {
    let (dm, _, r) = self_manager();
    assert!(dm.redo_ready(), "the first bootstrap publishes redo");
    assert_eq!(dm.redo_trigger_id(), Some(TR));
    let t = &dm.dispatchers[&TR];
    assert!(t.is_trigger && t.is_redo());
    assert!(!t.registered, "registered only by the post-bootstrap request");
    assert!(!dm.dispatchers[&TE].is_redo());
    let Message::MaintainerBootstrapResponse { spans, checkpoint_ts, redo_checkpoint_ts, err, .. } = r else {
        unreachable!()
    };
    assert!(err.is_none());
    assert_eq!((checkpoint_ts, redo_checkpoint_ts), (START, START));
    let modes: Vec<(DispatcherId, Mode)> = spans.iter().map(|s| (s.id, s.mode)).collect();
    assert_eq!(modes, vec![(TE, Mode::Default), (TR, Mode::Redo)]);
}

#[test]
fn each_map_keeps_its_own_sequence_number() {
    let (dm, _, _) = self_manager();
    assert_eq!(dm.dispatchers[&TE].seq, 1);
    assert_eq!(dm.dispatchers[&TR].seq, 1, "the redo map counts on its own");
    assert_eq!(dm.seq, 1);
    assert_eq!(dm.redo.as_ref().unwrap().seq, 1);
}

#[test]
fn without_redo_a_redo_trigger_id_creates_nothing() {
    let mut env = Env::new(0);
    let mut dm = dm_on(0);
    let mut msg = bootstrap_req(START, Some(TE), EPOCH);
    if let Message::MaintainerBootstrapRequest { table_trigger_redo_dispatcher_id, .. } = &mut msg {
        *table_trigger_redo_dispatcher_id = Some(TR);
    }
    let (r, _) = dm_handle(&mut dm, &mut env, 0, msg);
    assert!(dm.redo.is_none());
    assert!(!dm.dispatchers.contains_key(&TR));
    let Some(Message::MaintainerBootstrapResponse { redo_checkpoint_ts, spans, .. }) = r else { panic!() };
    assert_eq!(redo_checkpoint_ts, 0);
    assert_eq!(spans.len(), 1);
}

#[test]
fn a_reused_manager_creates_a_missing_redo_trigger_and_keeps_a_matching_one() {
    let mut env = Env::new(0);
    let mut dm = DispatcherManager::new(cf(), n(0), redo_config(), 1);
    // A node that was not the maintainer's: no trigger of either flavor.
    let (r, _) = dm_handle(&mut dm, &mut env, 1, redo_bootstrap(START, None, None, 1));
    assert!(response_err(r.as_ref().unwrap()).is_none());
    assert!(dm.redo_ready() && dm.redo_trigger_id().is_none());
    // The maintainer moves here: the reused manager creates both triggers.
    let (r, _) = dm_handle(&mut dm, &mut env, 0, redo_bootstrap(START + 5, Some(TE), Some(TR), 2));
    let Some(Message::MaintainerBootstrapResponse { redo_checkpoint_ts, err: None, .. }) = r else { panic!("{:?}", r) };
    assert_eq!(redo_checkpoint_ts, START + 5);
    assert_eq!(dm.redo_trigger_id(), Some(TR));
    // The same generation resends: the matching trigger stays.
    let (r, _) = dm_handle(&mut dm, &mut env, 0, redo_bootstrap(START + 5, Some(TE), Some(TR), 2));
    assert!(response_err(r.as_ref().unwrap()).is_none());
    assert_eq!(dm.dispatchers.values().filter(|d| d.is_redo()).count(), 1);
}

// dispatcher_orchestrator_test.go:687, redo variant: a bootstrap naming another redo
// trigger is refused and leaves the owner unchanged.
#[test]
fn a_mismatched_redo_trigger_is_refused_and_the_owner_kept() {
    let (mut dm, mut env, _) = self_manager();
    let (r, o) = dm_handle(&mut dm, &mut env, 2, redo_bootstrap(START, Some(TE), Some(DispatcherId(9)), EPOCH + 1));
    assert_eq!(response_err(r.as_ref().unwrap()), Some("table trigger redo dispatcher id mismatch during bootstrap"));
    assert!(traced(&o, "bootstrap rejected"));
    assert_eq!((dm.maintainer_id, dm.maintainer_epoch), (n(0), EPOCH));
    assert_eq!(dm.redo_trigger_id(), Some(TR));
}

// dispatcher_orchestrator_test.go:784: a nil redo ID while a redo trigger exists.
#[test]
fn a_bootstrap_without_redo_trigger_is_refused_by_a_manager_holding_one() {
    let (mut dm, mut env, _) = self_manager();
    let (r, _) = dm_handle(&mut dm, &mut env, 2, redo_bootstrap(START, Some(TE), None, EPOCH + 1));
    assert_eq!(
        response_err(r.as_ref().unwrap()),
        Some("table trigger redo dispatcher present during nil trigger bootstrap")
    );
    assert_eq!((dm.maintainer_id, dm.maintainer_epoch), (n(0), EPOCH));
}

#[test]
fn post_bootstrap_registers_the_redo_trigger_after_the_event_trigger() {
    let (mut dm, mut env, _) = self_manager();
    let msg = Message::MaintainerPostBootstrapRequest {
        redo_schemas: vec![],
        cf: cf(),
        table_trigger_event_dispatcher_id: TE,
        schemas: vec![],
        maintainer_epoch: EPOCH,
    };
    let (r, o) = dm_handle(&mut dm, &mut env, 0, msg);
    assert!(matches!(r, Some(Message::MaintainerPostBootstrapResponse { err: None, .. })));
    assert!(dm.dispatchers[&TE].registered && dm.dispatchers[&TR].registered);
    let kinds: Vec<&str> = o.trace.iter().map(|t| t.kind).collect();
    let e = kinds.iter().position(|k| *k == "table trigger event dispatcher registered").unwrap();
    let r = kinds.iter().position(|k| *k == "table trigger redo dispatcher registered").unwrap();
    assert!(e < r, "{:?}", kinds);
}
