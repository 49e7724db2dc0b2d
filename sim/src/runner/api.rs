//! Scheduling API calls: a maintainer API handler called once (the random workload) or
//! with the integration tests' retry (scenario steps), and the coordinator's
//! `move_maintainer`, which a scenario step asks again while the changefeed is busy.

use super::{Driver, StepError};
use crate::world::*;
use core_sched::types::*;
use std::time::Duration;

/// How long API steps (move/split/merge table) retry before the run fails.
const API_RETRY_TIMEOUT_MS: u64 = 60_000;

/// How long a scenario's `move_maintainer` step keeps asking while another operator of
/// the changefeed is in flight.
const MOVE_RETRY_MS: u64 = 60_000;

/// The coordinator's answer to a move request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MoveAnswer {
    Accepted,
    /// Another operator is in flight (or the changefeed is not placed): ask again later.
    Busy,
    /// The maintainer already runs there, or there is no coordinator.
    Refused,
}

impl Driver {
    /// Call a maintainer API handler on the current maintainer's node (one protocol
    /// step). None when there is no live maintainer. The handler's error is the core's
    /// answer as text, traced as the record's `error` field.
    pub(super) fn api(
        &mut self,
        f: &mut dyn FnMut(
            &mut core_sched::maintainer::Maintainer,
            &mut core_sched::effects::Ctx,
            &crate::upstream::Upstream,
        ) -> Result<String, String>,
        what: &'static str,
    ) -> Option<Result<String, String>> {
        let m = self.w.lock().unwrap().maintainer().map(|(n, _)| n);
        let n = m?;
        let cf = self.w.lock().unwrap().cf.clone();
        let mut res = None;
        step(&self.w, n, None, StepKind::Api, |ns, ctx, up, _| {
            if let Some(m) = ns.mm.maintainers.get_mut(&cf) {
                let r = f(m, ctx, up);
                let fields = match &r {
                    Ok(s) => vec![("result", s.clone())],
                    Err(e) => vec![("error", e.clone())],
                };
                ctx.trace(core_sched::effects::Role::Maintainer, m.epoch, what, fields);
                res = Some(r);
            }
        });
        res
    }

    /// `mergeTable` once, as the random workload asks it (no retry).
    pub(super) fn merge_table_once(&mut self, t: TableId) {
        self.api(&mut |m, ctx, _| m.api_merge_table(ctx, t), "merge table");
    }

    /// `splitTableByRegionCount` once, as the random workload asks it (no retry).
    pub(super) fn split_table_once(&mut self, t: TableId) {
        self.api(&mut |m, ctx, up| m.api_split_table(ctx, t, up).map(|n| format!("split into {}", n)), "split table");
    }

    /// The integration tests' `*_with_retry` helpers: call the API every 500 ms until it
    /// succeeds, for at most `API_RETRY_TIMEOUT_MS`.
    pub(super) async fn api_retry(
        &mut self,
        f: &mut dyn FnMut(
            &mut core_sched::maintainer::Maintainer,
            &mut core_sched::effects::Ctx,
            &crate::upstream::Upstream,
        ) -> Result<String, String>,
        what: &'static str,
    ) -> Result<(), StepError> {
        let deadline = self.now() + API_RETRY_TIMEOUT_MS;
        let mut last = String::from("no live maintainer");
        loop {
            match self.api(f, what) {
                Some(Ok(_)) => return Ok(()),
                Some(Err(e)) => last = e,
                None => {}
            }
            if self.now() >= deadline {
                return Err(StepError::ApiTimeout { what, timeout_ms: API_RETRY_TIMEOUT_MS, last });
            }
            self.budget()?;
            madsim::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Ask the owner's coordinator to move the maintainer to `dest`.
    pub(super) fn move_maintainer(&mut self, dest: NodeId) -> Result<MoveAnswer, StepError> {
        let (owner, cf) = {
            let g = self.w.lock().unwrap();
            (g.owner().ok_or(StepError::NoOwner)?, g.cf.clone())
        };
        let mut answer = MoveAnswer::Refused;
        crate::world::step(&self.w, owner, None, StepKind::Api, |ns, ctx, _, meta| {
            if let Some(c) = ns.coord.as_mut() {
                answer = if c.move_maintainer(ctx, &cf, dest, meta).is_some() {
                    MoveAnswer::Accepted
                } else if c.operator_in_flight(&cf) {
                    MoveAnswer::Busy
                } else {
                    MoveAnswer::Refused
                };
            }
        });
        Ok(answer)
    }

    /// The `move_maintainer` step: like TiCDC's schedulers, ask again while another
    /// operator of the changefeed is in flight (e.g. the add of a generation that has not
    /// reported `BootstrapDone` yet), for up to 60 s.
    pub(super) async fn move_maintainer_with_retry(&mut self, dest: NodeId) -> Result<(), StepError> {
        let deadline = self.now() + MOVE_RETRY_MS;
        loop {
            match self.move_maintainer(dest)? {
                MoveAnswer::Accepted => break,
                MoveAnswer::Busy if self.now() < deadline => madsim::time::sleep(Duration::from_millis(100)).await,
                _ => {
                    self.trace_move_refused(dest)?;
                    break;
                }
            }
        }
        Ok(())
    }

    /// Trace on the owner that the move never got in (scenarios can wait for the event).
    fn trace_move_refused(&mut self, dest: NodeId) -> Result<(), StepError> {
        let owner = self.w.lock().unwrap().owner().ok_or(StepError::NoOwner)?;
        crate::world::step(&self.w, owner, None, StepKind::Api, |_, ctx, _, _| {
            ctx.trace(
                core_sched::effects::Role::Coordinator,
                0,
                "move maintainer refused",
                vec![("to", dest.to_string())],
            );
        });
        Ok(())
    }
}
