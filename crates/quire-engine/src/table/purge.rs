//! # Purge: removing what no snapshot can see any more
//!
//! Committed update-undo logs wait in the history list (docs/undo.md). Once every open
//! and future read view sees a transaction (`TrxSys::purge_limit`), nothing needs the old
//! versions its log holds, nor the records it delete-marked. Purge then, per undo record
//! (docs/purge.md):
//!
//! - DeleteMark: if the clustered record is still delete-marked by that transaction,
//!   removes its secondary entries that are delete-marked by it, then the record itself
//!   and its BLOB chains;
//! - Update / Revive: removes the secondary entries of the old version that the change
//!   delete-marked (still marked by that transaction), and frees the old version's BLOB
//!   chains;
//!
//! and then removes the log from the history and frees its pages. A rolled-back
//! transaction's log (it ends with a `ROLLED_BACK` record) only has its pages freed.
//!
//! Lesson 4, purge never fights the workload:
//! - the checks are cheap: a secondary entry's own DB_TRX_ID and delete mark decide; the
//!   clustered record is read once per undo record, and no latch is held while undo is
//!   read;
//! - purge takes the row's X lock, like any writer, but waits at most `LOCK_WAIT` for it:
//!   a row busy with a long transaction is retried in a later batch;
//! - the batch size adapts: it doubles while history grows and halves when purge is
//!   ahead; a manual `innodb_purge_batch_size` is only an upper bound, so no setting
//!   makes a batch so large that DML waits behind it (the seed's cliff at 129).
//!
//! Invariants:
//! 1. One purger at a time (`DbInner::purge_one`): logs are removed in commit order.
//! 2. A log leaves the history only after all its records were purged; a crash in
//!    between purges them again, and each step checks its condition first (idempotent).
//! 3. An old version's chains are freed only after no view can see the version.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::txn::{decode_update, entry_trx, Op, ROLLED_BACK};
use super::{blob, rowid, DbError, DbInner, Result};
use crate::btree::{BTree, Direction};
use crate::lock::{LockError, LockKey, LockKind, LockMode, TrxLocks};
use crate::row::{record, TrxId};
use crate::undo::{HistoryLog, UndoKind, UndoRecord};

/// How long purge waits for a row lock before leaving the row to a later batch.
const LOCK_WAIT: Duration = Duration::from_millis(200);
/// The automatic batch size starts here and stays within [MIN_BATCH, MAX_BATCH].
const START_BATCH: usize = 32;
const MIN_BATCH: usize = 4;
const MAX_BATCH: usize = 1024;
/// Purge's lock owner id: above every transaction id (`TrxId::MAX`), never assigned.
const PURGE_TRX: TrxId = TrxId::MAX;

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
        // Self-tuning: grow while history grows (purge is behind), shrink while purge is
        // ahead, so one batch never holds up DML for long and history stays bounded.
        if after > before.saturating_sub(done as u64) && after > n as u64 {
            batch = (batch * 2).min(MAX_BATCH);
        } else if after < n as u64 / 2 {
            batch = (batch / 2).max(MIN_BATCH);
        }
        if done == 0 {
            let mut g = stop.0.lock();
            if !*g {
                stop.1.wait_for(&mut g, Duration::from_millis(10));
            }
        }
    }
}

