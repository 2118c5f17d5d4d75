//! A table rebuilt online (`Db::begin_online_rebuild`) while its rows change ends up holding
//! exactly the conversion of every row's newest version, with indexes that match
//! (`Db::check`); conversion errors and UNIQUE conflicts of rows that change again are
//! settled by the log, the ones that stay fail the rebuild leaving the table as it was
//! (docs/online-ddl.md, "Table rebuilds").

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use quire_engine::btree::Direction;
use quire_engine::config::Config;
use quire_engine::row::{Column, ColumnType, IntWidth, LobSize, Value};
use quire_engine::table::{Db, DbError, IndexSpec, OnlineOptions, OnlineRebuild, TableSpec};
use quire_engine::trx::Isolation;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn int() -> ColumnType {
    ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    }
}

fn config() -> Config {
    Config {
        page_size: 4096,
        buffer_pool_size: 256 * 4096,
        log_file_size: 8 << 20,
        log_buffer_size: 1 << 20,
        purge_threads: 0,
        ..Config::default()
    }
}

/// (k INT PRIMARY KEY, v INT, s TEXT NULL)
fn old_spec() -> TableSpec {
    TableSpec::new(
        vec![
            Column::new("k", int()),
            Column::new("v", int()),
            Column::nullable("s", ColumnType::Text(LobSize::Medium)),
        ],
        vec![0],
    )
}

/// The rebuilt table: (k, w INT, v, s), w = v * 10 added before v, indexed; `unique_w`
/// makes that index UNIQUE.
fn new_spec(unique_w: bool) -> TableSpec {
    let mut spec = TableSpec::new(
        vec![
            Column::new("k", int()),
            Column::new("w", int()),
            Column::new("v", int()),
            Column::nullable("s", ColumnType::Text(LobSize::Medium)),
        ],
        vec![0],
    );
    let ix = IndexSpec::new("by_w", vec![1]);
    spec.indexes.push(if unique_w { ix.unique() } else { ix });
    spec.indexes.push(IndexSpec::new("by_v", vec![2]));
    spec
}

/// Old row → new row; v = -13 does not convert (a strict-mode error, say).
fn convert(row: Vec<Value>) -> Result<Vec<Value>, DbError> {
    if row.get(1) == Some(&Value::Int(-13)) {
        return Err(DbError::Interrupted);
    }
    Ok(widened(row))
}

/// (k, v, s) → (k, w, v, s), w = v * 10.
fn widened(row: Vec<Value>) -> Vec<Value> {
    let mut it = row.into_iter();
    let (k, v, s) = (
        it.next().unwrap_or(Value::Null),
        it.next().unwrap_or(Value::Null),
        it.next().unwrap_or(Value::Null),
    );
    let w = match v {
        Value::Int(v) => Value::Int(v * 10),
        _ => Value::Null,
    };
    vec![k, w, v, s]
}

/// Tables d.t and its shadow d.u (never rebuilt) with `n` rows v = k % 7.
fn setup(dir: &std::path::Path, n: i64) -> Db {
    let db = Db::open(dir, config()).expect("open");
    db.create_database("d").expect("db");
    for name in ["t", "u"] {
        db.create_table("d", name, old_spec()).expect("table");
        let t = db.table("d", name).expect("t");
        for k in 0..n {
            t.insert(vec![Value::Int(k), Value::Int(k % 7), Value::Null])
                .expect("insert");
        }
    }
    db
}

type Rows = BTreeMap<i64, (i64, Value)>;

/// The rows of `name` as (k → (v, s)), of either schema (the new one checked: w = v * 10).
fn rows(db: &Db, name: &str) -> Rows {
    db.table("d", name)
        .expect("t")
        .scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .expect("scan")
        .map(|r| match r.expect("row").as_slice() {
            [Value::Int(k), Value::Int(v), s] => (*k, (*v, s.clone())),
            [Value::Int(k), Value::Int(w), Value::Int(v), s] => {
                assert_eq!(*w, v * 10, "w of row {k}");
                (*k, (*v, s.clone()))
            }
            other => panic!("row {other:?}"),
        })
        .collect()
}

