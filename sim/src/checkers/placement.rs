//! Dispatcher placement across the cluster, after every step that changed a live
//! dispatcher set: `one-dispatcher-per-key` (no two writable dispatchers cover the same keys
//! of a table), `one-instance-per-dispatcher-id`, `one-table-trigger` (one registered table
//! trigger per changefeed: one DDL owner), `one-redo-table-trigger` (the same for the redo
//! table trigger: one redo DDL writer and redo meta) and `table-trigger-owner` (a manager
//! holding a trigger is owned by its own capture's maintainer).
//!
//! TiCDC's promise: every key range of a replicated table is written by exactly one
//! dispatcher, and the changefeed has one DDL owner (§16). Caught: the duplicate full-span
//! dispatcher after a maintainer failover (`ignore-unknown-working-table`, TiCDC #6202), a
//! mismatched trigger replaced in place (`replace-mismatched-trigger`, and its redo form
//! `replace-mismatched-redo-trigger`) and a nil-trigger
//! bootstrap accepted from another capture (`accept-nil-trigger-bootstrap`, PR #5436).

use super::*;
use core_sched::dispatcher::DispatcherManager;
use core_sched::messages::ComponentState;
use core_sched::types::*;
use std::collections::BTreeMap;

/// A dispatcher that can write: created, not closed, Initializing or Working, not removing.
fn can_write(state: ComponentState, removing: bool) -> bool {
    !removing && matches!(state, ComponentState::Initializing | ComponentState::Working)
}

/// A writable dispatcher of a table: its mode, span, ID, node, start ts, and the ts of the
/// DDL dropping the table it is held at, if any. Each mode is placed on its own (a redo
/// dispatcher beside each event dispatcher writes the redo log, not the downstream).
type Writer = (Mode, TableSpan, DispatcherId, NodeId, Ts, Option<Ts>);

/// Buffers [`check_dispatchers_with`] reuses from one check to the next (it runs after
/// every step that changed a dispatcher set, over every dispatcher of the cluster).
#[derive(Debug, Default)]
pub struct PlacementScratch {
    ids: Vec<DispatcherId>,
    writers: Vec<Writer>,
    /// Per mode, each writer's (table, start, index in `writers`): sorting these small
    /// keys instead of the writers costs a fraction at a thousand tables.
    keys: [Vec<(TableId, u64, u32)>; 2],
}

/// Cluster-wide dispatcher placement checks over every live node's managers.
pub fn check_dispatchers<'a>(
    managers: impl Iterator<Item = (NodeId, &'a DispatcherManager)>,
) -> Vec<(&'static str, String)> {
    let managers: Vec<(NodeId, &DispatcherManager)> = managers.collect();
    check_dispatchers_with(&managers, &mut PlacementScratch::default())
}

/// [`check_dispatchers`] in two passes: a test of every invariant into reused buffers
/// (sorted vectors and a sweep, no per-table allocation), and only when it finds something
/// [`check_dispatchers_full`], which describes the violations (so both report the same,
/// in the same order).
pub fn check_dispatchers_with(
    managers: &[(NodeId, &DispatcherManager)],
    scratch: &mut PlacementScratch,
) -> Vec<(&'static str, String)> {
    if placement_suspect(managers, scratch) {
        check_dispatchers_full(managers.iter().copied())
    } else {
        Vec::new()
    }
}

/// The drop ts a writable table dispatcher is held at (see [`check_dispatchers_full`]).
fn drop_ts(d: &core_sched::dispatcher::Dispatcher) -> Option<Ts> {
    d.block.as_ref().and_then(|b| b.event.ddl()).and_then(|e| {
        let dropped = e.need_dropped_tables.as_ref()?;
        let hit = dropped.influence_type != core_sched::messages::InfluenceType::Normal
            || dropped.table_ids.contains(&d.span.table_id);
        hit.then_some(e.commit_ts)
    })
}

/// Two lives of a recovered table: the old one held at its drop, the new one starting at
/// or after it.
fn lives(a: &Writer, b: &Writer) -> bool {
    a.5.is_some_and(|d| b.4 >= d)
}

