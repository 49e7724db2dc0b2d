//! Property tests: (a) splits and merges keep a table's spans a partition of its key
//! range; (b) the committed checkpoint never moves backwards (nor beyond a required
//! node's watermark) for any interleaving of heartbeats and checkpoint rounds.

use super::harness::*;
use crate::config::SchedulerConfig;
use crate::maintainer::operator::OperatorController;
use crate::maintainer::span_controller::{ReplicaState, SpanController, SpanReplication};
use crate::messages::*;
use crate::types::*;
use proptest::prelude::*;

const T: TableId = 7;

#[derive(Clone, Debug)]
enum Step {
    Split {
        pick: usize,
        pieces: u64,
    },
    /// outcome: 0 = merged dispatcher Working, 1 = origin node lost, 2 = cancelled by a DDL.
    Merge {
        pick: usize,
        count: usize,
        outcome: u8,
    },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (any::<usize>(), 2u64..5).prop_map(|(pick, pieces)| Step::Split { pick, pieces }),
        (any::<usize>(), 2usize..4, 0u8..3).prop_map(|(pick, count, outcome)| Step::Merge { pick, count, outcome }),
    ]
}

fn sorted_spans(sc: &SpanController) -> Vec<(DispatcherId, TableSpan)> {
    let mut v: Vec<(DispatcherId, TableSpan)> = sc.tasks_of_table(T).iter().map(|r| (r.id, r.span)).collect();
    v.sort_by_key(|(_, s)| s.start);
    v
}

/// The basic scheduler's job, collapsed: every absent span is placed on node 1.
fn place_absent(sc: &mut SpanController) {
    for id in sc.absent() {
        sc.bind_to_node(&id, n(1));
        sc.mark_replicating(&id);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn splits_and_merges_keep_a_partition(steps in proptest::collection::vec(step(), 1..24)) {
        let mut sc = SpanController::new(d(1), n(0), 100, SchedulerConfig::default());
        sc.insert(SpanReplication { id: d(2), span: TableSpan::full(T), schema_id: SCHEMA, node: Some(n(1)), state: ReplicaState::Replicating, checkpoint_ts: 100, last_state: None, block_state: None });
        let mut oc = OperatorController::new();
        let alive = nodes(&[0, 1, 2]);
        let mut next = 10_000u64;
        let mut gen = move || { next += 1; DispatcherId(next) };
        let mut now = 0;
        for s in steps {
            now += 1_000;
            let spans = sorted_spans(&sc);
            match s {
                Step::Split { pick, pieces } => {
                    let (id, span) = spans[pick % spans.len()];
                    let parts = split_span_evenly(&span, pieces);
                    if parts.len() < 2 {
                        continue;
                    }
                    let new = sc.replace_replica_set(&id, &parts, 100, &mut gen);
                    prop_assert_eq!(new.len(), parts.len());
                    place_absent(&mut sc);
                }
                Step::Merge { pick, count, outcome } => {
                    if spans.len() < 2 {
                        continue;
                    }
                    let count = count.min(spans.len());
                    let start = pick % (spans.len() - count + 1);
                    let sources: Vec<DispatcherId> = spans[start..start + count].iter().map(|(id, _)| *id).collect();
                    let merged = gen();
                    let r = oc.add_merge_operator(sources.clone(), merged, &mut sc, &alive, now);
                    prop_assert!(r.is_ok(), "consecutive spans on one node must merge: {:?}", r);
                    // While the merge runs, sources and target overlap but nothing is uncovered.
                    prop_assert_eq!(sc.table_partition_problems(T).1, vec![]);
                    match outcome {
                        0 => oc.update_operator_status(&merged, n(1), &st(merged, ComponentState::Working, 150), &mut sc),
                        1 => oc.on_node_removed(n(1), &mut sc),
                        _ => oc.on_task_removed(&merged, &mut sc),
                    }
                    oc.execute(&mut sc, &alive, now, 1, &mut gen);
                    oc.execute(&mut sc, &alive, now + 1, 1, &mut gen);
                    prop_assert_eq!(oc.running().count(), 0);
                    if outcome == 0 {
                        prop_assert!(sources.iter().all(|s| sc.get(s).is_none()));
                        prop_assert_eq!(sc.get(&merged).map(|r| r.state), Some(ReplicaState::Replicating));
                    } else {
                        prop_assert!(sc.get(&merged).is_none());
                        prop_assert!(sources.iter().all(|s| sc.get(s).is_some()));
                    }
                    place_absent(&mut sc);
                }
            }
            let (overlaps, holes) = sc.table_partition_problems(T);
            prop_assert!(overlaps.is_empty() && holes.is_empty(), "overlaps {:?} holes {:?}", overlaps, holes);
        }
    }
}

// ---------------------------------------------------------------- checkpoint

#[derive(Clone, Debug)]
enum CpStep {
    Heartbeat { node: u32, cp: Ts, seq: u64, status: Option<Ts> },
    Calc,
}

fn cp_step() -> impl Strategy<Value = CpStep> {
    prop_oneof![
        3 => (0u32..3, 50u64..1_000, 0u64..5, proptest::option::of(50u64..1_000)).prop_map(|(node, cp, seq, status)| CpStep::Heartbeat { node, cp, seq, status }),
        2 => Just(CpStep::Calc),
    ]
}

const X: DispatcherId = DispatcherId(1000);
const Y: DispatcherId = DispatcherId(1001);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn committed_checkpoint_is_monotonic_and_bounded_by_watermarks(steps in proptest::collection::vec(cp_step(), 1..40)) {
        let mut h = MH::new(&[0, 1, 2], TestSchema::with_tables(&[10, 11]));
        h.bootstrap(vec![
            (1, NodeReport::spans(vec![bspan(X, TableSpan::full(10), ComponentState::Working, 150)])),
            (2, NodeReport::spans(vec![bspan(Y, TableSpan::full(11), ComponentState::Working, 150)])),
        ]);
        let mut committed = h.m.pipe.committed_checkpoint;
        prop_assert_eq!(committed, START);
        for s in steps {
            match s {
                CpStep::Heartbeat { node, cp, seq, status } => {
                    // A status of the node's own dispatcher (X on 1, Y on 2), if any.
                    let statuses = match (node, status) {
                        (1, Some(c)) => vec![st(X, ComponentState::Working, c)],
                        (2, Some(c)) => vec![st(Y, ComponentState::Working, c)],
                        _ => vec![],
                    };
                    h.handle(node, heartbeat(cp, seq, statuses));
                }
                CpStep::Calc => {
                    let r = h.m.calc_checkpoint();
                    let now = h.m.pipe.committed_checkpoint;
                    prop_assert!(now >= committed, "went backwards: {} -> {}", committed, now);
                    if let Some(r) = r {
                        prop_assert_eq!(r, now);
                    }
                    if now > committed {
                        for i in 0..3 {
                            let w = h.m.pipe.node_watermarks.get(&n(i)).map(|w| w.checkpoint_ts);
                            prop_assert!(w.is_some_and(|w| w >= now), "committed {} beyond node {}'s watermark {:?}", now, i, w);
                        }
                    }
                    committed = now;
                }
            }
        }
    }
}
