//! What a page's generated blocks say, computed: its seed files, the measured rows, the
//! run the timeline is from, its shrink and the causal slice of the shrunk run.

use super::pages::Page;
use crate::args::parse_bugs;
use crate::error::CliError;
use crate::findings::{run_group, FindingRow, Group};
use crate::report::{causal_slice, Slice};
use crate::runner::swarm::SwarmPlan;
use crate::runner::{run_on_fresh_thread, RunOptions};
use crate::scenario::load;
use crate::seedfile::SeedFile;
use crate::shrink::{self, Size, Stop};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A seed file of the page, as recorded.
#[derive(Clone, Debug)]
pub struct SeedRef {
    pub file: String,
    pub f: SeedFile,
}

/// The page's seed files in page order: its scenarios in order (each by seed), then its
/// seed files of standard scenarios in order.
pub fn page_seeds(page: &Page, dir: &Path) -> Result<Vec<SeedRef>, CliError> {
    let mut all = Vec::new();
    for path in crate::seedfile::collect(dir)? {
        let f = SeedFile::load(&path)?;
        let file = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        if page.owns(&file, &f.scenario) {
            all.push(SeedRef { file, f });
        }
    }
    let rank = |s: &SeedRef| {
        let by_scenario = page.scenarios.iter().position(|x| *x == s.f.scenario);
        let by_file = page.seed_files.iter().position(|x| *x == s.file);
        (by_scenario.unwrap_or(page.scenarios.len() + by_file.unwrap_or(0)), s.f.seed)
    };
    all.sort_by_key(rank);
    Ok(all)
}

/// The candidate fixes of the page: every `fixed_by` of its seed files, first seen first.
pub fn page_fixes(seeds: &[SeedRef]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in seeds {
        for f in &s.f.fixed_by {
            if !out.contains(f) {
                out.push(f.clone());
            }
        }
    }
    out
}

/// The groups whose rows the page shows: the groups of the page's seed files, and for a
/// page scenario without a seed file a group of its own (the page's fixes, no bugs).
pub fn page_groups(page: &Page, seeds: &[SeedRef]) -> Vec<Group> {
    let fixes = page_fixes(seeds);
    let mut out: Vec<Group> = Vec::new();
    for scn in page.scenarios {
        let of: Vec<&SeedRef> = seeds.iter().filter(|s| s.f.scenario == *scn).collect();
        if of.is_empty() {
            out.push((scn.to_string(), vec![], fixes.clone()));
        }
        for s in of {
            let g = (s.f.scenario.clone(), s.f.bugs.clone(), s.f.fixed_by.clone());
            if !out.contains(&g) {
                out.push(g);
            }
        }
    }
    for s in seeds.iter().filter(|s| page.seed_files.contains(&s.file.as_str())) {
        let g = (s.f.scenario.clone(), s.f.bugs.clone(), s.f.fixed_by.clone());
        if !out.contains(&g) {
            out.push(g);
        }
    }
    out
}

/// The rows of `groups`: from `done` (the report's rows) when there, else run now.
pub fn rows_for(
    groups: &[Group],
    done: &mut BTreeMap<Group, FindingRow>,
    seeds: u64,
    jobs: usize,
) -> Result<Vec<FindingRow>, CliError> {
    let mut out = Vec::new();
    for g in groups {
        let row = match done.get(g) {
            Some(r) => r.clone(),
            None => {
                let r = run_group(g, vec![], seeds, jobs)?;
                done.insert(g.clone(), r.clone());
                r
            }
        };
        out.push(row);
    }
    Ok(out)
}

/// The seed the timeline is from.
#[derive(Clone, Debug, PartialEq)]
pub struct Primary {
    pub scenario: String,
    pub seed: u64,
    pub bugs: Vec<String>,
    /// The seed file it is recorded in; `None`: the first failing seed of the scenario.
    pub file: Option<String>,
    /// The seed file's recorded swarm plan: the run pins it instead of drawing.
    pub plan: Option<SwarmPlan>,
    /// The seed file's engine (a scenario's first failing seed: the scenario's).
    pub engine: crate::node::Engine,
}

/// The page's first seed file; else the first failing seed of its scenarios in order.
pub fn primary(seeds: &[SeedRef], rows: &[FindingRow]) -> Option<Primary> {
    if let Some(s) = seeds.first() {
        return Some(Primary {
            scenario: s.f.scenario.clone(),
            seed: s.f.seed,
            bugs: s.f.bugs.clone(),
            file: Some(s.file.clone()),
            plan: s.f.swarm_plan.clone(),
            engine: s.f.engine,
        });
    }
    rows.iter().find_map(|r| {
        r.first_failing_seed.map(|seed| Primary {
            scenario: r.scenario.clone(),
            seed,
            bugs: r.bugs.clone(),
            file: None,
            plan: None,
            engine: crate::scenario::load::resolve(&r.scenario).map(|l| l.scenario.engine).unwrap_or_default(),
        })
    })
}

/// What `shrink` did: the sizes before and after, its runs and why it stopped.
pub struct Shrinking {
    pub before: Size,
    pub after: Size,
    pub runs: usize,
    pub stop: Option<Stop>,
}

