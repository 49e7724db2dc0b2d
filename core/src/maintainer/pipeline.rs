//! The per-mode half of a maintainer. TiCDC's controller keeps a span controller, an
//! operator controller and a barrier for each mode (`maintainer_controller.go:50-56`),
//! and the maintainer a watermark table and a checkpoint for each (`checkpointTsByCapture`,
//! `redoTsByCapture`); the model bundles them so one set of methods serves both modes.

use super::barrier::Barrier;
use super::operator::{Operator, OperatorController};
use super::span_controller::SpanController;
use super::DefaultSpanTraffic;
use crate::messages::Watermark;
use crate::types::*;
use std::collections::BTreeMap;

#[derive(Debug)]
pub struct Pipeline {
    pub mode: Mode,
    pub sc: SpanController,
    pub oc: OperatorController,
    pub barrier: Barrier,
    /// The last watermark of each node (the redo watermark in redo mode).
    pub node_watermarks: BTreeMap<NodeId, Watermark>,
    /// The committed checkpoint of this mode (the redo one never reaches the coordinator).
    pub committed_checkpoint: Ts,
    /// The region count refresher's counts (default-group spans it tracks).
    pub region_counts: BTreeMap<DispatcherId, u64>,
    /// The default-group split checker's traffic state per whole-table span
    /// (`spanSplitStatus.trafficScore`, `latestTraffic`).
    pub default_traffic: BTreeMap<DispatcherId, DefaultSpanTraffic>,
    /// `nextCheckTime` of this mode's balance scheduler.
    pub next_balance_check_ms: u64,
    /// Admissions that passed the check and wait for their insert step (bug mode).
    pub pending_admissions: Vec<Operator>,
}

impl Pipeline {
    /// One mode's controllers, each stamped with `mode`.
    pub fn new(mode: Mode, mut sc: SpanController, mut oc: OperatorController, checkpoint: Ts) -> Self {
        sc.mode = mode;
        oc.mode = mode;
        Pipeline {
            mode,
            sc,
            oc,
            barrier: Barrier { mode, ..Barrier::default() },
            node_watermarks: BTreeMap::new(),
            committed_checkpoint: checkpoint,
            region_counts: BTreeMap::new(),
            default_traffic: BTreeMap::new(),
            next_balance_check_ms: 0,
            pending_admissions: Vec::new(),
        }
    }
}
