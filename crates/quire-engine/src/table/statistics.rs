//! # Table statistics: estimated rows, sizes and index cardinality
//!
//! Sampled from the trees (docs/sql.md, "Statistics"), as InnoDB's transient statistics
//! are: the internal pages give the number of leaves, and up to [`SAMPLE_LEAVES`] leaves
//! spread over the tree give the records per leaf and the distinct key prefixes per leaf,
//! scaled to the whole tree. A tree of at most that many leaves is read whole, so the
//! numbers of a small table are exact (up to delete-marked records waiting for purge,
//! which are not counted).
//!
//! The numbers are kept in memory per table version ([`Cache`], in `TableState`), as
//! InnoDB's transient statistics (`innodb_stats_persistent=OFF`) are: computed at the
//! first use, recomputed by [`Table::analyze`] (ANALYZE TABLE), and recomputed at the next
//! use once the rows changed since the last computation pass 10 % of its row estimate
//! (InnoDB's `innodb_stats_auto_recalc`, a dynamic setting here too: off, the kept numbers
//! stay until ANALYZE TABLE). Nothing is on disk: a restart samples again.
//!
//! Invariants:
//! 1. DDL replaces the `TableState`, and with it the cache: statistics never describe
//!    another definition's indexes.
//! 2. Counting a change is two atomic operations on the row-change path and takes no
//!    lock; sampling runs outside every latch but the pages' own, with the table's DML
//!    lock shared (DML runs on; DDL waits for the sample).
//! 3. [`Cache::epoch`] — the database's statistics epoch — moves whenever numbers a plan
//!    may have been made from are replaced or become stale, so a kept plan that read
//!    statistics can tell it should be made again (quire-sql `session.rs`).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::btree::BTree;
use crate::row::KeyLayout;

use super::{Result, Table, TableState};

/// Leaves read per index (InnoDB's `innodb_stats_persistent_sample_pages` is 20).
pub const SAMPLE_LEAVES: usize = 20;

/// One index's estimate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexStatistics {
    /// `PRIMARY` for the clustered index (also without a primary key), else its name.
    pub name: String,
    /// Pages of the tree: leaves and internal pages.
    pub pages: u64,
    /// `n_diff[k]`: distinct values of the index's first `k + 1` columns (the clustered
    /// index of a table without a primary key: one entry, the rows).
    pub n_diff: Vec<u64>,
}

/// A table's estimate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableStatistics {
    pub rows: u64,
    pub clustered: IndexStatistics,
    pub indexes: Vec<IndexStatistics>,
    /// Every leaf was read: the counts are exact at the time of the call.
    pub exact: bool,
}

/// A table version's kept statistics and its change counter (module doc).
pub(super) struct Cache {
    /// The last computation (`None`: never computed for this version).
    kept: Mutex<Option<Arc<TableStatistics>>>,
    /// Rows inserted, deleted, or updated in an indexed column since the last computation.
    modified: AtomicU64,
    /// `modified` past this marks the numbers stale: 10 % of the last row estimate
    /// (`u64::MAX` while nothing is kept).
    threshold: AtomicU64,
    /// The numbers are stale; set once per computation, by the change that crossed the
    /// threshold (which moves the epoch).
    stale: AtomicBool,
    /// A session is recomputing stale numbers: the others use the old ones meanwhile.
    refreshing: AtomicBool,
}

impl Default for Cache {
    fn default() -> Self {
        Cache {
            kept: Mutex::new(None),
            modified: AtomicU64::new(0),
            threshold: AtomicU64::new(u64::MAX),
            stale: AtomicBool::new(false),
            refreshing: AtomicBool::new(false),
        }
    }
}

