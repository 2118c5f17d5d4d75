//! # Purge: removing what no snapshot can see any more
//!
//! Committed update-undo logs wait in the history list (docs/undo.md). Once every open
//! and future read view sees a transaction T (`TrxSys::purge_limit`), nothing needs the old
//! versions its log holds, nor the records it delete-marked. Purge then, per undo record
//! (docs/purge.md):
//!
//! - DeleteMark: if the clustered record is still delete-marked by T, removes its
//!   secondary entries that are delete-marked by T, then the record itself and its BLOB
//!   chains;
//! - Update: removes the old version's secondary entries that T delete-marked;
//! - Revive: removes the deleted version's secondary entries that the revive left
//!   delete-marked (they carry the deleter's id, the image's DB_TRX_ID);
//! - Update / Revive: resets the record's DB_TRX_ID to 0 if T's version is still the
//!   newest, and frees the old version's BLOB chains;
//!
//! and then removes the log from the history and frees its pages. A rolled-back
//! transaction's log (it ends with a `ROLLED_BACK` record) only has its pages freed.
//!
//! Lesson 4, purge never fights the workload: it takes no row lock, so no transaction
//! ever waits for purge (nor purge for a transaction); it holds a leaf latch for one
//! check-and-change at a time, and reads undo and BLOB pages with no leaf latch held; and
//! the batch size adapts (a manual `innodb_purge_batch_size` is only an upper bound).
//!
//! Invariants:
//! 1. One purger at a time (`DbInner::purge_one`, which also holds the logs fetched ahead,
//!    [`Queue`]): logs are removed in commit order.
//! 2. A log leaves the history only after all its records were purged; a crash in
//!    between purges them again, and each step checks its condition first (idempotent).
//! 3. An old version's chains (an Update or Revive image owns them) are freed only after
//!    its log left the history: no view can reach the image any more.
//! 4. Purge takes no row lock and never waits for one (it has no `TrxLocks`): DML never
//!    waits for purge. `Innodb_row_lock_waits` counts sessions only.
//! 5. Every change purge makes is decided under the X latch of the leaf it changes, on
//!    the record as it is then, in the mtr that makes it (`BTree::delete_if`,
//!    `BTree::update_in_place_if`); what purge read earlier only tells it where to look:
//!    - a secondary entry goes only if delete-marked with DB_TRX_ID = the purged T (or,
//!      for a Revive, the deleter): every view sees T, so the entry belongs to no version
//!      any view sees (`txn.rs` invariant 3), and an entry a newer transaction revived or
//!      marked carries that transaction's id and is left alone;
//!    - a clustered record goes only if delete-marked by T, byte for byte the record
//!      whose chains purge walked, and no transaction holds a record lock on its key;
//!    - DB_TRX_ID is reset only on a live record whose DB_TRX_ID is T.
//! 6. A delete-marked record is left for a later batch (its log, and the ones after it,
//!    stay in the history) while a transaction holds its key's record lock or the
//!    newest version's writer is still active: writers lock a row before reading it, so
//!    such a transaction may be about to revive the record, or may roll a revive back and
//!    bring T's delete mark back. Removing it then would break the writer; skipping it
//!    for good would leave a marked record nobody purges. Purge does not wait for it: the
//!    next batch looks again.
//! 7. No leaf latch is held while undo or BLOB pages are read. The chains of a removed
//!    record are walked before the removal and freed in its mtr (allocation pages only,
//!    latched after the tree's) and the mtrs right after.
//! 8. Only purge frees the chains of a record delete-marked by a committed transaction
//!    and of an Update or Revive image (docs/purge.md), so purge reads them without the
//!    chain lock; it takes the chain lock only around a record's removal.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, RwLockWriteGuard};

use super::txn::{decode_update, entry_trx, Op, UpdateUndo, ROLLED_BACK};
use super::{blob, rowid, DbError, DbInner, Result, TableState};
use crate::btree::{BTree, Direction, NoWork};
use crate::lock::LockKey;
use crate::row::{record, RollPtr, TrxId};
use crate::undo::{HistoryLog, UndoKind, UndoRecord};

