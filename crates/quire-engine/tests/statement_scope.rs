//! A statement scope (`begin_statement` … `end_statement`) groups the engine calls of one
//! SQL statement: `rollback_statement` undoes them together, and READ COMMITTED reads them
//! all from one snapshot.

mod common;

use std::sync::Arc;

use quire_engine::btree::Direction;
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, DbError, Table, TableSpec};
use quire_engine::trx::Isolation;
use quire_io::sim::SimVfs;
use quire_io::Vfs;
use std::ops::Bound;

fn open(vfs: &SimVfs) -> Db {
    Db::open_with(
        Arc::new(vfs.clone()) as Arc<dyn Vfs>,
        std::path::Path::new(common::DIR),
        common::small_config(),
    )
    .expect("open")
}

fn table(db: &Db) -> Table<'_> {
    let int = ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    };
    db.create_database("d").expect("db");
    db.create_table(
        "d",
        "t",
        TableSpec::new(vec![Column::new("id", int), Column::new("v", int)], vec![0]),
    )
    .expect("create")
}

fn row(id: i64, v: i64) -> Vec<Value> {
    vec![Value::Int(id), Value::Int(v)]
}

fn ids(rows: impl Iterator<Item = Result<Vec<Value>, DbError>>) -> Vec<Value> {
    rows.map(|r| r.expect("row")[0].clone()).collect()
}

