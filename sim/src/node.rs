//! The tasks of one capture. TiCDC's goroutines that share state run as separate
//! madsim tasks, so the seeded scheduler interleaves them.

use crate::world::*;
use core_sched::dispatcher::manager::HEARTBEAT_INTERVAL_MS;
use core_sched::maintainer::manager::MAINTAINER_HEARTBEAT_MS;
use core_sched::maintainer::scheduler::BASIC_SCHEDULER_INTERVAL_MS;
use core_sched::maintainer::{CHECKPOINT_INTERVAL_MS, MAINTAINER_TICK_MS};
use core_sched::types::*;
use std::time::Duration;

/// Event collector poll period. Simplification: TiCDC pushes events as they arrive;
/// a 50 ms poll bounds the number of simulation steps.
pub const EVENT_POLL_MS: u64 = 50;
/// Events fed to a dispatcher per poll at most (bounds the queue).
pub const FEED_WINDOW_MS: u64 = 1000;
/// Poll period of the balance scheduler task (its interval is `check-balance-interval`).
pub const BALANCE_POLL_MS: u64 = 1000;

/// The periods of a capture's tasks that the changefeed's configuration sets.
#[derive(Clone, Copy, Debug)]
pub struct NodeTimers {
    /// `sink.flush-interval`.
    pub flush_ms: u64,
    /// With redo on (`consistent.level = "eventual"`): its periods.
    pub redo: Option<RedoTimers>,
}

/// `consistent.flush-interval` and `consistent.meta-flush-interval`, adjusted.
#[derive(Clone, Copy, Debug)]
pub struct RedoTimers {
    pub flush_ms: u64,
    pub meta_flush_ms: u64,
}

/// `periodRedoInterval` (maintainer.go:51): the maintainer's redo meta round.
pub const REDO_META_ROUND_MS: u64 = 1_000;

/// One step of a capture's task: its state, a context, the upstream and the meta store.
type StepFn = fn(
    &mut NodeState,
    &mut core_sched::effects::Ctx,
    &mut crate::upstream::Upstream,
    &mut core_sched::coordinator::MetaStore,
);

/// Whether a loop's step has nothing to do on this capture (see [`step_unless_idle`]).
type IdleFn = fn(&NodeState) -> bool;

/// The loops of the maintainer role run over the capture's maintainers: none, nothing to do.
fn no_maintainer(ns: &NodeState) -> bool {
    ns.mm.maintainers.is_empty()
}

/// The loops of the dispatcher side run over the capture's dispatcher managers.
fn no_manager(ns: &NodeState) -> bool {
    ns.orch.managers.is_empty()
}

/// The coordinator's tick runs only on the capture that holds the coordinator.
fn no_coordinator(ns: &NodeState) -> bool {
    ns.coord.is_none()
}

#[allow(clippy::too_many_arguments)]
async fn periodic(w: W, n: NodeId, gen: u64, period_ms: u64, phase_ms: u64, kind: StepKind, idle: IdleFn, f: StepFn) {
    // Desynchronise the loops of different nodes.
    madsim::time::sleep(Duration::from_millis(1 + (n.0 as u64 * 7) % period_ms.max(1) + phase_ms)).await;
    loop {
        if !step_unless_idle(&w, n, Some(gen), kind, idle, f) {
            return;
        }
        madsim::time::sleep(Duration::from_millis(period_ms)).await;
    }
}

