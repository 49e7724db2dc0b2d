//! `maintainer/node_liveness_test.go` at b813e76f9: only the add-maintainer validation is in
//! the model (node liveness and dispatcher drain targets are not).

use super::maintainer_manager::MM;
use super::support::*;
use crate::config::ChangefeedConfig;
use crate::messages::*;

// node_liveness_test.go:242 — an add-maintainer request with checkpoint 0 is ignored: no
// maintainer is created.
#[test]
fn ticdc_node_liveness_TestAddMaintainerIgnoreInvalidCheckpointTs() {
    let mut m = MM::new();
    let out = m.handle(Message::AddMaintainerRequest {
        cf: cf(),
        config: ChangefeedConfig::default(),
        checkpoint_ts: 0,
        is_new_changefeed: false,
        maintainer_epoch: 1,
    });
    assert!(!out.msgs.iter().any(|e| matches!(e.msg, Message::MaintainerBootstrapRequest { .. })));
    assert!(!m.mm.maintainers.contains_key(&cf()));
}
