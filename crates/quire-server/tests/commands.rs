//! The command phase through the SQL layer's interface: every command gets its reply, or
//! none where the protocol says none, and errors keep the connection usable.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Client, Reply, TestServer};

#[test]
fn ping_answers_ok_with_autocommit_status() {
    let server = TestServer::start();
    let mut c = server.connect();
    match c.ping() {
        Reply::Ok {
            affected_rows,
            status,
            ..
        } => {
            assert_eq!(affected_rows, 0);
            assert_eq!(status & 0x0002, 0x0002);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn query_error_is_answered_and_the_connection_stays_usable() {
    let server = TestServer::start();
    let mut c = server.connect();
    // Whatever the SQL layer answers (an error from the stub today, rows later), the
    // reply is a well-formed packet and the next command works.
    let r = c.query("SELECT nonsense FROM nowhere_at_all");
    assert!(matches!(r, Reply::Err { .. }), "{r:?}");
    if let Reply::Err { state, .. } = &r {
        assert_eq!(state.len(), 5);
    }
    assert!(matches!(c.ping(), Reply::Ok { .. }));
}

#[test]
fn unknown_command_gets_1047() {
    let server = TestServer::start();
    let mut c = server.connect();
    match Reply::parse(&c.command(&[0x63])) {
        Reply::Err { code, state, .. } => {
            assert_eq!(code, 1047);
            assert_eq!(state, "08S01");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(Reply::parse(&c.command(&[])).err_code(), Some(1047));
    assert!(matches!(c.ping(), Reply::Ok { .. }));
}

#[test]
fn unknown_statement_id_gets_1243() {
    let server = TestServer::start();
    let mut c = server.connect();
    // COM_STMT_EXECUTE of id 77: flags 0, iteration count 1.
    let mut exec = vec![0x17];
    exec.extend_from_slice(&77u32.to_le_bytes());
    exec.push(0);
    exec.extend_from_slice(&1u32.to_le_bytes());
    match Reply::parse(&c.command(&exec)) {
        Reply::Err {
            code,
            state,
            message,
        } => {
            assert_eq!(code, 1243);
            assert_eq!(state, "HY000");
            assert!(message.contains("(77)"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    // COM_STMT_RESET and COM_STMT_FETCH of an unknown id: 1243 too.
    let mut reset = vec![0x1A];
    reset.extend_from_slice(&77u32.to_le_bytes());
    assert_eq!(Reply::parse(&c.command(&reset)).err_code(), Some(1243));
    let mut fetch = vec![0x1C];
    fetch.extend_from_slice(&77u32.to_le_bytes());
    fetch.extend_from_slice(&10u32.to_le_bytes());
    assert_eq!(Reply::parse(&c.command(&fetch)).err_code(), Some(1243));
    assert!(matches!(c.ping(), Reply::Ok { .. }));
}

#[test]
fn stmt_close_and_send_long_data_get_no_reply() {
    let server = TestServer::start();
    let mut c = server.connect();
    let mut close = vec![0x19];
    close.extend_from_slice(&5u32.to_le_bytes());
    c.send(&close);
    let mut long = vec![0x18];
    long.extend_from_slice(&5u32.to_le_bytes());
    long.extend_from_slice(&0u16.to_le_bytes());
    long.extend_from_slice(b"some data");
    c.send(&long);
    // The next reply read is the ping's: nothing was sent for the two above.
    assert!(matches!(c.ping(), Reply::Ok { .. }));
}

#[test]
fn prepare_error_is_answered() {
    let server = TestServer::start();
    let mut c = server.connect();
    let mut p = vec![0x16];
    p.extend_from_slice(b"SELECT ?");
    let r = Reply::parse(&c.command(&p));
    // Today's stub refuses prepared statements (1235); the real layer answers
    // COM_STMT_PREPARE_OK (header 0x00 followed by a statement id).
    match r {
        Reply::Err { code, .. } => assert_eq!(code, 1235),
        Reply::Ok { .. } | Reply::Other(_) => {}
    }
}

#[test]
fn init_db_of_unknown_database_gets_1049() {
    let server = TestServer::start();
    let mut c = server.connect();
    let mut p = vec![0x02];
    p.extend_from_slice(b"nope");
    assert_eq!(Reply::parse(&c.command(&p)).err_code(), Some(1049));
    assert!(matches!(c.ping(), Reply::Ok { .. }));
}

#[test]
fn field_list_of_missing_table_gets_1146() {
    let server = TestServer::start();
    let mut c = server.connect();
    let mut p = vec![0x04];
    p.extend_from_slice(b"t\0");
    // No database selected: 1046, as MariaDB answers.
    assert_eq!(Reply::parse(&c.command(&p)).err_code(), Some(1046));
    assert_eq!(c.query("CREATE DATABASE fl").err_code(), None);
    let mut init = vec![0x02];
    init.extend_from_slice(b"fl");
    assert_eq!(Reply::parse(&c.command(&init)).err_code(), None);
    assert_eq!(Reply::parse(&c.command(&p)).err_code(), Some(1146));
}

#[test]
fn statistics_answers_with_plain_text() {
    let server = TestServer::start();
    let mut c = server.connect();
    let text = String::from_utf8(c.command(&[0x09])).unwrap();
    assert!(text.starts_with("Uptime: "), "{text}");
}

#[test]
fn set_option_and_reset_connection_answer() {
    let server = TestServer::start();
    let mut c = server.connect();
    // Multi-statements on, then off: with DEPRECATE_EOF the answer is an OK with 0xFE.
    for opt in [0u16, 1u16] {
        let mut p = vec![0x1B];
        p.extend_from_slice(&opt.to_le_bytes());
        let r = c.command(&p);
        assert_eq!(r[0], 0xFE, "{r:?}");
    }
    let mut bad = vec![0x1B];
    bad.extend_from_slice(&9u16.to_le_bytes());
    assert_eq!(Reply::parse(&c.command(&bad)).err_code(), Some(1047));
    assert!(matches!(
        Reply::parse(&c.command(&[0x1F])),
        Reply::Ok { .. }
    ));
}

#[test]
fn quit_closes_the_connection() {
    let server = TestServer::start();
    let mut c = server.connect();
    c.send(&[0x01]);
    assert!(c.io.read_message().is_err());
}

/// A text-protocol row's first column (length-prefixed; short values here).
fn first_cell(row: &[u8]) -> Option<String> {
    match row.first() {
        Some(0xFB) => None,
        Some(&n) => Some(String::from_utf8_lossy(&row[1..=usize::from(n)]).into_owned()),
        None => None,
    }
}

fn select_one(c: &mut Client, sql: &str) -> Option<String> {
    let mut p = vec![0x03];
    p.extend_from_slice(sql.as_bytes());
    let first = c.command(&p);
    assert_eq!(Reply::parse(&first).err_code(), None, "{sql}");
    let rs = c.read_result_set(&first);
    assert_eq!(rs.rows.len(), 1, "{sql}");
    first_cell(&rs.rows[0])
}

#[test]
fn reset_connection_starts_the_session_over_in_its_database() {
    let server = TestServer::start();
    let mut c = server.connect();
    for sql in [
        "CREATE DATABASE r",
        "USE r",
        "CREATE TABLE t (id INT PRIMARY KEY)",
        "SET @x = 5",
        "SET SESSION sql_mode = 'ANSI_QUOTES'",
        "CREATE TEMPORARY TABLE tmp (a INT)",
        "BEGIN",
        "INSERT INTO t VALUES (1)",
    ] {
        assert_eq!(c.query(sql).err_code(), None, "{sql}");
    }
    match Reply::parse(&c.command(&[0x1F])) {
        // The transaction is over: no IN_TRANS in the status.
        Reply::Ok { status, .. } => assert_eq!(status & 0x0001, 0),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        select_one(&mut c, "SELECT DATABASE()").as_deref(),
        Some("r")
    );
    assert_eq!(select_one(&mut c, "SELECT @x"), None);
    assert_eq!(
        select_one(&mut c, "SELECT @@session.sql_mode = @@global.sql_mode").as_deref(),
        Some("1")
    );
    assert_eq!(c.query("SELECT * FROM tmp").err_code(), Some(1146));
    assert_eq!(
        select_one(&mut c, "SELECT COUNT(*) FROM t").as_deref(),
        Some("0")
    );
}

#[test]
fn multi_statements_answer_each_statement_and_stop_at_the_first_error() {
    let server = TestServer::start();
    let mut c = server.connect();
    // Off (the test client does not ask for it): a second statement is a syntax error.
    assert_eq!(c.query("SELECT 1; SELECT 2").err_code(), Some(1064));
    let mut on = vec![0x1B];
    on.extend_from_slice(&0u16.to_le_bytes());
    assert_eq!(c.command(&on)[0], 0xFE);
    c.send(b"\x03SELECT 'a;b'; SET @z = 1; SELECT * FROM nowhere; SELECT 3");
    let first = c.io.read_message().unwrap();
    let rs = c.read_result_set(&first);
    assert_eq!(first_cell(&rs.rows[0]).as_deref(), Some("a;b"));
    match rs.end {
        Reply::Ok { status, .. } => assert_ne!(status & 0x0008, 0, "MORE_RESULTS_EXISTS"),
        other => panic!("{other:?}"),
    }
    match Reply::parse(&c.io.read_message().unwrap()) {
        Reply::Ok { status, .. } => assert_ne!(status & 0x0008, 0, "MORE_RESULTS_EXISTS"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        Reply::parse(&c.io.read_message().unwrap()).err_code(),
        Some(1046)
    );
    // Nothing follows the error: the next command's answer is the next packet.
    match c.ping() {
        Reply::Ok { status, .. } => assert_eq!(status & 0x0008, 0),
        other => panic!("{other:?}"),
    }
    // The last result carries no MORE_RESULTS_EXISTS.
    c.send(b"\x03SET @z = 1; SET @z = 2;");
    match Reply::parse(&c.io.read_message().unwrap()) {
        Reply::Ok { status, .. } => assert_ne!(status & 0x0008, 0),
        other => panic!("{other:?}"),
    }
    match Reply::parse(&c.io.read_message().unwrap()) {
        Reply::Ok { status, .. } => assert_eq!(status & 0x0008, 0),
        other => panic!("{other:?}"),
    }
    assert!(matches!(c.ping(), Reply::Ok { .. }));
}
