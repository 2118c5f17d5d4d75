//! The rule-based planner: which index to read and how, for one table. A join plans
//! each of its tables with these rules, in an order and with conditions chosen by
//! [`join`].
//!
//! Rules, in order (each a function below):
//! 1. [`key_ranges`]: for an index (primary first), the key ranges WHERE allows: equalities
//!    and IN lists on leading columns (points), then one range (`<`, `BETWEEN`, ...) on the
//!    next column; an OR of ranges on one column gives several ranges.
//! 2. [`choose_access`]: the primary key on full equality wins, then a unique index on full
//!    equality, then the index with the longest equality prefix, then any range (primary
//!    first); otherwise a full scan of the primary key.
//! 3. [`order_by_index`]: ORDER BY that the chosen index (or, with no WHERE ranges, any
//!    index) delivers in either direction needs no sort, and LIMIT stops the scan.
//! 4. Covering: a secondary index whose columns (with the primary key) hold every column the
//!    query reads is read without the clustered index.
//!
//! WHERE is always re-checked on each row, so a range only has to be a superset.

pub mod cost;
pub mod join;

use std::ops::Bound;

use quire_engine::catalog::TableDef;
use quire_engine::row::{Collation, Column, ColumnType};

use crate::expr::{BinOp, Expr};

/// A range over an index's leading columns; bounds are expression lists (evaluated with the
/// statement's parameters at execution) forming a key prefix.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyRange {
    pub lo: Bound<Vec<Expr>>,
    pub hi: Bound<Vec<Expr>>,
}

impl KeyRange {
    fn point(v: Vec<Expr>) -> KeyRange {
        KeyRange {
            lo: Bound::Included(v.clone()),
            hi: Bound::Included(v),
        }
    }
    pub fn is_point(&self) -> bool {
        matches!((&self.lo, &self.hi), (Bound::Included(a), Bound::Included(b)) if a == b)
    }
}

/// Which index a scan reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexRef {
    Primary,
    Secondary(String),
}

/// How rows are found.
#[derive(Debug, Clone, PartialEq)]
pub struct Access {
    pub index: IndexRef,
    /// Empty: the whole index.
    pub ranges: Vec<KeyRange>,
    /// Number of index columns fixed by equalities (for EXPLAIN and order reasoning).
    pub eq_prefix: usize,
    /// Every range is a point on the full key of a unique index (or the primary key).
    pub unique_points: bool,
    /// Scan backwards (ORDER BY … DESC delivered by the index).
    pub backward: bool,
    /// The index order is the ORDER BY order: no sort.
    pub ordered: bool,
    /// The secondary index holds every column the query needs.
    pub covering: bool,
}

impl Access {
    pub fn full_scan() -> Access {
        Access {
            index: IndexRef::Primary,
            ranges: Vec::new(),
            eq_prefix: 0,
            unique_points: false,
            backward: false,
            ordered: false,
            covering: false,
        }
    }

    /// EXPLAIN's `type` column.
    pub fn kind(&self) -> &'static str {
        if self.ranges.is_empty() {
            if self.index == IndexRef::Primary && !self.ordered {
                "ALL"
            } else {
                "index"
            }
        } else if self.unique_points && self.ranges.len() == 1 {
            "const"
        } else if self.ranges.iter().all(KeyRange::is_point) && self.ranges.len() == 1 {
            "ref"
        } else {
            "range"
        }
    }
}

/// The conjuncts of a WHERE clause.
pub fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::Binary(BinOp::And, a, b) => {
            let mut v = conjuncts(a);
            v.extend(conjuncts(b));
            v
        }
        other => vec![other],
    }
}

/// What one conjunct says about column `col`.
enum Cond {
    Points(Vec<Expr>),
    Range(Bound<Expr>, Bound<Expr>),
    Ranges(Vec<(Bound<Expr>, Bound<Expr>)>),
}

fn is_col(e: &Expr, col: usize) -> bool {
    matches!(e, Expr::Column(c) if *c == col)
}

/// Whether a comparison in collation `coll` can be answered from column `col`'s index:
/// always for a number, only in the column's own collation for a string (the index is in
/// that order, and equal keys are that collation's equal strings).
fn same_order(columns: &[Column], col: usize, coll: Collation) -> bool {
    columns
        .get(col)
        .is_none_or(|c| !c.ty.is_string() || c.collation == coll)
}

