//! # Hidden row ids and row handles
//!
//! docs/catalog.md, "Tables without a primary key". A table whose `TableSpec` has no primary
//! key is clustered on a hidden DB_ROW_ID (BIGINT UNSIGNED, 8 bytes big-endian in the key).
//!
//! Invariants:
//! 1. Within a run a row id is handed out at most once: the counter only moves up
//!    (`fetch_add`), TRUNCATE does not reset it.
//! 2. At open the counter starts above the largest row id in the clustered index, so no
//!    durable row's id is handed out again.
//! 3. A [`RowHandle`] is the row's clustered key exactly as the clustered index stores it.

use std::ops::Bound;
use std::sync::atomic::Ordering;

use super::{DbError, Result, TableState};
use crate::btree::{BTree, Direction};
use crate::engine::Engine;
use crate::row::{RowError, RowId, RowLayout, Value};

/// Names one row of one table, for [`Table::get_row`](super::Table::get_row),
/// [`Table::update_row`](super::Table::update_row) and
/// [`Table::delete_row`](super::Table::delete_row): the row's clustered key (its encoded
/// primary key, or its DB_ROW_ID). Scans hand them out
/// ([`Rows::with_handles`](super::Rows::with_handles),
/// [`IndexRows::with_handles`](super::IndexRows::with_handles)). Valid for the table it came
/// from until the row is deleted; ordered like the clustered index.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RowHandle {
    /// The table's id: a handle used on another table is refused, not misapplied.
    table: u64,
    key: Vec<u8>,
    row_id: Option<RowId>,
}

impl RowHandle {
    pub(super) fn new(t: &TableState, key: Vec<u8>) -> Result<RowHandle> {
        let row_id = row_id_of_key(&t.layout, &key)?;
        Ok(RowHandle {
            table: t.def.id,
            key,
            row_id,
        })
    }

    /// The clustered key, if the handle is one of table `t`'s.
    pub(super) fn key_in(&self, t: &TableState) -> Result<&[u8]> {
        if self.table != t.def.id {
            return Err(DbError::ForeignHandle(t.def.name.clone()));
        }
        Ok(&self.key)
    }

    /// The hidden DB_ROW_ID, for a table without a primary key.
    pub fn row_id(&self) -> Option<RowId> {
        self.row_id
    }
}

/// The row id a clustered key holds (`None` for a table with a primary key).
pub(super) fn row_id_of_key(layout: &RowLayout, key: &[u8]) -> Result<Option<RowId>> {
    if !layout.has_row_id() {
        return Ok(None);
    }
    match layout.key_layout().decode(key)?.as_slice() {
        [Value::UInt(id)] => Ok(Some(RowId(*id))),
        _ => Err(RowError::Corrupt("bad DB_ROW_ID key").into()),
    }
}

/// The id for a new row of `t` (`None` for a table with a primary key). An insert that
/// fails afterwards burns it (invariant 1).
pub(super) fn next_row_id(t: &TableState) -> Option<RowId> {
    t.def
        .primary_key
        .is_empty()
        .then(|| RowId(t.row_id.fetch_add(1, Ordering::Relaxed)))
}

/// Where the row id counter of a table starts at open: one past the largest row id in the
/// clustered index, read with one backward cursor step (invariant 2), or 1 for an empty
/// table. Recomputed from durable rows, so it needs no logging, as AUTO_INCREMENT.
pub(super) fn first_row_id(engine: &Engine, clustered: &BTree, layout: &RowLayout) -> Result<u64> {
    if !layout.has_row_id() {
        return Ok(1);
    }
    let mut cur = clustered.scan(
        engine,
        Bound::Unbounded,
        Bound::Unbounded,
        Direction::Backward,
    );
    match cur.next() {
        None => Ok(1),
        Some(e) => match row_id_of_key(layout, &e?.key)? {
            Some(RowId(id)) => Ok(id.saturating_add(1)),
            None => Ok(1),
        },
    }
}
