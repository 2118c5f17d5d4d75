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
        // Invariant 3: a view that sees this id was made after the copy began.
        let mark = self.trx.reserve_id();
        let mut def = rebuilt_def(&t.def, spec, mark)?;
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
        let state = open_state(&self.engine, def, Some(&t))?;
        set_rebuilt_autoinc(&t, &state, largest_auto, auto_increment);
        self.state.write().tables.insert(state.def.id, state);
        tracing::info!(table = %format!("{db}.{name}"), rows, "table rebuilt");
        Ok(Rebuilt { rows })
    }

    /// Changes what a table's definition says without touching its rows or trees: column
    /// and index names, column DEFAULTs, the columns' order, columns added anywhere that
    /// carry the value older records read for them (`Column::instant`), and columns
    /// dropped, whose slots stay in the records as ghosts (ALTER TABLE's instant ADD, DROP
    /// and reordering of columns: docs/row-format.md, "Instantly added columns" and
    /// "Instantly dropped and reordered columns"). `def` is the new definition and
    /// `sources[j]` the old column that its column `j` is (`None`: added). Anything that
    /// decides an existing record's or a key's bytes (types, nullability, collations, keys,
    /// index columns, instant values) must stay, and a dropped column must be in no key or
    /// kept index; otherwise `CatalogError::Corrupt` (a caller's bug). Indexes `def` no
    /// longer lists are dropped. `def.dropped` and
    /// `def.slot_order` are computed here. One durable record update.
    pub fn alter_definition(
        &self,
        db: &str,
        name: &str,
        mut def: catalog::TableDef,
        sources: &[Option<usize>],
    ) -> Result<()> {
        let _ddl = self.ddl.lock();
        let t = self.lookup(db, name)?;
        let old = &t.def;
        let refuse = |why: &str| {
            DbError::Catalog(catalog::CatalogError::Corrupt(format!(
                "{db}.{name}: alter_definition {why}"
            )))
        };
        // Where each old column went: its new position, or None (dropped).
        let mut new_pos: Vec<Option<usize>> = vec![None; old.columns.len()];
        if sources.len() != def.columns.len() {
            return Err(refuse("needs a source for every column"));
        }
        for (j, (src, c)) in sources.iter().zip(&def.columns).enumerate() {
            match *src {
                Some(i) => {
                    let (Some(o), Some(slot)) = (old.columns.get(i), new_pos.get_mut(i)) else {
                        return Err(refuse("names an old column that does not exist"));
                    };
                    let same = c.ty == o.ty
                        && c.nullable == o.nullable
                        && c.collation == o.collation
                        && c.members == o.members
                        && c.json == o.json
                        && c.instant == o.instant;
                    if slot.is_some() || !same {
                        return Err(refuse("changes a kept column's type or instant value"));
                    }
                    *slot = Some(j);
                }
                None if c.instant.is_some() => {}
                None => return Err(refuse("adds a column without its instant value")),
            }
        }
        let moved = |c: usize| new_pos.get(c).copied().flatten();
        let same_keys = old
            .primary_key
            .iter()
            .map(|&c| moved(c))
            .eq(def.primary_key.iter().map(|&c| Some(c)))
            && old.auto_increment.and_then(moved) == def.auto_increment
            && def.indexes.iter().all(|a| {
                let Some(b) = old.indexes.iter().find(|b| b.index_no == a.index_no) else {
                    return false;
                };
                a.unique == b.unique
                    && a.index_no == b.index_no
                    && a.root == b.root
                    && a.columns.len() == b.columns.len()
                    && a.columns.iter().zip(&b.columns).all(|(x, y)| {
                        Some(x.column) == moved(y.column)
                            && x.prefix == y.prefix
                            && x.descending == y.descending
                    })
            });
        let same_shape = def.id == old.id
            && def.space == old.space
            && def.space_name == old.space_name
            && def.root == old.root
            && def.next_index_no == old.next_index_no
            && def.rebuilt_at == old.rebuilt_at;
        if !same_keys || !same_shape {
            return Err(refuse(
                "changes more than names, defaults, column order and instant columns",
            ));
        }
        // The physical side: the old slots keep their places, each naming its column's
        // new index in `columns ++ dropped`; the dropped columns join the ghosts; the
        // added columns' slots come last.
        let old_order: Vec<usize> = match old.slot_order.is_empty() {
            true => old.layout()?.slot_columns(),
            false => old.slot_order.clone(),
        };
        def.dropped = old.dropped.clone();
        let mut ghost_of_old = vec![None; old.columns.len()];
        for (i, c) in old.columns.iter().enumerate() {
            if new_pos[i].is_none() {
                ghost_of_old[i] = Some(def.dropped.len());
                def.dropped.push(c.clone());
            }
        }
        let n = def.columns.len();
        let mut order = Vec::with_capacity(old_order.len() + sources.len());
        for c in old_order {
            order.push(match c.checked_sub(old.columns.len()) {
                Some(d) => n + d,
                None => match (new_pos[c], ghost_of_old[c]) {
                    (Some(j), _) => j,
                    (None, Some(g)) => n + g,
                    (None, None) => return Err(refuse("lost a slot")),
                },
            });
        }
        order.extend((0..n).filter(|&j| sources[j].is_none()));
        // The default order is kept implicit (a version 3 record an older Quire reads).
        def.slot_order = Vec::new();
        let plain = def.dropped.is_empty()
            && def.layout().ok().map(|l| l.slot_columns()).as_ref() == Some(&order);
        if !plain {
            def.slot_order = order;
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
        // Indexes the definition no longer lists (an index of a dropped column alone): their
        // trees go after the durable record, as `drop_index` does; a crash in between
        // leaves pages that `check` reports as leaked.
        let gone: Vec<_> = t
            .indexes
            .iter()
            .filter(|ix| !def.indexes.iter().any(|d| d.index_no == ix.def.index_no))
            .map(|ix| ix.tree)
            .collect();
        let state = open_state(&self.engine, def, Some(&t))?;
        self.state.write().tables.insert(state.def.id, state);
        for tree in gone {
            let lsn = tree.drop_tree(&self.engine)?;
            self.durable(lsn);
        }
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

/// AUTO_INCREMENT of a rebuilt table `new` (old state `old`): the largest of the old
/// counter, the largest value copied + 1 and ALTER's `AUTO_INCREMENT = n`.
pub(super) fn set_rebuilt_autoinc(
    old: &super::TableState,
    new: &super::TableState,
    largest_auto: u64,
    auto_increment: Option<u64>,
) {
    if new.def.auto_increment.is_none() {
        return;
    }
    let floor = if old.def.auto_increment.is_some() {
        new.autoinc.load(Ordering::Relaxed)
    } else {
        1
    };
    let next = floor
        .max(largest_auto.saturating_add(1))
        .max(auto_increment.unwrap_or(0));
    new.autoinc.store(next, Ordering::Relaxed);
}

/// The definition a rebuild of the table of `old` gives it: `spec`'s columns, keys and
/// indexes (each index under a number the old space never used, usable from `mark`), the
/// rebuild mark `mark`, nothing instant or dropped; validated, no file touched yet.
pub(super) fn rebuilt_def(
    old: &catalog::TableDef,
    spec: TableSpec,
    mark: TrxId,
) -> Result<catalog::TableDef> {
    let mut def = old.clone();
    def.columns = spec.columns;
    // Every copied record holds every column: nothing is instant any more.
    for c in &mut def.columns {
        c.instant = None;
    }
    def.dropped.clear();
    def.slot_order.clear();
    def.primary_key = spec.primary_key;
    def.auto_increment = spec.auto_increment;
    def.comment = spec.comment;
    def.checks = spec.checks;
    def.collation = spec.collation;
    // Every index of the new space gets a number the old space never used, so a page of
    // either names one index only (index ids are `table id << 16 | number`).
    def.indexes = Vec::new();
    def.rebuilt_at = mark;
    for ix in spec.indexes {
        def.indexes.push(IndexDef {
            name: ix.name,
            unique: ix.unique,
            index_no: def.next_index_no,
            root: CATALOG_ROOT,
            columns: ix.columns,
            usable_from: mark,
            comment: ix.comment,
        });
        def.next_index_no = def.next_index_no.checked_add(1).ok_or_else(|| {
            DbError::Catalog(catalog::CatalogError::Corrupt(format!(
                "{}.{}: index numbers exhausted",
                old.db, old.name
            )))
        })?;
    }
    // Validate before touching any file (a temporary table's names are the engine's).
    if super::is_temp_space(&def.space_name) {
        def.validate_schema().map_err(DbError::from)?;
    } else {
        def.validate().map_err(DbError::from)?;
    }
    Ok(def)
}

/// An AUTO_INCREMENT column's value as the counter counts it (negative values never
/// raise it).
pub(super) fn auto_value(v: &Value) -> Option<u64> {
    match v {
        Value::Int(i) => u64::try_from(*i).ok(),
        Value::UInt(u) => Some(*u),
        _ => None,
    }
}
