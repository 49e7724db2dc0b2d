//! The swarm's `drop_in_flight` op (family `ddl.drop_in_flight`): a DROP TABLE that
//! removes the tasks of a merge or split in flight. The DROP is held at its writer
//! (`BlockOrWaitBeforeWrite` on every capture) and dispatcher closes are held
//! (`NotReadyToCloseDispatcher`), so the merge's sources or the split's origin cannot
//! close; the operator is still running when the DROP's write lands and the barrier
//! removes the table (the operators' `OnTaskRemoved`, a dispatcher manager's aborted
//! merge).

use super::workload_ops::OpCtx;
use super::Driver;
use core_sched::effects::{FP_BLOCK_OR_WAIT_BEFORE_WRITE, FP_NOT_READY_TO_CLOSE_DISPATCHER};
use core_sched::maintainer::span_controller::ReplicaState;
use core_sched::types::*;
use rand::Rng;
use std::time::Duration;

/// How long a merge's preparatory move (two spans onto one capture) is given.
const MOVE_FOR_MERGE_MS: u64 = 2_000;

impl Driver {
    /// The op: kind 0-1 merges a table of two or more replicating spans (moving one span
    /// first when no two adjacent spans share a capture), kind 2 splits a one-span
    /// table (the op's `n` picks among the qualifying tables). With the failpoints on, the table is dropped; 0.5-2 s later the merge or split is asked. The
    /// write is released 1-5 s after that, dispatcher closes 2 s later. Nothing with the
    /// redo log on (its held redo write holds the DROP as well, and the operator finishes
    /// before the DROP lands), nor when the table is the last live one.
    pub(super) async fn drop_in_flight(&mut self, c: &OpCtx) {
        if self.w.lock().unwrap().redo_on || c.live_count <= 1 {
            return;
        }
        let merge = c.kind < 2;
        let (t, adjacent, wait, nodes) = {
            let mut g = self.w.lock().unwrap();
            let wait = g.sim_rng.random_range(5..=20u64) * 100;
            let nodes: Vec<NodeId> = g.running_members().into_iter().collect();
            let Some((_, m)) = g.maintainer() else { return };
            let candidates: Vec<(TableId, bool)> = g
                .upstream
                .tables
                .values()
                .filter(|x| x.dropped_ts.is_none() && x.logical.is_none())
                .filter_map(|x| {
                    let mut ts: Vec<_> =
                        m.pipe.sc.tasks_of_table(x.id).iter().map(|r| (r.span, r.node, r.state)).collect();
                    let replicating = ts.iter().all(|r| r.2 == ReplicaState::Replicating);
                    let fits = if merge { ts.len() > 1 } else { ts.len() == 1 };
                    ts.sort_by_key(|r| r.0.start);
                    let adjacent =
                        ts.windows(2).any(|w| w[0].1.is_some() && w[0].1 == w[1].1 && w[0].0.end == w[1].0.start);
                    (replicating && fits).then_some((x.id, adjacent))
                })
                .collect();
            if candidates.is_empty() {
                return;
            }
            let (t, adjacent) = candidates[c.n as usize % candidates.len()];
            (t, adjacent, wait, nodes)
        };
        if merge && !adjacent {
            // `api_merge_table` moves one span next to another when no pair is adjacent.
            self.merge_table_once(t);
            madsim::time::sleep(Duration::from_millis(MOVE_FOR_MERGE_MS)).await;
        }
        let hold = wait + 1_000 * c.n;
        for n in &nodes {
            self.failpoint_for(*n, FP_BLOCK_OR_WAIT_BEFORE_WRITE, hold);
            self.failpoint_for(*n, FP_NOT_READY_TO_CLOSE_DISPATCHER, hold + 2_000);
        }
        {
            let mut g = self.w.lock().unwrap();
            g.now_ms = crate::world::now_ms();
            let now = g.now_ms;
            g.upstream.drop_table(now, t);
        }
        madsim::time::sleep(Duration::from_millis(wait)).await;
        if merge {
            self.merge_table_once(t);
        } else {
            self.split_table_once(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::result::Outcome;
    use core_sched::coverage::Point as P;

    /// The DROP lands while the merge or split of the dropped table is in flight: an
    /// operator ends by its task's removal in some seed, and every run converges.
    #[test]
    fn drop_in_flight_removes_the_tasks_of_a_running_operator_and_the_run_converges() {
        let src = r#"name = "t"
description = "drop_in_flight on split and whole tables"
[cluster]
nodes = 3
[changefeed]
enable-table-across-nodes = true
region-threshold = 10
region-count-per-span = 10
[[tables]]
name = "t1"
rows = 10
regions = 20
[[tables]]
name = "t2"
rows = 10
regions = 20
[[tables]]
name = "t3"
rows = 10
[[steps]]
action = "wait"
until = { kind = "replication_count", table = "t1", op = "eq", count = 2 }
timeout_ms = 60000
[[steps]]
action = "wait"
until = { kind = "table_scheduled", table = "t3" }
timeout_ms = 60000
[[steps]]
action = "random_workload"
duration_ms = 6000
interval_ms = 3000
ops = ["drop_in_flight"]
[[checks]]
kind = "sync_diff"
"#;
        let scn = crate::scenario::load::parse(std::path::Path::new("t.toml"), src.to_string()).unwrap().scenario;
        let mut removed = 0;
        for seed in 0..6 {
            let r = crate::runner::run_on_fresh_thread(&scn, seed, &Default::default(), &Default::default());
            removed += r.coverage.get(P::OpMergeTaskRemoved) + r.coverage.get(P::OpSplitTaskRemoved);
            assert_eq!(r.outcome, Outcome::Pass, "seed {}: {:?}", seed, r.violations);
        }
        assert!(removed > 0, "no operator ended by a DROP");
    }
}
