//! `zoo`: every historical bug, switched on alone, against its scenario over N seeds.
//! Answers "does the testbed still catch each bug, how often, and by which invariant".
//!
//! Detection statistics (per bug, seeds `0..N`):
//! - detection rate: failing seeds / N;
//! - first failing seed: the smallest failing seed (from seed 0 this is also the number
//!   of passing seeds a campaign runs before its first detection);
//! - median seeds to detection: the median of the gaps between consecutive detections,
//!   counting the first gap from the start (`first + 1`, then `s[i] - s[i-1]`). It
//!   estimates how many seeds a campaign starting anywhere needs to see the bug once, and
//!   unlike the first failing seed it does not hinge on one lucky or unlucky seed.

use crate::error::CliError;
use crate::fuzz::{run_campaign, Campaign, ProgressBar, SeedList, SeedRange, Shard};
use crate::scenario::load;
use core_sched::bugs::{Bug, Bugs, ALL_BUGS};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// How the zoo runs one bug.
#[derive(Clone, Copy, Debug)]
pub struct ZooPlan {
    pub scenario: &'static str,
    /// Other historical bugs switched on with it: the bug's window exists only in a state
    /// that the fixed protocol never reaches, so the zoo creates that state with the bug
    /// TiCDC fixed together with it. Detection then counts only seeds that violate
    /// `detect`, and the same seeds are run with the companions alone as a control
    /// (`control_detections`): what the control shows is not the bug's doing.
    pub companions: &'static [Bug],
    pub detect: Option<&'static str>,
}

const fn alone(scenario: &'static str) -> ZooPlan {
    ZooPlan { scenario, companions: &[], detect: None }
}

