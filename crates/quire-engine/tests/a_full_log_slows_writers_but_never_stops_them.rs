//! Issue 14, defect 2: a full redo log must slow writers down, never stop them (lesson 2's
//! "furious flushing" stall, taken to its end: a stall that never ends).
//!
//! 64 threads update rows of one table with a secondary index (sysbench's oltp_update_index
//! shape, with a column whose length changes so that leaves split and merge) against the
//! smallest redo log the engine accepts for its page size, and against the 1 MiB log of the
//! report, so the log fills every few hundred transactions and writers constantly wait for
//! checkpoints. A watchdog fails the test if any thread goes [`STALL`] without finishing a
//! transaction. The stuck threads of a failed run are left behind (the test process ends
//! with them). The two scenarios run one after the other, each with the machine to itself.
//!
//! Before the fix, `free_check` checked for room but reserved none: many mtrs passed it
//! together, overran the log, and one of them then waited for log space in `append` holding
//! the X latch of the page with the oldest modification, which the page cleaner only tries;
//! the checkpoint could never advance again and every thread stopped for good.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quire_engine::config::Config;
use quire_engine::log::LogConfig;
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, DbError, IndexSpec, TableSpec};
use quire_engine::trx::Isolation;
use quire_io::sim::SimVfs;
use quire_io::Vfs;

const THREADS: usize = 64;
const ROWS_PER_THREAD: i64 = 2;
/// How long the updaters run, per scenario.
const RUN: Duration = Duration::from_secs(8);
/// No thread may go this long without committing a transaction.
const STALL: Duration = Duration::from_secs(5);
const PAGE_SIZE: u32 = 16 << 10;

/// The smallest `innodb_log_file_size` the engine accepts for [`PAGE_SIZE`]: its largest
/// frame must hold a root split (`Engine::open` refuses smaller logs; checked below).
fn smallest_log() -> u64 {
    let need = quire_engine::btree::root_split_redo_max(PAGE_SIZE as usize);
    LogConfig::size_for_payload(need).next_multiple_of(4096)
}

fn config(log_file_size: u64, log_buffer_size: u64) -> Config {
    Config {
        page_size: PAGE_SIZE,
        buffer_pool_size: 16 << 20,
        log_file_size,
        log_buffer_size,
        recovery_threads: 2,
        ..Config::default()
    }
}

fn open(vfs: &SimVfs, cfg: Config) -> Result<Db, DbError> {
    Db::open_with(
        Arc::new(vfs.clone()) as Arc<dyn Vfs>,
        Path::new("/data"),
        cfg,
    )
}

fn spec() -> TableSpec {
    let int = ColumnType::Int {
        width: IntWidth::Big,
        unsigned: false,
    };
    let mut spec = TableSpec::new(
        vec![
            Column::new("id", int),
            Column::new("k", int),
            Column::new("c", ColumnType::VarChar { max_chars: 4000 }),
        ],
        vec![0],
    );
    spec.indexes.push(IndexSpec::new("k_1", vec![1]));
    spec
}

/// One scenario at a time: each has 64 threads of its own on a small machine.
static SERIAL: Mutex<()> = Mutex::new(());

#[test]
fn sixty_four_updaters_on_the_smallest_log_all_keep_committing() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let log_size = smallest_log();
    // 256 KiB: the smallest ring whose frames hold a root split too.
    let buffer = 256 << 10;
    assert!(
        open(&SimVfs::new(1), config(log_size - 4096, buffer)).is_err(),
        "a log one block smaller than {log_size} is accepted: the test no longer runs \
         against the smallest log"
    );
    updaters_keep_committing(config(log_size, buffer));
}

/// The configuration of the report (a 1 MiB log, the default 16 MiB buffer): frames may be
/// up to 256 KiB there, so the log keeps an overdraft free for frames that overrun their
/// reservation.
#[test]
fn sixty_four_updaters_on_a_one_mib_log_all_keep_committing() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    updaters_keep_committing(config(1 << 20, 16 << 20));
}

