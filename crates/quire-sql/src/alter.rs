//! ALTER TABLE, as MariaDB 10.11 with InnoDB does it (docs/sql.md, "ALTER TABLE").
//!
//! The statement is read here, one operation at a time: the text after the table name is
//! split at its top-level commas, and each operation is parsed by sqlparser as `ALTER
//! TABLE t <operation>` or, for the forms sqlparser does not read (table options, `DROP
//! KEY`, `RENAME INDEX`, `ALGORITHM=NOCOPY`, `ADD (c1 …, c2 …)`), by this module. The
//! operations are applied, in order, to a working copy of the definition ([`Work`]); then
//! the statement runs in one of three ways, the least work that does it:
//!
//! - **instant**: only names, defaults, the AUTO_INCREMENT counter or the table name change
//!   (`Db::alter_definition`, `Db::set_auto_increment`, `Db::rename_table`);
//! - **in place**: only secondary indexes are added or dropped (`Db::create_index`,
//!   `Db::drop_index`, as InnoDB's ADD INDEX / DROP INDEX);
//! - **rebuild**: anything else (columns, types, the primary key): `Db::rebuild_table`
//!   copies every row, converted here with `types::coerce`, into a new space and switches
//!   the table to it atomically (docs/catalog.md, "ALTER TABLE").
//!
//! Invariants:
//! 1. Every check that can fail on the definition alone (1054, 1060, 1061, 1068, 1072,
//!    1090, 1091, 1846) runs before anything is changed; a rebuild that fails on a row
//!    (a strict-mode conversion, 1062) leaves the old table.
//! 2. The table's name is locked exclusively (metadata lock) for the whole statement, so
//!    writers and readers wait and then see the new definition; the catalog generation is
//!    bumped before the lock is released, so kept plans are made again.
//! 3. Foreign keys are answered in one place ([`foreign_key`]).

use quire_engine::catalog::TableDef;
use quire_engine::row::secondary::IndexColumn;
use quire_engine::row::{Collation, Column, ColumnType, LobSize, Value};
use quire_engine::table::{DbError, IndexSpec, TableSpec, TEMP_DB};
use sqlparser::ast as sql;

use crate::diag::Level;
use crate::error::{Result, SqlError};
use crate::expr::Row;
use crate::session::{Outcome, Session};
use crate::types;

/// SHOW PROCESSLIST's State while the rows are copied, as MariaDB's.
const COPY_STATE: &str = "copy to tmp table";

/// SHOW PROCESSLIST's State while an index is built online, and while it is switched in
/// (MariaDB's stage names).
const ONLINE_STATE: &str = "altering table";
const COMMIT_STATE: &str = "committing alter table to storage engine";

/// ADD / DROP FOREIGN KEY together with other operations: 1235 from this one function
/// (invariant 3); alone, `alter_table` hands them to fk.rs.
pub(crate) fn foreign_key(what: &str) -> SqlError {
    SqlError::Unsupported(format!("{what} in ALTER TABLE"))
}

/// Where ADD / MODIFY / CHANGE puts a column.
#[derive(Debug, Clone)]
enum Pos {
    First,
    After(String),
}

/// ALTER TABLE's LOCK.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LockReq {
    /// `DEFAULT` or none given: the least locking the operation allows.
    Default,
    /// `NONE`: concurrent reads and writes, or 1846.
    None,
    /// `SHARED` or `EXCLUSIVE`: Quire holds the exclusive metadata lock throughout.
    Blocking,
}

/// ALTER TABLE's ALGORITHM, in the order of how much work each allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Alg {
    Instant,
    NoCopy,
    Inplace,
    Copy,
}

impl Alg {
    fn name(self) -> &'static str {
        match self {
            Alg::Instant => "INSTANT",
            Alg::NoCopy => "NOCOPY",
            Alg::Inplace => "INPLACE",
            Alg::Copy => "COPY",
        }
    }
}

/// One operation of the statement.
#[derive(Debug)]
enum Op {
    AddColumn {
        name: String,
        data_type: sql::DataType,
        options: Vec<sql::ColumnOption>,
        pos: Option<Pos>,
        if_not_exists: bool,
    },
    DropColumn {
        name: String,
        if_exists: bool,
    },
    /// MODIFY (`old == new`) and CHANGE.
    Change {
        old: String,
        new: String,
        data_type: sql::DataType,
        options: Vec<sql::ColumnOption>,
        pos: Option<Pos>,
    },
    RenameColumn {
        from: String,
        to: String,
    },
    /// `ALTER COLUMN c SET DEFAULT e` (`Some`) or `DROP DEFAULT` (`None`).
    Default {
        column: String,
        value: Option<sql::Expr>,
    },
    AddIndex {
        name: Option<String>,
        unique: bool,
        primary: bool,
        columns: Vec<sql::IndexColumn>,
        comment: String,
    },
    DropIndex {
        name: String,
        if_exists: bool,
    },
    DropPrimary,
    RenameIndex {
        from: String,
        to: String,
    },
    RenameTable(sql::ObjectName),
    AutoIncrement(u64),
    Algorithm(Option<Alg>),
    /// `LOCK = …`.
    Lock(LockReq),
    Force,
    /// `[DEFAULT] CHARSET | COLLATE`: the table's default for columns added later.
    Charset {
        charset: Option<String>,
        collation: Option<String>,
    },
    /// `CONVERT TO CHARACTER SET cs [COLLATE c]`: every text column converted (a copy).
    ConvertTo {
        charset: Option<String>,
        collation: Option<String>,
    },
    /// ENGINE = InnoDB: accepted (Quire's one engine).
    Accepted,
    /// `COMMENT [=] '…'`: the table's comment (instant, as in MariaDB).
    Comment(String),
    /// `ADD [CONSTRAINT [name]] CHECK (e)`: the rows are checked (a copy, as MariaDB's).
    AddCheck {
        name: Option<String>,
        expr: sql::Expr,
    },
    /// `DROP CONSTRAINT name` of a CHECK (instant).
    DropConstraint(String),
}

/// A column of the working definition and where its values come from.
#[derive(Debug, Clone)]
struct WCol {
    col: Column,
    /// The old column it is (by position in the old table); `None`: added.
    src: Option<usize>,
    /// Its values need a conversion (type, collation or NULL-ability changed).
    convert: bool,
}

/// A secondary index of the working definition, by column names.
#[derive(Debug, Clone)]
struct WIndex {
    name: String,
    unique: bool,
    parts: Vec<(String, Option<u32>, bool)>,
    /// The old index it still is, unchanged (its name may change).
    old: Option<String>,
    comment: String,
}

/// The definition as the operations change it.
struct Work {
    table: String,
    cols: Vec<WCol>,
    pk: Vec<String>,
    auto: Option<String>,
    indexes: Vec<WIndex>,
    collation: Collation,
    /// The table's comment.
    comment: String,
    /// CHECK constraints, their expressions following column renames.
    checks: Vec<quire_engine::catalog::CheckDef>,
    /// A CHECK was added: every row is checked (a rebuild).
    check_added: bool,
    /// CHANGE / MODIFY column checks waiting for their column to be placed.
    pending_checks: Vec<(String, sql::Expr)>,
    /// Why a rebuild must copy (MariaDB's reason: ALGORITHM=COPY only).
    copy: Option<&'static str>,
    rebuild: bool,
    /// Names or defaults changed (instant).
    meta: bool,
    /// Columns were added, dropped or moved: instantly if `instant_columns` allows, else by
    /// a rebuild.
    reshaped: bool,
    auto_increment: Option<u64>,
    algorithm: Option<Alg>,
    lock: LockReq,
    pk_dropped: bool,
    pk_added: bool,
}

impl Work {
    fn position(&self, name: &str) -> Option<usize> {
        self.cols
            .iter()
            .position(|c| c.col.name.eq_ignore_ascii_case(name))
    }

    fn unknown(&self, name: &str) -> SqlError {
        SqlError::UnknownColumn {
            column: name.into(),
            context: self.table.clone(),
        }
    }

    fn place(&mut self, c: WCol, pos: Option<&Pos>) -> Result<()> {
        match pos {
            None => self.cols.push(c),
            Some(Pos::First) => self.cols.insert(0, c),
            Some(Pos::After(a)) => {
                let i = self.position(a).ok_or_else(|| self.unknown(a))?;
                self.cols.insert(i + 1, c);
            }
        }
        Ok(())
    }

    /// Renames column `from` in the keys that name it.
    fn rename_in_keys(&mut self, from: &str, to: &str) {
        for p in &mut self.pk {
            if p.eq_ignore_ascii_case(from) {
                *p = to.into();
            }
        }
        for ix in &mut self.indexes {
            for p in &mut ix.parts {
                if p.0.eq_ignore_ascii_case(from) {
                    p.0 = to.into();
                }
            }
        }
        if self
            .auto
            .as_deref()
            .is_some_and(|a| a.eq_ignore_ascii_case(from))
        {
            self.auto = Some(to.into());
        }
        // A check names the column by name: its text follows (as MariaDB's), and a
        // column check is named after its column.
        for ck in &mut self.checks {
            if let Ok(t) = crate::check::rename_column(&ck.expr, from, to) {
                ck.expr = t;
            }
            if ck.column_level && ck.name.eq_ignore_ascii_case(from) {
                ck.name = to.into();
            }
        }
    }

    /// A unique index name from `base` (MariaDB numbers a repeated default name).
    fn index_name(&self, base: &str) -> String {
        let taken = |n: &str| {
            n.eq_ignore_ascii_case("PRIMARY")
                || self.indexes.iter().any(|i| i.name.eq_ignore_ascii_case(n))
        };
        if !taken(base) {
            return base.into();
        }
        (2..)
            .map(|k| format!("{base}_{k}"))
            .find(|n| !taken(n))
            .unwrap_or_else(|| base.into())
    }

