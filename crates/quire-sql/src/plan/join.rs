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
//!    tables after its outer ones). The tables of an inner join are ordered greedily:
//!    next is the one with the best access from those already placed (a constant unique
//!    point, then a unique lookup keyed by placed tables, then any index lookup, then a
//!    range, then a scan); among equals, the one that lets another be reached through an
//!    index, then FROM order. The engine keeps no row-count estimates, so "smallest first"
//!    is not among the rules.
//! 3. Placement ([`Planner::point`]): a condition is checked at the first step where all
//!    its tables are read, but a WHERE condition (or an outer join's ON) that names an
//!    inner table of a LEFT JOIN nested below it waits until that join has decided
//!    (matched or NULL-extended) its row. An ON condition is checked inside its join only.
//! 4. Access ([`Planner::access`]): a step's own conditions give its key ranges as for one
//!    table, with "constant" widened to "bound by earlier tables". A lookup keyed by
//!    earlier tables is the index nested-loop join; a step whose ranges do not depend on
//!    earlier tables is read once into memory ([`Method::Buffered`]).

use std::collections::HashSet;

use quire_engine::row::{Collation, Column};

use super::{
    choose_access_in, conjuncts, index_columns, key_family, key_ranges_in, Access, IndexRef,
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

struct Planner<'a> {
    scope: &'a Scope,
    members: &'a [Member],
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

/// Plans the join of `members` joined as `tree`, with WHERE `filter`.
pub fn plan(scope: &Scope, members: &[Member], tree: &JoinTree, filter: Option<&Expr>) -> JoinPlan {
    let wheres: Vec<Expr> =
        filter.map_or_else(Vec::new, |f| conjuncts(f).into_iter().cloned().collect());
    let tree = simplify(scope, tree.clone(), &wheres);
    let mut p = Planner {
        scope,
        members,
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

    /// Rule 2 for the tables `ms` of one inner join at `level`.
    fn greedy(&mut self, mut ms: Vec<usize>, level: Option<usize>) {
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
