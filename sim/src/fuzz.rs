//! `fuzz`: run a range of seeds of one scenario on worker threads and summarize.
//!
//! Every seed still runs on its own fresh OS thread ([`run_on_fresh_thread`]), exactly
//! as `scenario --seed` runs it, so a failing seed reproduces bit-identically from its
//! reproduce command. Workers only decide *which* seed runs *when*; the summary is
//! sorted by seed, so it does not depend on `--jobs` (except which seeds ran when
//! `--stop-after` cut the campaign short).

pub use crate::args::{SeedRange, Shard};

use crate::args::{parse_bugs, parse_fixes, parse_jobs, parse_range, parse_shard, reproduce_command, FuzzArgs};
use crate::error::CliError;
use crate::result::{Outcome, RunResult};
use crate::runner::swarm::SwarmPlan;
use crate::runner::{run_on_fresh_thread, RunOptions};
use crate::scenario::Scenario;
use crate::seedfile::SeedFile;
use crate::wallclock::Stopwatch;
use core_sched::bugs::Bugs;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write as _};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// The seeds of one shard of a range, computed by index so a huge range costs nothing.
#[derive(Clone, Copy, Debug)]
pub struct SeedList {
    pub range: SeedRange,
    pub shard: Shard,
}

impl SeedList {
    pub fn len(&self) -> u64 {
        let span = self.range.end - self.range.start;
        if span <= self.shard.index {
            0
        } else {
            (span - self.shard.index - 1) / self.shard.count + 1
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn get(&self, i: u64) -> u64 {
        self.range.start + self.shard.index + i * self.shard.count
    }
}

/// What the campaign keeps of one run (the trace is dropped right away: a campaign over
/// a million seeds must not hold a million traces).
#[derive(Clone, Debug, Serialize)]
pub struct SeedOutcome {
    pub seed: u64,
    pub outcome: Outcome,
    /// The first violation's invariant (`None` for a pass or a crash).
    pub invariant: Option<String>,
    /// Every invariant the run violated, each once, in order of first violation (a
    /// `scenario`/`fuzz` run carries on after its first violation).
    pub invariants: Vec<String>,
    pub trace_hash: String,
    pub sim_time_ms: u64,
    pub wall_ms: u64,
    pub crash: Option<String>,
    /// The seed was rerun for `--check-determinism-ratio` and the two runs differed here.
    pub divergence: Option<crate::cli::Divergence>,
    /// The run's coverage counters, until the campaign adds them to its tally.
    #[serde(skip)]
    pub coverage: Option<core_sched::coverage::Hits>,
}

impl SeedOutcome {
    pub fn of(r: &RunResult) -> SeedOutcome {
        SeedOutcome {
            seed: r.seed,
            outcome: r.outcome,
            invariant: first_invariant(r),
            invariants: all_invariants(r),
            trace_hash: r.trace_hash.clone(),
            sim_time_ms: r.sim_time_ms,
            wall_ms: r.wall_ms,
            crash: r.crash.clone(),
            divergence: None,
            coverage: Some(r.coverage.clone()),
        }
    }
    pub fn failed(&self) -> bool {
        self.outcome != Outcome::Pass
    }
}

/// The invariant of a run's first violation.
pub fn first_invariant(r: &RunResult) -> Option<String> {
    r.violations.first().map(|v| v.invariant.clone())
}

/// Every invariant a run violated, once each, in order of first violation.
pub fn all_invariants(r: &RunResult) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in &r.violations {
        if !out.contains(&v.invariant) {
            out.push(v.invariant.clone());
        }
    }
    out
}

/// One campaign: a scenario, the seeds, the bugs switched on, how to run.
pub struct Campaign<'a> {
    pub scenario: &'a Scenario,
    pub seeds: SeedList,
    pub bugs: Bugs,
    pub jobs: usize,
    /// Stop scheduling new seeds once this many have failed.
    pub stop_after: Option<usize>,
    /// Fraction of the seeds rerun to check determinism (0: none).
    pub determinism_ratio: f64,
    /// Test hook: make runs differ (to exercise the determinism check).
    pub inject_nondeterminism: bool,
    /// Run the reference invariant checks (`--full-checks`).
    pub full_checks: bool,
}

