//! Block events (DDLs and syncpoints): `barrier-writes-once` (an open barrier has one
//! writer per maintainer generation; a DDL or syncpoint record becomes durable only after
//! every row it must follow) and `barrier-owner-only` (a block status counts only from the
//! node the dispatcher's task is bound to).
//!
//! TiCDC's promise: a blocking DDL is written once, after every dispatcher it blocks has
//! flushed what precedes it, and a stale or duplicate dispatcher instance cannot move a
//! barrier (§8, §16 #11/#19). Caught: block statuses accepted from a non-owner
//! (`accept-nonowner-block-status`, with `nonatomic-operator-admission`).

use super::*;
use crate::storage::Storage;
use crate::upstream::Upstream;
use core_sched::maintainer::Maintainer;
use core_sched::messages::InfluenceType;
use core_sched::types::*;
use std::collections::BTreeMap;

/// Maintainer-side checks: one running operator per dispatcher; spans partition tables.
/// What a maintainer holds about one dispatcher that a block status can change: the
/// task's checkpoint and block state (forced by every admitted status, §16 #17) and the
/// barrier events that count it as reported or done.
#[derive(PartialEq, Debug)]
pub struct BarrierView {
    /// The task still exists (a status of the same request, e.g. the trigger's DONE of a
    /// DROP, can remove it: that is no admission of the non-owner's status).
    exists: bool,
    checkpoint_ts: Ts,
    block_state: Option<core_sched::messages::BlockState>,
    events: Vec<((Ts, bool), bool, bool)>,
}

/// The dispatchers of a block-status request from `from` whose task the maintainer binds
/// to another node, with their [`BarrierView`] before the request is handled. Cheap: only
/// called for block-status requests.
pub fn nonowner_block_statuses(
    m: &Maintainer,
    from: NodeId,
    ids: impl Iterator<Item = DispatcherId>,
) -> Vec<(DispatcherId, Option<NodeId>, BarrierView)> {
    let mut out = Vec::new();
    for id in ids {
        if id == m.pipe.sc.ddl_span_id {
            continue;
        }
        let Some(task) = m.pipe.sc.get(&id) else { continue };
        if task.node == Some(from) {
            continue;
        }
        out.push((id, task.node, barrier_view(m, id)));
    }
    out
}

pub fn barrier_view(m: &Maintainer, id: DispatcherId) -> BarrierView {
    let exists = m.pipe.sc.get(&id).is_some();
    let (checkpoint_ts, block_state) =
        m.pipe.sc.get(&id).map(|t| (t.checkpoint_ts, t.block_state.clone())).unwrap_or_default();
    let events =
        m.pipe.barrier.events.iter().map(|(k, e)| (*k, e.reported.contains(&id), e.done.contains(&id))).collect();
    BarrierView { exists, checkpoint_ts, block_state, events }
}

impl BarrierView {
    /// Whether `after` shows the dispatcher's status admitted: its checkpoint or block
    /// state moved, or an event (still or newly there) counts it as reported or done.
    /// Events that vanished meanwhile (finished by other statuses of the same request)
    /// do not count.
    pub fn admitted_in(&self, after: &BarrierView) -> bool {
        if !after.exists {
            return false;
        }
        if self.checkpoint_ts != after.checkpoint_ts || self.block_state != after.block_state {
            return true;
        }
        after.events.iter().any(|(k, rep, done)| {
            let (was_rep, was_done) =
                self.events.iter().find(|(k0, _, _)| k0 == k).map(|(_, r, d)| (*r, *d)).unwrap_or((false, false));
            (*rep && !was_rep) || (*done && !was_done)
        })
    }
}

/// `barrier-writes-once`, writer half: the dispatcher that wrote each open barrier's block
/// event, per (maintainer epoch, commit ts, is syncpoint). A finished barrier is forgotten:
/// a span restarted from a checkpoint below the event may write it again (TiCDC's DDL
/// writes are at-least-once across restarts, moves and merges).
#[derive(Debug, Default)]
pub struct BarrierWriters(BTreeMap<(Epoch, Ts, bool), DispatcherId>);

impl BarrierWriters {
    /// A barrier write of the event at `commit_ts` (a syncpoint if `sync_point`) by
    /// `dispatcher` in maintainer generation `epoch`; a second writer of an open barrier
    /// is a violation.
    pub fn write(
        &mut self,
        epoch: Epoch,
        commit_ts: Ts,
        sync_point: bool,
        dispatcher: DispatcherId,
    ) -> Option<(&'static str, String)> {
        let prev = *self.0.entry((epoch, commit_ts, sync_point)).or_insert(dispatcher);
        (prev != dispatcher).then(|| {
            let what = if sync_point { "syncpoint" } else { "DDL" };
            (
                BARRIER_WRITES_ONCE,
                format!(
                    "{} at {} written by two dispatchers in maintainer epoch {}: {} and {}",
                    what, commit_ts, epoch, prev, dispatcher
                ),
            )
        })
    }

    /// The barrier finished: its next write (a replay) may come from anyone.
    pub fn done(&mut self, epoch: Epoch, commit_ts: Ts, sync_point: bool) {
        self.0.remove(&(epoch, commit_ts, sync_point));
    }
}

