//! Balance scheduler of split-table groups (§7.3): `balanceSplitsScheduler`
//! (`maintainer/scheduler/balance_splits.go`) and its per-group checker
//! `SplitSpanChecker` (`maintainer/replica/split_span_checker.go`).
//!
//! The spans of one table split across nodes (`enable-table-across-nodes`) form a group
//! of their own. With table-across-nodes on, the maintainer keeps one
//! [`SplitGroupChecker`] per group (created with the group's first task, dropped with its
//! last, like TiCDC's `replicationDB` groups) and, on every run of the checker-scheduler
//! loop with no operator running and no span Absent, checks every group whose tasks are
//! all Replicating. One check yields at most one kind of step, in TiCDC's order:
//!
//! 1. **re-split**: a span whose traffic score (consecutive traffic samples at or over
//!    `write-key-threshold`) is above 3 is split into `ceil(traffic / write-threshold)`
//!    pieces by write bytes; otherwise a span with more than `region-threshold` regions
//!    is split into `ceil(regions / threshold)` pieces; all placed back on its node (Split
//!    operator with targets);
//! 2. **merge whole**: when the group's regions add up to at most `threshold / 2` and each
//!    of its last three traffic sums is at most `write-key-threshold / 2`, every span
//!    moves to one node (chosen like Go's map iteration: at random among the nodes hosting
//!    spans), and once they all sit there, one Merge operator merges them all (the table
//!    is one span again, in the default group);
//! 3. **traffic balance**: when some node's traffic was above 1 MiB/s in one of the last
//!    three samples and the least loaded node was at most 80 % of the average three times
//!    in a row (or the most loaded at least 125 % and above 1 MiB/s), the imbalance scores
//!    a point ([`BalanceCondition`]); at `balance-score-threshold` points spans of the
//!    most loaded node whose traffic adds up to at most the gap move to the least loaded
//!    one (at most 4), or, if none is small enough, one span is split in two, one piece on
//!    each of the two nodes;
//! 4. **merge adjacent spans**: when the lag is below 30 s and the group has more than
//!    `2 * max(ceil(traffic / write-threshold), ceil(regions / threshold), nodes)` spans
//!    for 5 consecutive checks, runs of adjacent same-node spans are merged while a run
//!    stays within `threshold / 4 * 3` regions (integer division first, as in Go) and
//!    `write-threshold * 3 / 4` bytes/s, at most 8 Merge operators per group per round;
//! 5. **moves that enable merges**: if nothing could be merged, a node without a span of
//!    the group gets a random span of the most loaded node; otherwise spans move next to
//!    an adjacent span on another node (cheapest nodes first, up to 16 moves), each move
//!    kept only if it does not widen the per-node spread, or paired with a compensating
//!    move back.
//!
//! The consecutive-check counter is reset by every check that does not reach the merge
//! condition of step 4 (an early return of steps 1-3, a group not yet available, a lag
//! of 30 s or more, a span count within the bound). A group with a task that is not
//! Replicating is skipped without a check, so its counter is kept.
//!
//! ## Traffic
//!
//! Each span's traffic is the `EventSizePerSecond` of the complete-status heartbeats
//! (every 10 s) of its dispatcher: bytes per second since the previous one, 1 when idle
//! (`TableProgress.GetEventSizePerSecond`); the simulated upstream writes a table's
//! bytes evenly over its key space ([`crate::upstream::TrafficView`]). The checker keeps
//! the last three samples per span (`lastThreeTraffic`) and a traffic score. What
//! follows from it:
//!
//! - a group is checked only once each of its spans has received three complete-status
//!   samples (`checkAllTaskAvailableLocked` wants three non-zero samples), so a new span
//!   waits about 20-30 s before its group is checked;
//! - with `write-key-threshold` at TiCDC's default 0 nothing is split, bounded or merged
//!   by traffic; step 3 never acts below 1 MB/s (`minTrafficBalanceThreshold`);
//! - the per-node traffic orders the nodes of steps 3 and 5 (ties by node ID, ascending
//!   for odd table IDs and descending for even ones, as TiCDC orders equal traffic by
//!   group-ID parity); at idle every span weighs 1, so a node weighs its span count;
//! - a split by traffic uses TiCDC's write-bytes splitter when the span has fewer than
//!   5000 regions (`GetSplitType`); with bytes spread evenly over regions it cuts the
//!   span into `min(pieces, regions)` equal pieces (PD's per-region written bytes are
//!   not modelled), so a one-region span cannot be split by traffic.
//!
//! Other simplifications: the groups are checked in table-ID order (TiCDC: Go map
//! order; the order matters only when the batch runs out); a span's region count is
//! read from the region-count refresher at check time (TiCDC copies it into the checker
//! at each Working status, at most one complete-status interval earlier); a gap between
//! two spans of a group ends a merge run (TiCDC panics); a group with no span on an alive
//! node is not merged (TiCDC would move it to the empty node ID).