/// Whether `seed` is among the `ratio` of seeds rerun for the determinism check: a hash
/// of the seed, so the sample is the same on every run and spread over the range.
pub fn sampled_for_determinism(seed: u64, ratio: f64) -> bool {
    if ratio <= 0.0 {
        return false;
    }
    let z = crate::mix::splitmix64(seed.wrapping_add(crate::mix::GOLDEN));
    (z as f64) < ratio * (u64::MAX as f64)
}

/// Run one seed (twice when sampled for the determinism check).
fn run_one(c: &Campaign, seed: u64, opts: &RunOptions) -> SeedOutcome {
    let first = run_on_fresh_thread(c.scenario, seed, &c.bugs, opts);
    let mut o = SeedOutcome::of(&first);
    if sampled_for_determinism(seed, c.determinism_ratio) {
        let second = run_on_fresh_thread(c.scenario, seed, &c.bugs, opts);
        let d = crate::cli::compare_runs(&first, &second);
        if !d.ok {
            o.outcome = Outcome::Nondeterminism;
            o.divergence = d.divergence.or(Some(crate::cli::Divergence {
                index: 0,
                at_ms: 0,
                first: Some(format!("trace hash {}", d.trace_hashes[0])),
                second: Some(format!("trace hash {}", d.trace_hashes[1])),
            }));
        }
    }
    o
}

/// Progress of a running campaign, for [`ProgressBar`].
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
    pub failures: u64,
    pub elapsed: Duration,
}

pub struct CampaignResult {
    /// Every seed that ran, in seed order.
    pub runs: Vec<SeedOutcome>,
    /// `--stop-after` ended the campaign before every seed ran.
    pub stopped_early: bool,
    /// An interrupt (Ctrl-C, SIGTERM) ended it before every seed ran.
    pub interrupted: bool,
    pub wall: Duration,
    /// Coverage points reached over every run.
    pub coverage: crate::coverage::Tally,
}

impl CampaignResult {
    pub fn failures(&self) -> impl Iterator<Item = &SeedOutcome> {
        self.runs.iter().filter(|r| r.failed())
    }
    pub fn seeds_per_sec(&self) -> f64 {
        self.runs.len() as f64 / self.wall.as_secs_f64().max(1e-9)
    }
    /// Simulated time of all runs over the campaign's wall time (so with `--jobs N` it
    /// counts every worker): how much faster than real time the campaign explores.
    pub fn sim_wall_ratio(&self) -> f64 {
        let sim: u64 = self.runs.iter().map(|r| r.sim_time_ms).sum();
        sim as f64 / (self.wall.as_secs_f64() * 1000.0).max(1e-9)
    }
}

