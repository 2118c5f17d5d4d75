//! # Online index builds: the row log (docs/online-ddl.md)
//!
//! [`DbInner::begin_online_index`] starts a build of a secondary index that DML does not
//! wait for: [`OnlineIndex::scan`] reads the clustered index while other calls change it,
//! each such change appends to the table's [`RowLog`] (`DbInner::log_change`), and
//! [`OnlineIndex::catch_up`] / [`OnlineIndex::finish`] apply the log, the last part with the
//! table's DML excluded. The caller (the SQL layer) keeps the transactions that used the
//! table finished at `begin` and at `finish` (its metadata lock, docs/online-ddl.md).
//!
//! Invariants:
//! 1. The log is registered under the table's `dml` lock held exclusively, and every call
//!    that changes a clustered record appends after the change and before it releases its
//!    shared `dml` lock: every change is in the records the scan reads or in the log.
//! 2. Every change logs the entry key (in the new index) of the version it replaces and of
//!    the version it makes, so an entry made from any version the build ever read is at a
//!    key the log lists for its row (the proof: docs/online-ddl.md, "Applying the log").
//! 3. Only the build writes the new tree; no reader sees it before `finish` puts it in the
//!    catalog record, the one durable step: a crash before leaves the old table (the tree's
//!    pages leaked, as a blocking build's), after it the new one.
//! 4. The log stops recording once it passed `max_size` bytes (or a spill write failed):
//!    DML goes on, and the build fails at its next phase (1799, or the I/O error).
//! 5. A build that does not finish (error, interruption, drop) unregisters the log and frees
//!    its tree; the table is as it was.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Seek, SeekFrom, Write};
use std::ops::Bound;
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};

use super::{blob, open_state, rowid, txn, DbError, DbInner, Index, IndexSpec, Result, TableState};
use crate::btree::{BTree, BTreeError, Direction};
use crate::catalog::{self, IndexDef, TableDef, CATALOG_ROOT};
use crate::row::{record, secondary, Column, RowId, SecondaryLayout, TrxId, Value};

/// Log bytes kept in memory before they go to the temporary file.
pub const MEM_BOUND: usize = 1 << 20;

/// `catch_up` stops when a round applied fewer bytes than this, or after this many rounds.
const CATCH_UP_DONE: usize = 64 << 10;
const CATCH_UP_ROUNDS: usize = 8;

/// How an online build is bounded.
#[derive(Debug, Clone, Copy)]
pub struct OnlineOptions {
    /// `innodb_online_alter_log_max_size`: the most log bytes a build may collect.
    pub log_max_size: u64,
    /// Log bytes kept in memory before spilling to a temporary file.
    pub mem_bound: usize,
}

impl Default for OnlineOptions {
    fn default() -> Self {
        OnlineOptions {
            log_max_size: 128 << 20,
            mem_bound: MEM_BOUND,
        }
    }
}

#[derive(Debug)]
enum LogState {
    Recording,
    TooBig,
    Failed(String),
}

struct LogInner {
    mem: Vec<u8>,
    /// The spill file, unlinked at creation: nothing is left after a crash.
    file: Option<std::fs::File>,
    /// Bytes ever appended (the bound of invariant 4 counts them all).
    total: u64,
    /// Bytes ever written to the spill file (`Db::stats`-style observation for tests).
    spilled: u64,
    state: LogState,
}

/// The changes made to a table while one of its indexes is built online, or while it is
/// rebuilt online (`online_rebuild.rs`).
pub(super) struct RowLog {
    /// The new index's layout: each record lists the entry keys of the versions. `None`
    /// for a rebuild, whose records are the clustered key alone (the new table is keyed
    /// the same way, so the key is all the log application needs).
    layout: Option<SecondaryLayout>,
    max_size: u64,
    mem_bound: usize,
    inner: Mutex<LogInner>,
}

