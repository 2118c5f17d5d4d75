//! ALTER TABLE operations that rebuild the table (a column added with an index, NULL-ability,
//! FORCE, several indexes at once, a new primary key), with LOCK=NONE or no LOCK, let other sessions read and
//! write the table while it is copied, keep every change they make, and wait at the end only
//! for the transactions open on the table (docs/online-ddl.md, "Table rebuilds").

// SqlError is what the session returns; the tests pass it on as is.
#![allow(clippy::result_large_err)]

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::{int, load_t, run as ok, small_config, state_of, try_run as q};
use quire_engine::table::Db;
use quire_sql::{Instance, Session, Value};

const ROWS: i64 = 30_000;

#[test]
fn a_transaction_runs_while_the_table_is_rebuilt_and_the_alter_waits_for_its_commit() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), small_config()).expect("open");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        load_t(&mut s, ROWS);
        let mut a = inst.session("root", "localhost");
        ok(&mut a, "USE d");
        let alter_id = int(&ok(&mut a, "SELECT CONNECTION_ID()")[0][0]) as u64;
        let done = AtomicBool::new(false);
        std::thread::scope(|sc| {
            let alter = sc.spawn(|| {
                let r = q(
                    &mut a,
                    "ALTER TABLE t ADD COLUMN w INT DEFAULT 3 AFTER id, ADD INDEX by_v (v), LOCK=NONE",
                );
                done.store(true, Ordering::Release);
                r
            });
            // Wait for the rebuild to be copying rows.
            let deadline = Instant::now() + Duration::from_secs(120);
            while state_of(&mut s, alter_id).as_deref() != Some("altering table") {
                assert!(
                    !done.load(Ordering::Acquire),
                    "the rebuild ended before it was seen"
                );
                assert!(Instant::now() < deadline, "the rebuild never started");
                std::thread::sleep(Duration::from_millis(1));
            }
            // A transaction reads and writes the table meanwhile.
            ok(&mut s, "START TRANSACTION");
            ok(
                &mut s,
                "INSERT INTO t (id, v, u) VALUES (1000001, 7, 1000001)",
            );
            ok(&mut s, "UPDATE t SET v = 4242 WHERE id = 5");
            ok(
                &mut s,
                &format!("UPDATE t SET v = 4343 WHERE id = {}", ROWS - 1),
            );
            ok(&mut s, "DELETE FROM t WHERE id = 6");
            assert_eq!(
                ok(&mut s, "SELECT COUNT(*) FROM t WHERE id > 1000000"),
                vec![vec![Value::Int(1)]]
            );
            // The ALTER cannot end while the transaction that used the table is open.
            std::thread::sleep(Duration::from_millis(200));
            assert!(
                !done.load(Ordering::Acquire),
                "the ALTER ended under an open transaction"
            );
            ok(&mut s, "COMMIT");
            let r = alter.join().expect("alter thread");
            r.unwrap_or_else(|e| panic!("ALTER: {e}"));
        });
        assert_eq!(
            ok(
                &mut s,
                "SELECT id, w FROM t FORCE INDEX (by_v) WHERE v = 4242"
            ),
            vec![vec![Value::Int(5), Value::Int(3)]]
        );
        assert_eq!(
            ok(&mut s, "SELECT id FROM t FORCE INDEX (by_v) WHERE v = 4343"),
            vec![vec![Value::Int(ROWS - 1)]]
        );
        assert_eq!(
            ok(&mut s, "SELECT w, v, u FROM t WHERE id = 1000001"),
            vec![vec![Value::Int(3), Value::Int(7), Value::Int(1000001)]]
        );
        assert_eq!(
            ok(&mut s, "SELECT COUNT(*) FROM t WHERE id = 6"),
            vec![vec![Value::Int(0)]]
        );
        assert_eq!(
            ok(&mut s, "SELECT COUNT(*) FROM t WHERE w = 3"),
            vec![vec![Value::Int(ROWS)]]
        );
        drop(s);
    }
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    db.shutdown().expect("shutdown");
}