/// Run every seed of the campaign on `jobs` worker threads. `progress` is called on the
/// calling thread after every finished seed, with its outcome. An interrupt
/// ([`crate::interrupt`]) stops the workers before their next seed.
pub fn run_campaign(c: &Campaign, progress: &mut dyn FnMut(&Progress, &SeedOutcome)) -> CampaignResult {
    let total = c.seeds.len();
    let jobs = c.jobs.max(1).min(total.max(1) as usize);
    let next = AtomicU64::new(0);
    let failures = AtomicUsize::new(0);
    let stopped = AtomicBool::new(false);
    let opts = RunOptions {
        inject_nondeterminism: c.inject_nondeterminism,
        full_checks: c.full_checks,
        ..RunOptions::default()
    };
    let start = Stopwatch::start();
    let mut runs: Vec<SeedOutcome> = Vec::new();
    let mut coverage = crate::coverage::Tally::default();
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<SeedOutcome>();
        for _ in 0..jobs {
            let tx = tx.clone();
            let (next, failures, stopped, opts) = (&next, &failures, &stopped, &opts);
            scope.spawn(move || loop {
                if c.stop_after.is_some_and(|k| failures.load(Ordering::SeqCst) >= k) {
                    stopped.store(true, Ordering::SeqCst);
                    return;
                }
                if crate::interrupt::requested() {
                    return;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= total {
                    return;
                }
                let seed = c.seeds.get(i);
                // run_on_fresh_thread already maps a panic in the seed to `crash`; this
                // also covers a panic in the runner's own plumbing, so one bad seed
                // never takes the campaign down.
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_one(c, seed, opts)))
                    .unwrap_or_else(|_| SeedOutcome {
                        seed,
                        outcome: Outcome::Crash,
                        invariant: None,
                        invariants: Vec::new(),
                        trace_hash: String::new(),
                        sim_time_ms: 0,
                        wall_ms: 0,
                        crash: Some("panic outside the seed thread".into()),
                        divergence: None,
                        coverage: None,
                    });
                if r.failed() {
                    failures.fetch_add(1, Ordering::SeqCst);
                }
                if tx.send(r).is_err() {
                    return;
                }
            });
        }
        drop(tx);
        let mut failed = 0;
        let interrupt_after = crate::interrupt::after_from_env();
        for mut r in rx {
            if let Some(h) = r.coverage.take() {
                coverage.add(&h);
            }
            failed += r.failed() as u64;
            let p = Progress { done: runs.len() as u64 + 1, total, failures: failed, elapsed: start.elapsed() };
            progress(&p, &r);
            runs.push(r);
            if interrupt_after.is_some_and(|k| p.done >= k) {
                crate::interrupt::request();
            }
        }
    });
    runs.sort_by_key(|r| r.seed);
    let stopped_early = stopped.load(Ordering::SeqCst) && (runs.len() as u64) < total;
    let interrupted = crate::interrupt::requested() && (runs.len() as u64) < total;
    CampaignResult { runs, stopped_early, interrupted, wall: start.elapsed(), coverage }
}

/// Progress on stderr: a bar redrawn in place on a terminal, otherwise a plain line at
/// most every 10% (CI logs should not get one line per seed).
pub struct ProgressBar {
    label: String,
    tty: bool,
    last_draw: Option<Stopwatch>,
    next_pct: u64,
    drawn: bool,
}

impl ProgressBar {
    pub fn new(label: &str) -> ProgressBar {
        ProgressBar {
            label: label.to_string(),
            tty: std::io::stderr().is_terminal(),
            last_draw: None,
            next_pct: 10,
            drawn: false,
        }
    }

    pub fn update(&mut self, p: &Progress) {
        let rate = p.done as f64 / p.elapsed.as_secs_f64().max(1e-9);
        let eta = if p.done == 0 { 0.0 } else { (p.total - p.done) as f64 / rate };
        let mut err = std::io::stderr().lock();
        if self.tty {
            // Redrawing costs a syscall; ~10 per second is plenty for a human.
            let due = self.last_draw.is_none_or(|t| t.elapsed() >= Duration::from_millis(100)) || p.done == p.total;
            if !due {
                return;
            }
            self.last_draw = Some(Stopwatch::start());
            const W: u64 = 30;
            let filled = (p.done * W).checked_div(p.total).unwrap_or(W);
            let bar: String = (0..W).map(|i| if i < filled { '#' } else { '.' }).collect();
            let _ = write!(
                err,
                "\r\x1b[2K{} [{}] {}/{}  failures {}  {:.0} seeds/s  ETA {}",
                self.label,
                bar,
                p.done,
                p.total,
                p.failures,
                rate,
                fmt_secs(eta)
            );
            let _ = err.flush();
            self.drawn = true;
        } else {
            let pct = (p.done * 100).checked_div(p.total).unwrap_or(100);
            if pct < self.next_pct && p.done != p.total {
                return;
            }
            self.next_pct = (pct / 10 + 1) * 10;
            let _ = writeln!(
                err,
                "{}: {}/{} seeds ({}%), {} failures, {:.0} seeds/s, ETA {}",
                self.label,
                p.done,
                p.total,
                pct,
                p.failures,
                rate,
                fmt_secs(eta)
            );
        }
    }

