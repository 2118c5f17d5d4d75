//! Sessions inserting the same value into a UNIQUE column at the same moment (each row with
//! its own primary key): exactly one insert succeeds, the others get 1062 (or a deadlock to
//! retry), and the table never holds the value twice. Before the unique value was locked
//! across its check and its insert, 8 sessions × 300 values left 20 values duplicated, up
//! to 7 times.

mod common;

use std::sync::Barrier;

use common::{run, try_run};
use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_sql::{Instance, SqlError, Value};

const SESSIONS: usize = 6;
const VALUES: i64 = 150;

#[test]
fn concurrent_inserts_of_one_unique_value_admit_exactly_one() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), Config::default()).expect("open");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        run(&mut s, "CREATE DATABASE d");
        run(
            &mut s,
            "CREATE TABLE d.t (id INT AUTO_INCREMENT PRIMARY KEY, k INT, UNIQUE KEY (k))",
        );
        let start = Barrier::new(SESSIONS);
        std::thread::scope(|sc| {
            for _ in 0..SESSIONS {
                let (inst, start) = (&inst, &start);
                sc.spawn(move || {
                    let mut s = inst.session("root", "localhost");
                    for v in 0..VALUES {
                        start.wait();
                        match try_run(&mut s, &format!("INSERT INTO d.t (k) VALUES ({v})")) {
                            Ok(_) | Err(SqlError::Deadlock) => {}
                            Err(e) if e.to_string().starts_with("Duplicate entry") => {}
                            Err(e) => panic!("{v}: {e}"),
                        }
                    }
                });
            }
        });
        assert_eq!(
            run(
                &mut s,
                "SELECT COUNT(*) FROM (SELECT k FROM d.t GROUP BY k HAVING COUNT(*) > 1) AS x"
            ),
            vec![vec![Value::Int(0)]],
            "a unique value was inserted twice"
        );
        assert_eq!(
            run(&mut s, "SELECT COUNT(DISTINCT k), COUNT(*) FROM d.t"),
            vec![vec![Value::Int(VALUES), Value::Int(VALUES)]]
        );
    }
    db.shutdown().expect("shutdown");
}
