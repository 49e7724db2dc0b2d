//! The scenario file format (TOML). Documented for users in `scenarios/README.md`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

fn d_nodes() -> u32 {
    3
}
fn d_schema() -> String {
    "test".into()
}
fn d_one_usize() -> usize {
    1
}
fn d_one() -> u64 {
    1
}
fn d_net_delay() -> [u64; 2] {
    [1, 10]
}
fn d_spike() -> [u64; 2] {
    [500, 4000]
}
fn d_collector_lag() -> [u64; 2] {
    [10, 500]
}
fn d_reconnect() -> [u64; 2] {
    [10, 1000]
}
fn d_storage_latency() -> [u64; 2] {
    [2, 20]
}
fn d_interval() -> u64 {
    300
}
fn d_max_tables() -> usize {
    12
}
fn d_true() -> bool {
    true
}
fn d_loop_interval() -> u64 {
    1000
}

/// The candidate fixes every scenario applies unless it says `mask-findings`: open
/// findings that fire on most seeds of ordinary workloads
/// (`findings/status_watermark_snapshot`: the status-change heartbeat's stale watermark
/// snapshot lets the checkpoint pass a new dispatcher's progress).
pub const DEFAULT_MASKED_FINDINGS: &[core_sched::bugs::Fix] = &[core_sched::bugs::Fix::FreshStatusWatermark];

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// The scenario's name in reports, seed files and `fuzz` output. Loaded from a file,
    /// it is the file's stem (`scenarios/fail_over.toml` is `fail_over`); a `name` key,
    /// if given, must equal it.
    #[serde(default)]
    pub name: String,
    pub description: String,
    /// Open findings masked in this scenario: candidate fixes (`ticdc-sim bugs`) applied
    /// to every run, so a finding that fires on most runs of any workload does not hide
    /// everything else. Absent: [`DEFAULT_MASKED_FINDINGS`]. `[]` runs TiCDC's code as
    /// is (a finding's own scenario does).
    #[serde(default, rename = "mask-findings")]
    pub mask_findings: Option<Vec<String>>,
    /// `api-mode`: the mode (`"default"` or `"redo"`) the table API steps (`move_table`,
    /// `split_table`, `merge_table`) and the maintainer's table predicates and checks act
    /// on, as TiCDC's API `mode` parameter (the integration tests' `$mode`). Absent:
    /// `"default"`; `"redo"` needs `changefeed.consistent-level = "eventual"`.
    #[serde(default, rename = "api-mode")]
    pub api_mode: Option<String>,
    #[serde(default)]
    pub cluster: Cluster,
    #[serde(default)]
    pub changefeed: ChangefeedDef,
    /// Databases that exist before the changefeed, besides `test` and those of
    /// `[[tables]]` (no DDL for them is replicated).
    #[serde(default)]
    pub databases: Vec<String>,
    /// Tables created before the changefeed.
    #[serde(default)]
    pub tables: Vec<TableDef>,
    /// Named node variables chosen from the seed at run time, in order.
    #[serde(default)]
    pub vars: Vec<VarDef>,
    #[serde(default)]
    pub steps: Vec<toml::Spanned<Step>>,
    #[serde(default)]
    pub checks: Vec<toml::Spanned<Check>>,
    #[serde(default)]
    pub invariants: InvariantConfig,
    #[serde(default)]
    pub faults: FaultConfig,
    #[serde(default)]
    pub limits: Limits,
    /// How the captures' periodic loops run (`"role-loops"`, the default, or
    /// `"capture-loops"`); `--engine` overrides it and seed files record it.
    #[serde(default, skip_serializing_if = "crate::node::Engine::is_default")]
    pub engine: crate::node::Engine,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Cluster {
    #[serde(default = "d_nodes")]
    pub nodes: u32,
    /// Nodes (`n<i>`) not started with the cluster: each joins when a `start` step
    /// names it (a capture started mid-run, `run_cdc_server` in the middle of a test).
    #[serde(default, rename = "join-later")]
    pub join_later: Vec<String>,
}
impl Default for Cluster {
    fn default() -> Self {
        Cluster { nodes: 3, join_later: vec![] }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ChangefeedDef {
    #[serde(default)]
    pub sink: SinkKind,
    #[serde(default)]
    pub enable_table_across_nodes: bool,
    pub region_threshold: Option<u64>,
    pub region_count_per_span: Option<u64>,
    #[serde(default)]
    pub enable_splittable_check: bool,
    pub flush_interval_ms: Option<u64>,
    #[serde(default)]
    pub enable_sync_point: bool,
    /// `check-balance-interval` of the balance scheduler, in ms (TiCDC default 15 s).
    pub check_balance_interval_ms: Option<u64>,
    /// Go duration string (`"30s"`, `"10m"`, `"1m30s"`, `"500ms"`); TiCDC's default `10m`.
    pub sync_point_interval: Option<String>,
    /// Go duration string; TiCDC's default `24h` (the record cleanup is not modelled).
    pub sync_point_retention: Option<String>,
    /// Go duration string: `region-count-refresh-interval` of the region count refresher
    /// (TiCDC's default `5m`).
    pub region_count_refresh_interval: Option<String>,
    /// `write-key-threshold` in bytes per second (TiCDC's default 0: no traffic-based
    /// split, merge bound or balance); with table-across-nodes a value below 10 MiB is
    /// raised to 10 MiB, as TiCDC's `ValidateAndAdjust` does.
    pub write_key_threshold: Option<u64>,
    /// `balance-score-threshold` (TiCDC's default 20): consecutive imbalanced checks
    /// before the split-group checker balances traffic.
    pub balance_score_threshold: Option<u32>,
    /// `add-table-batch-size` (TiCDC's default 10000): operators the basic scheduler
    /// may have running at once.
    pub add_table_batch_size: Option<usize>,
    /// `balance-move-batch-size` (TiCDC's default 1024): moves per balance round.
    pub balance_move_batch_size: Option<usize>,
    /// `scheduling-task-count-per-node` (TiCDC's default 20): scheduling spans of a
    /// split group per node.
    pub scheduling_task_count_per_node: Option<usize>,
    /// `consistent.level`: `none` (TiCDC's default) or `eventual` (redo log on).
    pub consistent_level: Option<String>,
    /// `consistent.flush-interval` in ms (TiCDC's default 2000, minimum 50).
    pub consistent_flush_interval_ms: Option<u64>,
    /// `consistent.meta-flush-interval` in ms (TiCDC's default 200, minimum 50).
    pub consistent_meta_flush_interval_ms: Option<u64>,
}

/// The changefeed configuration keys `update_changefeed` may change (a
/// `cdc cli changefeed update --config` file); omitted keys keep their value.
#[derive(Clone, Debug, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ChangefeedUpdate {
    pub enable_sync_point: Option<bool>,
    pub sync_point_interval: Option<String>,
    pub sync_point_retention: Option<String>,
}

/// A duration string that is not Go syntax (the string as given).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration '{0}' (use Go syntax, e.g. \"30s\", \"10m\", \"1m30s\", \"500ms\")")]
pub struct DurationError(pub String);

/// Parse a Go duration string (`h`, `m`, `s`, `ms` units, e.g. `"1m30s"`) into ms.
pub fn parse_duration_ms(s: &str) -> Result<u64, DurationError> {
    let bad = || DurationError(s.to_string());
    let s = s.trim();
    if s.is_empty() {
        return Err(bad());
    }
    let (mut total, mut rest) = (0u64, s);
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if digits == 0 {
            return Err(bad());
        }
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let (unit, len) = if rest.starts_with("ms") {
            (1, 2)
        } else if rest.starts_with('h') {
            (3_600_000, 1)
        } else if rest.starts_with('m') {
            (60_000, 1)
        } else if rest.starts_with('s') {
            (1_000, 1)
        } else {
            return Err(bad());
        };
        total = n.checked_mul(unit).and_then(|v| total.checked_add(v)).ok_or_else(bad)?;
        rest = &rest[len..];
    }
    Ok(total)
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, Default, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SinkKind {
    #[default]
    Cloudstorage,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TableDef {
    pub name: String,
    /// The table's database (`database` is accepted too); it exists before the changefeed.
    #[serde(default = "d_schema", alias = "database")]
    pub schema: String,
    #[serde(default = "d_one")]
    pub regions: u64,
    #[serde(default)]
    pub rows: u64,
    /// Explicit write traffic of the table in bytes per second (0: none).
    #[serde(default, rename = "write-bytes-per-sec")]
    pub write_bytes_per_sec: u64,
    /// Bytes each row change adds to the table's traffic (0: rows add none).
    #[serde(default, rename = "row-bytes")]
    pub row_bytes: u64,
}

/// One rename of a `rename_tables` step.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RenameItem {
    pub table: String,
    pub to: String,
    #[serde(default)]
    pub database: Option<String>,
}

/// `name = "origin", from = "nodes", except = ["$maintainer"]`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct VarDef {
    pub name: String,
    #[serde(default)]
    pub except: Vec<String>,
}

