//! # Online table rebuilds (docs/online-ddl.md, "Table rebuilds")
//!
//! [`DbInner::begin_online_rebuild`] starts a rebuild of a table (ALTER TABLE's INPLACE
//! rebuild: columns added, dropped or reordered with keys, NULL-ability, FORCE, index
//! changes together) that DML does not wait for. It is the blocking rebuild of `alter.rs`
//! (a new space `<space>~alter`, one durable catalog-record update that switches) with the
//! online index build's row log (`online.rs`): [`OnlineRebuild::scan`] copies the newest
//! version of every row while other calls change the old table, each change appends its
//! clustered key to the log, and [`OnlineRebuild::catch_up`] / [`OnlineRebuild::finish`]
//! apply the log, the last part with the table's DML excluded. The caller keeps the
//! transactions that used the table finished at `begin` and at `finish` (the SQL layer's
//! metadata lock).
//!
//! Invariants:
//! 1. A logged key is the row's clustered key in the old table. When the new table is keyed
//!    the same way (the same primary-key columns, types and collations, or both on
//!    DB_ROW_ID, kept) it names the row in both, and every row put is checked to have it.
//!    When the primary key changes, a **key map** (a B-tree in the new space that no record
//!    names, old key → new key, written with every row put and removed with it) finds the
//!    new table's row of an old key; it is freed before the switch. A rebuild from a
//!    primary key to DB_ROW_ID is not done online (MariaDB copies for it too).
//! 2. The log is registered under the table's `dml` lock held exclusively, and every call
//!    that changes a clustered record appends its key after the change and before it
//!    releases its shared `dml` lock: every change is in the records the scan reads or in
//!    the log (`online.rs`, invariant 1).
//! 3. After the scan and after each round, for every key K neither logged since nor
//!    deferred, the new table holds exactly the conversion of K's newest version (nothing
//!    if it is absent or delete-marked); a deferred key (it met a UNIQUE conflict, or its
//!    uncommitted version did not convert) has no row in the new table. A committed
//!    version that does not convert fails the rebuild at once, as InnoDB's scan does. A
//!    round removes every logged or deferred key's row first, then puts each one's newest
//!    version again.
//! 4. Only the rebuild writes the new space, and no record names it before `finish`'s
//!    catalog update: a crash before leaves the old table (open deletes the orphan), after
//!    it the new one (as the blocking rebuild, `alter.rs` invariant 1).
//! 5. The rebuild mark (`TableDef::rebuilt_at`) is reserved in `finish`, when no
//!    transaction that changed the table is open: a view that sees it sees every version
//!    the new table holds; an older one is refused (1412), and purge skips the undo of
//!    every transaction older than it (their changes are in the copy, without history).
//! 6. A rebuild that does not finish (error, interruption, drop) unregisters the log and
//!    deletes the new space; the table is as it was.

use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::Arc;

use parking_lot::MutexGuard;

use super::alter::{auto_value, rebuilt_def, set_rebuilt_autoinc, Rebuilt};
use super::online::{self, newest, parse_into, Pending, RowLog};
use super::{blob, open_state, rowid, txn, DbError, DbInner, TableSpec, TableState};
use crate::btree::{BTree, Direction};
use crate::catalog::{self, TableDef};
use crate::row::{record, Column, RollPtr, RowId, TrxId, Value};

/// `catch_up` stops when a round applied fewer log bytes than this, or after this many
/// rounds (as the index build's).
const CATCH_UP_DONE: usize = 64 << 10;
const CATCH_UP_ROUNDS: usize = 8;

/// The name the log's overflow error gives: a rebuild's log is the clustered index's.
const LOG_INDEX: &str = "PRIMARY";

/// What putting one row into the new table did.
enum Put {
    Done,
    /// It met a UNIQUE conflict, or its uncommitted version did not convert; a later round
    /// tries again.
    Deferred,
}

