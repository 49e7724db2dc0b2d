//! Invariants, checked after every delivered message and state change.
//!
//! Stable names (used in reports and JSON): `one-dispatcher-per-key`,
//! `one-instance-per-dispatcher-id`, `one-table-trigger`, `table-trigger-owner`, `one-operator-per-dispatcher`,
//! `span-partition`, `barrier-writes-once`, `epoch-fencing`, `checkpoint-monotonic`, `no-data-loss`,
//! `no-retryable-error-after-failover`, `no-write-after-fence`, `barrier-owner-only`,
//! `no-write-after-drop`, `converges`.
//!
//! Checks are incremental: the dispatcher-placement checks run only after a step that
//! changed the set of live dispatchers; the maintainer checks only after a step of a
//! maintainer; no-data-loss only walks the upstream changes the persisted checkpoint
//! newly covers; barrier-owner-only looks only at block-status requests, comparing what
//! the maintainer holds about each non-owner-reported dispatcher before and after.

use crate::storage::Storage;
use crate::upstream::Upstream;
use core_sched::dispatcher::DispatcherManager;
use core_sched::maintainer::operator::Operator;
use core_sched::maintainer::Maintainer;
use core_sched::messages::ComponentState;
use core_sched::types::*;
use std::collections::BTreeMap;

pub const ONE_DISPATCHER_PER_KEY: &str = "one-dispatcher-per-key";
pub const ONE_INSTANCE_PER_ID: &str = "one-instance-per-dispatcher-id";
pub const ONE_TABLE_TRIGGER: &str = "one-table-trigger";
/// The table trigger event dispatcher (the changefeed's DDL owner) is created on the
/// maintainer's capture by that maintainer's bootstrap (TiCDC #431 places it with the
/// maintainer) and serves only it until it has left the manager: a dispatcher manager
/// holding a trigger (running, or still closing under its maintainer's Remove) is owned
/// by the maintainer of its own capture. A bootstrap that hands such a manager to another
/// maintainer (one without a trigger ID, from another capture) leaves "stale DDL
/// ownership" (PR #5436: a nil trigger ID is valid only once the local trigger cleanup
/// removed the previous owner, `validateBootstrapNoTableTriggerDispatcher`): the trigger
/// then reports its block statuses, heartbeats and finally its Stopped to a maintainer
/// that does not own it.
pub const TABLE_TRIGGER_OWNER: &str = "table-trigger-owner";
pub const ONE_OPERATOR_PER_DISPATCHER: &str = "one-operator-per-dispatcher";
pub const SPAN_PARTITION: &str = "span-partition";
pub const EPOCH_FENCING: &str = "epoch-fencing";
pub const BARRIER_WRITES_ONCE: &str = "barrier-writes-once";
pub const CHECKPOINT_MONOTONIC: &str = "checkpoint-monotonic";
pub const NO_DATA_LOSS: &str = "no-data-loss";
pub const NO_RETRYABLE_ERROR_AFTER_FAILOVER: &str = "no-retryable-error-after-failover";
pub const CONVERGES: &str = "converges";
/// A capture that local-fenced (lost its etcd session) issues no downstream write.
pub const NO_WRITE_AFTER_FENCE: &str = "no-write-after-fence";
/// Reference §16 #11/#19: a block status counts only from the node the dispatcher's task
/// is bound to; one from any other node (a stale or duplicate instance) must leave the
/// barrier and the task as they were.
pub const BARRIER_OWNER_ONLY: &str = "barrier-owner-only";
/// A dropped table (DROP TABLE, TRUNCATE's old ID, every table of a DROP DATABASE) gets
/// no downstream write once its drop is written and the changefeed's checkpoint passed
/// it (see [`check_no_write_after_drop`]).
pub const NO_WRITE_AFTER_DROP: &str = "no-write-after-drop";
pub const ALL_INVARIANTS: &[&str] = &[
    ONE_DISPATCHER_PER_KEY,
    ONE_INSTANCE_PER_ID,
    ONE_TABLE_TRIGGER,
    TABLE_TRIGGER_OWNER,
    ONE_OPERATOR_PER_DISPATCHER,
    SPAN_PARTITION,
    BARRIER_WRITES_ONCE,
    EPOCH_FENCING,
    CHECKPOINT_MONOTONIC,
    NO_DATA_LOSS,
    NO_RETRYABLE_ERROR_AFTER_FAILOVER,
    NO_WRITE_AFTER_FENCE,
    BARRIER_OWNER_ONLY,
    NO_WRITE_AFTER_DROP,
    CONVERGES,
];

