//! Sessions: one per connection, over one shared [`Instance`].
//!
//! The server calls [`Session::query`] for COM_QUERY, [`Session::prepare`] /
//! [`Session::execute`] for the binary protocol, and reads the status flags after each
//! command. A session holds its open transaction (a `Transaction<'d>` borrowing the `Db`):
//! connection threads are scoped inside the server's lifetime of the `Db`, so no handle
//! outlives it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use quire_engine::row::Value;
use quire_engine::table::Db;

use crate::error::{Result, SqlError};
use crate::meta::{ColumnMeta, RowSink};

/// What a statement did, when it did not send a result set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// An OK packet: affected rows, the last AUTO_INCREMENT value generated, the info text
    /// (`Rows matched: 1  Changed: 1  Warnings: 0`).
    Ok {
        affected_rows: u64,
        last_insert_id: u64,
        info: String,
    },
    /// A result set was sent to the sink (columns, then rows); the server ends it.
    ResultSet,
}

impl Outcome {
    pub fn ok(affected_rows: u64) -> Outcome {
        Outcome::Ok {
            affected_rows,
            last_insert_id: 0,
            info: String::new(),
        }
    }
}

/// What COM_STMT_PREPARE answers.
#[derive(Debug, Clone)]
pub struct PreparedInfo {
    pub id: u32,
    pub params: u16,
    /// Parameter definitions are sent as VAR_STRING placeholders, as MariaDB does.
    pub columns: Vec<ColumnMeta>,
}

/// Kill requests (`KILL QUERY id`, `KILL id`).
pub mod kill {
    pub const NONE: u8 = 0;
    pub const QUERY: u8 = 1;
    pub const CONNECTION: u8 = 2;
}

/// What SHOW PROCESSLIST shows of a session, and how KILL reaches it.
#[derive(Debug)]
pub struct SessionInfo {
    pub id: u64,
    pub user: String,
    pub host: String,
    pub db: Mutex<Option<String>>,
    /// `Sleep`, `Query`, `Execute`, ... (set by the server per command).
    pub command: Mutex<&'static str>,
    pub info: Mutex<Option<String>>,
    pub since: Mutex<Instant>,
    /// [`kill`] flags.
    pub killed: AtomicU8,
}

impl SessionInfo {
    /// The server marks the start of a command.
    pub fn set_command(&self, command: &'static str, info: Option<&str>) {
        *self.command.lock() = command;
        *self.info.lock() = info.map(|s| s.chars().take(1024).collect());
        *self.since.lock() = Instant::now();
    }
    pub fn kill_requested(&self) -> u8 {
        self.killed.load(Ordering::Acquire)
    }
}

/// What all sessions share: the database, global variables, the session registry.
pub struct Instance<'d> {
    pub db: &'d Db,
    pub(crate) next_conn: AtomicU64,
    pub(crate) sessions: Mutex<BTreeMap<u64, Arc<SessionInfo>>>,
    pub(crate) started: Instant,
}