/// The rebuilt table holds the shadow's rows, its indexes find each of them, and `check`
/// is clean.
fn assert_rebuilt_matches(db: &Db) {
    let want = rows(db, "u");
    let got = rows(db, "t");
    let differ: Vec<(i64, Option<i64>, Option<i64>)> = got
        .keys()
        .chain(want.keys())
        .filter(|k| got.get(k) != want.get(k))
        .map(|k| (*k, got.get(k).map(|r| r.0), want.get(k).map(|r| r.0)))
        .take(20)
        .collect();
    assert!(
        differ.is_empty(),
        "rebuilt (k, v) against the shadow's: {differ:?}"
    );
    let t = db.table("d", "t").expect("t");
    for ix in ["by_w", "by_v"] {
        let n = t
            .index_scan(ix, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
            .expect("index scan")
            .count();
        assert_eq!(n, want.len(), "rows through {ix}");
    }
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
}

/// One change, made alike to t and its shadow u: inserts, updates (some with an off-page
/// value), deletes, primary-key updates, a rolled-back transaction, and purge.
fn change(db: &Db, rng: &mut StdRng, next: &mut i64) {
    let k = rng.gen_range(0..*next);
    let op = rng.gen_range(0..8);
    let v = rng.gen_range(0..7);
    let big = rng.gen_bool(0.3);
    for name in ["t", "u"] {
        let t = db.table("d", name).expect("t");
        let wide = t.definition().expect("def").columns.len() == 4;
        let s = if big {
            Value::Str(format!("{k}").repeat(1500))
        } else {
            Value::Null
        };
        let _ = match op {
            0 => t
                .insert(widen(wide, vec![Value::Int(*next), Value::Int(v), s]))
                .map(|_| ()),
            1..=3 => t
                .update(
                    &[Value::Int(k)],
                    widen(wide, vec![Value::Int(k), Value::Int(v), s]),
                )
                .map(|_| ()),
            4 => t.delete(&[Value::Int(k)]).map(|_| ()),
            5 => t
                .update(
                    &[Value::Int(k)],
                    widen(wide, vec![Value::Int(*next), Value::Int(v), s]),
                )
                .map(|_| ()),
            6 => {
                let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
                let _ = tx.update(
                    &t,
                    &[Value::Int(k)],
                    widen(
                        wide,
                        vec![Value::Int(k), Value::Int(-13), Value::Str("x".repeat(3000))],
                    ),
                );
                let _ = tx.insert(
                    &t,
                    widen(
                        wide,
                        vec![Value::Int(*next + 1_000_000), Value::Int(-13), Value::Null],
                    ),
                );
                let _ = tx.delete(&t, &[Value::Int((k + 1) % *next)]);
                tx.rollback()
            }
            _ => db.purge_now().map(|_| ()),
        };
    }
    if op == 0 || op == 5 {
        *next += 1;
    }
}

/// An old-schema row as the new schema has it, when `wide`.
fn widen(wide: bool, row: Vec<Value>) -> Vec<Value> {
    if !wide {
        return row;
    }
    widened(row)
}

/// Starts an online rebuild of `d.<table>` to `spec` with the default options.
fn rebuild<'d>(db: &'d Db, table: &str, spec: TableSpec, keyed_alike: bool) -> OnlineRebuild<'d> {
    db.begin_online_rebuild(
        "d",
        table,
        spec,
        keyed_alike,
        None,
        OnlineOptions::default(),
    )
    .expect("begin")
}

