//! User variables belong to their session: another session does not see them, a new
//! session starts with none, and COM_RESET_CONNECTION (`clear_user_vars`) drops them. A
//! statement that reads one is typed by the variable's kind each time it runs (its plan is
//! not kept), and SQL-level prepared statements are per session too.

use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_sql::{CollectSink, FieldType, Instance, Session, SqlError, Value};

fn run(s: &mut Session<'_>, sql: &str) -> CollectSink {
    let mut c = CollectSink::default();
    s.query(sql, &mut c)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    c
}

fn one(s: &mut Session<'_>, sql: &str) -> Value {
    run(s, sql)
        .rows
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .unwrap_or(Value::Null)
}

#[test]
fn user_variables_are_seen_only_by_their_session_and_end_with_it() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), Config::default()).expect("open");
    {
        let inst = Instance::new(&db);
        let mut a = inst.session("root", "localhost");
        let mut b = inst.session("root", "localhost");
        run(&mut a, "SET @x = 41, @s = 'mine'");
        assert_eq!(one(&mut a, "SELECT @x + 1"), Value::Int(42));
        assert_eq!(one(&mut b, "SELECT @x"), Value::Null);
        run(&mut b, "SET @x = 'other'");
        assert_eq!(one(&mut a, "SELECT @x"), Value::Int(41));
        assert_eq!(one(&mut a, "SELECT @S"), Value::Str("mine".into()));
        drop(a);
        let mut c = inst.session("root", "localhost");
        assert_eq!(one(&mut c, "SELECT @x"), Value::Null);
        b.clear_user_vars();
        assert_eq!(one(&mut b, "SELECT @x"), Value::Null);
    }
    db.shutdown().expect("shutdown");
}

#[test]
fn the_same_text_is_typed_by_the_variable_it_reads_now() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), Config::default()).expect("open");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        run(&mut s, "SET @v = 1");
        let first = run(&mut s, "SELECT @v");
        assert_eq!(first.columns[0].ty, FieldType::LongLong);
        run(&mut s, "SET @v = 'text'");
        let second = run(&mut s, "SELECT @v");
        assert_eq!(second.columns[0].ty, FieldType::LongBlob);
        assert_eq!(second.rows[0][0], Value::Str("text".into()));
    }
    db.shutdown().expect("shutdown");
}

#[test]
fn prepared_statement_names_are_per_session() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), Config::default()).expect("open");
    {
        let inst = Instance::new(&db);
        let mut a = inst.session("root", "localhost");
        let mut b = inst.session("root", "localhost");
        run(&mut a, "PREPARE st FROM 'SELECT ? * 2'");
        assert_eq!(one(&mut a, "EXECUTE st USING 21"), Value::Int(42));
        let mut sink = CollectSink::default();
        match b.query("EXECUTE st USING 21", &mut sink) {
            Err(SqlError::UnknownStatementName { name, .. }) => assert_eq!(name, "st"),
            other => panic!("another session ran it: {other:?}"),
        }
        a.clear_named_statements();
        assert!(a.query("EXECUTE st USING 1", &mut sink).is_err());
    }
    db.shutdown().expect("shutdown");
}