/// Whether index column `col` can be looked up with `v`: a constant always (a value that
/// does not convert widens or empties the range, and WHERE is checked again); another
/// table's column only of the same kind of value, as MySQL compares a string with a number
/// as numbers, which an index of either cannot answer.
fn lookup_value(columns: &[Column], col: usize, v: &Expr) -> bool {
    if v.is_constant() {
        return true;
    }
    match (v, columns.get(col)) {
        (Expr::Column(j), Some(c)) => columns
            .get(*j)
            .is_some_and(|o| key_family(o.ty).is_some() && key_family(o.ty) == key_family(c.ty)),
        _ => false,
    }
}

/// Kinds of value whose equality is equality of [`crate::exec`]'s value keys (so a hash
/// join may match them) and whose index lookups find every equal value: exact numbers,
/// strings (compared in one collation), byte strings, and each temporal type on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyFamily {
    Exact,
    Text,
    Bytes,
    Temporal(ColumnType),
}

/// The [`KeyFamily`] of a column type (`None`: FLOAT and DOUBLE, where -0 equals 0).
pub fn key_family(ty: ColumnType) -> Option<KeyFamily> {
    Some(match ty {
        ColumnType::Int { .. } | ColumnType::Decimal { .. } => KeyFamily::Exact,
        ColumnType::Float | ColumnType::Double => return None,
        t if t.is_string() => KeyFamily::Text,
        ColumnType::Binary { .. } | ColumnType::VarBinary { .. } | ColumnType::Blob(_) => {
            KeyFamily::Bytes
        }
        t => KeyFamily::Temporal(t),
    })
}

/// What conjunct `e` says about column `col`, where `bound` tells which expressions have
/// a value before the table is read (constants; in a join, also earlier tables' columns).
fn cond_on(
    e: &Expr,
    col: usize,
    columns: &[Column],
    bound: &dyn Fn(&Expr) -> bool,
) -> Option<Cond> {
    let usable = |v: &Expr| bound(v) && lookup_value(columns, col, v);
    // An ENUM's key is its member index (a SET's its bitmask), while SQL compares it as a
    // string: only equality (one value, one key) has the index's answer; a range or several
    // points would be read in index order, not the string order the planner assumes.
    if columns.get(col).is_some_and(|c| c.ty.has_members()) {
        return match e {
            Expr::Cmp(BinOp::Eq, a, b, coll) if same_order(columns, col, *coll) => {
                let v = if is_col(a, col) && usable(b) {
                    b
                } else if is_col(b, col) && usable(a) {
                    a
                } else {
                    return None;
                };
                Some(Cond::Points(vec![(**v).clone()]))
            }
            _ => None,
        };
    }
    match e {
        Expr::Cmp(_, _, _, coll) if !same_order(columns, col, *coll) => None,
        Expr::Binary(BinOp::Or, a, b) => {
            // k BETWEEN .. OR k BETWEEN .. OR k = ..: several ranges on one column.
            let mut out = Vec::new();
            for side in [a, b] {
                match cond_on(side, col, columns, bound)? {
                    Cond::Points(ps) => out.extend(
                        ps.into_iter()
                            .map(|p| (Bound::Included(p.clone()), Bound::Included(p))),
                    ),
                    Cond::Range(l, h) => out.push((l, h)),
                    Cond::Ranges(rs) => out.extend(rs),
                }
            }
            Some(Cond::Ranges(out))
        }
        Expr::Cmp(op, a, b, _) => {
            let (v, flipped) = if is_col(a, col) && usable(b) {
                (b, false)
            } else if is_col(b, col) && usable(a) {
                (a, true)
            } else {
                return None;
            };
            let v = (**v).clone();
            let op = match (op, flipped) {
                (BinOp::Lt, true) => BinOp::Gt,
                (BinOp::Le, true) => BinOp::Ge,
                (BinOp::Gt, true) => BinOp::Lt,
                (BinOp::Ge, true) => BinOp::Le,
                (o, _) => *o,
            };
            Some(match op {
                BinOp::Eq => Cond::Points(vec![v]),
                BinOp::Lt => Cond::Range(Bound::Unbounded, Bound::Excluded(v)),
                BinOp::Le => Cond::Range(Bound::Unbounded, Bound::Included(v)),
                BinOp::Gt => Cond::Range(Bound::Excluded(v), Bound::Unbounded),
                BinOp::Ge => Cond::Range(Bound::Included(v), Bound::Unbounded),
                _ => return None,
            })
        }
        Expr::InList {
            e,
            list,
            negated: false,
            coll,
        } if is_col(e, col) && same_order(columns, col, *coll) && list.iter().all(usable) => {
            Some(Cond::Points(list.clone()))
        }
        Expr::Between {
            e,
            lo,
            hi,
            negated: false,
            coll,
        } if is_col(e, col) && same_order(columns, col, *coll) && usable(lo) && usable(hi) => {
            Some(Cond::Range(
                Bound::Included((**lo).clone()),
                Bound::Included((**hi).clone()),
            ))
        }
        _ => None,
    }
}

