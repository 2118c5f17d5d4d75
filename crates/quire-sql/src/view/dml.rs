//! INSERT, UPDATE and DELETE through a view: a view over one table whose query is a simple
//! SELECT (`pushdown::simple`) is updatable in MariaDB; the statement is rewritten onto
//! that table before it is planned.
//!
//! ```text
//!   CREATE VIEW v AS SELECT a AS x, b + 1 AS y FROM t WHERE a > 0
//!   UPDATE v SET x = x + 1 WHERE y = 3   ──▶  UPDATE t SET a = (a) + 1 WHERE (a > 0) AND ((b + 1) = 3)
//!   DELETE FROM v WHERE x = 5            ──▶  DELETE FROM t WHERE (a > 0) AND ((a) = 5)
//!   INSERT INTO v (x) VALUES (7)         ──▶  INSERT INTO t (a) VALUES (7)
//! ```
//!
//! Invariants:
//! 1. Only a column of the view that is a column of the table can be assigned or inserted
//!    (1348 otherwise, as MariaDB), and an UPDATE or DELETE changes only rows the view
//!    shows: the view's WHERE is part of the rewritten one.
//! 2. What cannot be rewritten exactly is refused (1235): WITH CHECK OPTION, a view over
//!    a view, conditions or values that hold subqueries or function calls.

use sqlparser::ast as sql;

use super::pushdown::{pushable, rewrite, simple};
use crate::error::{Result, SqlError};
use crate::stmt::Ctx;

/// The table under an updatable view, and how its columns map.
struct Base {
    /// The table as the view's FROM names it, with its database.
    factor: sql::TableFactor,
    /// Per view column, the view's expression for it.
    items: Vec<sql::Expr>,
    columns: Vec<String>,
    filter: Option<sql::Expr>,
    view: String,
}

impl Base {
    fn index(&self, parts: &[sql::Ident], alias: Option<&str>) -> Option<usize> {
        let c = match parts {
            [c] => c,
            [t, c] if t.value == alias.unwrap_or(&self.view) => c,
            _ => return None,
        };
        self.columns
            .iter()
            .position(|n| n.eq_ignore_ascii_case(&c.value))
    }

    /// An expression of the statement over the view, rewritten over the table; 1235 if
    /// it holds what cannot be rewritten.
    fn expr(&self, e: &sql::Expr, alias: Option<&str>) -> Result<sql::Expr> {
        let ok = pushable(e, &mut |p| self.index(p, alias).is_some());
        if !ok {
            return Err(SqlError::Unsupported(format!(
                "this expression in a change through the view '{}'",
                self.view
            )));
        }
        Ok(rewrite(e, &|p| {
            self.index(p, alias)
                .map(|i| sql::Expr::Nested(Box::new(self.items[i].clone())))
        }))
    }

    /// The table's column for view column `parts` (1348 if it is an expression).
    fn column(&self, parts: &[sql::Ident], alias: Option<&str>) -> Result<sql::Ident> {
        let name = parts.last().map(|i| i.value.clone()).unwrap_or_default();
        let i = self
            .index(parts, alias)
            .ok_or_else(|| SqlError::UnknownColumn {
                column: name.clone(),
                context: "field list".into(),
            })?;
        match &self.items[i] {
            sql::Expr::Identifier(c) => Ok(c.clone()),
            sql::Expr::CompoundIdentifier(p) => {
                p.last().cloned().ok_or(SqlError::NonUpdatableColumn(name))
            }
            _ => Err(SqlError::NonUpdatableColumn(name)),
        }
    }

    fn filtered(&self, sel: Option<sql::Expr>) -> Option<sql::Expr> {
        match (self.filter.clone(), sel) {
            (None, s) => s,
            (f, None) => f,
            (Some(f), Some(s)) => Some(sql::Expr::BinaryOp {
                left: Box::new(sql::Expr::Nested(Box::new(f))),
                op: sql::BinaryOperator::And,
                right: Box::new(sql::Expr::Nested(Box::new(s))),
            }),
        }
    }
}

