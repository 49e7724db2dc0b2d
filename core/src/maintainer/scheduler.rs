//! Schedulers (§7). Basic (§7.1): places Absent spans on the node with the fewest
//! Scheduling tasks of the same group (not total load), ties broken by the injected
//! generator (Go map iteration order in TiCDC). Balance (§7.2): moves Replicating
//! default-group spans so that every node holds at least `floor(total / nodes)`.

use super::operator::{AddDispatcherOperator, Operator};
use super::span_controller::{GroupId, SpanController};
use crate::coverage::{hit, Point as P};
use crate::messages::OperatorType;
use crate::types::*;
use std::collections::{BTreeMap, BTreeSet};

/// Basic scheduler period.
pub const BASIC_SCHEDULER_INTERVAL_MS: u64 = 500;

/// Pick Add operators for absent spans. `available` = batch size minus running operators.
pub fn basic_schedule(
    sc: &SpanController,
    alive: &BTreeSet<NodeId>,
    available: usize,
    per_node_cap: usize,
    rng: &mut dyn rand::RngCore,
) -> Vec<Operator> {
    let mut ops = Vec::new();
    if alive.is_empty() || available == 0 {
        return ops;
    }
    let absent = sc.absent();
    let mut by_group: std::collections::BTreeMap<GroupId, Vec<DispatcherId>> = Default::default();
    for id in absent {
        let g = sc.get(&id).unwrap().group();
        by_group.entry(g).or_default().push(id);
    }
    // Split-table groups first, default group last.
    let mut groups: Vec<GroupId> = by_group.keys().copied().collect();
    groups.sort_by_key(|g| matches!(g, GroupId::Default));
    for g in groups {
        let mut counts = sc.scheduling_count_per_node(g);
        for n in alive {
            counts.entry(*n).or_insert(0);
        }
        for id in &by_group[&g] {
            if ops.len() >= available {
                hit(P::BasicScheduleBatchFull);
                return ops;
            }
            let min = *counts.values().min().unwrap();
            let cap = if g == GroupId::Default { usize::MAX } else { per_node_cap };
            if min >= cap {
                hit(P::BasicScheduleGroupCapped);
                break;
            }
            let cands: Vec<NodeId> = counts.iter().filter(|(_, c)| **c == min).map(|(n, _)| *n).collect();
            let n = cands[(rng.next_u64() % cands.len() as u64) as usize];
            *counts.get_mut(&n).unwrap() += 1;
            hit(P::BasicScheduleAdd);
            ops.push(Operator::Add(AddDispatcherOperator::new(*id, n, OperatorType::Add)));
        }
    }
    ops
}

/// How many default-group tasks must move so that every alive node holds at least
/// `floor(total / nodes)` of them (`pkg/scheduler.CheckBalanceStatus`).
pub fn check_balance_status(per_node: &BTreeMap<NodeId, usize>, alive: &BTreeSet<NodeId>) -> usize {
    if alive.is_empty() {
        return 0;
    }
    let sizes: Vec<usize> = alive.iter().map(|n| per_node.get(n).copied().unwrap_or(0)).collect();
    let lower = sizes.iter().sum::<usize>() / sizes.len();
    sizes.iter().map(|s| lower.saturating_sub(*s)).sum()
}

/// Pick `(dispatcher, origin, dest)` moves for the balance scheduler's default group
/// (`pkg/scheduler.Balance`): nodes below `floor(replicating / nodes)` receive tasks
/// taken from the most loaded nodes, at most `batch` moves. Equal loads are ordered by
/// the injected generator, as TiCDC's priority queues order them randomly, and each
/// victim node's tasks are shuffled before the first one is taken.
///
/// `replicating` are the Replicating default-group tasks with their node. Nodes that
/// host tasks but are not alive still count in the divisor, as in TiCDC (the node
/// removal marks their tasks Absent first, so in practice they are alive).
pub fn balance_moves(
    replicating: &[(DispatcherId, NodeId)],
    alive: &BTreeSet<NodeId>,
    batch: usize,
    rng: &mut dyn rand::RngCore,
) -> Vec<(DispatcherId, NodeId, NodeId)> {
    let mut node_tasks: BTreeMap<NodeId, Vec<DispatcherId>> = BTreeMap::new();
    for (id, n) in replicating {
        node_tasks.entry(*n).or_default().push(*id);
    }
    for n in alive {
        node_tasks.entry(*n).or_default();
    }
    if node_tasks.is_empty() || batch == 0 {
        return vec![];
    }
    let lower = replicating.len() / node_tasks.len();
    // (load, tasks) of the receivers and of the victims.
    let mut targets: BTreeMap<NodeId, usize> = BTreeMap::new();
    let mut victims: BTreeMap<NodeId, Vec<DispatcherId>> = BTreeMap::new();
    let mut total_move = 0;
    for (n, mut tasks) in node_tasks {
        if tasks.len() >= lower {
            shuffle(&mut tasks, rng);
            victims.insert(n, tasks);
        } else if alive.contains(&n) {
            total_move += lower - tasks.len();
            targets.insert(n, tasks.len());
        }
    }
    let mut moves = Vec::new();
    while moves.len() < batch.min(total_move) {
        let Some(target) = pick(targets.iter().map(|(n, l)| (*n, *l)), |a, b| a < b, rng) else { break };
        if targets[&target] >= lower {
            break;
        }
        let Some(victim) =
            pick(victims.iter().filter(|(_, t)| !t.is_empty()).map(|(n, t)| (*n, t.len())), |a, b| a > b, rng)
        else {
            break;
        };
        let task = victims.get_mut(&victim).unwrap().remove(0);
        moves.push((task, victim, target));
        *targets.get_mut(&target).unwrap() += 1;
    }
    moves
}

/// The node whose load is best by `better`, ties broken by the generator.
fn pick(
    items: impl Iterator<Item = (NodeId, usize)>,
    better: fn(usize, usize) -> bool,
    rng: &mut dyn rand::RngCore,
) -> Option<NodeId> {
    let items: Vec<(NodeId, usize)> = items.collect();
    let best = items.iter().map(|(_, l)| *l).reduce(|a, b| if better(b, a) { b } else { a })?;
    let ties: Vec<NodeId> = items.iter().filter(|(_, l)| *l == best).map(|(n, _)| *n).collect();
    Some(ties[(rng.next_u64() % ties.len() as u64) as usize])
}

fn shuffle<T>(v: &mut [T], rng: &mut dyn rand::RngCore) {
    for i in (1..v.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}
