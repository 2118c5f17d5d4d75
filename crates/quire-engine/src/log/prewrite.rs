//! # Pre-writing the first lap of the log file
//!
//! `create` reserves `redo.log` with fallocate (lesson 5): its blocks are allocated but
//! unwritten. The first write into such a block converts its extent, and the commit's sync
//! must then commit the file system's journal too: a durable commit costs about twice as
//! much until the log has come round once. This thread writes zeros a window ahead of the
//! log during each file's first lap, and syncs them, so that commits write into blocks
//! written before. Measurements and the crash analysis: `docs/redo-log.md`, "Pre-writing
//! the first lap".
//!
//! Invariants (asserted here and in `writer`):
//! 1. A chunk starts at or after `reserved + BLOCK`, `reserved` read *after* its start was
//!    published in `claim` (and at or after `reserved + PREWRITE_MARGIN` read before): no
//!    byte of a chunk holds log, or will while it is written.
//! 2. A log write ending past `claim` takes `busy` first, so it never overlaps a chunk being
//!    written (`Shared::before_file_write`).
//! 3. Chunks lie in the file's first lap, `[created, created + capacity)`, which ends by
//!    `checkpoint + capacity`: writer invariant 2 holds for them as for the log.
//! 4. `busy` is never held with another log lock; resize takes it last (after the writer
//!    and checkpoint mutexes) to start a new file's lap.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use super::format::{self, BLOCK};
use super::writer::Shared;

/// The most one chunk writes before its sync.
pub(crate) const PREWRITE_CHUNK: u64 = 1 << 20;
/// How far past the last reservation a chunk starts, at least: room for the log to grow
/// while the pre-writer decides, so that it rarely has to give a chunk up.
pub(crate) const PREWRITE_MARGIN: u64 = 64 << 10;
const _: () = assert!(PREWRITE_MARGIN >= BLOCK && PREWRITE_CHUNK.is_multiple_of(BLOCK));
/// Backstop for a lost kick.
const IDLE_TICK: Duration = Duration::from_millis(100);
/// No chunk in flight.
const NO_CLAIM: u64 = u64::MAX;

/// The pre-writer's state, shared with the log writer.
#[derive(Debug)]
pub(crate) struct Prewrite {
    /// Bytes to keep written ahead of `reserved` (0: the thread is not started).
    pub ahead: u64,
    /// Held while a chunk is written (invariant 2).
    pub busy: Mutex<()>,
    /// The start LSN of the chunk being written, [`NO_CLAIM`] if none.
    claim: AtomicU64,
    /// The first lap of the current file is known written (by the log or by zeros) up to
    /// here, from the point this run started looking.
    done: AtomicU64,
    /// `created + capacity` of the current file: from there on the circle has come round.
    lap_end: AtomicU64,
    kicked: AtomicBool,
    stopped: Mutex<bool>,
    cv: Condvar,
    /// `prewritten_bytes` in [`super::LogStats`].
    pub bytes: AtomicU64,
}

impl Prewrite {
    pub fn new(ahead: u64, created: u64, capacity: u64) -> Prewrite {
        Prewrite {
            ahead,
            busy: Mutex::new(()),
            claim: AtomicU64::new(NO_CLAIM),
            done: AtomicU64::new(0),
            lap_end: AtomicU64::new(created + capacity),
            kicked: AtomicBool::new(false),
            stopped: Mutex::new(false),
            cv: Condvar::new(),
            bytes: AtomicU64::new(0),
        }
    }

    /// Invariant 2, on the writer's side: called before writing the file up to LSN `end`.
    /// One load unless a chunk near the log's end is being written.
    pub fn before_write(&self, end: u64) {
        if end > self.claim.load(SeqCst) {
            // The chunk is done once its writer lets go; `claim` is then NO_CLAIM.
            drop(self.busy.lock());
        }
    }

    /// Called after the log was written up to `end`: wakes the thread when the written
    /// part of the lap ahead has shrunk to half the window.
    pub fn after_write(&self, end: u64) {
        if self.ahead == 0 {
            return;
        }
        let done = self.done.load(SeqCst);
        if done < self.lap_end.load(SeqCst)
            && end + self.ahead / 2 > done
            && !self.kicked.swap(true, SeqCst)
        {
            let _g = self.stopped.lock();
            self.cv.notify_one();
        }
    }

