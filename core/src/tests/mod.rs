//! Tests of the scheduling core, by area. `harness` holds the shared builders.

mod harness;

mod assertions;
mod balance;
mod balance_splits;
mod barrier;
mod bootstrap;
mod checkpoint;
mod conformance;
mod db_ddl;
mod failed_changefeed;
mod fencing;
mod local_fence;
mod operators;
mod pipeline;
mod props;
mod redo;
mod redo_maintainer;
mod redo_meta;
mod redo_wire;
mod sink;
mod start_ts;
mod status_watermark;
mod syncpoint;
mod takeover;
mod traffic;
