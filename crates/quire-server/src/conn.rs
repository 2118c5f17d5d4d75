//! One connection, as a state machine:
//!
//! ```text
//!   Accepted ──run_connection──▶ Handshake ──authenticate──▶ Authenticated
//!      │ (over max_connections:           │ ERR 1045/1043/1251,      │ open_session: session,
//!      │  refuse_connection, ERR 1040)     │ 1153/1156: close          │ CONNECT_WITH_DB (1049: close), OK
//!      ▼                                   ▼                           ▼
//!    Closed ◀──────────────────────────── Closed           ┌──▶ Command ──dispatch──┐
//!                                                          │   (read_command; idle    │
//!      COM_QUIT, EOF/timeout, 1153/1156, client gone ◀─────┤    past wait_timeout:    │
//!      (Sink error), KILL CONNECTION  → Closed             │    close)                │
//!                                                          └──────── reply ◀──────────┘
//! ```
//!
//! Invariants:
//! 1. Every command gets exactly one reply (one OK, ERR, result set or statistics text),
//!    except COM_QUIT, COM_STMT_CLOSE and COM_STMT_SEND_LONG_DATA, which get none.
//! 2. A malformed command body gets ERR and the connection stays usable; only framing errors
//!    (oversized message, sequence out of order) or a lost client close it.
//! 3. The session is dropped when the connection ends, which rolls back its transaction.
//! 4. The write buffer is flushed after every command (invariant 4 of `packet`).

use std::collections::HashMap;
use std::time::Duration;

use mysql_common::constants::CapabilityFlags;
use quire_sql::status::ServerCounters;
use quire_sql::{kill, Outcome, Session, SqlError};

use crate::charset::WireCharset;
use crate::errors::{proto, to_wire, WireError};
use crate::handshake::{authenticate, new_salt, parse_change_user, verify, Authed, HandshakeError};
use crate::listener::{Shared, Stream};
use crate::packet::{FrameError, PacketIo};
use crate::reply::{
    eof_packet, err_packet, err_packet_in, ok_packet, status, Malformed, OkInfo, Reader,
};
use crate::resultset::{ColumnWire, ResultSink, RowFormat};
use crate::stmt::StmtState;

/// Command bytes (`enum_server_command`).
pub mod cmd {
    pub const QUIT: u8 = 0x01;
    pub const INIT_DB: u8 = 0x02;
    pub const QUERY: u8 = 0x03;
    pub const FIELD_LIST: u8 = 0x04;
    pub const REFRESH: u8 = 0x07;
    pub const SHUTDOWN: u8 = 0x08;
    pub const STATISTICS: u8 = 0x09;
    pub const PROCESS_KILL: u8 = 0x0C;
    pub const PING: u8 = 0x0E;
    pub const CHANGE_USER: u8 = 0x11;
    pub const STMT_PREPARE: u8 = 0x16;
    pub const STMT_EXECUTE: u8 = 0x17;
    pub const STMT_SEND_LONG_DATA: u8 = 0x18;
    pub const STMT_CLOSE: u8 = 0x19;
    pub const STMT_RESET: u8 = 0x1A;
    pub const SET_OPTION: u8 = 0x1B;
    pub const STMT_FETCH: u8 = 0x1C;
    pub const RESET_CONNECTION: u8 = 0x1F;
}

/// The connection ends (client gone, COM_QUIT, fatal framing error, kill).
#[derive(Debug)]
pub struct Close;

impl From<std::io::Error> for Close {
    fn from(_: std::io::Error) -> Self {
        Close
    }
}

pub type Step = Result<(), Close>;

