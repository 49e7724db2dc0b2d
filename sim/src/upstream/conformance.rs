//! Conformance cases from TiCDC's schema-store tests at b813e76f9
//! (`logservice/schemastore/persist_storage_test.go`, `multi_version_test.go`): each case
//! drives this upstream to the Go case's state, issues its DDLs and checks the built DDL
//! events, which dispatchers get them, and the tables as of a ts.
//!
//! Naming as in `core/src/tests/conformance`: `ticdc_<Go file stem>_<Go test>[_<sub-case>]`,
//! so `cargo test -p ticdc-sim --lib ticdc_` runs them; the list, with the Go cases the
//! model cannot express, is in `docs/conformance/schemastore.md`.
//!
//! Translation: IDs are the upstream's own (Go's fixed IDs are named by variables), and a
//! Go table or database that exists before the first job is created here first, its DDLs
//! left out of the histories (`base`). Events are compared as Go's `checkDDLEvents` does
//! (persist_storage_test.go:2457-2601): table IDs, added tables and schema moves as sets;
//! a Normal `InfluencedTables`' schema ID is not compared (Go leaves it 0; the core reads
//! it only for DB events). Go's per-table history also lists the DDL that creates the
//! table (to build its schema versions); its dispatcher starts at that ts and never reads
//! it, so the histories here start after the creating DDL.
#![allow(non_snake_case)]

use super::*;

/// The fields `checkDDLEvents` compares, normalised to sets.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Shape {
    kind: DdlKind,
    blocked: InfluencedTables,
    dropped: Option<InfluencedTables>,
    added: Vec<(TableId, SchemaId, bool)>,
    updated: Vec<(TableId, SchemaId, SchemaId)>,
}

fn norm(t: &InfluencedTables) -> InfluencedTables {
    let mut table_ids = t.table_ids.clone();
    table_ids.sort_unstable();
    let schema_id = if t.influence_type == InfluenceType::Normal { 0 } else { t.schema_id };
    InfluencedTables { influence_type: t.influence_type, table_ids, schema_id }
}

fn shape(d: &DdlEvent) -> Shape {
    let mut added: Vec<_> = d.need_added_tables.iter().map(|t| (t.table_id, t.schema_id, t.splitable)).collect();
    added.sort_unstable();
    let mut updated: Vec<_> =
        d.updated_schemas.iter().map(|c| (c.table_id, c.old_schema_id, c.new_schema_id)).collect();
    updated.sort_unstable();
    Shape {
        kind: d.kind,
        blocked: norm(&d.blocked_tables),
        dropped: d.need_dropped_tables.as_ref().map(norm),
        added,
        updated,
    }
}

/// An expected event: `blocked` (Normal), no drops, adds or moves yet.
fn ev(kind: DdlKind, blocked: &[TableId]) -> Shape {
    Shape { kind, blocked: normal(blocked), dropped: None, added: vec![], updated: vec![] }
}

impl Shape {
    fn dropped(mut self, ids: &[TableId]) -> Self {
        self.dropped = Some(normal(ids));
        self
    }
    fn added(mut self, schema: SchemaId, ids: &[TableId]) -> Self {
        self.added = ids.iter().map(|t| (*t, schema, true)).collect();
        self.added.sort_unstable();
        self
    }
    fn moved(mut self, changes: &[(TableId, SchemaId, SchemaId)]) -> Self {
        self.updated = changes.to_vec();
        self.updated.sort_unstable();
        self
    }
}

fn normal(ids: &[TableId]) -> InfluencedTables {
    let mut table_ids = ids.to_vec();
    table_ids.sort_unstable();
    InfluencedTables { influence_type: InfluenceType::Normal, table_ids, schema_id: 0 }
}

fn db(schema: SchemaId) -> InfluencedTables {
    InfluencedTables { influence_type: InfluenceType::Db, table_ids: vec![], schema_id: schema }
}

/// The commit ts of the last DDL.
fn ts(up: &Upstream) -> Ts {
    up.ddls.last().unwrap().commit_ts
}

fn last(up: &Upstream) -> Shape {
    shape(up.ddls.last().unwrap())
}

fn ddls(up: &Upstream, span: TableSpan, trigger: bool, from: Ts, to: Ts) -> Vec<DdlEvent> {
    up.events_for(&span, trigger, from, to, None)
        .into_iter()
        .filter_map(|e| match e {
            UpstreamEvent::Ddl(d) => Some(d),
            _ => None,
        })
        .collect()
}

/// `fetchTableDDLEvents(table, start, end)`: what the table's dispatcher gets in `(from, to]`.
fn fetch_table(up: &Upstream, t: TableId, from: Ts, to: Ts) -> Vec<Shape> {
    ddls(up, TableSpan::full(t), false, from, to).iter().map(shape).collect()
}

/// `fetchTableTriggerDDLEvents(start)`: what the table trigger gets after `from`.
fn fetch_trigger(up: &Upstream, from: Ts) -> Vec<Shape> {
    ddls(up, TableSpan::ddl_span(), true, from, Ts::MAX).iter().map(shape).collect()
}

/// `tablesDDLHistory[t]` after `from`.
fn table_history(up: &Upstream, t: TableId, from: Ts) -> Vec<Ts> {
    ddls(up, TableSpan::full(t), false, from, Ts::MAX).iter().map(|d| d.commit_ts).collect()
}

