//! # quire-engine
//!
//! The storage engine, one module per layer, bottom-up. A module only uses modules listed
//! above it here (checked by `tests/layering.rs`); where a lower layer must call an upper one
//! (the buffer pool must force the log before writing a page), the lower layer defines a
//! trait and the upper one implements it.
//!
//! | module  | owns |
//! |---------|------|
//! | [`hash`]     | the hash maps of hot paths (foldhash's seeded fast hasher) |
//! | [`page`]     | page ids, LSNs, the page header/trailer, checksums |
//! | [`row`]      | column types, values, record formats and memcomparable keys (no I/O) |
//! | [`lock`]     | row locks: the sharded lock table, lock waits, deadlock detection (in memory) |
//! | [`space`]    | tablespace files: reading, writing and extending pages |
//! | [`buffer`]   | the buffer pool: page table, latches, LRU, flush list, page cleaner |
//! | [`log`]      | the redo log: file, log buffer, group commit, checkpoints |
//! | [`mtr`]      | mini-transactions: redo records, latching and commit |
//! | [`doublewrite`] | the doublewrite file: batches of pages recovery would need to read; restore |
//! | [`alloc`]    | extents, free lists and page allocation inside a space |
//! | [`btree`]    | B+trees over memcomparable keys: slotted pages, latch coupling, splits and merges |
//! | [`catalog`]  | the data dictionary: one B-tree in the system space, its record format |
//! | [`recovery`] | redo scan, file replay, parallel page apply |
//! | [`check`]    | the offline consistency check behind `quire check` |
//! | [`config`]   | settings under InnoDB's variable names |
//! | [`engine`]   | one open data directory: recovery, checkpoints, the API above |
//! | [`table`]    | the embedded API: databases, tables, indexes, rows; crash-safe DDL |
//!
//! All file I/O goes through [`quire_io`], so the same code runs on the disk and on the
//! fault-injecting simulator.

#![deny(clippy::unwrap_used)]

pub mod alloc;
pub mod btree;
pub mod buffer;
pub mod catalog;
pub mod check;
pub mod config;
pub mod doublewrite;
pub mod engine;
pub mod hash;
pub mod lock;
pub mod log;
pub mod mtr;
pub mod page;
pub mod recovery;
pub mod row;
pub mod space;
pub mod table;
pub mod trx;
pub mod undo;

pub use engine::{Engine, EngineError};
