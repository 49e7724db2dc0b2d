//! Assertions (TigerStyle "always"): each role's own invariants, checked at its
//! transitions. A failed one becomes an [`Observation::AssertionFailed`] that the
//! simulator reports as the safety violation `assert:<name>`; a passing one costs a
//! branch (the detail string is built only on failure) and leaves no trace, so adding
//! one cannot change the trace of a run that keeps it.
//!
//! A role with a [`Ctx`] checks with [`Ctx::always`]. One without (the operator and span
//! controllers, the barrier, a dispatcher) records into its own [`Failures`] and its
//! owner moves them into the [`Ctx`]: the maintainer's parts by
//! [`crate::maintainer::manager::MaintainerManager::flush_assertions`] after each step,
//! a dispatcher's through its [`crate::dispatcher::basic_dispatcher::DispatcherEffects`].

use crate::effects::{Ctx, Observation, Out};

macro_rules! assertions {
    ($($id:ident = $name:literal, $desc:literal;)*) => {
        /// One declared assertion; [`ASSERTIONS`] holds its name and description.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(u16)]
        pub enum Assertion { $($id),* }
        impl Assertion {
            pub const ALL: &'static [Assertion] = &[$(Assertion::$id),*];
        }
        /// Every assertion, in declaration order (`Assertion as usize` indexes it).
        pub const ASSERTIONS: &[Decl] = &[$(Decl { assertion: Assertion::$id, name: $name, description: $desc }),*];
    };
}

/// An assertion's declaration.
#[derive(Clone, Copy, Debug)]
pub struct Decl {
    pub assertion: Assertion,
    /// `role.what`, stable: violations are reported as `assert:<name>`.
    pub name: &'static str,
    pub description: &'static str,
}

assertions! {
    // ------------------------------------------------------------ maintainer
    MaintainerRemovingSendsNoSchedule = "maintainer.removing_sends_no_schedule", "a removing maintainer sends scheduling requests only for the operators it let run (its table trigger's)";
    MaintainerWatermarkNoRegress = "maintainer.watermark_no_regress", "a node's stored watermark never goes back: a newer sequence number, or a checkpoint not lower within one";
    // ------------------------------------------------------------ operator controller
    OcOneOperatorPerDispatcher = "oc.one_operator_per_dispatcher", "an admitted operator never replaces a running operator of the same dispatcher";
    OcPostFinishOnFinished = "oc.post_finish_on_finished", "an operator's PostFinish runs only once it finished (or a DDL removed its task)";
    // ------------------------------------------------------------ span controller
    SpanReplicatingHasNode = "span.replicating_has_node", "a span marked Replicating is bound to a node";
    SpanInsertNewId = "span.insert_new_id", "a task is never inserted over a live task of the same dispatcher ID (which would lose its state and node)";
    // ------------------------------------------------------------ barrier
    BarrierStatusFromOwner = "barrier.status_from_owner", "a block status the barrier takes comes from the node its dispatcher's task is bound to";
    BarrierWriterReported = "barrier.writer_reported", "the writer chosen for a block event is the trigger of a DB/All event or a dispatcher that reported the event";
    // ------------------------------------------------------------ dispatcher
    DispatcherOnePendingBlock = "dispatcher.one_pending_block", "a dispatcher reports a new block event only when none is pending (none is dropped unanswered)";
    DispatcherBlockWriteAfterRows = "dispatcher.block_write_after_rows", "a dispatcher writes a block event (DDL or syncpoint) only once every earlier row of it is durable";
    // ------------------------------------------------------------ dispatcher manager
    DmNoCreateAfterClose = "dm.no_create_after_close", "a dispatcher manager whose write path is closed creates no dispatcher";
    DmDispatcherIdUnique = "dm.dispatcher_id_unique", "a dispatcher manager never adds a dispatcher over a live one of the same ID";
    // ------------------------------------------------------------ coordinator
    CoordinatorEpochIncreases = "coordinator.epoch_increases", "a new maintainer of a changefeed gets an epoch above the persisted one and the last generation's";
    CoordinatorEpochNoRegress = "coordinator.epoch_no_regress", "a maintainer the coordinator discovers (adopts) is of an epoch not below the one it knew";
}

