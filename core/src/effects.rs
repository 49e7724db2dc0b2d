//! How roles talk to the world: every handler gets a [`Ctx`] with the current simulated
//! time, the node it runs on, an injected random generator, the bug switches, the
//! failpoints active on this node, and an [`Out`] buffer where it leaves its effects
//! (messages, storage requests, trace events) as plain data for the caller to carry out.

use crate::bugs::{Bug, Bugs};
use crate::messages::Envelope;
use crate::types::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Role {
    Coordinator,
    Maintainer,
    Orchestrator,
    DispatcherManager,
    Dispatcher,
    Sink,
}

/// One structured protocol event. The caller adds simulated time and node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceEvent {
    pub role: Role,
    pub epoch: Epoch,
    pub kind: &'static str,
    pub fields: Vec<(&'static str, String)>,
}

/// Content of an object in external storage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ObjectContent {
    /// A data file: row changes of one dispatcher, in commit-ts order.
    Rows(Vec<crate::upstream::RowChange>),
    /// A schema file written for a DDL.
    Ddl(crate::upstream::DdlRecord),
    /// A syncpoint record (the `tidb_cdc.syncpoint_v1` row, see [`crate::syncpoint`]).
    SyncPoint(crate::syncpoint::SyncPointRecord),
    /// Rows of one redo dispatcher in one redo flush (a redo log file, under `redo/`).
    RedoRows(Vec<crate::upstream::RowChange>),
    /// A DDL in the redo log (under `redo/`).
    RedoDdl(crate::upstream::DdlRecord),
    /// A redo meta file (under `redo/`, see [`crate::sink::redo_meta`]).
    RedoMeta(crate::sink::redo_meta::LogMeta),
}

/// A request to external storage. Completion comes back through
/// `DispatcherManager::on_storage_result` with the same `op_id`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StorageRequest {
    Put {
        op_id: u64,
        path: String,
        content: ObjectContent,
    },
    Rename {
        op_id: u64,
        from: String,
        to: String,
    },
    /// Best-effort removal of temporary objects of a closed writer; no completion.
    Delete {
        paths: Vec<String>,
    },
    /// The redo meta's `initMeta` walk: every meta file under `dir` with its content;
    /// completion through `DispatcherManager::on_redo_meta_listed`.
    ListRedoMeta {
        op_id: u64,
        dir: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StorageError {
    NotFound(String),
    Transient(String),
}
impl std::fmt::Display for StorageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StorageError::NotFound(p) => write!(f, "{}: no such file or directory", p),
            StorageError::Transient(p) => write!(f, "{}: transient storage error", p),
        }
    }
}

