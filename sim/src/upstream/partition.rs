//! Partitioned tables: one logical table of several physical tables (one per partition),
//! each with its own ID, spans and dispatchers, and the DDLs that change the partition set
//! as the schema store builds them (`persist_storage_ddl_handlers.go`, no table filter).

use super::*;

/// A partitioned table: its logical ID and name, and its current partitions in
/// definition order.
#[derive(Clone, Debug)]
pub struct PTable {
    pub id: TableId,
    pub name: String,
    pub schema_id: SchemaId,
    pub schema_name: String,
    pub partitions: Vec<TableId>,
    pub regions: u64,
    pub dropped_ts: Option<Ts>,
}

impl Upstream {
    fn alloc_table_id(&mut self) -> TableId {
        let id = self.next_table_id;
        self.next_table_id += 2;
        id
    }

    /// A new partition of `p`, created at `ts`.
    fn new_partition(&mut self, ts: Ts, p: &PTable) -> TableId {
        let id = self.alloc_table_id();
        let mut t = UTable::new(id, p.schema_id, &p.schema_name, &p.name, p.regions, ts);
        t.logical = Some(p.id);
        self.tables.insert(id, t);
        id
    }

    /// The live partitioned table of this logical ID.
    fn live_partitioned(&self, id: TableId) -> Result<PTable, UpstreamError> {
        self.partitioned
            .get(&id)
            .filter(|p| p.dropped_ts.is_none())
            .cloned()
            .ok_or_else(|| UpstreamError::NoSuchTable(format!("partitioned table {}", id)))
    }

    /// Partition `i` of `p` (0-based, in definition order).
    fn partition_at(p: &PTable, i: usize) -> Result<TableId, UpstreamError> {
        p.partitions.get(i).copied().ok_or_else(|| {
            UpstreamError::Invalid(format!(
                "table {} has {} partitions, no partition {}",
                p.name,
                p.partitions.len(),
                i
            ))
        })
    }

    /// Whether `id` is a partitioned table's logical ID.
    pub fn is_partitioned(&self, id: TableId) -> bool {
        self.partitioned.contains_key(&id)
    }

    /// The physical tables of a table: its partitions if partitioned, else itself.
    pub fn physical_tables(&self, id: TableId) -> Vec<TableId> {
        self.partitioned.get(&id).map(|p| p.partitions.clone()).unwrap_or_else(|| vec![id])
    }

    /// A partition DDL (`buildDDLEventForAddPartition`, `...DropPartition`,
    /// `...TruncateAndReorganizePartition`, persist_storage_ddl_handlers.go:2602-2718): it
    /// blocks the partitions before it and the DDL span, drops the partitions that are
    /// gone and adds the new ones; the trigger and every partition before it get it
    /// (`updateDDLHistoryFor*Partition`, :1287-1366).
    #[allow(clippy::too_many_arguments)]
    fn push_partition_ddl(
        &mut self,
        ts: Ts,
        kind: DdlKind,
        p: &PTable,
        prev: &[TableId],
        dropped: Vec<TableId>,
        added: &[TableId],
        query: String,
    ) {
        let mut blocked = prev.to_vec();
        blocked.push(DDL_SPAN_TABLE_ID);
        let sid = p.schema_id;
        self.ddls.push(DdlEvent {
            commit_ts: ts,
            kind,
            schema_id: sid,
            schema_name: p.schema_name.clone(),
            table_id: p.id,
            table_name: p.name.clone(),
            query,
            blocked_tables: InfluencedTables {
                influence_type: InfluenceType::Normal,
                table_ids: blocked,
                schema_id: sid,
            },
            need_dropped_tables: (!dropped.is_empty() || kind == DdlKind::DropPartition).then_some(InfluencedTables {
                influence_type: InfluenceType::Normal,
                table_ids: dropped,
                schema_id: sid,
            }),
            need_added_tables: added
                .iter()
                .map(|t| TableRef { table_id: *t, schema_id: sid, splitable: true })
                .collect(),
            updated_schemas: vec![],
        });
    }