/// `tableTriggerDDLHistory` after `from`.
fn trigger_history(up: &Upstream, from: Ts) -> Vec<Ts> {
    ddls(up, TableSpan::ddl_span(), true, from, Ts::MAX).iter().map(|d| d.commit_ts).collect()
}

/// `getAllPhysicalTables(snap)`, as a bootstrap loads it: the table IDs, sorted.
fn physical(up: &Upstream, snap: Ts) -> Vec<TableId> {
    let store = NodeSchemaStore { up, gc_fast_fail: false };
    let mut ids: Vec<TableId> = store.get_all_physical_tables(snap).unwrap().iter().map(|t| t.table_id).collect();
    ids.sort_unstable();
    ids
}

/// The table as of `ts` (`getTableInfo`): its database and name, `None` when dropped.
fn info_at(up: &Upstream, t: TableId, ts: Ts) -> Option<(String, String)> {
    up.tables_at(ts).into_iter().find(|i| i.table_id == t).map(|i| (i.schema_name, i.name))
}

fn named(schema: &str, table: &str) -> Option<(String, String)> {
    Some((schema.into(), table.into()))
}

fn sorted(mut v: Vec<TableId>) -> Vec<TableId> {
    v.sort_unstable();
    v
}

const D: TableId = DDL_SPAN_TABLE_ID;

// TestApplyDDLJobs (persist_storage_test.go:40), one case per table entry.

// persist_storage_test.go:199 TestApplyDDLJobs "drop_schema". Go names the partitioned table
// `t1` too, which TiDB refuses next to table `t1`; it is `t2` here.
#[test]
fn ticdc_persist_storage_TestApplyDDLJobs_drop_schema() {
    let mut up = Upstream::new();
    let sid = up.create_database(1, "test").unwrap();
    let ts_schema = ts(&up);
    let t1 = up.create_table(2, "test", "t1", 1);
    let ts_t1 = ts(&up);
    let pt = up.create_partition_table(3, "test", "t2", 3, 1).unwrap();
    let ts_pt = ts(&up);
    let parts = up.physical_tables(pt);
    up.drop_database(4, "test").unwrap();
    let ts_drop = ts(&up);
    assert_eq!(
        last(&up),
        Shape { kind: DdlKind::DropDatabase, blocked: db(sid), dropped: Some(db(sid)), added: vec![], updated: vec![] }
    );
    // tablesDDLHistory: 200 {1010, 1030}, 301-303 {1020, 1030}; tableTriggerDDLHistory: all four.
    assert_eq!(table_history(&up, t1, ts_t1), vec![ts_drop]);
    for p in &parts {
        assert_eq!(table_history(&up, *p, ts_pt), vec![ts_drop]);
    }
    assert_eq!(trigger_history(&up, 0), vec![ts_schema, ts_t1, ts_pt, ts_drop]);
    // tableMap, partitionMap and databaseMap are empty.
    assert!(!up.database_exists("test"));
    assert!(up.table_by_name("t1").is_none());
    assert!(up.partitioned[&pt].dropped_ts.is_some(), "the partitioned table goes with its database");
    assert!(up.add_partition(5, pt, 1).is_err());
    assert_eq!(physical(&up, ts_drop), Vec::<TableId>::new());
}

// persist_storage_test.go:225 TestApplyDDLJobs "create_drop_truncate_table". The two
// physical-table queries at 1040 filter on test.t1 and test.t2; unfiltered they are the union.
#[test]
fn ticdc_persist_storage_TestApplyDDLJobs_create_drop_truncate_table() {
    let mut up = Upstream::new();
    let sid = up.create_database(1, "test").unwrap();
    let ts_schema = ts(&up);
    let t1 = up.create_table(2, "test", "t1", 1);
    let ts_t1 = ts(&up);
    let t2 = up.create_table(3, "test", "t2", 1);
    let ts_t2 = ts(&up);
    up.drop_table(4, t2);
    let ts_drop = ts(&up);
    let t3 = up.truncate_table(5, t1);
    let ts_trunc = ts(&up);
    // fetchTableTriggerDDLEvents(start 1000).
    assert_eq!(
        fetch_trigger(&up, ts_schema),
        vec![
            ev(DdlKind::CreateTable, &[D]).added(sid, &[t1]),
            ev(DdlKind::CreateTable, &[D]).added(sid, &[t2]),
            ev(DdlKind::DropTable, &[D, t2]).dropped(&[t2]),
            ev(DdlKind::TruncateTable, &[D, t1]).dropped(&[t1]).added(sid, &[t3]),
        ]
    );
    assert_eq!(table_history(&up, t1, ts_t1), vec![ts_trunc]);
    assert_eq!(table_history(&up, t2, ts_t2), vec![ts_drop]);
    assert_eq!(table_history(&up, t3, ts_trunc), Vec::<Ts>::new());
    assert_eq!(trigger_history(&up, 0), vec![ts_schema, ts_t1, ts_t2, ts_drop, ts_trunc]);
    assert_eq!(physical(&up, ts_t1), vec![t1]);
    assert_eq!(physical(&up, ts_t2), vec![t1, t2]);
    assert_eq!(physical(&up, ts_trunc), vec![t3]);
    // tableMap: {202: test.t1}.
    let now = up.table_by_name("t1").unwrap();
    assert_eq!((now.id, now.schema_id), (t3, sid));
    assert!(up.table_by_name("t2").is_none());
}

