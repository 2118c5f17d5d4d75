//! # INSERT … ON DUPLICATE KEY UPDATE, one row at a time
//!
//! Each row of the statement is inserted, or, when it collides with a live row in a unique
//! index, that row is updated by the statement's assignments (docs/sql.md, "INSERT … ON
//! DUPLICATE KEY UPDATE"):
//!
//! ```text
//!   row → coerce → AUTO_INCREMENT from the statement's batch → engine:
//!     insert_or_lock_duplicate ──Inserted──────────────────────────→ counts 1
//!                              └─Duplicate(handle, old, X-locked)
//!                                   assignments over old ++ row → coerce
//!                                   ON UPDATE columns (`on_update.rs`)
//!                                   new == old ────────────────────→ counts 0 (1 with
//!                                   update_row(handle, new) ───────→ counts 2  FOUND_ROWS)
//! ```
//!
//! Invariants:
//! 1. The row an assignment list updates is X-locked by the engine before it is read
//!    (`Transaction::insert_or_lock_duplicate`) and stays locked until the transaction
//!    ends: no other transaction changes it between the read and the update, so
//!    concurrent upserts of one key never lose an update.
//! 2. The row updated is the one InnoDB would update: the first conflict in the primary
//!    key, else in the unique indexes in index order.
//! 3. AUTO_INCREMENT values come from a batch reserved for the statement's rows
//!    ([`AutoIncBatch`]): a row that turns out to be a duplicate gives its value back to
//!    the next row, and the table's counter has moved past the whole batch, as InnoDB's
//!    `innodb_autoinc_lock_mode=1` does.
//! 4. Everything runs inside the statement's scope: an error rolls back every row the
//!    statement inserted or updated (`Session::in_statement_with`).

use quire_engine::row::{ColumnType, Value};
use quire_engine::table::{DbError, RowHandle, Table, Transaction};

use crate::diag::Level;
use crate::error::{Result, SqlError};
use crate::exec;
use crate::expr::{Env, Row};
use crate::stmt::{InsertPlan, OnDuplicate};
use crate::types;

/// AUTO_INCREMENT values reserved for one statement (invariant 3): `next..end` are still
/// free.
#[derive(Debug, Default)]
pub(crate) struct AutoIncBatch {
    next: u64,
    end: u64,
    /// Some values were reserved already.
    reserved: bool,
}

impl AutoIncBatch {
    /// The next value. The first reservation is one value per row of the statement
    /// (`rows`, as MariaDB's `estimation_rows_to_insert`); one made after the batch ran out
    /// (explicit values went past it) covers the rows still to come (`rows_left`).
    pub(crate) fn take(
        &mut self,
        table: &Table<'_>,
        rows: u64,
        rows_left: u64,
    ) -> Result<Option<u64>> {
        if self.next >= self.end {
            let n = if self.reserved { rows_left } else { rows }.max(1);
            self.reserved = true;
            let Some(first) = table.reserve_auto_increment(n)? else {
                return Ok(None);
            };
            self.next = first;
            self.end = first.saturating_add(n);
        }
        let v = self.next;
        self.next += 1;
        Ok(Some(v))
    }

    /// `v`, taken last, was not used (its row was a duplicate): the next row takes it.
    pub(crate) fn give_back(&mut self, v: u64) {
        if v.checked_add(1) == Some(self.next) {
            self.next = v;
        }
    }

    /// A row gave the column `v` itself: later generated values follow it (MariaDB's
    /// `adjust_next_insert_id_after_explicit_value`).
    pub(crate) fn explicit(&mut self, v: u64) {
        if v >= self.next {
            self.next = v.saturating_add(1);
        }
    }
}

/// `v` as the AUTO_INCREMENT column `c` of `ip`'s table holds it.
pub(crate) fn auto_value(ip: &InsertPlan, c: usize, v: u64) -> Value {
    match ip.table.def.columns.get(c).map(|col| &col.ty) {
        Some(ColumnType::Int { unsigned: true, .. }) => Value::UInt(v),
        _ => Value::Int(i64::try_from(v).unwrap_or(i64::MAX)),
    }
}

