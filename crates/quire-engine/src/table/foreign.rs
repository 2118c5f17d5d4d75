//! Foreign keys: the constraints in the catalog and their enforcement inside the
//! transaction's row changes, as InnoDB's `row_ins_check_foreign_constraint` does
//! (docs/catalog.md, "Foreign keys"; docs/locking.md, "Foreign keys").
//!
//! Invariants:
//! 1. Each constraint is one catalog record under `0x04` child id, name; the maps in
//!    `State::fks` hold exactly the records, both ways (child → its constraints, parent
//!    name → the constraints naming it), and change only under the DDL mutex after the
//!    record's mtr is durable.
//! 2. A child row is written only after its parent row was found and S-locked (kept to
//!    the end of the transaction): a parent delete waits for the child's transaction, or
//!    the child's insert for the parent delete's.
//! 3. A parent row is deleted (or its referenced columns changed) only after every child
//!    row referencing it was X-locked and either refused (1451), or changed by the
//!    action, in the same transaction and engine call: a failing call rolls its cascades
//!    back with it (`Transaction::statement`), and redo/undo cover them like any change.
//! 4. With `foreign_key_checks` off nothing is checked and nothing cascades; `Db::check`
//!    then finds the child rows left without a parent (`check_foreign_keys`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::txn::{ReadLock, Transaction};
use super::{blob, DbError, DbInner, Result, Table, TableState};
use crate::btree::Direction;
use crate::catalog::{FkAction, ForeignKeyDef};
use crate::row::Value;

/// InnoDB's FK_MAX_CASCADE_DEL: a cascade this deep fails.
pub const MAX_CASCADE_DEPTH: u32 = 15;

/// The constraints, both ways (invariant 1).
#[derive(Default)]
pub(super) struct FkMaps {
    by_child: BTreeMap<(u64, String), Arc<ForeignKeyDef>>,
    by_parent: BTreeMap<(String, String), BTreeSet<(u64, String)>>,
}

impl FkMaps {
    pub(super) fn insert(&mut self, f: ForeignKeyDef) {
        self.by_parent
            .entry((f.parent_db.clone(), f.parent_table.clone()))
            .or_default()
            .insert((f.child, f.name.clone()));
        self.by_child.insert((f.child, f.name.clone()), Arc::new(f));
    }

    pub(super) fn remove(&mut self, child: u64, name: &str) -> Option<Arc<ForeignKeyDef>> {
        let f = self.by_child.remove(&(child, name.to_string()))?;
        let pk = (f.parent_db.clone(), f.parent_table.clone());
        if let Some(set) = self.by_parent.get_mut(&pk) {
            set.remove(&(child, name.to_string()));
            if set.is_empty() {
                self.by_parent.remove(&pk);
            }
        }
        Some(f)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.by_child.is_empty()
    }

    pub(super) fn of_child(&self, child: u64) -> Vec<Arc<ForeignKeyDef>> {
        self.by_child
            .range((child, String::new())..)
            .take_while(|((c, _), _)| *c == child)
            .map(|(_, f)| f.clone())
            .collect()
    }

    pub(super) fn referencing(&self, db: &str, table: &str) -> Vec<Arc<ForeignKeyDef>> {
        self.by_parent
            .get(&(db.to_string(), table.to_string()))
            .into_iter()
            .flatten()
            .filter_map(|k| self.by_child.get(k).cloned())
            .collect()
    }

    pub(super) fn all(&self) -> Vec<Arc<ForeignKeyDef>> {
        self.by_child.values().cloned().collect()
    }
}

/// Column numbers of `names` in `t` (a constraint names columns; ALTER may have moved
/// them). A missing one is a definition the constraint no longer fits.
fn positions(t: &TableState, names: &[String]) -> Result<Vec<usize>> {
    names
        .iter()
        .map(|n| {
            t.def
                .columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(n))
                .ok_or_else(|| {
                    DbError::Catalog(crate::catalog::CatalogError::Invalid(format!(
                        "foreign key column `{n}` is not in table `{}`",
                        t.def.name
                    )))
                })
        })
        .collect()
}

