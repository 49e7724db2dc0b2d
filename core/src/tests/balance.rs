//! Balance scheduler (§7.2): the move plan of `pkg/scheduler.Balance` and the guards of
//! `balanceScheduler.Execute` (failpoint, running operators, absent spans, interval).

use super::harness::*;
use crate::effects::FP_STOP_BALANCE_SCHEDULER;
use crate::maintainer::operator::Operator;
use crate::maintainer::scheduler::{balance_moves, check_balance_status};
use crate::messages::*;
use crate::types::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

#[test]
fn moves_fill_every_node_up_to_the_floor_of_the_average() {
    let tasks: Vec<(DispatcherId, NodeId)> = (1..=7).map(|i| (d(i), n(0))).collect();
    for seed in 0..20 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let moves = balance_moves(&tasks, &nodes(&[0, 1, 2]), 1024, &mut rng);
        // floor(7 / 3) = 2: nodes 1 and 2 each receive two tasks, all from node 0.
        assert_eq!(moves.len(), 4, "seed {seed}: {moves:?}");
        let mut to: BTreeMap<NodeId, usize> = BTreeMap::new();
        for (id, from, dest) in &moves {
            assert_eq!(*from, n(0));
            assert!(tasks.iter().any(|(t, _)| t == id));
            *to.entry(*dest).or_default() += 1;
        }
        assert_eq!(to, [(n(1), 2), (n(2), 2)].into_iter().collect());
        let mut ids: Vec<_> = moves.iter().map(|m| m.0).collect();
        ids.dedup();
        assert_eq!(ids.len(), 4, "a task moves at most once");
    }
}

#[test]
fn moves_are_capped_by_the_batch_size_and_a_balanced_cluster_moves_nothing() {
    let tasks: Vec<(DispatcherId, NodeId)> = (1..=6).map(|i| (d(i), n(0))).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    assert_eq!(balance_moves(&tasks, &nodes(&[0, 1, 2]), 1, &mut rng).len(), 1);
    let even: Vec<(DispatcherId, NodeId)> = (1..=6).map(|i| (d(i), n((i % 3) as u32))).collect();
    assert!(balance_moves(&even, &nodes(&[0, 1, 2]), 1024, &mut rng).is_empty());
    let per_node: BTreeMap<NodeId, usize> = [(n(0), 5), (n(1), 1)].into_iter().collect();
    assert_eq!(
        check_balance_status(&per_node, &nodes(&[0, 1, 2])),
        2 + 1,
        "floor(6/3)=2: node 1 needs 1, node 2 needs 2"
    );
    assert_eq!(check_balance_status(&BTreeMap::new(), &nodes(&[])), 0);
}

/// A maintainer on node 0 whose four tables all replicate on node 1.
fn lopsided() -> MH {
    let mut h = MH::new(&[0, 1], TestSchema::with_tables(&[1, 2, 3, 4]));
    let spans = (1..=4).map(|t| bspan(d(10 + t as u64), TableSpan::full(t), ComponentState::Working, START)).collect();
    h.bootstrap(vec![(1, NodeReport::spans(spans))]);
    h
}

fn balance(h: &mut MH) -> Vec<(DispatcherId, Option<NodeId>, NodeId)> {
    let mut ctx = h.env.ctx();
    h.m.run_balance_scheduler(&mut ctx, &h.schema);
    h.env.take();
    h.m.pipe
        .oc
        .running()
        .filter_map(|op| match op {
            Operator::Move(m) => Some((m.id, m.origin, m.dest)),
            _ => None,
        })
        .collect()
}

#[test]
fn balance_moves_replicating_tables_to_the_empty_node() {
    let mut h = lopsided();
    let moves = balance(&mut h);
    assert_eq!(moves.len(), 2, "{moves:?}");
    assert!(moves.iter().all(|(_, o, d)| *o == Some(n(1)) && *d == n(0)));
    assert!(moves.iter().all(|(id, _, _)| *id != h.ddl()), "the DDL span is never balanced");
}

#[test]
fn balance_waits_for_its_interval_and_respects_the_failpoint() {
    let mut h = lopsided();
    h.env.fp_on(FP_STOP_BALANCE_SCHEDULER);
    assert!(balance(&mut h).is_empty());
    h.env.fp_off(FP_STOP_BALANCE_SCHEDULER);
    // The stopped run still consumed this interval.
    h.env.now += 1000;
    assert!(balance(&mut h).is_empty());
    h.env.now += h.m.config.scheduler.check_balance_interval_ms;
    assert_eq!(balance(&mut h).len(), 2);
}

#[test]
fn balance_skips_while_a_span_is_absent_or_an_operator_runs() {
    let mut h = lopsided();
    h.m.pipe.sc.mark_absent(&d(11));
    assert!(balance(&mut h).is_empty(), "absent span");
    let mut h = lopsided();
    h.m.api_move_table(&mut h.env.ctx(), 1, n(0)).unwrap();
    h.env.take();
    assert_eq!(balance(&mut h).len(), 1, "only the API's move runs");
}

/// Two tables replicating one each on nodes 0 and 1, table-across-nodes on with a
/// region threshold of 10; table 1 has `regions` regions.
fn across_nodes(regions: u64) -> MH {
    let mut schema = TestSchema::with_tables(&[1, 2]);
    schema.regions.insert(1, regions);
    let mut env = Env::new(0);
    let mut cfg = crate::config::ChangefeedConfig::default();
    cfg.scheduler.enable_table_across_nodes = true;
    cfg.scheduler.region_threshold = 10;
    let m = crate::maintainer::Maintainer::new(&mut env.ctx(), cf(), cfg, START, EPOCH, false, nodes(&[0, 1]));
    env.take();
    let mut h = MH { env, m, schema };
    h.bootstrap(vec![
        (0, NodeReport::spans(vec![bspan(d(11), TableSpan::full(1), ComponentState::Working, START)])),
        (1, NodeReport::spans(vec![bspan(d(12), TableSpan::full(2), ComponentState::Working, START)])),
    ]);
    h
}

fn split_ops(h: &MH) -> Vec<(DispatcherId, usize)> {
    h.m.pipe
        .oc
        .running()
        .filter_map(|op| match op {
            Operator::Split(s) => Some((s.id, s.split_spans.len())),
            _ => None,
        })
        .collect()
}

#[test]
fn a_whole_table_span_over_the_region_threshold_is_split() {
    let mut h = across_nodes(20);
    balance(&mut h);
    // max(2 * ceil(20 / 10), 2 * 2 nodes) = 4 pieces, placed later by the basic scheduler.
    assert_eq!(split_ops(&h), vec![(d(11), 4)]);
    let mut h = across_nodes(9);
    balance(&mut h);
    assert!(split_ops(&h).is_empty(), "under the threshold");
}

#[test]
fn region_counts_are_refreshed_every_five_minutes() {
    let mut h = across_nodes(3);
    balance(&mut h);
    assert!(split_ops(&h).is_empty());
    // The table is split into 30 regions upstream: the cached count holds until the refresh.
    h.schema.regions.insert(1, 30);
    h.env.now += h.m.config.scheduler.check_balance_interval_ms;
    balance(&mut h);
    assert!(split_ops(&h).is_empty(), "count not refreshed yet");
    h.env.now = crate::maintainer::REGION_REFRESH_INTERVAL_MS + 1;
    balance(&mut h);
    assert_eq!(split_ops(&h), vec![(d(11), 6)], "2 * ceil(30 / 10) = 6 pieces");
}
