//! Capture processes: spawning them as madsim nodes, killing them and restarting them
//! (a new incarnation that leaves and rejoins the cluster).

use super::Driver;
use crate::node::{start_node_tasks, NodeTimers};
use crate::scenario::*;
use crate::world::*;
use core_sched::types::*;
use std::time::Duration;

/// Spawn one madsim node per capture; a `join-later` capture's process waits for its
/// `start` step.
pub(super) fn spawn_captures(w: &W, scn: &Scenario, timers: NodeTimers) -> Vec<madsim::runtime::NodeHandle> {
    let nodes = scn.cluster.nodes;
    let handle = madsim::runtime::Handle::current();
    for j in &scn.cluster.join_later {
        if let Some(i) = j.strip_prefix('n').and_then(|x| x.parse::<usize>().ok()) {
            w.lock().unwrap().nodes[i].held = true;
        }
    }
    let mut handles = Vec::new();
    for i in 0..nodes {
        let w2 = w.clone();
        let h = handle
            .create_node()
            .name(format!("capture-{}", NodeId(i)))
            .init(move || {
                let w = w2.clone();
                async move {
                    let n = NodeId(i);
                    if w.lock().unwrap().nodes[i as usize].held {
                        // A `join-later` capture: its process starts with the `start` step.
                        std::future::pending::<()>().await;
                    }
                    let gen = {
                        let mut g = w.lock().unwrap();
                        let slot = &mut g.nodes[i as usize];
                        slot.generation += 1;
                        slot.alive = true;
                        slot.died_at_ms = None;
                        slot.session_done = false;
                        slot.member = true;
                        slot.role_loops.restart();
                        let gen = slot.generation;
                        let st = fresh_node_state(&mut g, n);
                        g.nodes[i as usize].state = Some(st);
                        g.record(
                            &n.to_string(),
                            "Node",
                            0,
                            "capture started",
                            vec![("generation".into(), gen.to_string())],
                        );
                        gen
                    };
                    start_node_tasks(&w, n, gen, timers);
                    std::future::pending::<()>().await;
                }
            })
            .build();
        w.lock().unwrap().node_handles[i as usize] = Some(h.clone());
        handles.push(h);
    }
    handles
}

impl Driver {
    /// Kill capture `n` now (its volatile state is gone); the cluster notices it after
    /// the failure detection delay.
    pub(super) fn kill(&mut self, n: NodeId) {
        {
            let mut g = self.w.lock().unwrap();
            let was_maintainer = g.maintainer().map(|(m, _)| m == n).unwrap_or(false);
            // The clock now (`g.now_ms` may be a step old; it also stamps the trace record).
            let now = crate::world::now_ms();
            let slot = &mut g.nodes[n.0 as usize];
            slot.alive = false;
            slot.died_at_ms = Some(now);
            slot.state = None;
            if was_maintainer && g.failover_at_ms.is_none() {
                g.failover_at_ms = Some(g.now_ms);
            }
            g.record(
                &n.to_string(),
                "Node",
                0,
                "capture killed",
                vec![("maintainer".into(), was_maintainer.to_string())],
            );
        }
        madsim::runtime::Handle::current().kill(self.handles[n.0 as usize].id());
        crate::world::detect_departure_later(&self.w, n);
    }

    /// Restart capture `node` `after_ms` after its current incarnation is down (waiting
    /// for it to exit, at most 30 s); nothing happens if another op restarted it first.
    pub(super) fn restart_once_down(&self, node: NodeId, after_ms: u64) {
        let w = self.w.clone();
        let id = self.handles[node.0 as usize].id();
        let (gen, net) = {
            let g = self.w.lock().unwrap();
            (g.nodes[node.0 as usize].generation, g.net_handle.clone().unwrap())
        };
        net.spawn(async move {
            let mut polls = 0;
            loop {
                {
                    let g = w.lock().unwrap();
                    let slot = &g.nodes[node.0 as usize];
                    if slot.generation != gen {
                        return; // restarted by another op meanwhile
                    }
                    if !slot.alive {
                        break;
                    }
                }
                if polls == 60 {
                    return;
                }
                polls += 1;
                madsim::time::sleep(Duration::from_millis(500)).await;
            }
            madsim::time::sleep(Duration::from_millis(after_ms)).await;
            if still_down(&w, node, gen) {
                restart_node(&w, node, id).await;
            }
        });
    }
}

/// Whether capture `n` is still the dead incarnation `gen` (no one restarted it since).
fn still_down(w: &W, n: NodeId, gen: u64) -> bool {
    let g = w.lock().unwrap();
    let slot = &g.nodes[n.0 as usize];
    !slot.alive && slot.generation == gen
}

/// Restart a killed capture (fresh volatile state) and tell the cluster.
pub(super) async fn restart_node(w: &W, n: NodeId, id: madsim::task::NodeId) {
    // The old incarnation leaves the cluster first (in TiCDC the restarted capture has a
    // new ID), even when the restart comes before its death was detected.
    let gen = w.lock().unwrap().nodes[n.0 as usize].generation;
    crate::world::leave_cluster(w, n, gen);
    madsim::runtime::Handle::current().restart(id);
    madsim::time::sleep(Duration::from_millis(1)).await;
    notify_membership(w);
}
