//! `fuzz --explore`: arguments in; the summary, the failing mutants' scenario files and
//! (with `--save`) seed files out.

use super::{Explore, ExploreResult, Origin, RunRecord};
use crate::args::{parse_bugs, parse_fixes, parse_jobs, parse_range, reproduce_command, FuzzArgs};
use crate::error::{write_atomic, CliError};
use crate::fuzz::{FuzzOutput, ProgressBar};
use crate::result::Outcome;
use crate::scenario::{load, Scenario};
use crate::seedfile::{Expect, SeedFile};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Where failing mutants' scenarios go without `--save` (git-ignored, like `shrink`'s).
pub const DEFAULT_DIR: &str = "reports/runs/explore";

/// Failing mutants whose scenario is written at most (the rest are counted, not saved).
pub const SAVE_CAP: usize = 100;

#[derive(Serialize, Debug)]
pub struct FailingRun {
    pub run: u64,
    pub seed: u64,
    /// `plain` or `mutant`.
    pub origin: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<String>,
    pub outcome: Outcome,
    pub invariant: Option<String>,
    pub trace_hash: String,
    /// A mutant's scenario file (`None` for a plain seed, or past [`SAVE_CAP`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scenario_file: Option<String>,
    pub reproduce: String,
}

#[derive(Serialize, Debug)]
pub struct CorpusJson {
    pub size: usize,
    pub cap: usize,
    pub admitted: u64,
    pub features_seen: usize,
}

/// The `--json` summary.
#[derive(Serialize, Debug)]
pub struct Summary {
    pub scenario: String,
    pub first_seed: u64,
    pub budget: u64,
    pub campaign_seed: u64,
    pub bugs: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fixes: Vec<String>,
    pub jobs: usize,
    pub runs: u64,
    pub plain_runs: u64,
    pub mutant_runs: u64,
    pub passes: u64,
    pub failures: u64,
    /// The position of the first failing run (1-based), the campaign's seeds-to-failure.
    pub first_failure_run: Option<u64>,
    pub stopped_early: bool,
    pub interrupted: bool,
    pub corpus: CorpusJson,
    pub by_outcome: BTreeMap<String, u64>,
    pub by_invariant: BTreeMap<String, u64>,
    pub failing_runs: Vec<FailingRun>,
    /// Equal for two campaigns that ran the same candidates with the same results.
    pub sequence_hash: String,
    pub runs_per_sec: f64,
    pub wall_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<crate::coverage::CoverageJson>,
}

/// The file stem of a failing mutant's scenario.
fn stem(name: &str, campaign_seed: u64, run: u64) -> String {
    format!("{}-explore-c{}-r{}", name, campaign_seed, run)
}

/// Write a failing mutant's scenario as a file that loads (named after the file) and
/// reproduces the run: a header, then the scenario.
fn write_scenario(dir: &Path, stem: &str, text: &str, head: &str) -> Result<PathBuf, CliError> {
    let path = dir.join(format!("{}.toml", stem));
    let mut scn: Scenario = toml::from_str(text).map_err(|e| CliError::ExploreScenario { detail: e.to_string() })?;
    scn.name = stem.to_string();
    let body = toml::to_string(&scn).map_err(|e| CliError::ExploreScenario { detail: e.to_string() })?;
    write_atomic(&path, format!("{}\n{}", head, body)).map_err(CliError::write_file(&path))?;
    // What was written must load (it is a scenario the search already validated).
    load::load_path(&path)?;
    Ok(path)
}

