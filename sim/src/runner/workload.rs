//! The random workload step: DDL, DML, table and maintainer moves, splits and merges,
//! kills, session losses and partitions, drawn from the seed one op per interval.

use super::{Driver, StepError};
use crate::scenario::*;
use core_sched::types::*;
use core_sched::upstream::RowOp;
use rand::Rng;
use std::time::Duration;

/// A workload's maintainer move waits this long after its last CREATE TABLE.
const MOVE_AFTER_CREATE_MS: u64 = 5_000;

impl Driver {
    /// Draw one operation every `interval` ms from the seed until `duration` is over.
    /// Scheduling calls go to the API once, without retry (the integration tests' random
    /// movers ignore failures too).
    pub(super) async fn random_workload(
        &mut self,
        duration: u64,
        interval: u64,
        ops: &[WorkloadOp],
        max_tables: usize,
        regions: u64,
    ) -> Result<(), StepError> {
        // `session_loss` joined the swarm families last, and `move_maintainer` joined the
        // swarms' ops after it: a seed that switches such a family off draws from the list
        // without its op (the other families' ops are drawn and skipped), so those runs
        // keep the op stream they had before. Every family that joined later does the same
        // (`workload_ops::draw_family`).
        let off =
            |op: WorkloadOp| super::workload_ops::draw_family(op).is_some_and(|f| self.families.get(f) == Some(&false));
        let ops: Vec<WorkloadOp> = ops.iter().copied().filter(|op| !off(*op)).collect();
        if ops.is_empty() {
            return Ok(());
        }
        let end = self.now() + duration;
        let nodes = self.scn.cluster.nodes;
        let mut created = 0u32;
        // Databases this workload created and has not dropped (only these are dropped).
        let mut databases: Vec<String> = Vec::new();
        let mut created_dbs = 0u32;
        // When this workload last created tables (see `MoveMaintainer` below).
        let mut last_create_ms: Option<u64> = None;
        // When this workload last moved the maintainer.
        let mut last_move_ms: Option<u64> = None;
        let near = |t: Option<u64>, now: u64| t.is_some_and(|t| now < t + MOVE_AFTER_CREATE_MS);
        // Fresh names for renames and batch creates.
        let mut renamed = 0u32;
        // The table this workload dropped last (`RecoverTable` brings it back).
        let mut last_dropped: Option<TableId> = None;
        while self.now() < end {
            self.budget()?;
            let (op, pick, node, n, kind) = {
                let mut g = self.w.lock().unwrap();
                let op = ops[g.sim_rng.random_range(0..ops.len())];
                let live = g.upstream.live_normal_tables();
                let pick = if live.is_empty() { None } else { Some(live[g.sim_rng.random_range(0..live.len())]) };
                let node = NodeId(g.sim_rng.random_range(0..nodes));
                let n = g.sim_rng.random_range(1..=5u64);
                let kind = g.sim_rng.random_range(0..3u32);
                (op, pick, node, n, kind)
            };
            let live_count = self.w.lock().unwrap().upstream.tables.values().filter(|t| t.dropped_ts.is_none()).count();
            let family = super::workload_ops::skip_family(op);
            if family.map(|f| self.families.get(f) == Some(&false)).unwrap_or(false) {
                madsim::time::sleep(Duration::from_millis(interval)).await;
                continue;
            }
            let desc = format!("{:?} table={:?} node={} n={}", op, pick, node, n);
            {
                let mut g = self.w.lock().unwrap();
                g.now_ms = crate::world::now_ms();
                g.record("-", "Scenario", 0, "workload", vec![("op".into(), desc)]);
            }
            if super::workload_ops::is_coverage_op(op) {
                let c = super::workload_ops::OpCtx {
                    pick,
                    node,
                    n,
                    kind,
                    live_count,
                    max_tables,
                    regions,
                    near_create: near(last_create_ms, self.now()),
                    near_move: near(last_move_ms, self.now()),
                };
                let ran = self.coverage_op(op, &c, &mut created).await?;
                if ran.created {
                    last_create_ms = Some(self.now());
                }
                if ran.moved {
                    last_move_ms = Some(self.now());
                }
                madsim::time::sleep(Duration::from_millis(interval)).await;
                continue;
            }
            match (op, pick) {
                // Nor a CREATE TABLE / DATABASE within that time after a move (same finding: the
                // removing maintainer ignores the trigger's report).
                (
                    WorkloadOp::CreateTable
                    | WorkloadOp::CreateDatabase
                    | WorkloadOp::CreateTables
                    | WorkloadOp::RecoverTable,
                    _,
                ) if near(last_move_ms, self.now()) => {}
                (WorkloadOp::CreateTables, _) if live_count + 1 < max_tables => {
                    last_create_ms = Some(self.now());
                    let count = (kind as usize + 2).min(max_tables - live_count);
                    let names: Vec<String> = (0..count)
                        .map(|_| {
                            created += 1;
                            format!("w{}", created)
                        })
                        .collect();
                    let mut g = self.w.lock().unwrap();
                    let now = g.now_ms;
                    let ids = g.upstream.create_tables(now, "test", &names, regions)?;
                    let gw = &mut *g;
                    for id in &ids {
                        gw.upstream.dml(now, *id, n, RowOp::Insert, &mut gw.sim_rng);
                    }
                    drop(g);
                    self.tables.extend(names.into_iter().zip(ids));
                }
                // A RENAME into another database moves the table (kind 1-2: to a database
                // this workload created, if any).
                (WorkloadOp::RenameTable, Some(t)) => {
                    renamed += 1;
                    let mut g = self.w.lock().unwrap();
                    let now = g.now_ms;
                    let tab = &g.upstream.tables[&t];
                    let db = match (kind, databases.is_empty()) {
                        (0, _) | (_, true) => tab.schema_name.clone(),
                        _ => databases[n as usize % databases.len()].clone(),
                    };
                    let (old, to) = (tab.name.clone(), format!("r{}", renamed));
                    g.upstream.rename_table(now, t, &db, &to)?;
                    drop(g);
                    self.tables.remove(&old);
                    self.tables.insert(to, t);
                }
                (WorkloadOp::RenameTables, Some(t)) if live_count > 1 => {
                    let mut g = self.w.lock().unwrap();
                    let now = g.now_ms;
                    // Another live table that is not a partition (TiDB renames a
                    // partitioned table as a whole, never one of its partitions).
                    let others: Vec<TableId> =
                        g.upstream.live_normal_tables().into_iter().filter(|x| *x != t).collect();
                    if let Some(&other) = others.get(n as usize % others.len().max(1)) {
                        let mut items = Vec::new();
                        let mut olds = Vec::new();
                        for id in [t, other] {
                            renamed += 1;
                            let tab = &g.upstream.tables[&id];
                            olds.push(tab.name.clone());
                            items.push((id, tab.schema_name.clone(), format!("r{}", renamed)));
                        }
                        g.upstream.rename_tables(now, &items)?;
                        drop(g);
                        for o in olds {
                            self.tables.remove(&o);
                        }
                        self.tables.extend(items.into_iter().map(|(id, _, name)| (name, id)));
                    }
                }
                (WorkloadOp::RecoverTable, _) if live_count < max_tables => {
                    let Some(t) = last_dropped.take() else {
                        madsim::time::sleep(Duration::from_millis(interval)).await;
                        continue;
                    };
                    let mut g = self.w.lock().unwrap();
                    let now = g.now_ms;
                    let (db, name) = (g.upstream.tables[&t].schema_name.clone(), g.upstream.tables[&t].name.clone());
                    let free = g.upstream.database_exists(&db) && g.upstream.table_by_name(&name).is_none();
                    if free && g.upstream.recover_table(now, &db, &name).is_ok() {
                        drop(g);
                        // A table-adding DDL like CREATE TABLE (see `MoveMaintainer`).
                        last_create_ms = Some(self.now());
                        self.tables.insert(name, t);
                    }
                }
                (WorkloadOp::AlterDatabase, _) => {
                    let mut g = self.w.lock().unwrap();
                    let now = g.now_ms;
                    let db = match (kind, databases.is_empty()) {
                        (0, _) | (_, true) => "test".to_string(),
                        _ => databases[n as usize % databases.len()].clone(),
                    };
                    if g.upstream.database_exists(&db) {
                        g.upstream.alter_database(now, &db)?;
                    }
                }
                (WorkloadOp::CreateTable, _) if live_count < max_tables => {
                    last_create_ms = Some(self.now());
                    created += 1;
                    let name = format!("w{}", created);
                    let mut g = self.w.lock().unwrap();
                    let now = g.now_ms;
                    let id = g.upstream.create_table(now, "test", &name, regions);
                    let gw = &mut *g;
                    gw.upstream.dml(now, id, n, RowOp::Insert, &mut gw.sim_rng);
                    drop(g);
                    self.tables.insert(name, id);
                }
                (WorkloadOp::CreateDatabase, _) if live_count < max_tables => {
                    last_create_ms = Some(self.now());
                    // No extra draws: the table count comes from `kind`, the rows from `n`.
                    let mut g = self.w.lock().unwrap();
                    let now = g.now_ms;
                    let name = loop {
                        created_dbs += 1;
                        let name = format!("wd{}", created_dbs);
                        if !g.upstream.database_exists(&name) {
                            break name;
                        }
                    };
                    g.upstream.create_database(now, &name)?;
                    let count = (kind as usize + 1).min(max_tables - live_count);
                    let mut new_tables = Vec::new();
                    for i in 1..=count {
                        let tname = format!("{}_t{}", name, i);
                        let id = g.upstream.create_table(now, &name, &tname, regions);
                        let gw = &mut *g;
                        gw.upstream.dml(now, id, n, RowOp::Insert, &mut gw.sim_rng);
                        new_tables.push((tname, id));
                    }
                    drop(g);
                    self.tables.extend(new_tables);
                    databases.push(name);
                }
                (WorkloadOp::DropDatabase, _) if !databases.is_empty() => {
                    let name = databases.remove(n as usize % databases.len());
                    let mut g = self.w.lock().unwrap();
                    let now = g.now_ms;
                    g.upstream.drop_database(now, &name)?;
                }
                (WorkloadOp::DropTable, Some(t)) if live_count > 1 => {
                    let mut g = self.w.lock().unwrap();
                    let now = g.now_ms;
                    g.upstream.drop_table(now, t);
                    last_dropped = Some(t);
                }
                (WorkloadOp::TruncateTable, Some(t)) => self.truncate(t),
                (WorkloadOp::AddColumn, Some(t)) => {
                    let mut g = self.w.lock().unwrap();
                    let now = g.now_ms;
                    g.upstream.add_column(now, t);
                }
                (WorkloadOp::Dml, Some(t)) => {
                    let mut g = self.w.lock().unwrap();
                    let now = g.now_ms;
                    let op = [RowOp::Insert, RowOp::Update, RowOp::Delete][kind as usize];
                    let gw = &mut *g;
                    gw.upstream.dml(now, t, n, op, &mut gw.sim_rng);
                }
                (WorkloadOp::MoveTable, Some(t)) => {
                    self.api(
                        &mut |m, ctx, _| m.api_move_table(ctx, t, node).map(|n| format!("{} move operators", n)),
                        "move table",
                    );
                }
                (WorkloadOp::SplitTable, Some(t)) => {
                    self.split_table_once(t);
                }
                (WorkloadOp::MergeTable, Some(t)) => {
                    self.merge_table_once(t);
                }
                (WorkloadOp::MergeTableRegions, Some(t)) => {
                    self.w.lock().unwrap().upstream.merge_regions(t, n);
                }
                (WorkloadOp::KillRestart, _) => {
                    // A capture killed or session-lost a moment ago is still a member (until
                    // its failure detection): count only the ones that still run.
                    let alive = self.w.lock().unwrap().running_members();
                    if alive.len() > 1 && alive.contains(&node) {
                        self.kill(node);
                        self.restart_once_down(node, 2_000 + 1_000 * n);
                    }
                }
                // Not within `MOVE_AFTER_CREATE_MS` of a CREATE TABLE: a move while the
                // trigger's CREATE TABLE report is unacknowledged never finishes (open finding
                // `docs/findings/04-move-maintainer-during-create-table.md`, which has its own
                // scenario); the swarms would hit it on every few seeds.
                (WorkloadOp::MoveMaintainer, _) if near(last_create_ms, self.now()) => {}
                (WorkloadOp::MoveMaintainer, _) => {
                    last_move_ms = Some(self.now());
                    // A workload move without an owner (mid-election) is just skipped.
                    // The random workload's scheduler does not insist: a refused move is skipped.
                    let _ = self.move_maintainer(node);
                }
                (WorkloadOp::SessionLoss, _) => {
                    let alive = self.w.lock().unwrap().running_members();
                    if alive.len() > 1 && alive.contains(&node) {
                        crate::session::session_loss(&self.w, node, crate::session::SESSION_DONE_NOTICE_MS);
                        self.restart_once_down(node, 1_000 * n);
                    }
                }
                (WorkloadOp::Partition, _) if nodes > 1 => {
                    let (other, both) = {
                        let mut g = self.w.lock().unwrap();
                        let o = (node.0 + g.sim_rng.random_range(1..nodes)) % nodes;
                        (o, g.sim_rng.random_bool(0.5))
                    };
                    let mut cuts = vec![(node.0, other)];
                    if both {
                        cuts.push((other, node.0));
                    }
                    {
                        let mut g = self.w.lock().unwrap();
                        for c in &cuts {
                            g.net.cut.insert(*c);
                        }
                        g.record(
                            "-",
                            "Scenario",
                            0,
                            "partition",
                            vec![
                                ("cuts".into(), format!("{:?}", cuts)),
                                ("heal_after_ms".into(), (1_000 * n).to_string()),
                            ],
                        );
                    }
                    let w = self.w.clone();
                    let net = self.w.lock().unwrap().net_handle.clone().unwrap();
                    net.spawn(async move {
                        madsim::time::sleep(Duration::from_millis(1_000 * n)).await;
                        let mut g = w.lock().unwrap();
                        for c in &cuts {
                            g.net.cut.remove(c);
                        }
                        g.record("-", "Scenario", 0, "partition healed", vec![("cuts".into(), format!("{:?}", cuts))]);
                    });
                }
                _ => {}
            }
            madsim::time::sleep(Duration::from_millis(interval)).await;
        }
        if self.families.get("split.settle") == Some(&true) {
            // Its CREATE TABLE keeps the workload's distance to a maintainer move.
            let settle_from = last_move_ms.map(|t| t + MOVE_AFTER_CREATE_MS);
            self.split_settle(&mut created, settle_from, max_tables).await?;
        }
        Ok(())
    }
}
