//! # The redo log: one circular file, a concurrent log buffer, group commit, checkpoints
//!
//! The log turns each mini-transaction's redo (an opaque payload here; the mtr layer defines
//! the records) into a checksummed *frame* at a range of LSNs, writes frames to `redo.log`,
//! and after a crash gives back exactly the complete frames, in order. Byte layout, the
//! concurrency scheme and the crash analysis are in `docs/redo-log.md`.
//!
//! ```text
//!   append()  ──reserve (fetch_add)──► copy into ring ──publish──► links ─► filled
//!                                                                            │
//!   commit_wait() / write_up_to() ── write gate: write [written, filled) + pad ┘
//!                                  ── flush gate: sync once ─► flushed ─► all waiters woken
//!   checkpoint(lsn) ── alternate slot, sync ─► frees [old ckpt, lsn) for reuse
//! ```
//!
//! Files, bottom-up:
//! * [`format`]: header block, checkpoint slots, frames (pure bytes).
//! * `file`: positioned, aligned I/O on the data area (O_DIRECT or buffered).
//! * `buffer`: the ring buffer, LSN reservation and completion tracking (lesson 3).
//! * [`reader`]: scanning frames from a checkpoint.
//! * `gate`: group commit's gates: one thread does the I/O, the others are woken together.
//! * `writer`: [`Log`]: appends, group commit, checkpoints, counters.
//! * `open`: create, open, recovery scan. `resize`: online resize. `flusher`:
//!   `innodb_flush_log_at_trx_commit` and the once-a-second thread. `prewrite`: zeros
//!   written ahead of the log in each file's first lap.
//!
//! Invariants (asserted in `writer`):
//! 1. `checkpoint ≤ flushed ≤ stable ≤ written ≤ filled ≤ reserved` (all LSNs, all
//!    monotonic).
//! 2. No write to the file overwrites log at or after the checkpoint LSN: every byte written
//!    is below `checkpoint + capacity`.
//! 3. The ring holds `[written, reserved)`; no appender copies below `reserved − buffer_size`,
//!    so bytes not yet written are never overwritten.
//! 4. `flushed` only covers log that a sync (or an O_DSYNC write) made durable; a commit is
//!    acknowledged only at or below `flushed` (a failed write or sync aborts: never
//!    acknowledge).
//! 5. A checkpoint LSN is published only after its slot is durable.
//! 6. No durable byte is ever written again: with O_DIRECT a durable write first pads the
//!    log to a block boundary (a padding frame), and `flushed` only reaches such `stable`
//!    LSNs, so the rewritten partial last block never holds acknowledged log.
//! 7. A reserved LSN range never waits for a checkpoint (space is claimed before reserving).
//! 8. A mini-transaction never waits for log space while holding page latches: `free_check`
//!    reserves its space before it latches anything, and an append inside a reservation
//!    never waits for a checkpoint (`writer`, invariant 8, with the bound for frames that
//!    overrun their reservation).

mod buffer;
mod file;
mod flusher;
pub mod format;
mod gate;
mod open;
mod prewrite;
pub mod reader;
mod resize;
mod writer;

use std::path::PathBuf;

use quire_io::IoError;

pub use flusher::FlushAtCommit;
pub use open::Recovery;
pub use reader::{Frame, FrameRef, LogReader};
pub use writer::{Log, LogReservation, LogStats, LsnRange, MTR_RESERVATION};

/// The log file's name in the data directory.
pub const LOG_FILE: &str = "redo.log";
/// The file an online resize builds before renaming it over [`LOG_FILE`].
pub const LOG_FILE_NEW: &str = "redo.log.new";

/// Configuration, in InnoDB's terms.
#[derive(Debug, Clone)]
pub struct LogConfig {
    /// `innodb_log_file_size`: the circular data area, in bytes (rounded down to 4 KiB). Any
    /// size from 64 KiB, far beyond 4 GiB.
    pub file_size: u64,
    /// `innodb_log_buffer_size`: the ring buffer (rounded up to a power of two, ≥ 64 KiB).
    pub buffer_size: u64,
    /// `innodb_flush_log_at_trx_commit`.
    pub flush_at_commit: FlushAtCommit,
    /// Try O_DIRECT (used only if the file system reports its alignment, lesson 3).
    pub direct: bool,
    /// Open with O_DSYNC: writes are durable on return, no separate sync.
    pub dsync: bool,
    /// Allocate the file with fallocate at creation (lesson 5); off gives a sparse file.
    pub preallocate: bool,
    /// Run the once-a-second background flush thread.
    pub background_flush: bool,
    /// Bytes of the file's first lap to keep written ahead of the log (`prewrite`); 0 turns
    /// the pre-writer off. It runs only where [`quire_io::Vfs::first_writes_cost_more`].
    pub prewrite_ahead: u64,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            file_size: 96 << 20,
            buffer_size: 16 << 20,
            flush_at_commit: FlushAtCommit::Durable,
            direct: true,
            dsync: false,
            preallocate: true,
            background_flush: true,
            prewrite_ahead: 0,
        }
    }
}

impl LogConfig {
    /// The data-area capacity this configuration asks for.
    pub fn capacity(&self) -> u64 {
        self.file_size - self.file_size % format::BLOCK
    }
    /// The ring buffer size actually used.
    pub fn ring_size(&self) -> u64 {
        self.buffer_size.max(64 << 10).next_power_of_two()
    }
    /// The most redo one mini-transaction may write with this configuration.
    pub fn max_payload(&self) -> u64 {
        format::max_payload(self.ring_size(), self.capacity())
    }
    /// The smallest `innodb_log_buffer_size` and `innodb_log_file_size` whose frames hold
    /// `payload` bytes.
    pub fn size_for_payload(payload: u64) -> u64 {
        (payload + format::FRAME_OVERHEAD) * 4
    }
    pub(crate) fn validate(&self) -> Result<()> {
        if self.capacity() < format::MIN_CAPACITY {
            return Err(LogError::BadConfig(format!(
                "innodb_log_file_size = {} is below the minimum {}",
                self.file_size,
                format::MIN_CAPACITY
            )));
        }
        if self.buffer_size > 1 << 32 {
            return Err(LogError::BadConfig(format!(
                "innodb_log_buffer_size = {} is above the maximum 4 GiB",
                self.buffer_size
            )));
        }
        Ok(())
    }
}

/// What can go wrong in the log layer. Each variant names the file and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("{}: the redo log does not exist (create the data directory first)", path.display())]
    Missing { path: PathBuf },
    #[error("{}: the redo log already exists", path.display())]
    AlreadyExists { path: PathBuf },
    #[error("{}: corrupt redo log: {what}", path.display())]
    Corrupt { path: PathBuf, what: String },
    #[error("redo payload of {len} bytes exceeds the maximum of {max} bytes")]
    PayloadTooLarge { len: u64, max: u64 },
    #[error("an empty redo payload cannot be framed")]
    EmptyPayload,
    #[error("bad log configuration: {0}")]
    BadConfig(String),
    #[error(
        "cannot resize the redo log to {new_capacity} bytes: the checkpoint age is {checkpoint_age} \
         bytes; make a checkpoint first"
    )]
    ResizeTooSmall {
        new_capacity: u64,
        checkpoint_age: u64,
    },
    #[error(transparent)]
    Io(#[from] IoError),
}

pub type Result<T> = std::result::Result<T, LogError>;

impl LogError {
    /// The file system refused to grow the redo log (a resize on a full disk).
    pub fn is_disk_full(&self) -> bool {
        matches!(self, LogError::Io(e) if e.kind == quire_io::ErrorKind::NoSpace)
    }
}