/// `no-write-after-drop`: the data files of `row_tables` and the table-level DDL files
/// `ddls` just became durable; a table dropped at `D` whose drop (DROP TABLE, TRUNCATE,
/// DROP DATABASE) is durable downstream, with the persisted changefeed checkpoint at or
/// above `D`, must get none of them: every dispatcher of the table flushed its rows before
/// it reported the drop's barrier WAITING, and the drop removed the tasks, so such a write
/// is a late flush of a dispatcher nobody waited for (the storage consumer would apply it
/// to a table, or a database, that no longer exists).
///
/// A write while the checkpoint is still below `D` is not one: a maintainer restarted
/// from such a checkpoint replays the table from there, rows and DDL again (TiCDC's
/// at-least-once delivery across restarts).
pub fn check_no_write_after_drop(
    up: &Upstream,
    st: &Storage,
    persisted_checkpoint: Ts,
    row_tables: &[TableId],
    ddls: &[core_sched::upstream::DdlRecord],
) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let passed_drop = |t: TableId| -> Option<Ts> {
        let d = up.tables.get(&t)?.dropped_ts?;
        let durable = st.ddl_writes.range((d, TableId::MIN)..=(d, TableId::MAX)).next().is_some();
        (durable && persisted_checkpoint >= d).then_some(d)
    };
    for t in row_tables {
        if let Some(d) = passed_drop(*t) {
            out.push((NO_WRITE_AFTER_DROP, format!("a data file of table {} became durable after its drop at {} was written and the checkpoint {} passed it", t, d, persisted_checkpoint)));
        }
    }
    for rec in ddls.iter().filter(|r| r.table_id != 0) {
        if let Some(d) = passed_drop(rec.table_id).filter(|d| rec.commit_ts < *d) {
            out.push((NO_WRITE_AFTER_DROP, format!("DDL '{}' at {} of table {} became durable after its drop at {} was written and the checkpoint {} passed it", rec.query, rec.commit_ts, rec.table_id, d, persisted_checkpoint)));
        }
    }
    out
}

/// `no-write-after-fence`: storage writes (puts and renames; the best-effort cleanup of
/// temporary objects is not a write of data) issued by node `n` in one step while its
/// dispatcher orchestrator is fenced.
pub fn check_no_write_after_fence(
    n: NodeId,
    fenced: bool,
    reqs: &[core_sched::effects::StorageRequest],
) -> Vec<(&'static str, String)> {
    use core_sched::effects::StorageRequest;
    if !fenced {
        return vec![];
    }
    reqs.iter()
        .filter_map(|r| match r {
            StorageRequest::Put { path, .. } => Some(format!("capture {} put {} after its local fence", n, path)),
            StorageRequest::Rename { to, .. } => {
                Some(format!("capture {} renamed onto {} after its local fence", n, to))
            }
            StorageRequest::Delete { .. } => None,
        })
        .map(|d| (NO_WRITE_AFTER_FENCE, d))
        .collect()
}

/// A dispatcher that can write: created, not closed, Initializing or Working, not removing.
fn can_write(state: ComponentState, removing: bool) -> bool {
    !removing && matches!(state, ComponentState::Initializing | ComponentState::Working)
}

/// Cluster-wide dispatcher placement checks over every live node's managers.
pub fn check_dispatchers<'a>(
    managers: impl Iterator<Item = (NodeId, &'a DispatcherManager)>,
) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let mut by_id: BTreeMap<DispatcherId, NodeId> = BTreeMap::new();
    let mut by_table: BTreeMap<TableId, Vec<(TableSpan, DispatcherId, NodeId)>> = BTreeMap::new();
    let mut triggers: BTreeMap<&ChangefeedId, Vec<(DispatcherId, NodeId)>> = BTreeMap::new();
    for (n, dm) in managers {
        if dm.maintainer_id != n {
            if let Some(t) = dm.dispatchers.values().find(|d| d.is_trigger) {
                out.push((TABLE_TRIGGER_OWNER, format!("dispatcher manager of changefeed {} on {} holds table trigger event dispatcher {} but is owned by the maintainer on {} (epoch {})", dm.cf, n, t.id, dm.maintainer_id, dm.maintainer_epoch)));
            }
        }
        for d in dm.dispatchers.values() {
            if let Some(other) = by_id.insert(d.id, n) {
                out.push((ONE_INSTANCE_PER_ID, format!("dispatcher {} lives on {} and {}", d.id, other, n)));
            }
            if !can_write(d.state, d.try_removing) {
                continue;
            }
            if d.is_trigger {
                // A trigger receives events (owns the DDL span) only once the post-bootstrap
                // request initialised its schema store and registered it with the event
                // collector; before that it cannot write a DDL.
                if d.registered {
                    triggers.entry(&dm.cf).or_default().push((d.id, n));
                }
            } else {
                by_table.entry(d.span.table_id).or_default().push((d.span, d.id, n));
            }
        }
    }
    for (cf, t) in triggers {
        if t.len() > 1 {
            out.push((
                ONE_TABLE_TRIGGER,
                format!("changefeed {} has {} live table trigger event dispatchers: {:?}", cf, t.len(), t),
            ));
        }
    }
    for (table, mut v) in by_table {
        v.sort();
        for i in 1..v.len() {
            for j in 0..i {
                if v[j].0.overlaps(&v[i].0) {
                    out.push((
                        ONE_DISPATCHER_PER_KEY,
                        format!(
                            "table {}: dispatchers {} on {} {} and {} on {} {} cover the same keys",
                            table, v[j].1, v[j].2, v[j].0, v[i].1, v[i].2, v[i].0
                        ),
                    ));
                }
            }
        }
    }
    out
}

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
        if id == m.sc.ddl_span_id {
            continue;
        }
        let Some(task) = m.sc.get(&id) else { continue };
        if task.node == Some(from) {
            continue;
        }
        out.push((id, task.node, barrier_view(m, id)));
    }
    out
}