/// One step of the skeleton, mirroring the integration-test helpers.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    CreateTable {
        table: String,
        /// The database (`database` is accepted too); it must exist.
        #[serde(default = "d_schema", alias = "database")]
        schema: String,
        #[serde(default = "d_one")]
        regions: u64,
    },
    DropTable {
        table: String,
    },
    /// `CREATE DATABASE <database>` (a trigger-only, non-blocking DDL).
    CreateDatabase {
        database: String,
    },
    /// `DROP DATABASE <database>`: drops every table of it (a blocking DDL of the schema).
    DropDatabase {
        database: String,
    },
    TruncateTable {
        table: String,
    },
    AddColumn {
        table: String,
    },
    /// `RENAME TABLE <table> TO <database>.<to>`: the table keeps its ID; `database`
    /// (default: the table's own) must exist. Later steps name it `to`.
    RenameTable {
        table: String,
        to: String,
        #[serde(default)]
        database: Option<String>,
    },
    /// `RENAME TABLE a TO b, c TO d`: several renames in one DDL.
    RenameTables {
        renames: Vec<RenameItem>,
    },
    /// `RECOVER TABLE <table>`: the table dropped by an earlier `drop_table` step comes
    /// back under its old ID with its rows.
    RecoverTable {
        table: String,
    },
    /// `CREATE TABLE` of several tables in one DDL (TiDB's batch create, `CREATE TABLES`).
    CreateTables {
        tables: Vec<String>,
        #[serde(default = "d_schema", alias = "database")]
        schema: String,
        #[serde(default = "d_one")]
        regions: u64,
    },
    /// `ALTER DATABASE <database> CHARACTER SET ...`: a DB-level blocking DDL that
    /// changes no table.
    AlterDatabase {
        database: String,
    },
    /// `CREATE TABLE ... PARTITION BY HASH ... PARTITIONS <partitions>`: one logical table
    /// of `partitions` physical tables, each with its own ID and spans.
    CreatePartitionTable {
        table: String,
        #[serde(default = "d_schema", alias = "database")]
        schema: String,
        partitions: usize,
        #[serde(default = "d_one")]
        regions: u64,
    },
    /// `ALTER TABLE ADD PARTITION`: `count` new partitions at the end.
    AddPartition {
        table: String,
        #[serde(default = "d_one_usize")]
        count: usize,
    },
    /// `ALTER TABLE DROP PARTITION`: partition number `partition` (0-based, in
    /// definition order at that point).
    DropPartition {
        table: String,
        partition: usize,
    },
    /// `ALTER TABLE TRUNCATE PARTITION`: the partition gets a new ID, empty.
    TruncatePartition {
        table: String,
        partition: usize,
    },
    /// `ALTER TABLE REORGANIZE PARTITION`: the listed partitions become `into` new ones.
    ReorganizePartition {
        table: String,
        partitions: Vec<usize>,
        into: usize,
    },
    /// `ALTER TABLE EXCHANGE PARTITION ... WITH TABLE <with>`: the partition and the
    /// normal table swap IDs (and data); `with` then names the old partition's ID.
    ExchangePartition {
        table: String,
        partition: usize,
        with: String,
    },
    Insert {
        table: String,
        rows: u64,
    },
    Update {
        table: String,
        rows: u64,
    },
    Delete {
        table: String,
        rows: u64,
    },
    SplitTableRegions {
        table: String,
        regions: u64,
    },
    /// PD merged regions of the table: its count drops to `regions` (at least 1; a
    /// table that already has fewer keeps its count).
    MergeTableRegions {
        table: String,
        regions: u64,
    },
    /// Set the table's write traffic from now on: `bytes_per_sec` of explicit traffic
    /// and, if given, the bytes each row change adds.
    SetWriteRate {
        table: String,
        bytes_per_sec: u64,
        #[serde(default)]
        row_bytes: Option<u64>,
    },
    MoveTable {
        table: String,
        to: String,
    },
    SplitTable {
        table: String,
    },
    /// `merge_table`: merge two consecutive spans of the table on one node (test API).
    MergeTable {
        table: String,
    },
    /// Move the changefeed's maintainer to another capture (coordinator API).
    MoveMaintainer {
        to: String,
    },
    /// `cdc cli changefeed pause`: the coordinator stops the maintainer (cascade).
    PauseChangefeed,
    /// `cdc cli changefeed update --config`: change the persisted configuration of a
    /// paused changefeed; it applies when the changefeed is resumed.
    UpdateChangefeed {
        config: ChangefeedUpdate,
    },
    /// `cdc cli changefeed resume`: a new maintainer generation from the checkpoint.
    ResumeChangefeed,
    /// Start a background loop inserting `rows` rows into `table` every `interval_ms`
    /// (the integration tests' `while true; do run_sql INSERT ...; sleep 1; done &`).
    DmlLoop {
        table: String,
        #[serde(default = "d_loop_interval")]
        interval_ms: u64,
        #[serde(default = "d_one")]
        rows: u64,
    },
    /// Stop every background DML loop (`kill $dml_pid`).
    StopDmlLoop,
    EnableFailpoint {
        name: String,
        node: String,
    },
    DisableFailpoint {
        name: String,
        node: String,
    },
    Kill {
        node: String,
    },
    /// `revoke_capture_lease`: the capture's etcd session ends while its process keeps
    /// running. The cluster drops it from the alive set after the failure-detection
    /// delay; the capture notices after a drawn delay, local-fences, closes and exits.
    SessionLoss {
        node: String,
        /// Range [min, max] in ms of the delay until the capture notices its session is
        /// done, drawn from the seed (default `session::SESSION_DONE_NOTICE_MS`).
        #[serde(default)]
        notice_ms: Option<[u64; 2]>,
    },
    Restart {
        node: String,
    },
    /// Start a node listed in `cluster.join-later` (it joins the cluster now).
    Start {
        node: String,
    },
    Partition {
        a: String,
        b: String,
        #[serde(default = "d_true")]
        symmetric: bool,
    },
    Heal,
    Sleep {
        ms: u64,
    },
    /// Sleep a duration drawn from the seed in [min_ms, max_ms] (moves the next step
    /// across protocol phases from seed to seed).
    SleepRandom {
        min_ms: u64,
        max_ms: u64,
    },
    Wait {
        until: Predicate,
        timeout_ms: u64,
    },
    /// Random DDL/DML/scheduling operations drawn from the seed, one every
    /// `interval_ms` for `duration_ms` (the random workers of `ddl_with_random_move_table`).
    RandomWorkload {
        duration_ms: u64,
        #[serde(default = "d_interval")]
        interval_ms: u64,
        ops: Vec<WorkloadOp>,
        /// Upper bound of live tables (creates stop there).
        #[serde(default = "d_max_tables")]
        max_tables: usize,
        /// Regions of tables the workload creates.
        #[serde(default = "d_one")]
        regions: u64,
    },
}

