//! Execution: plans run on the engine, rows stream into the sink.
//!
//! ```text
//!   source (index ranges: get / scan / index_scan, locking or not)
//!     → WHERE → [group + aggregates | distinct | sort] → OFFSET/LIMIT → projection → sink
//! ```
//! Without grouping or sorting nothing is collected: each row goes to the sink as it is
//! read, and LIMIT stops the scan. A join's rows come from nested loops (`exec/join.rs`)
//! into the same pipeline.

pub mod join;
pub(crate) mod recursive;
pub(crate) mod window;

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};
use std::ops::Bound;

use quire_engine::btree::Direction;
use quire_engine::catalog::TableDef;
use quire_engine::row::{Collation, Column, ColumnType, Decimal, Value};
use quire_engine::table::{ReadLock, Snapshot, Table, Transaction};

use crate::bind::{AggCall, LITERAL_COLLATION};
use crate::diag::Level;
use crate::error::{Result, SqlError};
use crate::expr::{AggFn, Env, Expr, Row};
use crate::meta::{ColumnMeta, RowSink};
use crate::plan::{Access, IndexRef};
use crate::types::{self, compare, Target};

/// Where a SELECT reads from.
#[derive(Debug, Clone)]
pub enum Source {
    /// No FROM: one empty row.
    Dual,
    /// MariaDB's `seq_1_to_N[_step_S]` sequence table: one column `seq`.
    Seq {
        from: u64,
        to: u64,
        step: u64,
    },
    Table(Box<TableRef>),
    /// Several tables joined (`plan/join.rs`); the SELECT's filter is then `None`: every
    /// WHERE condition is checked at a step of the join.
    Join(Box<crate::plan::join::JoinPlan>),
    /// A UNION's members (`stmt/union.rs`): their rows are this SELECT's.
    Union(Box<crate::stmt::union::UnionPlan>),
    /// A table of information_schema: rows computed when read (`infoschema/`).
    Virtual(crate::infoschema::InfoTable),
    /// A recursive CTE (`stmt/recursive.rs`): its anchors, then its recursive members
    /// round after round (`exec/recursive.rs`).
    Recursive(Box<crate::stmt::recursive::RecursivePlan>),
    /// Inside a recursive member: the rows the recursive CTE's last round added, by the
    /// work table's id (`Env::work_rows`).
    WorkTable(usize),
}

impl Source {
    /// The tables read, in the order `select` wants them opened.
    /// A derived table's and a union member's tables come where they are read; the
    /// tables of subqueries in expressions are not here (`subquery::SubRunner` opens them).
    pub fn tables(&self) -> Vec<&TableRef> {
        match self {
            Source::Table(t) => vec![t],
            Source::Join(j) => j.tables().collect(),
            Source::Union(u) => u.members.iter().flat_map(|m| m.source.tables()).collect(),
            Source::Recursive(r) => r
                .anchors
                .iter()
                .chain(&r.steps)
                .flat_map(|m| m.source.tables())
                .collect(),
            Source::Dual | Source::Seq { .. } | Source::Virtual(_) | Source::WorkTable(_) => {
                Vec::new()
            }
        }
    }
}

/// A table as planned: its definition at plan time (a DDL since re-plans).
#[derive(Debug, Clone)]
pub struct TableRef {
    pub db: String,
    pub name: String,
    pub alias: String,
    pub def: TableDef,
    /// A temporary table's database and name as its session names it (`db`, `name` are
    /// the engine's: `temp.rs`).
    pub shown: Option<(String, String)>,
}

impl TableRef {
    /// The database and name a client sees (result metadata, qualified column names).
    pub fn shown(&self) -> (&str, &str) {
        match &self.shown {
            Some((d, n)) => (d, n),
            None => (&self.db, &self.name),
        }
    }
}

#[derive(Debug, Clone)]
pub struct SelectPlan {
    pub source: Source,
    pub access: Access,
    pub filter: Option<Expr>,
    pub items: Vec<Expr>,
    /// The collation of each item (DISTINCT compares rows in them).
    pub item_colls: Vec<Collation>,
    /// The type of each item, and its collation with how strongly it binds (what a
    /// subquery, a derived table or a UNION makes of it).
    pub item_tys: Vec<crate::func::types::Ty>,
    pub item_derived: Vec<(Collation, crate::bind::Coercibility)>,
    /// The subqueries bound in this SELECT's expressions (not those of its derived
    /// tables or union members, which their own plans hold).
    pub subqueries: Vec<std::sync::Arc<crate::subquery::Subquery>>,
    pub columns: Vec<ColumnMeta>,
    pub aggs: Vec<AggCall>,
    pub group_by: Vec<Expr>,
    /// The collation of each GROUP BY key.
    pub group_colls: Vec<Collation>,
    pub having: Option<Expr>,
    pub distinct: bool,
    /// GROUP BY … WITH ROLLUP: after each group, the super-aggregate rows of the group
    /// keys it ends (their keys NULL), and a grand total last.
    pub rollup: bool,
    /// Sort keys, when the access does not deliver the order.
    pub sort: Vec<(Expr, bool)>,
    /// The collation of each sort key.
    pub sort_colls: Vec<Collation>,
    pub limit: Option<Expr>,
    pub offset: Option<Expr>,
    pub lock: Option<ReadLock>,
    /// How `lock` waits for a row another transaction holds (`WAIT n`, `NOWAIT`,
    /// `SKIP LOCKED`); set on the statement's top SELECT only, where MariaDB's grammar
    /// puts it.
    pub lock_wait: crate::dispatch::LockWait,
    /// The window step (`window.rs`): window functions computed over the rows after
    /// HAVING, before the select list; `None` without window functions.
    pub window: Option<Box<crate::window::WindowPlan>>,
    /// The columns of a base-table source that the query reads (table order), when not all
    /// of them: the engine decodes only these (`Table::reading_only`). Set only by the
    /// SELECT planner, whose rows go to expressions; `None` for the plans whose rows are
    /// written back (multi-table UPDATE and DELETE).
    pub read_columns: Option<std::sync::Arc<[bool]>>,
    /// [`SelectPlan::read_columns`] without the columns only WHERE reads: the columns a
    /// read decodes when its key range is exactly WHERE (`range_is_filter`). `None`: the
    /// same as `read_columns`.
    pub read_columns_unfiltered: Option<std::sync::Arc<[bool]>>,
}

impl SelectPlan {
    /// Whether rows are grouped: GROUP BY, or an aggregate that is not over a window.
    fn aggregated(&self) -> bool {
        self.aggs.iter().any(|a| a.over.is_none()) || !self.group_by.is_empty()
    }
}

/// The transaction a statement runs in, or none (an autocommit read takes its own snapshot
/// and no transaction id).
pub enum Txn<'s, 'd> {
    None,
    Some(&'s mut Transaction<'d>),
    /// A transaction that has only read so far: its snapshot, and no transaction id
    /// (`None`: READ UNCOMMITTED, the newest versions).
    Snapshot(Option<Snapshot>),
}

/// A key bound converted to its column's type, for reading only: a value clamped,
/// rounded or cut to fit (1264, 1265, 1366) still bounds a superset, so it is kept
/// silently; a date that is not one (1292) or a string too long (1406) is not.
struct BoundEnv(crate::tz::Zone);

impl Env for BoundEnv {
    fn time_zone(&self) -> crate::tz::Zone {
        self.0
    }
    fn param(&self, _: usize) -> Result<Value> {
        Ok(Value::Null)
    }
    fn session(&self, _: &crate::expr::SessionFn) -> Result<Value> {
        Ok(Value::Null)
    }
    fn warn(&self, _: Level, code: u16, message: String) -> Result<()> {
        match code {
            1292 | 1406 => Err(SqlError::Raised { code, message }),
            _ => Ok(()),
        }
    }
}

/// A bound's values: `None` for NULL (a point on it matches nothing); `Err(())` inside
/// for one that does not convert to its column (the read widens to everything).
type BoundValues = Option<std::result::Result<Vec<Value>, ()>>;

/// Where a key bound is converted to its column's type: strictly, naming no row.
const BOUND_TARGET: Target<'static> = Target {
    db: "",
    table: "",
    row: 0,
    strict: true,
    cut_as_truncation: false,
};

/// A key range's bound, evaluated with `row` (a join's earlier tables' values; empty for
/// one table, whose bounds are constants).
fn eval_bound(
    b: &Bound<Vec<Expr>>,
    cols: &[&Column],
    env: &dyn Env,
    row: &[Value],
) -> Result<Option<std::result::Result<Bound<Vec<Value>>, ()>>> {
    let zone = env.time_zone();
    let vals = |es: &Vec<Expr>| -> Result<BoundValues> {
        let mut out = Vec::with_capacity(es.len());
        for (e, c) in es.iter().zip(cols) {
            let v = e.eval(
                &Row {
                    values: row,
                    aggs: &[],
                },
                env,
            )?;
            if matches!(v, Value::Null) {
                return Ok(None);
            }
            // A BIT compares with a string as numbers (`b = '5'` is 5), though a string
            // stored into one is its bytes.
            let v = match (c.ty, v) {
                (ColumnType::Bit { .. }, v @ (Value::Str(_) | Value::Bytes(_))) => {
                    Value::Double(types::num(&v))
                }
                (_, v) => v,
            };
            let at = BOUND_TARGET;
            match types::coerce(v, c, &at, &BoundEnv(zone)) {
                Ok(v) => out.push(v),
                Err(_) => return Ok(Some(Err(()))),
            }
        }
        // Keys hold TIMESTAMPs in UTC: the bound, a local time, is converted (`tz.rs`).
        crate::tz::key_to_storage(cols, zone, &mut out);
        Ok(Some(Ok(out)))
    };
    Ok(match b {
        Bound::Unbounded => Some(Ok(Bound::Unbounded)),
        // A coerced bound may have moved (1.5 → 2 on an INT column): ranges are made
        // inclusive so they stay a superset; WHERE is checked on every row anyway.
        Bound::Included(es) | Bound::Excluded(es) => vals(es)?.map(|r| r.map(Bound::Included)),
    })
}

