//! The planner's rules (docs/sql.md), each pinned by EXPLAIN and by the rows it returns.

use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_sql::{CollectSink, Instance, Session, Value};

fn run(s: &mut Session<'_>, sql: &str) -> Vec<Vec<Value>> {
    let mut c = CollectSink::default();
    s.query(sql, &mut c)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    c.rows
}

/// (type, key, Extra) of EXPLAIN.
fn explain(s: &mut Session<'_>, sql: &str) -> (String, String, String) {
    let rows = run(s, &format!("EXPLAIN {sql}"));
    let text = |v: &Value| match v {
        Value::Str(x) => x.clone(),
        _ => String::new(),
    };
    (text(&rows[0][3]), text(&rows[0][5]), text(&rows[0][9]))
}

fn with_table(f: impl FnOnce(&mut Session<'_>)) {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), Config::default()).expect("open");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        run(&mut s, "CREATE DATABASE p");
        run(&mut s, "USE p");
        run(
            &mut s,
            "CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, u INT, c CHAR(10), KEY k_1 (k), UNIQUE KEY u_1 (u))",
        );
        let values: Vec<String> = (1..=100)
            .map(|i| format!("({i}, {}, {}, 'c{}')", i % 10, 1000 + i, 100 - i))
            .collect();
        run(
            &mut s,
            &format!("INSERT INTO t VALUES {}", values.join(",")),
        );
        f(&mut s);
    }
    db.shutdown().expect("shutdown");
}

#[test]
fn a_whole_primary_key_equality_is_a_const_point() {
    with_table(|s| {
        assert_eq!(explain(s, "SELECT c FROM t WHERE id = 7").0, "const");
        assert_eq!(explain(s, "SELECT c FROM t WHERE id = 7").1, "PRIMARY");
        assert_eq!(
            run(s, "SELECT c FROM t WHERE id = 7"),
            vec![vec![Value::Str("c93".into())]]
        );
    });
}

#[test]
fn primary_key_ranges_and_in_lists_read_only_their_ranges() {
    with_table(|s| {
        let (ty, key, _) = explain(s, "SELECT c FROM t WHERE id BETWEEN 5 AND 8");
        assert_eq!((ty.as_str(), key.as_str()), ("range", "PRIMARY"));
        assert_eq!(
            run(s, "SELECT COUNT(*) FROM t WHERE id BETWEEN 5 AND 8"),
            vec![vec![Value::Int(4)]]
        );
        assert_eq!(
            explain(s, "SELECT c FROM t WHERE id IN (3, 1, 2)").0,
            "range"
        );
        assert_eq!(
            run(s, "SELECT id FROM t WHERE id IN (3, 1, 2, 3)"),
            vec![
                vec![Value::Int(1)],
                vec![Value::Int(2)],
                vec![Value::Int(3)]
            ]
        );
    });
}

#[test]
fn a_unique_secondary_point_beats_a_primary_range() {
    with_table(|s| {
        let (ty, key, _) = explain(s, "SELECT id FROM t WHERE u = 1050 AND id > 3");
        assert_eq!((ty.as_str(), key.as_str()), ("const", "u_1"));
        assert_eq!(
            run(s, "SELECT id FROM t WHERE u = 1050 AND id > 3"),
            vec![vec![Value::Int(50)]]
        );
    });
}

#[test]
fn secondary_equality_and_ored_ranges_use_the_index() {
    with_table(|s| {
        let (ty, key, _) = explain(s, "SELECT id, k, c FROM t WHERE k = 3");
        assert_eq!((ty.as_str(), key.as_str()), ("ref", "k_1"));
        assert_eq!(
            run(s, "SELECT COUNT(*) FROM t WHERE k = 3"),
            vec![vec![Value::Int(10)]]
        );
        let q = "SELECT COUNT(k) FROM t WHERE k BETWEEN 1 AND 2 OR k BETWEEN 8 AND 8";
        let (ty, key, extra) = explain(s, q);
        assert_eq!((ty.as_str(), key.as_str()), ("range", "k_1"));
        assert!(extra.contains("Using index"), "{extra}");
        assert_eq!(run(s, q), vec![vec![Value::Int(30)]]);
    });
}

