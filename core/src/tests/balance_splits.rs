//! Split-group balance scheduler (§7.3): the decisions of `SplitSpanChecker.Check`
//! (re-split, merge-whole, merge of adjacent spans after consecutive checks, moves) and
//! the guards of `balanceSplitsScheduler.Execute` as the maintainer runs them.

use super::harness::*;
use crate::config::ChangefeedConfig;
use crate::effects::{Out, FP_STOP_BALANCE_SCHEDULER};
use crate::maintainer::operator::Operator;
use crate::maintainer::span_controller::{GroupId, ReplicaState};
use crate::maintainer::split_balance::*;
use crate::maintainer::Maintainer;
use crate::messages::*;
use crate::types::*;
use crate::upstream::SchemaView;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

const T: TableId = 1;
const THR: u64 = 10;
/// Simulated time of the checker-level checks (the spans' checkpoints are this recent).
const NOW_MS: u64 = 100_000;

fn span_id(i: usize) -> DispatcherId {
    d(101 + i as u64)
}

// ---------------------------------------------------------------- checker level

/// Contiguous equal spans of table `T`, span i on `spec[i].0` with `spec[i].1` regions.
fn spans(spec: &[(u32, u64)]) -> Vec<GroupSpan> {
    let pieces = split_span_evenly(&TableSpan::full(T), spec.len() as u64);
    spec.iter()
        .zip(pieces)
        .enumerate()
        .map(|(i, ((node, regions), span))| GroupSpan {
            id: span_id(i),
            span,
            node: n(*node),
            regions: *regions,
            checkpoint_ts: ts_from_ms(NOW_MS),
        })
        .collect()
}

/// A checker whose spans all have their three traffic samples.
fn warm(spans: &[GroupSpan]) -> SplitGroupChecker {
    warm_with(spans, &vec![1.0; spans.len()])
}

/// A checker whose span i had traffic `traffic[i]` in each of its last three samples.
fn warm_with(spans: &[GroupSpan], traffic: &[f64]) -> SplitGroupChecker {
    let spans = spans.iter().zip(traffic).map(|(s, t)| (s.id, SpanTraffic { last_three: [*t; 3], score: 0 })).collect();
    SplitGroupChecker { spans, ..Default::default() }
}

fn check_with(c: &mut SplitGroupChecker, spans: &[GroupSpan], batch: usize, seed: u64) -> Vec<SplitCheckResult> {
    let alive = nodes(&[0, 1, 2]);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    c.check(
        &GroupCheck {
            table: T,
            spans,
            alive: &alive,
            region_threshold: THR,
            write_threshold: 0,
            balance_score_threshold: 20,
            now_ms: NOW_MS,
            batch,
        },
        &mut rng,
    )
}

fn check(c: &mut SplitGroupChecker, spans: &[GroupSpan]) -> Vec<SplitCheckResult> {
    check_with(c, spans, 10_000, 1)
}

fn ids(v: std::ops::Range<usize>) -> Vec<DispatcherId> {
    v.map(span_id).collect()
}

#[test]
fn merge_whole_at_half_the_region_threshold_and_not_above() {
    // Five spans on one node with 5 regions in all (= 10 / 2): merged back into one.
    let s = spans(&[(1, 1); 5]);
    assert_eq!(check(&mut warm(&s), &s), vec![SplitCheckResult::Merge { ids: ids(0..5), step: "merge-whole" }]);
    // One region more: no merge-whole, and 5 spans are within the bound 2 * max(1, 3).
    let s = spans(&[(1, 2), (1, 1), (1, 1), (1, 1), (1, 1)]);
    assert_eq!(check(&mut warm(&s), &s), vec![]);
}