/// How many assertions are declared.
pub const COUNT: usize = ASSERTIONS.len();

impl Assertion {
    pub fn decl(self) -> &'static Decl {
        &ASSERTIONS[self as usize]
    }
    pub fn name(self) -> &'static str {
        self.decl().name
    }
}

/// The declaration of an assertion by its name.
pub fn by_name(name: &str) -> Option<&'static Decl> {
    ASSERTIONS.iter().find(|d| d.name == name)
}

/// One failed check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub assertion: Assertion,
    pub detail: String,
}

/// Failed checks of a role without a [`Ctx`], until its owner moves them out. Bounded:
/// past [`Failures::CAP`] between two drains only the count grows (the first ones name
/// the cause).
#[derive(Clone, Debug, Default)]
pub struct Failures {
    list: Vec<Failure>,
    dropped: usize,
}

impl Failures {
    pub const CAP: usize = 16;

    /// Record a failure of `a` unless `cond` holds; `detail` runs only on failure.
    #[inline]
    pub fn check(&mut self, a: Assertion, cond: bool, detail: impl FnOnce() -> String) {
        if !cond {
            self.fail(a, detail());
        }
    }

    #[cold]
    fn fail(&mut self, assertion: Assertion, detail: String) {
        if self.list.len() < Self::CAP {
            self.list.push(Failure { assertion, detail });
        } else {
            self.dropped += 1;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Failure> {
        self.list.iter()
    }

    /// Move every failure into `out` as observations.
    pub fn drain_into(&mut self, out: &mut Out) {
        if self.list.is_empty() {
            return;
        }
        let dropped = std::mem::take(&mut self.dropped);
        let n = self.list.len();
        for (i, f) in self.list.drain(..).enumerate() {
            let detail = if i + 1 == n && dropped > 0 { format!("{} (+{} more)", f.detail, dropped) } else { f.detail };
            out.observe(Observation::AssertionFailed { assertion: f.assertion, detail });
        }
    }
}

impl Ctx<'_> {
    /// Check assertion `a` at this transition: when `cond` is false, record it (with
    /// `detail`, built only then) for the simulator to report as `assert:<name>`.
    #[inline]
    pub fn always(&mut self, a: Assertion, cond: bool, detail: impl FnOnce() -> String) {
        if !cond {
            self.out.observe(Observation::AssertionFailed { assertion: a, detail: detail() });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_role_dot_what_and_indexed_by_variant() {
        let mut seen = std::collections::BTreeSet::new();
        for (i, d) in ASSERTIONS.iter().enumerate() {
            assert_eq!(d.assertion as usize, i);
            assert!(seen.insert(d.name), "duplicate {}", d.name);
            assert!(d.name.split_once('.').is_some_and(|(r, w)| !r.is_empty() && !w.is_empty()), "{}", d.name);
            assert_eq!(by_name(d.name).map(|x| x.assertion), Some(d.assertion));
        }
        assert_eq!(Assertion::ALL.len(), COUNT);
    }

    #[test]
    fn failures_build_no_detail_on_success_and_are_bounded() {
        let mut f = Failures::default();
        f.check(Assertion::SpanReplicatingHasNode, true, || unreachable!("no string work on success"));
        assert!(f.is_empty());
        for i in 0..Failures::CAP + 3 {
            f.check(Assertion::SpanReplicatingHasNode, false, || format!("n{}", i));
        }
        let mut out = Out::default();
        f.drain_into(&mut out);
        assert!(f.is_empty());
        assert_eq!(out.observations.len(), Failures::CAP);
        let last = &out.observations.last().unwrap().what;
        assert!(
            matches!(last, Observation::AssertionFailed { detail, .. } if detail.ends_with("(+3 more)")),
            "{last:?}"
        );
    }
}
