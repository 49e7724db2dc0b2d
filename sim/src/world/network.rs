//! The simulated network: per-link latency drawn from the seed, FIFO per (sender, receiver,
//! message-center stream), loss, spikes, duplicates, stream reconnects, partitions and the
//! capture-local lag queues, and delivery to the destination node.

use super::*;
use crate::checkers;
use crate::lanes::{collector_lane, recv_lane, Admission, LagQueues, Lane, RecvLane};
use core_sched::effects::*;
use core_sched::messages::{Envelope, Message, Stream, Topic};
use rand::Rng;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

/// A message on a directed link: (delivery time, (sender, receiver) generation at send, message,
/// id of its delivery task).
pub type InFlight = (u64, (u64, u64), Envelope, u64);

/// One message-center stream: (sender, receiver, stream). Order holds per stream only.
pub type LinkKey = (u32, u32, Stream);

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
    /// Probability, per message between two captures, that the pair's message-center streams
    /// reconnect just before it is sent (see [`reconnect`]).
    pub reconnect: f64,
    /// Time range [min, max] in ms until a reconnected stream carries messages again.
    pub reconnect_ms: [u64; 2],
    /// A message the old stream had read straggles behind the new stream's: the model of
    /// the older engine's time, which TiCDC cannot produce (see [`reconnect`]).
    pub reconnect_stragglers: bool,
    pub reconnects: u64,
    /// Messages of an old stream its receive goroutine had read before the reset: handed
    /// over on time, ahead of the new stream.
    pub read_before_reset: u64,
    /// Under `reconnect_stragglers`, such messages handled behind the new stream's instead.
    pub straggled: u64,
    /// In flight per stream, in send order.
    pub links: BTreeMap<LinkKey, VecDeque<InFlight>>,
    pub last_delivery: BTreeMap<LinkKey, u64>,
    /// Delivery tasks whose message a reconnect took off its stream (they do nothing).
    pub cancelled: BTreeSet<u64>,
    /// When a reconnected stream carries messages again, per stream (not under the older
    /// engine's straggler model).
    pub link_up: BTreeMap<LinkKey, u64>,
    /// Messages that wait in the sender's send queue for a reconnected stream, by delivery
    /// id: the time they leave it. The sender's death before that drops them.
    pub waiting: BTreeMap<u64, u64>,
    /// Delivery ids of messages an old stream's receive goroutine had read before its
    /// reset: handed over, so a later reset cannot lose them.
    pub handed_over: BTreeSet<u64>,
    pub next_id: u64,
    /// Messages that reached their destination, in order (tests only).
    #[cfg(test)]
    pub arrivals: Vec<((u32, u32), Message)>,
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
    if let Some(t) = wd.timeline.as_mut() {
        t.sent(wd.now_ms, &env);
    }
    wd.causes.sent(wd.now_ms, env.from, env.to, &env.msg);
    let Some(lane) = collector_lane(&env.msg) else { return send_link(w, wd, env) };
    let gen = wd.nodes[env.from.0 as usize].generation;
    let key = (env.from.0, gen, lane);
    let release = match wd.net.collector.admit(&mut wd.sim_rng, key, wd.now_ms, gen, env) {
        Admission::Queued { release } => release,
        Admission::PassNow(env) => return send_link(w, wd, *env),
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
        if wd.net.reconnect > 0.0 && wd.sim_rng.random_bool(wd.net.reconnect) {
            reconnect(w, wd, a, b);
        }
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

/// The stream a message travels on (FIFO per (sender, receiver, stream)).
pub fn link_key(env: &Envelope) -> LinkKey {
    (env.from.0, env.to.0, env.msg.stream())
}

pub(crate) fn enqueue(w: &W, wd: &mut World, env: Envelope, delay: u64) {
    let (a, b) = (env.from.0, env.to.0);
    // A restarted capture is a new capture in TiCDC (new ID): nothing addressed to the
    // old incarnation reaches it.
    let gen = (wd.nodes[a as usize].generation, wd.nodes[b as usize].generation);
    let at = wd.now_ms + delay;
    push(w, wd, env, gen, at);
}

/// Queue a message on its stream, delivered at `at` or after the stream's previous message.
fn push(w: &W, wd: &mut World, env: Envelope, gen: (u64, u64), at: u64) {
    let key = link_key(&env);
    let at = at.max(*wd.net.last_delivery.get(&key).unwrap_or(&0));
    wd.net.last_delivery.insert(key, at);
    if wd.net.links.get(&key).map(|q| q.len()).unwrap_or(0) >= LINK_QUEUE_CAP {
        wd.net.dropped += 1;
        return;
    }
    let id = queue_delivery(w, wd, key, env, gen, at);
    // The stream is down: the message waits in the sender's send queue until it is up.
    if let Some(&up) = wd.net.link_up.get(&key).filter(|&&up| wd.now_ms < up) {
        wd.net.waiting.insert(id, up);
    }
}

/// Put a message at the end of its stream's queue with a delivery task for `at`. The task
/// takes the queue's front, so the queue's order is the stream's order whatever the order
/// in which tasks due at one instant run.
fn queue_delivery(w: &W, wd: &mut World, key: LinkKey, env: Envelope, gen: (u64, u64), at: u64) -> u64 {
    let id = wd.net.next_id;
    wd.net.next_id += 1;
    let q = wd.net.links.entry(key).or_default();
    q.push_back((at, gen, env, id));
    let w2 = w.clone();
    let wait = at - wd.now_ms;
    spawn_net(wd, async move {
        madsim::time::sleep(Duration::from_millis(wait)).await;
        deliver(&w2, key, id);
    });
    id
}

/// A stream reconnect between captures `a` and `b` (both directions: one gRPC stream per
/// stream type carries both). In TiCDC a broken stream's error is picked up by the message
/// center's 1 s check, which resets the connection (`pkg/messaging/message_center.go:37`,
/// `:163-181`, `remote_target.go:387-422`: close every stream, open new ones). Of each
/// direction's messages in flight, in send order:
/// - the oldest may already have been read by the old stream's receive goroutine, which
///   hands it to the receive channel at once whatever the cancel (`remote_target.go:603-646`:
///   `ctx` is checked only before `Recv`, the push `ch <- targetMsg` follows the decode), and
///   long before the new stream exists (the 1 s check, a new dial): it arrives on time,
///   ahead of everything the new stream carries (one receive channel per capture, whose
///   blocked senders Go serves in order, `message_center.go:96-98, 110-111`). Under the
///   older engine (`capture-loops`, whose seed files were recorded so) it is instead
///   handled up to `max` of `reconnect-ms` after the new stream is up, behind its
///   messages: a straggler TiCDC's receive path cannot produce (docs/fidelity.md row 16b);
/// - the next ones were on the wire or in gRPC's buffers of the old stream: lost (a send
///   taken from the queue is never retried, `:528-545`);
/// - the newest were still in the target's send queue, which outlives the stream
///   (`:65-67`, `:188-189`): they go, in order, on the new stream.
///
/// Nothing is duplicated. The new stream carries messages after `reconnect-ms`.
pub(crate) fn reconnect(w: &W, wd: &mut World, a: u32, b: u32) {
    let [lo, hi] = wd.net.reconnect_ms;
    let up = wd.now_ms + wd.sim_rng.random_range(lo..=hi.max(lo));
    wd.net.reconnects += 1;
    for (x, y) in [(a, b), (b, a)] {
        for stream in [Stream::Event, Stream::Command] {
            let key = (x, y, stream);
            let old: Vec<InFlight> = wd.net.links.remove(&key).map(Vec::from).unwrap_or_default();
            wd.net.last_delivery.insert(key, up);
            if !wd.net.reconnect_stragglers {
                wd.net.link_up.insert(key, up);
            }
            // A reset touches only what the old stream carried: a message its receive
            // goroutine already handed over keeps its time, and messages still in the send
            // queue (waiting for an earlier reconnect's stream) stay queued, for this one.
            // Under the older engine's model every message in flight was on the wire.
            let (mut wire, mut handed, mut queued) = (Vec::new(), Vec::new(), Vec::new());
            for m in old {
                let id = m.3;
                if wd.net.reconnect_stragglers {
                    wire.push(m);
                } else if wd.net.handed_over.contains(&id) {
                    handed.push(m);
                } else if wd.net.waiting.get(&id).is_some_and(|&d| d > wd.now_ms) {
                    queued.push(m);
                } else {
                    wire.push(m);
                }
            }
            for (at, gen, env, id) in handed {
                wd.net.cancelled.insert(id);
                wd.net.handed_over.remove(&id);
                let id = queue_delivery(w, wd, key, env, gen, at);
                wd.net.handed_over.insert(id);
            }
            let n = wire.len();
            // Whether the oldest was already read (see above).
            let (read, lost) = if n == 0 {
                (0, 0)
            } else {
                let read = wd.sim_rng.random_bool(0.5) as usize;
                (read, wd.sim_rng.random_range(0..=n - read))
            };
            for (i, (at, gen, env, id)) in wire.into_iter().chain(queued).enumerate() {
                wd.net.cancelled.insert(id);
                if i < read && wd.net.reconnect_stragglers {
                    // The older model: handled up to `max` after the new stream is up.
                    let late = up + wd.sim_rng.random_range(0..=hi.max(1));
                    wd.net.straggled += 1;
                    let w2 = w.clone();
                    let wait = late - wd.now_ms;
                    spawn_net(wd, async move {
                        madsim::time::sleep(Duration::from_millis(wait)).await;
                        let g = w2.lock().unwrap();
                        arrive(&w2, g, (x, y), gen, env);
                    });
                } else if i < read {
                    wd.net.read_before_reset += 1;
                    let id = queue_delivery(w, wd, key, env, gen, at.min(up));
                    wd.net.handed_over.insert(id);
                } else if i < read + lost {
                    wd.net.lost += 1;
                    wd.net.dropped += 1;
                } else {
                    push(w, wd, env, gen, at);
                }
            }
        }
    }
}

/// Deliver the head of a stream to its destination node (`id`: the task's message; a task
/// whose message a reconnect took off the stream does nothing).
pub(crate) fn deliver(w: &W, key: LinkKey, id: u64) {
    let mut g = w.lock().unwrap();
    if g.net.cancelled.remove(&id) {
        g.net.waiting.remove(&id);
        g.net.handed_over.remove(&id);
        return;
    }
    let Some((_, gen, env, id)) = g.net.links.get_mut(&key).and_then(|q| q.pop_front()) else { return };
    g.net.handed_over.remove(&id);
    // Still in the send queue of a reconnected stream when the sender's process died: it
    // was never sent (the queue dies with the process: `messageCenter.Close` closes every
    // target, pkg/messaging/message_center.go:324-340).
    if let Some(departs) = g.net.waiting.remove(&id) {
        let s = &g.nodes[key.0 as usize];
        if !s.alive && s.generation == gen.0 && s.died_at_ms.is_some_and(|t| t < departs) {
            g.net.dropped += 1;
            return;
        }
    }
    arrive(w, g, (key.0, key.1), gen, env);
}

/// A message reaches its destination capture (it may still be dropped there).
fn arrive(
    w: &W,
    mut g: std::sync::MutexGuard<'_, World>,
    link: (u32, u32),
    (from_gen, to_gen): (u64, u64),
    env: Envelope,
) {
    let env = 'queued: {
        let dest = &g.nodes[env.to.0 as usize];
        // A dead capture's late messages to the maintainer or coordinator (who key their
        // state by capture) would carry an ID no live capture has; dispatcher managers
        // fence by maintainer epoch instead, so late messages still reach them.
        let sender = &g.nodes[env.from.0 as usize];
        let sender_gone = !sender.alive || sender.generation != from_gen;
        let keyed_by_capture = matches!(env.msg.topic(), Topic::MaintainerManager | Topic::Coordinator);
        // Between a departed capture and the others nothing passes (their message centers
        // removed its target and refuse its streams: `handleConnect` finds no target).
        // A sender of an older generation has departed even when its slot is a member
        // again: a restart leaves the cluster first, and the restarted capture has a new
        // ID in TiCDC, so the old incarnation's stream is gone.
        let departed = link.0 != link.1 && (!sender.member || !dest.member || sender.generation != from_gen);
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
        #[cfg(test)]
        g.net.arrivals.push((link, env.msg.clone()));
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
            Admission::PassNow(env) => *env,
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
    drop(g);
    handle_delivered(w, env, None);
}

/// Handle a delivered message on its node (`gen`: only on this incarnation).
pub(crate) fn handle_delivered(w: &W, env: Envelope, gen: Option<u64>) {
    let (from, to) = (env.from, env.to);
    let fp = {
        let g = w.lock().unwrap();
        g.timeline.is_some().then(|| crate::timeline::record::fingerprint(&env.msg))
    };
    let handled = step(w, to, gen, StepKind::Message, |ns, ctx, up, meta| {
        // barrier-owner-only: look at what the maintainer holds about each dispatcher
        // reported by a node it is not bound to, before and after the request.
        let probe = match &env.msg {
            Message::BlockStatusRequest { cf, statuses, .. } => ns
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
    if let (true, Some(fp)) = (handled, fp) {
        let mut g = w.lock().unwrap();
        let now = g.now_ms;
        if let Some(t) = g.timeline.as_mut() {
            t.handled(now, from, to, fp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core_sched::messages::*;
    use core_sched::types::*;
    use std::sync::{Arc, Mutex};

    /// Arrivals as (link, tag).
    type Arrivals = Vec<((u32, u32), u64)>;

    fn tagged(i: u64) -> Message {
        Message::CheckpointTsMessage { cf: ChangefeedId("cf".into()), checkpoint_ts: i }
    }

    fn tag(m: &Message) -> u64 {
        match m {
            Message::CheckpointTsMessage { checkpoint_ts, .. } => *checkpoint_ts,
            _ => unreachable!(),
        }
    }

    /// A 3-node world with every node alive and a member, and link delays `delay_ms`.
    fn live_world(seed: u64, delay_ms: [u64; 2]) -> World {
        let mut world = World::new(seed, core_sched::bugs::Bugs::none(), 3, delay_ms);
        for n in &mut world.nodes {
            n.alive = true;
            n.member = true;
        }
        world
    }

    /// Run a 3-capture world on `seed`: `setup` configures the network, then `sends`
    /// messages (from, to, tag) go out 1 ms apart; returns the arrivals and the world's
    /// reconnect count.
    fn run(
        seed: u64,
        setup: impl FnOnce(&mut Net) + Send + 'static,
        sends: Vec<(u32, u32, u64)>,
    ) -> (Arrivals, u64, u64) {
        let rt = madsim::runtime::Runtime::with_seed_and_config(seed, madsim::Config::default());
        rt.block_on(async move {
            let mut world = live_world(seed, [1, 30]);
            setup(&mut world.net);
            let w: W = Arc::new(Mutex::new(world));
            for (a, b, i) in sends {
                {
                    let mut g = w.lock().unwrap();
                    g.now_ms = now_ms();
                    let env = Envelope { from: NodeId(a), to: NodeId(b), msg: tagged(i) };
                    send_link(&w, &mut g, env);
                }
                madsim::time::sleep(Duration::from_millis(1)).await;
            }
            madsim::time::sleep(Duration::from_secs(30)).await;
            let g = w.lock().unwrap();
            (g.net.arrivals.iter().map(|(l, m)| (*l, tag(m))).collect(), g.net.reconnects, g.net.read_before_reset)
        })
    }

    fn on(arrivals: &[((u32, u32), u64)], link: (u32, u32)) -> Vec<u64> {
        arrivals.iter().filter(|(l, _)| *l == link).map(|(_, t)| *t).collect()
    }

    /// A message waiting in the sender's send queue for a reconnected stream dies with the
    /// sender's process if it dies before the stream is up (though it is still a member,
    /// and a dispatcher manager's message is not dropped for a dead sender alone); one
    /// sent after the stream is up still arrives.
    #[test]
    fn a_send_queue_waiting_for_a_reconnect_dies_with_the_sender() {
        // (when the sender's process dies, ms after the reconnect; what arrives). The link
        // takes 200 ms: at 150 ms the message is on the wire (it left at 100 ms).
        for (dies, expect) in [(None, vec![1]), (Some(60), vec![]), (Some(150), vec![1])] {
            let rt = madsim::runtime::Runtime::with_seed_and_config(1, madsim::Config::default());
            let got = rt.block_on(async move {
                let mut world = live_world(1, [200, 200]);
                world.net.reconnect_ms = [100, 100];
                let w: W = Arc::new(Mutex::new(world));
                {
                    let mut g = w.lock().unwrap();
                    g.now_ms = now_ms();
                    reconnect(&w, &mut g, 0, 1);
                    // Sent while the stream is down: it waits for it (up 100 ms later).
                    let msg = Message::MaintainerCloseRequest {
                        cf: ChangefeedId("cf".into()),
                        removed: true,
                        maintainer_epoch: 1,
                    };
                    send_link(&w, &mut g, Envelope { from: NodeId(0), to: NodeId(1), msg });
                }
                if let Some(after) = dies {
                    madsim::time::sleep(Duration::from_millis(after)).await;
                    let mut g = w.lock().unwrap();
                    g.now_ms = now_ms();
                    g.nodes[0].alive = false;
                    g.nodes[0].died_at_ms = Some(g.now_ms);
                }
                madsim::time::sleep(Duration::from_secs(5)).await;
                let g = w.lock().unwrap();
                g.net
                    .arrivals
                    .iter()
                    .filter_map(|(_, m)| match m {
                        Message::MaintainerCloseRequest { maintainer_epoch, .. } => Some(*maintainer_epoch),
                        _ => None,
                    })
                    .collect::<Vec<u64>>()
            });
            assert_eq!(got, expect, "sender dies {dies:?} ms after the reconnect");
        }
    }

    /// A message of a capture's older incarnation still in flight when the capture
    /// restarted is dropped on arrival, though the slot is a member again; the same
    /// message of the live incarnation arrives.
    #[test]
    fn an_older_incarnations_message_is_dropped_after_the_restart() {
        for restarted in [false, true] {
            let rt = madsim::runtime::Runtime::with_seed_and_config(1, madsim::Config::default());
            let arrivals = rt.block_on(async move {
                let world = live_world(1, [20, 30]);
                let w: W = Arc::new(Mutex::new(world));
                {
                    let mut g = w.lock().unwrap();
                    g.now_ms = now_ms();
                    // A dispatcher manager's message: not dropped for a dead sender alone
                    // (managers fence by maintainer epoch), only for a departed one.
                    let msg = Message::MaintainerCloseRequest {
                        cf: ChangefeedId("cf".into()),
                        removed: true,
                        maintainer_epoch: 1,
                    };
                    send_link(&w, &mut g, Envelope { from: NodeId(0), to: NodeId(1), msg });
                    if restarted {
                        // What `restart_node` and the capture's start leave: a new
                        // generation, a member again, before the message arrives.
                        g.nodes[0].generation += 1;
                    }
                }
                madsim::time::sleep(Duration::from_secs(1)).await;
                let g = w.lock().unwrap();
                g.net.arrivals.len()
            });
            assert_eq!(arrivals, if restarted { 0 } else { 1 }, "restarted: {}", restarted);
        }
    }

    /// Every scheduling message travels on TiCDC's command stream (all are sent with
    /// `SendCommand`; see `Message::stream`).
    #[test]
    fn every_scheduling_message_is_on_the_command_stream() {
        let cf = ChangefeedId("cf".into());
        let msgs = vec![
            Message::RemoveMaintainerRequest { cf: cf.clone(), cascade: false, removed: false, maintainer_epoch: 1 },
            tagged(1),
            Message::MaintainerHeartbeat { statuses: vec![] },
            Message::MaintainerCloseRequest { cf: cf.clone(), removed: false, maintainer_epoch: 1 },
            Message::HeartBeatResponse { mode: Mode::Default, cf: cf.clone(), statuses: vec![], maintainer_epoch: 1 },
            Message::MergeDispatcherRequest {
                cf: cf.clone(),
                req: MergeDispatcherRequest {
                    mode: Mode::Default,
                    dispatcher_ids: vec![],
                    merged_dispatcher_id: DispatcherId(1),
                    maintainer_epoch: 1,
                },
            },
            Message::MaintainerCloseResponse { cf: cf.clone(), success: true, maintainer_epoch: 1 },
            Message::HeartBeatRequest {
                redo_watermark: None,
                cf: cf.clone(),
                watermark: Watermark::default(),
                statuses: vec![],
                complete_status: false,
                err: None,
            },
            Message::BlockStatusRequest { mode: Mode::Default, cf: cf.clone(), statuses: vec![] },
        ];
        for m in msgs {
            assert_eq!(m.stream(), Stream::Command, "{}", m.name());
            let env = Envelope { from: NodeId(0), to: NodeId(2), msg: m };
            assert_eq!(link_key(&env), (0, 2, Stream::Command));
        }
    }

    /// Without reconnects a stream is FIFO whatever the latency draws and spikes, while two
    /// senders' streams to one receiver interleave.
    #[test]
    fn fifo_per_stream() {
        let mut interleaved = false;
        for seed in 0..10 {
            let sends: Vec<(u32, u32, u64)> = (0..60).map(|i| if i % 2 == 0 { (0, 2, i) } else { (1, 2, i) }).collect();
            let (arr, reconnects, _) = run(
                seed,
                |n| {
                    n.delay_spike = 0.2;
                    n.delay_spike_ms = [5, 50];
                },
                sends,
            );
            assert_eq!(reconnects, 0);
            assert_eq!(arr.len(), 60);
            let a = on(&arr, (0, 2));
            let b = on(&arr, (1, 2));
            assert_eq!(a, (0..60).step_by(2).collect::<Vec<_>>(), "seed {seed}");
            assert_eq!(b, (1..60).step_by(2).collect::<Vec<_>>(), "seed {seed}");
            let all: Vec<u64> = arr.iter().map(|(_, t)| *t).collect();
            interleaved |= all.windows(2).any(|w| w[0] > w[1]);
        }
        assert!(interleaved, "two streams never interleaved: the test cannot tell streams apart");
    }

    /// A stream reconnect loses messages but never reorders or duplicates them: a message
    /// the old stream's receive goroutine had read arrives on time, ahead of the new stream.
    #[test]
    fn reconnect_loses_never_reorders_or_duplicates() {
        let (mut lost, mut read) = (false, false);
        for seed in 0..40 {
            let sends: Vec<(u32, u32, u64)> = (0..80).map(|i| (0, 1, i)).collect();
            let (arr, reconnects, read_before_reset) = run(
                seed,
                |n| {
                    n.reconnect = 0.03;
                    n.reconnect_ms = [5, 40];
                    n.reconnect_stragglers = false;
                },
                sends,
            );
            let got = on(&arr, (0, 1));
            assert!(got.windows(2).all(|w| w[0] < w[1]), "seed {seed}: out of order or duplicated: {got:?}");
            lost |= got.len() < 80;
            read |= reconnects > 0 && read_before_reset > 0;
        }
        assert!(lost, "no reconnect lost an in-flight message");
        assert!(read, "no reconnect delivered a message its old stream had read");
    }

    /// A second reconnect while the stream is still down leaves the messages waiting in the
    /// send queue alone: nothing is lost or delivered that never went on a stream, and they
    /// arrive in order once the latest stream is up.
    #[test]
    fn a_reconnect_while_down_keeps_the_send_queue() {
        for seed in 0..20 {
            let rt = madsim::runtime::Runtime::with_seed_and_config(seed, madsim::Config::default());
            let (got, lost) = rt.block_on(async move {
                let mut world = live_world(seed, [1, 1]);
                world.net.reconnect_ms = [300, 300];
                let w: W = Arc::new(Mutex::new(world));
                {
                    // Sent while the stream is down: all wait in the send queue.
                    let mut g = w.lock().unwrap();
                    g.now_ms = now_ms();
                    reconnect(&w, &mut g, 0, 1);
                    for i in 0..5 {
                        send_link(&w, &mut g, Envelope { from: NodeId(0), to: NodeId(1), msg: tagged(i) });
                    }
                }
                madsim::time::sleep(Duration::from_millis(100)).await;
                {
                    let mut g = w.lock().unwrap();
                    g.now_ms = now_ms();
                    reconnect(&w, &mut g, 0, 1);
                }
                madsim::time::sleep(Duration::from_secs(5)).await;
                let g = w.lock().unwrap();
                (on(&g.net.arrivals.iter().map(|(l, m)| (*l, tag(m))).collect::<Vec<_>>(), (0, 1)), g.net.lost)
            });
            assert_eq!(got, (0..5).collect::<Vec<_>>(), "seed {seed}: lost {lost}");
        }
    }

    /// The older engine's model (`reconnect_stragglers`) lets a message the old stream had
    /// read arrive behind the new stream's messages.
    #[test]
    fn reconnect_stragglers_reorder() {
        let reordered = (0..40).any(|seed| {
            let sends: Vec<(u32, u32, u64)> = (0..80).map(|i| (0, 1, i)).collect();
            let (arr, _, _) = run(
                seed,
                |n| {
                    n.reconnect = 0.03;
                    n.reconnect_ms = [5, 40];
                    n.reconnect_stragglers = true;
                },
                sends,
            );
            on(&arr, (0, 1)).windows(2).any(|w| w[0] > w[1])
        });
        assert!(reordered, "no straggler arrived behind a newer message");
    }

    /// The fault off draws nothing: the same seed gives the same arrivals as before it existed
    /// (no reconnect, FIFO).
    #[test]
    fn reconnect_off_draws_nothing() {
        let sends: Vec<(u32, u32, u64)> = (0..40).map(|i| (0, 1, i)).collect();
        let (a, r, _) = run(3, |_| {}, sends.clone());
        let (b, _, _) = run(3, |n| n.reconnect_ms = [1, 2], sends);
        assert_eq!(r, 0);
        assert_eq!(a, b);
        assert_eq!(on(&a, (0, 1)), (0..40).collect::<Vec<_>>());
    }
}
