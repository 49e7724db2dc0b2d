//! Convergence once the faults stop: what still keeps the cluster from having
//! converged, and the loop that waits for it within the budget.

use super::{Driver, WAIT_POLL_MS};
use crate::checkers::*;
use crate::result::*;
use core_sched::maintainer::span_controller::ReplicaState;
use core_sched::messages::{ComponentState, FeedState};
use core_sched::types::*;
use std::collections::BTreeMap;
use std::time::Duration;

/// How long what is pending must stay unchanged at the converge deadline for the run to
/// count as stuck (see `converge`).
const PROGRESS_WINDOW_MS: u64 = 10_000;

impl Driver {
    /// What keeps the cluster from having converged, empty once it has. Without `detail`
    /// it stops at the first reason and formats nothing (the converge loop polls it every
    /// 100 ms; only the timeout report needs the reasons).
    fn pending(&self, target: Ts, detail: bool) -> Vec<String> {
        let g = self.w.lock().unwrap();
        let mut p = Vec::new();
        macro_rules! reason {
            ($($arg:tt)*) => {
                if detail {
                    p.push(format!($($arg)*));
                } else {
                    return vec![String::new()];
                }
            };
        }
        if g.meta.changefeeds.get(&g.cf).map(|i| i.state == FeedState::Failed).unwrap_or(false) {
            // A failed changefeed converges to stopped: no maintainer and no dispatcher
            // manager of it runs anywhere (its data is not expected downstream), unless
            // the workload is going to resume it.
            if g.resumes_pending > 0 {
                reason!("failed changefeed waits for the workload's resume");
            }
            if let Some((n, m)) = g.maintainer() {
                reason!("failed changefeed still has a {:?} maintainer on {}", m.state, n);
            }
            for (i, s) in g.nodes.iter().enumerate() {
                if let Some(dm) = s.state.as_ref().and_then(|st| st.orch.managers.get(&g.cf)) {
                    reason!(
                        "failed changefeed still has a dispatcher manager on {} ({} dispatchers)",
                        NodeId(i as u32),
                        dm.dispatchers.len()
                    );
                }
            }
            return p;
        }
        // The changefeed's persisted state and last error say why a maintainer is missing
        // or stuck (e.g. restarting after every rejected bootstrap).
        let feed = g.meta.changefeeds.get(&g.cf).map(|i| match &i.last_error {
            Some(e) => format!(" (changefeed {:?}, last error: {})", i.state, e),
            None => format!(" (changefeed {:?})", i.state),
        });
        let feed = feed.unwrap_or_default();
        let Some((_, m)) = g.maintainer() else { return vec![format!("no live maintainer{}", feed)] };
        if !m.initialized() {
            if !detail {
                return vec![String::new()];
            }
            return vec![format!("maintainer not bootstrapped{}{}", feed, unanswered_bootstrap(&g, m))];
        }
        // Each mode's controllers converge on their own (a redo changefeed has two).
        let pipes: Vec<(&str, &core_sched::maintainer::Pipeline)> = [Mode::Default, Mode::Redo]
            .into_iter()
            .filter_map(|mode| m.pipeline(mode).map(|p| (if mode == Mode::Redo { "redo " } else { "" }, p)))
            .collect();
        for (what, pipe) in &pipes {
            for op in pipe.oc.running() {
                reason!(
                    "{}operator still running: {}{}",
                    what,
                    op.describe(),
                    closing_managers(&g, &op.affected_nodes())
                );
            }
            for r in pipe.sc.tasks.values() {
                if r.state != ReplicaState::Replicating {
                    reason!("{}span {} of table {} is {:?}", what, r.id, r.span.table_id, r.state);
                }
                // The scheduled table set is the upstream's, each table in its current
                // database (DROP/TRUNCATE/partition DDLs removed theirs, RENAMEs moved them).
                if r.id == pipe.sc.ddl_span_id {
                    continue;
                }
                match g.upstream.tables.get(&r.span.table_id).filter(|t| t.dropped_ts.is_none()) {
                    None => reason!(
                        "{}span {} of table {} is scheduled, but the table is dropped upstream",
                        what,
                        r.id,
                        r.span.table_id
                    ),
                    Some(t) if t.schema_id != r.schema_id => reason!(
                        "{}span {} of table {} ({}) is scheduled in schema {}, upstream it is in schema {}",
                        what,
                        r.id,
                        t.id,
                        t.name,
                        r.schema_id,
                        t.schema_id
                    ),
                    Some(_) => {}
                }
            }
        }
        let mut working: BTreeMap<(Mode, TableId), Vec<TableSpan>> = BTreeMap::new();
        for (i, s) in g.nodes.iter().enumerate() {
            let Some(st) = &s.state else { continue };
            for dm in st.orch.managers.values() {
                for d in dm.dispatchers.values() {
                    if d.state == ComponentState::Working && !d.try_removing && !d.is_trigger {
                        working.entry((d.mode, d.span.table_id)).or_default().push(d.span);
                    }
                    // Every live dispatcher must be one the maintainer knows about.
                    if !d.try_removing && !d.is_trigger {
                        if let Some(t) = g.upstream.tables.get(&d.span.table_id).filter(|t| t.schema_id != d.schema_id)
                        {
                            reason!(
                                "dispatcher {} of table {} ({}) on {} is in schema {}, upstream the table is in schema {}",
                                d.id,
                                t.id,
                                t.name,
                                NodeId(i as u32),
                                d.schema_id,
                                t.schema_id
                            );
                        }
                    }
                    let known = m.pipeline(d.mode).is_some_and(|p| p.sc.get(&d.id).is_some());
                    if !d.try_removing && !d.is_trigger && !known {
                        reason!(
                            "{}dispatcher {} of table {} on {} is unknown to the maintainer",
                            if d.is_redo() { "redo " } else { "" },
                            d.id,
                            d.span.table_id,
                            NodeId(i as u32)
                        );
                    }
                }
            }
        }
        for t in g.upstream.tables.values().filter(|t| t.dropped_ts.is_none()) {
            for (what, pipe) in &pipes {
                if !pipe.sc.is_table_exists(t.id) {
                    reason!("table {} ({}) has no {}span", t.id, t.name, what);
                }
                let mode = pipe.mode;
                let holes = find_holes(t.id, working.get(&(mode, t.id)).map(|v| v.as_slice()).unwrap_or(&[]));
                if !holes.is_empty() {
                    reason!("table {} ({}) not covered by Working {}dispatchers: {:?}", t.id, t.name, what, holes);
                }
            }
            if g.storage.table_rows(t.id) != t.rows {
                reason!("table {} ({}) downstream differs from upstream", t.id, t.name);
            }
        }
        if g.persisted_checkpoint < target {
            reason!("checkpoint {} behind upstream {}", g.persisted_checkpoint, target);
            // Name the slowest dispatchers and what holds them back.
            let mut slow: Vec<(Ts, String)> = Vec::new();
            for (i, s) in g.nodes.iter().enumerate() {
                let Some(st) = &s.state else { continue };
                for dm in st.orch.managers.values() {
                    for d in dm.dispatchers.values() {
                        let cp = d.checkpoint_ts();
                        if cp < target {
                            let why = format!(
                                "dispatcher {} (table {}) on {} {:?} checkpoint {}{}{}{}{}{}{}",
                                d.id,
                                d.span.table_id,
                                NodeId(i as u32),
                                d.state,
                                cp,
                                d.block
                                    .as_ref()
                                    .map(|b| format!(
                                        ", blocked on {} at {} ({:?})",
                                        b.event.query(),
                                        b.event.commit_ts(),
                                        b.stage
                                    ))
                                    .unwrap_or_default(),
                                if d.ddl_writing.is_some() {
                                    if d.writing_sync_point {
                                        ", writing a syncpoint"
                                    } else {
                                        ", writing a DDL"
                                    }
                                } else {
                                    ""
                                },
                                if !d.progress.is_empty() {
                                    format!(", {} unflushed commit ts", d.progress.len())
                                } else {
                                    String::new()
                                },
                                if d.try_removing { ", removing" } else { "" },
                                if !d.registered { ", not registered" } else { "" },
                                match dm.redo.as_ref().filter(|_| d.held_by_redo) {
                                    Some(r) => format!(", held by the redo global ts {}", r.global_ts),
                                    None => String::new(),
                                },
                            );
                            slow.push((cp, why));
                        }
                    }
                }
            }
            slow.sort();
            p.extend(slow.into_iter().take(3).map(|(_, w)| w));
        }
        p
    }

