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
    MaintainerBootstrapResponseStaleEpoch = "maintainer.bootstrap_response_stale_epoch", Must, "a bootstrap response of another maintainer epoch is dropped";
    MaintainerBootstrapResponseError = "maintainer.bootstrap_response_error", Must, "a bootstrap response carries an error, which goes to the coordinator";
    MaintainerLateBootstrapResponse = "maintainer.late_bootstrap_response", Must, "a bootstrap response of a node that joined after the bootstrap stops its resends";
    MaintainerBootstrapResponseUntracked = "maintainer.bootstrap_response_untracked", May("needs a response from a node that left the bootstrapper set while it was in flight"), "a bootstrap response from a node the bootstrapper does not track is dropped";
    MaintainerPostBootstrapResponse = "maintainer.post_bootstrap_response", Must, "a post-bootstrap response reached the maintainer";
    MaintainerPostBootstrapErrorIgnoredWhileRemoving = "maintainer.post_bootstrap_error_ignored_removing", May("only with the candidate fix ignore-post-bootstrap-error-when-removing"), "a removing maintainer ignored a post-bootstrap error (candidate fix)";
    MaintainerPostBootstrapError = "maintainer.post_bootstrap_error", Must, "a post-bootstrap response carries an error (the trigger schema-store initialisation failed)";
    MaintainerPostBootstrapDone = "maintainer.post_bootstrap_done", Must, "the post-bootstrap handshake finished";
    MaintainerCloseResponse = "maintainer.close_response", Must, "a node answered the removing maintainer close request";
    MaintainerHeartbeatBeforeBootstrap = "maintainer.heartbeat_before_bootstrap", Must, "a heartbeat reached a maintainer not yet bootstrapped and is ignored";
    MaintainerHeartbeatError = "maintainer.heartbeat_error", Must, "a heartbeat carries a dispatcher manager error";
    MaintainerWatermarkAdvanced = "maintainer.watermark_advanced", Must, "a heartbeat watermark replaced the node stored one";
    MaintainerHeartbeatFirstHalf = "maintainer.heartbeat_first_half", Must, "the heartbeat watermark half ran; its statuses follow in a step of their own";
    MaintainerBlockStatusDropped = "maintainer.block_status_dropped", Must, "block statuses reached a maintainer not bootstrapped or removing and are dropped";
    MaintainerHeartbeatSecondHalf = "maintainer.heartbeat_second_half", Must, "a heartbeat statuses half ran as its own step";
    MaintainerStatusUnknownDispatcherRemoved = "maintainer.status_unknown_dispatcher", Must, "a Working status of a dispatcher with no span is answered with a Remove";
    MaintainerStatusWrongNode = "maintainer.status_wrong_node", Must, "a status from a node other than the span owner is ignored";
    MaintainerTerminalSpanCovered = "maintainer.terminal_span_covered", May("needs a merge source left over after a failover, reported stopped after the merged span replicates"), "a stopped span covered by a replicating merged span is removed";
    MaintainerStoppedWithoutOperator = "maintainer.stopped_without_operator", Must, "a span stopped with no operator is marked absent to be placed again";
    MaintainerBootstrapResend = "maintainer.bootstrap_resend", Must, "a bootstrapping maintainer resent its bootstrap request to a silent node";
    MaintainerLateBootstrapResend = "maintainer.late_bootstrap_resend", Must, "a working maintainer resent the bootstrap to a node that joined later";
    MaintainerPostBootstrapResend = "maintainer.post_bootstrap_send", Must, "the maintainer sent (or resent) its post-bootstrap request";
    MaintainerBarrierTick = "maintainer.barrier_tick", Must, "a working maintainer tick ran the barrier resend";
    MaintainerCloseSend = "maintainer.close_send", Must, "a cascade-removing maintainer sent (or resent) close requests";
    MaintainerOperatorFinished = "maintainer.operator_finished", Must, "the operator controller finalized a finished operator";
    MaintainerFinishedOnRemovedNode = "maintainer.finished_on_removed_node", May("only with the candidate fix finished-move-checks-node"), "a finished operator bound its span to a removed node; the candidate fix marks it absent";
    MaintainerFollowUpOperator = "maintainer.follow_up_operator", Must, "a finished operator admitted a follow-up (a split or merge continuation)";
    BalanceAlreadyBalanced = "balance.already_balanced", Must, "the balance scheduler found the default group balanced";
    BalanceMoved = "balance.moved", Must, "the balance scheduler admitted moves";
    BalanceSkippedBusy = "balance.skipped_busy", Must, "the balance scheduler skipped a round: an operator runs, a span is absent, or the failpoint holds it";
    BalanceSplitReadyByTraffic = "balance.split_ready_by_traffic", Must, "a whole-table span became split-ready by its traffic score";
    BalanceSplitReadyByRegions = "balance.split_ready_by_regions", Must, "a whole-table span became split-ready by its region count";
    BalanceSplitAdmitted = "balance.split_admitted", Must, "the balance scheduler admitted a Split of a whole-table span";
    SplitGroupNotReplicating = "split_group.not_replicating", Must, "a split group was skipped: some span not replicating";
    SplitGroupSplit = "split_group.split", Must, "the split-group scheduler admitted a Split with targets";
    SplitGroupMove = "split_group.move", Must, "the split-group scheduler admitted a Move of a span";
    SplitGroupMerge = "split_group.merge", Must, "the split-group scheduler admitted a Merge of adjacent spans";
    SplitGroupMergeRefused = "split_group.merge_refused", May("needs a merge candidate whose sources changed between the check and the admission"), "the split-group scheduler merge was refused by the operator controller";
    AdmitTwoStep = "admit.two_step", May("only with the bug nonatomic-operator-admission"), "an operator passed the check step of the historical two-step admission";
    AdmitAccepted = "admit.accepted", Must, "the operator controller admitted an operator";
    AdmitRefused = "admit.refused", Must, "the operator controller refused an operator (one exists for the span, or the span is gone)";
    MaintainerNodeRemovedBootstrapping = "maintainer.node_removed_bootstrapping", Must, "a node left while the maintainer was bootstrapping: the bootstrap stops waiting for it";
    MaintainerNodeRemoved = "maintainer.node_removed", Must, "a node left a bootstrapped maintainer: operators and spans handle it";
    MaintainerNodeAddedBootstrapping = "maintainer.node_added_bootstrapping", Must, "a node joined while the maintainer was bootstrapping: it is waited for too";
    MaintainerNodeAddedWorking = "maintainer.node_added_working", Must, "a node joined a working maintainer: it gets a late bootstrap";
    MaintainerNodeAddedRemoving = "maintainer.node_added_removing", Must, "a node joined a removing maintainer and is ignored";
    MaintainerRemoveBeforeBootstrap = "maintainer.remove_before_bootstrap", Must, "a move non-cascade remove overtook the bootstrap and is ignored until it finishes";
    MaintainerRemoveCascade = "maintainer.remove_cascade", Must, "the maintainer is removed with cascade (changefeed stopped or removed)";
    MaintainerRemoveNonCascade = "maintainer.remove_non_cascade", Must, "the maintainer is removed without cascade (a move): only its trigger is removed";
    MaintainerStopped = "maintainer.stopped", Must, "a removing maintainer stopped";
    CheckpointBeforeBootstrap = "checkpoint.before_bootstrap", Must, "the checkpoint goroutine ran before the bootstrap finished and computed nothing";
    CheckpointNoWatermark = "checkpoint.no_watermark", Must, "a node with tasks has sent no watermark yet, so no checkpoint is computed";
    CheckpointCappedByOperator = "checkpoint.capped_by_operator", Must, "a running operator's span held the checkpoint";
    CheckpointCappedByAbsentSpan = "checkpoint.capped_by_absent_span", Must, "a span not replicating held the checkpoint";
    CheckpointCappedByBarrier = "checkpoint.capped_by_barrier", Must, "a DDL that adds tables, still blocked, held the checkpoint";
    CheckpointAdvanced = "checkpoint.advanced", Must, "the committed checkpoint advanced";
    CheckpointHeld = "checkpoint.held", Must, "the computed checkpoint was not above the committed one (it never regresses)";
    ApiMoveTableBusy = "api.move_table_busy", Must, "a MoveTable API call found spans with running operators";
    ApiMoveTable = "api.move_table", Must, "the MoveTable API was called";
    ApiSplitTable = "api.split_table", Must, "the SplitTable API was called";
    ApiMergeTable = "api.merge_table", Must, "the MergeTable API was called";
    ApiMergeTableMovesFirst = "api.merge_table_moves_first", Must, "a MergeTable API call first moved a span next to its neighbour";
    BootstrapFinishStart = "bootstrap.finish", Must, "every bootstrap response arrived and FinishBootstrap ran";
    BootstrapNoTriggerStartTs = "bootstrap.no_trigger_start_ts", May("needs every response to lack a trigger start ts; the trigger node answers with one unless it failed to create the trigger"), "no response carried the trigger start ts: the bootstrap fails";
    BootstrapLoadTablesFailed = "bootstrap.load_tables_failed", Must, "loading the tables at the start ts failed (GC fast fail): the bootstrap retries later";
    BootstrapRestoreCreateDropped = "bootstrap.restore_create_dropped_table", Must, "a reported in-flight Create of a dropped table is skipped";
    BootstrapRestoreCreateAlreadyReported = "bootstrap.restore_create_reported", Must, "a reported in-flight Create whose dispatcher is reported too is not restored";
    BootstrapRestoreCreate = "bootstrap.restore_create", Must, "an in-flight Create is restored as an Add operator";
    BootstrapRestoreRemove = "bootstrap.restore_remove", Must, "an in-flight Remove with its dispatcher reported is restored";
    BootstrapRestoreRemoveOfMoveOrSplit = "bootstrap.restore_remove_move_split", Must, "a restored Remove of a Move or Split marks its span absent when done";
    BootstrapRestoreRemoveDroppedTable = "bootstrap.restore_remove_dropped_table", Must, "a restored Remove of a dropped table drops its task";
    BootstrapNewTableSplit = "bootstrap.new_table_split", Must, "a table new to the snapshot was split by region count at bootstrap";
    BootstrapAdoptWorkingTable = "bootstrap.adopt_working_table", Must, "a snapshot table with reported spans is adopted and its holes filled";
    BootstrapAddAbsentTable = "bootstrap.add_absent_table", Must, "a snapshot table with no reported span is added as absent spans";
    BootstrapRestoredRemoveWithoutTask = "bootstrap.restored_remove_without_task", Must, "a restored Remove of a dropped table is admitted without its task";
    BootstrapRestoredOperatorRefused = "bootstrap.restored_operator_refused", May("needs two restored operators for one dispatcher, which the nodes report only after an interrupted move"), "a restored operator was refused by the operator controller";
    BootstrapRestoreRemoveRepair = "bootstrap.restore_remove_repair", Must, "a restored Remove of a live table repairs its range when done";
    BootstrapRestoreRemoveTaskGone = "bootstrap.restore_remove_task_gone", Must, "a restored Remove of a dropped table removes its task when done";
    BootstrapRestoreMerge = "bootstrap.restore_merge", Must, "a journaled merge was restored as a merge operator";
    BootstrapRestoreMergeRefused = "bootstrap.restore_merge_refused", May("needs a journaled merge whose sources already have restored operators"), "a journaled merge could not be restored and was reconciled";
    BootstrapMergeJournalDroppedTable = "bootstrap.merge_journal_dropped_table", May("needs a journaled merge of a table dropped while the maintainer moved"), "a journaled merge of a table outside the snapshot is skipped";
    BootstrapMergeJournalConflict = "bootstrap.merge_journal_conflict", May("needs a merge journal and an in-flight schedule request for one of its dispatchers at once"), "a journaled merge conflicts with a restored operator and is reconciled";
    BootstrapMergeAlreadyFinished = "bootstrap.merge_already_finished", Must, "a journaled merge whose target is Working is taken as finished";
    BootstrapMergeSourcesMissing = "bootstrap.merge_sources_missing", May("needs a merge source lost with a node between the journal write and the bootstrap"), "a journaled merge lacks sources and is reconciled or dropped";
    BootstrapMergeJournalRestored = "bootstrap.merge_journal_restored", Must, "a journaled merge will be restored";
    BootstrapOverlapCleanup = "bootstrap.overlap_cleanup", Must, "an unexplained overlapping Working span got a cleanup Remove that repairs its range";
    BootstrapMergeReconcileCommitted = "bootstrap.merge_reconcile_committed", May("needs an unrestorable merge whose target had committed"), "an unrestorable merge with a committed target keeps the target and drops the sources";
    BootstrapMergeReconcileAbort = "bootstrap.merge_reconcile_abort", May("needs an unrestorable merge whose target had not committed"), "an unrestorable merge with an abortable target gets a cleanup Remove";
    BootstrapHoleFilled = "bootstrap.hole_filled", Must, "a key range no reported span covers was added as an absent span";
    BootstrapUnknownWorkingIgnored = "bootstrap.unknown_working_ignored", May("only with the bug ignore-unknown-working-table"), "a working table missing from the snapshot is ignored (the historical bug)";
    BootstrapUnknownWorkingAdopted = "bootstrap.unknown_working_adopted", Must, "a working table created after the start ts is adopted";
    BootstrapUnknownWorkingCleanup = "bootstrap.unknown_working_cleanup", May("needs a reported dispatcher of a table with no adding DDL after the start ts, which only a dropped-then-reported span gives"), "a working dispatcher of an unknown table got a cleanup Remove";
    BarrierRebuildWaiting = "barrier.rebuild_waiting", Must, "a bootstrap rebuilt a barrier event from a WAITING block state";
    BarrierRebuildWriting = "barrier.rebuild_writing", Must, "a bootstrap rebuilt a barrier event from a WRITING block state (its writer chosen)";
    BarrierRebuildDone = "barrier.rebuild_done", Must, "a bootstrap rebuilt a barrier event from a DONE block state";
    BarrierStatusUnknownDispatcher = "barrier.status_unknown_dispatcher", Must, "a block status of a dispatcher with no task is dropped";
    BarrierStatusNonOwner = "barrier.status_non_owner", Must, "a block status from a node that does not own the dispatcher is ignored";
    BarrierStatusNotReplicating = "barrier.status_not_replicating", Must, "a block status of a task not replicating is answered IgnoredBlockStatus";
    BarrierBlockStateReplaced = "barrier.block_state_replaced", Must, "a block status replaced the span stored block state";
    BarrierDone = "barrier.done", Must, "a DONE block status reached the barrier";
    BarrierNonBlocking = "barrier.non_blocking", Must, "a non-blocking event (written first, reported after) reached the barrier";
    BarrierNonBlockingNotHead = "barrier.non_blocking_not_head", Must, "a non-blocking schedule event waits: an earlier schedule event is pending (ordered by commit ts)";
    BarrierWaitingAfterSelected = "barrier.waiting_after_selected", Must, "a WAITING/WRITING status for an event whose writer is chosen is only ACKed";
    BarrierDbAllDiscardedPending = "barrier.db_all_discarded_pending", Must, "a trigger DB/All report was dropped while schedule events are pending";
    BarrierWaitingReported = "barrier.waiting_reported", Must, "a WAITING report was recorded for an event";
    BarrierWriterSelected = "barrier.writer_selected", Must, "every blocked dispatcher reported: a writer was chosen";
    BarrierWriterIsTrigger = "barrier.writer_is_trigger", Must, "the trigger was chosen as the writer (DB/All, or it reported)";
    BarrierDoneUntracked = "barrier.done_untracked", Must, "a DONE for an event the barrier does not track (finished, or never seen)";
    BarrierWriterDone = "barrier.writer_done", Must, "the writer reported DONE: the Pass is due at the next resend";
    BarrierWriterDoneNotHead = "barrier.writer_done_not_head", Must, "a writer DONE of a schedule event waits: an earlier schedule event is pending";
    BarrierFinishedCovered = "barrier.finished_covered", Must, "an event finished because its blocked tables have no tasks left (dropped)";
    BarrierFinishWaitsEmptyTable = "barrier.finish_waits_empty_table", Must, "an event waits for a Pass round because a blocked table has no tasks";
    BarrierFinished = "barrier.finished", Must, "every related dispatcher is DONE or past the event: it finished";
    BarrierPassAll = "barrier.pass_all", Must, "a Pass went to every node (All event)";
    BarrierPassDbCovered = "barrier.pass_db_covered", Must, "a DB event Pass found no tasks of the schema: covered";
    BarrierPassDb = "barrier.pass_db", Must, "a Pass went to the nodes of a schema (DB event)";
    BarrierPassNormal = "barrier.pass_normal", Must, "a Pass went to the blocked tables dispatchers (Normal event)";
    BarrierDropSchema = "barrier.drop_schema", Must, "a DDL dropped every table of a schema";
    BarrierDropTask = "barrier.drop_task", Must, "a DDL dropped a task (its operator told, a Remove admitted)";
    BarrierAddExisting = "barrier.add_existing_table", Must, "a DDL adding a table found it already scheduled (a replayed CREATE)";
    BarrierAddTable = "barrier.add_table", Must, "a DDL added a table as absent spans";
    BarrierResendQuiet = "barrier.resend_fanout_quiet", Must, "a DB/All Pass resend waited for DONE statuses to settle";
    BarrierResendSomeonePast = "barrier.resend_someone_past", Must, "an unselected event found a dispatcher already past it: Pass at once";
    BarrierResendTrySelect = "barrier.resend_try_select", Must, "an unselected event was checked again for a writer at resend";
    BarrierWriterReselected = "barrier.writer_reselected", Must, "the chosen writer vanished (split or merge): another was picked";
    BarrierResendWrite = "barrier.resend_write", Must, "the Write action was resent to the writer";
    BarrierResendPass = "barrier.resend_pass", Must, "the Pass action was (re)sent at resend";
    OpAddWorking = "op.add_working", Must, "an Add finished: its dispatcher reported Working";
    OpAddReportedRemoved = "op.add_reported_removed", Must, "an Add ended: its dispatcher reported Removed (the create failed)";
    OpAddDestRemoved = "op.add_dest_removed", Must, "an Add ended: its destination node left";
    OpAddTaskRemoved = "op.add_task_removed", Must, "an Add ended: a DDL removed its task";
    OpAddPostFinishAbsent = "op.add_post_finish_absent", Must, "an ended Add marked its span absent to be placed again";
    OpMoveToSameNode = "op.move_same_node", May("the schedulers and APIs never move a span to where it is; only the operator unit tests do"), "a Move to the node the span is on finished at once";
    OpMoveOriginStopped = "op.move_origin_stopped", Must, "a Move origin dispatcher stopped: the Move adds it on the destination";
    OpMoveAbortOriginStopped = "op.move_abort_origin_stopped", Must, "an aborted Move (destination gone) saw its origin stop: the span is absent";
    OpMoveDestWorking = "op.move_dest_working", Must, "a Move finished: its destination dispatcher reported Working";
    OpMoveDestLostRemovingOrigin = "op.move_dest_lost_removing_origin", Must, "a Move destination left while the origin was being removed: the Move aborts";
    OpMoveDestLostAdding = "op.move_dest_lost_adding", Must, "a Move destination left while the span was being added there: the span is absent";
    OpMoveOriginLost = "op.move_origin_lost", Must, "a Move origin left: the destination is added at once";
    OpMoveAbortedOriginLost = "op.move_aborted_origin_lost", May("needs the destination and then the origin of one Move to leave before the origin answers"), "an aborted Move lost its origin too: the span is absent";
    OpMoveTaskRemoved = "op.move_task_removed", Must, "a Move ended: a DDL removed its task";
    OpRemoveStopped = "op.remove_stopped", Must, "a Remove finished: its dispatcher reported Stopped or Removed";
    OpRemoveNodeLost = "op.remove_node_lost", Must, "a Remove finished: its node left";
    OpRemoveTaskRemoved = "op.remove_task_removed", Must, "a Remove ended: a DDL removed its task";
    OpRemovePostFinishAbsent = "op.remove_post_finish_absent", Must, "a finished Remove marked its span absent (a restored Move/Split remove)";
    OpRemovePostFinishRemoveTask = "op.remove_post_finish_remove_task", Must, "a finished Remove dropped its task";
    OpRemoveRepairHole = "op.remove_repair_hole", Must, "a finished cleanup Remove re-added a range nothing else covers";
    OpSplitOriginStopped = "op.split_origin_stopped", Must, "a Split finished: its origin dispatcher stopped";
    OpSplitOriginLost = "op.split_origin_lost", Must, "a Split ended: its origin node left";
    OpSplitTaskRemoved = "op.split_task_removed", Must, "a Split ended: a DDL removed its task";
    OpSplitReplaced = "op.split_replaced", Must, "a finished Split replaced its span by the pieces";
    OpSplitWithTargets = "op.split_with_targets", Must, "a finished Split placed its pieces on chosen targets (follow-up Adds)";
    OpMergeWorking = "op.merge_working", Must, "a Merge finished: the merged dispatcher reported Working";
    OpMergeOriginLost = "op.merge_origin_lost", Must, "a Merge aborted: its node left";
    OpMergeTaskRemoved = "op.merge_task_removed", Must, "a Merge aborted: a DDL removed a task";
    OpMergeCommitted = "op.merge_committed", Must, "a finished Merge replaced its sources by the merged span";
    OpOccupyNodeLost = "op.occupy_node_lost", Must, "an Occupy (merge source hold) ended: its node left";
    OcRefusedQuiescing = "oc.refused_quiescing", Must, "an operator was refused: the maintainer is quiescing (being removed)";
    OcRefusedExists = "oc.refused_exists", Must, "an operator was refused: one already runs for the span";
    OcRefusedNoTask = "oc.refused_no_task", Must, "an operator was refused: the span has no task";
    OcAdmittedEmptyOrigin = "oc.admitted_empty_origin", Must, "an admitted operator had an affected node of none (an empty-origin Move)";
    OcAdmittedDeadNode = "oc.admitted_dead_node", Must, "an admitted operator names a node already gone: it sees the loss at once";
    OcStatusFrozen = "oc.status_to_frozen_operator", Must, "a status for a frozen operator (maintainer quiescing) was not passed on";
    OcNodeRemovedQuiescing = "oc.node_removed_quiescing", Must, "a node loss was ignored by a quiescing operator controller";
    OcNodeRemovedSpanAbsent = "oc.node_removed_span_absent", Must, "a node loss marked a span without operator absent";
    OcTaskRemovedCancel = "oc.task_removed_cancel", Must, "a DDL drop cancelled a running operator (OnTaskRemoved)";
    OcRemoveReplicaSet = "oc.remove_replica_set", Must, "a Remove replaced whatever operator ran for a span";
    OcMergeTargetExists = "oc.merge_target_exists", May("needs a merged dispatcher ID that collides with a task; IDs are random 64-bit"), "a merge was refused: its merged ID exists";
    OcMergeOccupyFailed = "oc.merge_occupy_failed", Must, "a merge was refused: a source could not be occupied (an operator runs for it)";
    OcPollFrozen = "oc.poll_frozen", Must, "a frozen operator was skipped by the poll";
    OcPollNotDue = "oc.poll_not_due", Must, "the poll ended at an operator not yet due";
    OcExecuteBatchFull = "oc.execute_batch_full", Must, "an Execute pass stopped at its batch size";
    OcFollowUpAdmitted = "oc.follow_up_admitted", Must, "a finished operator follow-up was admitted in the same pass";
    SplitCheckSplitByTraffic = "split_check.split_by_traffic", Must, "a split group span is split again for its traffic (step 1)";
    SplitCheckSplitByRegions = "split_check.split_by_regions", Must, "a split group span is split again for its region count (step 1)";
    SplitCheckMergeWhole = "split_check.merge_whole", Must, "a split group is small and quiet enough to merge back into one span (step 2)";
    SplitCheckBalanceTraffic = "split_check.balance_traffic", Must, "a split group traffic balance moved spans (step 3)";
    SplitCheckMergeWaiting = "split_check.merge_waiting", Must, "a split group has too many spans and waits for the merge check threshold (step 4)";
    SplitCheckMergeAdjacent = "split_check.merge_adjacent", Must, "a split group merges adjacent spans (step 4)";
    SplitCheckMoveForMerge = "split_check.move_for_merge", Must, "a split group moves spans so that merges become possible (step 5)";
    BasicScheduleGroupCapped = "basic.group_capped", Must, "the basic scheduler stopped placing a split group: every node has its cap of scheduling spans";
    BasicScheduleAdd = "basic.add", Must, "the basic scheduler placed an absent span on a node";
    BasicScheduleBatchFull = "basic.batch_full", Must, "the basic scheduler filled its batch (add-table-batch-size)";
    SpanAddTableSplittable = "span.add_table_splittable", Must, "a new table was added with table-across-nodes on (split by region count if large)";
    SpanUpdateSchemaId = "span.update_schema_id", May("only RENAME TABLE across databases changes a table schema; the model has no such DDL yet"), "a table tasks moved to another schema";
    // ------------------------------------------------------------ maintainer: end

    // ------------------------------------------------------------ dispatcher side
    DmCreateDispatcher = "dm.create_dispatcher", Must, "a dispatcher manager created a table dispatcher";
    // ------------------------------------------------------------ dispatcher side: end

    // ------------------------------------------------------------ coordinator and sink
    // ------------------------------------------------------------ coordinator and sink: end
}