impl RowLog {
    pub(super) fn new(layout: Option<SecondaryLayout>, opts: OnlineOptions) -> Self {
        RowLog {
            layout,
            max_size: opts.log_max_size,
            mem_bound: opts.mem_bound.max(1),
            inner: Mutex::new(LogInner {
                mem: Vec::new(),
                file: None,
                total: 0,
                spilled: 0,
                state: LogState::Recording,
            }),
        }
    }

    /// Marks the log failed: the build reports `why` at its next phase (invariant 4).
    fn fail(&self, why: String) {
        let mut g = self.inner.lock();
        if matches!(g.state, LogState::Recording) {
            g.state = LogState::Failed(why);
            g.mem = Vec::new();
            g.file = None;
        }
    }

    /// Appends one record: clustered key `key` and the entry keys `entries`.
    fn append(&self, key: &[u8], entries: &[Vec<u8>]) {
        let mut rec =
            Vec::with_capacity(5 + key.len() + entries.iter().map(|e| e.len() + 2).sum::<usize>());
        rec.extend_from_slice(&(key.len() as u32).to_le_bytes());
        rec.extend_from_slice(key);
        rec.push(entries.len() as u8);
        for e in entries {
            rec.extend_from_slice(&(e.len() as u16).to_le_bytes());
            rec.extend_from_slice(e);
        }
        let mut g = self.inner.lock();
        if !matches!(g.state, LogState::Recording) {
            return;
        }
        g.total += rec.len() as u64;
        if g.total > self.max_size {
            g.state = LogState::TooBig;
            g.mem = Vec::new();
            g.file = None;
            return;
        }
        g.mem.extend_from_slice(&rec);
        if g.mem.len() >= self.mem_bound {
            let g = &mut *g;
            let r = (|| -> std::io::Result<()> {
                if g.file.is_none() {
                    g.file = Some(tempfile::tempfile()?);
                }
                if let Some(f) = g.file.as_mut() {
                    f.write_all(&g.mem)?;
                }
                Ok(())
            })();
            match r {
                Ok(()) => {
                    g.spilled += g.mem.len() as u64;
                    g.mem.clear();
                }
                Err(e) => {
                    g.state = LogState::Failed(format!("online index log spill: {e}"));
                    g.mem = Vec::new();
                    g.file = None;
                }
            }
        }
    }

    /// Everything logged so far (the file's bytes, then memory's), leaving the log empty.
    pub(super) fn drain(&self, index: &str) -> Result<Vec<u8>> {
        let mut g = self.inner.lock();
        match &g.state {
            LogState::Recording => {}
            LogState::TooBig => {
                return Err(DbError::OnlineLogTooBig {
                    index: index.to_string(),
                })
            }
            LogState::Failed(why) => return Err(DbError::OnlineLogFailed(why.clone())),
        }
        let mut out = Vec::new();
        let g = &mut *g;
        if let Some(f) = g.file.as_mut() {
            let r = (|| -> std::io::Result<()> {
                f.seek(SeekFrom::Start(0))?;
                f.read_to_end(&mut out)?;
                f.set_len(0)?;
                f.seek(SeekFrom::Start(0))?;
                Ok(())
            })();
            if let Err(e) = r {
                let why = format!("online index log read: {e}");
                g.state = LogState::Failed(why.clone());
                g.file = None;
                g.mem = Vec::new();
                return Err(DbError::OnlineLogFailed(why));
            }
        }
        out.extend_from_slice(&g.mem);
        g.mem.clear();
        Ok(out)
    }

    pub(super) fn spilled(&self) -> u64 {
        self.inner.lock().spilled
    }
}

/// Clustered key → the entry keys logged for its row.
pub(super) type Pending = BTreeMap<Vec<u8>, BTreeSet<Vec<u8>>>;

