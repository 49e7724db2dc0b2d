//! The random workload's coverage-driven ops: PD region splits and hot tables
//! (`split.check`), DDL bursts (`ddl.burst`), partitioned tables (`ddl.partition`),
//! failpoint pulses (`failpoint`), maintainer moves
//! and failovers with table operators in flight (`move_in_flight`) and coordinator
//! session loss (`coordinator.loss`), changefeed pause/resume (`changefeed.pause`,
//! `lifecycle.rs`) and held removals at a failover (`failover.held_removal`,
//! `workload_held.rs`) and DDLs held at their writer while their table's spans are
//! merged or moved (`ddl.in_flight_scheduling`, `workload_inflight.rs`) and DDL bursts
//! behind a held DONE (`ddl.report_after_write`) and a failed changefeed resumed
//! (`changefeed.fail`, `lifecycle.rs`) and a DROP TABLE under an in-flight merge or split
//! (`ddl.drop_in_flight`, `workload_drop.rs`). Each is left out of a swarm seed's draw when its
//! family is off, so those seeds keep their op streams.

use super::{Driver, StepError};
use crate::scenario::*;
use core_sched::types::*;
use core_sched::upstream::RowOp;
use rand::Rng;
use std::time::Duration;

/// One MiB per second of write traffic.
const MIB: u64 = 1024 * 1024;
/// PD region splits stop at this many regions per table.
const MAX_REGIONS: u64 = 256;
/// The failpoints a `failpoint` op pulses. Left out: those that fail the changefeed for
/// good (`getAllPhysicalTablesGCFastFail` fast-fails it; `BlockBeforeStopChangefeed`
/// needs that) and `MySQLSinkHangLongTime` (hangs writes until the capture fences).
const PULSED_FAILPOINTS: &[&str] = &[
    core_sched::effects::FP_BLOCK_CREATE_DISPATCHER,
    core_sched::effects::FP_BLOCK_OR_WAIT_BEFORE_WRITE,
    core_sched::effects::FP_NOT_READY_TO_CLOSE_DISPATCHER,
    core_sched::effects::FP_STOP_BALANCE_SCHEDULER,
    core_sched::effects::FP_NEW_DISPATCHER_MANAGER_DELAY,
];

/// The swarm family of an op that is left out of the draw when the family is off.
pub(super) fn draw_family(op: WorkloadOp) -> Option<&'static str> {
    Some(match op {
        WorkloadOp::SessionLoss => "session_loss",
        WorkloadOp::MoveMaintainer => "move_maintainer",
        WorkloadOp::RenameTable
        | WorkloadOp::RenameTables
        | WorkloadOp::RecoverTable
        | WorkloadOp::CreateTables
        | WorkloadOp::AlterDatabase => "ddl_table_set",
        WorkloadOp::SplitTableRegions | WorkloadOp::HotTable | WorkloadOp::MergeTableRegions => "split.check",
        WorkloadOp::DdlBurst => "ddl.burst",
        WorkloadOp::CreatePartitionTable | WorkloadOp::AlterPartition => "ddl.partition",
        WorkloadOp::Failpoint => "failpoint",
        WorkloadOp::MoveInFlight => "move_in_flight",
        WorkloadOp::CoordinatorLoss => "coordinator.loss",
        WorkloadOp::PauseResume => "changefeed.pause",
        WorkloadOp::HeldFailover => "failover.held_removal",
        WorkloadOp::DdlInFlight => "ddl.in_flight_scheduling",
        WorkloadOp::ReportAfterWrite => "ddl.report_after_write",
        WorkloadOp::FailResume => "changefeed.fail",
        WorkloadOp::DropInFlight => "ddl.drop_in_flight",
        _ => return None,
    })
}

/// The swarm family of an op that is drawn and skipped when the family is off: only the
/// swarm's first families, whose ops were in the op list from the start (a family that
/// joins later must use [`draw_family`], so that off it changes no seed's op stream).
pub(super) fn skip_family(op: WorkloadOp) -> Option<&'static str> {
    Some(match op {
        WorkloadOp::KillRestart => "kill_restart",
        WorkloadOp::MoveMaintainer => "move_maintainer",
        WorkloadOp::MoveTable => "move_table",
        WorkloadOp::SplitTable | WorkloadOp::MergeTable | WorkloadOp::MergeTableRegions => "split_merge",
        WorkloadOp::Partition => "partition",
        WorkloadOp::SessionLoss => "session_loss",
        _ => return None,
    })
}

