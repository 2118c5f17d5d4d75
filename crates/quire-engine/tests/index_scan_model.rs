//! `Table::index_scan` against a BTreeMap model: random rows (many duplicates and NULLs in
//! the indexed columns, some values off-page) on a two-column secondary index, scanned with
//! random whole-key and prefix bounds, included and excluded, in both directions, while rows
//! change between scans. The scan returns exactly the model's rows, in (a, b, pk) order.

mod common;

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use proptest::prelude::*;
use quire_engine::btree::Direction;
use quire_engine::row::{Column, ColumnType, IntWidth, LobSize, Value};
use quire_engine::table::{Db, IndexSpec, TableSpec};
use quire_io::sim::SimVfs;
use quire_io::Vfs;

#[derive(Debug, Clone)]
enum Op {
    Put(i64, Option<i64>, Option<u8>, u16),
    Delete(i64),
    Scan(Bnd, Bnd, bool),
}

/// A bound over (a, b): `None` unbounded; else the prefix (0, 1 or 2 values) and inclusion.
type Bnd = Option<(Vec<Option<i64>>, bool)>;

fn bnd() -> impl Strategy<Value = Bnd> {
    let v = prop_oneof![1 => Just(None), 6 => (0i64..6).prop_map(Some)];
    proptest::option::weighted(0.8, (proptest::collection::vec(v, 0..=2), any::<bool>()))
}

fn op() -> impl Strategy<Value = Op> {
    let k = 0i64..60;
    let a = prop_oneof![1 => Just(None), 5 => (0i64..6).prop_map(Some)];
    let b = prop_oneof![1 => Just(None), 5 => (0u8..4).prop_map(Some)];
    prop_oneof![
        6 => (k.clone(), a, b, 0u16..3000).prop_map(|(k, a, b, n)| Op::Put(k, a, b, n)),
        2 => k.prop_map(Op::Delete),
        3 => (bnd(), bnd(), any::<bool>()).prop_map(|(l, u, f)| Op::Scan(l, u, f)),
    ]
}

fn int_or_null(v: Option<i64>) -> Value {
    v.map_or(Value::Null, Value::Int)
}

fn b_value(b: Option<u8>) -> Value {
    // Strings sort by bytes: "b0" < "b1" < ... as the numbers do.
    b.map_or(Value::Null, |b| Value::Str(format!("b{b}")))
}

fn row(k: i64, a: Option<i64>, b: Option<u8>, n: u16) -> Vec<Value> {
    // Every eighth payload is long enough to go off-page.
    let len = if n.is_multiple_of(8) {
        5000 + usize::from(n)
    } else {
        usize::from(n % 40)
    };
    vec![
        Value::Int(k),
        int_or_null(a),
        b_value(b),
        Value::Bytes(vec![(k % 251) as u8; len]),
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
            Column::nullable("a", int),
            Column::nullable("b", ColumnType::VarChar { max_chars: 4 }),
            Column::new("payload", ColumnType::Blob(LobSize::Regular)),
        ],
        vec![0],
    );
    s.indexes.push(IndexSpec::new("ab", vec![1, 2]));
    s
}

/// SQL order of one index column's values (NULL first), as the key encodes it.
fn cmp_col(x: &Value, y: &Value) -> Ordering {
    x.cmp_sql(y)
}

/// Compares a row's (a, b) prefix of `len` columns with a bound prefix.
fn cmp_prefix(row: &[Value], prefix: &[Value]) -> Ordering {
    for (i, p) in prefix.iter().enumerate() {
        match cmp_col(&row[1 + i], p) {
            Ordering::Equal => continue,
            o => return o,
        }
    }
    Ordering::Equal
}

fn bound_values(b: &Bnd) -> Bound<Vec<Value>> {
    match b {
        None => Bound::Unbounded,
        Some((vals, incl)) => {
            let v: Vec<Value> = vals
                .iter()
                .enumerate()
                .map(|(i, x)| match i {
                    0 => int_or_null(*x),
                    _ => b_value(x.map(|x| (x % 4) as u8)),
                })
                .collect();
            if *incl {
                Bound::Included(v)
            } else {
                Bound::Excluded(v)
            }
        }
    }
}

