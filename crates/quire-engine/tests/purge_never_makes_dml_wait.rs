//! Purge never makes DML wait (lesson 4, issue 14): it takes no row lock, and every
//! decision it makes is checked again under the latch of the leaf it changes, on the record
//! as it is then. So a session updating a row while purge cleans up after it never waits
//! for a row lock, and the races the row lock used to prevent come out right: a deleted
//! row being inserted again, a secondary entry whose row went back to an old value, BLOB
//! chains, rollbacks in the middle of it all (docs/purge.md).

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use quire_engine::btree::Direction;
use quire_engine::config::Config;
use quire_engine::row::{Column, ColumnType, IntWidth, LobSize, Value};
use quire_engine::table::{Db, IndexSpec, ReadLock, Table, TableSpec};
use quire_engine::trx::Isolation;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn int() -> ColumnType {
    ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    }
}

/// `t (id INT PRIMARY KEY, k INT NOT NULL, doc MEDIUMTEXT NULL, KEY k_1 (k))`.
fn spec() -> TableSpec {
    let mut spec = TableSpec::new(
        vec![
            Column::new("id", int()),
            Column::new("k", int()),
            Column::nullable("doc", ColumnType::Text(LobSize::Medium)),
        ],
        vec![0],
    );
    spec.indexes.push(IndexSpec::new("k_1", vec![1]));
    spec
}

fn row(id: i64, k: i64) -> Vec<Value> {
    vec![Value::Int(id), Value::Int(k), Value::Null]
}

/// A row whose `doc` is long enough to go off-page when `long`: each version then has a
/// BLOB chain of its own, which purge must free exactly once.
fn doc_row(id: i64, k: i64, long: bool) -> Vec<Value> {
    let doc = if long {
        Value::Str(format!("{id}:{k}:").repeat(2000))
    } else {
        Value::Str(format!("{id}:{k}"))
    };
    vec![Value::Int(id), Value::Int(k), doc]
}

fn config(purge_threads: usize) -> Config {
    Config {
        buffer_pool_size: 32 << 20,
        log_file_size: 64 << 20,
        purge_threads,
        ..Config::default()
    }
}

fn open(dir: &std::path::Path, purge_threads: usize) -> Db {
    let db = Db::open(dir, config(purge_threads)).expect("open");
    db.create_database("d").expect("db");
    db.create_table("d", "t", spec()).expect("table");
    db
}

fn stat(db: &Db, name: &str) -> u64 {
    db.stat(name).unwrap_or_else(|| panic!("no counter {name}"))
}

fn k_of(r: &[Value]) -> i64 {
    match r[1] {
        Value::Int(k) => k,
        ref v => panic!("k is {v:?}"),
    }
}

fn rows(t: &Table<'_>) -> BTreeMap<i64, i64> {
    t.scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .expect("scan")
        .map(|r| {
            let r = r.expect("row");
            match r[0] {
                Value::Int(id) => (id, k_of(&r)),
                ref v => panic!("id is {v:?}"),
            }
        })
        .collect()
}

fn assert_clean(db: &Db) {
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "check: {problems:?}");
}

/// The purge seed's shape: one session updates the indexed column of a 1-row table as
/// fast as it can while background purge removes what every update leaves behind. With
/// purge taking each row's X lock "like any writer", the session and purge waited for each
/// other more than once per transaction; now nobody waits.
#[test]
fn one_session_updating_while_purge_runs_never_waits_for_a_row_lock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = config(1);
    cfg.set("innodb_flush_log_at_trx_commit", "2").expect("set");
    let db = Db::open(dir.path(), cfg).expect("open");
    db.create_database("d").expect("db");
    let t = db.create_table("d", "t", spec()).expect("table");
    t.insert(row(1, 0)).expect("insert");
    db.purge_now().expect("purge");
    let waits = stat(&db, "Innodb_row_lock_waits");
    let purged = stat(&db, "quire_purge_trx_purged");
    let start = Instant::now();
    let mut n = 0i64;
    let mut history_max = 0;
    while n < 40_000 && start.elapsed() < Duration::from_secs(4) {
        let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
        tx.update_with(&t, &[Value::Int(1)], |r| r[1] = Value::Int(k_of(r) + 1))
            .expect("update")
            .expect("the row is there");
        tx.commit().expect("commit");
        n += 1;
        if n % 256 == 0 {
            history_max = history_max.max(stat(&db, "Innodb_history_list_length"));
        }
    }
    let purged = stat(&db, "quire_purge_trx_purged") - purged;
    eprintln!(
        "{n} updates in {:.1} s, {purged} purged by the background purge, history max {history_max}",
        start.elapsed().as_secs_f64()
    );
    assert!(
        purged > 100,
        "background purge ran alongside the session ({purged} transactions purged)"
    );
    assert_eq!(
        stat(&db, "Innodb_row_lock_waits") - waits,
        0,
        "the session waited for a row lock: purge fought the workload"
    );
    db.purge_now().expect("purge");
    assert_eq!(rows(&t), BTreeMap::from([(1, n)]));
    assert_eq!(t.index_record_counts("k_1").expect("counts"), (1, 0));
    assert_clean(&db);
    db.shutdown().expect("shutdown");
}

