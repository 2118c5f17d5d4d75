//! A full disk (the simulated file system's capacity reached) makes the statement that needs
//! a data file to grow fail with MariaDB's error 1114 ("The table 't' is full"), rolled back
//! as a statement: the transaction goes on, reads keep working, nothing committed is lost,
//! and writes work again once space is freed. A crash while the disk is full loses no
//! acknowledged commit either.

#![allow(clippy::result_large_err)]

mod common;

use common::{run, try_run, DIR};
use quire_engine::table::Db;
use quire_io::sim::{CrashMode, SimVfs};
use quire_sql::{Instance, Session, SqlError, Value};

fn open(vfs: &SimVfs) -> Db {
    common::open(vfs, common::sim_config(256, 4 << 20, true)).expect("open")
}

fn count(s: &mut Session<'_>, sql: &str) -> i64 {
    match run(s, sql).first().and_then(|r| r.first()) {
        Some(Value::Int(i)) => *i,
        other => panic!("{sql}: not a count: {other:?}"),
    }
}

/// 40 rows of about 300 bytes, keys from `first`: a few pages of the clustered index and of
/// the secondary index on `pad`.
fn batch(first: i64) -> String {
    let rows: Vec<String> = (first..first + 40)
        .map(|k| format!("({k}, REPEAT('{}', 290))", (b'a' + (k % 26) as u8) as char))
        .collect();
    format!("INSERT INTO t (id, pad) VALUES {}", rows.join(", "))
}

fn setup(s: &mut Session<'_>) {
    run(s, "CREATE DATABASE d");
    run(s, "USE d");
    run(
        s,
        "CREATE TABLE t (id INT PRIMARY KEY, pad VARCHAR(300), KEY by_pad (pad(100)))",
    );
    for b in 0..5 {
        run(s, &batch(b * 40));
    }
}

/// Inserts batches until one fails; returns the number of rows committed and the error.
fn fill(s: &mut Session<'_>, mut next: i64) -> (i64, SqlError) {
    for _ in 0..10_000 {
        match try_run(s, &batch(next)) {
            Ok(_) => next += 40,
            Err(e) => return (next, e),
        }
    }
    panic!("the disk never filled");
}

fn assert_table_full(e: &SqlError) {
    assert_eq!(e.to_string(), "The table 't' is full", "{e:?}");
}

#[test]
fn a_full_disk_fails_the_statement_and_keeps_every_commit() {
    let vfs = SimVfs::new(7);
    let db = open(&vfs);
    let inst = Instance::new(&db);
    let mut s = inst.session("root", "localhost");
    setup(&mut s);
    assert_eq!(count(&mut s, "SELECT COUNT(*) FROM t"), 200);

    // The disk fills up: a little room is left, then none.
    vfs.set_capacity(Some(vfs.used_bytes() + (256 << 10)));
    let (rows, e) = fill(&mut s, 200);
    assert_table_full(&e);
    assert!(rows > 200, "nothing fitted in the room left");
    // The failed statement left nothing; every committed row is there, through both indexes.
    assert_eq!(count(&mut s, "SELECT COUNT(*) FROM t"), rows);
    assert_eq!(
        count(
            &mut s,
            "SELECT COUNT(*) FROM t FORCE INDEX (by_pad) WHERE pad >= ''"
        ),
        rows
    );
    assert_eq!(count(&mut s, "SELECT MAX(id) FROM t"), rows - 1);

    // Inside a transaction the failure rolls back the statement only.
    run(&mut s, "BEGIN");
    run(&mut s, "UPDATE t SET pad = 'short' WHERE id = 0");
    let mut failed = None;
    for i in 0..50 {
        if let Err(e) = try_run(&mut s, &batch(rows + 1000 + i * 40)) {
            failed = Some(e);
            break;
        }
    }
    assert_table_full(&failed.expect("the full disk took a batch"));
    let in_trx = count(&mut s, "SELECT COUNT(*) FROM t");
    run(&mut s, "COMMIT");
    assert_eq!(count(&mut s, "SELECT COUNT(*) FROM t"), in_trx);
    let pad = run(&mut s, "SELECT pad FROM t WHERE id = 0");
    assert_eq!(pad, vec![vec![Value::Str("short".into())]]);

    // Space is freed: writes work again.
    vfs.set_capacity(None);
    run(&mut s, &batch(100_000));
    let total = count(&mut s, "SELECT COUNT(*) FROM t");
    assert_eq!(total, in_trx + 40);
    drop(s);
    drop(inst);
    db.shutdown().expect("shutdown");

    let db = open(&vfs);
    let inst = Instance::new(&db);
    let mut s = inst.session("root", "localhost");
    run(&mut s, "USE d");
    assert_eq!(count(&mut s, "SELECT COUNT(*) FROM t"), total);
    assert_eq!(run(&mut s, "CHECK TABLE t")[0][3], Value::Str("OK".into()));
}

