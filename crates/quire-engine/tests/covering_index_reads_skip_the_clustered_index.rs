//! `IndexRows::index_only`: a covering read answers from the secondary entry when its own
//! trx id decides visibility, and still gives the snapshot's version when it does not.

use std::ops::Bound;

use quire_engine::btree::Direction;
use quire_engine::config::Config;
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, IndexSpec, TableSpec};
use quire_engine::trx::Isolation;

fn int() -> ColumnType {
    ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    }
}

#[test]
fn covering_reads_answer_from_the_entry_and_respect_snapshots() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), Config::default()).expect("open");
    db.create_database("d").expect("db");
    let mut spec = TableSpec::new(
        vec![
            Column::new("id", int()),
            Column::new("k", int()),
            Column::new("c", ColumnType::VarChar { max_chars: 20 }),
        ],
        vec![0],
    );
    spec.indexes.push(IndexSpec::new("k_1", vec![1]));
    let t = db.create_table("d", "t", spec).expect("table");
    for i in 1..=50 {
        t.insert(vec![
            Value::Int(i),
            Value::Int(i % 10),
            Value::Str(format!("row{i}")),
        ])
        .expect("insert");
    }
    let scan = |lo: i64, hi: i64| -> Vec<Vec<Value>> {
        t.index_scan(
            "k_1",
            Bound::Included(vec![Value::Int(lo)]),
            Bound::Included(vec![Value::Int(hi)]),
            Direction::Forward,
        )
        .expect("scan")
        .index_only()
        .collect::<Result<_, _>>()
        .expect("rows")
    };
    let visits = || {
        db.stat("quire_secondary_clustered_visits")
            .expect("counter")
    };
    let before = visits();
    let rows = scan(3, 3);
    assert_eq!(rows.len(), 5);
    for r in &rows {
        assert_eq!(r[1], Value::Int(3));
        assert_eq!(
            r[2],
            Value::Null,
            "a covering read leaves other columns NULL"
        );
    }
    assert_eq!(
        rows.iter().map(|r| r[0].clone()).collect::<Vec<_>>(),
        [3, 13, 23, 33, 43].map(Value::Int).to_vec()
    );
    assert_eq!(
        visits(),
        before,
        "committed entries need no clustered visit"
    );

    // An uncommitted change: its entries carry a trx id the reader's snapshot does not see,
    // so the read falls back to the clustered record's history and sees the old row.
    let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
    tx.update(
        &t,
        &[Value::Int(3)],
        vec![Value::Int(3), Value::Int(9), Value::Str("moved".into())],
    )
    .expect("update");
    let rows = scan(3, 3);
    assert_eq!(rows.len(), 5, "the uncommitted move is invisible: {rows:?}");
    assert!(rows.iter().any(|r| r[0] == Value::Int(3)));
    assert!(scan(9, 9).iter().all(|r| r[0] != Value::Int(3)));
    assert!(
        visits() > before,
        "undecided entries visit the clustered index"
    );
    tx.commit().expect("commit");
    let rows = scan(3, 3);
    assert_eq!(rows.len(), 4);
    assert!(scan(9, 9).iter().any(|r| r[0] == Value::Int(3)));
    db.shutdown().expect("shutdown");
}
