//! Data covered by a sync survives every crash mode, whatever happens to later writes.

use std::path::Path;

use quire_io::sim::{CrashMode, SimVfs};
use quire_io::{OpenOptions, Vfs};

fn setup(seed: u64) -> (SimVfs, std::sync::Arc<dyn quire_io::VfsFile>) {
    let vfs = SimVfs::new(seed);
    vfs.create_dir_all(Path::new("/db")).expect("mkdir");
    let f = vfs
        .open(Path::new("/db/f"), OpenOptions::create_new())
        .expect("create");
    vfs.sync_dir(Path::new("/db")).expect("sync dir");
    (vfs, f)
}

#[test]
fn synced_data_survives_every_crash_mode_and_seed() {
    for mode in CrashMode::ALL {
        for seed in 0..20 {
            let (vfs, f) = setup(seed);
            let synced: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 256) as u8).collect();
            f.write_all_at(&synced, 0).expect("write");
            f.sync_data().expect("sync");
            // Unsynced writes elsewhere must not disturb the synced bytes.
            f.write_all_at(&[0xEE; 3000], 6000).expect("write");
            let (after, _) = vfs.crash_with(mode);
            let got = after
                .live_contents(Path::new("/db/f"))
                .expect("file survives: its directory was synced");
            assert!(got.len() >= synced.len(), "{mode:?} seed {seed}");
            assert_eq!(&got[..synced.len()], &synced[..], "{mode:?} seed {seed}");
        }
    }
}

#[test]
fn overwrite_of_synced_data_leaves_old_or_new_bytes_per_sector() {
    for mode in CrashMode::ALL {
        for seed in 0..20 {
            let (vfs, f) = setup(seed);
            f.write_all_at(&[1; 4096], 0).expect("write");
            f.sync_data().expect("sync");
            f.write_all_at(&[2; 4096], 0).expect("overwrite");
            let (after, report) = vfs.crash_with(mode);
            let got = after.live_contents(Path::new("/db/f")).expect("file");
            assert_eq!(got.len(), 4096);
            let garbage = report.garbage_sectors(Path::new("/db/f"));
            for (s, sector) in got.chunks(512).enumerate() {
                let old = sector.iter().all(|&b| b == 1);
                let new = sector.iter().all(|&b| b == 2);
                assert!(
                    old || new || garbage.contains(&(s as u64)),
                    "{mode:?} seed {seed}: sector {s} is neither old, new nor reported garbage"
                );
            }
        }
    }
}

#[test]
fn dsync_write_is_durable_on_return() {
    for mode in CrashMode::ALL {
        let vfs = SimVfs::new(3);
        vfs.create_dir_all(Path::new("/db")).expect("mkdir");
        let f = vfs
            .open(Path::new("/db/log"), OpenOptions::create_new().dsync(true))
            .expect("create");
        vfs.sync_dir(Path::new("/db")).expect("sync dir");
        f.write_all_at(&[9; 1024], 0).expect("write");
        assert_eq!(
            vfs.durable_contents(Path::new("/db/log")).expect("durable"),
            vec![9; 1024]
        );
        let (after, report) = vfs.crash_with(mode);
        assert_eq!(
            after.live_contents(Path::new("/db/log")).expect("file"),
            vec![9; 1024],
            "{mode:?}"
        );
        assert!(report.writes.is_empty(), "dsync writes are not pending");
    }
}

#[test]
fn sync_of_one_file_does_not_make_another_durable() {
    let vfs = SimVfs::new(1);
    let a = vfs
        .open(Path::new("/a"), OpenOptions::create_new())
        .expect("a");
    let b = vfs
        .open(Path::new("/b"), OpenOptions::create_new())
        .expect("b");
    vfs.sync_dir(Path::new("/")).expect("sync dir");
    a.write_all_at(b"aaaa", 0).expect("write");
    b.write_all_at(b"bbbb", 0).expect("write");
    a.sync_data().expect("sync a");
    let (after, _) = vfs.crash_with(CrashMode::DropAll);
    assert_eq!(after.live_contents(Path::new("/a")).expect("a"), b"aaaa");
    assert_eq!(after.live_contents(Path::new("/b")).expect("b"), b"");
}
