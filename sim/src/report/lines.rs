//! One slice line as text, with the scenario's names: captures `n2` (not port 8302),
//! tables `t1` (not 100), dispatchers `t1/a244`, maintainer generations `g2` (not the
//! epoch). The raw values stay in the JSON report and the slice's legend.

use crate::causes::{Cause, CauseRecord, SpanStatus};
use crate::names::{self, Names};
use crate::result::TraceRecord;
use core_sched::messages::Watermark;
use core_sched::types::{DispatcherId, Epoch, TableId, Ts};
use std::collections::{BTreeMap, BTreeSet};

/// A heartbeat line lists at most this many statuses.
const STATUSES_SHOWN: usize = 4;

/// Names one run's records.
pub struct Namer<'a> {
    pub names: &'a Names,
    /// Dispatcher (16 hex digits) -> its table.
    pub owner: &'a BTreeMap<String, TableId>,
    /// Maintainer epoch -> generation (1, 2, ... in epoch order).
    pub gens: BTreeMap<Epoch, usize>,
}

impl<'a> Namer<'a> {
    pub fn new(names: &'a Names, owner: &'a BTreeMap<String, TableId>, epochs: impl Iterator<Item = Epoch>) -> Self {
        let set: BTreeSet<Epoch> = epochs.filter(|e| *e != 0).collect();
        Namer { names, owner, gens: set.into_iter().enumerate().map(|(i, e)| (e, i + 1)).collect() }
    }

    pub fn epoch(&self, e: Epoch) -> String {
        match self.gens.get(&e) {
            Some(g) => format!("g{}", g),
            None if e == 0 => "-".to_string(),
            None => format!("e={}", e),
        }
    }

    pub fn dispatcher(&self, id: DispatcherId) -> String {
        self.names.dispatcher(id, self.owner.get(&id.to_string()).copied())
    }

    /// A trace node name (`8302`, `-`) as the scenario calls it.
    fn node_name(&self, node: &str) -> String {
        self.names.node_of_port(node).unwrap_or_else(|| node.to_string())
    }

    /// Free text with its dispatcher IDs, capture ports and table IDs renamed.
    pub fn text(&self, s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        let mut tok = String::new();
        let mut prev = String::new();
        let flush = |tok: &mut String, prev: &mut String, out: &mut String| {
            if tok.is_empty() {
                return;
            }
            // Inside a path or file name (`CDC_<id>_1.json`, `.tmp.<id>`) an ID stays raw.
            let in_path = out.ends_with('.') || out.ends_with('/');
            if in_path {
                out.push_str(tok);
            } else {
                out.push_str(&self.token(tok, prev));
            }
            *prev = std::mem::take(tok);
        };
        for c in s.chars() {
            if c.is_ascii_alphanumeric() || c == '_' {
                tok.push(c);
            } else {
                flush(&mut tok, &mut prev, &mut out);
                out.push(c);
            }
        }
        flush(&mut tok, &mut prev, &mut out);
        // Text that named both (`table 100 (t1)`) now says the name twice.
        for name in self.names.tables.values() {
            let twice = format!("{} ({})", name, name);
            if out.contains(&twice) {
                out = out.replace(&twice, name);
            }
        }
        out
    }

    fn token(&self, t: &str, prev: &str) -> String {
        if t.len() == 16 && t.chars().all(|c| c.is_ascii_hexdigit()) {
            if let Ok(id) = u64::from_str_radix(t, 16) {
                return self.dispatcher(DispatcherId(id));
            }
        }
        if t.len() == 4 && t.chars().all(|c| c.is_ascii_digit()) {
            if let Some(n) = self.names.node_of_port(t) {
                return n;
            }
        }
        let known = |id: &str| id.parse::<TableId>().ok().filter(|id| self.names.tables.contains_key(id));
        if matches!(prev.to_ascii_lowercase().as_str(), "table" | "tableid" | "table_id") {
            if let Some(id) = known(t) {
                return self.names.table(id);
            }
        }
        if let Some(id) = t.strip_prefix('t').and_then(known) {
            return self.names.table(id);
        }
        t.to_string()
    }

    /// `time  node  gen  event  fields` of a trace record (the changefeed ID is left out:
    /// every scenario has one changefeed).
    pub fn record(&self, r: &TraceRecord) -> String {
        let f: Vec<String> = r
            .fields
            .iter()
            .filter(|(k, _)| k != "changefeed")
            .map(|(k, v)| match (&**k, v.parse::<TableId>()) {
                ("table", Ok(id)) => format!("table={}", self.names.table(id)),
                ("epoch", Ok(e)) => format!("epoch={}", self.epoch(e as Epoch)),
                _ => format!("{}={}", k, self.text(v)),
            })
            .collect();
        row(r.at_ms, &self.node_name(&r.node), &self.epoch(r.epoch), &r.event, &f.join(" "))
    }

