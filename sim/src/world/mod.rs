//! The simulated world: nodes (captures) with their roles, the network, the persisted
//! metadata (etcd), the upstream cluster, external storage, failpoints, the trace and
//! the invariant checkers. Everything lives behind one mutex that each madsim task
//! takes for one protocol step; madsim's seeded scheduler decides the interleaving.

mod checks;
mod membership;
mod network;
mod step;
mod storage_io;

pub use checks::*;
pub use membership::*;
pub use network::*;
pub use step::*;
pub use storage_io::*;

use crate::checkers::DataLossChecker;
use crate::result::{TraceRecord, Violation};
use crate::storage::Storage;
use crate::trace::TraceHash;
use crate::upstream::Upstream;
use core_sched::bugs::Bugs;
use core_sched::coordinator::{Coordinator, MetaStore};
use core_sched::dispatcher::DispatcherOrchestrator;
use core_sched::effects::*;
use core_sched::maintainer::manager::MaintainerManager;
use core_sched::types::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

pub type W = Arc<Mutex<World>>;

/// Upper bound of trace records kept in memory (the hash covers all of them).
pub const TRACE_CAP: usize = 400_000;

/// A capture's volatile state: lost when the node is killed.
#[derive(Debug)]
pub struct NodeState {
    pub mm: MaintainerManager,
    pub orch: DispatcherOrchestrator,
    pub coord: Option<Coordinator>,
    /// The capture's server context is cancelled (`ErrCaptureSuicide` after a session
    /// loss, server.go:383-386, 414-433): its maintainer manager has stopped
    /// (`maintainer_manager.go:135-142`) and handles no more messages.
    pub mm_stopped: bool,
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
    /// Under the `role-loops` engine: which roles' loops run (see [`crate::node::Engine`]).
    pub role_loops: crate::node::RoleLoops,
    /// When this incarnation's process died (a kill or an exit), if it did: what it had
    /// not yet sent dies with it (see `network::reconnect`).
    pub died_at_ms: Option<u64>,
}

impl NodeSlot {
    /// Running and still in the cluster (its etcd session, hence its capture key, alive).
    pub fn is_member(&self) -> bool {
        self.alive && !self.session_done
    }
}

pub struct World {
    /// Progress published for a long single run's progress line (never read here).
    pub progress: Option<std::sync::Arc<crate::runner::RunProgress>>,
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
    /// Core assertions that failed in the current step, reported after the step's
    /// checkers (see `checks::check`).
    pub(crate) failed_assertions: Vec<(String, String)>,
    pub data_loss: crate::checkers::DataLossChecker,
    /// The changefeed has redo on: the redo checks run.
    pub redo_on: bool,
    pub redo_meta: crate::checkers::RedoMetaChecker,
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
    /// At most this many storage failures in the run (then `storage_error` stops
    /// drawing): each is a changefeed restart, and TiCDC's restart backoff doubles per
    /// error (10 s, 20 s, 40 s, ...), so an unbounded number outlasts any converge window.
    pub storage_error_budget: u64,
    /// The writer of each open barrier (`barrier-writes-once`).
    pub barrier_writers: crate::checkers::BarrierWriters,
    /// The placement checks' reused buffers.
    pub placement_scratch: crate::checkers::PlacementScratch,
    /// Run the reference checks (`check_dispatchers_full`, `check_maintainer_full`).
    pub full_checks: bool,
    /// How the captures' periodic loops run, and their configured periods.
    pub engine: crate::node::Engine,
    pub node_timers: crate::node::NodeTimers,
    /// Steps that found their role's loop idle (see `RunResult::idle_steps`).
    pub idle_steps: u64,
    /// Syncpoints are due from this ts on, every this many ms (set when the changefeed
    /// runs with `enable-sync-point`): `no-data-loss` wants each one below the persisted
    /// checkpoint recorded downstream.
    pub sync_points: Option<(Ts, u64)>,
    /// Workload ops (`fail_resume`) that will resume a failed changefeed: until they have,
    /// a failed changefeed has not converged.
    pub resumes_pending: u32,
    /// `faults.schema-store-init-ms`, given to every (re)started node's orchestrator.
    pub schema_store_init_ms: [u64; 2],
    /// `faults.trigger-create-ms`, given to every (re)started node's orchestrator.
    pub trigger_create_ms: [u64; 2],
    /// `faults.first-event-ms`, given to every (re)started node's orchestrator.
    pub first_event_ms: [u64; 2],
    /// Storage requests held by `MySQLSinkHangLongTime`: (node, generation, op id).
    pub hung_storage: Vec<(NodeId, u64, u64)>,
    /// How often goroutines that TiCDC runs concurrently interleaved at a lock boundary
    /// (from typed observations; see [`crate::result::RunResult::interleavings`]).
    pub interleavings: std::collections::BTreeMap<&'static str, u64>,
    /// Messages and lifetimes for the `--html` page (off unless asked for; it never
    /// touches the hash or a random stream).
    pub timeline: Option<Box<crate::timeline::Recorder>>,
    /// Typed cause records for the report's causal slice (never hashed).
    pub causes: crate::causes::CauseLog,
    /// The effect buffers [`step::step`] lends each step (empty between steps).
    pub(crate) out_buf: Out,
}

