//! Tests of scenario loading and validation.

use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh, empty directory under the system temp dir.
fn temp_dir() -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "ticdc-sim-load-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p
}

const HEAD: &str = "# test\ndescription = \"test scenario\"\n[[tables]]\nname = \"t1\"\n";

fn load_err(body: &str) -> (PathBuf, String) {
    let d = temp_dir();
    let p = write(&d, "s.toml", body);
    let e = load_path(&p).err().expect("expected an error").to_string();
    assert!(!e.contains('\n'), "error must be one line: {e}");
    (p, e)
}

#[test]
fn loads_a_valid_scenario() {
    let body = format!(
        "{HEAD}[[vars]]\nname = \"origin\"\nexcept = [\"$maintainer\"]\n\
         [[steps]]\naction = \"create_table\"\ntable = \"t2\"\n\
         [[steps]]\naction = \"insert\"\ntable = \"t2\"\nrows = 5\n\
         [[steps]]\naction = \"enable_failpoint\"\nname = \"BlockCreateDispatcher\"\nnode = \"all\"\n\
         [[steps]]\naction = \"move_table\"\ntable = \"t1\"\nto = \"$origin\"\n\
         [[steps]]\naction = \"kill\"\nnode = \"n2\"\n\
         [[steps]]\naction = \"wait\"\ntimeout_ms = 1000\nuntil = {{ kind = \"table_scheduled\", table = \"t2\" }}\n\
         [[checks]]\nkind = \"table_exists\"\ntable = \"t2\"\n"
    );
    let d = temp_dir();
    let p = write(&d, "ok.toml", &body);
    let l = load_path(&p).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(l.scenario.steps.len(), 6);
}

#[test]
fn resolve_by_name_and_unknown_name() {
    let d = temp_dir();
    write(&d, "alpha.toml", HEAD);
    write(&d, "beta.toml", HEAD);
    assert!(resolve_in(&d, "alpha").is_ok());
    let e = resolve_in(&d, "gamma").err().unwrap().to_string();
    assert_eq!(e, "unknown scenario 'gamma'; valid scenarios: alpha, beta");
}

#[test]
fn missing_file() {
    let d = temp_dir();
    let p = d.join("nope.toml");
    let e = resolve_in(&d, p.to_str().unwrap()).err().unwrap().to_string();
    assert!(e.starts_with(&format!("cannot read scenario file {}: ", p.display())), "{e}");
}

#[test]
fn malformed_toml_has_line_and_column() {
    let (p, e) = load_err("name = \"t\"\ndescription = \"d\"\n[cluster\nnodes = 3\n");
    assert!(e.starts_with(&format!("{}:3:", p.display())), "{e}");
}

#[test]
fn wrong_field_has_line_and_column() {
    let (p, e) = load_err(&format!("{HEAD}[[steps]]\naction = \"sleep\"\nmillis = 5\n"));
    assert!(e.starts_with(&format!("{}:7:1:", p.display())), "{e}");
    assert!(e.contains("millis"), "{e}");
}

#[test]
fn errors_inside_later_steps_point_at_the_item() {
    let (p, e) = load_err(&format!("{HEAD}[[steps]]\naction = \"heal\"\n[[steps]]\naction = \"sleep\"\nmillis = 5\n"));
    assert_eq!(e, format!("{}:9:1: unknown field `millis`, expected `ms`", p.display()));
    let (p, e) = load_err(
        "name = \"t\"\ndescription = \"d\"\nsteps = [{ action = \"heal\" },\n  { action = \"sleep\", millis = 5 }]\n",
    );
    assert!(e.starts_with(&format!("{}:4:23: unknown field `millis`", p.display())), "{e}");
    let (p, e) = load_err(&format!("{HEAD}[[steps]]\naction = \"heal\"\n[[steps]]\naction = \"wait\"\ntimeout_ms = 1\nuntil = {{ kind = \"nope\" }}\n"));
    assert!(e.starts_with(&format!("{}:10:18: unknown variant `nope`", p.display())), "{e}");
    let (p, e) = load_err(&format!("{HEAD}[[checks]]\nkind = \"sync_diff\"\n[[checks]]\nkind = \"table_exists\"\n"));
    assert!(e.starts_with(&format!("{}:7:1: missing field `table`", p.display())), "{e}");
}