/// Where rows whose columns `cols` equal given values are found: the clustered index
/// when the primary key starts with them, else the first secondary index that does.
#[derive(Clone, Copy)]
enum Access {
    Clustered,
    Secondary(usize),
}

fn access(t: &TableState, cols: &[usize]) -> Option<Access> {
    if t.def.primary_key.len() >= cols.len() && t.def.primary_key[..cols.len()] == *cols {
        return Some(Access::Clustered);
    }
    t.indexes
        .iter()
        .position(|ix| {
            ix.def.columns.len() >= cols.len()
                && ix
                    .def
                    .columns
                    .iter()
                    .zip(cols)
                    .all(|(ic, &c)| ic.column == c && ic.prefix.is_none())
        })
        .map(Access::Secondary)
}

/// Whether `t` has an index (the primary key or another) whose leading columns are
/// `cols`, in order, whole: what a constraint needs on both of its tables.
pub fn has_index_on(def: &crate::catalog::TableDef, cols: &[usize]) -> bool {
    if def.primary_key.len() >= cols.len() && def.primary_key[..cols.len()] == *cols {
        return true;
    }
    def.indexes.iter().any(|ix| {
        ix.columns.len() >= cols.len()
            && ix
                .columns
                .iter()
                .zip(cols)
                .all(|(ic, &c)| ic.column == c && ic.prefix.is_none())
    })
}

fn describe(child: &TableState, f: &ForeignKeyDef) -> String {
    format!(
        "`{}`.`{}`, {}",
        child.def.db,
        child.def.name,
        f.sql(&child.def.db)
    )
}

impl DbInner {
    /// The foreign keys of table `db`.`name` (it is their child), in name order.
    pub fn foreign_keys(&self, db: &str, name: &str) -> Result<Vec<ForeignKeyDef>> {
        let t = self.lookup(db, name)?;
        let st = self.state.read();
        Ok(st
            .fks
            .of_child(t.def.id)
            .into_iter()
            .map(|f| (*f).clone())
            .collect())
    }

    /// The foreign keys that name `db`.`name` as their parent, with their child's
    /// database and name. The table need not exist.
    pub fn referencing(&self, db: &str, name: &str) -> Vec<(String, String, ForeignKeyDef)> {
        let st = self.state.read();
        st.fks
            .referencing(db, name)
            .into_iter()
            .filter_map(|f| {
                let c = st.tables.get(&f.child)?;
                Some((c.def.db.clone(), c.def.name.clone(), (*f).clone()))
            })
            .collect()
    }

    /// Every foreign key with its child's database and name (information_schema).
    pub fn all_foreign_keys(&self) -> Vec<(String, String, ForeignKeyDef)> {
        let st = self.state.read();
        st.fks
            .all()
            .into_iter()
            .filter_map(|f| {
                let c = st.tables.get(&f.child)?;
                Some((c.def.db.clone(), c.def.name.clone(), (*f).clone()))
            })
            .collect()
    }

    /// Adds constraint `f` (its `child` is set from `db`.`table`): one catalog record,
    /// durable before the maps change. The caller (the SQL layer) has checked the columns,
    /// types and indexes, and the existing rows if it wanted to. A name is unique per
    /// database, as in InnoDB (`ForeignKeyExists`).
    pub fn add_foreign_key(&self, db: &str, table: &str, mut f: ForeignKeyDef) -> Result<()> {
        let _ddl = self.ddl.lock();
        let t = self.lookup(db, table)?;
        f.child = t.def.id;
        self.put_fk_locked(db, f)
    }

    fn put_fk_locked(&self, db: &str, f: ForeignKeyDef) -> Result<()> {
        {
            let st = self.state.read();
            let clash = st.fks.all().into_iter().any(|g| {
                g.name.eq_ignore_ascii_case(&f.name)
                    && st.tables.get(&g.child).is_some_and(|c| c.def.db == db)
            });
            if clash {
                return Err(DbError::ForeignKeyExists(f.name.clone()));
            }
        }
        let lsn = self.catalog.put_foreign_key(&self.engine, &f, false)?;
        self.durable(lsn);
        self.any_fks
            .store(true, std::sync::atomic::Ordering::Release);
        self.state.write().fks.insert(f);
        Ok(())
    }

