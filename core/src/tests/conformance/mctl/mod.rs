//! mctl group: `maintainer/maintainer_controller_test.go`, `maintainer_test.go`,
//! `maintainer_manager_test.go`, `node_liveness_test.go` at b813e76f9.

mod maintainer;
mod maintainer_controller;
mod maintainer_manager;
mod node_liveness;
mod support;
