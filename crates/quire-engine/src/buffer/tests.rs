//! Behaviour tests for the buffer pool, on real files in a temporary directory.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use quire_io::os::OsVfs;
use quire_io::{OpenOptions, Vfs};
use tempfile::TempDir;

use super::*;
use crate::page::{
    init_header, set_lsn, stamp, Header, Lsn, PageId, PageNo, PageSize, PageType, SpaceId,
    HEADER_SIZE,
};
use crate::space::{Space, Spaces};

const PS: usize = 4096;

fn ps() -> PageSize {
    PageSize::new(PS as u32).expect("page size")
}

fn id(space: u32, n: u32) -> PageId {
    PageId::new(SpaceId(space), PageNo(n))
}

struct Fixture {
    dir: TempDir,
    spaces: Arc<Spaces>,
}

impl Fixture {
    /// Spaces 1 and 2, `pages` pages each.
    fn new(pages: u32) -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let spaces = Arc::new(Spaces::new());
        for s in [1, 2] {
            let path = dir.path().join(format!("s{s}.qsp"));
            let sp = Space::create(&OsVfs::new(), &path, SpaceId(s), ps(), pages).expect("create");
            spaces.insert(Arc::new(sp));
        }
        Fixture { dir, spaces }
    }

    fn space(&self, s: u32) -> Arc<Space> {
        self.spaces.get(SpaceId(s)).expect("space")
    }

    /// Writes a stamped page straight to disk, behind the pool's back.
    fn write_raw(&self, pid: PageId, fill: u8, lsn: u64) {
        // O_DIRECT is granted on this file system: page buffers must be aligned.
        let mut p = quire_io::AlignedBuf::zeroed(PS, 4096);
        p.fill(fill);
        init_header(&mut p, pid, PageType::Raw);
        set_lsn(&mut p, Lsn(lsn));
        stamp(&mut p);
        self.space(pid.space.0)
            .write_page(pid.page_no, &p)
            .expect("write");
    }

    fn read_raw(&self, pid: PageId) -> Vec<u8> {
        let mut b = quire_io::AlignedBuf::zeroed(PS, 4096);
        self.space(pid.space.0)
            .read_page(pid.page_no, &mut b)
            .expect("read");
        b.to_vec()
    }

    fn pool(&self, frames: usize) -> Arc<BufferPool> {
        self.pool_with(cfg(frames), Arc::new(NoWal))
    }

    fn pool_with(&self, cfg: BufferConfig, wal: Arc<dyn WalGate>) -> Arc<BufferPool> {
        BufferPool::new(cfg, self.spaces.clone(), wal).expect("pool")
    }
}

fn cfg(frames: usize) -> BufferConfig {
    BufferConfig {
        size_bytes: (frames * PS) as u64,
        page_size: ps(),
        pool_exhausted_wait_ms: 50,
        discard_wait_ms: 200,
        cleaner_interval_ms: 10,
        ..BufferConfig::default()
    }
}

/// Creates `pid` with every body byte `fill`, dirtied by [lsn, lsn + 1).
fn create_dirty(pool: &BufferPool, pid: PageId, fill: u8, lsn: u64) {
    let mut p = pool.create(pid, PageType::Raw).expect("create");
    let n = p.len();
    p[HEADER_SIZE..n - 8].fill(fill);
    p.mark_dirty(Lsn(lsn), Lsn(lsn + 1));
}

fn body(page: &[u8]) -> &[u8] {
    &page[HEADER_SIZE..page.len() - 8]
}

/// A log that records how far it was asked to flush.
#[derive(Default)]
struct RecordingWal {
    durable: AtomicU64,
    calls: AtomicU64,
}

impl WalGate for RecordingWal {
    fn flush_up_to(&self, lsn: Lsn) {
        self.durable.fetch_max(lsn.0, Ordering::SeqCst);
        self.calls.fetch_add(1, Ordering::SeqCst);
    }
    fn durable_lsn(&self) -> Option<Lsn> {
        Some(Lsn(self.durable.load(Ordering::SeqCst)))
    }
}

/// Records which pages each batch wrote, then writes them for real.
struct RecordingWriter {
    inner: SpaceWriter,
    batches: Mutex<Vec<Vec<(PageId, Lsn)>>>,
    wal: Arc<RecordingWal>,
}