/// An authenticated connection and its session.
pub struct Conn<'a> {
    pub(crate) io: PacketIo<Stream>,
    pub(crate) session: Session<'a>,
    pub(crate) caps: CapabilityFlags,
    /// Server-side state of prepared statements: parameter types and long data.
    pub(crate) stmts: HashMap<u32, StmtState>,
    /// CLIENT_MULTI_STATEMENTS as last set (handshake, COM_SET_OPTION): a COM_QUERY may
    /// hold several statements.
    multi_statements: bool,
    pub(crate) shared: &'a Shared<'a>,
    /// The socket's read timeout as last set: set again only when `wait_timeout` changes,
    /// not with a system call per command.
    read_timeout: Option<Duration>,
    /// The greeting's salt: COM_CHANGE_USER answers against it, as clients compute it.
    salt: [u8; 20],
    /// The peer's address, as the handshake matched accounts against it.
    host: String,
    /// The collation id of the handshake, restored by COM_RESET_CONNECTION.
    collation: u8,
    /// Column definitions carry MariaDB's extended metadata (negotiated at the handshake,
    /// for the connection's life).
    extended_metadata: bool,
    /// Bytes read and written that `Bytes_received` / `Bytes_sent` count already.
    bytes_counted: (u64, u64),
}

/// Accepted → Handshake → Authenticated → Command loop → Closed.
pub fn run_connection(stream: Stream, shared: &Shared<'_>, conn_id: u64, host: String) {
    let _ = stream.set_read_timeout(Some(shared.cfg.connect_timeout));
    let _ = stream.set_write_timeout(Some(shared.cfg.net_write_timeout));
    let mut io = PacketIo::new(stream, shared.max_allowed_packet());
    let salt = new_salt();
    // The protocol carries 32 bits of connection id; the session keeps all 64.
    let wire_id = conn_id as u32;
    let tls = shared.cfg.tls.as_ref();
    let result = authenticate(
        &mut io,
        wire_id,
        &salt,
        shared.instance.acl(),
        &shared.rsa_keys,
        &host,
        tls,
    );
    shared.handshake_done(conn_id);
    // Repeated failures from this host: every answer to it waits (connection_control).
    let delay = shared.login_delay(&host);
    if !delay.is_zero() {
        std::thread::sleep(delay);
    }
    match &result {
        Ok(_) => shared.login_result(&host, true),
        Err(HandshakeError::Refused(e)) if e.code == 1045 => shared.login_result(&host, false),
        Err(_) => {}
    }
    if result.is_err() {
        ServerCounters::add(&shared.instance.counters().aborted_connects, 1);
    }
    let authed = match result {
        Ok(_) if shared.require_secure_transport() && !io.stream().is_secure() => {
            ServerCounters::add(&shared.instance.counters().aborted_connects, 1);
            tracing::debug!(conn_id, "refused: require_secure_transport and no TLS");
            let _ = send_err(&mut io, &proto::secure_transport_required());
            return;
        }
        Ok(a) => a,
        Err(HandshakeError::Refused(e)) => {
            tracing::debug!(conn_id, code = e.code, "handshake refused: {}", e.message);
            let _ = send_err(&mut io, &e);
            return;
        }
        Err(HandshakeError::Frame(e)) => {
            let _ = send_frame_error(&mut io, &e);
            return;
        }
    };
    let Some(mut conn) = open_session(io, shared, conn_id, &host, authed, salt) else {
        return;
    };
    conn.command_loop();
    conn.count_bytes();
    // Invariant 3: dropping the session rolls its transaction back.
}

/// Authenticated: the session exists, CONNECT_WITH_DB is applied, then the final OK.
fn open_session<'a>(
    mut io: PacketIo<Stream>,
    shared: &'a Shared<'a>,
    conn_id: u64,
    host: &str,
    authed: Authed,
    salt: [u8; 20],
) -> Option<Conn<'a>> {
    // The connection limits, checked and the session registered as one step.
    let admitted = shared.instance.admit_session(
        conn_id,
        &authed.user,
        host,
        Some(authed.account.clone()),
        |open| match over_user_limit(shared, &authed.account, open) {
            Some(e) => Err(e),
            None => Ok(()),
        },
    );
    let mut session = match admitted {
        Ok(s) => s,
        Err(e) => {
            let _ = send_err(&mut io, &e);
            return None;
        }
    };
    *session.info().tls.lock() = io.stream().tls_info();
    session.set_handshake_collation(authed.collation);
    session.set_client_found_rows(authed.caps.contains(CapabilityFlags::CLIENT_FOUND_ROWS));
    if let Some(db) = &authed.db {
        if let Err(e) = session.use_database(db) {
            if let Some(w) = to_wire(&e) {
                let _ = send_err(&mut io, &w);
            }
            return None;
        }
    }
    let mut conn = Conn {
        io,
        session,
        caps: authed.caps,
        stmts: HashMap::new(),
        multi_statements: authed
            .caps
            .contains(CapabilityFlags::CLIENT_MULTI_STATEMENTS),
        shared,
        read_timeout: None,
        salt,
        host: host.to_string(),
        collation: authed.collation,
        extended_metadata: authed.extended_metadata,
        bytes_counted: (0, 0),
    };
    // The handshake is over: commands may be read ahead (packet invariant 5).
    conn.io.read_ahead();
    conn.send_ok(0, 0, "").ok()?;
    conn.io.flush().ok()?;
    Some(conn)
}