    fn add_primary(&mut self, cols: Vec<String>) -> Result<()> {
        if !self.pk.is_empty() {
            return Err(SqlError::MultiplePrimaryKey);
        }
        for c in &cols {
            let i = self
                .position(c)
                .ok_or_else(|| SqlError::KeyColumnMissing(c.clone()))?;
            if self.cols[i].col.nullable {
                // MariaDB makes a primary key column NOT NULL (a NULL in it then fails).
                self.cols[i].col.nullable = false;
                self.cols[i].convert = true;
            }
        }
        self.pk = cols;
        self.pk_added = true;
        self.rebuild = true;
        Ok(())
    }

    fn drop_column(&mut self, i: usize) {
        let name = self.cols.remove(i).col.name;
        let same = |n: &str| n.eq_ignore_ascii_case(&name);
        // A column in no key is dropped instantly (its slot stays as a ghost); one in a
        // key changes that key's records: a rebuild.
        // An index of that column alone is dropped with it, in place (MariaDB's NOCOPY).
        let keyed = self.pk.iter().any(|p| same(p))
            || self
                .indexes
                .iter()
                .any(|ix| ix.parts.len() > 1 && ix.parts.iter().any(|p| same(&p.0)));
        if keyed {
            self.rebuild = true;
        }
        self.reshaped = true;
        if self.pk.iter().any(|p| same(p)) {
            self.pk.retain(|p| !same(p));
            if self.pk.is_empty() {
                self.pk_dropped = true;
            }
        }
        for ix in &mut self.indexes {
            if ix.parts.iter().any(|p| same(&p.0)) {
                ix.parts.retain(|p| !same(&p.0));
                ix.old = None;
            }
        }
        self.indexes.retain(|ix| !ix.parts.is_empty());
        if self.auto.as_deref().is_some_and(same) {
            self.auto = None;
        }
    }
}

/// The table name after `ALTER [ONLINE | IGNORE] TABLE` and the operations' text.
fn split_statement(text: &str) -> Option<(sql::ObjectName, &str)> {
    let t = text.trim().trim_end_matches(';').trim_end();
    let mut rest = t;
    let word = |s: &mut &str| -> Option<String> {
        let x = s.trim_start();
        let n = x
            .char_indices()
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '$'))
            .map_or(x.len(), |(i, _)| i);
        let w = x[..n].to_string();
        *s = &x[n..];
        (!w.is_empty()).then_some(w)
    };
    if !word(&mut rest)?.eq_ignore_ascii_case("alter") {
        return None;
    }
    loop {
        let w = word(&mut rest)?;
        if w.eq_ignore_ascii_case("table") {
            break;
        }
        if !(w.eq_ignore_ascii_case("online") || w.eq_ignore_ascii_case("ignore")) {
            return None;
        }
    }
    // The name: one or two identifiers, plain or backquoted.
    let mut parts = Vec::new();
    loop {
        let x = rest.trim_start();
        let (part, after) = if let Some(q) = x.strip_prefix('`') {
            let mut out = String::new();
            let mut it = q.char_indices();
            let mut end = None;
            while let Some((i, c)) = it.next() {
                if c == '`' {
                    if q[i + 1..].starts_with('`') {
                        out.push('`');
                        it.next();
                    } else {
                        end = Some(i + 1);
                        break;
                    }
                } else {
                    out.push(c);
                }
            }
            (out, &q[end?..])
        } else {
            let mut s = x;
            let w = word(&mut s)?;
            (w, s)
        };
        parts.push(sql::Ident::with_quote('`', part));
        rest = after;
        match rest.strip_prefix('.') {
            Some(r) if parts.len() == 1 => rest = r,
            _ => break,
        }
    }
    Some((sql::ObjectName::from(parts), rest.trim()))
}

fn syntax(near: &str) -> SqlError {
    SqlError::Parse {
        near: near.chars().take(80).collect(),
        line: 1,
    }
}

/// The lower-case words an operation starts with (up to `n`), and `=` as a word.
fn lead_words(op: &str, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut s = op.trim_start();
    while out.len() < n && !s.is_empty() {
        if let Some(r) = s.strip_prefix('=') {
            out.push("=".into());
            s = r.trim_start();
            continue;
        }
        let end = s
            .char_indices()
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
            .map_or(s.len(), |(i, _)| i);
        if end == 0 {
            break;
        }
        out.push(s[..end].to_ascii_lowercase());
        s = s[end..].trim_start();
    }
    out
}

/// The text of `op` after its first `k` words (an `=` counts), trimmed.
fn after_words(op: &str, k: usize) -> &str {
    let mut s = op.trim_start();
    for _ in 0..k {
        if let Some(r) = s.strip_prefix('=') {
            s = r.trim_start();
            continue;
        }
        let end = s
            .char_indices()
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
            .map_or(s.len(), |(i, _)| i);
        s = s[end..].trim_start();
    }
    s
}

/// A value after `NAME [=]`: an identifier or a quoted string, unquoted.
fn option_value(s: &str) -> String {
    let s = s.trim_start_matches('=').trim();
    s.trim_matches(|c| c == '\'' || c == '"' || c == '`')
        .to_string()
}

/// Reads one operation: the forms sqlparser lacks here, the rest through sqlparser.
fn parse_op(op: &str, mode: crate::diag::SqlMode, out: &mut Vec<Op>) -> Result<()> {
    let w = lead_words(op, 4);
    let w: Vec<&str> = w.iter().map(String::as_str).collect();
    let bad = || syntax(op);
    match w.as_slice() {
        ["algorithm", ..] => {
            let v = option_value(after_words(op, 1)).to_ascii_lowercase();
            out.push(Op::Algorithm(match v.as_str() {
                "default" => None,
                "instant" => Some(Alg::Instant),
                "nocopy" => Some(Alg::NoCopy),
                "inplace" => Some(Alg::Inplace),
                "copy" => Some(Alg::Copy),
                _ => return Err(bad()),
            }));
        }
        ["lock", ..] => {
            let v = option_value(after_words(op, 1)).to_ascii_lowercase();
            match v.as_str() {
                "default" => out.push(Op::Lock(LockReq::Default)),
                "shared" | "exclusive" => out.push(Op::Lock(LockReq::Blocking)),
                "none" => out.push(Op::Lock(LockReq::None)),
                _ => return Err(bad()),
            }
        }
        ["engine", ..] => {
            let v = option_value(after_words(op, 1));
            if !v.eq_ignore_ascii_case("innodb") {
                // Quire has one storage engine, InnoDB's kind.
                return Err(SqlError::Unsupported(format!("ENGINE={v}")));
            }
            out.push(Op::Accepted);
        }
        ["comment", ..] => {
            // `COMMENT [=] 'text'`, the literal read as any string (escapes, sql_mode).
            let rest = after_words(op, 1).trim_start();
            let rest = rest.strip_prefix('=').unwrap_or(rest);
            match crate::parse::parse_expr_in(rest, mode) {
                Ok(sql::Expr::Value(v)) => match v.value {
                    sql::Value::SingleQuotedString(s) | sql::Value::DoubleQuotedString(s) => {
                        out.push(Op::Comment(s))
                    }
                    _ => return Err(bad()),
                },
                _ => return Err(bad()),
            }
        }
        ["force"] => out.push(Op::Force),
        ["convert", "to", "charset", ..] | ["convert", "to", "character", "set"] => {
            let k = if w[2] == "charset" { 3 } else { 4 };
            let mut one = Vec::new();
            charset_op(after_words(op, k), true, &mut one)?;
            for o in one {
                if let Op::Charset { charset, collation } = o {
                    out.push(Op::ConvertTo { charset, collation });
                }
            }
        }
        ["convert", ..] => return Err(bad()),
        ["default", "charset", ..] | ["charset", ..] => {
            let k = if w[0] == "default" { 2 } else { 1 };
            charset_op(after_words(op, k), true, out)?;
        }
        ["default", "character", "set", ..] | ["character", "set", ..] => {
            let k = if w[0] == "default" { 3 } else { 2 };
            charset_op(after_words(op, k), true, out)?;
        }
        ["default", "collate", ..] | ["collate", ..] => {
            let k = if w[0] == "default" { 2 } else { 1 };
            charset_op(after_words(op, k), false, out)?;
        }
        ["drop", "key", ..] => {
            let rest = after_words(op, 2);
            let (if_exists, rest) = match lead_words(rest, 2).as_slice() {
                [a, b] if a == "if" && b == "exists" => (true, after_words(rest, 2)),
                _ => (false, rest),
            };
            out.push(Op::DropIndex {
                name: ident(rest).ok_or_else(bad)?,
                if_exists,
            });
        }
        ["drop", "index", "if", "exists"] => {
            out.push(Op::DropIndex {
                name: ident(after_words(op, 4)).ok_or_else(bad)?,
                if_exists: true,
            });
        }
        ["drop", "foreign", ..] => {
            return Err(foreign_key("DROP FOREIGN KEY"));
        }
        // Of a CHECK (a foreign key's is refused when no check has the name).
        ["drop", "constraint", ..] => {
            out.push(Op::DropConstraint(
                ident(after_words(op, 2)).ok_or_else(bad)?,
            ));
        }
        ["rename", "index" | "key", ..] => {
            let rest = after_words(op, 2);
            let (from, rest) = ident_rest(rest).ok_or_else(bad)?;
            let rest = rest.trim_start();
            let to_kw = lead_words(rest, 1);
            if to_kw.first().map(String::as_str) != Some("to") {
                return Err(bad());
            }
            let to = ident(after_words(rest, 1)).ok_or_else(bad)?;
            out.push(Op::RenameIndex { from, to });
        }
        ["add", ..] | ["add", "column", ..]
            if after_words(op, if w.get(1) == Some(&"column") { 2 } else { 1 })
                .starts_with('(') =>
        {
            // `ADD [COLUMN] (c1 def, c2 def)`: each one an ADD COLUMN.
            let k = if w.get(1) == Some(&"column") { 2 } else { 1 };
            let inner = after_words(op, k);
            let inner = inner
                .strip_prefix('(')
                .and_then(|s| s.trim_end().strip_suffix(')'))
                .ok_or_else(bad)?;
            for def in crate::dispatch::split_list(inner).ok_or_else(bad)? {
                parse_op(&format!("ADD COLUMN {def}"), mode, out)?;
            }
        }
        ["add", "foreign", ..] => return Err(foreign_key("ADD FOREIGN KEY")),
        ["add", "constraint", ..] if op.to_ascii_lowercase().contains("foreign") => {
            return Err(foreign_key("ADD FOREIGN KEY"))
        }
        _ => {
            let text = format!("ALTER TABLE t {op}");
            let stmt = match crate::parse::parse_one_in(&text, mode) {
                Ok((s, _)) => s,
                Err(_) => return Err(bad()),
            };
            let sql::Statement::AlterTable(at) = stmt else {
                return Err(bad());
            };
            for o in at.operations {
                out.push(from_sqlparser(o, op)?);
            }
        }
    }
    Ok(())
}

