//! The `ticdc-sim` command line: `list`, `scenario`, `bugs`, `fuzz`, `replay`,
//! `pin-plans`, `zoo`, `findings`, `coverage`, `shrink`.
//!
//! Exit codes: 0 pass, 1 safety, 2 usage error or bad input, 3 liveness, 4 crash,
//! 5 nondeterminism. Bad input is reported as one `error: ...` line on stderr.

use crate::args::{parse_bugs, parse_fixes, parse_jobs, reproduce_command, FuzzArgs};
use crate::error::CliError;
use crate::result::{Outcome, RunResult, TraceRecord};
use crate::runner::{run_on_fresh_thread, RunOptions};
use crate::scenario::load;
use crate::target::RunTarget;
use clap::{Args, Parser, Subcommand};
use core_sched::bugs::{Bugs, ALL_BUGS, ALL_FIXES};
use serde::Serialize;
use std::fmt::Write as _;
use std::io::Write as _;

/// A single run that takes longer than this (wall seconds) prints a progress line on
/// stderr, and again every as many seconds.
const LONG_RUN_SECS: u64 = 3;

/// Test hook: the progress line's first delay in milliseconds instead of `LONG_RUN_SECS`.
pub const PROGRESS_AFTER_ENV: &str = "TICDC_SIM_PROGRESS_AFTER_MS";

fn long_run_after() -> std::time::Duration {
    match std::env::var(PROGRESS_AFTER_ENV).ok().and_then(|v| v.parse().ok()) {
        Some(ms) => std::time::Duration::from_millis(ms),
        None => std::time::Duration::from_secs(LONG_RUN_SECS),
    }
}

/// Exit code for usage errors and bad input.
pub const EXIT_USAGE: i32 = 2;

#[derive(Parser, Debug)]
#[command(name = "ticdc-sim", version, about = "Deterministic simulation testbed for TiCDC's scheduling protocol")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List the scenarios with their one-line descriptions.
    List,
    /// Run one seed of a scenario.
    Scenario(ScenarioArgs),
    /// List the historical bugs that `--bug` can switch back on.
    Bugs,
    /// List the invariants the checkers hold, with their family (checker file) and what
    /// each guards.
    Invariants,
    /// Run a range of seeds of one scenario in parallel and summarize the failures.
    Fuzz(FuzzArgs),
    /// Rerun seed files (a file, or every *.json in a directory) and check them.
    Replay(ReplayArgs),
    /// Record each swarm seed file's drawn plan in it (`swarm_plan`), so the file keeps
    /// its run when families join the swarm; a file is written only if the run is the same.
    PinPlans(ReplayArgs),
    /// Run every historical bug against its scenario and tabulate detection.
    Zoo(ZooArgs),
    /// Run every known open finding with and without its candidate fix and tabulate.
    Findings(FindingsArgs),
    /// Fuzz several scenarios over one seed range and report the core's coverage points
    /// reached (`--gate`: fail when a must-reach point was never reached).
    Coverage(crate::coverage_cmd::CoverageArgs),
    /// Reduce a failing seed to a minimal scenario that fails the same way.
    Shrink(crate::args::ShrinkArgs),
    /// Seeds to first failure of every open finding and named bug: plain seeds against
    /// `fuzz --explore`, a few campaigns each (a markdown table on stdout).
    ExploreMeasure(crate::explore::measure::MeasureArgs),
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// A seed file, or a directory whose *.json files are replayed in name order.
    #[arg(value_name = "FILE|DIR")]
    pub path: String,
}

#[derive(Args, Debug)]
pub struct ZooArgs {
    /// Seeds per bug (seeds 0..N).
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub seeds: u64,
    /// Worker threads (default: available parallelism).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Where to write bug-zoo.md and bug-zoo.json (default: reports/runs/, git-ignored;
    /// `--report-dir reports` refreshes the committed reports/bug-zoo.*).
    #[arg(long, value_name = "DIR", default_value = "reports/runs")]
    pub report_dir: std::path::PathBuf,
    /// Only these bugs (repeatable; default: every bug).
    #[arg(long = "bug", value_name = "NAME")]
    pub bugs: Vec<String>,
    /// How the captures' periodic loops run (default: each scenario's `engine`).
    #[arg(long, value_enum)]
    pub engine: Option<crate::node::Engine>,
}