#[test]
fn multi_insert_statement_failing_at_third_row_is_undone_whole() {
    let vfs = SimVfs::new(1);
    let db = open(&vfs);
    let t = table(&db);
    t.insert(row(3, 0)).expect("committed row 3");
    let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");

    // INSERT INTO t VALUES (10), (11): a statement that succeeds.
    tx.begin_statement().expect("begin statement");
    tx.insert(&t, row(10, 0)).expect("insert 10");
    tx.insert(&t, row(11, 0)).expect("insert 11");
    tx.end_statement();

    // INSERT INTO t VALUES (1), (2), (3), (4): the third row collides.
    tx.begin_statement().expect("begin statement");
    tx.insert(&t, row(1, 0)).expect("insert 1");
    tx.insert(&t, row(2, 0)).expect("insert 2");
    let e = tx.insert(&t, row(3, 0));
    assert!(matches!(e, Err(DbError::DuplicateKey { .. })), "{e:?}");
    tx.rollback_statement().expect("rollback statement");

    // The transaction goes on: the earlier statement's rows are there, this one's are not.
    let seen = ids(tx
        .scan(&t, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .expect("scan"));
    assert_eq!(seen, vec![Value::Int(3), Value::Int(10), Value::Int(11)]);
    tx.insert(&t, row(12, 0))
        .expect("the transaction is still active");
    tx.commit().expect("commit");
    let seen = ids(t
        .scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .expect("scan"));
    assert_eq!(
        seen,
        vec![
            Value::Int(3),
            Value::Int(10),
            Value::Int(11),
            Value::Int(12)
        ]
    );
    assert!(db.check().expect("check").is_empty());
}

#[test]
fn update_statement_rollback_restores_rows_and_keeps_earlier_work() {
    let vfs = SimVfs::new(2);
    let db = open(&vfs);
    let t = table(&db);
    for i in 1..=4 {
        t.insert(row(i, 0)).expect("insert");
    }
    let mut tx = db.begin(Isolation::ReadCommitted).expect("begin");
    tx.update(&t, &[Value::Int(4)], row(4, 40))
        .expect("update 4");
    // UPDATE t SET v = v + 1 WHERE id <= 3, interrupted after two rows.
    tx.begin_statement().expect("begin statement");
    for i in 1..=2 {
        tx.update_with(&t, &[Value::Int(i)], |r| r[1] = Value::Int(1))
            .expect("update");
    }
    tx.rollback_statement().expect("rollback statement");
    // A second rollback without a scope does nothing.
    tx.rollback_statement().expect("no scope: nothing to do");
    tx.commit().expect("commit");
    for i in 1..=3 {
        assert_eq!(t.get(&[Value::Int(i)]).expect("get"), Some(row(i, 0)));
    }
    assert_eq!(t.get(&[Value::Int(4)]).expect("get"), Some(row(4, 40)));
}

#[test]
fn read_committed_reads_one_snapshot_per_statement() {
    let vfs = SimVfs::new(3);
    let db = open(&vfs);
    let t = table(&db);
    t.insert(row(1, 0)).expect("insert");
    let mut tx = db.begin(Isolation::ReadCommitted).expect("begin");

    tx.begin_statement().expect("begin statement");
    assert_eq!(tx.get(&t, &[Value::Int(1)]).expect("get"), Some(row(1, 0)));
    // Another session commits while the statement runs.
    t.update(&[Value::Int(1)], row(1, 1)).expect("update");
    t.insert(row(2, 0)).expect("insert");
    // Later calls of the same statement read the statement's snapshot.
    assert_eq!(tx.get(&t, &[Value::Int(1)]).expect("get"), Some(row(1, 0)));
    assert_eq!(tx.get(&t, &[Value::Int(2)]).expect("get"), None);
    let seen = ids(tx
        .scan(&t, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .expect("scan"));
    assert_eq!(seen, vec![Value::Int(1)]);
    tx.end_statement();

    // The next statement reads a new snapshot.
    tx.begin_statement().expect("begin statement");
    assert_eq!(tx.get(&t, &[Value::Int(1)]).expect("get"), Some(row(1, 1)));
    assert_eq!(tx.get(&t, &[Value::Int(2)]).expect("get"), Some(row(2, 0)));
    tx.end_statement();

    // Without a scope each call is its own statement, as before.
    t.update(&[Value::Int(1)], row(1, 2)).expect("update");
    assert_eq!(tx.get(&t, &[Value::Int(1)]).expect("get"), Some(row(1, 2)));
    tx.commit().expect("commit");
}

#[test]
fn statement_calls_on_an_ended_or_aborted_transaction_are_refused() {
    let vfs = SimVfs::new(4);
    let db = open(&vfs);
    let t = table(&db);
    t.insert(row(1, 0)).expect("insert");
    t.insert(row(2, 0)).expect("insert");
    let mut a = db.begin(Isolation::RepeatableRead).expect("begin a");
    let mut b = db.begin(Isolation::RepeatableRead).expect("begin b");
    a.begin_statement().expect("a statement");
    b.begin_statement().expect("b statement");
    a.update(&t, &[Value::Int(1)], row(1, 1))
        .expect("a locks 1");
    b.update(&t, &[Value::Int(2)], row(2, 1))
        .expect("b locks 2");
    let tr = &t;
    std::thread::scope(|s| {
        let h = s.spawn(move || {
            // a waits for b's row 2 ...
            let r = a.update(tr, &[Value::Int(2)], row(2, 2));
            (a, r)
        });
        std::thread::sleep(std::time::Duration::from_millis(100));
        // ... and b closing the cycle is the victim: its whole transaction is rolled back.
        let r = b.update(&t, &[Value::Int(1)], row(1, 2));
        assert!(matches!(r, Err(DbError::Deadlock)), "{r:?}");
        assert!(matches!(b.begin_statement(), Err(DbError::TrxAborted)));
        assert!(matches!(b.rollback_statement(), Err(DbError::TrxAborted)));
        b.rollback().expect("rollback b");
        let (a, r) = h.join().expect("join");
        r.expect("a gets row 2 once b is gone");
        a.commit().expect("commit a");
    });
    assert_eq!(t.get(&[Value::Int(1)]).expect("get"), Some(row(1, 1)));
    assert_eq!(t.get(&[Value::Int(2)]).expect("get"), Some(row(2, 2)));
}
