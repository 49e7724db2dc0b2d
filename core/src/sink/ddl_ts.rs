//! The MySQL-class sink's DDL crash-recovery table (`tidb_cdc.ddl_ts_v1`) as the
//! dispatcher side reads it.
//!
//! TiCDC refuses syncpoints for any sink but MySQL/TiDB (`ReplicaConfig.ValidateAndAdjust`),
//! so a changefeed with syncpoints always writes through the MySQL sink, whose DDL writer
//! keeps one row per table (`SendDDLTsPre` before a block event's write, `finished = 0`;
//! `SendDDLTs` after it, `finished = 1`; a syncpoint updates one reserved row) and whose
//! dispatcher creation lifts each table dispatcher's start ts to that row
//! (`getTableRecoveryInfoFromMysqlSink` in `newEventDispatchers`, and for a merged
//! dispatcher `mergeMergedStartTsCandidateWithMySQLRecovery`). A dispatcher recreated after
//! a failover therefore never replays a DDL of its table that is already written
//! downstream. The simulator's sink is the cloud-storage writer, which has no such table;
//! while syncpoints are on the dispatcher manager reads the rows the downstream keeps for
//! it ([`DdlTsView`], kept by the simulator from the durable DDL and syncpoint objects), so
//! the start ts follow TiCDC's MySQL path. Without syncpoints nothing changes.

use crate::coverage::{hit, Point as P};
use crate::types::*;

/// One row: the block event's commit ts, whether its write finished, whether it is the
/// syncpoint row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DdlTsRow {
    pub ddl_ts: Ts,
    pub finished: bool,
    pub is_syncpoint: bool,
}

/// The downstream's `ddl_ts` rows of the changefeed (the simulation runs one).
pub trait DdlTsView {
    fn table_row(&self, table: TableId) -> Option<DdlTsRow>;
    fn syncpoint_row(&self) -> Option<DdlTsRow>;
}

/// No rows (unit tests, a downstream that keeps none).
pub struct NoDdlTs;
impl DdlTsView for NoDdlTs {
    fn table_row(&self, _: TableId) -> Option<DdlTsRow> {
        None
    }
    fn syncpoint_row(&self) -> Option<DdlTsRow> {
        None
    }
}
pub static NO_DDL_TS: NoDdlTs = NoDdlTs;

/// A dispatcher's start ts after the recovery lookup, and the skip flags that go with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recovery {
    pub start_ts: Ts,
    pub skip_sync_point_at_start_ts: bool,
    pub skip_dml_as_start_ts: bool,
}

/// `Sink.GetTableRecoveryInfo` over `Writer.GetTableRecoveryInfo` for one table: no row,
/// the start ts as given; otherwise the table's row, or the syncpoint row when it is at
/// least as new, decoded (finished: its ts, skipping a finished syncpoint at it; an
/// unfinished syncpoint: its ts, replaying it; an unfinished DDL: ts - 1, replaying the DDL
/// but not its DMLs), and the later of that and the given start ts (the skip flags only
/// when the row's ts wins).
pub fn table_recovery_info(view: &dyn DdlTsView, table: TableId, start_ts: Ts) -> Recovery {
    let none = Recovery { start_ts, skip_sync_point_at_start_ts: false, skip_dml_as_start_ts: false };
    let Some(row) = view.table_row(table) else { return none };
    hit(P::SinkDdlTsRow);
    let chosen = match view.syncpoint_row() {
        Some(s) if s.ddl_ts >= row.ddl_ts => {
            hit(P::SinkDdlTsSyncPointRow);
            s
        }
        _ => row,
    };
    let (ts, skip_sp, skip_dml) = if chosen.finished {
        (chosen.ddl_ts, chosen.is_syncpoint, false)
    } else if chosen.is_syncpoint {
        hit(P::SinkDdlTsUnfinishedSyncPoint);
        (chosen.ddl_ts, false, false)
    } else {
        hit(P::SinkDdlTsUnfinishedDdl);
        (chosen.ddl_ts.saturating_sub(1), false, true)
    };
    if start_ts > ts {
        hit(P::SinkDdlTsStartAhead);
        return none;
    }
    Recovery { start_ts: ts, skip_sync_point_at_start_ts: skip_sp, skip_dml_as_start_ts: skip_dml }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    struct Rows(BTreeMap<TableId, DdlTsRow>, Option<DdlTsRow>);
    impl DdlTsView for Rows {
        fn table_row(&self, t: TableId) -> Option<DdlTsRow> {
            self.0.get(&t).copied()
        }
        fn syncpoint_row(&self) -> Option<DdlTsRow> {
            self.1
        }
    }
    fn row(ddl_ts: Ts, finished: bool, is_syncpoint: bool) -> DdlTsRow {
        DdlTsRow { ddl_ts, finished, is_syncpoint }
    }
    fn rec(start_ts: Ts, sp: bool, dml: bool) -> Recovery {
        Recovery { start_ts, skip_sync_point_at_start_ts: sp, skip_dml_as_start_ts: dml }
    }

    #[test]
    fn a_written_ddl_lifts_the_start_ts_to_its_commit_ts() {
        let v = Rows([(106, row(500, true, false))].into(), Some(row(400, true, true)));
        assert_eq!(table_recovery_info(&v, 106, 300), rec(500, false, false));
        // Ahead of the row: unchanged, no skip.
        assert_eq!(table_recovery_info(&v, 106, 600), rec(600, false, false));
        // A table without a row keeps its start ts even when a syncpoint row exists.
        assert_eq!(table_recovery_info(&v, 7, 300), rec(300, false, false));
        assert_eq!(table_recovery_info(&NO_DDL_TS, 106, 300), rec(300, false, false));
    }

    #[test]
    fn rows_decode_like_the_writer() {
        // An unfinished DDL is replayed from ts - 1 without its DMLs.
        let v = Rows([(1, row(500, false, false))].into(), None);
        assert_eq!(table_recovery_info(&v, 1, 300), rec(499, false, true));
        // A syncpoint row at least as new wins: finished, it is skipped at its ts...
        let v = Rows([(1, row(500, true, false))].into(), Some(row(500, true, true)));
        assert_eq!(table_recovery_info(&v, 1, 300), rec(500, true, false));
        // ...unfinished, it is replayed.
        let v = Rows([(1, row(500, true, false))].into(), Some(row(600, false, true)));
        assert_eq!(table_recovery_info(&v, 1, 300), rec(600, false, false));
    }
}
