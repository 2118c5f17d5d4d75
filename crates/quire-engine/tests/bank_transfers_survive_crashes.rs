//! Bank transfers under crashes: threads move money between accounts in transactions,
//! some rolled back on purpose, while the simulated machine crashes at a random I/O step.
//! After each recovery (and the background rollback of what was in flight):
//! - the total is unchanged;
//! - every acknowledged commit is present (each transfer also inserts its own row into a
//!   journal table, in the same transaction);
//! - no rolled-back transfer is visible (its journal id never appears);
//! - every balance is exactly the initial one plus the journal's transfers;
//! - `Db::check` is clean.
//!
//! `QUIRE_BANK_CRASH_ITERS` sets the number of crashes (default 12; the long stress run in
//! the README uses more); `QUIRE_BANK_CRASH_FIRST` the first seed (default 1000);
//! `QUIRE_BANK_TRACE=DIR` keeps the engine's trace events (page writes, log writes and
//! syncs, checkpoints, recovery's page applies) of each iteration and writes them to
//! `DIR/bank-trace-SEED.log` when the iteration fails.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::path::Path;
use std::sync::{Arc, Mutex};

use quire_engine::btree::Direction;
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, DbError, IndexSpec, TableSpec};
use quire_engine::trx::Isolation;
use quire_io::sim::{CrashMode, SimVfs};
use quire_io::Vfs;

/// The trace events of the current iteration (`QUIRE_BANK_TRACE`).
static TRACE: Mutex<Vec<u8>> = Mutex::new(Vec::new());

struct TraceWriter;
impl std::io::Write for TraceWriter {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        TRACE.lock().expect("trace").extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Installs the trace subscriber if `QUIRE_BANK_TRACE` names a directory.
fn trace_dir() -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("QUIRE_BANK_TRACE")?;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("quire=trace"))
        .with_writer(|| TraceWriter)
        .with_ansi(false)
        .without_time()
        .try_init();
    Some(dir.into())
}

/// Writes the iteration's trace to a file if the iteration fails (panics).
struct TraceOnFailure(Option<std::path::PathBuf>);
impl Drop for TraceOnFailure {
    fn drop(&mut self) {
        if let Some(path) = &self.0 {
            if std::thread::panicking() {
                let trace = TRACE.lock().map(|t| t.clone()).unwrap_or_default();
                let _ = std::fs::write(path, trace);
                eprintln!("trace written to {}", path.display());
            }
        }
    }
}

const ACCOUNTS: i64 = 8;
const INITIAL: i64 = 1000;
const THREADS: u64 = 4;

fn open(vfs: &SimVfs) -> Result<Db, DbError> {
    let mut config = common::small_config();
    config.lock_wait_timeout_ms = 2000;
    Db::open_with(
        Arc::new(vfs.clone()) as Arc<dyn Vfs>,
        Path::new(common::DIR),
        config,
    )
}

fn int() -> ColumnType {
    ColumnType::Int {
        width: IntWidth::Big,
        unsigned: false,
    }
}

fn setup(db: &Db) -> Result<(), DbError> {
    db.create_database("bank")?;
    let mut acc = TableSpec::new(
        vec![Column::new("id", int()), Column::new("balance", int())],
        vec![0],
    );
    acc.indexes.push(IndexSpec::new("by_balance", vec![1]));
    let accounts = db.create_table("bank", "accounts", acc)?;
    let journal = TableSpec::new(
        vec![
            Column::new("id", int()),
            Column::new("src", int()),
            Column::new("dst", int()),
            Column::new("amount", int()),
        ],
        vec![0],
    );
    db.create_table("bank", "journal", journal)?;
    let mut tx = db.begin(Isolation::RepeatableRead)?;
    for a in 0..ACCOUNTS {
        tx.insert(&accounts, vec![Value::Int(a), Value::Int(INITIAL)])?;
    }
    tx.commit()
}

/// A small deterministic generator per thread.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[derive(Default)]
struct Outcome {
    acked: BTreeSet<i64>,
    rolled_back: BTreeSet<i64>,
}