impl<'d> Instance<'d> {
    pub fn new(db: &'d Db) -> Instance<'d> {
        Instance {
            db,
            next_conn: AtomicU64::new(1),
            sessions: Mutex::new(BTreeMap::new()),
            started: Instant::now(),
        }
    }

    /// A new session for a connection that has authenticated as `user` from `host`.
    pub fn session(&'d self, user: &str, host: &str) -> Session<'d> {
        let id = self.next_conn.fetch_add(1, Ordering::Relaxed);
        self.session_with_id(id, user, host)
    }

    /// A connection id for the handshake, before the session exists.
    pub fn next_connection_id(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    /// A session under an id taken with [`Instance::next_connection_id`].
    pub fn session_with_id(&'d self, id: u64, user: &str, host: &str) -> Session<'d> {
        let info = Arc::new(SessionInfo {
            id,
            user: user.into(),
            host: host.into(),
            db: Mutex::new(None),
            command: Mutex::new("Sleep"),
            info: Mutex::new(None),
            since: Mutex::new(Instant::now()),
            killed: AtomicU8::new(kill::NONE),
        });
        self.sessions.lock().insert(id, info.clone());
        Session::new(self, info)
    }

    /// Sessions registered now (SHOW PROCESSLIST).
    pub fn sessions(&self) -> Vec<Arc<SessionInfo>> {
        self.sessions.lock().values().cloned().collect()
    }

    /// A global variable's value as the server needs it (`max_connections`,
    /// `max_allowed_packet`, ...).
    pub fn global_u64(&self, name: &str) -> Option<u64> {
        crate::vars::global_u64(self, name)
    }
}

/// One connection's SQL state: current database, transaction, variables, prepared
/// statements, warnings.
pub struct Session<'d> {
    pub(crate) inst: &'d Instance<'d>,
    pub(crate) info: Arc<SessionInfo>,
}

impl<'d> Session<'d> {
    fn new(inst: &'d Instance<'d>, info: Arc<SessionInfo>) -> Session<'d> {
        Session { inst, info }
    }

    pub fn id(&self) -> u64 {
        self.info.id
    }

    pub fn info(&self) -> &Arc<SessionInfo> {
        &self.info
    }

    /// COM_QUERY: runs one statement. A result set goes to `sink`.
    pub fn query(&mut self, sql: &str, sink: &mut dyn RowSink) -> Result<Outcome> {
        let _ = (sql, sink);
        Err(SqlError::Unsupported("queries".into()))
    }

    /// COM_STMT_PREPARE.
    pub fn prepare(&mut self, sql: &str) -> Result<PreparedInfo> {
        let _ = sql;
        Err(SqlError::Unsupported("prepared statements".into()))
    }

    /// The number of parameters of prepared statement `id` (to decode COM_STMT_EXECUTE).
    pub fn param_count(&self, id: u32) -> Option<u16> {
        let _ = id;
        None
    }

    /// COM_STMT_EXECUTE with decoded parameters (long data already appended by the server).
    pub fn execute(&mut self, id: u32, params: &[Value], sink: &mut dyn RowSink) -> Result<Outcome> {
        let _ = (params, sink);
        Err(SqlError::UnknownStatement {
            id,
            what: "mysqld_stmt_execute",
        })
    }

    /// COM_STMT_RESET: a statement's cursor and long data are gone.
    pub fn reset_prepared(&mut self, id: u32) -> Result<()> {
        Err(SqlError::UnknownStatement {
            id,
            what: "mysqld_stmt_reset",
        })
    }

    /// COM_STMT_CLOSE (no answer on the wire, even for an unknown id).
    pub fn close_prepared(&mut self, id: u32) {
        let _ = id;
    }

    /// COM_INIT_DB.
    pub fn use_database(&mut self, db: &str) -> Result<()> {
        Err(SqlError::UnknownDatabase(db.into()))
    }

    pub fn current_database(&self) -> Option<String> {
        self.info.db.lock().clone()
    }

    /// COM_FIELD_LIST: the columns of `table` in the current database.
    pub fn field_list(&mut self, table: &str) -> Result<Vec<ColumnMeta>> {
        Err(SqlError::NoSuchTable {
            db: self.current_database().unwrap_or_default(),
            table: table.into(),
        })
    }

    /// COM_STATISTICS text.
    pub fn statistics(&self) -> String {
        format!(
            "Uptime: {}  Threads: {}  Questions: 0  Slow queries: 0  Opens: 0  Open tables: 0  Queries per second avg: 0.000",
            self.inst.started.elapsed().as_secs(),
            self.inst.sessions.lock().len()
        )
    }

    /// SERVER_STATUS_IN_TRANS.
    pub fn in_transaction(&self) -> bool {
        false
    }

    /// SERVER_STATUS_AUTOCOMMIT.
    pub fn autocommit(&self) -> bool {
        true
    }

    /// Warnings of the last statement (OK and EOF packets carry the count).
    pub fn warning_count(&self) -> u16 {
        0
    }

    /// A session variable as the server needs it (`wait_timeout`, ...).
    pub fn session_u64(&self, name: &str) -> Option<u64> {
        crate::vars::global_u64(self.inst, name)
    }

    /// Ends the session: an open transaction is rolled back.
    pub fn close(self) {}
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        self.inst.sessions.lock().remove(&self.info.id);
    }
}
