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

/// What a run hands over for its page: the recording (names: `RunResult::names`).
#[derive(Clone, Debug)]
pub struct Recorded {
    pub recorder: Recorder,
    /// Captures in the cluster (`n0` .. `n<nodes-1>`).
    pub nodes: u32,
}

#[cfg(test)]
mod tests {
    use super::{page, record};
    use crate::runner::{run_on_fresh_thread, RunOptions};

    /// Recording is invisible to the run (same trace hash, outcome and trace), and what it
    /// records is there: handled messages, a maintainer, dispatchers with their tables.
    #[test]
    fn recording_changes_nothing_and_records_the_run() {
        let p = format!("{}/../scenarios/move_maintainer_with_delayed_messages.toml", env!("CARGO_MANIFEST_DIR"));
        let s = crate::scenario::load::resolve(&p).unwrap().scenario;
        let bugs = crate::args::parse_bugs(&["no-epoch-fencing".into()]).unwrap();
        let plain = run_on_fresh_thread(&s, 24, &bugs, &RunOptions::default());
        let rec = run_on_fresh_thread(&s, 24, &bugs, &RunOptions { timeline: true, ..RunOptions::default() });
        assert!(plain.timeline.is_none());
        assert_eq!((&plain.trace_hash, plain.outcome, &plain.trace), (&rec.trace_hash, rec.outcome, &rec.trace));
        let t = rec.timeline.as_deref().unwrap();
        assert!(t.recorder.msgs.iter().filter(|m| m.recv_ms.is_some()).count() > 100);
        assert!(t.recorder.msgs.iter().all(|m| m.recv_ms.is_none_or(|r| r >= m.send_ms)));
        let has = |f: &dyn Fn(&record::BarKey) -> bool| t.recorder.bars.iter().any(|b| f(&b.key));
        assert!(has(&|k| matches!(k, record::BarKey::Maintainer { .. })));
        assert!(has(&|k| matches!(k, record::BarKey::Operator { .. })));
        assert!(t
            .recorder
            .bars
            .iter()
            .any(|b| matches!(b.key, record::BarKey::Dispatcher { .. }) && b.table == Some(100)));
        assert_eq!(rec.names.table(100), "t1");
        // The page marks the violation and names the captures as the scenario does.
        let page = page::build(&rec, Some(t), "cmd");
        assert_eq!(page.violations[0].invariant, "epoch-fencing");
        assert_eq!(page.lanes.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(), ["n0", "n1", "n2"]);
    }
}
