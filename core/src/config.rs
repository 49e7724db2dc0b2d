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
}

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
        }
    }
}

impl SchedulerConfig {
    /// `region-count-per-span` is capped to `region-threshold`, as TiCDC does.
    pub fn effective_region_count_per_span(&self) -> u64 {
        if self.region_threshold > 0 { self.region_count_per_span.min(self.region_threshold).max(1) } else { self.region_count_per_span.max(1) }
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

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default, rename_all = "kebab-case")]
pub struct ChangefeedConfig {
    pub scheduler: SchedulerConfig,
    pub sink: SinkConfig,
    pub enable_sync_point: bool,
}
