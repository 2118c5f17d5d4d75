//! LOAD DATA LOCAL INFILE over the wire (docs/protocol.md, "LOCAL INFILE"): the server asks
//! for the file with 0xFB, reads the client's packets as rows arrive (memory does not grow
//! with the file), answers after the empty packet; an error mid-file rolls every row back,
//! and the packets the client still sends are read before the ERR, so the connection goes
//! on. A client without CLIENT_LOCAL_FILES gets 4166 and no file request.

#![allow(clippy::unwrap_used)]

mod common;

use common::{client_caps, Client, Reply, TestServer};
use mysql_common::constants::CapabilityFlags;
use mysql_common::packets::AuthPlugin;

fn local_client(server: &TestServer) -> Client {
    Client::connect_with_caps(
        server.addr,
        "root",
        "",
        None,
        AuthPlugin::MysqlNativePassword,
        client_caps() | CapabilityFlags::CLIENT_LOCAL_FILES,
    )
    .unwrap()
}

fn ok(c: &mut Client, sql: &str) {
    let r = c.query(sql);
    assert!(matches!(r, Reply::Ok { .. }), "{sql}: {r:?}");
}

/// Sends LOAD DATA LOCAL, checks the 0xFB request names the file, then sends `rows`
/// rows made by `row` in packets of about 16 KiB (as the mariadb client does), the empty
/// packet, and returns the answer.
fn load(c: &mut Client, sql: &str, rows: u64, row: impl Fn(u64) -> String) -> Reply {
    let mut p = vec![0x03];
    p.extend_from_slice(sql.as_bytes());
    let req = c.command(&p);
    assert_eq!(req.first(), Some(&0xFB), "{:?}", Reply::parse(&req));
    assert_eq!(&req[1..], b"gen.tsv");
    let mut buf = Vec::with_capacity(17 << 10);
    for n in 1..=rows {
        buf.extend_from_slice(row(n).as_bytes());
        if buf.len() >= 16 << 10 {
            c.io.write_message(&buf).unwrap();
            buf.clear();
        }
    }
    if !buf.is_empty() {
        c.io.write_message(&buf).unwrap();
    }
    c.io.write_message(&[]).unwrap();
    c.io.flush().unwrap();
    Reply::parse(&c.io.read_message().unwrap())
}

/// The process's resident set now and at its peak, in KiB (/proc/self/status).
fn rss_kib() -> (u64, u64) {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let field = |name: &str| {
        s.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap()
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// A row of about 3 KB: `n`, `n % 10 000` and 3000 characters that vary with `n`.
fn wide_row(n: u64) -> String {
    let body: String = (0..260)
        .map(|i| format!("{:011}", (n * 7919 + i * 104_729) % 100_000_000_000))
        .collect::<Vec<_>>()
        .join("-");
    format!("{n}\t{}\t{}\n", n % 10_000, &body[..3000])
}

#[test]
fn a_large_local_file_streams_in_bounded_memory() {
    let server = TestServer::start();
    let mut c = local_client(&server);
    ok(&mut c, "CREATE DATABASE l");
    ok(&mut c, "USE l");
    ok(
        &mut c,
        "CREATE TABLE wide (id INT PRIMARY KEY, k INT NOT NULL, body VARCHAR(4000) NOT NULL, \
         KEY k (k))",
    );
    // Wide rows: the file's size is far above what the transaction keeps per row (a row
    // lock per key), so buffering the file would show in the resident set.
    let rows = 20_000u64;
    let bytes: u64 = (1..=rows).map(|n| wide_row(n).len() as u64).sum();
    assert!(
        bytes > 60_000_000,
        "the file should be large: {bytes} bytes"
    );
    let (before, _) = rss_kib();
    let r = load(
        &mut c,
        "LOAD DATA LOCAL INFILE 'gen.tsv' INTO TABLE wide",
        rows,
        wide_row,
    );
    let (_, peak) = rss_kib();
    match r {
        Reply::Ok {
            affected_rows,
            warnings,
            info,
            ..
        } => {
            assert_eq!(affected_rows, rows);
            assert_eq!(warnings, 0);
            assert!(
                info.ends_with(&format!(
                    "Records: {rows}  Deleted: 0  Skipped: 0  Warnings: 0"
                )),
                "{info}"
            );
        }
        other => panic!("{other:?}"),
    }
    let grown_kib = peak.saturating_sub(before);
    eprintln!("resident set grew by {grown_kib} KiB for a {bytes}-byte file");
    assert!(
        grown_kib * 1024 < bytes / 2,
        "resident set grew by {grown_kib} KiB for a {bytes}-byte file"
    );
    let rs = c.rows("SELECT COUNT(*), SUM(k), MAX(id), SUM(LENGTH(body)) FROM wide");
    let sum_k: u64 = (1..=rows).map(|n| n % 10_000).sum();
    assert_eq!(
        rs,
        vec![vec![
            rows.to_string(),
            sum_k.to_string(),
            rows.to_string(),
            (rows * 3000).to_string()
        ]]
    );
}

#[test]
fn an_error_mid_file_commits_nothing_and_the_connection_goes_on() {
    let server = TestServer::start();
    let mut c = local_client(&server);
    ok(&mut c, "CREATE DATABASE l");
    ok(&mut c, "USE l");
    ok(
        &mut c,
        "CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)",
    );
    // REPLACE: LOCAL's implied IGNORE is off, so strict mode makes row 5000's bad value
    // the statement's error while 15 000 more rows are still to come.
    let r = load(
        &mut c,
        "LOAD DATA LOCAL INFILE 'gen.tsv' REPLACE INTO TABLE t",
        20_000,
        |n| match n {
            5000 => "5000\tnot a number\n".to_string(),
            n => format!("{n}\t{}\n", n * 2),
        },
    );
    match r {
        Reply::Err { code, message, .. } => {
            assert_eq!(code, 1366);
            assert!(message.contains("at row 5000"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        c.rows("SELECT COUNT(*) FROM t"),
        vec![vec!["0".to_string()]]
    );
    assert!(matches!(c.ping(), Reply::Ok { .. }));
    // The same connection loads again.
    let r = load(
        &mut c,
        "LOAD DATA LOCAL INFILE 'gen.tsv' INTO TABLE t",
        10,
        |n| format!("{n}\t{n}\n"),
    );
    assert!(
        matches!(
            r,
            Reply::Ok {
                affected_rows: 10,
                ..
            }
        ),
        "{r:?}"
    );
}

#[test]
fn a_client_without_local_files_is_refused_without_a_request() {
    let server = TestServer::start();
    let mut c = server.connect();
    ok(&mut c, "CREATE DATABASE l");
    ok(&mut c, "USE l");
    ok(&mut c, "CREATE TABLE t (id INT PRIMARY KEY)");
    let r = c.query("LOAD DATA LOCAL INFILE 'gen.tsv' INTO TABLE t");
    assert_eq!(r.err_code(), Some(4166), "{r:?}");
    assert!(matches!(c.ping(), Reply::Ok { .. }));
}