#[test]
fn balance_interval_too_short() {
    let (p, e) = load_err(&format!("{HEAD}[changefeed]\ncheck-balance-interval-ms = 1000\n"));
    assert_eq!(e, format!("{}:6: changefeed.check-balance-interval-ms must be > 1000, got 1000", p.display()));
}

#[test]
fn nodes_out_of_range() {
    let (p, e) = load_err(&format!("{HEAD}[cluster]\nnodes = 17\n"));
    assert_eq!(e, format!("{}:6: cluster.nodes must be between 1 and 16, got 17", p.display()));
    let (_, e) = load_err(&format!("{HEAD}[cluster]\nnodes = 0\n"));
    assert!(e.contains("cluster.nodes"), "{e}");
}

#[test]
fn unknown_table_in_step() {
    let (p, e) = load_err(&format!("{HEAD}[[steps]]\naction = \"insert\"\ntable = \"nope\"\nrows = 1\n"));
    assert!(
        e.starts_with(&format!("{}:5: unknown table 'nope' in step 'insert'; known tables: t1", p.display())),
        "{e}"
    );
}

#[test]
fn table_created_later_is_unknown_earlier() {
    let body = format!("{HEAD}[[steps]]\naction = \"insert\"\ntable = \"t2\"\nrows = 1\n[[steps]]\naction = \"create_table\"\ntable = \"t2\"\n");
    let (_, e) = load_err(&body);
    assert!(e.contains("unknown table 't2'"), "{e}");
}

#[test]
fn unknown_table_in_check_and_predicate() {
    let (p, e) = load_err(&format!("{HEAD}[[checks]]\nkind = \"table_exists\"\ntable = \"x\"\n"));
    assert!(e.starts_with(&format!("{}:5: unknown table 'x' in check 'table_exists'", p.display())), "{e}");
    let (_, e) = load_err(&format!(
        "{HEAD}[[steps]]\naction = \"wait\"\ntimeout_ms = 5\nuntil = {{ kind = \"table_scheduled\", table = \"y\" }}\n"
    ));
    assert!(e.contains("unknown table 'y' in step 'wait'"), "{e}");
}

#[test]
fn unknown_failpoint() {
    let (p, e) =
        load_err(&format!("{HEAD}\n[[steps]]\naction = \"enable_failpoint\"\nname = \"Nope\"\nnode = \"n0\"\n"));
    assert!(e.starts_with(&format!("{}:6: unknown failpoint 'Nope'", p.display())), "{e}");
    assert!(e.contains("BlockCreateDispatcher"), "{e}");
}

#[test]
fn bad_node_references() {
    for node in ["n3", "x", "$nobody", "all", "n01"] {
        let (_, e) = load_err(&format!("{HEAD}[[steps]]\naction = \"kill\"\nnode = \"{node}\"\n"));
        assert!(e.contains(&format!("invalid node '{node}' in step 'kill'")), "{e}");
    }
    let (_, e) = load_err(&format!("{HEAD}[[vars]]\nname = \"a\"\nexcept = [\"$b\"]\n[[vars]]\nname = \"b\"\n"));
    assert!(e.contains("invalid node '$b' in var 'a' except"), "{e}");
    let (_, e) = load_err(&format!("{HEAD}[[steps]]\naction = \"wait\"\ntimeout_ms = 10\nuntil = {{ kind = \"maintainer_on_node\", node = \"n7\", initialized = true }}\n"));
    assert!(e.contains("invalid node 'n7' in step 'wait'"), "{e}");
}

#[test]
fn zero_timeouts_and_limits() {
    let (p, e) = load_err(&format!("{HEAD}[[steps]]\naction = \"sleep\"\nms = 0\n"));
    assert_eq!(e, format!("{}:5: step 'sleep': ms must be > 0", p.display()));
    let (_, e) = load_err(&format!(
        "{HEAD}[[steps]]\naction = \"wait\"\ntimeout_ms = 0\nuntil = {{ kind = \"maintainer_moved\" }}\n"
    ));
    assert!(e.contains("timeout_ms must be > 0"), "{e}");
    let (p, e) = load_err(&format!("{HEAD}[limits]\nmax-sim-time-ms = 10\nmax-events = 0\nconverge-timeout-ms = 5\n"));
    assert_eq!(e, format!("{}:7: limits.max-events must be > 0", p.display()));
}

#[test]
fn net_delay_min_above_max() {
    let (p, e) = load_err(&format!("{HEAD}[faults]\nnet-delay-ms = [10, 1]\n"));
    assert_eq!(e, format!("{}:6: faults.net-delay-ms: min 10 is greater than max 1", p.display()));
}

