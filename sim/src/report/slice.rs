//! The causal slice: from the violations back to what caused them, in at most
//! [`SLICE_CAP`] lines.
//!
//! 1. Violations are grouped (same invariant, same text but for its numbers): one line
//!    per group, with a count and a time range.
//! 2. The entities of every violation (failed end checks included) are the roots;
//!    a table stands for the dispatchers it had.
//! 3. A checkpoint violation (`no-data-loss`, `checkpoint-monotonic`) is walked back along
//!    typed cause records: the persisted checkpoint that passed the rows, the checkpoint
//!    round that committed it (its operator, absent-span and barrier bounds and node
//!    watermarks), the round before it, and for each watermark the store that kept it
//!    and the heartbeat that carried it.
//! 4. Then, by priority: per violation group the records of its own entities just before
//!    it; the records of every involved entity (schedule requests, heartbeats with their
//!    statuses, bootstrap answers, operators and their restores, dispatcher lifecycles) nearest before the
//!    first violation; lifecycle events (captures, maintainers, faults) as context.
//!
//! Everything is matched on typed data (cause records, trace fields by name); only the
//! violation text is read for the entities it names.

use super::entities::{cause_entities, dispatcher_tables, entities_named, record_entities, Entity};
use super::lines::{violation_row, Namer};
use crate::causes::{Cause, CauseRecord};
use crate::checkers::{CHECKPOINT_MONOTONIC, NO_DATA_LOSS};
use crate::result::{RunResult, TraceRecord, Violation};
use core_sched::messages::ComponentState;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// At most this many lines in the slice (violation lines included).
pub const SLICE_CAP: usize = 48;
/// At most this many violation groups get a line (the report lists them all).
const VIOLATION_LINES: usize = 8;
/// Of the cap, at most this many records after the first violation (the aftermath).
const AFTER_CAP: usize = 10;
/// Records of its own entities kept just before each violation group.
const PER_VIOLATION: usize = 4;
/// Lifecycle records kept before the entity records fill the rest.
const LIFECYCLE_MIN: usize = 8;
/// The event of the trace record the world writes for each violation it detects.
const VIOLATION_EVENT: &str = "INVARIANT VIOLATED";

/// Why a line is in the slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    Violation,
    /// On the walk back from a checkpoint violation.
    Checkpoint,
    /// A typed cause record (heartbeat, schedule request) of an involved entity.
    Cause,
    /// A trace record of an involved entity.
    Entity,
    Lifecycle,
}

/// Repeats of one violation.
#[derive(Clone, Debug, Serialize)]
pub struct ViolationGroup {
    pub invariant: String,
    /// The first one's text.
    pub detail: String,
    /// The same with the scenario's names.
    pub named: String,
    /// The tables its members name (scenario names), when they name more than one.
    pub tables: Vec<String>,
    pub count: usize,
    pub first_ms: u64,
    pub last_ms: u64,
}

impl ViolationGroup {
    /// `inv x5 (11.018s..12.422s) on t1, t2: detail`.
    pub fn summary(&self) -> String {
        let times = if self.count > 1 {
            format!(" x{} ({:.3}s..{:.3}s)", self.count, self.first_ms as f64 / 1000.0, self.last_ms as f64 / 1000.0)
        } else {
            String::new()
        };
        let on = if self.tables.is_empty() { String::new() } else { format!(" on {}", self.tables.join(", ")) };
        format!("{}{}{}: {}", self.invariant, times, on, self.named)
    }
}

/// One line of the slice, with its text (scenario names) and the raw record.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SliceLine {
    Record {
        #[serde(flatten)]
        record: TraceRecord,
        reason: Reason,
        text: String,
    },
    Cause {
        #[serde(flatten)]
        record: CauseRecord,
        reason: Reason,
        text: String,
    },
    /// A violation group (index into [`Slice::violations`]), at its first time.
    Violation { group: usize, at_ms: u64, text: String },
}

impl SliceLine {
    pub fn at_ms(&self) -> u64 {
        match self {
            SliceLine::Record { record, .. } => record.at_ms,
            SliceLine::Cause { record, .. } => record.at_ms,
            SliceLine::Violation { at_ms, .. } => *at_ms,
        }
    }
    pub fn text(&self) -> &str {
        match self {
            SliceLine::Record { text, .. } | SliceLine::Cause { text, .. } | SliceLine::Violation { text, .. } => text,
        }
    }
    pub fn reason(&self) -> Reason {
        match self {
            SliceLine::Record { reason, .. } | SliceLine::Cause { reason, .. } => *reason,
            SliceLine::Violation { .. } => Reason::Violation,
        }
    }
}