#[test]
fn merge_whole_first_gathers_the_spans_on_one_hosting_node() {
    let s = spans(&[(0, 1), (1, 1), (1, 1), (0, 1)]);
    let mut targets = BTreeSet::new();
    for seed in 0..20 {
        let r = check_with(&mut warm(&s), &s, 10_000, seed);
        let [SplitCheckResult::Move { ids: moved, target, step: "merge-whole" }] = &r[..] else {
            panic!("seed {seed}: {r:?}")
        };
        assert!([n(0), n(1)].contains(target), "node 2 hosts no span: {target:?}");
        let expect: Vec<DispatcherId> = s.iter().filter(|x| x.node != *target).map(|x| x.id).collect();
        assert_eq!(moved, &expect);
        targets.insert(*target);
    }
    assert_eq!(targets.len(), 2, "the target is drawn among the hosting nodes");
}

#[test]
fn a_span_over_the_region_threshold_is_split_in_place() {
    let s = spans(&[(0, 21), (2, 10)]);
    // ceil(21 / 10) = 3 pieces, all on the span's node; 10 regions is not over.
    assert_eq!(
        check(&mut warm(&s), &s),
        vec![SplitCheckResult::Split {
            id: span_id(0),
            regions: 21,
            span_num: 3,
            by_write_bytes: false,
            targets: vec![n(0); 3]
        }]
    );
    let s = spans(&[(0, 10), (2, 10)]);
    assert_eq!(check(&mut warm(&s), &s), vec![]);
}

/// Eight one-region spans in same-node pairs: 8 regions (> 5, no merge-whole) and more
/// spans than 2 * max(ceil(8 / 10), 3 nodes) = 6.
fn pairs() -> Vec<GroupSpan> {
    spans(&[(0, 1), (0, 1), (1, 1), (1, 1), (2, 1), (2, 1), (0, 1), (0, 1)])
}

#[test]
fn adjacent_same_node_spans_merge_only_after_five_consecutive_checks() {
    let s = pairs();
    let mut c = warm(&s);
    for i in 1..MERGE_CHECK_THRESHOLD {
        assert_eq!(check(&mut c, &s), vec![], "check {i}");
        assert_eq!(c.merge_check_count, i);
    }
    let merges: Vec<Vec<DispatcherId>> = check(&mut c, &s)
        .into_iter()
        .map(|r| match r {
            SplitCheckResult::Merge { ids, step: "merge" } => ids,
            r => panic!("{r:?}"),
        })
        .collect();
    assert_eq!(merges, vec![ids(0..2), ids(2..4), ids(4..6), ids(6..8)]);
}

#[test]
fn a_check_that_does_not_reach_the_merge_condition_resets_the_count() {
    let s = pairs();
    let mut c = warm(&s);
    for _ in 0..3 {
        check(&mut c, &s);
    }
    assert_eq!(c.merge_check_count, 3);
    // A lag of more than 30 s: no merge, and the count starts over.
    let mut old = s.clone();
    old[3].checkpoint_ts = ts_from_ms(NOW_MS - MAX_MERGE_LAG_MS - 1);
    assert_eq!(check(&mut c, &old), vec![]);
    assert_eq!(c.merge_check_count, 0);
    // A lag of exactly 30 s still counts.
    old[3].checkpoint_ts = ts_from_ms(NOW_MS - MAX_MERGE_LAG_MS);
    check(&mut c, &old);
    assert_eq!(c.merge_check_count, 1);
    // A span without its three traffic samples makes the group unavailable: reset too.
    c.spans.get_mut(&span_id(0)).unwrap().last_three[2] = 0.0;
    assert_eq!(check(&mut c, &s), vec![]);
    assert_eq!(c.merge_check_count, 0);
}

#[test]
fn merge_runs_stay_within_three_quarters_of_the_threshold() {
    // Twenty one-region spans on one node: runs of at most 10 / 4 * 3 = 6 regions
    // (integer division first, as in TiCDC).
    let s = spans(&[(0, 1); 20]);
    let mut c = warm(&s);
    c.merge_check_count = MERGE_CHECK_THRESHOLD - 1;
    let merges: Vec<usize> = check(&mut c, &s)
        .iter()
        .map(|r| if let SplitCheckResult::Merge { ids, .. } = r { ids.len() } else { panic!("{r:?}") })
        .collect();
    assert_eq!(merges, vec![6, 6, 6, 2]);
}

