//! Changefeed and scheduler configuration. Defaults follow TiCDC's
//! `pkg/config/replica_config.go` and `scheduler_config.go`.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct SchedulerConfig {
    pub enable_table_across_nodes: bool,
    pub region_threshold: u64,
    pub region_count_per_span: u64,
    pub enable_splittable_check: bool,
    pub add_table_batch_size: usize,
    pub balance_move_batch_size: usize,
    pub scheduling_task_count_per_node: usize,
    pub check_balance_interval_ms: u64,
    /// `region-count-refresh-interval`: period of the region count refresher (TiCDC
    /// default 5 minutes).
    pub region_count_refresh_interval_ms: u64,
    /// `write-key-threshold` (bytes per second; TiCDC's default 0 disables every
    /// traffic-based decision). A value in `1..MIN_WRITE_KEY_THRESHOLD` is raised to it
    /// with table-across-nodes on ([`SchedulerConfig::adjust_write_key_threshold`]).
    pub write_key_threshold: u64,
    /// `balance-score-threshold`: consecutive imbalanced checks before the split-group
    /// checker moves traffic (TiCDC default 20).
    pub balance_score_threshold: u32,
}

/// `MinWriteKeyThreshold` (10 MiB/s): `ValidateAndAdjust` raises a smaller non-zero
/// `write-key-threshold` to it.
pub const MIN_WRITE_KEY_THRESHOLD: u64 = 10 * 1024 * 1024;
/// `min-traffic-percentage` default (0.8). Not configurable in the model.
pub const MIN_TRAFFIC_PERCENTAGE: f64 = 0.8;
/// `max-traffic-percentage` default (1.25). Not configurable in the model.
pub const MAX_TRAFFIC_PERCENTAGE: f64 = 1.25;

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            enable_table_across_nodes: false,
            region_threshold: 10000,
            region_count_per_span: 100,
            enable_splittable_check: false,
            add_table_batch_size: 10000,
            balance_move_batch_size: 1024,
            scheduling_task_count_per_node: 20,
            check_balance_interval_ms: 15_000,
            region_count_refresh_interval_ms: 300_000,
            write_key_threshold: 0,
            balance_score_threshold: 20,
        }
    }
}

impl SchedulerConfig {
    /// `ValidateAndAdjust`: with table-across-nodes, a `write-key-threshold` above 0 and
    /// below [`MIN_WRITE_KEY_THRESHOLD`] is raised to it; returns whether it was.
    pub fn adjust_write_key_threshold(&mut self) -> bool {
        if self.enable_table_across_nodes
            && self.write_key_threshold > 0
            && self.write_key_threshold < MIN_WRITE_KEY_THRESHOLD
        {
            self.write_key_threshold = MIN_WRITE_KEY_THRESHOLD;
            return true;
        }
        false
    }

    /// `region-count-per-span` is capped to `region-threshold`, as TiCDC does.
    pub fn effective_region_count_per_span(&self) -> u64 {
        if self.region_threshold > 0 {
            self.region_count_per_span.min(self.region_threshold).max(1)
        } else {
            self.region_count_per_span.max(1)
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct SinkConfig {
    /// Cloud-storage sink `flush-interval` (TiCDC default 5 s).
    pub flush_interval_ms: u64,
}
impl Default for SinkConfig {
    fn default() -> Self {
        SinkConfig { flush_interval_ms: 5000 }
    }
}

/// `sync-point-interval` default (`pkg/config/replica_config.go`: 10 minutes).
pub const DEFAULT_SYNC_POINT_INTERVAL_MS: u64 = 10 * 60 * 1000;
/// `sync-point-retention` default (24 hours).
pub const DEFAULT_SYNC_POINT_RETENTION_MS: u64 = 24 * 60 * 60 * 1000;
/// TiCDC rejects a `sync-point-interval` below 30 s (`minSyncPointInterval`). The
/// simulator accepts shorter intervals (see `scenarios/README.md`) so that short runs
/// see many syncpoints; the protocol does not depend on the interval's length.
pub const TICDC_MIN_SYNC_POINT_INTERVAL_MS: u64 = 30_000;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct ChangefeedConfig {
    pub scheduler: SchedulerConfig,
    pub sink: SinkConfig,
    /// `enable-sync-point`: every dispatcher receives a syncpoint event at each multiple
    /// of `sync-point-interval` (aligned on the physical time of the TSO), a block event
    /// influencing all tables; the table trigger writes a syncpoint record downstream.
    pub enable_sync_point: bool,
    /// `sync-point-interval` in ms (TiCDC default 10 min).
    pub sync_point_interval_ms: u64,
    /// `sync-point-retention` in ms (TiCDC default 24 h). Kept for fidelity of the
    /// configuration only: TiCDC's MySQL writer deletes records older than the retention,
    /// and no simulated run lasts as long as the smallest allowed retention (1 h), so the
    /// cleanup is not modelled.
    pub sync_point_retention_ms: u64,
}

impl Default for ChangefeedConfig {
    fn default() -> Self {
        ChangefeedConfig {
            scheduler: SchedulerConfig::default(),
            sink: SinkConfig::default(),
            enable_sync_point: false,
            sync_point_interval_ms: DEFAULT_SYNC_POINT_INTERVAL_MS,
            sync_point_retention_ms: DEFAULT_SYNC_POINT_RETENTION_MS,
        }
    }
}

impl ChangefeedConfig {
    /// The syncpoint interval when syncpoints are on.
    pub fn sync_point_interval(&self) -> Option<u64> {
        (self.enable_sync_point && self.sync_point_interval_ms > 0).then_some(self.sync_point_interval_ms)
    }
}
