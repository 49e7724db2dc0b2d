//! The reduction passes of one round: ddmin over steps, end checks, faults, tables and
//! workload ops; fewer nodes; then narrowing of numbers (durations, counts, rows,
//! probabilities and time ranges) by halving while the failure stays.

use super::faults;
use super::Shrinker;
use crate::scenario::{Scenario, Step};
use toml::Spanned;

/// Narrowings of one number at most per round.
const MAX_HALVINGS: usize = 16;

/// One round of every pass, coarse ones first.
pub(super) fn round(s: &mut Shrinker) {
    let n = s.best.steps.len();
    s.ddmin("steps", n, |b, kept| {
        let mut c = b.clone();
        c.steps = kept.iter().map(|&i| b.steps[i].clone()).collect();
        c
    });
    let atoms = faults::active(&s.best);
    let base = s.base.clone();
    s.ddmin("faults", atoms.len(), |b, kept| {
        let mut c = b.clone();
        for (i, a) in atoms.iter().enumerate() {
            if !kept.contains(&i) {
                faults::drop(&mut c, a, &base);
            }
        }
        c
    });
    let n = s.best.tables.len();
    s.ddmin("tables", n, |b, kept| {
        let mut c = b.clone();
        c.tables = kept.iter().map(|&i| b.tables[i].clone()).collect();
        c
    });
    while s.best.cluster.nodes > 1 && !s.stopped() {
        let mut c = s.best.clone();
        c.cluster.nodes -= 1;
        if !s.try_candidate(&c, &format!("nodes {}", c.cluster.nodes)) {
            break;
        }
    }
    let n = s.best.checks.len();
    s.ddmin("checks", n, |b, kept| {
        let mut c = b.clone();
        c.checks = kept.iter().map(|&i| b.checks[i].clone()).collect();
        c
    });
    workload_ops(s);
    narrow_numbers(s);
    narrow_faults(s);
}

impl Shrinker<'_> {
    /// ddmin (complements only) over `n` atoms of the best scenario: `build` makes the
    /// scenario that keeps the atoms listed (indices into the atoms at the start).
    fn ddmin(&mut self, what: &str, n: usize, build: impl Fn(&Scenario, &[usize]) -> Scenario) {
        let base = self.best.clone();
        let mut kept: Vec<usize> = (0..n).collect();
        let mut chunks = 2usize;
        while !kept.is_empty() && !self.stopped() {
            chunks = chunks.min(kept.len());
            let size = kept.len().div_ceil(chunks);
            let mut reduced = None;
            for c in 0..chunks {
                let (lo, hi) = (c * size, ((c + 1) * size).min(kept.len()));
                if lo >= hi {
                    break;
                }
                let cand: Vec<usize> = kept[..lo].iter().chain(&kept[hi..]).copied().collect();
                let label = format!("{}: drop {} of {}", what, hi - lo, kept.len());
                if self.try_candidate(&build(&base, &cand), &label) {
                    reduced = Some(cand);
                    break;
                }
            }
            match reduced {
                Some(cand) => {
                    kept = cand;
                    chunks = chunks.saturating_sub(1).max(2);
                }
                None if chunks >= kept.len() => break,
                None => chunks = (chunks * 2).min(kept.len()),
            }
        }
    }

    /// Try `narrow(best)` again and again while it gives a candidate that is kept.
    fn narrow_while(&mut self, what: &str, narrow: impl Fn(&Scenario) -> Vec<Scenario>) {
        for _ in 0..MAX_HALVINGS {
            if self.stopped() {
                return;
            }
            let cands = narrow(&self.best);
            if !cands.iter().any(|c| self.try_candidate(c, what)) {
                return;
            }
        }
    }
}

/// ddmin over the op list of each `random_workload` step.
fn workload_ops(s: &mut Shrinker) {
    for i in 0..s.best.steps.len() {
        let Step::RandomWorkload { ops, .. } = s.best.steps[i].get_ref() else { continue };
        let n = ops.len();
        s.ddmin("workload ops", n, |b, kept| {
            let mut c = b.clone();
            if let Step::RandomWorkload { ops, .. } = c.steps[i].get_mut() {
                *ops = kept.iter().map(|&k| ops[k]).collect();
            }
            c
        });
    }
}

