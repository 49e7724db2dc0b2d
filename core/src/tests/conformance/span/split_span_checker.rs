//! `maintainer/replica/split_span_checker_test.go`: the split-table group checker
//! (`SplitSpanChecker`), against [`crate::maintainer::split_balance::SplitGroupChecker`].
//!
//! Every Go test runs with `SetEasyThresholdForTest` and traffic percentages 0.8 / 1.2
//! ([`super::support::easy_tuning`]). A span's region count is a `GroupSpan` field the
//! caller fills at check time (the Go tests set `regionCount` on the checker's status).

use super::support::*;
use crate::config::{ChangefeedConfig, SchedulerConfig};
use crate::maintainer::span_controller::{ReplicaState, SpanController, SpanReplication};
use crate::maintainer::split_balance::*;
use crate::maintainer::Maintainer;
use crate::messages::*;
use crate::tests::harness::*;
use crate::types::*;

fn cfg(write_threshold: u64, region_threshold: u64) -> CheckCfg {
    CheckCfg { write_threshold, region_threshold, balance_score_threshold: 1 }
}

// split_span_checker_test.go:97 — the helper that cuts a table into N spans gives
// contiguous, non-empty spans from the table's start to its end (10000 pieces).
#[test]
fn ticdc_split_span_checker_TestSplitTableSpanIntoMultiple_Properties() {
    let full = TableSpan::full(100);
    let count = 10_000;
    let spans = split_span_evenly(&full, count);
    assert_eq!(spans.len(), count as usize);
    assert_eq!(spans[0].start, full.start);
    assert_eq!(spans[count as usize - 1].end, full.end);
    for i in 0..count as usize {
        assert!(spans[i].start < spans[i].end, "span {}: start >= end", i);
        if i > 0 {
            assert_eq!(spans[i - 1].end, spans[i].start, "span {}: not adjacent to the previous one", i);
        }
    }
}

/// A span controller with table-across-nodes: a split span's `insert` is the group
/// checker's `AddReplica`.
fn across_controller() -> SpanController {
    let cfg = SchedulerConfig { enable_table_across_nodes: true, ..Default::default() };
    SpanController::new(d(1), n(1), 1, cfg)
}

fn split_task(s: &GroupSpan) -> SpanReplication {
    SpanReplication {
        id: s.id,
        span: s.span,
        schema_id: 1,
        node: None,
        state: ReplicaState::Absent,
        checkpoint_ts: 1,
        last_state: None,
        block_state: None,
    }
}

// split_span_checker_test.go:117 — AddReplica tracks every span of the group with a
// fresh status: traffic score 0 and three empty traffic samples.
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_AddReplica() {
    let reps = split_reps(3);
    assert_eq!(reps.len(), 3);
    let mut sc = across_controller();
    for r in &reps {
        sc.insert(split_task(r));
    }
    let c = &sc.split_checkers[&GO_TABLE];
    assert_eq!(c.spans.len(), reps.len());
    for r in &reps {
        assert!(c.spans.contains_key(&r.id));
    }
    let status = c.spans.get(&reps[0].id).expect("tracked");
    assert_eq!(status.score, 0);
    assert_eq!(status.last_three.len(), 3);
    assert_eq!(status.last_three, [0.0; 3]);
}

// split_span_checker_test.go:153 — RemoveReplica drops one span, ignores an unknown one,
// and the checker is empty once every span is gone.
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_RemoveReplica() {
    let reps = split_reps(3);
    let mut sc = across_controller();
    for r in &reps {
        sc.insert(split_task(r));
    }
    assert_eq!(sc.split_checkers[&GO_TABLE].spans.len(), reps.len());
    sc.remove(&reps[0].id);
    let c = &sc.split_checkers[&GO_TABLE];
    assert_eq!(c.spans.len(), reps.len() - 1);
    assert!(!c.spans.contains_key(&reps[0].id));
    assert!(c.spans.contains_key(&reps[1].id));
    assert!(c.spans.contains_key(&reps[2].id));
    // An unknown replica of the same table: no change.
    assert!(sc.remove(&d(9999)).is_none());
    assert_eq!(sc.split_checkers[&GO_TABLE].spans.len(), reps.len() - 1);
    sc.remove(&reps[1].id);
    sc.remove(&reps[2].id);
    assert_eq!(sc.split_checkers.get(&GO_TABLE).map(|c| c.spans.len()).unwrap_or(0), 0);
}

