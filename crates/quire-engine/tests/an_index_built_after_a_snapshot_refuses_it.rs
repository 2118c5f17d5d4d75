//! CREATE INDEX builds entries from the newest versions only, so a read view made before
//! the build must not read through the new index: the read fails with
//! `DbError::TableDefinitionChanged` (MySQL 1412, InnoDB's `row_merge_is_index_usable`),
//! and `Transaction::can_read_index` tells a planner so beforehand. Views made after the
//! build, locking reads and autocommit reads use it.

use std::ops::Bound;

use quire_engine::btree::Direction;
use quire_engine::config::Config;
use quire_engine::row::{Column, ColumnType, IntWidth, TrxId, Value};
use quire_engine::table::{Db, DbError, IndexSpec, ReadLock, TableSpec};
use quire_engine::trx::Isolation;

fn int() -> ColumnType {
    ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    }
}

fn point(v: i64) -> (Bound<Vec<Value>>, Bound<Vec<Value>>) {
    (
        Bound::Included(vec![Value::Int(v)]),
        Bound::Included(vec![Value::Int(v)]),
    )
}

#[test]
fn a_view_older_than_an_index_cannot_read_through_it() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), Config::default()).expect("open");
    db.create_database("d").expect("db");
    let spec = TableSpec::new(
        vec![Column::new("id", int()), Column::new("k", int())],
        vec![0],
    );
    let t = db.create_table("d", "t", spec).expect("table");
    for i in 1..=3 {
        t.insert(vec![Value::Int(i), Value::Int(i)])
            .expect("insert");
    }
    let mut old = db.begin(Isolation::RepeatableRead).expect("begin");
    old.snapshot_now().expect("snapshot");
    t.update(&[Value::Int(1)], vec![Value::Int(1), Value::Int(10)])
        .expect("update");
    db.create_index("d", "t", IndexSpec::new("k", vec![1]))
        .expect("create index");
    let def = t.definition().expect("def");
    let ix = &def.indexes[0];
    assert_ne!(
        ix.usable_from,
        TrxId(0),
        "a built index records when it became usable"
    );
    assert!(!old.can_read_index(ix));
    let (lo, hi) = point(1);
    match old.index_scan(&t, "k", lo, hi, Direction::Forward) {
        Err(DbError::TableDefinitionChanged) => {}
        Err(e) => panic!("expected 1412, got {e}"),
        Ok(_) => panic!("an old view read through a newer index"),
    }
    assert!(matches!(
        old.lookup_index(&t, "k", &[Value::Int(1)]),
        Err(DbError::TableDefinitionChanged)
    ));
    // The statement failed, the transaction goes on: its snapshot still sees k = 1 by the
    // primary key, and a locking read (newest versions) may use the index.
    assert_eq!(
        old.get(&t, &[Value::Int(1)]).expect("get"),
        Some(vec![Value::Int(1), Value::Int(1)])
    );
    let (lo, hi) = point(10);
    assert_eq!(
        old.index_scan_locking(&t, "k", lo, hi, ReadLock::Shared)
            .expect("locking read"),
        vec![vec![Value::Int(1), Value::Int(10)]]
    );
    old.commit().expect("commit");

    // A view made after the build reads through it; so does an autocommit read.
    let mut new = db.begin(Isolation::RepeatableRead).expect("begin");
    new.snapshot_now().expect("snapshot");
    assert!(new.can_read_index(ix));
    let (lo, hi) = point(10);
    let rows: Vec<Vec<Value>> = new
        .index_scan(&t, "k", lo, hi, Direction::Forward)
        .expect("scan")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(rows, vec![vec![Value::Int(1), Value::Int(10)]]);
    new.commit().expect("commit");
    let (lo, hi) = point(2);
    assert_eq!(
        t.index_scan("k", lo, hi, Direction::Forward)
            .expect("scan")
            .count(),
        1
    );

    // After a restart no view predates the index.
    db.shutdown().expect("shutdown");
    let db = Db::open(dir.path(), Config::default()).expect("reopen");
    let t = db.table("d", "t").expect("table");
    assert_eq!(
        t.definition().expect("def").indexes[0].usable_from,
        TrxId(0)
    );
    db.shutdown().expect("shutdown");
}
