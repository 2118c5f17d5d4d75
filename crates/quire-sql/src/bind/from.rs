//! Binding FROM: its tables, their joins and the scope the rest of the statement names.
//!
//! ```text
//!   a JOIN b ON p, c LEFT JOIN d USING (x)
//!     ──▶ members [a, b, c, d]          (FROM order; the joined row is their rows, concatenated)
//!         tree    Inner[Inner[a, b; p], Left(c, d; c.x = d.x)]
//!         scope   columns of a, b, c, d; `SELECT *` order a.*, b.*, x, c.rest, d.rest
//! ```
//!
//! RIGHT JOIN is a LEFT JOIN with its sides swapped (the joined row keeps FROM order).
//! USING and NATURAL become equalities, and their columns are merged as MySQL does: the
//! merged column is the outer side's, and comes first in `SELECT *`.

use sqlparser::ast as sql;

use super::{comparison_collation, object_parts, Binder, Scope, ScopeTable, SubCtx};
use crate::error::{Result, SqlError};
use crate::expr::{BinOp, Expr};
use crate::plan::join::Member;
use crate::stmt::Ctx;

/// How the tables of FROM are joined.
#[derive(Debug, Clone, PartialEq)]
pub enum JoinTree {
    /// A table: its index in [`From::members`].
    Leaf(usize),
    /// Inner joins (comma, JOIN, CROSS JOIN) and their ON conditions.
    Inner(Vec<JoinTree>, Vec<Expr>),
    /// `outer LEFT JOIN inner ON conditions`.
    Left(Box<JoinTree>, Box<JoinTree>, Vec<Expr>),
}

impl JoinTree {
    /// The members under this tree.
    pub fn leaves(&self, out: &mut Vec<usize>) {
        match self {
            JoinTree::Leaf(m) => out.push(*m),
            JoinTree::Inner(children, _) => children.iter().for_each(|c| c.leaves(out)),
            JoinTree::Left(o, i, _) => {
                o.leaves(out);
                i.leaves(out);
            }
        }
    }

    /// The members an outer join may give as NULLs: every table under a LEFT JOIN's
    /// inner side.
    pub fn null_extended(&self, out: &mut Vec<usize>) {
        match self {
            JoinTree::Leaf(_) => {}
            JoinTree::Inner(children, _) => children.iter().for_each(|c| c.null_extended(out)),
            JoinTree::Left(o, i, _) => {
                o.null_extended(out);
                i.leaves(out);
            }
        }
    }

    /// Inner joins of inner joins are one inner join.
    fn inner(parts: Vec<JoinTree>, conds: Vec<Expr>) -> JoinTree {
        let mut children = Vec::new();
        let mut all = conds;
        for p in parts {
            match p {
                JoinTree::Inner(c, k) => {
                    children.extend(c);
                    all.extend(k);
                }
                other => children.push(other),
            }
        }
        JoinTree::Inner(children, all)
    }
}

/// MariaDB's limit on the tables of one join (also what bounds the executor's recursion,
/// one frame per table).
pub const MAX_TABLES: usize = 61;

/// A bound FROM clause.
#[derive(Debug, Clone)]
pub struct From {
    pub scope: Scope,
    /// Parallel to `scope.tables`.
    pub members: Vec<Member>,
    pub tree: JoinTree,
}

/// A bound join operand: its tree, the first of its tables in the scope, and the columns
/// an unqualified name (and `SELECT *`) sees in it.
struct Part {
    tree: JoinTree,
    first_table: usize,
    visible: Vec<usize>,
}

struct FromBinder<'c, 'a> {
    sub: Option<&'c SubCtx<'c>>,
    ctx: &'c Ctx<'a>,
    scope: Scope,
    members: Vec<Member>,
    /// Whether ON conditions are bound (the first pass leaves them out).
    on: bool,
    /// The columns of the derived table being added.
    derived_columns: Option<Vec<quire_engine::row::Column>>,
}