// split_span_checker_test.go:198 — UpdateStatus: a sample below the write threshold
// resets the score, at or above it adds a point; samples shift through the last three;
// a zero sample changes nothing.
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_UpdateStatus_Traffic() {
    let reps = split_reps(1);
    let mut c = new_checker(&reps);
    let id = reps[0].id;
    let wt = 1000;
    c.update_status(&id, 500, wt);
    assert_eq!(c.spans[&id].score, 0);
    assert_eq!(c.spans[&id].last_three[0], 500.0);
    c.update_status(&id, 1500, wt);
    assert_eq!(c.spans[&id].score, 1);
    assert_eq!(c.spans[&id].last_three[0], 1500.0);
    assert_eq!(c.spans[&id].last_three[1], 500.0);
    c.update_status(&id, 1500, wt);
    assert_eq!(c.spans[&id].score, 2);
    assert_eq!(c.spans[&id].last_three, [1500.0, 1500.0, 500.0]);
    c.update_status(&id, 1500, wt);
    assert_eq!(c.spans[&id].score, 3);
    c.update_status(&id, 0, wt);
    assert_eq!(c.spans[&id].score, 3, "a zero sample does not score");
    assert_eq!(c.spans[&id].last_three[0], 1500.0, "a zero sample is not recorded");
    c.update_status(&id, 2000, wt);
    assert_eq!(c.spans[&id].score, 4);
    assert_eq!(c.spans[&id].last_three, [2000.0, 1500.0, 1500.0]);
}

// split_span_checker_test.go:275 — a Working status of a span brings its region count
// (6, over the threshold 5) into the checker; it stays the same within the refresh
// interval. (The model's refresher fills the counts at the balance poll.)
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_UpdateStatus_Region() {
    let t: TableId = 1;
    let mut env = Env::new(0);
    let mut cfg = ChangefeedConfig::default();
    cfg.scheduler.enable_table_across_nodes = true;
    cfg.scheduler.write_key_threshold = 1000;
    cfg.scheduler.region_threshold = 5;
    cfg.scheduler.region_count_refresh_interval_ms = 60_000;
    let m = Maintainer::new(&mut env.ctx(), cf(), cfg, START, EPOCH, false, nodes(&[0, 1]));
    env.take();
    let mut schema = TestSchema::with_tables(&[t]);
    // Two halves of 6 regions each.
    schema.regions.insert(t, 12);
    let mut h = MH { env, m, schema };
    let (a, b) = halves(t);
    h.bootstrap(vec![(
        1,
        NodeReport::spans(vec![
            bspan(d(101), a, ComponentState::Working, START),
            bspan(d(102), b, ComponentState::Working, START),
        ]),
    )]);
    let mut s = st(d(101), ComponentState::Working, START);
    s.event_size_per_second = 500;
    h.handle(
        1,
        Message::HeartBeatRequest {
            redo_watermark: None,
            cf: cf(),
            watermark: Watermark { checkpoint_ts: START, resolved_ts: START, seq: 1 },
            statuses: vec![s],
            complete_status: true,
            err: None,
        },
    );
    for _ in 0..2 {
        h.env.now = h.env.now.max(h.m.pipe.next_balance_check_ms);
        let mut ctx = h.env.ctx();
        h.m.run_balance_scheduler(&mut ctx, &h.schema);
        h.env.take();
        assert_eq!(h.m.pipe.region_counts.get(&d(101)), Some(&6));
    }
}