/// Whether the one key range `access` reads is exactly the rows `filter` keeps, so that
/// WHERE need not be checked again on each row (`id BETWEEN ? AND ?`: a tenth of
/// oltp_read_only's instructions went to checking it on the rows of its range).
///
/// So only when WHERE is one condition on an integer column, the range's first column,
/// that the range was made from — `k BETWEEN a AND b`, `k >= a`, `k <= b` or `k = a`,
/// with the range's own expressions — and each bound is a literal or parameter whose
/// value is an integer the column holds
/// (one that was clamped, rounded or converted widens the range, which WHERE then
/// narrows again). Comparing integers gives no warning, so skipping it changes nothing
/// else.
fn range_is_filter(t: &TableRef, access: &Access, filter: &Expr, env: &dyn Env) -> Result<bool> {
    let [r] = access.ranges.as_slice() else {
        return Ok(false);
    };
    // One row at most: checking WHERE on it costs less than proving it need not be.
    if access.unique_points {
        return Ok(false);
    }
    fn first(b: &Bound<Vec<Expr>>) -> Option<Option<&Expr>> {
        match b {
            Bound::Included(v) => match v.as_slice() {
                [e] => Some(Some(e)),
                _ => None,
            },
            Bound::Unbounded => Some(None),
            Bound::Excluded(_) => None,
        }
    }
    let (Some(lo), Some(hi)) = (first(&r.lo), first(&r.hi)) else {
        return Ok(false);
    };
    let (k, want_lo, want_hi) = match filter {
        Expr::Between {
            e,
            lo: a,
            hi: b,
            negated: false,
            ..
        } => match **e {
            Expr::Column(k) => (k, Some(&**a), Some(&**b)),
            _ => return Ok(false),
        },
        Expr::Cmp(op, a, b, _) => {
            use crate::expr::BinOp::{Eq, Ge, Le};
            let (k, v, op) = match (&**a, &**b) {
                (Expr::Column(k), v) => (*k, v, *op),
                (v, Expr::Column(k)) => (
                    *k,
                    v,
                    match op {
                        Ge => Le,
                        Le => Ge,
                        o => *o,
                    },
                ),
                _ => return Ok(false),
            };
            match op {
                Eq => (k, Some(v), Some(v)),
                Ge => (k, Some(v), None),
                Le => (k, None, Some(v)),
                _ => return Ok(false),
            }
        }
        _ => return Ok(false),
    };
    if lo != want_lo || hi != want_hi {
        return Ok(false);
    }
    let index_first = crate::plan::index_columns(&t.def, &access.index)
        .first()
        .copied();
    let Some(col) = t.def.columns.get(k).filter(|_| index_first == Some(k)) else {
        return Ok(false);
    };
    let ColumnType::Int { .. } = col.ty else {
        return Ok(false);
    };
    // An index range open below starts at its NULL keys, which `k <= b` does not keep.
    if lo.is_none() && col.nullable {
        return Ok(false);
    }
    for e in lo.iter().chain(hi.iter()) {
        // A literal or a parameter only: evaluating it again has no effect (RAND(), a
        // subquery or an assignment would).
        if !matches!(e, Expr::Lit(_) | Expr::Param(_)) {
            return Ok(false);
        }
        let v = e.eval(
            &Row {
                values: &[],
                aggs: &[],
            },
            env,
        )?;
        let at = BOUND_TARGET;
        let exact = match &v {
            Value::Int(_) | Value::UInt(_) => {
                match types::coerce(v.clone(), col, &at, &BoundEnv(env.time_zone())) {
                    Ok(c) => compare(&c, &v, LITERAL_COLLATION) == Ordering::Equal,
                    Err(_) => false,
                }
            }
            _ => false,
        };
        if !exact {
            return Ok(false);
        }
    }
    Ok(true)
}

/// A range of key values (a prefix of the index's columns at each end).
type ValueRange = (Bound<Vec<Value>>, Bound<Vec<Value>>);

type RowIter<'d> = Box<dyn Iterator<Item = quire_engine::table::Result<Vec<Value>>> + 'd>;

/// The key ranges of `access` as values (bounds evaluated with `row`), in scan order,
/// overlapping points read once.
pub(crate) fn value_ranges(
    t: &TableRef,
    access: &Access,
    env: &dyn Env,
    row: &[Value],
) -> Result<Vec<ValueRange>> {
    let cols: Vec<&Column> = crate::plan::index_columns(&t.def, &access.index)
        .into_iter()
        .filter_map(|c| t.def.columns.get(c))
        .collect();
    let mut ranges: Vec<ValueRange> = Vec::new();
    if access.ranges.is_empty() {
        // A whole table or index is read: log_queries_not_using_indexes logs it.
        crate::status::full_scan();
        ranges.push((Bound::Unbounded, Bound::Unbounded));
    } else {
        for r in &access.ranges {
            let point = r.is_point();
            // A point's two ends are one expression: evaluated once (one warning).
            let lo = eval_bound(&r.lo, &cols, env, row)?;
            let hi = if point {
                lo.clone()
            } else {
                eval_bound(&r.hi, &cols, env, row)?
            };
            match (lo, hi) {
                (Some(Ok(lo)), Some(Ok(hi))) => ranges.push((lo, hi)),
                // A NULL point matches nothing; a NULL range bound or a value that does
                // not convert to the column: read everything and let WHERE decide.
                (None, _) | (_, None) if point => {}
                _ => {
                    ranges = vec![(Bound::Unbounded, Bound::Unbounded)];
                    break;
                }
            }
        }
        if ranges.len() > 1 {
            // Overlapping points from an IN list are read once.
            // Points equal in the column's collation ('a' and 'A') are one key.
            let colls: Vec<Collation> = cols.iter().map(|c| c.collation).collect();
            ranges.sort_by(|a, b| cmp_bound(&a.0, &b.0, &colls));
            ranges.dedup_by(|a, b| {
                cmp_bound(&a.0, &b.0, &colls) == Ordering::Equal
                    && cmp_bound(&a.1, &b.1, &colls) == Ordering::Equal
                    && matches!(
                        (&a.0, &b.0, &a.1, &b.1),
                        (
                            Bound::Included(_),
                            Bound::Included(_),
                            Bound::Included(_),
                            Bound::Included(_)
                        ) | (
                            Bound::Excluded(_),
                            Bound::Excluded(_),
                            Bound::Excluded(_),
                            Bound::Excluded(_)
                        )
                    )
            });
            merge_overlaps(&mut ranges, &colls);
            if access.backward {
                ranges.reverse();
            }
        }
    }
    Ok(ranges)
}

/// Merges ranges (sorted by their lower bounds) that may share a key into one that covers
/// both (`id > 2 OR id = 2`, overlapping BETWEENs): each key is read once. A merged range
/// may hold keys neither did; WHERE is checked on every row.
fn merge_overlaps(ranges: &mut Vec<ValueRange>, colls: &[Collation]) {
    // Whether every key of a range ending at `hi` sorts before every key of one starting
    // at `lo` (bounds are key prefixes: compared on their common length).
    let before = |hi: &Bound<Vec<Value>>, lo: &Bound<Vec<Value>>| match (hi, lo) {
        (Bound::Included(x) | Bound::Excluded(x), Bound::Included(y) | Bound::Excluded(y)) => {
            let m = x.len().min(y.len());
            cmp_rows(&x[..m], &y[..m], colls) == Ordering::Less
        }
        _ => false,
    };
    // The higher of two upper bounds.
    let higher = |a: Bound<Vec<Value>>, b: Bound<Vec<Value>>| match (&a, &b) {
        (Bound::Unbounded, _) => a,
        (_, Bound::Unbounded) => b,
        (Bound::Included(x) | Bound::Excluded(x), Bound::Included(y) | Bound::Excluded(y)) => {
            let m = x.len().min(y.len());
            match cmp_rows(&x[..m], &y[..m], colls) {
                Ordering::Less => b,
                Ordering::Greater => a,
                // Equal on the common prefix: the shorter one reaches the end of the group.
                Ordering::Equal if x.len() <= y.len() => Bound::Included(x.clone()),
                Ordering::Equal => Bound::Included(y.clone()),
            }
        }
    };
    let mut out: Vec<ValueRange> = Vec::with_capacity(ranges.len());
    for (lo, hi) in ranges.drain(..) {
        match out.last_mut() {
            Some(last) if !before(&last.1, &lo) => {
                let prev = std::mem::replace(&mut last.1, Bound::Unbounded);
                last.1 = higher(prev, hi);
            }
            _ => out.push((lo, hi)),
        }
    }
    *ranges = out;
}

/// Whether a range is one whole primary key: read with a point get.
fn is_pk_point(
    t: &TableRef,
    access: &Access,
    lo: &Bound<Vec<Value>>,
    hi: &Bound<Vec<Value>>,
) -> bool {
    access.index == IndexRef::Primary
        && lo == hi
        && matches!(lo, Bound::Included(v) if v.len() == t.def.primary_key.len())
}

