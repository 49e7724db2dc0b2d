//! `maintainer/block_status_dedupe_test.go`: no case. Its three tests check the
//! maintainer's event-queue filter (`filterBlockStatusEvent`, `pushEvent` with
//! `blockStatusPending` reserve/release keys, `eventCh`). The model has no maintainer
//! event queue (messages are handled as they arrive) and no de-duplication of block
//! statuses (docs/fidelity.md #29); see docs/conformance/barrier.md.