/// The run of the timeline (shrunk unless the page says why not) and its slice.
pub struct ShrinkView {
    /// `None`: not shrunk (the page's `no_shrink`).
    pub shrinking: Option<Shrinking>,
    /// `safety (no-data-loss)`.
    pub fails_as: String,
    pub slice: Slice,
    /// Table ID -> scenario name of the shrunk run (empty if its names were not recorded).
    pub tables: Vec<(i64, String)>,
    pub nodes: u32,
}

/// The scenario's names of a run's tables, and its capture count.
fn named(r: &crate::result::RunResult) -> (Vec<(i64, String)>, u32) {
    (r.names.tables.iter().map(|(id, n)| (*id, n.clone())).collect(), r.names.nodes)
}

/// The name `shrink` gives the minimized scenario (so its run, and the scenario name in
/// it, match what `ticdc-sim shrink` writes).
pub fn shrunk_stem(scenario_name: &str, bugs: &[String], seed: u64) -> String {
    let b = if bugs.is_empty() { "nobug".to_string() } else { bugs.join(".") };
    format!("{}-{}-{}-min", scenario_name, b, seed)
}

/// Shrink the primary seed (default budget) and take the causal slice of the shrunk run;
/// with `shrink` false, of the run as recorded.
pub fn shrink_primary(p: &Primary, shrink: bool, log: &mut dyn FnMut(&str)) -> Result<ShrinkView, CliError> {
    let mut loaded = load::resolve(&p.scenario)?;
    if let Some(plan) = &p.plan {
        plan.pin(&mut loaded.scenario);
    }
    loaded.scenario.engine = p.engine;
    let bugs = parse_bugs(&p.bugs)?;
    if !shrink {
        let run = run_on_fresh_thread(&loaded.scenario, p.seed, &bugs, &RunOptions::default());
        let (tables, nodes) = named(&run);
        return Ok(ShrinkView { shrinking: None, fails_as: fails_as(&run), slice: causal_slice(&run), tables, nodes });
    }
    let names: Vec<String> = bugs.names().iter().map(|s| s.to_string()).collect();
    let stem = shrunk_stem(&loaded.scenario.name, &names, p.seed);
    let req = shrink::Request {
        scenario: loaded.scenario,
        seed: p.seed,
        bugs: bugs.clone(),
        max_runs: shrink::DEFAULT_MAX_RUNS,
        path: PathBuf::from(format!("{}.toml", stem)),
    };
    let s = shrink::shrink(&req, log)?;
    let run = s.best_run.clone();
    let (tables, nodes) = named(&run);
    Ok(ShrinkView {
        shrinking: Some(Shrinking {
            before: Size::of(&s.start, &s.start_run),
            after: Size::of(&s.best, &s.best_run),
            runs: s.runs,
            stop: s.stop,
        }),
        fails_as: fails_as(&run),
        slice: causal_slice(&run),
        tables,
        nodes,
    })
}

/// `safety (no-data-loss)`.
fn fails_as(run: &crate::result::RunResult) -> String {
    match crate::fuzz::first_invariant(run) {
        Some(i) => format!("{} ({})", run.outcome.as_str(), i),
        None => run.outcome.as_str().to_string(),
    }
}

/// A 64-bit FNV-1a hash, hex: a fingerprint of what a page's blocks were generated from.
pub fn fnv(parts: &[String]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain(std::iter::once(0u8)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{:016x}", h)
}

/// The inputs' fingerprint: N, the page's mapping, its seed files as recorded (all but
/// the note) and the text of every scenario it names. Cheap, so the freshness test can
/// recompute it without running anything.
pub fn fingerprint(page: &Page, seeds: &[SeedRef], n: u64, primary_seed: Option<u64>) -> Result<String, CliError> {
    let mut parts = vec![format!("n={}", n), format!("primary={:?}", primary_seed), format!("{:?}", page)];
    let mut scenarios: Vec<String> = page.scenarios.iter().map(|s| s.to_string()).collect();
    for s in seeds {
        let f = &s.f;
        parts.push(format!(
            "{} {} {} {:?} {:?} {:?} {}",
            s.file, f.scenario, f.seed, f.bugs, f.fixed_by, f.expect, f.trace_hash
        ));
        // The plan decides the run (and the reproduce commands); none adds nothing, so
        // files without one keep their fingerprint.
        if let Some(p) = &f.swarm_plan {
            parts.push(format!("plan {:?}", p.completed()));
        }
        // Likewise the engine: files of the older one keep their fingerprint.
        if !f.engine.is_capture_loops() {
            parts.push(format!("engine {}", f.engine.name()));
        }
        if !scenarios.contains(&f.scenario) {
            scenarios.push(f.scenario.clone());
        }
    }
    // A scenario's campaigns (the measured rates, a first failing seed) run its engine,
    // which its text names only when it is not the default.
    for scn in scenarios {
        let l = load::resolve(&scn)?;
        parts.push(format!("{} engine {}", l.source, l.scenario.engine.name()));
    }
    Ok(fnv(&parts))
}
