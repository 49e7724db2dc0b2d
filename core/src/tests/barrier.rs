//! Barrier (§8): writer selection, Write/Pass routing, owner check, non-blocking
//! table creation and drops.

use super::harness::*;
use crate::bugs::Bug;
use crate::maintainer::operator::{Operator, RemovePostFinish};
use crate::maintainer::span_controller::ReplicaState;
use crate::messages::*;
use crate::types::*;

use BlockStage::{Done, Waiting};

const X: DispatcherId = DispatcherId(1000); // table 10 on node 1
const Y: DispatcherId = DispatcherId(1001); // table 11 on node 2
const TS: Ts = 200;

fn setup_env(env: Env) -> MH {
    let mut h = MH::with_env(env, &[0, 1, 2], TestSchema::with_tables(&[10, 11]));
    h.bootstrap(vec![
        (1, NodeReport::spans(vec![bspan(X, TableSpan::full(10), ComponentState::Working, 150)])),
        (2, NodeReport::spans(vec![bspan(Y, TableSpan::full(11), ComponentState::Working, 150)])),
    ]);
    assert_eq!(h.state(X), Some((ReplicaState::Replicating, Some(n(1)))));
    assert_eq!(h.state(Y), Some((ReplicaState::Replicating, Some(n(2)))));
    h
}
fn setup() -> MH {
    setup_env(Env::new(0))
}

fn report(h: &mut MH, from: u32, id: DispatcherId, b: BlockState) -> Out {
    h.handle(from, block_statuses(vec![(id, b)]))
}

use crate::effects::Out;

#[test]
fn normal_event_writer_is_the_last_reporter_and_others_get_pass_after_done() {
    for (first, last) in [((1, X), (2, Y)), ((2, Y), (1, X))] {
        let mut h = setup();
        let bt = normal(&[10, 11]);
        let o = report(&mut h, first.0, first.1, block(TS, bt.clone(), Waiting));
        assert_eq!(acks(&o), vec![(n(first.0), TS, vec![first.1])]);
        assert!(actions(&o).is_empty(), "not everyone reported yet");
        let o = report(&mut h, last.0, last.1, block(TS, bt.clone(), Waiting));
        assert_eq!(actions(&o), vec![(n(last.0), ActionKind::Write, TS, vec![last.1])]);
        // While the writer has not reported DONE, the Write is resent once a second.
        h.env.now = 999;
        assert!(actions(&h.tick()).is_empty());
        h.env.now = 1_000;
        assert_eq!(actions(&h.tick()), vec![(n(last.0), ActionKind::Write, TS, vec![last.1])]);
        let o = report(&mut h, last.0, last.1, block(TS, bt.clone(), Done));
        assert!(actions(&o).is_empty(), "the Pass goes out at the next resend");
        let o = h.tick();
        // `sendPassAction` lists every task of the blocked tables, the writer included (it
        // answers the outdated action DONE).
        let mut pass =
            vec![(n(first.0), ActionKind::Pass, TS, vec![first.1]), (n(last.0), ActionKind::Pass, TS, vec![last.1])];
        pass.sort_by_key(|a| a.0);
        let sorted = |mut v: Vec<(NodeId, ActionKind, Ts, Vec<DispatcherId>)>| {
            v.sort_by_key(|a| a.0);
            v
        };
        assert_eq!(sorted(actions(&o)), pass);
        assert!(h.m.pipe.barrier.events.contains_key(&(TS, false)), "waiting for the passed dispatcher");
        // Until it reports DONE the Pass is resent.
        h.env.now = 2_000;
        assert_eq!(sorted(actions(&h.tick())), pass);
        report(&mut h, first.0, first.1, block(TS, bt.clone(), Done));
        assert!(h.m.pipe.barrier.events.is_empty(), "every related dispatcher is done");
    }
}

#[test]
fn trigger_related_event_is_written_by_the_ddl_span_even_if_it_reported_first() {
    let mut h = setup();
    let ddl = h.ddl();
    let bt = normal(&[10, DDL_SPAN_TABLE_ID]);
    report(&mut h, 0, ddl, block(TS, bt.clone(), Waiting));
    let o = report(&mut h, 1, X, block(TS, bt.clone(), Waiting));
    assert_eq!(actions(&o), vec![(n(0), ActionKind::Write, TS, vec![ddl])]);
    let o = report(&mut h, 0, ddl, block(TS, bt, Done));
    assert!(actions(&o).is_empty());
    let o = h.tick();
    assert_eq!(actions(&o), vec![(n(0), ActionKind::Pass, TS, vec![ddl]), (n(1), ActionKind::Pass, TS, vec![X])]);
}

