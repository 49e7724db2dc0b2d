//! Scenarios: the TOML format ([`mod@format`]) and loading/validation ([`load`]).
pub mod format;
pub mod load;
pub use format::*;
