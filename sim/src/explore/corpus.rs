//! The corpus of `fuzz --explore`: coverage features of the runs so far, which runs are
//! kept as parents, and how a parent is picked (weighted to the rarest features).
//!
//! A feature is a coverage point with its hit count bucketed by powers of two (AFL's
//! idea): passing a branch once and passing it a hundred times are different behaviour.

use core_sched::coverage::{Hits, COUNT};
use rand::Rng;
use std::sync::Arc;

/// Buckets of a point's hit count: 1, 2-7, 8-63, 64 and more (finer buckets make
/// nearly every run rare in some bucket).
const BUCKETS: usize = 4;

fn bucket(c: u32) -> usize {
    match c {
        0..=1 => 0,
        2..=7 => 1,
        8..=63 => 2,
        _ => 3,
    }
}

/// A run is kept when one of its features was seen in fewer than this many earlier runs.
pub const RARE_RUNS: u64 = 3;

/// Parents kept at most; a full corpus drops its least rare entry for a new one.
pub const CAP: usize = 64;

/// The features of one run, sorted and distinct.
pub fn features(h: &Hits) -> Vec<u32> {
    h.0.iter()
        .enumerate()
        .take(COUNT)
        .filter(|(_, c)| **c > 0)
        .map(|(i, c)| (i * BUCKETS + bucket(*c)) as u32)
        .collect()
}

/// A kept run: what it ran (the concrete scenario and seed) and its features.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Index of the run in the campaign.
    pub run: u64,
    pub seed: u64,
    pub scenario: Arc<crate::scenario::Scenario>,
    pub features: Vec<u32>,
}

/// Feature counts over every run, and the kept entries.
pub struct Corpus {
    /// Runs in which each feature was seen.
    seen: Vec<u64>,
    pub entries: Vec<Entry>,
    /// Entries ever admitted (evicted ones included).
    pub admitted: u64,
}

impl Default for Corpus {
    fn default() -> Self {
        Corpus { seen: vec![0; COUNT * BUCKETS], entries: Vec::new(), admitted: 0 }
    }
}

/// Rarity weight of a feature seen in `n` runs: 1/n², so a feature seen once outweighs
/// a hundred seen in every run (fixed point: deterministic and cheap).
fn rarity(n: u64) -> u64 {
    (1u64 << 30) / n.max(1).saturating_mul(n.max(1))
}

impl Corpus {
    /// Distinct features seen in some run.
    pub fn features_seen(&self) -> usize {
        self.seen.iter().filter(|n| **n > 0).count()
    }

    /// Count one run's features; keep it if one of them is new or rare. Returns whether
    /// it was kept.
    pub fn observe(&mut self, entry: Entry) -> bool {
        let keep = entry.features.iter().any(|f| self.seen[*f as usize] < RARE_RUNS);
        for f in &entry.features {
            self.seen[*f as usize] += 1;
        }
        if keep {
            if self.entries.len() >= CAP {
                self.evict();
            }
            self.entries.push(entry);
            self.admitted += 1;
        }
        keep
    }

    /// How much an entry is worth as a parent, by the rarity of its features now.
    fn score(&self, e: &Entry) -> u64 {
        e.features.iter().map(|f| rarity(self.seen[*f as usize])).sum::<u64>().max(1)
    }

    /// Drop the entry with the lowest score (the oldest of equals).
    fn evict(&mut self) {
        let worst = (0..self.entries.len()).min_by_key(|i| (self.score(&self.entries[*i]), *i));
        if let Some(i) = worst {
            self.entries.remove(i);
        }
    }

    /// Pick a parent, each entry with probability proportional to its score.
    pub fn pick(&self, rng: &mut impl Rng) -> Option<&Entry> {
        let scores: Vec<u64> = self.entries.iter().map(|e| self.score(e)).collect();
        let total: u64 = scores.iter().sum();
        if total == 0 {
            return None;
        }
        let mut x = rng.random_range(0..total);
        for (e, s) in self.entries.iter().zip(&scores) {
            if x < *s {
                return Some(e);
            }
            x -= s;
        }
        self.entries.last()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn entry(run: u64, points: &[(usize, u32)]) -> Entry {
        let mut h = vec![0u32; COUNT];
        for (p, c) in points {
            h[*p] = *c;
        }
        let scenario = Arc::new(toml::from_str("description = 'x'").unwrap());
        Entry { run, seed: run, scenario, features: features(&Hits(h)) }
    }

    #[test]
    fn features_bucket_hit_counts() {
        let e = entry(0, &[(0, 1), (1, 3), (2, 1000), (3, 8)]);
        assert_eq!(e.features, vec![0, (BUCKETS + 1) as u32, (2 * BUCKETS + 3) as u32, (3 * BUCKETS + 2) as u32]);
    }

    #[test]
    fn keeps_new_and_rare_runs_only() {
        let mut c = Corpus::default();
        assert!(c.observe(entry(0, &[(0, 1)])), "a new point is kept");
        assert!(c.observe(entry(1, &[(0, 1)])), "seen once: still rare");
        assert!(c.observe(entry(2, &[(0, 1)])));
        assert!(!c.observe(entry(3, &[(0, 1)])), "seen in RARE_RUNS runs: common");
        assert!(c.observe(entry(4, &[(0, 1), (5, 1)])), "a new point among common ones");
        assert!(c.observe(entry(5, &[(0, 4)])), "a new hit-count bucket");
        assert_eq!(c.entries.len(), 5);
        assert_eq!(c.features_seen(), 3);
    }

    #[test]
    fn cap_evicts_the_least_rare_and_picks_favour_rare() {
        let mut c = Corpus::default();
        for i in 0..(CAP as u64 + 10) {
            // Point 0 in every run, point 1 + i in run i alone.
            c.observe(entry(i, &[(0, 1), (1 + (i as usize % (COUNT - 1)), 1)]));
        }
        assert_eq!(c.entries.len(), CAP);
        assert_eq!(c.admitted, CAP as u64 + 10);
        // A run whose only point is common has the lowest score and goes first.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut rare = Corpus::default();
        for i in 0..20 {
            rare.observe(entry(i, &[(0, 1)]));
        }
        rare.entries.truncate(1);
        rare.observe(entry(99, &[(0, 1), (7, 1)]));
        let picks = (0..200).filter(|_| rare.pick(&mut rng).unwrap().run == 99).count();
        assert!(picks > 150, "the entry with a rare point is picked most: {picks}");
    }
}
