//! `maintainer/maintainer_controller_test.go` at b813e76f9: the maintainer's controller
//! (schedulers driven directly, `FinishBootstrap`, `findHoles`).

use super::support::*;
use crate::bugs::Bug;
use crate::maintainer::span_controller::ReplicaState;
use crate::maintainer::split_balance::CheckerTuning;
use crate::messages::*;
use crate::types::*;
use crate::upstream::SchemaView;
use ComponentState::*;

const DROPPED: DispatcherId = DispatcherId(4001);

// maintainer_controller_test.go:63 — the basic scheduler admits at most the batch size (9)
// of 10 absent tables and spreads them evenly over 3 nodes.
#[test]
fn ticdc_maintainer_controller_TestSchedule() {
    let mut h = controller(&[NODE1, NODE2, NODE3], |c| c.add_table_batch_size = 9);
    for t in 1..=10 {
        add_new_table(&mut h, t, 1);
    }
    basic(&mut h);
    assert_eq!(op_size(&h), 9);
    assert_eq!(absent_size(&h), 1);
    assert_eq!(node_size(&h, NODE1), 3);
    assert_eq!(node_size(&h, NODE2), 3);
    assert_eq!(node_size(&h, NODE3), 3);
}

// maintainer_controller_test.go:99 — the controller and its operator controller carry the
// maintainer epoch given at creation (the redo controller is not modelled).
#[test]
fn ticdc_maintainer_controller_TestNewControllerInitializesMaintainerEpoch() {
    let mut env = Env::new(0);
    let m = crate::maintainer::Maintainer::new(
        &mut env.ctx(),
        cf(),
        crate::config::ChangefeedConfig::default(),
        START,
        42,
        false,
        nodes(&[0]),
    );
    assert_eq!(m.epoch, 42);
    let out = env.take();
    let epochs: Vec<Epoch> = out
        .msgs
        .iter()
        .filter_map(|e| match &e.msg {
            Message::MaintainerBootstrapRequest { maintainer_epoch, .. } => Some(*maintainer_epoch),
            _ => None,
        })
        .collect();
    assert_eq!(epochs, vec![42]);
    // The operator side: a request an operator sends carries the epoch.
    let mut m = m;
    let schema = TestSchema::with_tables(&[1]);
    let trigger = m.pipe.sc.ddl_span_id;
    let resp = Message::MaintainerBootstrapResponse {
        redo_checkpoint_ts: 0,
        cf: cf(),
        spans: vec![bspan(trigger, TableSpan::ddl_span(), Working, START)],
        checkpoint_ts: START,
        operators: vec![],
        merge_operators: vec![],
        err: None,
        maintainer_epoch: 42,
    };
    m.handle_message(&mut env.ctx(), n(0), resp, &schema);
    assert!(m.initialized());
    m.run_basic_scheduler(&mut env.ctx());
    env.take();
    m.execute_operators(&mut env.ctx());
    let reqs = schedule_reqs(&env.take());
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].1.maintainer_epoch, 42);

    // The redo operator controller gets the epoch too (`:177-186`).
    let mut config = crate::config::ChangefeedConfig::default();
    config.consistent.level = crate::config::ConsistentLevel::Eventual;
    let mut m = crate::maintainer::Maintainer::new(&mut env.ctx(), cf(), config, START, 42, false, nodes(&[0]));
    env.take();
    let (trigger, redo_trigger) = (m.pipe.sc.ddl_span_id, m.redo_pipe.as_ref().unwrap().sc.ddl_span_id);
    let resp = Message::MaintainerBootstrapResponse {
        redo_checkpoint_ts: START,
        cf: cf(),
        spans: vec![
            bspan(trigger, TableSpan::ddl_span(), Working, START),
            BootstrapTableSpan { mode: Mode::Redo, ..bspan(redo_trigger, TableSpan::ddl_span(), Working, START) },
        ],
        checkpoint_ts: START,
        operators: vec![],
        merge_operators: vec![],
        err: None,
        maintainer_epoch: 42,
    };
    m.handle_message(&mut env.ctx(), n(0), resp, &schema);
    assert!(m.initialized());
    m.run_redo_basic_scheduler(&mut env.ctx());
    env.take();
    m.execute_redo_operators(&mut env.ctx());
    let reqs = schedule_reqs(&env.take());
    assert_eq!(reqs.iter().map(|(_, r)| (r.config.mode, r.maintainer_epoch)).collect::<Vec<_>>(), [(Mode::Redo, 42)]);
}

// maintainer_controller_test.go:1110 — a new node makes the balance scheduler move half of
// 100 tables; the destination leaving makes each move remove the origin and mark the span
// absent; the basic scheduler then places them back on the remaining node.
#[test]
fn ticdc_maintainer_controller_TestBalance() {
    let mut h = controller(&[NODE1], |_| {});
    for t in 0..100 {
        add_replicating(&mut h, DispatcherId(10_000 + t), TableSpan::full(t as TableId + 1), NODE1);
    }
    balance(&mut h);
    assert_eq!(op_size(&h), 0);
    assert_eq!(replicating_size(&h), 100);
    assert_eq!(node_size(&h, NODE1), 100);
    // add a new node
    h.m.alive = nodes(&[NODE1, NODE2]);
    balance(&mut h);
    assert_eq!(op_size(&h), 50);
    assert_eq!(scheduling_size(&h), 50);
    assert_eq!(replicating_size(&h), 50);
    assert!(op_kinds(&h).iter().all(|k| *k == "move"));
    assert_eq!(node_size(&h, NODE1), 100, "still on the primary node");
    assert_eq!(node_size(&h, NODE2), 0);
    // the new node leaves
    h.m.alive = nodes(&[NODE1]);
    h.m.pipe.oc.on_node_removed(n(NODE2), &mut h.m.pipe.sc);
    let out = h.execute();
    let reqs = schedule_reqs(&out);
    assert_eq!(reqs.len(), 50);
    assert!(reqs.iter().all(|(to, r)| *to == n(NODE1) && r.action == ScheduleAction::Remove));
    for (_, r) in reqs {
        status(&mut h, NODE1, r.config.dispatcher_id, Stopped, 1);
    }
    h.execute();
    assert_eq!(op_size(&h), 0);
    basic(&mut h);
    let out = h.execute();
    let reqs = schedule_reqs(&out);
    assert_eq!(reqs.len(), 50);
    assert!(reqs.iter().all(|(to, r)| *to == n(NODE1) && r.action == ScheduleAction::Create));
    for (_, r) in reqs {
        status(&mut h, NODE1, r.config.dispatcher_id, Working, 1);
    }
    h.execute();
    assert_eq!(scheduling_size(&h), 0);
    assert_eq!(replicating_size(&h), 100);
    assert_eq!(node_size(&h, NODE1), 100);
}

