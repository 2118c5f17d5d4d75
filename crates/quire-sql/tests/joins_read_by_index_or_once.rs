//! Join planning and execution (docs/sql.md, "Joins"): the inner table of an equi-join on
//! an index is read by lookups (EXPLAIN eq_ref / ref), one without a usable index is read
//! once and joined in memory (a hash join, or a block nested loop with no equality, also
//! past `join_buffer_size`), LEFT JOIN keeps its order, and joins take their tables'
//! metadata and row locks.

// SqlError is what the session returns; the tests pass it on as is.
#![allow(clippy::result_large_err)]

mod common;

use quire_engine::table::Db;
use quire_sql::{CollectSink, Instance, Session, SqlError, Value};

fn q(s: &mut Session<'_>, sql: &str) -> Result<Vec<Vec<Value>>, SqlError> {
    let mut c = CollectSink::default();
    s.query(sql, &mut c).map(|_| c.rows)
}

fn run(s: &mut Session<'_>, sql: &str) -> Vec<Vec<Value>> {
    q(s, sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn text(v: &Value) -> String {
    match v {
        Value::Str(x) => x.clone(),
        Value::Null => String::new(),
        other => format!("{other:?}"),
    }
}

/// EXPLAIN's (table, type, key, ref, Extra) per table, in join order.
fn explain(s: &mut Session<'_>, sql: &str) -> Vec<[String; 5]> {
    run(s, &format!("EXPLAIN {sql}"))
        .iter()
        .map(|r| {
            [
                text(&r[2]),
                text(&r[3]),
                text(&r[5]),
                text(&r[7]),
                text(&r[9]),
            ]
        })
        .collect()
}

fn ints(rows: &[Vec<Value>]) -> Vec<Vec<i64>> {
    rows.iter()
        .map(|r| {
            r.iter()
                .map(|v| match v {
                    Value::Int(i) => *i,
                    Value::UInt(u) => *u as i64,
                    Value::Null => -1,
                    other => panic!("not an integer: {other:?}"),
                })
                .collect()
        })
        .collect()
}

/// The parent of child `i`.
fn parent(i: i64) -> i64 {
    if i <= 3 {
        499 + i
    } else {
        i % 100 + 1
    }
}

/// `p` (parents, 100 rows: grp = id % 10 with an index, lvl = id % 10 without one), `c`
/// (children, 300 rows: parent = i % 100 + 1 with an index, tag = i % 7 without one, and
/// rows 1..=3 point at parents 500..502 that do not exist).
fn with_tables(f: impl FnOnce(&Instance<'_>, &mut Session<'_>)) {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), common::small_config()).expect("open");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        run(&mut s, "CREATE DATABASE j");
        run(&mut s, "USE j");
        run(
            &mut s,
            "CREATE TABLE p (id INT PRIMARY KEY, name VARCHAR(10), grp INT, lvl INT, KEY grp (grp))",
        );
        run(
            &mut s,
            "CREATE TABLE c (id INT PRIMARY KEY, parent INT, tag INT, KEY parent (parent))",
        );
        run(
            &mut s,
            "INSERT INTO p SELECT seq, CONCAT('p', seq), seq % 10, seq % 10 FROM seq_1_to_100",
        );
        run(
            &mut s,
            "INSERT INTO c SELECT seq, IF(seq <= 3, 499 + seq, seq % 100 + 1), seq % 7 FROM seq_1_to_300",
        );
        f(&inst, &mut s);
    }
    db.shutdown().expect("shutdown");
}

#[test]
fn an_equi_join_on_the_inner_primary_key_is_an_eq_ref_lookup() {
    with_tables(|_, s| {
        // With c's 300 rows whole, p (100 rows) first and c by its parent index is
        // cheaper (MariaDB's plan too); a third of c makes c first, p by its key.
        let sql = "SELECT c.id, p.name FROM c JOIN p ON p.id = c.parent WHERE c.id > 200";
        let plan = explain(s, sql);
        assert_eq!(plan.len(), 2, "{plan:?}");
        assert_eq!(plan[0][0], "c");
        assert_eq!(
            plan[1][..4],
            ["p", "eq_ref", "PRIMARY", "j.c.parent"],
            "{plan:?}"
        );
        assert_eq!(run(s, &format!("{sql} ORDER BY c.id")).len(), 100);
        assert_eq!(
            run(
                s,
                "SELECT p.name FROM c JOIN p ON p.id = c.parent WHERE c.id = 150"
            ),
            vec![vec![Value::Str("p51".into())]]
        );
    });
}