/// MariaDB's `check_for_max_user_connections` for a login (or COM_CHANGE_USER) that matched
/// `account`: the account's own limit (1226), else the global `max_user_connections`
/// unless the account has SUPER or CONNECTION ADMIN (1203), against the account's sessions
/// among `others` (the sessions open now but the one asking; docs/security.md, "Connection
/// limits").
fn over_user_limit(
    shared: &Shared<'_>,
    account: &(String, String),
    others: &mut dyn Iterator<Item = &quire_sql::SessionInfo>,
) -> Option<WireError> {
    let (user, host) = account;
    let acl = shared.instance.acl().get();
    let entry = acl.as_ref().and_then(|a| a.get(user, host));
    let own = entry.map_or(0, |a| a.max_user_connections);
    let global = shared
        .instance
        .global_u64("max_user_connections")
        .unwrap_or(0);
    let exempt = entry.is_some_and(|a| {
        a.privs & (quire_sql::acl::privs::SUPER | quire_sql::acl::privs::CONNECTION_ADMIN) != 0
    });
    if own == 0 && (global == 0 || exempt) {
        return None;
    }
    let open = others
        .filter(|s| s.account.lock().as_ref() == Some(account))
        .count() as u64;
    match own {
        n if n < 0 => Some(proto::user_limit_reached(user, n)),
        n if n > 0 => (open >= n as u64).then(|| proto::user_limit_reached(user, n)),
        _ => (open >= global).then(|| proto::too_many_user_connections(user)),
    }
}

fn send_err(io: &mut PacketIo<Stream>, e: &WireError) -> std::io::Result<()> {
    io.write_message(&err_packet(e, true))?;
    io.flush()
}

/// 1153 / 1156 before closing; nothing when the socket itself failed.
fn send_frame_error(io: &mut PacketIo<Stream>, e: &FrameError) -> std::io::Result<()> {
    match e {
        FrameError::TooLarge { .. } => {
            send_err(io, &proto::packet_too_large())?;
            drain_refused(io);
            Ok(())
        }
        FrameError::OutOfOrder { .. } => send_err(io, &proto::packets_out_of_order()),
        FrameError::Io(_) => Ok(()),
    }
}

/// How long the rest of a refused packet is read and dropped before the connection closes,
/// and how long a pause in it ends that early.
const DRAIN_REFUSED: std::time::Duration = std::time::Duration::from_secs(5);
const DRAIN_PAUSE: std::time::Duration = std::time::Duration::from_millis(500);

