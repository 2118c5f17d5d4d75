//! Planning a join: the order the tables are read in, how each is read, and where each
//! condition is checked.
//!
//! ```text
//!   FROM tree + WHERE ──simplify──▶ LEFT JOINs that WHERE rejects NULLs of become inner
//!                     ──linearize─▶ steps in join order; each LEFT JOIN's inner side a
//!                                   "nest" of consecutive steps
//!                     ──place─────▶ each conjunct at the first step that binds its tables
//!                     ──access────▶ per step: index lookups keyed by earlier tables
//!                                   (eq_ref / ref), or one read kept in memory (hash on
//!                                   the equi-join columns, else a block nested loop)
//! ```
//!
//! Rules, each a function below:
//! 1. [`simplify`]: `a LEFT JOIN b ON … WHERE b.x = 5` is an inner join (MariaDB's outer
//!    join simplification): a WHERE conjunct that is never true when b's columns are NULL
//!    removes every NULL-extended row anyway.
//! 2. Join order ([`Planner::greedy`]): a LEFT JOIN keeps its sides in order (its inner
//!    tables after its outer ones). The tables of an inner join are ranked by access
//!    class ([`Planner::by_class`]: next is the one with the best access from those
//!    already placed (a constant unique point, then a unique lookup keyed by placed
//!    tables, then any index lookup, then a range, then a scan); among equals, the one
//!    that lets another be reached through an index, then FROM order). Then, from the
//!    engine's kept statistics (rows, `n_diff` per index prefix), the order with the least
//!    estimated cost (rows read and lookups made) is chosen, searched exhaustively
//!    [`cost::SEARCH_DEPTH`] tables ahead ([`cost::search`], estimates in
//!    [`Planner::step_cost`]); ties keep the ranking. Without statistics (no source, a
//!    table whose cannot be read, more than 64 tables) the ranking stands. The rules
//!    below do not depend on the order chosen.
//! 3. Placement ([`Planner::point`]): a condition is checked at the first step where all
//!    its tables are read, but a WHERE condition (or an outer join's ON) that names an
//!    inner table of a LEFT JOIN nested below it waits until that join has decided
//!    (matched or NULL-extended) its row. An ON condition is checked inside its join only.
//! 4. Access ([`Planner::access`]): a step's own conditions give its key ranges as for one
//!    table, with "constant" widened to "bound by earlier tables". A lookup keyed by
//!    earlier tables is the index nested-loop join; a step whose ranges do not depend on
//!    earlier tables is read once into memory ([`Method::Buffered`]).

use std::cell::{Cell, OnceCell};
use std::collections::HashSet;

use quire_engine::row::{Collation, Column};
use quire_engine::table::DbInner;

use super::cost::{self, Sizes, StepCost};
use super::{
    choose_access_in, conjuncts, index_columns, key_family, key_ranges_in, Access, IndexRef,
    KeyRange,
};
use crate::bind::from::JoinTree;
use crate::bind::Scope;
use crate::exec::TableRef;
use crate::expr::{BinOp, Expr};

/// A table of a join: a table, or MariaDB's sequence (one column `seq`).
#[derive(Debug, Clone)]
pub enum Member {
    Table(Box<TableRef>),
    Seq {
        from: u64,
        to: u64,
        step: u64,
    },
    /// A derived table `(SELECT …) AS alias`: its query is run once, when the join first
    /// reaches it, and its rows kept (a view will be one too).
    Derived(Box<Derived>),
}

/// A derived table of FROM.
#[derive(Debug, Clone)]
pub struct Derived {
    pub alias: String,
    pub plan: crate::exec::SelectPlan,
}

/// How a step finds its rows for each row of the steps before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Read through `access` each time (the first table: once). Key ranges that name
    /// earlier tables' columns make this the index nested-loop join.
    Loop,
    /// Read once through `access` (constant ranges) and kept in memory: the rows whose
    /// `keys` equal the earlier tables' (a hash join), or every row when there is no
    /// equality (a block nested loop). Past `join_buffer_size`, the rows before it are
    /// gathered in blocks and the table is read again per block (`exec/join.rs`).
    Buffered,
}

