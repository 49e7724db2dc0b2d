//! A bootstrap that fails in the schema store (`ErrSnapshotLostByGC`), a node joining
//! the failed maintainer, and the coordinator's `failed` state: persisted, stopped
//! (unless `BlockBeforeStopChangefeed` holds the stop), never restarted by itself, and
//! resumed by the user once its stop finished.

use super::harness::*;
use crate::coordinator::{ChangefeedInfo, Coordinator, MetaStore, BACKOFF_INITIAL_MS};
use crate::effects::*;
use crate::maintainer::MaintainerState;
use crate::messages::*;
use crate::types::*;

fn errors_of(h: &MH) -> Vec<ErrorCode> {
    h.m.errors.iter().map(|e| e.code).collect()
}

#[test]
fn schema_store_gc_error_fails_bootstrap_without_initialising() {
    let mut schema = TestSchema::with_tables(&[10, 11]);
    schema.gc_fast_fail = true;
    let mut h = MH::new(&[0], schema);
    let out = h.respond(0, NodeReport::default());
    assert!(traced(&out, "handle bootstrap response"));
    assert!(traced(&out, "load table from scheme store failed"));
    assert!(traced(&out, "an error occurred in maintainer"));
    assert_eq!(errors_of(&h), vec![ErrorCode::SnapshotLostByGC]);
    assert!(h.m.errors[0].message.contains("ErrSnapshotLostByGC"));
    assert_eq!(h.m.state, MaintainerState::Bootstrapping);
    assert!(!h.m.initialized());
    // Nothing was scheduled: only the table trigger's task exists.
    assert_eq!(h.m.pipe.sc.tasks.len(), 1);
    assert!(schedule_reqs(&out).is_empty());
    assert!(!out.msgs.iter().any(|e| matches!(e.msg, Message::MaintainerPostBootstrapRequest { .. })));
    // The status reports the error and bootstrap_done = false.
    let st = h.m.status();
    assert!(!st.bootstrap_done);
    assert_eq!(st.errors.len(), 1);
}

/// TiCDC sends a failed bootstrap's error in one status (`GetMaintainerStatus` clears
/// it): a second status has none (finding 12). The candidate fix sends it with every
/// status until the maintainer bootstraps.
#[test]
fn a_failed_bootstraps_error_goes_once_unless_the_fix_keeps_it() {
    for fix in [false, true] {
        let mut schema = TestSchema::with_tables(&[10]);
        schema.gc_fast_fail = true;
        let mut h = MH::new(&[0], schema);
        if fix {
            h.env = std::mem::replace(&mut h.env, Env::new(0)).with_fix(crate::bugs::Fix::StickyBootstrapError);
        }
        h.respond(0, NodeReport::default());
        let first = h.m.status();
        assert_eq!(first.errors.len(), 1, "fix {}", fix);
        let later: Vec<usize> = (0..3).map(|_| h.m.status().errors.len()).collect();
        assert_eq!(later, if fix { vec![1, 1, 1] } else { vec![0, 0, 0] }, "fix {}", fix);
        assert!(!h.m.initialized());
    }
}

#[test]
fn failed_bootstrap_keeps_responses_and_does_not_resend_or_rerun() {
    let mut schema = TestSchema::with_tables(&[10]);
    schema.gc_fast_fail = true;
    let mut h = MH::new(&[0, 1], schema);
    h.respond(1, NodeReport::default());
    h.respond(0, NodeReport::default());
    assert_eq!(errors_of(&h), vec![ErrorCode::SnapshotLostByGC]);
    // allNodesReady: no bootstrap resend, and a duplicate response does not run
    // FinishBootstrap again.
    h.env.now += 10_000;
    let out = h.tick();
    assert!(!out.msgs.iter().any(|e| matches!(e.msg, Message::MaintainerBootstrapRequest { .. })));
    let out = h.respond(1, NodeReport::default());
    assert!(traced(&out, "maintainer received bootstrap response"));
    assert!(!traced(&out, "handle bootstrap response"));
    assert_eq!(h.m.errors.len(), 1);
}