    /// Clear the in-place bar so the summary starts on a clean line.
    pub fn finish(&mut self) {
        if self.tty && self.drawn {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
            self.drawn = false;
        }
    }
}

fn fmt_secs(s: f64) -> String {
    if s >= 3600.0 {
        format!("{}h{:02}m", (s / 3600.0) as u64, ((s % 3600.0) / 60.0) as u64)
    } else if s >= 60.0 {
        format!("{}m{:02}s", (s / 60.0) as u64, (s % 60.0) as u64)
    } else {
        format!("{:.0}s", s.ceil())
    }
}

/// Count failures by outcome and by first invariant (sorted maps: stable output).
pub fn tallies(runs: &[SeedOutcome]) -> (BTreeMap<String, u64>, BTreeMap<String, u64>) {
    let (mut by_outcome, mut by_invariant) = (BTreeMap::new(), BTreeMap::new());
    for r in runs.iter().filter(|r| r.failed()) {
        *by_outcome.entry(r.outcome.as_str().to_string()).or_insert(0) += 1;
        if let Some(i) = &r.invariant {
            *by_invariant.entry(i.clone()).or_insert(0) += 1;
        }
    }
    (by_outcome, by_invariant)
}

/// One failing seed in the summary.
#[derive(Serialize, Debug)]
pub struct FailingSeed {
    pub seed: u64,
    pub outcome: Outcome,
    pub invariant: Option<String>,
    /// The failing run's trace hash (a replay on another machine must match it).
    pub trace_hash: String,
    /// For nondeterminism: the first trace record where the two runs differ.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub divergence: Option<crate::cli::Divergence>,
    pub reproduce: String,
}

/// The `--json` summary. Shards of one campaign merge by summing the counts and
/// concatenating `failing_seeds` (see the README).
#[derive(Serialize, Debug)]
pub struct Summary {
    pub scenario: String,
    pub seeds: String,
    pub shard: String,
    pub bugs: Vec<String>,
    /// Candidate fixes switched on (`--fix`); absent from the JSON when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fixes: Vec<String>,
    pub jobs: usize,
    pub runs: u64,
    pub passes: u64,
    pub failures: u64,
    pub stopped_early: bool,
    /// An interrupt ended the campaign: `runs` is what ran.
    pub interrupted: bool,
    pub by_outcome: BTreeMap<String, u64>,
    pub by_invariant: BTreeMap<String, u64>,
    /// Every failing seed, in seed order (the human summary shows the first 10).
    pub failing_seeds: Vec<FailingSeed>,
    pub seeds_per_sec: f64,
    pub sim_wall_ratio: f64,
    pub wall_ms: u64,
    /// With `--coverage`: the coverage points reached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<crate::coverage::CoverageJson>,
}