/// One table of the join order.
#[derive(Debug, Clone)]
pub struct JoinStep {
    /// Index into [`JoinPlan::members`] (FROM order).
    pub member: usize,
    /// The name the query gives it (EXPLAIN's `table`).
    pub alias: String,
    /// Its columns in the joined row.
    pub offset: usize,
    pub len: usize,
    pub access: Access,
    pub method: Method,
    /// A buffered step's equi-join keys: (over earlier tables, over this table, collation).
    pub keys: Vec<(Expr, Expr, Collation)>,
    /// Checked on each candidate row, with the earlier tables' values in the row.
    pub filter: Option<Expr>,
    /// The conditions of `filter` that name no other table: a buffered step applies them
    /// while it reads.
    pub own_filter: Option<Expr>,
    /// The LEFT JOIN whose inner tables start here.
    pub nest_start: Option<usize>,
    /// LEFT JOINs whose inner tables end here, innermost first.
    pub nests_end: Vec<usize>,
    /// A buffered step may gather earlier rows in blocks: no LEFT JOIN that began before
    /// it is still open (its match flags are per row of the steps before), and the output
    /// order does not matter.
    pub blockable: bool,
    /// Its rows are read with exclusive locks whatever the statement's lock: a table a
    /// multi-table UPDATE or DELETE changes.
    pub exclusive: bool,
    /// EXPLAIN's `ref` column and whether it says "Using where".
    pub explain_ref: Option<String>,
    pub explain_where: bool,
    /// EXPLAIN's `rows`: the rows its access is estimated to read per lookup (a table
    /// read once: in all), from the kept statistics (`None`: none were read).
    pub est_rows: Option<u64>,
}

/// The inner side of a LEFT JOIN: steps `first..=last`.
#[derive(Debug, Clone)]
pub struct Nest {
    pub first: usize,
    pub last: usize,
    /// Conditions of the enclosing level (WHERE, an outer join's ON) that name the nest's
    /// tables: checked once the nest has its row (matched or NULL-extended).
    pub after: Option<Expr>,
}

#[derive(Debug, Clone)]
pub struct JoinPlan {
    /// FROM order: the joined row is their rows, concatenated in this order.
    pub members: Vec<Member>,
    /// Join order.
    pub steps: Vec<JoinStep>,
    pub nests: Vec<Nest>,
    /// Columns of the joined row.
    pub width: usize,
}

impl JoinPlan {
    /// The tables of the join (each once per mention; a self-join names one twice).
    pub fn tables(&self) -> impl Iterator<Item = &TableRef> {
        self.members.iter().flat_map(|m| match m {
            Member::Table(t) => vec![&**t],
            Member::Seq { .. } => Vec::new(),
            Member::Derived(d) => d.plan.source.tables(),
        })
    }
}

/// Where a condition is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Point {
    /// On each candidate row of step k.
    Row(usize),
    /// When nest n has its row.
    End(usize),
}

struct NestB {
    first: usize,
    last: usize,
    parent: Option<usize>,
}

/// Where a join plan finds the tables' statistics, and the flag it sets once it read
/// some (a kept plan made from them is made again when they change: `session.rs`).
#[derive(Clone, Copy)]
pub struct StatsSource<'a> {
    pub db: &'a DbInner,
    pub used: &'a Cell<bool>,
}

struct Planner<'a> {
    scope: &'a Scope,
    members: &'a [Member],
    stats: Option<StatsSource<'a>>,
    /// Each member's numbers, read at the first estimate (`None` inside: none to read).
    sizes: OnceCell<Option<Vec<Sizes>>>,
    /// Members in join order.
    order: Vec<usize>,
    nests: Vec<NestB>,
    /// Conditions with their level: `None` for WHERE, `Some(n)` for nest n's ON.
    conds: Vec<(Expr, Option<usize>)>,
}

/// The members (FROM indexes) whose columns `e` reads.
fn refs(scope: &Scope, e: &Expr) -> Vec<usize> {
    let mut out = Vec::new();
    e.walk(&mut |x| {
        if let Expr::Column(c) = x {
            if let Some(t) = scope.table_of(*c) {
                if !out.contains(&t) {
                    out.push(t);
                }
            }
        }
    });
    out
}

fn and_all(es: Vec<Expr>) -> Option<Expr> {
    es.into_iter()
        .reduce(|a, b| Expr::Binary(BinOp::And, Box::new(a), Box::new(b)))
}

/// Plans the join of `members` joined as `tree`, with WHERE `filter`; with `stats`, the
/// order of an inner join's tables is the cheapest by their estimates (rule 2).
pub fn plan(
    scope: &Scope,
    members: &[Member],
    tree: &JoinTree,
    filter: Option<&Expr>,
    stats: Option<StatsSource<'_>>,
) -> JoinPlan {
    let wheres: Vec<Expr> =
        filter.map_or_else(Vec::new, |f| conjuncts(f).into_iter().cloned().collect());
    let tree = simplify(scope, tree.clone(), &wheres);
    let mut p = Planner {
        scope,
        members,
        stats,
        sizes: OnceCell::new(),
        order: Vec::new(),
        nests: Vec::new(),
        conds: wheres.into_iter().map(|c| (c, None)).collect(),
    };
    p.linearize(&tree, None);
    p.finish()
}

