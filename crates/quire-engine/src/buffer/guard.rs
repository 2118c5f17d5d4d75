//! # Page guards: a pinned, latched page
//!
//! [`PageRef`] (S), [`PageSx`] (SX) and [`PageMut`] (X) each hold one pin and one latch on a
//! frame and give them back on drop (unlatch first, then unpin). They borrow the pool, so a
//! hit costs no reference-count traffic on a shared `Arc`. They are `!Send`: a latch is
//! released by the thread that took it.

use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::Ordering;

use parking_lot::lock_api::{RawRwLockDowngrade as _, RawRwLockUpgrade as _};

use super::frame::Mode;
use super::pool::BufferPool;
use crate::page::{self, Header, Lsn, PageId};

type NotSend = PhantomData<*const ()>;

/// A page latched shared.
pub struct PageRef<'a> {
    pool: &'a BufferPool,
    idx: u32,
    _not_send: NotSend,
}

/// A page latched shared-exclusive: readers may still enter, writers and other SX may not.
/// Upgrade it to [`PageMut`] to modify the page.
pub struct PageSx<'a> {
    pool: &'a BufferPool,
    idx: u32,
    _not_send: NotSend,
}

/// A page latched exclusive.
pub struct PageMut<'a> {
    pool: &'a BufferPool,
    idx: u32,
    /// Made by `create`: must be marked dirty before it is dropped, or the new page would
    /// exist only in memory and vanish on eviction.
    created: bool,
    dirtied: bool,
    _not_send: NotSend,
}

impl<'a> PageRef<'a> {
    pub(crate) fn new(pool: &'a BufferPool, idx: u32) -> Self {
        PageRef {
            pool,
            idx,
            _not_send: PhantomData,
        }
    }
    pub fn page_id(&self) -> PageId {
        self.pool.frame_page_id(self.idx)
    }
    /// The page LSN: the end LSN of the last change.
    pub fn lsn(&self) -> Lsn {
        Header::new(self).lsn()
    }
}

impl<'a> PageSx<'a> {
    pub(crate) fn new(pool: &'a BufferPool, idx: u32) -> Self {
        PageSx {
            pool,
            idx,
            _not_send: PhantomData,
        }
    }
    pub fn page_id(&self) -> PageId {
        self.pool.frame_page_id(self.idx)
    }
    pub fn lsn(&self) -> Lsn {
        Header::new(self).lsn()
    }
    /// Waits for the readers to leave and turns SX into X. No other writer can have come in
    /// between, so what was read under SX is still valid.
    pub fn upgrade(self) -> PageMut<'a> {
        let me = ManuallyDrop::new(self);
        // SAFETY: we hold the latch in SX (upgradable) mode.
        unsafe { me.pool.frame(me.idx).latch.upgrade() };
        PageMut::new(me.pool, me.idx, false)
    }
}

impl<'a> PageMut<'a> {
    pub(crate) fn new(pool: &'a BufferPool, idx: u32, created: bool) -> Self {
        PageMut {
            pool,
            idx,
            created,
            dirtied: false,
            _not_send: PhantomData,
        }
    }
    pub fn page_id(&self) -> PageId {
        self.pool.frame_page_id(self.idx)
    }
    pub fn lsn(&self) -> Lsn {
        Header::new(self).lsn()
    }

    /// Records a change made by the mini-transaction whose redo occupies
    /// `[start_lsn, end_lsn)`: sets the page LSN (header and trailer) to `end_lsn` and, if the
    /// page was clean, puts it on the flush list with oldest_modification = `start_lsn`.
    ///
    /// The caller must have reserved the LSN range while holding this latch (mtr commit does),
    /// so `start_lsn` is never below the LSN of an earlier change to the page. The flush path
    /// relies on it (see `BufferPool::complete_write`); debug builds assert it.
    pub fn mark_dirty(&mut self, start_lsn: Lsn, end_lsn: Lsn) {
        assert!(
            start_lsn.0 != 0 && start_lsn <= end_lsn,
            "bad LSN range [{start_lsn}, {end_lsn})"
        );
        let idx = self.idx;
        let data: &mut [u8] = self;
        debug_assert!(
            start_lsn >= Header::new(data).lsn(),
            "page {}: mtr start LSN {start_lsn} precedes page LSN {}",
            Header::new(data).page_id(),
            Header::new(data).lsn()
        );
        page::set_lsn(data, end_lsn);
        let f = self.pool.frame(idx);
        f.newest_modification.store(end_lsn.0, Ordering::Release);
        // Only a flusher holding S can clear oldest_modification, and we hold X: this read is
        // exact (frame invariant 4).
        let first_change = f.oldest_modification.load(Ordering::Acquire) == 0;
        // Frame invariant 6 (lesson 1): a page whose first change since its last write is a
        // (re)initialization may skip the doublewrite buffer, because recovery rebuilds it
        // from its PAGE_INIT without reading it. Never if the change was not redo-logged.
        let spaces = self.pool.spaces();
        let logged =
            !spaces.any_redo_off() || spaces.redo_logging(self.pool.frame_page_id(idx).space);
        if first_change {
            f.init_on_flush
                .store(self.created && logged, Ordering::Relaxed);
            self.pool.insert_dirty(idx, start_lsn);
        } else if !logged {
            f.init_on_flush.store(false, Ordering::Relaxed);
        }
        self.dirtied = true;
    }

