//! How a B-tree structure change (split, merge) holds the tree, and what it leaves when it
//! fails (docs/btree.md, "Latching" and "Atomic structure changes"):
//! - a split that leaves the root alone holds the root SX, so readers of other subtrees pass
//!   the root while it runs, and only readers of the pages it changes wait;
//! - a split that reaches the root holds the root X, so every reader waits at the root;
//! - a structure change too large for one log frame is refused and changes nothing.
//!
//! The tests hold a split open at its midpoint with a [`LeafWork`] whose `value()` blocks:
//! it runs once every page the split needs is latched and before any page changes.

use std::borrow::Cow;
use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::Duration;

use quire_engine::btree::{BTree, BTreeError, LeafWork};
use quire_engine::config::Config;
use quire_engine::mtr::{Mtr, MtrError};
use quire_engine::Engine;
use quire_io::sim::SimVfs;
use quire_io::Vfs;

const PAGE: u32 = 4096;
/// Records of 8 + 900 bytes: four to a 4 KiB leaf, so every leaf but the last is full after
/// ascending inserts (the rightmost split keeps the old page full).
const VALUE_LEN: usize = 900;
/// 2000 keys: 500 leaves under three level-1 nodes (212 separators fill one), one root.
const KEYS: u64 = 2000;

fn key(k: u64) -> Vec<u8> {
    k.to_be_bytes().to_vec()
}

fn config(page_size: u32, log_buffer: u64) -> Config {
    Config {
        page_size,
        buffer_pool_size: 1024 * u64::from(page_size),
        log_file_size: 16 << 20,
        log_buffer_size: log_buffer,
        ..Config::default()
    }
}

fn open(vfs: &SimVfs, cfg: Config) -> Arc<Engine> {
    Arc::new(
        Engine::open(
            Arc::new(vfs.clone()) as Arc<dyn Vfs>,
            Path::new("/data"),
            cfg,
        )
        .expect("open"),
    )
}

/// A tree of three levels over the keys 0, 10, 20, ... (so there is room between them).
fn three_level_tree(e: &Engine) -> BTree {
    let space = e.create_space("t").expect("space");
    let (t, _) = BTree::create(e, space, 9).expect("create");
    for k in 0..KEYS {
        t.insert(e, &key(k * 10), &[k as u8; VALUE_LEN])
            .expect("insert");
    }
    let (problems, stats) = t.verify_stats(e);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(stats.height, 3, "the tests below need a three-level tree");
    t
}

/// Blocks inside the insert's mtr until released: signals `entered`, waits on `release`.
struct Hold {
    entered: Sender<()>,
    release: Receiver<()>,
    value: Vec<u8>,
}

