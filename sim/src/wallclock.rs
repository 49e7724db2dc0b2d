//! The one place the simulator reads the host's clock: progress bars, ETAs and the
//! `wall_ms` of a report. Nothing read here ever reaches a simulated run, so determinism
//! holds (clippy's `disallowed-types` forbids `Instant` everywhere else).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::time::{Duration, Instant};

/// A wall-clock stopwatch, started on creation.
#[derive(Clone, Copy, Debug)]
pub struct Stopwatch(Instant);

impl Stopwatch {
    pub fn start() -> Stopwatch {
        Stopwatch(Instant::now())
    }

    pub fn elapsed(&self) -> Duration {
        self.0.elapsed()
    }
}
