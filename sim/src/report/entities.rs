//! What a violation or a trace record is about: dispatchers and tables, read from the
//! violation text (by shape and by the scenario's table names) and from trace fields (by
//! field name), and the dispatcher -> table map of a run from its typed records.

use crate::causes::{Cause, CauseRecord};
use crate::names::Names;
use crate::result::TraceRecord;
use core_sched::types::{DispatcherId, TableId};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Something a violation can be about.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Entity {
    Dispatcher(String),
    Table(i64),
}

impl std::fmt::Display for Entity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Entity::Dispatcher(d) => write!(f, "dispatcher {}", d),
            Entity::Table(t) => write!(f, "table {}", t),
        }
    }
}

impl Entity {
    pub fn dispatcher(id: DispatcherId) -> Entity {
        Entity::Dispatcher(id.to_string())
    }
}

/// Entities named in free text: 16-hex-digit tokens are dispatcher IDs; a number after
/// the word `table` (or `tableID`, `table_id`) and a span's `t<ID>` prefix are table IDs.
pub fn entities_in(text: &str) -> BTreeSet<Entity> {
    entities_named(text, &Names::default())
}

/// [`entities_in`], and a token that is a scenario table name (`t6` in
/// `replication_count t6`, `w1`) is that table.
pub fn entities_named(text: &str, names: &Names) -> BTreeSet<Entity> {
    let mut out = BTreeSet::new();
    let tokens: Vec<&str> =
        text.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').filter(|t| !t.is_empty()).collect();
    for (i, t) in tokens.iter().enumerate() {
        if t.len() == 16 && t.chars().all(|c| c.is_ascii_hexdigit()) {
            out.insert(Entity::Dispatcher(t.to_ascii_lowercase()));
        } else if let Some(id) = names.table_named(t) {
            out.insert(Entity::Table(id));
        } else if let Some(id) = t.strip_prefix('t').and_then(|n| n.parse::<i64>().ok()) {
            out.insert(Entity::Table(id));
        } else if matches!(t.to_ascii_lowercase().as_str(), "table" | "tableid" | "table_id") {
            if let Some(id) = tokens.get(i + 1).and_then(|n| n.parse::<i64>().ok()) {
                out.insert(Entity::Table(id));
            }
        }
    }
    out
}

/// Trace fields whose values can name an entity (substring of the field name).
const ENTITY_KEYS: &[&str] = &["dispatcher", "table", "span", "op", "id", "detail", "error", "reason", "trigger"];

/// Entities a trace record touches.
pub fn record_entities(r: &TraceRecord) -> BTreeSet<Entity> {
    let mut out = BTreeSet::new();
    for (k, v) in &r.fields {
        if !ENTITY_KEYS.iter().any(|h| k.contains(h)) {
            continue;
        }
        match (&**k, v.parse::<i64>()) {
            ("table", Ok(id)) => {
                out.insert(Entity::Table(id));
            }
            _ => out.extend(entities_in(v)),
        }
    }
    out
}

/// Entities a cause record touches (its dispatchers, a schedule request's table).
pub fn cause_entities(c: &CauseRecord) -> BTreeSet<Entity> {
    let mut out: BTreeSet<Entity> = c.cause.dispatchers().into_iter().map(Entity::dispatcher).collect();
    if let Cause::ScheduleSent { table, .. } = &c.cause {
        out.insert(Entity::Table(*table));
    }
    out
}

/// The table of every dispatcher of a run: those it created (`typed`), those schedule
/// requests name, and else those of trace records with one dispatcher and one table.
pub fn dispatcher_tables(
    typed: &BTreeMap<DispatcherId, TableId>,
    trace: &[TraceRecord],
    causes: &[CauseRecord],
) -> BTreeMap<String, TableId> {
    let mut m: BTreeMap<String, TableId> = typed.iter().map(|(d, t)| (d.to_string(), *t)).collect();
    for c in causes {
        if let Cause::ScheduleSent { dispatcher, table, .. } = &c.cause {
            m.entry(dispatcher.to_string()).or_insert(*table);
        }
    }
    for r in trace {
        let es = record_entities(r);
        let ds: Vec<&String> = es
            .iter()
            .filter_map(|e| match e {
                Entity::Dispatcher(d) => Some(d),
                _ => None,
            })
            .collect();
        let ts: Vec<i64> = es
            .iter()
            .filter_map(|e| match e {
                Entity::Table(t) => Some(*t),
                _ => None,
            })
            .collect();
        if let ([d], [t]) = (ds.as_slice(), ts.as_slice()) {
            m.entry((*d).clone()).or_insert(*t);
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entities_from_violation_text() {
        let e = entities_in("table 106: dispatchers 68731c8c971a94e5 on 8301 t106[0,100) and b030db3d9011ec6f on 8302 t106[0,100) cover the same keys");
        let want: BTreeSet<Entity> = [
            Entity::Table(106),
            Entity::Dispatcher("68731c8c971a94e5".into()),
            Entity::Dispatcher("b030db3d9011ec6f".into()),
        ]
        .into_iter()
        .collect();
        assert_eq!(e, want);
        assert!(entities_in("event budget of 100000 exhausted").is_empty());
        // A scenario name is its table, not the table whose ID follows the `t`.
        let names = Names { tables: [(105, "t6".to_string()), (106, "w1".to_string())].into(), nodes: 3 };
        let e = entities_named("check:replication_count t6: w1 has 2", &names);
        assert_eq!(e, [Entity::Table(105), Entity::Table(106)].into_iter().collect());
    }
}
