//! A plan bound under one collation_connection (or sql_mode) is not reused under another:
//! the COM_QUERY cache plans the same text again, as MariaDB parses it again; a prepared
//! statement keeps the collation it was prepared under, as MariaDB's does (its literals
//! are bound at PREPARE), also when a DDL makes it plan again.

use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_sql::{CollectSink, Instance, Session, Value};

fn run(s: &mut Session<'_>, sql: &str) -> Vec<Vec<Value>> {
    let mut c = CollectSink::default();
    s.query(sql, &mut c)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    c.rows
}

fn one(s: &mut Session<'_>, sql: &str) -> Value {
    run(s, sql)
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .unwrap_or(Value::Null)
}

fn execute(s: &mut Session<'_>, id: u32, params: &[Value]) -> Value {
    let mut c = CollectSink::default();
    s.execute(id, params, &mut c).expect("execute");
    c.rows
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .unwrap_or(Value::Null)
}

#[test]
fn the_same_text_is_planned_again_under_another_collation_connection() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), Config::default()).expect("open");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        run(&mut s, "CREATE DATABASE a");
        run(&mut s, "USE a");
        run(&mut s, "CREATE TABLE t (id INT PRIMARY KEY)");
        run(&mut s, "INSERT INTO t VALUES (1)");
        let q = "SELECT COUNT(*) FROM t WHERE 'a' = 'A'";
        assert_eq!(one(&mut s, q), Value::Int(1));
        run(&mut s, "SET NAMES utf8mb4 COLLATE utf8mb4_bin");
        assert_eq!(one(&mut s, q), Value::Int(0));
        run(&mut s, "SET collation_connection = utf8mb4_general_ci");
        assert_eq!(one(&mut s, q), Value::Int(1));
        // sql_mode too: `||` is OR, then CONCAT.
        let p = "SELECT 'x' || 'y' FROM t";
        assert_eq!(one(&mut s, p), Value::Int(0));
        run(&mut s, "SET sql_mode = 'PIPES_AS_CONCAT'");
        assert_eq!(one(&mut s, p), Value::Str("xy".into()));
    }
    db.shutdown().expect("shutdown");
}

#[test]
fn a_prepared_statement_keeps_the_collation_it_was_prepared_under() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), Config::default()).expect("open");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        run(&mut s, "CREATE DATABASE a");
        run(&mut s, "USE a");
        run(&mut s, "CREATE TABLE t (id INT PRIMARY KEY)");
        run(&mut s, "INSERT INTO t VALUES (1)");
        let id = s
            .prepare("SELECT COUNT(*) FROM t WHERE ? = 'A'")
            .expect("prepare")
            .id;
        let a = [Value::Str("a".into())];
        assert_eq!(execute(&mut s, id, &a), Value::Int(1));
        run(&mut s, "SET NAMES utf8mb4 COLLATE utf8mb4_bin");
        assert_eq!(execute(&mut s, id, &a), Value::Int(1));
        // A DDL makes it plan again: still under its own collation.
        run(&mut s, "CREATE TABLE other (id INT PRIMARY KEY)");
        assert_eq!(execute(&mut s, id, &a), Value::Int(1));
        // Prepared now, it binds under utf8mb4_bin.
        let bin = s
            .prepare("SELECT COUNT(*) FROM t WHERE ? = 'A'")
            .expect("prepare")
            .id;
        assert_eq!(execute(&mut s, bin, &a), Value::Int(0));
    }
    db.shutdown().expect("shutdown");
}
