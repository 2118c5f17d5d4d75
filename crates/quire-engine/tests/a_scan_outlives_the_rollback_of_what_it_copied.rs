//! A consistent-read scan copies a leaf's records, then builds each one's version as it
//! goes. If the writer of a copied record rolls back in between, its rollback restores the
//! record and then cuts its undo log back (a full rollback truncates the log before it
//! marks it ROLLED_BACK): the copy's roll pointer may point past the log's end. The reader
//! must start again from the restored record, not fail with "a roll pointer to offset".
//! (Found by the purge stress test of `purge_never_makes_dml_wait.rs`; not purge's doing.)

use std::ops::Bound;

use quire_engine::btree::Direction;
use quire_engine::config::Config;
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, TableSpec};
use quire_engine::trx::Isolation;

#[test]
fn a_scan_reads_the_restored_row_when_the_writer_of_its_copy_rolled_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = Config {
        buffer_pool_size: 16 << 20,
        log_file_size: 32 << 20,
        purge_threads: 0,
        ..Config::default()
    };
    let db = Db::open(dir.path(), config).expect("open");
    db.create_database("d").expect("db");
    let int = ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    };
    let t = db
        .create_table(
            "d",
            "t",
            TableSpec::new(vec![Column::new("id", int), Column::new("v", int)], vec![0]),
        )
        .expect("table");
    for id in 1..=2 {
        t.insert(vec![Value::Int(id), Value::Int(0)])
            .expect("insert");
    }
    let mut reader = db.begin(Isolation::RepeatableRead).expect("begin");
    reader.snapshot_now().expect("snapshot");
    let mut w = db.begin(Isolation::RepeatableRead).expect("begin");
    for id in 1..=2 {
        w.update(
            &t,
            &[Value::Int(id)],
            vec![Value::Int(id), Value::Int(10 * id)],
        )
        .expect("update");
    }
    let mut rows = reader
        .scan(&t, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .expect("scan");
    // The first row's version is built; both records, w's versions, are copied.
    assert_eq!(
        rows.next().expect("a row").expect("row 1"),
        vec![Value::Int(1), Value::Int(0)]
    );
    w.rollback().expect("rollback");
    assert_eq!(
        rows.next()
            .expect("a row")
            .expect("row 2, from the restored record"),
        vec![Value::Int(2), Value::Int(0)]
    );
    assert!(rows.next().is_none());
    drop(rows);
    reader.commit().expect("commit");
    db.shutdown().expect("shutdown");
}
