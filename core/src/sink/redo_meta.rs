//! The redo meta (`sink/redo.RedoMeta`, `downstreamadapter/sink/redo/meta.go`): held by
//! the table trigger redo dispatcher of the maintainer's node, it keeps the redo log's
//! checkpoint ts (everything at or below it is downstream) and resolved ts (everything
//! at or below it is in the redo log), each as an unflushed (in memory) and a flushed (in
//! a meta file in the redo storage) value.
//!
//! Lifecycle, as `SetRedoMeta` runs it: `PreStart` lists the meta files already in the
//! storage and reads them (one storage operation here), starts from the largest of them
//! and the trigger's start ts (`initMeta`, `ParseMeta`), writes that as a new meta file and
//! deletes the old ones; then `Run` marks it running, and every `meta-flush-interval` a
//! raised unflushed meta is written as a new file, replacing the previous one
//! (`maybeFlushMeta`). Updates (`UpdateMeta`) arrive only while running.
//!
//! Simplification: no log GC (`bgGC`) and no delete marker (`preCleanupExtStorage`, a
//! removed changefeed); deletes have no completion (see `docs/fidelity.md`).

use crate::coverage::{hit, Point as P};
use crate::effects::{ObjectContent, StorageError, StorageRequest};
use crate::types::*;
use serde::{Deserialize, Serialize};

/// Marks a redo meta storage op id (the redo log writer's carry bit 63).
pub const REDO_META_OP_BIT: u64 = 1 << 62;
/// `MetaEXT`.
pub const META_EXT: &str = ".meta";

/// `misc.LogMeta`: the content of a meta file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LogMeta {
    pub checkpoint_ts: Ts,
    pub resolved_ts: Ts,
}

/// `statefulRts`: a flushed and an unflushed ts, each only raised (`CompareAndIncrease`:
/// an equal value is accepted, a lower one refused).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatefulTs {
    pub flushed: Ts,
    pub unflushed: Ts,
}

impl StatefulTs {
    pub fn check_and_set_unflushed(&mut self, ts: Ts) -> bool {
        if ts < self.unflushed {
            return false;
        }
        self.unflushed = ts;
        true
    }

    pub fn check_and_set_flushed(&mut self, ts: Ts) -> bool {
        if ts < self.flushed {
            return false;
        }
        self.flushed = ts;
        true
    }
}

/// Where the meta is in its lifecycle.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Phase {
    /// Created, `PreStart` not issued.
    Created,
    /// `initMeta`'s walk and reads are in flight.
    Listing { op_id: u64 },
    /// A meta file write is in flight; `init` holds the old files `initMeta` deletes after
    /// its first flush (then the meta starts running).
    Flushing { op_id: u64, meta: LogMeta, path: String, init: Option<Vec<String>> },
    /// `Run`: flushes on its ticks.
    Running,
    /// Cancelled (the trigger was removed) or failed: nothing more happens.
    Stopped,
}

/// What a completed storage operation did to the meta.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MetaOutcome {
    /// Not an operation of this meta (or one it no longer waits for).
    Ignored,
    /// The first meta is durable: the meta runs.
    Started(LogMeta),
    /// A later meta is durable.
    Flushed(LogMeta),
    /// `PreStart` or `Run` returned this error (the trigger's `HandleError`).
    Failed(StorageError),
}

#[derive(Debug)]
pub struct RedoMeta {
    /// The directory of the changefeed's redo storage (`redo/<changefeed>`).
    dir: String,
    /// `captureID` (the meta file name's first part).
    capture: NodeId,
    cf: ChangefeedId,
    /// The table trigger redo dispatcher's start ts.
    pub start_ts: Ts,
    pub checkpoint: StatefulTs,
    pub resolved: StatefulTs,
    /// `running`.
    running: bool,
    /// `preMetaFile`: the meta file the next flush replaces.
    pre_meta_file: Option<String>,
    instance: u64,
    next_op: u64,
    phase: Phase,
}

impl RedoMeta {
    /// `NewRedoMeta(changefeedID, startTs, cfg)`.
    pub fn new(cf: &ChangefeedId, capture: NodeId, start_ts: Ts, instance: u64) -> Self {
        RedoMeta {
            dir: format!("redo/{}", cf),
            capture,
            cf: cf.clone(),
            start_ts,
            checkpoint: StatefulTs::default(),
            resolved: StatefulTs::default(),
            running: false,
            pre_meta_file: None,
            instance,
            next_op: 0,
            phase: Phase::Created,
        }
    }

