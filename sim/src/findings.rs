//! `findings`: every known open finding against its candidate fix. For each distinct
//! (scenario, bugs, `fixed_by`) among the seed files of a findings directory
//! (`seeds/findings/` by default), run seeds `0..N` of the scenario as TiCDC behaves
//! (the fixed core) and again with the candidate fixes on, and tabulate how many fail
//! each way. Answers "is the finding still there, how often, and does its proposed fix
//! still make it go away". Exit 1 if some fix leaves a failing seed. With
//! `--write-docs`, the same rows also feed the finding pages' generated blocks
//! ([`crate::writeups`]).

use crate::args::{parse_bugs, parse_fixes};
use crate::error::CliError;
use crate::fuzz::{run_campaign, Campaign, CampaignResult, ProgressBar, SeedList, SeedRange, Shard};
use crate::result::Outcome;
use crate::runner::swarm::SwarmPlan;
use crate::runner::{run_on_fresh_thread, RunOptions};
use crate::scenario::load;
use crate::seedfile::{collect, SeedFile};
use core_sched::bugs::Bugs;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

#[derive(Clone, Debug, Serialize)]
pub struct FindingRow {
    /// The scenario as the seed files name it.
    pub scenario: String,
    pub bugs: Vec<String>,
    pub fixes: Vec<String>,
    /// The seed files of this row.
    pub files: Vec<String>,
    /// How many of the seed files' own seeds fail on the fixed core, and with the fixes.
    pub recorded_failing: usize,
    pub recorded_failing_with_fix: usize,
    pub seeds: u64,
    pub failures: usize,
    pub first_failing_seed: Option<u64>,
    /// First violated invariant of each failing seed, with counts.
    pub by_invariant: BTreeMap<String, usize>,
    pub failures_with_fix: usize,
    pub first_failing_seed_with_fix: Option<u64>,
}

/// (failures, first failing seed, failures by first invariant, seeds run).
fn summarize(r: &CampaignResult) -> (usize, Option<u64>, BTreeMap<String, usize>, u64) {
    let mut by = BTreeMap::new();
    let mut first = None;
    let mut n = 0;
    for o in r.failures() {
        n += 1;
        first = first.or(Some(o.seed));
        *by.entry(o.invariant.clone().unwrap_or_else(|| o.outcome.as_str().to_string())).or_insert(0) += 1;
    }
    (n, first, by, r.runs.len() as u64)
}

/// A finding group: (scenario, bugs, fixed_by) as the seed files name them.
pub type Group = (String, Vec<String>, Vec<String>);

/// A seed file of a group: its name, seed, recorded swarm plan (its runs pin it) and
/// engine.
pub type Recorded = (String, u64, Option<SwarmPlan>, crate::node::Engine);

/// The seed files of `dir` by group.
pub fn groups(dir: &Path) -> Result<BTreeMap<Group, Vec<Recorded>>, CliError> {
    let mut groups: BTreeMap<Group, Vec<Recorded>> = BTreeMap::new();
    let paths = collect(dir)?;
    if paths.is_empty() {
        return Err(CliError::NoSeedFiles { what: "--dir", path: dir.to_path_buf() });
    }
    for path in paths {
        let f = SeedFile::load(&path)?;
        // A plan its scenario cannot pin is bad input, found before anything runs.
        f.run_scenario(&path)?;
        let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        let group = (f.scenario.clone(), f.bugs.clone(), f.fixed_by.clone());
        groups.entry(group).or_default().push((name, f.seed, f.swarm_plan, f.engine));
    }
    Ok(groups)
}

/// Run every finding of `dir`. Err = bad input (a malformed seed file, a scenario that
/// does not load, an unknown bug or fix).
pub fn run_findings(dir: &Path, seeds: u64, jobs: usize) -> Result<Vec<FindingRow>, CliError> {
    run_groups(groups(dir)?, seeds, jobs)
}

