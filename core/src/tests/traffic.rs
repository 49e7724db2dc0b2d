//! Write traffic (§7.2 step 1, §7.3): `EventSizePerSecond` as a dispatcher reports it,
//! the default group's traffic split (`defaultSpanSplitChecker`) and each traffic path
//! of the split-group checker (`SplitSpanChecker`), pinned at their boundaries.

use super::harness::*;
use crate::dispatcher::basic_dispatcher::Dispatcher;
use crate::maintainer::operator::Operator;
use crate::maintainer::split_balance::*;
use crate::messages::*;
use crate::types::*;
use crate::upstream::{event_size_per_second, TrafficView};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const MIB: u64 = 1024 * 1024;
/// `write-key-threshold` of these tests: TiCDC's minimum, 10 MiB/s.
const WT: u64 = 10 * MIB;
const T: TableId = 1;
const NOW_MS: u64 = 100_000;

// ------------------------------------------------------------------ dispatcher side

/// A table written at a constant rate, spread over its key space.
struct Constant(u64);
impl TrafficView for Constant {
    fn span_write_bytes(&self, span: &TableSpan, from_ms: u64, to_ms: u64) -> u64 {
        crate::upstream::span_share(span, self.0 * (to_ms - from_ms) / 1000)
    }
}

#[test]
fn a_dispatcher_reports_its_spans_share_since_the_last_query() {
    let halves = split_span_evenly(&TableSpan::full(T), 2);
    let mut d = Dispatcher::new(d(1), halves[0], 0, START, false, false);
    d.traffic_since_ms = 1_000;
    // Half the key space of a 40 MiB/s table over 10 s: 20 MiB/s.
    let st = d.complete_status(11_000, &Constant(40 * MIB));
    assert_eq!(st.event_size_per_second, 20 * MIB);
    assert_eq!(d.traffic_since_ms, 11_000, "the query resets the window");
    // Nothing written: TiCDC's idle 1 byte/s, never 0 (0 means "no sample").
    assert_eq!(d.complete_status(21_000, &Constant(0)).event_size_per_second, 1);
    assert_eq!(event_size_per_second(0, 10_000), 1);
    assert_eq!(event_size_per_second(5, 10_000), 1, "a trickle rounds up to 1");
    // A status outside a complete heartbeat carries no sample.
    assert_eq!(d.status().event_size_per_second, 0);
}

// ------------------------------------------------------------------ split-group checker

fn spans(nodes_of: &[u32]) -> Vec<GroupSpan> {
    let pieces = split_span_evenly(&TableSpan::full(T), nodes_of.len() as u64);
    nodes_of
        .iter()
        .zip(pieces)
        .enumerate()
        .map(|(i, (node, span))| GroupSpan {
            id: d(101 + i as u64),
            span,
            node: n(*node),
            regions: 10,
            checkpoint_ts: ts_from_ms(NOW_MS),
        })
        .collect()
}

/// A checker whose span i had `traffic[i]` in each of its three samples.
fn warm(s: &[GroupSpan], traffic: &[u64]) -> SplitGroupChecker {
    let mut c = SplitGroupChecker::default();
    for (sp, t) in s.iter().zip(traffic) {
        c.spans.insert(sp.id, SpanTraffic::default());
        for _ in 0..3 {
            c.update_status(&sp.id, *t, WT);
        }
    }
    c
}

fn check(c: &mut SplitGroupChecker, s: &[GroupSpan], score_threshold: u32) -> Vec<SplitCheckResult> {
    let alive = nodes(&[0, 1, 2]);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    // Region threshold 0: only traffic decides.
    c.check(
        &GroupCheck {
            table: T,
            spans: s,
            alive: &alive,
            region_threshold: 0,
            write_threshold: WT,
            balance_score_threshold: score_threshold,
            now_ms: NOW_MS,
            batch: 10_000,
        },
        &mut rng,
    )
}