#[test]
fn changes_during_the_scan_and_catch_up_reach_the_rebuilt_table() {
    let dir = tempfile::tempdir().expect("dir");
    let db = setup(dir.path(), 2000);
    let mut rng = StdRng::seed_from_u64(7);
    let mut next = 2000;
    let mut b = rebuild(&db, "t", new_spec(false), true);
    for _ in 0..50 {
        change(&db, &mut rng, &mut next);
    }
    b.scan(&mut convert, &mut |n| {
        if n % 10 == 0 {
            change(&db, &mut rng, &mut next);
        }
        true
    })
    .expect("scan");
    for _ in 0..200 {
        change(&db, &mut rng, &mut next);
    }
    b.catch_up(&mut convert).expect("catch up");
    for _ in 0..100 {
        change(&db, &mut rng, &mut next);
    }
    let r = b.finish(&mut convert).expect("finish");
    assert_rebuilt_matches(&db);
    assert_eq!(r.rows as usize, rows(&db, "u").len());
    // The new table takes DML as any other from now on, and survives a restart.
    for _ in 0..200 {
        change(&db, &mut rng, &mut next);
    }
    assert_rebuilt_matches(&db);
    db.shutdown().expect("shutdown");
    let db = Db::open(dir.path(), config()).expect("reopen");
    assert_rebuilt_matches(&db);
    assert_eq!(
        db.table("d", "t")
            .expect("t")
            .definition()
            .expect("def")
            .columns
            .len(),
        4
    );
    db.shutdown().expect("shutdown");
}

#[test]
fn a_log_past_its_memory_bound_spills_and_is_applied_whole() {
    let dir = tempfile::tempdir().expect("dir");
    let db = setup(dir.path(), 500);
    let mut rng = StdRng::seed_from_u64(11);
    let mut next = 500;
    let opts = OnlineOptions {
        mem_bound: 64,
        ..OnlineOptions::default()
    };
    let mut b = db
        .begin_online_rebuild("d", "t", new_spec(false), true, None, opts)
        .expect("begin");
    b.scan(&mut convert, &mut |n| {
        if n % 3 == 0 {
            change(&db, &mut rng, &mut next);
        }
        true
    })
    .expect("scan");
    assert!(b.spilled_bytes() > 0, "nothing spilled");
    b.finish(&mut convert).expect("finish");
    assert_rebuilt_matches(&db);
    db.shutdown().expect("shutdown");
}

#[test]
fn a_log_past_its_max_size_fails_the_rebuild_and_keeps_the_table() {
    let dir = tempfile::tempdir().expect("dir");
    let db = setup(dir.path(), 200);
    let opts = OnlineOptions {
        log_max_size: 500,
        ..OnlineOptions::default()
    };
    let mut b = db
        .begin_online_rebuild("d", "t", new_spec(false), true, None, opts)
        .expect("begin");
    let t = db.table("d", "t").expect("t");
    b.scan(&mut convert, &mut |n| {
        // DML goes on while the log is too big: it never fails for the rebuild's sake.
        t.update(
            &[Value::Int(n as i64 % 200)],
            vec![
                Value::Int(n as i64 % 200),
                Value::Int(n as i64),
                Value::Null,
            ],
        )
        .expect("update during the rebuild");
        true
    })
    .expect("scan");
    match b.finish(&mut convert) {
        Err(DbError::OnlineLogTooBig { index }) => assert_eq!(index, "PRIMARY"),
        other => panic!("expected 1799, got {other:?}"),
    }
    let def = t.definition().expect("def");
    assert_eq!(def.columns.len(), 3);
    assert!(def.indexes.is_empty());
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    assert_no_alter_file(dir.path());
    db.shutdown().expect("shutdown");
}