/// Whether the op is one of this module's.
pub(super) fn is_coverage_op(op: WorkloadOp) -> bool {
    matches!(
        op,
        WorkloadOp::SplitTableRegions
            | WorkloadOp::HotTable
            | WorkloadOp::DdlBurst
            | WorkloadOp::CreatePartitionTable
            | WorkloadOp::AlterPartition
            | WorkloadOp::Failpoint
            | WorkloadOp::MoveInFlight
            | WorkloadOp::CoordinatorLoss
            | WorkloadOp::PauseResume
            | WorkloadOp::HeldFailover
            | WorkloadOp::DdlInFlight
            | WorkloadOp::ReportAfterWrite
            | WorkloadOp::FailResume
            | WorkloadOp::DropInFlight
    )
}

/// The draws of one workload op and what the loop knows about the run so far.
pub(super) struct OpCtx {
    pub pick: Option<TableId>,
    pub node: NodeId,
    /// 1-5.
    pub n: u64,
    /// 0-2.
    pub kind: u32,
    pub live_count: usize,
    pub max_tables: usize,
    pub regions: u64,
    /// Within `MOVE_AFTER_CREATE_MS` of a table-adding DDL: no maintainer move now.
    pub near_create: bool,
    /// Within `MOVE_AFTER_CREATE_MS` after a maintainer move: no table-adding DDL now.
    pub near_move: bool,
}

/// What an op did that the loop's guards must know.
#[derive(Default)]
pub(super) struct Ran {
    /// A table-adding DDL ran.
    pub created: bool,
    /// A maintainer move was asked.
    pub moved: bool,
}

impl Driver {
    /// Run one of the ops of this module; `created` numbers fresh table names.
    pub(super) async fn coverage_op(&mut self, op: WorkloadOp, c: &OpCtx, created: &mut u32) -> Result<Ran, StepError> {
        let mut ran = Ran::default();
        match op {
            WorkloadOp::SplitTableRegions => {
                if let Some(t) = c.pick {
                    let mut g = self.w.lock().unwrap();
                    let tab = g.upstream.tables.get_mut(&t).unwrap();
                    tab.regions = (tab.regions * (c.n + 1)).min(MAX_REGIONS);
                }
            }
            WorkloadOp::HotTable => {
                if let Some(t) = c.pick {
                    let rate = if c.kind == 0 { 0 } else { c.n * 12 * MIB };
                    let mut g = self.w.lock().unwrap();
                    let now = g.now_ms;
                    g.upstream.set_write_rate(now, t, rate, None);
                }
            }
            WorkloadOp::DdlBurst => ran.created = self.ddl_burst(c, created),
            WorkloadOp::CreatePartitionTable => {
                let parts = c.kind as usize + 2;
                if !c.near_move && c.live_count + parts <= c.max_tables {
                    *created += 1;
                    let name = format!("p{}", created);
                    let mut g = self.w.lock().unwrap();
                    let now = g.now_ms;
                    if let Ok(id) = g.upstream.create_partition_table(now, "test", &name, parts, c.regions) {
                        let gw = &mut *g;
                        gw.upstream.dml(now, id, c.n, RowOp::Insert, &mut gw.sim_rng);
                        drop(g);
                        self.tables.insert(name, id);
                        ran.created = true;
                    }
                }
            }
            WorkloadOp::AlterPartition => ran.created = self.alter_partition(c),
            WorkloadOp::Failpoint => self.pulse_failpoint(c),
            WorkloadOp::MoveInFlight => ran.moved = self.move_in_flight(c).await,
            WorkloadOp::CoordinatorLoss => ran.moved = self.coordinator_loss(c),
            WorkloadOp::PauseResume => self.pause_resume(1_000 * c.n),
            WorkloadOp::HeldFailover => ran.moved = self.held_failover(c).await,
            WorkloadOp::DdlInFlight => self.ddl_in_flight(c).await,
            WorkloadOp::ReportAfterWrite => ran.created = self.report_after_write(c, created),
            WorkloadOp::FailResume => self.fail_resume(200 * c.n, (c.kind == 0).then_some(1_000 + 500 * c.n)),
            WorkloadOp::DropInFlight => self.drop_in_flight(c).await,
            _ => {}
        }
        Ok(ran)
    }

