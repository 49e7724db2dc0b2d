//! External storage as the sink sees it: requests land after a seeded latency (or a seeded
//! transient failure) and their results go back to the issuing node's sink.

use super::*;
use crate::storage::Storage;
use core_sched::effects::*;
use core_sched::types::*;
use rand::Rng;
use std::time::Duration;

/// Carry out a storage request issued by node `n` (completions return to that node).
pub(crate) fn storage_request(w: &W, wd: &mut World, n: NodeId, req: StorageRequest) {
    if wd.redo_on {
        check_beyond_redo(wd, n, &req);
    }
    match req {
        StorageRequest::Delete { paths } => {
            // The cleanup is a storage operation like any other: it lands after its own
            // latency, so it can fall between a flush's put and its rename.
            let lat = storage_latency(wd);
            let w2 = w.clone();
            let node = n.to_string();
            spawn_on(wd, n, async move {
                madsim::time::sleep(Duration::from_millis(lat)).await;
                let mut g = w2.lock().unwrap();
                g.now_ms = now_ms();
                g.storage.delete(&paths);
                g.record(&node, "Storage", 0, "delete temporary objects", vec![("paths".into(), paths.join(","))]);
            });
        }
        StorageRequest::Put { op_id, content: ObjectContent::Rows(_), .. }
            if wd.failpoints[n.0 as usize].on(FP_MYSQL_SINK_HANG_LONG_TIME) =>
        {
            // `util.Hang(ctx, time.Hour)` in the DML writer: a row write waits until the writer's context is
            // cancelled (the capture's local fence cancels it, see `session`).
            let gen = wd.nodes[n.0 as usize].generation;
            wd.hung_storage.push((n, gen, op_id));
            wd.record(
                &n.to_string(),
                "Sink",
                0,
                "inject MySQLSinkHangLongTime",
                vec![("op_id".into(), op_id.to_string())],
            );
        }
        StorageRequest::Put { op_id, path, content } => {
            let lat = storage_latency(wd);
            if storage_fails(wd) {
                complete_storage_later(w, wd, n, op_id, lat, move |_| Err(StorageError::Transient(path)));
            } else {
                complete_storage_later(w, wd, n, op_id, lat, move |st| st.put(&path, content));
            }
        }
        StorageRequest::ListRedoMeta { op_id, dir } => {
            // `initMeta`'s walk and reads, as one operation of one latency.
            let lat = storage_latency(wd);
            let fails = storage_fails(wd);
            let w2 = w.clone();
            let gen = wd.nodes[n.0 as usize].generation;
            spawn_on(wd, n, async move {
                madsim::time::sleep(Duration::from_millis(lat)).await;
                let res = {
                    let g = w2.lock().unwrap();
                    if fails {
                        Err(StorageError::Transient(dir))
                    } else {
                        Ok(g.storage.redo_metas(&dir))
                    }
                };
                step(&w2, n, Some(gen), StepKind::Storage, move |ns, ctx, _, _| {
                    for dm in ns.orch.managers.values_mut() {
                        if dm.sink.instance == instance_of(op_id) {
                            dm.on_redo_meta_listed(ctx, op_id, res);
                            break;
                        }
                    }
                });
            });
        }
        StorageRequest::Rename { op_id, from, to } => {
            let lat = storage_latency(wd);
            if storage_fails(wd) {
                complete_storage_later(w, wd, n, op_id, lat, move |_| Err(StorageError::Transient(to)));
            } else {
                complete_storage_later(w, wd, n, op_id, lat, move |st| st.rename(&from, &to).map(|_| ()));
            }
        }
    }
}

/// `no-write-beyond-redo` when an event dispatcher's write is issued.
fn check_beyond_redo(wd: &mut World, n: NodeId, req: &StorageRequest) {
    let found = match req {
        StorageRequest::Put { content: ObjectContent::Rows(rows), .. } => {
            crate::checkers::writes_beyond_redo(n, &wd.storage, rows, None)
        }
        StorageRequest::Put { content: ObjectContent::Ddl(d), .. } => {
            crate::checkers::writes_beyond_redo(n, &wd.storage, &[], Some(d))
        }
        _ => return,
    };
    for (inv, d) in found {
        wd.violate(inv, d);
    }
}

/// Latency of one storage operation, drawn from the seed.
pub(crate) fn storage_latency(wd: &mut World) -> u64 {
    let [lo, hi] = wd.storage_latency_ms;
    wd.sim_rng.random_range(lo..=hi.max(lo))
}

/// Draw an opt-in transient storage failure (no draw at all when it is off).
pub(crate) fn storage_fails(wd: &mut World) -> bool {
    if wd.storage_error > 0.0 && wd.storage_errors < wd.storage_error_budget && wd.sim_rng.random_bool(wd.storage_error)
    {
        wd.storage_errors += 1;
        return true;
    }
    false
}

