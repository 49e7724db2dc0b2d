//! Loading and validating scenario files (owned by the CLI work; placeholder).
use super::Scenario;

/// A scenario and the file it came from.
pub struct Loaded {
    pub scenario: Scenario,
    pub path: std::path::PathBuf,
    pub source: String,
}
