//! Cloud-storage sink writer (one per dispatcher manager).
//!
//! With `enable-table-across-nodes` TiCDC names data files per dispatcher
//! (`CDC_<dispatcherID>_<index>.json`). Every object is written the way the
//! objstore's `WriteFile` does it: put `<file>.tmp.<uuid>`, then rename it to the final
//! name. Closing a dispatcher's writer removes its temporary objects, so a flush that is
//! between the put and the rename then fails with "no such file or directory".
//!
//! Simplification: TiCDC's writer shards, encoder group and index files are collapsed
//! into one writer per dispatcher. TiCDC continues a dispatcher's file numbering after
//! a move by reading its index file; here the writer instance is part of the file name
//! instead, so a dispatcher moved to another node never overwrites its earlier files.

use crate::coverage::{hit, Point as P};
use crate::effects::{ObjectContent, StorageError, StorageRequest};
use crate::types::*;
use crate::upstream::{DdlRecord, RowChange};
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlushPhase {
    Put,
    Rename,
}

/// What an object holds: a data file, a DDL's schema file or a syncpoint record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteKind {
    Rows,
    Ddl,
    SyncPoint,
}

#[derive(Clone, Debug)]
pub struct InflightFlush {
    pub dispatcher: DispatcherId,
    pub tmp: String,
    pub target: String,
    pub phase: FlushPhase,
    /// Commit ts of the rows in this file (for table progress), or the block event's.
    pub commit_ts: Vec<Ts>,
    pub kind: WriteKind,
}

/// What a completed storage operation means for the dispatcher manager.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlushOutcome {
    /// Still in progress (the rename was issued).
    Pending,
    /// The file is durable; these rows (commit ts) of the dispatcher are flushed.
    Durable { dispatcher: DispatcherId, commit_ts: Vec<Ts>, kind: WriteKind },
    /// The write failed. `closing` tells whether the dispatcher's writer was already closed.
    Failed { dispatcher: DispatcherId, error: StorageError, closing: bool, kind: WriteKind },
    /// Unknown op (e.g. issued before a restart of the sink).
    Unknown,
    /// The sink's context was cancelled (capture-local fence) before this write's next
    /// step: nothing more is issued for it.
    Cancelled,
}

#[derive(Default, Debug)]
pub struct CloudStorageSink {
    buffers: BTreeMap<DispatcherId, (TableSpan, String, Vec<RowChange>)>,
    inflight: BTreeMap<u64, InflightFlush>,
    file_index: BTreeMap<DispatcherId, u64>,
    closed_writers: std::collections::BTreeSet<DispatcherId>,
    next_op: u64,
    /// Prefix distinguishing op ids of different sink instances.
    pub instance: u64,
    /// `stopWritePath(cancelFirst)` of a local fence cancelled the writers' context: a
    /// put that completes afterwards is not followed by its rename (a request already at
    /// the storage still lands).
    cancelled: bool,
}

impl CloudStorageSink {
    pub fn new(instance: u64) -> Self {
        CloudStorageSink { instance, ..Default::default() }
    }

    fn op_id(&mut self) -> u64 {
        self.next_op += 1;
        (self.instance << 32) | self.next_op
    }

    pub fn append_row(&mut self, d: DispatcherId, span: TableSpan, schema_name: &str, row: RowChange) {
        let e = self.buffers.entry(d).or_insert_with(|| (span, schema_name.to_string(), Vec::new()));
        e.2.push(row);
    }

    pub fn has_buffered(&self, d: DispatcherId) -> bool {
        self.buffers.get(&d).map(|b| !b.2.is_empty()).unwrap_or(false)
    }

    /// Storage operations still in flight (a closing sink waits for them).
    pub fn inflight_count(&self) -> usize {
        self.inflight.len()
    }

    pub fn has_inflight(&self, d: DispatcherId) -> bool {
        self.inflight.values().any(|f| f.dispatcher == d)
    }

    fn tmp_name(&mut self, target: &str, rng: &mut dyn rand::RngCore) -> String {
        let u = rng.next_u64();
        format!("{}.tmp.{:016x}", target, u)
    }

