//! WHERE pushed into a view: MariaDB merges a simple view into the query that reads it,
//! so `SELECT … FROM v WHERE id = 5` reads one row by the primary key. Quire runs a
//! view as a derived table; when the view is read alone and its query is one simple
//! SELECT (no aggregate, DISTINCT, GROUP BY, HAVING, window, LIMIT, ORDER BY or UNION),
//! the conditions of the outer WHERE that name only the view's columns are rewritten over
//! the view's own expressions and added to its WHERE, where the planner uses them for
//! index access. The outer WHERE still checks every row, so a pushed condition only has
//! to keep a superset: it keeps exactly the rows the outer one keeps, since the view's
//! rows are its base rows one for one.
//!
//! Invariants:
//! 1. Only conditions built from columns, literals, parameters, comparisons, AND / OR /
//!    NOT, IN lists, BETWEEN, LIKE, IS [NOT] NULL and arithmetic are pushed: nothing that
//!    reads session state, calls a function (RAND() would run twice) or holds a subquery.
//! 2. Each statement level offers its own WHERE: a view inside a view, a subquery or a
//!    derived table sees only the WHERE of the query that names it.

use std::cell::RefCell;

use sqlparser::ast as sql;

thread_local! {
    /// Per statement level being bound: the WHERE conjuncts offered to a view read alone.
    static OFFERS: RefCell<Vec<Option<Vec<sql::Expr>>>> = const { RefCell::new(Vec::new()) };
}

fn conjuncts(e: &sql::Expr, out: &mut Vec<sql::Expr>) {
    match e {
        sql::Expr::BinaryOp {
            left,
            op: sql::BinaryOperator::And,
            right,
        } => {
            conjuncts(left, out);
            conjuncts(right, out);
        }
        sql::Expr::Nested(inner) => conjuncts(inner, out),
        other => out.push(other.clone()),
    }
}

/// Binds FROM (`f`) with `s`'s WHERE offered to a view that is its only table.
pub fn offering<T>(s: &sql::Select, f: impl FnOnce() -> T) -> T {
    let alone = matches!(s.from.as_slice(), [twj] if twj.joins.is_empty()
        && matches!(twj.relation, sql::TableFactor::Table { .. }));
    let offer = match (&s.selection, alone) {
        (Some(w), true) => {
            let mut c = Vec::new();
            conjuncts(w, &mut c);
            Some(c)
        }
        _ => None,
    };
    OFFERS.with(|o| o.borrow_mut().push(offer));
    let r = f();
    OFFERS.with(|o| o.borrow_mut().pop());
    r
}

/// The offered conditions of the statement level now binding its FROM.
fn offered() -> Vec<sql::Expr> {
    OFFERS.with(|o| o.borrow().last().cloned().flatten().unwrap_or_default())
}

/// Whether `q` is a view query that conditions can be pushed into.
pub(crate) fn simple(q: &sql::Query) -> Option<&sql::Select> {
    if q.with.is_some()
        || q.order_by.is_some()
        || q.limit_clause.is_some()
        || !q.locks.is_empty()
        || q.fetch.is_some()
    {
        return None;
    }
    let sql::SetExpr::Select(s) = &*q.body else {
        return None;
    };
    let grouped = !matches!(&s.group_by, sql::GroupByExpr::Expressions(es, _) if es.is_empty());
    if s.distinct.is_some() || grouped || s.having.is_some() || !s.named_window.is_empty() {
        return None;
    }
    for it in &s.projection {
        let sql::SelectItem::ExprWithAlias { expr, .. } = it else {
            return None;
        };
        if !pushable(expr, &mut |_| true) {
            return None;
        }
    }
    Some(s)
}

/// Invariant 1; `col` says whether an identifier may be rewritten.
pub(crate) fn pushable(e: &sql::Expr, col: &mut dyn FnMut(&[sql::Ident]) -> bool) -> bool {
    use sql::Expr as E;
    match e {
        E::Identifier(i) => col(std::slice::from_ref(i)),
        E::CompoundIdentifier(p) => col(p),
        // A `?` stays with the outer query: parameters are numbered by its text.
        E::Value(v) => !matches!(v.value, sql::Value::Placeholder(_)),
        E::Nested(x) | E::IsNull(x) | E::IsNotNull(x) | E::UnaryOp { expr: x, .. } => {
            pushable(x, col)
        }
        E::BinaryOp { left, op, right } => {
            use sql::BinaryOperator as B;
            matches!(
                op,
                B::Plus
                    | B::Minus
                    | B::Multiply
                    | B::Divide
                    | B::Modulo
                    | B::Eq
                    | B::NotEq
                    | B::Lt
                    | B::LtEq
                    | B::Gt
                    | B::GtEq
                    | B::And
                    | B::Or
            ) && pushable(left, col)
                && pushable(right, col)
        }
        E::In {
            expr,
            target: sql::InTarget::List(list),
            ..
        } => pushable(expr, col) && list.iter().all(|x| pushable(x, col)),
        E::Between {
            expr, low, high, ..
        } => pushable(expr, col) && pushable(low, col) && pushable(high, col),
        E::Like {
            expr,
            pattern,
            escape_char,
            any: false,
            ..
        } => {
            pushable(expr, col)
                && pushable(pattern, col)
                && escape_char.as_deref().is_none_or(|x| pushable(x, col))
        }
        _ => false,
    }
}

