//! # TiCDC scheduling core, sans-IO
//!
//! A faithful Rust re-implementation of the scheduling protocol between TiCDC's
//! **maintainer** (one per changefeed) and the **dispatcher managers** (one per
//! changefeed per node), for deterministic simulation testing.
//!
//! ## How to drive it
//!
//! Every role is a plain state machine. Its entry points take a [`effects::Ctx`]
//! carrying the current simulated time, the node it runs on, a random generator the
//! caller injects (dispatcher IDs, placement ties, epochs), the [`bugs::Bugs`]
//! switches and the node's active failpoints, plus an [`effects::Out`] buffer. A role
//! never performs IO: it leaves messages, storage requests and trace events in `Out`,
//! and the caller delivers them (later, reordered, or never).
//!
//! - [`coordinator::Coordinator`]: `tick`, `handle_message`, `on_node_change`, with the
//!   persisted [`coordinator::MetaStore`] passed in.
//! - [`maintainer::manager::MaintainerManager`] (per node) routes to
//!   [`maintainer::Maintainer`], whose goroutines are separate entry points:
//!   `handle_message`, `on_tick` (100 ms), `execute_operators`, `run_basic_scheduler`
//!   (+ `finish_pending_admissions` for the two-step admission bug),
//!   `run_balance_scheduler` (the checker loop: the balance scheduler and, with
//!   table-across-nodes, the split-group balance scheduler of
//!   [`maintainer::split_balance`]), `calc_checkpoint`, and API calls `api_move_table` /
//!   `api_split_table` / `api_merge_table`.
//!   `Coordinator::move_maintainer` is the coordinator's MoveMaintainer API.
//! - [`dispatcher::DispatcherOrchestrator`] (per node) creates and routes to
//!   [`dispatcher::DispatcherManager`]s: `handle_message`, `feed` + `process` (event
//!   collector), `flush_sink`, `on_storage_result`, `heartbeat` (200 ms),
//!   `poll_failpoints`.
//!
//! ```
//! use core_sched::{effects::*, bugs::Bugs, types::*, maintainer::manager::MaintainerManager};
//! use rand::SeedableRng;
//! let mut rng = rand::rngs::StdRng::seed_from_u64(1);
//! let (bugs, fps, mut out) = (Bugs::none(), Failpoints::default(), Out::default());
//! let mut ctx = Ctx { now_ms: 0, node: NodeId(0), rng: &mut rng, bugs: &bugs, failpoints: &fps, out: &mut out,
//!     ddl_ts: &core_sched::sink::ddl_ts::NO_DDL_TS, continuations: ContinuationMode::Deferred };
//! let mut mm = MaintainerManager::new(NodeId(0));
//! mm.alive = [NodeId(0), NodeId(1)].into_iter().collect();
//! // Add/remove requests are accepted only from the current coordinator.
//! mm.coordinator = Some(NodeId(0));
//! let add = core_sched::messages::Message::AddMaintainerRequest {
//!     cf: ChangefeedId("cf".into()), config: Default::default(), checkpoint_ts: 100,
//!     is_new_changefeed: true, maintainer_epoch: 1 };
//! mm.handle_message(&mut ctx, NodeId(0), add, &core_sched::maintainer::NoSchema);
//! // The new maintainer asks both nodes to bootstrap.
//! assert_eq!(out.msgs.len(), 2);
//! ```
//!
//! ## Simplifications against TiCDC
//!
//! Each is named where it lives; the main ones: keys are integers per table
//! ([`types`]); redo mode, routes and drain are not modelled (the table-set DDLs are:
//! CREATE/DROP/ALTER DATABASE, RENAME TABLE(S) with their `UpdatedSchemas`, RECOVER
//! TABLE and CREATE TABLES, see [`maintainer::barrier`]); a dispatcher's reported traffic is its span's share of what
//! the upstream wrote, not what it flushed ([`upstream::TrafficView`]); a span's region
//! count is its key-width share of the table's regions
//! ([`upstream::SchemaView::span_region_count`]); the cloud-storage sink has
//! one writer per dispatcher, and a removed dispatcher's last flush races its writer's
//! cleanup ([`sink::cloudstorage`]); syncpoints ([`syncpoint`]) are written by that sink
//! as a storage object (TiCDC writes the record only to MySQL and refuses syncpoints for
//! storage sinks); the fast resend after `IgnoredBlockStatus` is rate-limited
//! ([`dispatcher::basic_dispatcher`]).
//!
//! ## Tests
//!
//! `cargo test -p ticdc-sched-core` runs the unit tests next to each module and the
//! behaviour tests in `src/tests/` (operators, bootstrap restore paths, barrier,
//! checkpoint, epoch fencing, trigger takeover, sink, syncpoints, proptests).

pub mod assertions;
pub mod bugs;
pub mod config;
pub mod coordinator;
pub mod coverage;
pub mod dispatcher;
pub mod effects;
pub mod maintainer;
pub mod messages;
pub mod sink;
pub mod syncpoint;
pub mod types;
pub mod upstream;

#[cfg(test)]
mod tests;
