//! The run's configuration: the changefeed config a scenario asks for, the world its
//! faults and limits describe, and the configuration lines printed with the result.

use super::{RunOptions, NODE_FAILURE_DETECTION_MS};
use crate::scenario::*;
use crate::world::*;
use core_sched::bugs::Bugs;
use core_sched::config::{ChangefeedConfig, ConsistentConfig, ConsistentLevel, SchedulerConfig, SinkConfig};
use std::sync::atomic::{AtomicU64, Ordering};

/// Mixed into the RNG seed by `RunOptions::inject_nondeterminism` (process-global, so
/// two runs of one seed differ).
static NONDETERMINISM: AtomicU64 = AtomicU64::new(1);

/// A duration already checked by the loader.
fn duration_ms(s: &Option<String>, default: u64) -> u64 {
    s.as_deref().map(|d| parse_duration_ms(d).unwrap_or(default)).unwrap_or(default)
}

/// The core's changefeed config from the scenario's `[changefeed]` table (the core's
/// defaults for what it leaves out).
pub(crate) fn changefeed_config(c: &ChangefeedDef) -> ChangefeedConfig {
    let mut s = SchedulerConfig {
        enable_table_across_nodes: c.enable_table_across_nodes,
        enable_splittable_check: c.enable_splittable_check,
        ..Default::default()
    };
    if let Some(v) = c.region_threshold {
        s.region_threshold = v;
    }
    if let Some(v) = c.region_count_per_span {
        s.region_count_per_span = v;
    }
    if let Some(v) = c.check_balance_interval_ms {
        s.check_balance_interval_ms = v;
    }
    s.region_count_refresh_interval_ms =
        duration_ms(&c.region_count_refresh_interval, s.region_count_refresh_interval_ms);
    if let Some(v) = c.write_key_threshold {
        s.write_key_threshold = v;
    }
    if let Some(v) = c.add_table_batch_size {
        s.add_table_batch_size = v;
    }
    if let Some(v) = c.balance_move_batch_size {
        s.balance_move_batch_size = v;
    }
    if let Some(v) = c.scheduling_task_count_per_node {
        s.scheduling_task_count_per_node = v;
    }
    if let Some(v) = c.balance_score_threshold {
        s.balance_score_threshold = v;
    }
    s.adjust_write_key_threshold();
    let mut sink = SinkConfig::default();
    if let Some(v) = c.flush_interval_ms {
        sink.flush_interval_ms = v;
    }
    let d = ChangefeedConfig::default();
    let mut consistent = ConsistentConfig::default();
    if let Some(l) = c.consistent_level.as_deref().and_then(ConsistentLevel::from_name) {
        consistent.level = l;
    }
    if let Some(v) = c.consistent_flush_interval_ms {
        consistent.flush_interval_ms = v;
    }
    if let Some(v) = c.consistent_meta_flush_interval_ms {
        consistent.meta_flush_interval_ms = v;
    }
    // The loader already refused what this would refuse; it only fills in zeros.
    let _ = consistent.validate_and_adjust();
    ChangefeedConfig {
        scheduler: s,
        sink,
        consistent,
        enable_sync_point: c.enable_sync_point,
        sync_point_interval_ms: duration_ms(&c.sync_point_interval, d.sync_point_interval_ms),
        sync_point_retention_ms: duration_ms(&c.sync_point_retention, d.sync_point_retention_ms),
    }
}