#[test]
fn at_most_eight_merges_per_group_and_round_and_never_more_than_the_batch() {
    // Nine same-node pairs on alternating nodes.
    let spec: Vec<(u32, u64)> = (0..18).map(|i| (((i / 2) % 2) as u32, 1)).collect();
    let s = spans(&spec);
    let count = |batch: usize| {
        let mut c = warm(&s);
        c.merge_check_count = MERGE_CHECK_THRESHOLD - 1;
        check_with(&mut c, &s, batch, 1).len()
    };
    assert_eq!(count(10_000), MAX_MERGE_OPERATORS_PER_GROUP);
    assert_eq!(count(3), 3);
}

#[test]
fn a_node_without_spans_of_the_group_receives_one_from_the_most_loaded_node() {
    // Alternating nodes 0 and 1 (nothing adjacent on one node), node 2 empty. Table 1 is
    // odd: equal loads order by ascending node ID, so node 1 is the most loaded.
    let s = spans(&[(0, 1), (1, 1), (0, 1), (1, 1), (0, 1), (1, 1), (0, 1), (1, 1)]);
    let mut picked = BTreeSet::new();
    for seed in 0..20 {
        let mut c = warm(&s);
        c.merge_check_count = MERGE_CHECK_THRESHOLD - 1;
        let r = check_with(&mut c, &s, 10_000, seed);
        let [SplitCheckResult::Move { ids: moved, target, step: "move-to-empty-node" }] = &r[..] else {
            panic!("{r:?}")
        };
        assert_eq!(*target, n(2));
        assert_eq!(moved.len(), 1);
        assert_eq!(s.iter().find(|x| x.id == moved[0]).unwrap().node, n(1));
        picked.insert(moved[0]);
    }
    assert!(picked.len() > 1, "the span is drawn at random");
}

#[test]
fn spans_move_next_to_an_adjacent_span_without_widening_the_spread() {
    // Round-robin over the three nodes: no two adjacent spans share a node.
    let s = spans(&[(0, 1), (1, 1), (2, 1), (0, 1), (1, 1), (2, 1), (0, 1), (1, 1)]);
    let mut c = warm(&s);
    c.merge_check_count = MERGE_CHECK_THRESHOLD - 1;
    let r = check(&mut c, &s);
    assert!(!r.is_empty() && r.len() <= MAX_MOVE_SPANS_FOR_MERGE, "{r:?}");
    let mut node: BTreeMap<DispatcherId, NodeId> = s.iter().map(|x| (x.id, x.node)).collect();
    let mut movers = Vec::new();
    for m in &r {
        let SplitCheckResult::Move { ids: moved, target, step } = m else { panic!("{m:?}") };
        assert_eq!(moved.len(), 1);
        assert!(["move-for-merge", "compensate"].contains(step), "{step}");
        node.insert(moved[0], *target);
        if *step == "move-for-merge" {
            movers.push(moved[0]);
        }
    }
    let load = |node: &BTreeMap<DispatcherId, NodeId>| {
        let mut l: BTreeMap<NodeId, usize> = [(n(0), 0), (n(1), 0), (n(2), 0)].into_iter().collect();
        for v in node.values() {
            *l.get_mut(v).unwrap() += 1;
        }
        (*l.values().min().unwrap(), *l.values().max().unwrap())
    };
    let (lo, hi) = load(&s.iter().map(|x| (x.id, x.node)).collect());
    let (lo2, hi2) = load(&node);
    assert!(lo2 >= lo && hi2 <= hi, "spread widened: {lo}..{hi} -> {lo2}..{hi2}");
    // At least one moved span ends next to a span on its node.
    let pos = |id: DispatcherId| s.iter().position(|x| x.id == id).unwrap();
    let beside = movers.iter().any(|id| {
        let i = pos(*id);
        [i.checked_sub(1), Some(i + 1)]
            .into_iter()
            .flatten()
            .filter(|j| *j < s.len())
            .any(|j| node[&s[j].id] == node[id])
    });
    assert!(beside, "{r:?}");
}

// ---------------------------------------------------------------- maintainer level

