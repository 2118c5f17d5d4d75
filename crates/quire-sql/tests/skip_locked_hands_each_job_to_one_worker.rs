//! The job-queue pattern `SELECT … ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`: workers
//! running it at once each take a different job, none waits for another's, and every job
//! is done exactly once. With a plain FOR UPDATE they would queue behind one row.

mod common;

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{run, session_in_d, try_run, with_database_d};
use quire_engine::config::Config;
use quire_sql::{SqlError, Value};

const JOBS: i64 = 300;
const WORKERS: usize = 4;

#[test]
fn concurrent_workers_each_take_a_different_job_and_never_wait() {
    with_database_d(Config::default(), |inst, s| {
        run(
            s,
            "CREATE TABLE d.jobs (id INT PRIMARY KEY, state INT NOT NULL, worker INT)",
        );
        let values: Vec<String> = (1..=JOBS).map(|i| format!("({i}, 0, NULL)")).collect();
        run(
            s,
            &format!("INSERT INTO d.jobs VALUES {}", values.join(", ")),
        );

        let waits = |s: &mut quire_sql::Session<'_>| {
            run(s, "SHOW GLOBAL STATUS LIKE 'Innodb_row_lock_waits'")[0][1].clone()
        };
        let waits_before = waits(s);
        let taken = Mutex::new(Vec::<i64>::new());
        let started = Instant::now();
        std::thread::scope(|scope| {
            for w in 0..WORKERS {
                let taken = &taken;
                scope.spawn(move || {
                    let mut s = inst.session("root", "localhost");
                    // A wait would show as 1205 within a second.
                    run(&mut s, "SET innodb_lock_wait_timeout = 1");
                    loop {
                        run(&mut s, "BEGIN");
                        let rows = try_run(
                            &mut s,
                            "SELECT id FROM d.jobs WHERE state = 0 ORDER BY id LIMIT 1 \
                             FOR UPDATE SKIP LOCKED",
                        );
                        let rows = match rows {
                            Ok(r) => r,
                            Err(SqlError::LockWaitTimeout) => panic!("SKIP LOCKED waited"),
                            Err(e) => panic!("{e}"),
                        };
                        let Some(Value::Int(id)) = rows.first().and_then(|r| r.first()) else {
                            run(&mut s, "COMMIT");
                            return;
                        };
                        // Hold the job a moment, as real work would, so others pass it.
                        std::thread::sleep(Duration::from_micros(200));
                        run(
                            &mut s,
                            &format!("UPDATE d.jobs SET state = 1, worker = {w} WHERE id = {id}"),
                        );
                        run(&mut s, "COMMIT");
                        taken.lock().expect("taken").push(*id);
                    }
                });
            }
        });
        let taken = taken.into_inner().expect("taken");
        let distinct: HashSet<i64> = taken.iter().copied().collect();
        assert_eq!(
            taken.len(),
            JOBS as usize,
            "a job was taken twice or missed"
        );
        assert_eq!(distinct.len(), JOBS as usize);
        assert_eq!(
            run(s, "SELECT COUNT(*) FROM d.jobs WHERE state = 1"),
            vec![vec![Value::Int(JOBS)]]
        );
        // Not one row lock was waited for.
        assert_eq!(waits(s), waits_before);
        // More than one worker got jobs: they ran side by side, not one after another.
        let workers = run(s, "SELECT COUNT(DISTINCT worker) FROM d.jobs");
        eprintln!("{JOBS} jobs, {workers:?} workers, {:?}", started.elapsed());
    });
}

#[test]
fn a_skipped_row_is_not_locked_and_nowait_does_not_wait() {
    with_database_d(Config::default(), |inst, a| {
        let mut b = session_in_d(inst);
        run(a, "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)");
        run(a, "INSERT INTO d.t VALUES (1, 1), (2, 2)");
        run(a, "BEGIN");
        run(a, "SELECT * FROM d.t WHERE id = 1 FOR UPDATE");
        run(&mut b, "SET innodb_lock_wait_timeout = 30");
        run(&mut b, "BEGIN");
        let start = Instant::now();
        assert_eq!(
            run(&mut b, "SELECT id FROM d.t FOR UPDATE SKIP LOCKED"),
            vec![vec![Value::Int(2)]]
        );
        assert!(matches!(
            try_run(&mut b, "SELECT id FROM d.t WHERE id = 1 FOR UPDATE NOWAIT"),
            Err(SqlError::LockWaitTimeout)
        ));
        // Neither waited for the 30 s timeout.
        assert!(start.elapsed() < Duration::from_secs(20));
        // The skipped row was not locked by b: a commits its change to it freely, and b's
        // own row 2 stays locked by b (SKIP LOCKED is per statement only).
        run(a, "UPDATE d.t SET v = 10 WHERE id = 1");
        run(a, "COMMIT");
        run(a, "SET innodb_lock_wait_timeout = 1");
        assert!(matches!(
            try_run(a, "UPDATE d.t SET v = 20 WHERE id = 2"),
            Err(SqlError::LockWaitTimeout)
        ));
        run(&mut b, "COMMIT");
        run(a, "UPDATE d.t SET v = 20 WHERE id = 2");
    });
}
