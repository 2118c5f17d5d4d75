//! Views: CREATE [OR REPLACE] / ALTER / DROP VIEW, SHOW CREATE VIEW, and a view named in
//! FROM (docs/sql.md, "Views").
//!
//! A view is a catalog record (docs/catalog.md, "View record") holding its query as
//! MariaDB prints it (`canon.rs`): columns qualified, `*` expanded at CREATE, so the view
//! keeps the columns it had. Named in FROM, the query is parsed and planned again (with
//! the view's database as the current one) and joined as a derived table under the view's
//! name; a statement's plan is made again after any DDL, so a view always reads its
//! tables' current definitions.
//!
//! Invariants:
//! 1. A stored definition binds to the columns recorded with it, in number and order
//!    (checked at CREATE by binding the stored text itself).
//! 2. A view's query that no longer binds (a table or column dropped) is 1356, never a
//!    result: [`plan_view`] turns every binding error into it.
//! 3. View expansion is bounded ([`MAX_DEPTH`]): a view naming itself through others
//!    fails, it does not recurse forever.

pub mod canon;
pub(crate) mod dml;
pub mod pushdown;

use std::cell::Cell;

use quire_engine::catalog::ViewDef;
use quire_engine::row::Value;
use sqlparser::ast as sql;

use crate::control::send_table;
use crate::diag::Level;
use crate::error::{Result, SqlError};
use crate::meta::{FieldType, RowSink};
use crate::session::{Outcome, Session};
use crate::stmt::Ctx;

/// How deep views may name views (MariaDB has no fixed limit; its stack does).
pub const MAX_DEPTH: u32 = 32;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

const ALGORITHMS: [&str; 3] = ["UNDEFINED", "MERGE", "TEMPTABLE"];
const CHECK_OPTIONS: [&str; 3] = ["NONE", "CASCADED", "LOCAL"];
const SECURITY: [&str; 2] = ["DEFINER", "INVOKER"];

/// A CREATE VIEW or ALTER VIEW statement, read by [`parse`].
#[derive(Debug, Clone, PartialEq)]
pub struct ViewStmt {
    pub alter: bool,
    pub or_replace: bool,
    pub if_not_exists: bool,
    pub algorithm: u8,
    pub definer: Option<(String, String)>,
    pub security: u8,
    pub db: Option<String>,
    pub name: String,
    pub columns: Vec<String>,
    pub select: String,
    pub check_option: u8,
}

