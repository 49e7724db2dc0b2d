//! Whether a controller's books changed since an observer last looked: for the span
//! controller, its set of tasks and their spans; for the operator controller, its set of
//! operators. Not TiCDC behaviour: the simulator's maintainer checker re-reads a
//! maintainer's books only after they changed, instead of after every step.

/// Set by every change of the books; taken (read and cleared) by the observer. A new
/// controller starts changed: nobody has looked at it yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BooksChanged(bool);

impl Default for BooksChanged {
    fn default() -> Self {
        BooksChanged(true)
    }
}

impl BooksChanged {
    pub fn mark(&mut self) {
        self.0 = true;
    }

    /// Whether the books changed since the last call.
    pub fn take(&mut self) -> bool {
        std::mem::replace(&mut self.0, false)
    }
}

#[cfg(test)]
mod tests {
    use super::BooksChanged;

    #[test]
    fn a_change_is_seen_once() {
        let mut b = BooksChanged::default();
        assert!(b.take(), "a new controller has never been looked at");
        assert!(!b.take());
        b.mark();
        b.mark();
        assert!(b.take());
        assert!(!b.take());
    }
}