/// What a step did that the simulator's checkers must know, as typed data. The human
/// trace ([`TraceEvent`]) says the same for people and the trace hash; checkers read only
/// these, so rewording a trace line cannot switch an invariant off.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Observation {
    /// The node's set of live dispatchers, their states or the manager's owner changed
    /// (created, working, removed, stopped, trigger replaced, write path stopped, manager
    /// closed, owner updated): the placement checks must look again.
    DispatchersChanged,
    /// A dispatcher wrote a block event (DDL or syncpoint) as its barrier's writer.
    BarrierWrite {
        cf: ChangefeedId,
        maintainer_epoch: Epoch,
        commit_ts: Ts,
        sync_point: bool,
        dispatcher: DispatcherId,
    },
    /// The maintainer's barrier finished a block event (every dispatcher DONE).
    BarrierEventDone { cf: ChangefeedId, maintainer_epoch: Epoch, commit_ts: Ts, sync_point: bool },
    /// The barrier's writer of an open event vanished (its span split or merged away) and
    /// another dispatcher of the event was chosen (`resend`, maintainer/barrier_event.go:719-759).
    BarrierWriterReselected {
        cf: ChangefeedId,
        maintainer_epoch: Epoch,
        commit_ts: Ts,
        sync_point: bool,
        writer: DispatcherId,
    },
    /// A dispatcher manager applied a control message of an older maintainer epoch.
    ControlFromOlderEpochApplied { cf: ChangefeedId, message: String, from: NodeId, epoch: Epoch, current_epoch: Epoch },
    /// The barrier took a block status from a node its task is not bound to (`owner`).
    NonOwnerBlockStatusAdmitted {
        maintainer_epoch: Epoch,
        dispatcher: DispatcherId,
        from: NodeId,
        owner: Option<NodeId>,
    },
    /// The maintainer's event loop stored a heartbeat's watermark (first half of
    /// `onHeartbeatRequest`); its statuses follow in a step of their own. `received` is
    /// the heartbeat's, `stored` what the maintainer keeps for `from` after it (the same,
    /// unless an older one was kept).
    HeartbeatWatermarkStored {
        cf: ChangefeedId,
        maintainer_epoch: Epoch,
        from: NodeId,
        received: crate::messages::Watermark,
        stored: crate::messages::Watermark,
    },
    /// The second half of a heartbeat: its statuses went to the controllers.
    HeartbeatStatusesApplied { cf: ChangefeedId, maintainer_epoch: Epoch, from: NodeId },
    /// A round of the checkpoint goroutine ran; `heartbeats_half_applied` heartbeats had
    /// their watermark stored and their statuses not applied yet. `checkpoint` is the
    /// committed checkpoint after the round (`None`: not computable), `inputs` what it
    /// was the minimum of.
    CheckpointCalculated {
        cf: ChangefeedId,
        maintainer_epoch: Epoch,
        heartbeats_half_applied: usize,
        checkpoint: Option<Ts>,
        inputs: CheckpointInputs,
    },
    /// A dispatcher manager's heartbeat collector aggregated every dispatcher
    /// (`aggregateDispatcherHeartbeats`, setting `latestWatermark`), while the status
    /// collector's batch held `status_batch` statuses and the block-status collector's
    /// `block_status_batch` (each waiting for its 10 ms window to close).
    HeartbeatAggregated { cf: ChangefeedId, status_batch: usize, block_status_batch: usize },
    /// The status collector sent its batch (`collectComponentStatusWhenChanged`);
    /// `aggregated_inside` aggregates ran while the batch was open.
    StatusBatchSent { cf: ChangefeedId, statuses: usize, aggregated_inside: u32 },
    /// A sink write error was raised to the changefeed (a retryable error, which restarts it).
    SinkErrorEscalated { cf: ChangefeedId, dispatcher: DispatcherId, error: String, closing: bool },
    /// A role's own assertion failed at a transition (see [`crate::assertions`]).
    AssertionFailed { assertion: crate::assertions::Assertion, detail: String },
    /// A redo meta file became durable with these values (the redo trigger's manager).
    RedoMetaFlushed { cf: ChangefeedId, checkpoint_ts: Ts, resolved_ts: Ts },
}

/// What one checkpoint round took the minimum of: the operator, absent-span and
/// barrier bounds (`None`: no bound) and the stored watermark of each node it read (a
/// node without one ends the round; it is the last entry, with `None`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckpointInputs {
    pub by_operator: Option<Ts>,
    pub by_absent: Option<Ts>,
    pub by_barrier: Option<Ts>,
    pub watermarks: Vec<(NodeId, Option<crate::messages::Watermark>)>,
}

/// An [`Observation`] with its place in the step's trace: it happened just before trace
/// event number `before_trace`, so a violation it raises is reported next to its cause.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observed {
    pub before_trace: usize,
    pub what: Observation,
}

