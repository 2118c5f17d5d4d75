//! Views in the catalog: one record each (docs/catalog.md, "View record").
//!
//! Invariants:
//! 1. A (database, name) pair names a table or a view, never both: both DDLs check the
//!    other map under the DDL mutex.
//! 2. Every view change is one catalog record change, so one mtr: a crash leaves the old
//!    view or the new one, never a half.
//! 3. The engine never reads a view's query: it stores the SQL layer's text.

use crate::catalog::ViewDef;

use super::{DbError, DbInner, Result};

impl DbInner {
    /// The views of database `db`, in name order.
    pub fn views(&self, db: &str) -> Result<Vec<ViewDef>> {
        let st = self.state.read();
        if !st.databases.contains(db) {
            return Err(DbError::NoSuchDatabase(db.into()));
        }
        Ok(st
            .views
            .range((db.to_string(), String::new())..)
            .take_while(|((d, _), _)| d == db)
            .map(|(_, v)| v.clone())
            .collect())
    }

    /// View `db`.`name`, if there is one.
    pub fn view(&self, db: &str, name: &str) -> Option<ViewDef> {
        self.state
            .read()
            .views
            .get(&(db.to_string(), name.to_string()))
            .cloned()
    }

    /// CREATE VIEW (`replace`: CREATE OR REPLACE and ALTER VIEW may overwrite a view).
    /// `TableExists` if a table has the name, or a view and not `replace`.
    pub fn put_view(&self, v: ViewDef, replace: bool) -> Result<()> {
        let _ddl = self.ddl.lock();
        v.validate()?;
        let key = (v.db.clone(), v.name.clone());
        let exists = {
            let st = self.state.read();
            if !st.databases.contains(&v.db) {
                return Err(DbError::NoSuchDatabase(v.db.clone()));
            }
            if st.names.contains_key(&key) {
                return Err(DbError::TableExists(format!("{}.{}", v.db, v.name)));
            }
            st.views.contains_key(&key)
        };
        if exists && !replace {
            return Err(DbError::TableExists(format!("{}.{}", v.db, v.name)));
        }
        let lsn = self.catalog.put_view(&self.engine, &v, exists)?;
        self.durable(lsn);
        self.state.write().views.insert(key, v);
        Ok(())
    }

    /// DROP VIEW: `NoSuchTable` if there is no such view.
    pub fn drop_view(&self, db: &str, name: &str) -> Result<()> {
        let _ddl = self.ddl.lock();
        let key = (db.to_string(), name.to_string());
        if !self.state.read().views.contains_key(&key) {
            return Err(DbError::NoSuchTable(format!("{db}.{name}")));
        }
        let lsn = self.catalog.delete_view(&self.engine, db, name)?;
        self.durable(lsn);
        self.state.write().views.remove(&key);
        Ok(())
    }
}

impl DbInner {
    /// The active transactions' ids, oldest first (information_schema.INNODB_TRX).
    pub fn active_transactions(&self) -> Vec<u64> {
        self.trx.active_ids().into_iter().map(|t| t.0).collect()
    }

    /// The size of a table's file in bytes (information_schema.TABLES: DATA_LENGTH).
    pub fn table_file_bytes(&self, db: &str, name: &str) -> Option<u64> {
        let t = self.lookup(db, name).ok()?;
        let space = self.engine.spaces().get(t.def.space).ok()?;
        Some(u64::from(space.size_pages()) * self.engine.page_size().bytes() as u64)
    }
}
