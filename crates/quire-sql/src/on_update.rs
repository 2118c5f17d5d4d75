//! `ON UPDATE current_timestamp()` (docs/sql.md, "Column attributes"): what an UPDATE does
//! to the columns that carry it, as MariaDB's `TABLE::evaluate_update_default_function`.
//!
//! Invariants:
//! 1. A column with the attribute changes only when the statement changed the row through
//!    its other columns: an UPDATE that leaves the row as it was leaves the column too
//!    (and so counts no changed row).
//! 2. A column the statement assigns keeps the assigned value, even the value it had.
//!
//! Every row-updating path calls [`apply`] after its assignments and before it compares
//! old and new: single-table UPDATE, multi-table UPDATE, and INSERT … ON DUPLICATE KEY
//! UPDATE for the row it updates.

use quire_engine::row::{Column, ColumnType, Value};

use crate::error::Result;
use crate::expr::Env;
use crate::types;

/// Whether any column of `columns` has the attribute (callers skip [`apply`] otherwise).
pub(crate) fn any(columns: &[Column]) -> bool {
    columns.iter().any(|c| c.on_update)
}

/// Sets each column with the attribute that `assigned` does not name to the statement's
/// time at the column's precision, if `new` differs from `old` (invariants 1 and 2).
pub(crate) fn apply(
    columns: &[Column],
    assigned: impl Fn(usize) -> bool,
    old: &[Value],
    new: &mut [Value],
    at: &types::Target<'_>,
    env: &dyn Env,
) -> Result<()> {
    if old == new {
        return Ok(());
    }
    for (i, c) in columns.iter().enumerate() {
        let fsp = match c.ty {
            ColumnType::Timestamp { fsp } | ColumnType::DateTime { fsp } if c.on_update => fsp,
            _ => continue,
        };
        if assigned(i) {
            continue;
        }
        let now =
            crate::func::datetime::truncate_fsp(crate::func::datetime::statement_now(env)?, fsp);
        if let Some(slot) = new.get_mut(i) {
            *slot = types::coerce(Value::DateTime(now), c, at, env)?;
        }
    }
    Ok(())
}