/// Whether [`check_dispatchers_full`] would report anything: the same predicates.
fn placement_suspect(managers: &[(NodeId, &DispatcherManager)], s: &mut PlacementScratch) -> bool {
    s.ids.clear();
    s.writers.clear();
    s.keys.iter_mut().for_each(Vec::clear);
    let mut triggers: Vec<(&ChangefeedId, Mode)> = Vec::new();
    for &(n, dm) in managers {
        if dm.maintainer_id != n && dm.dispatchers.values().any(|d| d.is_trigger) {
            return true;
        }
        for d in dm.dispatchers.values() {
            s.ids.push(d.id);
            if !can_write(d.state, d.try_removing) {
                continue;
            }
            if d.is_trigger {
                if d.registered {
                    triggers.push((&dm.cf, d.mode));
                }
            } else {
                s.keys[(d.mode == Mode::Redo) as usize].push((d.span.table_id, d.span.start, s.writers.len() as u32));
                s.writers.push((d.mode, d.span, d.id, n, d.start_ts, drop_ts(d)));
            }
        }
    }
    // Each manager's IDs come in order: the stable sort merges those runs.
    s.ids.sort();
    triggers.sort_unstable();
    if s.ids.windows(2).any(|w| w[0] == w[1]) || triggers.windows(2).any(|w| w[0] == w[1]) {
        return true;
    }
    // Each mode on its own, sorted by (table, start): a writer ending at or before a start
    // overlaps nothing from there on, so each is compared with the earlier ones still
    // open. A writer stays open by its own end alone, so however ties on (table, start)
    // sort, every overlapping pair is still compared: the answer does not depend on it.
    let v = &s.writers;
    let mut active: Vec<usize> = Vec::new();
    for keys in &mut s.keys {
        keys.sort_unstable();
        active.clear();
        for &(_, _, i) in keys.iter() {
            let w = &v[i as usize];
            active.retain(|&j| v[j].1.table_id == w.1.table_id && v[j].1.end > w.1.start);
            if active.iter().any(|&j| v[j].1.overlaps(&w.1) && !lives(&v[j], w) && !lives(w, &v[j])) {
                return true;
            }
            active.push(i as usize);
        }
    }
    false
}

