//! Syncpoints (`enable-sync-point`): consistent snapshots of the downstream.
//!
//! With syncpoints on, the event service sends every dispatcher of the changefeed a
//! syncpoint event at each multiple of `sync-point-interval`, aligned on the physical
//! part of the TSO (logical part 0), in commit-ts order: after every DML/DDL with a
//! commit ts at or below it, before anything above it (`eventBroker.emitSyncPointEventIfNeeded`:
//! a syncpoint at `s` goes out when an event or resolved ts above `s` is sent, so a DDL
//! at `s` comes first). A syncpoint is a block event that influences *all* tables
//! (`SyncPointEvent.GetBlockedTables` = `InfluenceType_All`): every dispatcher flushes
//! its rows before it and reports WAITING, the barrier picks the table trigger event
//! dispatcher as the writer, the trigger writes the syncpoint record, and the others
//! pass. So when the record is written, the downstream holds exactly the upstream
//! snapshot at the syncpoint's ts.
//!
//! **Checkpoint.** A syncpoint adds no table, so it never caps the changefeed
//! checkpoint by itself (§8.5 only holds back events that add tables); the dispatchers
//! do. One waiting on a syncpoint at `s` has flushed everything at or below `s`, so its
//! checkpoint may reach `s` (TiCDC: its resolved ts, which can equal `s`); the trigger
//! writing it reports `s - 1` (the event sits in its table progress). No dispatcher
//! passes `s` before the record is durable, so the changefeed checkpoint passes `s` only
//! after the record is written, and a changefeed restarted from a checkpoint `<= s`
//! receives the syncpoint at `s` again ([`calculate_start_sync_point_ts`]). A dispatcher
//! recreated while a syncpoint is pending (move, merge) starts at `s` itself, never at
//! `s - 1`, so it does not replay rows at or below the syncpoint while the trigger writes
//! it; its checkpoint `s` does not prove the syncpoint written, which is why the barrier
//! only treats a span as past an event when its checkpoint is strictly above it
//! (`forwardBarrierEvent`).
//!
//! **The record.** TiCDC's MySQL sink writes a row `(changefeed, primary_ts,
//! secondary_ts)` into `tidb_cdc.syncpoint_v1` (`insert ignore`, primary key
//! `(changefeed, primary_ts)`), `secondary_ts` being the downstream TSO read in the same
//! transaction (`SendSyncPointEvent`). The simulated sink is the cloud-storage writer,
//! so the record is modelled as a storage object, [`SyncPointRecord`] at
//! [`record_path`], written like every object (temporary put, then rename). TiCDC itself
//! refuses `enable-sync-point` for non-MySQL sinks; the simulator lifts that restriction
//! because the barrier protocol is the same whatever the sink.

use crate::types::*;
use serde::{Deserialize, Serialize};

/// The syncpoint record (`tidb_cdc.syncpoint_v1` row) as a storage object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncPointRecord {
    pub changefeed: String,
    /// The syncpoint's commit ts (upstream snapshot ts).
    pub primary_ts: Ts,
    /// The downstream ts when the record was written (TiCDC: `@@tidb_current_ts`; here
    /// the simulated clock of the writing sink).
    pub secondary_ts: Ts,
}

/// Object path of a syncpoint record (one per changefeed and primary ts, like the
/// table's primary key: a rewrite lands on the same object).
pub fn record_path(changefeed: &str, primary_ts: Ts) -> String {
    format!("tidb_cdc/syncpoint_v1/{}/{}.json", changefeed, primary_ts)
}

/// `syncpoint.CalculateStartSyncPointTs`: the first syncpoint a dispatcher starting at
/// `start_ts` receives. A start ts that is itself a syncpoint ts (physical part a
/// multiple of the interval, logical part 0) receives that syncpoint unless
/// `skip_at_start_ts` (only MySQL sinks ever set it).
pub fn calculate_start_sync_point_ts(start_ts: Ts, interval_ms: u64, skip_at_start_ts: bool) -> Ts {
    if interval_ms == 0 {
        return 0;
    }
    let ms = ts_to_ms(start_ts);
    let logical = start_ts & ((1 << TSO_LOGICAL_BITS) - 1);
    let mut k = ms / interval_ms;
    if !ms.is_multiple_of(interval_ms) || logical != 0 || skip_at_start_ts {
        k += 1;
    }
    ts_from_ms(k * interval_ms)
}

/// Whether `ts` is a syncpoint ts of this interval.
pub fn is_sync_point_ts(ts: Ts, interval_ms: u64) -> bool {
    interval_ms > 0 && ts & ((1 << TSO_LOGICAL_BITS) - 1) == 0 && ts_to_ms(ts).is_multiple_of(interval_ms)
}

/// Syncpoint ts in `[from, to)`. The event service of the simulator feeds a dispatcher
/// windows `(from, to]` of events followed by a resolved ts `to`; a syncpoint at `s`
/// goes out once something above `s` does, so the window carries the syncpoints in
/// `[from, to)`: a syncpoint equal to the window's resolved ts waits for the next
/// window, and one equal to the dispatcher's start ts is in its first window.
pub fn sync_points_in(from: Ts, to: Ts, interval_ms: u64) -> Vec<Ts> {
    let mut out = Vec::new();
    if interval_ms == 0 || to <= from {
        return out;
    }
    let mut s = calculate_start_sync_point_ts(from, interval_ms, false);
    while s < to {
        out.push(s);
        s = ts_from_ms(ts_to_ms(s) + interval_ms);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_sync_point_is_the_next_multiple_or_the_start_itself_when_aligned() {
        let iv = 30_000;
        assert_eq!(
            calculate_start_sync_point_ts(ts_from_ms(30_000), iv, false),
            ts_from_ms(30_000),
            "aligned start receives its own syncpoint"
        );
        assert_eq!(calculate_start_sync_point_ts(ts_from_ms(30_000), iv, true), ts_from_ms(60_000), "skip at start ts");
        assert_eq!(
            calculate_start_sync_point_ts(ts_from_ms(30_000) + 1, iv, false),
            ts_from_ms(60_000),
            "a logical part moves to the next one"
        );
        assert_eq!(calculate_start_sync_point_ts(ts_from_ms(30_000) - 1, iv, false), ts_from_ms(30_000));
        assert_eq!(calculate_start_sync_point_ts(ts_from_ms(1), iv, false), ts_from_ms(30_000));
        assert_eq!(calculate_start_sync_point_ts(ts_from_ms(1), 0, false), 0, "disabled");
    }

    #[test]
    fn windows_partition_the_sync_points() {
        let iv = 1_000;
        let a = ts_from_ms(1_000);
        assert_eq!(sync_points_in(a, ts_from_ms(3_000), iv), vec![ts_from_ms(1_000), ts_from_ms(2_000)]);
        assert_eq!(
            sync_points_in(ts_from_ms(3_000), ts_from_ms(3_000) + 1, iv),
            vec![ts_from_ms(3_000)],
            "the syncpoint at a window's end goes out in the next window"
        );
        assert!(sync_points_in(a + 1, ts_from_ms(2_000), iv).is_empty());
        assert!(
            is_sync_point_ts(ts_from_ms(2_000), iv)
                && !is_sync_point_ts(ts_from_ms(2_000) + 1, iv)
                && !is_sync_point_ts(ts_from_ms(2_500), iv)
        );
    }
}