impl DbInner {
    /// Starts an online rebuild of `db`.`name` with the schema `spec` (module doc): the new
    /// space and trees, and the row log registered with DML excluded for that instant. The
    /// DDL mutex is held until the rebuild ends. `keyed_alike` says each primary-key column
    /// of `spec` is the old one at its place, unconverted (the caller knows which column
    /// is which); otherwise, or when the types differ, the rebuild keeps a key map
    /// (invariant 1); a table that loses its primary key (to DB_ROW_ID) is refused with
    /// `CatalogError::Corrupt`, a caller's bug: use [`DbInner::rebuild_table`].
    /// `auto_increment` is ALTER's `AUTO_INCREMENT = n`. The
    /// caller keeps no transaction that changed the table open across this call.
    pub fn begin_online_rebuild(
        &self,
        db: &str,
        name: &str,
        spec: TableSpec,
        keyed_alike: bool,
        auto_increment: Option<u64>,
        opts: online::OnlineOptions,
    ) -> super::Result<OnlineRebuild<'_>> {
        let ddl = self.ddl.lock();
        let t = self.lookup(db, name)?;
        let refuse = |why: &str| {
            DbError::Catalog(catalog::CatalogError::Corrupt(format!(
                "{db}.{name}: online rebuild {why}"
            )))
        };
        if super::is_temp_space(&t.def.space_name) {
            return Err(refuse("of a temporary table"));
        }
        // The mark is reserved at the end (invariant 5).
        let mut def = rebuilt_def(&t.def, spec, TrxId(0))?;
        let same_key = keyed_alike && same_clustered_key(&t.def, &def.columns, &def.primary_key);
        if def.primary_key.is_empty() && !t.def.primary_key.is_empty() {
            return Err(refuse("from a primary key to DB_ROW_ID"));
        }
        // The key map's index number: never used by an index of the table (invariant 1).
        let map_no = def.next_index_no;
        if !same_key {
            def.next_index_no = def
                .next_index_no
                .checked_add(1)
                .ok_or_else(|| refuse("has no index number left for its key map"))?;
        }
        // `~` never occurs in a name: the temporary name collides with no table.
        let tmp = format!("{}~alter", def.space_name);
        def.space = self.engine.create_space(&tmp)?;
        let new = (|| -> super::Result<(Arc<TableState>, Option<BTree>)> {
            self.create_trees(&mut def)?;
            let map = if same_key {
                None
            } else {
                let id = def.id << 16 | u64::from(map_no);
                Some(BTree::create(&self.engine, def.space, id)?.0)
            };
            Ok((open_state(&self.engine, def, Some(&t))?, map))
        })();
        let (new, map) = match new {
            Ok(n) => n,
            Err(e) => {
                let _ = self.engine.delete_space(&tmp);
                return Err(e);
            }
        };
        let log = Arc::new(RowLog::new(None, opts));
        {
            let _x = t.dml.write();
            t.online.store(Some(log.clone()));
        }
        tracing::info!(table = %format!("{db}.{name}"), "online rebuild started");
        Ok(OnlineRebuild {
            db: self,
            _ddl: ddl,
            name: format!("{db}.{name}"),
            t,
            new,
            tmp,
            log,
            map,
            auto_increment,
            deferred: BTreeSet::new(),
            largest_auto: 0,
            rows: 0,
            finished: false,
        })
    }
}

/// Whether a table of columns `columns` and primary key `primary_key` is keyed as the table
/// `old` (invariant 1): the same number of primary-key columns, each of the same type,
/// collation and NULL-ability as the old one at its place, or both on DB_ROW_ID (each
/// row's key is then checked to be the same bytes: `put`).
fn same_clustered_key(old: &TableDef, columns: &[Column], primary_key: &[usize]) -> bool {
    old.primary_key.len() == primary_key.len()
        && old.primary_key.iter().zip(primary_key).all(|(&o, &n)| {
            match (old.columns.get(o), columns.get(n)) {
                (Some(o), Some(n)) => {
                    o.ty == n.ty
                        && o.collation == n.collation
                        && o.members == n.members
                        && o.nullable == n.nullable
                }
                _ => false,
            }
        })
}

