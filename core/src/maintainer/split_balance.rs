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
//! 1. **re-split**: a span with more than `region-threshold` regions is split into
//!    `ceil(regions / threshold)` pieces, all placed back on its node (Split operator
//!    with targets);
//! 2. **merge whole**: when the group's regions add up to at most `threshold / 2`, every
//!    span moves to one node (chosen like Go's map iteration: at random among the nodes
//!    hosting spans), and once they all sit there, one Merge operator merges them all
//!    (the table is one span again, in the default group);
//! 3. **traffic balance**: not modelled (below);
//! 4. **merge adjacent spans**: when the lag is below 30 s and the group has more than
//!    `2 * max(ceil(regions / threshold), nodes)` spans for 5 consecutive checks, runs of
//!    adjacent same-node spans are merged while a run stays within `threshold / 4 * 3`
//!    regions (integer division first, as in Go), at most 8 Merge operators per group
//!    per round;
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
//! ## Traffic is not modelled
//!
//! TiCDC's checker also splits, merges and balances by write traffic: each span's
//! `EventSizePerSecond` from the complete-status heartbeats (every 10 s), against
//! `write-key-threshold` and `balance-score-threshold` / `min-` / `max-traffic-percentage`.
//! The simulator's upstream produces rows, not bytes per second, so every span reports
//! TiCDC's idle value, 1 byte/s, which a dispatcher reports when nothing was written
//! (`TableProgress.GetEventSizePerSecond`). What follows from it:
//!
//! - a group is checked only once each of its spans has received three complete-status
//!   samples (`checkAllTaskAvailableLocked` wants three non-zero samples), so a new span
//!   waits about 20-30 s before its group is checked;
//! - `write-key-threshold` is TiCDC's default 0: no traffic split, no traffic bound on
//!   merges or on merge-whole;
//! - step 3 never fires: TiCDC balances only nodes above 1 MB/s
//!   (`minTrafficBalanceThreshold`), far above idle;
//! - the per-node traffic that orders nodes in step 5 is the number of spans of the
//!   group a node holds (ties by node ID, ascending for odd table IDs and descending for
//!   even ones, as TiCDC orders equal traffic by group-ID parity). With equal traffic a
//!   compensating move always keeps the balance, as in TiCDC.
//!
//! Other simplifications: the groups are checked in table-ID order (TiCDC: Go map
//! order; the order matters only when the batch runs out); a span's region count is
//! read from the region-count refresher at check time (TiCDC copies it into the checker
//! at each Working status, at most one complete-status interval earlier); a gap between
//! two spans of a group ends a merge run (TiCDC panics); a group with no span on an alive
//! node is not merged (TiCDC would move it to the empty node ID).

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

/// Per-group state of `SplitSpanChecker` that outlives one check.
#[derive(Clone, Debug, Default)]
pub struct SplitGroupChecker {
    /// Complete-status traffic samples received per span (saturates at [`TRAFFIC_SAMPLES`]).
    pub samples: BTreeMap<DispatcherId, u8>,
    /// `mergeCheckCount`.
    pub merge_check_count: u32,
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
    /// Split a span into `span_num` pieces by region count, each placed on `targets[i]`.
    Split { id: DispatcherId, regions: u64, span_num: u64, targets: Vec<NodeId> },
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
    pub now_ms: u64,
    pub batch: usize,
}

impl SplitGroupChecker {
    /// `checkAllTaskAvailableLocked`: every span has its three traffic samples.
    pub fn available(&self) -> bool {
        self.samples.values().all(|s| *s >= TRAFFIC_SAMPLES)
    }

