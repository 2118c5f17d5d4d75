//! LOAD DATA [LOCAL] INFILE (docs/sql.md, "LOAD DATA"): the statement read by a keyword
//! parser (sqlparser has only Hive's LOAD DATA), the file split into rows by `fields.rs`,
//! and every row written through INSERT's path (`run::insert_rows`) with a plan made once.
//!
//! Invariants:
//! 1. The file is read as it comes, one row at a time: memory does not grow with it
//!    (`fields.rs`, invariant 1). A client's file reaches this layer as a `Read` from
//!    [`RowSink::local_infile`]; the wire stays in the server crate.
//! 2. The statement is one statement of its transaction: an error on any row rolls back
//!    every row it wrote (statement atomicity, as InnoDB); under autocommit nothing is
//!    committed.
//! 3. LOCAL implies IGNORE unless REPLACE is given (MariaDB: the server can not stop the
//!    client's transfer), so duplicates and strict-mode errors become warnings there.
//! 4. Warnings come in row order: a row's own (1261, 1262, 1263) before those of its
//!    conversion and insert (1366, 1062, …), as MariaDB raises them.

pub mod fields;

use std::collections::HashMap;

use quire_engine::row::Value;

use crate::bind::Binder;
use crate::diag::Level;
use crate::dispatch::{lex, Tok};
use crate::error::{Result, SqlError};
use crate::expr::{Env, Expr, Row, VarKind};
use crate::meta::RowSink;
use crate::session::{Outcome, Session};
use crate::stmt::Planned;

use fields::{Field, Format, Rows};

/// The file's character set (`CHARACTER SET`): how a field's bytes become a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileCharset {
    Utf8,
    Latin1,
    Binary,
}

/// One entry of the column list: a column (by name) or a user variable (`@name`,
/// lower-cased as user variables are kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Column(String),
    Var(String),
}

/// A parsed LOAD DATA statement.
#[derive(Debug, Clone)]
pub struct LoadStmt {
    pub local: bool,
    pub file: String,
    pub replace: bool,
    pub ignore: bool,
    pub db: Option<String>,
    pub table: String,
    pub charset: Option<FileCharset>,
    pub format: Format,
    pub ignore_lines: u64,
    /// Empty: every column of the table in order.
    pub targets: Vec<Target>,
    /// `SET col = expr, …`: the column and the expression's text.
    pub sets: Vec<(String, String)>,
}

fn near(toks: &[Tok], i: usize) -> SqlError {
    let rest: Vec<String> = toks
        .iter()
        .skip(i)
        .map(|t| match t {
            Tok::Word(w) => w.clone(),
            Tok::Quoted(w) => format!("`{w}`"),
            Tok::Str(s) => format!("'{s}'"),
            Tok::Punct(c) => c.to_string(),
        })
        .collect();
    SqlError::Parse {
        near: rest.join(" "),
        line: 1,
    }
}

/// The start of the `SET` clause in `text` (a `SET` outside quotes and parentheses that
/// does not follow `CHARACTER`), as a byte offset after the keyword.
fn set_clause(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let (mut i, mut depth) = (0usize, 0i32);
    let mut prev_word = String::new();
    let mut found = None;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\'' | b'"' | b'`' => {
                i += 1;
                while i < b.len() && b[i] != c {
                    if b[i] == b'\\' && c != b'`' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                prev_word.clear();
            }
            b'(' => {
                depth += 1;
                i += 1;
            }
            b')' => {
                depth -= 1;
                i += 1;
            }
            _ if c.is_ascii_alphanumeric() || c == b'_' || c == b'@' => {
                let st = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'@')) {
                    i += 1;
                }
                let w = text[st..i].to_ascii_lowercase();
                if depth == 0 && w == "set" && prev_word != "character" && prev_word != "char" {
                    found = Some(i);
                }
                prev_word = w;
            }
            _ => i += 1,
        }
    }
    found
}