// maintainer_controller_test.go:1359 — a move whose origin stopped finishes; losing both
// nodes then leaves every span absent and no task on any node.
#[test]
fn ticdc_maintainer_controller_TestStoppedWhenMoving() {
    let mut h = controller(&[NODE1], |_| {});
    for t in 0..2 {
        add_replicating(&mut h, DispatcherId(10_000 + t), TableSpan::full(t as TableId + 1), NODE1);
    }
    assert_eq!(replicating_size(&h), 2);
    assert_eq!(node_size(&h, NODE1), 2);
    h.m.alive = nodes(&[NODE1, NODE2]);
    assert_eq!(absent_size(&h), 0);
    balance(&mut h);
    assert_eq!(op_size(&h), 1);
    assert_eq!(scheduling_size(&h), 1);
    assert_eq!(replicating_size(&h), 1);
    assert_eq!(node_size(&h, NODE1), 2);
    assert_eq!(node_size(&h, NODE2), 0);
    let id = h.m.pipe.oc.running().next().unwrap().id();
    status(&mut h, NODE1, id, Stopped, 1);
    h.execute();
    h.m.pipe.oc.on_node_removed(n(NODE2), &mut h.m.pipe.sc);
    h.m.pipe.oc.on_node_removed(n(NODE1), &mut h.m.pipe.sc);
    assert_eq!(scheduling_size(&h), 0);
    assert_eq!(absent_size(&h), 2, "changed to absent");
    assert_eq!(node_size(&h, NODE1), 0);
    assert_eq!(node_size(&h, NODE2), 0);
}

// maintainer_controller_test.go:1203 — a whole-table span whose traffic stays over the
// write threshold three times is split by the balance scheduler (by write bytes, into
// max(2*ceil(1200/1000), 2*nodes) = 4 pieces); the basic scheduler places the pieces 2 + 2.
#[test]
fn ticdc_maintainer_controller_TestDefaultSpanIntoSplit() {
    let mut h = controller(&[NODE1, NODE2], |c| {
        c.enable_table_across_nodes = true;
        c.write_key_threshold = 1000;
        c.region_threshold = 8;
        c.region_count_refresh_interval_ms = 60_000;
        c.scheduling_task_count_per_node = 10;
    });
    let id = DispatcherId(10_001);
    add_replicating(&mut h, id, TableSpan::full(1), NODE1);
    balance(&mut h);
    basic(&mut h);
    assert_eq!(op_size(&h), 0);
    assert_eq!(replicating_size(&h), 1);
    assert_eq!(node_size(&h, NODE1), 1);
    assert_eq!(node_size(&h, NODE2), 0);
    // The table's 9 regions (1 written byte each) appear only now, as in Go.
    h.schema.regions.insert(1, 9);
    for _ in 0..3 {
        h.handle(
            NODE1,
            Message::HeartBeatRequest {
                redo_watermark: None,
                cf: cf(),
                watermark: Watermark { checkpoint_ts: 2, resolved_ts: 2, seq: 1 },
                statuses: vec![TableSpanStatus {
                    mode: Mode::Default,
                    id,
                    state: Working,
                    checkpoint_ts: 2,
                    event_size_per_second: 1200,
                }],
                complete_status: true,
                err: None,
            },
        );
    }
    balance(&mut h);
    assert_eq!(op_size(&h), 1);
    assert_eq!(op_kind(&h, id), Some("split"));
    let out = h.execute();
    for (to, r) in schedule_reqs(&out) {
        status(&mut h, to.0, r.config.dispatcher_id, Stopped, 2);
    }
    h.execute();
    assert_eq!(replicating_size(&h), 0);
    assert_eq!(absent_size(&h), 4);
    basic(&mut h);
    assert_eq!(op_size(&h), 4);
    assert!(op_kinds(&h).iter().all(|k| *k == "add"));
    finish_adds(&mut h);
    assert_eq!(replicating_size(&h), 4);
    assert_eq!(absent_size(&h), 0);
    assert_eq!(node_size(&h, NODE1), 2);
    assert_eq!(node_size(&h, NODE2), 2);
}

// maintainer_controller_test.go:1410 — FinishBootstrap adopts the reported Working span,
// builds the post-bootstrap schema list, and a second FinishBootstrap is a no-op.
#[test]
fn ticdc_maintainer_controller_TestFinishBootstrap() {
    let mut h = MH::new(&[NODE1], TestSchema::with_tables(&[1]));
    let d2 = DispatcherId(5002);
    assert!(!h.m.initialized());
    let out = h.bootstrap(vec![(NODE1, NodeReport::spans(vec![bspan(d2, TableSpan::full(1), Working, 10)]))]);
    assert!(h.m.initialized());
    let schemas: Vec<SchemaInfo> = out
        .msgs
        .iter()
        .filter_map(|e| match &e.msg {
            Message::MaintainerPostBootstrapRequest { schemas, .. } => Some(schemas.clone()),
            _ => None,
        })
        .next()
        .expect("post-bootstrap request");
    assert_eq!(
        schemas,
        vec![SchemaInfo { schema_id: SCHEMA, schema_name: "db1".into(), tables: vec![(1, "t1".into())] }]
    );
    assert_eq!(node_size(&h, NODE1), 1);
    assert_eq!(replicating_size(&h), 1);
    assert_eq!(scheduling_size(&h), 0);
    assert!(h.m.pipe.sc.get(&d2).is_some());
    // A late (second) bootstrap response yields no second post-bootstrap request.
    let out = h.respond(NODE1, NodeReport::default());
    assert!(!out.msgs.iter().any(|e| matches!(e.msg, Message::MaintainerPostBootstrapRequest { .. })));
}

// maintainer_controller_test.go:1482 — responses without any trigger checkpoint fail the
// bootstrap with ErrChangefeedInitTableTriggerDispatcherFailed; not bootstrapped.
#[test]
fn ticdc_maintainer_controller_TestFinishBootstrapReturnsErrorWhenCheckpointMissing() {
    let mut h = MH::new(&[NODE1], TestSchema::with_tables(&[1]));
    let out = h.handle(NODE1, bootstrap_resp(vec![], 0, vec![], vec![]));
    assert!(!out.msgs.iter().any(|e| matches!(e.msg, Message::MaintainerPostBootstrapRequest { .. })));
    assert_eq!(h.m.errors.len(), 1);
    assert_eq!(h.m.errors[0].code, ErrorCode::InitTableTriggerDispatcherFailed);
    assert!(!h.m.initialized());
}

/// maintainer_controller_test.go:1518 `TestFinishBootstrapSkipsStaleCreateOperatorForDroppedTable`.
/// With a reported span, TiCDC at b813e76f9 ignores a Working dispatcher of a table missing
/// from the snapshot: that is the core's historical bug switch `ignore-unknown-working-table`
/// (the default adopts or cleans such dispatchers up), so the case runs with it on.
fn stale_create_for_dropped_table(op_type: OperatorType, include_reported_span: bool) {
    let env = if include_reported_span { Env::new(0).with_bug(Bug::IgnoreUnknownWorkingTable) } else { Env::new(0) };
    let mut h = MH::with_env(env, &[NODE1], TestSchema::default());
    let span = TableSpan::full(2);
    let mut r = NodeReport { operators: vec![create_req(DROPPED, span, 10, op_type, EPOCH)], ..Default::default() };
    if include_reported_span {
        r.spans = vec![bspan(DROPPED, span, Working, 10)];
    }
    h.bootstrap(vec![(NODE1, r)]);
    assert!(h.m.initialized());
    assert!(h.m.pipe.sc.get(&DROPPED).is_none());
    assert!(h.op(DROPPED).is_none());
    assert_eq!(op_size(&h), 0);
    assert_eq!(absent_size(&h), 0);
    assert!(h.table_tasks(2).is_empty());
}

// maintainer_controller_test.go:1546 (sub-case of :1518) — a stale Add create for a table
// gone from the snapshot restores neither task nor operator.
#[test]
fn ticdc_maintainer_controller_TestFinishBootstrapSkipsStaleCreateOperatorForDroppedTable_stale_add_create() {
    stale_create_for_dropped_table(OperatorType::Add, false);
}

