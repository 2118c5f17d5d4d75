//! A TIMESTAMP is kept in UTC: written under one session time zone, it reads back as the
//! same instant under another, after a restart too, by a scan, by its index and by its
//! primary key; a DATETIME keeps what was written (docs/sql.md, "Time zones").

mod common;

use common::{run, try_run};
use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_sql::{Instance, SqlError, Value};

fn texts(rows: Vec<Vec<Value>>) -> Vec<Vec<String>> {
    rows.into_iter()
        .map(|r| {
            r.into_iter()
                .map(|v| match v {
                    Value::Null => "NULL".to_string(),
                    Value::Str(s) => s,
                    Value::Int(i) => i.to_string(),
                    Value::UInt(u) => u.to_string(),
                    other => format!("{other:?}"),
                })
                .collect()
        })
        .collect()
}

const READ: &str = "SELECT id, CAST(ts AS CHAR), CAST(dt AS CHAR), UNIX_TIMESTAMP(ts), \
                    CAST(fixed AS CHAR) FROM t ORDER BY id";

#[test]
fn a_timestamp_written_at_plus_0530_reads_back_at_minus_0800_after_a_restart() {
    let dir = tempfile::tempdir().expect("tmp");
    {
        let db = Db::open(dir.path(), Config::default()).expect("open");
        {
            let inst = Instance::new(&db);
            let mut s = inst.session("root", "localhost");
            run(&mut s, "CREATE DATABASE a");
            run(&mut s, "USE a");
            run(&mut s, "SET time_zone = '+05:30'");
            run(
                &mut s,
                "CREATE TABLE t (id INT PRIMARY KEY, ts TIMESTAMP NULL, dt DATETIME NULL, \
                 fixed TIMESTAMP NOT NULL DEFAULT '2001-01-01 05:30:00', KEY (ts))",
            );
            run(
                &mut s,
                "INSERT INTO t (id, ts, dt) VALUES (1, '2024-03-10 12:00:00', \
                 '2024-03-10 12:00:00'), (2, 0, NULL)",
            );
            run(
                &mut s,
                "CREATE TABLE k (ts TIMESTAMP NOT NULL PRIMARY KEY, v INT)",
            );
            run(&mut s, "INSERT INTO k VALUES ('2024-06-01 10:00:00', 1)");
            assert_eq!(
                texts(run(&mut s, READ)),
                vec![
                    vec![
                        "1",
                        "2024-03-10 12:00:00",
                        "2024-03-10 12:00:00",
                        "1710052200",
                        "2001-01-01 05:30:00"
                    ],
                    vec![
                        "2",
                        "0000-00-00 00:00:00",
                        "NULL",
                        "0",
                        "2001-01-01 05:30:00"
                    ],
                ]
            );
        }
        db.shutdown().expect("shutdown");
    }
    let db = Db::open(dir.path(), Config::default()).expect("reopen");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        run(&mut s, "USE a");
        run(&mut s, "SET time_zone = '-08:00'");
        assert_eq!(
            texts(run(&mut s, READ)),
            vec![
                vec![
                    "1",
                    "2024-03-09 22:30:00",
                    "2024-03-10 12:00:00",
                    "1710052200",
                    "2000-12-31 16:00:00"
                ],
                vec![
                    "2",
                    "0000-00-00 00:00:00",
                    "NULL",
                    "0",
                    "2000-12-31 16:00:00"
                ],
            ]
        );
        // The literal is converted, not the stored value misread: by the index on ts and
        // by a TIMESTAMP primary key.
        assert_eq!(
            texts(run(
                &mut s,
                "SELECT id FROM t FORCE INDEX (ts) WHERE ts = '2024-03-09 22:30:00'"
            )),
            vec![vec!["1"]]
        );
        assert_eq!(
            texts(run(
                &mut s,
                "SELECT id FROM t FORCE INDEX (ts) WHERE ts > '2024-03-09 22:29:59' \
                 AND ts < '2024-03-09 22:30:01'"
            )),
            vec![vec!["1"]]
        );
        assert_eq!(
            texts(run(
                &mut s,
                "SELECT v FROM k WHERE ts = '2024-05-31 20:30:00'"
            )),
            vec![vec!["1"]]
        );
        // A row read and written back under the other zone keeps its instant.
        run(
            &mut s,
            "UPDATE t SET dt = '2024-03-10 12:00:01' WHERE id = 1",
        );
        run(
            &mut s,
            "UPDATE k SET v = 2 WHERE ts = '2024-05-31 20:30:00'",
        );
        run(&mut s, "SET time_zone = '+00:00'");
        assert_eq!(
            texts(run(
                &mut s,
                "SELECT CAST(ts AS CHAR), UNIX_TIMESTAMP(ts) FROM t WHERE id = 1"
            )),
            vec![vec!["2024-03-10 06:30:00", "1710052200"]]
        );
        assert_eq!(
            texts(run(&mut s, "SELECT CAST(ts AS CHAR), v FROM k")),
            vec![vec!["2024-06-01 04:30:00", "2"]]
        );
        // Out of MariaDB's range: 1298, and the zone is left as it was.
        assert!(matches!(
            try_run(&mut s, "SET time_zone = '+15:00'"),
            Err(SqlError::UnknownTimeZone(_))
        ));
        assert_eq!(
            texts(run(&mut s, "SELECT @@time_zone")),
            vec![vec!["+00:00"]]
        );
    }
    db.shutdown().expect("shutdown");
}
