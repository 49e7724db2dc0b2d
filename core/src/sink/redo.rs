//! The redo log writer (`sink/redo.Sink`): one per dispatcher manager of a redo
//! changefeed, written by the redo dispatchers.
//!
//! Rows are buffered per dispatcher and written on the redo flush tick
//! (`FlushIntervalInMs`), one object per dispatcher per flush, named by its largest
//! commit ts; a row is released from its dispatcher's table progress only once that
//! object is durable. A DDL is one object of its own, written at once. There is no
//! tmp-and-rename and no flush before a block event (`FlushDMLBeforeBlock` is a no-op;
//! a redo dispatcher waits at a DDL until its rows' objects are durable instead).
//!
//! Simplification: no encoding, compression, file rotation or worker groups; see
//! `docs/fidelity.md`.

use super::cloudstorage::{FlushOutcome, WriteKind};
use crate::coverage::{hit, Point as P};
use crate::effects::{ObjectContent, StorageError, StorageRequest};
use crate::types::*;
use crate::upstream::{DdlRecord, RowChange};
use std::collections::BTreeMap;

/// Marks a redo write's op id, so its completion never reaches the cloud-storage sink.
const REDO_OP_BIT: u64 = 1 << 63;

#[derive(Clone, Debug)]
struct RedoWrite {
    dispatcher: DispatcherId,
    commit_ts: Vec<Ts>,
    kind: WriteKind,
}

#[derive(Debug, Default)]
pub struct RedoSink {
    /// `redo/<changefeed>/<node>`: the prefix of every object this writer puts.
    prefix: String,
    instance: u64,
    next_op: u64,
    buffers: BTreeMap<DispatcherId, Vec<RowChange>>,
    inflight: BTreeMap<u64, RedoWrite>,
    /// `isNormal`: false once a write failed (`Run` returned); a redo dispatcher then
    /// closes without waiting for its rows.
    normal: bool,
    /// The manager's write path was cancelled: completions are dropped.
    cancelled: bool,
}

impl RedoSink {
    pub fn new(cf: &ChangefeedId, node: NodeId, instance: u64) -> Self {
        RedoSink { prefix: format!("redo/{}/{}", cf, node), instance, normal: true, ..Default::default() }
    }

    fn op_id(&mut self) -> u64 {
        self.next_op += 1;
        REDO_OP_BIT | (self.instance << 32) | self.next_op
    }

    pub fn is_normal(&self) -> bool {
        self.normal
    }

    /// `AddDMLEvent`: the row waits in the log buffer for the next flush.
    pub fn append_row(&mut self, d: DispatcherId, row: RowChange) {
        self.buffers.entry(d).or_default().push(row);
    }

    pub fn has_buffered(&self, d: DispatcherId) -> bool {
        self.buffers.get(&d).is_some_and(|b| !b.is_empty())
    }

    /// Writes still in flight (the manager's close waits for them).
    pub fn inflight_count(&self) -> usize {
        self.inflight.len()
    }

    /// The flush tick: every dispatcher's buffered rows go out as one object each.
    pub fn flush(&mut self, out: &mut Vec<StorageRequest>) {
        if self.cancelled || !self.normal {
            return;
        }
        for (d, rows) in std::mem::take(&mut self.buffers) {
            if rows.is_empty() {
                continue;
            }
            hit(P::RedoSinkFlushRows);
            let op_id = self.op_id();
            let max = rows.iter().map(|r| r.commit_ts).max().unwrap_or(0);
            let path = format!("{}_{}_row_{}_{}.log", self.prefix, d, max, op_id & 0xffff_ffff);
            let commit_ts = rows.iter().map(|r| r.commit_ts).collect();
            self.inflight.insert(op_id, RedoWrite { dispatcher: d, commit_ts, kind: WriteKind::Rows });
            out.push(StorageRequest::Put { op_id, path, content: ObjectContent::RedoRows(rows) });
        }
    }

