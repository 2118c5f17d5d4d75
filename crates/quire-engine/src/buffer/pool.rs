//! # BufferPool: reads, eviction, flushing
//!
//! Invariants (numbered as cited in the code; [`BufferPool::check_invariants`] asserts the
//! structural ones on a quiescent pool):
//! 1. **Write-ahead.** A page image is handed to the [`PageWriter`] only after
//!    [`WalGate::flush_up_to`] returned for an LSN at least the image's page LSN (asserted
//!    when the gate reports `durable_lsn`).
//! 2. **Dirty pages are written, never dropped.** Only a clean frame (oldest_modification 0)
//!    is evicted; a dirty victim is written first. `discard_space` is the one exception: the
//!    space is being dropped, so its changes are garbage.
//! 3. **One place per frame.** A READING or READY frame is in the page table, on the LRU
//!    list and in its space's frame set; a FREE frame is on the free list only; an ORPHAN
//!    (failed read) is nowhere and returns to the free list once, under the pool mutex, when
//!    an unpin finds its count at zero (page-table invariant 5).
//! 4. **Eviction is final.** Holding pins are taken only through the page table, and a frame
//!    is unmapped only after its pin word was claimed at zero under the shard write lock
//!    (page-table invariants 2 and 3), so an evicted frame is unreachable: a lock-free hit
//!    racing the eviction fails its validation and takes the locked path.
//! 5. **One read per page.** The first requester maps the frame READING and X-latched before
//!    reading; later requesters pin it and wait on the latch.
//! 6. **A failed read leaves nothing behind**: its frame is unmapped before anyone can latch
//!    it, and waiters see ORPHAN and retry (getting the error themselves).
//! 7. **Cleaning is exact.** A frame leaves the flush list only if the image just written holds
//!    its newest modification (checked under S, which excludes `mark_dirty`). If the page
//!    changed after the copy, it stays dirty and its oldest_modification becomes the copy's
//!    LSN (see [`BufferPool::complete_write`] for why that is safe).
//!
//! ## Discarding a space (DROP)
//!
//! The pool keeps, under the pool mutex, the set of frames of each space (updated on
//! read-in, create and eviction; never on a hit). `discard_space` visits only those frames,
//! in chunks, re-taking the mutex per chunk: DROP costs O(pages of the table in memory), not
//! O(pool), and never holds a lock across the whole pool.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use parking_lot::lock_api::RawRwLock as _;
use parking_lot::{Condvar, Mutex, MutexGuard};
use quire_io::AlignedBuf;

use super::flush_list::FlushList;
use super::frame::{Arena, Frame, Mode, FRAME_ALIGN, FREE, NO_PAGE, ORPHAN, READING, READY};
use super::guard::{PageMut, PageRef, PageSx};
use super::lru::{Lru, NIL};
use super::page_table::{PageTable, ShardWrite};
use super::writer::{FlushPage, PageWriter, SpaceWriter};
use super::{BufferConfig, BufferError, BufferStats, WalGate, MIN_FRAMES};
use crate::page::{self, Header, Lsn, PageCorruption, PageId, PageNo, PageType, SpaceId};
use crate::space::{SpaceError, Spaces};

/// Frames handled per pool-mutex hold by `discard_space`.
const DISCARD_CHUNK: usize = 256;

/// What the pool mutex protects: everything that changes on a miss, never on a hit.
struct PoolState {
    lru: Lru,
    free: Vec<u32>,
    by_space: HashMap<SpaceId, HashSet<u32>>,
}

#[derive(Default)]
struct Counters {
    misses: AtomicU64,
    pages_read: AtomicU64,
    pages_created: AtomicU64,
    pages_written: AtomicU64,
    flush_batches: AtomicU64,
    evictions: AtomicU64,
    made_young: AtomicU64,
    discarded: AtomicU64,
}

/// Wakes the page cleaner; a wake-up with nobody waiting is remembered, not lost.
#[derive(Default)]
pub(crate) struct Signal {
    pending: Mutex<bool>,
    cv: Condvar,
}

impl Signal {
    pub(crate) fn wake(&self) {
        let mut p = self.pending.lock();
        if !*p {
            *p = true;
            self.cv.notify_one();
        }
    }
    pub(crate) fn wait(&self, timeout: Duration) {
        let mut p = self.pending.lock();
        if !*p {
            self.cv.wait_for(&mut p, timeout);
        }
        *p = false;
    }
}

/// `innodb_io_capacity`, `_max`, `innodb_max_dirty_pages_pct`, `_lwm` and
/// `innodb_old_blocks_time`, changed by [`BufferPool::set_flushing`] and
/// [`BufferPool::set_old_blocks`].
#[derive(Default)]
struct LiveSettings {
    io_capacity: AtomicU32,
    io_capacity_max: AtomicU32,
    max_dirty_pages_pct: AtomicU32,
    max_dirty_pages_pct_lwm: AtomicU32,
    old_blocks_time_ms: AtomicU64,
}

fn young_drift(frames: usize, old_blocks_pct: u32) -> u64 {
    (frames as u64 * u64::from(100 - old_blocks_pct) / 400).max(1)
}

/// What [`BufferPool::set_flushing`] accepts (the constructor checks the same).
fn check_flushing(
    max_dirty: u32,
    lwm: u32,
    io_capacity: u32,
    io_capacity_max: u32,
) -> Result<(), BufferError> {
    if max_dirty > 100 || lwm > max_dirty {
        return Err(BufferError::Config(format!(
            "innodb_max_dirty_pages_pct {max_dirty} must be at most 100 and at least innodb_max_dirty_pages_pct_lwm {lwm}"
        )));
    }
    if io_capacity == 0 || io_capacity_max == 0 {
        return Err(BufferError::Config(
            "innodb_io_capacity and innodb_io_capacity_max must be > 0".into(),
        ));
    }
    Ok(())
}

pub struct BufferPool {
    cfg: BufferConfig,
    frames: Box<[Frame]>,
    arena: Arena,
    table: PageTable,
    state: Mutex<PoolState>,
    flush_list: Mutex<FlushList>,
    /// Mirror of the flush list's length, for stats and the cleaner without the mutex.
    dirty_pages: AtomicUsize,
    spaces: Arc<Spaces>,
    wal: Arc<dyn WalGate>,
    writer: Arc<dyn PageWriter>,
    /// Advances each time a page is put at the LRU head. A young page is moved again only
    /// once this has advanced by `young_drift` since its own stamp, i.e. once it has drifted
    /// about a quarter of the young sublist down (InnoDB's buf_page_peek_if_too_old): hits
    /// on hot pages do not take the pool mutex.
    young_clock: AtomicU64,
    /// Follows `innodb_old_blocks_pct` (a quarter of the young sublist).
    young_drift: AtomicU64,
    /// The settings `SET GLOBAL` changes while the pool runs, read at use (`cfg` keeps
    /// their start-up values).
    live: LiveSettings,
    /// Free frames the cleaner tries to keep ready.
    free_target: usize,
    epoch: Instant,
    counters: Counters,
    /// The highest LSN the log asked to have flushed up to (adaptive flushing).
    flush_target: AtomicU64,
    pub(crate) cleaner_signal: Signal,
    /// Checks the structure of each page read from disk after its checksum (the B-tree's
    /// slot directory and records): set once by the engine, so that a page whose checksum
    /// holds but whose contents would send a reader out of bounds is an error naming file
    /// and page, never a panic. Pages are checked on the way in, not at every latch.
    structure_check: std::sync::OnceLock<StructureCheck>,
}