    /// Two or three DDLs at one instant: a table-set DDL first, then one or two of any
    /// kind. Returns whether a table-adding DDL ran.
    fn ddl_burst(&mut self, c: &OpCtx, created: &mut u32) -> bool {
        let (second, third) = {
            let mut g = self.w.lock().unwrap();
            (g.sim_rng.random_range(0..8u32), g.sim_rng.random_bool(0.3).then(|| g.sim_rng.random_range(0..8u32)))
        };
        let mut adds = false;
        for which in [Some(c.kind * 2 + (c.n as u32 % 2)), Some(second), third].into_iter().flatten() {
            adds |= self.burst_ddl(which, c, created);
        }
        adds
    }

    /// One DDL of a burst: 0 CREATE TABLE, 1 DROP TABLE, 2 TRUNCATE TABLE, 3 CREATE
    /// TABLES, 4 RENAME TABLE, 5 CREATE DATABASE with a table then DROP DATABASE of it,
    /// 6 ALTER DATABASE, 7 ADD COLUMN. Returns whether it added tables.
    fn burst_ddl(&mut self, which: u32, c: &OpCtx, created: &mut u32) -> bool {
        let adds = matches!(which, 0 | 2 | 3 | 5);
        if adds && c.near_move {
            return false;
        }
        let mut g = self.w.lock().unwrap();
        let now = g.now_ms;
        let live = g.upstream.live_normal_tables();
        let live_count = g.upstream.tables.values().filter(|t| t.dropped_ts.is_none()).count();
        let pick = (!live.is_empty()).then(|| live[g.sim_rng.random_range(0..live.len())]);
        let room = live_count < c.max_tables;
        match (which, pick) {
            (0, _) if room => {
                *created += 1;
                let name = format!("w{}", created);
                let id = g.upstream.create_table(now, "test", &name, c.regions);
                let gw = &mut *g;
                gw.upstream.dml(now, id, c.n, RowOp::Insert, &mut gw.sim_rng);
                drop(g);
                self.tables.insert(name, id);
                true
            }
            (1, Some(t)) if live.len() > 1 => {
                g.upstream.drop_table(now, t);
                false
            }
            (2, Some(t)) => {
                drop(g);
                self.truncate(t);
                true
            }
            (3, _) if live_count + 2 <= c.max_tables => {
                let names: Vec<String> = (0..2)
                    .map(|_| {
                        *created += 1;
                        format!("w{}", created)
                    })
                    .collect();
                let Ok(ids) = g.upstream.create_tables(now, "test", &names, c.regions) else { return false };
                drop(g);
                self.tables.extend(names.into_iter().zip(ids));
                true
            }
            (4, Some(t)) => {
                *created += 1;
                let (old, db) = (g.upstream.tables[&t].name.clone(), g.upstream.tables[&t].schema_name.clone());
                let to = format!("rb{}", created);
                if g.upstream.rename_table(now, t, &db, &to).is_ok() {
                    drop(g);
                    self.tables.remove(&old);
                    self.tables.insert(to, t);
                }
                false
            }
            // The DROP DATABASE's Pass may find the schema without tasks yet (covered).
            (5, _) if room => {
                *created += 1;
                let db = format!("wb{}", created);
                if g.upstream.create_database(now, &db).is_err() {
                    return false;
                }
                let id = g.upstream.create_table(now, &db, &format!("{}_t", db), c.regions);
                let gw = &mut *g;
                gw.upstream.dml(now, id, c.n, RowOp::Insert, &mut gw.sim_rng);
                let _ = g.upstream.drop_database(now, &db);
                true
            }
            (6, _) => {
                let _ = g.upstream.alter_database(now, "test");
                false
            }
            (7, Some(t)) => {
                g.upstream.add_column(now, t);
                false
            }
            _ => false,
        }
    }