/// A TEXT column's type once CONVERT TO changes its character set: as MariaDB, the
/// smallest TEXT that holds as many characters of the new set as the old held of its own
/// (latin1 TEXT to utf8mb4 is MEDIUMTEXT), never a smaller one.
fn converted_text_type(ty: ColumnType, from: Collation, to: Collation) -> ColumnType {
    let ColumnType::Text(size) = ty else {
        return ty;
    };
    let chars = size.max_bytes() / u64::from(from.charset().max_bytes());
    let need = chars * u64::from(to.charset().max_bytes());
    [
        LobSize::Tiny,
        LobSize::Regular,
        LobSize::Medium,
        LobSize::Long,
    ]
    .into_iter()
    .filter(|s| s.max_bytes() >= size.max_bytes())
    .find(|s| s.max_bytes() >= need)
    .map_or(ColumnType::Text(LobSize::Long), ColumnType::Text)
}

fn charset_op(rest: &str, charset: bool, out: &mut Vec<Op>) -> Result<()> {
    let rest = rest.trim_start_matches('=').trim();
    // `COLLATE=x` and `COLLATE = x` alike.
    let spaced = rest.replace('=', " = ");
    let words: Vec<&str> = spaced.split_whitespace().collect();
    let (cs, coll) = match (charset, words.as_slice()) {
        (true, [cs]) => (Some(option_value(cs)), None),
        (true, [cs, c, coll]) if c.eq_ignore_ascii_case("collate") => {
            (Some(option_value(cs)), Some(option_value(coll)))
        }
        (true, [cs, c, eq, coll]) if c.eq_ignore_ascii_case("collate") && *eq == "=" => {
            (Some(option_value(cs)), Some(option_value(coll)))
        }
        (false, [coll]) => (None, Some(option_value(coll))),
        _ => return Err(syntax(rest)),
    };
    out.push(Op::Charset {
        charset: cs,
        collation: coll,
    });
    Ok(())
}

/// An identifier (plain or backquoted) that is the whole of `s`.
fn ident(s: &str) -> Option<String> {
    let (id, rest) = ident_rest(s)?;
    rest.trim().is_empty().then_some(id)
}

/// An identifier at the start of `s`, and what follows it.
fn ident_rest(s: &str) -> Option<(String, &str)> {
    let s = s.trim_start();
    if let Some(q) = s.strip_prefix('`') {
        let end = q.find('`')?;
        return Some((q[..end].to_string(), &q[end + 1..]));
    }
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '$'))
        .map_or(s.len(), |(i, _)| i);
    (end > 0).then(|| (s[..end].to_string(), &s[end..]))
}

fn position(p: Option<sql::MySQLColumnPosition>) -> Option<Pos> {
    p.map(|p| match p {
        sql::MySQLColumnPosition::First => Pos::First,
        sql::MySQLColumnPosition::After(c) => Pos::After(c.value),
    })
}

fn from_sqlparser(o: sql::AlterTableOperation, text: &str) -> Result<Op> {
    use sql::AlterTableOperation as A;
    Ok(match o {
        A::AddColumn {
            if_not_exists,
            column_def,
            column_position,
            ..
        } => Op::AddColumn {
            name: column_def.name.value,
            data_type: column_def.data_type,
            options: column_def.options.into_iter().map(|o| o.option).collect(),
            pos: position(column_position),
            if_not_exists,
        },
        A::DropColumn {
            column_names,
            if_exists,
            ..
        } => match column_names.as_slice() {
            [c] => Op::DropColumn {
                name: c.value.clone(),
                if_exists,
            },
            _ => return Err(syntax(text)),
        },
        A::ModifyColumn {
            col_name,
            data_type,
            options,
            column_position,
        } => Op::Change {
            old: col_name.value.clone(),
            new: col_name.value,
            data_type,
            options,
            pos: position(column_position),
        },
        A::ChangeColumn {
            old_name,
            new_name,
            data_type,
            options,
            column_position,
        } => Op::Change {
            old: old_name.value,
            new: new_name.value,
            data_type,
            options,
            pos: position(column_position),
        },
        A::RenameColumn {
            old_column_name,
            new_column_name,
        } => Op::RenameColumn {
            from: old_column_name.value,
            to: new_column_name.value,
        },
        A::AlterColumn { column_name, op } => match op {
            sql::AlterColumnOperation::SetDefault { value } => Op::Default {
                column: column_name.value,
                value: Some(value),
            },
            sql::AlterColumnOperation::DropDefault => Op::Default {
                column: column_name.value,
                value: None,
            },
            other => return Err(SqlError::Unsupported(format!("ALTER COLUMN … {other}"))),
        },
        A::AddConstraint { constraint, .. } => match constraint {
            sql::TableConstraint::PrimaryKey(p) => Op::AddIndex {
                name: None,
                unique: true,
                primary: true,
                columns: p.columns,
                comment: String::new(),
            },
            sql::TableConstraint::Unique(u) => Op::AddIndex {
                name: u
                    .name
                    .as_ref()
                    .or(u.index_name.as_ref())
                    .map(|n| n.value.clone()),
                unique: true,
                primary: false,
                comment: crate::ddl::index_comment(&u.index_options),
                columns: u.columns,
            },
            sql::TableConstraint::Index(ix) => Op::AddIndex {
                name: ix.name.as_ref().map(|n| n.value.clone()),
                unique: false,
                primary: false,
                comment: crate::ddl::index_comment(&ix.index_options),
                columns: ix.columns,
            },
            sql::TableConstraint::ForeignKey(_) => return Err(foreign_key("ADD FOREIGN KEY")),
            sql::TableConstraint::Check(ck) => Op::AddCheck {
                name: ck.name.map(|n| n.value),
                expr: *ck.expr,
            },
            other => return Err(SqlError::Unsupported(format!("ADD {other}"))),
        },
        A::DropIndex { name } => Op::DropIndex {
            name: name.value,
            if_exists: false,
        },
        A::DropPrimaryKey { .. } => Op::DropPrimary,
        A::DropForeignKey { .. } => return Err(foreign_key("DROP FOREIGN KEY")),
        A::RenameTable { table_name } => match table_name {
            sql::RenameTableNameKind::To(n) | sql::RenameTableNameKind::As(n) => Op::RenameTable(n),
        },
        A::AutoIncrement { value, .. } => {
            let v = value.value.to_string();
            Op::AutoIncrement(v.parse::<u64>().map_err(|_| syntax(text))?)
        }
        A::Algorithm { algorithm, .. } => Op::Algorithm(match algorithm {
            sql::AlterTableAlgorithm::Default => None,
            sql::AlterTableAlgorithm::Instant => Some(Alg::Instant),
            sql::AlterTableAlgorithm::Inplace => Some(Alg::Inplace),
            sql::AlterTableAlgorithm::Copy => Some(Alg::Copy),
        }),
        A::Lock { lock, .. } => Op::Lock(match lock {
            sql::AlterTableLock::Default => LockReq::Default,
            sql::AlterTableLock::None => LockReq::None,
            _ => LockReq::Blocking,
        }),
        other => return Err(SqlError::Unsupported(format!("ALTER TABLE … {other}"))),
    })
}

/// The tables an ALTER TABLE text names, for the privilege check: the table (ALTER), and
/// with RENAME the old name (DROP) and the new one (CREATE, INSERT), as MariaDB checks.
/// `None`: not an ALTER TABLE this module reads (the statement fails later).
pub(crate) fn privilege_targets(
    text: &str,
    current: Option<&str>,
) -> Option<Vec<(String, String, bool)>> {
    let (name, rest) = split_statement(text)?;
    let full = |n: &sql::ObjectName| -> Option<(String, String)> {
        let parts: Vec<String> =
            n.0.iter()
                .filter_map(|p| p.as_ident().map(|i| i.value.clone()))
                .collect();
        match parts.as_slice() {
            [t] => Some((current?.to_string(), t.clone())),
            [d, t] => Some((d.clone(), t.clone())),
            _ => None,
        }
    };
    let (db, t) = full(&name)?;
    let mut out = vec![(db, t, false)];
    let mut ops = Vec::new();
    for op in crate::dispatch::split_list(rest)? {
        if parse_op(op, crate::diag::SqlMode::default(), &mut ops).is_err() {
            continue;
        }
    }
    for op in &ops {
        if let Op::RenameTable(n) = op {
            let (d, t) = full(n)?;
            out.push((d, t, true));
        }
    }
    Some(out)
}

