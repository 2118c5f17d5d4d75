//! `quire serve --set metrics_port=N`: `/metrics` answers in Prometheus's text format with
//! the engine's and the server's counters, typed; other paths are 404; the server still
//! shuts down cleanly with the metrics thread running.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn get(addr: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").expect("request");
    let mut out = String::new();
    s.read_to_string(&mut out).expect("response");
    out
}

#[test]
fn metrics_are_served_in_prometheus_format() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_quire"))
        .args(["serve", "--port", "0", "--data-dir"])
        .arg(dir.path().join("data"))
        .args([
            "--set",
            "metrics_port=0",
            "--set",
            "innodb_buffer_pool_size=8M",
            "--set",
            "innodb_log_file_size=8M",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .expect("start");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let addr = loop {
        let line = lines.next().expect("serve exited early").expect("read");
        if let Some(rest) = line.strip_prefix("quire: metrics on http://") {
            break rest.trim_end_matches("/metrics").to_string();
        }
    };
    let r = get(&addr, "/metrics");
    assert!(r.starts_with("HTTP/1.1 200 OK"), "{r}");
    assert!(r.contains("Content-Type: text/plain; version=0.0.4"), "{r}");
    for want in [
        "# TYPE quire_innodb_buffer_pool_pages_total gauge\nquire_innodb_buffer_pool_pages_total 512\n",
        "# TYPE quire_innodb_history_list_length gauge\n",
        "# TYPE quire_innodb_os_log_written counter\n",
        "# TYPE quire_threads_connected gauge\nquire_threads_connected 0\n",
        "# TYPE quire_uptime counter\n",
    ] {
        assert!(r.contains(want), "missing {want:?} in {r}");
    }
    let r = get(&addr, "/other");
    assert!(r.starts_with("HTTP/1.1 404"), "{r}");
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
            "no exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
}