#[test]
fn node_joining_a_failed_maintainer_reruns_bootstrap_and_fails_again() {
    let mut schema = TestSchema::with_tables(&[10]);
    schema.gc_fast_fail = true;
    let mut h = MH::new(&[0], schema);
    h.respond(0, NodeReport::default());
    assert_eq!(h.m.errors.len(), 1);
    // Node 1 joins: "maintainer node changed" and a bootstrap request to it.
    let out = h.node_change(&[0, 1]);
    assert!(traced(&out, "maintainer node changed"));
    assert!(out.msgs.iter().any(|e| e.to == n(1) && matches!(e.msg, Message::MaintainerBootstrapRequest { .. })));
    // Its answer hands every kept response over again: FinishBootstrap handles both
    // nodes' responses and fails the same way, without a panic or any scheduling.
    let out = h.respond(1, NodeReport::default());
    let handled: Vec<String> = out
        .trace
        .iter()
        .filter(|t| t.kind == "handle bootstrap response")
        .map(|t| t.fields.iter().find(|(k, _)| *k == "node").unwrap().1.clone())
        .collect();
    assert_eq!(handled, vec![n(0).to_string(), n(1).to_string()]);
    assert_eq!(errors_of(&h), vec![ErrorCode::SnapshotLostByGC, ErrorCode::SnapshotLostByGC]);
    assert_eq!(h.m.state, MaintainerState::Bootstrapping);
    assert_eq!(h.m.pipe.sc.tasks.len(), 1);
}

#[test]
fn bootstrap_retried_after_the_schema_store_recovers_initialises_once() {
    let mut schema = TestSchema::with_tables(&[10, 11]);
    schema.gc_fast_fail = true;
    let mut h = MH::new(&[0], schema);
    h.respond(0, NodeReport::default());
    assert_eq!(h.m.state, MaintainerState::Bootstrapping);
    // `1*return(true)`: the next load succeeds.
    h.schema.gc_fast_fail = false;
    h.node_change(&[0, 1]);
    let out = h.respond(1, NodeReport::default());
    assert!(traced(&out, "maintainer bootstrap finished"));
    assert_eq!(h.m.state, MaintainerState::Working);
    // The trigger plus one task per table: nothing initialised twice.
    assert_eq!(h.m.pipe.sc.tasks.len(), 3);
    assert_eq!(h.table_tasks(10).len(), 1);
    assert_eq!(h.table_tasks(11).len(), 1);
}

#[test]
fn removing_the_last_unanswered_node_hands_the_responses_over() {
    let mut h = MH::new(&[0, 1], TestSchema::with_tables(&[10]));
    h.respond(0, NodeReport::default());
    assert_eq!(h.m.state, MaintainerState::Bootstrapping);
    let out = h.node_change(&[0]);
    assert!(traced(&out, "maintainer node changed"));
    assert_eq!(h.m.state, MaintainerState::Working);
}

// ---------------------------------------------------------------- coordinator

const CF_EPOCH_NODE: u32 = 0;

/// A coordinator on node 0 that has placed the changefeed; returns (coordinator, meta,
/// maintainer node, epoch).
fn placed(env: &mut Env) -> (Coordinator, MetaStore, NodeId, Epoch) {
    let mut meta = MetaStore::default();
    meta.changefeeds.insert(
        cf(),
        ChangefeedInfo {
            id: cf(),
            config: Default::default(),
            epoch: 0,
            checkpoint_ts: START,
            state: FeedState::Normal,
            last_error: None,
            created: false,
        },
    );
    let mut c = Coordinator::new(n(CF_EPOCH_NODE), nodes(&[0, 1]));
    // Discovery: both captures report (no maintainer yet).
    c.handle_message(&mut env.ctx(), n(0), Message::MaintainerHeartbeat { statuses: vec![] }, &mut meta);
    c.handle_message(&mut env.ctx(), n(1), Message::MaintainerHeartbeat { statuses: vec![] }, &mut meta);
    c.tick(&mut env.ctx(), &mut meta);
    let out = env.take();
    let (to, epoch) = out
        .msgs
        .iter()
        .find_map(|e| match &e.msg {
            Message::AddMaintainerRequest { maintainer_epoch, .. } => Some((e.to, *maintainer_epoch)),
            _ => None,
        })
        .expect("changefeed placed");
    (c, meta, to, epoch)
}

fn status(epoch: Epoch, cp: Ts, errors: Vec<RunningError>, removed: bool) -> Message {
    Message::MaintainerHeartbeat {
        statuses: vec![MaintainerStatus {
            changefeed: cf(),
            checkpoint_ts: cp,
            bootstrap_done: false,
            errors,
            maintainer_epoch: epoch,
            removed,
        }],
    }
}

fn gc_error() -> RunningError {
    RunningError { node: n(0), code: ErrorCode::SnapshotLostByGC, message: "[CDC:ErrSnapshotLostByGC] lost".into() }
}

