//! Tables in utf8mb3, latin1 and ascii read back the same after a restart: the catalog keeps
//! each column's collation (codes 4..13, docs/catalog.md) and a table's default, the
//! indexes built from the latin1 weights still find, order and refuse the same strings, and
//! the stored values are still the '?'-converted ones.

mod common;

use common::{error_of, run, same_answers_after_restart};
use quire_sql::{SqlError, Value};

#[test]
fn latin1_utf8mb3_and_ascii_tables_read_back_the_same_after_a_restart() {
    let setup = [
        "CREATE DATABASE a",
        "CREATE DATABASE b CHARACTER SET latin1 COLLATE latin1_general_cs",
        "USE a",
        "CREATE TABLE l (id INT PRIMARY KEY, w VARCHAR(10), code CHAR(3) CHARACTER SET \
         ascii COLLATE ascii_bin, UNIQUE KEY k (w)) DEFAULT CHARSET=latin1",
        "CREATE TABLE u (id INT PRIMARY KEY, s VARCHAR(20) COLLATE utf8mb3_bin, KEY k (s)) \
         DEFAULT CHARSET=utf8",
        // No string column says this table's default: the catalog keeps it.
        "CREATE TABLE n (id INT PRIMARY KEY) DEFAULT CHARSET=latin1 COLLATE=latin1_general_cs",
        "SET sql_mode = ''",
        "INSERT INTO l VALUES (1, 'ü', 'AB'), (2, 'z', 'é'), (3, 'å', 'x'), (4, '€', NULL), \
         (5, 'a日', 'y')",
        "INSERT INTO u VALUES (1, 'b😀'), (2, 'B'), (3, 'ä'), (4, 'a')",
    ];
    // What the tables hold and how they answer, read the same before and after.
    let queries = [
        "SHOW CREATE TABLE l",
        "SHOW CREATE TABLE u",
        "SHOW CREATE TABLE n",
        "SELECT id FROM l ORDER BY w, id",
        "SELECT id FROM l WHERE w = 'Y' ORDER BY id",
        "SELECT id, HEX(w), LENGTH(w), code FROM l ORDER BY id",
        "SELECT id, s FROM u ORDER BY s, id",
        "SELECT COLUMN_NAME, CHARACTER_SET_NAME, COLLATION_NAME, CHARACTER_OCTET_LENGTH \
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'a' \
         ORDER BY TABLE_NAME, ORDINAL_POSITION",
    ];
    same_answers_after_restart(&setup, &["USE a"], &queries, |s, after| {
        // What the answers were, so that the comparison is not of two empty results.
        let ids =
            |rows: &[Vec<Value>]| -> Vec<Value> { rows.iter().map(|r| r[0].clone()).collect() };
        assert_eq!(
            ids(&after[3]),
            [5, 1, 2, 3, 4].map(Value::Int),
            "latin1_swedish_ci: 'a?' < 'ü' (as y) < 'z' < 'å' < '€'"
        );
        assert_eq!(
            ids(&after[4]),
            [Value::Int(1)],
            "'ü' = 'Y' in latin1_swedish_ci"
        );
        assert_eq!(
            after[5][1],
            vec![
                Value::Int(2),
                Value::Str("7A".into()),
                Value::Int(1),
                Value::Str("?".into())
            ],
            "'é' stored into ascii is '?'"
        );
        assert_eq!(
            after[5][3][1],
            Value::Str("80".into()),
            "€ is latin1 byte 0x80"
        );
        assert_eq!(
            after[6][0],
            vec![Value::Int(2), Value::Str("B".into())],
            "utf8mb3_bin: 'B' < 'a'"
        );
        assert_eq!(
            after[6][2][1],
            Value::Str("b?".into()),
            "😀 stored into utf8mb3 is '?'"
        );
        let Value::Str(n) = &after[2][0][1] else {
            panic!("SHOW CREATE TABLE n: {:?}", after[2]);
        };
        assert!(
            n.ends_with("DEFAULT CHARSET=latin1 COLLATE=latin1_general_cs"),
            "{n}"
        );
        run(s, "ALTER TABLE n ADD COLUMN s VARCHAR(5)");
        run(s, "INSERT INTO n VALUES (1, 'a'), (2, 'A')");
        assert_eq!(
            run(s, "SELECT id FROM n WHERE s = 'a'"),
            vec![vec![Value::Int(1)]],
            "a column added later takes the kept default, case-sensitive"
        );
        // The unique index still refuses what equals a stored string in latin1_swedish_ci.
        assert!(matches!(
            error_of(s, "INSERT INTO l VALUES (7, 'Y ', NULL)"),
            Some(SqlError::DuplicateKey { .. })
        ));
        run(s, "INSERT INTO l VALUES (8, 'x', NULL)");
        // The database's default is kept (a version-3 database record) and given to its
        // new tables.
        assert_eq!(
            run(s, "SHOW CREATE DATABASE b")[0][1],
            Value::Str(
                "CREATE DATABASE `b` /*!40100 DEFAULT CHARACTER SET latin1 COLLATE \
                     latin1_general_cs */"
                    .into()
            )
        );
        run(s, "CREATE TABLE b.t (s VARCHAR(3))");
        let Value::Str(t) = &run(s, "SHOW CREATE TABLE b.t")[0][1] else {
            panic!("SHOW CREATE TABLE b.t");
        };
        assert!(
            t.ends_with("DEFAULT CHARSET=latin1 COLLATE=latin1_general_cs"),
            "{t}"
        );
        assert_eq!(
            run(s, "SHOW CREATE DATABASE a")[0][1],
            Value::Str(
                "CREATE DATABASE `a` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE \
                     utf8mb4_general_ci */"
                    .into()
            ),
            "a database without its own default keeps the server's"
        );
    });
}