/// Binds `from` (at least one table).
/// `sub` is the statement level's subquery context: subqueries in ON conditions are
/// bound in it.
pub fn bind_from(
    ctx: &Ctx<'_>,
    from: &[sql::TableWithJoins],
    sub: Option<&SubCtx<'_>>,
) -> Result<From> {
    // MariaDB reports the errors of the tables and of USING / NATURAL before those of any
    // ON condition: a first pass leaves ON out.
    bind_pass(ctx, from, false, sub)?;
    bind_pass(ctx, from, true, sub)
}

fn bind_pass(
    ctx: &Ctx<'_>,
    from: &[sql::TableWithJoins],
    on: bool,
    sub: Option<&SubCtx<'_>>,
) -> Result<From> {
    let mut b = FromBinder {
        sub,
        ctx,
        scope: Scope::default(),
        members: Vec::new(),
        on,
        derived_columns: None,
    };
    let mut parts = Vec::new();
    let mut visible = Vec::new();
    for twj in from {
        let p = b.joined(twj)?;
        visible.extend(p.visible);
        parts.push(p.tree);
    }
    b.scope.visible = visible;
    Ok(From {
        scope: b.scope,
        members: b.members,
        tree: JoinTree::inner(parts, Vec::new()),
    })
}

impl FromBinder<'_, '_> {
    fn joined(&mut self, twj: &sql::TableWithJoins) -> Result<Part> {
        let left = self.factor(&twj.relation)?;
        self.joins(left, &twj.joins)
    }

    /// Applies `joins` to `left`, left to right.
    fn joins(&mut self, mut left: Part, joins: &[sql::Join]) -> Result<Part> {
        use sql::JoinOperator as J;
        for j in joins {
            // sqlparser reads `a JOIN b JOIN c ON p` as `a JOIN (b JOIN c ON p)`; MySQL as
            // `(a JOIN b) JOIN c ON p`, where p may name a. For inner joins the rows are the
            // same; the scope of p is MySQL's. (Written with parentheses, MySQL would not
            // let p name a; we do.)
            if let (
                J::Join(sql::JoinConstraint::None)
                | J::Inner(sql::JoinConstraint::None)
                | J::CrossJoin(sql::JoinConstraint::None),
                sql::TableFactor::NestedJoin {
                    table_with_joins,
                    alias: None,
                },
            ) = (&j.join_operator, &j.relation)
            {
                let right = self.factor(&table_with_joins.relation)?;
                left = self.join(left, right, Kind::Inner, &sql::JoinConstraint::None)?;
                left = self.joins(left, &table_with_joins.joins)?;
                continue;
            }
            let right = self.factor(&j.relation)?;
            let (kind, constraint) = match &j.join_operator {
                J::Join(c) | J::Inner(c) | J::CrossJoin(c) | J::StraightJoin(c) => (Kind::Inner, c),
                // An outer join needs ON or USING (MariaDB: a syntax error).
                J::Left(sql::JoinConstraint::None)
                | J::LeftOuter(sql::JoinConstraint::None)
                | J::Right(sql::JoinConstraint::None)
                | J::RightOuter(sql::JoinConstraint::None) => {
                    return Err(SqlError::Parse {
                        near: String::new(),
                        line: 1,
                    })
                }
                J::Left(c) | J::LeftOuter(c) => (Kind::Left, c),
                J::Right(c) | J::RightOuter(c) => (Kind::Right, c),
                J::FullOuter(_) => return Err(SqlError::Unsupported("FULL OUTER JOIN".into())),
                other => {
                    return Err(SqlError::Unsupported(format!(
                        "{}",
                        sql::Join {
                            relation: j.relation.clone(),
                            global: false,
                            join_operator: other.clone(),
                        }
                    )))
                }
            };
            left = self.join(left, right, kind, constraint)?;
        }
        Ok(left)
    }

