//! `Db::check` and `Db::open_for_check` (behind `quire check`) find what a crash between the
//! mtrs of one row change, or between a DDL's steps, can leave: a missing or extra secondary
//! entry, an orphan space.

mod common;

use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use quire_engine::btree::{BTree, Direction};
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, IndexSpec, TableSpec};
use quire_io::sim::SimVfs;
use quire_io::Vfs;

fn vfs_arc(vfs: &SimVfs) -> Arc<dyn Vfs> {
    Arc::new(vfs.clone())
}

#[test]
fn missing_secondary_entry_and_orphan_space_are_reported() {
    let vfs = SimVfs::new(9);
    let dir = Path::new(common::DIR);
    let db = Db::open_with(vfs_arc(&vfs), dir, common::small_config()).expect("open");
    db.create_database("d").expect("db");
    let int = ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    };
    let mut spec = TableSpec::new(vec![Column::new("k", int), Column::new("v", int)], vec![0]);
    spec.indexes.push(IndexSpec::new("by_v", vec![1]));
    let t = db.create_table("d", "t", spec).expect("table");
    for k in 0..10 {
        t.insert(vec![Value::Int(k), Value::Int(k * 2)])
            .expect("insert");
    }
    assert!(db.check().expect("check").is_empty());
    // What a crash after the clustered mtr of an insert leaves: no secondary entry.
    let def = t.definition().expect("def");
    let ix = BTree::open(db.engine(), def.space, def.indexes[0].root).expect("index");
    let first = ix
        .scan(
            db.engine(),
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward,
        )
        .next()
        .expect("an entry")
        .expect("read");
    ix.delete(db.engine(), &first.key).expect("delete entry");
    let problems = db.check().expect("check");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("clustered row without secondary entry"),
        "{problems:?}"
    );
    // What a crash inside CREATE TABLE leaves: a space no table owns.
    db.engine().create_space("d.orphan").expect("space");
    db.kill();
    let (db, problems) =
        Db::open_for_check(vfs_arc(&vfs), dir, common::small_config()).expect("open for check");
    let db = db.expect("a catalog");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("d.orphan.qsp"), "{problems:?}");
    db.kill();
    // A normal open removes the orphan.
    let db = Db::open_with(vfs_arc(&vfs), dir, common::small_config()).expect("open");
    assert!(db.engine().space_id("d.orphan").is_err());
    db.shutdown().expect("shutdown");
}
