//! `sql_safe_updates` and `sql_select_limit` are kept in session fields (read by every
//! UPDATE, DELETE and SELECT without a lookup): they must follow every way the setting
//! changes — SET, SET STATEMENT … FOR, a new session from the global value, the reset of
//! COM_RESET_CONNECTION — and apply to plans kept in the COM_QUERY cache, which were made
//! under another setting.

use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_sql::{CollectSink, Instance, Session, SqlError};

fn run(s: &mut Session<'_>, sql: &str) -> CollectSink {
    let mut c = CollectSink::default();
    s.query(sql, &mut c)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    c
}

fn refused(s: &mut Session<'_>, sql: &str) -> bool {
    match s.query(sql, &mut CollectSink::default()) {
        Err(SqlError::UpdateWithoutKeyInSafeMode) => true,
        Err(e) => panic!("{sql}: {e}"),
        Ok(_) => false,
    }
}

#[test]
fn safe_updates_and_select_limit_follow_every_change_of_the_setting() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), Config::default()).expect("open");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        run(&mut s, "CREATE DATABASE d");
        run(&mut s, "USE d");
        run(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
        run(&mut s, "INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)");

        // Planned and cached while off; refused once on, by the same cached plan.
        let unkeyed = "UPDATE t SET v = v + 1 WHERE v > 0";
        assert!(!refused(&mut s, unkeyed));
        run(&mut s, "SET sql_safe_updates = ON");
        assert!(refused(&mut s, unkeyed));
        assert!(refused(&mut s, "DELETE FROM t"));
        assert!(!refused(&mut s, "UPDATE t SET v = 0 WHERE id = 2"));
        assert!(!refused(
            &mut s,
            "UPDATE t SET v = v + 1 WHERE v > 0 LIMIT 1"
        ));
        run(&mut s, "SET sql_safe_updates = OFF");
        assert!(!refused(&mut s, unkeyed));

        // For one statement only.
        assert!(refused(
            &mut s,
            "SET STATEMENT sql_safe_updates = 1 FOR DELETE FROM t WHERE v = 99"
        ));
        assert!(!refused(&mut s, "DELETE FROM t WHERE v = 99"));

        // sql_select_limit, the same way.
        let all = "SELECT id FROM t";
        assert_eq!(run(&mut s, all).rows.len(), 3);
        run(&mut s, "SET sql_select_limit = 2");
        assert_eq!(run(&mut s, all).rows.len(), 2);
        assert_eq!(run(&mut s, "SELECT id FROM t LIMIT 3").rows.len(), 3);
        assert_eq!(
            run(
                &mut s,
                "SET STATEMENT sql_select_limit = 1 FOR SELECT id FROM t"
            )
            .rows
            .len(),
            1
        );
        assert_eq!(run(&mut s, all).rows.len(), 2);
        run(&mut s, "SET sql_select_limit = DEFAULT");
        assert_eq!(run(&mut s, all).rows.len(), 3);

        // A new session starts from the global values; an open one keeps its own.
        run(
            &mut s,
            "SET GLOBAL sql_safe_updates = 1, GLOBAL sql_select_limit = 1",
        );
        assert!(!refused(&mut s, "DELETE FROM t WHERE v = 99"));
        let mut n = inst.session("root", "localhost");
        run(&mut n, "USE d");
        assert!(refused(&mut n, "DELETE FROM t WHERE v = 99"));
        assert_eq!(run(&mut n, all).rows.len(), 1);
        run(
            &mut s,
            "SET GLOBAL sql_safe_updates = DEFAULT, GLOBAL sql_select_limit = DEFAULT",
        );
        // COM_RESET_CONNECTION: the session's values are the globals' again.
        run(&mut n, "SET sql_safe_updates = 1, sql_select_limit = 1");
        n.start_over("root");
        run(&mut n, "USE d");
        assert!(!refused(&mut n, "DELETE FROM t WHERE v = 99"));
        assert_eq!(run(&mut n, all).rows.len(), 3);
    }
    db.shutdown().expect("shutdown");
}
