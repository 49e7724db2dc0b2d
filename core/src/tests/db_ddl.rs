//! Schema-level DDLs (`persist_storage_ddl_handlers.go`): CREATE DATABASE is a
//! trigger-only, non-blocking DDL (blocked tables: the DDL span; nothing added or
//! dropped); DROP DATABASE blocks every task of the schema and the trigger
//! (`InfluenceType_DB` with the schema ID), is written by the trigger, and drops the
//! schema's tasks when the writer reports DONE (`RemoveTasksBySchemaID`).

use super::fencing::owned;
use super::harness::*;
use crate::dispatcher::DispatcherManager;
use crate::effects::*;
use crate::maintainer::operator::{Operator, RemovePostFinish};
use crate::messages::*;
use crate::types::*;
use crate::upstream::*;

use BlockStage::{Done, Waiting};

const X: DispatcherId = DispatcherId(1000); // table 10 (schema 1) on node 1
const Y: DispatcherId = DispatcherId(1001); // table 11 (schema 1) on node 2
const Z: DispatcherId = DispatcherId(1002); // table 12 (schema 2) on node 3
const TRIG: DispatcherId = DispatcherId(3000);
const OTHER: SchemaId = 2;
const TS: Ts = 200;

fn setup() -> MH {
    setup_with(Env::new(0))
}

fn setup_with(env: Env) -> MH {
    let mut schema = TestSchema::with_tables(&[10, 11]);
    schema.tables.push((table_info(12, OTHER), 1, None));
    let mut h = MH::with_env(env, &[0, 1, 2, 3], schema);
    let mut z = bspan(Z, TableSpan::full(12), ComponentState::Working, 150);
    z.schema_id = OTHER;
    h.bootstrap(vec![
        (1, NodeReport::spans(vec![bspan(X, TableSpan::full(10), ComponentState::Working, 150)])),
        (2, NodeReport::spans(vec![bspan(Y, TableSpan::full(11), ComponentState::Working, 150)])),
        (3, NodeReport::spans(vec![z])),
    ]);
    h
}

fn report(h: &mut MH, from: u32, id: DispatcherId, b: BlockState) -> Out {
    h.handle(from, block_statuses(vec![(id, b)]))
}

/// The block state of a DROP DATABASE of `schema` as a dispatcher reports it.
fn drop_db(schema: SchemaId, stage: BlockStage) -> BlockState {
    let mut b = block(TS, db(schema), stage);
    b.need_dropped_tables = Some(db(schema));
    b
}

/// Actions with their influence.
fn actions_any(out: &Out) -> Vec<(NodeId, ActionKind, Ts, InfluencedDispatchers)> {
    let mut v: Vec<_> = hb_statuses(out)
        .into_iter()
        .filter_map(|(to, s)| s.action.map(|a| (to, a.action, a.commit_ts, s.influenced)))
        .collect();
    v.sort_by_key(|a| a.0);
    v
}

fn block_reports(out: &Out) -> Vec<(DispatcherId, BlockState)> {
    out.msgs
        .iter()
        .filter_map(|e| match &e.msg {
            Message::BlockStatusRequest { statuses, .. } => {
                Some(statuses.iter().map(|s| (s.id, s.state.clone())).collect::<Vec<_>>())
            }
            _ => None,
        })
        .flatten()
        .collect()
}

// ---------------------------------------------------------------- maintainer

#[test]
fn drop_database_removes_the_schemas_tasks_after_the_write_and_sends_no_pass() {
    let mut h = setup();
    let ddl = h.ddl();
    report(&mut h, 1, X, drop_db(SCHEMA, Waiting));
    let o = report(&mut h, 0, ddl, drop_db(SCHEMA, Waiting));
    assert!(actions_any(&o).is_empty(), "Y has not reported");
    let o = report(&mut h, 2, Y, drop_db(SCHEMA, Waiting));
    assert_eq!(
        actions_any(&o),
        vec![(n(0), ActionKind::Write, TS, InfluencedDispatchers::Normal(vec![ddl]))],
        "the trigger writes a DB event"
    );
    assert_eq!(h.table_tasks(10), vec![X], "nothing removed before the write");
    assert!(h.m.pipe.barrier.pending_events.contains(&(TS, false)), "a DROP DATABASE needs scheduling");
    let o = report(&mut h, 0, ddl, drop_db(SCHEMA, Done));
    assert!(traced(&o, "remove table task by ddl"));
    assert!(actions_any(&o).is_empty(), "no task of the schema is left to pass: {:?}", actions_any(&o));
    assert!(h.m.pipe.barrier.events.is_empty(), "covered at once");
    assert!(h.table_tasks(10).is_empty() && h.table_tasks(11).is_empty());
    assert_eq!(h.table_tasks(12), vec![Z], "another schema's table stays");
    assert!(matches!(h.op(X), Some(Operator::Remove(r)) if r.node == n(1) && r.post == RemovePostFinish::None));
    assert!(matches!(h.op(Y), Some(Operator::Remove(r)) if r.node == n(2)));
    let mut reqs: Vec<_> =
        schedule_reqs(&h.execute()).into_iter().map(|(to, r)| (to, r.action, r.config.dispatcher_id)).collect();
    reqs.sort();
    assert_eq!(reqs, vec![(n(1), ScheduleAction::Remove, X), (n(2), ScheduleAction::Remove, Y)]);
    // Later resends do not bring the event back.
    h.env.now += 5_000;
    assert!(actions_any(&h.tick()).is_empty());
}