/// `ticdc-sim fuzz SCENARIO --explore`.
pub fn run_explore(a: &FuzzArgs) -> Result<FuzzOutput, CliError> {
    let (first_seed, budget) = match (&a.seeds, a.runs) {
        (_, Some(0)) => return Err(CliError::ZeroExploreRuns),
        (_, Some(n)) => (0, n),
        (Some(s), None) => {
            let r = parse_range(s)?;
            (r.start, r.end - r.start)
        }
        (None, None) => return Err(CliError::ZeroExploreRuns),
    };
    let jobs = parse_jobs(a.jobs)?;
    let bugs = parse_fixes(parse_bugs(&a.bugs)?, &a.fixes)?;
    if a.save.is_some() && !a.fixes.is_empty() {
        return Err(CliError::SaveWithFix);
    }
    if a.save.is_some() && a.no_mask {
        return Err(CliError::SaveWithNoMask);
    }
    if a.stop_after == Some(0) {
        return Err(CliError::ZeroStopAfter);
    }
    let campaign_seed = a.campaign_seed.unwrap_or(0);
    let mut loaded = load::resolve(&a.scenario)?;
    if a.no_mask {
        loaded.scenario.unmask();
    }
    if let Some(e) = a.engine {
        loaded.scenario.engine = e;
    }
    let dir = a.save.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_DIR));
    if a.save.is_some() {
        std::fs::create_dir_all(&dir).map_err(CliError::create_dir("--save directory", &dir))?;
    }
    let bug_names = bugs.names();
    let fix_names = bugs.fix_names();
    let flags = crate::args::run_flags(a.no_mask, a.engine);
    let scenario_ref = load::seed_file_reference(&loaded.path);
    let name = loaded.scenario.name.clone();
    let c = Explore {
        scenario: &loaded.scenario,
        bugs: bugs.clone(),
        first_seed,
        budget,
        campaign_seed,
        jobs,
        mutate: true,
        stop_after: a.stop_after,
        detect: &|r| r.outcome != Outcome::Pass,
    };
    let mut bar = ProgressBar::new(&format!("explore {}", name));
    crate::interrupt::install();
    let mut failing: Vec<FailingRun> = Vec::new();
    let mut error: Option<CliError> = None;
    let mut saver = Saver {
        args: a,
        dir,
        name: name.clone(),
        campaign_seed,
        scenario_ref,
        bugs: bug_names,
        fixes: fix_names,
        flags,
        engine: loaded.scenario.engine,
        saved: 0,
    };
    let r = super::run(&c, &mut |p, rec| {
        bar.update(p);
        if !rec.failed() || error.is_some() {
            return;
        }
        match record_failure(&mut saver, rec) {
            Ok(f) => failing.push(f),
            Err(e) => {
                error = Some(e);
                crate::interrupt::request();
            }
        }
    });
    bar.finish();
    if let Some(e) = error {
        return Err(e);
    }
    let mut s = summarize(&c, &r, failing);
    let mut out = if a.json {
        if a.coverage {
            s.coverage = Some(crate::coverage::to_json(&r.coverage));
        }
        serde_json::to_string(&s).map_err(CliError::serialize("summary"))? + "\n"
    } else {
        format_summary(&s)
    };
    if a.coverage && !a.json {
        out.push_str(&crate::coverage::format_human(&r.coverage));
    }
    let code = if r.interrupted {
        crate::interrupt::EXIT_INTERRUPTED
    } else if s_failures(&r) == 0 {
        0
    } else {
        1
    };
    Ok(FuzzOutput { out, code, new_failures: s_failures(&r), runs: r.runs.len() as u64, coverage: r.coverage })
}

fn s_failures(r: &ExploreResult) -> u64 {
    r.runs.iter().filter(|x| x.failed()).count() as u64
}

/// What writing a failing run's files needs.
struct Saver<'a> {
    args: &'a FuzzArgs,
    dir: PathBuf,
    name: String,
    campaign_seed: u64,
    scenario_ref: String,
    bugs: Vec<&'static str>,
    fixes: Vec<&'static str>,
    /// The flags a reproduce command repeats (`--no-mask`, `--engine`).
    flags: String,
    engine: crate::node::Engine,
    /// Mutant scenarios written so far.
    saved: usize,
}

/// Write what reproduces one failing run (a mutant's scenario; with `--save` its seed
/// file) and describe it.
fn record_failure(x: &mut Saver, rec: &RunRecord) -> Result<FailingRun, CliError> {
    let (a, dir, name, campaign_seed) = (x.args, x.dir.as_path(), x.name.as_str(), x.campaign_seed);
    let (bugs, fixes) = (x.bugs.as_slice(), x.fixes.as_slice());
    let (parent, changes) = match &rec.origin {
        Origin::Plain => (None, Vec::new()),
        Origin::Mutant { parent, changes } => (Some(*parent), changes.clone()),
    };
    let mut scenario_file = None;
    let reference = match (&rec.origin, &rec.text) {
        (Origin::Plain, _) => Some(x.scenario_ref.clone()),
        (Origin::Mutant { .. }, Some(text)) if x.saved < SAVE_CAP => {
            std::fs::create_dir_all(dir).map_err(CliError::create_dir("scenario directory", dir))?;
            let st = stem(name, campaign_seed, rec.run);
            let mut head = String::new();
            let _ = writeln!(
                head,
                "# Written by `ticdc-sim fuzz {} --explore --campaign-seed {}`: run {}, a mutant of run {} ({}).",
                a.scenario,
                campaign_seed,
                rec.run,
                parent.unwrap_or(0),
                changes.join("; ")
            );
            let _ = writeln!(head, "# With seed {} it fails as {}.", rec.seed, describe(rec));
            let path = write_scenario(dir, &st, text, &head)?;
            x.saved += 1;
            let reference = load::seed_file_reference(&path);
            scenario_file = Some(path.display().to_string());
            Some(reference)
        }
        _ => None,
    };
    let reproduce = match &reference {
        Some(r) => reproduce_command(r, rec.seed, bugs, fixes) + x.flags.as_str(),
        None => format!("(scenario not written: more than {} failing mutants)", SAVE_CAP),
    };
    if let (Some(save), Some(reference)) = (&a.save, &reference) {
        let sf = SeedFile {
            scenario: reference.clone(),
            seed: rec.seed,
            bugs: bugs.iter().map(|s| s.to_string()).collect(),
            expect: Expect { outcome: rec.outcome, invariant: rec.invariant().map(String::from), also: Vec::new() },
            trace_hash: rec.trace_hash.clone(),
            note: format!("found by fuzz {} --explore --campaign-seed {} (run {})", a.scenario, campaign_seed, rec.run),
            control: None,
            fixed_by: Vec::new(),
            // The written scenario pins its plan itself.
            swarm_plan: None,
            engine: x.engine,
        };
        let path = sf.save_path(save);
        write_atomic(&path, sf.to_json()).map_err(|source| CliError::WriteSeedFile { path, source })?;
    }
    Ok(FailingRun {
        run: rec.run,
        seed: rec.seed,
        origin: if parent.is_some() { "mutant" } else { "plain" },
        parent,
        changes,
        outcome: rec.outcome,
        invariant: rec.invariant().map(String::from),
        trace_hash: rec.trace_hash.clone(),
        scenario_file,
        reproduce,
    })
}