impl<'d> Session<'d> {
    /// ALTER TABLE (module doc).
    pub(crate) fn alter_table(&mut self, text: &str) -> Result<Outcome> {
        // ADD / DROP FOREIGN KEY as the whole statement: the foreign-key code (fk.rs).
        // Mixed with other operations they are still 1235 (`foreign_key`).
        if let Ok((sqlparser::ast::Statement::AlterTable(at), _)) = crate::parse::parse_one(text) {
            if crate::fk::is_fk_alter(&at) {
                return self.alter_foreign_keys(&at);
            }
        }
        let (name, rest) = split_statement(text).ok_or_else(|| syntax(text))?;
        let mut ops = Vec::new();
        if !rest.is_empty() {
            for op in crate::dispatch::split_list(rest).ok_or_else(|| syntax(rest))? {
                if op.is_empty() {
                    return Err(syntax(rest));
                }
                parse_op(op, self.sv.mode, &mut ops)?;
            }
        }
        let (db, table) = self.db_and_name(&name)?;
        let temp = self.temps.get(&db, &table).map(str::to_string);
        if temp.is_none() && self.inst.db.view(&db, &table).is_some() {
            return Err(SqlError::WrongObject {
                db,
                name: table,
                kind: "BASE TABLE",
            });
        }
        let mut rename_to = None;
        for op in &ops {
            if let Op::RenameTable(n) = op {
                rename_to = Some(self.db_and_name(n)?);
            }
        }
        if temp.is_some() && rename_to.is_some() {
            return Err(SqlError::Unsupported(
                "ALTER TABLE … RENAME of a temporary table".into(),
            ));
        }
        // A temporary table is the session's: it needs no lock and ends no transaction.
        let mut x = if temp.is_none() {
            self.commit_open()?;
            let mut names = vec![(db.clone(), table.clone())];
            names.extend(rename_to.clone());
            Some(self.lock_exclusive(names)?)
        } else {
            None
        };
        let (edb, etable) = match &temp {
            Some(e) => (TEMP_DB.to_string(), e.clone()),
            None => (db.clone(), table.clone()),
        };
        let r = self.alter_locked(&db, &table, (&edb, &etable), ops, rename_to, x.as_mut());
        self.info.set_state("");
        self.info
            .progress
            .store(0, std::sync::atomic::Ordering::Relaxed);
        self.inst.bump_generation();
        r
    }

    fn alter_locked(
        &mut self,
        db: &str,
        table: &str,
        (edb, etable): (&str, &str),
        ops: Vec<Op>,
        rename_to: Option<(String, String)>,
        mdl: Option<&mut crate::mdl::Exclusive<'d>>,
    ) -> Result<Outcome> {
        let handle = self
            .inst
            .db
            .table(edb, etable)
            .map_err(|_| SqlError::NoSuchTable {
                db: db.into(),
                table: table.into(),
            })?;
        let def = handle.definition()?;
        let mut w = self.work_of(&def);
        for op in ops {
            self.apply(&mut w, op)?;
            for (name, e) in std::mem::take(&mut w.pending_checks) {
                self.column_checks(&mut w, &name, std::slice::from_ref(&e))?;
            }
        }
        if w.cols.is_empty() {
            return Err(SqlError::DropAllColumns);
        }
        // Every check must still bind to the new columns: a dropped column it names is
        // 1054 "Unknown column 'c' in 'CHECK'", as in MariaDB.
        let mut checked = def.clone();
        checked.columns = w.cols.iter().map(|c| c.col.clone()).collect();
        checked.checks = w.checks.clone();
        crate::check::bind(&checked, table)?;
        // MariaDB checks every row against the constraints when one is added (a copy).
        if w.check_added {
            w.rebuild = true;
        }
        if w.pk_dropped && !w.pk_added {
            w.copy = w.copy.or(Some(
                "Dropping a primary key is not allowed without also adding a new primary key",
            ));
        }
        let spec = spec_of(&w)?;
        // Columns added at the end, alone or with instant changes: a catalog change only
        // (docs/row-format.md, "Instantly added columns"); otherwise the table is rebuilt.
        let instant_cols = if w.reshaped {
            let cols = self.instant_columns(&def, &w, &spec)?;
            if cols.is_none() {
                w.rebuild = true;
            }
            cols
        } else {
            None
        };
        // What the statement needs, and whether ALGORITHM= / LOCK= allow it (1846).
        let added: Vec<&WIndex> = w.indexes.iter().filter(|i| i.old.is_none()).collect();
        let dropped: Vec<String> = def
            .indexes
            .iter()
            .filter(|ix| !w.indexes.iter().any(|i| i.old.as_deref() == Some(&ix.name)))
            .map(|ix| ix.name.clone())
            .collect();
        // In place only when the adds do not reuse a dropped name (then: rebuild).
        let clash = added.iter().any(|a| {
            def.indexes
                .iter()
                .any(|o| o.name.eq_ignore_ascii_case(&a.name))
        });
        // A temporary table has no catalog record for an in-place index change to update.
        let temp = edb == TEMP_DB && (!added.is_empty() || !dropped.is_empty());
        // Index builds in place only alone: an add can fail (1062) after the rest was done,
        // so adds mixed with drops or instant changes go through a rebuild, which is
        // atomic (invariant 1).
        let mixed = !added.is_empty() && (!dropped.is_empty() || w.meta);
        // Several indexes added together are built online by an online rebuild (below),
        // unless the statement asks for ALGORITHM=NOCOPY/INSTANT or a blocking lock.
        let several = added.len() > 1
            && w.lock != LockReq::Blocking
            && !matches!(w.algorithm, Some(Alg::NoCopy | Alg::Instant | Alg::Copy))
            && edb != TEMP_DB
            && rename_to.is_none()
            && self.locked.is_none()
            && mdl.is_some();
        let rebuild = w.rebuild
            || w.copy.is_some()
            || (clash && !added.is_empty())
            || temp
            || mixed
            || several;
        let need = if w.copy.is_some() {
            Alg::Copy
        } else if rebuild {
            Alg::Inplace
        } else if !added.is_empty() || !dropped.is_empty() {
            Alg::NoCopy
        } else {
            Alg::Instant
        };
        if let Some(asked) = w.algorithm {
            if asked < need {
                let what = format!("ALGORITHM={}", asked.name());
                // MariaDB's reasons: a copy names what forces it, an index change names
                // itself, and a rebuild gives none (1845).
                let (reason, try_) = match (need, w.copy) {
                    (Alg::Copy, Some(r)) => (r, Alg::Copy),
                    (Alg::NoCopy, _) if added.is_empty() => ("DROP INDEX", Alg::NoCopy),
                    (Alg::NoCopy, _) => ("ADD INDEX", Alg::NoCopy),
                    _ => {
                        return Err(SqlError::AlterAlgorithmNotSupported {
                            what,
                            try_: format!("ALGORITHM={}", Alg::Inplace.name()),
                        })
                    }
                };
                return Err(SqlError::AlterNotSupported {
                    what,
                    reason: reason.into(),
                    try_: format!("ALGORITHM={}", try_.name()),
                });
            }
        }
        // New indexes and nothing else are built online (docs/online-ddl.md): DML goes on
        // while they are built, under the upgradable metadata lock. Under LOCK TABLES the
        // session holds the table already, and a RENAME takes a second name: in place, as
        // before.
        let copy_asked = w.algorithm == Some(Alg::Copy);
        let online = need == Alg::NoCopy
            && !copy_asked
            && !added.is_empty()
            && dropped.is_empty()
            && w.lock != LockReq::Blocking
            && rename_to.is_none()
            && self.locked.is_none()
            && mdl.is_some();
        // Dropping an index only changes the catalog: any lock will do.
        let drops_only = need == Alg::NoCopy && added.is_empty();
        // A rebuild in place runs online too (docs/online-ddl.md, "Table rebuilds"), but
        // for the cases below; they exclude writers throughout.
        // An AUTO_INCREMENT column added, or made one: the copy numbers the rows, which
        // the log's replays would not keep.
        let added_auto =
            spec.auto_increment
                .is_some_and(|a| match w.cols.get(a).and_then(|c| c.src) {
                    None => true,
                    src => src != def.auto_increment,
                });
        let online_rebuild = need == Alg::Inplace
            && !copy_asked
            && w.lock != LockReq::Blocking
            && rename_to.is_none()
            && self.locked.is_none()
            && mdl.is_some()
            && edb != TEMP_DB
            && !added_auto
            && !w.check_added;
        if w.lock == LockReq::None
            && need > Alg::Instant
            && !online
            && !drops_only
            && !online_rebuild
        {
            // MariaDB checks an added constraint by a copy, and names no reason (1845).
            if w.check_added && w.copy.is_none() {
                return Err(SqlError::AlterAlgorithmNotSupported {
                    what: "LOCK=NONE".into(),
                    try_: "LOCK=SHARED".into(),
                });
            }
            // Every other change but an instant one excludes writers (the metadata lock).
            let reason = match w.copy {
                Some(r) => r.to_string(),
                // MariaDB's reason (ER_ALTER_OPERATION_NOT_SUPPORTED_REASON_AUTOINC).
                None if rebuild && added_auto => {
                    "Adding an auto-increment column requires a lock".into()
                }
                None if rebuild => {
                    "Quire does not log concurrent changes during this rebuild".into()
                }
                None => "Quire does not log concurrent changes for this operation".into(),
            };
            return Err(SqlError::AlterNotSupported {
                what: "LOCK=NONE".into(),
                reason,
                try_: "LOCK=SHARED".into(),
            });
        }
        // After ALGORITHM= and LOCK=, as MariaDB checks them first.
        self.check_foreign_key_indexes(edb, etable, &def, &w)?;
        let copy = copy_asked || need == Alg::Copy;
        let mut records = 0;
        let mut mdl = mdl;
        if let (true, Some(x)) = (online, mdl.as_deref_mut()) {
            // One after the other (several only under ALGORITHM=NOCOPY; otherwise they go
            // through an online rebuild); a build that fails drops the ones before it.
            let mut done: Vec<String> = Vec::new();
            for a in &added {
                let ix = spec
                    .indexes
                    .iter()
                    .find(|i| i.name == a.name)
                    .cloned()
                    .ok_or_else(|| SqlError::Unsupported("index".into()))?;
                if let Err(e) = self.add_index_online(edb, etable, ix, x) {
                    for d in &done {
                        let _ = self.inst.db.drop_index(edb, etable, d);
                    }
                    return Err(e);
                }
                done.push(a.name.clone());
            }
        } else if rebuild || copy {
            let online = if online_rebuild && !copy { mdl } else { None };
            records = self.rebuild(db, table, edb, etable, &def, &w, spec, online)?;
        } else {
            // Instant and in-place changes: drops, names and defaults; or adds alone (an
            // add that fails undoes the adds before it).
            if w.meta || instant_cols.is_some() {
                // One catalog record update, index drops included.
                let sources: Vec<Option<usize>> = w.cols.iter().map(|c| c.src).collect();
                let changed = instant_definition(&def, &w, &sources, instant_cols);
                self.inst
                    .db
                    .alter_definition(edb, etable, changed, &sources)?;
            } else {
                for name in &dropped {
                    self.inst.db.drop_index(edb, etable, name)?;
                }
            }
            let mut done: Vec<String> = Vec::new();
            for a in &added {
                let ix = spec
                    .indexes
                    .iter()
                    .find(|i| i.name == a.name)
                    .cloned()
                    .ok_or_else(|| SqlError::Unsupported("index".into()))?;
                if let Err(e) = self.inst.db.create_index(edb, etable, ix) {
                    for d in &done {
                        let _ = self.inst.db.drop_index(edb, etable, d);
                    }
                    return Err(index_error(e));
                }
                done.push(a.name.clone());
            }
        }
        if let Some(n) = w.auto_increment {
            self.inst.db.set_auto_increment(edb, etable, n)?;
        }
        if let Some((to_db, to)) = rename_to {
            if (to_db.as_str(), to.as_str()) != (db, table) {
                if self.inst.db.view(&to_db, &to).is_some()
                    || self.inst.db.table(&to_db, &to).is_ok()
                {
                    return Err(SqlError::TableExists(to));
                }
                self.inst
                    .db
                    .rename_table(db, table, &to_db, &to)
                    .map_err(|e| match e {
                        DbError::TableExists(_) => SqlError::TableExists(to.clone()),
                        e => e.into(),
                    })?;
            }
        }
        let warnings = self.sv.diag.get_mut().statement_count();
        let shown = if copy { records } else { 0 };
        Ok(Outcome::Ok {
            affected_rows: shown,
            last_insert_id: 0,
            info: format!("Records: {shown}  Duplicates: 0  Warnings: {warnings}"),
        })
    }