impl LeafWork for Hold {
    fn value(&mut self, _mtr: &mut Mtr<'_>) -> quire_engine::btree::Result<Cow<'_, [u8]>> {
        let _ = self.entered.send(());
        let _ = self.release.recv_timeout(Duration::from_secs(60));
        Ok(Cow::Borrowed(&self.value))
    }
}

/// Starts inserting `k` in another thread, held inside its mtr; returns once it is held,
/// with the sender that releases it and the receiver of its result.
fn held_insert(
    e: &Arc<Engine>,
    t: BTree,
    k: u64,
) -> (Sender<()>, Receiver<quire_engine::btree::Result<()>>) {
    let (entered_tx, entered) = mpsc::channel();
    let (release, release_rx) = mpsc::channel();
    let (done_tx, done) = mpsc::channel();
    let e = e.clone();
    std::thread::spawn(move || {
        let mut w = Hold {
            entered: entered_tx,
            release: release_rx,
            value: vec![7; VALUE_LEN],
        };
        let r = t.insert_with(&*e, &key(k), VALUE_LEN, &mut w).map(|_| ());
        let _ = done_tx.send(r);
    });
    entered
        .recv_timeout(Duration::from_secs(30))
        .expect("the insert reached its leaf work");
    (release, done)
}

/// Looks up `k` in another thread; the receiver gets whether it was found.
fn get_in_thread(e: &Arc<Engine>, t: BTree, k: u64) -> Receiver<bool> {
    let (tx, rx) = mpsc::channel();
    let e = e.clone();
    std::thread::spawn(move || {
        let found = t.get(&*e, &key(k)).expect("get").is_some();
        let _ = tx.send(found);
    });
    rx
}

fn stat(e: &Engine, name: &str) -> u64 {
    e.stat(name).expect("counter exists")
}

#[test]
fn readers_pass_the_root_while_a_split_below_it_runs() {
    let vfs = SimVfs::new(1);
    let e = open(&vfs, config(PAGE, 16 << 20));
    let t = three_level_tree(&e);
    let (sx0, x0) = (
        stat(&e, "quire_btree_smo_root_sx"),
        stat(&e, "quire_btree_smo_root_x"),
    );

    // 19955 goes to the full leaf 19920..19950, under the last level-1 node, which has room
    // for the separator: the split leaves the root alone.
    let (release, done) = held_insert(&e, t, 19955);

    // A reader of the far left subtree passes the root (held SX) and finishes at once.
    let far = get_in_thread(&e, t, 0);
    let far_result = far.recv_timeout(Duration::from_secs(20));
    // A reader of the leaf being split waits for the split's X latch.
    let near = get_in_thread(&e, t, 19950);
    let near_early = near.recv_timeout(Duration::from_millis(300));

    release.send(()).expect("release");
    done.recv_timeout(Duration::from_secs(30))
        .expect("the insert finished")
        .expect("the insert succeeded");
    assert_eq!(
        far_result,
        Ok(true),
        "a reader of another subtree waited for a split that left the root alone"
    );
    assert_eq!(
        near_early,
        Err(RecvTimeoutError::Timeout),
        "a reader got into the leaf while it was being split"
    );
    assert_eq!(near.recv_timeout(Duration::from_secs(20)), Ok(true));

    assert_eq!(
        stat(&e, "quire_btree_smo_root_sx"),
        sx0 + 1,
        "held the root SX"
    );
    assert_eq!(stat(&e, "quire_btree_smo_root_x"), x0);
    assert!(t.get(&*e, &key(19955)).expect("get").is_some());
    let problems = t.verify(&*e);
    assert!(problems.is_empty(), "{problems:?}");
}

#[test]
fn a_split_that_reaches_the_root_holds_it_exclusively() {
    let vfs = SimVfs::new(2);
    let e = open(&vfs, config(PAGE, 16 << 20));
    let t = three_level_tree(&e);
    let (x0, retries0) = (
        stat(&e, "quire_btree_smo_root_x"),
        stat(&e, "quire_btree_smo_retries"),
    );

    // 5 goes to the full first leaf, under the full first level-1 node: the level-1 node
    // splits too and the root takes a separator. The first pessimistic attempt sees that
    // with the root SX and starts over with it X.
    let (release, done) = held_insert(&e, t, 5);

    // A reader of the far right subtree shares no page below the root with the split, so
    // it can only be waiting at the root.
    let far = get_in_thread(&e, t, (KEYS - 1) * 10);
    let far_early = far.recv_timeout(Duration::from_millis(300));

    release.send(()).expect("release");
    done.recv_timeout(Duration::from_secs(30))
        .expect("the insert finished")
        .expect("the insert succeeded");
    assert_eq!(
        far_early,
        Err(RecvTimeoutError::Timeout),
        "a reader passed a root that the split was changing"
    );
    assert_eq!(far.recv_timeout(Duration::from_secs(20)), Ok(true));

    assert_eq!(
        stat(&e, "quire_btree_smo_root_x"),
        x0 + 1,
        "held the root X"
    );
    assert_eq!(stat(&e, "quire_btree_smo_retries"), retries0 + 1);
    assert_eq!(stat(&e, "quire_btree_smo_rolled_back"), 0);
    let problems = t.verify(&*e);
    assert!(problems.is_empty(), "{problems:?}");
}

/// Leaf work that writes `pages` whole pages of its own in the change's mtr (as the table
/// layer writes the heads of BLOB chains), and notes whether it was told of a rollback.
struct Bulky<'e> {
    e: &'e Engine,
    space: quire_engine::page::SpaceId,
    pages: usize,
    value: Vec<u8>,
    rolled_back: bool,
}

impl LeafWork for Bulky<'_> {
    fn redo_bytes(&self) -> u64 {
        (self.pages * 16400) as u64
    }
    fn value(&mut self, mtr: &mut Mtr<'_>) -> quire_engine::btree::Result<Cow<'_, [u8]>> {
        for _ in 0..self.pages {
            let p = self
                .e
                .alloc_page(mtr, self.space)
                .map_err(|err| BTreeError::Alloc(Box::new(err)))?;
            let id = quire_engine::page::PageId::new(self.space, p);
            let s = mtr.create_page(id, quire_engine::page::PageType::Blob)?;
            mtr.write(s, 64, &[0x5a; 16000])?;
        }
        Ok(Cow::Borrowed(&self.value))
    }
    fn rolled_back(&mut self) {
        self.rolled_back = true;
    }
}