    /// ALTER TABLE … DROP FOREIGN KEY: deletes the record, durable, then the maps.
    pub fn drop_foreign_key(&self, db: &str, table: &str, name: &str) -> Result<()> {
        let _ddl = self.ddl.lock();
        let t = self.lookup(db, table)?;
        let found = self
            .state
            .read()
            .fks
            .of_child(t.def.id)
            .into_iter()
            .find(|f| f.name.eq_ignore_ascii_case(name));
        let Some(f) = found else {
            return Err(DbError::NoSuchForeignKey(name.into()));
        };
        let lsn = self
            .catalog
            .delete_foreign_key(&self.engine, t.def.id, &f.name)?;
        self.durable(lsn);
        self.state.write().fks.remove(t.def.id, &f.name);
        Ok(())
    }

    /// Writes the records of a table being created (before its own record: that is the
    /// commit point; records of a table id with no table are removed at open).
    pub(super) fn put_fks_of_new_table(&self, fks: &[ForeignKeyDef]) -> Result<()> {
        for f in fks {
            let lsn = self.catalog.put_foreign_key(&self.engine, f, false)?;
            self.durable(lsn);
        }
        Ok(())
    }

    /// DROP TABLE, after the table record is gone: its own constraints go (a crash
    /// before this leaves records of no table, removed at open). Constraints naming it as
    /// parent stay, as in InnoDB with `foreign_key_checks=0`.
    pub(super) fn drop_fks_of(&self, child: u64) -> Result<()> {
        let fks = self.state.read().fks.of_child(child);
        for f in fks {
            let lsn = self
                .catalog
                .delete_foreign_key(&self.engine, child, &f.name)?;
            self.durable(lsn);
            self.state.write().fks.remove(child, &f.name);
        }
        Ok(())
    }

    /// RENAME TABLE: the constraints naming the old name as parent name the new one, as
    /// InnoDB renames them in SYS_FOREIGN. One record at a time (see docs/catalog.md for
    /// what a crash in between leaves).
    pub(super) fn rename_parent_refs(
        &self,
        db: &str,
        name: &str,
        to_db: &str,
        to: &str,
    ) -> Result<()> {
        let refs = self.state.read().fks.referencing(db, name);
        for f in refs {
            let mut g = (*f).clone();
            g.parent_db = to_db.into();
            g.parent_table = to.into();
            let lsn = self.catalog.put_foreign_key(&self.engine, &g, true)?;
            self.durable(lsn);
            let mut st = self.state.write();
            st.fks.remove(f.child, &f.name);
            st.fks.insert(g);
        }
        Ok(())
    }
}

impl<'d> Transaction<'d> {
    /// Whether some constraint names `t` as its parent (and checks are on).
    pub(super) fn fk_referenced(&self, t: &TableState) -> bool {
        if !self.fk_checks || !self.db.any_fks.load(std::sync::atomic::Ordering::Acquire) {
            return false;
        }
        let st = self.db.state.read();
        !st.fks.is_empty() && !st.fks.referencing(&t.def.db, &t.def.name).is_empty()
    }

    /// Runs `f` on table `id`'s current state with its DML lock shared (unless it is `held`,
    /// whose lock the caller has: a self-referencing constraint).
    fn with_table<R>(
        &mut self,
        id: u64,
        held: &TableState,
        f: impl FnOnce(&mut Self, &TableState) -> Result<R>,
    ) -> Result<Option<R>> {
        if id == held.def.id {
            return f(self, held).map(Some);
        }
        let get = |db: &DbInner| db.state.read().tables.get(&id).cloned();
        let Some(first) = get(self.db) else {
            return Ok(None);
        };
        // Recursive: this thread may hold it already (a cascade through this table).
        let _s = first.dml.read_recursive();
        let Some(t) = get(self.db) else {
            return Ok(None);
        };
        f(self, &t).map(Some)
    }

