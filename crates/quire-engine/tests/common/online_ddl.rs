//! The crash tests of online DDL (`online_index_survives_crashes.rs`,
//! `online_rebuild_survives_crashes.rs`) share this: a table `d.t` of (k, v) with `ROWS`
//! rows, the scripted changes made while the DDL runs (updates, inserts, deletes, a
//! rolled-back transaction, purge), the workload that interleaves them with the DDL's
//! phases, and the loop over every crash point. Each test brings its DDL and what it
//! checks of the recovered table.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, DbError, TableSpec};
use quire_engine::trx::Isolation;
use quire_io::sim::{CrashMode, SimVfs};
use quire_io::Vfs;

pub const ROWS: i64 = 40;

/// k → v of every row.
pub type Rows = BTreeMap<i64, i64>;

/// The workload's step count when the DDL itself was acknowledged.
pub const FINISHED: u32 = 1000;

pub fn open(vfs: &SimVfs) -> Result<Db, DbError> {
    Db::open_with(
        Arc::new(vfs.clone()) as Arc<dyn Vfs>,
        Path::new(super::DIR),
        super::small_config(),
    )
}

pub fn int() -> ColumnType {
    ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    }
}

/// The table before the DDL: (k, v), primary key k.
pub fn spec() -> TableSpec {
    TableSpec::new(
        vec![Column::new("k", int()), Column::new("v", int())],
        vec![0],
    )
}

/// What a workload run acknowledged: (steps, rows after them, the rows the change in
/// flight would have made); see `workload`.
pub type Outcome = (u32, Rows, Rows);

/// The DDL under test, with its conversion (if any) bound in.
pub trait OnlineDdl {
    fn scan(&mut self, progress: &mut dyn FnMut(u64) -> bool) -> Result<(), DbError>;
    fn catch_up(&mut self) -> Result<(), DbError>;
    fn finish(self: Box<Self>) -> Result<(), DbError>;
}

/// The change number `i` made during the DDL, applied to `rows` if it was acknowledged.
pub fn scripted(db: &Db, i: i64, rows: &mut Rows) -> bool {
    let Ok(t) = db.table("d", "t") else {
        return false;
    };
    let k = i % ROWS;
    match i % 5 {
        0 => {
            let ok = t
                .update(&[Value::Int(k)], vec![Value::Int(k), Value::Int(100 + i)])
                .is_ok();
            if ok {
                rows.insert(k, 100 + i);
            }
            ok
        }
        1 => {
            let ok = t
                .insert(vec![Value::Int(1000 + i), Value::Int(i % 3)])
                .is_ok();
            if ok {
                rows.insert(1000 + i, i % 3);
            }
            ok
        }
        2 => {
            let ok = t.delete(&[Value::Int(k)]).is_ok();
            if ok {
                rows.remove(&k);
            }
            ok
        }
        3 => {
            // Rolled back: no change to the rows.
            let Ok(mut tx) = db.begin(Isolation::RepeatableRead) else {
                return false;
            };
            let _ = tx.update(
                &t,
                &[Value::Int(k + 1)],
                vec![Value::Int(k + 1), Value::Int(-1)],
            );
            let _ = tx.insert(&t, vec![Value::Int(5000 + i), Value::Int(-2)]);
            tx.rollback().is_ok()
        }
        _ => db.purge_now().is_ok(),
    }
}