/// One transfer; `Ok(true)` if it committed.
fn transfer(
    db: &Db,
    id: i64,
    src: i64,
    dst: i64,
    amount: i64,
    abort: bool,
) -> Result<bool, DbError> {
    let accounts = db.table("bank", "accounts")?;
    let journal = db.table("bank", "journal")?;
    let mut tx = db.begin(Isolation::RepeatableRead)?;
    let add = |d: i64| {
        move |row: &mut Vec<Value>| {
            if let Value::Int(b) = &mut row[1] {
                *b += d;
            }
        }
    };
    // Lock in id order: deadlocks stay possible only through the journal-free paths.
    tx.update_with(&accounts, &[Value::Int(src)], add(-amount))?;
    tx.update_with(&accounts, &[Value::Int(dst)], add(amount))?;
    tx.insert(
        &journal,
        vec![
            Value::Int(id),
            Value::Int(src),
            Value::Int(dst),
            Value::Int(amount),
        ],
    )?;
    if abort {
        tx.rollback()?;
        return Ok(false);
    }
    tx.commit()?;
    Ok(true)
}

fn workload(db: &Db, vfs: &SimVfs, seed: u64, out: &Mutex<Outcome>) {
    std::thread::scope(|s| {
        for th in 0..THREADS {
            s.spawn(move || {
                let mut rng = Rng(seed.wrapping_mul(31).wrapping_add(th * 7919 + 1) | 1);
                for n in 0..400i64 {
                    if vfs.is_frozen() {
                        return;
                    }
                    let id = th as i64 * 1_000_000 + n;
                    let src = (rng.next() % ACCOUNTS as u64) as i64;
                    let dst = (src + 1 + (rng.next() % (ACCOUNTS as u64 - 1)) as i64) % ACCOUNTS;
                    let amount = (rng.next() % 50) as i64 + 1;
                    let abort = rng.next().is_multiple_of(5);
                    match transfer(db, id, src, dst, amount, abort) {
                        Ok(true) => {
                            if !vfs.is_frozen() {
                                out.lock().expect("outcome").acked.insert(id);
                            }
                        }
                        Ok(false) => {
                            out.lock().expect("outcome").rolled_back.insert(id);
                        }
                        // Deadlock victims and timeouts were rolled back: never visible.
                        Err(DbError::Deadlock | DbError::LockWaitTimeout) => {
                            out.lock().expect("outcome").rolled_back.insert(id);
                        }
                        // The machine is going down (an I/O error after the crash point).
                        Err(_) => return,
                    }
                }
            });
        }
    });
}

/// What `verify` read: the balances and the journal, to compare across a restart.
#[derive(Debug, PartialEq)]
struct Snapshot {
    balances: BTreeMap<i64, i64>,
    journal: BTreeMap<i64, (i64, i64, i64)>,
}

/// How `now` differs from `before` (a restart must change nothing), for the failure message.
fn difference(before: &Snapshot, now: &Snapshot) -> String {
    let lost: Vec<_> = before
        .journal
        .iter()
        .filter(|(id, _)| !now.journal.contains_key(id))
        .collect();
    let gained: Vec<_> = now
        .journal
        .iter()
        .filter(|(id, _)| !before.journal.contains_key(id))
        .collect();
    let changed: Vec<_> = now
        .balances
        .iter()
        .filter(|(a, b)| before.balances.get(a) != Some(b))
        .map(|(a, b)| (a, before.balances.get(a), b))
        .collect();
    format!(
        "journal rows lost {lost:?}, journal rows gained {gained:?}, balances changed (account, before, now) {changed:?}"
    )
}

/// Reads both tables (after the background rollback of recovered transactions).
fn snapshot_of(db: &Db, what: &str) -> Snapshot {
    db.wait_for_recovery();
    let accounts = db.table("bank", "accounts").expect("accounts");
    let journal = db.table("bank", "journal").expect("journal");
    let balances = accounts
        .scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .expect("scan")
        .map(|r| match r.expect("row")[..] {
            [Value::Int(a), Value::Int(b)] => (a, b),
            _ => panic!("{what}: bad account row"),
        })
        .collect();
    let journal = journal
        .scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .expect("scan")
        .map(|r| match r.expect("row")[..] {
            [Value::Int(id), Value::Int(src), Value::Int(dst), Value::Int(amount)] => {
                (id, (src, dst, amount))
            }
            _ => panic!("{what}: bad journal row"),
        })
        .collect();
    Snapshot { balances, journal }
}

