//! # The simulator
//!
//! Runs the sans-IO core (`core_sched`) inside a seeded, single-threaded madsim
//! simulation. See the README for the CLI and `scenarios/README.md` for the scenario format.
//!
//! - [`world`]: nodes, network (latency, loss, duplication, spikes, cuts, the capture's
//!   heartbeat-collector and dispatcher-side queues of [`lanes`]), storage, the
//!   trace and the per-step invariant checks; [`node`]: one madsim task per TiCDC
//!   goroutine of a capture; [`runner`]: one seed (steps, workload, converge, checks).
//! - [`invariants`]: the checkers and their stable names.
//! - [`fuzz`], [`replay`], [`seedfile`], [`report`] (with its causal slice over the
//!   typed [`causes`] of a run), [`timeline`] (the `--html` page), [`zoo`], [`shrink`],
//!   [`explore`] (the coverage-guided `fuzz --explore`): the daily workflow; [`names`]:
//!   how reports and pages name captures, tables and dispatchers;
//!   [`cli`] on top of them, [`args`] (the shared argument parsers) and [`error`] (what a
//!   command reports as bad input) below them.
//!
//! To add a scenario, write a TOML file in `scenarios/` (format and a worked example in
//! `scenarios/README.md`); `ticdc-sim list` shows it and CI fuzzes it. To add a step or
//! predicate, extend `scenario::format::Step`/`Predicate`, its validation in
//! `scenario::load` and its execution in `runner`.

#[cfg(not(madsim))]
compile_error!("ticdc-sim must be built with `--cfg madsim`. Run cargo from the repository root so .cargo/config.toml applies; if you set RUSTFLAGS yourself it replaces the config file's flags, so include it: RUSTFLAGS=\"--cfg madsim\".");

pub mod args;
pub mod causes;
pub mod checkers;
pub mod cli;
pub mod coverage;
pub mod coverage_cmd;
pub mod error;
pub mod explore;
pub mod findings;
pub mod fuzz;
pub mod interrupt;
pub mod lanes;
pub mod mix;
pub mod names;
pub mod node;
pub mod pin_plans;
pub mod replay;
pub mod report;
pub mod result;
pub mod runner;
pub mod scenario;
pub mod seedfile;
pub mod session;
pub mod shrink;
pub mod storage;
pub mod target;
pub mod timeline;
pub mod trace;
pub mod upstream;
pub mod wallclock;
pub mod world;
pub mod writeups;
pub mod zoo;
