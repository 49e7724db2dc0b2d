//! `downstreamadapter/dispatcher/table_progress_test.go` at b813e76f9. The model keeps a
//! dispatcher's table progress inside the dispatcher (`progress`, `max_commit_ts`, the
//! block event write in flight), so each case drives a dispatcher: `Add` is a row (or a
//! block event write) handed to the sink, `PostFlush` the sink flushing it, `Pass` a
//! passed block event.

use super::support::*;
use crate::messages::*;
use crate::tests::harness::*;
use crate::upstream::*;

// table_progress_test.go:24: a row at 2 keeps the checkpoint at 1 (not empty), still 1
// once flushed (empty); a passed DDL at 4 moves it to 3.
#[test]
#[ignore = "deviation: a passed block event lifts the dispatcher's resolved ts to its commit ts (Go: table progress at commitTs-1); the simulator relies on it so a restarted span does not handle a DDL twice"]
fn ticdc_table_progress_TestTableProgress() {
    let mut t = Disp::uncomplete();
    assert!(t.d.progress.is_empty());
    t.handle(vec![ev_row(2)]);
    assert!(!t.d.progress.is_empty());
    assert_eq!(t.d.checkpoint_ts(), 1);
    assert_eq!(t.d.max_commit_ts, 2);
    t.flush();
    assert!(t.d.progress.is_empty());
    assert_eq!(t.d.checkpoint_ts(), 1);
    t.handle(vec![ev_ddl(ddl(4, normal(&[1])))]);
    t.action(ActionKind::Pass, 4, false);
    assert_eq!(t.d.checkpoint_ts(), 3);
    assert!(t.d.progress.is_empty());
}

// table_progress_test.go:70: a syncpoint in the table progress keeps the checkpoint at
// commitTs-1, while written and after; a passed one too.
#[test]
#[ignore = "deviation: a written or passed syncpoint lifts the dispatcher's resolved ts to its commit ts (Go: table progress at commitTs-1); the simulator relies on it so a restarted span does not handle a block event twice"]
fn ticdc_table_progress_TestSyncPointEventCommitTs() {
    let mut t = Disp::uncomplete();
    for s in [40, 60] {
        t.handle(vec![UpstreamEvent::SyncPoint(s)]);
        t.action(ActionKind::Write, s, true);
        assert_eq!(t.d.checkpoint_ts(), s - 1, "written, not yet flushed");
        t.written(s, true);
        assert_eq!(t.d.checkpoint_ts(), s - 1, "flushed");
    }
    t.handle(vec![UpstreamEvent::SyncPoint(80)]);
    t.action(ActionKind::Pass, 80, true);
    assert_eq!(t.d.checkpoint_ts(), 79);
}

// table_progress_test.go:137: rows sharing a commit ts count separately; the checkpoint
// stays below the oldest unflushed one, and at the last one minus one once all are flushed.
#[test]
fn ticdc_table_progress_TestMultiSameCommitTsStartTsPair() {
    let mut t = Disp::complete();
    let len = |t: &Disp| t.d.progress.values().sum::<u32>();
    t.handle(vec![ev_row(2), ev_row(2)]);
    assert!(!t.d.progress.is_empty());
    assert_eq!(t.d.checkpoint_ts(), 1);
    assert_eq!(t.d.max_commit_ts, 2);
    assert_eq!(len(&t), 2);
    // The first of the two rows at 2 is flushed.
    *t.d.progress.get_mut(&2).unwrap() -= 1;
    assert_eq!(t.d.checkpoint_ts(), 1);
    assert!(!t.d.progress.is_empty());
    assert_eq!(len(&t), 1);
    t.handle(vec![ev_row(4)]);
    assert_eq!(len(&t), 2);
    // The second row at 2 is flushed.
    t.d.progress.remove(&2);
    assert_eq!(t.d.checkpoint_ts(), 3);
    assert!(!t.d.progress.is_empty());
    assert_eq!(len(&t), 1);
    t.d.progress.remove(&4);
    assert_eq!(t.d.checkpoint_ts(), 3);
    assert!(t.d.progress.is_empty());
    assert_eq!(len(&t), 0);
}