#[test]
fn covering_reads_only_when_the_index_has_every_column() {
    with_table(|s| {
        assert!(explain(s, "SELECT id, k FROM t WHERE k = 1")
            .2
            .contains("Using index"));
        assert!(!explain(s, "SELECT c FROM t WHERE k = 1")
            .2
            .contains("Using index"));
        assert!(!explain(s, "SELECT k FROM t WHERE k = 1 FOR UPDATE")
            .2
            .contains("Using index"));
    });
}

#[test]
fn order_by_an_index_needs_no_sort_and_limit_stops_early() {
    with_table(|s| {
        let (ty, key, extra) = explain(s, "SELECT id FROM t ORDER BY id DESC LIMIT 3");
        assert_eq!((ty.as_str(), key.as_str()), ("index", "PRIMARY"));
        assert!(!extra.contains("filesort"));
        assert_eq!(
            run(s, "SELECT id FROM t ORDER BY id DESC LIMIT 3"),
            vec![
                vec![Value::Int(100)],
                vec![Value::Int(99)],
                vec![Value::Int(98)]
            ]
        );
        let (_, key, extra) = explain(s, "SELECT id, k FROM t ORDER BY k LIMIT 2");
        assert_eq!(key, "k_1");
        assert!(!extra.contains("filesort"));
        assert_eq!(
            run(s, "SELECT id, k FROM t ORDER BY k LIMIT 2"),
            vec![
                vec![Value::Int(10), Value::Int(0)],
                vec![Value::Int(20), Value::Int(0)]
            ]
        );
        assert!(
            explain(s, "SELECT id FROM t WHERE id < 50 ORDER BY c LIMIT 2")
                .2
                .contains("filesort")
        );
        assert_eq!(
            // c is 'c' || (100 - id): the smallest c below id 50 belongs to id 49.
            run(s, "SELECT id FROM t WHERE id < 50 ORDER BY c LIMIT 2"),
            vec![vec![Value::Int(49)], vec![Value::Int(48)]]
        );
    });
}

#[test]
fn a_bound_of_another_type_widens_the_range_never_narrows_it() {
    with_table(|s| {
        assert_eq!(
            run(s, "SELECT id FROM t WHERE id > 1.5 AND id < 3"),
            vec![vec![Value::Int(2)]]
        );
        assert_eq!(
            run(s, "SELECT id FROM t WHERE id = '4'"),
            vec![vec![Value::Int(4)]]
        );
        assert_eq!(
            run(s, "SELECT id FROM t WHERE id = 4.5"),
            Vec::<Vec<Value>>::new()
        );
        assert_eq!(
            run(s, "SELECT id FROM t WHERE id = NULL"),
            Vec::<Vec<Value>>::new()
        );
    });
}

#[test]
fn overlapping_ranges_read_each_row_once() {
    with_table(|s| {
        let ids = |rows: Vec<Vec<Value>>| -> Vec<i64> {
            rows.iter()
                .map(|r| match r[0] {
                    Value::Int(i) => i,
                    ref v => panic!("{v:?}"),
                })
                .collect()
        };
        assert_eq!(
            ids(run(
                s,
                "SELECT id FROM t WHERE id BETWEEN 1 AND 5 OR id BETWEEN 3 AND 8"
            )),
            (1..=8).collect::<Vec<_>>()
        );
        assert_eq!(
            ids(run(s, "SELECT id FROM t WHERE id > 97 OR id = 98")),
            vec![98, 99, 100]
        );
        assert_eq!(
            ids(run(
                s,
                "SELECT id FROM t WHERE id = 7 OR id BETWEEN 5 AND 9 OR id = 50 ORDER BY id DESC"
            )),
            vec![50, 9, 8, 7, 6, 5]
        );
        // A secondary index: k = id % 10.
        assert_eq!(
            run(
                s,
                "SELECT COUNT(*) FROM t WHERE k BETWEEN 1 AND 3 OR k BETWEEN 2 AND 4 OR k = 3"
            ),
            vec![vec![Value::Int(40)]]
        );
    });
}