    fn op_id(&mut self) -> u64 {
        self.next_op += 1;
        REDO_META_OP_BIT | (self.instance << 32) | self.next_op
    }

    /// Whether `op_id` is a redo meta operation.
    pub fn is_meta_op(op_id: u64) -> bool {
        op_id & REDO_META_OP_BIT != 0
    }

    /// `Running`.
    pub fn running(&self) -> bool {
        self.running
    }

    /// `getMetafileName`: `<capture>_<changefeed>_meta_<uuid>.meta` (the uuid: this
    /// writer's instance and op number).
    fn meta_file_name(&self, op_id: u64) -> String {
        format!("{}/{}_{}_meta_{}-{}{}", self.dir, self.capture, self.cf, self.instance, op_id & 0xffff_ffff, META_EXT)
    }

    /// The redo storage directory that `PreStart` walks.
    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// `PreStart`: walk the storage for meta files and read them.
    pub fn pre_start(&mut self, out: &mut Vec<StorageRequest>) {
        if self.phase != Phase::Created {
            return;
        }
        let op_id = self.op_id();
        self.phase = Phase::Listing { op_id };
        out.push(StorageRequest::ListRedoMeta { op_id, dir: self.dir.clone() });
    }

    /// `initMeta` once the walk is back: the unflushed meta is the largest of the start
    /// ts and every meta found (`ParseMeta`); it is flushed at once.
    pub fn on_listed(
        &mut self,
        op_id: u64,
        res: Result<Vec<(String, LogMeta)>, StorageError>,
        out: &mut Vec<StorageRequest>,
    ) -> MetaOutcome {
        if self.phase != (Phase::Listing { op_id }) {
            return MetaOutcome::Ignored;
        }
        let found = match res {
            Ok(f) => f,
            Err(e) => {
                hit(P::RedoMetaInitFailed);
                self.stop();
                return MetaOutcome::Failed(e);
            }
        };
        let mut m = LogMeta { checkpoint_ts: self.start_ts, resolved_ts: self.start_ts };
        for (_, f) in &found {
            m.checkpoint_ts = m.checkpoint_ts.max(f.checkpoint_ts);
            m.resolved_ts = m.resolved_ts.max(f.resolved_ts);
        }
        if m.resolved_ts > self.start_ts {
            hit(P::RedoMetaInitFromStorage);
        }
        self.resolved.unflushed = m.resolved_ts;
        self.checkpoint.unflushed = m.checkpoint_ts;
        let stale = found.into_iter().map(|(p, _)| p).collect();
        self.issue_flush(m, Some(stale), out);
        MetaOutcome::Ignored
    }

    fn issue_flush(&mut self, meta: LogMeta, init: Option<Vec<String>>, out: &mut Vec<StorageRequest>) {
        let op_id = self.op_id();
        let path = self.meta_file_name(op_id);
        out.push(StorageRequest::Put { op_id, path: path.clone(), content: ObjectContent::RedoMeta(meta) });
        self.phase = Phase::Flushing { op_id, meta, path, init };
    }

    /// `UpdateMeta`: raise the unflushed values (a regressed one is ignored, each on its own).
    pub fn update(&mut self, checkpoint_ts: Ts, resolved_ts: Ts) {
        if !self.resolved.check_and_set_unflushed(resolved_ts) {
            hit(P::RedoMetaUpdateRegressed);
        }
        if !self.checkpoint.check_and_set_unflushed(checkpoint_ts) {
            hit(P::RedoMetaUpdateRegressed);
        }
    }

    /// `GetFlushedMeta`.
    pub fn flushed(&self) -> LogMeta {
        LogMeta { checkpoint_ts: self.checkpoint.flushed, resolved_ts: self.resolved.flushed }
    }

    /// A `bgFlushMeta` tick: `maybeFlushMeta` writes the unflushed meta if either value is
    /// above its flushed one. Go's flush runs inside the tick, so a tick that comes while
    /// a flush is in flight is lost (a `time.Ticker` drops ticks).
    pub fn tick_flush(&mut self, out: &mut Vec<StorageRequest>) {
        if self.phase != Phase::Running {
            return;
        }
        let unflushed = LogMeta { checkpoint_ts: self.checkpoint.unflushed, resolved_ts: self.resolved.unflushed };
        if self.checkpoint.flushed >= unflushed.checkpoint_ts && self.resolved.flushed >= unflushed.resolved_ts {
            hit(P::RedoMetaFlushUnchanged);
            return;
        }
        hit(P::RedoMetaFlush);
        self.issue_flush(unflushed, None, out);
    }