/// Build the summary; `reproduce` makes the command line for a seed.
pub fn summarize(scenario: &str, c: &Campaign, r: &CampaignResult, reproduce: &dyn Fn(u64) -> String) -> Summary {
    let (by_outcome, by_invariant) = tallies(&r.runs);
    let failing_seeds: Vec<FailingSeed> = r
        .failures()
        .map(|f| FailingSeed {
            seed: f.seed,
            outcome: f.outcome,
            invariant: f.invariant.clone(),
            trace_hash: f.trace_hash.clone(),
            divergence: f.divergence.clone(),
            reproduce: reproduce(f.seed),
        })
        .collect();
    Summary {
        scenario: scenario.to_string(),
        seeds: c.seeds.range.to_string(),
        shard: c.seeds.shard.to_string(),
        bugs: c.bugs.names().iter().map(|s| s.to_string()).collect(),
        fixes: c.bugs.fix_names().iter().map(|s| s.to_string()).collect(),
        jobs: c.jobs,
        runs: r.runs.len() as u64,
        passes: r.runs.iter().filter(|x| !x.failed()).count() as u64,
        failures: failing_seeds.len() as u64,
        stopped_early: r.stopped_early,
        interrupted: r.interrupted,
        by_outcome,
        by_invariant,
        failing_seeds,
        seeds_per_sec: round1(r.seeds_per_sec()),
        sim_wall_ratio: round1(r.sim_wall_ratio()),
        wall_ms: r.wall.as_millis() as u64,
        coverage: None,
    }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// How many failing seeds the human summary lists.
const SHOWN_FAILURES: usize = 10;

pub fn format_summary(s: &Summary) -> String {
    let mut o = String::new();
    let bugs = if s.bugs.is_empty() { "none".to_string() } else { s.bugs.join(",") };
    let shard = if s.shard == "0/1" { String::new() } else { format!("  shard {}", s.shard) };
    let fixes = if s.fixes.is_empty() { String::new() } else { format!("  fixes {}", s.fixes.join(",")) };
    let _ = writeln!(o, "fuzz {}  seeds {}{}  bugs {}{}  jobs {}", s.scenario, s.seeds, shard, bugs, fixes, s.jobs);
    let _ = writeln!(
        o,
        "runs: {}  passes: {}  failures: {}{}",
        s.runs,
        s.passes,
        s.failures,
        if s.stopped_early { "  (stopped early: --stop-after reached)" } else { "" }
    );
    if s.interrupted {
        let _ = writeln!(o, "interrupted: {} seeds ran; the counts below are for those", s.runs);
    }
    write_counts(&mut o, &s.by_outcome, &s.by_invariant);
    if !s.failing_seeds.is_empty() {
        let n = s.failing_seeds.len().min(SHOWN_FAILURES);
        let _ = writeln!(o, "failing seeds (first {} of {}):", n, s.failing_seeds.len());
        for f in &s.failing_seeds[..n] {
            let _ = writeln!(
                o,
                "  seed {:<6} {:<9} {:<30} {}",
                f.seed,
                f.outcome.as_str(),
                f.invariant.as_deref().unwrap_or("-"),
                f.reproduce
            );
            if let Some(d) = &f.divergence {
                let _ = writeln!(o, "    first divergent trace record #{} at {} ms:", d.index, d.at_ms);
                let _ = writeln!(o, "      run 1: {}", d.first.as_deref().unwrap_or("(trace ended)"));
                let _ = writeln!(o, "      run 2: {}", d.second.as_deref().unwrap_or("(trace ended)"));
            }
        }
    }
    let _ = writeln!(
        o,
        "throughput: {:.1} seeds/s, simulated/wall time {:.0}x ({:.1} s wall)",
        s.seeds_per_sec,
        s.sim_wall_ratio,
        s.wall_ms as f64 / 1000.0
    );
    o
}

/// The `fuzz` command.
pub fn cli_fuzz(a: &FuzzArgs) -> Result<(String, i32), CliError> {
    run_fuzz(a).map(|f| (f.out, f.code))
}

/// What a `fuzz` campaign printed and found, for `fuzz` and `coverage`.
pub struct FuzzOutput {
    pub out: String,
    pub code: i32,
    /// Failures not recorded as known open findings.
    pub new_failures: u64,
    pub runs: u64,
    pub coverage: crate::coverage::Tally,
}

/// Run a `fuzz` campaign: its output, exit code and coverage.
pub fn run_fuzz(a: &FuzzArgs) -> Result<FuzzOutput, CliError> {
    if a.explore {
        return crate::explore::output::run_explore(a);
    }
    // clap requires --seeds unless --runs, and --runs requires --explore.
    let range = parse_range(a.seeds.as_deref().unwrap_or_default())?;
    let shard = a.shard.as_deref().map(parse_shard).transpose()?.unwrap_or_default();
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
    let mut loaded = crate::scenario::load::resolve(&a.scenario)?;
    if a.no_mask {
        loaded.scenario.unmask();
    }
    if let Some(e) = a.engine {
        loaded.scenario.engine = e;
    }
    if let Some(dir) = &a.save {
        std::fs::create_dir_all(dir).map_err(CliError::create_dir("--save directory", dir))?;
    }
    // Read the known findings before any seed runs: a bad path is an input error.
    let mut known = Vec::new();
    if let Some(k) = &a.known {
        for path in crate::seedfile::collect(k)? {
            known.push(SeedFile::load(&path)?);
        }
    }
    let bug_names = bugs.names();
    let mut note = format!("found by fuzz {} --seeds {}", a.scenario, range);
    if shard != Shard::default() {
        note.push_str(&format!(" --shard {}", shard));
    }
    for b in &bug_names {
        note.push_str(&format!(" --bug {}", b));
    }
    note.push_str(&crate::args::run_flags(a.no_mask, a.engine));
    let c = Campaign {
        scenario: &loaded.scenario,
        seeds: SeedList { range, shard },
        bugs: bugs.clone(),
        jobs,
        stop_after: a.stop_after,
        determinism_ratio: crate::args::parse_ratio(a.check_determinism_ratio.as_deref())?,
        inject_nondeterminism: a.inject_nondeterminism,
        full_checks: a.full_checks,
    };
    let scenario_ref = crate::scenario::load::seed_file_reference(&loaded.path);
    let mut bar = ProgressBar::new(&format!("fuzz {}", loaded.scenario.name));
    crate::interrupt::install();
    // Each failing seed's file is written as soon as the seed finishes, from what the
    // campaign kept (outcome, first invariant, trace hash): an interrupt or a kill loses
    // none of them, and no rerun is needed.
    let mut save_error = None;
    let mut saved: Vec<(u64, std::path::PathBuf)> = Vec::new();
    let r = run_campaign(&c, &mut |p, o| {
        bar.update(p);
        // A nondeterministic seed has no outcome to record.
        let (Some(dir), true, None) = (&a.save, o.failed() && o.divergence.is_none(), &save_error) else { return };
        let sf = SeedFile {
            scenario: scenario_ref.clone(),
            seed: o.seed,
            bugs: bug_names.iter().map(|s| s.to_string()).collect(),
            expect: crate::seedfile::Expect { outcome: o.outcome, invariant: o.invariant.clone(), also: Vec::new() },
            trace_hash: o.trace_hash.clone(),
            note: note.clone(),
            control: None,
            fixed_by: Vec::new(),
            swarm_plan: SeedFile::plan_for(&loaded.scenario, o.seed),
            engine: loaded.scenario.engine,
        };
        let path = sf.save_path(dir);
        match crate::error::write_atomic(&path, sf.to_json()) {
            Ok(()) => saved.push((o.seed, path)),
            Err(source) => {
                save_error = Some(CliError::WriteSeedFile { path, source });
                crate::interrupt::request();
            }
        }
    });
    bar.finish();
    if let Some(e) = save_error {
        return Err(e);
    }
    let fix_names = bugs.fix_names();
    let flags = crate::args::run_flags(a.no_mask, a.engine);
    let flags = flags.as_str();
    let pages = if a.html {
        saved.sort();
        crate::timeline::fuzz::write_pages(&loaded.scenario, &bugs, &saved, &|seed| {
            reproduce_command(&a.scenario, seed, &bug_names, &fix_names) + flags
        })?
    } else {
        String::new()
    };
    let mut s = summarize(&loaded.scenario.name, &c, &r, &|seed| {
        reproduce_command(&a.scenario, seed, &bug_names, &fix_names) + flags
    });
    // Known open findings: recorded failures that are expected until fixed.
    let mut known_hits = Vec::new();
    let mut older_plans = Vec::new();
    if !known.is_empty() {
        let names = [a.scenario.as_str(), loaded.scenario.name.as_str(), scenario_ref.as_str()];
        let want_bugs: Vec<String> = bug_names.iter().map(|s| s.to_string()).collect();
        s.failing_seeds.retain(|f| {
            let drawn = SeedFile::plan_for(&loaded.scenario, f.seed);
            let k = known_match(&known, &names, &want_bugs, f, drawn.as_ref(), Some(&loaded.scenario));
            match k {
                Known::Yes => known_hits.push(f.seed),
                Known::OlderPlan => older_plans.push(f.seed),
                Known::No => {}
            }
            k != Known::Yes
        });
        s.failures = s.failing_seeds.len() as u64;
    }
    if a.coverage {
        s.coverage = Some(crate::coverage::to_json(&r.coverage));
    }
    let mut out = if a.json {
        serde_json::to_string(&s).map_err(CliError::serialize("summary"))? + "\n"
    } else {
        format_summary(&s)
    };
    if a.coverage && !a.json {
        out.push_str(&crate::coverage::format_human(&r.coverage));
    }
    if let (Some(dir), false, true) = (&a.save, a.json, s.failures > 0) {
        out.push_str(&format!(
            "saved {} seed file{} to {}\n",
            s.failures,
            if s.failures == 1 { "" } else { "s" },
            dir.display()
        ));
    }
    if !a.json {
        out.push_str(&pages);
    }
    if !known_hits.is_empty() && !a.json {
        out.push_str(&format!("known open findings (failing as recorded, not counted): seeds {:?}\n", known_hits));
    }
    if !older_plans.is_empty() && !a.json {
        out.push_str(&format!(
            "new, though a known file records the seed with an older swarm plan (the seed now draws another): seeds {:?}\n",
            older_plans
        ));
    }
    // 130 (128 + SIGINT) says the campaign is incomplete, whatever it found so far.
    let code = if r.interrupted {
        crate::interrupt::EXIT_INTERRUPTED
    } else if r.runs.iter().any(|o| o.outcome == Outcome::Nondeterminism) {
        Outcome::Nondeterminism.exit_code()
    } else if s.failures == 0 {
        0
    } else {
        1
    };
    Ok(FuzzOutput { out, code, new_failures: s.failures, runs: s.runs, coverage: r.coverage })
}

/// Whether a campaign failure is a known open finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Known {
    Yes,
    /// A file records the seed's failure, but for a swarm plan the seed no longer draws:
    /// another run, so the failure is new.
    OlderPlan,
    No,
}

