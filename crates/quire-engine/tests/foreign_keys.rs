//! Foreign keys in the engine (docs/catalog.md, "Foreign keys"): a child insert and a
//! concurrent delete of its parent cannot both commit (the parent lookup is a shared
//! locking read), and cascades are ordinary row changes of their transaction, so they
//! survive a crash when committed and are rolled back with it when not.

use std::ops::Bound;
use std::path::Path;
use std::time::Duration;

use quire_engine::btree::Direction;
use quire_engine::catalog::{FkAction, ForeignKeyDef};
use quire_engine::config::Config;
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, DbError, IndexSpec, TableSpec};
use quire_engine::trx::Isolation;

fn config() -> Config {
    Config {
        buffer_pool_size: 16 << 20,
        log_file_size: 16 << 20,
        purge_threads: 0,
        ..Config::default()
    }
}

const INT: ColumnType = ColumnType::Int {
    width: IntWidth::Int,
    unsigned: false,
};

fn fk(name: &str, parent: &str, on_delete: FkAction) -> ForeignKeyDef {
    ForeignKeyDef {
        child: 0,
        name: name.into(),
        columns: vec!["pid".into()],
        parent_db: "d".into(),
        parent_table: parent.into(),
        parent_columns: vec!["id".into()],
        on_delete,
        on_update: FkAction::Restrict,
    }
}

/// `d.p(id)`, `d.c(id, pid → p.id)` and `d.g(id, pid → c.id)`, with `on_delete` on both
/// constraints; p has 1 and 2, c has 10, 11 → 1 and 20 → 2, g has 100 → 10, 200 → 20.
fn create(dir: &Path, on_delete: FkAction) -> Db {
    let db = Db::open(dir, config()).expect("open");
    db.create_database("d").expect("db");
    let p = db
        .create_table(
            "d",
            "p",
            TableSpec::new(vec![Column::new("id", INT)], vec![0]),
        )
        .expect("p");
    for (name, parent) in [("c", "p"), ("g", "c")] {
        let mut spec = TableSpec::new(
            vec![Column::new("id", INT), Column::nullable("pid", INT)],
            vec![0],
        );
        spec.indexes.push(IndexSpec::new("pid", vec![1]));
        db.create_table_with_foreign_keys(
            "d",
            name,
            spec,
            vec![fk(&format!("{name}_ibfk_1"), parent, on_delete)],
        )
        .expect("child");
    }
    for i in [1, 2] {
        p.insert(vec![Value::Int(i)]).expect("parent row");
    }
    let c = db.table("d", "c").expect("c");
    for (i, pid) in [(10, 1), (11, 1), (20, 2)] {
        c.insert(vec![Value::Int(i), Value::Int(pid)])
            .expect("child row");
    }
    let g = db.table("d", "g").expect("g");
    for (i, pid) in [(100, 10), (200, 20)] {
        g.insert(vec![Value::Int(i), Value::Int(pid)])
            .expect("grandchild row");
    }
    db
}

fn ids(db: &Db, table: &str) -> Vec<i64> {
    let t = db.table("d", table).expect("table");
    t.scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .expect("scan")
        .map(|r| match r.expect("row").first() {
            Some(Value::Int(k)) => *k,
            _ => panic!("bad row"),
        })
        .collect()
}

#[test]
fn a_child_insert_waits_for_a_parent_delete_and_then_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = create(dir.path(), FkAction::Cascade);
    let p = db.table("d", "p").expect("p");
    let c = db.table("d", "c").expect("c");
    let mut deleter = db.begin(Isolation::RepeatableRead).expect("begin");
    deleter.delete(&p, &[Value::Int(1)]).expect("delete parent");
    std::thread::scope(|s| {
        // While the delete is open the insert cannot pass the parent's X lock.
        let mut inserter = db.begin(Isolation::RepeatableRead).expect("begin");
        inserter.set_lock_wait_timeout(Duration::from_millis(300));
        let r = inserter.insert(&c, vec![Value::Int(12), Value::Int(1)]);
        assert!(matches!(r, Err(DbError::LockWaitTimeout)), "{r:?}");
        inserter.rollback().expect("rollback");

        let h = s.spawn(|| {
            let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
            tx.set_lock_wait_timeout(Duration::from_secs(30));
            let r = tx.insert(&c, vec![Value::Int(12), Value::Int(1)]);
            let _ = tx.rollback();
            r
        });
        std::thread::sleep(Duration::from_millis(100));
        deleter.commit().expect("commit delete");
        // Once the delete commits the parent is gone: the insert fails (1452).
        let r = h.join().expect("thread");
        assert!(matches!(r, Err(DbError::NoReferencedRow(_))), "{r:?}");
    });
    assert_eq!(ids(&db, "p"), vec![2]);
    assert_eq!(ids(&db, "c"), vec![20]);
    assert_eq!(ids(&db, "g"), vec![200]);
}

