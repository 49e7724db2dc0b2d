//! `fuzz --explore`: coverage-guided search over fault plans.
//!
//! A candidate is a concrete scenario (a swarm scenario with the plan of a seed pinned,
//! `SwarmPlan::pin`, or a scenario without swarm as it is) and a run seed. The first
//! batch runs plain seeds of the range, exactly as `fuzz` runs them. Every run's coverage
//! features ([`corpus`]) are counted; a run that reached a feature seen in fewer than
//! [`corpus::RARE_RUNS`] runs joins the corpus (at most [`corpus::CAP`] entries). Later
//! candidates are mostly mutants of a corpus entry picked with weight to its rarest
//! features ([`mutate`]: a new run seed, a family switched, a probability scaled, a time
//! range or a fault window moved), with a share of plain seeds that continue the range.
//!
//! Every choice comes from one random stream seeded by the campaign seed, on the calling
//! thread: candidates are generated a batch of [`BATCH`] at a time from the corpus as it
//! stood after the previous batch, run on `jobs` workers, and merged in candidate order.
//! So the same campaign seed and budget give the same runs and the same result whatever
//! `--jobs` is.

pub mod corpus;
pub mod measure;
pub mod mutate;
pub mod output;

use crate::result::{Outcome, RunResult};
use crate::runner::{run_on_fresh_thread, RunOptions};
use crate::scenario::{load, Scenario};
use crate::wallclock::Stopwatch;
use core_sched::bugs::Bugs;
use corpus::{Corpus, Entry};
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Candidates generated and run together. Fixed (not `--jobs`): the corpus a candidate
/// is drawn from must not depend on how many workers ran the batch before.
pub const BATCH: usize = 8;

/// Plain seeds first, before any mutant (a corpus to start from).
pub const INITIAL_PLAIN: u64 = BATCH as u64;

/// After the first batch, one candidate in this many is a plain seed (the range goes on,
/// so exploring never stops covering fresh interleavings).
const PLAIN_ONE_IN: u32 = 2;

/// Mutation kinds drawn for one mutant at most (a kind that does not apply is redrawn).
const MUTATION_DRAWS: usize = 16;

/// Where a candidate came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A plain seed of the scenario (the same run as `fuzz` of that seed).
    Plain,
    /// A mutant of the run numbered `parent`, and what was changed.
    Mutant { parent: u64, changes: Vec<String> },
}

/// One candidate to run.
#[derive(Clone, Debug)]
struct Candidate {
    seed: u64,
    origin: Origin,
    /// The mutant's concrete scenario (`None`: the base scenario).
    scenario: Option<Arc<Scenario>>,
    /// Its text as the scenario file format writes it (what `--save` writes).
    text: Option<String>,
}

/// What a campaign keeps of one run.
#[derive(Clone, Debug)]
pub struct RunRecord {
    /// 1-based position in the campaign's sequence.
    pub run: u64,
    pub seed: u64,
    pub origin: Origin,
    pub outcome: Outcome,
    pub invariants: Vec<String>,
    pub trace_hash: String,
    pub sim_time_ms: u64,
    pub crash: Option<String>,
    /// The campaign's detection predicate held (for `fuzz --explore`: the run failed).
    pub detected: bool,
    /// Joined the corpus.
    pub kept: bool,
    /// A failing mutant's scenario text (dropped for passing runs: memory stays bounded).
    pub text: Option<String>,
}

impl RunRecord {
    pub fn failed(&self) -> bool {
        self.outcome != Outcome::Pass
    }
    pub fn invariant(&self) -> Option<&str> {
        self.invariants.first().map(|s| s.as_str())
    }
}

/// A campaign.
pub struct Explore<'a> {
    /// The scenario as loaded.
    pub scenario: &'a Scenario,
    pub bugs: Bugs,
    /// The first plain seed; plain seeds go on from it in order.
    pub first_seed: u64,
    /// Runs at most.
    pub budget: u64,
    pub campaign_seed: u64,
    pub jobs: usize,
    /// `false`: plain seeds only (the baseline `explore` is measured against).
    pub mutate: bool,
    /// Stop once this many runs were detected (later runs of that batch are discarded).
    pub stop_after: Option<usize>,
    /// Which runs count as detections.
    pub detect: &'a (dyn Fn(&RunResult) -> bool + Sync),
}

