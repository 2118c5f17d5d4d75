//! What the fuzz targets share: a small database on the simulated file system, kept from
//! one input to the next and made again every [`RENEW_EVERY`] inputs, so that what the
//! inputs leave behind (tables made or dropped, rows) cannot drift far from the start.

use std::path::Path;
use std::sync::{Arc, Mutex};

use quire_engine::config::Config;
use quire_engine::table::Db;
use quire_io::sim::SimVfs;
use quire_io::Vfs;

/// The data directory inside the simulator.
pub const DIR: &str = "/data";

/// Inputs run on one database before it is made again.
pub const RENEW_EVERY: u64 = 2000;

/// A small engine: a few MiB of buffer pool and log, as the server tests use.
pub fn config() -> Config {
    config_sized("4M", "4M")
}

/// The smallest engine that holds [`SCHEMA`]: the `pages` target opens one per input.
pub fn tiny_config() -> Config {
    config_sized("1M", "1M")
}

fn config_sized(pool: &str, log: &str) -> Config {
    let mut c = Config::default();
    for (k, v) in [
        ("innodb_page_size", "4K"),
        ("innodb_buffer_pool_size", pool),
        ("innodb_log_file_size", log),
        ("innodb_log_buffer_size", "256K"),
        ("innodb_flush_log_at_trx_commit", "2"),
    ] {
        if let Err(e) = c.set(k, v) {
            panic!("fuzz config {k}={v}: {e}");
        }
    }
    c
}

/// Opens a new database in a new simulator (seed 0: the same every time).
pub fn open_db() -> Db {
    let vfs: Arc<dyn Vfs> = Arc::new(SimVfs::new(0));
    match Db::open_with(vfs, Path::new(DIR), config()) {
        Ok(db) => db,
        Err(e) => panic!("cannot open the fuzz database: {e}"),
    }
}

struct Slot {
    db: Option<Db>,
    runs: u64,
}

static SLOT: Mutex<Slot> = Mutex::new(Slot { db: None, runs: 0 });

/// Runs `f` on the shared database, made (and set up with `setup`) when missing or after
/// [`RENEW_EVERY`] inputs.
pub fn with_db<R>(setup: fn(&Db), f: impl FnOnce(&Db) -> R) -> R {
    let mut slot = SLOT.lock().unwrap_or_else(|p| p.into_inner());
    slot.runs += 1;
    if slot.runs.is_multiple_of(RENEW_EVERY) {
        if let Some(old) = slot.db.take() {
            old.kill();
        }
    }
    let db = slot.db.get_or_insert_with(|| {
        let db = open_db();
        setup(&db);
        db
    });
    f(db)
}

/// Statements that only wait: the fuzzer would find nothing but timeouts in them. SLEEP
/// holds its session for up to an hour by design (`max_execution_time` is not enforced).
pub fn only_waits(text: &[u8]) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.windows(5).any(|w| w == b"sleep")
}

/// Statements that would reach outside the simulator: the slow and general logs write
/// real files (at a path a statement may choose).
pub fn writes_host_files(text: &[u8]) -> bool {
    let lower = text.to_ascii_lowercase();
    [&b"slow_query_log"[..], b"general_log", b"log_error"]
        .iter()
        .any(|n| lower.windows(n.len()).any(|w| w == *n))
}

/// The tables both SQL-reaching targets start with, rows in each.
pub const SCHEMA: &[&str] = &[
    "CREATE DATABASE fz",
    "USE fz",
    "CREATE TABLE t1 (id INT PRIMARY KEY AUTO_INCREMENT, a INT, b VARCHAR(20), c TEXT, \
     d DATE, x DECIMAL(10,2), KEY (a), UNIQUE KEY (b))",
    "INSERT INTO t1 (a, b, c, d, x) VALUES (1, 'one', 'first', '2024-01-02', 1.5), \
     (2, 'two', REPEAT('x', 5000), '1999-12-31', -2.25), (NULL, NULL, NULL, NULL, NULL), \
     (3, 'three', 'third', '2000-02-29', 100)",
    "CREATE TABLE t2 (k BIGINT, s CHAR(3), e ENUM('a','b'), j JSON, y YEAR, bl BLOB)",
    "INSERT INTO t2 VALUES (1, 'abc', 'a', '{\"k\": [1, 2]}', 2024, x'00ff'), \
     (1, 'abd', 'b', '[]', 1999, NULL), (-5, NULL, NULL, NULL, NULL, REPEAT(x'aa', 9000))",
    "CREATE VIEW v1 AS SELECT a, b FROM t1 WHERE a > 1",
];

/// A result sink that counts rows and keeps none (a fuzzed query may return many).
#[derive(Default)]
pub struct Discard {
    pub rows: u64,
}

impl quire_sql::RowSink for Discard {
    fn columns(&mut self, _: &[quire_sql::ColumnMeta]) -> Result<(), quire_sql::SinkError> {
        Ok(())
    }
    fn row(&mut self, _: &[quire_sql::Value]) -> Result<(), quire_sql::SinkError> {
        self.rows += 1;
        Ok(())
    }
}

/// Makes [`SCHEMA`] in `db` through a SQL session (the setup of the `sql` target).
pub fn make_schema(db: &Db) {
    let inst = quire_sql::Instance::new(db);
    let mut s = inst.session("root", "localhost");
    for sql in SCHEMA {
        if let Err(e) = s.query(sql, &mut Discard::default()) {
            panic!("fuzz schema: {sql}: {e}");
        }
    }
}
