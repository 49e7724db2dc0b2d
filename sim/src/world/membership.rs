//! Cluster membership as etcd gives it: a capture leaves when its failure detection fires
//! or it restarts; the owner is elected among members; every member's roles are told.

use super::*;
use core_sched::coordinator::Coordinator;
use core_sched::dispatcher::DispatcherOrchestrator;
use core_sched::effects::*;
use core_sched::maintainer::manager::MaintainerManager;
use core_sched::types::*;
use std::time::Duration;

/// Delay before the cluster notices a killed capture or a lost session (the etcd session
/// TTL).
pub const NODE_FAILURE_DETECTION_MS: u64 = 3_000;

/// Tell every live node's roles about the membership.
/// The cluster notices the current incarnation of capture `n` gone once the failure
/// detection delay has passed (its etcd key expires with the lease), unless the capture
/// was restarted meanwhile (then its restart already took the old incarnation out).
pub fn detect_departure_later(w: &W, n: NodeId) {
    let (gen, w2) = (w.lock().unwrap().nodes[n.0 as usize].generation, w.clone());
    let g = w.lock().unwrap();
    spawn_net(&g, async move {
        madsim::time::sleep(Duration::from_millis(NODE_FAILURE_DETECTION_MS)).await;
        leave_cluster(&w2, n, gen);
    });
}

/// The cluster notices that incarnation `gen` of capture `n` is gone (its etcd key
/// expired or it restarted as a new capture) and tells the members. Nothing happens if
/// the capture has been restarted since.
pub fn leave_cluster(w: &W, n: NodeId, gen: u64) {
    {
        let mut g = w.lock().unwrap();
        let slot = &mut g.nodes[n.0 as usize];
        if slot.generation != gen || !slot.member {
            return;
        }
        slot.member = false;
    }
    notify_membership(w);
}

pub fn notify_membership(w: &W) {
    let (alive, owner) = {
        let mut g = w.lock().unwrap();
        // Called from timers of the network node: bring the world's clock up to now, so
        // the election is recorded when it happens.
        g.now_ms = now_ms();
        let o = g.owner();
        if o != g.owner_node {
            g.owner_node = o;
            if let Some(n) = o {
                g.record(&n.to_string(), "Node", 0, "campaign owner success", vec![]);
            }
        }
        (g.alive(), o)
    };
    for n in alive.iter().copied() {
        step(w, n, None, StepKind::Membership, |ns, ctx, up, meta| {
            ns.mm.coordinator = owner;
            let schema = crate::upstream::NodeSchemaStore {
                up: &*up,
                gc_fast_fail: ctx.fp(FP_GET_ALL_PHYSICAL_TABLES_GC_FAST_FAIL),
            };
            ns.mm.on_node_change(ctx, &alive, &schema);
            if Some(n) == owner {
                let c = ns.coord.get_or_insert_with(|| Coordinator::new(n, alive.clone()));
                c.on_node_change(ctx, &alive, meta);
            } else {
                ns.coord = None;
            }
        });
    }
}

/// Fresh volatile state for a (re)started node.
pub fn fresh_node_state(wd: &mut World, n: NodeId) -> NodeState {
    wd.orch_instances += 1;
    let mut mm = MaintainerManager::new(n);
    mm.alive = wd.alive();
    mm.coordinator = wd.owner();
    let mut orch = DispatcherOrchestrator::new(n, wd.orch_instances);
    orch.schema_store_init_ms = wd.schema_store_init_ms;
    orch.trigger_create_ms = wd.trigger_create_ms;
    orch.first_event_ms = wd.first_event_ms;
    NodeState { mm, orch, coord: None, mm_stopped: false }
}