/// The plan for each bug. One place to edit: when a scenario is ported that exercises a
/// bug better, point the bug at it here.
pub fn plan_for(bug: Bug) -> ZooPlan {
    match bug {
        // Seed 000: the dispatcher of a table created after the new maintainer's start ts.
        Bug::IgnoreUnknownWorkingTable => alone("maintainer_failover_when_operator"),
        // Dispatchers removed (moved, dropped) while their last flush is in flight.
        Bug::EscalateClosingWriterError => alone("ddl_with_random_move_table"),
        // Seed 002: an Add and an empty-origin Move of a just-created table.
        Bug::NonatomicOperatorAdmission => alone("ddl_with_random_move_table"),
        // Seed 002 again: PR #6070 pairs atomic admission with the barrier's owner check.
        // A status from a node that does not own the dispatcher does reach the barrier on
        // the fixed core (a block status held in the capture's collector queue behind a
        // backlog while the dispatcher moves away: `collector-lag`), but it then only
        // repeats what the new owner reports: the origin flushed everything below the
        // event before it stopped and the destination starts from that watermark. The
        // status is harmful only from a second live instance of the dispatcher, which
        // only the non-atomic admission creates.
        Bug::AcceptNonownerBlockStatus => ZooPlan {
            scenario: "ddl_with_random_move_table",
            companions: &[Bug::NonatomicOperatorAdmission],
            detect: Some(crate::checkers::BARRIER_OWNER_ONLY),
        },
        // Seed 004 stack: requests of an older generation arriving after a maintainer move.
        Bug::NoEpochFencing => alone("move_maintainer_with_delayed_messages"),
        // PR #5436's redo half: redo meta and forward messages of a departed maintainer
        // generation, held back on the wire, reach the managers after a maintainer move.
        Bug::RedoMessagesNotFenced => alone("redo_move_maintainer_with_delayed_messages"),
        // TiCDC #3663: a span merged or moved while a syncpoint's write is held.
        Bug::IgnorePendingBlockStartTs => alone("in_flight_syncpoint_during_scheduling"),
        // Seed 004: a removal of an older generation, reported in the bootstrap response,
        // finishes while the new maintainer's bootstrap still waits for a slow capture;
        // its one-shot Stopped report is ignored, and only the restored Remove asks again.
        Bug::DropStaleRemoveOperators => alone("stale_remove_stop_report_before_bootstrap"),
        // Seed 004, PR #5436 (PR 3 of 3; PR 2, #5435, brought the epoch fencing, so the
        // code before it had neither): a departed generation's bootstrap, held back on
        // the wire, reaches the manager that holds the next generation's table trigger.
        // With the fence it is dropped by epoch, so the trigger check is reached only
        // with `no-epoch-fencing`; the check alone then decides whether the DDL owner's
        // manager is handed to the departed maintainer. A newer generation meets a stale
        // trigger through the open finding `stale_bootstrap_resend_recreates_trigger`: its
        // nil-ID bootstrap reaches the manager fenced to the departed generation, the fixed
        // check rejects it, and without the check that manager (holding the stale trigger)
        // is handed to a maintainer on another capture (`table-trigger-owner`).
        // The coordinator admits a maintainer move only after the add operator saw
        // BootstrapDone, so the companion plan on `trigger_takeover_with_delayed_messages`
        // rarely reaches the window; the bug alone on the open finding is caught more often,
        // so the zoo runs that.
        Bug::AcceptNilTriggerBootstrap => ZooPlan {
            scenario: STALE_RESEND_FINDING,
            companions: &[],
            detect: Some(crate::checkers::TABLE_TRIGGER_OWNER),
        },
        // Seed 004, PR #5436: a bootstrap carrying the owner's trigger ID reaches a reused
        // manager that still holds another trigger. TiCDC HEAD reaches that state only
        // through the open finding `stale_bootstrap_resend_recreates_trigger` (a departed
        // generation's delayed resend recreates its trigger; the manager stays fenced to
        // that epoch, so a later generation placed on that capture meets the stale
        // trigger): the fixed core rejects the bootstrap ("id mismatch") and fails the
        // finding's scenario with `converges` (the restart loop); with the bug the new
        // trigger is created next to the stale one, which keeps running, and both own
        // the DDL span once registered. Only `one-table-trigger` counts, and the same
        // seeds on the fixed core are the control (it never shows two registered
        // triggers there).
        Bug::ReplaceMismatchedTrigger => ZooPlan {
            scenario: STALE_RESEND_FINDING,
            companions: &[],
            detect: Some(crate::checkers::ONE_TABLE_TRIGGER),
        },
        // PR #5436's redo half: the same takeover check for the table trigger redo
        // dispatcher, on finding 08 with redo on (the resend recreates both triggers).
        // The event trigger is validated first (dispatcher_orchestrator.go:284-291) and
        // its mismatch refuses the bootstrap before the redo check runs, so the event
        // form is the companion; only `one-redo-table-trigger` counts, and the companion
        // alone never leaves two redo triggers (its bootstrap is refused by the redo check).
        Bug::ReplaceMismatchedRedoTrigger => ZooPlan {
            scenario: REDO_STALE_RESEND_FINDING,
            companions: &[Bug::ReplaceMismatchedTrigger],
            detect: Some(crate::checkers::ONE_REDO_TABLE_TRIGGER),
        },
        // Seed 004 review: the maintainer's capture loses its etcd session while its
        // post-bootstrap request is in flight; the handler's fenced return keeps the
        // manager's fence lock, the close never finishes, the capture never exits.
        // Reached only when the fence lands as the initialisation ends (it loses
        // `writePathMu` to the handler); a fence that waited longer closes the write path
        // first and the handler returns on the closed write path.
        Bug::LeakFenceLockWhenFenced => alone("capture_local_fence_during_post_bootstrap"),
        // Before TiCDC PR #5436: that closed-write-path return kept the fence lock.
        Bug::LeakFenceLockOnClosedWritePath => alone("capture_local_fence_during_post_bootstrap"),
        // Seed 004 review: the capture the maintainer moves to loses its etcd session
        // while the bootstrap creates the table trigger in its reused manager; the
        // closed write path must be a clean stop, not an error logged and answered.
        Bug::WritePathClosedIsError => alone("capture_local_fence_during_bootstrap"),
    }
}

/// The scenario each bug is run against.
pub fn scenario_for(bug: Bug) -> &'static str {
    plan_for(bug).scenario
}

/// The open finding whose state (a stale trigger in a manager fenced to a departed
/// epoch) is where `replace-mismatched-trigger` acts.
const STALE_RESEND_FINDING: &str = "scenarios/findings/stale_bootstrap_resend_recreates_trigger.toml";
/// Finding 08 with redo on: where `replace-mismatched-redo-trigger` acts.
const REDO_STALE_RESEND_FINDING: &str = "scenarios/findings/redo_stale_bootstrap_resend_recreates_trigger.toml";
/// Used while a mapped scenario is not in the scenarios directory.
const FALLBACK: &str = "fail_over";

