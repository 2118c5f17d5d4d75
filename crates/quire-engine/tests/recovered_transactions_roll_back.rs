//! Transactions active at a crash are rolled back after recovery, in the background:
//! their changes are never visible, their rows come back as they were, and committed
//! history that purge had not removed survives the restart.

use std::ops::Bound;
use std::path::Path;

use quire_engine::btree::Direction;
use quire_engine::config::Config;
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, IndexSpec, TableSpec};
use quire_engine::trx::Isolation;

fn config() -> Config {
    Config {
        buffer_pool_size: 16 << 20,
        log_file_size: 16 << 20,
        purge_threads: 0,
        ..Config::default()
    }
}

fn rows(db: &Db) -> Vec<(i64, i64)> {
    let t = db.table("d", "t").expect("table");
    t.scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .expect("scan")
        .map(|r| match r.expect("row")[..] {
            [Value::Int(k), Value::Int(v)] => (k, v),
            _ => panic!("bad row"),
        })
        .collect()
}

fn create(dir: &Path) -> Db {
    let db = Db::open(dir, config()).expect("open");
    db.create_database("d").expect("db");
    let int = ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    };
    let mut spec = TableSpec::new(vec![Column::new("id", int), Column::new("v", int)], vec![0]);
    spec.indexes.push(IndexSpec::new("by_v", vec![1]).unique());
    let t = db.create_table("d", "t", spec).expect("table");
    for i in 1..=3 {
        t.insert(vec![Value::Int(i), Value::Int(i * 10)])
            .expect("row");
    }
    db
}

#[test]
fn a_transaction_active_at_the_crash_is_rolled_back_after_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = create(dir.path());
    let t = db.table("d", "t").expect("table");
    let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
    tx.update(&t, &[Value::Int(1)], vec![Value::Int(1), Value::Int(11)])
        .expect("update");
    tx.delete(&t, &[Value::Int(2)]).expect("delete");
    tx.insert(&t, vec![Value::Int(4), Value::Int(40)])
        .expect("insert");
    // A later commit makes the log durable past the active transaction's changes.
    t.insert(vec![Value::Int(5), Value::Int(50)])
        .expect("committed row");
    std::mem::forget(tx); // no rollback: the process "crashes" with it active
    db.kill();

    let db = Db::open(dir.path(), config()).expect("reopen");
    // Visible state is right at once, rollback or not.
    assert_eq!(rows(&db), vec![(1, 10), (2, 20), (3, 30), (5, 50)]);
    db.wait_for_recovery();
    assert_eq!(rows(&db), vec![(1, 10), (2, 20), (3, 30), (5, 50)]);
    let t = db.table("d", "t").expect("table");
    assert_eq!(
        t.lookup_index("by_v", &[Value::Int(40)]).expect("lookup"),
        Vec::<Vec<Value>>::new()
    );
    assert_eq!(
        t.lookup_index("by_v", &[Value::Int(20)]).expect("lookup"),
        vec![vec![Value::Int(2)]]
    );
    // The rolled-back rows are free to change again.
    t.update(&[Value::Int(2)], vec![Value::Int(2), Value::Int(21)])
        .expect("update");
    t.insert(vec![Value::Int(4), Value::Int(41)])
        .expect("insert");
    assert_eq!(db.stat("quire_trx_active"), Some(0));
    assert!(db.check().expect("check").is_empty());
    db.shutdown().expect("shutdown");
}

#[test]
fn committed_history_survives_a_restart_until_purged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = create(dir.path());
    let t = db.table("d", "t").expect("table");
    for v in 0..20 {
        t.update(&[Value::Int(1)], vec![Value::Int(1), Value::Int(100 + v)])
            .expect("update");
    }
    t.delete(&[Value::Int(3)]).expect("delete");
    let history = db.stat("Innodb_history_list_length").expect("stat");
    assert_eq!(history, 21, "purge is off: every update log waits");
    db.kill();

    let db = Db::open(dir.path(), config()).expect("reopen");
    assert_eq!(db.stat("Innodb_history_list_length"), Some(history));
    let t = db.table("d", "t").expect("table");
    assert_eq!(
        t.index_record_counts("PRIMARY").expect("counts"),
        (2, 1),
        "row 3 is delete-marked"
    );
    assert_eq!(db.purge_now().expect("purge"), history);
    assert_eq!(db.stat("Innodb_history_list_length"), Some(0));
    assert_eq!(t.index_record_counts("PRIMARY").expect("counts"), (2, 0));
    assert_eq!(t.index_record_counts("by_v").expect("counts"), (2, 0));
    assert_eq!(rows(&db), vec![(1, 119), (2, 20)]);
    assert!(db.check().expect("check").is_empty());
    db.shutdown().expect("shutdown");
}
