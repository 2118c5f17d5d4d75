//! Temporary tables: CREATE TEMPORARY TABLE [IF NOT EXISTS] … (also LIKE and AS SELECT),
//! DROP [TEMPORARY] TABLE, and the name lookup that lets them hide base tables.
//!
//! Each is an engine table with no catalog record (`quire_engine::table::temp`): it has
//! undo, row locks and MVCC like any table, so it rolls back with its transaction as
//! InnoDB's do, and a crash leaves only its space file, which the next open deletes.
//! The session maps the name it was created under to the engine's (`#sql`.`t<id>`).
//!
//! Invariants:
//! 1. Only its session can reach a temporary table: the engine's database `#sql` is not a
//!    name any statement resolves ([`is_reserved_db`]), and the map is the session's.
//! 2. A name of the map hides a base table or view of the same name for every statement of
//!    the session, as in MariaDB; DROP TABLE drops the temporary table first.
//! 3. When the session ends (disconnect, KILL, server shutdown), its temporary tables are
//!    dropped after its transaction is rolled back.

use std::collections::BTreeMap;

use quire_engine::table::{DbError, TableSpec, TEMP_DB};

use crate::diag::Level;
use crate::error::{Result, SqlError};
use crate::exec::TableRef;
use crate::session::{Outcome, Session};
use crate::stmt::Ctx;

/// A session's temporary tables: (database, name) → the engine's table name.
#[derive(Debug, Default)]
pub struct Temps {
    map: BTreeMap<(String, String), String>,
}

impl Temps {
    /// The engine name of temporary table `db`.`name`, if the session has one.
    pub fn get(&self, db: &str, name: &str) -> Option<&str> {
        self.map
            .get(&(db.to_string(), name.to_string()))
            .map(String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Every temporary table: (database, name, engine name).
    pub fn all(&self) -> impl Iterator<Item = (&str, &str, &str)> {
        self.map
            .iter()
            .map(|((d, n), e)| (d.as_str(), n.as_str(), e.as_str()))
    }
}

/// Whether `db` is the engine's own database of temporary tables (invariant 1).
pub fn is_reserved_db(db: &str) -> bool {
    db == TEMP_DB
}

impl Ctx<'_> {
    /// Temporary table `db`.`t` of the session, as a table of a plan.
    pub(crate) fn temp_table(
        &self,
        db: &str,
        t: &str,
        alias: Option<&str>,
    ) -> Result<Option<TableRef>> {
        let Some(engine) = self.temps.get(db, t) else {
            return Ok(None);
        };
        let table = self
            .db
            .table(TEMP_DB, engine)
            .map_err(|_| SqlError::NoSuchTable {
                db: db.into(),
                table: t.into(),
            })?;
        let mut def = table.definition()?;
        if !self.hidden.is_empty() {
            let id = def.id;
            def.indexes
                .retain(|ix| !self.hidden.iter().any(|(t, n)| *t == id && *n == ix.name));
        }
        Ok(Some(TableRef {
            alias: alias.unwrap_or(t).to_string(),
            db: TEMP_DB.into(),
            name: engine.to_string(),
            def,
            shown: Some((db.to_string(), t.to_string())),
        }))
    }
}

impl Session<'_> {
    /// CREATE TEMPORARY TABLE `db`.`name` of `spec`. MariaDB does not end the open
    /// transaction for it.
    pub(crate) fn create_temporary(
        &mut self,
        db: &str,
        name: &str,
        spec: TableSpec,
        if_not_exists: bool,
    ) -> Result<Outcome> {
        if !self.inst.db.databases().iter().any(|d| d.as_str() == db) {
            return Err(SqlError::UnknownDatabase(db.into()));
        }
        if self.temps.get(db, name).is_some() {
            if if_not_exists {
                self.warn_now(Level::Note, 1050, format!("Table '{name}' already exists"));
                return Ok(Outcome::ok(0));
            }
            return Err(SqlError::TableExists(name.into()));
        }
        quire_engine::catalog::check_name(name)
            .map_err(|e| SqlError::Engine(DbError::Catalog(e)))?;
        let engine = self.inst.db.create_temporary_table(spec)?;
        self.temps
            .map
            .insert((db.to_string(), name.to_string()), engine);
        // Plans that named a base table of this name must be made again.
        self.inst.bump_generation();
        Ok(Outcome::ok(0))
    }

    /// Drops temporary table `db`.`name` if the session has one.
    pub(crate) fn drop_temporary(&mut self, db: &str, name: &str) -> Result<bool> {
        let Some(engine) = self.temps.map.remove(&(db.to_string(), name.to_string())) else {
            return Ok(false);
        };
        self.inst.bump_generation();
        self.inst.db.drop_temporary_table(&engine)?;
        Ok(true)
    }

    /// Invariant 3: the session ends.
    pub(crate) fn drop_all_temporary(&mut self) {
        for (_, engine) in std::mem::take(&mut self.temps.map) {
            if let Err(e) = self.inst.db.drop_temporary_table(&engine) {
                tracing::warn!(conn = self.info.id, table = %engine, error = %e, "dropping a temporary table failed");
            }
        }
    }

