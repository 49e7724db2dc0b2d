//! Glue between the world and the checkers (`crate::checkers`): which checker runs after
//! which step, and every violation found recorded once in the trace.

use super::*;
use crate::checkers;
use core_sched::effects::*;
use core_sched::types::*;

/// Heartbeats the maintainer handled in two halves (watermark stored, statuses later).
pub const INTERLEAVE_HEARTBEAT_HALVES: &str = "maintainer-heartbeat-halves";
/// Checkpoint rounds that ran between a heartbeat's two halves.
pub const INTERLEAVE_CHECKPOINT_IN_HEARTBEAT: &str = "checkpoint-between-heartbeat-halves";
/// Status batches the status collector sent.
pub const INTERLEAVE_STATUS_BATCHES: &str = "status-batches";
/// Status batches during whose 10 ms window the heartbeat collector aggregated.
pub const INTERLEAVE_AGGREGATE_IN_STATUS_BATCH: &str = "aggregate-inside-status-batch";
/// Aggregates that ran while a block-status batch was open.
pub const INTERLEAVE_AGGREGATE_IN_BLOCK_STATUS_BATCH: &str = "aggregate-inside-block-status-batch";

/// Hand one typed observation of node `n`'s step to the checkers that watch for it;
/// true when the placement checks must look again.
pub(crate) fn observe(wd: &mut World, n: NodeId, o: Observation) -> bool {
    let found = match o {
        Observation::DispatchersChanged => return true,
        Observation::RedoMetaFlushed { checkpoint_ts, resolved_ts, .. } => {
            let found = wd.redo_meta.on_meta(&wd.upstream, &wd.storage, wd.start_ts, checkpoint_ts, resolved_ts);
            for (inv, d) in found {
                wd.violate(inv, d);
            }
            None
        }
        Observation::BarrierEventDone { maintainer_epoch, commit_ts, sync_point, .. } => {
            wd.barrier_writers.done(maintainer_epoch, commit_ts, sync_point);
            None
        }
        Observation::BarrierWriterReselected { maintainer_epoch, commit_ts, sync_point, writer, .. } => {
            wd.barrier_writers.reselect(maintainer_epoch, commit_ts, sync_point, writer);
            None
        }
        Observation::BarrierWrite { maintainer_epoch, commit_ts, sync_point, dispatcher, .. } => {
            wd.barrier_writers.write(maintainer_epoch, commit_ts, sync_point, dispatcher)
        }
        Observation::NonOwnerBlockStatusAdmitted { dispatcher, from, owner, .. } => {
            Some(checkers::nonowner_admitted(n, dispatcher, from, owner))
        }
        Observation::ControlFromOlderEpochApplied { cf, message, from, epoch, current_epoch } => {
            Some(checkers::older_epoch_applied(n, &cf, &message, from, epoch, current_epoch))
        }
        Observation::HeartbeatWatermarkStored { maintainer_epoch, from, received, stored, .. } => {
            let c = crate::causes::Cause::WatermarkStored { node: n, epoch: maintainer_epoch, from, received, stored };
            wd.causes.push(wd.now_ms, c);
            *wd.interleavings.entry(INTERLEAVE_HEARTBEAT_HALVES).or_default() += 1;
            None
        }
        Observation::HeartbeatStatusesApplied { .. } => None,
        Observation::CheckpointCalculated { maintainer_epoch, heartbeats_half_applied, checkpoint, inputs, .. } => {
            wd.causes.checkpoint(wd.now_ms, n, maintainer_epoch, checkpoint, &inputs);
            if heartbeats_half_applied > 0 {
                *wd.interleavings.entry(INTERLEAVE_CHECKPOINT_IN_HEARTBEAT).or_default() += 1;
            }
            None
        }
        Observation::HeartbeatAggregated { block_status_batch, .. } => {
            if block_status_batch > 0 {
                *wd.interleavings.entry(INTERLEAVE_AGGREGATE_IN_BLOCK_STATUS_BATCH).or_default() += 1;
            }
            None
        }
        Observation::StatusBatchSent { aggregated_inside, .. } => {
            *wd.interleavings.entry(INTERLEAVE_STATUS_BATCHES).or_default() += 1;
            if aggregated_inside > 0 {
                *wd.interleavings.entry(INTERLEAVE_AGGREGATE_IN_STATUS_BATCH).or_default() += 1;
            }
            None
        }
        Observation::AssertionFailed { assertion, detail } => {
            wd.failed_assertions.push((checkers::assertion_invariant(assertion), format!("node={} {}", n, detail)));
            None
        }
        Observation::SinkErrorEscalated { cf, dispatcher, error, closing } => {
            let detail = format!(
                "changefeed={} dispatcher={} error={} closing={} escalated=true",
                cf, dispatcher, error, closing
            );
            wd.errors_logged.push((wd.now_ms, detail.clone()));
            (wd.check_retryable_after_failover && wd.failover_at_ms.is_some())
                .then(|| checkers::retryable_after_failover(n, &detail))
        }
    };
    if let Some((inv, d)) = found {
        wd.violate(inv, d);
    }
    false
}

