//! The step interpreter: the scenario's setup (tables, rows, the changefeed) and one
//! match arm per scenario step kind.

use super::cluster::restart_node;
use super::{Driver, StepError, WAIT_POLL_MS};
use crate::scenario::*;
use core_sched::config::ChangefeedConfig;
use core_sched::coordinator::ChangefeedInfo;
use core_sched::messages::FeedState;
use core_sched::types::*;
use core_sched::upstream::RowOp;
use rand::Rng;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

impl Driver {
    /// The scenario's tables (with their rows and write rates) and the changefeed,
    /// starting at the upstream's current ts.
    pub(super) fn setup(&mut self, cfg: &ChangefeedConfig) {
        let mut g = self.w.lock().unwrap();
        let now = g.now_ms;
        for t in &self.scn.tables {
            let id = g.upstream.create_table(now, &t.schema, &t.name, t.regions);
            if t.write_bytes_per_sec > 0 || t.row_bytes > 0 {
                g.upstream.set_write_rate(now, id, t.write_bytes_per_sec, Some(t.row_bytes));
            }
            self.tables.insert(t.name.clone(), id);
        }
        let start = g.upstream.tso(now);
        g.start_ts = start;
        g.redo_on = cfg.consistent.redo_enabled();
        let cf = g.cf.clone();
        g.meta.changefeeds.insert(
            cf.clone(),
            ChangefeedInfo {
                id: cf.clone(),
                config: cfg.clone(),
                epoch: 0,
                checkpoint_ts: start,
                state: FeedState::Normal,
                last_error: None,
                created: false,
            },
        );
        g.persisted_checkpoint = start;
        g.data_loss.last_checkpoint = start;
        if let Some(iv) = cfg.sync_point_interval() {
            g.sync_points = Some((core_sched::syncpoint::calculate_start_sync_point_ts(start, iv, false), iv));
        }
        g.record(
            "-",
            "Scenario",
            0,
            "create changefeed",
            vec![("changefeed".into(), cf.to_string()), ("start_ts".into(), start.to_string())],
        );
        let gw = &mut *g;
        for t in &self.scn.tables {
            if t.rows > 0 {
                let id = self.tables[&t.name];
                gw.upstream.dml(now, id, t.rows, RowOp::Insert, &mut gw.sim_rng);
            }
        }
    }

