//! # Mini-transactions: the unit of atomic page change
//!
//! An mtr latches pages, changes them, and describes each change as a redo record
//! ([`record`]). At commit its records become one frame in the redo log; recovery applies
//! whole mtrs only. (The mtr itself lands with step 2's integration of log and buffer pool.)

pub mod record;
