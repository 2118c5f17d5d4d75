//! A failed fsync through FileHandle aborts the process: no retry, no code after the sync.
//!
//! The test re-runs its own binary as a child with an env var set; the child does the
//! failing sync, and the parent checks how it died.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Command;

use quire_io::sim::{Fault, FaultOp, SimVfs};
use quire_io::{FileHandle, OpenOptions, Vfs};

const CHILD_ENV: &str = "QUIRE_FATAL_SYNC_CHILD";
const AFTER_SYNC_MARKER: &str = "CODE AFTER THE FAILED SYNC RAN";

fn child() {
    let vfs = SimVfs::new(0);
    let file = vfs
        .open(Path::new("/redo.log"), OpenOptions::create_new())
        .expect("create");
    let handle = FileHandle::new(file);
    handle.write_all_at(b"commit record", 0);
    vfs.inject(Fault::eio(FaultOp::Sync, 1));
    handle.sync_data();
    // Never reached: sync_data aborted the process.
    eprintln!("{AFTER_SYNC_MARKER}");
    println!("{AFTER_SYNC_MARKER}");
}

#[test]
fn failed_sync_through_file_handle_aborts_with_sigabrt() {
    if std::env::var_os(CHILD_ENV).is_some() {
        child();
        return;
    }
    let exe = std::env::current_exe().expect("current exe");
    let out = Command::new(exe)
        .args([
            "--exact",
            "failed_sync_through_file_handle_aborts_with_sigabrt",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .output()
        .expect("run child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGABRT),
        "child must die by SIGABRT; status {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    assert!(
        stderr.contains("fatal I/O error, aborting to protect your data")
            && stderr.contains("redo.log"),
        "fatal message missing:\n{stderr}"
    );
    assert!(!stdout.contains(AFTER_SYNC_MARKER) && !stderr.contains(AFTER_SYNC_MARKER));
}
