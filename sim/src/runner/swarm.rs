//! The swarm draw: for a swarm scenario the seed decides which fault families are on
//! and how hard, so one scenario covers many fault mixes. [`plan`] draws the plan of a
//! seed on its own, so `shrink` can pin it into a scenario ([`SwarmPlan::pin`]) and drop
//! one family while the others keep their drawn values.

use crate::scenario::Scenario;
use crate::world::*;
use core_sched::config::ChangefeedConfig;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What the swarm drew for one seed: every family's switch, and the intensity of each
/// family that is on and has one (`None` when off). A seed file records it
/// (`swarm_plan`, seeds/README.md), so the file keeps its run when the swarm grows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwarmPlan {
    pub families: BTreeMap<String, bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_spike: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_latency_ms: Option<[u64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_point_interval_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collector_lag: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_lag: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_event_ms: Option<[u64; 2]>,
    /// Probability and time range of stream reconnects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_reconnect: Option<(f64, [u64; 2])>,
    /// Probability of a storage failure, and how many at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_error: Option<(f64, u64)>,
    /// `add-table-batch-size`, `balance-move-batch-size`, `scheduling-task-count-per-node`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub small_batch: Option<[usize; 3]>,
    /// The split checkers' knobs: `check-balance-interval` and
    /// `region-count-refresh-interval` in ms, `balance-score-threshold`
    /// (`write-key-threshold` is TiCDC's minimum, 10 MiB/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_check: Option<[u64; 3]>,
    /// `schema-store-init-ms` and `trigger-create-ms` (both `[0, max]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_bootstrap: Option<[u64; 2]>,
    /// The settle phase's split-checker pace: `check-balance-interval` and
    /// `region-count-refresh-interval` in ms (they replace `split.check`'s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_settle: Option<[u64; 2]>,
}

/// Draw the plan of a seed. The draws come from their own stream (seeded from the seed),
/// in a fixed order: new families are drawn last so older seeds keep their plans.
pub fn plan(seed: u64) -> SwarmPlan {
    let mut families = BTreeMap::new();
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x5757_4152_4d00_0001);
    let mut on = |name: &str, r: &mut rand_chacha::ChaCha8Rng| {
        let v = r.random_bool(0.5);
        families.insert(name.to_string(), v);
        v
    };
    let loss = on("net.loss", &mut r).then(|| r.random_range(0.01..0.1));
    let duplicate = on("net.duplicate", &mut r).then(|| r.random_range(0.01..0.05));
    let delay_spike = on("net.delay_spike", &mut r).then(|| r.random_range(0.01..0.05));
    let storage_latency_ms = on("storage.slow", &mut r).then(|| [5, r.random_range(50..500)]);
    on("kill_restart", &mut r);
    on("move_maintainer", &mut r);
    on("move_table", &mut r);
    on("split_merge", &mut r);
    on("partition", &mut r);
    // Drawn last, so the draws above (and runs without syncpoints) are unchanged.
    let sync_point_interval_ms = on("sync_point", &mut r).then(|| r.random_range(2..=8u64) * 1000);
    let collector_lag = on("collector.lag", &mut r).then(|| r.random_range(0.01..0.1));
    let stream_lag = on("stream.lag", &mut r).then(|| r.random_range(0.01..0.1));
    // Added after the others, for the same reason (and `random_workload` leaves the
    // op out of its draw when the family is off).
    on("session_loss", &mut r);
    // Slow first events (a new event-store subscription): drawn last as well.
    let first_event_ms = on("first_event.slow", &mut r).then(|| {
        let lo = r.random_range(0..200u64);
        [lo, r.random_range(lo.max(200)..1500)]
    });
    // Message-center stream reconnects: drawn last as well.
    let stream_reconnect = on("stream.reconnect", &mut r).then(|| {
        let p = r.random_range(0.002..0.02);
        let lo = r.random_range(10..200u64);
        (p, [lo, r.random_range(200..1500u64)])
    });
    // Coverage-driven families, drawn last as well. Sink write errors: each is a
    // retryable changefeed error (the coordinator restarts the changefeed), at most 1-2
    // per run since TiCDC's restart backoff doubles per error.
    let storage_error = on("storage.error", &mut r).then(|| (r.random_range(0.0005..0.005), r.random_range(1..=2u64)));
    // Small scheduling batches: the schedulers' batch-full and per-node-cap branches,
    // and operators that wait behind a full batch.
    let small_batch = on("scheduler.small_batch", &mut r)
        .then(|| [r.random_range(1..=4), r.random_range(1..=4), r.random_range(1..=3)]);
    // RENAME / RECOVER / CREATE TABLES / ALTER DATABASE in the workload: drawn last as
    // well (off: the workload draws from its old op list).
    on("ddl_table_set", &mut r);
    // Coverage-driven families, drawn last as well (off: their workload ops are left out
    // of the draw). The split checkers at a pace a 30 s workload sees (TiCDC's defaults:
    // balance every 15 s, region counts every 5 min), with PD region splits and hot
    // tables as workload ops.
    let split_check = on("split.check", &mut r)
        .then(|| [r.random_range(2..=6u64) * 1000, r.random_range(5..=15u64) * 1000, r.random_range(2..=5u64)]);
    // Several DDLs at one instant (the barrier's ordering branches).
    on("ddl.burst", &mut r);
    // Partitioned tables and their partition DDLs.
    on("ddl.partition", &mut r);
    // Failpoints switched on for a moment.
    on("failpoint", &mut r);
    // Maintainer moves and failovers while table operators are in flight.
    on("move_in_flight", &mut r);
    // The coordinator's capture loses its session.
    on("coordinator.loss", &mut r);
    // Slow trigger creation and schema-store initialisation (as `swarm_slow_bootstrap`).
    let slow_bootstrap =
        on("slow_bootstrap", &mut r).then(|| [r.random_range(100..3000u64), r.random_range(100..3000u64)]);
    // Changefeed pause/resume through the coordinator, and removals held open at a
    // maintainer failover (their workload ops; drawn last as well).
    on("changefeed.pause", &mut r);
    on("failover.held_removal", &mut r);
    // DDLs held at their writer while their table's spans are merged or moved.
    on("ddl.in_flight_scheduling", &mut r);
    // The trigger's DONE of a written DDL held while the next DDLs reach it
    // (`BlockOrWaitReportAfterWrite` with a DDL burst; drawn last as well).
    on("ddl.report_after_write", &mut r);
    // A fast-fail error fails the changefeed, which is resumed once its stop finished
    // (drawn last as well).
    on("changefeed.fail", &mut r);
    // The redo log on (`consistent.level = "eventual"`, TiCDC's default flush intervals):
    // the redo halves of the maintainer and the dispatcher managers, the redo meta and
    // the event dispatchers held below the redo resolved ts (drawn last as well).
    on("redo", &mut r);
    // After the workload, a table of 7-12 spans whose regions PD merges, left quiet while
    // the split checker's merge steps run (its wait for `mergeCheckThreshold` rounds,
    // adjacent merges, moves for merges): drawn last as well.
    let split_settle =
        on("split.settle", &mut r).then(|| [r.random_range(2..=4u64) * 1000, r.random_range(5..=10u64) * 1000]);
    // A DROP TABLE held at its writer while a merge or split of the table is in flight.
    on("ddl.drop_in_flight", &mut r);
    SwarmPlan {
        families,
        split_settle,
        split_check,
        slow_bootstrap,
        storage_error,
        small_batch,
        loss,
        duplicate,
        delay_spike,
        storage_latency_ms,
        sync_point_interval_ms,
        collector_lag,
        stream_lag,
        first_event_ms,
        stream_reconnect,
    }
}

