//! `sqlite-bench insert|point-select`: the workloads of `quire bench insert` and
//! `quire bench point-select` on SQLite (bundled through rusqlite), with the same output: one
//! `[  Ns] tps=…` line per second, then one `key=value` summary line.
//!
//! Table `t (id INTEGER PRIMARY KEY, v BLOB)`, WAL mode, one connection per thread, each with
//! `PRAGMA cache_size` set to `--cache-mb` (the whole amount per connection: SQLite's page
//! cache is private to a connection), `busy_timeout` 10 s. Values are 100 random bytes.
//!
//! * `insert`: a fresh table; the keys 1..=N shuffled once with a fixed seed (no repeats);
//!   the threads take the next key from a shared counter and run one autocommit INSERT each
//!   (one transaction per row, like Quire's `Table::insert`), until `--seconds` pass or all N
//!   are in.
//! * `point-select`: loads keys 1..=N in ascending order in transactions of 10,000 rows
//!   (reusing a database that already holds them), closes it, opens one connection per
//!   thread (cold page cache; the file is in the OS page cache), warms each connection's
//!   cache with one full scan, then runs `SELECT v FROM t WHERE id = ?` of uniformly random
//!   keys for `--seconds`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use hdrhistogram::Histogram;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rusqlite::{params, Connection, OpenFlags};

const VALUE_BYTES: usize = 100;
/// The same shuffle seed as `quire bench insert`.
const SHUFFLE_SEED: u64 = 0x5eed_0001;
const LOAD_BATCH: u64 = 10_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Workload {
    Insert,
    PointSelect,
}

impl Workload {
    fn name(self) -> &'static str {
        match self {
            Workload::Insert => "insert",
            Workload::PointSelect => "point-select",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "UPPER")]
enum Synchronous {
    Off,
    Normal,
    Full,
}

impl Synchronous {
    fn pragma(self) -> &'static str {
        match self {
            Synchronous::Off => "OFF",
            Synchronous::Normal => "NORMAL",
            Synchronous::Full => "FULL",
        }
    }
}

#[derive(Parser, Debug)]
#[command(
    name = "sqlite-bench",
    about = "quire bench's insert and point-select on SQLite"
)]
struct Cli {
    workload: Workload,
    #[arg(long, default_value_t = 100_000)]
    rows: u64,
    #[arg(long, default_value_t = 1)]
    threads: usize,
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Page cache per connection, in MiB (PRAGMA cache_size = -MiB*1024).
    #[arg(long = "cache-mb", default_value_t = 128)]
    cache_mb: u64,
    /// PRAGMA synchronous (WAL mode): NORMAL syncs at checkpoints only, FULL at every commit.
    #[arg(long, value_enum, default_value_t = Synchronous::Normal)]
    synchronous: Synchronous,
    /// The database file (created if missing). `point-select` reuses one that holds the rows.
    #[arg(long)]
    db: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run_cli(&cli) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("sqlite-bench {}: {e}", cli.workload.name());
            ExitCode::from(1)
        }
    }
}

fn run_cli(cli: &Cli) -> Result<String, String> {
    if cli.threads == 0 || cli.seconds.is_nan() || cli.seconds <= 0.0 {
        return Err("--threads and --seconds must be positive".into());
    }
    if cli.rows == 0 || cli.rows > i64::MAX as u64 || usize::try_from(cli.rows).is_err() {
        return Err(format!("--rows {} is out of range", cli.rows));
    }
    eprintln!(
        "sqlite-bench {}: database {} (SQLite {})",
        cli.workload.name(),
        cli.db.display(),
        rusqlite::version()
    );
    match cli.workload {
        Workload::Insert => insert(cli),
        Workload::PointSelect => point_select(cli),
    }
}

fn sql_err(what: &str) -> impl Fn(rusqlite::Error) -> String + '_ {
    move |e| format!("{what}: {e}")
}

/// One connection with the benchmark's settings.
fn connect(cli: &Cli) -> Result<Connection, String> {
    let c = Connection::open_with_flags(
        &cli.db,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| format!("opening {}: {e}", cli.db.display()))?;
    c.busy_timeout(Duration::from_secs(10))
        .map_err(sql_err("busy_timeout"))?;
    let mode: String = c
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .map_err(sql_err("PRAGMA journal_mode"))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(format!("journal_mode is {mode}, not wal"));
    }
    c.execute_batch(&format!(
        "PRAGMA synchronous = {}; PRAGMA cache_size = -{};",
        cli.synchronous.pragma(),
        cli.cache_mb * 1024
    ))
    .map_err(sql_err("PRAGMA synchronous/cache_size"))?;
    Ok(c)
}

fn random_value(rng: &mut SmallRng) -> Vec<u8> {
    let mut v = vec![0u8; VALUE_BYTES];
    rng.fill(&mut v[..]);
    v
}

fn file_mib(p: &Path) -> f64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0) as f64 / (1 << 20) as f64
}

fn wal_path(db: &Path) -> PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push("-wal");
    PathBuf::from(s)
}

