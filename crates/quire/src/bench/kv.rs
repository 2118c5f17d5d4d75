//! `quire bench insert` and `quire bench point-select`: the key-value shapes that RocksDB's
//! db_bench (fillrandom, readrandom) and SQLite run too (bench/embedded-vs.sh compares the
//! three), through the embedded table API. The table is `bench_kv.t (id BIGINT PRIMARY KEY,
//! v VARBINARY(100) NOT NULL)`: 8-byte keys, 100-byte random (incompressible) values. Every
//! `Table::insert` is its own durable change, as `innodb_flush_log_at_trx_commit` says.
//!
//! * `insert`: the table starts empty (a reused `--data-dir`'s table is emptied first); the
//!   keys 1..=N are shuffled once (fixed seed, no repeats) and the threads take the next one
//!   from a shared counter until `--seconds` have passed or all N are in.
//! * `point-select`: loads keys 1..=N in ascending order (flush_log_at_trx_commit=0, pool of
//!   at least 128 MiB, progress every second; a reused `--data-dir` resumes where an earlier
//!   load stopped), shuts down cleanly, reopens with the requested settings (a cold pool),
//!   warms the pool with one full scan (which also checks that all N rows are there), then
//!   the threads run `Table::get` of uniformly random keys for `--seconds`.

use std::cell::RefCell;
use std::ops::Bound;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quire_engine::btree::Direction;
use quire_engine::config::{Config, FlushAtCommit};
use quire_engine::row::{Column, ColumnType, IntWidth, Value};
use quire_engine::table::{Db, DbError, Table, TableSpec};
use quire_engine::Engine;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use super::runner::{run, RunResult, RunSpec};

pub const DB: &str = "bench_kv";
pub const TABLE: &str = "t";
pub const VALUE_BYTES: usize = 100;
/// The shuffle of `insert`'s keys is the same in every run.
const SHUFFLE_SEED: u64 = 0x5eed_0001;
/// The pool used while `point-select` loads, when the requested one is smaller.
const LOAD_POOL: u64 = 128 << 20;

pub struct Params<'a> {
    pub workload: &'a str,
    pub rows: u64,
    pub threads: usize,
    pub seconds: f64,
    pub out_dir: Option<&'a Path>,
}

fn spec() -> TableSpec {
    TableSpec::new(
        vec![
            Column::new(
                "id",
                ColumnType::Int {
                    width: IntWidth::Big,
                    unsigned: false,
                },
            ),
            Column::new(
                "v",
                ColumnType::VarBinary {
                    max_len: VALUE_BYTES as u32,
                },
            ),
        ],
        vec![0],
    )
}

fn err(e: DbError) -> String {
    e.to_string()
}

thread_local! {
    static RNG: RefCell<SmallRng> = RefCell::new(SmallRng::from_entropy());
}

fn random_value() -> Vec<u8> {
    let mut v = vec![0u8; VALUE_BYTES];
    RNG.with(|r| r.borrow_mut().fill(&mut v[..]));
    v
}

fn key_value(k: u64) -> Result<Value, String> {
    i64::try_from(k)
        .map(Value::Int)
        .map_err(|_| format!("key {k} does not fit a BIGINT"))
}

/// Checks `--rows` (before any directory is made).
pub fn check_rows(rows: u64) -> Result<(), String> {
    if rows == 0 {
        return Err("--rows must be positive".into());
    }
    if rows > i64::MAX as u64 {
        return Err(format!("--rows {rows} is more than a BIGINT key holds"));
    }
    if usize::try_from(rows).is_err() {
        return Err(format!("--rows {rows} is too many for this machine"));
    }
    Ok(())
}

fn open(vfs: Arc<dyn quire_io::Vfs>, dir: &Path, config: Config) -> Result<Db, String> {
    Db::open_with(vfs, dir, config).map_err(|e| format!("opening {}: {e}", dir.display()))
}

fn stat(engine: &Engine, name: &str) -> u64 {
    engine.stat(name).unwrap_or(0)
}

