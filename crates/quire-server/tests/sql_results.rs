//! Result sets end to end, through the real SQL layer.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Client, Reply, TestServer};

/// The first packet of an answer must not be an error.
fn answered(first: &[u8], what: &str) {
    assert_eq!(Reply::parse(first).err_code(), None, "{what} failed");
}

#[test]
fn select_1_returns_a_text_result_set_ended_by_ok_fe() {
    let server = TestServer::start();
    let mut c = server.connect();
    let first = c.command(b"\x03SELECT 1");
    answered(&first, "queries");
    let rs = c.read_result_set(&first);
    assert_eq!(rs.columns.len(), 1);
    assert_eq!(rs.rows, vec![vec![1, b'1']]);
    assert!(matches!(rs.end, Reply::Ok { status, .. } if status & 0x0002 != 0));
    assert!(matches!(c.ping(), Reply::Ok { .. }));
}

#[test]
fn prepared_select_with_a_parameter_returns_a_binary_row() {
    let server = TestServer::start();
    let mut c = server.connect();
    let ok = c.command(b"\x16SELECT ?");
    answered(&ok, "prepared statements");
    assert_eq!(ok[0], 0x00, "{ok:?}");
    let id = u32::from_le_bytes([ok[1], ok[2], ok[3], ok[4]]);
    let ncols = u16::from_le_bytes([ok[5], ok[6]]);
    let nparams = u16::from_le_bytes([ok[7], ok[8]]);
    assert_eq!(nparams, 1);
    for _ in 0..(u32::from(ncols) + u32::from(nparams)) {
        c.io.read_message().unwrap();
    }
    // EXECUTE: flags 0, 1 iteration, no NULLs, types bound: LONGLONG 5.
    let mut exec = vec![0x17];
    exec.extend_from_slice(&id.to_le_bytes());
    exec.push(0);
    exec.extend_from_slice(&1u32.to_le_bytes());
    exec.extend_from_slice(&[0, 1, 8, 0]);
    exec.extend_from_slice(&5i64.to_le_bytes());
    let first = c.command(&exec);
    let rs = c.read_result_set(&first);
    assert_eq!(rs.rows.len(), 1);
    assert_eq!(rs.rows[0][0], 0x00, "binary row header");
    assert!(matches!(rs.end, Reply::Ok { .. }));
    // Again without rebinding the types: the server reuses them.
    let mut again = vec![0x17];
    again.extend_from_slice(&id.to_le_bytes());
    again.push(0);
    again.extend_from_slice(&1u32.to_le_bytes());
    again.extend_from_slice(&[0, 0]);
    again.extend_from_slice(&6i64.to_le_bytes());
    let first = c.command(&again);
    assert_eq!(c.read_result_set(&first).rows.len(), 1);
    // CLOSE (no reply), then the id is unknown.
    let mut close = vec![0x19];
    close.extend_from_slice(&id.to_le_bytes());
    c.send(&close);
    assert_eq!(Reply::parse(&c.command(&exec)).err_code(), Some(1243));
}

/// (type, length, flags, decimals) of a column definition whose names are short.
fn column_shape(def: &[u8]) -> (u8, u32, u16, u8) {
    let mut i = 0;
    for _ in 0..6 {
        i += 1 + usize::from(def[i]);
    }
    let f = &def[i + 1..];
    (
        f[6],
        u32::from_le_bytes([f[2], f[3], f[4], f[5]]),
        u16::from_le_bytes([f[7], f[8]]),
        f[9],
    )
}

/// A result column that is a bare `?` has the type the parameter was bound with, as
/// MariaDB sends it (mysql2 reads `SELECT ? AS v` with 1.25 bound as a number then).
#[test]
fn a_bare_parameter_column_has_the_bound_type() {
    let server = TestServer::start();
    let mut c = server.connect();
    let ok = c.command(b"\x16SELECT ? AS d, ? AS t, ? AS s, ? AS n, 1 AS k");
    answered(&ok, "prepared statements");
    let id = u32::from_le_bytes([ok[1], ok[2], ok[3], ok[4]]);
    let ncols = u16::from_le_bytes([ok[5], ok[6]]);
    let nparams = u16::from_le_bytes([ok[7], ok[8]]);
    for _ in 0..(u32::from(ncols) + u32::from(nparams)) {
        c.io.read_message().unwrap();
    }
    // DOUBLE 1.25, unsigned TINY 1, VARCHAR 'x', NULL (bit 3 of the NULL bitmap).
    let mut exec = vec![0x17];
    exec.extend_from_slice(&id.to_le_bytes());
    exec.push(0);
    exec.extend_from_slice(&1u32.to_le_bytes());
    exec.extend_from_slice(&[0b1000, 1, 5, 0, 1, 0x80, 15, 0, 6, 0]);
    exec.extend_from_slice(&1.25f64.to_le_bytes());
    exec.extend_from_slice(&[1, 1, b'x']);
    let first = c.command(&exec);
    answered(&first, "execute");
    let rs = c.read_result_set(&first);
    let types: Vec<_> = rs.columns.iter().map(|d| column_shape(d)).collect();
    assert_eq!(types[0], (5, 23, 129, 31), "DOUBLE");
    assert_eq!(types[1], (1, 4, 161, 0), "unsigned TINY");
    // A string and a NULL keep the planned column; so does an expression.
    assert_eq!(types[2].0, 253);
    assert_eq!(types[3].0, 253);
    assert_eq!(types[4].0, 3);
    // The row: header, NULL bitmap (column 3 is bit 5), the double's 8 bytes, the tiny's 1.
    let row = &rs.rows[0];
    assert_eq!(&row[..2], &[0x00, 0b10_0000]);
    assert_eq!(&row[2..10], &1.25f64.to_le_bytes());
    assert_eq!(row[10], 1);
}

