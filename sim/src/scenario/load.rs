//! Loading and validating scenario files.
//!
//! [`resolve`] turns a command-line argument (a scenario name or a path) into a parsed
//! and validated [`Loaded`] scenario; [`list`] enumerates the scenarios directory.
//! Every error is a single line: `<path>:<line>:<col>: <reason>` for TOML errors,
//! `<path>:<line>: <reason>` for semantic ones.

use super::{parse_duration_ms, ChangefeedDef, Check, Predicate, RenameItem, Scenario, Step};
use core_sched::config::{
    is_valid_consistent_level, CONSISTENT_LEVEL_EVENTUAL, CONSISTENT_LEVEL_NONE, MIN_REDO_FLUSH_INTERVAL_MS,
};
use serde::Deserialize;
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Environment variable overriding the scenarios directory.
pub const SCENARIOS_ENV: &str = "TICDC_SIM_SCENARIOS";

/// A scenario and the file it came from.
pub struct Loaded {
    pub scenario: Scenario,
    pub path: std::path::PathBuf,
    pub source: String,
}

/// A one-line load or validation error. `Display` renders `path:line:col: reason`,
/// leaving out the parts that are unknown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    pub path: Option<PathBuf>,
    pub line: Option<usize>,
    pub col: Option<usize>,
    pub reason: String,
}

impl LoadError {
    fn plain(reason: String) -> Self {
        LoadError { path: None, line: None, col: None, reason }
    }
    fn at(path: &Path, line: Option<usize>, col: Option<usize>, reason: String) -> Self {
        LoadError { path: Some(path.to_path_buf()), line, col, reason }
    }
    /// The error without the file name (`line 3: reason`), for listings.
    pub fn short(&self) -> String {
        match (self.line, self.col) {
            (Some(l), Some(c)) => format!("line {}:{}: {}", l, c, self.reason),
            (Some(l), None) => format!("line {}: {}", l, self.reason),
            _ => self.reason.clone(),
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.path {
            write!(f, "{}:", p.display())?;
            if let Some(l) = self.line {
                write!(f, "{}:", l)?;
                if let Some(c) = self.col {
                    write!(f, "{}:", c)?;
                }
            }
            f.write_str(" ")?;
        }
        f.write_str(&self.reason)
    }
}

impl std::error::Error for LoadError {}

/// The scenarios directory: `$TICDC_SIM_SCENARIOS`, else the repository's `scenarios/`.
pub fn scenarios_dir() -> PathBuf {
    match std::env::var_os(SCENARIOS_ENV) {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios")),
    }
}

/// Load a scenario by name (from the scenarios directory) or by path (an argument
/// ending in `.toml` or containing `/`), then [`validate`] it.
pub fn resolve(arg: &str) -> Result<Loaded, LoadError> {
    resolve_in(&scenarios_dir(), arg)
}

/// [`resolve`] against an explicit scenarios directory.
pub fn resolve_in(dir: &Path, arg: &str) -> Result<Loaded, LoadError> {
    if is_path(arg) {
        // A relative path that does not exist from here is tried from the scenarios
        // directory's parent (the repository root), so seed files can name
        // `scenarios/findings/<x>.toml` whatever the current directory (e.g. `cargo test`).
        let p = Path::new(arg);
        if p.is_relative() && !p.exists() {
            if let Some(alt) = dir.parent().map(|root| root.join(p)).filter(|a| a.is_file()) {
                return load_path(&alt);
            }
        }
        return load_path(p);
    }
    let path = dir.join(format!("{}.toml", arg));
    if !path.is_file() {
        let names: Vec<String> = list_in(dir).into_iter().map(|(n, _)| n).collect();
        let valid = if names.is_empty() { format!("(none found in {})", dir.display()) } else { names.join(", ") };
        return Err(LoadError::plain(format!("unknown scenario '{}'; valid scenarios: {}", arg, valid)));
    }
    load_path(&path)
}

/// How a seed file names the scenario at `path`, so it replays from any working
/// directory: a scenario of the scenarios directory by its name, another file of the
/// repository by its path from the repository root, any other file by its absolute path.
pub fn seed_file_reference(path: &Path) -> String {
    let dir = scenarios_dir();
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let file = canon(path);
    if file.parent() == Some(canon(&dir).as_path()) {
        if let Some(stem) = file.file_stem() {
            return stem.to_string_lossy().into_owned();
        }
    }
    if let Some(root) = dir.parent().map(canon) {
        if let Ok(rel) = file.strip_prefix(&root) {
            return rel.to_string_lossy().into_owned();
        }
    }
    file.to_string_lossy().into_owned()
}

/// Whether a command-line argument names a file rather than a scenario.
pub fn is_path(arg: &str) -> bool {
    arg.ends_with(".toml") || arg.contains('/')
}

/// Read, parse and validate one scenario file. The scenario is named after the file.
pub fn load_path(path: &Path) -> Result<Loaded, LoadError> {
    let source = std::fs::read_to_string(path)
        .map_err(|e| LoadError::plain(format!("cannot read scenario file {}: {}", path.display(), e)))?;
    let mut loaded = parse(path, source)?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    if !is_safe_name(&stem) {
        return Err(LoadError::at(
            path,
            None,
            None,
            format!("scenario file name '{}' must be letters, digits, '_', '-' or '.' and not start with '.' (it names reports and seed files)", stem),
        ));
    }
    if !loaded.scenario.name.is_empty() && loaded.scenario.name != stem {
        let at = find_key(&loaded.source, "name").map(|o| line_col(&loaded.source, o));
        return Err(LoadError::at(
            path,
            at.map(|a| a.0),
            at.map(|a| a.1),
            format!("name '{}' differs from the file's name '{}': a scenario is named after its file (drop the key or make them equal)", loaded.scenario.name, stem),
        ));
    }
    loaded.scenario.name = stem;
    validate(&loaded)?;
    Ok(loaded)
}

/// A name that is safe as a file name of its own (no path separator, not hidden, not empty).
pub fn is_safe_name(s: &str) -> bool {
    !s.is_empty() && !s.starts_with('.') && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Documented bounds on a scenario's sizes (checked before any seed runs): beyond them a
/// run would take minutes or gigabytes without telling the user why.
pub const MAX_TABLES: usize = 2_000;
pub const MAX_ROWS: u64 = 1_000_000;
pub const MAX_REGIONS: u64 = 10_000;
pub const MAX_STEPS: usize = 10_000;

/// Parse TOML source (no semantic checks).
pub fn parse(path: &Path, source: String) -> Result<Loaded, LoadError> {
    match toml::from_str::<Scenario>(&source) {
        Ok(scenario) => Ok(Loaded { scenario, path: path.to_path_buf(), source }),
        Err(e) => {
            let (offset, message) = match e.span() {
                Some(span) => match refine(&source, span.clone()) {
                    Some((o, m)) => (Some(o), m),
                    None => (Some(span.start), e.message().to_string()),
                },
                None => (None, e.message().to_string()),
            };
            let (line, col) = offset.map(|o| line_col(&source, o)).unzip();
            Err(LoadError::at(path, line, col, one_line(&message)))
        }
    }
}

/// Steps and checks as raw TOML values, with spans.
#[derive(Deserialize)]
struct RawItems {
    #[serde(default)]
    steps: Vec<Spanned<toml::Value>>,
    #[serde(default)]
    checks: Vec<Spanned<toml::Value>>,
}

/// Serde's tagged enums (`action`, `kind`) lose positions, so toml blames the whole
/// `steps`/`checks` array. Re-parse each item on its own to find the bad one, and
/// within it the offending key or value when the message names it.
fn refine(source: &str, err: std::ops::Range<usize>) -> Option<(usize, String)> {
    let raw: RawItems = toml::from_str(source).ok()?;
    let inside = |s: &std::ops::Range<usize>| err.start <= s.start && s.end <= err.end;
    let steps = raw
        .steps
        .iter()
        .filter(|i| inside(&i.span()))
        .map(|i| (i.span(), Step::deserialize(i.get_ref().clone()).err()));
    let checks = raw
        .checks
        .iter()
        .filter(|i| inside(&i.span()))
        .map(|i| (i.span(), Check::deserialize(i.get_ref().clone()).err()));
    let (span, e) = steps.chain(checks).find_map(|(s, e)| e.map(|e| (s, e)))?;
    let msg = e.message().to_string();
    let text = &source[span.clone()];
    let at = backticked(&msg, "unknown field `")
        .and_then(|k| find_key(text, k))
        .or_else(|| backticked(&msg, "unknown variant `").and_then(|v| find_value(text, v)))
        .unwrap_or(0);
    Some((span.start + at, msg))
}

fn backticked<'a>(msg: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = &msg[msg.find(prefix)? + prefix.len()..];
    Some(&rest[..rest.find('`')?])
}

/// Offset of `key =` in `text`, the key not being part of a longer name.
fn find_key(text: &str, key: &str) -> Option<usize> {
    text.match_indices(key).map(|(i, _)| i).find(|&i| {
        let before = text[..i].chars().next_back();
        let after = text[i + key.len()..].trim_start_matches([' ', '\t']);
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-') && after.starts_with('=')
    })
}

/// Offset of the quoted string `value` in `text`.
fn find_value(text: &str, value: &str) -> Option<usize> {
    [format!("\"{}\"", value), format!("'{}'", value)].iter().filter_map(|q| text.find(q.as_str())).min()
}

/// Every `*.toml` in the scenarios directory as (name, one-line description), sorted by
/// name. Files that do not load are listed with `(invalid: <reason>)`.
pub fn list() -> Vec<(String, String)> {
    list_in(&scenarios_dir())
}

/// [`list`] for an explicit directory.
pub fn list_in(dir: &Path) -> Vec<(String, String)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return vec![] };
    let mut out: Vec<(String, String)> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "toml"))
        .filter_map(|p| {
            let name = p.file_stem()?.to_string_lossy().into_owned();
            let desc = match load_path(&p) {
                Ok(l) => one_line(&l.scenario.description),
                Err(e) => format!("(invalid: {})", e.short()),
            };
            Some((name, desc))
        })
        .collect();
    out.sort();
    out
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let mut off = offset.min(source.len());
    while !source.is_char_boundary(off) {
        off -= 1;
    }
    let before = &source[..off];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    (line, source[line_start..off].chars().count() + 1)
}

