//! A crash point n freezes the disk after the n-th mutating call: the crash image is exactly
//! that of a run stopped after n calls, whatever the run does afterwards.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use quire_io::sim::{CrashMode, SimVfs};
use quire_io::{OpenOptions, Vfs, VfsFile};

/// One step is exactly one mutating call.
#[derive(Debug, Clone)]
enum Step {
    Create(&'static str),
    Write(&'static str, u64, usize, u8),
    WriteV(&'static str, u64, u8),
    Sync(&'static str),
    SyncDir,
    Allocate(&'static str, u64),
    SetLen(&'static str, u64),
    Rename(&'static str, &'static str),
    Delete(&'static str),
}

fn workload() -> Vec<Step> {
    use Step::*;
    vec![
        Create("/d/log"),
        Create("/d/data.tmp"),
        SyncDir,
        Allocate("/d/data.tmp", 16384),
        Write("/d/log", 0, 1024, 1),
        WriteV("/d/log", 1024, 2),
        Sync("/d/log"),
        Write("/d/data.tmp", 0, 4096, 3),
        Write("/d/data.tmp", 8192, 700, 4),
        Sync("/d/data.tmp"),
        Rename("/d/data.tmp", "/d/data"),
        SyncDir,
        Write("/d/data", 512, 3000, 5),
        SetLen("/d/log", 1500),
        Create("/d/junk"),
        Delete("/d/junk"),
        Write("/d/log", 1500, 100, 6),
        Sync("/d/log"),
        SyncDir,
    ]
}

/// Runs `steps`, asserting each is one op. Files are opened by inode, so a rename keeps
/// the handle.
fn run(vfs: &SimVfs, steps: &[Step]) {
    let mut files: HashMap<&str, Arc<dyn VfsFile>> = HashMap::new();
    vfs.create_dir_all(Path::new("/d")).expect("mkdir");
    for step in steps {
        let before = vfs.op_count();
        let f = |name: &str| Arc::clone(files.get(name).expect("open file"));
        match step {
            Step::Create(n) => {
                let h = vfs
                    .open(Path::new(n), OpenOptions::create_new())
                    .expect("create");
                files.insert(n, h);
            }
            Step::Write(n, off, len, b) => f(n).write_all_at(&vec![*b; *len], *off).expect("w"),
            Step::WriteV(n, off, b) => {
                let a = vec![*b; 100];
                let c = vec![b + 100; 412];
                f(n).write_vectored_at(&[&a, &c], *off).expect("wv")
            }
            Step::Sync(n) => f(n).sync_data().expect("sync"),
            Step::SyncDir => vfs.sync_dir(Path::new("/d")).expect("sync dir"),
            Step::Allocate(n, len) => f(n).allocate(0, *len).expect("allocate"),
            Step::SetLen(n, len) => f(n).set_len(*len).expect("set_len"),
            Step::Rename(a, b) => {
                vfs.rename(Path::new(a), Path::new(b)).expect("rename");
                let h = files.remove(a).expect("open file");
                files.insert(b, h);
            }
            Step::Delete(n) => vfs.delete(Path::new(n)).expect("delete"),
        }
        assert_eq!(
            vfs.op_count(),
            before + 1,
            "{step:?} must be exactly one op"
        );
    }
}

fn image(vfs: &SimVfs) -> BTreeMap<PathBuf, Vec<u8>> {
    vfs.list_files()
        .into_iter()
        .map(|p| {
            let c = vfs.live_contents(&p).expect("listed file exists");
            (p, c)
        })
        .collect()
}

#[test]
fn freeze_at_every_crash_point_gives_the_image_of_the_first_n_ops() {
    let steps = workload();
    let n_total = steps.len() as u64;
    for n in 0..=n_total {
        for mode in CrashMode::ALL {
            let frozen = SimVfs::new(7);
            frozen.set_crash_point(n);
            run(&frozen, &steps);
            assert!(frozen.is_frozen());
            let stopped = SimVfs::new(7);
            run(&stopped, &steps[..n as usize]);
            let (a, ra) = frozen.crash_with(mode);
            let (b, rb) = stopped.crash_with(mode);
            assert_eq!(image(&a), image(&b), "crash point {n}, {mode:?}");
            assert_eq!(ra, rb, "crash point {n}, {mode:?}");
        }
    }
}

#[test]
fn ops_after_the_freeze_still_update_the_live_view() {
    let vfs = SimVfs::new(1);
    run(&vfs, &workload()[..3]);
    vfs.set_crash_point(3); // freeze now
    let f = vfs
        .open(Path::new("/d/log"), OpenOptions::existing())
        .expect("open");
    f.write_all_at(b"after", 0).expect("write");
    f.sync_data().expect("sync");
    assert_eq!(
        &vfs.live_contents(Path::new("/d/log")).expect("live")[..5],
        b"after"
    );
    let (after, _) = vfs.crash_with(CrashMode::KeepAll);
    assert_eq!(after.live_contents(Path::new("/d/log")).expect("file"), b"");
}

#[test]
fn op_count_counts_each_mutating_call_once_and_reads_not_at_all() {
    let vfs = SimVfs::new(0);
    let f = vfs
        .open(Path::new("/f"), OpenOptions::create_new())
        .expect("create");
    assert_eq!(vfs.op_count(), 1);
    vfs.open(Path::new("/f"), OpenOptions::create_if_missing())
        .expect("reopen");
    let mut b = [0u8; 0];
    f.read_exact_at(&mut b, 0).expect("read");
    f.len().expect("len");
    vfs.exists(Path::new("/f")).expect("exists");
    vfs.list_dir(Path::new("/")).expect("ls");
    assert_eq!(vfs.op_count(), 1);
}