/// [`scenario_for`], falling back to `fail_over` if the mapped scenario does not exist.
pub fn resolve_scenario(bug: Bug) -> &'static str {
    let want = scenario_for(bug);
    // A path names a file from the repository root; it falls back only when the file is
    // missing (a file that does not load is reported by `run_zoo`, not replaced).
    let exists = if load::is_path(want) {
        load::scenarios_dir().parent().map(|root| root.join(want)).is_some_and(|p| p.is_file())
            || std::path::Path::new(want).is_file()
    } else {
        load::scenarios_dir().join(format!("{}.toml", want)).is_file()
    };
    if exists {
        want
    } else {
        FALLBACK
    }
}

#[derive(Serialize, Debug)]
pub struct ZooRow {
    pub bug: String,
    pub origin: String,
    pub scenario: String,
    pub seeds: u64,
    pub detections: u64,
    pub detection_rate: f64,
    pub first_failing_seed: Option<u64>,
    pub median_seeds_to_detection: Option<f64>,
    /// First-violation invariants of the failing seeds, with counts.
    pub invariants: BTreeMap<String, u64>,
    pub by_outcome: BTreeMap<String, u64>,
    pub seeds_per_sec: f64,
    /// Bugs switched on with this one (see [`ZooPlan::companions`]).
    pub companions: Vec<String>,
    /// With companions: the invariant that counts as detection, and how many of the same
    /// seeds violate it with the companions alone.
    pub detect: Option<String>,
    pub control_detections: Option<u64>,
}

#[derive(Serialize, Debug)]
pub struct Zoo {
    pub seeds: u64,
    pub jobs: usize,
    pub definition: &'static str,
    pub bugs: Vec<ZooRow>,
    /// An interrupt (Ctrl-C, SIGTERM) ended the zoo early: the last row may count fewer
    /// seeds than asked (its `seeds` says how many ran) and later bugs are missing.
    pub interrupted: bool,
    /// The engine every campaign ran with (`--engine`); absent: each scenario's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<crate::node::Engine>,
}

const DEFINITION: &str = "median_seeds_to_detection: median of the gaps between consecutive failing seeds, the first gap counted from seed 0 (first_failing_seed + 1)";

/// Median of the detection gaps of sorted failing seeds (see the module docs).
pub fn median_gap(failing: &[u64]) -> Option<f64> {
    let first = *failing.first()?;
    let mut gaps: Vec<u64> = std::iter::once(first + 1).chain(failing.windows(2).map(|w| w[1] - w[0])).collect();
    gaps.sort_unstable();
    let n = gaps.len();
    Some(if n % 2 == 1 { gaps[n / 2] as f64 } else { (gaps[n / 2 - 1] + gaps[n / 2]) as f64 / 2.0 })
}