impl SwarmPlan {
    /// Make the plan explicit in `scn`: no draw any more, the families pinned in
    /// `faults.swarm-families` (the workload skips the ops of those that are off) and each
    /// drawn intensity written into its `[faults]` or `[changefeed]` knob. A run of the
    /// pinned scenario is the same run as the swarm run of that seed.
    pub fn pin(&self, scn: &mut Scenario) {
        scn.faults.swarm = false;
        scn.faults.swarm_families = Some(self.families.clone());
        for family in self.families.keys() {
            self.pin_intensity(scn, family);
        }
    }

    /// Write one family's drawn intensity into its `[faults]` or `[changefeed]` knobs
    /// (nothing for a family that is off or only gates workload ops). `explore` uses it
    /// to switch on one family of a pinned plan with the strength another seed drew.
    pub fn pin_intensity(&self, scn: &mut Scenario, family: &str) {
        let f = &mut scn.faults;
        match family {
            "net.loss" => self.loss.into_iter().for_each(|v| f.loss = v),
            "net.duplicate" => self.duplicate.into_iter().for_each(|v| f.duplicate = v),
            "net.delay_spike" => self.delay_spike.into_iter().for_each(|v| f.delay_spike = v),
            "storage.slow" => self.storage_latency_ms.into_iter().for_each(|v| f.storage_latency_ms = v),
            "collector.lag" => self.collector_lag.into_iter().for_each(|v| f.collector_lag = v),
            "stream.lag" => self.stream_lag.into_iter().for_each(|v| f.stream_lag = v),
            "first_event.slow" => self.first_event_ms.into_iter().for_each(|v| f.first_event_ms = v),
            "stream.reconnect" => {
                if let Some((p, ms)) = self.stream_reconnect {
                    f.stream_reconnect = p;
                    f.stream_reconnect_ms = ms;
                }
            }
            "storage.error" => {
                if let Some((p, max)) = self.storage_error {
                    f.storage_error = p;
                    f.storage_error_max = Some(max);
                }
            }
            "scheduler.small_batch" => {
                if let Some([add, mv, per_node]) = self.small_batch {
                    let c = &mut scn.changefeed;
                    c.add_table_batch_size = Some(add);
                    c.balance_move_batch_size = Some(mv);
                    c.scheduling_task_count_per_node = Some(per_node);
                }
            }
            "sync_point" => {
                if let Some(ms) = self.sync_point_interval_ms {
                    scn.changefeed.enable_sync_point = true;
                    let d = if ms % 1000 == 0 { format!("{}s", ms / 1000) } else { format!("{}ms", ms) };
                    scn.changefeed.sync_point_interval = Some(d);
                }
            }
            "split.check" => {
                if let Some([balance, refresh, score]) = self.split_check {
                    let c = &mut scn.changefeed;
                    c.check_balance_interval_ms = Some(balance);
                    c.region_count_refresh_interval = Some(format!("{}s", refresh / 1000));
                    c.write_key_threshold = Some(core_sched::config::MIN_WRITE_KEY_THRESHOLD);
                    c.balance_score_threshold = Some(score as u32);
                }
            }
            "split.settle" => {
                if let Some([balance, refresh]) = self.split_settle {
                    let c = &mut scn.changefeed;
                    c.check_balance_interval_ms = Some(balance);
                    c.region_count_refresh_interval = Some(format!("{}s", refresh / 1000));
                }
            }
            "redo" if self.families.get("redo") == Some(&true) => {
                scn.changefeed.consistent_level = Some(core_sched::config::CONSISTENT_LEVEL_EVENTUAL.into())
            }
            // A scenario's own slow-bootstrap knobs win (`swarm_slow_bootstrap`).
            "slow_bootstrap" => {
                if let Some([init, trigger]) = self.slow_bootstrap {
                    if f.schema_store_init_ms == [0, 0] && f.trigger_create_ms == [0, 0] {
                        f.schema_store_init_ms = [0, init];
                        f.trigger_create_ms = [0, trigger];
                    }
                }
            }
            _ => {}
        }
    }