#[test]
fn stream_reconnect_knob_is_checked() {
    let (p, e) = load_err(&format!("{HEAD}[faults]\nstream-reconnect = 1.5\n"));
    assert_eq!(e, format!("{}:6: faults.stream-reconnect must be a probability between 0 and 1, got 1.5", p.display()));
    let (p, e) = load_err(&format!("{HEAD}[faults]\nstream-reconnect = -0.1\n"));
    assert_eq!(
        e,
        format!("{}:6: faults.stream-reconnect must be a probability between 0 and 1, got -0.1", p.display())
    );
    let (p, e) = load_err(&format!("{HEAD}[faults]\nstream-reconnect = 0.1\nstream-reconnect-ms = [500, 20]\n"));
    assert_eq!(e, format!("{}:7: faults.stream-reconnect-ms: min 500 is greater than max 20", p.display()));
    // The edges are valid, and the knob is off by default.
    let d = temp_dir();
    let ok = write(&d, "ok.toml", &format!("{HEAD}[faults]\nstream-reconnect = 1.0\nstream-reconnect-ms = [7, 7]\n"));
    let l = load_path(&ok).expect("valid");
    assert_eq!(l.scenario.faults.stream_reconnect, 1.0);
    assert_eq!(l.scenario.faults.stream_reconnect_ms, [7, 7]);
    let off = write(&d, "off.toml", HEAD);
    let l = load_path(&off).expect("valid");
    assert_eq!(l.scenario.faults.stream_reconnect, 0.0);
    assert_eq!(l.scenario.faults.stream_reconnect_ms, [10, 1000]);
}

#[test]
fn list_marks_invalid_files() {
    let d = temp_dir();
    write(&d, "b.toml", "name = \"b\"\ndescription = \"second\\nline two\"\n");
    write(&d, "a.toml", "name = \"a\"\ndescription = \"first\"\n");
    write(&d, "c.toml", "name = \n");
    write(&d, "notes.txt", "ignored");
    let l = list_in(&d);
    assert_eq!(l.len(), 3);
    assert_eq!(l[0], ("a".to_string(), "first".to_string()));
    assert_eq!(l[1], ("b".to_string(), "second; line two".to_string()));
    assert!(l[2].1.starts_with("(invalid: line 1:"), "{:?}", l[2]);
}

#[test]
fn durations_parse_like_go() {
    use super::super::parse_duration_ms;
    assert_eq!(parse_duration_ms("30s"), Ok(30_000));
    assert_eq!(parse_duration_ms("10m"), Ok(600_000));
    assert_eq!(parse_duration_ms("1m30s"), Ok(90_000));
    assert_eq!(parse_duration_ms("500ms"), Ok(500));
    assert_eq!(parse_duration_ms("24h"), Ok(86_400_000));
    for bad in ["", "30", "s", "1x", "-1s", "1.5s"] {
        assert!(parse_duration_ms(bad).is_err(), "{bad}");
    }
}

