//! A swarm plan recorded in a seed file: checked when the file is read, completed with
//! the families it does not name (off: they joined the swarm after the file was written)
//! and compared with a seed's current draw (`fuzz --known`).

use super::swarm::SwarmPlan;
use crate::scenario::SWARM_FAMILIES;

impl SwarmPlan {
    /// Every family of the swarm switched: those the plan does not name are off. A family
    /// that joined the swarm after the plan was recorded draws nothing and adds no
    /// workload ops when off, so the completed plan is the same run.
    pub fn completed(&self) -> SwarmPlan {
        let mut p = self.clone();
        for f in SWARM_FAMILIES {
            p.families.entry(f.to_string()).or_insert(false);
        }
        p
    }

    /// Whether two plans are the same run: equal once both are completed.
    pub fn same_run(&self, other: &SwarmPlan) -> bool {
        self.completed() == other.completed()
    }

    /// Whether two plans are the same run of `scn`: equal once both are completed and
    /// every family that does nothing in `scn` is off in both. Every family either draws
    /// an intensity or gates workload ops, so one without an intensity whose ops `scn`'s
    /// workload never draws (e.g. the swarm's later families in `swarm_slow_bootstrap`)
    /// changes nothing there.
    pub fn same_run_in(&self, other: &SwarmPlan, scn: &crate::scenario::Scenario) -> bool {
        let (mut a, mut b) = (self.completed(), other.completed());
        let with_intensity: Vec<&str> = a.intensities().iter().map(|(_, f, _)| *f).collect();
        let gated: std::collections::BTreeSet<&str> = scn
            .steps
            .iter()
            .filter_map(|s| match s.get_ref() {
                crate::scenario::Step::RandomWorkload { ops, .. } => Some(ops.clone()),
                _ => None,
            })
            .flatten()
            .filter_map(|op| super::workload_ops::draw_family(op).or_else(|| super::workload_ops::skip_family(op)))
            .collect();
        for f in SWARM_FAMILIES {
            if !with_intensity.contains(f) && !gated.contains(f) {
                a.families.insert(f.to_string(), false);
                b.families.insert(f.to_string(), false);
            }
        }
        a == b
    }

    /// Each intensity: its field name, the family that draws it, whether it is set.
    fn intensities(&self) -> [(&'static str, &'static str, bool); 14] {
        [
            ("loss", "net.loss", self.loss.is_some()),
            ("duplicate", "net.duplicate", self.duplicate.is_some()),
            ("delay_spike", "net.delay_spike", self.delay_spike.is_some()),
            ("storage_latency_ms", "storage.slow", self.storage_latency_ms.is_some()),
            ("sync_point_interval_ms", "sync_point", self.sync_point_interval_ms.is_some()),
            ("collector_lag", "collector.lag", self.collector_lag.is_some()),
            ("stream_lag", "stream.lag", self.stream_lag.is_some()),
            ("first_event_ms", "first_event.slow", self.first_event_ms.is_some()),
            ("stream_reconnect", "stream.reconnect", self.stream_reconnect.is_some()),
            ("storage_error", "storage.error", self.storage_error.is_some()),
            ("small_batch", "scheduler.small_batch", self.small_batch.is_some()),
            ("split_check", "split.check", self.split_check.is_some()),
            ("slow_bootstrap", "slow_bootstrap", self.slow_bootstrap.is_some()),
            ("split_settle", "split.settle", self.split_settle.is_some()),
        ]
    }

