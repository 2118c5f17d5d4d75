//! # Table rebuild (ALTER TABLE … ALGORITHM=COPY)
//!
//! [`DbInner::rebuild_table`] gives a table a new schema by copying its rows into a new
//! space, then switching the table to that space with one durable catalog-record update,
//! as TRUNCATE switches to an empty one (docs/catalog.md, "ALTER TABLE").
//!
//! Invariants:
//! 1. The table id stays; the new space is `<space name>~alter` until the switch, so no
//!    catalog record names it and a crash before the switch leaves an orphan that open
//!    deletes (the old table intact). After the durable switch the old space is the orphan
//!    and the new one is renamed by open: a crash leaves the old table or the new one.
//! 2. The table's DML is excluded for the whole copy (its `dml` lock, exclusively), so the
//!    copy reads every row once and no change is lost. Through SQL no transaction that
//!    changed the table is open (metadata locks); through the embedded API a row written
//!    by a transaction still active is refused ([`DbError::TableInUse`]).
//! 3. Copied records carry DB_TRX_ID 0 and no roll pointer: visible to every view, they
//!    need no undo (a crash mid-copy has nothing to roll back in the new space). A read
//!    view older than the rebuild mark (`TableDef::rebuilt_at`, reserved before the copy)
//!    would see the new rows where it should see the old versions: its consistent reads
//!    are refused with 1412, as its reads through a new index are.
//! 4. Undo records of transactions older than the mark describe the old space and schema:
//!    purge skips them (the mark is persisted, so this holds after a restart too).

use std::ops::Bound;
use std::sync::atomic::Ordering;

use crate::btree::Direction;
use crate::catalog::{self, IndexDef, CATALOG_ROOT};
use crate::row::record;
use crate::row::{RollPtr, RowId, TrxId, Value};

use super::{blob, open_state, rowid, DbError, DbInner, Result, TableSpec};

/// A tracing line every this many rows copied.
const PROGRESS_ROWS: u64 = 10_000;

/// What a rebuild did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rebuilt {
    /// Rows copied.
    pub rows: u64,
}

