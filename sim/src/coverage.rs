//! Coverage over a campaign: how often, and in how many seeds, each of the core's
//! coverage points ([`core_sched::coverage`]) was reached; the human and JSON reports of
//! `fuzz --coverage` and `coverage`; the gate on must-reach points.

use core_sched::coverage::{Decl, Hits, Reach, COUNT, POINTS};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Hit counts and seeds-reaching counts, one per declared point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tally {
    pub runs: u64,
    pub hits: Vec<u64>,
    /// Seeds in which the point was hit at least once.
    pub seeds: Vec<u64>,
}

impl Default for Tally {
    fn default() -> Self {
        Tally { runs: 0, hits: vec![0; COUNT], seeds: vec![0; COUNT] }
    }
}

impl Tally {
    /// Add one run's counters.
    pub fn add(&mut self, h: &Hits) {
        self.runs += 1;
        for (i, c) in h.0.iter().enumerate().take(COUNT) {
            if *c > 0 {
                self.hits[i] += u64::from(*c);
                self.seeds[i] += 1;
            }
        }
    }

    pub fn merge(&mut self, o: &Tally) {
        self.runs += o.runs;
        for i in 0..COUNT {
            self.hits[i] += o.hits[i];
            self.seeds[i] += o.seeds[i];
        }
    }

    pub fn reached(&self) -> usize {
        self.hits.iter().filter(|h| **h > 0).count()
    }

    /// Points never reached, in declaration order.
    pub fn never_reached(&self) -> Vec<&'static Decl> {
        POINTS.iter().filter(|d| self.hits[d.point as usize] == 0).collect()
    }

    /// Must-reach points never reached: what the gate refuses.
    pub fn must_never_reached(&self) -> Vec<&'static Decl> {
        self.never_reached().into_iter().filter(|d| d.reach == Reach::Must).collect()
    }

    pub fn percent(&self) -> f64 {
        100.0 * self.reached() as f64 / COUNT.max(1) as f64
    }

    /// Points a fixed-core campaign can reach (Must and Gap: not the May ones, which need
    /// a bug switch, a candidate fix or a unit test), and how many of them it reached.
    /// The share of all points can never pass `reachable / COUNT`; this one can reach 100%.
    pub fn reachable(&self) -> (usize, usize) {
        let open = POINTS.iter().filter(|d| !matches!(d.reach, Reach::May(_)));
        open.fold((0, 0), |(r, n), d| (r + usize::from(self.hits[d.point as usize] > 0), n + 1))
    }
}

fn pct(part: usize, whole: usize) -> f64 {
    100.0 * part as f64 / whole.max(1) as f64
}

/// One point in the JSON report.
#[derive(Serialize, Debug)]
pub struct PointJson {
    pub hits: u64,
    pub seeds: u64,
    /// `must`, `may` or `gap` (see [`Reach`]).
    pub reach: &'static str,
}

/// The `coverage` object of `fuzz --coverage --json` and of `coverage --json`.
#[derive(Serialize, Debug)]
pub struct CoverageJson {
    pub runs: u64,
    pub total: usize,
    pub reached: usize,
    pub percent: f64,
    /// Points a fixed-core campaign can reach (must and gap), and the share of them reached.
    pub reachable_total: usize,
    pub reachable_reached: usize,
    pub reachable_percent: f64,
    /// Every point by name.
    pub points: BTreeMap<&'static str, PointJson>,
    pub never_reached: Vec<&'static str>,
    pub must_never_reached: Vec<&'static str>,
}

pub fn to_json(t: &Tally) -> CoverageJson {
    let (reachable_reached, reachable_total) = t.reachable();
    CoverageJson {
        reachable_total,
        reachable_reached,
        reachable_percent: (pct(reachable_reached, reachable_total) * 10.0).round() / 10.0,
        runs: t.runs,
        total: COUNT,
        reached: t.reached(),
        percent: (t.percent() * 10.0).round() / 10.0,
        points: POINTS
            .iter()
            .map(|d| {
                let i = d.point as usize;
                let reach = match d.reach {
                    Reach::Must => "must",
                    Reach::May(_) => "may",
                    Reach::Gap(_) => "gap",
                };
                (d.name, PointJson { hits: t.hits[i], seeds: t.seeds[i], reach })
            })
            .collect(),
        never_reached: t.never_reached().iter().map(|d| d.name).collect(),
        must_never_reached: t.must_never_reached().iter().map(|d| d.name).collect(),
    }
}

