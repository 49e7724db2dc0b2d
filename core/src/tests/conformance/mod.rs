//! The conformance suite: TiCDC's own unit tests of the scheduling core at b813e76f9,
//! translated as literally as the core's API allows.
//!
//! Naming: `ticdc_<Go file stem without _test>_<Go test name>[_<sub-case>]`, so
//! `cargo test -p ticdc-sched-core ticdc_` runs exactly this suite and a TiCDC engineer can
//! grep for the Go name. Each case carries its Go file:line in a comment. A case the core
//! does not match on purpose is `#[ignore = "deviation: <why>"]`; the list of those, and of
//! Go tests the model cannot express, is in `docs/fidelity.md` ("Conformance suite").
#![allow(non_snake_case)]

mod barrier;
mod disp;
mod mctl;
mod op;
mod span;