// maintainer_controller_test.go:1546 (sub-case of :1518) — same for a move's create phase.
#[test]
fn ticdc_maintainer_controller_TestFinishBootstrapSkipsStaleCreateOperatorForDroppedTable_stale_move_create_phase() {
    stale_create_for_dropped_table(OperatorType::Move, false);
}

// maintainer_controller_test.go:1546 (sub-case of :1518) — same for a split's create phase.
#[test]
fn ticdc_maintainer_controller_TestFinishBootstrapSkipsStaleCreateOperatorForDroppedTable_stale_split_create_phase() {
    stale_create_for_dropped_table(OperatorType::Split, false);
}

// maintainer_controller_test.go:1546 (sub-case of :1518) — same when the node also reports
// the dispatcher as a Working span.
#[test]
fn ticdc_maintainer_controller_TestFinishBootstrapSkipsStaleCreateOperatorForDroppedTable_stale_add_create_with_reported_runtime_span(
) {
    stale_create_for_dropped_table(OperatorType::Add, true);
}

// maintainer_controller_test.go:1622 — a restored standalone Remove keeps its span as
// coverage; once it stopped, finalizing the operator drops the task and adds exactly the
// removed range as an absent span, which the basic scheduler places.
#[test]
fn ticdc_maintainer_controller_TestFinishBootstrapRepairsCoverageAfterRestoredStandaloneRemove() {
    let env = MergeEnv::new();
    let mut h = env.mh(TestSchema::with_tables(&[1]));
    env.boot(
        &mut h,
        vec![],
        vec![env.span(SRC1, env.s1, Working), env.span(SRC2, env.s2, Working)],
        vec![env.standalone_remove(SRC1, env.s1)],
    );
    assert_eq!(replicating_size(&h), 2);
    assert_eq!(absent_size(&h), 0);
    assert_eq!(op_kind(&h, SRC1), Some("remove"));
    status(&mut h, NODE1, SRC1, Stopped, 10);
    assert!(h.m.pipe.oc.get(&SRC1).is_some_and(|o| o.is_finished()));
    assert!(h.op(SRC1).is_some(), "finalized by the controller, not by the status");
    assert_eq!(absent_size(&h), 0);
    h.execute();
    assert!(h.op(SRC1).is_none());
    assert!(h.m.pipe.sc.get(&SRC1).is_none());
    assert!(h.m.pipe.sc.get(&SRC2).is_some());
    assert_eq!(replicating_size(&h), 1);
    assert_eq!(absent_size(&h), 1);
    let repaired = h.table_tasks(1).into_iter().find(|id| *id != SRC2).expect("repaired span");
    assert_eq!(h.m.pipe.sc.get(&repaired).unwrap().span, env.s1);
    basic(&mut h);
    assert_eq!(absent_size(&h), 0);
    assert_eq!(scheduling_size(&h), 1);
    assert_eq!(op_kind(&h, repaired), Some("add"));
}

// maintainer_controller_test.go:1687 — the same restored Remove of a table gone from the
// snapshot has no task, and its finalization creates none.
#[test]
fn ticdc_maintainer_controller_TestFinishBootstrapDoesNotRepairDroppedTableAfterRestoredStandaloneRemove() {
    let env = MergeEnv::new();
    let mut h = env.mh(TestSchema::default());
    env.boot(&mut h, vec![], vec![env.span(SRC1, env.s1, Working)], vec![env.standalone_remove(SRC1, env.s1)]);
    assert!(h.m.pipe.sc.get(&SRC1).is_none());
    assert_eq!(replicating_size(&h), 0);
    assert_eq!(absent_size(&h), 0);
    assert!(h.op(SRC1).is_some());
    status(&mut h, NODE1, SRC1, Removed, 10);
    assert!(h.m.pipe.oc.get(&SRC1).is_some_and(|o| o.is_finished()));
    h.execute();
    assert!(h.op(SRC1).is_none());
    assert!(h.table_tasks(1).is_empty());
    assert_eq!(replicating_size(&h), 0);
    assert_eq!(scheduling_size(&h), 0);
    assert_eq!(absent_size(&h), 0);
}

// maintainer_controller_test.go:1733 — an in-flight merge (two WaitingMerge sources, a
// Preparing target, the journal) restores the merge: three Scheduling tasks, no absent one.
#[test]
fn ticdc_maintainer_controller_TestFinishBootstrapRestoresInFlightMergeWithoutDuplicateCoverage() {
    let env = MergeEnv::new();
    let mut h = env.mh(TestSchema::with_tables(&[1]));
    env.boot(
        &mut h,
        vec![env.merge_req()],
        vec![
            env.span(SRC1, env.s1, WaitingMerge),
            env.span(SRC2, env.s2, WaitingMerge),
            env.span(MERGED, env.merged, Preparing),
        ],
        vec![],
    );
    assert!(h.m.initialized());
    assert_eq!(absent_size(&h), 0);
    assert_eq!(h.table_tasks(1).len(), 3);
    assert_eq!(scheduling_size(&h), 3);
    assert_eq!(replicating_size(&h), 0);
    for id in [SRC1, SRC2, MERGED] {
        assert!(h.m.pipe.sc.get(&id).is_some());
    }
    assert_eq!(op_kind(&h, MERGED), Some("merge"));
}

// maintainer_controller_test.go:1765 — without a journal, WaitingMerge sources covered by an
// Initializing target are complete coverage: no absent hole, nothing Scheduling.
#[test]
fn ticdc_maintainer_controller_TestFinishBootstrapKeepsOverlapCoveredAfterMergeJournalCleanup() {
    let env = MergeEnv::new();
    let mut h = env.mh(TestSchema::with_tables(&[1]));
    env.boot(
        &mut h,
        vec![],
        vec![
            env.span(SRC1, env.s1, WaitingMerge),
            env.span(SRC2, env.s2, WaitingMerge),
            env.span(MERGED, env.merged, Initializing),
        ],
        vec![],
    );
    assert!(h.m.initialized());
    assert_eq!(absent_size(&h), 0);
    assert!(h.table_tasks(1).len() >= 2);
    assert!(replicating_size(&h) >= 2);
    assert_eq!(scheduling_size(&h), 0);
    assert!(h.m.pipe.sc.get(&MERGED).is_some());
}