#[derive(Args, Debug)]
pub struct FindingsArgs {
    /// The findings' seed files (a directory of *.json).
    #[arg(long, value_name = "DIR", default_value = "seeds/findings")]
    pub dir: std::path::PathBuf,
    /// Seeds per finding scenario (seeds 0..N).
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub seeds: u64,
    /// Worker threads (default: available parallelism).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Where to write findings.md and findings.json (default: reports/runs/, git-ignored;
    /// `--report-dir reports` refreshes the committed reports/findings.*).
    #[arg(long, value_name = "DIR", default_value = "reports/runs")]
    pub report_dir: std::path::PathBuf,
    /// Also rewrite the generated blocks (timeline, reproduce, measured) of the finding
    /// pages in DIR: shrinks each page's seed and runs scenarios without a seed file.
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = "docs/findings")]
    pub write_docs: Option<std::path::PathBuf>,
    /// With --write-docs: only this page (repeatable; `03`, the slug or the file name).
    #[arg(long = "page", value_name = "NAME")]
    pub pages: Vec<String>,
}

#[derive(Args, Debug)]
pub struct ScenarioArgs {
    /// Scenario name (from scenarios/) or path to a .toml file.
    #[arg(value_name = "NAME|PATH", required_unless_present = "seed_file")]
    pub scenario: Option<String>,
    /// Seed to run (unsigned 64-bit integer).
    #[arg(long, allow_hyphen_values = true, required_unless_present = "seed_file")]
    pub seed: Option<String>,
    /// Re-introduce a historical bug (repeatable; see `ticdc-sim bugs`).
    #[arg(long = "bug", value_name = "NAME")]
    pub bugs: Vec<String>,
    /// Run a seed file's run instead: its scenario, seed and bugs, with its recorded swarm
    /// plan (`swarm_plan`) instead of the seed's draw.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["scenario", "seed", "bugs"])]
    pub seed_file: Option<std::path::PathBuf>,
    /// Switch on a candidate fix for an open finding (repeatable; see `ticdc-sim bugs`).
    #[arg(long = "fix", value_name = "NAME")]
    pub fixes: Vec<String>,
    /// Print one JSON object instead of the human report.
    #[arg(long)]
    pub json: bool,
    /// Run TiCDC's code exactly as it is: drop the scenario's masked findings
    /// (`mask-findings`, by default `fresh-status-watermark`).
    #[arg(long)]
    pub no_mask: bool,
    /// Run the seed twice and compare the traces.
    #[arg(long)]
    pub check_determinism: bool,
    /// Print the full trace before the report.
    #[arg(short, long)]
    pub verbose: bool,
    /// Write `reports/<scenario>-<seed>.{md,json}` even if the run passes (a failing run
    /// always writes them unless --no-report).
    #[arg(long, conflicts_with = "no_report")]
    pub report: bool,
    /// Do not write a report for a failing run.
    #[arg(long)]
    pub no_report: bool,
    /// Also write `reports/<scenario>-<seed>.html`, whatever the outcome: a timeline page
    /// (a lane per capture, messages as arrows, dispatcher/operator/maintainer bars,
    /// violations, a table and dispatcher filter) in one self-contained file.
    #[arg(long)]
    pub html: bool,
    /// Directory for reports (default: reports/ in the current directory).
    #[arg(long, value_name = "DIR", default_value = "reports")]
    pub report_dir: std::path::PathBuf,
    /// Test hook: make runs differ (to exercise --check-determinism).
    #[arg(long, hide = true)]
    pub inject_nondeterminism: bool,
    /// Run the reference invariant checks instead of the fast ones (they report the same
    /// violations; slower with many tables).
    #[arg(long)]
    pub full_checks: bool,
    /// How the captures' periodic loops run (default: the scenario's `engine`); a seed
    /// file runs the engine it records.
    #[arg(long, value_enum, conflicts_with = "seed_file")]
    pub engine: Option<crate::node::Engine>,
}