fn in_range(row: &[Value], lo: &Bound<Vec<Value>>, hi: &Bound<Vec<Value>>) -> bool {
    let lo_ok = match lo {
        Bound::Unbounded => true,
        Bound::Included(p) => cmp_prefix(row, p) != Ordering::Less,
        Bound::Excluded(p) => cmp_prefix(row, p) == Ordering::Greater,
    };
    let hi_ok = match hi {
        Bound::Unbounded => true,
        Bound::Included(p) => cmp_prefix(row, p) != Ordering::Greater,
        Bound::Excluded(p) => cmp_prefix(row, p) == Ordering::Less,
    };
    lo_ok && hi_ok
}

fn run(ops: Vec<Op>) {
    let vfs = SimVfs::new(17);
    let db = Db::open_with(
        Arc::new(vfs.clone()) as Arc<dyn Vfs>,
        std::path::Path::new(common::DIR),
        common::small_config(),
    )
    .expect("open");
    db.create_database("d").expect("db");
    let t = db.create_table("d", "t", spec()).expect("table");
    let mut model: BTreeMap<i64, Vec<Value>> = BTreeMap::new();
    for op in ops {
        match op {
            Op::Put(k, a, b, n) => {
                let r = row(k, a, b, n);
                if model.contains_key(&k) {
                    t.update(&[Value::Int(k)], r.clone()).expect("update");
                } else {
                    t.insert(r.clone()).expect("insert");
                }
                model.insert(k, r);
            }
            Op::Delete(k) => {
                if model.remove(&k).is_some() {
                    t.delete(&[Value::Int(k)]).expect("delete");
                }
            }
            Op::Scan(l, u, fwd) => {
                let (lo, hi) = (bound_values(&l), bound_values(&u));
                let dir = if fwd {
                    Direction::Forward
                } else {
                    Direction::Backward
                };
                let got: Vec<Vec<Value>> = t
                    .index_scan("ab", lo.clone(), hi.clone(), dir)
                    .expect("index scan")
                    .collect::<Result<_, _>>()
                    .expect("rows");
                let mut want: Vec<Vec<Value>> = model
                    .values()
                    .filter(|r| in_range(r, &lo, &hi))
                    .cloned()
                    .collect();
                want.sort_by(|x, y| {
                    cmp_col(&x[1], &y[1])
                        .then(cmp_col(&x[2], &y[2]))
                        .then(cmp_col(&x[0], &y[0]))
                });
                if !fwd {
                    want.reverse();
                }
                assert_eq!(got, want, "bounds {lo:?} .. {hi:?} forward {fwd}");
            }
        }
    }
    // lookup_index agrees with the scan on equal prefixes.
    for a in 0..6 {
        let pks = t
            .lookup_index("ab", &[Value::Int(a)])
            .expect("lookup")
            .len();
        let rows = t
            .index_scan(
                "ab",
                Bound::Included(vec![Value::Int(a)]),
                Bound::Included(vec![Value::Int(a)]),
                Direction::Forward,
            )
            .expect("scan")
            .count();
        assert_eq!(pks, rows);
    }
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    db.shutdown().expect("shutdown");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
    #[test]
    fn index_scans_match_a_btreemap_model(ops in proptest::collection::vec(op(), 1..250)) {
        run(ops);
    }
}

#[test]
fn prefix_bounds_select_whole_groups_of_duplicates() {
    let ops = vec![
        Op::Put(1, Some(2), Some(1), 1),
        Op::Put(2, Some(2), Some(0), 2),
        Op::Put(3, Some(2), None, 3),
        Op::Put(4, None, Some(3), 8),
        Op::Put(5, Some(3), Some(0), 16),
        Op::Put(6, Some(1), Some(3), 5),
        Op::Put(7, Some(2), Some(1), 6),
        // a = 2, included and excluded, both directions; (2, b1) exactly; NULLs.
        Op::Scan(
            Some((vec![Some(2)], true)),
            Some((vec![Some(2)], true)),
            true,
        ),
        Op::Scan(
            Some((vec![Some(2)], true)),
            Some((vec![Some(2)], true)),
            false,
        ),
        Op::Scan(Some((vec![Some(2)], false)), None, true),
        Op::Scan(None, Some((vec![Some(2)], false)), false),
        Op::Scan(
            Some((vec![Some(2), Some(1)], true)),
            Some((vec![Some(2), Some(1)], true)),
            true,
        ),
        Op::Scan(Some((vec![None], true)), Some((vec![None], true)), true),
        Op::Scan(Some((vec![], false)), None, true),
        Op::Scan(None, Some((vec![], true)), false),
    ];
    run(ops);
}