#[test]
fn server_settings_show_in_the_variables() {
    let server = TestServer::start_with(quire_server::ServerConfig {
        max_connections: Some(17),
        max_allowed_packet: Some(1 << 20),
        ..quire_server::ServerConfig::default()
    });
    let mut c = server.connect();
    let first = c.command(b"\x03SELECT @@global.max_connections, @@max_allowed_packet");
    answered(&first, "queries");
    let rs = c.read_result_set(&first);
    assert_eq!(rs.rows, vec![b"\x0217\x071048576".to_vec()]);
}

/// A text row's values (each length-encoded, all shorter than 251 bytes here).
fn text_values(row: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < row.len() {
        let n = usize::from(row[i]);
        out.push(row[i + 1..i + 1 + n].to_vec());
        i += 1 + n;
    }
    out
}

#[test]
fn raw_bytes_quoted_into_a_query_are_stored_as_they_were_sent() {
    // What mysqlclient, go-sql-driver (interpolateParams) and Connector/J (client-side
    // prepared statements) send for a BLOB parameter: its bytes between quotes, escaped, as
    // a plain literal or after `_binary`. The statement text is not UTF-8.
    let server = TestServer::start();
    let mut c = server.connect();
    for sql in [
        &b"\x03CREATE DATABASE bin"[..],
        b"\x03CREATE TABLE bin.t (id INT PRIMARY KEY, b LONGBLOB)",
        b"\x03INSERT INTO bin.t VALUES (1, '\\0\xff\xfe\\'\\\\\\Z'), (2, _binary'\x80''\\\"\xc3'), (3, _binary X'41')",
    ] {
        assert!(matches!(c.command(sql).first(), Some(0x00)), "{sql:?}");
    }
    let first = c.command(b"\x03SELECT id, b, X'ff00' FROM bin.t ORDER BY id");
    answered(&first, "the select");
    let rs = c.read_result_set(&first);
    let rows: Vec<Vec<Vec<u8>>> = rs.rows.iter().map(|r| text_values(r)).collect();
    assert_eq!(
        rows,
        vec![
            vec![
                b"1".to_vec(),
                b"\x00\xff\xfe'\\\x1a".to_vec(),
                b"\xff\x00".to_vec()
            ],
            vec![b"2".to_vec(), b"\x80'\"\xc3".to_vec(), b"\xff\x00".to_vec()],
            vec![b"3".to_vec(), b"A".to_vec(), b"\xff\x00".to_vec()],
        ]
    );
    // The byte-string literal's column is binary (charset 63), so drivers give bytes.
    let def = &rs.columns[2];
    let charset_at = def.len() - 12;
    assert_eq!(
        u16::from_le_bytes([def[charset_at], def[charset_at + 1]]),
        63,
        "{def:?}"
    );
}

/// A column definition's (type, flags, charset).
fn column_type(def: &[u8]) -> (u8, u16, u16) {
    let at = def.len() - 12;
    (
        def[at + 6],
        u16::from_le_bytes([def[at + 7], def[at + 8]]),
        u16::from_le_bytes([def[at], def[at + 1]]),
    )
}

/// A column definition's length (display width, or bytes of the longest value).
fn column_length(def: &[u8]) -> u32 {
    let at = def.len() - 12;
    u32::from_le_bytes([def[at + 2], def[at + 3], def[at + 4], def[at + 5]])
}

#[test]
fn system_variables_read_as_mariadb_types_them() {
    // Drivers decode `SELECT @@max_allowed_packet` by its column type: PyMySQL gives an
    // int only for an integer column, sqlx's u64 needs BIGINT UNSIGNED.
    let server = TestServer::start();
    let mut c = server.connect();
    let first = c.command(
        b"\x03SELECT @@max_allowed_packet, @@autocommit, @@sql_mode, @@global.innodb_max_dirty_pages_pct, @@session.wait_timeout",
    );
    answered(&first, "the select");
    let rs = c.read_result_set(&first);
    let types: Vec<(u8, u16, u16)> = rs.columns.iter().map(|d| column_type(d)).collect();
    // LONGLONG UNSIGNED|BINARY, LONGLONG BINARY (a boolean), VARCHAR utf8mb4, DOUBLE BINARY.
    assert_eq!(
        types,
        vec![
            (8, 0xa0, 63),
            (8, 0x80, 63),
            (253, 0, 45),
            (5, 0x80, 63),
            (8, 0xa0, 63)
        ]
    );
    let row = text_values(&rs.rows[0]);
    assert_eq!(row[0], b"16777216");
    assert_eq!(row[3], b"90.000000");
    // MariaDB names the column as written.
    assert!(rs.columns[4]
        .windows(22)
        .any(|w| w == b"@@session.wait_timeout"));

    // The binary protocol sends the integer as 8 bytes.
    let ok = c.command(b"\x16SELECT @@max_allowed_packet");
    answered(&ok, "the prepare");
    let id = u32::from_le_bytes([ok[1], ok[2], ok[3], ok[4]]);
    c.io.read_message().unwrap();
    let mut exec = vec![0x17];
    exec.extend_from_slice(&id.to_le_bytes());
    exec.push(0);
    exec.extend_from_slice(&1u32.to_le_bytes());
    let first = c.command(&exec);
    let rs = c.read_result_set(&first);
    assert_eq!(
        rs.rows,
        vec![[&[0u8, 0][..], &16_777_216u64.to_le_bytes()].concat()]
    );
}