    /// Puts back the bytes the page had before a mini-transaction that is rolling back
    /// changed (or re-created) it. The page LSN comes back with them, so the frame's newest
    /// modification is set from it (frame invariant 3); the page was not marked dirty by that
    /// mtr, so the flush list is as it was.
    pub(crate) fn restore(&mut self, before: &[u8]) {
        debug_assert!(!self.dirtied, "restore after mark_dirty");
        let data: &mut [u8] = self;
        data.copy_from_slice(before);
        let lsn = Header::new(data).lsn();
        self.pool
            .frame(self.idx)
            .newest_modification
            .store(lsn.0, Ordering::Relaxed);
        self.created = false;
    }

    /// A rolled-back mtr created this page, which was not resident before: there is nothing
    /// to put back (its disk copy was never read). The frame keeps the fresh, clean page; the
    /// page is free again in its space, so only a later `create` will use it.
    pub(crate) fn forget_creation(&mut self) {
        debug_assert!(!self.dirtied, "forget_creation after mark_dirty");
        self.created = false;
    }

    /// Keeps the latch but lets readers in (X → S).
    pub fn downgrade(self) -> PageRef<'a> {
        debug_assert!(
            !self.created || self.dirtied,
            "created page downgraded before mark_dirty"
        );
        let me = ManuallyDrop::new(self);
        // SAFETY: we hold the latch in X.
        unsafe { me.pool.frame(me.idx).latch.downgrade() };
        PageRef::new(me.pool, me.idx)
    }
}

impl Deref for PageRef<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: we hold the S latch (frame invariant 1).
        unsafe { self.pool.arena().page(self.idx) }
    }
}

impl Deref for PageSx<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: we hold the SX latch, which excludes writers.
        unsafe { self.pool.arena().page(self.idx) }
    }
}

impl Deref for PageMut<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: we hold the X latch.
        unsafe { self.pool.arena().page(self.idx) }
    }
}

impl DerefMut for PageMut<'_> {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: we hold the X latch, and &mut self makes this the only live slice.
        unsafe { self.pool.arena().page_mut(self.idx) }
    }
}

impl Drop for PageRef<'_> {
    fn drop(&mut self) {
        // SAFETY: held since construction.
        unsafe { self.pool.frame(self.idx).unlock(Mode::S) };
        self.pool.unpin(self.idx);
    }
}

impl Drop for PageSx<'_> {
    fn drop(&mut self) {
        // SAFETY: held since construction.
        unsafe { self.pool.frame(self.idx).unlock(Mode::Sx) };
        self.pool.unpin(self.idx);
    }
}

impl Drop for PageMut<'_> {
    fn drop(&mut self) {
        debug_assert!(
            !self.created || self.dirtied || std::thread::panicking(),
            "page {} was created but never marked dirty",
            self.page_id()
        );
        // Frame invariant 3, restored before anyone else can look.
        debug_assert_eq!(
            Header::new(self).lsn().0,
            self.pool
                .frame(self.idx)
                .newest_modification
                .load(Ordering::Relaxed),
            "page {}: LSN changed without mark_dirty",
            self.page_id()
        );
        // SAFETY: held since construction.
        unsafe { self.pool.frame(self.idx).unlock(Mode::X) };
        self.pool.unpin(self.idx);
    }
}

impl std::fmt::Debug for PageRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PageRef({})", self.page_id())
    }
}
impl std::fmt::Debug for PageSx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PageSx({})", self.page_id())
    }
}
impl std::fmt::Debug for PageMut<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PageMut({})", self.page_id())
    }
}
