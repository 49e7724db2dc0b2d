//! Basic scheduler (§7.1): places Absent spans on the node with the fewest Scheduling
//! tasks of the same group (not total load), ties broken by the injected generator
//! (Go map iteration order in TiCDC).

use super::operator::{AddDispatcherOperator, Operator};
use super::span_controller::{GroupId, SpanController};
use crate::messages::OperatorType;
use crate::types::*;
use std::collections::BTreeSet;

/// Basic scheduler period.
pub const BASIC_SCHEDULER_INTERVAL_MS: u64 = 500;

/// Pick Add operators for absent spans. `available` = batch size minus running operators.
pub fn basic_schedule(sc: &SpanController, alive: &BTreeSet<NodeId>, available: usize, per_node_cap: usize, rng: &mut dyn rand::RngCore) -> Vec<Operator> {
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
                return ops;
            }
            let min = *counts.values().min().unwrap();
            let cap = if g == GroupId::Default { usize::MAX } else { per_node_cap };
            if min >= cap {
                break;
            }
            let cands: Vec<NodeId> = counts.iter().filter(|(_, c)| **c == min).map(|(n, _)| *n).collect();
            let n = cands[(rng.next_u64() % cands.len() as u64) as usize];
            *counts.get_mut(&n).unwrap() += 1;
            ops.push(Operator::Add(AddDispatcherOperator::new(*id, n, OperatorType::Add)));
        }
    }
    ops
}
