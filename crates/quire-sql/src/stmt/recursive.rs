//! WITH RECURSIVE: a common table expression whose query names itself.
//!
//! ```text
//!   WITH RECURSIVE t (n) AS (SELECT 1  UNION ALL  SELECT n + 1 FROM t WHERE n < 5)
//!                            └anchor┘             └─ recursive member: reads the work
//!                                                    table, the rows the last round added
//!   ──▶ SelectPlan { source: Recursive { anchors, steps, distinct, work }, items: t's columns }
//! ```
//!
//! The members of the CTE's UNION that do not name it are its anchors (4006 when there is
//! none); the others are planned with the CTE's name bound to a *work table*
//! (`Source::WorkTable`, read through `Env::work_rows`). Execution (`exec/recursive.rs`)
//! runs the anchors, then the recursive members over the rows the previous round added,
//! until a round adds nothing or `max_recursive_iterations` rounds have run.
//!
//! MariaDB's restrictions on a recursive member (its `check_unrestricted_recursive`, with
//! `standard_compliant_cte` on) give 4008: the CTE named twice in one member, on the inner
//! side of an outer join, inside a subquery, or a member with aggregate functions. A
//! reference to a CTE written later in the same WITH RECURSIVE (mutual recursion) is not
//! done yet (1235).

use std::sync::atomic::{AtomicUsize, Ordering};

use quire_engine::row::Column;
use sqlparser::ast as sql;

use super::union::{flatten, member, result_types};
use super::{CteDef, Ctes, Ctx};
use crate::bind::Coercibility;
use crate::error::{Result, SqlError};
use crate::exec::{SelectPlan, Source};
use crate::expr::Expr;
use crate::func::types::{ty_column, Ty};
use crate::plan::Access;

/// A recursive CTE's plan (the source of its SELECT).
#[derive(Debug, Clone)]
pub struct RecursivePlan {
    pub anchors: Vec<SelectPlan>,
    /// The members that read the work table.
    pub steps: Vec<SelectPlan>,
    /// UNION DISTINCT: a row already in the result is not added again (a cycle ends).
    pub distinct: bool,
    /// The work table's id (`Source::WorkTable`).
    pub work: usize,
    /// The result's column types: the anchors' (a recursive member's values are
    /// converted to them).
    pub tys: Vec<Ty>,
    /// The result's columns (for the conversion's messages and lengths).
    pub columns: Vec<Column>,
}

/// The work table a recursive member reads under the CTE's name.
#[derive(Debug)]
pub struct WorkRef {
    pub name: String,
    pub plan: SelectPlan,
}

/// Work table ids: unique in the process, so nested recursive CTEs never mix their rows.
static NEXT_WORK: AtomicUsize = AtomicUsize::new(1);

