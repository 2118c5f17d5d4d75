//! UNION [ALL | DISTINCT]: its members planned as queries of their own, the result typed
//! as MariaDB types it (each column the union of its members' types, named by the first
//! member), and ORDER BY / LIMIT of the whole union over the result's columns.
//!
//! ```text
//!   (SELECT …) UNION ALL SELECT … UNION SELECT … ORDER BY 1 LIMIT 5
//!     ──▶ SelectPlan { source: Union { members [m0, m1, m2], distinct_until: Some(2) },
//!                      items: the result's columns, sort, limit }
//! ```
//!
//! A DISTINCT union removes duplicates from everything to its left too (MySQL's rule), so
//! the rows of members `0..=distinct_until` are deduplicated together and the members
//! after it (joined by UNION ALL) are appended as they are.
//!
//! INTERSECT and EXCEPT [ALL | DISTINCT] are the same plan with two members and their
//! [`SetOp`]. sqlparser gives INTERSECT its higher precedence (`a UNION b INTERSECT c`
//! is `a UNION (b INTERSECT c)`); UNION and EXCEPT bind left to right. A member that is
//! itself a set operation is planned as a query of its own. Rows compare as DISTINCT
//! does: NULLs equal, strings in the column's collation.

use quire_engine::table::ReadLock;
use sqlparser::ast as sql;

use super::{limit_exprs, select_core, select_in, Ctx};
use crate::bind::{derive_collation, expr_name, Binder, Scope};
use crate::error::{Result, SqlError};
use crate::exec::{SelectPlan, Source};
use crate::expr::Expr;
use crate::func::types::{ty_column, unify, union_member, Ty};
use crate::meta::{flags, ColumnMeta};
use crate::plan::Access;
use crate::subquery::Outer;

/// How the members combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOp {
    /// UNION [ALL | DISTINCT] of any number of members (`distinct_until`).
    Union,
    /// INTERSECT [ALL]: the first member's rows that the second has (ALL: as many times
    /// as both have them).
    Intersect { all: bool },
    /// EXCEPT [ALL]: the first member's rows that the second has not (ALL: each of the
    /// second's rows takes one copy away).
    Except { all: bool },
}

/// The members of a union and how they combine.
#[derive(Debug, Clone)]
pub struct UnionPlan {
    pub members: Vec<SelectPlan>,
    /// The last member a DISTINCT union reaches: members up to it are deduplicated.
    pub distinct_until: Option<usize>,
    /// The result's column types (members' values are converted to them).
    pub tys: Vec<Ty>,
    pub op: SetOp,
}

/// ALL (true) or DISTINCT (the default).
fn is_all(q: &sql::SetQuantifier, op: &sql::SetOperator) -> Result<bool> {
    match q {
        sql::SetQuantifier::All => Ok(true),
        sql::SetQuantifier::Distinct | sql::SetQuantifier::None => Ok(false),
        other => Err(SqlError::Unsupported(format!("{op} {other}"))),
    }
}

/// The members of `body` (a left-deep tree of UNIONs) in order, with the DISTINCT flag of
/// each UNION between two of them. A member that is another set operation (INTERSECT,
/// EXCEPT) stays whole.
pub(crate) fn flatten<'q>(
    body: &'q sql::SetExpr,
    members: &mut Vec<&'q sql::SetExpr>,
    distinct: &mut Vec<bool>,
) -> Result<()> {
    match body {
        sql::SetExpr::SetOperation {
            left,
            op: op @ sql::SetOperator::Union,
            set_quantifier,
            right,
        } => {
            let d = !is_all(set_quantifier, op)?;
            flatten(left, members, distinct)?;
            distinct.push(d);
            members.push(right);
            Ok(())
        }
        other => {
            members.push(other);
            Ok(())
        }
    }
}