// persist_storage_test.go:420 TestApplyDDLJobs "drop_partition_table".
#[test]
fn ticdc_persist_storage_TestApplyDDLJobs_drop_partition_table() {
    let mut up = Upstream::new();
    let pt = up.create_partition_table(1, "test", "t1", 3, 1).unwrap();
    let sid = up.schemas["test"];
    let ts_create = ts(&up);
    let parts = up.physical_tables(pt);
    up.drop_table(2, pt);
    let ts_drop = ts(&up);
    let blocked = [vec![D], parts.clone()].concat();
    assert_eq!(
        fetch_trigger(&up, 0),
        vec![ev(DdlKind::CreateTable, &[D]).added(sid, &parts), ev(DdlKind::DropTable, &blocked).dropped(&parts),]
    );
    for p in &parts {
        assert_eq!(table_history(&up, *p, ts_create), vec![ts_drop]);
    }
    assert_eq!(trigger_history(&up, 0), vec![ts_create, ts_drop]);
    assert_eq!(physical(&up, ts_drop), Vec::<TableId>::new());
}

// persist_storage_test.go:519 TestApplyDDLJobs "partition_table": TRUNCATE TABLE of a
// partitioned table, ADD, DROP and TRUNCATE PARTITION.
#[test]
fn ticdc_persist_storage_TestApplyDDLJobs_partition_table() {
    let mut up = Upstream::new();
    let pt = up.create_partition_table(1, "test", "t1", 3, 1).unwrap();
    let sid = up.schemas["test"];
    let base = ts(&up);
    let old = up.physical_tables(pt);
    let pt2 = up.truncate_table(2, pt);
    let ts_trunc = ts(&up);
    let new = up.physical_tables(pt2);
    let (p4, p5, p6) = (new[0], new[1], new[2]);
    up.add_partition(3, pt2, 1).unwrap();
    let ts_add = ts(&up);
    let p7 = up.physical_tables(pt2)[3];
    up.drop_partition(4, pt2, 0).unwrap();
    let ts_droppart = ts(&up);
    up.truncate_partition(5, pt2, 0).unwrap();
    let ts_truncpart = ts(&up);
    let p8 = up.physical_tables(pt2)[0];
    let drop_part = ev(DdlKind::DropPartition, &[D, p4, p5, p6, p7]).dropped(&[p4]);
    let trunc_part = ev(DdlKind::TruncatePartition, &[D, p5, p6, p7]).dropped(&[p5]).added(sid, &[p8]);
    // fetchTableDDLEvents(207, 1030, 1050).
    assert_eq!(fetch_table(&up, p7, ts_add, ts_truncpart), vec![drop_part.clone(), trunc_part.clone()]);
    // fetchTableTriggerDDLEvents(start 999, limit 1) and (start 1000, limit 10).
    let trunc = ev(DdlKind::TruncateTable, &[vec![D], old.clone()].concat()).dropped(&old).added(sid, &new);
    let add = ev(DdlKind::AddPartition, &[D, p4, p5, p6]).added(sid, &[p7]);
    assert_eq!(fetch_trigger(&up, base), vec![trunc, add, drop_part, trunc_part]);
    // tablesDDLHistory.
    for p in &old {
        assert_eq!(table_history(&up, *p, base), vec![ts_trunc]);
    }
    assert_eq!(table_history(&up, p4, ts_trunc), vec![ts_add, ts_droppart]);
    for p in [p5, p6] {
        assert_eq!(table_history(&up, p, ts_trunc), vec![ts_add, ts_droppart, ts_truncpart]);
    }
    assert_eq!(table_history(&up, p7, ts_add), vec![ts_droppart, ts_truncpart]);
    assert_eq!(table_history(&up, p8, ts_truncpart), Vec::<Ts>::new());
    assert_eq!(trigger_history(&up, base), vec![ts_trunc, ts_add, ts_droppart, ts_truncpart]);
    // getAllPhysicalTables at 1010 and 1050; partitionMap {300: {206, 207, 208}}.
    assert_eq!(physical(&up, base), sorted(old));
    assert_eq!(physical(&up, ts_truncpart), sorted(vec![p6, p7, p8]));
    assert_eq!(sorted(up.physical_tables(pt2)), sorted(vec![p6, p7, p8]));
}

// persist_storage_test.go:823 TestApplyDDLJobs "exchange_table_partition" (the unfiltered
// fetch; the two filtered ones are not expressible).
#[test]
fn ticdc_persist_storage_TestApplyDDLJobs_exchange_table_partition() {
    let mut up = Upstream::new();
    let test = up.schema_id("test");
    let test2 = up.schema_id("test2");
    let pt = up.create_partition_table(1, "test", "t1", 3, 1).unwrap();
    let ts_pt = ts(&up);
    let parts = up.physical_tables(pt);
    let (p1, p2, p3) = (parts[0], parts[1], parts[2]);
    let t2 = up.create_table(2, "test2", "t2", 1);
    let ts_t2 = ts(&up);
    up.exchange_partition(3, pt, 2, t2).unwrap();
    let ts_ex = ts(&up);
    let exchange = ev(DdlKind::ExchangePartition, &[p3, t2, D]).moved(&[(t2, test2, test), (p3, test, test2)]);
    // fetchTableDDLEvents(203, 1010, 1030).
    assert_eq!(fetch_table(&up, p3, ts_pt, ts_ex), vec![exchange]);
    // tablesDDLHistory: 300 {1020, 1030}, 201/202 {1010}, 203 {1010, 1030}.
    assert_eq!(table_history(&up, t2, ts_t2), vec![ts_ex]);
    assert_eq!(table_history(&up, p3, ts_pt), vec![ts_ex]);
    assert_eq!(table_history(&up, p1, ts_pt), Vec::<Ts>::new());
    assert_eq!(table_history(&up, p2, ts_pt), Vec::<Ts>::new());
    assert_eq!(trigger_history(&up, 0), vec![ts_pt, ts_t2, ts_ex]);
    // tableMap {200: test.t1, 203: test2.t2}; partitionMap {200: {201, 202, 300}}.
    assert_eq!(sorted(up.physical_tables(pt)), sorted(vec![p1, p2, t2]));
    let t = &up.tables[&p3];
    assert_eq!((t.schema_id, t.name.as_str(), t.logical), (test2, "t2", None));
    assert_eq!(up.tables[&t2].logical, Some(pt));
    assert_eq!(up.table_by_name("t2").unwrap().id, p3);
}