// split_span_checker_test.go:329 — a status that is not Working (Stopped, with traffic)
// does not reach the checker: score and samples stay empty.
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_UpdateStatus_NonWorking() {
    // Two halves of table 1 replicate on node 1 in a maintainer with table-across-nodes.
    let t: TableId = 1;
    let mut env = Env::new(0);
    let mut cfg = ChangefeedConfig::default();
    cfg.scheduler.enable_table_across_nodes = true;
    cfg.scheduler.write_key_threshold = 1000;
    cfg.scheduler.region_threshold = 5;
    let m = Maintainer::new(&mut env.ctx(), cf(), cfg, START, EPOCH, false, nodes(&[0, 1]));
    env.take();
    let mut h = MH { env, m, schema: TestSchema::with_tables(&[t]) };
    let (a, b) = halves(t);
    h.bootstrap(vec![(
        1,
        NodeReport::spans(vec![
            bspan(d(101), a, ComponentState::Working, START),
            bspan(d(102), b, ComponentState::Working, START),
        ]),
    )]);
    assert!(h.m.pipe.sc.split_checkers[&t].spans.contains_key(&d(101)));
    for _ in 0..2 {
        let mut s = st(d(101), ComponentState::Stopped, START);
        s.event_size_per_second = 1500;
        h.handle(
            1,
            Message::HeartBeatRequest {
                redo_watermark: None,
                cf: cf(),
                watermark: Watermark { checkpoint_ts: START, resolved_ts: START, seq: 1 },
                statuses: vec![s],
                complete_status: true,
                err: None,
            },
        );
        let status = h.m.pipe.sc.split_checkers[&t].spans.get(&d(101)).expect("still tracked");
        assert_eq!(status.score, 0);
        assert_eq!(status.last_three[0], 0.0);
    }
}

// split_span_checker_test.go:371 — a span whose traffic score is above 3 is split again.
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_ChooseSplitSpans_Traffic() {
    let mut reps = split_reps(3);
    let mut c = new_checker(&reps);
    set_traffic(&mut c, reps[0].id, 4, [1500.0; 3]);
    set_traffic(&mut c, reps[1].id, 2, [800.0; 3]);
    set_traffic(&mut c, reps[2].id, 1, [600.0; 3]);
    reps[0].node = n(1);
    reps[1].node = n(2);
    reps[2].node = n(1);
    let results = check(&mut c, &reps, &[1, 2], &cfg(1000, 10), 10);
    assert_eq!(results.len(), 1, "{:?}", results);
    assert_eq!(split_of(&results[0]), Some(reps[0].id));
}

// split_span_checker_test.go:427 — a span with more regions than the threshold is split.
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_ChooseSplitSpans_Region() {
    let mut reps = split_reps(2);
    let mut c = new_checker(&reps);
    reps[0].regions = 8;
    set_traffic(&mut c, reps[0].id, 0, [500.0; 3]);
    reps[1].regions = 3;
    set_traffic(&mut c, reps[1].id, 0, [400.0; 3]);
    reps[0].node = n(1);
    reps[1].node = n(2);
    let results = check(&mut c, &reps, &[1, 2], &cfg(1000, 5), 10);
    assert_eq!(results.len(), 1, "{:?}", results);
    assert_eq!(split_of(&results[0]), Some(reps[0].id));
}

// split_span_checker_test.go:479 — a small, quiet group on one node is merged whole.
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_CheckMergeWhole_SingleNode() {
    let mut reps = split_reps(3);
    let mut c = new_checker(&reps);
    for r in reps.iter_mut() {
        r.node = n(1);
        r.regions = 2;
        set_traffic(&mut c, r.id, 0, [300.0; 3]);
    }
    let results = check(&mut c, &reps, &[1], &cfg(2000, 20), 10);
    assert_eq!(results.len(), 1, "{:?}", results);
    let merged = merge_of(&results[0]).expect("a merge");
    assert_eq!(merged.len(), 3);
    for r in &reps {
        assert!(merged.contains(&r.id));
    }
}

// split_span_checker_test.go:525 — a small, quiet group over three nodes first moves two
// spans to one node.
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_CheckMergeWhole_MultiNode() {
    let mut reps = split_reps(3);
    let mut c = new_checker(&reps);
    reps[0].node = n(1);
    reps[1].node = n(2);
    reps[2].node = n(3);
    for r in reps.iter_mut() {
        r.regions = 2;
        set_traffic(&mut c, r.id, 0, [300.0; 3]);
    }
    let results = check(&mut c, &reps, &[1, 2, 3], &cfg(2000, 20), 10);
    assert_eq!(results.len(), 1, "{:?}", results);
    let (moved, _) = move_of(&results[0]).expect("a move");
    assert_eq!(moved.len(), 2);
}

