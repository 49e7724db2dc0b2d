//! External storage (the cloud-storage sink's bucket) and the downstream consumer
//! that rebuilds each table from the durable files.
//!
//! Syncpoint records (see `core_sched::syncpoint`) are objects too. When the first
//! record of a primary ts becomes durable (TiCDC writes it with `insert ignore`), the
//! storage keeps the consumer's view of every table at that moment: the downstream "at
//! the secondary ts", which sync-diff compares with the upstream at the primary ts.

use core_sched::effects::{ObjectContent, StorageError};
use core_sched::sink::ddl_ts::{DdlTsRow, DdlTsView};
use core_sched::syncpoint::SyncPointRecord;
use core_sched::types::*;
use core_sched::upstream::{DdlKind, RowChange, RowOp};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Default)]
pub struct Storage {
    /// Every object by path; changed only through [`Self::insert_object`] and
    /// [`Self::remove_object`], which keep `rows_index` in step.
    objects: BTreeMap<String, ObjectContent>,
    /// The final (not temporary) data objects holding rows of each table, by path: the
    /// consumer's view of one table reads these instead of every object.
    rows_index: BTreeMap<TableId, BTreeSet<String>>,
    /// Durable row changes (table, commit ts, key), for the no-data-loss check.
    pub durable: BTreeSet<(TableId, Ts, u64)>,
    /// DDL files made durable: (commit ts, table) -> writers (paths).
    pub ddl_writes: BTreeMap<(Ts, TableId), u32>,
    /// DDLs made durable since the barrier check last looked.
    pub new_ddls: Vec<core_sched::upstream::DdlRecord>,
    /// Syncpoint records by primary ts: the first record written (`insert ignore`) and
    /// how many times one was written.
    pub syncpoints: BTreeMap<Ts, (SyncPointRecord, u32)>,
    /// The downstream (every table's rows) when the first record of a primary ts became durable.
    pub syncpoint_snapshots: BTreeMap<Ts, BTreeMap<TableId, BTreeMap<u64, u64>>>,
    /// Syncpoint records made durable since the barrier check last looked.
    pub new_syncpoints: Vec<SyncPointRecord>,
    /// Tables whose data files became durable since the drop check last looked.
    pub new_rows: Vec<(TableId, Ts)>,
    /// The MySQL sink's `ddl_ts` rows of the changefeed, by table (see
    /// `core_sched::sink::ddl_ts`): kept from the DDL objects, read only while syncpoints
    /// are on.
    pub ddl_ts: BTreeMap<TableId, DdlTsRow>,
    /// The reserved syncpoint row.
    pub ddl_ts_sync_point: Option<DdlTsRow>,
    /// Row changes (table, commit ts, key) the redo log holds durably.
    pub redo_rows: BTreeSet<(TableId, Ts, u64)>,
    /// Commit ts of the DDLs the redo log holds durably.
    pub redo_ddls: BTreeSet<Ts>,
    /// Block-event writes since the world's `record_ddl_ts` last looked: (commit ts,
    /// finished, is syncpoint). A put of the object starts the write (`SendDDLTsPre`), its
    /// rename finishes it (`SendDDLTs`).
    pub new_ddl_ts: Vec<(Ts, bool, bool)>,
}

impl DdlTsView for Storage {
    fn table_row(&self, table: TableId) -> Option<DdlTsRow> {
        self.ddl_ts.get(&table).copied()
    }
    fn syncpoint_row(&self) -> Option<DdlTsRow> {
        self.ddl_ts_sync_point
    }
}

impl Storage {
    pub fn put(&mut self, path: &str, content: ObjectContent) -> Result<(), StorageError> {
        match &content {
            ObjectContent::Ddl(d) => self.new_ddl_ts.push((d.commit_ts, false, false)),
            ObjectContent::SyncPoint(r) => self.new_ddl_ts.push((r.primary_ts, false, true)),
            // Redo log objects are not downstream data; the redo checks read them.
            ObjectContent::RedoRows(rows) => {
                self.redo_rows.extend(rows.iter().map(|r| (r.table_id, r.commit_ts, r.key)));
            }
            ObjectContent::RedoDdl(d) => {
                self.redo_ddls.insert(d.commit_ts);
            }
            ObjectContent::Rows(_) | ObjectContent::RedoMeta(_) => {}
        }
        self.insert_object(path, content);
        Ok(())
    }

    /// The redo meta files under `dir` with their content (the redo meta's `initMeta` walk).
    pub fn redo_metas(&self, dir: &str) -> Vec<(String, core_sched::sink::redo_meta::LogMeta)> {
        let from = format!("{}/", dir);
        self.objects
            .range(from.clone()..)
            .take_while(|(p, _)| p.starts_with(&from))
            .filter_map(|(p, c)| match c {
                ObjectContent::RedoMeta(m) => Some((p.clone(), *m)),
                _ => None,
            })
            .collect()
    }