// persist_storage_test.go:983 TestApplyDDLJobs "rename_table" (the unfiltered fetch; the
// re-applied rename at 1040 and the filtered fetches are not expressible). Go's query
// quotes the names, the model's does not (docs/fidelity.md #45).
#[test]
fn ticdc_persist_storage_TestApplyDDLJobs_rename_table() {
    let mut up = Upstream::new();
    let test = up.schema_id("test");
    let test2 = up.schema_id("test2");
    let t = up.create_table(1, "test", "t1", 1);
    let ts_create = ts(&up);
    up.rename_table(2, t, "test2", "t2").unwrap();
    let ts_r1 = ts(&up);
    assert_eq!(up.ddls.last().unwrap().query, "RENAME TABLE test.t1 TO test2.t2");
    up.rename_table(3, t, "test2", "t3").unwrap();
    let ts_r2 = ts(&up);
    assert_eq!(up.ddls.last().unwrap().query, "RENAME TABLE test2.t2 TO test2.t3");
    // fetchTableDDLEvents(300, 1010, 1030).
    assert_eq!(
        fetch_table(&up, t, ts_create, ts_r2),
        vec![ev(DdlKind::RenameTable, &[D, t]).moved(&[(t, test, test2)]), ev(DdlKind::RenameTable, &[D, t])]
    );
    assert_eq!(table_history(&up, t, ts_create), vec![ts_r1, ts_r2]);
    assert_eq!(trigger_history(&up, 0), vec![ts_create, ts_r1, ts_r2]);
    // tableMap {300: test2.t3}.
    let now = up.table_by_name("t3").unwrap();
    assert_eq!((now.id, now.schema_id), (t, test2));
}

// persist_storage_test.go:1164 TestApplyDDLJobs "rename_partition_table" (the unfiltered fetch).
#[test]
fn ticdc_persist_storage_TestApplyDDLJobs_rename_partition_table() {
    let mut up = Upstream::new();
    let test = up.schema_id("test");
    let test2 = up.schema_id("test2");
    let pt = up.create_partition_table(1, "test", "t1", 3, 1).unwrap();
    let ts_create = ts(&up);
    let parts = up.physical_tables(pt);
    up.rename_table(2, pt, "test2", "t2").unwrap();
    let ts_rename = ts(&up);
    let moves: Vec<_> = parts.iter().map(|p| (*p, test, test2)).collect();
    // fetchTableDDLEvents(301, 1010, 1020).
    assert_eq!(
        fetch_table(&up, parts[0], ts_create, ts_rename),
        vec![ev(DdlKind::RenameTable, &[vec![D], parts.clone()].concat()).moved(&moves)]
    );
    for p in &parts {
        assert_eq!(table_history(&up, *p, ts_create), vec![ts_rename]);
    }
    assert_eq!(trigger_history(&up, 0), vec![ts_create, ts_rename]);
    // tableMap {300: test2.t2}, partitionMap {300: {301, 302, 303}}.
    let p = &up.partitioned[&pt];
    assert_eq!((p.schema_id, p.name.as_str(), p.partitions.clone()), (test2, "t2", parts));
}

// persist_storage_test.go:1318 TestApplyDDLJobs "rename_tables" (the unfiltered fetch).
#[test]
fn ticdc_persist_storage_TestApplyDDLJobs_rename_tables() {
    let mut up = Upstream::new();
    let test = up.schema_id("test");
    let test2 = up.schema_id("test2");
    let t1 = up.create_table(1, "test", "t1", 1);
    let t2 = up.create_table(1, "test", "t2", 1);
    let base = ts(&up);
    up.rename_tables(2, &[(t1, "test".into(), "t101".into()), (t2, "test2".into(), "t102".into())]).unwrap();
    let ts_rename = ts(&up);
    // fetchTableDDLEvents(200, 1000, 1010).
    assert_eq!(
        fetch_table(&up, t1, base, ts_rename),
        vec![ev(DdlKind::RenameTables, &[D, t1, t2]).moved(&[(t2, test, test2)])]
    );
    assert_eq!(table_history(&up, t1, base), vec![ts_rename]);
    assert_eq!(table_history(&up, t2, base), vec![ts_rename]);
    assert_eq!(trigger_history(&up, base), vec![ts_rename]);
    // tableMap {200: test.t101, 201: test2.t102}.
    assert_eq!((up.tables[&t1].schema_id, up.tables[&t1].name.as_str()), (test, "t101"));
    assert_eq!((up.tables[&t2].schema_id, up.tables[&t2].name.as_str()), (test2, "t102"));
}

