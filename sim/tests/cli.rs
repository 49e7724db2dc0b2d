//! End-to-end tests of the `ticdc-sim` binary: exit codes and messages.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

const BIN: &str = env!("CARGO_BIN_EXE_ticdc-sim");

fn run(args: &[&str]) -> Output {
    run_env(args, None)
}

/// Run the binary; `scenarios` overrides the scenarios directory.
fn run_env(args: &[&str], scenarios: Option<&Path>) -> Output {
    let mut c = Command::new(BIN);
    c.args(args).env("RUST_BACKTRACE", "1").env_remove("TICDC_SIM_SCENARIOS");
    if let Some(d) = scenarios {
        c.env("TICDC_SIM_SCENARIOS", d);
    }
    c.output().expect("run ticdc-sim")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh, empty directory under the system temp dir.
fn temp_dir() -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!("ticdc-sim-cli-{}-{}", std::process::id(), N.fetch_add(1, Ordering::SeqCst)));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p
}

const MINIMAL: &str = "name = \"minimal\"\ndescription = \"one table, one insert\"\n[[tables]]\nname = \"t1\"\n[[steps]]\naction = \"insert\"\ntable = \"t1\"\nrows = 3\n";

/// Bad input: exit 2, exactly one stderr line starting with `error: `, no panic, no backtrace.
fn assert_bad_input(o: &Output) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stdout: {}\nstderr: {}", stdout(o), err);
    assert_eq!(err.lines().count(), 1, "expected one stderr line, got: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(!err.contains("panicked") && !err.contains("backtrace"), "{err}");
    err
}

