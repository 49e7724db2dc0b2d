//! Runs one seed of a scenario inside a fresh madsim runtime on a fresh OS thread:
//! builds the world, drives the scenario's steps, lets the cluster converge once the
//! faults stop, runs the end checks and classifies the outcome. The submodules hold
//! the drive loop's parts, one concern each; `Driver` is the state they share.

mod api;
mod cluster;
mod config;
mod converge;
mod end_checks;
mod error;
mod lifecycle;
mod pinned_plan;
mod predicates;
mod refs;
mod steps;
pub mod swarm;
mod workload;
mod workload_drop;
mod workload_held;
mod workload_inflight;
mod workload_ops;
mod workload_settle;

pub use error::StepError;
pub use predicates::trace_sequence_seen;

use crate::checkers::*;
use crate::result::*;
use crate::scenario::*;
use crate::world::*;
pub(crate) use config::changefeed_config;
use core_sched::bugs::Bugs;
use core_sched::types::*;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Print the trace as log lines while running.
    pub verbose: bool,
    /// Test hook: mix process-global state into the run so two runs differ.
    pub inject_nondeterminism: bool,
    /// Where the run publishes how far it got, for a progress line (`scenario` prints
    /// one while a run takes long). Written only; it never reaches the run.
    pub progress: Option<std::sync::Arc<RunProgress>>,
    /// Record messages and lifetimes for the `--html` page ([`RunResult::timeline`]).
    pub timeline: bool,
    /// Run the reference invariant checks (`--full-checks`) instead of the fast ones; both
    /// report the same violations.
    pub full_checks: bool,
}

/// How far a run got: simulated time and events, updated after every step.
#[derive(Debug, Default)]
pub struct RunProgress {
    pub sim_ms: std::sync::atomic::AtomicU64,
    pub events: std::sync::atomic::AtomicU64,
}

/// Poll period of `wait` predicates.
const WAIT_POLL_MS: u64 = 100;
pub use crate::world::NODE_FAILURE_DETECTION_MS;

/// Run one seed on the current thread (use [`run_on_fresh_thread`] from tools).
pub fn run_seed(scn: &Scenario, seed: u64, bugs: &Bugs, opts: &RunOptions) -> RunResult {
    let wall = crate::wallclock::Stopwatch::start();
    let rt = madsim::runtime::Runtime::with_seed_and_config(seed, madsim::Config::default());
    let (s, b, o) = (scn.clone(), bugs.clone(), opts.clone());
    // The core counts coverage points per thread; madsim runs every task on this one.
    core_sched::coverage::reset();
    let mut r = rt.block_on(async move { drive(s, seed, b, o).await });
    drop(rt);
    r.coverage = core_sched::coverage::take();
    r.wall_ms = wall.elapsed().as_millis() as u64;
    r
}

/// Run one seed on a fresh OS thread (std hash seeds and thread-local RNG state must
/// not leak from one seed into the next). A panic becomes a `crash` outcome, and so does
/// a failure to spawn the thread: a tool sweeping seeds must keep going either way.
pub fn run_on_fresh_thread(scn: &Scenario, seed: u64, bugs: &Bugs, opts: &RunOptions) -> RunResult {
    quiet_seed_panics();
    let (s, b, o) = (scn.clone(), bugs.clone(), opts.clone());
    let res = std::thread::Builder::new()
        .name(format!("{}{}", SEED_THREAD_PREFIX, seed))
        .stack_size(64 << 20)
        .spawn(move || run_seed(&s, seed, &b, &o));
    let res = match res {
        Ok(h) => h.join(),
        Err(e) => return crash_result(scn, seed, bugs, format!("cannot spawn the seed thread: {}", e)),
    };
    match res {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into());
            crash_result(scn, seed, bugs, msg)
        }
    }
}

/// Name prefix of the threads that run one seed.
const SEED_THREAD_PREFIX: &str = "seed-";

/// Silence the default panic message on seed threads (the panic becomes a `crash`
/// outcome with its message), once per process. Swapping the hook around every run
/// instead would race when several threads run seeds at once (`fuzz --jobs`, `cargo
/// test`) and could leave the silent hook installed for the whole process.
fn quiet_seed_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !std::thread::current().name().is_some_and(|n| n.starts_with(SEED_THREAD_PREFIX)) {
                prev(info);
            }
        }));
    });
}

