//! GET_LOCK's locks belong to the session: a waiter gets the lock as soon as the holding
//! session ends, whatever its transaction did.

mod common;

use std::time::{Duration, Instant};

use common::run;
use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_sql::{Instance, Value};

#[test]
fn a_waiter_gets_the_lock_when_the_holding_session_ends() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), Config::default()).expect("open");
    {
        let inst = Instance::new(&db);
        let mut holder = inst.session("root", "localhost");
        assert_eq!(
            run(&mut holder, "SELECT GET_LOCK('migrations', 0)"),
            vec![vec![Value::Int(1)]]
        );
        run(&mut holder, "BEGIN");
        std::thread::scope(|s| {
            let inst = &inst;
            let waiter = s.spawn(move || {
                let mut w = inst.session("root", "localhost");
                let start = Instant::now();
                let got = run(&mut w, "SELECT GET_LOCK('migrations', 30)");
                (got, start.elapsed())
            });
            std::thread::sleep(Duration::from_millis(200));
            assert!(!waiter.is_finished(), "GET_LOCK did not wait");
            drop(holder);
            let (got, waited) = waiter.join().expect("waiter");
            assert_eq!(got, vec![vec![Value::Int(1)]]);
            assert!(waited < Duration::from_secs(20), "waited {waited:?}");
        });
        let mut c = inst.session("root", "localhost");
        assert_eq!(
            run(&mut c, "SELECT IS_FREE_LOCK('migrations')"),
            vec![vec![Value::Int(1)]]
        );
    }
    db.shutdown().expect("shutdown");
}
