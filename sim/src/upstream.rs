//! The upstream TiDB cluster: a TSO, tables with key ranges and region counts, a
//! multi-version schema store with DDL history, committed row changes, and the event
//! service that serves a dispatcher its span's changes after its start ts in
//! commit-ts order plus resolved-ts progress, and (with syncpoints on) the syncpoint
//! events at every multiple of the interval.

use core_sched::messages::{InfluenceType, InfluencedTables, SchemaIdChange, TableRef};
use core_sched::types::*;
use core_sched::upstream::*;
use std::collections::BTreeMap;

#[cfg(test)]
mod conformance;
mod partition;
pub use partition::PTable;

/// A DDL the upstream refuses, as TiDB would.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UpstreamError {
    #[error("database '{0}' already exists")]
    DatabaseExists(String),
    #[error("database '{0}' does not exist")]
    NoSuchDatabase(String),
    #[error("table '{0}.{1}' already exists")]
    TableExists(String, String),
    #[error("table '{0}' does not exist")]
    NoSuchTable(String),
    #[error("no dropped table '{0}.{1}' to recover")]
    NothingToRecover(String, String),
    #[error("{0}")]
    Invalid(String),
}

#[derive(Clone, Debug)]
pub struct UTable {
    pub id: TableId,
    pub name: String,
    pub schema_id: SchemaId,
    pub schema_name: String,
    pub regions: u64,
    pub created_ts: Ts,
    pub dropped_ts: Option<Ts>,
    /// Current rows (key -> value).
    pub rows: BTreeMap<u64, u64>,
    pub next_key: u64,
    /// Explicit write rate (bytes per second) from the given simulated time on, in time
    /// order (`[[tables]] write-bytes-per-sec`, `set_write_rate`); a step function.
    pub write_rate: Vec<(u64, u64)>,
    /// Bytes one row change adds to the traffic (`row-bytes`; 0: rows add none).
    pub row_bytes: u64,
    /// RENAMEs across databases, in ts order: (ts, the database before it).
    pub moves: Vec<(Ts, SchemaId)>,
    /// Every name change (RENAME, EXCHANGE PARTITION), in ts order: (ts, the database and
    /// table names before it).
    pub renames: Vec<(Ts, String, String)>,
    /// Earlier lives of a recovered table: (created, dropped).
    pub past_lives: Vec<(Ts, Ts)>,
    /// The partitioned table this physical table is a partition of (its name is the
    /// partitioned table's).
    pub logical: Option<TableId>,
}

impl UTable {
    /// The database the table belonged to at `ts`.
    pub fn schema_at(&self, ts: Ts) -> SchemaId {
        self.moves.iter().find(|(at, _)| *at > ts).map(|(_, old)| *old).unwrap_or(self.schema_id)
    }

    /// The table's database and table names at `ts` (the schema store's table info as of
    /// that ts, `getTableInfo`).
    pub fn names_at(&self, ts: Ts) -> (&str, &str) {
        match self.renames.iter().find(|(at, _, _)| *at > ts) {
            Some((_, schema, name)) => (schema, name),
            None => (&self.schema_name, &self.name),
        }
    }

    /// Whether the table existed at `ts` (created at or before, dropped after), in its
    /// current life or an earlier one (RECOVER TABLE).
    pub fn alive_at(&self, ts: Ts) -> bool {
        self.lives().any(|(c, d)| c <= ts && d.map(|d| d > ts).unwrap_or(true))
    }

    /// Every life of the table: (created, dropped), the current one last.
    fn lives(&self) -> impl Iterator<Item = (Ts, Option<Ts>)> + '_ {
        self.past_lives.iter().map(|(c, d)| (*c, Some(*d))).chain(std::iter::once((self.created_ts, self.dropped_ts)))
    }

    /// A live table that is not a partition of a partitioned table (scenarios and the
    /// workload name and pick only these).
    pub fn is_live_normal(&self) -> bool {
        self.dropped_ts.is_none() && self.logical.is_none()
    }

    /// Whether a DDL at `ts` sees the table (created before `ts`, dropped at or after it),
    /// in its current life or an earlier one: the tables a DB/All DDL's `ddl_ts` rows name,
    /// as the trigger's table schema store held them at `ts`.
    pub fn seen_by_ddl_at(&self, ts: Ts) -> bool {
        self.lives().any(|(c, d)| c < ts && d.map(|d| d >= ts).unwrap_or(true))
    }

    /// The first drop of the table at or after `ts` (its current life's or an earlier one's).
    pub fn drop_after(&self, ts: Ts) -> Option<Ts> {
        self.past_lives.iter().map(|(_, d)| *d).chain(self.dropped_ts).filter(|d| *d >= ts).min()
    }

    fn new(id: TableId, schema_id: SchemaId, schema: &str, name: &str, regions: u64, ts: Ts) -> Self {
        UTable {
            id,
            name: name.into(),
            schema_id,
            schema_name: schema.into(),
            regions: regions.max(1),
            created_ts: ts,
            dropped_ts: None,
            rows: BTreeMap::new(),
            next_key: 1,
            write_rate: Vec::new(),
            row_bytes: 0,
            moves: Vec::new(),
            renames: Vec::new(),
            past_lives: Vec::new(),
            logical: None,
        }
    }
}