// persist_storage_test.go:1559 TestApplyDDLJobs "rename_tables_to_swap_names".
#[test]
fn ticdc_persist_storage_TestApplyDDLJobs_rename_tables_to_swap_names() {
    let mut up = Upstream::new();
    let test = up.schema_id("test");
    let t1 = up.create_table(1, "test", "t1", 1);
    let t2 = up.create_table(1, "test", "t2", 1);
    let base = ts(&up);
    up.rename_tables(2, &[(t1, "test".into(), "t2".into()), (t2, "test".into(), "t1".into())]).unwrap();
    let ts_rename = ts(&up);
    assert_eq!(fetch_table(&up, t1, base, ts_rename), vec![ev(DdlKind::RenameTables, &[D, t1, t2])]);
    assert_eq!(table_history(&up, t2, base), vec![ts_rename]);
    assert_eq!(trigger_history(&up, base), vec![ts_rename]);
    assert_eq!((up.tables[&t1].schema_id, up.tables[&t1].name.as_str()), (test, "t2"));
    assert_eq!((up.tables[&t2].schema_id, up.tables[&t2].name.as_str()), (test, "t1"));
}

// persist_storage_test.go:1753 TestApplyDDLJobs "create_tables" (the unfiltered fetch; the
// second job's query rewriting and the filtered fetch are not expressible).
#[test]
fn ticdc_persist_storage_TestApplyDDLJobs_create_tables() {
    let mut up = Upstream::new();
    let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let a = up.create_tables(1, "test", &names(&["t1", "t2", "t3"]), 1).unwrap();
    let ts_a = ts(&up);
    let b = up.create_tables(2, "test", &names(&["t4", "t5"]), 1).unwrap();
    let ts_b = ts(&up);
    let sid = up.schemas["test"];
    assert_eq!(
        fetch_trigger(&up, 0),
        vec![ev(DdlKind::CreateTables, &[D]).added(sid, &a), ev(DdlKind::CreateTables, &[D]).added(sid, &b)]
    );
    // tablesDDLHistory: each table only its CREATE TABLES.
    for t in &a {
        assert_eq!(table_history(&up, *t, ts_a), Vec::<Ts>::new());
    }
    assert_eq!(trigger_history(&up, 0), vec![ts_a, ts_b]);
    assert_eq!(physical(&up, ts_b), sorted([a, b].concat()));
}

// persist_storage_test.go:2283 TestApplyDDLJobs "trivial_ddls": its ADD COLUMN (the job at
// 1090), the one DDL of the entry the model has. It blocks the table alone and only the
// table gets it (tableTriggerDDLHistory holds the views' DDLs only).
#[test]
fn ticdc_persist_storage_TestApplyDDLJobs_trivial_ddls_add_column() {
    let mut up = Upstream::new();
    let t = up.create_table(1, "test", "t1", 1);
    let base = ts(&up);
    up.add_column(2, t);
    let ts_add = ts(&up);
    assert_eq!(last(&up), ev(DdlKind::AddColumn, &[t]));
    assert_eq!(table_history(&up, t, base), vec![ts_add]);
    assert_eq!(trigger_history(&up, base), Vec::<Ts>::new());
}

// TestBuildDDLEventForRenameTablesForPartitionTable (persist_storage_test.go:3842): the
// blocked tables and schema moves of a RENAME TABLES, in rename order (Go compares them in
// order here). The per-dispatcher `TableInfo` it checks too is not modelled.

/// RENAME TABLES of `renames` (source database, table, partitions or 0 for a normal table,
/// target database); returns each table's physical IDs and the source and target schema IDs.
fn rename_tables_case(renames: &[(&str, &str, usize, &str)]) -> (Upstream, Vec<(Vec<TableId>, SchemaId, SchemaId)>) {
    let mut up = Upstream::new();
    let mut list = Vec::new();
    let mut out = Vec::new();
    for (i, (from, name, parts, to)) in renames.iter().enumerate() {
        let (src, dst) = (up.schema_id(from), up.schema_id(to));
        let id = if *parts == 0 {
            up.create_table(1, from, name, 1)
        } else {
            up.create_partition_table(1, from, name, *parts, 1).unwrap()
        };
        list.push((id, to.to_string(), format!("{}_new_{}", name, i)));
        out.push((up.physical_tables(id), src, dst));
    }
    up.rename_tables(2, &list).unwrap();
    (up, out)
}

fn expect_rename_tables(up: &Upstream, tables: &[(Vec<TableId>, SchemaId, SchemaId)]) {
    let d = up.ddls.last().unwrap();
    let blocked: Vec<TableId> = std::iter::once(D).chain(tables.iter().flat_map(|t| t.0.clone())).collect();
    assert_eq!(d.blocked_tables.table_ids, blocked);
    let moves: Vec<SchemaIdChange> = tables
        .iter()
        .flat_map(|(ids, src, dst)| {
            ids.iter().map(|t| SchemaIdChange { table_id: *t, old_schema_id: *src, new_schema_id: *dst })
        })
        .collect();
    assert_eq!(d.updated_schemas, moves);
}

// persist_storage_test.go:3853 TestBuildDDLEventForRenameTablesForPartitionTable "normal table then partition table".
#[test]
fn ticdc_persist_storage_TestBuildDDLEventForRenameTablesForPartitionTable_normal_then_partition() {
    let (up, t) = rename_tables_case(&[
        ("source_normal", "normal_old", 0, "target_normal"),
        ("source_partition", "partition_old", 2, "target_partition"),
    ]);
    expect_rename_tables(&up, &t);
}