/// A maintainer on node 0 (captures 0, 1, 2) with table-across-nodes, region threshold
/// 10 and the checker loop every 2 s; table `T` has `regions` regions and is split into
/// `placement.len()` equal spans (IDs from 101), span i Replicating on `placement[i]`.
fn group(regions: u64, placement: &[u32]) -> MH {
    let mut schema = TestSchema::with_tables(&[T, 2]);
    schema.regions.insert(T, regions);
    let mut env = Env::new(0);
    let mut cfg = ChangefeedConfig::default();
    cfg.scheduler.enable_table_across_nodes = true;
    cfg.scheduler.region_threshold = THR;
    cfg.scheduler.check_balance_interval_ms = 2000;
    let m = Maintainer::new(&mut env.ctx(), cf(), cfg, START, EPOCH, false, nodes(&[0, 1, 2]));
    env.take();
    let mut h = MH { env, m, schema };
    let pieces = split_span_evenly(&TableSpan::full(T), placement.len() as u64);
    let mut reports: BTreeMap<u32, Vec<BootstrapTableSpan>> = BTreeMap::new();
    for (i, (span, node)) in pieces.into_iter().zip(placement).enumerate() {
        reports.entry(*node).or_default().push(bspan(span_id(i), span, ComponentState::Working, START));
    }
    // Table 2, a whole-table span, replicates on node 0.
    reports.entry(0).or_default().push(bspan(d(200), TableSpan::full(2), ComponentState::Working, START));
    h.bootstrap(reports.into_iter().map(|(n, v)| (n, NodeReport::spans(v))).collect());
    h
}

/// One heartbeat from every node hosting spans of `T`, each span Working at the current
/// time; `complete` marks a complete-status heartbeat (it carries traffic).
fn heartbeats(h: &mut MH, complete: bool) {
    let cp = ts_from_ms(h.env.now).max(START);
    let mut by_node: BTreeMap<NodeId, Vec<TableSpanStatus>> = BTreeMap::new();
    for r in h.m.pipe.sc.tasks_of_table(T) {
        if let Some(node) = r.node {
            // A complete status carries the dispatcher's traffic: idle here.
            let mut s = st(r.id, ComponentState::Working, cp);
            s.event_size_per_second = if complete { 1 } else { 0 };
            by_node.entry(node).or_default().push(s);
        }
    }
    for (node, statuses) in by_node {
        let seq = h.env.now + 1;
        h.handle(
            node.0,
            Message::HeartBeatRequest {
                redo_watermark: None,
                cf: cf(),
                watermark: Watermark { checkpoint_ts: cp, resolved_ts: cp, seq },
                statuses,
                complete_status: complete,
                err: None,
            },
        );
    }
}

/// Three complete-status heartbeats, 10 s apart.
fn samples(h: &mut MH) {
    for _ in 0..TRAFFIC_SAMPLES {
        h.env.now += 10_000;
        heartbeats(h, true);
    }
}

/// Run the checker loop at its next wake-up; returns its output.
fn run(h: &mut MH) -> Out {
    h.env.now = h.env.now.max(h.m.pipe.next_balance_check_ms);
    let mut ctx = h.env.ctx();
    h.m.run_balance_scheduler(&mut ctx, &h.schema);
    h.env.take()
}

fn merges(h: &MH) -> Vec<Vec<DispatcherId>> {
    h.m.pipe
        .oc
        .running()
        .filter_map(|op| if let Operator::Merge(m) = op { Some(m.sources.clone()) } else { None })
        .collect()
}

fn moves(h: &MH) -> Vec<(DispatcherId, Option<NodeId>, NodeId)> {
    h.m.pipe
        .oc
        .running()
        .filter_map(|op| if let Operator::Move(m) = op { Some((m.id, m.origin, m.dest)) } else { None })
        .collect()
}

