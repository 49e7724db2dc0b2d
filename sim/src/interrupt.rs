//! Ctrl-C and SIGTERM during a campaign: the first stops it after the seeds in flight and
//! reports what ran (failing seeds saved, summary printed); a second exits at once.
//! Nothing in here reaches a simulated run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

/// Exit code of a command an interrupt ended early (128 + SIGINT): what ran is reported,
/// but the run is incomplete.
pub const EXIT_INTERRUPTED: i32 = 130;

static REQUESTED: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// Environment variable for tests: request the interrupt once this many seeds finished,
/// as a signal would (the same path as the handler).
pub const INTERRUPT_AFTER_ENV: &str = "TICDC_SIM_INTERRUPT_AFTER";

/// Install the handler (once per process). A failure to install only loses the graceful
/// stop: the default action (exit) stays.
pub fn install() {
    INSTALL.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            if REQUESTED.swap(true, Ordering::SeqCst) {
                eprintln!("\ninterrupted again: exiting now");
                std::process::exit(130);
            }
            eprintln!("\ninterrupt: finishing the seeds in flight, then reporting (again to exit now)");
        });
    });
}

/// Ask the running campaign to stop.
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Whether a stop was asked for.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// The test hook's threshold, if set to a number.
pub fn after_from_env() -> Option<u64> {
    std::env::var(INTERRUPT_AFTER_ENV).ok()?.parse().ok()
}
