//! What recovery reads and what it does not, online log resize, and re-creating a data
//! directory whose creation never finished.

mod common;

use common::*;
use quire_engine::page::{PageId, PageType};
use quire_io::sim::{CrashMode, SimVfs};

/// Creates `n` pages with PAGE_INIT and writes to each, acknowledging every commit.
fn fill(engine: &quire_engine::Engine, n: u32) -> Vec<PageId> {
    let space = engine
        .space_id("t")
        .or_else(|_| engine.create_space("t"))
        .expect("space");
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
    ids
}

#[test]
fn pages_whose_redo_starts_with_page_init_are_not_read_during_recovery() {
    let cfg = small_config();
    let vfs = SimVfs::new(11);
    let engine = open(&vfs, &cfg).expect("open");
    engine.create_space("t").expect("space");
    engine.checkpoint_now().expect("checkpoint");
    let ids = fill(&engine, 20);
    engine.kill();
    // Drop every data-file write since the checkpoint: only the log survives.
    let img = vfs.crash_with(CrashMode::DropAll).0;
    let engine = open(&img, &cfg).expect("recover");
    let st = engine.recovery_stats().clone();
    assert!(st.pages_initialized >= 20, "{st:?}");
    // Page 0 and the descriptor changes of the allocations are the only pages read.
    assert_eq!(
        engine.stat("Innodb_pages_read"),
        Some(st.pages_read),
        "{st:?}"
    );
    for (i, id) in ids.iter().enumerate() {
        let g = engine.pool().get_shared(*id).expect("page");
        assert_eq!(g[100..104], (i as u32).to_le_bytes());
    }
    assert!(
        st.pages_read <= 2,
        "recovery read {} pages: {st:?}",
        st.pages_read
    );
}

#[test]
fn modified_pages_are_read_and_only_newer_changes_applied() {
    let cfg = small_config();
    let vfs = SimVfs::new(12);
    let engine = open(&vfs, &cfg).expect("open");
    let ids = fill(&engine, 5);
    engine.checkpoint_now().expect("checkpoint");
    for (i, id) in ids.iter().enumerate() {
        let mut m = engine.mtr();
        let s = m.x_latch(*id).expect("latch");
        m.write_u32(s, 200, 1000 + i as u32).expect("write");
        let lsn = m.commit().expect("commit").expect("changed");
        engine.commit_wait(lsn);
    }
    engine.kill();
    let img = vfs.crash_with(CrashMode::DropAll).0;
    let engine = open(&img, &cfg).expect("recover");
    let st = engine.recovery_stats().clone();
    assert_eq!(st.pages_initialized, 0, "{st:?}");
    assert!(st.pages_read >= 5, "{st:?}");
    for (i, id) in ids.iter().enumerate() {
        let g = engine.pool().get_shared(*id).expect("page");
        assert_eq!(
            g[100..104],
            (i as u32).to_le_bytes(),
            "change before the checkpoint"
        );
        assert_eq!(
            g[200..204],
            (1000 + i as u32).to_le_bytes(),
            "change after it"
        );
    }
}

#[test]
fn log_resized_online_keeps_every_commit_across_a_crash() {
    let cfg = small_config();
    let vfs = SimVfs::new(13);
    let engine = open(&vfs, &cfg).expect("open");
    let a = fill(&engine, 10);
    engine.resize_log(1 << 20).expect("grow");
    let b = fill(&engine, 10);
    engine.resize_log(192 << 10).expect("shrink");
    let c = fill(&engine, 10);
    assert_eq!(engine.log().capacity(), 192 << 10);
    engine.kill();
    for mode in [CrashMode::DropAll, CrashMode::KeepAll] {
        let img = vfs.crash_with(mode).0;
        let engine = open(&img, &cfg).expect("recover");
        for (i, id) in a.iter().chain(&b).chain(&c).enumerate() {
            let g = engine.pool().get_shared(*id).expect("page");
            assert_eq!(
                g[100..104],
                ((i % 10) as u32).to_le_bytes(),
                "{mode:?} page {id}"
            );
        }
        engine.kill();
    }
}

#[test]
fn unfinished_data_directory_creation_starts_again() {
    let cfg = small_config();
    // Crash right after the log file was created, before its header was durable.
    for point in 0..4 {
        let vfs = SimVfs::new(14);
        vfs.set_crash_point(point);
        if let Ok(e) = open(&vfs, &cfg) {
            e.kill();
        }
        let img = vfs.crash_with(CrashMode::TearAll).0;
        let engine = open(&img, &cfg).unwrap_or_else(|e| panic!("point {point}: {e}"));
        fill(&engine, 2);
        engine.shutdown().expect("shutdown");
    }
}

#[test]
fn a_second_open_of_the_same_data_directory_is_refused() {
    use std::sync::Arc;
    let tmp = tempfile::tempdir().expect("tempdir");
    let vfs: Arc<dyn quire_io::Vfs> = Arc::new(quire_io::os::OsVfs::new());
    let cfg = quire_engine::config::Config {
        log_file_size: 1 << 20,
        ..small_config()
    };
    let first = quire_engine::Engine::open(vfs.clone(), tmp.path(), cfg.clone()).expect("open");
    let err = quire_engine::Engine::open(vfs.clone(), tmp.path(), cfg.clone())
        .err()
        .expect("a second open succeeded");
    let msg = err.to_string();
    assert!(
        msg.contains("quire.lock") && msg.contains("another"),
        "{msg}"
    );
    first.shutdown().expect("shutdown");
    // Released with the engine.
    let again = quire_engine::Engine::open(vfs, tmp.path(), cfg).expect("reopen");
    again.shutdown().expect("shutdown");
}