#[test]
fn syncpoint_steps_checks_and_captures() {
    let body = format!(
        "{HEAD}[cluster]\nnodes = 2\njoin-later = [\"n1\"]\n\
         [changefeed]\nenable-sync-point = true\nsync-point-interval = \"30s\"\n\
         [[steps]]\naction = \"pause_changefeed\"\n\
         [[steps]]\naction = \"update_changefeed\"\nconfig = {{ enable-sync-point = true, sync-point-interval = \"1m\" }}\n\
         [[steps]]\naction = \"resume_changefeed\"\n\
         [[steps]]\naction = \"dml_loop\"\ntable = \"t1\"\n\
         [[steps]]\naction = \"wait\"\ntimeout_ms = 5\nuntil = {{ kind = \"trace_seen\", event = \"e\", node = \"n0\", capture = {{ ts = \"commitTs\" }} }}\n\
         [[steps]]\naction = \"stop_dml_loop\"\n\
         [[steps]]\naction = \"wait\"\ntimeout_ms = 5\nuntil = {{ kind = \"syncpoint_recorded\", ts = \"$ts\" }}\n\
         [[checks]]\nkind = \"trace_field\"\nevent = \"e\"\nfields = {{ a = \"$ts\" }}\nfield = \"startTs\"\nop = \"ge\"\nvalue = \"$ts\"\n\
         [[checks]]\nkind = \"sync_diff\"\nsnapshot = \"$ts\"\n\
         [[checks]]\nkind = \"sync_diff\"\n\
         [[checks]]\nkind = \"syncpoint_recorded\"\n"
    );
    let d = temp_dir();
    let p = write(&d, "sp.toml", &body);
    let l = load_path(&p).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(l.scenario.steps.len(), 7);
    // A value used before it is captured, or never captured.
    let (_, e) = load_err(&format!("{HEAD}[[checks]]\nkind = \"syncpoint_recorded\"\nts = \"$nope\"\n"));
    assert!(e.contains("value '$nope' in check 'syncpoint_recorded' is not captured"), "{e}");
    let (_, e) = load_err(&format!("{HEAD}[[steps]]\naction = \"wait\"\ntimeout_ms = 5\nuntil = {{ kind = \"trace_seen\", event = \"e\", fields = {{ a = \"$x\" }} }}\n[[steps]]\naction = \"wait\"\ntimeout_ms = 5\nuntil = {{ kind = \"trace_seen\", event = \"e\", capture = {{ x = \"f\" }} }}\n"));
    assert!(e.contains("value '$x'"), "{e}");
    let (_, e) = load_err(&format!("{HEAD}[changefeed]\nsync-point-interval = \"30\"\n"));
    assert!(e.contains("changefeed.sync-point-interval: invalid duration '30'"), "{e}");
    let (_, e) = load_err(&format!(
        "{HEAD}[[steps]]\naction = \"update_changefeed\"\nconfig = {{ sync-point-interval = \"soon\" }}\n"
    ));
    assert!(e.contains("step 'update_changefeed': invalid duration 'soon'"), "{e}");
}

#[test]
fn databases_must_exist_and_dropped_tables_take_no_more_upstream_steps() {
    let step = |a: &str, rest: &str| format!("[[steps]]\naction = \"{a}\"\n{rest}");
    // Valid: create a database, a table in it, drop it; the table may still be named
    // by waits and checks, and moved while its drop is in flight; the name can be
    // created again.
    let body = format!(
        "# test\ndescription = \"test scenario\"\ndatabases = [\"pre\"]\n[[tables]]\nname = \"t1\"\n{}{}{}{}{}{}{}{}[[checks]]\nkind = \"table_not_exists\"\ntable = \"d1\"\n",
        step("create_database", "database = \"db\"\n"),
        step("create_table", "table = \"d1\"\ndatabase = \"db\"\n"),
        step("create_table", "table = \"p1\"\nschema = \"pre\"\n"),
        step("drop_database", "database = \"db\"\n"),
        step("move_table", "table = \"d1\"\nto = \"n0\"\n"),
        step("wait", "timeout_ms = 5\nuntil = { kind = \"database_not_exists_downstream\", database = \"db\" }\n"),
        step("create_database", "database = \"db\"\n"),
        step("wait", "timeout_ms = 5\nuntil = { kind = \"database_exists_downstream\", database = \"pre\" }\n"),
    );
    let d = temp_dir();
    let p = write(&d, "db.toml", &body);
    load_path(&p).unwrap_or_else(|e| panic!("{e}"));
    // `databases` is a known database, and so are those of [[tables]].
    let (_, e) = load_err(&format!("{HEAD}{}", step("create_table", "table = \"x\"\ndatabase = \"nope\"\n")));
    assert!(e.contains("unknown database 'nope' in step 'create_table'; known databases: test"), "{e}");
    let (_, e) = load_err(&format!(
        "{HEAD}[[tables]]\nname = \"t2\"\ndatabase = \"other\"\n{}",
        step("create_database", "database = \"other\"\n")
    ));
    assert!(e.contains("database 'other' in step 'create_database' already exists"), "{e}");
    let (p, e) = load_err(&format!("{HEAD}{}", step("create_database", "database = \"test\"\n")));
    assert!(e.starts_with(&format!("{}:5: database 'test'", p.display())), "{e}");
    // Dropped: no second drop, no table creation in it, no DML on its tables.
    let dropped = format!(
        "{HEAD}{}{}{}",
        step("create_database", "database = \"db\"\n"),
        step("create_table", "table = \"d1\"\ndatabase = \"db\"\n"),
        step("drop_database", "database = \"db\"\n")
    );
    let (_, e) = load_err(&format!("{dropped}{}", step("drop_database", "database = \"db\"\n")));
    assert!(e.contains("unknown database 'db' in step 'drop_database'"), "{e}");
    let (_, e) = load_err(&format!("{dropped}{}", step("create_table", "table = \"d2\"\ndatabase = \"db\"\n")));
    assert!(e.contains("unknown database 'db' in step 'create_table'"), "{e}");
    let (p, e) = load_err(&format!("{dropped}{}", step("insert", "table = \"d1\"\nrows = 1\n")));
    assert!(e.starts_with(&format!("{}:15: table 'd1' in step 'insert' no longer exists upstream: it was dropped with database 'db' by the drop_database step at line 12", p.display())), "{e}");
    let (_, e) = load_err(&format!(
        "{HEAD}{}{}",
        step("drop_table", "table = \"t1\"\n"),
        step("add_column", "table = \"t1\"\n")
    ));
    assert!(e.contains("table 't1' in step 'add_column' no longer exists upstream: it was dropped by the drop_table step at line 5"), "{e}");
    // A predicate on a database that never existed.
    let (_, e) = load_err(&format!(
        "{HEAD}{}",
        step("wait", "timeout_ms = 5\nuntil = { kind = \"database_not_exists_downstream\", database = \"nope\" }\n")
    ));
    assert!(e.contains("unknown database 'nope' in step 'wait'"), "{e}");
    // The workload's create_table op needs `test`.
    let (_, e) = load_err(&format!(
        "{HEAD}{}{}",
        step("drop_database", "database = \"test\"\n"),
        step("random_workload", "duration_ms = 5\nops = [\"create_table\"]\n")
    ));
    assert!(e.contains("op create_table creates tables in database 'test'"), "{e}");
}

