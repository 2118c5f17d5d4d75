//! Sessions: one per connection, over one shared [`Instance`].
//!
//! The server calls [`Session::query`] for COM_QUERY, [`Session::prepare`] /
//! [`Session::execute`] for the binary protocol, and reads the status flags after each
//! command. A session holds its open transaction (a `Transaction<'d>` borrowing the `Db`):
//! connection threads are scoped inside the server's lifetime of the `Db`, so no handle
//! outlives it.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::{Mutex, RwLock};
use quire_engine::row::Value;
use quire_engine::table::{Db, Transaction};
use quire_engine::trx::Isolation;

use crate::bind::Conn;
use crate::diag::{Diagnostics, Level, SqlMode};
use crate::error::{Result, SqlError};
use crate::expr::VarKind;
use crate::meta::{ColumnMeta, RowSink};
use crate::stmt::Planned;
use crate::vars::Globals;

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
    /// The statement ran past max_statement_time (`Instance::expire_statements`): it stops
    /// as under KILL QUERY, and fails with 1969 rather than 1317.
    pub const TIMEOUT: u8 = 3;
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
    /// SHOW PROCESSLIST's Info ([`SessionInfo::info_text`]).
    info: Mutex<Info>,
    /// SHOW PROCESSLIST's State: what the running statement waits for, "" otherwise.
    pub state: Mutex<&'static str>,
    pub since: Mutex<Instant>,
    /// [`kill`] flags.
    pub killed: AtomicU8,
    /// When the running statement has to have ended (max_statement_time); `None`: no limit,
    /// or no statement.
    deadline: Mutex<Option<Instant>>,
    /// Set with `killed`: ends a lock wait the session is in (the engine polls it).
    pub interrupt: Arc<AtomicBool>,
    /// The connection's TLS version and cipher (SHOW STATUS's Ssl_version, Ssl_cipher);
    /// `None` on a plain connection. Set by the server once, after the handshake.
    pub tls: Mutex<Option<(String, String)>>,
    /// SHOW PROCESSLIST's Progress, in thousandths of a percent: how far an ALTER TABLE
    /// that reports it has got (an online index build); 0 otherwise.
    pub progress: AtomicU32,
    /// The account (user, host pattern) the login matched, once the server set it: what
    /// max_user_connections counts by (MariaDB's `user_conn` key).
    pub account: Mutex<Option<(String, String)>>,
    /// The engine transaction the session has open and when it began (microseconds since
    /// the epoch): INNODB_TRX's trx_started and trx_mysql_thread_id. `None` between them.
    pub trx: Mutex<Option<(u64, i64)>>,
}

/// The running command's text, up to [`INFO_CHARS`] characters. The buffer is kept between
/// commands (`shown` says whether there is one), so that marking a statement's start does
/// not allocate.
#[derive(Debug, Default, Clone)]
struct Info {
    shown: bool,
    text: String,
}

/// The characters of a command's text SHOW PROCESSLIST keeps.
const INFO_CHARS: usize = 1024;

impl SessionInfo {
    /// The server marks the start of a command.
    pub fn set_command(&self, command: &'static str, info: Option<&str>) {
        *self.command.lock() = command;
        {
            let mut i = self.info.lock();
            i.shown = info.is_some();
            i.text.clear();
            if let Some(s) = info {
                // No more than INFO_CHARS characters: only a text of more bytes can have more.
                let end = match s.len() > INFO_CHARS {
                    true => s
                        .char_indices()
                        .nth(INFO_CHARS)
                        .map_or(s.len(), |(at, _)| at),
                    false => s.len(),
                };
                i.text.push_str(&s[..end]);
            }
        }
        *self.since.lock() = Instant::now();
    }

    /// The running command's text (SHOW PROCESSLIST's Info), `None` between commands.
    pub fn info_text(&self) -> Option<String> {
        let i = self.info.lock();
        i.shown.then(|| i.text.clone())
    }

    /// The statement starts or stops waiting for `state` (SHOW PROCESSLIST).
    pub(crate) fn set_state(&self, state: &'static str) {
        *self.state.lock() = state;
    }
    pub fn kill_requested(&self) -> u8 {
        self.killed.load(Ordering::Acquire)
    }

    /// KILL QUERY (`kill::QUERY`) or KILL (`kill::CONNECTION`): the running statement stops
    /// at its next row or lock wait.
    pub fn kill(&self, how: u8) {
        self.killed.store(how, Ordering::Release);
        self.interrupt.store(true, Ordering::Release);
    }

    /// A new statement starts: an earlier KILL QUERY no longer applies.
    pub(crate) fn clear_kill(&self) {
        if matches!(
            self.killed.load(Ordering::Acquire),
            kill::QUERY | kill::TIMEOUT
        ) {
            self.killed.store(kill::NONE, Ordering::Release);
        }
        if self.killed.load(Ordering::Acquire) == kill::NONE {
            self.interrupt.store(false, Ordering::Release);
        }
    }
}

/// What all sessions share: the database, global variables, the session registry.
pub struct Instance<'d> {
    pub db: &'d Db,
    pub(crate) next_conn: AtomicU64,
    pub(crate) sessions: Mutex<BTreeMap<u64, Arc<SessionInfo>>>,
    pub(crate) started: Instant,
    pub(crate) globals: RwLock<Globals>,
    /// Bumped by every DDL: cached and prepared plans made before it are re-planned.
    pub(crate) generation: AtomicU64,
    pub(crate) questions: AtomicU64,
    /// `Com_*` statement counters (`status.rs`).
    pub(crate) com: crate::status::ComCounters,
    /// Runs of subquery plans, all sessions (a cached answer is no run): what shows that
    /// an uncorrelated subquery runs once per statement (`subquery.rs`).
    pub(crate) subquery_runs: AtomicU64,
    /// Prepared statements kept by all sessions (by id and by name): at most
    /// `max_prepared_stmt_count` (`Session::reserve_prepared`).
    pub(crate) prepared_count: AtomicU64,
    /// Metadata locks: DDL waits for the transactions that use its tables (`mdl.rs`).
    pub(crate) mdl: crate::mdl::Mdl,
    /// SHUTDOWN (or COM_SHUTDOWN) asked the server to stop; its accept loop polls this.
    shutdown_requested: std::sync::atomic::AtomicBool,
    /// Accounts and privileges (`acl.rs`, `users.rs`).
    pub(crate) acl: crate::acl::AclState,
    /// Bytes, connections, rows read, slow queries (`status.rs`).
    pub(crate) counters: crate::status::ServerCounters,
    /// Bumped by FLUSH LOGS and FLUSH SLOW LOGS: the server reopens its log files.
    pub(crate) logs_flushed: AtomicU64,
    /// The MySQL error code of an error, as the server's one table gives it
    /// ([`Instance::set_error_codes`]): DO keeps an evaluation error as a condition.
    error_codes: std::sync::OnceLock<fn(&SqlError) -> Option<u16>>,
    /// GET_LOCK's named locks (`user_locks.rs`).
    pub(crate) user_locks: crate::user_locks::UserLocks,
}

impl<'d> Instance<'d> {
    /// How many times a subquery's plan has been run since the instance started.
    pub fn subquery_runs(&self) -> u64 {
        self.subquery_runs.load(Ordering::Relaxed)
    }

