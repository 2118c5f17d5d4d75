//! MariaDB's extended column metadata (docs/protocol.md, "Extended metadata"): a client
//! that leaves CLIENT_MYSQL clear and asks for MARIADB_CLIENT_EXTENDED_METADATA gets, in
//! every column definition, a block after org_name that says format `json` for what MariaDB
//! 10.11 marks so (measured with a raw-protocol probe), and an empty block otherwise. Node's
//! mysql2 parses such a column's text into objects; without the mark JSON comes back as
//! strings. A client that sets CLIENT_MYSQL gets no block at all.

#![allow(clippy::unwrap_used)]

mod common;

use common::{client_caps, Client, Reply, TestServer};
use mysql_common::constants::{CapabilityFlags, MariadbCapabilities};
use mysql_common::packets::AuthPlugin;
use quire_server::reply::Reader;

const EXT: MariadbCapabilities = MariadbCapabilities::MARIADB_CLIENT_EXTENDED_METADATA;

/// A client as MariaDB's connectors and Node's mysql2 connect to a MariaDB server.
fn mariadb_client(server: &TestServer, mariadb: MariadbCapabilities) -> Client {
    Client::connect_mariadb(
        server.addr,
        "root",
        "",
        None,
        AuthPlugin::MysqlNativePassword,
        client_caps() - CapabilityFlags::CLIENT_LONG_PASSWORD,
        mariadb,
    )
    .unwrap()
}

/// A column definition's name and, with `extended`, its extended metadata block; the
/// fixed part (0x0C and 12 bytes) must follow.
fn parse_definition(def: &[u8], extended: bool) -> (String, Option<Vec<u8>>) {
    let mut r = Reader::new(def);
    let mut strings = Vec::new();
    for _ in 0..6 {
        strings.push(r.lenenc_bytes().unwrap().to_vec());
    }
    let ext = extended.then(|| r.lenenc_bytes().unwrap().to_vec());
    assert_eq!(r.u8().unwrap(), 0x0C, "fixed part of {def:?}");
    assert!(r.remaining() >= 12, "{def:?}");
    (String::from_utf8(strings[4].clone()).unwrap(), ext)
}

/// The extended blocks of a text query's result columns, by name.
fn blocks(c: &mut Client, sql: &str) -> Vec<(String, Vec<u8>)> {
    let mut p = vec![0x03];
    p.extend_from_slice(sql.as_bytes());
    let first = c.command(&p);
    assert_eq!(Reply::parse(&first).err_code(), None, "{sql}");
    let rs = c.read_result_set(&first);
    rs.columns
        .iter()
        .map(|d| {
            let (name, ext) = parse_definition(d, true);
            (name, ext.unwrap())
        })
        .collect()
}

const JSON: &[u8] = b"\x01\x04json";

fn setup(c: &mut Client) {
    for sql in [
        "CREATE DATABASE e",
        "CREATE TABLE e.t (id INT PRIMARY KEY, j JSON, s TEXT)",
        "INSERT INTO e.t VALUES (1, '{\"a\": [1, 2]}', 'x')",
    ] {
        assert!(matches!(c.query(sql), Reply::Ok { .. }), "{sql}");
    }
}