fn summary(cli: &Cli, r: &RunResult, extra: &str) -> String {
    format!(
        "workload={} engine=sqlite threads={} seconds={:.1} tps={:.0} p50_ms={:.3} p95_ms={:.3} \
         p99_ms={:.3} ops={} rows={} cache_mib={} synchronous={} journal_mode=wal \
         sqlite_version={}{extra}",
        cli.workload.name(),
        cli.threads,
        r.seconds,
        r.tps,
        r.p50_ms,
        r.p95_ms,
        r.p99_ms,
        r.ops,
        cli.rows,
        cli.cache_mb,
        cli.synchronous.pragma(),
        rusqlite::version(),
    )
}

fn insert(cli: &Cli) -> Result<String, String> {
    {
        let c = connect(cli)?;
        c.execute_batch("DROP TABLE IF EXISTS t; CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB);")
            .map_err(sql_err("creating table t"))?;
    }
    eprintln!("shuffling {} keys", cli.rows);
    let mut keys: Vec<u64> = (1..=cli.rows).collect();
    keys.shuffle(&mut SmallRng::seed_from_u64(SHUFFLE_SEED));
    let next = AtomicUsize::new(0);
    let conns = (0..cli.threads)
        .map(|_| connect(cli).map(Mutex::new))
        .collect::<Result<Vec<_>, _>>()?;
    let rngs: Vec<Mutex<SmallRng>> = (0..cli.threads)
        .map(|_| Mutex::new(SmallRng::from_entropy()))
        .collect();
    let txn = |t: usize| -> Result<bool, String> {
        let Some(&k) = keys.get(next.fetch_add(1, Ordering::Relaxed)) else {
            return Ok(false);
        };
        let c = conns[t].lock().map_err(|_| "a thread panicked")?;
        let v = random_value(&mut *rngs[t].lock().map_err(|_| "a thread panicked")?);
        let mut st = c
            .prepare_cached("INSERT INTO t (id, v) VALUES (?1, ?2)")
            .map_err(sql_err("prepare INSERT"))?;
        st.execute(params![k as i64, v])
            .map_err(|e| format!("insert of key {k}: {e}"))?;
        Ok(true)
    };
    let r = run(cli, &txn)?;
    let wal_mib = file_mib(&wal_path(&cli.db));
    drop(conns);
    let extra = format!(
        " inserted={} all_inserted={} db_mib={:.1} wal_mib={wal_mib:.1}",
        r.ops,
        u8::from(r.ops >= cli.rows),
        file_mib(&cli.db),
    );
    Ok(summary(cli, &r, &extra))
}