    /// Visits, with `lock`, the live rows of `t` whose columns `cols` equal `vals`,
    /// through an index leading with them; `f` gets the clustered key and the row and
    /// says whether to go on. Returns whether any row was visited.
    fn fk_rows(
        &mut self,
        t: &TableState,
        cols: &[usize],
        vals: &[Value],
        lock: ReadLock,
        mut f: impl FnMut(&mut Self, Vec<u8>, Vec<Value>) -> Result<bool>,
    ) -> Result<bool> {
        let Some(acc) = access(t, cols) else {
            return Err(DbError::Catalog(crate::catalog::CatalogError::Invalid(
                format!(
                    "no index of `{}` leads with the foreign key's columns",
                    t.def.name
                ),
            )));
        };
        let db = self.db;
        let mut any = false;
        let upper = std::ops::Bound::Included(vals.to_vec());
        let lower = std::ops::Bound::Included(vals.to_vec());
        match acc {
            Access::Clustered => {
                let (lo, hi) = super::scan::bounds(lower, upper, |v| {
                    let mut k = Vec::new();
                    t.layout.key_layout().encode(v, &db.limits, &mut k)?;
                    Ok(k)
                })?;
                self.locked_range(
                    t,
                    &t.clustered,
                    &lo,
                    &hi,
                    Direction::Forward,
                    lock,
                    |tx, e| {
                        if e.delete_marked {
                            return Ok(true);
                        }
                        let row = db.decode_version(t, &e.value)?;
                        any = true;
                        f(tx, e.key.clone(), row)
                    },
                )?;
            }
            Access::Secondary(i) => {
                let ix = &t.indexes[i];
                let (lo, hi) = super::scan::bounds(lower, upper, |v| {
                    let mut k = Vec::new();
                    ix.layout.encode_search(v, &db.limits, &mut k)?;
                    Ok(k)
                })?;
                self.locked_range(t, &ix.tree, &lo, &hi, Direction::Forward, lock, |tx, e| {
                    if e.delete_marked {
                        return Ok(true);
                    }
                    let n = ix.layout.secondary_part_len(&e.key)?;
                    let key = e.key[n..].to_vec();
                    tx.lock(
                        t.clustered.index_id(),
                        &crate::lock::LockKey::Key(key.clone()),
                        match lock {
                            ReadLock::Shared => crate::lock::LockMode::Shared,
                            ReadLock::Exclusive => crate::lock::LockMode::Exclusive,
                        },
                        crate::lock::LockKind::Record,
                    )?;
                    match db.entry_row(t, ix, e, None)? {
                        Some((k, row)) => {
                            any = true;
                            f(tx, k, row)
                        }
                        None => Ok(true),
                    }
                })?;
            }
        }
        Ok(any)
    }

    /// The child side (invariant 2): each constraint of `t` whose columns in `row` are
    /// all non-NULL (and, for an update, differ from `old`) needs a parent row with those
    /// values, found and S-locked; else 1452.
    pub(super) fn fk_check_child(
        &mut self,
        t: &TableState,
        row: &[Value],
        old: Option<&[Value]>,
    ) -> Result<()> {
        if !self.fk_checks || !self.db.any_fks.load(std::sync::atomic::Ordering::Acquire) {
            return Ok(());
        }
        let fks = {
            let st = self.db.state.read();
            if st.fks.is_empty() {
                return Ok(());
            }
            st.fks.of_child(t.def.id)
        };
        for f in fks {
            let cols = positions(t, &f.columns)?;
            if cols
                .iter()
                .any(|&c| matches!(row.get(c), Some(Value::Null) | None))
            {
                continue;
            }
            if let Some(o) = old {
                if cols.iter().all(|&c| o.get(c) == row.get(c)) {
                    continue;
                }
            }
            let vals: Vec<Value> = cols.iter().map(|&c| row[c].clone()).collect();
            let parent = {
                let st = self.db.state.read();
                st.names
                    .get(&(f.parent_db.clone(), f.parent_table.clone()))
                    .copied()
            };
            let found = match parent {
                None => false,
                Some(pid) => self
                    .with_table(pid, t, |tx, p| {
                        let pcols = positions(p, &f.parent_columns)?;
                        tx.fk_rows(p, &pcols, &vals, ReadLock::Shared, |_, _, _| Ok(false))
                    })?
                    .unwrap_or(false),
            };
            if !found {
                return Err(DbError::NoReferencedRow(describe(t, &f)));
            }
        }
        Ok(())
    }

