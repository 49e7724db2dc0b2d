//! The simulated world: nodes (captures) with their roles, the network, the persisted
//! metadata (etcd), the upstream cluster, external storage, failpoints, the trace and
//! the invariant checkers. Everything lives behind one mutex that each madsim task
//! takes for one protocol step; madsim's seeded scheduler decides the interleaving.

use crate::invariants::{self, DataLossChecker};
use crate::lanes::{collector_lane, recv_lane, LagQueues, Lane, RecvLane};
use crate::result::{TraceRecord, Violation};
use crate::storage::Storage;
use crate::trace::TraceHash;
use crate::upstream::Upstream;
use core_sched::bugs::Bugs;
use core_sched::coordinator::{Coordinator, MetaStore};
use core_sched::dispatcher::DispatcherOrchestrator;
use core_sched::effects::*;
use core_sched::maintainer::manager::MaintainerManager;
use core_sched::messages::{Envelope, Message, Topic};
use core_sched::types::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub type W = Arc<Mutex<World>>;

/// Upper bound of trace records kept in memory (the hash covers all of them).
pub const TRACE_CAP: usize = 400_000;
/// Upper bound of messages queued on one link.
pub const LINK_QUEUE_CAP: usize = 100_000;

/// A capture's volatile state: lost when the node is killed.
#[derive(Debug)]
pub struct NodeState {
    pub mm: MaintainerManager,
    pub orch: DispatcherOrchestrator,
    pub coord: Option<Coordinator>,
}

#[derive(Debug)]
pub struct NodeSlot {
    pub alive: bool,
    /// Not started yet (`cluster.join-later`): the capture's process does not run until
    /// a `start` step clears this.
    pub held: bool,
    pub generation: u64,
    pub state: Option<NodeState>,
    /// The capture's etcd session is done (`session_loss`): the process still runs but the
    /// cluster no longer counts it as alive.
    pub session_done: bool,
    /// The capture's key is in etcd as the cluster sees it: set when the process starts,
    /// cleared when the cluster notices it is gone (the failure-detection delay after a
    /// kill or a lost session, or at once when the capture restarts as a new incarnation).
    /// A killed capture stays a member until then: no new owner is elected in its place
    /// and the others still count it. A running capture that is no member any more has
    /// departed: every other capture's message center removed its target
    /// (`RemoveTarget`), so nothing passes between it and the others.
    pub member: bool,
}

impl NodeSlot {
    /// Running and still in the cluster (its etcd session, hence its capture key, alive).
    pub fn is_member(&self) -> bool {
        self.alive && !self.session_done
    }
}

#[derive(Debug, Default)]
pub struct Net {
    pub delay_ms: [u64; 2],
    pub loss: f64,
    pub duplicate: f64,
    pub delay_spike: f64,
    pub delay_spike_ms: [u64; 2],
    /// Spikes also hit messages between roles of one capture.
    pub delay_spike_local: bool,
    pub lost: u64,
    pub duplicated: u64,
    pub spiked: u64,
    /// In flight per directed link: (delivery time, (sender, receiver) generation at send, message).
    pub links: BTreeMap<(u32, u32), VecDeque<(u64, (u64, u64), Envelope)>>,
    pub last_delivery: BTreeMap<(u32, u32), u64>,
    /// Directed (from, to) pairs that drop messages.
    pub cut: BTreeSet<(u32, u32)>,
    pub delivered: u64,
    pub dropped: u64,
    /// The capture's `HeartBeatCollector` queues (`collector-lag`), per (capture,
    /// incarnation, lane).
    pub collector: LagQueues<(u32, u64, Lane)>,
    /// The dispatcher side's receive queues (`stream-lag`), per (capture, incarnation, kind).
    pub stream: LagQueues<(u32, u64, RecvLane)>,
}

pub struct World {
    pub seed: u64,
    pub bugs: Bugs,
    pub core_rng: ChaCha8Rng,
    pub sim_rng: ChaCha8Rng,
    pub nodes: Vec<NodeSlot>,
    pub failpoints: Vec<Failpoints>,
    pub meta: MetaStore,
    pub upstream: Upstream,
    pub storage: Storage,
    pub net: Net,
    pub cf: ChangefeedId,
    pub start_ts: Ts,
    pub now_ms: u64,
    pub trace: Vec<TraceRecord>,
    pub hash: TraceHash,
    pub events: u64,
    pub violations: Vec<Violation>,
    seen_violation: BTreeSet<(String, String)>,
    pub data_loss: DataLossChecker,
    pub persisted_checkpoint: Ts,
    pub verbose: bool,
    pub node_handles: Vec<Option<madsim::runtime::NodeHandle>>,
    pub net_handle: Option<madsim::runtime::NodeHandle>,
    pub failover_at_ms: Option<u64>,
    pub check_retryable_after_failover: bool,
    /// Error-level events for the `no_error_logged` check: escalated (retryable) sink
    /// errors and bootstrap responses carrying an error.
    pub errors_logged: Vec<(u64, String)>,
    pub orch_instances: u64,
    pub owner_node: Option<NodeId>,
    pub storage_latency_ms: [u64; 2],
    /// Event budget: steps stop running beyond it.
    pub max_events: u64,
    /// Probability of a transient failure of a storage put or rename.
    pub storage_error: f64,
    pub storage_errors: u64,
    /// (maintainer epoch, commit ts, is syncpoint) -> the dispatcher that wrote the
    /// block event of that open barrier.
    pub ddl_writers: BTreeMap<(u64, String, bool), String>,
    /// Syncpoints are due from this ts on, every this many ms (set when the changefeed
    /// runs with `enable-sync-point`): `no-data-loss` wants each one below the persisted
    /// checkpoint recorded downstream.
    pub sync_points: Option<(Ts, u64)>,
    /// `faults.schema-store-init-ms`, given to every (re)started node's orchestrator.
    pub schema_store_init_ms: [u64; 2],
    /// `faults.trigger-create-ms`, given to every (re)started node's orchestrator.
    pub trigger_create_ms: [u64; 2],
    /// `faults.first-event-ms`, given to every (re)started node's orchestrator.
    pub first_event_ms: [u64; 2],
    /// Storage requests held by `MySQLSinkHangLongTime`: (node, generation, op id).
    pub hung_storage: Vec<(NodeId, u64, u64)>,
}

