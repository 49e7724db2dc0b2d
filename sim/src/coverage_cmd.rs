//! The `coverage` command: fuzz several scenarios over one seed range and report the
//! core's coverage points reached over all of them; with `--gate`, fail when a
//! must-reach point was never reached (CI runs it over the standard scenarios).

use crate::args::FuzzArgs;
use crate::coverage::Tally;
use crate::error::CliError;
use serde::Serialize;
use std::fmt::Write as _;

#[derive(clap::Args, Debug)]
pub struct CoverageArgs {
    /// Scenarios (names from scenarios/ or paths); default: every scenario in scenarios/.
    #[arg(value_name = "NAME|PATH")]
    pub scenarios: Vec<String>,
    /// Seed range A..B (B exclusive) of every scenario.
    #[arg(long, value_name = "A..B")]
    pub seeds: String,
    /// Worker threads (default: available parallelism).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Seed files of known open findings (as for fuzz): their failures do not count.
    #[arg(long, value_name = "DIR|FILE")]
    pub known: Option<std::path::PathBuf>,
    /// How the captures' periodic loops run (default: each scenario's `engine`).
    #[arg(long, value_enum)]
    pub engine: Option<crate::node::Engine>,
    /// Exit 1 when a must-reach point was never reached.
    #[arg(long)]
    pub gate: bool,
    /// Print one JSON object instead of the human report.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct ScenarioLine {
    scenario: String,
    runs: u64,
    new_failures: u64,
    reached: usize,
}

#[derive(Serialize)]
struct Report {
    seeds: String,
    scenarios: Vec<ScenarioLine>,
    coverage: crate::coverage::CoverageJson,
    gate: Option<bool>,
}

pub fn cli_coverage(a: &CoverageArgs) -> Result<(String, i32), CliError> {
    let names: Vec<String> = if a.scenarios.is_empty() {
        crate::scenario::load::list().into_iter().map(|(n, _)| n).collect()
    } else {
        a.scenarios.clone()
    };
    if names.is_empty() {
        return Err(CliError::NoScenarios { path: crate::scenario::load::scenarios_dir() });
    }
    // Every scenario and the seed range are checked before the first seed runs.
    crate::args::parse_range(&a.seeds)?;
    for n in &names {
        crate::scenario::load::resolve(n)?;
    }
    let mut total = Tally::default();
    let mut lines = Vec::new();
    let mut human = String::new();
    let mut code = 0;
    for n in &names {
        let f = crate::fuzz::run_fuzz(&FuzzArgs {
            scenario: n.clone(),
            seeds: Some(a.seeds.clone()),
            jobs: a.jobs,
            bugs: vec![],
            fixes: vec![],
            save: None,
            stop_after: None,
            shard: None,
            known: a.known.clone(),
            json: false,
            no_mask: false,
            check_determinism_ratio: None,
            inject_nondeterminism: false,
            full_checks: false,
            coverage: false,
            html: false,
            explore: false,
            runs: None,
            campaign_seed: None,
            engine: a.engine,
        })?;
        total.merge(&f.coverage);
        // A campaign's own failures (and its interrupt) decide the exit code first.
        if f.code != 0 && code == 0 {
            code = f.code;
        }
        let _ = writeln!(
            human,
            "{:<44} runs {:>5}  new failures {:>3}  points {:>3}",
            n,
            f.runs,
            f.new_failures,
            f.coverage.reached()
        );
        if f.new_failures > 0 || f.code != 0 {
            human.push_str(&f.out);
        }
        lines.push(ScenarioLine {
            scenario: n.clone(),
            runs: f.runs,
            new_failures: f.new_failures,
            reached: f.coverage.reached(),
        });
        if crate::interrupt::requested() {
            break;
        }
    }
    let missing = total.must_never_reached();
    let gate_ok = missing.is_empty();
    if a.gate && !gate_ok && code == 0 {
        code = 1;
    }
    let out = if a.json {
        let r = Report {
            seeds: a.seeds.clone(),
            scenarios: lines,
            coverage: crate::coverage::to_json(&total),
            gate: a.gate.then_some(gate_ok),
        };
        serde_json::to_string(&r).map_err(CliError::serialize("coverage report"))? + "\n"
    } else {
        let mut o = human;
        o.push_str(&crate::coverage::format_human(&total));
        if a.gate {
            if gate_ok {
                o.push_str("gate: every must-reach point was reached\n");
            } else {
                let _ = writeln!(
                    o,
                    "gate: FAILED: {} must-reach point{} never reached (listed above)",
                    missing.len(),
                    if missing.len() == 1 { "" } else { "s" }
                );
            }
        }
        o
    };
    Ok((out, code))
}