impl PageWriter for RecordingWriter {
    fn write_batch(&self, pages: &[FlushPage]) -> Result<(), crate::space::SpaceError> {
        for p in pages {
            // The write-ahead rule, seen from the writer.
            assert!(self.wal.durable.load(Ordering::SeqCst) >= p.lsn.0);
            assert_eq!(Header::new(&p.image).lsn(), p.lsn);
        }
        self.batches
            .lock()
            .push(pages.iter().map(|p| (p.id, p.lsn)).collect());
        self.inner.write_batch(pages)
    }
}

fn recording_pool(
    fx: &Fixture,
    cfg: BufferConfig,
) -> (Arc<BufferPool>, Arc<RecordingWriter>, Arc<RecordingWal>) {
    let wal = Arc::new(RecordingWal::default());
    let writer = Arc::new(RecordingWriter {
        inner: SpaceWriter::new(fx.spaces.clone()),
        batches: Mutex::new(Vec::new()),
        wal: wal.clone(),
    });
    let pool =
        BufferPool::with_writer(cfg, fx.spaces.clone(), wal.clone(), writer.clone()).expect("pool");
    (pool, writer, wal)
}

#[test]
fn hit_does_not_read_from_disk() {
    let fx = Fixture::new(64);
    fx.write_raw(id(1, 3), 0x33, 7);
    let pool = fx.pool(16);
    drop(pool.get_shared(id(1, 3)).expect("first"));
    assert_eq!(pool.stats().pages_read, 1);
    for _ in 0..100 {
        let p = pool.get_shared(id(1, 3)).expect("hit");
        assert_eq!(body(&p)[0], 0x33);
    }
    let s = pool.stats();
    assert_eq!(s.pages_read, 1);
    assert_eq!(s.misses, 1);
    assert!(s.hits >= 100);
    pool.check_invariants();
}

#[test]
fn missing_page_is_read_and_verified() {
    let fx = Fixture::new(64);
    fx.write_raw(id(1, 5), 0xa5, 42);
    let pool = fx.pool(16);
    let p = pool.get_shared(id(1, 5)).expect("read");
    assert_eq!(&p[..], &fx.read_raw(id(1, 5))[..]);
    assert_eq!(p.lsn(), Lsn(42));
    assert_eq!(p.page_id(), id(1, 5));
}

#[test]
fn corrupt_page_is_reported_not_served() {
    let fx = Fixture::new(64);
    fx.write_raw(id(1, 5), 0xa5, 42);
    // Flip one bit of the body behind the engine's back.
    let path = fx.dir.path().join("s1.qsp");
    let raw = OsVfs::new()
        .open(&path, OpenOptions::existing())
        .expect("open");
    let off = ps().offset_of(PageNo(5)) + 1000;
    let mut b = [0u8; 1];
    raw.read_exact_at(&mut b, off).expect("read");
    raw.write_all_at(&[b[0] ^ 1], off).expect("write");

    let pool = fx.pool(16);
    // Several requesters at once: each gets the error, none gets the page, and no frame is
    // left behind.
    let barrier = Barrier::new(4);
    thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                barrier.wait();
                let err = pool.get_shared(id(1, 5)).expect_err("corrupt page served");
                let msg = err.to_string();
                assert!(msg.contains("s1.qsp") && msg.contains("page 5"), "{msg}");
                assert!(matches!(err, BufferError::Space(_)));
            });
        }
    });
    assert!(!pool.contains(id(1, 5)));
    pool.check_invariants();
    assert_eq!(pool.stats().free_frames, 16);
    // A never-written page is an error too.
    assert!(pool.get_exclusive(id(1, 6)).is_err());
    pool.check_invariants();
}

#[test]
fn concurrent_requesters_read_a_page_once() {
    let fx = Fixture::new(64);
    fx.write_raw(id(1, 9), 9, 9);
    let pool = fx.pool(16);
    let barrier = Barrier::new(4);
    thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                barrier.wait();
                let p = pool.get_shared(id(1, 9)).expect("get");
                assert_eq!(body(&p)[0], 9);
            });
        }
    });
    assert_eq!(pool.stats().pages_read, 1);
    pool.check_invariants();
}