#[test]
fn the_traffic_score_counts_samples_at_or_over_the_threshold_in_a_row() {
    let mut t = SpanTraffic::default();
    t.sample(WT, WT);
    t.sample(WT + 1, WT);
    assert_eq!(t.score, 2);
    t.sample(0, WT);
    assert_eq!(t.score, 2, "a status without a sample changes nothing");
    t.sample(WT - 1, WT);
    assert_eq!(t.score, 0, "one sample below resets it");
    assert_eq!(t.last_three, [(WT - 1) as f64, (WT + 1) as f64, WT as f64]);
}

#[test]
fn a_split_span_is_re_split_by_traffic_after_more_than_three_hot_samples() {
    let s = spans(&[0, 1, 2]);
    // Three samples of 25 MiB/s on span 0: score 3, not above 3 yet.
    let mut c = warm(&s, &[25 * MIB, MIB, MIB]);
    assert!(!check(&mut c, &s, 20).iter().any(|r| matches!(r, SplitCheckResult::Split { .. })));
    // A fourth: split into ceil(25 / 10) = 3 pieces on its node, by write bytes.
    c.update_status(&s[0].id, 25 * MIB, WT);
    assert_eq!(
        check(&mut c, &s, 20),
        vec![SplitCheckResult::Split {
            id: s[0].id,
            regions: 10,
            span_num: 3,
            targets: vec![n(0); 3],
            by_write_bytes: true
        }]
    );
    // With 5000 regions TiCDC uses the region-count splitter.
    let mut big = s.clone();
    big[0].regions = MAX_REGION_COUNT_FOR_WRITE_BYTES_SPLIT;
    assert!(matches!(check(&mut c, &big, 20)[0], SplitCheckResult::Split { by_write_bytes: false, .. }));
}

#[test]
fn merge_whole_needs_each_of_the_last_three_traffic_sums_at_most_half_the_threshold() {
    // Two spans on node 0, 2.5 MiB/s each: 5 MiB/s = 10 / 2 in all three samples.
    let s = spans(&[0, 0]);
    let mut c = warm(&s, &[5 * MIB / 2, 5 * MIB / 2]);
    assert_eq!(
        check(&mut c, &s, 20),
        vec![SplitCheckResult::Merge { ids: vec![s[0].id, s[1].id], step: "merge-whole" }]
    );
    // One byte more in the oldest sample: no merge-whole.
    c.spans.get_mut(&s[1].id).unwrap().last_three[2] += 1.0;
    assert!(check(&mut c, &s, 20).is_empty());
}

#[test]
fn traffic_is_balanced_after_balance_score_threshold_imbalanced_checks() {
    // Node 0: two spans of 4 and 3 MiB/s; node 1: 3 MiB/s; node 2: 2 MiB/s. Total 12,
    // average 4: node 2 (2 <= 0.8 * 4) is below the bound, the gap is
    // min(4 - 2, 7 - 4) = 2 MiB/s.
    let s = spans(&[0, 0, 1, 2]);
    let mut c = warm(&s, &[4 * MIB, 3 * MIB, 3 * MIB, 2 * MIB]);
    assert!(check(&mut c, &s, 2).is_empty(), "first imbalanced check: score 1");
    assert_eq!(c.balance.score, 1);
    assert_eq!(c.balance.cause, BalanceCause::Both, "a min-node imbalance counts for both, as in TiCDC");
    // No status since the last check: the condition is not scored again.
    assert!(check(&mut c, &s, 2).is_empty());
    assert_eq!(c.balance.score, 1);
    // A new sample, second imbalanced check: no span of node 0 is at most the 2 MiB/s
    // gap, so the largest span at most twice the gap (4 MiB/s) is split, one piece on
    // each of the least and the most loaded node.
    c.update_status(&s[3].id, 2 * MIB, WT);
    assert_eq!(
        check(&mut c, &s, 2),
        vec![SplitCheckResult::Split {
            id: s[0].id,
            regions: 10,
            span_num: 2,
            targets: vec![n(2), n(0)],
            by_write_bytes: true
        }]
    );
    assert_eq!(c.balance, BalanceCondition::default(), "reset after acting");
}

