//! The simulated network: per-link latency drawn from the seed, FIFO links, loss, spikes,
//! duplicates, partitions and the capture-local lag queues, and delivery to the destination
//! node.

use super::*;
use crate::checkers;
use crate::lanes::{collector_lane, recv_lane, Admission, LagQueues, Lane, RecvLane};
use core_sched::effects::*;
use core_sched::messages::{Envelope, Message, Topic};
use rand::Rng;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

/// A message on a directed link: (delivery time, (sender, receiver) generation at send, message).
pub type InFlight = (u64, (u64, u64), Envelope);

/// Upper bound of messages queued on one link.
pub const LINK_QUEUE_CAP: usize = 100_000;

#[derive(Debug, Default)]
pub struct Net {
    pub delay_ms: [u64; 2],
    pub loss: f64,
    pub duplicate: f64,
    pub delay_spike: f64,
    pub delay_spike_ms: [u64; 2],
    /// Spikes also hit messages between roles of one capture.
    pub delay_spike_local: bool,
    pub lost: u64,
    pub duplicated: u64,
    pub spiked: u64,
    /// In flight per directed link: (delivery time, (sender, receiver) generation at send, message).
    pub links: BTreeMap<(u32, u32), VecDeque<InFlight>>,
    pub last_delivery: BTreeMap<(u32, u32), u64>,
    /// Directed (from, to) pairs that drop messages.
    pub cut: BTreeSet<(u32, u32)>,
    pub delivered: u64,
    pub dropped: u64,
    /// The capture's `HeartBeatCollector` queues (`collector-lag`), per (capture,
    /// incarnation, lane).
    pub collector: LagQueues<(u32, u64, Lane)>,
    /// The dispatcher side's receive queues (`stream-lag`), per (capture, incarnation, kind).
    pub stream: LagQueues<(u32, u64, RecvLane)>,
}

/// Send a message. A dispatcher manager's heartbeat or block status first passes its
/// capture's collector queue ([`Lane`]); with `collector_lag` off (the default) that
/// stage takes no time and draws nothing, so it is the plain link below.
pub fn send(w: &W, wd: &mut World, env: Envelope) {
    let Some(lane) = collector_lane(&env.msg) else { return send_link(w, wd, env) };
    let gen = wd.nodes[env.from.0 as usize].generation;
    let key = (env.from.0, gen, lane);
    let release = match wd.net.collector.admit(&mut wd.sim_rng, key, wd.now_ms, gen, env) {
        Admission::Queued { release } => release,
        Admission::PassNow(env) => return send_link(w, wd, env),
    };
    let w2 = w.clone();
    let wait = release - wd.now_ms;
    spawn_net(wd, async move {
        madsim::time::sleep(Duration::from_millis(wait)).await;
        let mut g = w2.lock().unwrap();
        let Some((gen, env)) = g.net.collector.pop(key) else { return };
        // The queue dies with its process.
        let sender = &g.nodes[env.from.0 as usize];
        if !sender.alive || sender.generation != gen {
            g.net.dropped += 1;
            return;
        }
        g.now_ms = now_ms();
        send_link(&w2, &mut g, env);
    });
}

/// Run a task of the simulated network (outside every capture, so a kill does not stop
/// it).
pub(crate) fn spawn_net(wd: &World, fut: impl std::future::Future<Output = ()> + Send + 'static) {
    match &wd.net_handle {
        Some(h) => {
            h.spawn(fut);
        }
        None => {
            madsim::task::spawn(fut);
        }
    }
}

/// Put a message on the wire: latency from the seed, FIFO per link.
pub(crate) fn send_link(w: &W, wd: &mut World, env: Envelope) {
    let (a, b) = (env.from.0, env.to.0);
    if wd.net.cut.contains(&(a, b)) {
        wd.net.dropped += 1;
        return;
    }
    let [lo, hi] = wd.net.delay_ms;
    // Local delivery goes through channels too: at least 1 ms, so a request/response
    // ping-pong between roles on one node cannot spin at a single instant.
    let mut delay = if a == b { 1 } else { wd.sim_rng.random_range(lo..=hi) };
    if a == b && wd.net.delay_spike_local && wd.net.delay_spike > 0.0 && wd.sim_rng.random_bool(wd.net.delay_spike) {
        // A backlogged local queue (message center / dynamic stream) holds a message back.
        let [slo, shi] = wd.net.delay_spike_ms;
        delay += wd.sim_rng.random_range(slo..=shi.max(slo));
        wd.net.spiked += 1;
    }
    if a != b {
        // Seeded network faults (probabilities 0 draw nothing, keeping fault-free runs'
        // random streams unchanged).
        if wd.net.loss > 0.0 && wd.sim_rng.random_bool(wd.net.loss) {
            wd.net.lost += 1;
            wd.net.dropped += 1;
            return;
        }
        if wd.net.delay_spike > 0.0 && wd.sim_rng.random_bool(wd.net.delay_spike) {
            let [slo, shi] = wd.net.delay_spike_ms;
            delay += wd.sim_rng.random_range(slo..=shi.max(slo));
            wd.net.spiked += 1;
        }
        if wd.net.duplicate > 0.0 && wd.sim_rng.random_bool(wd.net.duplicate) {
            wd.net.duplicated += 1;
            enqueue(w, wd, env.clone(), delay);
        }
    }
    enqueue(w, wd, env, delay);
}