#[test]
fn create_does_not_read_from_disk() {
    let fx = Fixture::new(64);
    fx.write_raw(id(1, 4), 0xee, 3);
    let pool = fx.pool(16);
    let p = pool.create(id(1, 4), PageType::Index).expect("create");
    assert_eq!(pool.stats().pages_read, 0);
    assert!(body(&p).iter().all(|&b| b == 0), "old contents leaked");
    assert_eq!(Header::new(&p).page_type(), Some(PageType::Index));
    let mut p = p;
    p.mark_dirty(Lsn(10), Lsn(11));
    drop(p);
    // Past the end of the space: refused up front.
    assert!(pool.create(id(1, 64), PageType::Raw).is_err());
}

#[test]
fn dirty_victim_is_written_before_eviction() {
    let fx = Fixture::new(64);
    fx.write_raw(id(1, 50), 0x50, 1);
    let (pool, writer, wal) = recording_pool(&fx, cfg(8));
    for n in 0..8 {
        create_dirty(&pool, id(1, n), n as u8 + 1, 100 + u64::from(n) * 10);
    }
    assert_eq!(pool.stats().free_frames, 0);
    assert_eq!(pool.stats().dirty_pages, 8);
    // Every frame is dirty: reading another page must write a victim first.
    let p = pool.get_shared(id(1, 50)).expect("read with eviction");
    assert_eq!(body(&p)[0], 0x50);
    drop(p);
    let s = pool.stats();
    assert!(s.pages_written >= 1 && s.evictions >= 1, "{s:?}");
    assert!(wal.calls.load(Ordering::SeqCst) >= 1);
    // Each evicted page's latest image is on disk.
    for n in 0..8 {
        if !pool.contains(id(1, n)) {
            assert!(body(&fx.read_raw(id(1, n)))
                .iter()
                .all(|&b| b == n as u8 + 1));
        }
    }
    assert!(!writer.batches.lock().is_empty());
    pool.check_invariants();
}

#[test]
fn log_is_forced_before_a_page_is_written() {
    let fx = Fixture::new(64);
    let (pool, writer, wal) = recording_pool(&fx, cfg(16));
    create_dirty(&pool, id(1, 1), 1, 500);
    create_dirty(&pool, id(1, 2), 2, 900);
    pool.flush_all().expect("flush");
    // RecordingWriter asserted durable >= each page LSN; the gate saw the newest.
    assert_eq!(wal.durable.load(Ordering::SeqCst), 901);
    assert_eq!(writer.batches.lock().len(), 1);
}

#[test]
fn flush_list_is_ordered_by_oldest_modification() {
    let fx = Fixture::new(64);
    let (pool, writer, _) = recording_pool(&fx, cfg(16));
    // Dirtied out of LSN order.
    for (n, lsn) in [(1, 300), (2, 100), (3, 500), (4, 200), (5, 400)] {
        create_dirty(&pool, id(1, n), n as u8, lsn);
    }
    assert_eq!(pool.flush_list_oldest(), Some(Lsn(100)));
    let mut order = Vec::new();
    while pool.flush_batch(1).expect("flush") == 1 {
        let b = writer.batches.lock().last().cloned().expect("batch");
        order.push(b[0].0.page_no.0);
    }
    assert_eq!(order, vec![2, 4, 1, 5, 3]);
    assert_eq!(pool.flush_list_oldest(), None);
    assert_eq!(pool.stats().dirty_pages, 0);
    pool.check_invariants();
}

/// Blocks the first batch until the test says go.
struct GateWriter {
    inner: SpaceWriter,
    armed: AtomicBool,
    entered: Mutex<Option<mpsc::Sender<()>>>,
    proceed: Mutex<Option<mpsc::Receiver<()>>>,
}

impl PageWriter for GateWriter {
    fn write_batch(&self, pages: &[FlushPage]) -> Result<(), crate::space::SpaceError> {
        if self.armed.swap(false, Ordering::SeqCst) {
            if let Some(tx) = self.entered.lock().take() {
                tx.send(()).expect("send");
            }
            if let Some(rx) = self.proceed.lock().take() {
                rx.recv().expect("recv");
            }
        }
        self.inner.write_batch(pages)
    }
}

