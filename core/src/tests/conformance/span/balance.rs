//! `maintainer/scheduler/balance_test.go`: the maintainer's balance scheduler (its
//! period and its move batch). Drain (`drainState`) is not modelled.

use crate::maintainer::operator::Operator;
use crate::messages::*;
use crate::tests::harness::*;
use crate::types::*;

/// A maintainer on node 0 ("self") with nodes 1 ("target") and 2 ("dest") alive and 20
/// whole-table spans replicating on node 1.
fn twenty_on_target() -> MH {
    let tables: Vec<TableId> = (1..=20).collect();
    let mut h = MH::new(&[0, 1, 2], TestSchema::with_tables(&tables));
    let spans =
        tables.iter().map(|t| bspan(d(100 + *t as u64), TableSpan::full(*t), ComponentState::Working, START)).collect();
    h.bootstrap(vec![(1, NodeReport::spans(spans))]);
    h
}

fn run(h: &mut MH) {
    h.env.now = h.env.now.max(h.m.pipe.next_balance_check_ms);
    let mut ctx = h.env.ctx();
    h.m.run_balance_scheduler(&mut ctx, &h.schema);
    h.env.take();
}

// balance_test.go:27 (sub-case "default") — Execute asks to run again one
// `check-balance-interval` later.
#[test]
fn ticdc_balance_TestBalanceSchedulerUsesCheckBalanceInterval_default() {
    let mut h = twenty_on_target();
    h.m.config.scheduler.check_balance_interval_ms = 60_000;
    h.env.now = 5_000;
    h.m.pipe.next_balance_check_ms = 0;
    run(&mut h);
    assert_eq!(h.m.pipe.next_balance_check_ms, 5_000 + 60_000);
}

// balance_test.go:91 — twenty spans on one of three nodes, move batch 5: five moves.
#[test]
fn ticdc_balance_TestBalanceSchedulerUsesConfiguredMoveBatchSize() {
    let mut h = twenty_on_target();
    h.m.config.scheduler.balance_move_batch_size = 5;
    h.m.pipe.next_balance_check_ms = 0;
    run(&mut h);
    let moves = h.m.pipe.oc.running().filter(|op| matches!(op, Operator::Move(_))).count();
    assert_eq!(h.m.pipe.oc.running().count(), 5);
    assert_eq!(moves, 5);
}

// balance_test.go:27 (sub-case "redo") — the redo balance scheduler asks to run again one
// `check-balance-interval` later too. Here it is a redo changefeed's maintainer with
// twenty spans of each mode on node 1: one balance round sets both next check times and
// each mode's scheduler moves its own spans.
#[test]
fn ticdc_balance_TestBalanceSchedulerUsesCheckBalanceInterval_redo() {
    let tables: Vec<TableId> = (1..=20).collect();
    let mut config = crate::config::ChangefeedConfig::default();
    config.consistent.level = crate::config::ConsistentLevel::Eventual;
    config.scheduler.check_balance_interval_ms = 60_000;
    let mut h = MH::with_config(Env::new(0), &[0, 1, 2], TestSchema::with_tables(&tables), config);
    let redo_ddl = h.m.redo_pipe.as_ref().unwrap().sc.ddl_span_id;
    let redo_span = |s: BootstrapTableSpan| BootstrapTableSpan { mode: Mode::Redo, ..s };
    let resp = |spans: Vec<BootstrapTableSpan>, cp: Ts| Message::MaintainerBootstrapResponse {
        cf: cf(),
        spans,
        checkpoint_ts: cp,
        redo_checkpoint_ts: cp,
        operators: vec![],
        merge_operators: vec![],
        err: None,
        maintainer_epoch: EPOCH,
    };
    let mut on_target = Vec::new();
    for t in &tables {
        on_target.push(bspan(d(100 + *t as u64), TableSpan::full(*t), ComponentState::Working, START));
        on_target.push(redo_span(bspan(d(200 + *t as u64), TableSpan::full(*t), ComponentState::Working, START)));
    }
    h.handle(1, resp(on_target, 0));
    h.handle(2, resp(vec![], 0));
    let triggers = vec![
        bspan(h.ddl(), TableSpan::ddl_span(), ComponentState::Working, START),
        redo_span(bspan(redo_ddl, TableSpan::ddl_span(), ComponentState::Working, START)),
    ];
    h.handle(0, resp(triggers, START));
    assert!(h.m.initialized());
    h.env.now = 5_000;
    run(&mut h);
    let redo = h.m.redo_pipe.as_ref().unwrap();
    assert_eq!((h.m.pipe.next_balance_check_ms, redo.next_balance_check_ms), (65_000, 65_000));
    let moved = |oc: &crate::maintainer::operator::OperatorController| {
        oc.running().filter(|op| matches!(op, Operator::Move(_))).map(|op| op.id().0).collect::<Vec<_>>()
    };
    let (default_moves, redo_moves) = (moved(&h.m.pipe.oc), moved(&redo.oc));
    assert!(!default_moves.is_empty() && default_moves.iter().all(|id| (101..=120).contains(id)), "{default_moves:?}");
    assert!(!redo_moves.is_empty() && redo_moves.iter().all(|id| (201..=220).contains(id)), "{redo_moves:?}");
}
