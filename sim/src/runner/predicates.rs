//! Wait predicates (`wait` steps) and the trace and state comparisons they share with
//! the end checks.

use super::{Driver, StepError};
use crate::scenario::*;
use crate::world::*;
use core_sched::maintainer::span_controller::ReplicaState;
use core_sched::messages::FeedState;
use core_sched::types::*;
use std::collections::BTreeMap;

impl Driver {
    /// Trace records matching an event name and the optional node, table and field filters.
    pub(super) fn trace_matches<'a>(
        &self,
        trace: &'a [crate::result::TraceRecord],
        event: &str,
        node: Option<NodeId>,
        table: Option<&str>,
        fields: &BTreeMap<String, String>,
    ) -> Result<Vec<&'a crate::result::TraceRecord>, StepError> {
        let t = table.map(|t| self.table(t)).transpose()?.map(|t| t.to_string());
        let node = node.map(|n| n.to_string());
        let mut want = Vec::new();
        for (k, v) in fields {
            want.push((k.as_str(), self.value(v)?));
        }
        let field =
            |r: &crate::result::TraceRecord, k: &str| r.fields.iter().find(|(f, _)| f == k).map(|(_, v)| v.clone());
        Ok(trace
            .iter()
            .filter(|r| r.event == event)
            .filter(|r| node.as_ref().map(|n| &r.node == n).unwrap_or(true))
            .filter(|r| t.as_ref().map(|t| field(r, "table").as_ref() == Some(t)).unwrap_or(true))
            .filter(|r| want.iter().all(|(k, v)| field(r, k).as_ref() == Some(v)))
            .collect())
    }

    /// Whether a `wait` predicate holds now; a matching `trace_seen` stores its captures.
    pub(super) fn eval(&mut self, p: &Predicate) -> Result<bool, StepError> {
        let on_node = match p {
            Predicate::TableOnNode { node, .. }
            | Predicate::NodeExited { node }
            | Predicate::MaintainerOnNode { node, .. } => Some(self.node(node)?),
            Predicate::TraceSeen { node: Some(node), .. } => Some(self.node(node)?),
            _ => None,
        };
        if let Predicate::TraceSeen { event, table, contains, fields, capture, .. } = p {
            let captured = {
                let g = self.w.lock().unwrap();
                let found = self.trace_matches(&g.trace, event, on_node, table.as_deref(), fields)?;
                let has = |r: &crate::result::TraceRecord| {
                    contains.as_ref().is_none_or(|c| r.fields.iter().any(|(_, v)| v.contains(c.as_str())))
                };
                let Some(r) = found.into_iter().find(|r| has(r)) else { return Ok(false) };
                let mut v = Vec::new();
                for (name, field) in capture {
                    let Some((_, val)) = r.fields.iter().find(|(f, _)| f == field) else {
                        return Err(StepError::CaptureMissingField {
                            event: event.clone(),
                            field: field.clone(),
                            name: name.clone(),
                        });
                    };
                    v.push((name.clone(), val.clone()));
                }
                v
            };
            for (name, val) in captured {
                self.w.lock().unwrap().record(
                    "-",
                    "Scenario",
                    0,
                    "capture value",
                    vec![("name".into(), name.clone()), ("value".into(), val.clone())],
                );
                self.values.insert(name, val);
            }
            return Ok(true);
        }
        let want_ts = match p {
            Predicate::SyncpointRecorded { ts: Some(ts) } => Some(self.ts_value(ts)?),
            _ => None,
        };
        let g = self.w.lock().unwrap();
        let m = g.maintainer().map(|(_, m)| m);
        // The table predicates look at the scenario's API mode's controllers.
        let mode = self.api_mode();
        let pipe = m.and_then(|m| m.pipeline(mode));
        Ok(match p {
            Predicate::TableExistsDownstream { table } => {
                let id = self.table(table)?;
                g.storage.table_exists(id, &schema_of(&g.upstream, id))
            }
            Predicate::DatabaseExistsDownstream { database } => {
                g.storage.database_exists(database, &tables_of_database(&g.upstream, database))
            }
            Predicate::DatabaseNotExistsDownstream { database } => {
                !g.storage.database_exists(database, &tables_of_database(&g.upstream, database))
            }
            Predicate::ReplicationCount { table, op, count } => {
                let c = pipe
                    .filter(|_| m.is_some_and(|m| m.initialized()))
                    .map(|p| p.sc.task_count_of_table(self.table(table).unwrap_or(-1)))
                    .unwrap_or(0);
                cmp(*op, c, *count)
            }
            Predicate::TableNodeCount { table, op, count } => {
                let t = self.table(table)?;
                let c = pipe
                    .filter(|_| m.is_some_and(|m| m.initialized()))
                    .map(|p| {
                        p.sc.tasks_of_table(t)
                            .iter()
                            .filter(|r| r.state == core_sched::maintainer::span_controller::ReplicaState::Replicating)
                            .filter_map(|r| r.node)
                            .collect::<std::collections::BTreeSet<_>>()
                            .len()
                    })
                    .unwrap_or(0);
                cmp(*op, c, *count)
            }
            Predicate::TableScheduled { table } => {
                let t = self.table(table)?;
                pipe.map(|p| {
                    let ts = p.sc.tasks_of_table(t);
                    !ts.is_empty() && ts.iter().all(|r| r.node.is_some())
                })
                .unwrap_or(false)
            }
            Predicate::TableOnNode { table, .. } => {
                let t = self.table(table)?;
                pipe.filter(|_| m.is_some_and(|m| m.initialized()))
                    .map(|p| {
                        let ts = p.sc.tasks_of_table(t);
                        !ts.is_empty() && ts.iter().all(|r| r.node == on_node && r.state == ReplicaState::Replicating)
                    })
                    .unwrap_or(false)
            }
            Predicate::DispatcherCount { op, count } => cmp(*op, pipe.map(|p| p.sc.tasks.len()).unwrap_or(0), *count),
            Predicate::MaintainerMoved => {
                let before = self.vars.get("maintainer").copied();
                match (g.maintainer(), before) {
                    (Some((n, _)), Some(b)) => n != b,
                    _ => false,
                }
            }
            Predicate::MaintainerOnNode { initialized, .. } => match g.maintainer() {
                Some((n, m)) => Some(n) == on_node && (!initialized || (m.initialized() && m.post_bootstrap_done)),
                None => false,
            },
            Predicate::TraceSeen { .. } => unreachable!("handled above"),
            Predicate::SyncpointRecorded { .. } => match want_ts {
                Some(ts) => g.storage.syncpoints.contains_key(&ts),
                None => !g.storage.syncpoints.is_empty(),
            },
            Predicate::DownstreamRowCount { table, count } => g.storage.table_rows(self.table(table)?).len() == *count,
            Predicate::NodeExited { .. } => on_node.map(|n| !g.nodes[n.0 as usize].alive).unwrap_or(false),
            Predicate::TraceSequence { events } => trace_sequence_seen(&g.trace, events),
            Predicate::ChangefeedState { state, error } => changefeed_state_is(&g, *state, error.as_deref()).0,
            Predicate::DownstreamSynced => g
                .upstream
                .tables
                .values()
                .filter(|t| t.dropped_ts.is_none())
                .all(|t| g.storage.table_rows(t.id) == t.rows),
            Predicate::CheckpointCaughtUp => {
                g.persisted_checkpoint
                    >= g.upstream.resolved_ts(g.now_ms).saturating_sub(ts_from_ms(self.flush_ms + 5_000))
            }
        })
    }
}

