//! # Frames: page memory, latch, pin count and bookkeeping
//!
//! A frame is one page-sized slot of the pool's aligned memory plus its control block.
//!
//! ```text
//!            alloc (pool mutex + shard write lock)           read ok: unlatch/downgrade
//!   FREE ───────────────────────────────────────► READING ─────────────────────────────► READY
//!    ▲  ▲                                            │ read failed: unmapped               │
//!    │  └── last unpin (pool mutex) ── ORPHAN ◄──────┘                                     │
//!    └───────── evict / discard (pin claimed at 0, shard write lock) ──────────────────────┘
//! ```
//! (`create` goes FREE → READY directly: a new page is never read.)
//!
//! Invariants:
//! 1. The page bytes are read only under the frame's latch (S, SX or X) and written only
//!    under X. A READING frame is X-latched by its reader, so waiters block on the latch
//!    instead of reading the page a second time.
//! 2. Every latch holder holds a pin; a frame with a holding pin is never evicted or reused.
//!    The lock-free hit path may also leave *transient* pins, on any frame (FREE ones
//!    included), which are never used to latch and are given back at once (page-table
//!    invariants 2 and 5): they can make an eviction skip a frame, never let one through.
//! 3. Outside an X latch, `newest_modification` equals the LSN in the page header.
//! 4. `oldest_modification != 0` iff the frame is on the flush list (see `flush_list.rs`);
//!    a dirty frame is never evicted, only written (or discarded with its space).
//! 5. `flushing` is set by at most one flusher at a time, which holds a pin meanwhile.
//! 6. `init_on_flush` means something only while the frame is dirty: it is decided when a
//!    clean frame is first marked dirty (set iff the page was (re)initialized by `create` and
//!    its space is redo-logged), cleared by any change while redo logging is off and after every
//!    write. Set, it lets the page skip the doublewrite buffer (lesson 1,
//!    docs/doublewrite.md).

use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};

use parking_lot::lock_api::{
    RawRwLock as _, RawRwLockDowngrade as _, RawRwLockUpgrade as _, RawRwLockUpgradeDowngrade as _,
};
use parking_lot::RawRwLock;
use quire_io::AlignedBuf;

use super::lru::OldFlags;

pub(crate) const FREE: u8 = 0;
pub(crate) const READING: u8 = 1;
pub(crate) const READY: u8 = 2;
pub(crate) const ORPHAN: u8 = 3;

/// `page` of a frame that holds no page.
pub(crate) const NO_PAGE: u64 = u64::MAX;

/// Frame memory alignment: O_DIRECT needs at least the logical block size.
pub(crate) const FRAME_ALIGN: usize = 4096;

/// Which page latch a guard holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Shared: many readers.
    S,
    /// Shared-exclusive: coexists with S, excludes SX and X. Can be upgraded to X.
    Sx,
    /// Exclusive.
    X,
}

/// One frame's control block. Cache-line aligned so that latching one page does not slow
/// down hits on its neighbours.
#[repr(align(64))]
pub(crate) struct Frame {
    pub(crate) latch: RawRwLock,
    /// Pin count, plus the page table's UNMAPPING bit while an unmapper that found it at
    /// zero removes the mapping (page-table invariant 3).
    pub(crate) pin: AtomicU32,
    pub(crate) state: AtomicU8,
    /// In the LRU's old sublist (written under the pool mutex; read as a hint on hits).
    pub(crate) old: AtomicBool,
    pub(crate) flushing: AtomicBool,
    /// The page's first change since its last write was a PAGE_INIT (invariant 6).
    pub(crate) init_on_flush: AtomicBool,
    /// The PageId (as u64) this frame holds, or NO_PAGE. Changes only under the pool mutex
    /// and the page's shard write lock; lock-free hits validate against it (page-table
    /// invariants 1 and 2).
    pub(crate) page: AtomicU64,
    pub(crate) oldest_modification: AtomicU64,
    pub(crate) newest_modification: AtomicU64,
    /// When the page was read in (ms since the pool started): old_blocks_time starts here.
    pub(crate) first_access_ms: AtomicU64,
    /// The pool's young clock when this frame was last put at the LRU head.
    pub(crate) young_stamp: AtomicU64,
    /// Page hits on this frame, whatever page it held (page-table invariant 6): counted on
    /// the line the hit's pin has just written, so counting adds no shared-line traffic.
    pub(crate) hits: AtomicU64,
}

