//! Scenarios: the TOML format ([`format`]) and loading/validation ([`load`]).
pub mod format;
pub mod load;
pub use format::*;