// persist_storage_test.go:3889 TestBuildDDLEventForRenameTablesForPartitionTable "partition table then normal table".
#[test]
fn ticdc_persist_storage_TestBuildDDLEventForRenameTablesForPartitionTable_partition_then_normal() {
    let (up, t) = rename_tables_case(&[
        ("source_partition", "partition_old", 2, "target_partition"),
        ("source_normal", "normal_old", 0, "target_normal"),
    ]);
    expect_rename_tables(&up, &t);
}

// persist_storage_test.go:3925 TestBuildDDLEventForRenameTablesForPartitionTable "multiple partition tables".
#[test]
fn ticdc_persist_storage_TestBuildDDLEventForRenameTablesForPartitionTable_multiple_partition_tables() {
    let (up, t) = rename_tables_case(&[
        ("source_partition", "partition_old", 2, "target_partition"),
        ("source_partition_2", "partition_old_2", 2, "target_partition_2"),
    ]);
    expect_rename_tables(&up, &t);
}

// TestGetAllPhysicalTablesReplaysTopologyChangingDDL (persist_storage_test.go:4467): the
// physical tables as of the DDL's ts (Go checks again after a reload from disk; the model
// keeps no disk state).

// persist_storage_test.go:4476 TestGetAllPhysicalTablesReplaysTopologyChangingDDL "drop schema".
#[test]
fn ticdc_persist_storage_TestGetAllPhysicalTablesReplaysTopologyChangingDDL_drop_schema() {
    let mut up = Upstream::new();
    up.create_database(1, "test").unwrap();
    up.create_table(1, "test", "t", 1);
    up.create_partition_table(1, "test", "pt", 2, 1).unwrap();
    up.drop_database(2, "test").unwrap();
    assert_eq!(physical(&up, ts(&up)), Vec::<TableId>::new());
}

// persist_storage_test.go:4491 TestGetAllPhysicalTablesReplaysTopologyChangingDDL "exchange partition".
#[test]
fn ticdc_persist_storage_TestGetAllPhysicalTablesReplaysTopologyChangingDDL_exchange_partition() {
    let mut up = Upstream::new();
    let pt = up.create_partition_table(1, "test", "pt", 3, 1).unwrap();
    let parts = up.physical_tables(pt);
    let t = up.create_table(1, "test2", "t", 1);
    up.exchange_partition(2, pt, 2, t).unwrap();
    assert_eq!(physical(&up, ts(&up)), sorted([parts, vec![t]].concat()));
}

// persist_storage_test.go:4511 TestGetAllPhysicalTablesReplaysTopologyChangingDDL "rename tables".
#[test]
fn ticdc_persist_storage_TestGetAllPhysicalTablesReplaysTopologyChangingDDL_rename_tables() {
    let mut up = Upstream::new();
    let t1 = up.create_table(1, "test", "t1", 1);
    let t2 = up.create_table(1, "test", "t2", 1);
    up.rename_tables(2, &[(t1, "test".into(), "t1_new".into()), (t2, "test".into(), "t2_new".into())]).unwrap();
    assert_eq!(physical(&up, ts(&up)), vec![t1, t2]);
}

// persist_storage_test.go:4530 TestGetAllPhysicalTablesReplaysTopologyChangingDDL "create tables".
#[test]
fn ticdc_persist_storage_TestGetAllPhysicalTablesReplaysTopologyChangingDDL_create_tables() {
    let mut up = Upstream::new();
    let ids = up.create_tables(1, "test", &["t1".into(), "t2".into()], 1).unwrap();
    assert_eq!(physical(&up, ts(&up)), ids);
}

// persist_storage_test.go:4541 TestGetAllPhysicalTablesReplaysTopologyChangingDDL "reorganize
// partition": partitions 202 and 203 become 204 and 205.
#[test]
fn ticdc_persist_storage_TestGetAllPhysicalTablesReplaysTopologyChangingDDL_reorganize_partition() {
    let mut up = Upstream::new();
    let pt = up.create_partition_table(1, "test", "pt", 3, 1).unwrap();
    let p1 = up.physical_tables(pt)[0];
    up.reorganize_partition(2, pt, &[1, 2], 2).unwrap();
    let now = up.physical_tables(pt);
    assert_eq!(now.len(), 3);
    assert_eq!(now[0], p1);
    assert_eq!(physical(&up, ts(&up)), sorted(now));
}

// persist_storage_test.go:4610 TestRegisteredTableInfoForComplexDDL "rename tables": the
// table info of a normal table and of both partitions after a RENAME TABLES (the other two
// sub-cases, ALTER TABLE ... PARTITION BY and REMOVE PARTITIONING, are not modelled).
#[test]
fn ticdc_persist_storage_TestRegisteredTableInfoForComplexDDL_rename_tables() {
    let mut up = Upstream::new();
    let t1 = up.create_table(1, "test", "t1", 1);
    let pt = up.create_partition_table(1, "test", "pt", 2, 1).unwrap();
    let parts = up.physical_tables(pt);
    up.rename_tables(2, &[(t1, "test".into(), "t1_new".into()), (pt, "test".into(), "pt_new".into())]).unwrap();
    let at = ts(&up);
    assert_eq!(info_at(&up, t1, at), named("test", "t1_new"));
    assert_eq!(info_at(&up, parts[0], at), named("test", "pt_new"));
    assert_eq!(info_at(&up, parts[1], at), named("test", "pt_new"));
}

