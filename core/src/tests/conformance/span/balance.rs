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
