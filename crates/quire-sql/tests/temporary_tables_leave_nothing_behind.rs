//! A temporary table is gone when its session ends, and a crash leaves nothing of it
//! after the next start: no file, no table, and a clean check, even with its rows in a
//! transaction that was open at the crash.

use std::path::Path;

use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_sql::{CollectSink, Instance, Session, Value};

fn run(s: &mut Session<'_>, sql: &str) -> Vec<Vec<Value>> {
    let mut c = CollectSink::default();
    s.query(sql, &mut c)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    c.rows
}

/// The files of temporary tables in the data directory.
fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("read dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("#sql."))
        .collect()
}

#[test]
fn a_temporary_table_goes_with_its_session() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), Config::default()).expect("open");
    {
        let inst = Instance::new(&db);
        {
            let mut s = inst.session("root", "localhost");
            run(&mut s, "CREATE DATABASE a");
            run(&mut s, "USE a");
            run(
                &mut s,
                "CREATE TEMPORARY TABLE tmp (id INT PRIMARY KEY, v TEXT)",
            );
            run(&mut s, "INSERT INTO tmp VALUES (1, 'x'), (2, 'y')");
            assert_eq!(temp_files(dir.path()).len(), 1);
            assert_eq!(
                run(&mut s, "SELECT COUNT(*) FROM tmp"),
                vec![vec![Value::Int(2)]]
            );
            s.close();
        }
        assert!(temp_files(dir.path()).is_empty());
        let mut s = inst.session("root", "localhost");
        run(&mut s, "USE a");
        let mut c = CollectSink::default();
        assert!(s.query("SELECT * FROM tmp", &mut c).is_err());
    }
    assert!(db.check().expect("check").is_empty());
    db.shutdown().expect("shutdown");
}

#[test]
fn a_crash_leaves_no_temporary_table_behind() {
    let dir = tempfile::tempdir().expect("tmp");
    {
        let db = Db::open(dir.path(), Config::default()).expect("open");
        {
            let inst = Instance::new(&db);
            let mut s = inst.session("root", "localhost");
            run(&mut s, "CREATE DATABASE a");
            run(&mut s, "USE a");
            run(&mut s, "CREATE TABLE base (id INT PRIMARY KEY)");
            run(
                &mut s,
                "CREATE TEMPORARY TABLE tmp (id INT PRIMARY KEY, v TEXT)",
            );
            run(&mut s, "INSERT INTO tmp VALUES (1, 'committed')");
            run(&mut s, "BEGIN");
            run(&mut s, "INSERT INTO tmp VALUES (2, 'open at the crash')");
            run(&mut s, "INSERT INTO base VALUES (7)");
            assert_eq!(temp_files(dir.path()).len(), 1);
            // The process dies with the session alive: nothing ends it.
            std::mem::forget(s);
        }
        db.kill();
    }
    let db = Db::open(dir.path(), Config::default()).expect("recover");
    db.wait_for_recovery();
    assert!(temp_files(dir.path()).is_empty());
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        run(&mut s, "USE a");
        let mut c = CollectSink::default();
        assert!(s.query("SELECT * FROM tmp", &mut c).is_err());
        // The open transaction was rolled back, its temporary rows skipped.
        assert!(run(&mut s, "SELECT * FROM base").is_empty());
        // The name is free for a new temporary table.
        run(&mut s, "CREATE TEMPORARY TABLE tmp (z INT)");
        assert!(run(&mut s, "SELECT * FROM tmp").is_empty());
    }
    assert!(db.check().expect("check").is_empty());
    db.shutdown().expect("shutdown");
}