/// Whether conjunct `c` is never true when every column of the members `inner` is NULL
/// (so it removes NULL-extended rows): a comparison, IN, BETWEEN or LIKE on one of their
/// columns, or `IS NOT NULL` of one.
fn rejects_nulls(scope: &Scope, c: &Expr, inner: &[usize]) -> bool {
    let of_inner = |e: &Expr| match e {
        Expr::Column(i) => scope.table_of(*i).is_some_and(|t| inner.contains(&t)),
        _ => false,
    };
    match c {
        Expr::Cmp(op, a, b, _) => *op != BinOp::NullSafeEq && (of_inner(a) || of_inner(b)),
        Expr::IsNull(a, true) => of_inner(a),
        Expr::InList { e, .. } | Expr::Between { e, .. } | Expr::Like { e, .. } => of_inner(e),
        _ => false,
    }
}

/// Rule 1: LEFT JOINs at the top level whose inner tables a condition of that level
/// rejects NULLs of become inner joins (their ON conditions join the level's).
pub fn simplify(scope: &Scope, tree: JoinTree, wheres: &[Expr]) -> JoinTree {
    // The conditions of the level: WHERE and the ON conditions of its inner joins.
    fn level_conds(t: &JoinTree, out: &mut Vec<Expr>) {
        match t {
            JoinTree::Inner(children, conds) => {
                out.extend(conds.iter().cloned());
                children.iter().for_each(|c| level_conds(c, out));
            }
            JoinTree::Left(outer, _, _) => level_conds(outer, out),
            JoinTree::Leaf(_) => {}
        }
    }
    fn go(scope: &Scope, t: JoinTree, conds: &[Expr]) -> JoinTree {
        match t {
            JoinTree::Inner(children, own) => JoinTree::Inner(
                children.into_iter().map(|c| go(scope, c, conds)).collect(),
                own,
            ),
            JoinTree::Left(outer, inner, on) => {
                let outer = go(scope, *outer, conds);
                let mut leaves = Vec::new();
                inner.leaves(&mut leaves);
                if conds.iter().any(|c| rejects_nulls(scope, c, &leaves)) {
                    // Now at this level: its ON conditions and its inner joins' reject
                    // NULLs too.
                    let mut more = conds.to_vec();
                    more.extend(on.iter().cloned());
                    level_conds(&inner, &mut more);
                    let inner = go(scope, *inner, &more);
                    flatten(JoinTree::Inner(vec![outer, inner], on))
                } else {
                    JoinTree::Left(Box::new(outer), inner, on)
                }
            }
            leaf => leaf,
        }
    }
    let mut conds = wheres.to_vec();
    level_conds(&tree, &mut conds);
    flatten(go(scope, tree, &conds))
}

/// Inner joins of inner joins are one inner join.
fn flatten(t: JoinTree) -> JoinTree {
    match t {
        JoinTree::Inner(children, conds) => {
            let mut kids = Vec::new();
            let mut all = conds;
            for c in children {
                match flatten(c) {
                    JoinTree::Inner(k, c2) => {
                        kids.extend(k);
                        all.extend(c2);
                    }
                    other => kids.push(other),
                }
            }
            JoinTree::Inner(kids, all)
        }
        JoinTree::Left(o, i, on) => {
            JoinTree::Left(Box::new(flatten(*o)), Box::new(flatten(*i)), on)
        }
        leaf => leaf,
    }
}

/// An access's class for join ordering (lower is better).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Const,
    EqRef,
    Ref,
    Range,
    Scan,
}