#[test]
fn traffic_balance_moves_spans_that_fit_the_gap() {
    // Node 0: 1, 1 and 6 MiB/s; node 1: 4; node 2: 0.5. Average 12.5 / 3 ~ 4.17; the gap
    // is min(4.17 - 0.5, 8 - 4.17) ~ 3.67: the 1 MiB/s spans fit (closest below first).
    let s = spans(&[0, 0, 0, 1, 2]);
    let mut c = warm(&s, &[MIB, MIB, 6 * MIB, 4 * MIB, MIB / 2]);
    assert_eq!(
        check(&mut c, &s, 1),
        vec![SplitCheckResult::Move { ids: vec![s[1].id, s[0].id], target: n(2), step: "traffic-balance" }]
    );
}

#[test]
fn no_traffic_balance_when_every_node_stays_at_or_below_one_mib() {
    let s = spans(&[0, 0, 1, 2]);
    let mut c = warm(&s, &[MIB / 2, MIB / 2, MIB / 2, 1]);
    assert!(check(&mut c, &s, 1).iter().all(|r| !matches!(r, SplitCheckResult::Move { step: "traffic-balance", .. })));
    assert_eq!(c.balance.score, 0);
    // 1 MiB + 1 byte on node 0: imbalanced (node 2 is idle).
    let mut c = warm(&s, &[MIB / 2, MIB / 2 + 1, MIB / 2, 1]);
    assert!(!check(&mut c, &s, 1).is_empty());
}

#[test]
fn merge_runs_stay_within_three_quarters_of_the_write_threshold() {
    // Ten spans on node 0 with 2.5 MiB/s each (25 MiB/s): above the merge-whole bound;
    // the span-count bound is 2 * max(ceil(25 / 10), 3) = 6 < 10. Runs of at most
    // 7.5 MiB/s: three spans each, after five consecutive checks.
    let s = spans(&[0; 10]);
    let mut c = warm(&s, &[5 * MIB / 2; 10]);
    for _ in 0..MERGE_CHECK_THRESHOLD - 1 {
        assert!(check(&mut c, &s, 20).is_empty());
    }
    let merges: Vec<usize> = check(&mut c, &s, 20)
        .iter()
        .map(|r| if let SplitCheckResult::Merge { ids, .. } = r { ids.len() } else { 0 })
        .collect();
    assert_eq!(merges, vec![3, 3, 3]);
    // 2.5 MiB/s + 1 byte: runs of two only.
    let mut c = warm(&s, &[5 * MIB / 2 + 1; 10]);
    c.merge_check_count = MERGE_CHECK_THRESHOLD - 1;
    let merges: Vec<usize> = check(&mut c, &s, 20)
        .iter()
        .map(|r| if let SplitCheckResult::Merge { ids, .. } = r { ids.len() } else { 0 })
        .collect();
    assert_eq!(merges, vec![2; 5]);
}

#[test]
fn the_span_count_bound_grows_with_the_traffic() {
    // Eight spans, 48 MiB/s in all on node 0: ceil(48 / 10) = 5, bound 10 >= 8 spans.
    let s = spans(&[0; 8]);
    let mut c = warm(&s, &[6 * MIB; 8]);
    for _ in 0..MERGE_CHECK_THRESHOLD + 1 {
        assert!(check(&mut c, &s, 20).is_empty());
    }
    assert_eq!(c.merge_check_count, 0, "never over the bound");
}

// ------------------------------------------------------------------ default group