/// Cap on the points an IN-list product may expand to.
const MAX_POINTS: usize = 4096;

/// Rule 1: the key ranges that WHERE allows on an index with columns `cols`; `None` if
/// WHERE constrains not even its first column. Returns (ranges, equality prefix length).
pub fn key_ranges(
    conds: &[&Expr],
    cols: &[usize],
    columns: &[Column],
) -> Option<(Vec<KeyRange>, usize)> {
    key_ranges_in(conds, cols, columns, &Expr::is_constant)
}

/// [`key_ranges`] where `bound` says which values are known before the table is read.
pub fn key_ranges_in(
    conds: &[&Expr],
    cols: &[usize],
    columns: &[Column],
    bound: &dyn Fn(&Expr) -> bool,
) -> Option<(Vec<KeyRange>, usize)> {
    let mut prefixes: Vec<Vec<Expr>> = vec![Vec::new()];
    let mut eq = 0;
    for &col in cols {
        let mut points: Option<Vec<Expr>> = None;
        let mut range: Option<Cond> = None;
        for c in conds {
            match cond_on(c, col, columns, bound) {
                Some(Cond::Points(p)) if points.is_none() => points = Some(p),
                Some(r @ (Cond::Range(..) | Cond::Ranges(_))) if range.is_none() => range = Some(r),
                _ => {}
            }
        }
        if let Some(ps) = points {
            if prefixes.len() * ps.len() > MAX_POINTS {
                break;
            }
            prefixes = prefixes
                .into_iter()
                .flat_map(|pre| {
                    ps.iter().map(move |p| {
                        let mut v = pre.clone();
                        v.push(p.clone());
                        v
                    })
                })
                .collect();
            eq += 1;
            continue;
        }
        if let Some(r) = range {
            let rs = match r {
                Cond::Range(l, h) => vec![(l, h)],
                Cond::Ranges(rs) => rs,
                Cond::Points(_) => Vec::new(),
            };
            if prefixes.len() * rs.len() > MAX_POINTS {
                break;
            }
            let mut out = Vec::new();
            for pre in &prefixes {
                for (l, h) in &rs {
                    let ext = |b: &Bound<Expr>| -> Bound<Vec<Expr>> {
                        match b {
                            Bound::Included(x) => {
                                let mut v = pre.clone();
                                v.push(x.clone());
                                Bound::Included(v)
                            }
                            Bound::Excluded(x) => {
                                let mut v = pre.clone();
                                v.push(x.clone());
                                Bound::Excluded(v)
                            }
                            // An open end on this column: the prefix bounds it (or nothing).
                            Bound::Unbounded if pre.is_empty() => Bound::Unbounded,
                            Bound::Unbounded => Bound::Included(pre.clone()),
                        }
                    };
                    out.push(KeyRange {
                        lo: ext(l),
                        hi: ext(h),
                    });
                }
            }
            return Some((out, eq));
        }
        break;
    }
    if eq == 0 {
        return None;
    }
    Some((prefixes.into_iter().map(KeyRange::point).collect(), eq))
}

/// Rule 2: the access path for WHERE over `def`.
pub fn choose_access(def: &TableDef, filter: Option<&Expr>) -> Access {
    let Some(filter) = filter else {
        return Access::full_scan();
    };
    choose_access_in(def, &conjuncts(filter), 0, &def.columns, &Expr::is_constant)
}