pub struct ExploreResult {
    pub runs: Vec<RunRecord>,
    pub corpus_size: usize,
    pub admitted: u64,
    pub features_seen: usize,
    pub coverage: crate::coverage::Tally,
    pub stopped_early: bool,
    pub interrupted: bool,
    pub wall: Duration,
    /// A hash over every run's seed, scenario, outcome and trace hash, in order: equal
    /// for two campaigns that ran the same sequence.
    pub sequence_hash: String,
}

impl ExploreResult {
    pub fn first_detection(&self) -> Option<&RunRecord> {
        self.runs.iter().find(|r| r.detected)
    }
}

/// FNV-1a, for the sequence hash (stable across platforms and releases).
fn fnv(h: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(h, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// The state between batches.
struct Search<'a> {
    c: &'a Explore<'a>,
    rng: rand_chacha::ChaCha8Rng,
    corpus: Corpus,
    next_plain: u64,
    /// The base scenario's name, for the file name the format checks candidates under.
    path: std::path::PathBuf,
}

impl Search<'_> {
    /// The concrete scenario of a plain seed (a swarm plan pinned), as a parent.
    fn concrete(&self, seed: u64) -> Scenario {
        let mut s = self.c.scenario.clone();
        if s.faults.swarm {
            crate::runner::swarm::plan(seed).pin(&mut s);
        }
        s
    }

    fn plain(&mut self) -> Candidate {
        let seed = self.next_plain;
        self.next_plain = self.next_plain.wrapping_add(1);
        Candidate { seed, origin: Origin::Plain, scenario: None, text: None }
    }

    fn mutant(&mut self) -> Option<Candidate> {
        let parent = self.corpus.pick(&mut self.rng)?.clone();
        let changes_wanted = if self.rng.random_ratio(1, 4) { 2 } else { 1 };
        let mut scn = (*parent.scenario).clone();
        let mut seed = parent.seed;
        let mut changes = Vec::new();
        for _ in 0..MUTATION_DRAWS {
            if let Some(c) = mutate::mutate(&mut scn, &mut seed, self.c.scenario, &mut self.rng) {
                changes.push(c);
                if changes.len() == changes_wanted {
                    break;
                }
            }
        }
        let normalized = normalize(&scn, &self.path);
        let (scn, text) = match (changes.is_empty(), normalized) {
            (false, Some(n)) => n,
            // Nothing applied or the edit does not validate: the parent's plan, a new seed.
            _ => {
                seed = self.rng.random();
                changes = vec![format!("seed {}", seed)];
                normalize(&parent.scenario, &self.path)?
            }
        };
        Some(Candidate {
            seed,
            origin: Origin::Mutant { parent: parent.run, changes },
            scenario: Some(Arc::new(scn)),
            text: Some(text),
        })
    }

    fn batch(&mut self, done: u64) -> Vec<Candidate> {
        let n = (self.c.budget - done).min(BATCH as u64);
        (0..n)
            .map(|i| {
                let plain = !self.c.mutate
                    || done + i < INITIAL_PLAIN
                    || self.corpus.entries.is_empty()
                    || self.rng.random_ratio(1, PLAIN_ONE_IN);
                if plain {
                    self.plain()
                } else {
                    self.mutant().unwrap_or_else(|| self.plain())
                }
            })
            .collect()
    }
}

/// `scn` as its file would load: serialized, parsed and validated (`None` if rejected).
pub fn normalize(scn: &Scenario, path: &Path) -> Option<(Scenario, String)> {
    let text = toml::to_string(scn).ok()?;
    let loaded = load::parse(path, text.clone()).ok()?;
    load::validate(&loaded).ok()?;
    Some((loaded.scenario, text))
}

