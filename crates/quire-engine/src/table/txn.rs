//! # Transactions: row locks, undo, MVCC reads, commit and rollback
//!
//! A [`Transaction`] changes rows under X row locks on their clustered keys, writing an
//! undo record before each change, and reads through a [`ReadView`]: the version of each
//! row its snapshot sees, rebuilt from the DB_ROLL_PTR chain (docs/transactions.md).
//!
//! One row change, in order (each step one mtr):
//! ```text
//!   X lock (clustered index, key)           lock manager, may wait / deadlock / time out
//!   undo record: INSERT key, or UPDATE      undo log of the transaction (UndoSys::append)
//!     (op, revived secondary entries, the old record)
//!   clustered record: new version           DB_TRX_ID = us, DB_ROLL_PTR = that record;
//!     (or delete mark) in one mtr           a new version always gets fresh BLOB chains
//!   secondary entries: mark the old key's,  entry DB_TRX_ID = us
//!     insert (or revive) the new key's
//! ```
//! Undo is applied newest first, secondary entries before the clustered record, and only
//! while the clustered record still carries this transaction's id and this undo record's
//! roll pointer: so applying an undo record twice (a crash during rollback) is harmless.
//!
//! Invariants:
//! 1. A transaction changes a row only while holding its X lock on the clustered key, and
//!    keeps it until it ends; so the current version of a row it locked is committed or
//!    its own, and no other transaction changes that row's secondary entries (they contain
//!    its key). Purge takes no lock: it only removes what every view sees as gone (an
//!    entry delete-marked by a purged transaction, which may vanish under a writer about
//!    to revive it) and never a record whose key is locked (docs/purge.md).
//! 2. Every version some open view may need is reachable: the clustered record, then the
//!    DB_ROLL_PTR chain through update undo records, which purge removes only once every
//!    view sees the transaction that wrote them (`TrxSys::purge_limit`).
//! 3. A secondary entry's DB_TRX_ID is the last transaction that inserted, revived or
//!    marked it. An unmarked entry whose id a view sees belongs to the version that view
//!    sees; a marked one whose id it sees belongs to none (lesson 4: the common case needs
//!    no clustered lookup to decide).
//! 4. The undo record of a change is durable no later than the change (it is an earlier
//!    mtr), so recovery can always roll an active transaction back.
//! 5. A call that fails is rolled back to where it started, and `rollback_statement` to
//!    where its statement scope began; a deadlock rolls back the whole transaction, which
//!    then only accepts `rollback` (or drop).

use std::ops::Bound;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::scan::IndexRows;
use super::{
    blob, rowid, scan, DbError, DbInner, Index, Result, RowHandle, Rows, Table, TableState,
};
use crate::btree::{BTree, Direction, Entry};
use crate::lock::{LockError, LockKey, LockKind, LockMode, TrxLocks};
use crate::page::Lsn;
use crate::row::{record, secondary, RollPtr, RowError, RowId, TrxId, Value, TRX_ID_SIZE};
use crate::trx::{Isolation, ReadView, ViewHandle};
use crate::undo::{TrxUndo, UndoError, UndoKind, UndoRecord};

/// The table id of the marker record a rolled-back transaction's update log ends with:
/// purge skips such a log (its changes were undone, its chains already freed).
pub(super) const ROLLED_BACK: u64 = u64::MAX;

/// The lock a locking read takes (FOR SHARE / FOR UPDATE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadLock {
    /// `LOCK IN SHARE MODE` / `FOR SHARE`.
    Shared,
    /// `FOR UPDATE`.
    Exclusive,
}

impl ReadLock {
    fn mode(self) -> LockMode {
        match self {
            ReadLock::Shared => LockMode::Shared,
            ReadLock::Exclusive => LockMode::Exclusive,
        }
    }
}

/// What [`Transaction::insert_or_lock_duplicate`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Upsert {
    /// The row was inserted; here as stored.
    Inserted(Vec<Value>),
    /// The row collided in unique index `index` (`PRIMARY` for the primary key) with the
    /// live row `row`, now X-locked by this transaction, named by `handle`.
    Duplicate {
        index: String,
        handle: RowHandle,
        row: Vec<Value>,
    },
}

/// How many times [`Transaction::insert_or_lock_duplicate`] looks for a conflict again
/// after its insert found one committed meanwhile.
const UPSERT_ROUNDS: usize = 16;

/// What an UPDATE undo record's change did to the clustered record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    /// A live row got a new version.
    Update = 0,
    /// An insert over a delete-marked record: the old version is the deleted row.
    Revive = 1,
    /// A delete: the record was delete-marked.
    DeleteMark = 2,
}

/// In the op byte of an UPDATE undo payload: each revived entry carries its marker's id.
/// Records written before it existed have bare index numbers (read with no marker).
const OP_REVIVED_MARKERS: u8 = 0x80;

/// A secondary entry a change revived: it existed, delete-marked, for an older version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Revived {
    pub index_no: u16,
    /// The entry's DB_TRX_ID when it was revived: the transaction that had marked it, whose
    /// purge removes it if a rollback marks it again (`None` in older records).
    pub marker: Option<TrxId>,
}

/// A decoded UPDATE undo payload: `u16 key_len | key | u8 op | u8 n | n × revived |
/// old record`, a revived entry being `u16 index_no` and, with `OP_REVIVED_MARKERS` set
/// in `op`, the 6-byte DB_TRX_ID it had.
pub(super) struct UpdateUndo<'a> {
    pub key: &'a [u8],
    pub op: Op,
    /// Secondary entries of the new row that existed, delete-marked, before the change
    /// revived them: rollback marks them again (if some view may need them) instead of
    /// removing them.
    pub revived: Vec<Revived>,
    pub old: &'a [u8],
}

fn corrupt(what: &'static str) -> DbError {
    RowError::Corrupt(what).into()
}

pub(super) fn encode_update(key: &[u8], op: Op, revived: &[Revived], old: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(5 + key.len() + revived.len() * 8 + old.len());
    p.extend_from_slice(&(key.len() as u16).to_le_bytes());
    p.extend_from_slice(key);
    p.push(op as u8 | OP_REVIVED_MARKERS);
    p.push(revived.len() as u8);
    for r in revived {
        p.extend_from_slice(&r.index_no.to_le_bytes());
        let m = r.marker.unwrap_or_default();
        p.extend_from_slice(&m.0.to_le_bytes()[..TRX_ID_SIZE]);
    }
    p.extend_from_slice(old);
    p
}

pub(super) fn decode_update(p: &[u8]) -> Result<UpdateUndo<'_>> {
    let klen = u16::from_le_bytes(
        p.get(..2)
            .ok_or_else(|| corrupt("short undo record"))?
            .try_into()
            .map_err(|_| corrupt("short undo record"))?,
    ) as usize;
    let key = p
        .get(2..2 + klen)
        .ok_or_else(|| corrupt("short undo record"))?;
    let mut at = 2 + klen;
    let byte = *p.get(at).ok_or_else(|| corrupt("short undo record"))?;
    let markers = byte & OP_REVIVED_MARKERS != 0;
    let op = match byte & !OP_REVIVED_MARKERS {
        0 => Op::Update,
        1 => Op::Revive,
        2 => Op::DeleteMark,
        _ => return Err(corrupt("bad undo op")),
    };
    let n = *p.get(at + 1).ok_or_else(|| corrupt("short undo record"))? as usize;
    at += 2;
    let size = if markers { 2 + TRX_ID_SIZE } else { 2 };
    let mut revived = Vec::with_capacity(n);
    for _ in 0..n {
        let b = p
            .get(at..at + size)
            .ok_or_else(|| corrupt("short undo record"))?;
        let marker = markers.then(|| entry_trx(&b[2..])).transpose()?;
        revived.push(Revived {
            index_no: u16::from_le_bytes([b[0], b[1]]),
            marker,
        });
        at += size;
    }
    Ok(UpdateUndo {
        key,
        op,
        revived,
        old: &p[at..],
    })
}

/// A row lock refused, as the table layer's error (1205, 1213, 1317 at the server).
fn lock_error(e: LockError) -> DbError {
    match e {
        LockError::Timeout { .. } => DbError::LockWaitTimeout,
        LockError::Deadlock => DbError::Deadlock,
        LockError::Interrupted => DbError::Interrupted,
    }
}

pub(super) fn encode_insert(key: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(2 + key.len());
    p.extend_from_slice(&(key.len() as u16).to_le_bytes());
    p.extend_from_slice(key);
    p
}

