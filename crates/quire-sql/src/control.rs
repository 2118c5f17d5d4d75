//! Statements handled by the keyword dispatch: transaction control, USE, SHOW, DESCRIBE,
//! CHECK TABLE, CHECKSUM TABLE, FLUSH TABLES … FOR EXPORT, UNLOCK TABLES.

use quire_engine::row::Value;

use crate::dispatch::{lex, qualified_name, Tok};
use crate::error::{Result, SqlError};
use crate::meta::{ColumnMeta, FieldType, RowSink};
use crate::session::{Outcome, Session};
use crate::types;

/// Sends a result set of text columns (SHOW output).
pub(crate) fn send_table(
    sink: &mut dyn RowSink,
    cols: &[(&str, FieldType)],
    rows: Vec<Vec<Value>>,
) -> Result<Outcome> {
    let metas: Vec<ColumnMeta> = cols
        .iter()
        .map(|(n, t)| {
            let len = match t {
                FieldType::LongLong => 21,
                _ => 256,
            };
            ColumnMeta::computed(*n, *t, len, 0)
        })
        .collect();
    sink.columns(&metas)?;
    for r in rows {
        sink.row(&r)?;
    }
    Ok(Outcome::ResultSet)
}

fn s(v: impl Into<String>) -> Value {
    Value::Str(v.into())
}

/// SHOW … LIKE matching (case-insensitive, as MySQL's system collation).
pub(crate) fn like_ok(pattern: &Option<String>, name: &str) -> bool {
    pattern.as_ref().is_none_or(|p| {
        crate::expr::like(
            name,
            p,
            '\\',
            quire_engine::row::Collation::Utf8mb4GeneralCi,
        )
    })
}

pub(crate) fn like_at(toks: &[Tok], i: usize) -> Result<Option<String>> {
    match (toks.get(i), toks.get(i + 1)) {
        (None, _) => Ok(None),
        (Some(t), Some(Tok::Str(p))) if t.is("like") => Ok(Some(p.clone())),
        (Some(t), _) if t.is("where") => Err(SqlError::Unsupported("SHOW … WHERE".into())),
        (Some(t), _) => Err(SqlError::Parse {
            near: format!("{t:?}"),
            line: 1,
        }),
    }
}

/// `SHOW … WHERE cond` split at its top-level WHERE (outside quotes and parentheses):
/// the SHOW and the condition's text. `None`: no WHERE.
pub(crate) fn split_show_where(text: &str) -> Option<(&str, &str)> {
    let b = text.as_bytes();
    let (mut i, mut depth, mut quote) = (0usize, 0i32, None::<u8>);
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) => {
                if c == b'\\' && q != b'`' {
                    i += 1;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                b'\'' | b'"' | b'`' => quote = Some(c),
                b'(' => depth += 1,
                b')' => depth -= 1,
                _ if depth == 0
                    && b.len() - i >= 5
                    && b[i..i + 5].eq_ignore_ascii_case(b"where")
                    && (i == 0 || !is_word_byte(b[i - 1]))
                    && b.get(i + 5).is_none_or(|&n| !is_word_byte(n)) =>
                {
                    return Some((&text[..i], &text[i + 5..]));
                }
                _ => {}
            },
        }
        i += 1;
    }
    None
}

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// A SHOW output value as a literal of the filtering SELECT (hex for anything a
/// NO_BACKSLASH_ESCAPES session would read differently).
fn show_literal(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Int(n) => n.to_string(),
        Value::UInt(n) => n.to_string(),
        Value::Str(t) if !t.contains(['\\', '\0']) => crate::acl::quote(t),
        other => {
            let text = types::display(other);
            let hex: String = text.bytes().map(|b| format!("{b:02X}")).collect();
            if hex.is_empty() {
                "\'\'".into()
            } else {
                format!("CONVERT(X'{hex}' USING utf8mb4)")
            }
        }
    }
}

fn syntax(text: &str) -> SqlError {
    SqlError::Parse {
        near: text.chars().take(80).collect(),
        line: 1,
    }
}

