//! End-of-run checks (`[[checks]]`): sync-diff (now or against a syncpoint snapshot),
//! replication counts, table existence, trace fields, changefeed state and the rest.

use super::predicates::{changefeed_state_is, cmp, schema_of};
use super::{Driver, StepError};
use crate::result::*;
use crate::scenario::*;
use core_sched::types::*;
use std::collections::BTreeMap;

impl Driver {
    /// Sync-diff against a syncpoint: the upstream snapshot at the primary ts equals the
    /// downstream as the first record of that syncpoint found it (TiCDC's
    /// `snapshot = primary_ts` / `snapshot = secondary_ts` diff), for every table that
    /// exists upstream at the primary ts.
    fn check_sync_diff_snapshot(&self, snap: &str) -> CheckResult {
        let check = format!("sync_diff snapshot={}", snap);
        let ts = match self.ts_value(snap) {
            Ok(t) => t,
            Err(e) => return CheckResult { check, passed: false, detail: e.to_string() },
        };
        let check = format!("sync_diff snapshot={}", ts);
        let g = self.w.lock().unwrap();
        let Some(down) = g.storage.syncpoint_snapshots.get(&ts) else {
            return CheckResult {
                check,
                passed: false,
                detail: format!(
                    "no syncpoint record with primary ts {} downstream (records: {:?})",
                    ts,
                    g.storage.syncpoints.keys().collect::<Vec<_>>()
                ),
            };
        };
        let secondary = g.storage.syncpoints.get(&ts).map(|r| r.0.secondary_ts).unwrap_or(0);
        let empty = BTreeMap::new();
        let mut bad = Vec::new();
        for t in g.upstream.tables.values().filter(|t| g.upstream.table_exists_at(t.id, ts)) {
            let up = g.upstream.rows_at(t.id, ts);
            let d = down.get(&t.id).unwrap_or(&empty);
            if &up != d {
                let missing = up.iter().filter(|(k, v)| d.get(k) != Some(v)).count();
                let extra = d.keys().filter(|k| !up.contains_key(k)).count();
                bad.push(format!("{}: {} rows differ or missing, {} extra", t.name, missing, extra));
            }
        }
        CheckResult {
            check,
            passed: bad.is_empty(),
            detail: if bad.is_empty() {
                format!("upstream at {} equals downstream at secondary ts {}", ts, secondary)
            } else {
                bad.join("; ")
            },
        }
    }

    /// `redo_apply` (see [`crate::checkers::redo_apply`]).
    fn check_redo_apply(&self) -> CheckResult {
        let g = self.w.lock().unwrap();
        let (check, result) = crate::checkers::redo_apply(&g.upstream, &g.storage, &g.cf);
        let passed = result.is_ok();
        CheckResult { check, passed, detail: result.unwrap_or_else(|e| e) }
    }

    /// `trace_field`: every matching record's field compares as asked with the value;
    /// at least one record matches.
    #[allow(clippy::too_many_arguments)]
    fn check_trace_field(
        &mut self,
        event: &str,
        table: Option<&str>,
        node: Option<&str>,
        fields: &BTreeMap<String, String>,
        field: &str,
        op: FieldOp,
        value: &str,
    ) -> CheckResult {
        let check = format!("trace_field '{}' {} {:?} {}", event, field, op, value);
        let res = (|| -> Result<(bool, String), StepError> {
            let node = node.map(|n| self.node(n)).transpose()?;
            let want = self.value(value)?;
            let g = self.w.lock().unwrap();
            let found = self.trace_matches(&g.trace, event, node, table, fields)?;
            if found.is_empty() {
                let capped = if g.trace.len() >= crate::world::TRACE_CAP { " (the trace is truncated)" } else { "" };
                return Ok((false, format!("no trace record '{}' matches{}", event, capped)));
            }
            for r in &found {
                let Some((_, got)) = r.fields.iter().find(|(f, _)| f == field) else {
                    return Ok((false, format!("record at {} ms has no field '{}'", r.at_ms, field)));
                };
                if !compare_field(got, op, &want)? {
                    return Ok((
                        false,
                        format!("record at {} ms on {}: {} = {}, want {:?} {}", r.at_ms, r.node, field, got, op, want),
                    ));
                }
            }
            Ok((true, format!("{} record(s): {} {:?} {}", found.len(), field, op, want)))
        })();
        match res {
            Ok((passed, detail)) => CheckResult { check, passed, detail },
            Err(e) => CheckResult { check, passed: false, detail: e.to_string() },
        }
    }

