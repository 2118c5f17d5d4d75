//! A failed fdatasync on the redo log or on a data file aborts the process, and no commit is
//! acknowledged after it (BRIEF, "Reliability": never retry a failed fsync, never acknowledge).
//! Each scenario runs in a child process (this test binary, re-executed), so the abort can be
//! observed from outside.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::process::Command;

use common::*;
use quire_engine::page::{PageId, PageType};
use quire_io::sim::{Fault, FaultOp, SimVfs};

const CHILD: &str = "QUIRE_FSYNC_CHILD";
const SIGABRT: i32 = 6;

/// Runs `test` of this binary in a child with the child marker set; returns its output.
fn run_child(test: &str) -> std::process::Output {
    let exe = std::env::current_exe().expect("current exe");
    Command::new(exe)
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("spawn child")
}

fn assert_aborted_without_ack(out: &std::process::Output, file: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.signal(),
        Some(SIGABRT),
        "child did not abort.\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("acknowledged 5 commits"),
        "setup did not run:\n{stdout}"
    );
    assert!(
        !stdout.contains("ACKNOWLEDGED AFTER FAULT"),
        "a commit was acknowledged:\n{stdout}"
    );
    assert!(
        stderr.contains("fatal I/O error") && stderr.contains(file),
        "the abort does not name the failed file:\n{stderr}"
    );
}

/// Opens an engine on a simulator, creates space "t" and acknowledges five commits.
fn setup(vfs: &SimVfs) -> (quire_engine::Engine, quire_engine::page::SpaceId) {
    let engine = open(vfs, &small_config()).expect("open");
    let space = engine.create_space("t").expect("space");
    for _ in 0..5 {
        let mut m = engine.mtr();
        let p = engine.alloc_page(&mut m, space).expect("alloc");
        m.create_page(PageId::new(space, p), PageType::Raw)
            .expect("create");
        let lsn = m.commit().expect("commit").expect("changed");
        engine.commit_wait(lsn);
    }
    println!("acknowledged 5 commits");
    (engine, space)
}

#[test]
fn redo_log_sync_failure_aborts_and_acknowledges_nothing() {
    if std::env::var_os(CHILD).is_none() {
        let out = run_child("redo_log_sync_failure_aborts_and_acknowledges_nothing");
        assert_aborted_without_ack(&out, "redo.log");
        return;
    }
    let vfs = SimVfs::new(7);
    let (engine, space) = setup(&vfs);
    vfs.inject(Fault::eio(FaultOp::Sync, 1).on_path("redo.log"));
    for _ in 0..100 {
        let mut m = engine.mtr();
        let p = engine.alloc_page(&mut m, space).expect("alloc");
        m.create_page(PageId::new(space, p), PageType::Raw)
            .expect("create");
        let lsn = m.commit().expect("commit").expect("changed");
        engine.commit_wait(lsn);
        println!("ACKNOWLEDGED AFTER FAULT");
    }
}

#[test]
fn data_file_sync_failure_aborts() {
    if std::env::var_os(CHILD).is_none() {
        let out = run_child("data_file_sync_failure_aborts");
        assert_aborted_without_ack(&out, "t.qsp");
        return;
    }
    let vfs = SimVfs::new(8);
    let (engine, _) = setup(&vfs);
    vfs.inject(Fault::eio(FaultOp::Sync, 1).on_path("t.qsp"));
    // Writing the dirty pages of t.qsp syncs it; the failure must not be survived.
    let _ = engine.checkpoint_now();
    println!("ACKNOWLEDGED AFTER FAULT: checkpoint returned");
}

#[test]
fn directory_sync_failure_at_a_checkpoint_aborts() {
    if std::env::var_os(CHILD).is_none() {
        let out = run_child("directory_sync_failure_at_a_checkpoint_aborts");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.signal(),
            Some(SIGABRT),
            "child did not abort.\n{stdout}\n{stderr}"
        );
        assert!(
            stdout.contains("space created"),
            "setup did not run:\n{stdout}"
        );
        assert!(
            !stdout.contains("CHECKPOINT RETURNED"),
            "a checkpoint survived a failed directory sync:\n{stdout}"
        );
        assert!(
            stderr.contains("fatal I/O error") && stderr.contains(DIR),
            "the abort does not name the directory:\n{stderr}"
        );
        return;
    }
    let vfs = SimVfs::new(9);
    let engine = open(&vfs, &small_config()).expect("open");
    // The next directory sync fails: the one that must make t.qsp's creation durable before
    // a checkpoint passes its FILE_CREATE (by the checkpointer thread or by checkpoint_now).
    vfs.inject(Fault::eio(FaultOp::SyncDir, 1));
    engine.create_space("t").expect("space");
    println!("space created");
    let first = engine.checkpoint_now();
    // The old code returned the error and dropped the pending flag, so this one "succeeded"
    // and the checkpoint passed FILE_CREATE with t.qsp's directory entry not durable.
    let second = engine.checkpoint_now();
    println!("CHECKPOINT RETURNED: {first:?} then {second:?}");
}
