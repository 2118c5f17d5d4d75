//! Row locks between transactions: a deadlock is detected at once and its victim rolled
//! back whole (MySQL error 1213); a lock wait ends after `innodb_lock_wait_timeout` with
//! only the statement rolled back (error 1205), or early when its interrupt flag is set;
//! the counters say so.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use quire_engine::config::Config;
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, DbError, TableSpec};
use quire_engine::trx::Isolation;

fn setup(timeout_s: &str) -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = Config::default();
    config
        .set_str(&format!("innodb_lock_wait_timeout={timeout_s}"))
        .expect("setting");
    config.buffer_pool_size = 16 << 20;
    config.log_file_size = 16 << 20;
    let db = Db::open(dir.path(), config).expect("open");
    db.create_database("d").expect("db");
    let int = ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    };
    let spec = TableSpec::new(vec![Column::new("id", int), Column::new("v", int)], vec![0]);
    let t = db.create_table("d", "t", spec).expect("table");
    for i in 1..=2 {
        t.insert(vec![Value::Int(i), Value::Int(0)]).expect("row");
    }
    (dir, db)
}

fn set(v: i64) -> impl Fn(i64) -> Vec<Value> {
    move |id| vec![Value::Int(id), Value::Int(v)]
}

#[test]
fn a_deadlock_rolls_back_its_victim_at_once_and_the_other_goes_on() {
    let (_dir, db) = setup("50");
    let t = db.table("d", "t").expect("table");
    let start = Instant::now();
    std::thread::scope(|s| {
        let (ready_tx, ready_rx) = mpsc::channel();
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let db = &db;
        let t1 = s.spawn(move || {
            let t = db.table("d", "t").expect("table");
            let mut a = db.begin(Isolation::RepeatableRead).expect("begin");
            a.update(&t, &[Value::Int(1)], set(1)(1))
                .expect("a locks 1");
            ready_tx.send(()).expect("send");
            go_rx.recv().expect("go");
            // Waits for b's lock on 2 until b is chosen as the victim.
            a.update(&t, &[Value::Int(2)], set(1)(2))
                .expect("a gets 2 once b is rolled back");
            a.commit().expect("a commits");
        });
        ready_rx.recv().expect("ready");
        let mut b = db.begin(Isolation::RepeatableRead).expect("begin");
        b.update(&t, &[Value::Int(2)], set(2)(2))
            .expect("b locks 2");
        go_tx.send(()).expect("go");
        // Let a block on 2 first, then close the cycle.
        std::thread::sleep(Duration::from_millis(200));
        let e = b
            .update(&t, &[Value::Int(1)], set(2)(1))
            .expect_err("b closes a cycle");
        assert!(matches!(e, DbError::Deadlock), "{e:?}");
        // The victim was rolled back whole: nothing but rollback is accepted.
        assert!(matches!(
            b.get(&t, &[Value::Int(1)]),
            Err(DbError::TrxAborted)
        ));
        b.rollback().expect("rollback of a victim");
        t1.join().expect("a");
    });
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "detected at once, not by timeout"
    );
    assert_eq!(t.get(&[Value::Int(1)]).expect("get"), Some(set(1)(1)));
    assert_eq!(
        t.get(&[Value::Int(2)]).expect("get"),
        Some(set(1)(2)),
        "b's change was undone"
    );
    assert_eq!(db.stat("Innodb_deadlocks"), Some(1));
    assert!(db.stat("Innodb_row_lock_waits").unwrap_or(0) >= 1);
    assert!(db.check().expect("check").is_empty());
}

#[test]
fn a_lock_wait_times_out_and_rolls_back_only_the_statement() {
    let (_dir, db) = setup("1");
    let t = db.table("d", "t").expect("table");
    let mut a = db.begin(Isolation::RepeatableRead).expect("begin");
    a.update(&t, &[Value::Int(1)], set(1)(1))
        .expect("a locks 1");
    let mut b = db.begin(Isolation::RepeatableRead).expect("begin");
    b.update(&t, &[Value::Int(2)], set(2)(2))
        .expect("b changes 2");
    let start = Instant::now();
    let e = b
        .update(&t, &[Value::Int(1)], set(2)(1))
        .expect_err("1 is locked by a");
    assert!(matches!(e, DbError::LockWaitTimeout), "{e:?}");
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(10),
        "waited {waited:?}"
    );
    // b goes on: its earlier change is still there, and it can commit it.
    assert_eq!(b.get(&t, &[Value::Int(2)]).expect("get"), Some(set(2)(2)));
    b.commit().expect("b commits");
    a.commit().expect("a commits");
    assert_eq!(t.get(&[Value::Int(1)]).expect("get"), Some(set(1)(1)));
    assert_eq!(t.get(&[Value::Int(2)]).expect("get"), Some(set(2)(2)));
    assert_eq!(db.stat("quire_lock_timeouts"), Some(1));
    assert_eq!(db.stat("quire_trx_active"), Some(0));
    assert!(db.check().expect("check").is_empty());
}

