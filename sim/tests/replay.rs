//! Replays every seed file in the repository's `seeds/` directory through the library
//! (no subprocess, so the corpus stays cheap to run on every `cargo test`).
//!
//! Same judgement as `ticdc-sim replay seeds/`: an outcome or invariant that differs from
//! the file fails the test; a changed trace hash alone is only printed as a warning (any
//! change to the core reorders events; the file still proves what it should).

use std::path::PathBuf;
use ticdc_sim::replay::{prepare, replay, Verdict};
use ticdc_sim::seedfile::collect;

#[test]
fn every_seed_file_replays_as_recorded() {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../seeds"));
    // The directory must exist and be readable even while the corpus is empty.
    let mut files = collect(&dir).unwrap_or_else(|e| panic!("seeds directory: {e}"));
    // Known open findings are replayed too: they must keep failing as recorded until fixed.
    let findings = dir.join("findings");
    if findings.is_dir() {
        files.extend(collect(&findings).unwrap_or_else(|e| panic!("seeds/findings directory: {e}")));
    }
    let mut failures = Vec::new();
    for f in &files {
        let p = prepare(f).unwrap_or_else(|e| panic!("malformed seed file: {e}"));
        match replay(&p) {
            Verdict::Ok => {}
            Verdict::Warning(w) => eprintln!("warning: {}: {}", f.display(), w),
            Verdict::Fail(why) => failures.push(format!("{}: {}", f.display(), why.join("; "))),
        }
    }
    assert!(failures.is_empty(), "{} of {} seed files changed behaviour:\n{}", failures.len(), files.len(), failures.join("\n"));
}