    /// Faults stop, partitions heal, failpoints stay as the scenario left them; the
    /// cluster must converge within the budget.
    pub(super) async fn converge(&mut self) {
        let target = {
            let mut g = self.w.lock().unwrap();
            // The faults stop: partitions heal, the network and storage behave.
            g.net.cut.clear();
            g.net.loss = 0.0;
            g.net.duplicate = 0.0;
            g.net.delay_spike = 0.0;
            g.net.collector.prob = 0.0;
            g.net.stream.prob = 0.0;
            g.net.reconnect = 0.0;
            g.storage_error = 0.0;
            g.record("-", "Scenario", 0, "faults stop, converging", vec![]);
            let now = g.now_ms;
            g.upstream.tso(now)
        };
        let budget = self.scn.limits.converge_timeout_ms;
        let start = self.now();
        let mut deadline = start + budget;
        // A run still making progress at the deadline (what is pending changed over the
        // last window: e.g. adds admitted one per scheduler round with batch size 1) gets
        // another window, up to twice the budget. A stable hang fails at the budget as before.
        let cap = start + 2 * budget;
        let window = PROGRESS_WINDOW_MS.min(budget);
        let mut snapshot: Option<Vec<String>> = None;
        loop {
            if self.pending(target, false).is_empty() {
                return;
            }
            // Everything pending (the detailed list), taken a window before the deadline.
            if snapshot.is_none() && self.now() + window >= deadline {
                snapshot = Some(self.pending(target, true));
            }
            if self.now() >= deadline && self.now() < cap {
                let now_pending = self.pending(target, true);
                if snapshot.as_ref() != Some(&now_pending) {
                    snapshot = Some(now_pending);
                    deadline = (self.now() + window).min(cap);
                }
            }
            let over = self.budget().is_err() || self.now() >= deadline;
            let p = if over { self.pending(target, true) } else { Vec::new() };
            if let Err(e) = self.budget() {
                self.liveness.push(Violation {
                    invariant: CONVERGES.into(),
                    at_ms: self.now(),
                    detail: format!("{}; pending: {}", e, p.join("; ")),
                });
                return;
            }
            if self.now() >= deadline {
                self.liveness.push(Violation {
                    invariant: CONVERGES.into(),
                    at_ms: self.now(),
                    detail: format!(
                        "not converged within {} ms{}: {}",
                        budget,
                        if deadline > start + budget {
                            format!(" (extended to {} ms while it progressed)", deadline - start)
                        } else {
                            String::new()
                        },
                        p.join("; ")
                    ),
                });
                return;
            }
            madsim::time::sleep(Duration::from_millis(WAIT_POLL_MS)).await;
            let mut g = self.w.lock().unwrap();
            g.now_ms = crate::world::now_ms();
        }
    }
}