fn removes(out: &Out) -> Vec<(NodeId, bool, bool)> {
    out.msgs
        .iter()
        .filter_map(|e| match &e.msg {
            Message::RemoveMaintainerRequest { cascade, removed, .. } => Some((e.to, *cascade, *removed)),
            _ => None,
        })
        .collect()
}

fn adds(out: &Out) -> usize {
    out.msgs.iter().filter(|e| matches!(e.msg, Message::AddMaintainerRequest { .. })).count()
}

#[test]
fn fast_fail_error_fails_and_stops_the_changefeed_for_good() {
    let mut env = Env::new(0);
    let (mut c, mut meta, m, epoch) = placed(&mut env);
    // A retryable error first would warn; a GC fast-fail error anywhere in the list fails.
    let retryable = RunningError { node: n(1), code: ErrorCode::ChangefeedRetryable, message: "x".into() };
    c.handle_message(&mut env.ctx(), m, status(epoch, START, vec![retryable, gc_error()], false), &mut meta);
    let out = env.take();
    let info = &meta.changefeeds[&cf()];
    assert_eq!(info.state, FeedState::Failed);
    assert!(info.last_error.as_deref().unwrap().contains("ErrSnapshotLostByGC"));
    assert!(traced(&out, "changefeed failed"));
    // StopChangefeed: cascade, not removed.
    assert_eq!(removes(&out), vec![(m, true, false)]);
    // Further statuses change nothing; the stop is resent until the maintainer is gone.
    c.handle_message(
        &mut env.ctx(),
        m,
        status(
            epoch,
            START,
            vec![RunningError { node: n(1), code: ErrorCode::ChangefeedRetryable, message: "y".into() }],
            false,
        ),
        &mut meta,
    );
    assert_eq!(meta.changefeeds[&cf()].state, FeedState::Failed);
    env.take();
    env.now += 2_000;
    c.tick(&mut env.ctx(), &mut meta);
    assert_eq!(removes(&env.take()), vec![(m, true, false)]);
    c.handle_message(&mut env.ctx(), m, status(epoch, START, vec![], true), &mut meta);
    assert!(traced(&env.take(), "changefeed stopped"));
    // Never placed again, whatever the backoff.
    env.now += 10 * BACKOFF_INITIAL_MS;
    c.tick(&mut env.ctx(), &mut meta);
    let out = env.take();
    assert_eq!(adds(&out), 0);
    assert!(removes(&out).is_empty());
    assert_eq!(meta.changefeeds[&cf()].state, FeedState::Failed);
}

#[test]
fn block_before_stop_changefeed_holds_the_stop_until_disabled() {
    let mut env = Env::new(0);
    let (mut c, mut meta, m, epoch) = placed(&mut env);
    env.fp_on(FP_BLOCK_BEFORE_STOP_CHANGEFEED);
    c.handle_message(&mut env.ctx(), m, status(epoch, START, vec![gc_error()], false), &mut meta);
    let out = env.take();
    // The failed state is persisted first, then the stop waits.
    assert_eq!(meta.changefeeds[&cf()].state, FeedState::Failed);
    assert!(traced(&out, "block before stop changefeed"));
    assert!(removes(&out).is_empty());
    env.now += 5_000;
    c.tick(&mut env.ctx(), &mut meta);
    assert!(removes(&env.take()).is_empty(), "held while the failpoint is on");
    env.fp_off(FP_BLOCK_BEFORE_STOP_CHANGEFEED);
    env.now += 200;
    c.tick(&mut env.ctx(), &mut meta);
    let out = env.take();
    assert_eq!(removes(&out), vec![(m, true, false)]);
    assert!(traced(&out, "stop changefeed"));
    assert_eq!(adds(&out), 0);
}