/// Run one batch on `jobs` workers; results in candidate order (`None`: not run, after
/// an interrupt).
fn run_batch(c: &Explore, batch: &[Candidate]) -> Vec<Option<RunResult>> {
    let opts = RunOptions::default();
    let next = AtomicUsize::new(0);
    let mut out: Vec<Option<RunResult>> = (0..batch.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<(usize, RunResult)>();
        for _ in 0..c.jobs.clamp(1, batch.len().max(1)) {
            let (tx, next, opts) = (tx.clone(), &next, &opts);
            scope.spawn(move || loop {
                if crate::interrupt::requested() {
                    return;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(cand) = batch.get(i) else { return };
                let scn = cand.scenario.as_deref().unwrap_or(c.scenario);
                let r = run_on_fresh_thread(scn, cand.seed, &c.bugs, opts);
                if tx.send((i, r)).is_err() {
                    return;
                }
            });
        }
        drop(tx);
        for (i, r) in rx {
            out[i] = Some(r);
        }
    });
    out
}

/// Run the campaign; `progress` is called on the calling thread after every merged run.
pub fn run(c: &Explore, progress: &mut dyn FnMut(&crate::fuzz::Progress, &RunRecord)) -> ExploreResult {
    let start = Stopwatch::start();
    let mut s = Search {
        c,
        rng: rand_chacha::ChaCha8Rng::seed_from_u64(c.campaign_seed ^ 0x4558_504c_4f52_4531),
        corpus: Corpus::default(),
        next_plain: c.first_seed,
        path: format!("{}.toml", c.scenario.name).into(),
    };
    let mut runs: Vec<RunRecord> = Vec::new();
    let mut coverage = crate::coverage::Tally::default();
    let (mut detected, mut failures, mut hash) = (0usize, 0u64, 0xcbf2_9ce4_8422_2325u64);
    let (mut stopped_early, mut interrupted) = (false, false);
    'campaign: while (runs.len() as u64) < c.budget {
        if crate::interrupt::requested() {
            interrupted = true;
            break;
        }
        let batch = s.batch(runs.len() as u64);
        let results = run_batch(c, &batch);
        for (cand, r) in batch.into_iter().zip(results) {
            let Some(r) = r else {
                interrupted = true;
                break 'campaign;
            };
            let number = runs.len() as u64 + 1;
            coverage.add(&r.coverage);
            let features = corpus::features(&r.coverage);
            let concrete = match &cand.scenario {
                Some(scn) => scn.clone(),
                None => Arc::new(s.concrete(cand.seed)),
            };
            let kept =
                c.mutate && s.corpus.observe(Entry { run: number, seed: cand.seed, scenario: concrete, features });
            hash = fnv(
                hash,
                format!(
                    "{}:{}:{}:{};",
                    cand.seed,
                    cand.text.as_deref().unwrap_or(""),
                    r.outcome.as_str(),
                    r.trace_hash
                )
                .as_bytes(),
            );
            let is_detected = (c.detect)(&r);
            let failed = r.outcome != Outcome::Pass;
            let rec = RunRecord {
                run: number,
                seed: cand.seed,
                origin: cand.origin,
                outcome: r.outcome,
                invariants: crate::fuzz::all_invariants(&r),
                trace_hash: r.trace_hash.clone(),
                sim_time_ms: r.sim_time_ms,
                crash: r.crash.clone(),
                detected: is_detected,
                kept,
                text: if failed { cand.text } else { None },
            };
            failures += failed as u64;
            detected += is_detected as usize;
            let p = crate::fuzz::Progress { done: number, total: c.budget, failures, elapsed: start.elapsed() };
            progress(&p, &rec);
            runs.push(rec);
            if c.stop_after.is_some_and(|k| detected >= k) {
                stopped_early = (runs.len() as u64) < c.budget;
                break 'campaign;
            }
        }
    }
    ExploreResult {
        runs,
        corpus_size: s.corpus.entries.len(),
        admitted: s.corpus.admitted,
        features_seen: s.corpus.features_seen(),
        coverage,
        stopped_early,
        interrupted,
        wall: start.elapsed(),
        sequence_hash: format!("{:016x}", hash),
    }
}