    /// `WriteBlockEvent` of a DDL: one object, before the dispatcher reports it written.
    pub fn write_ddl(&mut self, d: DispatcherId, rec: DdlRecord, out: &mut Vec<StorageRequest>) {
        hit(P::RedoSinkWriteDdl);
        let op_id = self.op_id();
        let path = format!("{}_ddl_{}_{}.log", self.prefix, rec.commit_ts, op_id & 0xffff_ffff);
        self.inflight.insert(op_id, RedoWrite { dispatcher: d, commit_ts: vec![rec.commit_ts], kind: WriteKind::Ddl });
        out.push(StorageRequest::Put { op_id, path, content: ObjectContent::RedoDdl(rec) });
    }

    /// A completed storage operation: `None` if it is not one of this writer's.
    pub fn on_result(&mut self, op_id: u64, res: &Result<(), StorageError>) -> Option<FlushOutcome> {
        if op_id & REDO_OP_BIT == 0 {
            return None;
        }
        let Some(w) = self.inflight.remove(&op_id) else { return Some(FlushOutcome::Unknown) };
        if self.cancelled {
            return Some(FlushOutcome::Cancelled);
        }
        Some(match res {
            Ok(()) => FlushOutcome::Durable { dispatcher: w.dispatcher, commit_ts: w.commit_ts, kind: w.kind },
            Err(e) => {
                hit(P::RedoSinkWriteFailed);
                self.normal = false;
                FlushOutcome::Failed { dispatcher: w.dispatcher, error: e.clone(), closing: false, kind: w.kind }
            }
        })
    }

    /// The write path closed: buffered rows are dropped, nothing more completes.
    pub fn cancel(&mut self) {
        self.cancelled = true;
        self.buffers.clear();
    }

    /// A dispatcher dropped with the write path: its buffered rows go with it.
    pub fn abandon_dispatcher(&mut self, d: DispatcherId) {
        self.buffers.remove(&d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::RowOp;

    fn row(ts: Ts) -> RowChange {
        RowChange { table_id: 10, key: ts, commit_ts: ts, op: RowOp::Insert, value: 1 }
    }

    #[test]
    fn rows_wait_for_the_flush_tick_and_come_back_durable_by_dispatcher() {
        let mut s = RedoSink::new(&ChangefeedId("cf".into()), NodeId(0), 3);
        let (a, b) = (DispatcherId(1), DispatcherId(2));
        s.append_row(a, row(5));
        s.append_row(a, row(7));
        s.append_row(b, row(6));
        assert!(s.has_buffered(a));
        let mut out = vec![];
        s.flush(&mut out);
        assert!(!s.has_buffered(a));
        let puts: Vec<(u64, String, usize)> = out
            .iter()
            .map(|r| match r {
                StorageRequest::Put { op_id, path, content: ObjectContent::RedoRows(rows) } => {
                    (*op_id, path.clone(), rows.len())
                }
                _ => panic!("{:?}", r),
            })
            .collect();
        assert_eq!(puts.len(), 2);
        assert!(puts[0].1.starts_with("redo/cf/8300_0000000000000001_row_7_"), "{}", puts[0].1);
        let r = s.on_result(puts[0].0, &Ok(()));
        assert_eq!(r, Some(FlushOutcome::Durable { dispatcher: a, commit_ts: vec![5, 7], kind: WriteKind::Rows }));
        assert_eq!(s.on_result(1, &Ok(())), None, "a cloud-storage op id is not the redo writer's");
    }

    #[test]
    fn a_failed_write_marks_the_sink_not_normal_and_stops_flushing() {
        let mut s = RedoSink::new(&ChangefeedId("cf".into()), NodeId(0), 3);
        s.append_row(DispatcherId(1), row(5));
        let mut out = vec![];
        s.flush(&mut out);
        let StorageRequest::Put { op_id, .. } = out[0] else { panic!() };
        let r = s.on_result(op_id, &Err(StorageError::Transient("x".into())));
        assert!(matches!(r, Some(FlushOutcome::Failed { .. })));
        assert!(!s.is_normal());
        s.append_row(DispatcherId(1), row(6));
        let mut out = vec![];
        s.flush(&mut out);
        assert!(out.is_empty());
    }
}
