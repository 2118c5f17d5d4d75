//! `quire bench`: embedded workloads (no network) on a fresh data directory in a temporary
//! folder, or on `--data-dir` (recovering it if needed, reusing the workload's tables).

mod commit;
mod create_tables;
mod kv;
pub mod plot;
pub mod runner;
mod sysbench;
mod writebench;

use std::path::PathBuf;
use std::sync::Arc;

use quire_engine::config::Config;
use quire_engine::page::SpaceId;
use quire_engine::Engine;

use runner::{run, RunSpec};

/// The workloads that exist so far; each arrives with the step that makes it possible.
pub const WORKLOADS: &[&str] = &[
    "commit",
    "writebench",
    "create-tables",
    "insert",
    "point-select",
    "update-index",
    "update-non-index",
];

pub struct Options {
    pub workload: String,
    pub threads: usize,
    pub seconds: f64,
    pub rows: Option<u64>,
    pub data_dir: Option<PathBuf>,
    pub settings: Vec<String>,
    /// `--pool-mb`: the buffer pool size in MiB (overrides `--set innodb_buffer_pool_size`).
    pub pool_mb: Option<u64>,
    pub out_dir: Option<PathBuf>,
    /// `--max-txns`: stop after this many transactions (the sysbench shapes).
    pub max_txns: Option<u64>,
}

/// What a prepared workload needs to run.
pub struct Workload {
    pub space: SpaceId,
    pub pages: u32,
}

pub fn main(opts: Options) -> Result<(), String> {
    if !WORKLOADS.contains(&opts.workload.as_str()) {
        return Err(format!(
            "unknown workload '{}'; available: {} (the others arrive with later steps)",
            opts.workload,
            WORKLOADS.join(", ")
        ));
    }
    if opts.threads == 0 || opts.seconds.is_nan() || opts.seconds <= 0.0 {
        return Err("--threads and --seconds must be positive".into());
    }
    let kv_rows = match opts.workload.as_str() {
        "insert" => Some(opts.rows.unwrap_or(1_000_000)),
        "point-select" => Some(opts.rows.unwrap_or(100_000)),
        _ => None,
    };
    if let Some(rows) = kv_rows {
        kv::check_rows(rows)?;
    }
    let mut config = Config::default();
    for s in &opts.settings {
        config.set_str(s).map_err(|e| format!("--set {s}: {e}"))?;
    }
    if let Some(mb) = opts.pool_mb {
        config
            .set("innodb_buffer_pool_size", &format!("{mb}M"))
            .map_err(|e| format!("--pool-mb {mb}: {e}"))?;
    }
    let tmp;
    let dir = match &opts.data_dir {
        Some(d) => d.clone(),
        None => {
            tmp = tempfile::Builder::new()
                .prefix("quire-bench-")
                .tempdir_in(
                    std::env::var_os("TMPDIR")
                        .map(PathBuf::from)
                        .unwrap_or_else(|| PathBuf::from(".")),
                )
                .map_err(|e| format!("cannot create a temporary data directory: {e}"))?;
            tmp.path().to_path_buf()
        }
    };
    eprintln!(
        "quire bench {}: data directory {}",
        opts.workload,
        dir.display()
    );
    let vfs: Arc<dyn quire_io::Vfs> = Arc::new(quire_io::os::OsVfs::new());
    if opts.workload == "create-tables" {
        let db =
            quire_engine::table::Db::open_with(vfs, &dir, config).map_err(|e| e.to_string())?;
        create_tables::run(&db, opts.rows.unwrap_or(1000))?;
        return db.shutdown().map_err(|e| e.to_string());
    }
    if opts.workload == "update-index" || opts.workload == "update-non-index" {
        let p = sysbench::Params {
            workload: &opts.workload,
            rows: opts.rows.unwrap_or(10_000),
            threads: opts.threads,
            seconds: opts.seconds,
            max_txns: opts.max_txns,
            out_dir: opts.out_dir.as_deref(),
        };
        if p.rows == 0 || p.rows > i32::MAX as u64 {
            return Err("--rows must be between 1 and 2^31-1".into());
        }
        return sysbench::main(vfs, &dir, config, &p);
    }
    if opts.workload == "insert" || opts.workload == "point-select" {
        let p = kv::Params {
            workload: &opts.workload,
            rows: opts.rows.unwrap_or(if opts.workload == "insert" {
                1_000_000
            } else {
                100_000
            }),
            threads: opts.threads,
            seconds: opts.seconds,
            out_dir: opts.out_dir.as_deref(),
        };
        return if opts.workload == "insert" {
            kv::insert(vfs, &dir, config, &p)
        } else {
            kv::point_select(vfs, &dir, config, &p)
        };
    }
    let engine = Arc::new(Engine::open(vfs, &dir, config.clone()).map_err(|e| e.to_string())?);
    let rows = opts.rows.unwrap_or(1000);
    if opts.workload == "writebench" {
        return writebench_main(&engine, rows, &config);
    }
    let w = match opts.workload.as_str() {
        "commit" => commit::prepare(&engine, rows)?,
        _ => unreachable!("checked above"),
    };
    let before = engine.stats();
    let txn = |_t: usize| commit::txn(&engine, &w).map(|()| true);
    let gauges = || {
        vec![
            (
                "checkpoint_age_mib",
                (engine.stat("Innodb_checkpoint_age").unwrap_or(0) >> 20) as f64,
            ),
            (
                "dirty_pages",
                engine.stat("Innodb_buffer_pool_pages_dirty").unwrap_or(0) as f64,
            ),
        ]
    };
    let spec = RunSpec {
        workload: &opts.workload,
        threads: opts.threads,
        seconds: opts.seconds,
        out_dir: opts.out_dir.as_deref(),
    };
    let r = run(&spec, &txn, &gauges)?;
    let after = engine.stats();
    let delta = |name: &str| {
        let a = after
            .iter()
            .find(|(n, _)| *n == name)
            .map(|x| x.1)
            .unwrap_or(0);
        let b = before
            .iter()
            .find(|(n, _)| *n == name)
            .map(|x| x.1)
            .unwrap_or(0);
        a.saturating_sub(b)
    };
    let fsyncs = delta("Innodb_os_log_fsyncs");
    let mut line = format!(
        "workload={} threads={} seconds={:.1} tps={:.0} p50_ms={:.3} p95_ms={:.3} p99_ms={:.3} commits={} \
         log_fsyncs={} fsyncs_per_commit={:.3} log_writes={} log_written_mib={:.1} data_writes={} \
         checkpoints={} flush_log_at_trx_commit={}",
        opts.workload,
        opts.threads,
        r.seconds,
        r.tps,
        r.p50_ms,
        r.p95_ms,
        r.p99_ms,
        r.txns,
        fsyncs,
        fsyncs as f64 / r.txns.max(1) as f64,
        delta("Innodb_log_writes"),
        delta("Innodb_os_log_written") as f64 / (1 << 20) as f64,
        delta("Innodb_pages_written"),
        delta("quire_checkpoints"),
        config.flush_log_at_trx_commit.as_innodb(),
    );
    if engine.log().direct_io() {
        line.push_str(" log_o_direct=1");
    } else {
        line.push_str(" log_o_direct=0");
    }
    for f in &r.files {
        eprintln!("wrote {}", f.display());
    }
    drop(engine);
    println!("{line}");
    Ok(())
}