/// Run the zoo. Err = bad input (a mapped scenario does not load).
/// `only`: the bugs to run (none: every bug).
/// `engine`: run every campaign with it (none: each scenario's own).
pub fn run_zoo(seeds: u64, jobs: usize, only: &Bugs, engine: Option<crate::node::Engine>) -> Result<Zoo, CliError> {
    let mut rows = Vec::new();
    for info in ALL_BUGS.iter().filter(|i| only.0.is_empty() || only.on(i.bug)) {
        let plan = plan_for(info.bug);
        let name = resolve_scenario(info.bug);
        let mut scn = load::resolve(name)
            .map_err(|source| CliError::ZooScenario {
                bug: info.name.into(),
                scenario: name.into(),
                source: Box::new(source),
            })?
            .scenario;
        if let Some(e) = engine {
            scn.engine = e;
        }
        let seed_list = SeedList { range: SeedRange { start: 0, end: seeds }, shard: Shard::default() };
        let companions = plan.companions.iter().fold(Bugs::none(), |b, c| b.with(*c));
        let c = Campaign {
            scenario: &scn,
            seeds: seed_list,
            bugs: companions.clone().with(info.bug),
            jobs,
            stop_after: None,
            determinism_ratio: 0.0,
            inject_nondeterminism: false,
            full_checks: false,
        };
        let mut bar = ProgressBar::new(&format!("zoo {}", info.name));
        let r = run_campaign(&c, &mut |p, _| bar.update(p));
        bar.finish();
        let detected = |o: &crate::fuzz::SeedOutcome| match plan.detect {
            Some(inv) => o.invariants.iter().any(|i| i == inv),
            None => o.failed(),
        };
        let mut failing: Vec<u64> = r.runs.iter().filter(|o| detected(o)).map(|o| o.seed).collect();
        let mut ran = r.runs.len() as u64;
        let control_detections = match plan.detect {
            Some(_) => {
                let c = Campaign {
                    scenario: &scn,
                    seeds: seed_list,
                    bugs: companions.clone(),
                    jobs,
                    stop_after: None,
                    determinism_ratio: 0.0,
                    inject_nondeterminism: false,
                    full_checks: false,
                };
                let mut bar = ProgressBar::new(&format!("zoo {} (control)", info.name));
                let r = run_campaign(&c, &mut |p, _| bar.update(p));
                bar.finish();
                // A seed the companion alone also detects is not the bug's detection.
                let control: std::collections::BTreeSet<u64> =
                    r.runs.iter().filter(|o| detected(o)).map(|o| o.seed).collect();
                // An interrupted control ran only some seeds: count only those.
                let control_ran: std::collections::BTreeSet<u64> = r.runs.iter().map(|o| o.seed).collect();
                failing.retain(|s| control_ran.contains(s) && !control.contains(s));
                ran = ran.min(control_ran.len() as u64);
                Some(control.len() as u64)
            }
            None => None,
        };
        failing.sort_unstable();
        let (by_outcome, invariants) = match plan.detect {
            // Only the detecting invariant counts; the companions' own findings do not.
            Some(inv) => (
                BTreeMap::new(),
                if failing.is_empty() {
                    BTreeMap::new()
                } else {
                    BTreeMap::from([(inv.to_string(), failing.len() as u64)])
                },
            ),
            None => crate::fuzz::tallies(&r.runs),
        };
        rows.push(ZooRow {
            bug: info.name.to_string(),
            origin: info.origin.to_string(),
            scenario: name.to_string(),
            seeds: ran,
            detections: failing.len() as u64,
            detection_rate: failing.len() as f64 / ran.max(1) as f64,
            first_failing_seed: failing.first().copied(),
            median_seeds_to_detection: median_gap(&failing),
            invariants,
            by_outcome,
            seeds_per_sec: (r.seeds_per_sec() * 10.0).round() / 10.0,
            companions: plan.companions.iter().map(|b| b.name().to_string()).collect(),
            detect: plan.detect.map(str::to_string),
            control_detections,
        });
        if crate::interrupt::requested() {
            break;
        }
    }
    Ok(Zoo { seeds, jobs, definition: DEFINITION, bugs: rows, interrupted: crate::interrupt::requested(), engine })
}

/// The detection table (markdown, also printed on stdout).
pub fn format_table(z: &Zoo) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "| bug | origin | scenario | detection rate | first failing seed | median seeds to detection | caught by | seeds/s |");
    let _ = writeln!(o, "|---|---|---|---|---|---|---|---|");
    for r in &z.bugs {
        let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        let mut caught = if r.invariants.is_empty() && r.by_outcome.is_empty() {
            "NEVER CAUGHT".to_string()
        } else if r.invariants.is_empty() {
            r.by_outcome.iter().map(|(k, v)| format!("{} {}", k, v)).collect::<Vec<_>>().join(", ")
        } else {
            r.invariants.iter().map(|(k, v)| format!("{} {}", k, v)).collect::<Vec<_>>().join(", ")
        };
        if !r.companions.is_empty() {
            let _ = write!(
                caught,
                " (with {}; {} alone: {})",
                r.companions.join(", "),
                r.companions.join(", "),
                r.control_detections.unwrap_or(0)
            );
        } else if let Some(c) = r.control_detections {
            let _ = write!(caught, " (fixed core: {})", c);
        }
        let _ = writeln!(
            o,
            "| {} | {} | {} | {}/{} ({:.1}%) | {} | {} | {} | {:.0} |",
            r.bug,
            r.origin,
            r.scenario,
            r.detections,
            r.seeds,
            r.detection_rate * 100.0,
            opt(r.first_failing_seed.map(|s| s.to_string())),
            opt(r.median_seeds_to_detection.map(|m| format!("{}", m))),
            caught,
            r.seeds_per_sec
        );
    }
    o
}

