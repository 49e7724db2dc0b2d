//! Identifiers, timestamps and key spans.
//!
//! Simplification: TiDB encodes a table's row keys as byte strings
//! (`t{tableID}_r{handle}`). The scheduling protocol only ever compares, splits and
//! merges key ranges, so the model represents a table's record key space as the
//! half-open integer range `[0, TABLE_KEY_END)`; a row's key is its integer handle.
//! Span arithmetic (overlap, holes, partitions) is therefore exact and cheap.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A TSO-style timestamp: physical milliseconds shifted left by 18 bits plus a logical part.
pub type Ts = u64;
/// Maintainer generation epoch, persisted by the coordinator before every new generation.
pub type Epoch = u64;
pub type TableId = i64;
pub type SchemaId = i64;

/// Bits of a TSO reserved for the logical counter (as in PD).
pub const TSO_LOGICAL_BITS: u32 = 18;
/// Table ID of the DDL span owned by the table trigger event dispatcher.
pub const DDL_SPAN_TABLE_ID: TableId = 0;
/// Exclusive end of every table's key space in this model.
pub const TABLE_KEY_END: u64 = 1 << 32;

pub fn ts_from_ms(ms: u64) -> Ts {
    ms << TSO_LOGICAL_BITS
}
pub fn ts_to_ms(ts: Ts) -> u64 {
    ts >> TSO_LOGICAL_BITS
}

/// A capture (TiCDC server process). Displayed as its TiCDC-style address port (`8300 + n`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
pub struct NodeId(pub u32);
impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", 8300 + self.0)
    }
}
impl fmt::Debug for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self)
    }
}

/// Dispatcher IDs are random 128-bit GIDs in TiCDC; 64 bits drawn from the injected
/// generator are enough here. Displayed as 16 hex digits.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
pub struct DispatcherId(pub u64);
impl fmt::Display for DispatcherId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}
impl fmt::Debug for DispatcherId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self)
    }
}
impl DispatcherId {
    pub fn is_zero(&self) -> bool {
        self.0 == 0
    }
}

#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Debug)]
pub struct ChangefeedId(pub String);
impl fmt::Display for ChangefeedId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Which pipeline a span, dispatcher or message belongs to (`pkg/common/types.go`:
/// `DefaultMode = 0`, `RedoMode = 1`). Redo mode exists only with
/// `consistent.level = "eventual"`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Debug, Default)]
pub enum Mode {
    #[default]
    Default,
    Redo,
}
impl Mode {
    /// For `skip_serializing_if`: default-mode messages serialize as before redo existed.
    pub fn is_default(&self) -> bool {
        *self == Mode::Default
    }
    pub fn name(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::Redo => "redo",
        }
    }
}
impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `[start, end)` of one table's key space.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
pub struct TableSpan {
    pub table_id: TableId,
    pub start: u64,
    pub end: u64,
}
impl fmt::Debug for TableSpan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t{}[{:x},{:x})", self.table_id, self.start, self.end)
    }
}
impl fmt::Display for TableSpan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
impl TableSpan {
    pub fn full(table_id: TableId) -> Self {
        TableSpan { table_id, start: 0, end: TABLE_KEY_END }
    }
    pub fn ddl_span() -> Self {
        Self::full(DDL_SPAN_TABLE_ID)
    }
    pub fn is_full(&self) -> bool {
        self.start == 0 && self.end == TABLE_KEY_END
    }
    pub fn contains_key(&self, key: u64) -> bool {
        self.start <= key && key < self.end
    }
    pub fn overlaps(&self, o: &TableSpan) -> bool {
        self.table_id == o.table_id && self.start < o.end && o.start < self.end
    }
    pub fn covers(&self, o: &TableSpan) -> bool {
        self.table_id == o.table_id && self.start <= o.start && o.end <= self.end
    }
}

/// Holes of `spans` inside `[0, TABLE_KEY_END)` of `table_id` (spans may be unsorted/overlapping).
pub fn find_holes(table_id: TableId, spans: &[TableSpan]) -> Vec<TableSpan> {
    let mut v: Vec<(u64, u64)> = spans.iter().filter(|s| s.table_id == table_id).map(|s| (s.start, s.end)).collect();
    v.sort();
    let mut holes = Vec::new();
    let mut cur = 0u64;
    for (s, e) in v {
        if s > cur {
            holes.push(TableSpan { table_id, start: cur, end: s });
        }
        cur = cur.max(e);
    }
    if cur < TABLE_KEY_END {
        holes.push(TableSpan { table_id, start: cur, end: TABLE_KEY_END });
    }
    holes
}

/// Cut `span` into `n` nearly equal pieces (n >= 1), clamped to the span.
pub fn split_span_evenly(span: &TableSpan, n: u64) -> Vec<TableSpan> {
    let n = n.max(1);
    let width = span.end - span.start;
    let n = n.min(width.max(1));
    let mut out = Vec::with_capacity(n as usize);
    let mut start = span.start;
    for i in 0..n {
        let end = if i + 1 == n { span.end } else { span.start + width / n * (i + 1) };
        out.push(TableSpan { table_id: span.table_id, start, end });
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn holes_and_split() {
        let s = TableSpan::full(5);
        let parts = split_span_evenly(&s, 3);
        assert_eq!(parts.len(), 3);
        assert!(find_holes(5, &parts).is_empty());
        assert_eq!(find_holes(5, &parts[..2]), vec![parts[2]]);
        assert_eq!(find_holes(5, &[]), vec![s]);
    }
}