#[test]
fn redirtied_page_during_flush_stays_dirty() {
    let fx = Fixture::new(64);
    let (entered_tx, entered_rx) = mpsc::channel();
    let (proceed_tx, proceed_rx) = mpsc::channel();
    let writer = Arc::new(GateWriter {
        inner: SpaceWriter::new(fx.spaces.clone()),
        armed: AtomicBool::new(true),
        entered: Mutex::new(Some(entered_tx)),
        proceed: Mutex::new(Some(proceed_rx)),
    });
    let pool = BufferPool::with_writer(cfg(16), fx.spaces.clone(), Arc::new(NoWal), writer.clone())
        .expect("pool");
    let pid = id(1, 7);
    create_dirty(&pool, pid, 0x11, 100); // page LSN 101, oldest 100
    thread::scope(|s| {
        let flusher = s.spawn(|| pool.flush_batch(10).expect("flush"));
        // The copy (LSN 101) is taken and the latch released; the write is in flight.
        entered_rx.recv().expect("writer entered");
        {
            let mut p = pool.get_exclusive(pid).expect("x latch while writing");
            let n = p.len();
            p[HEADER_SIZE..n - 8].fill(0x22);
            p.mark_dirty(Lsn(200), Lsn(201));
        }
        proceed_tx.send(()).expect("go");
        assert_eq!(flusher.join().expect("flusher"), 1);
    });
    // The disk has the old image; the page must still be dirty, with an oldest modification
    // no later than the copy's LSN (redo from there covers the second change).
    assert_eq!(Header::new(&fx.read_raw(pid)).lsn(), Lsn(101));
    assert_eq!(pool.stats().dirty_pages, 1);
    let oldest = pool.flush_list_oldest().expect("still dirty");
    assert!(oldest <= Lsn(101) && oldest >= Lsn(100), "oldest {oldest}");
    pool.check_invariants();
    // The next flush writes the second change and cleans the page.
    pool.flush_all().expect("flush");
    assert_eq!(pool.stats().dirty_pages, 0);
    let disk = fx.read_raw(pid);
    assert_eq!(Header::new(&disk).lsn(), Lsn(201));
    assert!(body(&disk).iter().all(|&b| b == 0x22));
}

/// Runs `f` on a thread and reports whether it finished within `ms`.
fn finishes_within<'s>(
    s: &'s thread::Scope<'s, '_>,
    ms: u64,
    f: impl FnOnce() + Send + 's,
) -> (bool, thread::ScopedJoinHandle<'s, ()>) {
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    let h = s.spawn(move || {
        f();
        d.store(true, Ordering::SeqCst);
    });
    let deadline = Instant::now() + Duration::from_millis(ms);
    while Instant::now() < deadline && !done.load(Ordering::SeqCst) {
        thread::sleep(Duration::from_millis(2));
    }
    (done.load(Ordering::SeqCst), h)
}

#[test]
fn sx_latch_admits_readers_excludes_writers() {
    let fx = Fixture::new(64);
    fx.write_raw(id(1, 1), 1, 1);
    let pool = fx.pool(16);
    let pid = id(1, 1);
    let sx = pool.get_sx(pid).expect("sx");
    thread::scope(|s| {
        let (reader_done, _) = finishes_within(s, 500, || {
            drop(pool.get_shared(pid).expect("s"));
        });
        assert!(reader_done, "S blocked by SX");
        let (sx_done, sx_h) = finishes_within(s, 50, || {
            drop(pool.get_sx(pid).expect("sx 2"));
        });
        assert!(!sx_done, "second SX admitted alongside SX");
        let (x_done, x_h) = finishes_within(s, 50, || {
            drop(pool.get_exclusive(pid).expect("x"));
        });
        assert!(!x_done, "X admitted alongside SX");
        // SX upgrades to X, with a reader gone; then everything proceeds once released.
        let mut x = sx.upgrade();
        x[HEADER_SIZE] = 9;
        x.mark_dirty(Lsn(5), Lsn(6));
        drop(x);
        sx_h.join().expect("sx waiter");
        x_h.join().expect("x waiter");
    });
    assert_eq!(pool.get_shared(pid).expect("s")[HEADER_SIZE], 9);
    pool.check_invariants();
}

