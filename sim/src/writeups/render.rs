//! The markdown of a page's generated blocks. Pure functions of the gathered data, so the
//! same inputs always give the same text (`--write-docs` is idempotent).

use super::gather::{Primary, SeedRef, ShrinkView};
use super::pages::Page;
use crate::args::shell_quote;
use crate::findings::{FindingRow, Group};
use crate::report::SliceLine;
use crate::shrink::{Size, Stop};
use std::fmt::Write as _;

const RUN: &str = "cargo run --release --";
/// Where the reproduce commands let `shrink` write the minimized scenario.
const SHRINK_OUT: &str = "/tmp/shrunk";

fn secs(ms: u64) -> String {
    format!("{:.3} s", ms as f64 / 1000.0)
}

fn code(s: &str) -> String {
    format!("`{}`", s)
}

/// A slice line as the report names it (scenario names for nodes, tables, dispatchers).
fn slice_line(l: &SliceLine) -> String {
    l.text().to_string()
}

fn size_rows(o: &mut String, b: &Size, a: &Size) {
    let list = |v: &[String]| if v.is_empty() { "none".to_string() } else { v.join(", ") };
    let _ = writeln!(o, "| | before | after |\n|---|---|---|");
    let _ = writeln!(o, "| steps | {} | {} |", b.steps, a.steps);
    let _ = writeln!(o, "| faults | {} | {} |", list(&b.faults), list(&a.faults));
    let _ = writeln!(o, "| tables | {} | {} |", b.tables, a.tables);
    let _ = writeln!(o, "| nodes | {} | {} |", b.nodes, a.nodes);
    let _ = writeln!(o, "| events | {} | {} |", b.events, a.events);
    let _ = writeln!(o, "| simulated time | {} | {} |", secs(b.sim_time_ms), secs(a.sim_time_ms));
}

fn seed_origin(p: &Primary, n: u64) -> String {
    match &p.file {
        Some(f) if p.plan.is_some() => format!("the seed of `seeds/findings/{}`, with its recorded swarm plan", f),
        Some(f) => format!("the seed of `seeds/findings/{}`", f),
        None => format!("no seed file: the first failing seed in 0..{}", n),
    }
}

/// The `timeline` block: which run, its shrink, and the causal slice of the shrunk run.
pub fn timeline(p: Option<&Primary>, v: Option<&ShrinkView>, n: u64, no_shrink: Option<&str>) -> String {
    let mut o = String::new();
    let (Some(p), Some(v)) = (p, v) else {
        let _ = writeln!(o, "No seed of 0..{} fails on the fixed core and the page has no seed file: no timeline.", n);
        return o;
    };
    match &v.shrinking {
        Some(sh) => {
            let stop = match sh.stop {
                None => "no smaller scenario fails the same way".to_string(),
                Some(Stop::Budget) => "stopped at the run budget".to_string(),
                Some(Stop::Interrupted) => "interrupted".to_string(),
            };
            let _ = writeln!(
                o,
                "Seed {} of {} ({}), shrunk by `ticdc-sim shrink` ({} runs, {}); the shrunk run fails as {}:\n",
                p.seed,
                code(&p.scenario),
                seed_origin(p, n),
                sh.runs,
                stop,
                v.fails_as
            );
            size_rows(&mut o, &sh.before, &sh.after);
        }
        None => {
            let _ = writeln!(
                o,
                "Seed {} of {} ({}); it fails as {}. Not shrunk: `shrink` keeps only the outcome and the first invariant, and {}.",
                p.seed,
                code(&p.scenario),
                seed_origin(p, n),
                v.fails_as,
                no_shrink.unwrap_or("this page asks for the run as recorded")
            );
        }
    }
    let shown = v.slice.lines.iter().filter(|l| !matches!(l, SliceLine::Violation { .. })).count();
    let _ = write!(
        o,
        "\nThe {} run's causal slice ({} of {} trace records: the causes walked back from the violations, the records of their dispatchers and tables, and lifecycle events",
        if v.shrinking.is_some() { "shrunk" } else { "recorded" },
        shown,
        v.slice.trace_len
    );
    if v.slice.omitted > 0 {
        let _ = write!(o, "; {} more left out", v.slice.omitted);
    }
    let _ = writeln!(o, "). Simulated time, node, maintainer epoch, event, fields.");
    let nodes: Vec<String> = (0..v.nodes).map(|i| format!("n{} = capture {}", i, 8300 + i)).collect();
    let _ = write!(o, "Nodes: {}.", nodes.join(", "));
    if !v.tables.is_empty() {
        let t: Vec<String> = v.tables.iter().map(|(id, name)| format!("{} = {}", id, name)).collect();
        let _ = write!(o, " Tables: {}.", t.join(", "));
    }
    let _ = writeln!(o, "\n\n```text");
    for l in &v.slice.lines {
        let _ = writeln!(o, "{}", slice_line(l));
    }
    let _ = writeln!(o, "```");
    o
}

