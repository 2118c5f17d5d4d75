//! What the quire-sql tests share: small engine configurations, opening a data directory
//! in a `SimVfs`, running SQL in a session, the table `d.t` the online-DDL tests load, and
//! the skeleton of the restart tests.

#![allow(dead_code, clippy::result_large_err)]

use std::path::Path;
use std::sync::Arc;

use quire_engine::config::Config;
use quire_engine::table::{Db, DbError};
use quire_io::sim::SimVfs;
use quire_io::Vfs;
use quire_sql::{CollectSink, Instance, Session, SqlError, Value};

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

/// An instance over a fresh data directory (a temporary directory on the real file system,
/// opened with `config`) with an empty database `d`, and a session in it: `f` runs with
/// both; then `Db::check` must find nothing wrong, and the engine must shut down cleanly.
pub fn with_database_d(config: Config, f: impl FnOnce(&Instance<'_>, &mut Session<'_>)) {
    let dir = tempfile::tempdir().expect("tmp");
    let db = Db::open(dir.path(), config).expect("open");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        run(&mut s, "CREATE DATABASE d");
        run(&mut s, "USE d");
        f(&inst, &mut s);
    }
    let problems = db.check().expect("check");
    assert!(problems.is_empty(), "{problems:?}");
    db.shutdown().expect("shutdown");
}

/// Another session of `inst`, in database `d`.
pub fn session_in_d<'d>(inst: &'d Instance<'d>) -> Session<'d> {
    let mut s = inst.session("root", "localhost");
    run(&mut s, "USE d");
    s
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

/// An integer cell.
pub fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        Value::UInt(u) => *u as i64,
        other => panic!("not an integer: {other:?}"),
    }
}

/// Database `d` with table `t (id INT PRIMARY KEY, v INT, u INT)` of `rows` rows
/// (i, i % 100, i), inserted 2000 to a statement; the session is left in `d`.
pub fn load_t(s: &mut Session<'_>, rows: i64) {
    run(s, "CREATE DATABASE d");
    run(s, "USE d");
    run(s, "CREATE TABLE t (id INT PRIMARY KEY, v INT, u INT)");
    for chunk in (1..=rows).collect::<Vec<_>>().chunks(2000) {
        let values: Vec<String> = chunk
            .iter()
            .map(|i| format!("({i}, {}, {i})", i % 100))
            .collect();
        run(s, &format!("INSERT INTO t VALUES {}", values.join(",")));
    }
}

/// The state SHOW PROCESSLIST shows for session `id`.
pub fn state_of(s: &mut Session<'_>, id: u64) -> Option<String> {
    run(s, "SHOW PROCESSLIST").into_iter().find_map(|r| {
        (int(&r[0]) as u64 == id).then(|| match &r[6] {
            Value::Str(st) => st.clone(),
            Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            _ => String::new(),
        })
    })
}

/// The error `sql` fails with, if it fails.
pub fn error_of(s: &mut Session<'_>, sql: &str) -> Option<SqlError> {
    try_run(s, sql).err()
}

/// A restart test's skeleton: in a fresh data directory, runs `setup`, reads `queries`,
/// shuts down cleanly, reopens, runs `reopen` (e.g. `USE a`) and reads `queries` again;
/// the two readings must be equal. Then `then` checks what the answers were (so that the
/// comparison is not of two empty results) and goes on in the reopened session.
pub fn same_answers_after_restart(
    setup: &[&str],
    reopen: &[&str],
    queries: &[&str],
    then: impl FnOnce(&mut Session<'_>, &[Vec<Vec<Value>>]),
) {
    let dir = tempfile::tempdir().expect("tmp");
    let answers = |s: &mut Session<'_>| -> Vec<Vec<Vec<Value>>> {
        queries.iter().map(|q| run(s, q)).collect()
    };
    let before = {
        let db = Db::open(dir.path(), Config::default()).expect("open");
        let before = {
            let inst = Instance::new(&db);
            let mut s = inst.session("root", "localhost");
            for q in setup {
                run(&mut s, q);
            }
            answers(&mut s)
        };
        db.shutdown().expect("shutdown");
        before
    };
    let db = Db::open(dir.path(), Config::default()).expect("reopen");
    {
        let inst = Instance::new(&db);
        let mut s = inst.session("root", "localhost");
        for q in reopen {
            run(&mut s, q);
        }
        let after = answers(&mut s);
        assert_eq!(before, after);
        then(&mut s, &after);
    }
    db.shutdown().expect("shutdown");
}