    /// A resize switched to a new file created at `created`: its first lap starts. The
    /// caller holds `busy` (invariant 4).
    pub fn new_file(&self, created: u64, capacity: u64) {
        self.done.store(0, SeqCst);
        self.lap_end.store(created + capacity, SeqCst);
        self.kicked.store(true, SeqCst);
        let _g = self.stopped.lock();
        self.cv.notify_one();
    }

    pub fn stop(&self) {
        *self.stopped.lock() = true;
        self.cv.notify_all();
    }

    /// Sleeps until kicked, stopped or the tick; returns true if stopped.
    fn sleep(&self) -> bool {
        let mut s = self.stopped.lock();
        if !*s && !self.kicked.load(SeqCst) {
            self.cv.wait_for(&mut s, IDLE_TICK);
        }
        *s
    }
}

/// Starts the pre-writer thread.
pub(crate) fn spawn(shared: Arc<Shared>) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("quire-log-prewrite".into())
        .spawn(move || {
            let mut zeros = None;
            loop {
                shared.prewrite.kicked.store(false, SeqCst);
                while shared.prewrite_chunk(&mut zeros) {
                    if *shared.prewrite.stopped.lock() {
                        return;
                    }
                }
                if shared.prewrite.sleep() {
                    return;
                }
            }
        })
}

impl Shared {
    /// Writes and syncs one chunk of zeros if the window ahead of the log needs one; returns
    /// whether it did (or gave one up, to look again at once).
    fn prewrite_chunk(&self, zeros: &mut Option<quire_io::AlignedBuf>) -> bool {
        let pre = &self.prewrite;
        let _busy = pre.busy.lock();
        let file = Arc::clone(&self.file.read());
        let cap = file.capacity;
        let lap_end = pre.lap_end.load(SeqCst);
        let reserved = self.buf.reserved();
        let round = |x: u64| x.div_ceil(BLOCK) * BLOCK;
        let start = round(pre.done.load(SeqCst).max(reserved + PREWRITE_MARGIN));
        let goal = (reserved + pre.ahead).min(lap_end);
        if start >= goal {
            if start >= lap_end {
                pre.done.store(lap_end, SeqCst);
            }
            return false;
        }
        let end = (start + PREWRITE_CHUNK)
            .min(lap_end)
            .min((start / cap + 1) * cap);
        // Invariant 1: publish the claim, then make sure the log cannot reach it. A write
        // ends at most a block past what was reserved when it was issued, so a block of
        // room suffices here; the margin above only makes this check rarely fail (a log
        // that moved by more than the margin since the first read), so that a fast log
        // does not keep the thread giving chunks up in a loop.
        pre.claim.store(start, SeqCst);
        if self.buf.reserved() + BLOCK > start {
            pre.claim.store(NO_CLAIM, SeqCst);
            return true;
        }
        // Invariant 3.
        let ckpt = self.checkpoint.load(SeqCst);
        assert!(
            end <= ckpt + cap,
            "prewrite invariant 3: zeros up to {end} would overwrite log after checkpoint {ckpt}"
        );
        let n = (end - start) as usize;
        let z = zeros.get_or_insert_with(|| file.buf(PREWRITE_CHUNK as usize));
        let at = format::file_offset(start, cap);
        if let Err(e) = file.handle.inner().write_all_at(&z[..n], at) {
            // Only an optimization failed (a sparse file on a full disk, say): the log will
            // meet the same blocks itself, and its own write decides. Stop for this file.
            tracing::warn!(target: "quire::log", "{}: writing ahead of the log stopped: {e}", file.path().display());
            pre.done.store(lap_end, SeqCst);
            pre.claim.store(NO_CLAIM, SeqCst);
            return false;
        }
        // A failed sync stays fatal: it may have dropped the log's own pages too.
        file.handle.sync_data();
        pre.bytes.fetch_add(n as u64, SeqCst);
        pre.done.store(end, SeqCst);
        pre.claim.store(NO_CLAIM, SeqCst);
        tracing::trace!(target: "quire::trace", "log prewrite [{start}, {end})");
        true
    }
}
