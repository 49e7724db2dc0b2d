//! Simulation-level tests: determinism of runs and fire/quiet pairs of the invariants.

use core_sched::bugs::Bugs;
use core_sched::dispatcher::{Dispatcher, DispatcherManager};
use core_sched::messages::ComponentState;
use core_sched::types::*;
use ticdc_sim::invariants::*;
use ticdc_sim::result::Outcome;
use ticdc_sim::runner::{run_on_fresh_thread, RunOptions};
use ticdc_sim::scenario::Scenario;

fn scenario(name: &str) -> Scenario {
    let p = format!("{}/../scenarios/{}.toml", env!("CARGO_MANIFEST_DIR"), name);
    toml::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn same_seed_same_trace_hash_and_different_seeds_differ() {
    let s = scenario("basic_replication");
    let a = run_on_fresh_thread(&s, 11, &Bugs::none(), &RunOptions::default());
    let b = run_on_fresh_thread(&s, 11, &Bugs::none(), &RunOptions::default());
    assert_eq!(a.trace_hash, b.trace_hash);
    assert_eq!(a.trace, b.trace);
    let hashes: std::collections::BTreeSet<String> = (20..25).map(|seed| run_on_fresh_thread(&s, seed, &Bugs::none(), &RunOptions::default()).trace_hash).collect();
    assert!(hashes.len() >= 4, "different seeds should usually differ: {:?}", hashes);
}

#[test]
fn injected_nondeterminism_changes_the_trace() {
    let s = scenario("basic_replication");
    let opts = RunOptions { verbose: false, inject_nondeterminism: true };
    let a = run_on_fresh_thread(&s, 3, &Bugs::none(), &opts);
    let b = run_on_fresh_thread(&s, 3, &Bugs::none(), &opts);
    assert_ne!(a.trace_hash, b.trace_hash);
}

#[test]
fn walking_skeleton_and_failover_pass_on_the_fixed_core() {
    for name in ["basic_replication", "fail_over"] {
        let s = scenario(name);
        for seed in 0..10 {
            let r = run_on_fresh_thread(&s, seed, &Bugs::none(), &RunOptions::default());
            assert_eq!(r.outcome, Outcome::Pass, "{} seed {}: {:?} {:?}", name, seed, r.violations, r.checks);
            assert!(r.checks.iter().all(|c| c.passed));
            assert!(r.sim_time_ms > 0 && r.events > 0);
        }
    }
}

fn dm_with(node: u32, ds: &[(u64, TableSpan, ComponentState, bool)]) -> DispatcherManager {
    let mut dm = DispatcherManager::new(ChangefeedId("cf".into()), NodeId(node), Default::default(), node as u64);
    for (id, span, st, trig) in ds {
        let mut d = Dispatcher::new(DispatcherId(*id), *span, 1, 10, *trig, false);
        d.state = *st;
        dm.dispatchers.insert(DispatcherId(*id), d);
    }
    dm
}

#[test]
fn one_dispatcher_per_key_fires_on_overlap_and_is_quiet_on_a_partition() {
    let full = TableSpan::full(22);
    let halves = split_span_evenly(&full, 2);
    // Quiet: two halves on two nodes, plus one trigger.
    let a = dm_with(0, &[(1, halves[0], ComponentState::Working, false), (9, TableSpan::ddl_span(), ComponentState::Working, true)]);
    let b = dm_with(1, &[(2, halves[1], ComponentState::Initializing, false)]);
    assert!(check_dispatchers([(NodeId(0), &a), (NodeId(1), &b)].into_iter()).is_empty());
    // Fire: a second full-span dispatcher on the same node (the seed-000 shape).
    let c = dm_with(1, &[(2, halves[1], ComponentState::Initializing, false), (3, full, ComponentState::Working, false)]);
    let v = check_dispatchers([(NodeId(0), &a), (NodeId(1), &c)].into_iter());
    assert!(v.iter().any(|(inv, _)| *inv == ONE_DISPATCHER_PER_KEY), "{:?}", v);
    // A dispatcher being removed writes nothing and does not count.
    let mut d = dm_with(1, &[(3, full, ComponentState::Working, false)]);
    d.dispatchers.get_mut(&DispatcherId(3)).unwrap().try_removing = true;
    assert!(check_dispatchers([(NodeId(0), &a), (NodeId(1), &d)].into_iter()).is_empty());
}

#[test]
fn one_instance_per_id_and_one_trigger_fire() {
    let a = dm_with(0, &[(1, TableSpan::full(5), ComponentState::Working, false), (9, TableSpan::ddl_span(), ComponentState::Working, true)]);
    let b = dm_with(1, &[(1, TableSpan::full(5), ComponentState::Working, false), (8, TableSpan::ddl_span(), ComponentState::Working, true)]);
    let v = check_dispatchers([(NodeId(0), &a), (NodeId(1), &b)].into_iter());
    let names: Vec<&str> = v.iter().map(|(n, _)| *n).collect();
    assert!(names.contains(&ONE_INSTANCE_PER_ID));
    assert!(names.contains(&ONE_TABLE_TRIGGER));
}
