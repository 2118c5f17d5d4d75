//! The lock-free hit path against eviction: a pool of a few frames over many more pages, with
//! threads hitting a small set of pages while others (and the page cleaner) keep evicting.
//! Every page carries its own number in its header and all over its body, so a hit that
//! pinned a frame after it was evicted and refilled with another page (a broken
//! pin-then-validate) returns the wrong page and fails here; so does a frame evicted while
//! a reader holds it (checked again after a yield). Some requests ask for pages past the end of
//! the space: their reads fail, and the frames they had mapped must return to the free list
//! exactly once although lock-free hits keep pinning them (checked at the end).
//!
//! Runs ~3 s by default; `QUIRE_BUFHIT_STRESS_SECS=60` runs longer.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use quire_engine::buffer::{BufferConfig, BufferPool, NoWal, PageCleaner};
use quire_engine::page::{Header, Lsn, PageId, PageNo, PageSize, PageType, SpaceId, HEADER_SIZE};
use quire_engine::space::{Space, Spaces};
use quire_io::os::OsVfs;
use rand::{Rng, SeedableRng};

const PS: usize = 4096;
const PAGES: u32 = 256;
const FRAMES: usize = 12;
/// Hitters pick among this many pages: most of their requests are hits, on frames that the
/// evictor's misses (reads enter the LRU's old sublist, nothing is promoted) keep pushing out.
const HOT: u32 = 4;
const HITTERS: u64 = 3;
const EVICTORS: u64 = 1;

fn pid(n: u32) -> PageId {
    PageId::new(SpaceId(1), PageNo(n))
}

fn run_time() -> Duration {
    let secs = std::env::var("QUIRE_BUFHIT_STRESS_SECS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(3);
    Duration::from_secs(secs)
}

fn stamp(p: &mut [u8], n: u32) {
    for w in p[HEADER_SIZE..PS - 8].chunks_exact_mut(4) {
        w.copy_from_slice(&n.to_le_bytes());
    }
}

/// Asserts that `p`, handed out for page `n`, is page `n`: frame, header and body.
fn check(p: &[u8], frame_says: PageId, n: u32) {
    assert_eq!(
        frame_says,
        pid(n),
        "the frame handed out holds another page"
    );
    assert_eq!(
        Header::new(p).page_id(),
        pid(n),
        "the page header names another page"
    );
    let body = &p[HEADER_SIZE..PS - 8];
    if let Some(w) = body
        .chunks_exact(4)
        .find(|w| *w != n.to_le_bytes().as_slice())
    {
        panic!("page {n}: body holds {w:?}, another page's stamp");
    }
}

fn pool(dir: &std::path::Path) -> Arc<BufferPool> {
    let ps = PageSize::new(PS as u32).expect("ps");
    let space =
        Space::create(&OsVfs::new(), &dir.join("hits.qsp"), SpaceId(1), ps, PAGES).expect("space");
    let spaces = Arc::new(Spaces::new());
    spaces.insert(Arc::new(space));
    let cfg = BufferConfig {
        size_bytes: (FRAMES * PS) as u64,
        page_size: ps,
        cleaner_interval_ms: 1,
        lru_scan_depth: 4,
        pool_exhausted_wait_ms: 10_000,
        ..BufferConfig::default()
    };
    BufferPool::new(cfg, spaces, Arc::new(NoWal)).expect("pool")
}

#[test]
fn hits_racing_evictions_always_get_the_page_asked_for() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pool = pool(dir.path());
    for n in 0..PAGES {
        let mut p = pool.create(pid(n), PageType::Raw).expect("create");
        stamp(&mut p, n);
        p.mark_dirty(Lsn(1 + 2 * u64::from(n)), Lsn(2 + 2 * u64::from(n)));
    }
    pool.flush_all().expect("flush");
    let before = pool.stats();

    let cleaner = PageCleaner::start(pool.clone()).expect("cleaner");
    let run = run_time();
    let start = Instant::now();
    let (hits_ok, failed_reads) = (AtomicU64::new(0), AtomicU64::new(0));
    thread::scope(|s| {
        for t in 0..HITTERS + EVICTORS {
            let (pool, hits_ok, failed_reads) = (&pool, &hits_ok, &failed_reads);
            s.spawn(move || {
                let mut rng = rand::rngs::SmallRng::seed_from_u64(t);
                let hitter = t < HITTERS;
                let mut i = 0u64;
                while start.elapsed() < run {
                    i += 1;
                    if i.is_multiple_of(64) {
                        // A page past the end: mapped READING, then its read fails (ORPHAN).
                        let n = PAGES + rng.gen_range(0..2);
                        pool.get_shared(pid(n))
                            .expect_err("a page past the end of the space was read");
                        failed_reads.fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                    let n = if hitter {
                        rng.gen_range(0..HOT)
                    } else {
                        rng.gen_range(0..PAGES)
                    };
                    let p = pool.get_shared(pid(n)).expect("get_shared");
                    check(&p, p.page_id(), n);
                    if i.is_multiple_of(8) {
                        // Hold it while others evict: a pinned frame must not move.
                        thread::yield_now();
                        check(&p, p.page_id(), n);
                    }
                    hits_ok.fetch_add(u64::from(hitter), Ordering::Relaxed);
                }
            });
        }
    });
    cleaner.shutdown();

    let s = pool.stats();
    eprintln!(
        "{:?}: {} hitter requests, {} failed reads, {s:?}",
        start.elapsed(),
        hits_ok.load(Ordering::Relaxed),
        failed_reads.load(Ordering::Relaxed)
    );
    assert!(
        s.evictions > before.evictions + 1000,
        "not enough eviction pressure: {s:?}"
    );
    assert!(
        s.hits > before.hits + 1000,
        "not enough hits to race the evictions: {s:?}"
    );
    assert!(failed_reads.load(Ordering::Relaxed) > 0);
    // Every frame is free or mapped once: an ORPHAN freed twice (or never) fails here.
    pool.check_invariants();
    for n in 0..PAGES {
        let p = pool.get_shared(pid(n)).expect("read back");
        check(&p, p.page_id(), n);
    }
}
