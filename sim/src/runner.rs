//! Runs one seed of a scenario inside a fresh madsim runtime on a fresh OS thread:
//! builds the world, drives the scenario's steps, lets the cluster converge once the
//! faults stop, runs the end checks and classifies the outcome.

use crate::invariants::*;
use crate::node::start_node_tasks;
use crate::result::*;
use crate::scenario::*;
use crate::world::*;
use core_sched::bugs::Bugs;
use core_sched::config::{ChangefeedConfig, SchedulerConfig, SinkConfig};
use core_sched::coordinator::ChangefeedInfo;
use core_sched::maintainer::span_controller::ReplicaState;
use core_sched::messages::{ComponentState, FeedState};
use core_sched::types::*;
use core_sched::upstream::RowOp;
use rand::Rng;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Print the trace as log lines while running.
    pub verbose: bool,
    /// Test hook: mix process-global state into the run so two runs differ.
    pub inject_nondeterminism: bool,
}

static NONDETERMINISM: AtomicU64 = AtomicU64::new(1);

/// How long API steps (move/split/merge table) retry before the run fails.
const API_RETRY_TIMEOUT_MS: u64 = 60_000;
/// Poll period of `wait` predicates.
const WAIT_POLL_MS: u64 = 100;
/// Delay before the cluster notices a killed node (etcd session TTL).
pub const NODE_FAILURE_DETECTION_MS: u64 = 3_000;

/// Run one seed on the current thread (use [`run_on_fresh_thread`] from tools).
pub fn run_seed(scn: &Scenario, seed: u64, bugs: &Bugs, opts: &RunOptions) -> RunResult {
    let wall = std::time::Instant::now();
    let rt = madsim::runtime::Runtime::with_seed_and_config(seed, madsim::Config::default());
    let (s, b, o) = (scn.clone(), bugs.clone(), opts.clone());
    let mut r = rt.block_on(async move { drive(s, seed, b, o).await });
    drop(rt);
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
        config: vec![],
        phases: vec![],
        checks: vec![],
        trace: vec![],
        crash: Some(msg),
        net: Default::default(),
    }
}

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
    /// Values captured by `trace_seen` predicates (`capture`), referenced as `$name`.
    values: BTreeMap<String, String>,
    /// Stop flags of the background DML loops (`dml_loop`).
    dml_loops: Vec<Arc<AtomicBool>>,
}

/// A duration already checked by the loader.
fn duration_ms(s: &Option<String>, default: u64) -> u64 {
    s.as_deref().map(|d| parse_duration_ms(d).unwrap_or(default)).unwrap_or(default)
}

fn changefeed_config(c: &ChangefeedDef) -> ChangefeedConfig {
    let mut s = SchedulerConfig {
        enable_table_across_nodes: c.enable_table_across_nodes,
        enable_splittable_check: c.enable_splittable_check,
        ..Default::default()
    };
    if let Some(v) = c.region_threshold {
        s.region_threshold = v;
    }
    if let Some(v) = c.region_count_per_span {
        s.region_count_per_span = v;
    }
    if let Some(v) = c.check_balance_interval_ms {
        s.check_balance_interval_ms = v;
    }
    s.region_count_refresh_interval_ms =
        duration_ms(&c.region_count_refresh_interval, s.region_count_refresh_interval_ms);
    if let Some(v) = c.write_key_threshold {
        s.write_key_threshold = v;
    }
    if let Some(v) = c.balance_score_threshold {
        s.balance_score_threshold = v;
    }
    s.adjust_write_key_threshold();
    let mut sink = SinkConfig::default();
    if let Some(v) = c.flush_interval_ms {
        sink.flush_interval_ms = v;
    }
    let d = ChangefeedConfig::default();
    ChangefeedConfig {
        scheduler: s,
        sink,
        enable_sync_point: c.enable_sync_point,
        sync_point_interval_ms: duration_ms(&c.sync_point_interval, d.sync_point_interval_ms),
        sync_point_retention_ms: duration_ms(&c.sync_point_retention, d.sync_point_retention_ms),
    }
}

