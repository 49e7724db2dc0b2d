//! `maintainer/barrier_helper_test.go` at b813e76f9: the queue of schedule-requiring events
//! (`pendingScheduleEventMap`), in the core the barrier's `pending_events` set and
//! `pending_pop_if_head`.

use crate::maintainer::barrier::Barrier;

// barrier_helper_test.go:21 TestPendingScheduleEventMapDeduplicate: two events with one
// key are queued once; the head pops once, then the queue is empty.
#[test]
fn ticdc_barrier_helper_TestPendingScheduleEventMapDeduplicate() {
    let mut b = Barrier::default();
    let (event1, event2) = ((10, false), (10, false));
    b.pending_events.insert(event1);
    b.pending_events.insert(event2);
    assert_eq!(b.pending_events.len(), 1);

    assert_eq!(b.pending_pop_if_head(event1), (true, Some(event1)));
    assert_eq!(b.pending_pop_if_head(event1), (false, None));
}

// barrier_helper_test.go:41 TestPendingScheduleEventMapPopIfHead: only the smallest key
// pops; a later one is told which event blocks it.
#[test]
fn ticdc_barrier_helper_TestPendingScheduleEventMapPopIfHead() {
    let mut b = Barrier::default();
    let (event1, event2) = ((10, false), (20, false));
    b.pending_events.insert(event1);
    b.pending_events.insert(event2);

    assert_eq!(b.pending_pop_if_head(event2), (false, Some(event1)));
    assert_eq!(b.pending_pop_if_head(event1), (true, Some(event1)));
    assert_eq!(b.pending_pop_if_head(event2), (true, Some(event2)));
}
