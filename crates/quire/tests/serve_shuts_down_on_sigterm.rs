//! `quire serve`: listens after opening the data directory, answers a client, and exits
//! cleanly (status 0, socket file removed) on SIGTERM while a client is still connected.

use std::io::{BufRead, BufReader, Read};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn serve_answers_then_shuts_down_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let sock = dir.path().join("quire.sock");
    let mut child = Command::new(env!("CARGO_BIN_EXE_quire"))
        .args(["serve", "--port", "0", "--data-dir"])
        .arg(&data)
        .arg("--socket")
        .arg(&sock)
        .args([
            "--set",
            "innodb_buffer_pool_size=8M",
            "--set",
            "innodb_log_file_size=8M",
            "--set",
            "innodb_flush_method=fsync",
            "--set",
            "max_connections=10",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .expect("start quire serve");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    // "quire: ready for connections on 127.0.0.1:PORT"
    let addr = loop {
        let line = lines
            .next()
            .expect("serve exited early")
            .expect("read stderr");
        if let Some(a) = line.strip_prefix("quire: ready for connections on 127.0.0.1:") {
            break format!("127.0.0.1:{a}");
        }
    };
    // The greeting arrives: protocol 10 and the server version.
    let mut c = TcpStream::connect(&addr).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut greeting = [0u8; 512];
    let n = c.read(&mut greeting).expect("greeting");
    assert!(n > 10);
    assert_eq!(greeting[4], 10);
    assert!(greeting[5..n].starts_with(b"5.5.5-10.11.99-MariaDB-Quire"));
    assert!(sock.exists());

    // SAFETY: sending a signal to our own child.
    let pid = i32::try_from(child.id()).expect("pid");
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "quire serve did not exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(status.success(), "{status:?} {rest:?}");
    assert!(rest.iter().any(|l| l.contains("shutting down")), "{rest:?}");
    assert!(!sock.exists(), "the socket file is removed at shutdown");
    // The client connection was closed by the server (end of stream, not a timeout).
    let mut rest = Vec::new();
    match c.read_to_end(&mut rest) {
        Ok(_) => {}
        Err(e) => assert!(
            !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
            "{e}"
        ),
    }
}