pub fn format_markdown(z: &Zoo) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# Bug zoo\n");
    if z.interrupted {
        let _ = writeln!(o, "**Interrupted**: the rows below are what ran before the interrupt (each row's seed count says how many).\n");
    }
    let _ = writeln!(o, "Each historical bug switched on (alone, or with its companion where noted), seeds 0..{} of its scenario (`ticdc-sim zoo --seeds {}{}`; the bug-to-scenario mapping is in `sim/src/zoo.rs`).\n", z.seeds, z.seeds, z.engine.map(|e| format!(" --engine {}", e.name())).unwrap_or_default());
    let _ = writeln!(o, "- detection rate: failing seeds / seeds run.");
    let _ = writeln!(o, "- first failing seed: the smallest failing seed.");
    let _ = writeln!(o, "- median seeds to detection: the median gap between consecutive failing seeds, the first gap counted from seed 0; roughly how many seeds a campaign needs to catch the bug once.");
    let _ = writeln!(o, "- caught by: the first violated invariant of each failing seed, with counts.");
    let _ = writeln!(o, "- with a companion: the bug's window exists only in a state the fixed protocol never reaches, so the bug TiCDC fixed together with it is switched on too; only seeds violating the named invariant count, and the same seeds run with the companion alone give the control count; a seed the control also detects is not counted as the bug's.");
    let _ = writeln!(o, "- fixed core: the scenario is an open finding (under `scenarios/findings/`) that the fixed core fails with another invariant; only seeds violating the named invariant count, and the same seeds on the fixed core give the control count.\n");
    o.push_str(&format_table(z));
    o
}

/// The `zoo` command: run, write `<dir>/bug-zoo.{md,json}`, print the table. An
/// interrupt stops it after the seeds in flight; what ran is written and the exit is 130.
pub fn cli_zoo(
    seeds: u64,
    jobs: usize,
    dir: &Path,
    only: &Bugs,
    engine: Option<crate::node::Engine>,
) -> Result<(String, i32), CliError> {
    if seeds == 0 {
        return Err(CliError::ZeroZooSeeds);
    }
    CliError::prepare_report_dir(dir)?;
    crate::interrupt::install();
    let z = run_zoo(seeds, jobs, only, engine)?;
    let (md, json) = (dir.join("bug-zoo.md"), dir.join("bug-zoo.json"));
    crate::error::write_atomic(&md, format_markdown(&z)).map_err(CliError::write_file(&md))?;
    let j = serde_json::to_string_pretty(&z).map_err(CliError::serialize("zoo"))?;
    crate::error::write_atomic(&json, j + "\n").map_err(CliError::write_file(&json))?;
    let mut out = format_table(&z);
    let never: Vec<&str> = z.bugs.iter().filter(|r| r.detections == 0).map(|r| r.bug.as_str()).collect();
    let _ = writeln!(out, "wrote {} and {}", md.display(), json.display());
    if z.interrupted {
        let _ = writeln!(
            out,
            "interrupted: {} of {} bugs have a row (the last may be partial)",
            z.bugs.len(),
            ALL_BUGS.len()
        );
        return Ok((out, crate::interrupt::EXIT_INTERRUPTED));
    }
    if !never.is_empty() {
        let _ = writeln!(out, "never caught in {} seeds: {}", seeds, never.join(", "));
    }
    Ok((out, if never.is_empty() { 0 } else { 1 }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_gap_definition() {
        assert_eq!(median_gap(&[]), None);
        assert_eq!(median_gap(&[4]), Some(5.0));
        // gaps 3, 2, 10 -> median 3
        assert_eq!(median_gap(&[2, 4, 14]), Some(3.0));
        // gaps 1, 1, 5, 5 -> median 3
        assert_eq!(median_gap(&[0, 1, 6, 11]), Some(3.0));
    }

    #[test]
    fn every_bug_has_a_scenario() {
        for b in ALL_BUGS {
            assert!(!scenario_for(b.bug).is_empty());
        }
    }
}
