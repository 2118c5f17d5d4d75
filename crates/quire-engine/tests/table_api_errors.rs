//! User mistakes through the embedded API are typed errors, and leave nothing behind.

mod common;

use std::sync::Arc;

use quire_engine::row::{Column, ColumnType, IntWidth, RowError, Value};
use quire_engine::table::{Db, DbError, IndexSpec, TableSpec};
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

fn spec() -> TableSpec {
    let int = ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    };
    let mut s = TableSpec::new(
        vec![
            Column::new("id", int),
            Column::nullable("v", ColumnType::VarChar { max_chars: 10 }),
        ],
        vec![0],
    );
    s.auto_increment = Some(0);
    s
}

#[test]
fn duplicate_keys_wrong_types_and_missing_objects_are_typed_errors() {
    let vfs = SimVfs::new(1);
    let db = open(&vfs);
    assert!(matches!(
        db.create_table("nodb", "t", spec()),
        Err(DbError::NoSuchDatabase(_))
    ));
    db.create_database("d").expect("db");
    assert!(matches!(
        db.create_database("d"),
        Err(DbError::DatabaseExists(_))
    ));
    assert!(db.create_database("bad.name").is_err());
    let t = db.create_table("d", "t", spec()).expect("create");
    assert!(matches!(
        db.create_table("d", "t", spec()),
        Err(DbError::TableExists(_))
    ));
    assert!(matches!(
        db.table("d", "nope"),
        Err(DbError::NoSuchTable(_))
    ));

    let r = t
        .insert(vec![Value::Null, Value::Str("a".into())])
        .expect("insert");
    assert_eq!(r[0], Value::Int(1));
    assert!(matches!(
        t.insert(vec![Value::Int(1), Value::Null]),
        Err(DbError::DuplicateKey { ref index, ref entry }) if index == "PRIMARY" && entry == "1"
    ));
    assert!(matches!(
        t.insert(vec![Value::Str("x".into()), Value::Null]),
        Err(DbError::Row(RowError::WrongType { .. }))
    ));
    assert!(matches!(
        t.insert(vec![Value::Int(5)]),
        Err(DbError::Row(RowError::WrongColumnCount { .. }))
    ));
    assert!(matches!(
        t.insert(vec![Value::Int(5), Value::Str("far too long".into())]),
        Err(DbError::Row(RowError::TooLong { .. }))
    ));
    assert!(matches!(
        t.update(&[Value::Int(9)], vec![Value::Int(9), Value::Null]),
        Err(DbError::RowNotFound)
    ));
    assert!(matches!(
        t.delete(&[Value::Int(9)]),
        Err(DbError::RowNotFound)
    ));
    // An explicit value moves AUTO_INCREMENT past it.
    t.insert(vec![Value::Int(10), Value::Null])
        .expect("explicit");
    let r = t.insert(vec![Value::Null, Value::Null]).expect("auto");
    assert_eq!(r[0], Value::Int(11));

    // A unique index cannot be built over duplicates, and nothing of it remains.
    t.insert(vec![Value::Null, Value::Str("a".into())])
        .expect("dup v");
    assert!(matches!(
        db.create_index("d", "t", IndexSpec::new("uv", vec![1]).unique()),
        Err(DbError::DuplicateKey { ref index, ref entry }) if index == "uv" && entry == "a"
    ));
    assert!(matches!(
        t.lookup_index("uv", &[]),
        Err(DbError::NoSuchIndex { .. })
    ));
    db.create_index("d", "t", IndexSpec::new("v", vec![1]))
        .expect("non-unique");
    assert!(matches!(
        db.create_index("d", "t", IndexSpec::new("v", vec![1])),
        Err(DbError::IndexExists { .. })
    ));
    assert_eq!(
        t.lookup_index("v", &[Value::Str("a".into())])
            .expect("lookup")
            .len(),
        2
    );
    assert!(db.check().expect("check").is_empty());
    assert!(matches!(
        db.drop_index("d", "t", "nope"),
        Err(DbError::NoSuchIndex { .. })
    ));
    db.drop_table("d", "t").expect("drop");
    assert!(matches!(
        t.get(&[Value::Int(1)]),
        Err(DbError::NoSuchTable(_))
    ));
    db.shutdown().expect("shutdown");
}

#[test]
fn tables_and_auto_increment_survive_a_reopen() {
    let vfs = SimVfs::new(2);
    let db = open(&vfs);
    db.create_database("d").expect("db");
    let t = db.create_table("d", "t", spec()).expect("create");
    for _ in 0..5 {
        t.insert(vec![Value::Null, Value::Null]).expect("insert");
    }
    db.kill();
    let db = open(&vfs);
    let t = db.table("d", "t").expect("table after reopen");
    let r = t.insert(vec![Value::Null, Value::Null]).expect("insert");
    assert_eq!(
        r[0],
        Value::Int(6),
        "AUTO_INCREMENT recomputed from max(pk)"
    );
    db.truncate_table("d", "t").expect("truncate");
    assert_eq!(t.get(&[Value::Int(6)]).expect("get"), None);
    let r = t.insert(vec![Value::Null, Value::Null]).expect("insert");
    assert_eq!(r[0], Value::Int(1), "TRUNCATE restarts AUTO_INCREMENT");
    for _ in 0..5 {
        t.insert(vec![Value::Null, Value::Null]).expect("insert");
    }
    assert!(db.check().expect("check").is_empty());
    db.rename_table("d", "t", "d", "u").expect("rename");
    db.shutdown().expect("shutdown");
    let db = open(&vfs);
    assert_eq!(db.tables("d").expect("tables"), vec!["u".to_string()]);
    assert_eq!(
        db.table("d", "u")
            .expect("u")
            .get(&[Value::Int(6)])
            .expect("get")
            .map(|r| r[0].clone()),
        Some(Value::Int(6))
    );
    db.shutdown().expect("shutdown");
}

