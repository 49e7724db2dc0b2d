//! # The simulator
//!
//! Runs the sans-IO core (`core_sched`) inside a seeded, single-threaded madsim
//! simulation. See the README for the CLI and `scenarios/README.md` for the scenario format.

#[cfg(not(madsim))]
compile_error!("ticdc-sim must be built with `--cfg madsim`. Run cargo from the repository root so .cargo/config.toml applies; if you set RUSTFLAGS yourself it replaces the config file's flags, so include it: RUSTFLAGS=\"--cfg madsim\".");

pub mod cli;
pub mod invariants;
pub mod node;
pub mod result;
pub mod storage;
pub mod trace;
pub mod upstream;
pub mod world;
pub mod runner;
pub mod scenario;
pub mod fuzz;
pub mod seedfile;
pub mod replay;
pub mod report;
pub mod zoo;