pub(crate) fn enqueue(w: &W, wd: &mut World, env: Envelope, delay: u64) {
    let (a, b) = (env.from.0, env.to.0);
    let at = (wd.now_ms + delay).max(*wd.net.last_delivery.get(&(a, b)).unwrap_or(&0));
    wd.net.last_delivery.insert((a, b), at);
    if wd.net.links.get(&(a, b)).map(|q| q.len()).unwrap_or(0) >= LINK_QUEUE_CAP {
        wd.net.dropped += 1;
        return;
    }
    // A restarted capture is a new capture in TiCDC (new ID): nothing addressed to the
    // old incarnation reaches it.
    let gen = (wd.nodes[a as usize].generation, wd.nodes[b as usize].generation);
    let q = wd.net.links.entry((a, b)).or_default();
    q.push_back((at, gen, env));
    let w2 = w.clone();
    let wait = at - wd.now_ms;
    spawn_net(wd, async move {
        madsim::time::sleep(Duration::from_millis(wait)).await;
        deliver(&w2, (a, b));
    });
}

/// Deliver the head of a link to its destination node.
pub(crate) fn deliver(w: &W, link: (u32, u32)) {
    let env = 'queued: {
        let mut g = w.lock().unwrap();
        let Some((_, (from_gen, to_gen), env)) = g.net.links.get_mut(&link).and_then(|q| q.pop_front()) else { return };
        let dest = &g.nodes[env.to.0 as usize];
        // A dead capture's late messages to the maintainer or coordinator (who key their
        // state by capture) would carry an ID no live capture has; dispatcher managers
        // fence by maintainer epoch instead, so late messages still reach them.
        let sender = &g.nodes[env.from.0 as usize];
        let sender_gone = !sender.alive || sender.generation != from_gen;
        let keyed_by_capture = matches!(env.msg.topic(), Topic::MaintainerManager | Topic::Coordinator);
        // Between a departed capture and the others nothing passes (their message centers
        // removed its target and refuse its streams: `handleConnect` finds no target).
        let departed = link.0 != link.1 && (!sender.member || !dest.member);
        if !dest.alive
            || dest.generation != to_gen
            || (sender_gone && keyed_by_capture)
            || departed
            || g.net.cut.contains(&link)
        {
            g.net.dropped += 1;
            return;
        }
        g.net.delivered += 1;
        let t = now_ms();
        g.now_ms = t;
        g.hash.u64(t);
        g.hash.u64(((link.0 as u64) << 32) | link.1 as u64);
        g.hash.str(env.msg.name());
        // The receiving capture's queue for this kind of message (off by default: no draw).
        let Some(lane) = recv_lane(&env.msg) else { break 'queued env };
        let key = (env.to.0, to_gen, lane);
        let g = &mut *g;
        if lane == RecvLane::Orchestrator {
            if let Some(replaced) = crate::lanes::absorb_pending(g.net.stream.waiting_mut(key), &env) {
                g.hash.u64(replaced as u64 + 1);
                if !replaced {
                    g.net.dropped += 1;
                }
                return;
            }
        }
        match g.net.stream.admit(&mut g.sim_rng, key, t, to_gen, env) {
            Admission::PassNow(env) => env,
            Admission::Queued { release } => {
                let w2 = w.clone();
                spawn_net(g, async move {
                    madsim::time::sleep(Duration::from_millis(release - t)).await;
                    let Some((gen, env)) = w2.lock().unwrap().net.stream.pop(key) else { return };
                    handle_delivered(&w2, env, Some(gen));
                });
                return;
            }
        }
    };
    handle_delivered(w, env, None);
}

/// Handle a delivered message on its node (`gen`: only on this incarnation).
pub(crate) fn handle_delivered(w: &W, env: Envelope, gen: Option<u64>) {
    let (from, to) = (env.from, env.to);
    step(w, to, gen, StepKind::Message, |ns, ctx, up, meta| {
        // barrier-owner-only: look at what the maintainer holds about each dispatcher
        // reported by a node it is not bound to, before and after the request.
        let probe = match &env.msg {
            Message::BlockStatusRequest { cf, statuses } => ns
                .mm
                .maintainers
                .get(cf)
                .map(|m| (cf.clone(), checkers::nonowner_block_statuses(m, from, statuses.iter().map(|s| s.id)))),
            _ => None,
        };
        handle_message(ns, ctx, up, meta, from, env.msg);
        let Some((cf, probe)) = probe else { return };
        let Some(m) = ns.mm.maintainers.get(&cf) else { return };
        for (id, owner, before) in probe {
            if before.admitted_in(&checkers::barrier_view(m, id)) {
                ctx.observe(Observation::NonOwnerBlockStatusAdmitted {
                    maintainer_epoch: m.epoch,
                    dispatcher: id,
                    from,
                    owner,
                });
                let owner = owner.map(|n| n.to_string()).unwrap_or_else(|| "none".into());
                ctx.out.trace.push(TraceEvent {
                    role: Role::Maintainer,
                    epoch: m.epoch,
                    kind: "block status from non-owner admitted",
                    fields: vec![("dispatcher", id.to_string()), ("from", from.to_string()), ("owner", owner)],
                });
            }
        }
    });
}
