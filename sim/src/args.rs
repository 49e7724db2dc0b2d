//! Command-line arguments shared by several commands: the `fuzz` arguments, the parsers
//! of `--seed`, `--seeds`, `--shard`, `--jobs`, `--bug` and `--fix`, and the reproduce
//! command. A leaf module: `cli`, `fuzz`, `replay`, `zoo` and `findings` all use it, and
//! it uses none of them.

use clap::Args;
use core_sched::bugs::{Bug, Bugs, Fix};
use std::fmt::Write as _;

/// A bad command-line value (or the same value read from a seed file): which flag, what
/// was given, and what is valid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArgError {
    #[error("invalid --check-determinism-ratio '{0}': expected a fraction between 0 and 1, e.g. 0.01")]
    Ratio(String),
    #[error("invalid --jobs 0: need at least one worker")]
    ZeroJobs,
    #[error("invalid seed '{0}': expected an unsigned 64-bit integer (0..={max})", max = u64::MAX)]
    Seed(String),
    #[error("invalid --seeds '{0}': expected A..B with unsigned 64-bit integers A < B, e.g. 0..1000")]
    SeedRange(String),
    #[error("invalid --seeds '{0}': the range is empty (B must be greater than A)")]
    EmptySeedRange(String),
    #[error("invalid --shard '{0}': expected I/N with integers 0 <= I < N, e.g. 0/4")]
    Shard(String),
    #[error("invalid --shard '{0}': N must be greater than 0")]
    ZeroShards(String),
    #[error("invalid --shard '{0}': I must be less than N (shards are numbered 0..N)")]
    ShardIndex(String),
    #[error("unknown bug '{name}'; valid bugs: {}", Bug::names().join(", "))]
    UnknownBug { name: String },
    #[error("unknown fix '{name}'; valid fixes: {}", Fix::names().join(", "))]
    UnknownFix { name: String },
}

#[derive(Args, Debug)]
pub struct FuzzArgs {
    /// Scenario name (from scenarios/) or path to a .toml file.
    #[arg(value_name = "NAME|PATH")]
    pub scenario: String,
    /// Seed range A..B (B exclusive). With --explore: the plain seeds start at A and the
    /// campaign runs B - A candidates.
    #[arg(long, value_name = "A..B", required_unless_present = "runs")]
    pub seeds: Option<String>,
    /// Worker threads (default: available parallelism).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Re-introduce a historical bug (repeatable; see `ticdc-sim bugs`).
    #[arg(long = "bug", value_name = "NAME")]
    pub bugs: Vec<String>,
    /// Switch on a candidate fix for an open finding (repeatable; see `ticdc-sim bugs`).
    #[arg(long = "fix", value_name = "NAME")]
    pub fixes: Vec<String>,
    /// Write every failing seed as a seed file into DIR.
    #[arg(long, value_name = "DIR")]
    pub save: Option<std::path::PathBuf>,
    /// With --save: also write each saved seed's timeline page next to its seed file
    /// (`<seed file stem>.html`; the seed reruns once, recording; at most
    /// `timeline::fuzz::PAGE_CAP` pages).
    #[arg(long, requires = "save")]
    pub html: bool,
    /// Stop scheduling new seeds after K failures.
    #[arg(long, value_name = "K")]
    pub stop_after: Option<usize>,
    /// Run only shard I of N: the seeds s with (s - A) % N == I.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Seed files (a directory or file) of known open findings: a failure that matches
    /// one (scenario, seed, bugs, outcome, invariant) is listed as known and does not
    /// fail the campaign.
    #[arg(long, value_name = "DIR|FILE")]
    pub known: Option<std::path::PathBuf>,
    /// Print one JSON object instead of the human summary.
    #[arg(long)]
    pub json: bool,
    /// Run TiCDC's code exactly as it is: drop the scenario's masked findings
    /// (`mask-findings`, by default `fresh-status-watermark`).
    #[arg(long)]
    pub no_mask: bool,
    /// Rerun this fraction (0..=1) of the seeds on a fresh thread and compare the traces
    /// (FoundationDB's unseed check); a difference is reported as nondeterminism (exit 5)
    /// with the first divergent trace record. Which seeds are rerun follows from the seed.
    #[arg(long, value_name = "R")]
    pub check_determinism_ratio: Option<String>,
    /// Test hook: make runs differ (to exercise --check-determinism-ratio).
    #[arg(long, hide = true)]
    pub inject_nondeterminism: bool,
    /// Run the reference invariant checks (each table's spans and writers compared pair by
    /// pair, after every step) instead of the fast ones; they report the same violations.
    #[arg(long)]
    pub full_checks: bool,
    /// How the captures' periodic loops run (default: the scenario's `engine`); saved seed
    /// files record it, and a known file matches only runs of its engine.
    #[arg(long, value_enum)]
    pub engine: Option<crate::node::Engine>,
    /// Report the core's coverage points reached (in --json: a `coverage` object with
    /// every point's hits and the points never reached).
    #[arg(long)]
    pub coverage: bool,
    /// Coverage-guided search: keep the runs that reach new or rare coverage and run
    /// mutants of their fault plans (see `explore` in the README).
    #[arg(long, conflicts_with_all = ["shard", "known", "check_determinism_ratio", "html", "inject_nondeterminism"])]
    pub explore: bool,
    /// With --explore: run N candidates, plain seeds from 0 (instead of --seeds).
    #[arg(long, value_name = "N", requires = "explore", conflicts_with = "seeds")]
    pub runs: Option<u64>,
    /// With --explore: the seed of every choice the search makes (default 0).
    #[arg(long, value_name = "S", requires = "explore")]
    pub campaign_seed: Option<u64>,
}