    /// The parent side (invariant 3): `old` of table `t` is being deleted (`new` None) or
    /// changed to `new`. For each constraint naming `t` whose referenced columns change,
    /// the child rows holding the old values are X-locked and refused, deleted, updated
    /// or set to NULL as the constraint's action says.
    pub(super) fn fk_parent_change(
        &mut self,
        t: &TableState,
        old: &[Value],
        new: Option<&[Value]>,
    ) -> Result<()> {
        if !self.fk_checks || !self.db.any_fks.load(std::sync::atomic::Ordering::Acquire) {
            return Ok(());
        }
        let fks = {
            let st = self.db.state.read();
            if st.fks.is_empty() {
                return Ok(());
            }
            st.fks.referencing(&t.def.db, &t.def.name)
        };
        for f in fks {
            let pcols = positions(t, &f.parent_columns)?;
            if pcols
                .iter()
                .any(|&c| matches!(old.get(c), Some(Value::Null) | None))
            {
                continue;
            }
            if let Some(n) = new {
                if pcols.iter().all(|&c| old.get(c) == n.get(c)) {
                    continue;
                }
            }
            let vals: Vec<Value> = pcols.iter().map(|&c| old[c].clone()).collect();
            let action = if new.is_some() {
                f.on_update
            } else {
                f.on_delete
            };
            let new_vals: Option<Vec<Value>> =
                new.map(|n| pcols.iter().map(|&c| n[c].clone()).collect());
            self.with_table(f.child, t, |tx, c| {
                tx.fk_apply(c, &f, &vals, action, new_vals.as_deref())
            })?;
        }
        Ok(())
    }

    /// Applies `action` of constraint `f` to the rows of child `c` referencing `vals`.
    fn fk_apply(
        &mut self,
        c: &TableState,
        f: &ForeignKeyDef,
        vals: &[Value],
        action: FkAction,
        new_vals: Option<&[Value]>,
    ) -> Result<()> {
        let cols = positions(c, &f.columns)?;
        match action {
            FkAction::Restrict | FkAction::NoAction | FkAction::SetDefault => {
                if self.fk_rows(c, &cols, vals, ReadLock::Shared, |_, _, _| Ok(false))? {
                    return Err(DbError::RowIsReferenced(describe(c, f)));
                }
                Ok(())
            }
            FkAction::Cascade | FkAction::SetNull => {
                let mut keys = Vec::new();
                self.fk_rows(c, &cols, vals, ReadLock::Exclusive, |_, k, _| {
                    keys.push(k);
                    Ok(true)
                })?;
                if keys.is_empty() {
                    return Ok(());
                }
                if self.fk_depth >= MAX_CASCADE_DEPTH {
                    return Err(DbError::CascadeTooDeep(describe(c, f)));
                }
                self.fk_depth += 1;
                let r = self.fk_cascade_rows(c, &cols, keys, action, new_vals);
                self.fk_depth -= 1;
                r
            }
        }
    }

