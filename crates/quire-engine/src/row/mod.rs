//! # Rows: typed values, record formats and memcomparable keys
//!
//! Pure encoding, no I/O (byte layouts in `docs/row-format.md`). The B-tree stores these
//! records in slotted pages and owns the BLOB page chains; this module only decides what the
//! bytes are.
//!
//! ```text
//! clustered:  info | K | key (PK, memcomparable) | DB_TRX_ID | DB_ROLL_PTR | N | nulls | var ends | fixed | var
//! secondary:  info | K | key (secondary cols, then PK, memcomparable)   | DB_TRX_ID
//! ```
//!
//! Invariants:
//! 1. `memcmp(key(a), key(b)) == cmp_sql(a, b)` for tuples of one [`KeyLayout`], strings in
//!    their column's [`Collation`]; every field encoding is prefix-free, which is why
//!    concatenation and inversion (DESC) are sound. A string's key part is its collation's
//!    sort key, which does not decode: a string primary-key column is also a record field.
//! 2. Decoding is total: any bytes decode to a value or to [`RowError::Corrupt`]; never a
//!    panic, never a read past the slice.
//! 3. `decode(encode(row)) == row` for every valid row in canonical form
//!    ([`Column::canonical`]).
//! 4. An encoded record fits [`RowLimits::max_record_bytes`], a key
//!    [`RowLimits::max_key_bytes`].
//! 5. The transaction id (and roll pointer) sits at `3 + K`, `K` the u16 at offset 1, in both
//!    record kinds: MVCC and purge read it in place without the schema. In a secondary record
//!    it is what lets visibility and purge skip the clustered index (lesson 4).

mod byte_charset_table;
mod collation;
mod external;
mod general_ci_table;
mod key;
pub mod record;
pub mod secondary;
mod uca;
#[cfg(test)]
mod uca_samples;
mod value;

#[cfg(test)]
mod tests;

pub use collation::{latin1_byte, Charset, Collation};
pub use external::{read_blob_part, write_blob_part, ExternRef, BLOB_PART_HEADER, EXTERN_REF_SIZE};
pub use key::{KeyLayout, KeyPart};
pub use record::{RecordFields, RowLayout, Stored, SysFields};
pub use secondary::SecondaryLayout;
pub use value::{
    bit_bytes, bit_max, decimal_bytes, Column, ColumnType, Date, DateTime, Decimal, InstantValue,
    IntWidth, LobSize, Time, Value, ValueError, BIT_MAX_BITS, DECIMAL_MAX_PRECISION,
    DEFAULT_MAX_BYTES, FSP_MAX, SET_MAX_MEMBERS, TIMESTAMP_MAX, TIMESTAMP_MIN,
};

use crate::page::{PageNo, PageSize, HEADER_SIZE, TRAILER_SIZE};

/// Everything that can go wrong turning values into records and back. User mistakes
/// (`NullNotAllowed` .. `RowTooLarge`), schema mistakes (`Schema`) and corruption (`Corrupt`)
/// stay apart; the SQL layer maps the first group to MySQL errors (docs/row-format.md).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RowError {
    #[error("column `{column}` cannot be NULL")]
    NullNotAllowed { column: String },
    #[error("column `{column}` expects a {expected} value, got {found}")]
    WrongType {
        column: String,
        expected: &'static str,
        found: &'static str,
    },
    #[error("column `{column}`: {kind}")]
    Value { column: String, kind: ValueError },
    #[error("value too long for column `{column}`: {len} {unit}, at most {max}")]
    TooLong {
        column: String,
        max: u64,
        len: u64,
        unit: &'static str,
    },
    #[error("expected {expected} values, got {found}")]
    WrongColumnCount { expected: usize, found: usize },
    #[error("key is {len} bytes encoded; the maximum is {max}")]
    KeyTooLong { len: usize, max: usize },
    #[error("row is {len} bytes even with its long values off-page; the maximum is {max}")]
    RowTooLarge { len: usize, max: usize },
    #[error("invalid table definition: {0}")]
    Schema(String),
    #[error("corrupt record: {0}")]
    Corrupt(&'static str),
}

impl RowError {
    pub(crate) fn value(column: &str, kind: ValueError) -> RowError {
        RowError::Value {
            column: column.to_string(),
            kind,
        }
    }
    pub(crate) fn corrupt(what: &'static str) -> RowError {
        RowError::Corrupt(what)
    }
    /// True for damage on disk, as opposed to a bad value or definition.
    pub fn is_corruption(&self) -> bool {
        matches!(self, RowError::Corrupt(_))
    }
}