/// Reads and drops what the client still sends of the packet it was refused, until it
/// stops (EOF, or nothing for `DRAIN_PAUSE`) or `DRAIN_REFUSED` passed. The client is still
/// writing that packet when the 1153 leaves (it reads only once it has written it all);
/// closing a socket with unread bytes resets the connection, and a reset loses the 1153
/// the client has not read yet, or fails its write: it would report "server has gone
/// away" in place of the error.
fn drain_refused(io: &mut PacketIo<Stream>) {
    let deadline = std::time::Instant::now() + DRAIN_REFUSED;
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let wait = left.min(DRAIN_PAUSE);
        if wait.is_zero() || io.stream().set_read_timeout(Some(wait)).is_err() {
            return;
        }
        match io.discard_input(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// Whether `sql` is a KILL statement (COM_PROCESS_KILL is run as one).
fn is_kill(sql: &str) -> bool {
    let t = quire_sql::dispatch::skip_leading_comments(sql);
    t.get(..4).is_some_and(|w| w.eq_ignore_ascii_case("kill"))
        && t[4..].starts_with(|c: char| c.is_ascii_whitespace())
}

/// The status flags of OK and EOF packets.
pub fn session_status(session: &Session<'_>) -> u16 {
    let mut s = 0;
    if session.autocommit() {
        s |= status::AUTOCOMMIT;
    }
    if session.in_transaction() {
        s |= status::IN_TRANS;
    }
    if !session.backslash_escapes() {
        s |= status::NO_BACKSLASH_ESCAPES;
    }
    s
}

/// What a statement's slow-log entry needs measured from its start: the clock, this
/// thread's lock waits, the connection's bytes written.
pub(crate) struct StatementTimer {
    started: std::time::SystemTime,
    clock: std::time::Instant,
    lock_us: u64,
    bytes_out: u64,
}

impl StatementTimer {
    pub(crate) fn start(io: &PacketIo<Stream>) -> StatementTimer {
        StatementTimer {
            started: std::time::SystemTime::now(),
            clock: std::time::Instant::now(),
            lock_us: quire_engine::lock::thread_wait_us(),
            bytes_out: io.bytes().1,
        }
    }

    pub(crate) fn finish<'t>(
        &self,
        io: &PacketIo<Stream>,
        text: &'t str,
        rows_sent: u64,
        rows_affected: u64,
    ) -> crate::slowlog::Statement<'t> {
        crate::slowlog::Statement {
            text,
            started: self.started,
            query_time: self.clock.elapsed(),
            lock_time: Duration::from_micros(
                quire_engine::lock::thread_wait_us().saturating_sub(self.lock_us),
            ),
            rows_sent,
            rows_affected,
            bytes_sent: io.bytes().1 - self.bytes_out,
        }
    }
}

/// The rows a statement changed, for the slow log (0 for a result set or an error).
pub(crate) fn affected_rows(r: &Result<Outcome, SqlError>) -> u64 {
    match r {
        Ok(Outcome::Ok { affected_rows, .. }) => *affected_rows,
        _ => 0,
    }
}

/// Ends a statement that ran with `sink`: the result set's end marker, an OK, or an ERR
/// (also valid after some rows: the client drops the partial result). With `more`, the end
/// marker or OK says that another result of the same multi-statement query follows.
pub fn finish_statement(
    session: &Session<'_>,
    result: Result<Outcome, SqlError>,
    mut sink: ResultSink<'_, Stream>,
    more: bool,
) -> Step {
    let mut status = session_status(session);
    if more {
        status |= status::MORE_RESULTS_EXISTS;
    }
    let warnings = session.warning_count();
    match result {
        Ok(outcome) => {
            if sink.started() {
                sink.finish(status, warnings)?;
                return Ok(());
            }
            let (affected_rows, last_insert_id, info) = match &outcome {
                Outcome::Ok {
                    affected_rows,
                    last_insert_id,
                    info,
                } => (*affected_rows, *last_insert_id, info.as_str()),
                // A "result set" that sent no columns: an empty OK, not a hang.
                Outcome::ResultSet => (0, 0, ""),
            };
            let ok = OkInfo {
                affected_rows,
                last_insert_id,
                status,
                warnings,
                info,
            };
            sink.io().write_message(&ok_packet(&ok, 0x00))?;
            Ok(())
        }
        Err(e) => match to_wire(&e) {
            Some(w) => {
                // SHOW WARNINGS lists the error with its code (known here).
                session.record_error(w.code, &w.message);
                if let SqlError::Engine(inner) = &e {
                    tracing::warn!(conn_id = session.id(), "engine error: {inner}");
                }
                let cs = sink.charset();
                sink.io().write_message(&err_packet_in(&w, true, cs))?;
                Ok(())
            }
            // The client is gone.
            None => Err(Close),
        },
    }
}