/// The index of the first of `items` (in commit-ts order, `ts`) committed after `from`.
/// Most event polls come after the last one: no search then.
fn first_after<T>(items: &[T], from: Ts, ts: impl Fn(&T) -> Ts) -> usize {
    match items.last() {
        Some(last) if ts(last) > from => items.partition_point(|x| ts(x) <= from),
        _ => items.len(),
    }
}

#[derive(Debug, Default)]
pub struct Upstream {
    pub tables: BTreeMap<TableId, UTable>,
    pub schemas: BTreeMap<String, SchemaId>,
    pub changes: BTreeMap<TableId, Vec<RowChange>>,
    /// In commit-ts order (each DDL takes the next TSO); `events_for` relies on it.
    pub ddls: Vec<DdlEvent>,
    /// Partitioned tables by logical ID: the logical table has no data and no span, each
    /// partition is a physical table in `tables`.
    pub partitioned: BTreeMap<TableId, PTable>,
    last_ts: Ts,
    /// The first TSO handed out: the schema store's GC ts in this model (it keeps every
    /// version since the cluster started).
    first_ts: Ts,
    next_table_id: TableId,
    next_schema_id: SchemaId,
}

impl Upstream {
    pub fn new() -> Self {
        Upstream { next_table_id: 100, next_schema_id: 2, ..Default::default() }
    }

    /// The DDL committed at `ts`, if any (a binary search: `ddls` is in commit-ts order).
    pub fn ddl_at(&self, ts: Ts) -> Option<&DdlEvent> {
        let i = self.ddls.partition_point(|d| d.commit_ts < ts);
        self.ddls.get(i).filter(|d| d.commit_ts == ts)
    }

    /// PD TSO: strictly increasing, physical part from simulated time.
    pub fn tso(&mut self, now_ms: u64) -> Ts {
        let t = ts_from_ms(now_ms).max(self.last_ts + 1);
        self.last_ts = t;
        if self.first_ts == 0 {
            self.first_ts = t;
        }
        t
    }

    /// Everything at or below this ts is committed and visible to the event service.
    pub fn resolved_ts(&self, now_ms: u64) -> Ts {
        ts_from_ms(now_ms).saturating_sub(1).max(self.last_ts)
    }

    /// The live normal tables (no partitions), in ID order: what the workload picks from.
    pub fn live_normal_tables(&self) -> Vec<TableId> {
        self.tables.values().filter(|t| t.is_live_normal()).map(|t| t.id).collect()
    }

    pub fn table_by_name(&self, name: &str) -> Option<&UTable> {
        self.tables.values().filter(|t| t.name == name).max_by_key(|t| t.created_ts).filter(|t| t.dropped_ts.is_none())
    }

    pub fn table_id_any(&self, name: &str) -> Option<TableId> {
        self.tables.values().filter(|t| t.name == name).max_by_key(|t| t.created_ts).map(|t| t.id)
    }

    /// The schema's ID; a database not created by [`Self::create_database`] (the default
    /// `test`, those of `[[tables]]`) exists from the start and gets its ID here.
    fn schema_id(&mut self, schema: &str) -> SchemaId {
        if let Some(s) = self.schemas.get(schema) {
            return *s;
        }
        let id = self.next_schema_id;
        self.next_schema_id += 1;
        self.schemas.insert(schema.to_string(), id);
        id
    }

    /// PD merged regions of a table: its count drops to `regions` (at least one) unless
    /// it already has fewer.
    pub fn merge_regions(&mut self, id: TableId, regions: u64) {
        if let Some(t) = self.tables.get_mut(&id) {
            t.regions = t.regions.min(regions.max(1));
        }
    }

    /// Set a table's write traffic from `now_ms` on: an explicit rate in bytes per second
    /// and, if given, the bytes each row change adds.
    pub fn set_write_rate(&mut self, now_ms: u64, id: TableId, bytes_per_sec: u64, row_bytes: Option<u64>) {
        if let Some(t) = self.tables.get_mut(&id) {
            t.write_rate.retain(|(at, _)| *at < now_ms);
            t.write_rate.push((now_ms, bytes_per_sec));
            if let Some(b) = row_bytes {
                t.row_bytes = b;
            }
        }
    }

    /// CREATE DATABASE (`buildDDLEventForCreateSchema`): a new schema ID (TiDB never
    /// reuses one, also not for a name dropped before); a DDL only the table trigger sees
    /// (`updateDDLHistoryForTableTriggerOnlyDDL`), blocking the DDL span alone and adding
    /// or dropping nothing, so the trigger writes it without reporting it. An existing
    /// name is an error (TiDB refuses it too).
    pub fn create_database(&mut self, now_ms: u64, name: &str) -> Result<SchemaId, UpstreamError> {
        if self.schemas.contains_key(name) {
            return Err(UpstreamError::DatabaseExists(name.to_string()));
        }
        let sid = self.schema_id(name);
        let ts = self.tso(now_ms);
        let query = format!("CREATE DATABASE {}", name);
        self.ddls.push(Self::trigger_ddl(ts, DdlKind::CreateDatabase, sid, name, 0, String::new(), query, &[]));
        Ok(sid)
    }