/// Reads the rows of `access` (a superset of what WHERE wants).
pub fn read_rows<'d>(
    table: &Table<'d>,
    t: &TableRef,
    access: &Access,
    txn: &mut Txn<'_, 'd>,
    lock: Option<ReadLock>,
    env: &dyn Env,
    mut each: impl FnMut(Vec<Value>) -> Result<bool>,
) -> Result<()> {
    // Every row the engine hands over is examined (the slow log's `Rows_examined`), whether
    // WHERE keeps it or not; its TIMESTAMPs are read in the session's zone (`tz.rs`).
    let zone = crate::tz::RowZone::new(&t.def.columns, env.time_zone());
    let mut each = |mut row: Vec<Value>| {
        crate::status::examined(1);
        zone.from_storage(&mut row);
        each(row)
    };
    let dir = if access.backward {
        Direction::Backward
    } else {
        Direction::Forward
    };
    let ranges = value_ranges(t, access, env, &[])?;
    for (lo, hi) in ranges {
        if is_pk_point(t, access, &lo, &hi) {
            let Bound::Included(pk) = lo else { continue };
            let row = match (txn.as_mut(), lock) {
                (None, _) => match txn.snapshot() {
                    Some(snap) => table.get_in(&pk, snap)?,
                    None => table.get(&pk)?,
                },
                (Some(tx), None) => tx.get(table, &pk)?,
                (Some(tx), Some(l)) => tx.get_locking(table, &pk, l)?,
            };
            if let Some(row) = row {
                if !each(row)? {
                    return Ok(());
                }
            }
            continue;
        }
        // Locking reads stream through a callback, so a LIMIT stops the scan and locks
        // nothing past it; an error of `each` stops the engine's walk and comes back here.
        if let (Some(tx), Some(l)) = (txn.as_mut(), lock) {
            let mut failed: Option<SqlError> = None;
            let mut stopped = false;
            let mut sink = |row: Vec<Value>| match each(row) {
                Ok(true) => Ok(true),
                Ok(false) => {
                    stopped = true;
                    Ok(false)
                }
                Err(e) => {
                    failed = Some(e);
                    Ok(false)
                }
            };
            match &access.index {
                IndexRef::Primary => tx.scan_locking_each(table, lo, hi, dir, l, &mut sink)?,
                IndexRef::Secondary(ix) => {
                    tx.index_scan_locking_each(table, ix, lo, hi, dir, l, &mut sink)?
                }
            }
            if let Some(e) = failed {
                return Err(e);
            }
            if stopped {
                return Ok(());
            }
            continue;
        }
        for row in scan_iter(table, access, txn, lo, hi, dir)? {
            if !each(row?)? {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// A consistent (non-locking) read of one range, as an iterator that does not borrow the
/// transaction.
fn scan_iter<'d>(
    table: &Table<'d>,
    access: &Access,
    txn: &mut Txn<'_, 'd>,
    lo: Bound<Vec<Value>>,
    hi: Bound<Vec<Value>>,
    dir: Direction,
) -> Result<RowIter<'d>> {
    Ok(match (&access.index, txn.as_mut()) {
        (IndexRef::Primary, None) => match txn.snapshot() {
            Some(snap) => Box::new(table.scan_in_snapshot(lo, hi, dir, snap.cloned())?),
            None => Box::new(table.scan(lo, hi, dir)?),
        },
        (IndexRef::Primary, Some(tx)) => Box::new(tx.scan(table, lo, hi, dir)?),
        (IndexRef::Secondary(ix), None) => {
            let rows = match txn.snapshot() {
                Some(snap) => table.index_scan_in_snapshot(ix, lo, hi, dir, snap.cloned())?,
                None => table.index_scan(ix, lo, hi, dir)?,
            };
            Box::new(if access.covering {
                rows.index_only()
            } else {
                rows
            })
        }
        (IndexRef::Secondary(ix), Some(tx)) => {
            let rows = tx.index_scan(table, ix, lo, hi, dir)?;
            Box::new(if access.covering {
                rows.index_only()
            } else {
                rows
            })
        }
    })
}

/// The rows of one range of a join's table, owned so that the transaction is free for the
/// steps after it while they are walked: a locking read collects the range first (its
/// callback holds the transaction), so under FOR UPDATE a LIMIT stops a join at the end of
/// a range, not at the row.
pub(crate) struct RangeRows<'d> {
    rows: RangeSource<'d>,
    /// The table's TIMESTAMPs to the session's zone (`tz.rs`).
    zone: crate::tz::RowZone,
}

enum RangeSource<'d> {
    Held(std::vec::IntoIter<Vec<Value>>),
    Scan(RowIter<'d>),
}

impl Iterator for RangeRows<'_> {
    type Item = Result<Vec<Value>>;
    fn next(&mut self) -> Option<Result<Vec<Value>>> {
        let mut row = match &mut self.rows {
            RangeSource::Held(it) => it.next().map(Ok),
            RangeSource::Scan(it) => it.next().map(|r| r.map_err(SqlError::from)),
        };
        if let Some(Ok(r)) = &mut row {
            crate::status::examined(1);
            self.zone.from_storage(r);
        }
        row
    }
}

/// Opens range `lo..hi` of `access` for a join step, its rows in `zone` (`tz.rs`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn open_range<'d>(
    table: &Table<'d>,
    t: &TableRef,
    access: &Access,
    txn: &mut Txn<'_, 'd>,
    lock: Option<ReadLock>,
    lo: Bound<Vec<Value>>,
    hi: Bound<Vec<Value>>,
    zone: crate::tz::Zone,
) -> Result<RangeRows<'d>> {
    let zone = crate::tz::RowZone::new(&t.def.columns, zone);
    let rows = |rows| RangeRows { rows, zone };
    let dir = if access.backward {
        Direction::Backward
    } else {
        Direction::Forward
    };
    if is_pk_point(t, access, &lo, &hi) {
        let Bound::Included(pk) = lo else {
            return Ok(rows(RangeSource::Held(Vec::new().into_iter())));
        };
        let row = match (txn.as_mut(), lock) {
            (None, _) => match txn.snapshot() {
                Some(snap) => table.get_in(&pk, snap)?,
                None => table.get(&pk)?,
            },
            (Some(tx), None) => tx.get(table, &pk)?,
            (Some(tx), Some(l)) => tx.get_locking(table, &pk, l)?,
        };
        return Ok(rows(RangeSource::Held(
            row.into_iter().collect::<Vec<_>>().into_iter(),
        )));
    }
    if let (Some(tx), Some(l)) = (txn.as_mut(), lock) {
        let mut held = Vec::new();
        let keep = |r: Vec<Value>| {
            held.push(r);
            Ok(true)
        };
        match &access.index {
            IndexRef::Primary => tx.scan_locking_each(table, lo, hi, dir, l, keep)?,
            IndexRef::Secondary(ix) => {
                tx.index_scan_locking_each(table, ix, lo, hi, dir, l, keep)?
            }
        }
        return Ok(rows(RangeSource::Held(held.into_iter())));
    }
    Ok(rows(RangeSource::Scan(scan_iter(
        table, access, txn, lo, hi, dir,
    )?)))
}

impl<'d> Txn<'_, 'd> {
    fn as_mut(&mut self) -> Option<&mut Transaction<'d>> {
        match self {
            Txn::None | Txn::Snapshot(_) => None,
            Txn::Some(t) => Some(t),
        }
    }

    /// A read-only transaction's snapshot (`Some(None)`: READ UNCOMMITTED); `None` when the
    /// statement has a transaction or reads autocommit.
    fn snapshot(&self) -> Option<Option<&Snapshot>> {
        match self {
            Txn::Snapshot(s) => Some(s.as_ref()),
            _ => None,
        }
    }
}

fn cmp_bound(a: &Bound<Vec<Value>>, b: &Bound<Vec<Value>>, colls: &[Collation]) -> Ordering {
    match (a, b) {
        (Bound::Unbounded, Bound::Unbounded) => Ordering::Equal,
        (Bound::Unbounded, _) => Ordering::Less,
        (_, Bound::Unbounded) => Ordering::Greater,
        (Bound::Included(x) | Bound::Excluded(x), Bound::Included(y) | Bound::Excluded(y)) => {
            cmp_rows(x, y, colls)
        }
    }
}

/// Compares two rows, value `i` in collation `colls[i]`.
pub fn cmp_rows(a: &[Value], b: &[Value], colls: &[Collation]) -> Ordering {
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let coll = colls.get(i).copied().unwrap_or(LITERAL_COLLATION);
        match compare(x, y, coll) {
            Ordering::Equal => continue,
            o => return o,
        }
    }
    a.len().cmp(&b.len())
}

/// A LIMIT or OFFSET value: a non-negative integer (1210 otherwise).
pub(crate) fn limit_value(e: &Option<Expr>, env: &dyn Env, what: &str) -> Result<Option<u64>> {
    let Some(e) = e else { return Ok(None) };
    match e.eval(
        &Row {
            values: &[],
            aggs: &[],
        },
        env,
    )? {
        Value::Int(i) if i >= 0 => Ok(Some(i as u64)),
        Value::UInt(u) => Ok(Some(u)),
        _ => Err(SqlError::WrongArguments(what.into())),
    }
}

/// The state of one aggregate over a group.
#[derive(Debug, Clone)]
enum AggState {
    Count(i64),
    Sum(Option<Value>, i64),
    MinMax(Option<Value>),
    /// BIT_AND / BIT_OR / BIT_XOR so far.
    Bits(u64),
    /// GROUP_CONCAT: each row's ORDER BY keys and text, with the number of the row that
    /// gave it (warning 1260 names it).
    Concat(Vec<(Vec<Value>, String, u64)>),
    /// STD / VARIANCE so far.
    Variance(Stddev),
}