/// `cdc cli changefeed resume` of a failed changefeed (`FeedState.IsResumable`,
/// pkg/config/changefeed.go:113-118): refused while its stop is held or in flight (the
/// model's simplification, docs/fidelity.md row 51), then accepted: Normal, error
/// cleared, placed again with a new epoch.
#[test]
fn a_failed_changefeed_is_resumed_once_its_stop_finished() {
    let mut env = Env::new(0);
    let (mut c, mut meta, m, epoch) = placed(&mut env);
    env.fp_on(FP_BLOCK_BEFORE_STOP_CHANGEFEED);
    c.handle_message(&mut env.ctx(), m, status(epoch, START, vec![gc_error()], false), &mut meta);
    env.take();
    assert!(!c.resume_changefeed(&mut env.ctx(), &cf(), &mut meta), "stop held");
    env.fp_off(FP_BLOCK_BEFORE_STOP_CHANGEFEED);
    env.now += 200;
    c.tick(&mut env.ctx(), &mut meta);
    assert_eq!(removes(&env.take()), vec![(m, true, false)]);
    assert!(!c.resume_changefeed(&mut env.ctx(), &cf(), &mut meta), "stop in flight");
    assert_eq!(meta.changefeeds[&cf()].state, FeedState::Failed);
    c.handle_message(&mut env.ctx(), m, status(epoch, START, vec![], true), &mut meta);
    assert!(traced(&env.take(), "changefeed stopped"));
    assert!(c.resume_changefeed(&mut env.ctx(), &cf(), &mut meta));
    let out = env.take();
    let info = &meta.changefeeds[&cf()];
    assert_eq!(info.state, FeedState::Normal);
    assert_eq!(info.last_error, None);
    assert!(traced(&out, "resume changefeed"));
    let new_epoch = out.msgs.iter().find_map(|e| match &e.msg {
        Message::AddMaintainerRequest { maintainer_epoch, .. } => Some(*maintainer_epoch),
        _ => None,
    });
    assert!(new_epoch.is_some_and(|e| e > epoch), "placed again with a new epoch: {:?}", new_epoch);
    // A running changefeed is not resumable.
    assert!(!c.resume_changefeed(&mut env.ctx(), &cf(), &mut meta));
}

/// Before its discovery ends a new coordinator has no changefeeds loaded: a pause,
/// resume or move is refused (TiCDC's API answers `changefeed not found`,
/// coordinator/controller.go:981-985, 1026-1029). A resume there used to leave the
/// discovered, stopping maintainer with no operator for it.
#[test]
fn a_coordinator_still_discovering_refuses_pause_resume_and_move() {
    let mut env = Env::new(0);
    let (mut c, mut meta, m, epoch) = placed(&mut env);
    assert!(c.pause_changefeed(&mut env.ctx(), &cf(), &mut meta));
    env.take();
    // The coordinator is lost; the next one hears from the stopping maintainer first.
    let mut c = Coordinator::new(n(CF_EPOCH_NODE), nodes(&[0, 1]));
    c.handle_message(&mut env.ctx(), m, status(epoch, START, vec![], false), &mut meta);
    assert!(!c.discovery_done());
    assert!(!c.resume_changefeed(&mut env.ctx(), &cf(), &mut meta));
    assert!(!c.pause_changefeed(&mut env.ctx(), &cf(), &mut meta));
    assert_eq!(c.move_maintainer(&mut env.ctx(), &cf(), if m == n(0) { n(1) } else { n(0) }, &mut meta), None);
    assert_eq!(meta.changefeeds[&cf()].state, FeedState::Stopped);
    let other = if m == n(0) { n(1) } else { n(0) };
    c.handle_message(&mut env.ctx(), other, Message::MaintainerHeartbeat { statuses: vec![] }, &mut meta);
    c.tick(&mut env.ctx(), &mut meta);
    assert!(c.discovery_done());
    assert!(c.resume_changefeed(&mut env.ctx(), &cf(), &mut meta));
}

/// A resume persists a new epoch at once (controller.go:1045-1046), even while the
/// paused generation's stop is still in flight: a coordinator that takes over before the
/// re-add must find that generation stale, not adopt it.
#[test]
fn a_resume_persists_a_new_epoch_before_the_re_add() {
    let mut env = Env::new(0);
    let (mut c, mut meta, _m, epoch) = placed(&mut env);
    assert!(c.pause_changefeed(&mut env.ctx(), &cf(), &mut meta));
    assert!(c.resume_changefeed(&mut env.ctx(), &cf(), &mut meta));
    assert_eq!(adds(&env.take()), 0, "the paused generation is still stopping");
    assert!(meta.changefeeds[&cf()].epoch > epoch, "the resume persisted a new epoch");
}

