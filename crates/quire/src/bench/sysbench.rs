//! `quire bench update-index` and `update-non-index`: sysbench's oltp_update_index and
//! oltp_update_non_index shapes through the embedded transaction API. A table
//! `sbtest.sbtest1 (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(120), pad VARCHAR(60))`
//! with an index `k_1` on k holds `--rows` rows; each transaction updates one row chosen at
//! random by primary key, at REPEATABLE READ:
//!
//! - update-index: `UPDATE sbtest1 SET k = k + 1 WHERE id = ?` (the secondary index
//!   changes: an entry is delete-marked and one inserted, which purge must clean up);
//! - update-non-index: `UPDATE sbtest1 SET c = ? WHERE id = ?`.
//!
//! With `--rows 1` this is the purge seed (../shared/seeds/purge-vs-dml-contention.txt):
//! every transaction leaves history behind on the same row. The summary reports
//! `history_max`, the longest history list (sampled every 10 ms), and `lock_waits`, the
//! run's `Innodb_row_lock_waits` (0 with one thread: purge takes no row lock); per-second
//! series of tps, history length, purge batch size and lock waits go to the CSV and plot. Lock waits that end
//! in a deadlock or timeout are counted (`errors=`, `deadlocks=`, `lock_timeouts=`) and the
//! update retried, as a sysbench client does; tps counts committed transactions.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use quire_engine::config::Config;
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, DbError, IndexSpec, TableSpec};
use quire_engine::trx::Isolation;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::runner::{fmt_num, run, RunSpec};

pub const DB: &str = "sbtest";
pub const TABLE: &str = "sbtest1";

pub struct Params<'a> {
    pub workload: &'a str,
    pub rows: u64,
    pub threads: usize,
    pub seconds: f64,
    pub max_txns: Option<u64>,
    pub out_dir: Option<&'a Path>,
}

fn spec() -> TableSpec {
    let int = ColumnType::Int {
        width: IntWidth::Int,
        unsigned: false,
    };
    let mut spec = TableSpec::new(
        vec![
            Column::new("id", int),
            Column::new("k", int),
            Column::new("c", ColumnType::VarChar { max_chars: 120 }),
            Column::new("pad", ColumnType::VarChar { max_chars: 60 }),
        ],
        vec![0],
    );
    spec.indexes.push(IndexSpec::new("k_1", vec![1]));
    spec
}

/// sysbench's strings: groups of 11 digits separated by dashes.
fn sb_string(rng: &mut SmallRng, groups: usize) -> String {
    let mut s = String::with_capacity(groups * 12);
    for g in 0..groups {
        if g > 0 {
            s.push('-');
        }
        for _ in 0..11 {
            s.push(char::from(b'0' + rng.gen_range(0..10u8)));
        }
    }
    s
}

fn err(e: DbError) -> String {
    e.to_string()
}