/// The automatic batch size starts here and stays within [MIN_BATCH, MAX_BATCH].
const START_BATCH: usize = 32;
const MIN_BATCH: usize = 4;
const MAX_BATCH: usize = 1024;
/// How long the coordinator waits when nothing was purgeable, and when a round was not
/// full (purge caught up). History gathers meanwhile: at 100k commits a second, 200 logs.
const IDLE_WAIT: Duration = Duration::from_millis(10);
const CAUGHT_UP_WAIT: Duration = Duration::from_millis(2);

/// BLOB pages to free once a log is removed, per space.
type Chains = Vec<(crate::page::SpaceId, Vec<crate::page::PageNo>)>;

/// The background coordinator.
pub(super) struct Purger {
    stop: Arc<(Mutex<bool>, Condvar)>,
    handle: Option<JoinHandle<()>>,
}

impl Purger {
    pub(super) fn start(db: &Arc<DbInner>) -> Purger {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let (db2, stop2) = (db.clone(), stop.clone());
        let handle = std::thread::Builder::new()
            .name("quire-purge".into())
            .spawn(move || coordinator(&db2, &stop2))
            .map_err(|e| tracing::error!(error = %e, "could not start purge; history will grow"))
            .ok();
        Purger { stop, handle }
    }

    pub(super) fn stop(mut self) {
        *self.stop.0.lock() = true;
        self.stop.1.notify_all();
        if let Some(h) = self.handle.take() {
            if h.join().is_err() {
                tracing::error!("the purge thread panicked");
            }
        }
    }
}

fn coordinator(db: &DbInner, stop: &(Mutex<bool>, Condvar)) {
    let mut batch = START_BATCH;
    loop {
        if *stop.0.lock() {
            return;
        }
        // Read each batch: SET GLOBAL innodb_purge_batch_size applies to the next one.
        let cap = match db.live.purge_batch_size.load(Ordering::Relaxed) {
            0 => MAX_BATCH,
            n => n,
        };
        let n = batch.min(cap);
        db.counters
            .purge_batch_effective
            .store(n as u64, Ordering::Relaxed);
        let before = db.undo.history_len();
        let done = match db.purge_batch(n) {
            Ok(d) => d,
            Err(e) => {
                tracing::error!(error = %e, "purge batch failed; retrying in a second");
                let mut g = stop.0.lock();
                if !*g {
                    stop.1.wait_for(&mut g, Duration::from_secs(1));
                }
                continue;
            }
        };
        let after = db.undo.history_len();
        // Self-tuning: grow while history grows (purge is behind), shrink once purge has
        // caught up (a batch that was not full) and is well ahead, so history stays
        // bounded and a round stays short.
        if after > before.saturating_sub(done as u64) && after > n as u64 {
            batch = (batch * 2).min(MAX_BATCH);
        } else if done < n && after < n as u64 / 2 {
            batch = (batch / 2).max(MIN_BATCH);
        }
        // Caught up: let some history gather before the next round. Each round has a
        // fixed cost (the head of every rollback segment's history is read), so rounds
        // of a handful of logs would spend purge's CPU, which on a small machine is the
        // workload's, on finding work rather than doing it (lesson 4).
        let wait = match done {
            0 => Some(IDLE_WAIT),
            d if d < n => Some(CAUGHT_UP_WAIT),
            _ => None,
        };
        if let Some(wait) = wait {
            let mut g = stop.0.lock();
            if !*g {
                stop.1.wait_for(&mut g, wait);
            }
        }
    }
}

/// Logs fetched from the history lists and not purged yet, oldest first, kept under
/// `DbInner::purge_one`. Finding the oldest logs reads the head of every rollback segment's
/// list (a page or two each), so a round fetches at least `PREFETCH` and the next rounds
/// take from here: a small batch size costs no more per log than a large one. The queue
/// stays right: only purge removes history (invariant 1), and the purge limit only grows,
/// so what was fetched is still the oldest purgeable history, in order.
pub(super) type Queue = VecDeque<HistoryLog>;