impl Planner<'_> {
    fn linearize(&mut self, t: &JoinTree, level: Option<usize>) {
        match t {
            JoinTree::Leaf(m) => self.order.push(*m),
            JoinTree::Inner(children, conds) => {
                self.conds.extend(conds.iter().map(|c| (c.clone(), level)));
                let leaves: Option<Vec<usize>> = children
                    .iter()
                    .map(|c| match c {
                        JoinTree::Leaf(m) => Some(*m),
                        _ => None,
                    })
                    .collect();
                match leaves {
                    Some(ms) => self.greedy(ms, level),
                    None => children.iter().for_each(|c| self.linearize(c, level)),
                }
            }
            JoinTree::Left(outer, inner, on) => {
                self.linearize(outer, level);
                let n = self.nests.len();
                self.nests.push(NestB {
                    first: self.order.len(),
                    last: 0,
                    parent: level,
                });
                self.conds.extend(on.iter().map(|c| (c.clone(), Some(n))));
                self.linearize(inner, Some(n));
                self.nests[n].last = self.order.len().saturating_sub(1);
            }
        }
    }

    /// Rule 2 for the tables `ms` of one inner join at `level`: the order by access
    /// class ([`Planner::by_class`]), then, when the tables' statistics can be read, the
    /// cheapest order by their estimates ([`cost::search`], ties in the first order).
    fn greedy(&mut self, ms: Vec<usize>, level: Option<usize>) {
        let start = self.order.len();
        let several = ms.len() > 1;
        self.by_class(ms, level);
        if !several {
            return;
        }
        let by_class = self.order.split_off(start);
        let placed = self.order.clone();
        let order = match self.sizes() {
            Some(sizes) => cost::search(&placed, &by_class, &mut |m, mask| {
                self.step_cost(m, level, mask, sizes)
            }),
            None => by_class,
        };
        self.order.extend(order);
    }

    /// Each member's numbers for estimates, read once per plan; `None` without a
    /// statistics source or when a table's cannot be read (the order by class stands).
    fn sizes(&self) -> Option<&[Sizes]> {
        self.sizes
            .get_or_init(|| {
                let src = self.stats?;
                // Masks of members are u64 (`cost::search`).
                if self.members.len() < 2 || self.members.len() > 64 {
                    return None;
                }
                src.used.set(true);
                self.members
                    .iter()
                    .map(|m| {
                        Some(match m {
                            Member::Table(t) => {
                                Sizes::Table(src.db.table(&t.db, &t.name).ok()?.statistics().ok()?)
                            }
                            Member::Seq { from, to, step } => Sizes::Rows(
                                (to.saturating_sub(*from) / (*step).max(1)).saturating_add(1)
                                    as f64,
                            ),
                            Member::Derived(_) => Sizes::Rows(cost::DERIVED_ROWS),
                        })
                    })
                    .collect()
            })
            .as_deref()
    }

    /// The estimate of member `m` read after the members of `mask` (module `cost`): the
    /// access rule 4 would give it there, the rows it reads and the rows it passes on.
    fn step_cost(&self, m: usize, level: Option<usize>, mask: u64, sizes: &[Sizes]) -> StepCost {
        let placed: Vec<usize> = (0..self.members.len())
            .filter(|i| mask >> i & 1 == 1)
            .collect();
        let first = placed.is_empty();
        let conds = self.usable(m, level, &placed);
        let size = &sizes[m];
        let n = size.rows().max(1.0);
        let earlier: HashSet<usize> = placed.iter().copied().collect();
        let Member::Table(t) = &self.members[m] else {
            let kept = if conds.is_empty() {
                1.0
            } else {
                cost::UNSERVED_SELECTIVITY
            };
            if let Member::Seq { .. } = &self.members[m] {
                // Generated per row before it.
                return StepCost {
                    once: 0.0,
                    per_row: n,
                    fanout: n * kept,
                };
            }
            // A derived table: run once, scanned first or hashed.
            return self.read_once(m, n, kept, &conds, &earlier, size, first);
        };
        let st = &self.scope.tables[m];
        let bound = |e: &Expr| refs(self.scope, e).iter().all(|r| placed.contains(r));
        let a = choose_access_in(&t.def, &conds, st.offset, &self.scope.columns, &bound);
        let dependent = depends(&a);
        if first || (dependent && a.ranges.iter().all(KeyRange::is_point)) {
            let r = read_rows(size, &a);
            let lookups = a.ranges.len().max(1) as f64;
            let kept = r * self.kept_fraction(t, &a, &conds, &earlier, size, m, false);
            return if dependent {
                StepCost {
                    once: 0.0,
                    per_row: lookups + r,
                    fanout: kept,
                }
            } else {
                StepCost {
                    once: lookups + r,
                    per_row: 0.0,
                    fanout: kept,
                }
            };
        }
        let a = if dependent {
            choose_access_in(
                &t.def,
                &conds,
                st.offset,
                &self.scope.columns,
                &Expr::is_constant,
            )
        } else {
            a
        };
        let r = read_rows(size, &a);
        let kept = self.kept_fraction(t, &a, &conds, &earlier, size, m, true);
        self.read_once(m, r, kept, &conds, &earlier, size, first)
    }

    /// A step read once (`r` rows, `kept` of them pass its own conditions) and kept in
    /// memory: hashed on its equi-join columns, or compared whole per row before it.
    #[allow(clippy::too_many_arguments)]
    fn read_once(
        &self,
        m: usize,
        r: f64,
        kept: f64,
        conds: &[&Expr],
        earlier: &HashSet<usize>,
        size: &Sizes,
        first: bool,
    ) -> StepCost {
        let rows = r * kept;
        if first {
            return StepCost {
                once: r + 1.0,
                per_row: 0.0,
                fanout: rows,
            };
        }
        let keys: Vec<(Expr, Expr, Collation)> = conds
            .iter()
            .filter_map(|c| hash_key(self.scope, c, m, earlier))
            .collect();
        // Each row read is also stored (and hashed): keeping the smaller table in memory
        // is the cheaper of two otherwise equal orders.
        let once = 2.0 * r + 1.0;
        if keys.is_empty() {
            // A block nested loop: every kept row is compared per row before it.
            return StepCost {
                once,
                per_row: rows,
                fanout: rows,
            };
        }
        let offset = self.scope.tables[m].offset;
        let mut matched = rows;
        for (_, inner, _) in &keys {
            let d = match (inner, &self.members[m]) {
                (Expr::Column(c), Member::Table(t)) => leading_distinct(t, c - offset, size),
                _ => None,
            };
            matched *= d.map_or(cost::UNKNOWN_EQ_SELECTIVITY, |d| 1.0 / d);
        }
        StepCost {
            once,
            per_row: 1.0 + matched,
            fanout: matched,
        }
    }

    /// The fraction of the rows `a` reads that pass the conditions it does not answer
    /// (module `cost`); `hashed`: equi-join conditions are the hash join's.
    #[allow(clippy::too_many_arguments)]
    fn kept_fraction(
        &self,
        t: &crate::exec::TableRef,
        a: &Access,
        conds: &[&Expr],
        earlier: &HashSet<usize>,
        size: &Sizes,
        m: usize,
        hashed: bool,
    ) -> f64 {
        let offset = self.scope.tables[m].offset;
        let answered: Vec<usize> = if a.ranges.is_empty() {
            Vec::new()
        } else {
            index_columns(&t.def, &a.index)
                .into_iter()
                .take(a.eq_prefix + 1)
                .map(|c| c + offset)
                .collect()
        };
        let on = |e: &Expr| matches!(e, Expr::Column(i) if answered.contains(i));
        let mut f = 1.0;
        let mut other = false;
        for c in conds {
            let served = match c {
                Expr::Cmp(_, x, y, _) => on(x) || on(y),
                Expr::InList { e, .. } | Expr::Between { e, .. } => on(e),
                _ => false,
            };
            if served || (hashed && hash_key(self.scope, c, m, earlier).is_some()) {
                continue;
            }
            let own_eq = match c {
                Expr::Cmp(BinOp::Eq, x, y, _) => match (&**x, &**y) {
                    (Expr::Column(i), v) | (v, Expr::Column(i))
                        if v.is_constant() && self.scope.table_of(*i) == Some(m) =>
                    {
                        leading_distinct(t, i - offset, size)
                    }
                    _ => None,
                },
                _ => None,
            };
            match own_eq {
                Some(d) => f /= d,
                None => other = true,
            }
        }
        if other {
            f *= cost::UNSERVED_SELECTIVITY;
        }
        f
    }

    /// Rule 2 without statistics: by access class.
    fn by_class(&mut self, mut ms: Vec<usize>, level: Option<usize>) {
        while !ms.is_empty() {
            let placed: Vec<usize> = self.order.clone();
            let class = |p: &Planner<'_>, m: usize, placed: &[usize]| p.class(m, level, placed);
            let mut best: Option<(Class, Class, usize)> = None;
            for (i, &m) in ms.iter().enumerate() {
                let own = class(self, m, &placed);
                // What placing m first would let the others be read by.
                let mut with = placed.clone();
                with.push(m);
                let reach = ms
                    .iter()
                    .filter(|&&u| u != m)
                    .map(|&u| class(self, u, &with))
                    .filter(|c| *c <= Class::Ref)
                    .min()
                    .unwrap_or(Class::Scan);
                let key = (own, reach, i);
                if best.is_none_or(|b| key < b) {
                    best = Some(key);
                }
            }
            let Some((_, _, i)) = best else { break };
            let m = ms.remove(i);
            self.order.push(m);
        }
    }

    /// The conditions of `level` that member `m` could check with `placed` read before it.
    fn usable(&self, m: usize, level: Option<usize>, placed: &[usize]) -> Vec<&Expr> {
        self.conds
            .iter()
            .filter(|(_, l)| *l == level)
            .map(|(c, _)| c)
            .filter(|c| {
                refs(self.scope, c)
                    .iter()
                    .all(|t| *t == m || placed.contains(t))
            })
            .collect()
    }

    fn class(&self, m: usize, level: Option<usize>, placed: &[usize]) -> Class {
        let Member::Table(t) = &self.members[m] else {
            return Class::Scan;
        };
        let conds = self.usable(m, level, placed);
        let st = &self.scope.tables[m];
        let bound = |e: &Expr| refs(self.scope, e).iter().all(|r| placed.contains(r));
        let a = choose_access_in(&t.def, &conds, st.offset, &self.scope.columns, &bound);
        let dependent = depends(&a);
        match a.kind() {
            "const" if !dependent => Class::Const,
            "const" => Class::EqRef,
            "ref" => Class::Ref,
            "range" if dependent && a.ranges.iter().all(|r| r.is_point()) => Class::Ref,
            "range" if !dependent => Class::Range,
            _ => Class::Scan,
        }
    }

    /// Rule 3: where condition `c` of `level` is checked.
    fn point(
        &self,
        c: &Expr,
        level: Option<usize>,
        pos: &[usize],
        nest_of: &[Option<usize>],
    ) -> Point {
        let key = |p: Point| match p {
            Point::Row(k) => (k, 0, 0),
            // Of nests ending at one step, the outer one decides later.
            Point::End(n) => (self.nests[n].last, 1, usize::MAX - self.depth(n)),
        };
        let mut best = Point::Row(level.map_or(0, |n| self.nests[n].first));
        for m in refs(self.scope, c) {
            let p = pos[m];
            // The outermost nest strictly inside `level` that holds p.
            let mut n = nest_of[p];
            let mut found = None;
            while let Some(x) = n {
                if self.nests[x].parent == level {
                    found = Some(x);
                    break;
                }
                n = self.nests[x].parent;
            }
            let at = found.map_or(Point::Row(p), Point::End);
            if key(at) > key(best) {
                best = at;
            }
        }
        best
    }

    fn depth(&self, mut n: usize) -> usize {
        let mut d = 0;
        while let Some(p) = self.nests[n].parent {
            d += 1;
            n = p;
        }
        d
    }

    fn finish(self) -> JoinPlan {
        let scope = self.scope;
        let mut pos = vec![0; self.members.len()];
        for (k, &m) in self.order.iter().enumerate() {
            pos[m] = k;
        }
        // The innermost nest of each step.
        let mut nest_of: Vec<Option<usize>> = vec![None; self.order.len()];
        for (n, nb) in self.nests.iter().enumerate() {
            // Nests are numbered outer before inner: later ones overwrite with the inner.
            for slot in nest_of.iter_mut().take(nb.last + 1).skip(nb.first) {
                *slot = Some(n);
            }
        }
        let mut at_row: Vec<Vec<Expr>> = vec![Vec::new(); self.order.len()];
        let mut at_end: Vec<Vec<Expr>> = vec![Vec::new(); self.nests.len()];
        for (c, level) in &self.conds {
            match self.point(c, *level, &pos, &nest_of) {
                Point::Row(k) => at_row[k].push(c.clone()),
                Point::End(n) => at_end[n].push(c.clone()),
            }
        }
        let mut steps = Vec::with_capacity(self.order.len());
        for (k, &m) in self.order.iter().enumerate() {
            let st = &scope.tables[m];
            let conds: Vec<&Expr> = at_row[k].iter().collect();
            let earlier: HashSet<usize> = self.order[..k].iter().copied().collect();
            let (access, method, keys, explain_ref) = self.access(k, m, &conds, &earlier);
            let own: Vec<Expr> = conds
                .iter()
                .filter(|c| refs(scope, c).iter().all(|t| *t == m))
                .map(|c| (*c).clone())
                .collect();
            let consumed = if method == Method::Loop {
                consumed_by(&access, &conds, st.offset, &self.members[m])
            } else {
                0
            };
            let explain_where = conds.len() > consumed;
            let nests_end: Vec<usize> = {
                let mut v: Vec<usize> = (0..self.nests.len())
                    .filter(|&n| self.nests[n].last == k)
                    .collect();
                // Innermost first: deeper nests have larger depth.
                v.sort_by_key(|&n| std::cmp::Reverse(self.depth(n)));
                v
            };
            let est_rows = self.sizes().map(|sizes| {
                let size = &sizes[m];
                let r = match &self.members[m] {
                    Member::Table(_) if method == Method::Loop && depends(&access) => {
                        // Per lookup, as MariaDB's `rows` of a ref / eq_ref.
                        read_rows(size, &access) / access.ranges.len().max(1) as f64
                    }
                    Member::Table(_) => read_rows(size, &access),
                    _ => size.rows(),
                };
                r.round().max(1.0) as u64
            });
            let nest_start = (0..self.nests.len()).find(|&n| self.nests[n].first == k);
            let mut open = nest_of[k];
            let mut blockable = true;
            while let Some(n) = open {
                if self.nests[n].first != k {
                    blockable = false;
                }
                open = self.nests[n].parent;
            }
            steps.push(JoinStep {
                member: m,
                alias: st.alias.clone(),
                offset: st.offset,
                len: st.len,
                access,
                method,
                keys,
                filter: and_all(at_row[k].clone()),
                own_filter: and_all(own),
                nest_start,
                nests_end,
                blockable,
                exclusive: false,
                explain_ref,
                explain_where,
                est_rows,
            });
        }
        let nests = self
            .nests
            .iter()
            .zip(at_end)
            .map(|(nb, after)| Nest {
                first: nb.first,
                last: nb.last,
                after: and_all(after),
            })
            .collect::<Vec<_>>();
        for n in &nests {
            if n.after.is_some() {
                if let Some(s) = steps.get_mut(n.last) {
                    s.explain_where = true;
                }
            }
        }
        JoinPlan {
            members: self.members.to_vec(),
            steps,
            nests,
            width: scope.columns.len(),
        }
    }

    /// Rule 4: how step `k` (member `m`) reads, given its conditions.
    #[allow(clippy::type_complexity)]
    fn access(
        &self,
        k: usize,
        m: usize,
        conds: &[&Expr],
        earlier: &HashSet<usize>,
    ) -> (Access, Method, Vec<(Expr, Expr, Collation)>, Option<String>) {
        let scope = self.scope;
        let st = &scope.tables[m];
        let bound = |e: &Expr| refs(scope, e).iter().all(|r| earlier.contains(r));
        if let Member::Derived(_) = &self.members[m] {
            // Its rows are in memory once read: scanned (the first step) or hashed on the
            // equi-join columns.
            if k == 0 {
                return (Access::full_scan(), Method::Loop, Vec::new(), None);
            }
            let keys = conds
                .iter()
                .filter_map(|c| hash_key(scope, c, m, earlier))
                .collect();
            return (Access::full_scan(), Method::Buffered, keys, None);
        }
        let Member::Table(t) = &self.members[m] else {
            // A sequence is computed, never stored: generated per row of the steps before,
            // over the ranges its conditions allow.
            let mut a = Access::full_scan();
            if let Some((ranges, eq)) = key_ranges_in(conds, &[st.offset], &scope.columns, &bound) {
                a.ranges = ranges;
                a.eq_prefix = eq;
            }
            return (a, Method::Loop, Vec::new(), None);
        };
        let a = choose_access_in(&t.def, conds, st.offset, &scope.columns, &bound);
        let dependent = depends(&a);
        if k == 0 || (dependent && a.ranges.iter().all(|r| r.is_point())) {
            let r = explain_ref(scope, &a);
            return (a, Method::Loop, Vec::new(), r);
        }
        // Read once: through the ranges of constants only.
        let a = if dependent {
            choose_access_in(&t.def, conds, st.offset, &scope.columns, &Expr::is_constant)
        } else {
            a
        };
        let r = if a.kind() == "const" {
            Some("const".to_string())
        } else {
            None
        };
        let keys = conds
            .iter()
            .filter_map(|c| hash_key(scope, c, m, earlier))
            .collect();
        (a, Method::Buffered, keys, r)
    }
}

