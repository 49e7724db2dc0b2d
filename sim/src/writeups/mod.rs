//! `findings --write-docs`: the generated blocks of the finding pages,
//! `docs/findings/NN-<slug>.md`. Each page keeps its prose (the bug report: what was
//! done, expected and seen, the Go code path, the candidate fix, related issues) and has
//! three marked blocks the command rewrites from runs, so their numbers always match the
//! code: `timeline` (the page's seed shrunk, and the causal slice of the shrunk run),
//! `reproduce` (the commands) and `measured` (the rates over seeds 0..N on the fixed
//! core and with the candidate fix). Which page is about which scenarios and seed files
//! is [`pages::PAGES`]; the rest comes from the seed files.

mod block;
mod gather;
mod pages;
mod render;

pub use block::{BlockError, BLOCKS};
pub use pages::{find, Page, PAGES, UNCLASSIFIED};

use crate::error::CliError;
use crate::findings::{FindingRow, Group};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What `--write-docs` was asked for.
#[derive(Clone, Debug)]
pub struct DocsRequest {
    /// The pages' directory (`docs/findings`).
    pub dir: PathBuf,
    /// `--page` names; empty: every page.
    pub pages: Vec<String>,
}

/// A page to write: its mapping, file and current text (markers checked).
pub struct Target {
    pub page: &'static Page,
    pub path: PathBuf,
    pub text: String,
}

/// Resolve the request to pages and check their markers, before anything runs.
pub fn select(req: &DocsRequest) -> Result<Vec<Target>, CliError> {
    let mut chosen: Vec<&'static Page> = Vec::new();
    for name in &req.pages {
        let p = find(name).ok_or_else(|| CliError::UnknownPage {
            name: name.clone(),
            known: PAGES.iter().map(|p| p.stem()).collect::<Vec<_>>().join(", "),
        })?;
        if !chosen.contains(&p) {
            chosen.push(p);
        }
    }
    if chosen.is_empty() {
        chosen = PAGES.iter().collect();
    }
    chosen.sort_by_key(|p| p.file);
    chosen
        .into_iter()
        .map(|page| {
            let path = req.dir.join(page.file);
            let text =
                std::fs::read_to_string(&path).map_err(|source| CliError::ReadPage { path: path.clone(), source })?;
            block::check(&path, &text)?;
            Ok(Target { page, path, text })
        })
        .collect()
}

/// The groups the targets need from the findings directory's seed files (so `--page`
/// runs only those).
pub fn needed_groups(targets: &[Target], seeds_dir: &Path) -> Result<Vec<Group>, CliError> {
    let mut out = Vec::new();
    for t in targets {
        for g in gather::page_groups(t.page, &gather::page_seeds(t.page, seeds_dir)?) {
            if !out.contains(&g) {
                out.push(g);
            }
        }
    }
    Ok(out)
}

/// The three blocks of a page, rendered.
struct Blocks {
    timeline: String,
    reproduce: String,
    measured: String,
}

fn apply(path: &Path, text: &str, b: &Blocks) -> Result<String, BlockError> {
    let t = block::splice(path, text, "timeline", &b.timeline)?;
    let t = block::splice(path, &t, "reproduce", &b.reproduce)?;
    block::splice(path, &t, "measured", &b.measured)
}

/// Generate and write every target. `done`: the rows the findings report already ran
/// (by group); a page scenario without a seed file is run here. Returns one summary line
/// per page.
pub fn write_pages(
    targets: &[Target],
    seeds_dir: &Path,
    done: &mut BTreeMap<Group, FindingRow>,
    n: u64,
    jobs: usize,
) -> Result<String, CliError> {
    let mut out = String::new();
    for t in targets {
        if crate::interrupt::requested() {
            let _ = writeln!(out, "interrupted: {} not written", t.path.display());
            continue;
        }
        let wall = crate::wallclock::Stopwatch::start();
        let seeds = gather::page_seeds(t.page, seeds_dir)?;
        let groups = gather::page_groups(t.page, &seeds);
        let rows = gather::rows_for(&groups, done, n, jobs)?;
        let primary = gather::primary(&seeds, &rows);
        let stem = t.page.stem();
        let view = match &primary {
            Some(p) => {
                Some(gather::shrink_primary(p, t.page.no_shrink.is_none(), &mut |l| eprintln!("{}: {}", stem, l))?)
            }
            None => None,
        };
        let hash = gather::fingerprint(t.page, &seeds, n, primary.as_ref().map(|p| p.seed))?;
        let inputs = render::inputs_line(n, primary.as_ref(), &hash);
        let blocks = Blocks {
            timeline: render::timeline(primary.as_ref(), view.as_ref(), n, t.page.no_shrink),
            reproduce: render::reproduce(t.page, &seeds, &groups, primary.as_ref(), n),
            measured: render::measured(&inputs, t.page, &rows, n),
        };
        let text = apply(&t.path, &t.text, &blocks)?;
        crate::error::write_atomic(&t.path, &text).map_err(CliError::write_file(&t.path))?;
        let _ = writeln!(out, "wrote {} ({:.1} s)", t.path.display(), wall.elapsed().as_secs_f64());
    }
    Ok(out)
}

