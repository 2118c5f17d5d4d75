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

impl Session<'_> {
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
                    let (v, kind) = self.eval_expr_text(value)?;
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