#[test]
fn list_shows_scenarios() {
    let o = run(&["list"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("basic_replication"), "{}", stdout(&o));
}

#[test]
fn list_uses_scenarios_dir_override() {
    let d = temp_dir();
    write(&d, "minimal.toml", MINIMAL);
    write(&d, "broken.toml", "name = \n");
    let o = run_env(&["list"], Some(&d));
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(out.contains("minimal") && out.contains("one table, one insert"), "{out}");
    assert!(out.contains("broken") && out.contains("(invalid: line 1:"), "{out}");
}

#[test]
fn bugs_lists_historical_bugs() {
    let o = run(&["bugs"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(out.contains("ignore-unknown-working-table") && out.contains("TiCDC #6202"), "{out}");
}

#[test]
fn help_exits_zero() {
    let o = run(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("scenario"));
}

#[test]
fn missing_seed_is_a_usage_error() {
    let err = assert_bad_input(&run(&["scenario", "basic_replication"]));
    assert!(err.contains("--seed"), "{err}");
}

#[test]
fn unknown_scenario_lists_valid_names() {
    let d = temp_dir();
    write(&d, "alpha.toml", MINIMAL);
    write(&d, "beta.toml", MINIMAL);
    let err = assert_bad_input(&run_env(&["scenario", "no_such_scenario", "--seed", "1"], Some(&d)));
    assert_eq!(err.trim_end(), "error: unknown scenario 'no_such_scenario'; valid scenarios: alpha, beta");
}

#[test]
fn unknown_scenario_lists_repository_scenarios() {
    let err = assert_bad_input(&run(&["scenario", "no_such_scenario", "--seed", "1"]));
    assert!(err.contains("valid scenarios: ") && err.contains("basic_replication"), "{err}");
}

#[test]
fn bad_seed() {
    let d = temp_dir();
    let p = write(&d, "minimal.toml", MINIMAL);
    for seed in ["abc", "-3", "18446744073709551616", ""] {
        let err = assert_bad_input(&run(&["scenario", p.to_str().unwrap(), "--seed", seed]));
        assert!(err.contains("seed"), "{err}");
    }
}

#[test]
fn unknown_bug_lists_valid_names() {
    let d = temp_dir();
    let p = write(&d, "minimal.toml", MINIMAL);
    let err = assert_bad_input(&run(&["scenario", p.to_str().unwrap(), "--seed", "1", "--bug", "no-such-bug"]));
    assert!(err.contains("unknown bug 'no-such-bug'"), "{err}");
    assert!(err.contains("ignore-unknown-working-table") && err.contains("no-epoch-fencing"), "{err}");
}

#[test]
fn missing_scenario_file() {
    let p = temp_dir().join("does_not_exist.toml");
    let err = assert_bad_input(&run(&["scenario", p.to_str().unwrap(), "--seed", "1"]));
    assert!(err.contains(&format!("cannot read scenario file {}", p.display())), "{err}");
}

#[test]
fn malformed_toml_names_file_and_line() {
    let d = temp_dir();
    let p = write(&d, "broken.toml", "name = \"broken\"\ndescription = \"x\"\n[[steps]\naction = \"heal\"\n");
    let err = assert_bad_input(&run(&["scenario", p.to_str().unwrap(), "--seed", "1"]));
    assert!(err.starts_with(&format!("error: {}:3:", p.display())), "{err}");
}

#[test]
fn unknown_field_names_file_and_line() {
    let d = temp_dir();
    let p = write(&d, "field.toml", &format!("{MINIMAL}[[steps]]\naction = \"sleep\"\nmillis = 10\n"));
    let err = assert_bad_input(&run(&["scenario", p.to_str().unwrap(), "--seed", "1"]));
    assert!(err.starts_with(&format!("error: {}:11:1:", p.display())) && err.contains("millis"), "{err}");
}

#[test]
fn unknown_table_in_step_names_file_and_line() {
    let d = temp_dir();
    let p = write(&d, "semantic.toml", &format!("{MINIMAL}[[steps]]\naction = \"drop_table\"\ntable = \"ghost\"\n"));
    let err = assert_bad_input(&run(&["scenario", p.to_str().unwrap(), "--seed", "1"]));
    assert!(err.starts_with(&format!("error: {}:9: unknown table 'ghost'", p.display())), "{err}");
    assert!(err.contains("known tables: t1"), "{err}");
}

#[test]
fn json_report_has_required_keys() {
    let d = temp_dir();
    let p = write(&d, "minimal.toml", MINIMAL);
    let o = run(&["scenario", p.to_str().unwrap(), "--seed", "3", "--json", "--bug", "no-epoch-fencing"]);
    let out = stdout(&o);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("not one JSON object ({e}): {out}"));
    for key in ["scenario", "seed", "bugs", "outcome", "violations", "trace_hash", "sim_time_ms", "wall_ms", "events", "config", "checks"] {
        assert!(v.get(key).is_some(), "missing key {key}: {out}");
    }
    assert_eq!(v["seed"], 3);
    assert_eq!(v["scenario"], "minimal");
    assert_eq!(v["bugs"], serde_json::json!(["no-epoch-fencing"]));
    let code = match v["outcome"].as_str().unwrap() {
        "pass" => 0,
        "safety" => 1,
        "liveness" => 3,
        "crash" => 4,
        "nondeterminism" => 5,
        other => panic!("unknown outcome {other}"),
    };
    assert_eq!(o.status.code(), Some(code), "{}", stderr(&o));
}

#[test]
fn basic_replication_is_deterministic() {
    let o = run(&["scenario", "basic_replication", "--seed", "7", "--check-determinism"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "stdout: {out}\nstderr: {}", stderr(&o));
    assert!(out.contains("determinism: ok (2 runs, same trace hash)"), "{out}");
    assert!(out.contains("outcome: pass") && !out.contains("reproduce:"), "{out}");
}

#[test]
fn injected_nondeterminism_is_caught() {
    let o = run(&["scenario", "basic_replication", "--seed", "7", "--check-determinism", "--inject-nondeterminism"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(5), "stdout: {out}\nstderr: {}", stderr(&o));
    assert!(out.contains("outcome: nondeterminism"), "{out}");
    assert!(out.contains("first divergent trace record: #"), "{out}");
    assert!(out.contains("    run 1: ") && out.contains("    run 2: "), "{out}");
    assert!(out.contains("reproduce: cargo run --release -- scenario basic_replication --seed 7"), "{out}");
}
