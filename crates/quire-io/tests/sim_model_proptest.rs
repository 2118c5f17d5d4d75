//! Property test against a simple model: after random writes, syncs, size changes and a
//! crash in any mode, every byte of every file holds a value it could legally hold.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use proptest::prelude::*;
use quire_io::sim::{CrashMode, SimVfs, WriteFate, SECTOR_BYTES};
use quire_io::{OpenOptions, Vfs, VfsFile};

const FILES: usize = 3;

#[derive(Debug, Clone)]
enum Op {
    Write {
        file: usize,
        offset: u64,
        len: usize,
    },
    Sync {
        file: usize,
    },
    Allocate {
        file: usize,
        end: u64,
    },
    SetLen {
        file: usize,
        len: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let file = 0..FILES;
    prop_oneof![
        6 => (file.clone(), 0u64..8192, 1usize..2500).prop_map(|(file, offset, len)| Op::Write {
            file,
            offset,
            len
        }),
        2 => file.clone().prop_map(|file| Op::Sync { file }),
        1 => (file.clone(), 0u64..12000).prop_map(|(file, end)| Op::Allocate { file, end }),
        1 => (file, 0u64..12000).prop_map(|(file, len)| Op::SetLen { file, len }),
    ]
}

fn mode() -> impl Strategy<Value = CrashMode> {
    prop_oneof![
        Just(CrashMode::Random),
        Just(CrashMode::KeepAll),
        Just(CrashMode::DropAll),
        Just(CrashMode::TearAll),
        Just(CrashMode::GarbageAll),
    ]
}

/// The model of one file: its durable bytes and what is pending since the last sync.
#[derive(Debug, Default, Clone)]
struct ModelFile {
    durable: Vec<u8>,
    live: Vec<u8>,
    /// (offset, bytes) of every pending write.
    writes: Vec<(u64, Vec<u8>)>,
    /// Lengths of every pending size change.
    sizes: Vec<u64>,
}

fn path(i: usize) -> PathBuf {
    PathBuf::from(format!("/f{i}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn every_byte_after_a_crash_holds_a_legal_value(
        seed in any::<u64>(),
        ops in proptest::collection::vec(op(), 0..40),
        mode in mode(),
    ) {
        let vfs = SimVfs::new(seed);
        let handles: Vec<Arc<dyn VfsFile>> = (0..FILES)
            .map(|i| vfs.open(&path(i), OpenOptions::create_new()).expect("create"))
            .collect();
        vfs.sync_dir(Path::new("/")).expect("sync dir");
        let mut model = vec![ModelFile::default(); FILES];
        let mut stamp = 0u8;
        for op in &ops {
            match *op {
                Op::Write { file, offset, len } => {
                    // Distinct non-zero bytes per write, so values identify their writer.
                    stamp = stamp.wrapping_add(1).max(1);
                    let data: Vec<u8> = (0..len).map(|i| stamp ^ (i as u8 & 0x80)).collect();
                    handles[file].write_all_at(&data, offset).expect("write");
                    let m = &mut model[file];
                    let end = offset as usize + len;
                    if m.live.len() < end { m.live.resize(end, 0); }
                    m.live[offset as usize..end].copy_from_slice(&data);
                    m.writes.push((offset, data));
                }
                Op::Sync { file } => {
                    handles[file].sync_data().expect("sync");
                    let m = &mut model[file];
                    m.durable = m.live.clone();
                    m.writes.clear();
                    m.sizes.clear();
                }
                Op::Allocate { file, end } => {
                    handles[file].allocate(0, end).expect("allocate");
                    let m = &mut model[file];
                    if end as usize > m.live.len() {
                        m.live.resize(end as usize, 0);
                        m.sizes.push(end);
                    }
                }
                Op::SetLen { file, len } => {
                    handles[file].set_len(len).expect("set_len");
                    let m = &mut model[file];
                    m.live.resize(len as usize, 0);
                    m.sizes.push(len);
                }
            }
        }
        // The simulator agrees with the model before the crash.
        for (i, m) in model.iter().enumerate() {
            prop_assert_eq!(&vfs.live_contents(&path(i)).expect("live"), &m.live);
            prop_assert_eq!(&vfs.durable_contents(&path(i)).expect("durable"), &m.durable);
        }
        vfs.check_invariants();

        let (after, report) = vfs.crash_with(mode);
        for (i, m) in model.iter().enumerate() {
            let p = path(i);
            let got = after.live_contents(&p).expect("file survives: its directory was synced");
            match mode {
                CrashMode::KeepAll => prop_assert_eq!(&got, &m.live),
                CrashMode::DropAll => prop_assert_eq!(&got, &m.durable),
                _ => {}
            }
            let garbage = report.garbage_sectors(&p);
            // Garbage only inside the range some pending write covered.
            for &s in &garbage {
                let covered = m.writes.iter().any(|(o, d)| {
                    *o < (s + 1) * SECTOR_BYTES && o + d.len() as u64 > s * SECTOR_BYTES
                });
                prop_assert!(covered, "garbage sector {} of {} outside every write", s, p.display());
            }
            // The length is one the file could have: no longer than the longest it was.
            let max_len = m.writes.iter().map(|(o, d)| o + d.len() as u64)
                .chain(m.sizes.iter().copied())
                .chain([m.durable.len() as u64])
                .max()
                .unwrap_or(0);
            prop_assert!(got.len() as u64 <= max_len);
            let shrunk_to = m.sizes.iter().copied().min().unwrap_or(u64::MAX);
            for (b, &v) in got.iter().enumerate() {
                let b64 = b as u64;
                let durable_ok = m.durable.get(b).map_or(v == 0, |&d| d == v);
                // Zero is what a hole, an extension or a truncate-then-grow reads.
                let zero_ok = v == 0 && (b >= m.durable.len() || b64 >= shrunk_to);
                let write_ok = m.writes.iter().any(|(o, d)| {
                    b64 >= *o && b64 < o + d.len() as u64 && d[(b64 - o) as usize] == v
                });
                let covered = m.writes.iter().any(|(o, d)| b64 >= *o && b64 < o + d.len() as u64);
                let garbage_ok = covered && garbage.contains(&(b64 / SECTOR_BYTES));
                prop_assert!(
                    durable_ok || zero_ok || write_ok || garbage_ok,
                    "{:?}: {} byte {} = {:#x} is not a legal value", mode, p.display(), b, v
                );
            }
            // Every reported tear keeps whole sectors: 0 < kept < sectors.
            for w in report.writes.iter().filter(|w| w.path == p) {
                if let WriteFate::TornPrefix { sectors_kept, sectors }
                | WriteFate::TornSuffix { sectors_kept, sectors } = w.fate
                {
                    prop_assert!(sectors_kept > 0 && sectors_kept < sectors);
                }
            }
        }
        after.check_invariants();
    }
}