#[test]
fn exhausted_pool_reports_error() {
    let fx = Fixture::new(64);
    for n in 0..9 {
        fx.write_raw(id(1, n), n as u8, 1);
    }
    let pool = fx.pool(8);
    let held: Vec<_> = (0..8)
        .map(|n| pool.get_shared(id(1, n)).expect("pin"))
        .collect();
    let t = Instant::now();
    let err = pool
        .get_shared(id(1, 8))
        .expect_err("a 9th page fits in 8 pinned frames");
    assert!(
        matches!(err, BufferError::PoolExhausted { frames: 8, .. }),
        "{err}"
    );
    assert!(t.elapsed() < Duration::from_secs(2), "the wait is bounded");
    drop(held);
    drop(pool.get_shared(id(1, 8)).expect("room again"));
    pool.check_invariants();
}

#[test]
fn scan_does_not_evict_hot_set() {
    let fx = Fixture::new(1024);
    for n in 0..600 {
        fx.write_raw(id(1, n), (n % 251) as u8, 1);
    }
    let pool = fx.pool_with(
        BufferConfig {
            old_blocks_time_ms: 20,
            ..cfg(64)
        },
        Arc::new(NoWal),
    );
    // Fill the pool, then read the hot set (the pool is full, so the LRU is in force).
    for n in 100..164 {
        drop(pool.get_shared(id(1, n)).expect("fill"));
    }
    let hot: Vec<PageId> = (0..10).map(|n| id(1, n)).collect();
    for &h in &hot {
        drop(pool.get_shared(h).expect("hot"));
    }
    // Accessed again after old_blocks_time: promoted to the young sublist.
    thread::sleep(Duration::from_millis(30));
    for &h in &hot {
        drop(pool.get_shared(h).expect("hot again"));
    }
    assert!(pool.stats().made_young >= 10);
    // A scan of 400 other pages, each touched several times in quick succession (rows of a
    // page), as a table scan does.
    for n in 200..600 {
        for _ in 0..3 {
            drop(pool.get_shared(id(1, n)).expect("scan"));
        }
    }
    let before = pool.stats().pages_read;
    for &h in &hot {
        assert!(pool.contains(h), "hot page {h} evicted by the scan");
        drop(pool.get_shared(h).expect("hot after scan"));
    }
    assert_eq!(pool.stats().pages_read, before, "hot set re-read from disk");
    pool.check_invariants();
}

#[test]
fn young_hits_do_not_move_pages() {
    let fx = Fixture::new(256);
    for n in 0..100 {
        fx.write_raw(id(1, n), 1, 1);
    }
    let pool = fx.pool_with(
        BufferConfig {
            old_blocks_time_ms: 0,
            ..cfg(32)
        },
        Arc::new(NoWal),
    );
    for n in 0..100 {
        drop(pool.get_shared(id(1, n)).expect("fill"));
    }
    // Hot pages: read and promoted.
    for _ in 0..2 {
        for n in 90..100 {
            drop(pool.get_shared(id(1, n)).expect("hot"));
        }
    }
    let moved = pool.stats().made_young;
    for _ in 0..1000 {
        for n in 95..100 {
            drop(pool.get_shared(id(1, n)).expect("hit"));
        }
    }
    // Hits on pages near the young head never take the pool mutex to reorder.
    assert!(pool.stats().made_young - moved <= 5, "{:?}", pool.stats());
}

#[test]
fn flush_space_writes_only_that_space() {
    let fx = Fixture::new(64);
    let pool = fx.pool(32);
    for n in 0..5 {
        create_dirty(&pool, id(1, n), 1, 10 + u64::from(n));
        create_dirty(&pool, id(2, n), 2, 20 + u64::from(n));
    }
    assert_eq!(pool.flush_space(SpaceId(1)).expect("flush"), 5);
    assert_eq!(pool.stats().dirty_pages, 5);
    assert_eq!(pool.flush_list_oldest(), Some(Lsn(20)));
    for n in 0..5 {
        assert!(body(&fx.read_raw(id(1, n))).iter().all(|&b| b == 1));
    }
    pool.check_invariants();
}

#[test]
fn adjacent_dirty_pages_go_out_in_one_write() {
    let fx = Fixture::new(64);
    let writer = Arc::new(SpaceWriter::new(fx.spaces.clone()));
    let pool = BufferPool::with_writer(cfg(32), fx.spaces.clone(), Arc::new(NoWal), writer.clone())
        .expect("pool");
    for n in (10..20).rev() {
        create_dirty(&pool, id(1, n), n as u8, 100 - u64::from(n));
    }
    create_dirty(&pool, id(1, 30), 30, 200);
    assert_eq!(pool.flush_all().expect("flush"), 11);
    assert_eq!(writer.writes(), 2, "one pwritev per run of adjacent pages");
    assert_eq!(writer.syncs(), 1, "one sync per space per batch");
}

