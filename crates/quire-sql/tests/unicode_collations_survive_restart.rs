//! Tables in utf8mb4_unicode_ci and utf8mb4_unicode_520_ci read back the same after a
//! restart: the catalog keeps each column's collation (codes 2 and 3, docs/catalog.md), and
//! the indexes, built from the collations' sort keys, still find, order and refuse the same
//! strings. A table's default collation that no column says is kept too.

use quire_engine::config::Config;
use quire_engine::table::Db;
mod common;

use common::{run, try_run};
use quire_sql::{Instance, Session, SqlError, Value};

/// The error `sql` fails with, if it fails.
fn error_of(s: &mut Session<'_>, sql: &str) -> Option<SqlError> {
    try_run(s, sql).err()
}

/// What the tables hold and how they answer, read the same before and after the restart.
fn answers(s: &mut Session<'_>) -> Vec<Vec<Vec<Value>>> {
    [
        "SHOW CREATE TABLE u",
        "SHOW CREATE TABLE v",
        "SHOW CREATE TABLE n",
        "SELECT id FROM u ORDER BY s, id",
        "SELECT id FROM u WHERE s = 'STRASSE' ORDER BY id",
        "SELECT id FROM v ORDER BY s, id",
        "SELECT id FROM v WHERE s = 'ae' ORDER BY id",
        "SELECT COLUMN_NAME, COLLATION_NAME FROM information_schema.COLUMNS \
         WHERE TABLE_SCHEMA = 'a' ORDER BY TABLE_NAME, ORDINAL_POSITION",
    ]
    .into_iter()
    .map(|q| run(s, q))
    .collect()
}

#[test]
fn unicode_collated_tables_read_back_the_same_after_a_restart() {
    let dir = tempfile::tempdir().expect("tmp");
    let before = {
        let db = Db::open(dir.path(), Config::default()).expect("open");
        let before = {
            let inst = Instance::new(&db);
            let mut s = inst.session("root", "localhost");
            run(&mut s, "CREATE DATABASE a");
            run(&mut s, "USE a");
            run(
                &mut s,
                "CREATE TABLE u (id INT PRIMARY KEY, s VARCHAR(20), UNIQUE KEY k (s)) \
                 COLLATE utf8mb4_unicode_ci",
            );
            run(
                &mut s,
                "CREATE TABLE v (id INT PRIMARY KEY, s VARCHAR(20) COLLATE utf8mb4_unicode_520_ci, \
                 t VARCHAR(20), KEY k (s))",
            );
            // No string column says this table's default: the catalog keeps it.
            run(
                &mut s,
                "CREATE TABLE n (id INT PRIMARY KEY) COLLATE utf8mb4_unicode_520_ci",
            );
            run(
                &mut s,
                "INSERT INTO u VALUES (1, 'Straße'), (2, 'strasbourg'), (3, 'æble'), (4, 'Zebra'), \
                 (5, '中文'), (6, '😀')",
            );
            run(
                &mut s,
                "INSERT INTO v VALUES (1, 'Æ', 'x'), (2, 'ae', 'y'), (3, '😀', 'z'), (4, '😁', 'w')",
            );
            answers(&mut s)
        };
        db.shutdown().expect("shutdown");
        before
    };
    let db = Db::open(dir.path(), Config::default()).expect("reopen");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        run(&mut s, "USE a");
        let after = answers(&mut s);
        assert_eq!(before, after);
        // What the answers were, so that the comparison is not of two empty results.
        assert_eq!(
            after[4],
            vec![vec![Value::Int(1)]],
            "'Straße' = 'STRASSE' in unicode_ci"
        );
        assert_eq!(
            after[6],
            vec![vec![Value::Int(1)], vec![Value::Int(2)]],
            "'Æ' = 'ae' in unicode_520_ci"
        );
        let Value::Str(n) = &after[2][0][1] else {
            panic!("SHOW CREATE TABLE n: {:?}", after[2]);
        };
        assert!(n.ends_with("COLLATE=utf8mb4_unicode_520_ci"), "{n}");
        run(&mut s, "ALTER TABLE n ADD COLUMN s VARCHAR(5)");
        run(&mut s, "INSERT INTO n VALUES (1, 'Æ')");
        assert_eq!(
            run(&mut s, "SELECT id FROM n WHERE s = 'AE'"),
            vec![vec![Value::Int(1)]],
            "a column added later takes the kept default"
        );
        // The unique index still refuses what equals a stored string in its collation.
        assert!(matches!(
            error_of(&mut s, "INSERT INTO u VALUES (7, 'STRASSE  ')"),
            Some(SqlError::DuplicateKey { .. })
        ));
        run(&mut s, "INSERT INTO u VALUES (8, 'strass')");
    }
    db.shutdown().expect("shutdown");
}
