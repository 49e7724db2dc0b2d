//! Seed files (`seeds/*.json`): one recorded run each, replayed by `replay` and by
//! `cargo test` (sim/tests/replay.rs). The format is documented in `seeds/README.md`.

use crate::args::ArgError;
use crate::result::{Outcome, RunResult};
use crate::runner::swarm::SwarmPlan;
use crate::scenario::load::LoadError;
use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A seed file that cannot be read, parsed or used; every message starts with the path.
#[derive(Debug, thiserror::Error)]
pub enum SeedFileError {
    #[error("{}: cannot read: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}: cannot read directory: {source}", path.display())]
    ReadDir { path: PathBuf, source: std::io::Error },
    /// Malformed JSON or an unknown field: serde_json's message, the position first.
    #[error("{}: line {line} column {column}: {message}", path.display())]
    Json { path: PathBuf, line: usize, column: usize, message: String },
    #[error("{}: trace_hash '{hash}' is not 16 hex digits", path.display())]
    TraceHash { path: PathBuf, hash: String },
    #[error("{}: expect.invariant is set but expect.outcome is pass", path.display())]
    InvariantOnPass { path: PathBuf },
    /// The file's scenario does not load.
    #[error("{}: {source}", path.display())]
    Scenario { path: PathBuf, source: Box<LoadError> },
    /// A bug or fix name of the file that does not exist; `field` is where it is
    /// (`bugs`, `control`, `fixed_by`).
    #[error("{}: {}{source}", path.display(), field_prefix(field))]
    Name { path: PathBuf, field: &'static str, source: ArgError },
    #[error("{}: unknown invariant '{name}'; valid invariants: {}, assert:<name> (ticdc-sim invariants)", path.display(), crate::checkers::ALL_INVARIANTS.join(", "))]
    UnknownInvariant { path: PathBuf, name: String },
    #[error("{}: a control with no bugs is only for a scenario under scenarios/findings/ (got '{scenario}'); elsewhere the bugs-off run must pass", path.display())]
    BugsOffControlOutsideFindings { path: PathBuf, scenario: String },
    #[error("{}: control: with no bugs, 'absent' must list every invariant the file expects ({missing} is missing)", path.display())]
    BugsOffControlMissesInvariant { path: PathBuf, missing: String },
    /// A recorded swarm plan the swarm could not have drawn.
    #[error("{}: swarm_plan: {message}", path.display())]
    Plan { path: PathBuf, message: String },
    #[error("{}: swarm_plan is only for a swarm scenario (faults.swarm = true); '{scenario}' is not one", path.display())]
    PlanWithoutSwarm { path: PathBuf, scenario: String },
}

/// `bugs` is the file's main list and goes unnamed in messages, as before.
fn field_prefix(field: &str) -> String {
    if field == "bugs" {
        String::new()
    } else {
        format!("{}: ", field)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedFile {
    /// Scenario name (a file stem in `scenarios/`) or path.
    pub scenario: String,
    pub seed: u64,
    #[serde(default)]
    pub bugs: Vec<String>,
    pub expect: Expect,
    /// The run's trace hash (16 hex digits) when the file was written.
    pub trace_hash: String,
    /// Where the seed came from (free text).
    #[serde(default)]
    pub note: String,
    /// For a bug caught only with a companion bug on (see the zoo): the same seed with
    /// only the control's `bugs` must not violate any of `absent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<Control>,
    /// For a known open finding: candidate fixes (`ticdc-sim bugs`, `--fix`) with which
    /// the same seed must pass, so the claim that they fix it stays checked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixed_by: Vec<String>,
    /// For a swarm scenario: the plan the seed drew when the file was written. Every run
    /// of the file pins it instead of drawing, so the file keeps its run when families
    /// join the swarm (those it does not name are off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swarm_plan: Option<SwarmPlan>,
    /// How the run's loops ran; absent: `capture-loops` (every file written before the
    /// engine could be chosen).
    #[serde(
        default = "crate::node::Engine::of_older_files",
        skip_serializing_if = "crate::node::Engine::is_capture_loops"
    )]
    pub engine: crate::node::Engine,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Control {
    pub bugs: Vec<String>,
    pub absent: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    pub outcome: Outcome,
    /// The first violation's invariant, if the run is expected to violate one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invariant: Option<String>,
    /// Invariants the run must violate too, after its first violation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
}

impl SeedFile {
    /// Whether the file's scenario is an open finding's (under `scenarios/findings/`), one
    /// the fixed core fails too.
    pub fn on_finding_scenario(&self) -> bool {
        self.scenario.contains("findings/")
    }

    /// The seed file that records `r`, a run with `engine`.
    pub fn of(r: &RunResult, scenario: &str, note: String, engine: crate::node::Engine) -> SeedFile {
        SeedFile {
            scenario: scenario.to_string(),
            seed: r.seed,
            bugs: r.bugs.clone(),
            expect: Expect {
                outcome: r.outcome,
                invariant: r.violations.first().map(|v| v.invariant.clone()),
                also: Vec::new(),
            },
            trace_hash: r.trace_hash.clone(),
            note,
            control: None,
            fixed_by: Vec::new(),
            swarm_plan: None,
            engine,
        }
    }

    /// The scenario a run of the file runs: the file's scenario with its recorded swarm
    /// plan pinned instead of the seed's draw. `path` is only used in messages.
    pub fn run_scenario(&self, path: &Path) -> Result<Scenario, SeedFileError> {
        let p = || path.to_path_buf();
        let mut scn = crate::scenario::load::resolve(&self.scenario)
            .map_err(|e| SeedFileError::Scenario { path: p(), source: Box::new(e) })?
            .scenario;
        if let Some(plan) = &self.swarm_plan {
            if !scn.faults.swarm {
                return Err(SeedFileError::PlanWithoutSwarm { path: p(), scenario: self.scenario.clone() });
            }
            // Uncompleted: the runner knows the families it does not name (off).
            plan.pin(&mut scn);
        }
        scn.engine = self.engine;
        Ok(scn)
    }

    /// The plan to record for a run of `scn` at `seed`: the swarm's draw, for a swarm.
    pub fn plan_for(scn: &Scenario, seed: u64) -> Option<SwarmPlan> {
        scn.faults.swarm.then(|| crate::runner::swarm::plan(seed))
    }

    /// Parse one file's text; `path` is only used in messages.
    pub fn parse(path: &Path, text: &str) -> Result<SeedFile, SeedFileError> {
        let f: SeedFile = serde_json::from_str(text).map_err(|e| {
            // serde_json appends " at line L column C"; we put the position first.
            let msg = e.to_string();
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            SeedFileError::Json {
                path: path.to_path_buf(),
                line: e.line(),
                column: e.column(),
                message: msg.strip_suffix(&suffix).unwrap_or(&msg).to_string(),
            }
        })?;
        // A crash has no trace hash; everything else must carry one to compare against.
        let hex = f.trace_hash.len() == 16 && f.trace_hash.chars().all(|c| c.is_ascii_hexdigit());
        let crash_without_hash = f.expect.outcome == Outcome::Crash && f.trace_hash.is_empty();
        if !hex && !crash_without_hash {
            return Err(SeedFileError::TraceHash { path: path.to_path_buf(), hash: f.trace_hash });
        }
        if f.expect.outcome == Outcome::Pass && f.expect.invariant.is_some() {
            return Err(SeedFileError::InvariantOnPass { path: path.to_path_buf() });
        }
        if let Some(p) = &f.swarm_plan {
            p.check().map_err(|message| SeedFileError::Plan { path: path.to_path_buf(), message })?;
        }
        Ok(f)
    }

    pub fn load(path: &Path) -> Result<SeedFile, SeedFileError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| SeedFileError::Read { path: path.to_path_buf(), source })?;
        SeedFile::parse(path, &text)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a seed file always serializes") + "\n"
    }

