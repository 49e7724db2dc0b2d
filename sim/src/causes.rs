//! Typed cause records: what a run did that can explain a checkpoint or a dispatcher,
//! beside the trace (heartbeats, schedule requests and bootstrap answers as they were sent, watermarks the
//! maintainer stored, checkpoint rounds, the persisted checkpoint). The report's causal
//! slice walks back along them from a violation (`crate::report::slice`).
//!
//! Recorded in every run, bounded by [`CAUSE_CAP`]. They are kept out of the trace hash
//! and draw nothing, so recording them does not change a run.

use core_sched::effects::CheckpointInputs;
use core_sched::messages::{ComponentState, Message, ScheduleAction, Watermark};
use core_sched::types::{DispatcherId, Epoch, NodeId, TableId, Ts};
use serde::Serialize;
use std::collections::BTreeMap;

/// At most this many cause records per run (a long run's later ones are dropped).
pub const CAUSE_CAP: usize = 200_000;
/// A heartbeat keeps at most this many of its statuses (a complete-status heartbeat of a
/// big cluster lists every dispatcher; the slice needs the involved few, which are
/// rarely beyond the first hundreds).
const STATUSES_KEPT: usize = 256;

/// A dispatcher's status in a heartbeat.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SpanStatus {
    pub dispatcher: DispatcherId,
    pub state: ComponentState,
    pub checkpoint_ts: Ts,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum Cause {
    /// A dispatcher manager sent a heartbeat to its maintainer.
    HeartbeatSent { from: NodeId, to: NodeId, watermark: Watermark, complete: bool, statuses: Vec<SpanStatus> },
    /// A maintainer asked a dispatcher manager to create or remove a dispatcher.
    ScheduleSent {
        from: NodeId,
        to: NodeId,
        epoch: Epoch,
        dispatcher: DispatcherId,
        table: TableId,
        span: String,
        create: bool,
        operator: String,
    },
    /// A maintainer asked a dispatcher manager to merge dispatchers into one.
    MergeSent { from: NodeId, to: NodeId, dispatchers: Vec<DispatcherId>, merged: DispatcherId },
    /// A dispatcher manager answered a maintainer's bootstrap: the dispatchers it has and
    /// the operators it was running (`create`/`remove` and the dispatcher), which the new
    /// maintainer restores.
    BootstrapSent {
        from: NodeId,
        to: NodeId,
        epoch: Epoch,
        spans: Vec<SpanStatus>,
        operators: Vec<(bool, DispatcherId)>,
        merges: Vec<DispatcherId>,
    },
    /// The maintainer on `node` stored the watermark of a heartbeat from `from`.
    WatermarkStored { node: NodeId, epoch: Epoch, from: NodeId, received: Watermark, stored: Watermark },
    /// A checkpoint round of the maintainer on `node` committed a new checkpoint.
    CheckpointCalculated {
        node: NodeId,
        epoch: Epoch,
        checkpoint: Ts,
        by_operator: Option<Ts>,
        by_absent: Option<Ts>,
        by_barrier: Option<Ts>,
        watermarks: Vec<(NodeId, Watermark)>,
    },
    /// The changefeed's checkpoint in the meta store moved up (written by the owner's
    /// coordinator).
    CheckpointPersisted { owner: Option<NodeId>, from: Ts, to: Ts },
}

