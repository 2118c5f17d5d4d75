//! N threads of mixed inserts, updates, deletes, point gets and scans in both directions on
//! one tree, on interleaved keys so that every thread works in the same leaves and splits
//! and merges race with readers. Each thread writes only the keys `k % N == id` (so it keeps
//! an exact model of them and checks read-your-writes), but reads and scans all keys. At the
//! end `verify()` is clean and the tree holds exactly the union of the models.
//!
//! `QUIRE_BTREE_STRESS_SECS` sets how long the threads run (default 2 s).

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use quire_engine::btree::{BTree, BTreeError, Direction};
use quire_engine::config::Config;
use quire_engine::Engine;
use quire_io::sim::SimVfs;
use quire_io::Vfs;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const THREADS: u64 = 4;
const KEYS: u64 = 3000;

fn key(k: u64) -> Vec<u8> {
    let mut v = vec![b'p'; 60];
    v.extend_from_slice(&k.to_be_bytes());
    v
}

fn value(k: u64, gen: u32, len: usize) -> Vec<u8> {
    let mut v = gen.to_le_bytes().to_vec();
    v.extend((0..len).map(|i| (k as u8) ^ (i as u8)));
    v
}

fn worker(e: &Engine, t: BTree, id: u64, stop: &AtomicBool) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut rng = StdRng::seed_from_u64(id);
    let mut mine = BTreeMap::new();
    let mut gen = 0u32;
    while !stop.load(Ordering::Relaxed) {
        gen += 1;
        let own = rng.gen_range(0..KEYS / THREADS) * THREADS + id;
        let any = rng.gen_range(0..KEYS);
        match rng.gen_range(0..100) {
            0..=34 => {
                let v = value(own, gen, rng.gen_range(0..400));
                match t.insert(e, &key(own), &v) {
                    Ok(_) => assert!(
                        mine.insert(key(own), v).is_none(),
                        "insert of a present key"
                    ),
                    Err(BTreeError::DuplicateKey) => assert!(mine.contains_key(&key(own))),
                    Err(err) => panic!("insert: {err}"),
                }
            }
            35..=49 => {
                let v = value(own, gen, rng.gen_range(0..600));
                match t.update(e, &key(own), &v) {
                    Ok(_) => assert!(mine.insert(key(own), v).is_some()),
                    Err(BTreeError::NotFound) => assert!(!mine.contains_key(&key(own))),
                    Err(err) => panic!("update: {err}"),
                }
            }
            50..=69 => match t.delete(e, &key(own)) {
                Ok(_) => assert!(mine.remove(&key(own)).is_some()),
                Err(BTreeError::NotFound) => assert!(!mine.contains_key(&key(own))),
                Err(err) => panic!("delete: {err}"),
            },
            70..=84 => {
                // Read-your-writes on an own key; any key must at least be readable.
                let got = t.get(e, &key(own)).expect("get").map(|en| en.value);
                assert_eq!(got.as_ref(), mine.get(&key(own)), "thread {id} key {own}");
                t.get(e, &key(any)).expect("get any");
            }
            _ => {
                let dir = if rng.gen() {
                    Direction::Forward
                } else {
                    Direction::Backward
                };
                let lo = key(any);
                let mut prev: Option<Vec<u8>> = None;
                let mut own_seen = BTreeMap::new();
                for en in t
                    .scan(e, Bound::Included(&lo), Bound::Unbounded, dir)
                    .take(60)
                {
                    let en = en.expect("scan");
                    if let Some(p) = &prev {
                        let ordered = match dir {
                            Direction::Forward => *p < en.key,
                            Direction::Backward => *p > en.key,
                        };
                        assert!(ordered, "scan out of order");
                    }
                    assert!(en.key >= lo);
                    let k = u64::from_be_bytes(en.key[60..].try_into().expect("8 bytes"));
                    if k % THREADS == id {
                        own_seen.insert(en.key.clone(), en.value.clone());
                    }
                    prev = Some(en.key);
                }
                // Own keys seen by the scan are exactly what this thread last wrote.
                for (k, v) in own_seen {
                    assert_eq!(
                        mine.get(&k),
                        Some(&v),
                        "thread {id}: scan saw a stale own key"
                    );
                }
            }
        }
    }
    mine
}

#[test]
fn concurrent_mixed_operations_keep_the_tree_consistent() {
    let secs: f64 = std::env::var("QUIRE_BTREE_STRESS_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2.0);
    let cfg = Config {
        page_size: 4096,
        buffer_pool_size: 512 * 4096,
        log_file_size: 8 << 20,
        log_buffer_size: 1 << 20,
        ..Config::default()
    };
    let vfs = SimVfs::new(3);
    let e = Arc::new(
        Engine::open(Arc::new(vfs) as Arc<dyn Vfs>, Path::new("/data"), cfg).expect("open"),
    );
    let space = e.create_space("t").expect("space");
    let (t, _) = BTree::create(&*e, space, 5).expect("create");
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    for id in 0..THREADS {
        let (e, stop, tx) = (e.clone(), stop.clone(), tx.clone());
        std::thread::spawn(move || {
            let r =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| worker(&e, t, id, &stop)));
            let _ = tx.send(r);
        });
    }
    drop(tx);
    std::thread::sleep(Duration::from_secs_f64(secs));
    stop.store(true, Ordering::Relaxed);
    // A deadlock shows up as threads that never report back.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut all = BTreeMap::new();
    for _ in 0..THREADS {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Ok(mine)) => all.extend(mine),
            Ok(Err(p)) => std::panic::resume_unwind(p),
            Err(_) => panic!("a worker did not finish within 60 s: deadlock?"),
        }
    }
    let (problems, stats) = t.verify_stats(&*e);
    assert!(problems.is_empty(), "{problems:#?}");
    eprintln!("after {secs} s: {stats:?}");
    let content: BTreeMap<Vec<u8>, Vec<u8>> = t
        .scan(&*e, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .map(|r| r.map(|en| (en.key, en.value)))
        .collect::<Result<_, _>>()
        .expect("scan");
    assert_eq!(content.len(), all.len());
    assert!(
        content == all,
        "tree content differs from the union of the models"
    );
    assert!(stats.height >= 2, "the tree should have split: {stats:?}");
    // Structure changes below the root held it SX; none failed and was rolled back.
    let smo = |n| e.stat(n).expect("counter");
    eprintln!(
        "structure changes: root SX {}, root X {}, retries {}",
        smo("quire_btree_smo_root_sx"),
        smo("quire_btree_smo_root_x"),
        smo("quire_btree_smo_retries")
    );
    assert!(smo("quire_btree_smo_root_sx") > 0);
    assert_eq!(smo("quire_btree_smo_rolled_back"), 0);
}