/// Whether `e` names table `name` anywhere (in joins, derived tables, subqueries).
pub fn mentions_set(e: &sql::SetExpr, name: &str) -> bool {
    let mut found = false;
    let _ = sql::visit_relations(e, |r| {
        if let [sql::ObjectNamePart::Identifier(i)] = r.0.as_slice() {
            if i.value == name {
                found = true;
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    found
}

/// Whether table factor `f` is (or nests) a reference to `name`.
fn factor_names(f: &sql::TableFactor, name: &str) -> bool {
    match f {
        sql::TableFactor::Table { name: n, .. } => {
            matches!(n.0.as_slice(), [sql::ObjectNamePart::Identifier(i)] if i.value == name)
        }
        sql::TableFactor::NestedJoin {
            table_with_joins, ..
        } => twj_names(table_with_joins, name) > 0,
        _ => false,
    }
}

/// How many times the joins of `t` name `name` directly (not in derived tables).
fn twj_names(t: &sql::TableWithJoins, name: &str) -> usize {
    let one = |f: &sql::TableFactor| -> usize {
        match f {
            sql::TableFactor::NestedJoin {
                table_with_joins, ..
            } => twj_names(table_with_joins, name),
            f => usize::from(factor_names(f, name)),
        }
    };
    one(&t.relation) + t.joins.iter().map(|j| one(&j.relation)).sum::<usize>()
}

/// MariaDB's conditions 1, 2 and 4 on a recursive member `m` (condition 3, aggregates,
/// is checked on its plan): 4008 when they fail.
fn check_restricted(m: &sql::SetExpr, name: &str) -> Result<()> {
    let bad = || Err(SqlError::RecursiveRestrictions(name.to_string()));
    let sql::SetExpr::Select(s) = m else {
        // A parenthesized member or a nested set operation: its selects are its own.
        return Ok(());
    };
    let mut direct = 0;
    let mut derived = 0;
    for t in &s.from {
        direct += twj_names(t, name);
        // The inner side of an outer join may not be the CTE (condition 2).
        let mut left_has = factor_names(&t.relation, name);
        for j in &t.joins {
            let right_has = factor_names(&j.relation, name);
            match &j.join_operator {
                sql::JoinOperator::Left(_) | sql::JoinOperator::LeftOuter(_) if right_has => {
                    return bad()
                }
                sql::JoinOperator::Right(_) | sql::JoinOperator::RightOuter(_) if left_has => {
                    return bad()
                }
                _ => {}
            }
            left_has |= right_has;
        }
        let mut factors = vec![&t.relation];
        factors.extend(t.joins.iter().map(|j| &j.relation));
        for f in factors {
            if let sql::TableFactor::Derived { subquery, .. } = f {
                if mentions_set(&subquery.body, name) {
                    derived += 1;
                }
            }
        }
    }
    // Condition 1: at most one reference per select (a derived table's counting).
    if direct + derived > 1 {
        return bad();
    }
    // Condition 4: a reference inside a subquery (WHERE, the select list, …).
    let mut outside_from = s.clone();
    outside_from.from.clear();
    if mentions_set(&sql::SetExpr::Select(outside_from), name) {
        return bad();
    }
    Ok(())
}

/// A plan that reads `source` and passes its `n` columns through, typed `tys`, named
/// `names`, in collations `colls`.
fn passthrough(
    source: Source,
    names: &[String],
    tys: &[Ty],
    colls: &[(quire_engine::row::Collation, Coercibility)],
) -> SelectPlan {
    let n = tys.len();
    SelectPlan {
        source,
        access: Access::full_scan(),
        filter: None,
        items: (0..n).map(Expr::Column).collect(),
        item_colls: colls.iter().map(|c| c.0).collect(),
        item_tys: tys.to_vec(),
        item_derived: colls.to_vec(),
        subqueries: Vec::new(),
        columns: (0..n).map(|i| tys[i].meta(names[i].clone())).collect(),
        aggs: Vec::new(),
        group_by: Vec::new(),
        group_colls: Vec::new(),
        rollup: false,
        having: None,
        distinct: false,
        sort: Vec::new(),
        sort_colls: Vec::new(),
        limit: None,
        offset: None,
        lock: None,
        lock_wait: Default::default(),
        read_columns: None,
        read_columns_unfiltered: None,
        window: None,
    }
}

/// Plans recursive CTE `def`, `scope` being the CTEs its query sees (`Ctes::find`).
pub fn plan(ctx: &Ctx<'_>, def: &CteDef<'_>, scope: &Ctes<'_>) -> Result<SelectPlan> {
    let (name, cols, q) = (def.0.as_str(), &def.1, def.2);
    if q.order_by.is_some() || q.limit_clause.is_some() {
        // MariaDB 10.11 has no ORDER BY / LIMIT of a recursive CTE's whole query either.
        return Err(SqlError::MariaDbUnsupported(
            "global ORDER_BY/LIMIT in recursive CTE spec".into(),
        ));
    }
    if q.with.is_some() {
        return Err(SqlError::Unsupported(
            "WITH inside a recursive common table expression".into(),
        ));
    }
    let mut members = Vec::new();
    let mut distinct = Vec::new();
    match q.body.as_ref() {
        sql::SetExpr::SetOperation { op, .. } if *op != sql::SetOperator::Union => {
            return Err(SqlError::Unsupported(format!(
                "{op} in a recursive common table expression"
            )))
        }
        body => flatten(body, &mut members, &mut distinct)?,
    }
    let (recs, anchors): (Vec<&sql::SetExpr>, Vec<&sql::SetExpr>) =
        members.into_iter().partition(|m| mentions_set(m, name));
    if anchors.is_empty() {
        return Err(SqlError::RecursiveWithoutAnchors(name.to_string()));
    }
    let anchor_ctx = Ctx {
        db: ctx.db,
        current_db: ctx.current_db,
        params: ctx.params,
        hidden: ctx.hidden,
        conn: ctx.conn,
        ctes: Some(scope),
        temps: ctx.temps,
        stats_used: ctx.stats_used,
    };
    let mut anchor_plans = Vec::with_capacity(anchors.len());
    for m in &anchors {
        anchor_plans.push(member(&anchor_ctx, q, m, None, None)?);
    }
    let n = anchor_plans.first().map_or(0, |p| p.items.len());
    if anchor_plans.iter().any(|p| p.items.len() != n) {
        return Err(SqlError::DifferentColumnCount);
    }
    let tys = result_types(&anchor_plans, n);
    let names: Vec<String> = if cols.is_empty() {
        anchor_plans
            .first()
            .map(|p| p.columns.iter().map(|c| c.name.clone()).collect())
            .unwrap_or_default()
    } else if cols.len() == n {
        cols.clone()
    } else {
        return Err(SqlError::CteColumns);
    };
    let derived: Vec<_> = (0..n)
        .map(|i| {
            anchor_plans
                .first()
                .and_then(|p| p.item_derived.get(i).copied())
                .unwrap_or((ctx.conn.coll, Coercibility::Numeric))
        })
        .collect();
    let columns: Vec<Column> = (0..n)
        .map(|i| ty_column(&names[i], tys[i], derived[i].0))
        .collect();
    let work = NEXT_WORK.fetch_add(1, Ordering::Relaxed);
    let work_ref = WorkRef {
        name: name.to_string(),
        plan: passthrough(Source::WorkTable(work), &names, &tys, &derived),
    };
    let rec_scope = Ctes {
        defs: scope.defs.clone(),
        up: scope.up,
        recursive: false,
        pending: scope.pending.clone(),
        work: Some(&work_ref),
    };
    let rec_ctx = Ctx {
        ctes: Some(&rec_scope),
        ..anchor_ctx
    };
    let mut steps = Vec::with_capacity(recs.len());
    for m in &recs {
        check_restricted(m, name)?;
        let p = member(&rec_ctx, q, m, None, None)?;
        if p.items.len() != n {
            return Err(SqlError::DifferentColumnCount);
        }
        // Condition 3: no aggregate (or window) functions in a recursive member.
        if !p.aggs.is_empty() {
            return Err(SqlError::RecursiveRestrictions(name.to_string()));
        }
        // MariaDB runs GROUP BY and DISTINCT in a recursive member over its whole result
        // so far, round after round (its answers grow until max_recursive_iterations);
        // Quire does not imitate that.
        if !p.group_by.is_empty() || p.distinct {
            return Err(SqlError::Unsupported(
                "GROUP BY or DISTINCT in a recursive member of a CTE".into(),
            ));
        }
        steps.push(p);
    }
    let rp = RecursivePlan {
        anchors: anchor_plans,
        steps,
        distinct: distinct.iter().any(|d| *d),
        work,
        tys: tys.clone(),
        columns,
    };
    Ok(passthrough(
        Source::Recursive(Box::new(rp)),
        &names,
        &tys,
        &derived,
    ))
}