#[test]
fn a_structure_change_too_large_for_the_log_is_refused_and_changes_nothing() {
    // 16 KiB pages with a 256 KiB log buffer: one log frame holds about 64 KiB of redo,
    // enough for a root split (about 20 KiB here) but not for one that also writes three
    // pages of its own.
    const BIG: u32 = 16384;
    let cfg = config(BIG, 256 << 10);
    let vfs = SimVfs::new(3);
    let e = open(&vfs, cfg.clone());
    let space = e.create_space("t").expect("space");
    let (t, _) = BTree::create(&*e, space, 9).expect("create");
    let value = |k: u64| vec![k as u8; 3000];
    // Five records fill the root leaf; the sixth splits it.
    let mut last = quire_engine::page::Lsn::ZERO;
    for k in 0..5 {
        last = t.insert(&*e, &key(k), &value(k)).expect("insert");
    }
    let used = e.used_pages(space).expect("used pages");
    let mut bulky = Bulky {
        e: &e,
        space,
        pages: 3,
        value: value(5),
        rolled_back: false,
    };
    let err = t
        .insert_with(&*e, &key(5), 3000, &mut bulky)
        .expect_err("a structure change past the largest frame");
    assert!(
        matches!(err, BTreeError::Mtr(MtrError::TooLarge { .. })),
        "wrong error: {err}"
    );
    assert!(
        err.to_string().contains("innodb_log_buffer_size"),
        "the error should say what to change: {err}"
    );
    assert!(bulky.rolled_back, "the work was not told of the rollback");
    assert_eq!(stat(&e, "quire_btree_smo_rolled_back"), 1);

    // Nothing changed: the same records in a valid one-page tree, the same pages in use
    // (the split's and the work's allocations were undone too).
    let (problems, stats) = t.verify_stats(&*e);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!((stats.height, stats.leaf_records), (1, 5));
    assert!(t.get(&*e, &key(5)).expect("get").is_none());
    assert_eq!(e.used_pages(space).expect("used pages"), used);

    // What was refused is logged nowhere: after a crash and recovery the tree is the same.
    e.commit_wait(last);
    let e = Arc::try_unwrap(e).unwrap_or_else(|_| panic!("engine still shared"));
    e.kill();
    let (vfs, _) = vfs.crash();
    let e = open(&vfs, cfg);
    let t = BTree::open(&*e, space, t.root()).expect("reopen tree");
    let (problems, stats) = t.verify_stats(&*e);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!((stats.height, stats.leaf_records), (1, 5));
    assert_eq!(e.used_pages(space).expect("used pages"), used);

    // The split alone fits a frame.
    t.insert(&*e, &key(5), &value(5)).expect("insert");
    let (problems, stats) = t.verify_stats(&*e);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!((stats.height, stats.leaf_records), (2, 6));
}

#[test]
fn a_log_too_small_for_any_split_is_refused_at_open() {
    // 64 KiB pages with a 256 KiB log buffer: frames of 64 KiB cannot hold the split of a
    // root leaf, so no table could grow past one page.
    let cfg = Config {
        page_size: 65536,
        buffer_pool_size: 64 * 65536,
        log_file_size: 16 << 20,
        log_buffer_size: 256 << 10,
        ..Config::default()
    };
    let vfs = SimVfs::new(4);
    let err = match Engine::open(
        Arc::new(vfs.clone()) as Arc<dyn Vfs>,
        Path::new("/data"),
        cfg.clone(),
    ) {
        Ok(_) => panic!("opened with a log too small for a split"),
        Err(err) => err.to_string(),
    };
    assert!(err.contains("innodb_log_buffer_size=262144"), "{err}");
    assert!(err.contains("set both to at least"), "{err}");
    // Nothing was created, and the size the message names is enough.
    assert!(!vfs.exists(Path::new("/data/redo.log")).expect("exists"));
    let enough: u64 = err
        .rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("the message ends with the size to use");
    let cfg = Config {
        log_buffer_size: enough,
        ..cfg
    };
    open(&vfs, cfg);
}
