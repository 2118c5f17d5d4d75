//! `/metrics` in Prometheus's text format on `--set metrics_port=N` (docs/metrics.md): the
//! same counters and gauges as SHOW GLOBAL STATUS, named `quire_<status name in lower case>`.
//!
//! A plain HTTP/1.0-style responder on its own listener and thread: one request per
//! connection, read with a short timeout, answered and closed. Anything but `GET /metrics`
//! (or `GET /`) is 404; a request line that does not arrive in time is dropped.

use std::io::{self, BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use quire_sql::Instance;

/// How long a scraper has to send its request line.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// The status names that go up and down; every other one only grows (a counter).
const GAUGES: &[&str] = &[
    "Innodb_history_list_length",
    "Innodb_row_lock_current_waits",
    "Innodb_checkpoint_age",
    "Innodb_buffer_pool_pages_total",
    "Innodb_buffer_pool_pages_free",
    "Innodb_buffer_pool_pages_data",
    "Innodb_buffer_pool_pages_dirty",
    "quire_trx_active",
    "quire_read_views_open",
    "quire_purge_batch_size_effective",
    "quire_purge_lag_delay_us",
    "Threads_connected",
    "Threads_running",
    "Max_used_connections",
    "Prepared_stmt_count",
];

/// The exposition text for `status` (name, value) pairs.
pub fn render(status: &[(String, u64)]) -> String {
    let mut out = String::with_capacity(status.len() * 96);
    let mut seen = std::collections::HashSet::new();
    for (name, value) in status {
        let metric = metric_name(name);
        // One sample per name: a repeated status name would make the scrape invalid.
        if !seen.insert(metric.clone()) {
            continue;
        }
        let kind = if GAUGES.contains(&name.as_str()) {
            "gauge"
        } else {
            "counter"
        };
        out.push_str(&format!(
            "# HELP {metric} SHOW GLOBAL STATUS {name}\n# TYPE {metric} {kind}\n{metric} {value}\n"
        ));
    }
    out
}

/// `Innodb_buffer_pool_pages_dirty` → `quire_innodb_buffer_pool_pages_dirty`; characters
/// Prometheus does not allow become `_`.
pub fn metric_name(status: &str) -> String {
    let lower = status.to_ascii_lowercase();
    let clean: String = lower
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if clean.starts_with("quire_") {
        clean
    } else {
        format!("quire_{clean}")
    }
}

/// Serves scrapes until `stop` is set (looked at between accepts, at least every 50 ms).
pub fn serve(listener: &TcpListener, instance: &Instance<'_>, stop: &dyn Fn() -> bool) {
    if let Err(e) = listener.set_nonblocking(true) {
        tracing::error!("metrics listener: {e}");
        return;
    }
    while !stop() {
        match listener.accept() {
            Ok((s, _)) => {
                if let Err(e) = answer(s, instance) {
                    tracing::debug!("metrics request: {e}");
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                use std::os::fd::AsRawFd;
                // A scrape is answered as it arrives; the timeout is only for `stop`.
                let fd = [listener.as_raw_fd()];
                if crate::listener::wait_readable(&fd, Duration::from_millis(50)).is_err() {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            Err(e) => {
                tracing::warn!("metrics accept: {e}");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

fn answer(s: TcpStream, instance: &Instance<'_>) -> io::Result<()> {
    s.set_nonblocking(false)?;
    s.set_read_timeout(Some(REQUEST_TIMEOUT))?;
    s.set_write_timeout(Some(REQUEST_TIMEOUT))?;
    // At most one request line's worth: a client cannot make this allocate without bound.
    let mut reader = BufReader::new(io::Read::take(s.try_clone()?, 8192));
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = path.split('?').next().unwrap_or("");
    let mut s = s;
    if method == "GET" && (path == "/metrics" || path == "/") {
        let body = render(&instance.global_status());
        write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )?;
    } else {
        let body = "not found: try /metrics\n";
        write!(
            s,
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        )?;
    }
    s.flush()
}

/// A flag and a closure over it, for [`serve`]'s `stop`.
pub fn stop_when<'a>(a: &'a AtomicBool, instance: &'a Instance<'_>) -> impl Fn() -> bool + 'a {
    move || a.load(Ordering::Acquire) || instance.shutdown_requested()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_becomes_typed_metrics_once_each() {
        let text = render(&[
            ("Innodb_buffer_pool_pages_dirty".into(), 7),
            ("Innodb_pages_written".into(), 42),
            ("quire_commits".into(), 3),
            ("quire_commits".into(), 9),
        ]);
        assert!(text.contains("# TYPE quire_innodb_buffer_pool_pages_dirty gauge\nquire_innodb_buffer_pool_pages_dirty 7\n"));
        assert!(text.contains(
            "# TYPE quire_innodb_pages_written counter\nquire_innodb_pages_written 42\n"
        ));
        let samples = text
            .lines()
            .filter(|l| l.starts_with("quire_commits "))
            .count();
        assert_eq!(samples, 1, "{text}");
        assert!(text.contains("quire_commits 3\n"));
        assert_eq!(metric_name("Ssl-x.y"), "quire_ssl_x_y");
    }
}