/// `e` with each view column replaced by the view's expression for it (parenthesized).
pub(crate) fn rewrite(
    e: &sql::Expr,
    map: &dyn Fn(&[sql::Ident]) -> Option<sql::Expr>,
) -> sql::Expr {
    use sql::Expr as E;
    let r = |x: &sql::Expr| Box::new(rewrite(x, map));
    match e {
        E::Identifier(i) => map(std::slice::from_ref(i)).unwrap_or_else(|| e.clone()),
        E::CompoundIdentifier(p) => map(p).unwrap_or_else(|| e.clone()),
        E::Nested(x) => E::Nested(r(x)),
        E::IsNull(x) => E::IsNull(r(x)),
        E::IsNotNull(x) => E::IsNotNull(r(x)),
        E::UnaryOp { op, expr } => E::UnaryOp {
            op: *op,
            expr: r(expr),
        },
        E::BinaryOp { left, op, right } => E::BinaryOp {
            left: r(left),
            op: op.clone(),
            right: r(right),
        },
        E::In {
            expr,
            target: sql::InTarget::List(list),
            negated,
            global,
        } => E::In {
            expr: r(expr),
            target: sql::InTarget::List(list.iter().map(|x| rewrite(x, map)).collect()),
            negated: *negated,
            global: *global,
        },
        E::Between {
            expr,
            negated,
            low,
            high,
        } => E::Between {
            expr: r(expr),
            negated: *negated,
            low: r(low),
            high: r(high),
        },
        E::Like {
            negated,
            any,
            expr,
            pattern,
            escape_char,
        } => E::Like {
            negated: *negated,
            any: *any,
            expr: r(expr),
            pattern: r(pattern),
            escape_char: escape_char.as_ref().map(|x| r(x)),
        },
        other => other.clone(),
    }
}

/// View `name` (read under `alias`) with columns `columns`, its query `q`: `q` with the
/// offered conditions that name only its columns added to its WHERE. `None`: nothing to
/// push.
pub fn push_into(
    q: &sql::Query,
    name: &str,
    alias: Option<&str>,
    columns: &[String],
) -> Option<sql::Query> {
    let offers = offered();
    if offers.is_empty() {
        return None;
    }
    let s = simple(q)?;
    let items: Vec<&sql::Expr> = s
        .projection
        .iter()
        .filter_map(|it| match it {
            sql::SelectItem::ExprWithAlias { expr, .. } => Some(expr),
            _ => None,
        })
        .collect();
    if items.len() != columns.len() {
        return None;
    }
    let qualifier = alias.unwrap_or(name);
    let index = |parts: &[sql::Ident]| -> Option<usize> {
        let c = match parts {
            [c] => c,
            [t, c] if t.value == qualifier => c,
            [_, t, c] if alias.is_none() && t.value == qualifier => c,
            _ => return None,
        };
        columns
            .iter()
            .position(|n| n.eq_ignore_ascii_case(&c.value))
    };
    let map = |parts: &[sql::Ident]| -> Option<sql::Expr> {
        index(parts).map(|i| sql::Expr::Nested(Box::new(items[i].clone())))
    };
    let mut pushed = Vec::new();
    for c in offers {
        if pushable(&c, &mut |p| index(p).is_some()) {
            pushed.push(rewrite(&c, &map));
        }
    }
    if pushed.is_empty() {
        return None;
    }
    let mut out = q.clone();
    if let sql::SetExpr::Select(sel) = &mut *out.body {
        let mut w = sel.selection.take();
        for p in pushed {
            w = Some(match w {
                None => p,
                Some(prev) => sql::Expr::BinaryOp {
                    left: Box::new(sql::Expr::Nested(Box::new(prev))),
                    op: sql::BinaryOperator::And,
                    right: Box::new(sql::Expr::Nested(Box::new(p))),
                },
            });
        }
        sel.selection = w;
    }
    Some(out)
}