/// A coordinator that takes over after a resume bumped the epoch finds the paused
/// generation still running: stale (`selectBootstrapMaintainer`, coordinator/controller.go:827-874).
/// It stops it with its own epoch and places nothing until it reports stopped
/// (`stopStaleBootstrapMaintainers`, :855-891); meanwhile its statuses, errors included,
/// reach only that stop. Before, the model placed the next generation at once beside it,
/// and a manager still hosting the old one refused that add forever.
#[test]
fn a_new_coordinator_stops_a_stale_discovered_maintainer_before_placing_the_next() {
    let mut env = Env::new(0);
    let (mut c, mut meta, m, epoch) = placed(&mut env);
    assert!(c.pause_changefeed(&mut env.ctx(), &cf(), &mut meta));
    assert!(c.resume_changefeed(&mut env.ctx(), &cf(), &mut meta));
    env.take();
    let persisted = meta.changefeeds[&cf()].epoch;
    assert!(persisted > epoch);
    let mut c = Coordinator::new(n(CF_EPOCH_NODE), nodes(&[0, 1]));
    let other = if m == n(0) { n(1) } else { n(0) };
    c.handle_message(&mut env.ctx(), m, status(epoch, START, vec![], false), &mut meta);
    c.handle_message(&mut env.ctx(), other, Message::MaintainerHeartbeat { statuses: vec![] }, &mut meta);
    c.tick(&mut env.ctx(), &mut meta);
    let out = env.take();
    assert!(traced(&out, "ignore running maintainer with stale epoch when bootstrapping"));
    let stale_removes: Vec<(NodeId, Epoch)> = out
        .msgs
        .iter()
        .filter_map(|e| match &e.msg {
            Message::RemoveMaintainerRequest { cascade: true, maintainer_epoch, .. } => Some((e.to, *maintainer_epoch)),
            _ => None,
        })
        .collect();
    assert_eq!(stale_removes, vec![(m, epoch)], "a cascade remove with the stale epoch");
    assert_eq!(adds(&out), 0, "nothing placed while the stale owner runs");
    // Its fast-fail error is not the changefeed's: the status reaches only the stop.
    let e = RunningError { node: m, code: ErrorCode::SnapshotLostByGC, message: "lost".into() };
    c.handle_message(&mut env.ctx(), m, status(epoch, START, vec![e], false), &mut meta);
    env.now += 1000;
    c.tick(&mut env.ctx(), &mut meta);
    let out = env.take();
    assert_eq!(meta.changefeeds[&cf()].state, FeedState::Normal);
    assert_eq!(adds(&out), 0);
    assert_eq!(removes(&out), vec![(m, true, false)], "the stop is resent");
    // Stopped: the next generation is placed with an epoch above the persisted one.
    c.handle_message(&mut env.ctx(), m, status(epoch, START, vec![], true), &mut meta);
    c.tick(&mut env.ctx(), &mut meta);
    let out = env.take();
    assert!(traced(&out, "changefeed stopped"));
    assert_eq!(adds(&out), 1);
    assert!(meta.changefeeds[&cf()].epoch > persisted);
}

#[test]
fn retryable_error_warns_stops_and_restarts_after_backoff() {
    let mut env = Env::new(0);
    let (mut c, mut meta, m, epoch) = placed(&mut env);
    let e = RunningError { node: n(1), code: ErrorCode::DispatcherManagerWritePathClosed, message: "closed".into() };
    c.handle_message(&mut env.ctx(), m, status(epoch, START, vec![e], false), &mut meta);
    let out = env.take();
    assert_eq!(meta.changefeeds[&cf()].state, FeedState::Warning);
    assert_eq!(removes(&out), vec![(m, true, false)]);
    c.handle_message(&mut env.ctx(), m, status(epoch, START, vec![], true), &mut meta);
    env.take();
    env.now += BACKOFF_INITIAL_MS - 1;
    c.tick(&mut env.ctx(), &mut meta);
    assert_eq!(adds(&env.take()), 0, "not before the backoff");
    env.now += 1;
    c.tick(&mut env.ctx(), &mut meta);
    assert_eq!(adds(&env.take()), 1);
    assert_eq!(meta.changefeeds[&cf()].state, FeedState::Normal);
    assert!(meta.changefeeds[&cf()].epoch > epoch);
}

