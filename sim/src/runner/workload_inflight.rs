//! The swarm's `ddl_in_flight` op (family `ddl.in_flight_scheduling`): the
//! `in_flight_ddl_during_scheduling` pattern drawn at random. A DDL on a table of several
//! spans is held at its writer (`BlockOrWaitBeforeWrite` on every capture) while the
//! table's spans are merged or moved, so the barrier's writer can vanish under it.

use super::workload_ops::OpCtx;
use super::Driver;
use core_sched::maintainer::span_controller::ReplicaState;
use core_sched::types::*;
use rand::Rng;
use std::time::Duration;

impl Driver {
    /// The op: ADD COLUMN on a live table with two or more replicating spans (none: no
    /// op) while `BlockOrWaitBeforeWrite` holds barrier writes; 500-3000 ms later the
    /// table is merged (kind 0-1) or moved to the op's capture (kind 2); the failpoint
    /// goes off 1-5 s after that.
    pub(super) async fn ddl_in_flight(&mut self, c: &OpCtx) {
        let (t, wait, nodes) = {
            let mut g = self.w.lock().unwrap();
            let wait = g.sim_rng.random_range(5..=30u64) * 100;
            let nodes: Vec<NodeId> = g.running_members().into_iter().collect();
            let Some((_, m)) = g.maintainer() else { return };
            let split = |t: &TableId| {
                let ts = m.pipe.sc.tasks_of_table(*t);
                ts.len() > 1 && ts.iter().all(|r| r.state == ReplicaState::Replicating)
            };
            let tables: Vec<TableId> = g
                .upstream
                .tables
                .values()
                .filter(|x| x.dropped_ts.is_none() && x.logical.is_none())
                .map(|x| x.id)
                .filter(split)
                .collect();
            if tables.is_empty() {
                return;
            }
            (tables[c.n as usize % tables.len()], wait, nodes)
        };
        for n in &nodes {
            self.failpoint_for(*n, core_sched::effects::FP_BLOCK_OR_WAIT_BEFORE_WRITE, wait + 1_000 * c.n);
        }
        {
            let mut g = self.w.lock().unwrap();
            let now = g.now_ms;
            g.upstream.add_column(now, t);
            let gw = &mut *g;
            gw.upstream.dml(now, t, c.n, core_sched::upstream::RowOp::Insert, &mut gw.sim_rng);
        }
        madsim::time::sleep(Duration::from_millis(wait)).await;
        let node = c.node;
        if c.kind < 2 {
            self.merge_table_once(t);
        } else {
            self.api(
                &mut |m, ctx, _| m.api_move_table(ctx, t, node).map(|n| format!("{} move operators", n)),
                "move table",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::result::Outcome;

    #[test]
    fn ddl_in_flight_holds_the_ddl_of_a_split_table_and_the_run_converges() {
        let src = r#"name = "t"
description = "ddl_in_flight on a split table"
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
# 20 regions: two spans from the start.
[[steps]]
action = "wait"
until = { kind = "replication_count", table = "t1", op = "eq", count = 2 }
timeout_ms = 60000
[[steps]]
action = "wait"
until = { kind = "table_scheduled", table = "t1" }
timeout_ms = 60000
[[steps]]
action = "random_workload"
duration_ms = 6000
interval_ms = 2000
ops = ["ddl_in_flight"]
[[checks]]
kind = "sync_diff"
"#;
        let scn = crate::scenario::load::parse(std::path::Path::new("t.toml"), src.to_string()).unwrap().scenario;
        let r = crate::runner::run_on_fresh_thread(&scn, 1, &Default::default(), &Default::default());
        let held = r.trace.iter().filter(|t| t.event == "block before write ddl").count();
        let asked = r.trace.iter().filter(|t| t.event == "merge table" || t.event == "move table").count();
        assert!(held > 0, "no DDL write held");
        assert!(asked > 0, "no merge or move of the split table");
        assert_eq!(r.outcome, Outcome::Pass, "{:?}", r.violations);
    }
}