/// A table being rebuilt online ([`DbInner::begin_online_rebuild`]). Dropping it before
/// [`OnlineRebuild::finish`] abandons the rebuild (invariant 6).
pub struct OnlineRebuild<'d> {
    db: &'d DbInner,
    _ddl: MutexGuard<'d, ()>,
    name: String,
    /// The table as it is (DML runs on it).
    t: Arc<TableState>,
    /// The new space's table, installed by `finish`.
    new: Arc<TableState>,
    /// The new space's name until the switch.
    tmp: String,
    log: Arc<RowLog>,
    /// Old clustered key → new clustered key, when the primary key changes (invariant 1).
    map: Option<BTree>,
    auto_increment: Option<u64>,
    /// Keys whose rows a conversion error or a UNIQUE conflict put off (invariant 3).
    deferred: BTreeSet<Vec<u8>>,
    largest_auto: u64,
    /// Rows in the new table.
    rows: u64,
    finished: bool,
}

type Convert<'c, E> = dyn FnMut(Vec<Value>) -> std::result::Result<Vec<Value>, E> + 'c;

impl OnlineRebuild<'_> {
    /// Log bytes written to the spill file so far.
    pub fn spilled_bytes(&self) -> u64 {
        self.log.spilled()
    }

    /// Removes the row with clustered key `key` from the new table, if it has one: its
    /// secondary entries, then the record and its chains.
    fn remove(&mut self, old_key: &[u8]) -> super::Result<()> {
        let db = self.db;
        let engine = &db.engine;
        let new = self.new.clone();
        let mapped;
        let key: &[u8] = match &self.map {
            None => old_key,
            Some(m) => {
                let Some(e) = m.get(engine, old_key)? else {
                    return Ok(());
                };
                m.delete(engine, old_key)?;
                mapped = e.value;
                &mapped
            }
        };
        let Some(cur) = new.clustered.get(engine, key)? else {
            return Ok(());
        };
        let row = blob::decode_row(engine, &new.layout, &cur.value)?;
        let row_id = rowid::row_id_of_key(&new.layout, key)?;
        for ix in &new.indexes {
            let k = online::entry_key(&ix.layout, &db.limits, &row, row_id)?;
            txn::ignore_missing(ix.tree.delete(engine, &k))?;
        }
        // The chain lock is the old table's too (shared state): taken only when needed.
        let _c = record::has_external(&cur.value)?.then(|| new.chains.write());
        blob::delete(engine, &new, key, &cur.value)?;
        self.rows = self.rows.saturating_sub(1);
        Ok(())
    }

    /// Converts `row` (the old table's newest version of `key`, written by `trx`) and puts
    /// it into the new table. A UNIQUE conflict defers the row (the entry it meets may be
    /// stale), and so does a conversion error of an uncommitted version (it may roll
    /// back); with `last`, or for a committed version's conversion, they are the rebuild's
    /// error (1062 for a conflict), as InnoDB's scan of committed rows fails at once.
    fn put<E: From<DbError>>(
        &mut self,
        key: &[u8],
        (row, trx): (Vec<Value>, TrxId),
        convert: &mut Convert<'_, E>,
        last: bool,
    ) -> std::result::Result<Put, E> {
        let db = self.db;
        let engine = &db.engine;
        let row = match convert(row) {
            Ok(r) => r,
            Err(_) if !last && trx != TrxId(0) && db.trx.is_active(trx) => {
                return Ok(Put::Deferred)
            }
            Err(e) => return Err(e),
        };
        let new = self.new.clone();
        let row: Vec<Value> = new
            .layout
            .validate(&row)
            .map_err(DbError::from)?
            .into_iter()
            .map(|v| v.into_owned())
            .collect();
        // Both on DB_ROW_ID: the row keeps its id (`begin` refuses a new DB_ROW_ID).
        let row_id: Option<RowId> = if new.layout.has_row_id() {
            rowid::row_id_of_key(&self.t.layout, key)?
        } else {
            None
        };
        let mut k = Vec::new();
        new.layout
            .encode_key(&row, row_id, &db.limits, &mut k)
            .map_err(DbError::from)?;
        // Invariant 1, checked on every row: the conversion kept the key's values.
        if self.map.is_none() && k != key {
            return Err(DbError::Catalog(catalog::CatalogError::Corrupt(format!(
                "{}: an online rebuild changed a row's clustered key",
                self.name
            )))
            .into());
        }
        // A new primary key may meet another row's, which may be stale: as UNIQUE.
        let taken = self.map.is_some()
            && new
                .clustered
                .get(engine, &k)
                .map_err(DbError::from)?
                .is_some();
        if taken {
            if !last {
                return Ok(Put::Deferred);
            }
            return Err(new.duplicate_primary(&row).into());
        }
        // Every UNIQUE check before any write: a deferred row leaves nothing behind.
        for ix in new.indexes.iter().filter(|ix| ix.def.unique) {
            let entry = online::entry_key(&ix.layout, &db.limits, &row, row_id)?;
            match db.check_unique_built(ix, &new.def.columns, &row, &entry) {
                Err(DbError::DuplicateKey { .. }) if !last => return Ok(Put::Deferred),
                r => r?,
            }
        }
        let w = blob::RowWrite::plan(
            engine,
            &new,
            &db.limits,
            &row,
            row_id,
            (TrxId(0), RollPtr(0)),
        )?;
        match w.insert(&new.clustered) {
            Err(DbError::DuplicateKey { .. }) => return Err(new.duplicate_primary(&row).into()),
            r => r?,
        };
        for ix in &new.indexes {
            db.index_insert(ix, &new.def.columns, &row, row_id, TrxId(0), false)?;
        }
        if let Some(m) = &self.map {
            m.insert(engine, key, &k).map_err(DbError::from)?;
        }
        if let Some(c) = new.def.auto_increment {
            if let Some(v) = row.get(c).and_then(auto_value) {
                self.largest_auto = self.largest_auto.max(v);
            }
        }
        self.rows += 1;
        Ok(Put::Done)
    }

    /// Copies every row's newest version while DML runs; a row that meets a UNIQUE conflict
    /// or whose uncommitted version does not convert is deferred (`put`). `progress` is told the records read so far; it returns `false` to stop the
    /// rebuild (`Interrupted`).
    pub fn scan<E: From<DbError>>(
        &mut self,
        convert: &mut Convert<'_, E>,
        progress: &mut dyn FnMut(u64) -> bool,
    ) -> std::result::Result<u64, E> {
        let db = self.db;
        let engine = &db.engine;
        let t = self.t.clone();
        let mut n = 0u64;
        for e in t.clustered.scan(
            engine,
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward,
        ) {
            let e = e.map_err(DbError::from)?;
            n += 1;
            if !progress(n) {
                return Err(DbError::Interrupted.into());
            }
            if n.is_multiple_of(100_000) {
                tracing::info!(table = %self.name, rows = n, "rebuilding online");
            }
            if e.delete_marked {
                // A delete, committed or not: no row (a rollback logs the key).
                continue;
            }
            let version = if record::has_external(&e.value).map_err(DbError::from)? {
                match newest(engine, &t, &e.key)? {
                    Some((row, trx, false)) => (row, trx),
                    _ => continue,
                }
            } else {
                let trx = record::trx_id(&e.value).map_err(DbError::from)?;
                (blob::decode_row(engine, &t.layout, &e.value)?, trx)
            };
            if let Put::Deferred = self.put(&e.key, version, convert, false)? {
                self.deferred.insert(e.key);
            }
        }
        Ok(n)
    }

    /// One round: takes the log and the deferred keys, removes each one's row from the new
    /// table, then puts each one's newest version (invariant 3). With `last` the table's DML
    /// is excluded and every version is committed: a conversion error or a UNIQUE conflict
    /// is the rebuild's error. Returns the log bytes applied.
    fn apply_round<E: From<DbError>>(
        &mut self,
        convert: &mut Convert<'_, E>,
        last: bool,
    ) -> std::result::Result<usize, E> {
        let db = self.db;
        let engine = &db.engine;
        let bytes = self.log.drain(LOG_INDEX)?;
        let mut logged = Pending::new();
        parse_into(&bytes, &mut logged)?;
        let mut keys = std::mem::take(&mut self.deferred);
        keys.extend(logged.into_keys());
        for k in &keys {
            self.remove(k)?;
        }
        let t = self.t.clone();
        for k in keys {
            let Some((row, trx, marked)) = newest(engine, &t, &k)? else {
                continue;
            };
            if last && trx != TrxId(0) && db.trx.is_active(trx) {
                // Through SQL the metadata lock rules this out; through the embedded API
                // the version may still roll back.
                return Err(DbError::TableInUse(self.name.clone()).into());
            }
            if marked {
                continue;
            }
            if let Put::Deferred = self.put(&k, (row, trx), convert, last)? {
                self.deferred.insert(k);
            }
        }
        Ok(bytes.len())
    }

    /// Applies the log while DML runs, in rounds, until little is left (so `finish`, which
    /// excludes DML, has little to do).
    pub fn catch_up<E: From<DbError>>(
        &mut self,
        convert: &mut Convert<'_, E>,
    ) -> std::result::Result<(), E> {
        for _ in 0..CATCH_UP_ROUNDS {
            if self.apply_round(convert, false)? < CATCH_UP_DONE {
                break;
            }
        }
        Ok(())
    }

    /// With the table's DML excluded: applies the rest of the log (an error now is between
    /// committed rows), reserves the rebuild mark (invariant 5), switches the table to the
    /// new space with one durable record update, and installs the new definition. The
    /// caller keeps every transaction that used the table finished.
    pub fn finish<E: From<DbError>>(
        mut self,
        convert: &mut Convert<'_, E>,
    ) -> std::result::Result<Rebuilt, E> {
        let db = self.db;
        let t = self.t.clone();
        let _x = t.dml.write();
        match db.table_by_id(t.def.id) {
            Some(now) if Arc::ptr_eq(&now, &t) => {}
            _ => return Err(DbError::NoSuchTable(self.name.clone()).into()),
        }
        self.apply_round(convert, true)?;
        // The key map's pages go back to the new space before the record names it.
        if let Some(m) = self.map.take() {
            m.drop_tree(&db.engine).map_err(DbError::from)?;
        }
        let mark = db.trx.reserve_id();
        let mut def = self.new.def.clone();
        def.rebuilt_at = mark;
        for ix in &mut def.indexes {
            ix.usable_from = mark;
        }
        // Everything copied is in redo before the record: waiting for the record's
        // durability makes the whole new space durable too.
        let lsn = db
            .catalog
            .update_table(&db.engine, &def)
            .map_err(DbError::from)?;
        db.durable(lsn);
        // From here the record names the new space: it must not be deleted (invariant 4).
        self.finished = true;
        t.online.store(None);
        db.engine
            .delete_space(&t.def.space_name)
            .map_err(DbError::from)?;
        db.engine
            .rename_space(&self.tmp, &def.space_name)
            .map_err(DbError::from)?;
        let state = open_state(&db.engine, def, Some(&t))?;
        set_rebuilt_autoinc(&t, &state, self.largest_auto, self.auto_increment);
        db.state.write().tables.insert(state.def.id, state);
        tracing::info!(table = %self.name, rows = self.rows, "table rebuilt online");
        Ok(Rebuilt { rows: self.rows })
    }
}

impl Drop for OnlineRebuild<'_> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        // Invariant 6. DML that loaded the log before this may still append: harmless.
        self.t.online.store(None);
        if let Err(e) = self.db.engine.delete_space(&self.tmp) {
            tracing::warn!(table = %self.name, error = %e, "could not delete an abandoned online rebuild's space");
        }
    }
}
