//! Changefeed pause and resume through the coordinator, as `cdc cli changefeed pause` /
//! `resume` call it (`api/v2/changefeed.go:680-800`, `coordinator/controller.go:978-1060`):
//! the scenario steps and the swarm's `pause_resume` op.

use super::{Driver, StepError};
use crate::world::*;
use std::time::Duration;

/// A workload resume asks again every this many ms while there is no coordinator.
const RESUME_RETRY_MS: u64 = 500;
/// ... at most this many times (a coordinator is elected within a few seconds).
const RESUME_TRIES: u32 = 120;

/// Ask the owner's coordinator to pause (or resume) the changefeed: `Ok(false)` when the
/// coordinator refuses it (not running, or not paused).
pub(super) fn pause_or_resume(w: &W, pause: bool) -> Result<bool, StepError> {
    let (owner, cf) = {
        let g = w.lock().unwrap();
        (g.owner().ok_or(StepError::NoOwner)?, g.cf.clone())
    };
    // None: the owner capture is down or not (yet) running its coordinator.
    let mut ok = None;
    crate::world::step(w, owner, None, StepKind::Api, |ns, ctx, _, meta| {
        if let Some(c) = ns.coord.as_mut() {
            ok = Some(if pause { c.pause_changefeed(ctx, &cf, meta) } else { c.resume_changefeed(ctx, &cf, meta) });
        }
    });
    let ok = ok.ok_or(StepError::NoOwner)?;
    if ok && !pause {
        // Syncpoints are due from the first one at or after the checkpoint the new
        // maintainer generation starts from.
        let mut g = w.lock().unwrap();
        let info = g.meta.changefeeds[&cf].clone();
        if let Some(iv) = info.config.sync_point_interval() {
            let first = core_sched::syncpoint::calculate_start_sync_point_ts(info.checkpoint_ts, iv, false);
            g.sync_points = Some(match g.sync_points {
                Some((f, i)) if i == iv => (f.min(first), iv),
                _ => (first, iv),
            });
        }
    }
    Ok(ok)
}

impl Driver {
    /// The `pause_resume` op: pause the changefeed now and resume it `pause_ms` later
    /// (asking again while no coordinator is elected). Nothing happens when the pause is
    /// refused (already paused by an earlier op, or no coordinator).
    pub(super) fn pause_resume(&mut self, pause_ms: u64) {
        if !matches!(pause_or_resume(&self.w, true), Ok(true)) {
            return;
        }
        let w = self.w.clone();
        let net = self.w.lock().unwrap().net_handle.clone().unwrap();
        net.spawn(async move {
            madsim::time::sleep(Duration::from_millis(pause_ms)).await;
            for _ in 0..RESUME_TRIES {
                {
                    let mut g = w.lock().unwrap();
                    g.now_ms = crate::world::now_ms();
                }
                match pause_or_resume(&w, false) {
                    Err(StepError::NoOwner) => {}
                    // Resumed, or no longer paused (an op cannot pause it twice).
                    _ => return,
                }
                madsim::time::sleep(Duration::from_millis(RESUME_RETRY_MS)).await;
            }
        });
    }
}

#[cfg(test)]
pub(super) mod tests {
    use crate::result::Outcome;

    /// A workload of one op (and rows), on a quiet 3-capture cluster.
    pub(crate) fn workload_of(op: &str) -> crate::scenario::Scenario {
        let src = format!(
            r#"name = "t"
description = "one workload op"
[cluster]
nodes = 3
[[tables]]
name = "t1"
rows = 10
[[tables]]
name = "t2"
rows = 10
[[steps]]
action = "wait"
until = {{ kind = "table_scheduled", table = "t2" }}
timeout_ms = 60000
[[steps]]
action = "random_workload"
duration_ms = 8000
interval_ms = 1000
ops = ["{op}", "dml"]
[[checks]]
kind = "sync_diff"
"#
        );
        crate::scenario::load::parse(std::path::Path::new("t.toml"), src).unwrap().scenario
    }

    #[test]
    fn every_workload_pause_is_resumed_and_the_run_converges() {
        let scn = workload_of("pause_resume");
        let r = crate::runner::run_on_fresh_thread(&scn, 3, &Default::default(), &Default::default());
        let count = |ev: &str| r.trace.iter().filter(|t| t.event == ev && t.role == "Coordinator").count();
        assert!(count("pause changefeed") > 0, "no pause in the run");
        assert_eq!(count("pause changefeed"), count("resume changefeed"));
        assert_eq!(r.outcome, Outcome::Pass, "{:?}", r.violations);
    }
}