/// Reads log records from `bytes` into `into`.
pub(super) fn parse_into(bytes: &[u8], into: &mut Pending) -> Result<()> {
    let bad = || DbError::OnlineLogFailed("a malformed online index log record".into());
    let mut p = bytes;
    let take = |p: &mut &[u8], n: usize| -> Result<Vec<u8>> {
        if p.len() < n {
            return Err(bad());
        }
        let (a, b) = p.split_at(n);
        *p = b;
        Ok(a.to_vec())
    };
    while !p.is_empty() {
        let len = take(&mut p, 4)?;
        let klen = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
        let key = take(&mut p, klen)?;
        let n = take(&mut p, 1)?[0];
        let set = into.entry(key).or_default();
        for _ in 0..n {
            let l = take(&mut p, 2)?;
            let elen = u16::from_le_bytes([l[0], l[1]]) as usize;
            set.insert(take(&mut p, elen)?);
        }
    }
    Ok(())
}

impl TableState {
    /// The row log of an online build of this table, if one runs.
    pub(super) fn row_log(&self) -> Option<Arc<RowLog>> {
        self.online.load_full()
    }
}

impl DbInner {
    /// Logs a change to clustered record `key` of `t` for an online index build, if one
    /// runs: `versions` are the row's values before and after (invariants 1 and 2). A row
    /// the new index cannot encode fails the build, not the change.
    pub(super) fn log_change(&self, t: &TableState, key: &[u8], versions: &[&[Value]]) {
        let Some(log) = t.row_log() else { return };
        let Some(layout) = &log.layout else {
            // A rebuild: the key is the record (`RowLog::layout`).
            log.append(key, &[]);
            return;
        };
        let r = (|| -> Result<Vec<Vec<u8>>> {
            let row_id = rowid::row_id_of_key(&t.layout, key)?;
            let mut out = Vec::with_capacity(versions.len());
            for row in versions {
                out.push(entry_key(layout, &self.limits, row, row_id)?);
            }
            Ok(out)
        })();
        match r {
            Ok(entries) => log.append(key, &entries),
            Err(e) => log.fail(e.to_string()),
        }
    }

    /// Starts an online build of index `spec` on `db`.`table`: the new tree, and the row
    /// log registered with DML excluded for that instant (invariant 1). The DDL mutex is
    /// held until the build ends. The caller keeps no transaction that changed the table
    /// open across this call (the SQL layer's exclusive metadata lock).
    pub fn begin_online_index(
        &self,
        db: &str,
        table: &str,
        spec: IndexSpec,
        opts: OnlineOptions,
    ) -> Result<OnlineIndex<'_>> {
        let ddl = self.ddl.lock();
        catalog::check_name(&spec.name)?;
        let t = self.lookup(db, table)?;
        if t.def.indexes.iter().any(|i| i.name == spec.name) {
            return Err(DbError::IndexExists {
                table: format!("{db}.{table}"),
                index: spec.name,
            });
        }
        let mut def = t.def.clone();
        let ix = IndexDef {
            name: spec.name.clone(),
            unique: spec.unique,
            index_no: def.next_index_no,
            root: CATALOG_ROOT,
            columns: spec.columns,
            usable_from: TrxId(0),
            comment: spec.comment.clone(),
        };
        def.next_index_no += 1;
        let layout = def.index_layout(&t.layout, &ix)?;
        let (tree, _) = BTree::create(&self.engine, def.space, def.index_id(&ix))?;
        let log = Arc::new(RowLog::new(Some(layout.clone()), opts));
        {
            let _x = t.dml.write();
            t.online.store(Some(log.clone()));
        }
        Ok(OnlineIndex {
            db: self,
            _ddl: ddl,
            name: format!("{db}.{table}"),
            t,
            log,
            index: Index {
                def: ix,
                layout,
                tree,
            },
            def,
            deferred: Pending::new(),
            finished: false,
        })
    }
}

/// The entry key of `row` in an index of layout `layout`.
pub(super) fn entry_key(
    layout: &SecondaryLayout,
    limits: &crate::row::RowLimits,
    row: &[Value],
    row_id: Option<RowId>,
) -> Result<Vec<u8>> {
    let mut rec = Vec::new();
    layout.encode(row, row_id, TrxId(0), limits, &mut rec)?;
    Ok(secondary::key(&rec)?.to_vec())
}

