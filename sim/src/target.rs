//! What one run of `scenario` or `shrink` is: a scenario at a seed with bugs, from the
//! command line, or a seed file's run (`--seed-file`: its scenario, seed and bugs, with
//! its recorded swarm plan pinned instead of the seed's draw).

use crate::args::{parse_bugs, parse_seed, shell_quote};
use crate::error::CliError;
use crate::scenario::{load, Scenario};
use crate::seedfile::SeedFile;
use std::path::Path;

pub struct RunTarget {
    /// The scenario as given (or as the seed file names it).
    pub scenario_ref: String,
    pub scenario: Scenario,
    pub seed: u64,
    pub bug_names: Vec<String>,
    /// `--seed-file FILE` as given, for commands that rerun it.
    pub seed_file: Option<String>,
}

impl RunTarget {
    /// clap makes sure there is either a seed file or a scenario and a seed, not both.
    pub fn resolve(
        scenario: Option<&str>,
        seed: Option<&str>,
        bugs: &[String],
        seed_file: Option<&Path>,
    ) -> Result<RunTarget, CliError> {
        if let Some(path) = seed_file {
            let f = SeedFile::load(path)?;
            let scn = f.run_scenario(path)?;
            // The names were read from the file: a bad one names the file.
            parse_bugs(&f.bugs).map_err(|source| crate::seedfile::SeedFileError::Name {
                path: path.into(),
                field: "bugs",
                source,
            })?;
            return Ok(RunTarget {
                scenario_ref: f.scenario.clone(),
                scenario: scn,
                seed: f.seed,
                bug_names: f.bugs,
                seed_file: Some(path.display().to_string()),
            });
        }
        let scenario_ref = scenario.unwrap_or_default().to_string();
        let seed = parse_seed(seed.unwrap_or_default())?;
        parse_bugs(bugs)?;
        let scn = load::resolve(&scenario_ref)?.scenario;
        Ok(RunTarget { scenario_ref, scenario: scn, seed, bug_names: bugs.to_vec(), seed_file: None })
    }

    /// The arguments that select this run: `--seed-file FILE`, or `NAME --seed N
    /// [--bug X]...`.
    pub fn args(&self) -> String {
        match &self.seed_file {
            Some(f) => format!("--seed-file {}", shell_quote(f)),
            None => {
                let bugs: String = self.bug_names.iter().map(|b| format!(" --bug {}", b)).collect();
                format!("{} --seed {}{}", shell_quote(&self.scenario_ref), self.seed, bugs)
            }
        }
    }
}
