//! # The slow query log
//!
//! MariaDB's slow query log, in its file format (docs/slow-log.md), so that the tools that
//! read MariaDB's (pt-query-digest, mariadb-dumpslow) read Quire's:
//!
//! ```text
//! # Time: 261128  0:19:24
//! # User@Host: root[root] @  [127.0.0.1]
//! # Thread_id: 3  Schema: t  QC_hit: No
//! # Query_time: 0.000437  Lock_time: 0.000167  Rows_sent: 2  Rows_examined: 3
//! # Rows_affected: 0  Bytes_sent: 104
//! use `t`;
//! SET timestamp=1795825164;
//! select * from x where b>1;
//! ```
//!
//! A statement (COM_QUERY, one statement of a multi-statement query, COM_STMT_EXECUTE) is
//! slow when its time less its lock waits is over `long_query_time` (or it read a whole table
//! or index and `log_queries_not_using_indexes` is on) and it examined at least
//! `min_examined_row_limit` rows, as MariaDB decides. A slow statement counts in
//! `Slow_queries` whether or not the log is on; it is written when `slow_query_log` is on,
//! globally and in the session (which took the global value when it connected) and
//! `log_output` holds FILE and not NONE, and for
//! ALTER, ANALYZE, OPTIMIZE, CHECK and CREATE/DROP INDEX only with
//! `log_slow_admin_statements`.
//!
//! Invariants:
//! 1. An entry is written whole, under the log's mutex, with one `write_all`: entries of
//!    concurrent sessions never interleave.
//! 2. The file written is the one `slow_query_log_file` names when the entry is written (a
//!    relative name is in the data directory): a changed name opens the new file first.
//! 3. Logging never fails a statement and never stops the server: a file that cannot be
//!    opened or written is reported once to the error log, and its entries are dropped until
//!    the name changes or FLUSH LOGS (FLUSH SLOW LOGS) runs.

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use quire_sql::{Instance, Session, SlowLogSettings, Value};

/// One finished statement, as the connection measured it.
pub struct Statement<'a> {
    /// The statement's text (a prepared statement's with its parameters in place).
    pub text: &'a str,
    /// When it started (the `SET timestamp=` line).
    pub started: SystemTime,
    pub query_time: Duration,
    /// Time spent waiting for metadata and row locks.
    pub lock_time: Duration,
    pub rows_sent: u64,
    pub rows_affected: u64,
    pub bytes_sent: u64,
}

/// The server's slow query log (see the module comment).
pub struct SlowLog {
    data_dir: PathBuf,
    /// How the server was started, for the header a newly opened file gets.
    header: String,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The name the open file (or the failed attempt) was for (invariant 2), and the
    /// FLUSH LOGS count it was opened under.
    name: Option<String>,
    flushes: u64,
    file: Option<File>,
    /// The name failed to open or write; reported already (invariant 3).
    failed: bool,
    /// The second of the last `# Time:` line: MariaDB writes one per second at most.
    last_second: Option<u64>,
    /// The database of the last entry: a `use` line is written when it changes.
    last_db: Option<String>,
}