/// A retryable error persists a new epoch before the stop (`updateChangefeedEpoch`,
/// coordinator/coordinator.go:273-285), and the stop keeps the generation's own epoch. A
/// coordinator that takes over while that generation is still stopping finds it stale and
/// stops it, then places the changefeed. Before, the model kept the persisted epoch until
/// the restart: the new coordinator adopted the stopping generation as running, ignored
/// its `removed` report (it was not stopping it) and never placed the changefeed again.
#[test]
fn a_retryable_error_persists_a_new_epoch_so_a_new_coordinator_stops_the_old_generation() {
    let mut env = Env::new(0);
    let (mut c, mut meta, m, epoch) = placed(&mut env);
    let e = RunningError { node: n(1), code: ErrorCode::ChangefeedRetryable, message: "storage".into() };
    c.handle_message(&mut env.ctx(), m, status(epoch, START, vec![e], false), &mut meta);
    let out = env.take();
    let persisted = meta.changefeeds[&cf()].epoch;
    assert!(persisted > epoch, "the warning persisted a new epoch");
    assert_eq!(meta.changefeeds[&cf()].state, FeedState::Warning);
    let stop_epochs: Vec<Epoch> = out
        .msgs
        .iter()
        .filter_map(|e| match &e.msg {
            Message::RemoveMaintainerRequest { cascade: true, maintainer_epoch, .. } => Some(*maintainer_epoch),
            _ => None,
        })
        .collect();
    assert_eq!(stop_epochs, vec![epoch], "the stop carries the generation's own epoch");
    // The coordinator is lost before the generation reports stopped.
    let mut c = Coordinator::new(n(CF_EPOCH_NODE), nodes(&[0, 1]));
    let other = if m == n(0) { n(1) } else { n(0) };
    c.handle_message(&mut env.ctx(), m, status(epoch, START, vec![], false), &mut meta);
    c.handle_message(&mut env.ctx(), other, Message::MaintainerHeartbeat { statuses: vec![] }, &mut meta);
    c.tick(&mut env.ctx(), &mut meta);
    let out = env.take();
    assert!(!traced(&out, "discover running maintainer"));
    assert!(traced(&out, "ignore running maintainer with stale epoch when bootstrapping"));
    assert_eq!(removes(&out), vec![(m, true, false)]);
    assert_eq!(adds(&out), 0, "nothing placed while the old generation runs");
    // It reports stopped: the changefeed is placed again, above the persisted epoch.
    c.handle_message(&mut env.ctx(), m, status(epoch, START, vec![], true), &mut meta);
    env.now += BACKOFF_INITIAL_MS;
    c.tick(&mut env.ctx(), &mut meta);
    let out = env.take();
    assert_eq!(adds(&out), 1, "the changefeed is placed again");
    assert!(meta.changefeeds[&cf()].epoch > persisted);
}

/// A status of the stopped generation that arrives after its stop report (sent before the
/// stop, handled after it) is dropped: an initialized coordinator
/// adopts no running maintainer (`handleBootstrapResponses` returns once initialized,
/// coordinator/controller.go:553; `validateMaintainerNode` drops a status from a node
/// the changefeed is not on, :658-676). Adopting it made the coordinator resend the first
/// generation's add request to a node that had forgotten the maintainer: a zombie of the
/// old epoch that every dispatcher manager ignores, and no restart ever.
#[test]
fn a_late_status_of_the_stopped_generation_is_not_adopted() {
    let mut env = Env::new(0);
    let (mut c, mut meta, m, epoch) = placed(&mut env);
    let e = RunningError { node: n(1), code: ErrorCode::ChangefeedRetryable, message: "storage".into() };
    c.handle_message(&mut env.ctx(), m, status(epoch, START, vec![e], false), &mut meta);
    c.handle_message(&mut env.ctx(), m, status(epoch, START, vec![], true), &mut meta);
    assert!(traced(&env.take(), "changefeed stopped"));
    // The late status: sent while removing, handled after the stop report.
    c.handle_message(&mut env.ctx(), m, status(epoch, START, vec![], false), &mut meta);
    let out = env.take();
    assert!(!traced(&out, "discover running maintainer"));
    assert_eq!(c.maintainer_of(&cf()), None);
    // No resend of the old add request; the restart comes after the backoff, new epoch.
    for _ in 0..(BACKOFF_INITIAL_MS / 1000 - 1) {
        env.now += 1000;
        c.tick(&mut env.ctx(), &mut meta);
        assert_eq!(adds(&env.take()), 0, "nothing added before the backoff");
    }
    env.now += 1000;
    c.tick(&mut env.ctx(), &mut meta);
    let out = env.take();
    let new_epochs: Vec<Epoch> = out
        .msgs
        .iter()
        .filter_map(|e| match &e.msg {
            Message::AddMaintainerRequest { maintainer_epoch, .. } => Some(*maintainer_epoch),
            _ => None,
        })
        .collect();
    assert_eq!(new_epochs.len(), 1);
    assert!(new_epochs[0] > epoch);
}

