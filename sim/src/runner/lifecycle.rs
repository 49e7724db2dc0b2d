//! Changefeed pause and resume through the coordinator, as `cdc cli changefeed pause` /
//! `resume` call it (`api/v2/changefeed.go:680-800`, `coordinator/controller.go:978-1060`):
//! the scenario steps and the swarm's `pause_resume` and `fail_resume` ops.

use super::{Driver, StepError};
use crate::world::*;
use core_sched::types::NodeId;
use std::time::Duration;

/// A workload resume asks again every this many ms while there is no coordinator.
const RESUME_RETRY_MS: u64 = 500;
/// ... at most this many times (a coordinator is elected within a few seconds).
const RESUME_TRIES: u32 = 120;
/// How long a pause/resume step asks again while no coordinator can answer.
const NO_OWNER_RETRY_MS: u64 = 60_000;
/// `fail_resume` waits this long at most for the changefeed to fail.
const FAIL_WAIT_MS: u64 = 20_000;
/// ... and then asks this many times (every [`RESUME_RETRY_MS`]) to resume it: a
/// failure reported late (its heartbeat lost, a bootstrap that started late) still
/// comes after the failpoint went off.
const FAIL_RESUME_TRIES: u32 = 300;
/// ... polling this often.
const FAIL_POLL_MS: u64 = 250;

/// Ask the owner's coordinator to pause (or resume) the changefeed: `Ok(false)` when the
/// coordinator refuses it (not running, or not paused).
pub(super) fn pause_or_resume(w: &W, pause: bool) -> Result<bool, StepError> {
    let (owner, cf) = {
        let g = w.lock().unwrap();
        (g.owner().ok_or(StepError::NoOwner)?, g.cf.clone())
    };
    // None: the owner capture is down or not (yet) running its coordinator, or that
    // coordinator is still discovering (it refuses the API then): ask again later.
    let mut ok = None;
    crate::world::step(w, owner, None, StepKind::Api, |ns, ctx, _, meta| {
        if let Some(c) = ns.coord.as_mut().filter(|c| c.discovery_done()) {
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
    /// The pause/resume steps: ask again while no coordinator can answer (none elected
    /// yet, or the new one still discovering), for up to 60 s.
    pub(super) async fn pause_or_resume_with_retry(&mut self, pause: bool) -> Result<bool, StepError> {
        let deadline = self.now() + NO_OWNER_RETRY_MS;
        loop {
            match pause_or_resume(&self.w, pause) {
                Err(StepError::NoOwner) if self.now() < deadline => {
                    self.budget()?;
                    madsim::time::sleep(Duration::from_millis(RESUME_RETRY_MS)).await;
                }
                r => return r,
            }
        }
    }

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
            resume_until_done(&w, false).await;
        });
    }
}

/// Whether the changefeed is failed.
fn failed(w: &W) -> bool {
    let g = w.lock().unwrap();
    g.meta.changefeeds.get(&g.cf).is_some_and(|i| i.state == core_sched::messages::FeedState::Failed)
}

/// Resume the changefeed, asking again while there is no coordinator, at most
/// [`RESUME_TRIES`] times; with `until_resumed`, also while it is not (yet) failed or
/// its stop has not finished, at most [`FAIL_RESUME_TRIES`] times.
async fn resume_until_done(w: &W, until_resumed: bool) {
    let tries = if until_resumed { FAIL_RESUME_TRIES } else { RESUME_TRIES };
    for _ in 0..tries {
        {
            let mut g = w.lock().unwrap();
            g.now_ms = crate::world::now_ms();
        }
        match pause_or_resume(w, false) {
            Err(StepError::NoOwner) => {}
            Ok(false) if until_resumed => {}
            // Resumed, or no longer paused (an op cannot pause it twice).
            _ => return,
        }
        madsim::time::sleep(Duration::from_millis(RESUME_RETRY_MS)).await;
    }
}

impl Driver {
    /// The `fail_resume` op: every capture's schema store fails its table loads
    /// (`getAllPhysicalTablesGCFastFail`), and with `hold_stop_ms` the coordinator holds
    /// the stop of a failed changefeed (`BlockBeforeStopChangefeed`, on the owner); a
    /// pause and, `pause_ms` later, a resume make a new maintainer bootstrap, which fails
    /// with `ErrSnapshotLostByGC`, a fast-fail error: the changefeed fails. Once it has
    /// (or after [`FAIL_WAIT_MS`]) the schema stores recover and the failed changefeed is
    /// resumed, as `cdc cli changefeed resume` does. Nothing happens when the pause is
    /// refused.
    pub(super) fn fail_resume(&mut self, pause_ms: u64, hold_stop_ms: Option<u64>) {
        const GC: &str = core_sched::effects::FP_GET_ALL_PHYSICAL_TABLES_GC_FAST_FAIL;
        if !matches!(pause_or_resume(&self.w, true), Ok(true)) {
            return;
        }
        let nodes: Vec<NodeId> = (0..self.scn.cluster.nodes).map(NodeId).collect();
        {
            let mut g = self.w.lock().unwrap();
            g.resumes_pending += 1;
            for n in &nodes {
                super::workload_held::set_failpoint(&mut g, *n, GC, true);
            }
        }
        let owner = self.w.lock().unwrap().owner();
        if let (Some(ms), Some(owner)) = (hold_stop_ms, owner) {
            self.failpoint_for(owner, core_sched::effects::FP_BLOCK_BEFORE_STOP_CHANGEFEED, ms);
        }
        let w = self.w.clone();
        let net = self.w.lock().unwrap().net_handle.clone().unwrap();
        net.spawn(async move {
            madsim::time::sleep(Duration::from_millis(pause_ms)).await;
            resume_until_done(&w, false).await;
            let mut waited = 0;
            while waited < FAIL_WAIT_MS && !failed(&w) {
                madsim::time::sleep(Duration::from_millis(FAIL_POLL_MS)).await;
                waited += FAIL_POLL_MS;
            }
            {
                let mut g = w.lock().unwrap();
                g.now_ms = crate::world::now_ms();
                for n in &nodes {
                    super::workload_held::set_failpoint(&mut g, *n, GC, false);
                }
            }
            resume_until_done(&w, true).await;
            w.lock().unwrap().resumes_pending -= 1;
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

    #[test]
    fn a_workload_failure_is_resumed_and_the_run_converges() {
        let scn = workload_of("fail_resume");
        use core_sched::coverage::Point as P;
        let (mut failed, mut resumed_failed) = (0, 0);
        for seed in 0..4 {
            let r = crate::runner::run_on_fresh_thread(&scn, seed, &Default::default(), &Default::default());
            resumed_failed += r.coverage.get(P::CoordResumeFailed);
            let at = |ev: &str| r.trace.iter().position(|t| t.event == ev && t.role == "Coordinator");
            if let Some(f) = at("changefeed failed") {
                failed += 1;
                let resumed = r.trace[f..].iter().any(|t| t.event == "resume changefeed");
                assert!(resumed, "seed {}: the failed changefeed was not resumed", seed);
            }
            assert_eq!(r.outcome, Outcome::Pass, "seed {}: {:?}", seed, r.violations);
        }
        assert!(failed > 0 && resumed_failed > 0, "failed {} resumed {}", failed, resumed_failed);
    }
}