/// The rest of a goroutine's work that TiCDC does after it released a lock (or while it
/// waits on a timer), during which other goroutines over the same state can run: the
/// caller runs the named entry point `after_ms` later as a step of its own, so the
/// simulator's seeded scheduler may interleave other tasks in between. See the
/// "Goroutines and locks" section of docs/fidelity.md.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wakeup {
    pub after_ms: u64,
    pub task: Continuation,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Continuation {
    /// [`crate::maintainer::Maintainer::apply_heartbeat_statuses`]: the statuses of a
    /// heartbeat whose watermark was stored (`onHeartbeatRequest` after
    /// `checkpointTsByCapture.Set`, maintainer/maintainer.go:918-963).
    MaintainerHeartbeatStatuses { cf: ChangefeedId },
    /// [`crate::dispatcher::manager::DispatcherManager::collect_status_batch`]: the
    /// status collector's 10 ms batch is due (`collectComponentStatusWhenChanged`,
    /// dispatchermanager/dispatcher_manager.go:852).
    DmStatusBatch { cf: ChangefeedId },
    /// [`crate::dispatcher::manager::DispatcherManager::collect_block_status_batch`]:
    /// the block-status collector's 10 ms batch is due (`collectBlockStatusRequest`,
    /// dispatchermanager/dispatcher_manager.go:767).
    DmBlockStatusBatch { cf: ChangefeedId },
}

#[derive(Default, Debug)]
pub struct Out {
    pub msgs: Vec<Envelope>,
    pub storage: Vec<StorageRequest>,
    pub trace: Vec<TraceEvent>,
    pub observations: Vec<Observed>,
    pub wakeups: Vec<Wakeup>,
}

impl Out {
    pub fn is_empty(&self) -> bool {
        self.msgs.is_empty()
            && self.storage.is_empty()
            && self.trace.is_empty()
            && self.observations.is_empty()
            && self.wakeups.is_empty()
    }

    /// Record an observation at the current place in the trace.
    pub fn observe(&mut self, what: Observation) {
        self.observations.push(Observed { before_trace: self.trace.len(), what });
    }
}

/// Failpoints active on the node, named after TiCDC's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failpoints(pub BTreeSet<String>);
impl Failpoints {
    pub fn on(&self, name: &str) -> bool {
        self.0.contains(name)
    }
}
pub const FP_BLOCK_CREATE_DISPATCHER: &str = "BlockCreateDispatcher";
pub const FP_NOT_READY_TO_CLOSE_DISPATCHER: &str = "NotReadyToCloseDispatcher";
pub const FP_STOP_BALANCE_SCHEDULER: &str = "StopBalanceScheduler";
/// `dispatcher/BlockOrWaitBeforeWrite` (in `ExecuteBlockEventDDL`): holds the write of a
/// block event (DDL or syncpoint) that a barrier's Write action asked for.
pub const FP_BLOCK_OR_WAIT_BEFORE_WRITE: &str = "BlockOrWaitBeforeWrite";
/// `dispatcher/BlockOrWaitReportAfterWrite` (in `ExecuteBlockEventDDL`, after the sink
/// write): holds the DONE of a barrier write; the dispatcher's events go on meanwhile.
pub const FP_BLOCK_OR_WAIT_REPORT_AFTER_WRITE: &str = "BlockOrWaitReportAfterWrite";
/// `logservice/schemastore/getAllPhysicalTablesGCFastFail`: the node's schema store
/// loads tables at snapshot 0, below its GC ts (`ErrSnapshotLostByGC`).
pub const FP_GET_ALL_PHYSICAL_TABLES_GC_FAST_FAIL: &str = "getAllPhysicalTablesGCFastFail";
/// `coordinator/BlockBeforeStopChangefeed`: a `failed`/`finished` state change is
/// persisted but its `StopChangefeed` waits (`pause`), on the coordinator's node.
pub const FP_BLOCK_BEFORE_STOP_CHANGEFEED: &str = "BlockBeforeStopChangefeed";
/// `pkg/sink/mysql/MySQLSinkHangLongTime`: every sink write of the node hangs until its
/// writer's context is cancelled (the sim's storage requests of that node never complete
/// until the capture local-fences). The sim's sink is cloud storage; the failpoint keeps
/// the name of the integration test's MySQL failpoint.
pub const FP_MYSQL_SINK_HANG_LONG_TIME: &str = "MySQLSinkHangLongTime";
/// `dispatchermanager/NewDispatcherManagerDelay`: creating a dispatcher manager on this
/// node (the first bootstrap of a changefeed here) takes
/// [`crate::dispatcher::orchestrator::NEW_DISPATCHER_MANAGER_DELAY_MS`].
pub const FP_NEW_DISPATCHER_MANAGER_DELAY: &str = "NewDispatcherManagerDelay";
pub const KNOWN_FAILPOINTS: &[&str] = &[
    FP_NEW_DISPATCHER_MANAGER_DELAY,
    FP_MYSQL_SINK_HANG_LONG_TIME,
    FP_BLOCK_CREATE_DISPATCHER,
    FP_NOT_READY_TO_CLOSE_DISPATCHER,
    FP_STOP_BALANCE_SCHEDULER,
    FP_BLOCK_OR_WAIT_BEFORE_WRITE,
    FP_BLOCK_OR_WAIT_REPORT_AFTER_WRITE,
    FP_GET_ALL_PHYSICAL_TABLES_GC_FAST_FAIL,
    FP_BLOCK_BEFORE_STOP_CHANGEFEED,
];