#[test]
fn a_db_pass_fans_out_to_the_nodes_of_the_schema_and_the_writers_node() {
    // A DB event that drops nothing (e.g. ALTER DATABASE): the tasks stay and are passed.
    let mut h = setup();
    let ddl = h.ddl();
    let bt = db(SCHEMA);
    report(&mut h, 0, ddl, block(TS, bt.clone(), Waiting));
    report(&mut h, 1, X, block(TS, bt.clone(), Waiting));
    let o = report(&mut h, 2, Y, block(TS, bt.clone(), Waiting));
    assert_eq!(actions_any(&o), vec![(n(0), ActionKind::Write, TS, InfluencedDispatchers::Normal(vec![ddl]))]);
    let o = report(&mut h, 0, ddl, block(TS, bt.clone(), Done));
    assert!(actions_any(&o).is_empty(), "the Pass goes out at the next resend");
    let pass = |node| (n(node), ActionKind::Pass, TS, InfluencedDispatchers::Db(SCHEMA));
    assert_eq!(actions_any(&h.tick()), vec![pass(0), pass(1), pass(2)], "not to node 3 (another schema only)");
    // X's DONE alone does not finish it; Y's does.
    report(&mut h, 1, X, block(TS, bt.clone(), Done));
    assert!(h.m.pipe.barrier.events.contains_key(&(TS, false)));
    report(&mut h, 2, Y, block(TS, bt, Done));
    assert!(h.m.pipe.barrier.events.is_empty());
}

#[test]
fn the_trigger_past_a_db_event_does_not_count_as_past_it_but_a_task_of_the_schema_does() {
    let mut h = setup();
    let ddl = h.ddl();
    let bt = db(SCHEMA);
    report(&mut h, 1, X, block(TS, bt.clone(), Waiting));
    // The trigger's checkpoint is beyond the event (it belongs to no schema:
    // `checkBlockedDispatchers` looks at `GetTasksBySchemaID`).
    h.m.pipe.sc.get_mut(&ddl).unwrap().checkpoint_ts = TS + 50;
    h.env.now = 1_000;
    let o = h.tick();
    assert!(actions_any(&o).is_empty(), "{:?}", actions_any(&o));
    assert!(!h.m.pipe.barrier.events[&(TS, false)].selected);
    // Y, a task of the schema, is past it: the event was written; the Pass goes out.
    h.m.pipe.sc.get_mut(&Y).unwrap().checkpoint_ts = TS + 1;
    h.env.now = 2_000;
    let o = h.tick();
    assert!(h.m.pipe.barrier.events[&(TS, false)].writer_advanced);
    // The round that advances it sends nothing (barrier_event.go:715-716); the next does.
    assert!(actions_any(&o).is_empty(), "{:?}", actions_any(&o));
    h.env.now = 2_100;
    let o = h.tick();
    assert!(
        actions_any(&o).iter().all(|a| a.1 == ActionKind::Pass && a.3 == InfluencedDispatchers::Db(SCHEMA)),
        "{:?}",
        actions_any(&o)
    );
    assert!(!actions_any(&o).is_empty());
}