/// `barrier-owner-only` for an observed admission of a non-owner's block status.
pub fn nonowner_admitted(
    n: NodeId,
    dispatcher: DispatcherId,
    from: NodeId,
    owner: Option<NodeId>,
) -> (&'static str, String) {
    let owner = owner.map(|n| n.to_string()).unwrap_or_else(|| "none".into());
    (
        BARRIER_OWNER_ONLY,
        format!(
            "maintainer on {} admitted a block status from a node that does not own the dispatcher: \
             dispatcher={} from={} owner={}",
            n, dispatcher, from, owner
        ),
    )
}

/// `barrier-writes-once`, flush half: when a DDL becomes durable downstream, every row
/// change of the tables it blocks that committed before it (and after the changefeed's
/// start) must already be durable; when a syncpoint record becomes durable, every row
/// change of every table at or below its primary ts (the downstream then is the upstream
/// snapshot at that ts).
pub fn durable_block_events(
    up: &Upstream,
    st: &Storage,
    start_ts: Ts,
    syncpoints: &[core_sched::syncpoint::SyncPointRecord],
    ddls: &[core_sched::upstream::DdlRecord],
) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for rec in syncpoints {
        let mut missing = None;
        'tables: for ch in up.changes.values() {
            for c in ch.iter().take_while(|c| c.commit_ts <= rec.primary_ts) {
                if c.commit_ts > start_ts && !st.durable.contains(&(c.table_id, c.commit_ts, c.key)) {
                    missing = Some((c.table_id, c.commit_ts, c.key));
                    break 'tables;
                }
            }
        }
        if let Some((t, ts, key)) = missing {
            out.push((
                BARRIER_WRITES_ONCE,
                format!(
                    "syncpoint {} became durable before row key={} commit_ts={} of table {} was flushed",
                    rec.primary_ts, key, ts, t
                ),
            ));
        }
    }
    for rec in ddls {
        let Some(ev) = up.ddl_at(rec.commit_ts) else { continue };
        let tables: Vec<TableId> = match ev.blocked_tables.influence_type {
            InfluenceType::Normal => {
                ev.blocked_tables.table_ids.iter().copied().filter(|t| *t != DDL_SPAN_TABLE_ID).collect()
            }
            InfluenceType::Db => {
                up.tables_of_schema_at(ev.blocked_tables.schema_id, ev.commit_ts).map(|t| t.id).collect()
            }
            InfluenceType::All => up.tables.keys().copied().collect(),
        };
        let mut missing = None;
        for t in tables {
            if let Some(ch) = up.changes.get(&t) {
                if let Some(c) = ch.iter().find(|c| {
                    c.commit_ts > start_ts
                        && c.commit_ts < rec.commit_ts
                        && !st.durable.contains(&(c.table_id, c.commit_ts, c.key))
                }) {
                    missing = Some((t, c.commit_ts, c.key));
                    break;
                }
            }
        }
        if let Some((t, ts, key)) = missing {
            out.push((
                BARRIER_WRITES_ONCE,
                format!(
                    "DDL '{}' at {} became durable before row key={} commit_ts={} of table {} was flushed",
                    rec.query, rec.commit_ts, key, ts, t
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn barrier_view_sees_an_admitted_status_and_ignores_events_finished_meanwhile() {
        let bs = |ts| {
            Some(core_sched::messages::BlockState {
                is_blocked: true,
                block_ts: ts,
                block_tables: None,
                need_dropped_tables: None,
                need_added_tables: vec![],
                updated_schemas: vec![],
                is_sync_point: false,
                stage: core_sched::messages::BlockStage::Waiting,
            })
        };
        let before = BarrierView {
            exists: true,
            checkpoint_ts: 10,
            block_state: bs(11),
            events: vec![((11, false), false, false), ((12, false), true, false)],
        };
        let same = BarrierView {
            exists: true,
            checkpoint_ts: 10,
            block_state: bs(11),
            events: vec![((11, false), false, false), ((12, false), true, false)],
        };
        assert!(!before.admitted_in(&same));
        // Event 11 finished by other dispatchers' statuses of the same request: not this one's doing.
        let finished = BarrierView {
            exists: true,
            checkpoint_ts: 10,
            block_state: bs(11),
            events: vec![((12, false), true, false)],
        };
        assert!(!before.admitted_in(&finished));
        let reported = BarrierView {
            exists: true,
            checkpoint_ts: 10,
            block_state: bs(11),
            events: vec![((11, false), true, false), ((12, false), true, false)],
        };
        assert!(before.admitted_in(&reported));
        let new_event = BarrierView {
            exists: true,
            checkpoint_ts: 10,
            block_state: bs(11),
            events: vec![((11, false), false, false), ((12, false), true, false), ((13, true), true, false)],
        };
        assert!(before.admitted_in(&new_event));
        let forced =
            BarrierView { exists: true, checkpoint_ts: 12, block_state: bs(13), events: before.events.clone() };
        assert!(before.admitted_in(&forced));
        // The task removed by another status of the same request (the trigger's DONE of a
        // DROP of that table): the ignored non-owner status changed nothing.
        let removed = BarrierView { exists: false, checkpoint_ts: 0, block_state: None, events: vec![] };
        assert!(!before.admitted_in(&removed));
    }
}
