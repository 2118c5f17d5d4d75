//! The B-tree against a `BTreeMap` model: random inserts, updates, deletes, delete-marks,
//! point gets and range scans in both directions, on 4 KiB pages with long shared key
//! prefixes so that trees get several levels deep and splits, merges, redistributions and
//! root raises and collapses all happen. `verify()` must be clean after every case.
//!
//! `QUIRE_BTREE_CASES` raises the number of proptest cases.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;
use quire_engine::btree::{BTree, BTreeError, Direction};
use quire_engine::config::Config;
use quire_engine::Engine;
use quire_io::sim::SimVfs;
use quire_io::Vfs;

fn config() -> Config {
    Config {
        page_size: 4096,
        buffer_pool_size: 96 * 4096, // small: trees outgrow it, pages are evicted and reread
        log_file_size: 4 << 20,
        log_buffer_size: 256 << 10,
        ..Config::default()
    }
}

fn engine(seed: u64) -> Engine {
    let vfs = SimVfs::new(seed);
    Engine::open(Arc::new(vfs) as Arc<dyn Vfs>, Path::new("/data"), config()).expect("open")
}

thread_local! {
    /// Which key shape the current case uses (see [`key`]).
    static SHAPE: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// Keys share a long prefix (so separators stay long and internal nodes fill up). Shape
/// one varies their length; shape two keeps them fixed-length, like encoded integers.
fn key(n: u16) -> Vec<u8> {
    let varied = SHAPE.with(|s| s.get());
    let mut k = vec![b'k'; if varied { 150 } else { 60 }];
    k.extend_from_slice(&n.to_be_bytes());
    if varied {
        k.extend(std::iter::repeat_n(b'x', usize::from(n % 23)));
    }
    k
}

fn value(n: u16, len: u16) -> Vec<u8> {
    (0..len).map(|i| (n as u8) ^ (i as u8)).collect()
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u16, u16),
    Update(u16, u16),
    Delete(u16),
    Mark(u16, bool),
    Get(u16),
    Scan(u16, u16, bool),
}

const KEYS: u16 = 900;

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0..KEYS, 0u16..700).prop_map(|(k, l)| Op::Insert(k, l)),
        2 => (0..KEYS, 0u16..800).prop_map(|(k, l)| Op::Update(k, l)),
        3 => (0..KEYS).prop_map(Op::Delete),
        1 => (0..KEYS, any::<bool>()).prop_map(|(k, d)| Op::Mark(k, d)),
        2 => (0..KEYS).prop_map(Op::Get),
        1 => (0..KEYS, 0..KEYS, any::<bool>()).prop_map(|(a, b, f)| Op::Scan(a, b, f)),
    ]
}

type Model = BTreeMap<Vec<u8>, (Vec<u8>, bool)>;

fn check_scan(e: &Engine, t: &BTree, m: &Model, lo: Bound<&[u8]>, hi: Bound<&[u8]>, fwd: bool) {
    let dir = if fwd {
        Direction::Forward
    } else {
        Direction::Backward
    };
    let got: Vec<(Vec<u8>, Vec<u8>, bool)> = t
        .scan(e, lo, hi, dir)
        .map(|r| r.map(|en| (en.key, en.value, en.delete_marked)))
        .collect::<Result<_, _>>()
        .expect("scan");
    let mut want: Vec<_> = m
        .range::<[u8], _>((lo, hi))
        .map(|(k, (v, d))| (k.clone(), v.clone(), *d))
        .collect();
    if !fwd {
        want.reverse();
    }
    assert_eq!(
        got.len(),
        want.len(),
        "scan {lo:?}..{hi:?} fwd={fwd}: count"
    );
    assert_eq!(got, want, "scan fwd={fwd}");
}