/// Candidate fix `db-past-check-includes-trigger`: the trigger already past a DB event
/// (it wrote it before a maintainer move) counts, so the event is passed.
#[test]
fn fix_db_past_check_includes_trigger_passes_an_event_the_trigger_is_past() {
    let mut h = setup_with(Env::new(0).with_fix(crate::bugs::Fix::DbPastCheckIncludesTrigger));
    let ddl = h.ddl();
    let bt = db(SCHEMA);
    report(&mut h, 1, X, block(TS, bt.clone(), Waiting));
    h.m.pipe.sc.get_mut(&ddl).unwrap().checkpoint_ts = TS + 50;
    h.env.now = 1_000;
    h.tick();
    assert!(h.m.pipe.barrier.events[&(TS, false)].writer_advanced);
    h.env.now = 1_100;
    let o = h.tick();
    assert!(
        actions_any(&o).contains(&(n(1), ActionKind::Pass, TS, InfluencedDispatchers::Db(SCHEMA))),
        "{:?}",
        actions_any(&o)
    );
}

/// A DB event advanced with no writer sends its Pass to the schema's nodes only, missing
/// the trigger's node; candidate fix `db-pass-reaches-trigger` adds it.
#[test]
fn a_writerless_db_pass_misses_the_triggers_node_unless_fixed() {
    for (env, want_trigger_node) in
        [(Env::new(0), false), (Env::new(0).with_fix(crate::bugs::Fix::DbPassReachesTrigger), true)]
    {
        let mut h = setup_with(env);
        let bt = db(SCHEMA);
        report(&mut h, 1, X, block(TS, bt.clone(), Waiting));
        h.m.pipe.sc.get_mut(&Y).unwrap().checkpoint_ts = TS + 1;
        h.env.now = 1_000;
        assert!(actions_any(&h.tick()).is_empty(), "advanced; the Pass goes out on the next round");
        h.env.now = 1_100;
        let nodes: Vec<NodeId> = actions_any(&h.tick()).iter().map(|a| a.0).collect();
        assert!(nodes.contains(&n(1)) && nodes.contains(&n(2)), "{:?}", nodes);
        assert_eq!(nodes.contains(&n(0)), want_trigger_node, "{:?}", nodes);
    }
}

#[test]
fn the_triggers_drop_database_report_is_dropped_while_a_schedule_event_is_pending() {
    // A TRUNCATE of table 10 was written but not scheduled yet (not the head: an earlier
    // schedule event is pending); the DB report must not build its task set now.
    let mut h = setup();
    let ddl = h.ddl();
    h.m.pipe.barrier.pending_events.insert((TS - 10, false));
    let o = report(&mut h, 0, ddl, drop_db(SCHEMA, Waiting));
    assert!(traced(&o, "discard db/all block event from ddl dispatcher due to pending schedule events"));
    assert!(acks(&o).is_empty(), "no ACK: the trigger resends");
    h.m.pipe.barrier.pending_events.clear();
    let o = report(&mut h, 0, ddl, drop_db(SCHEMA, Waiting));
    assert_eq!(acks(&o), vec![(n(0), TS, vec![ddl])]);
}

#[test]
fn a_new_table_of_the_schema_must_report_before_the_drop_database_is_written() {
    let mut h = setup();
    let ddl = h.ddl();
    // CREATE TABLE 13 in the schema (non-blocking, acknowledged): an Absent task.
    let mut c = block(TS - 20, normal(&[DDL_SPAN_TABLE_ID]), BlockStage::None);
    c.need_added_tables = vec![table_ref(13)];
    report(&mut h, 0, ddl, c);
    let t13 = h.table_tasks(13);
    assert_eq!(t13.len(), 1);
    report(&mut h, 0, ddl, drop_db(SCHEMA, Waiting));
    report(&mut h, 1, X, drop_db(SCHEMA, Waiting));
    let o = report(&mut h, 2, Y, drop_db(SCHEMA, Waiting));
    assert!(actions_any(&o).is_empty(), "table 13's task has not reported");
    assert!(!h.m.pipe.barrier.events[&(TS, false)].selected);
}

#[test]
fn a_drop_database_of_an_empty_schema_is_written_by_the_trigger_alone() {
    let mut h = setup();
    let ddl = h.ddl();
    let o = report(&mut h, 0, ddl, drop_db(7, Waiting));
    assert_eq!(actions_any(&o), vec![(n(0), ActionKind::Write, TS, InfluencedDispatchers::Normal(vec![ddl]))]);
    let o = report(&mut h, 0, ddl, drop_db(7, Done));
    assert!(actions_any(&o).is_empty());
    assert!(h.m.pipe.barrier.events.is_empty());
    assert_eq!(h.m.pipe.sc.tasks.len(), 4, "the trigger and X, Y, Z");
}