#[test]
fn a_group_is_checked_once_every_span_has_three_complete_status_samples() {
    // Four spans on node 1, 4 regions in all: merge-whole as soon as the group is checked.
    let mut h = group(4, &[1, 1, 1, 1]);
    for _ in 0..TRAFFIC_SAMPLES - 1 {
        h.env.now += 10_000;
        heartbeats(&mut h, true);
    }
    // Heartbeats without complete status carry no traffic.
    heartbeats(&mut h, false);
    heartbeats(&mut h, false);
    run(&mut h);
    assert_eq!(merges(&h), Vec::<Vec<DispatcherId>>::new(), "two samples are not enough");
    h.env.now += 10_000;
    heartbeats(&mut h, true);
    let out = run(&mut h);
    assert_eq!(merges(&h), vec![ids(0..4)]);
    assert!(traced(&out, "balance split scheduler merge spans"));
    // The merged task covers the table: one span in the default group, Scheduling on node 1.
    let merged: Vec<_> =
        h.m.pipe
            .sc
            .tasks_of_table(T)
            .into_iter()
            .filter(|r| r.group() == GroupId::Default)
            .map(|r| (r.span, r.state, r.node))
            .collect();
    assert_eq!(merged, vec![(TableSpan::full(T), ReplicaState::Scheduling, Some(n(1)))]);
}

#[test]
fn merge_whole_moves_spans_to_one_node_first() {
    let mut h = group(4, &[1, 2, 1, 2]);
    samples(&mut h);
    run(&mut h);
    let mv = moves(&h);
    assert_eq!(mv.len(), 2, "{mv:?}");
    let dest = mv[0].2;
    assert!(mv.iter().all(|(_, o, d)| *d == dest && *o != Some(dest) && o.is_some()));
    assert!(merges(&h).is_empty(), "the merge waits for the moves");
}

#[test]
fn no_merge_whole_above_half_the_region_threshold() {
    // 6 regions over four spans (1.5 each, rounded to 2: 8 in all) stay split.
    let mut h = group(6, &[1, 1, 1, 1]);
    samples(&mut h);
    run(&mut h);
    assert!(merges(&h).is_empty() && moves(&h).is_empty());
    // PD merges regions: after the next refresh the group merges back.
    h.schema.regions.insert(T, 4);
    h.env.now += h.m.config.scheduler.region_count_refresh_interval_ms;
    heartbeats(&mut h, true);
    run(&mut h);
    assert_eq!(merges(&h), vec![ids(0..4)]);
}

#[test]
fn a_span_over_the_threshold_is_re_split_with_targets_on_its_node() {
    // Two halves of a 44-region table: 22 regions each, 3 pieces each, in place.
    let mut h = group(44, &[1, 2]);
    samples(&mut h);
    let out = run(&mut h);
    let splits: Vec<(DispatcherId, usize, Vec<NodeId>)> =
        h.m.pipe
            .oc
            .running()
            .filter_map(|op| {
                if let Operator::Split(s) = op {
                    Some((s.id, s.split_spans.len(), s.targets.clone()))
                } else {
                    None
                }
            })
            .collect();
    assert_eq!(splits, vec![(span_id(0), 3, vec![n(1); 3]), (span_id(1), 3, vec![n(2); 3])]);
    assert!(traced(&out, "balance split scheduler split span"));
}

#[test]
fn adjacent_spans_merge_after_five_checks_over_the_bound() {
    // Eight spans, 8 regions: over 2 * max(1, 3) = 6 spans, not mergeable whole.
    let mut h = group(8, &[0, 0, 1, 1, 2, 2, 0, 0]);
    samples(&mut h);
    for i in 1..MERGE_CHECK_THRESHOLD {
        heartbeats(&mut h, false);
        run(&mut h);
        assert!(merges(&h).is_empty(), "check {i}");
    }
    heartbeats(&mut h, false);
    run(&mut h);
    assert_eq!(merges(&h), vec![ids(0..2), ids(2..4), ids(4..6), ids(6..8)]);
}

#[test]
fn the_split_group_scheduler_is_idle_while_an_operator_runs_or_a_span_is_absent() {
    let mut h = group(4, &[1, 1, 1, 1]);
    samples(&mut h);
    // An API move of table 2 is running.
    h.m.api_move_table(&mut h.env.ctx(), 2, n(1)).unwrap();
    h.env.take();
    run(&mut h);
    assert!(merges(&h).is_empty(), "an operator runs");
    let mut h = group(4, &[1, 1, 1, 1]);
    samples(&mut h);
    h.m.pipe.sc.mark_absent(&d(200));
    run(&mut h);
    assert!(merges(&h).is_empty(), "a span is absent");
    // A group with a span that is not Replicating is skipped.
    let mut h = group(4, &[1, 1, 1, 1]);
    samples(&mut h);
    h.m.pipe.sc.mark_scheduling(&span_id(2));
    run(&mut h);
    assert!(merges(&h).is_empty(), "a span of the group is scheduling");
}