/// Reads a LOAD DATA statement (MariaDB 10.11's grammar; PARTITION is not supported).
pub fn parse_load(text: &str) -> Result<LoadStmt> {
    let set_at = set_clause(text);
    let head = match set_at {
        Some(at) => &text[..at - 3],
        None => text,
    };
    let toks = lex(head).ok_or_else(|| SqlError::Parse {
        near: text.to_string(),
        line: 1,
    })?;
    let mut i = 0;
    let kw = |i: usize, w: &str| toks.get(i).is_some_and(|t| t.is(w));
    let expect = |i: &mut usize, w: &str| -> Result<()> {
        if kw(*i, w) {
            *i += 1;
            Ok(())
        } else {
            Err(near(&toks, *i))
        }
    };
    let string = |i: &mut usize| -> Result<String> {
        match toks.get(*i) {
            Some(Tok::Str(s)) => {
                *i += 1;
                Ok(s.clone())
            }
            _ => Err(near(&toks, *i)),
        }
    };
    expect(&mut i, "load")?;
    expect(&mut i, "data")?;
    if kw(i, "low_priority") || kw(i, "concurrent") {
        i += 1;
    }
    let local = kw(i, "local");
    if local {
        i += 1;
    }
    expect(&mut i, "infile")?;
    let file = string(&mut i)?;
    let (mut replace, mut ignore) = (false, false);
    if kw(i, "replace") {
        replace = true;
        i += 1;
    } else if kw(i, "ignore") {
        ignore = true;
        i += 1;
    }
    expect(&mut i, "into")?;
    expect(&mut i, "table")?;
    let (db, table, next) =
        crate::dispatch::qualified_name(&toks, i).ok_or_else(|| near(&toks, i))?;
    i = next;
    let mut s = LoadStmt {
        local,
        file,
        replace,
        ignore,
        db,
        table,
        charset: None,
        format: Format::default(),
        ignore_lines: 0,
        targets: Vec::new(),
        sets: Vec::new(),
    };
    let charset_clause = if kw(i, "charset") {
        i += 1;
        true
    } else if kw(i, "character") {
        i += 1;
        expect(&mut i, "set")?;
        true
    } else {
        false
    };
    if charset_clause {
        let name = match toks.get(i) {
            Some(Tok::Word(w) | Tok::Str(w) | Tok::Quoted(w)) => w.to_ascii_lowercase(),
            _ => return Err(near(&toks, i)),
        };
        s.charset = Some(match name.as_str() {
            "utf8mb4" | "utf8" | "utf8mb3" => FileCharset::Utf8,
            "latin1" => FileCharset::Latin1,
            "binary" => FileCharset::Binary,
            _ => return Err(SqlError::UnknownCharset(name)),
        });
        i += 1;
    }
    let one_byte = |v: &str, i: usize| -> Result<Option<u8>> {
        match v.as_bytes() {
            [] => Ok(None),
            [b] => Ok(Some(*b)),
            // MariaDB: ENCLOSED BY and ESCAPED BY take one character.
            _ => Err(near(&toks, i)),
        }
    };
    if kw(i, "fields") || kw(i, "columns") {
        i += 1;
        let mut any = false;
        loop {
            if kw(i, "terminated") {
                i += 1;
                expect(&mut i, "by")?;
                s.format.field_term = string(&mut i)?.into_bytes();
            } else if kw(i, "optionally") || kw(i, "enclosed") {
                if kw(i, "optionally") {
                    i += 1;
                }
                expect(&mut i, "enclosed")?;
                expect(&mut i, "by")?;
                let v = string(&mut i)?;
                s.format.enclosed = one_byte(&v, i - 1)?;
            } else if kw(i, "escaped") {
                i += 1;
                expect(&mut i, "by")?;
                let v = string(&mut i)?;
                s.format.escaped = one_byte(&v, i - 1)?;
            } else {
                break;
            }
            any = true;
        }
        if !any {
            return Err(near(&toks, i));
        }
    }
    if kw(i, "lines") {
        i += 1;
        let mut any = false;
        loop {
            if kw(i, "starting") {
                i += 1;
                expect(&mut i, "by")?;
                s.format.line_start = string(&mut i)?.into_bytes();
            } else if kw(i, "terminated") {
                i += 1;
                expect(&mut i, "by")?;
                s.format.line_term = string(&mut i)?.into_bytes();
            } else {
                break;
            }
            any = true;
        }
        if !any {
            return Err(near(&toks, i));
        }
    }
    if kw(i, "ignore") {
        i += 1;
        let n = match toks.get(i) {
            Some(Tok::Word(w)) => w.parse::<u64>().map_err(|_| near(&toks, i))?,
            _ => return Err(near(&toks, i)),
        };
        i += 1;
        if kw(i, "lines") || kw(i, "rows") {
            i += 1;
        } else {
            return Err(near(&toks, i));
        }
        s.ignore_lines = n;
    }
    if matches!(toks.get(i), Some(Tok::Punct('('))) {
        i += 1;
        loop {
            match toks.get(i) {
                Some(Tok::Punct(')')) if s.targets.is_empty() => {
                    i += 1;
                    break;
                }
                Some(Tok::Word(w)) if w.starts_with('@') && w.len() > 1 => {
                    s.targets.push(Target::Var(w[1..].to_lowercase()));
                }
                Some(Tok::Word(_) | Tok::Quoted(_)) => {
                    let (_, col, next) =
                        crate::dispatch::qualified_name(&toks, i).ok_or_else(|| near(&toks, i))?;
                    s.targets.push(Target::Column(col));
                    i = next - 1;
                }
                _ => return Err(near(&toks, i)),
            }
            i += 1;
            match toks.get(i) {
                Some(Tok::Punct(',')) => i += 1,
                Some(Tok::Punct(')')) => {
                    i += 1;
                    break;
                }
                _ => return Err(near(&toks, i)),
            }
        }
    }
    if i < toks.len() {
        return Err(near(&toks, i));
    }
    if s.format.field_term.is_empty() && s.format.enclosed.is_none() {
        // MariaDB's fixed-width rows: not in Quire yet.
        return Err(SqlError::Unsupported(
            "LOAD DATA with empty FIELDS TERMINATED BY and ENCLOSED BY (fixed-width rows)".into(),
        ));
    }
    if s.format.line_term.is_empty() {
        s.format.line_term = s.format.field_term.clone();
    }
    if let Some(at) = set_at {
        for item in split_top_level(&text[at..]) {
            let Some((col, expr)) = item.split_once('=') else {
                return Err(SqlError::Parse {
                    near: item.trim().to_string(),
                    line: 1,
                });
            };
            let col = col.trim().trim_matches('`').to_string();
            if col.is_empty() {
                return Err(SqlError::Parse {
                    near: item.trim().to_string(),
                    line: 1,
                });
            }
            s.sets.push((col, expr.trim().to_string()));
        }
    }
    Ok(s)
}