/// Apply a storage operation after `lat` ms on node `n`, then hand its result back to
/// the node's sink (if the node was not restarted meanwhile).
pub(crate) fn complete_storage_later(
    w: &W,
    wd: &World,
    n: NodeId,
    op_id: u64,
    lat: u64,
    op: impl FnOnce(&mut Storage) -> Result<(), StorageError> + Send + 'static,
) {
    let w2 = w.clone();
    let gen = wd.nodes[n.0 as usize].generation;
    spawn_on(wd, n, async move {
        madsim::time::sleep(Duration::from_millis(lat)).await;
        let res = {
            let mut g = w2.lock().unwrap();
            let r = op(&mut g.storage);
            record_ddl_ts(&mut g);
            check_writes_after_drop(&mut g);
            check_durable_ddls(&mut g);
            r
        };
        storage_done(&w2, n, gen, op_id, res);
    });
}

pub fn storage_done(w: &W, n: NodeId, gen: u64, op_id: u64, res: Result<(), StorageError>) {
    step(w, n, Some(gen), StepKind::Storage, |ns, ctx, _, _| {
        for dm in ns.orch.managers.values_mut() {
            if dm.sink.instance == instance_of(op_id) {
                dm.on_storage_result(ctx, op_id, res);
                break;
            }
        }
    });
}

/// The sink instance an op id names (its high bits mark the redo writers' ops).
fn instance_of(op_id: u64) -> u64 {
    (op_id >> 32) & 0x3fff_ffff
}

pub(crate) fn spawn_on(wd: &World, n: NodeId, fut: impl std::future::Future<Output = ()> + Send + 'static) {
    // Look the node up afresh: a restarted node has a new task table, and a handle
    // taken before the kill would spawn into the dead one.
    let h = wd.node_handles[n.0 as usize].as_ref().and_then(|h| madsim::runtime::Handle::current().get_node(h.id()));
    match h {
        Some(h) => {
            h.spawn(fut);
        }
        None => {
            madsim::task::spawn(fut);
        }
    }
}

/// The MySQL sink's `ddl_ts` rows after block-event writes (`SendDDLTsPre`/`SendDDLTs`,
/// `mysql_writer_for_ddl_ts.go`): a syncpoint updates the reserved row; a DDL writes a
/// row for every table it blocks (a DB event: the schema's tables, an All event: every
/// table, the DDL span included) and every table it adds, and its finish deletes the rows
/// of the tables it drops. The latest write wins, as the writer's upsert.
pub fn record_ddl_ts(wd: &mut World) {
    use core_sched::messages::InfluenceType;
    use core_sched::sink::ddl_ts::DdlTsRow;
    for (ts, finished, is_syncpoint) in std::mem::take(&mut wd.storage.new_ddl_ts) {
        let row = DdlTsRow { ddl_ts: ts, finished, is_syncpoint };
        if is_syncpoint {
            wd.storage.ddl_ts_sync_point = Some(row);
            continue;
        }
        let Some(ev) = wd.upstream.ddl_at(ts) else { continue };
        // Every life of the table (a table dropped and recovered after `ts` was live at it).
        let alive = |t: &crate::upstream::UTable| t.seen_by_ddl_at(ts);
        let mut tables: Vec<TableId> = match ev.blocked_tables.influence_type {
            InfluenceType::Normal => ev.blocked_tables.table_ids.clone(),
            InfluenceType::Db => std::iter::once(DDL_SPAN_TABLE_ID)
                .chain(
                    wd.upstream
                        .tables
                        .values()
                        .filter(|t| t.schema_at(ts) == ev.blocked_tables.schema_id && alive(t))
                        .map(|t| t.id),
                )
                .collect(),
            InfluenceType::All => std::iter::once(DDL_SPAN_TABLE_ID)
                .chain(wd.upstream.tables.values().filter(|t| alive(t)).map(|t| t.id))
                .collect(),
        };
        tables.extend(ev.need_added_tables.iter().map(|t| t.table_id));
        let dropped: Vec<TableId> = match (&ev.need_dropped_tables, finished) {
            (Some(d), true) if d.influence_type == InfluenceType::Normal => d.table_ids.clone(),
            (Some(d), true) if d.influence_type == InfluenceType::Db => wd
                .upstream
                .tables
                .values()
                .filter(|t| t.schema_at(ts) == d.schema_id && alive(t))
                .map(|t| t.id)
                .collect(),
            _ => vec![],
        };
        for t in tables {
            wd.storage.ddl_ts.insert(t, row);
        }
        for t in dropped {
            wd.storage.ddl_ts.remove(&t);
        }
    }
}
