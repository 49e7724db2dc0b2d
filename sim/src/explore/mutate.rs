//! Mutations of a concrete fault plan (a scenario with its swarm plan pinned, or a
//! scenario without swarm) for `fuzz --explore`: every edit is data, drawn from the
//! campaign's random stream, and bounded so a mutant stays within the strengths the swarm
//! itself draws (or twice them).

use crate::runner::swarm;
use crate::scenario::format::{Step, SWARM_FAMILIES};
use crate::scenario::Scenario;
use crate::shrink::faults::{self, Dial, FaultAtom};
use rand::Rng;

/// Upper bounds of mutated probabilities, by `[faults]` key: about twice the most the
/// swarm draws, so a mutant is not a network that never delivers.
const PROB_CAPS: &[(&str, f64)] = &[
    ("loss", 0.2),
    ("duplicate", 0.1),
    ("delay-spike", 0.1),
    ("storage-error", 0.01),
    ("collector-lag", 0.2),
    ("stream-lag", 0.2),
    ("stream-reconnect", 0.04),
];

/// No mutated time (a range's bound, a sleep) goes beyond this many ms.
const MAX_MS: u64 = 10_000;

/// Draws of another seed's plan to find one with a given family on (each is on with
/// probability 1/2, so this nearly never runs out).
const PLAN_DRAWS: usize = 32;

/// What a mutation did, for the report.
pub type Change = String;

/// Apply one mutation to `scn` (and maybe the seed). `base` is the scenario as loaded
/// (what a family switched off goes back to). Returns what changed, or `None` when the
/// drawn kind does not apply to this scenario (the caller draws again).
pub fn mutate(scn: &mut Scenario, seed: &mut u64, base: &Scenario, rng: &mut impl Rng) -> Option<Change> {
    match rng.random_range(0..5u32) {
        0 => {
            *seed = rng.random();
            Some(format!("seed {}", seed))
        }
        1 => toggle_family(scn, base, rng),
        2 => scale_prob(scn, rng),
        3 => change_range(scn, rng),
        _ => shift_window(scn, rng),
    }
}

/// Switch one swarm family of a pinned plan on (with the strength another seed drew) or
/// off (its knobs back to the scenario's own).
fn toggle_family(scn: &mut Scenario, base: &Scenario, rng: &mut impl Rng) -> Option<Change> {
    let on_now = scn.faults.swarm_families.as_ref()?.clone();
    let family = SWARM_FAMILIES[rng.random_range(0..SWARM_FAMILIES.len())];
    if on_now.get(family).copied().unwrap_or(false) {
        faults::drop(scn, &FaultAtom::Family(family.to_string()), base);
        // The families whose knobs `shrink` drops as knobs of their own.
        match family {
            "storage.error" => {
                scn.faults.storage_error = base.faults.storage_error;
                scn.faults.storage_error_max = base.faults.storage_error_max;
            }
            "scheduler.small_batch" => {
                let (c, b) = (&mut scn.changefeed, &base.changefeed);
                c.add_table_batch_size = b.add_table_batch_size;
                c.balance_move_batch_size = b.balance_move_batch_size;
                c.scheduling_task_count_per_node = b.scheduling_task_count_per_node;
            }
            _ => {}
        }
        return Some(format!("{} off", family));
    }
    let plan = (0..PLAN_DRAWS).map(|_| swarm::plan(rng.random())).find(|p| p.families[family])?;
    if let Some(m) = scn.faults.swarm_families.as_mut() {
        m.insert(family.to_string(), true);
    }
    plan.pin_intensity(scn, family);
    Some(format!("{} on", family))
}

/// Halve, or multiply by 1.5 or 2, one probability that is on (capped).
fn scale_prob(scn: &mut Scenario, rng: &mut impl Rng) -> Option<Change> {
    let keys: Vec<&'static str> =
        faults::dials(scn).into_iter().filter_map(|d| if let Dial::Prob(k) = d { Some(k) } else { None }).collect();
    let key = *pick(&keys, rng)?;
    let factor = [0.5, 1.5, 2.0][rng.random_range(0..3)];
    let cap = PROB_CAPS.iter().find(|(k, _)| *k == key).map(|(_, c)| *c).unwrap_or(0.1);
    let p = faults::prob_mut(&mut scn.faults, key)?;
    let old = *p;
    *p = (old * factor).min(cap.max(old));
    Some(format!("faults.{} {:.4} -> {:.4}", key, old, *p))
}

