//! # Range scans: key bounds, and secondary-index scans returning rows
//!
//! docs/catalog.md, "Secondary range scans". A bound is a *prefix* of a key's columns (or
//! the whole key). Because every field encoding is prefix-free (docs/row-format.md), the
//! keys whose first `k` columns equal `v` are exactly the keys starting with `enc(v)`, and
//! they sort after `enc(v)` and before its *successor* (the shortest byte string greater
//! than every string starting with `enc(v)`):
//!
//! ```text
//!   lower Included(v) -> key >= enc(v)          upper Included(v) -> key <  succ(enc(v))
//!   lower Excluded(v) -> key >= succ(enc(v))    upper Excluded(v) -> key <  enc(v)
//! ```
//!
//! Invariants:
//! 1. A scan returns exactly the keys whose column prefix lies within the bounds (and, for
//!    a secondary index, the rows those entries name), in index order.
//! 2. An index scan returns a row only if it still has the entry's key: an entry whose row
//!    is gone or changed (a concurrent change, or the pre-step-5 crash gap of
//!    docs/catalog.md) is skipped, never answered with the wrong row.

use std::ops::Bound;
use std::sync::Arc;

use super::{DbInner, Result, RowHandle, TableState};
use crate::btree::Cursor;
use crate::engine::Engine;
use crate::row::Value;
use crate::trx::ViewHandle;

/// The shortest byte string above every string that starts with `p`; `None` if there is
/// none (`p` is all 0xFF: nothing sorts after its extensions).
fn successor(mut p: Vec<u8>) -> Option<Vec<u8>> {
    while let Some(last) = p.pop() {
        if last != 0xFF {
            p.push(last + 1);
            return Some(p);
        }
    }
    None
}

/// A cursor's lower and upper bound, as key bytes.
pub(super) type KeyRange = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// Byte bounds for a cursor from value bounds, `encode` turning a column prefix into its
/// key prefix. An empty range comes back as `[x, x)`.
pub(super) fn bounds(
    lower: Bound<Vec<Value>>,
    upper: Bound<Vec<Value>>,
    encode: impl Fn(&[Value]) -> Result<Vec<u8>>,
) -> Result<KeyRange> {
    let empty = || (Bound::Included(Vec::new()), Bound::Excluded(Vec::new()));
    let lo = match lower {
        Bound::Unbounded => Bound::Unbounded,
        Bound::Included(v) => Bound::Included(encode(&v)?),
        Bound::Excluded(v) => match successor(encode(&v)?) {
            Some(s) => Bound::Included(s),
            None => return Ok(empty()),
        },
    };
    let hi = match upper {
        Bound::Unbounded => Bound::Unbounded,
        Bound::Included(v) => match successor(encode(&v)?) {
            Some(s) => Bound::Excluded(s),
            None => Bound::Unbounded,
        },
        Bound::Excluded(v) => Bound::Excluded(encode(&v)?),
    };
    Ok((lo, hi))
}

/// Rows of a [`Table::index_scan`](super::Table::index_scan), in index order, each as
/// the scan's snapshot sees it.
pub struct IndexRows<'d> {
    pub(super) cursor: Cursor<'d, Engine>,
    pub(super) table: Arc<TableState>,
    /// Position of the index in `table.indexes`.
    pub(super) index: usize,
    pub(super) db: &'d DbInner,
    /// Keeps the snapshot registered while the scan lives; `None`: newest versions.
    pub(super) view: Option<Arc<ViewHandle>>,
    /// [`IndexRows::index_only`]: answer from the entry when its own trx id decides.
    pub(super) index_only: bool,
}

