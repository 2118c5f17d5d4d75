//! A view is a catalog record: it is there after a clean restart and after a crash (the
//! engine stopped as by kill -9), with the definition of its last committed DDL.

use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_sql::{CollectSink, Instance, Session, Value};

fn run(s: &mut Session<'_>, sql: &str) -> Vec<Vec<Value>> {
    let mut c = CollectSink::default();
    s.query(sql, &mut c)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    c.rows
}

fn ints(rows: Vec<Vec<Value>>) -> Vec<i64> {
    rows.into_iter()
        .map(|r| match r.first() {
            Some(Value::Int(i)) => *i,
            other => panic!("not an integer: {other:?}"),
        })
        .collect()
}

fn create_view_text(s: &mut Session<'_>, v: &str) -> String {
    match run(s, &format!("SHOW CREATE VIEW {v}"))
        .first()
        .and_then(|r| r.get(1))
    {
        Some(Value::Str(t)) => t.clone(),
        other => panic!("SHOW CREATE VIEW {v}: {other:?}"),
    }
}

#[test]
fn a_view_is_there_after_shutdown_and_after_a_crash() {
    let dir = tempfile::tempdir().expect("tmp");
    let shown;
    {
        let db = Db::open(dir.path(), Config::default()).expect("open");
        {
            let inst = Instance::new(&db);
            let mut s = inst.session("root", "localhost");
            run(&mut s, "CREATE DATABASE a");
            run(&mut s, "USE a");
            run(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
            run(&mut s, "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)");
            run(&mut s, "CREATE VIEW big AS SELECT id FROM t WHERE v > 15");
            shown = create_view_text(&mut s, "big");
        }
        db.shutdown().expect("shutdown");
    }
    {
        let db = Db::open(dir.path(), Config::default()).expect("reopen");
        {
            let inst = Instance::new(&db);
            let mut s = inst.session("root", "localhost");
            run(&mut s, "USE a");
            assert_eq!(create_view_text(&mut s, "big"), shown);
            assert_eq!(ints(run(&mut s, "SELECT id FROM big ORDER BY id")), [2, 3]);
            // Changed, then the process dies: the replaced definition is durable.
            run(
                &mut s,
                "CREATE OR REPLACE VIEW big AS SELECT id FROM t WHERE v > 25",
            );
            run(&mut s, "CREATE VIEW small AS SELECT id FROM t WHERE v < 15");
            run(&mut s, "CREATE VIEW gone AS SELECT id FROM t");
            run(&mut s, "DROP VIEW gone");
        }
        db.kill();
    }
    let db = Db::open(dir.path(), Config::default()).expect("recover");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        run(&mut s, "USE a");
        assert_eq!(ints(run(&mut s, "SELECT id FROM big")), [3]);
        assert_eq!(ints(run(&mut s, "SELECT id FROM small")), [1]);
        let mut c = CollectSink::default();
        assert!(s.query("SELECT * FROM gone", &mut c).is_err());
        let names: Vec<Vec<Value>> = run(&mut s, "SHOW FULL TABLES");
        assert_eq!(
            names,
            vec![
                vec![Value::Str("big".into()), Value::Str("VIEW".into())],
                vec![Value::Str("small".into()), Value::Str("VIEW".into())],
                vec![Value::Str("t".into()), Value::Str("BASE TABLE".into())],
            ]
        );
    }
    assert!(db.check().expect("check").is_empty());
    db.shutdown().expect("shutdown");
}