#[test]
fn a_consistent_read_never_waits_for_a_writer() {
    let (_dir, db) = setup("50");
    let t = db.table("d", "t").expect("table");
    let mut w = db.begin(Isolation::RepeatableRead).expect("begin");
    w.update(&t, &[Value::Int(1)], set(7)(1)).expect("write");
    let start = Instant::now();
    let mut r = db.begin(Isolation::RepeatableRead).expect("begin");
    assert_eq!(r.get(&t, &[Value::Int(1)]).expect("read"), Some(set(0)(1)));
    assert_eq!(
        t.get(&[Value::Int(1)]).expect("autocommit read"),
        Some(set(0)(1))
    );
    assert!(start.elapsed() < Duration::from_secs(1));
    r.commit().expect("commit");
    w.rollback().expect("rollback");
    assert_eq!(db.stat("Innodb_row_lock_waits"), Some(0));
}

#[test]
fn an_interrupted_lock_wait_ends_at_once_and_rolls_back_only_the_statement() {
    let (_dir, db) = setup("50");
    let t = db.table("d", "t").expect("table");
    let mut holder = db.begin(Isolation::RepeatableRead).expect("begin");
    holder
        .update(&t, &[Value::Int(1)], set(1)(1))
        .expect("holder locks 1");
    let flag = Arc::new(AtomicBool::new(false));
    let mut w = db.begin(Isolation::RepeatableRead).expect("begin");
    w.set_interrupt(flag.clone());
    w.update(&t, &[Value::Int(2)], set(2)(2))
        .expect("an earlier statement");
    std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            let r = w.update(&t, &[Value::Int(1)], set(2)(1));
            (Instant::now(), r)
        });
        std::thread::sleep(Duration::from_millis(300));
        let set_at = Instant::now();
        flag.store(true, Ordering::Release);
        let (ended, r) = waiter.join().expect("waiter");
        assert!(matches!(r, Err(DbError::Interrupted)), "{r:?}");
        let after = ended.saturating_duration_since(set_at);
        assert!(
            after < Duration::from_millis(100),
            "ended {after:?} after the flag"
        );
    });
    // The transaction goes on; its earlier statement stays, and it still holds row 2.
    flag.store(false, Ordering::Release);
    assert_eq!(w.get(&t, &[Value::Int(2)]).expect("get"), Some(set(2)(2)));
    holder.commit().expect("holder commits");
    w.update(&t, &[Value::Int(1)], set(2)(1))
        .expect("row 1 is free now");
    w.commit().expect("commit");
    assert_eq!(t.get(&[Value::Int(1)]).expect("get"), Some(set(2)(1)));
    let timeouts = db
        .stats()
        .into_iter()
        .find(|(n, _)| n == "quire_lock_timeouts")
        .map(|(_, v)| v);
    assert_eq!(timeouts, Some(0), "an interrupt is not a timeout");
}

#[test]
fn a_transaction_sets_its_own_lock_wait_timeout() {
    let (_dir, db) = setup("50");
    let t = db.table("d", "t").expect("table");
    let mut holder = db.begin(Isolation::RepeatableRead).expect("begin");
    holder
        .update(&t, &[Value::Int(1)], set(1)(1))
        .expect("holder locks 1");
    let mut w = db.begin(Isolation::RepeatableRead).expect("begin");
    assert_eq!(w.lock_wait_timeout(), Duration::from_secs(50));
    w.set_lock_wait_timeout(Duration::from_millis(100));
    let start = Instant::now();
    let r = w.update(&t, &[Value::Int(1)], set(2)(1));
    assert!(matches!(r, Err(DbError::LockWaitTimeout)), "{r:?}");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    w.rollback().expect("rollback");
    holder.commit().expect("commit");
}
