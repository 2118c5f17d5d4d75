//! # The buffer pool
//!
//! A fixed number of page frames (`innodb_buffer_pool_size / page_size`) in one aligned
//! allocation, and the structures that decide which page lives where:
//!
//! ```text
//!   get_shared(id) ──► page-table index (no lock) ──► pin, check page ──► latch S/SX/X ──► guard
//!                          │ not indexed, or lost a race with eviction       ▲
//!                          ▼                                                 │
//!                      page-table shard (RwLock, read) ──► pin ──────────────┘
//!                          │ miss
//!                          ▼
//!   pool mutex: free list ─┴─ or evict the LRU tail ──► map id (X-latched, READING) ──► pread
//!
//!   PageMut::mark_dirty ──► flush list (by oldest modification) ──► cleaner / eviction
//!        copy under S ──► WalGate::flush_up_to(page LSN) ──► PageWriter::write_batch
//! ```
//!
//! | file | owns |
//! |------|------|
//! | `frame.rs` | frame control blocks, the page memory, latch modes |
//! | `guard.rs` | [`PageRef`], [`PageSx`], [`PageMut`] |
//! | `page_table.rs` | the sharded PageId → frame map, its lock-free index; the hit path |
//! | `lru.rs` | the LRU list with midpoint insertion |
//! | `flush_list.rs` | dirty frames by oldest modification |
//! | `writer.rs` | [`PageWriter`], the replaceable batch write path |
//! | `pool.rs` | [`BufferPool`]: reads, eviction, flushing, discard |
//! | `cleaner.rs` | [`PageCleaner`] and its policy, [`plan_flush`] |
//!
//! Lock order (a thread only takes locks to the right of those it holds):
//! page latch → pool mutex (LRU, free list, per-space sets) → page-table shard → flush list.
//! Nobody waits for a page latch while holding one of the mutexes, and the flushing paths
//! only *try* page latches, so a thread that holds page latches can always evict.
//!
//! Layering: the buffer pool sits above `page` and `space` and below the log. It reaches the
//! log through [`WalGate`] (the write-ahead rule) and the doublewrite buffer through
//! [`PageWriter`].

mod cleaner;
mod flush_list;
mod frame;
mod guard;
mod lru;
mod page_table;
mod pool;
mod writer;

#[cfg(test)]
mod tests;

pub use cleaner::{plan_flush, CleanerInputs, CleanerPlan, PageCleaner};
pub use guard::{PageMut, PageRef, PageSx};
pub use pool::{BufferPool, StructureCheck};
pub use writer::{adjacent_runs, write_home, FlushPage, PageWriter, SpaceWriter};

use crate::page::{Lsn, PageSize, SpaceId};
use crate::space::SpaceError;

/// The write-ahead rule, implemented by the redo log: a page whose LSN is L may be written
/// only once the log is durable up to L. Otherwise a crash could leave on disk a page change
/// whose redo is lost, and recovery could not tell.
pub trait WalGate: Send + Sync {
    /// Returns once the log is durable up to at least `lsn`.
    fn flush_up_to(&self, lsn: Lsn);
    /// How far the log is durable, if known: lets the pool assert the rule after
    /// `flush_up_to`.
    fn durable_lsn(&self) -> Option<Lsn> {
        None
    }
}

/// No redo log yet (or none wanted, as in a bulk load without redo): nothing to wait for.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoWal;

impl WalGate for NoWal {
    fn flush_up_to(&self, _lsn: Lsn) {}
}

