//! Functions and casts whose result is a TIME give `Value::Time` values, exactly: the
//! golden script `tests/sql/types_time.test` checks their text and wire types against
//! MariaDB, this file the values the SQL layer hands the server, and CURTIME, which a
//! golden script can only check by properties. It also pins two behaviours of the clock
//! and RAND that a golden script can only test by properties.

// SqlError is what the session returns; the tests pass it on as is.
#![allow(clippy::result_large_err)]

use quire_engine::config::Config;
use quire_engine::row::Time;
use quire_engine::table::Db;
use quire_sql::{CollectSink, Instance, Session, SqlError, Value};

fn q(s: &mut Session<'_>, sql: &str) -> Result<Vec<Vec<Value>>, SqlError> {
    let mut c = CollectSink::default();
    s.query(sql, &mut c).map(|_| c.rows)
}

fn with_session(f: impl FnOnce(&mut Session<'_>)) {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), Config::default()).expect("open");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        q(&mut s, "CREATE DATABASE d").expect("create");
        q(&mut s, "USE d").expect("use");
        f(&mut s);
    }
    db.shutdown().expect("shutdown");
}

fn time(neg: bool, h: i64, m: i64, s: i64, us: i64) -> Value {
    Value::Time(Time::from_parts(neg, h, m, s, us))
}

#[test]
fn time_valued_functions_give_exact_times() {
    with_session(|s| {
        for (sql, want) in [
            (
                "SELECT TIME('2024-01-01 10:11:12')",
                time(false, 10, 11, 12, 0),
            ),
            (
                "SELECT TIMEDIFF('2024-01-01 10:00:00', '2024-01-02 09:00:00.25')",
                time(true, 23, 0, 0, 250_000),
            ),
            ("SELECT SEC_TO_TIME(-3661.5)", time(true, 1, 1, 1, 500_000)),
            ("SELECT SEC_TO_TIME(99999999)", time(false, 838, 59, 59, 0)),
            ("SELECT MAKETIME(100, 2, 3)", time(false, 100, 2, 3, 0)),
            (
                "SELECT CAST('1 02:03:04.5' AS TIME(1))",
                time(false, 26, 3, 4, 500_000),
            ),
            (
                "SELECT CAST('1 02:03:04.5' AS TIME)",
                time(false, 26, 3, 4, 0),
            ),
            (
                "SELECT STR_TO_DATE('09:30:17', '%h:%i:%s')",
                time(false, 9, 30, 17, 0),
            ),
            ("SELECT TIME '-838:59:59'", time(true, 838, 59, 59, 0)),
            (
                "SELECT ADDTIME(TIME '10:00', '-11:00:00.5')",
                time(true, 1, 0, 0, 500_000),
            ),
            (
                "SELECT TIME '10:00' + INTERVAL 1 DAY",
                time(false, 34, 0, 0, 0),
            ),
        ] {
            let rows = q(s, sql).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
            assert_eq!(rows, vec![vec![want]], "{sql}");
        }
    });
}

#[test]
fn curtime_is_the_statements_start_as_a_time() {
    with_session(|s| {
        let rows = q(
            s,
            "SELECT CURTIME(6), TIME(NOW(6)), CURRENT_TIME(), UTC_TIME(3), CURTIME(6) = TIME(NOW(6))",
        )
        .expect("select");
        let r = &rows[0];
        assert_eq!(r[0], r[1], "CURTIME(6) is NOW(6)'s time of day");
        assert_eq!(r[4], Value::Int(1));
        match (&r[0], &r[2], &r[3]) {
            (Value::Time(six), Value::Time(zero), Value::Time(three)) => {
                assert!((0..86_400_000_000).contains(&six.micros));
                assert_eq!(zero.micros, six.micros / 1_000_000 * 1_000_000);
                assert_eq!(three.micros, six.micros / 1_000 * 1_000);
            }
            other => panic!("not TIMEs: {other:?}"),
        }
    });
}

#[test]
fn a_time_column_stores_what_it_is_given_and_orders_by_duration() {
    with_session(|s| {
        q(s, "CREATE TABLE t (id INT PRIMARY KEY, t TIME(2), KEY (t))").expect("create");
        q(
            s,
            "INSERT INTO t VALUES (1, '-1 00:00:00.555'), (2, 123456.789), (3, '00:00:00.01')",
        )
        .expect("insert");
        let rows = q(s, "SELECT t FROM t WHERE t > '-24:00:01' ORDER BY t").expect("select");
        assert_eq!(
            rows,
            vec![
                vec![time(true, 24, 0, 0, 550_000)],
                vec![time(false, 0, 0, 0, 10_000)],
                vec![time(false, 12, 34, 56, 780_000)],
            ]
        );
    });
}

#[test]
fn an_unknown_function_is_1305() {
    with_session(|s| {
        assert!(matches!(
            q(s, "SELECT NO_SUCH_FUNCTION(1)"),
            Err(SqlError::NoSuchFunction(_))
        ));
    });
}

#[test]
fn rand_with_a_constant_seed_gives_mysqls_sequence_across_rows() {
    with_session(|s| {
        q(s, "CREATE TABLE t (id INT PRIMARY KEY)").expect("create");
        q(s, "INSERT INTO t VALUES (1), (2), (3)").expect("insert");
        let rows = q(s, "SELECT RAND(1) FROM t").expect("select");
        // MariaDB 10.11: SELECT RAND(1) FROM seq_1_to_3.
        let want = [
            0.405_403_537_121_977_24,
            0.871_614_180_385_707_1,
            0.141_860_321_296_248_9,
        ];
        let got: Vec<f64> = rows
            .iter()
            .map(|r| match r[0] {
                Value::Double(f) => f,
                ref v => panic!("{v:?}"),
            })
            .collect();
        assert_eq!(got, want);
        // The next statement starts the sequence again.
        let again = q(s, "SELECT RAND(1) FROM t").expect("select");
        assert_eq!(again, rows);
    });
}

#[test]
fn now_is_the_statements_start_everywhere_in_it() {
    with_session(|s| {
        let rows = q(
            s,
            "SELECT NOW() = SYSDATE() OR NOW() <= SYSDATE(), NOW() = CURRENT_TIMESTAMP(), \
             UNIX_TIMESTAMP() = UNIX_TIMESTAMP(NOW()), NOW(6) >= NOW()",
        )
        .expect("select");
        assert_eq!(rows, vec![vec![Value::Int(1); 4]]);
    });
}
