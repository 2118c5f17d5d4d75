//! An index built online (`Db::begin_online_index`) while rows change ends up holding
//! exactly the entries of the rows' newest versions (`Db::check`), sees every change made
//! during its scan and its catch-up, and fails cleanly (1062, 1799) leaving the table as it
//! was (docs/online-ddl.md).

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, Ordering};

use quire_engine::btree::Direction;
use quire_engine::config::Config;
use quire_engine::row::{Column, ColumnType, IntWidth, LobSize, Value};
use quire_engine::table::{Db, DbError, IndexSpec, OnlineOptions, TableSpec};
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

/// Table d.t (k INT PRIMARY KEY, v INT, s TEXT NULL) with `n` rows v = k % 7.
fn setup(dir: &std::path::Path, n: i64) -> Db {
    let db = Db::open(dir, config()).expect("open");
    db.create_database("d").expect("db");
    let spec = TableSpec::new(
        vec![
            Column::new("k", int()),
            Column::new("v", int()),
            Column::nullable("s", ColumnType::Text(LobSize::Medium)),
        ],
        vec![0],
    );
    db.create_table("d", "t", spec).expect("table");
    let t = db.table("d", "t").expect("t");
    for k in 0..n {
        t.insert(vec![Value::Int(k), Value::Int(k % 7), Value::Null])
            .expect("insert");
    }
    db
}

fn rows(db: &Db) -> BTreeMap<i64, i64> {
    db.table("d", "t")
        .expect("t")
        .scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .expect("scan")
        .map(|r| {
            let r = r.expect("row");
            match (&r[0], &r[1]) {
                (Value::Int(k), Value::Int(v)) => (*k, *v),
                other => panic!("row {other:?}"),
            }
        })
        .collect()
}

