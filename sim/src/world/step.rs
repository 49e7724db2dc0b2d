//! The step executor: one protocol step of one role on one node, and what becomes of its
//! effects (trace records, typed observations for the checkers, messages, storage requests).

use super::*;
use crate::checkers;
use crate::upstream::Upstream;
use core_sched::coordinator::MetaStore;
use core_sched::effects::*;
use core_sched::messages::{Message, Topic};
use core_sched::types::*;

/// Run one protocol step on node `n` (if alive and of generation `gen`).
pub fn step(
    w: &W,
    n: NodeId,
    gen: Option<u64>,
    kind: StepKind,
    f: impl FnOnce(&mut NodeState, &mut Ctx, &mut Upstream, &mut MetaStore),
) -> bool {
    step_unless_idle(w, n, gen, kind, |_| false, f)
}

/// [`step`], except that when `idle` holds for the node's state the step's body is known
/// to do nothing (a role's loop on a capture that holds no such role): it then counts as
/// an event and leaves the state, the trace and the checkers' inputs as they were, at a
/// fraction of a full step's cost. A run is the same either way, bit for bit.
pub fn step_unless_idle(
    w: &W,
    n: NodeId,
    gen: Option<u64>,
    kind: StepKind,
    idle: fn(&NodeState) -> bool,
    f: impl FnOnce(&mut NodeState, &mut Ctx, &mut Upstream, &mut MetaStore),
) -> bool {
    let mut g = w.lock().unwrap();
    let wd = &mut *g;
    wd.now_ms = now_ms();
    // Hard stop: past the event budget nothing runs any more (the driver reports it).
    if wd.events > wd.max_events {
        return false;
    }
    let slot = &mut wd.nodes[n.0 as usize];
    if !slot.alive || gen.map(|x| x != slot.generation).unwrap_or(false) {
        return false;
    }
    let Some(ns) = slot.state.as_mut() else { return false };
    if idle(ns) {
        wd.events += 1;
        wd.idle_steps += 1;
        publish_progress(wd);
        // What a step checks whatever it did (the persisted checkpoint, the timeline's
        // bars of stopped captures) is still looked at, at this instant.
        check_persisted_checkpoint(wd);
        observe_timeline(wd, n);
        return true;
    }
    // Judged on the state before the step: a capture is fenced for writing once its
    // orchestrator local-fenced and every manager's write path closed (TiCDC's
    // `LocalFence` waits on `writePathMu` first, so writes issued before it are allowed).
    let write_fenced = ns.orch.fenced && ns.orch.managers.values().all(|dm| dm.write_path_closed);
    // The step's effects go into the world's reused buffers (taken empty, put back
    // drained): most steps emit a few items, and fresh vectors cost an allocation each.
    let mut out = std::mem::take(&mut wd.out_buf);
    {
        let mut ctx = Ctx {
            now_ms: wd.now_ms,
            node: n,
            rng: &mut wd.core_rng,
            bugs: &wd.bugs,
            failpoints: &wd.failpoints[n.0 as usize],
            out: &mut out,
            ddl_ts: &wd.storage,
            continuations: ContinuationMode::Deferred,
        };
        f(ns, &mut ctx, &mut wd.upstream, &mut wd.meta);
        // The maintainer's controllers and barrier have no context of their own.
        ns.mm.flush_assertions(&mut ctx);
    }
    if wd.engine == crate::node::Engine::RoleLoops {
        crate::node::sync_role_loops(w, wd, n);
    }
    wd.events += 1;
    publish_progress(wd);
    apply_out(w, wd, n, kind, write_fenced, &mut out);
    wd.out_buf = out;
    true
}