/// The running state of STD and VARIANCE: MariaDB's `Stddev` (Knuth's recurrence, TAoCP
/// vol. 2, p. 232: a running mean `m` and sum of squared differences `s`, which avoids
/// the cancellation of sum-of-squares minus square-of-sum). The same additions in the same
/// order give MariaDB's doubles to the last bit.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Stddev {
    count: u64,
    m: f64,
    s: f64,
}

impl Stddev {
    pub(crate) fn add(&mut self, x: f64) {
        self.count += 1;
        if self.count == 1 {
            self.m = x;
        } else {
            let prev = self.m;
            let diff = x - prev;
            self.m = prev + diff / self.count as f64;
            self.s += diff * (x - self.m);
        }
    }

    /// The variance (`sample`: of a sample, else of the population), its square root with
    /// `root`; NULL for no values, or for one value of a sample.
    pub(crate) fn result(&self, sample: bool, root: bool) -> Value {
        if self.count <= u64::from(sample) {
            return Value::Null;
        }
        let v = if self.count == 1 {
            0.0
        } else if sample {
            self.s / (self.count - 1) as f64
        } else {
            self.s / self.count as f64
        };
        if !root {
            return Value::Double(v);
        }
        // An overflow in the recurrence (1.7e308 and -1.7e308) is NaN: NULL, as MariaDB's
        // Item_sum_std gives it; an infinite variance is DBL_MAX.
        if v.is_nan() {
            Value::Null
        } else if v.is_infinite() {
            Value::Double(f64::MAX)
        } else {
            Value::Double(v.sqrt())
        }
    }
}

fn agg_init(c: &AggCall) -> AggState {
    match c.f {
        AggFn::CountStar | AggFn::Count => AggState::Count(0),
        AggFn::Sum | AggFn::Avg => AggState::Sum(None, 0),
        AggFn::Min | AggFn::Max => AggState::MinMax(None),
        // BIT_AND of no rows is all ones, as in MariaDB.
        AggFn::BitAnd => AggState::Bits(u64::MAX),
        AggFn::BitOr | AggFn::BitXor => AggState::Bits(0),
        AggFn::GroupConcat => AggState::Concat(Vec::new()),
        AggFn::Variance { .. } => AggState::Variance(Stddev::default()),
        // Window-only functions have no group state (`exec/window.rs` computes them).
        AggFn::RowNumber
        | AggFn::Rank
        | AggFn::DenseRank
        | AggFn::PercentRank
        | AggFn::CumeDist
        | AggFn::Ntile
        | AggFn::Lag
        | AggFn::Lead
        | AggFn::FirstValue
        | AggFn::LastValue
        | AggFn::NthValue => AggState::MinMax(None),
    }
}

/// Adds one row to aggregate `c`'s state: its arguments are evaluated on `row`; NULLs and
/// (with DISTINCT) values seen before in `seen` are skipped. `row_no` counts the group's
/// input rows from 1 across the statement.
fn agg_row(
    c: &AggCall,
    s: &mut AggState,
    seen: &mut quire_engine::hash::Set<Vec<u8>>,
    row: &[Value],
    row_no: u64,
    env: &dyn Env,
) -> Result<()> {
    if c.over.is_some() {
        // A window function is no part of a group (`exec/window.rs`).
        return Ok(());
    }
    let r = Row {
        values: row,
        aggs: &[],
    };
    if c.f == AggFn::GroupConcat {
        let vals = c
            .args()
            .map(|a| a.eval(&r, env))
            .collect::<Result<Vec<_>>>()?;
        if vals.iter().any(|v| matches!(v, Value::Null))
            || (c.distinct && !seen.insert(value_key(&vals, &c.colls)))
        {
            return Ok(());
        }
        let keys = c
            .order
            .iter()
            .map(|(e, _, _)| e.eval(&r, env))
            .collect::<Result<Vec<_>>>()?;
        let text: String = vals.into_iter().map(types::to_text).collect();
        if let AggState::Concat(pieces) = s {
            pieces.push((keys, text, row_no));
        }
        return Ok(());
    }
    let v = match &c.arg {
        Some(a) => Some(a.eval(&r, env)?),
        None => None,
    };
    if c.distinct {
        if let Some(v) = &v {
            let mut vals = vec![v.clone()];
            for m in &c.more {
                vals.push(m.eval(&r, env)?);
            }
            if vals.iter().any(|x| matches!(x, Value::Null))
                || !seen.insert(value_key(&vals, &c.colls))
            {
                return Ok(());
            }
        }
    }
    agg_add(c, s, v, env)
}

fn agg_add(c: &AggCall, s: &mut AggState, v: Option<Value>, env: &dyn Env) -> Result<()> {
    match (s, v) {
        (AggState::Count(n), None) => *n += 1,
        (_, None) => {}
        (_, Some(Value::Null)) => {}
        (AggState::Count(n), Some(_)) => *n += 1,
        (AggState::Sum(acc, n), Some(v)) => {
            // An integer onto a whole sum: the sum's digits in place (what the DECIMAL
            // addition below gives, without building a value for each row).
            let int = match v {
                Value::Int(i) => Some(i128::from(i)),
                Value::UInt(u) => Some(i128::from(u)),
                _ => None,
            };
            if let (Some(Value::Decimal(d)), Some(x)) = (acc.as_mut(), int) {
                if let (0, Some(sum)) = (d.scale, d.unscaled.checked_add(x)) {
                    d.unscaled = sum;
                    *n += 1;
                    return Ok(());
                }
            }
            let v = match v {
                Value::Str(ref s) => {
                    types::check_numeric_string(s, types::NumKind::Double, env)?;
                    Value::Double(types::num(&v))
                }
                Value::Bytes(_) => Value::Double(types::num(&v)),
                Value::Int(i) => Value::Decimal(Decimal::new(i128::from(i), 0)),
                Value::UInt(u) => Value::Decimal(Decimal::new(i128::from(u), 0)),
                // A TIME sums as its number, [-]HHMMSS[.f], as in MariaDB.
                Value::Time(t) => match crate::func::time::number(t) {
                    Value::Int(i) => Value::Decimal(Decimal::new(i128::from(i), 0)),
                    other => other,
                },
                other => other,
            };
            *acc = Some(match acc.take() {
                None => v,
                Some(a) => crate::expr::binary(crate::expr::BinOp::Add, a, v)?,
            });
            *n += 1;
        }
        (AggState::Bits(b), Some(v)) => {
            // As the bit operators: a BIGINT UNSIGNED (decimals round, doubles to even).
            let n = crate::func::cast::to_int(&v, env).map_or(0, |n| n as u64);
            match c.f {
                AggFn::BitAnd => *b &= n,
                AggFn::BitOr => *b |= n,
                _ => *b ^= n,
            }
        }
        (AggState::Concat(_), Some(_)) => {}
        (AggState::Variance(st), Some(v)) => {
            // The argument as a DOUBLE (MariaDB's val_real): 1292 for a string that is no
            // number.
            if let Value::Str(s) = &v {
                types::check_numeric_string(s, types::NumKind::Double, env)?;
            }
            st.add(types::num(&v));
        }
        (AggState::MinMax(cur), Some(v)) => {
            let replace = match cur {
                None => true,
                Some(c0) => {
                    let o = compare(&v, c0, c.coll);
                    if c.f == AggFn::Min {
                        o == Ordering::Less
                    } else {
                        o == Ordering::Greater
                    }
                }
            };
            if replace {
                *cur = Some(v);
            }
        }
    }
    Ok(())
}

fn agg_result(c: &AggCall, s: AggState, env: &dyn Env) -> Result<Value> {
    Ok(match s {
        AggState::Bits(b) => Value::UInt(b),
        AggState::Concat(pieces) if pieces.is_empty() => Value::Null,
        AggState::Concat(mut pieces) => {
            if !c.order.is_empty() {
                // Keys equal in their collation fall back to their bytes, which puts 'X'
                // before 'x' as MariaDB's sort does.
                let by = |binary: bool| {
                    move |a: &(Vec<Value>, String, u64), b: &(Vec<Value>, String, u64)| {
                        for (i, (_, desc, coll)) in c.order.iter().enumerate() {
                            let coll = if binary { Collation::Utf8mb4Bin } else { *coll };
                            let o = compare(&a.0[i], &b.0[i], coll);
                            let o = if *desc { o.reverse() } else { o };
                            if o != Ordering::Equal {
                                return o;
                            }
                        }
                        Ordering::Equal
                    }
                };
                pieces.sort_by(|a, b| by(false)(a, b).then_with(|| by(true)(a, b)));
            }
            let max = usize::try_from(c.max_len).unwrap_or(usize::MAX);
            let mut out = String::new();
            for (i, (_, text, row_no)) in pieces.iter().enumerate() {
                if i > 0 {
                    out.push_str(&c.separator);
                }
                out.push_str(text);
                if out.len() > max {
                    // Cut at a character boundary at most `max` bytes in (MariaDB's
                    // well-formed length), once per group.
                    let mut end = max;
                    while !out.is_char_boundary(end) {
                        end -= 1;
                    }
                    out.truncate(end);
                    env.warn(
                        Level::Warning,
                        1260,
                        format!("Row {row_no} was cut by GROUP_CONCAT()"),
                    )?;
                    break;
                }
            }
            Value::Str(out)
        }
        AggState::Count(n) => Value::Int(n),
        AggState::Variance(st) => match c.f {
            AggFn::Variance { sample, root } => st.result(sample, root),
            _ => Value::Null,
        },
        AggState::Sum(None, _) => Value::Null,
        AggState::Sum(Some(v), n) if c.f == AggFn::Avg => match v {
            Value::Decimal(d) => {
                crate::expr::binary(crate::expr::BinOp::Div, Value::Decimal(d), Value::Int(n))?
            }
            other => Value::Double(types::num(&other) / n as f64),
        },
        AggState::Sum(Some(v), _) => v,
        AggState::MinMax(v) => v.unwrap_or(Value::Null),
    })
}