impl DbInner {
    /// Rebuilds table `db`.`name` with the schema `spec`: every live row of the old table
    /// goes through `convert` (old column order in, new column order out; an `Err` stops
    /// the rebuild with the old table intact) into a new space with the new trees, then
    /// the table switches to it atomically (module invariants). `auto_increment`, when
    /// given, is the lowest next AUTO_INCREMENT value (`ALTER TABLE … AUTO_INCREMENT=n`):
    /// the counter becomes the larger of it and the largest value copied + 1.
    /// `progress` is called with the number of rows copied so far, every
    /// `PROGRESS_ROWS` rows.
    pub fn rebuild_table<E: From<DbError>>(
        &self,
        db: &str,
        name: &str,
        spec: TableSpec,
        auto_increment: Option<u64>,
        convert: &mut dyn FnMut(Vec<Value>) -> std::result::Result<Vec<Value>, E>,
        progress: &mut dyn FnMut(u64),
    ) -> std::result::Result<Rebuilt, E> {
        let _ddl = self.ddl.lock();
        let t = self.lookup(db, name)?;
        let _x = t.dml.write();
        let mut def = t.def.clone();
        def.columns = spec.columns;
        // Every copied record holds every column: nothing is instant any more.
        for c in &mut def.columns {
            c.instant = None;
        }
        def.primary_key = spec.primary_key;
        def.auto_increment = spec.auto_increment;
        // Every index of the new space gets a number the old space never used, so a page
        // of either names one index only (index ids are `table id << 16 | number`).
        def.indexes = Vec::new();
        // Invariant 3: a view that sees this id was made after the copy began.
        let mark = self.trx.reserve_id();
        def.rebuilt_at = mark;
        for ix in spec.indexes {
            def.indexes.push(IndexDef {
                name: ix.name,
                unique: ix.unique,
                index_no: def.next_index_no,
                root: CATALOG_ROOT,
                columns: ix.columns,
                usable_from: mark,
            });
            def.next_index_no = def.next_index_no.checked_add(1).ok_or_else(|| {
                DbError::Catalog(catalog::CatalogError::Corrupt(format!(
                    "{db}.{name}: index numbers exhausted"
                )))
            })?;
        }
        // Validate before touching any file (a temporary table's names are the engine's).
        if super::is_temp_space(&def.space_name) {
            def.validate_schema().map_err(DbError::from)?;
        } else {
            def.validate().map_err(DbError::from)?;
        }
        // `~` never occurs in a name: the temporary name collides with no table.
        let tmp = format!("{}~alter", def.space_name);
        def.space = self.engine.create_space(&tmp).map_err(DbError::from)?;
        let copied = (|| -> std::result::Result<(u64, u64), E> {
            self.create_trees(&mut def)?;
            let new = open_state(&self.engine, def.clone(), Some(&t))?;
            let r = self.copy_rows(&t, &new, convert, progress)?;
            // Everything copied is in redo before the record: waiting for the record's
            // durability makes the whole new space durable too. A temporary table has no
            // record (nothing of it survives a crash).
            if !super::is_temp_space(&def.space_name) {
                let lsn = self
                    .catalog
                    .update_table(&self.engine, &def)
                    .map_err(DbError::from)?;
                self.durable(lsn);
            }
            Ok(r)
        })();
        let (rows, largest_auto) = match copied {
            Ok(r) => r,
            Err(e) => {
                // Nothing names the new space: remove it now (open would, after a crash).
                let _ = self.engine.delete_space(&tmp);
                return Err(e);
            }
        };
        self.engine
            .delete_space(&t.def.space_name)
            .map_err(DbError::from)?;
        self.engine
            .rename_space(&tmp, &def.space_name)
            .map_err(DbError::from)?;
        let had_auto = t.def.auto_increment.is_some();
        let state = open_state(&self.engine, def, Some(&t))?;
        if state.def.auto_increment.is_some() {
            let floor = if had_auto {
                state.autoinc.load(Ordering::Relaxed)
            } else {
                1
            };
            let next = floor
                .max(largest_auto.saturating_add(1))
                .max(auto_increment.unwrap_or(0));
            state.autoinc.store(next, Ordering::Relaxed);
        }
        self.state.write().tables.insert(state.def.id, state);
        tracing::info!(table = %format!("{db}.{name}"), rows, "table rebuilt");
        Ok(Rebuilt { rows })
    }

    /// Changes what a table's definition says without touching its rows or trees: column
    /// and index names, column DEFAULTs, and new columns at the end that carry the value
    /// older records read for them (`Column::instant`: ALTER TABLE's instant ADD COLUMN,
    /// docs/row-format.md, "Instantly added columns"). `def` must be the table's definition
    /// with only those changed: anything that decides an existing record's or a key's bytes
    /// (types, nullability, collations, keys, index columns, instant values) is refused as
    /// `CatalogError::Corrupt` (a caller's bug). One durable record update.
    pub fn alter_definition(&self, db: &str, name: &str, def: catalog::TableDef) -> Result<()> {
        let _ddl = self.ddl.lock();
        let t = self.lookup(db, name)?;
        let old = &t.def;
        let same_shape = def.id == old.id
            && def.space == old.space
            && def.space_name == old.space_name
            && def.root == old.root
            && def.columns.len() >= old.columns.len()
            && def.columns.iter().zip(&old.columns).all(|(a, b)| {
                a.ty == b.ty
                    && a.nullable == b.nullable
                    && a.collation == b.collation
                    && a.members == b.members
                    && a.json == b.json
                    && a.instant == b.instant
            })
            && def.columns[old.columns.len()..]
                .iter()
                .all(|c| c.instant.is_some())
            && def.primary_key == old.primary_key
            && def.auto_increment == old.auto_increment
            && def.next_index_no == old.next_index_no
            && def.rebuilt_at == old.rebuilt_at
            && def.indexes.len() == old.indexes.len()
            && def.indexes.iter().zip(&old.indexes).all(|(a, b)| {
                a.unique == b.unique
                    && a.index_no == b.index_no
                    && a.root == b.root
                    && a.columns == b.columns
            });
        if !same_shape {
            return Err(DbError::Catalog(catalog::CatalogError::Corrupt(format!(
                "{db}.{name}: alter_definition changes more than names, defaults and instant columns"
            ))));
        }
        if super::is_temp_space(&def.space_name) {
            def.validate_schema()?;
        } else {
            def.validate()?;
        }
        let _x = t.dml.write();
        if !super::is_temp_space(&def.space_name) {
            let lsn = self.catalog.update_table(&self.engine, &def)?;
            self.durable(lsn);
        }
        let state = open_state(&self.engine, def, Some(&t))?;
        self.state.write().tables.insert(state.def.id, state);
        Ok(())
    }

