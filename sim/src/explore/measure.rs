//! `explore-measure`: seeds to first failure of every open finding (the groups of
//! `seeds/findings/`, as `findings` runs them) and every named bug (as the zoo runs it),
//! plain seed ranges against `fuzz --explore`, over a few campaigns each.
//!
//! Campaign k starts its plain seeds at `k * STRIDE` and `--explore` uses campaign seed
//! k from the same start, so both see the same first batch of seeds and differ only in
//! what the search runs next. A target not caught within the budget counts as budget + 1
//! in the median (shown as `>B`).

use super::{run, Explore};
use crate::args::parse_bugs;
use crate::error::CliError;
use crate::result::{Outcome, RunResult};
use crate::scenario::{load, Scenario};
use crate::seedfile::{collect, SeedFile};
use core_sched::bugs::{Bugs, ALL_BUGS};
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

/// Distance between the plain seed starts of two campaigns.
pub const STRIDE: u64 = 1000;

/// One thing to catch.
pub struct Target {
    /// `finding <scenario>` or `bug <name>`.
    pub name: String,
    pub scenario_ref: String,
    pub scenario: Scenario,
    pub bugs: Bugs,
    /// Only runs violating this invariant count (the zoo's `detect`); `None`: any failure.
    pub detect: Option<&'static str>,
}

/// The findings groups of `dir`, then every bug of the zoo.
pub fn targets(dir: &Path) -> Result<Vec<Target>, CliError> {
    let mut out = Vec::new();
    let mut groups: BTreeSet<(String, Vec<String>)> = BTreeSet::new();
    for p in collect(dir)? {
        let f = SeedFile::load(&p)?;
        groups.insert((f.scenario, f.bugs));
    }
    for (scenario_ref, bugs) in groups {
        let scenario = load::resolve(&scenario_ref)?.scenario;
        let name = format!("finding {}", scenario.name);
        out.push(Target { name, scenario_ref, scenario, bugs: parse_bugs(&bugs)?, detect: None });
    }
    for info in ALL_BUGS {
        let plan = crate::zoo::plan_for(info.bug);
        let scenario_ref = crate::zoo::resolve_scenario(info.bug).to_string();
        let scenario = load::resolve(&scenario_ref)?.scenario;
        let mut bugs = Bugs::none().with(info.bug);
        for c in plan.companions {
            bugs = bugs.with(*c);
        }
        out.push(Target { name: format!("bug {}", info.name), scenario_ref, scenario, bugs, detect: plan.detect });
    }
    Ok(out)
}

fn detects(detect: Option<&str>, r: &RunResult) -> bool {
    match detect {
        Some(inv) => crate::fuzz::all_invariants(r).iter().any(|i| i == inv),
        None => r.outcome != Outcome::Pass,
    }
}

/// One campaign's result: the run that first caught the target.
#[derive(Serialize, Debug, Clone)]
pub struct Catch {
    pub run: Option<u64>,
    /// Whether the catching run was a mutant.
    pub mutant: bool,
    pub runs: u64,
}

#[derive(Serialize, Debug)]
pub struct Row {
    pub target: String,
    pub scenario: String,
    pub plain: Vec<Catch>,
    pub explore: Vec<Catch>,
    pub plain_median: f64,
    pub explore_median: f64,
}

#[derive(Serialize, Debug)]
pub struct Measurement {
    pub budget: u64,
    pub campaigns: u64,
    pub jobs: usize,
    pub rows: Vec<Row>,
    pub interrupted: bool,
}

/// Median with misses counted as `budget + 1`.
pub fn median(c: &[Catch], budget: u64) -> f64 {
    let mut v: Vec<u64> = c.iter().map(|x| x.run.unwrap_or(budget + 1)).collect();
    v.sort_unstable();
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2] as f64,
        n => (v[n / 2 - 1] + v[n / 2]) as f64 / 2.0,
    }
}