    /// Run one scenario step; an error stops the run (a `converges` violation).
    pub(super) async fn run_step(&mut self, step: &Step) -> Result<(), StepError> {
        let desc = self.describe(step);
        {
            let mut g = self.w.lock().unwrap();
            g.now_ms = crate::world::now_ms();
            g.record("-", "Scenario", 0, "step", vec![("step".into(), desc)]);
        }
        match step {
            Step::CreateTable { table, schema, regions } => {
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                let id = g.upstream.create_table(now, schema, table, *regions);
                self.tables.insert(table.clone(), id);
            }
            Step::DropTable { table } => {
                let id = self.table(table)?;
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                g.upstream.drop_table(now, id);
            }
            Step::CreateDatabase { database } => {
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                g.upstream.create_database(now, database)?;
            }
            Step::DropDatabase { database } => {
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                g.upstream.drop_database(now, database)?;
            }
            Step::TruncateTable { table } => {
                let id = self.table(table)?;
                self.truncate(id);
            }
            Step::AddColumn { table } => {
                let id = self.table(table)?;
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                g.upstream.add_column(now, id);
            }
            Step::RenameTable { table, to, database } => {
                let item = RenameItem { table: table.clone(), to: to.clone(), database: database.clone() };
                self.rename(std::slice::from_ref(&item))?;
            }
            Step::RenameTables { renames } => self.rename(renames)?,
            Step::RecoverTable { table } => {
                let id = self.table(table)?;
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                let schema = g.upstream.tables[&id].schema_name.clone();
                let id = g.upstream.recover_table(now, &schema, table)?;
                drop(g);
                self.tables.insert(table.clone(), id);
            }
            Step::CreateTables { tables, schema, regions } => {
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                let ids = g.upstream.create_tables(now, schema, tables, *regions)?;
                drop(g);
                self.tables.extend(tables.iter().cloned().zip(ids));
            }
            Step::AlterDatabase { database } => {
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                g.upstream.alter_database(now, database)?;
            }
            Step::CreatePartitionTable { table, schema, partitions, regions } => {
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                let id = g.upstream.create_partition_table(now, schema, table, *partitions, *regions)?;
                drop(g);
                self.tables.insert(table.clone(), id);
            }
            Step::AddPartition { table, count } => {
                let id = self.table(table)?;
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                g.upstream.add_partition(now, id, *count)?;
            }
            Step::DropPartition { table, partition } => {
                let id = self.table(table)?;
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                g.upstream.drop_partition(now, id, *partition)?;
            }
            Step::TruncatePartition { table, partition } => {
                let id = self.table(table)?;
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                g.upstream.truncate_partition(now, id, *partition)?;
            }
            Step::ReorganizePartition { table, partitions, into } => {
                let id = self.table(table)?;
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                g.upstream.reorganize_partition(now, id, partitions, *into)?;
            }
            Step::ExchangePartition { table, partition, with } => {
                let (id, normal) = (self.table(table)?, self.table(with)?);
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                g.upstream.exchange_partition(now, id, *partition, normal)?;
                // The normal table's name now names the old partition's ID.
                let part = g.upstream.tables.values().find(|t| t.name == *with && t.is_live_normal()).map(|t| t.id);
                drop(g);
                if let Some(part) = part {
                    self.tables.insert(with.clone(), part);
                }
            }
            Step::Insert { table, rows } | Step::Update { table, rows } | Step::Delete { table, rows } => {
                let op = match step {
                    Step::Insert { .. } => RowOp::Insert,
                    Step::Update { .. } => RowOp::Update,
                    _ => RowOp::Delete,
                };
                let id = self.table(table)?;
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                let gw = &mut *g;
                gw.upstream.dml(now, id, *rows, op, &mut gw.sim_rng);
            }
            Step::SplitTableRegions { table, regions } => {
                let id = self.table(table)?;
                self.w.lock().unwrap().upstream.tables.get_mut(&id).unwrap().regions = *regions;
            }
            Step::MergeTableRegions { table, regions } => {
                let id = self.table(table)?;
                self.w.lock().unwrap().upstream.merge_regions(id, *regions);
            }
            Step::SetWriteRate { table, bytes_per_sec, row_bytes } => {
                let id = self.table(table)?;
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                g.upstream.set_write_rate(now, id, *bytes_per_sec, *row_bytes);
            }
            Step::MoveTable { table, to } => {
                let id = self.table(table)?;
                let dest = self.node(to)?;
                let mode = self.api_mode();
                self.api_retry(
                    &mut |m, ctx, _| m.api_move_table_in(ctx, mode, id, dest).map(|n| format!("{} move operators", n)),
                    "move table",
                )
                .await?;
            }
            Step::SplitTable { table } => {
                let id = self.table(table)?;
                let mode = self.api_mode();
                self.api_retry(
                    &mut |m, ctx, up| m.api_split_table_in(ctx, mode, id, up).map(|n| format!("split into {}", n)),
                    "split table",
                )
                .await?;
            }
            Step::MergeTable { table } => {
                let id = self.table(table)?;
                let mode = self.api_mode();
                self.api_retry(&mut |m, ctx, _| m.api_merge_table_in(ctx, mode, id), "merge table").await?;
            }
            Step::MoveMaintainer { to } => {
                let dest = self.node(to)?;
                self.move_maintainer_with_retry(dest).await?;
            }
            Step::PauseChangefeed | Step::ResumeChangefeed => {
                let pause = matches!(step, Step::PauseChangefeed);
                if !self.pause_or_resume_with_retry(pause).await? {
                    let g = self.w.lock().unwrap();
                    return Err(StepError::ChangefeedRefused {
                        action: if pause { "pause" } else { "resume" },
                        state: g.meta.changefeeds.get(&g.cf).map(|i| i.state),
                    });
                }
            }
            Step::UpdateChangefeed { config } => {
                let mut g = self.w.lock().unwrap();
                let cf = g.cf.clone();
                let info = g.meta.changefeeds.get_mut(&cf).ok_or(StepError::NoChangefeed)?;
                if info.state != core_sched::messages::FeedState::Stopped {
                    return Err(StepError::UpdateNotPaused(info.state));
                }
                if let Some(v) = config.enable_sync_point {
                    info.config.enable_sync_point = v;
                }
                if let Some(v) = &config.sync_point_interval {
                    info.config.sync_point_interval_ms = parse_duration_ms(v)?;
                }
                if let Some(v) = &config.sync_point_retention {
                    info.config.sync_point_retention_ms = parse_duration_ms(v)?;
                }
                let c = info.config.clone();
                g.record(
                    "-",
                    "Scenario",
                    0,
                    "update changefeed",
                    vec![
                        ("enable_sync_point".into(), c.enable_sync_point.to_string()),
                        ("sync_point_interval_ms".into(), c.sync_point_interval_ms.to_string()),
                    ],
                );
            }
            Step::DmlLoop { table, interval_ms, rows } => {
                let id = self.table(table)?;
                let stop = Arc::new(AtomicBool::new(false));
                self.dml_loops.push(stop.clone());
                let (w, every, n) = (self.w.clone(), (*interval_ms).max(1), *rows);
                let net = self.w.lock().unwrap().net_handle.clone().unwrap();
                net.spawn(async move {
                    loop {
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                        {
                            let mut g = w.lock().unwrap();
                            g.now_ms = crate::world::now_ms();
                            let now = g.now_ms;
                            let gw = &mut *g;
                            if gw.upstream.tables.get(&id).map(|t| t.dropped_ts.is_none()).unwrap_or(false) {
                                gw.upstream.dml(now, id, n, RowOp::Insert, &mut gw.sim_rng);
                            }
                        }
                        madsim::time::sleep(Duration::from_millis(every)).await;
                    }
                });
            }
            Step::StopDmlLoop => self.stop_dml_loops(),
            Step::EnableFailpoint { name, node } | Step::DisableFailpoint { name, node } => {
                let on = matches!(step, Step::EnableFailpoint { .. });
                let ns = self.nodes(node)?;
                let mut g = self.w.lock().unwrap();
                for n in ns {
                    if on {
                        g.failpoints[n.0 as usize].0.insert(name.clone());
                    } else {
                        g.failpoints[n.0 as usize].0.remove(name);
                    }
                    g.record(
                        &n.to_string(),
                        "Failpoint",
                        0,
                        if on { "enable failpoint" } else { "disable failpoint" },
                        vec![("name".into(), name.clone())],
                    );
                }
            }
            Step::Kill { node } => {
                let n = self.node(node)?;
                self.kill(n);
            }
            Step::SessionLoss { node, notice_ms } => {
                let n = self.node(node)?;
                crate::session::session_loss(&self.w, n, notice_ms.unwrap_or(crate::session::SESSION_DONE_NOTICE_MS));
            }
            Step::Restart { node } => {
                let n = self.node(node)?;
                restart_node(&self.w, n, self.handles[n.0 as usize].id()).await;
            }
            Step::Start { node } => {
                let n = self.node(node)?;
                let held = std::mem::replace(&mut self.w.lock().unwrap().nodes[n.0 as usize].held, false);
                if !held {
                    return Err(StepError::AlreadyStarted(n));
                }
                restart_node(&self.w, n, self.handles[n.0 as usize].id()).await;
            }
            Step::SleepRandom { min_ms, max_ms } => {
                let ms = {
                    let mut g = self.w.lock().unwrap();
                    g.sim_rng.random_range(*min_ms..=(*max_ms).max(*min_ms))
                };
                self.w.lock().unwrap().record("-", "Scenario", 0, "sleep drawn", vec![("ms".into(), ms.to_string())]);
                self.sleep_within_limit(ms).await?;
            }
            Step::Partition { a, b, symmetric } => {
                let (a, b) = (self.node(a)?, self.node(b)?);
                let mut g = self.w.lock().unwrap();
                g.net.cut.insert((a.0, b.0));
                if *symmetric {
                    g.net.cut.insert((b.0, a.0));
                }
            }
            Step::Heal => self.w.lock().unwrap().net.cut.clear(),
            Step::Sleep { ms } => self.sleep_within_limit(*ms).await?,
            Step::RandomWorkload { duration_ms, interval_ms, ops, max_tables, regions } => {
                self.random_workload(*duration_ms, (*interval_ms).max(1), ops, *max_tables, *regions).await?;
            }
            Step::Wait { until, timeout_ms } => {
                let deadline = self.now() + timeout_ms;
                loop {
                    match self.eval(until) {
                        Ok(true) => break,
                        Ok(false) => {}
                        Err(e) => return Err(e),
                    }
                    if self.now() >= deadline {
                        return Err(StepError::WaitTimeout { timeout_ms: *timeout_ms, until: Box::new(until.clone()) });
                    }
                    self.budget()?;
                    madsim::time::sleep(Duration::from_millis(WAIT_POLL_MS)).await;
                }
            }
        }
        Ok(())
    }