/// Whether an access's key ranges name columns (of earlier tables).
fn depends(a: &Access) -> bool {
    let mut dep = false;
    for r in &a.ranges {
        for b in [&r.lo, &r.hi] {
            if let std::ops::Bound::Included(es) | std::ops::Bound::Excluded(es) = b {
                dep |= es.iter().any(|e| !e.is_constant());
            }
        }
    }
    dep
}

/// EXPLAIN's `ref`: what each key part of a lookup is compared with.
fn explain_ref(scope: &Scope, a: &Access) -> Option<String> {
    let [r] = a.ranges.as_slice() else {
        return None;
    };
    if !r.is_point() {
        return None;
    }
    let std::ops::Bound::Included(es) = &r.lo else {
        return None;
    };
    let parts: Vec<String> = es
        .iter()
        .map(|e| match e {
            Expr::Column(c) => match scope.table_of(*c) {
                Some(t) => {
                    let st = &scope.tables[t];
                    format!("{}.{}.{}", st.db, st.alias, scope.columns[*c].name)
                }
                None => "func".into(),
            },
            e if e.is_constant() => "const".into(),
            _ => "func".into(),
        })
        .collect();
    Some(parts.join(","))
}

/// How many of `conds` a lookup answers exactly (an equality of a key column with the
/// looked-up value): EXPLAIN omits "Using where" when that is all of them.
fn consumed_by(a: &Access, conds: &[&Expr], offset: usize, member: &Member) -> usize {
    let Member::Table(t) = member else { return 0 };
    if a.ranges.is_empty() || !a.ranges.iter().all(|r| r.is_point()) {
        return 0;
    }
    let cols: Vec<usize> = index_columns(&t.def, &a.index)
        .into_iter()
        .take(a.eq_prefix)
        .map(|c| c + offset)
        .collect();
    conds
        .iter()
        .filter(|c| match c {
            Expr::Cmp(BinOp::Eq, x, y, _) => [x, y]
                .iter()
                .any(|s| matches!(***s, Expr::Column(i) if cols.contains(&i))),
            _ => false,
        })
        .count()
}