    fn factor(&mut self, f: &sql::TableFactor) -> Result<Part> {
        match f {
            sql::TableFactor::Table { name, alias, .. } => {
                let alias = alias.as_ref().map(|a| a.name.value.clone());
                let parts = object_parts(name)?;
                let last = parts.last().cloned().unwrap_or_default();
                // Inside a recursive member: the CTE's own name reads its work table.
                if let (1, Some(w)) = (parts.len(), self.ctx.ctes.and_then(|c| c.work_for(&last))) {
                    return self.derived(alias.unwrap_or(last), w.plan.clone(), &[]);
                }
                if parts.len() == 1 && self.ctx.ctes.is_some_and(|c| c.is_pending(&last)) {
                    return Err(SqlError::Unsupported(
                        "a recursive common table expression".into(),
                    ));
                }
                // A CTE in scope: a derived table of its query, named by it (or the alias).
                if let (1, Some((def, scope))) =
                    (parts.len(), self.ctx.ctes.and_then(|c| c.find(&last)))
                {
                    let inner = Ctx {
                        db: self.ctx.db,
                        current_db: self.ctx.current_db,
                        params: self.ctx.params,
                        hidden: self.ctx.hidden,
                        conn: self.ctx.conn,
                        ctes: Some(&scope),
                        temps: self.ctx.temps,
                        stats_used: self.ctx.stats_used,
                    };
                    let plan = if self.ctx.ctes.is_some_and(|c| c.is_recursive_def(&last)) {
                        // Its column list names the work table's columns already.
                        crate::stmt::recursive::plan(&inner, def, &scope)?
                    } else {
                        crate::stmt::select_in(&inner, def.2, None, None)?
                    };
                    let names = def.1.clone();
                    return self.derived(alias.unwrap_or(last), plan, &names);
                }
                if parts.len() == 1 && last.eq_ignore_ascii_case("dual") {
                    return Err(SqlError::Unsupported("DUAL in a join".into()));
                }
                // A view, or a table of information_schema: a derived table of its rows.
                if let Some((db, plan, names)) = self.ctx.derived_plan(&parts, alias.as_deref())? {
                    let st_db = db.clone();
                    let part = self.derived(alias.clone().unwrap_or(last.clone()), plan, &names)?;
                    if let Some(st) = self.scope.tables.get_mut(part.first_table) {
                        st.db = st_db;
                        st.table = last.clone();
                        st.aliased = alias.is_some();
                    }
                    return Ok(part);
                }
                let (member, st) = match crate::stmt::seq_table(&last) {
                    Some((from, to, step)) => {
                        let db = match parts.as_slice() {
                            [d, _] => d.clone(),
                            _ => self.ctx.current_db.unwrap_or_default().to_string(),
                        };
                        (
                            Member::Seq { from, to, step },
                            ScopeTable {
                                alias: alias.clone().unwrap_or_else(|| last.clone()),
                                aliased: alias.is_some(),
                                db,
                                table: last.clone(),
                                offset: 0,
                                len: 1,
                                auto_increment: None,
                            },
                        )
                    }
                    None => {
                        let t = self.ctx.table(name, alias.as_deref())?;
                        let st = ScopeTable {
                            alias: t.alias.clone(),
                            aliased: alias.is_some(),
                            db: t.shown().0.to_string(),
                            table: t.shown().1.to_string(),
                            offset: 0,
                            len: t.def.columns.len(),
                            auto_increment: t.def.auto_increment,
                        };
                        (Member::Table(Box::new(t)), st)
                    }
                };
                self.add(member, st)
            }
            sql::TableFactor::NestedJoin {
                table_with_joins,
                alias: None,
            } => self.joined(table_with_joins),
            sql::TableFactor::Derived {
                lateral,
                subquery,
                alias,
                ..
            } => {
                if *lateral {
                    return Err(SqlError::Unsupported("LATERAL".into()));
                }
                // MariaDB 10.11's grammar requires the alias: a syntax error without one.
                let Some(alias) = alias else {
                    return Err(SqlError::Parse {
                        near: String::new(),
                        line: 1,
                    });
                };
                if !alias.columns.is_empty() {
                    return Err(SqlError::Unsupported(
                        "a derived table's column list".into(),
                    ));
                }
                let name = alias.name.value.clone();
                // A derived table sees no enclosing query (MariaDB has no LATERAL).
                let plan = crate::stmt::select_in(self.ctx, subquery, None, None)?;
                self.derived(name, plan, &[])
            }
            other => Err(SqlError::Unsupported(other.to_string())),
        }
    }

