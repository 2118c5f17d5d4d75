//! Estimates for ordering a join: the rows each table's access reads and the rows it
//! passes on, from the engine's kept statistics (docs/sql.md, "Statistics"), and the
//! search for the cheapest order ([`search`]).
//!
//! A step's estimate, given the tables read before it:
//! - a constant unique point (`const`) or a unique lookup (`eq_ref`): 1 row;
//! - an index lookup (`ref`) on `k` key columns: rows / `n_diff[k - 1]` of that index;
//! - a range: a fixed fraction of the rows under its equality prefix ([`RANGE_ONE_END`],
//!   [`RANGE_BOTH_ENDS`]): the engine does not yet count the records in a key range;
//! - a scan: the table's rows.
//!
//! Its rows pass on after the conditions the access does not answer: an equality of a
//! column that leads an index with a constant keeps 1 / `n_diff[0]` of them, any other
//! condition [`UNSERVED_SELECTIVITY`] (MariaDB's rule without condition selectivity,
//! `matching_candidates_in_table`: a quarter of the rows go). A table read once and
//! kept in memory (a hash join) passes on its rows / distinct values of the hashed column
//! (from an index it leads; else [`UNKNOWN_EQ_SELECTIVITY`]).
//!
//! Cost is rows read plus lookups made (a descent of a tree, a hash probe), summed over
//! the rows that reach each step; a table read once into memory also pays one per row
//! it stores, so of two otherwise equal orders the smaller table is the one kept.

use std::collections::HashMap;
use std::sync::Arc;

use quire_engine::table::TableStatistics;

use super::IndexRef;

/// Of a range with one open end: the fraction of the rows under its equality prefix it
/// is assumed to read.
pub const RANGE_ONE_END: f64 = 1.0 / 3.0;
/// Of a range bounded on both ends (`BETWEEN`).
pub const RANGE_BOTH_ENDS: f64 = 1.0 / 20.0;
/// Rows kept by the conditions of a step that neither its access nor an index's
/// cardinality answers (once per step).
pub const UNSERVED_SELECTIVITY: f64 = 0.75;
/// Rows kept by a hash join's equality when no index gives the column's distinct values.
pub const UNKNOWN_EQ_SELECTIVITY: f64 = 0.1;
/// Rows assumed for a derived table: its query has not run when the join is planned.
pub const DERIVED_ROWS: f64 = 100.0;
/// Tables the search looks ahead, exhaustively, before it fixes the next one (MariaDB's
/// `optimizer_search_depth` idea): a join of at most this many tables is searched whole.
pub const SEARCH_DEPTH: usize = 5;
/// Partial orders one look-ahead may weigh at most: with many tables it looks fewer
/// ahead ([`depth_for`]), so planning 61 tables stays quick.
pub const SEARCH_BUDGET: u64 = 10_000;

/// How many tables ahead to search among `n`: [`SEARCH_DEPTH`] or fewer, so that the
/// orders of that many (n × (n − 1) × …) stay within [`SEARCH_BUDGET`]; at least 1.
pub fn depth_for(n: usize) -> usize {
    let mut orders = 1u64;
    for d in 0..SEARCH_DEPTH.min(n) {
        orders = orders.saturating_mul((n - d) as u64);
        if orders > SEARCH_BUDGET {
            return d.max(1);
        }
    }
    SEARCH_DEPTH.min(n).max(1)
}

/// A member's numbers for estimates.
#[derive(Debug, Clone)]
pub enum Sizes {
    /// A stored table and its kept statistics.
    Table(Arc<TableStatistics>),
    /// A sequence or a derived table: rows only.
    Rows(f64),
}

impl Sizes {
    pub fn rows(&self) -> f64 {
        match self {
            Sizes::Table(s) => s.rows as f64,
            Sizes::Rows(r) => *r,
        }
    }

    /// Distinct values of the first `k` columns of `index` (`None`: unknown).
    pub fn distinct(&self, index: &IndexRef, k: usize) -> Option<f64> {
        let Sizes::Table(s) = self else { return None };
        let ix = match index {
            IndexRef::Primary => &s.clustered,
            IndexRef::Secondary(name) => s.indexes.iter().find(|i| &i.name == name)?,
        };
        let d = *ix.n_diff.get(k.checked_sub(1)?)?;
        Some((d as f64).max(1.0))
    }
}

/// One step's estimate, given the tables read before it.
#[derive(Debug, Clone, Copy)]
pub struct StepCost {
    /// Paid once, whatever the rows before (a table read once into memory).
    pub once: f64,
    /// Paid per row that reaches the step (lookups and the rows they read).
    pub per_row: f64,
    /// Rows passed on per row that reaches the step.
    pub fanout: f64,
}