/// Every row found through index `name` by its v, and nothing else.
fn assert_index_matches(db: &Db, name: &str) {
    let t = db.table("d", "t").expect("t");
    let want = rows(db);
    let mut through: Vec<(i64, i64)> = t
        .index_scan(name, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .expect("index scan")
        .map(|r| {
            let r = r.expect("row");
            match (&r[0], &r[1]) {
                (Value::Int(k), Value::Int(v)) => (*k, *v),
                other => panic!("row {other:?}"),
            }
        })
        .collect();
    through.sort();
    let want: Vec<(i64, i64)> = want.into_iter().collect();
    assert_eq!(through, want, "rows through {name}");
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
}

/// One change of the scripted workload: inserts, updates of the indexed column, deletes,
/// primary-key updates, a rolled-back transaction, and purge.
fn change(db: &Db, rng: &mut StdRng, next: &mut i64) {
    let t = db.table("d", "t").expect("t");
    let k = rng.gen_range(0..*next);
    match rng.gen_range(0..7) {
        0 => {
            let _ = t.insert(vec![
                Value::Int(*next),
                Value::Int(rng.gen_range(0..7)),
                Value::Null,
            ]);
            *next += 1;
        }
        1 | 2 => {
            let _ = t.update(
                &[Value::Int(k)],
                vec![Value::Int(k), Value::Int(rng.gen_range(0..7)), Value::Null],
            );
        }
        3 => {
            let _ = t.delete(&[Value::Int(k)]);
        }
        4 => {
            // A new primary key: a delete-mark and an insert.
            let _ = t.update(
                &[Value::Int(k)],
                vec![
                    Value::Int(*next),
                    Value::Int(rng.gen_range(0..7)),
                    Value::Null,
                ],
            );
            *next += 1;
        }
        5 => {
            let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
            let _ = tx.update(
                &t,
                &[Value::Int(k)],
                vec![
                    Value::Int(k),
                    Value::Int(100 + k),
                    Value::Str("x".repeat(3000)),
                ],
            );
            let _ = tx.insert(
                &t,
                vec![Value::Int(*next + 1_000_000), Value::Int(5), Value::Null],
            );
            let _ = tx.delete(&t, &[Value::Int((k + 1) % *next)]);
            tx.rollback().expect("rollback");
        }
        _ => {
            db.purge_now().expect("purge");
        }
    }
}

#[test]
fn changes_during_the_scan_and_catch_up_reach_the_new_index() {
    let dir = tempfile::tempdir().expect("dir");
    let db = setup(dir.path(), 3000);
    let mut rng = StdRng::seed_from_u64(7);
    let mut next = 3000;
    let mut b = db
        .begin_online_index(
            "d",
            "t",
            IndexSpec::new("by_v", vec![1]),
            OnlineOptions::default(),
        )
        .expect("begin");
    for _ in 0..50 {
        change(&db, &mut rng, &mut next);
    }
    b.scan(&mut |n| {
        if n % 20 == 0 {
            change(&db, &mut rng, &mut next);
        }
        true
    })
    .expect("scan");
    for _ in 0..200 {
        change(&db, &mut rng, &mut next);
    }
    b.catch_up().expect("catch up");
    for _ in 0..100 {
        change(&db, &mut rng, &mut next);
    }
    b.finish().expect("finish");
    assert_index_matches(&db, "by_v");
    // The index is maintained as any other from now on.
    for _ in 0..200 {
        change(&db, &mut rng, &mut next);
    }
    assert_index_matches(&db, "by_v");
    db.shutdown().expect("shutdown");
}

#[test]
fn a_log_past_its_memory_bound_spills_and_is_applied_whole() {
    let dir = tempfile::tempdir().expect("dir");
    let db = setup(dir.path(), 500);
    let mut rng = StdRng::seed_from_u64(11);
    let mut next = 500;
    let opts = OnlineOptions {
        mem_bound: 256,
        ..OnlineOptions::default()
    };
    let mut b = db
        .begin_online_index("d", "t", IndexSpec::new("by_v", vec![1]), opts)
        .expect("begin");
    b.scan(&mut |n| {
        if n % 3 == 0 {
            change(&db, &mut rng, &mut next);
        }
        true
    })
    .expect("scan");
    assert!(b.spilled_bytes() > 0, "nothing spilled");
    b.finish().expect("finish");
    assert_index_matches(&db, "by_v");
    db.shutdown().expect("shutdown");
}

#[test]
fn a_log_past_its_max_size_fails_the_build_and_keeps_the_table() {
    let dir = tempfile::tempdir().expect("dir");
    let db = setup(dir.path(), 200);
    let opts = OnlineOptions {
        log_max_size: 1000,
        ..OnlineOptions::default()
    };
    let mut b = db
        .begin_online_index("d", "t", IndexSpec::new("by_v", vec![1]), opts)
        .expect("begin");
    let t = db.table("d", "t").expect("t");
    b.scan(&mut |n| {
        // DML goes on while the log is too big: it never fails for the build's sake.
        t.update(
            &[Value::Int(n as i64 % 200)],
            vec![
                Value::Int(n as i64 % 200),
                Value::Int(n as i64),
                Value::Null,
            ],
        )
        .expect("update during the build");
        true
    })
    .expect("scan");
    match b.finish() {
        Err(DbError::OnlineLogTooBig { index }) => assert_eq!(index, "by_v"),
        other => panic!("expected 1799, got {other:?}"),
    }
    let e = DbError::OnlineLogTooBig {
        index: "by_v".into(),
    };
    assert_eq!(
        e.to_string(),
        "Creating index 'by_v' required more than 'innodb_online_alter_log_max_size' bytes of modification log. Please try again"
    );
    assert!(t.definition().expect("def").indexes.is_empty());
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    db.shutdown().expect("shutdown");
}

#[test]
fn a_unique_value_moving_between_rows_during_the_build_is_no_duplicate() {
    let dir = tempfile::tempdir().expect("dir");
    let db = setup(dir.path(), 0);
    let t = db.table("d", "t").expect("t");
    for k in 0..100 {
        t.insert(vec![Value::Int(k), Value::Int(k), Value::Null])
            .expect("insert");
    }
    let mut b = db
        .begin_online_index(
            "d",
            "t",
            IndexSpec::new("u", vec![1]).unique(),
            OnlineOptions::default(),
        )
        .expect("begin");
    b.scan(&mut |n| {
        if n == 10 {
            // Row 5's value goes to row 90, after the scan passed row 5 and before it
            // reaches row 90: the scan meets 5 twice (row 5's stale entry and row 90), and
            // the log settles it.
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
    b.finish().expect("finish");
    assert_index_matches(&db, "u");
    assert_eq!(
        t.lookup_index("u", &[Value::Int(5)]).expect("lookup")[0][0],
        Value::Int(90)
    );
    db.shutdown().expect("shutdown");
}

#[test]
fn a_duplicate_made_during_the_build_fails_it_with_1062_and_keeps_the_table() {
    let dir = tempfile::tempdir().expect("dir");
    let db = setup(dir.path(), 0);
    let t = db.table("d", "t").expect("t");
    for k in 0..100 {
        t.insert(vec![Value::Int(k), Value::Int(k), Value::Null])
            .expect("insert");
    }
    let mut b = db
        .begin_online_index(
            "d",
            "t",
            IndexSpec::new("u", vec![1]).unique(),
            OnlineOptions::default(),
        )
        .expect("begin");
    b.scan(&mut |n| {
        if n == 50 {
            t.insert(vec![Value::Int(500), Value::Int(7), Value::Null])
                .expect("a duplicate v");
        }
        true
    })
    .expect("scan");
    b.catch_up().expect("catch up defers the conflict");
    match b.finish() {
        Err(DbError::DuplicateKey { index, entry }) => {
            assert_eq!(index, "u");
            assert_eq!(entry, "7");
        }
        other => panic!("expected 1062, got {other:?}"),
    }
    assert!(t.definition().expect("def").indexes.is_empty());
    assert_eq!(rows(&db).len(), 101);
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    // The table takes DML as before, and a build after the duplicate is gone succeeds.
    t.delete(&[Value::Int(500)]).expect("delete");
    let mut b = db
        .begin_online_index(
            "d",
            "t",
            IndexSpec::new("u", vec![1]).unique(),
            OnlineOptions::default(),
        )
        .expect("begin");
    b.scan(&mut |_| true).expect("scan");
    b.finish().expect("finish");
    assert_index_matches(&db, "u");
    db.shutdown().expect("shutdown");
}

#[test]
fn an_abandoned_build_leaves_the_table_as_it_was() {
    let dir = tempfile::tempdir().expect("dir");
    let db = setup(dir.path(), 300);
    let t = db.table("d", "t").expect("t");
    {
        let mut b = db
            .begin_online_index(
                "d",
                "t",
                IndexSpec::new("by_v", vec![1]),
                OnlineOptions::default(),
            )
            .expect("begin");
        let r = b.scan(&mut |n| n < 100);
        assert!(matches!(r, Err(DbError::Interrupted)), "{r:?}");
    }
    t.insert(vec![Value::Int(1000), Value::Int(1), Value::Null])
        .expect("insert after");
    assert!(t.definition().expect("def").indexes.is_empty());
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    db.shutdown().expect("shutdown");
}

#[test]
fn concurrent_writers_never_wait_for_the_scan_and_the_index_is_exact() {
    let dir = tempfile::tempdir().expect("dir");
    let db = setup(dir.path(), 4000);
    let stop = AtomicBool::new(false);
    let writes = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|s| {
        for w in 0..3u64 {
            let db = &db;
            let stop = &stop;
            let writes = &writes;
            s.spawn(move || {
                let mut rng = StdRng::seed_from_u64(100 + w);
                let t = db.table("d", "t").expect("t");
                while !stop.load(Ordering::Acquire) {
                    let k = rng.gen_range(0..4000i64);
                    let r = match rng.gen_range(0..4) {
                        0 => t.delete(&[Value::Int(k)]).map(|_| ()),
                        1 => t
                            .insert(vec![
                                Value::Int(k),
                                Value::Int(rng.gen_range(0..50)),
                                Value::Null,
                            ])
                            .map(|_| ()),
                        _ => t
                            .update(
                                &[Value::Int(k)],
                                vec![Value::Int(k), Value::Int(rng.gen_range(0..50)), Value::Null],
                            )
                            .map(|_| ()),
                    };
                    match r {
                        Ok(()) | Err(DbError::RowNotFound) | Err(DbError::DuplicateKey { .. }) => {}
                        Err(e) => panic!("writer: {e}"),
                    }
                    writes.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        let mut b = db
            .begin_online_index(
                "d",
                "t",
                IndexSpec::new("by_v", vec![1]),
                OnlineOptions::default(),
            )
            .expect("begin");
        // Halfway through the scan, the build waits until the writers have made 100
        // changes: they would never get there if the build excluded them.
        let mut during = 0;
        b.scan(&mut |n| {
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
        b.catch_up().expect("catch up");
        b.finish().expect("finish");
        stop.store(true, Ordering::Release);
        assert!(
            during >= 100,
            "writers waited for the build: {during} changes"
        );
    });
    assert_index_matches(&db, "by_v");
    db.shutdown().expect("shutdown");
}
