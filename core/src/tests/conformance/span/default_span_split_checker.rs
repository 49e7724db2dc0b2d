//! `maintainer/replica/default_span_split_checker_test.go`: the default group's split
//! checker. In the model it lives in the maintainer: traffic scores in
//! `Maintainer::default_traffic` (fed by Working statuses of complete-status heartbeats),
//! region counts in `Maintainer::region_counts` (the refresher, at the balance poll), and
//! its `Check` is step 1 of the balance scheduler, which admits a Split operator for
//! every ready span within the batch. So "split ready" / a check result is observed as
//! a Split operator of that span.

use crate::config::ChangefeedConfig;
use crate::maintainer::operator::Operator;
use crate::maintainer::Maintainer;
use crate::messages::*;
use crate::tests::harness::*;
use crate::types::*;

fn id_of(t: TableId) -> DispatcherId {
    d(100 + t as u64)
}

/// A maintainer with table-across-nodes, `write-key-threshold` `wt` and
/// `region-threshold` `thr`; nodes 0 and 1 alive; each table a whole span replicating on
/// node 1 with `regions` regions.
fn checker(tables: &[TableId], regions: u64, wt: u64, thr: u64) -> MH {
    let mut schema = TestSchema::with_tables(tables);
    for t in tables {
        schema.regions.insert(*t, regions);
    }
    let mut env = Env::new(0);
    let mut cfg = ChangefeedConfig::default();
    cfg.scheduler.enable_table_across_nodes = true;
    cfg.scheduler.write_key_threshold = wt;
    cfg.scheduler.region_threshold = thr;
    let m = Maintainer::new(&mut env.ctx(), cf(), cfg, START, EPOCH, false, nodes(&[0, 1]));
    env.take();
    let mut h = MH { env, m, schema };
    let spans = tables.iter().map(|t| bspan(id_of(*t), TableSpan::full(*t), ComponentState::Working, START)).collect();
    h.bootstrap(vec![(1, NodeReport::spans(spans))]);
    h
}

/// A complete-status heartbeat from node 1 with one status of table `t`'s span.
fn status(h: &mut MH, t: TableId, state: ComponentState, event_size: u64) {
    let mut s = st(id_of(t), state, START);
    s.event_size_per_second = event_size;
    h.env.now += 10_000;
    let seq = h.env.now;
    h.handle(
        1,
        Message::HeartBeatRequest {
            redo_watermark: None,
            cf: cf(),
            watermark: Watermark { checkpoint_ts: START, resolved_ts: START, seq },
            statuses: vec![s],
            complete_status: true,
            err: None,
        },
    );
}

fn score(h: &MH, t: TableId) -> u32 {
    h.m.pipe.default_traffic.get(&id_of(t)).map(|s| s.score).unwrap_or(0)
}

/// `Check`: the balance scheduler at its next wake-up; the spans it splits.
fn check(h: &mut MH) -> Vec<DispatcherId> {
    h.env.now = h.env.now.max(h.m.pipe.next_balance_check_ms);
    let mut ctx = h.env.ctx();
    h.m.run_balance_scheduler(&mut ctx, &h.schema);
    h.env.take();
    h.m.pipe.oc.running().filter_map(|op| if let Operator::Split(s) = op { Some(s.id) } else { None }).collect()
}

// default_span_split_checker_test.go:43 — a whole-table span is tracked once, with no
// traffic score and no region count yet; tracking it again adds nothing.
#[test]
fn ticdc_default_span_split_checker_TestDefaultSpanSplitChecker_AddReplica() {
    let mut h = checker(&[1], 1, 1000, 10);
    assert_eq!(score(&h, 1), 0);
    assert_eq!(h.m.pipe.region_counts.get(&id_of(1)).copied().unwrap_or(0), 0);
    check(&mut h);
    assert_eq!(h.m.pipe.region_counts.len(), 1);
    assert!(h.m.pipe.region_counts.contains_key(&id_of(1)));
    check(&mut h);
    assert_eq!(h.m.pipe.region_counts.len(), 1, "no duplicate");
}