    /// Builds index `spec` on `db`.`table` online (docs/online-ddl.md): with the exclusive
    /// metadata lock `x` held on entry (so no transaction that used the table is open), the
    /// build starts; the lock is downgraded while the rows are read and the log of
    /// concurrent changes is applied, then upgraded again (waiting for the transactions
    /// open on the table) for the last part of the log and the catalog switch. Progress
    /// goes to SHOW PROCESSLIST; KILL stops the build, leaving the table as it was.
    pub(crate) fn add_index_online(
        &mut self,
        db: &str,
        table: &str,
        spec: IndexSpec,
        x: &mut crate::mdl::Exclusive<'d>,
    ) -> Result<()> {
        use std::sync::atomic::Ordering;
        let opts = self.online_options();
        let mut b = self
            .inst
            .db
            .begin_online_index(db, table, spec, opts)
            .map_err(index_error)?;
        x.downgrade();
        self.info.set_state(ONLINE_STATE);
        let info = self.info.clone();
        // The engine keeps no row count to measure the scan against: Progress moves by
        // phase (the scan done: 90%, the log caught up: 95%).
        let mut progress = |_: u64| !info.interrupt.load(Ordering::Acquire);
        b.scan(&mut progress).map_err(index_error)?;
        self.info.progress.store(90_000, Ordering::Relaxed);
        b.catch_up().map_err(index_error)?;
        self.info.progress.store(95_000, Ordering::Relaxed);
        self.upgrade_to_finish(x)?;
        b.finish().map_err(index_error)?;
        self.info.progress.store(0, Ordering::Relaxed);
        Ok(())
    }

    /// The bounds of an online build's row log (`innodb_online_alter_log_max_size`).
    fn online_options(&self) -> quire_engine::table::OnlineOptions {
        quire_engine::table::OnlineOptions {
            log_max_size: self.inst.db.settings().online_alter_log_max_size,
            ..Default::default()
        }
    }

    /// The end of an online build or rebuild: upgrades the metadata lock `x` back to
    /// exclusive, waiting (State "Waiting for table metadata lock", `lock_wait_timeout`,
    /// KILL) for the transactions open on the table, then shows the commit stage.
    fn upgrade_to_finish(&self, x: &mut crate::mdl::Exclusive<'d>) -> Result<()> {
        let secs = self.mdl_timeout();
        let timeout = move || secs;
        let info = self.info.clone();
        let waiting = |on: bool| {
            info.set_state(if on {
                crate::run::MDL_WAIT_STATE
            } else {
                ONLINE_STATE
            })
        };
        let wait = crate::mdl::Wait {
            timeout: &timeout,
            interrupt: &info.interrupt,
            waiting: &waiting,
        };
        x.upgrade(&wait)?;
        self.info.set_state(COMMIT_STATE);
        Ok(())
    }