/// Run the given groups in order (stops early on an interrupt).
pub fn run_groups(
    groups: BTreeMap<Group, Vec<Recorded>>,
    seeds: u64,
    jobs: usize,
) -> Result<Vec<FindingRow>, CliError> {
    let mut rows = Vec::new();
    for (group, files) in groups {
        rows.push(run_group(&group, files, seeds, jobs)?);
        if crate::interrupt::requested() {
            break;
        }
    }
    Ok(rows)
}

/// One group: its seed files' own seeds, then seeds `0..seeds` on the fixed core and with
/// the fixes. `files` may be empty (a finding scenario without a seed file).
pub fn run_group(group: &Group, files: Vec<Recorded>, seeds: u64, jobs: usize) -> Result<FindingRow, CliError> {
    let (scenario, bugs, fixes) = group.clone();
    let finding = |e: CliError| CliError::Finding { scenario: scenario.clone(), source: Box::new(e) };
    let scn = load::resolve(&scenario).map_err(|e| finding(e.into()))?.scenario;
    let base = parse_bugs(&bugs).map_err(|e| finding(e.into()))?;
    let fixed = parse_fixes(base.clone(), &fixes).map_err(|e| finding(e.into()))?;
    // The seed files' own runs, each with its recorded plan and engine (the campaigns
    // below draw, with the scenario's engine).
    let fails = |(_, seed, plan, engine): &Recorded, bugs: &Bugs| {
        let mut s = scn.clone();
        if let Some(p) = plan {
            p.pin(&mut s);
        }
        s.engine = *engine;
        run_on_fresh_thread(&s, *seed, bugs, &RunOptions::default()).outcome != Outcome::Pass
    };
    let recorded_failing = files.iter().filter(|f| fails(f, &base)).count();
    let recorded_failing_with_fix = match fixes.is_empty() {
        true => recorded_failing,
        false => files.iter().filter(|f| fails(f, &fixed)).count(),
    };
    let files: Vec<String> = files.into_iter().map(|(n, ..)| n).collect();
    let seed_list = SeedList { range: SeedRange { start: 0, end: seeds }, shard: Shard::default() };
    let campaign = |bugs: Bugs, label: String| {
        let mut bar = ProgressBar::new(&label);
        let r = run_campaign(
            &Campaign {
                scenario: &scn,
                seeds: seed_list,
                bugs,
                jobs,
                stop_after: None,
                determinism_ratio: 0.0,
                inject_nondeterminism: false,
                full_checks: false,
            },
            &mut |p, _| bar.update(p),
        );
        bar.finish();
        summarize(&r)
    };
    let (failures, first_failing_seed, by_invariant, ran) = campaign(base, format!("findings {}", scn.name));
    let (failures_with_fix, first_failing_seed_with_fix, ran) = if fixes.is_empty() {
        (failures, first_failing_seed, ran)
    } else {
        let (n, first, _, ran_fix) = campaign(fixed, format!("findings {} --fix {}", scn.name, fixes.join(",")));
        (n, first, ran.min(ran_fix))
    };
    Ok(FindingRow {
        scenario,
        bugs,
        fixes,
        files,
        recorded_failing,
        recorded_failing_with_fix,
        seeds: ran,
        failures,
        first_failing_seed,
        by_invariant,
        failures_with_fix,
        first_failing_seed_with_fix,
    })
}

