//! What the core sees of the upstream TiDB cluster: row changes and DDL events as the
//! event service delivers them, and a schema view for the maintainer's bootstrap.
//! The upstream itself (TSO, tables, regions, DML generator) lives in the simulator.

use crate::messages::{InfluencedTables, SchemaIdChange, TableRef};
use crate::types::*;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RowOp {
    Insert,
    Update,
    Delete,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowChange {
    pub table_id: TableId,
    pub key: u64,
    pub commit_ts: Ts,
    pub op: RowOp,
    pub value: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DdlKind {
    CreateTable,
    DropTable,
    TruncateTable,
    AddColumn,
    CreateDatabase,
    DropDatabase,
    /// `ActionRenameTable`: the table keeps its ID; it may move to another database.
    RenameTable,
    /// `ActionRenameTables`: several renames in one DDL.
    RenameTables,
    /// `ActionRecoverTable`: a dropped table comes back under its old ID.
    RecoverTable,
    /// `ActionCreateTables`: a batch of CREATE TABLE in one DDL.
    CreateTables,
    /// `ActionModifySchemaCharsetAndCollate` (ALTER DATABASE): blocks the database.
    AlterDatabase,
    /// Partition DDLs on a partitioned table (one logical table, one physical table
    /// per partition): `ActionAddTablePartition`, `ActionDropTablePartition`,
    /// `ActionTruncateTablePartition`, `ActionExchangeTablePartition`,
    /// `ActionReorganizePartition`.
    AddPartition,
    DropPartition,
    TruncatePartition,
    ExchangePartition,
    ReorganizePartition,
}

/// A DDL as the schema store builds it (`persist_storage_ddl_handlers.go`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DdlEvent {
    pub commit_ts: Ts,
    pub kind: DdlKind,
    pub schema_id: SchemaId,
    pub schema_name: String,
    /// The table the DDL is about (0 for schema-level DDLs).
    pub table_id: TableId,
    pub table_name: String,
    pub query: String,
    pub blocked_tables: InfluencedTables,
    pub need_dropped_tables: Option<InfluencedTables>,
    pub need_added_tables: Vec<TableRef>,
    /// `UpdatedSchemas` (RENAME TABLE(S) across databases, EXCHANGE PARTITION).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub updated_schemas: Vec<SchemaIdChange>,
}

/// What a DDL leaves downstream (the schema file written by the storage sink).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DdlRecord {
    pub commit_ts: Ts,
    pub kind: DdlKind,
    pub schema_name: String,
    pub table_id: TableId,
    pub table_name: String,
    pub query: String,
    /// Every physical table a multi-table DDL names besides `table_id` (RENAME TABLES,
    /// CREATE TABLES, partition DDLs): the storage consumer applies it to each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_tables: Vec<TableId>,
}

impl DdlEvent {
    pub fn record(&self) -> DdlRecord {
        DdlRecord {
            commit_ts: self.commit_ts,
            kind: self.kind,
            schema_name: self.schema_name.clone(),
            table_id: self.table_id,
            table_name: self.table_name.clone(),
            query: self.query.clone(),
            other_tables: self.other_tables(),
        }
    }

    /// The physical tables the DDL is about besides `table_id`: what it adds, drops,
    /// blocks or moves (the DDL span left out).
    pub fn other_tables(&self) -> Vec<TableId> {
        let mut v: Vec<TableId> = self.need_added_tables.iter().map(|t| t.table_id).collect();
        if let Some(d) = &self.need_dropped_tables {
            v.extend(d.table_ids.iter().copied());
        }
        v.extend(self.blocked_tables.table_ids.iter().copied());
        v.extend(self.updated_schemas.iter().map(|c| c.table_id));
        v.retain(|t| *t != DDL_SPAN_TABLE_ID && *t != self.table_id);
        v.sort_unstable();
        v.dedup();
        v
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum UpstreamEvent {
    Dml(RowChange),
    Ddl(DdlEvent),
    /// A syncpoint at this ts (see [`crate::syncpoint`]): after every DML/DDL at or
    /// below it, before anything above it.
    SyncPoint(Ts),
    /// Everything at or below this ts has been delivered.
    Resolved(Ts),
}

/// A block event (`commonEvent.BlockEvent`): a DDL or a syncpoint. Unboxed: a dispatcher
/// holds at most one, and the DDL is the common case.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BlockEvent {
    Ddl(DdlEvent),
    /// `SyncPointEvent`: blocks every table (`InfluenceType_All`), adds and drops none.
    SyncPoint(Ts),
}

impl BlockEvent {
    pub fn commit_ts(&self) -> Ts {
        match self {
            BlockEvent::Ddl(d) => d.commit_ts,
            BlockEvent::SyncPoint(ts) => *ts,
        }
    }
    pub fn is_sync_point(&self) -> bool {
        matches!(self, BlockEvent::SyncPoint(_))
    }
    /// The barrier key `(commitTs, isSyncPoint)`.
    pub fn key(&self) -> (Ts, bool) {
        (self.commit_ts(), self.is_sync_point())
    }
    pub fn blocked_tables(&self) -> InfluencedTables {
        match self {
            BlockEvent::Ddl(d) => d.blocked_tables.clone(),
            BlockEvent::SyncPoint(_) => InfluencedTables {
                influence_type: crate::messages::InfluenceType::All,
                table_ids: vec![],
                schema_id: 0,
            },
        }
    }
    pub fn need_dropped_tables(&self) -> Option<InfluencedTables> {
        match self {
            BlockEvent::Ddl(d) => d.need_dropped_tables.clone(),
            BlockEvent::SyncPoint(_) => None,
        }
    }
    pub fn need_added_tables(&self) -> Vec<TableRef> {
        match self {
            BlockEvent::Ddl(d) => d.need_added_tables.clone(),
            BlockEvent::SyncPoint(_) => vec![],
        }
    }
    pub fn updated_schemas(&self) -> Vec<SchemaIdChange> {
        match self {
            BlockEvent::Ddl(d) => d.updated_schemas.clone(),
            BlockEvent::SyncPoint(_) => vec![],
        }
    }
    /// The DDL's query, or `SYNC POINT` (for traces and reports).
    pub fn query(&self) -> String {
        match self {
            BlockEvent::Ddl(d) => d.query.clone(),
            BlockEvent::SyncPoint(_) => "SYNC POINT".to_string(),
        }
    }
    pub fn ddl(&self) -> Option<&DdlEvent> {
        match self {
            BlockEvent::Ddl(d) => Some(d),
            BlockEvent::SyncPoint(_) => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableInfo {
    pub table_id: TableId,
    pub schema_id: SchemaId,
    pub schema_name: String,
    pub name: String,
    pub splitable: bool,
}

/// An error of the schema store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchemaStoreError {
    /// `ErrSnapshotLostByGC`: the requested snapshot is older than the store's GC ts.
    SnapshotLostByGC { snap_ts: Ts, gc_ts: Ts },
}

impl SchemaStoreError {
    pub fn code(&self) -> crate::messages::ErrorCode {
        match self {
            SchemaStoreError::SnapshotLostByGC { .. } => crate::messages::ErrorCode::SnapshotLostByGC,
        }
    }
}

impl std::fmt::Display for SchemaStoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SchemaStoreError::SnapshotLostByGC { snap_ts, gc_ts } => write!(
                f,
                "[{}] schema snapshot at {} was lost: the schema store is GCed up to {}",
                self.code().rfc(),
                snap_ts,
                gc_ts
            ),
        }
    }
}