// maintainer_controller_test.go:1792 — two partly overlapping Working spans with no
// operator or merge evidence: the later one is kept as coverage under a cleanup Remove
// (nothing scheduled meanwhile); once it stopped, exactly the uncovered tail is added.
#[test]
fn ticdc_maintainer_controller_TestFinishBootstrapRemovesUnexpectedOverlappingWorkingSpan() {
    let env = MergeEnv::new();
    let mut h = env.mh(TestSchema::with_tables(&[1]));
    let full = env.merged;
    let overlap_start = full.start + 10;
    let kept_end = full.start + 20;
    let kept_span = TableSpan { table_id: 1, start: full.start, end: kept_end };
    let rejected_span = TableSpan { table_id: 1, start: overlap_start, end: full.end };
    let (kept, rejected) = (DispatcherId(6001), DispatcherId(6002));
    env.boot(
        &mut h,
        vec![],
        vec![env.span(kept, kept_span, Working), env.span(rejected, rejected_span, Working)],
        vec![],
    );
    assert!(h.m.initialized());
    assert!(h.m.pipe.sc.get(&kept).is_some());
    assert!(h.m.pipe.sc.get(&rejected).is_some());
    assert_eq!(replicating_size(&h), 2);
    assert_eq!(absent_size(&h), 0);
    assert_eq!(op_kind(&h, rejected), Some("remove"));
    basic(&mut h);
    assert_eq!(absent_size(&h), 0);
    status(&mut h, NODE1, rejected, Stopped, 10);
    assert!(h.m.pipe.oc.get(&rejected).is_some_and(|o| o.is_finished()));
    h.execute();
    assert!(h.m.pipe.sc.get(&rejected).is_none());
    assert_eq!(replicating_size(&h), 1);
    assert_eq!(absent_size(&h), 1);
    let tail = h.table_tasks(1).into_iter().find(|id| *id != kept).expect("repaired tail");
    let s = h.m.pipe.sc.get(&tail).unwrap().span;
    assert_eq!((s.start, s.end), (kept_end, full.end));
}

/// maintainer_controller_test.go:1860 `TestFinishBootstrapHandlesMissingMergeSource`.
enum Outcome {
    SkipStaleJournal,
    AbortUncommittedTarget,
    ContinueCommittedTarget,
}
fn missing_merge_source(target: Option<ComponentState>, outcome: Outcome) {
    let env = MergeEnv::new();
    let mut h = env.mh(TestSchema::with_tables(&[1]));
    let mut spans = vec![env.span(SRC1, env.s1, WaitingMerge)];
    if let Some(t) = target {
        spans.push(env.span(MERGED, env.merged, t));
    }
    env.boot(&mut h, vec![env.merge_req()], spans, vec![]);
    assert!(h.m.initialized());
    match outcome {
        Outcome::SkipStaleJournal => {
            assert_eq!(op_size(&h), 0);
            assert_eq!(scheduling_size(&h), 0);
            assert_eq!(h.state(SRC1).map(|s| s.0), Some(ReplicaState::Replicating));
            assert!(h.m.pipe.sc.get(&MERGED).is_none());
        }
        Outcome::AbortUncommittedTarget => {
            assert_eq!(absent_size(&h), 0);
            assert!(h.m.pipe.sc.get(&SRC1).is_some());
            assert!(h.m.pipe.sc.get(&MERGED).is_some());
            assert_eq!(op_kind(&h, MERGED), Some("remove"));
            status(&mut h, NODE1, MERGED, Stopped, 10);
            assert!(h.m.pipe.oc.get(&MERGED).is_some_and(|o| o.is_finished()));
            h.execute();
            assert!(h.m.pipe.sc.get(&MERGED).is_none());
            assert!(h.m.pipe.sc.get(&SRC1).is_some());
            assert_eq!(replicating_size(&h), 1);
            assert_eq!(absent_size(&h), 1);
        }
        Outcome::ContinueCommittedTarget => {
            assert_eq!(op_size(&h), 0);
            assert_eq!(absent_size(&h), 0);
            assert_eq!(scheduling_size(&h), 0);
            assert_eq!(replicating_size(&h), 1);
            assert!(h.m.pipe.sc.get(&SRC1).is_none());
            assert!(h.m.pipe.sc.get(&SRC2).is_none());
            assert!(h.m.pipe.sc.get(&MERGED).is_some());
            status(&mut h, NODE1, MERGED, Working, 20);
            assert_eq!(h.m.pipe.sc.get(&MERGED).and_then(|r| r.last_state), Some(Working));
            assert_eq!(scheduling_size(&h), 0);
            assert_eq!(replicating_size(&h), 1);
        }
    }
}

// maintainer_controller_test.go:1898 (sub-case of :1860) — no target reported: the stale
// journal is skipped and the surviving source stays Replicating.
#[test]
fn ticdc_maintainer_controller_TestFinishBootstrapHandlesMissingMergeSource_target_absent() {
    missing_merge_source(None, Outcome::SkipStaleJournal);
}

// maintainer_controller_test.go:1898 (sub-case of :1860) — a Preparing target is aborted
// under a cleanup Remove, then the missing range becomes absent.
#[test]
fn ticdc_maintainer_controller_TestFinishBootstrapHandlesMissingMergeSource_preparing() {
    missing_merge_source(Some(Preparing), Outcome::AbortUncommittedTarget);
}

// maintainer_controller_test.go:1898 (sub-case of :1860) — same for a MergeReady target.
#[test]
fn ticdc_maintainer_controller_TestFinishBootstrapHandlesMissingMergeSource_merge_ready() {
    missing_merge_source(Some(MergeReady), Outcome::AbortUncommittedTarget);
}

// maintainer_controller_test.go:1898 (sub-case of :1860) — an Initializing target passed the
// commit point: it is kept, the source dropped, and its later Working status just updates it.
#[test]
fn ticdc_maintainer_controller_TestFinishBootstrapHandlesMissingMergeSource_initializing() {
    missing_merge_source(Some(Initializing), Outcome::ContinueCommittedTarget);
}

// maintainer_controller_test.go:1979 — a journal whose sources leave a gap is no proof: the
// uncommitted target gets a cleanup Remove and, once removed, only the gap becomes absent.
#[test]
fn ticdc_maintainer_controller_TestFinishBootstrapRejectsInvalidMergeJournalGeometry() {
    let env = MergeEnv::new();
    let mut h = env.mh(TestSchema::with_tables(&[1]));
    let s2 = TableSpan { start: env.s2.start + 10, ..env.s2 };
    env.boot(
        &mut h,
        vec![env.merge_req()],
        vec![
            env.span(SRC1, env.s1, WaitingMerge),
            env.span(SRC2, s2, WaitingMerge),
            env.span(MERGED, env.merged, Preparing),
        ],
        vec![],
    );
    assert_eq!(absent_size(&h), 0);
    assert_eq!(op_kind(&h, MERGED), Some("remove"));
    status(&mut h, NODE1, MERGED, Removed, 10);
    assert!(h.m.pipe.oc.get(&MERGED).is_some_and(|o| o.is_finished()));
    h.execute();
    assert!(h.m.pipe.sc.get(&MERGED).is_none());
    assert!(h.m.pipe.sc.get(&SRC1).is_some());
    assert!(h.m.pipe.sc.get(&SRC2).is_some());
    assert_eq!(replicating_size(&h), 2);
    assert_eq!(absent_size(&h), 1);
}

// maintainer_controller_test.go:2163 — a merge journal of a table gone from the snapshot
// restores no task and no operator.
#[test]
fn ticdc_maintainer_controller_TestFinishBootstrapSkipsMergeOperatorForDroppedTable() {
    // TiCDC's handling of the leftover working sources is the core's bug switch
    // `ignore-unknown-working-table` (see `stale_create_for_dropped_table`).
    let env = MergeEnv::new();
    let mut h = env.mh_with(Env::new(0).with_bug(Bug::IgnoreUnknownWorkingTable), TestSchema::default());
    env.boot(
        &mut h,
        vec![env.merge_req()],
        vec![
            env.span(SRC1, env.s1, WaitingMerge),
            env.span(SRC2, env.s2, WaitingMerge),
            env.span(MERGED, env.merged, Preparing),
        ],
        vec![],
    );
    assert!(h.m.initialized());
    assert_eq!(op_size(&h), 0);
    assert_eq!(absent_size(&h), 0);
    assert_eq!(scheduling_size(&h), 0);
    for id in [SRC1, SRC2, MERGED] {
        assert!(h.m.pipe.sc.get(&id).is_none());
    }
    assert!(h.table_tasks(1).is_empty());
}