    /// DROP DATABASE (`buildDDLEventForDropSchema`): every live table of the schema is
    /// dropped at the DDL's ts (DML to them stops); one blocking DDL with `InfluenceType_DB`
    /// for the schema as blocked and dropped tables, seen by the trigger and by every
    /// table of the schema (`updateDDLHistoryForSchemaDDL`). The name is free again; a
    /// database created under it later gets a new ID. Returns the dropped tables.
    pub fn drop_database(&mut self, now_ms: u64, name: &str) -> Result<Vec<TableId>, UpstreamError> {
        let Some(sid) = self.schemas.remove(name) else { return Err(UpstreamError::NoSuchDatabase(name.to_string())) };
        let ts = self.tso(now_ms);
        let mut dropped = Vec::new();
        for t in self.tables.values_mut().filter(|t| t.schema_id == sid && t.dropped_ts.is_none()) {
            t.dropped_ts = Some(ts);
            dropped.push(t.id);
        }
        // Its partitioned tables go too (`updateSchemaMetadataForDropSchema` clears their
        // partition map, persist_storage_ddl_handlers.go:1462-1469): no partition DDL after.
        for p in self.partitioned.values_mut().filter(|p| p.schema_id == sid && p.dropped_ts.is_none()) {
            p.dropped_ts = Some(ts);
        }
        let db = InfluencedTables { influence_type: InfluenceType::Db, table_ids: vec![], schema_id: sid };
        self.ddls.push(DdlEvent {
            commit_ts: ts,
            kind: DdlKind::DropDatabase,
            schema_id: sid,
            schema_name: name.into(),
            table_id: 0,
            table_name: String::new(),
            query: format!("DROP DATABASE {}", name),
            blocked_tables: db.clone(),
            need_dropped_tables: Some(db),
            need_added_tables: vec![],
            updated_schemas: vec![],
        });
        Ok(dropped)
    }

    /// Whether a database of this name exists now.
    pub fn database_exists(&self, name: &str) -> bool {
        self.schemas.contains_key(name)
    }