    /// 1553 when the new definition leaves a foreign key of the table (as child, or as
    /// parent) without an index whose leading columns are the constraint's, naming the old
    /// index that served it, as MariaDB refuses DROP INDEX or DROP COLUMN then. Columns are
    /// compared as the old columns they are, so a rename keeps its index.
    fn check_foreign_key_indexes(
        &self,
        db: &str,
        table: &str,
        def: &TableDef,
        w: &Work,
    ) -> Result<()> {
        let old_col = |name: &str| {
            def.columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(name))
        };
        let new_src = |name: &str| w.position(name).and_then(|j| w.cols[j].src);
        let leads = |key: &[Option<usize>], cols: &[Option<usize>]| {
            key.len() >= cols.len() && key[..cols.len()] == *cols
        };
        // The keys of the new definition, as old column indices (None: a new column).
        let mut new_keys: Vec<Vec<Option<usize>>> = vec![w.pk.iter().map(|n| new_src(n)).collect()];
        for ix in &w.indexes {
            let whole = ix.parts.iter().take_while(|p| p.1.is_none());
            new_keys.push(whole.map(|p| new_src(&p.0)).collect());
        }
        let mut needs: Vec<Vec<String>> = self
            .inst
            .db
            .foreign_keys(db, table)?
            .into_iter()
            .map(|f| f.columns)
            .collect();
        needs.extend(
            self.inst
                .db
                .referencing(db, table)
                .into_iter()
                .map(|(_, _, f)| f.parent_columns),
        );
        for cols in needs {
            let cols: Vec<Option<usize>> = cols.iter().map(|c| old_col(c)).collect();
            if cols.iter().any(Option::is_none) || new_keys.iter().any(|k| leads(k, &cols)) {
                continue;
            }
            // The old index that served it: the primary key, else the first that led.
            let pk: Vec<Option<usize>> = def.primary_key.iter().map(|&c| Some(c)).collect();
            let name = if leads(&pk, &cols) {
                "PRIMARY".to_string()
            } else {
                def.indexes
                    .iter()
                    .find(|ix| {
                        let k: Vec<Option<usize>> = ix
                            .columns
                            .iter()
                            .take_while(|c| c.prefix.is_none())
                            .map(|c| Some(c.column))
                            .collect();
                        leads(&k, &cols)
                    })
                    .map_or_else(String::new, |ix| ix.name.clone())
            };
            return Err(SqlError::FkIndexNeeded(name));
        }
        Ok(())
    }

    /// The working copy of `def`.
    fn work_of(&self, def: &TableDef) -> Work {
        let collation = crate::types::table_collation(def);
        Work {
            table: def.name.clone(),
            cols: def
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| WCol {
                    col: c.clone(),
                    src: Some(i),
                    convert: false,
                })
                .collect(),
            pk: def
                .primary_key
                .iter()
                .map(|&c| def.columns[c].name.clone())
                .collect(),
            auto: def.auto_increment.map(|c| def.columns[c].name.clone()),
            indexes: def
                .indexes
                .iter()
                .map(|ix| WIndex {
                    name: ix.name.clone(),
                    unique: ix.unique,
                    parts: ix
                        .columns
                        .iter()
                        .map(|c| (def.columns[c.column].name.clone(), c.prefix, c.descending))
                        .collect(),
                    old: Some(ix.name.clone()),
                    comment: ix.comment.clone(),
                })
                .collect(),
            collation,
            comment: def.comment.clone(),
            checks: def.checks.clone(),
            check_added: false,
            pending_checks: Vec::new(),
            copy: None,
            rebuild: false,
            meta: false,
            reshaped: false,
            auto_increment: None,
            algorithm: None,
            lock: LockReq::Default,
            pk_dropped: false,
            pk_added: false,
        }
    }

    /// A new column definition's CHECKs (ADD COLUMN), bound against the columns once the
    /// column is placed: column checks named after it, the rows checked (a rebuild).
    fn column_checks(&self, w: &mut Work, name: &str, checks: &[sql::Expr]) -> Result<()> {
        let cols: Vec<Column> = w.cols.iter().map(|c| c.col.clone()).collect();
        for e in checks {
            let text = crate::check::prepare(e, name, "", &w.table, &cols)?;
            crate::check::push(
                &mut w.checks,
                quire_engine::catalog::CheckDef {
                    name: name.to_string(),
                    column_level: true,
                    expr: text,
                },
            )?;
            w.check_added = true;
            w.meta = true;
        }
        Ok(())
    }

    /// CHANGE / MODIFY's checks, added once the new column is in place (`pending_checks`).
    fn column_checks_later(&self, w: &mut Work, name: &str, checks: Vec<sql::Expr>) {
        for e in checks {
            w.pending_checks.push((name.to_string(), e));
        }
    }

    fn apply(&self, w: &mut Work, op: Op) -> Result<()> {
        match op {
            Op::AddColumn {
                name,
                data_type,
                options,
                pos,
                if_not_exists,
            } => {
                if w.position(&name).is_some() {
                    if if_not_exists {
                        self.warn_now(
                            Level::Note,
                            1060,
                            SqlError::DuplicateColumn(name).to_string(),
                        );
                        return Ok(());
                    }
                    return Err(SqlError::DuplicateColumn(name));
                }
                let p = self.column_def(&name, &data_type, options.iter(), w.collation)?;
                w.place(
                    WCol {
                        col: p.column,
                        src: None,
                        convert: true,
                    },
                    pos.as_ref(),
                )?;
                self.key_options(w, &name, p.primary, p.unique, p.auto)?;
                self.column_checks(w, &name, &p.checks)?;
                // A plain column may be added instantly anywhere (`instant_columns` decides
                // once the whole statement is known); a key or AUTO_INCREMENT rebuilds.
                if p.primary || p.unique || p.auto {
                    w.rebuild = true;
                }
                w.reshaped = true;
            }
            Op::DropColumn { name, if_exists } => match w.position(&name) {
                Some(i) => w.drop_column(i),
                None if if_exists => self.warn_now(
                    Level::Note,
                    1091,
                    SqlError::CantDropColumn(name).to_string(),
                ),
                None => return Err(SqlError::CantDropColumn(name)),
            },
            Op::Change {
                old,
                new,
                data_type,
                options,
                pos,
            } => {
                let i = w.position(&old).ok_or_else(|| w.unknown(&old))?;
                if !new.eq_ignore_ascii_case(&old) && w.position(&new).is_some() {
                    return Err(SqlError::DuplicateColumn(new));
                }
                let p = self.column_def(&new, &data_type, options.iter(), w.collation)?;
                let was = w.cols.remove(i);
                let was_auto = w
                    .auto
                    .as_deref()
                    .is_some_and(|a| a.eq_ignore_ascii_case(&old));
                w.rename_in_keys(&old, &new);
                // The new definition replaces the column's own checks (MariaDB's).
                let before = w.checks.len();
                w.checks
                    .retain(|c| !(c.column_level && c.name.eq_ignore_ascii_case(&new)));
                if w.checks.len() != before {
                    w.meta = true;
                }
                let checks = p.checks.clone();
                if was_auto && !p.auto {
                    // MODIFY without AUTO_INCREMENT takes it away, as in MariaDB.
                    w.auto = None;
                }
                self.column_checks_later(w, &new, checks);
                // UNSIGNED and (M,D) on a FLOAT, DOUBLE or DECIMAL change the values a
                // column keeps; an integer's display width and ZEROFILL do not.
                let same_type = p.column.ty == was.col.ty
                    && p.column.collation == was.col.collation
                    && p.column.members == was.col.members
                    && p.column.json == was.col.json
                    && p.column.unsigned == was.col.unsigned
                    && p.column.digits == was.col.digits;
                if !same_type {
                    w.copy = w.copy.or(Some("Cannot change column type"));
                }
                let same_shape = same_type
                    && p.column.nullable == was.col.nullable
                    && was_auto == p.auto
                    && !p.primary
                    && !p.unique;
                let nullable_changed = p.column.nullable != was.col.nullable;
                let col = WCol {
                    col: p.column,
                    src: was.src,
                    convert: was.convert || !same_type || nullable_changed,
                };
                if same_shape {
                    // Renamed, a new default, or moved (FIRST / AFTER): instant.
                    match pos {
                        None => w.cols.insert(i, col),
                        Some(p) => {
                            w.place(col, Some(&p))?;
                            w.reshaped = true;
                        }
                    }
                    w.meta = true;
                } else {
                    match pos {
                        None => w.cols.insert(i, col),
                        Some(p) => w.place(col, Some(&p))?,
                    }
                    w.rebuild = true;
                }
                self.key_options(w, &new, p.primary, p.unique, p.auto)?;
            }
            Op::RenameColumn { from, to } => {
                let i = w.position(&from).ok_or_else(|| w.unknown(&from))?;
                if !to.eq_ignore_ascii_case(&from) && w.position(&to).is_some() {
                    return Err(SqlError::DuplicateColumn(to));
                }
                w.cols[i].col.name = to.clone();
                w.rename_in_keys(&from, &to);
                w.meta = true;
            }
            Op::Default { column, value } => {
                let i = w.position(&column).ok_or_else(|| w.unknown(&column))?;
                let c = &w.cols[i].col;
                let d = match value {
                    Some(e) => Some(self.default_literal(&e, c)?),
                    None => None,
                };
                if d.as_deref() == Some("NULL") && !c.nullable {
                    return Err(SqlError::InvalidDefault(c.name.clone()));
                }
                w.cols[i].col.default = d;
                w.meta = true;
            }
            Op::AddIndex {
                name,
                unique,
                primary,
                columns,
                comment,
            } => {
                let cols: Vec<Column> = w.cols.iter().map(|c| c.col.clone()).collect();
                let parts = crate::ddl::index_columns(&columns, &cols).map_err(|e| match e {
                    SqlError::UnknownColumn { column, .. } => SqlError::KeyColumnMissing(column),
                    e => e,
                })?;
                if primary {
                    w.add_primary(parts.iter().map(|p| cols[p.column].name.clone()).collect())?;
                    return Ok(());
                }
                let name = match name {
                    Some(n) => {
                        if n.eq_ignore_ascii_case("PRIMARY")
                            || w.indexes.iter().any(|i| i.name.eq_ignore_ascii_case(&n))
                        {
                            return Err(SqlError::DuplicateKeyName(n));
                        }
                        n
                    }
                    None => w.index_name(&cols[parts[0].column].name),
                };
                let comment = self.checked_comment(comment, "index", &name)?;
                w.indexes.push(WIndex {
                    name,
                    unique,
                    parts: parts
                        .iter()
                        .map(|p| (cols[p.column].name.clone(), p.prefix, p.descending))
                        .collect(),
                    old: None,
                    comment,
                });
            }
            Op::DropIndex { name, if_exists } => {
                if name.eq_ignore_ascii_case("PRIMARY") {
                    return self.apply(w, Op::DropPrimary);
                }
                match w
                    .indexes
                    .iter()
                    .position(|i| i.name.eq_ignore_ascii_case(&name))
                {
                    Some(i) => {
                        w.indexes.remove(i);
                    }
                    None if if_exists => {
                        self.warn_now(Level::Note, 1091, SqlError::CantDropKey(name).to_string())
                    }
                    None => return Err(SqlError::CantDropKey(name)),
                }
            }
            Op::DropPrimary => {
                if w.pk.is_empty() {
                    return Err(SqlError::CantDropKey("PRIMARY".into()));
                }
                w.pk.clear();
                w.pk_dropped = true;
                w.rebuild = true;
            }
            Op::RenameIndex { from, to } => {
                let i = w
                    .indexes
                    .iter()
                    .position(|i| i.name.eq_ignore_ascii_case(&from))
                    .ok_or_else(|| SqlError::KeyDoesNotExist {
                        key: from.clone(),
                        table: w.table.clone(),
                    })?;
                if !to.eq_ignore_ascii_case(&from)
                    && (to.eq_ignore_ascii_case("PRIMARY")
                        || w.indexes.iter().any(|x| x.name.eq_ignore_ascii_case(&to)))
                {
                    return Err(SqlError::DuplicateKeyName(to));
                }
                w.indexes[i].name = to;
                w.meta = true;
            }
            // Done after the rest (`alter_locked`).
            Op::RenameTable(_) => {}
            Op::AutoIncrement(n) => w.auto_increment = Some(n),
            Op::Algorithm(a) => w.algorithm = a,
            Op::Lock(l) => w.lock = l,
            Op::Force => w.rebuild = true,
            Op::Charset { charset, collation } => {
                w.collation = crate::bind::column_collation(
                    charset.as_deref(),
                    collation.as_deref(),
                    Collation::Utf8mb4GeneralCi,
                )?;
                // The table's default is catalog data: an instant record update, as in
                // MariaDB (existing columns keep theirs).
                w.meta = true;
            }
            Op::ConvertTo { charset, collation } => {
                // `DEFAULT` is the server's (Quire keeps no database default).
                let charset = charset.filter(|c| !c.eq_ignore_ascii_case("default"));
                let to = crate::bind::column_collation(
                    Some(charset.as_deref().unwrap_or("utf8mb4")),
                    collation.as_deref(),
                    Collation::Utf8mb4GeneralCi,
                )?;
                for c in &mut w.cols {
                    if !c.col.ty.is_string() || c.col.collation == to {
                        continue;
                    }
                    c.col.ty = converted_text_type(c.col.ty, c.col.collation, to);
                    c.col.collation = to;
                    c.convert = true;
                    w.copy = w.copy.or(Some("Cannot change column type"));
                }
                w.collation = to;
                w.meta = true;
            }
            Op::Accepted => {}
            Op::Comment(c) => {
                w.comment = self.checked_comment(c, "table", &w.table)?;
                w.meta = true;
            }
            Op::AddCheck { name, expr } => {
                let name = name.unwrap_or_else(|| crate::check::next_name(&w.checks));
                let cols: Vec<Column> = w.cols.iter().map(|c| c.col.clone()).collect();
                let text = crate::check::prepare(&expr, &name, "", &w.table, &cols)?;
                crate::check::push(
                    &mut w.checks,
                    quire_engine::catalog::CheckDef {
                        name,
                        column_level: false,
                        expr: text,
                    },
                )?;
                w.check_added = true;
                w.meta = true;
            }
            Op::DropConstraint(name) => {
                let i = w
                    .checks
                    .iter()
                    .position(|c| c.name.eq_ignore_ascii_case(&name))
                    .ok_or(SqlError::CantDropConstraint(name))?;
                w.checks.remove(i);
                w.meta = true;
            }
        }
        Ok(())
    }

    /// PRIMARY KEY, UNIQUE and AUTO_INCREMENT written on a column being added or changed.
    fn key_options(
        &self,
        w: &mut Work,
        name: &str,
        primary: bool,
        unique: bool,
        auto: bool,
    ) -> Result<()> {
        if primary {
            w.add_primary(vec![name.to_string()])?;
        }
        if unique {
            let n = w.index_name(name);
            w.indexes.push(WIndex {
                name: n,
                unique: true,
                parts: vec![(name.to_string(), None, false)],
                old: None,
                comment: String::new(),
            });
        }
        if auto {
            if w.auto
                .as_deref()
                .is_some_and(|a| !a.eq_ignore_ascii_case(name))
            {
                return Err(SqlError::WrongAutoKey);
            }
            w.auto = Some(name.to_string());
            if let Some(i) = w.position(name) {
                w.cols[i].col.nullable = false;
            }
            w.rebuild = true;
        }
        Ok(())
    }

    /// Copies the rows into the new definition (`Db::rebuild_table`); returns how many.
    // Each argument is a separate input of the copy (names, old and new definitions, the
    // column map, the mode); a struct would only rename them.
    #[allow(clippy::too_many_arguments)]
    /// With `online` (the exclusive metadata lock, held) the copy runs online
    /// (`rebuild_online`).
    fn rebuild(
        &mut self,
        db: &str,
        table: &str,
        edb: &str,
        etable: &str,
        old: &TableDef,
        w: &Work,
        spec: TableSpec,
        online: Option<&mut crate::mdl::Exclusive<'d>>,
    ) -> Result<u64> {
        let strict = self.sv.mode.strict();
        // Each added column's value: its DEFAULT evaluated once, or NULL / the implicit
        // default; an added AUTO_INCREMENT column numbers the rows.
        let mut fill: Vec<Option<Value>> = Vec::new();
        for c in &w.cols {
            fill.push(match (c.src, &c.col.default) {
                (Some(_), _) => None,
                (None, Some(text)) => Some(self.eval_default(text, &c.col)?),
                (None, None) if c.col.nullable => Some(Value::Null),
                (None, None) => Some(crate::exec::implicit_default(&c.col)),
            });
        }
        let auto = spec.auto_increment;
        let added_auto = auto.filter(|&a| w.cols[a].src.is_none());
        let next = w.auto_increment;
        self.info.set_state(COPY_STATE);
        let env = crate::run::ExecEnv::new(&[], &self.sv, self.inst, false, strict);
        let cols: Vec<Column> = spec.columns.clone();
        // The new definition's checks, on every copied row (a failure stops the ALTER).
        let mut checked = old.clone();
        checked.columns = cols.clone();
        checked.checks = spec.checks.clone();
        let checks = crate::check::bind(&checked, table)?;
        let mut n = 0u64;
        // Rows are converted in the session's zone (a TIMESTAMP read as a local time, a
        // DATETIME made a TIMESTAMP taken as one, as MariaDB's copy) and written back with
        // UTC TIMESTAMPs (`tz.rs`).
        let zone = crate::expr::Env::time_zone(&env);
        let (read_zone, write_zone) = (
            crate::tz::RowZone::new(&old.columns, zone),
            crate::tz::RowZone::new(&cols, zone),
        );
        let mut convert = |mut row: Vec<Value>| -> Result<Vec<Value>> {
            n += 1;
            read_zone.from_storage(&mut row);
            // MariaDB's ALTER says 1265 "Data truncated" for a string cut, strict or not
            // (strict makes it the error): the INSERT-only 1406 is not used.
            let at = types::Target {
                db,
                table,
                row: n,
                strict,
                cut_as_truncation: true,
            };
            let mut out = Vec::with_capacity(cols.len());
            for (i, c) in w.cols.iter().enumerate() {
                let col = &cols[i];
                let v = match (c.src, &fill[i]) {
                    _ if added_auto == Some(i) => Value::Int(n as i64),
                    // A YEAR read as text is four digits (the zero year is '0000').
                    (Some(s), _) => match row.get(s) {
                        Some(Value::UInt(y))
                            if col.ty.is_string()
                                && old.columns.get(s).is_some_and(|o| o.ty == ColumnType::Year) =>
                        {
                            Value::Str(format!("{y:04}"))
                        }
                        // A TIME read as text has its column's fractional digits.
                        Some(Value::Time(t)) if col.ty.is_string() => {
                            let fsp = match old.columns.get(s).map(|o| o.ty) {
                                Some(ColumnType::Time { fsp }) => fsp,
                                _ => crate::func::time::natural_fsp(*t),
                            };
                            Value::Str(crate::func::time::text(*t, fsp))
                        }
                        // A string becomes a BIT as the number it is (1292 if it is not
                        // one), where an INSERT would store its bytes: MariaDB's field copy.
                        Some(Value::Str(text)) if matches!(col.ty, ColumnType::Bit { .. }) => {
                            let n = crate::func::cast::str_to_int(text, &env);
                            crate::func::take_raised()?;
                            Value::Int(n as i64)
                        }
                        v => v.cloned().unwrap_or(Value::Null),
                    },
                    (None, Some(v)) => v.clone(),
                    (None, None) => Value::Null,
                };
                let v = if c.convert || c.src.is_none() {
                    types::coerce(v, col, &at, &env)?
                } else {
                    v
                };
                let v = if matches!(v, Value::Null) && !col.nullable && auto != Some(i) {
                    // A NULL into a NOT NULL column: MariaDB's ALTER says 1265 (an error
                    // when strict) and stores the implicit default.
                    crate::expr::Env::warn(
                        &env,
                        Level::Warning,
                        1265,
                        format!("Data truncated for column '{}' at row {n}", col.name),
                    )?;
                    crate::exec::implicit_default(col)
                } else {
                    v
                };
                out.push(v);
            }
            crate::check::enforce(&checks, &out, &env, false, db, table)?;
            write_zone.to_storage(&mut out);
            Ok(out)
        };
        let started = std::time::Instant::now();
        let r = match online {
            Some(x) => {
                let alike = keyed_alike(old, w, &spec);
                self.rebuild_online(edb, etable, (spec, alike), next, &mut convert, x)
            }
            None => self.inst.db.rebuild_table(
                edb,
                etable,
                spec,
                next,
                &mut convert,
                &mut |rows| {
                    tracing::info!(table = %format!("{db}.{table}"), rows, "ALTER TABLE copying");
                },
            ),
        };
        let rebuilt = r.map_err(|e| match e {
            SqlError::Engine(DbError::DuplicateKey { index, entry }) => SqlError::DuplicateKey {
                value: entry,
                key: index,
            },
            e => e,
        })?;
        tracing::info!(
            table = %format!("{db}.{table}"),
            rows = rebuilt.rows,
            ms = started.elapsed().as_millis() as u64,
            old_columns = old.columns.len(),
            "ALTER TABLE rebuilt the table"
        );
        Ok(rebuilt.rows)
    }

    /// Rebuilds `db`.`table` online (docs/online-ddl.md, "Table rebuilds"), as
    /// `add_index_online` builds an index: with the exclusive metadata lock `x` held on
    /// entry the rebuild starts; the lock is downgraded while the rows are copied and the
    /// log of concurrent changes is applied, then upgraded again (waiting for the
    /// transactions open on the table) for the last part of the log and the switch.
    /// Progress goes to SHOW PROCESSLIST; KILL stops it, leaving the table as it was.
    fn rebuild_online(
        &self,
        db: &str,
        table: &str,
        (spec, keyed_alike): (TableSpec, bool),
        auto_increment: Option<u64>,
        convert: &mut dyn FnMut(Vec<Value>) -> Result<Vec<Value>>,
        x: &mut crate::mdl::Exclusive<'d>,
    ) -> Result<quire_engine::table::Rebuilt> {
        use std::sync::atomic::Ordering;
        let opts = self.online_options();
        // The row count the scan is measured against (an estimate: rows change meanwhile).
        let estimate = self
            .inst
            .db
            .table(db, table)
            .and_then(|t| t.statistics())
            .map(|s| s.rows.max(1))
            .unwrap_or(1);
        let mut b = self.inst.db.begin_online_rebuild(
            db,
            table,
            spec,
            keyed_alike,
            auto_increment,
            opts,
        )?;
        x.downgrade();
        self.info.set_state(ONLINE_STATE);
        let info = self.info.clone();
        // Progress: the copy up to 90% by the estimate, the log caught up 95%.
        let mut progress = |n: u64| {
            let p = (n.min(estimate) * 90_000 / estimate) as u32;
            info.progress.store(p, Ordering::Relaxed);
            !info.interrupt.load(Ordering::Acquire)
        };
        b.scan(convert, &mut progress)?;
        self.info.progress.store(90_000, Ordering::Relaxed);
        b.catch_up(convert)?;
        self.info.progress.store(95_000, Ordering::Relaxed);
        self.upgrade_to_finish(x)?;
        let r = b.finish(convert)?;
        self.info.progress.store(0, Ordering::Relaxed);
        Ok(r)
    }

    /// An added column's DEFAULT (the catalog's text) as a value.
    /// The new columns when the statement can change them without a rebuild (MariaDB's
    /// instant ADD, DROP and reordering of columns): kept columns unconverted, in any
    /// order; added ones anywhere, in no key or index and not AUTO_INCREMENT, each with
    /// the value the rows already in the table read for it (`Column::instant`: what a
    /// rebuild would have stored, the DEFAULT evaluated once, NULL or the implicit
    /// default); dropped ones in no key (`Work::drop_column` asks for a rebuild
    /// otherwise). Column `j` is the old column `w.cols[j].src`. `None`: rebuild.
    fn instant_columns(
        &self,
        def: &TableDef,
        w: &Work,
        spec: &TableSpec,
    ) -> Result<Option<Vec<Column>>> {
        let unconverted = w.cols.iter().all(|c| c.src.is_none() || !c.convert);
        let new_in_key = (0..w.cols.len()).any(|c| {
            w.cols[c].src.is_none()
                && (spec.primary_key.contains(&c)
                    || spec.auto_increment == Some(c)
                    || spec
                        .indexes
                        .iter()
                        .any(|ix| ix.columns.iter().any(|p| p.column == c)))
        });
        // Index adds in the same statement take the index paths, which know nothing of
        // new columns: such a statement rebuilds. Drops (an index of a dropped column
        // alone) are done before the definition changes.
        let same_indexes =
            w.indexes.iter().all(|i| i.old.is_some()) && !w.pk_dropped && !w.pk_added;
        if w.rebuild || w.copy.is_some() || !unconverted || new_in_key || !same_indexes {
            return Ok(None);
        }
        let env = crate::run::ExecEnv::new(&[], &self.sv, self.inst, false, false);
        let mut out = Vec::new();
        for (wc, col) in w.cols.iter().zip(&spec.columns) {
            if let Some(i) = wc.src {
                // Kept: the old column with its new name and default (its bytes unchanged).
                let Some(old) = def.columns.get(i) else {
                    return Ok(None);
                };
                out.push(Column {
                    name: col.name.clone(),
                    default: col.default.clone(),
                    on_update: col.on_update,
                    comment: col.comment.clone(),
                    display: col.display,
                    zerofill: col.zerofill,
                    ..old.clone()
                });
                continue;
            }
            let v = match &col.default {
                Some(text) => self.eval_default(text, col)?,
                None if col.nullable => Value::Null,
                None => crate::exec::implicit_default(col),
            };
            let at = types::Target {
                db: &def.db,
                table: &def.name,
                row: 0,
                strict: false,
                cut_as_truncation: false,
            };
            let v = types::coerce(v, col, &at, &env)?;
            // Rows written before keep the instant, as the engine holds it (`tz.rs`).
            let v = crate::tz::default_to_storage(col, crate::expr::Env::time_zone(&env), v);
            let instant = match v {
                Value::Null if col.nullable => quire_engine::row::InstantValue::Null,
                Value::Null => quire_engine::row::InstantValue::Field(
                    quire_engine::row::record::encode_field(
                        col,
                        &crate::exec::implicit_default(col),
                    )
                    .map_err(DbError::from)?,
                ),
                v => match quire_engine::row::record::encode_field(col, &v) {
                    Ok(b) if b.len() <= u16::MAX as usize => {
                        quire_engine::row::InstantValue::Field(b)
                    }
                    // Too long for the catalog, or not storable as it is: a rebuild says why.
                    _ => return Ok(None),
                },
            };
            out.push(Column {
                instant: Some(instant),
                ..col.clone()
            });
        }
        Ok(Some(out))
    }

    /// `col`'s DEFAULT `text` evaluated, in the session's zone (`tz::default_expr`).
    fn eval_default(&self, text: &str, col: &Column) -> Result<Value> {
        let e = crate::parse::parse_expr_in(text, self.sv.mode)?;
        let b = crate::bind::Binder {
            sub: None,
            scope: None,
            params: &Default::default(),
            aggs: None,
            context: "VALUES",
            conn: self.sv.conn(),
        }
        .bind(&e)?;
        let b = crate::tz::default_expr(col, b);
        let env = crate::run::ExecEnv::new(&[], &self.sv, self.inst, false, false);
        b.eval(
            &Row {
                values: &[],
                aggs: &[],
            },
            &env,
        )
    }
}