/// What [`BufferPool::set_structure_check`] takes: the reason a page image is damaged, or
/// `None` when it is sound (or not a type the check knows).
pub type StructureCheck = fn(&[u8]) -> Option<String>;

impl std::fmt::Debug for BufferPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BufferPool")
            .field("frames", &self.frames.len())
            .field("page_size", &self.cfg.page_size.bytes())
            .finish_non_exhaustive()
    }
}

/// A page's bytes as they were before a change (kept for a rollback).
pub type OldBytes = Box<[u8]>;

impl BufferPool {
    /// Registers the check of every page read from disk from now on ([`StructureCheck`]).
    /// Set once, before the first read; a second call changes nothing.
    pub fn set_structure_check(&self, check: StructureCheck) {
        let _ = self.structure_check.set(check);
    }

    /// Runs the structure check on every page the pool holds: recovery changes pages in
    /// memory by applying redo, after they were checked on the way in, so a damaged redo
    /// record that passed its checksum could leave a page no reader may touch. Called once,
    /// after recovery; the first damaged page is an error naming its file and page.
    pub fn check_resident(&self) -> Result<(), BufferError> {
        let Some(check) = self.structure_check.get() else {
            return Ok(());
        };
        let ids: Vec<PageId> = {
            let st = self.state.lock();
            st.by_space
                .values()
                .flat_map(|s| s.iter().map(|&i| self.frame_page_id(i)))
                .collect()
        };
        for id in ids {
            let what = match self.get_shared(id) {
                Ok(g) => check(&g),
                Err(_) => continue, // gone meanwhile; read again, it is checked then
            };
            if let Some(what) = what {
                let path = self.spaces.get(id.space)?.path().to_path_buf();
                return Err(BufferError::Space(SpaceError::Corrupt {
                    path,
                    page_no: id.page_no,
                    what: PageCorruption::Structure(what),
                }));
            }
        }
        Ok(())
    }

    /// A pool writing pages straight to their spaces (no doublewrite).
    pub fn new(
        cfg: BufferConfig,
        spaces: Arc<Spaces>,
        wal: Arc<dyn WalGate>,
    ) -> Result<Arc<BufferPool>, BufferError> {
        let writer = Arc::new(SpaceWriter::new(spaces.clone()));
        Self::with_writer(cfg, spaces, wal, writer)
    }

    /// A pool whose batches go through `writer` (the doublewrite layer plugs in here).
    pub fn with_writer(
        cfg: BufferConfig,
        spaces: Arc<Spaces>,
        wal: Arc<dyn WalGate>,
        writer: Arc<dyn PageWriter>,
    ) -> Result<Arc<BufferPool>, BufferError> {
        let ps = cfg.page_size.bytes();
        let frames = usize::try_from(cfg.size_bytes / ps as u64).unwrap_or(usize::MAX);
        if frames < MIN_FRAMES {
            return Err(BufferError::Config(format!(
                "innodb_buffer_pool_size={} holds {frames} pages of {ps} bytes; at least \
                 {MIN_FRAMES} are needed",
                cfg.size_bytes
            )));
        }
        if frames >= NIL as usize {
            return Err(BufferError::Config(format!(
                "innodb_buffer_pool_size={} is too large",
                cfg.size_bytes
            )));
        }
        if !(5..=95).contains(&cfg.old_blocks_pct) {
            return Err(BufferError::Config(format!(
                "innodb_old_blocks_pct={} must be within 5..95",
                cfg.old_blocks_pct
            )));
        }
        if cfg.max_dirty_pages_pct > 100 || cfg.max_dirty_pages_pct_lwm > cfg.max_dirty_pages_pct {
            return Err(BufferError::Config(format!(
                "innodb_max_dirty_pages_pct={} / _lwm={} must satisfy lwm <= pct <= 100",
                cfg.max_dirty_pages_pct, cfg.max_dirty_pages_pct_lwm
            )));
        }
        if cfg.flush_batch_pages == 0 || cfg.io_capacity == 0 || cfg.io_capacity_max == 0 {
            return Err(BufferError::Config(
                "flush_batch_pages, innodb_io_capacity and innodb_io_capacity_max must be > 0"
                    .into(),
            ));
        }
        let young_drift = young_drift(frames, cfg.old_blocks_pct);
        let live = LiveSettings {
            io_capacity: AtomicU32::new(cfg.io_capacity),
            io_capacity_max: AtomicU32::new(cfg.io_capacity_max),
            max_dirty_pages_pct: AtomicU32::new(cfg.max_dirty_pages_pct),
            max_dirty_pages_pct_lwm: AtomicU32::new(cfg.max_dirty_pages_pct_lwm),
            old_blocks_time_ms: AtomicU64::new(cfg.old_blocks_time_ms),
        };
        let free_target = (frames / 16).clamp(1, cfg.lru_scan_depth.max(1) as usize);
        Ok(Arc::new(BufferPool {
            frames: (0..frames).map(|_| Frame::new()).collect(),
            arena: Arena::new(frames, ps),
            table: PageTable::new(frames),
            state: Mutex::new(PoolState {
                lru: Lru::new(frames, cfg.old_blocks_pct),
                // Reversed so that frames are handed out in address order.
                free: (0..frames as u32).rev().collect(),
                by_space: HashMap::new(),
            }),
            flush_list: Mutex::new(FlushList::default()),
            dirty_pages: AtomicUsize::new(0),
            spaces,
            wal,
            writer,
            young_clock: AtomicU64::new(0),
            young_drift: AtomicU64::new(young_drift),
            live,
            free_target,
            epoch: Instant::now(),
            counters: Counters::default(),
            flush_target: AtomicU64::new(0),
            cleaner_signal: Signal::default(),
            structure_check: std::sync::OnceLock::new(),
            cfg,
        }))
    }

    /// The configuration the pool was made with (see [`BufferPool::live_config`]).
    pub fn config(&self) -> &BufferConfig {
        &self.cfg
    }