#[test]
fn a_parent_delete_waits_for_a_child_insert_and_then_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = create(dir.path(), FkAction::Restrict);
    let p = db.table("d", "p").expect("p");
    let c = db.table("d", "c").expect("c");
    // Parent 2 loses its only child first, so only the new child can block the delete.
    db.table("d", "g")
        .expect("g")
        .delete(&[Value::Int(200)])
        .expect("g");
    c.delete(&[Value::Int(20)]).expect("c");
    let mut inserter = db.begin(Isolation::RepeatableRead).expect("begin");
    inserter
        .insert(&c, vec![Value::Int(21), Value::Int(2)])
        .expect("child insert S-locks its parent");
    std::thread::scope(|s| {
        let mut deleter = db.begin(Isolation::RepeatableRead).expect("begin");
        deleter.set_lock_wait_timeout(Duration::from_millis(300));
        let r = deleter.delete(&p, &[Value::Int(2)]);
        assert!(matches!(r, Err(DbError::LockWaitTimeout)), "{r:?}");
        deleter.rollback().expect("rollback");

        let h = s.spawn(|| {
            let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
            tx.set_lock_wait_timeout(Duration::from_secs(30));
            let r = tx.delete(&p, &[Value::Int(2)]);
            let _ = tx.rollback();
            r
        });
        std::thread::sleep(Duration::from_millis(100));
        inserter.commit().expect("commit insert");
        let r = h.join().expect("thread");
        assert!(matches!(r, Err(DbError::RowIsReferenced(_))), "{r:?}");
    });
    assert_eq!(ids(&db, "p"), vec![1, 2]);
    assert_eq!(ids(&db, "c"), vec![10, 11, 21]);
}

#[test]
fn checks_off_neither_check_nor_cascade() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = create(dir.path(), FkAction::Cascade);
    let p = db.table("d", "p").expect("p");
    let c = db.table("d", "c").expect("c");
    let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
    tx.set_foreign_key_checks(false);
    tx.insert(&c, vec![Value::Int(30), Value::Int(99)])
        .expect("orphan allowed");
    tx.delete(&p, &[Value::Int(1)]).expect("delete");
    tx.commit().expect("commit");
    assert_eq!(ids(&db, "c"), vec![10, 11, 20, 30]);
    assert!(matches!(
        c.insert(vec![Value::Int(31), Value::Int(98)]),
        Err(DbError::NoReferencedRow(_))
    ));
    // `check` finds the three child rows left without a parent: 10 and 11 (parent 1
    // deleted without its cascade) and 30 (parent 99 never existed).
    let problems = db.check().expect("check");
    assert_eq!(problems.len(), 3, "{problems:?}");
    for (p, want) in problems.iter().zip(["1", "1", "99"]) {
        assert!(
            p.contains("`d`.`c`") && p.contains(&format!("({want}) has no parent row")),
            "{p}"
        );
    }
}

