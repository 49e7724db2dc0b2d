//! Dropped tables: `no-write-after-drop` (a table dropped by DROP TABLE, TRUNCATE, DROP
//! DATABASE, or a partition dropped by DROP/TRUNCATE/REORGANIZE PARTITION, gets no
//! downstream write once its drop is written and the checkpoint passed it; a table that
//! RECOVER TABLE brought back is checked per life, by the rows' commit ts).
//!
//! TiCDC's promise: the barrier of a drop waits for every dispatcher of the table to flush
//! and then removes them, so nothing of the table follows its drop downstream (§8.3).

use super::*;
use crate::storage::Storage;
use crate::upstream::Upstream;
use core_sched::types::*;

/// `no-write-after-drop`: the data files of `row_tables` and the table-level DDL files
/// `ddls` just became durable; a table dropped at `D` whose drop (DROP TABLE, TRUNCATE,
/// DROP DATABASE) is durable downstream, with the persisted changefeed checkpoint at or
/// above `D`, must get none of them: every dispatcher of the table flushed its rows before
/// it reported the drop's barrier WAITING, and the drop removed the tasks, so such a write
/// is a late flush of a dispatcher nobody waited for (the storage consumer would apply it
/// to a table, or a database, that no longer exists).
///
/// A write while the checkpoint is still below `D` is not one: a maintainer restarted
/// from such a checkpoint replays the table from there, rows and DDL again (TiCDC's
/// at-least-once delivery across restarts). The caller passes the lower of the persisted
/// checkpoint and the own checkpoint of every running maintainer generation (one that
/// started below it replays the table).
pub fn check_no_write_after_drop(
    up: &Upstream,
    st: &Storage,
    persisted_checkpoint: Ts,
    row_tables: &[(TableId, Ts)],
    ddls: &[core_sched::upstream::DdlRecord],
) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    // The drop at or after `ts` of the life of table `t` that `ts` belongs to (a recovered
    // table has several lives), if that drop is durable and the checkpoint passed it.
    let passed_drop = |t: TableId, ts: Ts| -> Option<Ts> {
        let d = up.tables.get(&t)?.drop_after(ts)?;
        let durable = st.ddl_writes.range((d, TableId::MIN)..=(d, TableId::MAX)).next().is_some();
        (durable && persisted_checkpoint >= d).then_some(d)
    };
    for (t, oldest) in row_tables {
        if let Some(d) = passed_drop(*t, *oldest) {
            out.push((NO_WRITE_AFTER_DROP, format!("a data file of table {} became durable after its drop at {} was written and the checkpoint {} passed it", t, d, persisted_checkpoint)));
        }
    }
    for rec in ddls {
        for t in std::iter::once(rec.table_id).chain(rec.other_tables.iter().copied()).filter(|t| *t != 0) {
            if let Some(d) = passed_drop(t, rec.commit_ts).filter(|d| rec.commit_ts < *d) {
                out.push((NO_WRITE_AFTER_DROP, format!("DDL '{}' at {} of table {} became durable after its drop at {} was written and the checkpoint {} passed it", rec.query, rec.commit_ts, t, d, persisted_checkpoint)));
            }
        }
    }
    out
}
