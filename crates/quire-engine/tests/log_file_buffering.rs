//! `innodb_log_file_buffering`: the redo log is written through the file system cache
//! (no O_DIRECT) when it is ON, which is the default for a server started with
//! `innodb_flush_log_at_trx_commit=2` (as in MariaDB): such commits only write the log, and a
//! write into the page cache costs microseconds where an O_DIRECT write is a device round
//! trip. Buffered redo is still durable at commit with `innodb_flush_log_at_trx_commit=1`
//! (fdatasync), and survives crashes like O_DIRECT redo.

mod common;

use common::*;
use quire_engine::config::{Config, FlushAtCommit};
use quire_engine::page::{PageId, PageType};
use quire_io::sim::{CrashMode, SimVfs};

fn direct_io(cfg: &Config) -> bool {
    // The simulator reports O_DIRECT alignment to files opened with O_DIRECT.
    let vfs = SimVfs::new(5).with_direct_align(512);
    let e = open(&vfs, cfg).expect("open");
    e.log().direct_io()
}

#[test]
fn the_log_is_o_direct_unless_buffering_is_on_or_commits_only_write() {
    let base = small_config();
    assert!(direct_io(&base), "flush_log_at_trx_commit=1: O_DIRECT");
    let write_only = Config {
        flush_log_at_trx_commit: FlushAtCommit::WriteOnly,
        ..base.clone()
    };
    assert!(!direct_io(&write_only), "=2 turns buffering on by default");
    let forced_off = Config {
        log_file_buffering: Some(false),
        ..write_only
    };
    assert!(direct_io(&forced_off), "an explicit OFF keeps O_DIRECT");
    let forced_on = Config {
        log_file_buffering: Some(true),
        ..base
    };
    assert!(!direct_io(&forced_on), "an explicit ON drops O_DIRECT");
}

#[test]
fn buffered_redo_keeps_every_acknowledged_commit_across_a_crash() {
    let cfg = Config {
        log_file_buffering: Some(true),
        ..small_config()
    };
    for mode in [CrashMode::DropAll, CrashMode::Random] {
        let vfs = SimVfs::new(7).with_direct_align(512);
        let e = open(&vfs, &cfg).expect("open");
        let space = e.create_space("t").expect("space");
        let mut ids = Vec::new();
        for i in 0..50u32 {
            let mut m = e.mtr();
            let id = PageId::new(space, e.alloc_page(&mut m, space).expect("alloc"));
            let s = m.create_page(id, PageType::Raw).expect("create");
            m.write_u32(s, 100, i).expect("write");
            e.commit_wait(m.commit().expect("commit").expect("changed"));
            ids.push(id);
        }
        e.kill();
        let (img, _) = vfs.crash_with(mode);
        let e = open(&img, &cfg).expect("recover");
        for (i, id) in ids.iter().enumerate() {
            let g = e.pool().get_shared(*id).expect("page");
            assert_eq!(g[100..104], (i as u32).to_le_bytes(), "{mode:?} page {i}");
        }
    }
}