impl<'d> IndexRows<'d> {
    /// The next entry whose row the snapshot sees with this entry's key, with the row's
    /// clustered key (lesson 4: a marked entry the snapshot sees is skipped at once).
    fn next_keyed(&mut self) -> Option<Result<(Vec<u8>, Vec<Value>)>> {
        let ix = self.table.indexes.get(self.index)?;
        loop {
            let e = match self.cursor.next()? {
                Ok(e) => e,
                Err(e) => return Some(Err(e.into())),
            };
            let v = self.view.as_deref().map(|v| &**v);
            if self.index_only {
                // Lesson 4 for reads: an entry whose trx id the snapshot sees belongs to
                // the version the snapshot sees (txn invariant 3), so its key is the row's
                // index columns and primary key, with no clustered visit.
                let decided = match super::txn::entry_trx(&e.value) {
                    Ok(trx) => v.is_some_and(|v| v.sees(trx)),
                    Err(err) => return Some(Err(err)),
                };
                if decided {
                    if e.delete_marked {
                        continue;
                    }
                    return Some(self.entry_values(ix, &e.key));
                }
            }
            match self.db.entry_row(&self.table, ix, &e, v) {
                Ok(Some(r)) => return Some(Ok(r)),
                Ok(None) => continue,
                Err(err) => return Some(Err(err)),
            }
        }
    }

    /// A covering read: each row holds only the index's columns and the primary key (the
    /// other columns are NULL), taken from the entry itself whenever the entry's own trx id
    /// decides its visibility; the clustered index is visited only when it does not. Not
    /// for a table without a primary key, not for prefix columns (the entry holds only
    /// the prefix) and not for string columns (the entry holds their sort keys): those are
    /// read whole.
    pub fn index_only(mut self) -> Self {
        // A string's key part is a sort key, not the value (docs/row-format.md,
        // "Collations"): an index or primary key with one is read through the record.
        let ok = !self.table.layout.has_row_id()
            && !self.table.layout.key_layout().holds_weights()
            && self.table.indexes.get(self.index).is_some_and(|ix| {
                ix.def.columns.iter().all(|c| c.prefix.is_none())
                    && !ix.layout.key_layout().holds_weights()
            });
        self.index_only = ok;
        self
    }

    /// The row values an entry's key holds (index columns and primary key), NULL elsewhere,
    /// with the row's clustered key.
    fn entry_values(&self, ix: &super::Index, key: &[u8]) -> Result<(Vec<u8>, Vec<Value>)> {
        let mut vals = ix.layout.key_layout().decode(key)?;
        let pk_vals = vals.split_off(ix.def.columns.len());
        let mut row = vec![Value::Null; self.table.def.columns.len()];
        for (ic, v) in ix.def.columns.iter().zip(vals) {
            if let Some(slot) = row.get_mut(ic.column) {
                *slot = v;
            }
        }
        for (&c, v) in self.table.def.primary_key.iter().zip(pk_vals) {
            if let Some(slot) = row.get_mut(c) {
                *slot = v;
            }
        }
        let n = ix.layout.secondary_part_len(key)?;
        Ok((key[n..].to_vec(), row))
    }

    /// The rows with their handles, for updating or deleting them.
    pub fn with_handles(mut self) -> impl Iterator<Item = Result<(RowHandle, Vec<Value>)>> + 'd {
        std::iter::from_fn(move || {
            let r = self.next_keyed()?;
            Some(r.and_then(|(k, row)| Ok((RowHandle::new(&self.table, k)?, row))))
        })
    }
}

impl Iterator for IndexRows<'_> {
    type Item = Result<Vec<Value>>;
    fn next(&mut self) -> Option<Self::Item> {
        Some(self.next_keyed()?.map(|(_, row)| row))
    }
}

#[cfg(test)]
mod tests {
    use super::successor;

    #[test]
    fn successor_is_above_every_extension() {
        assert_eq!(successor(vec![1, 2]), Some(vec![1, 3]));
        assert_eq!(successor(vec![1, 0xFF]), Some(vec![2]));
        assert_eq!(successor(vec![0xFF, 0xFF]), None);
        assert_eq!(successor(Vec::new()), None);
    }
}