#[test]
fn an_equi_join_on_an_indexed_column_is_a_ref_lookup() {
    with_tables(|_, s| {
        // FROM order puts p first; p reaches c through c's index on parent.
        let sql = "SELECT COUNT(*) FROM p JOIN c ON c.parent = p.id WHERE p.grp = 3";
        let plan = explain(s, sql);
        assert_eq!(plan[0][..3], ["p", "ref", "grp"], "{plan:?}");
        assert_eq!(plan[1][..4], ["c", "ref", "parent", "j.p.id"], "{plan:?}");
        let expected = (1..=300)
            .filter(|&i| parent(i) % 10 == 3 && parent(i) <= 100)
            .count();
        assert_eq!(ints(&run(s, sql)), vec![vec![expected as i64]]);
    });
}

#[test]
fn a_join_without_a_usable_index_reads_the_inner_table_once_into_a_hash() {
    with_tables(|_, s| {
        let sql = "SELECT COUNT(*) FROM p JOIN c ON c.tag = p.lvl";
        let plan = explain(s, sql);
        assert_eq!(plan[1][0], "c");
        assert_eq!(plan[1][1], "ALL", "{plan:?}");
        assert!(
            plan[1][4].contains("Using join buffer (flat, BNL join)"),
            "{plan:?}"
        );
        // grp 0..=9 (10 parents each) against tag 0..=6 (42 or 43 children each).
        let expected: i64 = (0..7)
            .map(|t| 10 * (1..=300).filter(|i| i % 7 == t).count() as i64)
            .sum();
        assert_eq!(ints(&run(s, sql)), vec![vec![expected]]);
        // Without an equality: every row of the held table is a candidate.
        let lt = "SELECT COUNT(*) FROM p JOIN c ON c.tag < p.lvl - 5";
        assert!(explain(s, lt)[1][4].contains("join buffer"));
        let expected: i64 = (1..=100)
            .map(|p| (1..=300).filter(|c| c % 7 < p % 10 - 5).count() as i64)
            .sum();
        assert_eq!(ints(&run(s, lt)), vec![vec![expected]]);
    });
}

#[test]
fn a_table_with_a_constant_point_is_read_first() {
    with_tables(|_, s| {
        let sql = "SELECT c.id FROM c JOIN p ON p.id = c.parent WHERE p.id = 7 ORDER BY c.id";
        let plan = explain(s, sql);
        assert_eq!(plan[0][..3], ["p", "const", "PRIMARY"], "{plan:?}");
        assert_eq!(plan[1][..3], ["c", "ref", "parent"], "{plan:?}");
        assert_eq!(ints(&run(s, sql)), vec![vec![6], vec![106], vec![206]]);
    });
}

#[test]
fn a_left_join_keeps_its_order_and_null_extends_unmatched_rows() {
    with_tables(|_, s| {
        // p.id = 7 would make p a constant first table in an inner join; the LEFT JOIN
        // keeps c (the outer side) first.
        let sql = "SELECT c.id, p.name FROM c LEFT JOIN p ON p.id = c.parent AND p.id = 7 WHERE c.id <= 7";
        let plan = explain(s, sql);
        assert_eq!(plan[0][0], "c");
        assert_eq!(plan[1][0], "p");
        let rows = run(s, &format!("{sql} ORDER BY c.id"));
        assert_eq!(rows.len(), 7);
        assert_eq!(rows[5], vec![Value::Int(6), Value::Str("p7".into())]);
        assert_eq!(rows[0], vec![Value::Int(1), Value::Null]);
        // The anti-join: children whose parent does not exist.
        let orphans =
            "SELECT c.id FROM c LEFT JOIN p ON p.id = c.parent WHERE p.id IS NULL ORDER BY c.id";
        assert_eq!(ints(&run(s, orphans)), vec![vec![1], vec![2], vec![3]]);
        // WHERE rejecting the inner side's NULLs makes it an inner join: p may go first.
        let inner = "SELECT c.id FROM c LEFT JOIN p ON p.id = c.parent WHERE p.grp = 4";
        assert_eq!(explain(s, inner)[0][0], "p");
        let expected = (1..=300)
            .filter(|&i| parent(i) % 10 == 4 && parent(i) <= 100)
            .count();
        assert_eq!(run(s, inner).len(), expected);
    });
}

#[test]
fn order_by_the_first_tables_index_with_limit_needs_no_sort() {
    with_tables(|_, s| {
        // c first (a third of it, as MariaDB's plan): its primary key gives the order.
        let sql = "SELECT c.id, p.name FROM c JOIN p ON p.id = c.parent WHERE c.id > 200 \
                   ORDER BY c.id DESC LIMIT 3";
        let plan = explain(s, sql);
        assert_eq!(plan[0][0], "c");
        assert!(!plan[0][4].contains("filesort"), "{plan:?}");
        assert_eq!(
            run(s, sql),
            vec![
                vec![Value::Int(300), Value::Str("p1".into())],
                vec![Value::Int(299), Value::Str("p100".into())],
                vec![Value::Int(298), Value::Str("p99".into())],
            ]
        );
        // A column of the second table needs the sort.
        let by_name = "SELECT c.id FROM c JOIN p ON p.id = c.parent ORDER BY p.name, c.id LIMIT 2";
        assert!(explain(s, by_name)[0][4].contains("filesort"));
        assert_eq!(ints(&run(s, by_name)), vec![vec![100], vec![200]]);
    });
}