/// Whether `events` were recorded on one node in this order (a subsequence of that
/// node's trace), like the integration tests' `awk` checks over one capture's log.
pub fn trace_sequence_seen(trace: &[crate::result::TraceRecord], events: &[String]) -> bool {
    if events.is_empty() {
        return true;
    }
    let mut progress: BTreeMap<&str, usize> = BTreeMap::new();
    for r in trace {
        let i = progress.entry(r.node.as_str()).or_insert(0);
        if r.event == events[*i] {
            *i += 1;
            if *i == events.len() {
                return true;
            }
        }
    }
    false
}

/// The persisted changefeed state against `want` (and an error substring); returns
/// whether it matches and a description of what is there.
pub(super) fn changefeed_state_is(g: &World, want: FeedStateName, error: Option<&str>) -> (bool, String) {
    let Some(info) = g.meta.changefeeds.get(&g.cf) else { return (false, "no changefeed".into()) };
    let state_ok = match want {
        FeedStateName::Normal => info.state == FeedState::Normal,
        FeedStateName::Warning => info.state == FeedState::Warning,
        FeedStateName::Failed => info.state == FeedState::Failed,
        FeedStateName::Stopped => info.state == FeedState::Stopped,
    };
    let err_ok = error.map(|e| info.last_error.as_deref().unwrap_or("").contains(e)).unwrap_or(true);
    (state_ok && err_ok, format!("changefeed state {:?}, error {:?}", info.state, info.last_error))
}

/// The database of an upstream table (empty for an unknown one).
pub(super) fn schema_of(up: &crate::upstream::Upstream, id: TableId) -> String {
    up.tables.get(&id).map(|t| t.schema_name.clone()).unwrap_or_default()
}

/// Every table the upstream ever had in a database of this name.
fn tables_of_database(up: &crate::upstream::Upstream, name: &str) -> Vec<TableId> {
    up.tables.values().filter(|t| t.schema_name == name).map(|t| t.id).collect()
}

/// A count against a `count`/`op` pair of a predicate or check.
pub(super) fn cmp(op: CmpOp, got: usize, want: usize) -> bool {
    match op {
        CmpOp::Eq => got == want,
        CmpOp::Ge => got >= want,
    }
}