/// maintainer_controller_test.go:2191 `TestFinishBootstrapSkipsMergeJournalConflictingWithWorkingOperator`.
fn merge_journal_conflicting(action: ScheduleAction, op_type: OperatorType, include_source: bool, expected: &str) {
    let env = MergeEnv::new();
    let mut h = env.mh(TestSchema::with_tables(&[1]));
    let mut spans = vec![env.span(SRC2, env.s2, WaitingMerge), env.span(MERGED, env.merged, Preparing)];
    if include_source {
        spans.push(env.span(SRC1, env.s1, WaitingMerge));
    }
    let req = match action {
        ScheduleAction::Create => create_req(SRC1, env.s1, 10, op_type, EPOCH),
        ScheduleAction::Remove => remove_req(SRC1, env.s1, op_type, EPOCH),
    };
    env.boot(&mut h, vec![env.merge_req()], spans, vec![req]);
    assert!(h.m.initialized());
    assert_eq!(op_kind(&h, SRC1), Some(expected));
    assert_eq!(op_kind(&h, MERGED), Some("remove"));
    assert_eq!(op_size(&h), 2);
    assert_eq!(absent_size(&h), 0);
}

// maintainer_controller_test.go:2218 (sub-case of :2191) — a restored Remove of a source
// wins over the stale journal; the Preparing target gets a cleanup Remove.
#[test]
fn ticdc_maintainer_controller_TestFinishBootstrapSkipsMergeJournalConflictingWithWorkingOperator_remove_source() {
    merge_journal_conflicting(ScheduleAction::Remove, OperatorType::Remove, true, "remove");
}

// maintainer_controller_test.go:2218 (sub-case of :2191) — same with a restored Create.
#[test]
fn ticdc_maintainer_controller_TestFinishBootstrapSkipsMergeJournalConflictingWithWorkingOperator_create_source() {
    merge_journal_conflicting(ScheduleAction::Create, OperatorType::Add, false, "add");
}

// maintainer_controller_test.go:2268 — terminal statuses of sources covered by a committed
// merged span (journal gone) remove those sources instead of marking them absent.
#[test]
fn ticdc_maintainer_controller_TestHandleStatusDropsTerminalSourcesCoveredByMergedSpanAfterJournalCleanup() {
    let env = MergeEnv::new();
    let mut h = env.mh(TestSchema::with_tables(&[1]));
    env.boot(
        &mut h,
        vec![],
        vec![
            env.span(SRC1, env.s1, WaitingMerge),
            env.span(SRC2, env.s2, WaitingMerge),
            env.span(MERGED, env.merged, Initializing),
        ],
        vec![],
    );
    h.handle(NODE1, heartbeat(10, 1, vec![st(SRC1, Stopped, 10), st(SRC2, Removed, 10)]));
    assert_eq!(absent_size(&h), 0);
    assert_eq!(scheduling_size(&h), 0);
    assert_eq!(replicating_size(&h), 1);
    assert!(h.m.pipe.sc.get(&SRC1).is_none());
    assert!(h.m.pipe.sc.get(&SRC2).is_none());
    assert!(h.m.pipe.sc.get(&MERGED).is_some());
    assert_eq!(h.table_tasks(1).len(), 1);
}

// maintainer_controller_test.go:2303 — with table-across-nodes and a region threshold of 1,
// bootstrap fills table 1's two holes around its reported spans and splits the new
// table 2 (2 regions) into two: 4 absent, 2 replicating.
#[test]
fn ticdc_maintainer_controller_TestSplitTableWhenBootstrapFinished() {
    let mut schema = TestSchema::default();
    let mut t1 = table_info(1, 1);
    t1.splitable = false;
    schema.tables.push((t1, 1, None));
    schema.tables.push((table_info(2, 2), 1, None));
    schema.regions.insert(2, 2);
    let mut h = MH::new(&[NODE1, NODE2], schema);
    h.m.config.scheduler.enable_table_across_nodes = true;
    h.m.config.scheduler.region_threshold = 1;
    h.m.config.scheduler.region_count_per_span = 1;
    h.m.pipe.sc.cfg = h.m.config.scheduler.clone();
    let full = TableSpan::full(1);
    let a = full.start + 10;
    let b = full.start + 20;
    let c = full.start + 30;
    let span1 = TableSpan { table_id: 1, start: a, end: b };
    let span2 = TableSpan { table_id: 1, start: b, end: c };
    h.bootstrap(vec![(
        NODE1,
        NodeReport::spans(vec![
            bspan(DispatcherId(7001), span1, Working, 10),
            bspan(DispatcherId(7002), span2, Working, 10),
        ]),
    )]);
    assert_eq!(absent_size(&h), 4);
    assert_eq!(replicating_size(&h), 2);
    assert!(h.m.initialized());
}

// maintainer_controller_test.go:2386 — findHoles over sorted, possibly overlapping spans:
// seven cases (none, middle, two middle, all, start, end missing; overlaps covering all).
#[test]
fn ticdc_maintainer_controller_TestMapFindHole() {
    let t = 1;
    let sp = |s: u64, e: u64| TableSpan { table_id: t, start: s, end: e };
    let end = TableSpan::full(t).end;
    let cases: Vec<(Vec<TableSpan>, Vec<TableSpan>)> = vec![
        (vec![sp(0, 1), sp(1, 2), sp(2, end)], vec![]),
        (vec![sp(0, 1), sp(3, 4), sp(4, end)], vec![sp(1, 3)]),
        (vec![sp(0, 1), sp(2, 3), sp(4, end)], vec![sp(1, 2), sp(3, 4)]),
        (vec![], vec![sp(0, end)]),
        (vec![sp(4, end)], vec![sp(0, 4)]),
        (vec![sp(0, 1)], vec![sp(1, end)]),
        (vec![sp(0, 1), sp(0, end), sp(1, end)], vec![]),
    ];
    assert_eq!(TableSpan::full(t).start, 0);
    for (i, (spans, expected)) in cases.into_iter().enumerate() {
        assert_eq!(find_holes(t, &spans), expected, "case {}", i);
    }
}

// maintainer_controller_test.go:2485 — a table of 100 regions, 10 regions per span, is added
// as 10 absent spans; with 2 scheduling tasks per node on 3 nodes, the basic scheduler
// places 6, then the remaining 4; the balance schedulers do nothing in between.
#[test]
fn ticdc_maintainer_controller_TestLargeTableInitialization() {
    let mut h = controller(&[NODE1, NODE2, NODE3], |c| {
        c.enable_table_across_nodes = true;
        c.write_key_threshold = 500;
        c.region_threshold = 50;
        c.region_count_per_span = 10;
        c.region_count_refresh_interval_ms = 60_000;
        c.scheduling_task_count_per_node = 2;
    });
    h.schema.regions.insert(1, 100);
    add_new_table(&mut h, 1, 1);
    assert_eq!(absent_size(&h), 10);
    balance(&mut h);
    assert_eq!(op_size(&h), 0);
    basic(&mut h);
    assert_eq!(op_size(&h), 6);
    assert_eq!(absent_size(&h), 4);
    assert_eq!(scheduling_size(&h), 6);
    assert!(op_kinds(&h).iter().all(|k| *k == "add"));
    finish_adds(&mut h);
    assert_eq!(replicating_size(&h), 6);
    assert_eq!(node_size(&h, NODE1), 2);
    assert_eq!(node_size(&h, NODE2), 2);
    assert_eq!(node_size(&h, NODE3), 2);
    balance(&mut h);
    assert_eq!(op_size(&h), 0);
    basic(&mut h);
    assert_eq!(op_size(&h), 4);
    assert!(op_kinds(&h).iter().all(|k| *k == "add"));
    finish_adds(&mut h);
    assert_eq!(replicating_size(&h), 10);
    assert_eq!(absent_size(&h), 0);
    assert_eq!(scheduling_size(&h), 0);
    assert!(node_size(&h, NODE1) >= 3);
    assert!(node_size(&h, NODE2) >= 3);
    assert!(node_size(&h, NODE3) >= 3);
}