/// Invariant checks after a step.
pub(crate) fn check(wd: &mut World, n: NodeId, kind: StepKind, dispatchers_changed: bool) {
    if dispatchers_changed {
        // A capture the cluster no longer counts (its etcd session ended and the failure
        // detection fired) has its dispatchers re-placed by the maintainer, while it may
        // still run until it notices and local-fences. That overlap is inherent to
        // lease-based membership (TiCDC bounds it with the local fence, which
        // `no-write-after-fence` checks), so the placement invariants look at the captures
        // the cluster still counts, session-lost ones included until their detection.
        let found = {
            let managers: Vec<_> = wd
                .nodes
                .iter()
                .enumerate()
                .filter(|(_, s)| s.alive && s.member)
                .filter_map(|(i, s)| s.state.as_ref().map(|st| (NodeId(i as u32), st)))
                .flat_map(|(id, st)| st.orch.managers.values().map(move |dm| (id, dm)))
                .collect();
            if wd.full_checks {
                checkers::check_dispatchers_full(managers.into_iter())
            } else {
                checkers::check_dispatchers_with(&managers, &mut wd.placement_scratch)
            }
        };
        for (inv, d) in found {
            wd.violate(inv, d);
        }
    }
    if matches!(
        kind,
        StepKind::Message
            | StepKind::HeartbeatStatuses
            | StepKind::Operators
            | StepKind::Scheduler
            | StepKind::Api
            | StepKind::Membership
    ) {
        let full = wd.full_checks;
        let mut found = Vec::new();
        if let Some(st) = wd.nodes[n.0 as usize].state.as_mut() {
            for m in st.mm.maintainers.values_mut() {
                // The check reads only the books (tasks, spans, operators) and the
                // bootstrap, so on unchanged ones it would only repeat violations already
                // recorded. Both flags are taken, so each change is looked at once.
                let changed = m.pipe.sc.books.take() | m.pipe.oc.books.take();
                if full {
                    found.extend(checkers::check_maintainer_full(m));
                } else if changed {
                    found.extend(checkers::check_maintainer(m));
                }
            }
        }
        for (inv, d) in found {
            wd.violate(inv, d);
        }
    }
    check_persisted_checkpoint(wd);
    // A role's own assertion usually fails in the step that breaks a cluster-wide
    // invariant too; the checker's name, which seed files and reports key on, comes first.
    for (inv, d) in std::mem::take(&mut wd.failed_assertions) {
        wd.violate(&inv, d);
    }
}

/// `checkpoint-monotonic` and `no-data-loss`, run when the persisted checkpoint moves.
pub fn check_persisted_checkpoint(wd: &mut World) {
    let Some(cp) = wd.meta.changefeeds.get(&wd.cf).map(|info| info.checkpoint_ts) else { return };
    if let Some((inv, d)) = checkers::checkpoint_went_back(wd.persisted_checkpoint, cp) {
        wd.violate(inv, d);
    }
    if cp > wd.persisted_checkpoint {
        let c = crate::causes::Cause::CheckpointPersisted { owner: wd.owner(), from: wd.persisted_checkpoint, to: cp };
        wd.causes.push(wd.now_ms, c);
        wd.persisted_checkpoint = cp;
        let found = wd.data_loss.advance(&wd.upstream, &wd.storage, wd.start_ts, cp, wd.sync_points);
        for (inv, d) in found {
            wd.violate(inv, d);
        }
    }
}

/// `barrier-writes-once`, flush half, over the DDL and syncpoint records that just became
/// durable (consumes them).
pub fn check_durable_ddls(wd: &mut World) {
    let syncpoints = std::mem::take(&mut wd.storage.new_syncpoints);
    let ddls = std::mem::take(&mut wd.storage.new_ddls);
    for (inv, d) in checkers::durable_block_events(&wd.upstream, &wd.storage, wd.start_ts, &syncpoints, &ddls) {
        wd.violate(inv, d);
    }
}

/// `no-write-after-drop` over the data and DDL files that just became durable (run before
/// [`check_durable_ddls`], which consumes the new DDL records).
pub fn check_writes_after_drop(wd: &mut World) {
    let rows = std::mem::take(&mut wd.storage.new_rows);
    if rows.is_empty() && wd.storage.new_ddls.is_empty() {
        return;
    }
    // A maintainer generation whose own checkpoint is still below the persisted one is
    // replaying from there: a deposed coordinator persists its maintainer's progress until
    // its session watchdog fires, after the new one started a generation from the
    // checkpoint it read (server.go:414-447), so the persisted checkpoint alone can be past
    // a drop that the running generation has yet to replay. Once that generation's own
    // checkpoint passes the drop, a write of the table is judged again.
    let replay_from = wd
        .nodes
        .iter()
        .filter(|s| s.alive)
        .filter_map(|s| s.state.as_ref()?.mm.maintainers.get(&wd.cf))
        .filter(|m| m.state != core_sched::maintainer::MaintainerState::Stopped)
        .map(|m| m.pipe.committed_checkpoint.max(m.start_checkpoint))
        .min()
        .unwrap_or(Ts::MAX);
    for (inv, d) in checkers::check_no_write_after_drop(
        &wd.upstream,
        &wd.storage,
        wd.persisted_checkpoint.min(replay_from),
        &rows,
        &wd.storage.new_ddls,
    ) {
        wd.violate(inv, d);
    }
}
