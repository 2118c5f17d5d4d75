//! A table without a primary key is clustered on a hidden DB_ROW_ID: rows are scanned in
//! insertion order without the id among their values, named by `RowHandle` for update and
//! delete, indexed with the row id as the primary key part; row ids are never reused within
//! a run and continue above the largest one after a restart.

mod common;

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use quire_engine::btree::Direction;
use quire_engine::row::{Column, ColumnType, IntWidth, LobSize, RowId, Value};
use quire_engine::table::{Db, DbError, IndexSpec, RowHandle, Table, TableSpec};
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
            Column::new("a", int),
            Column::nullable("b", ColumnType::VarChar { max_chars: 20 }),
            Column::nullable("blob", ColumnType::Blob(LobSize::Regular)),
        ],
        Vec::new(),
    );
    s.indexes.push(IndexSpec::new("by_a", vec![0]));
    s
}

fn row(a: i64, b: &str) -> Vec<Value> {
    vec![Value::Int(a), Value::Str(b.into()), Value::Null]
}

/// Every row with its handle, in row id order.
fn all(t: &Table<'_>) -> Vec<(RowHandle, Vec<Value>)> {
    t.scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .expect("scan")
        .with_handles()
        .collect::<Result<_, _>>()
        .expect("rows")
}

fn ids(rows: &[(RowHandle, Vec<Value>)]) -> Vec<u64> {
    rows.iter()
        .map(|(h, _)| h.row_id().expect("a row id").0)
        .collect()
}

#[test]
fn rows_without_a_primary_key_are_named_by_handles() {
    let vfs = SimVfs::new(21);
    let db = open(&vfs);
    db.create_database("d").expect("db");
    let t = db.create_table("d", "t", spec()).expect("table");
    // Duplicates are fine: nothing is unique.
    for (a, b) in [(3, "x"), (1, "y"), (3, "x"), (2, "z")] {
        t.insert(row(a, b)).expect("insert");
    }
    let rows = all(&t);
    assert_eq!(ids(&rows), vec![1, 2, 3, 4]);
    let values: Vec<Vec<Value>> = rows.iter().map(|(_, r)| r.clone()).collect();
    assert_eq!(
        values,
        vec![row(3, "x"), row(1, "y"), row(3, "x"), row(2, "z")]
    );
    // Key calls have no key to take.
    assert!(matches!(t.get(&[]), Err(DbError::NoPrimaryKey(_))));
    assert!(matches!(
        t.update(&[], row(0, "")),
        Err(DbError::NoPrimaryKey(_))
    ));
    assert!(matches!(t.delete(&[]), Err(DbError::NoPrimaryKey(_))));
    // Update one of the two equal rows by handle: the other stays, the id stays.
    let (h, _) = &rows[2];
    let mut big = row(5, "w");
    big[2] = Value::Bytes(vec![7; 20_000]);
    t.update_row(h, big.clone()).expect("update_row");
    assert_eq!(t.get_row(h).expect("get_row"), Some(big.clone()));
    assert_eq!(t.get_row(&rows[0].0).expect("get_row"), Some(row(3, "x")));
    // The secondary index holds row ids as the primary key part, and follows the update.
    assert_eq!(
        t.lookup_index("by_a", &[Value::Int(3)]).expect("lookup"),
        vec![vec![Value::UInt(1)]]
    );
    let by_a: Vec<(u64, Vec<Value>)> = t
        .index_scan(
            "by_a",
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward,
        )
        .expect("index scan")
        .with_handles()
        .map(|r| r.map(|(h, row)| (h.row_id().map_or(0, |RowId(i)| i), row)))
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(
        by_a,
        vec![
            (2, row(1, "y")),
            (4, row(2, "z")),
            (1, row(3, "x")),
            (3, big.clone()),
        ]
    );
    t.delete_row(&rows[1].0).expect("delete_row");
    assert_eq!(t.get_row(&rows[1].0).expect("get_row"), None);
    assert!(matches!(
        t.delete_row(&rows[1].0),
        Err(DbError::RowNotFound)
    ));
    // Delete the largest id: within the run it is not handed out again.
    t.delete_row(&rows[3].0).expect("delete_row");
    t.insert(row(9, "new")).expect("insert");
    assert_eq!(ids(&all(&t)), vec![1, 3, 5]);
    // A handle names a row of its own table only.
    let other = db.create_table("d", "u", spec()).expect("table u");
    other.insert(row(1, "u")).expect("insert");
    assert!(matches!(
        other.delete_row(&rows[0].0),
        Err(DbError::ForeignHandle(_))
    ));
    assert!(db.check().expect("check").is_empty());
    db.shutdown().expect("shutdown");
}

#[test]
fn row_ids_continue_above_the_largest_after_a_restart() {
    let vfs = SimVfs::new(22);
    let db = open(&vfs);
    db.create_database("d").expect("db");
    let t = db.create_table("d", "t", spec()).expect("table");
    for i in 0..300 {
        t.insert(row(i % 7, "r")).expect("insert");
    }
    // Some from the middle go; the largest stays.
    let rows = all(&t);
    for (h, _) in rows.iter().skip(10).step_by(3).take(50) {
        t.delete_row(h).expect("delete");
    }
    let before: BTreeMap<u64, Vec<Value>> = all(&t)
        .into_iter()
        .map(|(h, r)| (h.row_id().expect("id").0, r))
        .collect();
    assert_eq!(before.keys().next_back(), Some(&300));
    db.kill();
    for round in 0..2 {
        let db = open(&vfs);
        let t = db.table("d", "t").expect("table");
        let after: BTreeMap<u64, Vec<Value>> = all(&t)
            .into_iter()
            .map(|(h, r)| (h.row_id().expect("id").0, r))
            .collect();
        let max = *after.keys().next_back().expect("rows");
        if round == 0 {
            assert_eq!(after, before);
        }
        t.insert(row(100, "after")).expect("insert");
        t.insert(row(101, "after")).expect("insert");
        let newest: Vec<u64> = ids(&all(&t)).into_iter().rev().take(2).collect();
        assert_eq!(newest, vec![max + 2, max + 1]);
        assert!(db.check().expect("check").is_empty());
        db.shutdown().expect("shutdown");
    }
}

#[test]
fn truncate_keeps_counting_row_ids() {
    let vfs = SimVfs::new(23);
    let db = open(&vfs);
    db.create_database("d").expect("db");
    let t = db.create_table("d", "t", spec()).expect("table");
    for i in 0..5 {
        t.insert(row(i, "r")).expect("insert");
    }
    db.truncate_table("d", "t").expect("truncate");
    t.insert(row(0, "again")).expect("insert");
    assert_eq!(ids(&all(&t)), vec![6]);
    // Bounds on a table without a primary key are row ids.
    let got: Vec<Vec<Value>> = t
        .scan(
            Bound::Included(vec![Value::UInt(6)]),
            Bound::Included(vec![Value::UInt(6)]),
            Direction::Backward,
        )
        .expect("scan")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(got, vec![row(0, "again")]);
    assert!(db.check().expect("check").is_empty());
    db.shutdown().expect("shutdown");
}