/// The newest version of clustered record `key` of `t`: (row, DB_TRX_ID, delete-marked).
/// Its off-page values are read under the chain lock, with the record read again under it
/// (rollback and purge free a version's chains holding it exclusively).
pub(super) fn newest(
    engine: &crate::engine::Engine,
    t: &TableState,
    key: &[u8],
) -> Result<Option<(Vec<Value>, TrxId, bool)>> {
    let Some(cur) = t.clustered.get(engine, key)? else {
        return Ok(None);
    };
    if !record::has_external(&cur.value)? {
        let row = blob::decode_row(engine, &t.layout, &cur.value)?;
        return Ok(Some((row, record::trx_id(&cur.value)?, cur.delete_marked)));
    }
    let _c = t.chains.read();
    let Some(cur) = t.clustered.get(engine, key)? else {
        return Ok(None);
    };
    let row = blob::decode_row(engine, &t.layout, &cur.value)?;
    Ok(Some((row, record::trx_id(&cur.value)?, cur.delete_marked)))
}

/// An index being built online ([`DbInner::begin_online_index`]). Dropping it before
/// [`OnlineIndex::finish`] abandons the build (invariant 5).
pub struct OnlineIndex<'d> {
    db: &'d DbInner,
    _ddl: MutexGuard<'d, ()>,
    name: String,
    t: Arc<TableState>,
    log: Arc<RowLog>,
    index: Index,
    /// The table's definition with the index number taken, the index not yet listed.
    def: TableDef,
    /// Rows a UNIQUE conflict put off to a later round (the versions may have been
    /// uncommitted or changing).
    deferred: Pending,
    finished: bool,
}

