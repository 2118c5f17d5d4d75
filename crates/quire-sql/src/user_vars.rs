//! User variables (`@name`): `SET @x = e`, `SET @x := e`, lists mixing them with system
//! variables (`SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0`, as mariadb-dump
//! writes), and the evaluation of a lone expression text that `SET` and `EXECUTE … USING`
//! share. Reading `@x` and `@x := e` inside a statement are expressions (`expr.rs`:
//! `SessionFn::UserVar`, `Expr::Assign`).
//!
//! Invariants:
//! 1. A variable lives in its session only (`SessVars::user_vars`) and ends with it, or at
//!    COM_RESET_CONNECTION / COM_CHANGE_USER; an unset one reads as NULL.
//! 2. Names are case-insensitive: they are kept lower-cased.
//! 3. A variable keeps a value and a kind ([`VarKind`]): integer (signed or not), DECIMAL,
//!    DOUBLE, string with its collation, or binary string; a NULL keeps the kind of the
//!    expression that gave it, as MariaDB's `user_var_entry` does.
//! 4. A SET list evaluates every user-variable value before it assigns any, and the system
//!    variables of the list are set before the user variables are (MariaDB checks every
//!    item, evaluating its value, before it updates any): `SET @a = 1, @b = @a + 1` leaves
//!    `@b` NULL when `@a` was unset, as in MariaDB.

use quire_engine::row::Value;

use crate::bind::Binder;
use crate::error::{Result, SqlError};
use crate::expr::{Row, VarKind};
use crate::meta::RowSink;
use crate::session::{Outcome, Session};

/// A `SET` item that assigns a user variable: its name (lower-cased) and the text of its
/// value. `None`: another kind of item.
pub(crate) fn user_item(item: &str) -> Option<(String, &str)> {
    let rest = item.trim_start().strip_prefix('@')?;
    if rest.starts_with('@') {
        return None;
    }
    let (name, after) = match rest.chars().next()? {
        q @ ('`' | '\'' | '"') => {
            let end = rest[1..].find(q)? + 1;
            (rest[1..end].to_string(), &rest[end + 1..])
        }
        _ => {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '$' | '.')))
                .unwrap_or(rest.len());
            (rest[..end].to_string(), &rest[end..])
        }
    };
    if name.is_empty() {
        return None;
    }
    let after = after.trim_start();
    let value = after
        .strip_prefix(":=")
        .or_else(|| after.strip_prefix('='))?;
    Some((name.to_lowercase(), value))
}

