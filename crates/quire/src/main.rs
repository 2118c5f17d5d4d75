//! The `quire` command: `serve`, `check` and `bench`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// mimalloc rather than glibc's malloc: a statement allocates and frees small buffers by
/// the hundreds (rows, values, keys), and glibc's malloc and free were a quarter of the
/// server's instructions on oltp_read_only (bench/results/allocator.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod bench;
mod errlog;
mod options;
mod serve;

#[derive(Parser, Debug)]
#[command(
    name = "quire",
    version,
    about = "Quire: a crash-safe transactional storage engine"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Serve the MySQL wire protocol on a data directory.
    Serve {
        /// The data directory [default: ./quire-data]. `--datadir` too, as mariadbd spells it.
        #[arg(long, alias = "datadir")]
        data_dir: Option<PathBuf>,
        /// [default: 3307]
        #[arg(long)]
        port: Option<u16>,
        /// The address to listen on [default: 127.0.0.1]. `--bind-address` too.
        #[arg(long, alias = "bind-address")]
        bind: Option<String>,
        /// A my.cnf-style option file: its [mysqld], [server], [mariadb] and [quire] groups
        /// (port, bind-address, socket, datadir and any setting); the command line wins.
        #[arg(long = "defaults-file", value_name = "FILE")]
        defaults_file: Option<PathBuf>,
        /// Also listen on this Unix socket.
        #[arg(long)]
        socket: Option<PathBuf>,
        /// A server variable, as name=value: an engine setting (innodb_buffer_pool_size, ...)
        /// or a server one (max_connections, max_allowed_packet, wait_timeout,
        /// connect_timeout, net_write_timeout). Repeatable.
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
        /// root's password (default: none).
        #[arg(long = "root-password", value_name = "PASSWORD")]
        root_password: Option<String>,
    },
    /// Check a data directory offline; exits 0 only if everything is clean.
    Check {
        #[arg(long, alias = "datadir", default_value = "./quire-data")]
        data_dir: PathBuf,
        /// When the only problems are leaked pages (wasted space a crash can leave), free
        /// them. Nothing else is changed; damage is reported and left alone.
        #[arg(long = "reclaim-leaks")]
        reclaim_leaks: bool,
    },
    /// Run an embedded benchmark workload.
    Bench {
        /// The workload to run.
        workload: String,
        #[arg(long, default_value_t = 1)]
        threads: usize,
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
        #[arg(long)]
        rows: Option<u64>,
        #[arg(long)]
        data_dir: Option<PathBuf>,
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
        /// Buffer pool size in MiB (the same as --set innodb_buffer_pool_size=<M>M).
        #[arg(long = "pool-mb", value_name = "MIB")]
        pool_mb: Option<u64>,
        /// Where to write the time series (CSV) and the plot (SVG).
        #[arg(long, default_value = "quire-bench-results")]
        out: PathBuf,
        /// Stop after this many transactions (update-index, update-non-index), or at
        /// --seconds, whichever comes first.
        #[arg(long = "max-txns")]
        max_txns: Option<u64>,
    },
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        // Standard error until `quire serve` opens its `log_error` file (errlog.rs); no
        // colour codes, which would end up in that file.
        .with_writer(errlog::Target)
        .with_ansi(false)
        .init();
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Serve {
            data_dir,
            port,
            bind,
            defaults_file,
            socket,
            set,
            root_password,
        } => serve::main(serve::Options {
            data_dir,
            port,
            bind,
            defaults_file,
            socket,
            settings: set,
            root_password,
        }),
        Cmd::Check {
            data_dir,
            reclaim_leaks,
        } => check(&data_dir, reclaim_leaks),
        Cmd::Bench {
            workload,
            threads,
            seconds,
            rows,
            data_dir,
            set,
            pool_mb,
            out,
            max_txns,
        } => {
            let opts = bench::Options {
                workload,
                threads,
                seconds,
                rows,
                data_dir,
                settings: set,
                pool_mb,
                out_dir: Some(out),
                max_txns,
            };
            match bench::main(opts) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("quire bench: {e}");
                    ExitCode::from(1)
                }
            }
        }
    }
}