/// The world of one run: the scenario's faults and limits with the masked findings'
/// candidate fixes applied; returns the masked fixes too (the configuration names them).
pub(super) fn build_world(
    scn: &Scenario,
    seed: u64,
    bugs: &Bugs,
    opts: &RunOptions,
) -> (World, Vec<core_sched::bugs::Fix>) {
    let nodes = scn.cluster.nodes;
    // The scenario's masked findings: their candidate fixes apply to the run, but the
    // result names only the fixes asked for (`--fix`), so reproduce commands and seed
    // files stay as they are (the scenario applies its masks again).
    let masked: Vec<core_sched::bugs::Fix> = scn.masked_fixes().into_iter().filter(|f| !bugs.fix_on(*f)).collect();
    let mut run_bugs = bugs.clone();
    for f in &masked {
        run_bugs = run_bugs.with_fix(*f);
    }
    let mut world = World::new(seed, run_bugs, nodes, scn.faults.net_delay_ms);
    world.net.loss = scn.faults.loss.clamp(0.0, 1.0);
    world.net.duplicate = scn.faults.duplicate.clamp(0.0, 1.0);
    world.net.delay_spike = scn.faults.delay_spike.clamp(0.0, 1.0);
    world.net.delay_spike_ms = scn.faults.delay_spike_ms;
    world.net.delay_spike_local = scn.faults.delay_spike_local;
    world.net.collector.prob = scn.faults.collector_lag.clamp(0.0, 1.0);
    world.net.collector.range_ms = scn.faults.collector_lag_ms;
    world.net.stream.prob = scn.faults.stream_lag.clamp(0.0, 1.0);
    world.net.stream.range_ms = scn.faults.stream_lag_ms;
    world.net.reconnect = scn.faults.stream_reconnect;
    world.net.reconnect_ms = scn.faults.stream_reconnect_ms;
    // The older engine keeps the straggler model of its time (see `network::reconnect`).
    world.net.reconnect_stragglers = scn.engine == crate::node::Engine::CaptureLoops;
    world.storage_latency_ms = scn.faults.storage_latency_ms;
    world.max_events = scn.limits.max_events;
    world.storage_error = scn.faults.storage_error.clamp(0.0, 1.0);
    world.storage_error_budget = scn.faults.storage_error_max.unwrap_or(u64::MAX);
    world.schema_store_init_ms = scn.faults.schema_store_init_ms;
    world.trigger_create_ms = scn.faults.trigger_create_ms;
    world.first_event_ms = scn.faults.first_event_ms;
    if opts.inject_nondeterminism {
        use rand::SeedableRng;
        world.sim_rng =
            rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ NONDETERMINISM.fetch_add(0x9E37, Ordering::Relaxed));
    }
    world.verbose = opts.verbose;
    world.full_checks = opts.full_checks;
    world.engine = scn.engine;
    if opts.timeline {
        world.timeline = Some(Box::default());
    }
    world.progress = opts.progress.clone();
    world.check_retryable_after_failover = scn.invariants.no_retryable_error_after_failover;
    (world, masked)
}

/// The configuration lines of a run (before the swarm plan and the chosen variables).
pub(super) fn config_lines(
    scn: &Scenario,
    seed: u64,
    bugs: &Bugs,
    masked: &[core_sched::bugs::Fix],
    cfg: &ChangefeedConfig,
) -> Vec<String> {
    let nodes = scn.cluster.nodes;
    let fix_line = (!bugs.1.is_empty())
        .then(|| format!("fixes = [{}] (candidate fixes, not TiCDC's behaviour)", bugs.fix_names().join(", ")));
    let mut config_lines = vec![
        format!("seed = {}", seed),
        format!("bugs = [{}]", bugs.names().join(", ")),
        format!("nodes = {}", nodes),
        format!("net.delay_ms = {:?}", scn.faults.net_delay_ms),
        format!("storage.latency_ms = {:?}", scn.faults.storage_latency_ms),
        format!(
            "net.loss = {}, net.duplicate = {}, net.delay_spike = {} of {:?} ms",
            scn.faults.loss, scn.faults.duplicate, scn.faults.delay_spike, scn.faults.delay_spike_ms
        ),
        format!("storage.error = {}", scn.faults.storage_error),
        format!("changefeed.scheduler = {:?}", cfg.scheduler),
        format!("changefeed.sink.flush_interval_ms = {}", cfg.sink.flush_interval_ms),
        format!(
            "changefeed.enable_sync_point = {}, sync_point_interval_ms = {}",
            cfg.enable_sync_point, cfg.sync_point_interval_ms
        ),
        format!("node_failure_detection_ms = {}", NODE_FAILURE_DETECTION_MS),
    ];
    if let Some(l) = fix_line {
        config_lines.insert(2, l);
    }
    if !masked.is_empty() {
        let names: Vec<&str> = masked.iter().map(|f| f.name()).collect();
        config_lines.insert(2, format!("masked findings = [{}] (the scenario applies these candidate fixes; `mask-findings = []` runs TiCDC's code as is)", names.join(", ")));
    }
    if scn.faults.collector_lag > 0.0 {
        config_lines
            .push(format!("net.collector_lag = {} of {:?} ms", scn.faults.collector_lag, scn.faults.collector_lag_ms));
    }
    if scn.faults.stream_lag > 0.0 {
        config_lines.push(format!("net.stream_lag = {} of {:?} ms", scn.faults.stream_lag, scn.faults.stream_lag_ms));
    }
    if scn.faults.stream_reconnect > 0.0 {
        config_lines.push(format!(
            "net.stream_reconnect = {} of {:?} ms{}",
            scn.faults.stream_reconnect,
            scn.faults.stream_reconnect_ms,
            if scn.engine == crate::node::Engine::CaptureLoops { ", stragglers" } else { "" }
        ));
    }
    if scn.faults.schema_store_init_ms != [0, 0] {
        config_lines.push(format!("schema_store.init_ms = {:?}", scn.faults.schema_store_init_ms));
    }
    if scn.faults.first_event_ms != [0, 0] {
        config_lines.push(format!("dispatcher.first_event_ms = {:?}", scn.faults.first_event_ms));
    }
    if scn.faults.trigger_create_ms != [0, 0] {
        config_lines.push(format!("trigger.create_ms = {:?}", scn.faults.trigger_create_ms));
    }
    config_lines
}
