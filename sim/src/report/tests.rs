//! The causal slice on a synthetic trace and on real runs of seed files.

use super::*;
use crate::causes::{Cause, CauseRecord};
use crate::result::Violation;
use std::collections::BTreeSet;

fn rec(at_ms: u64, event: &str, fields: &[(&str, &str)]) -> TraceRecord {
    TraceRecord {
        at_ms,
        node: "8301".into(),
        role: "DispatcherManager".into(),
        epoch: 7,
        event: event.to_string().into(),
        fields: fields.iter().map(|(k, v)| (k.to_string().into(), v.to_string())).collect(),
    }
}

fn empty_result() -> RunResult {
    crate::runner::crash_result(
        &toml::from_str("name = \"x\"\ndescription = \"x\"\n").unwrap(),
        1,
        &Default::default(),
        String::new(),
    )
}

fn times(s: &Slice) -> Vec<u64> {
    s.lines.iter().map(|l| l.at_ms()).collect()
}

#[test]
fn slice_keeps_entity_and_lifecycle_records_and_groups_repeats() {
    let mut r = empty_result();
    r.names.tables.insert(106, "t2".into());
    r.trace = vec![
        rec(1, "create dispatcher", &[("dispatcher", "68731c8c971a94e5"), ("table", "106")]),
        rec(2, "create dispatcher", &[("dispatcher", "1111111111111111"), ("table", "104")]),
        rec(3, "operator finished", &[("operator", "add 68731c8c971a94e5 -> 8302")]),
        rec(4, "changefeed stopped", &[]),
        rec(5, "create dispatcher", &[("dispatcher", "2222222222222222"), ("span", "t106[0,5)")]),
    ];
    let v =
        |at_ms, detail: &str| Violation { invariant: "one-dispatcher-per-key".into(), at_ms, detail: detail.into() };
    r.violations = vec![v(5, "table 106: overlap 1"), v(6, "table 106: overlap 2"), v(9, "table 106: overlap 3")];
    let s = causal_slice(&r);
    // 1, 3 and 5 are about table 106 or its dispatchers; 4 is lifecycle; the three
    // violations are one line at the first one's time.
    assert_eq!(times(&s), vec![1, 3, 4, 5, 5]);
    assert_eq!(s.violations.len(), 1);
    assert_eq!((s.violations[0].count, s.violations[0].first_ms, s.violations[0].last_ms), (3, 5, 9));
    let last = s.lines.last().unwrap().text();
    assert!(last.contains("one-dispatcher-per-key x3 (0.005s..0.009s)"), "{}", last);
    // Named as the scenario does: the table, the dispatcher and the capture.
    let t = s.lines[1].text();
    assert!(t.contains("operator=add t2/6873 -> n2") && t.contains("  n1  "), "{}", t);
    assert!(s.named.iter().any(|n| n.name == "t2 (106)"));
    let md = format_markdown(&r, "cmd", &s);
    assert!(md.contains("`one-dispatcher-per-key` x3 0.005s..0.009s"), "{}", md);
}

#[test]
fn a_failed_end_check_brings_its_table() {
    let mut r = empty_result();
    r.names.tables.insert(105, "t6".into());
    r.trace = vec![
        rec(1, "split table", &[("table", "105"), ("result", "split")]),
        rec(2, "create dispatcher", &[("dispatcher", "3333333333333333"), ("table", "105")]),
        rec(3, "dispatcher working", &[("dispatcher", "3333333333333333")]),
        rec(4, "create dispatcher", &[("dispatcher", "4444444444444444"), ("table", "106")]),
    ];
    r.violations = vec![
        Violation { invariant: "one-table-trigger".into(), at_ms: 4, detail: "two triggers".into() },
        Violation { invariant: "check:replication_count t6".into(), at_ms: 9, detail: "2 dispatchers, want 1".into() },
    ];
    let s = causal_slice(&r);
    assert!(
        s.entities.contains(&Entity::Table(105)) && s.entities.contains(&Entity::Dispatcher("3333333333333333".into()))
    );
    assert_eq!(times(&s), vec![1, 2, 3, 4, 9]);
    assert!(s.lines[2].text().contains("dispatcher=t6/3333"), "{}", s.lines[2].text());
}

