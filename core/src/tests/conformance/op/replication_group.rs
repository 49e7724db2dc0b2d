//! pkg/scheduler/replica/replication_group_test.go: no case is expressible.
//!
//! - `TestIMapLenTracksOverwriteAndDelete` (:62) tests the length counter of Go's
//!   internal `iMap`; the model keeps tasks in a `BTreeMap`.
//! - `TestGetAbsentByGroupStopsAtBatch` (:79) and `TestGetAbsentByGroupSkipsNotRunnableTasks`
//!   (:103) count calls of a replication's `ShouldRun` predicate in `GetAbsentByGroup`;
//!   the model has no `ShouldRun` (every absent task may run) and no per-group absent
//!   query with a batch.