impl SlowLog {
    pub fn new(data_dir: &Path, port: Option<&str>, socket: Option<&Path>) -> SlowLog {
        let exe = std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "quire".into());
        let header = format!(
            "{exe}, Version: {} (Quire). started with:\nTcp port: {}  Unix socket: {}\n\
             Time\t\t    Id Command\tArgument\n",
            quire_sql::expr::VERSION,
            port.unwrap_or("0"),
            socket.map(|p| p.display().to_string()).unwrap_or_default(),
        );
        SlowLog {
            data_dir: data_dir.to_path_buf(),
            header,
            state: Mutex::new(State::default()),
        }
    }

    /// Whether `s` was slow for `session`'s settings (see the module comment).
    pub fn is_slow(&self, session: &Session<'_>, s: &Statement) -> bool {
        // MariaDB measures from after the locks were taken (`utime_after_lock`).
        let busy = s.query_time.saturating_sub(s.lock_time).as_micros() as u64;
        // A statement that used no index is slow with log_queries_not_using_indexes,
        // however fast (SHOW statements aside, as MariaDB's QPLAN_STATUS).
        let no_index = || session.logs_not_using_index() && !is_show(s.text);
        (busy > session.long_query_us() || no_index())
            && session.rows_examined() >= session.slow_log_settings().min_examined
    }

    /// Counts and logs `stmt` if it was slow for `session`'s settings.
    pub fn after_statement(&self, instance: &Instance<'_>, session: &Session<'_>, s: &Statement) {
        if !self.is_slow(session, s) {
            return;
        }
        let cfg: SlowLogSettings = session.slow_log_settings();
        let examined = session.rows_examined();
        quire_sql::status::ServerCounters::add(&instance.counters().slow_queries, 1);
        session.count_slow_query();
        if !cfg.write || (!cfg.admin && quire_sql::status::is_admin_statement(s.text)) {
            return;
        }
        // log_output: NONE (even beside FILE) writes nothing; TABLE is refused by SET.
        let output = quire_sql::session::global_text(instance, "log_output").unwrap_or_default();
        if !output.split(',').any(|o| o == "FILE") || output.split(',').any(|o| o == "NONE") {
            return;
        }
        let name = match quire_sql::session::global_text(instance, "slow_query_log_file") {
            Some(n) if !n.is_empty() => n,
            _ => return,
        };
        let info = session.info();
        let db = info.db.lock().clone();
        // Invariant 1: the entry is built and written under the mutex.
        let mut st = self.state.lock();
        let flushes = instance.logs_flushed();
        if st.name.as_deref() != Some(name.as_str()) || st.flushes != flushes {
            // A new name, or FLUSH LOGS since the file was opened: open it (again).
            *st = State {
                name: Some(name.clone()),
                flushes,
                ..State::default()
            };
        }
        let entry = st.entry(session, db, examined, s);
        self.write(&mut st, &name, entry.as_bytes());
    }

    /// Writes `bytes` to the file `name` names, opening it first if needed (invariants
    /// 1-3).
    fn write(&self, st: &mut State, name: &str, bytes: &[u8]) {
        if st.failed {
            return;
        }
        let path = self.data_dir.join(name);
        if st.file.is_none() {
            match OpenOptions::new().create(true).append(true).open(&path) {
                Ok(mut f) => {
                    if let Err(e) = f.write_all(self.header.as_bytes()) {
                        return st.fail(&path, &e);
                    }
                    st.file = Some(f);
                }
                Err(e) => return st.fail(&path, &e),
            }
        }
        if let Some(f) = st.file.as_mut() {
            if let Err(e) = f.write_all(bytes) {
                st.fail(&path, &e);
            }
        }
    }
}

/// Whether `text` is a SHOW statement (MariaDB never logs those for not using an index).
fn is_show(text: &str) -> bool {
    text.trim_start()
        .get(..4)
        .is_some_and(|w| w.eq_ignore_ascii_case("show"))
}

impl State {
    fn fail(&mut self, path: &Path, e: &std::io::Error) {
        self.failed = true;
        self.file = None;
        tracing::error!(
            "slow query log {}: {e}; its entries are dropped",
            path.display()
        );
    }

    /// The text of one entry, in MariaDB's format.
    fn entry(
        &mut self,
        session: &Session<'_>,
        db: Option<String>,
        examined: u64,
        s: &Statement,
    ) -> String {
        let mut out = String::with_capacity(s.text.len() + 320);
        let now = unix_us(SystemTime::now());
        let second = now / 1_000_000;
        if self.last_second != Some(second) {
            self.last_second = Some(second);
            let _ = writeln!(out, "# Time: {}", time_line(second));
        }
        let info = session.info();
        let user = &info.user;
        // MariaDB: `user[user] @ host [ip]`; a socket client is `localhost []`, a TCP one
        // (names not resolved) ` [address]`.
        let at = if info.host == "localhost" {
            "localhost []".to_string()
        } else {
            format!(" [{}]", info.host)
        };
        let _ = writeln!(out, "# User@Host: {user}[{user}] @ {at}");
        let _ = writeln!(
            out,
            "# Thread_id: {}  Schema: {}  QC_hit: No",
            info.id,
            db.as_deref().unwrap_or("")
        );
        let _ = writeln!(
            out,
            "# Query_time: {}  Lock_time: {}  Rows_sent: {}  Rows_examined: {examined}",
            seconds(s.query_time),
            seconds(s.lock_time),
            s.rows_sent,
        );
        let _ = writeln!(
            out,
            "# Rows_affected: {}  Bytes_sent: {}",
            s.rows_affected, s.bytes_sent
        );
        if let Some(d) = &db {
            if self.last_db.as_deref() != Some(d.as_str()) {
                let _ = writeln!(out, "use {};", quote_name(d));
                self.last_db = Some(d.clone());
            }
        }
        let _ = writeln!(out, "SET timestamp={};", unix_us(s.started) / 1_000_000);
        out.push_str(s.text);
        if !s.text.trim_end().ends_with(';') {
            out.push(';');
        }
        out.push('\n');
        out
    }
}

