//! The redo log's promises (`consistent.level = "eventual"`):
//!
//! - `no-write-beyond-redo`: an event dispatcher writes a row or a DDL downstream only
//!   once the redo log holds it durably (event dispatchers are held below the redo global
//!   ts, which the maintainer forwards from the flushed redo meta).
//! - `redo-meta-durable`: a durable redo meta `(checkpoint, resolved)` is a recovery point:
//!   its checkpoint is at most its resolved ts, every upstream change after the changefeed
//!   start and at or below the resolved ts (every DDL below it) is in the redo log, and
//!   every change at or below the checkpoint (every DDL below it) is durable downstream.
//!   Applying the redo log above the checkpoint to the downstream then yields the
//!   upstream at the resolved ts.

use super::*;
use crate::storage::Storage;
use crate::upstream::Upstream;
use core_sched::types::*;
use core_sched::upstream::{DdlRecord, RowChange};
use std::collections::BTreeMap;

/// Rows or a DDL an event dispatcher hands to the downstream that the redo log does not
/// hold durably yet.
pub fn writes_beyond_redo(
    n: NodeId,
    st: &Storage,
    rows: &[RowChange],
    ddl: Option<&DdlRecord>,
) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(r) = rows.iter().find(|r| !st.redo_rows.contains(&(r.table_id, r.commit_ts, r.key))) {
        out.push((
            NO_WRITE_BEYOND_REDO,
            format!(
                "capture {} writes table {} row key={} commit_ts={} downstream before the redo log holds it",
                n, r.table_id, r.key, r.commit_ts
            ),
        ));
    }
    if let Some(d) = ddl.filter(|d| !st.redo_ddls.contains(&d.commit_ts)) {
        out.push((
            NO_WRITE_BEYOND_REDO,
            format!(
                "capture {} writes DDL `{}` at {} downstream before the redo log holds it",
                n, d.query, d.commit_ts
            ),
        ));
    }
    out
}

/// Incremental `redo-meta-durable`: per table, how far the upstream change list is verified
/// against the redo log (up to the resolved ts) and against the downstream (up to the
/// checkpoint).
#[derive(Debug, Default)]
pub struct RedoMetaChecker {
    redo_rows: BTreeMap<TableId, usize>,
    redo_ddls: usize,
    last_resolved: Ts,
    downstream: DataLossChecker,
}

impl RedoMetaChecker {
    /// A redo meta `(cp, rs)` became durable.
    pub fn on_meta(
        &mut self,
        up: &Upstream,
        st: &Storage,
        start_ts: Ts,
        cp: Ts,
        rs: Ts,
    ) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if cp > rs {
            out.push((REDO_META_DURABLE, format!("redo meta checkpoint {} is above its resolved ts {}", cp, rs)));
        }
        for (_, d) in self.downstream.advance(up, st, start_ts, cp, None) {
            out.push((REDO_META_DURABLE, format!("redo meta checkpoint {}: {}", cp, d)));
        }
        if rs <= self.last_resolved {
            return out;
        }
        self.last_resolved = rs;
        while self.redo_ddls < up.ddls.len() && up.ddls[self.redo_ddls].commit_ts < rs {
            let d = &up.ddls[self.redo_ddls];
            self.redo_ddls += 1;
            if d.commit_ts > start_ts && !st.redo_ddls.contains(&d.commit_ts) {
                out.push((
                    REDO_META_DURABLE,
                    format!(
                        "DDL `{}` at {} is below the redo meta resolved ts {} but not in the redo log",
                        d.query, d.commit_ts, rs
                    ),
                ));
                break;
            }
        }
        // A table dropped upstream since counts too (as for `no-data-loss`).
        for (t, changes) in &up.changes {
            if !up.tables.contains_key(t) {
                continue;
            }
            let i = self.redo_rows.entry(*t).or_insert(0);
            while *i < changes.len() && changes[*i].commit_ts <= rs {
                let c = &changes[*i];
                *i += 1;
                if c.commit_ts > start_ts && !st.redo_rows.contains(&(c.table_id, c.commit_ts, c.key)) {
                    out.push((
                        REDO_META_DURABLE,
                        format!(
                            "table {} row key={} commit_ts={} is at or below the redo meta resolved ts {} but not in the redo log",
                            t, c.key, c.commit_ts, rs
                        ),
                    ));
                    break;
                }
            }
        }
        out
    }
}