    /// The temporary table's definition under the name the session gave it.
    pub(crate) fn temp_def(
        &self,
        db: &str,
        name: &str,
    ) -> Option<(quire_engine::catalog::TableDef, Option<u64>)> {
        let engine = self.temps.get(db, name)?;
        let t = self.inst.db.table(TEMP_DB, engine).ok()?;
        let mut def = t.definition().ok()?;
        let next = t.next_auto_increment().ok()?;
        def.db = db.to_string();
        def.name = name.to_string();
        Some((def, next))
    }
}

impl Session<'_> {
    /// CREATE [TEMPORARY] TABLE … LIKE t, and … AS SELECT (or `… SELECT`): the columns
    /// come from `t` (with its keys) or from the query's result columns (no keys), then
    /// the query's rows are inserted; if that fails, the new table is dropped.
    pub(crate) fn create_table_from(
        &mut self,
        ct: &sqlparser::ast::CreateTable,
    ) -> Result<Outcome> {
        use quire_engine::table::IndexSpec;
        use sqlparser::ast as sql;
        let (db, name) = self.db_and_name(&ct.name)?;
        let spec = if let Some(like) = &ct.like {
            let (sql::CreateTableLikeKind::Parenthesized(l) | sql::CreateTableLikeKind::Plain(l)) =
                like;
            let (sdb, st) = self.db_and_name(&l.name)?;
            let def = match self.temp_def(&sdb, &st) {
                Some((d, _)) => d,
                None => {
                    if self.inst.db.view(&sdb, &st).is_some() {
                        return Err(SqlError::WrongObject {
                            db: sdb,
                            name: st,
                            kind: "BASE TABLE",
                        });
                    }
                    self.inst
                        .db
                        .table(&sdb, &st)
                        .map_err(|_| SqlError::NoSuchTable {
                            db: sdb.clone(),
                            table: st.clone(),
                        })?
                        .definition()?
                }
            };
            TableSpec {
                columns: def.columns,
                primary_key: def.primary_key,
                auto_increment: def.auto_increment,
                comment: def.comment,
                // CREATE TABLE … LIKE copies the checks, as MariaDB does.
                checks: def.checks,
                collation: def.collation,
                indexes: def
                    .indexes
                    .into_iter()
                    .map(|ix| IndexSpec {
                        name: ix.name,
                        columns: ix.columns,
                        unique: ix.unique,
                        comment: ix.comment,
                    })
                    .collect(),
            }
        } else {
            if !ct.columns.is_empty() || !ct.constraints.is_empty() {
                return Err(SqlError::Unsupported(
                    "CREATE TABLE with columns and a SELECT".into(),
                ));
            }
            let Some(q) = &ct.query else {
                return Err(SqlError::Unsupported("CREATE TABLE without columns".into()));
            };
            let params = std::collections::HashMap::new();
            let ctx = self.ctx_with(&params);
            let plan = crate::stmt::select(&ctx, q, None)?;
            let mut columns: Vec<quire_engine::row::Column> = Vec::new();
            for (i, meta) in plan.columns.iter().enumerate() {
                if columns
                    .iter()
                    .any(|c| c.name.eq_ignore_ascii_case(&meta.name))
                {
                    return Err(SqlError::DuplicateColumn(meta.name.clone()));
                }
                let Some(ty) = plan.item_tys.get(i).copied() else {
                    return Err(SqlError::Unsupported("this CREATE TABLE … SELECT".into()));
                };
                let coll = plan.item_derived.get(i).map_or(ctx.conn.coll, |d| d.0);
                columns.push(crate::func::types::ty_column(&meta.name, ty, coll));
            }
            // The table's default: its options', else its database's (as MariaDB's).
            let db_default = self
                .inst
                .db
                .database_collation(&db)
                .unwrap_or(quire_engine::row::Collation::Utf8mb4GeneralCi);
            let default = crate::ddl::table_collation(&ct.table_options, db_default)?;
            let mut spec = TableSpec::new(columns, Vec::new());
            spec.collation = quire_engine::catalog::kept_collation(default, &spec.columns);
            spec
        };
        let created = if ct.temporary {
            if self.temps.get(&db, &name).is_some() && ct.if_not_exists {
                self.warn_now(Level::Note, 1050, format!("Table '{name}' already exists"));
                return Ok(Outcome::ok(0));
            }
            self.create_temporary(&db, &name, spec, false)
        } else {
            match self.inst.db.create_table(&db, &name, spec) {
                Ok(_) => {
                    self.inst.bump_generation();
                    Ok(Outcome::ok(0))
                }
                Err(DbError::TableExists(_)) if ct.if_not_exists => {
                    self.warn_now(Level::Note, 1050, format!("Table '{name}' already exists"));
                    return Ok(Outcome::ok(0));
                }
                Err(DbError::TableExists(_)) => Err(SqlError::TableExists(name.clone())),
                Err(DbError::NoSuchDatabase(d)) => Err(SqlError::UnknownDatabase(d)),
                Err(e) => Err(e.into()),
            }
        }?;
        let Some(q) = &ct.query else {
            return Ok(created);
        };
        let insert = format!(
            "INSERT INTO `{}`.`{}` {q}",
            db.replace('`', "``"),
            name.replace('`', "``")
        );
        let mut sink = crate::meta::CollectSink::default();
        match self.query_text(&insert, &mut sink) {
            Ok(out) => Ok(out),
            Err(e) => {
                if ct.temporary {
                    let _ = self.drop_temporary(&db, &name);
                } else {
                    let _ = self.inst.db.drop_table(&db, &name);
                    self.inst.bump_generation();
                }
                Err(e)
            }
        }
    }
}
