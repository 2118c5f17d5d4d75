//! CREATE TABLE, CREATE INDEX, RENAME TABLE and DROP TABLE are atomic at every crash point:
//! after recovery every table is fully there (catalog record, file, all its rows, its
//! indexes consistent) or fully gone (no record, no file), and `Db::check` is clean.

mod common;

use std::collections::BTreeSet;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use quire_engine::btree::Direction;
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, IndexSpec, TableSpec};
use quire_io::sim::{CrashMode, SimVfs};
use quire_io::Vfs;

const ROWS: i64 = 20;

fn open(vfs: &SimVfs) -> Result<Db, quire_engine::table::DbError> {
    Db::open_with(
        Arc::new(vfs.clone()) as Arc<dyn Vfs>,
        Path::new(common::DIR),
        common::small_config(),
    )
}

fn spec() -> TableSpec {
    let int = ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    };
    TableSpec::new(vec![Column::new("k", int), Column::new("v", int)], vec![0])
}

/// Steps: 1 db + table a with rows, 2 index on a, 3 a renamed to b, 4 table c with rows,
/// 5 c truncated, 6 c dropped.
fn workload(db: &Db, alive: &dyn Fn() -> bool) -> u32 {
    let mut done = 0;
    let mut step = |ok: bool, n: u32| {
        if ok && alive() {
            done = n;
        }
        ok
    };
    let ok = db.create_database("d").is_ok()
        && db.create_table("d", "a", spec()).is_ok()
        && (0..ROWS).all(|k| {
            db.table("d", "a")
                .and_then(|t| t.insert(vec![Value::Int(k), Value::Int(k % 3)]))
                .is_ok()
        });
    if !step(ok, 1)
        || !step(
            db.create_index("d", "a", IndexSpec::new("by_v", vec![1]))
                .is_ok(),
            2,
        )
        || !step(db.rename_table("d", "a", "d", "b").is_ok(), 3)
        || !step(
            db.create_table("d", "c", spec()).is_ok()
                && (0..5).all(|k| {
                    db.table("d", "c")
                        .and_then(|t| t.insert(vec![Value::Int(k), Value::Int(k)]))
                        .is_ok()
                }),
            4,
        )
        || !step(db.truncate_table("d", "c").is_ok(), 5)
    {
        return done;
    }
    step(db.drop_table("d", "c").is_ok(), 6);
    done
}

fn space_files(vfs: &SimVfs) -> BTreeSet<String> {
    vfs.list_dir(Path::new(common::DIR))
        .expect("list")
        .iter()
        .filter_map(|p| p.to_str().map(String::from))
        .filter(|n| n.ends_with(".qsp") && n != "system.qsp")
        .collect()
}

fn check(img: &SimVfs, acked: u32, what: &str) {
    let db = open(img).unwrap_or_else(|e| panic!("{what}: open: {e}"));
    let problems = db.check().unwrap_or_else(|e| panic!("{what}: check: {e}"));
    // The one residue catalog.md documents: a crash during CREATE INDEX (acknowledged up
    // to step 1) may leave the new tree's pages in table a's space, named by no index.
    let residue = |p: &String| {
        acked == 1 && p.starts_with("d.a: leaked: ") && p.contains("index page(s) of no index")
    };
    let problems: Vec<&String> = problems.iter().filter(|p| !residue(p)).collect();
    assert!(problems.is_empty(), "{what}: {problems:?}");
    let tables: BTreeSet<String> = db
        .databases()
        .iter()
        .flat_map(|d| db.tables(d).expect("tables"))
        .collect();
    assert!(
        !(tables.contains("a") && tables.contains("b")),
        "{what}: a and b both exist"
    );
    if acked >= 1 {
        assert!(
            tables.contains("a") || tables.contains("b"),
            "{what}: a lost"
        );
    }
    if acked >= 3 {
        assert!(tables.contains("b"), "{what}: acknowledged rename lost");
    }
    // At acked == 5 the drop of c was in flight: c may be there or gone, but whole.
    if acked >= 6 {
        assert!(
            !tables.contains("c"),
            "{what}: acknowledged drop of c undone"
        );
    }
    for name in &tables {
        let t = db.table("d", name).expect("table");
        let n = t
            .scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
            .expect("scan")
            .count() as i64;
        if name != "c" && acked >= 1 {
            assert_eq!(n, ROWS, "{what}: table {name} has {n} rows");
        }
        if name == "c" {
            // Before the truncate is acknowledged: all 5 rows (or a prefix while they were
            // being inserted) or none; after: none.
            if acked == 4 {
                assert!(n == 5 || n == 0, "{what}: c has {n} rows mid-truncate");
            }
            if acked >= 5 {
                assert_eq!(n, 0, "{what}: acknowledged truncate undone");
            }
        }
        if acked >= 2 && name != "c" {
            assert_eq!(
                t.lookup_index("by_v", &[Value::Int(0)])
                    .unwrap_or_else(|e| panic!("{what}: acknowledged index lost: {e}"))
                    .len(),
                7
            );
        }
    }
    // Files and catalog agree: one file per table, no orphans.
    let want: BTreeSet<String> = tables.iter().map(|t| format!("d.{t}.qsp")).collect();
    assert_eq!(
        space_files(img),
        want,
        "{what}: files differ from the catalog"
    );
    db.shutdown().expect("shutdown");
}

#[test]
fn ddl_is_atomic_at_every_crash_point() {
    let vfs = SimVfs::new(31);
    let db = open(&vfs).expect("open");
    assert_eq!(workload(&db, &|| true), 6);
    db.kill();
    let total = vfs.op_count();
    for (point, mode) in (0..=total).flat_map(|p| CrashMode::ALL.map(|m| (p, m))) {
        let vfs = SimVfs::new(31);
        vfs.set_crash_point(point);
        // A crash inside open itself acknowledges nothing.
        let acked = match open(&vfs) {
            Ok(db) => {
                let a = workload(&db, &|| !vfs.is_frozen());
                db.kill();
                a
            }
            Err(_) => 0,
        };
        check(
            &vfs.crash_with(mode).0,
            acked,
            &format!("point {point}/{total} mode {mode:?}"),
        );
    }
}
