//! Recovery reads the pages it must apply redo to ahead of the appliers, in multi-page
//! requests (docs/recovery.md, "Apply"). The read-ahead must fit a tiny pool, and a damaged
//! page inside a request must still stop recovery with the page named, never be served.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use quire_engine::page::{PageId, PageType};
use quire_io::sim::{CrashMode, SimVfs};
use quire_io::{OpenOptions, Vfs};

const PS: usize = 4096;

fn space_path() -> PathBuf {
    Path::new(DIR).join("t.qsp")
}

/// `n` pages created and checkpointed (so their creation is on disk), then each changed
/// again by one mtr after the checkpoint, every commit acknowledged. Returns the pages.
fn pages_changed_after_checkpoint(engine: &quire_engine::Engine, n: u32) -> Vec<PageId> {
    let space = engine.create_space("t").expect("space");
    let mut ids = Vec::new();
    for i in 0..n {
        let mut m = engine.mtr();
        let p = engine.alloc_page(&mut m, space).expect("alloc");
        let id = PageId::new(space, p);
        let s = m.create_page(id, PageType::Raw).expect("create");
        m.write_u32(s, 100, i).expect("write");
        let lsn = m.commit().expect("commit").expect("changed");
        engine.commit_wait(lsn);
        ids.push(id);
    }
    engine.checkpoint_now().expect("checkpoint");
    for (i, id) in ids.iter().enumerate() {
        let mut m = engine.mtr();
        let s = m.x_latch(*id).expect("latch");
        m.write_u32(s, 200, 7000 + i as u32).expect("write");
        let lsn = m.commit().expect("commit").expect("changed");
        engine.commit_wait(lsn);
    }
    ids
}

#[test]
fn read_ahead_in_a_pool_of_64_frames_recovers_every_page() {
    let cfg = small_config(); // 64 frames
    let vfs = SimVfs::new(31);
    let engine = open(&vfs, &cfg).expect("open");
    let ids = pages_changed_after_checkpoint(&engine, 400);
    engine.kill();
    // Only synced page writes survive: the pages the pool had not written back when the
    // engine died (how many depends on the cleaner's timing) have no PAGE_INIT after the
    // checkpoint and must be read, through a pool far smaller than them.
    let img = vfs.crash_with(CrashMode::DropAll).0;
    let engine = open(&img, &cfg).expect("recover");
    let st = engine.recovery_stats().clone();
    assert!(st.pages_read > 0, "{st:?}");
    for (i, id) in ids.iter().enumerate() {
        let g = engine.pool().get_shared(*id).expect("page");
        assert_eq!(g[100..104], (i as u32).to_le_bytes(), "page {id}");
        assert_eq!(g[200..204], (7000 + i as u32).to_le_bytes(), "page {id}");
    }
}

#[test]
fn a_damaged_page_inside_a_read_ahead_request_stops_recovery_naming_it() {
    let mut cfg = small_config();
    cfg.buffer_pool_size = 1024 * PS as u64; // spans of many pages
    cfg.doublewrite = false; // no copy to restore the page from
    let vfs = SimVfs::new(32);
    let engine = open(&vfs, &cfg).expect("open");
    let ids = pages_changed_after_checkpoint(&engine, 64);
    engine.kill();
    let img = vfs.crash_with(CrashMode::DropAll).0;
    // Damage one page in the middle of the run of pages recovery reads together.
    let victim = ids[31];
    let f = img
        .open(&space_path(), OpenOptions::existing())
        .expect("open");
    f.write_all_at(&[0x5a; 512], victim.page_no.0 as u64 * PS as u64 + 1024)
        .expect("write");
    f.sync_data().expect("sync");
    let err = match open(&img, &cfg) {
        Ok(_) => panic!("a damaged page was served after recovery"),
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains("t.qsp") && err.contains(&format!("page {}", victim.page_no.0)),
        "the error names the file and the page: {err}"
    );
}
