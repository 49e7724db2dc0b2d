//! Group `disp`: TiCDC's dispatcher-side unit tests (`downstreamadapter/dispatcher`,
//! `dispatchermanager`, `dispatcherorchestrator`) at b813e76f9. The row per Go test, with
//! the ones the model cannot express, is in `docs/conformance/disp.md`.

mod support;

mod dispatcher_manager;
mod dispatcher_orchestrator;
mod event_dispatcher;
mod helper;
mod redo_dispatcher;
mod redo_meta;
mod table_progress;
mod task;
