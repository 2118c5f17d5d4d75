//! ALTER TABLE … ADD INDEX, LOCK=NONE (and CREATE INDEX) let other sessions read and write
//! the table while the index is built, keep every change they make, and wait at the end
//! only for the transactions open on the table (docs/online-ddl.md).

// SqlError is what the session returns; the tests pass it on as is.
#![allow(clippy::result_large_err)]

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::{int, load_t, run as ok, state_of, try_run as q};
use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_sql::{Instance, SqlError, Value};

const ROWS: i64 = 60_000;

/// A 64 MiB redo log (common's is 32 MiB) with a 1 MiB log buffer.
fn small_config() -> Config {
    let mut c = Config::default();
    for (k, v) in [
        ("innodb_buffer_pool_size", "64M"),
        ("innodb_log_file_size", "64M"),
        ("innodb_log_buffer_size", "1M"),
        ("innodb_flush_log_at_trx_commit", "2"),
    ] {
        c.set(k, v).expect("setting");
    }
    c
}

#[test]
fn a_transaction_runs_while_the_index_is_built_and_the_alter_waits_for_its_commit() {
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
                    "ALTER TABLE t ADD INDEX by_v (v), ALGORITHM=INPLACE, LOCK=NONE",
                );
                done.store(true, Ordering::Release);
                r
            });
            // Wait for the build to be reading rows.
            let deadline = Instant::now() + Duration::from_secs(120);
            while state_of(&mut s, alter_id).as_deref() != Some("altering table") {
                assert!(
                    !done.load(Ordering::Acquire),
                    "the build ended before it was seen"
                );
                assert!(Instant::now() < deadline, "the build never started");
                std::thread::sleep(Duration::from_millis(1));
            }
            // A transaction reads and writes the table meanwhile.
            ok(&mut s, "START TRANSACTION");
            ok(&mut s, "INSERT INTO t VALUES (1000001, 7, 1000001)");
            ok(&mut s, "UPDATE t SET v = 4242 WHERE id = 5");
            ok(&mut s, "DELETE FROM t WHERE id = 6");
            assert_eq!(
                ok(&mut s, "SELECT COUNT(*) FROM t WHERE id > 1000000"),
                vec![vec![Value::Int(1)]]
            );
            // The ALTER cannot end while the transaction that used the table is open.
            assert!(
                !done.load(Ordering::Acquire),
                "the ALTER ended under an open transaction"
            );
            ok(&mut s, "COMMIT");
            let r = alter.join().expect("alter thread");
            r.unwrap_or_else(|e| panic!("ALTER: {e}"));
        });
        assert_eq!(
            ok(&mut s, "SELECT id FROM t FORCE INDEX (by_v) WHERE v = 4242"),
            vec![vec![Value::Int(5)]]
        );
        assert_eq!(
            ok(
                &mut s,
                "SELECT COUNT(*) FROM t FORCE INDEX (by_v) WHERE v = 7"
            ),
            vec![vec![Value::Int(ROWS / 100 + 1)]]
        );
        assert_eq!(
            ok(&mut s, "SELECT COUNT(*) FROM t WHERE id = 6"),
            vec![vec![Value::Int(0)]]
        );
        drop(s);
    }
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    db.shutdown().expect("shutdown");
}

#[test]
fn writers_keep_going_during_online_builds_and_lose_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), small_config()).expect("open");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        load_t(&mut s, ROWS);
        let stop = AtomicBool::new(false);
        let acked: Vec<i64> = std::thread::scope(|sc| {
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
                                &format!("INSERT INTO t VALUES ({id}, {}, {id})", k % 100),
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
            ok(&mut a, "ALTER TABLE t ADD INDEX by_v (v), LOCK=NONE");
            ok(&mut a, "CREATE UNIQUE INDEX by_u ON t (u)");
            stop.store(true, Ordering::Release);
            writers
                .into_iter()
                .flat_map(|w| w.join().expect("writer"))
                .collect()
        });
        for id in acked.iter().step_by(97) {
            assert_eq!(
                ok(
                    &mut s,
                    &format!("SELECT id FROM t FORCE INDEX (by_u) WHERE u = {id}")
                ),
                vec![vec![Value::Int(*id)]]
            );
        }
        let n = int(&ok(&mut s, "SELECT COUNT(*) FROM t")[0][0]);
        assert_eq!(n, ROWS + acked.len() as i64);
        drop(s);
    }
    // Every index holds exactly its rows' entries.
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    db.shutdown().expect("shutdown");
}

#[test]
fn a_duplicate_in_the_rows_fails_an_online_unique_build_and_keeps_the_table() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), small_config()).expect("open");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        ok(&mut s, "CREATE DATABASE d");
        ok(&mut s, "USE d");
        ok(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
        ok(&mut s, "INSERT INTO t VALUES (1, 10), (2, 20), (3, 10)");
        match q(&mut s, "ALTER TABLE t ADD UNIQUE INDEX uv (v), LOCK=NONE") {
            Err(e @ SqlError::DuplicateKey { .. }) => {
                assert_eq!(e.to_string(), "Duplicate entry '10' for key 'uv'")
            }
            other => panic!("expected 1062, got {other:?}"),
        }
        assert_eq!(ok(&mut s, "SHOW INDEX FROM t").len(), 1);
        ok(&mut s, "INSERT INTO t VALUES (4, 40)");
        drop(s);
    }
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    db.shutdown().expect("shutdown");
}
