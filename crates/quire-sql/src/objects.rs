//! The statements of views, temporary tables and information_schema that the keyword
//! dispatch takes before sqlparser: CREATE / ALTER / DROP VIEW, DROP TEMPORARY TABLE,
//! SHOW CREATE VIEW, SHOW CREATE TABLE of a view or temporary table, SHOW [FULL] TABLES;
//! and the definitions DESCRIBE / SHOW COLUMNS read for them (`object_def`).

use quire_engine::catalog::TableDef;
use quire_engine::page::{PageNo, SpaceId};
use quire_engine::row::Value;

use crate::control::{like_at, like_ok, send_table};
use crate::diag::Level;
use crate::dispatch::{lex, qualified_name, Tok};
use crate::error::{Result, SqlError};
use crate::infoschema::{self, InfoTable};
use crate::meta::{FieldType, RowSink};
use crate::session::{Outcome, Session};

fn syntax(text: &str) -> SqlError {
    SqlError::Parse {
        near: text.chars().take(80).collect(),
        line: 1,
    }
}

/// A definition with no storage behind it (a view's or an information_schema table's
/// columns), for DESCRIBE and SHOW COLUMNS.
fn bare_def(db: &str, name: &str, columns: Vec<quire_engine::row::Column>) -> TableDef {
    TableDef {
        id: 0,
        db: db.into(),
        name: name.into(),
        space: SpaceId::SYSTEM,
        space_name: String::new(),
        root: PageNo(0),
        columns,
        primary_key: Vec::new(),
        auto_increment: None,
        next_index_no: 1,
        indexes: Vec::new(),
        rebuilt_at: quire_engine::row::TrxId(0),
        dropped: Vec::new(),
        slot_order: Vec::new(),
        comment: String::new(),
        checks: Vec::new(),
        collation: None,
    }
}

/// A name as written: its database, if given, and the name.
type Name = (Option<String>, String);

/// `name[, name…]` from `toks[i..]`, and the index after.
fn name_list(toks: &[Tok], mut i: usize) -> Option<(Vec<Name>, usize)> {
    let mut out = Vec::new();
    loop {
        let (db, t, next) = qualified_name(toks, i)?;
        out.push((db, t));
        i = next;
        match toks.get(i) {
            Some(Tok::Punct(',')) => i += 1,
            Some(Tok::Word(w)) if w == "," => i += 1,
            _ => return Some((out, i)),
        }
    }
}

/// The bodies of a text made only of executable comments (`/*!NNNNN body */`, versions
/// this server runs), joined by spaces; `None` for any other text.
fn executable_comments(text: &str) -> Option<String> {
    let mut rest = text.trim();
    let mut out = Vec::new();
    while !rest.is_empty() {
        let body = rest.strip_prefix("/*!")?;
        let end = body.find("*/")?;
        let one = format!("/*!{}*/", &body[..end]);
        out.push(crate::dispatch::executable_comment(&one)?.to_string());
        rest = body[end + 2..].trim_start();
    }
    (out.len() > 1).then(|| out.join(" "))
}