/// An equality usable as a hash join key for member `m`: one side reads only `m`, the
/// other only earlier tables, and equal values of their kind have equal value keys.
fn hash_key(
    scope: &Scope,
    c: &Expr,
    m: usize,
    earlier: &HashSet<usize>,
) -> Option<(Expr, Expr, Collation)> {
    let Expr::Cmp(BinOp::Eq, a, b, coll) = c else {
        return None;
    };
    let side = |e: &Expr| -> Option<(bool, &Column)> {
        let Expr::Column(i) = e else { return None };
        let t = scope.table_of(*i)?;
        let col = scope.columns.get(*i)?;
        if t == m {
            Some((true, col))
        } else if earlier.contains(&t) {
            Some((false, col))
        } else {
            None
        }
    };
    let ((a_inner, ca), (b_inner, cb)) = (side(a)?, side(b)?);
    if a_inner == b_inner {
        return None;
    }
    let fam = key_family(ca.ty)?;
    if key_family(cb.ty) != Some(fam) {
        return None;
    }
    Some(if a_inner {
        ((**b).clone(), (**a).clone(), *coll)
    } else {
        ((**a).clone(), (**b).clone(), *coll)
    })
}

/// EXPLAIN's key for an access (`None`: no index used).
pub fn explain_key(a: &Access) -> Option<String> {
    if a.ranges.is_empty() && !a.ordered && a.index == IndexRef::Primary {
        return None;
    }
    Some(match &a.index {
        IndexRef::Primary => "PRIMARY".into(),
        IndexRef::Secondary(n) => n.clone(),
    })
}

