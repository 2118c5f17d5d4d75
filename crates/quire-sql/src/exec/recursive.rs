//! Running a recursive CTE (`stmt/recursive.rs` plans it): the anchors' rows, then
//! round after round each recursive member over the rows the round before added (the
//! work table), until a round adds nothing or `max_recursive_iterations` rounds have run.
//!
//! Invariants:
//! 1. The work table a round reads holds exactly the rows the previous round added (the
//!    anchors' rows for the first round); the rows of earlier rounds are never read
//!    again (semi-naive evaluation: each round costs the rows it adds, not the result).
//! 2. Every row is converted to the anchors' column types before it is compared, kept or
//!    read by the next round.
//! 3. Under UNION DISTINCT a row is added at most once (its value key is remembered for
//!    the whole run), so a cycle adds nothing new and the iteration ends.
//!
//! Memory: the rows of the last round and, under UNION DISTINCT, one key per distinct
//! row; the rows themselves stream to the reader (a derived table keeps them, as any
//! derived table's).

use std::rc::Rc;

use quire_engine::row::Value;
use quire_engine::table::Table;

use super::{select_rows, value_key, Txn};
use crate::error::{Result, SqlError};
use crate::expr::{Env, Level, SessionFn, VarKind};
use crate::stmt::recursive::RecursivePlan;

/// MariaDB 10.11's default `max_recursive_iterations`, when the session cannot say.
pub const MAX_RECURSIVE_ITERATIONS_DEFAULT: u64 = 1000;

/// The statement's environment, with one more work table.
struct WorkEnv<'e> {
    parent: &'e dyn Env,
    id: usize,
    rows: Rc<Vec<Vec<Value>>>,
}

impl Env for WorkEnv<'_> {
    fn set_last_insert_id(&self, v: u64) -> Result<()> {
        self.parent.set_last_insert_id(v)
    }
    fn param(&self, i: usize) -> Result<Value> {
        self.parent.param(i)
    }
    fn session(&self, f: &SessionFn) -> Result<Value> {
        self.parent.session(f)
    }
    fn time_zone(&self) -> crate::tz::Zone {
        self.parent.time_zone()
    }
    fn set_user_var(&self, name: &str, v: Value, kind: VarKind) -> Result<()> {
        self.parent.set_user_var(name, v, kind)
    }
    fn interrupted(&self) -> bool {
        self.parent.interrupted()
    }
    fn warn(&self, level: Level, code: u16, message: String) -> Result<()> {
        self.parent.warn(level, code, message)
    }
    fn virtual_rows(&self, t: crate::infoschema::InfoTable) -> Result<Vec<Vec<Value>>> {
        self.parent.virtual_rows(t)
    }
    fn outer(&self, k: usize) -> Result<Value> {
        self.parent.outer(k)
    }
    fn subquery(
        &self,
        q: &crate::subquery::Subquery,
        outer: Vec<Value>,
        need: usize,
    ) -> Result<Rc<crate::subquery::Materialized>> {
        self.parent.subquery(q, outer, need)
    }
    fn work_rows(&self, id: usize) -> Result<Rc<Vec<Vec<Value>>>> {
        if id == self.id {
            Ok(self.rows.clone())
        } else {
            self.parent.work_rows(id)
        }
    }
}

/// The statement's environment, its warnings made errors (strict mode: a value that does
/// not fit the CTE's column fails the statement, as MariaDB's write into its temporary
/// table does).
struct Strict<'e> {
    parent: &'e dyn Env,
}

impl Env for Strict<'_> {
    fn param(&self, i: usize) -> Result<Value> {
        self.parent.param(i)
    }
    fn session(&self, f: &SessionFn) -> Result<Value> {
        self.parent.session(f)
    }
    fn time_zone(&self) -> crate::tz::Zone {
        self.parent.time_zone()
    }
    fn warn(&self, level: Level, code: u16, message: String) -> Result<()> {
        match level {
            Level::Warning | Level::Error => Err(SqlError::Raised { code, message }),
            Level::Note => self.parent.warn(level, code, message),
        }
    }
}