/// Creates the table with its rows, starts the DDL with `begin`, and makes a scripted
/// change every third row of the scan and four more before the catch-up. Steps: 1 the
/// table with its rows; then one per acknowledged change; `FINISHED` when the DDL was
/// acknowledged. Returns (steps, rows after them, the rows the change in flight would
/// have made).
pub fn workload<'d>(
    db: &'d Db,
    alive: &dyn Fn() -> bool,
    begin: &dyn Fn(&'d Db) -> Result<Box<dyn OnlineDdl + 'd>, DbError>,
) -> Outcome {
    let mut rows = Rows::new();
    let setup = db.create_database("d").is_ok()
        && db.create_table("d", "t", spec()).is_ok()
        && (0..ROWS).all(|k| {
            db.table("d", "t")
                .and_then(|t| t.insert(vec![Value::Int(k), Value::Int(k % 3)]))
                .is_ok()
        });
    if !setup || !alive() {
        return (0, rows.clone(), rows);
    }
    for k in 0..ROWS {
        rows.insert(k, k % 3);
    }
    let mut acked = 1;
    let mut in_flight = rows.clone();
    let Ok(mut ddl) = begin(db) else {
        return (acked, rows, in_flight);
    };
    let mut i = 0;
    let mut failed = false;
    let scan = ddl.scan(&mut |n| {
        if failed {
            return false;
        }
        if n % 3 == 0 {
            let mut next = rows.clone();
            let ok = scripted(db, i, &mut next);
            i += 1;
            in_flight = next.clone();
            if ok && alive() {
                rows = next;
                acked += 1;
            } else {
                failed = true;
            }
        }
        true
    });
    if scan.is_err() || failed {
        return (acked, rows, in_flight);
    }
    for _ in 0..4 {
        let mut next = rows.clone();
        let ok = scripted(db, i, &mut next);
        i += 1;
        in_flight = next.clone();
        if !(ok && alive()) {
            return (acked, rows, in_flight);
        }
        rows = next;
        acked += 1;
    }
    if ddl.catch_up().is_err() {
        return (acked, rows.clone(), rows);
    }
    in_flight = rows.clone();
    if ddl.finish().is_ok() && alive() {
        acked = FINISHED;
    }
    (acked, rows, in_flight)
}

/// Runs `run` (a `workload`) once to count its I/O steps, then again with a crash at every
/// step in every crash mode, and hands each crashed image to `check` with what was
/// acknowledged. Points past the last step too: the background threads' I/O varies from
/// run to run, so a run may take more steps than the first one did. Asserts that some
/// crashes fell during the DDL with changes acknowledged and some after it.
pub fn every_crash_point(
    seed: u64,
    run: &dyn Fn(&Db, &dyn Fn() -> bool) -> Outcome,
    table_rows: &dyn Fn(&Db) -> Rows,
    check: &dyn Fn(&SimVfs, u32, &Rows, &Rows, &str),
) {
    let vfs = SimVfs::new(seed);
    let db = open(&vfs).expect("open");
    let (acked, rows, _) = run(&db, &|| true);
    assert_eq!(acked, FINISHED);
    assert_eq!(table_rows(&db), rows);
    db.kill();
    let total = vfs.op_count();
    // (crashes mid-DDL with changes acknowledged, crashes after the DDL acknowledged)
    let mut seen = (0, 0);
    for (point, mode) in (0..=total + total / 4).flat_map(|p| CrashMode::ALL.map(|m| (p, m))) {
        let vfs = SimVfs::new(seed);
        vfs.set_crash_point(point);
        let (acked, rows, in_flight) = match open(&vfs) {
            Ok(db) => {
                let r = run(&db, &|| !vfs.is_frozen());
                db.kill();
                r
            }
            Err(_) => (0, Rows::new(), Rows::new()),
        };
        if acked == FINISHED {
            seen.1 += 1;
        } else if acked > 1 {
            seen.0 += 1;
        }
        check(
            &vfs.crash_with(mode).0,
            acked,
            &rows,
            &in_flight,
            &format!("point {point}/{total} mode {mode:?} acked {acked}"),
        );
    }
    assert!(seen.0 > 0 && seen.1 > 0, "crash points {total}: {seen:?}");
    eprintln!(
        "{total} I/O steps; crashes mid-DDL {}, after it {}",
        seen.0, seen.1
    );
}

/// Opens the crashed image and checks it: `check` finds nothing (`allowed` filters what
/// it may find), and the rows are the acknowledged ones or those of the change in flight.
/// Returns the open database and the rows, or `None` when nothing was acknowledged.
pub fn open_checked(
    img: &SimVfs,
    acked: u32,
    rows: &Rows,
    in_flight: &Rows,
    what: &str,
    allowed: &dyn Fn(&str) -> bool,
    table_rows: &dyn Fn(&Db) -> Rows,
) -> Option<(Db, Rows)> {
    let db = open(img).unwrap_or_else(|e| panic!("{what}: open: {e}"));
    let problems: Vec<String> = db
        .check()
        .unwrap_or_else(|e| panic!("{what}: check: {e}"))
        .into_iter()
        .filter(|p| !allowed(p))
        .collect();
    assert!(problems.is_empty(), "{what}: {problems:?}");
    if acked == 0 {
        db.shutdown().expect("shutdown");
        return None;
    }
    let got = table_rows(&db);
    assert!(
        got == *rows || got == *in_flight,
        "{what}: rows {got:?}, acknowledged {rows:?}"
    );
    Some((db, got))
}