impl World {
    pub fn new(seed: u64, bugs: Bugs, nodes: u32, delay_ms: [u64; 2]) -> Self {
        let mut master = ChaCha8Rng::seed_from_u64(seed);
        let core_rng = ChaCha8Rng::seed_from_u64(master.random());
        let sim_rng = ChaCha8Rng::seed_from_u64(master.random());
        World {
            seed,
            bugs,
            core_rng,
            sim_rng,
            nodes: (0..nodes)
                .map(|_| NodeSlot {
                    alive: false,
                    held: false,
                    generation: 0,
                    state: None,
                    session_done: false,
                    member: false,
                })
                .collect(),
            failpoints: (0..nodes).map(|_| Failpoints::default()).collect(),
            meta: MetaStore::default(),
            upstream: Upstream::new(),
            storage: Storage::default(),
            net: Net { delay_ms, ..Default::default() },
            cf: ChangefeedId("test-cf".into()),
            start_ts: 0,
            now_ms: 0,
            trace: Vec::new(),
            hash: TraceHash::default(),
            events: 0,
            violations: Vec::new(),
            seen_violation: BTreeSet::new(),
            data_loss: DataLossChecker::default(),
            persisted_checkpoint: 0,
            verbose: false,
            node_handles: (0..nodes).map(|_| None).collect(),
            net_handle: None,
            failover_at_ms: None,
            check_retryable_after_failover: false,
            errors_logged: Vec::new(),
            orch_instances: 0,
            owner_node: None,
            storage_latency_ms: [2, 20],
            max_events: u64::MAX,
            storage_error: 0.0,
            storage_errors: 0,
            ddl_writers: BTreeMap::new(),
            sync_points: None,
            schema_store_init_ms: [0, 0],
            trigger_create_ms: [0, 0],
            first_event_ms: [0, 0],
            hung_storage: Vec::new(),
        }
    }

    /// Captures that run with their session intact and that the cluster counts: the ones
    /// a workload may still kill or session-lose (never the last of them).
    pub fn running_members(&self) -> BTreeSet<NodeId> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, s)| s.member && s.is_member())
            .map(|(i, _)| NodeId(i as u32))
            .collect()
    }

    /// The captures the cluster counts (see [`NodeSlot::member`]).
    pub fn alive(&self) -> BTreeSet<NodeId> {
        self.nodes.iter().enumerate().filter(|(_, s)| s.member).map(|(i, _)| NodeId(i as u32)).collect()
    }

    /// The owner (coordinator) node. Ownership is sticky while the owner is a member (its
    /// etcd key, hence its campaign, lives until the cluster notices it is gone); then the
    /// lowest member wins the election (etcd campaign simplified). A dead owner that is
    /// still a member leaves the cluster without a coordinator meanwhile.
    pub fn owner(&self) -> Option<NodeId> {
        match self.owner_node {
            Some(o) if self.nodes[o.0 as usize].member => Some(o),
            _ => self.alive().into_iter().next(),
        }
    }

    pub fn record(&mut self, node: &str, role: &str, epoch: u64, event: &str, fields: Vec<(String, String)>) {
        self.hash.u64(self.now_ms);
        self.hash.str(node);
        self.hash.str(role);
        self.hash.u64(epoch);
        self.hash.str(event);
        for (k, v) in &fields {
            self.hash.str(k);
            self.hash.str(v);
        }
        let r = TraceRecord {
            at_ms: self.now_ms,
            node: node.to_string(),
            role: role.to_string(),
            epoch,
            event: event.to_string(),
            fields,
        };
        if self.verbose {
            eprintln!("{}", r.line());
        } else if tracing::enabled!(tracing::Level::DEBUG) {
            tracing::debug!("{}", r.line());
        }
        if self.trace.len() < TRACE_CAP {
            self.trace.push(r);
        }
    }

    pub fn violate(&mut self, inv: &str, detail: String) {
        // Report each distinct violation once (it usually persists for many steps).
        let key = (inv.to_string(), detail.clone());
        if !self.seen_violation.insert(key) {
            return;
        }
        self.record(
            "-",
            "checker",
            0,
            "INVARIANT VIOLATED",
            vec![("invariant".into(), inv.to_string()), ("detail".into(), detail.clone())],
        );
        self.violations.push(Violation { invariant: inv.to_string(), at_ms: self.now_ms, detail });
    }

    pub fn node_state(&self, n: NodeId) -> Option<&NodeState> {
        self.nodes.get(n.0 as usize).and_then(|s| s.state.as_ref())
    }

    /// The live maintainer of the changefeed, if any (not stopped).
    pub fn maintainer(&self) -> Option<(NodeId, &core_sched::maintainer::Maintainer)> {
        let mut best: Option<(NodeId, &core_sched::maintainer::Maintainer)> = None;
        for (i, s) in self.nodes.iter().enumerate() {
            let Some(st) = &s.state else { continue };
            if let Some(m) = st.mm.maintainers.get(&self.cf) {
                if m.state != core_sched::maintainer::MaintainerState::Stopped
                    && best.map(|(_, b)| m.epoch > b.epoch).unwrap_or(true)
                {
                    best = Some((NodeId(i as u32), m));
                }
            }
        }
        best
    }
}