    /// A complete-status heartbeat reported the span Working (one traffic sample).
    pub fn record_sample(&mut self, id: &DispatcherId) {
        if let Some(s) = self.samples.get_mut(id) {
            *s = (*s + 1).min(TRAFFIC_SAMPLES);
        }
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

    fn check_steps(&mut self, c: &GroupCheck, rng: &mut dyn rand::RngCore, wait_merge: &mut bool) -> Vec<SplitCheckResult> {
        if !self.available() || c.spans.is_empty() {
            return vec![];
        }
        let thr = c.region_threshold;
        // Step 1, with the per-node tallies the later steps use (spans on alive nodes).
        let mut load: BTreeMap<NodeId, usize> = c.alive.iter().map(|n| (*n, 0)).collect();
        let mut on_node: BTreeMap<NodeId, Vec<&GroupSpan>> = BTreeMap::new();
        let mut total_regions = 0u64;
        let mut results = Vec::new();
        for s in c.spans {
            let Some(l) = load.get_mut(&s.node) else { continue };
            *l += 1;
            on_node.entry(s.node).or_default().push(s);
            total_regions += s.regions;
            if thr > 0 && s.regions > thr {
                let n = s.regions.div_ceil(thr);
                results.push(SplitCheckResult::Split { id: s.id, regions: s.regions, span_num: n, targets: vec![s.node; n as usize] });
            }
        }
        if !results.is_empty() {
            return results;
        }
        // Step 2: merge the whole group back into one span.
        if thr == 0 || total_regions <= thr / 2 {
            return merge_whole(c, &load, rng);
        }
        // Step 3 (traffic balance) never fires at idle traffic; it only names the least
        // and the most loaded node for step 5.
        let (min_node, max_node) = min_max_nodes(c.table, &load);
        // Step 4: merge adjacent spans once the group has too many for long enough.
        let min_cp = c.spans.iter().map(|s| s.checkpoint_ts).min().unwrap_or(0);
        if c.now_ms.saturating_sub(ts_to_ms(min_cp)) > MAX_MERGE_LAG_MS {
            return vec![];
        }
        let by_regions = if thr > 0 { total_regions.div_ceil(thr) as usize } else { 0 };
        let upper = by_regions.max(c.alive.len()) * 2;
        if upper >= c.spans.len() {
            return vec![];
        }
        *wait_merge = true;
        self.merge_check_count += 1;
        if self.merge_check_count < MERGE_CHECK_THRESHOLD {
            return vec![];
        }
        let mut sorted: Vec<&GroupSpan> = c.spans.iter().collect();
        sorted.sort_by_key(|s| s.span.start);
        let merges = choose_merged_spans(&sorted, thr, c.batch);
        if !merges.is_empty() {
            return merges;
        }
        // Step 5: moves that make merges possible.
        choose_move_spans(min_node, max_node, &sorted, &load, &on_node, thr, rng)
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

/// The least and the most loaded alive node; equal loads ordered by node ID, ascending
/// for an odd group (table) ID, descending for an even one.
fn min_max_nodes(table: TableId, load: &BTreeMap<NodeId, usize>) -> (NodeId, NodeId) {
    let mut nodes: Vec<(NodeId, usize)> = load.iter().map(|(n, l)| (*n, *l)).collect();
    nodes.sort_by(|a, b| a.1.cmp(&b.1).then(if table % 2 != 0 { a.0.cmp(&b.0) } else { b.0.cmp(&a.0) }));
    (nodes.first().map(|x| x.0).unwrap_or_default(), nodes.last().map(|x| x.0).unwrap_or_default())
}

/// `chooseMergedSpans`: runs of adjacent spans on one node, each run within `3/4` of the
/// region threshold, at most `min(batch, 8)` runs.
fn choose_merged_spans(sorted: &[&GroupSpan], thr: u64, batch: usize) -> Vec<SplitCheckResult> {
    let limit = batch.min(MAX_MERGE_OPERATORS_PER_GROUP);
    let cap = thr / 4 * 3;
    let mut results = Vec::new();
    let mut run: Vec<DispatcherId> = vec![sorted[0].id];
    let mut regions = sorted[0].regions;
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
        let (prev, cur) = (w[0], w[1]);
        let breaks = prev.span.end != cur.span.start || prev.node != cur.node || (thr > 0 && regions + cur.regions > cap);
        if breaks {
            if submit(&run, &mut results) {
                return results;
            }
            run = vec![cur.id];
            regions = cur.regions;
            continue;
        }
        run.push(cur.id);
        regions += cur.regions;
    }
    submit(&run, &mut results);
    results
}

/// `chooseMoveSpans`.
fn choose_move_spans(min_node: NodeId, max_node: NodeId, sorted: &[&GroupSpan], load: &BTreeMap<NodeId, usize>, on_node: &BTreeMap<NodeId, Vec<&GroupSpan>>, thr: u64, rng: &mut dyn rand::RngCore) -> Vec<SplitCheckResult> {
    let empty = Vec::new();
    let on_min = on_node.get(&min_node).unwrap_or(&empty);
    let on_max = on_node.get(&max_node).unwrap_or(&empty);
    if on_min.is_empty() && !on_max.is_empty() {
        let pick = on_max[(rng.next_u64() % on_max.len() as u64) as usize];
        return vec![SplitCheckResult::Move { ids: vec![pick.id], target: min_node, step: "move-to-empty-node" }];
    }
    MovePlanner::new(sorted, load, thr).plan(rng)
}

/// `findOptimalSpanMoves` with `canMergeAfterMove`, `findCompensationMove` and
/// `isTrafficBalanceMaintained`, traffic being one unit per span.
struct MovePlanner<'a> {
    sorted: &'a [&'a GroupSpan],
    load: &'a BTreeMap<NodeId, usize>,
    thr: u64,
    /// Planned destination of spans chosen so far.
    target_of: BTreeMap<DispatcherId, NodeId>,
    /// Spans already moved or promised to a merge.
    selected: BTreeSet<DispatcherId>,
    /// Per-node load after the planned moves.
    after: BTreeMap<NodeId, i64>,
    cur_min: i64,
    cur_max: i64,
}

