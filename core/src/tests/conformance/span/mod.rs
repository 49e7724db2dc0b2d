//! Span group: TiCDC's tests of the span controller, span replications, the split-span
//! checker, the splitters, the range checkers and the balance scheduler. See
//! `docs/conformance/span.md` for the Go test each case translates and the Go tests
//! left out.

mod support;

mod balance;
mod checkpoint_ts_tracker;
mod coordinator_operator;
mod default_span_split_checker;
mod region_count_splitter;
mod replication_span;
mod span_controller;
mod split_span_checker;
mod table_span_range_checker;