// ---------------------------------------------------------------- split-table groups

/// A complete-status heartbeat from `from` with one span's traffic sample.
fn traffic(h: &mut MH, from: u32, id: DispatcherId, event_size: u64) {
    h.handle(
        from,
        Message::HeartBeatRequest {
            redo_watermark: None,
            cf: cf(),
            watermark: Watermark { checkpoint_ts: 2, resolved_ts: 2, seq: 1 },
            statuses: vec![TableSpanStatus {
                mode: Mode::Default,
                id,
                state: Working,
                checkpoint_ts: 2,
                event_size_per_second: event_size,
            }],
            complete_status: true,
            err: None,
        },
    );
}

/// `SetEasyThresholdForTest` (`maintainer/replica/split_span_checker.go:1273`), which the
/// Go file's `init` (maintainer_controller_test.go:58) applies to every test, with the
/// `MinTrafficPercentage: 0.8`, `MaxTrafficPercentage: 1.2` of each split-group test's
/// scheduler config.
fn easy_tuning() -> CheckerTuning {
    CheckerTuning {
        min_traffic_balance_threshold: 1.0,
        max_merge_lag_ms: 120_000,
        merge_check_threshold: 1,
        min_traffic_percentage: 0.8,
        max_traffic_percentage: 1.2,
    }
}

fn split_group_controller(alive: &[u32]) -> MH {
    let mut h = controller(alive, |c| {
        c.enable_table_across_nodes = true;
        c.write_key_threshold = 500;
        c.balance_score_threshold = 1;
    });
    h.m.set_split_checker_tuning(easy_tuning());
    h
}

/// `groups` tables of `per` spans each, span j on `place(j)`, with the traffic samples
/// `samples` reported for each; returns the IDs per table.
fn split_groups(
    h: &mut MH,
    groups: u64,
    per: u64,
    place: impl Fn(u64) -> u32,
    samples: &[u64],
) -> Vec<Vec<DispatcherId>> {
    let mut all = Vec::new();
    for t in 0..groups {
        let table = t as TableId + 1;
        let pieces = split_span_evenly(&TableSpan::full(table), per);
        let mut ids = Vec::new();
        for (j, span) in pieces.into_iter().enumerate() {
            let id = DispatcherId(100_000 + t * 10 + j as u64);
            let node = place(j as u64);
            add_replicating(h, id, span, node);
            for s in samples {
                traffic(h, node, id, *s);
            }
            ids.push(id);
        }
        all.push(ids);
    }
    all
}

// maintainer_controller_test.go:144 — 100 split groups of 4 spans on node 1; a new node makes
// the split-group balance scheduler move 2 spans of each group (200 moves); the new node
// leaving turns every move into a removal of the origin and an absent span, which the basic
// scheduler places back on node 1 within a few rounds.
#[test]
fn ticdc_maintainer_controller_TestBalanceGroupsNewNodeAdd_SplitsTableMoreThanNodeNum() {
    let mut h = split_group_controller(&[NODE1]);
    split_groups(&mut h, 100, 4, |_| NODE1, &[1, 1, 300]);
    assert_eq!(op_size(&h), 0);
    assert_eq!(replicating_size(&h), 400);
    assert_eq!(node_size(&h, NODE1), 400);
    h.m.alive = nodes(&[NODE1, NODE2]);
    balance(&mut h);
    assert_eq!(op_size(&h), 200);
    assert_eq!(scheduling_size(&h), 200);
    assert_eq!(replicating_size(&h), 200);
    assert!(op_kinds(&h).iter().all(|k| *k == "move"));
    assert_eq!(node_size(&h, NODE1), 400, "still on the primary node");
    assert_eq!(node_size(&h, NODE2), 0);
    h.m.alive = nodes(&[NODE1]);
    h.m.pipe.oc.on_node_removed(n(NODE2), &mut h.m.pipe.sc);
    let ids: Vec<DispatcherId> = h.m.pipe.oc.running().map(|o| o.id()).collect();
    for id in &ids {
        status(&mut h, NODE1, *id, Stopped, 2);
        assert!(h.op(*id).is_some_and(|o| o.is_finished()), "the move finished");
    }
    h.execute();
    assert!(ids.iter().all(|id| h.op(*id).is_none()), "PostFinish, RemoveOp");
    assert_eq!(absent_size(&h), 200);
    let mut rounds = 0;
    while absent_size(&h) > 0 {
        assert!(rounds < 10);
        rounds += 1;
        let prev = absent_size(&h);
        basic(&mut h);
        let ops: Vec<DispatcherId> = h.m.pipe.oc.running().map(|o| o.id()).collect();
        let out = h.execute();
        let reqs = schedule_reqs(&out);
        assert_eq!(reqs.len(), ops.len(), "every operator schedules a message");
        for (to, r) in reqs {
            assert_eq!((to, r.action), (n(NODE1), ScheduleAction::Create));
            let id = r.config.dispatcher_id;
            status(&mut h, NODE1, id, Working, 2);
            assert!(h.op(id).is_some_and(|o| o.is_finished()), "the add finished");
        }
        h.execute();
        assert!(ops.iter().all(|id| h.op(*id).is_none()), "PostFinish, RemoveOp");
        assert!(absent_size(&h) < prev);
    }
    assert_eq!(scheduling_size(&h), 0);
    assert_eq!(replicating_size(&h), 400);
    assert_eq!(node_size(&h, NODE1), 400);
}