/// Candidates that replace step `i` of `scn` by each step `f` makes of it.
fn with_step(scn: &Scenario, i: usize, f: impl Fn(&Step) -> Vec<Step>) -> Vec<Scenario> {
    let Some(step) = scn.steps.get(i) else { return vec![] };
    f(step.get_ref())
        .into_iter()
        .map(|st| {
            let mut c = scn.clone();
            c.steps[i] = Spanned::new(0..0, st);
            c
        })
        .collect()
}

/// Smaller values of `v` down to `floor`, the biggest cut first: half the way to the
/// floor, then a quarter, an eighth. The smaller cuts keep a long workload's prefix where
/// the failure happens while its tail goes.
fn cuts(v: u64, floor: u64) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    if v <= floor {
        return out;
    }
    for k in 1..=3 {
        let c = v - ((v - floor) >> k).max(1);
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// Shrink the numbers of steps and tables: workload durations and table bounds, sleeps,
/// row counts, regions.
fn narrow_numbers(s: &mut Shrinker) {
    for i in 0..s.best.steps.len() {
        s.narrow_while("workload duration", |b| {
            with_step(b, i, |st| match st {
                Step::RandomWorkload { duration_ms, interval_ms, ops, max_tables, regions } => {
                    cuts(*duration_ms, *interval_ms)
                        .into_iter()
                        .map(|d| Step::RandomWorkload {
                            duration_ms: d,
                            interval_ms: *interval_ms,
                            ops: ops.clone(),
                            max_tables: *max_tables,
                            regions: *regions,
                        })
                        .collect()
                }
                _ => vec![],
            })
        });
        s.narrow_while("workload max_tables", |b| {
            with_step(b, i, |st| match st {
                Step::RandomWorkload { duration_ms, interval_ms, ops, max_tables, regions } => {
                    cuts(*max_tables as u64, 1)
                        .into_iter()
                        .map(|m| Step::RandomWorkload {
                            duration_ms: *duration_ms,
                            interval_ms: *interval_ms,
                            ops: ops.clone(),
                            max_tables: m as usize,
                            regions: *regions,
                        })
                        .collect()
                }
                _ => vec![],
            })
        });
        s.narrow_while("sleep", |b| {
            with_step(b, i, |st| match st {
                Step::Sleep { ms } => cuts(*ms, 1).into_iter().map(|ms| Step::Sleep { ms }).collect(),
                Step::SleepRandom { min_ms, max_ms } => cuts(*max_ms, *min_ms)
                    .into_iter()
                    .map(|max_ms| Step::SleepRandom { min_ms: *min_ms, max_ms })
                    .collect(),
                _ => vec![],
            })
        });
        s.narrow_while("rows", |b| {
            with_step(b, i, |st| {
                let rows = match st {
                    Step::Insert { rows, .. }
                    | Step::Update { rows, .. }
                    | Step::Delete { rows, .. }
                    | Step::DmlLoop { rows, .. } => *rows,
                    _ => return vec![],
                };
                cuts(rows, 1)
                    .into_iter()
                    .map(|r| {
                        let mut st = st.clone();
                        if let Step::Insert { rows, .. }
                        | Step::Update { rows, .. }
                        | Step::Delete { rows, .. }
                        | Step::DmlLoop { rows, .. } = &mut st
                        {
                            *rows = r;
                        }
                        st
                    })
                    .collect()
            })
        });
    }
    for i in 0..s.best.tables.len() {
        s.narrow_while("table rows", |b| {
            let Some(t) = b.tables.get(i) else { return vec![] };
            cuts(t.rows, 0)
                .into_iter()
                .map(|r| {
                    let mut c = b.clone();
                    c.tables[i].rows = r;
                    c
                })
                .collect()
        });
        s.narrow_while("table regions", |b| {
            let Some(t) = b.tables.get(i) else { return vec![] };
            cuts(t.regions, 1)
                .into_iter()
                .map(|r| {
                    let mut c = b.clone();
                    c.tables[i].regions = r;
                    c
                })
                .collect()
        });
    }
}

/// Halve the fault probabilities and time ranges still on.
fn narrow_faults(s: &mut Shrinker) {
    for dial in faults::dials(&s.best) {
        let what = dial.name();
        s.narrow_while(&what, |b| faults::narrow(b, dial));
    }
}
