//! What the quire-sql tests on the simulated file system share: a small engine
//! configuration, opening a data directory in a `SimVfs`, and running SQL in a session.

#![allow(dead_code, clippy::result_large_err)]

use std::path::Path;
use std::sync::Arc;

use quire_engine::config::Config;
use quire_engine::table::{Db, DbError};
use quire_io::sim::SimVfs;
use quire_io::Vfs;
use quire_sql::{CollectSink, Session, SqlError, Value};

/// Where every test keeps its data directory in its `SimVfs`.
pub const DIR: &str = "/data";

/// 4 KiB pages, a pool of `pool_pages` pages and a redo log of `log_bytes`; with
/// `purge = false` no background purge thread, so that the I/O sequence of a run does not
/// depend on timing (crash-point tests count it).
pub fn sim_config(pool_pages: u64, log_bytes: u64, purge: bool) -> Config {
    let mut c = Config {
        page_size: 4096,
        buffer_pool_size: pool_pages * 4096,
        log_file_size: log_bytes,
        log_buffer_size: (log_bytes / 16).clamp(64 << 10, 256 << 10),
        ..Config::default()
    };
    if !purge {
        c.purge_threads = 0;
    }
    c
}

/// A small engine on the real file system: a 64 MiB pool, a 32 MiB redo log, flush 2.
pub fn small_config() -> Config {
    let mut c = Config::default();
    for (k, v) in [
        ("innodb_buffer_pool_size", "64M"),
        ("innodb_log_file_size", "32M"),
        ("innodb_flush_log_at_trx_commit", "2"),
    ] {
        c.set(k, v).expect("setting");
    }
    c
}

/// Opens (creating or recovering) the data directory of `vfs`.
pub fn open(vfs: &SimVfs, config: Config) -> Result<Db, DbError> {
    Db::open_with(
        Arc::new(vfs.clone()) as Arc<dyn Vfs>,
        Path::new(DIR),
        config,
    )
}

/// Runs one statement, collecting its rows.
pub fn try_run(s: &mut Session<'_>, sql: &str) -> Result<Vec<Vec<Value>>, SqlError> {
    let mut c = CollectSink::default();
    s.query(sql, &mut c)?;
    Ok(c.rows)
}

/// Runs one statement that must succeed.
pub fn run(s: &mut Session<'_>, sql: &str) -> Vec<Vec<Value>> {
    try_run(s, sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}