#[test]
fn parents_deleted_while_children_are_inserted_never_leave_an_orphan() {
    for on_delete in [FkAction::Cascade, FkAction::Restrict, FkAction::SetNull] {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = create(dir.path(), on_delete);
        let p = db.table("d", "p").expect("p");
        for i in 3..40 {
            p.insert(vec![Value::Int(i)]).expect("parent");
        }
        let next = std::sync::atomic::AtomicI64::new(1000);
        std::thread::scope(|s| {
            for w in 0..2i64 {
                let (db, next) = (&db, &next);
                // Children of random parents, some in transactions that also delete.
                s.spawn(move || {
                    let c = db.table("d", "c").expect("c");
                    let p = db.table("d", "p").expect("p");
                    for i in 0..300i64 {
                        let pid = (i * 7 + w * 13) % 40 + 1;
                        let id = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
                        tx.set_lock_wait_timeout(Duration::from_millis(200));
                        let r = tx.insert(&c, vec![Value::Int(id), Value::Int(pid)]);
                        match r {
                            Ok(_)
                            | Err(DbError::NoReferencedRow(_))
                            | Err(DbError::LockWaitTimeout)
                            | Err(DbError::Deadlock) => {}
                            Err(e) => panic!("child insert: {e}"),
                        }
                        if i % 3 == 0 {
                            let _ = tx.insert(&p, vec![Value::Int(pid)]);
                        }
                        let _ = tx.commit();
                    }
                    let _ = p;
                });
            }
            for w in 0..2i64 {
                let db = &db;
                // Parents deleted and put back.
                s.spawn(move || {
                    let p = db.table("d", "p").expect("p");
                    for i in 0..300i64 {
                        let pid = (i * 11 + w * 5) % 40 + 1;
                        let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
                        tx.set_lock_wait_timeout(Duration::from_millis(200));
                        let r = if i % 4 == 3 {
                            tx.insert(&p, vec![Value::Int(pid)]).map(|_| ())
                        } else {
                            tx.delete(&p, &[Value::Int(pid)]).map(|_| ())
                        };
                        match r {
                            Ok(())
                            | Err(DbError::RowNotFound)
                            | Err(DbError::DuplicateKey { .. })
                            | Err(DbError::RowIsReferenced(_))
                            | Err(DbError::LockWaitTimeout)
                            | Err(DbError::Deadlock) => {}
                            Err(e) => panic!("parent change: {e}"),
                        }
                        let _ = tx.commit();
                    }
                });
            }
        });
        // Every constraint holds: no child row without its parent.
        let problems = db.check().expect("check");
        assert!(problems.is_empty(), "{on_delete:?}: {problems:?}");
        db.shutdown().expect("shutdown");
    }
}

#[test]
fn cascades_survive_a_crash_and_restart_consistent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = create(dir.path(), FkAction::Cascade);
    let p = db.table("d", "p").expect("p");
    // Committed: parent 1 and, through two levels, its descendants.
    p.delete(&[Value::Int(1)]).expect("cascade delete");
    // Active at the crash: parent 2's cascade must be rolled back whole.
    let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
    tx.delete(&p, &[Value::Int(2)]).expect("cascade delete");
    assert_eq!(
        ids(&db, "c"),
        vec![20],
        "not committed: others still see it"
    );
    // A later commit makes the log durable past the active transaction's changes.
    p.insert(vec![Value::Int(3)]).expect("committed row");
    std::mem::forget(tx);
    db.kill();

    let db = Db::open(dir.path(), config()).expect("reopen");
    db.wait_for_recovery();
    assert_eq!(ids(&db, "p"), vec![2, 3]);
    assert_eq!(ids(&db, "c"), vec![20]);
    assert_eq!(ids(&db, "g"), vec![200]);
    // The constraints came back with the catalog and still act.
    assert_eq!(db.foreign_keys("d", "c").expect("fks").len(), 1);
    assert_eq!(db.referencing("d", "c").len(), 1);
    let p = db.table("d", "p").expect("p");
    p.delete(&[Value::Int(2)]).expect("cascade after restart");
    assert_eq!(ids(&db, "c"), Vec::<i64>::new());
    assert_eq!(ids(&db, "g"), Vec::<i64>::new());
    let c = db.table("d", "c").expect("c");
    assert!(matches!(
        c.insert(vec![Value::Int(40), Value::Int(1)]),
        Err(DbError::NoReferencedRow(_))
    ));
    assert!(db.check().expect("check").is_empty());
}

#[test]
fn dropping_a_child_removes_its_constraints_and_renaming_a_parent_follows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = create(dir.path(), FkAction::Restrict);
    db.rename_table("d", "p", "d", "p2").expect("rename");
    let fks = db.foreign_keys("d", "c").expect("fks");
    assert_eq!(fks[0].parent_table, "p2");
    db.drop_table("d", "g").expect("drop");
    assert!(db.referencing("d", "c").is_empty());
    db.shutdown().expect("shutdown");
    let db = Db::open(dir.path(), config()).expect("reopen");
    assert_eq!(
        db.foreign_keys("d", "c").expect("fks")[0].parent_table,
        "p2"
    );
    assert!(db.referencing("d", "c").is_empty());
}
