//! Sinks. Only the cloud-storage sink is modelled: it is the one whose close/flush
//! race turned a duplicate dispatcher into a changefeed restart (seed 000). With
//! syncpoints on, dispatcher creation also reads the MySQL sink's `ddl_ts` rows
//! ([`ddl_ts`]), as TiCDC allows syncpoints only with that sink.
pub mod cloudstorage;
pub mod ddl_ts;
pub mod redo;
pub mod redo_meta;