/// What one duplicate row's update did.
pub(crate) enum Updated {
    /// The row changed; here as written.
    Changed(Vec<Value>),
    /// The assignments left it as it was: nothing was written (RETURNING still gives it).
    Unchanged(Vec<Value>),
    /// Under IGNORE, the update collided in a unique index: a warning, nothing written.
    Skipped,
}

/// Both rows are in the session's zone (`tz.rs`); the row is written with UTC TIMESTAMPs.
/// Applies `od`'s assignments to the X-locked row `old` (named by `handle`) that row
/// `new_row` (the row the statement would have inserted, coerced, AUTO_INCREMENT filled)
/// collided with, and writes the result. `n` is the statement's row number (1-based) for
/// messages; `null_is_error` makes NULL into a NOT NULL column 1048 whatever the sql_mode
/// (a one-row INSERT … VALUES without IGNORE, as for the insert itself).
#[allow(clippy::too_many_arguments)]
pub(crate) fn update_duplicate<'d>(
    ip: &InsertPlan,
    od: &OnDuplicate,
    table: &Table<'d>,
    tx: &mut Transaction<'d>,
    handle: &RowHandle,
    old: Vec<Value>,
    new_row: &[Value],
    source: &[Value],
    n: u64,
    env: &dyn Env,
    strict: bool,
    null_is_error: bool,
) -> Result<Updated> {
    let width = ip.table.def.columns.len();
    // The existing row as updated so far, then the row VALUES(c) reads, then the columns
    // of an INSERT … SELECT's tables the assignments read (`OnDuplicate::source_at`).
    let mut both = old.clone();
    both.extend(new_row.iter().cloned());
    both.extend(source.iter().cloned());
    for (c, e) in &od.sets {
        // Left to right, later assignments seeing earlier ones, as UPDATE.
        let v = e.eval(
            &Row {
                values: &both,
                aggs: &[],
            },
            env,
        )?;
        let col = &ip.table.def.columns[*c];
        let at = types::Target {
            db: &ip.table.db,
            table: &ip.table.name,
            row: n,
            strict,
            cut_as_truncation: false,
        };
        both[*c] = if matches!(v, Value::Null) && !col.nullable {
            if null_is_error {
                return Err(SqlError::NullNotAllowed(col.name.clone()));
            }
            // 1048, and the column's implicit default outside strict mode.
            let v = exec::null_into_not_null(col, env)?;
            types::check_json(&v, col, &at)?;
            v
        } else {
            types::coerce(v, col, &at, env)?
        };
    }
    both.truncate(width);
    // ON UPDATE current_timestamp() columns the assignments leave alone take the
    // statement's time if the row changed, as in an UPDATE (`on_update.rs`).
    if crate::on_update::any(&ip.table.def.columns) {
        crate::on_update::apply(
            &ip.table.def.columns,
            |c| od.sets.iter().any(|(x, _)| *x == c),
            &old,
            &mut both,
            &types::Target {
                db: &ip.table.db,
                table: &ip.table.name,
                row: n,
                strict,
                cut_as_truncation: false,
            },
            env,
        )?;
    }
    if both == old {
        return Ok(Updated::Unchanged(old));
    }
    // The updated row's CHECK constraints (check.rs); under IGNORE a warning, and the
    // row is left as it was.
    let (db, name) = ip.table.shown();
    let checks = crate::check::bind(&ip.table.def, name)?;
    if !crate::check::enforce(&checks, &both, env, ip.ignore, db, name)? {
        return Ok(Updated::Skipped);
    }
    let stored = crate::tz::RowZone::new(&ip.table.def.columns, env.time_zone()).stored(&both);
    match tx.update_row(table, handle, stored) {
        Ok(_) => Ok(Updated::Changed(both)),
        Err(DbError::DuplicateKey { index, entry }) if ip.ignore => {
            let e = SqlError::DuplicateKey {
                value: entry,
                key: index,
            };
            env.warn(Level::Warning, 1062, e.to_string())?;
            Ok(Updated::Skipped)
        }
        Err(e) => Err(e.into()),
    }
}