impl Cause {
    /// The dispatchers the record is about.
    pub fn dispatchers(&self) -> Vec<DispatcherId> {
        match self {
            Cause::HeartbeatSent { statuses, .. } => statuses.iter().map(|s| s.dispatcher).collect(),
            Cause::ScheduleSent { dispatcher, .. } => vec![*dispatcher],
            Cause::MergeSent { dispatchers, merged, .. } => dispatchers.iter().chain([merged]).copied().collect(),
            Cause::BootstrapSent { spans, operators, merges, .. } => spans
                .iter()
                .map(|s| s.dispatcher)
                .chain(operators.iter().map(|(_, d)| *d))
                .chain(merges.iter().copied())
                .collect(),
            _ => vec![],
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CauseRecord {
    pub at_ms: u64,
    #[serde(flatten)]
    pub cause: Cause,
}

#[derive(Clone, Debug, Default)]
pub struct CauseLog {
    pub records: Vec<CauseRecord>,
    pub dropped: u64,
    /// The table of every dispatcher the run created (the DDL span's is table 0).
    pub tables: BTreeMap<DispatcherId, TableId>,
    /// The last committed checkpoint recorded per maintainer (node, epoch): a round that
    /// commits nothing new is not recorded.
    last_checkpoint: BTreeMap<(NodeId, Epoch), Ts>,
}

impl CauseLog {
    pub fn push(&mut self, at_ms: u64, cause: Cause) {
        if self.records.len() >= CAUSE_CAP {
            self.dropped += 1;
            return;
        }
        self.records.push(CauseRecord { at_ms, cause });
    }

    /// Note the tables of a node's dispatchers (after a step that changed them).
    pub fn dispatchers<'a>(&mut self, ds: impl Iterator<Item = (DispatcherId, TableId)> + 'a) {
        for (id, t) in ds {
            if self.tables.len() >= CAUSE_CAP {
                return;
            }
            self.tables.entry(id).or_insert(t);
        }
    }

    /// A message is sent: heartbeats, schedule and merge requests are kept.
    pub fn sent(&mut self, at_ms: u64, from: NodeId, to: NodeId, msg: &Message) {
        let cause = match msg {
            Message::HeartBeatRequest { watermark, statuses, complete_status, .. } => Cause::HeartbeatSent {
                from,
                to,
                watermark: *watermark,
                complete: *complete_status,
                statuses: statuses
                    .iter()
                    .take(STATUSES_KEPT)
                    .map(|s| SpanStatus { dispatcher: s.id, state: s.state, checkpoint_ts: s.checkpoint_ts })
                    .collect(),
            },
            Message::ScheduleDispatcherRequest { req, .. } => Cause::ScheduleSent {
                from,
                to,
                epoch: req.maintainer_epoch,
                dispatcher: req.config.dispatcher_id,
                table: req.config.span.table_id,
                span: format!("{:?}", req.config.span),
                create: req.action == ScheduleAction::Create,
                operator: format!("{:?}", req.operator_type),
            },
            Message::MaintainerBootstrapResponse { spans, operators, merge_operators, maintainer_epoch, .. } => {
                Cause::BootstrapSent {
                    from,
                    to,
                    epoch: *maintainer_epoch,
                    spans: spans
                        .iter()
                        .take(STATUSES_KEPT)
                        .map(|s| SpanStatus { dispatcher: s.id, state: s.state, checkpoint_ts: s.checkpoint_ts })
                        .collect(),
                    operators: operators
                        .iter()
                        .take(STATUSES_KEPT)
                        .map(|o| (o.action == ScheduleAction::Create, o.config.dispatcher_id))
                        .collect(),
                    merges: merge_operators.iter().take(STATUSES_KEPT).map(|m| m.merged_dispatcher_id).collect(),
                }
            }
            Message::MergeDispatcherRequest { req, .. } => {
                Cause::MergeSent { from, to, dispatchers: req.dispatcher_ids.clone(), merged: req.merged_dispatcher_id }
            }
            _ => return,
        };
        self.push(at_ms, cause);
    }

    /// A checkpoint round ran on `node`; kept when it committed a new checkpoint.
    pub fn checkpoint(&mut self, at_ms: u64, node: NodeId, epoch: Epoch, cp: Option<Ts>, inputs: &CheckpointInputs) {
        let Some(cp) = cp else { return };
        if self.last_checkpoint.insert((node, epoch), cp) == Some(cp) {
            return;
        }
        let watermarks = inputs.watermarks.iter().filter_map(|(n, w)| w.map(|w| (*n, w))).collect();
        self.push(
            at_ms,
            Cause::CheckpointCalculated {
                node,
                epoch,
                checkpoint: cp,
                by_operator: inputs.by_operator,
                by_absent: inputs.by_absent,
                by_barrier: inputs.by_barrier,
                watermarks,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_new_checkpoints_are_kept() {
        let mut l = CauseLog::default();
        let i = CheckpointInputs { watermarks: vec![(NodeId(1), Some(Watermark::default()))], ..Default::default() };
        l.checkpoint(1, NodeId(0), 7, Some(10), &i);
        l.checkpoint(2, NodeId(0), 7, Some(10), &i);
        l.checkpoint(3, NodeId(0), 7, None, &i);
        l.checkpoint(4, NodeId(0), 8, Some(10), &i);
        l.checkpoint(5, NodeId(0), 7, Some(11), &i);
        assert_eq!(l.records.iter().map(|r| r.at_ms).collect::<Vec<_>>(), [1, 4, 5]);
    }
}