    /// A cause record; a heartbeat lists the statuses of `focus` dispatchers first.
    pub fn cause(&self, c: &CauseRecord, focus: &BTreeSet<String>) -> String {
        let n = names::node;
        match &c.cause {
            Cause::HeartbeatSent { from, to, watermark, complete, statuses } => {
                let mut st: Vec<&SpanStatus> = statuses.iter().collect();
                st.sort_by_key(|s| !focus.contains(&s.dispatcher.to_string()));
                let kind = if *complete { "complete" } else { "statuses" };
                let fields = format!("to={} watermark={} {}=[{}]", n(*to), wm(watermark), kind, self.statuses(&st));
                row(c.at_ms, &n(*from), "-", "heartbeat sent", &fields)
            }
            Cause::ScheduleSent { from, to, epoch, dispatcher, span, create, operator, .. } => {
                let fields = format!(
                    "to={} {} {} span={} op={}",
                    n(*to),
                    if *create { "create" } else { "remove" },
                    self.dispatcher(*dispatcher),
                    self.text(span),
                    operator
                );
                row(c.at_ms, &n(*from), &self.epoch(*epoch), "schedule request sent", &fields)
            }
            Cause::BootstrapSent { from, to, epoch, spans, operators, merges } => {
                let mut sp: Vec<&SpanStatus> = spans.iter().collect();
                sp.sort_by_key(|s| !focus.contains(&s.dispatcher.to_string()));
                let st = self.statuses(&sp);
                let ops: Vec<String> = operators
                    .iter()
                    .map(|(create, d)| format!("{} {}", if *create { "create" } else { "remove" }, self.dispatcher(*d)))
                    .collect();
                let mut fields = format!("to={} spans=[{}]", n(*to), st);
                if !ops.is_empty() {
                    fields.push_str(&format!(" operators=[{}]", ops.join(", ")));
                }
                if !merges.is_empty() {
                    let m: Vec<String> = merges.iter().map(|d| self.dispatcher(*d)).collect();
                    fields.push_str(&format!(" merges=[{}]", m.join(" ")));
                }
                row(c.at_ms, &n(*from), &self.epoch(*epoch), "bootstrap response sent", &fields)
            }
            Cause::MergeSent { from, to, dispatchers, merged } => {
                let ds: Vec<String> = dispatchers.iter().map(|d| self.dispatcher(*d)).collect();
                let fields = format!("to={} merge [{}] into {}", n(*to), ds.join(" "), self.dispatcher(*merged));
                row(c.at_ms, &n(*from), "-", "merge request sent", &fields)
            }
            Cause::WatermarkStored { node, epoch, from, received, stored } => {
                let kept = if received == stored { String::new() } else { format!(" kept={}", wm(stored)) };
                let fields = format!("from={} received={}{}", n(*from), wm(received), kept);
                row(c.at_ms, &n(*node), &self.epoch(*epoch), "heartbeat watermark stored", &fields)
            }
            Cause::CheckpointCalculated { node, epoch, checkpoint, by_operator, by_absent, by_barrier, watermarks } => {
                let b = |v: &Option<Ts>| v.map(|t| t.to_string()).unwrap_or_else(|| "none".to_string());
                let w: Vec<String> = watermarks.iter().map(|(x, w)| format!("{}:{}", n(*x), wm(w))).collect();
                let fields = format!(
                    "checkpoint={} min of operator={} absent={} barrier={} watermarks=[{}]",
                    checkpoint,
                    b(by_operator),
                    b(by_absent),
                    b(by_barrier),
                    w.join(" ")
                );
                row(c.at_ms, &n(*node), &self.epoch(*epoch), "checkpoint calculated", &fields)
            }
            Cause::CheckpointPersisted { owner, from, to } => {
                let node = owner.map(n).unwrap_or_else(|| "-".to_string());
                row(c.at_ms, &node, "-", "checkpoint persisted", &format!("from={} to={}", from, to))
            }
        }
    }
}

impl Namer<'_> {
    /// `t1/a244:Working@123 ...`, the first few (the involved ones are sorted first).
    fn statuses(&self, st: &[&SpanStatus]) -> String {
        let mut shown: Vec<String> = st
            .iter()
            .take(STATUSES_SHOWN)
            .map(|s| format!("{}:{:?}@{}", self.dispatcher(s.dispatcher), s.state, s.checkpoint_ts))
            .collect();
        if st.len() > STATUSES_SHOWN {
            shown.push(format!("+{} more", st.len() - STATUSES_SHOWN));
        }
        if shown.is_empty() {
            return "-".to_string();
        }
        shown.join(" ")
    }
}

/// `ckpt/seq` (`max/seq3`: a node without dispatchers).
fn wm(w: &Watermark) -> String {
    if w.checkpoint_ts == Ts::MAX {
        return format!("max/seq{}", w.seq);
    }
    format!("{}/seq{}", w.checkpoint_ts, w.seq)
}

fn row(at_ms: u64, node: &str, gen: &str, event: &str, fields: &str) -> String {
    format!("{:>9.3}s  {:<4}  {:<4}  {}  {}", at_ms as f64 / 1000.0, node, gen, event, fields).trim_end().to_string()
}

/// A violation group's line: `time  !!!  VIOLATION inv xN (range): detail`.
pub fn violation_row(at_ms: u64, text: &str) -> String {
    format!("{:>9.3}s  !!!         VIOLATION {}", at_ms as f64 / 1000.0, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_renamed_to_the_scenarios_names() {
        let names = Names { tables: [(100, "t1".to_string())].into(), nodes: 3 };
        let owner: BTreeMap<String, TableId> = [("a24495a089f8ac4c".to_string(), 100)].into();
        let n = Namer::new(&names, &owner, [7, 9, 0].into_iter());
        assert_eq!(n.text("remove a24495a089f8ac4c from 8300"), "remove t1/a244 from n0");
        assert_eq!(n.text("db/t1/x.tmp.a24495a089f8ac4c"), "db/t1/x.tmp.a24495a089f8ac4c");
        assert_eq!(n.text("table 100 (t1) differs"), "table t1 differs");
        assert_eq!(n.text("span t100[0,5) table 100 key=8300123"), "span t1[0,5) table t1 key=8300123");
        // Unknown IDs and out-of-cluster ports stay as they are.
        assert_eq!(n.text("table 104 on 8305"), "table 104 on 8305");
        assert_eq!((n.epoch(7), n.epoch(9), n.epoch(0)), ("g1".to_string(), "g2".to_string(), "-".to_string()));
    }
}