    /// A partition DDL on a random live partitioned table, then rows into it. Returns
    /// whether it added partitions.
    fn alter_partition(&mut self, c: &OpCtx) -> bool {
        let mut g = self.w.lock().unwrap();
        let now = g.now_ms;
        let parts: Vec<(TableId, usize)> = g
            .upstream
            .partitioned
            .values()
            .filter(|p| p.dropped_ts.is_none())
            .map(|p| (p.id, p.partitions.len()))
            .collect();
        if parts.is_empty() {
            return false;
        }
        let (id, len) = parts[c.n as usize % parts.len()];
        let what = g.sim_rng.random_range(0..5u32);
        let i = g.sim_rng.random_range(0..len);
        let adds = what != 1 && what != 4;
        if adds && c.near_move {
            return false;
        }
        let done = match what {
            0 => g.upstream.add_partition(now, id, c.kind as usize + 1).is_ok(),
            1 => g.upstream.drop_partition(now, id, i).is_ok(),
            2 => g.upstream.truncate_partition(now, id, i).is_ok(),
            3 if i + 1 < len && c.kind == 0 => g.upstream.reorganize_partition(now, id, &[i, i + 1], 1).is_ok(),
            3 => g.upstream.reorganize_partition(now, id, &[i], 2).is_ok(),
            _ => {
                let Some(normal) = c.pick else { return false };
                let with = g.upstream.tables[&normal].name.clone();
                if g.upstream.exchange_partition(now, id, i, normal).is_err() {
                    return false;
                }
                // The normal table's name now names the old partition's ID.
                let part = g.upstream.tables.values().find(|t| t.name == with && t.is_live_normal()).map(|t| t.id);
                if let Some(part) = part {
                    self.tables.insert(with, part);
                }
                true
            }
        };
        if done {
            let gw = &mut *g;
            gw.upstream.dml(now, id, c.n, RowOp::Insert, &mut gw.sim_rng);
        }
        done && adds
    }

    /// `BlockOrWaitReportAfterWrite` on at the maintainer's capture (the trigger's), off
    /// again 1-5 s later, and a DDL burst now. Returns whether a table-adding DDL ran.
    fn report_after_write(&mut self, c: &OpCtx, created: &mut u32) -> bool {
        let Some(n) = self.w.lock().unwrap().maintainer().map(|(n, _)| n) else { return false };
        self.failpoint_for(n, core_sched::effects::FP_BLOCK_OR_WAIT_REPORT_AFTER_WRITE, 1_000 * c.n);
        self.ddl_burst(c, created)
    }

    /// A failpoint on at the op's capture, off again 1-5 s later.
    fn pulse_failpoint(&mut self, c: &OpCtx) {
        let name = {
            let mut g = self.w.lock().unwrap();
            PULSED_FAILPOINTS[g.sim_rng.random_range(0..PULSED_FAILPOINTS.len())]
        };
        self.failpoint_for(c.node, name, 1_000 * c.n);
    }

    /// A move, split or merge of the op's table, then at once (or 100-300 ms later) a
    /// maintainer move or a kill of the maintainer's capture. Returns whether it asked
    /// for a maintainer move.
    async fn move_in_flight(&mut self, c: &OpCtx) -> bool {
        let Some(t) = c.pick else { return false };
        let node = c.node;
        match c.kind {
            0 => {
                self.api(
                    &mut |m, ctx, _| m.api_move_table(ctx, t, node).map(|n| format!("{} move operators", n)),
                    "move table",
                );
            }
            1 => {
                self.split_table_once(t);
            }
            _ => {
                self.merge_table_once(t);
            }
        }
        let wait = self.w.lock().unwrap().sim_rng.random_range(0..4u64) * 100;
        if wait > 0 {
            madsim::time::sleep(Duration::from_millis(wait)).await;
        }
        let (maintainer, alive) = {
            let g = self.w.lock().unwrap();
            (g.maintainer().map(|(n, _)| n), g.running_members())
        };
        let Some(m) = maintainer else { return false };
        if c.n.is_multiple_of(2) {
            if c.near_create {
                return false;
            }
            let dest =
                alive.iter().copied().find(|x| *x != m && x.0 >= node.0).or(alive.iter().copied().find(|x| *x != m));
            if let Some(dest) = dest {
                let _ = self.move_maintainer(dest);
                return true;
            }
        } else if alive.len() > 1 && alive.contains(&m) {
            self.kill(m);
            self.restart_once_down(m, 2_000 + 1_000 * c.n);
        }
        false
    }