    /// A completed meta file write: `flush` deletes the previous file, `postFlushMeta`
    /// raises the flushed values; the first one also deletes the files `initMeta` read
    /// and starts `Run`. A failed write stops the meta with the error.
    pub fn on_put_result(
        &mut self,
        op_id: u64,
        res: &Result<(), StorageError>,
        out: &mut Vec<StorageRequest>,
    ) -> MetaOutcome {
        let Phase::Flushing { op_id: want, meta, path, init } = self.phase.clone() else {
            return MetaOutcome::Ignored;
        };
        if want != op_id {
            return MetaOutcome::Ignored;
        }
        if let Err(e) = res {
            hit(P::RedoMetaFlushFailed);
            self.stop();
            return MetaOutcome::Failed(e.clone());
        }
        if let Some(prev) = self.pre_meta_file.replace(path) {
            out.push(StorageRequest::Delete { paths: vec![prev] });
        }
        self.resolved.check_and_set_flushed(meta.resolved_ts);
        self.checkpoint.check_and_set_flushed(meta.checkpoint_ts);
        self.phase = Phase::Running;
        match init {
            Some(stale) => {
                if !stale.is_empty() {
                    out.push(StorageRequest::Delete { paths: stale });
                }
                self.running = true;
                hit(P::RedoMetaStarted);
                MetaOutcome::Started(meta)
            }
            None => MetaOutcome::Flushed(meta),
        }
    }

    /// The trigger was removed (its context cancelled) or the meta failed: `Run` exits
    /// and `running` is false from then on.
    pub fn stop(&mut self) {
        self.running = false;
        self.phase = Phase::Stopped;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put_of(out: &[StorageRequest]) -> (u64, String, LogMeta) {
        match out.last() {
            Some(StorageRequest::Put { op_id, path, content: ObjectContent::RedoMeta(m) }) => {
                (*op_id, path.clone(), *m)
            }
            o => panic!("{:?}", o),
        }
    }

    fn started(start: Ts, found: Vec<(String, LogMeta)>) -> (RedoMeta, Vec<StorageRequest>) {
        let mut m = RedoMeta::new(&ChangefeedId("cf".into()), NodeId(0), start, 1);
        let mut out = vec![];
        m.pre_start(&mut out);
        let Some(StorageRequest::ListRedoMeta { op_id, .. }) = out.pop() else { panic!() };
        m.on_listed(op_id, Ok(found), &mut out);
        let (op, _, _) = put_of(&out);
        out.clear();
        m.on_put_result(op, &Ok(()), &mut out);
        (m, out)
    }

    #[test]
    fn an_update_is_flushed_on_the_next_tick_and_a_regressed_value_is_ignored_on_its_own() {
        let (mut m, _) = started(10, vec![]);
        assert_eq!(m.flushed(), LogMeta { checkpoint_ts: 10, resolved_ts: 10 });
        m.update(1, 2);
        let mut out = vec![];
        m.tick_flush(&mut out);
        assert!(out.is_empty(), "both regressed: nothing to flush");
        m.update(3, 20);
        m.tick_flush(&mut out);
        let (op, _, meta) = put_of(&out);
        assert_eq!(meta, LogMeta { checkpoint_ts: 10, resolved_ts: 20 });
        assert_eq!(m.flushed().resolved_ts, 10, "not flushed before the write is durable");
        let mut out2 = vec![];
        m.on_put_result(op, &Ok(()), &mut out2);
        assert_eq!(m.flushed(), LogMeta { checkpoint_ts: 10, resolved_ts: 20 });
        assert!(matches!(&out2[..], [StorageRequest::Delete { paths }] if paths.len() == 1), "{:?}", out2);
    }

    #[test]
    fn a_failed_meta_write_stops_the_meta() {
        let (mut m, _) = started(10, vec![]);
        m.update(11, 12);
        let mut out = vec![];
        m.tick_flush(&mut out);
        let (op, _, _) = put_of(&out);
        let r = m.on_put_result(op, &Err(StorageError::Transient("m".into())), &mut out);
        assert!(matches!(r, MetaOutcome::Failed(_)));
        assert!(!m.running());
        m.update(13, 14);
        let mut out = vec![];
        m.tick_flush(&mut out);
        assert!(out.is_empty());
    }
}