/// The updatable view `name` names, if it is one; errors for the views refused.
fn base(ctx: &Ctx<'_>, name: &sql::ObjectName) -> Result<Option<Base>> {
    let parts = crate::bind::object_parts(name)?;
    let (db, t) = match parts.as_slice() {
        [t] => match ctx.current_db {
            Some(d) => (d.to_string(), t.clone()),
            None => return Ok(None),
        },
        [d, t] => (d.clone(), t.clone()),
        _ => return Ok(None),
    };
    if ctx.temps.get(&db, &t).is_some() {
        return Ok(None);
    }
    let Some(v) = ctx.db.view(&db, &t) else {
        return Ok(None);
    };
    if !super::is_updatable(&v) || v.algorithm == 2 {
        // `Ctx::dml_table` answers with MariaDB's error.
        return Ok(None);
    }
    let refuse = |what: &str| {
        Err(SqlError::Unsupported(format!(
            "changes through the view '{db}.{t}' ({what})"
        )))
    };
    if v.check_option != 0 {
        return refuse("WITH CHECK OPTION");
    }
    let Ok((sql::Statement::Query(q), _)) = crate::parse::parse_one(&v.definition) else {
        return refuse("its query");
    };
    let Some(s) = simple(&q) else {
        return refuse("its query");
    };
    let [twj] = s.from.as_slice() else {
        return refuse("more than one table");
    };
    if !twj.joins.is_empty() {
        return refuse("a join");
    }
    let sql::TableFactor::Table {
        name: bname, alias, ..
    } = &twj.relation
    else {
        return refuse("a derived table");
    };
    let bparts = crate::bind::object_parts(bname)?;
    let (bdb, bt) = match bparts.as_slice() {
        [x] => (v.db.clone(), x.clone()),
        [d, x] => (d.clone(), x.clone()),
        _ => return refuse("its table"),
    };
    if ctx.db.view(&bdb, &bt).is_some() {
        return refuse("a view over a view");
    }
    if let Some(w) = &s.selection {
        if !pushable(w, &mut |_| true) {
            return refuse("its WHERE");
        }
    }
    let items = s
        .projection
        .iter()
        .filter_map(|it| match it {
            sql::SelectItem::ExprWithAlias { expr, .. } => Some(expr.clone()),
            _ => None,
        })
        .collect::<Vec<_>>();
    if items.len() != v.columns.len() {
        return refuse("its columns");
    }
    let mut factor = twj.relation.clone();
    if let sql::TableFactor::Table { name, .. } = &mut factor {
        *name = sql::ObjectName::from(vec![sql::Ident::new(bdb), sql::Ident::new(bt)]);
    }
    let _ = alias;
    Ok(Some(Base {
        factor,
        items,
        columns: v.columns.clone(),
        filter: s.selection.clone(),
        view: t,
    }))
}

/// MariaDB refuses an INSERT naming a view column that is an expression as a whole (1471).
fn insertable(e: SqlError, b: &Base) -> SqlError {
    match e {
        SqlError::NonUpdatableColumn(_) => SqlError::NotInsertable {
            table: b.view.clone(),
        },
        e => e,
    }
}

fn alias_of(f: &sql::TableFactor) -> Option<String> {
    match f {
        sql::TableFactor::Table { alias, .. } => alias.as_ref().map(|a| a.name.value.clone()),
        _ => None,
    }
}

