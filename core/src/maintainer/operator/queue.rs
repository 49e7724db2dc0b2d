//! The running queue: a binary min-heap of operator entries ordered by their next poll
//! time (`OperatorQueue`, pkg/scheduler/operator/operator_queue.go:35-65).
//!
//! Go keeps the queue as a slice behind `container/heap`; the order among entries with
//! equal poll times follows from that package's sift-up/sift-down steps, not from
//! insertion order. This type performs the same steps on a `Vec`, so entries with equal
//! times leave the heap in the order Go's heap would return them.
//!
//! The raw slice operations (`push_raw`, `pop_raw`, `less`, `swap`) are the
//! `heap.Interface` methods; `heap_*` are the `container/heap` functions on top.

/// One heap entry: the slot of an operator in the controller and when it is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueEntry {
    pub slot: u64,
    pub notify_at: u64,
}

#[derive(Clone, Debug, Default)]
pub struct OperatorQueue {
    items: Vec<QueueEntry>,
}

impl OperatorQueue {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    pub fn entries(&self) -> &[QueueEntry] {
        &self.items
    }
    /// `Less`: strictly earlier poll time.
    pub fn less(&self, i: usize, j: usize) -> bool {
        self.items[i].notify_at < self.items[j].notify_at
    }
    pub fn swap(&mut self, i: usize, j: usize) {
        self.items.swap(i, j);
    }
    /// `Push` of the interface: append without restoring the heap order.
    pub fn push_raw(&mut self, e: QueueEntry) {
        self.items.push(e);
    }
    /// `Pop` of the interface: remove the last element.
    pub fn pop_raw(&mut self) -> Option<QueueEntry> {
        self.items.pop()
    }

    /// `heap.Init`.
    pub fn heap_init(&mut self) {
        let n = self.len();
        if n < 2 {
            return;
        }
        for i in (0..n / 2).rev() {
            self.down(i, n);
        }
    }
    /// `heap.Push`.
    pub fn heap_push(&mut self, e: QueueEntry) {
        self.push_raw(e);
        let last = self.len() - 1;
        self.up(last);
    }
    /// `heap.Pop`: the entry with the earliest poll time.
    pub fn heap_pop(&mut self) -> Option<QueueEntry> {
        if self.is_empty() {
            return None;
        }
        let n = self.len() - 1;
        self.swap(0, n);
        self.down(0, n);
        self.pop_raw()
    }

    fn up(&mut self, mut j: usize) {
        while j > 0 {
            let parent = (j - 1) / 2;
            if parent == j || !self.less(j, parent) {
                break;
            }
            self.swap(parent, j);
            j = parent;
        }
    }

    fn down(&mut self, i0: usize, n: usize) {
        let mut i = i0;
        loop {
            let left = 2 * i + 1;
            if left >= n {
                break;
            }
            let mut child = left;
            let right = left + 1;
            if right < n && self.less(right, left) {
                child = right;
            }
            if !self.less(child, i) {
                break;
            }
            self.swap(i, child);
            i = child;
        }
    }
}