/// Pages read from disk in the last second and dirty pages, for the per-second lines.
fn gauges(engine: &Engine) -> impl Fn() -> Vec<(&'static str, f64)> + Sync + '_ {
    let last = AtomicU64::new(stat(engine, "Innodb_pages_read"));
    move || {
        let now = stat(engine, "Innodb_pages_read");
        let read = now.saturating_sub(last.swap(now, Ordering::Relaxed));
        vec![
            ("pages_read", read as f64),
            (
                "dirty_pages",
                stat(engine, "Innodb_buffer_pool_pages_dirty") as f64,
            ),
        ]
    }
}

/// The allocated size of the table's space, in MiB.
fn space_mib(db: &Db, t: &Table<'_>) -> Result<f64, String> {
    let def = t.definition().map_err(err)?;
    let pages = db
        .engine()
        .spaces()
        .get(def.space)
        .map_err(|e| e.to_string())?
        .size_pages();
    Ok(pages as f64 * db.engine().page_size().bytes() as f64 / (1 << 20) as f64)
}

fn summary(p: &Params<'_>, config: &Config, r: &RunResult, extra: &str) -> String {
    format!(
        "workload={} threads={} seconds={:.1} tps={:.0} p50_ms={:.3} p95_ms={:.3} p99_ms={:.3} \
         ops={} rows={} pool_mib={} flush_log_at_trx_commit={}{extra}",
        p.workload,
        p.threads,
        r.seconds,
        r.tps,
        r.p50_ms,
        r.p95_ms,
        r.p99_ms,
        r.txns,
        p.rows,
        config.buffer_pool_size >> 20,
        config.flush_log_at_trx_commit.as_innodb(),
    )
}

fn report_files(r: &RunResult) {
    for f in &r.files {
        eprintln!("wrote {}", f.display());
    }
}

/// `quire bench insert`.
pub fn insert(
    vfs: Arc<dyn quire_io::Vfs>,
    dir: &Path,
    config: Config,
    p: &Params<'_>,
) -> Result<(), String> {
    check_rows(p.rows)?;
    let db = open(vfs, dir, config.clone())?;
    if !db.databases().iter().any(|d| d == DB) {
        db.create_database(DB).map_err(err)?;
    }
    let table = match db.table(DB, TABLE) {
        Ok(_) => {
            eprintln!("emptying {DB}.{TABLE} left by an earlier run");
            db.truncate_table(DB, TABLE).map_err(err)?;
            db.table(DB, TABLE).map_err(err)?
        }
        Err(DbError::NoSuchTable(_)) => db.create_table(DB, TABLE, spec()).map_err(err)?,
        Err(e) => return Err(err(e)),
    };
    eprintln!("shuffling {} keys", p.rows);
    let mut keys: Vec<u64> = (1..=p.rows).collect();
    keys.shuffle(&mut SmallRng::seed_from_u64(SHUFFLE_SEED));
    let next = AtomicUsize::new(0);
    let engine = db.engine();
    let fsyncs0 = stat(engine, "Innodb_os_log_fsyncs");
    let read0 = stat(engine, "Innodb_pages_read");
    let written0 = stat(engine, "Innodb_pages_written");
    let txn = |_t: usize| -> Result<bool, String> {
        let Some(&k) = keys.get(next.fetch_add(1, Ordering::Relaxed)) else {
            return Ok(false);
        };
        table
            .insert(vec![key_value(k)?, Value::Bytes(random_value())])
            .map_err(|e| format!("insert of key {k}: {e}"))?;
        Ok(true)
    };
    let spec = RunSpec {
        workload: p.workload,
        threads: p.threads,
        seconds: p.seconds,
        out_dir: p.out_dir,
    };
    let r = run(&spec, &txn, &gauges(engine))?;
    let fsyncs = stat(engine, "Innodb_os_log_fsyncs").saturating_sub(fsyncs0);
    let extra = format!(
        " inserted={} all_inserted={} space_mib={:.1} pages_read={} pages_written={} \
         log_fsyncs={} fsyncs_per_insert={:.3}",
        r.txns,
        u8::from(r.txns >= p.rows),
        space_mib(&db, &table)?,
        stat(engine, "Innodb_pages_read").saturating_sub(read0),
        stat(engine, "Innodb_pages_written").saturating_sub(written0),
        fsyncs,
        fsyncs as f64 / r.txns.max(1) as f64,
    );
    report_files(&r);
    let line = summary(p, &config, &r, &extra);
    drop(table);
    eprintln!("shutting down (writes the dirty pages back; not timed)");
    db.shutdown().map_err(err)?;
    println!("{line}");
    Ok(())
}

/// The largest key in the table, 0 when it is empty.
fn max_key(t: &Table<'_>) -> Result<u64, String> {
    let mut rows = t
        .scan(Bound::Unbounded, Bound::Unbounded, Direction::Backward)
        .map_err(err)?;
    match rows.next() {
        None => Ok(0),
        Some(row) => match row.map_err(err)?.first() {
            Some(Value::Int(k)) if *k > 0 => Ok(*k as u64),
            other => Err(format!(
                "{DB}.{TABLE} holds a key this benchmark did not write: {other:?}"
            )),
        },
    }
}

/// Loads keys `from..=rows` in ascending order, printing progress once a second.
fn load(t: &Table<'_>, from: u64, rows: u64) -> Result<(), String> {
    let start = Instant::now();
    let mut tick = start + Duration::from_secs(1);
    for k in from..=rows {
        t.insert(vec![key_value(k)?, Value::Bytes(random_value())])
            .map_err(|e| format!("loading key {k}: {e}"))?;
        if k.is_multiple_of(1024) && Instant::now() >= tick {
            tick += Duration::from_secs(1);
            let done = k + 1 - from;
            eprintln!(
                "loading: {k} of {rows} rows ({:.0}%), {:.0} rows/s",
                k as f64 * 100.0 / rows as f64,
                done as f64 / start.elapsed().as_secs_f64()
            );
        }
    }
    eprintln!(
        "loaded {} rows in {:.1} s",
        rows + 1 - from,
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Reads every row once (warming the pool); returns the row count. Progress once a second.
fn warm(t: &Table<'_>, rows: u64) -> Result<u64, String> {
    let start = Instant::now();
    let mut tick = start + Duration::from_secs(1);
    let mut n = 0u64;
    for row in t
        .scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .map_err(err)?
    {
        row.map_err(err)?;
        n += 1;
        if n.is_multiple_of(4096) && Instant::now() >= tick {
            tick += Duration::from_secs(1);
            eprintln!(
                "warming the pool: {n} of {rows} rows ({:.0}%)",
                n as f64 * 100.0 / rows as f64
            );
        }
    }
    Ok(n)
}

/// `quire bench point-select`.
pub fn point_select(
    vfs: Arc<dyn quire_io::Vfs>,
    dir: &Path,
    config: Config,
    p: &Params<'_>,
) -> Result<(), String> {
    check_rows(p.rows)?;
    // Load (or finish an earlier load) with no log write per insert and a pool of at least
    // LOAD_POOL, then shut down cleanly so the timed run starts with nothing to flush.
    {
        let load_config = Config {
            flush_log_at_trx_commit: FlushAtCommit::from_innodb(0)
                .ok_or("flush_log_at_trx_commit=0 is not known")?,
            buffer_pool_size: config.buffer_pool_size.max(LOAD_POOL),
            ..config.clone()
        };
        let db = open(vfs.clone(), dir, load_config)?;
        if !db.databases().iter().any(|d| d == DB) {
            db.create_database(DB).map_err(err)?;
        }
        let t = match db.table(DB, TABLE) {
            Ok(t) => t,
            Err(DbError::NoSuchTable(_)) => db.create_table(DB, TABLE, spec()).map_err(err)?,
            Err(e) => return Err(err(e)),
        };
        let have = max_key(&t)?;
        if have > p.rows {
            return Err(format!(
                "{DB}.{TABLE} in {} holds keys up to {have}, more than --rows {}: \
                 use the same --rows or another --data-dir",
                dir.display(),
                p.rows
            ));
        }
        if have < p.rows {
            if have > 0 {
                eprintln!("resuming the load after key {have}");
            }
            eprintln!(
                "loading {} rows in ascending key order (flush_log_at_trx_commit=0, {} MiB pool)",
                p.rows - have,
                config.buffer_pool_size.max(LOAD_POOL) >> 20
            );
            load(&t, have + 1, p.rows)?;
        } else {
            eprintln!("{DB}.{TABLE} already holds {} rows: no load", p.rows);
        }
        drop(t);
        eprintln!("shutting down after the load (writes every dirty page)");
        db.shutdown().map_err(err)?;
    }
    eprintln!(
        "restarting with a cold {} MiB pool",
        config.buffer_pool_size >> 20
    );
    let db = open(vfs, dir, config.clone())?;
    let table = db.table(DB, TABLE).map_err(err)?;
    let engine = db.engine();
    let read0 = stat(engine, "Innodb_pages_read");
    let warm_start = Instant::now();
    let n = warm(&table, p.rows)?;
    if n != p.rows {
        return Err(format!(
            "{DB}.{TABLE} holds {n} rows, expected {} (keys 1..={})",
            p.rows, p.rows
        ));
    }
    let scan_pages = stat(engine, "Innodb_pages_read").saturating_sub(read0);
    eprintln!(
        "warmed: {n} rows, {scan_pages} pages read in {:.1} s",
        warm_start.elapsed().as_secs_f64()
    );
    let rows = p.rows;
    let txn = |_t: usize| -> Result<bool, String> {
        let k = RNG.with(|r| r.borrow_mut().gen_range(1..=rows));
        match table.get(&[key_value(k)?]) {
            Ok(Some(_)) => Ok(true),
            Ok(None) => Err(format!("row {k} is missing")),
            Err(e) => Err(format!("get of key {k}: {e}")),
        }
    };
    let spec = RunSpec {
        workload: p.workload,
        threads: p.threads,
        seconds: p.seconds,
        out_dir: p.out_dir,
    };
    let read1 = stat(engine, "Innodb_pages_read");
    let r = run(&spec, &txn, &gauges(engine))?;
    let pages_read = stat(engine, "Innodb_pages_read").saturating_sub(read1);
    let extra = format!(
        " cold_start=1 warmed_by_scan=1 table_pages={scan_pages} table_mib={:.1} space_mib={:.1} \
         pages_read={pages_read} pages_read_per_op={:.3}",
        scan_pages as f64 * engine.page_size().bytes() as f64 / (1 << 20) as f64,
        space_mib(&db, &table)?,
        pages_read as f64 / r.txns.max(1) as f64,
    );
    report_files(&r);
    let line = summary(p, &config, &r, &extra);
    drop(table);
    db.shutdown().map_err(err)?;
    println!("{line}");
    Ok(())
}