/// The rows access `a` reads of a table of `size` (module `cost`).
fn read_rows(size: &Sizes, a: &Access) -> f64 {
    let n = size.rows().max(1.0);
    if a.ranges.is_empty() {
        return n;
    }
    if a.unique_points {
        return a.ranges.len() as f64;
    }
    let eq = a.eq_prefix;
    let under = if eq == 0 {
        n
    } else {
        size.distinct(&a.index, eq)
            .map_or(n * cost::UNKNOWN_EQ_SELECTIVITY, |d| n / d)
    };
    let len = |b: &std::ops::Bound<Vec<Expr>>| match b {
        std::ops::Bound::Included(v) | std::ops::Bound::Excluded(v) => v.len(),
        std::ops::Bound::Unbounded => 0,
    };
    let total: f64 = a
        .ranges
        .iter()
        .map(|r| {
            let (lo, hi) = (len(&r.lo) > eq, len(&r.hi) > eq);
            under
                * match (lo, hi) {
                    (true, true) if r.is_point() => 1.0,
                    (true, true) => cost::RANGE_BOTH_ENDS,
                    (true, false) | (false, true) => cost::RANGE_ONE_END,
                    (false, false) => 1.0,
                }
        })
        .sum();
    total.clamp(1.0, n)
}

/// Distinct values of column `col` (the table's own numbering) from an index it leads.
fn leading_distinct(t: &crate::exec::TableRef, col: usize, size: &Sizes) -> Option<f64> {
    if t.def.primary_key.first() == Some(&col) {
        return size.distinct(&IndexRef::Primary, 1);
    }
    t.def
        .indexes
        .iter()
        .filter(|ix| {
            ix.columns
                .first()
                .is_some_and(|c| c.column == col && c.prefix.is_none())
        })
        .find_map(|ix| size.distinct(&IndexRef::Secondary(ix.name.clone()), 1))
}
