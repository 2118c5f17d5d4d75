//! The buffer pool against a model: a `HashMap<page, body bytes>`.
//!
//! Random sequences of create, read, modify (with increasing LSNs), pin/unpin, flushes and
//! eviction pressure, on a pool of 8 frames over 200 pages. After every step, every page the
//! model knows reads back through the pool as the model says, and pages it does not know are
//! refused (never written). At the end, after `flush_all`, a new pool over the same files sees
//! the same thing: the disk equals the model.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;
use quire_engine::buffer::{BufferConfig, BufferPool, NoWal, PageRef};
use quire_engine::page::{Lsn, PageId, PageNo, PageSize, PageType, SpaceId, HEADER_SIZE};
use quire_engine::space::{Space, Spaces};
use quire_io::os::OsVfs;

const PS: usize = 4096;
const BODY: usize = PS - HEADER_SIZE - 8;
const PAGES: u32 = 200;
const FRAMES: usize = 8;
const MAX_HELD: usize = 3;

#[derive(Debug, Clone)]
enum Op {
    Create(u32, u8),
    Read(u32),
    Modify(u32, u16, u8),
    Pin(u32),
    Unpin,
    FlushBatch(u8),
    FlushAll,
    /// Reads a run of model pages: more pages than frames, so dirty pages get evicted.
    Pressure(u32),
}

fn page() -> impl Strategy<Value = u32> {
    // Mostly a small hot range, so that pages are revisited; sometimes anywhere.
    prop_oneof![3 => 0..24u32, 1 => 0..PAGES]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (page(), any::<u8>()).prop_map(|(p, f)| Op::Create(p, f)),
        3 => page().prop_map(Op::Read),
        5 => (page(), 0..BODY as u16, any::<u8>()).prop_map(|(p, o, v)| Op::Modify(p, o, v)),
        1 => page().prop_map(Op::Pin),
        1 => Just(Op::Unpin),
        1 => (1u8..12).prop_map(Op::FlushBatch),
        1 => Just(Op::FlushAll),
        1 => (0..PAGES).prop_map(Op::Pressure),
    ]
}

fn pid(n: u32) -> PageId {
    PageId::new(SpaceId(1), PageNo(n))
}

fn ps() -> PageSize {
    PageSize::new(PS as u32).expect("page size")
}

fn open_pool(dir: &Path, create: bool) -> Arc<BufferPool> {
    let path = dir.join("model.qsp");
    let vfs = OsVfs::new();
    let space = if create {
        Space::create(&vfs, &path, SpaceId(1), ps(), PAGES)
    } else {
        Space::open(&vfs, &path, SpaceId(1), ps())
    }
    .expect("space");
    let spaces = Arc::new(Spaces::new());
    spaces.insert(Arc::new(space));
    let cfg = BufferConfig {
        size_bytes: (FRAMES * PS) as u64,
        page_size: ps(),
        pool_exhausted_wait_ms: 2000,
        ..BufferConfig::default()
    };
    BufferPool::new(cfg, spaces, Arc::new(NoWal)).expect("pool")
}

fn body(p: &[u8]) -> &[u8] {
    &p[HEADER_SIZE..HEADER_SIZE + BODY]
}

/// Every model page reads back as the model says; `extra` (not in the model) is refused.
fn check_view(pool: &BufferPool, model: &HashMap<u32, Vec<u8>>, extra: Option<u32>) {
    let mut keys: Vec<_> = model.keys().copied().collect();
    keys.sort();
    for n in keys {
        let p = pool.get_shared(pid(n)).expect("model page readable");
        assert_eq!(body(&p), &model[&n][..], "page {n} differs from the model");
        assert_eq!(p.page_id(), pid(n));
    }
    if let Some(n) = extra {
        if !model.contains_key(&n) {
            assert!(
                pool.get_shared(pid(n)).is_err(),
                "never-written page {n} served"
            );
        }
    }
}