/// `Changefeed.UpdateStatus`/`Backoff.CheckStatus`: a retryable error counts only in a
/// status that neither advances the checkpoint nor flips `BootstrapDone`; otherwise it is
/// dropped (the maintainer does not send it again). A fast-fail error always counts.
#[test]
fn a_retryable_error_in_a_status_that_advances_the_checkpoint_is_ignored() {
    let mut env = Env::new(0);
    let (mut c, mut meta, m, epoch) = placed(&mut env);
    let e = || RunningError { node: n(1), code: ErrorCode::DispatcherManagerWritePathClosed, message: "closed".into() };
    let with = |cp: Ts, errors: Vec<RunningError>, done: bool| Message::MaintainerHeartbeat {
        statuses: vec![MaintainerStatus {
            changefeed: cf(),
            checkpoint_ts: cp,
            bootstrap_done: done,
            errors,
            maintainer_epoch: epoch,
            removed: false,
        }],
    };
    // BootstrapDone flips in this status: ignored.
    c.handle_message(&mut env.ctx(), m, with(START, vec![e()], true), &mut meta);
    let out = env.take();
    assert!(traced(&out, "ignore maintainer error") && removes(&out).is_empty());
    // The checkpoint advances in this status: ignored.
    c.handle_message(&mut env.ctx(), m, with(START + 10, vec![e()], true), &mut meta);
    let out = env.take();
    assert!(traced(&out, "ignore maintainer error") && removes(&out).is_empty());
    assert_eq!(meta.changefeeds[&cf()].state, FeedState::Normal);
    // No progress since the last status: the error restarts the changefeed.
    c.handle_message(&mut env.ctx(), m, with(START + 10, vec![e()], true), &mut meta);
    let out = env.take();
    assert!(!traced(&out, "ignore maintainer error"));
    assert_eq!(removes(&out), vec![(m, true, false)]);
    assert_eq!(meta.changefeeds[&cf()].state, FeedState::Warning);
}

#[test]
fn a_fast_fail_error_counts_even_when_the_checkpoint_advances() {
    let mut env = Env::new(0);
    let (mut c, mut meta, m, epoch) = placed(&mut env);
    c.handle_message(&mut env.ctx(), m, status(epoch, START + 10, vec![gc_error()], false), &mut meta);
    assert_eq!(meta.changefeeds[&cf()].state, FeedState::Failed);
}

/// A move is admitted only after the add operator saw `BootstrapDone`; a maintainer that
/// then reports an error while the move of it is in flight still restarts the
/// changefeed, the stop replacing the move (`pushStopChangefeedOperator`).
#[test]
fn an_error_during_a_move_replaces_the_move_with_a_stop() {
    let mut env = Env::new(0);
    let (mut c, mut meta, m, epoch) = placed(&mut env);
    let dest = if m == n(0) { n(1) } else { n(0) };
    // Refused while the add operator waits for BootstrapDone.
    assert_eq!(c.move_maintainer(&mut env.ctx(), &cf(), dest, &mut meta), None);
    assert!(c.operator_in_flight(&cf()));
    let done = Message::MaintainerHeartbeat {
        statuses: vec![MaintainerStatus {
            changefeed: cf(),
            checkpoint_ts: START,
            bootstrap_done: true,
            errors: vec![],
            maintainer_epoch: epoch,
            removed: false,
        }],
    };
    c.handle_message(&mut env.ctx(), m, done, &mut meta);
    env.take();
    assert!(!c.operator_in_flight(&cf()));
    assert_eq!(c.move_maintainer(&mut env.ctx(), &cf(), dest, &mut meta), Some(m));
    assert_eq!(removes(&env.take()), vec![(m, false, false)]);
    // A status without error keeps the move going.
    let ok = Message::MaintainerHeartbeat {
        statuses: vec![MaintainerStatus {
            changefeed: cf(),
            checkpoint_ts: START,
            bootstrap_done: true,
            errors: vec![],
            maintainer_epoch: epoch,
            removed: false,
        }],
    };
    c.handle_message(&mut env.ctx(), m, ok, &mut meta);
    assert!(removes(&env.take()).is_empty());
    let e = RunningError {
        node: dest,
        code: ErrorCode::InitTableTriggerDispatcherFailed,
        message: "table trigger event dispatcher present during nil trigger bootstrap".into(),
    };
    let bad = Message::MaintainerHeartbeat {
        statuses: vec![MaintainerStatus {
            changefeed: cf(),
            checkpoint_ts: START,
            bootstrap_done: true,
            errors: vec![e],
            maintainer_epoch: epoch,
            removed: false,
        }],
    };
    c.handle_message(&mut env.ctx(), m, bad, &mut meta);
    let out = env.take();
    assert!(traced(&out, "move maintainer replaced by stop"));
    assert_eq!(removes(&out), vec![(m, true, false)], "a cascade stop of the move's origin");
    assert_eq!(meta.changefeeds[&cf()].state, FeedState::Warning);
    // Once stopped, the restart after the backoff places it anywhere (the move is gone).
    c.handle_message(&mut env.ctx(), m, status(epoch, START, vec![], true), &mut meta);
    env.take();
    env.now += BACKOFF_INITIAL_MS;
    c.tick(&mut env.ctx(), &mut meta);
    assert_eq!(adds(&env.take()), 1);
}

