//! Barrier group: `maintainer/barrier_test.go`, `barrier_event_test.go`,
//! `barrier_helper_test.go` and `block_status_dedupe_test.go` at b813e76f9, against
//! `maintainer::barrier`. The status table is `docs/conformance/barrier.md`.

mod support;

// Named after the core module `maintainer::barrier`, like the Go file.
#[allow(clippy::module_inception)]
mod barrier;
mod barrier_event;
mod barrier_helper;
mod block_status_dedupe;
mod pending_order;
