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