struct Group {
    first: Vec<Value>,
    states: Vec<AggState>,
    seen: Vec<quire_engine::hash::Set<Vec<u8>>>,
}

impl Group {
    fn new(first: Vec<Value>, aggs: &[AggCall]) -> Group {
        Group {
            first,
            states: aggs.iter().map(agg_init).collect(),
            seen: vec![Default::default(); aggs.len()],
        }
    }

    fn add(&mut self, aggs: &[AggCall], row: &[Value], row_no: u64, env: &dyn Env) -> Result<()> {
        for (i, c) in aggs.iter().enumerate() {
            agg_row(c, &mut self.states[i], &mut self.seen[i], row, row_no, env)?;
        }
        Ok(())
    }

    fn results(self, aggs: &[AggCall], env: &dyn Env) -> Result<Vec<Value>> {
        aggs.iter()
            .zip(self.states)
            .map(|(c, s)| match c.over {
                // Filled in by the window step.
                Some(_) => Ok(Value::Null),
                None => agg_result(c, s, env),
            })
            .collect()
    }
}

/// Output rows after WHERE: grouping, distinct, sort, offset/limit, projection.
struct Pipeline<'p> {
    plan: &'p SelectPlan,
    env: &'p dyn Env,
    sink: &'p mut dyn RowSink,
    offset: u64,
    limit: Option<u64>,
    sent: u64,
    distinct_seen: quire_engine::hash::Set<Vec<u8>>,
    /// Rows kept for sorting: (the sort keys that are not output columns, output row).
    sorted: Vec<(Vec<Value>, Vec<Value>)>,
    /// Where each sort key's value is ([`sort_sources`]).
    sort_src: Vec<SortSrc>,
    /// DISTINCT done after the sort, on neighbours ([`sort_sources`]), not by hashing.
    distinct_after_sort: bool,
    /// The output columns are the row's own columns, each once, and nothing else reads
    /// the row: they are moved out of it, not copied ([`takes_items`]).
    take_items: bool,
    groups: BTreeMap<Vec<u8>, Group>,
    group_order: Vec<Vec<u8>>,
    /// WITH ROLLUP: per number of leading group keys `l` (0: the grand total), the groups
    /// of those keys, by the key of the first `l` values.
    rollups: Vec<BTreeMap<Vec<u8>, Group>>,
    /// Rows aggregated so far (GROUP_CONCAT's warning names the row).
    rows_in: u64,
    /// Rows after HAVING kept for the window step (`exec/window.rs`).
    windowed: Vec<window::WinRow>,
}

/// A byte key for hashing values as SQL equality sees them (for DISTINCT and GROUP BY).
/// A byte key equal for rows that are equal in SQL (strings in `colls[i]`): GROUP BY and
/// DISTINCT.
pub(crate) fn value_key(vals: &[Value], colls: &[Collation]) -> Vec<u8> {
    let mut k = Vec::new();
    for (i, v) in vals.iter().enumerate() {
        match v {
            Value::Str(s) => {
                k.push(4);
                colls
                    .get(i)
                    .copied()
                    .unwrap_or(LITERAL_COLLATION)
                    .sort_key(s, &mut k);
            }
            Value::Null => k.push(0),
            Value::Int(_) | Value::UInt(_) | Value::Decimal(_) => {
                k.push(1);
                let d = types::to_decimal(v).unwrap_or(Decimal::new(0, 0));
                let d = d.rescale(30).map_or(d.unscaled, |d| d.unscaled);
                k.extend_from_slice(&d.to_be_bytes());
            }
            Value::Double(f) => {
                k.push(2);
                k.extend_from_slice(&f.to_bits().to_be_bytes());
            }
            other => {
                k.push(3);
                let s = types::display(other);
                k.extend_from_slice(&(s.len() as u32).to_be_bytes());
                k.extend_from_slice(s.as_bytes());
            }
        }
    }
    k
}

