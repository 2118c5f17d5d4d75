//! Page hits: `get_shared` on a resident set of pages, from 1 and 2 threads.
//!
//! The hot path is: page-table shard read lock, pin, LRU hint check, S latch, and on drop
//! unlatch and unpin. Two threads hit disjoint pages, so they should scale unless something
//! on the path is shared (a global counter or mutex would show here).
//!
//! Run: `cargo bench -p quire-engine --bench buffer_pool_hits`

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use quire_engine::buffer::{BufferConfig, BufferPool, NoWal};
use quire_engine::page::{Lsn, PageId, PageNo, PageSize, PageType, SpaceId};
use quire_engine::space::{Space, Spaces};
use quire_io::os::OsVfs;

const RESIDENT: u32 = 1024;

fn setup() -> (tempfile::TempDir, Arc<BufferPool>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let ps = PageSize::DEFAULT;
    let space = Space::create(
        &OsVfs::new(),
        &dir.path().join("bench.qsp"),
        SpaceId(1),
        ps,
        RESIDENT,
    )
    .expect("space");
    let spaces = Arc::new(Spaces::new());
    spaces.insert(Arc::new(space));
    let cfg = BufferConfig {
        size_bytes: 2 * u64::from(RESIDENT) * ps.get() as u64,
        page_size: ps,
        ..BufferConfig::default()
    };
    let pool = BufferPool::new(cfg, spaces, Arc::new(NoWal)).expect("pool");
    for n in 0..RESIDENT {
        let mut p = pool
            .create(PageId::new(SpaceId(1), PageNo(n)), PageType::Raw)
            .expect("create");
        p.mark_dirty(Lsn(1), Lsn(2));
    }
    pool.flush_all().expect("flush");
    (dir, pool)
}

/// `iters` hits per thread on `threads` threads; returns the wall time.
fn hits(pool: &BufferPool, threads: u32, iters: u64) -> Duration {
    let barrier = Barrier::new(threads as usize + 1);
    thread::scope(|s| {
        for t in 0..threads {
            let (pool, barrier) = (pool, &barrier);
            s.spawn(move || {
                // Each thread walks its own half of the set, with a stride so that
                // consecutive hits land in different shards.
                let base = t * (RESIDENT / threads);
                let span = RESIDENT / threads;
                barrier.wait();
                let mut i = 0u32;
                for _ in 0..iters {
                    let n = base + (i.wrapping_mul(97) % span);
                    let p = pool
                        .get_shared(PageId::new(SpaceId(1), PageNo(n)))
                        .expect("hit");
                    black_box(p[100]);
                    i = i.wrapping_add(1);
                }
            });
        }
        barrier.wait();
        let start = Instant::now();
        // The scope joins the workers before returning.
        start
    })
    .elapsed()
}

fn bench(c: &mut Criterion) {
    let (_dir, pool) = setup();
    let mut g = c.benchmark_group("buffer_pool_hits");
    g.warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    for threads in [1u32, 2] {
        // Throughput counts all threads' hits: per-hit time = 1 / throughput.
        g.throughput(Throughput::Elements(u64::from(threads)));
        g.bench_function(format!("get_shared/{threads}_threads"), |b| {
            b.iter_custom(|iters| hits(&pool, threads, iters))
        });
    }
    g.finish();
    let s = pool.stats();
    assert_eq!(s.pages_read, 0, "the set was not resident");
}

criterion_group!(benches, bench);
criterion_main!(benches);
