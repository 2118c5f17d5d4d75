//! The join order comes from the tables' kept statistics (docs/sql.md, "Statistics" and
//! "Joins"): a small selective table is read first and a big one by index lookups, where
//! the order by access class read the big one whole; ANALYZE TABLE after a large change
//! changes the plan, also of a statement planned before it; past 10 % of changed rows the
//! statistics are recomputed without it (`innodb_stats_auto_recalc`). Rows read are
//! counted (`Rows_examined`), never timed.

use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_sql::{CollectSink, Instance, Session, Value};

fn run(s: &mut Session<'_>, sql: &str) -> Vec<Vec<Value>> {
    let mut c = CollectSink::default();
    s.query(sql, &mut c)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    c.rows
}

fn text(v: &Value) -> String {
    match v {
        Value::Str(x) => x.clone(),
        Value::Null => "NULL".into(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        other => format!("{other:?}"),
    }
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        Value::UInt(u) => *u as i64,
        other => panic!("not an integer: {other:?}"),
    }
}

/// EXPLAIN's (table, type, rows) per table, in join order.
fn explain(s: &mut Session<'_>, sql: &str) -> Vec<(String, String, i64)> {
    run(s, &format!("EXPLAIN {sql}"))
        .iter()
        .map(|r| (text(&r[2]), text(&r[3]), int(&r[8])))
        .collect()
}

fn order(plan: &[(String, String, i64)]) -> Vec<&str> {
    plan.iter().map(|(t, _, _)| t.as_str()).collect()
}

/// Runs `sql`: its one integer, and the rows it read.
fn count(s: &mut Session<'_>, sql: &str) -> (i64, u64) {
    let rows = run(s, sql);
    (int(&rows[0][0]), s.rows_examined())
}

fn open(dir: &std::path::Path) -> Db {
    let mut config = Config::default();
    for (k, v) in [
        ("innodb_buffer_pool_size", "64M"),
        ("innodb_log_file_size", "64M"),
        ("innodb_flush_log_at_trx_commit", "2"),
    ] {
        config.set(k, v).expect("setting");
    }
    Db::open(dir, config).expect("open")
}

#[test]
fn a_small_selective_table_is_read_first_and_a_big_one_by_lookups() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = open(dir.path());
    let inst = Instance::new(&db);
    let mut s = inst.session("root", "localhost");
    run(&mut s, "CREATE DATABASE d");
    run(&mut s, "USE d");
    run(
        &mut s,
        "CREATE TABLE big (id INT PRIMARY KEY, s INT, pad VARCHAR(20), KEY s (s))",
    );
    run(&mut s, "CREATE TABLE small (id INT PRIMARY KEY, x INT)");
    run(
        &mut s,
        "CREATE TABLE mid (id INT PRIMARY KEY, b INT, KEY b (b))",
    );
    run(
        &mut s,
        "INSERT INTO big SELECT seq, seq % 1000, 'xxxxxxxxxx' FROM seq_1_to_20000",
    );
    run(
        &mut s,
        "INSERT INTO small SELECT seq, seq % 3 FROM seq_1_to_10",
    );
    run(
        &mut s,
        "INSERT INTO mid SELECT seq, seq % 1000 FROM seq_1_to_1000",
    );

    // By access class, big came first: from it, small is a unique lookup (eq_ref), which
    // ranked above the index lookup (ref) into big that small first allows; so all
    // 20 000 rows of big were read. By estimates: small (10 rows, 4 kept by x = 1), then
    // 20 rows of big per row of small.
    let q = "SELECT COUNT(*) FROM big JOIN small ON big.s = small.id WHERE small.x = 1";
    let plan = explain(&mut s, q);
    assert_eq!(order(&plan), ["small", "big"], "{plan:?}");
    assert_eq!(plan[0].1, "ALL");
    assert_eq!(plan[0].2, 10, "small's rows: {plan:?}");
    assert_eq!(plan[1].1, "ref");
    assert!(
        (10..=40).contains(&plan[1].2),
        "big's rows per lookup, 20 in truth: {plan:?}"
    );
    let (n, read) = count(&mut s, q);
    assert_eq!(n, 4 * 20);
    assert!(read <= 200, "read {read} rows; big whole is 20 000");

    // Three tables of 20 000, 1 000 and 10 rows: the smallest first, each next one by
    // lookups (the order by class began with big, reached by nothing cheaper).
    let q3 = "SELECT COUNT(*) FROM big JOIN mid ON mid.b = big.s JOIN small ON small.id = big.s \
              WHERE small.x = 1";
    let plan = explain(&mut s, q3);
    assert_eq!(plan[0].0, "small", "{plan:?}");
    assert!(plan[1..].iter().all(|(_, ty, _)| ty != "ALL"), "{plan:?}");
    let (n, read) = count(&mut s, q3);
    assert_eq!(n, 4 * 20);
    assert!(read <= 400, "read {read} rows");

    // A LEFT JOIN keeps its outer table first whatever the sizes.
    let plan = explain(
        &mut s,
        "SELECT COUNT(*) FROM big LEFT JOIN small ON small.id = big.s",
    );
    assert_eq!(order(&plan), ["big", "small"], "{plan:?}");
    assert!((15_000..=25_000).contains(&plan[0].2), "{plan:?}");
}

/// Table `a` of `rows` rows joined with `b` (200 rows, 2 per value of k): which one the
/// plan reads first.
fn first_table(s: &mut Session<'_>) -> String {
    explain(s, JOIN)[0].0.clone()
}

const JOIN: &str = "SELECT COUNT(*) FROM a JOIN b ON a.k = b.k";