impl Conn<'_> {
    pub(crate) fn deprecate_eof(&self) -> bool {
        self.caps.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF)
    }

    pub(crate) fn send_ok(&mut self, affected_rows: u64, last_insert_id: u64, info: &str) -> Step {
        let ok = OkInfo {
            affected_rows,
            last_insert_id,
            status: session_status(&self.session),
            warnings: self.session.warning_count(),
            info,
        };
        self.io.write_message(&ok_packet(&ok, 0x00))?;
        Ok(())
    }

    pub(crate) fn send_err(&mut self, e: &WireError) -> Step {
        let cs = self.results_charset();
        self.io.write_message(&err_packet_in(e, true, cs))?;
        Ok(())
    }

    /// The character set the client sends text in (`character_set_client`; the `charset`
    /// module).
    pub(crate) fn client_charset(&self) -> WireCharset {
        self.wire_charset("character_set_client")
    }

    /// The wire character set session variable `var` names (latin1 and ascii are converted;
    /// everything else is sent as stored).
    fn wire_charset(&self, var: &str) -> WireCharset {
        self.session
            .with_charset_var(var, WireCharset::named)
            .unwrap_or_default()
    }

    /// The character set results go out in (`character_set_results`).
    /// How column definitions are written on this connection.
    pub(crate) fn column_wire(&self) -> ColumnWire {
        ColumnWire {
            cs: self.results_charset(),
            extended: self.extended_metadata,
        }
    }

    pub(crate) fn results_charset(&self) -> WireCharset {
        self.wire_charset("character_set_results")
    }

    /// A statement's text as the client sent it, in UTF-8 (the `charset` module).
    pub(crate) fn statement_text<'b>(&self, body: &'b [u8]) -> std::borrow::Cow<'b, str> {
        match self.client_charset() {
            WireCharset::Utf8 => quire_sql::dispatch::statement_text(body),
            cs @ (WireCharset::Latin1 | WireCharset::Ascii) => {
                std::borrow::Cow::Owned(crate::charset::statement_text_in(body, cs))
            }
        }
    }

    /// ERR for a SQL-layer error; a lost client closes the connection.
    pub(crate) fn send_sql_err(&mut self, e: &SqlError) -> Step {
        match to_wire(e) {
            Some(w) => {
                self.session.record_error(w.code, &w.message);
                self.send_err(&w)
            }
            None => Err(Close),
        }
    }

    /// The terminator COM_FIELD_LIST and COM_SET_OPTION end with: EOF, or under
    /// DEPRECATE_EOF an OK with header 0xFE (the protocol keeps a terminator there).
    pub(crate) fn send_terminator(&mut self) -> Step {
        let status = session_status(&self.session);
        let warnings = self.session.warning_count();
        let p = if self.deprecate_eof() {
            ok_packet(
                &OkInfo {
                    status,
                    warnings,
                    ..OkInfo::default()
                },
                0xFE,
            )
        } else {
            eof_packet(status, warnings)
        };
        self.io.write_message(&p)?;
        Ok(())
    }

    /// How long the connection may sit idle between commands.
    fn idle_timeout(&self) -> Duration {
        let secs = self
            .shared
            .cfg
            .wait_timeout
            .map(|d| d.as_secs_f64())
            .or_else(|| self.session.session_u64("wait_timeout").map(|s| s as f64))
            .unwrap_or(28800.0);
        // A zero timeout means "now" to MySQL; a socket can not wait 0, so wait 1 ms.
        Duration::from_secs_f64(secs.max(0.001))
    }

    /// Adds the bytes read and written since the last call to `Bytes_received` and
    /// `Bytes_sent`.
    fn count_bytes(&mut self) {
        let (r, w) = self.io.bytes();
        let c = self.shared.instance.counters();
        let (dr, dw) = (r - self.bytes_counted.0, w - self.bytes_counted.1);
        ServerCounters::add(&c.bytes_received, dr);
        ServerCounters::add(&c.bytes_sent, dw);
        self.session.add_bytes(dr, dw);
        self.bytes_counted = (r, w);
    }

    /// Counts `stmt` in `Slow_queries` and writes it to the slow query log if it was slow.
    pub(crate) fn slow_log(&self, stmt: &crate::slowlog::Statement) {
        self.shared
            .slow_log
            .after_statement(&self.shared.instance, &self.session, stmt);
    }

    /// Command: read a command, dispatch it, flush, until the connection ends.
    fn command_loop(&mut self) {
        loop {
            self.io.reset_seq();
            let idle = Some(self.idle_timeout());
            if idle != self.read_timeout && self.io.stream().set_read_timeout(idle).is_ok() {
                self.read_timeout = idle;
            }
            let msg = match self.io.read_message() {
                Ok(m) => m,
                Err(e) => {
                    if let FrameError::Io(err) = &e {
                        tracing::debug!(conn_id = self.session.id(), "connection ends: {err}");
                    }
                    // Gone without COM_QUIT (or timed out, or over max_allowed_packet).
                    ServerCounters::add(&self.shared.instance.counters().aborted_clients, 1);
                    let _ = send_frame_error(&mut self.io, &e);
                    return;
                }
            };
            // A command's bytes count as read, before it runs (its own SHOW STATUS sees
            // them, as in MariaDB).
            self.count_bytes();
            let step = self.dispatch(&msg);
            let info = self.session.info().clone();
            info.set_command("Sleep", None);
            let flushed = self.io.flush();
            self.count_bytes();
            if step.is_err() || flushed.is_err() {
                if msg.first() != Some(&cmd::QUIT) {
                    ServerCounters::add(&self.shared.instance.counters().aborted_clients, 1);
                }
                return;
            }
            if info.kill_requested() == kill::CONNECTION {
                return;
            }
        }
    }

    /// One switch over the command byte (TiDB's `dispatch`).
    pub(crate) fn dispatch(&mut self, msg: &[u8]) -> Step {
        let Some((&command, body)) = msg.split_first() else {
            return self.send_err(&proto::unknown_command());
        };
        let r = match command {
            cmd::QUIT => return Err(Close),
            cmd::INIT_DB => self.com_init_db(body),
            cmd::QUERY => self.com_query(body),
            cmd::FIELD_LIST => self.com_field_list(body),
            cmd::STATISTICS => self.com_statistics(),
            // mariadb-admin refresh / flush-*: Quire keeps no grant cache, host cache or
            // logs to reopen, and its table handles need no closing, so every flag is done.
            cmd::REFRESH => match self.session.check_command("reload") {
                Ok(()) => self.send_ok(0, 0, "").map_err(Into::into),
                Err(e) => self.send_sql_err(&e).map_err(Into::into),
            },
            // mariadb-admin shutdown: OK (MariaDB sends EOF; clients take either), then the
            // accept loop stops the server as on SIGTERM.
            cmd::SHUTDOWN => match self.session.check_command("shutdown") {
                Ok(()) => {
                    self.shared.instance.request_shutdown();
                    self.send_ok(0, 0, "").map_err(Into::into)
                }
                Err(e) => self.send_sql_err(&e).map_err(Into::into),
            },
            cmd::PROCESS_KILL => self.com_process_kill(body),
            cmd::PING => self.send_ok(0, 0, "").map_err(Into::into),
            cmd::CHANGE_USER => self.com_change_user(body),
            cmd::STMT_PREPARE => self.com_stmt_prepare(body),
            cmd::STMT_EXECUTE => self.com_stmt_execute(body),
            cmd::STMT_SEND_LONG_DATA => self.com_stmt_send_long_data(body),
            cmd::STMT_CLOSE => self.com_stmt_close(body),
            cmd::STMT_RESET => self.com_stmt_reset(body),
            cmd::STMT_FETCH => self.com_stmt_fetch(body),
            cmd::SET_OPTION => self.com_set_option(body),
            cmd::RESET_CONNECTION => self.com_reset_connection(),
            _ => return self.send_err(&proto::unknown_command()),
        };
        match r {
            Ok(()) => Ok(()),
            Err(CmdError::Close) => Err(Close),
            // Invariant 2: a bad body is the client's mistake, answered and survived.
            Err(CmdError::Malformed) => self.send_err(&proto::malformed_packet()),
        }
    }

    fn com_init_db(&mut self, body: &[u8]) -> CmdResult {
        let name = self.client_charset().decode(body).into_owned();
        self.session.info().set_command("Init DB", Some(&name));
        self.session.count_stmt_command("Com_change_db");
        match self.session.use_database(&name) {
            Ok(()) => self.send_ok(0, 0, "")?,
            Err(e) => self.send_sql_err(&e)?,
        }
        Ok(())
    }

    fn com_query(&mut self, body: &[u8]) -> CmdResult {
        // Raw bytes quoted into the text (a client's interpolated BLOB) become hex literals;
        // a latin1 client's text is converted.
        let sql = self.statement_text(body);
        // Without a `;` there is one statement: no need to read the text for where they end.
        if self.multi_statements && sql.contains(';') {
            // CLIENT_MULTI_STATEMENTS: each statement gets its own result, every one but the
            // last flagged MORE_RESULTS_EXISTS; the first error ends the query (MariaDB runs
            // no statement after it). Without the flag, a second statement is a syntax error.
            let parts =
                quire_sql::dispatch::split_statements(&sql, self.session.backslash_escapes());
            if parts.len() > 1 {
                for (i, part) in parts.iter().enumerate() {
                    if !self.run_statement(part, i + 1 < parts.len())? {
                        break;
                    }
                }
                return Ok(());
            }
        }
        self.run_text(&sql)
    }

    /// Runs `sql` through the text protocol and answers it.
    fn run_text(&mut self, sql: &str) -> CmdResult {
        self.run_statement(sql, false).map(|_| ())
    }

    /// Runs one statement and answers it, flagging `more` results to come; whether it
    /// succeeded.
    fn run_statement(&mut self, sql: &str, more: bool) -> Result<bool, CmdError> {
        self.session.info().set_command("Query", Some(sql));
        let timer = StatementTimer::start(&self.io);
        let deprecate_eof = self.deprecate_eof();
        let wire = self.column_wire();
        let local_files = self.caps.contains(CapabilityFlags::CLIENT_LOCAL_FILES);
        let mut sink = ResultSink::new(&mut self.io, RowFormat::Text, deprecate_eof)
            .with_wire(wire)
            .with_local_files(local_files);
        let r = self.session.query(sql, &mut sink);
        let ok = r.is_ok();
        if ok && is_kill(sql) {
            // The victim's socket is shut before the killer hears OK, as in MariaDB: a
            // client that kills a connection and then uses it gets an error at once,
            // rather than whatever the accept loop's next round leaves time for.
            crate::listener::close_killed(self.shared);
        }
        let (rows_sent, affected) = (sink.rows(), affected_rows(&r));
        finish_statement(&self.session, r, sink, more && ok)?;
        self.slow_log(&timer.finish(&self.io, sql, rows_sent, affected));
        Ok(ok)
    }

    fn com_field_list(&mut self, body: &[u8]) -> CmdResult {
        let mut r = Reader::new(body);
        let table = self
            .client_charset()
            .decode(r.null_terminated())
            .into_owned();
        self.session.info().set_command("Field List", Some(&table));
        match self.session.field_list(&table) {
            Ok(cols) => {
                let wire = self.column_wire();
                for c in &cols {
                    self.io
                        .write_message(&crate::resultset::column_definition(c, true, wire))
                        .map_err(|_| CmdError::Close)?;
                }
                self.send_terminator()?;
            }
            Err(e) => self.send_sql_err(&e)?,
        }
        Ok(())
    }

    fn com_statistics(&mut self) -> CmdResult {
        // The one reply that is neither OK nor ERR: the bare text.
        let text = self.session.statistics();
        self.io
            .write_message(text.as_bytes())
            .map_err(|_| CmdError::Close)
    }

    fn com_process_kill(&mut self, body: &[u8]) -> CmdResult {
        let id = Reader::new(body).u32()?;
        self.run_text(&format!("KILL {id}"))
    }

    fn com_set_option(&mut self, body: &[u8]) -> CmdResult {
        match Reader::new(body).u16()? {
            0 => self.multi_statements = true,
            1 => self.multi_statements = false,
            _ => {
                self.send_err(&proto::unknown_command())?;
                return Ok(());
            }
        }
        tracing::trace!(multi = self.multi_statements, "COM_SET_OPTION");
        self.send_terminator()?;
        Ok(())
    }

    fn com_reset_connection(&mut self) -> CmdResult {
        // As MariaDB: the session starts over for the same account, in the same database,
        // with the handshake's character set (`Session::start_over` says what goes).
        let user = self.session.info().user.clone();
        let account = self.session.account();
        let db = self.session.current_database();
        self.start_over(&user, account.as_ref(), self.collation);
        if let Some(db) = db {
            // It was usable a moment ago; if it was dropped since, no database is selected.
            let _ = self.session.use_database(&db);
        }
        self.send_ok(0, 0, "")?;
        Ok(())
    }

    /// COM_CHANGE_USER: the new login is checked against the greeting's salt (switching
    /// the client's plugin as at the handshake); then, as MariaDB's `THD::change_user`, the
    /// session starts over, as the new user when the login and its database were accepted,
    /// else as the old one after the ERR (1045, 1044, 1049, 4151).
    fn com_change_user(&mut self, body: &[u8]) -> CmdResult {
        let cu = parse_change_user(body, self.caps).ok_or(CmdError::Malformed)?;
        self.session.info().set_command("Change user", None);
        let old_user = self.session.info().user.clone();
        let old_account = self.session.account();
        let collation = cu.collation.unwrap_or(self.collation);
        let verified = verify(
            &mut self.io,
            &self.salt,
            self.shared.instance.acl(),
            &self.shared.rsa_keys,
            &self.host,
            self.caps,
            cu.login.clone(),
        );
        match &verified {
            Ok(_) => self.shared.login_result(&self.host, true),
            Err(HandshakeError::Refused(e)) if e.code == 1045 => {
                self.shared.login_result(&self.host, false)
            }
            Err(_) => {}
        }
        let me = self.session.info().id;
        let refused = match verified {
            // The new account's connection limit, as at a login; this session is not one of
            // its others.
            Ok(account) => match over_user_limit(
                self.shared,
                &account,
                &mut self
                    .shared
                    .instance
                    .sessions()
                    .iter()
                    .map(|s| &**s)
                    .filter(|s| s.id != me),
            ) {
                Some(e) => Some(e),
                None => {
                    self.start_over(&cu.login.user, Some(&account), collation);
                    match &cu.db {
                        Some(db) => self.session.use_database(db).err(),
                        None => None,
                    }
                    .map(|e| to_wire(&e).ok_or(CmdError::Close))
                    .transpose()?
                }
            },
            Err(HandshakeError::Refused(e)) => Some(e),
            Err(HandshakeError::Frame(e)) => {
                let _ = send_frame_error(&mut self.io, &e);
                return Err(CmdError::Close);
            }
        };
        match refused {
            None => {
                self.collation = collation;
                self.send_ok(0, 0, "")?;
            }
            Some(e) => {
                // The old user stays, in a session that started over.
                self.start_over(&old_user, old_account.as_ref(), self.collation);
                self.send_err(&e)?;
            }
        }
        Ok(())
    }

    /// The session starts over as `user` (`Session::start_over`); the connection's
    /// prepared-statement state goes with it.
    fn start_over(&mut self, user: &str, account: Option<&(String, String)>, collation: u8) {
        self.stmts.clear();
        self.session.start_over(user);
        if let Some((u, h)) = account {
            self.session.set_account(u, h);
        }
        self.session.set_handshake_collation(collation);
    }
}

/// A command handler's failure: the connection ends, or the body did not parse.
#[derive(Debug)]
pub enum CmdError {
    Close,
    Malformed,
}

impl From<Close> for CmdError {
    fn from(_: Close) -> Self {
        CmdError::Close
    }
}

impl From<Malformed> for CmdError {
    fn from(_: Malformed) -> Self {
        CmdError::Malformed
    }
}

pub type CmdResult = Result<(), CmdError>;
