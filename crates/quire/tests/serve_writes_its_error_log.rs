//! `--set log_error=NAME`: the server's messages (recovery, ready, shutting down) go to that
//! file, relative to the data directory as in MariaDB, and not to standard error.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn wait_for(path: &std::path::Path, text: &str) -> String {
    let start = Instant::now();
    loop {
        let log = std::fs::read_to_string(path).unwrap_or_default();
        if log.contains(text) {
            return log;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no '{text}' in the error log: {log}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_error_log_receives_the_servers_messages() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let child = Command::new(env!("CARGO_BIN_EXE_quire"))
        .args([
            "serve",
            "--port",
            "0",
            "--set",
            "log_error=logs/quire.err",
            "--data-dir",
        ])
        .arg(&data)
        .stderr(Stdio::piped())
        .spawn()
        .expect("start");
    let log_path = data.join("logs").join("quire.err");
    let log = wait_for(&log_path, "quire: ready for connections on 127.0.0.1:");
    let addr = log
        .lines()
        .find_map(|l| l.strip_prefix("quire: ready for connections on "))
        .expect("address")
        .to_string();
    // The server answers on the address it logged.
    std::net::TcpStream::connect(addr.trim()).expect("connect");
    // SAFETY: sending a signal to our own child.
    let pid = i32::try_from(child.id()).expect("pid");
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "{:?}", out.status);
    let log = wait_for(&log_path, "quire: shutting down");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("ready for connections"),
        "stderr: {stderr}"
    );
    assert!(log.find("ready").expect("ready") < log.find("shutting down").expect("down"));
}