fn one_line(s: &str) -> String {
    s.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ")
}

// ---------------------------------------------------------------------------------
// Semantic validation
// ---------------------------------------------------------------------------------

/// Spans of the non-step fields that validation reports on. Parsed from the same source;
/// unknown fields are ignored here (the real parse already rejected them).
#[derive(Deserialize, Default)]
struct SpanDoc {
    cluster: Option<ClusterSpans>,
    #[serde(default)]
    tables: Vec<Spanned<toml::Value>>,
    #[serde(default)]
    vars: Vec<Spanned<toml::Value>>,
    /// Every `[faults]` knob by its key.
    faults: Option<std::collections::BTreeMap<String, Spanned<toml::Value>>>,
    limits: Option<LimitSpans>,
    changefeed: Option<ChangefeedSpans>,
}
#[derive(Deserialize)]
struct ChangefeedSpans {
    #[serde(rename = "check-balance-interval-ms")]
    check_balance_interval_ms: Option<Spanned<toml::Value>>,
    #[serde(rename = "balance-score-threshold")]
    balance_score_threshold: Option<Spanned<toml::Value>>,
    #[serde(rename = "add-table-batch-size")]
    add_table_batch_size: Option<Spanned<toml::Value>>,
    #[serde(rename = "balance-move-batch-size")]
    balance_move_batch_size: Option<Spanned<toml::Value>>,
    #[serde(rename = "scheduling-task-count-per-node")]
    scheduling_task_count_per_node: Option<Spanned<toml::Value>>,
    #[serde(rename = "consistent-level")]
    consistent_level: Option<Spanned<toml::Value>>,
    #[serde(rename = "consistent-flush-interval-ms")]
    consistent_flush_interval_ms: Option<Spanned<toml::Value>>,
    #[serde(rename = "consistent-meta-flush-interval-ms")]
    consistent_meta_flush_interval_ms: Option<Spanned<toml::Value>>,
}
#[derive(Deserialize)]
struct ClusterSpans {
    nodes: Option<Spanned<toml::Value>>,
    #[serde(rename = "join-later")]
    join_later: Option<Spanned<toml::Value>>,
}
#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct LimitSpans {
    max_sim_time_ms: Option<Spanned<toml::Value>>,
    max_events: Option<Spanned<toml::Value>>,
    converge_timeout_ms: Option<Spanned<toml::Value>>,
}