/// Which kind of step ran, for incremental checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    Message,
    MaintainerTick,
    Operators,
    Scheduler,
    Checkpoint,
    MaintainerHeartbeat,
    DmHeartbeat,
    Events,
    Flush,
    Storage,
    Coordinator,
    Membership,
    Api,
}

pub fn now_ms() -> u64 {
    madsim::time::Instant::now().duration_since(START.with(|s| *s)).as_millis() as u64
}

thread_local! {
    static START: madsim::time::Instant = madsim::time::Instant::now();
}

pub fn init_clock() {
    START.with(|_| {});
}

/// Run one protocol step on node `n` (if alive and of generation `gen`).
pub fn step(
    w: &W,
    n: NodeId,
    gen: Option<u64>,
    kind: StepKind,
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
    let mut out = Out::default();
    {
        let mut ctx = Ctx {
            now_ms: wd.now_ms,
            node: n,
            rng: &mut wd.core_rng,
            bugs: &wd.bugs,
            failpoints: &wd.failpoints[n.0 as usize],
            out: &mut out,
            ddl_ts: &wd.storage,
        };
        f(ns, &mut ctx, &mut wd.upstream, &mut wd.meta);
    }
    wd.events += 1;
    apply_out(w, wd, n, kind, out);
    true
}