    fn drop_physical(&mut self, ts: Ts, ids: &[TableId]) {
        for id in ids {
            if let Some(t) = self.tables.get_mut(id) {
                t.dropped_ts = Some(ts);
            }
        }
    }

    /// CREATE TABLE ... PARTITION BY ... (`n` partitions): one DDL blocking the DDL span
    /// that adds every partition (`buildDDLEventForNewTableDDL`, :2193-2204). Returns the
    /// logical ID.
    pub fn create_partition_table(
        &mut self,
        now_ms: u64,
        schema: &str,
        name: &str,
        n: usize,
        regions: u64,
    ) -> Result<TableId, UpstreamError> {
        let sid = self.schema_id(schema);
        if n == 0 {
            return Err(UpstreamError::Invalid("a partitioned table has at least one partition".into()));
        }
        if self.live_in(sid, name).is_some() || self.live_partitioned_in(sid, name).is_some() {
            return Err(UpstreamError::TableExists(schema.into(), name.into()));
        }
        let ts = self.tso(now_ms);
        let id = self.alloc_table_id();
        let mut p = PTable {
            id,
            name: name.into(),
            schema_id: sid,
            schema_name: schema.into(),
            partitions: vec![],
            regions: regions.max(1),
            dropped_ts: None,
        };
        for _ in 0..n {
            let part = self.new_partition(ts, &p);
            p.partitions.push(part);
        }
        let query = format!("CREATE TABLE {}.{} PARTITION BY HASH PARTITIONS {}", schema, name, n);
        let ddl = Upstream::trigger_ddl(ts, DdlKind::CreateTable, sid, schema, id, name.into(), query, &p.partitions);
        self.ddls.push(ddl);
        self.partitioned.insert(id, p);
        Ok(id)
    }

    fn live_partitioned_in(&self, sid: SchemaId, name: &str) -> Option<TableId> {
        self.partitioned.values().find(|p| p.schema_id == sid && p.name == name && p.dropped_ts.is_none()).map(|p| p.id)
    }

    /// ALTER TABLE ADD PARTITION (`count` new partitions).
    pub fn add_partition(&mut self, now_ms: u64, id: TableId, count: usize) -> Result<(), UpstreamError> {
        let mut p = self.live_partitioned(id)?;
        let ts = self.tso(now_ms);
        let prev = p.partitions.clone();
        let added: Vec<TableId> = (0..count.max(1)).map(|_| self.new_partition(ts, &p)).collect();
        p.partitions.extend(&added);
        let q = format!("ALTER TABLE {}.{} ADD PARTITION ({} partitions)", p.schema_name, p.name, added.len());
        self.push_partition_ddl(ts, DdlKind::AddPartition, &p, &prev, vec![], &added, q);
        self.partitioned.insert(id, p);
        Ok(())
    }

    /// ALTER TABLE DROP PARTITION of partition `i`; TiDB refuses to drop the last one.
    pub fn drop_partition(&mut self, now_ms: u64, id: TableId, i: usize) -> Result<(), UpstreamError> {
        let mut p = self.live_partitioned(id)?;
        let gone = Self::partition_at(&p, i)?;
        if p.partitions.len() == 1 {
            return Err(UpstreamError::Invalid(format!("cannot drop the only partition of {}", p.name)));
        }
        let ts = self.tso(now_ms);
        let prev = p.partitions.clone();
        p.partitions.retain(|t| *t != gone);
        self.drop_physical(ts, &[gone]);
        let q = format!("ALTER TABLE {}.{} DROP PARTITION p{}", p.schema_name, p.name, i);
        self.push_partition_ddl(ts, DdlKind::DropPartition, &p, &prev, vec![gone], &[], q);
        self.partitioned.insert(id, p);
        Ok(())
    }

    /// ALTER TABLE TRUNCATE PARTITION of partition `i`: it gets a new ID (empty).
    pub fn truncate_partition(&mut self, now_ms: u64, id: TableId, i: usize) -> Result<(), UpstreamError> {
        self.replace_partitions(now_ms, id, &[i], 1, DdlKind::TruncatePartition)
    }