pub fn format_findings(rows: &[FindingRow]) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# Known open findings and their candidate fixes\n");
    let _ = writeln!(o, "Each row: a scenario of the seed files in the findings directory, seeds 0..N as TiCDC behaves (the fixed core) and with the candidate fixes their `fixed_by` names (`--fix`, not TiCDC's behaviour). Every run also applies its scenario's masked findings (`mask-findings`; by default `fresh-status-watermark`, except in the status-watermark scenarios, which mask nothing). `ticdc-sim findings` writes this.\n");
    let _ = writeln!(o, "| scenario | seed files (failing: fixed core / with the fix) | fails (fixed core) | first failing seed | caught by | candidate fix | fails with the fix |");
    let _ = writeln!(o, "|---|---|---|---|---|---|---|");
    for r in rows {
        let by: Vec<String> = r.by_invariant.iter().map(|(k, v)| format!("{} {}", k, v)).collect();
        let fix = if r.fixes.is_empty() { "none".to_string() } else { r.fixes.join(", ") };
        let with = if r.fixes.is_empty() { "-".to_string() } else { format!("{}/{}", r.failures_with_fix, r.seeds) };
        let _ = writeln!(
            o,
            "| {} | {} ({}/{} / {}/{}) | {}/{} | {} | {} | {} | {} |",
            r.scenario,
            r.files.join(", "),
            r.recorded_failing,
            r.files.len(),
            r.recorded_failing_with_fix,
            r.files.len(),
            r.failures,
            r.seeds,
            r.first_failing_seed.map(|s| s.to_string()).unwrap_or_else(|| "-".into()),
            if by.is_empty() { "-".into() } else { by.join(", ") },
            fix,
            with
        );
    }
    o
}

/// `findings [--dir DIR] [--seeds N] [--jobs N] [--report-dir DIR] [--write-docs [DIR] [--page P]...]`.
/// With `--page`, only the groups those pages need run (and the report has only them).
pub fn cli_findings(
    dir: &Path,
    seeds: u64,
    jobs: usize,
    report_dir: &Path,
    docs: Option<&crate::writeups::DocsRequest>,
) -> Result<(String, i32), CliError> {
    if seeds == 0 {
        return Err(CliError::ZeroFindingSeeds);
    }
    CliError::prepare_report_dir(report_dir)?;
    // Bad pages and markers are bad input: found before anything runs.
    let targets = docs.map(crate::writeups::select).transpose()?;
    let mut all = groups(dir)?;
    if let (Some(d), Some(t)) = (docs, &targets) {
        if !d.pages.is_empty() {
            let need = crate::writeups::needed_groups(t, dir)?;
            all.retain(|g, _| need.contains(g));
        }
    }
    crate::interrupt::install();
    let rows = run_groups(all, seeds, jobs)?;
    let interrupted = crate::interrupt::requested();
    let mut md = String::new();
    if interrupted {
        md.push_str(
            "**Interrupted**: the rows below are what ran before the interrupt; the last may count fewer seeds.\n\n",
        );
    }
    md.push_str(&format_findings(&rows));
    let md_path = report_dir.join("findings.md");
    let json_path = report_dir.join("findings.json");
    crate::error::write_atomic(&md_path, &md).map_err(CliError::write_file(&md_path))?;
    crate::error::write_atomic(&json_path, serde_json::to_string_pretty(&rows).unwrap_or_default())
        .map_err(CliError::write_file(&json_path))?;
    let mut out = md;
    let _ = writeln!(out, "\nwrote {} and {}", md_path.display(), json_path.display());
    if let Some(t) = &targets {
        if !interrupted {
            let mut done: BTreeMap<Group, FindingRow> =
                rows.iter().map(|r| ((r.scenario.clone(), r.bugs.clone(), r.fixes.clone()), r.clone())).collect();
            out.push_str(&crate::writeups::write_pages(t, dir, &mut done, seeds, jobs)?);
        }
    }
    if crate::interrupt::requested() {
        let _ = writeln!(out, "interrupted: {} finding groups have a row (the last may be partial)", rows.len());
        return Ok((out, crate::interrupt::EXIT_INTERRUPTED));
    }
    let broken: Vec<&str> = rows
        .iter()
        .filter(|r| !r.fixes.is_empty() && (r.failures_with_fix > 0 || r.recorded_failing_with_fix > 0))
        .map(|r| r.scenario.as_str())
        .collect();
    if !broken.is_empty() {
        let _ = writeln!(out, "candidate fixes that leave failures: {}", broken.join(", "));
        return Ok((out, 1));
    }
    Ok((out, 0))
}