    /// A DDL that only the table trigger blocks on (the DDL span), adding `added` in the
    /// schema `sid`: CREATE DATABASE (nothing added), CREATE TABLE(S), RECOVER TABLE and
    /// the CREATE of a partitioned table, as the schema store builds them.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn trigger_ddl(
        commit_ts: Ts,
        kind: DdlKind,
        sid: SchemaId,
        schema: &str,
        table_id: TableId,
        table_name: String,
        query: String,
        added: &[TableId],
    ) -> DdlEvent {
        DdlEvent {
            commit_ts,
            kind,
            schema_id: sid,
            schema_name: schema.into(),
            table_id,
            table_name,
            query,
            blocked_tables: InfluencedTables {
                influence_type: InfluenceType::Normal,
                table_ids: vec![DDL_SPAN_TABLE_ID],
                schema_id: sid,
            },
            need_dropped_tables: None,
            need_added_tables: added
                .iter()
                .map(|t| TableRef { table_id: *t, schema_id: sid, splitable: true })
                .collect(),
            updated_schemas: vec![],
        }
    }

    pub fn create_table(&mut self, now_ms: u64, schema: &str, name: &str, regions: u64) -> TableId {
        let sid = self.schema_id(schema);
        let id = self.next_table_id;
        self.next_table_id += 2;
        let ts = self.tso(now_ms);
        self.tables.insert(id, UTable::new(id, sid, schema, name, regions, ts));
        let query = format!("CREATE TABLE {}.{}", schema, name);
        self.ddls.push(Self::trigger_ddl(ts, DdlKind::CreateTable, sid, schema, id, name.into(), query, &[id]));
        id
    }

    pub fn drop_table(&mut self, now_ms: u64, id: TableId) {
        let ts = self.tso(now_ms);
        if self.is_partitioned(id) {
            return self.drop_partitioned_table(ts, id);
        }
        let t = self.tables.get_mut(&id).unwrap();
        t.dropped_ts = Some(ts);
        let (sid, sname, name) = (t.schema_id, t.schema_name.clone(), t.name.clone());
        self.ddls.push(DdlEvent {
            commit_ts: ts,
            kind: DdlKind::DropTable,
            schema_id: sid,
            schema_name: sname.clone(),
            table_id: id,
            table_name: name.clone(),
            query: format!("DROP TABLE {}.{}", sname, name),
            blocked_tables: InfluencedTables {
                influence_type: InfluenceType::Normal,
                table_ids: vec![id, DDL_SPAN_TABLE_ID],
                schema_id: sid,
            },
            need_dropped_tables: Some(InfluencedTables {
                influence_type: InfluenceType::Normal,
                table_ids: vec![id],
                schema_id: sid,
            }),
            need_added_tables: vec![],
            updated_schemas: vec![],
        });
    }

    /// TRUNCATE TABLE: TiDB gives the table a new ID. One blocking DDL (the old table and
    /// the DDL span) that drops the old ID and adds the new one; the trigger writes it and
    /// the maintainer swaps the tasks when it reports DONE. Returns the new table ID.
    pub fn truncate_table(&mut self, now_ms: u64, id: TableId) -> TableId {
        let ts = self.tso(now_ms);
        if self.is_partitioned(id) {
            return self.truncate_partitioned_table(ts, id);
        }
        let new_id = self.next_table_id;
        self.next_table_id += 2;
        let old = self.tables.get_mut(&id).unwrap();
        old.dropped_ts = Some(ts);
        let (sid, sname, name, regions) = (old.schema_id, old.schema_name.clone(), old.name.clone(), old.regions);
        // The workload goes on writing to the table under its new ID.
        let rate = old.write_rate.last().map(|r| r.1).unwrap_or(0);
        let write_rate = if rate > 0 { vec![(now_ms, rate)] } else { Vec::new() };
        let row_bytes = old.row_bytes;
        let mut t = UTable::new(new_id, sid, &sname, &name, regions, ts);
        t.write_rate = write_rate;
        t.row_bytes = row_bytes;
        self.tables.insert(new_id, t);
        self.ddls.push(DdlEvent {
            commit_ts: ts,
            kind: DdlKind::TruncateTable,
            schema_id: sid,
            schema_name: sname.clone(),
            table_id: new_id,
            table_name: name.clone(),
            query: format!("TRUNCATE TABLE {}.{}", sname, name),
            blocked_tables: InfluencedTables {
                influence_type: InfluenceType::Normal,
                table_ids: vec![id, DDL_SPAN_TABLE_ID],
                schema_id: sid,
            },
            need_dropped_tables: Some(InfluencedTables {
                influence_type: InfluenceType::Normal,
                table_ids: vec![id],
                schema_id: sid,
            }),
            need_added_tables: vec![TableRef { table_id: new_id, schema_id: sid, splitable: true }],
            updated_schemas: vec![],
        });
        new_id
    }

    pub fn add_column(&mut self, now_ms: u64, id: TableId) {
        let ts = self.tso(now_ms);
        // A partitioned table's ALTER blocks every partition
        // (`buildDDLEventForNormalDDLOnSingleTable`, persist_storage_ddl_handlers.go:2336-2345).
        let blocked = self.physical_tables(id);
        let (sid, sname, name) = match self.partitioned.get(&id) {
            Some(p) => (p.schema_id, p.schema_name.clone(), p.name.clone()),
            None => {
                let t = &self.tables[&id];
                (t.schema_id, t.schema_name.clone(), t.name.clone())
            }
        };
        self.ddls.push(DdlEvent {
            commit_ts: ts,
            kind: DdlKind::AddColumn,
            schema_id: sid,
            schema_name: sname.clone(),
            table_id: id,
            table_name: name.clone(),
            query: format!("ALTER TABLE {}.{} ADD COLUMN c{}", sname, name, ts),
            blocked_tables: InfluencedTables {
                influence_type: InfluenceType::Normal,
                table_ids: blocked,
                schema_id: sid,
            },
            need_dropped_tables: None,
            need_added_tables: vec![],
            updated_schemas: vec![],
        });
    }

    /// A live table of this name in database `schema_id`.
    fn live_in(&self, schema_id: SchemaId, name: &str) -> Option<TableId> {
        let p =
            self.partitioned.values().find(|p| p.schema_id == schema_id && p.name == name && p.dropped_ts.is_none());
        p.map(|p| p.id).or_else(|| {
            self.tables
                .values()
                .find(|t| t.schema_id == schema_id && t.name == name && t.is_live_normal())
                .map(|t| t.id)
        })
    }

    fn existing_schema(&self, name: &str) -> Result<SchemaId, UpstreamError> {
        self.schemas.get(name).copied().ok_or_else(|| UpstreamError::NoSuchDatabase(name.to_string()))
    }

    /// Move a live table to `schema`.`name` at `ts` (its ID stays; a partitioned table's
    /// partitions move with it); the schema changes for `UpdatedSchemas`, one per
    /// physical table (persist_storage_ddl_handlers.go:2480-2489).
    fn move_table(&mut self, ts: Ts, id: TableId, sid: SchemaId, schema: &str, name: &str) -> Vec<SchemaIdChange> {
        if let Some(p) = self.partitioned.get_mut(&id) {
            p.schema_id = sid;
            p.schema_name = schema.into();
            p.name = name.into();
        }
        let mut changes = Vec::new();
        for pid in self.physical_tables(id) {
            let t = self.tables.get_mut(&pid).expect("a live table");
            let old = t.schema_id;
            if old != sid {
                t.moves.push((ts, old));
                changes.push(SchemaIdChange { table_id: pid, old_schema_id: old, new_schema_id: sid });
            }
            t.renames.push((ts, std::mem::take(&mut t.schema_name), std::mem::take(&mut t.name)));
            t.schema_id = sid;
            t.schema_name = schema.into();
            t.name = name.into();
        }
        changes
    }

    /// The database and name of a live table (partitioned or not).
    fn names_of(&self, id: TableId) -> (String, String) {
        match self.partitioned.get(&id) {
            Some(p) => (p.schema_name.clone(), p.name.clone()),
            None => (self.tables[&id].schema_name.clone(), self.tables[&id].name.clone()),
        }
    }

    /// RENAME TABLE (`buildDDLEventForRenameTable`, persist_storage_ddl_handlers.go:2437-2600,
    /// no filter): the table keeps its ID; the DDL blocks the table and the DDL span
    /// (:2530-2534), drops and adds nothing, and names the schema move in
    /// `UpdatedSchemas` when the database changes (:2538-2546). Both the trigger and the
    /// table's dispatchers get it (`updateDDLHistoryForAddDropTable`, :1243-1263).
    pub fn rename_table(&mut self, now_ms: u64, id: TableId, schema: &str, name: &str) -> Result<(), UpstreamError> {
        let sid = self.existing_schema(schema)?;
        if self.live_in(sid, name).is_some() {
            return Err(UpstreamError::TableExists(schema.into(), name.into()));
        }
        let (osname, oname) = self.names_of(id);
        let ts = self.tso(now_ms);
        let changes = self.move_table(ts, id, sid, schema, name);
        let mut blocked = self.physical_tables(id);
        blocked.push(DDL_SPAN_TABLE_ID);
        self.ddls.push(DdlEvent {
            commit_ts: ts,
            kind: DdlKind::RenameTable,
            schema_id: sid,
            schema_name: schema.into(),
            table_id: id,
            table_name: name.into(),
            query: format!("RENAME TABLE {}.{} TO {}.{}", osname, oname, schema, name),
            blocked_tables: InfluencedTables {
                influence_type: InfluenceType::Normal,
                table_ids: blocked,
                schema_id: sid,
            },
            need_dropped_tables: None,
            need_added_tables: vec![],
            updated_schemas: changes,
        });
        Ok(())
    }

    /// RENAME TABLE a TO b, c TO d (`buildDDLEventForRenameTables`,
    /// persist_storage_ddl_handlers.go:2875-3063, no filter): one DDL blocking the DDL
    /// span and then every renamed table (:2880-2883, 3000-3002), with an
    /// `UpdatedSchemas` entry per table that changes database (:3004-3010).
    pub fn rename_tables(&mut self, now_ms: u64, renames: &[(TableId, String, String)]) -> Result<(), UpstreamError> {
        if renames.is_empty() {
            return Err(UpstreamError::Invalid("RENAME TABLES needs at least one table".into()));
        }
        let mut targets = std::collections::BTreeSet::new();
        let mut sids = Vec::new();
        for (id, schema, name) in renames {
            let sid = self.existing_schema(schema)?;
            let taken = self.live_in(sid, name).filter(|t| !renames.iter().any(|(r, _, _)| r == t));
            if taken.is_some() || !targets.insert((sid, name.clone())) {
                return Err(UpstreamError::TableExists(schema.clone(), name.clone()));
            }
            if renames.iter().filter(|(r, _, _)| r == id).count() > 1 {
                return Err(UpstreamError::Invalid(format!("table {} is renamed twice in one RENAME TABLES", id)));
            }
            sids.push(sid);
        }
        let ts = self.tso(now_ms);
        let mut blocked = vec![DDL_SPAN_TABLE_ID];
        let mut changes = Vec::new();
        let mut query = String::new();
        for ((id, schema, name), sid) in renames.iter().zip(sids) {
            let (os, on) = self.names_of(*id);
            query.push_str(&format!("RENAME TABLE {}.{} TO {}.{};", os, on, schema, name));
            changes.extend(self.move_table(ts, *id, sid, schema, name));
            blocked.extend(self.physical_tables(*id));
        }
        let (id0, schema0, name0) = &renames[0];
        let sid0 = self.schemas[schema0];
        self.ddls.push(DdlEvent {
            commit_ts: ts,
            kind: DdlKind::RenameTables,
            schema_id: sid0,
            schema_name: schema0.clone(),
            table_id: *id0,
            table_name: name0.clone(),
            query,
            blocked_tables: InfluencedTables {
                influence_type: InfluenceType::Normal,
                table_ids: blocked,
                schema_id: 0,
            },
            need_dropped_tables: None,
            need_added_tables: vec![],
            updated_schemas: changes,
        });
        Ok(())
    }

    /// RECOVER TABLE (`ActionRecoverTable` is built like CREATE TABLE,
    /// `buildDDLEventForNewTableDDL`, persist_storage_ddl_handlers.go:2172-2249): the most
    /// recently dropped table of that name in the database comes back under its old ID
    /// with its rows; the DDL blocks the DDL span only and adds the table. TiDB refuses
    /// when the name is taken or the database was dropped since.
    pub fn recover_table(&mut self, now_ms: u64, schema: &str, name: &str) -> Result<TableId, UpstreamError> {
        let sid = self.existing_schema(schema)?;
        if self.live_in(sid, name).is_some() {
            return Err(UpstreamError::TableExists(schema.into(), name.into()));
        }
        let Some(id) = self
            .tables
            .values()
            .filter(|t| t.schema_id == sid && t.name == name && t.dropped_ts.is_some() && t.logical.is_none())
            .max_by_key(|t| t.dropped_ts)
            .map(|t| t.id)
        else {
            return Err(UpstreamError::NothingToRecover(schema.into(), name.into()));
        };
        let ts = self.tso(now_ms);
        let t = self.tables.get_mut(&id).unwrap();
        let dropped = t.dropped_ts.take().unwrap();
        t.past_lives.push((t.created_ts, dropped));
        t.created_ts = ts;
        t.write_rate.clear();
        let query = format!("RECOVER TABLE {}.{}", schema, name);
        self.ddls.push(Self::trigger_ddl(ts, DdlKind::RecoverTable, sid, schema, id, name.into(), query, &[id]));
        Ok(id)
    }

    /// CREATE TABLES, a batch in one DDL (`buildDDLEventForCreateTables`,
    /// persist_storage_ddl_handlers.go:3065-3159): it blocks the DDL span only and adds
    /// every table; only the trigger gets it (`updateDDLHistoryForCreateTables`).
    pub fn create_tables(
        &mut self,
        now_ms: u64,
        schema: &str,
        names: &[String],
        regions: u64,
    ) -> Result<Vec<TableId>, UpstreamError> {
        let sid = self.schema_id(schema);
        let mut seen = std::collections::BTreeSet::new();
        for n in names {
            if self.live_in(sid, n).is_some() || !seen.insert(n) {
                return Err(UpstreamError::TableExists(schema.into(), n.clone()));
            }
        }
        if names.is_empty() {
            return Err(UpstreamError::Invalid("CREATE TABLES needs at least one table".into()));
        }
        let ts = self.tso(now_ms);
        let mut ids = Vec::new();
        for n in names {
            let id = self.next_table_id;
            self.next_table_id += 2;
            self.tables.insert(id, UTable::new(id, sid, schema, n, regions, ts));
            ids.push(id);
        }
        let query = names.iter().map(|n| format!("CREATE TABLE {}.{};", schema, n)).collect();
        self.ddls.push(Self::trigger_ddl(
            ts,
            DdlKind::CreateTables,
            sid,
            schema,
            ids[0],
            names[0].clone(),
            query,
            &ids,
        ));
        Ok(ids)
    }

    /// ALTER DATABASE ... CHARACTER SET (`buildDDLEventForModifySchemaCharsetAndCollate`,
    /// persist_storage_ddl_handlers.go:2147-2162): a DB-level block of the database,
    /// dropping and adding nothing; the trigger and every table of the database get it
    /// (`updateDDLHistoryForSchemaDDL`, :1229-1241).
    pub fn alter_database(&mut self, now_ms: u64, schema: &str) -> Result<(), UpstreamError> {
        let sid = self.existing_schema(schema)?;
        let ts = self.tso(now_ms);
        self.ddls.push(DdlEvent {
            commit_ts: ts,
            kind: DdlKind::AlterDatabase,
            schema_id: sid,
            schema_name: schema.into(),
            table_id: 0,
            table_name: String::new(),
            query: format!("ALTER DATABASE {} CHARACTER SET utf8mb4 /* {} */", schema, ts),
            blocked_tables: InfluencedTables { influence_type: InfluenceType::Db, table_ids: vec![], schema_id: sid },
            need_dropped_tables: None,
            need_added_tables: vec![],
            updated_schemas: vec![],
        });
        Ok(())
    }

    /// The tables of database `schema_id` at `ts` (RENAMEs move tables between databases).
    pub fn tables_of_schema_at(&self, schema_id: SchemaId, ts: Ts) -> impl Iterator<Item = &UTable> {
        self.tables.values().filter(move |t| t.schema_at(ts) == schema_id)
    }

    /// Insert `n` rows in one transaction per row; keys spread over the key space.
    pub fn dml(&mut self, now_ms: u64, id: TableId, n: u64, op: RowOp, rng: &mut dyn rand::RngCore) -> usize {
        if self.is_partitioned(id) {
            return self.partitioned_dml(now_ms, id, n, op, rng);
        }
        let mut done = 0;
        for _ in 0..n {
            let ts = self.tso(now_ms);
            let t = self.tables.get_mut(&id).unwrap();
            let (key, value) = match op {
                RowOp::Insert => {
                    // Spread keys over regions: scatter the sequence across the key space.
                    let k = (t.next_key.wrapping_mul(0x9E37_79B9) % (TABLE_KEY_END - 1)) + 1;
                    t.next_key += 1;
                    (k, rng.next_u64() % 1_000_000)
                }
                RowOp::Update | RowOp::Delete => {
                    if t.rows.is_empty() {
                        continue;
                    }
                    let idx = (rng.next_u64() % t.rows.len() as u64) as usize;
                    (*t.rows.keys().nth(idx).unwrap(), rng.next_u64() % 1_000_000)
                }
            };
            match op {
                RowOp::Delete => {
                    t.rows.remove(&key);
                }
                _ => {
                    t.rows.insert(key, value);
                }
            }
            self.changes.entry(id).or_default().push(RowChange { table_id: id, key, commit_ts: ts, op, value });
            done += 1;
        }
        done
    }

    /// Events for a dispatcher in `(from, to]`, and with syncpoints every
    /// `sync_point_interval_ms` the syncpoints in `[from, to)` (`sync_points_in`): at one
    /// ts, DDL first, then DML, then the syncpoint (`emitSyncPointEventIfNeeded` sends a
    /// syncpoint before the first event above it).
    pub fn events_for(
        &self,
        span: &TableSpan,
        is_trigger: bool,
        from: Ts,
        to: Ts,
        sync_point_interval_ms: Option<u64>,
    ) -> Vec<UpstreamEvent> {
        // `ddls` is in commit-ts order (every DDL takes the next TSO).
        let first = first_after(&self.ddls, from, |d| d.commit_ts);
        let relevant = |d: &&DdlEvent| {
            // The table trigger gets the DDLs that block the DDL span (DB/All, or table 0
            // listed: CREATE/DROP/TRUNCATE...); a single-table ALTER goes to that table only.
            if is_trigger {
                d.blocked_tables.influence_type != InfluenceType::Normal
                    || d.blocked_tables.table_ids.contains(&DDL_SPAN_TABLE_ID)
                    || d.need_dropped_tables.is_some()
                    || !d.need_added_tables.is_empty()
            } else {
                match d.blocked_tables.influence_type {
                    InfluenceType::All => true,
                    InfluenceType::Db => self
                        .tables
                        .get(&span.table_id)
                        .map(|t| t.schema_at(d.commit_ts) == d.blocked_tables.schema_id)
                        .unwrap_or(false),
                    InfluenceType::Normal => d.blocked_tables.table_ids.contains(&span.table_id),
                }
            }
        };
        let mut ddls = self.ddls[first..].iter().take_while(|d| d.commit_ts <= to).filter(relevant).peekable();
        // A table's changes are in commit-ts order too.
        let changes = self.changes.get(&span.table_id).filter(|_| !is_trigger).map(|ch| {
            let start = first_after(ch, from, |c| c.commit_ts);
            ch[start..].iter().take_while(|c| c.commit_ts <= to).filter(|c| span.contains_key(c.key))
        });
        let mut dmls = changes.into_iter().flatten().peekable();
        let sync_points = sync_point_interval_ms.map(|iv| core_sched::syncpoint::sync_points_in(from, to, iv));
        let mut sync_points = sync_points.unwrap_or_default().into_iter().peekable();
        // Merged by (commit ts, DDL before DML before syncpoint), each source in its order.
        let mut evs = Vec::new();
        loop {
            let heads = [
                ddls.peek().map(|d| (d.commit_ts, 0)),
                dmls.peek().map(|c| (c.commit_ts, 1)),
                sync_points.peek().map(|&s| (s, 2)),
            ];
            match heads.into_iter().flatten().min() {
                None => return evs,
                Some((_, 0)) => evs.extend(ddls.next().map(|d| UpstreamEvent::Ddl(d.clone()))),
                Some((_, 1)) => evs.extend(dmls.next().map(|c| UpstreamEvent::Dml(c.clone()))),
                Some(_) => evs.extend(sync_points.next().map(UpstreamEvent::SyncPoint)),
            }
        }
    }

    /// Whether the table exists as of `ts` (created at or before, dropped after).
    pub fn table_exists_at(&self, t: TableId, ts: Ts) -> bool {
        self.tables.get(&t).map(|t| t.alive_at(ts)).unwrap_or(false)
    }

    /// The table's rows as of `ts` (every change at or below it applied).
    pub fn rows_at(&self, t: TableId, ts: Ts) -> BTreeMap<u64, u64> {
        let changes =
            self.changes.get(&t).map(|c| c.iter().take_while(|c| c.commit_ts <= ts).collect()).unwrap_or_default();
        crate::storage::apply_rows(changes)
    }

    pub fn info(&self, t: &UTable) -> TableInfo {
        TableInfo {
            table_id: t.id,
            schema_id: t.schema_id,
            schema_name: t.schema_name.clone(),
            name: t.name.clone(),
            splitable: true,
        }
    }
}