/// Spawn every loop of node `n` (generation `gen`) on the current madsim node.
pub fn start_node_tasks(w: &W, n: NodeId, gen: u64, timers: NodeTimers) {
    let flush_ms = timers.flush_ms;
    // The heartbeat collector's ticker starts with the manager's first dispatcher, so its
    // phase against the event polls is arbitrary in TiCDC: a phase derived from the seed
    // (no draw, so no random stream moves) keeps the aggregate from always running just
    // before a same-millisecond event poll, and lets it fall inside a status collector's
    // 10 ms window.
    let hb_phase = {
        let seed = w.lock().unwrap().seed;
        crate::mix::splitmix64(seed ^ (n.0 as u64 + 1).wrapping_mul(crate::mix::GOLDEN)) % EVENT_POLL_MS
    };
    let sp_phase = |p: u64, phase: u64, k: StepKind, idle: IdleFn, f: StepFn| {
        madsim::task::spawn(periodic(w.clone(), n, gen, p, phase, k, idle, f));
    };
    let sp = |p: u64, k: StepKind, idle: IdleFn, f: StepFn| {
        madsim::task::spawn(periodic(w.clone(), n, gen, p, 0, k, idle, f));
    };
    sp(MAINTAINER_TICK_MS, StepKind::MaintainerTick, no_maintainer, |ns, ctx, up, _| {
        for m in ns.mm.maintainers.values_mut() {
            m.on_tick(ctx, &*up);
        }
    });
    sp(200, StepKind::Operators, no_maintainer, |ns, ctx, _, _| {
        for m in ns.mm.maintainers.values_mut() {
            m.execute_operators(ctx);
        }
    });
    sp(BASIC_SCHEDULER_INTERVAL_MS, StepKind::Scheduler, no_maintainer, |ns, ctx, _, _| {
        for m in ns.mm.maintainers.values_mut() {
            m.run_basic_scheduler(ctx);
        }
    });
    // Balance scheduler: polled every second; it runs when its own 15 s (configurable)
    // `nextCheckTime` is due (TiCDC's checker-scheduler loop wakes at that time).
    sp(BALANCE_POLL_MS, StepKind::Scheduler, no_maintainer, |ns, ctx, up, _| {
        for m in ns.mm.maintainers.values_mut() {
            m.run_balance_scheduler(ctx, &*up);
        }
    });
    // The insert half of the historical two-step admission runs as its own step, so
    // another goroutine (an API call) can run in between.
    sp(BASIC_SCHEDULER_INTERVAL_MS, StepKind::Scheduler, no_maintainer, |ns, ctx, _, _| {
        for m in ns.mm.maintainers.values_mut() {
            m.finish_pending_admissions(ctx);
        }
    });
    sp(CHECKPOINT_INTERVAL_MS, StepKind::Checkpoint, no_maintainer, |ns, ctx, _, _| {
        for m in ns.mm.maintainers.values_mut() {
            m.run_checkpoint(ctx);
        }
    });
    sp(MAINTAINER_HEARTBEAT_MS, StepKind::MaintainerHeartbeat, |_| false, |ns, ctx, _, _| ns.mm.send_heartbeat(ctx));
    sp_phase(
        HEARTBEAT_INTERVAL_MS,
        hb_phase,
        StepKind::DmHeartbeat,
        |_| false,
        |ns, ctx, up, _| {
            ns.orch.poll_failpoints(ctx);
            for dm in ns.orch.managers.values_mut() {
                dm.heartbeat_with_traffic(ctx, false, &*up);
            }
        },
    );
    sp(EVENT_POLL_MS, StepKind::Events, no_manager, |ns, ctx, up, _| {
        let resolved = up.resolved_ts(ctx.now_ms);
        for dm in ns.orch.managers.values_mut() {
            let sync_point = dm.config.sync_point_interval();
            for (id, span, fed, trig, qlen) in dm.event_cursors(ctx.now_ms) {
                if qlen > 4096 || fed >= resolved {
                    continue;
                }
                let to = resolved.min(fed + ts_from_ms(FEED_WINDOW_MS));
                let evs = up.events_for(&span, trig, fed, to, sync_point);
                dm.feed(id, evs, to);
            }
            dm.process(ctx);
        }
    });
    let flush = flush_ms.max(10);
    madsim::task::spawn(periodic(w.clone(), n, gen, flush, 0, StepKind::Flush, no_manager, |ns, ctx, _, _| {
        for dm in ns.orch.managers.values_mut() {
            dm.flush_sink(ctx);
        }
    }));
    sp(200, StepKind::Coordinator, no_coordinator, |ns, ctx, _, meta| {
        if let Some(c) = ns.coord.as_mut() {
            c.tick(ctx, meta);
        }
    });
    if let Some(r) = timers.redo {
        start_redo_tasks(w, n, gen, r);
    }
}

/// The redo tasks of a capture, spawned only for a redo changefeed (so a run without
/// redo schedules exactly the tasks it did before redo existed).
fn start_redo_tasks(w: &W, n: NodeId, gen: u64, r: RedoTimers) {
    let sp = |p: u64, k: StepKind, idle: IdleFn, f: StepFn| {
        madsim::task::spawn(periodic(w.clone(), n, gen, p, 0, k, idle, f));
    };
    // The redo operator controller and the redo basic scheduler: tasks of their own at
    // the default ones' periods.
    sp(200, StepKind::Operators, no_maintainer, |ns, ctx, _, _| {
        for m in ns.mm.maintainers.values_mut() {
            m.execute_redo_operators(ctx);
        }
    });
    sp(BASIC_SCHEDULER_INTERVAL_MS, StepKind::Scheduler, no_maintainer, |ns, ctx, _, _| {
        for m in ns.mm.maintainers.values_mut() {
            m.run_redo_basic_scheduler(ctx);
        }
    });
    // `handleRedoMetaTsMessage`.
    sp(REDO_META_ROUND_MS, StepKind::MaintainerTick, no_maintainer, |ns, ctx, _, _| {
        for m in ns.mm.maintainers.values_mut() {
            m.run_redo_meta(ctx);
        }
    });
    // The redo log writer's flush and `collectRedoMeta`, both every `flush-interval`.
    sp(r.flush_ms, StepKind::Flush, no_manager, |ns, ctx, _, _| {
        for dm in ns.orch.managers.values_mut() {
            dm.flush_redo_sink(ctx);
        }
    });
    sp(r.flush_ms, StepKind::Flush, no_manager, |ns, ctx, _, _| {
        for dm in ns.orch.managers.values_mut() {
            dm.collect_redo_meta(ctx);
        }
    });
    // The redo meta's `bgFlushMeta`, every `meta-flush-interval`.
    sp(r.meta_flush_ms, StepKind::Flush, no_manager, |ns, ctx, _, _| {
        for dm in ns.orch.managers.values_mut() {
            dm.flush_redo_meta(ctx);
        }
    });
}