    /// Where a campaign saves the file in `dir`: its [`file_name`](Self::file_name),
    /// unless a file of that name there records a run of another engine (another run):
    /// then `<name>-<engine>.json`, so neither replaces the other.
    pub fn save_path(&self, dir: &Path) -> PathBuf {
        let p = dir.join(self.file_name());
        match SeedFile::load(&p) {
            Ok(old) if old.engine != self.engine => {
                dir.join(format!("{}-{}.json", self.file_name().trim_end_matches(".json"), self.engine.name()))
            }
            _ => p,
        }
    }

    /// File name under a seeds directory: scenario, bugs, seed.
    pub fn file_name(&self) -> String {
        let stem = self.scenario.rsplit('/').next().unwrap_or(&self.scenario).trim_end_matches(".toml");
        let bugs = if self.bugs.is_empty() { "nobug".to_string() } else { self.bugs.join("+") };
        format!("{}-{}-{}.json", stem, bugs, self.seed)
    }
}

/// The seed files to replay for a command-line argument: the file itself, or every
/// `*.json` directly in a directory, sorted by name.
pub fn collect(arg: &Path) -> Result<Vec<PathBuf>, SeedFileError> {
    let meta = std::fs::metadata(arg).map_err(|source| SeedFileError::Read { path: arg.to_path_buf(), source })?;
    if !meta.is_dir() {
        return Ok(vec![arg.to_path_buf()]);
    }
    let entries =
        std::fs::read_dir(arg).map_err(|source| SeedFileError::ReadDir { path: arg.to_path_buf(), source })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"scenario": "fail_over", "seed": 3, "bugs": [], "expect": {"outcome": "pass"}, "trace_hash": "f6d3fff8189935ad", "note": "x"}"#;

    #[test]
    fn parses_and_round_trips() {
        let f = SeedFile::parse(Path::new("a.json"), GOOD).unwrap();
        assert_eq!((f.seed, f.expect.outcome), (3, Outcome::Pass));
        assert_eq!(SeedFile::parse(Path::new("a.json"), &f.to_json()).unwrap(), f);
        assert_eq!(f.file_name(), "fail_over-nobug-3.json");
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let e = SeedFile::parse(Path::new("seeds/x.json"), "{\n  \"scenario\": \"a\",\n  \"sead\": 1\n}")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("seeds/x.json: line 3 column 8: unknown field `sead`"), "{e}");
        let e = SeedFile::parse(Path::new("x.json"), &GOOD.replace("\"pass\"", "\"passed\"")).unwrap_err().to_string();
        assert!(e.contains("unknown variant `passed`"), "{e}");
        let e = SeedFile::parse(Path::new("x.json"), &GOOD.replace("f6d3fff8189935ad", "xyz")).unwrap_err().to_string();
        assert!(e.contains("16 hex digits"), "{e}");
    }

    #[test]
    fn a_saved_file_never_replaces_a_run_of_another_engine() {
        use crate::node::Engine;
        let dir = std::env::temp_dir().join(format!("save-path-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let old = SeedFile::parse(Path::new("a.json"), GOOD).unwrap();
        assert_eq!(old.save_path(&dir), dir.join("fail_over-nobug-3.json"));
        std::fs::write(old.save_path(&dir), old.to_json()).unwrap();
        // The same engine: the same name (the newer run replaces it).
        assert_eq!(old.save_path(&dir), dir.join("fail_over-nobug-3.json"));
        let new = SeedFile { engine: Engine::RoleLoops, ..old };
        assert_eq!(new.save_path(&dir), dir.join("fail_over-nobug-3-role-loops.json"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_runs_the_engine_it_records_and_capture_loops_without_one() {
        use crate::node::Engine;
        let f = SeedFile::parse(Path::new("a.json"), GOOD).unwrap();
        assert_eq!(f.engine, Engine::CaptureLoops);
        assert!(!f.to_json().contains("engine"), "a capture-loops file stays as it was");
        let mut scn = f.run_scenario(Path::new("a.json")).unwrap();
        assert_eq!(scn.engine, Engine::CaptureLoops);
        let with = GOOD.replace("\"note\": \"x\"", "\"note\": \"x\", \"engine\": \"role-loops\"");
        let g = SeedFile::parse(Path::new("a.json"), &with).unwrap();
        assert_eq!(g.engine, Engine::RoleLoops);
        scn = g.run_scenario(Path::new("a.json")).unwrap();
        assert_eq!(scn.engine, Engine::RoleLoops);
        assert_eq!(SeedFile::parse(Path::new("a.json"), &g.to_json()).unwrap().engine, Engine::RoleLoops);
        let bad = GOOD.replace("\"note\": \"x\"", "\"note\": \"x\", \"engine\": \"ticker\"");
        let e = SeedFile::parse(Path::new("a.json"), &bad).unwrap_err().to_string();
        assert!(e.contains("capture-loops") && e.contains("role-loops"), "{e}");
    }

    #[test]
    fn a_recorded_plan_round_trips_and_pins_the_run_scenario() {
        let plan = crate::runner::swarm::plan(168);
        let mut f = SeedFile::parse(Path::new("a.json"), &GOOD.replace("fail_over", "swarm")).unwrap();
        f.swarm_plan = Some(plan.clone());
        let back = SeedFile::parse(Path::new("a.json"), &f.to_json()).unwrap();
        assert_eq!(back.swarm_plan.as_ref(), Some(&plan));
        let scn = back.run_scenario(Path::new("a.json")).unwrap();
        assert!(!scn.faults.swarm);
        assert_eq!(scn.faults.swarm_families.as_ref(), Some(&plan.families));
        // Without a plan the scenario draws, as before.
        assert!(
            SeedFile::parse(Path::new("a.json"), &GOOD.replace("fail_over", "swarm"))
                .unwrap()
                .run_scenario(Path::new("a.json"))
                .unwrap()
                .faults
                .swarm
        );
    }

    #[test]
    fn a_bad_plan_names_the_file_and_what_is_wrong() {
        let with = |plan: &str| GOOD.replace("\"note\": \"x\"", &format!("\"note\": \"x\", \"swarm_plan\": {}", plan));
        let e =
            SeedFile::parse(Path::new("s.json"), &with(r#"{"families": {"net.lost": true}}"#)).unwrap_err().to_string();
        assert!(
            e.starts_with("s.json: swarm_plan: unknown family 'net.lost'; valid families: net.loss, net.duplicate,"),
            "{e}"
        );
        let e = SeedFile::parse(Path::new("s.json"), &with(r#"{"families": {"net.loss": true}, "loss": 2.0}"#))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "s.json: swarm_plan: loss must be a probability between 0 and 1, got 2");
        let e = SeedFile::parse(Path::new("s.json"), &with(r#"{"families": {}, "los": 0.1}"#)).unwrap_err().to_string();
        assert!(e.contains("unknown field `los`"), "{e}");
        // A plan for a scenario that is not a swarm.
        let f = SeedFile::parse(Path::new("s.json"), &with(r#"{"families": {"net.loss": false}}"#)).unwrap();
        let e = f.run_scenario(Path::new("s.json")).unwrap_err().to_string();
        assert_eq!(e, "s.json: swarm_plan is only for a swarm scenario (faults.swarm = true); 'fail_over' is not one");
    }
}