/// Creates and loads the table unless it is there (a reused `--data-dir`).
fn prepare(db: &Db, rows: u64) -> Result<(), String> {
    if db.table(DB, TABLE).is_ok() {
        return Ok(());
    }
    if !db.databases().iter().any(|d| d == DB) {
        db.create_database(DB).map_err(err)?;
    }
    let t = db.create_table(DB, TABLE, spec()).map_err(err)?;
    let mut rng = SmallRng::seed_from_u64(1);
    let started = Instant::now();
    let mut id = 1u64;
    while id <= rows {
        // Loading in transactions of 1000 rows: one commit wait each.
        let mut tx = db.begin(Isolation::RepeatableRead).map_err(err)?;
        let end = (id + 1000).min(rows + 1);
        for i in id..end {
            let k = rng.gen_range(1..=rows.max(1)) as i64;
            tx.insert(
                &t,
                vec![
                    Value::Int(i as i64),
                    Value::Int(k),
                    Value::Str(sb_string(&mut rng, 10)),
                    Value::Str(sb_string(&mut rng, 5)),
                ],
            )
            .map_err(err)?;
        }
        tx.commit().map_err(err)?;
        id = end;
    }
    eprintln!(
        "loaded {rows} rows in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

pub fn main(
    vfs: Arc<dyn quire_io::Vfs>,
    dir: &Path,
    config: Config,
    p: &Params<'_>,
) -> Result<(), String> {
    let slow_shutdown = config.fast_shutdown == 0;
    let db = Db::open_with(vfs, dir, config.clone()).map_err(err)?;
    prepare(&db, p.rows)?;
    db.purge_now().map_err(err)?;
    let t = db.table(DB, TABLE).map_err(err)?;
    let index = p.workload == "update-index";
    let done = AtomicU64::new(0);
    let deadlocks = AtomicU64::new(0);
    let timeouts = AtomicU64::new(0);
    let history_max = AtomicU64::new(0);
    let rows = p.rows.max(1);
    let txn = |th: usize| -> Result<bool, String> {
        if let Some(max) = p.max_txns {
            if done.fetch_add(1, Ordering::Relaxed) >= max {
                return Ok(false);
            }
        }
        thread_local! {
            static RNG: std::cell::RefCell<Option<SmallRng>> = const { std::cell::RefCell::new(None) };
        }
        let (id, c) = RNG.with(|r| {
            let mut r = r.borrow_mut();
            let rng = r.get_or_insert_with(|| SmallRng::seed_from_u64(th as u64 + 17));
            let id = rng.gen_range(1..=rows) as i64;
            let c = (!index).then(|| sb_string(rng, 10));
            (id, c)
        });
        // A deadlock or lock wait timeout rolls the transaction back: it is counted and the
        // same update retried (as a sysbench client restarts the event), so tps, latency
        // and `--max-txns` count committed transactions only.
        loop {
            let r = (|| -> Result<(), DbError> {
                let mut tx = db.begin(Isolation::RepeatableRead)?;
                tx.update_with(&t, &[Value::Int(id)], |row| {
                    if let Some(c) = &c {
                        row[2] = Value::Str(c.clone());
                    } else if let Value::Int(k) = &mut row[1] {
                        *k += 1;
                    }
                })?;
                tx.commit()
            })();
            match r {
                Ok(()) => return Ok(true),
                Err(DbError::Deadlock) => deadlocks.fetch_add(1, Ordering::Relaxed),
                Err(DbError::LockWaitTimeout) => timeouts.fetch_add(1, Ordering::Relaxed),
                Err(e) => return Err(e.to_string()),
            };
        }
    };
    let waits_before = db.stat("Innodb_row_lock_waits").unwrap_or(0);
    let gauges = || {
        let h = db.history_len();
        history_max.fetch_max(h, Ordering::Relaxed);
        vec![
            ("history", h as f64),
            (
                "purge_batch",
                db.stat("quire_purge_batch_size_effective").unwrap_or(0) as f64,
            ),
            (
                "lock_waits",
                db.stat("Innodb_row_lock_waits")
                    .unwrap_or(0)
                    .saturating_sub(waits_before) as f64,
            ),
        ]
    };
    let before = db.stats();
    let spec = RunSpec {
        workload: p.workload,
        threads: p.threads,
        seconds: p.seconds,
        out_dir: p.out_dir,
    };
    let running = AtomicBool::new(true);
    let r = std::thread::scope(|s| {
        // History between the once-a-second samples: a peak lasts milliseconds.
        s.spawn(|| {
            while running.load(Ordering::Relaxed) {
                history_max.fetch_max(db.history_len(), Ordering::Relaxed);
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        });
        let r = run(&spec, &txn, &gauges);
        running.store(false, Ordering::Relaxed);
        r
    })?;
    let after = db.stats();
    let delta = |name: &str| {
        let get = |v: &[(String, u64)]| v.iter().find(|(n, _)| n == name).map(|x| x.1);
        get(&after)
            .unwrap_or(0)
            .saturating_sub(get(&before).unwrap_or(0))
    };
    let history_end = db.stat("Innodb_history_list_length").unwrap_or(0);
    history_max.fetch_max(history_end, Ordering::Relaxed);
    let min_tps = r
        .samples
        .iter()
        .map(|s| s.tps)
        .fold(f64::INFINITY, f64::min);
    let mut line = format!(
        "workload={} rows={} threads={} seconds={:.1} tps={:.0} min_sec_tps={} p50_ms={:.3} p95_ms={:.3} \
         p99_ms={:.3} commits={} history_max={} history_end={} errors={} deadlocks={} lock_timeouts={} \
         lock_waits={} purged_trx={} purge_batches={} lag_delay_ms={:.1} flush_log_at_trx_commit={} \
         purge_batch_size={} purge_threads={}",
        p.workload,
        p.rows,
        p.threads,
        r.seconds,
        r.tps,
        if min_tps.is_finite() { fmt_num(min_tps) } else { "-".into() },
        r.p50_ms,
        r.p95_ms,
        r.p99_ms,
        delta("quire_trx_commits"),
        history_max.load(Ordering::Relaxed),
        history_end,
        deadlocks.load(Ordering::Relaxed) + timeouts.load(Ordering::Relaxed),
        deadlocks.load(Ordering::Relaxed),
        timeouts.load(Ordering::Relaxed),
        delta("Innodb_row_lock_waits"),
        delta("quire_purge_trx_purged"),
        delta("quire_purge_batches"),
        delta("quire_purge_lag_delay_us") as f64 / 1000.0,
        config.flush_log_at_trx_commit.as_innodb(),
        config
            .purge_batch_size
            .map_or("auto".to_string(), |n| n.to_string()),
        config.purge_threads,
    );
    for f in &r.files {
        eprintln!("wrote {}", f.display());
    }
    drop(t);
    if slow_shutdown {
        let history = db.stat("Innodb_history_list_length").unwrap_or(0);
        let started = Instant::now();
        db.shutdown().map_err(err)?;
        line.push_str(&format!(
            " shutdown_history={history} shutdown_s={:.2}",
            started.elapsed().as_secs_f64()
        ));
    } else {
        db.shutdown().map_err(err)?;
    }
    println!("{line}");
    Ok(())
}