pub(super) fn decode_insert(p: &[u8]) -> Result<&[u8]> {
    let klen = p
        .get(..2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
        .ok_or_else(|| corrupt("short undo record"))?;
    p.get(2..2 + klen)
        .ok_or_else(|| corrupt("short undo record"))
}

/// The DB_TRX_ID of a secondary entry (the B-tree value is the 6-byte id).
/// The lock-table index under which a unique index's values are locked while an entry with
/// that value is checked and inserted ([`Transaction::check_unique`]): the index's own id
/// with the top bit set, a space no index id uses (ids are `table id << 16 | number`).
fn unique_value_lock(index_id: u64) -> u64 {
    index_id | 1 << 63
}

pub(super) fn entry_trx(value: &[u8]) -> Result<TrxId> {
    let b = value
        .get(..6)
        .ok_or_else(|| corrupt("short secondary entry"))?;
    let mut a = [0u8; 8];
    a[..6].copy_from_slice(b);
    Ok(TrxId(u64::from_le_bytes(a)))
}

/// A secondary entry of a row: (B-tree key, B-tree value).
pub(super) type SecEntry = (Vec<u8>, Vec<u8>);

impl DbInner {
    pub(super) fn begin_trx(&self, iso: Isolation) -> Result<Transaction<'_>> {
        let a = self.trx.assign();
        if a.persist.is_some() {
            // Invariant 1 of `trx`: a mark above the id is in the log before any page holds
            // the id, whichever thread puts it there.
            let covered = self.trx.cover(a.id, |mark| {
                self.undo.persist_max_trx_id(&self.engine, mark).map(|_| ())
            });
            if let Err(e) = covered {
                self.trx.finish(a.id, false, None);
                return Err(e.into());
            }
        }
        Ok(Transaction {
            db: self,
            id: a.id,
            iso,
            view: None,
            undo: Some(TrxUndo::new(a.id)),
            wrote_update: false,
            locks: TrxLocks::new(a.id),
            state: State::Active,
            savepoints: Vec::new(),
            stmt: None,
            lock_wait_timeout: self.default_lock_wait_timeout(),
            interrupt: None,
            fk_checks: true,
            fk_depth: 0,
            fk_cascade: false,
            skip_locked: false,
            upserting: false,
        })
    }

    /// The secondary entries of `row` in every index of `t`, with DB_TRX_ID `trx`.
    pub(super) fn entries(
        &self,
        t: &TableState,
        row: &[Value],
        row_id: Option<RowId>,
        trx: TrxId,
    ) -> Result<Vec<SecEntry>> {
        let mut out = Vec::with_capacity(t.indexes.len());
        for ix in &t.indexes {
            let mut rec = Vec::new();
            ix.layout.encode(row, row_id, trx, &self.limits, &mut rec)?;
            let k = secondary::key(&rec)?.to_vec();
            let v = rec[3 + k.len()..].to_vec();
            out.push((k, v));
        }
        Ok(out)
    }

    /// The values of a clustered record, its off-page ones read under the chain lock
    /// (rollback and purge free chains holding it exclusively).
    pub(super) fn decode_version(&self, t: &TableState, rec: &[u8]) -> Result<Vec<Value>> {
        self.decode_columns(t, rec, None)
    }

    /// [`DbInner::decode_version`] of the columns in `cols` only (the others NULL; `None`:
    /// every column): the reads that hand rows to a query (`Table::read_columns`).
    pub(super) fn decode_columns(
        &self,
        t: &TableState,
        rec: &[u8],
        cols: Option<&[bool]>,
    ) -> Result<Vec<Value>> {
        if record::has_external(rec)? {
            // The chains stay as they are while their values are read.
            let _c = t.chains.read();
            blob::decode_row_columns(&self.engine, &t.layout, rec, cols)
        } else {
            blob::decode_row_columns(&self.engine, &t.layout, rec, cols)
        }
    }

    /// The version of the row with clustered key `key` that `view` sees, starting from the
    /// record `rec` (delete-marked: `deleted`); `None`: the view sees no row. Without a view
    /// (READ UNCOMMITTED) the newest version. Walks the DB_ROLL_PTR chain with no latch held.
    pub(super) fn version(
        &self,
        t: &TableState,
        key: &[u8],
        mut rec: Vec<u8>,
        mut deleted: bool,
        view: Option<&ReadView>,
    ) -> Result<Option<Vec<u8>>> {
        let Some(view) = view else {
            return Ok((!deleted).then_some(rec));
        };
        let mut restarts = 0;
        loop {
            let trx = record::trx_id(&rec)?;
            if view.sees(trx) {
                return Ok((!deleted).then_some(rec));
            }
            let roll = record::roll_ptr(&rec)?;
            if roll.is_insert() {
                return Ok(None);
            }
            self.counters.versions_built.fetch_add(1, Ordering::Relaxed);
            let u = match self.undo.read(&self.engine, roll) {
                Ok(u) => Some(u),
                // The record's writer rolled back after we copied the record, and the
                // rollback cut its log back past this record (a full rollback truncates the
                // log before it marks it ROLLED_BACK): the clustered record is restored by
                // then. Start again there, below (bounded, like a foreign record).
                Err(UndoError::Corrupt { .. }) => None,
                Err(e) => return Err(e.into()),
            };
            let p = u
                .as_ref()
                .filter(|u| u.kind == UndoKind::Update && u.table_id == t.def.id)
                .and_then(|u| decode_update(&u.payload).ok());
            match p {
                // After a rollback the undo space the roll pointer names may hold another
                // transaction's record. If it is an update of this same row, it is still a
                // true step back along this row's history: it was written after the
                // rollback restored the row, so its before-image is at least as new as
                // every version this view may see, and it carries that version's trx id
                // and roll pointer; the visibility test on the next turn goes on from there
                // to exactly the newest version the view sees. So only a record of another
                // row or table (or none) needs the restart below.
                Some(p) if p.key == key => {
                    deleted = p.op == Op::Revive;
                    rec = p.old.to_vec();
                }
                _ => {
                    // A rollback to a savepoint undid the change and its undo space was
                    // reused: the clustered record is restored by now; start again there.
                    restarts += 1;
                    if restarts > 8 {
                        return Err(corrupt("a DB_ROLL_PTR chain leads to a foreign record"));
                    }
                    match t.clustered.get(&self.engine, key)? {
                        Some(e) => {
                            rec = e.value;
                            deleted = e.delete_marked;
                        }
                        None => return Ok(None),
                    }
                }
            }
        }
    }

    /// The row of secondary entry `e` of index `ix` as `view` sees it, with its clustered
    /// key (invariant 3): a marked entry whose id the view sees is skipped without visiting
    /// the clustered index; otherwise the clustered version is built and must still have
    /// this entry's key.
    pub(super) fn entry_row(
        &self,
        t: &TableState,
        ix: &Index,
        e: &Entry,
        view: Option<&ReadView>,
    ) -> Result<Option<(Vec<u8>, Vec<Value>)>> {
        let trx = entry_trx(&e.value)?;
        let decided = view.is_some_and(|v| v.sees(trx));
        if e.delete_marked && (decided || view.is_none()) {
            return Ok(None);
        }
        if !decided {
            self.counters
                .secondary_clustered_visits
                .fetch_add(1, Ordering::Relaxed);
        }
        let n = ix.layout.secondary_part_len(&e.key)?;
        let key = &e.key[n..];
        let Some(c) = t.clustered.get(&self.engine, key)? else {
            return Ok(None);
        };
        let Some(rec) = self.version(t, key, c.value, c.delete_marked, view)? else {
            return Ok(None);
        };
        let row = self.decode_version(t, &rec)?;
        let row_id = rowid::row_id_of_key(&t.layout, key)?;
        let mut srec = Vec::new();
        ix.layout
            .encode(&row, row_id, TrxId(0), &self.limits, &mut srec)?;
        if secondary::key(&srec)? != e.key.as_slice() {
            return Ok(None);
        }
        Ok(Some((key.to_vec(), row)))
    }

    /// Waits as `innodb_max_purge_lag` says when history is long (lesson 4: DML yields to
    /// purge only when purge is behind).
    pub(super) fn purge_lag_delay(&self) {
        let lag = self.live.max_purge_lag.load(Ordering::Relaxed);
        if lag == 0 || !self.live.purge_running {
            return;
        }
        let len = self.undo.history_len();
        if len <= lag {
            return;
        }
        // InnoDB's shape: the delay grows with how far past the limit history is.
        let over = (len - lag) as f64 / lag as f64;
        let us = ((over * 10_000.0) as u64 + 50)
            .min(self.live.max_purge_lag_delay_us.load(Ordering::Relaxed));
        self.counters.lag_delay_us.fetch_add(us, Ordering::Relaxed);
        std::thread::sleep(Duration::from_micros(us));
    }

    /// Applies one undo record of transaction `me` (rollback, or recovery's rollback of a
    /// transaction active at the crash). Idempotent (module docs).
    pub(super) fn undo_one(&self, me: TrxId, ptr: RollPtr, u: &UndoRecord) -> Result<()> {
        if u.table_id == ROLLED_BACK {
            return Ok(());
        }
        let Some(held) = self.table_by_id(u.table_id) else {
            // The table was dropped: its rows went with it.
            return Ok(());
        };
        let _s = held.dml.read();
        let Some(t) = self.table_by_id(u.table_id) else {
            return Ok(());
        };
        let engine = &self.engine;
        match u.kind {
            UndoKind::Insert => {
                let key = decode_insert(&u.payload)?;
                let Some(cur) = t.clustered.get(engine, key)? else {
                    return Ok(());
                };
                if record::trx_id(&cur.value)? != me || record::roll_ptr(&cur.value)? != ptr {
                    return Ok(());
                }
                let _c = blob::lock_for_change(&t);
                let logging = t.row_log().is_some();
                let mut undone = None;
                if !t.indexes.is_empty() || logging {
                    let row = blob::decode_row(engine, &t.layout, &cur.value)?;
                    let row_id = rowid::row_id_of_key(&t.layout, key)?;
                    for (ix, (k, _)) in t.indexes.iter().zip(self.entries(&t, &row, row_id, me)?) {
                        ignore_missing(ix.tree.delete(engine, &k))?;
                    }
                    undone = Some(row);
                }
                let r = match blob::delete(engine, &t, key, &cur.value) {
                    Err(DbError::RowNotFound) => Ok(()),
                    r => r.map(|_| ()),
                };
                if let Some(row) = &undone {
                    self.log_change(&t, key, &[row]);
                }
                r
            }
            UndoKind::Update => {
                let p = decode_update(&u.payload)?;
                let Some(cur) = t.clustered.get(engine, p.key)? else {
                    return Ok(());
                };
                if record::trx_id(&cur.value)? != me || record::roll_ptr(&cur.value)? != ptr {
                    return Ok(());
                }
                let _c = blob::lock_for_change(&t);
                let old_trx = record::trx_id(p.old)?;
                let row_id = rowid::row_id_of_key(&t.layout, p.key)?;
                // An entry the change revived (it was there, delete-marked by M, for an
                // older version) is marked again, by M, only while some view may still see
                // a version that has it: while not every view sees M. M's purge removes it
                // then (its log is still in the history: purge takes a log only once every
                // view sees it). Otherwise no view needs it, and M's purge may have gone by
                // already, or removed it between our check and our revive (purge takes no
                // row lock): it is removed, as InnoDB's rollback removes an entry no
                // version needs (row_undo_mod_del_mark_or_remove_sec), so no marked entry
                // is left that no purge would look for (docs/purge.md). Records from
                // before markers were kept name none: M is then taken to be `old_trx`.
                let unrevive = |ix: &Index, nk: &[u8], r: &Revived| {
                    let marker = r.marker.unwrap_or(old_trx);
                    if self.trx.seen_by_all(marker) {
                        ignore_missing(ix.tree.delete(engine, nk))
                    } else {
                        let v = &marker.0.to_le_bytes()[..TRX_ID_SIZE];
                        ignore_missing(ix.tree.replace(engine, nk, v, true))
                    }
                };
                let logging = t.row_log().is_some();
                let mut logged = None;
                if logging {
                    logged = Some((
                        blob::decode_row(engine, &t.layout, &cur.value)?,
                        blob::decode_row(engine, &t.layout, p.old)?,
                    ));
                }
                if !t.indexes.is_empty() {
                    let new_row = blob::decode_row(engine, &t.layout, &cur.value)?;
                    let old_row = blob::decode_row(engine, &t.layout, p.old)?;
                    let news = self.entries(&t, &new_row, row_id, old_trx)?;
                    let olds = self.entries(&t, &old_row, row_id, old_trx)?;
                    for ((ix, (nk, _)), (ok, ov)) in t.indexes.iter().zip(news).zip(olds) {
                        let revived = p.revived.iter().find(|r| r.index_no == ix.def.index_no);
                        match p.op {
                            Op::Update if nk != ok => {
                                if let Some(r) = revived {
                                    unrevive(ix, &nk, r)?;
                                } else {
                                    ignore_missing(ix.tree.delete(engine, &nk))?;
                                }
                                ignore_missing(ix.tree.replace(engine, &ok, &ov, false))?;
                            }
                            Op::Update => {}
                            Op::Revive => {
                                if let Some(r) = revived {
                                    unrevive(ix, &nk, r)?;
                                } else {
                                    ignore_missing(ix.tree.delete(engine, &nk))?;
                                }
                            }
                            Op::DeleteMark => {
                                ignore_missing(ix.tree.replace(engine, &ok, &ov, false))?;
                            }
                        }
                    }
                }
                // The clustered record last: it is what makes this record "applied".
                let deleted = p.op == Op::Revive;
                t.clustered.replace(engine, p.key, p.old, deleted)?;
                if let Some((undone, restored)) = &logged {
                    self.log_change(&t, p.key, &[undone, restored]);
                }
                if p.op != Op::DeleteMark && record::has_external(&cur.value)? {
                    // The undone version's chains were its own (a new version always gets
                    // fresh ones). A crash before this leaks them (`check` says so).
                    let pages =
                        blob::record_chain_pages(engine, &t.layout, t.def.space, &cur.value)?;
                    blob::free_in_mtrs_pub(engine, t.def.space, &pages)?;
                }
                Ok(())
            }
        }
    }
}