    /// Adds derived table `name` of `plan`, its columns named `names` (a CTE's column
    /// list) or as the query names them (1060 for a name twice).
    fn derived(
        &mut self,
        name: String,
        mut plan: crate::exec::SelectPlan,
        names: &[String],
    ) -> Result<Part> {
        if !names.is_empty() {
            if names.len() != plan.columns.len() {
                return Err(SqlError::CteColumns);
            }
            for (m, n) in plan.columns.iter_mut().zip(names) {
                m.name = n.clone();
            }
        }
        let mut columns = Vec::with_capacity(plan.items.len());
        for (i, meta) in plan.columns.iter().enumerate() {
            if columns
                .iter()
                .any(|c: &quire_engine::row::Column| c.name.eq_ignore_ascii_case(&meta.name))
            {
                return Err(SqlError::DuplicateColumn(meta.name.clone()));
            }
            let ty = plan.item_tys.get(i).copied().unwrap_or_else(|| {
                crate::func::types::infer(&Expr::Lit(quire_engine::row::Value::Null), &[], &[])
            });
            let coll = plan.item_derived.get(i).map_or(self.ctx.conn.coll, |d| d.0);
            columns.push(crate::func::types::ty_column(&meta.name, ty, coll));
        }
        let st = ScopeTable {
            alias: name.clone(),
            aliased: true,
            db: self.ctx.current_db.unwrap_or_default().to_string(),
            table: name.clone(),
            offset: 0,
            len: columns.len(),
            auto_increment: None,
        };
        self.derived_columns = Some(columns);
        self.add(
            Member::Derived(Box::new(crate::plan::join::Derived { alias: name, plan })),
            st,
        )
    }

    /// Adds a table to the scope; 1066 if its name is taken, 1116 past [`MAX_TABLES`].
    fn add(&mut self, member: Member, mut st: ScopeTable) -> Result<Part> {
        if self.scope.tables.len() >= MAX_TABLES {
            return Err(SqlError::TooManyTables(MAX_TABLES));
        }
        if self
            .scope
            .tables
            .iter()
            .any(|b| st.alias == b.alias && (st.aliased || b.aliased || st.db == b.db))
        {
            return Err(SqlError::NotUniqueTable(st.alias));
        }
        st.offset = self.scope.columns.len();
        match &member {
            Member::Table(t) => self.scope.columns.extend(t.def.columns.iter().cloned()),
            Member::Seq { .. } => self.scope.columns.push(crate::stmt::seq_column()),
            Member::Derived(_) => self
                .scope
                .columns
                .extend(self.derived_columns.take().unwrap_or_default()),
        }
        let visible = (st.offset..st.offset + st.len).collect();
        let first_table = self.scope.tables.len();
        self.scope.tables.push(st);
        self.members.push(member);
        Ok(Part {
            tree: JoinTree::Leaf(first_table),
            first_table,
            visible,
        })
    }

