//! Fencing of stale owners: `epoch-fencing` (a dispatcher manager applies no control
//! message of an older maintainer epoch) and `no-write-after-fence` (a capture that
//! local-fenced after losing its etcd session issues no downstream write).
//!
//! TiCDC's promise: after a maintainer takeover the departed generation's requests are
//! dropped (PRs #5434-#5436, §11), and a capture without a session stops writing before
//! its dispatchers are re-placed elsewhere. Caught: `no-epoch-fencing` (seed 004).

use super::*;
use core_sched::types::*;

/// `no-write-after-fence`: storage writes (puts and renames; the best-effort cleanup of
/// temporary objects is not a write of data) issued by node `n` in one step that began
/// with its capture fenced for writing: the orchestrator local-fenced and every dispatcher
/// manager's write path closed. `LocalFence` closes the write path under `writePathMu`
/// (dispatcher_manager.go:1053-1080), so it waits behind a table trigger's schema-store
/// initialisation holding that lock (:486-497); writes before the close are TiCDC's.
pub fn check_no_write_after_fence(
    n: NodeId,
    fenced: bool,
    reqs: &[core_sched::effects::StorageRequest],
) -> Vec<(&'static str, String)> {
    use core_sched::effects::StorageRequest;
    if !fenced {
        return vec![];
    }
    reqs.iter()
        .filter_map(|r| match r {
            StorageRequest::Put { path, .. } => Some(format!("capture {} put {} after its local fence", n, path)),
            StorageRequest::Rename { to, .. } => {
                Some(format!("capture {} renamed onto {} after its local fence", n, to))
            }
            StorageRequest::Delete { .. } | StorageRequest::ListRedoMeta { .. } => None,
        })
        .map(|d| (NO_WRITE_AFTER_FENCE, d))
        .collect()
}

/// `epoch-fencing` for an observed apply of an older epoch's control message.
pub fn older_epoch_applied(
    n: NodeId,
    cf: &ChangefeedId,
    message: &str,
    from: NodeId,
    epoch: Epoch,
    current_epoch: Epoch,
) -> (&'static str, String) {
    (
        EPOCH_FENCING,
        format!(
            "dispatcher manager on {} applied a control message from an older maintainer epoch: \
             changefeed={} message={} from={} epoch={} current_epoch={}",
            n, cf, message, from, epoch, current_epoch
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use core_sched::effects::{ObjectContent, StorageRequest};

    fn put() -> StorageRequest {
        StorageRequest::Put { op_id: 1, path: "db/t/a.tmp".into(), content: ObjectContent::Rows(vec![]) }
    }

    #[test]
    fn no_write_after_fence_fires_on_a_fenced_put_or_rename() {
        let rename = StorageRequest::Rename { op_id: 2, from: "a.tmp".into(), to: "a".into() };
        let found = check_no_write_after_fence(NodeId(1), true, &[put(), rename]);
        assert_eq!(found.len(), 2);
        assert!(found.iter().all(|(inv, _)| *inv == NO_WRITE_AFTER_FENCE));
    }

    #[test]
    fn no_write_after_fence_is_quiet_before_the_fence_and_for_cleanup() {
        assert!(check_no_write_after_fence(NodeId(1), false, &[put()]).is_empty());
        assert!(check_no_write_after_fence(NodeId(1), true, &[StorageRequest::Delete { paths: vec!["a.tmp".into()] }])
            .is_empty());
    }
}