#[test]
fn db_event_is_written_by_the_ddl_span_and_passed_to_every_node_of_the_schema() {
    let mut h = setup();
    let ddl = h.ddl();
    let bt = db(SCHEMA);
    report(&mut h, 1, X, block(TS, bt.clone(), Waiting));
    let o = report(&mut h, 0, ddl, block(TS, bt.clone(), Waiting));
    assert!(actions(&o).is_empty(), "Y has not reported");
    let o = report(&mut h, 2, Y, block(TS, bt.clone(), Waiting));
    assert_eq!(actions(&o), vec![(n(0), ActionKind::Write, TS, vec![ddl])]);
    report(&mut h, 0, ddl, block(TS, bt, Done));
    let o = h.tick();
    // `InfluenceType_DB` with the schema ID to the nodes of the schema's tasks and the
    // writer's; each manager applies it to its dispatchers of the schema.
    let mut a: Vec<(NodeId, ActionKind, InfluencedDispatchers)> =
        hb_statuses(&o).into_iter().filter_map(|(to, s)| s.action.map(|x| (to, x.action, s.influenced))).collect();
    a.sort_by_key(|x| x.0);
    assert_eq!(a, [0, 1, 2].map(|i| (n(i), ActionKind::Pass, InfluencedDispatchers::Db(SCHEMA))).to_vec());
}

#[test]
fn a_writer_recreated_before_the_event_finishes_gets_the_pass_it_waits_for() {
    // X writes the DDL; Y's node holds the event open (no DONE yet). X is then removed and
    // re-added from blockTs-1 (e.g. a move that ended in a re-add): it replays the DDL and
    // waits on it again; the resent Pass must reach it too, or it waits forever once Y's
    // DONE finishes the event.
    let mut h = setup();
    let bt = normal(&[10, 11]);
    report(&mut h, 2, Y, block(TS, bt.clone(), Waiting));
    report(&mut h, 1, X, block(TS, bt.clone(), Waiting));
    report(&mut h, 1, X, block(TS, bt.clone(), Done));
    assert!(h.m.pipe.barrier.events[&(TS, false)].done.contains(&X));
    let o = report(&mut h, 1, X, block(TS, bt.clone(), Waiting));
    assert_eq!(acks(&o), vec![(n(1), TS, vec![X])], "selected: ACK only");
    h.env.now = 1_000;
    let a = actions(&h.tick());
    assert!(a.contains(&(n(1), ActionKind::Pass, TS, vec![X])), "{:?}", a);
}

#[test]
fn block_status_from_a_non_owner_is_ignored() {
    let mut h = setup();
    let bt = normal(&[10, 11]);
    let o = report(&mut h, 2, X, block(TS, bt.clone(), Waiting));
    assert!(o.msgs.is_empty(), "no ACK, no action");
    assert!(traced(&o, "ignore block status from non-owner"));
    let o = report(&mut h, 2, Y, block(TS, bt, Waiting));
    assert!(actions(&o).is_empty(), "X never counted as reported");
    assert!(!h.m.pipe.barrier.events[&(TS, false)].reported.contains(&X));
}

#[test]
fn bug_accept_nonowner_block_status_counts_it() {
    let mut h = setup_env(Env::new(0).with_bug(Bug::AcceptNonownerBlockStatus));
    let bt = normal(&[10, 11]);
    let o = report(&mut h, 2, X, block(TS, bt.clone(), Waiting));
    assert_eq!(acks(&o), vec![(n(2), TS, vec![X])]);
    let o = report(&mut h, 2, Y, block(TS, bt, Waiting));
    assert_eq!(
        actions(&o),
        vec![(n(2), ActionKind::Write, TS, vec![Y])],
        "selected with a status X's owner never sent"
    );
}

#[test]
fn block_status_of_a_non_replicating_task_is_answered_ignored() {
    let mut h = setup();
    h.m.pipe.sc.mark_scheduling(&X);
    let o = report(&mut h, 1, X, block(TS, normal(&[10, 11]), Waiting));
    let st = hb_statuses(&o);
    assert_eq!(st.len(), 1);
    assert_eq!(st[0].0, n(1));
    assert_eq!(st[0].1.ignored_block_status, Some(AckEvent { commit_ts: TS, is_sync_point: false }));
    assert!(h.m.pipe.barrier.events.is_empty());
}