/// The engine's spec of the working definition (positions from names).
fn spec_of(w: &Work) -> Result<TableSpec> {
    let pos = |n: &str| {
        w.position(n)
            .ok_or_else(|| SqlError::KeyColumnMissing(n.to_string()))
    };
    let columns: Vec<Column> = w.cols.iter().map(|c| c.col.clone()).collect();
    let pk = w.pk.iter().map(|n| pos(n)).collect::<Result<Vec<_>>>()?;
    let mut indexes = Vec::new();
    for ix in &w.indexes {
        let mut cols = Vec::new();
        for (n, prefix, desc) in &ix.parts {
            cols.push(IndexColumn {
                column: pos(n)?,
                prefix: *prefix,
                descending: *desc,
            });
        }
        indexes.push(IndexSpec {
            name: ix.name.clone(),
            columns: cols,
            unique: ix.unique,
            comment: ix.comment.clone(),
        });
    }
    let auto = w.auto.as_deref().map(pos).transpose()?;
    if let Some(a) = auto {
        let keyed = pk.first() == Some(&a)
            || indexes.iter().any(|ix| {
                ix.columns
                    .first()
                    .is_some_and(|c| c.column == a && !c.descending && c.prefix.is_none())
            });
        if !keyed || !matches!(columns[a].ty, ColumnType::Int { .. }) {
            return Err(SqlError::WrongAutoKey);
        }
    }
    let kept = quire_engine::catalog::kept_collation(w.collation, &columns);
    let mut spec = TableSpec::new(columns, pk);
    spec.auto_increment = auto;
    spec.indexes = indexes;
    spec.comment = w.comment.clone();
    spec.checks = w.checks.clone();
    spec.collation = kept;
    crate::ddl::check_key_lengths(&mut spec, false)?;
    Ok(spec)
}

