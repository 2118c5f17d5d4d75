//! Injected EIO and ENOSPC hit exactly the chosen call, change nothing, and disarm. A disk
//! of limited capacity refuses every growth past it, and accepts them again once space is freed.

use std::path::Path;

use quire_io::sim::{CrashMode, Fault, FaultOp, SimVfs};
use quire_io::{ErrorKind, OpenOptions, Vfs};

#[test]
fn eio_hits_exactly_the_nth_matching_sync() {
    let vfs = SimVfs::new(0);
    let a = vfs
        .open(Path::new("/a.ibd"), OpenOptions::create_new())
        .expect("a");
    let log = vfs
        .open(Path::new("/redo.log"), OpenOptions::create_new())
        .expect("log");
    vfs.inject(Fault::eio(FaultOp::Sync, 3).on_path("redo"));
    a.sync_data().expect("other file: not matching");
    log.sync_data().expect("1st");
    a.sync_data().expect("other file: not matching");
    log.sync_data().expect("2nd");
    let e = log.sync_data().expect_err("3rd fails");
    assert_eq!(e.kind, ErrorKind::Io);
    assert!(e.to_string().contains("redo.log"), "{e}");
    log.sync_data().expect("disarmed after firing");
    assert_eq!(vfs.stats().faults_fired, 1);
    assert_eq!(vfs.stats().syncs, 5, "the failed sync is not counted");
}

#[test]
fn failed_sync_makes_nothing_durable() {
    let vfs = SimVfs::new(0);
    let f = vfs
        .open(Path::new("/f"), OpenOptions::create_new())
        .expect("f");
    vfs.sync_dir(Path::new("/")).expect("sync dir");
    f.write_all_at(b"abc", 0).expect("write");
    vfs.inject(Fault::eio(FaultOp::Sync, 1));
    let ops = vfs.op_count();
    f.sync_data().expect_err("EIO");
    assert_eq!(vfs.op_count(), ops, "a failed call is not an op");
    assert_eq!(vfs.durable_contents(Path::new("/f")).expect("durable"), b"");
    let (after, _) = vfs.crash_with(CrashMode::DropAll);
    assert_eq!(after.live_contents(Path::new("/f")).expect("f"), b"");
}

#[test]
fn enospc_on_write_leaves_live_data_unchanged() {
    let vfs = SimVfs::new(0);
    let f = vfs
        .open(Path::new("/f"), OpenOptions::create_new())
        .expect("f");
    f.write_all_at(&[1; 1000], 0).expect("write");
    vfs.inject(Fault::enospc(FaultOp::Write, 2));
    f.write_all_at(&[2; 10], 0).expect("1st write passes");
    let e = f
        .write_vectored_at(&[&[3; 10], &[4; 2000]], 0)
        .expect_err("2nd fails");
    assert_eq!(e.kind, ErrorKind::NoSpace);
    let live = vfs.live_contents(Path::new("/f")).expect("live");
    assert_eq!(live.len(), 1000);
    assert_eq!(&live[..10], &[2; 10]);
    assert!(live[10..].iter().all(|&b| b == 1));
    assert_eq!(vfs.stats().writes, 2);
}

#[test]
fn enospc_on_allocate_keeps_the_size() {
    let vfs = SimVfs::new(0);
    let f = vfs
        .open(Path::new("/f"), OpenOptions::create_new())
        .expect("f");
    vfs.inject(Fault::enospc(FaultOp::Allocate, 1));
    assert_eq!(
        f.allocate(0, 1 << 20).expect_err("full").kind,
        ErrorKind::NoSpace
    );
    assert_eq!(f.len().expect("len"), 0);
    f.allocate(0, 1 << 20).expect("space freed");
    assert_eq!(f.len().expect("len"), 1 << 20);
}