use crate::config::{MAX_TRAFFIC_PERCENTAGE, MIN_TRAFFIC_PERCENTAGE};
use crate::coverage::{hit, Point as P};
use crate::types::*;
use std::collections::{BTreeMap, BTreeSet};

/// The period `balanceSplitsScheduler.Execute` asks for (15 s, fixed).
pub const BALANCE_SPLIT_INTERVAL_MS: u64 = 15_000;
/// Traffic samples (`lastThreeTraffic`) a span needs before its group is checked.
pub const TRAFFIC_SAMPLES: u8 = 3;
/// `mergeThreshold`: consecutive checks over the span-count bound before merging.
pub const MERGE_CHECK_THRESHOLD: u32 = 5;
/// `maxLagThreshold` (30 s): no merge while the group lags more.
pub const MAX_MERGE_LAG_MS: u64 = 30_000;
/// `maxMergeOperatorsPerGroup`.
pub const MAX_MERGE_OPERATORS_PER_GROUP: usize = 8;
/// `maxMoveSpansCountForMerge`.
pub const MAX_MOVE_SPANS_FOR_MERGE: usize = 16;
/// `maxMoveSpansCountForTrafficBalance`.
pub const MAX_MOVE_SPANS_FOR_TRAFFIC_BALANCE: usize = 4;
/// `minTrafficBalanceThreshold` (1 MiB/s): below it on every node, no traffic balance.
pub const MIN_TRAFFIC_BALANCE_THRESHOLD: f64 = 1024.0 * 1024.0;
/// `trafficScoreThreshold`: consecutive samples over `write-key-threshold` (the default
/// group's checker splits at `>=`, the split-group checker at `>`).
pub const TRAFFIC_SCORE_THRESHOLD: u32 = 3;
/// `MaxRegionCountForWriteBytesSplit`: `GetSplitType` picks the write-bytes splitter
/// below this region count.
pub const MAX_REGION_COUNT_FOR_WRITE_BYTES_SPLIT: u64 = 5000;

/// Traffic state of one span (`splitSpanStatus`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpanTraffic {
    /// `lastThreeTraffic`: index 0 is the latest sample; 0 means no sample yet.
    pub last_three: [f64; 3],
    /// `trafficScore`: consecutive samples at or over the write threshold.
    pub score: u32,
}

impl SpanTraffic {
    /// `UpdateStatus` with a sample (`EventSizePerSecond != 0`).
    pub fn sample(&mut self, event_size: u64, write_threshold: u64) {
        if event_size == 0 {
            return;
        }
        if event_size < write_threshold {
            self.score = 0;
        } else {
            self.score += 1;
        }
        self.last_three = [event_size as f64, self.last_three[0], self.last_three[1]];
    }
    pub fn latest(&self) -> f64 {
        self.last_three[0]
    }
}

/// `BalanceCause`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BalanceCause {
    #[default]
    None,
    MinNode,
    MaxNode,
    Both,
}

/// `BalanceCondition`: how many checks in a row found the same imbalance.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BalanceCondition {
    pub min_node: Option<NodeId>,
    pub max_node: Option<NodeId>,
    pub score: u32,
    pub cause: BalanceCause,
    /// A Working status reached the checker since the last scoring.
    pub status_updated: bool,
}

impl BalanceCondition {
    pub fn reset(&mut self) {
        *self = BalanceCondition::default();
    }

    fn init_first(&mut self, min: NodeId, max: NodeId, by_min: bool, by_max: bool) {
        self.reset();
        self.score = 1;
        self.cause = match (by_min, by_max) {
            (true, true) => BalanceCause::Both,
            (false, true) => BalanceCause::MaxNode,
            (true, false) => BalanceCause::MinNode,
            (false, false) => BalanceCause::None,
        };
        self.min_node = Some(min);
        self.max_node = Some(max);
    }