/// Takes the `INTO @a, @b` of a SELECT (of the last SELECT of a UNION) out of `stmt`: the
/// variables' names, lower-cased. `INTO OUTFILE` / `DUMPFILE` (a file on the server) is not
/// supported yet.
pub(crate) fn take_select_into(
    stmt: &mut sqlparser::ast::Statement,
) -> Result<Option<Vec<String>>> {
    use sqlparser::ast::{SetExpr, Statement};
    let Statement::Query(q) = stmt else {
        return Ok(None);
    };
    let mut body = q.body.as_mut();
    loop {
        match body {
            SetExpr::SetOperation { right, .. } => body = right.as_mut(),
            SetExpr::Query(inner) => body = inner.body.as_mut(),
            _ => break,
        }
    }
    let SetExpr::Select(s) = body else {
        return Ok(None);
    };
    let Some(into) = s.into.take() else {
        return Ok(None);
    };
    into.targets
        .iter()
        .map(|t| {
            let text = t.to_string();
            match text.strip_prefix('@') {
                Some(name) if !name.is_empty() && !name.starts_with('@') => {
                    Ok(name.trim_matches('`').to_lowercase())
                }
                _ => Err(SqlError::Unsupported(format!("SELECT … INTO {text}"))),
            }
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

/// The kind a user variable assigned from a result column of `col`'s type keeps.
fn column_kind(col: &crate::meta::ColumnMeta) -> VarKind {
    use crate::meta::{charset, flags, FieldType};
    match col.ty {
        t if t.is_integer() || t == FieldType::Bit => VarKind::Int {
            unsigned: col.flags & flags::UNSIGNED != 0,
        },
        FieldType::NewDecimal => VarKind::Decimal,
        FieldType::Float | FieldType::Double => VarKind::Double,
        FieldType::String | FieldType::VarString | FieldType::Blob | FieldType::LongBlob
            if col.charset == charset::BINARY =>
        {
            VarKind::Binary
        }
        _ => VarKind::Str(crate::bind::LITERAL_COLLATION),
    }
}

impl Session<'_> {
    /// The value of `value` (an expression with subqueries) as `SELECT value` gives it, with
    /// the kind of its result column.
    fn eval_by_select(&mut self, value: &str) -> Result<(Value, VarKind)> {
        let mut got = crate::meta::CollectSink::default();
        self.query_text(&format!("SELECT {value}"), &mut got)?;
        let v = got
            .rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .unwrap_or(Value::Null);
        let kind = got.columns.first().map_or(VarKind::Binary, column_kind);
        Ok(VarKind::store(v, kind))
    }

    /// `SELECT … INTO @a, @b`: runs the SELECT and assigns its one row, as MariaDB: 1222
    /// when the counts differ, 1172 for more than one row, warning 1329 and nothing
    /// assigned for none.
    pub(crate) fn select_into(
        &mut self,
        planned: Option<crate::stmt::Planned>,
        vars: &[String],
        text: &str,
        gen: u64,
        conn: crate::bind::Conn,
    ) -> Result<Outcome> {
        let Some(planned @ crate::stmt::Planned::Select(_)) = planned else {
            return Err(SqlError::Unsupported("SELECT … INTO".into()));
        };
        let mut got = crate::meta::CollectSink::default();
        self.run_planned(
            &std::sync::Arc::new(planned),
            text,
            gen,
            conn,
            &[],
            &mut got,
        )?;
        if got.columns.len() != vars.len() {
            return Err(SqlError::DifferentColumnCount);
        }
        let row = match got.rows.len() {
            0 => {
                self.sv.raise(
                    self.inst,
                    crate::diag::Level::Warning,
                    1329,
                    "No data - zero rows fetched, selected, or processed".into(),
                );
                return Ok(Outcome::ok(0));
            }
            1 => got.rows.remove(0),
            _ => return Err(SqlError::TooManyRows),
        };
        let mut uv = self.sv.user_vars.borrow_mut();
        for ((name, v), col) in vars.iter().zip(row).zip(&got.columns) {
            let (v, kind) = VarKind::store(v, column_kind(col));
            uv.insert(name.clone(), (v, kind));
        }
        Ok(Outcome::ok(1))
    }

    /// The value of an expression given as text (no table in scope), with the kind a user
    /// variable assigned from it keeps.
    pub(crate) fn eval_expr_text(&self, text: &str) -> Result<(Value, VarKind)> {
        let parsed = crate::parse::parse_expr_in(text.trim(), self.sv.mode)?;
        self.eval_expr(&parsed)
    }

    /// [`Session::eval_expr_text`] of a parsed expression.
    pub(crate) fn eval_expr(&self, parsed: &sqlparser::ast::Expr) -> Result<(Value, VarKind)> {
        let conn = self.sv.conn();
        let e = crate::ddl::lone_select_expr(parsed).unwrap_or(parsed);
        let bound = crate::bind::with_user_vars(self.user_var_kinds(), || {
            Binder {
                sub: None,
                scope: None,
                params: &Default::default(),
                aggs: None,
                context: "field list",
                conn,
            }
            .bind(e)
        })?;
        let declared = crate::bind::declared_kind(&bound, &[], conn.coll);
        let env = crate::run::ExecEnv::new(&[], &self.sv, self.inst, self.in_transaction(), false);
        let v = bound.eval(
            &Row {
                values: &[],
                aggs: &[],
            },
            &env,
        )?;
        Ok(VarKind::store(v, declared))
    }

    /// A SET list with at least one user variable (invariant 4): the user variables'
    /// values first, then the other items as one SET, then the assignments.
    pub(crate) fn set_with_user_vars(
        &mut self,
        items: &[&str],
        sink: &mut dyn RowSink,
    ) -> Result<Outcome> {
        let mut pending = Vec::new();
        let mut others = Vec::new();
        for item in items {
            match user_item(item) {
                Some((name, value)) => {
                    if value.trim().is_empty() {
                        return Err(SqlError::Parse {
                            near: String::new(),
                            line: 1,
                        });
                    }
                    let (v, kind) = match self.eval_expr_text(value) {
                        // `SET @x = (SELECT …)`: the lone-expression path has no tables;
                        // the value comes from `SELECT <value>` run as a statement.
                        Err(SqlError::Unsupported(m)) if m.contains("subquery") => {
                            self.eval_by_select(value)?
                        }
                        r => r?,
                    };
                    pending.push((name, v, kind));
                }
                None => others.push(*item),
            }
        }
        if !others.is_empty() {
            let text = format!("SET {}", others.join(", "));
            if self.set_list(&text, sink)?.is_none() {
                let (stmt, _) = crate::parse::parse_one_in(&text, self.sv.mode)?;
                self.utility(&stmt, sink)?;
            }
        }
        let mut vars = self.sv.user_vars.borrow_mut();
        for (name, v, kind) in pending {
            vars.insert(name, (v, kind));
        }
        Ok(Outcome::ok(0))
    }

    /// COM_RESET_CONNECTION and COM_CHANGE_USER: the session's user variables are gone.
    pub fn clear_user_vars(&mut self) {
        self.sv.user_vars.get_mut().clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_items_name_user_variables_in_every_quoting() {
        assert_eq!(user_item("@a = 1"), Some(("a".into(), " 1")));
        assert_eq!(user_item(" @OLD_X:=@@x"), Some(("old_x".into(), "@@x")));
        assert_eq!(user_item("@`q q` = 2"), Some(("q q".into(), " 2")));
        assert_eq!(user_item("@'s'=3"), Some(("s".into(), "3")));
        assert_eq!(user_item("@@x = 1"), None);
        assert_eq!(user_item("x = @a"), None);
        assert_eq!(user_item("@ = 1"), None);
    }
}
