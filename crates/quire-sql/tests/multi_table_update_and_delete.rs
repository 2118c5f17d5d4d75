//! Multi-table UPDATE and DELETE (docs/sql.md, "Joins"): each matched row of a changed
//! table is changed once, counted as MySQL counts it, with exclusive locks on the changed
//! tables' rows and shared locks on the rows only read.

// SqlError is what the session returns; the tests pass it on as is.
#![allow(clippy::result_large_err)]

use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_sql::{CollectSink, Instance, Outcome, Session, SqlError, Value};

fn q(s: &mut Session<'_>, sql: &str) -> Result<Outcome, SqlError> {
    let mut c = CollectSink::default();
    s.query(sql, &mut c)
}

fn rows(s: &mut Session<'_>, sql: &str) -> Vec<Vec<Value>> {
    let mut c = CollectSink::default();
    s.query(sql, &mut c)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    c.rows
}

fn info(s: &mut Session<'_>, sql: &str) -> (u64, String) {
    match q(s, sql) {
        Ok(Outcome::Ok {
            affected_rows,
            info,
            ..
        }) => (affected_rows, info),
        other => panic!("{sql}: {other:?}"),
    }
}

fn with_tables(f: impl FnOnce(&Instance<'_>, &mut Session<'_>)) {
    let dir = tempfile::tempdir().expect("tmp");
    let mut config = Config::default();
    config
        .set("innodb_buffer_pool_size", "16M")
        .expect("setting");
    let db = Db::open(dir.path(), config).expect("open");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        for sql in [
            "CREATE DATABASE m",
            "USE m",
            "CREATE TABLE a (id INT PRIMARY KEY, x INT, name VARCHAR(10))",
            "CREATE TABLE b (id INT PRIMARY KEY, aid INT, y INT, KEY aid (aid))",
            "INSERT INTO a VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c')",
            "INSERT INTO b VALUES (1, 1, 100), (2, 1, 200), (3, 2, 300), (4, 9, 400)",
        ] {
            rows(&mut s, sql);
        }
        f(&inst, &mut s);
    }
    db.shutdown().expect("shutdown");
}

#[test]
fn a_row_matched_by_several_joined_rows_is_changed_once() {
    with_tables(|_, s| {
        // a1 matches b1 and b2: updated once, from the first (MariaDB: matched 2, changed 2).
        assert_eq!(
            info(s, "UPDATE a JOIN b ON b.aid = a.id SET a.x = b.y"),
            (2, "Rows matched: 2  Changed: 2  Warnings: 0".into())
        );
        assert_eq!(
            rows(s, "SELECT id, x FROM a ORDER BY id"),
            vec![
                vec![Value::Int(1), Value::Int(100)],
                vec![Value::Int(2), Value::Int(300)],
                vec![Value::Int(3), Value::Int(30)],
            ]
        );
        // Both tables: b's assignment sees a.x as read (MariaDB: matched 5, changed 3).
        assert_eq!(
            info(
                s,
                "UPDATE a JOIN b ON b.aid = a.id SET a.x = a.x + 1, b.y = a.x"
            ),
            (3, "Rows matched: 5  Changed: 3  Warnings: 0".into())
        );
        assert_eq!(
            rows(s, "SELECT y FROM b ORDER BY id"),
            vec![
                vec![Value::Int(100)],
                vec![Value::Int(100)],
                vec![Value::Int(300)],
                vec![Value::Int(400)],
            ]
        );
        // DELETE of both sides of the join: a1 once, b1 and b2.
        assert_eq!(
            info(
                s,
                "DELETE a, b FROM a JOIN b ON b.aid = a.id WHERE a.id = 1"
            )
            .0,
            3
        );
        assert_eq!(
            rows(s, "SELECT COUNT(*) FROM a JOIN b ON b.aid = a.id"),
            vec![vec![Value::Int(1)]]
        );
    });
}

#[test]
fn the_changed_tables_rows_are_locked_exclusively_and_the_read_ones_shared() {
    with_tables(|inst, s| {
        rows(s, "BEGIN");
        info(
            s,
            "UPDATE a JOIN b ON b.aid = a.id SET a.x = 0 WHERE b.id = 3",
        );
        let mut other = inst.session("root", "localhost");
        rows(&mut other, "USE m");
        rows(&mut other, "SET SESSION innodb_lock_wait_timeout = 1");
        rows(&mut other, "BEGIN");
        // b3 was only read: shared, so another reader may share it but not change it.
        assert_eq!(
            rows(
                &mut other,
                "SELECT y FROM b WHERE id = 3 LOCK IN SHARE MODE"
            ),
            vec![vec![Value::Int(300)]]
        );
        assert!(matches!(
            q(&mut other, "UPDATE b SET y = 1 WHERE id = 3"),
            Err(SqlError::LockWaitTimeout)
        ));
        // a2 was changed: exclusive, not even a shared read passes.
        assert!(matches!(
            q(
                &mut other,
                "SELECT x FROM a WHERE id = 2 LOCK IN SHARE MODE"
            ),
            Err(SqlError::LockWaitTimeout)
        ));
        rows(&mut other, "ROLLBACK");
        rows(s, "COMMIT");
        assert_eq!(
            rows(s, "SELECT x FROM a WHERE id = 2"),
            vec![vec![Value::Int(0)]]
        );
    });
}

#[test]
fn a_multi_table_delete_names_its_tables_by_alias() {
    with_tables(|_, s| {
        assert!(matches!(
            q(s, "DELETE a FROM a AS t JOIN b ON b.aid = t.id"),
            Err(SqlError::UnknownTableInMultiDelete(n)) if n == "a"
        ));
        assert_eq!(
            info(
                s,
                "DELETE t FROM b AS t LEFT JOIN a ON a.id = t.aid WHERE a.id IS NULL"
            )
            .0,
            1
        );
        assert_eq!(
            info(
                s,
                "DELETE FROM a USING a JOIN b ON b.aid = a.id WHERE b.y > 250"
            )
            .0,
            1
        );
        assert_eq!(
            rows(s, "SELECT id FROM a ORDER BY id"),
            vec![vec![Value::Int(1)], vec![Value::Int(3)]]
        );
        // EXPLAIN shows the join.
        let plan = rows(s, "EXPLAIN DELETE a FROM a JOIN b ON b.aid = a.id");
        assert_eq!(plan.len(), 2);
    });
}