    /// `updateScore`: a point if the node that caused the imbalance is the same as last
    /// time, else start over at 1.
    pub fn update_score(&mut self, min: NodeId, max: NodeId, by_min: bool, by_max: bool) {
        if self.score == 0 {
            self.init_first(min, max, by_min, by_max);
        } else {
            let (same_min, same_max) = (self.min_node == Some(min), self.max_node == Some(max));
            match self.cause {
                BalanceCause::Both if same_min && same_max => self.score += 1,
                BalanceCause::Both if same_min => {
                    self.score += 1;
                    self.cause = BalanceCause::MinNode;
                }
                BalanceCause::Both if same_max => {
                    self.score += 1;
                    self.cause = BalanceCause::MaxNode;
                }
                BalanceCause::MaxNode if same_max => self.score += 1,
                BalanceCause::MinNode if same_min => self.score += 1,
                // TiCDC's switch has no case for `none` (it cannot be scored): unchanged.
                BalanceCause::None => {}
                _ => self.init_first(min, max, by_min, by_max),
            }
        }
        self.status_updated = false;
    }
}

/// The checker's tunables that TiCDC keeps as package variables or per-changefeed
/// settings the model does not configure: production values by default; TiCDC's own
/// unit tests lower some of them (`SetEasyThresholdForTest`,
/// `maintainer/replica/split_span_checker.go:1273`) and set the traffic percentages.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckerTuning {
    /// `minTrafficBalanceThreshold` (bytes/s).
    pub min_traffic_balance_threshold: f64,
    /// `maxLagThreshold` (ms).
    pub max_merge_lag_ms: u64,
    /// `mergeThreshold`.
    pub merge_check_threshold: u32,
    /// `min-traffic-percentage`.
    pub min_traffic_percentage: f64,
    /// `max-traffic-percentage`.
    pub max_traffic_percentage: f64,
}

impl Default for CheckerTuning {
    fn default() -> Self {
        CheckerTuning {
            min_traffic_balance_threshold: MIN_TRAFFIC_BALANCE_THRESHOLD,
            max_merge_lag_ms: MAX_MERGE_LAG_MS,
            merge_check_threshold: MERGE_CHECK_THRESHOLD,
            min_traffic_percentage: MIN_TRAFFIC_PERCENTAGE,
            max_traffic_percentage: MAX_TRAFFIC_PERCENTAGE,
        }
    }
}

/// Per-group state of `SplitSpanChecker` that outlives one check.
#[derive(Clone, Debug, Default)]
pub struct SplitGroupChecker {
    /// Traffic samples and score per span (`allTasks`).
    pub spans: BTreeMap<DispatcherId, SpanTraffic>,
    /// `mergeCheckCount`.
    pub merge_check_count: u32,
    /// `balanceCondition`.
    pub balance: BalanceCondition,
    /// Thresholds (production values unless a test sets them).
    pub tuning: CheckerTuning,
}

/// One Replicating span of a group as the checker sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupSpan {
    pub id: DispatcherId,
    pub span: TableSpan,
    pub node: NodeId,
    /// Region count from the refresher (0 when unknown or the threshold is 0).
    pub regions: u64,
    /// The span's last reported checkpoint.
    pub checkpoint_ts: Ts,
}

/// What a check asks the scheduler to do (`SplitSpanCheckResult`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SplitCheckResult {
    /// Split a span into `span_num` pieces, each placed on `targets[i]`: by write bytes
    /// (`SplitTypeWriteBytes`) or by region count.
    Split { id: DispatcherId, regions: u64, span_num: u64, targets: Vec<NodeId>, by_write_bytes: bool },
    /// Merge these adjacent spans of one node, in key order.
    Merge { ids: Vec<DispatcherId>, step: &'static str },
    /// Move these spans to `target`.
    Move { ids: Vec<DispatcherId>, target: NodeId, step: &'static str },
}

/// The inputs of one group check.
pub struct GroupCheck<'a> {
    pub table: TableId,
    pub spans: &'a [GroupSpan],
    pub alive: &'a BTreeSet<NodeId>,
    pub region_threshold: u64,
    /// `write-key-threshold` (0: traffic decisions off).
    pub write_threshold: u64,
    /// `balance-score-threshold`.
    pub balance_score_threshold: u32,
    pub now_ms: u64,
    pub batch: usize,
}

/// `GetSplitType`: the write-bytes splitter for spans with fewer than 5000 regions.
pub fn split_by_write_bytes(regions: u64) -> bool {
    regions < MAX_REGION_COUNT_FOR_WRITE_BYTES_SPLIT
}

impl SplitGroupChecker {
    /// `checkAllTaskAvailableLocked`: every span has its three traffic samples.
    pub fn available(&self) -> bool {
        self.spans.values().all(|s| s.last_three.iter().all(|t| *t != 0.0))
    }