    /// A maintainer move (unless a table-adding DDL is recent), then the coordinator's
    /// capture loses its session, noticing 1-4 s later. Returns whether it asked for a move.
    fn coordinator_loss(&mut self, c: &OpCtx) -> bool {
        let (owner, alive) = {
            let g = self.w.lock().unwrap();
            (g.owner(), g.running_members())
        };
        let Some(owner) = owner else { return false };
        if alive.len() < 2 || !alive.contains(&owner) {
            return false;
        }
        let mut moved = false;
        if !c.near_create && c.node != owner {
            let _ = self.move_maintainer(c.node);
            moved = true;
        }
        crate::session::session_loss(&self.w, owner, [1_000, 4_000]);
        self.restart_once_down(owner, 1_000 * c.n);
        moved
    }
}

#[cfg(test)]
mod tests {
    /// The op holds a written DDL's DONE at the trigger while the burst's next block
    /// events wait behind it, and the run converges.
    #[test]
    fn report_after_write_holds_a_done_and_the_run_converges() {
        use core_sched::coverage::Point as P;
        let scn = super::super::lifecycle::tests::workload_of("report_after_write");
        let (mut held, mut behind) = (0, 0);
        for seed in 0..4 {
            let r = crate::runner::run_on_fresh_thread(&scn, seed, &Default::default(), &Default::default());
            held += r.coverage.get(P::DispatcherDoneHeldAfterWrite);
            behind += r.coverage.get(P::DispatcherBlockEventBehindHeldDone);
            assert_eq!(r.outcome, crate::result::Outcome::Pass, "seed {}: {:?}", seed, r.violations);
        }
        assert!(held > 0 && behind > 0, "held {} behind {}", held, behind);
    }

    use super::*;

    #[test]
    fn every_coverage_op_belongs_to_a_swarm_family() {
        let ops = [
            WorkloadOp::SplitTableRegions,
            WorkloadOp::HotTable,
            WorkloadOp::DdlBurst,
            WorkloadOp::CreatePartitionTable,
            WorkloadOp::AlterPartition,
            WorkloadOp::Failpoint,
            WorkloadOp::MoveInFlight,
            WorkloadOp::CoordinatorLoss,
            WorkloadOp::PauseResume,
            WorkloadOp::HeldFailover,
            WorkloadOp::DdlInFlight,
            WorkloadOp::ReportAfterWrite,
            WorkloadOp::FailResume,
            WorkloadOp::DropInFlight,
        ];
        for op in ops {
            assert!(is_coverage_op(op), "{:?}", op);
            let f = draw_family(op).unwrap_or_else(|| panic!("{:?} has no family", op));
            assert!(SWARM_FAMILIES.contains(&f), "{:?}: {}", op, f);
        }
        assert!(!is_coverage_op(WorkloadOp::CreateTable));
        assert_eq!(draw_family(WorkloadOp::CreateTable), None);
    }

    #[test]
    fn pulsed_failpoints_are_known_and_never_fail_the_changefeed() {
        for fp in PULSED_FAILPOINTS {
            assert!(core_sched::effects::KNOWN_FAILPOINTS.contains(fp), "{}", fp);
        }
        assert!(!PULSED_FAILPOINTS.contains(&core_sched::effects::FP_GET_ALL_PHYSICAL_TABLES_GC_FAST_FAIL));
        assert!(!PULSED_FAILPOINTS.contains(&core_sched::effects::FP_MYSQL_SINK_HANG_LONG_TIME));
    }
}
