//! `DO expr[, expr …]`: each expression evaluated for its effects (an assignment, SLEEP,
//! a warning) and its value discarded, as MariaDB's `mysql_do`.
//!
//! 1. Every expression is bound before any runs: an unknown name (1054), a row or a
//!    subquery of several columns (1241) or an aggregate (1111) fails the statement.
//! 2. The expressions run in order, each as a `SELECT expr` with no FROM whose row goes
//!    nowhere. An error while one runs (1242, 1690, …) does not stop the others: it
//!    becomes a condition of level Error (SHOW WARNINGS lists it, in the order raised),
//!    and DO ends with OK, as MariaDB's "DO always is OK". KILL, a lost client and the
//!    engine's own failures still fail it.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use quire_engine::row::Value;
use sqlparser::ast as sql;

use crate::diag::Level;
use crate::error::{Result, SqlError};
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

impl Session<'_> {
    /// `DO …` (`text` starts with the keyword).
    pub(crate) fn do_statement(&mut self, text: &str) -> Result<Outcome> {
        let rest = text.get(2..).unwrap_or("");
        let conn = self.sv.conn();
        let items = crate::parse::parse_expr_list_in(rest, conn.mode)?;
        // Invariant 1: bind them all first.
        let (mut shell, _) = crate::parse::parse_one("SELECT 1")?;
        let mut plans = Vec::with_capacity(items.len());
        for e in items {
            if let sql::Statement::Query(q) = &mut shell {
                if let sql::SetExpr::Select(s) = q.body.as_mut() {
                    s.projection = vec![sql::SelectItem::UnnamedExpr(e)];
                }
            }
            let planned = self
                .plan(&shell, None, &HashMap::new(), conn)?
                .ok_or_else(|| SqlError::Unsupported("DO of this expression".into()))?;
            if let Planned::Select(s) = &planned {
                if !s.aggs.is_empty() {
                    return Err(SqlError::InvalidGroupFunction);
                }
            }
            plans.push((shell.to_string(), Arc::new(planned)));
        }
        let gen = self.inst.generation.load(Ordering::Acquire);
        for (select, p) in plans {
            if let Err(e) = self.run_planned(&p, &select, gen, conn, &[], &mut Discard) {
                match self.inst.error_code(&e) {
                    Some(code) if swallowed(&e) => self.warn_now(Level::Error, code, e.to_string()),
                    _ => return Err(e),
                }
            }
        }
        Ok(Outcome::ok(0))
    }
}