#[derive(Args, Debug)]
pub struct ShrinkArgs {
    /// Scenario name (from scenarios/) or path to a .toml file.
    #[arg(value_name = "NAME|PATH", required_unless_present = "seed_file")]
    pub scenario: Option<String>,
    /// The failing seed (unsigned 64-bit integer).
    #[arg(long, allow_hyphen_values = true, required_unless_present = "seed_file")]
    pub seed: Option<String>,
    /// Re-introduce a historical bug (repeatable; see `ticdc-sim bugs`).
    #[arg(long = "bug", value_name = "NAME")]
    pub bugs: Vec<String>,
    /// Shrink a seed file's run instead: its scenario, seed and bugs, with its recorded
    /// swarm plan (`swarm_plan`) instead of the seed's draw.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["scenario", "seed", "bugs"])]
    pub seed_file: Option<std::path::PathBuf>,
    /// Switch on a candidate fix for an open finding (repeatable; written into the
    /// minimized scenario's `mask-findings`).
    #[arg(long = "fix", value_name = "NAME")]
    pub fixes: Vec<String>,
    /// Where to write the minimized scenario (.toml) and its seed file (.json).
    #[arg(long, value_name = "DIR", default_value = "reports/runs/shrink")]
    pub out: std::path::PathBuf,
    /// Budget of runs (candidates, and their bugs-off checks).
    #[arg(long, value_name = "N", default_value_t = crate::shrink::DEFAULT_MAX_RUNS)]
    pub max_runs: usize,
    /// Print one JSON object instead of the human summary.
    #[arg(long)]
    pub json: bool,
}

/// `--check-determinism-ratio`: a fraction in 0..=1.
pub fn parse_ratio(s: Option<&str>) -> Result<f64, ArgError> {
    match s {
        None => Ok(0.0),
        Some(t) => match t.parse::<f64>() {
            Ok(r) if (0.0..=1.0).contains(&r) => Ok(r),
            _ => Err(ArgError::Ratio(t.to_string())),
        },
    }
}

/// `--jobs`: at least 1; by default one worker per available core.
pub fn parse_jobs(jobs: Option<usize>) -> Result<usize, ArgError> {
    match jobs {
        Some(0) => Err(ArgError::ZeroJobs),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)),
    }
}

pub fn parse_seed(s: &str) -> Result<u64, ArgError> {
    s.parse::<u64>().map_err(|_| ArgError::Seed(s.to_string()))
}

/// A half-open seed range `A..B`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedRange {
    pub start: u64,
    pub end: u64,
}

