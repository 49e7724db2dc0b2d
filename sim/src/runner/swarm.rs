//! The swarm draw: for a swarm scenario the seed decides which fault families are on
//! and how hard, so one scenario covers many fault mixes.

use crate::world::*;
use core_sched::config::ChangefeedConfig;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;

/// Draw the fault families into the world and changefeed config and print the plan; the
/// draws come from their own stream (seeded from the seed), in a fixed order: new
/// families are drawn last so older seeds keep their plans.
pub(super) fn draw(
    seed: u64,
    world: &mut World,
    cfg: &mut ChangefeedConfig,
    config_lines: &mut Vec<String>,
) -> BTreeMap<String, bool> {
    let mut families = BTreeMap::new();
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x5757_4152_4d00_0001);
    let mut on = |name: &str, r: &mut rand_chacha::ChaCha8Rng| {
        let v = r.random_bool(0.5);
        families.insert(name.to_string(), v);
        v
    };
    if on("net.loss", &mut r) {
        world.net.loss = r.random_range(0.01..0.1);
    }
    if on("net.duplicate", &mut r) {
        world.net.duplicate = r.random_range(0.01..0.05);
    }
    if on("net.delay_spike", &mut r) {
        world.net.delay_spike = r.random_range(0.01..0.05);
    }
    if on("storage.slow", &mut r) {
        world.storage_latency_ms = [5, r.random_range(50..500)];
    }
    on("kill_restart", &mut r);
    on("move_maintainer", &mut r);
    on("move_table", &mut r);
    on("split_merge", &mut r);
    on("partition", &mut r);
    // Drawn last, so the draws above (and runs without syncpoints) are unchanged.
    if on("sync_point", &mut r) {
        cfg.enable_sync_point = true;
        cfg.sync_point_interval_ms = r.random_range(2..=8u64) * 1000;
    }
    if on("collector.lag", &mut r) {
        world.net.collector.prob = r.random_range(0.01..0.1);
    }
    if on("stream.lag", &mut r) {
        world.net.stream.prob = r.random_range(0.01..0.1);
    }
    // Added after the others, for the same reason (and `random_workload` leaves the
    // op out of its draw when the family is off).
    on("session_loss", &mut r);
    // Slow first events (a new event-store subscription): drawn last as well.
    if on("first_event.slow", &mut r) {
        let lo = r.random_range(0..200u64);
        world.first_event_ms = [lo, r.random_range(lo.max(200)..1500)];
    }
    // Message-center stream reconnects: drawn last as well.
    if on("stream.reconnect", &mut r) {
        world.net.reconnect = r.random_range(0.002..0.02);
        let lo = r.random_range(10..200u64);
        world.net.reconnect_ms = [lo, r.random_range(200..1500u64)];
    }
    // RENAME / RECOVER / CREATE TABLES / ALTER DATABASE in the workload: drawn last as
    // well (off: the workload draws from its old op list).
    on("ddl_table_set", &mut r);
    config_lines.push(format!("swarm families = {:?}", families));
    config_lines.push(format!("swarm plan: net.loss = {:.3}, net.duplicate = {:.3}, net.delay_spike = {:.3}, net.collector_lag = {:.3}, net.stream_lag = {:.3}, storage.latency_ms = {:?}, sync_point_interval_ms = {}, dispatcher.first_event_ms = {:?}", world.net.loss, world.net.duplicate, world.net.delay_spike, world.net.collector.prob, world.net.stream.prob, world.storage_latency_ms, if cfg.enable_sync_point { cfg.sync_point_interval_ms.to_string() } else { "off".into() }, world.first_event_ms));
    if world.net.reconnect > 0.0 {
        config_lines.push(format!(
            "swarm plan: net.stream_reconnect = {:.3} of {:?} ms",
            world.net.reconnect, world.net.reconnect_ms
        ));
    }
    families
}
