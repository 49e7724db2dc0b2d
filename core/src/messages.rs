//! The heartbeatpb messages (and the coordinator <-> maintainer-manager messages) with
//! the fields that matter for scheduling correctness. Names follow TiCDC.

use crate::config::ChangefeedConfig;
use crate::types::*;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ComponentState {
    Working,
    Stopped,
    Removed,
    Initializing,
    /// Merge target before the event collector is ready.
    Preparing,
    MergeReady,
    /// Merge source waiting to be closed by its merge.
    WaitingMerge,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ScheduleAction {
    Create,
    Remove,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum OperatorType {
    Add,
    Remove,
    Move,
    Split,
    Merge,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DispatcherConfig {
    pub span: TableSpan,
    pub start_ts: Ts,
    pub dispatcher_id: DispatcherId,
    pub schema_id: SchemaId,
    pub skip_dml_as_start_ts: bool,
    #[serde(default, skip_serializing_if = "Mode::is_default")]
    pub mode: Mode,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleDispatcherRequest {
    pub config: DispatcherConfig,
    pub action: ScheduleAction,
    pub operator_type: OperatorType,
    pub maintainer_epoch: Epoch,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergeDispatcherRequest {
    pub dispatcher_ids: Vec<DispatcherId>,
    pub merged_dispatcher_id: DispatcherId,
    #[serde(default, skip_serializing_if = "Mode::is_default")]
    pub mode: Mode,
    pub maintainer_epoch: Epoch,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum InfluenceType {
    All,
    Db,
    Normal,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InfluencedTables {
    pub influence_type: InfluenceType,
    pub table_ids: Vec<TableId>,
    pub schema_id: SchemaId,
}

/// `SchemaIDChange`: a table (physical ID) moved from one database to another by a
/// RENAME TABLE(S) or EXCHANGE PARTITION (`persist_storage_ddl_handlers.go:2517-2525`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaIdChange {
    pub table_id: TableId,
    pub old_schema_id: SchemaId,
    pub new_schema_id: SchemaId,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableRef {
    pub table_id: TableId,
    pub schema_id: SchemaId,
    pub splitable: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum BlockStage {
    None,
    Waiting,
    Writing,
    Done,
}

/// Block state of a dispatcher (heartbeatpb `State`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockState {
    pub is_blocked: bool,
    pub block_ts: Ts,
    pub block_tables: Option<InfluencedTables>,
    pub need_dropped_tables: Option<InfluencedTables>,
    pub need_added_tables: Vec<TableRef>,
    /// `UpdatedSchemas`: tables a RENAME moved to another database.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub updated_schemas: Vec<SchemaIdChange>,
    pub is_sync_point: bool,
    pub stage: BlockStage,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableSpanStatus {
    pub id: DispatcherId,
    pub state: ComponentState,
    pub checkpoint_ts: Ts,
    /// `EventSizePerSecond`: set only in the statuses of a complete-status heartbeat (0
    /// elsewhere, "no traffic sample"); at least 1 there, TiCDC's idle value. Whole bytes
    /// per second (TiCDC: a float32); see [`crate::upstream::TrafficView`].
    #[serde(default)]
    pub event_size_per_second: u64,
    #[serde(default, skip_serializing_if = "Mode::is_default")]
    pub mode: Mode,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableSpanBlockStatus {
    pub id: DispatcherId,
    pub state: BlockState,
    #[serde(default, skip_serializing_if = "Mode::is_default")]
    pub mode: Mode,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Watermark {
    pub checkpoint_ts: Ts,
    pub resolved_ts: Ts,
    pub seq: u64,
}

/// RFC error codes carried by `RunningError` (a subset of TiCDC's `pkg/errors`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ErrorCode {
    ChangefeedRetryable,
    ChangefeedUnretryable,
    InitTableTriggerDispatcherFailed,
    /// `ErrSnapshotLostByGC`: the schema snapshot at the start ts is below the schema
    /// store's GC ts (a GC fast-fail error).
    SnapshotLostByGC,
    /// `ErrDispatcherManagerWritePathClosed`: the dispatcher manager is closing or closed.
    DispatcherManagerWritePathClosed,
}

impl ErrorCode {
    /// TiCDC's RFC code name, as it appears in logs and in the changefeed's error.
    pub fn rfc(self) -> &'static str {
        match self {
            ErrorCode::ChangefeedRetryable => "CDC:ErrChangefeedRetryable",
            ErrorCode::ChangefeedUnretryable => "CDC:ErrChangefeedUnretryable",
            ErrorCode::InitTableTriggerDispatcherFailed => "CDC:ErrChangefeedInitTableTriggerDispatcherFailed",
            ErrorCode::SnapshotLostByGC => "CDC:ErrSnapshotLostByGC",
            ErrorCode::DispatcherManagerWritePathClosed => "CDC:ErrDispatcherManagerWritePathClosed",
        }
    }

    /// The coordinator's classification (`findFastFailError`: GC fast-fail codes and
    /// `ShouldFailChangefeed`'s unretryable list): true = the changefeed goes to `failed`
    /// and is not restarted; false = `warning`, backoff and restart.
    pub fn fails_changefeed(self) -> bool {
        matches!(self, ErrorCode::ChangefeedUnretryable | ErrorCode::SnapshotLostByGC)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunningError {
    pub node: NodeId,
    pub code: ErrorCode,
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ActionKind {
    Write,
    Pass,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DispatcherAction {
    pub action: ActionKind,
    pub commit_ts: Ts,
    pub is_sync_point: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AckEvent {
    pub commit_ts: Ts,
    pub is_sync_point: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum InfluencedDispatchers {
    /// Explicit dispatcher IDs.
    Normal(Vec<DispatcherId>),
    /// Every local dispatcher of the schema (DM expands it).
    Db(SchemaId),
    /// Every local dispatcher.
    All,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DispatcherStatus {
    pub influenced: InfluencedDispatchers,
    pub action: Option<DispatcherAction>,
    pub ack: Option<AckEvent>,
    pub ignored_block_status: Option<AckEvent>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BootstrapTableSpan {
    pub id: DispatcherId,
    pub schema_id: SchemaId,
    pub span: TableSpan,
    pub state: ComponentState,
    pub checkpoint_ts: Ts,
    pub block_state: Option<BlockState>,
    #[serde(default, skip_serializing_if = "Mode::is_default")]
    pub mode: Mode,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaInfo {
    pub schema_id: SchemaId,
    pub schema_name: String,
    pub tables: Vec<(TableId, String)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum FeedState {
    Normal,
    Warning,
    Failed,
    Stopped,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MaintainerStatus {
    pub changefeed: ChangefeedId,
    pub checkpoint_ts: Ts,
    pub bootstrap_done: bool,
    pub errors: Vec<RunningError>,
    pub maintainer_epoch: Epoch,
    /// The maintainer has stopped (removed or closed); the node no longer hosts it.
    pub removed: bool,
}

/// Every message that crosses the (simulated) network.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Message {
    // coordinator -> maintainer manager
    AddMaintainerRequest {
        cf: ChangefeedId,
        config: ChangefeedConfig,
        checkpoint_ts: Ts,
        is_new_changefeed: bool,
        maintainer_epoch: Epoch,
    },
    RemoveMaintainerRequest {
        cf: ChangefeedId,
        cascade: bool,
        removed: bool,
        maintainer_epoch: Epoch,
    },
    /// The coordinator's persisted checkpoint, forwarded by the maintainer to its trigger dispatcher.
    CheckpointTsMessage {
        cf: ChangefeedId,
        checkpoint_ts: Ts,
    },
    // maintainer manager -> coordinator
    MaintainerHeartbeat {
        statuses: Vec<MaintainerStatus>,
    },
    // maintainer -> dispatcher manager (orchestrator)
    MaintainerBootstrapRequest {
        cf: ChangefeedId,
        config: ChangefeedConfig,
        start_ts: Ts,
        table_trigger_event_dispatcher_id: Option<DispatcherId>,
        is_new_changefeed: bool,
        /// Only for redo, and only to the maintainer's own node.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        table_trigger_redo_dispatcher_id: Option<DispatcherId>,
        maintainer_epoch: Epoch,
    },
    MaintainerPostBootstrapRequest {
        cf: ChangefeedId,
        table_trigger_event_dispatcher_id: DispatcherId,
        schemas: Vec<SchemaInfo>,
        /// The schemas for the redo table trigger (redo only).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        redo_schemas: Vec<SchemaInfo>,
        maintainer_epoch: Epoch,
    },
    MaintainerCloseRequest {
        cf: ChangefeedId,
        removed: bool,
        maintainer_epoch: Epoch,
    },
    // maintainer -> dispatcher manager (heartbeat collector)
    ScheduleDispatcherRequest {
        cf: ChangefeedId,
        req: ScheduleDispatcherRequest,
    },
    MergeDispatcherRequest {
        cf: ChangefeedId,
        req: MergeDispatcherRequest,
    },
    HeartBeatResponse {
        cf: ChangefeedId,
        statuses: Vec<DispatcherStatus>,
        maintainer_epoch: Epoch,
        #[serde(default, skip_serializing_if = "Mode::is_default")]
        mode: Mode,
    },
    // dispatcher manager -> maintainer
    MaintainerBootstrapResponse {
        cf: ChangefeedId,
        spans: Vec<BootstrapTableSpan>,
        checkpoint_ts: Ts,
        /// The redo table trigger's start ts on its node; 0 elsewhere and without redo.
        #[serde(default, skip_serializing_if = "is_zero")]
        redo_checkpoint_ts: Ts,
        operators: Vec<ScheduleDispatcherRequest>,
        merge_operators: Vec<MergeDispatcherRequest>,
        err: Option<RunningError>,
        maintainer_epoch: Epoch,
    },
    MaintainerPostBootstrapResponse {
        cf: ChangefeedId,
        table_trigger_event_dispatcher_id: DispatcherId,
        err: Option<RunningError>,
        maintainer_epoch: Epoch,
    },
    MaintainerCloseResponse {
        cf: ChangefeedId,
        success: bool,
        maintainer_epoch: Epoch,
    },
    /// No epoch field, as in TiCDC.
    HeartBeatRequest {
        cf: ChangefeedId,
        watermark: Watermark,
        /// `redoWatermark`: `None` when the changefeed has no redo (Go always sends one;
        /// nothing reads it then).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        redo_watermark: Option<Watermark>,
        statuses: Vec<TableSpanStatus>,
        complete_status: bool,
        err: Option<RunningError>,
    },
    /// No epoch field, as in TiCDC.
    BlockStatusRequest {
        cf: ChangefeedId,
        statuses: Vec<TableSpanBlockStatus>,
        #[serde(default, skip_serializing_if = "Mode::is_default")]
        mode: Mode,
    },
    // redo (consistent) messages, `heartbeat.proto:84-108`
    /// Maintainer -> its own node's dispatcher manager: the unflushed redo meta.
    RedoMetaMessage {
        cf: ChangefeedId,
        checkpoint_ts: Ts,
        resolved_ts: Ts,
        maintainer_epoch: Epoch,
    },
    /// Redo-trigger manager -> maintainer: the flushed redo resolved ts. No epoch field,
    /// as in TiCDC.
    RedoResolvedTsProgressMessage {
        cf: ChangefeedId,
        resolved_ts: Ts,
    },
    /// Maintainer -> every dispatcher manager: the redo resolved ts event dispatchers may
    /// write up to.
    RedoResolvedTsForwardMessage {
        cf: ChangefeedId,
        resolved_ts: Ts,
        maintainer_epoch: Epoch,
    },
}

/// The message-center stream a message travels on. TiCDC's message center keeps two gRPC
/// streams per pair of captures, "event" and "command" (`pkg/messaging/remote_target.go:37-41`,
/// `:209-211`), each with its own send queue (`:65-67`, `:519-523`) and its own receive
/// channel and dispatch goroutine on the receiving capture
/// (`pkg/messaging/message_center.go:96-98`, `:139-147`); local messages go to the same two
/// channels (`pkg/messaging/local_target.go:42-60`). So order holds per (sender, receiver,
/// stream) only. Every scheduling message is sent with `SendCommand`; the event stream carries
/// the event service's data (`pkg/eventservice/event_broker.go:963`) and the log coordinator's
/// messages (`logservice/coordinator/coordinator.go:135-186`), which the model does not have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Stream {
    Event,
    Command,
}

/// Where on the destination node a message is handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Topic {
    Coordinator,
    MaintainerManager,
    DispatcherManagerManager,
    HeartbeatCollector,
}

impl Message {
    pub fn name(&self) -> &'static str {
        use Message::*;
        match self {
            AddMaintainerRequest { .. } => "AddMaintainerRequest",
            RemoveMaintainerRequest { .. } => "RemoveMaintainerRequest",
            CheckpointTsMessage { .. } => "CheckpointTsMessage",
            MaintainerHeartbeat { .. } => "MaintainerHeartbeat",
            MaintainerBootstrapRequest { .. } => "MaintainerBootstrapRequest",
            MaintainerPostBootstrapRequest { .. } => "MaintainerPostBootstrapRequest",
            MaintainerCloseRequest { .. } => "MaintainerCloseRequest",
            ScheduleDispatcherRequest { .. } => "ScheduleDispatcherRequest",
            MergeDispatcherRequest { .. } => "MergeDispatcherRequest",
            HeartBeatResponse { .. } => "HeartBeatResponse",
            MaintainerBootstrapResponse { .. } => "MaintainerBootstrapResponse",
            MaintainerPostBootstrapResponse { .. } => "MaintainerPostBootstrapResponse",
            MaintainerCloseResponse { .. } => "MaintainerCloseResponse",
            HeartBeatRequest { .. } => "HeartBeatRequest",
            BlockStatusRequest { .. } => "BlockStatusRequest",
            RedoMetaMessage { .. } => "RedoMetaMessage",
            RedoResolvedTsProgressMessage { .. } => "RedoResolvedTsProgressMessage",
            RedoResolvedTsForwardMessage { .. } => "RedoResolvedTsForwardMessage",
        }
    }

    pub fn topic(&self) -> Topic {
        use Message::*;
        match self {
            MaintainerHeartbeat { .. } => Topic::Coordinator,
            AddMaintainerRequest { .. } | RemoveMaintainerRequest { .. } | CheckpointTsMessage { .. } => {
                Topic::MaintainerManager
            }
            MaintainerBootstrapResponse { .. }
            | MaintainerPostBootstrapResponse { .. }
            | MaintainerCloseResponse { .. }
            | HeartBeatRequest { .. }
            | BlockStatusRequest { .. } => Topic::MaintainerManager,
            // `maintainer_manager.go:120-122`.
            RedoResolvedTsProgressMessage { .. } => Topic::MaintainerManager,
            MaintainerBootstrapRequest { .. }
            | MaintainerPostBootstrapRequest { .. }
            | MaintainerCloseRequest { .. } => Topic::DispatcherManagerManager,
            ScheduleDispatcherRequest { .. } | MergeDispatcherRequest { .. } | HeartBeatResponse { .. } => {
                Topic::HeartbeatCollector
            }
            // `heartbeat_collector.go:279-288`.
            RedoMetaMessage { .. } | RedoResolvedTsForwardMessage { .. } => Topic::HeartbeatCollector,
        }
    }

    /// The stream this message travels on (see [`Stream`]); Go's send site for each kind.
    pub fn stream(&self) -> Stream {
        use Message::*;
        match self {
            // `coordinator/operator/operator_controller.go:101` (the add/remove maintainer
            // operators' `Schedule`); removals also `coordinator/controller.go:647,791,878`.
            AddMaintainerRequest { .. } | RemoveMaintainerRequest { .. } => Stream::Command,
            // `coordinator/coordinator.go:373` -> `sendMessages`, `:467`.
            CheckpointTsMessage { .. } => Stream::Command,
            // `maintainer/maintainer_manager.go:162-164`.
            MaintainerHeartbeat { .. } => Stream::Command,
            // The maintainer's `sendMessages`, `maintainer/maintainer.go:882-884` (bootstrap,
            // post-bootstrap and close requests, the barrier's `HeartBeatResponse`s).
            MaintainerBootstrapRequest { .. }
            | MaintainerPostBootstrapRequest { .. }
            | MaintainerCloseRequest { .. }
            | HeartBeatResponse { .. } => Stream::Command,
            // Operators' `Schedule`, `maintainer/operator/operator_controller.go:183`; a remove
            // for an unknown working span, `maintainer/maintainer_controller.go:248`.
            ScheduleDispatcherRequest { .. } | MergeDispatcherRequest { .. } => Stream::Command,
            // The orchestrator's `sendResponse`,
            // `downstreamadapter/dispatcherorchestrator/dispatcher_orchestrator.go:811-813`.
            MaintainerBootstrapResponse { .. }
            | MaintainerPostBootstrapResponse { .. }
            | MaintainerCloseResponse { .. } => Stream::Command,
            // `downstreamadapter/dispatchermanager/heartbeat_collector.go:221` (heartbeats)
            // and `:245` (block statuses).
            HeartBeatRequest { .. } | BlockStatusRequest { .. } => Stream::Command,
            // `maintainer.go:615, 681` and `dispatcher_manager_redo.go:396`.
            RedoMetaMessage { .. } | RedoResolvedTsProgressMessage { .. } | RedoResolvedTsForwardMessage { .. } => {
                Stream::Command
            }
        }
    }

    /// The maintainer epoch stamped on a maintainer control message, if any.
    pub fn maintainer_epoch(&self) -> Option<Epoch> {
        use Message::*;
        match self {
            MaintainerBootstrapRequest { maintainer_epoch, .. }
            | MaintainerPostBootstrapRequest { maintainer_epoch, .. }
            | MaintainerCloseRequest { maintainer_epoch, .. }
            | HeartBeatResponse { maintainer_epoch, .. }
            | RedoMetaMessage { maintainer_epoch, .. }
            | RedoResolvedTsForwardMessage { maintainer_epoch, .. } => Some(*maintainer_epoch),
            ScheduleDispatcherRequest { req, .. } => Some(req.maintainer_epoch),
            MergeDispatcherRequest { req, .. } => Some(req.maintainer_epoch),
            _ => None,
        }
    }
}

fn is_zero(ts: &Ts) -> bool {
    *ts == 0
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    pub from: NodeId,
    pub to: NodeId,
    pub msg: Message,
}