fn run(ops: &[Op], seed: u64, varied_keys: bool) {
    SHAPE.with(|s| s.set(varied_keys));
    let e = engine(seed);
    let space = e.create_space("t").expect("space");
    let (t, _) = BTree::create(&e, space, 42).expect("create");
    let mut m = Model::new();
    for (i, op) in ops.iter().enumerate() {
        match *op {
            Op::Insert(k, l) => {
                let r = t.insert(&e, &key(k), &value(k, l));
                match m.entry(key(k)) {
                    Entry::Occupied(_) => {
                        assert!(matches!(r, Err(BTreeError::DuplicateKey)), "{r:?}")
                    }
                    Entry::Vacant(slot) => {
                        r.expect("insert");
                        slot.insert((value(k, l), false));
                    }
                }
            }
            Op::Update(k, l) => {
                let r = t.update(&e, &key(k), &value(k ^ 1, l));
                match m.get_mut(&key(k)) {
                    Some(slot) => {
                        r.expect("update");
                        slot.0 = value(k ^ 1, l);
                    }
                    None => assert!(matches!(r, Err(BTreeError::NotFound)), "{r:?}"),
                }
            }
            Op::Delete(k) => {
                let r = t.delete(&e, &key(k));
                if m.remove(&key(k)).is_some() {
                    r.expect("delete");
                } else {
                    assert!(matches!(r, Err(BTreeError::NotFound)), "{r:?}");
                }
            }
            Op::Mark(k, d) => {
                let r = t.set_delete_mark(&e, &key(k), d);
                match m.get_mut(&key(k)) {
                    Some(slot) => {
                        r.expect("mark");
                        slot.1 = d;
                    }
                    None => assert!(matches!(r, Err(BTreeError::NotFound)), "{r:?}"),
                }
            }
            Op::Get(k) => {
                let got = t.get(&e, &key(k)).expect("get");
                let want = m.get(&key(k));
                assert_eq!(
                    got.map(|en| (en.value, en.delete_marked)),
                    want.cloned(),
                    "get {k}"
                );
            }
            Op::Scan(a, b, fwd) => {
                let (lo, hi) = (key(a.min(b)), key(a.max(b)));
                check_scan(&e, &t, &m, Bound::Included(&lo), Bound::Excluded(&hi), fwd);
                check_scan(&e, &t, &m, Bound::Excluded(&lo), Bound::Unbounded, fwd);
                check_scan(&e, &t, &m, Bound::Unbounded, Bound::Included(&hi), fwd);
            }
        }
        if i % 200 == 199 {
            let problems = t.verify(&e);
            assert!(problems.is_empty(), "after op {i}: {problems:#?}");
        }
    }
    let (problems, stats) = t.verify_stats(&e);
    assert!(problems.is_empty(), "{problems:#?}");
    assert_eq!(stats.leaf_records, m.len() as u64);
    if std::env::var_os("QUIRE_BTREE_STATS").is_some() {
        eprintln!("{} ops: {stats:?}", ops.len());
    }
    check_scan(&e, &t, &m, Bound::Unbounded, Bound::Unbounded, true);
    check_scan(&e, &t, &m, Bound::Unbounded, Bound::Unbounded, false);
    e.kill();
}

fn cases() -> u32 {
    std::env::var("QUIRE_BTREE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn random_operations_match_a_btreemap_model(
        ops in proptest::collection::vec(op(), 300..1500),
        seed in 0u64..1000,
        varied_keys in any::<bool>(),
    ) {
        run(&ops, seed, varied_keys);
    }
}

#[test]
fn a_tree_grows_several_levels_and_shrinks_back_to_a_root_leaf() {
    let e = engine(7);
    let space = e.create_space("t").expect("space");
    let (t, _) = BTree::create(&e, space, 1).expect("create");
    let n = 3000u16;
    // Ascending (append splits), then descending deletes of three keys in four (leaves fall
    // below the merge threshold), then the rest.
    for k in 0..n {
        t.insert(&e, &key(k), &value(k, 200)).expect("insert");
    }
    let (p, stats) = t.verify_stats(&e);
    assert!(p.is_empty(), "{p:#?}");
    assert!(
        stats.height >= 3,
        "height {} after {n} inserts",
        stats.height
    );
    assert_eq!(stats.leaf_records, u64::from(n));
    let pages_full = stats.pages;
    for k in (0..n).rev().filter(|k| k % 4 != 0) {
        t.delete(&e, &key(k)).expect("delete");
    }
    let (p, stats) = t.verify_stats(&e);
    assert!(p.is_empty(), "{p:#?}");
    assert!(
        stats.pages < pages_full,
        "merges freed pages: {} -> {}",
        pages_full,
        stats.pages
    );
    for k in (0..n).step_by(4) {
        t.delete(&e, &key(k)).expect("delete rest");
    }
    let (p, stats) = t.verify_stats(&e);
    assert!(p.is_empty(), "{p:#?}");
    assert_eq!((stats.height, stats.pages, stats.leaf_records), (1, 1, 0));
    assert!(t.get(&e, &key(5)).expect("get").is_none());
}