/// Purge does not wait for a row a transaction holds: it purges the older history of that
/// row around the transaction, at once, and no lock wait is counted.
#[test]
fn purge_does_not_wait_for_a_row_a_transaction_holds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(dir.path(), 0);
    let t = db.table("d", "t").expect("table");
    t.insert(row(1, 0)).expect("insert");
    t.update(&[Value::Int(1)], row(1, 1))
        .expect("update k 0 -> 1");
    let mut holder = db.begin(Isolation::RepeatableRead).expect("begin");
    holder
        .update(&t, &[Value::Int(1)], row(1, 2))
        .expect("update k 1 -> 2, kept locked");
    let start = Instant::now();
    assert_eq!(
        db.purge_now().expect("purge"),
        1,
        "the committed update's history"
    );
    let took = start.elapsed();
    assert!(
        took < Duration::from_millis(150),
        "purge waited for the row's lock: {took:?}"
    );
    assert_eq!(stat(&db, "Innodb_row_lock_waits"), 0);
    // (0) went; (1) is marked by the holder, (2) is the holder's.
    assert_eq!(t.index_record_counts("k_1").expect("counts"), (1, 1));
    holder.commit().expect("commit");
    assert_eq!(db.purge_now().expect("purge"), 1);
    assert_eq!(t.index_record_counts("k_1").expect("counts"), (1, 0));
    assert_eq!(rows(&t), BTreeMap::from([(1, 2)]));
    assert_clean(&db);
    db.shutdown().expect("shutdown");
}

/// A deleted row that a transaction is inserting again: purge must neither remove the
/// record under the inserter nor leave it behind. While the inserter is active, the
/// delete's log waits in the history (purge does not wait: the next batch looks again).
/// Committed, the row is the inserter's and the deleted version's entry goes with the
/// purge of the revive; rolled back, the delete mark is back and purge removes the row.
#[test]
fn a_deleted_row_inserted_again_is_left_to_the_inserter_until_it_ends() {
    for commit in [true, false] {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = open(dir.path(), 0);
        let t = db.table("d", "t").expect("table");
        t.insert(doc_row(1, 10, true)).expect("insert");
        t.insert(doc_row(2, 20, false)).expect("insert");
        db.purge_now().expect("purge");
        let space = t.definition().expect("def").space;
        t.delete(&[Value::Int(1)]).expect("delete");

        let mut w = db.begin(Isolation::RepeatableRead).expect("begin");
        w.insert(&t, doc_row(1, 11, true))
            .expect("insert the deleted key again");
        assert_eq!(
            db.purge_now().expect("purge"),
            0,
            "the delete waits for the inserter"
        );
        assert_eq!(stat(&db, "Innodb_history_list_length"), 1);
        assert_eq!(
            t.index_record_counts("PRIMARY").expect("counts"),
            (2, 0),
            "the inserter's record is there"
        );
        if commit {
            w.commit().expect("commit");
        } else {
            w.rollback().expect("rollback");
        }
        let pages_before = db.engine().used_pages(space).expect("pages").len();
        db.purge_now().expect("purge");
        assert_eq!(stat(&db, "Innodb_history_list_length"), 0);
        assert_eq!(stat(&db, "Innodb_row_lock_waits"), 0);
        if commit {
            assert_eq!(rows(&t), BTreeMap::from([(1, 11), (2, 20)]));
            assert_eq!(
                t.get(&[Value::Int(1)]).expect("get"),
                Some(doc_row(1, 11, true))
            );
            assert_eq!(t.index_record_counts("PRIMARY").expect("counts"), (2, 0));
        } else {
            assert_eq!(rows(&t), BTreeMap::from([(2, 20)]));
            assert_eq!(t.index_record_counts("PRIMARY").expect("counts"), (1, 0));
        }
        assert_eq!(
            t.index_record_counts("k_1").expect("counts"),
            (rows(&t).len() as u64, 0),
            "commit={commit}: the deleted version's entry is gone"
        );
        assert!(
            db.engine().used_pages(space).expect("pages").len() < pages_before,
            "commit={commit}: the deleted version's chain was freed"
        );
        assert_clean(&db);
        db.shutdown().expect("shutdown");
    }
}

