//! An UPDATE that leaves a row as it was is matched but not changed (MySQL's "Rows
//! matched: 1 Changed: 0"): the row is locked, but no undo record and no new version are
//! written.

mod common;

use std::sync::Arc;

use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, IndexSpec, TableSpec};
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

#[test]
fn update_to_the_same_values_is_matched_not_changed_and_writes_nothing() {
    let vfs = SimVfs::new(1);
    let db = open(&vfs);
    db.create_database("d").expect("db");
    let int = ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    };
    let mut s = TableSpec::new(
        vec![
            Column::new("id", int),
            Column::new("name", ColumnType::VarChar { max_chars: 20 }),
            Column::nullable("n", int),
        ],
        vec![0],
    );
    s.indexes.push(IndexSpec::new("by_name", vec![1]).unique());
    let t = db.create_table("d", "t", s).expect("create");
    let row = |n: Option<i64>| {
        vec![
            Value::Int(1),
            Value::Str("a".into()),
            n.map_or(Value::Null, Value::Int),
        ]
    };
    t.insert(row(Some(5))).expect("insert");
    db.purge_now().expect("purge");
    let history = || db.stat("Innodb_history_list_length").expect("stat");
    let built = || db.stat("quire_versions_built").expect("stat");
    let h0 = history();

    // A snapshot from before: if a new version were written, reading would rebuild the
    // old one from undo.
    let mut reader = db.begin(Isolation::RepeatableRead).expect("reader");
    assert_eq!(
        reader.get(&t, &[Value::Int(1)]).expect("get"),
        Some(row(Some(5)))
    );

    let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
    let r = tx
        .update_with(&t, &[Value::Int(1)], |r| r[2] = Value::Int(5))
        .expect("update_with");
    assert_eq!(r, Some((row(Some(5)), false)), "matched, not changed");
    assert!(!tx
        .update(&t, &[Value::Int(1)], row(Some(5)))
        .expect("update"));
    // An integer given as unsigned is the same value once canonical.
    let same = vec![Value::Int(1), Value::Str("a".into()), Value::UInt(5)];
    assert!(!tx.update(&t, &[Value::Int(1)], same).expect("update"));
    assert_eq!(
        tx.update_with(&t, &[Value::Int(2)], |_| {})
            .expect("no row"),
        None
    );
    tx.commit().expect("commit");
    assert_eq!(history(), h0, "no undo log went to the history");
    let b0 = built();
    assert_eq!(
        reader.get(&t, &[Value::Int(1)]).expect("get"),
        Some(row(Some(5)))
    );
    assert_eq!(built(), b0, "the snapshot read the record itself");
    reader.commit().expect("reader ends");

    // A real change is reported as one; NULL to NULL is no change.
    assert!(t.update(&[Value::Int(1)], row(None)).expect("update"));
    assert!(!t.update(&[Value::Int(1)], row(None)).expect("update"));
    assert_eq!(t.get(&[Value::Int(1)]).expect("get"), Some(row(None)));
    assert!(db.check().expect("check").is_empty());
    db.shutdown().expect("shutdown");
}
