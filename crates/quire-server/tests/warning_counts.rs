//! The warning count a statement's last packet carries: the OK of a write (and its info
//! text), the OK 0xFE that ends a result set, and 0 for SHOW WARNINGS itself, which reads
//! the warnings without clearing them.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Client, Reply, TestServer};

/// The final packet of a query that returns a result set, and its rows.
fn select(c: &mut Client, sql: &str) -> (Reply, Vec<Vec<u8>>) {
    let mut p = vec![0x03];
    p.extend_from_slice(sql.as_bytes());
    let first = c.command(&p);
    assert_eq!(Reply::parse(&first).err_code(), None, "{sql}");
    let rs = c.read_result_set(&first);
    (rs.end, rs.rows)
}

fn warnings_of(r: &Reply) -> u16 {
    match r {
        Reply::Ok { warnings, .. } => *warnings,
        other => panic!("not an OK: {other:?}"),
    }
}

#[test]
fn ok_packets_carry_the_statements_warning_count() {
    let server = TestServer::start();
    let mut c = server.connect();
    for sql in [
        "CREATE DATABASE w",
        "USE w",
        "CREATE TABLE t (id INT PRIMARY KEY, d DECIMAL(5,2), c VARCHAR(3))",
    ] {
        assert!(
            matches!(c.query(sql), Reply::Ok { warnings: 0, .. }),
            "{sql}"
        );
    }
    // Two notes (DECIMAL rounded) in a two-row INSERT: the count and the info text.
    match c.query("INSERT INTO t VALUES (1, 1.005, 'a'), (2, 2.001, 'b')") {
        Reply::Ok { warnings, info, .. } => {
            assert_eq!(warnings, 2);
            assert_eq!(info, "Records: 2  Duplicates: 0  Warnings: 2");
        }
        other => panic!("{other:?}"),
    }
    // SHOW WARNINGS lists them and ends with a count of its own: 0.
    let (end, rows) = select(&mut c, "SHOW WARNINGS");
    assert_eq!(rows.len(), 2);
    assert_eq!(warnings_of(&end), 0);
    // Outside strict mode a value cut to fit is a warning, and the UPDATE's info says so.
    assert!(matches!(c.query("SET sql_mode = ''"), Reply::Ok { .. }));
    match c.query("UPDATE t SET c = 'toolong' WHERE id = 1") {
        Reply::Ok { warnings, info, .. } => {
            assert_eq!(warnings, 1);
            assert_eq!(info, "Rows matched: 1  Changed: 1  Warnings: 1");
        }
        other => panic!("{other:?}"),
    }
    // A DROP … IF EXISTS note.
    assert_eq!(
        warnings_of(&c.query("DROP TABLE IF EXISTS no_such_table")),
        1
    );
    assert_eq!(warnings_of(&c.query("SET sql_mode = DEFAULT")), 0);
}

#[test]
fn a_result_sets_end_carries_its_warnings_and_selecting_the_count_keeps_them() {
    let server = TestServer::start();
    let mut c = server.connect();
    let (end, _) = select(&mut c, "SELECT 1/0, 'abc' + 1");
    assert_eq!(warnings_of(&end), 2);
    // @@warning_count reads the last statement's; its own end says 0.
    let (end, rows) = select(&mut c, "SELECT @@warning_count");
    assert_eq!(warnings_of(&end), 0);
    assert_eq!(rows, vec![vec![1, b'2']]);
    let (_, rows) = select(&mut c, "SHOW WARNINGS");
    assert_eq!(rows.len(), 2);
    // An error replaces them, and the error is listed with its code.
    assert_eq!(c.query("SELECT nosuch").err_code(), Some(1054));
    let (_, rows) = select(&mut c, "SHOW ERRORS");
    assert_eq!(rows.len(), 1);
    assert!(
        rows[0].windows(4).any(|w| w == b"1054"),
        "{:?}",
        String::from_utf8_lossy(&rows[0])
    );
}