/// `text` split at the commas outside quotes and parentheses.
fn split_top_level(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let (mut out, mut st, mut depth, mut i) = (Vec::new(), 0, 0i32, 0);
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    if b[i] == b'\\' && q != b'`' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'(' => depth += 1,
            b')' => depth -= 1,
            b',' if depth == 0 => {
                out.push(&text[st..i]);
                st = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(&text[st..]);
    out
}

/// How one entry of the column list is filled.
enum Slot {
    /// Source position in the planned INSERT's row, and the table column.
    Column {
        src: usize,
        col: usize,
    },
    Var(String),
}

/// What LOAD DATA did, for its OK packet.
#[derive(Debug, Default)]
struct Counts {
    records: u64,
    affected: u64,
    copied: u64,
    first_id: Option<u64>,
}

impl Session<'_> {
    /// Runs LOAD DATA `text`; the client's file (LOCAL) comes from `sink`.
    pub(crate) fn load_data(&mut self, text: &str, sink: &mut dyn RowSink) -> Result<Outcome> {
        let st = parse_load(text)?;
        // MariaDB checks local_infile before anything else.
        if st.local && !self.local_infile_on() {
            return Err(SqlError::LocalInfileDisabled);
        }
        let ignore = st.ignore || (st.local && !st.replace);
        // The INSERT this statement is: its plan checks the table, the columns and the
        // privileges (INSERT, and DELETE for REPLACE) once.
        let mut cols: Vec<String> = st
            .targets
            .iter()
            .filter_map(|t| match t {
                Target::Column(c) => Some(c.clone()),
                Target::Var(_) => None,
            })
            .collect();
        let all_columns = st.targets.is_empty();
        let table_name = match &st.db {
            Some(db) => format!(
                "{}.{}",
                crate::check::quote_ident(db),
                crate::check::quote_ident(&st.table)
            ),
            None => crate::check::quote_ident(&st.table),
        };
        if all_columns {
            let db = match &st.db {
                Some(d) => d.clone(),
                None => self.sv.db.clone().ok_or(SqlError::NoDatabaseSelected)?,
            };
            // A temporary table of the session hides a base table of its name (temp.rs,
            // invariant 2): its columns are the ones to load.
            let def = match self.temp_def(&db, &st.table) {
                Some((def, _)) => def,
                None => self.open_table(&db, &st.table)?.definition()?,
            };
            cols = def.columns.iter().map(|c| c.name.clone()).collect();
        }
        let nfield_cols = cols.len();
        for (c, _) in &st.sets {
            cols.push(c.clone());
        }
        let verb = match (st.replace, ignore) {
            (true, _) => "REPLACE",
            (false, true) => "INSERT IGNORE",
            (false, false) => "INSERT",
        };
        let col_list: Vec<String> = cols.iter().map(|c| crate::check::quote_ident(c)).collect();
        let nulls = vec!["NULL"; cols.len()].join(", ");
        let insert = format!(
            "{verb} INTO {table_name} ({}) VALUES ({nulls})",
            col_list.join(", ")
        );
        if st.replace {
            // MariaDB names DELETE first when REPLACE lacks it.
            let db = st
                .db
                .clone()
                .or_else(|| self.sv.db.clone())
                .unwrap_or_default();
            self.check_needs(&[crate::users::Need::Table {
                db,
                table: st.table.clone(),
                privs: crate::acl::privs::DELETE,
                command: "DELETE",
            }])?;
        }
        self.check_access(&insert)?;
        // A statement that uses a table clears the warnings of the one before (MariaDB).
        self.sv.diag.get_mut().start_using_tables();
        let conn = self.sv.conn();
        let (stmt, _) = crate::parse::parse_one_in(&insert, conn.mode)?;
        let plan = |s: &Self| -> Result<Planned> {
            // An unknown column of the list is named as MariaDB's LOAD DATA names it.
            let planned = s
                .plan(&stmt, None, &HashMap::new(), conn)
                .map_err(|e| match e {
                    SqlError::UnknownColumn { column, .. } => SqlError::UnknownColumn {
                        column,
                        context: "SELECT".into(),
                    },
                    e => e,
                })?;
            planned.ok_or_else(|| SqlError::Unsupported("LOAD DATA into this table".into()))
        };
        // Metadata locks as INSERT takes them (and LOCK TABLES' check); a DDL that ran
        // between the plan and the lock means a new plan, under the lock now.
        let gen = self
            .inst
            .generation
            .load(std::sync::atomic::Ordering::Acquire);
        let mut planned = plan(self)?;
        self.lock_tables(&planned)?;
        if self
            .inst
            .generation
            .load(std::sync::atomic::Ordering::Acquire)
            != gen
        {
            planned = plan(self)?;
        }
        let Planned::Insert(ip) = planned else {
            return Err(SqlError::Unsupported("LOAD DATA into this table".into()));
        };
        if !st.local {
            // MariaDB answers 1045 (not 1227) for a missing FILE privilege here.
            self.require_global(crate::acl::privs::FILE, "FILE")
                .map_err(|_| {
                    let (user, host) = self.sv.acct.account.clone().unwrap_or_default();
                    SqlError::AccessDenied {
                        user,
                        host,
                        using: "YES",
                    }
                })?;
        }
        let def = ip.table.def.clone();
        // The column list's slots, by table column.
        let mut slots = Vec::new();
        let mut src = 0;
        let field_targets: Vec<Target> = if all_columns {
            cols[..nfield_cols]
                .iter()
                .map(|c| Target::Column(c.clone()))
                .collect()
        } else {
            st.targets.clone()
        };
        for t in &field_targets {
            slots.push(match t {
                Target::Column(_) => {
                    let col = ip
                        .map
                        .iter()
                        .position(|m| *m == Some(src))
                        .ok_or_else(|| SqlError::Unsupported("LOAD DATA column list".into()))?;
                    src += 1;
                    Slot::Column { src: src - 1, col }
                }
                Target::Var(v) => Slot::Var(v.clone()),
            });
        }
        // SET's expressions, bound once over the table's row (a column reads the value
        // loaded into it), user variables typed as strings (what the file gives them).
        for t in &field_targets {
            if let Target::Var(v) = t {
                self.sv
                    .user_vars
                    .borrow_mut()
                    .insert(v.clone(), (Value::Null, VarKind::Str(conn.coll)));
            }
        }
        let scope = crate::stmt::scope_of(&ip.table);
        let mut sets: Vec<(usize, usize, Expr)> = Vec::new();
        for (k, (_, text)) in st.sets.iter().enumerate() {
            let parsed = crate::parse::parse_expr_in(text, conn.mode)?;
            let bound = crate::bind::with_user_vars(self.user_var_kinds(), || {
                Binder {
                    sub: None,
                    scope: Some(&scope),
                    params: &Default::default(),
                    aggs: None,
                    context: "field list",
                    conn,
                }
                .bind(&parsed)
            })?;
            let s = nfield_cols + k;
            let col = ip
                .map
                .iter()
                .position(|m| *m == Some(s))
                .ok_or_else(|| SqlError::Unsupported("LOAD DATA SET".into()))?;
            sets.push((s, col, bound));
        }
        let reader: Box<dyn std::io::Read + '_> = if st.local {
            match sink.local_infile(&st.file) {
                Some(r) => r,
                None => return Err(SqlError::LocalInfileDisabled),
            }
        } else {
            Box::new(self.server_file(&st.file)?)
        };
        let mut rows = Rows::new(reader, st.format.clone());
        let charset = st.charset.unwrap_or(FileCharset::Utf8);
        let strict = self.sv.mode.strict() && !ignore;
        let table = self.open_table(&ip.table.db, &ip.table.name)?;
        let found_rows = self.client_found_rows;
        self.sv.insert_id_arg.set(false);
        let width = cols.len();
        let io = |e: std::io::Error| SqlError::Unsupported(format!("reading the file: {e}"));
        let counts = self.in_statement_with(&[], true, strict, false, |tx, env| {
            rows.skip_lines(st.ignore_lines).map_err(io)?;
            let mut k = Counts::default();
            let mut full = vec![Value::Null; def.columns.len()];
            while let Some(fields) = rows.next_row().map_err(io)? {
                if env.interrupted() {
                    return Err(SqlError::Interrupted);
                }
                k.records += 1;
                let n = k.records;
                let mut src_row = vec![Value::Null; width];
                for f in full.iter_mut() {
                    *f = Value::Null;
                }
                for (i, slot) in slots.iter().enumerate() {
                    let got = fields.get(i);
                    match slot {
                        Slot::Column { src, col } => {
                            let c = &def.columns[*col];
                            let auto = def.auto_increment == Some(*col);
                            let v = match got {
                                Some(f) => {
                                    let v = value_of(f, charset);
                                    if matches!(v, Value::Null) && !c.nullable && !auto {
                                        env.warn(
                                            Level::Warning,
                                            1263,
                                            format!("Column set to default value; NULL supplied to NOT NULL column '{}' at row {n}", c.name),
                                        )?;
                                        crate::exec::implicit_default(c)
                                    } else {
                                        v
                                    }
                                }
                                None => {
                                    env.warn(
                                        Level::Warning,
                                        1261,
                                        format!("Row {n} doesn't contain data for all columns"),
                                    )?;
                                    // MariaDB resets the field: NULL only where NULL is
                                    // also its default.
                                    if c.nullable && c.default.is_none() {
                                        Value::Null
                                    } else {
                                        crate::exec::implicit_default(c)
                                    }
                                }
                            };
                            full[*col] = v.clone();
                            src_row[*src] = v;
                        }
                        Slot::Var(name) => {
                            let v = got.map_or(Value::Null, |f| value_of(f, charset));
                            env.set_user_var(name, v, VarKind::Str(conn.coll))?;
                        }
                    }
                }
                // One empty field past the last column is a line that ends with the field
                // terminator (`1,2,`): MariaDB's reader finds nothing left on the line then,
                // and says nothing.
                let trailing_terminator = fields.len() == slots.len() + 1
                    && fields.last().is_some_and(|f| f.as_ref().is_some_and(|b| b.is_empty()));
                if fields.len() > slots.len() && !trailing_terminator {
                    env.warn(
                        Level::Warning,
                        1262,
                        format!("Row {n} was truncated; it contained more data than there were input columns"),
                    )?;
                }
                for (s, col, e) in &sets {
                    let v = e.eval(
                        &Row {
                            values: &full,
                            aggs: &[],
                        },
                        env,
                    )?;
                    full[*col] = v.clone();
                    src_row[*s] = v;
                }
                let c = crate::run::insert_rows(
                    &ip,
                    &table,
                    tx,
                    vec![src_row],
                    env,
                    strict,
                    found_rows,
                    None,
                    n,
                    true,
                )?;
                k.affected += c.affected;
                k.copied += c.copied;
                if k.first_id.is_none() {
                    k.first_id = c.first_id;
                }
            }
            Ok(k)
        })?;
        // Invariant 1: whatever the client still sends is read before the answer.
        drop(rows);
        if let Some(id) = counts.first_id {
            self.sv.last_insert_id.set(id);
        }
        let warnings = self.sv.diag.get_mut().statement_count();
        let deleted = counts.affected - counts.copied;
        let skipped = counts.records - counts.copied;
        Ok(Outcome::Ok {
            affected_rows: counts.affected,
            // MariaDB's OK for LOAD DATA carries no insert id (LAST_INSERT_ID() has it).
            last_insert_id: 0,
            info: format!(
                "Records: {}  Deleted: {deleted}  Skipped: {skipped}  Warnings: {warnings}",
                counts.records
            ),
        })
    }

    /// Whether the server allows LOAD DATA LOCAL (`local_infile`).
    fn local_infile_on(&self) -> bool {
        !matches!(
            crate::vars::global(self.inst, "local_infile"),
            Some(Value::Int(0)) | Some(Value::UInt(0))
        )
    }

    /// A server-side file, opened only inside `secure_file_priv` (Quire's default, empty,
    /// allows none: docs/sql.md, "LOAD DATA").
    fn server_file(&self, path: &str) -> Result<std::fs::File> {
        let dir = crate::session::global_text(self.inst, "secure_file_priv").unwrap_or_default();
        if dir.is_empty() || dir.eq_ignore_ascii_case("NULL") {
            return Err(SqlError::SecureFilePriv);
        }
        let dir = std::path::Path::new(&dir);
        let p = std::path::Path::new(path);
        let p = if p.is_relative() {
            dir.join(p)
        } else {
            p.to_path_buf()
        };
        let unreadable = |e: std::io::Error| SqlError::FileUnreadable {
            path: p.display().to_string(),
            errcode: format!(
                "{} \"{}\"",
                e.raw_os_error().unwrap_or(0),
                match e.kind() {
                    std::io::ErrorKind::NotFound => "No such file or directory".to_string(),
                    std::io::ErrorKind::PermissionDenied => "Permission denied".to_string(),
                    _ => e.to_string(),
                }
            ),
        };
        // Symlinks and `..` are resolved before the prefix check.
        let dir = dir.canonicalize().map_err(|_| SqlError::SecureFilePriv)?;
        let real = p.canonicalize().map_err(unreadable)?;
        if !real.starts_with(&dir) {
            return Err(SqlError::SecureFilePriv);
        }
        std::fs::File::open(&real).map_err(unreadable)
    }
}