/// A B-tree change during rollback or purge whose record is already gone is done.
pub(super) fn ignore_missing(r: crate::btree::Result<Lsn>) -> Result<()> {
    match r {
        Ok(_) | Err(crate::btree::BTreeError::NotFound) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Active,
    /// Rolled back by a deadlock: only rollback (or drop) is accepted.
    Aborted,
    Ended,
}

/// An open transaction. Dropping it without [`Transaction::commit`] rolls it back.
pub struct Transaction<'d> {
    pub(super) db: &'d DbInner,
    id: TrxId,
    iso: Isolation,
    /// The snapshot (REPEATABLE READ: from the first read; READ COMMITTED: per statement;
    /// READ UNCOMMITTED: none).
    view: Option<Arc<ViewHandle>>,
    undo: Option<TrxUndo>,
    /// An update undo record was written: rollback must leave the log to purge, since a
    /// reader may still follow a roll pointer into it.
    wrote_update: bool,
    locks: TrxLocks,
    state: State,
    savepoints: Vec<(String, u64)>,
    /// The undo position where the open statement scope began ([`Transaction::begin_statement`]).
    stmt: Option<u64>,
    lock_wait_timeout: Duration,
    /// Set from outside to end a lock wait ([`Transaction::set_interrupt`]).
    interrupt: Option<Arc<AtomicBool>>,
    /// `foreign_key_checks`: off, no constraint is checked and no action cascades
    /// (`foreign.rs`), as InnoDB's `trx->check_foreigns`.
    pub(super) fk_checks: bool,
    /// How deep the cascade being applied is (0: the caller's own change).
    pub(super) fk_depth: u32,
    /// A cascaded change is being written: its child-side check is skipped (the values
    /// come from the parent change that caused it).
    pub(super) fk_cascade: bool,
    /// `SKIP LOCKED`: a locking read passes over a record another transaction holds a
    /// conflicting lock on, instead of waiting for it ([`Transaction::set_skip_locked`]).
    skip_locked: bool,
    /// An upsert is inserting ([`Transaction::insert_or_lock_duplicate`]): a conflicting
    /// entry of an active transaction is waited for with an X lock, not an S lock, since
    /// the row will be updated (InnoDB's `trx->duplicates`). Two upserts that both waited
    /// with S locks would deadlock upgrading them.
    upserting: bool,
}

impl<'d> Transaction<'d> {
    pub fn id(&self) -> TrxId {
        self.id
    }

    pub fn isolation(&self) -> Isolation {
        self.iso
    }

    fn next_undo_no(&self) -> u64 {
        self.undo.as_ref().map_or(0, |u| u.next_undo_no())
    }

    fn check_active(&self) -> Result<()> {
        match self.state {
            State::Active => Ok(()),
            State::Aborted => Err(DbError::TrxAborted),
            State::Ended => Err(DbError::TrxAborted),
        }
    }

    // ------------------------------------------------------------------ statements

    /// Opens a statement scope: the engine calls until [`Transaction::end_statement`] are
    /// one SQL statement (a multi-row INSERT, an UPDATE over a range). READ COMMITTED
    /// reads them all from one snapshot, taken at the statement's first read (as InnoDB
    /// does), and [`Transaction::rollback_statement`] undoes them together. A scope still
    /// open is replaced (its changes stay).
    pub fn begin_statement(&mut self) -> Result<()> {
        self.check_active()?;
        if self.iso == Isolation::ReadCommitted {
            self.view = None;
        }
        self.stmt = Some(self.next_undo_no());
        Ok(())
    }

    /// Closes the statement scope; its changes stay. READ COMMITTED drops the statement's
    /// snapshot (a scan still running keeps its own reference to it).
    pub fn end_statement(&mut self) {
        self.stmt = None;
        if self.iso == Isolation::ReadCommitted {
            self.view = None;
        }
    }

    /// Undoes every change made since [`Transaction::begin_statement`] and closes the
    /// scope; the transaction goes on. Locks are kept (as InnoDB does). Without an open
    /// scope it does nothing.
    pub fn rollback_statement(&mut self) -> Result<()> {
        self.check_active()?;
        let Some(start) = self.stmt.take() else {
            return Ok(());
        };
        if self.iso == Isolation::ReadCommitted {
            self.view = None;
        }
        // A savepoint set inside the statement names undo that no longer exists.
        self.savepoints.retain(|(_, at)| *at <= start);
        self.rollback_to(start)
    }

    /// Runs one engine call: READ COMMITTED takes a fresh snapshot unless a statement
    /// scope is open (then the scope's snapshot serves); a failure rolls the call back, a
    /// deadlock the whole transaction (invariant 5).
    fn statement<R>(&mut self, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        self.check_active()?;
        if self.iso == Isolation::ReadCommitted && self.stmt.is_none() {
            self.view = None;
        }
        let start = self.next_undo_no();
        match f(self) {
            Ok(r) => Ok(r),
            Err(DbError::Deadlock) => {
                self.stmt = None;
                self.rollback_all()?;
                self.state = State::Aborted;
                Err(DbError::Deadlock)
            }
            Err(e) => {
                if self.next_undo_no() > start {
                    self.rollback_to(start)?;
                }
                Err(e)
            }
        }
    }

    /// [`Transaction::statement`] for a change to `table`: a disk that is full becomes
    /// MySQL's "The table 't' is full" (1114), after the statement's rollback.
    fn write_statement<R>(
        &mut self,
        table: &Table<'_>,
        f: impl FnOnce(&mut Self) -> Result<R>,
    ) -> Result<R> {
        self.statement(f).map_err(|e| {
            if e.is_disk_full() {
                DbError::TableFull(table.table_name().to_string())
            } else {
                e
            }
        })
    }

    /// Takes `snapshot` (made with no id, before this transaction began) as this
    /// transaction's view, seeing its own changes as well.
    pub(super) fn adopt_view(&mut self, snapshot: &ReadView) {
        if matches!(
            self.iso,
            Isolation::RepeatableRead | Isolation::Serializable
        ) {
            self.view = Some(Arc::new(self.db.trx.rebind(snapshot, self.id)));
        }
    }

    fn view(&mut self) -> Option<Arc<ViewHandle>> {
        if self.iso == Isolation::ReadUncommitted {
            return None;
        }
        if self.view.is_none() {
            self.view = Some(Arc::new(self.db.trx.view(self.id)));
        }
        self.view.clone()
    }

    /// The read view this transaction's consistent reads use (made now if none is open; it
    /// sees the transaction's own changes), for readers that cannot borrow the transaction
    /// while it is busy (a subquery evaluated inside a locking scan). `None` under READ
    /// UNCOMMITTED: the newest versions.
    pub fn read_view(&mut self) -> Option<super::Snapshot> {
        self.view()
    }