#[test]
fn ascending_inserts_fill_leaves_almost_completely() {
    let e = engine(8);
    let space = e.create_space("t").expect("space");
    let (t, _) = BTree::create(&e, space, 1).expect("create");
    for k in 0..2000u16 {
        let mut kk = k.to_be_bytes().to_vec();
        kk.push(0);
        t.insert(&e, &kk, &[1u8; 100]).expect("insert");
    }
    let (p, stats) = t.verify_stats(&e);
    assert!(p.is_empty(), "{p:#?}");
    // 108 bytes + a slot per record: 36 fit in 4032 bytes. Append splits leave pages full.
    let per_leaf = 2000.0 / (stats.pages as f64 - 1.0);
    assert!(per_leaf > 33.0, "{per_leaf:.1} records per leaf");
}

#[test]
fn oversized_records_and_duplicates_get_typed_errors() {
    let e = engine(9);
    let space = e.create_space("t").expect("space");
    let (t, _) = BTree::create(&e, space, 1).expect("create");
    let r = t.insert(&e, b"k", &vec![0u8; 2000]);
    assert!(matches!(r, Err(BTreeError::TooLarge { .. })), "{r:?}");
    let r = t.insert(&e, &vec![1u8; 1000], b"");
    assert!(matches!(r, Err(BTreeError::TooLarge { .. })), "{r:?}");
    t.insert(&e, b"k", b"v").expect("insert");
    t.set_delete_mark(&e, b"k", true).expect("mark");
    let r = t.insert(&e, b"k", b"w");
    assert!(matches!(r, Err(BTreeError::DuplicateKey)), "{r:?}");
    assert!(matches!(
        t.update(&e, b"nope", b"x"),
        Err(BTreeError::NotFound)
    ));
    assert!(matches!(t.delete(&e, b"nope"), Err(BTreeError::NotFound)));
    let reopened = BTree::open(&e, space, t.root()).expect("open");
    assert_eq!(reopened, t);
}

#[test]
fn drop_frees_every_page_of_the_tree() {
    let e = engine(10);
    let space = e.create_space("t").expect("space");
    let (t, _) = BTree::create(&e, space, 1).expect("create");
    for k in 0..1500u16 {
        t.insert(&e, &key(k), &value(k, 300)).expect("insert");
    }
    let pages = t.verify_stats(&e).1.pages;
    assert!(pages > 100);
    t.drop_tree(&e).expect("drop");
    // The freed pages are reused: a new tree of the same size does not grow the space much.
    let (t2, _) = BTree::create(&e, space, 2).expect("create");
    let mut m = e.mtr();
    let probe = e.alloc_page(&mut m, space).expect("alloc");
    drop(m);
    assert!(
        u64::from(probe.0) < pages + 8,
        "page {} was free after the drop",
        probe.0
    );
    assert!(t2.verify(&e).is_empty());
}

#[test]
fn random_order_growth_and_shrinkage_keep_internal_fences_sorted() {
    // Shuffled inserts split in the middle; shuffled deletes merge into left and right
    // siblings and redistribute, at every level, until the root is a leaf again.
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    SHAPE.with(|s| s.set(false));
    let e = engine(11);
    let space = e.create_space("t").expect("space");
    let (t, _) = BTree::create(&e, space, 1).expect("create");
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let mut ks: Vec<u16> = (0..2500).collect();
    ks.shuffle(&mut rng);
    for (i, &k) in ks.iter().enumerate() {
        t.insert(&e, &key(k), &value(k, (k % 5) * 100))
            .expect("insert");
        if i % 500 == 0 {
            assert!(t.verify(&e).is_empty());
        }
    }
    ks.shuffle(&mut rng);
    for (i, &k) in ks.iter().enumerate() {
        t.delete(&e, &key(k)).expect("delete");
        if i % 250 == 0 {
            let p = t.verify(&e);
            assert!(p.is_empty(), "after {i} deletes: {p:#?}");
        }
    }
    assert_eq!(t.verify_stats(&e).1.pages, 1);
}
