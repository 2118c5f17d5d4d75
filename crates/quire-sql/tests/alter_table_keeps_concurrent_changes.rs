//! ALTER TABLE under concurrent readers and writers: writers wait for a rebuild (the
//! metadata lock), then go on against the new table; nothing they were told succeeded is
//! lost; every read sees the old table or the new one, never a mix.

// SqlError is what the session returns; the tests pass it on as is.
#![allow(clippy::result_large_err)]

mod common;

use std::sync::atomic::{AtomicBool, Ordering};

use common::{int, run as ok, try_run as q};
use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_sql::{Instance, Value};

const ROWS: i64 = 3000;
const WRITERS: i64 = 2;

fn small_config() -> Config {
    let mut c = Config::default();
    for (k, v) in [
        ("innodb_buffer_pool_size", "32M"),
        ("innodb_log_file_size", "32M"),
        ("innodb_log_buffer_size", "1M"),
        ("innodb_flush_log_at_trx_commit", "2"),
    ] {
        c.set(k, v).expect("setting");
    }
    c
}

#[test]
fn writers_wait_for_a_rebuild_and_lose_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), small_config()).expect("open");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        ok(&mut s, "CREATE DATABASE d");
        ok(&mut s, "USE d");
        ok(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
        let values: Vec<String> = (1..=ROWS).map(|i| format!("({i}, {i})")).collect();
        ok(
            &mut s,
            &format!("INSERT INTO t VALUES {}", values.join(",")),
        );
        let stop = AtomicBool::new(false);
        let inserted = std::thread::scope(|sc| {
            let writers: Vec<_> = (0..WRITERS)
                .map(|w| {
                    let (inst, stop) = (&inst, &stop);
                    sc.spawn(move || {
                        let mut s = inst.session("root", "localhost");
                        ok(&mut s, "USE d");
                        let mut acked = Vec::new();
                        let mut k = 0;
                        while !stop.load(Ordering::Acquire) {
                            let id = 100_000 * (w + 1) + k;
                            k += 1;
                            // Named columns: valid before and after the new column.
                            match q(
                                &mut s,
                                &format!("INSERT INTO t (id, v) VALUES ({id}, {id})"),
                            ) {
                                Ok(_) => acked.push(id),
                                Err(e) => panic!("insert {id}: {e}"),
                            }
                            if k % 7 == 0 {
                                let _ = ok(
                                    &mut s,
                                    &format!("UPDATE t SET v = v + 1 WHERE id = {}", k % ROWS + 1),
                                );
                            }
                        }
                        acked
                    })
                })
                .collect();
            let reader = {
                let (inst, stop) = (&inst, &stop);
                sc.spawn(move || {
                    let mut s = inst.session("root", "localhost");
                    ok(&mut s, "USE d");
                    let mut shapes = std::collections::BTreeSet::new();
                    while !stop.load(Ordering::Acquire) {
                        let rows = ok(&mut s, "SELECT * FROM t WHERE id <= 50");
                        assert_eq!(rows.len(), 50);
                        let width = rows[0].len();
                        // One statement sees one definition: every row is as wide.
                        assert!(rows.iter().all(|r| r.len() == width), "mixed rows");
                        if width == 3 {
                            assert!(rows.iter().all(|r| r[2] == Value::Int(7)), "{rows:?}");
                        }
                        shapes.insert(width);
                        let n = int(&ok(&mut s, "SELECT COUNT(*) FROM t")[0][0]);
                        assert!(n >= ROWS, "{n} rows");
                    }
                    shapes
                })
            };
            std::thread::sleep(std::time::Duration::from_millis(300));
            let mut a = inst.session("root", "localhost");
            ok(&mut a, "USE d");
            ok(&mut a, "ALTER TABLE t ADD COLUMN w INT DEFAULT 7");
            std::thread::sleep(std::time::Duration::from_millis(200));
            ok(&mut a, "ALTER TABLE t MODIFY v BIGINT, ALGORITHM=COPY");
            std::thread::sleep(std::time::Duration::from_millis(200));
            stop.store(true, Ordering::Release);
            let shapes = reader.join().expect("reader");
            assert!(shapes.contains(&3), "the reader never saw the new table");
            writers
                .into_iter()
                .flat_map(|w| w.join().expect("writer"))
                .collect::<Vec<i64>>()
        });
        assert!(!inserted.is_empty(), "no writer got through");
        // Every acknowledged insert is there, in the new shape.
        let n = int(&ok(&mut s, "SELECT COUNT(*) FROM t")[0][0]);
        assert_eq!(n, ROWS + inserted.len() as i64);
        for id in &inserted {
            let r = ok(&mut s, &format!("SELECT id, v, w FROM t WHERE id = {id}"));
            assert_eq!(
                r,
                vec![vec![Value::Int(*id), Value::Int(*id), Value::Int(7)]]
            );
        }
        assert_eq!(
            ok(&mut s, "SELECT COUNT(*) FROM t WHERE w IS NULL OR w <> 7"),
            vec![vec![Value::Int(0)]]
        );
        drop(s);
    }
    assert!(db.check().expect("check").is_empty());
    db.shutdown().expect("shutdown");
}