fn point_select(cli: &Cli) -> Result<String, String> {
    {
        let mut c = connect(cli)?;
        c.execute_batch("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v BLOB)")
            .map_err(sql_err("creating table t"))?;
        let have: i64 = c
            .query_row("SELECT coalesce(max(id), 0) FROM t", [], |r| r.get(0))
            .map_err(sql_err("max(id)"))?;
        let have = u64::try_from(have).map_err(|_| format!("t holds a negative key {have}"))?;
        if have > cli.rows {
            return Err(format!(
                "{} holds keys up to {have}, more than --rows {}: use another --db",
                cli.db.display(),
                cli.rows
            ));
        }
        if have < cli.rows {
            eprintln!(
                "loading {} rows in ascending key order, {LOAD_BATCH} per transaction",
                cli.rows - have
            );
            let mut rng = SmallRng::from_entropy();
            let start = Instant::now();
            let mut tick = start + Duration::from_secs(1);
            let mut k = have + 1;
            while k <= cli.rows {
                let tx = c.transaction().map_err(sql_err("BEGIN"))?;
                {
                    let mut st = tx
                        .prepare_cached("INSERT INTO t (id, v) VALUES (?1, ?2)")
                        .map_err(sql_err("prepare INSERT"))?;
                    let end = (k + LOAD_BATCH - 1).min(cli.rows);
                    for key in k..=end {
                        st.execute(params![key as i64, random_value(&mut rng)])
                            .map_err(|e| format!("loading key {key}: {e}"))?;
                    }
                    k = end + 1;
                }
                tx.commit().map_err(sql_err("COMMIT"))?;
                if Instant::now() >= tick {
                    tick += Duration::from_secs(1);
                    eprintln!(
                        "loading: {} of {} rows ({:.0}%)",
                        k - 1,
                        cli.rows,
                        (k - 1) as f64 * 100.0 / cli.rows as f64
                    );
                }
            }
            eprintln!(
                "loaded {} rows in {:.1} s",
                cli.rows - have,
                start.elapsed().as_secs_f64()
            );
            // Fold the WAL into the database file, so every run starts the same way.
            c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
                .map_err(sql_err("wal_checkpoint"))?;
        } else {
            eprintln!("t already holds {} rows: no load", cli.rows);
        }
    }
    let conns = (0..cli.threads)
        .map(|_| connect(cli).map(Mutex::new))
        .collect::<Result<Vec<_>, _>>()?;
    let warm = Instant::now();
    for c in &conns {
        let c = c.lock().map_err(|_| "a thread panicked")?;
        let (n, bytes): (i64, i64) = c
            .query_row("SELECT count(*), sum(length(v)) FROM t", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .map_err(sql_err("warming scan"))?;
        if n as u64 != cli.rows || bytes as u64 != cli.rows * VALUE_BYTES as u64 {
            return Err(format!(
                "t holds {n} rows of {bytes} value bytes, expected {} rows",
                cli.rows
            ));
        }
    }
    eprintln!(
        "warmed {} connection(s) with a full scan in {:.1} s",
        cli.threads,
        warm.elapsed().as_secs_f64()
    );
    let rngs: Vec<Mutex<SmallRng>> = (0..cli.threads)
        .map(|_| Mutex::new(SmallRng::from_entropy()))
        .collect();
    let rows = cli.rows;
    let txn = |t: usize| -> Result<bool, String> {
        let k = rngs[t]
            .lock()
            .map_err(|_| "a thread panicked")?
            .gen_range(1..=rows);
        let c = conns[t].lock().map_err(|_| "a thread panicked")?;
        let mut st = c
            .prepare_cached("SELECT v FROM t WHERE id = ?1")
            .map_err(sql_err("prepare SELECT"))?;
        let v: Vec<u8> = st
            .query_row(params![k as i64], |r| r.get(0))
            .map_err(|e| format!("select of key {k}: {e}"))?;
        if v.len() != VALUE_BYTES {
            return Err(format!("row {k} has a {}-byte value", v.len()));
        }
        Ok(true)
    };
    let r = run(cli, &txn)?;
    drop(conns);
    let extra = format!(
        " cold_start=1 warmed_by_scan=1 db_mib={:.1}",
        file_mib(&cli.db)
    );
    Ok(summary(cli, &r, &extra))
}

struct RunResult {
    seconds: f64,
    ops: u64,
    tps: f64,
    p50_ms: f64,
    p95_ms: f64,
    p99_ms: f64,
}

fn new_hist() -> Result<Histogram<u64>, String> {
    Histogram::new_with_bounds(1, 100_000_000, 3).map_err(|e| e.to_string())
}

/// The runner of `quire bench`: `txn` on `cli.threads` scoped threads for `cli.seconds` (or
/// until every thread returns `Ok(false)`), one line per second, latency percentiles.
fn run(
    cli: &Cli,
    txn: &(dyn Fn(usize) -> Result<bool, String> + Sync),
) -> Result<RunResult, String> {
    let stop = AtomicBool::new(false);
    let count = AtomicU64::new(0);
    let live = AtomicUsize::new(cli.threads);
    let error: Mutex<Option<String>> = Mutex::new(None);
    let hist = Mutex::new(new_hist()?);
    let start = Instant::now();
    std::thread::scope(|scope| {
        for t in 0..cli.threads {
            let (stop, count, live, error, hist) = (&stop, &count, &live, &error, &hist);
            scope.spawn(move || {
                let fail = |e: String| {
                    if let Ok(mut g) = error.lock() {
                        g.get_or_insert(e);
                    }
                    stop.store(true, Ordering::Relaxed);
                };
                match new_hist() {
                    Err(e) => fail(e),
                    Ok(mut local) => {
                        while !stop.load(Ordering::Relaxed) {
                            let t0 = Instant::now();
                            match txn(t) {
                                Ok(true) => {}
                                Ok(false) => break,
                                Err(e) => {
                                    fail(e);
                                    break;
                                }
                            }
                            let _ = local.record((t0.elapsed().as_micros() as u64).max(1));
                            count.fetch_add(1, Ordering::Relaxed);
                        }
                        if let Ok(mut h) = hist.lock() {
                            let _ = h.add(&local);
                        }
                    }
                }
                live.fetch_sub(1, Ordering::Relaxed);
            });
        }
        let mut last = 0u64;
        let mut next = Duration::from_secs(1);
        let total = Duration::from_secs_f64(cli.seconds);
        while !stop.load(Ordering::Relaxed) && live.load(Ordering::Relaxed) > 0 {
            let now = start.elapsed();
            if now >= total {
                break;
            }
            std::thread::sleep(
                next.min(total)
                    .saturating_sub(now)
                    .min(Duration::from_millis(20)),
            );
            if start.elapsed() >= next {
                let c = count.load(Ordering::Relaxed);
                println!("[{:>4.0}s] tps={}", next.as_secs_f64(), c - last);
                let _ = std::io::stdout().flush();
                last = c;
                next += Duration::from_secs(1);
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    let seconds = start.elapsed().as_secs_f64();
    if let Some(e) = error.lock().map_err(|_| "a thread panicked")?.take() {
        return Err(e);
    }
    let ops = count.load(Ordering::Relaxed);
    let h = hist.lock().map_err(|_| "a thread panicked")?;
    let ms = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    Ok(RunResult {
        seconds,
        ops,
        tps: ops as f64 / seconds,
        p50_ms: ms(0.50),
        p95_ms: ms(0.95),
        p99_ms: ms(0.99),
    })
}