    /// Apply the plan to the world and changefeed config of a run.
    fn apply(&self, world: &mut World, cfg: &mut ChangefeedConfig) {
        if let Some(v) = self.loss {
            world.net.loss = v;
        }
        if let Some(v) = self.duplicate {
            world.net.duplicate = v;
        }
        if let Some(v) = self.delay_spike {
            world.net.delay_spike = v;
        }
        if let Some(v) = self.storage_latency_ms {
            world.storage_latency_ms = v;
        }
        if let Some(ms) = self.sync_point_interval_ms {
            cfg.enable_sync_point = true;
            cfg.sync_point_interval_ms = ms;
        }
        if let Some(v) = self.collector_lag {
            world.net.collector.prob = v;
        }
        if let Some(v) = self.stream_lag {
            world.net.stream.prob = v;
        }
        if let Some(v) = self.first_event_ms {
            world.first_event_ms = v;
        }
        if let Some((p, ms)) = self.stream_reconnect {
            world.net.reconnect = p;
            world.net.reconnect_ms = ms;
        }
        if let Some((p, max)) = self.storage_error {
            world.storage_error = p;
            world.storage_error_budget = max;
        }
        if let Some([add, mv, per_node]) = self.small_batch {
            let s = &mut cfg.scheduler;
            s.add_table_batch_size = add;
            s.balance_move_batch_size = mv;
            s.scheduling_task_count_per_node = per_node;
        }
        if let Some([balance, refresh, score]) = self.split_check {
            let s = &mut cfg.scheduler;
            s.check_balance_interval_ms = balance;
            s.region_count_refresh_interval_ms = refresh;
            s.write_key_threshold = core_sched::config::MIN_WRITE_KEY_THRESHOLD;
            s.balance_score_threshold = score as u32;
        }
        if let Some([balance, refresh]) = self.split_settle {
            let s = &mut cfg.scheduler;
            s.check_balance_interval_ms = balance;
            s.region_count_refresh_interval_ms = refresh;
        }
        if let Some([init, trigger]) = self.slow_bootstrap {
            if world.schema_store_init_ms == [0, 0] && world.trigger_create_ms == [0, 0] {
                world.schema_store_init_ms = [0, init];
                world.trigger_create_ms = [0, trigger];
            }
        }
        if self.families.get("redo") == Some(&true) {
            cfg.consistent.level = core_sched::config::ConsistentLevel::Eventual;
        }
    }
}

