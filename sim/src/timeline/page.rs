//! The data a timeline page draws, built from a run's result and recording: bounded (a
//! window of at most [`MSG_SHOW`] messages and [`RECORD_SHOW`] trace records around the
//! first violation), with scenario names (`n0`, `t1`, maintainer generations `g1`, ...)
//! and the raw IDs kept for hover text.

use super::record::{BarKey, MsgRec};
use super::Recorded;
use crate::names::{dispatcher_label, lane_of, table_label};
use crate::report::{record_entities, Entity};
use crate::result::{RunResult, TraceRecord};
use core_sched::types::{DispatcherId, NodeId, TableId};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// At most this many message arrows on a page.
pub const MSG_SHOW: usize = 3000;
/// At most this many trace records (dots) on a page.
pub const RECORD_SHOW: usize = 3000;
/// At most this many bars on a page.
pub const BAR_SHOW: usize = 1500;
/// Of a capped window, this share lies before the first violation (the story).
const BEFORE_SHARE: f64 = 0.8;
/// The trace event of a violation (drawn as a violation marker, not a dot).
const VIOLATION_EVENT: &str = "INVARIANT VIOLATED";

#[derive(Clone, Debug, Serialize)]
pub struct Page {
    pub scenario: String,
    pub seed: u64,
    pub bugs: Vec<String>,
    pub fixes: Vec<String>,
    pub outcome: String,
    pub trace_hash: String,
    pub sim_time_ms: u64,
    pub reproduce: String,
    pub lanes: Vec<Lane>,
    pub tables: Vec<Table>,
    pub msgs: Vec<Msg>,
    pub bars: Vec<Bar>,
    pub records: Vec<Record>,
    pub violations: Vec<Mark>,
    pub window: Window,
}