/// Parse the arguments, run the command, print, and return the exit code.
pub fn main_with_args<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => return clap_error(e),
    };
    match run(cli) {
        Ok((out, code)) => {
            print_out(&out);
            code
        }
        Err(e) => {
            eprintln!("error: {}", e);
            EXIT_USAGE
        }
    }
}

/// Help and version go to stdout with exit 0; a usage error becomes one `error:` line.
fn clap_error(e: clap::Error) -> i32 {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            e.exit()
        }
        _ => {
            // clap's message is the first paragraph; usage and tips follow a blank line.
            let text = e.render().to_string();
            let msg: Vec<&str> = text.lines().map(str::trim).take_while(|l| !l.is_empty()).collect();
            eprintln!("{} (see --help)", msg.join(" "));
            EXIT_USAGE
        }
    }
}

fn print_out(s: &str) {
    // Ignore a closed pipe (`ticdc-sim list | head`).
    let _ = std::io::stdout().lock().write_all(s.as_bytes());
}

/// The checkers' registry as a table (`ticdc-sim invariants`).
fn format_invariants() -> String {
    let w = crate::checkers::REGISTRY.iter().map(|i| i.name.len()).max().unwrap_or(0);
    let mut o = String::from("invariants (sim/src/checkers/<family>.rs):\n");
    for i in crate::checkers::REGISTRY {
        o.push_str(&format!("  {:<w$}  {:<10}  {}\n", i.name, i.family, i.guards, w = w));
    }
    o.push_str("end checks of a scenario (its [[checks]]) are reported as check:<name>\n");
    let asserts = core_sched::assertions::ASSERTIONS;
    let w = asserts.iter().map(|a| a.name.len()).max().unwrap_or(0);
    o.push_str("assertions inside the core (core/src/assertions.rs), reported as assert:<name>:\n");
    for a in asserts {
        o.push_str(&format!("  {:<w$}  {}\n", a.name, a.description, w = w));
    }
    o
}

/// Run a parsed command: the text for stdout and the exit code, or a one-line error.
pub fn run(cli: Cli) -> Result<(String, i32), CliError> {
    if let Some(d) = std::env::var_os(load::SCENARIOS_ENV).filter(|d| !d.is_empty()) {
        if !std::path::Path::new(&d).is_dir() {
            return Err(CliError::ScenariosDir { path: d.into() });
        }
    }
    match cli.command {
        Command::List => Ok((format_list(&load::list()), 0)),
        Command::Bugs => Ok((format_bugs(), 0)),
        Command::Invariants => Ok((format_invariants(), 0)),
        Command::Scenario(a) => run_scenario(&a),
        Command::Fuzz(a) => crate::fuzz::cli_fuzz(&a),
        Command::Replay(a) => crate::replay::cli_replay(&a.path),
        Command::PinPlans(a) => crate::pin_plans::cli_pin_plans(&a.path),
        Command::Zoo(a) => {
            crate::zoo::cli_zoo(a.seeds, parse_jobs(a.jobs)?, &a.report_dir, &parse_bugs(&a.bugs)?, a.engine)
        }
        Command::Findings(a) => {
            let docs = match (&a.write_docs, a.pages.is_empty()) {
                (Some(dir), _) => Some(crate::writeups::DocsRequest { dir: dir.clone(), pages: a.pages.clone() }),
                (None, true) => None,
                (None, false) => return Err(CliError::PageWithoutWriteDocs),
            };
            crate::findings::cli_findings(&a.dir, a.seeds, parse_jobs(a.jobs)?, &a.report_dir, docs.as_ref())
        }
        Command::Coverage(a) => crate::coverage_cmd::cli_coverage(&a),
        Command::Shrink(a) => crate::shrink::cli_shrink(&a),
        Command::ExploreMeasure(a) => crate::explore::measure::cli_measure(&a),
    }
}

