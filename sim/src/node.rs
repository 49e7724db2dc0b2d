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
#[derive(Clone, Copy, Debug, Default)]
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

/// How a capture's periodic loops run (a scenario's `engine`, `--engine`; a seed file
/// records it, and a file without one ran `capture-loops`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    /// A role's loops run while the capture holds it, as TiCDC starts a maintainer's,
    /// a dispatcher manager's and the coordinator's goroutines with the component: they
    /// start when the capture takes its first maintainer, dispatcher manager or the
    /// coordinator (first tick one period later, as a Go ticker's) and stop when it holds
    /// none (a lost role's loops wake once more and end), so fewer madsim polls per seed.
    #[default]
    RoleLoops,
    /// Every loop runs for the capture's whole life, its phase fixed by the capture's
    /// index; the loops of a role the capture does not hold wake and do nothing. Kept so
    /// that the seed files written before `role-loops` replay as recorded, with the
    /// stream-reconnect stragglers of their time (`world::network::reconnect`).
    CaptureLoops,
}

impl Engine {
    pub fn is_capture_loops(&self) -> bool {
        *self == Engine::CaptureLoops
    }

    pub fn is_default(&self) -> bool {
        *self == Engine::default()
    }

    /// What a seed file without an `engine` ran.
    pub fn of_older_files() -> Engine {
        Engine::CaptureLoops
    }

    pub fn name(self) -> &'static str {
        match self {
            Engine::CaptureLoops => "capture-loops",
            Engine::RoleLoops => "role-loops",
        }
    }
}

/// The roles whose loops run only while a capture holds them (under `role-loops`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopRole {
    Maintainer = 0,
    Dispatcher = 1,
    Coordinator = 2,
}

const LOOP_ROLES: [LoopRole; 3] = [LoopRole::Maintainer, LoopRole::Dispatcher, LoopRole::Coordinator];

impl LoopRole {
    /// Whether the capture holds the role: the negation of its loops' idle test.
    fn held(self, ns: &NodeState) -> bool {
        match self {
            LoopRole::Maintainer => !no_maintainer(ns),
            LoopRole::Dispatcher => !no_manager(ns),
            LoopRole::Coordinator => !no_coordinator(ns),
        }
    }
}

/// Under `role-loops`, per capture: which roles' loops run and each role's loop epoch
/// (a loop of an older epoch ends at its next wake-up).
#[derive(Clone, Debug, Default)]
pub struct RoleLoops {
    running: [bool; 3],
    epoch: [u64; 3],
}

impl RoleLoops {
    /// A new incarnation holds no role yet; loops of the old one end.
    pub fn restart(&mut self) {
        for r in LOOP_ROLES {
            self.running[r as usize] = false;
            self.epoch[r as usize] += 1;
        }
    }

    /// After a step: `held`, the roles the capture holds now. Returns the roles whose
    /// loops start, each with its new epoch; a lost role's epoch moves on too, so its
    /// loops end at their next wake-up.
    fn sync(&mut self, held: [bool; 3]) -> Vec<(LoopRole, u64)> {
        let mut start = Vec::new();
        for r in LOOP_ROLES {
            let i = r as usize;
            if held[i] != self.running[i] {
                self.running[i] = held[i];
                self.epoch[i] += 1;
                if held[i] {
                    start.push((r, self.epoch[i]));
                }
            }
        }
        start
    }

    fn is_current(&self, role: LoopRole, epoch: u64) -> bool {
        self.epoch[role as usize] == epoch
    }
}