async fn drive(scn: Scenario, seed: u64, bugs: Bugs, opts: RunOptions) -> RunResult {
    init_clock();
    let nodes = scn.cluster.nodes;
    // The scenario's masked findings: their candidate fixes apply to the run, but the
    // result names only the fixes asked for (`--fix`), so reproduce commands and seed
    // files stay as they are (the scenario applies its masks again).
    let masked: Vec<core_sched::bugs::Fix> = scn.masked_fixes().into_iter().filter(|f| !bugs.fix_on(*f)).collect();
    let mut run_bugs = bugs.clone();
    for f in &masked {
        run_bugs = run_bugs.with_fix(*f);
    }
    let mut world = World::new(seed, run_bugs, nodes, scn.faults.net_delay_ms);
    world.net.loss = scn.faults.loss.clamp(0.0, 1.0);
    world.net.duplicate = scn.faults.duplicate.clamp(0.0, 1.0);
    world.net.delay_spike = scn.faults.delay_spike.clamp(0.0, 1.0);
    world.net.delay_spike_ms = scn.faults.delay_spike_ms;
    world.net.delay_spike_local = scn.faults.delay_spike_local;
    world.net.collector.prob = scn.faults.collector_lag.clamp(0.0, 1.0);
    world.net.collector.range_ms = scn.faults.collector_lag_ms;
    world.net.stream.prob = scn.faults.stream_lag.clamp(0.0, 1.0);
    world.net.stream.range_ms = scn.faults.stream_lag_ms;
    world.storage_latency_ms = scn.faults.storage_latency_ms;
    world.max_events = scn.limits.max_events;
    world.storage_error = scn.faults.storage_error.clamp(0.0, 1.0);
    world.schema_store_init_ms = scn.faults.schema_store_init_ms;
    world.trigger_create_ms = scn.faults.trigger_create_ms;
    world.first_event_ms = scn.faults.first_event_ms;
    if opts.inject_nondeterminism {
        use rand::SeedableRng;
        world.sim_rng =
            rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ NONDETERMINISM.fetch_add(0x9E37, Ordering::Relaxed));
    }
    world.verbose = opts.verbose;
    world.check_retryable_after_failover = scn.invariants.no_retryable_error_after_failover;
    let mut cfg = changefeed_config(&scn.changefeed);
    let fix_line = (!bugs.1.is_empty())
        .then(|| format!("fixes = [{}] (candidate fixes, not TiCDC's behaviour)", bugs.fix_names().join(", ")));
    let mut config_lines = vec![
        format!("seed = {}", seed),
        format!("bugs = [{}]", bugs.names().join(", ")),
        format!("nodes = {}", nodes),
        format!("net.delay_ms = {:?}", scn.faults.net_delay_ms),
        format!("storage.latency_ms = {:?}", scn.faults.storage_latency_ms),
        format!(
            "net.loss = {}, net.duplicate = {}, net.delay_spike = {} of {:?} ms",
            scn.faults.loss, scn.faults.duplicate, scn.faults.delay_spike, scn.faults.delay_spike_ms
        ),
        format!("storage.error = {}", scn.faults.storage_error),
        format!("changefeed.scheduler = {:?}", cfg.scheduler),
        format!("changefeed.sink.flush_interval_ms = {}", cfg.sink.flush_interval_ms),
        format!(
            "changefeed.enable_sync_point = {}, sync_point_interval_ms = {}",
            cfg.enable_sync_point, cfg.sync_point_interval_ms
        ),
        format!("node_failure_detection_ms = {}", NODE_FAILURE_DETECTION_MS),
    ];
    if let Some(l) = fix_line {
        config_lines.insert(2, l);
    }
    if !masked.is_empty() {
        let names: Vec<&str> = masked.iter().map(|f| f.name()).collect();
        config_lines.insert(2, format!("masked findings = [{}] (the scenario applies these candidate fixes; `mask-findings = []` runs TiCDC's code as is)", names.join(", ")));
    }
    if scn.faults.collector_lag > 0.0 {
        config_lines
            .push(format!("net.collector_lag = {} of {:?} ms", scn.faults.collector_lag, scn.faults.collector_lag_ms));
    }
    if scn.faults.stream_lag > 0.0 {
        config_lines.push(format!("net.stream_lag = {} of {:?} ms", scn.faults.stream_lag, scn.faults.stream_lag_ms));
    }
    if scn.faults.schema_store_init_ms != [0, 0] {
        config_lines.push(format!("schema_store.init_ms = {:?}", scn.faults.schema_store_init_ms));
    }
    if scn.faults.first_event_ms != [0, 0] {
        config_lines.push(format!("dispatcher.first_event_ms = {:?}", scn.faults.first_event_ms));
    }
    if scn.faults.trigger_create_ms != [0, 0] {
        config_lines.push(format!("trigger.create_ms = {:?}", scn.faults.trigger_create_ms));
    }
    // Swarm: the seed decides which fault families are on (and how hard), so one
    // scenario covers many fault mixes. The plan is printed with the configuration.
    let mut families = BTreeMap::new();
    if scn.faults.swarm {
        use rand::SeedableRng;
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x5757_4152_4d00_0001);
        let mut on = |name: &str, r: &mut rand_chacha::ChaCha8Rng| {
            let v = r.random_bool(0.5);
            families.insert(name.to_string(), v);
            v
        };
        if on("net.loss", &mut r) {
            world.net.loss = r.random_range(0.01..0.1);
        }
        if on("net.duplicate", &mut r) {
            world.net.duplicate = r.random_range(0.01..0.05);
        }
        if on("net.delay_spike", &mut r) {
            world.net.delay_spike = r.random_range(0.01..0.05);
        }
        if on("storage.slow", &mut r) {
            world.storage_latency_ms = [5, r.random_range(50..500)];
        }
        on("kill_restart", &mut r);
        on("move_maintainer", &mut r);
        on("move_table", &mut r);
        on("split_merge", &mut r);
        on("partition", &mut r);
        // Drawn last, so the draws above (and runs without syncpoints) are unchanged.
        if on("sync_point", &mut r) {
            cfg.enable_sync_point = true;
            cfg.sync_point_interval_ms = r.random_range(2..=8u64) * 1000;
        }
        if on("collector.lag", &mut r) {
            world.net.collector.prob = r.random_range(0.01..0.1);
        }
        if on("stream.lag", &mut r) {
            world.net.stream.prob = r.random_range(0.01..0.1);
        }
        // Added after the others, for the same reason (and `random_workload` leaves the
        // op out of its draw when the family is off).
        on("session_loss", &mut r);
        // Slow first events (a new event-store subscription): drawn last as well.
        if on("first_event.slow", &mut r) {
            let lo = r.random_range(0..200u64);
            world.first_event_ms = [lo, r.random_range(lo.max(200)..1500)];
        }
        config_lines.push(format!("swarm families = {:?}", families));
        config_lines.push(format!("swarm plan: net.loss = {:.3}, net.duplicate = {:.3}, net.delay_spike = {:.3}, net.collector_lag = {:.3}, net.stream_lag = {:.3}, storage.latency_ms = {:?}, sync_point_interval_ms = {}, dispatcher.first_event_ms = {:?}", world.net.loss, world.net.duplicate, world.net.delay_spike, world.net.collector.prob, world.net.stream.prob, world.storage_latency_ms, if cfg.enable_sync_point { cfg.sync_point_interval_ms.to_string() } else { "off".into() }, world.first_event_ms));
    }
    let w: W = Arc::new(Mutex::new(world));
    let handle = madsim::runtime::Handle::current();
    let net = handle.create_node().name("network").build();
    w.lock().unwrap().net_handle = Some(net);
    let flush_ms = cfg.sink.flush_interval_ms;
    for j in &scn.cluster.join_later {
        if let Some(i) = j.strip_prefix('n').and_then(|x| x.parse::<usize>().ok()) {
            w.lock().unwrap().nodes[i].held = true;
        }
    }
    let mut handles = Vec::new();
    for i in 0..nodes {
        let w2 = w.clone();
        let h = handle
            .create_node()
            .name(format!("capture-{}", NodeId(i)))
            .init(move || {
                let w = w2.clone();
                async move {
                    let n = NodeId(i);
                    if w.lock().unwrap().nodes[i as usize].held {
                        // A `join-later` capture: its process starts with the `start` step.
                        std::future::pending::<()>().await;
                    }
                    let gen = {
                        let mut g = w.lock().unwrap();
                        let slot = &mut g.nodes[i as usize];
                        slot.generation += 1;
                        slot.alive = true;
                        slot.session_done = false;
                        slot.member = true;
                        let gen = slot.generation;
                        let st = fresh_node_state(&mut g, n);
                        g.nodes[i as usize].state = Some(st);
                        g.record(
                            &n.to_string(),
                            "Node",
                            0,
                            "capture started",
                            vec![("generation".into(), gen.to_string())],
                        );
                        gen
                    };
                    start_node_tasks(&w, n, gen, flush_ms);
                    std::future::pending::<()>().await;
                }
            })
            .build();
        w.lock().unwrap().node_handles[i as usize] = Some(h.clone());
        handles.push(h);
    }
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
            d.liveness.push(Violation { invariant: CONVERGES.into(), at_ms: d.now(), detail: e });
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
    let g = w.lock().unwrap();
    config_lines.extend(d.vars.iter().map(|(k, v)| format!("var ${} = {}", k, v)));
    let violations = order_violations(g.violations.clone(), &d.liveness, &checks, g.now_ms);
    let outcome = outcome_of(&violations);
    RunResult {
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
        config: config_lines,
        phases: d.phases.clone(),
        checks,
        trace: g.trace.clone(),
        crash: None,
        net: NetStats {
            delivered: g.net.delivered,
            dropped: g.net.dropped,
            lost: g.net.lost,
            duplicated: g.net.duplicated,
            spiked: g.net.spiked,
            lagged: g.net.collector.lagged + g.net.stream.lagged,
            storage_errors: g.storage_errors,
        },
    }
}

impl Driver {
    fn now(&self) -> u64 {
        self.w.lock().unwrap().now_ms
    }

    fn phase(&mut self, name: &str) {
        let t = {
            let mut g = self.w.lock().unwrap();
            g.now_ms = crate::world::now_ms();
            g.now_ms
        };
        self.phases.push((name.to_string(), t));
    }

    fn setup(&mut self, cfg: &ChangefeedConfig) {
        let mut g = self.w.lock().unwrap();
        let now = g.now_ms;
        for t in &self.scn.tables {
            let id = g.upstream.create_table(now, &t.schema, &t.name, t.regions);
            if t.write_bytes_per_sec > 0 || t.row_bytes > 0 {
                g.upstream.set_write_rate(now, id, t.write_bytes_per_sec, Some(t.row_bytes));
            }
            self.tables.insert(t.name.clone(), id);
        }
        let start = g.upstream.tso(now);
        g.start_ts = start;
        let cf = g.cf.clone();
        g.meta.changefeeds.insert(
            cf.clone(),
            ChangefeedInfo {
                id: cf.clone(),
                config: cfg.clone(),
                epoch: 0,
                checkpoint_ts: start,
                state: FeedState::Normal,
                last_error: None,
                created: false,
            },
        );
        g.persisted_checkpoint = start;
        g.data_loss.last_checkpoint = start;
        if let Some(iv) = cfg.sync_point_interval() {
            g.sync_points = Some((core_sched::syncpoint::calculate_start_sync_point_ts(start, iv, false), iv));
        }
        g.record(
            "-",
            "Scenario",
            0,
            "create changefeed",
            vec![("changefeed".into(), cf.to_string()), ("start_ts".into(), start.to_string())],
        );
        let gw = &mut *g;
        for t in &self.scn.tables {
            if t.rows > 0 {
                let id = self.tables[&t.name];
                gw.upstream.dml(now, id, t.rows, RowOp::Insert, &mut gw.sim_rng);
            }
        }
    }

    fn table(&self, name: &str) -> Result<TableId, String> {
        self.tables.get(name).copied().ok_or_else(|| format!("unknown table '{}'", name))
    }

    /// Resolve a node reference: `n<i>`, `$maintainer`, or a `[[vars]]` name.
    fn node(&mut self, r: &str) -> Result<NodeId, String> {
        if let Some(i) = r.strip_prefix('n').and_then(|s| s.parse::<u32>().ok()) {
            return Ok(NodeId(i));
        }
        let Some(v) = r.strip_prefix('$') else { return Err(format!("bad node reference '{}'", r)) };
        if let Some(n) = self.vars.get(v) {
            return Ok(*n);
        }
        if v == "maintainer" {
            let m = self.w.lock().unwrap().maintainer().map(|(n, _)| n).ok_or("no maintainer yet")?;
            self.vars.insert("maintainer".into(), m);
            return Ok(m);
        }
        let def =
            self.scn.vars.iter().find(|d| d.name == v).cloned().ok_or_else(|| format!("unknown variable ${}", v))?;
        let mut except = Vec::new();
        for e in &def.except {
            except.push(self.node(e)?);
        }
        let mut g = self.w.lock().unwrap();
        let cands: Vec<NodeId> = (0..self.scn.cluster.nodes).map(NodeId).filter(|n| !except.contains(n)).collect();
        if cands.is_empty() {
            return Err(format!("no node left for ${}", v));
        }
        let n = cands[g.sim_rng.random_range(0..cands.len())];
        g.record(
            "-",
            "Scenario",
            0,
            "choose variable",
            vec![("var".into(), v.to_string()), ("node".into(), n.to_string())],
        );
        drop(g);
        self.vars.insert(v.to_string(), n);
        Ok(n)
    }

