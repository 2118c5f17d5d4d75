//! ALTER TABLE's rebuild (`Db::rebuild_table`) is atomic at every crash point: after
//! recovery the table is entirely the old one (old columns, old rows) or entirely the new
//! one (new columns, every row converted, its indexes complete), one space file is left,
//! and `Db::check` is clean. Also: a failed conversion leaves the old table, the history of
//! the old table is purged without touching the new one, and a snapshot older than the
//! rebuild is refused (1412) rather than shown rows it should not see.

mod common;

use std::collections::BTreeSet;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use quire_engine::btree::Direction;
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, DbError, IndexSpec, TableSpec};
use quire_engine::trx::Isolation;
use quire_io::sim::{CrashMode, SimVfs};
use quire_io::Vfs;

const ROWS: i64 = 30;

fn int() -> ColumnType {
    ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    }
}

fn big() -> ColumnType {
    ColumnType::Int {
        width: IntWidth::Big,
        unsigned: false,
    }
}

fn open(vfs: &SimVfs) -> Result<Db, DbError> {
    Db::open_with(
        Arc::new(vfs.clone()) as Arc<dyn Vfs>,
        Path::new(common::DIR),
        common::small_config(),
    )
}

/// The old table: (k INT PRIMARY KEY, v INT, s VARCHAR(20)), index by_v (v).
fn old_spec() -> TableSpec {
    let mut spec = TableSpec::new(
        vec![
            Column::new("k", int()),
            Column::new("v", int()),
            Column::nullable("s", ColumnType::VarChar { max_chars: 20 }),
        ],
        vec![0],
    );
    spec.indexes.push(IndexSpec::new("by_v", vec![1]));
    spec
}

/// The new table: (k INT PRIMARY KEY, s VARCHAR(20), v BIGINT, w INT), indexes by_w
/// (w, unique) and by_v (v): columns reordered, one type widened, one column added.
fn new_spec() -> TableSpec {
    let mut spec = TableSpec::new(
        vec![
            Column::new("k", int()),
            Column::nullable("s", ColumnType::VarChar { max_chars: 20 }),
            Column::new("v", big()),
            Column::nullable("w", int()),
        ],
        vec![0],
    );
    spec.indexes.push(IndexSpec::new("by_w", vec![3]).unique());
    spec.indexes.push(IndexSpec::new("by_v", vec![2]));
    spec
}

/// Old row (k, v, s) → new row (k, s, v, w = k * 10).
fn convert(row: Vec<Value>) -> Result<Vec<Value>, DbError> {
    let k = match row[0] {
        Value::Int(k) => k,
        _ => 0,
    };
    Ok(vec![
        row[0].clone(),
        row[2].clone(),
        row[1].clone(),
        Value::Int(k * 10),
    ])
}

fn load(db: &Db) -> Result<(), DbError> {
    db.create_database("d")?;
    db.create_table("d", "a", old_spec())?;
    let t = db.table("d", "a")?;
    for k in 0..ROWS {
        t.insert(vec![
            Value::Int(k),
            Value::Int(k % 4),
            Value::Str(format!("row {k}")),
        ])?;
    }
    // Deleted and updated rows leave history (undo) and a delete-marked record behind.
    t.insert(vec![Value::Int(ROWS), Value::Int(9), Value::Null])?;
    t.delete(&[Value::Int(ROWS)])?;
    t.update(
        &[Value::Int(1)],
        vec![Value::Int(1), Value::Int(1), Value::Str("changed".into())],
    )?;
    Ok(())
}

/// Steps: 1 table loaded, 2 rebuilt to the new schema.
fn workload(db: &Db, alive: &dyn Fn() -> bool) -> u32 {
    if load(db).is_err() || !alive() {
        return 0;
    }
    let r = db.rebuild_table::<DbError>("d", "a", new_spec(), None, &mut convert, &mut |_| {});
    if r.is_ok() && alive() {
        2
    } else {
        1
    }
}

fn space_files(vfs: &SimVfs) -> BTreeSet<String> {
    vfs.list_dir(Path::new(common::DIR))
        .expect("list")
        .iter()
        .filter_map(|p| p.to_str().map(String::from))
        .filter(|n| n.ends_with(".qsp") && n != "system.qsp")
        .collect()
}

fn rows(db: &Db) -> Vec<Vec<Value>> {
    db.table("d", "a")
        .expect("table")
        .scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .expect("scan")
        .collect::<Result<_, _>>()
        .expect("rows")
}

fn s_of(k: i64) -> Value {
    if k == 1 {
        Value::Str("changed".into())
    } else {
        Value::Str(format!("row {k}"))
    }
}

/// The table is entirely old or entirely new; returns whether it is new.
fn assert_whole(db: &Db, what: &str) -> bool {
    let def = db
        .table("d", "a")
        .expect("table")
        .definition()
        .expect("def");
    let rows = rows(db);
    let new = def.columns.len() == 4;
    assert_eq!(rows.len() as i64, ROWS, "{what}: {} rows", rows.len());
    for (k, r) in (0..ROWS).zip(&rows) {
        let want = if new {
            vec![
                Value::Int(k),
                s_of(k),
                Value::Int(k % 4),
                Value::Int(k * 10),
            ]
        } else {
            vec![Value::Int(k), Value::Int(k % 4), s_of(k)]
        };
        assert_eq!(r, &want, "{what}: row {k}");
    }
    let t = db.table("d", "a").expect("table");
    assert_eq!(
        t.lookup_index("by_v", &[Value::Int(2)])
            .unwrap_or_else(|e| panic!("{what}: by_v: {e}"))
            .len(),
        ((0..ROWS).filter(|k| k % 4 == 2).count()),
        "{what}: by_v"
    );
    if new {
        assert_eq!(
            t.lookup_index("by_w", &[Value::Int(50)])
                .unwrap_or_else(|e| panic!("{what}: by_w: {e}")),
            vec![vec![Value::Int(5)]],
            "{what}: by_w"
        );
    }
    new
}

