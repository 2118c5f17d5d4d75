//! A join of two 20k-row tables on an indexed column runs as index lookups, counted by
//! the buffer pool's page requests (never timed): one lookup per outer row costs at least
//! one page request each, while reading the inner table once costs about as many as it
//! has pages. The same join without the index reads each table once.

use quire_engine::config::Config;
use quire_engine::row::Decimal;
use quire_engine::table::Db;
use quire_sql::{CollectSink, Instance, Session, Value};

const ROWS: i64 = 20_000;

fn run(s: &mut Session<'_>, sql: &str) -> Vec<Vec<Value>> {
    let mut c = CollectSink::default();
    s.query(sql, &mut c)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    c.rows
}

fn page_requests(db: &Db) -> u64 {
    db.stat("Innodb_buffer_pool_read_requests")
        .expect("Innodb_buffer_pool_read_requests")
}

/// Runs `sql` and returns (rows, page requests it made).
fn measured(db: &Db, s: &mut Session<'_>, sql: &str) -> (Vec<Vec<Value>>, u64) {
    let before = page_requests(db);
    let rows = run(s, sql);
    (rows, page_requests(db) - before)
}

#[test]
fn a_join_on_an_indexed_column_reads_by_lookups_and_an_unindexed_one_reads_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut config = Config::default();
    for (k, v) in [
        ("innodb_buffer_pool_size", "64M"),
        ("innodb_log_file_size", "64M"),
        ("innodb_flush_log_at_trx_commit", "2"),
        // No background purge reading pages while we count.
        ("innodb_purge_threads", "0"),
    ] {
        config.set(k, v).expect("setting");
    }
    let db = Db::open(dir.path(), config).expect("open");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        run(&mut s, "CREATE DATABASE big");
        run(&mut s, "USE big");
        run(
            &mut s,
            "CREATE TABLE o (id INT PRIMARY KEY, k INT, pad VARCHAR(40))",
        );
        run(
            &mut s,
            "CREATE TABLE i (id INT PRIMARY KEY, k INT, pad VARCHAR(40), KEY k (k))",
        );
        run(
            &mut s,
            "CREATE TABLE u (id INT PRIMARY KEY, k INT, pad VARCHAR(40))",
        );
        for t in ["o", "i", "u"] {
            // k is a permutation of the ids: every row has exactly one partner.
            run(
                &mut s,
                &format!(
                    "INSERT INTO {t} SELECT seq, ({ROWS} + 1 - seq), REPEAT('x', 40) FROM seq_1_to_{ROWS}"
                ),
            );
        }

        let indexed = "SELECT COUNT(*), SUM(i.id) FROM o JOIN i ON i.k = o.k";
        let plan = run(&mut s, &format!("EXPLAIN {indexed}"));
        assert_eq!(plan[1][2], Value::Str("i".into()));
        assert_eq!(plan[1][3], Value::Str("ref".into()));
        assert_eq!(plan[1][5], Value::Str("k".into()));
        let (rows, requests) = measured(&db, &mut s, indexed);
        let sum = ROWS * (ROWS + 1) / 2;
        assert_eq!(
            rows,
            vec![vec![
                Value::Int(ROWS),
                Value::Decimal(Decimal::new(i128::from(sum), 0))
            ]]
        );
        assert!(
            requests >= ROWS as u64,
            "{requests} page requests for {ROWS} lookups"
        );

        let unindexed = "SELECT COUNT(*), SUM(u.id) FROM o JOIN u ON u.k = o.k";
        let plan = run(&mut s, &format!("EXPLAIN {unindexed}"));
        assert!(matches!(&plan[1][9], Value::Str(e) if e.contains("join buffer")));
        // A buffer that holds the inner table: each table is read once.
        run(&mut s, "SET SESSION join_buffer_size = 16777216");
        let (rows, once) = measured(&db, &mut s, unindexed);
        assert_eq!(
            rows,
            vec![vec![
                Value::Int(ROWS),
                Value::Decimal(Decimal::new(i128::from(sum), 0))
            ]]
        );
        assert!(
            once < ROWS as u64 / 10,
            "{once} page requests to read two tables once"
        );

        // ORDER BY the outer table's primary key with LIMIT stops after a few lookups.
        let first = "SELECT o.id, i.id FROM o JOIN i ON i.k = o.k ORDER BY o.id LIMIT 5";
        let (rows, few) = measured(&db, &mut s, first);
        assert_eq!(rows.len(), 5);
        assert_eq!(rows[0], vec![Value::Int(1), Value::Int(1)]);
        assert!(few < 200, "{few} page requests for 5 rows");
    }
    db.shutdown().expect("shutdown");
}
