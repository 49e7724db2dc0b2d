//! Coverage points (FoundationDB's `CODE_PROBE`, Antithesis' "sometimes"): named places
//! at the protocol's branches worth reaching. A campaign reports which it reached, so a
//! green campaign can be told apart from one that never exercised a branch.
//!
//! Cheap on the hot path: [`hit`] adds one to a per-thread counter, no string work. The
//! counters are write-only for the core (nothing in it reads them), so they cannot change
//! behaviour; the simulator runs each seed on a fresh thread, [`reset`]s before a run and
//! [`take`]s after it.

mod points;

pub use points::{Point, POINTS};
use std::cell::Cell;

/// Whether campaigns must reach a point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// The standard scenarios and swarm over CI's seed ranges must reach it.
    Must,
    /// Need not be reached, and why (reachable only with a bug switched on, only from a
    /// unit test, or not at all in the model).
    May(&'static str),
    /// Reachable, but no standard scenario reaches it yet: what it would take. Not gated;
    /// reports list these apart, as work left for scenarios and workloads.
    Gap(&'static str),
}

/// A point's declaration.
#[derive(Clone, Copy, Debug)]
pub struct Decl {
    pub point: Point,
    /// `group.name`, stable: reports and the CI gate key on it.
    pub name: &'static str,
    pub reach: Reach,
    pub description: &'static str,
}

/// How many points are declared.
pub const COUNT: usize = POINTS.len();

thread_local! {
    static HITS: [Cell<u32>; COUNT] = const { [const { Cell::new(0) }; COUNT] };
}

/// Count one pass through `p`.
#[inline]
pub fn hit(p: Point) {
    HITS.with(|h| {
        let c = &h[p as usize];
        c.set(c.get().saturating_add(1));
    });
}

/// Zero this thread's counters.
pub fn reset() {
    HITS.with(|h| h.iter().for_each(|c| c.set(0)));
}

/// This thread's counters since the last [`reset`], indexed by `Point as usize`; resets them.
pub fn take() -> Hits {
    Hits(HITS.with(|h| h.iter().map(|c| c.replace(0)).collect()))
}

/// Hit counts, one per declared point in declaration order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hits(pub Vec<u32>);

impl Hits {
    pub fn get(&self, p: Point) -> u32 {
        self.0.get(p as usize).copied().unwrap_or(0)
    }
}

/// The declaration of a point by its name.
pub fn by_name(name: &str) -> Option<&'static Decl> {
    POINTS.iter().find(|d| d.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn declarations_are_in_enum_order_with_unique_names_and_reasons() {
        let mut names = BTreeSet::new();
        for (i, d) in POINTS.iter().enumerate() {
            assert_eq!(d.point as usize, i, "{} is declared out of order", d.name);
            assert!(names.insert(d.name), "{} declared twice", d.name);
            let (group, rest) = d.name.split_once('.').unwrap_or_else(|| panic!("{}: no group", d.name));
            assert!(!group.is_empty() && !rest.is_empty(), "{}", d.name);
            assert!(!d.description.is_empty(), "{}: no description", d.name);
            if let Reach::May(why) | Reach::Gap(why) = d.reach {
                assert!(why.len() > 10, "{}: say why it need not be reached", d.name);
            }
        }
    }

    #[test]
    fn hits_are_counted_per_point_and_taken_once() {
        reset();
        let (a, b) = (Point::ALL[0], Point::ALL[COUNT - 1]);
        hit(a);
        hit(a);
        hit(b);
        let h = take();
        assert_eq!((h.get(a), h.get(b), h.0.len()), (2, 1, COUNT));
        assert_eq!(h.0.iter().sum::<u32>(), 3);
        assert_eq!(take().0.iter().sum::<u32>(), 0, "take resets");
    }

    /// A declared point that no code passes is a report line that can never change.
    #[test]
    fn every_declared_point_is_placed_in_the_core() {
        fn sources(dir: &std::path::Path, out: &mut String) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    if p.file_name().is_some_and(|n| n != "tests" && n != "coverage") {
                        sources(&p, out);
                    }
                } else if p.extension().is_some_and(|x| x == "rs") {
                    out.push_str(&std::fs::read_to_string(&p).unwrap());
                }
            }
        }
        let mut src = String::new();
        sources(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut src);
        let unplaced: Vec<String> =
            Point::ALL.iter().map(|p| format!("{:?}", p)).filter(|v| !src.contains(&format!("P::{}", v))).collect();
        assert!(unplaced.is_empty(), "declared but never hit: {:?}", unplaced);
    }
}
