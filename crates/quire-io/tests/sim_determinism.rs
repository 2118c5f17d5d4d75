//! A crash is a function of the seed and the calls made: same seed, same image; different
//! seeds, different images.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use quire_io::sim::{CrashReport, SimVfs};
use quire_io::{OpenOptions, Vfs};

fn image(vfs: &SimVfs) -> BTreeMap<PathBuf, Vec<u8>> {
    vfs.list_files()
        .into_iter()
        .map(|p| {
            let c = vfs.live_contents(&p).expect("listed file exists");
            (p, c)
        })
        .collect()
}

/// Many pending writes, so that the fates make a visible difference.
fn run_and_crash(seed: u64) -> (BTreeMap<PathBuf, Vec<u8>>, CrashReport) {
    let vfs = SimVfs::new(seed);
    let f = vfs
        .open(Path::new("/f"), OpenOptions::create_new())
        .expect("create");
    vfs.sync_dir(Path::new("/")).expect("sync dir");
    for i in 0..32u64 {
        f.write_all_at(&vec![i as u8 + 1; 1536], i * 2048)
            .expect("write");
    }
    for name in ["/g", "/h", "/i"] {
        vfs.open(Path::new(name), OpenOptions::create_new())
            .expect("create");
    }
    let (after, report) = vfs.crash();
    (image(&after), report)
}

#[test]
fn same_seed_gives_the_same_crash_image_and_report() {
    for seed in [0, 1, 42, u64::MAX] {
        assert_eq!(run_and_crash(seed), run_and_crash(seed));
    }
}

#[test]
fn different_seeds_give_different_crash_images() {
    let images: Vec<_> = (0..8).map(|s| run_and_crash(s).0).collect();
    for i in 0..images.len() {
        for j in i + 1..images.len() {
            assert_ne!(images[i], images[j], "seeds {i} and {j}");
        }
    }
}

#[test]
fn successive_crashes_of_one_lineage_differ_but_repeat() {
    let lineage = |seed| {
        let vfs = SimVfs::new(seed);
        let mut images = Vec::new();
        let mut cur = vfs;
        for _ in 0..3 {
            let f = cur
                .open(Path::new("/f"), OpenOptions::create_if_missing())
                .expect("open");
            cur.sync_dir(Path::new("/")).expect("sync dir");
            for i in 0..16u64 {
                f.write_all_at(&[i as u8 + 1; 1024], i * 1024)
                    .expect("write");
            }
            let (next, report) = cur.crash();
            images.push(report);
            cur = next;
        }
        images
    };
    let a = lineage(9);
    assert_eq!(a, lineage(9));
    assert_ne!(a[0], a[1]);
}