#[test]
fn past_join_buffer_size_blocks_give_the_same_rows() {
    with_tables(|_, s| {
        let queries = [
            "SELECT p.id, c.id FROM p JOIN c ON c.tag = p.lvl",
            "SELECT p.id, c.id FROM p LEFT JOIN c ON c.tag = p.lvl + 3",
            "SELECT p.id, c.id FROM p JOIN c ON c.tag < p.lvl - 7",
            "SELECT p.id, c.id FROM p LEFT JOIN c ON c.tag = p.lvl + 3 ORDER BY p.id DESC LIMIT 50",
            "SELECT p.id, c.id, q.id FROM p JOIN c ON c.tag = p.lvl LEFT JOIN p q ON q.lvl = c.id",
        ];
        let mut expected = Vec::new();
        for sql in queries {
            assert!(explain(s, sql)[1][4].contains("join buffer"), "{sql}");
            let mut rows = run(s, sql);
            if !sql.contains("ORDER BY") {
                rows.sort_by_key(|r| format!("{r:?}"));
            }
            expected.push(rows);
        }
        // The smallest buffer (a row per block, two per chunk), then a few rows per block
        // and a dozen per chunk.
        for size in [128, 2048] {
            run(s, &format!("SET SESSION join_buffer_size = {size}"));
            for (sql, want) in queries.iter().zip(&expected) {
                let mut rows = run(s, sql);
                if !sql.contains("ORDER BY") {
                    rows.sort_by_key(|r| format!("{r:?}"));
                }
                assert_eq!(&rows, want, "{sql} with join_buffer_size {size}");
            }
        }
    });
}

#[test]
fn a_locking_join_locks_the_rows_of_every_table_it_reads() {
    with_tables(|inst, s| {
        run(s, "BEGIN");
        let rows = run(
            s,
            "SELECT c.id, p.id FROM c JOIN p ON p.id = c.parent WHERE c.id = 150 FOR UPDATE",
        );
        assert_eq!(ints(&rows), vec![vec![150, 51]]);
        let mut other = inst.session("root", "localhost");
        run(&mut other, "USE j");
        run(&mut other, "SET SESSION innodb_lock_wait_timeout = 1");
        for sql in [
            "UPDATE c SET tag = 0 WHERE id = 150",
            "UPDATE p SET grp = 0 WHERE id = 51",
        ] {
            match q(&mut other, sql) {
                Err(SqlError::LockWaitTimeout) => {}
                other => panic!("{sql}: {other:?}"),
            }
        }
        // A row the join did not read is free.
        run(&mut other, "UPDATE p SET grp = 0 WHERE id = 52");
        run(s, "COMMIT");
        run(&mut other, "UPDATE p SET grp = 0 WHERE id = 51");
    });
}

#[test]
fn ddl_on_a_joined_table_waits_for_the_transaction_and_replans() {
    with_tables(|inst, s| {
        let sql = "SELECT COUNT(*) FROM p JOIN c ON c.parent = p.lvl";
        assert_eq!(explain(s, sql)[1][..3], ["c", "ref", "parent"]);
        let expected = (1..=100)
            .map(|p| (1..=300).filter(|&i| parent(i) == p % 10).count() as i64)
            .sum::<i64>();
        run(s, "BEGIN");
        assert_eq!(ints(&run(s, sql)), vec![vec![expected]]);
        let mut ddl = inst.session("root", "localhost");
        run(&mut ddl, "USE j");
        run(&mut ddl, "SET SESSION lock_wait_timeout = 1");
        // The inner table is locked as the outer one is.
        match q(&mut ddl, "DROP INDEX parent ON c") {
            Err(SqlError::LockWaitTimeout) => {}
            other => panic!("{other:?}"),
        }
        run(s, "COMMIT");
        run(&mut ddl, "DROP INDEX parent ON c");
        // The cached plan read c through the dropped index: it is planned again.
        assert_eq!(ints(&run(s, sql)), vec![vec![expected]]);
        assert!(explain(s, sql)[1][4].contains("join buffer"));
    });
}

