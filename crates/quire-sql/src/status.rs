//! # Statement counters: SHOW GLOBAL STATUS `Com_*`
//!
//! MariaDB counts every statement by kind (`Com_select`, `Com_insert`, `Com_commit`, …) and
//! every prepared-statement command (`Com_stmt_prepare`, `Com_stmt_execute`, …); monitoring
//! (mysqld_exporter, dashboards) graphs them as the server's query mix. Quire counts the same
//! names, instance-wide:
//! - a text statement (COM_QUERY, or one of a multi-statement query) counts its kind;
//! - COM_STMT_PREPARE counts `Com_stmt_prepare`, COM_STMT_EXECUTE `Com_stmt_execute` and the
//!   kind of the statement it runs, as MariaDB does;
//! - SQL `PREPARE` / `EXECUTE` / `DEALLOCATE PREPARE` count `Com_prepare_sql` /
//!   `Com_execute_sql` / `Com_dealloc_sql` (as text statements) and, like MariaDB, the
//!   `Com_stmt_*` command and the executed statement's kind too.
//!
//! The kind is read from the statement's leading keywords (and, for INSERT, REPLACE, UPDATE
//! and DELETE, whether a SELECT or a second table makes it `_select` / `_multi`), so counting
//! costs no parse. Invariant: counters only grow (no FLUSH STATUS reset yet).
//!
//! Each session also keeps its own `Com_*`, `Questions`, `Slow_queries` and `Bytes_*`
//! ([`SessionCounters`]), which SHOW [SESSION] STATUS shows, as MariaDB does.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Every counter, in the order SHOW STATUS lists them (alphabetical, as MariaDB).
pub(crate) const NAMES: &[&str] = &[
    "Com_alter_db",
    "Com_alter_table",
    "Com_alter_user",
    "Com_analyze",
    "Com_begin",
    "Com_change_db",
    "Com_check",
    "Com_checksum",
    "Com_commit",
    "Com_create_db",
    "Com_create_index",
    "Com_create_table",
    "Com_create_user",
    "Com_create_view",
    "Com_dealloc_sql",
    "Com_delete",
    "Com_delete_multi",
    "Com_do",
    "Com_drop_db",
    "Com_drop_index",
    "Com_drop_table",
    "Com_drop_user",
    "Com_drop_view",
    "Com_execute_sql",
    "Com_flush",
    "Com_grant",
    "Com_insert",
    "Com_insert_select",
    "Com_kill",
    "Com_lock_tables",
    "Com_optimize",
    "Com_prepare_sql",
    "Com_release_savepoint",
    "Com_rename_table",
    "Com_rename_user",
    "Com_replace",
    "Com_replace_select",
    "Com_revoke",
    "Com_rollback",
    "Com_rollback_to_savepoint",
    "Com_savepoint",
    "Com_select",
    "Com_set_option",
    "Com_show_create_db",
    "Com_show_create_table",
    "Com_show_databases",
    "Com_show_fields",
    "Com_show_grants",
    "Com_show_keys",
    "Com_show_processlist",
    "Com_show_status",
    "Com_show_table_status",
    "Com_show_tables",
    "Com_show_variables",
    "Com_show_warnings",
    "Com_shutdown",
    "Com_stmt_close",
    "Com_stmt_execute",
    "Com_stmt_fetch",
    "Com_stmt_prepare",
    "Com_stmt_reset",
    "Com_stmt_send_long_data",
    "Com_truncate",
    "Com_unlock_tables",
    "Com_update",
    "Com_update_multi",
];

/// The instance's counters, one per [`NAMES`] entry.
#[derive(Debug)]
pub(crate) struct ComCounters {
    counts: Vec<AtomicU64>,
}

