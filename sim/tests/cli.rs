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
    let d =
        std::env::temp_dir().join(format!("ticdc-sim-cli-{}-{}", std::process::id(), N.fetch_add(1, Ordering::SeqCst)));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p
}

const MINIMAL: &str = "# a minimal scenario\ndescription = \"one table, one insert\"\n[[tables]]\nname = \"t1\"\n[[steps]]\naction = \"insert\"\ntable = \"t1\"\nrows = 3\n";

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
fn invariants_lists_the_checkers_registry() {
    let o = run(&["invariants"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    for name in ticdc_sim::checkers::ALL_INVARIANTS {
        assert!(out.contains(name), "{name} missing: {out}");
    }
    assert!(out.contains("placement") && out.contains("no two writable dispatchers"), "{out}");
    for a in core_sched::assertions::ASSERTIONS {
        assert!(out.contains(a.name) && out.contains(a.description), "{} missing: {out}", a.name);
    }
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
fn unknown_fix_lists_valid_names_and_save_refuses_fixes() {
    let d = temp_dir();
    let p = write(&d, "minimal.toml", MINIMAL);
    let err = assert_bad_input(&run(&["scenario", p.to_str().unwrap(), "--seed", "1", "--fix", "no-such-fix"]));
    assert!(err.contains("unknown fix 'no-such-fix'"), "{err}");
    assert!(err.contains("restored-remove-blocks-checkpoint") && err.contains("keep-newer-block-state"), "{err}");
    let save = d.join("saved");
    let err = assert_bad_input(&run(&[
        "fuzz",
        p.to_str().unwrap(),
        "--seeds",
        "0..2",
        "--fix",
        "keep-newer-block-state",
        "--save",
        save.to_str().unwrap(),
    ]));
    assert!(err.contains("--save cannot be combined with --fix"), "{err}");
}

/// A run with a candidate fix names it in the report, the JSON and the reproduce line.
#[test]
fn a_fix_is_shown_in_the_report_and_json() {
    let d = temp_dir();
    let p = write(&d, "minimal.toml", MINIMAL);
    let o = run(&["scenario", p.to_str().unwrap(), "--seed", "1", "--fix", "keep-newer-block-state", "--no-report"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("fixes keep-newer-block-state"), "{out}");
    assert!(out.contains("fixes = [keep-newer-block-state]"), "{out}");
    let o = run(&["scenario", p.to_str().unwrap(), "--seed", "1", "--json", "--no-report"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("\"fixes\""), "no fixes field without --fix: {out}");
    let o = run(&[
        "scenario",
        p.to_str().unwrap(),
        "--seed",
        "1",
        "--fix",
        "keep-newer-block-state",
        "--json",
        "--no-report",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("\"fixes\":[\"keep-newer-block-state\"]"), "{out}");
}

#[test]
fn redo_api_mode_without_redo_is_bad_input_and_with_redo_runs() {
    let d = temp_dir();
    let p = write(&d, "redo.toml", &format!("api-mode = \"redo\"\n{MINIMAL}"));
    let err = assert_bad_input(&run(&["scenario", p.to_str().unwrap(), "--seed", "1"]));
    assert!(err.contains("redo.toml:1: api-mode = \"redo\" needs changefeed.consistent-level"), "{err}");
    let p = write(
        &d,
        "redo_on.toml",
        &format!("api-mode = \"redo\"\n{MINIMAL}[changefeed]\nconsistent-level = \"eventual\"\n"),
    );
    let o = run(&["scenario", p.to_str().unwrap(), "--seed", "1", "--no-report"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
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
    let o =
        run(&["scenario", p.to_str().unwrap(), "--seed", "3", "--json", "--bug", "no-epoch-fencing", "--no-report"]);
    let out = stdout(&o);
    let v: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not one JSON object ({e}): {out}"));
    for key in [
        "scenario",
        "seed",
        "bugs",
        "outcome",
        "violations",
        "trace_hash",
        "sim_time_ms",
        "wall_ms",
        "events",
        "config",
        "checks",
    ] {
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
    let o = run(&[
        "scenario",
        "basic_replication",
        "--seed",
        "7",
        "--check-determinism",
        "--inject-nondeterminism",
        "--no-report",
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(5), "stdout: {out}\nstderr: {}", stderr(&o));
    assert!(out.contains("outcome: nondeterminism"), "{out}");
    assert!(out.contains("first divergent trace record: #"), "{out}");
    assert!(out.contains("    run 1: ") && out.contains("    run 2: "), "{out}");
    assert!(out.contains("reproduce: cargo run --release -- scenario basic_replication --seed 7"), "{out}");
}

// ---------------------------------------------------------------------------------
// fuzz, replay, reports
// ---------------------------------------------------------------------------------

fn json(o: &Output) -> serde_json::Value {
    let out = stdout(o);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not one JSON object ({e}): {out}\nstderr: {}", stderr(o)))
}

#[test]
fn fuzz_small_range_passes_with_json_summary() {
    let o = run(&["fuzz", "basic_replication", "--seeds", "0..4", "--jobs", "2", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    for key in [
        "scenario",
        "seeds",
        "bugs",
        "runs",
        "passes",
        "failures",
        "by_outcome",
        "by_invariant",
        "failing_seeds",
        "seeds_per_sec",
        "sim_wall_ratio",
    ] {
        assert!(v.get(key).is_some(), "missing key {key}: {v}");
    }
    assert_eq!((v["runs"].as_u64(), v["passes"].as_u64(), v["failures"].as_u64()), (Some(4), Some(4), Some(0)));
    assert_eq!(v["scenario"], "basic_replication");
    assert_eq!(v["seeds"], "0..4");
    // Not a terminal: plain progress lines, never the in-place bar.
    assert!(!stderr(&o).contains('\r'), "{}", stderr(&o));
}

#[test]
fn fuzz_human_summary() {
    let o = run(&["fuzz", "basic_replication", "--seeds", "10..12", "--jobs", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("runs: 2  passes: 2  failures: 0") && out.contains("seeds/s"), "{out}");
}

#[test]
fn fuzz_shard_runs_the_right_seeds() {
    let d = temp_dir();
    let p = write(&d, "minimal.toml", MINIMAL);
    let o = run(&["fuzz", p.to_str().unwrap(), "--seeds", "3..9", "--shard", "1/2", "--jobs", "2", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["runs"], 3, "{v}");
    assert_eq!(v["shard"], "1/2");
    // Which seeds: a scenario that fails on every seed lists them all as failing seeds.
    let failing =
        write(&d, "fails.toml", &format!("{MINIMAL}[[checks]]\nkind = \"table_not_exists\"\ntable = \"t1\"\n"));
    let o = run(&["fuzz", failing.to_str().unwrap(), "--seeds", "3..9", "--shard", "1/2", "--jobs", "2", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let seeds: Vec<u64> =
        json(&o)["failing_seeds"].as_array().unwrap().iter().map(|f| f["seed"].as_u64().unwrap()).collect();
    assert_eq!(seeds, vec![4, 6, 8]);
}

#[test]
fn fuzz_bad_seeds_and_shard_are_usage_errors() {
    for seeds in ["5..5", "9..2", "abc", "1..x", "7"] {
        let err = assert_bad_input(&run(&["fuzz", "basic_replication", "--seeds", seeds]));
        assert!(err.contains("--seeds"), "{err}");
    }
    for shard in ["2/2", "0/0", "x/3", "1"] {
        let err = assert_bad_input(&run(&["fuzz", "basic_replication", "--seeds", "0..4", "--shard", shard]));
        assert!(err.contains("--shard"), "{err}");
    }
    let err = assert_bad_input(&run(&["fuzz", "basic_replication", "--seeds", "0..4", "--jobs", "0"]));
    assert!(err.contains("--jobs"), "{err}");
}

/// `fuzz --save` records the same trace hash that `scenario --seed N --json` computes:
/// a seed found by a parallel campaign reproduces bit-identically on its own.
#[test]
fn fuzz_save_reproduces_bit_identically_and_replays() {
    let d = temp_dir();
    let failing =
        write(&d, "fails.toml", &format!("{MINIMAL}[[checks]]\nkind = \"table_not_exists\"\ntable = \"t1\"\n"));
    let save = d.join("saved");
    let o =
        run(&["fuzz", failing.to_str().unwrap(), "--seeds", "0..3", "--jobs", "2", "--save", save.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("saved 3 seed files"), "{}", stdout(&o));
    for seed in 0..3u64 {
        let f = save.join(format!("fails-nobug-{seed}.json"));
        let sf: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        assert_eq!(sf["expect"]["outcome"], "liveness", "{sf}");
        assert_eq!(sf["expect"]["invariant"], "check:table_not_exists t1", "{sf}");
        assert!(sf["note"].as_str().unwrap().starts_with("found by fuzz "), "{sf}");
        let single =
            run(&["scenario", failing.to_str().unwrap(), "--seed", &seed.to_string(), "--json", "--no-report"]);
        assert_eq!(json(&single)["trace_hash"], sf["trace_hash"], "seed {seed}");
    }
    let o = run(&["replay", save.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout(&o), stderr(&o));
    assert_eq!(stdout(&o).lines().filter(|l| l.starts_with("ok ")).count(), 3, "{}", stdout(&o));
}

/// An interrupt (here the test hook on the handler's path) stops a huge campaign after
/// the seeds in flight: it reports what ran, exits 130, and every failing seed found so far
/// is saved and replays.
#[test]
fn interrupted_fuzz_reports_what_ran_and_keeps_every_failing_seed() {
    let d = temp_dir();
    let failing =
        write(&d, "fails.toml", &format!("{MINIMAL}[[checks]]\nkind = \"table_not_exists\"\ntable = \"t1\"\n"));
    let save = d.join("saved");
    let o = Command::new(BIN)
        .args(["fuzz", failing.to_str().unwrap(), "--seeds", "0..1000000", "--jobs", "2", "--json"])
        .args(["--save", save.to_str().unwrap()])
        .env("TICDC_SIM_INTERRUPT_AFTER", "4")
        .output()
        .expect("run ticdc-sim");
    assert_eq!(o.status.code(), Some(130), "{}\n{}", stdout(&o), stderr(&o));
    let v = json(&o);
    assert_eq!(v["interrupted"], true, "{v}");
    let runs = v["runs"].as_u64().unwrap();
    assert!((4..1000).contains(&runs), "the campaign stops soon after the interrupt: {runs} runs");
    assert_eq!(v["failures"].as_u64(), Some(runs), "every seed of this scenario fails: {v}");
    let saved = std::fs::read_dir(&save).unwrap().count() as u64;
    assert_eq!(saved, runs, "one seed file per failing seed that ran");
    let o = run(&["replay", save.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout(&o), stderr(&o));
}

/// `--known` is read before any seed runs: a bad path is an input error at once.
#[test]
fn fuzz_known_with_a_bad_path_is_refused_before_the_campaign() {
    let o = run(&["fuzz", "basic_replication", "--seeds", "0..1000000", "--known", "/nonexistent/findings"]);
    let err = assert_bad_input(&o);
    assert!(err.contains("/nonexistent/findings"), "{err}");
}

fn seed_file(outcome: &str, hash: &str) -> String {
    format!("{{\"scenario\": \"basic_replication\", \"seed\": 7, \"bugs\": [], \"expect\": {{\"outcome\": \"{outcome}\"}}, \"trace_hash\": \"{hash}\", \"note\": \"test\"}}\n")
}

/// The hash of a file without an `engine`: a `capture-loops` run.
fn hash_of_basic_replication_7() -> String {
    let o = run(&["scenario", "basic_replication", "--seed", "7", "--engine", "capture-loops", "--json"]);
    json(&o)["trace_hash"].as_str().unwrap().to_string()
}

#[test]
fn replay_good_file_exits_zero_and_changed_hash_warns() {
    let d = temp_dir();
    let good = write(&d, "good.json", &seed_file("pass", &hash_of_basic_replication_7()));
    let o = run(&["replay", good.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).starts_with("ok "), "{}", stdout(&o));
    let stale = write(&d, "stale.json", &seed_file("pass", "0000000000000000"));
    let o = run(&["replay", stale.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("warning: ") && stdout(&o).contains("trace hash changed (code changed?)"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn replay_wrong_expected_outcome_fails() {
    let d = temp_dir();
    let wrong = write(&d, "wrong.json", &seed_file("safety", &hash_of_basic_replication_7()));
    let o = run(&["replay", wrong.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(out.starts_with("FAIL ") && out.contains("expected safety, got pass"), "{out}");
}

#[test]
fn replay_malformed_file_is_bad_input_naming_the_file() {
    let d = temp_dir();
    let bad = write(&d, "bad.json", "{\n  \"scenario\": \"basic_replication\",\n  \"seed\": \"seven\"\n}\n");
    let err = assert_bad_input(&run(&["replay", d.to_str().unwrap()]));
    assert!(err.starts_with(&format!("error: {}: line 3 column", bad.display())), "{err}");
    let missing = d.join("nope.json");
    let err = assert_bad_input(&run(&["replay", missing.to_str().unwrap()]));
    assert!(err.contains("nope.json"), "{err}");
}

#[test]
fn scenario_report_writes_markdown_and_json() {
    let d = temp_dir();
    let reports = d.join("reports");
    let o =
        run(&["scenario", "basic_replication", "--seed", "7", "--report", "--report-dir", reports.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = std::fs::read_to_string(reports.join("basic_replication-7.md")).unwrap();
    for part in [
        "# basic_replication seed 7: pass",
        "reproduce: `cargo run --release -- scenario basic_replication --seed 7`",
        "## Configuration",
        "## Causal slice",
        "## Checks",
        "capture started",
    ] {
        assert!(md.contains(part), "missing {part:?} in:\n{md}");
    }
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(reports.join("basic_replication-7.json")).unwrap()).unwrap();
    assert_eq!(j["outcome"], "pass");
    assert!(j["causal_slice"]["lines"].as_array().is_some_and(|l| !l.is_empty()), "{j}");
}

#[test]
fn failing_scenario_writes_a_report_by_default() {
    let d = temp_dir();
    let failing =
        write(&d, "fails.toml", &format!("{MINIMAL}[[checks]]\nkind = \"table_not_exists\"\ntable = \"t1\"\n"));
    let reports = d.join("out");
    let o = run(&["scenario", failing.to_str().unwrap(), "--seed", "2", "--report-dir", reports.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let md = std::fs::read_to_string(reports.join("fails-2.md")).unwrap();
    assert!(md.contains("VIOLATION check:table_not_exists t1"), "{md}");
}

#[test]
fn fuzz_stop_after_stops_scheduling() {
    let d = temp_dir();
    let failing =
        write(&d, "fails.toml", &format!("{MINIMAL}[[checks]]\nkind = \"table_not_exists\"\ntable = \"t1\"\n"));
    // One worker: the cut is exact (with more, seeds already running still finish).
    let o = run(&["fuzz", failing.to_str().unwrap(), "--seeds", "0..50", "--stop-after", "2", "--jobs", "1", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(
        (v["runs"].as_u64(), v["failures"].as_u64(), v["stopped_early"].as_bool()),
        (Some(2), Some(2), Some(true)),
        "{v}"
    );
}

#[test]
fn start_step_needs_a_join_later_node() {
    let d = temp_dir();
    let p = write(&d, "start.toml", &format!("{MINIMAL}[[steps]]\naction = \"start\"\nnode = \"n1\"\n"));
    let err = assert_bad_input(&run(&["scenario", p.to_str().unwrap(), "--seed", "1"]));
    assert!(err.contains("not listed in cluster.join-later"), "{err}");
    let p = write(&d, "join.toml", &format!("{MINIMAL}[cluster]\nnodes = 2\njoin-later = [\"n0\", \"n1\"]\n"));
    let err = assert_bad_input(&run(&["scenario", p.to_str().unwrap(), "--seed", "1"]));
    assert!(err.contains("at least one node"), "{err}");
    let p = write(&d, "join2.toml", &format!("{MINIMAL}[cluster]\nnodes = 2\njoin-later = [\"n5\"]\n"));
    let err = assert_bad_input(&run(&["scenario", p.to_str().unwrap(), "--seed", "1"]));
    assert!(err.contains("invalid node 'n5'"), "{err}");
}

#[test]
fn unknown_database_is_bad_input_naming_file_and_line() {
    let d = temp_dir();
    // CREATE TABLE in a database nobody created.
    let p = write(
        &d,
        "nodb.toml",
        &format!("{MINIMAL}[[steps]]\naction = \"create_table\"\ntable = \"t9\"\ndatabase = \"ghost\"\n"),
    );
    let err = assert_bad_input(&run(&["scenario", p.to_str().unwrap(), "--seed", "1"]));
    assert!(
        err.starts_with(&format!("error: {}:9: unknown database 'ghost' in step 'create_table'", p.display())),
        "{err}"
    );
    assert!(err.contains("known databases: test"), "{err}");
    // DROP DATABASE of one that was never created.
    let p =
        write(&d, "dropdb.toml", &format!("{MINIMAL}[[steps]]\naction = \"drop_database\"\ndatabase = \"ghost\"\n"));
    let err = assert_bad_input(&run(&["scenario", p.to_str().unwrap(), "--seed", "1"]));
    assert!(
        err.starts_with(&format!("error: {}:9: unknown database 'ghost' in step 'drop_database'", p.display())),
        "{err}"
    );
}

/// `findings` runs a finding with and without its candidate fix: the recorded seed fails
/// on the fixed core and passes with the fix, and both reports are written.
#[test]
fn findings_tabulates_a_finding_with_and_without_its_fix() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let d = temp_dir();
    let src = root.join("seeds/findings/restored_remove_before_bootstrap-nobug-8.json");
    std::fs::copy(&src, d.join("f.json")).unwrap();
    let reports = d.join("reports");
    let o = Command::new(BIN)
        .current_dir(&root)
        .args([
            "findings",
            "--dir",
            d.to_str().unwrap(),
            "--seeds",
            "4",
            "--jobs",
            "1",
            "--report-dir",
            reports.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(out.contains("f.json (1/1 / 0/1)"), "the recorded seed fails, and passes with the fix: {out}");
    assert!(out.contains("| restored-remove-blocks-checkpoint | 0/4 |"), "{out}");
    assert!(reports.join("findings.md").is_file() && reports.join("findings.json").is_file());
    // Bad input: zero seeds.
    let o = Command::new(BIN)
        .current_dir(&root)
        .args(["findings", "--dir", d.to_str().unwrap(), "--seeds", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--seeds 0"), "{}", stderr(&o));
}

/// `mask-findings`: by default a scenario masks the pervasive open finding and its report
/// says so; `[]` runs TiCDC's code as is; an unknown fix name is bad input with the line
/// and the valid names.
#[test]
fn mask_findings_defaults_to_the_pervasive_finding_and_rejects_unknown_names() {
    let d = temp_dir();
    let config_of = |p: &Path| -> Vec<String> {
        let o = run(&["scenario", p.to_str().unwrap(), "--seed", "1", "--json", "--no-report"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        v["config"].as_array().unwrap().iter().map(|l| l.as_str().unwrap().to_string()).collect()
    };
    let p = write(&d, "default.toml", MINIMAL);
    assert!(
        config_of(&p).iter().any(|l| l.starts_with("masked findings = [fresh-status-watermark]")),
        "{:?}",
        config_of(&p)
    );
    let p = write(&d, "faithful.toml", &MINIMAL.replacen("[[tables]]", "mask-findings = []\n[[tables]]", 1));
    assert!(!config_of(&p).iter().any(|l| l.starts_with("masked findings")), "{:?}", config_of(&p));
    let p = write(&d, "bad.toml", &MINIMAL.replacen("[[tables]]", "mask-findings = [\"no-such-fix\"]\n[[tables]]", 1));
    let err = assert_bad_input(&run(&["scenario", p.to_str().unwrap(), "--seed", "1"]));
    assert!(err.starts_with(&format!("error: {}:3: mask-findings: unknown fix 'no-such-fix'", p.display())), "{err}");
    assert!(err.contains("fresh-status-watermark"), "{err}");
}

/// A masked finding's fix is applied but not reported as asked for: the result's `fixes`
/// stay empty, and `--fix` with the same fix runs bit-identically.
#[test]
fn a_masked_fix_runs_like_the_same_fix_asked_for_and_is_not_reported_as_one() {
    let hash_and_fixes = |extra: &[&str]| -> (String, usize) {
        let mut args = vec!["scenario", "ddl_with_random_move_table", "--seed", "3", "--json", "--no-report"];
        args.extend_from_slice(extra);
        let o = run(&args);
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stderr(&o)));
        (v["trace_hash"].as_str().unwrap().to_string(), v["fixes"].as_array().map_or(0, |a| a.len()))
    };
    let (masked, fixes) = hash_and_fixes(&[]);
    assert_eq!(fixes, 0, "the mask is not a --fix");
    let (asked, fixes) = hash_and_fixes(&["--fix", "fresh-status-watermark"]);
    assert_eq!(fixes, 1);
    assert_eq!(masked, asked, "the mask applies exactly the fix");
}

/// `--no-mask` runs a standard scenario with TiCDC's code as is: the masked finding shows
/// up (seed 2 of ddl_with_random_move_table passes masked and fails unmasked), the
/// reproduce command keeps the flag, and `fuzz --save` refuses it (seed files do not
/// record it).
#[test]
fn no_mask_unmasks_the_finding_and_is_kept_in_the_reproduce_command() {
    // The first seed the unmasked finding fails (most seeds of 0..20 do); masked, it passes.
    let o = run(&["fuzz", "ddl_with_random_move_table", "--seeds", "0..20", "--no-mask", "--json"]);
    let f: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let first = &f["failing_seeds"][0];
    assert_eq!(first["invariant"], "no-data-loss", "{f}");
    let seed = first["seed"].as_u64().unwrap().to_string();
    let o = run(&["scenario", "ddl_with_random_move_table", "--seed", &seed, "--json", "--no-report"]);
    assert_eq!(o.status.code(), Some(0), "masked: passes: {}", stdout(&o));
    let o = run(&["scenario", "ddl_with_random_move_table", "--seed", &seed, "--json", "--no-report", "--no-mask"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["outcome"], "safety", "{}", stdout(&o));
    assert_eq!(v["violations"][0]["invariant"], "no-data-loss");
    assert!(v["reproduce"].as_str().unwrap().ends_with(&format!("--seed {seed} --no-mask")), "{}", v["reproduce"]);
    assert!(!v["config"].as_array().unwrap().iter().any(|l| l.as_str().unwrap().starts_with("masked findings")));
    let d = temp_dir();
    let err = assert_bad_input(&run(&[
        "fuzz",
        "ddl_with_random_move_table",
        "--seeds",
        "0..3",
        "--no-mask",
        "--save",
        d.to_str().unwrap(),
    ]));
    assert!(err.contains("--save cannot be combined with --no-mask"), "{err}");
}

/// An interrupt during the zoo stops it after the seeds in flight, writes what ran (marked
/// interrupted, the row counting only the seeds that ran) and exits 130.
#[test]
fn zoo_interrupted_writes_what_ran_and_exits_130() {
    let d = temp_dir();
    let o = Command::new(BIN)
        .args(["zoo", "--bug", "leak-fence-lock-when-fenced", "--seeds", "1000000", "--jobs", "2"])
        .args(["--report-dir", d.to_str().unwrap()])
        .env("TICDC_SIM_INTERRUPT_AFTER", "3")
        .env_remove("TICDC_SIM_SCENARIOS")
        .output()
        .expect("run ticdc-sim");
    assert_eq!(o.status.code(), Some(130), "{}\n{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("interrupted"), "{}", stdout(&o));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.join("bug-zoo.json")).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true, "{v}");
    let ran = v["bugs"][0]["seeds"].as_u64().unwrap();
    assert!((3..1000).contains(&ran), "the row counts the seeds that ran: {ran}");
    assert!(std::fs::read_to_string(d.join("bug-zoo.md")).unwrap().contains("Interrupted"));
}

/// By default zoo and findings write under reports/runs/ (git-ignored), never over the
/// committed reports/bug-zoo.* and reports/findings.*.
#[test]
fn zoo_and_findings_default_to_a_run_directory() {
    let d = temp_dir();
    let findings = concat!(env!("CARGO_MANIFEST_DIR"), "/../seeds/findings");
    let scenarios = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios");
    let go = |args: &[&str]| {
        Command::new(BIN).args(args).current_dir(&d).env("TICDC_SIM_SCENARIOS", scenarios).output().unwrap()
    };
    let o = go(&["zoo", "--bug", "leak-fence-lock-when-fenced", "--seeds", "2"]);
    assert!(d.join("reports/runs/bug-zoo.md").is_file(), "{}\n{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("reports/runs/bug-zoo.md"), "{}", stdout(&o));
    let only = d.join("one-finding");
    std::fs::create_dir_all(&only).unwrap();
    let f = "restored_remove_before_bootstrap-nobug-8.json";
    std::fs::copy(Path::new(findings).join(f), only.join(f)).unwrap();
    let o = go(&["findings", "--dir", only.to_str().unwrap(), "--seeds", "2"]);
    assert!(d.join("reports/runs/findings.md").is_file(), "{}\n{}", stdout(&o), stderr(&o));
    assert!(!d.join("reports/bug-zoo.md").exists() && !d.join("reports/findings.md").exists());
}

/// A --report-dir that names a file is refused before any seed runs.
#[test]
fn report_dir_naming_a_file_is_refused_up_front() {
    let d = temp_dir();
    let file = write(&d, "a-file", "x");
    for args in [
        vec!["zoo", "--seeds", "1000000", "--report-dir", file.to_str().unwrap()],
        vec!["findings", "--seeds", "1000000", "--report-dir", file.to_str().unwrap()],
    ] {
        let err = assert_bad_input(&run(&args));
        assert!(err.contains("--report-dir") && err.contains("not a directory"), "{err}");
    }
}

/// replay and findings over a directory without seed files are input errors.
#[test]
fn empty_seed_directories_are_refused() {
    let d = temp_dir();
    let err = assert_bad_input(&run(&["replay", d.to_str().unwrap()]));
    assert!(err.contains("no seed files"), "{err}");
    let err = assert_bad_input(&run(&["findings", "--dir", d.to_str().unwrap(), "--report-dir", d.to_str().unwrap()]));
    assert!(err.contains("--dir") && err.contains("no seed files"), "{err}");
}

/// Each bad-input class is refused with one line naming the file and line (or the
/// variable), before any seed runs (a campaign of a million seeds would otherwise run).
#[test]
fn bad_scenario_values_are_refused_before_any_seed() {
    let d = temp_dir();
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "range.toml",
            format!("{MINIMAL}[faults]\nstorage-latency-ms = [50, 10]\n"),
            "faults.storage-latency-ms: min 50 is greater than max 10",
        ),
        ("prob.toml", format!("{MINIMAL}[faults]\nloss = 1.5\n"), "faults.loss must be a probability between 0 and 1"),
        (
            "sleeprand.toml",
            format!("{MINIMAL}[[steps]]\naction = \"sleep_random\"\nmin_ms = 900\nmax_ms = 100\n"),
            "min_ms 900 is greater than max_ms 100",
        ),
        (
            "longsleep.toml",
            format!("{MINIMAL}[[steps]]\naction = \"sleep\"\nms = 100000000\n"),
            "beyond limits.max-sim-time-ms",
        ),
        (
            "rows.toml",
            format!("{MINIMAL}[[steps]]\naction = \"insert\"\ntable = \"t1\"\nrows = 100000000\n"),
            "rows 100000000 is above the limit",
        ),
        (
            "batch.toml",
            format!("{MINIMAL}[changefeed]\nadd-table-batch-size = 0\n"),
            "changefeed.add-table-batch-size must be between 1 and 100000, got 0",
        ),
        ("named.toml", format!("name = \"other\"\n{MINIMAL}"), "differs from the file's name 'named'"),
        ("bad name.toml", MINIMAL.to_string(), "must be letters, digits"),
    ];
    for (file, body, want) in cases {
        let p = write(&d, file, &body);
        let err = assert_bad_input(&run(&["fuzz", p.to_str().unwrap(), "--seeds", "0..1000000"]));
        assert!(err.contains(want), "{file}: {err}");
        assert!(err.contains(file), "{file}: the error names the file: {err}");
    }
    let many: String = (0..2001).map(|i| format!("[[tables]]\nname = \"x{i}\"\n")).collect();
    let p = write(&d, "many.toml", &format!("{MINIMAL}{many}"));
    let err = assert_bad_input(&run(&["fuzz", p.to_str().unwrap(), "--seeds", "0..1000000"]));
    assert!(err.contains("at most 2000"), "{err}");
}

/// A scenarios directory that does not exist is an input error, not an empty list.
#[test]
fn missing_scenarios_directory_is_refused() {
    let err = assert_bad_input(&run_env(&["list"], Some(Path::new("/nonexistent/scenarios"))));
    assert!(err.contains("TICDC_SIM_SCENARIOS=/nonexistent/scenarios"), "{err}");
}

/// The fuzz JSON carries each failing seed's trace hash, and the determinism check
/// reruns the sampled seeds: runs that differ are nondeterminism (exit 5) with the first
/// divergent record; identical runs pass.
#[test]
fn fuzz_samples_determinism_and_reports_trace_hashes() {
    let d = temp_dir();
    let failing =
        write(&d, "fails.toml", &format!("{MINIMAL}[[checks]]\nkind = \"table_not_exists\"\ntable = \"t1\"\n"));
    let o = run(&["fuzz", failing.to_str().unwrap(), "--seeds", "0..4", "--json", "--check-determinism-ratio", "1"]);
    assert_eq!(o.status.code(), Some(1), "{}\n{}", stdout(&o), stderr(&o));
    let v = json(&o);
    let hash = v["failing_seeds"][0]["trace_hash"].as_str().unwrap().to_string();
    assert_eq!(hash.len(), 16, "{v}");
    let one = run(&["scenario", failing.to_str().unwrap(), "--seed", "0", "--json", "--no-report"]);
    assert_eq!(json(&one)["trace_hash"], hash.as_str());
    let o = run(&[
        "fuzz",
        "basic_replication",
        "--seeds",
        "0..6",
        "--check-determinism-ratio",
        "0.5",
        "--inject-nondeterminism",
    ]);
    assert_eq!(o.status.code(), Some(5), "{}\n{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("nondeterminism") && out.contains("first divergent trace record"), "{out}");
    let o = run(&["fuzz", "basic_replication", "--seeds", "0..6", "--check-determinism-ratio", "0.5"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let err =
        assert_bad_input(&run(&["fuzz", "basic_replication", "--seeds", "0..6", "--check-determinism-ratio", "2"]));
    assert!(err.contains("--check-determinism-ratio"), "{err}");
}

/// A single run that takes long says so on stderr (here at once, by the test hook),
/// and RUST_LOG output carries no colour codes when stderr is not a terminal.
#[test]
fn long_runs_show_progress_and_logs_are_plain_text() {
    let o = Command::new(BIN)
        .args(["scenario", "basic_replication", "--seed", "1", "--no-report"])
        .env("TICDC_SIM_PROGRESS_AFTER_MS", "0")
        .env_remove("TICDC_SIM_SCENARIOS")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("scenario basic_replication seed 1: still running after") && err.contains("events"), "{err}");
    let o = Command::new(BIN)
        .args(["scenario", "basic_replication", "--seed", "1", "--no-report"])
        .env("RUST_LOG", "ticdc_sim=debug")
        .env_remove("TICDC_SIM_SCENARIOS")
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(
        !err.is_empty() && !err.contains('\u{1b}'),
        "log lines without escape codes: {}",
        &err[..err.len().min(300)]
    );
}

/// `--html` writes the page next to the reports (also for a pass, also with
/// `--no-report`), and `fuzz --html` without `--save` is a usage error.
#[test]
fn html_writes_one_self_contained_page() {
    let d = temp_dir();
    let dir = d.to_str().unwrap();
    let o = run(&["scenario", "basic_replication", "--seed", "7", "--html", "--no-report", "--report-dir", dir]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("timeline: "), "{}", stderr(&o));
    let page = std::fs::read_to_string(d.join("basic_replication-7.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("id=\"data\""));
    assert!(!d.join("basic_replication-7.md").exists());
    let err = assert_bad_input(&run(&["fuzz", "basic_replication", "--seeds", "0..2", "--html"]));
    assert!(err.contains("--save"), "{err}");
}
