//! A SELECT from one table decodes only the columns it reads (`SelectPlan::read_columns`,
//! `Table::reading_only`): the others come back from the engine as NULL. This test holds
//! the table's rows in a model and checks that every kind of query still sees the values
//! it reads (filters, sums, DISTINCT, ORDER BY, correlated subqueries, locking reads,
//! INSERT … SELECT), and that the writes that follow such reads (single- and multi-table
//! UPDATE, a subquery inside an UPDATE) store whole rows: no column a SELECT skipped is
//! ever written back as NULL.

// SqlError is what the session returns; the tests pass it on as is.
#![allow(clippy::result_large_err)]

mod common;

use common::run;
use quire_engine::table::Db;
use quire_sql::{Session, Value};

fn text(v: &Value) -> String {
    match v {
        Value::Str(x) => x.clone(),
        Value::Null => "NULL".to_string(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Decimal(d) => d.to_string(),
        other => format!("{other:?}"),
    }
}

fn texts(rows: &[Vec<Value>]) -> Vec<Vec<String>> {
    rows.iter().map(|r| r.iter().map(text).collect()).collect()
}

/// One row of `t`: (id, a, b, c, d); `c` is long enough to live off-page.
#[derive(Clone)]
struct Row {
    id: i64,
    a: i64,
    b: String,
    c: String,
    d: i64,
}

impl Row {
    fn new(id: i64) -> Row {
        Row {
            id,
            a: id % 13,
            b: format!("b-{id:04}"),
            c: format!("{id}:").repeat(if id % 3 == 0 { 3000 } else { 4 }),
            d: id % 7,
        }
    }

    fn cells(&self) -> Vec<String> {
        vec![
            self.id.to_string(),
            self.a.to_string(),
            self.b.clone(),
            self.c.clone(),
            self.d.to_string(),
        ]
    }
}

fn whole_table(s: &mut Session<'_>) -> Vec<Vec<String>> {
    texts(&run(s, "SELECT id, a, b, c, d FROM t ORDER BY id"))
}

#[test]
fn queries_reading_some_columns_see_them_and_writes_keep_the_rest() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), common::small_config()).expect("open");
    {
        let inst = quire_sql::Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        let s = &mut s;
        run(s, "CREATE DATABASE p");
        run(s, "USE p");
        run(
            s,
            "CREATE TABLE t (id INT PRIMARY KEY, a INT NOT NULL, b VARCHAR(20), \
             c LONGTEXT, d INT, KEY (d))",
        );
        run(s, "CREATE TABLE t2 (id INT PRIMARY KEY, b VARCHAR(20))");
        let mut model: Vec<Row> = (1..=300).map(Row::new).collect();
        for chunk in model.chunks(50) {
            let values: Vec<String> = chunk
                .iter()
                .map(|r| format!("({}, {}, '{}', '{}', {})", r.id, r.a, r.b, r.c, r.d))
                .collect();
            run(s, &format!("INSERT INTO t VALUES {}", values.join(", ")));
        }
        assert_eq!(
            whole_table(s),
            model.iter().map(Row::cells).collect::<Vec<_>>()
        );

        // One column of a range, a point, a sum of another.
        let want: Vec<Vec<String>> = model[9..20].iter().map(|r| vec![r.b.clone()]).collect();
        assert_eq!(
            texts(&run(
                s,
                "SELECT b FROM t WHERE id BETWEEN 10 AND 20 ORDER BY id"
            )),
            want
        );
        assert_eq!(
            texts(&run(s, "SELECT b FROM t WHERE id = 42")),
            vec![vec![model[41].b.clone()]]
        );
        let sum: i64 = model.iter().map(|r| r.a).sum();
        assert_eq!(
            texts(&run(s, "SELECT SUM(a) FROM t WHERE id BETWEEN 1 AND 300")),
            vec![vec![sum.to_string()]]
        );
        // A filter on a column the output does not name, an off-page column's length.
        let want: Vec<Vec<String>> = model
            .iter()
            .filter(|r| r.a == 7)
            .map(|r| vec![r.id.to_string(), r.c.len().to_string()])
            .collect();
        assert_eq!(
            texts(&run(
                s,
                "SELECT id, LENGTH(c) FROM t WHERE a = 7 ORDER BY id"
            )),
            want
        );
        // DISTINCT and ORDER BY of a column the filter does not name.
        let mut ds: Vec<i64> = model.iter().filter(|r| r.id < 50).map(|r| r.d).collect();
        ds.sort_unstable();
        ds.dedup();
        assert_eq!(
            texts(&run(
                s,
                "SELECT DISTINCT d FROM t WHERE id < 50 ORDER BY d DESC"
            )),
            ds.iter()
                .rev()
                .map(|d| vec![d.to_string()])
                .collect::<Vec<_>>()
        );
        // A correlated subquery reads the outer row's d and a.
        let want: Vec<Vec<String>> = model
            .iter()
            .filter(|o| {
                let max = model.iter().filter(|x| x.d == o.d).map(|x| x.a).max();
                Some(o.a) == max
            })
            .map(|o| vec![o.id.to_string()])
            .collect();
        assert_eq!(
            texts(&run(
                s,
                "SELECT id FROM t AS o WHERE a = (SELECT MAX(a) FROM t WHERE d = o.d) \
                 ORDER BY id"
            )),
            want
        );

        // A locking read of one column, then an UPDATE of another in the same transaction.
        run(s, "BEGIN");
        assert_eq!(
            texts(&run(s, "SELECT b FROM t WHERE id = 5 FOR UPDATE")),
            vec![vec![model[4].b.clone()]]
        );
        run(s, "UPDATE t SET a = a + 1 WHERE id = 5");
        run(s, "COMMIT");
        model[4].a += 1;

        // INSERT … SELECT of two columns.
        run(s, "INSERT INTO t2 SELECT id, b FROM t WHERE id % 10 = 0");
        assert_eq!(
            texts(&run(s, "SELECT id, b FROM t2 ORDER BY id")),
            model
                .iter()
                .filter(|r| r.id % 10 == 0)
                .map(|r| vec![r.id.to_string(), r.b.clone()])
                .collect::<Vec<_>>()
        );

        // A subquery inside an UPDATE, a multi-table UPDATE, a DELETE by a subquery.
        let n3 = model.iter().filter(|r| r.d == 3).count() as i64;
        run(
            s,
            "UPDATE t SET a = (SELECT COUNT(*) FROM t2 JOIN t AS x USING (id) WHERE x.d = 3) \
             WHERE id = 7",
        );
        model[6].a = model.iter().filter(|r| r.id % 10 == 0 && r.d == 3).count() as i64;
        assert!(n3 > 0);
        run(s, "UPDATE t JOIN t2 ON t.id = t2.id SET t.a = t.a + 100");
        for r in model.iter_mut().filter(|r| r.id % 10 == 0) {
            r.a += 100;
        }
        run(
            s,
            "UPDATE t SET d = d + 10 WHERE id IN (SELECT id FROM t2 WHERE id < 100)",
        );
        for r in model.iter_mut().filter(|r| r.id % 10 == 0 && r.id < 100) {
            r.d += 10;
        }
        run(
            s,
            "DELETE FROM t WHERE id IN (SELECT id FROM t2 WHERE id > 250)",
        );
        model.retain(|r| !(r.id % 10 == 0 && r.id > 250));

        // Every row whole: nothing a projected read skipped was written back as NULL.
        assert_eq!(
            whole_table(s),
            model.iter().map(Row::cells).collect::<Vec<_>>()
        );
    }
    db.shutdown().expect("shutdown");
}