// ---------------------------------------------------------------- dispatcher side

fn drop_database_ddl(schema: SchemaId, ts: Ts) -> DdlEvent {
    DdlEvent {
        commit_ts: ts,
        kind: DdlKind::DropDatabase,
        schema_id: schema,
        schema_name: format!("db{}", schema),
        table_id: 0,
        table_name: String::new(),
        query: format!("DROP DATABASE db{}", schema),
        blocked_tables: db(schema),
        need_dropped_tables: Some(db(schema)),
        need_added_tables: vec![],
        updated_schemas: vec![],
    }
}

fn create_database_ddl(schema: SchemaId, ts: Ts) -> DdlEvent {
    DdlEvent {
        commit_ts: ts,
        kind: DdlKind::CreateDatabase,
        schema_id: schema,
        schema_name: format!("db{}", schema),
        table_id: 0,
        table_name: String::new(),
        query: format!("CREATE DATABASE db{}", schema),
        blocked_tables: normal(&[DDL_SPAN_TABLE_ID]),
        need_dropped_tables: None,
        need_added_tables: vec![],
        updated_schemas: vec![],
    }
}

/// The trigger on node 0; on node 1 X (table 10, schema 1) and W (table 12, schema 2).
fn managers() -> (DispatcherManager, DispatcherManager, Env) {
    const W: DispatcherId = DispatcherId(1003);
    let (mut dm0, env) = owned(0, Some(TRIG), Env::new(0));
    let (mut dm1, mut env) = owned(1, None, env);
    dm_handle(&mut dm1, &mut env, 0, sched(create_req(X, TableSpan::full(10), START, OperatorType::Add, EPOCH)));
    let mut w = create_req(W, TableSpan::full(12), START, OperatorType::Add, EPOCH);
    w.config.schema_id = OTHER;
    dm_handle(&mut dm1, &mut env, 0, sched(w));
    env.node = NodeId(0);
    dm0.dispatchers.get_mut(&TRIG).unwrap().registered = true;
    (dm0, dm1, env)
}

fn pass_db(schema: SchemaId) -> Message {
    let st = DispatcherStatus {
        influenced: InfluencedDispatchers::Db(schema),
        action: Some(DispatcherAction { action: ActionKind::Pass, commit_ts: TS, is_sync_point: false }),
        ack: None,
        ignored_block_status: None,
    };
    Message::HeartBeatResponse { mode: Mode::Default, cf: cf(), statuses: vec![st], maintainer_epoch: EPOCH }
}

#[test]
fn a_table_dispatcher_flushes_then_waits_on_drop_database_and_a_db_pass_reaches_only_its_schema() {
    let (_, mut dm1, mut env) = managers();
    env.node = NodeId(1);
    let o = dm_feed(
        &mut dm1,
        &mut env,
        X,
        vec![UpstreamEvent::Dml(row(10, 1, TS - 5)), UpstreamEvent::Ddl(drop_database_ddl(SCHEMA, TS))],
        TS + 3,
    );
    assert!(block_reports(&o).is_empty(), "not WAITING before the row is durable");
    let put = first_put(&o).expect("a forced flush");
    dm1.on_storage_result(&mut env.ctx(), put, Ok(()));
    dm1.on_storage_result(&mut env.ctx(), put, Ok(()));
    dm1.process(&mut env.ctx());
    let o = env.take();
    let r = block_reports(&o);
    assert_eq!(r.len(), 1);
    assert_eq!(
        (r[0].0, r[0].1.stage, r[0].1.block_tables.clone(), r[0].1.need_dropped_tables.clone()),
        (X, Waiting, Some(db(SCHEMA)), Some(db(SCHEMA)))
    );
    // A Pass for schema 1 goes to X (and not to W of schema 2, which is not waiting).
    let (_, o) = dm_handle(&mut dm1, &mut env, 0, pass_db(SCHEMA));
    let r = block_reports(&o);
    assert_eq!(r.iter().map(|(id, b)| (*id, b.stage)).collect::<Vec<_>>(), vec![(X, Done)]);
    let (_, o) = dm_handle(&mut dm1, &mut env, 0, pass_db(OTHER));
    assert!(block_reports(&o).iter().all(|(id, _)| *id != X), "X is not of schema 2");
}