/// Draw the fault families into the world and changefeed config and print the plan.
pub(super) fn draw(
    seed: u64,
    world: &mut World,
    cfg: &mut ChangefeedConfig,
    config_lines: &mut Vec<String>,
) -> BTreeMap<String, bool> {
    let p = plan(seed);
    p.apply(world, cfg);
    config_lines.push(format!("swarm families = {:?}", p.families));
    config_lines.push(format!("swarm plan: net.loss = {:.3}, net.duplicate = {:.3}, net.delay_spike = {:.3}, net.collector_lag = {:.3}, net.stream_lag = {:.3}, storage.latency_ms = {:?}, sync_point_interval_ms = {}, dispatcher.first_event_ms = {:?}", world.net.loss, world.net.duplicate, world.net.delay_spike, world.net.collector.prob, world.net.stream.prob, world.storage_latency_ms, if cfg.enable_sync_point { cfg.sync_point_interval_ms.to_string() } else { "off".into() }, world.first_event_ms));
    if world.net.reconnect > 0.0 {
        config_lines.push(format!(
            "swarm plan: net.stream_reconnect = {:.3} of {:?} ms",
            world.net.reconnect, world.net.reconnect_ms
        ));
    }
    if p.storage_error.is_some() || p.small_batch.is_some() {
        let s = &cfg.scheduler;
        config_lines.push(format!(
            "swarm plan: storage.error = {:.4} (at most {}), scheduler batches add/move/per-node = {}/{}/{}",
            world.storage_error,
            world.storage_error_budget,
            s.add_table_batch_size,
            s.balance_move_batch_size,
            s.scheduling_task_count_per_node
        ));
    }
    if p.split_check.is_some() || p.slow_bootstrap.is_some() || p.split_settle.is_some() {
        let s = &cfg.scheduler;
        config_lines.push(format!(
            "swarm plan: split checks every {} ms, region counts every {} ms, balance-score-threshold {}; schema_store.init_ms = {:?}, trigger.create_ms = {:?}",
            s.check_balance_interval_ms,
            s.region_count_refresh_interval_ms,
            s.balance_score_threshold,
            world.schema_store_init_ms,
            world.trigger_create_ms
        ));
    }
    p.families
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_names_every_family_the_format_knows() {
        for seed in [0, 1, 156, 630] {
            let p = plan(seed);
            let names: Vec<&str> = p.families.keys().map(|s| s.as_str()).collect();
            let mut known = crate::scenario::SWARM_FAMILIES.to_vec();
            known.sort();
            assert_eq!(names, known);
        }
    }

    #[test]
    fn intensities_follow_the_switches() {
        for seed in 0..50 {
            let p = plan(seed);
            assert_eq!(p.loss.is_some(), p.families["net.loss"]);
            assert_eq!(p.sync_point_interval_ms.is_some(), p.families["sync_point"]);
            assert_eq!(p.stream_reconnect.is_some(), p.families["stream.reconnect"]);
            assert_eq!(p.split_check.is_some(), p.families["split.check"]);
            assert_eq!(p.slow_bootstrap.is_some(), p.families["slow_bootstrap"]);
            assert_eq!(p.split_settle.is_some(), p.families["split.settle"]);
        }
    }

    #[test]
    fn pinned_split_check_is_the_drawn_config() {
        let seed = (0..100).find(|s| plan(*s).split_check.is_some()).expect("a seed with split.check on");
        let p = plan(seed);
        let mut scn = crate::scenario::load::resolve("swarm").unwrap().scenario;
        p.pin(&mut scn);
        let pinned = super::super::config::changefeed_config(&scn.changefeed).scheduler;
        let mut world = World::new(seed, Default::default(), 3, [1, 1]);
        let mut cfg = super::super::config::changefeed_config(
            &crate::scenario::load::resolve("swarm").unwrap().scenario.changefeed,
        );
        p.apply(&mut world, &mut cfg);
        assert_eq!(pinned, cfg.scheduler);
        assert_eq!(pinned.write_key_threshold, core_sched::config::MIN_WRITE_KEY_THRESHOLD);
    }

    /// The redo family pins the consistent level exactly when it is on: a pinned plan
    /// with redo off runs without the redo log, as the draw does.
    #[test]
    fn pinned_redo_is_the_drawn_consistent_level() {
        for on in [false, true] {
            let seed = (0..100).find(|s| plan(*s).families["redo"] == on).expect("a seed with redo on and one off");
            let p = plan(seed);
            let base = crate::scenario::load::resolve("swarm").unwrap().scenario;
            let mut scn = base.clone();
            p.pin(&mut scn);
            let pinned = super::super::config::changefeed_config(&scn.changefeed).consistent;
            let mut world = World::new(seed, Default::default(), 3, [1, 1]);
            let mut cfg = super::super::config::changefeed_config(&base.changefeed);
            p.apply(&mut world, &mut cfg);
            assert_eq!(pinned, cfg.consistent, "redo on: {}", on);
            assert_eq!(cfg.consistent.redo_enabled(), on);
        }
    }
}