/// No `~alter` space is left in the data directory.
fn assert_no_alter_file(dir: &std::path::Path) {
    let left: Vec<String> = walk(dir)
        .into_iter()
        .filter(|n| n.contains("~alter") || n.contains("@007ealter"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("read dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p.display().to_string());
        }
    }
    out
}

#[test]
fn an_uncommitted_row_that_does_not_convert_waits_and_a_committed_one_fails_the_rebuild() {
    let dir = tempfile::tempdir().expect("dir");
    let db = setup(dir.path(), 300);
    let t = db.table("d", "t").expect("t");
    // A bad version made during the scan by a transaction that rolls back before the end:
    // deferred, then copied as it was.
    let mut b = rebuild(&db, "t", new_spec(false), true);
    let mut tx = Some(db.begin(Isolation::RepeatableRead).expect("begin"));
    b.scan(&mut convert, &mut |n| {
        if n == 100 {
            if let Some(tx) = tx.as_mut() {
                tx.update(
                    &t,
                    &[Value::Int(250)],
                    vec![Value::Int(250), Value::Int(-13), Value::Null],
                )
                .expect("bad value");
            }
        }
        true
    })
    .expect("scan defers the row");
    b.catch_up(&mut convert).expect("catch up defers it again");
    tx.take().expect("tx").rollback().expect("rollback");
    drop(tx);
    b.finish(&mut convert).expect("finish");
    let got = rows(&db, "t");
    assert_eq!(got.len(), 300);
    assert_eq!(got[&250].0, 250 % 7);
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    // A committed one (in the shadow table, not rebuilt yet): the conversion's error at
    // once, and the table as it was.
    let before = rows(&db, "u");
    let mut b = rebuild(&db, "u", new_spec(false), true);
    let u = db.table("d", "u").expect("u");
    let mut read = 0;
    let r = b.scan(&mut convert, &mut |n| {
        read = n;
        if n == 10 {
            u.insert(vec![Value::Int(5000), Value::Int(-13), Value::Null])
                .expect("bad row");
        }
        true
    });
    assert!(matches!(r, Err(DbError::Interrupted)), "{r:?}");
    assert_eq!(read, 301, "the scan stopped at the bad row");
    drop(b);
    let mut want = before;
    want.insert(5000, (-13, Value::Null));
    assert_eq!(rows(&db, "u"), want);
    assert_eq!(u.definition().expect("def").columns.len(), 3);
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    assert_no_alter_file(dir.path());
    db.shutdown().expect("shutdown");
}

#[test]
fn a_unique_conflict_settled_during_the_rebuild_is_no_duplicate_and_one_left_is_1062() {
    let dir = tempfile::tempdir().expect("dir");
    let db = Db::open(dir.path(), config()).expect("open");
    db.create_database("d").expect("db");
    db.create_table("d", "t", old_spec()).expect("table");
    let t = db.table("d", "t").expect("t");
    for k in 0..100 {
        t.insert(vec![Value::Int(k), Value::Int(k), Value::Null])
            .expect("insert");
    }
    let mut b = rebuild(&db, "t", new_spec(true), true);
    b.scan(&mut convert, &mut |n| {
        if n == 10 {
            // Row 5's value goes to row 90 after the scan copied row 5 and before it
            // reaches row 90: the scan meets w = 50 twice, and the log settles it.
            t.update(
                &[Value::Int(5)],
                vec![Value::Int(5), Value::Int(1000), Value::Null],
            )
            .expect("move away");
            t.update(
                &[Value::Int(90)],
                vec![Value::Int(90), Value::Int(5), Value::Null],
            )
            .expect("move in");
        }
        true
    })
    .expect("scan");
    b.finish(&mut convert).expect("finish");
    assert_eq!(
        t.lookup_index("by_w", &[Value::Int(50)]).expect("lookup")[0][0],
        Value::Int(90)
    );
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    // A duplicate made during the rebuild (of another table) and left there: 1062 at the
    // end.
    db.create_table("d", "u", old_spec()).expect("table");
    let t = db.table("d", "u").expect("u");
    for k in 0..100 {
        t.insert(vec![Value::Int(k), Value::Int(k), Value::Null])
            .expect("insert");
    }
    let mut b = rebuild(&db, "u", new_spec(true), true);
    b.scan(&mut convert, &mut |n| {
        if n == 50 {
            t.insert(vec![Value::Int(500), Value::Int(7), Value::Null])
                .expect("a duplicate w");
        }
        true
    })
    .expect("scan");
    b.catch_up(&mut convert)
        .expect("catch up defers the conflict");
    match b.finish(&mut convert) {
        Err(DbError::DuplicateKey { index, entry }) => {
            assert_eq!(index, "by_w");
            assert_eq!(entry, "70");
        }
        other => panic!("expected 1062, got {other:?}"),
    }
    assert_eq!(rows(&db, "u").len(), 101);
    assert_eq!(t.definition().expect("def").columns.len(), 3);
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    db.shutdown().expect("shutdown");
}

#[test]
fn an_abandoned_rebuild_leaves_the_table_as_it_was() {
    let dir = tempfile::tempdir().expect("dir");
    let db = setup(dir.path(), 300);
    let t = db.table("d", "t").expect("t");
    {
        let mut b = rebuild(&db, "t", new_spec(false), true);
        let r = b.scan(&mut convert, &mut |n| n < 100);
        assert!(matches!(r, Err(DbError::Interrupted)), "{r:?}");
    }
    t.insert(vec![Value::Int(1000), Value::Int(1), Value::Null])
        .expect("insert after");
    assert_eq!(t.definition().expect("def").columns.len(), 3);
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    assert_no_alter_file(dir.path());
    db.shutdown().expect("shutdown");
}

#[test]
fn a_table_losing_its_primary_key_is_not_rebuilt_online() {
    let dir = tempfile::tempdir().expect("dir");
    let db = setup(dir.path(), 10);
    let mut spec = new_spec(false);
    spec.primary_key = vec![];
    let refused = db
        .begin_online_rebuild("d", "t", spec, false, None, OnlineOptions::default())
        .is_err();
    assert!(refused, "a primary key dropped online");
    assert_no_alter_file(dir.path());
    db.shutdown().expect("shutdown");
}

/// The new table keyed on (v, k): the primary key changes.
fn rekeyed_spec() -> TableSpec {
    let mut spec = new_spec(false);
    spec.primary_key = vec![2, 0];
    spec
}

#[test]
fn a_new_primary_key_is_built_online_through_the_key_map() {
    let dir = tempfile::tempdir().expect("dir");
    let db = setup(dir.path(), 2000);
    let mut rng = StdRng::seed_from_u64(17);
    let mut next = 2000;
    let mut b = rebuild(&db, "t", rekeyed_spec(), false);
    for _ in 0..50 {
        change(&db, &mut rng, &mut next);
    }
    b.scan(&mut convert, &mut |n| {
        if n % 10 == 0 {
            change(&db, &mut rng, &mut next);
        }
        true
    })
    .expect("scan");
    for _ in 0..200 {
        change(&db, &mut rng, &mut next);
    }
    b.catch_up(&mut convert).expect("catch up");
    for _ in 0..100 {
        change(&db, &mut rng, &mut next);
    }
    b.finish(&mut convert).expect("finish");
    assert_rebuilt_matches(&db);
    let t = db.table("d", "t").expect("t");
    assert_eq!(t.definition().expect("def").primary_key, vec![2, 0]);
    // Keyed by (v, k) now.
    let want = rows(&db, "u");
    let (k, (v, _)) = want.iter().next().expect("a row");
    assert!(t
        .get(&[Value::Int(*v), Value::Int(*k)])
        .expect("get")
        .is_some());
    db.shutdown().expect("shutdown");
    // The key map's pages went back to the space: check finds nothing leaked.
    let db = Db::open(dir.path(), config()).expect("reopen");
    assert_rebuilt_matches(&db);
    db.shutdown().expect("shutdown");
}

#[test]
fn a_duplicate_new_primary_key_settled_during_the_rebuild_is_none_and_one_left_is_1062() {
    let dir = tempfile::tempdir().expect("dir");
    let db = Db::open(dir.path(), config()).expect("open");
    db.create_database("d").expect("db");
    // The new primary key: v alone.
    let mut spec = new_spec(false);
    spec.primary_key = vec![2];
    for name in ["t", "u"] {
        db.create_table("d", name, old_spec()).expect("table");
        let t = db.table("d", name).expect("t");
        for k in 0..100 {
            t.insert(vec![Value::Int(k), Value::Int(k), Value::Null])
                .expect("insert");
        }
    }
    let t = db.table("d", "t").expect("t");
    let mut b = rebuild(&db, "t", spec.clone(), false);
    b.scan(&mut convert, &mut |n| {
        if n == 10 {
            // Row 5's v goes to row 90 after the scan copied row 5 and before it reaches
            // row 90: the scan meets v = 5 twice, and the log settles it.
            t.update(
                &[Value::Int(5)],
                vec![Value::Int(5), Value::Int(1000), Value::Null],
            )
            .expect("move away");
            t.update(
                &[Value::Int(90)],
                vec![Value::Int(90), Value::Int(5), Value::Null],
            )
            .expect("move in");
        }
        true
    })
    .expect("scan");
    b.finish(&mut convert).expect("finish");
    let row = t.get(&[Value::Int(5)]).expect("get").expect("v = 5");
    assert_eq!(row[0], Value::Int(90));
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    // A duplicate made during the rebuild and left there: 1062 on PRIMARY at the end.
    let u = db.table("d", "u").expect("u");
    let mut b = rebuild(&db, "u", spec, false);
    b.scan(&mut convert, &mut |n| {
        if n == 50 {
            u.insert(vec![Value::Int(500), Value::Int(7), Value::Null])
                .expect("a duplicate v");
        }
        true
    })
    .expect("scan");
    b.catch_up(&mut convert)
        .expect("catch up defers the conflict");
    match b.finish(&mut convert) {
        Err(DbError::DuplicateKey { index, entry }) => {
            assert_eq!(index, "PRIMARY");
            assert_eq!(entry, "7");
        }
        other => panic!("expected 1062, got {other:?}"),
    }
    assert_eq!(rows(&db, "u").len(), 101);
    assert_eq!(u.definition().expect("def").primary_key, vec![0]);
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    assert_no_alter_file(dir.path());
    db.shutdown().expect("shutdown");
}

#[test]
fn a_read_view_from_before_the_switch_is_refused_and_a_later_one_sees_every_row() {
    let dir = tempfile::tempdir().expect("dir");
    let db = setup(dir.path(), 50);
    let t = db.table("d", "t").expect("t");
    let mut b = rebuild(&db, "t", new_spec(false), true);
    b.scan(&mut convert, &mut |_| true).expect("scan");
    // A view made during the rebuild, after the copy: the new table's rows would show it
    // changes made after it.
    let mut old_view = db.begin(Isolation::RepeatableRead).expect("begin");
    assert!(old_view.get(&t, &[Value::Int(1)]).expect("read").is_some());
    t.update(
        &[Value::Int(1)],
        vec![Value::Int(1), Value::Int(6), Value::Null],
    )
    .expect("update");
    b.finish(&mut convert).expect("finish");
    let t = db.table("d", "t").expect("t");
    match old_view.get(&t, &[Value::Int(1)]) {
        Err(DbError::TableDefinitionChanged) => {}
        other => panic!("expected 1412, got {other:?}"),
    }
    drop(old_view);
    let mut new_view = db.begin(Isolation::RepeatableRead).expect("begin");
    let row = new_view
        .get(&t, &[Value::Int(1)])
        .expect("read")
        .expect("row");
    assert_eq!(row[2], Value::Int(6));
    new_view.commit().expect("commit");
    db.shutdown().expect("shutdown");
}

#[test]
fn concurrent_writers_never_wait_for_the_copy_and_the_table_is_exact() {
    let dir = tempfile::tempdir().expect("dir");
    let db = Db::open(dir.path(), config()).expect("open");
    db.create_database("d").expect("db");
    db.create_table("d", "t", old_spec()).expect("table");
    {
        let t = db.table("d", "t").expect("t");
        for k in 0..4000i64 {
            t.insert(vec![Value::Int(k), Value::Int(k % 50), Value::Null])
                .expect("insert");
        }
    }
    let stop = AtomicBool::new(false);
    let writes = AtomicU64::new(0);
    // Each writer owns the keys k % 3 == w: its model is exact.
    let models = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for w in 0..3i64 {
            let db = &db;
            let stop = &stop;
            let writes = &writes;
            handles.push(s.spawn(move || {
                let mut rng = StdRng::seed_from_u64(100 + w as u64);
                let t = db.table("d", "t").expect("t");
                let mut model: BTreeMap<i64, i64> = (0..4000)
                    .filter(|k| k % 3 == w)
                    .map(|k| (k, k % 50))
                    .collect();
                // After the switch the table has the new schema: rows get four columns.
                let mut wide = false;
                while !stop.load(Ordering::Acquire) {
                    let k = rng.gen_range(0..1500i64) * 3 + w;
                    let v = rng.gen_range(0..50);
                    let row = if wide {
                        vec![
                            Value::Int(k),
                            Value::Int(v * 10),
                            Value::Int(v),
                            Value::Null,
                        ]
                    } else {
                        vec![Value::Int(k), Value::Int(v), Value::Null]
                    };
                    let r = match rng.gen_range(0..4) {
                        0 => t.delete(&[Value::Int(k)]).map(|_| None),
                        1 => t.insert(row).map(|_| Some(v)),
                        _ => t.update(&[Value::Int(k)], row).map(|_| Some(v)),
                    };
                    match r {
                        Ok(Some(v)) => {
                            model.insert(k, v);
                        }
                        Ok(None) => {
                            model.remove(&k);
                        }
                        Err(DbError::RowNotFound) | Err(DbError::DuplicateKey { .. }) => {}
                        // A three-column row after the switch: refused, nothing changed.
                        Err(DbError::Row(_)) if !wide => {
                            wide = true;
                            continue;
                        }
                        Err(e) => panic!("writer: {e}"),
                    }
                    writes.fetch_add(1, Ordering::Relaxed);
                }
                model
            }));
        }
        // The writers stop however this thread leaves (a failed expectation included).
        struct StopOnDrop<'a>(&'a AtomicBool);
        impl Drop for StopOnDrop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Release);
            }
        }
        let stopper = StopOnDrop(&stop);
        let mut b = rebuild(&db, "t", new_spec(false), true);
        // Halfway through the copy, the rebuild waits until the writers have made 100
        // changes: they would never get there if it excluded them.
        let mut during = 0;
        b.scan(&mut convert, &mut |n| {
            if n == 2000 {
                let before = writes.load(Ordering::Relaxed);
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
                while writes.load(Ordering::Relaxed) < before + 100
                    && std::time::Instant::now() < deadline
                {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                during = writes.load(Ordering::Relaxed) - before;
            }
            true
        })
        .expect("scan");
        b.catch_up(&mut convert).expect("catch up");
        b.finish(&mut convert).expect("finish");
        // Let the writers meet the new table too.
        std::thread::sleep(std::time::Duration::from_millis(200));
        drop(stopper);
        assert!(
            during >= 100,
            "writers waited for the rebuild: {during} changes"
        );
        handles
            .into_iter()
            .map(|h| h.join().expect("writer"))
            .collect::<Vec<_>>()
    });
    let want: BTreeMap<i64, i64> = models.into_iter().flatten().collect();
    let got: BTreeMap<i64, i64> = rows(&db, "t")
        .into_iter()
        .map(|(k, (v, _))| (k, v))
        .collect();
    assert_eq!(got, want);
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    db.shutdown().expect("shutdown");
}