#[test]
fn a_full_disk_refuses_growth_until_space_is_freed() {
    let vfs = SimVfs::new(0);
    let a = vfs
        .open(Path::new("/a"), OpenOptions::create_new())
        .expect("a");
    let ballast = vfs
        .open(Path::new("/ballast"), OpenOptions::create_new())
        .expect("ballast");
    ballast.allocate(0, 6000).expect("ballast");
    a.write_all_at(&[1; 3000], 0).expect("write");
    vfs.set_capacity(Some(10_000));
    assert_eq!(vfs.used_bytes(), 9000);
    let ops = vfs.op_count();
    for e in [
        a.allocate(0, 10_001 - 6000)
            .expect_err("fallocate past the disk"),
        a.write_all_at(&[2; 2000], 3000)
            .expect_err("write past the disk"),
        a.set_len(4001).expect_err("ftruncate past the disk"),
    ] {
        assert_eq!(e.kind, ErrorKind::NoSpace, "{e}");
    }
    assert_eq!(vfs.op_count(), ops, "a refused call is not an op");
    assert_eq!(a.len().expect("len"), 3000, "nothing changed");
    // Inside the file, and up to the last byte of the disk, everything still works.
    a.write_all_at(&[3; 3000], 0).expect("overwrite");
    a.allocate(0, 4000).expect("the last bytes");
    assert_eq!(vfs.used_bytes(), 10_000);
    a.write_all_at(&[4], 4000).expect_err("one byte too many");
    // Space freed: a delete, or a bigger disk.
    drop(ballast);
    vfs.delete(Path::new("/ballast")).expect("delete");
    a.allocate(0, 10_000).expect("room again");
    vfs.set_capacity(None);
    a.allocate(0, 1 << 20).expect("unbounded");
}

#[test]
fn a_partial_fallocate_keeps_what_the_disk_held() {
    let vfs = SimVfs::new(0);
    let a = vfs
        .open(Path::new("/a"), OpenOptions::create_new())
        .expect("a");
    vfs.set_capacity(Some(5000));
    vfs.set_partial_allocate(true);
    let ops = vfs.op_count();
    let e = a.allocate(1000, 8000).expect_err("past the disk");
    assert_eq!(e.kind, ErrorKind::NoSpace);
    assert_eq!(
        a.len().expect("len"),
        5000,
        "the file got the disk's last byte"
    );
    assert_eq!(vfs.op_count(), ops + 1, "the size change is an op");
    let e = a.allocate(0, 6000).expect_err("nothing left");
    assert_eq!(e.kind, ErrorKind::NoSpace);
    assert_eq!(vfs.op_count(), ops + 1, "nothing granted: no op");
    a.set_len(1000).expect("cut back");
    assert_eq!(vfs.used_bytes(), 1000);
}

#[test]
fn faults_on_open_rename_delete_and_sync_dir() {
    let vfs = SimVfs::new(0);
    vfs.inject(Fault::eio(FaultOp::Open, 1).on_path("t1"));
    let e = vfs
        .open(Path::new("/t1"), OpenOptions::create_new())
        .expect_err("EIO");
    assert_eq!(e.kind, ErrorKind::Io);
    assert!(
        !vfs.exists(Path::new("/t1")).expect("exists"),
        "failed create created nothing"
    );
    vfs.open(Path::new("/t1"), OpenOptions::create_new())
        .expect("create");
    vfs.inject(Fault::eio(FaultOp::Rename, 1));
    vfs.rename(Path::new("/t1"), Path::new("/t2"))
        .expect_err("EIO");
    assert!(vfs.exists(Path::new("/t1")).expect("exists"));
    vfs.inject(Fault::eio(FaultOp::Delete, 1));
    vfs.delete(Path::new("/t1")).expect_err("EIO");
    assert!(vfs.exists(Path::new("/t1")).expect("exists"));
    vfs.inject(Fault::eio(FaultOp::SyncDir, 1));
    vfs.sync_dir(Path::new("/")).expect_err("EIO");
    assert_eq!(vfs.list_durable_files().len(), 0);
}

#[test]
fn any_matches_every_kind_of_call_and_counts_across_them() {
    let vfs = SimVfs::new(0);
    let f = vfs
        .open(Path::new("/f"), OpenOptions::create_new())
        .expect("f");
    vfs.inject(Fault::eio(FaultOp::Any, 3));
    f.write_all_at(b"x", 0).expect("1: write");
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, 0).expect("2: read");
    assert_eq!(f.set_len(10).expect_err("3: set_len").kind, ErrorKind::Io);
    vfs.clear_faults();
}

#[test]
fn eio_on_read_is_reported() {
    let vfs = SimVfs::new(0);
    let f = vfs
        .open(Path::new("/f"), OpenOptions::create_new())
        .expect("f");
    f.write_all_at(b"abcd", 0).expect("write");
    vfs.inject(Fault::eio(FaultOp::Read, 1));
    let mut b = [0u8; 4];
    assert_eq!(
        f.read_exact_at(&mut b, 0).expect_err("EIO").kind,
        ErrorKind::Io
    );
    f.read_exact_at(&mut b, 0).expect("disarmed");
    assert_eq!(&b, b"abcd");
}