/// `writebench` is a fill, not a timed run: it reports the time and the write counters.
fn writebench_main(engine: &Arc<Engine>, rows: u64, config: &Config) -> Result<(), String> {
    let before = engine.stats();
    let r = writebench::run(engine, rows)?;
    let after = engine.stats();
    let delta = |name: &str| {
        let get = |v: &[(&str, u64)]| v.iter().find(|(n, _)| *n == name).map(|x| x.1);
        get(&after)
            .unwrap_or(0)
            .saturating_sub(get(&before).unwrap_or(0))
    };
    let line = format!(
        "workload=writebench rows={} pages={} seconds={:.2} fill_s={:.2} flush_s={:.2} \
         pages_flushed={} doublewrite={} data_writes={} data_written_mib={:.1} dblwr_writes={} \
         dblwr_pages_written={} dblwr_pages_skipped={} pages_written={} log_written_mib={:.1} \
         checkpoints={} buffer_pool_mib={}",
        r.rows,
        r.pages,
        r.fill_s + r.flush_s,
        r.fill_s,
        r.flush_s,
        r.flushed,
        if engine.doublewrite().enabled() {
            "ON"
        } else {
            "OFF"
        },
        delta("Innodb_data_writes"),
        delta("Innodb_data_written") as f64 / (1 << 20) as f64,
        delta("Innodb_dblwr_writes"),
        delta("Innodb_dblwr_pages_written"),
        delta("quire_dblwr_pages_skipped"),
        delta("Innodb_pages_written"),
        delta("Innodb_os_log_written") as f64 / (1 << 20) as f64,
        delta("quire_checkpoints"),
        config.buffer_pool_size >> 20,
    );
    println!("{line}");
    Ok(())
}