#[test]
fn names_in_a_join_must_be_unique_and_unambiguous() {
    with_tables(|_, s| {
        let cases = [
            ("SELECT id FROM p JOIN c ON c.parent = p.id", 1052),
            ("SELECT p.id FROM p JOIN c ON c.nope = p.id", 1054),
            ("SELECT p.id FROM p JOIN p ON 1 = 1", 1066),
            ("SELECT x.id FROM p x JOIN c x ON 1 = 1", 1066),
            ("SELECT p.id FROM p x JOIN c ON c.parent = x.id", 1054),
        ];
        for (sql, code) in cases {
            let got = match q(s, sql) {
                Err(SqlError::AmbiguousColumn { .. }) => 1052,
                Err(SqlError::UnknownColumn { .. }) => 1054,
                Err(SqlError::NotUniqueTable(_)) => 1066,
                other => panic!("{sql}: {other:?}"),
            };
            assert_eq!(got, code, "{sql}");
        }
        // USING merges the column: unqualified, it is no longer ambiguous.
        assert_eq!(
            ints(&run(s, "SELECT id FROM p JOIN c USING (id) WHERE id = 5")),
            vec![vec![5]]
        );
    });
}

#[test]
fn a_prepared_join_takes_parameters_in_on_and_where_and_reports_its_columns() {
    with_tables(|_, s| {
        let p = s
            .prepare(
                "SELECT c.id, p.name FROM c LEFT JOIN p ON p.id = c.parent AND p.grp = ? WHERE c.id BETWEEN ? AND ? ORDER BY c.id",
            )
            .expect("prepare");
        assert_eq!(p.params, 3);
        let names: Vec<&str> = p.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["id", "name"]);
        assert_eq!(p.columns[1].table, "p");
        let mut c = CollectSink::default();
        s.execute(
            p.id,
            &[Value::Int(2), Value::Int(100), Value::Int(102)],
            &mut c,
        )
        .expect("execute");
        // Children 100..=102 have parents 1, 2, 3: only parent 2 is in group 2.
        assert_eq!(
            c.rows,
            vec![
                vec![Value::Int(100), Value::Null],
                vec![Value::Int(101), Value::Str("p2".into())],
                vec![Value::Int(102), Value::Null],
            ]
        );
        let mut c = CollectSink::default();
        s.execute(
            p.id,
            &[Value::Int(1), Value::Int(100), Value::Int(100)],
            &mut c,
        )
        .expect("execute");
        assert_eq!(c.rows, vec![vec![Value::Int(100), Value::Str("p1".into())]]);
    });
}

#[test]
fn kill_query_stops_a_join_at_its_next_row() {
    with_tables(|inst, _| {
        let id = std::sync::atomic::AtomicU64::new(0);
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|sc| {
            let join = sc.spawn(|| {
                let mut b = inst.session("root", "localhost");
                run(&mut b, "USE j");
                id.store(b.id(), std::sync::atomic::Ordering::Release);
                // 10^12 candidate rows: it ends only when killed.
                let r = q(
                    &mut b,
                    "SELECT COUNT(*) FROM seq_1_to_1000000 x JOIN seq_1_to_1000000 y ON x.seq + y.seq = 0",
                );
                done.store(true, std::sync::atomic::Ordering::Release);
                let after = q(&mut b, "SELECT 1");
                (r, after)
            });
            let mut killer = inst.session("root", "localhost");
            // A KILL QUERY that lands before the statement starts is cleared by it: repeat
            // until the join has ended.
            for _ in 0..1200 {
                if done.load(std::sync::atomic::Ordering::Acquire) {
                    break;
                }
                let target = id.load(std::sync::atomic::Ordering::Acquire);
                if target != 0 {
                    run(&mut killer, &format!("KILL QUERY {target}"));
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            let (r, after) = join.join().expect("join thread");
            assert!(matches!(r, Err(SqlError::Interrupted)), "{r:?}");
            assert!(after.is_ok(), "{after:?}");
        });
    });
}

#[test]
fn a_derived_tables_columns_are_named_by_its_alias() {
    with_tables(|_, s| {
        // As MariaDB: `table` is the derived table's alias (drivers qualify names with it),
        // and a column read from a table keeps the alias as its original table too.
        let p = s
            .prepare("SELECT * FROM (SELECT id AS one, 1 AS lit FROM p) AS A")
            .expect("prepare");
        let c = &p.columns;
        assert_eq!((c[0].table.as_str(), c[0].org_table.as_str()), ("A", "A"));
        assert_eq!((c[0].name.as_str(), c[0].org_name.as_str()), ("one", "one"));
        assert_eq!((c[1].table.as_str(), c[1].org_table.as_str()), ("A", ""));
        let p = s
            .prepare("SELECT f.x FROM (SELECT 1 AS x) f JOIN p ON p.id = f.x")
            .expect("prepare");
        assert_eq!(p.columns[0].table, "f");
    });
}
