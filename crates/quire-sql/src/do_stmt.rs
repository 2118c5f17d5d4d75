//! `DO expr[, expr …]`: each expression evaluated for its effects (an assignment, SLEEP,
//! a warning) and its value discarded, as MariaDB's `mysql_do`.
//!
//! 1. Every expression is bound before any runs: an unknown name (1054), a row or a
//!    subquery of several columns (1241) or an aggregate (1111) fails the statement.
//!    The plan (`Planned::Do`) is one `SELECT expr` with no FROM per expression, so DO
//!    is kept, prepared (with `?` parameters) and planned again after DDL as any
//!    statement is.
//! 2. The expressions run in order, each row going nowhere. An error while one runs
//!    (1242, 1690, …) does not stop the others: it becomes a condition of level Error
//!    (SHOW WARNINGS lists it, in the order raised), and DO ends with OK, as MariaDB's
//!    "DO always is OK". KILL, a lost client, lock waits and the engine's own failures
//!    still fail it. The condition's code comes from the server's table of codes
//!    (`Instance::set_error_codes`); without one (quire-sql embedded alone) the error
//!    fails the statement.

use std::sync::Arc;

use quire_engine::row::Value;
use sqlparser::ast as sql;

use crate::bind::Conn;
use crate::diag::Level;
use crate::error::{Result, SqlError};
use crate::exec::SelectPlan;
use crate::meta::{ColumnMeta, RowSink, SinkError};
use crate::session::{Outcome, Session};
use crate::stmt::Planned;

/// Takes a result and keeps nothing.
struct Discard;

impl RowSink for Discard {
    fn columns(&mut self, _: &[ColumnMeta]) -> std::result::Result<(), SinkError> {
        Ok(())
    }
    fn row(&mut self, _: &[Value]) -> std::result::Result<(), SinkError> {
        Ok(())
    }
}

/// Whether DO keeps running after `e` (invariant 2): an error of the expression's own
/// evaluation, not the statement being stopped or the storage failing.
fn swallowed(e: &SqlError) -> bool {
    !matches!(
        e,
        SqlError::Interrupted
            | SqlError::Sink(_)
            | SqlError::Engine(_)
            | SqlError::LockWaitTimeout
            | SqlError::Deadlock
    )
}

/// Whether `text` (comments skipped) is a DO statement.
pub(crate) fn is_do(text: &str) -> bool {
    let t = crate::dispatch::skip_leading_comments(text);
    t.get(..2).is_some_and(|w| w.eq_ignore_ascii_case("do"))
        && t[2..]
            .chars()
            .next()
            .is_none_or(|c| c.is_whitespace() || c == '(')
}

impl Session<'_> {
    /// `DO …` from the text (the keyword dispatch saw DO).
    pub(crate) fn do_statement(&mut self, text: &str, sink: &mut dyn RowSink) -> Result<Outcome> {
        let conn = self.sv.conn();
        let gen = self
            .inst
            .generation
            .load(std::sync::atomic::Ordering::Acquire);
        let (planned, _) = self.plan_do(text, conn, &[])?;
        self.run_planned(&Arc::new(planned), text, gen, conn, &[], sink)
    }

    /// Plans DO `text` (invariant 1), and says how many `?` it has.
    pub(crate) fn plan_do(
        &self,
        text: &str,
        conn: Conn,
        hidden: &[(u64, String)],
    ) -> Result<(Planned, usize)> {
        let t = crate::dispatch::skip_leading_comments(text);
        let rest = t.get(2..).unwrap_or("");
        let (items, params) = crate::parse::parse_expr_list_in(rest, conn.mode)?;
        let (mut shell, _) = crate::parse::parse_one("SELECT 1")?;
        let mut plans: Vec<SelectPlan> = Vec::with_capacity(items.len());
        for e in items {
            if let sql::Statement::Query(q) = &mut shell {
                if let sql::SetExpr::Select(s) = q.body.as_mut() {
                    s.projection = vec![sql::SelectItem::UnnamedExpr(e)];
                }
            }
            match self.plan_hiding(&shell, None, &params, hidden, conn)? {
                Some(Planned::Select(s)) if s.aggs.is_empty() => plans.push(s),
                Some(Planned::Select(_)) => return Err(SqlError::InvalidGroupFunction),
                _ => return Err(SqlError::Unsupported("DO of this expression".into())),
            }
        }
        Ok((Planned::Do(plans), params.len()))
    }

    /// Runs a planned DO (invariant 2).
    pub(crate) fn run_do(&mut self, items: &[SelectPlan], params: &[Value]) -> Result<Outcome> {
        let found_rows = self.sv.found_rows;
        // DO is no SELECT to sql_select_limit: its expressions are evaluated even under
        // `sql_select_limit = 0` (as MariaDB), so the limit is off while they run.
        let select_limit = std::mem::replace(&mut self.sv.select_limit, u64::MAX);
        let mut failed = None;
        for s in items {
            let one = Planned::Select(s.clone());
            if let Err(e) = self.execute_plan(&one, params, &mut Discard) {
                match self.inst.error_code(&e) {
                    Some(code) if swallowed(&e) => self.warn_now(Level::Error, code, e.to_string()),
                    _ => {
                        failed = Some(e);
                        break;
                    }
                }
            }
        }
        self.sv.select_limit = select_limit;
        if let Some(e) = failed {
            return Err(e);
        }
        // DO returns no rows: FOUND_ROWS() is the statement's before it.
        self.sv.found_rows = found_rows;
        Ok(Outcome::ok(0))
    }
}