    fn fk_cascade_rows(
        &mut self,
        c: &TableState,
        cols: &[usize],
        keys: Vec<Vec<u8>>,
        action: FkAction,
        new_vals: Option<&[Value]>,
    ) -> Result<()> {
        let handle = Table {
            db: self.db,
            id: c.def.id,
            name: c.full_name.clone(),
            read_columns: None,
        };
        for key in keys {
            // Locked above; a row an earlier cascade of this call removed is skipped.
            let Some(cur) = self.lock_live_row(c, &key)? else {
                continue;
            };
            let old = self.db.decode_version(c, &cur.value)?;
            let delete = action == FkAction::Cascade && new_vals.is_none();
            if delete {
                self.fk_parent_change(c, &old, None)?;
                self.delete_mark(c, &key, &cur, Some(old))?;
            } else {
                let mut row = old.clone();
                for (i, &col) in cols.iter().enumerate() {
                    row[col] = match (action, new_vals) {
                        (FkAction::Cascade, Some(n)) => n[i].clone(),
                        _ => Value::Null,
                    };
                }
                let was = std::mem::replace(&mut self.fk_cascade, true);
                let r = self.update_in(&handle, c, key, row, cur, Some(old));
                self.fk_cascade = was;
                r?;
            }
        }
        Ok(())
    }
}

/// Child rows named per constraint by [`check_foreign_keys`]; the rest are counted.
const ORPHANS_SHOWN: usize = 10;

/// `Db::check`'s part for foreign keys (`quire check`): every child row whose constraint
/// columns are all non-NULL has a parent row with those values, found as the constraint
/// finds it (the parent's index, its collation). A row written with `foreign_key_checks`
/// off may have none (invariant 4), and so would a bug: each is a problem. Reads the
/// newest versions; run with no transaction open (after recovery's rollback), as the rest
/// of the check.
pub(super) fn check_foreign_keys(db: &DbInner) -> Result<Vec<String>> {
    let fks = db.state.read().fks.all();
    let mut problems = Vec::new();
    if fks.is_empty() {
        return Ok(problems);
    }
    let mut tx = db.begin_trx(crate::trx::Isolation::ReadCommitted)?;
    for f in fks {
        let Some(child) = db.table_by_id(f.child) else {
            problems.push(format!(
                "foreign key `{}`: its child table (id {}) does not exist",
                f.name, f.child
            ));
            continue;
        };
        let parent = {
            let st = db.state.read();
            st.names
                .get(&(f.parent_db.clone(), f.parent_table.clone()))
                .copied()
        }
        .and_then(|id| db.table_by_id(id));
        let cols = positions(&child, &f.columns)?;
        let mut orphans = 0usize;
        for e in child.clustered.scan(
            &db.engine,
            std::ops::Bound::Unbounded,
            std::ops::Bound::Unbounded,
            Direction::Forward,
        ) {
            let e = e?;
            if e.delete_marked {
                continue;
            }
            let row = blob::decode_row(&db.engine, &child.layout, &e.value)?;
            if cols
                .iter()
                .any(|&c| matches!(row.get(c), Some(Value::Null) | None))
            {
                continue;
            }
            let vals: Vec<Value> = cols.iter().map(|&c| row[c].clone()).collect();
            let found = match &parent {
                // With checks off a child may name a parent table that does not exist.
                None => false,
                Some(p) => {
                    let pcols = positions(p, &f.parent_columns)?;
                    tx.fk_rows(p, &pcols, &vals, ReadLock::Shared, |_, _, _| Ok(false))?
                }
            };
            if !found {
                orphans += 1;
                if orphans <= ORPHANS_SHOWN {
                    // The values as MySQL prints a key's entry (`7`, `a-1`).
                    let parts: Vec<(usize, Option<u32>)> =
                        cols.iter().map(|&c| (c, None)).collect();
                    problems.push(format!(
                        "foreign key {}: the child row with ({}) has no parent row",
                        describe(&child, &f),
                        super::key_entry(&child.def.columns, &row, &parts)
                    ));
                }
            }
        }
        if orphans > ORPHANS_SHOWN {
            problems.push(format!(
                "foreign key {}: {} more child rows have no parent row",
                describe(&child, &f),
                orphans - ORPHANS_SHOWN
            ));
        }
    }
    tx.rollback()?;
    Ok(problems)
}