#[test]
fn length_reads_as_an_int_column() {
    // MariaDB types LENGTH() and CHAR_LENGTH() INT(10); PyMySQL, mysql2, Connector/J and
    // sqlx decode `SELECT LENGTH(blob)` by that type.
    let server = TestServer::start();
    let mut c = server.connect();
    let first = c.command(b"\x03SELECT LENGTH('h\xc3\xa9'), CHAR_LENGTH('h\xc3\xa9')");
    answered(&first, "the select");
    let rs = c.read_result_set(&first);
    let types: Vec<(u8, u16, u16)> = rs.columns.iter().map(|d| column_type(d)).collect();
    // BINARY and, of a literal, NOT NULL: 129, as MariaDB 10.11 sends them (measured).
    assert_eq!(types, vec![(3, 0x81, 63), (3, 0x81, 63)]);
    assert_eq!(text_values(&rs.rows[0]), vec![b"3".to_vec(), b"2".to_vec()]);
}

#[test]
fn enum_and_set_columns_are_strings_with_their_flags_in_both_protocols() {
    // MariaDB sends ENUM and SET as STRING with ENUM_FLAG (256) / SET_FLAG (2048) and the
    // longest text's length; SQLAlchemy and Connector/J read the flags.
    let server = TestServer::start();
    let mut c = server.connect();
    for sql in [
        "CREATE DATABASE es",
        "CREATE TABLE es.t (id INT PRIMARY KEY, e ENUM('small','large') NOT NULL, s SET('a','bc'))",
        "INSERT INTO es.t VALUES (1, 'LARGE', 'bc,a')",
    ] {
        assert!(matches!(c.query(sql), Reply::Ok { .. }), "{sql}");
    }
    let first = c.command(b"\x03SELECT e, s FROM es.t");
    answered(&first, "the select");
    let rs = c.read_result_set(&first);
    // MariaDB also sets NO_DEFAULT_VALUE (0x1000) on `e`, which Quire sends on no column
    // yet: it is masked out here.
    let types: Vec<(u8, u16, u16)> = rs
        .columns
        .iter()
        .map(|d| {
            let (t, f, cs) = column_type(d);
            (t, f & !0x1000, cs)
        })
        .collect();
    assert_eq!(types, vec![(254, 0x0101, 45), (254, 0x0800, 45)]);
    assert_eq!(column_length(&rs.columns[0]), 5 * 4);
    assert_eq!(column_length(&rs.columns[1]), 4 * 4);
    assert_eq!(
        text_values(&rs.rows[0]),
        vec![b"large".to_vec(), b"a,bc".to_vec()]
    );

    // A prepared statement's binary row: the texts as length-encoded strings.
    let ok = c.command(b"\x16SELECT e, s FROM es.t");
    answered(&ok, "the prepare");
    let id = u32::from_le_bytes([ok[1], ok[2], ok[3], ok[4]]);
    for _ in 0..2 {
        c.io.read_message().unwrap();
    }
    let mut exec = vec![0x17];
    exec.extend_from_slice(&id.to_le_bytes());
    exec.push(0);
    exec.extend_from_slice(&1u32.to_le_bytes());
    let first = c.command(&exec);
    let rs = c.read_result_set(&first);
    assert_eq!(rs.rows, vec![b"\x00\x00\x05large\x04a,bc".to_vec()]);
}

