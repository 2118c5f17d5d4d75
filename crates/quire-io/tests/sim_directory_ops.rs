//! Creates, deletes and renames are pending until the parent directory is synced; at a crash
//! each directory keeps a prefix of its pending ops.

use std::path::{Path, PathBuf};

use quire_io::sim::{CrashMode, SimVfs};
use quire_io::{OpenOptions, Vfs};

fn p(s: &str) -> &Path {
    Path::new(s)
}

fn synced_file(vfs: &SimVfs, path: &str, data: &[u8]) {
    let f = vfs
        .open(p(path), OpenOptions::create_new())
        .expect("create");
    f.write_all_at(data, 0).expect("write");
    f.sync_data().expect("sync");
}

#[test]
fn created_file_without_dir_sync_vanishes_under_drop_all() {
    let vfs = SimVfs::new(0);
    vfs.create_dir_all(p("/db")).expect("mkdir");
    synced_file(&vfs, "/db/t1", b"data"); // data synced, directory not
    assert_eq!(vfs.durable_contents(p("/db/t1")), None);
    let (after, report) = vfs.crash_with(CrashMode::DropAll);
    assert!(!after.exists(p("/db/t1")).expect("exists"));
    assert_eq!(report.dirs[0].kept, 0);
    // ... and survives with its data once the directory is synced.
    vfs.sync_dir(p("/db")).expect("sync dir");
    let (after, _) = vfs.crash_with(CrashMode::DropAll);
    assert_eq!(after.live_contents(p("/db/t1")).expect("file"), b"data");
}

#[test]
fn created_file_without_dir_sync_may_vanish_under_random() {
    let (mut kept, mut lost) = (0, 0);
    for seed in 0..40 {
        let vfs = SimVfs::new(seed);
        synced_file(&vfs, "/x", b"x");
        let (after, _) = vfs.crash();
        if after.exists(p("/x")).expect("exists") {
            kept += 1;
        } else {
            lost += 1;
        }
    }
    assert!(kept > 0 && lost > 0, "kept {kept}, lost {lost}");
}

#[test]
fn directory_keeps_a_prefix_of_its_pending_ops() {
    for seed in 0..60 {
        let vfs = SimVfs::new(seed);
        for name in ["/a", "/b", "/c", "/d"] {
            vfs.open(p(name), OpenOptions::create_new())
                .expect("create");
        }
        let (after, report) = vfs.crash();
        let k = report
            .dirs
            .iter()
            .find(|d| d.dir == p("/"))
            .map_or(0, |d| d.kept);
        let expect: Vec<PathBuf> = ["a", "b", "c", "d"][..k]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(after.list_dir(p("/")).expect("ls"), expect, "seed {seed}");
    }
}

#[test]
fn rename_before_dir_sync_leaves_exactly_one_name() {
    for seed in 0..60 {
        let vfs = SimVfs::new(seed);
        synced_file(&vfs, "/tmp-name", b"payload");
        vfs.sync_dir(p("/")).expect("sync dir");
        vfs.rename(p("/tmp-name"), p("/final")).expect("rename");
        assert!(vfs.exists(p("/final")).expect("exists"));
        let (after, _) = vfs.crash();
        let old = after.live_contents(p("/tmp-name"));
        let new = after.live_contents(p("/final"));
        assert!(
            old.is_some() != new.is_some(),
            "seed {seed}: {old:?} {new:?}"
        );
        assert_eq!(old.or(new).expect("one name"), b"payload");
    }
}

#[test]
fn rename_after_dir_sync_survives_every_mode() {
    for mode in CrashMode::ALL {
        let vfs = SimVfs::new(5);
        synced_file(&vfs, "/tmp-name", b"payload");
        vfs.rename(p("/tmp-name"), p("/final")).expect("rename");
        vfs.sync_dir(p("/")).expect("sync dir");
        let (after, _) = vfs.crash_with(mode);
        assert_eq!(
            after.list_dir(p("/")).expect("ls"),
            vec![PathBuf::from("final")]
        );
        assert_eq!(after.live_contents(p("/final")).expect("file"), b"payload");
    }
}