    fn nodes(&mut self, r: &str) -> Result<Vec<NodeId>, String> {
        if r == "all" {
            return Ok((0..self.scn.cluster.nodes).map(NodeId).collect());
        }
        Ok(vec![self.node(r)?])
    }

    async fn run_step(&mut self, step: &Step) -> Result<(), String> {
        let desc = format!("{:?}", step);
        {
            let mut g = self.w.lock().unwrap();
            g.now_ms = crate::world::now_ms();
            g.record("-", "Scenario", 0, "step", vec![("step".into(), desc)]);
        }
        match step {
            Step::CreateTable { table, schema, regions } => {
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                let id = g.upstream.create_table(now, schema, table, *regions);
                self.tables.insert(table.clone(), id);
            }
            Step::DropTable { table } => {
                let id = self.table(table)?;
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                g.upstream.drop_table(now, id);
            }
            Step::CreateDatabase { database } => {
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                g.upstream.create_database(now, database)?;
            }
            Step::DropDatabase { database } => {
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                g.upstream.drop_database(now, database)?;
            }
            Step::TruncateTable { table } => {
                let id = self.table(table)?;
                self.truncate(id);
            }
            Step::AddColumn { table } => {
                let id = self.table(table)?;
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                g.upstream.add_column(now, id);
            }
            Step::Insert { table, rows } | Step::Update { table, rows } | Step::Delete { table, rows } => {
                let op = match step {
                    Step::Insert { .. } => RowOp::Insert,
                    Step::Update { .. } => RowOp::Update,
                    _ => RowOp::Delete,
                };
                let id = self.table(table)?;
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                let gw = &mut *g;
                gw.upstream.dml(now, id, *rows, op, &mut gw.sim_rng);
            }
            Step::SplitTableRegions { table, regions } => {
                let id = self.table(table)?;
                self.w.lock().unwrap().upstream.tables.get_mut(&id).unwrap().regions = *regions;
            }
            Step::MergeTableRegions { table, regions } => {
                let id = self.table(table)?;
                self.w.lock().unwrap().upstream.merge_regions(id, *regions);
            }
            Step::SetWriteRate { table, bytes_per_sec, row_bytes } => {
                let id = self.table(table)?;
                let mut g = self.w.lock().unwrap();
                let now = g.now_ms;
                g.upstream.set_write_rate(now, id, *bytes_per_sec, *row_bytes);
            }
            Step::MoveTable { table, to } => {
                let id = self.table(table)?;
                let dest = self.node(to)?;
                self.api_retry(
                    &mut |m, ctx, _| m.api_move_table(ctx, id, dest).map(|n| format!("{} move operators", n)),
                    "move table",
                )
                .await?;
            }
            Step::SplitTable { table } => {
                let id = self.table(table)?;
                self.api_retry(
                    &mut |m, ctx, up| m.api_split_table(ctx, id, up).map(|n| format!("split into {}", n)),
                    "split table",
                )
                .await?;
            }
            Step::MergeTable { table } => {
                let id = self.table(table)?;
                self.api_retry(&mut |m, ctx, _| m.api_merge_table(ctx, id), "merge table").await?;
            }
            Step::MoveMaintainer { to } => {
                // Like TiCDC's schedulers, ask again while another operator of the
                // changefeed is in flight (e.g. the add of a generation that has not
                // reported `BootstrapDone` yet), for up to 60 s.
                let dest = self.node(to)?;
                let deadline = self.now() + MOVE_RETRY_MS;
                loop {
                    match self.move_maintainer(dest)? {
                        MoveAnswer::Accepted => break,
                        MoveAnswer::Busy if self.now() < deadline => {
                            madsim::time::sleep(Duration::from_millis(100)).await
                        }
                        _ => {
                            self.trace_move_refused(dest)?;
                            break;
                        }
                    }
                }
            }
            Step::PauseChangefeed | Step::ResumeChangefeed => {
                let pause = matches!(step, Step::PauseChangefeed);
                let (owner, cf) = {
                    let g = self.w.lock().unwrap();
                    (g.owner().ok_or("no owner")?, g.cf.clone())
                };
                let mut ok = false;
                crate::world::step(&self.w, owner, None, StepKind::Api, |ns, ctx, _, meta| {
                    if let Some(c) = ns.coord.as_mut() {
                        ok = if pause {
                            c.pause_changefeed(ctx, &cf, meta)
                        } else {
                            c.resume_changefeed(ctx, &cf, meta)
                        };
                    }
                });
                if !ok {
                    return Err(format!(
                        "{} changefeed refused (state {:?})",
                        if pause { "pause" } else { "resume" },
                        self.w.lock().unwrap().meta.changefeeds.get(&cf).map(|i| i.state)
                    ));
                }
                if !pause {
                    // Syncpoints are due from the first one at or after the checkpoint the
                    // new maintainer generation starts from.
                    let mut g = self.w.lock().unwrap();
                    let info = g.meta.changefeeds[&cf].clone();
                    if let Some(iv) = info.config.sync_point_interval() {
                        let first = core_sched::syncpoint::calculate_start_sync_point_ts(info.checkpoint_ts, iv, false);
                        g.sync_points = Some(match g.sync_points {
                            Some((f, i)) if i == iv => (f.min(first), iv),
                            _ => (first, iv),
                        });
                    }
                }
            }
            Step::UpdateChangefeed { config } => {
                let mut g = self.w.lock().unwrap();
                let cf = g.cf.clone();
                let info = g.meta.changefeeds.get_mut(&cf).ok_or("no changefeed")?;
                if info.state != core_sched::messages::FeedState::Stopped {
                    return Err(format!(
                        "update changefeed: the changefeed must be paused first (state {:?})",
                        info.state
                    ));
                }
                if let Some(v) = config.enable_sync_point {
                    info.config.enable_sync_point = v;
                }
                if let Some(v) = &config.sync_point_interval {
                    info.config.sync_point_interval_ms = parse_duration_ms(v)?;
                }
                if let Some(v) = &config.sync_point_retention {
                    info.config.sync_point_retention_ms = parse_duration_ms(v)?;
                }
                let c = info.config.clone();
                g.record(
                    "-",
                    "Scenario",
                    0,
                    "update changefeed",
                    vec![
                        ("enable_sync_point".into(), c.enable_sync_point.to_string()),
                        ("sync_point_interval_ms".into(), c.sync_point_interval_ms.to_string()),
                    ],
                );
            }
            Step::DmlLoop { table, interval_ms, rows } => {
                let id = self.table(table)?;
                let stop = Arc::new(AtomicBool::new(false));
                self.dml_loops.push(stop.clone());
                let (w, every, n) = (self.w.clone(), (*interval_ms).max(1), *rows);
                let net = self.w.lock().unwrap().net_handle.clone().unwrap();
                net.spawn(async move {
                    loop {
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                        {
                            let mut g = w.lock().unwrap();
                            g.now_ms = crate::world::now_ms();
                            let now = g.now_ms;
                            let gw = &mut *g;
                            if gw.upstream.tables.get(&id).map(|t| t.dropped_ts.is_none()).unwrap_or(false) {
                                gw.upstream.dml(now, id, n, RowOp::Insert, &mut gw.sim_rng);
                            }
                        }
                        madsim::time::sleep(Duration::from_millis(every)).await;
                    }
                });
            }
            Step::StopDmlLoop => self.stop_dml_loops(),
            Step::EnableFailpoint { name, node } | Step::DisableFailpoint { name, node } => {
                let on = matches!(step, Step::EnableFailpoint { .. });
                let ns = self.nodes(node)?;
                let mut g = self.w.lock().unwrap();
                for n in ns {
                    if on {
                        g.failpoints[n.0 as usize].0.insert(name.clone());
                    } else {
                        g.failpoints[n.0 as usize].0.remove(name);
                    }
                    g.record(
                        &n.to_string(),
                        "Failpoint",
                        0,
                        if on { "enable failpoint" } else { "disable failpoint" },
                        vec![("name".into(), name.clone())],
                    );
                }
            }
            Step::Kill { node } => {
                let n = self.node(node)?;
                self.kill(n);
            }
            Step::SessionLoss { node, notice_ms } => {
                let n = self.node(node)?;
                crate::session::session_loss(&self.w, n, notice_ms.unwrap_or(crate::session::SESSION_DONE_NOTICE_MS));
            }
            Step::Restart { node } => {
                let n = self.node(node)?;
                restart_node(&self.w, n, self.handles[n.0 as usize].id()).await;
            }
            Step::Start { node } => {
                let n = self.node(node)?;
                let held = std::mem::replace(&mut self.w.lock().unwrap().nodes[n.0 as usize].held, false);
                if !held {
                    return Err(format!("start {}: the capture was already started", n));
                }
                restart_node(&self.w, n, self.handles[n.0 as usize].id()).await;
            }
            Step::SleepRandom { min_ms, max_ms } => {
                let ms = {
                    let mut g = self.w.lock().unwrap();
                    g.sim_rng.random_range(*min_ms..=(*max_ms).max(*min_ms))
                };
                self.w.lock().unwrap().record("-", "Scenario", 0, "sleep drawn", vec![("ms".into(), ms.to_string())]);
                madsim::time::sleep(Duration::from_millis(ms)).await;
            }
            Step::Partition { a, b, symmetric } => {
                let (a, b) = (self.node(a)?, self.node(b)?);
                let mut g = self.w.lock().unwrap();
                g.net.cut.insert((a.0, b.0));
                if *symmetric {
                    g.net.cut.insert((b.0, a.0));
                }
            }
            Step::Heal => self.w.lock().unwrap().net.cut.clear(),
            Step::Sleep { ms } => madsim::time::sleep(Duration::from_millis(*ms)).await,
            Step::RandomWorkload { duration_ms, interval_ms, ops, max_tables, regions } => {
                self.random_workload(*duration_ms, (*interval_ms).max(1), ops, *max_tables, *regions).await?;
            }
            Step::Wait { until, timeout_ms } => {
                let deadline = self.now() + timeout_ms;
                loop {
                    match self.eval(until) {
                        Ok(true) => break,
                        Ok(false) => {}
                        Err(e) => return Err(e),
                    }
                    if self.now() >= deadline {
                        return Err(format!("wait timed out after {} ms: {:?}", timeout_ms, until));
                    }
                    self.budget()?;
                    madsim::time::sleep(Duration::from_millis(WAIT_POLL_MS)).await;
                }
            }
        }
        Ok(())
    }

