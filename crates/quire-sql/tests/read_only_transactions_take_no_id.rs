//! A transaction that has only read holds a snapshot and no engine transaction: no id, no
//! entry among the active transactions, nothing to commit (InnoDB's read-only
//! optimization). Its first write or locking read begins one that keeps the snapshot.

use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_sql::{CollectSink, Instance, Session, Value};

fn run(s: &mut Session<'_>, sql: &str) -> Vec<Vec<Value>> {
    let mut c = CollectSink::default();
    s.query(sql, &mut c)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    c.rows
}

fn ints(rows: Vec<Vec<Value>>) -> Vec<i64> {
    rows.into_iter()
        .map(|r| match r.first() {
            Some(Value::Int(i)) => *i,
            other => panic!("not an int: {other:?}"),
        })
        .collect()
}

fn stat(db: &Db, name: &str) -> u64 {
    db.stats()
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no counter {name}"))
}

fn with_two(f: impl FnOnce(&Db, &mut Session<'_>, &mut Session<'_>)) {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), Config::default()).expect("open");
    {
        let inst = Instance::new(&db);
        let mut a = inst.session("root", "localhost");
        let mut b = inst.session("root", "localhost");
        run(&mut a, "CREATE DATABASE r");
        run(&mut a, "USE r");
        run(&mut b, "USE r");
        run(&mut a, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
        run(&mut a, "INSERT INTO t VALUES (1, 1), (2, 2)");
        f(&db, &mut a, &mut b);
    }
    db.shutdown().expect("shutdown");
}

#[test]
fn begin_and_selects_take_no_transaction() {
    with_two(|db, a, _| {
        let commits = stat(db, "quire_trx_commits");
        run(a, "BEGIN");
        assert!(a.in_transaction());
        assert_eq!(ints(run(a, "SELECT v FROM t ORDER BY id")), vec![1, 2]);
        assert_eq!(ints(run(a, "SELECT v FROM t WHERE id = 2")), vec![2]);
        assert_eq!(
            stat(db, "quire_trx_active"),
            0,
            "no engine transaction while reading"
        );
        run(a, "COMMIT");
        assert!(!a.in_transaction());
        assert_eq!(
            stat(db, "quire_trx_commits"),
            commits,
            "nothing was committed"
        );
        assert_eq!(
            stat(db, "quire_read_views_open"),
            0,
            "the snapshot went with COMMIT"
        );
    });
}

#[test]
fn the_first_write_keeps_the_snapshot_of_the_reads_before_it() {
    with_two(|db, a, b| {
        run(a, "BEGIN");
        assert_eq!(ints(run(a, "SELECT v FROM t WHERE id = 2")), vec![2]);
        run(b, "UPDATE t SET v = 20 WHERE id = 2");
        run(a, "UPDATE t SET v = 10 WHERE id = 1");
        assert_eq!(stat(db, "quire_trx_active"), 1);
        // Its own change, and the snapshot of its first read for the rest.
        assert_eq!(ints(run(a, "SELECT v FROM t ORDER BY id")), vec![10, 2]);
        run(a, "COMMIT");
        assert_eq!(ints(run(a, "SELECT v FROM t ORDER BY id")), vec![10, 20]);
    });
}

#[test]
fn a_consistent_snapshot_is_taken_at_start_transaction() {
    with_two(|_, a, b| {
        run(a, "START TRANSACTION WITH CONSISTENT SNAPSHOT");
        run(b, "UPDATE t SET v = 5 WHERE id = 1");
        assert_eq!(ints(run(a, "SELECT v FROM t WHERE id = 1")), vec![1]);
        run(a, "COMMIT");
        assert_eq!(ints(run(a, "SELECT v FROM t WHERE id = 1")), vec![5]);
    });
}

#[test]
fn read_committed_reads_each_statement_from_a_new_snapshot() {
    with_two(|_, a, b| {
        run(a, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
        run(a, "BEGIN");
        assert_eq!(ints(run(a, "SELECT v FROM t WHERE id = 1")), vec![1]);
        run(b, "UPDATE t SET v = 7 WHERE id = 1");
        assert_eq!(ints(run(a, "SELECT v FROM t WHERE id = 1")), vec![7]);
        run(a, "COMMIT");
    });
}

#[test]
fn autocommit_off_reads_keep_one_snapshot_until_commit() {
    with_two(|db, a, b| {
        run(a, "SET autocommit = 0");
        assert_eq!(ints(run(a, "SELECT v FROM t WHERE id = 1")), vec![1]);
        assert!(a.in_transaction());
        run(b, "UPDATE t SET v = 3 WHERE id = 1");
        assert_eq!(ints(run(a, "SELECT v FROM t WHERE id = 1")), vec![1]);
        assert_eq!(stat(db, "quire_trx_active"), 0);
        run(a, "COMMIT");
        assert_eq!(ints(run(a, "SELECT v FROM t WHERE id = 1")), vec![3]);
        run(a, "COMMIT");
    });
}
