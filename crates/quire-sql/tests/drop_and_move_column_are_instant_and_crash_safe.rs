//! ALTER TABLE … DROP COLUMN, ADD COLUMN … FIRST | AFTER and moving a column are catalog
//! changes only, as MariaDB 10.4+ makes them: the table keeps its space, the dropped
//! column's slot stays in the records as a ghost, and the records written before the ALTER
//! (in the table and in the undo log) read in the new shape. A crash at any I/O of the
//! ALTER leaves the old table or the new one, every row readable, `check` clean.

#![allow(clippy::result_large_err)]

mod common;

use common::{run, try_run};
use quire_engine::table::Db;
use quire_io::sim::{CrashMode, SimVfs};
use quire_sql::{Instance, Session, Value};

/// 200 rows of (id, v, x NOT NULL, s, y nullable BLOB), `v` indexed.
fn setup(s: &mut Session<'_>) {
    run(s, "CREATE DATABASE d");
    run(s, "USE d");
    run(
        s,
        "CREATE TABLE t (id INT PRIMARY KEY, v INT, x BIGINT NOT NULL, s VARCHAR(40), \
         y BLOB, KEY kv (v))",
    );
    for b in 0..4 {
        let rows: Vec<String> = (b * 50..b * 50 + 50)
            .map(|k| {
                format!(
                    "({k}, {}, {}, REPEAT('s', {}), {})",
                    k % 7,
                    k * 1000,
                    k % 30,
                    if k % 3 == 0 {
                        "NULL".to_string()
                    } else {
                        format!("REPEAT('y', {})", k % 50)
                    }
                )
            })
            .collect();
        run(s, &format!("INSERT INTO t VALUES {}", rows.join(", ")));
    }
}

/// Drops a fixed-size NOT NULL column and a nullable BLOB, adds one first and one in the
/// middle, and moves `s` right after `id`: every kind of instant change at once.
fn open(vfs: &SimVfs) -> Result<Db, quire_engine::table::DbError> {
    common::open(vfs, common::sim_config(128, 2 << 20, false))
}

const ALTER: &str = "ALTER TABLE t DROP COLUMN x, DROP COLUMN y, \
                     ADD COLUMN f INT NOT NULL DEFAULT 3 FIRST, \
                     ADD COLUMN m VARCHAR(10) DEFAULT 'mm' AFTER v, \
                     MODIFY s VARCHAR(40) AFTER id, ALGORITHM=INSTANT";

/// A row as the table shows it after ALTER: (f, id, s, v, m).
fn new_row(k: i64, v: i64) -> Vec<Value> {
    vec![
        Value::Int(3),
        Value::Int(k),
        Value::Str("s".repeat((k % 30) as usize)),
        Value::Int(v),
        Value::Str("mm".into()),
    ]
}

/// A row as the table shows it before: (id, v, x, s, y).
fn old_row(k: i64) -> Vec<Value> {
    vec![
        Value::Int(k),
        Value::Int(k % 7),
        Value::Int(k * 1000),
        Value::Str("s".repeat((k % 30) as usize)),
        if k % 3 == 0 {
            Value::Null
        } else {
            Value::Bytes(vec![b'y'; (k % 50) as usize])
        },
    ]
}

fn rows(s: &mut Session<'_>) -> Vec<Vec<Value>> {
    run(s, "SELECT * FROM t ORDER BY id")
}

