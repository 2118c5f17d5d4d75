//! information_schema.INNODB_TRX names the session that has each transaction open and when
//! it began, as monitoring queries (`trx_started < NOW() - INTERVAL 60 SECOND`, pt-kill)
//! read them. Before, every transaction showed 1970-01-01 and thread 0: it looked decades
//! old to every "long transaction" alert.

mod common;

use common::run;
use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_sql::{Instance, Value};

fn id_of(v: &Value) -> u64 {
    match v {
        Value::Int(i) => u64::try_from(*i).expect("an id"),
        Value::UInt(u) => *u,
        other => panic!("{other:?}"),
    }
}

#[test]
fn innodb_trx_names_the_session_and_the_start_of_each_transaction() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), Config::default()).expect("open");
    {
        let inst = Instance::new(&db);
        let mut a = inst.session("root", "localhost");
        let mut b = inst.session("root", "localhost");
        run(&mut a, "CREATE DATABASE d");
        run(&mut a, "CREATE TABLE d.t (id INT PRIMARY KEY)");
        let a_id = run(&mut a, "SELECT CONNECTION_ID()")[0][0].clone();
        run(&mut a, "BEGIN");
        run(&mut a, "INSERT INTO d.t VALUES (1)");
        let rows = run(
            &mut b,
            "SELECT trx_mysql_thread_id, \
             trx_started > NOW() - INTERVAL 1 MINUTE, trx_started <= NOW() \
             FROM information_schema.INNODB_TRX",
        );
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!(id_of(&rows[0][0]), id_of(&a_id));
        assert_ne!(id_of(&a_id), 0);
        assert_eq!(rows[0][1..], [Value::Int(1), Value::Int(1)]);
        // In another session time zone both sides move together (docs/sql.md, "Time
        // zones"): the start is shown in the reader's zone, as NOW() is.
        for zone in ["+13:00", "-12:59"] {
            run(&mut b, &format!("SET time_zone = '{zone}'"));
            let rows = run(
                &mut b,
                "SELECT trx_started > NOW() - INTERVAL 1 MINUTE, trx_started <= NOW() \
                 FROM information_schema.INNODB_TRX",
            );
            assert_eq!(rows, vec![vec![Value::Int(1), Value::Int(1)]], "{zone}");
        }
        run(&mut a, "COMMIT");
        assert!(run(&mut b, "SELECT * FROM information_schema.INNODB_TRX").is_empty());
    }
    db.shutdown().expect("shutdown");
}