#[test]
fn line_col_counts_chars() {
    assert_eq!(line_col("ab\ncd", 0), (1, 1));
    assert_eq!(line_col("ab\ncd", 4), (2, 2));
    assert_eq!(line_col("é\nx", 99), (2, 2));
}

#[test]
fn seed_files_name_scenarios_so_they_replay_from_anywhere() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // A scenario of scenarios/ by its name, however the path was spelled.
    assert_eq!(seed_file_reference(&root.join("scenarios/fail_over.toml")), "fail_over");
    assert_eq!(seed_file_reference(&root.join("sim/../scenarios/fail_over.toml")), "fail_over");
    // Another file of the repository by its path from the root.
    let f = seed_file_reference(&root.join("scenarios/findings/outdated_done_block_state.toml"));
    assert_eq!(f, "scenarios/findings/outdated_done_block_state.toml");
    assert!(resolve(&f).is_ok());
    // Anything else by its absolute path.
    let d = temp_dir();
    let p = write(&d, "mine.toml", HEAD);
    let r = seed_file_reference(&p);
    assert!(Path::new(&r).is_absolute() && r.ends_with("mine.toml"), "{r}");
}

#[test]
fn renames_recover_and_batch_creates_track_table_names() {
    let step = |a: &str, rest: &str| format!("[[steps]]\naction = \"{a}\"\n{rest}");
    let ok = format!(
        "{HEAD}{}{}{}{}{}{}",
        step("create_tables", "tables = [\"a\", \"b\"]\n"),
        step("rename_tables", "renames = [{ table = \"a\", to = \"b\" }, { table = \"b\", to = \"c\" }]\n"),
        step("insert", "table = \"c\"\nrows = 1\n"),
        step("drop_table", "table = \"c\"\n"),
        step("recover_table", "table = \"c\"\n"),
        step("alter_database", "database = \"test\"\n"),
    );
    let d = temp_dir();
    let p = write(&d, "s.toml", &ok);
    load_path(&p).unwrap_or_else(|e| panic!("{e}"));
    // A renamed table's old name is gone.
    let (_, e) = load_err(&format!(
        "{HEAD}{}{}",
        step("rename_table", "table = \"t1\"\nto = \"t9\"\n"),
        step("insert", "table = \"t1\"\nrows = 1\n")
    ));
    assert!(e.contains("unknown table 't1' in step 'insert'"), "{e}");
    // A rename onto a live name, and one into a missing database, are refused.
    let (_, e) = load_err(&format!(
        "{HEAD}{}{}",
        step("create_table", "table = \"t2\"\n"),
        step("rename_table", "table = \"t1\"\nto = \"t2\"\n")
    ));
    assert!(e.contains("target name 't2' is taken"), "{e}");
    let (_, e) =
        load_err(&format!("{HEAD}{}", step("rename_table", "table = \"t1\"\nto = \"t2\"\ndatabase = \"x\"\n")));
    assert!(e.contains("unknown database 'x'"), "{e}");
    // Only a drop_table step's table can be recovered.
    let (_, e) = load_err(&format!("{HEAD}{}", step("recover_table", "table = \"t1\"\n")));
    assert!(e.contains("table 't1' still exists"), "{e}");
    let (_, e) = load_err(&format!(
        "{HEAD}{}{}",
        step("truncate_table", "table = \"t1\"\n"),
        step("recover_table", "table = \"t1\"\n")
    ));
    assert!(e.contains("still exists"), "{e}");
}