#[derive(Clone, Debug, Serialize)]
pub struct Lane {
    pub name: String,
    pub raw: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Table {
    pub id: TableId,
    pub name: String,
}

/// Entity references of a drawn element: dispatchers (16 hex digits) and tables (IDs,
/// those of its dispatchers included), for the filter.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Ents {
    pub d: Vec<String>,
    pub tb: Vec<TableId>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Msg {
    pub send: u64,
    pub recv: Option<u64>,
    pub from: u32,
    pub to: u32,
    pub kind: &'static str,
    pub dup: bool,
    #[serde(flatten)]
    pub ents: Ents,
    pub detail: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Bar {
    pub node: u32,
    /// `capture`, `maintainer`, `dispatcher` or `operator`.
    pub kind: &'static str,
    /// Short text drawn on the page (scenario names).
    pub label: String,
    /// Hover text with the raw IDs.
    pub raw: String,
    pub start: u64,
    pub end: Option<u64>,
    pub states: Vec<(u64, String)>,
    #[serde(flatten)]
    pub ents: Ents,
}

#[derive(Clone, Debug, Serialize)]
pub struct Record {
    pub at: u64,
    /// A capture's index, or -1 for the scenario driver and checkers.
    pub lane: i64,
    pub event: String,
    pub line: String,
    #[serde(flatten)]
    pub ents: Ents,
}

#[derive(Clone, Debug, Serialize)]
pub struct Mark {
    pub at: u64,
    pub invariant: String,
    pub detail: String,
    #[serde(flatten)]
    pub ents: Ents,
}

/// Which part of the run the page shows, and what the caps left out.
#[derive(Clone, Debug, Serialize)]
pub struct Window {
    pub from_ms: u64,
    pub to_ms: u64,
    pub msgs_total: usize,
    pub msgs_shown: usize,
    pub records_total: usize,
    pub records_shown: usize,
    pub bars_total: usize,
    pub bars_shown: usize,
    /// Not recorded at all (recording caps), or kept out of the trace (`TRACE_CAP`).
    pub unrecorded: u64,
    pub focus_ms: Option<u64>,
}

/// Build the page of a run (`rec`: its recording; without one the page has the trace
/// and violations only).
pub fn build(r: &RunResult, rec: Option<&Recorded>, reproduce: &str) -> Page {
    let focus = r.violations.first().map(|v| v.at_ms);
    let empty = super::Recorder::default();
    let recorder = rec.map(|x| &x.recorder).unwrap_or(&empty);
    let nodes = rec.map(|x| x.nodes).unwrap_or_else(|| lanes_in_trace(&r.trace));
    let names = &r.names.tables;
    let owner = dispatcher_tables(recorder);

    let mut msgs: Vec<&MsgRec> = recorder.msgs.iter().collect();
    msgs.sort_by_key(|m| (m.send_ms, m.recv_ms));
    let (lo, hi) = window(&msgs.iter().map(|m| m.send_ms).collect::<Vec<_>>(), focus, MSG_SHOW);
    let shown_msgs = &msgs[lo..hi];
    let (from_ms, to_ms) = match (shown_msgs.first(), shown_msgs.last()) {
        (Some(a), Some(b)) if msgs.len() > MSG_SHOW => (a.send_ms, b.recv_ms.unwrap_or(b.send_ms).max(b.send_ms)),
        _ => (0, r.sim_time_ms),
    };
    let (from_ms, to_ms) = (from_ms.min(focus.unwrap_or(from_ms)), to_ms.max(focus.unwrap_or(to_ms)));

    let in_window: Vec<&TraceRecord> =
        r.trace.iter().filter(|t| t.event != VIOLATION_EVENT && t.at_ms >= from_ms && t.at_ms <= to_ms).collect();
    let (rlo, rhi) = window(&in_window.iter().map(|t| t.at_ms).collect::<Vec<_>>(), focus, RECORD_SHOW);
    let records: Vec<Record> = in_window[rlo..rhi]
        .iter()
        .map(|t| {
            let (d, tb) = split(record_entities(t));
            Record {
                at: t.at_ms,
                lane: lane_of(&t.node),
                event: t.event.to_string(),
                line: t.line(),
                ents: ents(d, tb, &owner),
            }
        })
        .collect();

    let overlapping: Vec<&super::record::BarRec> =
        recorder.bars.iter().filter(|b| b.start_ms <= to_ms && b.end_ms.is_none_or(|e| e >= from_ms)).collect();
    // Context first (captures, maintainers), then the bars nearest the focus.
    let mut chosen = overlapping.clone();
    let at = focus.unwrap_or(to_ms);
    chosen.sort_by_key(|b| {
        let context = matches!(b.key, BarKey::Capture { .. } | BarKey::Maintainer { .. });
        let dist = if b.start_ms > at { b.start_ms - at } else { at - b.end_ms.unwrap_or(u64::MAX).min(at) };
        (!context, dist)
    });
    chosen.truncate(BAR_SHOW);
    chosen.sort_by_key(|b| (b.node, b.start_ms));
    let generations: BTreeMap<u64, usize> = {
        let epochs: BTreeSet<u64> = recorder
            .bars
            .iter()
            .filter_map(|b| match b.key {
                BarKey::Maintainer { epoch } => Some(epoch),
                _ => None,
            })
            .collect();
        epochs.into_iter().enumerate().map(|(i, e)| (e, i + 1)).collect()
    };
    let table_name = |t: TableId| table_label(t, names);
    let bars: Vec<Bar> = chosen
        .iter()
        .map(|b| {
            let node = NodeId(b.node);
            let (kind, label, raw, ents) = match &b.key {
                BarKey::Capture { generation } => (
                    "capture",
                    format!("n{} #{}", b.node, generation),
                    format!("capture {} (n{}), incarnation {}", node, b.node, generation),
                    Ents::default(),
                ),
                BarKey::Maintainer { epoch } => {
                    let g = generations.get(epoch).copied().unwrap_or(0);
                    (
                        "maintainer",
                        format!("maintainer g{}", g),
                        format!("maintainer on {} epoch {}", node, epoch),
                        Ents::default(),
                    )
                }
                BarKey::Dispatcher { id } => {
                    let t = b.table.unwrap_or(0);
                    (
                        "dispatcher",
                        dispatcher_label(*id, Some(t), names),
                        format!("dispatcher {} of {} (table {}) on {}: {}", id, table_name(t), t, node, b.label),
                        ents(vec![*id], vec![t], &owner),
                    )
                }
                BarKey::Operator { epoch, id, .. } => (
                    "operator",
                    format!(
                        "{} {}",
                        b.states.first().map(|(_, s)| s.as_str()).unwrap_or("op"),
                        dispatcher_label(*id, owner.get(id).copied(), names)
                    ),
                    format!("operator {} of maintainer epoch {} on {}", b.label, epoch, node),
                    ents(vec![*id], vec![], &owner),
                ),
            };
            Bar { node: b.node, kind, label, raw, start: b.start_ms, end: b.end_ms, states: b.states.clone(), ents }
        })
        .collect();

    let violations = r
        .violations
        .iter()
        .map(|v| {
            // A failed end check names its table in the check (`replication_count t6`).
            let (d, tb) = split(crate::report::entities_named(&format!("{} {}", v.invariant, v.detail), &r.names));
            Mark { at: v.at_ms, invariant: v.invariant.clone(), detail: v.detail.clone(), ents: ents(d, tb, &owner) }
        })
        .collect();

    let mut tables: Vec<Table> = names.iter().map(|(id, name)| Table { id: *id, name: name.clone() }).collect();
    if owner.values().any(|t| *t == 0) {
        tables.insert(0, Table { id: 0, name: table_label(0, names) });
    }
    Page {
        scenario: r.scenario.clone(),
        seed: r.seed,
        bugs: r.bugs.clone(),
        fixes: r.fixes.clone(),
        outcome: r.outcome.as_str().to_string(),
        trace_hash: r.trace_hash.clone(),
        sim_time_ms: r.sim_time_ms,
        reproduce: reproduce.to_string(),
        lanes: (0..nodes)
            .map(|i| Lane { name: format!("n{}", i), raw: format!("capture {} (NodeId {})", NodeId(i), i) })
            .collect(),
        tables,
        msgs: shown_msgs
            .iter()
            .map(|m| Msg {
                send: m.send_ms,
                recv: m.recv_ms,
                from: m.from,
                to: m.to,
                kind: m.kind,
                dup: m.duplicate,
                ents: ents(m.dispatchers.clone(), m.tables.clone(), &owner),
                detail: m.detail.clone(),
            })
            .collect(),
        window: Window {
            from_ms,
            to_ms,
            msgs_total: msgs.len(),
            msgs_shown: hi - lo,
            records_total: r.trace.iter().filter(|t| t.event != VIOLATION_EVENT).count(),
            records_shown: records.len(),
            bars_total: recorder.bars.len(),
            bars_shown: bars.len(),
            unrecorded: recorder.msgs_dropped
                + recorder.bars_dropped
                + (r.events > 0 && r.trace.len() >= crate::world::TRACE_CAP) as u64,
            focus_ms: focus,
        },
        bars,
        records,
        violations,
    }
}

/// The index range `[lo, hi)` of at most `cap` of the sorted `times`, around `focus`
/// (mostly before it); from the start without a focus.
fn window(times: &[u64], focus: Option<u64>, cap: usize) -> (usize, usize) {
    if times.len() <= cap {
        return (0, times.len());
    }
    let Some(f) = focus else { return (0, cap) };
    let k = times.partition_point(|t| *t <= f);
    let lo = k.saturating_sub((cap as f64 * BEFORE_SHARE) as usize);
    let hi = (lo + cap).min(times.len());
    (hi - cap, hi)
}

/// The table of every dispatcher the run saw (from its bars and its schedule requests).
fn dispatcher_tables(rec: &super::Recorder) -> BTreeMap<DispatcherId, TableId> {
    let mut m = BTreeMap::new();
    for b in &rec.bars {
        if let (BarKey::Dispatcher { id }, Some(t)) = (&b.key, b.table) {
            m.insert(*id, t);
        }
    }
    for msg in &rec.msgs {
        if let ([d], [t]) = (msg.dispatchers.as_slice(), msg.tables.as_slice()) {
            m.entry(*d).or_insert(*t);
        }
    }
    m
}

fn ents(d: Vec<DispatcherId>, mut tb: Vec<TableId>, owner: &BTreeMap<DispatcherId, TableId>) -> Ents {
    tb.extend(d.iter().filter_map(|x| owner.get(x)));
    tb.sort();
    tb.dedup();
    Ents { d: d.iter().map(|x| x.to_string()).collect(), tb }
}

fn split(es: BTreeSet<Entity>) -> (Vec<DispatcherId>, Vec<TableId>) {
    let (mut d, mut t) = (Vec::new(), Vec::new());
    for e in es {
        match e {
            Entity::Dispatcher(h) => d.extend(u64::from_str_radix(&h, 16).ok().map(DispatcherId)),
            Entity::Table(id) => t.push(id),
        }
    }
    (d, t)
}

fn lanes_in_trace(trace: &[TraceRecord]) -> u32 {
    trace.iter().map(|t| lane_of(&t.node)).max().map(|m| (m + 1).max(0) as u32).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_capped_around_the_focus() {
        let times: Vec<u64> = (0..100).collect();
        assert_eq!(window(&times, Some(50), 200), (0, 100));
        assert_eq!(window(&times, None, 10), (0, 10));
        // 8 before (and at) the focus, 2 after.
        assert_eq!(window(&times, Some(50), 10), (43, 53));
        assert_eq!(window(&times, Some(99), 10), (90, 100));
        assert_eq!(window(&times, Some(2), 10), (0, 10));
    }
}