    fn stop_dml_loops(&mut self) {
        for s in self.dml_loops.drain(..) {
            s.store(true, Ordering::Relaxed);
        }
    }

    /// A value reference: `"$name"` is a value captured by a `trace_seen` wait, anything
    /// else is taken literally.
    fn value(&self, v: &str) -> Result<String, String> {
        match v.strip_prefix('$') {
            Some(name) => self.values.get(name).cloned().ok_or_else(|| {
                format!("value ${} was not captured (a trace_seen wait with capture must run first)", name)
            }),
            None => Ok(v.to_string()),
        }
    }

    /// A syncpoint ts reference (a number or `"$name"`).
    fn ts_value(&self, v: &str) -> Result<Ts, String> {
        let s = self.value(v)?;
        s.parse::<Ts>().map_err(|_| format!("'{}' (from '{}') is not a ts", s, v))
    }

    /// Trace records matching an event name and the optional node, table and field filters.
    fn trace_matches<'a>(
        &self,
        trace: &'a [crate::result::TraceRecord],
        event: &str,
        node: Option<NodeId>,
        table: Option<&str>,
        fields: &BTreeMap<String, String>,
    ) -> Result<Vec<&'a crate::result::TraceRecord>, String> {
        let t = table.map(|t| self.table(t)).transpose()?.map(|t| t.to_string());
        let node = node.map(|n| n.to_string());
        let mut want = Vec::new();
        for (k, v) in fields {
            want.push((k.as_str(), self.value(v)?));
        }
        let field =
            |r: &crate::result::TraceRecord, k: &str| r.fields.iter().find(|(f, _)| f == k).map(|(_, v)| v.clone());
        Ok(trace
            .iter()
            .filter(|r| r.event == event)
            .filter(|r| node.as_ref().map(|n| &r.node == n).unwrap_or(true))
            .filter(|r| t.as_ref().map(|t| field(r, "table").as_ref() == Some(t)).unwrap_or(true))
            .filter(|r| want.iter().all(|(k, v)| field(r, k).as_ref() == Some(v)))
            .collect())
    }

    /// Draw one operation every `interval` ms from the seed until `duration` is over.
    /// Scheduling calls go to the API once, without retry (the integration tests' random
    /// movers ignore failures too).
    async fn random_workload(
        &mut self,
        duration: u64,
        interval: u64,
        ops: &[WorkloadOp],
        max_tables: usize,
        regions: u64,
    ) -> Result<(), String> {
        // `session_loss` joined the swarm families last: a seed that switches it off draws
        // from the list without it (the other families' ops are drawn and skipped), so
        // those runs keep the op stream they had before the family existed.
        let ops: Vec<WorkloadOp> = ops
            .iter()
            .copied()
            .filter(|op| !(*op == WorkloadOp::SessionLoss && self.families.get("session_loss") == Some(&false)))
            .collect();
        if ops.is_empty() {
            return Ok(());
        }
        let end = self.now() + duration;
        let nodes = self.scn.cluster.nodes;
        let mut created = 0u32;
        // Databases this workload created and has not dropped (only these are dropped).
        let mut databases: Vec<String> = Vec::new();
        let mut created_dbs = 0u32;
        while self.now() < end {
            self.budget()?;
            let (op, pick, node, n, kind) = {
                let mut g = self.w.lock().unwrap();
                let op = ops[g.sim_rng.random_range(0..ops.len())];
                let live: Vec<TableId> =
                    g.upstream.tables.values().filter(|t| t.dropped_ts.is_none()).map(|t| t.id).collect();
                let pick = if live.is_empty() { None } else { Some(live[g.sim_rng.random_range(0..live.len())]) };
                let node = NodeId(g.sim_rng.random_range(0..nodes));
                let n = g.sim_rng.random_range(1..=5u64);
                let kind = g.sim_rng.random_range(0..3u32);
                (op, pick, node, n, kind)
            };
            let live_count = self.w.lock().unwrap().upstream.tables.values().filter(|t| t.dropped_ts.is_none()).count();
            let family = match op {
                WorkloadOp::KillRestart => Some("kill_restart"),
                WorkloadOp::MoveMaintainer => Some("move_maintainer"),
                WorkloadOp::MoveTable => Some("move_table"),
                WorkloadOp::SplitTable | WorkloadOp::MergeTable | WorkloadOp::MergeTableRegions => Some("split_merge"),
                WorkloadOp::Partition => Some("partition"),
                WorkloadOp::SessionLoss => Some("session_loss"),
                _ => None,
            };
            if family.map(|f| self.families.get(f) == Some(&false)).unwrap_or(false) {
                madsim::time::sleep(Duration::from_millis(interval)).await;
                continue;
            }
            let desc = format!("{:?} table={:?} node={} n={}", op, pick, node, n);
            {
                let mut g = self.w.lock().unwrap();
                g.now_ms = crate::world::now_ms();
                g.record("-", "Scenario", 0, "workload", vec![("op".into(), desc)]);
            }
            match (op, pick) {
                (WorkloadOp::CreateTable, _) if live_count < max_tables => {
                    created += 1;
                    let name = format!("w{}", created);
                    let mut g = self.w.lock().unwrap();
                    let now = g.now_ms;
                    let id = g.upstream.create_table(now, "test", &name, regions);
                    let gw = &mut *g;
                    gw.upstream.dml(now, id, n, RowOp::Insert, &mut gw.sim_rng);
                    drop(g);
                    self.tables.insert(name, id);
                }
                (WorkloadOp::CreateDatabase, _) if live_count < max_tables => {
                    // No extra draws: the table count comes from `kind`, the rows from `n`.
                    let mut g = self.w.lock().unwrap();
                    let now = g.now_ms;
                    let name = loop {
                        created_dbs += 1;
                        let name = format!("wd{}", created_dbs);
                        if !g.upstream.database_exists(&name) {
                            break name;
                        }
                    };
                    g.upstream.create_database(now, &name)?;
                    let count = (kind as usize + 1).min(max_tables - live_count);
                    let mut new_tables = Vec::new();
                    for i in 1..=count {
                        let tname = format!("{}_t{}", name, i);
                        let id = g.upstream.create_table(now, &name, &tname, regions);
                        let gw = &mut *g;
                        gw.upstream.dml(now, id, n, RowOp::Insert, &mut gw.sim_rng);
                        new_tables.push((tname, id));
                    }
                    drop(g);
                    self.tables.extend(new_tables);
                    databases.push(name);
                }
                (WorkloadOp::DropDatabase, _) if !databases.is_empty() => {
                    let name = databases.remove(n as usize % databases.len());
                    let mut g = self.w.lock().unwrap();
                    let now = g.now_ms;
                    g.upstream.drop_database(now, &name)?;
                }
                (WorkloadOp::DropTable, Some(t)) if live_count > 1 => {
                    let mut g = self.w.lock().unwrap();
                    let now = g.now_ms;
                    g.upstream.drop_table(now, t);
                }
                (WorkloadOp::TruncateTable, Some(t)) => self.truncate(t),
                (WorkloadOp::AddColumn, Some(t)) => {
                    let mut g = self.w.lock().unwrap();
                    let now = g.now_ms;
                    g.upstream.add_column(now, t);
                }
                (WorkloadOp::Dml, Some(t)) => {
                    let mut g = self.w.lock().unwrap();
                    let now = g.now_ms;
                    let op = [RowOp::Insert, RowOp::Update, RowOp::Delete][kind as usize];
                    let gw = &mut *g;
                    gw.upstream.dml(now, t, n, op, &mut gw.sim_rng);
                }
                (WorkloadOp::MoveTable, Some(t)) => {
                    self.api(
                        &mut |m, ctx, _| m.api_move_table(ctx, t, node).map(|n| format!("{} move operators", n)),
                        "move table",
                    );
                }
                (WorkloadOp::SplitTable, Some(t)) => {
                    self.api(
                        &mut |m, ctx, up| m.api_split_table(ctx, t, up).map(|n| format!("split into {}", n)),
                        "split table",
                    );
                }
                (WorkloadOp::MergeTable, Some(t)) => {
                    self.api(&mut |m, ctx, _| m.api_merge_table(ctx, t), "merge table");
                }
                (WorkloadOp::MergeTableRegions, Some(t)) => {
                    self.w.lock().unwrap().upstream.merge_regions(t, n);
                }
                (WorkloadOp::KillRestart, _) => {
                    // A capture killed or session-lost a moment ago is still a member (until
                    // its failure detection): count only the ones that still run.
                    let alive = self.w.lock().unwrap().running_members();
                    if alive.len() > 1 && alive.contains(&node) {
                        self.kill(node);
                        self.restart_once_down(node, 2_000 + 1_000 * n);
                    }
                }
                (WorkloadOp::MoveMaintainer, _) => {
                    // A workload move without an owner (mid-election) is just skipped.
                    // The random workload's scheduler does not insist: a refused move is skipped.
                    let _ = self.move_maintainer(node);
                }
                (WorkloadOp::SessionLoss, _) => {
                    let alive = self.w.lock().unwrap().running_members();
                    if alive.len() > 1 && alive.contains(&node) {
                        crate::session::session_loss(&self.w, node, crate::session::SESSION_DONE_NOTICE_MS);
                        self.restart_once_down(node, 1_000 * n);
                    }
                }
                (WorkloadOp::Partition, _) if nodes > 1 => {
                    let (other, both) = {
                        let mut g = self.w.lock().unwrap();
                        let o = (node.0 + g.sim_rng.random_range(1..nodes)) % nodes;
                        (o, g.sim_rng.random_bool(0.5))
                    };
                    let mut cuts = vec![(node.0, other)];
                    if both {
                        cuts.push((other, node.0));
                    }
                    {
                        let mut g = self.w.lock().unwrap();
                        for c in &cuts {
                            g.net.cut.insert(*c);
                        }
                        g.record(
                            "-",
                            "Scenario",
                            0,
                            "partition",
                            vec![
                                ("cuts".into(), format!("{:?}", cuts)),
                                ("heal_after_ms".into(), (1_000 * n).to_string()),
                            ],
                        );
                    }
                    let w = self.w.clone();
                    let net = self.w.lock().unwrap().net_handle.clone().unwrap();
                    net.spawn(async move {
                        madsim::time::sleep(Duration::from_millis(1_000 * n)).await;
                        let mut g = w.lock().unwrap();
                        for c in &cuts {
                            g.net.cut.remove(c);
                        }
                        g.record("-", "Scenario", 0, "partition healed", vec![("cuts".into(), format!("{:?}", cuts))]);
                    });
                }
                _ => {}
            }
            madsim::time::sleep(Duration::from_millis(interval)).await;
        }
        Ok(())
    }

    /// Restart capture `node` `after_ms` after its current incarnation is down (waiting
    /// for it to exit, at most 30 s); nothing happens if another op restarted it first.
    fn restart_once_down(&self, node: NodeId, after_ms: u64) {
        let w = self.w.clone();
        let id = self.handles[node.0 as usize].id();
        let (gen, net) = {
            let g = self.w.lock().unwrap();
            (g.nodes[node.0 as usize].generation, g.net_handle.clone().unwrap())
        };
        net.spawn(async move {
            let mut polls = 0;
            loop {
                {
                    let g = w.lock().unwrap();
                    let slot = &g.nodes[node.0 as usize];
                    if slot.generation != gen {
                        return; // restarted by another op meanwhile
                    }
                    if !slot.alive {
                        break;
                    }
                }
                if polls == 60 {
                    return;
                }
                polls += 1;
                madsim::time::sleep(Duration::from_millis(500)).await;
            }
            madsim::time::sleep(Duration::from_millis(after_ms)).await;
            if still_down(&w, node, gen) {
                restart_node(&w, node, id).await;
            }
        });
    }

    /// TRUNCATE TABLE upstream; the table's name now refers to its new ID.
    fn truncate(&mut self, id: TableId) {
        let mut g = self.w.lock().unwrap();
        let now = g.now_ms;
        let new_id = g.upstream.truncate_table(now, id);
        let name = g.upstream.tables[&new_id].name.clone();
        drop(g);
        self.tables.insert(name, new_id);
    }

    /// Ask the owner's coordinator to move the maintainer to `dest`.
    fn move_maintainer(&mut self, dest: NodeId) -> Result<MoveAnswer, String> {
        let (owner, cf) = {
            let g = self.w.lock().unwrap();
            (g.owner().ok_or("no owner")?, g.cf.clone())
        };
        let mut answer = MoveAnswer::Refused;
        crate::world::step(&self.w, owner, None, StepKind::Api, |ns, ctx, _, _| {
            if let Some(c) = ns.coord.as_mut() {
                answer = if c.move_maintainer(ctx, &cf, dest).is_some() {
                    MoveAnswer::Accepted
                } else if c.operator_in_flight(&cf) {
                    MoveAnswer::Busy
                } else {
                    MoveAnswer::Refused
                };
            }
        });
        Ok(answer)
    }

    fn trace_move_refused(&mut self, dest: NodeId) -> Result<(), String> {
        let owner = self.w.lock().unwrap().owner().ok_or("no owner")?;
        crate::world::step(&self.w, owner, None, StepKind::Api, |_, ctx, _, _| {
            ctx.trace(
                core_sched::effects::Role::Coordinator,
                0,
                "move maintainer refused",
                vec![("to", dest.to_string())],
            );
        });
        Ok(())
    }

    fn budget(&self) -> Result<(), String> {
        let g = self.w.lock().unwrap();
        if g.events > self.scn.limits.max_events {
            return Err(format!("event budget of {} exhausted", self.scn.limits.max_events));
        }
        if g.now_ms > self.scn.limits.max_sim_time_ms {
            return Err(format!("simulated-time limit of {} ms reached", self.scn.limits.max_sim_time_ms));
        }
        Ok(())
    }

    fn kill(&mut self, n: NodeId) {
        {
            let mut g = self.w.lock().unwrap();
            let was_maintainer = g.maintainer().map(|(m, _)| m == n).unwrap_or(false);
            let slot = &mut g.nodes[n.0 as usize];
            slot.alive = false;
            slot.state = None;
            if was_maintainer && g.failover_at_ms.is_none() {
                g.failover_at_ms = Some(g.now_ms);
            }
            g.record(
                &n.to_string(),
                "Node",
                0,
                "capture killed",
                vec![("maintainer".into(), was_maintainer.to_string())],
            );
        }
        madsim::runtime::Handle::current().kill(self.handles[n.0 as usize].id());
        crate::world::detect_departure_later(&self.w, n);
    }

    /// Call a maintainer API handler on the current maintainer's node (one protocol
    /// step). None when there is no live maintainer.
    fn api(
        &mut self,
        f: &mut dyn FnMut(
            &mut core_sched::maintainer::Maintainer,
            &mut core_sched::effects::Ctx,
            &crate::upstream::Upstream,
        ) -> Result<String, String>,
        what: &'static str,
    ) -> Option<Result<String, String>> {
        let m = self.w.lock().unwrap().maintainer().map(|(n, _)| n);
        let n = m?;
        let cf = self.w.lock().unwrap().cf.clone();
        let mut res = None;
        step(&self.w, n, None, StepKind::Api, |ns, ctx, up, _| {
            if let Some(m) = ns.mm.maintainers.get_mut(&cf) {
                let r = f(m, ctx, up);
                let fields = match &r {
                    Ok(s) => vec![("result", s.clone())],
                    Err(e) => vec![("error", e.clone())],
                };
                ctx.trace(core_sched::effects::Role::Maintainer, m.epoch, what, fields);
                res = Some(r);
            }
        });
        res
    }

    /// The integration tests' `*_with_retry` helpers: call the API every 500 ms until it
    /// succeeds, for at most `API_RETRY_TIMEOUT_MS`.
    async fn api_retry(
        &mut self,
        f: &mut dyn FnMut(
            &mut core_sched::maintainer::Maintainer,
            &mut core_sched::effects::Ctx,
            &crate::upstream::Upstream,
        ) -> Result<String, String>,
        what: &'static str,
    ) -> Result<(), String> {
        let deadline = self.now() + API_RETRY_TIMEOUT_MS;
        let mut last = String::from("no live maintainer");
        loop {
            match self.api(f, what) {
                Some(Ok(_)) => return Ok(()),
                Some(Err(e)) => last = e,
                None => {}
            }
            if self.now() >= deadline {
                return Err(format!("{} did not succeed within {} ms: {}", what, API_RETRY_TIMEOUT_MS, last));
            }
            self.budget()?;
            madsim::time::sleep(Duration::from_millis(500)).await;
        }
    }

    fn eval(&mut self, p: &Predicate) -> Result<bool, String> {
        let on_node = match p {
            Predicate::TableOnNode { node, .. }
            | Predicate::NodeExited { node }
            | Predicate::MaintainerOnNode { node, .. } => Some(self.node(node)?),
            Predicate::TraceSeen { node: Some(node), .. } => Some(self.node(node)?),
            _ => None,
        };
        if let Predicate::TraceSeen { event, table, contains, fields, capture, .. } = p {
            let captured = {
                let g = self.w.lock().unwrap();
                let found = self.trace_matches(&g.trace, event, on_node, table.as_deref(), fields)?;
                let has = |r: &crate::result::TraceRecord| {
                    contains.as_ref().is_none_or(|c| r.fields.iter().any(|(_, v)| v.contains(c.as_str())))
                };
                let Some(r) = found.into_iter().find(|r| has(r)) else { return Ok(false) };
                let mut v = Vec::new();
                for (name, field) in capture {
                    let Some((_, val)) = r.fields.iter().find(|(f, _)| f == field) else {
                        return Err(format!(
                            "trace event '{}' has no field '{}' to capture as ${}",
                            event, field, name
                        ));
                    };
                    v.push((name.clone(), val.clone()));
                }
                v
            };
            for (name, val) in captured {
                self.w.lock().unwrap().record(
                    "-",
                    "Scenario",
                    0,
                    "capture value",
                    vec![("name".into(), name.clone()), ("value".into(), val.clone())],
                );
                self.values.insert(name, val);
            }
            return Ok(true);
        }
        let want_ts = match p {
            Predicate::SyncpointRecorded { ts: Some(ts) } => Some(self.ts_value(ts)?),
            _ => None,
        };
        let g = self.w.lock().unwrap();
        let m = g.maintainer().map(|(_, m)| m);
        Ok(match p {
            Predicate::TableExistsDownstream { table } => {
                let id = self.table(table)?;
                g.storage.table_exists(id, &schema_of(&g.upstream, id))
            }
            Predicate::DatabaseExistsDownstream { database } => {
                g.storage.database_exists(database, &tables_of_database(&g.upstream, database))
            }
            Predicate::DatabaseNotExistsDownstream { database } => {
                !g.storage.database_exists(database, &tables_of_database(&g.upstream, database))
            }
            Predicate::ReplicationCount { table, op, count } => {
                let c = m
                    .filter(|m| m.initialized())
                    .map(|m| m.replication_count(self.table(table).unwrap_or(-1)))
                    .unwrap_or(0);
                cmp(*op, c, *count)
            }
            Predicate::TableNodeCount { table, op, count } => {
                let t = self.table(table)?;
                let c = m
                    .filter(|m| m.initialized())
                    .map(|m| {
                        m.sc.tasks_of_table(t)
                            .iter()
                            .filter(|r| r.state == core_sched::maintainer::span_controller::ReplicaState::Replicating)
                            .filter_map(|r| r.node)
                            .collect::<std::collections::BTreeSet<_>>()
                            .len()
                    })
                    .unwrap_or(0);
                cmp(*op, c, *count)
            }
            Predicate::TableScheduled { table } => {
                let t = self.table(table)?;
                m.map(|m| {
                    let ts = m.sc.tasks_of_table(t);
                    !ts.is_empty() && ts.iter().all(|r| r.node.is_some())
                })
                .unwrap_or(false)
            }
            Predicate::TableOnNode { table, .. } => {
                let t = self.table(table)?;
                m.filter(|m| m.initialized())
                    .map(|m| {
                        let ts = m.sc.tasks_of_table(t);
                        !ts.is_empty() && ts.iter().all(|r| r.node == on_node && r.state == ReplicaState::Replicating)
                    })
                    .unwrap_or(false)
            }
            Predicate::DispatcherCount { op, count } => cmp(*op, m.map(|m| m.sc.tasks.len()).unwrap_or(0), *count),
            Predicate::MaintainerMoved => {
                let before = self.vars.get("maintainer").copied();
                match (g.maintainer(), before) {
                    (Some((n, _)), Some(b)) => n != b,
                    _ => false,
                }
            }
            Predicate::MaintainerOnNode { initialized, .. } => match g.maintainer() {
                Some((n, m)) => Some(n) == on_node && (!initialized || (m.initialized() && m.post_bootstrap_done)),
                None => false,
            },
            Predicate::TraceSeen { .. } => unreachable!("handled above"),
            Predicate::SyncpointRecorded { .. } => match want_ts {
                Some(ts) => g.storage.syncpoints.contains_key(&ts),
                None => !g.storage.syncpoints.is_empty(),
            },
            Predicate::DownstreamRowCount { table, count } => g.storage.table_rows(self.table(table)?).len() == *count,
            Predicate::NodeExited { .. } => on_node.map(|n| !g.nodes[n.0 as usize].alive).unwrap_or(false),
            Predicate::TraceSequence { events } => trace_sequence_seen(&g.trace, events),
            Predicate::ChangefeedState { state, error } => changefeed_state_is(&g, *state, error.as_deref()).0,
            Predicate::DownstreamSynced => g
                .upstream
                .tables
                .values()
                .filter(|t| t.dropped_ts.is_none())
                .all(|t| g.storage.table_rows(t.id) == t.rows),
            Predicate::CheckpointCaughtUp => {
                g.persisted_checkpoint
                    >= g.upstream.resolved_ts(g.now_ms).saturating_sub(ts_from_ms(self.flush_ms + 5_000))
            }
        })
    }

    /// What keeps the cluster from being converged (empty = converged).
    /// What keeps the cluster from having converged, empty once it has. Without `detail`
    /// it stops at the first reason and formats nothing (the converge loop polls it every
    /// 100 ms; only the timeout report needs the reasons).
    fn pending(&self, target: Ts, detail: bool) -> Vec<String> {
        let g = self.w.lock().unwrap();
        let mut p = Vec::new();
        macro_rules! reason {
            ($($arg:tt)*) => {
                if detail {
                    p.push(format!($($arg)*));
                } else {
                    return vec![String::new()];
                }
            };
        }
        if g.meta.changefeeds.get(&g.cf).map(|i| i.state == FeedState::Failed).unwrap_or(false) {
            // A failed changefeed converges to stopped: no maintainer and no dispatcher
            // manager of it runs anywhere (its data is not expected downstream).
            if let Some((n, m)) = g.maintainer() {
                reason!("failed changefeed still has a {:?} maintainer on {}", m.state, n);
            }
            for (i, s) in g.nodes.iter().enumerate() {
                if let Some(dm) = s.state.as_ref().and_then(|st| st.orch.managers.get(&g.cf)) {
                    reason!(
                        "failed changefeed still has a dispatcher manager on {} ({} dispatchers)",
                        NodeId(i as u32),
                        dm.dispatchers.len()
                    );
                }
            }
            return p;
        }
        // The changefeed's persisted state and last error say why a maintainer is missing
        // or stuck (e.g. restarting after every rejected bootstrap).
        let feed = g.meta.changefeeds.get(&g.cf).map(|i| match &i.last_error {
            Some(e) => format!(" (changefeed {:?}, last error: {})", i.state, e),
            None => format!(" (changefeed {:?})", i.state),
        });
        let feed = feed.unwrap_or_default();
        let Some((_, m)) = g.maintainer() else { return vec![format!("no live maintainer{}", feed)] };
        if !m.initialized() {
            return vec![format!("maintainer not bootstrapped{}", feed)];
        }
        for op in m.oc.running() {
            reason!("operator still running: {}", op.describe());
        }
        for r in m.sc.tasks.values() {
            if r.state != ReplicaState::Replicating {
                reason!("span {} of table {} is {:?}", r.id, r.span.table_id, r.state);
            }
        }
        let mut working: BTreeMap<TableId, Vec<TableSpan>> = BTreeMap::new();
        for (i, s) in g.nodes.iter().enumerate() {
            let Some(st) = &s.state else { continue };
            for dm in st.orch.managers.values() {
                for d in dm.dispatchers.values() {
                    if d.state == ComponentState::Working && !d.try_removing && !d.is_trigger {
                        working.entry(d.span.table_id).or_default().push(d.span);
                    }
                    // Every live dispatcher must be one the maintainer knows about.
                    if !d.try_removing && !d.is_trigger && m.sc.get(&d.id).is_none() {
                        reason!(
                            "dispatcher {} of table {} on {} is unknown to the maintainer",
                            d.id,
                            d.span.table_id,
                            NodeId(i as u32)
                        );
                    }
                }
            }
        }
        for t in g.upstream.tables.values().filter(|t| t.dropped_ts.is_none()) {
            if !m.sc.is_table_exists(t.id) {
                reason!("table {} ({}) has no span", t.id, t.name);
            }
            let holes = find_holes(t.id, working.get(&t.id).map(|v| v.as_slice()).unwrap_or(&[]));
            if !holes.is_empty() {
                reason!("table {} ({}) not covered by Working dispatchers: {:?}", t.id, t.name, holes);
            }
            if g.storage.table_rows(t.id) != t.rows {
                reason!("table {} ({}) downstream differs from upstream", t.id, t.name);
            }
        }
        if g.persisted_checkpoint < target {
            reason!("checkpoint {} behind upstream {}", g.persisted_checkpoint, target);
            // Name the slowest dispatchers and what holds them back.
            let mut slow: Vec<(Ts, String)> = Vec::new();
            for (i, s) in g.nodes.iter().enumerate() {
                let Some(st) = &s.state else { continue };
                for dm in st.orch.managers.values() {
                    for d in dm.dispatchers.values() {
                        let cp = d.checkpoint_ts();
                        if cp < target {
                            let why = format!(
                                "dispatcher {} (table {}) on {} {:?} checkpoint {}{}{}{}{}{}",
                                d.id,
                                d.span.table_id,
                                NodeId(i as u32),
                                d.state,
                                cp,
                                d.block
                                    .as_ref()
                                    .map(|b| format!(
                                        ", blocked on {} at {} ({:?})",
                                        b.event.query(),
                                        b.event.commit_ts(),
                                        b.stage
                                    ))
                                    .unwrap_or_default(),
                                if d.ddl_writing.is_some() {
                                    if d.writing_sync_point {
                                        ", writing a syncpoint"
                                    } else {
                                        ", writing a DDL"
                                    }
                                } else {
                                    ""
                                },
                                if !d.progress.is_empty() {
                                    format!(", {} unflushed commit ts", d.progress.len())
                                } else {
                                    String::new()
                                },
                                if d.try_removing { ", removing" } else { "" },
                                if !d.registered { ", not registered" } else { "" },
                            );
                            slow.push((cp, why));
                        }
                    }
                }
            }
            slow.sort();
            p.extend(slow.into_iter().take(3).map(|(_, w)| w));
        }
        p
    }

    /// Faults stop, partitions heal, failpoints stay as the scenario left them; the
    /// cluster must converge within the budget.
    async fn converge(&mut self) {
        let target = {
            let mut g = self.w.lock().unwrap();
            // The faults stop: partitions heal, the network and storage behave.
            g.net.cut.clear();
            g.net.loss = 0.0;
            g.net.duplicate = 0.0;
            g.net.delay_spike = 0.0;
            g.net.collector.prob = 0.0;
            g.net.stream.prob = 0.0;
            g.storage_error = 0.0;
            g.record("-", "Scenario", 0, "faults stop, converging", vec![]);
            let now = g.now_ms;
            g.upstream.tso(now)
        };
        let deadline = self.now() + self.scn.limits.converge_timeout_ms;
        loop {
            if self.pending(target, false).is_empty() {
                return;
            }
            let over = self.budget().is_err() || self.now() >= deadline;
            let p = if over { self.pending(target, true) } else { Vec::new() };
            if let Err(e) = self.budget() {
                self.liveness.push(Violation {
                    invariant: CONVERGES.into(),
                    at_ms: self.now(),
                    detail: format!("{}; pending: {}", e, p.join("; ")),
                });
                return;
            }
            if self.now() >= deadline {
                self.liveness.push(Violation {
                    invariant: CONVERGES.into(),
                    at_ms: self.now(),
                    detail: format!(
                        "not converged within {} ms: {}",
                        self.scn.limits.converge_timeout_ms,
                        p.join("; ")
                    ),
                });
                return;
            }
            madsim::time::sleep(Duration::from_millis(WAIT_POLL_MS)).await;
            let mut g = self.w.lock().unwrap();
            g.now_ms = crate::world::now_ms();
        }
    }

    /// Sync-diff against a syncpoint: the upstream snapshot at the primary ts equals the
    /// downstream as the first record of that syncpoint found it (TiCDC's
    /// `snapshot = primary_ts` / `snapshot = secondary_ts` diff), for every table that
    /// exists upstream at the primary ts.
    fn check_sync_diff_snapshot(&self, snap: &str) -> CheckResult {
        let check = format!("sync_diff snapshot={}", snap);
        let ts = match self.ts_value(snap) {
            Ok(t) => t,
            Err(e) => return CheckResult { check, passed: false, detail: e },
        };
        let check = format!("sync_diff snapshot={}", ts);
        let g = self.w.lock().unwrap();
        let Some(down) = g.storage.syncpoint_snapshots.get(&ts) else {
            return CheckResult {
                check,
                passed: false,
                detail: format!(
                    "no syncpoint record with primary ts {} downstream (records: {:?})",
                    ts,
                    g.storage.syncpoints.keys().collect::<Vec<_>>()
                ),
            };
        };
        let secondary = g.storage.syncpoints.get(&ts).map(|r| r.0.secondary_ts).unwrap_or(0);
        let empty = BTreeMap::new();
        let mut bad = Vec::new();
        for t in g.upstream.tables.values().filter(|t| g.upstream.table_exists_at(t.id, ts)) {
            let up = g.upstream.rows_at(t.id, ts);
            let d = down.get(&t.id).unwrap_or(&empty);
            if &up != d {
                let missing = up.iter().filter(|(k, v)| d.get(k) != Some(v)).count();
                let extra = d.keys().filter(|k| !up.contains_key(k)).count();
                bad.push(format!("{}: {} rows differ or missing, {} extra", t.name, missing, extra));
            }
        }
        CheckResult {
            check,
            passed: bad.is_empty(),
            detail: if bad.is_empty() {
                format!("upstream at {} equals downstream at secondary ts {}", ts, secondary)
            } else {
                bad.join("; ")
            },
        }
    }

    /// `trace_field`: every matching record's field compares as asked with the value;
    /// at least one record matches.
    #[allow(clippy::too_many_arguments)]
    fn check_trace_field(
        &mut self,
        event: &str,
        table: Option<&str>,
        node: Option<&str>,
        fields: &BTreeMap<String, String>,
        field: &str,
        op: FieldOp,
        value: &str,
    ) -> CheckResult {
        let check = format!("trace_field '{}' {} {:?} {}", event, field, op, value);
        let res = (|| -> Result<(bool, String), String> {
            let node = node.map(|n| self.node(n)).transpose()?;
            let want = self.value(value)?;
            let g = self.w.lock().unwrap();
            let found = self.trace_matches(&g.trace, event, node, table, fields)?;
            if found.is_empty() {
                let capped = if g.trace.len() >= crate::world::TRACE_CAP { " (the trace is truncated)" } else { "" };
                return Ok((false, format!("no trace record '{}' matches{}", event, capped)));
            }
            for r in &found {
                let Some((_, got)) = r.fields.iter().find(|(f, _)| f == field) else {
                    return Ok((false, format!("record at {} ms has no field '{}'", r.at_ms, field)));
                };
                if !compare_field(got, op, &want)? {
                    return Ok((
                        false,
                        format!("record at {} ms on {}: {} = {}, want {:?} {}", r.at_ms, r.node, field, got, op, want),
                    ));
                }
            }
            Ok((true, format!("{} record(s): {} {:?} {}", found.len(), field, op, want)))
        })();
        match res {
            Ok((passed, detail)) => CheckResult { check, passed, detail },
            Err(e) => CheckResult { check, passed: false, detail: e },
        }
    }

    fn run_checks(&mut self) -> Vec<CheckResult> {
        let mut out = Vec::new();
        for c in self.scn.checks.clone() {
            let c = c.into_inner();
            let r = match &c {
                Check::ReplicationCount { table, op, count } => {
                    let got = self
                        .w
                        .lock()
                        .unwrap()
                        .maintainer()
                        .map(|(_, m)| m.replication_count(self.tables.get(table).copied().unwrap_or(-1)))
                        .unwrap_or(0);
                    CheckResult {
                        check: format!("replication_count {} {:?} {}", table, op, count),
                        passed: cmp(*op, got, *count),
                        detail: format!("replication count of {} is {}", table, got),
                    }
                }
                Check::TableExists { table } | Check::TableNotExists { table } => {
                    let want = matches!(c, Check::TableExists { .. });
                    let g = self.w.lock().unwrap();
                    let id = g.upstream.table_id_any(table).unwrap_or(-1);
                    let got = g.storage.table_exists(id, &schema_of(&g.upstream, id));
                    drop(g);
                    CheckResult {
                        check: format!("table_{}exists {}", if want { "" } else { "not_" }, table),
                        passed: got == want,
                        detail: format!("table {} exists downstream: {}", table, got),
                    }
                }
                Check::SyncDiff { snapshot: Some(snap) } => self.check_sync_diff_snapshot(snap),
                Check::TraceField { event, table, node, fields, field, op, value } => {
                    self.check_trace_field(event, table.as_deref(), node.as_deref(), fields, field, *op, value)
                }
                Check::SyncpointRecorded { ts } => {
                    let want = match ts.as_deref().map(|t| self.ts_value(t)).transpose() {
                        Ok(w) => w,
                        Err(e) => {
                            out.push(CheckResult { check: "syncpoint_recorded".into(), passed: false, detail: e });
                            continue;
                        }
                    };
                    let g = self.w.lock().unwrap();
                    let got: Vec<Ts> = g.storage.syncpoints.keys().copied().collect();
                    let passed = match want {
                        Some(t) => got.contains(&t),
                        None => !got.is_empty(),
                    };
                    CheckResult {
                        check: format!(
                            "syncpoint_recorded {}",
                            want.map(|t| t.to_string()).unwrap_or_else(|| "any".into())
                        ),
                        passed,
                        detail: format!("syncpoint records downstream: {:?}", got),
                    }
                }
                Check::SyncDiff { snapshot: None } => {
                    let g = self.w.lock().unwrap();
                    let mut bad = Vec::new();
                    for t in g.upstream.tables.values().filter(|t| t.dropped_ts.is_none()) {
                        let down = g.storage.table_rows(t.id);
                        if down != t.rows {
                            let missing = t.rows.iter().filter(|(k, v)| down.get(k) != Some(v)).count();
                            let extra = down.keys().filter(|k| !t.rows.contains_key(k)).count();
                            bad.push(format!("{}: {} rows differ or missing, {} extra", t.name, missing, extra));
                        }
                    }
                    CheckResult {
                        check: "sync_diff".into(),
                        passed: bad.is_empty(),
                        detail: if bad.is_empty() { "downstream equals upstream".into() } else { bad.join("; ") },
                    }
                }
                Check::ChangefeedState { state, error } => {
                    let g = self.w.lock().unwrap();
                    let (ok, got) = changefeed_state_is(&g, *state, error.as_deref());
                    CheckResult {
                        check: format!(
                            "changefeed_state {}{}",
                            format!("{:?}", state).to_lowercase(),
                            error.as_ref().map(|e| format!(" {}", e)).unwrap_or_default()
                        ),
                        passed: ok,
                        detail: got,
                    }
                }
                Check::NodeAlive { node } => {
                    let n = self.node(node);
                    let g = self.w.lock().unwrap();
                    let (ok, detail) = match n {
                        Ok(n) => {
                            let alive =
                                g.nodes.get(n.0 as usize).map(|s| s.alive && s.state.is_some()).unwrap_or(false);
                            (alive, format!("capture {} running: {}", n, alive))
                        }
                        Err(e) => (false, e),
                    };
                    CheckResult { check: format!("node_alive {}", node), passed: ok, detail }
                }
                Check::TraceNotSeen { event } => {
                    let g = self.w.lock().unwrap();
                    let hit = g.trace.iter().find(|r| r.event == *event);
                    CheckResult {
                        check: format!("trace_not_seen {}", event),
                        passed: hit.is_none(),
                        detail: hit.map(|r| format!("seen: {}", r.line())).unwrap_or_else(|| "not seen".into()),
                    }
                }
                Check::NoErrorLogged => {
                    let g = self.w.lock().unwrap();
                    CheckResult {
                        check: "no_error_logged".into(),
                        passed: g.errors_logged.is_empty(),
                        detail: if g.errors_logged.is_empty() {
                            "no error".into()
                        } else {
                            format!("{} errors logged, first: {}", g.errors_logged.len(), g.errors_logged[0].1)
                        },
                    }
                }
            };
            out.push(r);
        }
        out
    }
}