#[test]
fn writers_keep_going_during_online_rebuilds_and_lose_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), small_config()).expect("open");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        load_t(&mut s, ROWS);
        let stop = AtomicBool::new(false);
        let (acked, during): (Vec<i64>, usize) = std::thread::scope(|sc| {
            let writers: Vec<_> = (0..2i64)
                .map(|w| {
                    let (inst, stop) = (&inst, &stop);
                    sc.spawn(move || {
                        let mut s = inst.session("root", "localhost");
                        ok(&mut s, "USE d");
                        let mut acked = Vec::new();
                        let mut k = 0;
                        while !stop.load(Ordering::Acquire) {
                            let id = 2_000_000 * (w + 1) + k;
                            k += 1;
                            ok(
                                &mut s,
                                &format!(
                                    "INSERT INTO t (id, v, u) VALUES ({id}, {}, {id})",
                                    k % 100
                                ),
                            );
                            acked.push(id);
                            let target = (k * 37) % ROWS + 1;
                            ok(
                                &mut s,
                                &format!("UPDATE t SET v = v + 1 WHERE id = {target}"),
                            );
                            if k % 5 == 0 {
                                ok(&mut s, "START TRANSACTION");
                                ok(&mut s, &format!("UPDATE t SET v = 0 WHERE id = {target}"));
                                ok(&mut s, "ROLLBACK");
                            }
                        }
                        acked
                    })
                })
                .collect();
            let mut a = inst.session("root", "localhost");
            ok(&mut a, "USE d");
            let count = |s: &mut Session<'_>| int(&ok(s, "SELECT COUNT(*) FROM t")[0][0]);
            let before = count(&mut a);
            // A column with an index (a rebuild), NULL-ability, several indexes at once,
            // FORCE and a new primary key: each online.
            ok(
                &mut a,
                "ALTER TABLE t ADD COLUMN w INT NOT NULL DEFAULT 1, ADD INDEX by_v (v), LOCK=NONE",
            );
            ok(&mut a, "ALTER TABLE t MODIFY u INT NOT NULL");
            ok(
                &mut a,
                "ALTER TABLE t ADD UNIQUE INDEX by_u (u), ADD INDEX by_vu (v, u), LOCK=NONE",
            );
            ok(&mut a, "ALTER TABLE t FORCE, LOCK=NONE");
            ok(
                &mut a,
                "ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (u, id), LOCK=NONE",
            );
            let during = (count(&mut a) - before) as usize;
            stop.store(true, Ordering::Release);
            let acked = writers
                .into_iter()
                .flat_map(|w| w.join().expect("writer"))
                .collect();
            (acked, during)
        });
        assert!(during > 0, "no writer got through during the rebuilds");
        for id in acked.iter().step_by(97) {
            assert_eq!(
                ok(
                    &mut s,
                    &format!("SELECT id, w FROM t FORCE INDEX (by_u) WHERE u = {id}")
                ),
                vec![vec![Value::Int(*id), Value::Int(1)]]
            );
        }
        let n = int(&ok(&mut s, "SELECT COUNT(*) FROM t")[0][0]);
        assert_eq!(n, ROWS + acked.len() as i64);
        assert_eq!(
            ok(&mut s, "SHOW COLUMNS FROM t WHERE Field = 'u'")[0][2],
            Value::Str("NO".into())
        );
        drop(s);
    }
    // Every index holds exactly its rows' entries.
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    db.shutdown().expect("shutdown");
}

#[test]
fn kill_stops_an_online_rebuild_and_keeps_the_table() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), small_config()).expect("open");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        load_t(&mut s, ROWS);
        let mut a = inst.session("root", "localhost");
        ok(&mut a, "USE d");
        let alter_id = int(&ok(&mut a, "SELECT CONNECTION_ID()")[0][0]) as u64;
        std::thread::scope(|sc| {
            let alter = sc.spawn(|| q(&mut a, "ALTER TABLE t FORCE, LOCK=NONE"));
            let deadline = Instant::now() + Duration::from_secs(120);
            while state_of(&mut s, alter_id).as_deref() != Some("altering table") {
                assert!(Instant::now() < deadline, "the rebuild never started");
                std::thread::sleep(Duration::from_millis(1));
            }
            ok(&mut s, &format!("KILL QUERY {alter_id}"));
            match alter.join().expect("alter thread") {
                Err(e) => assert_eq!(e.to_string(), "Query execution was interrupted"),
                Ok(_) => panic!("the killed rebuild succeeded"),
            }
        });
        ok(&mut s, "INSERT INTO t VALUES (1000001, 1, 1)");
        assert_eq!(
            ok(&mut s, "SELECT COUNT(*) FROM t"),
            vec![vec![Value::Int(ROWS + 1)]]
        );
        drop(s);
    }
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    // No space of the abandoned copy is left.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(
        !left.iter().any(|n| n.to_string_lossy().contains("alter")),
        "{left:?}"
    );
    db.shutdown().expect("shutdown");
}