    pub fn new(db: &'d Db) -> Instance<'d> {
        Instance {
            db,
            next_conn: AtomicU64::new(1),
            sessions: Mutex::new(BTreeMap::new()),
            started: Instant::now(),
            globals: RwLock::new(Globals::default()),
            generation: AtomicU64::new(0),
            questions: AtomicU64::new(0),
            com: crate::status::ComCounters::default(),
            subquery_runs: AtomicU64::new(0),
            prepared_count: AtomicU64::new(0),
            mdl: crate::mdl::Mdl::default(),
            shutdown_requested: std::sync::atomic::AtomicBool::new(false),
            acl: crate::acl::AclState::default(),
            counters: crate::status::ServerCounters::default(),
            logs_flushed: AtomicU64::new(0),
            error_codes: std::sync::OnceLock::new(),
            user_locks: crate::user_locks::UserLocks::default(),
        }
    }

    /// Tells the SQL layer the server's table of error codes (errors become codes only at
    /// the server boundary): DO records an error it swallows under its code.
    pub fn set_error_codes(&self, f: fn(&SqlError) -> Option<u16>) {
        let _ = self.error_codes.set(f);
    }

    /// The code of `e`, if the server told its table.
    pub(crate) fn error_code(&self, e: &SqlError) -> Option<u16> {
        self.error_codes.get().and_then(|f| f(e))
    }

    /// How many times FLUSH LOGS (or FLUSH SLOW LOGS) has run: a log file opened before
    /// the last one is closed and opened again.
    pub fn logs_flushed(&self) -> u64 {
        self.logs_flushed.load(Ordering::Relaxed)
    }

    /// The server's counters (`status.rs`): the server layer adds bytes and connections.
    pub fn counters(&self) -> &crate::status::ServerCounters {
        &self.counters
    }

    /// The server's counters and gauges: the engine's (`Db::stats`) and the server's own
    /// (Uptime, Threads_connected, Questions), as SHOW GLOBAL STATUS and `/metrics` give them.
    pub fn global_status(&self) -> Vec<(String, u64)> {
        let mut all: Vec<(String, u64)> = self.db.stats();
        all.push(("Uptime".into(), self.started.elapsed().as_secs()));
        all.push((
            "Threads_connected".into(),
            self.sessions.lock().len() as u64,
        ));
        all.push(("Questions".into(), self.questions.load(Ordering::Relaxed)));
        // Sessions running a command now (not idle between commands), as MariaDB counts.
        let running = self
            .sessions
            .lock()
            .values()
            .filter(|s| *s.command.lock() != "Sleep")
            .count();
        all.push(("Threads_running".into(), running as u64));
        all.extend(self.counters.all().map(|(n, v)| (n.to_string(), v)));
        all.push((
            "Prepared_stmt_count".into(),
            self.prepared_count.load(Ordering::Relaxed),
        ));
        all.extend(self.com.all().map(|(n, v)| (n.to_string(), v)));
        all
    }

    /// The accounts: what the handshake authenticates against.
    pub fn acl(&self) -> &crate::acl::AclState {
        &self.acl
    }

    /// The server is asked to shut down as on SIGTERM (SHUTDOWN, COM_SHUTDOWN).
    pub fn request_shutdown(&self) {
        self.shutdown_requested.store(true, Ordering::Release);
    }

    pub fn shutdown_requested(&self) -> bool {
        self.shutdown_requested.load(Ordering::Acquire)
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
        let admitted: std::result::Result<Session<'d>, std::convert::Infallible> =
            self.admit_session(id, user, host, None, |_| Ok(()));
        match admitted {
            Ok(s) => s,
            Err(never) => match never {},
        }
    }

    /// A session under an id taken with [`Instance::next_connection_id`], logged in as
    /// `account`, if `admit` accepts it given the sessions open now: the check and the
    /// registration are one step under the sessions' lock, so two logins at once cannot both
    /// pass a connection limit (MariaDB's `LOCK_user_conn`). `admit` must not ask the
    /// instance for its sessions (the lock is held).
    pub fn admit_session<E>(
        &'d self,
        id: u64,
        user: &str,
        host: &str,
        account: Option<(String, String)>,
        admit: impl FnOnce(&mut dyn Iterator<Item = &SessionInfo>) -> std::result::Result<(), E>,
    ) -> std::result::Result<Session<'d>, E> {
        let info = Arc::new(SessionInfo {
            id,
            user: user.into(),
            host: host.into(),
            db: Mutex::new(None),
            command: Mutex::new("Sleep"),
            info: Mutex::new(Info::default()),
            state: Mutex::new(""),
            since: Mutex::new(Instant::now()),
            trx: Mutex::new(None),
            killed: AtomicU8::new(kill::NONE),
            deadline: Mutex::new(None),
            interrupt: Arc::new(AtomicBool::new(false)),
            tls: Mutex::new(None),
            progress: AtomicU32::new(0),
            account: Mutex::new(account.clone()),
        });
        let open = {
            let mut sessions = self.sessions.lock();
            admit(&mut sessions.values().map(|s| &**s))?;
            sessions.insert(id, info.clone());
            sessions.len() as u64
        };
        self.counters
            .max_used_connections
            .fetch_max(open, Ordering::Relaxed);
        let mut session = Session::new(self, info);
        if let Some((u, h)) = account {
            session.set_account(&u, &h);
        }
        Ok(session)
    }

    /// Sessions registered now (SHOW PROCESSLIST).
    pub fn sessions(&self) -> Vec<Arc<SessionInfo>> {
        self.sessions.lock().values().cloned().collect()
    }

    /// Stops the statements that have run past their max_statement_time, as KILL QUERY
    /// stops one (`kill::TIMEOUT`: they fail with 1969). The server calls this every few
    /// tens of milliseconds, so a statement ends that much after its limit at most (and,
    /// as in MariaDB, at its next row or lock wait). A session killed otherwise already is
    /// left as it is.
    pub fn expire_statements(&self) {
        let now = Instant::now();
        for s in self.sessions.lock().values() {
            let mut deadline = s.deadline.lock();
            if !matches!(*deadline, Some(d) if d <= now) {
                continue;
            }
            *deadline = None;
            let timed_out = s
                .killed
                .compare_exchange(
                    kill::NONE,
                    kill::TIMEOUT,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_ok();
            if timed_out {
                s.interrupt.store(true, Ordering::Release);
            }
        }
    }

    /// A global variable's value as the server needs it (`max_connections`,
    /// `max_allowed_packet`, ...).
    pub fn global_u64(&self, name: &str) -> Option<u64> {
        crate::vars::global_u64(self, name)
    }

    /// Sets a server variable's global value at start-up (`quire serve --set`).
    pub fn set_global(&self, name: &str, value: &str) -> Result<()> {
        let (name, v) = startup_value(name, value)?;
        let filter = crate::vars::global(self, "log_slow_filter");
        let link = crate::vars::linked(&name, &v, filter.as_ref());
        let mut g = self.globals.write();
        if let Some((other, ov)) = link {
            g.values.insert(other.to_string(), ov);
        }
        g.values.insert(name, v);
        Ok(())
    }
}

/// A global variable's value as text (`slow_query_log_file`): what the server reads of
/// the variables it acts on.
pub fn global_text(inst: &Instance<'_>, name: &str) -> Option<String> {
    crate::vars::global(inst, name).map(|v| crate::types::display(&v))
}

/// A server variable's start-up value (`quire serve --set`, an option file) as it is kept:
/// its name lower-cased and its value checked and canonical, or the error SET would give.
pub fn startup_value(name: &str, value: &str) -> Result<(String, Value)> {
    let name = name.to_ascii_lowercase();
    let Some(def) = crate::vars::find(&name) else {
        return Err(SqlError::UnknownVariable(name));
    };
    // Kept under the variable's own name, not an alias's.
    let name = def.name.to_string();
    // Read-only to SET, not to the server's own configuration (have_ssl, ssl_cert, …).
    if def.kind == crate::vars::Kind::ReadOnly {
        return Ok((name, Value::Str(value.into())));
    }
    let v = match (value.parse::<i64>(), value.parse::<u64>()) {
        (Ok(i), _) => Value::Int(i),
        // Past i64: `sql_select_limit`'s and `max_join_size`'s maximum.
        (_, Ok(u)) => Value::UInt(u),
        _ => Value::Str(value.into()),
    };
    let v = match name.as_str() {
        // Kept canonical: sessions start from it.
        "sql_mode" => Value::Str(
            SqlMode::parse(value)
                .map_err(|bad| SqlError::WrongValueForVariable {
                    name: name.clone(),
                    value: bad,
                })?
                .to_string(),
        ),
        "collation_connection" => Value::Str(
            crate::bind::connection_collation(value, crate::bind::LITERAL_COLLATION)?
                .name()
                .to_string(),
        ),
        _ => crate::vars::normalize(&name, &v)?,
    };
    Ok((name, v))
}

/// A statement kept for re-execution: a prepared statement or a COM_QUERY cache entry.
#[derive(Debug, Clone)]
pub(crate) struct Kept {
    pub sql: String,
    pub generation: u64,
    /// The statistics epoch its plan read the tables' statistics at (a join's order:
    /// docs/sql.md, "Statistics"); `None`: its plan read none.
    pub stats_epoch: Option<u64>,
    pub db: Option<String>,
    /// `None`: a statement that is executed from its text each time (DDL, SHOW, SET, …).
    pub planned: Option<Arc<Planned>>,
    pub params: u16,
    pub columns: Vec<ColumnMeta>,
    /// collation_connection and sql_mode it was bound under: the COM_QUERY cache makes
    /// the plan again under others; a prepared statement keeps them (MariaDB binds its
    /// literals at PREPARE), also when a DDL makes it plan again.
    pub conn: Conn,
    /// Its `Com_*` counter (`status::kind`), read once here rather than per execution.
    pub com: Option<&'static str>,
}

impl Kept {
    /// Whether its plan may run as made: no DDL since (`generation`), and no statistics
    /// it was ordered by replaced or gone stale since (`stats_epoch`).
    pub(crate) fn current(&self, generation: u64, db: &quire_engine::table::DbInner) -> bool {
        self.generation == generation && self.stats_epoch.is_none_or(|e| e == db.stats_epoch())
    }
}

/// Whether a statement that is not planned (SHOW, DESCRIBE, DDL, SET, …) uses tables:
/// MariaDB clears the diagnostics area when such a statement starts (docs/sql.md,
/// "Warnings"). SHOW WARNINGS, SHOW ERRORS, SHOW COUNT(*) and SHOW PROCESSLIST do not;
/// neither do SET, USE, BEGIN, COMMIT, KILL, CREATE DATABASE and DROP DATABASE.
fn uses_tables(text: &str) -> bool {
    let mut words = text
        .split(|c: char| c.is_whitespace() || c == '(' || c == ';')
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase);
    let first = words.next().unwrap_or_default();
    let mut second = words.next().unwrap_or_default();
    if second == "full" {
        second = words.next().unwrap_or_default();
    }
    match first.as_str() {
        "show" => !matches!(
            second.as_str(),
            "warnings" | "errors" | "count" | "processlist"
        ),
        "create" | "drop" => !matches!(second.as_str(), "database" | "schema"),
        "describe" | "desc" | "explain" | "check" | "analyze" | "optimize" | "flush" | "lock"
        | "checksum" | "truncate" | "rename" | "alter" | "insert" | "replace" | "update"
        | "delete" => true,
        _ => false,
    }
}

