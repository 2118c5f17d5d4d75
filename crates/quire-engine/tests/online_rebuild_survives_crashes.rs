//! An online table rebuild is atomic at every crash point, with changes committed around
//! it: after recovery the table is the old one (two columns) or the new one (a third column
//! w = v * 10, indexed), `check` is clean, no `~alter` space is left, and every
//! acknowledged change is there (docs/online-ddl.md, "Table rebuilds").

mod common;

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use quire_engine::btree::Direction;
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, DbError, IndexSpec, OnlineOptions, TableSpec};
use quire_engine::trx::Isolation;
use quire_io::sim::{CrashMode, SimVfs};
use quire_io::Vfs;

const ROWS: i64 = 40;

type Rows = BTreeMap<i64, i64>;

fn open(vfs: &SimVfs) -> Result<Db, quire_engine::table::DbError> {
    Db::open_with(
        Arc::new(vfs.clone()) as Arc<dyn Vfs>,
        Path::new(common::DIR),
        common::small_config(),
    )
}

fn int() -> ColumnType {
    ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    }
}

fn spec() -> TableSpec {
    TableSpec::new(
        vec![Column::new("k", int()), Column::new("v", int())],
        vec![0],
    )
}

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

/// The changes made during the build, in order, each with the rows after it.
fn scripted(db: &Db, i: i64, rows: &mut Rows) -> bool {
    let Ok(t) = db.table("d", "t") else {
        return false;
    };
    let k = i % ROWS;
    match i % 5 {
        0 => {
            let ok = t
                .update(&[Value::Int(k)], vec![Value::Int(k), Value::Int(100 + i)])
                .is_ok();
            if ok {
                rows.insert(k, 100 + i);
            }
            ok
        }
        1 => {
            let ok = t
                .insert(vec![Value::Int(1000 + i), Value::Int(i % 3)])
                .is_ok();
            if ok {
                rows.insert(1000 + i, i % 3);
            }
            ok
        }
        2 => {
            let ok = t.delete(&[Value::Int(k)]).is_ok();
            if ok {
                rows.remove(&k);
            }
            ok
        }
        3 => {
            // Rolled back: no change to the rows.
            let Ok(mut tx) = db.begin(Isolation::RepeatableRead) else {
                return false;
            };
            let _ = tx.update(
                &t,
                &[Value::Int(k + 1)],
                vec![Value::Int(k + 1), Value::Int(-1)],
            );
            let _ = tx.insert(&t, vec![Value::Int(5000 + i), Value::Int(-2)]);
            tx.rollback().is_ok()
        }
        _ => db.purge_now().is_ok(),
    }
}

/// Steps: 1 the table with its rows; then one per acknowledged change during the build;
/// `FINISHED` when the build was acknowledged. Returns (steps, rows after them, the rows
/// the change in flight would have made).
const FINISHED: u32 = 1000;

fn workload(db: &Db, alive: &dyn Fn() -> bool, keyed_alike: bool) -> (u32, Rows, Rows) {
    let mut rows = Rows::new();
    let setup = db.create_database("d").is_ok()
        && db.create_table("d", "t", spec()).is_ok()
        && (0..ROWS).all(|k| {
            db.table("d", "t")
                .and_then(|t| t.insert(vec![Value::Int(k), Value::Int(k % 3)]))
                .is_ok()
        });
    if !setup || !alive() {
        return (0, rows.clone(), rows);
    }
    for k in 0..ROWS {
        rows.insert(k, k % 3);
    }
    let mut acked = 1;
    let mut in_flight = rows.clone();
    let Ok(mut b) = db.begin_online_rebuild(
        "d",
        "t",
        new_spec(),
        keyed_alike,
        None,
        OnlineOptions::default(),
    ) else {
        return (acked, rows, in_flight);
    };
    let mut i = 0;
    let mut failed = false;
    let scan = b.scan(&mut convert, &mut |n| {
        if failed {
            return false;
        }
        if n % 3 == 0 {
            let mut next = rows.clone();
            let ok = scripted(db, i, &mut next);
            i += 1;
            in_flight = next.clone();
            if ok && alive() {
                rows = next;
                acked += 1;
            } else {
                failed = true;
            }
        }
        true
    });
    if scan.is_err() || failed {
        return (acked, rows, in_flight);
    }
    for _ in 0..4 {
        let mut next = rows.clone();
        let ok = scripted(db, i, &mut next);
        i += 1;
        in_flight = next.clone();
        if !(ok && alive()) {
            return (acked, rows, in_flight);
        }
        rows = next;
        acked += 1;
    }
    if b.catch_up(&mut convert).is_err() {
        return (acked, rows.clone(), rows);
    }
    in_flight = rows.clone();
    if b.finish(&mut convert).is_ok() && alive() {
        acked = FINISHED;
    }
    (acked, rows, in_flight)
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
    let db = open(img).unwrap_or_else(|e| panic!("{what}: open: {e}"));
    let problems: Vec<String> = db
        .check()
        .unwrap_or_else(|e| panic!("{what}: check: {e}"))
        .into_iter()
        .collect();
    assert!(problems.is_empty(), "{what}: {problems:?}");
    if acked == 0 {
        db.shutdown().expect("shutdown");
        return;
    }
    let t = db
        .table("d", "t")
        .unwrap_or_else(|e| panic!("{what}: table: {e}"));
    let got = table_rows(&db);
    assert!(
        got == *rows || got == *in_flight,
        "{what}: rows {got:?}, acknowledged {rows:?}"
    );
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

/// Every crash point of one rebuild; `keyed_alike: false` makes it keep a key map (the
/// path of a primary-key change) in the new space.
fn every_crash_point(keyed_alike: bool) {
    let vfs = SimVfs::new(43);
    let db = open(&vfs).expect("open");
    let (acked, rows, _) = workload(&db, &|| true, keyed_alike);
    assert_eq!(acked, FINISHED);
    assert_eq!(table_rows(&db), rows);
    db.kill();
    let total = vfs.op_count();
    // (crashes mid-build with changes acknowledged, crashes after the build acknowledged)
    let mut seen = (0, 0);
    // Points past the last step too: the background threads' I/O varies from run to run,
    // so a run may take more steps than the first one did.
    for (point, mode) in (0..=total + total / 4).flat_map(|p| CrashMode::ALL.map(|m| (p, m))) {
        let vfs = SimVfs::new(43);
        vfs.set_crash_point(point);
        let (acked, rows, in_flight) = match open(&vfs) {
            Ok(db) => {
                let r = workload(&db, &|| !vfs.is_frozen(), keyed_alike);
                db.kill();
                r
            }
            Err(_) => (0, Rows::new(), Rows::new()),
        };
        if acked == FINISHED {
            seen.1 += 1;
        } else if acked > 1 {
            seen.0 += 1;
        }
        check(
            &vfs.crash_with(mode).0,
            acked,
            &rows,
            &in_flight,
            &format!("point {point}/{total} mode {mode:?} acked {acked}"),
        );
    }
    assert!(seen.0 > 0 && seen.1 > 0, "crash points {total}: {seen:?}");
    eprintln!(
        "{total} I/O steps; crashes mid-rebuild {}, after it {}",
        seen.0, seen.1
    );
}

#[test]
fn an_online_rebuild_is_atomic_at_every_crash_point() {
    every_crash_point(true);
}

#[test]
fn an_online_rebuild_with_a_key_map_is_atomic_at_every_crash_point() {
    every_crash_point(false);
}
