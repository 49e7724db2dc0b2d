//! The dispatcher side: orchestrator (one per node), dispatcher managers (one per
//! changefeed per node) and dispatchers (one per table span, plus the table trigger
//! event dispatcher on the maintainer's node).
pub mod basic_dispatcher;
pub mod manager;
pub mod orchestrator;

pub use basic_dispatcher::Dispatcher;
pub use manager::DispatcherManager;
pub use orchestrator::DispatcherOrchestrator;