/// A small scanner over the statement text (sqlparser does not read MariaDB's view
/// options).
struct Cur<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> Cur<'a> {
    fn ws(&mut self) {
        let b = self.s.as_bytes();
        while self.i < b.len() && b[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    /// A bare word or a backquoted identifier.
    fn word(&mut self) -> Option<String> {
        self.ws();
        let b = self.s.as_bytes();
        if self.i >= b.len() {
            return None;
        }
        if b[self.i] == b'`' {
            let mut out = String::new();
            let mut j = self.i + 1;
            let rest = &self.s[j..];
            let mut chars = rest.char_indices().peekable();
            while let Some((k, c)) = chars.next() {
                if c == '`' {
                    if matches!(chars.peek(), Some((_, '`'))) {
                        out.push('`');
                        chars.next();
                        continue;
                    }
                    j += k + 1;
                    self.i = j;
                    return Some(out);
                }
                out.push(c);
            }
            return None;
        }
        let start = self.i;
        while self.i < b.len()
            && (b[self.i].is_ascii_alphanumeric() || b[self.i] == b'_' || b[self.i] == b'$')
        {
            self.i += 1;
        }
        (self.i > start).then(|| self.s[start..self.i].to_string())
    }
    /// A word, or a quoted string (a user or host name).
    fn name(&mut self) -> Option<String> {
        self.ws();
        let b = self.s.as_bytes();
        if self.i < b.len() && (b[self.i] == b'\'' || b[self.i] == b'"') {
            let q = b[self.i];
            let start = self.i + 1;
            let end = self.s[start..].find(q as char)? + start;
            self.i = end + 1;
            return Some(self.s[start..end].to_string());
        }
        self.word()
    }
    fn is(&mut self, kw: &str) -> bool {
        let save = self.i;
        match self.word() {
            Some(w)
                if w.eq_ignore_ascii_case(kw) && !self.s[save..].trim_start().starts_with('`') =>
            {
                true
            }
            _ => {
                self.i = save;
                false
            }
        }
    }
    fn punct(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.as_bytes().get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
}

fn syntax(text: &str) -> SqlError {
    SqlError::Parse {
        near: text.chars().take(80).collect(),
        line: 1,
    }
}

/// Reads CREATE [OR REPLACE] [ALGORITHM = …] [DEFINER = …] [SQL SECURITY …] VIEW … AS
/// select [WITH [CASCADED | LOCAL] CHECK OPTION], or ALTER … VIEW; `None` for any other
/// statement.
pub fn parse(text: &str) -> Option<Result<ViewStmt>> {
    let mut c = Cur { s: text, i: 0 };
    let alter = if c.is("create") {
        false
    } else if c.is("alter") {
        true
    } else {
        return None;
    };
    let mut v = ViewStmt {
        alter,
        or_replace: false,
        if_not_exists: false,
        algorithm: 0,
        definer: None,
        security: 0,
        db: None,
        name: String::new(),
        columns: Vec::new(),
        select: String::new(),
        check_option: 0,
    };
    if !alter && c.is("or") {
        if !c.is("replace") {
            return None;
        }
        v.or_replace = true;
    }
    loop {
        if c.is("algorithm") {
            if !c.punct(b'=') {
                return Some(Err(syntax(&text[c.i..])));
            }
            let a = c.word().unwrap_or_default().to_ascii_uppercase();
            match ALGORITHMS.iter().position(|x| *x == a) {
                Some(p) => v.algorithm = p as u8,
                None => return Some(Err(syntax(&text[c.i..]))),
            }
        } else if c.is("definer") {
            if !c.punct(b'=') {
                return Some(Err(syntax(&text[c.i..])));
            }
            let save = c.i;
            if c.is("current_user") {
                if c.punct(b'(') && !c.punct(b')') {
                    return Some(Err(syntax(&text[c.i..])));
                }
                v.definer = None;
            } else {
                c.i = save;
                let Some(user) = c.name() else {
                    return Some(Err(syntax(&text[c.i..])));
                };
                let host = if c.punct(b'@') {
                    match c.name() {
                        Some(h) => h,
                        None => return Some(Err(syntax(&text[c.i..]))),
                    }
                } else {
                    "%".to_string()
                };
                v.definer = Some((user, host));
            }
        } else if c.is("sql") {
            if !c.is("security") {
                return Some(Err(syntax(&text[c.i..])));
            }
            v.security = if c.is("definer") {
                0
            } else if c.is("invoker") {
                1
            } else {
                return Some(Err(syntax(&text[c.i..])));
            };
        } else {
            break;
        }
    }
    if !c.is("view") {
        return None;
    }
    if !alter && c.is("if") {
        if !(c.is("not") && c.is("exists")) {
            return Some(Err(syntax(&text[c.i..])));
        }
        v.if_not_exists = true;
    }
    let Some(first) = c.word() else {
        return Some(Err(syntax(&text[c.i..])));
    };
    if c.punct(b'.') {
        let Some(second) = c.word() else {
            return Some(Err(syntax(&text[c.i..])));
        };
        v.db = Some(first);
        v.name = second;
    } else {
        v.name = first;
    }
    if c.punct(b'(') {
        loop {
            let Some(col) = c.word() else {
                return Some(Err(syntax(&text[c.i..])));
            };
            v.columns.push(col);
            if c.punct(b')') {
                break;
            }
            if !c.punct(b',') {
                return Some(Err(syntax(&text[c.i..])));
            }
        }
    }
    if !c.is("as") {
        return Some(Err(syntax(&text[c.i..])));
    }
    let mut body = text[c.i..].trim();
    // WITH [CASCADED | LOCAL] CHECK OPTION ends the statement.
    let lower = body.to_ascii_lowercase();
    if lower.ends_with("check option") {
        let head = lower[..lower.len() - "check option".len()].trim_end();
        let (head, opt) = if let Some(h) = head.strip_suffix("cascaded") {
            (h.trim_end(), 1)
        } else if let Some(h) = head.strip_suffix("local") {
            (h.trim_end(), 2)
        } else {
            (head, 1)
        };
        if let Some(h) = head.strip_suffix("with") {
            v.check_option = opt;
            body = body[..h.len()].trim_end();
        }
    }
    if body.is_empty() {
        return Some(Err(syntax("")));
    }
    v.select = body.to_string();
    Some(Ok(v))
}

/// The catalog as the printer sees it: tables' and views' columns, derived tables'
/// result columns.
struct PrintCatalog<'c, 'a> {
    ctx: &'c Ctx<'a>,
}

impl canon::Catalog for PrintCatalog<'_, '_> {
    fn columns(&self, db: &str, name: &str) -> Option<Vec<String>> {
        if let Some(v) = self.ctx.db.view(db, name) {
            return Some(v.columns);
        }
        let t = self.ctx.db.table(db, name).ok()?;
        Some(
            t.definition()
                .ok()?
                .columns
                .into_iter()
                .map(|c| c.name)
                .collect(),
        )
    }
    fn query_columns(&self, q: &sql::Query) -> Option<Vec<String>> {
        let plan = crate::stmt::select(self.ctx, q, None).ok()?;
        Some(plan.columns.into_iter().map(|c| c.name).collect())
    }
}

/// Plans view `v`'s query (its database current), for FROM: 1356 if it no longer binds.
pub(crate) fn plan_view(ctx: &Ctx<'_>, v: &ViewDef) -> Result<crate::exec::SelectPlan> {
    plan_view_as(ctx, v, None)
}

/// [`plan_view`] for the view read under `alias` in FROM: the outer WHERE's conditions
/// on it are pushed into its query where that is the same (`pushdown.rs`).
pub(crate) fn plan_view_as(
    ctx: &Ctx<'_>,
    v: &ViewDef,
    alias: Option<&str>,
) -> Result<crate::exec::SelectPlan> {
    let depth = DEPTH.with(|d| d.get());
    if depth >= MAX_DEPTH {
        return Err(SqlError::ViewInvalid {
            db: v.db.clone(),
            name: v.name.clone(),
        });
    }
    let invalid = || SqlError::ViewInvalid {
        db: v.db.clone(),
        name: v.name.clone(),
    };
    let (stmt, _) = crate::parse::parse_one(&v.definition).map_err(|_| invalid())?;
    let sql::Statement::Query(q) = stmt else {
        return Err(invalid());
    };
    let inner = Ctx {
        db: ctx.db,
        current_db: Some(&v.db),
        params: ctx.params,
        hidden: ctx.hidden,
        conn: ctx.conn,
        ctes: None,
        temps: ctx.temps,
        stats_used: ctx.stats_used,
    };
    DEPTH.with(|d| d.set(depth + 1));
    let pushed = pushdown::push_into(&q, &v.name, alias, &v.columns)
        .and_then(|p| crate::stmt::select(&inner, &p, None).ok());
    let r = match pushed {
        Some(p) => Ok(p),
        None => crate::stmt::select(&inner, &q, None),
    };
    DEPTH.with(|d| d.set(depth));
    match r {
        Ok(p) if p.columns.len() == v.columns.len() => Ok(p),
        Ok(_) => Err(invalid()),
        // A view inside this one that is itself invalid names itself.
        Err(e @ SqlError::ViewInvalid { .. }) if depth > 0 => Err(e),
        Err(
            SqlError::NoSuchTable { .. }
            | SqlError::UnknownColumn { .. }
            | SqlError::UnknownDatabase(_)
            | SqlError::NoSuchFunction(_)
            | SqlError::AmbiguousColumn { .. }
            | SqlError::ViewInvalid { .. }
            | SqlError::Parse { .. },
        ) => Err(invalid()),
        Err(e) => Err(e),
    }
}

/// The view's text as information_schema.VIEWS prints it (every table and column with
/// its database); the stored text if the printer does not know a construct in it.
pub(crate) fn full_definition(ctx: &Ctx<'_>, v: &ViewDef) -> String {
    let printed = (|| {
        let (stmt, _) = crate::parse::parse_one(&v.definition).ok()?;
        let sql::Statement::Query(q) = stmt else {
            return None;
        };
        let inner = Ctx {
            db: ctx.db,
            current_db: Some(&v.db),
            params: ctx.params,
            hidden: ctx.hidden,
            conn: ctx.conn,
            ctes: None,
            temps: ctx.temps,
            stats_used: ctx.stats_used,
        };
        let cat = PrintCatalog { ctx: &inner };
        canon::Printer {
            cat: &cat,
            current_db: &v.db,
            view_db: &v.db,
            full: true,
        }
        .query(&q, Some(&v.columns))
        .ok()
    })();
    printed.unwrap_or_else(|| v.definition.clone())
}

/// SHOW CREATE VIEW's text.
pub fn show_create(v: &ViewDef) -> String {
    let definer = format!(
        "`{}`@`{}`",
        v.definer_user.replace('`', "``"),
        v.definer_host.replace('`', "``")
    );
    let check = match v.check_option {
        1 => " WITH CASCADED CHECK OPTION",
        2 => " WITH LOCAL CHECK OPTION",
        _ => "",
    };
    format!(
        "CREATE ALGORITHM={} DEFINER={definer} SQL SECURITY {} VIEW `{}` AS {}{check}",
        ALGORITHMS[usize::from(v.algorithm.min(2))],
        SECURITY[usize::from(v.security.min(1))],
        v.name.replace('`', "``"),
        v.definition
    )
}

/// information_schema.VIEWS' CHECK_OPTION, SECURITY_TYPE, ALGORITHM.
pub fn option_names(v: &ViewDef) -> (&'static str, &'static str, &'static str) {
    (
        CHECK_OPTIONS[usize::from(v.check_option.min(2))],
        SECURITY[usize::from(v.security.min(1))],
        ALGORITHMS[usize::from(v.algorithm.min(2))],
    )
}

/// Whether the view's query could take INSERT/UPDATE/DELETE in MariaDB: one SELECT with no
/// aggregate, DISTINCT, GROUP BY, HAVING, LIMIT or UNION (information_schema.VIEWS'
/// IS_UPDATABLE).
pub fn is_updatable(v: &ViewDef) -> bool {
    let Ok((sql::Statement::Query(q), _)) = crate::parse::parse_one(&v.definition) else {
        return false;
    };
    is_updatable_query(&q)
}

fn is_updatable_query(q: &sql::Query) -> bool {
    if q.limit_clause.is_some() {
        return false;
    }
    let sql::SetExpr::Select(s) = &*q.body else {
        return false;
    };
    let grouped = !matches!(&s.group_by, sql::GroupByExpr::Expressions(es, _) if es.is_empty());
    let text = q.to_string().to_ascii_lowercase();
    let agg = [
        "count(",
        "sum(",
        "avg(",
        "min(",
        "max(",
        "group_concat(",
        "bit_and(",
        "bit_or(",
        "bit_xor(",
    ]
    .iter()
    .any(|f| text.contains(f));
    s.distinct.is_none() && !grouped && s.having.is_none() && !agg && !s.from.is_empty()
}

impl Session<'_> {
    pub(crate) fn ctx_with<'c>(
        &'c self,
        params: &'c std::collections::HashMap<(u64, u64), usize>,
    ) -> Ctx<'c> {
        Ctx {
            db: self.inst.db,
            current_db: self.sv.db.as_deref(),
            params,
            hidden: &[],
            conn: self.sv.conn(),
            ctes: None,
            temps: &self.temps,
            stats_used: &self.stats_used,
        }
    }

    /// CREATE / ALTER VIEW.
    pub(crate) fn create_view(&mut self, v: ViewStmt) -> Result<Outcome> {
        self.commit_open()?;
        let db = match v.db.clone().or_else(|| self.sv.db.clone()) {
            Some(d) => d,
            None => return Err(SqlError::NoDatabaseSelected),
        };
        if !self.inst.db.databases().contains(&db) {
            return Err(SqlError::UnknownDatabase(db));
        }
        let existing = self.inst.db.view(&db, &v.name);
        let is_table = self.inst.db.table(&db, &v.name).is_ok();
        if v.alter {
            if is_table {
                return Err(SqlError::WrongObject {
                    db,
                    name: v.name,
                    kind: "VIEW",
                });
            }
            if existing.is_none() {
                return Err(SqlError::NoSuchTable { db, table: v.name });
            }
        } else if is_table && v.or_replace {
            return Err(SqlError::WrongObject {
                db,
                name: v.name,
                kind: "VIEW",
            });
        } else if is_table || (existing.is_some() && !v.or_replace) {
            if v.if_not_exists {
                self.warn_now(
                    Level::Note,
                    1050,
                    format!("Table '{}' already exists", v.name),
                );
                return Ok(Outcome::ok(0));
            }
            return Err(SqlError::TableExists(v.name));
        }
        let conn = self.sv.conn();
        let (stmt, _) = crate::parse::parse_one_in(&v.select, conn.mode)?;
        let sql::Statement::Query(q) = stmt else {
            return Err(syntax(&v.select));
        };
        let params = std::collections::HashMap::new();
        let ctx = self.ctx_with(&params);
        let plan = crate::stmt::select(&ctx, &q, None)?;
        if let Some(t) = plan
            .source
            .tables()
            .iter()
            .find(|t| t.db == quire_engine::table::TEMP_DB)
        {
            return Err(SqlError::ViewTemporary(t.alias.clone()));
        }
        if v.check_option != 0 && (v.algorithm == 2 || !is_updatable_query(&q)) {
            return Err(SqlError::CheckOptionNonUpdatable(format!(
                "{db}.{}",
                v.name
            )));
        }
        // Unaliased items are named by their text as written already (`parse`).
        let names: Vec<String> = if v.columns.is_empty() {
            plan.columns.iter().map(|c| c.name.clone()).collect()
        } else {
            if v.columns.len() != plan.columns.len() {
                return Err(SqlError::ViewColumnCount);
            }
            v.columns.clone()
        };
        for (i, n) in names.iter().enumerate() {
            if names[..i].iter().any(|m| m.eq_ignore_ascii_case(n)) {
                return Err(SqlError::DuplicateColumn(n.clone()));
            }
        }
        let current = self.sv.db.clone().unwrap_or_else(|| db.clone());
        let cat = PrintCatalog { ctx: &ctx };
        let printed = canon::Printer {
            cat: &cat,
            current_db: &current,
            view_db: &db,
            full: false,
        }
        .query(&q, Some(&names))
        .ok();
        let (user, host) = v
            .definer
            .clone()
            .unwrap_or_else(|| (self.sv.user.clone(), self.definer_host()));
        let mut def = ViewDef {
            db: db.clone(),
            name: v.name.clone(),
            columns: names,
            definition: v.select.clone(),
            algorithm: v.algorithm,
            check_option: v.check_option,
            security: v.security,
            definer_user: user,
            definer_host: host,
            charset_client: "utf8mb4".into(),
            collation_connection: conn.coll.name().to_string(),
        };
        // Keep the printed text only if it binds as the written one does (invariant 1).
        if let Some(p) = printed {
            let candidate = ViewDef {
                definition: p,
                ..def.clone()
            };
            if plan_view(&ctx, &candidate).is_ok() {
                def = candidate;
            }
        }
        if current != db && def.definition == v.select {
            // The written text names tables of the session's database unqualified: it
            // would bind elsewhere from the view's database.
            return Err(SqlError::Unsupported(
                "this view's query in another database than the current one".into(),
            ));
        }
        plan_view(&ctx, &def)?;
        let r = match self.inst.db.put_view(def, v.or_replace || v.alter) {
            Ok(()) => Ok(Outcome::ok(0)),
            Err(quire_engine::table::DbError::TableExists(_)) => Err(SqlError::TableExists(v.name)),
            Err(quire_engine::table::DbError::Catalog(
                quire_engine::catalog::CatalogError::TooLong(_),
            )) => Err(SqlError::Unsupported(format!(
                "a view definition longer than {} bytes",
                quire_engine::catalog::VIEW_TEXT_MAX
            ))),
            Err(e) => Err(e.into()),
        };
        self.inst.bump_generation();
        r
    }

    /// The host part of CURRENT_USER for a view's DEFINER: MariaDB's account for a
    /// loopback connection is `localhost`.
    fn definer_host(&self) -> String {
        match self.sv.host.as_str() {
            "127.0.0.1" | "::1" | "" => "localhost".into(),
            h => h.to_string(),
        }
    }

    /// DROP VIEW [IF EXISTS] v, …: drops those that exist; 4092 names the others.
    pub(crate) fn drop_views(
        &mut self,
        names: &[(Option<String>, String)],
        if_exists: bool,
    ) -> Result<Outcome> {
        self.commit_open()?;
        let mut missing = Vec::new();
        for (db, name) in names {
            let db = match db.clone().or_else(|| self.sv.db.clone()) {
                Some(d) => d,
                None => return Err(SqlError::NoDatabaseSelected),
            };
            match self.inst.db.drop_view(&db, name) {
                Ok(()) => {}
                Err(quire_engine::table::DbError::NoSuchTable(_)) => {
                    missing.push(format!("{db}.{name}"))
                }
                Err(e) => return Err(e.into()),
            }
        }
        self.inst.bump_generation();
        if !missing.is_empty() && !if_exists {
            return Err(SqlError::UnknownView(missing.join(",")));
        }
        if !missing.is_empty() {
            self.warn_now(
                Level::Note,
                4092,
                format!("Unknown VIEW: '{}'", missing.join(",")),
            );
        }
        Ok(Outcome::ok(0))
    }

    /// SHOW CREATE VIEW (and SHOW CREATE TABLE of a view).
    pub(crate) fn show_create_view(
        &self,
        db: Option<String>,
        name: &str,
        sink: &mut dyn RowSink,
    ) -> Result<Outcome> {
        let db = db
            .or_else(|| self.sv.db.clone())
            .ok_or(SqlError::NoDatabaseSelected)?;
        let Some(v) = self.inst.db.view(&db, name) else {
            if self.inst.db.table(&db, name).is_ok() {
                return Err(SqlError::WrongObject {
                    db,
                    name: name.into(),
                    kind: "VIEW",
                });
            }
            return Err(SqlError::NoSuchTable {
                db,
                table: name.into(),
            });
        };
        let vs = FieldType::VarString;
        send_table(
            sink,
            &[
                ("View", vs),
                ("Create View", vs),
                ("character_set_client", vs),
                ("collation_connection", vs),
            ],
            vec![vec![
                Value::Str(v.name.clone()),
                Value::Str(show_create(&v)),
                Value::Str(v.charset_client.clone()),
                Value::Str(v.collation_connection.clone()),
            ]],
        )
    }
}