/// Restart a killed capture (fresh volatile state) and tell the cluster.
/// Whether capture `n` is still the dead incarnation `gen` (no one restarted it since).
fn still_down(w: &W, n: NodeId, gen: u64) -> bool {
    let g = w.lock().unwrap();
    let slot = &g.nodes[n.0 as usize];
    !slot.alive && slot.generation == gen
}

async fn restart_node(w: &W, n: NodeId, id: madsim::task::NodeId) {
    // The old incarnation leaves the cluster first (in TiCDC the restarted capture has a
    // new ID), even when the restart comes before its death was detected.
    let gen = w.lock().unwrap().nodes[n.0 as usize].generation;
    crate::world::leave_cluster(w, n, gen);
    madsim::runtime::Handle::current().restart(id);
    madsim::time::sleep(Duration::from_millis(1)).await;
    notify_membership(w);
}

/// Whether `events` were recorded on one node in this order (a subsequence of that
/// node's trace), like the integration tests' `awk` checks over one capture's log.
pub fn trace_sequence_seen(trace: &[crate::result::TraceRecord], events: &[String]) -> bool {
    if events.is_empty() {
        return true;
    }
    let mut progress: BTreeMap<&str, usize> = BTreeMap::new();
    for r in trace {
        let i = progress.entry(r.node.as_str()).or_insert(0);
        if r.event == events[*i] {
            *i += 1;
            if *i == events.len() {
                return true;
            }
        }
    }
    false
}

