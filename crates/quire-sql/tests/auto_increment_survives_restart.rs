//! AUTO_INCREMENT restarts past the largest value on disk, whether the column starts the
//! primary key or a secondary index.

use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_sql::{CollectSink, Instance, Session, Value};

fn run(s: &mut Session<'_>, sql: &str) -> Vec<Vec<Value>> {
    let mut c = CollectSink::default();
    s.query(sql, &mut c)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    c.rows
}

#[test]
fn the_counter_restarts_past_the_largest_value_of_a_secondary_index() {
    let dir = tempfile::tempdir().expect("tmp");
    {
        let db = Db::open(dir.path(), Config::default()).expect("open");
        {
            let inst = Instance::new(&db);
            let mut s = inst.session("root", "localhost");
            run(&mut s, "CREATE DATABASE a");
            run(&mut s, "USE a");
            run(
                &mut s,
                "CREATE TABLE t (id INT PRIMARY KEY, seq INT AUTO_INCREMENT, KEY k (seq))",
            );
            run(&mut s, "INSERT INTO t (id) VALUES (3), (2), (1)");
            run(&mut s, "INSERT INTO t VALUES (4, 40)");
            run(
                &mut s,
                "CREATE TABLE p (a INT AUTO_INCREMENT, b INT, PRIMARY KEY (a, b))",
            );
            run(&mut s, "INSERT INTO p (b) VALUES (1), (2)");
        }
        db.shutdown().expect("shutdown");
    }
    let db = Db::open(dir.path(), Config::default()).expect("reopen");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        run(&mut s, "USE a");
        run(&mut s, "INSERT INTO t (id) VALUES (5)");
        assert_eq!(
            run(&mut s, "SELECT seq FROM t WHERE id = 5"),
            vec![vec![Value::Int(41)]]
        );
        run(&mut s, "INSERT INTO p (b) VALUES (3)");
        assert_eq!(
            run(&mut s, "SELECT MAX(a) FROM p"),
            vec![vec![Value::Int(3)]]
        );
    }
    db.shutdown().expect("shutdown");
}