/// The result of a run that crashed before producing one.
pub fn crash_result(scn: &Scenario, seed: u64, bugs: &Bugs, msg: String) -> RunResult {
    let bug_names: Vec<String> = bugs.names().iter().map(|s| s.to_string()).collect();
    RunResult {
        scenario: scn.name.clone(),
        seed,
        bugs: bug_names,
        fixes: bugs.fix_names().iter().map(|s| s.to_string()).collect(),
        outcome: Outcome::Crash,
        violations: vec![],
        trace_hash: String::new(),
        sim_time_ms: 0,
        wall_ms: 0,
        events: 0,
        idle_steps: 0,
        config: vec![],
        phases: vec![],
        checks: vec![],
        trace: vec![],
        crash: Some(msg),
        net: Default::default(),
        interleavings: Default::default(),
        coverage: Default::default(),
        causes: vec![],
        dispatcher_tables: Default::default(),
        names: crate::names::Names { tables: Default::default(), nodes: scn.cluster.nodes },
        timeline: None,
    }
}

/// The state of one run: the world, the capture processes and what the steps have
/// named or captured so far. The submodules each add the methods of one concern.
struct Driver {
    w: W,
    scn: Scenario,
    handles: Vec<madsim::runtime::NodeHandle>,
    vars: BTreeMap<String, NodeId>,
    tables: BTreeMap<String, TableId>,
    liveness: Vec<Violation>,
    phases: Vec<(String, u64)>,
    flush_ms: u64,
    /// Swarm fault families (name -> on); empty when the scenario is not a swarm.
    families: BTreeMap<String, bool>,
    /// Families a pinned plan does not name (off; see `drive`).
    unnamed: BTreeSet<String>,
    /// Values captured by `trace_seen` predicates (`capture`), referenced as `$name`.
    values: BTreeMap<String, String>,
    /// Stop flags of the background DML loops (`dml_loop`).
    dml_loops: Vec<Arc<AtomicBool>>,
}

impl Driver {
    /// The scenario's `api-mode` (the loader allows only `default` and `redo`).
    fn api_mode(&self) -> Mode {
        match self.scn.api_mode.as_deref() {
            Some("redo") => Mode::Redo,
            _ => Mode::Default,
        }
    }
}