pub fn barrier_view(m: &Maintainer, id: DispatcherId) -> BarrierView {
    let exists = m.sc.get(&id).is_some();
    let (checkpoint_ts, block_state) =
        m.sc.get(&id).map(|t| (t.checkpoint_ts, t.block_state.clone())).unwrap_or_default();
    let events = m.barrier.events.iter().map(|(k, e)| (*k, e.reported.contains(&id), e.done.contains(&id))).collect();
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

pub fn check_maintainer(m: &Maintainer) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    // Count first; describe (format) only the operators of a violation.
    let mut count: BTreeMap<DispatcherId, usize> = BTreeMap::new();
    for op in m.oc.running() {
        *count.entry(op.id()).or_default() += 1;
    }
    for (id, n) in count.into_iter().filter(|(_, n)| *n > 1) {
        let ops: Vec<String> = m.oc.running().filter(|op| op.id() == id).map(|op| op.describe()).collect();
        out.push((
            ONE_OPERATOR_PER_DISPATCHER,
            format!("dispatcher {} has {} running operators: {}", id, n, ops.join("; ")),
        ));
    }
    if m.initialized() {
        for &t in m.sc.by_table.keys() {
            if t == DDL_SPAN_TABLE_ID {
                continue;
            }
            // A table whose every task is only kept as coverage for a cleanup Remove (e.g.
            // the leftovers of a dropped table found at bootstrap) is not a live table.
            if m.sc.tasks_of_table(t).iter().all(|r| matches!(m.oc.get(&r.id), Some(Operator::Remove(_)))) {
                continue;
            }
            let (_, holes) = m.sc.table_partition_problems(t);
            // Transient overlaps TiCDC allows: a merge target over its (occupied)
            // sources, and a task kept as coverage under a cleanup Remove.
            let transient = |id: &DispatcherId| {
                matches!(m.oc.get(id), Some(Operator::Merge(_) | Operator::Occupy(_) | Operator::Remove(_)))
            };
            let mut spans: Vec<(TableSpan, DispatcherId)> =
                m.sc.tasks_of_table(t).iter().map(|r| (r.span, r.id)).collect();
            spans.sort();
            let mut overlaps = Vec::new();
            for i in 1..spans.len() {
                for j in 0..i {
                    if spans[j].0.overlaps(&spans[i].0) && !transient(&spans[j].1) && !transient(&spans[i].1) {
                        overlaps.push((spans[j].0, spans[i].0));
                    }
                }
            }
            if !overlaps.is_empty() {
                out.push((SPAN_PARTITION, format!("table {}: overlapping spans {:?}", t, overlaps)));
            }
            if !holes.is_empty() {
                out.push((SPAN_PARTITION, format!("table {}: holes {:?}", t, holes)));
            }
        }
    }
    out
}

/// Incremental no-data-loss: per table, how far the upstream change list is verified.
#[derive(Debug, Default)]
pub struct DataLossChecker {
    verified: BTreeMap<TableId, usize>,
    pub last_checkpoint: Ts,
}