/// Match a failure against the known seed files: same scenario (any of `names`), seed,
/// bugs, outcome and first invariant, the engine of `scn` (a file of another engine is
/// another run: `No`), and, for a file with a recorded swarm plan, the
/// seed's current draw `drawn` is that plan (families the file does not name are off, and
/// with `scn` so are the families that do nothing in that scenario).
/// `OlderPlan`: a file records the seed with another plan (whatever its outcome).
pub fn known_match(
    known: &[SeedFile],
    names: &[&str],
    bugs: &[String],
    f: &FailingSeed,
    drawn: Option<&SwarmPlan>,
    scn: Option<&crate::scenario::Scenario>,
) -> Known {
    let mut want_bugs = bugs.to_vec();
    want_bugs.sort();
    let mut older = false;
    for k in known {
        let mut kb = k.bugs.clone();
        kb.sort();
        if !(names.contains(&k.scenario.as_str()) && k.seed == f.seed && kb == want_bugs) {
            continue;
        }
        // Another engine is another run.
        if scn.is_some_and(|scn| scn.engine != k.engine) {
            continue;
        }
        // Another plan is another run, whatever it failed with.
        match (&k.swarm_plan, drawn) {
            (Some(p), Some(d)) if !scn.map(|scn| p.same_run_in(d, scn)).unwrap_or_else(|| p.same_run(d)) => {
                older = true
            }
            _ if k.expect.outcome == f.outcome && k.expect.invariant == f.invariant => return Known::Yes,
            _ => {}
        }
    }
    if older {
        Known::OlderPlan
    } else {
        Known::No
    }
}