#[test]
fn a_crash_on_a_full_disk_loses_no_commit() {
    for mode in [CrashMode::DropAll, CrashMode::Random, CrashMode::TearAll] {
        let vfs = SimVfs::new(11);
        let committed;
        {
            let db = open(&vfs);
            let inst = Instance::new(&db);
            let mut s = inst.session("root", "localhost");
            setup(&mut s);
            vfs.set_capacity(Some(vfs.used_bytes() + (128 << 10)));
            let (rows, e) = fill(&mut s, 200);
            assert_table_full(&e);
            committed = rows;
            // A transaction left open at the crash: recovery rolls it back.
            run(&mut s, "BEGIN");
            run(&mut s, "DELETE FROM t WHERE id < 100");
            let (after, _) = vfs.crash_with(mode);
            drop(s);
            drop(inst);
            db.kill(); // the process died: no shutdown
            let db = open(&after);
            let inst = Instance::new(&db);
            let mut s = inst.session("root", "localhost");
            run(&mut s, "USE d");
            assert_eq!(
                count(&mut s, "SELECT COUNT(*) FROM t"),
                committed,
                "{mode:?}"
            );
            assert_eq!(run(&mut s, "CHECK TABLE t")[0][3], Value::Str("OK".into()));
            // The recovered instance writes on the same (still full, then freed) disk.
            after.set_capacity(Some(after.used_bytes()));
            let (rows, e) = fill(&mut s, 50_000);
            assert_table_full(&e);
            after.set_capacity(None);
            run(&mut s, &batch(rows));
        }
    }
}

/// A statement of the test below, from the first key it uses.
type Statement = fn(i64) -> String;