pub struct Ctx<'a> {
    pub now_ms: u64,
    pub node: NodeId,
    pub rng: &'a mut dyn rand::RngCore,
    pub bugs: &'a Bugs,
    pub failpoints: &'a Failpoints,
    pub out: &'a mut Out,
    /// The downstream's `ddl_ts` rows (read when syncpoints are on, see
    /// [`crate::sink::ddl_ts`]); `&NO_DDL_TS` for none.
    pub ddl_ts: &'a dyn crate::sink::ddl_ts::DdlTsView,
    /// How the rest of a lock-split goroutine runs (see [`Continuation`]).
    pub continuations: ContinuationMode,
}

/// How an entry point's [`Continuation`]s run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ContinuationMode {
    /// As steps of their own: the entry point asks for a [`Wakeup`] (the simulator).
    #[default]
    Deferred,
    /// At once, at the end of the same step: for unit tests that drive one role by hand
    /// and look at a step's whole effect (statuses applied, batches sent).
    Inline,
}

impl<'a> Ctx<'a> {
    pub fn bug(&self, b: Bug) -> bool {
        self.bugs.on(b)
    }
    /// A candidate fix switched on (`--fix`).
    pub fn fix(&self, f: crate::bugs::Fix) -> bool {
        self.bugs.fix_on(f)
    }
    pub fn fp(&self, name: &str) -> bool {
        self.failpoints.on(name)
    }
    pub fn send(&mut self, to: NodeId, msg: crate::messages::Message) {
        let from = self.node;
        self.out.msgs.push(Envelope { from, to, msg });
    }
    pub fn new_dispatcher_id(&mut self) -> DispatcherId {
        loop {
            let v = self.rng.next_u64();
            if v != 0 {
                return DispatcherId(v);
            }
        }
    }
    pub fn trace(&mut self, role: Role, epoch: Epoch, kind: &'static str, fields: Vec<(&'static str, String)>) {
        self.out.trace.push(TraceEvent { role, epoch, kind, fields });
    }
    /// See [`Out::observe`].
    pub fn observe(&mut self, what: Observation) {
        self.out.observe(what);
    }
    /// Ask the caller to run `task` as a step of its own `after_ms` from now
    /// ([`ContinuationMode::Deferred`]; the entry point runs it itself when `Inline`).
    pub fn wake(&mut self, after_ms: u64, task: Continuation) {
        if self.continuations == ContinuationMode::Deferred {
            self.out.wakeups.push(Wakeup { after_ms, task });
        }
    }
    pub fn inline_continuations(&self) -> bool {
        self.continuations == ContinuationMode::Inline
    }
}

/// `trace!(ctx, Role::Maintainer, epoch, "event name", key = value, ...)`
#[macro_export]
macro_rules! trace_ev {
    ($ctx:expr, $role:expr, $epoch:expr, $kind:expr $(, $k:ident = $v:expr)* $(,)?) => {
        $ctx.trace($role, $epoch, $kind, vec![$((stringify!($k), format!("{}", $v))),*])
    };
}
