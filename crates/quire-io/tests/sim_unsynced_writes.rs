//! What a crash may do to writes no sync covered: drop them, tear them at 512-byte
//! boundaries, or put garbage inside (and only inside) the range they wrote.

use std::path::Path;

use quire_io::sim::{CrashMode, SimVfs, WriteFate, SECTOR_BYTES};
use quire_io::{OpenOptions, Vfs};

const P: &str = "/f";

/// A durable file of 8 KiB of 0x11, then one pending write of 0x22 over `[off, off+len)`.
fn one_pending_write(seed: u64, off: u64, len: usize) -> SimVfs {
    let vfs = SimVfs::new(seed);
    let f = vfs
        .open(Path::new(P), OpenOptions::create_new())
        .expect("create");
    vfs.sync_dir(Path::new("/")).expect("sync dir");
    f.write_all_at(&[0x11; 8192], 0).expect("write");
    f.sync_data().expect("sync");
    f.write_all_at(&vec![0x22; len], off).expect("write");
    vfs
}

#[test]
fn unsynced_write_vanishes_under_drop_all() {
    let vfs = one_pending_write(0, 1024, 2048);
    let (after, report) = vfs.crash_with(CrashMode::DropAll);
    assert_eq!(
        after.live_contents(Path::new(P)).expect("f"),
        vec![0x11; 8192]
    );
    assert_eq!(report.writes.len(), 1);
    assert_eq!(report.writes[0].fate, WriteFate::Dropped);
}

#[test]
fn unsynced_write_is_whole_under_keep_all() {
    let vfs = one_pending_write(0, 1024, 2048);
    let live = vfs.live_contents(Path::new(P)).expect("live");
    let (after, _) = vfs.crash_with(CrashMode::KeepAll);
    assert_eq!(after.live_contents(Path::new(P)).expect("f"), live);
}

#[test]
fn torn_write_lands_a_prefix_or_suffix_of_whole_sectors() {
    // Unaligned on purpose: the write covers part of sector 1, sectors 2..=5, part of 6.
    let (off, len) = (700u64, 2700usize);
    for seed in 0..50 {
        let vfs = one_pending_write(seed, off, len);
        let (after, report) = vfs.crash_with(CrashMode::TearAll);
        let got = after.live_contents(Path::new(P)).expect("f");
        let (kept_from, kept_to) = match report.writes[0].fate {
            WriteFate::TornPrefix {
                sectors_kept,
                sectors,
            } => {
                assert!(0 < sectors_kept && sectors_kept < sectors);
                // Boundary: the end of sector (first + kept).
                let end = ((off / SECTOR_BYTES) + sectors_kept) * SECTOR_BYTES;
                (off, end)
            }
            WriteFate::TornSuffix {
                sectors_kept,
                sectors,
            } => {
                assert!(0 < sectors_kept && sectors_kept < sectors);
                let last = (off + len as u64 - 1) / SECTOR_BYTES;
                (((last + 1) - sectors_kept) * SECTOR_BYTES, off + len as u64)
            }
            ref other => panic!("TearAll gave {other:?}"),
        };
        for (i, &b) in got.iter().enumerate() {
            let i = i as u64;
            let expect = if i >= kept_from && i < kept_to {
                0x22
            } else {
                0x11
            };
            assert_eq!(
                b, expect,
                "seed {seed} byte {i} ({:?})",
                report.writes[0].fate
            );
        }
    }
}

#[test]
fn single_sector_write_cannot_tear() {
    for seed in 0..20 {
        let vfs = one_pending_write(seed, 512, 512);
        let (_, report) = vfs.crash_with(CrashMode::TearAll);
        assert_eq!(report.writes[0].fate, WriteFate::Dropped);
    }
}

