//! `downstreamadapter/sink/redo/meta_test.go` at b813e76f9: the redo trigger's redo meta
//! (`initMeta` from the stored meta files, `UpdateMeta`, `maybeFlushMeta`).

use super::support::*;
use crate::messages::*;
use crate::sink::redo_meta::LogMeta;
use crate::tests::harness::*;
use crate::types::*;

const TR: DispatcherId = DispatcherId(91);

fn lm(cp: Ts, rs: Ts) -> LogMeta {
    LogMeta { checkpoint_ts: cp, resolved_ts: rs }
}

fn update(dm: &mut crate::dispatcher::DispatcherManager, env: &mut Env, cp: Ts, rs: Ts) {
    let m = Message::RedoMetaMessage { cf: cf(), checkpoint_ts: cp, resolved_ts: rs, maintainer_epoch: EPOCH };
    dm_handle(dm, env, 0, m);
}

// meta_test.go:42 TestInitAndWriteMeta: stored metas (1,2), (8,9), (9,11) and start ts 10
// give a flushed checkpoint 10 and resolved ts 11; then `testWriteMeta` (:184): a regressed
// pair changes nothing, a regressed checkpoint keeps the old one while the resolved ts
// advances, and the same the other way round, then both advance.
#[test]
fn ticdc_meta_TestInitAndWriteMeta() {
    let found = vec![
        ("redo/cf/a.meta".to_string(), lm(1, 2)),
        ("redo/cf/b.meta".to_string(), lm(8, 9)),
        ("redo/cf/c.meta".to_string(), lm(9, 11)),
    ];
    let (mut dm, mut env) = redo_meta_running(10, TR, found);
    assert_eq!(dm.redo_flushed_meta(), Some(lm(10, 11)));
    // testWriteMeta
    update(&mut dm, &mut env, 1, 2);
    assert_eq!(redo_meta_tick(&mut dm, &mut env), None, "both regressed");
    assert_eq!(dm.redo_flushed_meta(), Some(lm(10, 11)));
    update(&mut dm, &mut env, 3, 20);
    redo_meta_tick(&mut dm, &mut env);
    assert_eq!(dm.redo_flushed_meta(), Some(lm(10, 20)));
    update(&mut dm, &mut env, 15, 18);
    redo_meta_tick(&mut dm, &mut env);
    assert_eq!(dm.redo_flushed_meta(), Some(lm(15, 20)));
    update(&mut dm, &mut env, 16, 21);
    redo_meta_tick(&mut dm, &mut env);
    assert_eq!(dm.redo_flushed_meta(), Some(lm(16, 21)));
}