    /// `ALTER TABLE … AUTO_INCREMENT = n`: the next value becomes `n`, or one past the
    /// largest value in the table if that is larger (as InnoDB). In memory, like the
    /// counter itself (docs/catalog.md, "AUTO_INCREMENT"): a restart recomputes it.
    pub fn set_auto_increment(&self, db: &str, name: &str, next: u64) -> Result<()> {
        let _ddl = self.ddl.lock();
        let t = self.lookup(db, name)?;
        let Some(c) = t.def.auto_increment else {
            return Ok(());
        };
        let _x = t.dml.write();
        let largest = super::largest_auto_increment(
            &self.engine,
            &t.def,
            &t.layout,
            &t.clustered,
            &t.indexes,
            c,
        )?;
        t.autoinc
            .store(next.max(largest.saturating_add(1)), Ordering::Relaxed);
        Ok(())
    }

    /// Copies the live rows of `old` into `new` (both states of one table, `new` in its own
    /// space): returns the rows copied and the largest AUTO_INCREMENT value among them.
    fn copy_rows<E: From<DbError>>(
        &self,
        old: &super::TableState,
        new: &super::TableState,
        convert: &mut dyn FnMut(Vec<Value>) -> std::result::Result<Vec<Value>, E>,
        progress: &mut dyn FnMut(u64),
    ) -> std::result::Result<(u64, u64), E> {
        let mut n = 0u64;
        let mut largest_auto = 0u64;
        let keep_row_ids = old.layout.has_row_id() && new.layout.has_row_id();
        for e in old.clustered.scan(
            &self.engine,
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward,
        ) {
            let e = e.map_err(DbError::from)?;
            let trx = record::trx_id(&e.value).map_err(DbError::from)?;
            if trx != TrxId(0) && self.trx.is_active(trx) {
                // Invariant 2: the newest version may still roll back.
                return Err(DbError::TableInUse(format!("{}.{}", old.def.db, old.def.name)).into());
            }
            if e.delete_marked {
                // A committed delete waiting for purge: not a row.
                continue;
            }
            let row = blob::decode_row(&self.engine, &old.layout, &e.value)?;
            let row = convert(row)?;
            let row: Vec<Value> = new
                .layout
                .validate(&row)
                .map_err(DbError::from)?
                .into_iter()
                .map(|v| v.into_owned())
                .collect();
            let row_id: Option<RowId> = if !new.layout.has_row_id() {
                None
            } else if keep_row_ids {
                rowid::row_id_of_key(&old.layout, &e.key)?
            } else {
                rowid::next_row_id(new)
            };
            if let Some(c) = new.def.auto_increment {
                if let Some(v) = auto_value(&row[c]) {
                    largest_auto = largest_auto.max(v);
                }
            }
            let w = blob::RowWrite::plan(
                &self.engine,
                new,
                &self.limits,
                &row,
                row_id,
                (TrxId(0), RollPtr(0)),
            )?;
            match w.insert(&new.clustered) {
                Err(DbError::DuplicateKey { .. }) => {
                    return Err(new.duplicate_primary(&row).into())
                }
                r => r?,
            };
            for ix in &new.indexes {
                self.index_insert(ix, &new.def.columns, &row, row_id, TrxId(0), false)?;
            }
            n += 1;
            if n.is_multiple_of(PROGRESS_ROWS) {
                tracing::info!(table = %format!("{}.{}", old.def.db, old.def.name), rows = n, "copying to the rebuilt table");
                progress(n);
            }
        }
        Ok((n, largest_auto))
    }
}

/// An AUTO_INCREMENT column's value as the counter counts it (negative values never
/// raise it).
fn auto_value(v: &Value) -> Option<u64> {
    match v {
        Value::Int(i) => u64::try_from(*i).ok(),
        Value::UInt(u) => Some(*u),
        _ => None,
    }
}