    /// The configuration with the settings `SET GLOBAL` changed since (the cleaner plans
    /// each round with it).
    pub fn live_config(&self) -> BufferConfig {
        let l = &self.live;
        BufferConfig {
            io_capacity: l.io_capacity.load(Ordering::Relaxed),
            io_capacity_max: l.io_capacity_max.load(Ordering::Relaxed),
            max_dirty_pages_pct: l.max_dirty_pages_pct.load(Ordering::Relaxed),
            max_dirty_pages_pct_lwm: l.max_dirty_pages_pct_lwm.load(Ordering::Relaxed),
            old_blocks_time_ms: l.old_blocks_time_ms.load(Ordering::Relaxed),
            old_blocks_pct: self.state.lock().lru.old_pct(),
            ..self.cfg.clone()
        }
    }

    /// `SET GLOBAL innodb_io_capacity`, `_max`, `innodb_max_dirty_pages_pct`, `_lwm`:
    /// the cleaner's next round uses them (it is woken now).
    pub fn set_flushing(
        &self,
        io_capacity: u32,
        io_capacity_max: u32,
        max_dirty_pages_pct: u32,
        max_dirty_pages_pct_lwm: u32,
    ) -> Result<(), BufferError> {
        check_flushing(
            max_dirty_pages_pct,
            max_dirty_pages_pct_lwm,
            io_capacity,
            io_capacity_max,
        )?;
        let l = &self.live;
        l.io_capacity.store(io_capacity, Ordering::Relaxed);
        l.io_capacity_max.store(io_capacity_max, Ordering::Relaxed);
        l.max_dirty_pages_pct
            .store(max_dirty_pages_pct, Ordering::Relaxed);
        l.max_dirty_pages_pct_lwm
            .store(max_dirty_pages_pct_lwm, Ordering::Relaxed);
        self.cleaner_signal.wake();
        Ok(())
    }

    /// `SET GLOBAL innodb_old_blocks_pct` and `innodb_old_blocks_time`: the LRU boundary
    /// moves now; hits use the new time at once.
    pub fn set_old_blocks(
        &self,
        old_blocks_pct: u32,
        old_blocks_time_ms: u64,
    ) -> Result<(), BufferError> {
        if !(5..=95).contains(&old_blocks_pct) {
            return Err(BufferError::Config(format!(
                "innodb_old_blocks_pct {old_blocks_pct} is not within 5..=95"
            )));
        }
        self.live
            .old_blocks_time_ms
            .store(old_blocks_time_ms, Ordering::Relaxed);
        let mut st = self.state.lock();
        st.lru.set_old_pct(old_blocks_pct, &*self.frames);
        self.young_drift.store(
            young_drift(self.frames.len(), old_blocks_pct),
            Ordering::Relaxed,
        );
        Ok(())
    }
    pub fn frames(&self) -> usize {
        self.frames.len()
    }
    pub fn spaces(&self) -> &Arc<Spaces> {
        &self.spaces
    }
    /// Whether `id` is in the pool (diagnostics and tests; the answer may be stale at once).
    pub fn contains(&self, id: PageId) -> bool {
        self.table.contains(id)
    }
    /// The free-frame level the cleaner maintains.
    pub fn free_target(&self) -> usize {
        self.free_target
    }

    pub(crate) fn frame(&self, idx: u32) -> &Frame {
        &self.frames[idx as usize]
    }
    pub(crate) fn arena(&self) -> &Arena {
        &self.arena
    }
    pub(crate) fn frame_page_id(&self, idx: u32) -> PageId {
        PageId::from_u64(self.frame(idx).page.load(Ordering::Relaxed))
    }
    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    // ---------------------------------------------------------------- page access

