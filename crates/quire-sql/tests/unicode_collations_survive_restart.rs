//! Tables in utf8mb4_unicode_ci and utf8mb4_unicode_520_ci read back the same after a
//! restart: the catalog keeps each column's collation (codes 2 and 3, docs/catalog.md), and
//! the indexes, built from the collations' sort keys, still find, order and refuse the same
//! strings. A table's default collation that no column says is kept too.

mod common;

use common::{error_of, run, same_answers_after_restart};
use quire_sql::{SqlError, Value};

#[test]
fn unicode_collated_tables_read_back_the_same_after_a_restart() {
    let setup = [
        "CREATE DATABASE a",
        "USE a",
        "CREATE TABLE u (id INT PRIMARY KEY, s VARCHAR(20), UNIQUE KEY k (s)) \
         COLLATE utf8mb4_unicode_ci",
        "CREATE TABLE v (id INT PRIMARY KEY, s VARCHAR(20) COLLATE utf8mb4_unicode_520_ci, \
         t VARCHAR(20), KEY k (s))",
        // No string column says this table's default: the catalog keeps it.
        "CREATE TABLE n (id INT PRIMARY KEY) COLLATE utf8mb4_unicode_520_ci",
        "INSERT INTO u VALUES (1, 'Straße'), (2, 'strasbourg'), (3, 'æble'), (4, 'Zebra'), \
         (5, '中文'), (6, '😀')",
        "INSERT INTO v VALUES (1, 'Æ', 'x'), (2, 'ae', 'y'), (3, '😀', 'z'), (4, '😁', 'w')",
    ];
    // What the tables hold and how they answer, read the same before and after.
    let queries = [
        "SHOW CREATE TABLE u",
        "SHOW CREATE TABLE v",
        "SHOW CREATE TABLE n",
        "SELECT id FROM u ORDER BY s, id",
        "SELECT id FROM u WHERE s = 'STRASSE' ORDER BY id",
        "SELECT id FROM v ORDER BY s, id",
        "SELECT id FROM v WHERE s = 'ae' ORDER BY id",
        "SELECT COLUMN_NAME, COLLATION_NAME FROM information_schema.COLUMNS \
         WHERE TABLE_SCHEMA = 'a' ORDER BY TABLE_NAME, ORDINAL_POSITION",
    ];
    same_answers_after_restart(&setup, &["USE a"], &queries, |s, after| {
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
        run(s, "ALTER TABLE n ADD COLUMN s VARCHAR(5)");
        run(s, "INSERT INTO n VALUES (1, 'Æ')");
        assert_eq!(
            run(s, "SELECT id FROM n WHERE s = 'AE'"),
            vec![vec![Value::Int(1)]],
            "a column added later takes the kept default"
        );
        // The unique index still refuses what equals a stored string in its collation.
        assert!(matches!(
            error_of(s, "INSERT INTO u VALUES (7, 'STRASSE  ')"),
            Some(SqlError::DuplicateKey { .. })
        ));
        run(s, "INSERT INTO u VALUES (8, 'strass')");
    });
}