    /// Flush every dispatcher's buffered rows (the periodic `flush-interval` tick, or a
    /// forced flush before a block event).
    pub fn flush(
        &mut self,
        only: Option<DispatcherId>,
        rng: &mut dyn rand::RngCore,
        out: &mut Vec<StorageRequest>,
    ) -> Vec<(DispatcherId, String)> {
        let ids: Vec<DispatcherId> = self
            .buffers
            .iter()
            .filter(|(d, b)| !b.2.is_empty() && only.map(|o| o == **d).unwrap_or(true))
            .map(|(d, _)| *d)
            .collect();
        let mut started = Vec::new();
        for d in ids {
            let (span, schema, rows) = {
                let b = self.buffers.get_mut(&d).unwrap();
                (b.0, b.1.clone(), std::mem::take(&mut b.2))
            };
            let idx = self.file_index.entry(d).or_insert(0);
            *idx += 1;
            let target = format!("{}/t{}/CDC_{}_{:x}_{:06}.json", schema, span.table_id, d, self.instance, idx);
            let tmp = self.tmp_name(&target, rng);
            let op_id = self.op_id();
            let commit_ts = rows.iter().map(|r| r.commit_ts).collect();
            out.push(StorageRequest::Put { op_id, path: tmp.clone(), content: ObjectContent::Rows(rows) });
            self.inflight.insert(
                op_id,
                InflightFlush {
                    dispatcher: d,
                    tmp: tmp.clone(),
                    target: target.clone(),
                    phase: FlushPhase::Put,
                    commit_ts,
                    kind: WriteKind::Rows,
                },
            );
            started.push((d, tmp));
        }
        started
    }

    /// Write a DDL's schema file (tmp + rename like every object). A schema-level DDL
    /// (CREATE/DROP DATABASE, table ID 0) goes to `<schema>/meta/`, a table's to
    /// `<schema>/<table>/meta/` (`SchemaFile.Path`; the checksum in TiCDC's file name is
    /// the DDL kind here).
    pub fn write_ddl(
        &mut self,
        d: DispatcherId,
        rec: DdlRecord,
        rng: &mut dyn rand::RngCore,
        out: &mut Vec<StorageRequest>,
    ) -> String {
        let target = if rec.table_id == 0 {
            format!("{}/meta/schema_{}_{:?}.json", rec.schema_name, rec.commit_ts, rec.kind)
        } else {
            format!("{}/t{}/meta/schema_{}_{:?}.json", rec.schema_name, rec.table_id, rec.commit_ts, rec.kind)
        };
        let tmp = self.tmp_name(&target, rng);
        let op_id = self.op_id();
        let ts = rec.commit_ts;
        out.push(StorageRequest::Put { op_id, path: tmp.clone(), content: ObjectContent::Ddl(rec) });
        self.inflight.insert(
            op_id,
            InflightFlush {
                dispatcher: d,
                tmp: tmp.clone(),
                target,
                phase: FlushPhase::Put,
                commit_ts: vec![ts],
                kind: WriteKind::Ddl,
            },
        );
        tmp
    }

    /// Write a syncpoint record (tmp + rename like every object; see [`crate::syncpoint`]).
    pub fn write_sync_point(
        &mut self,
        d: DispatcherId,
        rec: crate::syncpoint::SyncPointRecord,
        rng: &mut dyn rand::RngCore,
        out: &mut Vec<StorageRequest>,
    ) -> String {
        let target = crate::syncpoint::record_path(&rec.changefeed, rec.primary_ts);
        let tmp = self.tmp_name(&target, rng);
        let op_id = self.op_id();
        let ts = rec.primary_ts;
        out.push(StorageRequest::Put { op_id, path: tmp.clone(), content: ObjectContent::SyncPoint(rec) });
        self.inflight.insert(
            op_id,
            InflightFlush {
                dispatcher: d,
                tmp: tmp.clone(),
                target,
                phase: FlushPhase::Put,
                commit_ts: vec![ts],
                kind: WriteKind::SyncPoint,
            },
        );
        tmp
    }

    /// Completion of a storage op issued by this sink.
    pub fn on_result(
        &mut self,
        op_id: u64,
        res: Result<(), StorageError>,
        out: &mut Vec<StorageRequest>,
    ) -> FlushOutcome {
        let Some(f) = self.inflight.get_mut(&op_id) else {
            hit(P::SinkUnknownOp);
            return FlushOutcome::Unknown;
        };
        if self.cancelled && f.phase == FlushPhase::Put {
            hit(P::SinkCancelled);
            self.inflight.remove(&op_id);
            return FlushOutcome::Cancelled;
        }
        let closing = self.closed_writers.contains(&f.dispatcher);
        match res {
            Err(error) => {
                hit(if closing { P::SinkFailedClosing } else { P::SinkFailedOpen });
                let f = self.inflight.remove(&op_id).unwrap();
                FlushOutcome::Failed { dispatcher: f.dispatcher, error, closing, kind: f.kind }
            }
            Ok(()) => match f.phase {
                FlushPhase::Put => {
                    f.phase = FlushPhase::Rename;
                    out.push(StorageRequest::Rename { op_id, from: f.tmp.clone(), to: f.target.clone() });
                    FlushOutcome::Pending
                }
                FlushPhase::Rename => {
                    let f = self.inflight.remove(&op_id).unwrap();
                    FlushOutcome::Durable { dispatcher: f.dispatcher, commit_ts: f.commit_ts, kind: f.kind }
                }
            },
        }
    }