/// Run every target (those whose name contains one of `only`, if any).
pub fn measure(
    dir: &Path,
    budget: u64,
    campaigns: u64,
    jobs: usize,
    only: &[String],
    log: &mut dyn FnMut(&str),
) -> Result<Measurement, CliError> {
    let all = targets(dir)?;
    let mut rows = Vec::new();
    let mut interrupted = false;
    crate::interrupt::install();
    for t in all.iter().filter(|t| only.is_empty() || only.iter().any(|o| t.name.contains(o.as_str()))) {
        let detect = |r: &RunResult| detects(t.detect, r);
        let mut side = |mutate: bool| -> Vec<Catch> {
            (0..campaigns)
                .map(|k| {
                    let c = Explore {
                        scenario: &t.scenario,
                        bugs: t.bugs.clone(),
                        first_seed: k * STRIDE,
                        budget,
                        campaign_seed: k,
                        jobs,
                        mutate,
                        stop_after: Some(1),
                        detect: &detect,
                    };
                    let r = run(&c, &mut |_, _| {});
                    interrupted |= r.interrupted;
                    let first = r.first_detection();
                    Catch {
                        run: first.map(|f| f.run),
                        mutant: first.is_some_and(|f| f.origin != super::Origin::Plain),
                        runs: r.runs.len() as u64,
                    }
                })
                .collect()
        };
        let plain = side(false);
        let explore = side(true);
        let row = Row {
            target: t.name.clone(),
            scenario: t.scenario_ref.clone(),
            plain_median: median(&plain, budget),
            explore_median: median(&explore, budget),
            plain,
            explore,
        };
        log(&format!(
            "explore-measure: {}: plain {} explore {}",
            row.target,
            cell(&row.plain, budget),
            cell(&row.explore, budget)
        ));
        rows.push(row);
        if interrupted {
            break;
        }
    }
    Ok(Measurement { budget, campaigns, jobs, rows, interrupted })
}

fn one(c: &Catch, budget: u64) -> String {
    match c.run {
        Some(r) if c.mutant => format!("{}*", r),
        Some(r) => r.to_string(),
        None => format!(">{}", budget),
    }
}

fn cell(c: &[Catch], budget: u64) -> String {
    c.iter().map(|x| one(x, budget)).collect::<Vec<_>>().join(", ")
}

fn med(m: f64, budget: u64) -> String {
    if m > budget as f64 {
        format!(">{}", budget)
    } else if m.fract() == 0.0 {
        format!("{}", m as u64)
    } else {
        format!("{:.1}", m)
    }
}

/// The markdown table (a heading-less section for `docs/measurements.md`).
pub fn markdown(m: &Measurement) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "| target | scenario | plain: runs to first failure | median | explore: runs to first failure | median |"
    );
    let _ = writeln!(o, "|---|---|---|---|---|---|");
    for r in &m.rows {
        let _ = writeln!(
            o,
            "| {} | `{}` | {} | {} | {} | {} |",
            r.target,
            r.scenario,
            cell(&r.plain, m.budget),
            med(r.plain_median, m.budget),
            cell(&r.explore, m.budget),
            med(r.explore_median, m.budget)
        );
    }
    let (mut better, mut worse) = (0, 0);
    for r in &m.rows {
        if r.explore_median < r.plain_median {
            better += 1;
        } else if r.explore_median > r.plain_median {
            worse += 1;
        }
    }
    let _ = writeln!(
        o,
        "\n{} targets: explore's median is lower for {}, higher for {}, equal for {}.",
        m.rows.len(),
        better,
        worse,
        m.rows.len() - better - worse
    );
    o
}

#[derive(clap::Args, Debug)]
pub struct MeasureArgs {
    /// The findings' seed files (a directory of *.json).
    #[arg(long, value_name = "DIR", default_value = "seeds/findings")]
    pub dir: std::path::PathBuf,
    /// Runs per campaign at most.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub budget: u64,
    /// Campaigns per target and side (plain starts k * 1000, explore campaign seed k).
    #[arg(long, value_name = "K", default_value_t = 3)]
    pub campaigns: u64,
    /// Worker threads (default: available parallelism).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Only the targets whose name contains this (repeatable), e.g. `swarm` or `bug no-epoch`.
    #[arg(long, value_name = "TEXT")]
    pub only: Vec<String>,
    /// Print one JSON object instead of the markdown table.
    #[arg(long)]
    pub json: bool,
}

/// `ticdc-sim explore-measure`.
pub fn cli_measure(a: &MeasureArgs) -> Result<(String, i32), CliError> {
    if a.budget == 0 {
        return Err(CliError::ZeroExploreRuns);
    }
    if a.campaigns == 0 {
        return Err(CliError::ZeroCampaigns);
    }
    let jobs = crate::args::parse_jobs(a.jobs)?;
    let m = measure(&a.dir, a.budget, a.campaigns, jobs, &a.only, &mut |l| eprintln!("{}", l))?;
    let out = if a.json {
        serde_json::to_string(&m).map_err(CliError::serialize("measurement"))? + "\n"
    } else {
        markdown(&m)
    };
    Ok((out, if m.interrupted { crate::interrupt::EXIT_INTERRUPTED } else { 0 }))
}