impl DataLossChecker {
    /// Every upstream change after `start_ts` and at or below `checkpoint` of an
    /// existing table must be durable downstream; with syncpoints due from `first` every
    /// `interval` ms (`sync_points`), so must the record of every syncpoint strictly
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
        for (t, changes) in &up.changes {
            let Some(tab) = up.tables.get(t) else { continue };
            if tab.dropped_ts.is_some() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use core_sched::effects::{ObjectContent, StorageRequest};

    fn put() -> StorageRequest {
        StorageRequest::Put { op_id: 1, path: "db/t/a.tmp".into(), content: ObjectContent::Rows(vec![]) }
    }

    #[test]
    fn barrier_view_sees_an_admitted_status_and_ignores_events_finished_meanwhile() {
        let bs = |ts| {
            Some(core_sched::messages::BlockState {
                is_blocked: true,
                block_ts: ts,
                block_tables: None,
                need_dropped_tables: None,
                need_added_tables: vec![],
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

    fn manager_with_trigger(node: NodeId, owner: NodeId) -> DispatcherManager {
        let mut dm = DispatcherManager::new(ChangefeedId("cf".into()), node, Default::default(), 0);
        dm.maintainer_id = owner;
        dm.maintainer_epoch = 7;
        let t = DispatcherId(1);
        let mut d = core_sched::dispatcher::Dispatcher::new(t, TableSpan::ddl_span(), 0, 100, true, false);
        d.state = ComponentState::Working;
        d.registered = true;
        dm.dispatchers.insert(t, d);
        dm.trigger_id = Some(t);
        dm
    }

    fn found(v: &[(&'static str, String)], inv: &str) -> bool {
        v.iter().any(|(i, _)| *i == inv)
    }

    #[test]
    fn table_trigger_owner_fires_when_a_trigger_holder_is_owned_by_another_capture() {
        let dm = manager_with_trigger(NodeId(2), NodeId(1));
        let v = check_dispatchers([(NodeId(2), &dm)].into_iter());
        assert!(found(&v, TABLE_TRIGGER_OWNER), "{:?}", v);
    }

    #[test]
    fn table_trigger_owner_fires_for_a_closing_trigger_handed_to_another_capture() {
        // Still closing under its maintainer's Remove: its Stopped must reach that maintainer.
        let mut closing = manager_with_trigger(NodeId(2), NodeId(1));
        closing.dispatchers.values_mut().for_each(|d| d.try_removing = true);
        assert!(found(&check_dispatchers([(NodeId(2), &closing)].into_iter()), TABLE_TRIGGER_OWNER));
    }

    #[test]
    fn table_trigger_owner_is_quiet_for_the_own_maintainer_and_without_trigger() {
        let dm = manager_with_trigger(NodeId(2), NodeId(2));
        assert!(check_dispatchers([(NodeId(2), &dm)].into_iter()).is_empty());
        let mut closing = manager_with_trigger(NodeId(2), NodeId(2));
        closing.dispatchers.values_mut().for_each(|d| d.try_removing = true);
        assert!(check_dispatchers([(NodeId(2), &closing)].into_iter()).is_empty());
        // A manager without a trigger may be owned by any maintainer.
        let mut plain = manager_with_trigger(NodeId(2), NodeId(1));
        plain.dispatchers.clear();
        plain.trigger_id = None;
        assert!(check_dispatchers([(NodeId(2), &plain)].into_iter()).is_empty());
    }

    #[test]
    fn one_table_trigger_fires_for_a_trigger_replaced_in_place() {
        // `replace-mismatched-trigger`: the new trigger next to the old, still live, one.
        let mut dm = manager_with_trigger(NodeId(2), NodeId(2));
        let mut d =
            core_sched::dispatcher::Dispatcher::new(DispatcherId(2), TableSpan::ddl_span(), 0, 200, true, false);
        d.state = ComponentState::Working;
        dm.dispatchers.insert(DispatcherId(2), d);
        dm.trigger_id = Some(DispatcherId(2));
        // Not yet registered (post-bootstrap pending): it receives no events, owns nothing.
        let v = check_dispatchers([(NodeId(2), &dm)].into_iter());
        assert!(!found(&v, ONE_TABLE_TRIGGER), "{:?}", v);
        dm.dispatchers.get_mut(&DispatcherId(2)).unwrap().registered = true;
        let v = check_dispatchers([(NodeId(2), &dm)].into_iter());
        assert!(found(&v, ONE_TABLE_TRIGGER), "{:?}", v);
        assert!(!found(&v, TABLE_TRIGGER_OWNER));
    }

    #[test]
    fn no_write_after_fence_fires_on_a_fenced_put_or_rename() {
        let rename = StorageRequest::Rename { op_id: 2, from: "a.tmp".into(), to: "a".into() };
        let found = check_no_write_after_fence(NodeId(1), true, &[put(), rename]);
        assert_eq!(found.len(), 2);
        assert!(found.iter().all(|(inv, _)| *inv == NO_WRITE_AFTER_FENCE));
    }

    #[test]
    fn no_write_after_fence_is_quiet_before_the_fence_and_for_cleanup() {
        assert!(check_no_write_after_fence(NodeId(1), false, &[put()]).is_empty());
        assert!(check_no_write_after_fence(NodeId(1), true, &[StorageRequest::Delete { paths: vec!["a.tmp".into()] }])
            .is_empty());
    }
}