    /// `UpdateStatus`: a Working status of the span; a complete-status one carries a
    /// traffic sample (`event_size != 0`).
    pub fn update_status(&mut self, id: &DispatcherId, event_size: u64, write_threshold: u64) {
        if let Some(s) = self.spans.get_mut(id) {
            s.sample(event_size, write_threshold);
            self.balance.status_updated = true;
        }
    }

    fn traffic(&self, id: &DispatcherId) -> SpanTraffic {
        self.spans.get(id).cloned().unwrap_or_default()
    }

    /// `SplitSpanChecker.Check`.
    pub fn check(&mut self, c: &GroupCheck, rng: &mut dyn rand::RngCore) -> Vec<SplitCheckResult> {
        let mut wait_merge = false;
        let results = self.check_steps(c, rng, &mut wait_merge);
        if !wait_merge {
            self.merge_check_count = 0;
        }
        results
    }

    fn check_steps(
        &mut self,
        c: &GroupCheck,
        rng: &mut dyn rand::RngCore,
        wait_merge: &mut bool,
    ) -> Vec<SplitCheckResult> {
        if !self.available() || c.spans.is_empty() {
            return vec![];
        }
        let thr = c.region_threshold;
        let wt = c.write_threshold;
        // Step 1, with the per-node tallies the later steps use (spans on alive nodes).
        let mut tally = Tally::new(c.alive);
        let mut total_regions = 0u64;
        let mut results = Vec::new();
        for s in c.spans {
            let tr = self.traffic(&s.id);
            if !tally.add(s, &tr) {
                continue; // not on an alive node
            }
            total_regions += s.regions;
            if wt > 0 && tr.score > TRAFFIC_SCORE_THRESHOLD {
                hit(P::SplitCheckSplitByTraffic);
                let n = (tr.latest() / wt as f64).ceil() as u64;
                results.push(SplitCheckResult::Split {
                    id: s.id,
                    regions: s.regions,
                    span_num: n,
                    targets: vec![s.node; n as usize],
                    by_write_bytes: split_by_write_bytes(s.regions),
                });
                continue;
            }
            if thr > 0 && s.regions > thr {
                hit(P::SplitCheckSplitByRegions);
                let n = s.regions.div_ceil(thr);
                results.push(SplitCheckResult::Split {
                    id: s.id,
                    regions: s.regions,
                    span_num: n,
                    targets: vec![s.node; n as usize],
                    by_write_bytes: false,
                });
            }
        }
        if !results.is_empty() {
            return results;
        }
        // Step 2: merge the whole group back into one span.
        let traffic_low = wt == 0 || tally.sum.iter().all(|t| *t <= wt as f64 / 2.0);
        if (thr == 0 || total_regions <= thr / 2) && traffic_low {
            hit(P::SplitCheckMergeWhole);
            return merge_whole(c, &tally.load, rng);
        }
        // Step 3: traffic balance; it also names the least and the most loaded node.
        let (min_node, max_node) = min_max_nodes(c.table, &tally.per_node);
        let results = self.check_balance_traffic(c, &tally, min_node, max_node);
        if !results.is_empty() {
            hit(P::SplitCheckBalanceTraffic);
            return results;
        }
        // Step 4: merge adjacent spans once the group has too many for long enough.
        let min_cp = c.spans.iter().map(|s| s.checkpoint_ts).min().unwrap_or(0);
        if c.now_ms.saturating_sub(ts_to_ms(min_cp)) > self.tuning.max_merge_lag_ms {
            return vec![];
        }
        let by_traffic = if wt > 0 { (tally.sum[0] / wt as f64).ceil() as usize } else { 0 };
        let by_regions = if thr > 0 { total_regions.div_ceil(thr) as usize } else { 0 };
        let upper = by_traffic.max(by_regions).max(c.alive.len()) * 2;
        if upper >= c.spans.len() {
            return vec![];
        }
        *wait_merge = true;
        self.merge_check_count += 1;
        if self.merge_check_count < self.tuning.merge_check_threshold {
            hit(P::SplitCheckMergeWaiting);
            return vec![];
        }
        let sorted = self.sorted_by_start(c.spans);
        let merges = choose_merged_spans(&sorted, thr, wt, c.batch);
        if !merges.is_empty() {
            hit(P::SplitCheckMergeAdjacent);
            return merges;
        }
        // Step 5: moves that make merges possible.
        hit(P::SplitCheckMoveForMerge);
        choose_move_spans(min_node, max_node, &sorted, &tally, thr, wt, rng)
    }

