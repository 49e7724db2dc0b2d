//! The `--html` timeline page of one run: a lane per capture, messages as arrows from
//! send to handling, dispatchers, operators and maintainers as bars over their
//! lifetimes, violations marked where they fire, and a filter by table or dispatcher.
//! One self-contained file (inline CSS, JS and JSON data), in the spirit of Jepsen's
//! timeline.html and ShiViz's space-time diagrams.
//!
//! - [`record`]: what a run records for the page (off unless `RunOptions::timeline`);
//! - [`page`]: the bounded, named data the page draws (scenario names, a window of at
//!   most a few thousand records around the first violation);
//! - [`html`]: the page itself; [`fuzz`]: pages of a campaign's saved seeds.

pub mod fuzz;
pub mod html;
pub mod page;
pub mod record;

pub use html::write;
pub use record::Recorder;

use core_sched::types::TableId;

/// What a run hands over for its page: the recording and the names to show.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub recorder: Recorder,
    /// Captures in the cluster (`n0` .. `n<nodes-1>`).
    pub nodes: u32,
    /// Every table the upstream ever had, by ID, with its scenario name.
    pub tables: Vec<(TableId, String)>,
}
