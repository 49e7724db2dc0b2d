//! What a run records for its timeline page, beside the trace: every message from send to
//! handling, and the lifetimes of dispatchers, operators, maintainers and capture
//! incarnations, diffed from the typed state of the node after each of its steps.
//!
//! Recording is off unless asked for (`RunOptions::timeline`). It never touches the
//! trace hash or a random stream, so a recorded run is the same run.

use core_sched::messages::{Envelope, Message};
use core_sched::types::{ChangefeedId, DispatcherId, NodeId, TableId};
use std::collections::{BTreeMap, VecDeque};

/// At most this many messages are recorded (a page draws a few thousand of them).
pub const MSG_CAP: usize = 300_000;
/// At most this many bars (dispatcher, operator, maintainer, capture lifetimes).
pub const BAR_CAP: usize = 100_000;
/// Hover text of a message is cut to this many characters.
const DETAIL_CHARS: usize = 240;

/// One message: sent at `send_ms`, handled by its receiver at `recv_ms` (never, if it was
/// lost, dropped or still in flight at the end).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MsgRec {
    pub send_ms: u64,
    pub recv_ms: Option<u64>,
    pub from: u32,
    pub to: u32,
    pub kind: &'static str,
    /// A network duplicate: a second handling of an already handled send.
    pub duplicate: bool,
    pub dispatchers: Vec<DispatcherId>,
    pub tables: Vec<TableId>,
    pub detail: String,
}

