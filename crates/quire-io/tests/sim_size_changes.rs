//! allocate and set_len change the size only pendingly; a sync makes the size durable.
//! Allocation writes no bytes (lesson 5: allocate files, don't write zeros).

use std::path::Path;

use quire_io::sim::{CrashMode, SimVfs, SizeCause};
use quire_io::{OpenOptions, Vfs};

fn file(vfs: &SimVfs) -> std::sync::Arc<dyn quire_io::VfsFile> {
    let f = vfs
        .open(Path::new("/s"), OpenOptions::create_new())
        .expect("create");
    vfs.sync_dir(Path::new("/")).expect("sync dir");
    f
}

#[test]
fn creating_a_space_by_allocate_writes_no_zeros() {
    let vfs = SimVfs::new(0);
    let f = file(&vfs);
    vfs.reset_stats();
    f.allocate(0, 64 << 20).expect("allocate");
    let st = vfs.stats();
    assert_eq!(st.writes, 0);
    assert_eq!(st.bytes_written, 0);
    assert_eq!(st.allocates, 1);
    assert_eq!(f.len().expect("len"), 64 << 20);
    let mut b = vec![1u8; 4096];
    f.read_exact_at(&mut b, 10 << 20).expect("read");
    assert!(b.iter().all(|&x| x == 0));
}

#[test]
fn unsynced_allocate_is_kept_or_dropped_and_synced_allocate_survives() {
    let vfs = SimVfs::new(0);
    let f = file(&vfs);
    f.allocate(0, 8192).expect("allocate");
    let (after, report) = vfs.crash_with(CrashMode::DropAll);
    assert_eq!(after.live_contents(Path::new("/s")).expect("f").len(), 0);
    assert_eq!(report.size_changes.len(), 1);
    assert_eq!(report.size_changes[0].cause, SizeCause::Allocate);
    assert!(!report.size_changes[0].kept);
    let (after, report) = vfs.crash_with(CrashMode::KeepAll);
    assert_eq!(
        after.live_contents(Path::new("/s")).expect("f"),
        vec![0; 8192]
    );
    assert!(report.size_changes[0].kept);
    f.sync_data().expect("sync");
    for mode in CrashMode::ALL {
        let (after, _) = vfs.crash_with(mode);
        assert_eq!(
            after.live_contents(Path::new("/s")).expect("f").len(),
            8192,
            "{mode:?}"
        );
    }
}

#[test]
fn allocate_never_shrinks() {
    let vfs = SimVfs::new(0);
    let f = file(&vfs);
    f.allocate(0, 10_000).expect("allocate");
    f.allocate(100, 10).expect("inside");
    assert_eq!(f.len().expect("len"), 10_000);
    assert_eq!(
        vfs.pending_ops(Path::new("/s")),
        Some(1),
        "no-op allocate adds no pending op"
    );
}

#[test]
fn truncate_is_pending_until_sync() {
    let vfs = SimVfs::new(0);
    let f = file(&vfs);
    f.write_all_at(&[3; 4096], 0).expect("write");
    f.sync_data().expect("sync");
    f.set_len(1000).expect("truncate");
    assert_eq!(f.len().expect("len"), 1000);
    let (after, _) = vfs.crash_with(CrashMode::DropAll);
    assert_eq!(
        after.live_contents(Path::new("/s")).expect("f"),
        vec![3; 4096]
    );
    let (after, _) = vfs.crash_with(CrashMode::KeepAll);
    assert_eq!(
        after.live_contents(Path::new("/s")).expect("f"),
        vec![3; 1000]
    );
    // Growing again reads zeros past the truncation point.
    f.set_len(2000).expect("grow");
    let live = vfs.live_contents(Path::new("/s")).expect("live");
    assert_eq!(&live[..1000], &[3; 1000][..]);
    assert!(live[1000..].iter().all(|&b| b == 0));
    f.sync_data().expect("sync");
    let (after, _) = vfs.crash_with(CrashMode::DropAll);
    assert_eq!(after.live_contents(Path::new("/s")).expect("f"), live);
}