/// Publish the simulated time and the event count for a long run's progress line.
fn publish_progress(wd: &World) {
    if let Some(p) = &wd.progress {
        p.sim_ms.store(wd.now_ms, std::sync::atomic::Ordering::Relaxed);
        p.events.store(wd.events, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Apply a step's effects, leaving `out` empty (its buffers keep their capacity).
pub(crate) fn apply_out(w: &W, wd: &mut World, n: NodeId, kind: StepKind, write_fenced: bool, out: &mut Out) {
    let node_name = if out.trace.is_empty() { String::new() } else { n.to_string() };
    let mut dispatchers_changed = kind == StepKind::Membership;
    // Each buffer is drained only when it holds something: most steps fill one or two of
    // the five, and a `Drain` of nothing still costs its drop.
    if !out.trace.is_empty() || !out.observations.is_empty() {
        let mut observations = out.observations.drain(..).peekable();
        for (i, t) in out.trace.drain(..).enumerate() {
            while let Some(o) = observations.next_if(|o| o.before_trace <= i) {
                dispatchers_changed |= observe(wd, n, o.what);
            }
            let fields = t.fields.into_iter().map(|(k, v)| (k.into(), v)).collect();
            wd.record(&node_name, role_name(t.role), t.epoch, t.kind, fields);
        }
        for o in observations {
            dispatchers_changed |= observe(wd, n, o.what);
        }
    }
    if !out.msgs.is_empty() {
        for env in out.msgs.drain(..) {
            // Every TiCDC path that answers a bootstrap with an error logs it at Error level
            // first (`ensureBootstrapTableTriggerDispatcher`, the trigger-ID checks, "create
            // new dispatcher manager failed"), before the maintainer sees it.
            if let Message::MaintainerBootstrapResponse { err: Some(e), .. }
            | Message::MaintainerPostBootstrapResponse { err: Some(e), .. } = &env.msg
            {
                wd.errors_logged.push((wd.now_ms, format!("node={} bootstrap answered with error: {}", n, e.message)));
            }
            send(w, wd, env);
        }
    }
    for (inv, d) in checkers::check_no_write_after_fence(n, write_fenced, &out.storage) {
        wd.violate(inv, d);
    }
    if !out.storage.is_empty() {
        for req in out.storage.drain(..) {
            storage_request(w, wd, n, req);
        }
    }
    if !out.wakeups.is_empty() {
        for wk in out.wakeups.drain(..) {
            spawn_continuation(w, wd, n, wk);
        }
    }
    if dispatchers_changed {
        if let Some(st) = wd.nodes[n.0 as usize].state.as_ref() {
            let ds =
                st.orch.managers.values().flat_map(|dm| dm.dispatchers.iter().map(|(id, d)| (*id, d.span.table_id)));
            wd.causes.dispatchers(ds);
        }
    }
    check(wd, n, kind, dispatchers_changed);
    observe_timeline(wd, n);
}

/// A role's name in the trace (its variant name, as `{:?}` prints it).
pub(crate) fn role_name(r: Role) -> &'static str {
    match r {
        Role::Coordinator => "Coordinator",
        Role::Maintainer => "Maintainer",
        Role::Orchestrator => "Orchestrator",
        Role::DispatcherManager => "DispatcherManager",
        Role::Dispatcher => "Dispatcher",
        Role::Sink => "Sink",
    }
}

/// Bring the timeline's bars up to date after a step of `n` (and close those of captures
/// that stopped running since).
fn observe_timeline(wd: &mut World, n: NodeId) {
    let Some(mut rec) = wd.timeline.take() else { return };
    for (i, s) in wd.nodes.iter().enumerate() {
        let view =
            if s.alive { crate::timeline::record::node_view(s.generation, s.state.as_ref(), &wd.cf) } else { None };
        if i == n.0 as usize || view.is_none() {
            rec.observe(wd.now_ms, i as u32, view);
        }
    }
    wd.timeline = Some(rec);
}

/// Run the rest of a goroutine's work (a [`Continuation`]) as a madsim task of its own on
/// node `n`, `after_ms` later (0: as soon as the scheduler picks it, possibly after other
/// tasks ready at this instant). It dies with the node's incarnation.
fn spawn_continuation(w: &W, wd: &World, n: NodeId, wk: Wakeup) {
    let gen = wd.nodes[n.0 as usize].generation;
    let w2 = w.clone();
    spawn_on(wd, n, async move {
        if wk.after_ms > 0 {
            madsim::time::sleep(std::time::Duration::from_millis(wk.after_ms)).await;
        }
        let kind = match wk.task {
            Continuation::MaintainerHeartbeatStatuses { .. } => StepKind::HeartbeatStatuses,
            Continuation::DmStatusBatch { .. } | Continuation::DmBlockStatusBatch { .. } => StepKind::StatusCollector,
        };
        step(&w2, n, Some(gen), kind, |ns, ctx, _, _| match wk.task {
            Continuation::MaintainerHeartbeatStatuses { cf } => {
                if let Some(m) = ns.mm.maintainers.get_mut(&cf) {
                    m.apply_heartbeat_statuses(ctx);
                }
            }
            Continuation::DmStatusBatch { cf } => {
                if let Some(dm) = ns.orch.managers.get_mut(&cf) {
                    dm.collect_status_batch(ctx);
                }
            }
            Continuation::DmBlockStatusBatch { cf } => {
                if let Some(dm) = ns.orch.managers.get_mut(&cf) {
                    dm.collect_block_status_batch(ctx);
                }
            }
        });
    });
}

pub(crate) fn handle_message(
    ns: &mut NodeState,
    ctx: &mut Ctx,
    up: &mut Upstream,
    meta: &mut MetaStore,
    from: NodeId,
    msg: Message,
) {
    match msg.topic() {
        Topic::Coordinator => {
            if let Some(c) = ns.coord.as_mut() {
                c.handle_message(ctx, from, msg, meta);
            }
        }
        Topic::MaintainerManager if ns.mm_stopped => {}
        Topic::MaintainerManager => {
            let schema = crate::upstream::NodeSchemaStore {
                up: &*up,
                gc_fast_fail: ctx.fp(FP_GET_ALL_PHYSICAL_TABLES_GC_FAST_FAIL),
            };
            ns.mm.handle_message(ctx, from, msg, &schema)
        }
        Topic::DispatcherManagerManager | Topic::HeartbeatCollector => ns.orch.handle_message(ctx, from, msg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The trace (and its hash) names roles as their `Debug` form always did.
    #[test]
    fn role_names_are_the_debug_names() {
        let all = [
            Role::Coordinator,
            Role::Maintainer,
            Role::Orchestrator,
            Role::DispatcherManager,
            Role::Dispatcher,
            Role::Sink,
        ];
        for r in all {
            assert_eq!(role_name(r), format!("{:?}", r));
        }
    }
}