/// What a bar is the lifetime of.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum BarKey {
    /// A capture incarnation (`generation`), from start to kill.
    Capture {
        generation: u64,
    },
    Maintainer {
        epoch: u64,
    },
    Dispatcher {
        id: DispatcherId,
    },
    /// An operator of the maintainer of `epoch`, by its controller slot.
    Operator {
        epoch: u64,
        slot: u64,
        id: DispatcherId,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BarRec {
    pub node: u32,
    pub key: BarKey,
    pub start_ms: u64,
    /// When it ended (`None`: still there at the end of the run).
    pub end_ms: Option<u64>,
    /// State changes over its lifetime, the first at `start_ms`.
    pub states: Vec<(u64, String)>,
    /// A dispatcher's table, span and whether it is the table trigger; an operator's
    /// description.
    pub table: Option<TableId>,
    pub label: String,
}

#[derive(Clone, Debug, Default)]
pub struct Recorder {
    pub msgs: Vec<MsgRec>,
    pub bars: Vec<BarRec>,
    /// Messages or bars left unrecorded because a cap was reached.
    pub msgs_dropped: u64,
    pub bars_dropped: u64,
    /// Sends not handled yet, oldest first, by (from, to, fingerprint of the message).
    pending: BTreeMap<(u32, u32, u64), VecDeque<usize>>,
    /// The last handled send of each key, for duplicates.
    last_handled: BTreeMap<(u32, u32, u64), usize>,
    /// Open bars by (node, key).
    open: BTreeMap<(u32, BarKey), usize>,
}

/// What a node holds right now, as bars would show it: key -> (state, table, label).
pub type NodeView = BTreeMap<BarKey, (String, Option<TableId>, String)>;

/// The view of one capture incarnation (`None` when it does not run).
pub fn node_view(generation: u64, state: Option<&crate::world::NodeState>, cf: &ChangefeedId) -> Option<NodeView> {
    let st = state?;
    let mut v = NodeView::new();
    v.insert(BarKey::Capture { generation }, ("running".into(), None, format!("incarnation {}", generation)));
    if let Some(m) = st.mm.maintainers.get(cf) {
        if m.state != core_sched::maintainer::MaintainerState::Stopped {
            v.insert(
                BarKey::Maintainer { epoch: m.epoch },
                (format!("{:?}", m.state), None, format!("maintainer epoch {}", m.epoch)),
            );
            for (slot, s) in &m.pipe.oc.slots {
                if s.done {
                    continue;
                }
                let id = s.op.id();
                v.insert(
                    BarKey::Operator { epoch: m.epoch, slot: *slot, id },
                    (s.op.kind().to_string(), None, s.op.describe()),
                );
            }
        }
    }
    if let Some(dm) = st.orch.managers.get(cf) {
        for (id, d) in &dm.dispatchers {
            let label = if d.is_trigger { "table trigger".to_string() } else { format!("{:?}", d.span) };
            v.insert(
                BarKey::Dispatcher { id: *id },
                (format!("{:?}", d.state), Some(d.span.table_id), format!("{} e={}", label, dm.maintainer_epoch)),
            );
        }
    }
    Some(v)
}

impl Recorder {
    /// A message goes out (before any network fault decides its fate).
    pub fn sent(&mut self, now: u64, env: &Envelope) {
        if self.msgs.len() >= MSG_CAP {
            self.msgs_dropped += 1;
            return;
        }
        let (dispatchers, tables) = message_entities(&env.msg);
        let mut detail = format!("{:?}", env.msg);
        if detail.len() > DETAIL_CHARS {
            let cut = (0..=DETAIL_CHARS).rev().find(|i| detail.is_char_boundary(*i)).unwrap_or(0);
            detail.truncate(cut);
            detail.push_str("...");
        }
        let key = (env.from.0, env.to.0, fingerprint(&env.msg));
        self.pending.entry(key).or_default().push_back(self.msgs.len());
        self.msgs.push(MsgRec {
            send_ms: now,
            recv_ms: None,
            from: env.from.0,
            to: env.to.0,
            kind: env.msg.name(),
            duplicate: false,
            dispatchers,
            tables,
            detail,
        });
    }

    /// A message was handled by its receiver. Sends are matched by content: of equal
    /// messages on one link the oldest unhandled is taken (links are FIFO but for
    /// reconnect stragglers, whose equal twins are indistinguishable anyway).
    pub fn handled(&mut self, now: u64, from: NodeId, to: NodeId, fp: u64) {
        let key = (from.0, to.0, fp);
        if let Some(i) = self.pending.get_mut(&key).and_then(|q| q.pop_front()) {
            self.msgs[i].recv_ms = Some(now);
            self.last_handled.insert(key, i);
            return;
        }
        // Handled twice: a network duplicate of an earlier send.
        let Some(&i) = self.last_handled.get(&key) else { return };
        if self.msgs.len() >= MSG_CAP {
            self.msgs_dropped += 1;
            return;
        }
        let mut dup = self.msgs[i].clone();
        dup.recv_ms = Some(now);
        dup.duplicate = true;
        self.msgs.push(dup);
    }

    /// Bring node `n`'s bars up to date with its current view (`None`: not running).
    pub fn observe(&mut self, now: u64, n: u32, view: Option<NodeView>) {
        let view = view.unwrap_or_default();
        let open: Vec<(BarKey, usize)> = self
            .open
            .range((n, BarKey::Capture { generation: 0 })..)
            .take_while(|((m, _), _)| *m == n)
            .map(|((_, k), i)| (k.clone(), *i))
            .collect();
        for (k, i) in &open {
            match view.get(k) {
                None => {
                    self.bars[*i].end_ms = Some(now);
                    self.open.remove(&(n, k.clone()));
                }
                Some((state, _, _)) => {
                    let b = &mut self.bars[*i];
                    if b.states.last().map(|(_, s)| s != state).unwrap_or(true) {
                        b.states.push((now, state.clone()));
                    }
                }
            }
        }
        for (k, (state, table, label)) in view {
            if self.open.contains_key(&(n, k.clone())) {
                continue;
            }
            if self.bars.len() >= BAR_CAP {
                self.bars_dropped += 1;
                continue;
            }
            self.open.insert((n, k.clone()), self.bars.len());
            self.bars.push(BarRec {
                node: n,
                key: k,
                start_ms: now,
                end_ms: None,
                states: vec![(now, state)],
                table,
                label,
            });
        }
    }
}

/// A cheap content hash of a message (FNV over its debug form, written without
/// allocating).
pub fn fingerprint(msg: &Message) -> u64 {
    struct H(crate::trace::TraceHash);
    impl std::fmt::Write for H {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0.bytes(s.as_bytes());
            Ok(())
        }
    }
    let mut h = H(crate::trace::TraceHash::default());
    let _ = std::fmt::write(&mut h, format_args!("{:?}", msg));
    h.0 .0
}