impl SchemaView for Upstream {
    fn tables_at(&self, ts: Ts) -> Vec<TableInfo> {
        self.tables
            .values()
            .filter(|t| t.alive_at(ts))
            .map(|t| {
                let (schema, name) = t.names_at(ts);
                TableInfo { schema_id: t.schema_at(ts), schema_name: schema.into(), name: name.into(), ..self.info(t) }
            })
            .collect()
    }
    fn ddl_history(&self, from: Ts, to: Ts) -> Vec<DdlEvent> {
        self.ddls.iter().filter(|d| d.commit_ts > from && d.commit_ts <= to).cloned().collect()
    }
    fn region_count(&self, t: TableId) -> u64 {
        self.tables.get(&t).map(|t| t.regions).unwrap_or(1)
    }
}

/// Write traffic: a span gets its key-width share of the table's explicit rate
/// integrated over the window, plus `row-bytes` for each row change committed in the
/// window whose key lies in the span (the rows the span's dispatcher receives; keys are
/// scattered over the key space, see [`Upstream::dml`]).
impl TrafficView for Upstream {
    fn span_write_bytes(&self, span: &TableSpan, from_ms: u64, to_ms: u64) -> u64 {
        let Some(t) = self.tables.get(&span.table_id) else { return 0 };
        if to_ms <= from_ms {
            return 0;
        }
        // Integral of the step function over (from, to], in bytes (rate * ms / 1000).
        let mut byte_ms: u128 = 0;
        for (i, (at, rate)) in t.write_rate.iter().enumerate() {
            let end = t.write_rate.get(i + 1).map(|x| x.0).unwrap_or(u64::MAX);
            let (a, b) = ((*at).max(from_ms), end.min(to_ms));
            if b > a {
                byte_ms += *rate as u128 * (b - a) as u128;
            }
        }
        let mut bytes = span_share(span, (byte_ms / 1000) as u64);
        if t.row_bytes > 0 {
            if let Some(ch) = self.changes.get(&span.table_id) {
                let (lo, hi) = (ts_from_ms(from_ms), ts_from_ms(to_ms));
                let start = ch.partition_point(|c| c.commit_ts <= lo);
                let n =
                    ch[start..].iter().take_while(|c| c.commit_ts <= hi).filter(|c| span.contains_key(c.key)).count()
                        as u64;
                bytes += n * t.row_bytes;
            }
        }
        bytes
    }
}