fn unix_us(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// `0.000437`: seconds with microseconds, as MariaDB prints them.
fn seconds(d: Duration) -> String {
    format!("{}.{:06}", d.as_secs(), d.subsec_micros())
}

/// `261128  0:19:24` for 2026-11-28 00:19:24 UTC (the server's time zone is UTC:
/// `system_time_zone`): `%y%m%d %2H:%M:%S`, as MariaDB's `# Time:` line.
fn time_line(unix_secs: u64) -> String {
    let t = quire_sql::func::datetime::from_unix_us(unix_secs as i64 * 1_000_000);
    format!(
        "{:02}{:02}{:02} {:2}:{:02}:{:02}",
        t.date.year % 100,
        t.date.month,
        t.date.day,
        t.hour,
        t.minute,
        t.second
    )
}

/// A database name as the `use` line writes it: back-quoted, as MariaDB 10.11 does.
fn quote_name(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// A prepared statement's text with each `?` placeholder (outside quotes and comments)
/// replaced by its parameter as a literal: what MariaDB writes for an execution.
pub fn with_parameters(sql: &str, params: &[Value]) -> String {
    let mut out = String::with_capacity(sql.len() + params.len() * 8);
    let mut next = params.iter();
    let mut chars = sql.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        match c {
            '\'' | '"' | '`' => {
                out.push(c);
                while let Some((_, x)) = chars.next() {
                    out.push(x);
                    if x == '\\' && c != '`' {
                        if let Some((_, y)) = chars.next() {
                            out.push(y);
                        }
                    } else if x == c {
                        break;
                    }
                }
            }
            '-' if matches!(chars.peek(), Some((_, '-'))) => {
                out.push(c);
                for (_, x) in chars.by_ref() {
                    out.push(x);
                    if x == '\n' {
                        break;
                    }
                }
            }
            '#' => {
                out.push(c);
                for (_, x) in chars.by_ref() {
                    out.push(x);
                    if x == '\n' {
                        break;
                    }
                }
            }
            '/' if matches!(chars.peek(), Some((_, '*'))) => {
                out.push(c);
                let mut star = false;
                for (_, x) in chars.by_ref() {
                    out.push(x);
                    if star && x == '/' {
                        break;
                    }
                    star = x == '*';
                }
            }
            '?' => match next.next() {
                Some(v) => out.push_str(&literal(v)),
                None => out.push('?'),
            },
            _ => out.push(c),
        }
    }
    out
}

/// A value as a SQL literal.
fn literal(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Decimal(_) => {
            quire_sql::types::display(v)
        }
        Value::Bytes(b) => match std::str::from_utf8(b) {
            Ok(s) => quire_sql::types::quote_string(s),
            Err(_) => {
                let mut hex = String::with_capacity(b.len() * 2 + 3);
                hex.push_str("X'");
                for byte in b {
                    let _ = write!(hex, "{byte:02X}");
                }
                hex.push('\'');
                hex
            }
        },
        other => quire_sql::types::quote_string(&quire_sql::types::display(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_line_is_mariadbs() {
        // 2026-11-28 00:19:24 UTC
        assert_eq!(time_line(1_795_825_164), "261128  0:19:24");
        // 2000-02-29 13:05:09 UTC
        assert_eq!(time_line(951_829_509), "000229 13:05:09");
    }

    #[test]
    fn parameters_replace_placeholders_outside_quotes_and_comments() {
        let sql = "select '?', `a?`, ? /* ? */ from t where b = ? -- ?\n and c = ?";
        let got = with_parameters(
            sql,
            &[
                Value::Int(7),
                Value::Str("it's".into()),
                Value::Bytes(vec![0xff, 0x00]),
            ],
        );
        assert_eq!(
            got,
            "select '?', `a?`, 7 /* ? */ from t where b = 'it\\'s' -- ?\n and c = X'FF00'"
        );
        // Fewer parameters than placeholders: the rest stay as they are.
        assert_eq!(with_parameters("? ?", &[Value::Null]), "NULL ?");
    }

    #[test]
    fn seconds_have_six_decimals() {
        assert_eq!(seconds(Duration::from_micros(437)), "0.000437");
        assert_eq!(seconds(Duration::from_micros(2_000_218)), "2.000218");
    }

    #[test]
    fn use_lines_back_quote_the_name() {
        assert_eq!(quote_name("t"), "`t`");
        assert_eq!(quote_name("a`b"), "`a``b`");
    }
}