#[test]
fn json_columns_and_json_functions_are_marked_json_and_nothing_else_is() {
    let server = TestServer::start();
    let mut c = mariadb_client(&server, EXT);
    setup(&mut c);
    let got = blocks(
        &mut c,
        "SELECT id, j, s, JSON_EXTRACT(j, '$.a') AS ex, j->'$.a' AS arrow, \
         JSON_UNQUOTE(JSON_EXTRACT(j, '$.a')) AS unq, j->>'$.a' AS arrow2, \
         JSON_OBJECT('k', id) AS obj, JSON_KEYS(j) AS keys_, JSON_TYPE(j) AS ty, \
         JSON_LENGTH(j) AS len, COALESCE(j) AS co, IFNULL(j, '{}') AS ifn, \
         IF(id > 0, j, NULL) AS iff, CONCAT(j) AS cat, MAX(j) AS mx FROM e.t",
    );
    let expect: &[(&str, &[u8])] = &[
        ("id", b""),
        ("j", JSON),
        ("s", b""),
        ("ex", JSON),
        ("arrow", JSON),
        ("unq", b""),
        ("arrow2", b""),
        ("obj", JSON),
        ("keys_", b""),
        ("ty", b""),
        ("len", b""),
        ("co", JSON),
        ("ifn", b""),
        ("iff", JSON),
        ("cat", b""),
        ("mx", JSON),
    ];
    let want: Vec<(String, Vec<u8>)> = expect
        .iter()
        .map(|(n, b)| (n.to_string(), b.to_vec()))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn the_mark_passes_through_derived_tables_views_and_unions() {
    let server = TestServer::start();
    let mut c = mariadb_client(&server, EXT);
    setup(&mut c);
    assert!(matches!(
        c.query("CREATE VIEW e.v AS SELECT j, s FROM e.t"),
        Reply::Ok { .. }
    ));
    for (sql, want) in [
        ("SELECT * FROM (SELECT j, s FROM e.t) d", vec![JSON, b""]),
        ("SELECT * FROM e.v", vec![JSON, b""]),
        ("SELECT j FROM e.t UNION SELECT j FROM e.t", vec![JSON]),
        ("SELECT (SELECT j FROM e.t LIMIT 1) AS sq", vec![JSON]),
    ] {
        let got: Vec<Vec<u8>> = blocks(&mut c, sql).into_iter().map(|(_, b)| b).collect();
        let want: Vec<Vec<u8>> = want.iter().map(|b| b.to_vec()).collect();
        assert_eq!(got, want, "{sql}");
    }
}

#[test]
fn prepared_statements_carry_the_block_in_every_definition() {
    let server = TestServer::start();
    let mut c = mariadb_client(&server, EXT);
    setup(&mut c);
    // COM_STMT_PREPARE: one parameter, two columns, each definition with its block.
    let ok = c.command(b"\x16SELECT j, id FROM e.t WHERE id = ?");
    assert_eq!(ok[0], 0, "{:?}", Reply::parse(&ok));
    let id = u32::from_le_bytes([ok[1], ok[2], ok[3], ok[4]]);
    let ncols = u16::from_le_bytes([ok[5], ok[6]]);
    let nparams = u16::from_le_bytes([ok[7], ok[8]]);
    assert_eq!((ncols, nparams), (2, 1));
    let param = c.io.read_message().unwrap();
    assert_eq!(parse_definition(&param, true).1.unwrap(), b"");
    let cols: Vec<Option<Vec<u8>>> = (0..ncols)
        .map(|_| parse_definition(&c.io.read_message().unwrap(), true).1)
        .collect();
    assert_eq!(cols, vec![Some(JSON.to_vec()), Some(Vec::new())]);
    // COM_STMT_EXECUTE with id = 1 (LONG): the binary result set's definitions too.
    let mut exec = vec![0x17];
    exec.extend_from_slice(&id.to_le_bytes());
    exec.push(0);
    exec.extend_from_slice(&1u32.to_le_bytes());
    exec.extend_from_slice(&[0, 1, 3, 0]);
    exec.extend_from_slice(&1i32.to_le_bytes());
    let first = c.command(&exec);
    assert_eq!(Reply::parse(&first).err_code(), None);
    let rs = c.read_result_set(&first);
    let ext: Vec<Vec<u8>> = rs
        .columns
        .iter()
        .map(|d| parse_definition(d, true).1.unwrap())
        .collect();
    assert_eq!(ext, vec![JSON.to_vec(), Vec::new()]);
    assert_eq!(rs.rows.len(), 1);
}

#[test]
fn com_field_list_carries_the_block() {
    let server = TestServer::start();
    let mut c = mariadb_client(&server, EXT);
    setup(&mut c);
    assert!(matches!(c.query("USE e"), Reply::Ok { .. }));
    c.send(b"\x04t\x00");
    let mut got = Vec::new();
    loop {
        let p = c.io.read_message().unwrap();
        if p[0] == 0xFE && p.len() < 0xFF_FFFF {
            break;
        }
        assert_ne!(p[0], 0xFF, "{:?}", Reply::parse(&p));
        got.push(parse_definition(&p, true));
    }
    let want = vec![
        ("id".to_string(), Some(Vec::new())),
        ("j".to_string(), Some(JSON.to_vec())),
        ("s".to_string(), Some(Vec::new())),
    ];
    assert_eq!(got, want);
}

#[test]
fn a_client_that_sets_client_mysql_or_asks_for_nothing_gets_no_block() {
    let server = TestServer::start();
    let mut setup_conn = server.connect();
    setup(&mut setup_conn);
    // MySQL's clients set CLIENT_MYSQL (LONG_PASSWORD): the extended bytes are not read.
    let mysql = Client::connect_mariadb(
        server.addr,
        "root",
        "",
        None,
        AuthPlugin::MysqlNativePassword,
        client_caps() | CapabilityFlags::CLIENT_LONG_PASSWORD,
        EXT,
    )
    .unwrap();
    // A MariaDB client that does not ask for extended metadata.
    let plain = mariadb_client(&server, MariadbCapabilities::MARIADB_CLIENT_PROGRESS);
    for mut c in [mysql, plain] {
        let first = c.command(b"\x03SELECT j, s FROM e.t");
        assert_eq!(Reply::parse(&first).err_code(), None);
        let rs = c.read_result_set(&first);
        for d in &rs.columns {
            // parse_definition asserts 0x0C right after org_name.
            assert_eq!(parse_definition(d, false).1, None);
        }
        assert_eq!(rs.rows.len(), 1);
    }
}