    /// ALTER TABLE REORGANIZE PARTITION of partitions `idx` into `into` new ones. The
    /// rows of the old partitions are not carried over (docs/fidelity.md): the new
    /// partitions start empty, upstream and downstream alike.
    pub fn reorganize_partition(
        &mut self,
        now_ms: u64,
        id: TableId,
        idx: &[usize],
        into: usize,
    ) -> Result<(), UpstreamError> {
        self.replace_partitions(now_ms, id, idx, into.max(1), DdlKind::ReorganizePartition)
    }

    fn replace_partitions(
        &mut self,
        now_ms: u64,
        id: TableId,
        idx: &[usize],
        into: usize,
        kind: DdlKind,
    ) -> Result<(), UpstreamError> {
        let mut p = self.live_partitioned(id)?;
        let mut gone = Vec::new();
        for i in idx {
            let t = Self::partition_at(&p, *i)?;
            if gone.contains(&t) {
                return Err(UpstreamError::Invalid(format!("partition {} named twice", i)));
            }
            gone.push(t);
        }
        if gone.is_empty() {
            return Err(UpstreamError::Invalid("no partition named".into()));
        }
        let ts = self.tso(now_ms);
        let prev = p.partitions.clone();
        let pos = p.partitions.iter().position(|t| gone.contains(t)).unwrap();
        let added: Vec<TableId> = (0..into).map(|_| self.new_partition(ts, &p)).collect();
        p.partitions.retain(|t| !gone.contains(t));
        for (k, t) in added.iter().enumerate() {
            p.partitions.insert(pos + k, *t);
        }
        self.drop_physical(ts, &gone);
        let q = match kind {
            DdlKind::TruncatePartition => {
                format!("ALTER TABLE {}.{} TRUNCATE PARTITION {:?}", p.schema_name, p.name, idx)
            }
            _ => format!("ALTER TABLE {}.{} REORGANIZE PARTITION {:?} INTO {}", p.schema_name, p.name, idx, into),
        };
        self.push_partition_ddl(ts, kind, &p, &prev, gone, &added, q);
        self.partitioned.insert(id, p);
        Ok(())
    }

    /// ALTER TABLE EXCHANGE PARTITION p WITH TABLE t (`buildDDLEventForExchangeTablePartition`,
    /// persist_storage_ddl_handlers.go:2720-2873, no filter): TiDB swaps the two IDs, data
    /// stays with its ID, so partition `i`'s ID becomes the normal table `normal`'s name and
    /// the normal table's ID becomes the partition. One DDL blocks both and the DDL span,
    /// drops and adds nothing (:2773-2777), with `UpdatedSchemas` for both when the
    /// databases differ (:2778-2791).
    pub fn exchange_partition(
        &mut self,
        now_ms: u64,
        id: TableId,
        i: usize,
        normal: TableId,
    ) -> Result<(), UpstreamError> {
        let mut p = self.live_partitioned(id)?;
        let part = Self::partition_at(&p, i)?;
        let n = self.tables.get(&normal).filter(|t| t.is_live_normal()).cloned();
        let Some(n) = n else { return Err(UpstreamError::NoSuchTable(format!("normal table {}", normal))) };
        let ts = self.tso(now_ms);
        let (nsid, nschema, nname) = (n.schema_id, n.schema_name.clone(), n.name.clone());
        {
            let t = self.tables.get_mut(&part).unwrap();
            if t.schema_id != nsid {
                t.moves.push((ts, t.schema_id));
            }
            t.renames.push((ts, std::mem::take(&mut t.schema_name), std::mem::take(&mut t.name)));
            t.logical = None;
            t.schema_id = nsid;
            t.schema_name = nschema.clone();
            t.name = nname.clone();
        }
        {
            let t = self.tables.get_mut(&normal).unwrap();
            if t.schema_id != p.schema_id {
                t.moves.push((ts, t.schema_id));
            }
            t.renames.push((ts, std::mem::take(&mut t.schema_name), std::mem::take(&mut t.name)));
            t.logical = Some(p.id);
            t.schema_id = p.schema_id;
            t.schema_name = p.schema_name.clone();
            t.name = p.name.clone();
        }
        p.partitions[i] = normal;
        let updated = if nsid != p.schema_id {
            vec![
                SchemaIdChange { table_id: part, old_schema_id: p.schema_id, new_schema_id: nsid },
                SchemaIdChange { table_id: normal, old_schema_id: nsid, new_schema_id: p.schema_id },
            ]
        } else {
            vec![]
        };
        self.ddls.push(DdlEvent {
            commit_ts: ts,
            kind: DdlKind::ExchangePartition,
            schema_id: nsid,
            schema_name: nschema.clone(),
            table_id: normal,
            table_name: nname.clone(),
            query: format!(
                "ALTER TABLE {}.{} EXCHANGE PARTITION p{} WITH TABLE {}.{}",
                p.schema_name, p.name, i, nschema, nname
            ),
            blocked_tables: InfluencedTables {
                influence_type: InfluenceType::Normal,
                table_ids: vec![normal, part, DDL_SPAN_TABLE_ID],
                schema_id: nsid,
            },
            need_dropped_tables: None,
            need_added_tables: vec![],
            updated_schemas: updated,
        });
        self.partitioned.insert(id, p);
        Ok(())
    }