impl DbInner {
    /// Purges up to `n` history logs that no view needs; returns how many.
    pub(super) fn purge_batch(&self, n: usize) -> Result<usize> {
        let _one = self.purge_one.lock();
        let limit = self.trx.purge_limit();
        let logs = self.undo.history_batch(&self.engine, n, limit)?;
        if logs.is_empty() {
            return Ok(0);
        }
        let workers = self.live.purge_threads.load(Ordering::Relaxed);
        if workers > 1 && logs.len() > 1 {
            return self.purge_parallel(&logs, workers);
        }
        let mut done = 0;
        let mut records = 0u64;
        for log in &logs {
            let mut chains = Vec::new();
            match self.purge_log(log, &mut chains)? {
                Some(r) => {
                    records += r;
                    self.undo.history_remove(&self.engine, log)?;
                    // Only now, with the log gone, are the old versions' chains freed: a
                    // crash in between leaks them (check reports it) instead of purging
                    // the log again and freeing them twice (invariant 2).
                    for (space, pages) in chains {
                        blob::free_in_mtrs_pub(&self.engine, space, &pages)?;
                    }
                    done += 1;
                }
                // A row stayed locked: this log (and those after it) wait for a later batch.
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
    /// in one worker; the coordinator then removes the logs in order. If some row stayed
    /// locked, no log is removed this time (every step is idempotent: the next batch
    /// redoes the rest).
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

    /// Purges the records of one log; `None` if a row lock could not be had in time.
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
    /// `None` if the row stayed locked.
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
        let p = decode_update(&r.payload)?;
        let engine = &self.engine;
        if blob::from_another_space(&t.layout, t.def.space, p.old)? {
            // A version from before a TRUNCATE TABLE: its tree and chains went with the
            // old space; nothing of it is in the new one.
            return Ok(Some(0));
        }
        let mut owner = TrxLocks::new(PURGE_TRX);
        let cidx = t.clustered.index_id();
        match self.locks.lock(
            &mut owner,
            cidx,
            &LockKey::Key(p.key.to_vec()),
            LockMode::Exclusive,
            LockKind::Record,
            LOCK_WAIT,
        ) {
            Ok(()) => {}
            Err(LockError::Timeout { .. } | LockError::Deadlock | LockError::Interrupted) => {
                return Ok(None)
            }
        }
        let result = (|| -> Result<u64> {
            let row_id = rowid::row_id_of_key(&t.layout, p.key)?;
            let mut removed = 0;
            match p.op {
                Op::DeleteMark => {
                    let Some(cur) = t.clustered.get(engine, p.key)? else {
                        return Ok(0);
                    };
                    if !cur.delete_marked || record::trx_id(&cur.value)? != trx {
                        return Ok(0);
                    }
                    let _c = blob::lock_for_change(&t);
                    if !t.indexes.is_empty() {
                        let row = blob::decode_row(engine, &t.layout, &cur.value)?;
                        for (ix, (k, _)) in
                            t.indexes.iter().zip(self.entries(&t, &row, row_id, trx)?)
                        {
                            removed += self.remove_marked_entry(&t, &ix.tree, &k, trx)?;
                        }
                    }
                    self.inherit_gaps(&t, &t.clustered, p.key)?;
                    match blob::delete(engine, &t, p.key, &cur.value) {
                        Ok(_) => removed += 1,
                        Err(DbError::RowNotFound) => {}
                        Err(e) => return Err(e),
                    }
                }
                Op::Update | Op::Revive => {
                    let _c = blob::lock_for_change(&t);
                    if !t.indexes.is_empty() && p.op == Op::Update {
                        let old = blob::decode_row(engine, &t.layout, p.old)?;
                        for (ix, (k, _)) in
                            t.indexes.iter().zip(self.entries(&t, &old, row_id, trx)?)
                        {
                            removed += self.remove_marked_entry(&t, &ix.tree, &k, trx)?;
                        }
                    }
                    // The row's newest version is this transaction's and every view sees
                    // it: reset its DB_TRX_ID to 0 (and DB_ROLL_PTR to none), as InnoDB
                    // does, so later readers decide its visibility without a lookup in the
                    // active set and never follow its roll pointer into freed undo.
                    if let Some(cur) = t.clustered.get(engine, p.key)? {
                        if !cur.delete_marked && record::trx_id(&cur.value)? == trx {
                            let mut v = cur.value;
                            record::set_sys(&mut v, TrxId(0), crate::row::RollPtr(0))?;
                            t.clustered.update(engine, p.key, &v)?;
                            self.counters
                                .purge_trx_id_resets
                                .fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    // Invariant 3: the old version's chains were its own; freed once the log
                    // is gone (`purge_batch`).
                    let pages = blob::record_chain_pages(engine, &t.layout, t.def.space, p.old)?;
                    if !pages.is_empty() {
                        chains.push((t.def.space, pages));
                    }
                }
            }
            Ok(removed)
        })();
        self.locks.release_all(&mut owner);
        result.map(Some)
    }

    /// Removes secondary entry `k` if it is delete-marked by `trx` (lesson 4: decided by
    /// the entry alone).
    fn remove_marked_entry(
        &self,
        t: &super::TableState,
        tree: &BTree,
        k: &[u8],
        trx: TrxId,
    ) -> Result<u64> {
        let Some(e) = tree.get(&self.engine, k)? else {
            return Ok(0);
        };
        if !e.delete_marked || entry_trx(&e.value)? != trx {
            return Ok(0);
        }
        self.inherit_gaps(t, tree, k)?;
        super::txn::ignore_missing(tree.delete(&self.engine, k))?;
        Ok(1)
    }

    /// A record about to be removed passes its gap locks to the next record, so the gap
    /// they protect stays protected once the two gaps merge (InnoDB's lock_rec_inherit).
    fn inherit_gaps(&self, t: &super::TableState, tree: &BTree, key: &[u8]) -> Result<()> {
        if t.gap_locked.load(Ordering::Acquire) == 0 {
            return Ok(());
        }
        let _g = t.gaps.write();
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
        Ok(())
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
                if self.undo.history_batch(&self.engine, 1, limit)?.is_empty() {
                    // Nothing left, or only what an open view still needs.
                    break;
                }
                // A row was locked: try again shortly.
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