/// The cheapest order of `rest` after `placed`, searched [`depth_for`] tables ahead at a
/// time; ties keep `rest`'s order. `step(m, mask)` estimates member `m` after the
/// members of bit mask `mask` (every member index is below 64).
pub fn search(
    placed: &[usize],
    rest: &[usize],
    step: &mut dyn FnMut(usize, u64) -> StepCost,
) -> Vec<usize> {
    let mut memo: HashMap<(usize, u64), StepCost> = HashMap::new();
    let mut est = |m: usize, mask: u64| *memo.entry((m, mask)).or_insert_with(|| step(m, mask));
    let mut mask = placed.iter().fold(0u64, |a, &m| a | (1u64 << m));
    let mut rest = rest.to_vec();
    let (mut outer, mut cost) = (1.0f64, 0.0f64);
    let mut order = Vec::with_capacity(rest.len());
    while !rest.is_empty() {
        let mut best = Best {
            cost: f64::INFINITY,
            first: 0,
        };
        let mut path = Vec::new();
        let depth = depth_for(rest.len());
        dive(
            &mut est, mask, &rest, depth, outer, cost, &mut path, &mut best,
        );
        let i = best.first;
        let m = rest.remove(i);
        let s = est(m, mask);
        cost += s.once + outer * s.per_row;
        outer *= s.fanout;
        mask |= 1u64 << m;
        order.push(m);
    }
    order
}

struct Best {
    cost: f64,
    /// Index into `rest` of the first table of the best partial order.
    first: usize,
}

/// Depth-first over the orders of `rest` up to `depth` tables, pruning any partial order
/// already dearer than the best one.
#[allow(clippy::too_many_arguments)]
fn dive(
    est: &mut dyn FnMut(usize, u64) -> StepCost,
    mask: u64,
    rest: &[usize],
    depth: usize,
    outer: f64,
    cost: f64,
    path: &mut Vec<usize>,
    best: &mut Best,
) {
    // Strictly cheaper only (with a margin for rounding): among equals the first found,
    // which follows `rest`'s order, wins.
    let better = |c: f64, b: f64| c < b * (1.0 - 1e-9);
    if depth == 0 || path.len() == rest.len() {
        if better(cost, best.cost) {
            best.cost = cost;
            best.first = path[0];
        }
        return;
    }
    for i in 0..rest.len() {
        if path.contains(&i) {
            continue;
        }
        let m = rest[i];
        let s = est(m, mask);
        let c = cost + s.once + outer * s.per_row;
        if !better(c, best.cost) {
            continue;
        }
        path.push(i);
        dive(
            est,
            mask | (1u64 << m),
            rest,
            depth - 1,
            outer * s.fanout,
            c,
            path,
            best,
        );
        path.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_tables_are_searched_fewer_ahead() {
        assert_eq!(depth_for(1), 1);
        assert_eq!(depth_for(5), 5);
        assert_eq!(depth_for(7), 5); // 7·6·5·4·3 = 2520
        assert_eq!(depth_for(10), 4); // 10·9·8·7 = 5040; ·6 is past the budget
        assert_eq!(depth_for(61), 2); // 61·60 = 3660
        assert_eq!(depth_for(200), 1);
    }

    #[test]
    fn the_cheapest_order_is_found_and_ties_keep_the_given_order() {
        // Member 0: 1000 rows read once; member 1: 10 rows; each passes all on.
        let mut step = |m: usize, _mask: u64| match m {
            0 => StepCost {
                once: 1000.0,
                per_row: 0.0,
                fanout: 1000.0,
            },
            _ => StepCost {
                once: 10.0,
                per_row: 0.0,
                fanout: 10.0,
            },
        };
        // Equal costs: the given order stands.
        assert_eq!(search(&[], &[0, 1], &mut step), [0, 1]);
        assert_eq!(search(&[], &[1, 0], &mut step), [1, 0]);
        // Member 1 looked up per row: after 0 it costs 1000 lookups, first 10.
        let mut step = |m: usize, mask: u64| match (m, mask) {
            (0, _) => StepCost {
                once: 1000.0,
                per_row: 0.0,
                fanout: 1000.0,
            },
            _ => StepCost {
                once: 0.0,
                per_row: 2.0,
                fanout: 1.0,
            },
        };
        assert_eq!(search(&[], &[0, 1], &mut step), [1, 0]);
    }
}