impl<'d> Session<'d> {
    /// Handles `text` if its leading keywords belong to the dispatch; `None` otherwise.
    pub(crate) fn special(
        &mut self,
        text: &str,
        sink: &mut dyn RowSink,
    ) -> Result<Option<Outcome>> {
        let first = text
            .split(|c: char| c.is_whitespace() || c == '(' || c == ';')
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        if !matches!(
            first.as_str(),
            "begin"
                | "start"
                | "commit"
                | "rollback"
                | "savepoint"
                | "release"
                | "use"
                | "show"
                | "describe"
                | "desc"
                | "explain"
                | "check"
                | "flush"
                | "unlock"
                | "lock"
                | "analyze"
                | "optimize"
                | "checksum"
                | "set"
                | "shutdown"
                | "prepare"
                | "execute"
                | "deallocate"
                | "drop"
                | "alter"
                | "do"
        ) {
            return Ok(None);
        }
        if first == "do" {
            return self.do_statement(text, sink).map(Some);
        }
        if let Some(out) = self.sql_prepare_command(&first, text, sink)? {
            return Ok(Some(out));
        }
        if first == "drop" {
            return Ok(None);
        }
        if first == "set" {
            return self.set_list(text, sink);
        }
        let toks = lex(text).ok_or_else(|| syntax(text))?;
        let w = |i: usize| {
            toks.get(i).map(|t| match t {
                Tok::Word(w) => w.to_ascii_lowercase(),
                _ => String::new(),
            })
        };
        let ok = Ok(Some(Outcome::ok(0)));
        match first.as_str() {
            "begin" => {
                if toks.len() > 2 || (toks.len() == 2 && !toks[1].is("work")) {
                    return Err(syntax(text));
                }
                // A session whose transactions are READ ONLY (`tx_read_only`, SET SESSION
                // TRANSACTION READ ONLY) begins read-only ones.
                let read_only = self.var_bool("tx_read_only");
                self.begin(read_only)?;
                ok
            }
            "start" => {
                if !toks.get(1).is_some_and(|t| t.is("transaction")) {
                    return Err(syntax(text));
                }
                let rest: Vec<String> = toks[2..]
                    .iter()
                    .filter_map(|t| match t {
                        Tok::Word(w) => Some(w.to_ascii_lowercase()),
                        _ => None,
                    })
                    .collect();
                let read_only = rest.windows(2).any(|p| p == ["read", "only"])
                    || (!rest.windows(2).any(|p| p == ["read", "write"])
                        && self.var_bool("tx_read_only"));
                let consistent = rest.windows(2).any(|p| p == ["consistent", "snapshot"]);
                self.begin(read_only)?;
                if consistent && self.isolation() == quire_engine::trx::Isolation::RepeatableRead {
                    // WITH CONSISTENT SNAPSHOT: the snapshot is taken now, not at first read
                    // (other levels ignore it, as InnoDB does).
                    self.snap = Some(self.inst.db.snapshot());
                    self.read_open = true;
                }
                ok
            }
            "commit" => {
                self.commit_open()?;
                ok
            }
            "rollback" => {
                // ROLLBACK [WORK] TO [SAVEPOINT] name
                let mut i = 1;
                if w(i).as_deref() == Some("work") {
                    i += 1;
                }
                if w(i).as_deref() == Some("to") {
                    i += 1;
                    if w(i).as_deref() == Some("savepoint") {
                        i += 1;
                    }
                    let name = toks
                        .get(i)
                        .and_then(Tok::ident)
                        .ok_or_else(|| syntax(text))?;
                    let tx = self
                        .trx
                        .as_mut()
                        .ok_or_else(|| SqlError::NoSuchSavepoint(name.into()))?;
                    tx.rollback_to_savepoint(name).map_err(|e| match e {
                        quire_engine::table::DbError::NoSuchSavepoint(_) => {
                            SqlError::NoSuchSavepoint(name.into())
                        }
                        e => e.into(),
                    })?;
                    return ok;
                }
                self.rollback_open()?;
                ok
            }
            "savepoint" => {
                let name = toks
                    .get(1)
                    .and_then(Tok::ident)
                    .ok_or_else(|| syntax(text))?;
                if self.trx.is_none() {
                    // MySQL accepts SAVEPOINT outside a transaction and forgets it.
                    if self.explicit || !self.autocommit() {
                        self.trx = Some(self.begin_trx()?);
                    } else {
                        return ok;
                    }
                }
                if let Some(tx) = self.trx.as_mut() {
                    tx.savepoint(name)?;
                }
                ok
            }
            "release" => {
                if w(1).as_deref() != Some("savepoint") {
                    return Err(syntax(text));
                }
                let name = toks
                    .get(2)
                    .and_then(Tok::ident)
                    .ok_or_else(|| syntax(text))?;
                let tx = self
                    .trx
                    .as_mut()
                    .ok_or_else(|| SqlError::NoSuchSavepoint(name.into()))?;
                tx.release_savepoint(name)?;
                ok
            }
            "use" => {
                let db = toks
                    .get(1)
                    .and_then(Tok::ident)
                    .ok_or_else(|| syntax(text))?;
                self.use_database(db)?;
                ok
            }
            "show" => match split_show_where(text) {
                Some((show, cond)) => self.show_where(show, cond, sink).map(Some),
                None => self.show(text, &toks, sink).map(Some),
            },
            "describe" | "desc" | "explain" => {
                // DESCRIBE t / EXPLAIN t; EXPLAIN SELECT … goes to the parser.
                let next = w(1).unwrap_or_default();
                if matches!(
                    next.as_str(),
                    "select"
                        | "update"
                        | "delete"
                        | "insert"
                        | "replace"
                        | "extended"
                        | "partitions"
                        | "format"
                ) {
                    return self.explain(text, sink).map(Some);
                }
                let (db, t, _) = qualified_name(&toks, 1).ok_or_else(|| syntax(text))?;
                self.show_columns(db, &t, None, false, sink).map(Some)
            }
            "check" => {
                if w(1).as_deref() != Some("table") {
                    return Err(syntax(text));
                }
                self.check_tables(&toks[2..], sink).map(Some)
            }
            "flush" => {
                // FLUSH TABLES t[, t] FOR EXPORT writes every dirty page of those tables.
                let words: Vec<String> = toks
                    .iter()
                    .map(|t| match t {
                        Tok::Word(w) => w.to_ascii_lowercase(),
                        _ => String::new(),
                    })
                    .collect();
                if words.len() >= 2 && words.ends_with(&["for".into(), "export".into()]) {
                    let mut i = 2;
                    let mut names = Vec::new();
                    while i < toks.len() - 2 {
                        let (db, t, next) = qualified_name(&toks, i).ok_or_else(|| syntax(text))?;
                        names.push((db, t));
                        i = next;
                        if matches!(toks.get(i), Some(Tok::Punct(','))) {
                            i += 1;
                        }
                    }
                    for (db, t) in names {
                        self.flush_table(db, &t)?;
                    }
                }
                // FLUSH [SLOW] LOGS: the slow log's file is closed, and opened again (new,
                // after a rotation moved it) by its next entry.
                if words.iter().any(|w| w == "logs") {
                    self.inst
                        .logs_flushed
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                ok
            }
            // UNLOCK TABLES ends LOCK TABLES; after FLUSH TABLES … FOR EXPORT or WITH READ
            // LOCK (which hold nothing here) it is a no-op, as it is in MariaDB then.
            "unlock" => {
                if !(toks.len() == 2 && (toks[1].is("tables") || toks[1].is("table"))) {
                    return Err(syntax(text));
                }
                self.unlock_tables()?;
                ok
            }
            // As MariaDB: OK, then the server stops as on SIGTERM (open transactions roll
            // back). root is the only account, and it has the SHUTDOWN privilege.
            "shutdown" if toks.len() == 1 => {
                self.inst.request_shutdown();
                ok
            }
            "shutdown" => Err(syntax(text)),
            "lock" if toks.get(1).is_some_and(|t| t.is("tables") || t.is("table")) => {
                self.lock_tables_statement(&toks[2..], text)?;
                ok
            }
            "lock" => Err(syntax(text)),
            // `ALTER TABLE t DISABLE | ENABLE KEYS` (mariadb-dump writes them around a
            // table's rows): InnoDB has no such option, so MariaDB only notes it.
            "alter"
                if toks.get(1).is_some_and(|t| t.is("table"))
                    && toks.last().is_some_and(|t| t.is("keys"))
                    && toks
                        .get(toks.len().saturating_sub(2))
                        .is_some_and(|t| t.is("disable") || t.is("enable")) =>
            {
                let Some((db, t, next)) = qualified_name(&toks, 2) else {
                    return Err(syntax(text));
                };
                if next + 2 != toks.len() {
                    return Err(syntax(text));
                }
                let db = db
                    .or_else(|| self.sv.db.clone())
                    .ok_or(SqlError::NoDatabaseSelected)?;
                self.open_table(&db, &t)?;
                self.warn_now(
                    crate::diag::Level::Note,
                    1031,
                    format!(
                        "Storage engine InnoDB of the table `{db}`.`{t}` doesn't have this option"
                    ),
                );
                ok
            }
            "alter"
                if toks.get(1).is_some_and(|t| t.is("table"))
                    || (toks
                        .get(1)
                        .is_some_and(|t| t.is("online") || t.is("ignore"))
                        && toks.get(2).is_some_and(|t| t.is("table"))) =>
            {
                self.alter_table(text).map(Some)
            }
            "alter"
                if toks
                    .get(1)
                    .is_some_and(|t| t.is("database") || t.is("schema")) =>
            {
                self.alter_database(&toks, text).map(Some)
            }
            "alter" => Ok(None),
            "checksum" if toks.get(1).is_some_and(|t| t.is("table") || t.is("tables")) => {
                self.checksum_tables(&toks[2..], text, sink).map(Some)
            }
            "analyze" | "optimize" => {
                let op = first.clone();
                let mut rows = Vec::new();
                let mut i = 2;
                while let Some((db, t, next)) = qualified_name(&toks, i) {
                    let db = db
                        .or_else(|| self.sv.db.clone())
                        .ok_or(SqlError::NoDatabaseSelected)?;
                    let name = format!("{db}.{t}");
                    // A session's temporary table hides a base table of its name.
                    let table = match self.temps.get(&db, &t) {
                        Some(engine) => self.inst.db.table(quire_engine::table::TEMP_DB, engine),
                        None => self.inst.db.table(&db, &t),
                    };
                    let mut row = |ty: &str, msg: String| {
                        rows.push(vec![s(name.clone()), s(op.clone()), s(ty), s(msg)])
                    };
                    match table {
                        Ok(table) => {
                            if op == "analyze" {
                                // Recomputes the kept statistics (docs/sql.md,
                                // "Statistics"); kept join plans see the epoch move.
                                table.analyze()?;
                            }
                            row("status", "OK".into());
                        }
                        Err(_) => {
                            // MariaDB's two rows for a table it cannot open.
                            let is_view = self.inst.db.view(&db, &t).is_some();
                            row(
                                "Error",
                                if is_view {
                                    format!("'{db}.{t}' is not of type 'BASE TABLE'")
                                } else {
                                    format!("Table '{db}.{t}' doesn't exist")
                                },
                            );
                            row("status", "Operation failed".into());
                        }
                    }
                    i = next + 1;
                }
                send_table(
                    sink,
                    &[
                        ("Table", FieldType::VarString),
                        ("Op", FieldType::VarString),
                        ("Msg_type", FieldType::VarString),
                        ("Msg_text", FieldType::VarString),
                    ],
                    rows,
                )
                .map(Some)
            }
            _ => Ok(None),
        }
    }

    /// `CHECKSUM TABLE t [, t …] [QUICK | EXTENDED]`: a row (`db.t`, checksum) per table.
    /// The checksum is the sum modulo 2^32 of a CRC-32 per row over its values (each
    /// column: NULL, or its bytes as the text protocol sends them), read like `SELECT *`
    /// in the session's transaction, so it does not depend on the rows' order and two
    /// tables with the same rows and column types agree: a dump reloaded compares equal.
    /// It is not the number MariaDB computes (that one hashes MariaDB's record format).
    /// QUICK asks for a live checksum, which InnoDB does not keep: NULL, as in MariaDB. A
    /// table that does not exist is a NULL row and an Error 1146 in the warnings.
    fn checksum_tables(
        &mut self,
        toks: &[Tok],
        text: &str,
        sink: &mut dyn RowSink,
    ) -> Result<Outcome> {
        let (names, i) = table_list(toks);
        let quick = match toks.get(i) {
            None => false,
            Some(t) if t.is("quick") && i + 1 == toks.len() => true,
            Some(t) if t.is("extended") && i + 1 == toks.len() => false,
            _ => return Err(syntax(text)),
        };
        if names.is_empty() {
            return Err(syntax(text));
        }
        let mut rows = Vec::new();
        for (db, t) in names {
            let db = db
                .or_else(|| self.sv.db.clone())
                .ok_or(SqlError::NoDatabaseSelected)?;
            let name = Value::Str(format!("{db}.{t}"));
            if quick {
                rows.push(vec![name, Value::Null]);
                continue;
            }
            let mut sum = ChecksumSink::default();
            let select = format!(
                "SELECT * FROM `{}`.`{}`",
                db.replace('`', "``"),
                t.replace('`', "``")
            );
            match self.query_text(&select, &mut sum) {
                Ok(_) => rows.push(vec![name, Value::UInt(u64::from(sum.sum))]),
                Err(SqlError::NoSuchTable { db, table }) => {
                    self.warn_now(
                        crate::diag::Level::Error,
                        1146,
                        format!("Table '{db}.{table}' doesn't exist"),
                    );
                    rows.push(vec![name, Value::Null]);
                }
                Err(e) => return Err(e),
            }
        }
        send_table(
            sink,
            &[
                ("Table", FieldType::VarString),
                ("Checksum", FieldType::LongLong),
            ],
            rows,
        )
    }

    /// `SET a = 1, NAMES utf8mb4` and `SET CHARACTER SET x`: MariaDB takes NAMES and
    /// CHARACTER SET as items of a SET list, sqlparser only as a statement of their own
    /// (NAMES) or not at all (CHARACTER SET). Connector/J and sqlx send such lists when they
    /// connect. Each such item runs first as its own `SET NAMES` (so a bad character set or
    /// collation fails before anything changes), then the other items as one SET, in their
    /// order. `None`: a SET the parser takes as it is.
    pub(crate) fn set_list(
        &mut self,
        text: &str,
        sink: &mut dyn RowSink,
    ) -> Result<Option<Outcome>> {
        let body = text.get(3..).unwrap_or("");
        let Some(items) = crate::dispatch::split_list(body) else {
            return Ok(None);
        };
        if items
            .iter()
            .any(|i| crate::user_vars::user_item(i).is_some())
        {
            return self.set_with_user_vars(&items, sink).map(Some);
        }
        // An item as `NAMES …` if it is a NAMES or CHARACTER SET item.
        let names_item = |item: &str| -> Option<String> {
            let words: Vec<&str> = item.split_whitespace().collect();
            let w = |i: usize| words.get(i).map(|w| w.to_ascii_lowercase());
            match w(0).as_deref() {
                Some("names") => Some(item.to_string()),
                Some("charset") => Some(format!("NAMES {}", words[1..].join(" "))),
                Some("character") if w(1).as_deref() == Some("set") => {
                    Some(format!("NAMES {}", words[2..].join(" ")))
                }
                _ => None,
            }
        };
        let charset_form = items
            .iter()
            .any(|i| names_item(i).is_some() && !i.to_ascii_lowercase().starts_with("names"));
        if !charset_form && (items.len() < 2 || !items.iter().any(|i| names_item(i).is_some())) {
            return Ok(None);
        }
        let mut rest = Vec::new();
        for item in items {
            match names_item(item) {
                Some(names) => {
                    let (stmt, _) = crate::parse::parse_one(&format!("SET {names}"))?;
                    self.utility(&stmt, sink)?;
                }
                None => rest.push(item),
            }
        }
        if !rest.is_empty() {
            let (stmt, _) = crate::parse::parse_one(&format!("SET {}", rest.join(", ")))?;
            self.utility(&stmt, sink)?;
        }
        Ok(Some(Outcome::ok(0)))
    }

    /// BEGIN: commits an open transaction first (MySQL's implicit commit).
    /// The engine transaction starts at the first write or locking read (no id before:
    /// InnoDB's read-only optimization; oltp_read_only never serializes on BEGIN).
    fn begin(&mut self, read_only: bool) -> Result<()> {
        // BEGIN ends LOCK TABLES, as in MariaDB (lock_tables.rs, invariant 2).
        self.unlock_tables()?;
        self.commit_open()?;
        self.explicit = true;
        self.read_only = read_only;
        Ok(())
    }

    fn table_def(
        &self,
        db: Option<String>,
        t: &str,
    ) -> Result<(String, quire_engine::catalog::TableDef)> {
        let db = db
            .or_else(|| self.sv.db.clone())
            .ok_or(SqlError::NoDatabaseSelected)?;
        if let Some(def) = self.object_def(&db, t)? {
            return Ok((db, def));
        }
        let table = self
            .inst
            .db
            .table(&db, t)
            .map_err(|_| SqlError::NoSuchTable {
                db: db.clone(),
                table: t.into(),
            })?;
        Ok((db, table.definition()?))
    }

    fn flush_table(&self, db: Option<String>, t: &str) -> Result<()> {
        let (_, def) = self.table_def(db, t)?;
        let pool = self.inst.db.engine().pool();
        pool.flush_space(def.space)
            .map_err(|e| SqlError::Engine(quire_engine::table::DbError::Engine(e.into())))?;
        Ok(())
    }

    fn check_tables(&self, toks: &[Tok], sink: &mut dyn RowSink) -> Result<Outcome> {
        let (names, _) = table_list(toks);
        // The engine checks the whole data directory; a table's problems name its space.
        let problems = self.inst.db.check()?;
        let mut rows = Vec::new();
        for (db, t) in names {
            let db = db
                .or_else(|| self.sv.db.clone())
                .ok_or(SqlError::NoDatabaseSelected)?;
            let full = format!("{db}.{t}");
            match self.inst.db.table(&db, &t) {
                Err(_) => {
                    rows.push(vec![
                        s(&full),
                        s("check"),
                        s("Error"),
                        s(format!("Table '{full}' doesn't exist")),
                    ]);
                    rows.push(vec![
                        s(&full),
                        s("check"),
                        s("status"),
                        s("Operation failed"),
                    ]);
                }
                Ok(table) => {
                    let def = table.definition()?;
                    let mine: Vec<&String> = problems
                        .iter()
                        .filter(|p| p.contains(&def.space_name) || p.contains(&full))
                        .collect();
                    for p in &mine {
                        rows.push(vec![s(&full), s("check"), s("error"), s(p.as_str())]);
                    }
                    let status = if mine.is_empty() { "OK" } else { "Corrupt" };
                    rows.push(vec![s(&full), s("check"), s("status"), s(status)]);
                }
            }
        }
        send_table(
            sink,
            &[
                ("Table", FieldType::VarString),
                ("Op", FieldType::VarString),
                ("Msg_type", FieldType::VarString),
                ("Msg_text", FieldType::VarString),
            ],
            rows,
        )
    }

    /// `SHOW … WHERE cond`, as MariaDB: the condition is evaluated on each row of the SHOW's
    /// output, naming its columns (`SHOW VARIABLES WHERE Variable_name IN (…)`, `SHOW FULL
    /// TABLES WHERE Table_type = 'BASE TABLE'`). The SHOW runs without its WHERE, then its
    /// rows are filtered by a SELECT over them as a derived table, so the condition has the
    /// whole expression language and its errors (1054 for a column the SHOW lacks).
    fn show_where(&mut self, show: &str, cond: &str, sink: &mut dyn RowSink) -> Result<Outcome> {
        let mut all = crate::meta::CollectSink::default();
        self.query_text(show, &mut all)?;
        let name = |c: &ColumnMeta| format!("`{}`", c.name.replace('`', "``"));
        let branches: Vec<String> = if all.rows.is_empty() {
            // No rows: one of NULLs that the condition can still name, filtered out.
            let cols: Vec<String> = all
                .columns
                .iter()
                .map(|c| format!("NULL AS {}", name(c)))
                .collect();
            vec![format!("SELECT {} FROM DUAL WHERE 0", cols.join(", "))]
        } else {
            all.rows
                .iter()
                .map(|r| {
                    let cols: Vec<String> = r
                        .iter()
                        .zip(&all.columns)
                        .map(|(v, c)| format!("{} AS {}", show_literal(v), name(c)))
                        .collect();
                    format!("SELECT {}", cols.join(", "))
                })
                .collect()
        };
        let sql = format!(
            "SELECT * FROM ({}) AS `show` WHERE {}",
            branches.join(" UNION ALL "),
            cond.trim().trim_end_matches(';')
        );
        self.query_text(&sql, sink)
    }

    fn show(&mut self, text: &str, toks: &[Tok], sink: &mut dyn RowSink) -> Result<Outcome> {
        let mut i = 1;
        let word = |i: usize| -> String {
            toks.get(i)
                .map(|t| match t {
                    Tok::Word(w) => w.to_ascii_lowercase(),
                    _ => String::new(),
                })
                .unwrap_or_default()
        };
        let mut full = false;
        let mut global = false;
        loop {
            match word(i).as_str() {
                "full" => full = true,
                "global" => global = true,
                "session" | "local" => global = false,
                _ => break,
            }
            i += 1;
        }
        let what = word(i);
        i += 1;
        let vs = FieldType::VarString;
        match what.as_str() {
            "databases" | "schemas" => {
                let pat = like_at(toks, i)?;
                let mut names = vec!["information_schema".to_string()];
                names.extend(self.inst.db.databases());
                let rows = names
                    .into_iter()
                    .filter(|n| like_ok(&pat, n) && self.may_use_db(n))
                    .map(|n| vec![s(n)])
                    .collect();
                send_table(sink, &[("Database", vs)], rows)
            }
            "tables" => {
                let mut db = self.sv.db.clone();
                if matches!(word(i).as_str(), "from" | "in") {
                    db = toks.get(i + 1).and_then(Tok::ident).map(str::to_string);
                    i += 2;
                }
                let db = db.ok_or(SqlError::NoDatabaseSelected)?;
                self.check_use_db(&db)?;
                let pat = like_at(toks, i)?;
                let tables = self
                    .inst
                    .db
                    .tables(&db)
                    .map_err(|_| SqlError::UnknownDatabase(db.clone()))?;
                let col = format!("Tables_in_{db}");
                let rows: Vec<Vec<Value>> = tables
                    .into_iter()
                    .filter(|t| like_ok(&pat, t) && self.may_see_table(&db, t))
                    .map(|t| {
                        if full {
                            vec![s(t), s("BASE TABLE")]
                        } else {
                            vec![s(t)]
                        }
                    })
                    .collect();
                if full {
                    send_table(sink, &[(&col, vs), ("Table_type", vs)], rows)
                } else {
                    send_table(sink, &[(&col, vs)], rows)
                }
            }
            "columns" | "fields" => {
                if !matches!(word(i).as_str(), "from" | "in") {
                    return Err(syntax(text));
                }
                let (mut db, t, mut next) =
                    qualified_name(toks, i + 1).ok_or_else(|| syntax(text))?;
                if matches!(word(next).as_str(), "from" | "in") {
                    db = toks.get(next + 1).and_then(Tok::ident).map(str::to_string);
                    next += 2;
                }
                let pat = like_at(toks, next)?;
                self.check_table(db.clone(), &t, crate::acl::privs::SELECT, "SELECT")?;
                self.show_columns(db, &t, pat, full, sink)
            }
            "index" | "indexes" | "keys" => {
                if !matches!(word(i).as_str(), "from" | "in") {
                    return Err(syntax(text));
                }
                let (mut db, t, next) = qualified_name(toks, i + 1).ok_or_else(|| syntax(text))?;
                if matches!(word(next).as_str(), "from" | "in") {
                    db = toks.get(next + 1).and_then(Tok::ident).map(str::to_string);
                }
                self.check_table(db.clone(), &t, crate::acl::privs::TABLE_ACLS, "SELECT")?;
                self.show_index(db, &t, sink)
            }
            "create" => match word(i).as_str() {
                "table" => {
                    let (db, t, _) = qualified_name(toks, i + 1).ok_or_else(|| syntax(text))?;
                    self.check_table(db.clone(), &t, crate::acl::privs::TABLE_ACLS, "SHOW")?;
                    let (db, mut def) = self.table_def(db, &t)?;
                    let zone = crate::tz::Zone::of_session(&self.sv, self.inst);
                    crate::tz::shown_columns(&mut def.columns, zone);
                    let next = self.open_table(&db, &t)?.next_auto_increment()?;
                    let fks = self
                        .inst
                        .db
                        .foreign_keys(&db, &def.name)
                        .unwrap_or_default();
                    let sql = crate::ddl::show_create_table(&def, next, &fks);
                    send_table(
                        sink,
                        &[("Table", vs), ("Create Table", vs)],
                        vec![vec![s(t), s(sql)]],
                    )
                }
                "database" | "schema" => {
                    let mut j = i + 1;
                    if word(j) == "if" {
                        j += 3;
                    }
                    let d = toks
                        .get(j)
                        .and_then(Tok::ident)
                        .ok_or_else(|| syntax(text))?;
                    if !self.inst.db.databases().iter().any(|x| x == d) {
                        return Err(SqlError::UnknownDatabase(d.into()));
                    }
                    let c = self
                        .inst
                        .db
                        .database_collation(d)
                        .unwrap_or(quire_engine::row::Collation::Utf8mb4GeneralCi);
                    let sql = format!(
                        "CREATE DATABASE `{d}` /*!40100 DEFAULT CHARACTER SET {} COLLATE {} */",
                        c.charset().name(),
                        c.name()
                    );
                    send_table(
                        sink,
                        &[("Database", vs), ("Create Database", vs)],
                        vec![vec![s(d), s(sql)]],
                    )
                }
                other => Err(SqlError::Unsupported(format!(
                    "SHOW CREATE {}",
                    other.to_uppercase()
                ))),
            },
            "variables" => {
                let pat = like_at(toks, i)?;
                let session = (!global).then_some(&self.sv.vars);
                let rows = variable_rows(self.inst, session)
                    .into_iter()
                    .filter(|(n, _)| like_ok(&pat, n))
                    .map(|(n, v)| vec![s(n), s(v)])
                    .collect();
                send_table(sink, &[("Variable_name", vs), ("Value", vs)], rows)
            }
            "status" => {
                let pat = like_at(toks, i)?;
                let session = (!global).then_some(&self.sv.status);
                let rows = status_rows(self.inst, &self.info, session)
                    .into_iter()
                    .filter(|(n, _)| like_ok(&pat, n))
                    .map(|(n, v)| vec![s(n), s(v)])
                    .collect();
                send_table(sink, &[("Variable_name", vs), ("Value", vs)], rows)
            }
            "processlist" => {
                let mut rows = Vec::new();
                let all = self.sees_all_threads();
                for si in self.inst.sessions() {
                    // Without PROCESS, only the user's own threads (MariaDB).
                    if !all && si.user != self.sv.user {
                        continue;
                    }
                    let info = si.info_text();
                    let info = if full {
                        info
                    } else {
                        info.map(|x| x.chars().take(100).collect())
                    };
                    rows.push(vec![
                        Value::UInt(si.id),
                        s(si.user.clone()),
                        s(si.host.clone()),
                        si.db.lock().clone().map_or(Value::Null, Value::Str),
                        s(*si.command.lock()),
                        Value::UInt(si.since.lock().elapsed().as_secs()),
                        s(*si.state.lock()),
                        info.map_or(Value::Null, Value::Str),
                        {
                            let p = si.progress.load(std::sync::atomic::Ordering::Relaxed);
                            s(format!("{}.{:03}", p / 1000, p % 1000))
                        },
                    ]);
                }
                send_table(
                    sink,
                    &[
                        ("Id", FieldType::LongLong),
                        ("User", vs),
                        ("Host", vs),
                        ("db", vs),
                        ("Command", vs),
                        ("Time", FieldType::LongLong),
                        ("State", vs),
                        ("Info", vs),
                        ("Progress", vs),
                    ],
                    rows,
                )
            }
            "engines" => send_table(
                sink,
                &[
                    ("Engine", vs),
                    ("Support", vs),
                    ("Comment", vs),
                    ("Transactions", vs),
                    ("XA", vs),
                    ("Savepoints", vs),
                ],
                vec![vec![
                    s("InnoDB"),
                    s("DEFAULT"),
                    s("Quire: crash-safe transactions, row locks, MVCC (an InnoDB-class engine)"),
                    s("YES"),
                    s("NO"),
                    s("YES"),
                ]],
            ),
            "count" => {
                // SHOW COUNT(*) WARNINGS | ERRORS: @@warning_count / @@error_count.
                let star = matches!(
                    toks.get(i..i + 3),
                    Some([Tok::Punct('('), Tok::Punct('*'), Tok::Punct(')')])
                );
                let (name, n) = match (star, word(i + 3).as_str()) {
                    (true, "warnings") => ("warning_count", self.sv.diag.borrow().total()),
                    (true, "errors") => ("error_count", self.sv.diag.borrow().errors()),
                    _ => return Err(syntax(text)),
                };
                if toks.len() != i + 4 {
                    return Err(syntax(text));
                }
                let col = format!("@@session.{name}");
                send_table(
                    sink,
                    &[(col.as_str(), FieldType::LongLong)],
                    vec![vec![Value::UInt(n)]],
                )
            }
            "warnings" | "errors" => {
                let only_errors = what == "errors";
                // LIMIT [offset,] count
                let (offset, count) = match (toks.get(i), toks.get(i + 1..)) {
                    (None, _) => (0, usize::MAX),
                    (Some(l), Some([Tok::Word(n)])) if l.is("limit") => {
                        (0, n.parse().map_err(|_| syntax(text))?)
                    }
                    (Some(l), Some([Tok::Word(o), Tok::Punct(','), Tok::Word(n)]))
                        if l.is("limit") =>
                    {
                        (
                            o.parse().map_err(|_| syntax(text))?,
                            n.parse().map_err(|_| syntax(text))?,
                        )
                    }
                    _ => return Err(syntax(text)),
                };
                let rows = self
                    .sv
                    .diag
                    .borrow()
                    .conditions()
                    .iter()
                    .filter(|c| !only_errors || c.level == crate::diag::Level::Error)
                    .skip(offset)
                    .take(count)
                    .map(|c| {
                        vec![
                            s(c.level.name()),
                            Value::UInt(u64::from(c.code)),
                            s(c.message.clone()),
                        ]
                    })
                    .collect();
                send_table(
                    sink,
                    &[
                        ("Level", vs),
                        ("Code", FieldType::LongLong),
                        ("Message", vs),
                    ],
                    rows,
                )
            }
            "collation" => {
                let pat = like_at(toks, i)?;
                let rows = types::COLLATIONS
                    .into_iter()
                    .filter(|(name, ..)| like_ok(&pat, name))
                    .map(|(name, cs, id, default, sortlen)| {
                        vec![
                            s(name),
                            s(cs),
                            Value::UInt(u64::from(id)),
                            s(default),
                            s("Yes"),
                            Value::UInt(u64::from(sortlen)),
                        ]
                    })
                    .collect();
                send_table(
                    sink,
                    &[
                        ("Collation", vs),
                        ("Charset", vs),
                        ("Id", FieldType::LongLong),
                        ("Default", vs),
                        ("Compiled", vs),
                        ("Sortlen", FieldType::LongLong),
                    ],
                    rows,
                )
            }
            "character" | "charset" => send_table(
                sink,
                &[
                    ("Charset", vs),
                    ("Description", vs),
                    ("Default collation", vs),
                    ("Maxlen", FieldType::LongLong),
                ],
                quire_engine::row::Charset::ALL
                    .into_iter()
                    .map(|cs| {
                        vec![
                            s(cs.name()),
                            s(cs.description()),
                            s(cs.default_collation().name()),
                            Value::UInt(u64::from(cs.max_bytes())),
                        ]
                    })
                    .chain([vec![
                        s("binary"),
                        s("Binary pseudo charset"),
                        s("binary"),
                        Value::UInt(1),
                    ]])
                    .collect(),
            ),
            "table" if word(i) == "status" => {
                let mut db = self.sv.db.clone();
                let mut j = i + 1;
                if matches!(word(j).as_str(), "from" | "in") {
                    db = toks.get(j + 1).and_then(Tok::ident).map(str::to_string);
                    j += 2;
                }
                let db = db.ok_or(SqlError::NoDatabaseSelected)?;
                let pat = like_at(toks, j)?;
                if self.inst.db.tables(&db).is_err() {
                    return Err(SqlError::UnknownDatabase(db));
                }
                // MariaDB's SHOW TABLE STATUS is information_schema.TABLES under other
                // names (sql_show.cc); so is Quire's, with the same privileges applied.
                let like = pat
                    .map(|p| format!(" AND TABLE_NAME LIKE {}", show_literal(&s(p))))
                    .unwrap_or_default();
                let sql = format!(
                    "SELECT TABLE_NAME AS `Name`, ENGINE AS `Engine`, VERSION AS `Version`, \
                     ROW_FORMAT AS `Row_format`, TABLE_ROWS AS `Rows`, \
                     AVG_ROW_LENGTH AS `Avg_row_length`, DATA_LENGTH AS `Data_length`, \
                     MAX_DATA_LENGTH AS `Max_data_length`, INDEX_LENGTH AS `Index_length`, \
                     DATA_FREE AS `Data_free`, AUTO_INCREMENT AS `Auto_increment`, \
                     CREATE_TIME AS `Create_time`, UPDATE_TIME AS `Update_time`, \
                     CHECK_TIME AS `Check_time`, TABLE_COLLATION AS `Collation`, \
                     CHECKSUM AS `Checksum`, CREATE_OPTIONS AS `Create_options`, \
                     TABLE_COMMENT AS `Comment`, MAX_INDEX_LENGTH AS `Max_index_length`, \
                     TEMPORARY AS `Temporary` FROM information_schema.TABLES \
                     WHERE TABLE_SCHEMA = {}{like} ORDER BY TABLE_NAME",
                    show_literal(&s(db))
                );
                self.query_text(&sql, sink)
            }
            // Quire has no triggers, stored routines or events (they are refused with 1235),
            // so these answer with MariaDB's columns and no rows; admin tools and
            // mariadb-dump ask them of every database.
            "triggers" | "events" => {
                let mut db = self.sv.db.clone();
                let mut j = i;
                if matches!(word(j).as_str(), "from" | "in") {
                    db = toks.get(j + 1).and_then(Tok::ident).map(str::to_string);
                    j += 2;
                }
                let db = db.ok_or(SqlError::NoDatabaseSelected)?;
                let pat = like_at(toks, j)?;
                // MariaDB: SHOW TRIGGERS of an unknown database is 1049, SHOW EVENTS of one
                // is empty; information_schema is known.
                if what == "triggers"
                    && !db.eq_ignore_ascii_case("information_schema")
                    && self.inst.db.tables(&db).is_err()
                {
                    return Err(SqlError::UnknownDatabase(db));
                }
                let sql = if what == "triggers" {
                    let like = pat
                        .map(|p| format!(" AND EVENT_OBJECT_TABLE LIKE {}", show_literal(&s(p))))
                        .unwrap_or_default();
                    format!(
                        "SELECT TRIGGER_NAME AS `Trigger`, EVENT_MANIPULATION AS `Event`, \
                         EVENT_OBJECT_TABLE AS `Table`, ACTION_STATEMENT AS `Statement`, \
                         ACTION_TIMING AS `Timing`, CREATED AS `Created`, \
                         SQL_MODE AS `sql_mode`, DEFINER AS `Definer`, \
                         CHARACTER_SET_CLIENT AS `character_set_client`, \
                         COLLATION_CONNECTION AS `collation_connection`, \
                         DATABASE_COLLATION AS `Database Collation` \
                         FROM information_schema.TRIGGERS \
                         WHERE EVENT_OBJECT_SCHEMA = {}{like}",
                        show_literal(&s(db))
                    )
                } else {
                    let like = pat
                        .map(|p| format!(" AND EVENT_NAME LIKE {}", show_literal(&s(p))))
                        .unwrap_or_default();
                    format!(
                        "SELECT EVENT_SCHEMA AS `Db`, EVENT_NAME AS `Name`, \
                         DEFINER AS `Definer`, TIME_ZONE AS `Time zone`, EVENT_TYPE AS `Type`, \
                         EXECUTE_AT AS `Execute at`, INTERVAL_VALUE AS `Interval value`, \
                         INTERVAL_FIELD AS `Interval field`, STARTS AS `Starts`, \
                         ENDS AS `Ends`, STATUS AS `Status`, ORIGINATOR AS `Originator`, \
                         CHARACTER_SET_CLIENT AS `character_set_client`, \
                         COLLATION_CONNECTION AS `collation_connection`, \
                         DATABASE_COLLATION AS `Database Collation` \
                         FROM information_schema.EVENTS WHERE EVENT_SCHEMA = {}{like}",
                        show_literal(&s(db))
                    )
                };
                self.query_text(&sql, sink)
            }
            "procedure" | "function" if word(i) == "status" => {
                let pat = like_at(toks, i + 1)?;
                let like = pat
                    .map(|p| format!(" AND ROUTINE_NAME LIKE {}", show_literal(&s(p))))
                    .unwrap_or_default();
                let sql = format!(
                    "SELECT ROUTINE_SCHEMA AS `Db`, ROUTINE_NAME AS `Name`, \
                     ROUTINE_TYPE AS `Type`, DEFINER AS `Definer`, LAST_ALTERED AS `Modified`, \
                     CREATED AS `Created`, SECURITY_TYPE AS `Security_type`, \
                     ROUTINE_COMMENT AS `Comment`, \
                     CHARACTER_SET_CLIENT AS `character_set_client`, \
                     COLLATION_CONNECTION AS `collation_connection`, \
                     DATABASE_COLLATION AS `Database Collation` \
                     FROM information_schema.ROUTINES WHERE ROUTINE_TYPE = {}{like}",
                    show_literal(&s(what.to_uppercase()))
                );
                self.query_text(&sql, sink)
            }
            "plugins" => {
                let row = |name: &str, ty: &str, lib: Option<&str>| {
                    vec![
                        s(name),
                        s("ACTIVE"),
                        s(ty),
                        lib.map_or(Value::Null, s),
                        s("GPL"),
                    ]
                };
                send_table(
                    sink,
                    &[
                        ("Name", FieldType::VarString),
                        ("Status", FieldType::VarString),
                        ("Type", FieldType::VarString),
                        ("Library", FieldType::VarString),
                        ("License", FieldType::VarString),
                    ],
                    vec![
                        row("mysql_native_password", "AUTHENTICATION", None),
                        row("caching_sha2_password", "AUTHENTICATION", None),
                        row("ed25519", "AUTHENTICATION", Some("auth_ed25519.so")),
                        row("InnoDB", "STORAGE ENGINE", None),
                    ],
                )
            }
            "slave" | "replica" if word(i) == "status" => {
                self.require_global(
                    crate::acl::privs::SUPER | crate::acl::privs::SLAVE_MONITOR,
                    "SUPER, SLAVE MONITOR",
                )?;
                crate::replication::show_slave_status(false, sink)
            }
            "all"
                if matches!(word(i).as_str(), "slaves" | "replicas") && word(i + 1) == "status" =>
            {
                self.require_global(
                    crate::acl::privs::SUPER | crate::acl::privs::SLAVE_MONITOR,
                    "SUPER, SLAVE MONITOR",
                )?;
                crate::replication::show_slave_status(true, sink)
            }
            other => Err(SqlError::Unsupported(format!(
                "SHOW {}",
                other.to_uppercase()
            ))),
        }
    }

    pub(crate) fn show_columns(
        &self,
        db: Option<String>,
        t: &str,
        pat: Option<String>,
        full: bool,
        sink: &mut dyn RowSink,
    ) -> Result<Outcome> {
        let (_, mut def) = self.table_def(db, t)?;
        let zone = crate::tz::Zone::of_session(&self.sv, self.inst);
        crate::tz::shown_columns(&mut def.columns, zone);
        let mut rows = Vec::new();
        for (i, c) in def.columns.iter().enumerate() {
            if !like_ok(&pat, &c.name) {
                continue;
            }
            let key = if def.primary_key.contains(&i) {
                "PRI"
            } else if def
                .indexes
                .iter()
                .any(|x| x.unique && x.columns.len() == 1 && x.columns[0].column == i)
            {
                "UNI"
            } else if def
                .indexes
                .iter()
                .any(|x| x.columns.first().is_some_and(|f| f.column == i))
            {
                "MUL"
            } else {
                ""
            };
            let extra = crate::ddl::column_extra(&def, i);
            let default = crate::ddl::default_text(c).map_or(Value::Null, Value::Str);
            let mut row = vec![s(c.name.clone()), s(types::column_type_sql(c))];
            if full {
                row.push(if c.ty.is_string() {
                    s(c.collation.name())
                } else {
                    Value::Null
                });
            }
            row.extend([
                s(if c.nullable { "YES" } else { "NO" }),
                s(key),
                default,
                s(extra),
            ]);
            if full {
                row.extend([s("select,insert,update,references"), s(c.comment.clone())]);
            }
            rows.push(row);
        }
        let vs = FieldType::VarString;
        if full {
            send_table(
                sink,
                &[
                    ("Field", vs),
                    ("Type", vs),
                    ("Collation", vs),
                    ("Null", vs),
                    ("Key", vs),
                    ("Default", vs),
                    ("Extra", vs),
                    ("Privileges", vs),
                    ("Comment", vs),
                ],
                rows,
            )
        } else {
            send_table(
                sink,
                &[
                    ("Field", vs),
                    ("Type", vs),
                    ("Null", vs),
                    ("Key", vs),
                    ("Default", vs),
                    ("Extra", vs),
                ],
                rows,
            )
        }
    }

    fn show_index(&self, db: Option<String>, t: &str, sink: &mut dyn RowSink) -> Result<Outcome> {
        let (dbname, def) = self.table_def(db, t)?;
        // The kept statistics (docs/sql.md, "Statistics"); none for a view or a temporary
        // table.
        let stats = self
            .inst
            .db
            .table(&dbname, t)
            .ok()
            .and_then(|tb| tb.statistics().ok());
        let mut rows = Vec::new();
        let mut add = |name: &str, unique: bool, cols: Vec<(usize, Option<u32>)>, comment: &str| {
            for (seq, (c, prefix)) in cols.into_iter().enumerate() {
                let col = &def.columns[c];
                rows.push(vec![
                    s(t),
                    Value::Int(i64::from(!unique)),
                    s(name),
                    Value::UInt(seq as u64 + 1),
                    s(col.name.clone()),
                    s("A"),
                    crate::infoschema::cardinality(stats.as_deref(), name, seq),
                    prefix.map_or(Value::Null, |p| Value::UInt(u64::from(p))),
                    Value::Null,
                    s(if col.nullable { "YES" } else { "" }),
                    s("BTREE"),
                    s(""),
                    s(comment),
                    s("NO"),
                ]);
            }
        };
        if !def.primary_key.is_empty() {
            add(
                "PRIMARY",
                true,
                def.primary_key.iter().map(|&c| (c, None)).collect(),
                "",
            );
        }
        for ix in crate::ddl::key_order(&def) {
            add(
                &ix.name,
                ix.unique,
                ix.columns.iter().map(|c| (c.column, c.prefix)).collect(),
                &ix.comment,
            );
        }
        let vs = FieldType::VarString;
        let ll = FieldType::LongLong;
        send_table(
            sink,
            &[
                ("Table", vs),
                ("Non_unique", ll),
                ("Key_name", vs),
                ("Seq_in_index", ll),
                ("Column_name", vs),
                ("Collation", vs),
                ("Cardinality", ll),
                ("Sub_part", ll),
                ("Packed", vs),
                ("Null", vs),
                ("Index_type", vs),
                ("Comment", vs),
                ("Index_comment", vs),
                ("Ignored", vs),
            ],
            rows,
        )
    }
}

/// A variable's value as SHOW VARIABLES prints it (booleans as ON/OFF).
/// SHOW STATUS's rows (and information_schema.GLOBAL_STATUS's and SESSION_STATUS's): the
/// instance's counters, with `session`'s own where MariaDB keeps one per session (SHOW
/// [SESSION] STATUS: `Com_*`, `Questions`, `Slow_queries`, `Bytes_*`), and this session's
/// transport (empty on a plain connection, as clients check that TLS is on), sorted as
/// MariaDB lists them.
pub(crate) fn status_rows(
    inst: &crate::session::Instance<'_>,
    info: &crate::session::SessionInfo,
    session: Option<&crate::status::SessionCounters>,
) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = inst
        .global_status()
        .into_iter()
        .map(|(n, v)| {
            let v = session.and_then(|s| s.get(&n)).unwrap_or(v);
            (n, v.to_string())
        })
        .collect();
    let (version, cipher) = info.tls.lock().clone().unwrap_or_default();
    all.push(("Ssl_version".into(), version));
    all.push(("Ssl_cipher".into(), cipher));
    all.sort_by_key(|a| a.0.to_lowercase());
    all
}