/// The table's definition `now` with the working copy's names and defaults (instant).
/// The definition an instant ALTER gives the table: `now` with the columns `columns`
/// (default: `now`'s, renamed and with new defaults from `w`), column `j` being the old
/// column `sources[j]`; keys and indexes follow their columns, and the indexes take their
/// new names.
fn instant_definition(
    now: &TableDef,
    w: &Work,
    sources: &[Option<usize>],
    columns: Option<Vec<Column>>,
) -> TableDef {
    let mut def = now.clone();
    def.columns = columns.unwrap_or_else(|| {
        sources
            .iter()
            .zip(&w.cols)
            .filter_map(|(src, wc)| {
                let old = now.columns.get((*src)?)?;
                Some(Column {
                    name: wc.col.name.clone(),
                    default: wc.col.default.clone(),
                    on_update: wc.col.on_update,
                    comment: wc.col.comment.clone(),
                    display: wc.col.display,
                    zerofill: wc.col.zerofill,
                    ..old.clone()
                })
            })
            .collect()
    });
    def.comment = w.comment.clone();
    def.checks = w.checks.clone();
    def.collation = quire_engine::catalog::kept_collation(w.collation, &def.columns);
    let moved = |c: usize| sources.iter().position(|s| *s == Some(c)).unwrap_or(c);
    for c in &mut def.primary_key {
        *c = moved(*c);
    }
    // A dropped AUTO_INCREMENT column takes the attribute with it.
    def.auto_increment = now
        .auto_increment
        .and_then(|c| sources.iter().position(|s| *s == Some(c)));
    // Indexes the statement dropped go with this definition (alter_definition drops them).
    def.indexes
        .retain(|ix| w.indexes.iter().any(|i| i.old.as_deref() == Some(&ix.name)));
    for ix in &mut def.indexes {
        for c in &mut ix.columns {
            c.column = moved(c.column);
        }
        if let Some(wi) = w
            .indexes
            .iter()
            .find(|i| i.old.as_deref() == Some(&ix.name))
        {
            ix.name = wi.name.clone();
        }
    }
    def
}

/// Whether each primary-key column of the rebuilt table `spec` is the old one at its
/// place, unconverted (the online rebuild then needs no key map), or both tables are
/// clustered on DB_ROW_ID.
fn keyed_alike(old: &TableDef, w: &Work, spec: &TableSpec) -> bool {
    old.primary_key.len() == spec.primary_key.len()
        && old
            .primary_key
            .iter()
            .zip(&spec.primary_key)
            .all(|(&o, &n)| {
                w.cols
                    .get(n)
                    .is_some_and(|c| c.src == Some(o) && !c.convert)
            })
}

fn index_error(e: DbError) -> SqlError {
    match e {
        DbError::IndexExists { index, .. } => SqlError::DuplicateKeyName(index),
        DbError::DuplicateKey { index, entry } => SqlError::DuplicateKey {
            value: entry,
            key: index,
        },
        e => e.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statement_splits_into_name_and_operations() {
        let (n, rest) =
            split_statement("ALTER TABLE `d`.`t x` ADD COLUMN c INT, DROP b;").expect("split");
        assert_eq!(n.to_string(), "`d`.`t x`");
        assert_eq!(rest, "ADD COLUMN c INT, DROP b");
        let (n, rest) = split_statement("alter online table t").expect("split");
        assert_eq!((n.to_string().as_str(), rest), ("`t`", ""));
        assert!(split_statement("ALTER VIEW v AS SELECT 1").is_none());
    }

    #[test]
    fn forms_sqlparser_lacks_are_read_here() {
        let mode = crate::diag::SqlMode::default();
        let mut ops = Vec::new();
        for op in [
            "ENGINE=InnoDB",
            "ALGORITHM = NOCOPY",
            "LOCK=NONE",
            "DROP KEY k",
            "RENAME INDEX a TO b",
            "ADD (x INT, y INT)",
            "DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",
        ] {
            parse_op(op, mode, &mut ops).unwrap_or_else(|e| panic!("{op}: {e}"));
        }
        assert!(matches!(ops[1], Op::Algorithm(Some(Alg::NoCopy))));
        assert!(matches!(ops[2], Op::Lock(LockReq::None)));
        assert!(matches!(&ops[3], Op::DropIndex { name, .. } if name == "k"));
        assert!(matches!(&ops[4], Op::RenameIndex { from, to } if from == "a" && to == "b"));
        assert!(matches!(&ops[5], Op::AddColumn { name, .. } if name == "x"));
        assert!(matches!(&ops[6], Op::AddColumn { name, .. } if name == "y"));
        assert!(matches!(
            parse_op("ADD FOREIGN KEY (a) REFERENCES p(id)", mode, &mut ops),
            Err(SqlError::Unsupported(_))
        ));
        assert!(matches!(
            parse_op("ENGINE=MyISAM", mode, &mut ops),
            Err(SqlError::Unsupported(_))
        ));
    }
}