/// A page's blocks are current as far as can be told without running anything: its
/// inputs' fingerprint matches the recorded one and its `reproduce` block is exactly what
/// would be written. Returns N of the page. The freshness test calls this for every page.
pub fn check_current(path: &Path, page: &Page, seeds_dir: &Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {}", path.display(), e))?;
    block::check(path, &text).map_err(|e| e.to_string())?;
    let measured = block::body(path, &text, "measured").map_err(|e| e.to_string())?;
    let render::Inputs { n, timeline, hash } = measured
        .lines()
        .next()
        .and_then(render::parse_inputs)
        .ok_or_else(|| format!("{}: the measured block does not start with an inputs line", path.display()))?;
    let seeds = gather::page_seeds(page, seeds_dir).map_err(|e| e.to_string())?;
    let groups = gather::page_groups(page, &seeds);
    let primary = match gather::primary(&seeds, &[]) {
        Some(p) => Some(p),
        None => timeline.clone().map(|(scenario, seed)| gather::Primary {
            engine: crate::scenario::load::resolve(&scenario).map(|l| l.scenario.engine).unwrap_or_default(),
            scenario,
            seed,
            bugs: vec![],
            file: None,
            plan: None,
        }),
    };
    let now = gather::fingerprint(page, &seeds, n, primary.as_ref().map(|p| p.seed)).map_err(|e| e.to_string())?;
    let stale = |what: &str| {
        format!(
            "{}: {} changed since the blocks were generated; run `ticdc-sim findings --seeds {} --write-docs --page {}`",
            path.display(),
            what,
            n,
            page.stem()
        )
    };
    if now != hash {
        return Err(stale("its seed files or scenarios"));
    }
    if primary.as_ref().map(|p| (p.scenario.clone(), p.seed)) != timeline {
        return Err(stale("the seed of its timeline"));
    }
    let want = render::reproduce(page, &seeds, &groups, primary.as_ref(), n);
    if block::body(path, &text, "reproduce").map_err(|e| e.to_string())? != want {
        return Err(stale("its reproduce commands"));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    /// The committed pages' generated blocks match their inputs (seed files, scenarios,
    /// mapping) and carry one N, the N of the findings table in docs/measurements.md.
    /// Rates need runs, so this checks their inputs; `scripts/measurements.sh` rewrites them.
    #[test]
    fn committed_generated_blocks_are_current() {
        let (docs, seeds) = (root().join("docs/findings"), root().join("seeds/findings"));
        let mut ns = BTreeSet::new();
        for p in PAGES {
            ns.insert(check_current(&docs.join(p.file), p, &seeds).unwrap_or_else(|e| panic!("{}", e)));
        }
        assert_eq!(ns.len(), 1, "pages generated with different N: {:?}", ns);
        let n = ns.into_iter().next().unwrap();
        let m = std::fs::read_to_string(root().join("docs/measurements.md")).unwrap();
        assert!(
            m.contains(&format!("findings --seeds {} ", n)),
            "docs/measurements.md has no findings table of N = {}",
            n
        );
        // Every numbered page is in the mapping.
        for e in std::fs::read_dir(&docs).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().to_string();
            if name.as_bytes().first().is_some_and(|b| b.is_ascii_digit()) {
                assert!(PAGES.iter().any(|p| p.file == name), "{} is not in writeups::PAGES", name);
            }
        }
    }

    /// Writing a page's current blocks back changes nothing (idempotent), and a page
    /// whose reproduce block or inputs line was edited is reported stale.
    #[test]
    fn rewriting_is_idempotent_and_stale_blocks_fail_the_check() {
        let page = &PAGES[0];
        let path = root().join("docs/findings").join(page.file);
        let text = std::fs::read_to_string(&path).unwrap();
        let body = |b: &str| block::body(&path, &text, b).unwrap();
        let blocks = Blocks { timeline: body("timeline"), reproduce: body("reproduce"), measured: body("measured") };
        let again = apply(&path, &text, &blocks).unwrap();
        assert_eq!(again, text);
        assert_eq!(apply(&path, &again, &blocks).unwrap(), again);

        let dir = std::env::temp_dir().join(format!("ticdc-sim-writeups-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let seeds = root().join("seeds/findings");
        let edited = |b: Blocks, name: &str| {
            let p = dir.join(name);
            std::fs::write(&p, apply(&path, &text, &b).unwrap()).unwrap();
            check_current(&p, page, &seeds)
        };
        let mut b = Blocks { timeline: body("timeline"), reproduce: body("reproduce"), measured: body("measured") };
        b.reproduce = b.reproduce.replacen("replay", "reply", 1);
        let e = edited(b, "reproduce.md").unwrap_err();
        assert!(e.contains("reproduce commands changed"), "{}", e);
        let mut b = Blocks { timeline: body("timeline"), reproduce: body("reproduce"), measured: body("measured") };
        let first = b.measured.lines().next().unwrap().to_string();
        let i = render::parse_inputs(&first).unwrap();
        let p = i.timeline.map(|(scenario, seed)| gather::Primary {
            scenario,
            seed,
            bugs: vec![],
            file: None,
            plan: None,
            engine: Default::default(),
        });
        b.measured = b.measured.replacen(&first, &render::inputs_line(i.n, p.as_ref(), "0000000000000000"), 1);
        let e = edited(b, "hash.md").unwrap_err();
        assert!(e.contains("seed files or scenarios changed"), "{}", e);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn inputs_line_round_trips() {
        let p = gather::Primary {
            scenario: "scenarios/findings/x.toml".into(),
            seed: 7,
            bugs: vec![],
            file: None,
            plan: None,
            engine: Default::default(),
        };
        let l = render::inputs_line(1000, Some(&p), "00ff");
        let want =
            render::Inputs { n: 1000, timeline: Some(("scenarios/findings/x.toml".into(), 7)), hash: "00ff".into() };
        assert_eq!(render::parse_inputs(&l), Some(want));
        let none = render::Inputs { n: 5, timeline: None, hash: "ab".into() };
        assert_eq!(render::parse_inputs(&render::inputs_line(5, None, "ab")), Some(none));
        assert_eq!(render::parse_inputs("<!-- inputs: n=x -->"), None);
    }

    /// Bad input is one error and exit 2, before anything runs.
    #[test]
    fn unknown_pages_and_missing_markers_are_bad_input() {
        let run = |args: &[&str]| {
            let mut v = vec!["ticdc-sim"];
            v.extend_from_slice(args);
            crate::cli::main_with_args(v)
        };
        let unknown = DocsRequest { dir: root().join("docs/findings"), pages: vec!["no-such-page".into()] };
        let e = select(&unknown).err().unwrap().to_string();
        assert!(
            e.starts_with("--page no-such-page: no such finding page; pages: 01-status-watermark-snapshot,"),
            "{}",
            e
        );
        assert_eq!(run(&["findings", "--write-docs", "--page", "no-such-page"]), 2);
        assert_eq!(run(&["findings", "--page", "03"]), 2);
        let dir = std::env::temp_dir().join(format!("ticdc-sim-writeups-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(PAGES[2].file), "# no markers\n").unwrap();
        let req = DocsRequest { dir: dir.clone(), pages: vec!["03".into()] };
        let e = select(&req).err().unwrap().to_string();
        assert!(e.contains("03-zombie-closing-dispatcher-manager.md: no `<!-- generated: timeline -->` line"), "{}", e);
        assert_eq!(run(&["findings", "--write-docs", dir.to_str().unwrap(), "--page", "03"]), 2);
        let missing = DocsRequest { dir: dir.clone(), pages: vec!["04".into()] };
        assert!(select(&missing).err().unwrap().to_string().starts_with("cannot read finding page"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
