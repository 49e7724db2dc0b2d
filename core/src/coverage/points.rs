//! Every coverage point, in one list: `Variant = "group.name", reach, "what passing it means";`.
//! A point that campaigns need not reach says why (`May("...")`).

use super::Decl;
#[allow(unused_imports)]
use super::Reach::{May, Must};

macro_rules! points {
    ($($id:ident = $name:literal, $reach:expr, $desc:literal;)*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(u16)]
        pub enum Point { $($id),* }
        impl Point {
            pub const ALL: &'static [Point] = &[$(Point::$id),*];
        }
        pub const POINTS: &[Decl] = &[$(Decl { point: Point::$id, name: $name, reach: $reach, description: $desc }),*];
    };
}

points! {
    // ------------------------------------------------------------ maintainer: messages
    MaintainerBootstrapResponse = "maintainer.bootstrap_response", Must, "a bootstrap response reached the maintainer";
    // ------------------------------------------------------------ maintainer: end

    // ------------------------------------------------------------ dispatcher side
    DmCreateDispatcher = "dm.create_dispatcher", Must, "a dispatcher manager created a table dispatcher";
    DmCreateExisting = "dm.create_existing", Must, "a Create for a dispatcher that already exists was ignored";
    DmCreateDuplicateJournaled = "dm.create_duplicate_journaled", Must, "a Create already journaled by the current owner was ignored (a resend)";
    DmCreateWritePathClosed = "dm.create_write_path_closed", Must, "a Create on a closed write path stayed journaled, no dispatcher created";
    DmCreatePaused = "dm.create_paused", Must, "failpoint BlockCreateDispatcher paused a Create, holding the fence lock";
    DmCreatePausedResumed = "dm.create_paused_resumed", Must, "paused Creates completed once BlockCreateDispatcher was off";
    DmCreateRecoveryLifted = "dm.create_recovery_lifted", Must, "a table dispatcher's start ts was lifted by its ddl_ts row";
    DmScheduleStale = "dm.schedule_stale", Must, "a schedule request from a non-owner or another epoch was dropped";
    DmScheduleOldJournalDropped = "dm.schedule_old_journal_dropped", Must, "a journaled operator of an older owner was dropped by a new schedule request";
    DmRemoveDispatcher = "dm.remove_dispatcher", Must, "a dispatcher started its removal";
    DmRemoveAlreadyRemoving = "dm.remove_already_removing", Must, "a Remove for a dispatcher already being removed was ignored";
    DmRemoveUnknown = "dm.remove_unknown", Must, "a Remove for an unknown dispatcher was answered Stopped at once";
    DmRemoveAbandonsBlockedWrite = "dm.remove_abandons_blocked_write", Must, "a removed dispatcher abandoned its block event write held by BlockOrWaitBeforeWrite";
    DmFenceWait = "dm.fence_wait", Must, "a control message waited for the manager's fence lock";
    DmHeartbeatResponseStale = "dm.heartbeat_response_stale", Must, "a heartbeat response from a non-owner or another epoch was dropped";
    DmHeartbeatResponse = "dm.heartbeat_response", Must, "a heartbeat response of the owner was handed to its dispatchers";
    DmBootstrapStale = "dm.bootstrap_stale", Must, "a bootstrap that may not update the owner was dropped";
    DmBootstrapRejectNoTrigger = "dm.bootstrap_reject_no_trigger", Must, "a bootstrap without a trigger ID was rejected by a manager that has a trigger";
    DmBootstrapRejectTriggerMismatch = "dm.bootstrap_reject_trigger_mismatch", Must, "a bootstrap naming another trigger than the manager's was rejected";
    DmBootstrapReplaceTrigger = "dm.bootstrap_replace_trigger", May("only with bug replace-mismatched-trigger"), "a bootstrap replaced the manager's trigger with its own";
    DmBootstrapDropRemovedTrigger = "dm.bootstrap_drop_removed_trigger", May("only with candidate fix drop-bootstrap-of-removed-trigger, which no standard scenario applies"), "a bootstrap that would recreate a removed trigger was dropped";
    DmBootstrapOwnerChanged = "dm.bootstrap_owner_changed", Must, "a bootstrap switched the manager to a new owner or epoch";
    DmBootstrapTriggerDelayed = "dm.bootstrap_trigger_delayed", Must, "a reused manager's trigger creation took a drawn time, holding the fence lock";
    DmBootstrapTriggerDelayedDone = "dm.bootstrap_trigger_delayed_done", Must, "a delayed trigger creation returned and the bootstrap finished";
    DmTriggerCreated = "dm.trigger_created", Must, "a table trigger event dispatcher was created";
    DmTriggerWritePathClosed = "dm.trigger_write_path_closed", Must, "a trigger could not be created on a closed write path (clean stop, no response)";
    DmTriggerWritePathClosedError = "dm.trigger_write_path_closed_error", May("only with bug write-path-closed-is-error"), "a trigger creation on a closed write path answered the bootstrap with an error";
    DmBootstrapStaleRemoveReported = "dm.bootstrap_stale_remove_reported", Must, "a bootstrap response included an older owner's Remove of a reported dispatcher";
    DmPostBootstrapStale = "dm.post_bootstrap_stale", Must, "a post-bootstrap request from a non-owner or another epoch was dropped";
    DmPostBootstrapNoTrigger = "dm.post_bootstrap_no_trigger", Must, "a post-bootstrap request found no trigger and was answered with an error";
    DmPostBootstrapTriggerMismatch = "dm.post_bootstrap_trigger_mismatch", Must, "a post-bootstrap request named another trigger and was answered with an error";
    DmPostBootstrapWritePathClosed = "dm.post_bootstrap_write_path_closed", Must, "a post-bootstrap request found the write path closed (clean stop)";
    DmPostBootstrapInline = "dm.post_bootstrap_inline", Must, "a post-bootstrap request was answered within its step";
    DmPostBootstrapDelayed = "dm.post_bootstrap_delayed", Must, "a post-bootstrap handler waited for the schema store, holding the fence lock";
    DmPostBootstrapDelayedDone = "dm.post_bootstrap_delayed_done", Must, "a delayed post-bootstrap handler answered";
    DmPostBootstrapFenced = "dm.post_bootstrap_fenced", Must, "a delayed post-bootstrap handler returned on a fenced orchestrator and fenced its manager";
    DmPostBootstrapLeakLock = "dm.post_bootstrap_leak_lock", May("only with bug leak-fence-lock-when-fenced"), "a fenced post-bootstrap handler returned without releasing the fence lock";
    DmTriggerRegistered = "dm.trigger_registered", Must, "a table trigger registered with the event collector";
    DmLocalFence = "dm.local_fence", Must, "a manager was local-fenced";
    DmCloseStaleOwner = "dm.close_stale_owner", Must, "a close request of a non-owner was answered success without closing";
    DmCloseOlderOwner = "dm.close_older_owner", May("only with candidate fix close-older-owner-manager, which no standard scenario applies"), "a newer epoch's close closed a manager of an older owner";
    DmCloseStarted = "dm.close_started", Must, "a close request started the asynchronous close";
    DmClosePending = "dm.close_pending", Must, "a close request found the close still running and answered false";
    DmClosed = "dm.closed", Must, "a close request found the close finished; the manager is deleted";
    DmCloseFinishedAsync = "dm.close_finished_async", Must, "the asynchronous close finished (nothing in flight)";
    DmStopWritePath = "dm.stop_write_path", Must, "the write path was closed and every dispatcher dropped";
    DmMergeStale = "dm.merge_stale", Must, "a merge request from a non-owner or another epoch was dropped";
    DmMergeOutdated = "dm.merge_outdated", Must, "a merge request whose merged dispatcher exists was treated as outdated";
    DmMergeSourceInvalid = "dm.merge_source_invalid", Must, "a merge was refused: a source missing, not Working, removing or not adjacent";
    DmMergeStarted = "dm.merge_started", Must, "a merged dispatcher was created in Preparing and its sources set WaitingMerge";
    DmMergeAborted = "dm.merge_aborted", Must, "a merge check aborted the merge (a side missing or removing)";
    DmMergeReady = "dm.merge_ready", Must, "a merged dispatcher turned MergeReady";
    DmMergeWaitSources = "dm.merge_wait_sources", Must, "a merge check waited for a source that cannot close yet";
    DmMergeCommitted = "dm.merge_committed", Must, "a merge committed: the merged dispatcher Initializing, the sources removed";
    DmMergePendingBlockStart = "dm.merge_pending_block_start", Must, "a merged dispatcher's start ts came from its sources' shared pending block event";
    DmMergePendingDdlRestart = "dm.merge_pending_ddl_restart", Must, "a merged dispatcher restarts before its sources' pending DDL, skipping its DMLs";
    DmMergeIgnorePendingBlock = "dm.merge_ignore_pending_block", May("only with bug ignore-pending-block-start-ts"), "a merge took the sources' minimum checkpoint ignoring their pending block event";
    DmMergeRecoveryLifted = "dm.merge_recovery_lifted", Must, "a merged dispatcher's start ts was lifted by its ddl_ts row";
    DmFeedCoalesceResolved = "dm.feed_coalesce_resolved", Must, "a blocked dispatcher's queued resolved ts was replaced by a newer one";
    DmBlockWriteHeld = "dm.block_write_held", Must, "failpoint BlockOrWaitBeforeWrite held a barrier write";
    DmBlockWriteReleased = "dm.block_write_released", Must, "a held barrier write went to the sink once the failpoint was off";
    DmWriteDdlBarrier = "dm.write_ddl_barrier", Must, "a DDL was written as the barrier's chosen writer";
    DmWriteDdlSelf = "dm.write_ddl_self", Must, "a DDL was written by its dispatcher alone (non-blocking path)";
    DmHeartbeatErrorOnly = "dm.heartbeat_error_only", Must, "the error collector reported an error before the heartbeat task ran";
    DmHeartbeatDispatcherStopped = "dm.heartbeat_dispatcher_stopped", Must, "a removed dispatcher closed and was reported Stopped";
    DmHeartbeatTriggerRemoved = "dm.heartbeat_trigger_removed", Must, "the table trigger closed and left the manager";
    DmHeartbeatInsideStatusBatch = "dm.heartbeat_inside_status_batch", Must, "a heartbeat aggregate ran while a status batch was open";
    DmErrorReported = "dm.error_reported", Must, "the manager's first error was reported (first time or resend)";
    DmBlockStatusResent = "dm.block_status_resent", Must, "unacknowledged block statuses were resent";
    DmBlockStatusBatchDropped = "dm.block_status_batch_dropped", Must, "a block-status batch was dropped because the manager closed";
    DmStatusBatchDropped = "dm.status_batch_dropped", Must, "a status-change batch was dropped because the manager closed";
    DmStatusClaimsMore = "dm.status_claims_more", May("only without candidate fix fresh-status-watermark, which every standard scenario applies"), "a status heartbeat claimed a checkpoint above a dispatcher it covers";
    DispatcherWorking = "dispatcher.working", Must, "a dispatcher turned from Initializing to Working";
    DispatcherDmlStale = "dispatcher.dml_stale", May("the simulated event service feeds a dispatcher only events above its fed ts, never below its resolved or start ts"), "a row below the resolved ts was dropped";
    DispatcherDmlSkippedAtStart = "dispatcher.dml_skipped_at_start", May("no simulated row shares its commit ts with a DDL (every upstream event takes its own TSO)"), "a row at start ts + 1 was dropped (skipDMLAsStartTs)";
    DispatcherDdlBeforeStartSkipped = "dispatcher.ddl_before_start_skipped", May("the simulated event service feeds a dispatcher only events above its fed ts, never below its resolved or start ts"), "a DDL at or below the start ts was dropped";
    DispatcherFlushBeforeDdl = "dispatcher.flush_before_ddl", Must, "a DDL waited for the prior rows to be flushed";
    DispatcherTriggerNonBlockingDdl = "dispatcher.trigger_non_blocking_ddl", Must, "the trigger wrote a non-blocking DDL before reporting it";
    DispatcherTriggerWaitsAcks = "dispatcher.trigger_waits_acks", Must, "the trigger held a DB/All DDL while non-blocking reports were unacknowledged";
    DispatcherSelfWrittenDdl = "dispatcher.self_written_ddl", Must, "a single-table DDL on a whole-table span was written by its dispatcher alone";
    DispatcherDdlWaiting = "dispatcher.ddl_waiting", Must, "a blocking DDL was reported WAITING";
    DispatcherSyncPointStale = "dispatcher.sync_point_stale", May("the simulated event service feeds a dispatcher only events above its fed ts, never below its resolved or start ts"), "a syncpoint below the resolved ts was dropped";
    DispatcherFlushBeforeSyncPoint = "dispatcher.flush_before_sync_point", Must, "a syncpoint waited for the prior rows to be flushed";
    DispatcherTriggerSyncPointWaitsAcks = "dispatcher.trigger_sync_point_waits_acks", Must, "the trigger held a syncpoint while non-blocking reports were unacknowledged";
    DispatcherSyncPointWaiting = "dispatcher.sync_point_waiting", Must, "a syncpoint was reported WAITING";
    DispatcherAddTableBlocker = "dispatcher.add_table_blocker", Must, "the trigger capped its checkpoint below a table-adding DDL until the ACK";
    DispatcherBlockWrittenDone = "dispatcher.block_written_done", Must, "a barrier write became durable and DONE was reported";
    DispatcherAwaitedStatusReplayed = "dispatcher.awaited_status_replayed", Must, "a status that waited behind a barrier write was handled after DONE";
    DispatcherNonBlockingReported = "dispatcher.non_blocking_reported", Must, "a written non-blocking DDL that changes tables was reported (stage NONE)";
    DispatcherStatusAwaitsWrite = "dispatcher.status_awaits_write", Must, "a status arriving during a barrier write waited for it";
    DispatcherActionOutdated = "dispatcher.action_outdated", Must, "an action for an earlier event was answered DONE";
    DispatcherActionFuture = "dispatcher.action_future", Must, "an action for a future event was ignored";
    DispatcherActionWrite = "dispatcher.action_write", Must, "a pending event got the Write action";
    DispatcherActionPass = "dispatcher.action_pass", Must, "a pending event got the Pass action and reported DONE";
    DispatcherAckBlock = "dispatcher.ack_block", Must, "an ACK stopped the resend of a pending block event";
    DispatcherAckNonBlocking = "dispatcher.ack_non_blocking", Must, "an ACK finished a non-blocking report (and released its add-table blocker)";
    DispatcherResendWaiting = "dispatcher.resend_waiting", Must, "a WAITING status was resent after 5 s without ACK";
    DispatcherResendDeferredIgnored = "dispatcher.resend_deferred_ignored", Must, "a deferred fast resend after an ignore went out";
    DispatcherResendNonBlocking = "dispatcher.resend_non_blocking", Must, "a non-blocking report was resent after 5 s without ACK";
    DispatcherIgnoredResend = "dispatcher.ignored_resend", Must, "an ignored-status notice triggered a fast WAITING resend";
    DispatcherIgnoredDeferred = "dispatcher.ignored_deferred", Must, "an ignored-status notice inside the resend window deferred the resend";
    DispatcherIgnoredMismatch = "dispatcher.ignored_mismatch", Must, "an ignored-status notice did not match the pending event";
    OrchDropFenced = "orch.drop_fenced", Must, "a message reached a fenced or closing orchestrator and was dropped";
    OrchQueuedWhileCreating = "orch.queued_while_creating", Must, "a control message waited behind a delayed manager creation";
    OrchDropWhileCreating = "orch.drop_while_creating", Must, "a message was dropped while its manager was being created";
    OrchIgnoreClosedGeneration = "orch.ignore_closed_generation", Must, "a bootstrap of an already closed generation was ignored";
    OrchManagerDelayed = "orch.manager_delayed", Must, "failpoint NewDispatcherManagerDelay held a manager creation";
    OrchCreateManager = "orch.create_manager", Must, "a bootstrap created a dispatcher manager";
    OrchReuseManager = "orch.reuse_manager", Must, "a bootstrap reached an existing dispatcher manager";
    OrchCloseWithoutManager = "orch.close_without_manager", Must, "a close request without a manager was answered success and tombstoned";
    OrchManagerDeleted = "orch.manager_deleted", Must, "a closed manager was deleted and its generation tombstoned";
    OrchDelayedCreationFenced = "orch.delayed_creation_fenced", Must, "a delayed manager creation returned on a fenced or closing orchestrator and was dropped";
    OrchDelayedCreationDone = "orch.delayed_creation_done", Must, "a delayed manager creation returned and its bootstrap went on";
    OrchLocalFence = "orch.local_fence", Must, "the orchestrator local-fenced its managers";
    OrchCloseWaitsInFlight = "orch.close_waits_in_flight", Must, "the orchestrator's close waited for an admitted handler";
    OrchClosed = "orch.closed", Must, "the orchestrator closed every manager";
    OrchQueueReplaced = "orch.queue_replaced", Must, "a waiting control message was replaced by a newer one of its kind";
    // ------------------------------------------------------------ dispatcher side: end

    // ------------------------------------------------------------ coordinator and sink
    CoordDiscovering = "coord.discovering", Must, "a new coordinator placed nothing while waiting for every capture's report";
    CoordResendAdd = "coord.resend_add", Must, "an add maintainer request was resent";
    CoordResendStop = "coord.resend_stop", Must, "a cascade remove (stop) was resent";
    CoordResendMoveRemove = "coord.resend_move_remove", Must, "a move's remove request to the origin was resent";
    CoordAddMaintainer = "coord.add_maintainer", Must, "a new maintainer generation was placed with a bumped epoch";
    CoordAddMoveDestination = "coord.add_move_destination", Must, "a move added the maintainer on its destination";
    CoordDiscoverMaintainer = "coord.discover_maintainer", Must, "a new coordinator adopted a running maintainer";
    CoordStatusOtherGeneration = "coord.status_other_generation", Must, "a status of another node or generation was ignored";
    CoordErrorIgnored = "coord.error_ignored", Must, "a retryable error was ignored (bootstrap done flipped or checkpoint advanced)";
    CoordChangefeedStopped = "coord.changefeed_stopped", Must, "a stopping maintainer reported removed";
    CoordMoveReplacedByStop = "coord.move_replaced_by_stop", Must, "an error during a move replaced the move by a stop";
    CoordCheckpointAdvanced = "coord.checkpoint_advanced", Must, "the persisted checkpoint advanced";
    CoordCheckpointHeld = "coord.checkpoint_held", Must, "a checkpoint advance was held while a failed state change waits for its stop";
    CoordChangefeedFailed = "coord.changefeed_failed", Must, "a fast-fail error failed the changefeed";
    CoordRetryableError = "coord.retryable_error", Must, "a retryable error stopped the changefeed for a restart after backoff";
    CoordStopBlocked = "coord.stop_blocked", Must, "failpoint BlockBeforeStopChangefeed held a failed changefeed's stop";
    CoordStopChangefeed = "coord.stop_changefeed", Must, "a failed or paused changefeed's maintainer was stopped";
    CoordNodeLost = "coord.node_lost", Must, "a maintainer's node was lost";
    CoordMoveOriginLost = "coord.move_origin_lost", Must, "a move's origin was lost; the destination is added at once";
    CoordPause = "coord.pause", Must, "a changefeed was paused";
    CoordResume = "coord.resume", Must, "a paused changefeed was resumed";
    CoordMoveMaintainer = "coord.move_maintainer", Must, "a maintainer move started";
    CoordMoveRefused = "coord.move_refused", Must, "a maintainer move was refused (an operator in flight, or the same node)";
    MmIgnoreNonCurrentCoordinator = "mm.ignore_non_current_coordinator", Must, "an add/remove maintainer request of a non-current coordinator was ignored";
    MmIgnoreZeroCheckpoint = "mm.ignore_zero_checkpoint", May("the coordinator never sends a zero checkpoint; unit tests only"), "an add maintainer request with a zero checkpoint was dropped";
    MmRejectAdd = "mm.reject_add", Must, "an add maintainer request was rejected (maintainer not stopped, or not a newer epoch)";
    MmAddMaintainer = "mm.add_maintainer", Must, "a maintainer was created";
    MmReplaceStopped = "mm.replace_stopped", Must, "a stopped maintainer was replaced by a newer epoch's";
    MmRemove = "mm.remove", Must, "a remove maintainer request was applied";
    MmRemoveStaleEpoch = "mm.remove_stale_epoch", Must, "a remove maintainer request of another epoch was ignored";
    MmRemoveUnknown = "mm.remove_unknown", Must, "a non-cascade remove of an unknown maintainer was answered removed";
    MmRemoveUnknownCascade = "mm.remove_unknown_cascade", Must, "a cascade remove of an unknown maintainer was ignored";
    MmRouteUnknownChangefeed = "mm.route_unknown_changefeed", Must, "a dispatcher-side message for a changefeed without a maintainer here was dropped";
    SinkUnknownOp = "sink.unknown_op", May("the simulator routes each storage result once to the sink instance that issued it and drops a killed generation's results"), "a storage result matched no write in flight (issued before a restart)";
    SinkCancelled = "sink.cancelled", Must, "a put completed after the sink's context was cancelled; no rename";
    SinkFailedOpen = "sink.failed_open", Must, "a write of an open writer failed";
    SinkFailedClosing = "sink.failed_closing", Must, "a write of a closing writer failed";
    SinkCloseCleanup = "sink.close_cleanup", Must, "closing a writer removed its temporary objects in flight";
    SinkDurableRows = "sink.durable_rows", Must, "a data file became durable";
    SinkDurableBlock = "sink.durable_block", Must, "a DDL schema file or syncpoint record became durable";
    SinkDurableDispatcherGone = "sink.durable_dispatcher_gone", Must, "a write became durable after its dispatcher left";
    SinkErrorEscalated = "sink.error_escalated", Must, "a write failure became a changefeed error";
    SinkClosingErrorEscalated = "sink.closing_error_escalated", May("only with bug escalate-closing-writer-error"), "a closing writer's failure became a changefeed error";
    SinkFailedDdlDropsBlocker = "sink.failed_ddl_drops_blocker", Must, "a failed non-blocking DDL write dropped its add-table blocker";
    SinkDdlTsRow = "sink.ddl_ts_row", Must, "a dispatcher's recovery found its table's ddl_ts row";
    SinkDdlTsSyncPointRow = "sink.ddl_ts_sync_point_row", Must, "the syncpoint row won over the table's ddl_ts row";
    SinkDdlTsUnfinishedDdl = "sink.ddl_ts_unfinished_ddl", Must, "an unfinished DDL row restarts before the DDL without its DMLs";
    SinkDdlTsUnfinishedSyncPoint = "sink.ddl_ts_unfinished_sync_point", Must, "an unfinished syncpoint row restarts at the syncpoint, replaying it";
    SinkDdlTsStartAhead = "sink.ddl_ts_start_ahead", Must, "the given start ts was ahead of the ddl_ts row and stood";
    SyncPointWriteBarrier = "syncpoint.write_barrier", Must, "the trigger wrote a syncpoint record as the barrier's writer";
    SyncPointSkippedAtStart = "syncpoint.skipped_at_start", Must, "a dispatcher skipped the syncpoint at its start ts (recovery says it was written)";
    SyncPointMergeRestart = "syncpoint.merge_restart", Must, "a merged dispatcher restarts at its sources' pending syncpoint";
    // ------------------------------------------------------------ coordinator and sink: end
}