#[test]
fn transaction_mistakes_are_typed_errors_that_leave_the_transaction_usable() {
    let vfs = SimVfs::new(3);
    let db = open(&vfs);
    db.create_database("d").expect("db");
    let t = db.create_table("d", "t", spec()).expect("table");
    let mut tx = db
        .begin(quire_engine::trx::Isolation::RepeatableRead)
        .expect("begin");
    tx.insert(&t, vec![Value::Int(1), Value::Str("a".into())])
        .expect("insert");
    assert!(matches!(
        tx.rollback_to_savepoint("nope"),
        Err(DbError::NoSuchSavepoint(ref s)) if s == "nope"
    ));
    assert!(matches!(
        tx.release_savepoint("nope"),
        Err(DbError::NoSuchSavepoint(_))
    ));
    // A failed statement (a duplicate, a wrong type, a key taken) is rolled back alone.
    assert!(matches!(
        tx.insert(&t, vec![Value::Int(1), Value::Null]),
        Err(DbError::DuplicateKey { .. })
    ));
    assert!(matches!(
        tx.insert(&t, vec![Value::Str("x".into()), Value::Null]),
        Err(DbError::Row(_))
    ));
    tx.insert(&t, vec![Value::Int(2), Value::Null])
        .expect("insert 2");
    assert!(matches!(
        tx.update(&t, &[Value::Int(1)], vec![Value::Int(2), Value::Null]),
        Err(DbError::DuplicateKey { .. })
    ));
    tx.delete(&t, &[Value::Int(2)]).expect("delete 2");
    assert!(matches!(
        tx.delete(&t, &[Value::Int(9)]),
        Err(DbError::RowNotFound)
    ));
    assert_eq!(
        tx.get(&t, &[Value::Int(1)]).expect("get"),
        Some(vec![Value::Int(1), Value::Str("a".into())])
    );
    tx.commit().expect("commit");
    assert_eq!(
        t.get(&[Value::Int(1)]).expect("get"),
        Some(vec![Value::Int(1), Value::Str("a".into())])
    );
    assert!(db.check().expect("check").is_empty());
    db.shutdown().expect("shutdown");
}

#[test]
fn duplicate_key_error_names_the_key_and_its_value_as_mysql_does() {
    let vfs = SimVfs::new(4);
    let db = open(&vfs);
    db.create_database("d").expect("db");
    let int = ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    };
    let mut s = TableSpec::new(
        vec![
            Column::new("a", int),
            Column::new("b", ColumnType::VarChar { max_chars: 20 }),
            Column::new("c", int),
            Column::nullable("d", ColumnType::VarChar { max_chars: 20 }),
        ],
        vec![0, 1],
    );
    s.indexes.push(IndexSpec::new("uc", vec![2, 1]).unique());
    let mut pre = IndexSpec::new("ud", vec![3]).unique();
    pre.columns[0].prefix = Some(3);
    s.indexes.push(pre);
    let t = db.create_table("d", "t", s).expect("create");
    let row = |a: i64, b: &str, c: i64, d: Option<&str>| {
        vec![
            Value::Int(a),
            Value::Str(b.into()),
            Value::Int(c),
            d.map_or(Value::Null, |d| Value::Str(d.into())),
        ]
    };
    t.insert(row(-7, "x y", 1, Some("apple"))).expect("insert");

    let e = t
        .insert(row(-7, "x y", 2, None))
        .expect_err("primary collides");
    assert_eq!(e.to_string(), "Duplicate entry '-7-x y' for key 'PRIMARY'");
    let e = t.insert(row(-1, "x y", 1, None)).expect_err("uc collides");
    assert_eq!(e.to_string(), "Duplicate entry '1-x y' for key 'uc'");
    let e = t
        .insert(row(-2, "z", 3, Some("applesauce")))
        .expect_err("the prefix collides");
    assert!(
        matches!(&e, DbError::DuplicateKey { index, entry } if index == "ud" && entry == "app"),
        "{e:?}"
    );
    // NULLs never collide; an update into a taken key names it too.
    t.insert(row(-3, "z", 4, None)).expect("null");
    t.insert(row(-4, "z", 5, None)).expect("null again");
    let e = t
        .update(
            &[Value::Int(-3), Value::Str("z".into())],
            row(-3, "z", 5, None),
        )
        .expect_err("uc collides on update");
    assert_eq!(e.to_string(), "Duplicate entry '5-z' for key 'uc'");
    assert!(db.check().expect("check").is_empty());
    db.shutdown().expect("shutdown");
}

#[test]
fn column_defaults_survive_a_reopen() {
    let vfs = SimVfs::new(5);
    let db = open(&vfs);
    db.create_database("d").expect("db");
    let int = ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    };
    let cols = vec![
        Column::new("id", int),
        Column::new("n", int).with_default("'0'"),
        Column::nullable("note", ColumnType::VarChar { max_chars: 10 }).with_default("NULL"),
        Column::nullable("at", ColumnType::Timestamp { fsp: 0 }).with_default("CURRENT_TIMESTAMP"),
        Column::nullable("plain", int),
    ];
    db.create_table("d", "t", TableSpec::new(cols.clone(), vec![0]))
        .expect("create");
    db.kill();
    let db = open(&vfs);
    let got = db
        .table("d", "t")
        .expect("table")
        .columns()
        .expect("columns");
    assert_eq!(got, cols);
    assert_eq!(got[1].default.as_deref(), Some("'0'"));
    assert_eq!(got[4].default, None);
    db.shutdown().expect("shutdown");
}