// split_span_checker_test.go:572 — a group over half the region threshold is not merged.
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_CheckMergeWhole_ThresholdNotMet() {
    let mut reps = split_reps(2);
    let mut c = new_checker(&reps);
    reps[0].node = n(1);
    reps[1].node = n(1);
    reps[0].regions = 2;
    set_traffic(&mut c, reps[0].id, 0, [300.0; 3]);
    reps[1].regions = 6;
    set_traffic(&mut c, reps[1].id, 0, [600.0; 3]);
    let results = check(&mut c, &reps, &[1], &cfg(1000, 10), 10);
    assert!(results.is_empty(), "{:?}", results);
}

// split_span_checker_test.go:616 — with node1 at 2000 and node2 at 300, the span of
// node1 whose traffic best fits the gap (800) moves to node2.
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_CheckBalanceTraffic_Balance() {
    let mut reps = split_reps(4);
    let mut c = new_checker(&reps);
    reps[0].node = n(1);
    reps[1].node = n(1);
    set_traffic(&mut c, reps[0].id, 0, [1200.0; 3]);
    set_traffic(&mut c, reps[1].id, 0, [800.0; 3]);
    reps[2].node = n(2);
    reps[3].node = n(2);
    set_traffic(&mut c, reps[2].id, 0, [200.0; 3]);
    set_traffic(&mut c, reps[3].id, 0, [100.0; 3]);
    for r in reps.iter_mut() {
        r.regions = 3;
    }
    low_lag(&mut reps);
    c.balance.status_updated = true;
    let results = check(&mut c, &reps, &[1, 2], &cfg(1000, 10), 10);
    assert_eq!(results.len(), 1, "{:?}", results);
    let (moved, target) = move_of(&results[0]).expect("a move");
    assert_eq!(target, n(2));
    assert_eq!(moved, vec![reps[1].id]);
}

// split_span_checker_test.go:682 — equal traffic on both nodes: nothing to do.
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_CheckBalanceTraffic_NoBalanceNeeded() {
    let mut reps = split_reps(2);
    let mut c = new_checker(&reps);
    reps[0].node = n(1);
    set_traffic(&mut c, reps[0].id, 0, [500.0; 3]);
    reps[1].node = n(2);
    set_traffic(&mut c, reps[1].id, 0, [500.0; 3]);
    reps[0].regions = 5;
    reps[1].regions = 5;
    let results = check(&mut c, &reps, &[1, 2], &cfg(1000, 10), 10);
    assert!(results.is_empty(), "{:?}", results);
}

// split_span_checker_test.go:729 — imbalanced, but the loaded node's only span is larger
// than the gap: it is split instead (one piece per node).
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_CheckBalanceTraffic_SplitIfNoMove() {
    let mut reps = split_reps(2);
    let mut c = new_checker(&reps);
    reps[0].node = n(1);
    set_traffic(&mut c, reps[0].id, 0, [1500.0; 3]);
    reps[1].node = n(2);
    set_traffic(&mut c, reps[1].id, 0, [100.0; 3]);
    reps[0].regions = 5;
    reps[1].regions = 5;
    low_lag(&mut reps);
    c.balance.status_updated = true;
    let results = check(&mut c, &reps, &[1, 2], &cfg(1000, 10), 10);
    assert_eq!(results.len(), 1, "{:?}", results);
    assert_eq!(split_of(&results[0]), Some(reps[0].id));
}

// split_span_checker_test.go:784 — one node only: no traffic balance.
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_CheckBalanceTraffic_SingleNode() {
    let mut reps = split_reps(2);
    let mut c = new_checker(&reps);
    reps[0].node = n(1);
    reps[1].node = n(1);
    set_traffic(&mut c, reps[0].id, 0, [500.0; 3]);
    set_traffic(&mut c, reps[1].id, 0, [300.0; 3]);
    reps[0].regions = 5;
    reps[1].regions = 5;
    let results = check(&mut c, &reps, &[1], &cfg(1000, 10), 10);
    assert!(results.is_empty(), "{:?}", results);
}

