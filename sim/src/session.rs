//! Capture etcd-session loss (`revoke_capture_lease` of the integration tests) and the
//! capture-local fence that follows it.
//!
//! TiCDC's server watches its etcd session (`watchEtcdSession`): when the session is
//! done it local-fences (`local fence triggered`, then the dispatcher orchestrator's
//! `LocalFence`: new maintainer messages dropped, every dispatcher manager's write path
//! stopped at once, the writers' contexts cancelled), returns `ErrCaptureSuicide`, which
//! cancels every module (the maintainer manager and the coordinator stop), and the
//! server closes (`server closed`) before the process exits. Meanwhile the rest of the
//! cluster drops the capture from the alive set after the usual failure detection.

use crate::world::*;
use core_sched::types::*;
use rand::Rng;
use std::time::Duration;

/// Range [min, max] in ms of the delay until the capture notices that its session is done
/// (the keep-alive loop sees the revoked lease; TiCDC's watchdog also polls the lease
/// TTL), drawn from the seed.
pub const SESSION_DONE_NOTICE_MS: [u64; 2] = [1, 2_000];
/// Poll period of the capture's close progress.
const CLOSE_POLL_MS: u64 = 50;

/// The capture's session ends now (its process keeps running).
pub fn session_loss(w: &W, n: NodeId, notice_ms: [u64; 2]) {
    let (gen, notice) = {
        let mut g = w.lock().unwrap();
        let slot = &mut g.nodes[n.0 as usize];
        if !slot.alive || slot.session_done {
            return;
        }
        slot.session_done = true;
        let gen = slot.generation;
        let was_maintainer = g.maintainer().map(|(m, _)| m == n).unwrap_or(false);
        if was_maintainer && g.failover_at_ms.is_none() {
            g.failover_at_ms = Some(g.now_ms);
        }
        let [lo, hi] = notice_ms;
        let notice = g.sim_rng.random_range(lo..=hi.max(lo));
        g.record(
            &n.to_string(),
            "Node",
            0,
            "capture session lost",
            vec![("maintainer".into(), was_maintainer.to_string()), ("notice_ms".into(), notice.to_string())],
        );
        (gen, notice)
    };
    crate::world::detect_departure_later(w, n);
    let net = w.lock().unwrap().net_handle.clone().unwrap();
    let w3 = w.clone();
    net.spawn(async move {
        madsim::time::sleep(Duration::from_millis(notice)).await;
        watchdog_fires(&w3, n, gen).await;
    });
}

/// `watchEtcdSession` sees the session done: local fence, module shutdown, server close,
/// process exit once the close has finished.
async fn watchdog_fires(w: &W, n: NodeId, gen: u64) {
    {
        let mut g = w.lock().unwrap();
        let slot = &g.nodes[n.0 as usize];
        if !slot.alive || slot.generation != gen {
            return;
        }
        g.now_ms = now_ms();
        g.record(
            &n.to_string(),
            "Node",
            0,
            "local fence triggered",
            vec![("reason".into(), "etcd session done".into())],
        );
    }
    let ran = step(w, n, Some(gen), StepKind::Membership, |ns, ctx, _, _| {
        ns.orch.local_fence(ctx);
        // ErrCaptureSuicide cancels the server's context: the maintainer manager and the
        // coordinator stop with it.
        ns.mm.maintainers.clear();
        ns.mm_stopped = true;
        ns.coord = None;
        ns.orch.close(ctx);
    });
    if !ran {
        return;
    }
    // The local fence cancelled the writers' contexts: hung writes return.
    let hung: Vec<(NodeId, u64, u64)> = {
        let mut g = w.lock().unwrap();
        let (mine, rest) =
            std::mem::take(&mut g.hung_storage).into_iter().partition(|(m, gn, _)| *m == n && *gn == gen);
        g.hung_storage = rest;
        mine
    };
    for (_, _, op) in hung {
        storage_done(w, n, gen, op, Err(core_sched::effects::StorageError::Transient("context canceled".into())));
    }
    loop {
        let closed = {
            let g = w.lock().unwrap();
            let slot = &g.nodes[n.0 as usize];
            if !slot.alive || slot.generation != gen {
                return;
            }
            slot.state.as_ref().map(|s| s.orch.closed).unwrap_or(true)
        };
        if closed {
            exit(w, n);
            return;
        }
        madsim::time::sleep(Duration::from_millis(CLOSE_POLL_MS)).await;
    }
}

/// `server closed`: the process exits.
fn exit(w: &W, n: NodeId) {
    let h = {
        let mut g = w.lock().unwrap();
        g.now_ms = now_ms();
        g.record(&n.to_string(), "Node", 0, "server closed", vec![]);
        let now = g.now_ms;
        let slot = &mut g.nodes[n.0 as usize];
        slot.alive = false;
        slot.died_at_ms = Some(now);
        slot.state = None;
        g.node_handles[n.0 as usize].clone()
    };
    if let Some(h) = h {
        madsim::runtime::Handle::current().kill(h.id());
    }
}