    /// DROP TABLE of a partitioned table (`buildDDLEventForDropTable`, :2289-2302): it
    /// blocks every partition and the DDL span and drops every partition.
    pub(super) fn drop_partitioned_table(&mut self, ts: Ts, id: TableId) {
        let mut p = self.partitioned[&id].clone();
        p.dropped_ts = Some(ts);
        let parts = p.partitions.clone();
        self.drop_physical(ts, &parts);
        let q = format!("DROP TABLE {}.{}", p.schema_name, p.name);
        self.push_partition_ddl(ts, DdlKind::DropTable, &p, &parts, parts.clone(), &[], q);
        self.partitioned.insert(id, p);
    }

    /// TRUNCATE TABLE of a partitioned table (`buildDDLEventForTruncateTable`, :2393-2418):
    /// every partition gets a new ID; it blocks the old partitions and the DDL span, drops
    /// them and adds the new ones. The logical ID changes too (returned).
    pub(super) fn truncate_partitioned_table(&mut self, ts: Ts, id: TableId) -> TableId {
        let mut old = self.partitioned[&id].clone();
        old.dropped_ts = Some(ts);
        let prev = old.partitions.clone();
        self.drop_physical(ts, &prev);
        let new_id = self.alloc_table_id();
        let mut p = PTable { id: new_id, partitions: vec![], dropped_ts: None, ..old.clone() };
        for _ in 0..prev.len() {
            let part = self.new_partition(ts, &p);
            p.partitions.push(part);
        }
        let q = format!("TRUNCATE TABLE {}.{}", p.schema_name, p.name);
        let added = p.partitions.clone();
        self.push_partition_ddl(ts, DdlKind::TruncateTable, &p, &prev, prev.clone(), &added, q);
        self.partitioned.insert(id, old);
        self.partitioned.insert(new_id, p);
        new_id
    }