impl OnlineIndex<'_> {
    /// Log bytes written to the spill file so far.
    pub fn spilled_bytes(&self) -> u64 {
        self.log.spilled()
    }

    /// The newest version of clustered record `key`: (row, DB_TRX_ID, delete-marked). Its
    /// off-page values are read under the chain lock, with the record read again under it
    /// (rollback and purge free a version's chains holding it exclusively).
    fn newest(&self, key: &[u8]) -> Result<Option<(Vec<Value>, TrxId, bool)>> {
        newest(&self.db.engine, &self.t, key)
    }

    /// Puts the entry of `row` into the new tree. A UNIQUE conflict with another live
    /// entry is `DuplicateKey`, and nothing is inserted.
    fn put(&self, row: &[Value], row_id: Option<RowId>, trx: TrxId, marked: bool) -> Result<()> {
        let engine = &self.db.engine;
        let ix = &self.index;
        let columns: &[Column] = &self.def.columns;
        let mut rec = Vec::new();
        ix.layout
            .encode(row, row_id, trx, &self.db.limits, &mut rec)?;
        let key = secondary::key(&rec)?;
        let val = &rec[3 + key.len()..];
        if ix.def.unique && !marked {
            self.db.check_unique_built(ix, columns, row, key)?;
        }
        match ix.tree.insert(engine, key, val) {
            Ok(_) if !marked => {}
            // Marked: inserted live, then marked (the tree inserts live records). A
            // duplicate: the row's own entry from an earlier read, made current.
            Ok(_) | Err(BTreeError::DuplicateKey) => {
                ix.tree.replace(engine, key, val, marked)?;
            }
            Err(e) => return Err(e.into()),
        }
        Ok(())
    }

    /// Reads every clustered record while DML runs and puts its newest version's entry in
    /// the new tree; a row in a UNIQUE conflict is deferred. `progress` is told the rows
    /// read so far; it returns `false` to stop the build (`Interrupted`).
    pub fn scan(&mut self, progress: &mut dyn FnMut(u64) -> bool) -> Result<u64> {
        let engine = &self.db.engine;
        let mut n = 0u64;
        for e in self.t.clustered.scan(
            engine,
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward,
        ) {
            let e = e?;
            let got = if record::has_external(&e.value)? {
                self.newest(&e.key)?
            } else {
                let row = blob::decode_row(engine, &self.t.layout, &e.value)?;
                Some((row, record::trx_id(&e.value)?, e.delete_marked))
            };
            if let Some((row, trx, marked)) = got {
                let row_id = rowid::row_id_of_key(&self.t.layout, &e.key)?;
                match self.put(&row, row_id, trx, marked) {
                    Err(DbError::DuplicateKey { .. }) => {
                        self.deferred.entry(e.key.clone()).or_default();
                    }
                    r => r?,
                }
            }
            n += 1;
            if !progress(n) {
                return Err(DbError::Interrupted);
            }
            if n.is_multiple_of(100_000) {
                tracing::info!(table = %self.name, index = %self.index.def.name, rows = n, "building index online");
            }
        }
        Ok(n)
    }

    /// One round: takes the log and the deferred rows, removes every entry they list, then
    /// puts each row's newest entry (docs/online-ddl.md). With `last`, a UNIQUE conflict is
    /// the build's error; otherwise the row is deferred. Returns the log bytes applied.
    fn apply_round(&mut self, last: bool) -> Result<usize> {
        let engine = &self.db.engine;
        let bytes = self.log.drain(&self.index.def.name)?;
        let mut rows = std::mem::take(&mut self.deferred);
        parse_into(&bytes, &mut rows)?;
        for keys in rows.values() {
            for k in keys {
                txn::ignore_missing(self.index.tree.delete(engine, k))?;
            }
        }
        for key in rows.into_keys() {
            let Some((row, trx, marked)) = self.newest(&key)? else {
                continue;
            };
            let row_id = rowid::row_id_of_key(&self.t.layout, &key)?;
            match self.put(&row, row_id, trx, marked) {
                Err(DbError::DuplicateKey { .. }) if !last => {
                    self.deferred.entry(key).or_default();
                }
                r => r?,
            }
        }
        Ok(bytes.len())
    }

    /// Applies the log while DML runs, in rounds, until little is left (so `finish`, which
    /// excludes DML, has little to do).
    pub fn catch_up(&mut self) -> Result<()> {
        for _ in 0..CATCH_UP_ROUNDS {
            if self.apply_round(false)? < CATCH_UP_DONE {
                break;
            }
        }
        Ok(())
    }

    /// With the table's DML excluded: applies the rest of the log (a UNIQUE conflict now is
    /// between committed rows: 1062), then lists the index in the catalog record, durably,
    /// and installs the new definition. The caller keeps every transaction that used the
    /// table finished (the SQL layer's exclusive metadata lock).
    pub fn finish(mut self) -> Result<()> {
        let db = self.db;
        let t = self.t.clone();
        let _x = t.dml.write();
        match db.table_by_id(t.def.id) {
            Some(now) if Arc::ptr_eq(&now, &t) => {}
            _ => return Err(DbError::NoSuchTable(self.name.clone())),
        }
        self.apply_round(true)?;
        let mut def = self.def.clone();
        let mut ix = self.index.def.clone();
        ix.root = self.index.tree.root();
        // No transaction that changed the table is open (the caller's lock): every version
        // is committed, and a view made from now on sees them all; an older view may miss
        // some and must not read through the index (1412).
        ix.usable_from = db.trx.reserve_id();
        def.indexes.push(ix);
        let lsn = db.catalog.update_table(&db.engine, &def)?;
        db.durable(lsn);
        let state = open_state(&db.engine, def, Some(&t))?;
        db.state.write().tables.insert(t.def.id, state);
        self.finished = true;
        t.online.store(None);
        Ok(())
    }
}

impl Drop for OnlineIndex<'_> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        // Invariant 5. DML that loaded the log before this may still append: harmless.
        self.t.online.store(None);
        if let Err(e) = self.index.tree.drop_tree(&self.db.engine) {
            tracing::warn!(table = %self.name, index = %self.index.def.name, error = %e, "could not free an abandoned online index build");
        }
    }
}