    /// Whether this transaction's next consistent read may go through index `ix`: no
    /// snapshot is open yet (one made now sees every index there is), or the open one was
    /// made after the index was built. Otherwise the read would fail with
    /// [`DbError::TableDefinitionChanged`] (1412), and a planner should choose another path.
    pub fn can_read_index(&self, ix: &crate::catalog::IndexDef) -> bool {
        match &self.view {
            Some(v) if self.iso != Isolation::ReadCommitted || self.stmt.is_some() => {
                super::index_visible_to(ix, v)
            }
            _ => true,
        }
    }

    /// `innodb_lock_wait_timeout` for this transaction's lock waits (the config's value
    /// until set); a wait that lasts it ends with [`DbError::LockWaitTimeout`].
    pub fn set_lock_wait_timeout(&mut self, timeout: Duration) {
        self.lock_wait_timeout = timeout;
    }

    pub fn lock_wait_timeout(&self) -> Duration {
        self.lock_wait_timeout
    }

    /// `SKIP LOCKED` for this transaction's next locking reads (off until set; the caller
    /// turns it off after the statement): a record whose lock would have to be waited for
    /// is not locked, not read and not returned, as InnoDB's SKIP LOCKED. The gaps of the
    /// records that are read are locked as usual.
    pub fn set_skip_locked(&mut self, on: bool) {
        self.skip_locked = on;
    }

    /// A flag that, once set (KILL QUERY, a client gone), ends this transaction's lock
    /// wait within [`crate::lock::INTERRUPT_POLL`] with [`DbError::Interrupted`]; the
    /// statement is rolled back, as on a timeout. The caller clears it for the next
    /// statement.
    pub fn set_interrupt(&mut self, flag: Arc<AtomicBool>) {
        self.interrupt = Some(flag);
    }

    /// `foreign_key_checks` for this transaction's next calls (on until set): off, no
    /// foreign key is checked and no ON DELETE / ON UPDATE action runs.
    pub fn set_foreign_key_checks(&mut self, on: bool) {
        self.fk_checks = on;
    }

    pub(super) fn lock(
        &mut self,
        index: u64,
        key: &LockKey,
        mode: LockMode,
        kind: LockKind,
    ) -> Result<()> {
        self.db
            .locks
            .lock_interruptible(
                &mut self.locks,
                index,
                key,
                mode,
                kind,
                self.lock_wait_timeout,
                self.interrupt.as_deref(),
            )
            .map_err(lock_error)
    }

    /// Runs `insert` (which puts `key` into `tree`) once no other transaction holds a gap
    /// lock on the gap it goes into: an insert-intention check on the next key, made under
    /// the table's gap guard so that no locking reader locks the gap in between.
    fn gap_insert<R>(
        &mut self,
        t: &TableState,
        tree: &BTree,
        key: &[u8],
        insert: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        loop {
            let g = t.gaps.read();
            if t.gap_locked.load(Ordering::Acquire) == 0 {
                return insert();
            }
            let next = next_key(self.db, tree, key)?;
            if self.db.locks.try_lock(
                &mut self.locks,
                tree.index_id(),
                &next,
                LockMode::Exclusive,
                LockKind::InsertIntention,
            ) {
                return insert();
            }
            drop(g);
            self.lock(
                tree.index_id(),
                &next,
                LockMode::Exclusive,
                LockKind::InsertIntention,
            )?;
        }
    }

    /// Locks `key` of `tree` as a locking read does: NextKey under REPEATABLE READ and
    /// SERIALIZABLE (the gap before it too), Record otherwise; a gap lock is taken under
    /// the gap guard (see [`Transaction::gap_insert`]).
    fn lock_read(
        &mut self,
        t: &TableState,
        tree: &BTree,
        key: &LockKey,
        mode: LockMode,
        kind: LockKind,
    ) -> Result<()> {
        if kind == LockKind::Record {
            return self.lock(tree.index_id(), key, mode, kind);
        }
        loop {
            {
                let _g = t.gaps.write();
                t.gap_locked.fetch_add(1, Ordering::AcqRel);
                if self
                    .db
                    .locks
                    .try_lock(&mut self.locks, tree.index_id(), key, mode, kind)
                {
                    return Ok(());
                }
            }
            self.lock(tree.index_id(), key, mode, kind)?;
            // Granted after a wait: the gap part was granted with it; loop to confirm
            // under the guard (the covered check answers at once).
        }
    }

    /// [`Transaction::lock_read`] without waiting: whether the lock was granted (nothing
    /// changed if not).
    fn try_lock_read(
        &mut self,
        t: &TableState,
        tree: &BTree,
        key: &LockKey,
        mode: LockMode,
        kind: LockKind,
    ) -> bool {
        if kind == LockKind::Record {
            return self
                .db
                .locks
                .try_lock(&mut self.locks, tree.index_id(), key, mode, kind);
        }
        let _g = t.gaps.write();
        t.gap_locked.fetch_add(1, Ordering::AcqRel);
        self.db
            .locks
            .try_lock(&mut self.locks, tree.index_id(), key, mode, kind)
    }

    /// Locks a record a locking read is about to return: waits for it, or, under
    /// `SKIP LOCKED`, answers false at once when it would have to wait.
    fn lock_read_or_skip(
        &mut self,
        t: &TableState,
        tree: &BTree,
        key: &LockKey,
        mode: LockMode,
        kind: LockKind,
    ) -> Result<bool> {
        if self.skip_locked {
            return Ok(self.try_lock_read(t, tree, key, mode, kind));
        }
        self.lock_read(t, tree, key, mode, kind)?;
        Ok(true)
    }

    fn gap_kind(&self) -> LockKind {
        match self.iso {
            Isolation::RepeatableRead | Isolation::Serializable => LockKind::NextKey,
            _ => LockKind::Record,
        }
    }

    fn undo_append(&mut self, kind: UndoKind, table: u64, payload: &[u8]) -> Result<RollPtr> {
        let undo = self.undo.as_mut().ok_or(DbError::TrxAborted)?;
        let (ptr, _) = self
            .db
            .undo
            .append(&self.db.engine, undo, kind, table, payload)?;
        if kind == UndoKind::Update {
            self.wrote_update = true;
        }
        Ok(ptr)
    }

    // ------------------------------------------------------------------ reads

    /// The row with primary key `pk` as this transaction's snapshot sees it.
    pub fn get(&mut self, table: &Table<'_>, pk: &[Value]) -> Result<Option<Vec<Value>>> {
        if self.iso == Isolation::Serializable {
            return self.get_locking(table, pk, ReadLock::Shared);
        }
        self.statement(|tx| {
            table.with_state(|t| {
                let key = table.pk_key(t, pk)?;
                tx.get_in(t, &key, table.read_cols())
            })
        })
    }

    /// The row a handle names, as the snapshot sees it.
    pub fn get_row(&mut self, table: &Table<'_>, h: &RowHandle) -> Result<Option<Vec<Value>>> {
        self.statement(|tx| {
            table.with_state(|t| {
                let key = h.key_in(t)?.to_vec();
                tx.get_in(t, &key, None)
            })
        })
    }

    /// `cols`: the columns decoded (`Table::reading_only`); `None`: every column.
    fn get_in(
        &mut self,
        t: &TableState,
        key: &[u8],
        cols: Option<&[bool]>,
    ) -> Result<Option<Vec<Value>>> {
        let view = self.view();
        super::check_rebuild_visible(t, view.as_deref())?;
        let Some(e) = t.clustered.get(&self.db.engine, key)? else {
            return Ok(None);
        };
        match self.db.version(
            t,
            key,
            e.value,
            e.delete_marked,
            view.as_deref().map(|v| &**v),
        )? {
            Some(rec) => self.db.decode_columns(t, &rec, cols).map(Some),
            None => Ok(None),
        }
    }

    /// A locking read of one row (SELECT … FOR SHARE / FOR UPDATE): locks the record and
    /// returns its newest committed (or own) version.
    pub fn get_locking(
        &mut self,
        table: &Table<'_>,
        pk: &[Value],
        lock: ReadLock,
    ) -> Result<Option<Vec<Value>>> {
        self.statement(|tx| {
            table.with_state(|t| {
                let key = table.pk_key(t, pk)?;
                let k = LockKey::Key(key.clone());
                if !tx.lock_read_or_skip(t, &t.clustered, &k, lock.mode(), LockKind::Record)? {
                    // SKIP LOCKED, and another transaction holds it.
                    return Ok(None);
                }
                match t.clustered.get(&tx.db.engine, &key)? {
                    Some(e) if !e.delete_marked => tx
                        .db
                        .decode_columns(t, &e.value, table.read_cols())
                        .map(Some),
                    _ => Ok(None),
                }
            })
        })
    }

