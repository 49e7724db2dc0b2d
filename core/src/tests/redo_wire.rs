//! Redo (consistent) mode on the wire: the mode fields, the redo bootstrap fields and the
//! three redo messages (`heartbeat.proto:84-108`), which nothing handles yet.

use super::harness::*;
use crate::messages::*;
use crate::types::*;

fn json(m: &Message) -> String {
    serde_json::to_string(m).unwrap()
}

/// Default-mode messages serialize exactly as they did before redo existed, and a message
/// without the new fields parses with them defaulted.
#[test]
fn default_mode_fields_are_invisible_on_the_wire() {
    let hb = heartbeat(START, 1, vec![st(d(1), ComponentState::Working, START)]);
    let s = json(&hb);
    for f in ["mode", "redo_watermark"] {
        assert!(!s.contains(f), "{f} in {s}");
    }
    assert_eq!(serde_json::from_str::<Message>(&s).unwrap(), hb);

    let req = bootstrap_req(START, Some(d(9)), EPOCH);
    let s = json(&req);
    assert!(!s.contains("table_trigger_redo_dispatcher_id"), "{s}");
    let Message::MaintainerBootstrapRequest { table_trigger_redo_dispatcher_id, .. } =
        serde_json::from_str(&s).unwrap()
    else {
        panic!("not a bootstrap request")
    };
    assert_eq!(table_trigger_redo_dispatcher_id, None);

    let resp =
        bootstrap_resp(vec![bspan(d(1), TableSpan::full(10), ComponentState::Working, START)], START, vec![], vec![]);
    let s = json(&resp);
    assert!(!s.contains("redo_checkpoint_ts") && !s.contains("mode"), "{s}");
    assert_eq!(serde_json::from_str::<Message>(&s).unwrap(), resp);
}

/// Redo-mode fields survive a round trip.
#[test]
fn redo_mode_fields_round_trip() {
    let mut status = st(d(1), ComponentState::Working, START);
    status.mode = Mode::Redo;
    let wm = Watermark { checkpoint_ts: START, resolved_ts: START + 5, seq: 3 };
    let hb = Message::HeartBeatRequest {
        cf: cf(),
        watermark: wm,
        redo_watermark: Some(wm),
        statuses: vec![status],
        complete_status: true,
        err: None,
    };
    let mut cfg = dconfig(d(2), TableSpan::full(10), START);
    cfg.mode = Mode::Redo;
    let msgs = [
        hb,
        Message::MaintainerBootstrapResponse {
            cf: cf(),
            spans: vec![],
            checkpoint_ts: START,
            redo_checkpoint_ts: START - 1,
            operators: vec![],
            merge_operators: vec![],
            err: None,
            maintainer_epoch: EPOCH,
        },
        Message::HeartBeatResponse { cf: cf(), statuses: vec![], mode: Mode::Redo, maintainer_epoch: EPOCH },
        Message::BlockStatusRequest { cf: cf(), statuses: vec![], mode: Mode::Redo },
        sched(ScheduleDispatcherRequest {
            config: cfg,
            action: ScheduleAction::Create,
            operator_type: OperatorType::Add,
            maintainer_epoch: EPOCH,
        }),
    ];
    for m in msgs {
        let s = json(&m);
        assert!(s.contains("Redo") || s.contains("redo_"), "{s}");
        assert_eq!(serde_json::from_str::<Message>(&s).unwrap(), m);
    }
}

/// The three redo messages: names, handlers, stream and which carry an epoch
/// (`maintainer.go:615, 681`, `dispatcher_manager_redo.go:396`, `heartbeat_collector.go:279-288`,
/// `maintainer_manager.go:120-122`).
#[test]
fn redo_messages_route_like_ticdc() {
    let meta = Message::RedoMetaMessage { cf: cf(), checkpoint_ts: 1, resolved_ts: 2, maintainer_epoch: EPOCH };
    let progress = Message::RedoResolvedTsProgressMessage { cf: cf(), resolved_ts: 2 };
    let forward = Message::RedoResolvedTsForwardMessage { cf: cf(), resolved_ts: 2, maintainer_epoch: EPOCH };
    assert_eq!(
        [meta.name(), progress.name(), forward.name()],
        ["RedoMetaMessage", "RedoResolvedTsProgressMessage", "RedoResolvedTsForwardMessage"]
    );
    assert_eq!(
        [meta.topic(), progress.topic(), forward.topic()],
        [Topic::HeartbeatCollector, Topic::MaintainerManager, Topic::HeartbeatCollector]
    );
    assert!([&meta, &progress, &forward].iter().all(|m| m.stream() == Stream::Command));
    assert_eq!(
        [meta.maintainer_epoch(), progress.maintainer_epoch(), forward.maintainer_epoch()],
        [Some(EPOCH), None, Some(EPOCH)]
    );
    for m in [&meta, &progress, &forward] {
        assert_eq!(&serde_json::from_str::<Message>(&json(m)).unwrap(), m);
    }
}

/// Until the managers' redo handlers land, a dispatcher manager takes the redo messages
/// without any effect.
#[test]
fn redo_messages_are_ignored_for_now() {
    let (mut dm, mut env) = super::fencing::owned(1, None, Env::new(1));
    let seq = dm.seq;
    for m in [
        Message::RedoMetaMessage { cf: cf(), checkpoint_ts: START, resolved_ts: START + 10, maintainer_epoch: EPOCH },
        Message::RedoResolvedTsForwardMessage { cf: cf(), resolved_ts: START + 10, maintainer_epoch: EPOCH },
    ] {
        let (r, o) = dm_handle(&mut dm, &mut env, 0, m);
        assert!(r.is_none() && o.msgs.is_empty() && o.trace.is_empty() && o.observations.is_empty());
    }
    assert_eq!(dm.seq, seq);
}