/// Operations a `random_workload` step may draw.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadOp {
    CreateTable,
    DropTable,
    TruncateTable,
    AddColumn,
    Dml,
    MoveTable,
    SplitTable,
    MergeTable,
    /// PD merges regions of a random live table: its count drops to the op's drawn
    /// number (1-5) if it had more (`merge_table_regions`). In the `split_merge` swarm
    /// family.
    MergeTableRegions,
    /// Kill a random capture (never the last live one) and restart it 2-6 s later.
    KillRestart,
    /// Move the maintainer to a random other capture.
    MoveMaintainer,
    /// Cut the network from one random capture to another (one-way or both ways, drawn)
    /// and heal that cut 1-5 s later; the captures stay alive for the coordinator.
    Partition,
    /// A random capture (never the last live one) loses its etcd session: it local-fences,
    /// closes and exits (`session_loss`), and is started again as a fresh process once it
    /// has exited (a supervisor restarting the server). A `swarm` family.
    SessionLoss,
    /// CREATE DATABASE `wd<k>` and 1-3 tables in it (with rows), up to `max_tables`.
    CreateDatabase,
    /// DROP DATABASE of a random database the workload created (none: nothing happens).
    DropDatabase,
    /// RENAME TABLE of a random live table to a fresh name, in its own database or (by
    /// the op's draw) another one the workload created. In the `ddl_table_set` swarm family.
    RenameTable,
    /// RENAME TABLES of two random live tables to fresh names in one DDL.
    RenameTables,
    /// RECOVER TABLE of the table the workload dropped last (if its name and database
    /// are still free and alive).
    RecoverTable,
    /// CREATE TABLES: 2-3 tables in `test` in one DDL (with rows), up to `max_tables`.
    CreateTables,
    /// ALTER DATABASE of `test` or a random database the workload created.
    AlterDatabase,
    /// PD splits the regions of a random live table: its count grows 2-6 times (at most
    /// 256). In the `split.check` swarm family.
    SplitTableRegions,
    /// A random live table's write traffic changes: idle, or 12-60 MiB/s (above TiCDC's
    /// minimum `write-key-threshold` of 10 MiB/s). In the `split.check` swarm family.
    HotTable,
    /// Two or three DDLs at the same instant (consecutive commit ts): a table-set DDL,
    /// then another table-set DDL or a database-level one, so the barrier holds several
    /// at once. In the `ddl.burst` swarm family.
    DdlBurst,
    /// CREATE TABLE `p<k>` PARTITION BY HASH in `test` (2-4 partitions, with rows). In
    /// the `ddl.partition` swarm family.
    CreatePartitionTable,
    /// A partition DDL on a random partitioned table of the workload: ADD, DROP,
    /// TRUNCATE, REORGANIZE or EXCHANGE PARTITION (with a random normal table), then rows.
    AlterPartition,
    /// Switch a failpoint (`BlockCreateDispatcher`, `BlockOrWaitBeforeWrite`,
    /// `NotReadyToCloseDispatcher`, `StopBalanceScheduler` or `NewDispatcherManagerDelay`)
    /// on at a random capture and off 1-5 s later. In the
    /// `failpoint` swarm family.
    Failpoint,
    /// Start table operators (a move, split or merge API call) and at once move the
    /// maintainer or kill its capture (restarted 2-6 s later), so the next maintainer
    /// bootstraps with schedule requests in flight. In the `move_in_flight` swarm family.
    MoveInFlight,
    /// The coordinator's capture loses its etcd session (it keeps acting until it
    /// notices, 1-4 s later) right after a maintainer move, and restarts once it has
    /// exited. In the `coordinator.loss` swarm family.
    CoordinatorLoss,
    /// Pause the changefeed through the coordinator (`cdc cli changefeed pause`: its
    /// maintainer is stopped with cascade) and resume it 1-5 s later (a new maintainer
    /// generation from the checkpoint). In the `changefeed.pause` swarm family.
    PauseResume,
    /// Hold the dispatchers of a table's capture open (`NotReadyToCloseDispatcher`),
    /// move, split, merge or drop the table, and move the maintainer or kill its capture
    /// while that removal is held; the failpoint goes off 2-6 s later. In the
    /// `failover.held_removal` swarm family.
    HeldFailover,
    /// ADD COLUMN on a random table of two or more spans while `BlockOrWaitBeforeWrite`
    /// holds barrier writes on every capture, then a merge or move of that table 0.5-3 s
    /// later; the failpoint goes off 1-5 s after that. In the `ddl.in_flight_scheduling`
    /// swarm family.
    DdlInFlight,
    /// `BlockOrWaitReportAfterWrite` on the maintainer's capture (the table trigger's)
    /// for 1-5 s, then a DDL burst: the trigger's DONE of a written DDL is held while the
    /// next block events queue behind it. In the `ddl.report_after_write` swarm family.
    ReportAfterWrite,
    /// Every capture's schema store fails its table loads (`getAllPhysicalTablesGCFastFail`)
    /// and, by the op's draw, the coordinator holds a failed changefeed's stop for 1-3 s
    /// (`BlockBeforeStopChangefeed`); a pause and a resume 0.2-1 s later make the next
    /// maintainer's bootstrap fail with a fast-fail error, so the changefeed fails; then
    /// the schema stores recover and the failed changefeed is resumed. In the
    /// `changefeed.fail` swarm family.
    FailResume,
    /// DROP TABLE of a table while `BlockOrWaitBeforeWrite` holds its write and
    /// `NotReadyToCloseDispatcher` holds dispatcher closes on every capture, then a merge
    /// (kind 0-1, a table of two or more spans) or split (kind 2, a one-span table) of
    /// that table: the operator is in flight when the DROP removes its tasks. Not with
    /// the redo log on. In the `ddl.drop_in_flight` swarm family.
    DropInFlight,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CmpOp {
    Eq,
    Ge,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Predicate {
    TableExistsDownstream {
        table: String,
    },
    ReplicationCount {
        table: String,
        op: CmpOp,
        count: usize,
    },
    /// The number of distinct captures holding Replicating spans of the table.
    TableNodeCount {
        table: String,
        op: CmpOp,
        count: usize,
    },
    TableScheduled {
        table: String,
    },
    /// Every span of the table is Replicating on `node` (`ensure_table_on_addr`).
    TableOnNode {
        table: String,
        node: String,
    },
    DispatcherCount {
        op: CmpOp,
        count: usize,
    },
    MaintainerMoved,
    /// The changefeed's maintainer (the newest generation not stopped) runs on `node`;
    /// with `initialized`, it also finished its bootstrap and post-bootstrap (a move to
    /// `node` is complete and the next move can remove it at once).
    MaintainerOnNode {
        node: String,
        #[serde(default)]
        initialized: bool,
    },
    /// A trace record with this event name (and, if given, on `node`, of `table`, with
    /// a field value containing `contains`, and with every `fields` entry equal; a value
    /// `"$name"` is a captured value). On success, `capture` stores fields of the first matching record as values
    /// (`{ name = "field" }`) for later steps and checks.
    TraceSeen {
        event: String,
        table: Option<String>,
        node: Option<String>,
        contains: Option<String>,
        #[serde(default)]
        fields: BTreeMap<String, String>,
        #[serde(default)]
        capture: BTreeMap<String, String>,
    },
    /// The events were recorded on one node in this order (others may come between):
    /// the `awk` log checks of the integration tests.
    TraceSequence {
        events: Vec<String>,
    },
    /// The persisted changefeed state (and, if given, a substring of its error).
    ChangefeedState {
        state: FeedStateName,
        error: Option<String>,
    },
    CheckpointCaughtUp,
    /// Downstream equals upstream for every existing table (sync-diff would pass).
    DownstreamSynced,
    /// A syncpoint record downstream with this primary ts (a number or `"$name"`), or
    /// any syncpoint record if `ts` is omitted.
    SyncpointRecorded {
        ts: Option<String>,
    },
    /// The downstream holds exactly `count` rows of the table (`select count(*)`).
    DownstreamRowCount {
        table: String,
        count: usize,
    },
    /// The capture's process has exited (`! ps -p $pid`).
    NodeExited {
        node: String,
    },
    /// The database exists downstream (`show databases` contains it).
    DatabaseExistsDownstream {
        database: String,
    },
    /// The database does not exist downstream (`show databases` does not contain it).
    DatabaseNotExistsDownstream {
        database: String,
    },
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Check {
    ReplicationCount {
        table: String,
        op: CmpOp,
        count: usize,
    },
    TableExists {
        table: String,
    },
    TableNotExists {
        table: String,
    },
    /// Downstream equals upstream; with `snapshot` (a syncpoint's primary ts, a number
    /// or `"$name"`), sync-diff against the syncpoint: the upstream snapshot at the
    /// primary ts equals the downstream as the syncpoint record found it.
    SyncDiff {
        #[serde(default)]
        snapshot: Option<String>,
    },
    NoErrorLogged,
    /// The persisted changefeed state (`check_changefeed_state`), and if given a
    /// substring of its error.
    ChangefeedState {
        state: FeedStateName,
        error: Option<String>,
    },
    /// The capture is running at the end (`get_cdc_pid`).
    NodeAlive {
        node: String,
    },
    /// No trace event of this name was recorded during the run.
    TraceNotSeen {
        event: String,
    },
    /// Every trace record with this event name (on `node`, of `table`, with the
    /// `fields` given) has `field` `op` `value` (numbers compared as numbers; a `"$name"`
    /// value is a captured value), and at least one such record exists.
    TraceField {
        event: String,
        table: Option<String>,
        node: Option<String>,
        #[serde(default)]
        fields: BTreeMap<String, String>,
        field: String,
        op: FieldOp,
        value: String,
    },
    /// A syncpoint record downstream with this primary ts (or any, if omitted).
    SyncpointRecorded {
        ts: Option<String>,
    },
    /// TiCDC's `redo apply` on the downstream, then sync-diff (the consistent integration
    /// tests): the redo log's rows above the redo meta's checkpoint, up to its resolved
    /// ts, applied over the downstream give the upstream at the resolved ts. Needs
    /// `changefeed.consistent-level = "eventual"`.
    RedoApply,
}

/// Changefeed states as scenario files name them.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FeedStateName {
    Normal,
    Warning,
    Failed,
    Stopped,
}

/// Comparison of a trace field with a value.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FieldOp {
    Eq,
    Ne,
    Ge,
    Gt,
    Le,
    Lt,
}

