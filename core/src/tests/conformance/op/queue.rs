//! pkg/scheduler/operator/operator_queue_test.go against the running heap
//! (`core/src/maintainer/operator/queue.rs`).

use crate::maintainer::operator::queue::{OperatorQueue, QueueEntry};

/// operator_queue_test.go:101 `TestOperatorQueue`: raw `Push` appends, `Less` orders by
/// poll time, and after `heap.Init` the entries pop earliest first.
#[test]
fn ticdc_operator_queue_TestOperatorQueue() {
    let mut queue = OperatorQueue::new();
    let now = 1_000_000;
    let hour = 3_600_000;
    let op1 = QueueEntry { slot: 1, notify_at: now + hour };
    let op2 = QueueEntry { slot: 2, notify_at: now };
    let op3 = QueueEntry { slot: 3, notify_at: now + 2 * hour };

    queue.push_raw(op1);
    assert_eq!(queue.len(), 1);
    queue.push_raw(op2);
    queue.push_raw(op3);
    assert_eq!(queue.len(), 3);

    assert!(queue.less(1, 0), "op2 should be before op1");
    assert!(queue.less(1, 2), "op2 should be before op3");

    queue.heap_init();
    assert_eq!(queue.heap_pop().map(|e| e.slot), Some(2));
    assert_eq!(queue.heap_pop().map(|e| e.slot), Some(1));
    assert_eq!(queue.heap_pop().map(|e| e.slot), Some(3));
}
