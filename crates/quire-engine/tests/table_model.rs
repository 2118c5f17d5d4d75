//! The table API against a BTreeMap model: random inserts, updates, deletes, point reads and
//! range scans in both directions on a table with a unique and a non-unique secondary index,
//! 4 KiB pages so trees get several levels. After every case `Db::check` is clean.

mod common;

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use proptest::prelude::*;
use quire_engine::btree::Direction;
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, DbError, IndexSpec, TableSpec};
use quire_io::sim::SimVfs;
use quire_io::Vfs;

#[derive(Debug, Clone)]
enum Op {
    Insert(i64, u16, u16),
    Update(i64, u16, u16),
    Delete(i64),
    Get(i64),
    Scan(i64, i64, bool),
}

fn op() -> impl Strategy<Value = Op> {
    let k = 0i64..400;
    prop_oneof![
        4 => (k.clone(), 0u16..50, 0u16..2000).prop_map(|(k, a, b)| Op::Insert(k, a, b)),
        2 => (k.clone(), 0u16..50, 0u16..2000).prop_map(|(k, a, b)| Op::Update(k, a, b)),
        2 => k.clone().prop_map(Op::Delete),
        1 => k.clone().prop_map(Op::Get),
        1 => (k.clone(), k, any::<bool>()).prop_map(|(a, b, f)| Op::Scan(a, b, f)),
    ]
}

fn row(k: i64, a: u16, b: u16) -> Vec<Value> {
    // A long payload makes few rows per 4 KiB page: splits and merges happen.
    vec![
        Value::Int(k),
        Value::Int(i64::from(a)),
        Value::Str(format!("{b:05}{}", "x".repeat(usize::from(b % 200)))),
    ]
}

fn spec() -> TableSpec {
    let int = ColumnType::Int {
        width: IntWidth::Big,
        unsigned: false,
    };
    let mut s = TableSpec::new(
        vec![
            Column::new("k", int),
            Column::new("a", int),
            Column::new("b", ColumnType::VarChar { max_chars: 300 }),
        ],
        vec![0],
    );
    s.indexes.push(IndexSpec::new("by_a", vec![1]));
    s.indexes.push(IndexSpec::new("by_b", vec![2]).unique());
    s
}

fn run(ops: Vec<Op>) {
    let vfs = SimVfs::new(5);
    let db = Db::open_with(
        Arc::new(vfs.clone()) as Arc<dyn Vfs>,
        std::path::Path::new(common::DIR),
        common::small_config(),
    )
    .expect("open");
    db.create_database("d").expect("db");
    let t = db.create_table("d", "t", spec()).expect("table");
    let mut model: BTreeMap<i64, Vec<Value>> = BTreeMap::new();
    let b_taken = |m: &BTreeMap<i64, Vec<Value>>, b: &Value, except: i64| {
        m.iter().any(|(k, r)| *k != except && r[2] == *b)
    };
    for op in ops {
        match op {
            Op::Insert(k, a, b) => {
                let r = row(k, a, b);
                let res = t.insert(r.clone());
                if model.contains_key(&k) || b_taken(&model, &r[2], i64::MIN) {
                    assert!(matches!(res, Err(DbError::DuplicateKey { .. })), "{res:?}");
                } else {
                    res.expect("insert");
                    model.insert(k, r);
                }
            }
            Op::Update(k, a, b) => {
                let r = row(k, a, b);
                let res = t.update(&[Value::Int(k)], r.clone());
                if !model.contains_key(&k) {
                    assert!(matches!(res, Err(DbError::RowNotFound)), "{res:?}");
                } else if b_taken(&model, &r[2], k) {
                    assert!(matches!(res, Err(DbError::DuplicateKey { .. })), "{res:?}");
                } else {
                    res.expect("update");
                    model.insert(k, r);
                }
            }
            Op::Delete(k) => {
                let res = t.delete(&[Value::Int(k)]);
                if model.remove(&k).is_some() {
                    res.expect("delete");
                } else {
                    assert!(matches!(res, Err(DbError::RowNotFound)), "{res:?}");
                }
            }
            Op::Get(k) => {
                assert_eq!(
                    t.get(&[Value::Int(k)]).expect("get"),
                    model.get(&k).cloned()
                );
            }
            Op::Scan(a, b, fwd) => {
                let (lo, hi) = (a.min(b), a.max(b));
                let dir = if fwd {
                    Direction::Forward
                } else {
                    Direction::Backward
                };
                let got: Vec<Vec<Value>> = t
                    .scan(
                        Bound::Included(vec![Value::Int(lo)]),
                        Bound::Excluded(vec![Value::Int(hi)]),
                        dir,
                    )
                    .expect("scan")
                    .collect::<Result<_, _>>()
                    .expect("rows");
                let mut want: Vec<Vec<Value>> =
                    model.range(lo..hi).map(|(_, r)| r.clone()).collect();
                if !fwd {
                    want.reverse();
                }
                assert_eq!(got, want);
            }
        }
    }
    // Secondary lookups agree with the model.
    for a in 0..50u16 {
        let mut want: Vec<Vec<Value>> = model
            .iter()
            .filter(|(_, r)| r[1] == Value::Int(i64::from(a)))
            .map(|(k, _)| vec![Value::Int(*k)])
            .collect();
        want.sort_by_key(|v| match v[0] {
            Value::Int(i) => i,
            _ => 0,
        });
        assert_eq!(
            t.lookup_index("by_a", &[Value::Int(i64::from(a))])
                .expect("lookup"),
            want
        );
    }
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    db.shutdown().expect("shutdown");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]
    #[test]
    fn table_matches_a_btreemap_model_with_secondary_indexes(ops in proptest::collection::vec(op(), 1..600)) {
        run(ops);
    }
}