fn fix_args(fixes: &[String]) -> String {
    fixes.iter().map(|f| format!(" --fix {}", f)).collect()
}

/// The `reproduce` block: commands that work from the repository root.
pub fn reproduce(page: &Page, seeds: &[SeedRef], groups: &[Group], p: Option<&Primary>, n: u64) -> String {
    let mut o = String::new();
    let fixes = super::gather::page_fixes(seeds);
    let _ = writeln!(o, "```sh");
    if !seeds.is_empty() {
        let _ = writeln!(
            o,
            "# the seed files fail exactly as recorded{}",
            if fixes.is_empty() { "" } else { " (and pass with their fix)" }
        );
        for s in seeds {
            let _ = writeln!(o, "{} replay seeds/findings/{}", RUN, s.file);
        }
    }
    if let Some(p) = p {
        let q = shell_quote(&p.scenario);
        let bugs: String = p.bugs.iter().map(|b| format!(" --bug {}", b)).collect();
        let _ = writeln!(
            o,
            "# the seed of the timeline{}",
            if fixes.is_empty() { "" } else { "; then with the candidate fix" }
        );
        // A seed file with a recorded swarm plan or another engine than its scenario's is
        // its own run: the seed alone now draws the swarm's current plan, which may
        // differ, and runs the scenario's engine.
        let scenario_engine = crate::scenario::load::resolve(&p.scenario).map(|l| l.scenario.engine).ok();
        let run = match &p.file {
            Some(f) if p.plan.is_some() || scenario_engine != Some(p.engine) => {
                format!("--seed-file seeds/findings/{}", shell_quote(f))
            }
            _ => format!("{} --seed {}{}", q, p.seed, bugs),
        };
        let _ = writeln!(o, "{} scenario {}", RUN, run);
        if !fixes.is_empty() {
            let _ = writeln!(o, "{} scenario {}{}", RUN, run, fix_args(&fixes));
        }
        let stem = super::gather::shrunk_stem(
            &crate::scenario::load::resolve(&p.scenario).map(|l| l.scenario.name).unwrap_or_default(),
            &p.bugs,
            p.seed,
        );
        let what = if page.no_shrink.is_some() { "the timeline is of the run above" } else { "the timeline above" };
        let _ = writeln!(o, "# the minimized scenario, and its run ({})", what);
        let _ = writeln!(o, "{} shrink {} --out {}", RUN, run, SHRINK_OUT);
        let _ = writeln!(o, "{} scenario {}/{}.toml --seed {}{}", RUN, SHRINK_OUT, stem, p.seed, bugs);
    }
    let _ = writeln!(o, "# the rates under Measured");
    for (scn, bugs, fixes) in groups {
        let bugs: String = bugs.iter().map(|b| format!(" --bug {}", b)).collect();
        let _ = writeln!(o, "{} fuzz {} --seeds 0..{}{}", RUN, shell_quote(scn), n, bugs);
        if !fixes.is_empty() {
            let _ = writeln!(o, "{} fuzz {} --seeds 0..{}{}{}", RUN, shell_quote(scn), n, bugs, fix_args(fixes));
        }
    }
    let _ = writeln!(o, "# this page's generated blocks");
    let _ = writeln!(
        o,
        "{} findings --seeds {} --write-docs --page {}",
        RUN,
        n,
        page.stem().split('-').next().unwrap_or("")
    );
    let _ = writeln!(o, "```");
    o
}