/// SHOW VARIABLES's rows as text (and information_schema's GLOBAL_VARIABLES and
/// SESSION_VARIABLES): the global values, or with `session` the values a session set over
/// them.
pub(crate) fn variable_rows(
    inst: &crate::session::Instance<'_>,
    session: Option<&quire_engine::hash::Map<String, Value>>,
) -> Vec<(String, String)> {
    crate::vars::all_globals(inst)
        .into_iter()
        .map(|(n, v)| {
            let v = session
                .and_then(|m| m.get(crate::vars::canonical(&n)).cloned())
                .unwrap_or(v);
            let text = var_text(&n, &v);
            (n, text)
        })
        .collect()
}

pub(crate) fn var_text(name: &str, v: &Value) -> String {
    let boolean = crate::vars::is_bool(name);
    match v {
        Value::Int(0) if boolean => "OFF".into(),
        Value::Int(1) if boolean => "ON".into(),
        // A read-only boolean (`vars::READ_ONLY_BOOLS`) keeps its text.
        Value::Str(s) if boolean && s == "0" => "OFF".into(),
        Value::Str(s) if boolean && s == "1" => "ON".into(),
        other => types::display(other),
    }
}

/// `t [, db.t …]` at the start of `toks` (CHECK TABLE, CHECKSUM TABLE): the names, and
/// the index of the first token after them.
fn table_list(toks: &[Tok]) -> (Vec<(Option<String>, String)>, usize) {
    let mut names = Vec::new();
    let mut i = 0;
    while let Some((db, t, next)) = qualified_name(toks, i) {
        names.push((db, t));
        i = next;
        if matches!(toks.get(i), Some(Tok::Punct(','))) {
            i += 1;
        } else {
            break;
        }
    }
    (names, i)
}

/// CHECKSUM TABLE's per-row CRC-32, summed (`Session::checksum_tables`).
#[derive(Default)]
struct ChecksumSink {
    sum: u32,
}

impl RowSink for ChecksumSink {
    fn columns(&mut self, _: &[ColumnMeta]) -> std::result::Result<(), crate::meta::SinkError> {
        Ok(())
    }

    fn row(&mut self, row: &[Value]) -> std::result::Result<(), crate::meta::SinkError> {
        let mut h = crc32fast::Hasher::new();
        for v in row {
            let text;
            let bytes: &[u8] = match v {
                Value::Null => {
                    h.update(&[0]);
                    continue;
                }
                Value::Bytes(b) => b,
                other => {
                    text = crate::types::display(other);
                    text.as_bytes()
                }
            };
            // A length before the bytes: ("ab", "c") and ("a", "bc") differ.
            h.update(&[1]);
            h.update(&(bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        }
        let crc = h.finalize();
        self.sum = self.sum.wrapping_add(crc);
        Ok(())
    }
}