    /// The group's spans by start key, each with its latest traffic.
    fn sorted_by_start<'s>(&self, spans: &'s [GroupSpan]) -> Vec<(&'s GroupSpan, f64)> {
        let mut sorted: Vec<(&GroupSpan, f64)> = spans.iter().map(|s| (s, self.traffic(&s.id).latest())).collect();
        sorted.sort_by_key(|s| s.0.span.start);
        sorted
    }

    /// `chooseMergedSpans(batch)` on its own (step 4 without its guards): the Merge
    /// results and how many spans were sorted by start key.
    pub fn choose_merged_spans_for(
        &self,
        spans: &[GroupSpan],
        write_threshold: u64,
        region_threshold: u64,
        batch: usize,
    ) -> (Vec<SplitCheckResult>, usize) {
        let sorted = self.sorted_by_start(spans);
        if sorted.is_empty() {
            return (vec![], 0);
        }
        (choose_merged_spans(&sorted, region_threshold, write_threshold, batch), sorted.len())
    }

    /// `checkBalanceTraffic` after the min/max nodes are known.
    fn check_balance_traffic(
        &mut self,
        c: &GroupCheck,
        tally: &Tally,
        min_node: NodeId,
        max_node: NodeId,
    ) -> Vec<SplitCheckResult> {
        if !self.balance.status_updated {
            return vec![];
        }
        let zero = [0.0; 3];
        let node_traffic = |n: &NodeId| tally.per_node.get(n).copied().unwrap_or(zero);
        let tuning = self.tuning.clone();
        if !tally.per_node.values().any(|t| t.iter().any(|x| *x > tuning.min_traffic_balance_threshold)) {
            self.balance.reset();
            return vec![];
        }
        let nodes = c.alive.len().max(1) as f64;
        let avg = tally.sum.map(|t| t / nodes);
        let (min_t, max_t) = (node_traffic(&min_node), node_traffic(&max_node));
        // Imbalanced three times in a row: the least loaded node below 80 % of the
        // average, or else the most loaded above 125 % of it (and above 1 MiB/s). As in
        // TiCDC, a min-node imbalance counts as caused by both nodes.
        let by_min = (0..3).all(|i| min_t[i] <= avg[i] * tuning.min_traffic_percentage);
        let mut by_max = true;
        let should = by_min || {
            by_max = (0..3).all(|i| {
                !(max_t[i] < avg[i] * tuning.max_traffic_percentage || max_t[i] < tuning.min_traffic_balance_threshold)
            });
            by_max
        };
        if !should {
            self.balance.reset();
            return vec![];
        }
        self.balance.update_score(min_node, max_node, by_min, by_max);
        if self.balance.score < c.balance_score_threshold {
            return vec![];
        }
        let diff_min = avg[0] - min_t[0];
        let diff_max = max_t[0] - avg[0];
        let mut diff = diff_min.min(diff_max);
        // The most loaded node's spans by latest traffic, ascending (TiCDC: an unstable
        // sort; equal traffic keeps key order here).
        let mut on_max: Vec<(&GroupSpan, f64)> =
            c.spans.iter().filter(|s| s.node == max_node).map(|s| (s, self.traffic(&s.id).latest())).collect();
        on_max.sort_by(|a, b| a.1.total_cmp(&b.1));
        let mut moves = Vec::new();
        let mut cands: &[(&GroupSpan, f64)] = &on_max;
        while !cands.is_empty() && moves.len() < MAX_MOVE_SPANS_FOR_TRAFFIC_BALANCE {
            let Some(idx) = closest_smaller(cands, diff) else { break };
            moves.push(cands[idx].0.id);
            diff -= cands[idx].1;
            cands = &cands[..idx];
            if diff == 0.0 {
                break;
            }
        }
        self.balance.reset();
        if !moves.is_empty() {
            return vec![SplitCheckResult::Move { ids: moves, target: min_node, step: "traffic-balance" }];
        }
        // Nothing small enough to move: split the span closest below twice the gap (or
        // the smallest) into one piece on each node.
        let Some(first) = on_max.first() else { return vec![] };
        let pick = closest_smaller(&on_max, 2.0 * diff).map(|i| on_max[i].0).unwrap_or(first.0);
        vec![SplitCheckResult::Split {
            id: pick.id,
            regions: pick.regions,
            span_num: 2,
            targets: vec![min_node, max_node],
            by_write_bytes: split_by_write_bytes(pick.regions),
        }]
    }
}