/// The JSON report: the run result plus the reproduce line and determinism details.
#[derive(Serialize)]
struct JsonReport<'a> {
    #[serde(flatten)]
    result: &'a RunResult,
    reproduce: Option<String>,
    determinism: Option<Determinism>,
}

/// Outcome of `--check-determinism`.
#[derive(Serialize, Clone, Debug)]
pub struct Determinism {
    pub ok: bool,
    pub trace_hashes: [String; 2],
    pub outcomes: [Outcome; 2],
    pub divergence: Option<Divergence>,
}

/// The first trace record where two runs differ (`None` on a side whose trace ended).
#[derive(Serialize, Clone, Debug)]
pub struct Divergence {
    pub index: usize,
    pub at_ms: u64,
    pub first: Option<String>,
    pub second: Option<String>,
}

fn run_scenario(a: &ScenarioArgs) -> Result<(String, i32), CliError> {
    let target = RunTarget::resolve(a.scenario.as_deref(), a.seed.as_deref(), &a.bugs, a.seed_file.as_deref())?;
    let seed = target.seed;
    let bugs = parse_fixes(parse_bugs(&target.bug_names)?, &a.fixes)?;
    let mut loaded = target.scenario.clone();
    if a.no_mask {
        loaded.unmask();
    }
    if let Some(e) = a.engine {
        loaded.engine = e;
    }
    let progress = std::sync::Arc::new(crate::runner::RunProgress::default());
    let opts = RunOptions {
        verbose: false,
        inject_nondeterminism: a.inject_nondeterminism,
        progress: Some(progress.clone()),
        timeline: a.html,
        full_checks: a.full_checks,
    };
    let watch = crate::wallclock::ProgressWatch::start(
        format!("scenario {} seed {}", loaded.name, seed),
        progress,
        long_run_after(),
        std::time::Duration::from_secs(LONG_RUN_SECS),
    );
    let mut result = run_on_fresh_thread(&loaded, seed, &bugs, &opts);
    let determinism = a.check_determinism.then(|| {
        let second = run_on_fresh_thread(&loaded, seed, &bugs, &opts);
        compare_runs(&result, &second)
    });
    drop(watch);
    if determinism.as_ref().is_some_and(|d| !d.ok) {
        result.outcome = Outcome::Nondeterminism;
    }
    let reproduce = (result.outcome != Outcome::Pass).then(|| reproduce_line(a, &target, &bugs));
    if a.report || (result.outcome != Outcome::Pass && !a.no_report) {
        let rep = reproduce.clone().unwrap_or_else(|| reproduce_line(a, &target, &bugs));
        match crate::report::write(&a.report_dir, &result, &rep) {
            Ok((md, json)) => eprintln!("report: {} {}", md.display(), json.display()),
            // Asked for explicitly, a report that cannot be written is an error; written
            // by default for a failure, it must not hide the run's own exit code.
            Err(e) if a.report => return Err(e),
            Err(e) => eprintln!("warning: {}", e),
        }
    }
    if a.html {
        let rep = reproduce.clone().unwrap_or_else(|| reproduce_line(a, &target, &bugs));
        let path = crate::timeline::write(&a.report_dir, &result, &rep)?;
        eprintln!("timeline: {}", path.display());
    }
    let out = if a.json {
        let report = JsonReport { result: &result, reproduce, determinism };
        serde_json::to_string(&report).map_err(CliError::serialize("report"))? + "\n"
    } else {
        format_report(&loaded.name, &result, a.verbose, determinism.as_ref(), reproduce.as_deref())
    };
    Ok((out, result.outcome.exit_code()))
}