/// Whether `text` is a SHOW (or DESCRIBE of a table) that MariaDB runs as a SELECT on an
/// information_schema table, so that `sql_select_limit` applies to it: SHOW TABLES,
/// VARIABLES, STATUS, COLUMNS, INDEX, … but not SHOW CREATE, WARNINGS, PROCESSLIST or
/// GRANTS, nor EXPLAIN (`DESCRIBE SELECT …`).
fn show_from_information_schema(text: &str) -> bool {
    let mut words = text
        .split(|c: char| c.is_whitespace() || c == '(' || c == '`')
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase);
    match words.next().as_deref() {
        Some("show") => {
            let word = words.find(|w| {
                !matches!(
                    w.as_str(),
                    "full" | "global" | "session" | "local" | "extended" | "storage"
                )
            });
            matches!(
                word.as_deref(),
                Some(
                    "databases"
                        | "schemas"
                        | "tables"
                        | "table"
                        | "open"
                        | "columns"
                        | "fields"
                        | "index"
                        | "indexes"
                        | "keys"
                        | "variables"
                        | "status"
                        | "collation"
                        | "character"
                        | "charset"
                        | "engines"
                        | "plugins"
                        | "triggers"
                        | "events"
                        | "procedure"
                        | "function"
                )
            )
        }
        Some("describe" | "desc") => !matches!(
            words.next().as_deref(),
            None | Some(
                "select"
                    | "insert"
                    | "replace"
                    | "update"
                    | "delete"
                    | "with"
                    | "format"
                    | "extended"
                    | "partitions"
                    | "analyze"
            )
        ),
        _ => false,
    }
}

/// Passes on the first `left` rows of a result set (a SHOW under `sql_select_limit`).
struct LimitSink<'a> {
    sink: &'a mut dyn RowSink,
    left: u64,
}

impl RowSink for LimitSink<'_> {
    fn columns(
        &mut self,
        cols: &[crate::meta::ColumnMeta],
    ) -> std::result::Result<(), crate::meta::SinkError> {
        self.sink.columns(cols)
    }
    fn row(&mut self, row: &[Value]) -> std::result::Result<(), crate::meta::SinkError> {
        if self.left == 0 {
            return Ok(());
        }
        self.left -= 1;
        self.sink.row(row)
    }
    fn local_infile(&mut self, name: &str) -> Option<Box<dyn std::io::Read + '_>> {
        self.sink.local_infile(name)
    }
}

/// Whether `text` may name a user variable (an `@` that is not part of `@@`) or call
/// GROUP_CONCAT: its binding depends on session state beyond the plan cache's key. (Such
/// text inside a string literal counts too: that statement is only planned again each
/// time.)
/// The plan of a one-row INSERT shape (`shape::insert_rows`) repeated for `rows` rows, row
/// `r` reading parameters `r * arity ..`: the plan its text's full parse would give, since a
/// literal of a VALUES row and a parameter in its place bind alike (`shape.rs`). `None`
/// unless the planned row is exactly its parameters, in order.
fn rows_plan(one: &Planned, arity: usize, rows: usize) -> Option<Planned> {
    let Planned::Insert(ip) = one else {
        return None;
    };
    let crate::stmt::InsertSource::Values(v) = &ip.source else {
        return None;
    };
    let [row] = v.as_slice() else {
        return None;
    };
    let plain = row.len() == arity
        && row
            .iter()
            .enumerate()
            .all(|(j, e)| matches!(e, crate::expr::Expr::Param(i) if *i == j));
    if !plain || ip.on_dup.is_some() || ip.returning.is_some() || !ip.subqueries.is_empty() {
        return None;
    }
    let mut plan = ip.clone();
    plan.source = crate::stmt::InsertSource::Values(
        (0..rows)
            .map(|r| {
                (0..arity)
                    .map(|j| crate::expr::Expr::Param(r * arity + j))
                    .collect()
            })
            .collect(),
    );
    Some(Planned::Insert(plan))
}

fn bound_to_session(text: &str) -> bool {
    let b = text.as_bytes();
    b.iter()
        .enumerate()
        .any(|(i, &c)| c == b'@' && b.get(i + 1) != Some(&b'@') && (i == 0 || b[i - 1] != b'@'))
        || text.to_ascii_lowercase().contains("group_concat")
}

/// Statements of the plan cache per session (COM_QUERY text → plan).
const PLAN_CACHE_MAX: usize = 128;

/// Session state that expressions read (kept apart from the transaction so both can be
/// borrowed at once).
pub(crate) struct SessVars {
    pub info: Arc<SessionInfo>,
    pub conn_id: u64,
    pub user: String,
    pub host: String,
    pub db: Option<String>,
    pub vars: quire_engine::hash::Map<String, Value>,
    /// LAST_INSERT_ID(): set by an INSERT that generated an AUTO_INCREMENT value, and by
    /// `LAST_INSERT_ID(e)` while a statement evaluates (so through `&self`: `Env`).
    pub last_insert_id: std::cell::Cell<u64>,
    /// `LAST_INSERT_ID(e)` ran in the statement (MariaDB's `arg_of_last_insert_id_function`):
    /// an INSERT or UPDATE's OK packet then carries that value.
    pub insert_id_arg: std::cell::Cell<bool>,
    pub row_count: i64,
    pub found_rows: u64,
    /// SHOW WARNINGS (borrowed mutably while a statement evaluates: `Env::warn`).
    pub diag: RefCell<Diagnostics>,
    /// `sql_mode` in force (its text is in `vars` too).
    pub mode: SqlMode,
    /// `collation_connection`: string literals and parameters compare in it.
    pub coll: quire_engine::row::Collation,
    /// `sql_safe_updates` in force (its value is in `vars` too): read by every UPDATE and
    /// DELETE, so kept here rather than looked up.
    pub safe_updates: bool,
    /// `sql_select_limit` in force (in `vars` too); `u64::MAX`: none. Read by every
    /// SELECT.
    pub select_limit: u64,
    /// User variables (`@name`, lower-cased), each with what it holds; they live as long as
    /// the session (MariaDB's `user_vars`). Assigned while a statement evaluates
    /// (`@x := e` in a select list), so borrowed mutably through `&self` (`Env`).
    pub user_vars: RefCell<HashMap<String, (Value, VarKind)>>,
    /// The account and its privilege checks (`users.rs`).
    pub acct: crate::users::SessionAcct,
    /// This session's status counters (SHOW SESSION STATUS).
    pub status: crate::status::SessionCounters,
}

/// A boolean variable's value as the session caches it.
pub(crate) fn cached_on(v: &Value) -> bool {
    matches!(v, Value::Int(1) | Value::UInt(1))
}

/// A `Kind::Rows` variable's value as the session caches it (`u64::MAX`: no limit).
pub(crate) fn cached_rows(v: &Value) -> u64 {
    match v {
        Value::UInt(u) => *u,
        Value::Int(i) => u64::try_from(*i).unwrap_or(0),
        _ => u64::MAX,
    }
}

impl SessVars {
    /// A session variable was set to `v`: the copies kept in fields follow.
    pub(crate) fn cache_var(&mut self, name: &str, v: &Value) {
        match name {
            "sql_safe_updates" => self.safe_updates = cached_on(v),
            "sql_select_limit" => self.select_limit = cached_rows(v),
            _ => {}
        }
    }

    /// `max_error_count`: how many conditions SHOW WARNINGS keeps.
    pub(crate) fn max_error_count(&self, inst: &Instance<'_>) -> usize {
        let v = match self.vars.get("max_error_count") {
            Some(Value::Int(i)) => Some((*i).max(0) as u64),
            _ => crate::vars::global_u64(inst, "max_error_count"),
        };
        v.map_or(crate::diag::MAX_ERROR_COUNT_DEFAULT, |n| n as usize)
    }

