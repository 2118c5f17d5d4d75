//! Temporary tables: engine tables that no catalog record names.
//!
//! A session's `CREATE TEMPORARY TABLE` gets a table of its own, `#sql`.`t<id>`, in a space
//! of the same name (`#sql.t<id>.qsp`). It has a table id, a space and B-trees like any
//! table, so transactions, undo, row locks and MVCC work on it unchanged (InnoDB's
//! temporary tables also roll back with their transaction). What it lacks is a catalog
//! record:
//!
//! 1. No catalog record ever names a temporary table, so creating and dropping one never
//!    waits for a durable catalog change, and after a crash no record points at it.
//! 2. `#` never occurs in a catalog name (`catalog::check_name`), so `#sql` is no user's
//!    database and a temporary table can only be reached by the engine name its session
//!    was given.
//! 3. At open, every `#sql.*` space is removed (invariant 1 makes it an orphan; every
//!    session ended with the crash or shutdown), and `quire check` does not count it as
//!    damage. A rolled-back or purged undo record of its table id finds no table and is
//!    skipped, as for any dropped table.
//!
//! Its pages are redo-logged like any other page (recovery needs no more than for a
//! CREATE TABLE interrupted before its record: the space is deleted).

use std::sync::Arc;

use crate::catalog::{IndexDef, TableDef, CATALOG_ROOT};
use crate::page::SpaceId;

use super::{open_state, DbError, DbInner, Result, TableSpec};

/// The database name of every temporary table (invariant 2).
pub const TEMP_DB: &str = "#sql";

/// Whether space `name` is a temporary table's (invariant 3).
pub fn is_temp_space(name: &str) -> bool {
    name.strip_prefix(TEMP_DB)
        .is_some_and(|rest| rest.starts_with('.'))
}

impl DbInner {
    /// Creates a temporary table and returns its engine name: open it as
    /// `table(TEMP_DB, name)`.
    pub fn create_temporary_table(&self, spec: TableSpec) -> Result<String> {
        let _ddl = self.ddl.lock();
        let id = self.state.read().next_table_id;
        let name = format!("t{id}");
        let mut def = TableDef {
            id,
            db: TEMP_DB.into(),
            name: name.clone(),
            space: SpaceId::SYSTEM,
            space_name: format!("{TEMP_DB}.{name}"),
            root: CATALOG_ROOT,
            columns: spec.columns,
            primary_key: spec.primary_key,
            auto_increment: spec.auto_increment,
            next_index_no: 1,
            indexes: Vec::new(),
            rebuilt_at: crate::row::TrxId(0),
            dropped: Vec::new(),
            slot_order: Vec::new(),
            comment: spec.comment,
            checks: spec.checks,
            collation: spec.collation,
        };
        for (i, ix) in spec.indexes.into_iter().enumerate() {
            def.indexes.push(IndexDef {
                name: ix.name,
                unique: ix.unique,
                index_no: i as u16 + 1,
                root: CATALOG_ROOT,
                columns: ix.columns,
                usable_from: crate::row::TrxId(0),
                comment: ix.comment,
            });
            def.next_index_no = i as u16 + 2;
        }
        def.validate_schema()?;
        // Its id is never reused either: its undo history names it.
        self.engine.raise_table_id_mark(id + 1)?;
        self.state.write().next_table_id = id + 1;
        def.space = self.engine.create_space(&def.space_name)?;
        if let Err(e) = self.create_trees(&mut def) {
            let _ = self.engine.delete_space(&def.space_name);
            return Err(e);
        }
        let state = open_state(&self.engine, def, None)?;
        let mut st = self.state.write();
        st.names.insert((TEMP_DB.into(), name.clone()), id);
        st.tables.insert(id, state);
        Ok(name)
    }

    /// Drops temporary table `name` (its engine name).
    pub fn drop_temporary_table(&self, name: &str) -> Result<()> {
        let _ddl = self.ddl.lock();
        let t: Arc<_> = self.lookup(TEMP_DB, name)?;
        if t.def.db != TEMP_DB {
            return Err(DbError::NoSuchTable(format!("{TEMP_DB}.{name}")));
        }
        let _x = t.dml.write();
        {
            let mut st = self.state.write();
            st.names.remove(&(TEMP_DB.to_string(), name.to_string()));
            st.tables.remove(&t.def.id);
        }
        self.engine.delete_space(&t.def.space_name)?;
        Ok(())
    }
}