#[test]
fn analyze_table_after_a_large_change_changes_the_plan() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = open(dir.path());
    let inst = Instance::new(&db);
    let mut s = inst.session("root", "localhost");
    run(&mut s, "CREATE DATABASE d");
    run(&mut s, "USE d");
    run(
        &mut s,
        "CREATE TABLE a (id INT PRIMARY KEY, k INT, KEY k (k))",
    );
    run(
        &mut s,
        "CREATE TABLE b (id INT PRIMARY KEY, k INT, KEY k (k))",
    );
    run(&mut s, "INSERT INTO a SELECT seq, seq FROM seq_1_to_10");
    run(
        &mut s,
        "INSERT INTO b SELECT seq, seq % 100 FROM seq_1_to_200",
    );
    run(&mut s, "SET GLOBAL innodb_stats_auto_recalc = OFF");

    // a is small: read first, b by lookups. The plan is kept (COM_QUERY's cache).
    assert_eq!(first_table(&mut s), "a");
    let (n, read_small) = count(&mut s, JOIN);
    assert_eq!(n, 20);

    // a grows 2000-fold; without auto-recalculation the kept numbers still say 10 rows.
    run(
        &mut s,
        "INSERT INTO a SELECT seq, seq % 100 FROM seq_11_to_20000",
    );
    assert_eq!(first_table(&mut s), "a");
    let (n, read_stale) = count(&mut s, JOIN);
    // Every value of k has two rows in b.
    assert_eq!(n, 2 * 20_000);
    assert!(read_stale >= 20_000, "a read whole: {read_stale}");

    let r = run(&mut s, "ANALYZE TABLE a");
    assert_eq!(
        r.iter()
            .map(|r| r.iter().map(text).collect::<Vec<_>>())
            .collect::<Vec<_>>(),
        [["d.a", "analyze", "status", "OK"]]
    );
    // Now b (200 rows) comes first and a is looked up; the kept plan of the same text
    // was made again.
    assert_eq!(first_table(&mut s), "b");
    let (n2, read_fresh) = count(&mut s, JOIN);
    assert_eq!(n2, n);
    assert!(
        read_fresh < read_stale,
        "after ANALYZE {read_fresh} rows, before {read_stale}"
    );
    assert!(read_small < read_fresh);

    // A missing table: MariaDB's two rows.
    let r = run(&mut s, "ANALYZE TABLE nosuch");
    assert_eq!(
        r.iter()
            .map(|r| r.iter().map(text).collect::<Vec<_>>())
            .collect::<Vec<_>>(),
        [
            [
                "d.nosuch",
                "analyze",
                "Error",
                "Table 'd.nosuch' doesn't exist"
            ],
            ["d.nosuch", "analyze", "status", "Operation failed"],
        ]
    );
}

fn table_rows(s: &mut Session<'_>, t: &str) -> i64 {
    let r = run(
        s,
        &format!(
            "SELECT TABLE_ROWS FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = '{t}'"
        ),
    );
    int(&r[0][0])
}

#[test]
fn statistics_are_recomputed_once_ten_percent_of_the_rows_changed() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = open(dir.path());
    let inst = Instance::new(&db);
    let mut s = inst.session("root", "localhost");
    run(&mut s, "CREATE DATABASE d");
    run(&mut s, "USE d");
    run(&mut s, "CREATE TABLE c (id INT PRIMARY KEY, v INT)");
    run(&mut s, "INSERT INTO c SELECT seq, seq FROM seq_1_to_1000");
    assert_eq!(table_rows(&mut s, "c"), 1000);
    // 5 %: the kept numbers stand (information_schema reads them, it does not sample).
    run(
        &mut s,
        "INSERT INTO c SELECT seq, seq FROM seq_1001_to_1050",
    );
    assert_eq!(table_rows(&mut s, "c"), 1000);
    // Updates of a column no index holds are not counted (InnoDB's rule).
    run(&mut s, "UPDATE c SET v = v + 1");
    assert_eq!(table_rows(&mut s, "c"), 1000);
    // Past 10 % of 1000: recomputed at the next use.
    run(&mut s, "DELETE FROM c WHERE id > 990");
    assert_eq!(table_rows(&mut s, "c"), 990);

    // DDL starts the numbers again: a new index has its cardinality at once.
    run(&mut s, "CREATE INDEX v ON c (v)");
    let card = run(&mut s, "SHOW INDEX FROM c WHERE Key_name = 'v'");
    assert_eq!(int(&card[0][6]), 990, "{card:?}");

    // A kept join plan follows: a grows past 10 % and the same statement, kept, is
    // planned again with b first.
    run(
        &mut s,
        "CREATE TABLE a (id INT PRIMARY KEY, k INT, KEY k (k))",
    );
    run(
        &mut s,
        "CREATE TABLE b (id INT PRIMARY KEY, k INT, KEY k (k))",
    );
    run(&mut s, "INSERT INTO a SELECT seq, seq FROM seq_1_to_10");
    run(
        &mut s,
        "INSERT INTO b SELECT seq, seq % 100 FROM seq_1_to_200",
    );
    assert_eq!(first_table(&mut s), "a");
    let (_, read_before) = count(&mut s, JOIN);
    run(
        &mut s,
        "INSERT INTO a SELECT seq, seq % 100 FROM seq_11_to_20000",
    );
    let (_, read_after) = count(&mut s, JOIN);
    assert_eq!(first_table(&mut s), "b");
    // a first would read 20 000 rows and 2 per lookup of b (60 000); b first reads 200
    // and 200 per lookup of a.
    assert!(
        read_after <= 41_000,
        "read {read_after} rows (before the growth: {read_before})"
    );
}
