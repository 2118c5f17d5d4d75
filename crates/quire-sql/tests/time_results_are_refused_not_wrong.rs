//! Quire has no TIME type: a function or cast whose result would be a TIME answers 1235
//! ("doesn't yet support") rather than a value of another type. The golden scripts
//! (`tests/sql/func_*.test`) cannot hold these, since MariaDB answers them; this file does.
//! It also pins two behaviours of the clock and RAND that a golden script can only test by
//! properties.

// SqlError is what the session returns; the tests pass it on as is.
#![allow(clippy::result_large_err)]

use quire_engine::config::Config;
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

#[test]
fn time_valued_functions_answer_1235() {
    with_session(|s| {
        for sql in [
            "SELECT CURTIME()",
            "SELECT CURRENT_TIME()",
            "SELECT TIME('2024-01-01 10:11:12')",
            "SELECT TIMEDIFF('2024-01-01 10:00:00', '2024-01-01 09:00:00')",
            "SELECT SEC_TO_TIME(3600)",
            "SELECT MAKETIME(1, 2, 3)",
            "SELECT CAST('10:11:12' AS TIME)",
            "SELECT STR_TO_DATE('09:30:17', '%h:%i:%s')",
            "SELECT TIME '10:11:12'",
        ] {
            match q(s, sql) {
                Err(SqlError::Unsupported(_)) => {}
                other => panic!("{sql}: expected 1235, got {other:?}"),
            }
        }
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