/// One run inside the madsim runtime: setup, steps, converge, checks, result.
async fn drive(scn: Scenario, seed: u64, bugs: Bugs, opts: RunOptions) -> RunResult {
    init_clock();
    let (mut world, masked) = config::build_world(&scn, seed, &bugs, &opts);
    let mut cfg = changefeed_config(&scn.changefeed);
    let mut config_lines = config::config_lines(&scn, seed, &bugs, &masked, &cfg);
    // Swarm: the seed decides which fault families are on (and how hard), so one
    // scenario covers many fault mixes. The plan is printed with the configuration.
    // A pinned plan (`faults.swarm-families`) switches the families without a draw.
    let families = if scn.faults.swarm {
        swarm::draw(seed, &mut world, &mut cfg, &mut config_lines)
    } else {
        let pinned = scn.faults.swarm_families.clone().unwrap_or_default();
        if !pinned.is_empty() {
            config_lines.push(format!("swarm families (pinned) = {:?}", pinned));
        }
        pinned
    };
    // A pinned plan that does not name a family was recorded before the family joined
    // the swarm: the family is off, and its ops are not even in the traced op list.
    let unnamed: BTreeSet<String> = match &scn.faults.swarm_families {
        Some(m) if !scn.faults.swarm => {
            SWARM_FAMILIES.iter().filter(|f| !m.contains_key(**f)).map(|f| f.to_string()).collect()
        }
        _ => BTreeSet::new(),
    };
    let mut families = families;
    for f in &unnamed {
        families.insert(f.clone(), false);
    }
    let w: W = Arc::new(Mutex::new(world));
    let handle = madsim::runtime::Handle::current();
    let net = handle.create_node().name("network").build();
    w.lock().unwrap().net_handle = Some(net);
    let flush_ms = cfg.sink.flush_interval_ms;
    let timers = crate::node::NodeTimers {
        flush_ms,
        redo: cfg.consistent.redo_enabled().then_some(crate::node::RedoTimers {
            flush_ms: cfg.consistent.flush_interval_ms,
            meta_flush_ms: cfg.consistent.meta_flush_interval_ms,
        }),
    };
    w.lock().unwrap().node_timers = timers;
    let handles = cluster::spawn_captures(&w, &scn, timers);
    let mut d = Driver {
        w: w.clone(),
        scn: scn.clone(),
        handles,
        vars: BTreeMap::new(),
        tables: BTreeMap::new(),
        liveness: vec![],
        phases: vec![],
        flush_ms,
        families,
        unnamed,
        values: BTreeMap::new(),
        dml_loops: vec![],
    };
    madsim::time::sleep(Duration::from_millis(5)).await;
    notify_membership(&w);
    d.setup(&cfg);
    d.phase("setup");
    let mut stopped_early = false;
    for st in scn.steps.iter() {
        let step = st.get_ref().clone();
        if let Err(e) = d.run_step(&step).await {
            d.liveness.push(Violation { invariant: CONVERGES.into(), at_ms: d.now(), detail: e.to_string() });
            stopped_early = true;
            break;
        }
    }
    d.stop_dml_loops();
    d.phase("steps");
    if !stopped_early {
        d.converge().await;
    }
    d.phase("converge");
    let checks = if stopped_early { vec![] } else { d.run_checks() };
    d.phase("checks");
    // Kill every node so no task leaks from seed to seed.
    for h in &d.handles {
        madsim::runtime::Handle::current().kill(h.id());
    }
    madsim::time::sleep(Duration::from_millis(1)).await;
    let (result, net) = {
        let mut g = w.lock().unwrap();
        config_lines.extend(d.vars.iter().map(|(k, v)| format!("var ${} = {}", k, v)));
        let violations = order_violations(g.violations.clone(), &d.liveness, &checks, g.now_ms);
        let outcome = outcome_of(&violations);
        let result = RunResult {
            scenario: scn.name.clone(),
            seed,
            bugs: bugs.names().iter().map(|s| s.to_string()).collect(),
            fixes: bugs.fix_names().iter().map(|s| s.to_string()).collect(),
            outcome,
            violations,
            trace_hash: format!("{:016x}", g.hash.0),
            sim_time_ms: g.now_ms,
            wall_ms: 0,
            events: g.events,
            idle_steps: g.idle_steps,
            config: config_lines,
            phases: d.phases.clone(),
            checks,
            trace: std::mem::take(&mut g.trace),
            crash: None,
            interleavings: g.interleavings.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            coverage: Default::default(),
            causes: std::mem::take(&mut g.causes.records),
            dispatcher_tables: std::mem::take(&mut g.causes.tables),
            names: crate::names::Names {
                tables: g.upstream.tables.iter().map(|(id, t)| (*id, t.name.clone())).collect(),
                nodes: scn.cluster.nodes,
            },
            timeline: g
                .timeline
                .take()
                .map(|recorder| Box::new(crate::timeline::Recorded { recorder: *recorder, nodes: scn.cluster.nodes })),
            net: NetStats {
                delivered: g.net.delivered,
                dropped: g.net.dropped,
                lost: g.net.lost,
                duplicated: g.net.duplicated,
                spiked: g.net.spiked,
                lagged: g.net.collector.lagged + g.net.stream.lagged,
                storage_errors: g.storage_errors,
                reconnects: g.net.reconnects,
                read_before_reset: g.net.read_before_reset,
                straggled: g.net.straggled,
            },
        };
        // Tasks still queued in the runtime when the run returns (timers of killed nodes, the
        // network's) hold the world, and madsim keeps them: empty it, so a campaign does not
        // keep every seed's nodes and trace until the process ends.
        let net = g.net_handle.take();
        *g = World::new(0, Bugs::none(), 0, [0, 0]);
        (result, net)
    };
    // A madsim task's future holds its own waker, so a task still pending when the
    // runtime is dropped is never freed. The network node's delivery tasks are: kill it
    // too (after the result is taken, so traces do not change), and let the executor
    // drop the woken tasks of every killed node.
    if let Some(net) = net {
        madsim::runtime::Handle::current().kill(net.id());
    }
    madsim::time::sleep(Duration::from_millis(1)).await;
    result
}

impl Driver {
    /// Simulated time as the world last recorded it.
    fn now(&self) -> u64 {
        self.w.lock().unwrap().now_ms
    }

    /// Mark the end of a phase of the run (for the report).
    fn phase(&mut self, name: &str) {
        let t = {
            let mut g = self.w.lock().unwrap();
            g.now_ms = crate::world::now_ms();
            g.now_ms
        };
        self.phases.push((name.to_string(), t));
    }

    /// Sleep `ms` of simulated time, but not past `limits.max-sim-time-ms`: a sleep that
    /// would end beyond it stops there with the limit's error (one timer either way, so
    /// a sleep within the limit schedules exactly as before).
    async fn sleep_within_limit(&self, ms: u64) -> Result<(), StepError> {
        let left = self.scn.limits.max_sim_time_ms.saturating_sub(crate::world::now_ms()) + 1;
        madsim::time::sleep(Duration::from_millis(ms.min(left))).await;
        if ms > left {
            self.w.lock().unwrap().now_ms = crate::world::now_ms();
            return Err(StepError::SimTimeLimit(self.scn.limits.max_sim_time_ms));
        }
        Ok(())
    }

    /// The scenario's event and simulated-time limits: an error once one is reached.
    fn budget(&self) -> Result<(), StepError> {
        let g = self.w.lock().unwrap();
        if g.events > self.scn.limits.max_events {
            return Err(StepError::EventBudget(self.scn.limits.max_events));
        }
        if g.now_ms > self.scn.limits.max_sim_time_ms {
            return Err(StepError::SimTimeLimit(self.scn.limits.max_sim_time_ms));
        }
        Ok(())
    }
}
