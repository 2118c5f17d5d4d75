//! CHECK constraints are part of the table's catalog record: after a clean restart and
//! after a crash (the engine stopped as by kill -9) they are shown as before and still
//! enforced, with the definition of the last committed ALTER.

use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_sql::{CollectSink, Instance, Session, Value};

fn run(s: &mut Session<'_>, sql: &str) -> Vec<Vec<Value>> {
    let mut c = CollectSink::default();
    s.query(sql, &mut c)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    c.rows
}

fn fails(s: &mut Session<'_>, sql: &str) -> String {
    let mut c = CollectSink::default();
    match s.query(sql, &mut c) {
        Ok(_) => panic!("{sql}: succeeded"),
        Err(e) => e.to_string(),
    }
}

fn create_text(s: &mut Session<'_>) -> String {
    match run(s, "SHOW CREATE TABLE t").first().and_then(|r| r.get(1)) {
        Some(Value::Str(t)) => t.clone(),
        other => panic!("SHOW CREATE TABLE t: {other:?}"),
    }
}

#[test]
fn check_constraints_are_kept_and_enforced_after_shutdown_and_after_a_crash() {
    let dir = tempfile::tempdir().expect("tmp");
    let shown;
    {
        let db = Db::open(dir.path(), Config::default()).expect("open");
        {
            let inst = Instance::new(&db);
            let mut s = inst.session("root", "localhost");
            run(&mut s, "CREATE DATABASE a");
            run(&mut s, "USE a");
            run(
                &mut s,
                "CREATE TABLE t (id INT PRIMARY KEY, v INT CHECK (v >= 0), \
                 w INT, CONSTRAINT small CHECK (v + w < 100), CHECK (w <> 7))",
            );
            run(&mut s, "INSERT INTO t VALUES (1, 10, 20)");
            shown = create_text(&mut s);
            assert!(
                shown.contains("`v` int(11) DEFAULT NULL CHECK (`v` >= 0)"),
                "{shown}"
            );
            assert!(
                shown.contains("CONSTRAINT `small` CHECK (`v` + `w` < 100)"),
                "{shown}"
            );
        }
        db.shutdown().expect("shutdown");
    }
    {
        let db = Db::open(dir.path(), Config::default()).expect("reopen");
        {
            let inst = Instance::new(&db);
            let mut s = inst.session("root", "localhost");
            run(&mut s, "USE a");
            assert_eq!(create_text(&mut s), shown);
            let e = fails(&mut s, "INSERT INTO t VALUES (2, -1, 0)");
            assert!(e.contains("CONSTRAINT `t.v` failed for `a`.`t`"), "{e}");
            let e = fails(&mut s, "INSERT INTO t VALUES (2, 50, 50)");
            assert!(e.contains("CONSTRAINT `small` failed"), "{e}");
            let e = fails(&mut s, "UPDATE t SET w = 7");
            assert!(e.contains("CONSTRAINT `CONSTRAINT_1` failed"), "{e}");
            // Changed, then the process dies: the committed definition is durable.
            run(&mut s, "ALTER TABLE t DROP CONSTRAINT small");
            run(&mut s, "ALTER TABLE t ADD CONSTRAINT big CHECK (w > 5)");
        }
        db.kill();
    }
    let db = Db::open(dir.path(), Config::default()).expect("recover");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        run(&mut s, "USE a");
        let now = create_text(&mut s);
        assert!(!now.contains("`small`"), "{now}");
        assert!(now.contains("CONSTRAINT `big` CHECK (`w` > 5)"), "{now}");
        run(&mut s, "INSERT INTO t VALUES (2, 50, 50)");
        let e = fails(&mut s, "INSERT INTO t VALUES (3, 1, 1)");
        assert!(e.contains("CONSTRAINT `big` failed"), "{e}");
        let rows = run(
            &mut s,
            "SELECT CONSTRAINT_NAME, LEVEL, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS \
             WHERE TABLE_NAME = 't' ORDER BY CONSTRAINT_NAME",
        );
        assert_eq!(rows.len(), 3, "{rows:?}");
    }
    db.shutdown().expect("shutdown");
}
