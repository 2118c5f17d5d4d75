//! Recovery makes the log it is about to apply durable before it writes any page.
//!
//! After a process crash (not a power loss) the log's tail may be in the OS page cache only:
//! written, never synced. Recovery reads and applies it; if pages it changes reach the disk
//! (evicted during apply) before that tail is synced, a power loss then keeps those pages
//! and loses the redo that explains them: a multi-page mini-transaction is left half on
//! disk. Here every mini-transaction writes one value to all pages, so after any crash the
//! pages must agree.

mod common;

use std::path::Path;

use common::*;
use quire_engine::config::Config;
use quire_engine::log::FlushAtCommit;
use quire_engine::page::{PageId, PageType};
use quire_io::sim::{CrashMode, SimVfs};

/// Pages every mini-transaction writes: more than the recovery's buffer pool holds.
const PAGES: u32 = 40;
/// Mini-transactions whose redo is written but not synced when the process dies.
const MTRS: u32 = 4;
const AT: usize = 100;

fn run_config() -> Config {
    Config {
        // Commits write the log without syncing it.
        flush_log_at_trx_commit: FlushAtCommit::WriteOnly,
        ..small_config()
    }
}

fn recovery_config() -> Config {
    Config {
        // 16 frames: applying the redo to PAGES pages evicts (writes) some of them.
        buffer_pool_size: 16 * 4096,
        ..small_config()
    }
}

/// A run whose last MTRS mini-transactions are in the log file but not synced, then a
/// process crash: returns the file system (still holding the unsynced writes) and the pages.
fn crashed_run(seed: u64) -> (SimVfs, Vec<PageId>) {
    let vfs = SimVfs::new(seed);
    let engine = open(&vfs, &run_config()).expect("open");
    let space = engine.create_space("t").expect("space");
    let mut ids = Vec::new();
    for _ in 0..PAGES {
        let mut m = engine.mtr();
        let p = engine.alloc_page(&mut m, space).expect("alloc");
        let id = PageId::new(space, p);
        let s = m.create_page(id, PageType::Raw).expect("create");
        m.write_u32(s, AT, 0).expect("write");
        let lsn = m.commit().expect("commit").expect("changed");
        engine.commit_wait(lsn);
        ids.push(id);
    }
    // Everything so far is durable, and the checkpoint is past it.
    engine.checkpoint_now().expect("checkpoint");
    for v in 1..=MTRS {
        let mut m = engine.mtr();
        for id in &ids {
            let s = m.x_latch(*id).expect("latch");
            m.write_u32(s, AT, v).expect("write");
        }
        let lsn = m.commit().expect("commit").expect("changed");
        engine.commit_wait(lsn);
    }
    engine.kill();
    (vfs, ids)
}

fn values(vfs: &SimVfs, ids: &[PageId]) -> Vec<u32> {
    let engine = open(vfs, &run_config()).expect("recover after the power loss");
    let v = ids
        .iter()
        .map(|id| {
            let g = engine.pool().get_shared(*id).expect("page");
            u32::from_le_bytes(g[AT..AT + 4].try_into().expect("4 bytes"))
        })
        .collect();
    engine.shutdown().expect("shutdown");
    v
}

#[test]
fn a_power_loss_during_recovery_leaves_every_mini_transaction_whole() {
    let log = Path::new(DIR).join("redo.log");
    // How many mutating I/O calls a whole recovery makes.
    let (vfs, _) = crashed_run(3);
    assert!(
        vfs.pending_ops(&log).unwrap_or(0) > 0,
        "the run's log tail should be unsynced"
    );
    let before = vfs.op_count();
    open(&vfs, &recovery_config()).expect("recover").kill();
    let ops = vfs.op_count() - before;
    assert!(ops > 5, "recovery made {ops} I/O calls");

    for k in 1..=ops {
        let (vfs, ids) = crashed_run(3);
        vfs.set_crash_point_after(k);
        // The process restarts and recovers; the power fails after its k-th I/O call. The
        // disk keeps every data write made until then and none of the unsynced log writes.
        open(&vfs, &recovery_config())
            .expect("recover after the process crash")
            .kill();
        let (img, _) = vfs.crash_with_policy(&|p: &Path| {
            if p.ends_with("redo.log") {
                CrashMode::DropAll
            } else {
                CrashMode::KeepAll
            }
        });
        let v = values(&img, &ids);
        assert!(
            v.iter().all(|x| *x == v[0]),
            "power loss after recovery's I/O call {k} of {ops}: pages disagree: {v:?}"
        );
    }
}
