//! Secondary-index records (docs/row-format.md, "Secondary-index record").
//!
//! ```text
//! +0 info | +1 K | +3 key (secondary columns, then primary key) | +3+K DB_TRX_ID(6)
//! ```
//!
//! Lesson 4: every record carries the id of the transaction that last changed it, so a read
//! view decides visibility, and purge decides removal, from the record alone in the common
//! case, without a trip to the clustered index or the undo log.

use super::key::{KeyLayout, KeyPart};
use super::record::{info_and_key_len, RowLayout, INFO_DELETED, OFF_KEY};
use super::{get_uint, RowError, RowId, RowLimits, TrxId, Value, TRX_ID_SIZE};

/// One column of a secondary index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexColumn {
    /// Column index in the table.
    pub column: usize,
    /// Characters (strings) or bytes (binary) indexed; required for TEXT/BLOB.
    pub prefix: Option<u32>,
    pub descending: bool,
}

impl IndexColumn {
    pub fn new(column: usize) -> Self {
        IndexColumn {
            column,
            prefix: None,
            descending: false,
        }
    }
}

/// The layout of one secondary index's records.
#[derive(Debug, Clone)]
pub struct SecondaryLayout {
    cols: Vec<IndexColumn>,
    pk: Vec<usize>,
    key: KeyLayout,
}

/// A decoded secondary record.
#[derive(Debug, Clone, PartialEq)]
pub struct SecondaryRecord {
    /// The secondary key columns (prefix parts hold the prefix; `None`: a string, whose
    /// key part holds its collation's sort key, not its value).
    pub key: Vec<Option<Value>>,
    /// The primary key columns, or `[UInt(DB_ROW_ID)]` (`None` as in `key`).
    pub pk: Vec<Option<Value>>,
    pub trx_id: TrxId,
    pub delete_marked: bool,
}

impl SecondaryLayout {
    pub fn new(table: &RowLayout, cols: Vec<IndexColumn>) -> Result<Self, RowError> {
        if cols.is_empty() {
            return Err(RowError::Schema(
                "an index needs at least one column".into(),
            ));
        }
        let mut parts = Vec::with_capacity(cols.len() + table.key_layout().parts().len());
        for ic in &cols {
            let col = table.columns().get(ic.column).ok_or_else(|| {
                RowError::Schema(format!("index column {} does not exist", ic.column))
            })?;
            parts.push(KeyPart {
                column: col.clone(),
                prefix: ic.prefix,
                descending: ic.descending,
            });
        }
        // The primary key makes every record's key unique, even in a non-unique index.
        parts.extend(table.key_layout().parts().iter().cloned());
        Ok(SecondaryLayout {
            cols,
            pk: table.primary_key().to_vec(),
            key: KeyLayout::new(parts)?,
        })
    }

    pub fn columns(&self) -> &[IndexColumn] {
        &self.cols
    }
    /// The whole key: secondary columns, then the primary key columns.
    pub fn key_layout(&self) -> &KeyLayout {
        &self.key
    }

    fn key_values(&self, row: &[Value], row_id: Option<RowId>) -> Result<Vec<Value>, RowError> {
        let get = |c: usize| {
            row.get(c).cloned().ok_or(RowError::WrongColumnCount {
                expected: c + 1,
                found: row.len(),
            })
        };
        let mut v = Vec::with_capacity(self.key.parts().len());
        for ic in &self.cols {
            v.push(get(ic.column)?);
        }
        if self.pk.is_empty() {
            let id = row_id.ok_or_else(|| {
                RowError::Schema("a table without a primary key needs a DB_ROW_ID".into())
            })?;
            v.push(Value::UInt(id.0));
        } else {
            for &c in &self.pk {
                v.push(get(c)?);
            }
        }
        Ok(v)
    }

    /// Appends the index record of a table row (all columns, table order).
    pub fn encode(
        &self,
        row: &[Value],
        row_id: Option<RowId>,
        trx_id: TrxId,
        limits: &RowLimits,
        out: &mut Vec<u8>,
    ) -> Result<(), RowError> {
        if trx_id > TrxId::MAX {
            return Err(RowError::Schema("DB_TRX_ID out of range".into()));
        }
        let values = self.key_values(row, row_id)?;
        let start = out.len();
        out.extend_from_slice(&[0, 0, 0]);
        self.key
            .encode(&values, limits, out)
            .inspect_err(|_| out.truncate(start))?;
        let k = out.len() - start - OFF_KEY;
        out[start + 1..start + 3].copy_from_slice(&(k as u16).to_le_bytes());
        out.extend_from_slice(&trx_id.0.to_le_bytes()[..TRX_ID_SIZE]);
        Ok(())
    }

    /// A search key: the first `values.len()` secondary columns, for a range scan or a
    /// uniqueness check. Every record with those values starts with it.
    pub fn encode_search(
        &self,
        values: &[Value],
        limits: &RowLimits,
        out: &mut Vec<u8>,
    ) -> Result<(), RowError> {
        if values.len() > self.cols.len() {
            return Err(RowError::WrongColumnCount {
                expected: self.cols.len(),
                found: values.len(),
            });
        }
        self.key.encode(values, limits, out)
    }

    /// Bytes of `key` taken by the secondary columns (the part a unique index compares).
    pub fn secondary_part_len(&self, key: &[u8]) -> Result<usize, RowError> {
        self.key.skip(key, self.cols.len())
    }

    pub fn decode(&self, rec: &[u8]) -> Result<SecondaryRecord, RowError> {
        let (info, k) = info_and_key_len(rec)?;
        if info & !INFO_DELETED != 0 {
            return Err(RowError::Corrupt("unknown info bits in a secondary record"));
        }
        if rec.len() != OFF_KEY + k + TRX_ID_SIZE {
            return Err(RowError::Corrupt("secondary record length"));
        }
        let mut vals = self.key.decode_parts(&rec[OFF_KEY..OFF_KEY + k])?;
        let pk = vals.split_off(self.cols.len());
        Ok(SecondaryRecord {
            key: vals,
            pk,
            trx_id: TrxId(get_uint(rec, OFF_KEY + k, TRX_ID_SIZE)?),
            delete_marked: info & INFO_DELETED != 0,
        })
    }
}

fn trx_at(rec: &[u8]) -> Result<usize, RowError> {
    let (_, k) = info_and_key_len(rec)?;
    Ok(OFF_KEY + k)
}

/// The index key of a secondary record, for `memcmp`.
pub fn key(rec: &[u8]) -> Result<&[u8], RowError> {
    let (_, k) = info_and_key_len(rec)?;
    Ok(&rec[OFF_KEY..OFF_KEY + k])
}

/// DB_TRX_ID of a secondary record, read in place (lesson 4: visibility and purge).
pub fn trx_id(rec: &[u8]) -> Result<TrxId, RowError> {
    get_uint(rec, trx_at(rec)?, TRX_ID_SIZE).map(TrxId)
}

/// Overwrites DB_TRX_ID in place (delete-marking or un-delete-marking a record).
pub fn set_trx_id(rec: &mut [u8], trx: TrxId) -> Result<(), RowError> {
    debug_assert!(trx <= TrxId::MAX);
    let at = trx_at(rec)?;
    rec[at..at + TRX_ID_SIZE].copy_from_slice(&trx.0.to_le_bytes()[..TRX_ID_SIZE]);
    Ok(())
}

pub use super::record::{is_delete_marked, set_delete_marked};
