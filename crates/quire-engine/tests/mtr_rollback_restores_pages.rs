//! A rollback-enabled mini-transaction (mtr invariant 6) undoes every change it made: pages
//! it changed get their bytes back, pages it re-created get their old contents back, pages it
//! created from nothing are left clean, nothing reaches the log, and nothing is dirtied. A
//! plain mtr cannot be rolled back once it changed something.

use std::path::Path;
use std::sync::Arc;

use quire_engine::config::Config;
use quire_engine::mtr::MtrError;
use quire_engine::page::{PageId, PageType};
use quire_engine::Engine;
use quire_io::sim::SimVfs;
use quire_io::Vfs;

fn engine() -> Engine {
    let cfg = Config {
        page_size: 4096,
        buffer_pool_size: 256 * 4096,
        log_file_size: 4 << 20,
        log_buffer_size: 1 << 20,
        ..Config::default()
    };
    Engine::open(
        Arc::new(SimVfs::new(11)) as Arc<dyn Vfs>,
        Path::new("/data"),
        cfg,
    )
    .expect("open")
}

fn bytes(e: &Engine, id: PageId) -> Vec<u8> {
    e.pool().get_shared(id).expect("page").to_vec()
}

fn dirty(e: &Engine) -> u64 {
    e.stat("Innodb_buffer_pool_pages_dirty").expect("counter")
}

#[test]
fn rollback_puts_back_changed_and_recreated_pages_and_logs_nothing() {
    let e = engine();
    let space = e.create_space("t").expect("space");
    // Two pages with known contents, written and clean.
    let mut mtr = e.mtr();
    let a = e.alloc_page(&mut mtr, space).expect("alloc");
    let b = e.alloc_page(&mut mtr, space).expect("alloc");
    let (a, b) = (PageId::new(space, a), PageId::new(space, b));
    for (id, fill) in [(a, 0x11), (b, 0x22)] {
        let s = mtr.create_page(id, PageType::Index).expect("create");
        mtr.memset(s, 100, 200, fill).expect("memset");
    }
    e.commit_wait(mtr.commit().expect("commit").expect("lsn"));
    e.checkpoint_now().expect("checkpoint");
    let (a0, b0) = (bytes(&e, a), bytes(&e, b));
    let lsn0 = e.log().current_lsn();
    let dirty0 = dirty(&e);
    let used0 = e.used_pages(space).expect("used");

    let mut mtr = e.mtr();
    mtr.enable_rollback();
    let sa = mtr.x_latch(a).expect("latch");
    mtr.write(sa, 150, b"changed").expect("write");
    mtr.memset(sa, 400, 50, 0xee).expect("memset");
    // Re-creating a resident page wipes it in the pool: rollback must bring it back.
    let sb = mtr.create_page(b, PageType::Index).expect("re-create");
    mtr.write(sb, 64, b"new").expect("write");
    // A page created from nothing (allocated, so the metadata changes too).
    let c = PageId::new(space, e.alloc_page(&mut mtr, space).expect("alloc"));
    let sc = mtr.create_page(c, PageType::Index).expect("create");
    mtr.write(sc, 64, b"fresh").expect("write");
    assert_ne!(mtr.page(sa), &a0[..]);
    assert!(!mtr.is_empty());
    mtr.rollback().expect("rollback");

    assert_eq!(bytes(&e, a), a0, "changed page not restored");
    assert_eq!(bytes(&e, b), b0, "re-created page not restored");
    assert_eq!(
        e.log().current_lsn(),
        lsn0,
        "a rolled-back mtr reached the log"
    );
    assert_eq!(dirty(&e), dirty0, "a rolled-back mtr dirtied pages");
    assert_eq!(e.used_pages(space).expect("used"), used0, "allocation kept");
    // The restored pages take new changes as usual.
    let mut mtr = e.mtr();
    let sa = mtr.x_latch(a).expect("latch");
    mtr.write(sa, 150, b"later").expect("write");
    assert!(mtr.commit().expect("commit").is_some());
}

#[test]
fn dropping_a_rollback_enabled_mtr_rolls_it_back() {
    let e = engine();
    let space = e.create_space("t").expect("space");
    let mut mtr = e.mtr();
    let a = PageId::new(space, e.alloc_page(&mut mtr, space).expect("alloc"));
    let s = mtr.create_page(a, PageType::Index).expect("create");
    mtr.memset(s, 100, 10, 0x33).expect("memset");
    e.commit_wait(mtr.commit().expect("commit").expect("lsn"));
    let a0 = bytes(&e, a);
    let lsn0 = e.log().current_lsn();
    {
        let mut mtr = e.mtr();
        mtr.enable_rollback();
        let s = mtr.x_latch(a).expect("latch");
        mtr.memset(s, 100, 10, 0x44).expect("memset");
        // An error path drops the mtr without committing.
    }
    assert_eq!(bytes(&e, a), a0);
    assert_eq!(e.log().current_lsn(), lsn0);
}

#[test]
fn a_change_past_the_largest_frame_is_refused_with_a_clear_error() {
    let e = engine();
    let space = e.create_space("t").expect("space");
    let mut mtr = e.mtr();
    mtr.enable_rollback();
    let max = mtr.redo_max();
    let mut pages = Vec::new();
    let err = loop {
        let p = PageId::new(space, e.alloc_page(&mut mtr, space).expect("alloc"));
        let s = mtr.create_page(p, PageType::Index).expect("create");
        pages.push(p);
        match mtr.write(s, 64, &vec![0x55; 3000]) {
            Ok(()) => assert!(mtr.redo_len() <= max),
            Err(err) => break err,
        }
    };
    assert!(
        matches!(err, MtrError::TooLarge { max: m, .. } if m == max),
        "{err}"
    );
    assert!(err.to_string().contains("innodb_log_buffer_size"), "{err}");
    let lsn0 = e.log().current_lsn();
    mtr.rollback().expect("rollback");
    assert_eq!(e.log().current_lsn(), lsn0);
    assert!(e
        .used_pages(space)
        .expect("used")
        .iter()
        .all(|p| !pages.contains(&PageId::new(space, *p))));
}

#[test]
fn a_plain_mtr_that_changed_a_page_cannot_be_rolled_back() {
    let e = engine();
    let space = e.create_space("t").expect("space");
    let mut mtr = e.mtr();
    let a = PageId::new(space, e.alloc_page(&mut mtr, space).expect("alloc"));
    let s = mtr.create_page(a, PageType::Index).expect("create");
    mtr.write(s, 64, b"kept").expect("write");
    let lsn0 = e.log().current_lsn();
    let err = mtr.rollback().expect_err("plain mtr rolled back");
    assert!(matches!(err, MtrError::Misuse { .. }), "{err}");
    // The refused rollback left the mtr to commit on drop: the change is logged, not lost.
    assert!(e.log().current_lsn() > lsn0);
}
