//! Text INSERTs of literal rows run the plan of their shape (`shape.rs`: the text with its
//! literals as `?`, planned once per session). The plan must behave as the text would:
//! each text's own values, the table's definition after a DDL, the current database, the
//! current sql_mode, a temporary table that hides the base table, and the text's own
//! errors when the shape does not plan.

// SqlError is what the session returns; the tests pass it on as is.
#![allow(clippy::result_large_err)]

mod common;

use common::{run, try_run};
use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_sql::{Instance, Session, SqlError, Value};

fn rows(s: &mut Session<'_>, sql: &str) -> Vec<String> {
    run(s, sql)
        .iter()
        .map(|r| {
            r.iter()
                .map(|v| match v {
                    Value::Null => "NULL".to_string(),
                    Value::Str(x) => x.clone(),
                    Value::Int(i) => i.to_string(),
                    Value::UInt(u) => u.to_string(),
                    other => format!("{other:?}"),
                })
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

#[test]
fn each_text_of_a_shape_inserts_its_own_values_under_the_current_definitions() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), Config::default()).expect("open");
    let inst = Instance::new(&db);
    let mut s = inst.session("root", "localhost");
    run(&mut s, "CREATE DATABASE a");
    run(&mut s, "CREATE DATABASE b");
    run(
        &mut s,
        "CREATE TABLE a.t (id INT PRIMARY KEY, c VARCHAR(5))",
    );
    run(
        &mut s,
        "CREATE TABLE b.t (id INT PRIMARY KEY, c VARCHAR(5))",
    );
    run(&mut s, "USE a");

    // One shape, different values, quotes and NULL.
    run(&mut s, "INSERT INTO t (id, c) VALUES (1, 'x')");
    run(&mut s, "INSERT INTO t (id, c) VALUES (2, 'it''s')");
    run(&mut s, "INSERT INTO t (id, c) VALUES (-3, NULL)");
    assert_eq!(
        rows(&mut s, "SELECT id, c FROM t ORDER BY id"),
        ["-3|NULL", "1|x", "2|it's"]
    );

    // A duplicate is the text's own error, with its own value.
    let e = try_run(&mut s, "INSERT INTO t (id, c) VALUES (2, 'y')").expect_err("duplicate");
    assert!(
        matches!(&e, SqlError::DuplicateKey { value, .. } if value == "2"),
        "{e}"
    );

    // The current database: the same text now goes to b.t.
    run(&mut s, "USE b");
    run(&mut s, "INSERT INTO t (id, c) VALUES (1, 'b')");
    assert_eq!(rows(&mut s, "SELECT id, c FROM b.t"), ["1|b"]);
    run(&mut s, "USE a");

    // sql_mode: strict refuses a value too long, non-strict cuts it with a warning.
    let e = try_run(&mut s, "INSERT INTO t (id, c) VALUES (4, 'toolong')").expect_err("strict");
    assert!(matches!(e, SqlError::Raised { code: 1406, .. }), "{e:?}");
    run(&mut s, "SET sql_mode = ''");
    run(&mut s, "INSERT INTO t (id, c) VALUES (4, 'toolong')");
    assert_eq!(s.warning_count(), 1);
    assert_eq!(rows(&mut s, "SELECT c FROM t WHERE id = 4"), ["toolo"]);
    run(&mut s, "SET sql_mode = DEFAULT");

    // A DDL: a new column with a default is filled; a dropped one makes the shape wrong.
    run(&mut s, "ALTER TABLE t ADD COLUMN d INT NOT NULL DEFAULT 7");
    run(&mut s, "INSERT INTO t (id, c) VALUES (5, 'z')");
    assert_eq!(rows(&mut s, "SELECT d FROM t WHERE id = 5"), ["7"]);
    run(&mut s, "ALTER TABLE t DROP COLUMN c");
    let e = try_run(&mut s, "INSERT INTO t (id, c) VALUES (6, 'w')").expect_err("no column c");
    assert!(
        matches!(&e, SqlError::UnknownColumn { column, .. } if column == "c"),
        "{e}"
    );

    // A temporary table hides the base table of the same name.
    run(&mut s, "INSERT INTO t VALUES (10, 1)");
    run(
        &mut s,
        "CREATE TEMPORARY TABLE t (id INT PRIMARY KEY, d INT)",
    );
    run(&mut s, "INSERT INTO t VALUES (11, 2)");
    assert_eq!(rows(&mut s, "SELECT id FROM t"), ["11"]);
    run(&mut s, "DROP TEMPORARY TABLE t");
    assert_eq!(
        rows(&mut s, "SELECT id FROM t WHERE id >= 10 ORDER BY id"),
        ["10"]
    );

    // A table that does not exist: the text's own 1146, not the shape's.
    let e = try_run(&mut s, "INSERT INTO nope (id) VALUES (1)").expect_err("no table");
    assert!(
        matches!(&e, SqlError::NoSuchTable { db, table } if db == "a" && table == "nope"),
        "{e}"
    );
}

