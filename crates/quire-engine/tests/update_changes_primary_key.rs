//! An UPDATE may change the primary key: as in InnoDB the old record is delete-marked and
//! the new row inserted, so snapshots, rollback, purge and secondary indexes stay right.

mod common;

use std::ops::Bound;
use std::sync::Arc;

use quire_engine::btree::Direction;
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, DbError, IndexSpec, Table, TableSpec};
use quire_engine::trx::Isolation;
use quire_io::sim::SimVfs;
use quire_io::Vfs;

fn open(vfs: &SimVfs) -> Db {
    Db::open_with(
        Arc::new(vfs.clone()) as Arc<dyn Vfs>,
        std::path::Path::new(common::DIR),
        common::small_config(),
    )
    .expect("open")
}

/// (id PRIMARY KEY, name UNIQUE, qty INDEX)
fn table(db: &Db) -> Table<'_> {
    let int = ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    };
    db.create_database("d").expect("db");
    let mut s = TableSpec::new(
        vec![
            Column::new("id", int),
            Column::new("name", ColumnType::VarChar { max_chars: 20 }),
            Column::new("qty", int),
        ],
        vec![0],
    );
    s.indexes.push(IndexSpec::new("by_name", vec![1]).unique());
    s.indexes.push(IndexSpec::new("by_qty", vec![2]));
    db.create_table("d", "t", s).expect("create")
}

fn row(id: i64, name: &str, qty: i64) -> Vec<Value> {
    vec![Value::Int(id), Value::Str(name.into()), Value::Int(qty)]
}

fn all(t: &Table<'_>) -> Vec<Vec<Value>> {
    t.scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .expect("scan")
        .collect::<Result<_, _>>()
        .expect("rows")
}

#[test]
fn changed_primary_key_moves_the_row_and_its_index_entries() {
    let vfs = SimVfs::new(1);
    let db = open(&vfs);
    let t = table(&db);
    t.insert(row(1, "a", 10)).expect("insert");
    t.insert(row(2, "b", 20)).expect("insert");
    let before = db.begin(Isolation::RepeatableRead).expect("reader");
    let mut reader = before;
    assert_eq!(
        reader.get(&t, &[Value::Int(1)]).expect("get"),
        Some(row(1, "a", 10))
    );

    // UPDATE t SET id = 5 WHERE id = 1 (the other columns kept).
    let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
    let new = tx
        .update_with(&t, &[Value::Int(1)], |r| r[0] = Value::Int(5))
        .expect("update");
    assert!(new.is_some());
    tx.commit().expect("commit");

    assert_eq!(t.get(&[Value::Int(1)]).expect("get"), None);
    assert_eq!(t.get(&[Value::Int(5)]).expect("get"), Some(row(5, "a", 10)));
    assert_eq!(all(&t), vec![row(2, "b", 20), row(5, "a", 10)]);
    assert_eq!(
        t.lookup_index("by_name", &[Value::Str("a".into())])
            .expect("lookup"),
        vec![vec![Value::Int(5)]]
    );
    assert_eq!(
        t.lookup_index("by_qty", &[Value::Int(10)]).expect("lookup"),
        vec![vec![Value::Int(5)]]
    );
    // The older snapshot still sees the row under its old key, and not the new one.
    assert_eq!(
        reader.get(&t, &[Value::Int(1)]).expect("get"),
        Some(row(1, "a", 10))
    );
    assert_eq!(reader.get(&t, &[Value::Int(5)]).expect("get"), None);
    reader.commit().expect("reader ends");

    // With the reader gone, purge removes the old record and entries.
    db.purge_now().expect("purge");
    assert_eq!(t.index_record_counts("PRIMARY").expect("counts"), (2, 0));
    assert_eq!(t.index_record_counts("by_name").expect("counts"), (2, 0));
    assert_eq!(t.index_record_counts("by_qty").expect("counts"), (2, 0));
    assert!(db.check().expect("check").is_empty());

    // And back again, through the autocommit API, with the unique column changing too.
    t.update(&[Value::Int(5)], row(1, "c", 10))
        .expect("update back");
    assert_eq!(all(&t), vec![row(1, "c", 10), row(2, "b", 20)]);
    db.shutdown().expect("shutdown");
}

#[test]
fn rolled_back_primary_key_change_restores_the_row() {
    let vfs = SimVfs::new(2);
    let db = open(&vfs);
    let t = table(&db);
    t.insert(row(1, "a", 10)).expect("insert");
    let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
    tx.update(&t, &[Value::Int(1)], row(7, "a", 11))
        .expect("update");
    // And a second move within the transaction, onto its own delete-marked key.
    tx.update(&t, &[Value::Int(7)], row(1, "z", 12))
        .expect("update");
    assert_eq!(
        tx.get(&t, &[Value::Int(1)]).expect("get"),
        Some(row(1, "z", 12))
    );
    assert_eq!(tx.get(&t, &[Value::Int(7)]).expect("get"), None);
    tx.rollback().expect("rollback");
    assert_eq!(all(&t), vec![row(1, "a", 10)]);
    assert_eq!(
        t.lookup_index("by_name", &[Value::Str("a".into())])
            .expect("lookup"),
        vec![vec![Value::Int(1)]]
    );
    assert_eq!(
        t.lookup_index("by_name", &[Value::Str("z".into())])
            .expect("lookup"),
        Vec::<Vec<Value>>::new()
    );
    db.purge_now().expect("purge");
    assert!(db.check().expect("check").is_empty());
    db.shutdown().expect("shutdown");
}

#[test]
fn primary_key_change_onto_a_taken_key_is_a_duplicate_and_changes_nothing() {
    let vfs = SimVfs::new(3);
    let db = open(&vfs);
    let t = table(&db);
    t.insert(row(1, "a", 10)).expect("insert");
    t.insert(row(2, "b", 20)).expect("insert");
    let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
    tx.update(&t, &[Value::Int(2)], row(2, "b", 21))
        .expect("an earlier change");
    let e = tx
        .update(&t, &[Value::Int(1)], row(2, "a", 10))
        .expect_err("2 is taken");
    assert!(
        matches!(&e, DbError::DuplicateKey { index, entry } if index == "PRIMARY" && entry == "2"),
        "{e:?}"
    );
    // A collision in a unique index on the way is one too.
    let e = tx
        .update(&t, &[Value::Int(1)], row(3, "b", 10))
        .expect_err("b is taken");
    assert!(
        matches!(&e, DbError::DuplicateKey { index, .. } if index == "by_name"),
        "{e:?}"
    );
    // The statement was undone; the transaction and its earlier change go on.
    assert_eq!(
        tx.get(&t, &[Value::Int(1)]).expect("get"),
        Some(row(1, "a", 10))
    );
    assert_eq!(tx.get(&t, &[Value::Int(3)]).expect("get"), None);
    tx.commit().expect("commit");
    assert_eq!(all(&t), vec![row(1, "a", 10), row(2, "b", 21)]);
    db.purge_now().expect("purge");
    assert_eq!(t.index_record_counts("PRIMARY").expect("counts"), (2, 0));
    assert_eq!(t.index_record_counts("by_name").expect("counts"), (2, 0));
    assert!(db.check().expect("check").is_empty());
    db.shutdown().expect("shutdown");
}