/// `stmt` rewritten onto the table under the view it changes; `None` if it changes no
/// updatable view.
pub(crate) fn rewrite_dml(ctx: &Ctx<'_>, stmt: &sql::Statement) -> Result<Option<sql::Statement>> {
    use sql::Statement as S;
    match stmt {
        S::Insert(ins) => {
            let sql::TableObject::TableName(n) = &ins.table else {
                return Ok(None);
            };
            let Some(b) = base(ctx, n)? else {
                return Ok(None);
            };
            let cols: Vec<sql::ObjectName> = if ins.columns.is_empty() {
                (0..b.columns.len())
                    .map(|i| {
                        b.column(&[sql::Ident::new(b.columns[i].clone())], None)
                            .map(|c| sql::ObjectName::from(vec![c]))
                    })
                    .collect::<Result<_>>()
                    .map_err(|e| insertable(e, &b))?
            } else {
                ins.columns
                    .iter()
                    .map(|c| {
                        b.column(
                            &c.0.iter()
                                .filter_map(|p| p.as_ident().cloned())
                                .collect::<Vec<_>>(),
                            None,
                        )
                        .map(|c| sql::ObjectName::from(vec![c]))
                    })
                    .collect::<Result<_>>()
                    .map_err(|e| insertable(e, &b))?
            };
            let sql::TableFactor::Table { name, .. } = &b.factor else {
                return Ok(None);
            };
            let mut out = ins.clone();
            out.table = sql::TableObject::TableName(name.clone());
            out.columns = cols;
            Ok(Some(S::Insert(out)))
        }
        S::Update(u) => {
            if !u.table.joins.is_empty() || u.from.is_some() {
                return Ok(None);
            }
            let sql::TableFactor::Table { name, .. } = &u.table.relation else {
                return Ok(None);
            };
            let Some(b) = base(ctx, name)? else {
                return Ok(None);
            };
            let alias = alias_of(&u.table.relation);
            let mut out = u.clone();
            // The statement's alias goes: every column it qualified is rewritten to the
            // view's expressions, which name the table as the view's FROM does.
            let factor = b.factor.clone();
            out.table.relation = factor;
            for a in &mut out.assignments {
                let sql::AssignmentTarget::ColumnName(c) = &a.target else {
                    return Err(SqlError::Unsupported("a tuple assignment".into()));
                };
                let parts: Vec<sql::Ident> =
                    c.0.iter().filter_map(|p| p.as_ident().cloned()).collect();
                let col = b.column(&parts, alias.as_deref())?;
                a.target = sql::AssignmentTarget::ColumnName(sql::ObjectName::from(vec![col]));
                a.value = b.expr(&a.value, alias.as_deref())?;
            }
            let sel = match &u.selection {
                Some(w) => Some(b.expr(w, alias.as_deref())?),
                None => None,
            };
            out.selection = b.filtered(sel);
            Ok(Some(S::Update(out)))
        }
        S::Delete(d) => {
            if !d.tables.is_empty() || d.using.is_some() {
                return Ok(None);
            }
            let from = match &d.from {
                sql::FromTable::WithFromKeyword(v) | sql::FromTable::WithoutKeyword(v) => v,
            };
            let [twj] = from.as_slice() else {
                return Ok(None);
            };
            if !twj.joins.is_empty() {
                return Ok(None);
            }
            let sql::TableFactor::Table { name, .. } = &twj.relation else {
                return Ok(None);
            };
            let Some(b) = base(ctx, name)? else {
                return Ok(None);
            };
            let alias = alias_of(&twj.relation);
            if alias.is_some() {
                return Err(SqlError::Unsupported("an alias on a view in DELETE".into()));
            }
            let mut out = d.clone();
            let twj2 = sql::TableWithJoins {
                relation: b.factor.clone(),
                joins: Vec::new(),
            };
            out.from = match &d.from {
                sql::FromTable::WithFromKeyword(_) => sql::FromTable::WithFromKeyword(vec![twj2]),
                sql::FromTable::WithoutKeyword(_) => sql::FromTable::WithoutKeyword(vec![twj2]),
            };
            let sel = match &d.selection {
                Some(w) => Some(b.expr(w, None)?),
                None => None,
            };
            out.selection = b.filtered(sel);
            Ok(Some(S::Delete(out)))
        }
        _ => Ok(None),
    }
}