impl World {
    pub fn new(seed: u64, bugs: Bugs, nodes: u32, delay_ms: [u64; 2]) -> Self {
        let mut master = ChaCha8Rng::seed_from_u64(seed);
        let core_rng = ChaCha8Rng::seed_from_u64(master.random());
        let sim_rng = ChaCha8Rng::seed_from_u64(master.random());
        World {
            progress: None,
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
                    role_loops: Default::default(),
                    died_at_ms: None,
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
            failed_assertions: Vec::new(),
            data_loss: DataLossChecker::default(),
            redo_on: false,
            redo_meta: Default::default(),
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
            storage_error_budget: u64::MAX,
            barrier_writers: Default::default(),
            placement_scratch: Default::default(),
            full_checks: false,
            engine: Default::default(),
            node_timers: Default::default(),
            idle_steps: 0,
            sync_points: None,
            resumes_pending: 0,
            schema_store_init_ms: [0, 0],
            trigger_create_ms: [0, 0],
            first_event_ms: [0, 0],
            hung_storage: Vec::new(),
            interleavings: Default::default(),
            timeline: None,
            causes: Default::default(),
            out_buf: Out::default(),
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

    /// Append a trace record (and hash it). Role, event and field names are mostly
    /// literals: `Cow` keeps those without a copy.
    pub fn record(
        &mut self,
        node: &str,
        role: impl Into<Cow<'static, str>>,
        epoch: u64,
        event: impl Into<Cow<'static, str>>,
        fields: Vec<(Cow<'static, str>, String)>,
    ) {
        let (role, event) = (role.into(), event.into());
        self.hash.u64(self.now_ms);
        self.hash.str(node);
        self.hash.str(&role);
        self.hash.u64(epoch);
        self.hash.str(&event);
        for (k, v) in &fields {
            self.hash.str(k);
            self.hash.str(v);
        }
        let r = TraceRecord { at_ms: self.now_ms, node: node.to_string(), role, epoch, event, fields };
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
    /// The second half of the maintainer's heartbeat handling (statuses to the controllers).
    HeartbeatStatuses,
    MaintainerHeartbeat,
    DmHeartbeat,
    Events,
    Flush,
    /// A dispatcher manager's status or block-status collector sends its 10 ms batch.
    StatusCollector,
    Storage,
    Coordinator,
    Membership,
    Api,
}

/// Simulated milliseconds since this thread's first call (see [`init_clock`]). Inside a
/// runtime it reads madsim's clock directly: the same value as `Instant::now()` there
/// (madsim's instants are its elapsed time over a zero base), without the interposed
/// `clock_gettime` round trip, which every step pays.
#[allow(clippy::disallowed_types, clippy::disallowed_methods)]
pub fn now_ms() -> u64 {
    let now = match madsim::time::TimeHandle::try_current() {
        Some(t) => t.elapsed(),
        None => madsim::time::Instant::now().duration_since(ZERO_INSTANT.with(|z| *z)),
    };
    now.saturating_sub(START.with(|s| *s)).as_millis() as u64
}

thread_local! {
    /// The clock at this thread's first [`now_ms`], as time since madsim's zero instant.
    #[allow(clippy::disallowed_types, clippy::disallowed_methods)]
    static START: std::time::Duration = match madsim::time::TimeHandle::try_current() {
        Some(t) => t.elapsed(),
        None => madsim::time::Instant::now().duration_since(ZERO_INSTANT.with(|z| *z)),
    };
    /// Outside a runtime (never in a run): the thread's first instant stands in for zero.
    #[allow(clippy::disallowed_types, clippy::disallowed_methods)]
    static ZERO_INSTANT: madsim::time::Instant = madsim::time::Instant::now();
}

pub fn init_clock() {
    START.with(|_| {});
}