#[test]
fn non_blocking_create_adds_the_table_and_acks() {
    let mut h = setup();
    let ddl = h.ddl();
    let mut b = block(180, normal(&[DDL_SPAN_TABLE_ID]), BlockStage::None);
    b.need_added_tables = vec![table_ref(13)];
    let o = report(&mut h, 0, ddl, b.clone());
    assert_eq!(acks(&o), vec![(n(0), 180, vec![ddl])]);
    let t = h.table_tasks(13);
    assert_eq!(t.len(), 1);
    let r = h.m.pipe.sc.get(&t[0]).unwrap();
    assert_eq!(
        (r.state, r.checkpoint_ts, r.span),
        (ReplicaState::Absent, 180, TableSpan::full(13)),
        "starts at the DDL's commit ts"
    );
    // A resend of the same report is idempotent.
    let o = report(&mut h, 0, ddl, b);
    assert_eq!(acks(&o).len(), 1);
    assert_eq!(h.table_tasks(13), t);
    assert!(h.m.pipe.barrier.events.is_empty(), "non-blocking events are not kept");
}

#[test]
fn drop_removes_tasks_only_after_the_writer_is_done() {
    let mut h = setup();
    let ddl = h.ddl();
    let mut b = block(TS, normal(&[10, DDL_SPAN_TABLE_ID]), Waiting);
    b.need_dropped_tables = Some(normal(&[10]));
    report(&mut h, 1, X, b.clone());
    let o = report(&mut h, 0, ddl, b.clone());
    assert_eq!(actions(&o), vec![(n(0), ActionKind::Write, TS, vec![ddl])]);
    assert_eq!(h.table_tasks(10), vec![X], "nothing removed before the DDL is written");
    assert!(h.op(X).is_none());
    b.stage = Done;
    let o = report(&mut h, 0, ddl, b);
    assert!(traced(&o, "remove table task by ddl"));
    assert!(actions(&o).is_empty());
    let o = h.tick();
    // The dropped table's dispatcher gets no Pass (it is removed); the trigger, the
    // writer, is the only task of the blocked tables left.
    assert_eq!(actions(&o), vec![(n(0), ActionKind::Pass, TS, vec![ddl])]);
    assert!(h.table_tasks(10).is_empty());
    assert!(matches!(h.op(X), Some(Operator::Remove(r)) if r.node == n(1) && r.post == RemovePostFinish::None));
    let reqs = schedule_reqs(&h.execute());
    assert_eq!(
        reqs.iter().map(|(to, r)| (*to, r.action, r.config.dispatcher_id, r.maintainer_epoch)).collect::<Vec<_>>(),
        vec![(n(1), ScheduleAction::Remove, X, EPOCH)]
    );
    h.handle(1, heartbeat(TS, 2, vec![st(X, ComponentState::Stopped, TS - 1)]));
    h.execute();
    assert!(h.op(X).is_none());
    assert!(h.table_tasks(10).is_empty());
    assert!(h.m.pipe.barrier.events.is_empty());
}

#[test]
fn blocking_truncate_adds_the_new_table_only_after_done() {
    let mut h = setup();
    let ddl = h.ddl();
    let mut b = block(TS, normal(&[10, DDL_SPAN_TABLE_ID]), Waiting);
    b.need_dropped_tables = Some(normal(&[10]));
    b.need_added_tables = vec![table_ref(14)];
    report(&mut h, 0, ddl, b.clone());
    report(&mut h, 1, X, b.clone());
    assert!(h.table_tasks(14).is_empty(), "the new table must not deliver rows before the truncate is written");
    b.stage = Done;
    report(&mut h, 0, ddl, b);
    let t = h.table_tasks(14);
    assert_eq!(t.len(), 1);
    assert_eq!(h.m.pipe.sc.get(&t[0]).unwrap().checkpoint_ts, TS);
    assert!(h.table_tasks(10).is_empty());
}

// ---------------------------------------------------------------- dispatcher: fast resend