/// A field as the value the INSERT path coerces.
fn value_of(f: &Field, charset: FileCharset) -> Value {
    match f {
        None => Value::Null,
        Some(b) => match charset {
            FileCharset::Utf8 => match std::str::from_utf8(b) {
                Ok(s) => Value::Str(s.to_string()),
                Err(_) => Value::Bytes(b.clone()),
            },
            // MariaDB's latin1 is cp1252: 0x80 is €.
            FileCharset::Latin1 => Value::Str(quire_engine::row::Charset::latin1_text(b)),
            FileCharset::Binary => Value::Bytes(b.clone()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_clause_is_read() {
        let s = parse_load(
            "LOAD DATA LOCAL INFILE '/tmp/x.csv' REPLACE INTO TABLE d.t CHARACTER SET latin1 \
             FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' ESCAPED BY '' \
             LINES STARTING BY '>' TERMINATED BY '\\r\\n' IGNORE 1 LINES (a, @x, `b c`) \
             SET c = concat(@x, ','), d = 1",
        )
        .expect("parses");
        assert!(s.local && s.replace && !s.ignore);
        assert_eq!(s.file, "/tmp/x.csv");
        assert_eq!((s.db.as_deref(), s.table.as_str()), (Some("d"), "t"));
        assert_eq!(s.charset, Some(FileCharset::Latin1));
        assert_eq!(s.format.field_term, b",");
        assert_eq!(s.format.enclosed, Some(b'"'));
        assert_eq!(s.format.escaped, None);
        assert_eq!(s.format.line_start, b">");
        assert_eq!(s.format.line_term, b"\r\n");
        assert_eq!(s.ignore_lines, 1);
        assert_eq!(
            s.targets,
            vec![
                Target::Column("a".into()),
                Target::Var("x".into()),
                Target::Column("b c".into())
            ]
        );
        assert_eq!(
            s.sets,
            vec![
                ("c".to_string(), "concat(@x, ',')".to_string()),
                ("d".to_string(), "1".to_string())
            ]
        );
    }

    #[test]
    fn a_bad_clause_is_a_syntax_error() {
        assert!(matches!(
            parse_load("LOAD DATA INFILE 'x' INTO TABLE t FIELDS"),
            Err(SqlError::Parse { .. })
        ));
        assert!(matches!(
            parse_load("LOAD DATA INFILE x INTO TABLE t"),
            Err(SqlError::Parse { .. })
        ));
    }
}