/// An involved entity with its scenario name.
#[derive(Clone, Debug, Serialize)]
pub struct Named {
    pub entity: Entity,
    pub name: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Slice {
    /// The entities of every violation, and the dispatchers of their tables.
    pub entities: Vec<Entity>,
    /// The same with their scenario names (`t1`, `t1/a244`).
    pub named: Vec<Named>,
    /// Maintainer generations: `g1` is the first epoch listed, ...
    pub generations: Vec<u64>,
    pub violations: Vec<ViolationGroup>,
    pub lines: Vec<SliceLine>,
    /// Matching records left out to respect the cap.
    pub omitted: usize,
    pub trace_len: usize,
    pub causes_len: usize,
}

/// Group violations: same invariant and same text once each of its numbers is masked
/// (`namer` names them; the tables they name are listed when they differ).
pub fn group_violations(vs: &[Violation], names: &crate::names::Names, namer: &Namer) -> Vec<ViolationGroup> {
    let mut groups: Vec<ViolationGroup> = Vec::new();
    let mut tables: Vec<BTreeSet<i64>> = Vec::new();
    let mut index: BTreeMap<(String, String), usize> = BTreeMap::new();
    for v in vs {
        let mut shape = String::new();
        for c in v.detail.chars() {
            if !c.is_ascii_digit() {
                shape.push(c);
            } else if !shape.ends_with('#') {
                shape.push('#');
            }
        }
        let ts = entities_named(&v.detail, names).into_iter().filter_map(|e| match e {
            Entity::Table(t) => Some(t),
            _ => None,
        });
        match index.get(&(v.invariant.clone(), shape.clone())) {
            Some(&i) => {
                tables[i].extend(ts);
                let g = &mut groups[i];
                g.count += 1;
                g.first_ms = g.first_ms.min(v.at_ms);
                g.last_ms = g.last_ms.max(v.at_ms);
            }
            None => {
                index.insert((v.invariant.clone(), shape), groups.len());
                tables.push(ts.collect());
                groups.push(ViolationGroup {
                    invariant: v.invariant.clone(),
                    detail: v.detail.clone(),
                    named: namer.text(&v.detail),
                    tables: vec![],
                    count: 1,
                    first_ms: v.at_ms,
                    last_ms: v.at_ms,
                });
            }
        }
    }
    for (g, ts) in groups.iter_mut().zip(tables) {
        if ts.len() > 1 {
            g.tables = ts.into_iter().map(|t| names.table(t)).collect();
        }
    }
    groups
}

/// A candidate line: where it is in time, what it touches.
struct Cand {
    at_ms: u64,
    /// Trace records before cause records before violations at one time.
    order: (u8, usize),
    reason: Reason,
    ents: BTreeSet<Entity>,
    line: SliceLine,
}

/// The causal slice of a run (for a passing run: its lifecycle events).
pub fn causal_slice(r: &RunResult) -> Slice {
    let owner = dispatcher_tables(&r.dispatcher_tables, &r.trace, &r.causes);
    let epochs = r.trace.iter().map(|t| t.epoch).chain(r.causes.iter().filter_map(|c| cause_epoch(&c.cause)));
    let namer = Namer::new(&r.names, &owner, epochs);
    let groups = group_violations(&r.violations, &r.names, &namer);
    let until = r.violations.iter().map(|v| v.at_ms).max().unwrap_or(0);
    // Roots per group, expanded by the dispatchers of their tables.
    let group_ents: Vec<BTreeSet<Entity>> = groups
        .iter()
        .map(|g| expand(entities_named(&format!("{} {}", g.invariant, g.detail), &r.names), &owner))
        .collect();
    let ents: BTreeSet<Entity> = group_ents.iter().flatten().cloned().collect();
    let focus: BTreeSet<String> = ents
        .iter()
        .filter_map(|e| match e {
            Entity::Dispatcher(d) => Some(d.clone()),
            _ => None,
        })
        .collect();

    let mut cands: Vec<Cand> = Vec::new();
    for (i, g) in groups.iter().enumerate().take(VIOLATION_LINES) {
        cands.push(Cand {
            at_ms: g.first_ms,
            order: (2, i),
            reason: Reason::Violation,
            ents: group_ents[i].clone(),
            line: SliceLine::Violation { group: i, at_ms: g.first_ms, text: violation_row(g.first_ms, &g.summary()) },
        });
    }
    let chain = checkpoint_chain(r);
    for (i, c) in r.causes.iter().enumerate() {
        let ce = cause_entities(c);
        let reason = if chain.contains(&i) {
            Reason::Checkpoint
        } else if c.at_ms <= until.max(1) && is_cause_of(c, &ce, &ents) {
            Reason::Cause
        } else {
            continue;
        };
        cands.push(Cand {
            at_ms: c.at_ms,
            order: (1, i),
            reason,
            ents: ce,
            line: SliceLine::Cause { record: c.clone(), reason, text: namer.cause(c, &focus) },
        });
    }
    for (i, t) in r.trace.iter().enumerate() {
        if t.event == VIOLATION_EVENT {
            continue;
        }
        let te = record_entities(t);
        let reason = if te.iter().any(|e| ents.contains(e)) {
            Reason::Entity
        } else if super::is_lifecycle(t) {
            Reason::Lifecycle
        } else {
            continue;
        };
        cands.push(Cand {
            at_ms: t.at_ms,
            order: (0, i),
            reason,
            ents: te,
            line: SliceLine::Record { record: t.clone(), reason, text: namer.record(t) },
        });
    }
    cands.sort_by_key(|c| (c.at_ms, c.order));
    let keep = choose(&cands, &groups, &group_ents);
    let omitted = cands.iter().filter(|c| c.reason != Reason::Violation).count()
        - keep.iter().filter(|i| cands[**i].reason != Reason::Violation).count();
    let named = ents
        .iter()
        .cloned()
        .map(|e| {
            let name = match &e {
                Entity::Table(t) => r.names.table_with_id(*t),
                Entity::Dispatcher(d) => u64::from_str_radix(d, 16)
                    .map(|x| namer.dispatcher(core_sched::types::DispatcherId(x)))
                    .unwrap_or_else(|_| d.clone()),
            };
            Named { entity: e, name }
        })
        .collect();
    Slice {
        entities: ents.into_iter().collect(),
        named,
        generations: namer.gens.keys().copied().collect(),
        violations: groups,
        lines: keep.into_iter().map(|i| cands[i].line.clone()).collect(),
        omitted,
        trace_len: r.trace.len(),
        causes_len: r.causes.len(),
    }
}

fn cause_epoch(c: &Cause) -> Option<u64> {
    match c {
        Cause::ScheduleSent { epoch, .. }
        | Cause::BootstrapSent { epoch, .. }
        | Cause::WatermarkStored { epoch, .. }
        | Cause::CheckpointCalculated { epoch, .. } => Some(*epoch),
        _ => None,
    }
}

/// A table's dispatchers join it (a table-level violation is about them).
fn expand(mut es: BTreeSet<Entity>, owner: &BTreeMap<String, i64>) -> BTreeSet<Entity> {
    let tables: BTreeSet<i64> = es
        .iter()
        .filter_map(|e| match e {
            Entity::Table(t) => Some(*t),
            _ => None,
        })
        .collect();
    es.extend(owner.iter().filter(|(_, t)| tables.contains(t)).map(|(d, _)| Entity::Dispatcher(d.clone())));
    es
}

/// A cause record explains an involved entity: a schedule or merge request for it, a
/// bootstrap answer reporting it, or a heartbeat reporting it in a status batch or as not working (complete-status
/// heartbeats listing it as working are the steady state, not a cause).
fn is_cause_of(c: &CauseRecord, ce: &BTreeSet<Entity>, ents: &BTreeSet<Entity>) -> bool {
    if !ce.iter().any(|e| ents.contains(e)) {
        return false;
    }
    match &c.cause {
        Cause::HeartbeatSent { complete, statuses, .. } => {
            !complete
                || statuses
                    .iter()
                    .any(|s| s.state != ComponentState::Working && ents.contains(&Entity::dispatcher(s.dispatcher)))
        }
        _ => true,
    }
}

/// Indices of `r.causes` on the walk back from the first checkpoint violation.
fn checkpoint_chain(r: &RunResult) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    let Some(v) = r.violations.iter().find(|v| v.invariant == NO_DATA_LOSS || v.invariant == CHECKPOINT_MONOTONIC)
    else {
        return out;
    };
    let cs = &r.causes;
    let last_before =
        |at: u64, f: &dyn Fn(&Cause) -> bool| (0..cs.len()).rev().find(|i| cs[*i].at_ms <= at && f(&cs[*i].cause));
    let Some(p) = last_before(v.at_ms, &|c| matches!(c, Cause::CheckpointPersisted { .. })) else { return out };
    out.insert(p);
    let Cause::CheckpointPersisted { to, .. } = cs[p].cause else { return out };
    // The round that committed the persisted value (else the last one before it).
    let calc =
        last_before(cs[p].at_ms, &|c| matches!(c, Cause::CheckpointCalculated { checkpoint, .. } if *checkpoint == to))
            .or_else(|| last_before(cs[p].at_ms, &|c| matches!(c, Cause::CheckpointCalculated { .. })));
    let Some(calc) = calc else { return out };
    out.insert(calc);
    let Cause::CheckpointCalculated { node, epoch, ref watermarks, .. } = cs[calc].cause else { return out };
    // The round before it on that maintainer: what held the checkpoint until then.
    let before = (0..calc).rev().find(
        |i| matches!(cs[*i].cause, Cause::CheckpointCalculated { node: n, epoch: e, .. } if n == node && e == epoch),
    );
    out.extend(before);
    for (from, w) in watermarks {
        let stored = last_before(
            cs[calc].at_ms,
            &|c| matches!(c, Cause::WatermarkStored { node: n, from: f, stored, .. } if *n == node && f == from && stored == w),
        );
        let Some(s) = stored else { continue };
        out.insert(s);
        let Cause::WatermarkStored { received, .. } = cs[s].cause else { continue };
        let sent = last_before(
            cs[s].at_ms,
            &|c| matches!(c, Cause::HeartbeatSent { from: f, to, watermark, .. } if f == from && *to == node && *watermark == received),
        );
        out.extend(sent);
    }
    out
}

