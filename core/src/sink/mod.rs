//! Sinks. Only the cloud-storage sink is modelled: it is the one whose close/flush
//! race turned a duplicate dispatcher into a changefeed restart (seed 000).
pub mod cloudstorage;
