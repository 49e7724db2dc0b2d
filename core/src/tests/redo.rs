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

#[test]
fn bug_replace_mismatched_redo_trigger_replaces_it_in_place() {
    let (mut dm, _, _) = self_manager();
    let mut env = Env::new(0).with_bug(crate::bugs::Bug::ReplaceMismatchedRedoTrigger);
    let new = DispatcherId(9);
    let (r, o) = dm_handle(&mut dm, &mut env, 2, redo_bootstrap(START, Some(TE), Some(new), EPOCH + 1));
    assert_eq!(response_err(r.as_ref().unwrap()), None, "accepted, not refused");
    assert!(traced(&o, "replace mismatched table trigger redo dispatcher"));
    assert_eq!((dm.maintainer_id, dm.maintainer_epoch), (n(2), EPOCH + 1));
    assert_eq!(dm.redo_trigger_id(), Some(new));
    // Nothing closed the old one: two redo triggers in the manager, both live.
    let redo_triggers: Vec<DispatcherId> =
        dm.dispatchers.values().filter(|d| d.is_trigger && d.is_redo() && !d.try_removing).map(|d| d.id).collect();
    assert_eq!(redo_triggers, vec![new, TR], "in ID order");
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

// ---------------------------------------------------------------- creates, removes, statuses

/// Redo dispatcher of table 10, event dispatcher of table 10.
const RD: DispatcherId = DispatcherId(7101);
const ED: DispatcherId = DispatcherId(7102);

fn redo_create(id: DispatcherId, table: TableId, start: Ts) -> Message {
    let mut req = create_req(id, TableSpan::full(table), start, OperatorType::Add, EPOCH);
    req.config.mode = Mode::Redo;
    sched(req)
}

fn heartbeats(o: &crate::effects::Out) -> Vec<(Watermark, Option<Watermark>, Vec<TableSpanStatus>)> {
    o.msgs
        .iter()
        .filter_map(|e| match &e.msg {
            Message::HeartBeatRequest { watermark, redo_watermark, statuses, .. } => {
                Some((*watermark, *redo_watermark, statuses.clone()))
            }
            _ => None,
        })
        .collect()
}

/// The self manager with a Working redo dispatcher RD and event dispatcher ED of table
/// 10, both from [`START`].
fn with_table() -> (DispatcherManager, Env) {
    let (mut dm, mut env, _) = self_manager();
    dm_handle(&mut dm, &mut env, 0, redo_create(RD, 10, START));
    dm_handle(&mut dm, &mut env, 0, sched(create_req(ED, TableSpan::full(10), START, OperatorType::Add, EPOCH)));
    dm.redo.as_mut().unwrap().global_ts = u64::MAX;
    for id in [RD, ED] {
        dm_feed(&mut dm, &mut env, id, vec![], START + 1);
    }
    dm.collect_batches_now(&mut env.ctx());
    env.take();
    (dm, env)
}

#[test]
fn a_redo_create_waits_for_redo_to_be_ready() {
    let mut env = Env::new(0);
    let mut dm = DispatcherManager::new(cf(), n(0), redo_config(), 1);
    // Before the first bootstrap finished: the redo Create is dropped, a default one is not.
    let mut req = create_req(RD, TableSpan::full(10), START, OperatorType::Add, 0);
    req.config.mode = Mode::Redo;
    let (_, o) = dm_handle(&mut dm, &mut env, 0, sched(req.clone()));
    assert!(traced(&o, "drop redo schedule request, redo not ready"));
    assert!(!dm.dispatchers.contains_key(&RD));
    assert!(!dm.current_operator_map.contains_key(&RD), "not journaled: the maintainer resends");
    dm_handle(&mut dm, &mut env, 0, sched(create_req(ED, TableSpan::full(10), START, OperatorType::Add, 0)));
    assert!(dm.dispatchers.contains_key(&ED));
    // A manager without redo drops it as well.
    let mut plain = dm_on(0);
    dm_handle(&mut plain, &mut env, 0, sched(req));
    assert!(plain.dispatchers.is_empty());
}

#[test]
fn a_redo_dispatcher_counts_in_the_redo_map_and_reports_in_redo_mode() {
    let (mut dm, mut env, _) = self_manager();
    dm_handle(&mut dm, &mut env, 0, redo_create(RD, 10, START));
    let d = &dm.dispatchers[&RD];
    assert!(d.is_redo() && d.start_ts == START);
    assert_eq!((d.seq, dm.seq), (2, 1), "the redo map's second dispatcher; the event map unchanged");
    // The status batch goes out at the end of the step (inline continuations).
    let o = dm_feed(&mut dm, &mut env, RD, vec![], START + 3);
    assert!(traced(&o, "dispatcher working"));
    let hb = heartbeats(&o);
    let [(wm, Some(redo_wm), statuses)] = &hb[..] else { panic!("{:?}", hb) };
    assert_eq!(statuses.iter().map(|s| (s.id, s.mode)).collect::<Vec<_>>(), vec![(RD, Mode::Redo)]);
    assert_eq!(redo_wm.seq, 2, "the redo status carries the redo map's seq");
    assert_eq!(wm.seq, 0, "the event watermark does not take a redo status's seq");
}

#[test]
fn heartbeat_aggregates_each_mode_over_its_own_dispatchers() {
    let (mut dm, mut env) = with_table();
    dm_feed(&mut dm, &mut env, RD, vec![], START + 9);
    dm_feed(&mut dm, &mut env, ED, vec![], START + 4);
    dm_feed(&mut dm, &mut env, TE, vec![], START + 4);
    // The redo trigger is not registered: it stays at START.
    dm.heartbeat(&mut env.ctx(), true);
    let hb = heartbeats(&env.take());
    let [(wm, Some(redo_wm), _)] = &hb[..] else { panic!("{:?}", hb) };
    assert_eq!(wm.checkpoint_ts, START + 4);
    assert_eq!(redo_wm.checkpoint_ts, START, "the redo trigger bounds the redo watermark");
    assert_eq!(redo_wm.seq, 2);
    dm_feed(&mut dm, &mut env, TR, vec![], START + 9);
    env.now += 1000;
    dm.heartbeat(&mut env.ctx(), true);
    let hb = heartbeats(&env.take());
    assert_eq!(hb[0].1.unwrap().checkpoint_ts, START + 9);
    assert_eq!(hb[0].0.checkpoint_ts, START + 4, "redo dispatchers do not bound the event watermark");
}

#[test]
fn a_manager_without_redo_sends_no_redo_watermark_and_one_not_ready_sends_the_max() {
    let mut env = Env::new(1);
    let mut dm = dm_on(1);
    dm_handle(&mut dm, &mut env, 0, bootstrap_req(START, None, EPOCH));
    dm_handle(&mut dm, &mut env, 0, sched(create_req(ED, TableSpan::full(10), START, OperatorType::Add, EPOCH)));
    dm.heartbeat(&mut env.ctx(), true);
    assert_eq!(heartbeats(&env.take())[0].1, None);
    let mut dm = DispatcherManager::new(cf(), n(1), redo_config(), 1);
    dm_handle(&mut dm, &mut env, 0, redo_bootstrap(START, None, None, EPOCH));
    dm.redo.as_mut().unwrap().ready = false;
    dm_handle(&mut dm, &mut env, 0, sched(create_req(ED, TableSpan::full(10), START, OperatorType::Add, EPOCH)));
    dm.heartbeat(&mut env.ctx(), true);
    let redo = heartbeats(&env.take())[0].1.expect("a redo changefeed always sends one");
    assert_eq!((redo.checkpoint_ts, redo.seq), (u64::MAX, 0));
}

#[test]
fn an_unknown_redo_remove_is_answered_stopped_in_redo_mode() {
    let (mut dm, mut env, _) = self_manager();
    let mut req = remove_req(RD, TableSpan::full(10), OperatorType::Remove, EPOCH);
    req.config.mode = Mode::Redo;
    let (_, o) = dm_handle(&mut dm, &mut env, 0, sched(req));
    assert!(!dm.current_operator_map.contains_key(&RD));
    let hb = heartbeats(&o);
    let st = &hb[0].2[0];
    assert_eq!((st.id, st.state, st.mode), (RD, ComponentState::Stopped, Mode::Redo));
    assert_eq!(hb[0].1.unwrap().seq, 1, "with the redo map's seq");
}

fn db_ddl(ts: Ts) -> crate::upstream::DdlEvent {
    crate::upstream::DdlEvent {
        commit_ts: ts,
        kind: crate::upstream::DdlKind::AddColumn,
        schema_id: SCHEMA,
        schema_name: format!("db{}", SCHEMA),
        table_id: 0,
        table_name: String::new(),
        query: "ALTER DATABASE".into(),
        blocked_tables: db(SCHEMA),
        need_dropped_tables: None,
        need_added_tables: vec![],
        updated_schemas: vec![],
    }
}

fn block_requests(o: &crate::effects::Out) -> Vec<(Mode, Vec<DispatcherId>)> {
    o.msgs
        .iter()
        .filter_map(|e| match &e.msg {
            Message::BlockStatusRequest { mode, statuses, .. } => {
                Some((*mode, statuses.iter().map(|s| s.id).collect()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn block_statuses_go_out_per_mode_and_a_db_action_reaches_only_its_mode() {
    let (mut dm, mut env) = with_table();
    let ts = START + 10;
    let ev = crate::upstream::UpstreamEvent::Ddl(db_ddl(ts));
    dm.feed(RD, vec![ev.clone()], ts);
    dm.feed(ED, vec![ev], ts);
    dm.process(&mut env.ctx());
    dm.collect_batches_now(&mut env.ctx());
    let reqs = block_requests(&env.take());
    assert_eq!(reqs, vec![(Mode::Default, vec![ED]), (Mode::Redo, vec![RD])]);
    for id in [RD, ED] {
        assert_eq!(dm.dispatchers[&id].block.as_ref().map(|b| b.stage), Some(BlockStage::Waiting));
    }
    // The redo barrier passes the DB event: only the redo dispatchers (and the redo
    // trigger, which is not blocked) act on it.
    let pass = DispatcherStatus {
        influenced: InfluencedDispatchers::Db(SCHEMA),
        action: Some(DispatcherAction { action: ActionKind::Pass, commit_ts: ts, is_sync_point: false }),
        ack: None,
        ignored_block_status: None,
    };
    let msg = Message::HeartBeatResponse { cf: cf(), statuses: vec![pass], maintainer_epoch: EPOCH, mode: Mode::Redo };
    let (_, o) = dm_handle(&mut dm, &mut env, 0, msg);
    assert!(dm.dispatchers[&RD].block.is_none(), "the redo dispatcher passed");
    assert!(dm.dispatchers[&ED].block.is_some(), "the event dispatcher still waits for its own barrier");
    let reqs = block_requests(&o);
    assert_eq!(reqs, vec![(Mode::Redo, vec![RD])], "DONE in redo mode");
}

// ---------------------------------------------------------------- redo sink, hold-back

fn puts(o: &crate::effects::Out) -> Vec<(u64, &crate::effects::ObjectContent)> {
    o.storage
        .iter()
        .filter_map(|r| match r {
            crate::effects::StorageRequest::Put { op_id, content, .. } => Some((*op_id, content)),
            _ => None,
        })
        .collect()
}

fn rows(ts: &[Ts]) -> Vec<crate::upstream::UpstreamEvent> {
    ts.iter().map(|t| crate::upstream::UpstreamEvent::Dml(row(10, *t, *t))).collect()
}

#[test]
fn a_held_event_dispatcher_writes_nothing_above_the_redo_global_ts_then_drains_on_forward() {
    let (mut dm, mut env) = with_table();
    dm.redo.as_mut().unwrap().global_ts = START + 5;
    dm.feed(ED, rows(&[START + 3, START + 8]), START + 10);
    dm.feed(RD, rows(&[START + 3, START + 8]), START + 10);
    dm.process(&mut env.ctx());
    let ed = &dm.dispatchers[&ED];
    assert!(ed.held_by_redo);
    assert_eq!(ed.progress.keys().copied().collect::<Vec<_>>(), vec![START + 3], "the row above is held");
    assert!(ed.resolved_ts <= START + 5 && ed.checkpoint_ts() <= START + 5);
    let rd = &dm.dispatchers[&RD];
    assert!(!rd.held_by_redo, "redo dispatchers are never held");
    assert_eq!(rd.resolved_ts, START + 10);
    // The event sink holds only the row below the redo global ts.
    dm.flush_sink(&mut env.ctx());
    let o = env.take();
    let written: Vec<Ts> = puts(&o)
        .iter()
        .flat_map(|(_, c)| match c {
            crate::effects::ObjectContent::Rows(r) => r.iter().map(|r| r.commit_ts).collect(),
            _ => vec![],
        })
        .collect();
    assert_eq!(written, vec![START + 3]);
    // The forward raises the global ts past everything: the held dispatcher drains.
    assert!(dm.set_redo_global_ts(&mut env.ctx(), START + 20));
    let ed = &dm.dispatchers[&ED];
    assert!(!ed.held_by_redo && ed.queue.is_empty());
    assert_eq!(ed.resolved_ts, START + 10);
    assert!(ed.progress.contains_key(&(START + 8)));
    assert!(!dm.set_redo_global_ts(&mut env.ctx(), START + 20), "monotonic");
}

#[test]
fn a_fresh_manager_holds_every_event_dispatcher_until_the_first_forward() {
    let (mut dm, mut env, _) = self_manager();
    dm_handle(&mut dm, &mut env, 0, sched(create_req(ED, TableSpan::full(10), START, OperatorType::Add, EPOCH)));
    dm_feed(&mut dm, &mut env, ED, vec![], START + 3);
    let ed = &dm.dispatchers[&ED];
    assert_eq!(ed.state, ComponentState::Initializing, "not even the first resolved ts is handled");
    assert!(ed.held_by_redo);
}

#[test]
fn redo_rows_leave_the_table_progress_only_once_their_redo_file_is_durable() {
    let (mut dm, mut env) = with_table();
    dm_feed(&mut dm, &mut env, RD, rows(&[START + 3, START + 4]), START + 6);
    assert_eq!(dm.dispatchers[&RD].checkpoint_ts(), START + 2);
    assert!(dm.sink.inflight_count() == 0 && !dm.sink.has_buffered(RD), "not the event sink");
    dm.flush_redo_sink(&mut env.ctx());
    let o = env.take();
    let p = puts(&o);
    let [(op, crate::effects::ObjectContent::RedoRows(r))] = &p[..] else { panic!("{:?}", o.storage) };
    assert_eq!(r.len(), 2);
    assert!(matches!(&o.storage[0], crate::effects::StorageRequest::Put { path, .. } if path.starts_with("redo/")));
    assert_eq!(dm.dispatchers[&RD].checkpoint_ts(), START + 2, "in flight");
    dm.on_storage_result(&mut env.ctx(), *op, Ok(()));
    assert!(dm.dispatchers[&RD].progress.is_empty());
    assert_eq!(dm.dispatchers[&RD].checkpoint_ts(), START + 6);
}

#[test]
fn a_redo_dispatcher_writes_a_ddl_only_once_its_rows_are_in_the_redo_log_and_skips_syncpoints() {
    let (mut dm, mut env) = with_table();
    let mut ddl = create_table_ddl(10, START + 5);
    ddl.kind = crate::upstream::DdlKind::AddColumn;
    ddl.blocked_tables = normal(&[10]);
    ddl.need_added_tables = vec![];
    let mut evs = rows(&[START + 3]);
    evs.push(crate::upstream::UpstreamEvent::SyncPoint(START + 4));
    evs.push(crate::upstream::UpstreamEvent::Ddl(ddl));
    let o = dm_feed(&mut dm, &mut env, RD, evs, START + 6);
    assert!(puts(&o).is_empty(), "the DDL waits while its row is only buffered: {:?}", o.storage);
    let rd = &dm.dispatchers[&RD];
    assert!(rd.block.is_none() && rd.received_sync_point.is_none(), "the syncpoint was ignored");
    assert!(rd.progress.contains_key(&(START + 3)));
    // The redo flush tick writes the row; the DDL still waits for the write to be durable.
    dm.flush_redo_sink(&mut env.ctx());
    let o = env.take();
    let p = puts(&o);
    let [(op, crate::effects::ObjectContent::RedoRows(_))] = &p[..] else { panic!("{:?}", o.storage) };
    let op = *op;
    dm.process(&mut env.ctx());
    assert!(puts(&env.take()).is_empty(), "the row's log is in flight");
    dm.on_storage_result(&mut env.ctx(), op, Ok(()));
    dm.process(&mut env.ctx());
    let o = env.take();
    assert!(
        matches!(&puts(&o)[..], [(_, crate::effects::ObjectContent::RedoDdl(d))] if d.commit_ts == START + 5),
        "the DDL goes to the redo log after the row: {:?}",
        o.storage
    );
    assert!(
        !o.observations.iter().any(|ob| matches!(ob.what, crate::effects::Observation::AssertionFailed { .. })),
        "no flush-before-block assertion"
    );
}

#[test]
fn a_failed_redo_write_is_a_retryable_changefeed_error() {
    let (mut dm, mut env) = with_table();
    dm_feed(&mut dm, &mut env, RD, rows(&[START + 3]), START + 6);
    dm.flush_redo_sink(&mut env.ctx());
    let o = env.take();
    let op = puts(&o)[0].0;
    dm.on_storage_result(&mut env.ctx(), op, Err(crate::effects::StorageError::Transient("redo".into())));
    assert!(traced(&env.take(), "redo log write failed"));
    assert_eq!(dm.errors.len(), 1);
    assert_eq!(dm.errors[0].code, ErrorCode::ChangefeedRetryable);
    assert!(!dm.redo.as_ref().unwrap().sink.is_normal());
}

// ---------------------------------------------------------------- merges, close and fence

#[test]
fn a_redo_merge_takes_redo_sources_only_and_builds_a_redo_dispatcher() {
    let (mut dm, mut env, _) = self_manager();
    let (l, r) = halves(10);
    let (a, b, m) = (DispatcherId(7201), DispatcherId(7202), DispatcherId(7203));
    for (id, span) in [(a, l), (b, r)] {
        let mut req = create_req(id, span, START, OperatorType::Add, EPOCH);
        req.config.mode = Mode::Redo;
        dm_handle(&mut dm, &mut env, 0, sched(req));
        dm.dispatchers.get_mut(&id).unwrap().state = ComponentState::Working;
    }
    // A default-mode merge does not find them (they are in the redo map).
    let (_, o) = dm_handle(
        &mut dm,
        &mut env,
        0,
        Message::MergeDispatcherRequest { cf: cf(), req: merge_req(&[a, b], m, EPOCH) },
    );
    assert!(traced(&o, "merge dispatcher failed"));
    assert!(!dm.dispatchers.contains_key(&m));
    let mut req = merge_req(&[a, b], m, EPOCH);
    req.mode = Mode::Redo;
    dm_handle(&mut dm, &mut env, 0, Message::MergeDispatcherRequest { cf: cf(), req });
    let md = &dm.dispatchers[&m];
    assert!(md.is_redo() && md.state == ComponentState::Preparing);
    assert_eq!(md.seq, 4, "the redo map's fourth dispatcher (trigger, two halves, merged)");
    assert_eq!(dm.seq, 1);
    env.now += crate::dispatcher::manager::MERGE_CHECK_INTERVAL_MS;
    dm.heartbeat(&mut env.ctx(), true);
    let md = &dm.dispatchers[&m];
    assert_eq!((md.state, md.start_ts), (ComponentState::Initializing, START));
}

#[test]
fn a_local_fence_closes_both_triggers_and_the_redo_sink() {
    let (mut dm, mut env) = with_table();
    dm_feed(&mut dm, &mut env, RD, rows(&[START + 3]), START + 6);
    dm.local_fence(&mut env.ctx());
    assert!(dm.write_path_closed);
    assert!(dm.dispatchers.is_empty());
    assert_eq!((dm.trigger_id, dm.redo_trigger_id()), (None, None));
    assert_eq!(dm.redo.as_ref().unwrap().fenced_trigger, Some(TR));
    dm.flush_redo_sink(&mut env.ctx());
    assert!(env.take().storage.is_empty(), "the redo rows were dropped with the write path");
    dm.heartbeat(&mut env.ctx(), false);
    assert!(dm.close_finished);
}

#[test]
fn a_held_event_dispatcher_gets_no_more_events_until_the_forward_wakes_it() {
    let (mut dm, mut env) = with_table();
    dm.redo.as_mut().unwrap().global_ts = START + 5;
    dm.feed(ED, rows(&[START + 8]), START + 10);
    dm.process(&mut env.ctx());
    assert!(dm.dispatchers[&ED].held_by_redo);
    // Its path blocks: a later batch (a newer resolved ts) is not delivered, so the held
    // batch is the one the forward releases.
    dm.feed(ED, rows(&[START + 12]), START + 20);
    let ed = &dm.dispatchers[&ED];
    assert_eq!(ed.fed_ts, START + 10);
    assert_eq!(ed.queue.len(), 2, "the held row and its resolved ts only: {:?}", ed.queue);
    assert!(dm.set_redo_global_ts(&mut env.ctx(), START + 10));
    let ed = &dm.dispatchers[&ED];
    assert!(!ed.held_by_redo && ed.queue.is_empty());
    assert_eq!(ed.resolved_ts, START + 10);
    dm.feed(ED, rows(&[START + 12]), START + 20);
    assert_eq!(dm.dispatchers[&ED].fed_ts, START + 20, "delivered again once woken");
}

#[test]
fn a_status_batch_carries_the_stale_redo_snapshot_unless_fresh_status_watermark() {
    const RD2: DispatcherId = DispatcherId(7103);
    let mut got = vec![];
    for fix in [false, true] {
        let (mut dm, mut env) = with_table();
        if fix {
            env = env.with_fix(crate::bugs::Fix::FreshStatusWatermark);
        }
        // The collector's copy of the last redo aggregate claims more than RD has.
        dm.redo.as_mut().unwrap().status_snapshot =
            Watermark { checkpoint_ts: START + 50, resolved_ts: START + 50, seq: 1 };
        dm_handle(&mut dm, &mut env, 0, redo_create(RD2, 11, START + 60));
        let o = dm_feed(&mut dm, &mut env, RD2, vec![], START + 61);
        let redo = heartbeats(&o).into_iter().find(|(_, r, st)| r.is_some() && st.iter().any(|s| s.id == RD2));
        got.push(redo.expect("a status batch with RD2").1.unwrap().checkpoint_ts);
    }
    assert_eq!(got[0], START + 50, "TiCDC: the snapshot, not lowered by RD2's status");
    assert_eq!(got[1], START, "fixed: afresh over the redo dispatchers (the redo trigger is the lowest)");
}