/// [`choose_access`] for a table whose columns start at `offset` in the row `columns`
/// describes (a join's concatenated row), with `conds` the conjuncts checked on its rows
/// and `bound` what has a value before it is read.
pub fn choose_access_in(
    def: &TableDef,
    conds: &[&Expr],
    offset: usize,
    columns: &[Column],
    bound: &dyn Fn(&Expr) -> bool,
) -> Access {
    let mut best: Option<(u32, Access)> = None;
    let mut consider = |index: IndexRef, cols: Vec<usize>, unique: bool, pk: bool| {
        let global: Vec<usize> = cols.iter().map(|c| c + offset).collect();
        let Some((ranges, eq)) = key_ranges_in(conds, &global, columns, bound) else {
            return;
        };
        let full_eq = eq == cols.len() && !cols.is_empty();
        let score = match (full_eq && unique, pk) {
            (true, true) => 1000,
            (true, false) => 900,
            _ => (eq as u32) * 10 + u32::from(pk) * 5 + 1,
        };
        if best.as_ref().is_none_or(|(s, _)| score > *s) {
            best = Some((
                score,
                Access {
                    index,
                    ranges,
                    eq_prefix: eq,
                    unique_points: full_eq && unique,
                    backward: false,
                    ordered: false,
                    covering: false,
                },
            ));
        }
    };
    if !def.primary_key.is_empty() {
        consider(IndexRef::Primary, def.primary_key.clone(), true, true);
    }
    for ix in &def.indexes {
        if ix
            .columns
            .iter()
            .any(|c| c.prefix.is_some() || c.descending)
        {
            continue; // a prefix index cannot answer equality on the whole value
        }
        let cols = ix.columns.iter().map(|c| c.column).collect();
        consider(IndexRef::Secondary(ix.name.clone()), cols, ix.unique, false);
    }
    best.map_or_else(Access::full_scan, |(_, a)| a)
}

/// The columns of an index (primary: the primary key).
pub fn index_columns(def: &TableDef, index: &IndexRef) -> Vec<usize> {
    match index {
        IndexRef::Primary => def.primary_key.clone(),
        IndexRef::Secondary(name) => def
            .indexes
            .iter()
            .find(|i| &i.name == name)
            .map(|i| i.columns.iter().map(|c| c.column).collect())
            .unwrap_or_default(),
    }
}

/// Rule 3: whether `access` delivers ORDER BY `order` (column, descending) as is; sets
/// `ordered` and `backward`. With a full scan, an index that delivers the order is chosen.
pub fn order_by_index(
    def: &TableDef,
    access: &mut Access,
    order: &[(usize, bool)],
    has_limit: bool,
) {
    if order.is_empty() {
        return;
    }
    let desc = order[0].1;
    if order.iter().any(|(_, d)| *d != desc) {
        return;
    }
    let delivers = |index: &IndexRef, eq: usize| -> bool {
        let mut cols = index_columns(def, index);
        if *index != IndexRef::Primary {
            // Ties in a secondary index are in primary-key order.
            cols.extend(def.primary_key.iter().copied());
        }
        let rest = cols.get(eq..).unwrap_or(&[]);
        // ORDER BY may also name the equality columns themselves (constant there).
        let wanted: Vec<usize> = order
            .iter()
            .map(|(c, _)| *c)
            .filter(|c| !cols[..eq.min(cols.len())].contains(c))
            .collect();
        wanted.len() <= rest.len() && wanted.iter().zip(rest).all(|(a, b)| a == b)
    };
    if access.ranges.len() <= 1 {
        if !access.ranges.is_empty() || access.index != IndexRef::Primary {
            if delivers(&access.index, access.eq_prefix) {
                access.ordered = true;
                access.backward = desc;
            }
            return;
        }
        // A full scan: read the primary key, or an index, in ORDER BY order.
        if !def.primary_key.is_empty() && delivers(&IndexRef::Primary, 0) {
            access.ordered = true;
            access.backward = desc;
            return;
        }
        if has_limit {
            for ix in &def.indexes {
                let r = IndexRef::Secondary(ix.name.clone());
                if ix
                    .columns
                    .iter()
                    .all(|c| c.prefix.is_none() && !c.descending)
                    && delivers(&r, 0)
                {
                    access.index = r;
                    access.ordered = true;
                    access.backward = desc;
                    return;
                }
            }
        }
    }
}

/// Rule 4: whether a secondary access can be answered from the index alone.
pub fn covering(def: &TableDef, access: &Access, needed: &[usize]) -> bool {
    let IndexRef::Secondary(_) = &access.index else {
        return false;
    };
    let mut have = index_columns(def, &access.index);
    have.extend(def.primary_key.iter().copied());
    // A string's key part is its collation's sort key, not its value: the engine reads such
    // an entry's row from the clustered index (docs/row-format.md, "Collations").
    let strings = have
        .iter()
        .any(|&c| def.columns.get(c).is_some_and(|c| c.ty.is_string()));
    !def.primary_key.is_empty() && !strings && needed.iter().all(|c| have.contains(c))
}
