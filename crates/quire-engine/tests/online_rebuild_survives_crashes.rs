//! An online table rebuild is atomic at every crash point, with changes committed around
//! it: after recovery the table is the old one (two columns) or the new one (a third column
//! w = v * 10, indexed), `check` is clean, no `~alter` space is left, and every
//! acknowledged change is there (docs/online-ddl.md, "Table rebuilds").

mod common;

use std::ops::Bound;

use common::online_ddl::{
    every_crash_point, int, open_checked, workload, OnlineDdl, Outcome, Rows, FINISHED,
};
use quire_engine::btree::Direction;
use quire_engine::row::{Column, Value};
use quire_engine::table::{Db, DbError, IndexSpec, OnlineOptions, OnlineRebuild, TableSpec};
use quire_io::sim::SimVfs;

/// The rebuilt table: (k, v, w) with w = v * 10 and an index on it.
fn new_spec() -> TableSpec {
    let mut spec = TableSpec::new(
        vec![
            Column::new("k", int()),
            Column::new("v", int()),
            Column::new("w", int()),
        ],
        vec![0],
    );
    spec.indexes.push(IndexSpec::new("by_w", vec![2]));
    spec
}

fn convert(mut row: Vec<Value>) -> Result<Vec<Value>, DbError> {
    let w = match row.get(1) {
        Some(Value::Int(v)) => Value::Int(v * 10),
        _ => Value::Null,
    };
    row.push(w);
    Ok(row)
}

struct Rebuild<'d>(OnlineRebuild<'d>);

impl OnlineDdl for Rebuild<'_> {
    fn scan(&mut self, progress: &mut dyn FnMut(u64) -> bool) -> Result<(), DbError> {
        self.0.scan(&mut convert, progress).map(|_| ())
    }
    fn catch_up(&mut self) -> Result<(), DbError> {
        self.0.catch_up(&mut convert)
    }
    fn finish(self: Box<Self>) -> Result<(), DbError> {
        self.0.finish(&mut convert).map(|_| ())
    }
}

/// `keyed_alike: false` makes the rebuild keep a key map (the path of a primary-key
/// change) in the new space.
fn run(db: &Db, alive: &dyn Fn() -> bool, keyed_alike: bool) -> Outcome {
    workload(db, alive, &|db| {
        let b = db.begin_online_rebuild(
            "d",
            "t",
            new_spec(),
            keyed_alike,
            None,
            OnlineOptions::default(),
        )?;
        let ddl: Box<dyn OnlineDdl + '_> = Box::new(Rebuild(b));
        Ok(ddl)
    })
}

fn table_rows(db: &Db) -> Rows {
    db.table("d", "t")
        .expect("t")
        .scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .expect("scan")
        .map(|r| match r.expect("row").as_slice() {
            [Value::Int(k), Value::Int(v)] => (*k, *v),
            [Value::Int(k), Value::Int(v), Value::Int(w)] => {
                assert_eq!(*w, v * 10, "w of row {k}");
                (*k, *v)
            }
            other => panic!("row {other:?}"),
        })
        .collect()
}

fn check(img: &SimVfs, acked: u32, rows: &Rows, in_flight: &Rows, what: &str) {
    let Some((db, got)) = open_checked(img, acked, rows, in_flight, what, &|_| false, &table_rows)
    else {
        return;
    };
    let t = db
        .table("d", "t")
        .unwrap_or_else(|e| panic!("{what}: table: {e}"));
    let def = t.definition().expect("def");
    if acked == FINISHED {
        assert_eq!(def.columns.len(), 3, "{what}: acknowledged rebuild lost");
    }
    if def.columns.len() == 3 {
        // The new table: every row through the index (check verified the entries).
        let n = t
            .index_scan(
                "by_w",
                Bound::Unbounded,
                Bound::Unbounded,
                Direction::Forward,
            )
            .expect("index scan")
            .count();
        assert_eq!(n, got.len(), "{what}: rows through the index");
    } else {
        assert!(def.indexes.is_empty(), "{what}: {def:?}");
    }
    let spaces = img
        .list_files()
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("alter"))
        .count();
    assert_eq!(spaces, 0, "{what}: a ~alter space left after open");
    db.shutdown().expect("shutdown");
}

#[test]
fn an_online_rebuild_is_atomic_at_every_crash_point() {
    every_crash_point(43, &|db, alive| run(db, alive, true), &table_rows, &check);
}

#[test]
fn an_online_rebuild_with_a_key_map_is_atomic_at_every_crash_point() {
    every_crash_point(43, &|db, alive| run(db, alive, false), &table_rows, &check);
}
