//! Goroutines and locks: the halves of a lock-split goroutine run as steps of their own,
//! so madsim's seeded scheduler interleaves other goroutines in between, as Go can.
//! The counts come from typed observations (`Observation::CheckpointCalculated`,
//! `Observation::StatusBatchSent`), not from trace text.

use core_sched::bugs::Bugs;
use ticdc_sim::result::{Outcome, RunResult};
use ticdc_sim::runner::{run_on_fresh_thread, RunOptions};
use ticdc_sim::scenario::Scenario;
use ticdc_sim::world::{
    INTERLEAVE_AGGREGATE_IN_STATUS_BATCH, INTERLEAVE_CHECKPOINT_IN_HEARTBEAT, INTERLEAVE_HEARTBEAT_HALVES,
    INTERLEAVE_STATUS_BATCHES,
};

fn scenario(name: &str) -> Scenario {
    let p = format!("{}/../scenarios/{}.toml", env!("CARGO_MANIFEST_DIR"), name);
    toml::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn count(r: &RunResult, k: &str) -> u64 {
    r.interleavings.get(k).copied().unwrap_or(0)
}

/// The first seed of `ddl_with_random_move_table` (0..20) where `k` was counted, with its
/// result (every seed run must pass).
fn first_seed_with(k: &str) -> Option<(u64, RunResult)> {
    let s = scenario("ddl_with_random_move_table");
    (0..20).map(|seed| (seed, run_on_fresh_thread(&s, seed, &Bugs::none(), &RunOptions::default()))).find(|(_, r)| {
        assert_eq!(r.outcome, Outcome::Pass, "{:?}", r.violations);
        count(r, k) > 0
    })
}

/// `onHeartbeatRequest` stores the node's watermark (`checkpointTsByCapture.Set`) and then
/// hands the statuses to the controllers; `calCheckpointTs` runs in its own goroutine and
/// can compute a checkpoint in between (maintainer/maintainer.go:916-963 vs 696-733).
/// Merged back into one step, no checkpoint round could see a half-handled heartbeat.
#[test]
fn checkpoint_runs_between_the_halves_of_a_heartbeat() {
    let (seed, r) = first_seed_with(INTERLEAVE_CHECKPOINT_IN_HEARTBEAT)
        .expect("some seed computes a checkpoint between a heartbeat's watermark and its statuses");
    assert!(count(&r, INTERLEAVE_HEARTBEAT_HALVES) > 0);
    eprintln!("seed {seed}: {:?}", r.interleavings);
}

/// `collectComponentStatusWhenChanged` batches status changes for 10 ms from the first
/// (dispatcher_manager.go:852); `aggregateDispatcherHeartbeats` runs in the heartbeat
/// collector meanwhile. With per-step batching no aggregate could fall inside a batch.
#[test]
fn heartbeat_aggregation_falls_inside_a_status_batch_window() {
    let (seed, r) = first_seed_with(INTERLEAVE_AGGREGATE_IN_STATUS_BATCH)
        .expect("some seed aggregates heartbeats while a status batch is open");
    assert!(count(&r, INTERLEAVE_STATUS_BATCHES) >= count(&r, INTERLEAVE_AGGREGATE_IN_STATUS_BATCH));
    eprintln!("seed {seed}: {:?}", r.interleavings);
}

/// The split keeps runs deterministic: same seed, same interleavings, same trace hash.
#[test]
fn split_steps_are_deterministic() {
    let s = scenario("basic_replication");
    let a = run_on_fresh_thread(&s, 5, &Bugs::none(), &RunOptions::default());
    let b = run_on_fresh_thread(&s, 5, &Bugs::none(), &RunOptions::default());
    assert_eq!(a.trace_hash, b.trace_hash);
    assert_eq!(a.interleavings, b.interleavings);
}