impl Session<'_> {
    /// Handles `text` if it is one of this module's statements.
    pub(crate) fn objects_special(
        &mut self,
        text: &str,
        sink: &mut dyn RowSink,
    ) -> Result<Option<Outcome>> {
        let first = text
            .split(|c: char| c.is_whitespace() || c == '(' || c == ';')
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        // mariadb-dump writes a view as one statement of three executable comments:
        // `/*!50001 CREATE ALGORITHM=… */ /*!50013 DEFINER=… */ /*!50001 VIEW … */`.
        if first.starts_with("/*!") {
            if let Some(joined) = executable_comments(text) {
                if let Some(v) = crate::view::parse(&joined) {
                    return self.create_view(v?).map(Some);
                }
            }
            return Ok(None);
        }
        match first.as_str() {
            "create" | "alter" => match crate::view::parse(text) {
                Some(v) => self.create_view(v?).map(Some),
                None => Ok(None),
            },
            "drop" => {
                let Some(toks) = lex(text) else {
                    return Ok(None);
                };
                let mut i = 1;
                let view = toks.get(1).is_some_and(|t| t.is("view"));
                let temporary = toks.get(1).is_some_and(|t| t.is("temporary"))
                    && toks.get(2).is_some_and(|t| t.is("table") || t.is("tables"));
                if !view && !temporary {
                    return Ok(None);
                }
                i += if view { 1 } else { 2 };
                let mut if_exists = false;
                if toks.get(i).is_some_and(|t| t.is("if"))
                    && toks.get(i + 1).is_some_and(|t| t.is("exists"))
                {
                    if_exists = true;
                    i += 2;
                }
                let (names, mut next) = name_list(&toks, i).ok_or_else(|| syntax(text))?;
                if toks
                    .get(next)
                    .is_some_and(|t| t.is("restrict") || t.is("cascade"))
                {
                    next += 1;
                }
                if next != toks.len() {
                    return Err(syntax(text));
                }
                if view {
                    return self.drop_views(&names, if_exists).map(Some);
                }
                let mut missing = Vec::new();
                for (db, t) in names {
                    let db = db
                        .or_else(|| self.sv.db.clone())
                        .ok_or(SqlError::NoDatabaseSelected)?;
                    if !self.drop_temporary(&db, &t)? {
                        missing.push(format!("{db}.{t}"));
                    }
                }
                if !missing.is_empty() && !if_exists {
                    return Err(SqlError::UnknownTable(missing.join(",")));
                }
                if !missing.is_empty() {
                    let m = missing.join(",");
                    self.warn_now(Level::Note, 1051, format!("Unknown table '{m}'"));
                }
                Ok(Some(Outcome::ok(0)))
            }
            "show" => {
                // SHOW … WHERE: control.rs filters the SHOW's output (it comes back here
                // without its WHERE).
                if crate::control::split_show_where(text).is_some() {
                    return Ok(None);
                }
                let Some(toks) = lex(text) else {
                    return Ok(None);
                };
                if toks.get(1).is_some_and(|t| t.is("create")) {
                    let is_view = toks.get(2).is_some_and(|t| t.is("view"));
                    let is_table = toks.get(2).is_some_and(|t| t.is("table"));
                    if !is_view && !is_table {
                        return Ok(None);
                    }
                    let (db, t, _) = qualified_name(&toks, 3).ok_or_else(|| syntax(text))?;
                    if is_view {
                        return self.show_create_view(db, &t, sink).map(Some);
                    }
                    let db = db
                        .or_else(|| self.sv.db.clone())
                        .ok_or(SqlError::NoDatabaseSelected)?;
                    if let Some((mut def, next)) = self.temp_def(&db, &t) {
                        let zone = crate::tz::Zone::of_session(&self.sv, self.inst);
                        crate::tz::shown_columns(&mut def.columns, zone);
                        let sql = crate::ddl::show_create_table(&def, next, &[]).replacen(
                            "CREATE TABLE",
                            "CREATE TEMPORARY TABLE",
                            1,
                        );
                        let vs = FieldType::VarString;
                        return send_table(
                            sink,
                            &[("Table", vs), ("Create Table", vs)],
                            vec![vec![Value::Str(t), Value::Str(sql)]],
                        )
                        .map(Some);
                    }
                    if self.inst.db.view(&db, &t).is_some() {
                        return self.show_create_view(Some(db), &t, sink).map(Some);
                    }
                    return Ok(None);
                }
                let mut i = 1;
                let full = toks.get(i).is_some_and(|t| t.is("full"));
                if full {
                    i += 1;
                }
                if !toks.get(i).is_some_and(|t| t.is("tables")) {
                    return Ok(None);
                }
                i += 1;
                let mut db = self.sv.db.clone();
                if toks.get(i).is_some_and(|t| t.is("from") || t.is("in")) {
                    db = toks.get(i + 1).and_then(Tok::ident).map(str::to_string);
                    i += 2;
                }
                let db = db.ok_or(SqlError::NoDatabaseSelected)?;
                let pat = like_at(&toks, i)?;
                self.show_tables(&db, full, pat, sink).map(Some)
            }
            _ => Ok(None),
        }
    }

    fn show_tables(
        &mut self,
        db: &str,
        full: bool,
        pat: Option<String>,
        sink: &mut dyn RowSink,
    ) -> Result<Outcome> {
        let mut rows: Vec<(String, &'static str)> = Vec::new();
        let shown_db = if infoschema::is_schema(db) {
            for t in InfoTable::ALL {
                rows.push((t.name().to_string(), "SYSTEM VIEW"));
            }
            infoschema::SCHEMA.to_string()
        } else {
            // As the base-table listing in control.rs: 1044 for a database the account may
            // not use, and only the tables and views it holds a privilege on.
            self.check_use_db(db)?;
            let tables = self
                .inst
                .db
                .tables(db)
                .map_err(|_| SqlError::UnknownDatabase(db.into()))?;
            rows.extend(tables.into_iter().map(|t| (t, "BASE TABLE")));
            rows.extend(
                self.inst
                    .db
                    .views(db)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|v| (v.name, "VIEW")),
            );
            db.to_string()
        };
        rows.sort();
        let col = format!("Tables_in_{shown_db}");
        let vs = FieldType::VarString;
        let rows: Vec<Vec<Value>> = rows
            .into_iter()
            .filter(|(t, _)| {
                like_ok(&pat, t) && (infoschema::is_schema(db) || self.may_see_table(db, t))
            })
            .map(|(t, kind)| {
                if full {
                    vec![Value::Str(t), Value::Str(kind.into())]
                } else {
                    vec![Value::Str(t)]
                }
            })
            .collect();
        if full {
            send_table(sink, &[(&col, vs), ("Table_type", vs)], rows)
        } else {
            send_table(sink, &[(&col, vs)], rows)
        }
    }

    /// The definition DESCRIBE and SHOW COLUMNS read for a temporary table, a view or an
    /// information_schema table; `None` for a base table.
    pub(crate) fn object_def(&self, db: &str, t: &str) -> Result<Option<TableDef>> {
        if infoschema::is_schema(db) {
            let it = InfoTable::from_name(t).ok_or_else(|| SqlError::NoSuchTable {
                db: infoschema::SCHEMA.into(),
                table: t.into(),
            })?;

            return Ok(Some(bare_def(
                infoschema::SCHEMA,
                it.name(),
                it.engine_columns(),
            )));
        }
        if let Some((def, _)) = self.temp_def(db, t) {
            return Ok(Some(def));
        }
        let Some(v) = self.inst.db.view(db, t) else {
            return Ok(None);
        };
        let params = std::collections::HashMap::new();
        let ctx = self.ctx_with(&params);
        let plan = crate::view::plan_view(&ctx, &v)?;
        let mut cols = Vec::new();
        for (i, name) in v.columns.iter().enumerate() {
            let Some(ty) = plan.item_tys.get(i).copied() else {
                continue;
            };
            let coll = plan.item_derived.get(i).map_or(ctx.conn.coll, |x| x.0);
            cols.push(crate::func::types::ty_column(name, ty, coll));
        }
        Ok(Some(bare_def(db, t, cols)))
    }
}