/// Buffer pool settings. Names follow InnoDB's variables.
#[derive(Debug, Clone)]
pub struct BufferConfig {
    /// `innodb_buffer_pool_size`, bytes.
    pub size_bytes: u64,
    pub page_size: PageSize,
    /// `innodb_old_blocks_pct`: share of the LRU list kept as the old sublist (5–95).
    pub old_blocks_pct: u32,
    /// `innodb_old_blocks_time`: an old page is promoted only when accessed this long after
    /// it was read.
    pub old_blocks_time_ms: u64,
    /// `innodb_max_dirty_pages_pct`: above it, the cleaner flushes at `io_capacity_max`.
    pub max_dirty_pages_pct: u32,
    /// `innodb_max_dirty_pages_pct_lwm`: above it (and non-zero), the cleaner flushes a share
    /// of `io_capacity` proportional to how close the pool is to the maximum.
    pub max_dirty_pages_pct_lwm: u32,
    /// `innodb_io_capacity`: pages per second of background flushing.
    pub io_capacity: u32,
    /// `innodb_io_capacity_max`: pages per second when flushing urgently.
    pub io_capacity_max: u32,
    /// `innodb_lru_scan_depth`: the cleaner keeps up to this many free frames ready
    /// (capped at 1/16 of the pool).
    pub lru_scan_depth: u32,
    /// Pages per `PageWriter::write_batch` call.
    pub flush_batch_pages: u32,
    /// How long a request waits for a frame when every frame is pinned before it fails
    /// with [`BufferError::PoolExhausted`].
    pub pool_exhausted_wait_ms: u64,
    /// How long `discard_space` waits for pinned pages of the space to be released.
    pub discard_wait_ms: u64,
    /// The page cleaner's period when nobody wakes it.
    pub cleaner_interval_ms: u64,
}

impl Default for BufferConfig {
    fn default() -> Self {
        BufferConfig {
            size_bytes: 128 << 20,
            page_size: PageSize::DEFAULT,
            old_blocks_pct: 37,
            old_blocks_time_ms: 1000,
            max_dirty_pages_pct: 90,
            max_dirty_pages_pct_lwm: 10,
            io_capacity: 200,
            io_capacity_max: 2000,
            lru_scan_depth: 1024,
            flush_batch_pages: 128,
            pool_exhausted_wait_ms: 1000,
            discard_wait_ms: 5000,
            cleaner_interval_ms: 1000,
        }
    }
}

/// The smallest pool: enough for a B-tree descent holding a few latches.
pub const MIN_FRAMES: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum BufferError {
    #[error(
        "buffer pool exhausted: all {frames} frames are pinned or being written \
         (waited {waited_ms} ms); raise innodb_buffer_pool_size"
    )]
    PoolExhausted { frames: usize, waited_ms: u64 },
    #[error("space {space}: {pinned} pages still in use after {waited_ms} ms, cannot discard")]
    SpaceInUse {
        space: SpaceId,
        pinned: usize,
        waited_ms: u64,
    },
    #[error("invalid buffer pool configuration: {0}")]
    Config(String),
    #[error(transparent)]
    Space(#[from] SpaceError),
}

impl BufferError {
    /// A space file could not grow: the disk is full.
    pub fn is_disk_full(&self) -> bool {
        matches!(self, BufferError::Space(s) if s.is_disk_full())
    }
}

/// Counters, with InnoDB's status names where they mean the same.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BufferStats {
    /// Frames in the pool (`Innodb_buffer_pool_pages_total`).
    pub frames: usize,
    /// `Innodb_buffer_pool_pages_free`.
    pub free_frames: usize,
    /// `Innodb_buffer_pool_pages_dirty`: frames on the flush list.
    pub dirty_pages: usize,
    /// Frames on the LRU list, and how many of them are in its old sublist.
    pub lru_len: usize,
    pub lru_old_len: usize,
    /// Requests served from memory (including waits for a read in progress).
    pub hits: u64,
    /// Requests that had to read the page (`Innodb_buffer_pool_reads`).
    pub misses: u64,
    /// `Innodb_pages_read`: pages read and verified.
    pub pages_read: u64,
    /// `Innodb_pages_created`.
    pub pages_created: u64,
    /// `Innodb_pages_written`.
    pub pages_written: u64,
    /// `PageWriter::write_batch` calls.
    pub flush_batches: u64,
    /// Clean pages evicted to make room.
    pub evictions: u64,
    /// `Innodb_buffer_pool_pages_made_young`.
    pub made_young: u64,
    /// Pages dropped by `discard_space`.
    pub discarded: u64,
}
