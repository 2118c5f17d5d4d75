//! A rebuild's mark (`TableDef::rebuilt_at`) is an id `TrxSys::reserve_id` hands out and
//! only the catalog records. Numbering after a restart must start above it: otherwise, while
//! no transaction id has been assigned since the restart, every read view misses the mark
//! and each consistent read of the table is refused as older than the rebuild (1412).

mod common;

use std::ops::Bound;
use std::sync::Arc;

use quire_engine::btree::Direction;
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, DbError, TableSpec};
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
    TableSpec::new(vec![Column::new("id", int)], vec![0])
}

#[test]
fn a_rebuilt_table_is_read_after_restarts_that_assigned_no_id() {
    let vfs = SimVfs::new(3);
    let db = open(&vfs);
    db.create_database("d").expect("db");
    let t = db.create_table("d", "t", spec()).expect("create");
    t.insert(vec![Value::Int(1)]).expect("insert");
    // Restarts without a transaction: the next id is the last persisted high-water mark,
    // which `reserve_id` then takes for the rebuild without persisting a new one.
    db.shutdown().expect("shutdown");
    let db = open(&vfs);
    db.shutdown().expect("shutdown");
    let db = open(&vfs);
    db.rebuild_table::<DbError>("d", "t", spec(), None, &mut Ok, &mut |_| {})
        .expect("rebuild");
    db.shutdown().expect("shutdown");
    let db = open(&vfs);
    let rows: Vec<_> = db
        .table("d", "t")
        .expect("table")
        .scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .expect("a fresh view after the restart sees the rebuild")
        .collect();
    assert_eq!(rows.len(), 1);
    db.shutdown().expect("shutdown");
}
