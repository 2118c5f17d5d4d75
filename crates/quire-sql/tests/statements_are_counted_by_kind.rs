//! SHOW GLOBAL STATUS `Com_*`: each statement counts under MariaDB's name for its kind, and
//! a prepared statement's execution counts the command and the statement it runs. The
//! expected counts are what MariaDB 10.11.19 gave for the same statements (the differences
//! of `SHOW GLOBAL STATUS LIKE 'Com\_%'` around them, taken on 2026-11-27).

use std::collections::HashMap;

use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_sql::{CollectSink, Instance, Session};

fn run(s: &mut Session<'_>, sql: &str) {
    let mut c = CollectSink::default();
    s.query(sql, &mut c)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

fn com(inst: &Instance<'_>) -> HashMap<String, u64> {
    inst.global_status()
        .into_iter()
        .filter(|(n, _)| n.starts_with("Com_"))
        .collect()
}

#[test]
fn statements_count_under_their_kind_as_in_mariadb() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), Config::default()).expect("open");
    let inst = Instance::new(&db);
    let mut s = inst.session("root", "localhost");
    run(&mut s, "CREATE DATABASE cc");
    run(&mut s, "USE cc");
    let before = com(&inst);
    for sql in [
        "create table t (a int primary key, b int)",
        "insert into t values (1,1),(2,2)",
        "insert into t select a+10, b from t",
        "update t set b=3 where a=1",
        "update t, t as u set t.b=u.b where t.a=u.a",
        "delete from t where a=11",
        "begin",
        "select * from t",
        "commit",
        "prepare s from 'select * from t where a=?'",
        "set @x=1",
        "execute s using @x",
        "deallocate prepare s",
        "show tables",
        "replace into t values (1,5)",
    ] {
        run(&mut s, sql);
    }
    let after = com(&inst);
    let mut changed: Vec<(String, u64)> = after
        .iter()
        .filter_map(|(n, v)| {
            let d = v - before.get(n).copied().unwrap_or(0);
            (d > 0).then(|| (n.clone(), d))
        })
        .collect();
    changed.sort();
    let want: Vec<(String, u64)> = [
        ("Com_begin", 1),
        ("Com_commit", 1),
        ("Com_create_table", 1),
        ("Com_dealloc_sql", 1),
        ("Com_delete", 1),
        ("Com_execute_sql", 1),
        ("Com_insert", 1),
        ("Com_insert_select", 1),
        ("Com_prepare_sql", 1),
        ("Com_replace", 1),
        ("Com_select", 2),
        ("Com_set_option", 1),
        ("Com_show_tables", 1),
        ("Com_stmt_close", 1),
        ("Com_stmt_execute", 1),
        ("Com_stmt_prepare", 1),
        ("Com_update", 1),
        ("Com_update_multi", 1),
    ]
    .into_iter()
    .map(|(n, v)| (n.to_string(), v))
    .collect();
    assert_eq!(changed, want);

    // COM_STMT_PREPARE / EXECUTE / CLOSE: the command, and the executed statement's kind.
    let before = com(&inst);
    let info = s.prepare("SELECT b FROM t WHERE a = ?").expect("prepare");
    let mut c = CollectSink::default();
    s.execute(info.id, &[quire_sql::Value::Int(1)], &mut c)
        .expect("execute");
    s.close_prepared(info.id);
    let after = com(&inst);
    let delta = |n: &str| after[n] - before[n];
    assert_eq!(delta("Com_stmt_prepare"), 1);
    assert_eq!(delta("Com_stmt_execute"), 1);
    assert_eq!(delta("Com_select"), 1);
    assert_eq!(delta("Com_stmt_close"), 1);
}