#[test]
fn a_checkpoint_violation_is_walked_back_to_the_heartbeat() {
    use core_sched::messages::Watermark;
    use core_sched::types::NodeId;
    let mut r = empty_result();
    let w = |ts, seq| Watermark { checkpoint_ts: ts, resolved_ts: ts, seq };
    let c = |at_ms, cause| CauseRecord { at_ms, cause };
    r.causes = vec![
        // An older heartbeat with the same watermark value from another node: not it.
        c(
            1,
            Cause::HeartbeatSent {
                from: NodeId(1),
                to: NodeId(2),
                watermark: w(50, 4),
                complete: false,
                statuses: vec![],
            },
        ),
        c(
            2,
            Cause::HeartbeatSent {
                from: NodeId(0),
                to: NodeId(2),
                watermark: w(50, 4),
                complete: false,
                statuses: vec![],
            },
        ),
        c(
            3,
            Cause::HeartbeatSent {
                from: NodeId(0),
                to: NodeId(2),
                watermark: w(60, 5),
                complete: false,
                statuses: vec![],
            },
        ),
        c(
            4,
            Cause::WatermarkStored { node: NodeId(2), epoch: 9, from: NodeId(0), received: w(50, 4), stored: w(50, 4) },
        ),
        c(
            5,
            Cause::CheckpointCalculated {
                node: NodeId(2),
                epoch: 9,
                checkpoint: 40,
                by_operator: Some(40),
                by_absent: None,
                by_barrier: None,
                watermarks: vec![],
            },
        ),
        c(
            6,
            Cause::CheckpointCalculated {
                node: NodeId(2),
                epoch: 9,
                checkpoint: 50,
                by_operator: None,
                by_absent: None,
                by_barrier: None,
                watermarks: vec![(NodeId(0), w(50, 4))],
            },
        ),
        c(7, Cause::CheckpointPersisted { owner: Some(NodeId(0)), from: 40, to: 50 }),
    ];
    r.violations = vec![Violation { invariant: "no-data-loss".into(), at_ms: 7, detail: "row below 50".into() }];
    let s = causal_slice(&r);
    let walked: Vec<u64> = s.lines.iter().filter(|l| l.reason() == Reason::Checkpoint).map(|l| l.at_ms()).collect();
    assert_eq!(walked, vec![2, 4, 5, 6, 7]);
    let calc = s.lines.iter().find(|l| l.at_ms() == 6).unwrap().text();
    assert!(calc.contains("checkpoint=50 min of operator=none") && calc.contains("n0:50/seq4"), "{}", calc);
}

/// Run a seed file's scenario at its seed with its bugs.
fn run_seed_file(path: &str) -> RunResult {
    let dir = env!("CARGO_MANIFEST_DIR");
    let file = std::path::PathBuf::from(format!("{}/../{}", dir, path));
    let mut sf = crate::seedfile::SeedFile::load(&file).unwrap();
    if sf.scenario.ends_with(".toml") {
        sf.scenario = format!("{}/../{}", dir, sf.scenario);
    }
    // The file's run: its recorded swarm plan, if any, pinned.
    let scn = sf.run_scenario(&file).unwrap();
    let bugs = crate::args::parse_bugs(&sf.bugs).unwrap();
    crate::runner::run_on_fresh_thread(&scn, sf.seed, &bugs, &Default::default())
}

fn walked_causes(s: &Slice) -> Vec<&Cause> {
    s.lines
        .iter()
        .filter_map(|l| match l {
            SliceLine::Cause { record, reason: Reason::Checkpoint, .. } => Some(&record.cause),
            _ => None,
        })
        .collect()
}

/// No capture port and no raw ID of a named table in the printed lines.
fn assert_named(r: &RunResult, s: &Slice) {
    for l in &s.lines {
        let t = l.text();
        for port in 8300..8300 + r.names.nodes {
            assert!(!t.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| w == port.to_string()), "{}", t);
        }
        for id in r.names.tables.keys() {
            assert!(!t.contains(&format!("table={}", id)) && !t.contains(&format!("t{}[", id)), "{}", t);
        }
    }
}

