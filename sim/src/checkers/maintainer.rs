//! The maintainer's own books, after every maintainer step that changed them (a task or an
//! operator came or went, or the bootstrap finished: `core_sched::maintainer::books`;
//! `--full-checks` checks after every maintainer step): `one-operator-per-dispatcher`
//! (the operator controller runs at most one operator per dispatcher) and `span-partition`
//! (once bootstrapped, the spans of every live table cover it without holes or overlaps,
//! but for the transient overlaps TiCDC allows: a merge over its sources, a task kept as
//! coverage under a cleanup Remove).
//!
//! TiCDC's promise: operators on one span are exclusive (`AddOperator` refuses a second)
//! and the span controller partitions every table (§6, §16). Caught: the non-atomic
//! operator admission of TiCDC #6069 (`nonatomic-operator-admission`).
//!
//! It runs over every table of a changed maintainer, so it allocates nothing for a
//! table whose books are in order (one buffer reused across tables) and finds overlaps in
//! one sweep over the sorted spans.

use super::*;
use core_sched::maintainer::operator::Operator;
use core_sched::maintainer::Maintainer;
use core_sched::types::*;
use std::collections::BTreeMap;

pub fn check_maintainer(m: &Maintainer) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    check_operators(m, &mut out);
    if m.initialized() {
        let mut spans: Vec<(TableSpan, DispatcherId)> = Vec::new();
        for (&t, ids) in &m.pipe.sc.by_table {
            if t == DDL_SPAN_TABLE_ID {
                continue;
            }
            // Most tables: one task, the whole table. Whatever its operator, no hole and
            // no overlap (a missing task leaves no live table either).
            if ids.len() == 1 {
                let whole = |r: &core_sched::maintainer::span_controller::SpanReplication| {
                    r.span.table_id == t && r.span.is_full()
                };
                if ids.first().and_then(|id| m.pipe.sc.tasks.get(id)).is_none_or(whole) {
                    continue;
                }
            }
            spans.clear();
            // A table whose every task is only kept as coverage for a cleanup Remove (e.g.
            // the leftovers of a dropped table found at bootstrap) is not a live table.
            let mut only_removes = true;
            for r in ids.iter().filter_map(|id| m.pipe.sc.tasks.get(id)) {
                only_removes = only_removes && matches!(m.pipe.oc.get(&r.id), Some(Operator::Remove(_)));
                spans.push((r.span, r.id));
            }
            if only_removes {
                continue;
            }
            spans.sort_unstable();
            check_table(m, t, &spans, &mut out);
        }
    }
    out
}

/// `one-operator-per-dispatcher`: count first; describe (format) only the operators of a
/// violation, in dispatcher ID order.
fn check_operators(m: &Maintainer, out: &mut Vec<(&'static str, String)>) {
    let mut ids: Vec<DispatcherId> = m.pipe.oc.running().map(|op| op.id()).collect();
    ids.sort_unstable();
    for run in ids.chunk_by(|a, b| a == b).filter(|r| r.len() > 1) {
        let id = run[0];
        let ops: Vec<String> = m.pipe.oc.running().filter(|op| op.id() == id).map(|op| op.describe()).collect();
        out.push((
            ONE_OPERATOR_PER_DISPATCHER,
            format!("dispatcher {} has {} running operators: {}", id, run.len(), ops.join("; ")),
        ));
    }
}

/// `span-partition` of one live table over its tasks' `(span, id)`, sorted.
fn check_table(m: &Maintainer, t: TableId, spans: &[(TableSpan, DispatcherId)], out: &mut Vec<(&'static str, String)>) {
    // Overlapping pairs (earlier, later) in sorted order, but for the transient overlaps
    // TiCDC allows: a merge target over its (occupied) sources, and a task kept as
    // coverage under a cleanup Remove. `active` holds the earlier non-transient spans
    // that may still reach a later start (ascending, so pairs keep their order).
    let mut overlaps = Vec::new();
    if spans.len() > 1 {
        let transient = |id: &DispatcherId| {
            matches!(m.pipe.oc.get(id), Some(Operator::Merge(_) | Operator::Occupy(_) | Operator::Remove(_)))
        };
        let mut active: Vec<usize> = Vec::new();
        for (i, (s, id)) in spans.iter().enumerate() {
            // Sorted by (table, start): a span ending at or before this start overlaps no
            // later span either.
            active.retain(|&j| spans[j].0.table_id == s.table_id && spans[j].0.end > s.start);
            if transient(id) {
                continue;
            }
            overlaps.extend(active.iter().filter(|&&j| spans[j].0.overlaps(s)).map(|&j| (spans[j].0, *s)));
            active.push(i);
        }
    }
    if !overlaps.is_empty() {
        out.push((SPAN_PARTITION, format!("table {}: overlapping spans {:?}", t, overlaps)));
    }
    // Holes of [0, TABLE_KEY_END) (as `find_holes`, over the table's own spans).
    let mut holes = Vec::new();
    let mut cur = 0u64;
    for (s, _) in spans.iter().filter(|(s, _)| s.table_id == t) {
        if s.start > cur {
            holes.push(TableSpan { table_id: t, start: cur, end: s.start });
        }
        cur = cur.max(s.end);
    }
    if cur < TABLE_KEY_END {
        holes.push(TableSpan { table_id: t, start: cur, end: TABLE_KEY_END });
    }
    if !holes.is_empty() {
        out.push((SPAN_PARTITION, format!("table {}: holes {:?}", t, holes)));
    }
}

/// The maintainer checks as first written, each table's spans compared pair by pair: the
/// reference [`check_maintainer`] must agree with (`--full-checks` runs it instead).
pub fn check_maintainer_full(m: &Maintainer) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    // Count first; describe (format) only the operators of a violation.
    let mut count: BTreeMap<DispatcherId, usize> = BTreeMap::new();
    for op in m.pipe.oc.running() {
        *count.entry(op.id()).or_default() += 1;
    }
    for (id, n) in count.into_iter().filter(|(_, n)| *n > 1) {
        let ops: Vec<String> = m.pipe.oc.running().filter(|op| op.id() == id).map(|op| op.describe()).collect();
        out.push((
            ONE_OPERATOR_PER_DISPATCHER,
            format!("dispatcher {} has {} running operators: {}", id, n, ops.join("; ")),
        ));
    }
    if m.initialized() {
        for &t in m.pipe.sc.by_table.keys() {
            if t == DDL_SPAN_TABLE_ID {
                continue;
            }
            // A table whose every task is only kept as coverage for a cleanup Remove (e.g.
            // the leftovers of a dropped table found at bootstrap) is not a live table.
            if m.pipe.sc.tasks_of_table(t).iter().all(|r| matches!(m.pipe.oc.get(&r.id), Some(Operator::Remove(_)))) {
                continue;
            }
            let (_, holes) = m.pipe.sc.table_partition_problems(t);
            // Transient overlaps TiCDC allows: a merge target over its (occupied)
            // sources, and a task kept as coverage under a cleanup Remove.
            let transient = |id: &DispatcherId| {
                matches!(m.pipe.oc.get(id), Some(Operator::Merge(_) | Operator::Occupy(_) | Operator::Remove(_)))
            };
            let mut spans: Vec<(TableSpan, DispatcherId)> =
                m.pipe.sc.tasks_of_table(t).iter().map(|r| (r.span, r.id)).collect();
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