/// The `by outcome:` and `by invariant:` lines of a campaign summary (fuzz and explore).
pub(crate) fn write_counts(o: &mut String, by_outcome: &BTreeMap<String, u64>, by_invariant: &BTreeMap<String, u64>) {
    let join = |m: &BTreeMap<String, u64>| {
        if m.is_empty() {
            "none".to_string()
        } else {
            m.iter().map(|(k, v)| format!("{} {}", k, v)).collect::<Vec<_>>().join(", ")
        }
    };
    let _ = writeln!(o, "by outcome: {}", join(by_outcome));
    let _ = writeln!(o, "by invariant: {}", join(by_invariant));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A known file of swarm seed `seed` failing as `no-data-loss`, with `plan`.
    fn known_file(seed: u64, plan: Option<SwarmPlan>) -> SeedFile {
        let json = format!(
            r#"{{"scenario": "swarm", "seed": {seed}, "expect": {{"outcome": "safety", "invariant": "no-data-loss"}}, "trace_hash": "0123456789abcdef"}}"#
        );
        let mut f = SeedFile::parse(std::path::Path::new("k.json"), &json).unwrap();
        f.swarm_plan = plan;
        f
    }

    fn failing(seed: u64) -> FailingSeed {
        FailingSeed {
            seed,
            outcome: Outcome::Safety,
            invariant: Some("no-data-loss".into()),
            trace_hash: String::new(),
            divergence: None,
            reproduce: String::new(),
        }
    }

    #[test]
    fn a_known_file_matches_only_the_plan_it_recorded() {
        use crate::runner::swarm::plan;
        let names = ["swarm"];
        let m = |k: SeedFile, drawn: &SwarmPlan| known_match(&[k], &names, &[], &failing(9), Some(drawn), None);
        assert_eq!(m(known_file(9, Some(plan(9))), &plan(9)), Known::Yes);
        // The seed draws another plan now (a family joined and is on): a new failure.
        assert_eq!(m(known_file(9, Some(plan(10))), &plan(9)), Known::OlderPlan);
        // Families the file does not name are off: a draw with them off is the same run.
        let mut older = plan(9);
        let off: Vec<String> = older.families.iter().filter(|(_, on)| !**on).map(|(f, _)| f.clone()).collect();
        off.iter().for_each(|f| {
            older.families.remove(f);
        });
        assert_eq!(m(known_file(9, Some(older.clone())), &plan(9)), Known::Yes);
        let mut on = plan(9);
        on.families.insert(off[0].clone(), true);
        assert_eq!(m(known_file(9, Some(older)), &on), Known::OlderPlan);
        // A file without a plan matches as before; another seed or invariant never.
        assert_eq!(m(known_file(9, None), &plan(9)), Known::Yes);
        assert_eq!(m(known_file(8, Some(plan(9))), &plan(9)), Known::No);
        let mut other = known_file(9, Some(plan(9)));
        other.expect.invariant = Some("converges".into());
        assert_eq!(m(other.clone(), &plan(9)), Known::No);
        // Another plan is reported whatever the file's outcome.
        other.swarm_plan = Some(plan(10));
        assert_eq!(m(other, &plan(9)), Known::OlderPlan);
    }

    #[test]
    fn a_known_file_matches_only_runs_of_its_engine() {
        use crate::node::Engine;
        let mut scn = crate::scenario::load::resolve("swarm").unwrap().scenario;
        scn.engine = Engine::CaptureLoops;
        let drawn = crate::runner::swarm::plan(9);
        let m = |k: &SeedFile, scn: &crate::scenario::Scenario| {
            known_match(std::slice::from_ref(k), &["swarm"], &[], &failing(9), Some(&drawn), Some(scn))
        };
        let mut k = known_file(9, Some(drawn.clone()));
        assert_eq!(m(&k, &scn), Known::Yes);
        scn.engine = Engine::RoleLoops;
        assert_eq!(m(&k, &scn), Known::No);
        k.engine = Engine::RoleLoops;
        assert_eq!(m(&k, &scn), Known::Yes);
    }

    #[test]
    fn shards_partition() {
        let range = SeedRange { start: 5, end: 15 };
        let mut all = Vec::new();
        for i in 0..3 {
            let l = SeedList { range, shard: Shard { index: i, count: 3 } };
            let seeds: Vec<u64> = (0..l.len()).map(|k| l.get(k)).collect();
            assert!(seeds.iter().all(|s| (s - 5) % 3 == i));
            all.extend(seeds);
        }
        all.sort();
        assert_eq!(all, (5..15).collect::<Vec<_>>());
        assert_eq!(SeedList { range: SeedRange { start: 0, end: 1 }, shard: Shard { index: 1, count: 2 } }.len(), 0);
    }
}
