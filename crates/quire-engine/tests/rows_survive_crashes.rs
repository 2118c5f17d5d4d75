//! Row changes through the table API at every crash point: after recovery (and the
//! rollback of the change in flight, a transaction that did not commit) the table holds
//! every acknowledged change and nothing that was never attempted, and `Db::check` is
//! clean: a row change is one transaction, so its secondary entries come and go with it.

mod common;

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use quire_engine::btree::Direction;
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, IndexSpec, TableSpec};
use quire_io::sim::{CrashMode, SimVfs};
use quire_io::Vfs;

fn open(vfs: &SimVfs) -> Result<Db, quire_engine::table::DbError> {
    Db::open_with(
        Arc::new(vfs.clone()) as Arc<dyn Vfs>,
        Path::new(common::DIR),
        common::small_config(),
    )
}

/// The model after the first n changes: key → value.
fn model(n: usize) -> BTreeMap<i64, i64> {
    let mut m = BTreeMap::new();
    for c in changes().into_iter().take(n) {
        match c {
            (k, Some(v)) => {
                m.insert(k, v);
            }
            (k, None) => {
                m.remove(&k);
            }
        }
    }
    m
}

/// Inserts 0..30, then updates every third, then deletes every fourth.
fn changes() -> Vec<(i64, Option<i64>)> {
    let mut v: Vec<_> = (0..30).map(|k| (k, Some(k))).collect();
    v.extend((0..30).step_by(3).map(|k| (k, Some(k + 100))));
    v.extend((0..30).step_by(4).map(|k| (k, None)));
    v
}

/// Runs the changes; returns how many were acknowledged while the machine was alive.
fn workload(db: &Db, alive: &dyn Fn() -> bool) -> usize {
    let int = ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    };
    let mut spec = TableSpec::new(vec![Column::new("k", int), Column::new("v", int)], vec![0]);
    spec.indexes.push(IndexSpec::new("by_v", vec![1]));
    if db.create_database("d").is_err() || db.create_table("d", "t", spec).is_err() || !alive() {
        return 0;
    }
    let Ok(t) = db.table("d", "t") else { return 0 };
    let mut model = BTreeMap::new();
    let mut acked = 0;
    for (k, v) in changes() {
        let ok = match v {
            Some(v) if model.contains_key(&k) => t
                .update(&[Value::Int(k)], vec![Value::Int(k), Value::Int(v)])
                .map(|_| ()),
            Some(v) => t.insert(vec![Value::Int(k), Value::Int(v)]).map(|_| ()),
            None => t.delete(&[Value::Int(k)]),
        }
        .is_ok();
        if !ok || !alive() {
            break;
        }
        match v {
            Some(v) => model.insert(k, v),
            None => model.remove(&k),
        };
        acked += 1;
    }
    acked
}

#[test]
fn row_changes_are_durable_and_atomic_with_their_index_entries() {
    let vfs = SimVfs::new(41);
    let db = open(&vfs).expect("open");
    assert_eq!(workload(&db, &|| true), changes().len());
    db.kill();
    let total = vfs.op_count();
    for (point, mode) in (0..=total).flat_map(|p| CrashMode::ALL.map(|m| (p, m))) {
        let vfs = SimVfs::new(41);
        vfs.set_crash_point(point);
        let acked = match open(&vfs) {
            Ok(db) => {
                let a = workload(&db, &|| !vfs.is_frozen());
                db.kill();
                a
            }
            Err(_) => 0,
        };
        let what = format!("point {point}/{total} mode {mode:?} acked {acked}");
        let img = vfs.crash_with(mode).0;
        let db = open(&img).unwrap_or_else(|e| panic!("{what}: {e}"));
        let Ok(t) = db.table("d", "t") else {
            assert_eq!(acked, 0, "{what}: table lost");
            db.kill();
            continue;
        };
        let rows: BTreeMap<i64, i64> = t
            .scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
            .expect("scan")
            .map(|r| match r.expect("row")[..] {
                [Value::Int(k), Value::Int(v)] => (k, v),
                _ => panic!("{what}: bad row"),
            })
            .collect();
        // The durable state is the model after `acked` or `acked + 1` changes (the one in
        // flight may have become durable without its acknowledgement).
        let ok = rows == model(acked) || rows == model(acked + 1);
        assert!(ok, "{what}: rows {rows:?}");
        db.wait_for_recovery();
        let problems = db.check().expect("check");
        assert!(problems.is_empty(), "{what}: {problems:?}");
        db.kill();
    }
}