// split_span_checker_test.go:829 — the latest sample is imbalanced but the earlier two
// are imbalanced the other way: no balance.
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_CheckBalanceTraffic_TrafficFluctuation() {
    let mut reps = split_reps(4);
    let mut c = new_checker(&reps);
    reps[0].node = n(1);
    reps[1].node = n(1);
    set_traffic(&mut c, reps[0].id, 0, [2000.0, 300.0, 200.0]);
    set_traffic(&mut c, reps[1].id, 0, [1800.0, 250.0, 150.0]);
    reps[2].node = n(2);
    reps[3].node = n(2);
    set_traffic(&mut c, reps[2].id, 0, [100.0, 1800.0, 1600.0]);
    set_traffic(&mut c, reps[3].id, 0, [50.0, 1500.0, 1400.0]);
    let results = check(&mut c, &reps, &[1, 2], &cfg(1000, 0), 10);
    assert!(results.is_empty(), "{:?}", results);
}

// split_span_checker_test.go:902 — spans that could merge are left alone while the group
// lags (checkpoint at its start ts).
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_ChooseMergedSpans_LargeLag() {
    let mut reps = split_reps(3);
    let mut c = new_checker(&reps);
    for r in reps.iter_mut() {
        r.node = n(1);
        r.regions = 3;
        set_traffic(&mut c, r.id, 0, [200.0; 3]);
    }
    let results = check(&mut c, &reps, &[1], &cfg(1000, 20), 10);
    assert!(results.is_empty(), "{:?}", results);
}

// split_span_checker_test.go:940 — with a low lag, three adjacent small spans on one node
// are merged into one.
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_ChooseMergedSpans_Continuous() {
    let mut reps = split_reps(3);
    let mut c = new_checker(&reps);
    for r in reps.iter_mut() {
        r.node = n(1);
        r.regions = 3;
        set_traffic(&mut c, r.id, 0, [200.0; 3]);
    }
    low_lag(&mut reps);
    let results = check(&mut c, &reps, &[1], &cfg(1000, 20), 10);
    assert_eq!(results.len(), 1, "{:?}", results);
    let merged = merge_of(&results[0]).expect("a merge");
    assert_eq!(merged.len(), 3);
    for r in &reps {
        assert!(merged.contains(&r.id));
    }
}

/// 18 or 8 spans, two by two on node1 / node2, 3 regions and 200 B/s each, low lag.
fn pairs(count: usize) -> (Vec<GroupSpan>, SplitGroupChecker) {
    let mut reps = split_reps(count);
    let mut c = new_checker(&reps);
    for (i, r) in reps.iter_mut().enumerate() {
        r.node = if i % 4 < 2 { n(1) } else { n(2) };
        r.regions = 3;
        set_traffic(&mut c, r.id, 0, [200.0; 3]);
    }
    low_lag(&mut reps);
    (reps, c)
}

// split_span_checker_test.go:997 — nine mergeable pairs, a batch of 20: at most 8 Merge
// results per group, each of two spans.
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_ChooseMergedSpans_LimitsMergeResultsPerGroup() {
    let (reps, mut c) = pairs(18);
    let results = check(&mut c, &reps, &[1, 2], &cfg(1000, 20), 20);
    assert_eq!(results.len(), 8, "{:?}", results);
    for r in &results {
        assert_eq!(merge_of(r).expect("a merge").len(), 2);
    }
}

// split_span_checker_test.go:1049 — four mergeable pairs, a batch of 3: three merges.
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_ChooseMergedSpans_RespectsBatchSizeBelowMergeLimit() {
    let (reps, mut c) = pairs(8);
    let results = check(&mut c, &reps, &[1, 2], &cfg(1000, 20), 3);
    assert_eq!(results.len(), 3, "{:?}", results);
    for r in &results {
        assert_eq!(merge_of(r).expect("a merge").len(), 2);
    }
}

// split_span_checker_test.go:1101 — choosing merges with a batch of 0 yields none (and
// the spans sorted by start key are all the group's spans).
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_ChooseMergedSpans_ZeroBatchReturnsNoResults() {
    let mut reps = split_reps(2);
    let mut c = new_checker(&reps);
    for r in reps.iter_mut() {
        r.node = n(1);
        r.regions = 3;
        set_traffic(&mut c, r.id, 0, [200.0; 3]);
    }
    let (results, sorted) = c.choose_merged_spans_for(&reps, 1000, 20, 0);
    assert!(results.is_empty(), "{:?}", results);
    assert_eq!(sorted, reps.len());
}