    /// The step as traced. A workload's op list leaves out the ops of the families a
    /// pinned plan does not name: they joined the swarm after the plan was recorded, and
    /// the run is the recorded one, trace included.
    fn describe(&self, step: &Step) -> String {
        match step {
            Step::RandomWorkload { duration_ms, interval_ms, ops, max_tables, regions } if !self.unnamed.is_empty() => {
                let unnamed =
                    |op: &WorkloadOp| super::workload_ops::draw_family(*op).is_some_and(|f| self.unnamed.contains(f));
                let ops = ops.iter().copied().filter(|op| !unnamed(op)).collect();
                let s = Step::RandomWorkload {
                    duration_ms: *duration_ms,
                    interval_ms: *interval_ms,
                    ops,
                    max_tables: *max_tables,
                    regions: *regions,
                };
                format!("{:?}", s)
            }
            _ => format!("{:?}", step),
        }
    }

    /// Stop every background `dml_loop` (at a `stop_dml_loop` step and after the steps).
    pub(super) fn stop_dml_loops(&mut self) {
        for s in self.dml_loops.drain(..) {
            s.store(true, Ordering::Relaxed);
        }
    }

    /// RENAME TABLE(S) upstream (a missing `database`: the table's own); the new names
    /// now refer to the tables and the old ones to nothing.
    pub(super) fn rename(&mut self, renames: &[RenameItem]) -> Result<(), StepError> {
        let mut items = Vec::new();
        for r in renames {
            let id = self.table(&r.table)?;
            let db = match &r.database {
                Some(d) => d.clone(),
                None => self.w.lock().unwrap().upstream.tables[&id].schema_name.clone(),
            };
            items.push((id, db, r.to.clone()));
        }
        {
            let mut g = self.w.lock().unwrap();
            let now = g.now_ms;
            if let [(id, db, to)] = items.as_slice() {
                g.upstream.rename_table(now, *id, db, to)?;
            } else {
                g.upstream.rename_tables(now, &items)?;
            }
        }
        for r in renames {
            self.tables.remove(&r.table);
        }
        for (r, (id, _, _)) in renames.iter().zip(items) {
            self.tables.insert(r.to.clone(), id);
        }
        Ok(())
    }

    /// TRUNCATE TABLE upstream; the table's name now refers to its new ID.
    pub(super) fn truncate(&mut self, id: TableId) {
        let mut g = self.w.lock().unwrap();
        let now = g.now_ms;
        let new_id = g.upstream.truncate_table(now, id);
        let name = match g.upstream.partitioned.get(&new_id) {
            Some(p) => p.name.clone(),
            None => g.upstream.tables[&new_id].name.clone(),
        };
        drop(g);
        self.tables.insert(name, new_id);
    }
}
