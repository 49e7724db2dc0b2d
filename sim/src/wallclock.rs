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

/// While a single run takes more than `after` of wall time, print a progress line on
/// stderr every `every` (simulated time reached, events), so a long run is not silent.
/// Dropping the returned guard stops the watcher.
pub struct ProgressWatch {
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ProgressWatch {
    pub fn start(
        label: String,
        p: std::sync::Arc<crate::runner::RunProgress>,
        after: Duration,
        every: Duration,
    ) -> ProgressWatch {
        use std::sync::atomic::Ordering::Relaxed;
        let started = Instant::now();
        let line = move |p: &crate::runner::RunProgress| {
            eprintln!(
                "{}: still running after {:.0} s wall: simulated {:.1} s, {} events",
                label,
                started.elapsed().as_secs_f64(),
                p.sim_ms.load(Relaxed) as f64 / 1000.0,
                p.events.load(Relaxed)
            );
        };
        // `after` zero (a test hook) prints the first line before the run starts, so it
        // is there however fast the run is.
        let mut wait = after;
        if after.is_zero() {
            line(&p);
            wait = every;
        }
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            // A message or a closed channel ends the watch.
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(wait) {
                line(&p);
                wait = every;
            }
        });
        ProgressWatch { stop: Some(tx), thread: Some(thread) }
    }
}

impl Drop for ProgressWatch {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
