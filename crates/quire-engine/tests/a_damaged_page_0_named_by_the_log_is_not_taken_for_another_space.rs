//! A space file whose page 0 is garbage (a write in flight at the crash) is identified by the
//! redo log when the log names it, not matched to another space's page-0 copy in the
//! doublewrite file (docs/doublewrite.md, "A torn header page 0"; docs/recovery.md, step 4).
//!
//! The first write of a page 0 skips the doublewrite buffer (its redo begins with the
//! FILE_CREATE mtr's PAGE_INIT), so a crash during it leaves garbage with no copy. Open used to
//! match such a file, before recovery read the log, to the only unclaimed page-0 copy, that of
//! another space: the system space's file was then taken for that space, and recovery, finding
//! "system.qsp" claimed, created it again and failed with "file exists" (found by
//! `online_rebuild_survives_crashes`, about one run in three).

mod common;

use std::path::Path;

use common::{open, small_config, DIR};
use quire_engine::page::{PageId, PageNo, PageType, SpaceId};
use quire_engine::Engine;
use quire_io::sim::{CrashMode, SimVfs};
use quire_io::{OpenOptions, Vfs};

fn stat(e: &Engine, name: &str) -> u64 {
    e.stat(name).unwrap_or_else(|| panic!("no counter {name}"))
}

fn commit(e: &Engine, m: quire_engine::mtr::Mtr<'_>) {
    let lsn = m.commit().expect("commit").expect("lsn");
    e.commit_wait(lsn);
}

/// Overwrites bytes of a file of a (post-crash) image and syncs them.
fn poke(vfs: &SimVfs, file: &str, offset: u64, bytes: &[u8]) {
    let f = vfs
        .open(&Path::new(DIR).join(file), OpenOptions::existing())
        .expect("open");
    f.write_all_at(bytes, offset).expect("write");
    f.sync_data().expect("sync");
}

/// A fresh directory with a space `name` whose page 0 went through the doublewrite buffer
/// (written twice: the second write is protected) while the system space's page 0, dirty
/// since the directory was created, was never written: no checkpoint has passed the system
/// space's FILE_CREATE. Returns the image (everything written kept), the space's id and a
/// page of it with 0x5a at [100, 400).
fn directory(name: &str) -> (SimVfs, SpaceId, PageNo) {
    let cfg = small_config();
    let vfs = SimVfs::new(11);
    let e = open(&vfs, &cfg).expect("open");
    let a = e.create_space(name).expect("space");
    let mut m = e.mtr();
    let p = e.alloc_page(&mut m, a).expect("alloc");
    let s = m
        .create_page(PageId::new(a, p), PageType::Raw)
        .expect("create");
    m.write(s, 100, &[0x5a; 300]).expect("write");
    commit(&e, m);
    // First write of a's page 0: it skips the doublewrite buffer.
    e.pool().flush_space(a).expect("flush");
    // A change in place (an allocation changes page 0), then a protected write.
    let mut m = e.mtr();
    e.alloc_page(&mut m, a).expect("alloc");
    commit(&e, m);
    let before = stat(&e, "Innodb_dblwr_pages_written");
    e.pool().flush_space(a).expect("flush");
    assert!(
        stat(&e, "Innodb_dblwr_pages_written") > before,
        "{name}'s page 0 must go through the doublewrite buffer"
    );
    e.kill();
    let img = vfs.crash_with(CrashMode::KeepAll).0;
    let sys = img
        .live_contents(&Path::new(DIR).join("system.qsp"))
        .expect("system.qsp");
    assert!(
        sys[..cfg.page_size as usize].iter().all(|&b| b == 0),
        "the system space's page 0 was written: the scenario needs its first write to be the \
         one in flight at the crash"
    );
    (img, a, p)
}

fn garbage(len: usize, seed: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + seed) as u8).collect()
}

fn recover_and_verify(img: &SimVfs, name: &str, a: SpaceId, p: PageNo, what: &str) {
    let e = open(img, &small_config()).unwrap_or_else(|e| panic!("{what}: open: {e}"));
    assert!(
        e.spaces().get(SpaceId::SYSTEM).is_ok(),
        "{what}: no system space"
    );
    assert_eq!(e.space_id(name).expect("space"), a, "{what}");
    let g = e
        .pool()
        .get_shared(PageId::new(a, p))
        .unwrap_or_else(|err| panic!("{what}: page {p} of {name}: {err}"));
    assert!(
        g[100..400].iter().all(|&b| b == 0x5a),
        "{what}: page {p} of {name}"
    );
    drop(g);
    assert!(e.page_is_used(PageId::new(a, p)).expect("used"), "{what}");
    e.shutdown().expect("shutdown");
    // And again, cleanly.
    let e = open(img, &small_config()).unwrap_or_else(|e| panic!("{what}: reopen: {e}"));
    assert_eq!(e.space_id(name).expect("space"), a, "{what}: reopen");
    e.shutdown().expect("shutdown");
}

#[test]
fn a_garbage_system_page_0_with_no_copy_is_not_taken_for_another_space() {
    let ps = small_config().page_size as usize;
    // system.qsp's first page 0 write (no copy) became garbage, and a.qsp's directory entry
    // was lost (the directory is synced only before a checkpoint passes FILE_CREATE): the
    // only page-0 copy in the doublewrite file is a's, and no file claims it.
    let (img, a, p) = directory("a");
    poke(&img, "system.qsp", 0, &garbage(ps, 13));
    img.delete(&Path::new(DIR).join("a.qsp")).expect("delete");
    recover_and_verify(&img, "a", a, p, "system page 0 garbage, a.qsp lost");
}

#[test]
fn two_garbage_page_0s_are_each_the_file_the_log_names() {
    let ps = small_config().page_size as usize;
    // Both page 0s garbage in their first sector, with one page-0 copy (t's) in the
    // doublewrite file: each file is the one the log names, and t's page 0 is repaired from
    // its copy. (system.qsp is listed before t.qsp: it used to be matched to t's copy.)
    let (img, t, p) = directory("t");
    poke(&img, "system.qsp", 0, &garbage(ps, 13));
    poke(&img, "t.qsp", 0, &garbage(512, 29));
    recover_and_verify(&img, "t", t, p, "both page 0s garbage");
}