#[test]
fn new_coordinator_stops_a_discovered_maintainer_of_a_failed_changefeed() {
    let mut env = Env::new(1);
    let mut meta = MetaStore::default();
    meta.changefeeds.insert(
        cf(),
        ChangefeedInfo {
            id: cf(),
            config: Default::default(),
            epoch: 9,
            checkpoint_ts: START,
            state: FeedState::Failed,
            last_error: Some("[CDC:ErrSnapshotLostByGC] lost".into()),
            created: true,
        },
    );
    let mut c = Coordinator::new(n(1), nodes(&[0, 1]));
    c.handle_message(&mut env.ctx(), n(0), status(9, START, vec![], false), &mut meta);
    c.handle_message(&mut env.ctx(), n(1), Message::MaintainerHeartbeat { statuses: vec![] }, &mut meta);
    env.take();
    c.tick(&mut env.ctx(), &mut meta);
    let out = env.take();
    assert_eq!(removes(&out), vec![(n(0), true, false)]);
    assert_eq!(adds(&out), 0);
    assert_eq!(meta.changefeeds[&cf()].state, FeedState::Failed);
}

#[test]
fn a_removing_maintainer_does_not_bootstrap_a_joining_node() {
    let mut schema = TestSchema::with_tables(&[10]);
    schema.gc_fast_fail = true;
    let mut h = MH::new(&[0], schema);
    h.respond(0, NodeReport::default());
    // The coordinator's stop of the failed changefeed: cascade remove.
    let mut ctx = h.env.ctx();
    h.m.remove(&mut ctx, true, false);
    h.env.take();
    assert_eq!(h.m.state, MaintainerState::Removing);
    let out = h.node_change(&[0, 1]);
    assert!(!traced(&out, "maintainer node changed"));
    assert!(!out.msgs.iter().any(|e| matches!(e.msg, Message::MaintainerBootstrapRequest { .. })));
}

/// A generation moved right after its bootstrap: its post-bootstrap request, still
/// queued, finds the trigger the move removed. TiCDC reports that error (`onError`),
/// and the coordinator restarts the changefeed; the candidate fix
/// `ignore-post-bootstrap-error-when-removing` drops it while the maintainer is removing.
#[test]
fn a_post_bootstrap_error_while_removing_is_reported_unless_the_fix_drops_it() {
    for fix in [false, true] {
        let mut h = MH::new(&[0, 1], TestSchema::with_tables(&[10]));
        if fix {
            h.env = std::mem::replace(&mut h.env, Env::new(0))
                .with_fix(crate::bugs::Fix::IgnorePostBootstrapErrorWhenRemoving);
        }
        h.respond(0, NodeReport::default());
        h.respond(1, NodeReport::default());
        assert!(h.m.initialized() && !h.m.post_bootstrap_done);
        let mut ctx = h.env.ctx();
        h.m.remove(&mut ctx, false, false);
        h.env.take();
        assert_eq!(h.m.state, MaintainerState::Removing);
        let trigger = h.m.pipe.sc.ddl_span_id;
        let err = RunningError {
            node: n(0),
            code: ErrorCode::InitTableTriggerDispatcherFailed,
            message: "receive post bootstrap request but there is no table trigger event dispatcher".into(),
        };
        let out = h.handle(
            0,
            Message::MaintainerPostBootstrapResponse {
                cf: cf(),
                table_trigger_event_dispatcher_id: trigger,
                err: Some(err),
                maintainer_epoch: h.m.epoch,
            },
        );
        if fix {
            assert!(traced(&out, "ignore post bootstrap error while removing"));
            assert!(h.m.errors.is_empty());
        } else {
            assert!(traced(&out, "post bootstrap failed"));
            assert_eq!(errors_of(&h), vec![ErrorCode::InitTableTriggerDispatcherFailed]);
        }
    }
}