#[test]
fn drop_add_and_move_keep_the_space_and_every_row_reads_in_the_new_shape() {
    let vfs = SimVfs::new(3);
    let db = open(&vfs).expect("open");
    let inst = Instance::new(&db);
    let mut s = inst.session("root", "localhost");
    setup(&mut s);
    // A snapshot older than an update made before the ALTER: its reads after the ALTER
    // build the old versions from undo records written in the old shape.
    let mut old = inst.session("root", "localhost");
    run(&mut old, "USE d");
    run(&mut old, "START TRANSACTION WITH CONSISTENT SNAPSHOT");
    run(&mut s, "UPDATE t SET v = v + 100 WHERE id < 10");
    let before = db.table("d", "t").expect("t").definition().expect("def");
    let files = vfs.list_files();
    run(&mut s, ALTER);
    let after = db.table("d", "t").expect("t").definition().expect("def");
    assert_eq!(after.space, before.space, "the table was copied");
    assert_eq!(after.rebuilt_at, before.rebuilt_at, "the table was rebuilt");
    assert_eq!(vfs.list_files(), files, "a file was made");
    assert_eq!(
        after.dropped.len(),
        2,
        "the dropped columns are kept as ghosts"
    );
    let want: Vec<Vec<Value>> = (0..200)
        .map(|k| new_row(k, k % 7 + if k < 10 { 100 } else { 0 }))
        .collect();
    assert_eq!(rows(&mut s), want);
    let snapshot: Vec<Vec<Value>> = (0..200).map(|k| new_row(k, k % 7)).collect();
    assert_eq!(
        rows(&mut old),
        snapshot,
        "the old versions, read in the new shape"
    );
    run(&mut old, "COMMIT");
    db.purge_now().expect("purge");

    // New rows hold the new shape; old rows updated take it on; the index still works.
    run(&mut s, "INSERT INTO t VALUES (4, 1000, 'new', 1, 'n1')");
    run(&mut s, "INSERT INTO t (id, v) VALUES (1001, 2)");
    run(
        &mut s,
        "UPDATE t SET m = 'upd', f = f + 1 WHERE id BETWEEN 20 AND 29",
    );
    run(&mut s, "DELETE FROM t WHERE id BETWEEN 30 AND 39");
    assert_eq!(
        run(
            &mut s,
            "SELECT COUNT(*) FROM t FORCE INDEX (kv) WHERE v >= 100"
        )[0][0],
        Value::Int(10)
    );
    assert_eq!(
        run(
            &mut s,
            "SELECT f, id, s, v, m FROM t WHERE id IN (25, 1000, 1001) ORDER BY id"
        ),
        vec![
            vec![
                Value::Int(4),
                Value::Int(25),
                Value::Str("s".repeat(25)),
                Value::Int(25 % 7),
                Value::Str("upd".into())
            ],
            vec![
                Value::Int(4),
                Value::Int(1000),
                Value::Str("new".into()),
                Value::Int(1),
                Value::Str("n1".into())
            ],
            vec![
                Value::Int(3),
                Value::Int(1001),
                Value::Null,
                Value::Int(2),
                Value::Str("mm".into())
            ],
        ]
    );
    // A name dropped can come back: a new column, not the ghost.
    run(
        &mut s,
        "ALTER TABLE t ADD COLUMN x INT AFTER f, ALGORITHM=INSTANT",
    );
    assert_eq!(
        run(&mut s, "SELECT COUNT(*), COUNT(x) FROM t")[0],
        [Value::Int(192), Value::Int(0)]
    );
    // An index on a moved column is built from every kind of record.
    run(&mut s, "ALTER TABLE t ADD INDEX ks (s)");
    assert_eq!(
        run(
            &mut s,
            "SELECT COUNT(*) FROM t FORCE INDEX (ks) WHERE s = 'sss'"
        )[0][0],
        Value::Int(6)
    );
    assert_eq!(run(&mut s, "CHECK TABLE t")[0][3], Value::Str("OK".into()));
    let want = rows(&mut s);
    drop((s, old));
    drop(inst);
    db.shutdown().expect("shutdown");
    let db = open(&vfs).expect("reopen");
    assert_eq!(db.check().expect("check"), Vec::<String>::new());
    let inst = Instance::new(&db);
    let mut s = inst.session("root", "localhost");
    run(&mut s, "USE d");
    assert_eq!(rows(&mut s), want);
    // A rebuild forgets the ghosts and keeps every row.
    run(&mut s, "ALTER TABLE t FORCE");
    let rebuilt = db.table("d", "t").expect("t").definition().expect("def");
    assert!(rebuilt.dropped.is_empty() && rebuilt.slot_order.is_empty());
    assert_eq!(rows(&mut s), want);
    assert_eq!(db.check().expect("check"), Vec::<String>::new());
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
            let altered = got.first().map(|r| r[0].clone()) == Some(Value::Int(3));
            assert!(!acked || altered, "{what}: an acknowledged ALTER was lost");
            let want: Vec<Vec<Value>> = (0..200)
                .map(|k| {
                    if altered {
                        new_row(k, k % 7)
                    } else {
                        old_row(k)
                    }
                })
                .collect();
            assert_eq!(got, want, "{what}");
            // Either way the table takes rows of its definition.
            let insert = if altered {
                "INSERT INTO t VALUES (7, 500, 'z', 1, 'w')"
            } else {
                "INSERT INTO t VALUES (500, 1, 5, 'z', NULL)"
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