impl std::fmt::Display for SeedRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// Parse `A..B` (unsigned 64-bit, `A < B`).
pub fn parse_range(s: &str) -> Result<SeedRange, ArgError> {
    let bad = || ArgError::SeedRange(s.to_string());
    let (a, b) = s.split_once("..").ok_or_else(bad)?;
    let (start, end) = (a.trim().parse::<u64>().map_err(|_| bad())?, b.trim().parse::<u64>().map_err(|_| bad())?);
    if end <= start {
        return Err(ArgError::EmptySeedRange(s.to_string()));
    }
    Ok(SeedRange { start, end })
}

/// Shard `I/N` of a seed range: the seeds `s` with `(s - A) % N == I`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Default for Shard {
    fn default() -> Self {
        Shard { index: 0, count: 1 }
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

pub fn parse_shard(s: &str) -> Result<Shard, ArgError> {
    let bad = || ArgError::Shard(s.to_string());
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (index, count) = (i.trim().parse::<u64>().map_err(|_| bad())?, n.trim().parse::<u64>().map_err(|_| bad())?);
    if count == 0 {
        return Err(ArgError::ZeroShards(s.to_string()));
    }
    if index >= count {
        return Err(ArgError::ShardIndex(s.to_string()));
    }
    Ok(Shard { index, count })
}

pub fn parse_bugs(names: &[String]) -> Result<Bugs, ArgError> {
    let mut bugs = Bugs::none();
    for n in names {
        let b = Bug::from_name(n).ok_or_else(|| ArgError::UnknownBug { name: n.clone() })?;
        bugs = bugs.with(b);
    }
    Ok(bugs)
}

/// Add the candidate fixes named by `--fix` to `bugs`.
pub fn parse_fixes(mut bugs: Bugs, names: &[String]) -> Result<Bugs, ArgError> {
    for n in names {
        let f = Fix::from_name(n).ok_or_else(|| ArgError::UnknownFix { name: n.clone() })?;
        bugs = bugs.with_fix(f);
    }
    Ok(bugs)
}

/// `cargo run --release -- scenario NAME --seed N [--bug X]... [--fix Y]...`
pub fn reproduce_command(scenario: &str, seed: u64, bugs: &[&str], fixes: &[&str]) -> String {
    let mut s = format!("cargo run --release -- scenario {} --seed {}", shell_quote(scenario), seed);
    for b in bugs {
        let _ = write!(s, " --bug {}", b);
    }
    for f in fixes {
        let _ = write!(s, " --fix {}", f);
    }
    s
}

/// The flags of a run that a reproduce command must repeat.
pub fn run_flags(no_mask: bool, engine: Option<crate::node::Engine>) -> String {
    let mut s = String::new();
    if no_mask {
        s.push_str(" --no-mask");
    }
    if let Some(e) = engine {
        let _ = write!(s, " --engine {}", e.name());
    }
    s
}

pub fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "_-./+,:=@".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_and_bugs_parse() {
        assert_eq!(parse_seed("7"), Ok(7));
        assert!(parse_seed("-1").is_err());
        assert!(parse_seed("abc").is_err());
        assert!(parse_bugs(&["no-epoch-fencing".into()]).is_ok());
        assert!(parse_bugs(&["nope".into()]).unwrap_err().to_string().contains("no-epoch-fencing"));
        assert_eq!(parse_jobs(Some(0)).unwrap_err().to_string(), "invalid --jobs 0: need at least one worker");
    }

    #[test]
    fn ranges_parse() {
        assert_eq!(parse_range("0..10"), Ok(SeedRange { start: 0, end: 10 }));
        for bad in ["10..10", "10..3", "a..3", "3", "-1..4", "0..18446744073709551616", ""] {
            assert!(parse_range(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shards_parse() {
        assert_eq!(parse_shard("1/3"), Ok(Shard { index: 1, count: 3 }));
        for bad in ["3/3", "0/0", "1", "a/2", "-1/2"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("scenarios/a.toml"), "scenarios/a.toml");
        assert_eq!(shell_quote("my file.toml"), "'my file.toml'");
    }
}