#[test]
fn year_and_json_columns_cross_both_protocols_as_mariadb_sends_them() {
    // YEAR is MYSQL_TYPE_YEAR (13), length 4, UNSIGNED | ZEROFILL, binary charset: text
    // "0000" for the zero year, a 2-byte integer in a binary row. JSON is a LONGTEXT.
    let server = TestServer::start();
    let mut c = server.connect();
    for sql in [
        "CREATE DATABASE yj",
        "CREATE TABLE yj.t (id INT PRIMARY KEY, y YEAR NOT NULL, j JSON)",
        "INSERT INTO yj.t VALUES (1, 0, '[1, {\"a\": null}]')",
    ] {
        assert!(matches!(c.query(sql), Reply::Ok { .. }), "{sql}");
    }
    // A prepared INSERT: YEAR bound as MYSQL_TYPE_YEAR, JSON as a string.
    let ok = c.command(b"\x16INSERT INTO yj.t VALUES (2, ?, ?)");
    answered(&ok, "the prepare");
    let id = u32::from_le_bytes([ok[1], ok[2], ok[3], ok[4]]);
    let nparams = u16::from_le_bytes([ok[7], ok[8]]);
    for _ in 0..nparams {
        c.io.read_message().unwrap();
    }
    let exec_with = |year: u16, json: &[u8]| {
        let mut exec = vec![0x17];
        exec.extend_from_slice(&id.to_le_bytes());
        exec.push(0);
        exec.extend_from_slice(&1u32.to_le_bytes());
        exec.extend_from_slice(&[0, 1, 13, 0, 253, 0]);
        exec.extend_from_slice(&year.to_le_bytes());
        exec.push(json.len() as u8);
        exec.extend_from_slice(json);
        exec
    };
    // Not JSON: 4025, the row is not stored.
    let bad = c.command(&exec_with(2024, b"{nope"));
    assert_eq!(Reply::parse(&bad).err_code(), Some(4025));
    assert!(matches!(
        Reply::parse(&c.command(&exec_with(2024, b"{\"k\": 2}"))),
        Reply::Ok { .. }
    ));

    let first = c.command(b"\x03SELECT y, j FROM yj.t ORDER BY id");
    answered(&first, "the select");
    let rs = c.read_result_set(&first);
    let types: Vec<(u8, u16, u16)> = rs.columns.iter().map(|d| column_type(d)).collect();
    // NOT NULL, UNSIGNED, ZEROFILL and NO_DEFAULT_VALUE (a NOT NULL column without a
    // DEFAULT): 4193, as MariaDB 10.11 sends it (measured).
    assert_eq!(types[0], (13, 0x0001 | 0x0020 | 0x0040 | 0x1000, 63));
    assert_eq!(types[1].0, 252);
    assert_eq!(
        text_values(&rs.rows[0]),
        vec![b"0000".to_vec(), b"[1, {\"a\": null}]".to_vec()]
    );
    assert_eq!(
        text_values(&rs.rows[1]),
        vec![b"2024".to_vec(), b"{\"k\": 2}".to_vec()]
    );

    // The binary row: header, NULL bitmap, YEAR as u16, JSON as a length-encoded string.
    let ok = c.command(b"\x16SELECT y, j FROM yj.t WHERE id = 2");
    answered(&ok, "the prepare");
    let id = u32::from_le_bytes([ok[1], ok[2], ok[3], ok[4]]);
    for _ in 0..2 {
        c.io.read_message().unwrap();
    }
    let mut exec = vec![0x17];
    exec.extend_from_slice(&id.to_le_bytes());
    exec.push(0);
    exec.extend_from_slice(&1u32.to_le_bytes());
    let first = c.command(&exec);
    let rs = c.read_result_set(&first);
    let mut want = vec![0x00, 0x00];
    want.extend_from_slice(&2024u16.to_le_bytes());
    want.push(8);
    want.extend_from_slice(b"{\"k\": 2}");
    assert_eq!(rs.rows, vec![want]);
}

/// COM_STMT_PREPARE of `sql`: the statement id (its parameter and column definitions read).
fn prepare(c: &mut common::Client, sql: &[u8]) -> u32 {
    let mut p = vec![0x16];
    p.extend_from_slice(sql);
    let ok = c.command(&p);
    answered(&ok, "prepare");
    let id = u32::from_le_bytes([ok[1], ok[2], ok[3], ok[4]]);
    let ncols = u16::from_le_bytes([ok[5], ok[6]]);
    let nparams = u16::from_le_bytes([ok[7], ok[8]]);
    for _ in 0..(u32::from(ncols) + u32::from(nparams)) {
        c.io.read_message().unwrap();
    }
    id
}

/// COM_STMT_EXECUTE of `id` with parameters of (wire type, bytes), each a lenenc string.
fn execute(c: &mut common::Client, id: u32, params: &[(u8, &[u8])]) -> Vec<u8> {
    let mut exec = vec![0x17];
    exec.extend_from_slice(&id.to_le_bytes());
    exec.push(0);
    exec.extend_from_slice(&1u32.to_le_bytes());
    exec.push(0); // NULL bitmap (up to 8 parameters)
    exec.push(1);
    for (ty, _) in params {
        exec.extend_from_slice(&[*ty, 0]);
    }
    for (_, v) in params {
        exec.push(v.len() as u8);
        exec.extend_from_slice(v);
    }
    c.command(&exec)
}

#[test]
fn a_latin1_connection_converts_prepared_parameters_and_binary_rows() {
    let server = TestServer::start();
    let mut c = server.connect();
    for sql in [
        "CREATE DATABASE l1",
        "CREATE TABLE l1.t (id INT PRIMARY KEY, s VARCHAR(10), b VARBINARY(10))",
        "SET NAMES latin1",
    ] {
        assert!(matches!(c.query(sql), Reply::Ok { .. }), "{sql}");
    }
    // The statement's own text is latin1 too (é in the literal).
    let ins = prepare(&mut c, b"INSERT INTO l1.t VALUES (?, CONCAT(?, '\xe9'), ?)");
    // VAR_STRING text in latin1 (0x80 is the euro sign), a BLOB's bytes kept as they are.
    let first = execute(
        &mut c,
        ins,
        &[(253, b"1"), (253, b"caf\xe9 \x80"), (252, b"\xe9\xff")],
    );
    assert!(
        matches!(Reply::parse(&first), Reply::Ok { .. }),
        "{first:?}"
    );
    let sel = prepare(&mut c, b"SELECT s, b FROM l1.t WHERE s LIKE ?");
    let first = execute(&mut c, sel, &[(253, b"caf\xe9%")]);
    let rs = c.read_result_set(&first);
    // Header, NULL bitmap, then s in latin1 and b untouched.
    assert_eq!(
        rs.rows,
        vec![b"\x00\x00\x07caf\xe9 \x80\xe9\x02\xe9\xff".to_vec()]
    );

    // A utf8mb4 connection reads the same row in UTF-8.
    let mut u = server.connect();
    let first = u.command(b"\x03SELECT s, HEX(b) FROM l1.t");
    let rs = u.read_result_set(&first);
    assert_eq!(
        rs.rows,
        vec![[&[11u8][..], "café €é".as_bytes(), b"\x04E9FF"].concat()]
    );
}

