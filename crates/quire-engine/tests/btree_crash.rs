//! Simulated crashes during B-tree splits and merges. A seeded workload of inserts (large
//! enough values that leaves split every few records, up through root raises) and deletes
//! (merges, redistributions, root collapses), each one mtr waited on for durability, is
//! crashed at every write and sync of a small run and at random points of larger runs.
//! After recovery `verify()` is clean and the content equals the model after some prefix of
//! the operations that includes every acknowledged one; a second recovery changes nothing.
//!
//! Data files are written atomically here (as in tests/crash_recovery.rs): a torn data page
//! needs the doublewrite buffer, which is built separately. `QUIRE_BTREE_CRASH_ITERS` raises
//! the number of random crash points.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use quire_engine::btree::{BTree, Direction};
use quire_engine::config::Config;
use quire_engine::page::PageNo;
use quire_engine::Engine;
use quire_io::sim::{CrashMode, SimVfs};
use quire_io::Vfs;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Every file gets the same crash mode: data-file writes tear and get garbage like any other;
/// the doublewrite buffer repairs them (docs/doublewrite.md).
fn crash(vfs: &SimVfs, mode: CrashMode) -> SimVfs {
    vfs.crash_with(mode).0
}

fn config() -> Config {
    Config {
        page_size: 4096,
        buffer_pool_size: 48 * 4096, // evictions write pages mid-run
        log_file_size: 1 << 20,
        log_buffer_size: 256 << 10, // a root split of 4 KiB pages is one mtr of ~10 KiB
        recovery_threads: 2,
        ..Config::default()
    }
}

fn open(vfs: &SimVfs) -> Result<Engine, quire_engine::EngineError> {
    Engine::open(
        Arc::new(vfs.clone()) as Arc<dyn Vfs>,
        Path::new("/data"),
        config(),
    )
}

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

struct Run {
    /// The tree's root, once its creation was durable.
    root: Option<PageNo>,
    /// states[k]: the content after the first k operations.
    states: Vec<Model>,
    /// Operations acknowledged (commit_wait returned before the disk froze).
    acked: usize,
}

fn key(k: u32) -> Vec<u8> {
    let mut v = vec![b'c'; 24];
    v.extend_from_slice(&k.to_be_bytes());
    v
}

fn workload(e: &Engine, seed: u64, ops: usize, alive: &dyn Fn() -> bool) -> Run {
    let mut run = Run {
        root: None,
        states: vec![Model::new()],
        acked: 0,
    };
    let Ok(space) = e.create_space("t") else {
        return run;
    };
    let Ok((t, lsn)) = BTree::create(e, space, 9) else {
        return run;
    };
    e.commit_wait(lsn);
    if !alive() {
        return run;
    }
    run.root = Some(t.root());
    let mut rng = StdRng::seed_from_u64(seed);
    let mut m = Model::new();
    for i in 0..ops {
        // Grow for the first 60%, then mostly shrink, so merges follow the splits.
        let grow = i * 10 < ops * 6;
        let k = rng.gen_range(0..200u32);
        let present = m.contains_key(&key(k));
        let res = if (grow && rng.gen_ratio(4, 5)) || m.is_empty() || (!grow && rng.gen_ratio(1, 5))
        {
            if present {
                continue;
            }
            let v = vec![k as u8; rng.gen_range(100..700)];
            let r = t.insert(e, &key(k), &v);
            if r.is_ok() {
                m.insert(key(k), v);
            }
            r
        } else {
            // Delete a present key (the nearest one at or after k, wrapping).
            let Some(victim) = m
                .range(key(k)..)
                .next()
                .or_else(|| m.iter().next())
                .map(|(k, _)| k.clone())
            else {
                continue;
            };
            let r = t.delete(e, &victim);
            if r.is_ok() {
                m.remove(&victim);
            }
            r
        };
        let Ok(lsn) = res else {
            return run;
        };
        run.states.push(m.clone());
        e.commit_wait(lsn);
        if alive() {
            run.acked = run.states.len() - 1;
        }
        if i % 40 == 39 {
            let _ = e.checkpoint_now();
        }
    }
    run
}

fn recover_and_check(img: &SimVfs, run: &Run, what: &str) -> usize {
    let e = open(img).unwrap_or_else(|err| panic!("{what}: recovery failed: {err}"));
    let Some(root) = run.root else {
        e.kill();
        assert_eq!(run.acked, 0);
        return 0;
    };
    let tree = e
        .space_id("t")
        .ok()
        .and_then(|space| BTree::open(&e, space, root).ok());
    let Some(t) = tree else {
        // Creation was acknowledged (run.root is set only then), so the tree must be there.
        panic!("{what}: the tree's root is gone after recovery");
    };
    let problems = t.verify(&e);
    assert!(problems.is_empty(), "{what}: {problems:#?}");
    let content: Model = t
        .scan(&e, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .map(|r| r.map(|en| (en.key, en.value)))
        .collect::<Result<_, _>>()
        .unwrap_or_else(|err| panic!("{what}: scan failed: {err}"));
    let k = (run.acked..run.states.len())
        .find(|&k| run.states[k] == content)
        .unwrap_or_else(|| {
            panic!(
                "{what}: content ({} keys) matches no durable prefix (acked {}, done {})",
                content.len(),
                run.acked,
                run.states.len() - 1
            )
        });
    e.kill();
    k
}

fn crash_at(seed: u64, point: u64, mode: CrashMode, ops: usize, twice: bool) {
    let vfs = SimVfs::new(seed);
    vfs.set_crash_point(point);
    let e = open(&vfs).expect("open fresh");
    let run = workload(&e, seed, ops, &|| !vfs.is_frozen());
    e.kill();
    let img = crash(&vfs, mode);
    let what = format!("seed {seed} point {point} mode {mode:?}");
    let k1 = recover_and_check(&img, &run, &what);
    if twice {
        let (img2, _) = img.crash_with(CrashMode::KeepAll);
        let k2 = recover_and_check(&img2, &run, &format!("{what}, second recovery"));
        assert_eq!(k1, k2, "{what}: a second recovery changed the content");
    }
}

#[test]
fn every_crash_point_of_a_small_run_of_splits_and_merges_recovers() {
    let ops = 60;
    let vfs = SimVfs::new(1);
    let e = open(&vfs).expect("open");
    let run = workload(&e, 1, ops, &|| true);
    assert!(run.acked > 20, "{} operations acknowledged", run.acked);
    // The run splits: more than one page.
    let t =
        BTree::open(&e, e.space_id("t").expect("space"), run.root.expect("root")).expect("tree");
    let max_keys = run.states.iter().map(|s| s.len()).max().unwrap_or(0);
    assert!(
        max_keys > 8,
        "the run should outgrow one leaf ({max_keys} keys)"
    );
    assert!(t.verify(&e).is_empty());
    e.kill();
    let total = vfs.op_count();
    eprintln!("small run: {total} crash points, 5 modes each");
    for point in 0..=total {
        for mode in CrashMode::ALL {
            crash_at(1, point, mode, ops, false);
        }
    }
}

#[test]
fn random_crash_points_of_larger_runs_recover_to_a_durable_prefix() {
    let iters: u64 = std::env::var("QUIRE_BTREE_CRASH_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16);
    for i in 0..iters {
        let seed = 500 + i;
        let vfs = SimVfs::new(seed);
        let e = open(&vfs).expect("open");
        let _ = workload(&e, seed, 250, &|| true);
        e.kill();
        let total = vfs.op_count();
        let point = (seed * 7919) % total.max(1);
        crash_at(seed, point, CrashMode::ALL[(i % 5) as usize], 250, true);
    }
}