    fn join(
        &mut self,
        left: Part,
        right: Part,
        kind: Kind,
        constraint: &sql::JoinConstraint,
    ) -> Result<Part> {
        let (mut conds, visible) = match constraint {
            sql::JoinConstraint::None => (Vec::new(), [left.visible, right.visible].concat()),
            sql::JoinConstraint::On(_) if !self.on => {
                (Vec::new(), [left.visible, right.visible].concat())
            }
            sql::JoinConstraint::On(e) => {
                // ON sees the tables of its two operands only.
                let scope = Scope {
                    columns: self.scope.columns.clone(),
                    tables: self.scope.tables[left.first_table..].to_vec(),
                    visible: [left.visible.clone(), right.visible.clone()].concat(),
                };
                let on = Binder {
                    sub: self.sub,
                    scope: Some(&scope),
                    params: self.ctx.params,
                    aggs: None,
                    context: "ON",
                    conn: self.ctx.conn,
                }
                .bind(e)?;
                (vec![on], scope.visible)
            }
            sql::JoinConstraint::Using(names) => {
                let mut cols = Vec::new();
                for n in names {
                    let parts = object_parts(n)?;
                    let name = parts.last().cloned().unwrap_or_default();
                    if !cols.iter().any(|c: &String| c.eq_ignore_ascii_case(&name)) {
                        cols.push(name);
                    }
                }
                self.merge(&left.visible, &right.visible, &cols, kind)?
            }
            sql::JoinConstraint::Natural => {
                let cols: Vec<String> = left
                    .visible
                    .iter()
                    .map(|&i| self.scope.columns[i].name.clone())
                    .filter(|n| {
                        right
                            .visible
                            .iter()
                            .any(|&j| self.scope.columns[j].name.eq_ignore_ascii_case(n))
                    })
                    .collect();
                let mut uniq: Vec<String> = Vec::new();
                for c in cols {
                    if !uniq.iter().any(|u| u.eq_ignore_ascii_case(&c)) {
                        uniq.push(c);
                    }
                }
                self.merge(&left.visible, &right.visible, &uniq, kind)?
            }
            sql::JoinConstraint::UsingAlias(..) => {
                return Err(SqlError::Unsupported("USING … AS".into()))
            }
        };
        let tree = match kind {
            Kind::Inner => JoinTree::inner(vec![left.tree, right.tree], std::mem::take(&mut conds)),
            Kind::Left => JoinTree::Left(Box::new(left.tree), Box::new(right.tree), conds),
            Kind::Right => JoinTree::Left(Box::new(right.tree), Box::new(left.tree), conds),
        };
        Ok(Part {
            tree,
            first_table: left.first_table,
            visible,
        })
    }

    /// USING (`cols`) or NATURAL: an equality per column, and the merged column list.
    fn merge(
        &self,
        left: &[usize],
        right: &[usize],
        cols: &[String],
        kind: Kind,
    ) -> Result<(Vec<Expr>, Vec<usize>)> {
        // As MariaDB: a name missing from either side is 1054, then one found twice on a
        // side is 1052.
        let hits = |side: &[usize], name: &str| -> Vec<usize> {
            side.iter()
                .copied()
                .filter(|&i| self.scope.columns[i].name.eq_ignore_ascii_case(name))
                .collect()
        };
        let mut pairs = Vec::new();
        for c in cols {
            let (l, r) = (hits(left, c), hits(right, c));
            match (l.as_slice(), r.as_slice()) {
                ([a], [b]) => pairs.push((*a, *b)),
                ([], _) | (_, []) => {
                    return Err(SqlError::UnknownColumn {
                        column: c.clone(),
                        context: "FROM".into(),
                    })
                }
                _ => {
                    return Err(SqlError::AmbiguousColumn {
                        column: c.clone(),
                        context: "FROM".into(),
                    })
                }
            }
        }
        let mut conds = Vec::new();
        for &(l, r) in &pairs {
            let (a, b) = (Expr::Column(l), Expr::Column(r));
            let coll = comparison_collation(&a, &b, &self.scope.columns, "=", self.ctx.conn.coll)?;
            conds.push(Expr::Cmp(BinOp::Eq, Box::new(a), Box::new(b), coll));
        }
        // The outer side's columns come first and stand for the merged ones (an inner
        // join's left side is its outer side).
        let (outer, inner, merged): (&[usize], &[usize], Vec<usize>) = match kind {
            Kind::Right => {
                let mut m: Vec<usize> = pairs.iter().map(|p| p.1).collect();
                m.sort_by_key(|c| right.iter().position(|x| x == c));
                (right, left, m)
            }
            _ => {
                let mut m: Vec<usize> = pairs.iter().map(|p| p.0).collect();
                m.sort_by_key(|c| left.iter().position(|x| x == c));
                (left, right, m)
            }
        };
        let dropped: Vec<usize> = pairs
            .iter()
            .map(|p| if kind == Kind::Right { p.0 } else { p.1 })
            .collect();
        let mut visible = merged.clone();
        visible.extend(outer.iter().filter(|c| !merged.contains(c)));
        visible.extend(inner.iter().filter(|c| !dropped.contains(c)));
        Ok((conds, visible))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Inner,
    Left,
    Right,
}