/// `findClosestSmaller`: the last span before the first one whose traffic exceeds
/// `diff` (all of them if none does); spans sorted by traffic.
fn closest_smaller(spans: &[(&GroupSpan, f64)], diff: f64) -> Option<usize> {
    match spans.iter().position(|s| s.1 > diff) {
        Some(0) => None,
        Some(i) => Some(i - 1),
        None => spans.len().checked_sub(1),
    }
}

/// The per-node tallies of step 1 (`lastThreeTrafficPerNode`, `taskMap`), alive nodes only.
struct Tally<'a> {
    /// Spans per node.
    load: BTreeMap<NodeId, usize>,
    per_node: BTreeMap<NodeId, [f64; 3]>,
    sum: [f64; 3],
    /// Spans (with their latest traffic) per node.
    on_node: BTreeMap<NodeId, Vec<(&'a GroupSpan, f64)>>,
}

impl<'a> Tally<'a> {
    fn new(alive: &BTreeSet<NodeId>) -> Self {
        Tally {
            load: alive.iter().map(|n| (*n, 0)).collect(),
            per_node: alive.iter().map(|n| (*n, [0.0; 3])).collect(),
            sum: [0.0; 3],
            on_node: BTreeMap::new(),
        }
    }

    /// Counts a span; false if its node is not alive.
    fn add(&mut self, s: &'a GroupSpan, tr: &SpanTraffic) -> bool {
        let Some(l) = self.load.get_mut(&s.node) else { return false };
        *l += 1;
        let pn = self.per_node.get_mut(&s.node).unwrap();
        for ((p, s), t) in pn.iter_mut().zip(self.sum.iter_mut()).zip(tr.last_three) {
            *p += t;
            *s += t;
        }
        self.on_node.entry(s.node).or_default().push((s, tr.latest()));
        true
    }
}

/// `checkMergeWhole` once the thresholds allow it: merge if every span sits on one
/// node, else move the others to one of the nodes hosting spans.
fn merge_whole(c: &GroupCheck, load: &BTreeMap<NodeId, usize>, rng: &mut dyn rand::RngCore) -> Vec<SplitCheckResult> {
    let hosting: Vec<NodeId> = load.iter().filter(|(_, l)| **l > 0).map(|(n, _)| *n).collect();
    match hosting.len() {
        0 => vec![],
        1 => {
            let mut all: Vec<&GroupSpan> = c.spans.iter().collect();
            all.sort_by_key(|s| s.span.start);
            vec![SplitCheckResult::Merge { ids: all.iter().map(|s| s.id).collect(), step: "merge-whole" }]
        }
        _ => {
            // TiCDC keeps the last hosting node of a Go map iteration.
            let target = hosting[(rng.next_u64() % hosting.len() as u64) as usize];
            let ids = c.spans.iter().filter(|s| s.node != target).map(|s| s.id).collect();
            vec![SplitCheckResult::Move { ids, target, step: "merge-whole" }]
        }
    }
}

/// The least and the most loaded alive node by latest traffic; equal traffic ordered by
/// node ID, ascending for an odd group (table) ID, descending for an even one.
fn min_max_nodes(table: TableId, per_node: &BTreeMap<NodeId, [f64; 3]>) -> (NodeId, NodeId) {
    let mut nodes: Vec<(NodeId, f64)> = per_node.iter().map(|(n, t)| (*n, t[0])).collect();
    nodes.sort_by(|a, b| a.1.total_cmp(&b.1).then(if table % 2 != 0 { a.0.cmp(&b.0) } else { b.0.cmp(&a.0) }));
    (nodes.first().map(|x| x.0).unwrap_or_default(), nodes.last().map(|x| x.0).unwrap_or_default())
}

/// A run of spans stays within 3/4 of the thresholds: regions with Go's integer
/// division first, traffic in floating point (`float64(writeThreshold)/4*3`).
fn within_merge_bounds(regions: u64, traffic: f64, thr: u64, wt: u64) -> bool {
    let over_regions = thr > 0 && regions > thr / 4 * 3;
    let over_traffic = wt > 0 && traffic > wt as f64 / 4.0 * 3.0;
    !over_regions && !over_traffic
}

