//! Resolving the scenario's references: table names, node references (`n<i>`,
//! `$maintainer`, `[[vars]]` drawn from the seed) and values captured as `$name`.

use super::{Driver, StepError};
use core_sched::types::*;
use rand::Rng;

impl Driver {
    /// The current ID of a scenario table name.
    pub(super) fn table(&self, name: &str) -> Result<TableId, StepError> {
        self.tables.get(name).copied().ok_or_else(|| StepError::UnknownTable(name.to_string()))
    }

    /// Resolve a node reference: `n<i>`, `$maintainer`, or a `[[vars]]` name.
    pub(super) fn node(&mut self, r: &str) -> Result<NodeId, StepError> {
        if let Some(i) = r.strip_prefix('n').and_then(|s| s.parse::<u32>().ok()) {
            return Ok(NodeId(i));
        }
        let Some(v) = r.strip_prefix('$') else { return Err(StepError::BadNodeRef(r.to_string())) };
        if let Some(n) = self.vars.get(v) {
            return Ok(*n);
        }
        if v == "maintainer" {
            let m = self.w.lock().unwrap().maintainer().map(|(n, _)| n).ok_or(StepError::NoMaintainer)?;
            self.vars.insert("maintainer".into(), m);
            return Ok(m);
        }
        let def = self
            .scn
            .vars
            .iter()
            .find(|d| d.name == v)
            .cloned()
            .ok_or_else(|| StepError::UnknownVariable(v.to_string()))?;
        let mut except = Vec::new();
        for e in &def.except {
            except.push(self.node(e)?);
        }
        let mut g = self.w.lock().unwrap();
        let cands: Vec<NodeId> = (0..self.scn.cluster.nodes).map(NodeId).filter(|n| !except.contains(n)).collect();
        if cands.is_empty() {
            return Err(StepError::NoNodeLeft(v.to_string()));
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
    pub(super) fn nodes(&mut self, r: &str) -> Result<Vec<NodeId>, StepError> {
        if r == "all" {
            return Ok((0..self.scn.cluster.nodes).map(NodeId).collect());
        }
        Ok(vec![self.node(r)?])
    }

    /// A value reference: `"$name"` is a value captured by a `trace_seen` wait, anything
    /// else is taken literally.
    pub(super) fn value(&self, v: &str) -> Result<String, StepError> {
        match v.strip_prefix('$') {
            Some(name) => self.values.get(name).cloned().ok_or_else(|| StepError::NotCaptured(name.to_string())),
            None => Ok(v.to_string()),
        }
    }

    /// A syncpoint ts reference (a number or `"$name"`).
    pub(super) fn ts_value(&self, v: &str) -> Result<Ts, StepError> {
        let s = self.value(v)?;
        s.parse::<Ts>().map_err(|_| StepError::NotATs { value: s.clone(), reference: v.to_string() })
    }
}