fn verify(db: &Db, out: &Outcome, what: &str) -> Snapshot {
    let snap = snapshot_of(db, what);
    // Structural damage explains a wrong answer better than the answer does: check first.
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{what}: {problems:?}");
    assert_eq!(snap.balances.len(), ACCOUNTS as usize, "{what}: accounts");
    let total: i64 = snap.balances.values().sum();
    assert_eq!(
        total,
        ACCOUNTS * INITIAL,
        "{what}: money was created or lost"
    );
    let mut expect: BTreeMap<i64, i64> = (0..ACCOUNTS).map(|a| (a, INITIAL)).collect();
    for (src, dst, amount) in snap.journal.values() {
        *expect.entry(*src).or_default() -= amount;
        *expect.entry(*dst).or_default() += amount;
    }
    let ids: BTreeSet<i64> = snap.journal.keys().copied().collect();
    let lost: Vec<_> = out.acked.difference(&ids).collect();
    assert!(
        lost.is_empty(),
        "{what}: acknowledged commits lost: {lost:?}"
    );
    let undone: Vec<_> = out.rolled_back.intersection(&ids).collect();
    assert!(
        undone.is_empty(),
        "{what}: rolled-back transfers visible: {undone:?}"
    );
    assert_eq!(
        snap.balances, expect,
        "{what}: balances disagree with the journal"
    );
    snap
}

#[test]
fn transfers_keep_the_total_and_every_acknowledged_commit_across_crashes() {
    let iters: u64 = std::env::var("QUIRE_BANK_CRASH_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    // A crash-free run sizes the crash points.
    let vfs = SimVfs::new(7);
    let db = open(&vfs).expect("open");
    setup(&db).expect("setup");
    let base = vfs.op_count();
    let out = Mutex::new(Outcome::default());
    workload(&db, &vfs, 7, &out);
    verify(&db, &out.lock().expect("outcome"), "no crash");
    db.kill();
    let span = vfs.op_count() - base;
    assert!(span > 100, "the workload does I/O");
    let modes = [
        CrashMode::Random,
        CrashMode::DropAll,
        CrashMode::KeepAll,
        CrashMode::TearAll,
    ];
    // `QUIRE_BANK_CRASH_FIRST` starts at another seed (to replay a failure).
    let first: u64 = std::env::var("QUIRE_BANK_CRASH_FIRST")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let trace = trace_dir();
    for i in (first - 1000)..(first - 1000 + iters) {
        let seed = 1000 + i;
        TRACE.lock().expect("trace").clear();
        let _dump = TraceOnFailure(
            trace
                .as_ref()
                .map(|d| d.join(format!("bank-trace-{seed}.log"))),
        );
        let vfs = SimVfs::new(seed);
        let db = open(&vfs).expect("open");
        setup(&db).expect("setup");
        let mut rng = Rng((seed * 2654435761) | 1);
        let point = vfs.set_crash_point_after(rng.next() % span);
        let out = Mutex::new(Outcome::default());
        workload(&db, &vfs, seed, &out);
        db.kill();
        let mode = modes[i as usize % modes.len()];
        let what = format!("seed {seed} point {point} mode {mode:?}");
        tracing::info!(target: "quire::trace", "=== crash ({mode:?}), session 1");
        let img = vfs.crash_with(mode).0;
        let db = open(&img).unwrap_or_else(|e| panic!("{what}: reopen: {e}"));
        let out = out.into_inner().expect("outcome");
        verify(&db, &out, &what);
        // Purge after recovery keeps everything consistent too.
        db.purge_now().expect("purge");
        let purged = verify(&db, &out, &format!("{what}, purged"));
        // And a second crash-free restart changes nothing.
        db.kill();
        tracing::info!(target: "quire::trace", "=== kill, session 2");
        let again = img.crash_with(CrashMode::KeepAll).0;
        let db = open(&again).unwrap_or_else(|e| panic!("{what}: second reopen: {e}"));
        let restarted = snapshot_of(&db, &what);
        assert!(
            restarted == purged,
            "{what}: a crash-free restart changed the data: {}",
            difference(&purged, &restarted)
        );
        verify(&db, &out, &format!("{what}, restarted"));
        db.kill();
        eprintln!(
            "{what}: {} acknowledged, {} rolled back",
            out.acked.len(),
            out.rolled_back.len()
        );
    }
}