/// Plans one member of a set operation: a SELECT, a parenthesized query, or a nested set
/// operation (planned as a query of its own, `q` giving its other parts).
pub(crate) fn member(
    ctx: &Ctx<'_>,
    q: &sql::Query,
    m: &sql::SetExpr,
    lock: Option<ReadLock>,
    outer: Option<&Outer<'_>>,
) -> Result<SelectPlan> {
    match m {
        sql::SetExpr::Select(s) => select_core(ctx, s, None, None, lock, outer),
        sql::SetExpr::Query(inner) => select_in(ctx, inner, lock, outer),
        sql::SetExpr::SetOperation { .. } => {
            let mut sub = q.clone();
            sub.with = None;
            *sub.body = m.clone();
            sub.order_by = None;
            sub.limit_clause = None;
            plan(ctx, &sub, lock, outer)
        }
        // A table value constructor: its rows as a query of their own.
        sql::SetExpr::Values(v) => {
            let mut sub = q.clone();
            sub.with = None;
            *sub.body = crate::stmt::values_as_union(v)?;
            sub.order_by = None;
            sub.limit_clause = None;
            crate::stmt::select_in(ctx, &sub, lock, outer)
        }
        other => Err(SqlError::Unsupported(other.to_string())),
    }
}

/// Plans query `q` whose body is a UNION (or a parenthesized query with an ORDER BY or
/// LIMIT of its own: a union of one member).
pub fn plan(
    ctx: &Ctx<'_>,
    q: &sql::Query,
    lock: Option<ReadLock>,
    outer: Option<&Outer<'_>>,
) -> Result<SelectPlan> {
    let mut members = Vec::new();
    let mut distinct = Vec::new();
    let op = match q.body.as_ref() {
        sql::SetExpr::SetOperation {
            left,
            op: op @ (sql::SetOperator::Intersect | sql::SetOperator::Except),
            set_quantifier,
            right,
        } => {
            let all = is_all(set_quantifier, op)?;
            members.push(left.as_ref());
            members.push(right.as_ref());
            if *op == sql::SetOperator::Intersect {
                SetOp::Intersect { all }
            } else {
                SetOp::Except { all }
            }
        }
        sql::SetExpr::SetOperation { op, .. } if *op != sql::SetOperator::Union => {
            return Err(SqlError::Unsupported(format!("{op}")));
        }
        body => {
            flatten(body, &mut members, &mut distinct)?;
            SetOp::Union
        }
    };
    let mut plans = Vec::with_capacity(members.len());
    for m in members {
        plans.push(member(ctx, q, m, lock, outer)?);
    }
    let Some(first) = plans.first() else {
        return Err(SqlError::Unsupported("an empty UNION".into()));
    };
    let n = first.items.len();
    if plans.iter().any(|p| p.items.len() != n) {
        return Err(SqlError::DifferentColumnCount);
    }
    let tys = result_types(&plans, n);
    let item_derived: Vec<_> = (0..n)
        .map(|i| {
            first
                .item_derived
                .get(i)
                .copied()
                .unwrap_or((ctx.conn.coll, crate::bind::Coercibility::Numeric))
        })
        .collect();
    let names: Vec<String> = first.columns.iter().map(|c| c.name.clone()).collect();
    let columns = (0..n)
        .map(|i| {
            // The same type in every member (the JSON mark aside: it is the union's).
            let same = plans.iter().all(|p| {
                p.item_tys.get(i).is_some_and(|m| {
                    Ty {
                        json: tys[i].json,
                        ..*m
                    } == tys[i]
                })
            });
            // NOT NULL if every member's column is; a union's column is no table's, so
            // it has none of a table column's key and default flags (MariaDB, measured:
            // an AUTO_INCREMENT BIGINT UNSIGNED primary key gives UNSIGNED and NOT NULL).
            let not_null = plans.iter().all(|p| {
                p.columns
                    .get(i)
                    .is_some_and(|c| c.flags & flags::NOT_NULL != 0)
            });
            let mut m = match (same, first.columns.get(i)) {
                (true, Some(c)) => ColumnMeta {
                    json: tys[i].json,
                    ..c.clone()
                },
                _ => tys[i].meta(names[i].clone()),
            };
            m.flags &= flags::UNSIGNED
                | flags::ZEROFILL
                | flags::BINARY
                | flags::BLOB
                | flags::ENUM
                | flags::SET;
            if not_null {
                m.flags |= flags::NOT_NULL;
            }
            m
        })
        .collect();
    let scope = Scope::single(
        "",
        "",
        "",
        (0..n)
            .map(|i| ty_column(&names[i], tys[i], item_derived[i].0))
            .collect(),
    );
    let items: Vec<Expr> = (0..n).map(Expr::Column).collect();
    // ORDER BY: a position, a name of the first member's columns.
    let mut sort = Vec::new();
    if let Some(ob) = &q.order_by {
        let sql::OrderByKind::Expressions(es) = &ob.kind else {
            return Err(SqlError::Unsupported("ORDER BY ALL".into()));
        };
        for o in es {
            let desc = matches!(o.options.sort, Some(sql::OrderBySort::Desc));
            let e = match &o.expr {
                sql::Expr::Value(v) => match &v.value {
                    sql::Value::Number(num, _) => {
                        let i: usize = num.parse().unwrap_or(0);
                        match i.checked_sub(1).and_then(|i| items.get(i)) {
                            Some(e) => e.clone(),
                            None => {
                                return Err(SqlError::UnknownColumn {
                                    column: num.clone(),
                                    context: "ORDER BY".into(),
                                })
                            }
                        }
                    }
                    _ => bind_order(ctx, &scope, &o.expr)?,
                },
                other => bind_order(ctx, &scope, other)?,
            };
            sort.push((e, desc));
        }
    }
    let mut b = Binder {
        sub: None,
        scope: None,
        params: ctx.params,
        aggs: None,
        context: "LIMIT",
        conn: ctx.conn,
    };
    let (limit, offset) = limit_exprs(q.limit_clause.as_ref(), &mut b)?;
    let distinct_until = distinct.iter().rposition(|d| *d).map(|i| i + 1);
    let item_colls = item_derived.iter().map(|d| d.0).collect();
    let sort_colls = sort
        .iter()
        .map(|(e, _)| derive_collation(e, &scope.columns, ctx.conn.coll).0)
        .collect();
    let _ = expr_name;
    Ok(SelectPlan {
        source: Source::Union(Box::new(UnionPlan {
            members: plans,
            distinct_until,
            tys: tys.clone(),
            op,
        })),
        access: Access::full_scan(),
        filter: None,
        items,
        item_colls,
        item_tys: tys,
        item_derived,
        subqueries: Vec::new(),
        columns,
        aggs: Vec::new(),
        group_by: Vec::new(),
        group_colls: Vec::new(),
        rollup: false,
        having: None,
        distinct: false,
        sort,
        sort_colls,
        limit,
        offset,
        lock,
        lock_wait: Default::default(),
        read_columns: None,
        read_columns_unfiltered: None,
        window: None,
    })
}

