//! `downstreamadapter/dispatchermanager/task_test.go` at b813e76f9: the heartbeat task's
//! period and first run.

use super::support::*;
use crate::dispatcher::manager::{HEARTBEAT_INITIAL_DELAY_MS, HEARTBEAT_INTERVAL_MS};
use crate::messages::*;
use crate::tests::harness::*;
use crate::types::*;

const A: DispatcherId = DispatcherId(11);

fn watermark_heartbeats(o: &crate::effects::Out) -> usize {
    o.msgs
        .iter()
        .filter(|e| matches!(&e.msg, Message::HeartBeatRequest { watermark, .. } if watermark.checkpoint_ts != 0))
        .count()
}

// task_test.go:23 (default performance mode; the low-latency mode is not modelled): the
// heartbeat task runs every 200 ms, first 1 s after it is created (with the first
// dispatcher).
#[test]
fn ticdc_task_TestHeartbeatIntervalsByPerformanceMode() {
    assert_eq!(HEARTBEAT_INTERVAL_MS, 200);
    assert_eq!(HEARTBEAT_INITIAL_DELAY_MS, 1_000);
    let (mut dm, mut env) = owned_manager(None);
    working(&mut dm, &mut env, A, TableSpan::full(1));
    dm_feed(&mut dm, &mut env, A, vec![], 50);
    env.now = HEARTBEAT_INITIAL_DELAY_MS - 1;
    dm.heartbeat(&mut env.ctx(), false);
    assert_eq!(watermark_heartbeats(&env.take()), 0, "not before the initial delay");
    env.now = HEARTBEAT_INITIAL_DELAY_MS;
    dm.heartbeat(&mut env.ctx(), false);
    assert_eq!(watermark_heartbeats(&env.take()), 1, "first run");
    env.now += HEARTBEAT_INTERVAL_MS - 1;
    dm.heartbeat(&mut env.ctx(), false);
    assert_eq!(watermark_heartbeats(&env.take()), 0, "within the period");
    env.now += 1;
    dm.heartbeat(&mut env.ctx(), false);
    assert_eq!(watermark_heartbeats(&env.take()), 1, "one period later");
}