/// Compare two runs of one seed: same trace hash and outcome, else the first divergence.
pub fn compare_runs(a: &RunResult, b: &RunResult) -> Determinism {
    let ok = a.trace_hash == b.trace_hash && a.outcome == b.outcome;
    let divergence = if ok { None } else { first_divergence(&a.trace, &b.trace) };
    Determinism {
        ok,
        trace_hashes: [a.trace_hash.clone(), b.trace_hash.clone()],
        outcomes: [a.outcome, b.outcome],
        divergence,
    }
}

/// The first index where two traces differ, or `None` if they are identical.
pub fn first_divergence(a: &[TraceRecord], b: &[TraceRecord]) -> Option<Divergence> {
    let index = (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i))?;
    let (x, y) = (a.get(index), b.get(index));
    let at_ms = x.or(y).map(|r| r.at_ms).unwrap_or(0);
    let line = |r: &TraceRecord| r.line().trim().to_string();
    Some(Divergence { index, at_ms, first: x.map(line), second: y.map(line) })
}

/// A copy-pasteable command that reruns this seed.
fn reproduce_line(a: &ScenarioArgs, t: &RunTarget, bugs: &Bugs) -> String {
    let mut s = match &t.seed_file {
        Some(_) => {
            let fixes: String = bugs.fix_names().iter().map(|f| format!(" --fix {}", f)).collect();
            format!("cargo run --release -- scenario {}{}", t.args(), fixes)
        }
        None => reproduce_command(&t.scenario_ref, t.seed, &bugs.names(), &bugs.fix_names()),
    };
    s.push_str(&crate::args::run_flags(a.no_mask, a.engine));
    if a.check_determinism {
        s.push_str(" --check-determinism");
    }
    if a.inject_nondeterminism {
        s.push_str(" --inject-nondeterminism");
    }
    s
}

// ---------------------------------------------------------------------------------
// Human output
// ---------------------------------------------------------------------------------

fn secs(ms: u64) -> String {
    format!("{:.3}s", ms as f64 / 1000.0)
}

