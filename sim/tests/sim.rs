//! Simulation-level tests: determinism of runs and fire/quiet pairs of the invariants.

use core_sched::bugs::Bugs;
use core_sched::dispatcher::{Dispatcher, DispatcherManager};
use core_sched::messages::ComponentState;
use core_sched::types::*;
use ticdc_sim::checkers::*;
use ticdc_sim::result::Outcome;
use ticdc_sim::runner::{run_on_fresh_thread, RunOptions};
use ticdc_sim::scenario::Scenario;

fn scenario(name: &str) -> Scenario {
    let p = format!("{}/../scenarios/{}.toml", env!("CARGO_MANIFEST_DIR"), name);
    toml::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn same_seed_same_trace_hash_and_different_seeds_differ() {
    let s = scenario("basic_replication");
    let a = run_on_fresh_thread(&s, 11, &Bugs::none(), &RunOptions::default());
    let b = run_on_fresh_thread(&s, 11, &Bugs::none(), &RunOptions::default());
    assert_eq!(a.trace_hash, b.trace_hash);
    assert_eq!(a.trace, b.trace);
    let hashes: std::collections::BTreeSet<String> =
        (20..25).map(|seed| run_on_fresh_thread(&s, seed, &Bugs::none(), &RunOptions::default()).trace_hash).collect();
    assert!(hashes.len() >= 4, "different seeds should usually differ: {:?}", hashes);
}

#[test]
fn injected_nondeterminism_changes_the_trace() {
    let s = scenario("basic_replication");
    let opts = RunOptions { inject_nondeterminism: true, ..RunOptions::default() };
    let a = run_on_fresh_thread(&s, 3, &Bugs::none(), &opts);
    let b = run_on_fresh_thread(&s, 3, &Bugs::none(), &opts);
    assert_ne!(a.trace_hash, b.trace_hash);
}

#[test]
fn walking_skeleton_and_failover_pass_on_the_fixed_core() {
    for name in ["basic_replication", "fail_over"] {
        let s = scenario(name);
        for seed in 0..10 {
            let r = run_on_fresh_thread(&s, seed, &Bugs::none(), &RunOptions::default());
            assert_eq!(r.outcome, Outcome::Pass, "{} seed {}: {:?} {:?}", name, seed, r.violations, r.checks);
            assert!(r.checks.iter().all(|c| c.passed));
            assert!(r.sim_time_ms > 0 && r.events > 0);
        }
    }
}

#[test]
fn bootstrap_retry_after_error_ends_failed_with_the_join_bootstrap_round() {
    let s = scenario("bootstrap_retry_after_error");
    let r = run_on_fresh_thread(&s, 0, &Bugs::none(), &RunOptions::default());
    assert_eq!(r.outcome, Outcome::Pass, "{:?}", r.violations);
    let seq: Vec<String> =
        ["maintainer node changed", "maintainer received bootstrap response", "handle bootstrap response"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    assert!(ticdc_sim::runner::trace_sequence_seen(&r.trace, &seq));
    // The joined capture was not running before its `start` step.
    let started: Vec<&str> = r.trace.iter().filter(|t| t.event == "capture started").map(|t| t.node.as_str()).collect();
    assert_eq!(started, vec!["8300", "8301"]);
    let fail_at = r.trace.iter().position(|t| t.event == "an error occurred in maintainer").unwrap();
    let join_at = r.trace.iter().position(|t| t.event == "capture started" && t.node == "8301").unwrap();
    assert!(fail_at < join_at);
    // Out of order, the sequence is not seen.
    let rev: Vec<String> = seq.iter().rev().cloned().collect();
    assert!(!ticdc_sim::runner::trace_sequence_seen(&r.trace[..join_at], &rev));
}

#[test]
fn bootstrap_retry_after_error_needs_the_schema_store_failpoint() {
    // Without the failpoint the bootstrap succeeds: the wait for the logged
    // ErrSnapshotLostByGC times out (the port's predicates can fail).
    let mut s = scenario("bootstrap_retry_after_error");
    s.steps.remove(0);
    let r = run_on_fresh_thread(&s, 0, &Bugs::none(), &RunOptions::default());
    assert_ne!(r.outcome, Outcome::Pass);
    assert!(
        r.violations.iter().any(|v| v.invariant == "converges" && v.detail.contains("ErrSnapshotLostByGC")),
        "{:?}",
        r.violations
    );
    assert!(r.trace.iter().any(|t| t.event == "maintainer bootstrap finished"));
}

#[test]
fn session_loss_fences_closes_and_exits_the_capture() {
    let s = scenario("capture_local_fence_on_session_done");
    let r = run_on_fresh_thread(&s, 0, &Bugs::none(), &RunOptions::default());
    assert_eq!(r.outcome, Outcome::Pass, "{:?}", r.violations);
    let seq: Vec<String> = [
        "capture session lost",
        "local fence triggered",
        "dispatcher orchestrator local fence triggered",
        "stopping dispatcher manager write path",
        "dispatcher orchestrator closed",
        "server closed",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert!(ticdc_sim::runner::trace_sequence_seen(&r.trace, &seq));
    // The hung write returned cancelled and nothing of capture 2 reached storage after
    // its fence (the rows came from capture 1).
    let fence_at = r.trace.iter().position(|t| t.event == "local fence triggered").unwrap();
    assert!(r.trace.iter().any(|t| t.event == "inject MySQLSinkHangLongTime"));
    assert!(!r.trace[fence_at..].iter().any(|t| t.node == "8301" && t.event == "write ddl"));
}

#[test]
fn the_session_loss_port_fails_without_the_session_loss() {
    // Without the lease revocation capture 2 never exits: the 15 s wait times out.
    let mut s = scenario("capture_local_fence_on_session_done");
    let i = s
        .steps
        .iter()
        .position(|st| matches!(st.get_ref(), ticdc_sim::scenario::format::Step::SessionLoss { .. }))
        .unwrap();
    s.steps.remove(i);
    let r = run_on_fresh_thread(&s, 0, &Bugs::none(), &RunOptions::default());
    assert!(
        r.violations.iter().any(|v| v.invariant == "converges" && v.detail.contains("NodeExited")),
        "{:?}",
        r.violations
    );
}

/// Both fence-lock leaks of the post-bootstrap handler keep the maintainer's capture from
/// exiting, each on its own return (the seeds of their seed files); the fixed core exits.
#[test]
fn leaked_fence_locks_keep_the_maintainers_capture_from_exiting() {
    use core_sched::bugs::Bug;
    // The seed files' engine.
    let s = Scenario {
        engine: ticdc_sim::node::Engine::CaptureLoops,
        ..scenario("capture_local_fence_during_post_bootstrap")
    };
    let cases = [
        // The fence lands as the initialisation ends: the handler returns on `fenced`.
        (Bug::LeakFenceLockWhenFenced, 2, "post bootstrap fenced return without releasing fence lock"),
        // The fence waited through the initialisation: the handler returns on the closed write path.
        (
            Bug::LeakFenceLockOnClosedWritePath,
            0,
            "post bootstrap write path closed return without releasing fence lock",
        ),
    ];
    for (b, seed, event) in cases {
        let r = run_on_fresh_thread(&s, seed, &Bugs::none().with(b), &RunOptions::default());
        assert!(r.trace.iter().any(|t| t.event == event), "{:?} seed {}", b, seed);
        assert!(
            r.violations.iter().any(|v| v.invariant == "converges" && v.detail.contains("NodeExited")),
            "{:?}",
            r.violations
        );
        assert!(!r.trace.iter().any(|t| t.event == "server closed"));
        let fixed = run_on_fresh_thread(&s, seed, &Bugs::none(), &RunOptions::default());
        assert_eq!(fixed.outcome, Outcome::Pass, "{:?}", fixed.violations);
        assert!(fixed.trace.iter().any(|t| t.event == "server closed"));
    }
}

fn dm_with(node: u32, ds: &[(u64, TableSpan, ComponentState, bool)]) -> DispatcherManager {
    let mut dm = DispatcherManager::new(ChangefeedId("cf".into()), NodeId(node), Default::default(), node as u64);
    for (id, span, st, trig) in ds {
        let mut d = Dispatcher::new(DispatcherId(*id), *span, 1, 10, *trig, false);
        d.state = *st;
        // A trigger here is past its post-bootstrap (registered, owning the DDL span).
        d.registered = true;
        dm.dispatchers.insert(DispatcherId(*id), d);
    }
    dm
}

#[test]
fn one_dispatcher_per_key_fires_on_overlap_and_is_quiet_on_a_partition() {
    let full = TableSpan::full(22);
    let halves = split_span_evenly(&full, 2);
    // Quiet: two halves on two nodes, plus one trigger.
    let a = dm_with(
        0,
        &[(1, halves[0], ComponentState::Working, false), (9, TableSpan::ddl_span(), ComponentState::Working, true)],
    );
    let b = dm_with(1, &[(2, halves[1], ComponentState::Initializing, false)]);
    assert!(check_dispatchers([(NodeId(0), &a), (NodeId(1), &b)].into_iter()).is_empty());
    // Fire: a second full-span dispatcher on the same node (the seed-000 shape).
    let c =
        dm_with(1, &[(2, halves[1], ComponentState::Initializing, false), (3, full, ComponentState::Working, false)]);
    let v = check_dispatchers([(NodeId(0), &a), (NodeId(1), &c)].into_iter());
    assert!(v.iter().any(|(inv, _)| *inv == ONE_DISPATCHER_PER_KEY), "{:?}", v);
    // A dispatcher being removed writes nothing and does not count.
    let mut d = dm_with(1, &[(3, full, ComponentState::Working, false)]);
    d.dispatchers.get_mut(&DispatcherId(3)).unwrap().try_removing = true;
    assert!(check_dispatchers([(NodeId(0), &a), (NodeId(1), &d)].into_iter()).is_empty());
}

#[test]
fn one_instance_per_id_and_one_trigger_fire() {
    let a = dm_with(
        0,
        &[
            (1, TableSpan::full(5), ComponentState::Working, false),
            (9, TableSpan::ddl_span(), ComponentState::Working, true),
        ],
    );
    let b = dm_with(
        1,
        &[
            (1, TableSpan::full(5), ComponentState::Working, false),
            (8, TableSpan::ddl_span(), ComponentState::Working, true),
        ],
    );
    let v = check_dispatchers([(NodeId(0), &a), (NodeId(1), &b)].into_iter());
    let names: Vec<&str> = v.iter().map(|(n, _)| *n).collect();
    assert!(names.contains(&ONE_INSTANCE_PER_ID));
    assert!(names.contains(&ONE_TABLE_TRIGGER));
}

#[test]
fn no_data_loss_fires_for_a_change_below_the_checkpoint_that_is_not_durable() {
    use rand::SeedableRng;
    use ticdc_sim::storage::Storage;
    use ticdc_sim::upstream::Upstream;
    let mut up = Upstream::new();
    let t = up.create_table(1, "test", "t1", 1);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    up.dml(2, t, 3, core_sched::upstream::RowOp::Insert, &mut rng);
    let changes = up.changes[&t].clone();
    let cp = changes.iter().map(|c| c.commit_ts).max().unwrap();
    // Quiet: every change durable downstream, and the CREATE TABLE's schema file.
    let mut st = Storage::default();
    for c in &changes {
        st.durable.insert((c.table_id, c.commit_ts, c.key));
    }
    let create_ts = up.ddls[0].commit_ts;
    // Fire: the CREATE TABLE below the checkpoint has no record downstream (a DDL passed
    // with no writer).
    let v = DataLossChecker::default().advance(&up, &st, 0, cp, None);
    assert!(v.iter().any(|(inv, d)| *inv == NO_DATA_LOSS && d.contains("has no record downstream")), "{:?}", v);
    st.ddl_writes.insert((create_ts, t), 1);
    assert!(DataLossChecker::default().advance(&up, &st, 0, cp, None).is_empty());
    // A DDL at the checkpoint itself is not yet required (its writer may still be writing).
    assert!(DataLossChecker::default().advance(&up, &Storage::default(), 0, create_ts, None).is_empty());
    // Fire: one change missing.
    let c0 = &changes[0];
    st.durable.remove(&(c0.table_id, c0.commit_ts, c0.key));
    let v = DataLossChecker::default().advance(&up, &st, 0, cp, None);
    assert!(v.iter().any(|(inv, _)| *inv == NO_DATA_LOSS), "{:?}", v);
    // Below the start ts nothing is required.
    assert!(DataLossChecker::default().advance(&up, &st, cp, cp, None).is_empty());
}

#[test]
fn no_data_loss_fires_for_a_syncpoint_below_the_checkpoint_without_a_record() {
    use core_sched::effects::ObjectContent;
    use core_sched::syncpoint::SyncPointRecord;
    use ticdc_sim::storage::Storage;
    use ticdc_sim::upstream::Upstream;
    let up = Upstream::new();
    let (s1, s2) = (ts_from_ms(1_000), ts_from_ms(2_000));
    let due = Some((s1, 1_000));
    let mut st = Storage::default();
    // A checkpoint equal to a syncpoint's ts does not require its record yet.
    assert!(DataLossChecker::default().advance(&up, &st, 0, s1, due).is_empty());
    let v = DataLossChecker::default().advance(&up, &st, 0, s1 + 1, due);
    assert!(v.iter().any(|(inv, d)| *inv == NO_DATA_LOSS && d.contains("syncpoint")), "{:?}", v);
    let rec = |ts| {
        ObjectContent::SyncPoint(SyncPointRecord { changefeed: "cf".into(), primary_ts: ts, secondary_ts: ts + 5 })
    };
    st.put("a.tmp", rec(s1)).unwrap();
    st.rename("a.tmp", "a").unwrap();
    let mut c = DataLossChecker::default();
    assert!(c.advance(&up, &st, 0, s1 + 1, due).is_empty());
    assert!(!c.advance(&up, &st, 0, s2 + 1, due).is_empty(), "the next one is missing");
    assert!(DataLossChecker::default().advance(&up, &st, 0, s2 + 1, None).is_empty(), "syncpoints off: nothing due");
    assert_eq!(st.syncpoints[&s1].1, 1);
}

#[test]
fn the_event_service_orders_ddl_dml_then_the_syncpoint_at_one_ts() {
    use core_sched::upstream::{RowOp, UpstreamEvent};
    use rand::SeedableRng;
    use ticdc_sim::upstream::Upstream;
    let mut up = Upstream::new();
    let t = up.create_table(1, "test", "t1", 1);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    // A DML and a DDL exactly at syncpoint ts (first TSO of their ms), one between.
    up.dml(2_000, t, 1, RowOp::Insert, &mut rng);
    up.dml(2_500, t, 1, RowOp::Insert, &mut rng);
    up.add_column(3_000, t);
    let kinds = |evs: Vec<UpstreamEvent>| {
        evs.into_iter()
            .map(|e| match e {
                UpstreamEvent::Dml(r) => format!("dml@{}", ts_to_ms(r.commit_ts)),
                UpstreamEvent::Ddl(d) => format!("ddl@{}", ts_to_ms(d.commit_ts)),
                UpstreamEvent::SyncPoint(s) => format!("sp@{}", ts_to_ms(s)),
                UpstreamEvent::Resolved(_) => "resolved".into(),
            })
            .collect::<Vec<_>>()
    };
    let span = TableSpan::full(t);
    assert_eq!(
        kinds(up.events_for(&span, false, ts_from_ms(1_500), ts_from_ms(3_000) + 1, Some(1_000))),
        vec!["dml@2000", "sp@2000", "dml@2500", "ddl@3000", "sp@3000"]
    );
    // The syncpoint at a window's resolved ts waits for the next window.
    assert_eq!(
        kinds(up.events_for(&span, false, ts_from_ms(1_500), ts_from_ms(3_000), Some(1_000))),
        vec!["dml@2000", "sp@2000", "dml@2500", "ddl@3000"]
    );
    assert_eq!(kinds(up.events_for(&span, false, ts_from_ms(3_000), ts_from_ms(3_500), Some(1_000))), vec!["sp@3000"]);
    // The trigger gets syncpoints too; without syncpoints nobody does.
    assert_eq!(
        kinds(up.events_for(&TableSpan::ddl_span(), true, ts_from_ms(1_500), ts_from_ms(2_500), Some(1_000))),
        vec!["sp@2000"]
    );
    assert!(kinds(up.events_for(&span, false, ts_from_ms(1_500), ts_from_ms(3_000) + 1, None))
        .iter()
        .all(|k| !k.starts_with("sp")));
}

#[test]
fn span_partition_fires_on_overlap_and_holes_and_is_quiet_on_a_partition() {
    use core_sched::effects::{Ctx, Failpoints, Out};
    use core_sched::maintainer::span_controller::{ReplicaState, SpanReplication};
    use core_sched::maintainer::{Maintainer, MaintainerState};
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let (bugs, fps, mut out) = (Bugs::none(), Failpoints::default(), Out::default());
    let mut ctx = Ctx {
        now_ms: 0,
        node: NodeId(0),
        rng: &mut rng,
        bugs: &bugs,
        failpoints: &fps,
        out: &mut out,
        ddl_ts: &core_sched::sink::ddl_ts::NO_DDL_TS,
        continuations: Default::default(),
    };
    let mut m = Maintainer::new(
        &mut ctx,
        ChangefeedId("cf".into()),
        Default::default(),
        10,
        1,
        true,
        [NodeId(0)].into_iter().collect(),
    );
    m.state = MaintainerState::Working;
    m.bootstrapped = true;
    m.post_bootstrap_done = true;
    let task = |id: u64, span: TableSpan| SpanReplication {
        id: DispatcherId(id),
        span,
        schema_id: 1,
        node: Some(NodeId(0)),
        state: ReplicaState::Replicating,
        checkpoint_ts: 10,
        last_state: None,
        block_state: None,
    };
    let halves = split_span_evenly(&TableSpan::full(7), 2);
    m.pipe.sc.insert(task(1, halves[0]));
    m.pipe.sc.insert(task(2, halves[1]));
    assert!(check_maintainer(&m).is_empty());
    m.pipe.sc.insert(task(3, TableSpan::full(7)));
    assert!(check_maintainer(&m).iter().any(|(inv, d)| *inv == SPAN_PARTITION && d.contains("overlapping")));
    m.pipe.sc.remove(&DispatcherId(3));
    m.pipe.sc.remove(&DispatcherId(2));
    assert!(check_maintainer(&m).iter().any(|(inv, d)| *inv == SPAN_PARTITION && d.contains("holes")));
}

#[test]
fn barrier_writes_once_fires_on_an_early_ddl_or_a_second_writer_and_is_quiet_otherwise() {
    use core_sched::effects::ObjectContent;
    use rand::SeedableRng;
    use ticdc_sim::world::{check_durable_ddls, World};
    let mut w = World::new(1, Bugs::none(), 2, [1, 2]);
    let t = w.upstream.create_table(1, "test", "t1", 1);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    w.upstream.dml(2, t, 2, core_sched::upstream::RowOp::Insert, &mut rng);
    w.upstream.add_column(3, t);
    let ddl = w.upstream.ddls.last().unwrap().record();
    let put_ddl = |w: &mut World| {
        w.storage.put("ddl.tmp", ObjectContent::Ddl(ddl.clone())).unwrap();
        w.storage.rename("ddl.tmp", "ddl").unwrap();
        check_durable_ddls(w);
    };
    // Fire: the DDL is durable while the rows before it are not.
    put_ddl(&mut w);
    assert!(
        w.violations.iter().any(|v| v.invariant == BARRIER_WRITES_ONCE && v.detail.contains("before row")),
        "{:?}",
        w.violations
    );
    // Quiet: rows durable first.
    let mut w2 = World::new(1, Bugs::none(), 2, [1, 2]);
    w2.upstream = std::mem::take(&mut w.upstream);
    for c in w2.upstream.changes[&t].clone() {
        w2.storage.durable.insert((c.table_id, c.commit_ts, c.key));
    }
    put_ddl(&mut w2);
    assert!(w2.violations.is_empty(), "{:?}", w2.violations);
    // Writer half: one writer per DDL and generation; another generation may write again;
    // a syncpoint at the same ts is another barrier.
    let mut writers = ticdc_sim::checkers::BarrierWriters::default();
    let mut note = |epoch, sync_point, d| writers.write(epoch, 100, sync_point, DispatcherId(d));
    assert_eq!(note(7, false, 0xaa), None);
    assert_eq!(note(7, false, 0xaa), None);
    assert_eq!(note(8, false, 0xbb), None);
    assert_eq!(note(7, true, 0xdd), None);
    let (inv, detail) = note(7, false, 0xcc).expect("a second writer of an open DDL barrier");
    assert!(inv == BARRIER_WRITES_ONCE && detail.contains("two dispatchers"), "{}", detail);
    let (inv, detail) = note(7, true, 0xee).expect("a second writer of an open syncpoint barrier");
    assert!(inv == BARRIER_WRITES_ONCE && detail.contains("syncpoint at 100 written by two dispatchers"), "{}", detail);
    // A finished barrier may be replayed by another writer.
    writers.done(7, 100, false);
    assert_eq!(writers.write(7, 100, false, DispatcherId(0xcc)), None);
}

#[test]
fn barrier_writes_once_fires_on_a_syncpoint_written_before_the_rows_at_or_below_it() {
    use core_sched::effects::ObjectContent;
    use core_sched::syncpoint::SyncPointRecord;
    use rand::SeedableRng;
    use ticdc_sim::world::{check_durable_ddls, World};
    let mut w = World::new(1, Bugs::none(), 2, [1, 2]);
    let t = w.upstream.create_table(1, "test", "t1", 1);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    w.upstream.dml(2_000, t, 1, core_sched::upstream::RowOp::Insert, &mut rng);
    w.upstream.dml(3_500, t, 1, core_sched::upstream::RowOp::Insert, &mut rng);
    let changes = w.upstream.changes[&t].clone();
    let put_sp = |w: &mut World, ms: u64| {
        let ts = ts_from_ms(ms);
        w.storage
            .put(
                "sp.tmp",
                ObjectContent::SyncPoint(SyncPointRecord { changefeed: "cf".into(), primary_ts: ts, secondary_ts: ts }),
            )
            .unwrap();
        w.storage.rename("sp.tmp", &format!("sp{}", ms)).unwrap();
        check_durable_ddls(w);
    };
    // Fire: the row at the syncpoint's ts (part of its snapshot) is not durable.
    put_sp(&mut w, 2_000);
    assert!(
        w.violations.iter().any(|v| v.invariant == BARRIER_WRITES_ONCE && v.detail.contains("syncpoint")),
        "{:?}",
        w.violations
    );
    // Quiet: the rows at or below it durable; a later row does not matter.
    let mut w2 = World::new(1, Bugs::none(), 2, [1, 2]);
    w2.upstream = std::mem::take(&mut w.upstream);
    w2.storage.durable.insert((t, changes[0].commit_ts, changes[0].key));
    put_sp(&mut w2, 3_000);
    assert!(w2.violations.is_empty(), "{:?}", w2.violations);
    // The downstream at the record's first write is kept for sync-diff against the syncpoint.
    assert!(w2.storage.syncpoint_snapshots.contains_key(&ts_from_ms(3_000)));
}

#[test]
fn checkpoint_monotonic_fires_when_the_persisted_checkpoint_goes_back() {
    use core_sched::coordinator::ChangefeedInfo;
    use core_sched::messages::FeedState;
    use ticdc_sim::world::{check_persisted_checkpoint, World};
    let mut w = World::new(1, Bugs::none(), 1, [1, 2]);
    let cf = w.cf.clone();
    w.meta.changefeeds.insert(
        cf.clone(),
        ChangefeedInfo {
            id: cf.clone(),
            config: Default::default(),
            epoch: 1,
            checkpoint_ts: 100,
            state: FeedState::Normal,
            last_error: None,
            created: true,
        },
    );
    check_persisted_checkpoint(&mut w);
    w.meta.changefeeds.get_mut(&cf).unwrap().checkpoint_ts = 150;
    check_persisted_checkpoint(&mut w);
    assert!(w.violations.is_empty(), "moving forward is quiet: {:?}", w.violations);
    w.meta.changefeeds.get_mut(&cf).unwrap().checkpoint_ts = 120;
    check_persisted_checkpoint(&mut w);
    assert!(w.violations.iter().any(|v| v.invariant == CHECKPOINT_MONOTONIC), "{:?}", w.violations);
}

/// The balance scheduler moves tables back to a capture that restarted empty; with the
/// `StopBalanceScheduler` failpoint on everywhere it never moves anything, and the runs
/// still pass.
#[test]
fn balance_scheduler_refills_a_restarted_capture() {
    let balanced = |s: &Scenario| {
        (0..8u64)
            .filter(|seed| {
                let r = run_on_fresh_thread(s, *seed, &Bugs::none(), &RunOptions::default());
                assert_eq!(r.outcome, Outcome::Pass, "seed {seed}: {:?}", r.violations);
                r.trace.iter().any(|e| e.event == "scheduler: balance done")
            })
            .count()
    };
    let mut s = scenario("fail_over");
    assert!(balanced(&s) > 0, "no seed of fail_over rebalanced after the restart");
    s.steps.insert(
        0,
        toml::Spanned::new(
            0..0,
            ticdc_sim::scenario::Step::EnableFailpoint { name: "StopBalanceScheduler".into(), node: "all".into() },
        ),
    );
    assert_eq!(balanced(&s), 0);
}

/// Make a DDL record durable downstream (temporary put, then rename).
fn put_ddl(w: &mut ticdc_sim::world::World, rec: core_sched::upstream::DdlRecord) {
    use core_sched::effects::ObjectContent;
    let path = format!("ddl-{}-{}", rec.commit_ts, rec.table_id);
    w.storage.put(&format!("{path}.tmp.0"), ObjectContent::Ddl(rec)).unwrap();
    w.storage.rename(&format!("{path}.tmp.0"), &path).unwrap();
    ticdc_sim::world::check_writes_after_drop(w);
    ticdc_sim::world::check_durable_ddls(w);
}

/// Make rows durable downstream.
fn put_rows(w: &mut ticdc_sim::world::World, rows: Vec<core_sched::upstream::RowChange>, name: &str) {
    use core_sched::effects::ObjectContent;
    w.storage.put(&format!("{name}.tmp.0"), ObjectContent::Rows(rows)).unwrap();
    w.storage.rename(&format!("{name}.tmp.0"), name).unwrap();
    ticdc_sim::world::check_writes_after_drop(w);
    ticdc_sim::world::check_durable_ddls(w);
}

#[test]
fn no_write_after_drop_fires_for_a_data_file_after_a_passed_drop_database_and_is_quiet_for_a_replay() {
    use rand::SeedableRng;
    use ticdc_sim::world::World;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let setup = |rng: &mut rand_chacha::ChaCha8Rng| {
        let mut w = World::new(1, Bugs::none(), 2, [1, 2]);
        w.upstream.create_database(1, "db").unwrap();
        let t = w.upstream.create_table(1, "db", "t1", 1);
        w.upstream.dml(2, t, 2, core_sched::upstream::RowOp::Insert, rng);
        let rows = w.upstream.changes[&t].clone();
        w.upstream.drop_database(3, "db").unwrap();
        let drop = w.upstream.ddls.last().unwrap().clone();
        // Rows first, then the DROP DATABASE: the barrier's order.
        put_rows(&mut w, rows.clone(), "db/t1/a");
        put_ddl(&mut w, drop.record());
        (w, t, rows, drop.commit_ts)
    };
    // Quiet: a data file of the table again while the checkpoint is below the drop (a
    // maintainer restarted from there replays the table, rows and DROP again).
    let (mut w, t, rows, d) = setup(&mut rng);
    assert!(w.violations.is_empty(), "{:?}", w.violations);
    w.persisted_checkpoint = d - 1;
    put_rows(&mut w, rows.clone(), "db/t1/b");
    assert!(w.violations.is_empty(), "{:?}", w.violations);
    // Fire: the same late write once the checkpoint passed the drop.
    w.persisted_checkpoint = d;
    put_rows(&mut w, rows.clone(), "db/t1/c");
    assert!(
        w.violations.iter().any(|v| v.invariant == NO_WRITE_AFTER_DROP && v.detail.contains(&format!("table {}", t))),
        "{:?}",
        w.violations
    );
    // Fire: a table-level DDL before the drop written late (e.g. by a zombie dispatcher).
    let (mut w, t, _, d) = setup(&mut rng);
    w.persisted_checkpoint = d + 5;
    let alter = core_sched::upstream::DdlRecord {
        commit_ts: d - 1,
        kind: core_sched::upstream::DdlKind::AddColumn,
        schema_name: "db".into(),
        table_id: t,
        table_name: "t1".into(),
        query: "ALTER TABLE db.t1 ADD COLUMN c".into(),
        other_tables: vec![],
    };
    put_ddl(&mut w, alter);
    assert!(
        w.violations.iter().any(|v| v.invariant == NO_WRITE_AFTER_DROP && v.detail.contains("ALTER TABLE")),
        "{:?}",
        w.violations
    );
    // Quiet: the drop itself is not durable yet (nothing was dropped downstream).
    let mut w = World::new(1, Bugs::none(), 2, [1, 2]);
    let t = w.upstream.create_table(1, "test", "t1", 1);
    w.upstream.dml(2, t, 1, core_sched::upstream::RowOp::Insert, &mut rng);
    let rows = w.upstream.changes[&t].clone();
    w.upstream.drop_table(3, t);
    w.persisted_checkpoint = w.upstream.ddls.last().unwrap().commit_ts;
    put_rows(&mut w, rows, "test/t1/a");
    assert!(w.violations.is_empty(), "{:?}", w.violations);
}

#[test]
fn the_downstream_drops_a_databases_tables_with_it() {
    use rand::SeedableRng;
    use ticdc_sim::world::World;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let mut w = World::new(1, Bugs::none(), 2, [1, 2]);
    // `test` and its table existed before the changefeed: no DDL downstream, just data.
    let keep = w.upstream.create_table(1, "test", "keep", 1);
    w.upstream.dml(2, keep, 1, core_sched::upstream::RowOp::Insert, &mut rng);
    let rows = w.upstream.changes[&keep].clone();
    put_rows(&mut w, rows, "test/keep/a");
    assert!(w.storage.database_exists("test", &[keep]) && w.storage.table_exists(keep, "test"));
    w.upstream.create_database(3, "db").unwrap();
    let create_db = w.upstream.ddls.last().unwrap().record();
    let t = w.upstream.create_table(4, "db", "t1", 1);
    let create_t = w.upstream.ddls.last().unwrap().record();
    assert!(!w.storage.database_exists("db", &[t]));
    put_ddl(&mut w, create_db);
    assert!(w.storage.database_exists("db", &[t]));
    put_ddl(&mut w, create_t);
    assert!(w.storage.table_exists(t, "db"));
    w.upstream.drop_database(5, "db").unwrap();
    let rec = w.upstream.ddls.last().unwrap().record();
    put_ddl(&mut w, rec);
    assert!(!w.storage.database_exists("db", &[t]) && !w.storage.table_exists(t, "db"));
    assert!(w.storage.table_exists(keep, "test"), "another database's table stays");
    // The name again: a new database, a new table ID; the old one stays dropped.
    let sid = w.upstream.create_database(6, "db").unwrap();
    let rec = w.upstream.ddls.last().unwrap().record();
    put_ddl(&mut w, rec);
    let t2 = w.upstream.create_table(7, "db", "t1", 1);
    let rec = w.upstream.ddls.last().unwrap().record();
    put_ddl(&mut w, rec);
    assert!(t2 != t && w.upstream.tables[&t2].schema_id == sid && sid != w.upstream.tables[&t].schema_id);
    assert!(
        w.storage.database_exists("db", &[t, t2])
            && w.storage.table_exists(t2, "db")
            && !w.storage.table_exists(t, "db")
    );
    assert!(w.violations.is_empty(), "{:?}", w.violations);
}
