//! In-process queues that can hold a message back: the two queues of a capture's
//! `HeartBeatCollector` on the sending side ([`Lane`]) and the per-kind dynamic streams
//! (and the orchestrator's queue) on the dispatcher side ([`RecvLane`]). Each queue is
//! FIFO; nothing orders one queue against another, which is the asynchrony they model.

use core_sched::dispatcher::orchestrator::DispatcherOrchestrator;
use core_sched::messages::{Envelope, Message};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, VecDeque};

/// The two queues of TiCDC's `HeartBeatCollector` (one per capture, shared by all its
/// dispatcher managers): `heartBeatReqQueue` and `blockStatusReqQueue`, each drained by
/// its own goroutine into the message center. Each queue is FIFO, but nothing orders one
/// against the other, so a block status enqueued before a heartbeat can reach the
/// maintainer after it (e.g. a WAITING behind a backlog of block statuses while the
/// Stopped heartbeat of the same, just removed, dispatcher goes straight through).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lane {
    HeartBeat,
    BlockStatus,
}

/// The collector queue a message leaves its capture through, if any. Bootstrap, post-
/// bootstrap and close responses are sent by the orchestrator directly.
pub fn collector_lane(msg: &Message) -> Option<Lane> {
    match msg {
        Message::HeartBeatRequest { .. } => Some(Lane::HeartBeat),
        Message::BlockStatusRequest { .. } => Some(Lane::BlockStatus),
        _ => None,
    }
}

/// Where a message to a capture's dispatcher side waits before it is handled. TiCDC's
/// `HeartBeatCollector.RecvMessages` pushes each kind into its own dynamic stream
/// (`heartBeatResponseDynamicStream`, `schedulerDispatcherRequestDynamicStream`,
/// `mergeDispatcherRequestDynamicStream`), each drained by its own workers, and the
/// dispatcher orchestrator takes bootstrap, post-bootstrap and close requests from its own
/// queue. Each queue is FIFO; nothing orders one against another, so e.g. an action in a
/// heartbeat response can be handled before a schedule request sent earlier.
///
/// The orchestrator's queue is TiCDC's `pendingMessageQueue`: it holds at most one
/// request per (changefeed, kind); a request for a key already waiting replaces it when it
/// is of a newer maintainer epoch (or upgrades a close to `removed`) and is dropped
/// otherwise, keeping the waiting request's place (see [`absorb_pending`]). A lag in that
/// queue stands for its shard worker busy with other changefeeds' requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RecvLane {
    HeartBeatResponse,
    ScheduleDispatcher,
    MergeDispatcher,
    Orchestrator,
}

pub fn recv_lane(msg: &Message) -> Option<RecvLane> {
    match msg {
        Message::HeartBeatResponse { .. } => Some(RecvLane::HeartBeatResponse),
        Message::ScheduleDispatcherRequest { .. } => Some(RecvLane::ScheduleDispatcher),
        Message::MergeDispatcherRequest { .. } => Some(RecvLane::MergeDispatcher),
        Message::MaintainerBootstrapRequest { .. }
        | Message::MaintainerPostBootstrapRequest { .. }
        | Message::MaintainerCloseRequest { .. } => Some(RecvLane::Orchestrator),
        _ => None,
    }
}

/// A set of FIFO queues keyed by (capture, incarnation, lane): a restarted capture's
/// queues start empty. With `prob` at 0 and nothing queued, a message passes straight
/// through and nothing is drawn, so runs without the fault keep their random streams.
#[derive(Debug)]
pub struct LagQueues<K> {
    /// Probability that a message is held back an extra `range_ms`.
    pub prob: f64,
    pub range_ms: [u64; 2],
    /// Messages held back by a drawn lag.
    pub lagged: u64,
    /// Per queue: release time, the incarnation the message belongs to, the message.
    queues: BTreeMap<K, VecDeque<(u64, u64, Envelope)>>,
    /// Release time of each queue's last message (FIFO: no later message leaves earlier).
    last: BTreeMap<K, u64>,
}

impl<K> Default for LagQueues<K> {
    fn default() -> Self {
        LagQueues { prob: 0.0, range_ms: [0, 0], lagged: 0, queues: BTreeMap::new(), last: BTreeMap::new() }
    }
}

/// What [`LagQueues::admit`] did with a message.
pub enum Admission {
    /// Nothing lags it: the caller sends it on at once.
    /// Boxed: a message is large and most pass at once.
    PassNow(Box<Envelope>),
    /// Queued; the caller pops the queue at `release`.
    Queued { release: u64 },
}