#[test]
fn stop_balance_scheduler_does_not_stop_the_split_group_scheduler() {
    // TiCDC's failpoint sits in balanceScheduler.Execute only.
    let mut h = group(4, &[1, 1, 1, 1]);
    samples(&mut h);
    h.env.fp_on(FP_STOP_BALANCE_SCHEDULER);
    run(&mut h);
    assert_eq!(merges(&h), vec![ids(0..4)]);
}

#[test]
fn the_checker_loop_wakes_at_the_earlier_of_the_balance_interval_and_15_s() {
    let mut h = group(4, &[1, 1, 1, 1]);
    h.m.config.scheduler.check_balance_interval_ms = 60_000;
    run(&mut h);
    assert_eq!(h.m.pipe.next_balance_check_ms, h.env.now + BALANCE_SPLIT_INTERVAL_MS);
    h.m.config.scheduler.check_balance_interval_ms = 2_000;
    run(&mut h);
    assert_eq!(h.m.pipe.next_balance_check_ms, h.env.now + 2_000);
    // Without table-across-nodes only the balance scheduler runs, at its own interval.
    h.m.config.scheduler.enable_table_across_nodes = false;
    h.m.config.scheduler.check_balance_interval_ms = 60_000;
    run(&mut h);
    assert_eq!(h.m.pipe.next_balance_check_ms, h.env.now + 60_000);
}

#[test]
fn a_groups_checker_lives_from_its_first_span_to_its_last() {
    let mut h = group(4, &[1, 1]);
    assert_eq!(h.m.pipe.sc.split_checkers.keys().copied().collect::<Vec<_>>(), vec![T]);
    assert_eq!(h.m.pipe.sc.split_checkers[&T].spans.len(), 2);
    heartbeats(&mut h, true);
    assert!(h.m.pipe.sc.split_checkers[&T].spans.values().all(|s| s.last_three == [1.0, 0.0, 0.0]));
    h.m.pipe.sc.remove(&span_id(0));
    assert_eq!(h.m.pipe.sc.split_checkers[&T].spans.len(), 1);
    h.m.pipe.sc.remove(&span_id(1));
    assert!(h.m.pipe.sc.split_checkers.is_empty());
    // Without table-across-nodes (the default) there is no checker.
    let cfg = crate::config::SchedulerConfig::default();
    assert!(!cfg.enable_table_across_nodes);
    let mut sc = crate::maintainer::span_controller::SpanController::new(d(1), n(0), START, cfg);
    sc.insert(crate::maintainer::span_controller::SpanReplication {
        id: d(5),
        span: halves(T).0,
        schema_id: SCHEMA,
        node: None,
        state: ReplicaState::Absent,
        checkpoint_ts: START,
        last_state: None,
        block_state: None,
    });
    assert!(sc.split_checkers.is_empty());
}

#[test]
fn a_spans_region_count_is_its_share_of_the_tables_regions() {
    let mut schema = TestSchema::with_tables(&[T]);
    schema.regions.insert(T, 20);
    assert_eq!(schema.span_region_count(&TableSpan::full(T)), 20);
    let (a, b) = halves(T);
    assert_eq!((schema.span_region_count(&a), schema.span_region_count(&b)), (10, 10));
    let eighths = split_span_evenly(&TableSpan::full(T), 8);
    let counts: Vec<u64> = eighths.iter().map(|s| schema.span_region_count(s)).collect();
    assert_eq!(counts, vec![3; 8], "2.5 rounds to 3");
    schema.regions.insert(T, 4);
    assert!(eighths.iter().all(|s| schema.span_region_count(s) == 1), "at least one region");
}