    /// Rows with primary keys within the bounds, as the snapshot sees them.
    pub fn scan(
        &mut self,
        table: &Table<'_>,
        lower: Bound<Vec<Value>>,
        upper: Bound<Vec<Value>>,
        dir: Direction,
    ) -> Result<Rows<'d>> {
        if self.iso == Isolation::Serializable {
            let rows = self.scan_locking(table, lower, upper, dir, ReadLock::Shared)?;
            return Ok(Rows::materialized(rows));
        }
        self.statement(|tx| {
            let view = tx.view();
            table.scan_in(tx.db, lower, upper, dir, view)
        })
    }

    /// A locking range read: every row in range is locked (NextKey under REPEATABLE READ,
    /// so no row can be inserted into the range until this transaction ends; plus the gap
    /// after the last one), and read at its newest committed version.
    pub fn scan_locking(
        &mut self,
        table: &Table<'_>,
        lower: Bound<Vec<Value>>,
        upper: Bound<Vec<Value>>,
        dir: Direction,
        lock: ReadLock,
    ) -> Result<Vec<Vec<Value>>> {
        let mut rows = Vec::new();
        self.scan_locking_each(table, lower, upper, dir, lock, |r| {
            rows.push(r);
            Ok(true)
        })?;
        Ok(rows)
    }

    /// [`Transaction::scan_locking`], streaming: each row goes to `each` as soon as it is
    /// locked and read, in `dir` order, and the scan stops (locking nothing further) when
    /// `each` returns false: `LIMIT n … FOR UPDATE` locks n rows and the gaps before them,
    /// as InnoDB does. `each` runs with the table's definition held (no DDL meanwhile).
    pub fn scan_locking_each(
        &mut self,
        table: &Table<'_>,
        lower: Bound<Vec<Value>>,
        upper: Bound<Vec<Value>>,
        dir: Direction,
        lock: ReadLock,
        mut each: impl FnMut(Vec<Value>) -> Result<bool>,
    ) -> Result<()> {
        self.statement(|tx| {
            table.with_state(|t| {
                let (lo, hi) = scan::bounds(lower, upper, |v| {
                    let mut k = Vec::new();
                    t.layout.key_layout().encode(v, &tx.db.limits, &mut k)?;
                    Ok(k)
                })?;
                tx.locked_range(t, &t.clustered, &lo, &hi, dir, lock, |tx, e| {
                    if e.delete_marked {
                        return Ok(true);
                    }
                    each(tx.db.decode_columns(t, &e.value, table.read_cols())?)
                })
            })
        })
    }

    /// Every live row of `table` in clustered order, locked (`lock`, gaps as any locking
    /// read), each with the handle that names it for [`Transaction::update_row`] and
    /// [`Transaction::delete_row`]: the UPDATE and DELETE of a table without a primary
    /// key. Stops when `each` returns false.
    pub fn scan_locking_handles(
        &mut self,
        table: &Table<'_>,
        lock: ReadLock,
        mut each: impl FnMut(RowHandle, Vec<Value>) -> Result<bool>,
    ) -> Result<()> {
        self.statement(|tx| {
            table.with_state(|t| {
                let all = Bound::Unbounded;
                tx.locked_range(
                    t,
                    &t.clustered,
                    &all,
                    &all,
                    Direction::Forward,
                    lock,
                    |tx, e| {
                        if e.delete_marked {
                            return Ok(true);
                        }
                        let row = tx.db.decode_version(t, &e.value)?;
                        each(RowHandle::new(t, e.key.clone())?, row)
                    },
                )
            })
        })
    }

    /// Walks `[lo, hi)` of `tree` in `dir` order, locking each record (and, under
    /// REPEATABLE READ, the gap before it and the gap above the range), calling `f` with
    /// the record as it is once locked, until `f` returns false.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn locked_range(
        &mut self,
        t: &TableState,
        tree: &BTree,
        lo: &Bound<Vec<u8>>,
        hi: &Bound<Vec<u8>>,
        dir: Direction,
        lock: ReadLock,
        mut f: impl FnMut(&mut Self, &Entry) -> Result<bool>,
    ) -> Result<()> {
        let kind = self.gap_kind();
        if dir == Direction::Backward {
            return self.locked_range_backward(t, tree, lo, hi, lock, kind, f);
        }
        let mut from: Bound<Vec<u8>> = lo.clone();
        loop {
            let next = self.first_entry(tree, super::as_ref(&from), Direction::Forward)?;
            let in_range = next.as_ref().is_some_and(|e| match hi {
                Bound::Unbounded => true,
                Bound::Included(h) => e.key <= *h,
                Bound::Excluded(h) => e.key < *h,
            });
            if !in_range {
                // The gap after the range: locked under REPEATABLE READ so that nothing is
                // inserted at its end.
                if kind == LockKind::NextKey {
                    let k = next.map_or(LockKey::Supremum, |e| LockKey::Key(e.key));
                    self.lock_read(t, tree, &k, lock.mode(), LockKind::Gap)?;
                }
                return Ok(());
            }
            let Some(e) = next else { return Ok(()) };
            if !self.lock_and_visit(t, tree, &e.key, lock, kind, &mut f)? {
                return Ok(());
            }
            from = Bound::Excluded(e.key);
        }
    }

    /// [`Transaction::locked_range`] from the top of the range down. Under REPEATABLE READ
    /// the gap above the range is locked first (a Gap lock on the first record beyond it,
    /// or the supremum); each record's NextKey lock then covers the gap below the one
    /// before it, and the lowest one's the gap down to the range's start.
    #[allow(clippy::too_many_arguments)]
    fn locked_range_backward(
        &mut self,
        t: &TableState,
        tree: &BTree,
        lo: &Bound<Vec<u8>>,
        hi: &Bound<Vec<u8>>,
        lock: ReadLock,
        kind: LockKind,
        mut f: impl FnMut(&mut Self, &Entry) -> Result<bool>,
    ) -> Result<()> {
        if kind == LockKind::NextKey {
            // The first record beyond the range: past `h`, or at it when `h` is excluded.
            let beyond = match hi {
                Bound::Unbounded => None,
                Bound::Included(h) => Some(Bound::Excluded(h.as_slice())),
                Bound::Excluded(h) => Some(Bound::Included(h.as_slice())),
            };
            let above = match beyond {
                Some(b) => self.first_entry(tree, b, Direction::Forward)?,
                None => None,
            };
            let k = above.map_or(LockKey::Supremum, |e| LockKey::Key(e.key));
            self.lock_read(t, tree, &k, lock.mode(), LockKind::Gap)?;
        }
        let mut to: Bound<Vec<u8>> = hi.clone();
        loop {
            let Some(e) = self.first_entry(tree, super::as_ref(&to), Direction::Backward)? else {
                return Ok(());
            };
            let in_range = match lo {
                Bound::Unbounded => true,
                Bound::Included(l) => e.key >= *l,
                Bound::Excluded(l) => e.key > *l,
            };
            if !in_range || !self.lock_and_visit(t, tree, &e.key, lock, kind, &mut f)? {
                return Ok(());
            }
            to = Bound::Excluded(e.key);
        }
    }

    /// The first record of `tree` from `from` in `dir` (`from` bounds the end the walk
    /// starts at).
    fn first_entry(
        &self,
        tree: &BTree,
        from: Bound<&[u8]>,
        dir: Direction,
    ) -> Result<Option<Entry>> {
        let (lower, upper) = match dir {
            Direction::Forward => (from, Bound::Unbounded),
            Direction::Backward => (Bound::Unbounded, from),
        };
        Ok(tree
            .scan(&self.db.engine, lower, upper, dir)
            .next()
            .transpose()?)
    }

    /// Locks the record at `key` (`kind`), then calls `f` with it as it is once locked: it
    /// may have changed while we waited. False: `f` asked to stop.
    fn lock_and_visit(
        &mut self,
        t: &TableState,
        tree: &BTree,
        key: &[u8],
        lock: ReadLock,
        kind: LockKind,
        f: &mut impl FnMut(&mut Self, &Entry) -> Result<bool>,
    ) -> Result<bool> {
        let k = LockKey::Key(key.to_vec());
        if !self.lock_read_or_skip(t, tree, &k, lock.mode(), kind)? {
            // SKIP LOCKED: passed over, the walk goes on.
            return Ok(true);
        }
        match tree.get(&self.db.engine, key)? {
            Some(cur) => f(self, &cur),
            None => Ok(true),
        }
    }

    /// Rows whose index `index` key is within the bounds, as the snapshot sees them.
    pub fn index_scan(
        &mut self,
        table: &Table<'_>,
        index: &str,
        lower: Bound<Vec<Value>>,
        upper: Bound<Vec<Value>>,
        dir: Direction,
    ) -> Result<IndexRows<'d>> {
        self.statement(|tx| {
            let view = tx.view();
            table.index_scan_in(tx.db, index, lower, upper, dir, view)
        })
    }

    /// A locking read through a secondary index: locks the index entries in range
    /// (NextKey under REPEATABLE READ) and each row's clustered record, and returns the
    /// rows (newest committed versions) in index order.
    pub fn index_scan_locking(
        &mut self,
        table: &Table<'_>,
        index: &str,
        lower: Bound<Vec<Value>>,
        upper: Bound<Vec<Value>>,
        lock: ReadLock,
    ) -> Result<Vec<Vec<Value>>> {
        let mut rows = Vec::new();
        self.index_scan_locking_each(table, index, lower, upper, Direction::Forward, lock, |r| {
            rows.push(r);
            Ok(true)
        })?;
        Ok(rows)
    }

    /// [`Transaction::index_scan_locking`], streaming in `dir` order and stopping when
    /// `each` returns false (see [`Transaction::scan_locking_each`]).
    #[allow(clippy::too_many_arguments)]
    pub fn index_scan_locking_each(
        &mut self,
        table: &Table<'_>,
        index: &str,
        lower: Bound<Vec<Value>>,
        upper: Bound<Vec<Value>>,
        dir: Direction,
        lock: ReadLock,
        mut each: impl FnMut(Vec<Value>) -> Result<bool>,
    ) -> Result<()> {
        self.statement(|tx| {
            table.with_state(|t| {
                let ix = table.index_of(t, index)?;
                let (lo, hi) = scan::bounds(lower, upper, |v| {
                    let mut k = Vec::new();
                    ix.layout.encode_search(v, &tx.db.limits, &mut k)?;
                    Ok(k)
                })?;
                tx.locked_range(t, &ix.tree, &lo, &hi, dir, lock, |tx, e| {
                    if e.delete_marked {
                        return Ok(true);
                    }
                    let n = ix.layout.secondary_part_len(&e.key)?;
                    let key = LockKey::Key(e.key[n..].to_vec());
                    let mode = lock.mode();
                    if !tx.lock_read_or_skip(t, &t.clustered, &key, mode, LockKind::Record)? {
                        return Ok(true);
                    }
                    match tx.db.entry_row(t, ix, e, None)? {
                        Some(r) => each(r.1),
                        None => Ok(true),
                    }
                })
            })
        })
    }

    /// Primary keys of the rows whose index columns equal `values` (a prefix), as the
    /// snapshot sees them.
    pub fn lookup_index(
        &mut self,
        table: &Table<'_>,
        index: &str,
        values: &[Value],
    ) -> Result<Vec<Vec<Value>>> {
        self.statement(|tx| {
            let view = tx.view();
            table.lookup_index_in(tx.db, index, values, view)
        })
    }

    // ------------------------------------------------------------------ changes

    /// Inserts a row; returns it as stored (AUTO_INCREMENT filled, values canonical).
    pub fn insert(&mut self, table: &Table<'_>, row: Vec<Value>) -> Result<Vec<Value>> {
        let r = self.write_statement(table, |tx| {
            table.with_state(|t| tx.insert_in(table, t, row))
        });
        if r.is_ok() {
            self.db
                .counters
                .rows_inserted
                .fetch_add(1, Ordering::Relaxed);
        }
        r
    }

    /// INSERT … ON DUPLICATE KEY UPDATE's insert: inserts `row` as [`Transaction::insert`]
    /// does, unless it collides with a live row in a unique index; then nothing is
    /// inserted and that row comes back X-locked (it stays locked until the transaction
    /// ends), at its newest version, with the handle that names it for
    /// [`Transaction::update_row`]. The indexes are looked at in InnoDB's order (the
    /// primary key, then the unique indexes in index order), so the row is the one InnoDB
    /// would update. AUTO_INCREMENT is filled before the check: a duplicate consumes the
    /// value it was given, as InnoDB's does.
    pub fn insert_or_lock_duplicate(
        &mut self,
        table: &Table<'_>,
        row: Vec<Value>,
    ) -> Result<Upsert> {
        self.upserting = true;
        let r = self.write_statement(table, |tx| {
            table.with_state(|t| {
                let db = tx.db;
                let row = table.prepare(t, row)?;
                let row_id = rowid::next_row_id(t);
                let mut key = Vec::new();
                t.layout.encode_key(&row, row_id, &db.limits, &mut key)?;
                let start = tx.next_undo_no();
                // A conflicting row committed between the look and the insert makes the
                // insert fail: look again. Each round waits for the committer's lock, so
                // a few rounds suffice; the bound only keeps a bug from spinning.
                for _ in 0..UPSERT_ROUNDS {
                    if let Some(d) = tx.lock_duplicate(t, &row, row_id, &key)? {
                        return Ok(d);
                    }
                    tx.fk_check_child(t, &row, None)?;
                    db.purge_lag_delay();
                    match tx.insert_prepared(t, row.clone(), row_id, key.clone()) {
                        Err(DbError::DuplicateKey { .. }) => {
                            if tx.next_undo_no() > start {
                                tx.rollback_to(start)?;
                            }
                        }
                        r => return r.map(Upsert::Inserted),
                    }
                }
                tx.insert_prepared(t, row, row_id, key)
                    .map(Upsert::Inserted)
            })
        });
        self.upserting = false;
        if matches!(r, Ok(Upsert::Inserted(_))) {
            self.db
                .counters
                .rows_inserted
                .fetch_add(1, Ordering::Relaxed);
        }
        r
    }

    /// The live row `row` (clustered key `key`) would collide with, X-locked, in InnoDB's
    /// order: the primary key, then each unique index in index order. An entry of an active
    /// transaction is waited for (the X lock), then looked at again: it may have been
    /// rolled back, or deleted.
    fn lock_duplicate(
        &mut self,
        t: &TableState,
        row: &[Value],
        row_id: Option<RowId>,
        key: &[u8],
    ) -> Result<Option<Upsert>> {
        if row_id.is_none() {
            if let Some(cur) = self.lock_live_row(t, key)? {
                return Ok(Some(Upsert::Duplicate {
                    index: "PRIMARY".into(),
                    handle: RowHandle::new(t, key.to_vec())?,
                    row: self.db.decode_version(t, &cur.value)?,
                }));
            }
        }
        let entries = self.db.entries(t, row, row_id, self.id)?;
        for (ix, (k, _)) in t.indexes.iter().zip(&entries) {
            if !ix.def.unique || ix.null_in(row) {
                continue;
            }
            let n = ix.layout.secondary_part_len(k)?;
            let prefix = k[..n].to_vec();
            'again: loop {
                let cur = ix.tree.scan(
                    &self.db.engine,
                    Bound::Included(&prefix),
                    Bound::Unbounded,
                    Direction::Forward,
                );
                for e in cur {
                    let e = e?;
                    if !e.key.starts_with(&prefix) {
                        break;
                    }
                    if e.key == *k {
                        continue;
                    }
                    let owner = entry_trx(&e.value)?;
                    let pending = owner != self.id && self.db.trx.is_active(owner);
                    if e.delete_marked && !pending {
                        continue;
                    }
                    let pk = e.key[n..].to_vec();
                    if let Some(cur) = self.lock_live_row(t, &pk)? {
                        // Under our X lock no one else changes the row's entries
                        // (invariant 1): a live entry now is the row's current one.
                        let live = ix.tree.get(&self.db.engine, &e.key)?;
                        if live.is_some_and(|x| !x.delete_marked) {
                            return Ok(Some(Upsert::Duplicate {
                                index: ix.def.name.clone(),
                                handle: RowHandle::new(t, pk)?,
                                row: self.db.decode_version(t, &cur.value)?,
                            }));
                        }
                    }
                    continue 'again;
                }
                break;
            }
        }
        Ok(None)
    }

    /// Counts an update that changed its row (`Innodb_rows_updated`).
    fn count_update(&self, changed: bool) {
        if changed {
            self.db
                .counters
                .rows_updated
                .fetch_add(1, Ordering::Relaxed);
        }
    }

    fn count_delete(&self) {
        self.db
            .counters
            .rows_deleted
            .fetch_add(1, Ordering::Relaxed);
    }

    fn insert_in(
        &mut self,
        table: &Table<'_>,
        t: &TableState,
        row: Vec<Value>,
    ) -> Result<Vec<Value>> {
        let db = self.db;
        let row = table.prepare(t, row)?;
        self.fk_check_child(t, &row, None)?;
        let row_id = rowid::next_row_id(t);
        let mut key = Vec::new();
        t.layout.encode_key(&row, row_id, &db.limits, &mut key)?;
        db.purge_lag_delay();
        self.insert_prepared(t, row, row_id, key)
    }

    /// Inserts the checked row `row` under clustered key `key`: X-locks the key, checks
    /// unique indexes and the key itself, then writes the record (over a delete-marked one
    /// if there is one) and the secondary entries.
    fn insert_prepared(
        &mut self,
        t: &TableState,
        row: Vec<Value>,
        row_id: Option<RowId>,
        key: Vec<u8>,
    ) -> Result<Vec<Value>> {
        let db = self.db;
        let engine = &db.engine;
        // The X lock on the new key, kept to the end: `lock_new_record` is the cheap form of
        // `self.lock(…, Exclusive, Record)` for a key this transaction is about to create.
        db.locks
            .lock_new_record(
                &mut self.locks,
                t.clustered.index_id(),
                LockKey::Key(key.clone()),
                self.lock_wait_timeout,
                self.interrupt.as_deref(),
            )
            .map_err(lock_error)?;
        let entries = db.entries(t, &row, row_id, self.id)?;
        for (ix, (k, _)) in t.indexes.iter().zip(&entries) {
            if ix.def.unique {
                self.check_unique(t, ix, &row, k)?;
            }
        }
        let revived = self.revived(
            t.indexes
                .iter()
                .zip(&entries)
                .map(|(ix, (k, _))| (ix, k.as_slice())),
        )?;
        let cur = t.clustered.get(engine, &key)?;
        let logging = t.row_log().is_some();
        let mut revived_row = None;
        match cur {
            Some(e) if !e.delete_marked => return Err(t.duplicate_primary(&row)),
            Some(e) => {
                if logging {
                    revived_row = Some(db.decode_version(t, &e.value)?);
                }
                let payload = encode_update(&key, Op::Revive, &revived, &e.value);
                let roll = self.undo_append(UndoKind::Update, t.def.id, &payload)?;
                let w = blob::RowWrite::plan(engine, t, &db.limits, &row, row_id, (self.id, roll))?;
                w.replace(&t.clustered, false)?;
            }
            None => {
                let roll = self.undo_append(UndoKind::Insert, t.def.id, &encode_insert(&key))?;
                let w = blob::RowWrite::plan(engine, t, &db.limits, &row, row_id, (self.id, roll))?;
                self.gap_insert(t, &t.clustered, &key, || w.insert(&t.clustered))
                    .map_err(|e| match e {
                        DbError::DuplicateKey { .. } => t.duplicate_primary(&row),
                        e => e,
                    })?;
            }
        }
        for (ix, (k, v)) in t.indexes.iter().zip(entries) {
            self.put_entry(t, ix, &row, &k, &v)?;
        }
        if logging {
            match &revived_row {
                Some(old) => db.log_change(t, &key, &[old, &row]),
                None => db.log_change(t, &key, &[&row]),
            }
        }
        t.stats.note_changes(1, &db.stats_epoch);
        Ok(row)
    }

    /// Index numbers whose entry in `entries` exists, delete-marked (an insert or update
    /// will revive it). Under our X lock on the row only purge can change that, by
    /// removing such an entry: `put_entry` then inserts it, and a rollback that finds it
    /// needed by no view removes it rather than marking it again (invariant 1).
    fn revived<'e>(
        &self,
        entries: impl IntoIterator<Item = (&'e Index, &'e [u8])>,
    ) -> Result<Vec<Revived>> {
        let mut out = Vec::new();
        for (ix, k) in entries {
            if let Some(e) = ix.tree.get(&self.db.engine, k)? {
                if e.delete_marked {
                    out.push(Revived {
                        index_no: ix.def.index_no,
                        marker: Some(entry_trx(&e.value)?),
                    });
                }
            }
        }
        Ok(out)
    }

    /// Inserts entry (k, v), or revives it if it is there delete-marked.
    fn put_entry(
        &mut self,
        t: &TableState,
        ix: &Index,
        row: &[Value],
        k: &[u8],
        v: &[u8],
    ) -> Result<()> {
        let engine = &self.db.engine;
        loop {
            return match ix.tree.get(engine, k)? {
                Some(e) if e.delete_marked => match ix.tree.replace(engine, k, v, false) {
                    Ok(_) => Ok(()),
                    // Purge removed the marked entry between the lookup and the revive (it
                    // takes no row lock: docs/purge.md): insert it instead.
                    Err(crate::btree::BTreeError::NotFound) => continue,
                    Err(e) => Err(e.into()),
                },
                Some(_) => Err(ix.duplicate(&t.def.columns, row)),
                None => self.gap_insert(t, &ix.tree, k, || match ix.tree.insert(engine, k, v) {
                    Err(crate::btree::BTreeError::DuplicateKey) => {
                        Err(ix.duplicate(&t.def.columns, row))
                    }
                    r => r.map(|_| ()).map_err(Into::into),
                }),
            };
        }
    }

    /// A unique index may not get a second live entry with the same secondary part. An
    /// entry of an active transaction is waited for (S lock on its row), then looked at
    /// again: it may be rolled back. NULLs never collide.
    ///
    /// The check and the insert of the entry that follows it must be one step for every
    /// other writer of the same value: two transactions inserting `k = 1` at once (with
    /// different primary keys, so different entry keys) would otherwise both find nothing
    /// and both insert. So the value itself is X-locked first, in a lock space of its own
    /// (`unique_value_lock`), until the transaction ends: a second inserter of the value
    /// waits for the first to end, then finds its entry (1062) or, if it rolled back,
    /// none. InnoDB gets the same effect from its page latch and implicit locks. The lock
    /// manager sees this wait, so deadlocks through it are detected.
    fn check_unique(&mut self, t: &TableState, ix: &Index, row: &[Value], k: &[u8]) -> Result<()> {
        if ix.null_in(row) {
            return Ok(());
        }
        let n = ix.layout.secondary_part_len(k)?;
        let prefix = k[..n].to_vec();
        self.lock(
            unique_value_lock(ix.tree.index_id()),
            &LockKey::Key(prefix.clone()),
            LockMode::Exclusive,
            LockKind::Record,
        )?;
        'again: loop {
            let cur = ix.tree.scan(
                &self.db.engine,
                Bound::Included(&prefix),
                Bound::Unbounded,
                Direction::Forward,
            );
            for e in cur {
                let e = e?;
                if !e.key.starts_with(&prefix) {
                    break;
                }
                if e.key == k {
                    continue;
                }
                let owner = entry_trx(&e.value)?;
                if owner != self.id && self.db.trx.is_active(owner) {
                    let pk = e.key[n..].to_vec();
                    let mode = if self.upserting {
                        LockMode::Exclusive
                    } else {
                        LockMode::Shared
                    };
                    self.lock(
                        t.clustered.index_id(),
                        &LockKey::Key(pk),
                        mode,
                        LockKind::Record,
                    )?;
                    continue 'again;
                }
                if !e.delete_marked {
                    return Err(ix.duplicate(&t.def.columns, row));
                }
            }
            return Ok(());
        }
    }

    /// Replaces the row with primary key `pk`; the new row may have another primary key
    /// (the old row is then delete-marked and the new one inserted). Returns whether the
    /// row changed: a row equal to the old one is only locked, nothing is written (MySQL
    /// counts it as matched, not changed).
    pub fn update(&mut self, table: &Table<'_>, pk: &[Value], row: Vec<Value>) -> Result<bool> {
        let changed = self.write_statement(table, |tx| {
            table.with_state(|t| {
                let key = table.pk_key(t, pk)?;
                tx.update_key(table, t, key, row)
            })
        })?;
        self.count_update(changed);
        Ok(changed)
    }

    /// Replaces the row a handle names; returns whether it changed (as `update`).
    pub fn update_row(
        &mut self,
        table: &Table<'_>,
        h: &RowHandle,
        row: Vec<Value>,
    ) -> Result<bool> {
        let changed = self.write_statement(table, |tx| {
            table.with_state(|t| {
                let key = h.key_in(t)?.to_vec();
                tx.update_key(table, t, key, row)
            })
        })?;
        self.count_update(changed);
        Ok(changed)
    }

    /// Reads the row with primary key `pk` under an X lock, lets `f` change it, and writes
    /// it back (`UPDATE t SET k = k + 1 WHERE id = ?`). Returns the new row as stored and
    /// whether it changed (if `f` left it equal to the old one nothing is written: matched,
    /// not changed), or `None` if there is no such row.
    pub fn update_with(
        &mut self,
        table: &Table<'_>,
        pk: &[Value],
        f: impl FnOnce(&mut Vec<Value>),
    ) -> Result<Option<(Vec<Value>, bool)>> {
        let r = self.write_statement(table, |tx| {
            table.with_state(|t| {
                let key = table.pk_key(t, pk)?;
                let Some(cur) = tx.lock_live_row(t, &key)? else {
                    return Ok(None);
                };
                // Read once: the new row is computed from it and the index maintenance
                // compares against it.
                let old = tx.db.decode_version(t, &cur.value)?;
                let mut row = old.clone();
                f(&mut row);
                tx.update_in(table, t, key, row, cur, Some(old)).map(Some)
            })
        })?;
        if let Some((_, changed)) = &r {
            self.count_update(*changed);
        }
        Ok(r)
    }

    /// Waits out purge lag, X-locks the row with clustered key `key` and returns its
    /// record if it is live (the newest version is then committed or ours: invariant 1).
    /// The delay comes first: no one sleeps holding a row lock.
    pub(super) fn lock_live_row(&mut self, t: &TableState, key: &[u8]) -> Result<Option<Entry>> {
        self.db.purge_lag_delay();
        self.lock(
            t.clustered.index_id(),
            &LockKey::Key(key.to_vec()),
            LockMode::Exclusive,
            LockKind::Record,
        )?;
        Ok(t.clustered
            .get(&self.db.engine, key)?
            .filter(|e| !e.delete_marked))
    }

    /// Locks and reads the live row `key` for `update_in`.
    fn update_key(
        &mut self,
        table: &Table<'_>,
        t: &TableState,
        key: Vec<u8>,
        row: Vec<Value>,
    ) -> Result<bool> {
        let cur = self.lock_live_row(t, &key)?.ok_or(DbError::RowNotFound)?;
        Ok(self.update_in(table, t, key, row, cur, None)?.1)
    }

    /// Replaces the live, X-locked row `key` whose record is `cur` (and whose values are
    /// `old`, if the caller decoded them already) by `row`. Returns the row as stored and
    /// whether it changed: a row equal to the old one writes nothing (no undo record, no
    /// new version), as InnoDB skips an update that changes no column.
    pub(super) fn update_in(
        &mut self,
        table: &Table<'_>,
        t: &TableState,
        key: Vec<u8>,
        row: Vec<Value>,
        cur: Entry,
        old: Option<Vec<Value>>,
    ) -> Result<(Vec<Value>, bool)> {
        let db = self.db;
        let engine = &db.engine;
        let row_id = rowid::row_id_of_key(&t.layout, &key)?;
        let row = table.prepare(t, row)?;
        let old = match old {
            Some(o) => o,
            None => db.decode_version(t, &cur.value)?,
        };
        if row == old {
            return Ok((row, false));
        }
        if !self.fk_cascade {
            self.fk_check_child(t, &row, Some(&old))?;
        }
        self.fk_parent_change(t, &old, Some(&row))?;
        let mut new_key = Vec::new();
        t.layout
            .encode_key(&row, row_id, &db.limits, &mut new_key)?;
        if new_key != key {
            // A new primary key is a new clustered record, as in InnoDB: the old one is
            // delete-marked and the new row inserted, each with its own undo record, so
            // readers, rollback and purge see a delete and an insert. Delete first: the
            // row's own unique entries are marked by then, so they do not collide.
            self.delete_mark(t, &key, &cur, Some(old))?;
            let row = self.insert_prepared(t, row, row_id, new_key)?;
            return Ok((row, true));
        }
        let mut changed = Vec::new();
        if !t.indexes.is_empty() {
            let olds = db.entries(t, &old, row_id, self.id)?;
            let news = db.entries(t, &row, row_id, self.id)?;
            for (i, (o, n)) in olds.into_iter().zip(news).enumerate() {
                if o.0 != n.0 {
                    changed.push((i, o, n));
                }
            }
        }
        for (i, _, (k, _)) in &changed {
            let ix = &t.indexes[*i];
            if ix.def.unique {
                self.check_unique(t, ix, &row, k)?;
            }
        }
        let revived = self.revived(
            changed
                .iter()
                .map(|(i, _, (k, _))| (&t.indexes[*i], k.as_slice())),
        )?;
        let payload = encode_update(&key, Op::Update, &revived, &cur.value);
        let roll = self.undo_append(UndoKind::Update, t.def.id, &payload)?;
        let w = blob::RowWrite::plan(engine, t, &db.limits, &row, row_id, (self.id, roll))?;
        w.replace(&t.clustered, false)?;
        let index_changed = !changed.is_empty();
        for (i, (ok, ov), (nk, nv)) in changed {
            let ix = &t.indexes[i];
            ix.tree.replace(engine, &ok, &ov, true)?;
            self.put_entry(t, ix, &row, &nk, &nv)?;
        }
        db.log_change(t, &key, &[&old, &row]);
        if index_changed {
            // An indexed column changed: InnoDB's stat_modified_counter counts it.
            t.stats.note_changes(1, &db.stats_epoch);
        }
        Ok((row, true))
    }

    /// Deletes the row with primary key `pk` (delete-marks it; purge removes it once no
    /// snapshot can see it).
    pub fn delete(&mut self, table: &Table<'_>, pk: &[Value]) -> Result<()> {
        self.write_statement(table, |tx| {
            table.with_state(|t| {
                let key = table.pk_key(t, pk)?;
                tx.delete_in(t, key)
            })
        })?;
        self.count_delete();
        Ok(())
    }

    /// Deletes the row a handle names.
    pub fn delete_row(&mut self, table: &Table<'_>, h: &RowHandle) -> Result<()> {
        self.write_statement(table, |tx| {
            table.with_state(|t| {
                let key = h.key_in(t)?.to_vec();
                tx.delete_in(t, key)
            })
        })?;
        self.count_delete();
        Ok(())
    }

    fn delete_in(&mut self, t: &TableState, key: Vec<u8>) -> Result<()> {
        let cur = self.lock_live_row(t, &key)?.ok_or(DbError::RowNotFound)?;
        let old = if self.fk_referenced(t) {
            let old = self.db.decode_version(t, &cur.value)?;
            self.fk_parent_change(t, &old, None)?;
            Some(old)
        } else {
            None
        };
        self.delete_mark(t, &key, &cur, old)
    }

    /// Delete-marks the live, X-locked row `key` whose record is `cur` (and whose values
    /// are `old`, if decoded already), and its secondary entries.
    pub(super) fn delete_mark(
        &mut self,
        t: &TableState,
        key: &[u8],
        cur: &Entry,
        old: Option<Vec<Value>>,
    ) -> Result<()> {
        let db = self.db;
        let engine = &db.engine;
        let payload = encode_update(key, Op::DeleteMark, &[], &cur.value);
        let roll = self.undo_append(UndoKind::Update, t.def.id, &payload)?;
        let mut rec = cur.value.clone();
        record::set_sys(&mut rec, self.id, roll)?;
        t.clustered.replace(engine, key, &rec, true)?;
        let logging = t.row_log().is_some();
        if !t.indexes.is_empty() || logging {
            let row_id = rowid::row_id_of_key(&t.layout, key)?;
            let old = match old {
                Some(o) => o,
                None => db.decode_version(t, &cur.value)?,
            };
            for (ix, (k, v)) in t.indexes.iter().zip(db.entries(t, &old, row_id, self.id)?) {
                ix.tree.replace(engine, &k, &v, true)?;
            }
            db.log_change(t, key, &[&old]);
        }
        t.stats.note_changes(1, &db.stats_epoch);
        Ok(())
    }

    /// Takes the snapshot now (START TRANSACTION WITH CONSISTENT SNAPSHOT) instead of at
    /// the first read.
    pub fn snapshot_now(&mut self) -> Result<()> {
        self.check_active()?;
        self.view();
        Ok(())
    }

    // ------------------------------------------------------------------ savepoints

    /// SAVEPOINT name (an existing one of that name moves here).
    pub fn savepoint(&mut self, name: &str) -> Result<()> {
        self.check_active()?;
        self.savepoints.retain(|(n, _)| n != name);
        let at = self.next_undo_no();
        self.savepoints.push((name.into(), at));
        Ok(())
    }

    /// ROLLBACK TO SAVEPOINT name: undoes the changes made since; the savepoint stays,
    /// later ones are gone. Locks are kept (as InnoDB does).
    pub fn rollback_to_savepoint(&mut self, name: &str) -> Result<()> {
        self.check_active()?;
        let Some(pos) = self.savepoints.iter().position(|(n, _)| n == name) else {
            return Err(DbError::NoSuchSavepoint(name.into()));
        };
        let at = self.savepoints[pos].1;
        self.savepoints.truncate(pos + 1);
        self.rollback_to(at)
    }

    /// RELEASE SAVEPOINT name (and the later ones).
    pub fn release_savepoint(&mut self, name: &str) -> Result<()> {
        self.check_active()?;
        let Some(pos) = self.savepoints.iter().position(|(n, _)| n == name) else {
            return Err(DbError::NoSuchSavepoint(name.into()));
        };
        self.savepoints.truncate(pos);
        Ok(())
    }

    /// Applies, newest first, the undo records numbered `from` and up, then drops them.
    /// A failure part way is fatal (see [`fatal_trx`]): it never returns an error.
    fn rollback_to(&mut self, from: u64) -> Result<()> {
        if let Err(e) = self.try_rollback_to(from) {
            fatal_trx(self.id, "rolling back", &e);
        }
        Ok(())
    }

    fn try_rollback_to(&mut self, from: u64) -> Result<()> {
        let Some(undo) = self.undo.as_mut() else {
            return Ok(());
        };
        if undo.next_undo_no() <= from {
            return Ok(());
        }
        let recs = self.db.undo.records_rev(&self.db.engine, undo)?;
        for (ptr, r) in recs.iter().filter(|(_, r)| r.undo_no >= from) {
            self.db.undo_one(self.id, *ptr, r)?;
        }
        let undo = self.undo.as_mut().ok_or(DbError::TrxAborted)?;
        self.db.undo.truncate(&self.db.engine, undo, from)?;
        Ok(())
    }

    // ------------------------------------------------------------------ end

    /// COMMIT: the update undo log enters the history list with the next commit number,
    /// in one mtr; then the changes are visible, the locks released, and the call waits
    /// for the log as `innodb_flush_log_at_trx_commit` says (group commit).
    pub fn commit(mut self) -> Result<()> {
        self.check_active()?;
        let undo = self.undo.take().ok_or(DbError::TrxAborted)?;
        self.view = None;
        if undo.is_empty() {
            self.db.trx.finish(self.id, true, None);
            self.end();
            return Ok(());
        }
        let no = self.db.trx.commit_no();
        let lsn = match self.db.undo.commit(&self.db.engine, undo, no) {
            Ok(l) => l,
            // Neither committed nor rolled back: ending it here would release its locks
            // with its changes in place.
            Err(e) => fatal_trx(self.id, "committing", &DbError::from(e)),
        };
        self.db.trx.finish(self.id, true, Some(no));
        self.end();
        if let Some(lsn) = lsn {
            self.db.engine.commit_wait(lsn);
        }
        Ok(())
    }

    /// ROLLBACK: undoes every change, newest first.
    pub fn rollback(mut self) -> Result<()> {
        if self.state == State::Aborted {
            self.state = State::Ended;
            return Ok(());
        }
        self.rollback_all()
    }

    /// Undoes everything and ends the transaction (state Ended).
    fn rollback_all(&mut self) -> Result<()> {
        if self.state == State::Ended {
            return Ok(());
        }
        self.view = None;
        let r = self.rollback_to(0);
        let ended = self.finish_rolled_back();
        self.end();
        r.and(ended)
    }

    /// After a full rollback: an insert-only log is freed; an update log goes to the
    /// history, marked as rolled back, since a reader may still follow a roll pointer
    /// into it (purge frees it once every view is past). A failure is fatal.
    fn finish_rolled_back(&mut self) -> Result<()> {
        if let Err(e) = self.try_finish_rolled_back() {
            fatal_trx(self.id, "finishing the rollback of", &e);
        }
        Ok(())
    }

    fn try_finish_rolled_back(&mut self) -> Result<()> {
        let Some(mut undo) = self.undo.take() else {
            return Ok(());
        };
        if undo.is_empty() {
            self.db.trx.finish(self.id, false, None);
            return Ok(());
        }
        if !self.wrote_update {
            let r = self.db.undo.discard(&self.db.engine, undo);
            self.db.trx.finish(self.id, false, None);
            return r.map(|_| ()).map_err(Into::into);
        }
        let r = self.db.undo.append(
            &self.db.engine,
            &mut undo,
            UndoKind::Update,
            ROLLED_BACK,
            &[],
        );
        let no = self.db.trx.commit_no();
        let r = r.map_err(DbError::from).and_then(|_| {
            self.db
                .undo
                .commit(&self.db.engine, undo, no)
                .map_err(Into::into)
        });
        self.db.trx.finish(self.id, false, Some(no));
        r.map(|_| ())
    }

    fn end(&mut self) {
        self.db.locks.release_all(&mut self.locks);
        self.state = State::Ended;
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if self.state != State::Ended {
            if let Err(e) = self.rollback_all() {
                tracing::error!(trx = self.id.0, error = %e, "rolling back a dropped transaction failed");
            }
        }
    }
}