/// `chooseMergedSpans`: runs of adjacent spans on one node, each run within `3/4` of the
/// region and traffic thresholds, at most `min(batch, 8)` runs.
fn choose_merged_spans(sorted: &[(&GroupSpan, f64)], thr: u64, wt: u64, batch: usize) -> Vec<SplitCheckResult> {
    let limit = batch.min(MAX_MERGE_OPERATORS_PER_GROUP);
    let mut results = Vec::new();
    let mut run: Vec<DispatcherId> = vec![sorted[0].0.id];
    let mut regions = sorted[0].0.regions;
    let mut traffic = sorted[0].1;
    // Submits the current run; true once the limit is reached.
    let submit = |run: &Vec<DispatcherId>, results: &mut Vec<SplitCheckResult>| -> bool {
        if run.len() <= 1 {
            return false;
        }
        if results.len() >= limit {
            return true;
        }
        results.push(SplitCheckResult::Merge { ids: run.clone(), step: "merge" });
        results.len() >= limit
    };
    for w in sorted.windows(2) {
        let ((prev, _), (cur, cur_traffic)) = (w[0], w[1]);
        let breaks = prev.span.end != cur.span.start
            || prev.node != cur.node
            || !within_merge_bounds(regions + cur.regions, traffic + cur_traffic, thr, wt);
        if breaks {
            if submit(&run, &mut results) {
                return results;
            }
            run = vec![cur.id];
            regions = cur.regions;
            traffic = cur_traffic;
            continue;
        }
        run.push(cur.id);
        regions += cur.regions;
        traffic += cur_traffic;
    }
    submit(&run, &mut results);
    results
}

/// `chooseMoveSpans`.
fn choose_move_spans(
    min_node: NodeId,
    max_node: NodeId,
    sorted: &[(&GroupSpan, f64)],
    tally: &Tally,
    thr: u64,
    wt: u64,
    rng: &mut dyn rand::RngCore,
) -> Vec<SplitCheckResult> {
    let empty = Vec::new();
    let on_min = tally.on_node.get(&min_node).unwrap_or(&empty);
    let on_max = tally.on_node.get(&max_node).unwrap_or(&empty);
    if on_min.is_empty() && !on_max.is_empty() {
        let pick = on_max[(rng.next_u64() % on_max.len() as u64) as usize].0;
        return vec![SplitCheckResult::Move { ids: vec![pick.id], target: min_node, step: "move-to-empty-node" }];
    }
    let traffic: BTreeMap<NodeId, f64> = tally.per_node.iter().map(|(n, t)| (*n, t[0])).collect();
    MovePlanner::new(sorted, &traffic, thr, wt).plan(rng)
}

/// `findOptimalSpanMoves` with `canMergeAfterMove`, `findCompensationMove` and
/// `isTrafficBalanceMaintained`.
struct MovePlanner<'a> {
    sorted: &'a [(&'a GroupSpan, f64)],
    /// Latest traffic per alive node.
    traffic: &'a BTreeMap<NodeId, f64>,
    thr: u64,
    wt: u64,
    /// Planned destination of spans chosen so far.
    target_of: BTreeMap<DispatcherId, NodeId>,
    /// Spans already moved or promised to a merge.
    selected: BTreeSet<DispatcherId>,
    /// Per-node traffic after the planned moves.
    after: BTreeMap<NodeId, f64>,
    cur_min: f64,
    cur_max: f64,
}