#[test]
fn time_and_bit_columns_cross_both_protocols_as_mariadb_sends_them() {
    // TIME is MYSQL_TYPE_TIME (11): `[-]HH:MM:SS.fff` in text, and in a binary row a
    // length (0, 8 or 12), then is_negative, days, hours (0..=23), minutes, seconds and
    // microseconds. BIT(M) is MYSQL_TYPE_BIT (16), length M, UNSIGNED, binary charset: its
    // big-endian bytes, ceil(M/8) of them, in both protocols. Flags as MariaDB 10.11 sends
    // them: BINARY on the TIME, UNSIGNED alone on the BIT.
    let server = TestServer::start();
    let mut c = server.connect();
    for sql in [
        "CREATE DATABASE tb",
        "CREATE TABLE tb.t (id INT PRIMARY KEY, t TIME(3), b BIT(12))",
        "INSERT INTO tb.t VALUES (1, '00:00:00', 0), (2, '838:59:59', 4095)",
    ] {
        assert!(matches!(c.query(sql), Reply::Ok { .. }), "{sql}");
    }
    // A prepared INSERT: -26:03:04.5 as MYSQL_TYPE_TIME, the BIT as a LONGLONG.
    let ins = prepare(&mut c, b"INSERT INTO tb.t VALUES (3, ?, ?)");
    let time = [1u8, 1, 0, 0, 0, 2, 3, 4, 0x20, 0xA1, 0x07, 0x00];
    let mut exec = vec![0x17];
    exec.extend_from_slice(&ins.to_le_bytes());
    exec.push(0);
    exec.extend_from_slice(&1u32.to_le_bytes());
    exec.extend_from_slice(&[0, 1, 11, 0, 8, 0x80]);
    exec.push(time.len() as u8);
    exec.extend_from_slice(&time);
    exec.extend_from_slice(&0xABCu64.to_le_bytes());
    assert!(
        matches!(Reply::parse(&c.command(&exec)), Reply::Ok { .. }),
        "the insert"
    );

    let first = c.command(b"\x03SELECT t, b FROM tb.t ORDER BY id");
    answered(&first, "the select");
    let rs = c.read_result_set(&first);
    let types: Vec<(u8, u16, u16)> = rs.columns.iter().map(|d| column_type(d)).collect();
    assert_eq!(types[0], (11, 0x0080, 63));
    assert_eq!(types[1], (16, 0x0020, 63));
    let rows: Vec<Vec<Vec<u8>>> = rs.rows.iter().map(|r| text_values(r)).collect();
    assert_eq!(
        rows,
        vec![
            vec![b"00:00:00.000".to_vec(), b"\x00\x00".to_vec()],
            vec![b"838:59:59.000".to_vec(), b"\x0f\xff".to_vec()],
            vec![b"-26:03:04.500".to_vec(), b"\x0a\xbc".to_vec()],
        ]
    );

    // Binary rows: header, NULL bitmap, the TIME, the BIT as a length-encoded string.
    let sel = prepare(&mut c, b"SELECT t, b FROM tb.t ORDER BY id");
    let mut exec = vec![0x17];
    exec.extend_from_slice(&sel.to_le_bytes());
    exec.push(0);
    exec.extend_from_slice(&1u32.to_le_bytes());
    let first = c.command(&exec);
    let rs = c.read_result_set(&first);
    let zero = vec![0x00, 0x00, 0, 2, 0, 0];
    let max = vec![0x00, 0x00, 8, 0, 34, 0, 0, 0, 22, 59, 59, 2, 0x0f, 0xff];
    let mut neg = vec![0x00, 0x00, 12];
    neg.extend_from_slice(&time);
    neg.extend_from_slice(&[2, 0x0a, 0xbc]);
    assert_eq!(rs.rows, vec![zero, max, neg]);
}

#[test]
fn a_prepared_insert_returning_announces_its_columns_and_answers_binary_rows() {
    let server = TestServer::start();
    let mut c = server.connect();
    for sql in [
        "CREATE DATABASE r",
        "CREATE TABLE r.t (id INT AUTO_INCREMENT PRIMARY KEY, s VARCHAR(5))",
    ] {
        assert!(matches!(c.query(sql), Reply::Ok { .. }), "{sql}");
    }
    // COM_STMT_PREPARE's answer counts RETURNING's columns, as a SELECT's (MariaDB does;
    // a client reads the result set's definitions from it).
    let ok = c.command(b"\x16INSERT INTO r.t (s) VALUES (?) RETURNING id, s");
    answered(&ok, "the prepare");
    let id = u32::from_le_bytes([ok[1], ok[2], ok[3], ok[4]]);
    assert_eq!(u16::from_le_bytes([ok[5], ok[6]]), 2, "columns");
    assert_eq!(u16::from_le_bytes([ok[7], ok[8]]), 1, "parameters");
    for _ in 0..3 {
        c.io.read_message().unwrap();
    }
    let first = execute(&mut c, id, &[(0xfd, b"abc")]);
    answered(&first, "the execute");
    let rs = c.read_result_set(&first);
    assert_eq!(rs.columns.len(), 2);
    // Binary row: header, NULL bitmap, id as a LONG, s as a length-encoded string.
    let mut want = vec![0x00, 0x00];
    want.extend_from_slice(&1i32.to_le_bytes());
    want.push(3);
    want.extend_from_slice(b"abc");
    assert_eq!(rs.rows, vec![want]);
    // DELETE … RETURNING likewise.
    let del = prepare(&mut c, b"DELETE FROM r.t WHERE s = ? RETURNING s");
    let first = execute(&mut c, del, &[(0xfd, b"abc")]);
    answered(&first, "the delete");
    assert_eq!(
        c.read_result_set(&first).rows,
        vec![vec![0x00, 0x00, 3, b'a', b'b', b'c']]
    );
}