    /// Whether the consumer reads the object at `path` (temporary uploads it does not).
    fn is_final(path: &str) -> bool {
        !path.contains(".tmp.")
    }

    /// The tables with rows in a data object.
    fn row_tables(c: &ObjectContent) -> BTreeSet<TableId> {
        match c {
            ObjectContent::Rows(rows) => rows.iter().map(|r| r.table_id).collect(),
            _ => BTreeSet::new(),
        }
    }

    fn insert_object(&mut self, path: &str, content: ObjectContent) -> Option<ObjectContent> {
        let final_path = Self::is_final(path);
        if final_path {
            for t in Self::row_tables(&content) {
                self.rows_index.entry(t).or_default().insert(path.to_string());
            }
        }
        let old = self.objects.insert(path.to_string(), content);
        if final_path {
            self.unindex(path, old.as_ref());
        }
        old
    }

    fn remove_object(&mut self, path: &str) -> Option<ObjectContent> {
        let old = self.objects.remove(path);
        if Self::is_final(path) {
            self.unindex(path, old.as_ref());
        }
        old
    }

    /// Drop `path` from the index of the tables `old` had rows of and the object now at
    /// `path` (if any) has not.
    fn unindex(&mut self, path: &str, old: Option<&ObjectContent>) {
        let Some(old) = old else { return };
        let now = self.objects.get(path).map(Self::row_tables).unwrap_or_default();
        for t in Self::row_tables(old).difference(&now) {
            if let Some(paths) = self.rows_index.get_mut(t) {
                paths.remove(path);
                if paths.is_empty() {
                    self.rows_index.remove(t);
                }
            }
        }
    }

    /// Rename a temporary object to its final name; returns the content made durable.
    pub fn rename(&mut self, from: &str, to: &str) -> Result<Option<ObjectContent>, StorageError> {
        let Some(c) = self.remove_object(from) else { return Err(StorageError::NotFound(from.to_string())) };
        match &c {
            ObjectContent::Rows(rows) => {
                for r in rows {
                    self.durable.insert((r.table_id, r.commit_ts, r.key));
                }
                if let Some(r) = rows.first() {
                    // With the file's oldest commit ts: a recovered table's rows of one
                    // life are told from those of another by it.
                    let oldest = rows.iter().map(|r| r.commit_ts).min().unwrap_or(r.commit_ts);
                    self.new_rows.push((r.table_id, oldest));
                }
            }
            ObjectContent::Ddl(d) => {
                self.new_ddl_ts.push((d.commit_ts, true, false));
                *self.ddl_writes.entry((d.commit_ts, d.table_id)).or_insert(0) += 1;
                self.new_ddls.push(d.clone());
            }
            ObjectContent::SyncPoint(r) => {
                self.new_ddl_ts.push((r.primary_ts, true, true));
                let first = !self.syncpoints.contains_key(&r.primary_ts);
                self.syncpoints.entry(r.primary_ts).or_insert_with(|| (r.clone(), 0)).1 += 1;
                if first {
                    let snap = self.all_table_rows();
                    self.syncpoint_snapshots.insert(r.primary_ts, snap);
                }
                self.new_syncpoints.push(r.clone());
            }
            ObjectContent::RedoRows(_) | ObjectContent::RedoDdl(_) | ObjectContent::RedoMeta(_) => {}
        }
        // Renaming onto an existing object replaces it: its rows are no longer durable
        // (no-data-loss then sees the loss).
        if let Some(ObjectContent::Rows(old)) = self.insert_object(to, c.clone()) {
            for r in old {
                self.durable.remove(&(r.table_id, r.commit_ts, r.key));
            }
            if let ObjectContent::Rows(rows) = &c {
                for r in rows {
                    self.durable.insert((r.table_id, r.commit_ts, r.key));
                }
            }
        }
        Ok(Some(c))
    }

    pub fn delete(&mut self, paths: &[String]) {
        for p in paths {
            self.remove_object(p);
        }
    }

    fn final_objects(&self) -> impl Iterator<Item = (&String, &ObjectContent)> {
        self.objects.iter().filter(|(p, _)| Self::is_final(p))
    }

    /// The rows of `table` in its final data objects, in path order.
    fn rows_of(&self, table: TableId) -> Vec<&RowChange> {
        let mut all = Vec::new();
        for p in self.rows_index.get(&table).into_iter().flatten() {
            if let Some(ObjectContent::Rows(rows)) = self.objects.get(p) {
                all.extend(rows.iter().filter(|r| r.table_id == table));
            }
        }
        all
    }