impl<'a> MovePlanner<'a> {
    fn new(sorted: &'a [&'a GroupSpan], load: &'a BTreeMap<NodeId, usize>, thr: u64) -> Self {
        let after: BTreeMap<NodeId, i64> = load.iter().map(|(n, l)| (*n, *l as i64)).collect();
        let cur_min = after.values().copied().min().unwrap_or(0);
        let cur_max = after.values().copied().max().unwrap_or(0);
        MovePlanner { sorted, load, thr, target_of: BTreeMap::new(), selected: BTreeSet::new(), after, cur_min, cur_max }
    }

    /// The node a span is on once the planned moves are done.
    fn node_after(&self, s: &GroupSpan) -> NodeId {
        self.target_of.get(&s.id).copied().unwrap_or(s.node)
    }

    /// Adjacent spans that would share `target` with `s`, within 3/4 of the threshold.
    fn mergeable_after_move(&self, s: &GroupSpan, target: NodeId) -> Vec<DispatcherId> {
        let i = self.sorted.iter().position(|x| x.id == s.id).unwrap();
        let mut adjacent = Vec::new();
        if i > 0 && self.sorted[i - 1].span.end == s.span.start {
            adjacent.push(self.sorted[i - 1]);
        }
        if i + 1 < self.sorted.len() && s.span.end == self.sorted[i + 1].span.start {
            adjacent.push(self.sorted[i + 1]);
        }
        let mut regions = s.regions;
        let mut out = Vec::new();
        for a in adjacent.into_iter().filter(|a| self.node_after(a) == target) {
            if self.thr > 0 && regions + a.regions > self.thr / 4 * 3 {
                continue;
            }
            regions += a.regions;
            out.push(a.id);
        }
        out
    }

    /// Applies `changes` if no node ends below the current minimum or above the
    /// current maximum.
    /// Only the alive nodes' loads are compared, as in TiCDC.
    fn keeps_balance(&mut self, changes: &[(NodeId, i64)]) -> bool {
        let change = |n: &NodeId| changes.iter().filter(|(m, _)| m == n).map(|(_, c)| *c).sum::<i64>();
        let ok = self.after.iter().all(|(n, l)| (self.cur_min..=self.cur_max).contains(&(l + change(n))));
        if ok {
            for (n, c) in changes {
                *self.after.entry(*n).or_insert(0) += c;
            }
        }
        ok
    }

    fn plan(mut self, rng: &mut dyn rand::RngCore) -> Vec<SplitCheckResult> {
        // Cheapest nodes first; equal loads in an unspecified order (TiCDC sorts a slice
        // built from a Go map with an unstable sort).
        let mut targets: Vec<NodeId> = self.load.keys().copied().collect();
        for i in (1..targets.len()).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            targets.swap(i, j);
        }
        targets.sort_by_key(|n| self.load[n]);
        let mut results = Vec::new();
        for target in targets {
            for s in self.sorted {
                if results.len() >= MAX_MOVE_SPANS_FOR_MERGE {
                    return results;
                }
                if s.node == target || self.selected.contains(&s.id) {
                    continue;
                }
                let merged = self.mergeable_after_move(s, target);
                if merged.is_empty() {
                    continue;
                }
                if self.keeps_balance(&[(target, 1), (s.node, -1)]) {
                    results.push(SplitCheckResult::Move { ids: vec![s.id], target, step: "move-for-merge" });
                    self.selected.insert(s.id);
                    self.target_of.insert(s.id, target);
                    self.selected.extend(merged);
                    continue;
                }
                if let Some(comp) = self.compensation(s, target, s.node) {
                    results.push(SplitCheckResult::Move { ids: vec![s.id], target, step: "move-for-merge" });
                    results.push(SplitCheckResult::Move { ids: vec![comp.id], target: s.node, step: "compensate" });
                    self.selected.insert(s.id);
                    self.target_of.insert(s.id, target);
                    self.selected.extend(merged);
                    self.selected.insert(comp.id);
                    self.target_of.insert(comp.id, s.node);
                    let also = self.mergeable_after_move(comp, s.node);
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
    fn compensation(&mut self, moved: &GroupSpan, target: NodeId, source: NodeId) -> Option<&'a GroupSpan> {
        let cands: Vec<&'a GroupSpan> = self.sorted.iter().copied().filter(|s| s.id != moved.id && !self.selected.contains(&s.id) && self.node_after(s) == target).collect();
        // Both moves carry one unit: the net change is zero on both nodes.
        cands.into_iter().find(|_| self.keeps_balance(&[(target, 0), (source, 0)]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_max_node_ties_follow_the_group_parity() {
        let load: BTreeMap<NodeId, usize> = [(NodeId(0), 1), (NodeId(1), 1), (NodeId(2), 1)].into_iter().collect();
        assert_eq!(min_max_nodes(7, &load), (NodeId(0), NodeId(2)));
        assert_eq!(min_max_nodes(8, &load), (NodeId(2), NodeId(0)));
        let load: BTreeMap<NodeId, usize> = [(NodeId(0), 3), (NodeId(1), 0), (NodeId(2), 1)].into_iter().collect();
        assert_eq!(min_max_nodes(8, &load), (NodeId(1), NodeId(0)));
    }
}