// maintainer_controller_test.go:275 — 100 groups of 2 spans (one per node, 2 regions each);
// a third node makes the scheduler split one span per group (100 Split operators); the
// third node leaving cancels them, the split spans become absent, and the chosen spans came
// from both nodes.
#[test]
fn ticdc_maintainer_controller_TestBalanceGroupsNewNodeAdd_SplitsTableLessThanNodeNum() {
    let mut h = split_group_controller(&[NODE1, NODE2]);
    let groups = split_groups(&mut h, 100, 2, |j| if j % 2 == 0 { NODE1 } else { NODE2 }, &[1, 1, 300]);
    // Two regions per span: the model spreads a table's regions over its key space.
    for t in 1..=groups.len() as TableId {
        h.schema.regions.insert(t, 4);
    }
    assert_eq!(op_size(&h), 0);
    assert_eq!(replicating_size(&h), 200);
    assert_eq!(node_size(&h, NODE1), 100);
    assert_eq!(node_size(&h, NODE2), 100);
    h.m.alive = nodes(&[NODE1, NODE2, NODE3]);
    balance(&mut h);
    assert_eq!(op_size(&h), 100);
    assert_eq!(scheduling_size(&h), 100);
    assert_eq!(replicating_size(&h), 100);
    assert!(op_kinds(&h).iter().all(|k| *k == "split"));
    assert_eq!(node_size(&h, NODE1), 100);
    assert_eq!(node_size(&h, NODE2), 100);
    h.m.alive = nodes(&[NODE1, NODE2]);
    h.m.pipe.oc.on_node_removed(n(NODE3), &mut h.m.pipe.sc);
    let ids: Vec<DispatcherId> = h.m.pipe.oc.running().map(|o| o.id()).collect();
    assert_eq!(ids.len(), 100);
    for id in ids {
        let op = h.m.pipe.oc.get_mut(&id).expect("operator");
        op.on_task_removed(&mut h.m.pipe.sc);
        assert!(op.is_finished());
        h.m.pipe.oc.finalize_operator(&id, &mut h.m.pipe.sc, &mut || DispatcherId(0)).expect("PostFinish");
    }
    assert_eq!(absent_size(&h), 100);
    assert_eq!(scheduling_size(&h), 0);
    assert_eq!(replicating_size(&h), 100);
    assert!(node_size(&h, NODE1) < 100);
    assert!(node_size(&h, NODE2) < 100);
}

// maintainer_controller_test.go:396 — 100 groups of 6 spans over 3 nodes; node 3 leaving
// makes its 200 spans absent; the basic scheduler places them (200 Adds), and after the
// split-group balance (moves only, at most 200) the two nodes hold 300 spans each.
#[test]
fn ticdc_maintainer_controller_TestSplitBalanceGroupsWithNodeRemove() {
    let mut h = split_group_controller(&[NODE1, NODE2, NODE3]);
    let place = |j: u64| [NODE1, NODE2, NODE3][(j % 3) as usize];
    split_groups(&mut h, 100, 6, place, &[300]);
    assert_eq!(op_size(&h), 0);
    assert_eq!(replicating_size(&h), 600);
    for node in [NODE1, NODE2, NODE3] {
        assert_eq!(node_size(&h, node), 200);
    }
    h.m.alive = nodes(&[NODE1, NODE2]);
    h.m.pipe.oc.on_node_removed(n(NODE3), &mut h.m.pipe.sc);
    assert_eq!(absent_size(&h), 200);
    assert_eq!(scheduling_size(&h), 0);
    basic(&mut h);
    assert_eq!(op_size(&h), 200);
    assert_eq!(scheduling_size(&h), 200);
    finish_adds(&mut h);
    assert_eq!(replicating_size(&h), 600);
    balance(&mut h);
    assert!(op_size(&h) <= 200);
    assert!(op_kinds(&h).iter().all(|k| *k == "move"));
    // Start, schedule and finish every move.
    let out = h.execute();
    for (to, r) in schedule_reqs(&out) {
        status(&mut h, to.0, r.config.dispatcher_id, Stopped, 2);
    }
    h.execute();
    let out = h.execute();
    for (to, r) in schedule_reqs(&out) {
        if r.action == ScheduleAction::Create {
            status(&mut h, to.0, r.config.dispatcher_id, Working, 2);
        }
    }
    h.execute();
    assert_eq!(replicating_size(&h), 600);
    assert_eq!(scheduling_size(&h), 0);
    assert_eq!(absent_size(&h), 0);
    assert_eq!(node_size(&h, NODE1), 300);
    assert_eq!(node_size(&h, NODE2), 300);
}

/// `UpdateStatus` of a Working span with a traffic sample and checkpoint `cp`, as a
/// complete-status heartbeat from the span's node.
fn traffic_cp(h: &mut MH, id: DispatcherId, event_size: u64, cp: Ts) {
    let from = h.m.pipe.sc.get(&id).and_then(|r| r.node).expect("bound span").0;
    h.handle(
        from,
        Message::HeartBeatRequest {
            redo_watermark: None,
            cf: cf(),
            watermark: Watermark { checkpoint_ts: cp, resolved_ts: cp, seq: 1 },
            statuses: vec![TableSpanStatus {
                mode: Mode::Default,
                id,
                state: Working,
                checkpoint_ts: cp,
                event_size_per_second: event_size,
            }],
            complete_status: true,
            err: None,
        },
    );
}

/// `op.PostFinish()` + `RemoveOp`; the follow-up operators (a split's Adds) are added to
/// the operator controller as TiCDC's split PostFinish does. Returns their IDs.
fn post_finish_remove(h: &mut MH, id: DispatcherId) -> Vec<DispatcherId> {
    let rng = &mut h.env.rng;
    let mut new_id = || crate::maintainer::new_id_from(rng);
    let follow = h.m.pipe.oc.finalize_operator(&id, &mut h.m.pipe.sc, &mut new_id).expect("operator");
    let mut ids = Vec::new();
    for f in follow {
        ids.push(f.id());
        assert!(h.m.pipe.oc.add_operator(f, &mut h.m.pipe.sc, &h.m.alive, h.env.now).is_ok());
    }
    ids
}