/// The placement checks in full, describing every violation: table by table, each pair
/// of writers compared.
pub fn check_dispatchers_full<'a>(
    managers: impl Iterator<Item = (NodeId, &'a DispatcherManager)>,
) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let mut by_id: BTreeMap<DispatcherId, NodeId> = BTreeMap::new();
    let mut by_table: BTreeMap<(Mode, TableId), Vec<Writer>> = BTreeMap::new();
    let mut triggers: BTreeMap<(&ChangefeedId, Mode), Vec<(DispatcherId, NodeId)>> = BTreeMap::new();
    for (n, dm) in managers {
        if dm.maintainer_id != n {
            if let Some(t) = dm.dispatchers.values().find(|d| d.is_trigger) {
                let what = if t.is_redo() { "redo" } else { "event" };
                out.push((TABLE_TRIGGER_OWNER, format!("dispatcher manager of changefeed {} on {} holds table trigger {} dispatcher {} but is owned by the maintainer on {} (epoch {})", dm.cf, n, what, t.id, dm.maintainer_id, dm.maintainer_epoch)));
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
                    triggers.entry((&dm.cf, d.mode)).or_default().push((d.id, n));
                }
            } else {
                // A dispatcher held by a DDL that drops its table (DROP TABLE, DROP
                // DATABASE, a partition drop) writes nothing of the table's next life
                // (RECOVER TABLE keeps the ID): its drop ts.
                by_table.entry((d.mode, d.span.table_id)).or_default().push((
                    d.mode,
                    d.span,
                    d.id,
                    n,
                    d.start_ts,
                    drop_ts(d),
                ));
            }
        }
    }
    for ((cf, mode), t) in triggers {
        if t.len() > 1 {
            let (inv, what) =
                if mode == Mode::Redo { (ONE_REDO_TABLE_TRIGGER, "redo") } else { (ONE_TABLE_TRIGGER, "event") };
            out.push((
                inv,
                format!("changefeed {} has {} live table trigger {} dispatchers: {:?}", cf, t.len(), what, t),
            ));
        }
    }
    for ((mode, table), mut v) in by_table {
        v.sort();
        let what = if mode == Mode::Redo { "redo dispatchers" } else { "dispatchers" };
        for i in 1..v.len() {
            for j in 0..i {
                if v[j].1.overlaps(&v[i].1) && !lives(&v[j], &v[i]) && !lives(&v[i], &v[j]) {
                    out.push((
                        ONE_DISPATCHER_PER_KEY,
                        format!(
                            "table {}: {} {} on {} {} and {} on {} {} cover the same keys",
                            table, what, v[j].2, v[j].3, v[j].1, v[i].2, v[i].3, v[i].1
                        ),
                    ));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A manager on `node` holding working table dispatchers `(id, mode, start, end)` of
    /// table 5.
    fn manager_with_writers(node: NodeId, writers: &[(u64, Mode, u64, u64)]) -> DispatcherManager {
        let mut dm = DispatcherManager::new(ChangefeedId("cf".into()), node, Default::default(), 0);
        dm.maintainer_id = node;
        for &(id, mode, start, end) in writers {
            let span = TableSpan { table_id: 5, start, end };
            let mut d = core_sched::dispatcher::Dispatcher::new(DispatcherId(id), span, 1, 100, false, false);
            d.mode = mode;
            d.state = ComponentState::Working;
            dm.dispatchers.insert(DispatcherId(id), d);
        }
        dm
    }

    /// The fast check sorts writers by (table, start) only: an overlap is found however
    /// ties on the start sort (the nodes' order, the IDs' order against the spans'), an
    /// empty span next to them overlaps nothing, and a redo writer never meets an event one.
    #[test]
    fn one_dispatcher_per_key_is_found_however_ties_on_the_start_sort() {
        let a = manager_with_writers(NodeId(1), &[(10, Mode::Default, 0, 10), (11, Mode::Default, 0, 0)]);
        let b = manager_with_writers(NodeId(2), &[(3, Mode::Default, 0, 5), (4, Mode::Redo, 0, 10)]);
        let mut scratch = PlacementScratch::default();
        for order in [[(NodeId(1), &a), (NodeId(2), &b)], [(NodeId(2), &b), (NodeId(1), &a)]] {
            let v = check_dispatchers_with(&order, &mut scratch);
            assert_eq!(v.iter().filter(|(i, _)| *i == ONE_DISPATCHER_PER_KEY).count(), 1, "{:?}", v);
        }
        let apart = manager_with_writers(NodeId(2), &[(3, Mode::Default, 10, 20), (4, Mode::Redo, 0, 10)]);
        for order in [[(NodeId(1), &a), (NodeId(2), &apart)], [(NodeId(2), &apart), (NodeId(1), &a)]] {
            assert!(check_dispatchers_with(&order, &mut scratch).is_empty());
        }
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
    fn one_redo_table_trigger_fires_for_two_registered_redo_triggers_only() {
        // `replace-mismatched-redo-trigger`: a second redo trigger next to the old one; the
        // event trigger alone stays one, so only the redo invariant fires.
        let mut dm = manager_with_trigger(NodeId(2), NodeId(2));
        for id in [DispatcherId(3), DispatcherId(4)] {
            let mut d = core_sched::dispatcher::Dispatcher::new(id, TableSpan::ddl_span(), 0, 200, true, false);
            d.mode = Mode::Redo;
            d.state = ComponentState::Working;
            d.registered = id == DispatcherId(3);
            dm.dispatchers.insert(id, d);
        }
        let v = check_dispatchers([(NodeId(2), &dm)].into_iter());
        assert!(v.is_empty(), "one registered redo trigger is fine: {:?}", v);
        dm.dispatchers.get_mut(&DispatcherId(4)).unwrap().registered = true;
        let v = check_dispatchers([(NodeId(2), &dm)].into_iter());
        assert!(found(&v, ONE_REDO_TABLE_TRIGGER), "{:?}", v);
        assert!(!found(&v, ONE_TABLE_TRIGGER), "{:?}", v);
    }
}