/// The dispatchers and tables a message is about, from its typed fields.
pub fn message_entities(msg: &Message) -> (Vec<DispatcherId>, Vec<TableId>) {
    use core_sched::messages::InfluencedDispatchers as I;
    let (mut d, mut t) = (Vec::new(), Vec::new());
    match msg {
        Message::ScheduleDispatcherRequest { req, .. } => {
            d.push(req.config.dispatcher_id);
            t.push(req.config.span.table_id);
        }
        Message::MergeDispatcherRequest { req, .. } => {
            d.extend(req.dispatcher_ids.iter().copied());
            d.push(req.merged_dispatcher_id);
        }
        Message::HeartBeatResponse { statuses, .. } => {
            for s in statuses {
                if let I::Normal(ids) = &s.influenced {
                    d.extend(ids.iter().copied());
                }
            }
        }
        Message::MaintainerBootstrapRequest { table_trigger_event_dispatcher_id: Some(id), .. }
        | Message::MaintainerPostBootstrapRequest { table_trigger_event_dispatcher_id: id, .. }
        | Message::MaintainerPostBootstrapResponse { table_trigger_event_dispatcher_id: id, .. } => d.push(*id),
        Message::MaintainerBootstrapResponse { spans, operators, .. } => {
            for s in spans {
                d.push(s.id);
                t.push(s.span.table_id);
            }
            for o in operators {
                d.push(o.config.dispatcher_id);
                t.push(o.config.span.table_id);
            }
        }
        Message::HeartBeatRequest { statuses, .. } => d.extend(statuses.iter().map(|s| s.id)),
        Message::BlockStatusRequest { statuses, .. } => d.extend(statuses.iter().map(|s| s.id)),
        _ => {}
    }
    d.sort();
    d.dedup();
    t.sort();
    t.dedup();
    (d, t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ckpt(ts: u64) -> Envelope {
        Envelope {
            from: NodeId(0),
            to: NodeId(1),
            msg: Message::CheckpointTsMessage { cf: ChangefeedId("cf".into()), checkpoint_ts: ts },
        }
    }

    #[test]
    fn sends_pair_with_handlings_by_content_and_duplicates_are_kept() {
        let mut r = Recorder::default();
        let (a, b) = (ckpt(1), ckpt(2));
        r.sent(10, &a);
        r.sent(11, &b);
        r.sent(12, &a);
        r.handled(20, a.from, a.to, fingerprint(&b.msg));
        r.handled(21, a.from, a.to, fingerprint(&a.msg));
        assert_eq!(r.msgs.iter().map(|m| m.recv_ms).collect::<Vec<_>>(), [Some(21), Some(20), None]);
        r.handled(22, a.from, a.to, fingerprint(&a.msg));
        r.handled(23, a.from, a.to, fingerprint(&a.msg));
        assert_eq!(r.msgs[2].recv_ms, Some(22));
        // A fourth handling of `a` with no send left is a duplicate of the last one.
        assert_eq!(r.msgs.len(), 4);
        assert!(r.msgs[3].duplicate && r.msgs[3].send_ms == 12 && r.msgs[3].recv_ms == Some(23));
        // Another link never matches.
        r.handled(24, NodeId(1), NodeId(0), fingerprint(&a.msg));
        assert_eq!(r.msgs.len(), 4);
    }

    #[test]
    fn bars_open_change_and_close_with_the_view() {
        let mut r = Recorder::default();
        let d = BarKey::Dispatcher { id: DispatcherId(7) };
        let view = |s: &str| {
            let mut v = NodeView::new();
            v.insert(d.clone(), (s.to_string(), Some(104), "t104".into()));
            Some(v)
        };
        r.observe(1, 2, view("Initializing"));
        r.observe(2, 2, view("Initializing"));
        r.observe(3, 2, view("Working"));
        r.observe(4, 1, None);
        assert_eq!(r.bars[0].end_ms, None);
        r.observe(5, 2, None);
        let b = &r.bars[0];
        assert_eq!((b.node, b.start_ms, b.end_ms, b.table), (2, 1, Some(5), Some(104)));
        assert_eq!(b.states, vec![(1, "Initializing".to_string()), (3, "Working".to_string())]);
        // The same dispatcher again later is a new bar.
        r.observe(6, 2, view("Working"));
        assert_eq!(r.bars.len(), 2);
    }
}
