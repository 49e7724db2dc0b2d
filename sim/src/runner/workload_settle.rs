//! The swarm's settle phase (family `split.settle`): after the random workload, a table
//! created with 7-12 times `region-threshold` regions is split into 7-12 spans by the
//! basic scheduler; once seven of them replicate, PD merges its regions down to 1-5 and
//! the cluster is left quiet for 40-70 s. The split checker then sees a group with far
//! more spans than its regions and traffic need: it waits `mergeCheckThreshold` rounds,
//! merges adjacent spans and moves spans so that more merges become possible (the
//! checker's steps 4 and 5, which a 30 s workload at TiCDC's pace never reaches).

use super::{Driver, StepError};
use core_sched::maintainer::span_controller::ReplicaState;
use core_sched::types::*;
use core_sched::upstream::RowOp;
use rand::Rng;
use std::time::Duration;

/// Spans the settle table must have replicating before PD merges its regions: one more
/// than the split checker's merge bound on three captures with few regions and no
/// traffic (`2 * max(ceil(regions / region-threshold), nodes)`, split_span_checker.go:386-399).
const SETTLE_MIN_SPANS: usize = 7;
/// How long the phase waits for those spans.
const SETTLE_WAIT_MS: u64 = 60_000;
/// Poll period of that wait.
const SETTLE_POLL_MS: u64 = 500;

impl Driver {
    /// Run the settle phase (see the module's comment), not before `not_before` (the
    /// workload's distance to its last maintainer move) and only within `max_tables`. A
    /// run whose table never gets its spans (a scheduler held by faults) skips the merge
    /// and the quiet time.
    pub(super) async fn split_settle(
        &mut self,
        created: &mut u32,
        not_before: Option<u64>,
        max_tables: usize,
    ) -> Result<(), StepError> {
        let threshold = super::config::changefeed_config(&self.scn.changefeed).scheduler.region_threshold;
        let live = self.w.lock().unwrap().upstream.tables.values().filter(|t| t.dropped_ts.is_none()).count();
        if threshold == 0 || live >= max_tables {
            return Ok(());
        }
        if let Some(t) = not_before.filter(|t| *t > self.now()) {
            madsim::time::sleep(Duration::from_millis(t - self.now())).await;
        }
        let t = {
            let mut g = self.w.lock().unwrap();
            g.now_ms = crate::world::now_ms();
            let now = g.now_ms;
            let regions = threshold * g.sim_rng.random_range(7..=12u64);
            *created += 1;
            let name = format!("settle{}", created);
            let id = g.upstream.create_table(now, "test", &name, regions);
            let gw = &mut *g;
            gw.upstream.dml(now, id, 5, RowOp::Insert, &mut gw.sim_rng);
            let desc = format!("split settle: create {} with {} regions", name, regions);
            g.record("-", "Scenario", 0, "workload", vec![("op".into(), desc)]);
            drop(g);
            self.tables.insert(name, id);
            id
        };
        let deadline = self.now() + SETTLE_WAIT_MS;
        loop {
            self.budget()?;
            madsim::time::sleep(Duration::from_millis(SETTLE_POLL_MS)).await;
            if self.replicating_spans(t) >= SETTLE_MIN_SPANS {
                break;
            }
            if self.now() >= deadline {
                return Ok(());
            }
        }
        let quiet = {
            let mut g = self.w.lock().unwrap();
            g.now_ms = crate::world::now_ms();
            let to = g.sim_rng.random_range(1..=5u64);
            let quiet = g.sim_rng.random_range(40..=70u64) * 1000;
            g.upstream.merge_regions(t, to);
            let desc = format!("split settle: PD merges table {} to {} regions, then {} ms quiet", t, to, quiet);
            g.record("-", "Scenario", 0, "workload", vec![("op".into(), desc)]);
            quiet
        };
        madsim::time::sleep(Duration::from_millis(quiet)).await;
        Ok(())
    }

    /// The table's spans the current maintainer has replicating.
    fn replicating_spans(&self, t: TableId) -> usize {
        let g = self.w.lock().unwrap();
        let Some((_, m)) = g.maintainer() else { return 0 };
        m.pipe.sc.tasks_of_table(t).iter().filter(|r| r.state == ReplicaState::Replicating).count()
    }
}

#[cfg(test)]
mod tests {
    use crate::result::Outcome;
    use core_sched::coverage::Point as P;

    /// With the family pinned on, the phase creates the settle table and the split
    /// checker reaches its merge steps (the wait, adjacent merges) in the quiet time; the
    /// run converges.
    #[test]
    fn split_settle_reaches_the_checkers_merge_steps_and_the_run_converges() {
        let src = r#"name = "t"
description = "the split.settle phase"
[cluster]
nodes = 3
[changefeed]
enable-table-across-nodes = true
region-threshold = 10
region-count-per-span = 10
check-balance-interval-ms = 2000
region-count-refresh-interval = "5s"
[[tables]]
name = "t1"
rows = 10
[faults]
swarm-families = { "split.settle" = true }
[[steps]]
action = "wait"
until = { kind = "table_scheduled", table = "t1" }
timeout_ms = 60000
[[steps]]
action = "random_workload"
duration_ms = 2000
interval_ms = 1000
ops = ["dml"]
[[checks]]
kind = "sync_diff"
"#;
        let scn = crate::scenario::load::parse(std::path::Path::new("t.toml"), src.to_string()).unwrap().scenario;
        let (mut waiting, mut adjacent) = (0, 0);
        for seed in 0..2 {
            let r = crate::runner::run_on_fresh_thread(&scn, seed, &Default::default(), &Default::default());
            let created = r
                .trace
                .iter()
                .any(|t| t.event == "workload" && t.fields.iter().any(|(_, v)| v.contains("split settle: create")));
            assert!(created, "seed {}: no settle table", seed);
            waiting += r.coverage.get(P::SplitCheckMergeWaiting);
            adjacent += r.coverage.get(P::SplitCheckMergeAdjacent);
            assert_eq!(r.outcome, Outcome::Pass, "seed {}: {:?}", seed, r.violations);
        }
        assert!(waiting > 0 && adjacent > 0, "waiting {} adjacent {}", waiting, adjacent);
    }
}