// default_span_split_checker_test.go:75 — a removed span leaves the checker.
#[test]
fn ticdc_default_span_split_checker_TestDefaultSpanSplitChecker_RemoveReplica() {
    let mut h = checker(&[1, 2], 1, 1000, 10);
    status(&mut h, 1, ComponentState::Working, 500);
    assert!(h.m.pipe.default_traffic.contains_key(&id_of(1)));
    h.m.pipe.sc.remove(&id_of(1));
    check(&mut h);
    assert!(!h.m.pipe.default_traffic.contains_key(&id_of(1)));
    assert!(h.m.pipe.default_traffic.len() <= 1);
}

// default_span_split_checker_test.go:99 — the score resets below the write threshold,
// counts samples at or over it, is ready to split at 3, and ignores a zero sample.
#[test]
fn ticdc_default_span_split_checker_TestDefaultSpanSplitChecker_UpdateStatus_TrafficCheck() {
    // 5 regions: below the region threshold, so only traffic can make it ready.
    let mut h = checker(&[1], 5, 1000, 10);
    status(&mut h, 1, ComponentState::Working, 500);
    assert_eq!(score(&h, 1), 0);
    status(&mut h, 1, ComponentState::Working, 1500);
    assert_eq!(score(&h, 1), 1);
    status(&mut h, 1, ComponentState::Working, 1500);
    assert_eq!(score(&h, 1), 2);
    status(&mut h, 1, ComponentState::Working, 1500);
    assert_eq!(score(&h, 1), 3);
    status(&mut h, 1, ComponentState::Working, 0);
    assert_eq!(score(&h, 1), 3, "a zero sample does not change the score");
    assert_eq!(check(&mut h), vec![id_of(1)], "split ready");
}

// default_span_split_checker_test.go:156 — a span with 6 regions (threshold 5) gets its
// region count and is ready to split.
#[test]
fn ticdc_default_span_split_checker_TestDefaultSpanSplitChecker_UpdateStatus_RegionCheck() {
    let mut h = checker(&[1], 6, 1000, 5);
    status(&mut h, 1, ComponentState::Working, 500);
    let split = check(&mut h);
    assert_eq!(h.m.pipe.region_counts.get(&id_of(1)), Some(&6));
    assert_eq!(split, vec![id_of(1)]);
}

// default_span_split_checker_test.go:237 — a Stopped status carries no traffic sample.
#[test]
fn ticdc_default_span_split_checker_TestDefaultSpanSplitChecker_UpdateStatus_NonWorkingStatus() {
    let mut h = checker(&[1], 1, 1000, 5);
    status(&mut h, 1, ComponentState::Stopped, 1500);
    assert_eq!(score(&h, 1), 0);
}

// default_span_split_checker_test.go:267 — low traffic but 10 regions (threshold 5): the
// check returns that span.
#[test]
fn ticdc_default_span_split_checker_TestDefaultSpanSplitChecker_CheckRegionSplit() {
    let mut h = checker(&[1], 10, 1000, 5);
    status(&mut h, 1, ComponentState::Working, 500);
    assert_eq!(check(&mut h), vec![id_of(1)]);
}

// default_span_split_checker_test.go:316 — five split-ready spans, a batch of 3: three
// results.
#[test]
fn ticdc_default_span_split_checker_TestDefaultSpanSplitChecker_Check_BatchLimit() {
    let tables: Vec<TableId> = (1..=5).collect();
    // 4 regions each: below the region threshold (5), enough for a write-bytes split.
    let mut h = checker(&tables, 4, 1000, 5);
    h.m.config.scheduler.balance_move_batch_size = 3;
    for t in &tables {
        let s = h.m.pipe.default_traffic.entry(id_of(*t)).or_default();
        s.score = 5;
        s.latest = 1500.0;
    }
    assert_eq!(check(&mut h).len(), 3);
}

// default_span_split_checker_test.go:352 — nothing to split with no span ready, nor with
// one span of low traffic and few regions.
#[test]
fn ticdc_default_span_split_checker_TestDefaultSpanSplitChecker_Check_EmptyResults() {
    let mut h = checker(&[], 1, 1000, 5);
    assert!(check(&mut h).is_empty());
    let mut h = checker(&[1], 1, 1000, 5);
    status(&mut h, 1, ComponentState::Working, 500);
    assert!(check(&mut h).is_empty());
}