#[test]
fn a_prepared_update_ignore_and_delete_ignore_keep_their_ignore() {
    let server = TestServer::start();
    let mut c = server.connect();
    for sql in [
        "CREATE DATABASE ui",
        "CREATE TABLE ui.t (id INT PRIMARY KEY, u INT UNIQUE)",
        "INSERT INTO ui.t VALUES (1, 10), (2, 20)",
        "CREATE TABLE ui.c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES ui.t (id))",
        "INSERT INTO ui.c VALUES (1, 1)",
    ] {
        let mut q = vec![0x03];
        q.extend_from_slice(sql.as_bytes());
        answered(&c.command(&q), sql);
    }
    // COM_STMT_PREPARE: the `?` after the blanked IGNORE are still the first and second.
    let up = prepare(&mut c, b"UPDATE IGNORE ui.t SET u = ? WHERE id = ?");
    // A duplicate of u = 10: the row stays, as MariaDB's, without a warning.
    let r = Reply::parse(&execute(&mut c, up, &[(253, b"10"), (253, b"2")]));
    assert!(
        matches!(&r, Reply::Ok { affected_rows: 0, warnings: 0, info, .. }
            if info.ends_with("Rows matched: 1  Changed: 0  Warnings: 0")),
        "{r:?}"
    );
    let r = Reply::parse(&execute(&mut c, up, &[(253, b"30"), (253, b"2")]));
    assert!(
        matches!(
            &r,
            Reply::Ok {
                affected_rows: 1,
                ..
            }
        ),
        "{r:?}"
    );
    // Row 1 is kept by its child (warning 1451), row 2 goes.
    let del = prepare(&mut c, b"DELETE IGNORE FROM ui.t WHERE id < ?");
    let r = Reply::parse(&execute(&mut c, del, &[(253, b"9")]));
    assert!(
        matches!(
            &r,
            Reply::Ok {
                affected_rows: 1,
                warnings: 1,
                ..
            }
        ),
        "{r:?}"
    );
}

#[test]
fn a_timestamp_crosses_the_binary_protocol_in_the_session_time_zone() {
    // A TIMESTAMP parameter (MYSQL_TYPE_TIMESTAMP, 7) is a local time of the session's
    // zone, and a binary row's TIMESTAMP is one too: written under +05:30, the instant
    // 2024-03-10 06:30:00 UTC reads back as 12:00 there and as 06:30 under +00:00
    // (docs/sql.md, "Time zones").
    let server = TestServer::start();
    let mut c = server.connect();
    for sql in [
        "CREATE DATABASE tzb",
        "CREATE TABLE tzb.t (id INT PRIMARY KEY, ts TIMESTAMP NULL, KEY (ts))",
        "SET time_zone = '+05:30'",
    ] {
        assert!(matches!(c.query(sql), Reply::Ok { .. }), "{sql}");
    }
    let at = |h: u8, m: u8| vec![0xE8u8, 0x07, 3, 10, h, m, 0];
    let ins = prepare(&mut c, b"INSERT INTO tzb.t VALUES (1, ?)");
    assert!(
        matches!(
            Reply::parse(&execute(&mut c, ins, &[(7, &at(12, 0))])),
            Reply::Ok { .. }
        ),
        "the insert"
    );
    let sel = prepare(
        &mut c,
        b"SELECT ts, UNIX_TIMESTAMP(ts) FROM tzb.t FORCE INDEX (ts) WHERE ts = ?",
    );
    // Header, NULL bitmap, the TIMESTAMP (7 bytes), UNIX_TIMESTAMP as 8 bytes.
    let row = |h: u8, m: u8| {
        let mut r = vec![0x00, 0x00, 7];
        r.extend_from_slice(&at(h, m));
        r.extend_from_slice(&1_710_052_200i64.to_le_bytes());
        r
    };
    let first = execute(&mut c, sel, &[(7, &at(12, 0))]);
    answered(&first, "the select at +05:30");
    assert_eq!(c.read_result_set(&first).rows, vec![row(12, 0)]);

    assert!(matches!(
        c.query("SET time_zone = '+00:00'"),
        Reply::Ok { .. }
    ));
    let first = execute(&mut c, sel, &[(7, &at(12, 0))]);
    assert!(
        c.read_result_set(&first).rows.is_empty(),
        "12:00 UTC is not the instant"
    );
    let first = execute(&mut c, sel, &[(7, &at(6, 30))]);
    assert_eq!(c.read_result_set(&first).rows, vec![row(6, 30)]);
}

/// (name, type, flags) of each column of a text result set (names shorter than 251 bytes).
fn named_types(rs: &common::ResultSet) -> Vec<(String, u8, u16)> {
    rs.columns
        .iter()
        .map(|d| {
            let mut r = quire_server::reply::Reader::new(d);
            for _ in 0..4 {
                r.lenenc_bytes().unwrap();
            }
            let name = String::from_utf8(r.lenenc_bytes().unwrap().to_vec()).unwrap();
            let (t, f, _) = column_type(d);
            (name, t, f)
        })
        .collect()
}

