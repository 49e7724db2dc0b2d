//! `fuzz --save DIR --html`: the timeline page of each saved failing seed, next to its
//! seed file. The campaign does not record (it would slow every seed down); each saved
//! seed reruns once with recording on, which is the same run (recording draws nothing).

use crate::error::CliError;
use crate::runner::{run_on_fresh_thread, RunOptions};
use crate::scenario::Scenario;
use core_sched::bugs::Bugs;
use std::path::PathBuf;

/// At most this many pages per campaign (each is a rerun and a few MB).
pub const PAGE_CAP: usize = 20;

/// Write the pages of `saved` (seed, seed file), in seed order; the lines to print.
pub fn write_pages(
    scn: &Scenario,
    bugs: &Bugs,
    saved: &[(u64, PathBuf)],
    reproduce: &dyn Fn(u64) -> String,
) -> Result<String, CliError> {
    let opts = RunOptions { timeline: true, ..RunOptions::default() };
    let mut out = String::new();
    for (seed, file) in saved.iter().take(PAGE_CAP) {
        let r = run_on_fresh_thread(scn, *seed, bugs, &opts);
        let page = file.with_extension("html");
        super::html::write_to(&page, &r, &reproduce(*seed))?;
        out.push_str(&format!("timeline: {}\n", page.display()));
    }
    if saved.len() > PAGE_CAP {
        out.push_str(&format!(
            "timeline: {} more saved seeds have no page (at most {} per campaign; `scenario --seed N --html` writes one)\n",
            saved.len() - PAGE_CAP,
            PAGE_CAP
        ));
    }
    Ok(out)
}