#[derive(Clone, Debug, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct InvariantConfig {
    #[serde(default)]
    pub no_retryable_error_after_failover: bool,
}

/// Seeded perturbations around the skeleton.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FaultConfig {
    /// Per-message latency range [min, max] in ms.
    #[serde(default = "d_net_delay")]
    pub net_delay_ms: [u64; 2],
    /// Latency range [min, max] in ms of each external-storage operation (the put of a
    /// temporary object and its rename). Default [2, 20]. Wider ranges widen the window
    /// in which closing a writer races its in-flight flush.
    #[serde(default = "d_storage_latency")]
    pub storage_latency_ms: [u64; 2],
    /// Probability that a message between two different nodes is lost.
    #[serde(default)]
    pub loss: f64,
    /// Probability that a message is delivered twice.
    #[serde(default)]
    pub duplicate: f64,
    /// Probability that a message is held back by an extra `delay-spike-ms` (the link
    /// stays FIFO, so later messages on it wait too).
    #[serde(default)]
    pub delay_spike: f64,
    #[serde(default = "d_spike")]
    pub delay_spike_ms: [u64; 2],
    /// Delay spikes also hit messages between roles of one capture (a backlogged local
    /// queue), e.g. a maintainer's request to its own node's dispatcher manager.
    #[serde(default)]
    pub delay_spike_local: bool,
    /// Opt-in transient storage errors: probability that a put or rename fails. The
    /// sink reports a retryable error and the changefeed restarts (so a scenario using
    /// this must not switch on `no-retryable-error-after-failover`).
    #[serde(default)]
    pub storage_error: f64,
    /// At most this many storage errors in a run (default: no limit). Each is a
    /// changefeed restart whose backoff doubles (10 s, 20 s, 40 s, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_error_max: Option<u64>,
    /// Latency range [min, max] in ms of a dispatcher manager's first table-trigger
    /// schema-store initialisation in the post-bootstrap handler (it holds the manager's
    /// fence lock meanwhile). Default [0, 0]: the handler runs in one step.
    #[serde(default)]
    pub schema_store_init_ms: [u64; 2],
    /// Latency range [min, max] in ms of creating the table trigger when a maintainer's
    /// bootstrap reuses its capture's dispatcher manager (the handler holds the manager's
    /// fence lock meanwhile, and a capture-local fence can close the write path).
    /// Default [0, 0]: created within the handler's step. The latency stands for a
    /// MySQL-class sink's recovery-info query; for the cloud-storage sink it is CPU work
    /// only (see `DispatcherManager::trigger_create_ms`).
    #[serde(default)]
    pub trigger_create_ms: [u64; 2],
    /// Delay range [min, max] in ms between a table dispatcher's creation (or a merged
    /// dispatcher's commit) and its first events from the event service, drawn per
    /// dispatcher. Default [0, 0]: the next event poll feeds it. Stands for a new
    /// event-store subscription's first resolved ts.
    #[serde(default)]
    pub first_event_ms: [u64; 2],
    /// Probability that a dispatcher manager's heartbeat or block-status request waits an
    /// extra `collector-lag-ms` in its capture's `HeartBeatCollector` queue (a backlog: the
    /// queue is shared by every dispatcher of every changefeed on the capture). The
    /// heartbeat and block-status queues are drained by separate goroutines, so a lagged
    /// block status can reach the maintainer after a later heartbeat. Each queue stays FIFO.
    #[serde(default)]
    pub collector_lag: f64,
    #[serde(default = "d_collector_lag")]
    pub collector_lag_ms: [u64; 2],
    /// Probability that a message to a capture's dispatcher side (heartbeat response,
    /// schedule request, merge request, or a bootstrap/post-bootstrap/close request for the
    /// orchestrator) waits an extra `stream-lag-ms` in the receive queue of its kind. TiCDC
    /// drains each kind through its own dynamic stream or queue, so a lagged message can
    /// be handled after a later message of another kind. Each queue stays FIFO; the
    /// orchestrator's keeps one waiting request per changefeed and kind
    /// (`pendingMessageQueue`, see `lanes::absorb_pending`).
    #[serde(default)]
    pub stream_lag: f64,
    #[serde(default = "d_collector_lag")]
    pub stream_lag_ms: [u64; 2],
    /// Probability, per message between two captures, that the pair's message-center
    /// streams reconnect just before it is sent (TiCDC resets a broken connection at its
    /// message center's 1 s check). Of each direction's messages in flight, the oldest may
    /// have been read by the old stream and arrives on time, the next ones
    /// are lost, the newest (still in the send queue) follow in order on the new stream;
    /// nothing is duplicated. See `world::network::reconnect`.
    #[serde(default)]
    pub stream_reconnect: f64,
    /// Time range [min, max] in ms until a reconnected stream carries messages again.
    #[serde(default = "d_reconnect")]
    pub stream_reconnect_ms: [u64; 2],
    /// Draw extra fault families from the seed (swarm).
    #[serde(default)]
    pub swarm: bool,
    /// A swarm plan made explicit (what `shrink` writes), instead of `swarm = true`: each
    /// family of [`SWARM_FAMILIES`] on or off as a seed drew it. `random_workload` skips
    /// the ops of the families that are off, as in the swarm run; the drawn intensities are
    /// the ordinary knobs above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swarm_families: Option<BTreeMap<String, bool>>,
}