impl Default for ComCounters {
    fn default() -> Self {
        ComCounters {
            counts: NAMES.iter().map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

impl ComCounters {
    /// Every counter with its value.
    pub(crate) fn all(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        NAMES
            .iter()
            .zip(&self.counts)
            .map(|(n, c)| (*n, c.load(Ordering::Relaxed)))
    }
}

/// One session's share of the counters MariaDB keeps per connection (`THD::status_var`):
/// SHOW [SESSION] STATUS and information_schema.SESSION_STATUS show these for the session,
/// the instance's for the rest (Connections, Uptime, Threads_*, Innodb_*: global only).
/// Counted beside the instance's, by the session's own thread (so `Cell`s); a new login on
/// the connection (COM_CHANGE_USER, COM_RESET_CONNECTION) starts them at zero, as MariaDB's
/// `THD::init`.
#[derive(Debug)]
pub(crate) struct SessionCounters {
    com: Box<[Cell<u64>]>,
    pub questions: Cell<u64>,
    pub slow_queries: Cell<u64>,
    pub bytes_received: Cell<u64>,
    pub bytes_sent: Cell<u64>,
}

impl Default for SessionCounters {
    fn default() -> Self {
        SessionCounters {
            com: NAMES.iter().map(|_| Cell::new(0)).collect(),
            questions: Cell::new(0),
            slow_queries: Cell::new(0),
            bytes_received: Cell::new(0),
            bytes_sent: Cell::new(0),
        }
    }
}

impl SessionCounters {
    pub(crate) fn bump(c: &Cell<u64>, n: u64) {
        c.set(c.get().wrapping_add(n));
    }

    /// The session's value of status variable `name`, if it is one kept per session.
    pub(crate) fn get(&self, name: &str) -> Option<u64> {
        Some(match name {
            "Questions" => self.questions.get(),
            "Slow_queries" => self.slow_queries.get(),
            "Bytes_received" => self.bytes_received.get(),
            "Bytes_sent" => self.bytes_sent.get(),
            _ => self.com[NAMES.binary_search(&name).ok()?].get(),
        })
    }
}

/// Counts `name` (one of [`NAMES`]) for the instance and the session.
pub(crate) fn count_com(inst: &ComCounters, session: &SessionCounters, name: &str) {
    debug_assert!(NAMES.contains(&name), "unknown counter {name}");
    // One search for both (two were a thirtieth of a prepared point select).
    if let Ok(i) = NAMES.binary_search(&name) {
        if let Some(c) = inst.counts.get(i) {
            c.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(c) = session.com.get(i) {
            SessionCounters::bump(c, 1);
        }
    }
}

/// Counts the kind of statement `text` (if it has a counter), for both.
pub(crate) fn count_statement(inst: &ComCounters, session: &SessionCounters, text: &str) {
    if let Some(name) = kind(text) {
        count_com(inst, session, name);
    }
}

/// The server's own counters (SHOW GLOBAL STATUS, `/metrics`), bumped by the server layer
/// (bytes, connections) and by the session at the end of each statement (rows read, slow
/// queries). Invariant: counters only grow; `Max_used_connections` is a high-water mark.
#[derive(Debug, Default)]
pub struct ServerCounters {
    pub aborted_clients: AtomicU64,
    pub aborted_connects: AtomicU64,
    pub bytes_received: AtomicU64,
    pub bytes_sent: AtomicU64,
    pub connections: AtomicU64,
    pub max_used_connections: AtomicU64,
    pub slow_queries: AtomicU64,
    /// Statements stopped by max_statement_time (1969).
    pub max_statement_time_exceeded: AtomicU64,
    /// Rows read from tables by statements (`Innodb_rows_read`): the sum of their
    /// `Rows_examined`.
    pub rows_read: AtomicU64,
}

impl ServerCounters {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    /// Every counter under its MariaDB status name.
    pub(crate) fn all(&self) -> [(&'static str, u64); 9] {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        [
            ("Aborted_clients", get(&self.aborted_clients)),
            ("Aborted_connects", get(&self.aborted_connects)),
            ("Bytes_received", get(&self.bytes_received)),
            ("Bytes_sent", get(&self.bytes_sent)),
            ("Connections", get(&self.connections)),
            ("Innodb_rows_read", get(&self.rows_read)),
            (
                "Max_statement_time_exceeded",
                get(&self.max_statement_time_exceeded),
            ),
            ("Max_used_connections", get(&self.max_used_connections)),
            ("Slow_queries", get(&self.slow_queries)),
        ]
    }
}

thread_local! {
    /// Rows this thread has read from tables (index and table reads the executor asked the
    /// engine for), all statements together; a statement's `Rows_examined` is the difference
    /// across it. A statement runs on its connection's thread, so the count is its own.
    static ROWS_EXAMINED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// `n` more rows were read from a table by this thread's statement.
pub(crate) fn examined(n: u64) {
    ROWS_EXAMINED.with(|c| c.set(c.get().wrapping_add(n)));
}

thread_local! {
    /// Whole tables or indexes this thread has read (scans without a range), all statements
    /// together; a statement that added to it did not use an index (MariaDB's
    /// SERVER_QUERY_NO_INDEX_USED, which `log_queries_not_using_indexes` logs).
    static FULL_SCANS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// This thread's statement reads a whole table or index.
pub(crate) fn full_scan() {
    FULL_SCANS.with(|c| c.set(c.get().wrapping_add(1)));
}

/// Where this thread's counters stand: a statement's share is the difference across it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mark {
    pub examined: u64,
    pub full_scans: u64,
}

/// The whole-table reads since `m` were the server's own, not the statement's: forgotten.
pub(crate) fn forget_full_scans_since(m: Mark) {
    FULL_SCANS.with(|c| c.set(m.full_scans));
}

pub(crate) fn mark() -> Mark {
    Mark {
        examined: thread_rows_examined(),
        full_scans: FULL_SCANS.with(|c| c.get()),
    }
}

/// This thread's running count of rows read (see `ROWS_EXAMINED`).
pub(crate) fn thread_rows_examined() -> u64 {
    ROWS_EXAMINED.with(|c| c.get())
}

/// Whether `text` is what MariaDB calls an administrative statement for the slow log
/// (`log_slow_admin_statements`): ALTER TABLE, ANALYZE, OPTIMIZE, CHECK, REPAIR, CREATE
/// INDEX and DROP INDEX.
pub fn is_admin_statement(text: &str) -> bool {
    if matches!(
        kind(text),
        Some(
            "Com_alter_table"
                | "Com_analyze"
                | "Com_optimize"
                | "Com_check"
                | "Com_create_index"
                | "Com_drop_index"
        )
    ) {
        return true;
    }
    let first = text.split_whitespace().next().unwrap_or("");
    first.eq_ignore_ascii_case("repair")
}

/// The words of `text` outside quotes, lowercased, up to `max` of them; `(` counts as a word
/// (a parenthesized SELECT), and a comma as `,` (a second table).
fn words(text: &str, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    let flush = |cur: &mut String, out: &mut Vec<String>| {
        if !cur.is_empty() {
            out.push(std::mem::take(cur).to_ascii_lowercase());
        }
    };
    while let Some(c) = chars.next() {
        if out.len() >= max {
            break;
        }
        if let Some(q) = quote {
            if c == '\\' && q != '`' {
                chars.next();
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' | '`' => {
                flush(&mut cur, &mut out);
                quote = Some(c);
                // A quoted name still stands for a word (a table).
                out.push("?".into());
            }
            '(' | ')' | ',' => {
                flush(&mut cur, &mut out);
                out.push(c.to_string());
            }
            c if c.is_alphanumeric() || c == '_' || c == '$' || c == '.' || c == '@' => cur.push(c),
            _ => flush(&mut cur, &mut out),
        }
    }
    flush(&mut cur, &mut out);
    out
}

/// Whether `text` has the word `lower` (lower case) outside quotes: [`words`]' reading,
/// without making the words (an INSERT's text is read for SELECT at every execution).
fn has_word(text: &str, lower: &str) -> bool {
    let b = text.as_bytes();
    // Most texts do not have the letters at all (an INSERT's values): a SIMD search for
    // the word's first letter, in either case, rules them out without the byte-by-byte
    // walk over quotes below (3,600 instructions for sysbench's INSERT).
    let Some(&first) = lower.as_bytes().first() else {
        return false;
    };
    let n = lower.len();
    if !memchr::memchr2_iter(first, first.to_ascii_uppercase(), b).any(|i| {
        b.get(i..i + n)
            .is_some_and(|w| w.eq_ignore_ascii_case(lower.as_bytes()))
    }) {
        return false;
    }
    let in_word =
        |c: u8| c.is_ascii_alphanumeric() || c >= 0x80 || matches!(c, b'_' | b'$' | b'.' | b'@');
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' | b'`' => i = crate::dispatch::quoted_end(b, i) + 1,
            c if in_word(c) => {
                let start = i;
                while i < b.len() && in_word(b[i]) {
                    i += 1;
                }
                if b[start..i].eq_ignore_ascii_case(lower.as_bytes()) {
                    return true;
                }
            }
            _ => i += 1,
        }
    }
    false
}

/// The counter of statement `text`, by its leading keywords.
pub(crate) fn kind(text: &str) -> Option<&'static str> {
    let first = text
        .trim_start()
        .split(|c: char| c.is_whitespace() || c == '(' || c == ';')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let starts_with_paren = text.trim_start().starts_with('(');
    if starts_with_paren {
        return Some("Com_select");
    }
    Some(match first.as_str() {
        "select" | "with" | "values" | "table" => "Com_select",
        "insert" | "replace" => {
            let has_select = has_word(text, "select");
            match (first.as_str(), has_select) {
                ("insert", false) => "Com_insert",
                ("insert", true) => "Com_insert_select",
                (_, false) => "Com_replace",
                (_, true) => "Com_replace_select",
            }
        }
        "update" => {
            // A second table before SET: a comma or a JOIN at the top level.
            let w = words(text, 4096);
            let mut depth = 0i32;
            let mut multi = false;
            for x in &w[1..] {
                match x.as_str() {
                    "(" => depth += 1,
                    ")" => depth -= 1,
                    "set" if depth == 0 => break,
                    "," | "join" if depth == 0 => multi = true,
                    _ => {}
                }
            }
            if multi {
                "Com_update_multi"
            } else {
                "Com_update"
            }
        }
        "delete" => {
            // Single-table: DELETE [LOW_PRIORITY] [QUICK] [IGNORE] FROM t …; anything named
            // before FROM, or USING, or a JOIN, is the multi-table form.
            let w = words(text, 4096);
            let from = w.iter().position(|x| x == "from");
            let before_from = from.map_or(0, |f| {
                w[1..f]
                    .iter()
                    .filter(|x| !matches!(x.as_str(), "low_priority" | "quick" | "ignore"))
                    .count()
            });
            let multi = before_from > 0 || w.iter().any(|x| x == "using" || x == "join");
            if multi {
                "Com_delete_multi"
            } else {
                "Com_delete"
            }
        }
        "do" => "Com_do",
        "begin" => "Com_begin",
        "start" => "Com_begin",
        "commit" => "Com_commit",
        "rollback" => {
            let w = words(text, 3);
            if w.get(1).is_some_and(|x| x == "to") || w.get(2).is_some_and(|x| x == "to") {
                "Com_rollback_to_savepoint"
            } else {
                "Com_rollback"
            }
        }
        "savepoint" => "Com_savepoint",
        "release" => "Com_release_savepoint",
        "set" => "Com_set_option",
        "use" => "Com_change_db",
        "truncate" => "Com_truncate",
        "analyze" => "Com_analyze",
        "optimize" => "Com_optimize",
        "check" => "Com_check",
        "checksum" => "Com_checksum",
        "flush" => "Com_flush",
        "grant" => "Com_grant",
        "revoke" => "Com_revoke",
        "kill" => "Com_kill",
        "shutdown" => "Com_shutdown",
        "prepare" => "Com_prepare_sql",
        "execute" => "Com_execute_sql",
        "deallocate" => "Com_dealloc_sql",
        "lock" => "Com_lock_tables",
        "unlock" => "Com_unlock_tables",
        "describe" | "desc" => "Com_show_fields",
        "rename" => match words(text, 2).get(1).map(String::as_str) {
            Some("user") => "Com_rename_user",
            _ => "Com_rename_table",
        },
        "create" | "drop" | "alter" => {
            let w = words(text, 12);
            // CREATE [OR REPLACE] [TEMPORARY | UNIQUE | FULLTEXT | ALGORITHM=… …] <object>
            let object = w[1..].iter().find(|x| {
                matches!(
                    x.as_str(),
                    "table" | "database" | "schema" | "index" | "view" | "user" | "prepare"
                )
            });
            let obj = object.map(String::as_str).unwrap_or("");
            match (first.as_str(), obj) {
                ("drop", "prepare") => "Com_dealloc_sql",
                ("create", "table") => "Com_create_table",
                ("create", "database" | "schema") => "Com_create_db",
                ("create", "index") => "Com_create_index",
                ("create", "view") => "Com_create_view",
                ("create", "user") => "Com_create_user",
                ("drop", "table") => "Com_drop_table",
                ("drop", "database" | "schema") => "Com_drop_db",
                ("drop", "index") => "Com_drop_index",
                ("drop", "view") => "Com_drop_view",
                ("drop", "user") => "Com_drop_user",
                ("alter", "table") => "Com_alter_table",
                ("alter", "database" | "schema") => "Com_alter_db",
                ("alter", "user") => "Com_alter_user",
                _ => return None,
            }
        }
        "show" => {
            let w = words(text, 4);
            let mut i = 1;
            while w
                .get(i)
                .is_some_and(|x| matches!(x.as_str(), "full" | "global" | "session" | "local"))
            {
                i += 1;
            }
            match w.get(i).map(String::as_str).unwrap_or("") {
                "variables" => "Com_show_variables",
                "status" => "Com_show_status",
                "tables" => "Com_show_tables",
                "databases" | "schemas" => "Com_show_databases",
                "columns" | "fields" => "Com_show_fields",
                "index" | "indexes" | "keys" => "Com_show_keys",
                "processlist" => "Com_show_processlist",
                "warnings" => "Com_show_warnings",
                "grants" => "Com_show_grants",
                "table" => "Com_show_table_status",
                "create" => match w.get(i + 1).map(String::as_str) {
                    Some("database" | "schema") => "Com_show_create_db",
                    _ => "Com_show_create_table",
                },
                _ => return None,
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sorted_for_the_binary_search() {
        assert!(NAMES.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn has_word_reads_as_words_does() {
        for t in [
            "INSERT INTO t SELECT 1",
            "insert into t(a)select(1)",
            "INSERT INTO t VALUES ('select')",
            "INSERT INTO t VALUES ('it''s', \"select\", 'a\\'select')",
            "INSERT INTO `select` VALUES (1)",
            "INSERT INTO t.select VALUES (1)",
            "INSERT INTO t VALUES (@select)",
            "INSERT INTO selects VALUES (1)",
            "INSERT INTO t VALUES (1) -- select",
            "INSERT INTO t VALUES ('é') SELECT",
            "INSERT INTO t VALUES ('unterminated select",
        ] {
            let expected = words(t, 4096).iter().any(|w| w == "select");
            assert_eq!(has_word(t, "select"), expected, "{t}");
        }
    }

    #[test]
    fn statements_count_under_mariadb_s_names() {
        let cases = [
            ("SELECT 1", "Com_select"),
            ("(SELECT 1) UNION (SELECT 2)", "Com_select"),
            ("WITH c AS (SELECT 1) SELECT * FROM c", "Com_select"),
            ("insert into t values (1)", "Com_insert"),
            ("INSERT INTO t SELECT * FROM u", "Com_insert_select"),
            ("INSERT INTO t VALUES ('select')", "Com_insert"),
            ("insert into t SeLeCt 1", "Com_insert_select"),
            ("INSERT INTO sel VALUES ('selec', 'elect')", "Com_insert"),
            ("INSERT INTO t VALUES ('a') -- selec", "Com_insert"),
            ("INSERT INTO t (a) (SELECT 1)", "Com_insert_select"),
            ("INSERT INTO selected VALUES (1)", "Com_insert"),
            ("REPLACE INTO t VALUES (1)", "Com_replace"),
            ("REPLACE t SELECT 1", "Com_replace_select"),
            ("UPDATE t SET a = 1 WHERE b IN (SELECT 1)", "Com_update"),
            ("UPDATE t, u SET t.a = u.a", "Com_update_multi"),
            (
                "UPDATE t JOIN u ON t.a = u.a SET t.b = 1",
                "Com_update_multi",
            ),
            ("UPDATE t SET a = 'x, y'", "Com_update"),
            ("DELETE FROM t WHERE a = 1", "Com_delete"),
            ("DELETE QUICK IGNORE FROM t", "Com_delete"),
            ("DO @x := 1", "Com_do"),
            ("DELETE t FROM t JOIN u ON t.a = u.a", "Com_delete_multi"),
            (
                "DELETE FROM t USING t, u WHERE t.a = u.a",
                "Com_delete_multi",
            ),
            ("BEGIN", "Com_begin"),
            ("START TRANSACTION READ ONLY", "Com_begin"),
            ("COMMIT", "Com_commit"),
            ("ROLLBACK", "Com_rollback"),
            ("ROLLBACK TO SAVEPOINT s", "Com_rollback_to_savepoint"),
            ("ROLLBACK WORK TO s", "Com_rollback_to_savepoint"),
            ("SET autocommit = 0", "Com_set_option"),
            ("CREATE TABLE t (a INT)", "Com_create_table"),
            ("CREATE TEMPORARY TABLE t (a INT)", "Com_create_table"),
            ("CREATE OR REPLACE VIEW v AS SELECT 1", "Com_create_view"),
            ("CREATE UNIQUE INDEX i ON t (a)", "Com_create_index"),
            ("DROP TABLE IF EXISTS t", "Com_drop_table"),
            ("DROP PREPARE s", "Com_dealloc_sql"),
            ("ALTER TABLE t ADD c INT", "Com_alter_table"),
            ("SHOW GLOBAL STATUS", "Com_show_status"),
            ("SHOW FULL TABLES", "Com_show_tables"),
            ("SHOW FULL COLUMNS FROM t", "Com_show_fields"),
            ("SHOW TABLE STATUS", "Com_show_table_status"),
            ("SHOW CREATE DATABASE d", "Com_show_create_db"),
            ("RENAME TABLE a TO b", "Com_rename_table"),
        ];
        for (sql, want) in cases {
            assert_eq!(kind(sql), Some(want), "{sql}");
        }
        assert_eq!(kind("HELP 'x'"), None);
        assert_eq!(kind("CREATE TRIGGER x"), None);
    }

    #[test]
    fn counting_adds_to_the_named_counter_only() {
        let c = ComCounters::default();
        let s = SessionCounters::default();
        count_statement(&c, &s, "SELECT 1");
        count_statement(&c, &s, "select 2");
        count_com(&c, &s, "Com_stmt_execute");
        // Another session's statement: the instance's counter only.
        count_com(&c, &SessionCounters::default(), "Com_select");
        let all: std::collections::HashMap<_, _> = c.all().collect();
        assert_eq!(all["Com_select"], 3);
        assert_eq!(all["Com_stmt_execute"], 1);
        assert_eq!(all.values().sum::<u64>(), 4);
        // The session saw its own three only.
        assert_eq!(s.get("Com_select"), Some(2));
        assert_eq!(s.get("Com_stmt_execute"), Some(1));
        assert_eq!(s.get("Connections"), None);
    }
}
