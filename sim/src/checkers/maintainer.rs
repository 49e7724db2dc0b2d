//! The maintainer's own books, after every maintainer step: `one-operator-per-dispatcher`
//! (the operator controller runs at most one operator per dispatcher) and `span-partition`
//! (once bootstrapped, the spans of every live table cover it without holes or overlaps,
//! but for the transient overlaps TiCDC allows: a merge over its sources, a task kept as
//! coverage under a cleanup Remove).
//!
//! TiCDC's promise: operators on one span are exclusive (`AddOperator` refuses a second)
//! and the span controller partitions every table (§6, §16). Caught: the non-atomic
//! operator admission of TiCDC #6069 (`nonatomic-operator-admission`).

use super::*;
use core_sched::maintainer::operator::Operator;
use core_sched::maintainer::Maintainer;
use core_sched::types::*;
use std::collections::BTreeMap;

pub fn check_maintainer(m: &Maintainer) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    // Count first; describe (format) only the operators of a violation.
    let mut count: BTreeMap<DispatcherId, usize> = BTreeMap::new();
    for op in m.oc.running() {
        *count.entry(op.id()).or_default() += 1;
    }
    for (id, n) in count.into_iter().filter(|(_, n)| *n > 1) {
        let ops: Vec<String> = m.oc.running().filter(|op| op.id() == id).map(|op| op.describe()).collect();
        out.push((
            ONE_OPERATOR_PER_DISPATCHER,
            format!("dispatcher {} has {} running operators: {}", id, n, ops.join("; ")),
        ));
    }
    if m.initialized() {
        for &t in m.sc.by_table.keys() {
            if t == DDL_SPAN_TABLE_ID {
                continue;
            }
            // A table whose every task is only kept as coverage for a cleanup Remove (e.g.
            // the leftovers of a dropped table found at bootstrap) is not a live table.
            if m.sc.tasks_of_table(t).iter().all(|r| matches!(m.oc.get(&r.id), Some(Operator::Remove(_)))) {
                continue;
            }
            let (_, holes) = m.sc.table_partition_problems(t);
            // Transient overlaps TiCDC allows: a merge target over its (occupied)
            // sources, and a task kept as coverage under a cleanup Remove.
            let transient = |id: &DispatcherId| {
                matches!(m.oc.get(id), Some(Operator::Merge(_) | Operator::Occupy(_) | Operator::Remove(_)))
            };
            let mut spans: Vec<(TableSpan, DispatcherId)> =
                m.sc.tasks_of_table(t).iter().map(|r| (r.span, r.id)).collect();
            spans.sort();
            let mut overlaps = Vec::new();
            for i in 1..spans.len() {
                for j in 0..i {
                    if spans[j].0.overlaps(&spans[i].0) && !transient(&spans[j].1) && !transient(&spans[i].1) {
                        overlaps.push((spans[j].0, spans[i].0));
                    }
                }
            }
            if !overlaps.is_empty() {
                out.push((SPAN_PARTITION, format!("table {}: overlapping spans {:?}", t, overlaps)));
            }
            if !holes.is_empty() {
                out.push((SPAN_PARTITION, format!("table {}: holes {:?}", t, holes)));
            }
        }
    }
    out
}