    /// A plan the swarm could have drawn: known families, an intensity exactly for each
    /// family that is on and has one, and values the knobs accept (pinning must give the
    /// run the draw gives). The message names the family or field.
    pub fn check(&self) -> Result<(), String> {
        if let Some(bad) = self.families.keys().find(|k| !SWARM_FAMILIES.contains(&k.as_str())) {
            return Err(format!("unknown family '{}'; valid families: {}", bad, SWARM_FAMILIES.join(", ")));
        }
        for (field, family, set) in self.intensities() {
            let on = self.families.get(family) == Some(&true);
            if set && !on {
                return Err(format!("{} is set but family {} is not on", field, family));
            }
            if on && !set {
                return Err(format!("family {} is on but {} is missing", family, field));
            }
        }
        let prob = |field: &str, p: Option<f64>| match p {
            Some(v) if !(0.0..=1.0).contains(&v) => {
                Err(format!("{} must be a probability between 0 and 1, got {}", field, v))
            }
            _ => Ok(()),
        };
        prob("loss", self.loss)?;
        prob("duplicate", self.duplicate)?;
        prob("delay_spike", self.delay_spike)?;
        prob("collector_lag", self.collector_lag)?;
        prob("stream_lag", self.stream_lag)?;
        prob("stream_reconnect", self.stream_reconnect.map(|(p, _)| p))?;
        prob("storage_error", self.storage_error.map(|(p, _)| p))?;
        let range = |field: &str, r: Option<[u64; 2]>| match r {
            Some([lo, hi]) if lo > hi => {
                Err(format!("{} must be [min, max] with min <= max, got [{}, {}]", field, lo, hi))
            }
            _ => Ok(()),
        };
        range("storage_latency_ms", self.storage_latency_ms)?;
        range("first_event_ms", self.first_event_ms)?;
        range("stream_reconnect", self.stream_reconnect.map(|(_, r)| r))?;
        if self.sync_point_interval_ms == Some(0) {
            return Err("sync_point_interval_ms must be positive, got 0".into());
        }
        if let Some((_, max)) = self.storage_error {
            if max == 0 {
                return Err("storage_error: at most 0 failures; need at least 1".into());
            }
        }
        if let Some(b) = self.small_batch {
            if b.contains(&0) {
                return Err(format!("small_batch sizes must be at least 1, got {:?}", b));
            }
        }
        // The refresh interval is pinned as a "Ns" duration: whole seconds, as drawn.
        if let Some([balance, refresh, score]) = self.split_check {
            if balance == 0 || refresh == 0 || refresh % 1000 != 0 || score == 0 || score > u64::from(u32::MAX) {
                return Err(format!(
                    "split_check must be [balance ms > 0, refresh ms (a positive multiple of 1000), score threshold 1..={}], got [{}, {}, {}]",
                    u32::MAX,
                    balance,
                    refresh,
                    score
                ));
            }
        }
        if let Some([balance, refresh]) = self.split_settle {
            if balance == 0 || refresh == 0 || refresh % 1000 != 0 {
                return Err(format!(
                    "split_settle must be [balance ms > 0, refresh ms (a positive multiple of 1000)], got [{}, {}]",
                    balance, refresh
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::swarm::plan;
    use super::*;

    #[test]
    fn every_draw_passes_the_check_and_survives_json() {
        for seed in 0..300 {
            let p = plan(seed);
            p.check().unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            let back: SwarmPlan = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
            // Exact: a probability off by one ulp would be another run.
            assert_eq!(back, p, "seed {seed}");
        }
    }

    #[test]
    fn missing_families_are_off() {
        let mut p = plan(5);
        let off: Vec<String> = p.families.iter().filter(|(_, on)| !**on).map(|(f, _)| f.clone()).collect();
        assert!(!off.is_empty());
        for f in &off {
            p.families.remove(f);
        }
        assert!(p.same_run(&plan(5)));
        assert_eq!(p.completed(), plan(5));
        assert!(!p.same_run(&plan(6)));
    }

    #[test]
    fn a_family_that_does_nothing_in_the_scenario_is_not_another_run() {
        let slow = crate::scenario::load::resolve("swarm_slow_bootstrap").unwrap().scenario;
        let swarm = crate::scenario::load::resolve("swarm").unwrap().scenario;
        let mut old = plan(5);
        // `ddl.burst` gates ops that swarm_slow_bootstrap's workload never draws.
        old.families.insert("ddl.burst".into(), !old.families["ddl.burst"]);
        assert!(old.same_run_in(&plan(5), &slow));
        assert!(!old.same_run_in(&plan(5), &swarm));
        // A family with an intensity always counts.
        let mut loss = plan(5);
        let on = loss.families["net.loss"];
        loss.families.insert("net.loss".into(), !on);
        loss.loss = if on { None } else { Some(0.05) };
        assert!(!loss.same_run_in(&plan(5), &slow));
    }

    /// The swarm's first families, whose ops were in the swarm's op list from the start.
    const FIRST: &[&str] = &[
        "net.loss",
        "net.duplicate",
        "net.delay_spike",
        "storage.slow",
        "kill_restart",
        "move_maintainer",
        "move_table",
        "split_merge",
        "partition",
    ];

    /// Missing from a recorded plan means off, which is the same run only if a family that
    /// is off changes nothing a run had before the family existed: no knob (its intensity
    /// is not drawn) and no op in the workload's draw (its ops leave the op list, instead
    /// of being drawn and skipped as the first families' ops are).
    #[test]
    fn a_family_that_is_off_changes_nothing() {
        use super::super::workload_ops::{draw_family, skip_family};
        use crate::scenario::{Step, WorkloadOp};
        let swarm = crate::scenario::load::resolve("swarm").unwrap().scenario;
        let ops: Vec<WorkloadOp> = swarm
            .steps
            .iter()
            .filter_map(|s| match s.get_ref() {
                Step::RandomWorkload { ops, .. } => Some(ops.clone()),
                _ => None,
            })
            .flatten()
            .collect();
        assert!(ops.len() > 20);
        for op in &ops {
            if let Some(f) = skip_family(*op) {
                assert!(
                    FIRST.contains(&f) || draw_family(*op) == Some(f),
                    "{:?} of {} is drawn and skipped when off",
                    op,
                    f
                );
            }
        }
        for family in SWARM_FAMILIES {
            let p = (0..200).map(plan).find(|p| !p.families[*family]).unwrap();
            let mut pinned = swarm.clone();
            p.pin_intensity(&mut pinned, family);
            assert_eq!(
                toml::to_string(&pinned).unwrap(),
                toml::to_string(&swarm).unwrap(),
                "{} off sets a knob",
                family
            );
            let owns = |op: &&WorkloadOp| draw_family(**op) == Some(*family) || skip_family(**op) == Some(*family);
            let has_intensity = p.intensities().iter().any(|(_, f, _)| f == family);
            // A family without an intensity may still switch a knob on (redo: the
            // consistent level).
            let on = (0..200).map(plan).find(|p| p.families[*family]).unwrap();
            let mut switched = swarm.clone();
            on.pin_intensity(&mut switched, family);
            let sets_a_knob = toml::to_string(&switched).unwrap() != toml::to_string(&swarm).unwrap();
            assert!(
                has_intensity || sets_a_knob || ops.iter().any(|op| owns(&op)),
                "{} has neither an intensity, a knob nor workload ops: what does off switch off?",
                family
            );
        }
    }

    #[test]
    fn bad_plans_are_named() {
        let err = |f: &dyn Fn(&mut SwarmPlan)| {
            let mut p = plan(5);
            f(&mut p);
            p.check().unwrap_err()
        };
        assert!(err(&|p| {
            p.families.insert("net.los".into(), true);
        })
        .contains("unknown family 'net.los'; valid families: net.loss, "));
        let seed = (0..100).find(|s| plan(*s).families["net.loss"]).unwrap();
        let mut p = plan(seed);
        p.loss = Some(1.5);
        assert!(p.check().unwrap_err().contains("loss must be a probability between 0 and 1, got 1.5"));
        p.loss = None;
        assert_eq!(p.check().unwrap_err(), "family net.loss is on but loss is missing");
        p.families.insert("net.loss".into(), false);
        p.check().unwrap();
        p.duplicate = p.duplicate.or(Some(0.02));
        p.families.remove("net.duplicate");
        assert_eq!(p.check().unwrap_err(), "duplicate is set but family net.duplicate is not on");
    }
}