    /// Raises a condition of the running statement.
    pub(crate) fn raise(&self, inst: &Instance<'_>, level: Level, code: u16, message: String) {
        if level == Level::Note && matches!(self.vars.get("sql_notes"), Some(Value::Int(0))) {
            return;
        }
        let limit = self.max_error_count(inst);
        self.diag.borrow_mut().push(level, code, message, limit);
    }

    /// What binding takes from the session now.
    pub(crate) fn conn(&self) -> Conn {
        Conn {
            coll: self.coll,
            mode: self.mode,
        }
    }
}

/// One connection's SQL state: current database, transaction, variables, prepared
/// statements, warnings.
pub struct Session<'d> {
    pub(crate) inst: &'d Instance<'d>,
    pub(crate) info: Arc<SessionInfo>,
    pub(crate) trx: Option<Transaction<'d>>,
    /// A transaction is open that has only read: it holds `snap` (REPEATABLE READ) and no
    /// engine transaction, so no id and no write (InnoDB's read-only optimization); its
    /// first write or locking read begins one that keeps the snapshot.
    pub(crate) read_open: bool,
    pub(crate) snap: Option<quire_engine::table::Snapshot>,
    /// BEGIN / START TRANSACTION opened the transaction (autocommit does not end it).
    pub(crate) explicit: bool,
    pub(crate) read_only: bool,
    pub(crate) sv: SessVars,
    /// Shared with each execution, which holds its statement while it runs (a clone of
    /// the whole `Kept`, its text and column list, was a thirtieth of a point select).
    pub(crate) prepared: quire_engine::hash::Map<u32, Arc<Kept>>,
    pub(crate) next_stmt: u32,
    /// SQL-level prepared statements by name, lower-cased (`prepare.rs`).
    pub(crate) named: quire_engine::hash::Map<String, Kept>,
    pub(crate) cache: quire_engine::hash::Map<String, Kept>,
    /// Plans of INSERT shapes (`shape.rs`): the text with its literals as `?`.
    pub(crate) shapes: quire_engine::hash::Map<String, Kept>,
    /// Shared metadata locks of the open transaction (or of the running statement outside
    /// one), and the entries this session looked up.
    pub(crate) mdl: crate::mdl::SessionLocks,
    /// LOCK TABLES in effect (`lock_tables.rs`).
    pub(crate) locked: Option<crate::lock_tables::Locked<'d>>,
    /// Temporary tables of this session (`temp.rs`), dropped when it ends.
    pub(crate) temps: crate::temp::Temps,
    /// Set by a join plan that read the tables' statistics ([`crate::stmt::Ctx`]): the
    /// plan is kept with the statistics epoch (`Kept::stats_epoch`).
    pub(crate) stats_used: std::cell::Cell<bool>,
    /// Warnings MariaDB lists after a statement's error (1215 after a malformed foreign
    /// key's 1005), raised by `record_error`.
    pub(crate) after_error: RefCell<Vec<(u16, String)>>,
    /// Rows the last statement read from tables (the slow log's `Rows_examined`).
    pub(crate) last_examined: u64,
    /// The last statement read a whole table or index (no index used to narrow it).
    pub(crate) last_full_scan: bool,
    /// The client asked for CLIENT_FOUND_ROWS: an UPDATE's affected rows (and ROW_COUNT())
    /// are the rows it matched, not those it changed (MariaDB's `client_capabilities`).
    /// SQLAlchemy asks, and takes fewer affected rows than it updated for a lost row.
    pub(crate) client_found_rows: bool,
    /// The running statement has a max_statement_time deadline to take back at its end.
    timer_armed: bool,
}

/// What decides whether a statement goes to the slow query log, read from the session's
/// variables when a statement ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlowLogSettings {
    /// `long_query_time`, in microseconds: a statement slower than this is slow.
    pub long_query_us: u64,
    /// `min_examined_row_limit`: a slow statement that examined fewer rows is not.
    pub min_examined: u64,
    /// `slow_query_log`, global and this session's: slow statements are written.
    pub write: bool,
    /// `log_slow_admin_statements`: ALTER, ANALYZE, OPTIMIZE, CHECK, CREATE/DROP INDEX too.
    pub admin: bool,
}