impl Pipeline<'_> {
    /// A row that passed WHERE. Returns false when LIMIT is reached (stop reading).
    fn push(&mut self, row: Vec<Value>) -> Result<bool> {
        if self.plan.aggregated() {
            let gvals: Vec<Value> = self
                .plan
                .group_by
                .iter()
                .map(|g| {
                    g.eval(
                        &Row {
                            values: &row,
                            aggs: &[],
                        },
                        self.env,
                    )
                })
                .collect::<Result<_>>()?;
            let key = value_key(&gvals, &self.plan.group_colls);
            self.rows_in += 1;
            let plan = self.plan;
            let aggs = &plan.aggs;
            if !self.groups.contains_key(&key) {
                self.group_order.push(key.clone());
                self.groups
                    .insert(key.clone(), Group::new(row.clone(), aggs));
            }
            let g = self
                .groups
                .get_mut(&key)
                .ok_or(SqlError::InvalidGroupFunction)?;
            g.add(aggs, &row, self.rows_in, self.env)?;
            if plan.rollup {
                let n = gvals.len();
                self.rollups.resize_with(n, BTreeMap::new);
                for (l, level) in self.rollups.iter_mut().enumerate() {
                    let k = value_key(&gvals[..l], &plan.group_colls[..l]);
                    level
                        .entry(k)
                        .or_insert_with(|| Group::new(row.clone(), aggs))
                        .add(aggs, &row, self.rows_in, self.env)?;
                }
            }
            return Ok(true);
        }
        if self.take_items {
            let mut row = row;
            let out: Vec<Value> = self
                .plan
                .items
                .iter()
                .map(|e| match e {
                    Expr::Column(c) => row
                        .get_mut(*c)
                        .map_or(Value::Null, |v| std::mem::replace(v, Value::Null)),
                    // Not so planned (`take_items`).
                    _ => Value::Null,
                })
                .collect();
            if self.is_duplicate(&out) {
                return Ok(true);
            }
            return self.keep(Vec::new(), out);
        }
        self.emit(&row, &[])
    }

    /// A result row (after grouping): projection, distinct, sort or send.
    fn emit(&mut self, row: &[Value], aggs: &[Value]) -> Result<bool> {
        self.emit_at(row, aggs, None)
    }

    /// [`Pipeline::emit`] of a WITH ROLLUP super-aggregate row of the first `level` group
    /// keys: the other keys are NULL in it, as the columns they are and as select-list
    /// items equal to them (`GROUP BY a + 1` makes `a + 1` NULL).
    fn emit_at(&mut self, row: &[Value], aggs: &[Value], level: Option<usize>) -> Result<bool> {
        let plan = self.plan;
        let nulled;
        let mut row = row;
        let rolled: &[Expr] = match level {
            Some(l) => {
                let mut v = row.to_vec();
                for g in &plan.group_by[l..] {
                    if let Expr::Column(c) = g {
                        if let Some(x) = v.get_mut(*c) {
                            *x = Value::Null;
                        }
                    }
                }
                nulled = v;
                row = &nulled;
                &plan.group_by[l..]
            }
            None => &[],
        };
        let r = Row { values: row, aggs };
        if let Some(h) = &self.plan.having {
            let v = h.eval(&r, self.env)?;
            if crate::expr::condition(&v, self.env)? != Some(true) {
                return Ok(true);
            }
        }
        if self.plan.window.is_some() {
            // Window functions need every row first (invariant 1 of `exec/window.rs`).
            let mut a = aggs.to_vec();
            a.resize(plan.aggs.len(), Value::Null);
            self.windowed.push(window::WinRow {
                row: row.to_vec(),
                aggs: a,
                level,
            });
            return Ok(true);
        }
        self.project(row, aggs, rolled)
    }

    /// A result row after HAVING (and the window step): the select list, DISTINCT, then
    /// kept for ORDER BY or sent.
    fn project(&mut self, row: &[Value], aggs: &[Value], rolled: &[Expr]) -> Result<bool> {
        let r = Row { values: row, aggs };
        let out: Vec<Value> = self
            .plan
            .items
            .iter()
            .map(|e| {
                if rolled.contains(e) {
                    Ok(Value::Null)
                } else {
                    e.eval(&r, self.env)
                }
            })
            .collect::<Result<_>>()?;
        if self.is_duplicate(&out) {
            return Ok(true);
        }
        let mut key = Vec::new();
        for ((e, _), src) in self.plan.sort.iter().zip(&self.sort_src) {
            if let SortSrc::Own(_) = src {
                key.push(e.eval(&r, self.env)?);
            }
        }
        self.keep(key, out)
    }

    /// Whether DISTINCT drops the output row `out` now: one equal to it came before (when
    /// DISTINCT waits for the sort, nothing is dropped here).
    fn is_duplicate(&mut self, out: &[Value]) -> bool {
        self.plan.distinct
            && !self.distinct_after_sort
            && !self
                .distinct_seen
                .insert(value_key(out, &self.plan.item_colls))
    }

    /// An output row with its own sort keys, after DISTINCT: kept for the sort or sent.
    fn keep(&mut self, key: Vec<Value>, out: Vec<Value>) -> Result<bool> {
        if !self.plan.sort.is_empty() {
            self.sorted.push((key, out));
            if self.distinct_after_sort && self.sorted.len() >= DISTINCT_AFTER_SORT_ROWS {
                // Many rows may be few distinct ones: from here on DISTINCT hashes each
                // row as it comes, so only distinct rows are kept.
                self.distinct_after_sort = false;
                let (seen, colls) = (&mut self.distinct_seen, &self.plan.item_colls);
                self.sorted.retain(|r| seen.insert(value_key(&r.1, colls)));
            }
            return Ok(true);
        }
        self.send(out)
    }

    fn send(&mut self, out: Vec<Value>) -> Result<bool> {
        if self.limit == Some(0) {
            return Ok(false);
        }
        if self.offset > 0 {
            self.offset -= 1;
            return Ok(true);
        }
        self.sink.row(&out)?;
        self.sent += 1;
        if let Some(l) = self.limit.as_mut() {
            *l -= 1;
            if *l == 0 {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn finish(mut self) -> Result<u64> {
        if self.plan.aggregated() {
            let mut groups = std::mem::take(&mut self.groups);
            if groups.is_empty() && self.plan.group_by.is_empty() {
                // An aggregate over no rows is one row (COUNT 0, SUM NULL).
                let aggs =
                    Group::new(Vec::new(), &self.plan.aggs).results(&self.plan.aggs, self.env)?;
                let nulls = vec![Value::Null; 64];
                self.emit(&nulls, &aggs)?;
            }
            let order = std::mem::take(&mut self.group_order);
            let mut keys = order;
            if !self.plan.group_by.is_empty() {
                // MariaDB sorts GROUP BY results by the group keys unless told otherwise.
                let mut with_vals: Vec<(Vec<Value>, Vec<u8>)> = Vec::new();
                for k in keys {
                    if let Some(g) = groups.get(&k) {
                        let gv = self
                            .plan
                            .group_by
                            .iter()
                            .map(|e| {
                                e.eval(
                                    &Row {
                                        values: &g.first,
                                        aggs: &[],
                                    },
                                    self.env,
                                )
                            })
                            .collect::<Result<Vec<_>>>()?;
                        with_vals.push((gv, k));
                    }
                }
                with_vals.sort_by(|a, b| cmp_rows(&a.0, &b.0, &self.plan.group_colls));
                if self.plan.rollup {
                    return self.finish_rollup(groups, with_vals);
                }
                keys = with_vals.into_iter().map(|(_, k)| k).collect();
            }
            for k in keys {
                let Some(g) = groups.remove(&k) else { continue };
                let first = g.first.clone();
                let results = g.results(&self.plan.aggs, self.env)?;
                if !self.emit(&first, &results)? {
                    break;
                }
            }
        }
        self.finish_sorted()
    }

    /// GROUP BY … WITH ROLLUP's rows, `sorted` being the groups' keys in order: each group,
    /// then, where the next group differs in its first `d` keys, the super-aggregate rows
    /// of the keys it ends (most keys first), and the grand total last.
    fn finish_rollup(
        mut self,
        mut groups: BTreeMap<Vec<u8>, Group>,
        sorted: Vec<(Vec<Value>, Vec<u8>)>,
    ) -> Result<u64> {
        let n = self.plan.group_by.len();
        let colls = self.plan.group_colls.clone();
        let mut rollups = std::mem::take(&mut self.rollups);
        let mut go = true;
        for (i, (vals, k)) in sorted.iter().enumerate() {
            let Some(g) = groups.remove(k) else { continue };
            let first = g.first.clone();
            let results = g.results(&self.plan.aggs, self.env)?;
            if !self.emit(&first, &results)? {
                break;
            }
            // A level of `l` keys ends when the next group differs within them.
            let lo = match sorted.get(i + 1) {
                Some((next, _)) => {
                    (0..n)
                        .take_while(|&j| {
                            compare(&vals[j], &next[j], colls[j]) == Ordering::Equal
                                && matches!(vals[j], Value::Null) == matches!(next[j], Value::Null)
                        })
                        .count()
                        + 1
                }
                None => 0,
            };
            for l in (lo..n).rev() {
                let key = value_key(&vals[..l], &colls[..l]);
                let Some(level) = rollups.get_mut(l) else {
                    continue;
                };
                let Some(sup) = level.remove(&key) else {
                    continue;
                };
                let first = sup.first.clone();
                let results = sup.results(&self.plan.aggs, self.env)?;
                if !self.emit_at(&first, &results, Some(l))? {
                    go = false;
                    break;
                }
            }
            if !go {
                break;
            }
        }
        self.finish_sorted()
    }

    /// Computes the window functions of the rows kept for them and projects the rows in
    /// the order of the last window's sort.
    fn finish_window(&mut self) -> Result<()> {
        let plan = self.plan;
        let Some(w) = &plan.window else {
            return Ok(());
        };
        let mut rows = std::mem::take(&mut self.windowed);
        let order = window::compute(w, &plan.aggs, &mut rows, self.env)?;
        for i in order {
            let Some(r) = rows.get(i) else { continue };
            let rolled: &[Expr] = match r.level {
                Some(l) => plan.group_by.get(l..).unwrap_or(&[]),
                None => &[],
            };
            if !self.project(&r.row, &r.aggs, rolled)? {
                break;
            }
        }
        Ok(())
    }

    /// Sends the rows kept for ORDER BY, sorted.
    fn finish_sorted(mut self) -> Result<u64> {
        self.finish_window()?;
        if !self.plan.sort.is_empty() {
            let mut rows = std::mem::take(&mut self.sorted);
            let (plan, src) = (self.plan, &self.sort_src);
            let full = |a: &(Vec<Value>, Vec<Value>), b: &(Vec<Value>, Vec<Value>)| {
                for (i, (s, (_, desc))) in src.iter().zip(&plan.sort).enumerate() {
                    let coll = plan.sort_colls.get(i).copied().unwrap_or(LITERAL_COLLATION);
                    let o = compare(s.value(a), s.value(b), coll);
                    let o = if *desc { o.reverse() } else { o };
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                Ordering::Equal
            };
            match abbreviated_keys(&rows, src, plan) {
                // The rows' first keys' prefixes, sorted with the rows' places: the rows
                // are compared only where the prefixes are equal, and moved once.
                Some(abbr) => {
                    let mut order: Vec<(u64, usize)> = abbr.into_iter().zip(0..).collect();
                    order.sort_by(|x, y| {
                        x.0.cmp(&y.0)
                            .then_with(|| match (rows.get(x.1), rows.get(y.1)) {
                                (Some(a), Some(b)) => full(a, b),
                                _ => Ordering::Equal,
                            })
                    });
                    rows = order
                        .iter()
                        .filter_map(|&(_, i)| rows.get_mut(i).map(std::mem::take))
                        .collect();
                }
                None => rows.sort_by(full),
            }
            if self.distinct_after_sort {
                distinct_sorted(&mut rows, &plan.item_colls);
            }
            for (_, out) in rows {
                if !self.send(out)? {
                    break;
                }
            }
        }
        Ok(self.sent)
    }
}

/// The rows DISTINCT may keep for the sort before it deduplicates them as they come
/// ([`sort_sources`]): a bound on the memory of duplicates.
const DISTINCT_AFTER_SORT_ROWS: usize = 4096;

/// Where a sort key's value is kept for a row in [`Pipeline::sorted`].
#[derive(Debug, Clone, Copy)]
enum SortSrc {
    /// The output column of this index: the same expression, not evaluated (and its value
    /// not copied) twice.
    Item(usize),
    /// The key of this index among the row's own sort keys.
    Own(usize),
}

impl SortSrc {
    fn value(self, row: &(Vec<Value>, Vec<Value>)) -> &Value {
        let (v, i) = match self {
            SortSrc::Item(i) => (&row.1, i),
            SortSrc::Own(i) => (&row.0, i),
        };
        v.get(i).unwrap_or(&Value::Null)
    }
}

/// Where each sort key of `plan` is found, and whether DISTINCT can wait for the sort.
///
/// A key that is an output column (a column or an aggregate: the same expression gives
/// the same value, which is not so of `RAND()`) is read from the output row. DISTINCT
/// waits for the sort when the sort keys are exactly the output columns, each in the
/// collation DISTINCT compares it in: rows equal as DISTINCT sees them are then equal
/// sort keys, neighbours after the sort ([`distinct_sorted`]). With ROLLUP an output
/// column can be NULL where its key is not, so nothing is shared there.
fn sort_sources(plan: &SelectPlan) -> (Vec<SortSrc>, bool) {
    if plan.sort.is_empty() {
        return (Vec::new(), false);
    }
    let mut own = 0;
    let mut covered = vec![false; plan.items.len()];
    let mut all_items = true;
    let src = plan
        .sort
        .iter()
        .enumerate()
        .map(|(k, (e, _))| {
            let item = (!plan.rollup && matches!(e, Expr::Column(_) | Expr::Agg(_)))
                .then(|| plan.items.iter().position(|i| i == e))
                .flatten();
            match item {
                Some(i) => {
                    if plan.sort_colls.get(k) == plan.item_colls.get(i) {
                        covered[i] = true;
                    } else {
                        all_items = false;
                    }
                    SortSrc::Item(i)
                }
                None => {
                    all_items = false;
                    own += 1;
                    SortSrc::Own(own - 1)
                }
            }
        })
        .collect();
    let after = plan.distinct
        && plan.window.is_none()
        && !plan.sort.is_empty()
        && all_items
        && covered.iter().all(|&c| c);
    (src, after)
}

/// For a sort whose first key is a string (or NULL) in every row: each row's key prefix
/// ([`Collation::sort_key_prefix`]; NULL, first, is 0, below every string's, whose sort
/// key never starts with a 0 byte), inverted for DESC. Comparing these orders the rows as
/// the first key does wherever they differ. `None`: a key of another kind, or too few
/// rows to gain from it.
fn abbreviated_keys(
    rows: &[(Vec<Value>, Vec<Value>)],
    src: &[SortSrc],
    plan: &SelectPlan,
) -> Option<Vec<u64>> {
    let (s0, (_, desc)) = src.first().zip(plan.sort.first())?;
    if rows.len() < 8 {
        return None;
    }
    let coll = plan
        .sort_colls
        .first()
        .copied()
        .unwrap_or(LITERAL_COLLATION);
    let mut scratch = Vec::with_capacity(16);
    rows.iter()
        .map(|r| {
            let k = match s0.value(r) {
                Value::Null => 0,
                Value::Str(s) => coll.sort_key_prefix(s, &mut scratch),
                _ => return None,
            };
            Some(if *desc { !k } else { k })
        })
        .collect()
}

/// Whether a row that passed WHERE can give its values to the output row: no grouping,
/// HAVING, window or ROLLUP reads it after the select list, every output column is a
/// different column of it, and every sort key is an output column.
fn takes_items(plan: &SelectPlan, sort_src: &[SortSrc]) -> bool {
    let items = &plan.items;
    !plan.aggregated()
        && plan.having.is_none()
        && plan.window.is_none()
        && !plan.rollup
        && sort_src.iter().all(|s| matches!(s, SortSrc::Item(_)))
        && items.iter().enumerate().all(|(i, e)| {
            matches!(e, Expr::Column(_)) && !items.get(..i).is_some_and(|before| before.contains(e))
        })
}

/// DISTINCT over rows sorted by exactly their output columns: each row equal to the one
/// kept before it goes. Equal keys are neighbours when the sort's comparison is the
/// equality DISTINCT means, which holds for strings (a collation's order and its sort
/// keys agree, `row/collation.rs` invariant 1), integers and NULL; a column that holds
/// other values (or strings and numbers together) is deduplicated by [`value_key`] as
/// before the sort, which keeps the same rows (the sort is stable, so the first of equal
/// rows is still the first read).
fn distinct_sorted(rows: &mut Vec<(Vec<Value>, Vec<Value>)>, colls: &[Collation]) {
    let width = rows.first().map_or(0, |r| r.1.len());
    let simple = (0..width).all(|c| {
        let (mut text, mut int) = (false, false);
        rows.iter().all(|r| {
            match r.1.get(c) {
                Some(Value::Null) => {}
                Some(Value::Str(_)) => text = true,
                Some(Value::Int(_) | Value::UInt(_)) => int = true,
                _ => return false,
            }
            !(text && int)
        })
    });
    if simple {
        rows.dedup_by(|b, a| {
            a.1.iter().zip(&b.1).enumerate().all(|(i, (x, y))| {
                compare(x, y, colls.get(i).copied().unwrap_or(LITERAL_COLLATION)) == Ordering::Equal
            })
        });
    } else {
        let mut seen = quire_engine::hash::Set::default();
        rows.retain(|r| seen.insert(value_key(&r.1, colls)));
    }
}

/// ORDER BY's order of two rows' sort keys: key by key, each in its collation
/// (`LITERAL_COLLATION` where none is given), reversed where `desc` says so.
pub(crate) fn compare_sort_keys(
    a: &[Value],
    b: &[Value],
    desc: &[bool],
    colls: &[Collation],
) -> Ordering {
    for (i, d) in desc.iter().enumerate() {
        let coll = colls.get(i).copied().unwrap_or(LITERAL_COLLATION);
        let o = compare(&a[i], &b[i], coll);
        let o = if *d { o.reverse() } else { o };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// Sends the column definitions with the first row (or at the end), so that an error in
/// computing the first row is an error packet alone, not a result set cut short.
struct LazyHeader<'a> {
    sink: &'a mut dyn RowSink,
    columns: Option<&'a [ColumnMeta]>,
}

impl LazyHeader<'_> {
    fn header(&mut self) -> Result<()> {
        if let Some(c) = self.columns.take() {
            self.sink.columns(c)?;
        }
        Ok(())
    }
}

impl RowSink for LazyHeader<'_> {
    fn columns(&mut self, cols: &[ColumnMeta]) -> std::result::Result<(), crate::meta::SinkError> {
        self.columns = None;
        self.sink.columns(cols)
    }
    fn row(&mut self, row: &[Value]) -> std::result::Result<(), crate::meta::SinkError> {
        if let Some(c) = self.columns.take() {
            self.sink.columns(c)?;
        }
        self.sink.row(row)
    }
}

/// Runs a SELECT over `tables` (opened in [`Source::tables`] order); returns the number
/// of rows sent.
pub fn select<'d>(
    plan: &SelectPlan,
    tables: &[Table<'d>],
    txn: &mut Txn<'_, 'd>,
    env: &dyn Env,
    sink: &mut dyn RowSink,
) -> Result<u64> {
    select_limited(plan, tables, txn, env, sink, None)
}

/// [`select`] with `default_limit` as its LIMIT when it has none: a statement's top-level
/// SELECT under `sql_select_limit` (its plan, kept in caches, is not changed for it).
pub fn select_limited<'d>(
    plan: &SelectPlan,
    tables: &[Table<'d>],
    txn: &mut Txn<'_, 'd>,
    env: &dyn Env,
    sink: &mut dyn RowSink,
    default_limit: Option<u64>,
) -> Result<u64> {
    let mut lazy = LazyHeader {
        sink,
        columns: Some(&plan.columns),
    };
    let n = select_rows_into(plan, tables, txn, env, &mut lazy, default_limit)?;
    lazy.header()?;
    Ok(n)
}

fn select_rows_into<'d>(
    plan: &SelectPlan,
    tables: &[Table<'d>],
    txn: &mut Txn<'_, 'd>,
    env: &dyn Env,
    sink: &mut dyn RowSink,
    default_limit: Option<u64>,
) -> Result<u64> {
    let offset = limit_value(&plan.offset, env, "OFFSET")?.unwrap_or(0);
    let limit = match &plan.limit {
        Some(_) => limit_value(&plan.limit, env, "LIMIT")?,
        None => default_limit,
    };
    let (sort_src, distinct_after_sort) = sort_sources(plan);
    let mut p = Pipeline {
        plan,
        env,
        sink,
        offset,
        limit,
        sent: 0,
        distinct_seen: Default::default(),
        sorted: Vec::new(),
        take_items: takes_items(plan, &sort_src),
        sort_src,
        distinct_after_sort,
        groups: BTreeMap::new(),
        group_order: Vec::new(),
        rollups: Vec::new(),
        rows_in: 0,
        windowed: Vec::new(),
    };
    // LIMIT 0 reads nothing; otherwise rows stream until the pipeline says stop.
    if let (Source::Join(j), false) = (&plan.source, limit == Some(0)) {
        join::run(j, tables, txn, plan.lock, env, &mut p)?;
    } else if limit != Some(0) {
        let (filter, read_columns) = match (&plan.source, &plan.filter) {
            (Source::Table(t), Some(f)) if range_is_filter(t, &plan.access, f, env)? => (
                None,
                plan.read_columns_unfiltered
                    .as_ref()
                    .or(plan.read_columns.as_ref()),
            ),
            (_, f) => (f.as_ref(), plan.read_columns.as_ref()),
        };
        let mut each = |row: Vec<Value>| -> Result<bool> {
            if env.interrupted() {
                return Err(SqlError::Interrupted);
            }
            if let Some(f) = filter {
                let v = f.eval(
                    &Row {
                        values: &row,
                        aggs: &[],
                    },
                    env,
                )?;
                if crate::expr::condition(&v, env)? != Some(true) {
                    return Ok(true);
                }
            }
            p.push(row)
        };
        match (&plan.source, tables.first()) {
            (Source::Dual, _) => {
                each(Vec::new())?;
            }
            // Ran above.
            (Source::Join(_), _) => {}
            (Source::Union(u), _) if u.op != crate::stmt::union::SetOp::Union => {
                set_operation(u, tables, txn, env, &plan.item_colls, &mut each)?;
            }
            (Source::Union(u), _) => {
                let mut seen = HashSet::new();
                let mut at = 0;
                'members: for (i, m) in u.members.iter().enumerate() {
                    let n = m.source.tables().len();
                    let mine = tables.get(at..at + n).unwrap_or(&[]);
                    at += n;
                    for r in select_rows(m, mine, txn, env)? {
                        let r: Vec<Value> = r
                            .into_iter()
                            .zip(&u.tys)
                            .map(|(v, t)| conform(v, t))
                            .collect();
                        if u.distinct_until.is_some_and(|d| i <= d)
                            && !seen.insert(value_key(&r, &plan.item_colls))
                        {
                            continue;
                        }
                        if !each(r)? {
                            break 'members;
                        }
                    }
                }
            }
            (Source::Seq { from, to, step }, _) => {
                let mut v = *from;
                while v <= *to {
                    if !each(vec![Value::UInt(v)])? {
                        break;
                    }
                    v = match v.checked_add(*step) {
                        Some(n) => n,
                        None => break,
                    };
                }
            }
            (Source::Recursive(r), _) => {
                recursive::run(r, tables, txn, env, &mut each)?;
            }
            (Source::WorkTable(id), _) => {
                for r in env.work_rows(*id)?.iter() {
                    if !each(r.clone())? {
                        break;
                    }
                }
            }
            (Source::Virtual(t), _) => {
                // MariaDB reads information_schema as a table without indexes.
                crate::status::full_scan();
                for r in env.virtual_rows(*t)? {
                    if !each(r)? {
                        break;
                    }
                }
            }
            (Source::Table(t), Some(table)) => {
                let projected;
                let table = match read_columns {
                    Some(cols) => {
                        projected = table.reading_only(cols.clone());
                        &projected
                    }
                    None => table,
                };
                read_rows(table, t, &plan.access, txn, plan.lock, env, each)?;
            }
            (Source::Table(t), None) => {
                return Err(SqlError::NoSuchTable {
                    db: t.db.clone(),
                    table: t.name.clone(),
                })
            }
        }
    }
    p.finish()
}

/// INTERSECT / EXCEPT [ALL] of a plan's two members: the second's rows counted by their
/// value keys (NULLs equal, strings in `colls`), then the first's rows that pass, in the
/// first's order, to `each`.
fn set_operation<'d>(
    u: &crate::stmt::union::UnionPlan,
    tables: &[Table<'d>],
    txn: &mut Txn<'_, 'd>,
    env: &dyn Env,
    colls: &[Collation],
    each: &mut dyn FnMut(Vec<Value>) -> Result<bool>,
) -> Result<()> {
    use crate::stmt::union::SetOp;
    let (Some(left), Some(right)) = (u.members.first(), u.members.get(1)) else {
        return Ok(());
    };
    let nl = left.source.tables().len();
    let nr = right.source.tables().len();
    let conformed = |rows: Vec<Vec<Value>>| -> Vec<Vec<Value>> {
        rows.into_iter()
            .map(|r| {
                r.into_iter()
                    .zip(&u.tys)
                    .map(|(v, t)| conform(v, t))
                    .collect()
            })
            .collect()
    };
    let lrows = conformed(select_rows(
        left,
        tables.get(..nl).unwrap_or(&[]),
        txn,
        env,
    )?);
    let rrows = conformed(select_rows(
        right,
        tables.get(nl..nl + nr).unwrap_or(&[]),
        txn,
        env,
    )?);
    let mut counts: quire_engine::hash::Map<Vec<u8>, usize> = Default::default();
    for r in &rrows {
        *counts.entry(value_key(r, colls)).or_insert(0) += 1;
    }
    drop(rrows);
    let mut emitted = HashSet::new();
    for r in lrows {
        let key = value_key(&r, colls);
        let keep = match u.op {
            SetOp::Intersect { all: false } => counts.contains_key(&key) && emitted.insert(key),
            SetOp::Intersect { all: true } => match counts.get_mut(&key) {
                Some(c) if *c > 0 => {
                    *c -= 1;
                    true
                }
                _ => false,
            },
            SetOp::Except { all: false } => !counts.contains_key(&key) && emitted.insert(key),
            SetOp::Except { all: true } => match counts.get_mut(&key) {
                Some(c) if *c > 0 => {
                    *c -= 1;
                    false
                }
                _ => true,
            },
            SetOp::Union => true,
        };
        if keep && !each(r)? {
            break;
        }
    }
    Ok(())
}

/// A member's value as the union's column type has it (`SELECT 1 UNION SELECT 2.5` is
/// DECIMAL(2,1): 1.0); a recursive CTE's rows too.
pub(crate) fn conform(v: Value, t: &crate::func::types::Ty) -> Value {
    use crate::meta::FieldType as F;
    match (t.ft, v) {
        (_, Value::Null) => Value::Null,
        (F::NewDecimal, v @ (Value::Int(_) | Value::UInt(_) | Value::Decimal(_))) => {
            match types::to_decimal(&v).and_then(|d| d.rescale(t.dec)) {
                Some(d) => Value::Decimal(d),
                None => v,
            }
        }
        (F::Double | F::Float, v) if types::is_numeric(&v) => Value::Double(types::num(&v)),
        (_, v) if t.is_string() && !matches!(v, Value::Str(_) | Value::Bytes(_)) => {
            Value::Str(types::display(&v))
        }
        (_, v) => v,
    }
}

/// The rows of a SELECT as values (INSERT … SELECT), collected: the source may be the
/// target table.
pub fn select_rows<'d>(
    plan: &SelectPlan,
    tables: &[Table<'d>],
    txn: &mut Txn<'_, 'd>,
    env: &dyn Env,
) -> Result<Vec<Vec<Value>>> {
    let mut c = crate::meta::CollectSink::default();
    select(plan, tables, txn, env, &mut c)?;
    Ok(c.rows)
}

/// The default of a column for an INSERT that does not name it: NULL, or for a NOT NULL
/// column without a DEFAULT 1364 (an error in strict mode) and its implicit default.
pub fn column_default(col: &Column, auto: bool, env: &dyn Env) -> Result<Value> {
    if auto || col.nullable {
        return Ok(Value::Null);
    }
    // MariaDB gives an ENUM NOT NULL its first member as its default, silently.
    if col.ty.is_enum() {
        return Ok(implicit_default(col));
    }
    env.warn(
        Level::Warning,
        1364,
        SqlError::NoDefault(col.name.clone()).to_string(),
    )?;
    Ok(implicit_default(col))
}

/// What a NOT NULL column gets when no value fits: 0, '', the zero date.
pub fn implicit_default(col: &Column) -> Value {
    use quire_engine::row::{ColumnType as T, Date, DateTime};
    match col.ty {
        T::Int { unsigned: true, .. } | T::Year | T::Bit { .. } => Value::UInt(0),
        T::Time { .. } => Value::Time(quire_engine::row::Time::from_micros(0)),
        T::Int { .. } => Value::Int(0),
        T::Float | T::Double => Value::Double(0.0),
        T::Decimal { scale, .. } => Value::Decimal(Decimal::new(0, scale)),
        T::Char { .. } | T::VarChar { .. } | T::Text(_) => Value::Str(String::new()),
        // MariaDB's: an ENUM NOT NULL without a DEFAULT takes its first member.
        T::Enum { .. } => Value::Str(col.members.first().cloned().unwrap_or_default()),
        T::Set { .. } => Value::Str(String::new()),
        T::Binary { .. } | T::VarBinary { .. } | T::Blob(_) => Value::Bytes(Vec::new()),
        T::Date => Value::Date(Date::new(0, 0, 0)),
        T::DateTime { .. } | T::Timestamp { .. } => {
            Value::DateTime(DateTime::new(Date::new(0, 0, 0), 0, 0, 0, 0))
        }
    }
}

/// NULL stored into NOT NULL column `col` where MariaDB makes it a warning (a row of a
/// multi-row INSERT, INSERT IGNORE, UPDATE): 1048 (an error in strict mode), and the
/// column's implicit default.
pub fn null_into_not_null(col: &Column, env: &dyn Env) -> Result<Value> {
    env.warn(
        Level::Warning,
        1048,
        SqlError::NullNotAllowed(col.name.clone()).to_string(),
    )?;
    Ok(implicit_default(col))
}

/// Converts a full row for `t` (AUTO_INCREMENT: 0 and NULL mean "next"), raising the
/// conversions' conditions through `env` column by column in `order` (the statement's
/// column list first, as MariaDB stores them). A column in `missing` was given no value
/// and has no DEFAULT: [`column_default`]. NULL into a NOT NULL column is 1048: an error
/// if `null_is_error` (a one-row INSERT), else [`null_into_not_null`].
pub fn coerce_row(
    t: &TableRef,
    mut row: Vec<Value>,
    order: &[usize],
    missing: &[bool],
    at: &Target<'_>,
    env: &dyn Env,
    null_is_error: bool,
) -> Result<Vec<Value>> {
    for &i in order {
        let (Some(c), Some(slot)) = (t.def.columns.get(i), row.get_mut(i)) else {
            continue;
        };
        let auto = t.def.auto_increment == Some(i);
        if missing.get(i) == Some(&true) {
            *slot = column_default(c, auto, env)?;
            types::check_json(slot, c, at)?;
            continue;
        }
        let v = std::mem::replace(slot, Value::Null);
        let v = if auto && is_zero(&v) { Value::Null } else { v };
        *slot = if matches!(v, Value::Null) && !c.nullable && !auto {
            if null_is_error {
                return Err(SqlError::NullNotAllowed(c.name.clone()));
            }
            let v = null_into_not_null(c, env)?;
            types::check_json(&v, c, at)?;
            v
        } else {
            types::coerce(v, c, at, env)?
        };
    }
    Ok(row)
}

fn is_zero(v: &Value) -> bool {
    matches!(v, Value::Int(0) | Value::UInt(0)) || matches!(v, Value::Str(s) if s.trim() == "0")
}

/// The primary key values of a row.
pub fn pk_of(def: &TableDef, row: &[Value]) -> Vec<Value> {
    def.primary_key
        .iter()
        .map(|&c| row.get(c).cloned().unwrap_or(Value::Null))
        .collect()
}

/// An AUTO_INCREMENT value generated by an insert (for LAST_INSERT_ID).
pub fn int_value(v: &Value) -> Option<u64> {
    match v {
        Value::Int(i) if *i > 0 => Some(*i as u64),
        Value::UInt(u) => Some(*u),
        _ => None,
    }
}