/// `[changefeed] consistent-*`: TiCDC's `ValidateAndAdjust` minimums. TiCDC takes an
/// unknown level as `none`; a scenario naming one is more likely a typo, so it is refused.
fn validate_consistent(v: &Validator, c: &ChangefeedDef, spans: Option<&ChangefeedSpans>) -> Result<(), LoadError> {
    let level_at = spans.and_then(|s| start(&s.consistent_level));
    let level = c.consistent_level.as_deref().unwrap_or(CONSISTENT_LEVEL_NONE);
    if !is_valid_consistent_level(level) {
        return Err(
            v.err(level_at, format!("changefeed.consistent-level must be \"none\" or \"eventual\", got {:?}", level))
        );
    }
    for (key, value, at) in [
        (
            "consistent-flush-interval-ms",
            c.consistent_flush_interval_ms,
            spans.and_then(|s| start(&s.consistent_flush_interval_ms)),
        ),
        (
            "consistent-meta-flush-interval-ms",
            c.consistent_meta_flush_interval_ms,
            spans.and_then(|s| start(&s.consistent_meta_flush_interval_ms)),
        ),
    ] {
        if let Some(ms) = value {
            // 0 takes TiCDC's default, as `ValidateAndAdjust` does.
            if ms != 0 && ms < MIN_REDO_FLUSH_INTERVAL_MS {
                return Err(v.err(
                    at,
                    format!(
                        "changefeed.{} must be at least {} (TiCDC's minimum), got {}",
                        key, MIN_REDO_FLUSH_INTERVAL_MS, ms
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn start<T>(s: &Option<Spanned<T>>) -> Option<usize> {
    s.as_ref().map(|s| s.span().start)
}

/// The `action` name of a step, as written in scenario files.
pub fn step_action(s: &Step) -> &'static str {
    match s {
        Step::CreateTable { .. } => "create_table",
        Step::DropTable { .. } => "drop_table",
        Step::CreateDatabase { .. } => "create_database",
        Step::DropDatabase { .. } => "drop_database",
        Step::TruncateTable { .. } => "truncate_table",
        Step::AddColumn { .. } => "add_column",
        Step::RenameTable { .. } => "rename_table",
        Step::RenameTables { .. } => "rename_tables",
        Step::RecoverTable { .. } => "recover_table",
        Step::CreateTables { .. } => "create_tables",
        Step::AlterDatabase { .. } => "alter_database",
        Step::CreatePartitionTable { .. } => "create_partition_table",
        Step::AddPartition { .. } => "add_partition",
        Step::DropPartition { .. } => "drop_partition",
        Step::TruncatePartition { .. } => "truncate_partition",
        Step::ReorganizePartition { .. } => "reorganize_partition",
        Step::ExchangePartition { .. } => "exchange_partition",
        Step::Insert { .. } => "insert",
        Step::Update { .. } => "update",
        Step::Delete { .. } => "delete",
        Step::SplitTableRegions { .. } => "split_table_regions",
        Step::MergeTableRegions { .. } => "merge_table_regions",
        Step::SetWriteRate { .. } => "set_write_rate",
        Step::MoveTable { .. } => "move_table",
        Step::SplitTable { .. } => "split_table",
        Step::MergeTable { .. } => "merge_table",
        Step::MoveMaintainer { .. } => "move_maintainer",
        Step::PauseChangefeed => "pause_changefeed",
        Step::UpdateChangefeed { .. } => "update_changefeed",
        Step::ResumeChangefeed => "resume_changefeed",
        Step::DmlLoop { .. } => "dml_loop",
        Step::StopDmlLoop => "stop_dml_loop",
        Step::EnableFailpoint { .. } => "enable_failpoint",
        Step::DisableFailpoint { .. } => "disable_failpoint",
        Step::Kill { .. } => "kill",
        Step::SessionLoss { .. } => "session_loss",
        Step::Restart { .. } => "restart",
        Step::Start { .. } => "start",
        Step::Partition { .. } => "partition",
        Step::Heal => "heal",
        Step::Sleep { .. } => "sleep",
        Step::SleepRandom { .. } => "sleep_random",
        Step::Wait { .. } => "wait",
        Step::RandomWorkload { .. } => "random_workload",
    }
}

/// The `kind` name of a check, as written in scenario files.
pub fn check_kind(c: &Check) -> &'static str {
    match c {
        Check::ReplicationCount { .. } => "replication_count",
        Check::TableExists { .. } => "table_exists",
        Check::TableNotExists { .. } => "table_not_exists",
        Check::SyncDiff { .. } => "sync_diff",
        Check::NoErrorLogged => "no_error_logged",
        Check::ChangefeedState { .. } => "changefeed_state",
        Check::NodeAlive { .. } => "node_alive",
        Check::TraceNotSeen { .. } => "trace_not_seen",
        Check::TraceField { .. } => "trace_field",
        Check::SyncpointRecorded { .. } => "syncpoint_recorded",
        Check::RedoApply => "redo_apply",
    }
}

fn predicate_table(p: &Predicate) -> Option<&str> {
    match p {
        Predicate::TableExistsDownstream { table }
        | Predicate::ReplicationCount { table, .. }
        | Predicate::TableNodeCount { table, .. }
        | Predicate::TableScheduled { table }
        | Predicate::TableOnNode { table, .. }
        | Predicate::DownstreamRowCount { table, .. } => Some(table),
        Predicate::TraceSeen { table, .. } => table.as_deref(),
        Predicate::DispatcherCount { .. }
        | Predicate::MaintainerMoved
        | Predicate::MaintainerOnNode { .. }
        | Predicate::CheckpointCaughtUp
        | Predicate::DownstreamSynced
        | Predicate::TraceSequence { .. }
        | Predicate::ChangefeedState { .. }
        | Predicate::SyncpointRecorded { .. }
        | Predicate::NodeExited { .. }
        | Predicate::DatabaseExistsDownstream { .. }
        | Predicate::DatabaseNotExistsDownstream { .. } => None,
    }
}

fn check_table(c: &Check) -> Option<&str> {
    match c {
        Check::ReplicationCount { table, .. } | Check::TableExists { table } | Check::TableNotExists { table } => {
            Some(table)
        }
        Check::TraceField { table, .. } => table.as_deref(),
        Check::SyncDiff { .. }
        | Check::NoErrorLogged
        | Check::ChangefeedState { .. }
        | Check::NodeAlive { .. }
        | Check::TraceNotSeen { .. }
        | Check::SyncpointRecorded { .. }
        | Check::RedoApply => None,
    }
}

/// What a step references: tables, nodes (with whether `all` is allowed), failpoints.
fn step_refs(s: &Step) -> (Option<&str>, Vec<(&str, bool)>, Option<&str>) {
    match s {
        Step::CreateTable { .. }
        | Step::CreatePartitionTable { .. }
        | Step::CreateTables { .. }
        | Step::RenameTables { .. }
        | Step::RecoverTable { .. }
        | Step::AlterDatabase { .. }
        | Step::CreateDatabase { .. }
        | Step::DropDatabase { .. }
        | Step::Heal
        | Step::Sleep { .. }
        | Step::SleepRandom { .. }
        | Step::RandomWorkload { .. }
        | Step::PauseChangefeed
        | Step::UpdateChangefeed { .. }
        | Step::ResumeChangefeed
        | Step::StopDmlLoop => (None, vec![], None),
        Step::DmlLoop { table, .. } => (Some(table), vec![], None),
        Step::DropTable { table }
        | Step::TruncateTable { table }
        | Step::AddColumn { table }
        | Step::RenameTable { table, .. }
        | Step::AddPartition { table, .. }
        | Step::DropPartition { table, .. }
        | Step::TruncatePartition { table, .. }
        | Step::ReorganizePartition { table, .. }
        | Step::ExchangePartition { table, .. }
        | Step::Insert { table, .. }
        | Step::Update { table, .. }
        | Step::Delete { table, .. }
        | Step::SplitTableRegions { table, .. }
        | Step::MergeTableRegions { table, .. }
        | Step::SetWriteRate { table, .. }
        | Step::SplitTable { table }
        | Step::MergeTable { table } => (Some(table), vec![], None),
        Step::MoveTable { table, to } => (Some(table), vec![(to, false)], None),
        Step::EnableFailpoint { name, node } | Step::DisableFailpoint { name, node } => {
            (None, vec![(node, true)], Some(name))
        }
        Step::Kill { node }
        | Step::SessionLoss { node, .. }
        | Step::Restart { node }
        | Step::Start { node }
        | Step::MoveMaintainer { to: node } => (None, vec![(node, false)], None),
        Step::Partition { a, b, .. } => (None, vec![(a, false), (b, false)], None),
        Step::Wait { until: Predicate::TableOnNode { table, node }, .. } => (Some(table), vec![(node, false)], None),
        Step::Wait { until: Predicate::TraceSeen { table, node: Some(node), .. }, .. } => {
            (table.as_deref(), vec![(node, false)], None)
        }
        Step::Wait { until: Predicate::NodeExited { node }, .. }
        | Step::Wait { until: Predicate::MaintainerOnNode { node, .. }, .. } => (None, vec![(node, false)], None),
        Step::Wait { until, .. } => (predicate_table(until), vec![], None),
    }
}

/// Whether a step acts on its table upstream (so the table must still exist there). The
/// scheduling API may still act on a dropped table's spans while its drop is in flight,
/// and waits and checks may name a dropped table.
fn step_needs_live_table(s: &Step) -> bool {
    matches!(
        s,
        Step::DropTable { .. }
            | Step::TruncateTable { .. }
            | Step::AddColumn { .. }
            | Step::RenameTable { .. }
            | Step::AddPartition { .. }
            | Step::DropPartition { .. }
            | Step::TruncatePartition { .. }
            | Step::ReorganizePartition { .. }
            | Step::ExchangePartition { .. }
            | Step::Insert { .. }
            | Step::Update { .. }
            | Step::Delete { .. }
            | Step::SplitTableRegions { .. }
            | Step::DmlLoop { .. }
    )
}

/// Whether a step may name a partitioned table (the others act on one physical table's
/// spans: name a normal table there).
fn step_takes_partitioned(s: &Step) -> bool {
    matches!(
        s,
        Step::Insert { .. }
            | Step::Update { .. }
            | Step::Delete { .. }
            | Step::DmlLoop { .. }
            | Step::DropTable { .. }
            | Step::TruncateTable { .. }
            | Step::AddColumn { .. }
            | Step::RenameTable { .. }
            | Step::AddPartition { .. }
            | Step::DropPartition { .. }
            | Step::TruncatePartition { .. }
            | Step::ReorganizePartition { .. }
            | Step::ExchangePartition { .. }
            | Step::Wait { until: Predicate::TableExistsDownstream { .. }, .. }
    )
}

/// Upper bound of a table's partitions (TiDB allows 8192; the model keeps runs small).
const MAX_PARTITIONS: usize = 1024;

/// The database every cluster has (`test`), and the default of `schema`.
const DEFAULT_DATABASE: &str = "test";

struct Validator<'a> {
    loaded: &'a Loaded,
    nodes: u32,
    vars: Vec<String>,
    tables: BTreeSet<String>,
    /// Databases that exist at this point of the steps.
    databases: BTreeSet<String>,
    /// Every database that existed at some point (predicates may name a dropped one).
    ever_databases: BTreeSet<String>,
    /// The database of each table.
    table_db: std::collections::BTreeMap<String, String>,
    /// Tables dropped by an earlier step, with how.
    dropped: std::collections::BTreeMap<String, String>,
    /// Names captured by `trace_seen` waits so far (`$name` values).
    values: BTreeSet<String>,
    /// Partitioned tables and their partition counts at this point of the steps.
    partitioned: std::collections::BTreeMap<String, usize>,
}

/// The `$name` value references of a step or check (field filters, ts, compared value).
fn value_refs_of_predicate(p: &Predicate) -> Vec<&str> {
    match p {
        Predicate::TraceSeen { fields, .. } => fields.values().map(|v| v.as_str()).collect(),
        Predicate::SyncpointRecorded { ts: Some(t) } => vec![t.as_str()],
        _ => vec![],
    }
}
fn value_refs_of_check(c: &Check) -> Vec<&str> {
    match c {
        Check::TraceField { fields, value, .. } => {
            fields.values().map(|v| v.as_str()).chain(std::iter::once(value.as_str())).collect()
        }
        Check::SyncpointRecorded { ts: Some(t) } | Check::SyncDiff { snapshot: Some(t) } => vec![t.as_str()],
        _ => vec![],
    }
}

impl Validator<'_> {
    fn err(&self, offset: Option<usize>, reason: String) -> LoadError {
        let line = offset.map(|o| line_col(&self.loaded.source, o).0);
        LoadError::at(&self.loaded.path, line, None, reason)
    }

    /// `$name` values must be captured by an earlier `trace_seen` wait.
    fn value_refs(&self, refs: &[&str], what: &str, offset: usize) -> Result<(), LoadError> {
        for r in refs {
            if let Some(name) = r.strip_prefix('$') {
                if !self.values.contains(name) {
                    let known = if self.values.is_empty() {
                        "none".to_string()
                    } else {
                        self.values.iter().map(|n| format!("${}", n)).collect::<Vec<_>>().join(", ")
                    };
                    return Err(self.err(
                        Some(offset),
                        format!(
                            "value '{}' in {} is not captured by an earlier trace_seen wait; captured values: {}",
                            r, what, known
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    fn known_table(&self, t: &str) -> bool {
        self.tables.contains(t)
    }

    fn database(&self, db: &str, what: &str, offset: usize, known: &BTreeSet<String>) -> Result<(), LoadError> {
        if known.contains(db) {
            return Ok(());
        }
        let list =
            if known.is_empty() { "none".to_string() } else { known.iter().cloned().collect::<Vec<_>>().join(", ") };
        Err(self.err(Some(offset), format!("unknown database '{}' in {}; known databases: {} (`test`, `databases`, the databases of [[tables]] and those of earlier create_database steps)", db, what, list)))
    }

    /// Validate the renames of one `rename_table(s)` step and apply them: each source
    /// is a live table, each target database exists, each target name is free (or freed
    /// by the same step) and named once; the old names are gone afterwards.
    fn renames(&mut self, renames: &[RenameItem], what: &str, at: usize) -> Result<(), LoadError> {
        let mut targets = BTreeSet::new();
        for r in renames {
            self.table(&r.table, what, at)?;
            if let Some(how) = self.dropped.get(&r.table) {
                return Err(self.err(
                    Some(at),
                    format!("table '{}' in {} no longer exists upstream: it was {}", r.table, what, how),
                ));
            }
            let db = r.database.clone().or_else(|| self.table_db.get(&r.table).cloned()).unwrap_or_default();
            let known = self.databases.clone();
            self.database(&db, what, at, &known)?;
            let freed = renames.iter().any(|o| o.table == r.to);
            let live = self.tables.contains(&r.to) && !self.dropped.contains_key(&r.to);
            if (live && !freed) || !targets.insert(r.to.clone()) {
                return Err(self.err(Some(at), format!("{}: target name '{}' is taken", what, r.to)));
            }
            if renames.iter().filter(|o| o.table == r.table).count() > 1 {
                return Err(self.err(Some(at), format!("{}: table '{}' is renamed twice", what, r.table)));
            }
        }
        let dbs: Vec<String> = renames
            .iter()
            .map(|r| r.database.clone().or_else(|| self.table_db.get(&r.table).cloned()).unwrap_or_default())
            .collect();
        let parts: Vec<Option<usize>> = renames.iter().map(|r| self.partitioned.remove(&r.table)).collect();
        for r in renames {
            self.tables.remove(&r.table);
            self.table_db.remove(&r.table);
        }
        for (r, n) in renames.iter().zip(parts) {
            if let Some(n) = n {
                self.partitioned.insert(r.to.clone(), n);
            }
        }
        for (r, db) in renames.iter().zip(dbs) {
            self.tables.insert(r.to.clone());
            self.table_db.insert(r.to.clone(), db);
            self.dropped.remove(&r.to);
        }
        Ok(())
    }

    fn table(&self, t: &str, what: &str, offset: usize) -> Result<(), LoadError> {
        if self.known_table(t) {
            return Ok(());
        }
        let known = if self.tables.is_empty() {
            "none".to_string()
        } else {
            self.tables.iter().cloned().collect::<Vec<_>>().join(", ")
        };
        Err(self.err(
            Some(offset),
            format!(
                "unknown table '{}' in {}; known tables: {} (define it in [[tables]] or an earlier create_table step)",
                t, what, known
            ),
        ))
    }

    /// Checks a node reference; `vars_visible` is how many `[[vars]]` entries it may use.
    fn node(
        &self,
        n: &str,
        allow_all: bool,
        vars_visible: usize,
        what: &str,
        offset: Option<usize>,
    ) -> Result<(), LoadError> {
        let ok = match n {
            "all" => allow_all,
            "$maintainer" => true,
            _ => {
                if let Some(v) = n.strip_prefix('$') {
                    self.vars[..vars_visible].iter().any(|x| x == v)
                } else if let Some(i) = n.strip_prefix('n') {
                    let canonical =
                        !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()) && (i == "0" || !i.starts_with('0'));
                    canonical && i.parse::<u32>().is_ok_and(|i| i < self.nodes)
                } else {
                    false
                }
            }
        };
        if ok {
            return Ok(());
        }
        let mut valid = vec![if self.nodes == 1 { "n0".to_string() } else { format!("n0..n{}", self.nodes - 1) }];
        if allow_all {
            valid.push("all".into());
        }
        valid.push("$maintainer".into());
        valid.extend(self.vars[..vars_visible].iter().map(|v| format!("${}", v)));
        let hint = if n == "all" { " ('all' is only allowed for failpoints)" } else { "" };
        Err(self.err(offset, format!("invalid node '{}' in {}{}; valid nodes: {}", n, what, hint, valid.join(", "))))
    }
}

/// Semantic checks on a parsed scenario. Errors are `<path>:<line>: <reason>`.
pub fn validate(loaded: &Loaded) -> Result<(), LoadError> {
    let scn = &loaded.scenario;
    let spans: SpanDoc = toml::from_str(&loaded.source).unwrap_or_default();
    let mut v = Validator {
        loaded,
        nodes: scn.cluster.nodes,
        vars: vec![],
        tables: BTreeSet::new(),
        databases: BTreeSet::new(),
        ever_databases: BTreeSet::new(),
        table_db: Default::default(),
        dropped: Default::default(),
        values: BTreeSet::new(),
        partitioned: Default::default(),
    };
    v.databases.insert(DEFAULT_DATABASE.to_string());

    if let Some(names) = &scn.mask_findings {
        for n in names {
            if core_sched::bugs::Fix::from_name(n).is_none() {
                let at = find_key(&loaded.source, "mask-findings");
                return Err(v.err(
                    at,
                    format!(
                        "mask-findings: unknown fix '{}'; valid fixes: {}",
                        n,
                        core_sched::bugs::Fix::names().join(", ")
                    ),
                ));
            }
        }
    }

    // [cluster]
    if !(1..=16).contains(&scn.cluster.nodes) {
        let at = spans.cluster.as_ref().and_then(|c| start(&c.nodes));
        return Err(v.err(at, format!("cluster.nodes must be between 1 and 16, got {}", scn.cluster.nodes)));
    }
    let join_at = spans.cluster.as_ref().and_then(|c| start(&c.join_later));
    for j in &scn.cluster.join_later {
        if j.starts_with('$') {
            return Err(v.err(join_at, format!("cluster.join-later takes plain node names (n0..), got '{}'", j)));
        }
        v.node(j, false, 0, "cluster.join-later", join_at)?;
    }
    if scn.cluster.join_later.iter().collect::<BTreeSet<_>>().len() >= scn.cluster.nodes as usize {
        return Err(
            v.err(join_at, "cluster.join-later must leave at least one node that starts with the cluster".into())
        );
    }

    // [changefeed]: TiCDC rejects a check-balance-interval of 1 s or less.
    if let Some(ms) = scn.changefeed.check_balance_interval_ms {
        if ms <= 1000 {
            let at = spans.changefeed.as_ref().and_then(|c| start(&c.check_balance_interval_ms));
            return Err(v.err(at, format!("changefeed.check-balance-interval-ms must be > 1000, got {}", ms)));
        }
    }
    // TiCDC replaces a balance-score-threshold of 0 with its default; a scenario that
    // names one means a real threshold.
    if scn.changefeed.balance_score_threshold == Some(0) {
        let at = spans.changefeed.as_ref().and_then(|c| start(&c.balance_score_threshold));
        return Err(v.err(at, "changefeed.balance-score-threshold must be > 0".into()));
    }
    // Batch sizes of 0 would schedule nothing at all.
    let cf_spans = spans.changefeed.as_ref();
    for (key, value, at) in [
        (
            "add-table-batch-size",
            scn.changefeed.add_table_batch_size,
            cf_spans.and_then(|c| start(&c.add_table_batch_size)),
        ),
        (
            "balance-move-batch-size",
            scn.changefeed.balance_move_batch_size,
            cf_spans.and_then(|c| start(&c.balance_move_batch_size)),
        ),
        (
            "scheduling-task-count-per-node",
            scn.changefeed.scheduling_task_count_per_node,
            cf_spans.and_then(|c| start(&c.scheduling_task_count_per_node)),
        ),
    ] {
        if let Some(n) = value {
            if n == 0 || n > 100_000 {
                return Err(v.err(at, format!("changefeed.{} must be between 1 and 100000, got {}", key, n)));
            }
        }
    }

    validate_consistent(&v, &scn.changefeed, cf_spans)?;
    if let Some(m) = &scn.api_mode {
        let at = find_key(&loaded.source, "api-mode");
        match m.as_str() {
            "default" => {}
            "redo" if scn.changefeed.consistent_level.as_deref() == Some(CONSISTENT_LEVEL_EVENTUAL) => {}
            "redo" => {
                return Err(v.err(at, "api-mode = \"redo\" needs changefeed.consistent-level = \"eventual\"".into()))
            }
            other => return Err(v.err(at, format!("api-mode must be \"default\" or \"redo\", got {:?}", other))),
        }
    }

    // [changefeed]
    for (key, d) in [
        ("sync-point-interval", &scn.changefeed.sync_point_interval),
        ("sync-point-retention", &scn.changefeed.sync_point_retention),
        ("region-count-refresh-interval", &scn.changefeed.region_count_refresh_interval),
    ] {
        if let Some(d) = d {
            match parse_duration_ms(d) {
                Ok(0) => return Err(v.err(None, format!("changefeed.{} must be > 0", key))),
                Ok(_) => {}
                Err(e) => return Err(v.err(None, format!("changefeed.{}: {}", key, e))),
            }
        }
    }

    // [[tables]]
    for (i, t) in scn.tables.iter().enumerate() {
        let at = spans.tables.get(i).map(|s| s.span().start);
        if !v.tables.insert(t.name.clone()) {
            return Err(v.err(at, format!("table '{}' is defined twice in [[tables]]", t.name)));
        }
        v.databases.insert(t.schema.clone());
        v.table_db.insert(t.name.clone(), t.schema.clone());
    }
    v.databases.extend(scn.databases.iter().cloned());
    v.ever_databases = v.databases.clone();

    // [[vars]]
    for (i, var) in scn.vars.iter().enumerate() {
        let at = spans.vars.get(i).map(|s| s.span().start);
        if var.name.is_empty() || var.name.starts_with('$') || var.name == "maintainer" {
            return Err(v.err(
                at,
                format!("invalid var name '{}': write it without '$', and 'maintainer' is reserved", var.name),
            ));
        }
        if v.vars.contains(&var.name) {
            return Err(v.err(at, format!("var '{}' is defined twice", var.name)));
        }
        for e in &var.except {
            v.node(e, false, i, &format!("var '{}' except", var.name), at)?;
        }
        v.vars.push(var.name.clone());
    }
    let nvars = v.vars.len();

    // [[steps]]
    for step in &scn.steps {
        let at = step.span().start;
        let s = step.get_ref();
        let what = format!("step '{}'", step_action(s));
        let (table, nodes, failpoint) = step_refs(s);
        if let Some(t) = table {
            v.table(t, &what, at)?;
            if step_needs_live_table(s) {
                if let Some(how) = v.dropped.get(t) {
                    return Err(v.err(
                        Some(at),
                        format!("table '{}' in {} no longer exists upstream: it was {}", t, what, how),
                    ));
                }
            }
        }
        if let Some(t) = table.filter(|t| v.partitioned.contains_key(*t)) {
            if !step_takes_partitioned(s) {
                return Err(v.err(
                    Some(at),
                    format!("{}: '{}' is a partitioned table; this step takes a normal table", what, t),
                ));
            }
        }
        for (n, allow_all) in nodes {
            v.node(n, allow_all, nvars, &what, Some(at))?;
        }
        if let Some(fp) = failpoint {
            if !core_sched::effects::KNOWN_FAILPOINTS.contains(&fp) {
                return Err(v.err(
                    Some(at),
                    format!(
                        "unknown failpoint '{}' in {}; valid failpoints: {}",
                        fp,
                        what,
                        core_sched::effects::KNOWN_FAILPOINTS.join(", ")
                    ),
                ));
            }
        }
        if let Step::Wait { until, .. } = s {
            v.value_refs(&value_refs_of_predicate(until), &what, at)?;
        }
        match s {
            Step::CreateTable { table, schema, .. } => {
                let known = v.databases.clone();
                v.database(schema, &what, at, &known)?;
                v.tables.insert(table.clone());
                v.table_db.insert(table.clone(), schema.clone());
                v.dropped.remove(table);
            }
            Step::DropTable { table } => {
                v.partitioned.remove(table);
                v.dropped.insert(
                    table.clone(),
                    format!("dropped by the drop_table step at line {}", line_col(&loaded.source, at).0),
                );
            }
            Step::CreateTables { tables, schema, .. } => {
                let known = v.databases.clone();
                v.database(schema, &what, at, &known)?;
                if tables.is_empty() {
                    return Err(v.err(Some(at), format!("{}: tables must name at least one table", what)));
                }
                let mut seen = BTreeSet::new();
                for t in tables {
                    if !seen.insert(t) {
                        return Err(v.err(Some(at), format!("{}: table '{}' is listed twice", what, t)));
                    }
                    v.tables.insert(t.clone());
                    v.table_db.insert(t.clone(), schema.clone());
                    v.dropped.remove(t);
                }
            }
            Step::RenameTable { table, to, database } => {
                let item = RenameItem { table: table.clone(), to: to.clone(), database: database.clone() };
                v.renames(std::slice::from_ref(&item), &what, at)?;
            }
            Step::RenameTables { renames } => {
                if renames.is_empty() {
                    return Err(v.err(Some(at), format!("{}: renames must list at least one table", what)));
                }
                v.renames(renames, &what, at)?;
            }
            Step::RecoverTable { table } => {
                v.table(table, &what, at)?;
                let how = v.dropped.get(table).cloned();
                match how {
                    Some(how) if how.starts_with("dropped by the drop_table step") => {
                        let db = v.table_db.get(table).cloned().unwrap_or_else(|| DEFAULT_DATABASE.to_string());
                        if !v.databases.contains(&db) {
                            return Err(v.err(
                                Some(at),
                                format!(
                                    "{}: table '{}' cannot be recovered: its database '{}' was dropped",
                                    what, table, db
                                ),
                            ));
                        }
                        v.dropped.remove(table);
                    }
                    Some(how) => {
                        return Err(v.err(
                            Some(at),
                            format!(
                                "{}: table '{}' cannot be recovered: it was {} (only a drop_table step's table can be)",
                                what, table, how
                            ),
                        ))
                    }
                    None => {
                        return Err(v.err(
                            Some(at),
                            format!("{}: table '{}' still exists (drop it with a drop_table step first)", what, table),
                        ))
                    }
                }
            }
            Step::AlterDatabase { database } => {
                let known = v.databases.clone();
                v.database(database, &what, at, &known)?;
            }
            Step::CreatePartitionTable { table, schema, partitions, .. } => {
                let known = v.databases.clone();
                v.database(schema, &what, at, &known)?;
                if *partitions == 0 || *partitions > MAX_PARTITIONS {
                    return Err(v.err(Some(at), format!("{}: partitions must be 1..={}", what, MAX_PARTITIONS)));
                }
                if v.tables.contains(table) && !v.dropped.contains_key(table) {
                    return Err(v.err(Some(at), format!("{}: table '{}' already exists", what, table)));
                }
                v.tables.insert(table.clone());
                v.table_db.insert(table.clone(), schema.clone());
                v.dropped.remove(table);
                v.partitioned.insert(table.clone(), *partitions);
            }
            Step::AddPartition { table, count }
            | Step::DropPartition { table, partition: count }
            | Step::TruncatePartition { table, partition: count } => {
                let Some(n) = v.partitioned.get(table).copied() else {
                    return Err(v.err(
                        Some(at),
                        format!(
                            "{}: '{}' is not a partitioned table (create it with create_partition_table)",
                            what, table
                        ),
                    ));
                };
                let after = match s {
                    Step::AddPartition { .. } if *count == 0 => {
                        return Err(v.err(Some(at), format!("{}: count must be > 0", what)))
                    }
                    Step::AddPartition { .. } => n + count,
                    _ if *count >= n => {
                        return Err(v.err(
                            Some(at),
                            format!("{}: table '{}' has {} partitions here, no partition {}", what, table, n, count),
                        ))
                    }
                    Step::DropPartition { .. } if n == 1 => {
                        return Err(v.err(Some(at), format!("{}: cannot drop the only partition of '{}'", what, table)))
                    }
                    Step::DropPartition { .. } => n - 1,
                    _ => n,
                };
                if after > MAX_PARTITIONS {
                    return Err(v.err(Some(at), format!("{}: more than {} partitions", what, MAX_PARTITIONS)));
                }
                v.partitioned.insert(table.clone(), after);
            }
            Step::ReorganizePartition { table, partitions, into } => {
                let Some(n) = v.partitioned.get(table).copied() else {
                    return Err(v.err(
                        Some(at),
                        format!(
                            "{}: '{}' is not a partitioned table (create it with create_partition_table)",
                            what, table
                        ),
                    ));
                };
                let distinct: BTreeSet<usize> = partitions.iter().copied().collect();
                if partitions.is_empty() || distinct.len() != partitions.len() || partitions.iter().any(|i| *i >= n) {
                    return Err(v.err(
                        Some(at),
                        format!("{}: partitions must name distinct partitions of the {} '{}' has here", what, n, table),
                    ));
                }
                let after = n - partitions.len() + into;
                if *into == 0 || after > MAX_PARTITIONS {
                    return Err(v.err(
                        Some(at),
                        format!("{}: into must be 1.. and leave at most {} partitions", what, MAX_PARTITIONS),
                    ));
                }
                v.partitioned.insert(table.clone(), after);
            }
            Step::ExchangePartition { table, partition, with } => {
                let Some(n) = v.partitioned.get(table).copied() else {
                    return Err(v.err(
                        Some(at),
                        format!(
                            "{}: '{}' is not a partitioned table (create it with create_partition_table)",
                            what, table
                        ),
                    ));
                };
                if *partition >= n {
                    return Err(v.err(
                        Some(at),
                        format!("{}: table '{}' has {} partitions here, no partition {}", what, table, n, partition),
                    ));
                }
                v.table(with, &what, at)?;
                if v.partitioned.contains_key(with) || v.dropped.contains_key(with) {
                    return Err(v.err(Some(at), format!("{}: with must name a live normal table", what)));
                }
            }
            Step::CreateDatabase { database } => {
                if v.databases.contains(database) {
                    return Err(
                        v.err(Some(at), format!("database '{}' in {} already exists (drop it first)", database, what))
                    );
                }
                v.databases.insert(database.clone());
                v.ever_databases.insert(database.clone());
            }
            Step::DropDatabase { database } => {
                let known = v.databases.clone();
                v.database(database, &what, at, &known)?;
                v.databases.remove(database);
                let how = format!(
                    "dropped with database '{}' by the drop_database step at line {}",
                    database,
                    line_col(&loaded.source, at).0
                );
                for (t, db) in &v.table_db {
                    if db == database {
                        v.dropped.entry(t.clone()).or_insert_with(|| how.clone());
                    }
                }
            }
            Step::Wait {
                until:
                    Predicate::DatabaseExistsDownstream { database } | Predicate::DatabaseNotExistsDownstream { database },
                ..
            } => {
                let known = v.ever_databases.clone();
                v.database(database, &what, at, &known)?;
            }
            Step::RandomWorkload { ops, .. }
                if (ops.contains(&super::WorkloadOp::CreateTable)
                    || ops.contains(&super::WorkloadOp::CreateTables))
                    && !v.databases.contains(DEFAULT_DATABASE) =>
            {
                return Err(v.err(Some(at), format!("{}: op create_table creates tables in database '{}', which an earlier drop_database step dropped (so does create_tables)", what, DEFAULT_DATABASE)));
            }
            Step::Start { node } if !scn.cluster.join_later.contains(node) => {
                return Err(v.err(
                    Some(at),
                    format!(
                        "step 'start': node '{}' is not listed in cluster.join-later (use 'restart' for a killed node)",
                        node
                    ),
                ));
            }
            Step::Sleep { ms: 0 } => return Err(v.err(Some(at), "step 'sleep': ms must be > 0".into())),
            Step::SplitTableRegions { regions: 0, .. } | Step::MergeTableRegions { regions: 0, .. } => {
                return Err(v.err(
                    Some(at),
                    format!("step '{}': regions must be > 0 (a table has at least one region)", step_action(s)),
                ))
            }
            Step::Wait { timeout_ms: 0, .. } => {
                return Err(v.err(Some(at), "step 'wait': timeout_ms must be > 0".into()))
            }
            Step::DmlLoop { interval_ms: 0, .. } => {
                return Err(v.err(Some(at), "step 'dml_loop': interval_ms must be > 0".into()))
            }
            Step::UpdateChangefeed { config } => {
                for d in [&config.sync_point_interval, &config.sync_point_retention].into_iter().flatten() {
                    match parse_duration_ms(d) {
                        Ok(0) => return Err(v.err(Some(at), "step 'update_changefeed': durations must be > 0".into())),
                        Ok(_) => {}
                        Err(e) => return Err(v.err(Some(at), format!("step 'update_changefeed': {}", e))),
                    }
                }
            }
            Step::Wait { until: Predicate::TraceSeen { capture, .. }, .. } => {
                for name in capture.keys() {
                    if name.is_empty() || name.starts_with('$') || name == "maintainer" || v.vars.contains(name) {
                        return Err(v.err(Some(at), format!("step 'wait': invalid capture name '{}': write it without '$'; it must not be 'maintainer' or a [[vars]] name", name)));
                    }
                    v.values.insert(name.clone());
                }
            }
            _ => {}
        }
    }

    // [[checks]] run after every step, so every created table is known.
    for check in &scn.checks {
        if matches!(check.get_ref(), Check::RedoApply)
            && scn.changefeed.consistent_level.as_deref() != Some(CONSISTENT_LEVEL_EVENTUAL)
        {
            return Err(v.err(
                Some(check.span().start),
                "check 'redo_apply' needs changefeed.consistent-level = \"eventual\" (there is no redo log to apply)"
                    .into(),
            ));
        }
        if let Check::NodeAlive { node } = check.get_ref() {
            v.node(node, false, nvars, "check 'node_alive'", Some(check.span().start))?;
        }
        let what = format!("check '{}'", check_kind(check.get_ref()));
        if let Some(t) = check_table(check.get_ref()) {
            v.table(t, &what, check.span().start)?;
        }
        if let Check::TraceField { node: Some(n), .. } = check.get_ref() {
            v.node(n, false, nvars, &what, Some(check.span().start))?;
        }
        v.value_refs(&value_refs_of_check(check.get_ref()), &what, check.span().start)?;
    }

    // Sizes.
    if scn.steps.len() > MAX_STEPS {
        return Err(v.err(None, format!("{} steps: at most {} are allowed", scn.steps.len(), MAX_STEPS)));
    }
    if scn.tables.len() > MAX_TABLES {
        return Err(v.err(None, format!("{} [[tables]]: at most {} are allowed", scn.tables.len(), MAX_TABLES)));
    }
    for (i, t) in scn.tables.iter().enumerate() {
        let at = spans.tables.get(i).map(|s| s.span().start);
        if t.rows > MAX_ROWS {
            return Err(v.err(at, format!("table '{}': rows {} is above the limit of {}", t.name, t.rows, MAX_ROWS)));
        }
        if t.regions > MAX_REGIONS {
            return Err(
                v.err(at, format!("table '{}': regions {} is above the limit of {}", t.name, t.regions, MAX_REGIONS))
            );
        }
    }
    // Steps: sizes, ranges, and the simulated time they need at least.
    let mut min_end_ms: u64 = 0;
    for step in &scn.steps {
        let at = Some(step.span().start);
        let s = step.get_ref();
        let what = format!("step '{}'", step_action(s));
        match s {
            Step::Insert { rows, .. }
            | Step::Update { rows, .. }
            | Step::Delete { rows, .. }
            | Step::DmlLoop { rows, .. }
                if *rows > MAX_ROWS =>
            {
                return Err(v.err(at, format!("{}: rows {} is above the limit of {}", what, rows, MAX_ROWS)));
            }
            Step::SplitTableRegions { regions, .. }
            | Step::MergeTableRegions { regions, .. }
            | Step::CreateTable { regions, .. }
                if *regions > MAX_REGIONS =>
            {
                return Err(v.err(at, format!("{}: regions {} is above the limit of {}", what, regions, MAX_REGIONS)));
            }
            Step::RandomWorkload { max_tables, regions, .. } if *max_tables > MAX_TABLES || *regions > MAX_REGIONS => {
                return Err(v.err(
                    at,
                    format!("{}: max_tables must be at most {} and regions at most {}", what, MAX_TABLES, MAX_REGIONS),
                ));
            }
            Step::SleepRandom { min_ms, max_ms } if min_ms > max_ms => {
                return Err(v.err(at, format!("{}: min_ms {} is greater than max_ms {}", what, min_ms, max_ms)));
            }
            _ => {}
        }
        min_end_ms = min_end_ms.saturating_add(match s {
            Step::Sleep { ms } => *ms,
            Step::SleepRandom { min_ms, .. } => *min_ms,
            Step::RandomWorkload { duration_ms, .. } => *duration_ms,
            _ => 0,
        });
        if min_end_ms > scn.limits.max_sim_time_ms {
            return Err(v.err(
                at,
                format!(
                    "{} ends at {} ms of simulated time or later, beyond limits.max-sim-time-ms = {} (raise the limit or shorten the steps)",
                    what, min_end_ms, scn.limits.max_sim_time_ms
                ),
            ));
        }
    }

    // [faults]: every [min, max] range ordered, every probability in 0..=1.
    if let Ok(toml::Value::Table(knobs)) = toml::Value::try_from(&scn.faults) {
        for (key, value) in &knobs {
            let at = spans.faults.as_ref().and_then(|f| f.get(key)).map(|k| k.span().start);
            match value {
                toml::Value::Array(a) if a.len() == 2 => {
                    if let (Some(lo), Some(hi)) = (a[0].as_integer(), a[1].as_integer()) {
                        if lo > hi {
                            return Err(v.err(at, format!("faults.{}: min {} is greater than max {}", key, lo, hi)));
                        }
                    }
                }
                toml::Value::Float(p) if !(0.0..=1.0).contains(p) => {
                    return Err(v.err(at, format!("faults.{} must be a probability between 0 and 1, got {}", key, p)));
                }
                _ => {}
            }
        }
    }

    // A pinned swarm plan replaces the draw, and names only the swarm's families.
    if let Some(families) = &scn.faults.swarm_families {
        let at = spans.faults.as_ref().and_then(|f| f.get("swarm-families")).map(|k| k.span().start);
        if scn.faults.swarm {
            return Err(v.err(at, "faults.swarm-families pins a drawn plan: it needs swarm = false".into()));
        }
        if let Some(bad) = families.keys().find(|k| !super::SWARM_FAMILIES.contains(&k.as_str())) {
            return Err(v.err(
                at,
                format!(
                    "faults.swarm-families: unknown family '{}'; valid families: {}",
                    bad,
                    super::SWARM_FAMILIES.join(", ")
                ),
            ));
        }
    }

    // [limits]
    let l = &scn.limits;
    let ls = spans.limits.as_ref();
    for (name, value, span) in [
        ("max-sim-time-ms", l.max_sim_time_ms, ls.and_then(|s| start(&s.max_sim_time_ms))),
        ("max-events", l.max_events, ls.and_then(|s| start(&s.max_events))),
        ("converge-timeout-ms", l.converge_timeout_ms, ls.and_then(|s| start(&s.converge_timeout_ms))),
    ] {
        if value == 0 {
            return Err(v.err(span, format!("limits.{} must be > 0", name)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