/// The persisted changefeed state against `want` (and an error substring); returns
/// whether it matches and a description of what is there.
fn changefeed_state_is(g: &World, want: FeedStateName, error: Option<&str>) -> (bool, String) {
    let Some(info) = g.meta.changefeeds.get(&g.cf) else { return (false, "no changefeed".into()) };
    let state_ok = match want {
        FeedStateName::Normal => info.state == FeedState::Normal,
        FeedStateName::Warning => info.state == FeedState::Warning,
        FeedStateName::Failed => info.state == FeedState::Failed,
        FeedStateName::Stopped => info.state == FeedState::Stopped,
    };
    let err_ok = error.map(|e| info.last_error.as_deref().unwrap_or("").contains(e)).unwrap_or(true);
    (state_ok && err_ok, format!("changefeed state {:?}, error {:?}", info.state, info.last_error))
}

/// Compare a trace field with a value: as numbers when both are, else only `eq`/`ne`.
fn compare_field(got: &str, op: FieldOp, want: &str) -> Result<bool, String> {
    use std::cmp::Ordering as O;
    let ord = match (got.parse::<i128>(), want.parse::<i128>()) {
        (Ok(a), Ok(b)) => a.cmp(&b),
        _ => match op {
            FieldOp::Eq | FieldOp::Ne => {
                if got == want {
                    O::Equal
                } else {
                    O::Less
                }
            }
            _ => return Err(format!("cannot compare '{}' {:?} '{}': not numbers", got, op, want)),
        },
    };
    Ok(match op {
        FieldOp::Eq => ord == O::Equal,
        FieldOp::Ne => ord != O::Equal,
        FieldOp::Ge => ord != O::Less,
        FieldOp::Gt => ord == O::Greater,
        FieldOp::Le => ord != O::Greater,
        FieldOp::Lt => ord == O::Less,
    })
}

/// The database of an upstream table (empty for an unknown one).
fn schema_of(up: &crate::upstream::Upstream, id: TableId) -> String {
    up.tables.get(&id).map(|t| t.schema_name.clone()).unwrap_or_default()
}

/// Every table the upstream ever had in a database of this name.
fn tables_of_database(up: &crate::upstream::Upstream, name: &str) -> Vec<TableId> {
    up.tables.values().filter(|t| t.schema_name == name).map(|t| t.id).collect()
}

fn cmp(op: CmpOp, got: usize, want: usize) -> bool {
    match op {
        CmpOp::Eq => got == want,
        CmpOp::Ge => got >= want,
    }
}

/// How long a scenario's `move_maintainer` step keeps asking while another operator of
/// the changefeed is in flight.
const MOVE_RETRY_MS: u64 = 60_000;

/// The coordinator's answer to a move request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MoveAnswer {
    Accepted,
    /// Another operator is in flight (or the changefeed is not placed): ask again later.
    Busy,
    /// The maintainer already runs there, or there is no coordinator.
    Refused,
}