    /// Run the scenario's `[[checks]]` in order, one result each.
    pub(super) fn run_checks(&mut self) -> Vec<CheckResult> {
        let mut out = Vec::new();
        // A swarm run that drew the redo family recovers from its redo log as well.
        let swarm_redo = (self.scn.faults.swarm || self.scn.faults.swarm_families.is_some())
            && self.w.lock().unwrap().redo_on
            && !self.scn.checks.iter().any(|c| matches!(c.get_ref(), Check::RedoApply));
        let extra = swarm_redo.then(|| toml::Spanned::new(0..0, Check::RedoApply));
        for c in self.scn.checks.clone().into_iter().chain(extra) {
            let c = c.into_inner();
            let r = match &c {
                Check::ReplicationCount { table, op, count } => {
                    let got = self
                        .w
                        .lock()
                        .unwrap()
                        .maintainer()
                        .and_then(|(_, m)| m.pipeline(self.api_mode()))
                        .map(|p| p.sc.task_count_of_table(self.tables.get(table).copied().unwrap_or(-1)))
                        .unwrap_or(0);
                    CheckResult {
                        check: format!("replication_count {} {:?} {}", table, op, count),
                        passed: cmp(*op, got, *count),
                        detail: format!("replication count of {} is {}", table, got),
                    }
                }
                Check::TableExists { table } | Check::TableNotExists { table } => {
                    let want = matches!(c, Check::TableExists { .. });
                    let g = self.w.lock().unwrap();
                    let id = g.upstream.table_id_any(table).unwrap_or(-1);
                    let got = g.storage.table_exists(id, &schema_of(&g.upstream, id));
                    drop(g);
                    CheckResult {
                        check: format!("table_{}exists {}", if want { "" } else { "not_" }, table),
                        passed: got == want,
                        detail: format!("table {} exists downstream: {}", table, got),
                    }
                }
                Check::SyncDiff { snapshot: Some(snap) } => self.check_sync_diff_snapshot(snap),
                Check::RedoApply => self.check_redo_apply(),
                Check::TraceField { event, table, node, fields, field, op, value } => {
                    self.check_trace_field(event, table.as_deref(), node.as_deref(), fields, field, *op, value)
                }
                Check::SyncpointRecorded { ts } => {
                    let want = match ts.as_deref().map(|t| self.ts_value(t)).transpose() {
                        Ok(w) => w,
                        Err(e) => {
                            out.push(CheckResult {
                                check: "syncpoint_recorded".into(),
                                passed: false,
                                detail: e.to_string(),
                            });
                            continue;
                        }
                    };
                    let g = self.w.lock().unwrap();
                    let got: Vec<Ts> = g.storage.syncpoints.keys().copied().collect();
                    let passed = match want {
                        Some(t) => got.contains(&t),
                        None => !got.is_empty(),
                    };
                    CheckResult {
                        check: format!(
                            "syncpoint_recorded {}",
                            want.map(|t| t.to_string()).unwrap_or_else(|| "any".into())
                        ),
                        passed,
                        detail: format!("syncpoint records downstream: {:?}", got),
                    }
                }
                Check::SyncDiff { snapshot: None } => {
                    let g = self.w.lock().unwrap();
                    let mut bad = Vec::new();
                    for t in g.upstream.tables.values().filter(|t| t.dropped_ts.is_none()) {
                        let down = g.storage.table_rows(t.id);
                        if down != t.rows {
                            let missing = t.rows.iter().filter(|(k, v)| down.get(k) != Some(v)).count();
                            let extra = down.keys().filter(|k| !t.rows.contains_key(k)).count();
                            bad.push(format!("{}: {} rows differ or missing, {} extra", t.name, missing, extra));
                        }
                    }
                    CheckResult {
                        check: "sync_diff".into(),
                        passed: bad.is_empty(),
                        detail: if bad.is_empty() { "downstream equals upstream".into() } else { bad.join("; ") },
                    }
                }
                Check::ChangefeedState { state, error } => {
                    let g = self.w.lock().unwrap();
                    let (ok, got) = changefeed_state_is(&g, *state, error.as_deref());
                    CheckResult {
                        check: format!(
                            "changefeed_state {}{}",
                            format!("{:?}", state).to_lowercase(),
                            error.as_ref().map(|e| format!(" {}", e)).unwrap_or_default()
                        ),
                        passed: ok,
                        detail: got,
                    }
                }
                Check::NodeAlive { node } => {
                    let n = self.node(node);
                    let g = self.w.lock().unwrap();
                    let (ok, detail) = match n {
                        Ok(n) => {
                            let alive =
                                g.nodes.get(n.0 as usize).map(|s| s.alive && s.state.is_some()).unwrap_or(false);
                            (alive, format!("capture {} running: {}", n, alive))
                        }
                        Err(e) => (false, e.to_string()),
                    };
                    CheckResult { check: format!("node_alive {}", node), passed: ok, detail }
                }
                Check::TraceNotSeen { event } => {
                    let g = self.w.lock().unwrap();
                    let hit = g.trace.iter().find(|r| r.event == *event);
                    CheckResult {
                        check: format!("trace_not_seen {}", event),
                        passed: hit.is_none(),
                        detail: hit.map(|r| format!("seen: {}", r.line())).unwrap_or_else(|| "not seen".into()),
                    }
                }
                Check::NoErrorLogged => {
                    let g = self.w.lock().unwrap();
                    CheckResult {
                        check: "no_error_logged".into(),
                        passed: g.errors_logged.is_empty(),
                        detail: if g.errors_logged.is_empty() {
                            "no error".into()
                        } else {
                            format!("{} errors logged, first: {}", g.errors_logged.len(), g.errors_logged[0].1)
                        },
                    }
                }
            };
            out.push(r);
        }
        out
    }
}

/// Compare a trace field with a value: as numbers when both are, else only `eq`/`ne`.
fn compare_field(got: &str, op: FieldOp, want: &str) -> Result<bool, StepError> {
    use std::cmp::Ordering as O;
    let ord = match (got.parse::<i128>(), want.parse::<i128>()) {
        (Ok(a), Ok(b)) => a.cmp(&b),
        _ => match op {
            FieldOp::Eq | FieldOp::Ne => {
                if got == want {
                    O::Equal
                } else {
                    O::Less
                }
            }
            _ => return Err(StepError::NotNumbers { got: got.to_string(), op, want: want.to_string() }),
        },
    };
    Ok(match op {
        FieldOp::Eq => ord == O::Equal,
        FieldOp::Ne => ord != O::Equal,
        FieldOp::Ge => ord != O::Less,
        FieldOp::Gt => ord == O::Greater,
        FieldOp::Le => ord != O::Greater,
        FieldOp::Lt => ord == O::Less,
    })
}
