//! `maintainer/span/checkpoint_ts_tracker_test.go`: TiCDC's heap of the checkpoints of
//! non-replicating spans. The model keeps no separate tracker: the span controller scans
//! its Absent and Scheduling tasks ([`SpanController::min_non_replicating_checkpoint`]).
//! Tracking a span is adding it Absent, updating it is a status, untracking it is
//! marking it Replicating.

use super::support::*;
use crate::maintainer::span_controller::SpanController;
use crate::tests::harness::*;

// checkpoint_ts_tracker_test.go:23 — the minimum over tracked spans follows updates and
// untracking; with nothing tracked there is no minimum.
#[test]
fn ticdc_checkpoint_ts_tracker_TestCheckpointTsTrackerMin() {
    let mut sc: SpanController = controller(false);
    sc.insert(span_rep(11, 1, 100, 100));
    sc.insert(span_rep(12, 1, 101, 80));
    sc.insert(span_rep(13, 1, 102, 80));
    assert_eq!(sc.min_non_replicating_checkpoint(), Some(80));
    sc.update_status(&d(12), &working(d(12), 120));
    assert_eq!(sc.min_non_replicating_checkpoint(), Some(80));
    sc.mark_replicating(&d(13));
    assert_eq!(sc.min_non_replicating_checkpoint(), Some(100));
    sc.mark_replicating(&d(11));
    assert_eq!(sc.min_non_replicating_checkpoint(), Some(120));
    sc.mark_replicating(&d(12));
    assert_eq!(sc.min_non_replicating_checkpoint(), None);
}

// checkpoint_ts_tracker_test.go:60 — an update of an untracked span does not track it.
#[test]
fn ticdc_checkpoint_ts_tracker_TestCheckpointTsTrackerIgnoresMissingUpdate() {
    let mut sc = controller(false);
    sc.update_status(&d(11), &working(d(11), 100));
    sc.mark_replicating(&d(11));
    assert_eq!(sc.min_non_replicating_checkpoint(), None);
    assert!(sc.get(&d(11)).is_none());
}

// checkpoint_ts_tracker_test.go:73 — after many updates of one span, untracking the
// blocking one leaves the moving span's latest checkpoint as the minimum. (Go also
// asserts its heap holds two entries, not one per update: the model has no heap.)
#[test]
fn ticdc_checkpoint_ts_tracker_TestCheckpointTsTrackerRemovesStaleCheckpointTs() {
    let mut sc = controller(false);
    sc.insert(span_rep(11, 1, 100, 1));
    sc.insert(span_rep(12, 1, 101, 2));
    for cp in 3..100 {
        sc.update_status(&d(12), &working(d(12), cp));
    }
    assert_eq!(sc.min_non_replicating_checkpoint(), Some(1));
    sc.mark_replicating(&d(11));
    assert_eq!(sc.min_non_replicating_checkpoint(), Some(99));
}
