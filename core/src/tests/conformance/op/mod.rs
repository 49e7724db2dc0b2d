//! Group op: TiCDC's operator and operator-controller unit tests
//! (maintainer/operator/*_test.go, pkg/scheduler/operator/operator_queue_test.go,
//! pkg/scheduler/replica/replication_group_test.go at b813e76f9). The table of cases and
//! the Go tests left out is in `docs/conformance/op.md`.

mod support;

mod add;
mod controller;
mod merge;
mod move_op;
mod occupy;
mod queue;
mod remove;
mod replication_group;
mod split;