/// Rolling back or committing failed part way (an I/O error reading an undo or data page,
/// say): the transaction's changes are partly in the pages, and it is neither committed nor
/// rolled back. Ending it would release its locks and leave the rest of its changes visible
/// and, once anything else commits, permanent; keeping it open would hold them forever.
/// As InnoDB does, stop: recovery rolls the transaction back from its undo log, which is
/// durable as far as its changes are (docs/transactions.md).
fn fatal_trx(id: TrxId, what: &str, e: &DbError) -> ! {
    quire_io::fatal::fatal(&format!(
        "{what} transaction {} failed: {e}; aborting so that recovery rolls it back",
        id.0
    ))
}

/// The lock key of the record after `key` in `tree` (the gap an insert of `key` goes
/// into), or the supremum.
fn next_key(db: &DbInner, tree: &BTree, key: &[u8]) -> Result<LockKey> {
    let mut cur = tree.scan(
        &db.engine,
        Bound::Excluded(key),
        Bound::Unbounded,
        Direction::Forward,
    );
    Ok(match cur.next().transpose()? {
        Some(e) => LockKey::Key(e.key),
        None => LockKey::Supremum,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undo_payloads_round_trip() {
        let revived = [
            Revived {
                index_no: 3,
                marker: Some(TrxId(0x1234_5678_9abc)),
            },
            Revived {
                index_no: 7,
                marker: Some(TrxId(5)),
            },
        ];
        let p = encode_update(b"key", Op::Revive, &revived, b"old record");
        let u = decode_update(&p).expect("decodes");
        assert_eq!(u.key, b"key");
        assert_eq!(u.op, Op::Revive);
        assert_eq!(u.revived, revived);
        assert_eq!(u.old, b"old record");
        assert_eq!(
            decode_insert(&encode_insert(b"k1")).expect("decodes"),
            b"k1"
        );
        assert!(decode_update(&p[..4]).is_err());
    }
}
