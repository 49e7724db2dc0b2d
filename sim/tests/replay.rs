//! Replays every seed file in the repository's `seeds/` directory through the library
//! (no subprocess, so the corpus stays cheap to run on every `cargo test`).
//!
//! Same judgement as `ticdc-sim replay seeds/`: an outcome or invariant that differs from
//! the file fails the test; a changed trace hash alone is only printed as a warning (any
//! change to the core reorders events; the file still proves what it should).

use std::path::PathBuf;
use ticdc_sim::replay::{prepare, replay, Verdict};
use ticdc_sim::seedfile::collect;

#[test]
fn every_seed_file_replays_as_recorded() {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../seeds"));
    // The directory must exist and be readable even while the corpus is empty.
    let mut files = collect(&dir).unwrap_or_else(|e| panic!("seeds directory: {e}"));
    // Known open findings are replayed too: they must keep failing as recorded until fixed.
    let findings = dir.join("findings");
    if findings.is_dir() {
        files.extend(collect(&findings).unwrap_or_else(|e| panic!("seeds/findings directory: {e}")));
    }
    let mut failures = Vec::new();
    for f in &files {
        let p = prepare(f).unwrap_or_else(|e| panic!("malformed seed file: {e}"));
        match replay(&p) {
            Verdict::Ok => {}
            Verdict::Warning(w) => eprintln!("warning: {}: {}", f.display(), w),
            Verdict::Fail(why) => failures.push(format!("{}: {}", f.display(), why.join("; "))),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} seed files changed behaviour:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

/// A companion-bug seed file proves its bug only if the control run (the companion alone)
/// stays clear of the invariant: a control that also violates it must fail the replay.
#[test]
fn a_control_run_that_shows_the_invariant_too_fails_the_replay() {
    let src = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../seeds/ddl_with_random_move_table-nonatomic-operator-admission+accept-nonowner-block-status-3.json"
    ));
    let ok = prepare(&src).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(replay(&ok), Verdict::Ok, "the committed file replays");
    // Same file, but the "control" keeps the bug under test on.
    let text = std::fs::read_to_string(&src).unwrap().replacen(
        "\"bugs\": [\n      \"nonatomic-operator-admission\"\n    ]",
        "\"bugs\": [\n      \"nonatomic-operator-admission\", \"accept-nonowner-block-status\"\n    ]",
        1,
    );
    assert!(
        text.contains("\"nonatomic-operator-admission\", \"accept-nonowner-block-status\""),
        "the control section is where the test expects it"
    );
    let dir = std::env::temp_dir().join(format!("ticdc-sim-control-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("control.json");
    std::fs::write(&bad, text).unwrap();
    let v = replay(&prepare(&bad).unwrap_or_else(|e| panic!("{e}")));
    assert!(matches!(&v, Verdict::Fail(why) if why.iter().any(|w| w.contains("control run"))), "{:?}", v);
    // An unknown invariant in `also` is bad input naming the file.
    let text = std::fs::read_to_string(&src).unwrap().replacen("\"barrier-owner-only\"", "\"no-such-invariant\"", 1);
    std::fs::write(&bad, text).unwrap();
    let err = prepare(&bad).err().expect("unknown invariant rejected").to_string();
    assert!(err.contains("control.json") && err.contains("no-such-invariant"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A finding's `fixed_by` claim is checked: with a fix that does not make the seed pass
/// the replay fails; an unknown fix name is bad input naming the file.
#[test]
fn a_fixed_by_claim_that_does_not_hold_fails_the_replay() {
    let src = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../seeds/findings/restored_remove_before_bootstrap-nobug-8.json"
    ));
    let ok = prepare(&src).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(replay(&ok), Verdict::Ok, "the committed file replays");
    let text = std::fs::read_to_string(&src).unwrap();
    assert!(text.contains("\"restored-remove-blocks-checkpoint\""), "the fixed_by entry is where the test expects it");
    let dir = std::env::temp_dir().join(format!("ticdc-sim-fixed-by-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("fixed_by.json");
    // The other candidate fix does not touch this finding.
    std::fs::write(&bad, text.replacen("\"restored-remove-blocks-checkpoint\"", "\"keep-newer-block-state\"", 1))
        .unwrap();
    let v = replay(&prepare(&bad).unwrap_or_else(|e| panic!("{e}")));
    assert!(
        matches!(&v, Verdict::Fail(why) if why.iter().any(|w| w.contains("with the fixes keep-newer-block-state"))),
        "{:?}",
        v
    );
    std::fs::write(&bad, text.replacen("\"restored-remove-blocks-checkpoint\"", "\"no-such-fix\"", 1)).unwrap();
    let err = prepare(&bad).err().expect("unknown fix rejected").to_string();
    assert!(err.contains("fixed_by.json") && err.contains("no-such-fix"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The corpus holds, for every historical bug, a seed that fails with the bug switched on
/// (and replay proves the bug is its cause: bugs off, or the control run).
#[test]
fn every_historical_bug_has_a_failing_seed_in_the_corpus() {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../seeds"));
    let files = collect(&dir).unwrap_or_else(|e| panic!("seeds directory: {e}"));
    let mut covered = std::collections::BTreeSet::new();
    for f in &files {
        let p = prepare(f).unwrap_or_else(|e| panic!("malformed seed file: {e}"));
        if p.file.expect.outcome == ticdc_sim::result::Outcome::Pass {
            continue;
        }
        // The bug a file proves: its only bug, or the one its control run leaves out (a
        // file with several bugs and no control proves only their combination).
        match &p.file.control {
            Some(c) => covered.extend(p.file.bugs.iter().filter(|b| !c.bugs.contains(b)).cloned()),
            None if p.file.bugs.len() == 1 => covered.extend(p.file.bugs.iter().cloned()),
            None => {}
        }
    }
    let missing: Vec<&str> =
        core_sched::bugs::ALL_BUGS.iter().map(|b| b.name).filter(|n| !covered.contains(*n)).collect();
    assert!(missing.is_empty(), "no failing seed in seeds/ for: {:?}", missing);
}

/// A bug caught on an open finding's scenario: its control is the fixed core, which fails
/// the seed too (the finding) but must not show the bug's invariant.
#[test]
fn a_bugs_off_control_replaces_the_must_pass_check() {
    let src = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../seeds/stale_bootstrap_resend_recreates_trigger-replace-mismatched-trigger-8.json"
    ));
    let ok = prepare(&src).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(replay(&ok), Verdict::Ok, "the committed file replays");
    // The same file also claiming the finding's invariant for the bug: the fixed core shows it.
    let dir = std::env::temp_dir().join(format!("replay-bugs-off-control-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("claims-converges.json");
    let text = std::fs::read_to_string(&src).unwrap().replacen(
        "\"absent\": [\n      \"one-table-trigger\"",
        "\"absent\": [\n      \"one-table-trigger\", \"converges\"",
        1,
    );
    std::fs::write(&bad, text).unwrap();
    let p = prepare(&bad).unwrap_or_else(|e| panic!("{e}"));
    match replay(&p) {
        Verdict::Fail(why) => {
            assert!(why.iter().any(|w| w.contains("control run") && w.contains("converges")), "{:?}", why)
        }
        v => panic!("expected a failure, got {:?}", v),
    }
    // A bugs-off control that leaves out the file's invariant, or an empty one, is bad input.
    let empty = dir.join("empty-absent.json");
    std::fs::write(
        &empty,
        std::fs::read_to_string(&src).unwrap().replacen(
            "\"absent\": [\n      \"one-table-trigger\"\n    ]",
            "\"absent\": []",
            1,
        ),
    )
    .unwrap();
    let e = prepare(&empty).err().expect("rejected").to_string();
    assert!(e.contains("must list every invariant") && e.contains("one-table-trigger"), "{e}");
    // ...and so is one on a scenario outside scenarios/findings/.
    let outside = dir.join("outside.json");
    std::fs::write(
        &outside,
        std::fs::read_to_string(&src).unwrap().replacen(
            "scenarios/findings/stale_bootstrap_resend_recreates_trigger.toml",
            "trigger_takeover_with_delayed_messages",
            1,
        ),
    )
    .unwrap();
    let e = prepare(&outside).err().expect("rejected").to_string();
    assert!(e.contains("only for a scenario under scenarios/findings/"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A swarm seed file runs its recorded plan, not the seed's draw: families the plan does
/// not name are off (the same run as the draw with them off), and switching on one of them
/// in the file makes another run.
#[test]
fn a_swarm_seed_file_runs_its_recorded_plan() {
    use ticdc_sim::seedfile::SeedFile;
    let src = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../seeds/swarm-nobug-7.json"));
    let f = SeedFile::load(&src).unwrap_or_else(|e| panic!("{e}"));
    let plan = f.swarm_plan.clone().expect("the swarm seed files record their plans (ticdc-sim pin-plans)");
    let dir = std::env::temp_dir().join(format!("ticdc-sim-plan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, f: &SeedFile| {
        let path = dir.join(name);
        std::fs::write(&path, f.to_json()).unwrap();
        path
    };
    // The families that are on, and the off ones whose ops the workload lists: the other
    // off families are missing, hence off. (The traced workload step leaves out the ops of
    // families a plan does not name, so a family that joins later changes no recorded
    // trace; an op-gating family named off keeps its ops in that line.)
    let mut only_on = f.clone();
    let off: Vec<String> = plan.families.iter().filter(|(_, on)| !**on).map(|(k, _)| k.clone()).collect();
    assert!(!off.is_empty());
    let gates_ops = [
        "kill_restart",
        "move_maintainer",
        "move_table",
        "split_merge",
        "partition",
        "session_loss",
        "ddl_table_set",
        "split.check",
        "ddl.burst",
        "ddl.partition",
        "failpoint",
        "move_in_flight",
        "coordinator.loss",
        "changefeed.pause",
        "failover.held_removal",
        "ddl.in_flight_scheduling",
        "ddl.report_after_write",
        "changefeed.fail",
    ];
    let dropped = off.iter().filter(|k| !gates_ops.contains(&k.as_str())).count();
    assert!(dropped > 0, "seed 7 has an intensity family off");
    only_on.swarm_plan.as_mut().unwrap().families.retain(|k, on| *on || gates_ops.contains(&k.as_str()));
    let p = prepare(&write("only-on.json", &only_on)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(replay(&p), Verdict::Ok, "a plan without its off families is the same run");
    // A family that gates workload ops only, switched on: another run.
    let gated = ["ddl.burst", "failpoint", "coordinator.loss", "move_in_flight", "ddl_table_set", "ddl.partition"];
    let family = gated.iter().find(|g| off.iter().any(|o| o == *g)).expect("seed 7 has a workload family off");
    let mut more = f.clone();
    more.swarm_plan.as_mut().unwrap().families.insert(family.to_string(), true);
    let p = prepare(&write("more.json", &more)).unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(replay(&p), Verdict::Ok, "{family} on is another run");
    let _ = std::fs::remove_dir_all(&dir);
}