/// A transaction that only locks a deleted row (FOR UPDATE finds nothing, but keeps the
/// key locked) may still insert it: purge leaves the record until the lock is gone.
#[test]
fn a_locked_deleted_row_waits_for_the_lock_holder() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(dir.path(), 0);
    let t = db.table("d", "t").expect("table");
    t.insert(row(1, 10)).expect("insert");
    t.delete(&[Value::Int(1)]).expect("delete");
    let mut holder = db.begin(Isolation::RepeatableRead).expect("begin");
    assert_eq!(
        holder
            .get_locking(&t, &[Value::Int(1)], ReadLock::Exclusive)
            .expect("lock"),
        None
    );
    assert_eq!(db.purge_now().expect("purge"), 0);
    assert_eq!(t.index_record_counts("PRIMARY").expect("counts"), (0, 1));
    holder.commit().expect("commit");
    assert_eq!(db.purge_now().expect("purge"), 1);
    assert_eq!(t.index_record_counts("PRIMARY").expect("counts"), (0, 0));
    assert_eq!(t.index_record_counts("k_1").expect("counts"), (0, 0));
    assert_eq!(stat(&db, "Innodb_row_lock_waits"), 0);
    assert_clean(&db);
    db.shutdown().expect("shutdown");
}

/// k goes 1 -> 2 -> 1: the second update revives the entry (1) that the first one marked.
/// Purge of the first update must leave the revived entry alone. If the second update is
/// rolled back after purge passed, the revived entry is not marked again for a purge
/// that already went by: no view needs it, so rollback removes it. While an older view
/// still sees k = 1, rollback keeps it (marked), and that view finds the row through it.
#[test]
fn an_entry_whose_row_went_back_to_its_old_value_is_kept_or_cleaned_up_as_views_need() {
    // Committed: (1) is live again, (2) goes.
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(dir.path(), 0);
    let t = db.table("d", "t").expect("table");
    t.insert(row(1, 1)).expect("insert");
    t.update(&[Value::Int(1)], row(1, 2)).expect("1 -> 2");
    let mut w = db.begin(Isolation::RepeatableRead).expect("begin");
    w.update(&t, &[Value::Int(1)], row(1, 1)).expect("2 -> 1");
    assert_eq!(db.purge_now().expect("purge"), 1, "1 -> 2's history");
    assert_eq!(
        t.index_record_counts("k_1").expect("counts"),
        (1, 1),
        "(1) revived by w, (2) marked by w"
    );
    w.commit().expect("commit");
    assert_eq!(db.purge_now().expect("purge"), 1);
    assert_eq!(t.index_record_counts("k_1").expect("counts"), (1, 0));
    assert_eq!(
        t.lookup_index("k_1", &[Value::Int(1)]).expect("lookup"),
        vec![vec![Value::Int(1)]]
    );
    assert_clean(&db);
    db.shutdown().expect("shutdown");

    // Rolled back after purge passed, with no older view: (1) is removed, not re-marked.
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(dir.path(), 0);
    let t = db.table("d", "t").expect("table");
    t.insert(row(1, 1)).expect("insert");
    t.update(&[Value::Int(1)], row(1, 2)).expect("1 -> 2");
    let mut w = db.begin(Isolation::RepeatableRead).expect("begin");
    w.update(&t, &[Value::Int(1)], row(1, 1)).expect("2 -> 1");
    assert_eq!(db.purge_now().expect("purge"), 1);
    w.rollback().expect("rollback");
    assert_eq!(
        t.index_record_counts("k_1").expect("counts"),
        (1, 0),
        "no marked entry left that no purge would look for"
    );
    db.purge_now().expect("purge the rolled-back log");
    assert_eq!(stat(&db, "Innodb_history_list_length"), 0);
    assert_eq!(rows(&t), BTreeMap::from([(1, 2)]));
    assert_clean(&db);
    db.shutdown().expect("shutdown");

    // Rolled back while an older view still sees k = 1: (1) is kept, marked, and found.
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(dir.path(), 0);
    let t = db.table("d", "t").expect("table");
    t.insert(row(1, 1)).expect("insert");
    let mut reader = db.begin(Isolation::RepeatableRead).expect("begin");
    reader.snapshot_now().expect("snapshot");
    t.update(&[Value::Int(1)], row(1, 2)).expect("1 -> 2");
    let mut w = db.begin(Isolation::RepeatableRead).expect("begin");
    w.update(&t, &[Value::Int(1)], row(1, 1)).expect("2 -> 1");
    w.rollback().expect("rollback");
    assert_eq!(t.index_record_counts("k_1").expect("counts"), (1, 1));
    assert_eq!(
        reader
            .lookup_index(&t, "k_1", &[Value::Int(1)])
            .expect("lookup"),
        vec![vec![Value::Int(1)]],
        "the old view finds the row through the entry rollback kept"
    );
    reader.commit().expect("commit");
    db.purge_now().expect("purge");
    assert_eq!(stat(&db, "Innodb_history_list_length"), 0);
    assert_eq!(t.index_record_counts("k_1").expect("counts"), (1, 0));
    assert_clean(&db);
    db.shutdown().expect("shutdown");
}