// TestBuildSchemaAndViewDDLEvents (persist_storage_test.go:4673): the two schema DDLs (the
// view DDLs and the filter half are not expressible).

// persist_storage_test.go:4683 TestBuildSchemaAndViewDDLEvents "drop schema".
#[test]
fn ticdc_persist_storage_TestBuildSchemaAndViewDDLEvents_drop_schema() {
    let mut up = Upstream::new();
    let sid = up.create_database(1, "test").unwrap();
    up.drop_database(2, "test").unwrap();
    let d = up.ddls.last().unwrap();
    assert_eq!((d.blocked_tables.influence_type, d.blocked_tables.schema_id), (InfluenceType::Db, sid));
    let dropped = d.need_dropped_tables.as_ref().unwrap();
    assert_eq!((dropped.influence_type, dropped.schema_id), (InfluenceType::Db, sid));
    assert_eq!(d.schema_name, "test");
}

// persist_storage_test.go:4693 TestBuildSchemaAndViewDDLEvents "modify schema charset".
#[test]
fn ticdc_persist_storage_TestBuildSchemaAndViewDDLEvents_modify_schema_charset() {
    let mut up = Upstream::new();
    let sid = up.create_database(1, "test").unwrap();
    up.alter_database(2, "test").unwrap();
    let d = up.ddls.last().unwrap();
    assert_eq!(d.kind, DdlKind::AlterDatabase);
    assert_eq!((d.blocked_tables.influence_type, d.blocked_tables.schema_id), (InfluenceType::Db, sid));
    assert!(d.need_dropped_tables.is_none());
}

// TestBuildVersionedTableInfoStore (multi_version_test.go:24): a physical table's database
// and name as of a ts, or that it is dropped then (`deleteVersion`).

// multi_version_test.go:39 TestBuildVersionedTableInfoStore "truncate table".
#[test]
fn ticdc_multi_version_TestBuildVersionedTableInfoStore_truncate_table() {
    let mut up = Upstream::new();
    let t = up.create_table(1, "test", "t", 1);
    let created = ts(&up);
    up.truncate_table(2, t);
    assert_eq!(info_at(&up, t, created), named("test", "t"));
    assert_eq!(up.tables[&t].dropped_ts, Some(ts(&up)));
    assert_eq!(info_at(&up, t, ts(&up)), None);
}

// multi_version_test.go:57 TestBuildVersionedTableInfoStore "truncate partition table 1":
// an old partition; :75 "truncate partition table 2": a new one.
#[test]
fn ticdc_multi_version_TestBuildVersionedTableInfoStore_truncate_partition_table() {
    let mut up = Upstream::new();
    let pt = up.create_partition_table(1, "test", "t", 3, 1).unwrap();
    let created = ts(&up);
    let old = up.physical_tables(pt)[0];
    let pt2 = up.truncate_table(2, pt);
    let at = ts(&up);
    let new = up.physical_tables(pt2)[0];
    assert_eq!(info_at(&up, old, created), named("test", "t"));
    assert_eq!(up.tables[&old].dropped_ts, Some(at));
    assert_eq!(info_at(&up, new, at), named("test", "t"));
}

// multi_version_test.go:91 TestBuildVersionedTableInfoStore "drop partition table".
#[test]
fn ticdc_multi_version_TestBuildVersionedTableInfoStore_drop_partition_table() {
    let mut up = Upstream::new();
    let pt = up.create_partition_table(1, "test", "t", 3, 1).unwrap();
    let created = ts(&up);
    let p = up.physical_tables(pt)[0];
    up.drop_table(2, pt);
    assert_eq!(info_at(&up, p, created), named("test", "t"));
    assert_eq!(info_at(&up, p, ts(&up)), None);
}

// multi_version_test.go:108 TestBuildVersionedTableInfoStore "rename table": the name before
// the RENAME at an older ts.
#[test]
fn ticdc_multi_version_TestBuildVersionedTableInfoStore_rename_table() {
    let mut up = Upstream::new();
    let t = up.create_table(1, "test", "t", 1);
    let t = up.truncate_table(2, t);
    let truncated = ts(&up);
    up.rename_table(3, t, "test", "t2").unwrap();
    assert_eq!(info_at(&up, t, truncated), named("test", "t"));
    assert_eq!(info_at(&up, t, ts(&up)), named("test", "t2"));
}

// multi_version_test.go:131 TestBuildVersionedTableInfoStore "exchange partition for partition
// table": the partition takes the normal table's database and name.
#[test]
fn ticdc_multi_version_TestBuildVersionedTableInfoStore_exchange_partition_for_partition_table() {
    let mut up = Upstream::new();
    let pt = up.create_partition_table(1, "test", "partition_table", 3, 1).unwrap();
    let created = ts(&up);
    let p = up.physical_tables(pt)[0];
    let n = up.create_table(2, "test2", "normal_table", 1);
    up.exchange_partition(3, pt, 0, n).unwrap();
    assert_eq!(info_at(&up, p, created), named("test", "partition_table"));
    assert_eq!(info_at(&up, p, ts(&up)), named("test2", "normal_table"));
}