/// Whether `sql_mode` is strict for the statement.
fn strict(env: &dyn Env) -> bool {
    matches!(
        env.session(&SessionFn::SysVar {
            name: "sql_mode".into(),
            global: false,
        }),
        Ok(Value::Str(m)) if m.contains("STRICT_")
    )
}

fn max_iterations(env: &dyn Env) -> u64 {
    match env.session(&SessionFn::SysVar {
        name: "max_recursive_iterations".into(),
        global: false,
    }) {
        Ok(Value::Int(i)) if i >= 0 => i as u64,
        Ok(Value::UInt(u)) => u,
        _ => MAX_RECURSIVE_ITERATIONS_DEFAULT,
    }
}

/// Runs recursive CTE `r` over `tables` (its anchors' then its members' tables, as
/// `Source::tables` lists them), giving each row to `each` as it is added.
pub(crate) fn run<'d>(
    r: &RecursivePlan,
    tables: &[Table<'d>],
    txn: &mut Txn<'_, 'd>,
    env: &dyn Env,
    each: &mut dyn FnMut(Vec<Value>) -> Result<bool>,
) -> Result<()> {
    let colls: Vec<_> = r.columns.iter().map(|c| c.collation).collect();
    let mut seen: quire_engine::hash::Set<Vec<u8>> = Default::default();
    let strict_env = Strict { parent: env };
    let is_strict = strict(env);
    let fit_env: &dyn Env = if is_strict { &strict_env } else { env };
    let mut added_rows = 0u64;
    // Converts a member's row to the result's columns as MariaDB writes it into its
    // temporary table (invariant 2: 1406 / 1366 in strict mode, else cut with 1265) and,
    // under UNION DISTINCT, drops a row added before (invariant 3).
    let mut admit = |row: Vec<Value>| -> Result<Option<Vec<Value>>> {
        let at = crate::types::Target {
            db: "",
            table: "(temporary)",
            row: added_rows + 1,
            strict: is_strict,
            cut_as_truncation: false,
        };
        let row: Vec<Value> = row
            .into_iter()
            .zip(&r.columns)
            .map(|(v, c)| crate::types::coerce(v, c, &at, fit_env))
            .collect::<Result<_>>()?;
        if r.distinct && !seen.insert(value_key(&row, &colls)) {
            return Ok(None);
        }
        added_rows += 1;
        Ok(Some(row))
    };
    let mut at = 0;
    let mut slice = |p: &crate::exec::SelectPlan| {
        let n = p.source.tables().len();
        let mine = tables.get(at..at + n).unwrap_or(&[]);
        at += n;
        mine
    };
    let anchor_tables: Vec<_> = r.anchors.iter().map(&mut slice).collect();
    let step_tables: Vec<_> = r.steps.iter().map(&mut slice).collect();
    let mut work: Vec<Vec<Value>> = Vec::new();
    for (a, t) in r.anchors.iter().zip(&anchor_tables) {
        for row in select_rows(a, t, txn, env)? {
            if let Some(row) = admit(row)? {
                if !each(row.clone())? {
                    return Ok(());
                }
                work.push(row);
            }
        }
    }
    let max = max_iterations(env);
    let mut rounds = 0u64;
    while !work.is_empty() {
        if env.interrupted() {
            return Err(SqlError::Interrupted);
        }
        if rounds >= max {
            // MariaDB stops there with a warning, not an error.
            env.warn(
                Level::Warning,
                1931,
                format!(
                    "Query execution was interrupted. The query exceeded \
                     max_recursive_iterations = {max}. The query result may be incomplete"
                ),
            )?;
            break;
        }
        rounds += 1;
        let wenv = WorkEnv {
            parent: env,
            id: r.work,
            rows: Rc::new(std::mem::take(&mut work)),
        };
        let mut added = Vec::new();
        for (m, t) in r.steps.iter().zip(&step_tables) {
            for row in select_rows(m, t, txn, &wenv)? {
                if let Some(row) = admit(row)? {
                    if !each(row.clone())? {
                        return Ok(());
                    }
                    added.push(row);
                }
            }
        }
        work = added;
    }
    Ok(())
}