#[test]
fn rename_replaces_the_target_atomically() {
    for seed in 0..40 {
        let vfs = SimVfs::new(seed);
        synced_file(&vfs, "/cfg", b"old");
        synced_file(&vfs, "/cfg.new", b"new");
        vfs.sync_dir(p("/")).expect("sync dir");
        vfs.rename(p("/cfg.new"), p("/cfg")).expect("rename");
        let (after, _) = vfs.crash();
        let cfg = after.live_contents(p("/cfg")).expect("cfg always exists");
        if cfg == b"new" {
            assert!(!after.exists(p("/cfg.new")).expect("exists"));
        } else {
            assert_eq!(cfg, b"old");
            assert_eq!(
                after.live_contents(p("/cfg.new")).expect("still there"),
                b"new"
            );
        }
    }
}

#[test]
fn delete_is_pending_until_dir_sync() {
    let vfs = SimVfs::new(0);
    synced_file(&vfs, "/gone", b"bytes");
    vfs.sync_dir(p("/")).expect("sync dir");
    let f = vfs.open(p("/gone"), OpenOptions::existing()).expect("open");
    vfs.delete(p("/gone")).expect("delete");
    assert!(!vfs.exists(p("/gone")).expect("exists"));
    // An open handle still reaches the inode, as on Unix.
    let mut b = [0u8; 5];
    f.read_exact_at(&mut b, 0).expect("read unlinked");
    assert_eq!(&b, b"bytes");
    let (after, _) = vfs.crash_with(CrashMode::DropAll);
    assert_eq!(
        after.live_contents(p("/gone")).expect("delete lost"),
        b"bytes"
    );
    let (after, _) = vfs.crash_with(CrashMode::KeepAll);
    assert!(!after.exists(p("/gone")).expect("exists"));
    vfs.sync_dir(p("/")).expect("sync dir");
    let (after, _) = vfs.crash_with(CrashMode::DropAll);
    assert!(!after.exists(p("/gone")).expect("exists"));
}

#[test]
fn cross_directory_rename_is_pending_in_both_directories() {
    let vfs = SimVfs::new(0);
    vfs.create_dir_all(p("/a")).expect("mkdir");
    vfs.create_dir_all(p("/b")).expect("mkdir");
    synced_file(&vfs, "/a/f", b"f");
    vfs.sync_dir(p("/a")).expect("sync");
    vfs.rename(p("/a/f"), p("/b/f")).expect("rename");
    vfs.sync_dir(p("/b")).expect("sync b only");
    let (after, _) = vfs.crash_with(CrashMode::DropAll);
    // /b is durable, /a's removal is not: both names survive.
    assert!(after.exists(p("/a/f")).expect("a"));
    assert!(after.exists(p("/b/f")).expect("b"));
    vfs.sync_dir(p("/a")).expect("sync a");
    let (after, _) = vfs.crash_with(CrashMode::DropAll);
    assert_eq!(after.list_files(), vec![PathBuf::from("/b/f")]);
}

#[test]
fn namespace_errors_are_reported() {
    let vfs = SimVfs::new(0);
    vfs.open(p("/x"), OpenOptions::create_new())
        .expect("create");
    let kind =
        |r: quire_io::Result<std::sync::Arc<dyn quire_io::VfsFile>>| r.expect_err("must fail").kind;
    assert_eq!(
        kind(vfs.open(p("/x"), OpenOptions::create_new())),
        quire_io::ErrorKind::AlreadyExists
    );
    assert_eq!(
        kind(vfs.open(p("/y"), OpenOptions::existing())),
        quire_io::ErrorKind::NotFound
    );
    assert_eq!(
        kind(vfs.open(p("/nodir/y"), OpenOptions::create_new())),
        quire_io::ErrorKind::NotFound
    );
    assert_eq!(
        vfs.delete(p("/y")).expect_err("missing").kind,
        quire_io::ErrorKind::NotFound
    );
    assert_eq!(
        vfs.rename(p("/y"), p("/z")).expect_err("missing").kind,
        quire_io::ErrorKind::NotFound
    );
    assert!(vfs.open(p("/x"), OpenOptions::create_if_missing()).is_ok());
    assert_eq!(vfs.list_files(), vec![PathBuf::from("/x")]);
    assert_eq!(vfs.list_durable_files(), Vec::<PathBuf>::new());
}