/// One capture's schema store: the upstream's schema seen through that capture's
/// failpoints. Under `getAllPhysicalTablesGCFastFail` the table load at bootstrap reads
/// snapshot 0, below the store's GC ts, and fails with `ErrSnapshotLostByGC`.
pub struct NodeSchemaStore<'a> {
    pub up: &'a Upstream,
    pub gc_fast_fail: bool,
}

impl SchemaView for NodeSchemaStore<'_> {
    fn tables_at(&self, ts: Ts) -> Vec<TableInfo> {
        self.up.tables_at(ts)
    }
    fn get_all_physical_tables(&self, snap_ts: Ts) -> Result<Vec<TableInfo>, SchemaStoreError> {
        let snap_ts = if self.gc_fast_fail { 0 } else { snap_ts };
        let gc_ts = self.up.first_ts.max(1);
        if snap_ts < gc_ts {
            return Err(SchemaStoreError::SnapshotLostByGC { snap_ts, gc_ts });
        }
        Ok(self.up.tables_at(snap_ts))
    }
    fn ddl_history(&self, from: Ts, to: Ts) -> Vec<DdlEvent> {
        self.up.ddl_history(from, to)
    }
    fn region_count(&self, t: TableId) -> u64 {
        self.up.region_count(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ddl_tables(up: &Upstream, span_table: TableId, trigger: bool) -> Vec<DdlKind> {
        let span = if trigger { TableSpan::ddl_span() } else { TableSpan::full(span_table) };
        up.events_for(&span, trigger, 0, u64::MAX, None)
            .into_iter()
            .filter_map(|e| match e {
                UpstreamEvent::Ddl(d) => Some(d.kind),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn rename_across_databases_blocks_table_and_ddl_span_and_moves_the_schema() {
        let mut up = Upstream::new();
        let t = up.create_table(1, "a", "t", 1);
        up.create_database(2, "b").unwrap();
        up.rename_table(3, t, "b", "t2").unwrap();
        let d = up.ddls.last().unwrap();
        assert_eq!(d.kind, DdlKind::RenameTable);
        assert_eq!(d.blocked_tables.table_ids, vec![t, DDL_SPAN_TABLE_ID]);
        assert!(d.need_dropped_tables.is_none() && d.need_added_tables.is_empty());
        let (a, b) = (up.schemas["a"], up.schemas["b"]);
        assert_eq!(d.updated_schemas, vec![SchemaIdChange { table_id: t, old_schema_id: a, new_schema_id: b }]);
        // The table and the trigger both get it; the table was in `a` before it.
        assert!(ddl_tables(&up, t, false).contains(&DdlKind::RenameTable));
        assert!(ddl_tables(&up, 0, true).contains(&DdlKind::RenameTable));
        assert_eq!(up.tables[&t].schema_at(d.commit_ts - 1), a);
        assert_eq!(up.tables[&t].schema_at(d.commit_ts), b);
        // A rename within a database moves nothing; a taken name is refused.
        up.rename_table(4, t, "b", "t3").unwrap();
        assert!(up.ddls.last().unwrap().updated_schemas.is_empty());
        let u = up.create_table(5, "b", "u", 1);
        assert!(matches!(up.rename_table(6, u, "b", "t3"), Err(UpstreamError::TableExists(..))));
    }

    #[test]
    fn rename_tables_blocks_the_ddl_span_then_every_table() {
        let mut up = Upstream::new();
        let t1 = up.create_table(1, "a", "t1", 1);
        let t2 = up.create_table(1, "a", "t2", 1);
        up.create_database(2, "b").unwrap();
        up.rename_tables(3, &[(t1, "b".into(), "x".into()), (t2, "a".into(), "y".into())]).unwrap();
        let d = up.ddls.last().unwrap();
        assert_eq!(d.kind, DdlKind::RenameTables);
        assert_eq!(d.blocked_tables.table_ids, vec![DDL_SPAN_TABLE_ID, t1, t2]);
        assert_eq!(d.updated_schemas.len(), 1, "only t1 changes database");
        assert_eq!(d.other_tables(), vec![t2]);
    }

    #[test]
    fn recover_table_brings_back_the_old_id_and_adds_it() {
        let mut up = Upstream::new();
        let t = up.create_table(1, "a", "t", 1);
        up.drop_table(2, t);
        let dropped = up.tables[&t].dropped_ts.unwrap();
        let id = up.recover_table(3, "a", "t").unwrap();
        assert_eq!(id, t);
        let d = up.ddls.last().unwrap();
        assert_eq!(d.kind, DdlKind::RecoverTable);
        assert_eq!(d.blocked_tables.table_ids, vec![DDL_SPAN_TABLE_ID]);
        assert_eq!(d.need_added_tables.iter().map(|r| r.table_id).collect::<Vec<_>>(), vec![t]);
        let tab = &up.tables[&t];
        assert!(tab.alive_at(dropped - 1) && !tab.alive_at(dropped) && tab.alive_at(d.commit_ts));
        assert_eq!(tab.drop_after(1), Some(dropped));
        // Only the trigger gets it, as CREATE TABLE.
        assert!(!ddl_tables(&up, t, false).contains(&DdlKind::RecoverTable));
        assert!(matches!(up.recover_table(4, "a", "t"), Err(UpstreamError::TableExists(..))));
    }

    #[test]
    fn create_tables_adds_every_table_in_one_ddl_and_alter_database_blocks_the_schema() {
        let mut up = Upstream::new();
        let ids = up.create_tables(1, "a", &["x".into(), "y".into()], 1).unwrap();
        let d = up.ddls.last().unwrap();
        assert_eq!(d.kind, DdlKind::CreateTables);
        assert_eq!(d.need_added_tables.iter().map(|r| r.table_id).collect::<Vec<_>>(), ids);
        assert_eq!(d.blocked_tables.table_ids, vec![DDL_SPAN_TABLE_ID]);
        up.alter_database(2, "a").unwrap();
        let d = up.ddls.last().unwrap();
        assert_eq!(d.blocked_tables.influence_type, InfluenceType::Db);
        assert!(d.need_dropped_tables.is_none() && d.need_added_tables.is_empty());
        assert!(ddl_tables(&up, ids[1], false).contains(&DdlKind::AlterDatabase));
        assert!(ddl_tables(&up, 0, true).contains(&DdlKind::AlterDatabase));
        assert!(up.alter_database(3, "nope").is_err());
    }
}
