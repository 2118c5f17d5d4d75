//! Table statistics (docs/sql.md, "Statistics"): information_schema.TABLES' TABLE_ROWS and
//! sizes, STATISTICS' and SHOW INDEX's CARDINALITY, sampled from the trees when asked.
//! A table of a few leaves is read whole and its numbers are exact; a larger one is
//! sampled, and its estimates stay near the truth; rows deleted but not yet purged are not
//! counted.

mod common;

use common::{int, run};
use quire_io::sim::SimVfs;
use quire_sql::{Instance, Session, Value};

fn table_rows(s: &mut Session<'_>) -> i64 {
    int(&run(
        s,
        "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'd' \
         AND TABLE_NAME = 't'",
    )[0][0])
}

/// (index, seq, cardinality) from information_schema.STATISTICS, checked equal to SHOW
/// INDEX's.
fn cardinality(s: &mut Session<'_>) -> Vec<(String, i64, i64)> {
    let rows = run(
        s,
        "SELECT INDEX_NAME, SEQ_IN_INDEX, CARDINALITY FROM information_schema.STATISTICS \
         WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = 't' ORDER BY INDEX_NAME, SEQ_IN_INDEX",
    );
    let mut got: Vec<(String, i64, i64)> = rows
        .iter()
        .map(|r| {
            let Value::Str(n) = &r[0] else {
                panic!("index name {r:?}")
            };
            (n.clone(), int(&r[1]), int(&r[2]))
        })
        .collect();
    got.sort();
    let mut shown: Vec<(String, i64, i64)> = run(s, "SHOW INDEX FROM t")
        .iter()
        .map(|r| {
            let Value::Str(n) = &r[2] else {
                panic!("key name {r:?}")
            };
            (n.clone(), int(&r[3]), int(&r[6]))
        })
        .collect();
    shown.sort();
    assert_eq!(
        shown, got,
        "SHOW INDEX and information_schema.STATISTICS differ"
    );
    got
}

fn card(c: &[(String, i64, i64)], index: &str, seq: i64) -> i64 {
    c.iter()
        .find(|(n, s, _)| n == index && *s == seq)
        .map(|x| x.2)
        .unwrap_or_else(|| panic!("no {index} {seq} in {c:?}"))
}

fn near(got: i64, want: i64, what: &str) {
    let (lo, hi) = (want * 4 / 5, want * 6 / 5);
    assert!(
        (lo..=hi).contains(&got),
        "{what}: {got} is not within 20% of {want}"
    );
}

/// Inserts rows `from..to` of (id, a = id % 10, b = 'v' || id % 100).
fn fill(s: &mut Session<'_>, from: i64, to: i64) {
    let mut k = from;
    while k < to {
        let end = (k + 500).min(to);
        let rows: Vec<String> = (k..end)
            .map(|n| format!("({n}, {}, 'v{}')", n % 10, n % 100))
            .collect();
        run(s, &format!("INSERT INTO t VALUES {}", rows.join(", ")));
        k = end;
    }
}

#[test]
fn small_tables_are_exact_and_large_ones_estimated_near_the_truth() {
    let vfs = SimVfs::new(11);
    // No purge: deleted rows stay delete-marked, and must not be counted.
    let db = common::open(&vfs, common::sim_config(256, 4 << 20, false)).expect("open");
    let inst = Instance::new(&db);
    let mut s = inst.session("root", "localhost");
    run(&mut s, "CREATE DATABASE d");
    run(&mut s, "USE d");
    run(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(20), KEY ka (a), KEY kab (a, b))",
    );
    assert_eq!(table_rows(&mut s), 0);
    fill(&mut s, 0, 1000);
    // Small: read whole, exact.
    let st = db
        .table("d", "t")
        .expect("t")
        .statistics()
        .expect("statistics");
    assert!(st.exact, "1000 rows should fit in a few leaves: {st:?}");
    assert_eq!(table_rows(&mut s), 1000);
    let c = cardinality(&mut s);
    assert_eq!(card(&c, "PRIMARY", 1), 1000);
    assert_eq!(card(&c, "ka", 1), 10);
    assert_eq!(card(&c, "kab", 1), 10);
    assert_eq!(card(&c, "kab", 2), 100);

    // Large: sampled (more leaves than the sample), near the truth.
    fill(&mut s, 1000, 40_000);
    let st = db
        .table("d", "t")
        .expect("t")
        .statistics()
        .expect("statistics");
    assert!(!st.exact, "40000 rows in 4 KiB pages should be sampled");
    near(table_rows(&mut s), 40_000, "TABLE_ROWS");
    let c = cardinality(&mut s);
    near(card(&c, "PRIMARY", 1), 40_000, "PRIMARY");
    // Distinct values from 20 leaves are noisy where a value spans a few leaves (as
    // InnoDB's sampled n_diff is): within a factor of two.
    let a = card(&c, "ka", 1);
    assert!((10..=20).contains(&a), "ka: {a} for 10 values");
    let ab = card(&c, "kab", 2);
    assert!((50..=200).contains(&ab), "kab (a, b): {ab} for 100 values");
    let sizes = run(
        &mut s,
        "SELECT DATA_LENGTH, INDEX_LENGTH, AVG_ROW_LENGTH FROM information_schema.TABLES \
         WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = 't'",
    );
    let (data, index, avg) = (int(&sizes[0][0]), int(&sizes[0][1]), int(&sizes[0][2]));
    assert!(data >= 40_000 * 10 && index > 0 && avg > 0, "{sizes:?}");

    // Deleted, not yet purged: not counted.
    run(&mut s, "DELETE FROM t WHERE id >= 20000");
    near(table_rows(&mut s), 20_000, "TABLE_ROWS after the delete");
    drop(s);
    drop(inst);
    db.shutdown().expect("shutdown");
}