/// Logs fetched per read of the history heads.
const PREFETCH: usize = 256;

impl DbInner {
    /// Purges up to `n` history logs that no view needs; returns how many.
    pub(super) fn purge_batch(&self, n: usize) -> Result<usize> {
        let mut queue = self.purge_one.lock();
        let r = self.purge_batch_from(&mut queue, n);
        if r.is_err() {
            // Fetched afresh next time: a failed round may have removed a log it had not
            // taken off the queue yet.
            queue.clear();
        }
        r
    }

    fn purge_batch_from(&self, queue: &mut Queue, n: usize) -> Result<usize> {
        if queue.len() < n {
            // The queued logs are still the heads: fetching again returns them first.
            let limit = self.trx.purge_limit();
            *queue = self
                .undo
                .history_batch(&self.engine, n.max(PREFETCH), limit)?
                .into();
        }
        let logs: Vec<HistoryLog> = queue.iter().take(n).cloned().collect();
        if logs.is_empty() {
            return Ok(0);
        }
        let workers = self.live.purge_threads.load(Ordering::Relaxed);
        if workers > 1 && logs.len() > 1 {
            let done = self.purge_parallel(&logs, workers)?;
            queue.drain(..done);
            return Ok(done);
        }
        let mut done = 0;
        let mut records = 0u64;
        for log in &logs {
            let mut chains = Vec::new();
            match self.purge_log(log, &mut chains)? {
                Some(r) => {
                    records += r;
                    self.undo.history_remove(&self.engine, log)?;
                    let removed = queue.pop_front();
                    debug_assert_eq!(removed.as_ref(), Some(log), "the queue is in history order");
                    // Only now, with the log gone, are the old versions' chains freed: a
                    // crash in between leaks them (check reports it) instead of purging
                    // the log again and freeing them twice (invariant 2).
                    for (space, pages) in chains {
                        blob::free_in_mtrs_pub(&self.engine, space, &pages)?;
                    }
                    done += 1;
                }
                // A deleted row waits for a transaction (invariant 6): this log (and those
                // after it) wait for a later batch; purge itself waits for nothing.
                None => break,
            }
        }
        self.counters.purge_batches.fetch_add(1, Ordering::Relaxed);
        self.counters
            .purge_logs
            .fetch_add(done as u64, Ordering::Relaxed);
        self.counters
            .purge_records
            .fetch_add(records, Ordering::Relaxed);
        Ok(done)
    }