/// The swarm's fault families, in the order of the draw (`runner::swarm::plan`).
pub const SWARM_FAMILIES: &[&str] = &[
    "net.loss",
    "net.duplicate",
    "net.delay_spike",
    "storage.slow",
    "kill_restart",
    "move_maintainer",
    "move_table",
    "split_merge",
    "partition",
    "sync_point",
    "collector.lag",
    "stream.lag",
    "session_loss",
    "first_event.slow",
    "stream.reconnect",
    "storage.error",
    "scheduler.small_batch",
    "ddl_table_set",
    "split.check",
    "ddl.burst",
    "ddl.partition",
    "failpoint",
    "move_in_flight",
    "coordinator.loss",
    "slow_bootstrap",
    "changefeed.pause",
    "failover.held_removal",
    "ddl.in_flight_scheduling",
    "ddl.report_after_write",
    "changefeed.fail",
    "redo",
    "split.settle",
    "ddl.drop_in_flight",
];
impl Default for FaultConfig {
    fn default() -> Self {
        FaultConfig {
            net_delay_ms: d_net_delay(),
            storage_latency_ms: d_storage_latency(),
            loss: 0.0,
            duplicate: 0.0,
            delay_spike: 0.0,
            delay_spike_ms: d_spike(),
            delay_spike_local: false,
            storage_error: 0.0,
            storage_error_max: None,
            schema_store_init_ms: [0, 0],
            trigger_create_ms: [0, 0],
            first_event_ms: [0, 0],
            collector_lag: 0.0,
            collector_lag_ms: d_collector_lag(),
            stream_lag: 0.0,
            stream_lag_ms: d_collector_lag(),
            stream_reconnect: 0.0,
            stream_reconnect_ms: d_reconnect(),
            swarm: false,
            swarm_families: None,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Limits {
    /// Simulated-time limit of the whole run.
    pub max_sim_time_ms: u64,
    /// Budget of protocol steps (handled messages and ticks).
    pub max_events: u64,
    /// After the skeleton: time allowed to converge.
    pub converge_timeout_ms: u64,
}
impl Default for Limits {
    fn default() -> Self {
        Limits { max_sim_time_ms: 600_000, max_events: 2_000_000, converge_timeout_ms: 60_000 }
    }
}

impl Scenario {
    /// `--no-mask`: run TiCDC's code as is (no masked finding).
    pub fn unmask(&mut self) {
        self.mask_findings = Some(Vec::new());
    }

    /// The candidate fixes this scenario's runs apply (names checked when loading).
    pub fn masked_fixes(&self) -> Vec<core_sched::bugs::Fix> {
        match &self.mask_findings {
            Some(v) => v.iter().filter_map(|s| core_sched::bugs::Fix::from_name(s)).collect(),
            None => DEFAULT_MASKED_FINDINGS.to_vec(),
        }
    }
}