/// Which candidates fit the cap, by priority; returned in time order.
fn choose(cands: &[Cand], groups: &[ViolationGroup], group_ents: &[BTreeSet<Entity>]) -> Vec<usize> {
    let mut keep: BTreeSet<usize> = BTreeSet::new();
    let first = groups.iter().map(|g| g.first_ms).min();
    let take = |keep: &mut BTreeSet<usize>, i: usize| {
        if keep.len() < SLICE_CAP {
            keep.insert(i);
        }
    };
    for (i, c) in cands.iter().enumerate() {
        if matches!(c.reason, Reason::Violation | Reason::Checkpoint) {
            take(&mut keep, i);
        }
    }
    let linked = |c: &Cand| matches!(c.reason, Reason::Cause | Reason::Entity);
    // Each group's own entities, just before it.
    for (g, es) in groups.iter().zip(group_ents).take(VIOLATION_LINES) {
        let mine = (0..cands.len())
            .rev()
            .filter(|i| cands[*i].at_ms <= g.first_ms && linked(&cands[*i]))
            .filter(|i| cands[*i].ents.iter().any(|e| es.contains(e)))
            .take(PER_VIOLATION);
        for i in mine.collect::<Vec<_>>() {
            take(&mut keep, i);
        }
    }
    let Some(first) = first else {
        // A passing run: its lifecycle from the start.
        for i in 0..cands.len() {
            take(&mut keep, i);
        }
        return keep.into_iter().collect();
    };
    let split = cands.partition_point(|c| c.at_ms <= first);
    let before = |f: &dyn Fn(&Cand) -> bool| (0..split).rev().filter(|i| f(&cands[*i])).collect::<Vec<_>>();
    for i in before(&|c| c.reason == Reason::Lifecycle).into_iter().take(LIFECYCLE_MIN) {
        take(&mut keep, i);
    }
    // The aftermath gets its share first, so the story before does not crowd it out.
    let after: Vec<usize> = (split..cands.len()).filter(|i| linked(&cands[*i])).take(AFTER_CAP).collect();
    let room_after = after.len().min(SLICE_CAP.saturating_sub(keep.len()) / 3);
    for &i in after.iter().take(room_after) {
        take(&mut keep, i);
    }
    for i in before(&|c| linked(c)) {
        take(&mut keep, i);
    }
    for i in before(&|c| c.reason == Reason::Lifecycle) {
        take(&mut keep, i);
    }
    for i in split..cands.len() {
        take(&mut keep, i);
    }
    keep.into_iter().collect()
}