/// One periodic loop of a capture: the role it belongs to (`None`: the capture's own,
/// always running), its period and its step.
#[derive(Clone, Copy)]
struct LoopDef {
    role: Option<LoopRole>,
    period_ms: u64,
    kind: StepKind,
    idle: IdleFn,
    f: StepFn,
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

/// A role's loop under `role-loops`: first step one period after the role started, and
/// none once the role's epoch moved on (the capture lost the role, or restarted).
async fn role_periodic(w: W, n: NodeId, gen: u64, role: LoopRole, epoch: u64, d: LoopDef) {
    loop {
        madsim::time::sleep(Duration::from_millis(d.period_ms)).await;
        let current = w.lock().unwrap().nodes[n.0 as usize].role_loops.is_current(role, epoch);
        if !current || !step_unless_idle(&w, n, Some(gen), d.kind, d.idle, d.f) {
            return;
        }
    }
}

/// Spawn the loops of node `n` (generation `gen`) on the current madsim node: all of
/// them under `capture-loops`; the capture's own ones under `role-loops` (the roles'
/// start in [`sync_role_loops`]).
pub fn start_node_tasks(w: &W, n: NodeId, gen: u64, timers: NodeTimers) {
    // The heartbeat collector's ticker starts with the manager's first dispatcher, so its
    // phase against the event polls is arbitrary in TiCDC: a phase derived from the seed
    // (no draw, so no random stream moves) keeps the aggregate from always running just
    // before a same-millisecond event poll, and lets it fall inside a status collector's
    // 10 ms window.
    let (engine, hb_phase) = {
        let g = w.lock().unwrap();
        let seed = g.seed;
        (g.engine, crate::mix::splitmix64(seed ^ (n.0 as u64 + 1).wrapping_mul(crate::mix::GOLDEN)) % EVENT_POLL_MS)
    };
    for d in loops(timers) {
        let phase = if d.kind == StepKind::DmHeartbeat { hb_phase } else { 0 };
        if engine == Engine::CaptureLoops || d.role.is_none() {
            madsim::task::spawn(periodic(w.clone(), n, gen, d.period_ms, phase, d.kind, d.idle, d.f));
        }
    }
}

/// Under `role-loops`, after a step of node `n`: start the loops of each role the
/// capture took, and end those of each role it no longer holds.
pub(crate) fn sync_role_loops(w: &W, wd: &mut World, n: NodeId) {
    let slot = &mut wd.nodes[n.0 as usize];
    let Some(ns) = slot.state.as_ref() else { return };
    let held = LOOP_ROLES.map(|r| r.held(ns));
    if held == slot.role_loops.running {
        return;
    }
    let start = slot.role_loops.sync(held);
    if start.is_empty() {
        return;
    }
    let (gen, timers) = (slot.generation, wd.node_timers);
    for (r, epoch) in start {
        for d in loops(timers).into_iter().filter(|d| d.role == Some(r)) {
            spawn_on(wd, n, role_periodic(w.clone(), n, gen, r, epoch, d));
        }
    }
}

/// Every loop of a capture, in the order `capture-loops` spawns them (the order is part
/// of every trace): the default loops, then the redo ones for a redo changefeed.
fn loops(timers: NodeTimers) -> Vec<LoopDef> {
    let mut v = default_loops(timers.flush_ms.max(10));
    if let Some(r) = timers.redo {
        v.extend(redo_loops(r));
    }
    v
}

fn def(role: Option<LoopRole>, period_ms: u64, kind: StepKind, idle: IdleFn, f: StepFn) -> LoopDef {
    LoopDef { role, period_ms, kind, idle, f }
}

fn default_loops(flush: u64) -> Vec<LoopDef> {
    use LoopRole::*;
    vec![
        def(Some(Maintainer), MAINTAINER_TICK_MS, StepKind::MaintainerTick, no_maintainer, |ns, ctx, up, _| {
            for m in ns.mm.maintainers.values_mut() {
                m.on_tick(ctx, &*up);
            }
        }),
        def(Some(Maintainer), 200, StepKind::Operators, no_maintainer, |ns, ctx, _, _| {
            for m in ns.mm.maintainers.values_mut() {
                m.execute_operators(ctx);
            }
        }),
        def(Some(Maintainer), BASIC_SCHEDULER_INTERVAL_MS, StepKind::Scheduler, no_maintainer, |ns, ctx, _, _| {
            for m in ns.mm.maintainers.values_mut() {
                m.run_basic_scheduler(ctx);
            }
        }),
        // Balance scheduler: polled every second; it runs when its own 15 s (configurable)
        // `nextCheckTime` is due (TiCDC's checker-scheduler loop wakes at that time).
        def(Some(Maintainer), BALANCE_POLL_MS, StepKind::Scheduler, no_maintainer, |ns, ctx, up, _| {
            for m in ns.mm.maintainers.values_mut() {
                m.run_balance_scheduler(ctx, &*up);
            }
        }),
        // The insert half of the historical two-step admission runs as its own step, so
        // another goroutine (an API call) can run in between.
        def(Some(Maintainer), BASIC_SCHEDULER_INTERVAL_MS, StepKind::Scheduler, no_maintainer, |ns, ctx, _, _| {
            for m in ns.mm.maintainers.values_mut() {
                m.finish_pending_admissions(ctx);
            }
        }),
        def(Some(Maintainer), CHECKPOINT_INTERVAL_MS, StepKind::Checkpoint, no_maintainer, |ns, ctx, _, _| {
            for m in ns.mm.maintainers.values_mut() {
                m.run_checkpoint(ctx);
            }
        }),
        def(
            None,
            MAINTAINER_HEARTBEAT_MS,
            StepKind::MaintainerHeartbeat,
            |_| false,
            |ns, ctx, _, _| ns.mm.send_heartbeat(ctx),
        ),
        // Its phase is the capture's (see `start_node_tasks`).
        def(
            None,
            HEARTBEAT_INTERVAL_MS,
            StepKind::DmHeartbeat,
            |_| false,
            |ns, ctx, up, _| {
                ns.orch.poll_failpoints(ctx);
                for dm in ns.orch.managers.values_mut() {
                    dm.heartbeat_with_traffic(ctx, false, &*up);
                }
            },
        ),
        def(Some(Dispatcher), EVENT_POLL_MS, StepKind::Events, no_manager, |ns, ctx, up, _| {
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
        }),
        def(Some(Dispatcher), flush, StepKind::Flush, no_manager, |ns, ctx, _, _| {
            for dm in ns.orch.managers.values_mut() {
                dm.flush_sink(ctx);
            }
        }),
        def(Some(Coordinator), 200, StepKind::Coordinator, no_coordinator, |ns, ctx, _, meta| {
            if let Some(c) = ns.coord.as_mut() {
                c.tick(ctx, meta);
            }
        }),
    ]
}

/// The redo loops of a capture, only for a redo changefeed (so a run without redo
/// schedules exactly the tasks it did before redo existed).
fn redo_loops(r: RedoTimers) -> Vec<LoopDef> {
    use LoopRole::*;
    vec![
        // The redo operator controller and the redo basic scheduler: tasks of their own at
        // the default ones' periods.
        def(Some(Maintainer), 200, StepKind::Operators, no_maintainer, |ns, ctx, _, _| {
            for m in ns.mm.maintainers.values_mut() {
                m.execute_redo_operators(ctx);
            }
        }),
        def(Some(Maintainer), BASIC_SCHEDULER_INTERVAL_MS, StepKind::Scheduler, no_maintainer, |ns, ctx, _, _| {
            for m in ns.mm.maintainers.values_mut() {
                m.run_redo_basic_scheduler(ctx);
            }
        }),
        // `handleRedoMetaTsMessage`.
        def(Some(Maintainer), REDO_META_ROUND_MS, StepKind::MaintainerTick, no_maintainer, |ns, ctx, _, _| {
            for m in ns.mm.maintainers.values_mut() {
                m.run_redo_meta(ctx);
            }
        }),
        // The redo log writer's flush and `collectRedoMeta`, both every `flush-interval`.
        def(Some(Dispatcher), r.flush_ms, StepKind::Flush, no_manager, |ns, ctx, _, _| {
            for dm in ns.orch.managers.values_mut() {
                dm.flush_redo_sink(ctx);
            }
        }),
        def(Some(Dispatcher), r.flush_ms, StepKind::Flush, no_manager, |ns, ctx, _, _| {
            for dm in ns.orch.managers.values_mut() {
                dm.collect_redo_meta(ctx);
            }
        }),
        // The redo meta's `bgFlushMeta`, every `meta-flush-interval`.
        def(Some(Dispatcher), r.meta_flush_ms, StepKind::Flush, no_manager, |ns, ctx, _, _| {
            for dm in ns.orch.managers.values_mut() {
                dm.flush_redo_meta(ctx);
            }
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::{Engine, LoopRole, RoleLoops};
    use crate::result::Outcome;
    use crate::runner::{run_on_fresh_thread, RunOptions};

    /// A role gained, lost and gained again starts one set of loops each time, and only
    /// the newest set stays current; a restart ends every set.
    #[test]
    fn a_role_regained_ends_the_loops_of_its_earlier_tenure() {
        let mut rl = RoleLoops::default();
        assert_eq!(rl.sync([true, false, false]), [(LoopRole::Maintainer, 1)]);
        assert_eq!(rl.sync([true, false, false]), []);
        assert_eq!(rl.sync([false, true, true]), [(LoopRole::Dispatcher, 1), (LoopRole::Coordinator, 1)]);
        assert!(!rl.is_current(LoopRole::Maintainer, 1), "the lost role's loops end");
        assert_eq!(rl.sync([true, true, true]), [(LoopRole::Maintainer, 3)]);
        assert!(rl.is_current(LoopRole::Maintainer, 3) && !rl.is_current(LoopRole::Maintainer, 1));
        rl.restart();
        assert!(LOOP_ROLES_FOR_TEST.iter().all(|(r, e)| !rl.is_current(*r, *e)));
        assert_eq!(rl.sync([false, true, false]), [(LoopRole::Dispatcher, 3)]);
    }

    const LOOP_ROLES_FOR_TEST: [(LoopRole, u64); 3] =
        [(LoopRole::Maintainer, 3), (LoopRole::Dispatcher, 1), (LoopRole::Coordinator, 1)];

    fn run(name: &str, seed: u64, engine: Engine) -> crate::result::RunResult {
        let mut scn = crate::scenario::load::resolve(name).unwrap().scenario;
        scn.engine = engine;
        run_on_fresh_thread(&scn, seed, &Default::default(), &RunOptions::default())
    }

    /// The canonical scenario (the maintainer fails over) and a maintainer moved between
    /// live captures: under `role-loops` no loop wakes on a capture without its role, so
    /// the loops started with each role and ended when the capture lost it.
    #[test]
    fn role_loops_run_only_while_the_capture_holds_the_role() {
        for name in ["maintainer_failover_when_operator", "move_maintainer_with_delayed_messages"] {
            for seed in 0..3 {
                let (cap, role) = (run(name, seed, Engine::CaptureLoops), run(name, seed, Engine::RoleLoops));
                assert_eq!((cap.outcome, role.outcome), (Outcome::Pass, Outcome::Pass), "{name} seed {seed}");
                assert!(cap.idle_steps > 0, "{name} seed {seed}: capture-loops wakes idle loops");
                assert_eq!(role.idle_steps, 0, "{name} seed {seed}: a role's loop ran without its role");
                assert!(role.events < cap.events - cap.idle_steps / 2, "{name} seed {seed}");
                // Same seed, same engine: the same run.
                assert_eq!(role.trace_hash, run(name, seed, Engine::RoleLoops).trace_hash);
            }
        }
    }
}