#[test]
fn discard_space_drops_pages_without_writing_them() {
    let fx = Fixture::new(64);
    fx.write_raw(id(2, 40), 4, 1);
    let pool = fx.pool(32);
    for n in 0..5 {
        create_dirty(&pool, id(1, n), 1, 10);
        create_dirty(&pool, id(2, n), 2, 20);
    }
    drop(pool.get_shared(id(2, 40)).expect("clean page"));
    assert_eq!(pool.discard_space(SpaceId(2)).expect("discard"), 6);
    let s = pool.stats();
    assert_eq!(s.pages_written, 0);
    assert_eq!(s.dirty_pages, 5);
    assert!(!pool.contains(id(2, 0)) && !pool.contains(id(2, 40)));
    assert!(pool.contains(id(1, 0)));
    pool.check_invariants();
    // A pinned page makes the discard wait, then fail, rather than pull the page away.
    let held = pool.get_shared(id(1, 0)).expect("pin");
    let err = pool
        .discard_space(SpaceId(1))
        .expect_err("pinned page discarded");
    assert!(
        matches!(err, BufferError::SpaceInUse { pinned: 1, .. }),
        "{err}"
    );
    drop(held);
    assert_eq!(pool.discard_space(SpaceId(1)).expect("discard"), 1);
    assert_eq!(pool.stats().dirty_pages, 0);
    pool.check_invariants();
}

#[test]
fn pool_smaller_than_minimum_is_refused() {
    let fx = Fixture::new(64);
    let err = BufferPool::new(cfg(4), fx.spaces.clone(), Arc::new(NoWal)).expect_err("tiny");
    assert!(err.to_string().contains("innodb_buffer_pool_size"), "{err}");
}

fn wait_until(ms: u64, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_millis(ms);
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        thread::sleep(Duration::from_millis(5));
    }
    cond()
}

#[test]
fn cleaner_flushes_when_dirty_share_exceeds_maximum() {
    let fx = Fixture::new(64);
    let pool = fx.pool_with(
        BufferConfig {
            max_dirty_pages_pct: 25,
            max_dirty_pages_pct_lwm: 0,
            ..cfg(32)
        },
        Arc::new(NoWal),
    );
    for n in 0..16 {
        create_dirty(&pool, id(1, n), 1, 10 + u64::from(n));
    }
    let cleaner = PageCleaner::start(pool.clone()).expect("start");
    assert!(
        wait_until(3000, || pool.stats().dirty_pages * 100 < 25 * 32),
        "{:?}",
        pool.stats()
    );
    cleaner.shutdown();
}

#[test]
fn cleaner_honours_requested_flush_lsn() {
    let fx = Fixture::new(64);
    let pool = fx.pool_with(
        BufferConfig {
            max_dirty_pages_pct_lwm: 0,
            ..cfg(32)
        },
        Arc::new(NoWal),
    );
    for n in 0..10 {
        create_dirty(&pool, id(1, n), 1, 100 * (u64::from(n) + 1));
    }
    let cleaner = PageCleaner::start(pool.clone()).expect("start");
    pool.request_flush_up_to(Lsn(550));
    assert!(wait_until(3000, || pool.flush_list_oldest() > Some(Lsn(550))));
    // Pages newer than the target are left alone (no other reason to flush them).
    assert_eq!(pool.stats().dirty_pages, 5);
    drop(cleaner);
}

#[test]
fn cleaner_keeps_free_frames_ready() {
    let fx = Fixture::new(256);
    for n in 0..200 {
        fx.write_raw(id(1, n), 1, 1);
    }
    let pool = fx.pool(64);
    for n in 0..64 {
        drop(pool.get_shared(id(1, n)).expect("fill"));
    }
    for n in 0..20 {
        create_dirty(&pool, id(1, 100 + n), 1, 10);
    }
    assert_eq!(pool.stats().free_frames, 0);
    let cleaner = PageCleaner::start(pool.clone()).expect("start");
    pool.cleaner_signal.wake();
    assert!(wait_until(3000, || pool.stats().free_frames >= pool.free_target()));
    cleaner.shutdown();
    pool.check_invariants();
}