/// Table 1 whole on node 0, table 2 on node 1; table-across-nodes, `write-key-threshold`
/// `wt`, no region threshold; table 1 has 64 regions.
fn default_group(wt: u64) -> MH {
    let mut schema = TestSchema::with_tables(&[1, 2]);
    schema.regions.insert(1, 64);
    let mut env = Env::new(0);
    let mut cfg = crate::config::ChangefeedConfig::default();
    cfg.scheduler.enable_table_across_nodes = true;
    cfg.scheduler.region_threshold = 0;
    cfg.scheduler.write_key_threshold = wt;
    let m = crate::maintainer::Maintainer::new(&mut env.ctx(), cf(), cfg, START, EPOCH, false, nodes(&[0, 1]));
    env.take();
    let mut h = MH { env, m, schema };
    h.bootstrap(vec![
        (0, NodeReport::spans(vec![bspan(d(11), TableSpan::full(1), ComponentState::Working, START)])),
        (1, NodeReport::spans(vec![bspan(d(12), TableSpan::full(2), ComponentState::Working, START)])),
    ]);
    h
}

/// A complete-status heartbeat of node 0 reporting table 1 at `rate`.
fn sample(h: &mut MH, rate: u64) {
    h.env.now += 10_000;
    let cp = ts_from_ms(h.env.now).max(START);
    let mut st = st(d(11), ComponentState::Working, cp);
    st.event_size_per_second = rate;
    h.handle(
        0,
        Message::HeartBeatRequest {
            redo_watermark: None,
            cf: cf(),
            watermark: Watermark { checkpoint_ts: cp, resolved_ts: cp, seq: h.env.now },
            statuses: vec![st],
            complete_status: true,
            err: None,
        },
    );
}

fn splits_after_check(h: &mut MH) -> Vec<(DispatcherId, usize)> {
    h.env.now = h.env.now.max(h.m.pipe.next_balance_check_ms);
    let mut ctx = h.env.ctx();
    h.m.run_balance_scheduler(&mut ctx, &h.schema);
    h.env.take();
    h.m.pipe
        .oc
        .running()
        .filter_map(|op| if let Operator::Split(s) = op { Some((s.id, s.split_spans.len())) } else { None })
        .collect()
}

#[test]
fn a_whole_table_span_is_split_after_three_samples_at_the_write_threshold() {
    let mut h = default_group(WT);
    sample(&mut h, 35 * MIB);
    sample(&mut h, 35 * MIB);
    assert!(splits_after_check(&mut h).is_empty(), "two samples are not enough");
    sample(&mut h, WT);
    // 2 * ceil(10 / 10) = 2 < 2 * 2 nodes: four pieces by write bytes (64 regions).
    assert_eq!(splits_after_check(&mut h), vec![(d(11), 4)]);
    let mut h = default_group(WT);
    sample(&mut h, 35 * MIB);
    sample(&mut h, 35 * MIB);
    sample(&mut h, 35 * MIB);
    // The latest sample decides: 2 * ceil(35 / 10) = 8 pieces.
    assert_eq!(splits_after_check(&mut h), vec![(d(11), 8)]);
}

#[test]
fn a_sample_below_the_threshold_resets_the_default_groups_score() {
    let mut h = default_group(WT);
    sample(&mut h, WT);
    sample(&mut h, WT);
    sample(&mut h, WT - 1);
    sample(&mut h, WT);
    assert!(splits_after_check(&mut h).is_empty());
    sample(&mut h, WT);
    sample(&mut h, WT);
    assert_eq!(splits_after_check(&mut h).len(), 1);
}

#[test]
fn write_key_threshold_zero_never_splits_by_traffic() {
    let mut h = default_group(0);
    for _ in 0..5 {
        sample(&mut h, 100 * MIB);
    }
    assert!(splits_after_check(&mut h).is_empty());
    assert_eq!(h.m.pipe.default_traffic[&d(11)].score, 0);
}

#[test]
fn a_small_write_key_threshold_is_raised_to_ten_mib() {
    let mut s = crate::config::SchedulerConfig {
        enable_table_across_nodes: true,
        write_key_threshold: 1000,
        ..Default::default()
    };
    assert!(s.adjust_write_key_threshold());
    assert_eq!(s.write_key_threshold, crate::config::MIN_WRITE_KEY_THRESHOLD);
    let mut off = crate::config::SchedulerConfig { write_key_threshold: 1000, ..Default::default() };
    assert!(!off.adjust_write_key_threshold(), "only validated with table-across-nodes");
}
