//! `pin-plans`: write the swarm plan each seed draws into the seed files of swarm
//! scenarios that do not record one yet, so they keep their runs when families join the
//! swarm. A file is written only if the pinned run is the run the file records (its trace
//! hash; for a file whose hash is stale, the run the seed draws now).

use crate::args::parse_bugs;
use crate::error::CliError;
use crate::runner::{run_on_fresh_thread, RunOptions};
use crate::seedfile::SeedFile;
use std::fmt::Write as _;
use std::path::Path;

/// What became of one file.
enum Pinned {
    Written,
    /// Already records a plan, or its scenario is not a swarm.
    Skipped,
    /// The pinned run is another run: the file is left as it was.
    Differs(String),
}

fn pin_one(path: &Path, f: &mut SeedFile) -> Result<Pinned, CliError> {
    let mut scn = crate::scenario::load::resolve(&f.scenario)
        .map_err(|e| crate::seedfile::SeedFileError::Scenario { path: path.into(), source: Box::new(e) })?
        .scenario;
    // The file's run is of its engine (a file without a plan is one of the older engine).
    scn.engine = f.engine;
    let Some(plan) = SeedFile::plan_for(&scn, f.seed).filter(|_| f.swarm_plan.is_none()) else {
        return Ok(Pinned::Skipped);
    };
    let bugs = parse_bugs(&f.bugs).map_err(|source| crate::seedfile::SeedFileError::Name {
        path: path.into(),
        field: "bugs",
        source,
    })?;
    let mut pinned = scn.clone();
    plan.pin(&mut pinned);
    let opts = RunOptions::default();
    let got = run_on_fresh_thread(&pinned, f.seed, &bugs, &opts);
    if got.trace_hash != f.trace_hash || f.trace_hash.is_empty() {
        let drawn = run_on_fresh_thread(&scn, f.seed, &bugs, &opts);
        if (drawn.trace_hash.as_str(), drawn.outcome) != (got.trace_hash.as_str(), got.outcome) {
            return Ok(Pinned::Differs(format!(
                "the pinned run is not the drawn run (trace hash {} vs {})",
                got.trace_hash, drawn.trace_hash
            )));
        }
    }
    f.swarm_plan = Some(plan);
    crate::error::write_atomic(path, f.to_json()).map_err(CliError::write_file(path))?;
    Ok(Pinned::Written)
}

/// The `pin-plans FILE|DIR` command: every file is read and checked before any is run.
pub fn cli_pin_plans(arg: &str) -> Result<(String, i32), CliError> {
    let files = crate::seedfile::collect(Path::new(arg))?;
    if files.is_empty() {
        return Err(CliError::NoSeedFiles { what: "pin-plans", path: arg.into() });
    }
    let mut loaded = files.iter().map(|p| SeedFile::load(p).map(|f| (p, f))).collect::<Result<Vec<_>, _>>()?;
    let (mut out, mut written, mut differ) = (String::new(), 0, 0);
    for (path, f) in loaded.iter_mut() {
        match pin_one(path, f)? {
            Pinned::Written => {
                written += 1;
                let _ = writeln!(out, "pinned   {}: plan of seed {}", path.display(), f.seed);
            }
            Pinned::Skipped => {}
            Pinned::Differs(why) => {
                differ += 1;
                let _ = writeln!(out, "FAIL     {}: {}; left as it was", path.display(), why);
            }
        }
    }
    let _ = writeln!(
        out,
        "{} of {} files pinned, {} left as they were ({} could not be)",
        written,
        files.len(),
        files.len() - written,
        differ
    );
    Ok((out, if differ > 0 { 1 } else { 0 }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan-less file of the older engine gets the plan its seed draws, checked against
    /// its own run (the pinned run of its engine has its hash).
    #[test]
    fn a_plan_is_pinned_into_a_file_of_the_older_engine() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../seeds/findings/swarm-nobug-391.json");
        let mut f = SeedFile::load(&src).unwrap();
        assert!(f.engine.is_capture_loops());
        let plan = f.swarm_plan.take().unwrap();
        let dir = std::env::temp_dir().join(format!("pin-plans-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.json");
        std::fs::write(&path, f.to_json()).unwrap();
        assert!(matches!(pin_one(&path, &mut f).unwrap(), Pinned::Written));
        let back = SeedFile::load(&path).unwrap();
        assert!(back.swarm_plan.unwrap().same_run(&plan));
        assert_eq!(back.engine, crate::node::Engine::CaptureLoops);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