/// Rows as left-aligned columns (the last column is not padded).
fn table(rows: &[Vec<&str>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> =
        (0..cols).map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c + 1 < r.len() {
                let _ = write!(line, "{:<w$}  ", cell, w = widths[c]);
            } else {
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

pub fn format_list(scenarios: &[(String, String)]) -> String {
    if scenarios.is_empty() {
        return format!("no scenarios found in {}\n", load::scenarios_dir().display());
    }
    let rows: Vec<Vec<&str>> = scenarios.iter().map(|(n, d)| vec![n.as_str(), d.as_str()]).collect();
    table(&rows)
}

pub fn format_bugs() -> String {
    let mut rows = vec![vec!["NAME", "ORIGIN", "BEHAVIOUR"]];
    rows.extend(ALL_BUGS.iter().map(|b| vec![b.name, b.origin, b.behaviour]));
    let mut o = table(&rows);
    o.push_str("\nCandidate fixes for open findings (`--fix NAME`; not TiCDC's behaviour):\n\n");
    let mut rows = vec![vec!["NAME", "FINDING", "BEHAVIOUR"]];
    rows.extend(ALL_FIXES.iter().map(|f| vec![f.name, f.finding, f.behaviour]));
    o.push_str(&table(&rows));
    o
}

/// The human report of one run.
pub fn format_report(
    name: &str,
    r: &RunResult,
    verbose: bool,
    det: Option<&Determinism>,
    reproduce: Option<&str>,
) -> String {
    let mut o = String::new();
    if verbose {
        for rec in &r.trace {
            let _ = writeln!(o, "{}", rec.line());
        }
    }
    let bugs = if r.bugs.is_empty() { "none".to_string() } else { r.bugs.join(",") };
    let _ = write!(o, "scenario {}  seed {}  bugs {}", name, r.seed, bugs);
    if !r.fixes.is_empty() {
        let _ = write!(o, "  fixes {}", r.fixes.join(","));
    }
    let _ = writeln!(o);
    section(&mut o, "config", r.config.iter().cloned());
    section(&mut o, "phases", r.phases.iter().map(|(p, at)| format!("{:>10}  {}", secs(*at), p)));
    section(
        &mut o,
        "checks",
        r.checks.iter().map(|c| format!("{} {}: {}", if c.passed { "PASS" } else { "FAIL" }, c.check, c.detail)),
    );
    if r.violations.is_empty() {
        let _ = writeln!(o, "violations: none");
    } else {
        section(
            &mut o,
            "violations",
            r.violations.iter().map(|v| format!("{} at {}: {}", v.invariant, secs(v.at_ms), v.detail)),
        );
    }
    if let Some(c) = &r.crash {
        let _ = writeln!(o, "crash: {}", c.replace('\n', " | "));
    }
    if let Some(d) = det {
        format_determinism(&mut o, d);
    }
    let _ = writeln!(o, "outcome: {}", r.outcome.as_str());
    if let Some(n) = crate::result::outcome_note(r.outcome, &r.violations) {
        let _ = writeln!(o, "  ({})", n);
    }
    let _ = writeln!(o, "trace hash: {}", if r.trace_hash.is_empty() { "-" } else { &r.trace_hash });
    let _ = writeln!(o, "simulated time: {}", secs(r.sim_time_ms));
    let _ = writeln!(o, "wall time: {} ms", r.wall_ms);
    let _ = writeln!(o, "events: {}", r.events);
    if let Some(rep) = reproduce {
        let _ = writeln!(o, "reproduce: {}", rep);
    }
    o
}

fn section(o: &mut String, title: &str, lines: impl Iterator<Item = String>) {
    let _ = writeln!(o, "{}:", title);
    let mut any = false;
    for l in lines {
        let _ = writeln!(o, "  {}", l);
        any = true;
    }
    if !any {
        let _ = writeln!(o, "  (none)");
    }
}

fn format_determinism(o: &mut String, d: &Determinism) {
    if d.ok {
        let _ = writeln!(o, "determinism: ok (2 runs, same trace hash)");
        return;
    }
    let _ = writeln!(o, "determinism: FAILED (2 runs of the same seed differ)");
    let _ = writeln!(o, "  trace hash: run 1 {}, run 2 {}", d.trace_hashes[0], d.trace_hashes[1]);
    let _ = writeln!(o, "  outcome: run 1 {}, run 2 {}", d.outcomes[0].as_str(), d.outcomes[1].as_str());
    match &d.divergence {
        Some(v) => {
            let _ = writeln!(o, "  first divergent trace record: #{} at {}", v.index, secs(v.at_ms));
            let _ = writeln!(o, "    run 1: {}", v.first.as_deref().unwrap_or("(trace ended)"));
            let _ = writeln!(o, "    run 2: {}", v.second.as_deref().unwrap_or("(trace ended)"));
        }
        None => {
            let _ = writeln!(
                o,
                "  first divergent trace record: none (recorded traces are identical; only the hash differs)"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(at_ms: u64, event: &str) -> TraceRecord {
        TraceRecord {
            at_ms,
            node: "n0".into(),
            role: "maintainer".into(),
            epoch: 1,
            event: event.to_string().into(),
            fields: vec![],
        }
    }

    #[test]
    fn divergence_is_first_differing_record() {
        let a = vec![rec(1, "a"), rec(2, "b"), rec(3, "c")];
        let b = vec![rec(1, "a"), rec(2, "x")];
        let d = first_divergence(&a, &b).unwrap();
        assert_eq!((d.index, d.at_ms), (1, 2));
        assert!(d.first.unwrap().ends_with(" b"));
        assert!(first_divergence(&a, &a).is_none());
        let d = first_divergence(&a[..2], &a).unwrap();
        assert_eq!((d.index, d.first.is_none()), (2, true));
    }
}