/// A dispatcher WAITING on a DDL whose task is still Scheduling keeps reporting on every
/// `IgnoredBlockStatus` (`HandleDispatcherStatus` runs the resend task at once); an ignore
/// inside the rate-limit window defers the resend to the next heartbeat tick instead of
/// leaving the dispatcher to the 5 s resend.
#[test]
fn an_ignored_waiting_status_is_resent_and_one_inside_the_window_at_the_next_tick() {
    use super::fencing::{ddl_event, owned};
    use crate::dispatcher::basic_dispatcher::IGNORED_RESEND_MIN_MS;
    use crate::upstream::UpstreamEvent;
    let (mut dm, mut env) = owned(1, None, Env::new(1));
    dm_handle(&mut dm, &mut env, 0, sched(create_req(X, TableSpan::full(10), START, OperatorType::Add, EPOCH)));
    let waiting = |o: &Out| {
        o.msgs.iter().filter(|e| matches!(&e.msg, Message::BlockStatusRequest { statuses, .. } if statuses.iter().any(|s| s.id == X && s.state.stage == Waiting))).count()
    };
    let o = dm_feed(&mut dm, &mut env, X, vec![UpstreamEvent::Ddl(ddl_event(TS, normal(&[10, 11])))], TS + 1);
    assert_eq!(waiting(&o), 1);
    let ignored = || Message::HeartBeatResponse {
        mode: Mode::Default,
        cf: cf(),
        statuses: vec![DispatcherStatus {
            influenced: InfluencedDispatchers::Normal(vec![X]),
            action: None,
            ack: None,
            ignored_block_status: Some(AckEvent { commit_ts: TS, is_sync_point: false }),
        }],
        maintainer_epoch: EPOCH,
    };
    env.now = 1_000;
    assert_eq!(waiting(&dm_handle(&mut dm, &mut env, 0, ignored()).1), 1, "resent at once");
    env.now = 1_010;
    assert_eq!(waiting(&dm_handle(&mut dm, &mut env, 0, ignored()).1), 0, "inside the window: deferred");
    env.now = 1_020;
    dm.heartbeat(&mut env.ctx(), false);
    assert_eq!(waiting(&env.take()), 0, "the window is not over yet");
    env.now = 1_000 + IGNORED_RESEND_MIN_MS;
    dm.heartbeat(&mut env.ctx(), false);
    assert_eq!(waiting(&env.take()), 1, "resent at the next tick past the window, not 5 s later");
    env.now += 200;
    dm.heartbeat(&mut env.ctx(), false);
    assert_eq!(waiting(&env.take()), 0, "once");
    // A deferred resend is dropped once the status is acknowledged.
    env.now += 10;
    dm_handle(&mut dm, &mut env, 0, ignored());
    env.now += 5;
    dm_handle(&mut dm, &mut env, 0, ignored());
    let ack = Message::HeartBeatResponse {
        mode: Mode::Default,
        cf: cf(),
        statuses: vec![DispatcherStatus {
            influenced: InfluencedDispatchers::Normal(vec![X]),
            action: None,
            ack: Some(AckEvent { commit_ts: TS, is_sync_point: false }),
            ignored_block_status: None,
        }],
        maintainer_epoch: EPOCH,
    };
    dm_handle(&mut dm, &mut env, 0, ack);
    env.now += 200;
    dm.heartbeat(&mut env.ctx(), false);
    assert_eq!(waiting(&env.take()), 0);
}

/// Candidate fix `keep-newer-block-state` (not TiCDC, which stores every status): an
/// outdated DONE for an earlier event does not replace the span's newer block state.
#[test]
fn fix_keep_newer_block_state_ignores_an_outdated_done() {
    for fix in [false, true] {
        let env = if fix { Env::new(0).with_fix(crate::bugs::Fix::KeepNewerBlockState) } else { Env::new(0) };
        let mut h = setup_env(env);
        report(&mut h, 1, X, block(TS, normal(&[10, 11]), Waiting));
        report(&mut h, 1, X, block(TS - 50, normal(&[10]), Done));
        let bs = h.m.pipe.sc.get(&X).and_then(|t| t.block_state.clone()).expect("a block state");
        if fix {
            assert_eq!((bs.block_ts, bs.stage), (TS, Waiting), "the newer state is kept");
        } else {
            assert_eq!((bs.block_ts, bs.stage), (TS - 50, Done), "TiCDC's UpdateBlockState stores it");
        }
    }
}