/// A dispatcher blocked on a DDL reads no more of its queue, while the event service
/// keeps advancing its resolved ts every poll: the queue must not grow with the time it
/// stays blocked (a swarm run blocked for 120 s held 10 MB of resolved events).
#[test]
fn a_blocked_dispatcher_queue_does_not_grow_with_resolved_ts_polls() {
    let (_, mut dm1, mut env) = managers();
    env.node = NodeId(1);
    dm_feed(&mut dm1, &mut env, X, vec![UpstreamEvent::Ddl(drop_database_ddl(SCHEMA, TS))], TS + 1);
    assert!(dm1.dispatchers[&X].block.is_some(), "X waits on the DROP DATABASE");
    for i in 0..10_000 {
        dm_feed(&mut dm1, &mut env, X, vec![], TS + 2 + i);
    }
    let q: Vec<_> = dm1.dispatchers[&X].queue.iter().cloned().collect();
    assert_eq!(q.len(), 2, "the waiting DDL and only the newest resolved ts: {q:?}");
    assert!(matches!(q[0], UpstreamEvent::Ddl(_)));
    assert!(matches!(q[1], UpstreamEvent::Resolved(ts) if ts == TS + 1 + 10_000));
    // A row after the block stays queued behind it, in order.
    dm_feed(&mut dm1, &mut env, X, vec![UpstreamEvent::Dml(row(10, 1, TS + 20_000))], TS + 20_001);
    let q: Vec<_> = dm1.dispatchers[&X].queue.iter().cloned().collect();
    assert_eq!(q.len(), 4, "DDL, resolved, row, resolved: {q:?}");
}

#[test]
fn the_trigger_writes_create_database_at_once_without_reporting_it() {
    let (mut dm0, _, mut env) = managers();
    let o = dm_feed(&mut dm0, &mut env, TRIG, vec![UpstreamEvent::Ddl(create_database_ddl(9, TS))], TS + 1);
    let put = o
        .storage
        .iter()
        .find_map(|r| match r {
            StorageRequest::Put { op_id, path, content: ObjectContent::Ddl(d) } => Some((*op_id, path.clone(), d.kind)),
            _ => None,
        })
        .expect("written at once");
    assert!(put.1.starts_with("db9/meta/schema_"), "a database-level schema file: {}", put.1);
    assert_eq!(put.2, DdlKind::CreateDatabase);
    dm0.on_storage_result(&mut env.ctx(), put.0, Ok(()));
    dm0.on_storage_result(&mut env.ctx(), put.0, Ok(()));
    dm0.process(&mut env.ctx());
    let o = env.take();
    assert!(block_reports(&o).is_empty(), "nothing to schedule, nothing to report");
    assert!(dm0.dispatchers[&TRIG].pending_acks.is_empty());
    assert_eq!(dm0.dispatchers[&TRIG].checkpoint_ts(), TS + 1);
}

#[test]
fn the_trigger_holds_a_drop_database_while_a_create_table_is_unacknowledged() {
    let (mut dm0, _, mut env) = managers();
    let o = dm_feed(
        &mut dm0,
        &mut env,
        TRIG,
        vec![UpstreamEvent::Ddl(create_table_ddl(13, TS - 3)), UpstreamEvent::Ddl(drop_database_ddl(SCHEMA, TS))],
        TS + 1,
    );
    let put = first_put(&o).unwrap();
    dm0.on_storage_result(&mut env.ctx(), put, Ok(()));
    dm0.on_storage_result(&mut env.ctx(), put, Ok(()));
    dm0.process(&mut env.ctx());
    let o = env.take();
    assert_eq!(
        block_reports(&o).iter().map(|(_, b)| b.stage).collect::<Vec<_>>(),
        vec![BlockStage::None],
        "the CREATE's report only"
    );
    assert!(dm0.dispatchers[&TRIG].block.is_none(), "DROP DATABASE held");
    let ack = Message::HeartBeatResponse {
        mode: Mode::Default,
        cf: cf(),
        statuses: vec![DispatcherStatus {
            influenced: InfluencedDispatchers::Normal(vec![TRIG]),
            action: None,
            ack: Some(AckEvent { commit_ts: TS - 3, is_sync_point: false }),
            ignored_block_status: None,
        }],
        maintainer_epoch: EPOCH,
    };
    dm_handle(&mut dm0, &mut env, 0, ack);
    dm0.process(&mut env.ctx());
    let r = block_reports(&env.take());
    assert_eq!(r.iter().map(|(id, b)| (*id, b.block_ts, b.stage)).collect::<Vec<_>>(), vec![(TRIG, TS, Waiting)]);
}