fn updaters_keep_committing(cfg: Config) {
    let log_size = cfg.log_file_size;
    let vfs = SimVfs::new(14);
    let db = Arc::new(open(&vfs, cfg.clone()).expect("open"));
    db.create_database("d").expect("database");
    let t = db.create_table("d", "t", spec()).expect("table");
    let rows = THREADS as i64 * ROWS_PER_THREAD;
    for id in 0..rows {
        t.insert(vec![
            Value::Int(id),
            Value::Int(0),
            Value::Str(format!("{id:0>100}")),
        ])
        .expect("load");
    }
    drop(t);

    let start = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    // Per thread: transactions committed, and when the last one committed (ms after start).
    let done: Arc<Vec<AtomicU64>> = Arc::new((0..THREADS).map(|_| AtomicU64::new(0)).collect());
    let last_ms: Arc<Vec<AtomicU64>> = Arc::new((0..THREADS).map(|_| AtomicU64::new(0)).collect());
    let finished = Arc::new(AtomicU64::new(0));
    let mut handles = Vec::new();
    for th in 0..THREADS {
        let (db, stop, done, last_ms, finished) = (
            db.clone(),
            stop.clone(),
            done.clone(),
            last_ms.clone(),
            finished.clone(),
        );
        let h = std::thread::Builder::new()
            .name(format!("updater-{th}"))
            .spawn(move || {
                let t = db.table("d", "t").expect("table");
                let mut i = 0i64;
                while !stop.load(Ordering::SeqCst) {
                    // Each thread owns its rows (no row lock waits), spread so that every
                    // leaf holds rows of many threads: the leaves' latches are hot.
                    let id = th as i64 + THREADS as i64 * (i % ROWS_PER_THREAD);
                    i += 1;
                    let mut tx = db.begin(Isolation::RepeatableRead).expect("begin");
                    // c changes length too, so leaves split and merge, and its before and
                    // after images make mtrs of a few KiB: 64 of them overran the log.
                    let c_len = (i as usize * 397 + th * 111) % 3000;
                    tx.update_with(&t, &[Value::Int(id)], |row| {
                        if let Value::Int(k) = &mut row[1] {
                            *k += 1;
                        }
                        row[2] = Value::Str("c".repeat(c_len));
                    })
                    .expect("update");
                    tx.commit().expect("commit");
                    done[th].fetch_add(1, Ordering::SeqCst);
                    last_ms[th].store(start.elapsed().as_millis() as u64, Ordering::SeqCst);
                }
                finished.fetch_add(1, Ordering::SeqCst);
            })
            .expect("spawn");
        handles.push(h);
    }

    // The watchdog: every thread must commit at least once every STALL, until the end.
    let log = |db: &Db| {
        let s = db.engine().log().stats();
        format!(
            "checkpoint age {} of {} bytes, log waits {}, checkpoints {}",
            s.checkpoint_age,
            s.capacity,
            s.log_waits,
            db.engine().stat("quire_checkpoints").unwrap_or(0)
        )
    };
    let mut next_report = Duration::from_secs(2);
    // The longest any thread went without a commit, as the watchdog saw it.
    let mut longest_gap = Duration::ZERO;
    while start.elapsed() < RUN || finished.load(Ordering::SeqCst) < THREADS as u64 {
        std::thread::sleep(Duration::from_millis(50));
        let now = start.elapsed();
        if now >= RUN {
            stop.store(true, Ordering::SeqCst);
        }
        if finished.load(Ordering::SeqCst) == 0 {
            for l in last_ms.iter() {
                let gap = now.saturating_sub(Duration::from_millis(l.load(Ordering::SeqCst)));
                longest_gap = longest_gap.max(gap);
            }
        }
        let stalled: Vec<usize> = (0..THREADS)
            .filter(|&th| {
                let last = Duration::from_millis(last_ms[th].load(Ordering::SeqCst));
                // A thread that stopped at the end is not stalled.
                !(stop.load(Ordering::SeqCst) && finished.load(Ordering::SeqCst) == THREADS as u64)
                    && now.saturating_sub(last) > STALL
            })
            .collect();
        if !stalled.is_empty() {
            let total: u64 = done.iter().map(|d| d.load(Ordering::SeqCst)).sum();
            panic!(
                "{} of {THREADS} threads made no progress for {STALL:?} at {now:.1?} \
                 ({total} transactions in all; {}): {stalled:?}",
                stalled.len(),
                log(&db)
            );
        }
        if now >= next_report {
            next_report += Duration::from_secs(2);
            let total: u64 = done.iter().map(|d| d.load(Ordering::SeqCst)).sum();
            eprintln!("{now:.1?}: {total} transactions; {}", log(&db));
        }
    }

    for h in handles {
        h.join().expect("updater");
    }
    let per_thread: Vec<u64> = done.iter().map(|d| d.load(Ordering::SeqCst)).collect();
    let total: u64 = per_thread.iter().sum();
    let s = db.engine().log().stats();
    eprintln!(
        "{total} transactions by {THREADS} threads in {:.1?} against a {log_size}-byte log \
         (min per thread {}, max {}, longest wait for a commit {longest_gap:.1?}); {} log \
         waits, {} checkpoints",
        start.elapsed(),
        per_thread.iter().min().copied().unwrap_or(0),
        per_thread.iter().max().copied().unwrap_or(0),
        s.log_waits,
        db.engine().stat("quire_checkpoints").unwrap_or(0)
    );
    assert!(
        s.log_waits > 0,
        "the log never filled: the test proves nothing"
    );
    // Every mtr of this workload asked for enough: none waited for log space holding a latch.
    assert_eq!(
        s.reservation_overruns, 0,
        "an mtr overran its log reservation"
    );
    // Reopen, with background purge off so that `check` sees still undo logs: every
    // committed update is there (k counts the updates of its row) and the table is sound.
    match Arc::try_unwrap(db) {
        Ok(db) => db.shutdown().expect("shutdown"),
        Err(_) => panic!("an updater still holds the database"),
    }
    let db = open(
        &vfs,
        Config {
            purge_threads: 0,
            ..cfg
        },
    )
    .expect("reopen");
    let t = db.table("d", "t").expect("table");
    for (th, &n) in per_thread.iter().enumerate() {
        let mut sum = 0u64;
        for r in 0..ROWS_PER_THREAD {
            let id = th as i64 + THREADS as i64 * r;
            let row = t.get(&[Value::Int(id)]).expect("get").expect("row");
            let Value::Int(k) = row[1] else {
                panic!("row {id}: k is {:?}", row[1])
            };
            sum += k as u64;
        }
        assert_eq!(sum, n, "thread {th}: k sums to {sum} after {n} updates");
    }
    drop(t);
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    db.shutdown().expect("shutdown");
}