fn check_flags(c: &mut Client, sql: &str, want: &[(&str, u8, u16)]) {
    let mut p = vec![0x03];
    p.extend_from_slice(sql.as_bytes());
    let first = c.command(&p);
    answered(&first, sql);
    let rs = c.read_result_set(&first);
    let want: Vec<(String, u8, u16)> = want
        .iter()
        .map(|(n, t, f)| (n.to_string(), *t, *f))
        .collect();
    assert_eq!(named_types(&rs), want, "{sql}");
}

/// Column flags as MariaDB 10.11 sends them (every value below measured from it with a
/// raw-protocol probe): NOT_NULL, the key flags with PART_KEY, NO_DEFAULT_VALUE for a NOT
/// NULL column without a DEFAULT, BINARY for temporal types but not numbers, TIMESTAMP's
/// UNSIGNED, TIMESTAMP and ON_UPDATE_NOW flags, never NUM; and for an expression,
/// BINARY when it is of the binary set and NOT_NULL when it cannot be NULL.
#[test]
fn column_flags_are_mariadbs() {
    let server = TestServer::start();
    let mut c = server.connect();
    for sql in [
        "CREATE DATABASE f",
        "CREATE TABLE f.k (id INT AUTO_INCREMENT PRIMARY KEY, a INT NOT NULL DEFAULT 5, \
         b INT NOT NULL, c VARCHAR(10) NULL, d INT NOT NULL DEFAULT 0, \
         e TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, f2 VARCHAR(5) NOT NULL, KEY (c), \
         UNIQUE (b), KEY (a, d))",
        "CREATE TABLE f.m (a INT, b INT NOT NULL, t1 TIMESTAMP NULL, \
         t2 TIMESTAMP NOT NULL DEFAULT '2020-01-01 00:00:00', \
         t3 TIMESTAMP NOT NULL DEFAULT '2020-01-01 00:00:00' ON UPDATE CURRENT_TIMESTAMP, \
         dt DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP, y YEAR, bt BIT(3))",
        "INSERT INTO f.m (b) VALUES (1)",
    ] {
        assert!(matches!(c.query(sql), Reply::Ok { .. }), "{sql}");
    }
    check_flags(
        &mut c,
        "SELECT * FROM f.k",
        &[
            ("id", 3, 16899),
            ("a", 3, 16393),
            ("b", 3, 20485),
            ("c", 253, 16392),
            ("d", 3, 16385),
            ("e", 7, 1185),
            ("f2", 253, 4097),
        ],
    );
    check_flags(
        &mut c,
        "SELECT * FROM f.m",
        &[
            ("a", 3, 0),
            ("b", 3, 4097),
            ("t1", 7, 160),
            ("t2", 7, 161),
            ("t3", 7, 9377),
            ("dt", 12, 129),
            ("y", 13, 96),
            ("bt", 16, 32),
        ],
    );
    check_flags(
        &mut c,
        "SELECT 1, 1.5, 'a', NULL, NOW(), 'a' = 'b', a = 1, b = 1, a IS NULL, b % 2, b / 2, \
         b * 2, -a, a + b, COALESCE(a, b), IFNULL(a, b), IF(b, a, b), \
         CASE b WHEN 1 THEN 2 END, CASE b WHEN 1 THEN 2 ELSE 3 END, LENGTH(a), CONCAT(b), \
         b IN (1,2), GREATEST(b, 1), LEAST(a, 1), CAST(b AS SIGNED), b << 1, ROUND(b), PI(), \
         CURTIME() FROM f.m",
        &[
            ("1", 3, 129),
            ("1.5", 246, 129),
            ("a", 253, 1),
            ("NULL", 6, 128),
            ("NOW()", 12, 129),
            ("'a' = 'b'", 3, 129),
            ("a = 1", 3, 128),
            ("b = 1", 3, 129),
            ("a IS NULL", 3, 129),
            ("b % 2", 8, 128),
            ("b / 2", 246, 128),
            ("b * 2", 8, 129),
            ("-a", 8, 128),
            ("a + b", 8, 128),
            ("COALESCE(a, b)", 3, 129),
            ("IFNULL(a, b)", 3, 129),
            ("IF(b, a, b)", 3, 128),
            ("CASE b WHEN 1 THEN 2 END", 3, 128),
            ("CASE b WHEN 1 THEN 2 ELSE 3 END", 3, 129),
            ("LENGTH(a)", 3, 128),
            ("CONCAT(b)", 253, 0),
            ("b IN (1,2)", 3, 129),
            ("GREATEST(b, 1)", 3, 129),
            ("LEAST(a, 1)", 3, 128),
            ("CAST(b AS SIGNED)", 8, 129),
            ("b << 1", 8, 161),
            ("ROUND(b)", 3, 129),
            ("PI()", 5, 129),
            ("CURTIME()", 11, 129),
        ],
    );
    // Implicitly grouped: one row even of no rows, so `b` may be NULL (its other flags
    // stay); COUNT never is.
    check_flags(
        &mut c,
        "SELECT COUNT(*), SUM(b), MAX(b), b FROM f.m",
        &[
            ("COUNT(*)", 8, 129),
            ("SUM(b)", 246, 128),
            ("MAX(b)", 3, 128),
            ("b", 3, 4096),
        ],
    );
}