fn run(ops: Vec<Op>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut model: HashMap<u32, Vec<u8>> = HashMap::new();
    let mut lsn = 1u64;
    {
        let pool = open_pool(dir.path(), true);
        let mut held: Vec<(u32, PageRef<'_>)> = Vec::new();
        for op in ops {
            let mut touched = None;
            let is_held = |n: u32, held: &Vec<(u32, PageRef<'_>)>| held.iter().any(|h| h.0 == n);
            match op {
                Op::Create(n, fill) => {
                    if is_held(n, &held) {
                        continue; // X on a page we hold S on would wait for ourselves
                    }
                    let mut p = pool.create(pid(n), PageType::Raw).expect("create");
                    p[HEADER_SIZE..HEADER_SIZE + BODY].fill(fill);
                    p.mark_dirty(Lsn(lsn), Lsn(lsn + 1));
                    lsn += 2;
                    model.insert(n, vec![fill; BODY]);
                }
                Op::Read(n) => {
                    touched = Some(n);
                    match pool.get_shared(pid(n)) {
                        Ok(p) => assert_eq!(Some(body(&p)), model.get(&n).map(|v| &v[..])),
                        Err(e) => assert!(!model.contains_key(&n), "page {n}: {e}"),
                    }
                }
                Op::Modify(n, off, v) => {
                    if is_held(n, &held) {
                        continue;
                    }
                    touched = Some(n);
                    match pool.get_exclusive(pid(n)) {
                        Ok(mut p) => {
                            p[HEADER_SIZE + off as usize] = v;
                            p.mark_dirty(Lsn(lsn), Lsn(lsn + 1));
                            lsn += 2;
                            let m = model.get_mut(&n).expect("modified page is in the model");
                            m[off as usize] = v;
                        }
                        Err(e) => assert!(!model.contains_key(&n), "page {n}: {e}"),
                    }
                }
                Op::Pin(n) => {
                    if held.len() < MAX_HELD {
                        if let Ok(p) = pool.get_shared(pid(n)) {
                            held.push((n, p));
                        }
                    }
                }
                Op::Unpin => {
                    if !held.is_empty() {
                        held.remove(0);
                    }
                }
                Op::FlushBatch(k) => {
                    pool.flush_batch(k as usize).expect("flush batch");
                }
                Op::FlushAll => {
                    // flush_all waits for latched pages: only when we hold none.
                    if held.is_empty() {
                        pool.flush_all().expect("flush all");
                        assert_eq!(pool.stats().dirty_pages, 0);
                    }
                }
                Op::Pressure(start) => {
                    let mut keys: Vec<u32> = model.keys().copied().collect();
                    keys.sort();
                    for &n in keys.iter().cycle().skip(start as usize).take(20) {
                        let p = pool.get_shared(pid(n)).expect("pressure read");
                        assert_eq!(body(&p), &model[&n][..]);
                    }
                }
            }
            check_view(&pool, &model, touched);
            if held.is_empty() {
                pool.check_invariants();
            }
        }
        drop(held);
        pool.flush_all().expect("final flush");
        pool.check_invariants();
        assert_eq!(pool.stats().dirty_pages, 0);
        assert_eq!(pool.flush_list_oldest(), None);
    }
    // A new pool over the same files: the disk equals the model.
    let pool = open_pool(dir.path(), false);
    for n in 0..PAGES {
        match model.get(&n) {
            Some(m) => {
                let p = pool.get_shared(pid(n)).expect("page on disk");
                assert_eq!(body(&p), &m[..], "page {n} on disk differs from the model");
            }
            None => assert!(pool.get_shared(pid(n)).is_err(), "page {n} appeared"),
        }
    }
    assert_eq!(pool.stats().pages_written, 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn pool_view_and_disk_equal_the_model(ops in prop::collection::vec(op(), 1..60)) {
        run(ops);
    }
}