/// Every kind of growth, at many points of the disk filling up, on a disk that refuses a
/// fallocate whole and on one that grants part of it (ext4): row inserts, updates that
/// lengthen rows (page splits), off-page BLOB values, and a secondary index's entries. Each
/// fails with 1114 and leaves the table as its committed statements made it; after a
/// restart (clean or a crash) on the still-full disk, the data directory checks clean, and
/// once space is freed the same statement works.
#[test]
fn every_kind_of_write_fails_cleanly_wherever_the_disk_fills() {
    let kinds: [(&str, Statement); 3] = [
        ("insert", batch),
        ("update", |k| {
            format!("UPDATE t SET pad = REPEAT('u', 300), big = REPEAT('v', 1500) WHERE id >= {k} AND id < {}", k + 40)
        }),
        ("blob", |k| {
            format!("INSERT INTO t (id, pad, big) VALUES ({k}, 'b', REPEAT('z', 20000)), ({}, 'c', REPEAT('y', 30000))", k + 1)
        }),
    ];
    let mut case = 0u64;
    for (name, stmt) in kinds {
        for room in [0u64, 4096, 20_000, 70_000, 300_000] {
            case += 1;
            let partial = case.is_multiple_of(2);
            let crash = case.is_multiple_of(3);
            let what = format!("{name}, room {room}, partial {partial}, crash {crash}");
            let vfs = SimVfs::new(case);
            vfs.set_partial_allocate(partial);
            let db = open(&vfs);
            let inst = Instance::new(&db);
            let mut s = inst.session("root", "localhost");
            run(&mut s, "CREATE DATABASE d");
            run(&mut s, "USE d");
            run(
                &mut s,
                "CREATE TABLE t (id INT PRIMARY KEY, pad VARCHAR(300), big TEXT, KEY by_pad (pad(100)))",
            );
            for b in 0..25 {
                run(&mut s, &batch(b * 40));
            }
            let disk = vfs.used_bytes() + room;
            vfs.set_capacity(Some(disk));
            let mut k = if name == "update" { 0 } else { 1_000_000 };
            let mut last_ok = run(&mut s, "SELECT id, pad, big FROM t ORDER BY id");
            let err = loop {
                match try_run(&mut s, &stmt(k)) {
                    Ok(_) => {
                        k += 40;
                        last_ok = run(&mut s, "SELECT id, pad, big FROM t ORDER BY id");
                        assert!(k < 2_000_000, "{what}: the disk never filled");
                    }
                    Err(e) => break e,
                }
            };
            assert_table_full(&err);
            assert_eq!(
                run(&mut s, "SELECT id, pad, big FROM t ORDER BY id"),
                last_ok,
                "{what}: the failed statement left changes"
            );
            assert_eq!(
                count(
                    &mut s,
                    "SELECT COUNT(*) FROM t FORCE INDEX (by_pad) WHERE pad >= ''"
                ),
                last_ok.len() as i64,
                "{what}: secondary index"
            );
            drop(s);
            drop(inst);
            // Restart on the disk that is still full.
            let vfs = if crash {
                db.kill();
                let (after, _) = vfs.crash_with(CrashMode::DropAll);
                // The same disk: what the crash dropped was never allocated on it.
                after.set_partial_allocate(partial);
                after.set_capacity(Some(disk));
                after
            } else {
                db.shutdown().expect("shutdown");
                vfs
            };
            let db = open(&vfs);
            assert_eq!(db.check().expect("check"), Vec::<String>::new(), "{what}");
            let inst = Instance::new(&db);
            let mut s = inst.session("root", "localhost");
            run(&mut s, "USE d");
            if !crash {
                // Everything the statements before the failure did is there.
                assert_eq!(
                    run(&mut s, "SELECT id, pad, big FROM t ORDER BY id"),
                    last_ok,
                    "{what}: after the restart"
                );
            }
            vfs.set_capacity(None);
            run(&mut s, &stmt(k));
            assert_eq!(
                run(&mut s, "CHECK TABLE t")[0][3],
                Value::Str("OK".into()),
                "{what}"
            );
            drop(s);
            drop(inst);
            db.shutdown().expect("shutdown");
            let report = quire_engine::check::check_data_dir(&vfs, std::path::Path::new(DIR))
                .expect("check");
            assert!(
                report.is_clean(),
                "{what}: {:?}",
                report.problems().collect::<Vec<_>>()
            );
        }
    }
}

/// DDL on a full disk fails with 1021 and leaves no file behind, then works once space is
/// freed: CREATE TABLE, an index build, a table rebuild, a temporary table. An instant ADD
/// COLUMN (a catalog change) works on the full disk.
#[test]
fn ddl_on_a_full_disk_fails_and_leaves_no_file() {
    let vfs = SimVfs::new(5);
    let db = open(&vfs);
    let inst = Instance::new(&db);
    let mut s = inst.session("root", "localhost");
    setup(&mut s);
    vfs.set_capacity(Some(vfs.used_bytes()));
    let (rows, e) = fill(&mut s, 200);
    assert_table_full(&e);
    let files = vfs.list_files();
    let ddl = [
        "CREATE TABLE t2 (id INT PRIMARY KEY)",
        "ALTER TABLE t ADD INDEX by_id_pad (id, pad(50))",
        "ALTER TABLE t FORCE",
        "CREATE TEMPORARY TABLE tmp AS SELECT * FROM t",
    ];
    for sql in ddl {
        let e = try_run(&mut s, sql).expect_err(sql);
        assert!(
            matches!(e, SqlError::DiskFull(_)),
            "{sql}: {e:?} is not a disk-full error"
        );
        assert_eq!(vfs.list_files(), files, "{sql} left a file");
        assert_eq!(count(&mut s, "SELECT COUNT(*) FROM t"), rows, "{sql}");
    }
    run(
        &mut s,
        "ALTER TABLE t ADD COLUMN later INT NOT NULL DEFAULT 3 FIRST",
    );
    assert_eq!(
        count(&mut s, "SELECT COUNT(*) FROM t WHERE later = 3"),
        rows
    );
    vfs.set_capacity(None);
    for sql in ddl {
        run(&mut s, sql);
    }
    assert_eq!(count(&mut s, "SELECT COUNT(*) FROM tmp"), rows);
    assert_eq!(
        count(
            &mut s,
            "SELECT COUNT(*) FROM t FORCE INDEX (by_id_pad) WHERE later = 3"
        ),
        rows
    );
}
