//! Simulated crashes at every write and sync of a small run, and at random points of larger
//! runs, in every crash mode of the simulator (docs/io.md). After recovery the pages must equal
//! the model after some prefix of the mtrs that includes every acknowledged commit; recovering
//! a second time gives the same state; a crash during recovery is itself recovered.
//!
//! `QUIRE_CRASH_ITERS` raises the number of random crash points (the stress run in README).

mod common;

use common::*;
use quire_io::sim::{CrashMode, SimVfs};

/// Every file gets the same crash mode: data-file writes tear and get garbage like any other
/// (the doublewrite buffer, step 3, repairs them; docs/doublewrite.md).
fn crash(vfs: &SimVfs, mode: CrashMode) -> SimVfs {
    vfs.crash_with(mode).0
}

fn recover_and_check(img: &SimVfs, run: &Run, pages: u32, what: &str) -> usize {
    let cfg = small_config();
    let engine = open(img, &cfg).unwrap_or_else(|e| panic!("{what}: recovery failed: {e}"));
    let observed = observe(&engine, pages);
    let k = match observed {
        None => {
            assert!(
                run.acked == 0,
                "{what}: space lost but {} commits were acknowledged",
                run.acked
            );
            0
        }
        Some(obs) => matching_prefix(run, &obs).unwrap_or_else(|| {
            panic!(
                "{what}: recovered pages match no durable prefix (acked {}, committed {})",
                run.acked,
                run.states.len() - 1
            )
        }),
    };
    engine.kill();
    k
}

/// Runs the workload with the disk frozen after `point` mutating operations, crashes in
/// `mode`, and checks recovery, a second recovery, and a crash in the middle of recovery.
fn crash_at(seed: u64, point: u64, mode: CrashMode, mtrs: usize, pages: u32) {
    let cfg = small_config();
    let vfs = SimVfs::new(seed);
    vfs.set_crash_point(point);
    let engine = open(&vfs, &cfg).expect("open fresh");
    let run = workload(&engine, seed, mtrs, pages, 7, &|| !vfs.is_frozen());
    engine.kill();
    let img = crash(&vfs, mode);
    let what = format!("seed {seed} point {point} mode {mode:?}");
    let k1 = recover_and_check(&img, &run, pages, &what);
    // Recovering again (from the state the first recovery left) gives the same pages.
    let (img2, _) = img.crash_with(CrashMode::KeepAll);
    let k2 = recover_and_check(&img2, &run, pages, &format!("{what}, second recovery"));
    assert_eq!(k1, k2, "{what}: second recovery changed the state");
    // A crash in the middle of recovery is itself recovered, to the same state.
    let img3 = img.crash_with(CrashMode::KeepAll).0;
    let ops = img3.op_count();
    img3.set_crash_point(ops + 3 + point % 11);
    if let Ok(e) = open(&img3, &cfg) {
        e.kill();
    }
    let img4 = crash(&img3, mode);
    let k3 = recover_and_check(
        &img4,
        &run,
        pages,
        &format!("{what}, crash during recovery"),
    );
    assert_eq!(k1, k3, "{what}: a crash during recovery changed the state");
}

#[test]
fn every_crash_point_of_a_small_run_recovers_every_acknowledged_commit() {
    let (mtrs, pages) = (20, 5);
    // Count the operations of an uncrashed run.
    let vfs = SimVfs::new(1);
    let engine = open(&vfs, &small_config()).expect("open");
    let run = workload(&engine, 1, mtrs, pages, 7, &|| true);
    assert_eq!(run.acked, mtrs);
    engine.kill();
    let total = vfs.op_count();
    eprintln!("small run: {total} mutating operations, each a crash point in 5 modes");
    for point in 0..=total {
        for mode in CrashMode::ALL {
            crash_at(1, point, mode, mtrs, pages);
        }
    }
}

#[test]
fn random_crash_points_of_larger_runs_recover() {
    let iters: u64 = std::env::var("QUIRE_CRASH_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    for i in 0..iters {
        let seed = 1000 + i;
        let vfs = SimVfs::new(seed);
        let engine = open(&vfs, &small_config()).expect("open");
        let _ = workload(&engine, seed, 120, 24, 7, &|| true);
        engine.kill();
        let total = vfs.op_count();
        let point = (seed * 7919) % total.max(1);
        crash_at(seed, point, CrashMode::ALL[(i % 5) as usize], 120, 24);
    }
}
