//! Column attributes (ON UPDATE, comments) and table and index comments are kept by the
//! catalog (record version 5, docs/catalog.md): through a restart, an instant definition
//! change (`Db::alter_definition`) and a rebuild (`Db::rebuild_table`).

mod common;

use std::sync::Arc;

use quire_engine::catalog::TableDef;
use quire_engine::row::{Column, ColumnType, Date, DateTime, IntWidth, Value};
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
            Column {
                comment: "a value, 'quoted' ✓".into(),
                ..Column::nullable("v", int)
            },
            Column {
                on_update: true,
                default: Some("current_timestamp()".into()),
                ..Column::new("ts", ColumnType::Timestamp { fsp: 3 })
            },
        ],
        vec![0],
    );
    let mut ix = IndexSpec::new("by_v", vec![1]);
    ix.comment = "index on v".into();
    s.indexes.push(ix);
    s.comment = "a table".into();
    s
}

fn definition(db: &Db) -> TableDef {
    db.table("d", "t")
        .expect("table")
        .definition()
        .expect("definition")
}

fn attributes(def: &TableDef) -> (String, Vec<(String, bool, String)>, Vec<String>) {
    (
        def.comment.clone(),
        def.columns
            .iter()
            .map(|c| (c.name.clone(), c.on_update, c.comment.clone()))
            .collect(),
        def.indexes.iter().map(|ix| ix.comment.clone()).collect(),
    )
}

#[test]
fn attributes_survive_a_restart_an_instant_change_and_a_rebuild() {
    let vfs = SimVfs::new(7);
    let db = open(&vfs);
    db.create_database("d").expect("db");
    let t = db.create_table("d", "t", spec()).expect("create");
    let jan1 = Date {
        year: 2001,
        month: 1,
        day: 1,
    };
    t.insert(vec![
        Value::Int(1),
        Value::Int(10),
        Value::DateTime(DateTime::new(jan1, 0, 0, 0, 0)),
    ])
    .expect("insert");
    let made = attributes(&definition(&db));
    assert_eq!(made.0, "a table");
    assert!(made.1[2].1, "ts has ON UPDATE");
    assert_eq!(made.2, ["index on v"]);
    db.shutdown().expect("shutdown");

    let db = open(&vfs);
    assert_eq!(attributes(&definition(&db)), made, "after a restart");

    // Instant: a new table comment, a column's comment dropped and another's added, ON
    // UPDATE taken off: one record update.
    let mut def = definition(&db);
    def.comment = "changed".into();
    def.columns[1].comment.clear();
    def.columns[0].comment = "the key".into();
    def.columns[2].on_update = false;
    db.alter_definition("d", "t", def, &[Some(0), Some(1), Some(2)])
        .expect("instant change");
    let changed = attributes(&definition(&db));
    assert_eq!(changed.0, "changed");
    assert_eq!(changed.1[0].2, "the key");
    assert!(changed.1[1].2.is_empty() && !changed.1[2].1);
    db.shutdown().expect("shutdown");

    let db = open(&vfs);
    assert_eq!(attributes(&definition(&db)), changed, "after a restart");

    // A rebuild with the attributes in its spec keeps them.
    let mut s = spec();
    s.comment = "rebuilt".into();
    db.rebuild_table::<DbError>("d", "t", s, None, &mut Ok, &mut |_| {})
        .expect("rebuild");
    let rows: Vec<_> = db
        .table("d", "t")
        .expect("table")
        .scan(
            std::ops::Bound::Unbounded,
            std::ops::Bound::Unbounded,
            quire_engine::btree::Direction::Forward,
        )
        .expect("scan")
        .collect();
    assert_eq!(rows.len(), 1, "the row was copied");
    db.shutdown().expect("shutdown");
    let db = open(&vfs);
    let rebuilt = attributes(&definition(&db));
    assert_eq!(rebuilt.0, "rebuilt");
    assert_eq!(rebuilt.1, made.1);
    assert_eq!(rebuilt.2, made.2);
    assert_eq!(
        db.check().expect("check"),
        Vec::<String>::new(),
        "check after the rebuild"
    );
    db.shutdown().expect("shutdown");
}
