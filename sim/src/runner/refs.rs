//! Resolving the scenario's references: table names, node references (`n<i>`,
//! `$maintainer`, `[[vars]]` drawn from the seed) and values captured as `$name`.

use super::Driver;
use core_sched::types::*;
use rand::Rng;

impl Driver {
    /// The current ID of a scenario table name.
    pub(super) fn table(&self, name: &str) -> Result<TableId, String> {
        self.tables.get(name).copied().ok_or_else(|| format!("unknown table '{}'", name))
    }

    /// Resolve a node reference: `n<i>`, `$maintainer`, or a `[[vars]]` name.
    pub(super) fn node(&mut self, r: &str) -> Result<NodeId, String> {
        if let Some(i) = r.strip_prefix('n').and_then(|s| s.parse::<u32>().ok()) {
            return Ok(NodeId(i));
        }
        let Some(v) = r.strip_prefix('$') else { return Err(format!("bad node reference '{}'", r)) };
        if let Some(n) = self.vars.get(v) {
            return Ok(*n);
        }
        if v == "maintainer" {
            let m = self.w.lock().unwrap().maintainer().map(|(n, _)| n).ok_or("no maintainer yet")?;
            self.vars.insert("maintainer".into(), m);
            return Ok(m);
        }
        let def =
            self.scn.vars.iter().find(|d| d.name == v).cloned().ok_or_else(|| format!("unknown variable ${}", v))?;
        let mut except = Vec::new();
        for e in &def.except {
            except.push(self.node(e)?);
        }
        let mut g = self.w.lock().unwrap();
        let cands: Vec<NodeId> = (0..self.scn.cluster.nodes).map(NodeId).filter(|n| !except.contains(n)).collect();
        if cands.is_empty() {
            return Err(format!("no node left for ${}", v));
        }
        let n = cands[g.sim_rng.random_range(0..cands.len())];
        g.record(
            "-",
            "Scenario",
            0,
            "choose variable",
            vec![("var".into(), v.to_string()), ("node".into(), n.to_string())],
        );
        drop(g);
        self.vars.insert(v.to_string(), n);
        Ok(n)
    }

    /// A node reference or `all`.
    pub(super) fn nodes(&mut self, r: &str) -> Result<Vec<NodeId>, String> {
        if r == "all" {
            return Ok((0..self.scn.cluster.nodes).map(NodeId).collect());
        }
        Ok(vec![self.node(r)?])
    }

    /// A value reference: `"$name"` is a value captured by a `trace_seen` wait, anything
    /// else is taken literally.
    pub(super) fn value(&self, v: &str) -> Result<String, String> {
        match v.strip_prefix('$') {
            Some(name) => self.values.get(name).cloned().ok_or_else(|| {
                format!("value ${} was not captured (a trace_seen wait with capture must run first)", name)
            }),
            None => Ok(v.to_string()),
        }
    }

    /// A syncpoint ts reference (a number or `"$name"`).
    pub(super) fn ts_value(&self, v: &str) -> Result<Ts, String> {
        let s = self.value(v)?;
        s.parse::<Ts>().map_err(|_| format!("'{}' (from '{}') is not a ts", s, v))
    }
}
