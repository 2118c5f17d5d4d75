//! An online index build is atomic at every crash point, with changes committed around it:
//! after recovery the table is the old one (no index) or the new one (the index), `check`
//! finds nothing but the leaked pages of an unfinished build's tree, and every
//! acknowledged change is there (docs/online-ddl.md, "Crash analysis").

mod common;

use std::ops::Bound;

use common::online_ddl::{
    every_crash_point, open_checked, workload, OnlineDdl, Outcome, Rows, FINISHED,
};
use quire_engine::btree::Direction;
use quire_engine::row::Value;
use quire_engine::table::{Db, DbError, IndexSpec, OnlineIndex, OnlineOptions};
use quire_io::sim::SimVfs;

struct Build<'d>(OnlineIndex<'d>);

impl OnlineDdl for Build<'_> {
    fn scan(&mut self, progress: &mut dyn FnMut(u64) -> bool) -> Result<(), DbError> {
        self.0.scan(progress).map(|_| ())
    }
    fn catch_up(&mut self) -> Result<(), DbError> {
        self.0.catch_up()
    }
    fn finish(self: Box<Self>) -> Result<(), DbError> {
        self.0.finish()
    }
}

fn run(db: &Db, alive: &dyn Fn() -> bool) -> Outcome {
    workload(db, alive, &|db| {
        let b = db.begin_online_index(
            "d",
            "t",
            IndexSpec::new("by_v", vec![1]),
            OnlineOptions::default(),
        )?;
        let ddl: Box<dyn OnlineDdl + '_> = Box::new(Build(b));
        Ok(ddl)
    })
}

fn table_rows(db: &Db) -> Rows {
    db.table("d", "t")
        .expect("t")
        .scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .expect("scan")
        .map(|r| match r.expect("row").as_slice() {
            [Value::Int(k), Value::Int(v)] => (*k, *v),
            other => panic!("row {other:?}"),
        })
        .collect()
}

fn check(img: &SimVfs, acked: u32, rows: &Rows, in_flight: &Rows, what: &str) {
    let leaked = |p: &str| p.contains("leaked");
    let Some((db, got)) = open_checked(img, acked, rows, in_flight, what, &leaked, &table_rows)
    else {
        return;
    };
    let t = db
        .table("d", "t")
        .unwrap_or_else(|e| panic!("{what}: table: {e}"));
    let indexes = t.definition().expect("def").indexes;
    if acked == FINISHED {
        assert_eq!(indexes.len(), 1, "{what}: acknowledged index lost");
    }
    if !indexes.is_empty() {
        // The new table: every row through the index (check verified the entries).
        let n = t
            .index_scan(
                "by_v",
                Bound::Unbounded,
                Bound::Unbounded,
                Direction::Forward,
            )
            .expect("index scan")
            .count();
        assert_eq!(n, got.len(), "{what}: rows through the index");
    }
    db.shutdown().expect("shutdown");
}

#[test]
fn an_online_index_build_is_atomic_at_every_crash_point() {
    every_crash_point(41, &run, &table_rows, &check);
}
