//! ALTER TABLE … ADD COLUMN at the end is a catalog change only: the table keeps its space
//! (no copy), the rows already there read the column's value as it was when it was added,
//! and rows written later hold it. A crash at any I/O of the ALTER leaves the old table or
//! the new one, every row readable, `check` clean; a crash after it keeps both kinds of rows.

#![allow(clippy::result_large_err)]

mod common;

use common::{run, try_run};
use quire_engine::table::Db;
use quire_io::sim::{CrashMode, SimVfs};
use quire_sql::{Instance, Session, Value};

fn setup(s: &mut Session<'_>) {
    run(s, "CREATE DATABASE d");
    run(s, "USE d");
    run(
        s,
        "CREATE TABLE t (id INT PRIMARY KEY, v INT, s VARCHAR(40), KEY kv (v))",
    );
    for b in 0..4 {
        let rows: Vec<String> = (b * 50..b * 50 + 50)
            .map(|k| format!("({k}, {}, REPEAT('s', {}))", k % 7, k % 30))
            .collect();
        run(s, &format!("INSERT INTO t VALUES {}", rows.join(", ")));
    }
}

fn open(vfs: &SimVfs) -> Result<Db, quire_engine::table::DbError> {
    common::open(vfs, common::sim_config(128, 2 << 20, false))
}

const ALTER: &str = "ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7, \
                     ADD COLUMN n VARCHAR(10) DEFAULT 'nn', ALGORITHM=INSTANT";

fn rows(s: &mut Session<'_>) -> Vec<Vec<Value>> {
    run(s, "SELECT * FROM t ORDER BY id")
}

#[test]
fn add_column_keeps_the_space_and_old_rows_read_the_added_values() {
    let vfs = SimVfs::new(3);
    let db = open(&vfs).expect("open");
    let inst = Instance::new(&db);
    let mut s = inst.session("root", "localhost");
    setup(&mut s);
    let before = db.table("d", "t").expect("t").definition().expect("def");
    let files = vfs.list_files();
    run(&mut s, ALTER);
    let after = db.table("d", "t").expect("t").definition().expect("def");
    assert_eq!(after.space, before.space, "the table was copied");
    assert_eq!(after.rebuilt_at, before.rebuilt_at, "the table was rebuilt");
    assert_eq!(vfs.list_files(), files, "a file was made");
    let all = rows(&mut s);
    assert_eq!(all.len(), 200);
    for r in &all {
        assert_eq!(r[3..], [Value::Int(7), Value::Str("nn".into())], "{r:?}");
    }
    // New rows hold the columns; old rows updated take them on.
    run(&mut s, "INSERT INTO t VALUES (1000, 1, 'x', 8, 'new')");
    run(&mut s, "UPDATE t SET c = c + 1 WHERE id < 10");
    run(
        &mut s,
        "UPDATE t SET v = v + 100 WHERE id BETWEEN 10 AND 19",
    );
    assert_eq!(
        run(&mut s, "SELECT COUNT(*), SUM(c) FROM t")[0],
        [
            Value::Int(201),
            Value::Decimal(quire_engine::row::Decimal::new(7 * 201 + 10 + 1, 0))
        ]
    );
    assert_eq!(
        run(
            &mut s,
            "SELECT COUNT(*) FROM t FORCE INDEX (kv) WHERE v >= 100"
        )[0][0],
        Value::Int(10)
    );
    // An index on an added column is built from both kinds of rows.
    run(&mut s, "ALTER TABLE t ADD INDEX kc (c)");
    assert_eq!(
        run(
            &mut s,
            "SELECT COUNT(*) FROM t FORCE INDEX (kc) WHERE c = 7"
        )[0][0],
        Value::Int(190)
    );
    assert_eq!(run(&mut s, "CHECK TABLE t")[0][3], Value::Str("OK".into()));
    let want = rows(&mut s);
    drop(s);
    drop(inst);
    db.shutdown().expect("shutdown");
    let db = open(&vfs).expect("reopen");
    assert_eq!(db.check().expect("check"), Vec::<String>::new());
    let inst = Instance::new(&db);
    let mut s = inst.session("root", "localhost");
    run(&mut s, "USE d");
    assert_eq!(rows(&mut s), want);
}

#[test]
fn a_crash_at_any_io_of_the_alter_leaves_the_old_table_or_the_new() {
    // A first run counts the I/O of the setup and of the ALTER.
    let vfs = SimVfs::new(5);
    let (from, to) = {
        let db = open(&vfs).expect("open");
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        setup(&mut s);
        let from = vfs.op_count();
        run(&mut s, ALTER);
        let to = vfs.op_count();
        drop(s);
        drop(inst);
        db.kill();
        (from, to)
    };
    assert!(to > from, "the ALTER did no I/O");
    eprintln!("the ALTER is I/O {from}..{to}");
    let old_rows: Vec<Vec<Value>> = (0..200i64)
        .map(|k| {
            vec![
                Value::Int(k),
                Value::Int(k % 7),
                Value::Str("s".repeat((k % 30) as usize)),
            ]
        })
        .collect();
    for point in from..=to + 2 {
        for mode in CrashMode::ALL {
            let vfs = SimVfs::new(5);
            vfs.set_crash_point(point);
            let acked = {
                let db = open(&vfs).expect("open");
                let inst = Instance::new(&db);
                let mut s = inst.session("root", "localhost");
                setup(&mut s);
                let ok = try_run(&mut s, ALTER).is_ok() && !vfs.is_frozen();
                drop(s);
                drop(inst);
                db.kill();
                ok
            };
            let what = format!("point {point} ({from}..{to}) {mode:?} acked {acked}");
            let img = vfs.crash_with(mode).0;
            let db = open(&img).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(db.check().expect("check"), Vec::<String>::new(), "{what}");
            let inst = Instance::new(&db);
            let mut s = inst.session("root", "localhost");
            run(&mut s, "USE d");
            let got = rows(&mut s);
            let added = got.first().map(|r| r.len()) == Some(5);
            assert!(!acked || added, "{what}: an acknowledged ALTER was lost");
            let want: Vec<Vec<Value>> = old_rows
                .iter()
                .map(|r| {
                    let mut r = r.clone();
                    if added {
                        r.extend([Value::Int(7), Value::Str("nn".into())]);
                    }
                    r
                })
                .collect();
            assert_eq!(got, want, "{what}");
            // Either way the table takes rows of its definition.
            let insert = if added {
                "INSERT INTO t VALUES (500, 1, 'z', 9, 'w')"
            } else {
                "INSERT INTO t VALUES (500, 1, 'z')"
            };
            run(&mut s, insert);
            assert_eq!(
                run(&mut s, "CHECK TABLE t")[0][3],
                Value::Str("OK".into()),
                "{what}"
            );
            drop(s);
            drop(inst);
            db.kill();
        }
    }
}
