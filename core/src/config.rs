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

/// `consistent.level` values (`pkg/redo/config.go`: `ConsistentLevelNone`,
/// `ConsistentLevelEventual`).
pub const CONSISTENT_LEVEL_NONE: &str = "none";
pub const CONSISTENT_LEVEL_EVENTUAL: &str = "eventual";
/// `DefaultFlushIntervalInMs`: the redo log flush interval.
pub const DEFAULT_REDO_FLUSH_INTERVAL_MS: u64 = 2000;
/// `DefaultMetaFlushIntervalInMs`: the redo meta flush interval.
pub const DEFAULT_REDO_META_FLUSH_INTERVAL_MS: u64 = 200;
/// `MinFlushIntervalInMs`: the smallest accepted value of both flush intervals.
pub const MIN_REDO_FLUSH_INTERVAL_MS: u64 = 50;
/// `DefaultGCIntervalInMs`: the redo meta's log GC period.
pub const REDO_GC_INTERVAL_MS: u64 = 5000;

/// `consistent.level`, typed. TiCDC keeps the string and takes any value but `eventual`
/// as off; the scenario loader refuses unknown strings, so the core needs only these two.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConsistentLevel {
    #[default]
    None,
    Eventual,
}
impl ConsistentLevel {
    /// The level a valid `consistent.level` string names ([`is_valid_consistent_level`]).
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            CONSISTENT_LEVEL_NONE => Some(ConsistentLevel::None),
            CONSISTENT_LEVEL_EVENTUAL => Some(ConsistentLevel::Eventual),
            _ => None,
        }
    }
}

/// `consistent` (`pkg/config/consistent.go`): the redo log. Only the keys the scheduling
/// protocol depends on; storage, encoding, workers and compression are not modelled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct ConsistentConfig {
    /// `none` or `eventual` (redo on).
    pub level: ConsistentLevel,
    /// `flush-interval`: how often buffered redo rows are written.
    pub flush_interval_ms: u64,
    /// `meta-flush-interval`: how often the redo meta is written.
    pub meta_flush_interval_ms: u64,
}
impl Default for ConsistentConfig {
    fn default() -> Self {
        ConsistentConfig {
            level: ConsistentLevel::None,
            flush_interval_ms: DEFAULT_REDO_FLUSH_INTERVAL_MS,
            meta_flush_interval_ms: DEFAULT_REDO_META_FLUSH_INTERVAL_MS,
        }
    }
}

/// `IsValidConsistentLevel`: exactly `none` or `eventual` (case-sensitive).
pub fn is_valid_consistent_level(level: &str) -> bool {
    level == CONSISTENT_LEVEL_NONE || level == CONSISTENT_LEVEL_EVENTUAL
}
/// `IsConsistentEnabled`: a valid level other than `none`.
pub fn is_consistent_enabled(level: &str) -> bool {
    is_valid_consistent_level(level) && level != CONSISTENT_LEVEL_NONE
}

impl ConsistentConfig {
    pub fn redo_enabled(&self) -> bool {
        self.level == ConsistentLevel::Eventual
    }

    /// `ValidateAndAdjust` for the modelled keys: nothing is checked with redo off; with
    /// it on, a 0 interval takes its default and one below
    /// [`MIN_REDO_FLUSH_INTERVAL_MS`] is refused with TiCDC's message.
    pub fn validate_and_adjust(&mut self) -> Result<(), String> {
        if !self.redo_enabled() {
            return Ok(());
        }
        for (key, v, default) in [
            ("flush-interval", &mut self.flush_interval_ms, DEFAULT_REDO_FLUSH_INTERVAL_MS),
            ("meta-flush-interval", &mut self.meta_flush_interval_ms, DEFAULT_REDO_META_FLUSH_INTERVAL_MS),
        ] {
            if *v == 0 {
                *v = default;
            }
            if *v < MIN_REDO_FLUSH_INTERVAL_MS {
                return Err(format!(
                    "The consistent.{}:{} must be equal or greater than {}",
                    key, v, MIN_REDO_FLUSH_INTERVAL_MS
                ));
            }
        }
        Ok(())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct ChangefeedConfig {
    pub scheduler: SchedulerConfig,
    pub sink: SinkConfig,
    /// `consistent`: redo log settings (default `level = "none"`: no redo).
    pub consistent: ConsistentConfig,
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
            consistent: ConsistentConfig::default(),
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

    /// Redo (consistent) mode is on.
    pub fn redo_enabled(&self) -> bool {
        self.consistent.redo_enabled()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eventual(flush: u64, meta: u64) -> ConsistentConfig {
        ConsistentConfig { level: ConsistentLevel::Eventual, flush_interval_ms: flush, meta_flush_interval_ms: meta }
    }

    /// `sink_test.go` TestConsistentConfig, the level half (storage is not modelled).
    #[test]
    fn consistent_levels_and_enablement() {
        for (level, valid) in [("none", true), ("eventual", true), ("NONE", false), ("", false)] {
            assert_eq!(is_valid_consistent_level(level), valid, "{level:?}");
        }
        for (level, on) in [("invalid-level", false), ("none", false), ("eventual", true)] {
            assert_eq!(is_consistent_enabled(level), on, "{level:?}");
        }
        for level in ["none", "eventual", "NONE", "", "invalid-level"] {
            assert_eq!(ConsistentLevel::from_name(level).is_some(), is_valid_consistent_level(level), "{level:?}");
            let on = ConsistentLevel::from_name(level)
                .is_some_and(|l| ConsistentConfig { level: l, ..Default::default() }.redo_enabled());
            assert_eq!(on, is_consistent_enabled(level), "{level:?}");
        }
        assert!(!ChangefeedConfig::default().redo_enabled());
        let d = ConsistentConfig::default();
        assert_eq!((d.level, d.flush_interval_ms, d.meta_flush_interval_ms), (ConsistentLevel::None, 2000, 200));
    }

    /// `consistent.go` `validateAndAdjust`: zero takes the default, the minimum is 50 ms
    /// for both intervals, and nothing is checked with redo off.
    #[test]
    fn consistent_validate_and_adjust() {
        let mut c = eventual(0, 0);
        c.validate_and_adjust().unwrap();
        assert_eq!((c.flush_interval_ms, c.meta_flush_interval_ms), (2000, 200));
        let mut c = eventual(50, 50);
        c.validate_and_adjust().unwrap();
        assert_eq!((c.flush_interval_ms, c.meta_flush_interval_ms), (50, 50));
        assert_eq!(
            eventual(49, 200).validate_and_adjust().unwrap_err(),
            "The consistent.flush-interval:49 must be equal or greater than 50"
        );
        assert_eq!(
            eventual(2000, 10).validate_and_adjust().unwrap_err(),
            "The consistent.meta-flush-interval:10 must be equal or greater than 50"
        );
        let mut off =
            ConsistentConfig { level: ConsistentLevel::None, flush_interval_ms: 1, meta_flush_interval_ms: 0 };
        off.validate_and_adjust().unwrap();
        assert_eq!((off.flush_interval_ms, off.meta_flush_interval_ms), (1, 0));
    }

    /// A config serialized before `consistent` existed still parses, with redo off.
    #[test]
    fn consistent_defaults_when_absent() {
        let c: ChangefeedConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(c.consistent, ConsistentConfig::default());
        let c: ConsistentConfig = serde_json::from_str(r#"{"level": "eventual"}"#).unwrap();
        assert!(c.redo_enabled());
    }
}