    /// A batch with `innodb_purge_threads` workers: the records of all the batch's logs are
    /// split by row (hash of table and key), so each row's records stay in commit order
    /// in one worker; the coordinator then removes the logs in order. If some deleted row
    /// must wait for a transaction (invariant 6), no log is removed this time (every step
    /// is idempotent: the next batch redoes the rest).
    fn purge_parallel(&self, logs: &[HistoryLog], workers: usize) -> Result<usize> {
        use std::hash::{Hash, Hasher};
        let mut groups: Vec<Vec<(TrxId, UndoRecord)>> = vec![Vec::new(); workers];
        for log in logs {
            let recs = self.undo.history_records(&self.engine, log)?;
            if recs.iter().any(|(_, r)| r.table_id == ROLLED_BACK) {
                continue;
            }
            for (_, r) in recs {
                let key = match r.kind {
                    UndoKind::Update => decode_update(&r.payload)?.key.to_vec(),
                    UndoKind::Insert => continue,
                };
                let mut h = std::collections::hash_map::DefaultHasher::new();
                (r.table_id, key).hash(&mut h);
                groups[h.finish() as usize % workers].push((log.trx_id, r));
            }
        }
        let results: Vec<Result<Option<(u64, Chains)>>> = std::thread::scope(|s| {
            let handles: Vec<_> = groups
                .iter()
                .map(|g| {
                    s.spawn(move || -> Result<Option<(u64, Chains)>> {
                        let mut chains = Vec::new();
                        let mut removed = 0;
                        for (trx, r) in g {
                            match self.purge_record(*trx, r, &mut chains)? {
                                Some(n) => removed += n,
                                None => return Ok(None),
                            }
                        }
                        Ok(Some((removed, chains)))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(DbError::Thread("a purge worker panicked".into())))
                })
                .collect()
        });
        let mut all_chains = Vec::new();
        let mut records = 0;
        for r in results {
            match r? {
                Some((n, c)) => {
                    records += n;
                    all_chains.extend(c);
                }
                None => return Ok(0),
            }
        }
        for log in logs {
            self.undo.history_remove(&self.engine, log)?;
        }
        for (space, pages) in all_chains {
            blob::free_in_mtrs_pub(&self.engine, space, &pages)?;
        }
        self.counters.purge_batches.fetch_add(1, Ordering::Relaxed);
        self.counters
            .purge_logs
            .fetch_add(logs.len() as u64, Ordering::Relaxed);
        self.counters
            .purge_records
            .fetch_add(records, Ordering::Relaxed);
        Ok(logs.len())
    }

    /// Purges the records of one log; `None` if a delete-marked record must wait for a
    /// transaction (invariant 6): the log stays for a later batch.
    fn purge_log(&self, log: &HistoryLog, chains: &mut Chains) -> Result<Option<u64>> {
        let recs = self.undo.history_records(&self.engine, log)?;
        if recs.iter().any(|(_, r)| r.table_id == ROLLED_BACK) {
            return Ok(Some(0));
        }
        let mut removed = 0;
        for (_, r) in &recs {
            match self.purge_record(log.trx_id, r, chains)? {
                Some(n) => removed += n,
                None => return Ok(None),
            }
        }
        Ok(Some(removed))
    }

    /// Purges one undo record of transaction `trx`: returns the index records removed, or
    /// `None` if a delete-marked record must wait for a transaction (invariant 6).
    fn purge_record(&self, trx: TrxId, r: &UndoRecord, chains: &mut Chains) -> Result<Option<u64>> {
        if r.kind != UndoKind::Update {
            return Ok(Some(0));
        }
        let Some(held) = self.table_by_id(r.table_id) else {
            return Ok(Some(0));
        };
        let _s = held.dml.read();
        let Some(t) = self.table_by_id(r.table_id) else {
            return Ok(Some(0));
        };
        if trx < t.def.rebuilt_at {
            // Older than an ALTER TABLE rebuild: the version lived in the old space, with
            // the old schema; nothing of it is in the rebuilt table (alter.rs, invariant 4).
            return Ok(Some(0));
        }
        let p = decode_update(&r.payload)?;
        if blob::from_another_space(&t.layout, t.def.space, p.old)? {
            // A version from before a TRUNCATE TABLE: its tree and chains went with the
            // old space; nothing of it is in the new one.
            return Ok(Some(0));
        }
        match p.op {
            Op::DeleteMark => self.purge_deleted(&t, trx, p.key),
            Op::Update | Op::Revive => self.purge_old_version(&t, trx, &p, chains).map(Some),
        }
    }

    /// A DeleteMark record of `trx`: the row's entries and its record go if the record is
    /// still delete-marked by `trx` (invariants 5 and 6).
    fn purge_deleted(&self, t: &TableState, trx: TrxId, key: &[u8]) -> Result<Option<u64>> {
        let engine = &self.engine;
        let cidx = t.clustered.index_id();
        let lock_key = LockKey::Key(key.to_vec());
        // A first look, with no latch kept: it decides nothing that is not checked again
        // under the latch, and spares the work when the row was revived or is gone (an
        // earlier run of this log removed it, and a crash kept the log).
        let Some(cur) = t.clustered.get(engine, key)? else {
            return Ok(Some(0));
        };
        if !cur.delete_marked || record::trx_id(&cur.value)? != trx {
            // A newer transaction revived (or deleted) the row. Once it has ended the
            // record is its own, for good; while it is active it may roll back to our mark.
            // The deleted version's entries go with the purge of the Revive.
            let newest = record::trx_id(&cur.value)?;
            if self.trx.is_active(newest) {
                return Ok(None);
            }
            return Ok(Some(0));
        }
        if self.locks.has_record_lock(cidx, &lock_key) {
            return Ok(None);
        }
        let mut removed = 0;
        let mut logged = None;
        if !t.indexes.is_empty() || t.row_log().is_some() {
            // Invariant 8: these chains are freed only by purge, which is us.
            let row = blob::decode_row(engine, &t.layout, &cur.value)?;
            let row_id = rowid::row_id_of_key(&t.layout, key)?;
            for (ix, (k, _)) in t.indexes.iter().zip(self.entries(t, &row, row_id, trx)?) {
                removed += self.remove_marked_entry(t, &ix.tree, &k, trx)?;
            }
            logged = Some(row);
        }
        let _gaps = self.inherit_gaps(t, &t.clustered, key)?;
        let _c = blob::lock_for_change(t);
        let mut locked = false;
        let mut decide = |v: &[u8], marked: bool| {
            // Invariant 5, under the leaf's X latch: a writer that locked the key after our
            // first look may have read the record already.
            if self.locks.has_record_lock(cidx, &lock_key) {
                locked = true;
                return false;
            }
            marked && record::trx_id(v).is_ok_and(|id| id == trx)
        };
        if blob::delete_if(engine, t, key, &cur.value, &mut decide)? {
            removed += 1;
            // An online index build may have read the record (online.rs, invariant 2).
            if let Some(row) = &logged {
                self.log_change(t, key, &[row]);
            }
        } else if locked {
            return Ok(None);
        }
        Ok(Some(removed))
    }

    /// An Update or Revive record of `trx`: the entries the change left delete-marked go,
    /// the record's DB_TRX_ID is reset if `trx` still wrote its newest version, and the old
    /// version's chains are collected, to be freed once the log is gone (invariant 3).
    fn purge_old_version(
        &self,
        t: &TableState,
        trx: TrxId,
        p: &UpdateUndo<'_>,
        chains: &mut Chains,
    ) -> Result<u64> {
        let engine = &self.engine;
        let mut removed = 0;
        if !t.indexes.is_empty() {
            // An Update marked the old version's entries whose key changed, with its own
            // id. A Revive's old version is the deleted row: its entries that the revived
            // row does not have are still marked by the deleter, the image's DB_TRX_ID,
            // which every view sees too (it committed before `trx` could revive the row).
            let marker = match p.op {
                Op::Update => trx,
                _ => record::trx_id(p.old)?,
            };
            // Invariant 8: the image owns its chains until this log is gone.
            let old = blob::decode_row(engine, &t.layout, p.old)?;
            let row_id = rowid::row_id_of_key(&t.layout, p.key)?;
            for (ix, (k, _)) in t.indexes.iter().zip(self.entries(t, &old, row_id, marker)?) {
                removed += self.remove_marked_entry(t, &ix.tree, &k, marker)?;
            }
        }
        // The row's newest version is this transaction's and every view sees it: reset its
        // DB_TRX_ID to 0 (and DB_ROLL_PTR to none), as InnoDB does, so later readers decide
        // its visibility without a lookup in the active set and never follow its roll
        // pointer into freed undo. A shared look first: usually a newer transaction has
        // written the row since, and then the leaf is not X-latched at all.
        let newest = t.clustered.get(engine, p.key)?;
        if newest
            .is_some_and(|c| !c.delete_marked && record::trx_id(&c.value).is_ok_and(|id| id == trx))
        {
            let mut decide = |v: &[u8], marked: bool| -> Option<Vec<u8>> {
                // Invariant 5: decided again on the record as it is under the latch.
                if marked || record::trx_id(v).ok()? != trx {
                    return None;
                }
                let mut v = v.to_vec();
                record::set_sys(&mut v, TrxId(0), RollPtr(0)).ok()?;
                Some(v)
            };
            if t.clustered.update_in_place_if(engine, p.key, &mut decide)? {
                self.counters
                    .purge_trx_id_resets
                    .fetch_add(1, Ordering::Relaxed);
            }
        }
        // Invariant 3: the old version's chains were its own; freed once the log is gone
        // (`purge_batch`).
        let pages = blob::record_chain_pages(engine, &t.layout, t.def.space, p.old)?;
        if !pages.is_empty() {
            chains.push((t.def.space, pages));
        }
        Ok(removed)
    }

    /// Removes secondary entry `k` if it is delete-marked by `trx` (lesson 4: decided by
    /// the entry alone, under its leaf's X latch: invariant 5).
    fn remove_marked_entry(
        &self,
        t: &TableState,
        tree: &BTree,
        k: &[u8],
        trx: TrxId,
    ) -> Result<u64> {
        let mut decide = |v: &[u8], marked: bool| marked && entry_trx(v).is_ok_and(|id| id == trx);
        let _gaps = if t.gap_locked.load(Ordering::Acquire) == 0 {
            None
        } else {
            // Gap locks exist on this table: inherit only for an entry that will go.
            match tree.get(&self.engine, k)? {
                Some(e) if decide(&e.value, e.delete_marked) => self.inherit_gaps(t, tree, k)?,
                _ => return Ok(0),
            }
        };
        Ok(u64::from(tree.delete_if(
            &self.engine,
            k,
            &mut decide,
            &mut NoWork,
        )?))
    }

    /// Before `key` is removed from `tree`: if anyone ever took a gap lock on this table,
    /// the gap locks on `key` pass to the next record (InnoDB's lock_rec_inherit), so the
    /// gap they protect stays protected once the two gaps merge; and the gap guard is
    /// returned, to be held until the removal is done, so that no insert slips into the
    /// merged gap in between (docs/locking.md, "Inheritance").
    fn inherit_gaps<'t>(
        &self,
        t: &'t TableState,
        tree: &BTree,
        key: &[u8],
    ) -> Result<Option<RwLockWriteGuard<'t, ()>>> {
        if t.gap_locked.load(Ordering::Acquire) == 0 {
            return Ok(None);
        }
        let g = t.gaps.write();
        let next = tree
            .scan(
                &self.engine,
                std::ops::Bound::Excluded(key),
                std::ops::Bound::Unbounded,
                Direction::Forward,
            )
            .next()
            .transpose()?
            .map_or(LockKey::Supremum, |e| LockKey::Key(e.key));
        self.locks
            .inherit_gap(tree.index_id(), &LockKey::Key(key.to_vec()), &next);
        Ok(Some(g))
    }

    /// Purges until no purgeable history is left; returns the logs purged. With
    /// `progress`, logs how far it got every second (the slow shutdown).
    pub(super) fn purge_all(&self, progress: bool) -> Result<u64> {
        let start = Instant::now();
        let total = self.undo.history_len();
        if progress && total > 0 {
            tracing::info!(history = total, "slow shutdown: purging all history");
        }
        let mut done = 0u64;
        let mut last = Instant::now();
        let mut stalled = 0;
        loop {
            let n = self.purge_batch(MAX_BATCH)?;
            done += n as u64;
            if n == 0 {
                let limit = self.trx.purge_limit();
                // Invariant 1: the history is read under `purge_one`, as by every other
                // reader. Without it the background purger could remove the head log (and
                // free its page, which a new log may then take) between this read of the
                // head's reference and of its header: "no log header at offset N".
                let left = {
                    let _one = self.purge_one.lock();
                    self.undo.history_batch(&self.engine, 1, limit)?
                };
                if left.is_empty() {
                    // Nothing left, or only what an open view still needs.
                    break;
                }
                // A deleted row waits for a transaction (invariant 6): look again shortly.
                stalled += 1;
                if stalled > 50 {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
            stalled = 0;
            if progress && last.elapsed() >= Duration::from_secs(1) {
                last = Instant::now();
                tracing::info!(purged = done, of = total, "slow shutdown: purging");
                eprintln!("purge: {done} of {total} transactions' history purged");
            }
        }
        if progress && total > 0 {
            tracing::info!(
                purged = done,
                secs = start.elapsed().as_secs_f64(),
                "slow shutdown: history purged"
            );
        }
        Ok(done)
    }
}