/// A long INSERT (over `shape::MAX_TEXT`) runs its first row's shape repeated for every row;
/// the same text behind a comment goes the full parser's way. Both must leave the same rows,
/// warnings (with their row numbers), errors and auto-increment values.
#[test]
fn a_long_insert_of_literal_rows_does_what_the_parsed_text_does() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), Config::default()).expect("open");
    let inst = Instance::new(&db);
    let mut s = inst.session("root", "localhost");
    run(&mut s, "CREATE DATABASE l");
    run(&mut s, "USE l");
    for t in ["fast", "slow"] {
        run(
            &mut s,
            &format!(
                "CREATE TABLE {t} (id INT AUTO_INCREMENT PRIMARY KEY, n TINYINT, c VARCHAR(8), \
                 d DECIMAL(5,2), UNIQUE KEY (c))"
            ),
        );
    }
    // 1500 rows: NULL ids (auto-increment), a TINYINT out of range, a string too long and
    // a DECIMAL rounded now and then, and quotes.
    let values = |bad_dup: bool| -> String {
        (0..1500)
            .map(|i| {
                let n = if i % 400 == 7 { 300 } else { i % 100 };
                let c = if i % 500 == 11 {
                    format!("'{i:04}-toolong'")
                } else if bad_dup && i == 900 {
                    "'k-0000'".to_string()
                } else {
                    format!("'k-{i:04}'")
                };
                let c = if i == 3 { "'it''s'".to_string() } else { c };
                format!("(NULL, {n}, {c}, {}.{:03})", i % 900, i % 1000)
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let both = |s: &mut Session<'_>, mode: &str, body: &str| -> [(String, Vec<String>); 2] {
        run(s, &format!("SET sql_mode = '{mode}'"));
        ["fast", "slow"].map(|t| {
            let prefix = if t == "slow" { "/* long way */ " } else { "" };
            let text = format!("{prefix}INSERT INTO {t} VALUES {body}");
            assert!(text.len() > 16 * 1024);
            let r = match try_run(s, &text) {
                Ok(_) => "ok".to_string(),
                Err(e) => format!("{e}"),
            };
            let w = rows(s, "SHOW WARNINGS");
            (r, w)
        })
    };
    // Not strict: warnings at their rows, every row in.
    let [f, w] = both(&mut s, "", &values(false));
    assert_eq!(f.0, "ok");
    assert_eq!(f, w);
    assert!(f.1.iter().any(|w| w.contains("at row 8")), "{:?}", f.1);
    // Strict: the first bad row is the statement's error, and no row of it stays.
    let [f, w] = both(
        &mut s,
        "STRICT_TRANS_TABLES",
        &values(false).replace("'k-", "'m-"),
    );
    assert_ne!(f.0, "ok");
    assert_eq!(f, w);
    // A duplicate of the unique key inside the text: 1062, the statement undone.
    let [f, w] = both(&mut s, "", &values(true).replace("'k-", "'z-"));
    assert!(f.0.contains("Duplicate"), "{}", f.0);
    assert_eq!(f, w);
    assert_eq!(
        rows(&mut s, "SELECT id, n, c, d FROM fast ORDER BY id"),
        rows(&mut s, "SELECT id, n, c, d FROM slow ORDER BY id")
    );
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM fast"), ["1500"]);
}