// The control block is one cache line: a hit writes only its own frame's line.
const _: () = assert!(std::mem::size_of::<Frame>() == 64);

impl Frame {
    pub(crate) fn new() -> Frame {
        Frame {
            latch: RawRwLock::INIT,
            pin: AtomicU32::new(0),
            state: AtomicU8::new(FREE),
            old: AtomicBool::new(false),
            flushing: AtomicBool::new(false),
            init_on_flush: AtomicBool::new(false),
            page: AtomicU64::new(NO_PAGE),
            oldest_modification: AtomicU64::new(0),
            newest_modification: AtomicU64::new(0),
            first_access_ms: AtomicU64::new(0),
            young_stamp: AtomicU64::new(0),
            hits: AtomicU64::new(0),
        }
    }

    pub(crate) fn lock(&self, mode: Mode) {
        match mode {
            Mode::S => self.latch.lock_shared(),
            Mode::Sx => self.latch.lock_upgradable(),
            Mode::X => self.latch.lock_exclusive(),
        }
    }

    /// # Safety
    /// The caller holds the latch in `mode`.
    pub(crate) unsafe fn unlock(&self, mode: Mode) {
        match mode {
            Mode::S => self.latch.unlock_shared(),
            Mode::Sx => self.latch.unlock_upgradable(),
            Mode::X => self.latch.unlock_exclusive(),
        }
    }

    /// Turns the X latch of a reader into `mode`, without letting a writer in between.
    ///
    /// # Safety
    /// The caller holds the latch in X.
    pub(crate) unsafe fn downgrade_x_to(&self, mode: Mode) {
        match mode {
            Mode::S => self.latch.downgrade(),
            Mode::Sx => self.latch.downgrade_to_upgradable(),
            Mode::X => {}
        }
    }
}

impl OldFlags for [Frame] {
    fn set_old(&self, f: u32, old: bool) {
        self[f as usize].old.store(old, Ordering::Relaxed);
    }
    fn is_old(&self, f: u32) -> bool {
        self[f as usize].old.load(Ordering::Relaxed)
    }
}

/// The page memory of all frames: one aligned allocation, frame `i` at `i * page_size`.
pub(crate) struct Arena {
    base: NonNull<u8>,
    page_size: usize,
    frames: usize,
    /// Owns the allocation; never dereferenced after `base` is taken.
    _buf: AlignedBuf,
}

// SAFETY: the arena is plain memory; who may read or write which frame is governed by the
// frame latches (frame invariant 1), which is what makes sharing it sound.
unsafe impl Send for Arena {}
// SAFETY: as above.
unsafe impl Sync for Arena {}

impl Arena {
    pub(crate) fn new(frames: usize, page_size: usize) -> Arena {
        let mut buf = AlignedBuf::zeroed(frames * page_size, FRAME_ALIGN);
        let base = NonNull::new(buf.as_mut_ptr()).unwrap_or(NonNull::dangling());
        Arena {
            base,
            page_size,
            frames,
            _buf: buf,
        }
    }

    /// # Safety
    /// The caller holds frame `idx`'s latch (any mode) for the lifetime of the slice.
    pub(crate) unsafe fn page(&self, idx: u32) -> &[u8] {
        debug_assert!((idx as usize) < self.frames);
        std::slice::from_raw_parts(
            self.base.as_ptr().add(idx as usize * self.page_size),
            self.page_size,
        )
    }

    /// # Safety
    /// The caller holds frame `idx`'s latch in X for the lifetime of the slice.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn page_mut(&self, idx: u32) -> &mut [u8] {
        debug_assert!((idx as usize) < self.frames);
        std::slice::from_raw_parts_mut(
            self.base.as_ptr().add(idx as usize * self.page_size),
            self.page_size,
        )
    }
}