// split_span_checker_test.go:1135 — no adjacent same-node spans: the light span 2 of
// node1 moves to node2 next to its neighbours.
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_ChooseMoveSpans_SimpleMove() {
    let mut reps = split_reps(5);
    let mut c = new_checker(&reps);
    for (i, node) in [1, 2, 1, 2, 1].into_iter().enumerate() {
        reps[i].node = n(node);
    }
    for (i, r) in reps.iter_mut().enumerate() {
        r.regions = 3;
        let t = match i / 2 {
            0 => 500.0,
            1 => 40.0,
            _ => 100.0,
        };
        set_traffic(&mut c, r.id, 0, [t; 3]);
    }
    low_lag(&mut reps);
    let results = check(&mut c, &reps, &[1, 2], &cfg(1000, 20), 10);
    assert_eq!(results.len(), 1, "{:?}", results);
    let (moved, target) = move_of(&results[0]).expect("a move");
    assert_eq!(target, n(2));
    assert_eq!(moved, vec![reps[2].id]);
}

// split_span_checker_test.go:1204 — six equal spans alternating over two nodes: moves
// paired with compensating moves back, four in all.
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_ChooseMoveSpans_ExchangeMove() {
    let mut reps = split_reps(6);
    let mut c = new_checker(&reps);
    for (i, r) in reps.iter_mut().enumerate() {
        r.node = if i % 2 == 0 { n(1) } else { n(2) };
        r.regions = 3;
        set_traffic(&mut c, r.id, 0, [100.0; 3]);
    }
    low_lag(&mut reps);
    let results = check(&mut c, &reps, &[1, 2], &cfg(1000, 20), 10);
    assert_eq!(results.len(), 4, "{:?}", results);
    for r in &results {
        assert!(move_of(r).is_some(), "{:?}", r);
    }
}

/// Four spans: 0 and 1 on node1, 2 and 3 on node2, low lag.
fn full_flow(spec: [(u32, u64, f64); 4]) -> (Vec<GroupSpan>, SplitGroupChecker) {
    let mut reps = split_reps(4);
    let mut c = new_checker(&reps);
    for (i, (score, regions, traffic)) in spec.into_iter().enumerate() {
        reps[i].node = if i < 2 { n(1) } else { n(2) };
        reps[i].regions = regions;
        set_traffic(&mut c, reps[i].id, score, [traffic; 3]);
    }
    low_lag(&mut reps);
    (reps, c)
}

// split_span_checker_test.go:1266 — a hot span (score 4) is split before anything else.
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_Check_FullFlow() {
    let (reps, mut c) = full_flow([(4, 5, 1500.0), (0, 5, 800.0), (0, 3, 300.0), (0, 3, 200.0)]);
    let results = check(&mut c, &reps, &[1, 2], &cfg(1000, 10), 10);
    assert_eq!(results.len(), 1, "{:?}", results);
    assert_eq!(split_of(&results[0]), Some(reps[0].id));
}

// split_span_checker_test.go:1342 — write threshold 0: only regions decide; the span with
// 15 regions (threshold 10) is split.
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_Check_FullFlow_WriteThresholdZero() {
    let (reps, mut c) = full_flow([(0, 3, 500.0), (0, 3, 300.0), (0, 15, 200.0), (0, 5, 100.0)]);
    let results = check(&mut c, &reps, &[1, 2], &cfg(0, 10), 10);
    assert_eq!(results.len(), 1, "{:?}", results);
    assert_eq!(split_of(&results[0]), Some(reps[2].id));
}

// split_span_checker_test.go:1418 — region threshold 0: only traffic decides; the hot
// span is split.
#[test]
fn ticdc_split_span_checker_TestSplitSpanChecker_Check_FullFlow_RegionThresholdZero() {
    let (reps, mut c) = full_flow([(4, 3, 1500.0), (0, 3, 800.0), (0, 3, 300.0), (0, 3, 200.0)]);
    let results = check(&mut c, &reps, &[1, 2], &cfg(1000, 0), 10);
    assert_eq!(results.len(), 1, "{:?}", results);
    assert_eq!(split_of(&results[0]), Some(reps[0].id));
}