impl Ctx<'_> {
    /// The table an INSERT, UPDATE or DELETE (`op`) changes: a view is refused, with
    /// MariaDB's error for one that cannot take the change.
    pub(crate) fn dml_table(
        &self,
        name: &sql::ObjectName,
        alias: Option<&str>,
        op: &'static str,
    ) -> Result<crate::exec::TableRef> {
        let parts = crate::bind::object_parts(name)?;
        let (db, t) = match parts.as_slice() {
            [t] => (
                self.current_db
                    .ok_or(SqlError::NoDatabaseSelected)?
                    .to_string(),
                t.clone(),
            ),
            [d, t] => (d.clone(), t.clone()),
            _ => return Err(SqlError::Unsupported(name.to_string())),
        };
        if self.temps.get(&db, &t).is_none() {
            if crate::infoschema::is_schema(&db) {
                // The session names its user (`Session::plan_with`).
                return Err(SqlError::InfoSchemaDenied {
                    user: String::new(),
                    host: String::new(),
                    db: crate::infoschema::SCHEMA.into(),
                });
            }
            if let Some(v) = self.db.view(&db, &t) {
                if !is_updatable(&v) || v.algorithm == 2 {
                    return Err(match op {
                        "INSERT" => SqlError::NotInsertable { table: t },
                        _ => SqlError::NotUpdatable { table: t, op },
                    });
                }
                return Err(SqlError::Unsupported(format!(
                    "{op} through the view '{db}.{t}'"
                )));
            }
        }
        self.table(name, alias)
    }

    /// Whether `name` in FROM is a view or an information_schema table (a derived table),
    /// not a temporary or base table.
    pub(crate) fn derived_object(&self, name: &sql::ObjectName) -> bool {
        let Ok(parts) = crate::bind::object_parts(name) else {
            return false;
        };
        let (db, t) = match parts.as_slice() {
            [t] => match self.current_db {
                Some(d) => (d.to_string(), t.clone()),
                None => return false,
            },
            [d, t] => (d.clone(), t.clone()),
            _ => return false,
        };
        if crate::infoschema::is_schema(&db) {
            return true;
        }
        self.temps.get(&db, &t).is_none() && self.db.view(&db, &t).is_some()
    }

    /// The plan of view or information_schema table `parts` named in FROM, with its
    /// database and column names; `None` for a temporary or base table.
    pub(crate) fn derived_plan(
        &self,
        parts: &[String],
        alias: Option<&str>,
    ) -> Result<Option<(String, crate::exec::SelectPlan, Vec<String>)>> {
        let (db, t) = match parts {
            [t] => match self.current_db {
                Some(d) => (d.to_string(), t.clone()),
                None => return Ok(None),
            },
            [d, t] => (d.clone(), t.clone()),
            _ => return Ok(None),
        };
        if crate::infoschema::is_schema(&db) {
            let Some(it) = crate::infoschema::InfoTable::from_name(&t) else {
                return Err(SqlError::UnknownInfoTable(t));
            };
            let plan = crate::infoschema::plan(it, &t);
            return Ok(Some((crate::infoschema::SCHEMA.into(), plan, Vec::new())));
        }
        if self.temps.get(&db, &t).is_some() {
            return Ok(None);
        }
        let Some(v) = self.db.view(&db, &t) else {
            return Ok(None);
        };
        let plan = plan_view_as(self, &v, alias)?;
        Ok(Some((db, plan, v.columns.clone())))
    }
}