/// The result's column types of set-operation members `plans` (`n` columns each), as
/// MariaDB types a UNION (a recursive CTE's anchors too).
pub(crate) fn result_types(plans: &[SelectPlan], n: usize) -> Vec<Ty> {
    let tys: Vec<Ty> = (0..n)
        .map(|i| {
            plans
                .iter()
                .filter_map(|p| p.item_tys.get(i).copied().map(union_member))
                .reduce(unify)
                .unwrap_or_else(|| {
                    crate::func::types::infer(&Expr::Lit(quire_engine::row::Value::Null), &[], &[])
                })
        })
        .collect();
    // MariaDB's union of types differs from CASE's in three places: integers of one type
    // keep it (INT with INT stays INT), a string result has no "not fixed" decimals, and a
    // DOUBLE made of other types is 22 long.
    tys.into_iter()
        .enumerate()
        .map(|(i, mut t)| {
            let member_fts: Vec<_> = plans
                .iter()
                .filter_map(|p| p.item_tys.get(i).map(|m| m.ft))
                .collect();
            let one_ft = member_fts.iter().all(|f| Some(f) == member_fts.first());
            if one_ft {
                if let Some(f) = member_fts.first() {
                    if t.ft != *f && t.len <= 11 {
                        t.ft = *f;
                    }
                }
            }
            if t.is_string() {
                t.dec = 0;
            }
            if t.ft == crate::meta::FieldType::Double && !one_ft {
                t.len = 22;
            }
            // JSON text when every member's column is (MariaDB's extended metadata).
            t.json = plans
                .iter()
                .all(|p| p.item_tys.get(i).is_some_and(|m| m.json));
            t
        })
        .collect()
}

fn bind_order(ctx: &Ctx<'_>, scope: &Scope, e: &sql::Expr) -> Result<Expr> {
    Binder {
        sub: None,
        scope: Some(scope),
        params: ctx.params,
        aggs: None,
        context: "ORDER BY",
        conn: ctx.conn,
    }
    .bind(e)
}