/// Sessions and background purge racing on the same keys: updates of the indexed column
/// to a few values (entries revived and marked again all the time), deletes and inserts
/// of the same keys, off-page values, rollbacks; one hot row every session increments;
/// and readers checking that each snapshot's index agrees with its rows. At the end every
/// row matches the model, `check` is clean, and once purge has caught up no delete-marked
/// record or entry is left.
#[test]
fn sessions_and_purge_racing_on_the_same_keys_keep_rows_and_indexes_right() {
    let secs: f64 = std::env::var("QUIRE_PURGE_STRESS_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    for purge_threads in [1, 2] {
        stress(purge_threads, secs, 7 + purge_threads as u64);
    }
}

const WRITERS: i64 = 3;
const KEYS: i64 = 12;
const HOT: i64 = 1_000_000;

fn stress(purge_threads: usize, secs: f64, seed: u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = config(purge_threads);
    // Small batches: purge runs often, in between the sessions' steps.
    cfg.purge_batch_size = Some(4);
    cfg.lock_wait_timeout_ms = 10_000;
    let db = Db::open(dir.path(), cfg).expect("open");
    db.create_database("d").expect("db");
    let t = db.create_table("d", "t", spec()).expect("table");
    // The hot row's k stays out of the few values the other rows take.
    t.insert(row(HOT, 1000)).expect("hot row");
    let stop = AtomicBool::new(false);
    let hot_increments = AtomicU64::new(0);
    let reads_checked = AtomicU64::new(0);
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let models: Vec<BTreeMap<i64, (i64, bool)>> = std::thread::scope(|s| {
        let readers: Vec<_> = (0..2)
            .map(|r| {
                let (db, t, stop, checked) = (&db, &t, &stop, &reads_checked);
                s.spawn(move || {
                    let mut rng = StdRng::seed_from_u64(seed * 100 + r);
                    while !stop.load(Ordering::Relaxed) {
                        let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
                        let all: BTreeMap<i64, i64> = tx
                            .scan(t, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
                            .expect("scan")
                            .map(|r| {
                                let r = r.expect("row");
                                match r[0] {
                                    Value::Int(id) => (id, k_of(&r)),
                                    ref v => panic!("id {v:?}"),
                                }
                            })
                            .collect();
                        // The snapshot's index holds exactly its rows, under their k.
                        let mut through_index = BTreeMap::new();
                        for k in 0..4 {
                            for pk in tx.lookup_index(t, "k_1", &[Value::Int(k)]).expect("lookup") {
                                let Value::Int(id) = pk[0] else {
                                    panic!("pk {pk:?}")
                                };
                                assert!(
                                    through_index.insert(id, k).is_none(),
                                    "row {id} under two keys"
                                );
                            }
                        }
                        let small: BTreeMap<i64, i64> = all
                            .iter()
                            .filter(|(id, _)| **id != HOT)
                            .map(|(a, b)| (*a, *b))
                            .collect();
                        assert_eq!(
                            through_index, small,
                            "a snapshot's index disagrees with its rows"
                        );
                        if rng.gen_bool(0.5) {
                            // Read again later in the same snapshot: the same rows.
                            std::thread::sleep(Duration::from_millis(rng.gen_range(0..5)));
                            let id = *all.keys().next().unwrap_or(&HOT);
                            let again =
                                tx.get(t, &[Value::Int(id)]).expect("get").map(|r| k_of(&r));
                            assert_eq!(again, all.get(&id).copied(), "a repeatable read changed");
                        }
                        tx.commit().expect("commit");
                        checked.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (db, t, hot) = (&db, &t, &hot_increments);
                s.spawn(move || writer(db, t, w, seed, deadline, hot))
            })
            .collect();
        let models = writers
            .into_iter()
            .map(|h| h.join().expect("writer"))
            .collect();
        stop.store(true, Ordering::Relaxed);
        for r in readers {
            r.join().expect("reader");
        }
        models
    });
    let mut model: BTreeMap<i64, i64> = BTreeMap::new();
    for m in &models {
        model.extend(m.iter().map(|(id, (k, _))| (*id, *k)));
    }
    model.insert(HOT, 1000 + hot_increments.load(Ordering::Relaxed) as i64);
    eprintln!(
        "purge_threads={purge_threads}: {} commits, {} rollbacks, {} snapshots checked, {} purged, lock waits {}",
        stat(&db, "quire_trx_commits"),
        stat(&db, "quire_trx_rollbacks"),
        reads_checked.load(Ordering::Relaxed),
        stat(&db, "quire_purge_trx_purged"),
        stat(&db, "Innodb_row_lock_waits"),
    );
    assert_eq!(rows(&t), model, "rows against the model");
    for m in &models {
        for (id, (k, long)) in m {
            assert_eq!(
                t.get(&[Value::Int(*id)]).expect("get"),
                Some(doc_row(*id, *k, *long))
            );
        }
    }
    // `check` wants a quiescent database: the background purge may still be catching up.
    db.purge_now().expect("purge");
    assert_eq!(stat(&db, "Innodb_history_list_length"), 0);
    assert_eq!(
        t.index_record_counts("PRIMARY").expect("counts"),
        (model.len() as u64, 0),
        "no delete-marked record left once purge caught up"
    );
    assert_eq!(
        t.index_record_counts("k_1").expect("counts"),
        (model.len() as u64, 0),
        "no delete-marked entry left once purge caught up: none that no purge looks for"
    );
    assert_clean(&db);
    db.shutdown().expect("shutdown");
}

/// One writer: keys `w * 100 .. w * 100 + KEYS` are its own (so its model is exact), and it
/// increments the hot row's k, which every writer shares. Returns its rows: id → (k, long).
fn writer(
    db: &Db,
    t: &Table<'_>,
    w: i64,
    seed: u64,
    deadline: Instant,
    hot: &AtomicU64,
) -> BTreeMap<i64, (i64, bool)> {
    let mut rng = StdRng::seed_from_u64(seed * 1000 + w as u64);
    let mut model: BTreeMap<i64, (i64, bool)> = BTreeMap::new();
    while Instant::now() < deadline {
        let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
        let mut after = model.clone();
        let mut hot_here = 0;
        for _ in 0..rng.gen_range(1..4) {
            let id = w * 100 + rng.gen_range(0..KEYS);
            // A few values of k: entries are revived and marked again all the time.
            let k = rng.gen_range(0..4);
            let long = rng.gen_bool(0.2);
            match (after.contains_key(&id), rng.gen_range(0..10)) {
                (_, 0) => {
                    let r =
                        tx.update_with(t, &[Value::Int(HOT)], |r| r[1] = Value::Int(k_of(r) + 1));
                    match r {
                        Ok(Some(_)) => hot_here += 1,
                        Ok(None) => panic!("the hot row is gone"),
                        Err(quire_engine::table::DbError::Deadlock) => {
                            after = model.clone();
                            hot_here = -1;
                            break;
                        }
                        Err(e) => panic!("hot update: {e}"),
                    }
                }
                (true, 1..=3) => {
                    tx.delete(t, &[Value::Int(id)]).expect("delete");
                    after.remove(&id);
                }
                (true, _) => {
                    tx.update(t, &[Value::Int(id)], doc_row(id, k, long))
                        .expect("update");
                    after.insert(id, (k, long));
                }
                (false, _) => {
                    tx.insert(t, doc_row(id, k, long)).expect("insert");
                    after.insert(id, (k, long));
                }
            }
        }
        if hot_here < 0 {
            // A deadlock on the hot row rolled the whole transaction back.
            let _ = tx.rollback();
            continue;
        }
        if rng.gen_bool(0.25) {
            tx.rollback().expect("rollback");
        } else {
            tx.commit().expect("commit");
            model = after;
            hot.fetch_add(hot_here as u64, Ordering::Relaxed);
        }
    }
    model
}