    /// Whether the consumer sees the table (of database `schema`): any data or a CREATE,
    /// no later DROP TABLE, and no DROP DATABASE of its database after the table's last
    /// DDL (the storage consumer drops a database's tables with it; a table ID never
    /// outlives its database, a database created again under the name gets new tables).
    pub fn table_exists(&self, table: TableId, schema: &str) -> bool {
        let mut last_ddl: Option<(Ts, DdlKind)> = None;
        let mut has_data = false;
        let mut db_dropped_at: Option<Ts> = None;
        for (_, c) in self.final_objects() {
            match c {
                ObjectContent::Ddl(d)
                    if (d.table_id == table || d.other_tables.contains(&table))
                        && table != 0
                        && last_ddl.map(|(t, _)| d.commit_ts > t).unwrap_or(true) =>
                {
                    last_ddl = Some((d.commit_ts, d.kind));
                }
                ObjectContent::Ddl(d) if d.kind == DdlKind::DropDatabase && d.schema_name == schema => {
                    db_dropped_at = db_dropped_at.max(Some(d.commit_ts));
                }
                ObjectContent::Rows(rows) if rows.first().map(|r| r.table_id == table).unwrap_or(false) => {
                    has_data = true
                }
                _ => {}
            }
        }
        if let Some(dropped) = db_dropped_at {
            if last_ddl.map(|(t, _)| dropped > t).unwrap_or(true) {
                return false;
            }
        }
        match last_ddl {
            Some((_, DdlKind::DropTable)) => false,
            Some(_) => true,
            None => has_data,
        }
    }

    /// Whether the consumer sees the database: its last DDL (of the database or one of
    /// its tables) is not a DROP DATABASE; without any DDL, whether one of `tables` (the
    /// tables it ever had upstream) has data downstream (a database that existed before
    /// the changefeed).
    pub fn database_exists(&self, schema: &str, tables: &[TableId]) -> bool {
        let mut last: Option<(Ts, DdlKind)> = None;
        let mut has_data = false;
        for (_, c) in self.final_objects() {
            match c {
                ObjectContent::Ddl(d)
                    if d.schema_name == schema && last.map(|(t, _)| d.commit_ts > t).unwrap_or(true) =>
                {
                    last = Some((d.commit_ts, d.kind));
                }
                ObjectContent::Rows(rows) if rows.first().map(|r| tables.contains(&r.table_id)).unwrap_or(false) => {
                    has_data = true
                }
                _ => {}
            }
        }
        match last {
            Some((_, DdlKind::DropDatabase)) => false,
            Some(_) => true,
            None => has_data,
        }
    }

    /// The consumer's view of every table that has data (one pass over the objects).
    pub fn all_table_rows(&self) -> BTreeMap<TableId, BTreeMap<u64, u64>> {
        self.rows_index.keys().map(|&t| (t, apply_rows(self.rows_of(t)))).collect()
    }

    /// The consumer's view of a table: apply durable row changes in commit-ts order.
    pub fn table_rows(&self, table: TableId) -> BTreeMap<u64, u64> {
        apply_rows(self.rows_of(table))
    }

    /// Every row the redo log holds durably, per table (the redo reader's input).
    pub fn redo_log_rows(&self) -> BTreeMap<TableId, Vec<&RowChange>> {
        let mut out: BTreeMap<TableId, Vec<&RowChange>> = BTreeMap::new();
        for (_, c) in self.final_objects() {
            if let ObjectContent::RedoRows(rows) = c {
                for r in rows {
                    out.entry(r.table_id).or_default().push(r);
                }
            }
        }
        out
    }

    /// A table as the consumer would see it from its durable row changes at or below
    /// `upto` and then `extra` (all in commit-ts order).
    pub fn table_rows_upto_with(&self, table: TableId, upto: Ts, extra: &[&RowChange]) -> BTreeMap<u64, u64> {
        let mut all = self.rows_of(table);
        all.retain(|r| r.commit_ts <= upto);
        all.extend_from_slice(extra);
        apply_rows(all)
    }
}

/// Apply row changes in commit-ts order (duplicates are harmless).
pub fn apply_rows(mut all: Vec<&RowChange>) -> BTreeMap<u64, u64> {
    all.sort_by_key(|r| (r.commit_ts, r.key));
    let mut m = BTreeMap::new();
    for r in all {
        match r.op {
            RowOp::Delete => {
                m.remove(&r.key);
            }
            _ => {
                m.insert(r.key, r.value);
            }
        }
    }
    m
}
