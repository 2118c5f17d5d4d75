//! # Table statistics: estimated rows, sizes and index cardinality
//!
//! Sampled from the trees when asked (docs/sql.md, "Statistics"), as InnoDB's transient
//! statistics are: the internal pages give the number of leaves, and up to
//! [`SAMPLE_LEAVES`] leaves spread over the tree give the records per leaf and the distinct
//! key prefixes per leaf, scaled to the whole tree. A tree of at most that many leaves is
//! read whole, so the numbers of a small table are exact (up to delete-marked records
//! waiting for purge, which are not counted). Nothing is stored: a restart, DDL or a bulk
//! load is reflected at the next call, which costs the internal pages plus the sample.

use std::collections::HashSet;

use crate::btree::BTree;
use crate::row::KeyLayout;

use super::{Result, Table};

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

impl Table<'_> {
    /// The table's statistics, sampled now (module doc).
    pub fn statistics(&self) -> Result<TableStatistics> {
        self.with_state(|t| {
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
        })
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