/// Narrow, widen or shift one time range that matters (see `shrink`'s dials).
fn change_range(scn: &mut Scenario, rng: &mut impl Rng) -> Option<Change> {
    let keys: Vec<&'static str> =
        faults::dials(scn).into_iter().filter_map(|d| if let Dial::Range(k) = d { Some(k) } else { None }).collect();
    let key = *pick(&keys, rng)?;
    let r = faults::range_mut(&mut scn.faults, key)?;
    let old = *r;
    let width = (old[1] - old[0]).max(1);
    let new = match rng.random_range(0..4u32) {
        0 => [old[0], old[0] + width / 2],
        1 => [old[0], old[0] + width * 2],
        2 => [old[0] + width / 2, old[1] + width / 2],
        _ => [old[0].saturating_sub(width / 2), old[1].saturating_sub(width / 2)],
    };
    *r = [new[0].min(MAX_MS), new[1].min(MAX_MS).max(new[0].min(MAX_MS))];
    Some(format!("faults.{} {:?} -> {:?}", key, old, *r))
}

/// Move a fault window: lengthen or shorten one sleep of the steps, so the steps after
/// it (a kill, a partition, a move) land elsewhere in the protocol.
fn shift_window(scn: &mut Scenario, rng: &mut impl Rng) -> Option<Change> {
    let sleeps: Vec<usize> = (0..scn.steps.len())
        .filter(|i| matches!(scn.steps[*i].get_ref(), Step::Sleep { .. } | Step::SleepRandom { .. }))
        .collect();
    let i = *pick(&sleeps, rng)?;
    // Per mille of the sleep: a quarter, half, three quarters, 1.5x, 2x.
    let factor = [250u64, 500, 750, 1500, 2000][rng.random_range(0..5)];
    let scale = |ms: u64| (ms.saturating_mul(factor) / 1000).min(MAX_MS.max(ms));
    match scn.steps[i].get_mut() {
        Step::Sleep { ms } => {
            let old = *ms;
            *ms = scale(old).max(1);
            Some(format!("step {} sleep {} -> {} ms", i + 1, old, *ms))
        }
        Step::SleepRandom { min_ms, max_ms } => {
            let old = [*min_ms, *max_ms];
            *min_ms = scale(old[0]);
            *max_ms = scale(old[1]).max(*min_ms);
            Some(format!("step {} sleep_random {:?} -> {:?} ms", i + 1, old, [*min_ms, *max_ms]))
        }
        _ => None,
    }
}

fn pick<'a, T>(v: &'a [T], rng: &mut impl Rng) -> Option<&'a T> {
    if v.is_empty() {
        None
    } else {
        v.get(rng.random_range(0..v.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn swarm_pinned(seed: u64) -> (Scenario, Scenario) {
        let base = crate::scenario::load::resolve("swarm").unwrap().scenario;
        let mut pinned = base.clone();
        swarm::plan(seed).pin(&mut pinned);
        (base, pinned)
    }

    #[test]
    fn toggling_a_family_flips_its_switch_and_knobs() {
        let (base, pinned) = swarm_pinned(3);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut flipped = 0;
        for _ in 0..40 {
            let mut m = pinned.clone();
            let Some(what) = toggle_family(&mut m, &base, &mut rng) else { continue };
            let fam = what.split(' ').next().unwrap();
            let (was, now) =
                (pinned.faults.swarm_families.as_ref().unwrap()[fam], m.faults.swarm_families.unwrap()[fam]);
            assert_ne!(was, now, "{what}");
            if fam == "net.loss" {
                assert_eq!(m.faults.loss > 0.0, now, "{what}");
            }
            flipped += 1;
        }
        assert!(flipped > 30);
    }

    #[test]
    fn scaled_knobs_stay_bounded() {
        let (_, mut m) = swarm_pinned(3);
        m.faults.loss = 0.15;
        m.faults.storage_latency_ms = [5, 9000];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for _ in 0..200 {
            scale_prob(&mut m, &mut rng);
            change_range(&mut m, &mut rng);
            assert!(m.faults.loss <= 0.2 && m.faults.duplicate <= 0.1);
            assert!(m.faults.storage_latency_ms[1] <= MAX_MS);
            assert!(m.faults.storage_latency_ms[0] <= m.faults.storage_latency_ms[1]);
        }
    }

    #[test]
    fn shifting_a_window_changes_one_sleep() {
        let base = crate::scenario::load::resolve("fail_over").unwrap().scenario;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
        let mut m = base.clone();
        let what = shift_window(&mut m, &mut rng).expect("fail_over has sleeps");
        assert!(what.contains("sleep"), "{what}");
        let text = |s: &Scenario| toml::to_string(s).unwrap();
        assert_ne!(text(&m), text(&base));
    }
}