/// Size limits that follow from the page size (docs/row-format.md, "Limits").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowLimits {
    /// Largest encoded record: a leaf holds at least two.
    pub max_record_bytes: usize,
    /// Largest encoded key, as InnoDB: 3072 bytes from 16 KiB pages up.
    pub max_key_bytes: usize,
    /// Variable-length values longer than this go off-page.
    pub extern_threshold: usize,
    /// Payload bytes per BLOB page.
    pub blob_part_max: usize,
}

/// Room kept per page for the B-tree's page header and slot directory when sizing records.
pub const PAGE_RESERVE: usize = 128;

impl RowLimits {
    pub fn for_page(page: PageSize) -> RowLimits {
        let p = page.bytes();
        RowLimits {
            max_record_bytes: p / 2 - PAGE_RESERVE,
            max_key_bytes: (p * 3 / 16).min(3072),
            extern_threshold: p / 4,
            blob_part_max: p - HEADER_SIZE - BLOB_PART_HEADER - TRAILER_SIZE,
        }
    }
}

impl Default for RowLimits {
    fn default() -> Self {
        RowLimits::for_page(PageSize::DEFAULT)
    }
}

// Variable-area end offsets are 15 bits (bit 15 flags off-page) at every page size.
const _: () = assert!(PageSize::MAX as usize / 2 - PAGE_RESERVE < 1 << 15);
// The largest key, with the record header and hidden columns, fits a record at every page
// size, with room to spare for the other columns.
const _: () =
    assert!(PageSize::MIN as usize * 3 / 16 + 18 < (PageSize::MIN as usize / 2 - PAGE_RESERVE) / 2);
const _: () = assert!(3072 + 18 < (16 * 1024 / 2 - PAGE_RESERVE) / 2);

/// A transaction id. Stored in 6 bytes: ids are below 2^48.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TrxId(pub u64);

impl TrxId {
    pub const MAX: TrxId = TrxId((1 << 48) - 1);
}

/// DB_TRX_ID bytes in a record.
pub const TRX_ID_SIZE: usize = 6;
/// DB_ROLL_PTR bytes in a record.
pub const ROLL_PTR_SIZE: usize = 7;
/// DB_ROW_ID bytes, the clustered key of a table without a primary key.
pub const ROW_ID_SIZE: usize = 8;

/// A pointer to the undo record that rebuilds the previous version:
/// `insert:1 | rseg:7 | undo page_no:32 | offset:16` (56 bits, 7 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RollPtr(pub u64);

impl RollPtr {
    /// Number of rollback segments addressable.
    pub const RSEGS: u8 = 128;

    pub fn new(insert: bool, rseg: u8, page_no: PageNo, offset: u16) -> RollPtr {
        debug_assert!(rseg < Self::RSEGS);
        RollPtr(
            u64::from(insert) << 55
                | u64::from(rseg & 0x7F) << 48
                | u64::from(page_no.0) << 16
                | u64::from(offset),
        )
    }
    /// The record was inserted: there is no previous version.
    pub fn is_insert(self) -> bool {
        self.0 >> 55 & 1 == 1
    }
    pub fn rseg(self) -> u8 {
        (self.0 >> 48 & 0x7F) as u8
    }
    pub fn page_no(self) -> PageNo {
        PageNo((self.0 >> 16) as u32)
    }
    pub fn offset(self) -> u16 {
        self.0 as u16
    }
}

/// The hidden row id of a table without a primary key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct RowId(pub u64);

fn get_u16(b: &[u8], off: usize) -> Result<u16, RowError> {
    b.get(off..off + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .ok_or(RowError::Corrupt("record too short"))
}

fn get_uint(b: &[u8], off: usize, n: usize) -> Result<u64, RowError> {
    debug_assert!(n <= 8);
    let s = b
        .get(off..off + n)
        .ok_or(RowError::Corrupt("record too short"))?;
    let mut a = [0u8; 8];
    a[..n].copy_from_slice(s);
    Ok(u64::from_le_bytes(a))
}

fn put_uint(out: &mut Vec<u8>, v: u64, n: usize) {
    out.extend_from_slice(&v.to_le_bytes()[..n]);
}
