//! The persisted changefeed checkpoint, each time it moves: `checkpoint-monotonic` (it
//! never goes back) and `no-data-loss` (every upstream change at or below it, and every
//! due syncpoint and DDL below it, is durable downstream).
//!
//! TiCDC's promise: the checkpoint is a watermark of what the sink has made durable, so a
//! restart from it loses nothing (§9). Caught: the removal of stale Remove operators at
//! bootstrap (`drop-stale-remove-operators`, seed 004), and the open findings on restored
//! removals, finished moves to removed captures and status-watermark snapshots.

use super::*;
use crate::storage::Storage;
use crate::upstream::Upstream;
use core_sched::types::*;
use std::collections::BTreeMap;

/// Incremental no-data-loss: per table, how far the upstream change list is verified.
#[derive(Debug, Default)]
pub struct DataLossChecker {
    verified: BTreeMap<TableId, usize>,
    /// How far the upstream DDL list (commit-ts order) is verified.
    ddls_verified: usize,
    pub last_checkpoint: Ts,
}

impl DataLossChecker {
    /// Every upstream change after `start_ts` and at or below `checkpoint` of any table,
    /// dropped since or not, must be durable downstream; with syncpoints due from `first`
    /// every `interval` ms (`sync_points`), so must the record of every syncpoint strictly
    /// below `checkpoint` (a dispatcher waiting on a syncpoint at `s` may report the
    /// checkpoint `s` before the record is written; none passes `s` before it is).
    pub fn advance(
        &mut self,
        up: &Upstream,
        st: &Storage,
        start_ts: Ts,
        checkpoint: Ts,
        sync_points: Option<(Ts, u64)>,
    ) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if checkpoint <= self.last_checkpoint {
            return out;
        }
        let previous = self.last_checkpoint;
        self.last_checkpoint = checkpoint;
        if let Some((first, iv)) = sync_points {
            for s in core_sched::syncpoint::sync_points_in(previous.max(first), checkpoint, iv) {
                if !st.syncpoints.contains_key(&s) {
                    out.push((
                        NO_DATA_LOSS,
                        format!(
                            "syncpoint {} is below the persisted checkpoint {} but has no record downstream",
                            s, checkpoint
                        ),
                    ));
                    break;
                }
            }
        }
        // A DDL strictly below the checkpoint was executed downstream: every dispatcher it
        // blocks holds its checkpoint below it until the writer's DONE, and the trigger
        // holds it for a DDL that adds tables until the ACK. One advanced with no writer
        // (passed, never written) is lost downstream.
        while self.ddls_verified < up.ddls.len() && up.ddls[self.ddls_verified].commit_ts < checkpoint {
            let d = &up.ddls[self.ddls_verified];
            self.ddls_verified += 1;
            if d.commit_ts <= start_ts {
                continue;
            }
            if st.ddl_writes.range((d.commit_ts, TableId::MIN)..=(d.commit_ts, TableId::MAX)).next().is_none() {
                out.push((
                    NO_DATA_LOSS,
                    format!(
                        "DDL `{}` at {} is below the persisted checkpoint {} but has no record downstream",
                        d.query, d.commit_ts, checkpoint
                    ),
                ));
                break;
            }
        }
        // A table dropped upstream since counts too: its rows before the drop had to be
        // durable before the DROP was written (the DDL blocks the table's dispatchers).
        for (t, changes) in &up.changes {
            if !up.tables.contains_key(t) {
                continue;
            }
            let i = self.verified.entry(*t).or_insert(0);
            while *i < changes.len() && changes[*i].commit_ts <= checkpoint {
                let c = &changes[*i];
                if c.commit_ts > start_ts && !st.durable.contains(&(c.table_id, c.commit_ts, c.key)) {
                    out.push((NO_DATA_LOSS, format!("table {} row key={} commit_ts={} is at or below the persisted checkpoint {} but not durable downstream", t, c.key, c.commit_ts, checkpoint)));
                    *i += 1;
                    break;
                }
                *i += 1;
            }
        }
        out
    }
}

/// `checkpoint-monotonic`: the persisted checkpoint moved from `previous` to `now`.
pub fn checkpoint_went_back(previous: Ts, now: Ts) -> Option<(&'static str, String)> {
    (now < previous)
        .then(|| (CHECKPOINT_MONOTONIC, format!("persisted checkpoint went back from {} to {}", previous, now)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use core_sched::effects::ObjectContent;
    use core_sched::upstream::RowOp;
    use rand::SeedableRng;

    /// A table dropped upstream after its rows still needs them downstream once the
    /// checkpoint passes them: a dropped table is no excuse for a lost row.
    #[test]
    fn a_dropped_tables_rows_below_the_checkpoint_must_be_durable() {
        let mut up = Upstream::new();
        let t = up.create_table(10, "test", "t1", 1);
        let start = up.ddls[0].commit_ts;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        up.dml(20, t, 3, RowOp::Insert, &mut rng);
        let rows = up.changes[&t].clone();
        up.drop_table(30, t);
        assert!(up.tables[&t].dropped_ts.is_some());
        let checkpoint = rows.last().unwrap().commit_ts;
        let mut c = DataLossChecker::default();
        let v = c.advance(&up, &Storage::default(), start, checkpoint, None);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].0 == NO_DATA_LOSS && v[0].1.contains(&format!("commit_ts={}", rows[0].commit_ts)), "{v:?}");
        let mut st = Storage::default();
        st.put("db/t1/1.csv.tmp", ObjectContent::Rows(rows.clone())).unwrap();
        st.rename("db/t1/1.csv.tmp", "db/t1/1.csv").unwrap();
        let mut c = DataLossChecker::default();
        assert!(c.advance(&up, &st, start, checkpoint, None).is_empty());
    }
}