#[test]
fn garbage_stays_inside_the_written_range() {
    let (off, len) = (1000u64, 3000usize);
    for seed in 0..50 {
        let vfs = one_pending_write(seed, off, len);
        let (after, report) = vfs.crash_with(CrashMode::GarbageAll);
        let got = after.live_contents(Path::new(P)).expect("f");
        let WriteFate::Garbage { sectors } = &report.writes[0].fate else {
            panic!("GarbageAll gave {:?}", report.writes[0].fate);
        };
        assert!(!sectors.is_empty());
        for (i, &b) in got.iter().enumerate() {
            let i = i as u64;
            if i < off || i >= off + len as u64 {
                assert_eq!(b, 0x11, "seed {seed}: byte {i} outside the write changed");
            } else if !sectors.contains(&(i / SECTOR_BYTES)) {
                assert_eq!(b, 0x22, "seed {seed}: byte {i} in a clean sector");
            }
        }
        // Garbage really is garbage: some byte of a garbage sector differs from both values.
        let s = sectors[0];
        let lo = (s * SECTOR_BYTES).max(off) as usize;
        let hi = ((s + 1) * SECTOR_BYTES).min(off + len as u64) as usize;
        assert!(got[lo..hi].iter().any(|&b| b != 0x22 && b != 0x11));
    }
}

#[test]
fn random_mode_produces_every_fate() {
    let mut seen = [false; 5];
    for seed in 0..100 {
        let vfs = one_pending_write(seed, 0, 4096);
        let (_, report) = vfs.crash();
        let i = match report.writes[0].fate {
            WriteFate::Kept => 0,
            WriteFate::Dropped => 1,
            WriteFate::TornPrefix { .. } => 2,
            WriteFate::TornSuffix { .. } => 3,
            WriteFate::Garbage { .. } => 4,
        };
        seen[i] = true;
    }
    assert_eq!(seen, [true; 5]);
}

#[test]
fn unsynced_extending_write_grows_the_file_only_as_far_as_it_landed() {
    for seed in 0..30 {
        let vfs = SimVfs::new(seed);
        let f = vfs
            .open(Path::new(P), OpenOptions::create_new())
            .expect("create");
        vfs.sync_dir(Path::new("/")).expect("sync dir");
        f.write_all_at(&[7; 2048], 0).expect("write");
        let (after, report) = vfs.crash_with(CrashMode::TearAll);
        let got = after.live_contents(Path::new(P)).expect("f");
        match report.writes[0].fate {
            WriteFate::TornPrefix { sectors_kept, .. } => {
                assert_eq!(got, vec![7; (sectors_kept * SECTOR_BYTES) as usize]);
            }
            WriteFate::TornSuffix { sectors_kept, .. } => {
                assert_eq!(got.len(), 2048);
                let hole = (2048 - sectors_kept * SECTOR_BYTES) as usize;
                assert!(got[..hole].iter().all(|&b| b == 0));
                assert!(got[hole..].iter().all(|&b| b == 7));
            }
            ref other => panic!("{other:?}"),
        }
        assert_eq!(
            after
                .open(Path::new(P), OpenOptions::existing())
                .expect("open")
                .len()
                .expect("len"),
            got.len() as u64
        );
    }
}

#[test]
fn write_after_sync_is_pending_again() {
    // A write after sync is pending even if an earlier one was synced at the same offset.
    let vfs = SimVfs::new(0);
    let f = vfs
        .open(Path::new(P), OpenOptions::create_new())
        .expect("create");
    vfs.sync_dir(Path::new("/")).expect("sync dir");
    f.write_all_at(&[1; 512], 0).expect("write");
    f.sync_data().expect("sync");
    f.write_all_at(&[2; 512], 0).expect("write");
    assert_eq!(vfs.pending_ops(Path::new(P)), Some(1));
    assert_eq!(
        vfs.durable_contents(Path::new(P)).expect("durable"),
        vec![1; 512]
    );
    assert_eq!(vfs.live_contents(Path::new(P)).expect("live"), vec![2; 512]);
}