impl<'d> Session<'d> {
    fn new(inst: &'d Instance<'d>, info: Arc<SessionInfo>) -> Session<'d> {
        // A session starts with the global sql_mode and collation_connection (MariaDB
        // copies them at connect; SET GLOBAL later does not change this session's).
        let mut vars = quire_engine::hash::Map::default();
        let mode = match crate::vars::global(inst, "sql_mode") {
            Some(Value::Str(t)) => SqlMode::parse(&t).unwrap_or_default(),
            _ => SqlMode::default(),
        };
        vars.insert("sql_mode".to_string(), Value::Str(mode.to_string()));
        // So are slow_query_log and log_slow_filter (with log_queries_not_using_indexes, its
        // member), and time_zone (a session's TIMESTAMPs must not change meaning under it):
        // a later SET GLOBAL does not reach sessions already open.
        // And the variables of `mariadb --safe-updates` (MariaDB copies every session
        // variable at connect), two of them cached below. And those every statement reads
        // (its time limit, the slow log's threshold, autocommit, the isolation level and
        // read-only mode, the lock wait): looked up in this session's map they cost a hash
        // lookup, where the global fallback cost a search of the variable table, ~10 % of
        // a point select's instructions (callgrind).
        for name in [
            "max_statement_time",
            "long_query_time",
            "min_examined_row_limit",
            "autocommit",
            "tx_isolation",
            "tx_read_only",
            "lock_wait_timeout",
            "slow_query_log",
            "log_slow_filter",
            "log_queries_not_using_indexes",
            "time_zone",
            "sql_safe_updates",
            "sql_select_limit",
            "max_join_size",
            "sql_big_selects",
        ] {
            if let Some(v) = crate::vars::global(inst, name) {
                vars.insert(name.to_string(), v);
            }
        }
        let safe_updates = vars.get("sql_safe_updates").is_some_and(cached_on);
        let select_limit = vars.get("sql_select_limit").map_or(u64::MAX, cached_rows);
        let coll = match crate::vars::global(inst, "collation_connection") {
            Some(Value::Str(t)) => quire_engine::row::Collation::from_name(&t)
                .unwrap_or(crate::bind::LITERAL_COLLATION),
            _ => crate::bind::LITERAL_COLLATION,
        };
        Session {
            sv: SessVars {
                info: info.clone(),
                conn_id: info.id,
                user: info.user.clone(),
                host: info.host.clone(),
                db: None,
                vars,
                last_insert_id: std::cell::Cell::new(0),
                insert_id_arg: std::cell::Cell::new(false),
                row_count: -1,
                found_rows: 0,
                diag: RefCell::new(Diagnostics::default()),
                mode,
                coll,
                safe_updates,
                select_limit,
                user_vars: RefCell::new(HashMap::new()),
                acct: Default::default(),
                status: Default::default(),
            },
            inst,
            info,
            trx: None,
            read_open: false,
            snap: None,
            explicit: false,
            read_only: false,
            prepared: Default::default(),
            next_stmt: 1,
            named: Default::default(),
            cache: Default::default(),
            shapes: Default::default(),
            mdl: crate::mdl::SessionLocks::default(),
            after_error: RefCell::new(Vec::new()),
            locked: None,
            temps: crate::temp::Temps::default(),
            stats_used: std::cell::Cell::new(false),
            last_examined: 0,
            last_full_scan: false,
            client_found_rows: false,
            timer_armed: false,
        }
    }

    /// Rows the last statement (COM_QUERY or COM_STMT_EXECUTE) read from tables.
    pub fn rows_examined(&self) -> u64 {
        self.last_examined
    }

    /// Whether the last statement should be logged for not using an index: it read a
    /// whole table or index and this session's `log_slow_filter` holds not_using_index
    /// (`log_queries_not_using_indexes`), as MariaDB's `log_slow_statement` decides.
    pub fn logs_not_using_index(&self) -> bool {
        self.last_full_scan
            && self
                .var("log_slow_filter")
                .is_some_and(|f| crate::vars::set_has(&f, "not_using_index"))
    }

    /// `long_query_time` in microseconds: a statement slower than this is slow. Read at
    /// the end of every statement, so it is one lookup, apart from the other settings.
    pub fn long_query_us(&self) -> u64 {
        let long = self.var_f64("long_query_time").unwrap_or(10.0);
        (long * 1e6) as u64
    }

    /// The slow query log's settings as they apply to this session now.
    pub fn slow_log_settings(&self) -> SlowLogSettings {
        let on = |name: &str| self.session_u64(name).is_some_and(|v| v != 0);
        SlowLogSettings {
            long_query_us: self.long_query_us(),
            min_examined: self.session_u64("min_examined_row_limit").unwrap_or(0),
            write: crate::vars::global_u64(self.inst, "slow_query_log").is_some_and(|v| v != 0)
                && on("slow_query_log"),
            admin: on("log_slow_admin_statements"),
        }
    }

    /// A statement ends: its rows examined are this thread's reads since `examined_before`
    /// (`status::thread_rows_examined`), and count in `Innodb_rows_read`.
    fn note_examined(&mut self, before: crate::status::Mark) {
        let now = crate::status::mark();
        let n = now.examined.wrapping_sub(before.examined);
        self.last_examined = n;
        self.last_full_scan = now.full_scans != before.full_scans;
        if n > 0 {
            crate::status::ServerCounters::add(&self.inst.counters.rows_read, n);
        }
    }

    /// COM_RESET_CONNECTION and COM_CHANGE_USER: the session starts over as a new login of
    /// `user` would, keeping its connection id, host and TLS. As MariaDB's
    /// `THD::change_user`: the transaction rolls back, LOCK TABLES and metadata locks are
    /// released, temporary tables are dropped, prepared statements (by id and by name),
    /// user variables, kept plans and warnings go, and the session variables are the
    /// globals again. The caller sets the account and the handshake collation afterwards.
    pub fn start_over(&mut self, user: &str) {
        let inst = self.inst;
        let old = &self.info;
        let info = Arc::new(SessionInfo {
            id: old.id,
            user: user.into(),
            host: old.host.clone(),
            db: Mutex::new(None),
            command: Mutex::new(*old.command.lock()),
            info: Mutex::new(old.info.lock().clone()),
            state: Mutex::new(""),
            since: Mutex::new(*old.since.lock()),
            trx: Mutex::new(None),
            killed: AtomicU8::new(kill::NONE),
            deadline: Mutex::new(None),
            interrupt: Arc::new(AtomicBool::new(false)),
            tls: Mutex::new(old.tls.lock().clone()),
            progress: AtomicU32::new(0),
            account: Mutex::new(None),
        });
        let mut fresh = Session::new(inst, info.clone());
        // The connection's capabilities outlive the session.
        fresh.client_found_rows = self.client_found_rows;
        // Dropping the old session does the rollback and the releases, and unregisters its
        // id; the new one is registered under the same id after that.
        drop(std::mem::replace(self, fresh));
        inst.sessions.lock().insert(info.id, info);
    }

    /// Whether the client's capabilities include CLIENT_FOUND_ROWS (set once, at login).
    pub fn set_client_found_rows(&mut self, on: bool) {
        self.client_found_rows = on;
    }

    pub fn id(&self) -> u64 {
        self.info.id
    }

    pub fn info(&self) -> &Arc<SessionInfo> {
        &self.info
    }

    /// COM_QUERY: runs one statement. A result set goes to `sink`.
    pub fn query(&mut self, sql: &str, sink: &mut dyn RowSink) -> Result<Outcome> {
        self.inst.questions.fetch_add(1, Ordering::Relaxed);
        crate::status::SessionCounters::bump(&self.sv.status.questions, 1);
        self.info.clear_kill();
        let text = crate::dispatch::skip_leading_comments(sql)
            .trim_end()
            .trim_end_matches(';')
            .trim_end();
        let text = crate::dispatch::executable_comment(text).unwrap_or(text);
        self.sv.diag.get_mut().start();
        if text.is_empty() {
            // Only comments (or an executable comment for a newer server): MariaDB answers
            // OK; 1065 is for a query with nothing in it at all.
            if !sql.trim().trim_end_matches(';').trim().is_empty() {
                return Ok(Outcome::ok(0));
            }
            return Err(SqlError::EmptyQuery);
        }
        crate::status::count_statement(&self.inst.com, &self.sv.status, text);
        let examined = crate::status::mark();
        self.arm_statement_timer();
        let r = match crate::dispatch::split_set_statement(text) {
            Some((list, stmt)) => self.set_statement_for(list, stmt, sink),
            // MariaDB answers these SHOWs with a SELECT on information_schema, which
            // sql_select_limit cuts as any other.
            None if self.sv.select_limit != u64::MAX && show_from_information_schema(text) => {
                let mut cut = LimitSink {
                    sink,
                    left: self.sv.select_limit,
                };
                self.query_text(text, &mut cut)
            }
            None => self.query_text(text, sink),
        };
        let r = self.end_statement_timer(r);
        self.note_examined(examined);
        self.after_statement(&r);
        r
    }

    /// DDL in a read-only transaction, or in a session whose transactions are read-only
    /// (SET SESSION TRANSACTION READ ONLY): 1792, as MariaDB (temporary tables too). The
    /// first word is looked at first, so other statements pay no variable lookup.
    fn refuses_ddl_read_only(&self, text: &str) -> bool {
        let first = text.split_whitespace().next().unwrap_or("");
        let ddl = ["create", "drop", "alter", "rename", "truncate"]
            .iter()
            .any(|w| first.eq_ignore_ascii_case(w));
        ddl && self.writes_refused()
    }

    /// MariaDB's `SET STATEMENT list FOR stmt`: the list's session variables hold for
    /// `stmt` only. Each is then set back to what the session had (its old session value,
    /// or DEFAULT where it had none), through SET itself so that what SET keeps beside the
    /// value (the parsed sql_mode, the connection's character set) follows; also when the
    /// statement fails.
    fn set_statement_for(
        &mut self,
        list: &str,
        stmt: &str,
        sink: &mut dyn RowSink,
    ) -> Result<Outcome> {
        let bad = || SqlError::Parse {
            near: list.chars().take(80).collect(),
            line: 1,
        };
        let mut saved = Vec::new();
        for item in crate::dispatch::split_list(list).ok_or_else(bad)? {
            let name = item
                .split(['=', ':'])
                .next()
                .unwrap_or("")
                .trim()
                .trim_matches('`')
                .to_ascii_lowercase();
            // Session variables by their plain names only (no @user variables, no scope).
            if name.is_empty() || name.contains(['@', '.', ' ']) {
                return Err(bad());
            }
            let old = self.sv.vars.get(crate::vars::canonical(&name)).cloned();
            saved.push((name, old));
        }
        // A list that fails part way is undone as well.
        let r = match self.query_text(&format!("SET SESSION {list}"), sink) {
            Ok(_) => {
                // The list may have set max_statement_time itself.
                self.arm_statement_timer();
                self.query_text(stmt, sink)
            }
            Err(e) => Err(e),
        };
        let escapes = !self
            .sv
            .conn()
            .mode
            .has(crate::diag::SqlMode::NO_BACKSLASH_ESCAPES);
        for (name, old) in saved.into_iter().rev() {
            let value = match old {
                None => "DEFAULT".to_string(),
                Some(Value::Int(i)) => i.to_string(),
                Some(Value::UInt(u)) => u.to_string(),
                Some(Value::Double(d)) => d.to_string(),
                Some(v) => {
                    let t = crate::types::display(&v);
                    if t.parse::<f64>().is_ok() {
                        t
                    } else {
                        let t = if escapes { t.replace('\\', "\\\\") } else { t };
                        format!("'{}'", t.replace('\'', "''"))
                    }
                }
            };
            if let Err(e) = self.query_text(&format!("SET SESSION {name} = {value}"), sink) {
                tracing::warn!(variable = %name, error = %e, "SET STATEMENT could not restore a variable");
            }
        }
        r
    }

    /// max_statement_time (seconds, the session's value or the global one; 0: no limit)
    /// starts counting for the statement about to run.
    fn arm_statement_timer(&mut self) {
        let limit = self.var_f64("max_statement_time").unwrap_or(0.0);
        match std::time::Duration::try_from_secs_f64(limit)
            .ok()
            .filter(|d| !d.is_zero())
        {
            Some(d) => {
                *self.info.deadline.lock() = Some(Instant::now() + d);
                self.timer_armed = true;
            }
            // `SET STATEMENT max_statement_time = 0 FOR …` under a global limit.
            None if self.timer_armed => {
                *self.info.deadline.lock() = None;
                self.timer_armed = false;
            }
            None => {}
        }
    }

    /// The statement ended: its limit no longer applies, and if the limit is what stopped
    /// it, it failed with 1969 (MariaDB's ER_STATEMENT_TIMEOUT), not 1317.
    fn end_statement_timer(&mut self, r: Result<Outcome>) -> Result<Outcome> {
        if std::mem::take(&mut self.timer_armed) {
            *self.info.deadline.lock() = None;
        }
        match r {
            Err(SqlError::Interrupted) if self.info.kill_requested() == kill::TIMEOUT => {
                self.info.clear_kill();
                crate::status::ServerCounters::add(
                    &self.inst.counters.max_statement_time_exceeded,
                    1,
                );
                Err(SqlError::StatementTimeout)
            }
            r => r,
        }
    }

    /// Counts a command the server handles without a statement (`Com_stmt_send_long_data`,
    /// `Com_stmt_fetch`, `Com_change_db` for COM_INIT_DB): see `status.rs`.
    pub fn count_stmt_command(&self, name: &'static str) {
        self.count_com(name);
    }

    /// Counts `Com_*` counter `name` for the instance and this session.
    pub(crate) fn count_com(&self, name: &str) {
        crate::status::count_com(&self.inst.com, &self.sv.status, name);
    }

    /// The server counted bytes of this connection (`Bytes_received`, `Bytes_sent`).
    pub fn add_bytes(&self, received: u64, sent: u64) {
        crate::status::SessionCounters::bump(&self.sv.status.bytes_received, received);
        crate::status::SessionCounters::bump(&self.sv.status.bytes_sent, sent);
    }

    /// The server found this session's statement slow (`Slow_queries`).
    pub fn count_slow_query(&self) {
        crate::status::SessionCounters::bump(&self.sv.status.slow_queries, 1);
    }

    pub(crate) fn query_text(&mut self, text: &str, sink: &mut dyn RowSink) -> Result<Outcome> {
        if self.refuses_ddl_read_only(text) {
            return Err(SqlError::ReadOnlyTransaction);
        }
        if !self.sv.acct.bypass {
            // An account statement reads and writes the system tables whole; that is not
            // the client's statement using no index (log_queries_not_using_indexes).
            let before = crate::status::mark();
            let account = self.account_statement(text, sink);
            crate::status::forget_full_scans_since(before);
            if let Some(out) = account? {
                return Ok(out);
            }
            self.check_access(text)?;
        }
        if text
            .get(..4)
            .is_some_and(|w| w.eq_ignore_ascii_case("load"))
        {
            return self.load_data(text, sink);
        }
        let gen = self.inst.generation.load(Ordering::Acquire);
        let conn = self.sv.conn();
        if let Some(k) = self.cache.get(text) {
            if k.current(gen, self.inst.db)
                && k.db == self.sv.db
                && k.conn.plan_key() == conn.plan_key()
            {
                if let Some(p) = k.planned.clone() {
                    return self.run_planned(&p, text, gen, conn, &[], sink);
                }
            }
        }
        if uses_tables(text) {
            self.sv.diag.get_mut().start_using_tables();
        }
        let escapes = !conn.mode.has(crate::diag::SqlMode::NO_BACKSLASH_ESCAPES);
        if let Some(shape) = crate::shape::insert_values(text, escapes) {
            if let Some(p) = self.shape_plan(&shape.text, gen, conn) {
                return self.run_planned(&p, text, gen, conn, &shape.values, sink);
            }
        }
        if let Some((shape, arity)) = crate::shape::insert_rows(text, escapes) {
            let rows = shape.values.len() / arity.max(1);
            if let Some(p) = self
                .shape_plan(&shape.text, gen, conn)
                .and_then(|one| rows_plan(&one, arity, rows))
            {
                return self.run_planned(&Arc::new(p), text, gen, conn, &shape.values, sink);
            }
        }
        if let Some(out) = self.objects_special(text, sink)? {
            return Ok(out);
        }
        if let Some(out) = self.special(text, sink)? {
            return Ok(out);
        }
        // `SELECT … INTO @a, @b` at the end or before FROM: assigned, never kept as a plan.
        let select_like = text
            .get(..6)
            .is_some_and(|w| w.eq_ignore_ascii_case("select"));
        let (body, trailing_into) = match select_like {
            true => crate::dispatch::strip_trailing_into(text),
            false => (text, None),
        };
        let (mut stmt, lock, wait) = crate::parse::parse_query_in(body, conn.mode)?;
        let into = match trailing_into {
            Some(vars) => Some(vars),
            None => crate::user_vars::take_select_into(&mut stmt)?,
        };
        if let Some(vars) = into {
            let planned = self
                .plan(&stmt, lock, &HashMap::new(), conn)?
                .map(|p| p.with_lock_wait(wait));
            return self.select_into(planned, &vars, text, gen, conn);
        }
        let params = HashMap::new();
        let (planned, stats_epoch) = self.plan_noting_stats(&stmt, lock, &params, conn)?;
        match planned.map(|p| p.with_lock_wait(wait)) {
            // A statement that reads a user variable is typed by the variable's kind at
            // binding, GROUP_CONCAT by group_concat_max_len (MariaDB binds each COM_QUERY
            // anew), so its plan is not kept.
            Some(planned) if bound_to_session(text) => {
                self.run_planned(&Arc::new(planned), text, gen, conn, &[], sink)
            }
            Some(planned) => {
                let planned = Arc::new(planned);
                if self.cache.len() >= PLAN_CACHE_MAX {
                    self.cache.clear();
                }
                self.cache.insert(
                    text.to_string(),
                    Kept {
                        sql: text.to_string(),
                        generation: gen,
                        stats_epoch,
                        db: self.sv.db.clone(),
                        planned: Some(planned.clone()),
                        params: 0,
                        columns: Vec::new(),
                        conn,
                        com: crate::status::kind(text),
                    },
                );
                self.run_planned(&planned, text, gen, conn, &[], sink)
            }
            None => self.utility(&stmt, sink),
        }
    }

    /// The plan of an INSERT's shape (`shape.rs`), kept per session as the COM_QUERY cache
    /// keeps plans; `None` if the shape does not plan (the text then goes the long way, and
    /// its error, if any, is the text's own) or binds to session state.
    fn shape_plan(&mut self, shape: &str, gen: u64, conn: Conn) -> Option<Arc<Planned>> {
        if let Some(k) = self.shapes.get(shape) {
            if k.current(gen, self.inst.db)
                && k.db == self.sv.db
                && k.conn.plan_key() == conn.plan_key()
            {
                return k.planned.clone();
            }
        }
        if bound_to_session(shape) {
            return None;
        }
        let kept = self.make_kept(shape, conn).ok()?;
        let planned = kept.planned.clone()?;
        if self.shapes.len() >= PLAN_CACHE_MAX {
            self.shapes.clear();
        }
        self.shapes.insert(shape.to_string(), kept);
        Some(planned)
    }

    fn after_statement(&mut self, r: &Result<Outcome>) {
        if !self.in_transaction() {
            // Outside a transaction a statement's metadata locks end with it (a transaction
            // that has only read is one too: it holds no engine transaction but keeps them).
            self.mdl.release_all();
        }
        match r {
            Ok(Outcome::Ok { affected_rows, .. }) => self.sv.row_count = *affected_rows as i64,
            Ok(Outcome::ResultSet) => self.sv.row_count = -1,
            // The error becomes a condition when the server, which knows its code, records
            // it (`record_error`).
            Err(_) => self.sv.row_count = -1,
        }
    }

    /// The statement failed with MySQL error `code` (the server maps errors to codes):
    /// SHOW WARNINGS and SHOW ERRORS list it, `@@error_count` counts it.
    pub fn record_error(&self, code: u16, message: &str) {
        self.sv
            .raise(self.inst, Level::Error, code, message.to_string());
        for (c, m) in self.after_error.borrow_mut().drain(..) {
            self.sv.raise(self.inst, Level::Warning, c, m);
        }
    }

    /// [`Session::plan`], with the statistics epoch its plan read statistics at (`None`:
    /// it read none), for [`Kept::stats_epoch`].
    pub(crate) fn plan_noting_stats(
        &self,
        stmt: &sqlparser::ast::Statement,
        lock: Option<quire_engine::table::ReadLock>,
        params: &HashMap<(u64, u64), usize>,
        conn: Conn,
    ) -> Result<(Option<Planned>, Option<u64>)> {
        // Read first: numbers replaced while planning make the plan old at once.
        let epoch = self.inst.db.stats_epoch();
        self.stats_used.set(false);
        let planned = self.plan(stmt, lock, params, conn)?;
        Ok((planned, self.stats_used.get().then_some(epoch)))
    }

    pub(crate) fn plan(
        &self,
        stmt: &sqlparser::ast::Statement,
        lock: Option<quire_engine::table::ReadLock>,
        params: &HashMap<(u64, u64), usize>,
        conn: Conn,
    ) -> Result<Option<Planned>> {
        self.plan_hiding(stmt, lock, params, &[], conn)
    }

    /// [`Session::plan`] without the secondary indexes named in `hidden` (table id, index
    /// name): those the transaction's snapshot is too old to read (docs/sql.md, 1412).
    pub(crate) fn plan_hiding(
        &self,
        stmt: &sqlparser::ast::Statement,
        lock: Option<quire_engine::table::ReadLock>,
        params: &HashMap<(u64, u64), usize>,
        hidden: &[(u64, String)],
        conn: Conn,
    ) -> Result<Option<Planned>> {
        let kinds = self.user_var_kinds();
        let gc_max = self
            .session_u64("group_concat_max_len")
            .unwrap_or(crate::bind::GROUP_CONCAT_MAX_LEN_DEFAULT);
        crate::bind::with_user_vars(kinds, || {
            crate::bind::with_group_concat_max_len(gc_max, || {
                self.plan_with(stmt, lock, params, hidden, conn)
            })
        })
    }

    /// The kind of each user variable now (binding types `@x` by it).
    pub(crate) fn user_var_kinds(&self) -> HashMap<String, VarKind> {
        self.sv
            .user_vars
            .borrow()
            .iter()
            .map(|(k, (_, kind))| (k.clone(), *kind))
            .collect()
    }

    fn plan_with(
        &self,
        stmt: &sqlparser::ast::Statement,
        lock: Option<quire_engine::table::ReadLock>,
        params: &HashMap<(u64, u64), usize>,
        hidden: &[(u64, String)],
        conn: Conn,
    ) -> Result<Option<Planned>> {
        use sqlparser::ast::Statement as S;
        let ctx = crate::stmt::Ctx {
            db: self.inst.db,
            current_db: self.sv.db.as_deref(),
            params,
            hidden,
            conn,
            ctes: None,
            temps: &self.temps,
            stats_used: &self.stats_used,
        };
        // A change through an updatable view is planned on its table (`view/dml.rs`).
        let rewritten = crate::view::dml::rewrite_dml(&ctx, stmt)?;
        let stmt = rewritten.as_ref().unwrap_or(stmt);
        let planned = (|| {
            Ok(Some(match stmt {
                S::Query(q) => Planned::Select(crate::stmt::select(&ctx, q, lock)?),
                S::Insert(i) => Planned::Insert(crate::stmt::insert(&ctx, i)?),
                S::Update(u) => crate::stmt::update_stmt(&ctx, u)?,
                S::Delete(d) => crate::stmt::delete_stmt(&ctx, d)?,
                _ => return Ok(None),
            }))
        })();
        planned.map_err(|e| match e {
            SqlError::InfoSchemaDenied { db, .. } => SqlError::InfoSchemaDenied {
                user: self.sv.user.clone(),
                host: self.sv.host.clone(),
                db,
            },
            e => e,
        })
    }

    /// COM_STMT_PREPARE.
    pub fn prepare(&mut self, sql: &str) -> Result<PreparedInfo> {
        self.count_com("Com_stmt_prepare");
        self.sv.diag.get_mut().start();
        let text = crate::dispatch::skip_leading_comments(sql)
            .trim_end()
            .trim_end_matches(';')
            .trim_end()
            .to_string();
        let kept = self.make_kept(&text, self.sv.conn())?;
        self.reserve_prepared()?;
        let id = self.next_stmt;
        self.next_stmt = self.next_stmt.wrapping_add(1).max(1);
        let info = PreparedInfo {
            id,
            params: kept.params,
            columns: kept.columns.clone(),
        };
        self.prepared.insert(id, Arc::new(kept));
        Ok(info)
    }

    pub(crate) fn make_kept(&self, text: &str, conn: Conn) -> Result<Kept> {
        if text.is_empty() {
            return Err(SqlError::EmptyQuery);
        }
        // PREPARE (COM_STMT_PREPARE and SQL) is checked as the statement would be.
        self.check_access_uncached(text)?;
        let gen = self.inst.generation.load(Ordering::Acquire);
        if crate::do_stmt::is_do(text) {
            let (planned, params) = self.plan_do(text, conn, &[])?;
            return Ok(Kept {
                sql: text.to_string(),
                generation: gen,
                stats_epoch: None,
                db: self.sv.db.clone(),
                planned: Some(Arc::new(planned)),
                params: u16::try_from(params).map_err(|_| SqlError::NotPreparable)?,
                columns: Vec::new(),
                conn,
                com: crate::status::kind(text),
            });
        }
        let crate::parse::Prepared {
            stmt,
            lock,
            wait,
            params,
        } = crate::parse::parse_prepared(text, conn.mode)?;
        let (planned, stats_epoch) = self.plan_noting_stats(&stmt, lock, &params, conn)?;
        let planned = planned.map(|p| p.with_lock_wait(wait));
        // The result set's columns, sent with COM_STMT_PREPARE's answer: a SELECT's, or
        // RETURNING's.
        let columns = match &planned {
            Some(Planned::Select(s)) => s.columns.clone(),
            Some(Planned::Insert(crate::stmt::InsertPlan {
                returning: Some(r), ..
            }))
            | Some(Planned::Delete(crate::stmt::DeletePlan {
                returning: Some(r), ..
            })) => r.columns.clone(),
            _ => Vec::new(),
        };
        if planned.is_none() && !params.is_empty() {
            return Err(SqlError::NotPreparable);
        }
        Ok(Kept {
            sql: text.to_string(),
            generation: gen,
            stats_epoch,
            db: self.sv.db.clone(),
            planned: planned.map(Arc::new),
            params: params.len() as u16,
            columns,
            conn,
            com: crate::status::kind(text),
        })
    }

    /// The text of prepared statement `id` (the slow query log writes it).
    pub fn prepared_sql(&self, id: u32) -> Option<&str> {
        self.prepared.get(&id).map(|k| k.sql.as_str())
    }

    /// The number of parameters of prepared statement `id` (to decode COM_STMT_EXECUTE).
    pub fn param_count(&self, id: u32) -> Option<u16> {
        self.prepared.get(&id).map(|k| k.params)
    }

    /// COM_STMT_EXECUTE with decoded parameters (long data already appended by the server).
    pub fn execute(
        &mut self,
        id: u32,
        params: &[Value],
        sink: &mut dyn RowSink,
    ) -> Result<Outcome> {
        self.execute_typed(id, params, &[], sink)
    }

    /// [`Session::execute`] with the types the client bound the parameters with: a result
    /// column that is a bare parameter is sent with its type (`param_types.rs`).
    pub fn execute_typed(
        &mut self,
        id: u32,
        params: &[Value],
        types: &[crate::param_types::ParamType],
        sink: &mut dyn RowSink,
    ) -> Result<Outcome> {
        self.inst.questions.fetch_add(1, Ordering::Relaxed);
        crate::status::SessionCounters::bump(&self.sv.status.questions, 1);
        self.info.clear_kill();
        self.sv.diag.get_mut().start();
        let Some(k) = self.prepared.get(&id) else {
            return Err(SqlError::UnknownStatement {
                id,
                what: "mysqld_stmt_execute",
            });
        };
        if params.len() != usize::from(k.params) {
            return Err(SqlError::WrongArguments("mysqld_stmt_execute".into()));
        }
        let gen = self.inst.generation.load(Ordering::Acquire);
        if !k.current(gen, self.inst.db) || k.db != self.sv.db {
            // DDL (or new statistics) since PREPARE: plan again from the text (the statement may now fail).
            let (sql, conn) = (k.sql.clone(), k.conn);
            let fresh = self.make_kept(&sql, conn)?;
            self.prepared.insert(id, Arc::new(fresh));
        }
        let k = self
            .prepared
            .get(&id)
            .cloned()
            .ok_or(SqlError::UnknownStatement {
                id,
                what: "mysqld_stmt_execute",
            })?;
        self.count_com("Com_stmt_execute");
        if let Some(name) = k.com {
            self.count_com(name);
        }
        let examined = crate::status::mark();
        self.arm_statement_timer();
        let retype: Vec<_> = k
            .planned
            .as_deref()
            .map(crate::param_types::bare_params)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(c, i)| Some((c, *types.get(i)?, params.get(i)?.clone())))
            .collect();
        let r = if retype.is_empty() {
            self.run_kept(&k, params, sink)
        } else {
            let mut typed = crate::param_types::Retyped { sink, cols: retype };
            self.run_kept(&k, params, &mut typed)
        };
        let r = self.end_statement_timer(r);
        self.note_examined(examined);
        self.after_statement(&r);
        r
    }

    /// Runs a kept statement with its parameters' values (COM_STMT_EXECUTE, EXECUTE).
    pub(crate) fn run_kept(
        &mut self,
        k: &Kept,
        params: &[Value],
        sink: &mut dyn RowSink,
    ) -> Result<Outcome> {
        match &k.planned {
            Some(p) => {
                // Grants may have changed since PREPARE.
                self.check_access(&k.sql)?;
                self.run_planned(p, &k.sql, k.generation, k.conn, params, sink)
            }
            None => self.query_text(&k.sql, sink),
        }
    }

    /// COM_STMT_RESET: a statement's cursor and long data are gone.
    pub fn reset_prepared(&mut self, id: u32) -> Result<()> {
        self.count_com("Com_stmt_reset");
        if self.prepared.contains_key(&id) {
            Ok(())
        } else {
            Err(SqlError::UnknownStatement {
                id,
                what: "mysqld_stmt_reset",
            })
        }
    }

    /// COM_STMT_CLOSE (no answer on the wire, even for an unknown id).
    pub fn close_prepared(&mut self, id: u32) {
        self.count_com("Com_stmt_close");
        if self.prepared.remove(&id).is_some() {
            self.release_prepared(1);
        }
    }

    /// Counts one more prepared statement of the instance: 1461 past
    /// `max_prepared_stmt_count`.
    pub(crate) fn reserve_prepared(&self) -> Result<()> {
        let max = crate::vars::global_u64(self.inst, "max_prepared_stmt_count").unwrap_or(16_382);
        self.inst
            .prepared_count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .map(|_| ())
            .map_err(|_| SqlError::TooManyPreparedStatements(max))
    }

    /// `n` prepared statements of this session are gone.
    pub(crate) fn release_prepared(&self, n: usize) {
        self.inst
            .prepared_count
            .fetch_sub(n as u64, Ordering::AcqRel);
    }

    /// COM_INIT_DB.
    pub fn use_database(&mut self, db: &str) -> Result<()> {
        let db = if crate::infoschema::is_schema(db) {
            crate::infoschema::SCHEMA
        } else {
            db
        };
        // As MariaDB: 1044 before 1049, so a name says nothing of what exists.
        self.check_use_db(db)?;
        if db != crate::infoschema::SCHEMA && !self.inst.db.databases().iter().any(|d| d == db) {
            return Err(SqlError::UnknownDatabase(db.into()));
        }
        self.sv.db = Some(db.to_string());
        *self.info.db.lock() = Some(db.to_string());
        self.database_vars();
        Ok(())
    }

    /// `character_set_database` and `collation_database` follow the current database's
    /// default, as in MariaDB (information_schema's is utf8mb3; none: the server's).
    pub(crate) fn database_vars(&mut self) {
        use quire_engine::row::Collation;
        let c = match self.sv.db.as_deref() {
            Some(d) if crate::infoschema::is_schema(d) => Collation::Utf8mb3GeneralCi,
            Some(d) => self
                .inst
                .db
                .database_collation(d)
                .unwrap_or(Collation::Utf8mb4GeneralCi),
            None => Collation::Utf8mb4GeneralCi,
        };
        self.sv.vars.insert(
            "character_set_database".into(),
            Value::Str(c.charset().name().into()),
        );
        self.sv
            .vars
            .insert("collation_database".into(), Value::Str(c.name().into()));
    }

    pub fn current_database(&self) -> Option<String> {
        self.sv.db.clone()
    }

    /// COM_FIELD_LIST: the columns of `table` in the current database.
    pub fn field_list(&mut self, table: &str) -> Result<Vec<ColumnMeta>> {
        let db = self.sv.db.clone().ok_or(SqlError::NoDatabaseSelected)?;
        self.check_access(&format!("DESCRIBE `{}`", table.replace('`', "``")))?;
        let t = self
            .inst
            .db
            .table(&db, table)
            .map_err(|_| SqlError::NoSuchTable {
                db: db.clone(),
                table: table.into(),
            })?;
        let def = t.definition()?;
        Ok(def
            .columns
            .iter()
            .map(|c| crate::types::column_meta(&db, table, table, c, 0))
            .collect())
    }

    /// COM_STATISTICS text.
    pub fn statistics(&self) -> String {
        let uptime = self.inst.started.elapsed().as_secs().max(1);
        let q = self.inst.questions.load(Ordering::Relaxed);
        format!(
            "Uptime: {uptime}  Threads: {}  Questions: {q}  Slow queries: 0  Opens: 0  Open tables: {}  Queries per second avg: {:.3}",
            self.inst.sessions.lock().len(),
            self.inst.db.databases().len(),
            q as f64 / uptime as f64
        )
    }

    /// SERVER_STATUS_IN_TRANS.
    pub fn in_transaction(&self) -> bool {
        self.trx.is_some() || self.read_open || self.explicit
    }

    /// Whether a backslash escapes in string literals (not under NO_BACKSLASH_ESCAPES).
    pub fn backslash_escapes(&self) -> bool {
        !self.sv.mode.has(SqlMode::NO_BACKSLASH_ESCAPES)
    }

    /// SERVER_STATUS_AUTOCOMMIT.
    pub fn autocommit(&self) -> bool {
        self.var_bool("autocommit")
    }

    /// Conditions the last statement raised (OK and EOF packets carry the count).
    pub fn warning_count(&self) -> u16 {
        self.sv
            .diag
            .borrow()
            .statement_count()
            .min(u64::from(u16::MAX)) as u16
    }

    /// A session variable as the server needs it (`wait_timeout`, ...).
    pub fn session_u64(&self, name: &str) -> Option<u64> {
        match self.sv.vars.get(crate::vars::canonical(name)) {
            Some(Value::Int(i)) if *i >= 0 => Some(*i as u64),
            Some(Value::UInt(u)) => Some(*u),
            _ => crate::vars::global_u64(self.inst, name),
        }
    }

    /// `f` of the connection's `name` (`character_set_client`, `_results`) when it names a
    /// character set: what the server converts at the wire. Read for every command, so the
    /// session's own value is looked at without a copy (SET NAMES and the handshake set it).
    pub fn with_charset_var<R>(&self, name: &str, f: impl FnOnce(&str) -> R) -> Option<R> {
        match self.sv.vars.get(name) {
            Some(Value::Str(s)) => Some(f(s)),
            Some(_) => None,
            None => match crate::vars::global(self.inst, name) {
                Some(Value::Str(s)) => Some(f(&s)),
                _ => None,
            },
        }
    }

    pub(crate) fn var(&self, name: &str) -> Option<Value> {
        self.sv
            .vars
            .get(crate::vars::canonical(name))
            .cloned()
            .or_else(|| crate::vars::global(self.inst, name))
    }

    /// A fractional variable's value (`long_query_time`, `max_statement_time`: kept as
    /// text with six decimals, or a number).
    pub(crate) fn var_f64(&self, name: &str) -> Option<f64> {
        self.with_var(name, |v| match v? {
            Value::Str(t) => t.parse::<f64>().ok(),
            Value::Double(d) => Some(*d),
            Value::Int(i) => Some(*i as f64),
            Value::UInt(u) => Some(*u as f64),
            _ => None,
        })
    }

    /// `f` of a variable's value as [`Session::var`] finds it, without copying a value the
    /// session holds (the hot per-statement reads: no allocation for a text value).
    fn with_var<R>(&self, name: &str, f: impl FnOnce(Option<&Value>) -> R) -> R {
        match self.sv.vars.get(crate::vars::canonical(name)) {
            Some(v) => f(Some(v)),
            None => f(crate::vars::global(self.inst, name).as_ref()),
        }
    }

    /// The session may not write now: inside a read-only transaction, or outside an
    /// explicit transaction in a session whose transactions are read-only (`tx_read_only`,
    /// SET SESSION TRANSACTION READ ONLY). Writes and DDL are 1792 then.
    pub(crate) fn writes_refused(&self) -> bool {
        self.read_only || (!self.explicit && self.var_bool("tx_read_only"))
    }

    pub(crate) fn var_bool(&self, name: &str) -> bool {
        self.with_var(name, |v| matches!(v, Some(Value::Int(1))))
    }

    pub(crate) fn isolation(&self) -> Isolation {
        self.with_var("tx_isolation", |v| match v {
            Some(Value::Str(s)) => match s.as_str() {
                "READ-UNCOMMITTED" => Isolation::ReadUncommitted,
                "READ-COMMITTED" => Isolation::ReadCommitted,
                "SERIALIZABLE" => Isolation::Serializable,
                _ => Isolation::RepeatableRead,
            },
            _ => Isolation::RepeatableRead,
        })
    }

    /// Ends the session: an open transaction is rolled back.
    pub fn close(mut self) {
        if let Some(t) = self.trx.take() {
            if let Err(e) = t.rollback() {
                tracing::warn!(conn = self.info.id, error = %e, "rollback at disconnect failed");
            }
        }
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        self.release_prepared(self.prepared.len() + self.named.len());
        if let Some(t) = self.trx.take() {
            if let Err(e) = t.rollback() {
                tracing::warn!(conn = self.info.id, error = %e, "rollback at disconnect failed");
            }
        }
        // After the rollback: its undo of the temporary tables is applied or moot.
        self.drop_all_temporary();
        // GET_LOCK's locks end with the session (also at COM_RESET_CONNECTION and
        // COM_CHANGE_USER, which start a new session), as in MariaDB.
        self.inst.user_locks.release_all(self.info.id);
        self.inst.sessions.lock().remove(&self.info.id);
    }
}