    /// Rows to a partitioned table go to its partitions in turn (row `k` of the batch to
    /// partition `k mod n`).
    pub(super) fn partitioned_dml(
        &mut self,
        now_ms: u64,
        id: TableId,
        n: u64,
        op: RowOp,
        rng: &mut dyn rand::RngCore,
    ) -> usize {
        let parts = self.partitioned[&id].partitions.clone();
        let mut done = 0;
        for k in 0..n {
            let part = parts[(k % parts.len() as u64) as usize];
            done += self.dml(now_ms, part, 1, op, rng);
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last(up: &Upstream) -> &DdlEvent {
        up.ddls.last().unwrap()
    }

    #[test]
    fn create_partition_table_adds_every_partition() {
        let mut up = Upstream::new();
        let id = up.create_partition_table(1, "a", "pt", 3, 1).unwrap();
        let parts = up.physical_tables(id);
        assert_eq!(parts.len(), 3);
        let d = last(&up);
        assert_eq!(d.blocked_tables.table_ids, vec![DDL_SPAN_TABLE_ID]);
        assert_eq!(d.need_added_tables.iter().map(|t| t.table_id).collect::<Vec<_>>(), parts);
        assert!(parts.iter().all(|t| up.tables[t].logical == Some(id)));
        assert!(!up.tables.contains_key(&id), "the logical table has no data of its own");
    }

    #[test]
    fn partition_ddls_block_the_partitions_before_them_and_the_ddl_span() {
        let mut up = Upstream::new();
        let id = up.create_partition_table(1, "a", "pt", 2, 1).unwrap();
        let p0 = up.physical_tables(id);
        up.add_partition(2, id, 1).unwrap();
        let d = last(&up).clone();
        assert_eq!(d.blocked_tables.table_ids, [p0.clone(), vec![DDL_SPAN_TABLE_ID]].concat());
        assert_eq!(d.need_added_tables.len(), 1);
        assert!(d.need_dropped_tables.is_none());
        let p1 = up.physical_tables(id);
        up.drop_partition(3, id, 0).unwrap();
        let d = last(&up).clone();
        assert_eq!(d.blocked_tables.table_ids, [p1.clone(), vec![DDL_SPAN_TABLE_ID]].concat());
        assert_eq!(d.need_dropped_tables.unwrap().table_ids, vec![p1[0]]);
        assert!(d.need_added_tables.is_empty());
        up.truncate_partition(4, id, 0).unwrap();
        let d = last(&up).clone();
        assert_eq!(d.need_dropped_tables.unwrap().table_ids, vec![p1[1]]);
        assert_eq!(d.need_added_tables.len(), 1);
        let p2 = up.physical_tables(id);
        assert_eq!(p2[0], d.need_added_tables[0].table_id, "the new partition takes the old one's place");
        up.reorganize_partition(5, id, &[0, 1], 3).unwrap();
        let d = last(&up).clone();
        assert_eq!(d.need_dropped_tables.unwrap().table_ids, p2);
        assert_eq!(d.need_added_tables.len(), 3);
        assert_eq!(up.physical_tables(id).len(), 3);
        assert!(up.drop_partition(6, id, 7).is_err());
    }

    #[test]
    fn exchange_partition_swaps_the_ids_and_moves_schemas() {
        let mut up = Upstream::new();
        let id = up.create_partition_table(1, "a", "pt", 2, 1).unwrap();
        let n = up.create_table(1, "b", "nt", 1);
        let part = up.physical_tables(id)[1];
        up.exchange_partition(2, id, 1, n).unwrap();
        let d = last(&up);
        assert_eq!(d.blocked_tables.table_ids, vec![n, part, DDL_SPAN_TABLE_ID]);
        assert!(d.need_dropped_tables.is_none() && d.need_added_tables.is_empty());
        assert_eq!(d.updated_schemas.len(), 2);
        assert_eq!(up.physical_tables(id)[1], n);
        assert_eq!(up.tables[&part].name, "nt");
        assert_eq!(up.tables[&part].schema_id, up.schemas["b"]);
        assert_eq!(up.tables[&n].logical, Some(id));
    }

    #[test]
    fn drop_and_truncate_of_a_partitioned_table_cover_every_partition() {
        let mut up = Upstream::new();
        let id = up.create_partition_table(1, "a", "pt", 2, 1).unwrap();
        let parts = up.physical_tables(id);
        let new_id = up.truncate_table(2, id);
        let d = last(&up).clone();
        assert_eq!(d.blocked_tables.table_ids, [parts.clone(), vec![DDL_SPAN_TABLE_ID]].concat());
        assert_eq!(d.need_dropped_tables.unwrap().table_ids, parts);
        assert_eq!(d.need_added_tables.len(), 2);
        let now = up.physical_tables(new_id);
        up.drop_table(3, new_id);
        let d = last(&up).clone();
        assert_eq!(d.need_dropped_tables.unwrap().table_ids, now);
        assert!(now.iter().all(|t| up.tables[t].dropped_ts.is_some()));
    }
}