/// The human report: the total, each group's share, then every point never reached
/// with its description (and, for one that need not be reached, why).
pub fn format_human(t: &Tally) -> String {
    let mut o = String::new();
    let _ =
        writeln!(o, "coverage: {} of {} points reached ({:.1}%) over {} runs", t.reached(), COUNT, t.percent(), t.runs);
    let (rr, rn) = t.reachable();
    let _ = writeln!(
        o,
        "  of the {} points the fixed core can reach (must and gap; the {} may points need a bug switch, a candidate fix or a unit test): {} ({:.1}%)",
        rn,
        COUNT - rn,
        rr,
        pct(rr, rn)
    );
    let mut groups: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for d in POINTS {
        let g = groups.entry(group_of(d.name)).or_default();
        g.1 += 1;
        if t.hits[d.point as usize] > 0 {
            g.0 += 1;
        }
    }
    let line: Vec<String> = groups.iter().map(|(g, (r, n))| format!("{} {}/{}", g, r, n)).collect();
    let _ = writeln!(o, "  by group: {}", line.join(", "));
    let never = t.never_reached();
    let must: Vec<_> = never.iter().filter(|d| d.reach == Reach::Must).collect();
    if !must.is_empty() {
        let _ = writeln!(o, "  must-reach points never reached ({}):", must.len());
        for d in must {
            let _ = writeln!(o, "    {:<48} {}", d.name, d.description);
        }
    }
    let gaps: Vec<_> =
        never.iter().filter_map(|d| if let Reach::Gap(w) = d.reach { Some((d, w)) } else { None }).collect();
    if !gaps.is_empty() {
        let _ = writeln!(o, "  known gaps, no scenario reaches them yet ({}):", gaps.len());
        for (d, w) in gaps {
            let _ = writeln!(o, "    {:<48} {} (needs: {})", d.name, d.description, w);
        }
    }
    let may: Vec<_> =
        never.iter().filter_map(|d| if let Reach::May(w) = d.reach { Some((d, w)) } else { None }).collect();
    if !may.is_empty() {
        let _ = writeln!(o, "  other points never reached ({}):", may.len());
        for (d, w) in may {
            let _ = writeln!(o, "    {:<48} {} (need not: {})", d.name, d.description, w);
        }
    }
    let reached_not_must: Vec<_> =
        POINTS.iter().filter(|d| d.reach != Reach::Must && t.hits[d.point as usize] > 0).map(|d| d.name).collect();
    if !reached_not_must.is_empty() {
        let _ = writeln!(
            o,
            "  reached but not must-reach ({}; candidates for Must): {}",
            reached_not_must.len(),
            reached_not_must.join(", ")
        );
    }
    o
}

fn group_of(name: &str) -> &str {
    name.split_once('.').map(|(g, _)| g).unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use core_sched::coverage::Point;

    #[test]
    fn tally_counts_hits_and_seeds_and_lists_what_is_missing() {
        let mut one = vec![0u32; COUNT];
        one[0] = 3;
        let mut t = Tally::default();
        t.add(&Hits(one.clone()));
        t.add(&Hits(one));
        t.add(&Hits(vec![0; COUNT]));
        assert_eq!((t.runs, t.hits[0], t.seeds[0], t.reached()), (3, 6, 2, 1));
        assert_eq!(t.never_reached().len(), COUNT - 1);
        assert!(t.never_reached().iter().all(|d| d.point != Point::ALL[0]));
        let j = to_json(&t);
        assert_eq!(j.points[POINTS[0].name].hits, 6);
        assert_eq!(j.never_reached.len(), COUNT - 1);
        let mut u = Tally::default();
        u.merge(&t);
        u.merge(&t);
        assert_eq!((u.runs, u.hits[0], u.seeds[0]), (6, 12, 4));
    }

    #[test]
    fn reachable_share_leaves_out_the_may_points_only() {
        let may = POINTS.iter().filter(|d| matches!(d.reach, Reach::May(_))).count();
        let (must_i, may_i) = (
            POINTS.iter().position(|d| d.reach == Reach::Must).unwrap(),
            POINTS.iter().position(|d| matches!(d.reach, Reach::May(_))).unwrap(),
        );
        let mut h = vec![0u32; COUNT];
        h[POINTS[must_i].point as usize] = 1;
        h[POINTS[may_i].point as usize] = 1;
        let mut t = Tally::default();
        t.add(&Hits(h));
        // The may point counts in the share of all points, not in the reachable one.
        assert_eq!(t.reached(), 2);
        assert_eq!(t.reachable(), (1, COUNT - may));
        let j = to_json(&t);
        assert_eq!((j.reachable_reached, j.reachable_total), (1, COUNT - may));
        assert!(format_human(&t).contains(&format!("of the {} points the fixed core can reach", COUNT - may)));
    }
}