#[test]
fn consistent_eventual_loads_with_redo_on() {
    let d = temp_dir();
    let body = format!("{HEAD}[changefeed]\nconsistent-level = \"eventual\"\nconsistent-flush-interval-ms = 100\n");
    let p = write(&d, "redo.toml", &body);
    let l = load_path(&p).unwrap_or_else(|e| panic!("{e}"));
    let cfg = crate::runner::changefeed_config(&l.scenario.changefeed);
    assert!(cfg.consistent.redo_enabled());
    assert_eq!((cfg.consistent.flush_interval_ms, cfg.consistent.meta_flush_interval_ms), (100, 200));
}

#[test]
fn redo_apply_needs_redo_on() {
    let (p, e) = load_err(&format!("{HEAD}[[checks]]\nkind = \"redo_apply\"\n"));
    assert_eq!(
        e,
        format!(
            "{}:5: check 'redo_apply' needs changefeed.consistent-level = \"eventual\" (there is no redo log to apply)",
            p.display()
        )
    );
    let d = temp_dir();
    let body = format!("{HEAD}[changefeed]\nconsistent-level = \"eventual\"\n[[checks]]\nkind = \"redo_apply\"\n");
    load_path(&write(&d, "redo.toml", &body)).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn consistent_level_must_be_known() {
    let (p, e) = load_err(&format!("{HEAD}[changefeed]\nconsistent-level = \"NONE\"\n"));
    assert_eq!(
        e,
        format!("{}:6: changefeed.consistent-level must be \"none\" or \"eventual\", got \"NONE\"", p.display())
    );
}

#[test]
fn consistent_intervals_have_ticdcs_minimum() {
    let (p, e) =
        load_err(&format!("{HEAD}[changefeed]\nconsistent-level = \"none\"\nconsistent-flush-interval-ms = 49\n"));
    assert_eq!(
        e,
        format!(
            "{}:7: changefeed.consistent-flush-interval-ms must be at least 50 (TiCDC's minimum), got 49",
            p.display()
        )
    );
    let (p, e) = load_err(&format!("{HEAD}[changefeed]\nconsistent-meta-flush-interval-ms = 1\n"));
    assert_eq!(
        e,
        format!(
            "{}:6: changefeed.consistent-meta-flush-interval-ms must be at least 50 (TiCDC's minimum), got 1",
            p.display()
        )
    );
}

#[test]
fn consistent_none_loads_with_redo_off() {
    let d = temp_dir();
    let body = format!(
        "{HEAD}[changefeed]\nconsistent-level = \"none\"\nconsistent-flush-interval-ms = 0\nconsistent-meta-flush-interval-ms = 50\n"
    );
    let p = write(&d, "ok.toml", &body);
    let l = load_path(&p).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(l.scenario.changefeed.consistent_level.as_deref(), Some("none"));
}

#[test]
fn api_mode_redo_needs_redo_on_and_a_known_mode() {
    let body = |mode: &str, level: &str| {
        format!(
            "# test\ndescription = \"test scenario\"\napi-mode = \"{mode}\"\n[changefeed]\nconsistent-level = \"{level}\"\n[[tables]]\nname = \"t1\"\n"
        )
    };
    let (p, e) = load_err(&body("redo", "none"));
    assert_eq!(e, format!("{}:3: api-mode = \"redo\" needs changefeed.consistent-level = \"eventual\"", p.display()));
    let (p, e) = load_err(&body("Redo", "eventual"));
    assert_eq!(e, format!("{}:3: api-mode must be \"default\" or \"redo\", got \"Redo\"", p.display()));
    let d = temp_dir();
    let p = write(&d, "ok.toml", &body("redo", "eventual"));
    let l = load_path(&p).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(l.scenario.api_mode.as_deref(), Some("redo"));
}