    /// Close a dispatcher's writer (the dispatcher is being removed): its buffered rows
    /// go out in a final flush, and the writer's cleanup removes its temporary objects.
    /// The cleanup races the flushes still in flight (the final one included): the
    /// storage applies the removal after its own latency, so a flush whose temporary
    /// object is removed between the put and the rename fails with "no such file or
    /// directory". That failure is reported as `closing` (see [`FlushOutcome::Failed`]).
    ///
    /// Modelling choice: TiCDC's dispatcher removal waits (`TryClose`) for the table
    /// progress to drain, and the timeline of seed 000 shows the failing write about a
    /// second after "no span found, remove it", i.e. the writer's last flush racing its
    /// own cleanup. A removal with nothing buffered or in flight cannot race.
    pub fn close_dispatcher(&mut self, d: DispatcherId, rng: &mut dyn rand::RngCore, out: &mut Vec<StorageRequest>) {
        self.flush(Some(d), rng, out);
        self.buffers.remove(&d);
        self.closed_writers.insert(d);
        let paths: Vec<String> = self.inflight.values().filter(|f| f.dispatcher == d).map(|f| f.tmp.clone()).collect();
        if !paths.is_empty() {
            hit(P::SinkCloseCleanup);
            out.push(StorageRequest::Delete { paths });
        }
    }

    /// Cancel every writer's context (local fence): no further step of any write.
    pub fn cancel(&mut self) {
        self.cancelled = true;
    }

    /// Drop a writer without flushing (the whole dispatcher manager is closed).
    pub fn abandon_dispatcher(&mut self, d: DispatcherId) {
        self.buffers.remove(&d);
        self.closed_writers.insert(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::RowOp;
    use rand::SeedableRng;

    fn row(ts: Ts) -> RowChange {
        RowChange { table_id: 7, key: 1, commit_ts: ts, op: RowOp::Insert, value: 1 }
    }

    /// A sink whose dispatcher 9 flushed one row: the put of its temporary object is in
    /// flight (op id and path returned).
    fn flushed_row() -> (rand_chacha::ChaCha8Rng, CloudStorageSink, DispatcherId, u64, String) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut s = CloudStorageSink::new(1);
        let d = DispatcherId(9);
        s.append_row(d, TableSpan::full(7), "test", row(10));
        let mut out = vec![];
        s.flush(None, &mut rng, &mut out);
        let StorageRequest::Put { op_id, path, .. } = out[0].clone() else { panic!("{:?}", out) };
        (rng, s, d, op_id, path)
    }

    #[test]
    fn flush_is_put_then_rename_then_durable() {
        let (_, mut s, d, op_id, path) = flushed_row();
        assert!(path.contains(".tmp."));
        let mut out2 = vec![];
        assert_eq!(s.on_result(op_id, Ok(()), &mut out2), FlushOutcome::Pending);
        assert!(matches!(out2[0], StorageRequest::Rename { .. }));
        let r = s.on_result(op_id, Ok(()), &mut vec![]);
        assert_eq!(r, FlushOutcome::Durable { dispatcher: d, commit_ts: vec![10], kind: WriteKind::Rows });
    }

    #[test]
    fn a_cancelled_sink_does_not_rename_a_put_that_completes_afterwards() {
        let (_, mut s, _, op_id, _) = flushed_row();
        s.cancel();
        let mut out = vec![];
        assert_eq!(s.on_result(op_id, Ok(()), &mut out), FlushOutcome::Cancelled);
        assert!(out.is_empty(), "no rename after the context was cancelled: {out:?}");
        assert_eq!(s.inflight_count(), 0);
    }

    #[test]
    fn close_during_flush_removes_tmp_and_rename_fails_as_closing() {
        let (mut rng, mut s, d, op_id, path) = flushed_row();
        s.on_result(op_id, Ok(()), &mut vec![]);
        let mut del = vec![];
        s.close_dispatcher(d, &mut rng, &mut del);
        assert_eq!(del, vec![StorageRequest::Delete { paths: vec![path.clone()] }]);
        // The storage then answers the rename with NotFound.
        let r = s.on_result(op_id, Err(StorageError::NotFound(path)), &mut vec![]);
        assert!(matches!(r, FlushOutcome::Failed { closing: true, .. }));
    }

    #[test]
    fn close_flushes_buffered_rows_and_cleans_their_temporary_object() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut s = CloudStorageSink::new(1);
        let d = DispatcherId(9);
        s.append_row(d, TableSpan::full(7), "test", row(10));
        let mut out = vec![];
        s.close_dispatcher(d, &mut rng, &mut out);
        let [StorageRequest::Put { path, .. }, StorageRequest::Delete { paths }] = &out[..] else {
            panic!("{:?}", out)
        };
        assert_eq!(paths, &vec![path.clone()], "the cleanup targets the final flush's temporary object");
        assert!(!s.has_buffered(d));
    }
}
