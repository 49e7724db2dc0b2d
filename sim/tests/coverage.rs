//! The coverage reports end to end: `fuzz --coverage` (human and JSON), the `coverage`
//! command over several scenarios and its gate, and bad input refused up front.

use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_ticdc-sim");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).env_remove("TICDC_SIM_SCENARIOS").output().expect("run ticdc-sim")
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

#[test]
fn fuzz_coverage_json_counts_every_point_and_lists_the_unreached() {
    let o = run(&["fuzz", "basic_replication", "--seeds", "0..3", "--jobs", "1", "--coverage", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let c = &json(&o)["coverage"];
    let points = c["points"].as_object().unwrap();
    assert_eq!(points.len() as u64, c["total"].as_u64().unwrap());
    assert!(points.len() >= 150, "at least 150 declared points, got {}", points.len());
    let reached = points.values().filter(|p| p["hits"].as_u64().unwrap() > 0).count();
    assert_eq!(reached as u64, c["reached"].as_u64().unwrap());
    assert_eq!(c["runs"].as_u64(), Some(3));
    // A plain replication run bootstraps and replicates, and never fails over.
    assert!(points["maintainer.bootstrap_response"]["hits"].as_u64().unwrap() > 0);
    assert!(points["bootstrap.finish"]["seeds"].as_u64() == Some(3));
    let never: Vec<&str> = c["never_reached"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(never.len(), points.len() - reached);
    assert!(never.contains(&"maintainer.node_removed"), "no node leaves in basic_replication");
    // Without --coverage the JSON has no coverage object.
    let o = run(&["fuzz", "basic_replication", "--seeds", "0..1", "--jobs", "1", "--json"]);
    assert!(json(&o).get("coverage").is_none());
}

#[test]
fn fuzz_coverage_human_report_names_unreached_must_points() {
    let o = run(&["fuzz", "basic_replication", "--seeds", "0..2", "--jobs", "1", "--coverage"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("coverage: ") && out.contains(" points reached ("), "{out}");
    assert!(out.contains("must-reach points never reached"), "{out}");
    assert!(out.contains("maintainer.node_removed"), "{out}");
}

#[test]
fn coverage_gate_fails_when_the_scenarios_miss_a_must_point_and_merges_scenarios() {
    let o = run(&["coverage", "basic_replication", "fail_over", "--seeds", "0..2", "--jobs", "1", "--gate", "--json"]);
    let r = json(&o);
    assert_eq!(r["gate"], serde_json::Value::Bool(false), "two small scenarios cannot reach every must point");
    assert_eq!(o.status.code(), Some(1));
    let lines = r["scenarios"].as_array().unwrap();
    assert_eq!(lines.len(), 2);
    let c = &r["coverage"];
    assert_eq!(c["runs"].as_u64(), Some(4));
    // fail_over loses a capture; basic_replication does not: the union has it.
    assert!(c["points"]["coord.node_lost"]["hits"].as_u64().unwrap() > 0);
    assert!(!c["must_never_reached"].as_array().unwrap().is_empty());
    // Without --gate the same coverage exits 0.
    let o = run(&["coverage", "basic_replication", "--seeds", "0..1", "--jobs", "1"]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn coverage_refuses_bad_input_before_any_seed_runs() {
    for args in [
        &["coverage", "no_such_scenario", "--seeds", "0..2"][..],
        &["coverage", "basic_replication", "--seeds", "5..2"][..],
    ] {
        let o = run(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("error: ") && err.lines().count() == 1, "{err}");
        assert!(o.stdout.is_empty(), "nothing ran: {}", String::from_utf8_lossy(&o.stdout));
    }
}
