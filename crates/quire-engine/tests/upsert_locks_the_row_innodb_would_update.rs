//! `Transaction::insert_or_lock_duplicate` (INSERT … ON DUPLICATE KEY UPDATE): a row
//! without a conflict is inserted; a row that collides comes back X-locked, and it is the
//! row InnoDB would update: the primary key's conflict first, then the unique indexes' in
//! index order; NULLs never collide; a table without a primary key answers with a handle
//! that `update_row` takes.

mod common;

use std::sync::Arc;
use std::time::Duration;

use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, DbError, IndexSpec, ReadLock, TableSpec, Upsert};
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

fn int() -> ColumnType {
    ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    }
}

/// `(id, a, b)`, unique `ua (a)` then `ub (b)`; with `pk`, `id` is the primary key.
fn spec(pk: bool) -> TableSpec {
    let mut s = TableSpec::new(
        vec![
            Column::new("id", int()),
            Column::nullable("a", int()),
            Column::nullable("b", int()),
        ],
        if pk { vec![0] } else { Vec::new() },
    );
    s.indexes.push(IndexSpec::new("ua", vec![1]).unique());
    s.indexes.push(IndexSpec::new("ub", vec![2]).unique());
    s
}

fn row(id: i64, a: Option<i64>, b: Option<i64>) -> Vec<Value> {
    let v = |x: Option<i64>| x.map_or(Value::Null, Value::Int);
    vec![Value::Int(id), v(a), v(b)]
}

/// The conflict's index and row, or "inserted".
fn outcome(u: &Upsert) -> (String, Vec<Value>) {
    match u {
        Upsert::Inserted(r) => ("inserted".into(), r.clone()),
        Upsert::Duplicate { index, row, .. } => (index.clone(), row.clone()),
    }
}

#[test]
fn the_primary_key_conflict_comes_first_then_unique_indexes_in_order() {
    let vfs = SimVfs::new(1);
    let db = open(&vfs);
    db.create_database("d").expect("db");
    let t = db.create_table("d", "t", spec(true)).expect("table");
    t.insert(row(1, Some(1), Some(1))).expect("row 1");
    t.insert(row(2, Some(2), Some(2))).expect("row 2");
    let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
    // id 1 and a = 2: the primary key's row, not ua's.
    let u = tx
        .insert_or_lock_duplicate(&t, row(1, Some(2), Some(9)))
        .expect("upsert");
    assert_eq!(outcome(&u), ("PRIMARY".into(), row(1, Some(1), Some(1))));
    // a = 2 (row 2) and b = 1 (row 1): ua comes before ub.
    let u = tx
        .insert_or_lock_duplicate(&t, row(3, Some(2), Some(1)))
        .expect("upsert");
    assert_eq!(outcome(&u), ("ua".into(), row(2, Some(2), Some(2))));
    let u = tx
        .insert_or_lock_duplicate(&t, row(3, Some(7), Some(1)))
        .expect("upsert");
    assert_eq!(outcome(&u), ("ub".into(), row(1, Some(1), Some(1))));
    // NULLs never collide; nothing else does: inserted.
    let u = tx
        .insert_or_lock_duplicate(&t, row(3, None, None))
        .expect("upsert");
    assert_eq!(outcome(&u), ("inserted".into(), row(3, None, None)));
    let u = tx
        .insert_or_lock_duplicate(&t, row(4, None, None))
        .expect("upsert");
    assert_eq!(outcome(&u).0, "inserted");
    tx.commit().expect("commit");
}

#[test]
fn the_conflicting_row_stays_x_locked_and_takes_the_update() {
    let vfs = SimVfs::new(1);
    let db = open(&vfs);
    db.create_database("d").expect("db");
    for (name, pk) in [("with_pk", true), ("without_pk", false)] {
        let t = db.create_table("d", name, spec(pk)).expect("table");
        t.insert(row(1, Some(1), Some(1))).expect("row 1");
        let mut a = db.begin(Isolation::RepeatableRead).expect("begin a");
        let u = a
            .insert_or_lock_duplicate(&t, row(5, Some(1), Some(5)))
            .expect("upsert");
        let Upsert::Duplicate {
            handle, row: old, ..
        } = u
        else {
            panic!("{name}: no conflict found");
        };
        assert_eq!(old, row(1, Some(1), Some(1)), "{name}");
        // Another transaction cannot even read the row with a lock meanwhile.
        let mut b = db.begin(Isolation::RepeatableRead).expect("begin b");
        b.set_lock_wait_timeout(Duration::from_millis(100));
        let locked = if pk {
            b.get_locking(&t, &[Value::Int(1)], ReadLock::Shared)
                .map(|_| ())
        } else {
            b.scan_locking_handles(&t, ReadLock::Shared, |_, _| Ok(true))
        };
        assert!(
            matches!(locked, Err(DbError::LockWaitTimeout)),
            "{name}: {locked:?}"
        );
        b.rollback().expect("rollback b");
        assert!(a
            .update_row(&t, &handle, row(1, Some(1), Some(2)))
            .expect("update"));
        a.commit().expect("commit a");
        let rows: Vec<_> = t
            .scan(
                std::ops::Bound::Unbounded,
                std::ops::Bound::Unbounded,
                quire_engine::btree::Direction::Forward,
            )
            .expect("scan")
            .collect::<Result<_, _>>()
            .expect("rows");
        assert_eq!(rows, vec![row(1, Some(1), Some(2))], "{name}");
    }
}