/// `redo_apply`: TiCDC's `redo apply` on the downstream, then sync-diff. The meta is the
/// highest checkpoint and the highest resolved ts over every redo meta file of the
/// changefeed (`ParseMeta`, pkg/redo/common/redo_meta.go:40-51, as the redo reader reads
/// them, pkg/redo/reader/reader.go:270-307); the redo log's rows with a commit ts in
/// (checkpoint, resolved] are applied over the downstream at the checkpoint in commit-ts
/// order, and every table that exists upstream at the resolved ts must then equal the
/// upstream at that ts. The downstream is cut at the checkpoint (what the meta promises
/// it holds), so a row above it counts only if the redo log has it, and rows the event
/// dispatchers wrote past the resolved ts do not count against it.
/// Returns the check's label and `Ok(detail)` or `Err(what differs)`.
pub fn redo_apply(up: &Upstream, st: &Storage, cf: &ChangefeedId) -> (String, Result<String, String>) {
    let metas = st.redo_metas(&format!("redo/{}", cf));
    if metas.is_empty() {
        return ("redo_apply".into(), Err("no redo meta file downstream (ErrRedoMetaFileNotFound)".into()));
    }
    let cp = metas.iter().map(|(_, m)| m.checkpoint_ts).max().unwrap_or(0);
    let rs = metas.iter().map(|(_, m)| m.resolved_ts).max().unwrap_or(0);
    let check = format!("redo_apply checkpoint={} resolved={}", cp, rs);
    let log = st.redo_log_rows();
    let mut bad = Vec::new();
    for t in up.tables.values().filter(|t| up.table_exists_at(t.id, rs)) {
        let above: Vec<&RowChange> =
            log.get(&t.id).into_iter().flatten().copied().filter(|r| r.commit_ts > cp && r.commit_ts <= rs).collect();
        let applied = st.table_rows_upto_with(t.id, cp, &above);
        let want = up.rows_at(t.id, rs);
        if want != applied {
            let missing = want.iter().filter(|(k, v)| applied.get(k) != Some(v)).count();
            let extra = applied.keys().filter(|k| !want.contains_key(k)).count();
            bad.push(format!("{}: {} rows differ or missing, {} extra", t.name, missing, extra));
        }
    }
    let result = if bad.is_empty() {
        Ok(format!("the redo log applied over the downstream equals the upstream at {}", rs))
    } else {
        Err(bad.join("; "))
    };
    (check, result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use core_sched::effects::ObjectContent;
    use core_sched::upstream::RowOp;
    use rand::SeedableRng;

    /// An upstream with table t1 created at 10 ms and three inserts at 20 ms.
    fn upstream() -> (Upstream, TableId, Vec<RowChange>) {
        let mut up = Upstream::new();
        let t = up.create_table(10, "test", "t1", 1);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        up.dml(20, t, 3, RowOp::Insert, &mut rng);
        let rows = up.changes[&t].clone();
        (up, t, rows)
    }

    #[test]
    fn a_downstream_write_needs_its_rows_and_ddl_in_the_redo_log() {
        let (up, _, rows) = upstream();
        let mut st = Storage::default();
        let ddl = up.ddls[0].record();
        assert_eq!(writes_beyond_redo(NodeId(0), &st, &rows, Some(&ddl)).len(), 2);
        st.put("redo/a", ObjectContent::RedoRows(rows[..2].to_vec())).unwrap();
        st.put("redo/b", ObjectContent::RedoDdl(ddl.clone())).unwrap();
        let v = writes_beyond_redo(NodeId(0), &st, &rows, Some(&ddl));
        assert_eq!(v.len(), 1, "{:?}", v);
        assert!(v[0].1.contains(&format!("commit_ts={}", rows[2].commit_ts)), "{:?}", v);
        st.put("redo/c", ObjectContent::RedoRows(rows[2..].to_vec())).unwrap();
        assert!(writes_beyond_redo(NodeId(0), &st, &rows, Some(&ddl)).is_empty());
    }

    #[test]
    fn a_redo_meta_resolved_ts_needs_the_redo_log_below_it_and_its_checkpoint_the_downstream() {
        let (up, _, rows) = upstream();
        let ts = rows[0].commit_ts;
        let mut st = Storage::default();
        let mut c = RedoMetaChecker::default();
        // The DDL (t1's CREATE) is below the resolved ts and not in the redo log.
        let v = c.on_meta(&up, &st, 0, 1, ts);
        assert!(v.iter().any(|(i, d)| *i == REDO_META_DURABLE && d.contains("DDL")), "{:?}", v);
        st.put("redo/d", ObjectContent::RedoDdl(up.ddls[0].record())).unwrap();
        let mut c = RedoMetaChecker::default();
        let v = c.on_meta(&up, &st, 0, 1, ts);
        assert!(v.iter().any(|(_, d)| d.contains("not in the redo log")), "the rows at ts: {:?}", v);
        st.put("redo/r", ObjectContent::RedoRows(rows.clone())).unwrap();
        let mut c = RedoMetaChecker::default();
        assert!(c.on_meta(&up, &st, 0, 1, ts).is_empty());
        // A checkpoint above the resolved ts, and one the downstream does not hold.
        let v = c.on_meta(&up, &st, 0, ts + 1, ts);
        assert!(v.iter().any(|(_, d)| d.contains("above its resolved ts")), "{:?}", v);
        assert!(v.iter().any(|(_, d)| d.starts_with("redo meta checkpoint")), "{:?}", v);
    }

    /// A table dropped upstream since still needs its rows below the resolved ts in the
    /// redo log.
    #[test]
    fn a_dropped_tables_rows_below_the_resolved_ts_must_be_in_the_redo_log() {
        let (mut up, t, rows) = upstream();
        up.drop_table(30, t);
        let ts = rows.last().unwrap().commit_ts;
        let mut st = Storage::default();
        st.put("redo/d", ObjectContent::RedoDdl(up.ddls[0].record())).unwrap();
        let mut c = RedoMetaChecker::default();
        let v = c.on_meta(&up, &st, 0, 1, ts);
        assert!(v.iter().any(|(i, d)| *i == REDO_META_DURABLE && d.contains("not in the redo log")), "{v:?}");
        st.put("redo/r", ObjectContent::RedoRows(rows.clone())).unwrap();
        let mut c = RedoMetaChecker::default();
        assert!(c.on_meta(&up, &st, 0, 1, ts).is_empty());
    }

    /// The apply takes the highest checkpoint and resolved ts over the meta files, and
    /// needs every row above the checkpoint in the redo log and every row at or below it
    /// downstream; a missing row is named by its table.
    #[test]
    fn redo_apply_rebuilds_the_upstream_from_the_downstream_and_the_log_above_the_checkpoint() {
        use core_sched::sink::redo_meta::LogMeta;
        let (mut up, t, rows) = upstream();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
        up.dml(30, t, 2, RowOp::Insert, &mut rng);
        let later: Vec<RowChange> = up.changes[&t][rows.len()..].to_vec();
        let cf = ChangefeedId("cf".into());
        let mut st = Storage::default();
        let (label, r) = redo_apply(&up, &st, &cf);
        assert!(label == "redo_apply" && r.unwrap_err().contains("no redo meta"));
        let (cp, rs) = (rows.last().unwrap().commit_ts, later.last().unwrap().commit_ts);
        // Two meta files: the apply takes the highest of each ts.
        st.put("redo/cf/a.meta", ObjectContent::RedoMeta(LogMeta { checkpoint_ts: cp, resolved_ts: 1 })).unwrap();
        st.put("redo/cf/b.meta", ObjectContent::RedoMeta(LogMeta { checkpoint_ts: 1, resolved_ts: rs })).unwrap();
        st.put("db/t1/1.csv", ObjectContent::Rows(rows.clone())).unwrap();
        st.put("redo/cf/n/1", ObjectContent::RedoRows(later[..1].to_vec())).unwrap();
        let (label, r) = redo_apply(&up, &st, &cf);
        assert_eq!(label, format!("redo_apply checkpoint={} resolved={}", cp, rs));
        let e = r.unwrap_err();
        assert!(e.contains("t1: 1 rows differ or missing, 0 extra"), "{e}");
        // The missing row downstream does not count: above the checkpoint only the log does.
        st.put("db/t1/2.csv", ObjectContent::Rows(later[1..].to_vec())).unwrap();
        assert!(redo_apply(&up, &st, &cf).1.is_err());
        // The second row above the checkpoint in the log: the apply equals the upstream.
        st.put("redo/cf/n/2", ObjectContent::RedoRows(later[1..].to_vec())).unwrap();
        assert!(redo_apply(&up, &st, &cf).1.is_ok());
    }
}