fn apply_out(w: &W, wd: &mut World, n: NodeId, kind: StepKind, out: Out) {
    let node_name = if out.trace.is_empty() { String::new() } else { n.to_string() };
    let mut dispatchers_changed = kind == StepKind::Membership;
    for t in out.trace {
        if matches!(
            t.kind,
            "create dispatcher"
                | "create table trigger event dispatcher"
                | "remove dispatcher"
                | "dispatcher stopped"
                | "dispatcher manager closed"
                | "stopping dispatcher manager write path"
                | "replace mismatched table trigger"
                | "dispatcher working"
                | "dispatcher manager owner updated"
        ) {
            dispatchers_changed = true;
        }
        // Writer half of barrier-writes-once: within one maintainer generation, the
        // barrier of a blocking DDL has exactly one writer. (A span restarted from a
        // checkpoint below a DDL it sees alone may write it again: TiCDC's DDL writes are
        // at-least-once across restarts, moves and merges, so those are not counted.)
        // A finished barrier may be replayed later (a span restarted from a checkpoint
        // below the DDL: at-least-once DDL, as in TiCDC); only one writer per open barrier.
        if t.kind == "barrier event done" {
            let get = |k: &str| t.fields.iter().find(|(f, _)| *f == k).map(|(_, v)| v.clone()).unwrap_or_default();
            wd.ddl_writers.remove(&(t.epoch, get("commit_ts"), get("sync_point") == "true"));
        }
        if matches!(t.kind, "write ddl" | "write sync point")
            && t.fields.iter().any(|(k, v)| *k == "mode" && v == "barrier")
        {
            let get = |k: &str| t.fields.iter().find(|(f, _)| *f == k).map(|(_, v)| v.clone()).unwrap_or_default();
            note_barrier_ddl_write(wd, t.epoch, &get("commit_ts"), t.kind == "write sync point", &get("dispatcher"));
        }
        if t.kind == "block status from non-owner admitted" {
            let detail: Vec<String> = t.fields.iter().map(|(k, v)| format!("{}={}", k, v)).collect();
            wd.violate(
                invariants::BARRIER_OWNER_ONLY,
                format!(
                    "maintainer on {} admitted a block status from a node that does not own the dispatcher: {}",
                    n,
                    detail.join(" ")
                ),
            );
        }
        if t.kind == "applied control message from older epoch" {
            let detail: Vec<String> = t.fields.iter().map(|(k, v)| format!("{}={}", k, v)).collect();
            wd.violate(
                invariants::EPOCH_FENCING,
                format!(
                    "dispatcher manager on {} applied a control message from an older maintainer epoch: {}",
                    n,
                    detail.join(" ")
                ),
            );
        }
        if t.kind == "cloud storage write failed" && t.fields.iter().any(|(k, v)| *k == "escalated" && v == "true") {
            let detail: Vec<String> = t.fields.iter().map(|(k, v)| format!("{}={}", k, v)).collect();
            wd.errors_logged.push((wd.now_ms, detail.join(" ")));
            if wd.check_retryable_after_failover && wd.failover_at_ms.is_some() {
                wd.violate(
                    invariants::NO_RETRYABLE_ERROR_AFTER_FAILOVER,
                    format!("retryable sink error on {} after failover: {}", n, detail.join(" ")),
                );
            }
        }
        let fields = t.fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        wd.record(&node_name, &format!("{:?}", t.role), t.epoch, t.kind, fields);
    }
    for env in out.msgs {
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
    let fenced = wd.node_state(n).map(|st| st.orch.fenced).unwrap_or(false);
    for (inv, d) in invariants::check_no_write_after_fence(n, fenced, &out.storage) {
        wd.violate(inv, d);
    }
    for req in out.storage {
        storage_request(w, wd, n, req);
    }
    check(wd, n, kind, dispatchers_changed);
}

/// Invariant checks after a step.
fn check(wd: &mut World, n: NodeId, kind: StepKind, dispatchers_changed: bool) {
    if dispatchers_changed {
        // A capture the cluster no longer counts (its etcd session ended and the failure
        // detection fired) has its dispatchers re-placed by the maintainer, while it may
        // still run until it notices and local-fences. That overlap is inherent to
        // lease-based membership (TiCDC bounds it with the local fence, which
        // `no-write-after-fence` checks), so the placement invariants look at the captures
        // the cluster still counts, session-lost ones included until their detection.
        let found = {
            let iter = wd
                .nodes
                .iter()
                .enumerate()
                .filter(|(_, s)| s.alive && s.member)
                .filter_map(|(i, s)| s.state.as_ref().map(|st| (NodeId(i as u32), st)))
                .flat_map(|(id, st)| st.orch.managers.values().map(move |dm| (id, dm)));
            invariants::check_dispatchers(iter)
        };
        for (inv, d) in found {
            wd.violate(inv, d);
        }
    }
    if matches!(
        kind,
        StepKind::Message | StepKind::Operators | StepKind::Scheduler | StepKind::Api | StepKind::Membership
    ) {
        let found = wd
            .node_state(n)
            .map(|st| st.mm.maintainers.values().flat_map(invariants::check_maintainer).collect::<Vec<_>>())
            .unwrap_or_default();
        for (inv, d) in found {
            wd.violate(inv, d);
        }
    }
    check_persisted_checkpoint(wd);
}

/// `checkpoint-monotonic` and `no-data-loss`, run when the persisted checkpoint moves.
pub fn check_persisted_checkpoint(wd: &mut World) {
    if let Some(info) = wd.meta.changefeeds.get(&wd.cf) {
        let cp = info.checkpoint_ts;
        if cp < wd.persisted_checkpoint {
            let d = format!("persisted checkpoint went back from {} to {}", wd.persisted_checkpoint, cp);
            wd.violate(invariants::CHECKPOINT_MONOTONIC, d);
        }
        if cp > wd.persisted_checkpoint {
            wd.persisted_checkpoint = cp;
            let found = wd.data_loss.advance(&wd.upstream, &wd.storage, wd.start_ts, cp, wd.sync_points);
            for (inv, d) in found {
                wd.violate(inv, d);
            }
        }
    }
}

/// Send a message. A dispatcher manager's heartbeat or block status first passes its
/// capture's collector queue ([`Lane`]); with `collector_lag` off (the default) that
/// stage takes no time and draws nothing, so it is the plain link below.
pub fn send(w: &W, wd: &mut World, env: Envelope) {
    let Some(lane) = collector_lane(&env.msg) else { return send_link(w, wd, env) };
    let gen = wd.nodes[env.from.0 as usize].generation;
    let key = (env.from.0, gen, lane);
    let release = match wd.net.collector.admit(&mut wd.sim_rng, key, wd.now_ms, gen, env) {
        Ok(at) => at,
        Err(env) => return send_link(w, wd, env),
    };
    let w2 = w.clone();
    let wait = release - wd.now_ms;
    spawn_net(wd, async move {
        madsim::time::sleep(Duration::from_millis(wait)).await;
        let mut g = w2.lock().unwrap();
        let Some((gen, env)) = g.net.collector.pop(key) else { return };
        // The queue dies with its process.
        let sender = &g.nodes[env.from.0 as usize];
        if !sender.alive || sender.generation != gen {
            g.net.dropped += 1;
            return;
        }
        g.now_ms = now_ms();
        send_link(&w2, &mut g, env);
    });
}

/// Run a task of the simulated network (outside every capture, so a kill does not stop
/// it).
fn spawn_net(wd: &World, fut: impl std::future::Future<Output = ()> + Send + 'static) {
    match &wd.net_handle {
        Some(h) => {
            h.spawn(fut);
        }
        None => {
            madsim::task::spawn(fut);
        }
    }
}

/// Put a message on the wire: latency from the seed, FIFO per link.
fn send_link(w: &W, wd: &mut World, env: Envelope) {
    let (a, b) = (env.from.0, env.to.0);
    if wd.net.cut.contains(&(a, b)) {
        wd.net.dropped += 1;
        return;
    }
    let [lo, hi] = wd.net.delay_ms;
    // Local delivery goes through channels too: at least 1 ms, so a request/response
    // ping-pong between roles on one node cannot spin at a single instant.
    let mut delay = if a == b { 1 } else { wd.sim_rng.random_range(lo..=hi) };
    if a == b && wd.net.delay_spike_local && wd.net.delay_spike > 0.0 && wd.sim_rng.random_bool(wd.net.delay_spike) {
        // A backlogged local queue (message center / dynamic stream) holds a message back.
        let [slo, shi] = wd.net.delay_spike_ms;
        delay += wd.sim_rng.random_range(slo..=shi.max(slo));
        wd.net.spiked += 1;
    }
    if a != b {
        // Seeded network faults (probabilities 0 draw nothing, keeping fault-free runs'
        // random streams unchanged).
        if wd.net.loss > 0.0 && wd.sim_rng.random_bool(wd.net.loss) {
            wd.net.lost += 1;
            wd.net.dropped += 1;
            return;
        }
        if wd.net.delay_spike > 0.0 && wd.sim_rng.random_bool(wd.net.delay_spike) {
            let [slo, shi] = wd.net.delay_spike_ms;
            delay += wd.sim_rng.random_range(slo..=shi.max(slo));
            wd.net.spiked += 1;
        }
        if wd.net.duplicate > 0.0 && wd.sim_rng.random_bool(wd.net.duplicate) {
            wd.net.duplicated += 1;
            enqueue(w, wd, env.clone(), delay);
        }
    }
    enqueue(w, wd, env, delay);
}

fn enqueue(w: &W, wd: &mut World, env: Envelope, delay: u64) {
    let (a, b) = (env.from.0, env.to.0);
    let at = (wd.now_ms + delay).max(*wd.net.last_delivery.get(&(a, b)).unwrap_or(&0));
    wd.net.last_delivery.insert((a, b), at);
    if wd.net.links.get(&(a, b)).map(|q| q.len()).unwrap_or(0) >= LINK_QUEUE_CAP {
        wd.net.dropped += 1;
        return;
    }
    // A restarted capture is a new capture in TiCDC (new ID): nothing addressed to the
    // old incarnation reaches it.
    let gen = (wd.nodes[a as usize].generation, wd.nodes[b as usize].generation);
    let q = wd.net.links.entry((a, b)).or_default();
    q.push_back((at, gen, env));
    let w2 = w.clone();
    let wait = at - wd.now_ms;
    spawn_net(wd, async move {
        madsim::time::sleep(Duration::from_millis(wait)).await;
        deliver(&w2, (a, b));
    });
}

/// Deliver the head of a link to its destination node.
fn deliver(w: &W, link: (u32, u32)) {
    let env = 'queued: {
        let mut g = w.lock().unwrap();
        let Some((_, (from_gen, to_gen), env)) = g.net.links.get_mut(&link).and_then(|q| q.pop_front()) else { return };
        let dest = &g.nodes[env.to.0 as usize];
        // A dead capture's late messages to the maintainer or coordinator (who key their
        // state by capture) would carry an ID no live capture has; dispatcher managers
        // fence by maintainer epoch instead, so late messages still reach them.
        let sender = &g.nodes[env.from.0 as usize];
        let sender_gone = !sender.alive || sender.generation != from_gen;
        let keyed_by_capture = matches!(env.msg.topic(), Topic::MaintainerManager | Topic::Coordinator);
        // Between a departed capture and the others nothing passes (their message centers
        // removed its target and refuse its streams: `handleConnect` finds no target).
        let departed = link.0 != link.1 && (!sender.member || !dest.member);
        if !dest.alive
            || dest.generation != to_gen
            || (sender_gone && keyed_by_capture)
            || departed
            || g.net.cut.contains(&link)
        {
            g.net.dropped += 1;
            return;
        }
        g.net.delivered += 1;
        let t = now_ms();
        g.now_ms = t;
        g.hash.u64(t);
        g.hash.u64(((link.0 as u64) << 32) | link.1 as u64);
        g.hash.str(env.msg.name());
        // The receiving capture's queue for this kind of message (off by default: no draw).
        let Some(lane) = recv_lane(&env.msg) else { break 'queued env };
        let key = (env.to.0, to_gen, lane);
        let g = &mut *g;
        if lane == RecvLane::Orchestrator {
            if let Some(replaced) = crate::lanes::absorb_pending(g.net.stream.waiting_mut(key), &env) {
                g.hash.u64(replaced as u64 + 1);
                if !replaced {
                    g.net.dropped += 1;
                }
                return;
            }
        }
        match g.net.stream.admit(&mut g.sim_rng, key, t, to_gen, env) {
            Err(env) => env,
            Ok(release) => {
                let w2 = w.clone();
                spawn_net(g, async move {
                    madsim::time::sleep(Duration::from_millis(release - t)).await;
                    let Some((gen, env)) = w2.lock().unwrap().net.stream.pop(key) else { return };
                    handle_delivered(&w2, env, Some(gen));
                });
                return;
            }
        }
    };
    handle_delivered(w, env, None);
}

/// Handle a delivered message on its node (`gen`: only on this incarnation).
fn handle_delivered(w: &W, env: Envelope, gen: Option<u64>) {
    let (from, to) = (env.from, env.to);
    step(w, to, gen, StepKind::Message, |ns, ctx, up, meta| {
        // barrier-owner-only: look at what the maintainer holds about each dispatcher
        // reported by a node it is not bound to, before and after the request.
        let probe = match &env.msg {
            Message::BlockStatusRequest { cf, statuses } => ns
                .mm
                .maintainers
                .get(cf)
                .map(|m| (cf.clone(), invariants::nonowner_block_statuses(m, from, statuses.iter().map(|s| s.id)))),
            _ => None,
        };
        handle_message(ns, ctx, up, meta, from, env.msg);
        let Some((cf, probe)) = probe else { return };
        let Some(m) = ns.mm.maintainers.get(&cf) else { return };
        for (id, owner, before) in probe {
            if before.admitted_in(&invariants::barrier_view(m, id)) {
                let owner = owner.map(|n| n.to_string()).unwrap_or_else(|| "none".into());
                ctx.out.trace.push(TraceEvent {
                    role: Role::Maintainer,
                    epoch: m.epoch,
                    kind: "block status from non-owner admitted",
                    fields: vec![("dispatcher", id.to_string()), ("from", from.to_string()), ("owner", owner)],
                });
            }
        }
    });
}

fn handle_message(
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

/// Carry out a storage request issued by node `n` (completions return to that node).
fn storage_request(w: &W, wd: &mut World, n: NodeId, req: StorageRequest) {
    match req {
        StorageRequest::Delete { paths } => {
            // The cleanup is a storage operation like any other: it lands after its own
            // latency, so it can fall between a flush's put and its rename.
            let lat = storage_latency(wd);
            let w2 = w.clone();
            let node = n.to_string();
            spawn_on(wd, n, async move {
                madsim::time::sleep(Duration::from_millis(lat)).await;
                let mut g = w2.lock().unwrap();
                g.now_ms = now_ms();
                g.storage.delete(&paths);
                g.record(&node, "Storage", 0, "delete temporary objects", vec![("paths".into(), paths.join(","))]);
            });
        }
        StorageRequest::Put { op_id, content: ObjectContent::Rows(_), .. }
            if wd.failpoints[n.0 as usize].on(FP_MYSQL_SINK_HANG_LONG_TIME) =>
        {
            // `util.Hang(ctx, time.Hour)` in the DML writer: a row write waits until the writer's context is
            // cancelled (the capture's local fence cancels it, see `session`).
            let gen = wd.nodes[n.0 as usize].generation;
            wd.hung_storage.push((n, gen, op_id));
            wd.record(
                &n.to_string(),
                "Sink",
                0,
                "inject MySQLSinkHangLongTime",
                vec![("op_id".into(), op_id.to_string())],
            );
        }
        StorageRequest::Put { op_id, path, content } => {
            let lat = storage_latency(wd);
            if storage_fails(wd) {
                complete_storage_later(w, wd, n, op_id, lat, move |_| Err(StorageError::Transient(path)));
            } else {
                complete_storage_later(w, wd, n, op_id, lat, move |st| st.put(&path, content));
            }
        }
        StorageRequest::Rename { op_id, from, to } => {
            let lat = storage_latency(wd);
            if storage_fails(wd) {
                complete_storage_later(w, wd, n, op_id, lat, move |_| Err(StorageError::Transient(to)));
            } else {
                complete_storage_later(w, wd, n, op_id, lat, move |st| st.rename(&from, &to).map(|_| ()));
            }
        }
    }
}

/// Latency of one storage operation, drawn from the seed.
fn storage_latency(wd: &mut World) -> u64 {
    let [lo, hi] = wd.storage_latency_ms;
    wd.sim_rng.random_range(lo..=hi.max(lo))
}

/// Draw an opt-in transient storage failure (no draw at all when it is off).
fn storage_fails(wd: &mut World) -> bool {
    if wd.storage_error > 0.0 && wd.sim_rng.random_bool(wd.storage_error) {
        wd.storage_errors += 1;
        return true;
    }
    false
}

/// Apply a storage operation after `lat` ms on node `n`, then hand its result back to
/// the node's sink (if the node was not restarted meanwhile).
fn complete_storage_later(
    w: &W,
    wd: &World,
    n: NodeId,
    op_id: u64,
    lat: u64,
    op: impl FnOnce(&mut Storage) -> Result<(), StorageError> + Send + 'static,
) {
    let w2 = w.clone();
    let gen = wd.nodes[n.0 as usize].generation;
    spawn_on(wd, n, async move {
        madsim::time::sleep(Duration::from_millis(lat)).await;
        let res = {
            let mut g = w2.lock().unwrap();
            let r = op(&mut g.storage);
            record_ddl_ts(&mut g);
            check_writes_after_drop(&mut g);
            check_durable_ddls(&mut g);
            r
        };
        storage_done(&w2, n, gen, op_id, res);
    });
}

/// `barrier-writes-once`, writer half: a barrier write of the block event (DDL, or
/// syncpoint if `sync_point`) at `commit_ts` by `dispatcher` in maintainer generation
/// `epoch`; a second writer while that barrier is still open is a violation (the world
/// forgets the writer when the barrier finishes).
pub fn note_barrier_ddl_write(wd: &mut World, epoch: u64, commit_ts: &str, sync_point: bool, dispatcher: &str) {
    let prev = wd
        .ddl_writers
        .entry((epoch, commit_ts.to_string(), sync_point))
        .or_insert_with(|| dispatcher.to_string())
        .clone();
    if prev != dispatcher {
        let what = if sync_point { "syncpoint" } else { "DDL" };
        wd.violate(
            invariants::BARRIER_WRITES_ONCE,
            format!(
                "{} at {} written by two dispatchers in maintainer epoch {}: {} and {}",
                what, commit_ts, epoch, prev, dispatcher
            ),
        );
    }
}

/// `barrier-writes-once`, flush half: when a DDL becomes durable downstream, every row
/// change of the tables it blocks that committed before it (and after the changefeed's
/// start) must already be durable; when a syncpoint record becomes durable, every row
/// change of every table at or below its primary ts (the downstream then is the
/// upstream snapshot at that ts).
/// The MySQL sink's `ddl_ts` rows after block-event writes (`SendDDLTsPre`/`SendDDLTs`,
/// `mysql_writer_for_ddl_ts.go`): a syncpoint updates the reserved row; a DDL writes a
/// row for every table it blocks (a DB event: the schema's tables, an All event: every
/// table, the DDL span included) and every table it adds, and its finish deletes the rows
/// of the tables it drops. The latest write wins, as the writer's upsert.
pub fn record_ddl_ts(wd: &mut World) {
    use core_sched::messages::InfluenceType;
    use core_sched::sink::ddl_ts::DdlTsRow;
    for (ts, finished, is_syncpoint) in std::mem::take(&mut wd.storage.new_ddl_ts) {
        let row = DdlTsRow { ddl_ts: ts, finished, is_syncpoint };
        if is_syncpoint {
            wd.storage.ddl_ts_sync_point = Some(row);
            continue;
        }
        let i = wd.upstream.ddls.partition_point(|d| d.commit_ts < ts);
        let Some(ev) = wd.upstream.ddls.get(i).filter(|d| d.commit_ts == ts) else { continue };
        let alive = |t: &crate::upstream::UTable| t.created_ts < ts && t.dropped_ts.map(|d| d >= ts).unwrap_or(true);
        let mut tables: Vec<TableId> = match ev.blocked_tables.influence_type {
            InfluenceType::Normal => ev.blocked_tables.table_ids.clone(),
            InfluenceType::Db => std::iter::once(DDL_SPAN_TABLE_ID)
                .chain(
                    wd.upstream
                        .tables
                        .values()
                        .filter(|t| t.schema_id == ev.blocked_tables.schema_id && alive(t))
                        .map(|t| t.id),
                )
                .collect(),
            InfluenceType::All => std::iter::once(DDL_SPAN_TABLE_ID)
                .chain(wd.upstream.tables.values().filter(|t| alive(t)).map(|t| t.id))
                .collect(),
        };
        tables.extend(ev.need_added_tables.iter().map(|t| t.table_id));
        let dropped: Vec<TableId> = match (&ev.need_dropped_tables, finished) {
            (Some(d), true) if d.influence_type == InfluenceType::Normal => d.table_ids.clone(),
            (Some(d), true) if d.influence_type == InfluenceType::Db => {
                wd.upstream.tables.values().filter(|t| t.schema_id == d.schema_id && alive(t)).map(|t| t.id).collect()
            }
            _ => vec![],
        };
        for t in tables {
            wd.storage.ddl_ts.insert(t, row);
        }
        for t in dropped {
            wd.storage.ddl_ts.remove(&t);
        }
    }
}

pub fn check_durable_ddls(wd: &mut World) {
    for rec in std::mem::take(&mut wd.storage.new_syncpoints) {
        let mut missing = None;
        'tables: for ch in wd.upstream.changes.values() {
            for c in ch.iter().take_while(|c| c.commit_ts <= rec.primary_ts) {
                if c.commit_ts > wd.start_ts && !wd.storage.durable.contains(&(c.table_id, c.commit_ts, c.key)) {
                    missing = Some((c.table_id, c.commit_ts, c.key));
                    break 'tables;
                }
            }
        }
        if let Some((t, ts, key)) = missing {
            wd.violate(
                invariants::BARRIER_WRITES_ONCE,
                format!(
                    "syncpoint {} became durable before row key={} commit_ts={} of table {} was flushed",
                    rec.primary_ts, key, ts, t
                ),
            );
        }
    }
    let ddls = std::mem::take(&mut wd.storage.new_ddls);
    for rec in ddls {
        let Some(ev) = wd.upstream.ddls.iter().find(|d| d.commit_ts == rec.commit_ts) else { continue };
        let tables: Vec<TableId> = match ev.blocked_tables.influence_type {
            core_sched::messages::InfluenceType::Normal => {
                ev.blocked_tables.table_ids.iter().copied().filter(|t| *t != DDL_SPAN_TABLE_ID).collect()
            }
            core_sched::messages::InfluenceType::Db => wd
                .upstream
                .tables
                .values()
                .filter(|t| t.schema_id == ev.blocked_tables.schema_id)
                .map(|t| t.id)
                .collect(),
            core_sched::messages::InfluenceType::All => wd.upstream.tables.keys().copied().collect(),
        };
        let mut missing = None;
        for t in tables {
            if let Some(ch) = wd.upstream.changes.get(&t) {
                if let Some(c) = ch.iter().find(|c| {
                    c.commit_ts > wd.start_ts
                        && c.commit_ts < rec.commit_ts
                        && !wd.storage.durable.contains(&(c.table_id, c.commit_ts, c.key))
                }) {
                    missing = Some((t, c.commit_ts, c.key));
                    break;
                }
            }
        }
        if let Some((t, ts, key)) = missing {
            wd.violate(
                invariants::BARRIER_WRITES_ONCE,
                format!(
                    "DDL '{}' at {} became durable before row key={} commit_ts={} of table {} was flushed",
                    rec.query, rec.commit_ts, key, ts, t
                ),
            );
        }
    }
}

/// `no-write-after-drop` over the data and DDL files that just became durable (run before
/// [`check_durable_ddls`], which consumes the new DDL records).
pub fn check_writes_after_drop(wd: &mut World) {
    let rows = std::mem::take(&mut wd.storage.new_rows);
    if rows.is_empty() && wd.storage.new_ddls.is_empty() {
        return;
    }
    for (inv, d) in invariants::check_no_write_after_drop(
        &wd.upstream,
        &wd.storage,
        wd.persisted_checkpoint,
        &rows,
        &wd.storage.new_ddls,
    ) {
        wd.violate(inv, d);
    }
}

pub fn storage_done(w: &W, n: NodeId, gen: u64, op_id: u64, res: Result<(), StorageError>) {
    step(w, n, Some(gen), StepKind::Storage, |ns, ctx, _, _| {
        for dm in ns.orch.managers.values_mut() {
            if dm.sink.instance == op_id >> 32 {
                dm.on_storage_result(ctx, op_id, res);
                break;
            }
        }
    });
}

fn spawn_on(wd: &World, n: NodeId, fut: impl std::future::Future<Output = ()> + Send + 'static) {
    // Look the node up afresh: a restarted node has a new task table, and a handle
    // taken before the kill would spawn into the dead one.
    let h = wd.node_handles[n.0 as usize].as_ref().and_then(|h| madsim::runtime::Handle::current().get_node(h.id()));
    match h {
        Some(h) => {
            h.spawn(fut);
        }
        None => {
            madsim::task::spawn(fut);
        }
    }
}

/// Tell every live node's roles about the membership.
/// The cluster notices the current incarnation of capture `n` gone once the failure
/// detection delay has passed (its etcd key expires with the lease), unless the capture
/// was restarted meanwhile (then its restart already took the old incarnation out).
pub fn detect_departure_later(w: &W, n: NodeId) {
    let (gen, w2) = (w.lock().unwrap().nodes[n.0 as usize].generation, w.clone());
    let g = w.lock().unwrap();
    spawn_net(&g, async move {
        madsim::time::sleep(Duration::from_millis(crate::runner::NODE_FAILURE_DETECTION_MS)).await;
        leave_cluster(&w2, n, gen);
    });
}

/// The cluster notices that incarnation `gen` of capture `n` is gone (its etcd key
/// expired or it restarted as a new capture) and tells the members. Nothing happens if
/// the capture has been restarted since.
pub fn leave_cluster(w: &W, n: NodeId, gen: u64) {
    {
        let mut g = w.lock().unwrap();
        let slot = &mut g.nodes[n.0 as usize];
        if slot.generation != gen || !slot.member {
            return;
        }
        slot.member = false;
    }
    notify_membership(w);
}

pub fn notify_membership(w: &W) {
    let (alive, owner) = {
        let mut g = w.lock().unwrap();
        // Called from timers of the network node: bring the world's clock up to now, so
        // the election is recorded when it happens.
        g.now_ms = now_ms();
        let o = g.owner();
        if o != g.owner_node {
            g.owner_node = o;
            if let Some(n) = o {
                g.record(&n.to_string(), "Node", 0, "campaign owner success", vec![]);
            }
        }
        (g.alive(), o)
    };
    for n in alive.iter().copied() {
        step(w, n, None, StepKind::Membership, |ns, ctx, up, meta| {
            ns.mm.coordinator = owner;
            let schema = crate::upstream::NodeSchemaStore {
                up: &*up,
                gc_fast_fail: ctx.fp(FP_GET_ALL_PHYSICAL_TABLES_GC_FAST_FAIL),
            };
            ns.mm.on_node_change(ctx, &alive, &schema);
            if Some(n) == owner {
                let c = ns.coord.get_or_insert_with(|| Coordinator::new(n, alive.clone()));
                c.on_node_change(ctx, &alive, meta);
            } else {
                ns.coord = None;
            }
        });
    }
}

/// Fresh volatile state for a (re)started node.
pub fn fresh_node_state(wd: &mut World, n: NodeId) -> NodeState {
    wd.orch_instances += 1;
    let mut mm = MaintainerManager::new(n);
    mm.alive = wd.alive();
    mm.coordinator = wd.owner();
    let mut orch = DispatcherOrchestrator::new(n, wd.orch_instances);
    orch.schema_store_init_ms = wd.schema_store_init_ms;
    orch.trigger_create_ms = wd.trigger_create_ms;
    orch.first_event_ms = wd.first_event_ms;
    NodeState { mm, orch, coord: None }
}