/// The nodes among `nodes` whose dispatcher manager of the changefeed is closing (it
/// creates no dispatcher, so an operator waiting on it never finishes: finding 03).
fn closing_managers(g: &crate::world::World, nodes: &[Option<NodeId>]) -> String {
    let closing: Vec<String> = nodes
        .iter()
        .flatten()
        .filter(|&&n| {
            g.node_state(n)
                .and_then(|st| st.orch.managers.get(&g.cf))
                .is_some_and(|dm| dm.closing || dm.write_path_closed)
        })
        .map(|n| n.to_string())
        .collect();
    if closing.is_empty() {
        String::new()
    } else {
        format!(" (the dispatcher manager on {} is closing)", closing.join(", "))
    }
}

/// Why a maintainer's bootstrap has not finished: each node it still waits for, and the
/// state of that node's dispatcher manager of the changefeed (a manager still closing
/// for an older generation rejects every bootstrap, finding 03; a live owner of another
/// epoch answers only its own maintainer).
fn unanswered_bootstrap(g: &crate::world::World, m: &core_sched::maintainer::Maintainer) -> String {
    let waiting: Vec<String> = m
        .bootstrap_responses
        .iter()
        .filter(|(_, r)| r.is_none())
        .map(|(&n, _)| {
            let why = match g.node_state(n) {
                None => "capture down".to_string(),
                Some(st) => match st.orch.managers.get(&g.cf) {
                    None => "no dispatcher manager".to_string(),
                    Some(dm) if dm.closing || dm.write_path_closed => {
                        format!("its dispatcher manager of epoch {} is closing", dm.maintainer_epoch)
                    }
                    Some(dm) if dm.maintainer_epoch != m.epoch => {
                        format!("its dispatcher manager is owned by epoch {}", dm.maintainer_epoch)
                    }
                    Some(_) => "its dispatcher manager is owned by this maintainer".to_string(),
                },
            };
            format!("{} ({})", n, why)
        })
        .collect();
    if waiting.is_empty() {
        if m.all_nodes_ready {
            "; every node answered, the bootstrap is not finished".to_string()
        } else {
            String::new()
        }
    } else {
        format!("; waiting for the bootstrap response of {}", waiting.join(", "))
    }
}
