//! SET GLOBAL of the engine's dynamic settings changes them while it runs, SHOW VARIABLES
//! and @@GLOBAL show the new value, and the static ones answer 1238 as MariaDB 10.11 does.

// SqlError is what the session returns; the tests pass it on as is.
#![allow(clippy::result_large_err)]

use std::time::{Duration, Instant};

use quire_engine::config::{Config, FlushAtCommit};
use quire_engine::table::Db;
use quire_sql::{CollectSink, Instance, Session, SqlError, Value};

fn q(s: &mut Session<'_>, sql: &str) -> Result<Vec<Vec<Value>>, SqlError> {
    let mut c = CollectSink::default();
    s.query(sql, &mut c).map(|_| c.rows)
}

fn ok(s: &mut Session<'_>, sql: &str) -> Vec<Vec<Value>> {
    q(s, sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn one(s: &mut Session<'_>, sql: &str) -> Value {
    ok(s, sql).remove(0).remove(0)
}

/// SHOW GLOBAL VARIABLES' value of `name`.
fn shown(s: &mut Session<'_>, name: &str) -> String {
    match &ok(s, &format!("SHOW GLOBAL VARIABLES LIKE '{name}'"))[0][1] {
        Value::Str(v) => v.clone(),
        other => panic!("{other:?}"),
    }
}

fn warnings(s: &mut Session<'_>) -> Vec<(i64, String)> {
    ok(s, "SHOW WARNINGS")
        .into_iter()
        .map(|r| {
            let code = match &r[1] {
                Value::Int(i) => *i,
                Value::UInt(u) => *u as i64,
                other => panic!("{other:?}"),
            };
            (code, format!("{:?}", r[2]))
        })
        .collect()
}

fn config() -> Config {
    let mut c = Config::default();
    for (k, v) in [
        ("innodb_buffer_pool_size", "16M"),
        ("innodb_log_file_size", "32M"),
        ("innodb_log_buffer_size", "8M"),
    ] {
        c.set(k, v).expect("setting");
    }
    c
}

fn with_db(f: impl FnOnce(&Db, &Instance<'_>)) {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), config()).expect("open");
    {
        let inst = Instance::new(&db);
        f(&db, &inst);
    }
    db.shutdown().expect("shutdown");
}

#[test]
fn flushing_and_lru_settings_change_live_and_show() {
    with_db(|db, inst| {
        let mut s = inst.session("root", "localhost");
        let pool = db.engine().pool();
        ok(&mut s, "SET GLOBAL innodb_io_capacity = 300");
        ok(&mut s, "SET GLOBAL innodb_io_capacity_max = 4000");
        ok(&mut s, "SET GLOBAL innodb_max_dirty_pages_pct = 75");
        ok(&mut s, "SET GLOBAL innodb_max_dirty_pages_pct_lwm = 20");
        ok(&mut s, "SET GLOBAL innodb_old_blocks_pct = 50");
        ok(&mut s, "SET GLOBAL innodb_old_blocks_time = 0");
        let live = pool.live_config();
        assert_eq!(
            (
                live.io_capacity,
                live.io_capacity_max,
                live.max_dirty_pages_pct,
                live.max_dirty_pages_pct_lwm,
                live.old_blocks_pct,
                live.old_blocks_time_ms
            ),
            (300, 4000, 75, 20, 50, 0)
        );
        assert_eq!(
            one(&mut s, "SELECT @@global.innodb_io_capacity"),
            Value::UInt(300)
        );
        assert_eq!(shown(&mut s, "innodb_io_capacity_max"), "4000");
        assert_eq!(shown(&mut s, "innodb_max_dirty_pages_pct"), "75.000000");
        assert_eq!(shown(&mut s, "innodb_old_blocks_pct"), "50");

        // io_capacity above its maximum raises the maximum to twice it (MariaDB's warnings).
        ok(&mut s, "SET GLOBAL innodb_io_capacity = 5000");
        assert_eq!(pool.live_config().io_capacity_max, 10_000);
        let w = warnings(&mut s);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w.iter().all(|(c, _)| *c == 1210), "{w:?}");
        // ... and a maximum below it lowers it.
        ok(&mut s, "SET GLOBAL innodb_io_capacity_max = 150");
        assert_eq!(
            (
                pool.live_config().io_capacity,
                pool.live_config().io_capacity_max
            ),
            (150, 150)
        );
        // Out of range: clamped with 1292, as MariaDB.
        ok(&mut s, "SET GLOBAL innodb_io_capacity = 50");
        assert_eq!(pool.live_config().io_capacity, 100);
        assert_eq!(warnings(&mut s)[0].0, 1292);
        // The low-water mark cannot pass the maximum.
        ok(&mut s, "SET GLOBAL innodb_max_dirty_pages_pct_lwm = 80");
        assert_eq!(pool.live_config().max_dirty_pages_pct_lwm, 75);
        ok(&mut s, "SET GLOBAL innodb_max_dirty_pages_pct = 10");
        assert_eq!(
            (
                pool.live_config().max_dirty_pages_pct,
                pool.live_config().max_dirty_pages_pct_lwm
            ),
            (10, 10)
        );
        ok(&mut s, "SET GLOBAL innodb_adaptive_flushing = OFF");
        assert_eq!(shown(&mut s, "innodb_adaptive_flushing"), "OFF");
        assert_eq!(
            one(&mut s, "SELECT @@global.innodb_adaptive_flushing"),
            Value::Int(0)
        );
        ok(&mut s, "SET GLOBAL innodb_adaptive_flushing_lwm = 25.5");
        assert_eq!(shown(&mut s, "innodb_adaptive_flushing_lwm"), "25.500000");
        // DEFAULT is the engine's default.
        ok(&mut s, "SET GLOBAL innodb_io_capacity_max = DEFAULT");
        ok(&mut s, "SET GLOBAL innodb_io_capacity = DEFAULT");
        assert_eq!(
            (
                pool.live_config().io_capacity,
                pool.live_config().io_capacity_max
            ),
            (2000, 20_000)
        );
        // A new session sees the global values.
        let mut t = inst.session("root", "localhost");
        assert_eq!(
            one(&mut t, "SELECT @@global.innodb_max_dirty_pages_pct"),
            Value::Double(10.0)
        );
    });
}

#[test]
fn log_settings_change_live() {
    with_db(|db, inst| {
        let mut s = inst.session("root", "localhost");
        ok(&mut s, "SET GLOBAL innodb_flush_log_at_trx_commit = 2");
        assert_eq!(
            db.engine().log().flush_at_commit(),
            FlushAtCommit::WriteOnly
        );
        assert_eq!(shown(&mut s, "innodb_flush_log_at_trx_commit"), "2");
        let before = db.engine().log().capacity();
        ok(&mut s, "SET GLOBAL innodb_log_file_size = 67108864");
        assert!(db.engine().log().capacity() > before);
        assert_eq!(shown(&mut s, "innodb_log_file_size"), "67108864");
        // Below the log buffer: MariaDB's 1210, nothing changed.
        let e = q(&mut s, "SET GLOBAL innodb_log_file_size = 4194304").expect_err("too small");
        assert!(matches!(e, SqlError::InvalidArgument(_)), "{e}");
        let log = db.engine().log();
        if log.can_be_direct() {
            // Automatic buffering followed the commit mode, and the resized file kept it.
            assert_eq!(shown(&mut s, "innodb_log_file_buffering"), "ON");
            assert!(!log.direct_io());
            // An explicit OFF goes back to O_DIRECT while the commits only write.
            ok(&mut s, "SET GLOBAL innodb_log_file_buffering = OFF");
            assert!(log.direct_io());
            assert_eq!(shown(&mut s, "innodb_log_file_buffering"), "OFF");
            ok(&mut s, "SET GLOBAL innodb_flush_log_at_trx_commit = 1");
            ok(&mut s, "SET GLOBAL innodb_log_file_buffering = ON");
            assert!(!log.direct_io());
            assert_eq!(shown(&mut s, "innodb_log_file_buffering"), "ON");
        } else {
            // A file system without O_DIRECT: the log stays buffered, and says so.
            ok(&mut s, "SET GLOBAL innodb_log_file_buffering = OFF");
            assert_eq!(warnings(&mut s)[0].0, 1210);
            assert_eq!(shown(&mut s, "innodb_log_file_buffering"), "ON");
        }
    });
}

#[test]
fn transaction_and_purge_settings_change_live() {
    with_db(|db, inst| {
        let mut s = inst.session("root", "localhost");
        ok(&mut s, "CREATE DATABASE d");
        ok(&mut s, "USE d");
        ok(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
        ok(&mut s, "INSERT INTO t VALUES (1, 0)");

        // innodb_lock_wait_timeout: the global default of new transactions.
        ok(&mut s, "SET GLOBAL innodb_lock_wait_timeout = 1");
        assert_eq!(shown(&mut s, "innodb_lock_wait_timeout"), "1");
        ok(&mut s, "BEGIN");
        ok(&mut s, "UPDATE t SET v = 1 WHERE id = 1");
        let mut b = inst.session("root", "localhost");
        ok(&mut b, "USE d");
        let t0 = Instant::now();
        let e = q(&mut b, "UPDATE t SET v = 2 WHERE id = 1").expect_err("lock wait");
        assert!(matches!(e, SqlError::LockWaitTimeout), "{e}");
        assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
        ok(&mut s, "COMMIT");

        // innodb_purge_batch_size: the next batch takes at most that many logs.
        ok(&mut s, "SET GLOBAL innodb_purge_batch_size = 1");
        let until = Instant::now() + Duration::from_secs(20);
        while db.stat("quire_purge_batch_size_effective") != Some(1) {
            assert!(
                Instant::now() < until,
                "purge never took the new batch size"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        ok(&mut s, "SET GLOBAL innodb_purge_batch_size = DEFAULT");
        assert_eq!(shown(&mut s, "innodb_purge_batch_size"), "0");

        // innodb_max_purge_lag: with history held by an old snapshot, DML is delayed.
        let mut old = inst.session("root", "localhost");
        ok(&mut old, "START TRANSACTION WITH CONSISTENT SNAPSHOT");
        ok(&mut s, "SET GLOBAL innodb_max_purge_lag = 1");
        ok(&mut s, "SET GLOBAL innodb_max_purge_lag_delay = 1000");
        let delayed = db.stat("quire_purge_lag_delay_us").expect("counter");
        for i in 0..10 {
            ok(&mut s, &format!("UPDATE t SET v = {i} WHERE id = 1"));
        }
        assert!(db.stat("quire_purge_lag_delay_us").expect("counter") > delayed);
        ok(&mut old, "COMMIT");
        ok(&mut s, "SET GLOBAL innodb_max_purge_lag = 0");

        ok(&mut s, "SET GLOBAL innodb_purge_threads = 0");
        assert_eq!(
            shown(&mut s, "innodb_purge_threads"),
            "1",
            "MariaDB's minimum"
        );
        ok(&mut s, "SET GLOBAL innodb_fast_shutdown = 0");
        assert_eq!(db.settings().fast_shutdown, 0);
        let e = q(&mut s, "SET GLOBAL innodb_fast_shutdown = 2").expect_err("not done");
        assert!(matches!(e, SqlError::WrongValueForVariable { .. }), "{e}");
    });
}

#[test]
fn static_settings_are_read_only_and_bad_values_are_refused() {
    with_db(|db, inst| {
        let mut s = inst.session("root", "localhost");
        for (name, value) in [
            ("innodb_page_size", "16384"),
            ("innodb_doublewrite", "OFF"),
            ("innodb_flush_method", "'fsync'"),
            ("innodb_log_buffer_size", "1048576"),
            ("quire_doublewrite_slots", "2"),
        ] {
            for scope in ["GLOBAL", "SESSION"] {
                let e = q(&mut s, &format!("SET {scope} {name} = {value}")).expect_err(name);
                assert!(matches!(e, SqlError::ReadOnlyVariable(_)), "{name}: {e}");
                assert_eq!(
                    e.to_string(),
                    format!("Variable '{name}' is a read only variable")
                );
            }
        }
        let e = q(&mut s, "SET innodb_io_capacity = 300").expect_err("global only");
        assert!(matches!(e, SqlError::GlobalOnlyVariable(_)), "{e}");
        let e = q(&mut s, "SET GLOBAL innodb_io_capacity = 'x'").expect_err("type");
        assert!(matches!(e, SqlError::WrongTypeForVariable(_)), "{e}");
        let e = q(&mut s, "SET GLOBAL innodb_io_capacity = 1.5").expect_err("type");
        assert!(matches!(e, SqlError::WrongTypeForVariable(_)), "{e}");
        let e = q(&mut s, "SET GLOBAL innodb_adaptive_flushing = 2").expect_err("value");
        assert!(matches!(e, SqlError::WrongValueForVariable { .. }), "{e}");
        // The buffer pool is not resized live: the same size is accepted, another refused
        // (1231, with a warning that says why), as MariaDB does when it cannot.
        ok(&mut s, "SET GLOBAL innodb_buffer_pool_size = 16777216");
        let e = q(&mut s, "SET GLOBAL innodb_buffer_pool_size = 33554432").expect_err("resize");
        assert!(matches!(e, SqlError::WrongValueForVariable { .. }), "{e}");
        assert_eq!(db.settings().buffer_pool_size, 16 << 20);
        // Nothing refused changed anything.
        assert_eq!(db.settings().io_capacity, 2000);
        // The server's lock_wait_timeout (metadata locks) is global and per session.
        ok(&mut s, "SET GLOBAL lock_wait_timeout = 7");
        let mut t = inst.session("root", "localhost");
        assert_eq!(one(&mut t, "SELECT @@lock_wait_timeout"), Value::UInt(7));
        ok(&mut t, "SET lock_wait_timeout = 99999999999");
        assert_eq!(
            one(&mut t, "SELECT @@lock_wait_timeout"),
            Value::UInt(31_536_000)
        );
    });
}