/// The running operators as (kind, ID), in ID order.
fn ops(h: &MH) -> Vec<(&'static str, DispatcherId)> {
    let mut v: Vec<(&'static str, DispatcherId)> = h.m.pipe.oc.running().map(|o| (o.kind(), o.id())).collect();
    v.sort_by_key(|x| x.1);
    v
}

fn of_kind(v: &[(&'static str, DispatcherId)], kind: &str) -> Vec<DispatcherId> {
    v.iter().filter(|x| x.0 == kind).map(|x| x.1).collect()
}

/// The node of the task `id`.
fn node_of(h: &MH, id: DispatcherId) -> NodeId {
    h.m.pipe.sc.get(&id).and_then(|r| r.node).expect("bound task")
}

// maintainer_controller_test.go:496 — one group of 6 spans over 3 nodes (span1 4 regions,
// the others 2); unbalanced traffic makes the split-group checker split span1 (then its
// node-1 half) in two, merge the adjacent node-1 spans, move three spans towards merges,
// merge twice more, and finally stay put. The spans cover the whole table (Go leaves a
// hole before span1's start key 'a'; the model's keys are integers and the hole plays no
// part), and their widths give span1 4 regions and the others 2 (the model spreads a
// table's regions evenly over its key space; PD's WrittenBytes are 1 per region, so the
// write-bytes splitter cuts by regions too).
#[test]
fn ticdc_maintainer_controller_TestSplitTableBalanceWhenTrafficUnbalanced() {
    let mut h = controller(&[NODE1, NODE2, NODE3], |c| {
        c.enable_table_across_nodes = true;
        c.write_key_threshold = 1000;
        c.region_threshold = 20;
        c.region_count_refresh_interval_ms = 60_000;
        c.balance_score_threshold = 1;
    });
    h.m.set_split_checker_tuning(easy_tuning());
    h.env.now = 1_000_000_000;
    let cp = ts_from_ms(h.env.now - 5_000);
    const T: TableId = 1;
    h.schema.regions.insert(T, 14);
    let w = TableSpan::full(T).end / 7;
    let bounds = [0, 2 * w, 3 * w, 4 * w, 5 * w, 6 * w, TableSpan::full(T).end];
    let placement = [NODE2, NODE1, NODE2, NODE3, NODE1, NODE3];
    let span_lists: Vec<DispatcherId> = (0..6).map(|j| DispatcherId(200_000 + j)).collect();
    for j in 0..6 {
        let span = TableSpan { table_id: T, start: bounds[j], end: bounds[j + 1] };
        assert_eq!(h.schema.span_region_count(&span), if j == 0 { 4 } else { 2 });
        add_replicating(&mut h, span_lists[j], span, placement[j]);
        for _ in 0..3 {
            traffic_cp(&mut h, span_lists[j], 200, cp);
        }
    }
    // first keep the system is balanced
    assert_eq!(op_size(&h), 0);
    assert_eq!(replicating_size(&h), 6);
    assert_eq!(node_size(&h, NODE1), 2);
    assert_eq!(node_size(&h, NODE2), 2);
    assert_eq!(node_size(&h, NODE3), 2);

    // increase the traffic of span3 and span4
    // node1 | node2 | node3
    // 200   | 600   | 500
    // 200   | 200   | 200
    let (s3, s4) = (span_lists[2], span_lists[3]);
    for _ in 0..2 {
        traffic_cp(&mut h, s3, 600, cp);
        traffic_cp(&mut h, s4, 500, cp);
    }
    // check the balance result, check no operator here
    balance(&mut h);
    assert_eq!(op_size(&h), 0);

    // update the traffic again, will split the spanReplica1
    traffic_cp(&mut h, s3, 600, cp);
    traffic_cp(&mut h, s4, 500, cp);
    balance(&mut h);
    assert_eq!(op_size(&h), 1);
    assert_eq!(ops(&h), vec![("split", span_lists[0])]);
    let adds = post_finish_remove(&mut h, span_lists[0]);
    // will get 2 new add operator
    assert_eq!(op_size(&h), 2);
    assert_eq!(of_kind(&ops(&h), "add").len(), 2);
    assert_eq!(adds.len(), 2);
    let (s7, s8) = if node_of(&h, adds[0]) == n(NODE1) { (adds[0], adds[1]) } else { (adds[1], adds[0]) };
    for id in adds {
        post_finish_remove(&mut h, id);
    }
    assert_eq!(replicating_size(&h), 7);
    assert_eq!(node_size(&h, NODE1), 3);
    assert_eq!(node_size(&h, NODE2), 2);
    assert_eq!(node_size(&h, NODE3), 2);

    // update traffic for the new span replication
    // node1 | node2 | node3
    // 200   | 600   | 500
    // 200   | 150   | 200
    // 50    |       |
    for _ in 0..3 {
        traffic_cp(&mut h, s7, 50, cp);
        traffic_cp(&mut h, s8, 150, cp);
    }
    // will split spanReplica8
    balance(&mut h);
    assert_eq!(op_size(&h), 1);
    assert_eq!(ops(&h), vec![("split", s8)]);
    let adds = post_finish_remove(&mut h, s8);
    // will get 2 new add operator
    assert_eq!(op_size(&h), 2);
    assert_eq!(of_kind(&ops(&h), "add").len(), 2);
    let (s9, s10) = if node_of(&h, adds[0]) == n(NODE1) { (adds[0], adds[1]) } else { (adds[1], adds[0]) };
    for id in adds {
        post_finish_remove(&mut h, id);
    }
    assert_eq!(replicating_size(&h), 8);
    assert_eq!(node_size(&h, NODE1), 4);
    assert_eq!(node_size(&h, NODE2), 2);
    assert_eq!(node_size(&h, NODE3), 2);

    // update the traffic for the new span replication
    for _ in 0..3 {
        traffic_cp(&mut h, s9, 100, cp);
        traffic_cp(&mut h, s10, 50, cp);
    }
    // trigger merge, merge spanReplica7 and spanReplica9
    balance(&mut h);
    assert_eq!(op_size(&h), 3);
    let v = ops(&h);
    let occupy = of_kind(&v, "occupy");
    let merge = of_kind(&v, "merge");
    assert_eq!(occupy.len(), 2);
    assert_eq!(merge.len(), 1);
    assert!(occupy.contains(&s7));
    assert!(occupy.contains(&s9));
    let s11 = merge[0];
    post_finish_remove(&mut h, s11);
    for id in occupy {
        post_finish_remove(&mut h, id);
    }
    assert_eq!(replicating_size(&h), 7);
    assert_eq!(node_size(&h, NODE1), 3);
    assert_eq!(node_size(&h, NODE2), 2);
    assert_eq!(node_size(&h, NODE3), 2);

    for _ in 0..3 {
        traffic_cp(&mut h, s11, 150, cp);
    }
    // trigger move
    balance(&mut h);
    assert_eq!(op_size(&h), 3);
    let v = ops(&h);
    assert_eq!(v.len(), 3);
    let expected = [s10, span_lists[5], span_lists[4]];
    for (kind, id) in &v {
        assert_eq!(*kind, "move");
        assert!(expected.contains(id), "Unexpected operator ID: {id:?}");
    }
    let now = h.env.now;
    // `op.Start()` is done at admission here (as for the splits, adds and merges above).
    for (_, id) in v {
        let op = h.m.pipe.oc.get_mut(&id).expect("operator");
        let (origin, _) = op.schedule(&h.m.pipe.sc, now, EPOCH).expect("message to the origin");
        op.check(
            origin,
            &TableSpanStatus { mode: Mode::Default, id, state: Stopped, checkpoint_ts: 1, event_size_per_second: 0 },
            &mut h.m.pipe.sc,
        );
        let (dest, _) = op.schedule(&h.m.pipe.sc, now, EPOCH).expect("message to the destination");
        op.check(
            dest,
            &TableSpanStatus { mode: Mode::Default, id, state: Working, checkpoint_ts: 1, event_size_per_second: 0 },
            &mut h.m.pipe.sc,
        );
        post_finish_remove(&mut h, id);
    }
    assert_eq!(replicating_size(&h), 7);
    assert_eq!(node_size(&h, NODE1), 4);
    assert_eq!(node_size(&h, NODE2), 1);
    assert_eq!(node_size(&h, NODE3), 2);

    // trigger merge
    // node1 | node2 | node3
    // 200   | 600   | 700
    // 400   |       |
    balance(&mut h);
    assert_eq!(op_size(&h), 7);
    let v = ops(&h);
    let occupy = of_kind(&v, "occupy");
    let merge = of_kind(&v, "merge");
    assert_eq!(occupy.len(), 5);
    assert_eq!(merge.len(), 2);
    for id in [s10, s11, span_lists[1], span_lists[3], span_lists[4]] {
        assert!(occupy.contains(&id));
    }
    let (s12, s13) = if node_of(&h, merge[0]) == n(NODE1) { (merge[0], merge[1]) } else { (merge[1], merge[0]) };
    for id in merge.into_iter().chain(occupy) {
        post_finish_remove(&mut h, id);
    }
    assert_eq!(replicating_size(&h), 4);
    assert_eq!(node_size(&h, NODE1), 2);
    assert_eq!(node_size(&h, NODE2), 1);
    assert_eq!(node_size(&h, NODE3), 1);

    // update the traffic for the new span replication
    for _ in 0..3 {
        traffic_cp(&mut h, s12, 400, cp);
    }
    for _ in 0..3 {
        traffic_cp(&mut h, s13, 700, cp);
    }
    // no more operators
    balance(&mut h);
    assert_eq!(op_size(&h), 0);
}