impl Cache {
    /// Counts `n` changed rows; the change that takes the count past the threshold marks
    /// the numbers stale and moves `epoch` (invariant 3).
    pub(super) fn note_changes(&self, n: u64, epoch: &AtomicU64) {
        let m = self
            .modified
            .fetch_add(n, Ordering::Relaxed)
            .saturating_add(n);
        if m > self.threshold.load(Ordering::Relaxed) && !self.stale.swap(true, Ordering::AcqRel) {
            epoch.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// The stale-marking threshold for numbers of `rows` rows: 10 % (InnoDB's
    /// `dict_stats_update_if_needed`).
    fn threshold_for(rows: u64) -> u64 {
        rows / 10
    }
}

impl Table<'_> {
    /// The table's statistics: the kept ones, computed now if there are none or they are
    /// stale (module doc). A session that finds them stale while another recomputes them
    /// gets the old ones.
    pub fn statistics(&self) -> Result<Arc<TableStatistics>> {
        self.with_state(|t| {
            let cache = &t.stats;
            let kept = cache.kept.lock().clone();
            let auto = self.db.live.stats_auto_recalc.load(Ordering::Relaxed);
            match kept {
                Some(s) if !auto || !cache.stale.load(Ordering::Acquire) => Ok(s),
                Some(s) if cache.refreshing.swap(true, Ordering::AcqRel) => Ok(s),
                Some(_) => {
                    let r = self.recompute(t);
                    cache.refreshing.store(false, Ordering::Release);
                    r
                }
                None => self.recompute(t),
            }
        })
    }

    /// ANALYZE TABLE: computes the statistics now and keeps them.
    pub fn analyze(&self) -> Result<Arc<TableStatistics>> {
        self.with_state(|t| self.recompute(t))
    }

    /// Samples the table and keeps the numbers; the counter starts again from zero (the
    /// changes made while sampling count towards the next computation, or are in this
    /// one: either way no change is lost from both).
    fn recompute(&self, t: &TableState) -> Result<Arc<TableStatistics>> {
        let cache = &t.stats;
        cache.modified.store(0, Ordering::Relaxed);
        let fresh = Arc::new(self.sample_now(t)?);
        cache
            .threshold
            .store(Cache::threshold_for(fresh.rows), Ordering::Relaxed);
        let replaced = cache.kept.lock().replace(fresh.clone()).is_some();
        cache.stale.store(false, Ordering::Release);
        if replaced {
            // Plans made from the old numbers may be made again (invariant 3).
            self.db.stats_epoch.fetch_add(1, Ordering::AcqRel);
        }
        Ok(fresh)
    }

    /// The table's statistics sampled now, not kept.
    pub fn sample_statistics(&self) -> Result<TableStatistics> {
        self.with_state(|t| self.sample_now(t))
    }

    fn sample_now(&self, t: &TableState) -> Result<TableStatistics> {
        {
            let engine = &self.db.engine;
            let pk_parts = t.def.primary_key.len().max(1);
            let (clustered, rows, exact) = sample(
                engine,
                &t.clustered,
                t.layout.key_layout(),
                pk_parts,
                "PRIMARY",
            )?;
            let mut indexes = Vec::with_capacity(t.indexes.len());
            for ix in &t.indexes {
                let (mut s, _, _) = sample(
                    engine,
                    &ix.tree,
                    ix.layout.key_layout(),
                    ix.def.columns.len(),
                    &ix.def.name,
                )?;
                // An index has an entry per row: never more distinct values than rows, and
                // at least one value when there are rows (a sample that met only entries
                // delete-marked and waiting for purge saw none).
                for d in &mut s.n_diff {
                    *d = (*d).min(rows).max(u64::from(rows > 0));
                }
                indexes.push(s);
            }
            Ok(TableStatistics {
                rows,
                clustered,
                indexes,
                exact,
            })
        }
    }
}

/// Samples one tree: its statistics, its live entries and whether it was read whole.
///
/// Distinct prefixes: the changes of value between neighbouring keys of each sampled leaf,
/// and between its first key and the last key of the leaf before it, scaled to all leaves
/// (+1 for the first value); read whole, that is exact. A sample that straddles few
/// changes is noisy: when it saw fewer distinct prefixes than it read leaves, each value
/// spans many leaves and the spread sample met them all (a column of ten values over
/// thousands of leaves shows all ten there), so that count is the estimate; otherwise the
/// estimate is at least it.
fn sample(
    engine: &crate::engine::Engine,
    tree: &BTree,
    key: &KeyLayout,
    parts: usize,
    name: &str,
) -> Result<(IndexStatistics, u64, bool)> {
    let (mut sampled, mut live) = (0u64, 0u64);
    let mut changes = vec![0u64; parts];
    let mut seen: Vec<HashSet<Vec<u8>>> = vec![HashSet::new(); parts];
    let prefix = |k: &[u8], n: usize| key.skip(k, n).unwrap_or(k.len()).min(k.len());
    let (leaves, internal) = tree.sample_leaves(engine, SAMPLE_LEAVES, &mut |recs, before| {
        sampled += 1;
        let mut prev: Option<&[u8]> = before;
        for &(k, deleted) in recs {
            if deleted {
                continue;
            }
            live += 1;
            for n in 0..parts {
                let p = &k[..prefix(k, n + 1)];
                if prev.is_some_and(|q| q[..prefix(q, n + 1)] != *p) {
                    changes[n] += 1;
                }
                if seen[n].len() < 100_000 {
                    seen[n].insert(p.to_vec());
                }
            }
            prev = Some(k);
        }
    })?;
    let whole = sampled >= leaves;
    let scale = |x: u64| match (whole, sampled) {
        (true, _) | (_, 0) => x,
        _ => x.saturating_mul(leaves) / sampled,
    };
    let rows = scale(live);
    let n_diff = (0..parts)
        .map(|n| {
            if live == 0 {
                return 0;
            }
            let seen = seen[n].len() as u64;
            // Fewer distinct values seen than leaves sampled: each value spans many leaves
            // and the spread sample met them all; the scaled changes would only add noise.
            let d = if !whole && seen < sampled {
                seen
            } else {
                (scale(changes[n]) + 1).max(seen)
            };
            d.min(rows)
        })
        .collect();
    Ok((
        IndexStatistics {
            name: name.to_string(),
            pages: leaves + internal,
            n_diff,
        },
        rows,
        whole,
    ))
}
