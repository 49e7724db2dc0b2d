//! The errors a command reports to the user: bad input (flags, seed files, scenarios)
//! and I/O on the directories it writes. `cli` prints one as a single `error: ...` line
//! and exits 2.

use crate::args::ArgError;
use crate::scenario::load::LoadError;
use crate::seedfile::SeedFileError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A bad flag value (`--seed`, `--seeds`, `--shard`, `--jobs`, `--bug`, `--fix`).
    #[error(transparent)]
    Arg(#[from] ArgError),
    /// A scenario that does not resolve, parse or validate (`file:line: reason`).
    #[error(transparent)]
    Scenario(#[from] LoadError),
    /// A seed file that does not read, parse or check.
    #[error(transparent)]
    SeedFile(#[from] SeedFileError),
    #[error("--save cannot be combined with --fix: seed files do not record candidate fixes")]
    SaveWithFix,
    #[error("--save cannot be combined with --no-mask: seed files do not record it; copy the scenario with `mask-findings = []` instead")]
    SaveWithNoMask,
    #[error("invalid --stop-after 0: need at least one failure to stop after")]
    ZeroStopAfter,
    #[error("invalid --runs 0: need at least one run")]
    ZeroExploreRuns,
    #[error("invalid --campaigns 0: need at least one campaign")]
    ZeroCampaigns,
    /// A failing mutant's scenario that does not serialize again (a bug of `explore`).
    #[error("cannot write an explored scenario: {detail}; please report this")]
    ExploreScenario { detail: String },
    #[error("invalid --seeds 0: the zoo needs at least one seed")]
    ZeroZooSeeds,
    #[error("invalid --seeds 0: need at least one seed")]
    ZeroFindingSeeds,
    /// A finding group (scenario, bugs, fixes) of a findings directory that cannot run.
    #[error("finding {scenario}: {source}")]
    Finding { scenario: String, source: Box<CliError> },
    /// `findings --page` naming no page of `docs/findings/`.
    #[error("--page {name}: no such finding page; pages: {known}")]
    UnknownPage { name: String, known: String },
    #[error("--page needs --write-docs: it selects the pages to write")]
    PageWithoutWriteDocs,
    #[error("cannot read finding page {}: {source}", path.display())]
    ReadPage { path: PathBuf, source: std::io::Error },
    /// A finding page whose generated-block markers are missing or broken (`file:line`).
    #[error(transparent)]
    PageBlock(#[from] crate::writeups::BlockError),
    /// A zoo bug whose mapped scenario does not load.
    #[error("bug {bug}: scenario {scenario}: {source}")]
    ZooScenario { bug: String, scenario: String, source: Box<LoadError> },
    /// `what` names the directory's role: `--save directory`, `report directory`.
    #[error("cannot create {what} {}: {source}", path.display())]
    CreateDir { what: &'static str, path: PathBuf, source: std::io::Error },
    /// `replay` or `findings --dir` of a directory that holds no `*.json` seed file.
    #[error("{what} {}: no seed files (*.json) in this directory", path.display())]
    NoSeedFiles { what: &'static str, path: PathBuf },
    /// `TICDC_SIM_SCENARIOS` names no directory.
    #[error("TICDC_SIM_SCENARIOS={}: not a directory (unset it to use the repository's scenarios/)", path.display())]
    ScenariosDir { path: PathBuf },
    /// `coverage` without scenario names found none in the scenarios directory.
    #[error("{}: no scenario files (*.toml) to cover; name scenarios or set TICDC_SIM_SCENARIOS", path.display())]
    NoScenarios { path: PathBuf },
    /// A report directory that exists but is not a directory (checked before any seed runs).
    #[error("--report-dir {}: not a directory", path.display())]
    ReportDirNotDir { path: PathBuf },
    #[error("cannot write seed file {}: {source}", path.display())]
    WriteSeedFile { path: PathBuf, source: std::io::Error },
    #[error("cannot write {}: {source}", path.display())]
    WriteFile { path: PathBuf, source: std::io::Error },
    /// A seed `shrink` cannot work on (it passes, or its bugs are not the cause).
    #[error(transparent)]
    Shrink(#[from] crate::shrink::ShrinkError),
    /// `what`: `report`, `summary`, `zoo`.
    #[error("cannot serialize the {what}: {source}")]
    Serialize { what: &'static str, source: serde_json::Error },
}

impl CliError {
    /// Make sure `dir` can take reports before any seed runs: create it, or refuse a path
    /// that names a file.
    pub(crate) fn prepare_report_dir(dir: &std::path::Path) -> Result<(), CliError> {
        if dir.exists() && !dir.is_dir() {
            return Err(CliError::ReportDirNotDir { path: dir.to_path_buf() });
        }
        std::fs::create_dir_all(dir).map_err(CliError::create_dir("report directory", dir))
    }
    pub(crate) fn create_dir(what: &'static str, path: &std::path::Path) -> impl FnOnce(std::io::Error) -> CliError {
        let path = path.to_path_buf();
        move |source| CliError::CreateDir { what, path, source }
    }
    pub(crate) fn write_file(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> CliError {
        let path = path.to_path_buf();
        move |source| CliError::WriteFile { path, source }
    }
    pub(crate) fn serialize(what: &'static str) -> impl FnOnce(serde_json::Error) -> CliError {
        move |source| CliError::Serialize { what, source }
    }
}

/// Write a file whole or not at all: into a temporary file beside it, then renamed, so a
/// campaign killed mid-write leaves no half-written seed file or report (the temporary
/// name ends in `.tmp`, which `replay` and `findings` ignore).
pub(crate) fn write_atomic(path: &std::path::Path, bytes: impl AsRef<[u8]>) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}
