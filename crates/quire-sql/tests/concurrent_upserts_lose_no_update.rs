//! INSERT … ON DUPLICATE KEY UPDATE under concurrency (`upsert.rs`, invariant 1): the row
//! an upsert updates is X-locked before it is read, so an upsert of a row another
//! transaction holds waits for it, and N sessions × M upserts of one counter end with
//! exactly N × M, whether the key is the primary key or a secondary unique one, through
//! COM_QUERY or prepared statements (COM_STMT_PREPARE / EXECUTE).

// SqlError is what the session returns; a thread passes it on as is.
#![allow(clippy::result_large_err)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

mod common;

use common::{run, session_in_d, try_run};
use quire_engine::config::Config;
use quire_sql::{CollectSink, Instance, Value};

const THREADS: usize = 6;
const UPSERTS: usize = 40;

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

/// Database `d` with `byk (k INT PRIMARY KEY, n INT)` and `byu (id AUTO_INCREMENT
/// PRIMARY KEY, k INT UNIQUE, n INT)`, both empty, and an instance over it.
fn with_instance(f: impl FnOnce(&Instance<'_>)) {
    common::with_database_d(small_config(), |inst, s| {
        run(s, "CREATE TABLE byk (k INT PRIMARY KEY, n INT NOT NULL)");
        run(
            s,
            "CREATE TABLE byu (id INT AUTO_INCREMENT PRIMARY KEY, k INT UNIQUE, n INT NOT NULL)",
        );
        f(inst);
    });
}

fn count(inst: &Instance<'_>, table: &str) -> Vec<Vec<Value>> {
    let mut s = session_in_d(inst);
    run(&mut s, &format!("SELECT k, n FROM {table} ORDER BY k"))
}

/// THREADS sessions each run UPSERTS upserts of key 1 (the first one inserts it); every
/// upsert is counted once.
fn hammer(inst: &Instance<'_>, table: &str, prepared: bool) {
    let sql = format!("INSERT INTO {table} (k, n) VALUES (?, 1) ON DUPLICATE KEY UPDATE n = n + 1");
    std::thread::scope(|sc| {
        for _ in 0..THREADS {
            sc.spawn(|| {
                let mut s = session_in_d(inst);
                let id = prepared.then(|| s.prepare(&sql).expect("prepare").id);
                for _ in 0..UPSERTS {
                    let mut c = CollectSink::default();
                    let r = match id {
                        Some(id) => s.execute(id, &[Value::Int(1)], &mut c),
                        None => s.query(&sql.replace('?', "1"), &mut c),
                    };
                    r.unwrap_or_else(|e| panic!("{sql}: {e}"));
                }
            });
        }
    });
    assert_eq!(
        count(inst, table),
        vec![vec![Value::Int(1), Value::Int((THREADS * UPSERTS) as i64)]],
        "{table}: an upsert was lost or counted twice"
    );
}

#[test]
fn concurrent_upserts_of_a_primary_key_count_every_one() {
    with_instance(|inst| hammer(inst, "byk", false));
}

#[test]
fn concurrent_prepared_upserts_of_a_unique_key_count_every_one() {
    with_instance(|inst| {
        hammer(inst, "byu", true);
        // One row: every later upsert found the first one's.
        let mut s = session_in_d(inst);
        assert_eq!(
            run(&mut s, "SELECT COUNT(*) FROM byu"),
            vec![vec![Value::Int(1)]]
        );
    });
}

#[test]
fn an_upsert_waits_for_the_transaction_holding_the_row() {
    with_instance(|inst| {
        for table in ["byk", "byu"] {
            let mut a = session_in_d(inst);
            run(&mut a, &format!("INSERT INTO {table} (k, n) VALUES (7, 1)"));
            run(&mut a, "BEGIN");
            run(
                &mut a,
                &format!(
                    "INSERT INTO {table} (k, n) VALUES (7, 1) ON DUPLICATE KEY UPDATE n = n + 10"
                ),
            );
            let done = AtomicBool::new(false);
            std::thread::scope(|sc| {
                let b = sc.spawn(|| {
                    let mut b = session_in_d(inst);
                    let r = try_run(
                        &mut b,
                        &format!(
                            "INSERT INTO {table} (k, n) VALUES (7, 1) ON DUPLICATE KEY UPDATE n = n * 2"
                        ),
                    );
                    done.store(true, Ordering::Release);
                    r
                });
                std::thread::sleep(Duration::from_millis(300));
                assert!(
                    !done.load(Ordering::Acquire),
                    "{table}: the upsert did not wait for the row's lock"
                );
                run(&mut a, "COMMIT");
                b.join().expect("thread").expect("the waiting upsert");
            });
            // B read the row A committed (11), not the one before it (1).
            assert_eq!(
                run(&mut a, &format!("SELECT n FROM {table} WHERE k = 7")),
                vec![vec![Value::Int(22)]],
                "{table}"
            );
        }
    });
}