/// The first line of the `measured` block: what the blocks were generated from.
pub fn inputs_line(n: u64, p: Option<&Primary>, hash: &str) -> String {
    let t = match p {
        Some(p) => format!("{}:{}", p.scenario, p.seed),
        None => "none".to_string(),
    };
    format!("<!-- inputs: n={} timeline={} hash={} -->", n, t, hash)
}

/// What [`inputs_line`] records.
#[derive(Debug, PartialEq, Eq)]
pub struct Inputs {
    pub n: u64,
    /// The timeline's scenario and seed.
    pub timeline: Option<(String, u64)>,
    pub hash: String,
}

/// Parse [`inputs_line`] back.
pub fn parse_inputs(line: &str) -> Option<Inputs> {
    let rest = line.trim().strip_prefix("<!-- inputs: ")?.strip_suffix(" -->")?;
    let mut n = None;
    let mut t = None;
    let mut h = None;
    for part in rest.split(' ') {
        match part.split_once('=')? {
            ("n", v) => n = v.parse().ok(),
            ("timeline", "none") => t = Some(None),
            ("timeline", v) => {
                let (s, seed) = v.rsplit_once(':')?;
                t = Some(Some((s.to_string(), seed.parse().ok()?)));
            }
            ("hash", v) => h = Some(v.to_string()),
            _ => return None,
        }
    }
    Some(Inputs { n: n?, timeline: t?, hash: h? })
}

/// The `measured` block: the inputs line and one row per measured group.
pub fn measured(inputs: &str, page: &Page, rows: &[FindingRow], n: u64) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{}", inputs);
    let _ = writeln!(
        o,
        "Seeds 0..{} of each scenario on the fixed core (TiCDC's behaviour at b813e76f9) and with the candidate fix (`--fix`, not TiCDC's behaviour); `ticdc-sim findings --seeds {} --write-docs` writes this block. Each run applies its scenario's masked findings (`mask-findings`).\n",
        n, n
    );
    let _ = writeln!(o, "| scenario | seed files | fails on the fixed core | first failing seed | first invariant violated | candidate fix | fails with the fix |");
    let _ = writeln!(o, "|---|---|---|---|---|---|---|");
    for r in rows {
        let files: Vec<String> = r.files.iter().filter(|f| page.owns(f, &r.scenario)).map(|f| code(f)).collect();
        let by: Vec<String> = r.by_invariant.iter().map(|(k, v)| format!("{} {}", k, v)).collect();
        let (fix, with) = if r.fixes.is_empty() {
            ("none".to_string(), "-".to_string())
        } else {
            let first = r.first_failing_seed_with_fix.map(|s| format!(" (first: {})", s)).unwrap_or_default();
            (
                r.fixes.iter().map(|f| code(f)).collect::<Vec<_>>().join(", "),
                format!("{} of {}{}", r.failures_with_fix, r.seeds, first),
            )
        };
        let _ = writeln!(
            o,
            "| {} | {} | {} of {} | {} | {} | {} | {} |",
            code(&r.scenario),
            if files.is_empty() { "none".to_string() } else { files.join(", ") },
            r.failures,
            r.seeds,
            r.first_failing_seed.map(|s| s.to_string()).unwrap_or_else(|| "-".into()),
            if by.is_empty() { "-".to_string() } else { by.join(", ") },
            fix,
            with
        );
    }
    if !page.seed_files.is_empty() {
        let _ = writeln!(
            o,
            "\nA standard scenario's row counts every failing seed of it, whichever finding it shows (its seed files here are the ones walked to this finding)."
        );
    }
    o
}