fn check(img: &SimVfs, acked: u32, what: &str) {
    let db = open(img).unwrap_or_else(|e| panic!("{what}: open: {e}"));
    let problems = db.check().unwrap_or_else(|e| panic!("{what}: check: {e}"));
    assert!(problems.is_empty(), "{what}: {problems:?}");
    let tables = db.tables("d").unwrap_or_default();
    if acked >= 1 {
        assert_eq!(tables, vec!["a".to_string()], "{what}: table lost");
    }
    if tables.contains(&"a".to_string()) && acked >= 1 {
        let new = assert_whole(&db, what);
        if acked >= 2 {
            assert!(new, "{what}: acknowledged rebuild undone");
        }
        // The old table's history is purged without harm to the rebuilt one.
        db.purge_now()
            .unwrap_or_else(|e| panic!("{what}: purge: {e}"));
        let problems = db.check().unwrap_or_else(|e| panic!("{what}: check: {e}"));
        assert!(problems.is_empty(), "{what}: after purge: {problems:?}");
        assert_eq!(
            assert_whole(&db, what),
            new,
            "{what}: purge changed the table"
        );
    }
    let want: BTreeSet<String> = tables.iter().map(|t| format!("d.{t}.qsp")).collect();
    assert_eq!(
        space_files(img),
        want,
        "{what}: files differ from the catalog"
    );
    db.shutdown().expect("shutdown");
}

#[test]
fn rebuild_is_atomic_at_every_crash_point() {
    let vfs = SimVfs::new(47);
    let db = open(&vfs).expect("open");
    assert_eq!(workload(&db, &|| true), 2);
    db.kill();
    let total = vfs.op_count();
    for (point, mode) in (0..=total).flat_map(|p| CrashMode::ALL.map(|m| (p, m))) {
        let vfs = SimVfs::new(47);
        vfs.set_crash_point(point);
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

#[test]
fn a_failed_conversion_leaves_the_old_table() {
    let dir = tempfile::tempdir().expect("dir");
    let db = Db::open(dir.path(), common::small_config()).expect("open");
    load(&db).expect("load");
    let mut n = 0;
    let mut failing = |row: Vec<Value>| -> Result<Vec<Value>, DbError> {
        n += 1;
        if n == 10 {
            return Err(DbError::RowNotFound);
        }
        convert(row)
    };
    let r = db.rebuild_table("d", "a", new_spec(), None, &mut failing, &mut |_| {});
    assert!(matches!(r, Err(DbError::RowNotFound)), "{r:?}");
    assert!(!assert_whole(&db, "after a failed rebuild"));
    // A duplicate in the new unique index fails it too, as 1062 names it.
    let mut dup = |row: Vec<Value>| -> Result<Vec<Value>, DbError> {
        let mut r = convert(row)?;
        r[3] = Value::Int(7);
        Ok(r)
    };
    match db.rebuild_table("d", "a", new_spec(), None, &mut dup, &mut |_| {}) {
        Err(DbError::DuplicateKey { index, entry }) => {
            assert_eq!((index.as_str(), entry.as_str()), ("by_w", "7"));
        }
        other => panic!("{other:?}"),
    }
    assert!(!assert_whole(&db, "after a duplicate"));
    assert!(db.check().expect("check").is_empty());
    let files: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".qsp") && n != "system.qsp")
        .collect();
    assert_eq!(files, vec!["d.a.qsp".to_string()]);
    db.shutdown().expect("shutdown");
}

#[test]
fn a_snapshot_older_than_the_rebuild_is_refused_and_history_is_purged() {
    let dir = tempfile::tempdir().expect("dir");
    let db = Db::open(dir.path(), common::small_config()).expect("open");
    load(&db).expect("load");
    let old = db.snapshot();
    db.rebuild_table("d", "a", new_spec(), None, &mut convert, &mut |_| {})
        .expect("rebuild");
    let t = db.table("d", "a").expect("table");
    let r = t.scan_in_snapshot(
        Bound::Unbounded,
        Bound::Unbounded,
        Direction::Forward,
        Some(old.clone()),
    );
    assert!(
        matches!(r, Err(DbError::TableDefinitionChanged)),
        "scan: {:?}",
        r.err()
    );
    assert!(matches!(
        t.get_in(&[Value::Int(3)], Some(&old)),
        Err(DbError::TableDefinitionChanged)
    ));
    drop(old);
    // A transaction begun after the rebuild reads and writes the new table.
    let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
    assert_eq!(
        tx.get(&t, &[Value::Int(3)]).expect("get"),
        Some(vec![Value::Int(3), s_of(3), Value::Int(3), Value::Int(30)])
    );
    tx.update(
        &t,
        &[Value::Int(3)],
        vec![Value::Int(3), Value::Null, Value::Int(3), Value::Int(31)],
    )
    .expect("update");
    tx.commit().expect("commit");
    db.purge_now().expect("purge");
    assert!(db.check().expect("check").is_empty());
    // The new definition and the rows survive a restart.
    db.shutdown().expect("shutdown");
    let db = Db::open(dir.path(), common::small_config()).expect("reopen");
    let t = db.table("d", "a").expect("table");
    assert_eq!(
        t.get(&[Value::Int(3)]).expect("get"),
        Some(vec![
            Value::Int(3),
            Value::Null,
            Value::Int(3),
            Value::Int(31)
        ])
    );
    assert_eq!(t.definition().expect("def").columns.len(), 4);
    assert!(db.check().expect("check").is_empty());
    db.shutdown().expect("shutdown");
}