impl<'a> MovePlanner<'a> {
    fn new(sorted: &'a [(&'a GroupSpan, f64)], traffic: &'a BTreeMap<NodeId, f64>, thr: u64, wt: u64) -> Self {
        let after = traffic.clone();
        let cur_min = after.values().copied().fold(f64::INFINITY, f64::min);
        let cur_max = after.values().copied().fold(f64::NEG_INFINITY, f64::max);
        MovePlanner {
            sorted,
            traffic,
            thr,
            wt,
            target_of: BTreeMap::new(),
            selected: BTreeSet::new(),
            after,
            cur_min,
            cur_max,
        }
    }

    /// The node a span is on once the planned moves are done.
    fn node_after(&self, s: &GroupSpan) -> NodeId {
        self.target_of.get(&s.id).copied().unwrap_or(s.node)
    }

    /// Adjacent spans that would share `target` with `s`, within 3/4 of the thresholds.
    fn mergeable_after_move(&self, i: usize, target: NodeId) -> Vec<DispatcherId> {
        let (s, s_traffic) = self.sorted[i];
        let mut adjacent = Vec::new();
        if i > 0 && self.sorted[i - 1].0.span.end == s.span.start {
            adjacent.push(self.sorted[i - 1]);
        }
        if i + 1 < self.sorted.len() && s.span.end == self.sorted[i + 1].0.span.start {
            adjacent.push(self.sorted[i + 1]);
        }
        let (mut regions, mut traffic) = (s.regions, s_traffic);
        let mut out = Vec::new();
        for (a, a_traffic) in adjacent.into_iter().filter(|a| self.node_after(a.0) == target) {
            if !within_merge_bounds(regions + a.regions, traffic + a_traffic, self.thr, self.wt) {
                continue;
            }
            regions += a.regions;
            traffic += a_traffic;
            out.push(a.id);
        }
        out
    }

    /// Applies `changes` if no node ends below the current minimum or above the
    /// current maximum. Only the alive nodes' traffic is compared, as in TiCDC.
    fn keeps_balance(&mut self, changes: &[(NodeId, f64)]) -> bool {
        let change = |n: &NodeId| changes.iter().filter(|(m, _)| m == n).map(|(_, c)| *c).sum::<f64>();
        let ok = self.after.iter().all(|(n, t)| {
            let v = t + change(n);
            v >= self.cur_min && v <= self.cur_max
        });
        if ok {
            for (n, c) in changes {
                *self.after.entry(*n).or_insert(0.0) += c;
            }
        }
        ok
    }

    fn plan(mut self, rng: &mut dyn rand::RngCore) -> Vec<SplitCheckResult> {
        // Least traffic first; equal traffic in an unspecified order (TiCDC sorts a slice
        // built from a Go map with an unstable sort).
        let mut targets: Vec<NodeId> = self.traffic.keys().copied().collect();
        for i in (1..targets.len()).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            targets.swap(i, j);
        }
        targets.sort_by(|a, b| self.traffic[a].total_cmp(&self.traffic[b]));
        let mut results = Vec::new();
        for target in targets {
            for i in 0..self.sorted.len() {
                let (s, s_traffic) = self.sorted[i];
                if results.len() >= MAX_MOVE_SPANS_FOR_MERGE {
                    return results;
                }
                if s.node == target || self.selected.contains(&s.id) {
                    continue;
                }
                let merged = self.mergeable_after_move(i, target);
                if merged.is_empty() {
                    continue;
                }
                if self.keeps_balance(&[(target, s_traffic), (s.node, -s_traffic)]) {
                    results.push(SplitCheckResult::Move { ids: vec![s.id], target, step: "move-for-merge" });
                    self.selected.insert(s.id);
                    self.target_of.insert(s.id, target);
                    self.selected.extend(merged);
                    continue;
                }
                if let Some(ci) = self.compensation(s, s_traffic, target, s.node) {
                    let comp = self.sorted[ci].0;
                    results.push(SplitCheckResult::Move { ids: vec![s.id], target, step: "move-for-merge" });
                    results.push(SplitCheckResult::Move { ids: vec![comp.id], target: s.node, step: "compensate" });
                    self.selected.insert(s.id);
                    self.target_of.insert(s.id, target);
                    self.selected.extend(merged);
                    self.selected.insert(comp.id);
                    self.target_of.insert(comp.id, s.node);
                    let also = self.mergeable_after_move(ci, s.node);
                    self.selected.extend(also);
                }
            }
        }
        results
    }

    /// `findCompensationMove`: the first span (key order) on `target` after the planned
    /// moves, other than `moved` and not selected, whose move to `source` keeps the
    /// balance together with `moved`'s move. TiCDC means to skip the spans `moved` would
    /// merge with too, but its loop over them has no effect (its `continue` belongs to
    /// the inner loop), so they are candidates here as well.
    fn compensation(&mut self, moved: &GroupSpan, moved_traffic: f64, target: NodeId, source: NodeId) -> Option<usize> {
        let cands: Vec<usize> = (0..self.sorted.len())
            .filter(|&i| {
                let s = self.sorted[i].0;
                s.id != moved.id && !self.selected.contains(&s.id) && self.node_after(s) == target
            })
            .collect();
        cands.into_iter().find(|&i| {
            let c = self.sorted[i].1;
            self.keeps_balance(&[(target, moved_traffic - c), (source, c - moved_traffic)])
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_max_node_ties_follow_the_group_parity() {
        let t = |x: f64| [x, x, x];
        let load: BTreeMap<NodeId, [f64; 3]> =
            [(NodeId(0), t(1.0)), (NodeId(1), t(1.0)), (NodeId(2), t(1.0))].into_iter().collect();
        assert_eq!(min_max_nodes(7, &load), (NodeId(0), NodeId(2)));
        assert_eq!(min_max_nodes(8, &load), (NodeId(2), NodeId(0)));
        let load: BTreeMap<NodeId, [f64; 3]> =
            [(NodeId(0), t(3.0)), (NodeId(1), t(0.0)), (NodeId(2), t(1.0))].into_iter().collect();
        assert_eq!(min_max_nodes(8, &load), (NodeId(1), NodeId(0)));
    }
}