impl<K: Ord + Copy> LagQueues<K> {
    /// Queue `env` in `key` at `now`: [`Admission::PassNow`] when it passes at once (no lag
    /// drawn and nothing ahead of it), else the release time, when the caller pops the
    /// queue. Once lagging stops (the faults stop), what is queued still goes first.
    pub fn admit(&mut self, rng: &mut ChaCha8Rng, key: K, now: u64, gen: u64, env: Envelope) -> Admission {
        let backlog = self.queues.get(&key).is_some_and(|q| !q.is_empty());
        if self.prob <= 0.0 && !backlog {
            return Admission::PassNow(Box::new(env));
        }
        let lag = if self.prob > 0.0 && rng.random_bool(self.prob) {
            let [lo, hi] = self.range_ms;
            self.lagged += 1;
            rng.random_range(lo..=hi.max(lo))
        } else {
            0
        };
        let release = (now + lag).max(*self.last.get(&key).unwrap_or(&0));
        if release <= now && !backlog {
            return Admission::PassNow(Box::new(env));
        }
        self.last.insert(key, release);
        self.queues.entry(key).or_default().push_back((release, gen, env));
        Admission::Queued { release }
    }

    /// The messages waiting in queue `key`, oldest first.
    pub fn waiting_mut(&mut self, key: K) -> impl Iterator<Item = &mut Envelope> {
        self.queues.get_mut(&key).into_iter().flat_map(|q| q.iter_mut().map(|(_, _, env)| env))
    }

    /// The head of queue `key` with its incarnation (one pop per admitted message).
    pub fn pop(&mut self, key: K) -> Option<(u64, Envelope)> {
        self.queues.get_mut(&key).and_then(|q| q.pop_front()).map(|(_, gen, env)| (gen, env))
    }
}

/// `pendingMessageQueue.TryEnqueue` for a request reaching a capture's orchestrator queue
/// while a request with its key waits there: true when `env` was absorbed (it replaced the
/// waiting request or was dropped); false when nothing with its key waits.
pub fn absorb_pending<'a>(mut waiting: impl Iterator<Item = &'a mut Envelope>, env: &Envelope) -> Option<bool> {
    let kind = core_sched::dispatcher::orchestrator::pending_kind(&env.msg)?;
    let slot = waiting.find(|w| {
        core_sched::dispatcher::orchestrator::pending_kind(&w.msg) == Some(kind)
            && DispatcherOrchestrator::cf_of(&w.msg) == DispatcherOrchestrator::cf_of(&env.msg)
    })?;
    if core_sched::dispatcher::orchestrator::replaces(&slot.msg, &env.msg) {
        *slot = env.clone();
        Some(true)
    } else {
        Some(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core_sched::types::{ChangefeedId, DispatcherId, NodeId};

    fn boot(epoch: u64, trigger: u64) -> Envelope {
        let msg = Message::MaintainerBootstrapRequest {
            table_trigger_redo_dispatcher_id: None,
            cf: ChangefeedId("cf".into()),
            config: Default::default(),
            start_ts: 1,
            table_trigger_event_dispatcher_id: Some(DispatcherId(trigger)),
            is_new_changefeed: false,
            maintainer_epoch: epoch,
        };
        Envelope { from: NodeId(1), to: NodeId(1), msg }
    }

    fn epoch_of(env: &Envelope) -> u64 {
        match env.msg {
            Message::MaintainerBootstrapRequest { maintainer_epoch, .. } => maintainer_epoch,
            _ => unreachable!(),
        }
    }

    #[test]
    fn the_orchestrator_queue_keeps_one_request_per_key() {
        let close = Envelope {
            from: NodeId(1),
            to: NodeId(1),
            msg: Message::MaintainerCloseRequest { cf: ChangefeedId("cf".into()), removed: false, maintainer_epoch: 5 },
        };
        let mut waiting = [close.clone(), boot(5, 7)];
        // Nothing of its kind waits: not absorbed (queued behind).
        assert_eq!(absorb_pending(std::iter::empty(), &boot(5, 7)), None);
        // A resend of the same epoch is dropped; the waiting one keeps its place.
        assert_eq!(absorb_pending(waiting.iter_mut(), &boot(5, 7)), Some(false));
        assert_eq!(epoch_of(&waiting[1]), 5);
        // A newer generation's bootstrap replaces the waiting one in place.
        assert_eq!(absorb_pending(waiting.iter_mut(), &boot(6, 8)), Some(true));
        assert_eq!(epoch_of(&waiting[1]), 6);
        assert!(matches!(waiting[0].msg, Message::MaintainerCloseRequest { .. }));
        // An older one never replaces a newer one.
        assert_eq!(absorb_pending(waiting.iter_mut(), &boot(5, 7)), Some(false));
        assert_eq!(epoch_of(&waiting[1]), 6);
        // A close upgraded to removed replaces a waiting close of the same epoch.
        let removed = Envelope {
            from: NodeId(1),
            to: NodeId(1),
            msg: Message::MaintainerCloseRequest { cf: ChangefeedId("cf".into()), removed: true, maintainer_epoch: 5 },
        };
        assert_eq!(absorb_pending(waiting.iter_mut(), &removed), Some(true));
        assert!(matches!(waiting[0].msg, Message::MaintainerCloseRequest { removed: true, .. }));
        // Another changefeed's request has its own key.
        let other = Envelope {
            from: NodeId(1),
            to: NodeId(1),
            msg: Message::MaintainerCloseRequest {
                cf: ChangefeedId("other".into()),
                removed: false,
                maintainer_epoch: 9,
            },
        };
        assert_eq!(absorb_pending(waiting.iter_mut(), &other), None);
    }
}