fn describe(rec: &RunRecord) -> String {
    match rec.invariant() {
        Some(i) => format!("{} ({})", rec.outcome.as_str(), i),
        None => rec.outcome.as_str().to_string(),
    }
}

fn summarize(c: &Explore, r: &ExploreResult, failing_runs: Vec<FailingRun>) -> Summary {
    let mut by_outcome = BTreeMap::new();
    let mut by_invariant = BTreeMap::new();
    for f in r.runs.iter().filter(|x| x.failed()) {
        *by_outcome.entry(f.outcome.as_str().to_string()).or_insert(0) += 1;
        if let Some(i) = f.invariant() {
            *by_invariant.entry(i.to_string()).or_insert(0) += 1;
        }
    }
    let plain_runs = r.runs.iter().filter(|x| x.origin == Origin::Plain).count() as u64;
    let runs = r.runs.len() as u64;
    Summary {
        scenario: c.scenario.name.clone(),
        first_seed: c.first_seed,
        budget: c.budget,
        campaign_seed: c.campaign_seed,
        bugs: c.bugs.names().iter().map(|s| s.to_string()).collect(),
        fixes: c.bugs.fix_names().iter().map(|s| s.to_string()).collect(),
        jobs: c.jobs,
        runs,
        plain_runs,
        mutant_runs: runs - plain_runs,
        passes: runs - s_failures(r),
        failures: s_failures(r),
        first_failure_run: r.runs.iter().find(|x| x.failed()).map(|x| x.run),
        stopped_early: r.stopped_early,
        interrupted: r.interrupted,
        corpus: CorpusJson {
            size: r.corpus_size,
            cap: super::corpus::CAP,
            admitted: r.admitted,
            features_seen: r.features_seen,
        },
        by_outcome,
        by_invariant,
        failing_runs,
        sequence_hash: r.sequence_hash.clone(),
        runs_per_sec: (runs as f64 / r.wall.as_secs_f64().max(1e-9) * 10.0).round() / 10.0,
        wall_ms: r.wall.as_millis() as u64,
        coverage: None,
    }
}

/// How many failing runs the human summary lists.
const SHOWN: usize = 10;

pub fn format_summary(s: &Summary) -> String {
    let mut o = String::new();
    let bugs = if s.bugs.is_empty() { "none".to_string() } else { s.bugs.join(",") };
    let fixes = if s.fixes.is_empty() { String::new() } else { format!("  fixes {}", s.fixes.join(",")) };
    let _ = writeln!(
        o,
        "explore {}  campaign seed {}  budget {} (plain seeds from {})  bugs {}{}  jobs {}",
        s.scenario, s.campaign_seed, s.budget, s.first_seed, bugs, fixes, s.jobs
    );
    let _ = writeln!(
        o,
        "runs: {} ({} plain, {} mutants)  passes: {}  failures: {}{}",
        s.runs,
        s.plain_runs,
        s.mutant_runs,
        s.passes,
        s.failures,
        if s.stopped_early { "  (stopped early: --stop-after reached)" } else { "" }
    );
    if s.interrupted {
        let _ = writeln!(o, "interrupted: {} runs ran; the counts below are for those", s.runs);
    }
    let _ = writeln!(
        o,
        "corpus: {} entries (cap {}, {} admitted), {} coverage features seen; sequence {}",
        s.corpus.size, s.corpus.cap, s.corpus.admitted, s.corpus.features_seen, s.sequence_hash
    );
    if let Some(f) = s.first_failure_run {
        let _ = writeln!(o, "first failure: run {}", f);
    }
    crate::fuzz::write_counts(&mut o, &s.by_outcome, &s.by_invariant);
    if !s.failing_runs.is_empty() {
        let n = s.failing_runs.len().min(SHOWN);
        let _ = writeln!(o, "failing runs (first {} of {}):", n, s.failing_runs.len());
        for f in &s.failing_runs[..n] {
            let from = match f.parent {
                Some(p) => format!("mutant of run {} ({})", p, f.changes.join("; ")),
                None => "plain seed".to_string(),
            };
            let _ = writeln!(
                o,
                "  run {:<5} seed {:<20} {:<9} {:<24} {}",
                f.run,
                f.seed,
                f.outcome.as_str(),
                f.invariant.as_deref().unwrap_or("-"),
                from
            );
            let _ = writeln!(o, "    {}", f.reproduce);
        }
    }
    let _ = writeln!(o, "throughput: {:.1} runs/s ({:.1} s wall)", s.runs_per_sec, s.wall_ms as f64 / 1000.0);
    o
}
