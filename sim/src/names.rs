//! How reports and timeline pages name what a run is about, as the scenario does:
//! captures `n0`, `n1`, ... (the core's `NodeId`, shown as port `8300 + i` in the trace),
//! tables by their scenario name (`t1`), the DDL span `trigger`, dispatchers `t1/3f7b`
//! (table and first four hex digits). Raw IDs stay in hover text, parentheses or JSON.

use core_sched::types::{DispatcherId, NodeId, TableId};
use std::collections::BTreeMap;

/// The port of capture `n0` in trace records (`NodeId`'s display).
const PORT_BASE: i64 = 8300;

/// The names of one run.
#[derive(Clone, Debug, Default)]
pub struct Names {
    /// Every table the upstream ever had, by ID, with its scenario name.
    pub tables: BTreeMap<TableId, String>,
    /// Captures in the cluster.
    pub nodes: u32,
}

impl Names {
    pub fn table(&self, t: TableId) -> String {
        table_label(t, &self.tables)
    }

    /// `t1 (100)`: the scenario name and the ID, for text that must keep both.
    pub fn table_with_id(&self, t: TableId) -> String {
        match self.tables.get(&t) {
            Some(n) => format!("{} ({})", n, t),
            None => self.table(t),
        }
    }

    pub fn dispatcher(&self, id: DispatcherId, t: Option<TableId>) -> String {
        dispatcher_label(id, t, &self.tables)
    }

    /// The table a scenario name (`t1`, `w2`) stands for.
    pub fn table_named(&self, name: &str) -> Option<TableId> {
        self.tables.iter().find(|(_, n)| n.as_str() == name).map(|(id, _)| *id)
    }

    /// `n2` for a capture's port (`8302`) that is in the cluster.
    pub fn node_of_port(&self, port: &str) -> Option<String> {
        let i = lane_of(port);
        (i >= 0 && (self.nodes == 0 || i < self.nodes as i64)).then(|| format!("n{}", i))
    }
}

/// `n2` for `NodeId(2)`.
pub fn node(n: NodeId) -> String {
    format!("n{}", n.0)
}

/// `t1` for a scenario table, `trigger` for the DDL span, else `table <ID>`.
pub fn table_label(t: TableId, names: &BTreeMap<TableId, String>) -> String {
    match names.get(&t) {
        Some(n) => n.clone(),
        None if t == 0 => "trigger".to_string(),
        None => format!("table {}", t),
    }
}

/// `t1/3f7b`: the table's scenario name and the ID's first four hex digits.
pub fn dispatcher_label(id: DispatcherId, t: Option<TableId>, names: &BTreeMap<TableId, String>) -> String {
    let short: String = id.to_string().chars().take(4).collect();
    match t {
        Some(t) => format!("{}/{}", table_label(t, names), short),
        None => short,
    }
}

/// A trace record's capture index from its `83xx` node name, else -1 (scenario driver,
/// checkers).
pub fn lane_of(node: &str) -> i64 {
    node.parse::<i64>().ok().filter(|p| *p >= PORT_BASE).map(|p| p - PORT_BASE).unwrap_or(-1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_scenarios() {
        let names: BTreeMap<TableId, String> = [(104, "t3".to_string())].into_iter().collect();
        assert_eq!(table_label(104, &names), "t3");
        assert_eq!(table_label(0, &names), "trigger");
        assert_eq!(table_label(7, &names), "table 7");
        assert_eq!(dispatcher_label(DispatcherId(0x3f7b_0000_0000_0001), Some(104), &names), "t3/3f7b");
        assert_eq!(lane_of("8302"), 2);
        assert_eq!(lane_of("-"), -1);
        let n = Names { tables: names, nodes: 3 };
        assert_eq!(n.node_of_port("8302").as_deref(), Some("n2"));
        assert_eq!(n.node_of_port("8303"), None);
        assert_eq!(n.table_named("t3"), Some(104));
        assert_eq!(n.table_with_id(104), "t3 (104)");
        assert_eq!(node(NodeId(1)), "n1");
    }
}