    /// The page, latched shared. Reads it from disk (verified) if it is not in the pool.
    pub fn get_shared(&self, id: PageId) -> Result<PageRef<'_>, BufferError> {
        self.fix(id, Mode::S).map(|i| PageRef::new(self, i))
    }

    /// The page, latched shared-exclusive.
    pub fn get_sx(&self, id: PageId) -> Result<PageSx<'_>, BufferError> {
        self.fix(id, Mode::Sx).map(|i| PageSx::new(self, i))
    }

    /// The page, latched exclusive.
    pub fn get_exclusive(&self, id: PageId) -> Result<PageMut<'_>, BufferError> {
        self.fix(id, Mode::X).map(|i| PageMut::new(self, i, false))
    }

    /// A new (or reinitialized) page: zeroed, with a fresh header of type `ty`, latched
    /// exclusive. The old contents are never read from disk: redo will rebuild the page from
    /// its initialization (lesson 1). The caller must `mark_dirty` it.
    pub fn create(&self, id: PageId, ty: PageType) -> Result<PageMut<'_>, BufferError> {
        self.create_inner(id, ty, None)
    }

    /// [`BufferPool::create`] that also returns the frame's old bytes if the page was
    /// resident (a rolled-back mini-transaction puts them back; a page that was not resident
    /// has no bytes worth keeping: only its disk copy, which `create` never read).
    pub fn create_keeping_old(
        &self,
        id: PageId,
        ty: PageType,
    ) -> Result<(PageMut<'_>, Option<OldBytes>), BufferError> {
        let mut old = None;
        let g = self.create_inner(id, ty, Some(&mut old))?;
        Ok((g, old))
    }

    fn create_inner(
        &self,
        id: PageId,
        ty: PageType,
        mut keep_old: Option<&mut Option<OldBytes>>,
    ) -> Result<PageMut<'_>, BufferError> {
        let space = self.spaces.get(id.space)?;
        let size = space.size_pages();
        if id.page_no.is_null() || id.page_no.0 >= size {
            // Refuse now rather than fail when the cleaner writes it.
            return Err(SpaceError::OutOfRange {
                path: space.path().to_path_buf(),
                page_no: id.page_no,
                size_pages: size,
            }
            .into());
        }
        loop {
            if let Some(idx) = self.table.pin(id, &self.frames, |i| self.unpin(i)) {
                let f = self.frame(idx);
                f.lock(Mode::X);
                if f.state.load(Ordering::Acquire) == READY {
                    if let Some(keep) = keep_old.as_deref_mut() {
                        // SAFETY: X-latched just above.
                        *keep = Some(Box::from(unsafe { self.arena.page(idx) }));
                    }
                    self.init_page(idx, id, ty);
                    return Ok(PageMut::new(self, idx, true));
                }
                // SAFETY: locked just above.
                unsafe { f.unlock(Mode::X) };
                self.unpin(idx);
                continue;
            }
            let (mut st, idx) = self.alloc_frame()?;
            {
                let mut map = self.table.write(id);
                if map.contains(id) {
                    st.free.push(idx);
                    continue;
                }
                self.map_locked(&mut map, idx, id, READY);
            }
            // A created page is wanted: it goes to the young head.
            self.frame(idx)
                .young_stamp
                .store(self.young_clock.load(Ordering::Relaxed), Ordering::Relaxed);
            st.lru.push_young(idx, &*self.frames);
            st.by_space.entry(id.space).or_default().insert(idx);
            drop(st);
            self.init_page(idx, id, ty);
            self.counters.pages_created.fetch_add(1, Ordering::Relaxed);
            return Ok(PageMut::new(self, idx, true));
        }
    }

    fn init_page(&self, idx: u32, id: PageId, ty: PageType) {
        // SAFETY: the caller holds the X latch.
        let data = unsafe { self.arena.page_mut(idx) };
        data.fill(0);
        page::init_header(data, id, ty);
        // Frame invariant 3: the header LSN is now 0.
        self.frame(idx)
            .newest_modification
            .store(0, Ordering::Relaxed);
    }

    /// Pins and latches `id`, reading it in on a miss.
    fn fix(&self, id: PageId, mode: Mode) -> Result<u32, BufferError> {
        loop {
            if let Some(idx) = self.table.pin(id, &self.frames, |i| self.unpin(i)) {
                let f = self.frame(idx);
                self.touch(idx);
                f.lock(mode);
                if f.state.load(Ordering::Acquire) == READY {
                    debug_assert_eq!(f.page.load(Ordering::Relaxed), id.as_u64());
                    return Ok(idx);
                }
                // Invariant 6: the read filling this frame failed. Look again.
                // SAFETY: locked just above.
                unsafe { f.unlock(mode) };
                self.unpin(idx);
                continue;
            }
            if let Some(idx) = self.read_in(id, mode)? {
                return Ok(idx);
            }
        }
    }

    /// Reads `id` into a new frame. `None`: another thread mapped it first; use theirs.
    fn read_in(&self, id: PageId, mode: Mode) -> Result<Option<u32>, BufferError> {
        let space = self.spaces.get(id.space)?;
        let (mut st, idx) = self.alloc_frame()?;
        {
            let mut map = self.table.write(id);
            if map.contains(id) {
                st.free.push(idx);
                return Ok(None);
            }
            // Invariant 5: mapped READING and X-latched before the read.
            self.map_locked(&mut map, idx, id, READING);
        }
        let f = self.frame(idx);
        f.first_access_ms.store(self.now_ms(), Ordering::Relaxed);
        // Midpoint insertion: a page read in starts in the old sublist.
        st.lru.push_old(idx, &*self.frames);
        st.by_space.entry(id.space).or_default().insert(idx);
        drop(st);
        self.counters.misses.fetch_add(1, Ordering::Relaxed);

        // SAFETY: we hold the X latch taken by map_locked.
        let buf = unsafe { self.arena.page_mut(idx) };
        let read = space.read_page(id.page_no, buf).and_then(|()| {
            match self.structure_check.get().and_then(|check| check(buf)) {
                None => Ok(()),
                Some(what) => Err(SpaceError::Corrupt {
                    path: space.path().to_path_buf(),
                    page_no: id.page_no,
                    what: PageCorruption::Structure(what),
                }),
            }
        });
        match read {
            Ok(()) => {
                f.newest_modification
                    .store(Header::new(buf).lsn().0, Ordering::Relaxed);
                f.state.store(READY, Ordering::Release);
                self.counters.pages_read.fetch_add(1, Ordering::Relaxed);
                // SAFETY: we hold X.
                unsafe { f.downgrade_x_to(mode) };
                Ok(Some(idx))
            }
            Err(e) => {
                self.orphan(idx, id);
                // SAFETY: we hold X.
                unsafe { f.latch.unlock_exclusive() };
                self.unpin(idx);
                Err(e.into())
            }
        }
    }

    /// Reads the pages `first .. first + n` of `space` that are not in the pool, with one
    /// read: recovery's read-ahead, where the pages to apply redo to are often adjacent.
    /// Each page is mapped READING and X-latched before the read, as in `read_in`, so no
    /// one can read or write it meanwhile; a page already resident is left alone. A page
    /// that fails its check is not kept: whoever needs it reads it again and gets the error.
    /// Returns how many pages were added.
    pub fn read_ahead(&self, space: SpaceId, first: PageNo, n: u32) -> Result<usize, BufferError> {
        let sp = self.spaces.get(space)?;
        let n = n.min(sp.size_pages().saturating_sub(first.0));
        // (offset in the span, frame)
        let mut mine: Vec<(u32, u32)> = Vec::new();
        for i in 0..n {
            let id = PageId::new(space, PageNo(first.0 + i));
            if id.page_no.is_null() || self.table.contains(id) {
                continue;
            }
            let (mut st, idx) = match self.alloc_frame() {
                Ok(x) => x,
                // Read what is mapped; the pool is full, so stop here.
                Err(e) if !mine.is_empty() => {
                    tracing::debug!("read-ahead of {id} stopped: {e}");
                    break;
                }
                Err(e) => return Err(e),
            };
            {
                let mut map = self.table.write(id);
                if map.contains(id) {
                    st.free.push(idx);
                    continue;
                }
                // Invariant 5: mapped READING and X-latched before the read.
                self.map_locked(&mut map, idx, id, READING);
            }
            self.frame(idx)
                .first_access_ms
                .store(self.now_ms(), Ordering::Relaxed);
            st.lru.push_old(idx, &*self.frames);
            st.by_space.entry(space).or_default().insert(idx);
            drop(st);
            mine.push((i, idx));
        }
        let (Some(&(lo, _)), Some(&(hi, _))) = (mine.first(), mine.last()) else {
            return Ok(0);
        };
        let ps = sp.page_size().bytes();
        let mut buf = AlignedBuf::zeroed((hi - lo + 1) as usize * ps, ps);
        let read = sp.read_pages_unverified(PageNo(first.0 + lo), &mut buf);
        let mut added = 0;
        for (i, idx) in mine {
            let id = PageId::new(space, PageNo(first.0 + i));
            let f = self.frame(idx);
            let src = &buf[(i - lo) as usize * ps..][..ps];
            self.counters.misses.fetch_add(1, Ordering::Relaxed);
            let sound = || {
                page::verify(src, id).is_ok()
                    && self
                        .structure_check
                        .get()
                        .and_then(|check| check(src))
                        .is_none()
            };
            if read.is_ok() && sound() {
                // SAFETY: we hold the X latch taken by map_locked.
                let dst = unsafe { self.arena.page_mut(idx) };
                dst.copy_from_slice(src);
                f.newest_modification
                    .store(Header::new(dst).lsn().0, Ordering::Relaxed);
                f.state.store(READY, Ordering::Release);
                self.counters.pages_read.fetch_add(1, Ordering::Relaxed);
                added += 1;
            } else {
                self.orphan(idx, id);
            }
            // SAFETY: we hold X.
            unsafe { f.latch.unlock_exclusive() };
            self.unpin(idx);
        }
        Ok(added)
    }

    /// Maps a FREE frame to `id`, pinned and X-latched. Caller holds the pool mutex and the
    /// shard write lock.
    fn map_locked(&self, map: &mut ShardWrite<'_>, idx: u32, id: PageId, state: u8) {
        let f = self.frame(idx);
        debug_assert_eq!(f.state.load(Ordering::Relaxed), FREE);
        // A free frame may carry transient pins (page-table invariant 5), never a holding
        // one, and never the UNMAPPING bit (set only inside a shard write lock section).
        debug_assert_eq!(
            f.pin.load(Ordering::Relaxed) & super::page_table::UNMAPPING,
            0,
            "free frame {idx} is being unmapped"
        );
        debug_assert_eq!(f.oldest_modification.load(Ordering::Relaxed), 0);
        // A free frame has no holding pins, hence no latch holders (frame invariant 2).
        let latched = f.latch.try_lock_exclusive();
        assert!(latched, "free frame {idx} is latched");
        f.pin.fetch_add(1, Ordering::Acquire);
        f.state.store(state, Ordering::Release);
        // Latched before `page` is set: a hit that validates against it waits on the latch.
        map.insert(id, idx, f);
    }

    /// Takes a mapped frame off the LRU and its space set. Caller holds the pool mutex and
    /// has removed the mapping (which cleared `page`, page-table invariant 1).
    fn forget_locked(&self, st: &mut PoolState, idx: u32, id: PageId) {
        debug_assert_eq!(self.frame(idx).page.load(Ordering::Relaxed), NO_PAGE);
        st.lru.remove(idx, &*self.frames);
        if let Some(set) = st.by_space.get_mut(&id.space) {
            set.remove(&idx);
            if set.is_empty() {
                st.by_space.remove(&id.space);
            }
        }
    }

    /// Invariant 6: unmaps a frame whose read failed. Its waiters hold pins; the unpin that
    /// leaves none frees it (see `unpin`).
    fn orphan(&self, idx: u32, id: PageId) {
        let mut st = self.state.lock();
        self.table.write(id).remove_orphan(id, idx, self.frame(idx));
        self.forget_locked(&mut st, idx, id);
        self.frame(idx).state.store(ORPHAN, Ordering::Release);
    }

    pub(crate) fn unpin(&self, idx: u32) {
        let f = self.frame(idx);
        let prev = f.pin.fetch_sub(1, Ordering::AcqRel);
        debug_assert!(
            prev & !super::page_table::UNMAPPING > 0,
            "frame {idx} unpinned more often than pinned"
        );
        if prev == 1 && f.state.load(Ordering::Acquire) == ORPHAN {
            // Unmapped, so only transient pins can still come and go (page-table invariant
            // 5), and each of their unpins may also see 1 here. Decide under the pool mutex,
            // which every change of state to or from ORPHAN and FREE holds: the frame is
            // freed exactly once, and only with no pin left.
            let mut st = self.state.lock();
            if f.state.load(Ordering::Acquire) == ORPHAN && f.pin.load(Ordering::Acquire) == 0 {
                f.state.store(FREE, Ordering::Release);
                st.free.push(idx);
            }
        }
    }

    /// LRU bookkeeping for a hit, mostly without the pool mutex.
    fn touch(&self, idx: u32) {
        // Until the pool has been full once, the order does not matter (as InnoDB). Checked
        // first: the old-blocks test below reads the clock, which a hit should not pay for
        // when the answer cannot matter.
        if self.counters.evictions.load(Ordering::Relaxed) == 0 {
            return;
        }
        let f = self.frame(idx);
        if f.old.load(Ordering::Relaxed) {
            // A scan touches a page several times in a short while: that is not a reason to
            // keep it (innodb_old_blocks_time).
            let first = f.first_access_ms.load(Ordering::Relaxed);
            if self.now_ms().saturating_sub(first)
                < self.live.old_blocks_time_ms.load(Ordering::Relaxed)
            {
                return;
            }
        } else if !self.drifted(f) {
            return;
        }
        let mut st = self.state.lock();
        // Re-check under the mutex: the hints may be stale, and another hit may have moved
        // the page already. A pinned frame is on the LRU unless it is an orphan.
        if !st.lru.contains(idx) || (!f.old.load(Ordering::Relaxed) && !self.drifted(f)) {
            return;
        }
        st.lru.make_young(idx, &*self.frames);
        let stamp = self.young_clock.fetch_add(1, Ordering::Relaxed) + 1;
        f.young_stamp.store(stamp, Ordering::Relaxed);
        self.counters.made_young.fetch_add(1, Ordering::Relaxed);
    }

    fn drifted(&self, f: &Frame) -> bool {
        self.young_clock
            .load(Ordering::Relaxed)
            .wrapping_sub(f.young_stamp.load(Ordering::Relaxed))
            > self.young_drift.load(Ordering::Relaxed)
    }

    // ---------------------------------------------------------------- frames and eviction

    /// A FREE frame, with the pool mutex still held (the caller maps it). Takes the free
    /// list, else evicts the clean page nearest the LRU tail, else writes dirty tail pages
    /// and tries again; fails with PoolExhausted after `pool_exhausted_wait_ms` of finding
    /// only pinned frames.
    fn alloc_frame(&self) -> Result<(MutexGuard<'_, PoolState>, u32), BufferError> {
        let start = Instant::now();
        let wait = Duration::from_millis(self.cfg.pool_exhausted_wait_ms);
        let batch = self.cfg.flush_batch_pages as usize;
        let mut idle = 0u32;
        loop {
            let mut st = self.state.lock();
            if let Some(idx) = st.free.pop() {
                if st.free.len() < self.free_target / 2 {
                    self.cleaner_signal.wake();
                }
                return Ok((st, idx));
            }
            let mut dirty = Vec::new();
            let mut cur = st.lru.tail();
            while cur != NIL {
                let prev = st.lru.prev(cur);
                let f = self.frame(cur);
                if f.pin.load(Ordering::Acquire) == 0 {
                    if f.oldest_modification.load(Ordering::Acquire) == 0 {
                        if self.try_evict(&mut st, cur) {
                            self.cleaner_signal.wake();
                            return Ok((st, cur));
                        }
                    } else if dirty.len() < batch {
                        dirty.push((self.frame_page_id(cur), cur));
                    }
                }
                cur = prev;
            }
            drop(st);
            self.cleaner_signal.wake();
            // No clean victim: write dirty tail pages ourselves (invariant 2), then look
            // again. Flushing only tries latches, so holding page latches here is fine.
            if !dirty.is_empty() && self.flush_frames(&dirty)? > 0 {
                continue;
            }
            let waited = start.elapsed();
            if waited >= wait {
                return Err(BufferError::PoolExhausted {
                    frames: self.frames.len(),
                    waited_ms: waited.as_millis() as u64,
                });
            }
            idle += 1;
            if idle < 16 {
                thread::yield_now();
            } else {
                thread::sleep(Duration::from_millis(1));
            }
        }
    }

    /// Unmaps a clean, unpinned frame (invariants 2 and 4). Caller holds the pool mutex.
    fn try_evict(&self, st: &mut PoolState, idx: u32) -> bool {
        let f = self.frame(idx);
        let raw = f.page.load(Ordering::Relaxed);
        debug_assert_ne!(raw, NO_PAGE, "frame {idx} on the LRU holds no page");
        let id = PageId::from_u64(raw);
        // Once the pin word is claimed at zero no holder exists or can appear (page-table
        // invariant 3), and without a pin nobody can latch or dirty the page. The claim
        // synchronizes with the last unpin, so the dirty check below is exact.
        let unmapped = self.table.write(id).try_unmap(id, idx, f, || {
            debug_assert!(!f.latch.is_locked(), "unpinned frame {idx} is latched");
            debug_assert_eq!(f.state.load(Ordering::Relaxed), READY);
            f.oldest_modification.load(Ordering::Acquire) == 0
        });
        if !unmapped {
            return false;
        }
        self.forget_locked(st, idx, id);
        f.state.store(FREE, Ordering::Release);
        self.counters.evictions.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// The cleaner's LRU batch: frees clean pages from the LRU tail until `want_free` frames
    /// are free, and writes the dirty ones it meets (they are freed on a later pass).
    /// Scans at most `lru_scan_depth` frames. Returns frames freed plus pages written.
    pub(crate) fn lru_batch(&self, want_free: usize) -> Result<usize, BufferError> {
        let batch = self.cfg.flush_batch_pages as usize;
        let mut dirty = Vec::new();
        let mut freed = 0;
        {
            let mut st = self.state.lock();
            let mut cur = st.lru.tail();
            let mut scanned = 0u32;
            while cur != NIL && st.free.len() < want_free && scanned < self.cfg.lru_scan_depth {
                let prev = st.lru.prev(cur);
                let f = self.frame(cur);
                if f.pin.load(Ordering::Acquire) == 0 {
                    if f.oldest_modification.load(Ordering::Acquire) == 0 {
                        if self.try_evict(&mut st, cur) {
                            st.free.push(cur);
                            freed += 1;
                        }
                    } else if dirty.len() < batch {
                        dirty.push((self.frame_page_id(cur), cur));
                    }
                }
                scanned += 1;
                cur = prev;
            }
        }
        Ok(freed + self.flush_frames(&dirty)?)
    }

    // ---------------------------------------------------------------- dirty pages

    /// Puts a frame that just became dirty on the flush list. Caller holds its X latch.
    pub(crate) fn insert_dirty(&self, idx: u32, start: Lsn) {
        let f = self.frame(idx);
        let id = self.frame_page_id(idx);
        let mut fl = self.flush_list.lock();
        debug_assert_eq!(f.oldest_modification.load(Ordering::Relaxed), 0);
        fl.insert(start, idx, id);
        f.oldest_modification.store(start.0, Ordering::Release);
        self.dirty_pages.fetch_add(1, Ordering::Relaxed);
    }

    /// The oldest modification of any dirty page: the checkpoint may not pass it.
    pub fn flush_list_oldest(&self) -> Option<Lsn> {
        self.flush_list.lock().oldest()
    }

    /// Writes up to `max_pages` of the oldest dirty pages. Pages that are latched or being
    /// written by someone else are skipped. Returns pages written.
    pub fn flush_batch(&self, max_pages: usize) -> Result<usize, BufferError> {
        self.flush_list_batch(max_pages, None)
    }

    pub(crate) fn flush_list_batch(
        &self,
        max_pages: usize,
        up_to: Option<Lsn>,
    ) -> Result<usize, BufferError> {
        let cands = self.flush_list.lock().oldest_n(max_pages, up_to);
        self.flush_frames(&cands)
    }

    /// Writes every page whose oldest modification is at most `lsn`, waiting for pages that
    /// are latched: afterwards `flush_list_oldest()` is past `lsn` (unless new changes came
    /// in). The log uses it when it must advance the checkpoint now. The caller must hold no
    /// page latches.
    pub fn flush_list_up_to(&self, lsn: Lsn) -> Result<usize, BufferError> {
        self.flush_until_clean(|| self.flush_list.lock().oldest_n(usize::MAX, Some(lsn)))
    }

    /// Writes every page that is dirty now (shutdown, tests). Pages dirtied meanwhile may
    /// stay dirty. The caller must hold no page latches.
    pub fn flush_all(&self) -> Result<usize, BufferError> {
        // Bind first: a guard in the match scrutinee would live through the arms.
        let bound = self.flush_list.lock().newest_oldest();
        match bound {
            None => Ok(0),
            Some(bound) => self.flush_list_up_to(bound),
        }
    }

    /// Writes every dirty page of `space` (FLUSH TABLES … FOR EXPORT); durable on return.
    /// The caller must hold no page latches.
    pub fn flush_space(&self, space: SpaceId) -> Result<usize, BufferError> {
        let bound = self
            .dirty_of_space(space, Lsn(u64::MAX))
            .iter()
            .map(|&(_, _, l)| l)
            .max();
        let Some(bound) = bound else { return Ok(0) };
        self.flush_until_clean(|| {
            self.dirty_of_space(space, bound)
                .into_iter()
                .map(|(id, idx, _)| (id, idx))
                .collect()
        })
    }

    fn dirty_of_space(&self, space: SpaceId, bound: Lsn) -> Vec<(PageId, u32, Lsn)> {
        let st = self.state.lock();
        let Some(set) = st.by_space.get(&space) else {
            return Vec::new();
        };
        let mut v: Vec<(PageId, u32, Lsn)> = set
            .iter()
            .filter_map(|&idx| {
                let o = Lsn(self.frame(idx).oldest_modification.load(Ordering::Acquire));
                (o != Lsn::ZERO && o <= bound).then(|| (self.frame_page_id(idx), idx, o))
            })
            .collect();
        v.sort_by_key(|&(_, _, l)| l);
        v
    }

    /// Repeats `snapshot` → write until the snapshot is empty, backing off while the
    /// remaining pages are latched or being written by another thread.
    fn flush_until_clean(
        &self,
        snapshot: impl Fn() -> Vec<(PageId, u32)>,
    ) -> Result<usize, BufferError> {
        let mut total = 0;
        let mut idle = 0u32;
        loop {
            let cands = snapshot();
            if cands.is_empty() {
                return Ok(total);
            }
            let n = self.flush_frames(&cands)?;
            total += n;
            if n > 0 {
                idle = 0;
            } else {
                idle += 1;
                if idle < 16 {
                    thread::yield_now();
                } else {
                    thread::sleep(Duration::from_millis(1));
                }
            }
        }
    }

    /// Asks the cleaner to write every page older than `lsn` (adaptive flushing by checkpoint
    /// age: the log calls this as the checkpoint age grows, so that it never has to stop and
    /// flush furiously when the log is full — lesson 2).
    pub fn request_flush_up_to(&self, lsn: Lsn) {
        self.flush_target.fetch_max(lsn.0, Ordering::Relaxed);
        self.cleaner_signal.wake();
    }

    /// The highest LSN requested through [`BufferPool::request_flush_up_to`].
    pub fn requested_flush_lsn(&self) -> Lsn {
        Lsn(self.flush_target.load(Ordering::Relaxed))
    }

    /// Writes the given dirty frames in batches of `flush_batch_pages`. Returns pages written.
    fn flush_frames(&self, cands: &[(PageId, u32)]) -> Result<usize, BufferError> {
        let mut written = 0;
        for chunk in cands.chunks(self.cfg.flush_batch_pages as usize) {
            written += self.flush_chunk(chunk)?;
        }
        Ok(written)
    }

    /// Copies each page under a (tried) S latch, releases the latch, forces the log up to the
    /// newest copy (invariant 1), writes the batch, then marks the pages clean where the copy
    /// is still current (invariant 7).
    fn flush_chunk(&self, chunk: &[(PageId, u32)]) -> Result<usize, BufferError> {
        let ps = self.cfg.page_size.bytes();
        let mut batch: Vec<FlushPage> = Vec::with_capacity(chunk.len());
        let mut claimed: Vec<u32> = Vec::with_capacity(chunk.len());
        for &(id, idx) in chunk {
            // The frame may have been cleaned, evicted and reused since it was noted.
            if !self.table.pin_if(id, idx, &self.frames) {
                continue;
            }
            let f = self.frame(idx);
            if f.flushing.swap(true, Ordering::Acquire) {
                self.unpin(idx);
                continue;
            }
            // Only try: the caller may hold page latches (eviction in a B-tree descent),
            // and an X holder may be waiting for a frame that we would be holding up.
            if !f.latch.try_lock_shared() {
                f.flushing.store(false, Ordering::Release);
                self.unpin(idx);
                continue;
            }
            let oldest = f.oldest_modification.load(Ordering::Acquire);
            if oldest == 0 {
                // SAFETY: locked just above.
                unsafe { f.latch.unlock_shared() };
                f.flushing.store(false, Ordering::Release);
                self.unpin(idx);
                continue;
            }
            let mut image = AlignedBuf::zeroed(ps, FRAME_ALIGN);
            // SAFETY: we hold the S latch.
            image.copy_from_slice(unsafe { self.arena.page(idx) });
            let lsn = Header::new(&image).lsn();
            // Read with the image, under the same S latch (frame invariant 6).
            let initialized = f.init_on_flush.load(Ordering::Relaxed);
            debug_assert_eq!(
                lsn.0,
                f.newest_modification.load(Ordering::Relaxed),
                "frame invariant 3"
            );
            debug_assert!(lsn.0 >= oldest, "page {id}: LSN {lsn} < oldest {oldest}");
            // SAFETY: locked above.
            unsafe { f.latch.unlock_shared() };
            page::stamp(&mut image);
            batch.push(FlushPage {
                id,
                lsn,
                image,
                initialized,
            });
            claimed.push(idx);
        }
        if batch.is_empty() {
            return Ok(0);
        }
        let max_lsn = batch.iter().map(|p| p.lsn).max().unwrap_or(Lsn::ZERO);
        self.wal.flush_up_to(max_lsn);
        if let Some(durable) = self.wal.durable_lsn() {
            assert!(
                durable >= max_lsn,
                "write-ahead rule: writing a page with LSN {max_lsn}, log durable to {durable}"
            );
        }
        let res = self.writer.write_batch(&batch);
        for (p, &idx) in batch.iter().zip(&claimed) {
            if res.is_ok() {
                self.complete_write(idx, p.lsn);
            }
            self.frame(idx).flushing.store(false, Ordering::Release);
            self.unpin(idx);
        }
        res?;
        self.counters
            .pages_written
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        self.counters.flush_batches.fetch_add(1, Ordering::Relaxed);
        Ok(batch.len())
    }

    /// After the image with page LSN `copy_lsn` of frame `idx` is durable: invariant 7.
    ///
    /// If the page changed after the copy, it stays dirty with oldest_modification =
    /// `copy_lsn`. Safe because every change the copy lacks was made by an mtr that latched
    /// the page after the copy, and mtrs reserve their LSN range while holding the latch
    /// (asserted in `mark_dirty`), so those changes start at or after `copy_lsn`; every
    /// earlier change is in the image now on disk. Keeping the older value would also be
    /// safe, but would hold the checkpoint back for no reason.
    fn complete_write(&self, idx: u32, copy_lsn: Lsn) {
        let f = self.frame(idx);
        // S excludes mark_dirty, so newest_modification cannot change under us. If a writer
        // holds the page, we cannot tell: stay dirty (conservative).
        let latched = f.latch.try_lock_shared();
        {
            let mut fl = self.flush_list.lock();
            let oldest = Lsn(f.oldest_modification.load(Ordering::Acquire));
            // We hold the `flushing` flag and a pin: nobody else cleans or discards it.
            debug_assert_ne!(oldest, Lsn::ZERO, "frame {idx} cleaned behind the flusher");
            // Frame invariant 6: after a write the flag no longer describes the page. If it
            // stays dirty, we cannot tell whether its first change after the copy was a
            // PAGE_INIT: clear (the conservative answer; a wrong `true` could lose a page).
            f.init_on_flush.store(false, Ordering::Relaxed);
            if latched && f.newest_modification.load(Ordering::Acquire) == copy_lsn.0 {
                fl.remove(oldest, idx);
                f.oldest_modification.store(0, Ordering::Release);
                self.dirty_pages.fetch_sub(1, Ordering::Relaxed);
            } else if oldest < copy_lsn {
                fl.rekey(oldest, copy_lsn, idx);
                f.oldest_modification.store(copy_lsn.0, Ordering::Release);
            }
        }
        if latched {
            // SAFETY: locked above.
            unsafe { f.latch.unlock_shared() };
        }
    }

    // ---------------------------------------------------------------- DROP

    /// Drops every page of `space` from the pool, dirty ones unwritten (the space is being
    /// dropped; call this before removing it from [`Spaces`] and deleting the file). Waits up
    /// to `discard_wait_ms` for pages that are pinned (a cleaner writing one), then fails
    /// with SpaceInUse. Returns the pages dropped.
    pub fn discard_space(&self, space: SpaceId) -> Result<usize, BufferError> {
        let start = Instant::now();
        let mut discarded = 0;
        loop {
            let frames: Vec<u32> = {
                let st = self.state.lock();
                match st.by_space.get(&space) {
                    None => return Ok(discarded),
                    Some(set) => set.iter().copied().collect(),
                }
            };
            let mut pinned = 0;
            for chunk in frames.chunks(DISCARD_CHUNK) {
                let mut st = self.state.lock();
                for &idx in chunk {
                    let f = self.frame(idx);
                    let raw = f.page.load(Ordering::Relaxed);
                    if raw == NO_PAGE || PageId::from_u64(raw).space != space {
                        continue; // evicted since the snapshot
                    }
                    let id = PageId::from_u64(raw);
                    {
                        let mut map = self.table.write(id);
                        // Page-table invariant 3; the claim synchronizes with the last unpin,
                        // so `oldest` below is exact.
                        if !map.try_unmap(id, idx, f, || true) {
                            pinned += 1;
                            continue;
                        }
                        let oldest = f.oldest_modification.load(Ordering::Acquire);
                        if oldest != 0 {
                            self.flush_list.lock().remove(Lsn(oldest), idx);
                            f.oldest_modification.store(0, Ordering::Release);
                            self.dirty_pages.fetch_sub(1, Ordering::Relaxed);
                        }
                    }
                    self.forget_locked(&mut st, idx, id);
                    f.state.store(FREE, Ordering::Release);
                    st.free.push(idx);
                    discarded += 1;
                }
            }
            self.counters
                .discarded
                .fetch_add(discarded as u64, Ordering::Relaxed);
            if pinned == 0 {
                return Ok(discarded);
            }
            let waited = start.elapsed();
            if waited.as_millis() as u64 >= self.cfg.discard_wait_ms {
                return Err(BufferError::SpaceInUse {
                    space,
                    pinned,
                    waited_ms: waited.as_millis() as u64,
                });
            }
            thread::sleep(Duration::from_millis(1));
        }
    }

    // ---------------------------------------------------------------- observation

    pub fn stats(&self) -> BufferStats {
        let (free_frames, lru_len, lru_old_len) = {
            let st = self.state.lock();
            (st.free.len(), st.lru.len(), st.lru.old_len())
        };
        let c = &self.counters;
        BufferStats {
            frames: self.frames.len(),
            free_frames,
            dirty_pages: self.dirty_pages.load(Ordering::Relaxed),
            lru_len,
            lru_old_len,
            hits: self.table.hits(&self.frames),
            misses: c.misses.load(Ordering::Relaxed),
            pages_read: c.pages_read.load(Ordering::Relaxed),
            pages_created: c.pages_created.load(Ordering::Relaxed),
            pages_written: c.pages_written.load(Ordering::Relaxed),
            flush_batches: c.flush_batches.load(Ordering::Relaxed),
            evictions: c.evictions.load(Ordering::Relaxed),
            made_young: c.made_young.load(Ordering::Relaxed),
            discarded: c.discarded.load(Ordering::Relaxed),
        }
    }

    /// What the cleaner policy looks at.
    pub fn cleaner_inputs(&self) -> super::CleanerInputs {
        let free_frames = self.state.lock().free.len();
        super::CleanerInputs {
            frames: self.frames.len(),
            free_frames,
            free_target: self.free_target,
            dirty_pages: self.dirty_pages.load(Ordering::Relaxed),
            oldest_modification: self.flush_list_oldest(),
            requested_lsn: self.requested_flush_lsn(),
        }
    }

    /// Asserts invariants 3 and 4, the LRU's, the flush list's and the page-table index's,
    /// over every frame. The pool must be quiescent (no other thread using it). O(frames):
    /// for tests.
    #[doc(hidden)]
    pub fn check_invariants(&self) {
        let st = self.state.lock();
        let fl = self.flush_list.lock();
        st.lru.check(&*self.frames);
        let mut on_free = vec![false; self.frames.len()];
        for &i in &st.free {
            assert!(
                !on_free[i as usize],
                "inv 3: frame {i} twice on the free list"
            );
            on_free[i as usize] = true;
        }
        let mut mapped = 0;
        for (i, f) in self.frames.iter().enumerate() {
            let idx = i as u32;
            let raw = f.page.load(Ordering::Relaxed);
            assert_eq!(
                f.pin.load(Ordering::Relaxed),
                0,
                "frame {idx} pinned at rest"
            );
            assert!(!f.latch.is_locked(), "frame {idx} latched at rest");
            match f.state.load(Ordering::Relaxed) {
                FREE => {
                    assert!(on_free[i], "inv 3: free frame {idx} not on the free list");
                    assert!(!st.lru.contains(idx), "inv 3: free frame {idx} on the LRU");
                    assert_eq!(raw, NO_PAGE);
                    assert_eq!(f.oldest_modification.load(Ordering::Relaxed), 0);
                }
                READY => {
                    mapped += 1;
                    assert!(!on_free[i], "inv 3: mapped frame {idx} on the free list");
                    assert!(st.lru.contains(idx), "inv 3: frame {idx} not on the LRU");
                    let id = PageId::from_u64(raw);
                    assert_eq!(
                        self.table.get(id),
                        Some(idx),
                        "inv 3: frame {idx} ({id}) not in the page table"
                    );
                    assert!(
                        st.by_space.get(&id.space).is_some_and(|s| s.contains(&idx)),
                        "inv 3: frame {idx} not in its space set"
                    );
                    // SAFETY: quiescent pool, nobody holds a latch (asserted above).
                    let lsn = Header::new(unsafe { self.arena.page(idx) }).lsn();
                    assert_eq!(lsn.0, f.newest_modification.load(Ordering::Relaxed));
                    let oldest = f.oldest_modification.load(Ordering::Relaxed);
                    if oldest != 0 {
                        assert_eq!(fl.get(Lsn(oldest), idx), Some(id), "flush inv 1");
                    }
                }
                s => panic!("frame {idx} in state {s} at rest"),
            }
        }
        assert_eq!(mapped, st.lru.len());
        assert_eq!(
            st.by_space.values().map(HashSet::len).sum::<usize>(),
            mapped,
            "inv 3: space sets"
        );
        assert_eq!(fl.len(), self.dirty_pages.load(Ordering::Relaxed));
        self.table.check();
    }
}