#[test]
fn restored_remove_window_slice_has_the_heartbeats_and_checkpoint_rounds() {
    let r = run_seed_file("seeds/findings/restored_remove_stop_report_window-nobug-46.json");
    assert_eq!(r.violations[0].invariant, "no-data-loss");
    let s = causal_slice(&r);
    assert!(s.lines.len() <= SLICE_CAP);
    let walked = walked_causes(&s);
    let has = |f: &dyn Fn(&Cause) -> bool| walked.iter().any(|c| f(c));
    assert!(has(&|c| matches!(c, Cause::CheckpointPersisted { .. })));
    assert!(has(&|c| matches!(c, Cause::CheckpointCalculated { .. })));
    assert!(has(&|c| matches!(c, Cause::WatermarkStored { .. })));
    assert!(has(&|c| matches!(c, Cause::HeartbeatSent { .. })));
    // The persisted checkpoint is the one the violation names, committed by the round shown.
    let persisted = walked.iter().find_map(|c| match c {
        Cause::CheckpointPersisted { to, .. } => Some(*to),
        _ => None,
    });
    let p = persisted.unwrap();
    assert!(r.violations[0].detail.contains(&format!("persisted checkpoint {}", p)), "{}", r.violations[0].detail);
    assert!(has(&|c| matches!(c, Cause::CheckpointCalculated { checkpoint, .. } if *checkpoint == p)));
    // Ten no-data-loss violations, one line.
    let vio_lines = s.lines.iter().filter(|l| matches!(l, SliceLine::Violation { .. })).count();
    assert_eq!(vio_lines, s.violations.len());
    assert!(s.violations[0].count > 1 && s.violations.len() < r.violations.len());
    // The bootstrap answer that handed the stale Remove to the new maintainer is there.
    let restored = s.lines.iter().any(|l| {
        matches!(l, SliceLine::Cause { record, .. }
            if matches!(&record.cause, Cause::BootstrapSent { operators, .. } if operators.iter().any(|(create, _)| !create)))
    });
    assert!(restored, "{:#?}", s.lines.iter().map(|l| l.text()).collect::<Vec<_>>());
    // The operator that removed t1's dispatcher is there.
    assert!(s.lines.iter().any(|l| l.text().contains("operator finished") && l.text().contains("remove t1/")));
    assert_named(&r, &s);
}

#[test]
fn status_watermark_slice_has_the_stale_heartbeat() {
    let r = run_seed_file("seeds/findings/status_watermark_snapshot-nobug-228.json");
    assert_eq!(r.violations[0].invariant, "no-data-loss");
    let s = causal_slice(&r);
    let walked = walked_causes(&s);
    // The heartbeat whose watermark the checkpoint round took.
    let round = walked
        .iter()
        .rev()
        .find_map(|c| match c {
            Cause::CheckpointCalculated { watermarks, .. } => Some(watermarks.clone()),
            _ => None,
        })
        .unwrap();
    let sent: BTreeSet<(u32, u64)> = walked
        .iter()
        .filter_map(|c| match c {
            Cause::HeartbeatSent { from, watermark, .. } => Some((from.0, watermark.seq)),
            _ => None,
        })
        .collect();
    assert!(round.iter().any(|(n, w)| sent.contains(&(n.0, w.seq))), "{:?} {:?}", round, sent);
    assert_named(&r, &s);
}

#[test]
fn the_failed_end_checks_table_is_in_the_slice() {
    let r = run_seed_file("seeds/maintainer_failover_when_operator-seed000-chain-259.json");
    let check = r.violations.iter().find(|v| v.invariant.starts_with("check:replication_count t6")).unwrap();
    assert_ne!(r.violations[0].invariant, check.invariant, "the end check is not the first violation");
    let t6 = r.names.table_named("t6").unwrap();
    let s = causal_slice(&r);
    assert!(s.entities.contains(&Entity::Table(t6)));
    // Records of t6 (its dispatchers and their re-split) are shown, by name.
    let of_t6 = s.lines.iter().filter(|l| !matches!(l, SliceLine::Violation { .. }) && l.text().contains("t6")).count();
    assert!(of_t6 >= 2, "{:#?}", s.lines.iter().map(|l| l.text()).collect::<Vec<_>>());
    assert!(s.lines.len() <= SLICE_CAP);
    assert_named(&r, &s);
    // The table trigger is named by its own table (the DDL span), not by the DDLs it writes.
    let ddl = s.lines.iter().find(|l| l.text().contains("write ddl")).unwrap().text();
    assert!(ddl.contains("dispatcher=trigger/"), "{}", ddl);
}
