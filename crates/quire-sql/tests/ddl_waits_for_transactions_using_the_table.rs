//! Metadata locks (issue 15): a DDL waits for the transactions that used its table, a
//! wait ends at `lock_wait_timeout` (1205) or on KILL QUERY (1317), new transactions queue
//! behind a waiting DDL, and a DML statement never sees a table half-dropped.

// SqlError is what the session returns; the tests pass it on as is.
#![allow(clippy::result_large_err)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_sql::{CollectSink, Instance, Session, SqlError, Value};

const WAITING: &str = "Waiting for table metadata lock";

fn q(s: &mut Session<'_>, sql: &str) -> Result<Vec<Vec<Value>>, SqlError> {
    let mut c = CollectSink::default();
    s.query(sql, &mut c).map(|_| c.rows)
}

fn ok(s: &mut Session<'_>, sql: &str) -> Vec<Vec<Value>> {
    q(s, sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn small_config() -> Config {
    let mut c = Config::default();
    for (k, v) in [
        ("innodb_buffer_pool_size", "16M"),
        ("innodb_log_file_size", "16M"),
        ("innodb_log_buffer_size", "1M"),
        ("innodb_flush_log_at_trx_commit", "2"),
    ] {
        c.set(k, v).expect("setting");
    }
    c
}

/// A database `d` with `t (id, v)` holding rows 1..=3, and an instance over it.
fn with_instance(f: impl FnOnce(&Instance<'_>)) {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), small_config()).expect("open");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        ok(&mut s, "CREATE DATABASE d");
        ok(&mut s, "USE d");
        ok(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
        ok(&mut s, "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)");
        drop(s);
        f(&inst);
    }
    db.shutdown().expect("shutdown");
}

fn session<'d>(inst: &'d Instance<'d>) -> Session<'d> {
    let mut s = inst.session("root", "localhost");
    ok(&mut s, "USE d");
    s
}

/// Waits until session `id` shows `state` in SHOW PROCESSLIST's State.
fn wait_for_state(inst: &Instance<'_>, id: u64, state: &str) {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let now = inst
            .sessions()
            .into_iter()
            .find(|s| s.id == id)
            .map(|s| *s.state.lock());
        if now == Some(state) {
            return;
        }
        assert!(
            Instant::now() < until,
            "session {id} never reached {state:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn drop_table_waits_until_a_transaction_that_read_it_commits() {
    with_instance(|inst| {
        let mut a = session(inst);
        ok(&mut a, "BEGIN");
        assert_eq!(
            ok(&mut a, "SELECT v FROM t WHERE id = 2"),
            vec![vec![Value::Int(20)]]
        );
        let dropped = AtomicBool::new(false);
        let b_id = AtomicU64::new(0);
        std::thread::scope(|sc| {
            let ddl = sc.spawn(|| {
                let mut b = session(inst);
                b_id.store(b.id(), Ordering::Release);
                let r = q(&mut b, "DROP TABLE t");
                dropped.store(true, Ordering::Release);
                r
            });
            while b_id.load(Ordering::Acquire) == 0 {
                std::thread::yield_now();
            }
            wait_for_state(inst, b_id.load(Ordering::Acquire), WAITING);
            std::thread::sleep(Duration::from_millis(200));
            assert!(!dropped.load(Ordering::Acquire), "DROP did not wait");
            // The reader's transaction goes on with the table whole.
            assert_eq!(ok(&mut a, "SELECT COUNT(*) FROM t").len(), 1);
            ok(&mut a, "UPDATE t SET v = v + 1 WHERE id = 1");
            assert_eq!(
                ok(&mut a, "SELECT v FROM t WHERE id = 1"),
                vec![vec![Value::Int(11)]]
            );
            ok(&mut a, "COMMIT");
            ddl.join()
                .expect("ddl thread")
                .expect("DROP TABLE after the commit");
        });
        assert!(matches!(
            q(&mut a, "SELECT * FROM t"),
            Err(SqlError::NoSuchTable { .. })
        ));
        let state = inst
            .sessions()
            .into_iter()
            .map(|s| *s.state.lock())
            .collect::<Vec<_>>();
        assert!(state.iter().all(|s| s.is_empty()), "{state:?}");
    });
}

#[test]
fn drop_table_times_out_with_1205_under_a_small_lock_wait_timeout() {
    with_instance(|inst| {
        let mut a = session(inst);
        ok(&mut a, "BEGIN");
        ok(&mut a, "SELECT * FROM t");
        let mut b = session(inst);
        ok(&mut b, "SET SESSION lock_wait_timeout = 1");
        assert_eq!(
            ok(
                &mut b,
                "SELECT @@lock_wait_timeout, @@global.lock_wait_timeout"
            ),
            vec![vec![Value::UInt(1), Value::UInt(86_400)]]
        );
        let t0 = Instant::now();
        let e = q(&mut b, "DROP TABLE t").expect_err("DROP must time out");
        assert!(matches!(e, SqlError::LockWaitTimeout), "{e}");
        assert_eq!(
            e.to_string(),
            "Lock wait timeout exceeded; try restarting transaction"
        );
        assert!(
            t0.elapsed() >= Duration::from_millis(900),
            "{:?}",
            t0.elapsed()
        );
        // Nothing was dropped, and the same holds for every DDL on the table.
        for ddl in [
            "TRUNCATE TABLE t",
            "CREATE INDEX v ON t (v)",
            "RENAME TABLE t TO t2",
            "DROP DATABASE d",
        ] {
            ok(&mut b, "SET SESSION lock_wait_timeout = 0");
            let e = q(&mut b, ddl).expect_err(ddl);
            assert!(matches!(e, SqlError::LockWaitTimeout), "{ddl}: {e}");
        }
        assert_eq!(
            ok(&mut a, "SELECT COUNT(*) FROM t"),
            vec![vec![Value::Int(3)]]
        );
        ok(&mut a, "COMMIT");
        ok(&mut b, "DROP TABLE t");
    });
}

#[test]
fn create_index_waits_for_a_transaction_that_read_the_table() {
    with_instance(|inst| {
        let mut a = session(inst);
        ok(&mut a, "BEGIN");
        ok(&mut a, "SELECT * FROM t WHERE id = 1");
        let mut b = session(inst);
        ok(&mut b, "UPDATE t SET v = 99 WHERE id = 1");
        ok(&mut b, "SET lock_wait_timeout = 1");
        let e = q(&mut b, "CREATE INDEX v ON t (v)").expect_err("waits for a");
        assert!(matches!(e, SqlError::LockWaitTimeout), "{e}");
        // The snapshot still reads the old value, by any path.
        assert_eq!(
            ok(&mut a, "SELECT id FROM t WHERE v = 10"),
            vec![vec![Value::Int(1)]]
        );
        ok(&mut a, "COMMIT");
        ok(&mut b, "CREATE INDEX v ON t (v)");
    });
}

#[test]
fn kill_query_ends_a_metadata_lock_wait() {
    with_instance(|inst| {
        let mut a = session(inst);
        ok(&mut a, "BEGIN");
        ok(&mut a, "SELECT * FROM t");
        let b_id = AtomicU64::new(0);
        std::thread::scope(|sc| {
            let ddl = sc.spawn(|| {
                let mut b = session(inst);
                b_id.store(b.id(), Ordering::Release);
                let t0 = Instant::now();
                let r = q(&mut b, "DROP TABLE t");
                // KILL QUERY ends the statement, not the connection.
                let after = q(&mut b, "SELECT 1");
                (r, t0.elapsed(), after)
            });
            while b_id.load(Ordering::Acquire) == 0 {
                std::thread::yield_now();
            }
            let id = b_id.load(Ordering::Acquire);
            wait_for_state(inst, id, WAITING);
            let mut c = session(inst);
            ok(&mut c, &format!("KILL QUERY {id}"));
            let (r, waited, after) = ddl.join().expect("ddl thread");
            let e = r.expect_err("the wait was killed");
            assert!(matches!(e, SqlError::Interrupted), "{e}");
            assert!(waited < Duration::from_secs(20), "{waited:?}");
            assert!(after.is_ok(), "{after:?}");
        });
        // The reader was never disturbed; the table is whole.
        assert_eq!(
            ok(&mut a, "SELECT COUNT(*) FROM t"),
            vec![vec![Value::Int(3)]]
        );
        ok(&mut a, "COMMIT");
    });
}

#[test]
fn dml_in_a_new_transaction_waits_behind_a_waiting_ddl() {
    with_instance(|inst| {
        let mut a = session(inst);
        ok(&mut a, "BEGIN");
        ok(&mut a, "SELECT * FROM t");
        let b_id = AtomicU64::new(0);
        let c_id = AtomicU64::new(0);
        std::thread::scope(|sc| {
            let ddl = sc.spawn(|| {
                let mut b = session(inst);
                b_id.store(b.id(), Ordering::Release);
                q(&mut b, "DROP TABLE t")
            });
            while b_id.load(Ordering::Acquire) == 0 {
                std::thread::yield_now();
            }
            wait_for_state(inst, b_id.load(Ordering::Acquire), WAITING);
            // A new transaction queues behind the DDL (writer preference), even though the
            // only holder is a reader it could share with...
            let mut d = session(inst);
            ok(&mut d, "SET lock_wait_timeout = 1");
            ok(&mut d, "BEGIN");
            let e = q(&mut d, "SELECT * FROM t").expect_err("queued behind the DDL");
            assert!(matches!(e, SqlError::LockWaitTimeout), "{e}");
            ok(&mut d, "ROLLBACK");
            // ... and an autocommit write waits until the DDL is done: then the table is gone.
            let dml = sc.spawn(|| {
                let mut c = session(inst);
                c_id.store(c.id(), Ordering::Release);
                q(&mut c, "INSERT INTO t VALUES (4, 40)")
            });
            while c_id.load(Ordering::Acquire) == 0 {
                std::thread::yield_now();
            }
            wait_for_state(inst, c_id.load(Ordering::Acquire), WAITING);
            // The holder itself is not held up by the waiting DDL.
            ok(&mut a, "INSERT INTO t VALUES (5, 50)");
            ok(&mut a, "COMMIT");
            ddl.join().expect("ddl").expect("DROP TABLE");
            let e = dml.join().expect("dml").expect_err("the table is gone");
            assert!(matches!(e, SqlError::NoSuchTable { .. }), "{e}");
        });
    });
}

#[test]
fn a_session_own_transaction_does_not_block_its_ddl() {
    with_instance(|inst| {
        let mut a = session(inst);
        ok(&mut a, "SET lock_wait_timeout = 0");
        ok(&mut a, "BEGIN");
        ok(&mut a, "INSERT INTO t VALUES (4, 40)");
        // DDL commits the open transaction first, which releases its locks.
        ok(&mut a, "CREATE INDEX v ON t (v)");
        assert!(!a.in_transaction());
        ok(&mut a, "SET autocommit = 0");
        ok(&mut a, "SELECT * FROM t");
        ok(&mut a, "TRUNCATE TABLE t");
        let mut b = session(inst);
        assert_eq!(
            ok(&mut b, "SELECT COUNT(*) FROM t"),
            vec![vec![Value::Int(0)]]
        );
    });
}

#[test]
fn processlist_shows_the_metadata_lock_wait() {
    with_instance(|inst| {
        let mut a = session(inst);
        ok(&mut a, "BEGIN");
        ok(&mut a, "SELECT * FROM t");
        let b_id = AtomicU64::new(0);
        std::thread::scope(|sc| {
            let ddl = sc.spawn(|| {
                let mut b = session(inst);
                b_id.store(b.id(), Ordering::Release);
                b.info().set_command("Query", Some("DROP TABLE t"));
                q(&mut b, "DROP TABLE t")
            });
            while b_id.load(Ordering::Acquire) == 0 {
                std::thread::yield_now();
            }
            let id = b_id.load(Ordering::Acquire);
            wait_for_state(inst, id, WAITING);
            let rows = ok(&mut a, "SHOW PROCESSLIST");
            let row = rows
                .iter()
                .find(|r| r[0] == Value::UInt(id))
                .expect("the DDL's row");
            assert_eq!(row[4], Value::Str("Query".into()));
            assert_eq!(row[6], Value::Str(WAITING.into()));
            assert_eq!(row[7], Value::Str("DROP TABLE t".into()));
            ok(&mut a, "COMMIT");
            ddl.join().expect("ddl").expect("DROP TABLE");
        });
    });
}

/// Many autocommit and transactional writers while another session drops and re-creates
/// the table: each statement sees the table whole or not at all (1146), never a failure
/// in between, and a transaction never sees its own rows vanish.
#[test]
fn a_dml_statement_never_sees_a_half_dropped_table() {
    with_instance(|inst| {
        let stop = AtomicBool::new(false);
        let bad = std::sync::Mutex::new(Vec::<String>::new());
        std::thread::scope(|sc| {
            for w in 0..3i64 {
                let (stop, bad) = (&stop, &bad);
                sc.spawn(move || {
                    let mut s = session(inst);
                    let mut n = 0i64;
                    while !stop.load(Ordering::Acquire) {
                        n += 1;
                        let base = (w * 1_000_000 + n) * 100;
                        let rows: Vec<String> =
                            (0..40).map(|i| format!("({}, {w})", base + i)).collect();
                        let insert = format!("INSERT INTO t VALUES {}", rows.join(","));
                        if n % 2 == 0 {
                            // Autocommit: the whole statement, or 1146.
                            match q(&mut s, &insert) {
                                Ok(_) | Err(SqlError::NoSuchTable { .. }) => {}
                                Err(e) => bad.lock().expect("lock").push(format!("insert: {e}")),
                            }
                            continue;
                        }
                        // A transaction: its rows stay until it ends.
                        if let Err(e) = q(&mut s, "BEGIN") {
                            bad.lock().expect("lock").push(format!("begin: {e}"));
                        }
                        let r = q(&mut s, &insert).and_then(|_| {
                            q(
                                &mut s,
                                &format!(
                                    "SELECT COUNT(*) FROM t WHERE id >= {base} AND id < {}",
                                    base + 100
                                ),
                            )
                        });
                        match r {
                            Ok(rows) if rows == vec![vec![Value::Int(40)]] => {}
                            Ok(rows) => bad
                                .lock()
                                .expect("lock")
                                .push(format!("own rows: {rows:?}")),
                            Err(SqlError::NoSuchTable { .. }) => {}
                            Err(e) => bad.lock().expect("lock").push(format!("trx: {e}")),
                        }
                        if let Err(e) = q(&mut s, "COMMIT") {
                            bad.lock().expect("lock").push(format!("commit: {e}"));
                        }
                    }
                });
            }
            let mut ddl = session(inst);
            for _ in 0..15 {
                std::thread::sleep(Duration::from_millis(20));
                ok(&mut ddl, "DROP TABLE t");
                std::thread::sleep(Duration::from_millis(5));
                ok(&mut ddl, "CREATE TABLE t (id BIGINT PRIMARY KEY, v INT)");
            }
            stop.store(true, Ordering::Release);
        });
        let bad = bad.into_inner().expect("lock");
        assert!(
            bad.is_empty(),
            "{} bad outcomes, first: {:?}",
            bad.len(),
            &bad[..bad.len().min(5)]
        );
    });
}
