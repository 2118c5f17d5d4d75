//! Concurrent readers and writers over overlapping pages in a small pool, with the page
//! cleaner running. Every page holds a counter, repeated over its whole body: a reader that
//! sees a torn mixture, a lost update or a stale page after eviction fails the test. At the
//! end the disk holds exactly the number of increments each page received.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use quire_engine::buffer::{BufferConfig, BufferPool, NoWal, PageCleaner};
use quire_engine::page::{Lsn, PageId, PageNo, PageSize, PageType, SpaceId, HEADER_SIZE};
use quire_engine::space::{Space, Spaces};
use quire_io::os::OsVfs;
use rand::{Rng, SeedableRng};

const PS: usize = 4096;
const PAGES: u32 = 48;
const FRAMES: usize = 16;
const THREADS: usize = 4;
const RUN: Duration = Duration::from_millis(1500);

fn pid(n: u32) -> PageId {
    PageId::new(SpaceId(1), PageNo(n))
}

/// The counter a page holds, after checking that the whole body agrees with it.
fn counter(p: &[u8], n: u32) -> u64 {
    let b = &p[HEADER_SIZE..PS - 8];
    let c = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
    let fill = c as u8;
    assert!(
        b[8..].iter().all(|&x| x == fill),
        "page {n}: body does not match counter {c}"
    );
    c
}

fn set_counter(p: &mut [u8], c: u64) {
    let b = &mut p[HEADER_SIZE..PS - 8];
    b[..8].copy_from_slice(&c.to_le_bytes());
    b[8..].fill(c as u8);
}

fn pool_over(dir: &std::path::Path, create: bool) -> Arc<BufferPool> {
    let ps = PageSize::new(PS as u32).expect("ps");
    let path = dir.join("stress.qsp");
    let space = if create {
        Space::create(&OsVfs::new(), &path, SpaceId(1), ps, PAGES)
    } else {
        Space::open(&OsVfs::new(), &path, SpaceId(1), ps)
    }
    .expect("space");
    let spaces = Arc::new(Spaces::new());
    spaces.insert(Arc::new(space));
    let cfg = BufferConfig {
        size_bytes: (FRAMES * PS) as u64,
        page_size: ps,
        cleaner_interval_ms: 5,
        max_dirty_pages_pct: 50,
        pool_exhausted_wait_ms: 5000,
        ..BufferConfig::default()
    };
    BufferPool::new(cfg, spaces, Arc::new(NoWal)).expect("pool")
}

#[test]
fn concurrent_readers_and_writers_keep_every_page_consistent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lsn = AtomicU64::new(1);
    let expected: Vec<AtomicU64> = (0..PAGES).map(|_| AtomicU64::new(0)).collect();
    {
        let pool = pool_over(dir.path(), true);
        for n in 0..PAGES {
            let mut p = pool.create(pid(n), PageType::Raw).expect("create");
            set_counter(&mut p, 0);
            let l = lsn.fetch_add(2, Ordering::SeqCst);
            p.mark_dirty(Lsn(l), Lsn(l + 1));
        }
        let cleaner = PageCleaner::start(pool.clone()).expect("cleaner");
        let start = Instant::now();
        let ops = AtomicU64::new(0);
        thread::scope(|s| {
            for t in 0..THREADS {
                let (pool, lsn, expected, ops) = (&pool, &lsn, &expected, &ops);
                s.spawn(move || {
                    let mut rng = rand::rngs::SmallRng::seed_from_u64(t as u64);
                    while start.elapsed() < RUN {
                        // Overlapping working sets: half the picks from a hot quarter.
                        let n = if rng.gen_bool(0.5) {
                            rng.gen_range(0..PAGES / 4)
                        } else {
                            rng.gen_range(0..PAGES)
                        };
                        match rng.gen_range(0..10) {
                            0..=3 => {
                                let p = pool.get_shared(pid(n)).expect("s");
                                counter(&p, n);
                            }
                            4 => {
                                // Two pages at once, in page order (latch ordering).
                                let m = (n + 1 + rng.gen_range(0..8)) % PAGES;
                                let (a, b) = (n.min(m), n.max(m));
                                let pa = pool.get_shared(pid(a)).expect("s a");
                                if a != b {
                                    let pb = pool.get_shared(pid(b)).expect("s b");
                                    counter(&pb, b);
                                }
                                counter(&pa, a);
                            }
                            5..=7 => {
                                let mut p = pool.get_exclusive(pid(n)).expect("x");
                                let c = counter(&p, n);
                                set_counter(&mut p, c + 1);
                                // The LSN is reserved while the page is latched, as mtr
                                // commit does.
                                let l = lsn.fetch_add(2, Ordering::SeqCst);
                                p.mark_dirty(Lsn(l), Lsn(l + 1));
                                expected[n as usize].fetch_add(1, Ordering::SeqCst);
                            }
                            _ => {
                                let sx = pool.get_sx(pid(n)).expect("sx");
                                let c = counter(&sx, n);
                                let mut p = sx.upgrade();
                                assert_eq!(counter(&p, n), c, "SX let a writer in");
                                set_counter(&mut p, c + 1);
                                let l = lsn.fetch_add(2, Ordering::SeqCst);
                                p.mark_dirty(Lsn(l), Lsn(l + 1));
                                expected[n as usize].fetch_add(1, Ordering::SeqCst);
                            }
                        }
                        ops.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        });
        cleaner.shutdown();
        let s = pool.stats();
        assert!(
            s.evictions > 0 && s.pages_written > 0,
            "the pool was not under pressure: {s:?}"
        );
        eprintln!("{} ops, {s:?}", ops.load(Ordering::Relaxed));
        for n in 0..PAGES {
            let p = pool.get_shared(pid(n)).expect("s");
            assert_eq!(counter(&p, n), expected[n as usize].load(Ordering::SeqCst));
        }
        pool.flush_all().expect("flush");
        pool.check_invariants();
    }
    let pool = pool_over(dir.path(), false);
    for n in 0..PAGES {
        let p = pool.get_shared(pid(n)).expect("read back");
        assert_eq!(
            counter(&p, n),
            expected[n as usize].load(Ordering::SeqCst),
            "page {n} on disk"
        );
    }
}