/// A LEFT JOIN's inner side may give NULLs: its columns lose NOT_NULL and keep the rest
/// (MariaDB 10.11, measured: 4097 on the outer side, 4096 on the inner).
#[test]
fn an_outer_joins_inner_side_is_not_flagged_not_null() {
    let server = TestServer::start();
    let mut c = server.connect();
    for sql in [
        "CREATE DATABASE oj",
        "CREATE TABLE oj.t (id INT PRIMARY KEY, b INT NOT NULL)",
        "INSERT INTO oj.t VALUES (1, 1)",
    ] {
        assert!(matches!(c.query(sql), Reply::Ok { .. }), "{sql}");
    }
    check_flags(
        &mut c,
        "SELECT x.b, y.b FROM oj.t x LEFT JOIN oj.t y ON x.id = y.id + 100",
        &[("b", 3, 4097), ("b", 3, 4096)],
    );
    check_flags(
        &mut c,
        "SELECT x.b, y.b FROM oj.t y RIGHT JOIN oj.t x ON x.id = y.id + 100",
        &[("b", 3, 4097), ("b", 3, 4096)],
    );
}

#[test]
fn zerofill_columns_are_padded_in_text_rows_and_sent_as_numbers_in_binary_rows() {
    // An INT(4) ZEROFILL column: length 4 (its display width), UNSIGNED | ZEROFILL; the
    // text row pads to 0042, the binary row sends the number (the client pads, as with
    // MariaDB). A TINYINT(1) is length 1, which Connector/J reads as a boolean.
    let server = TestServer::start();
    let mut c = server.connect();
    for sql in [
        "CREATE DATABASE zf",
        "CREATE TABLE zf.t (id INT PRIMARY KEY, z INT(4) ZEROFILL, b TINYINT(1))",
        "INSERT INTO zf.t VALUES (1, 42, 1), (2, 123456, 0)",
    ] {
        assert!(matches!(c.query(sql), Reply::Ok { .. }), "{sql}");
    }
    let first = c.command(b"\x03SELECT z, b, z + 0 FROM zf.t ORDER BY id");
    answered(&first, "the select");
    let rs = c.read_result_set(&first);
    let (ty, flags, _) = column_type(&rs.columns[0]);
    assert_eq!(
        (ty, column_length(&rs.columns[0])),
        (3, 4),
        "LONG, length 4"
    );
    assert_eq!(
        flags & (0x0020 | 0x0040),
        0x0020 | 0x0040,
        "UNSIGNED | ZEROFILL"
    );
    assert_eq!(
        (column_type(&rs.columns[1]).0, column_length(&rs.columns[1])),
        (1, 1)
    );
    assert_eq!(
        column_type(&rs.columns[2]).1 & 0x0040,
        0,
        "z + 0 is no ZEROFILL"
    );
    assert_eq!(
        text_values(&rs.rows[0]),
        vec![b"0042".to_vec(), b"1".to_vec(), b"42".to_vec()]
    );
    assert_eq!(text_values(&rs.rows[1])[0], b"123456".to_vec());

    let id = prepare(&mut c, b"SELECT z FROM zf.t WHERE id = 1");
    let mut exec = vec![0x17];
    exec.extend_from_slice(&id.to_le_bytes());
    exec.push(0);
    exec.extend_from_slice(&1u32.to_le_bytes());
    let first = c.command(&exec);
    let rs = c.read_result_set(&first);
    let mut want = vec![0x00, 0x00];
    want.extend_from_slice(&42u32.to_le_bytes());
    assert_eq!(rs.rows, vec![want]);
}

#[test]
fn an_ascii_connection_reads_text_columns_in_ascii() {
    // `SET NAMES ascii` (go-sql-driver's `charset=ascii`): text columns are described as
    // character set 11 (ascii_general_ci), one byte per character, and a character ascii
    // does not hold is sent as `?`; binary columns stay as they are.
    let server = TestServer::start();
    let mut c = server.connect();
    for sql in [
        "CREATE DATABASE a1",
        "CREATE TABLE a1.t (id INT PRIMARY KEY, s VARCHAR(10), b VARBINARY(10))",
        "INSERT INTO a1.t VALUES (1, 'café', X'E9FF')",
        "SET NAMES ascii",
    ] {
        assert!(matches!(c.query(sql), Reply::Ok { .. }), "{sql}");
    }
    let first = c.command(b"\x03SELECT @@character_set_connection, s, b FROM a1.t");
    answered(&first, "the select");
    let rs = c.read_result_set(&first);
    assert_eq!(rs.rows, vec![b"\x05ascii\x04caf?\x02\xe9\xff".to_vec()]);
    let (_, _, charset) = column_type(&rs.columns[1]);
    assert_eq!(charset, 11, "ascii_general_ci");
    assert_eq!(
        column_length(&rs.columns[1]),
        10,
        "VARCHAR(10): ten one-byte characters"
    );
    assert_eq!(column_type(&rs.columns[2]).2, 63, "binary stays binary");
    // An ascii collation of another set is 1253, an unknown one 1273.
    assert_eq!(
        Reply::parse(&c.command(b"\x03SET NAMES ascii COLLATE latin1_bin")).err_code(),
        Some(1253)
    );
    assert_eq!(
        Reply::parse(&c.command(b"\x03SET NAMES ascii COLLATE ascii_nonesuch")).err_code(),
        Some(1273)
    );
    assert!(matches!(
        c.query("SET NAMES ascii COLLATE ascii_bin"),
        Reply::Ok { .. }
    ));
}
