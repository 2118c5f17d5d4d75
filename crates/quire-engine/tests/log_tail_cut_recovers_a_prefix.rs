//! The redo log cut at every byte of its tail: recovery applies exactly the mini-transactions
//! whose frames lie wholly before the cut, never part of one, and opens cleanly every time.
//! (The log layer's own tests cut the log's frames; this one checks the pages.)

mod common;

use std::path::Path;

use common::*;
use quire_engine::config::Config;
use quire_engine::log::format::{file_offset, DATA_START};
use quire_io::sim::{CrashMode, SimVfs};
use quire_io::{OpenOptions, Vfs};

/// No page is written during the run (large pool, roomy log, no checkpoint), so cutting the
/// log never leaves a page newer than the log: the image is one a crash could produce.
fn config() -> Config {
    Config {
        buffer_pool_size: 2 << 20,
        log_file_size: 1 << 20,
        ..small_config()
    }
}

#[test]
fn log_cut_at_every_byte_of_its_tail_recovers_exactly_a_prefix() {
    let cfg = config();
    let vfs = SimVfs::new(3);
    let engine = open(&vfs, &cfg).expect("open");
    let run = workload(&engine, 3, 30, 6, 0, &|| true);
    let capacity = engine.log().capacity();
    let end = engine.log().current_lsn().0;
    assert_eq!(
        engine.stat("Innodb_pages_written"),
        Some(0),
        "pages were written during the run"
    );
    engine.kill();
    let base = vfs.crash_with(CrashMode::KeepAll).0;
    // The last three model mtrs and whatever follows them.
    let from = run.ends[run.ends.len() - 4].0;
    for cut in from..=end {
        let img = base.crash_with(CrashMode::KeepAll).0;
        let log = img
            .open(&Path::new(DIR).join("redo.log"), OpenOptions::existing())
            .expect("open log");
        // Zero [cut, end): the bytes after the cut never reached the disk.
        let zeros = vec![0u8; (end - cut) as usize];
        let mut done = 0usize;
        while done < zeros.len() {
            let lsn = cut + done as u64;
            let off = file_offset(lsn, capacity);
            let room = (DATA_START + capacity - off) as usize;
            let n = room.min(zeros.len() - done);
            log.write_all_at(&zeros[..n], off).expect("zero");
            done += n;
        }
        log.sync_data().expect("sync");
        drop(log);
        let engine = open(&img, &cfg).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        let want = run.ends.iter().filter(|e| e.0 <= cut).count();
        let got = observe(&engine, 6).expect("space t");
        assert!(
            got == run.states[want],
            "cut at LSN {cut}: expected the first {want} mtrs, got {:?}",
            run.states.iter().position(|s| *s == got)
        );
        engine.kill();
    }
}