// multi_version_test.go:154 TestBuildVersionedTableInfoStore "exchange partition for normal
// table": the normal table becomes a partition of the partitioned table.
#[test]
fn ticdc_multi_version_TestBuildVersionedTableInfoStore_exchange_partition_for_normal_table() {
    let mut up = Upstream::new();
    let n = up.create_table(1, "test", "normal_table", 1);
    let created = ts(&up);
    let pt = up.create_partition_table(2, "test2", "partition_table", 3, 1).unwrap();
    up.exchange_partition(3, pt, 0, n).unwrap();
    assert_eq!(info_at(&up, n, created), named("test", "normal_table"));
    assert_eq!(info_at(&up, n, ts(&up)), named("test2", "partition_table"));
}

// multi_version_test.go:177 TestBuildVersionedTableInfoStore "recover table": dropped,
// recovered under its ID, dropped again.
#[test]
fn ticdc_multi_version_TestBuildVersionedTableInfoStore_recover_table() {
    let mut up = Upstream::new();
    let t = up.create_table(1, "test", "normal_table", 1);
    let created = ts(&up);
    up.drop_table(2, t);
    let dropped = ts(&up);
    assert_eq!(up.recover_table(3, "test", "normal_table").unwrap(), t);
    let recovered = ts(&up);
    up.drop_table(4, t);
    assert_eq!(info_at(&up, t, created), named("test", "normal_table"));
    assert_eq!(info_at(&up, t, dropped), None);
    assert_eq!(info_at(&up, t, recovered), named("test", "normal_table"));
    assert_eq!(info_at(&up, t, ts(&up)), None);
    // RECOVER TABLE is built as CREATE TABLE (persist_storage_ddl_handlers.go:345-353).
    let sid = up.schemas["test"];
    assert_eq!(fetch_trigger(&up, dropped)[0], ev(DdlKind::RecoverTable, &[D]).added(sid, &[t]));
}

// TestRegisterTable (persist_storage_test.go:2702): a table's info as of a ts, whether it
// was registered before or after the DDLs (the model's store keeps every version, there
// is nothing to register) and after a reload from disk (no disk state in the model).

// persist_storage_test.go:2722 TestRegisterTable "create table registered before DDL".
#[test]
fn ticdc_persist_storage_TestRegisterTable_create_table() {
    let mut up = Upstream::new();
    let t = up.create_table(1, "test", "t1", 1);
    assert_eq!(info_at(&up, t, ts(&up)), named("test", "t1"));
}

// persist_storage_test.go:2744 TestRegisterTable "create tables registered before DDL".
#[test]
fn ticdc_persist_storage_TestRegisterTable_create_tables() {
    let mut up = Upstream::new();
    let ids = up.create_tables(1, "test", &["t1".into(), "t2".into()], 1).unwrap();
    assert_eq!(info_at(&up, ids[0], ts(&up)), named("test", "t1"));
    assert_eq!(info_at(&up, ids[1], ts(&up)), named("test", "t2"));
}

// persist_storage_test.go:2771 TestRegisterTable "rename table": the old name before the RENAME.
#[test]
fn ticdc_persist_storage_TestRegisterTable_rename_table() {
    let mut up = Upstream::new();
    let t = up.create_table(1, "test", "t1", 1);
    let before = ts(&up);
    up.rename_table(2, t, "test", "t2").unwrap();
    assert_eq!(info_at(&up, t, before), named("test", "t1"));
    assert_eq!(info_at(&up, t, ts(&up)), named("test", "t2"));
}

// persist_storage_test.go:2806 TestRegisterTable "truncate table".
#[test]
fn ticdc_persist_storage_TestRegisterTable_truncate_table() {
    let mut up = Upstream::new();
    let t = up.create_table(1, "test", "t3", 1);
    let created = ts(&up);
    let new = up.truncate_table(2, t);
    assert_eq!(info_at(&up, t, created), named("test", "t3"));
    assert_eq!(info_at(&up, new, ts(&up)), named("test", "t3"));
}

// persist_storage_test.go:2836 TestRegisterTable "create partition table".
#[test]
fn ticdc_persist_storage_TestRegisterTable_create_partition_table() {
    let mut up = Upstream::new();
    let pt = up.create_partition_table(1, "test", "t4", 3, 1).unwrap();
    for p in up.physical_tables(pt) {
        assert_eq!(info_at(&up, p, ts(&up)), named("test", "t4"));
    }
}

// persist_storage_test.go:2870 TestRegisterTable "drop partition table".
#[test]
fn ticdc_persist_storage_TestRegisterTable_drop_partition_table() {
    let mut up = Upstream::new();
    let pt = up.create_partition_table(1, "test", "t1", 3, 1).unwrap();
    let parts = up.physical_tables(pt);
    up.drop_table(2, pt);
    let at = ts(&up);
    for p in &parts {
        assert_eq!(info_at(&up, *p, at - 1), named("test", "t1"));
    }
    assert_eq!(info_at(&up, parts[0], at), None);
}

// persist_storage_test.go:2916 TestRegisterTable "drop schema".
#[test]
fn ticdc_persist_storage_TestRegisterTable_drop_schema() {
    let mut up = Upstream::new();
    up.create_database(1, "test").unwrap();
    let t1 = up.create_table(1, "test", "t1", 1);
    let t2 = up.create_table(1, "test", "t2", 1);
    let pt = up.create_partition_table(1, "test", "pt", 2, 1).unwrap();
    up.drop_database(2, "test").unwrap();
    let at = ts(&up);
    assert_eq!(info_at(&up, t1, at - 1), named("test", "t1"));
    for t in [vec![t1, t2], up.physical_tables(pt)].concat() {
        assert_eq!(info_at(&up, t, at), None);
    }
}