/// The schema store as the maintainer uses it (`GetAllPhysicalTables`, DDL history,
/// region counts). Implemented by the simulator's upstream model.
pub trait SchemaView {
    /// Tables that exist as of `ts` (inclusive).
    fn tables_at(&self, ts: Ts) -> Vec<TableInfo>;
    /// `getAllPhysicalTables` as `FinishBootstrap` loads it: like `tables_at`, but the
    /// schema store can refuse (its snapshot is GCed). The default never fails; the
    /// simulator's per-node view fails under failpoint `getAllPhysicalTablesGCFastFail`.
    fn get_all_physical_tables(&self, snap_ts: Ts) -> Result<Vec<TableInfo>, SchemaStoreError> {
        Ok(self.tables_at(snap_ts))
    }
    /// DDLs with `from < commit_ts <= to` as the table trigger dispatcher would see them.
    fn ddl_history(&self, from: Ts, to: Ts) -> Vec<DdlEvent>;
    /// Current number of regions of a table (region count refresher).
    fn region_count(&self, table_id: TableId) -> u64;
    /// Regions of one span (`LoadRegionsInKeyRange` as the refresher counts them).
    ///
    /// Simplification: a table's regions are spread evenly over its key space, so a
    /// span holds its key-width share of the table's regions, rounded to the nearest
    /// integer and at least one. PD would also count a region that straddles a span's
    /// edge; the model's span cuts (`split_span_evenly`) are not aligned on region
    /// boundaries, so counting straddlers would add one region to nearly every piece.
    /// The shares of a partition add up to (about) the table's count.
    fn span_region_count(&self, span: &TableSpan) -> u64 {
        let regions = self.region_count(span.table_id);
        if span.is_full() {
            return regions;
        }
        let width = span.end.saturating_sub(span.start) as u128;
        let share = (regions as u128 * width + TABLE_KEY_END as u128 / 2) / TABLE_KEY_END as u128;
        (share as u64).clamp(1, regions.max(1))
    }
}

/// The write traffic of the upstream as a dispatcher's `TableProgress` would measure it
/// (`GetEventSizePerSecond`: bytes since the last query over the time since then).
///
/// Simplified: TiCDC counts the bytes a dispatcher *flushed*; the model reports the
/// bytes the upstream *wrote* to the span in the window, so a lagging or blocked
/// dispatcher reports its span's write rate rather than its flush rate. A table's bytes
/// are spread evenly over its key space (like its regions), so a span carries its
/// key-width share ([`span_share`]).
pub trait TrafficView {
    /// Bytes written to `span` with `from_ms < t <= to_ms` (simulated time).
    fn span_write_bytes(&self, span: &TableSpan, from_ms: u64, to_ms: u64) -> u64;
}

/// No write traffic: every dispatcher reports TiCDC's idle 1 byte/s.
pub struct NoTraffic;
impl TrafficView for NoTraffic {
    fn span_write_bytes(&self, _: &TableSpan, _: u64, _: u64) -> u64 {
        0
    }
}

/// A span's key-width share of a table-wide quantity (rounded down; the full span
/// gets all of it).
pub fn span_share(span: &TableSpan, total: u64) -> u64 {
    if span.is_full() {
        return total;
    }
    let width = span.end.saturating_sub(span.start) as u128;
    (total as u128 * width / TABLE_KEY_END as u128) as u64
}

/// `GetEventSizePerSecond` over a window of `elapsed_ms`: 1 (idle) when nothing was
/// written, else bytes per second (at least 1).
pub fn event_size_per_second(bytes: u64, elapsed_ms: u64) -> u64 {
    if bytes == 0 {
        return 1;
    }
    ((bytes as u128 * 1000 / elapsed_ms.max(1) as u128) as u64).max(1)
}
