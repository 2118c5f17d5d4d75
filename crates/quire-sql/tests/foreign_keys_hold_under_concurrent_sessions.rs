//! Foreign keys under concurrency, through SQL: sessions delete and re-insert parent rows
//! while other sessions insert child rows (in transactions that also read and change
//! other rows), with each ON DELETE action; no child row is ever left without its parent,
//! as `Db::check` (and `quire check`) verify at the end (docs/catalog.md, "Foreign keys").

// SqlError is what the session returns; the tests pass it on as is.
#![allow(clippy::result_large_err)]

mod common;

use std::sync::atomic::{AtomicI64, Ordering};

use common::{run as ok, session_in_d, small_config, try_run as q, with_database_d};
use quire_sql::{SqlError, Value};

const PARENTS: i64 = 30;
const ROUNDS: i64 = 150;

/// The errors a statement of this workload may meet and go on from: no parent (1452), a
/// parent with children (1451), a duplicate (1062), a lock wait timeout (1205) or a
/// deadlock (1213, which rolled the transaction back).
fn expected(e: &SqlError) -> bool {
    let text = e.to_string();
    [
        "Cannot add or update a child row",
        "Cannot delete or update a parent row",
        "Duplicate entry",
        "Lock wait timeout exceeded",
        "Deadlock found",
    ]
    .iter()
    .any(|t| text.contains(t))
}

#[test]
fn no_child_row_outlives_its_parent_under_concurrent_sessions() {
    for action in ["CASCADE", "RESTRICT", "SET NULL"] {
        // `with_database_d` checks the tables (`Db::check`) at the end.
        eprintln!("ON DELETE {action}");
        with_database_d(small_config(), |inst, s| {
            ok(s, "CREATE TABLE p (id INT PRIMARY KEY, v INT)");
            ok(
                s,
                &format!(
                    "CREATE TABLE c (id INT PRIMARY KEY, pid INT, \
                     FOREIGN KEY (pid) REFERENCES p (id) ON DELETE {action})"
                ),
            );
            let values: Vec<String> = (1..=PARENTS).map(|i| format!("({i}, 0)")).collect();
            ok(s, &format!("INSERT INTO p VALUES {}", values.join(",")));
            let next = AtomicI64::new(1);
            let inserted = std::thread::scope(|sc| {
                let children: Vec<_> = (0..2i64)
                    .map(|w| {
                        let next = &next;
                        sc.spawn(move || {
                            let mut s = session_in_d(inst);
                            ok(&mut s, "SET innodb_lock_wait_timeout = 1");
                            let mut n = 0;
                            for i in 0..ROUNDS {
                                let pid = (i * 7 + w * 11) % PARENTS + 1;
                                let id = next.fetch_add(1, Ordering::Relaxed);
                                ok(&mut s, "START TRANSACTION");
                                let r = q(&mut s, &format!("INSERT INTO c VALUES ({id}, {pid})"));
                                match &r {
                                    Ok(_) => n += 1,
                                    Err(e) if expected(e) => {}
                                    Err(e) => panic!("child insert: {e}"),
                                }
                                if i % 4 == 0 {
                                    if let Err(e) = q(
                                        &mut s,
                                        &format!("UPDATE p SET v = v + 1 WHERE id = {pid}"),
                                    ) {
                                        assert!(expected(&e), "parent update: {e}");
                                    }
                                }
                                let _ = q(&mut s, "COMMIT");
                            }
                            n
                        })
                    })
                    .collect();
                let parents: Vec<_> = (0..2i64)
                    .map(|w| {
                        sc.spawn(move || {
                            let mut s = session_in_d(inst);
                            ok(&mut s, "SET innodb_lock_wait_timeout = 1");
                            for i in 0..ROUNDS {
                                let pid = (i * 5 + w * 3) % PARENTS + 1;
                                let sql = if i % 3 == 2 {
                                    format!("INSERT INTO p VALUES ({pid}, 0)")
                                } else {
                                    format!("DELETE FROM p WHERE id = {pid}")
                                };
                                if let Err(e) = q(&mut s, &sql) {
                                    assert!(expected(&e), "{sql}: {e}");
                                }
                            }
                        })
                    })
                    .collect();
                for h in parents {
                    h.join().expect("parent session");
                }
                children
                    .into_iter()
                    .map(|h| h.join().expect("child session"))
                    .sum::<i64>()
            });
            assert!(inserted > 0, "{action}: no child row was ever inserted");
            // Through SQL too: no child names a missing parent.
            assert_eq!(
                ok(
                    s,
                    "SELECT COUNT(*) FROM c LEFT JOIN p ON p.id = c.pid \
                     WHERE c.pid IS NOT NULL AND p.id IS NULL"
                ),
                vec![vec![Value::Int(0)]],
                "{action}"
            );
        });
    }
}