/// The catalog and table part of `quire check` (docs/catalog.md).
fn table_problems(data_dir: &std::path::Path) -> Result<Vec<String>, quire_engine::table::DbError> {
    let vfs = std::sync::Arc::new(quire_io::os::OsVfs::new());
    let (db, mut problems) = quire_engine::table::Db::open_for_check(
        vfs,
        data_dir,
        quire_engine::config::Config::default(),
    )?;
    // No catalog: only raw spaces (as the benchmarks make), no tables to check.
    if let Some(db) = db {
        problems.extend(db.check()?);
        db.shutdown()?;
    }
    Ok(problems)
}

/// `quire check --reclaim-leaks`: frees the leaked pages of a directory whose only problems
/// are leaks; returns the pages freed and the parts left alone.
fn reclaim(data_dir: &std::path::Path) -> Result<(u64, Vec<String>), quire_engine::table::DbError> {
    let vfs = std::sync::Arc::new(quire_io::os::OsVfs::new());
    let db =
        quire_engine::table::Db::open_with(vfs, data_dir, quire_engine::config::Config::default())?;
    let r = db.reclaim_leaked()?;
    db.shutdown()?;
    Ok(r)
}

/// `quire check`: exit 0 when clean, 1 when problems were found, 2 when the check could not run.
fn check(data_dir: &std::path::Path, reclaim_leaks: bool) -> ExitCode {
    let vfs = quire_io::os::OsVfs::new();
    if !data_dir.is_dir() {
        eprintln!(
            "quire check: {}: no such data directory",
            data_dir.display()
        );
        return ExitCode::from(2);
    }
    let report = match quire_engine::check::check_data_dir(&vfs, data_dir) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("quire check: {e}");
            return ExitCode::from(2);
        }
    };
    for f in &report.files {
        let usage = f
            .usage
            .map(|u| format!(", {} of {} pages in use", u.used_pages, u.size_pages))
            .unwrap_or_default();
        let verdict = if f.problems.is_empty() {
            "ok"
        } else {
            "PROBLEMS"
        };
        println!(
            "{}: {} pages checked{usage}: {verdict}",
            f.path.display(),
            f.pages_checked
        );
        for p in &f.problems {
            println!("  {p}");
        }
    }
    let mut n = report.problems().count();
    // Tables: opening the directory runs recovery (the server must be stopped), then every
    // table's B-trees, secondary-against-clustered and catalog-against-files are checked.
    if n == 0 {
        match table_problems(data_dir) {
            Ok(problems) => {
                for p in &problems {
                    println!("  {p}");
                }
                if problems.is_empty() {
                    println!("tables: ok");
                }
                let leaks_only = problems.iter().all(|p| p.contains(": leaked: "));
                if reclaim_leaks && !problems.is_empty() && leaks_only {
                    match reclaim(data_dir) {
                        Ok((freed, skipped)) => {
                            for s in &skipped {
                                println!("  {s}");
                            }
                            println!("reclaimed {freed} leaked pages");
                            if skipped.is_empty() {
                                return check(data_dir, false);
                            }
                        }
                        Err(e) => {
                            eprintln!("quire check: reclaiming leaked pages: {e}");
                            return ExitCode::from(2);
                        }
                    }
                } else if reclaim_leaks && !leaks_only {
                    println!("leaked pages not reclaimed: fix the damage above first");
                }
                n += problems.len();
            }
            Err(e) => {
                eprintln!("quire check: tables: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        println!("tables: not checked until the page-level problems above are fixed");
    }
    if n == 0 {
        println!("clean: {} files", report.files.len());
        ExitCode::SUCCESS
    } else {
        println!("{n} problems in {} files", report.files.len());
        ExitCode::from(1)
    }
}
