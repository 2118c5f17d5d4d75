//! Clustered-index records (docs/row-format.md, "Clustered-index record").
//!
//! ```text
//! +0 info | +1 K | +3 key | +3+K DB_TRX_ID(6) | +9+K DB_ROLL_PTR(7) | +16+K N | nulls | var ends | fixed | var
//! ```
//!
//! The free functions ([`trx_id`], [`set_trx_id`], [`roll_ptr`], ...) work on any record
//! without its schema: MVCC and purge call them per record (invariant 5 of the module).

use std::borrow::Cow;

use super::external::{ExternRef, EXTERN_REF_SIZE};
use super::key::{KeyLayout, KeyPart};
use super::value::{
    decimal_bytes, pow10, Column, ColumnType, Date, DateTime, Decimal, InstantValue, IntWidth,
    Value,
};
use super::{
    get_u16, get_uint, put_uint, RollPtr, RowError, RowId, RowLimits, TrxId, ROLL_PTR_SIZE,
    TRX_ID_SIZE,
};

/// Bit 0 of the info byte: the record is delete-marked.
pub const INFO_DELETED: u8 = 1;
/// Bit 1 of the info byte: some field is stored off-page.
pub const INFO_EXTERNAL: u8 = 2;
const INFO_KNOWN: u8 = INFO_DELETED | INFO_EXTERNAL;

/// Offset of the key: after the info byte and the u16 key length.
pub const OFF_KEY: usize = 3;
/// Bytes between the key and the field count: DB_TRX_ID and DB_ROLL_PTR.
const SYS_SIZE: usize = TRX_ID_SIZE + ROLL_PTR_SIZE;
/// Bit 15 of a variable-area end offset: the field is off-page.
const VAR_EXTERNAL: u16 = 0x8000;
const _: () = assert!(OFF_KEY == 1 + 2 && SYS_SIZE == 13);

/// The hidden columns of a clustered record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SysFields {
    pub trx_id: TrxId,
    pub roll_ptr: RollPtr,
    /// The clustered key of a table without a primary key; `None` otherwise.
    pub row_id: Option<RowId>,
}

/// A field as the record holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum Stored {
    Inline(Value),
    /// Off-page: the reference and the local prefix of the value.
    External {
        r: ExternRef,
        prefix: Vec<u8>,
    },
}

/// A decoded clustered record: every column in table order, and the hidden ones.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordFields {
    pub fields: Vec<Stored>,
    pub sys: SysFields,
    pub delete_marked: bool,
}

impl RecordFields {
    /// The values, reading each off-page one with `fetch` (the B-tree's BLOB chain reader).
    pub fn into_values<E: From<RowError>>(
        self,
        layout: &RowLayout,
        mut fetch: impl FnMut(&ExternRef) -> Result<Vec<u8>, E>,
    ) -> Result<Vec<Value>, E> {
        let mut out = Vec::with_capacity(self.fields.len());
        for (i, f) in self.fields.into_iter().enumerate() {
            out.push(match f {
                Stored::Inline(v) => v,
                Stored::External { r, prefix } => {
                    let bytes = fetch(&r)?;
                    if bytes.len() as u64 != r.len || !bytes.starts_with(&prefix) {
                        return Err(
                            RowError::Corrupt("off-page value differs from its reference").into(),
                        );
                    }
                    layout.bytes_to_value(i, bytes)?
                }
            });
        }
        Ok(out)
    }
}

/// Where a column lives in a clustered record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Part `n` of the key.
    Key(usize),
    /// Non-key slot `n`.
    Slot(usize),
}

#[derive(Debug, Clone, Copy)]
enum SlotKind {
    /// At this offset of the fixed area.
    Fixed { off: usize, size: usize },
    /// Variable-length field number `n`.
    Var(usize),
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    /// The column: an index into `columns ++ dropped` (one of `dropped` is a ghost slot).
    col: usize,
    /// Bit of the null bitmap, for a nullable column.
    null_bit: Option<usize>,
    kind: SlotKind,
}

/// The layout of a table's clustered records: its columns, its primary key, and where each
/// column sits in a record.
#[derive(Debug, Clone)]
pub struct RowLayout {
    columns: Vec<Column>,
    /// Columns dropped instantly whose slots records still hold (ghost slots: written
    /// empty, never read; docs/row-format.md, "Instantly dropped and reordered columns").
    dropped: Vec<Column>,
    pk: Vec<usize>,
    key: KeyLayout,
    places: Vec<Place>,
    slots: Vec<Slot>,
    null_bytes: usize,
    n_var: usize,
    fixed_bytes: usize,
    extern_prefix: u16,
    /// Slots every record holds: those of the columns not added instantly. A record holds
    /// `min_slots..=slots.len()` slots (its field count N); the slots it lacks read
    /// `instant[slot - min_slots]` (docs/row-format.md, "Instantly added columns").
    min_slots: usize,
    instant: Vec<Value>,
    /// `(null_bytes, n_var, fixed_bytes)` of a record holding `min_slots + i` slots: the
    /// geometry of a prefix of the slots, since added columns only ever come last.
    prefixes: Vec<(usize, usize, usize)>,
}

/// The parsed fixed part of a clustered record.
struct Parsed<'a> {
    /// How many slots the record holds.
    n: usize,
    info: u8,
    key: &'a [u8],
    sys: usize,
    nulls: &'a [u8],
    ends: &'a [u8],
    fixed: &'a [u8],
    var: &'a [u8],
}

impl RowLayout {
    /// A table of `columns` whose primary key is `primary_key` (column indices, in key
    /// order). An empty primary key means a hidden DB_ROW_ID clusters the table.
    pub fn new(columns: Vec<Column>, primary_key: &[usize]) -> Result<RowLayout, RowError> {
        Self::with_physical(columns, primary_key, Vec::new(), &[])
    }

    /// A table whose records also hold the slots of the `dropped` columns, with the slots
    /// in `slot_order` (indices into `columns ++ dropped`; empty: the non-key columns in
    /// table order, which needs `dropped` empty). Checks that every column that is not a
    /// pure key part, and every dropped one, has exactly one slot, and that the slots of
    /// instantly added columns come last (docs/row-format.md, "Instantly dropped and
    /// reordered columns").
    pub fn with_physical(
        columns: Vec<Column>,
        primary_key: &[usize],
        dropped: Vec<Column>,
        slot_order: &[usize],
    ) -> Result<RowLayout, RowError> {
        if columns.is_empty() || columns.len() + dropped.len() > usize::from(u16::MAX) {
            return Err(RowError::Schema(format!("{} columns", columns.len())));
        }
        let mut places = vec![Place::Slot(usize::MAX); columns.len()];
        let mut in_pk = vec![false; columns.len()];
        let mut parts = Vec::new();
        for (n, &c) in primary_key.iter().enumerate() {
            let col = columns.get(c).ok_or_else(|| {
                RowError::Schema(format!("primary key column {c} does not exist"))
            })?;
            if col.nullable {
                return Err(RowError::Schema(format!(
                    "primary key column `{}` must be NOT NULL",
                    col.name
                )));
            }
            if in_pk[c] {
                return Err(RowError::Schema(format!(
                    "column `{}` twice in the primary key",
                    col.name
                )));
            }
            in_pk[c] = true;
            let part = KeyPart::new(col.clone());
            // A string's key part is its collation's sort key: the value itself lives in a
            // slot, like a non-key column's (docs/row-format.md, "Collations").
            if !part.holds_weights() {
                places[c] = Place::Key(n);
            }
            parts.push(part);
        }
        if primary_key.is_empty() {
            parts.push(KeyPart::new(row_id_column()));
        }
        let key = KeyLayout::new(parts)?;
        for col in columns.iter().chain(&dropped) {
            col.ty.check().map_err(RowError::Schema)?;
            col.check_members().map_err(RowError::Schema)?;
        }
        let order: Vec<usize> = if slot_order.is_empty() {
            if !dropped.is_empty() {
                return Err(RowError::Schema(
                    "dropped columns need an explicit slot order".into(),
                ));
            }
            (0..columns.len())
                .filter(|&c| places[c] == Place::Slot(usize::MAX))
                .collect()
        } else {
            slot_order.to_vec()
        };
        let mut has_slot = vec![false; columns.len() + dropped.len()];
        let (mut slots, mut nullable, mut n_var, mut fixed) = (Vec::new(), 0, 0, 0);
        for c in order {
            let col = match c.checked_sub(columns.len()) {
                None if places[c] == Place::Slot(usize::MAX) => &columns[c],
                Some(d) if d < dropped.len() && !has_slot[c] => &dropped[d],
                _ => {
                    return Err(RowError::Schema(format!(
                        "slot order: column {c} has no slot of its own"
                    )))
                }
            };
            has_slot[c] = true;
            let null_bit = col.nullable.then(|| {
                nullable += 1;
                nullable - 1
            });
            let kind = match col.ty.fixed_size() {
                Some(size) => {
                    fixed += size;
                    SlotKind::Fixed {
                        off: fixed - size,
                        size,
                    }
                }
                None => {
                    n_var += 1;
                    SlotKind::Var(n_var - 1)
                }
            };
            if let Some(p) = places.get_mut(c) {
                *p = Place::Slot(slots.len());
            }
            slots.push(Slot {
                col: c,
                null_bit,
                kind,
            });
        }
        if let Some(c) = (0..columns.len()).find(|&c| places[c] == Place::Slot(usize::MAX)) {
            return Err(RowError::Schema(format!(
                "slot order: column `{}` has no slot",
                columns[c].name
            )));
        }
        if has_slot[columns.len()..].iter().any(|h| !h) {
            return Err(RowError::Schema(
                "slot order: a dropped column has no slot".into(),
            ));
        }
        // Instantly added columns: the last slots, each a column of its own (never in the
        // key), so the records written before them hold a prefix of the slots.
        let col_of = |c: usize| {
            columns
                .get(c)
                .unwrap_or_else(|| &dropped[c - columns.len()])
        };
        let first_instant = slots
            .iter()
            .position(|s| col_of(s.col).instant.is_some())
            .unwrap_or(slots.len());
        if let Some(c) = (0..columns.len())
            .find(|&c| columns[c].instant.is_some() && matches!(places[c], Place::Key(_)))
        {
            return Err(RowError::Schema(format!(
                "column `{}` cannot have been added instantly: it is in the primary key",
                columns[c].name
            )));
        }
        let mut instant = Vec::new();
        for s in &slots[first_instant..] {
            let col = col_of(s.col);
            let value = match &col.instant {
                Some(_) if in_pk.get(s.col) == Some(&true) => None,
                Some(InstantValue::Null) if col.nullable => Some(Value::Null),
                Some(InstantValue::Field(b)) => Some(decode_field(col, b)?),
                _ => None,
            };
            let value = value.ok_or_else(|| {
                RowError::Schema(format!(
                    "column `{}` cannot have been added instantly (added columns are the \
                     last ones, outside the primary key, and NULL only if nullable)",
                    col.name
                ))
            })?;
            instant.push(value);
        }
        let min_slots = slots.len() - instant.len();
        let mut prefixes = Vec::with_capacity(instant.len() + 1);
        let (mut nb, mut nv, mut fb) = (0usize, 0usize, 0usize);
        for (i, s) in slots.iter().enumerate() {
            if i >= min_slots {
                prefixes.push((nb.div_ceil(8), nv, fb));
            }
            if s.null_bit.is_some() {
                nb += 1;
            }
            match s.kind {
                SlotKind::Fixed { size, .. } => fb += size,
                SlotKind::Var(_) => nv += 1,
            }
        }
        prefixes.push((nb.div_ceil(8), nv, fb));
        debug_assert_eq!(prefixes.last(), Some(&(nullable.div_ceil(8), n_var, fixed)));
        Ok(RowLayout {
            columns,
            dropped,
            pk: primary_key.to_vec(),
            key,
            places,
            slots,
            null_bytes: nullable.div_ceil(8),
            n_var,
            fixed_bytes: fixed,
            extern_prefix: 0,
            min_slots,
            instant,
            prefixes,
        })
    }

    /// Keep the first `bytes` of every off-page value in the record, so an index on a prefix
    /// of the column is maintained without reading the BLOB chain.
    pub fn with_extern_prefix(mut self, bytes: u16) -> Self {
        self.extern_prefix = bytes;
        self
    }

    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The record's slots in order, each as its column's index into `columns ++ dropped`.
    pub fn slot_columns(&self) -> Vec<usize> {
        self.slots.iter().map(|s| s.col).collect()
    }

    /// The column of slot `s`: a live one or a dropped one (a ghost slot).
    fn slot_column(&self, s: &Slot) -> &Column {
        self.columns
            .get(s.col)
            .unwrap_or_else(|| &self.dropped[s.col - self.columns.len()])
    }

    fn is_ghost(&self, s: &Slot) -> bool {
        s.col >= self.columns.len()
    }
    /// Primary key columns; empty when DB_ROW_ID is the key.
    pub fn primary_key(&self) -> &[usize] {
        &self.pk
    }
    pub fn has_row_id(&self) -> bool {
        self.pk.is_empty()
    }
    /// The clustered key's layout (DB_ROW_ID as BIGINT UNSIGNED when there is no PK).
    pub fn key_layout(&self) -> &KeyLayout {
        &self.key
    }

    /// The physical field order, hidden columns included, e.g.
    /// `["id", "DB_TRX_ID", "DB_ROLL_PTR", "a", "b"]`.
    pub fn physical_order(&self) -> Vec<&str> {
        let mut v: Vec<&str> = if self.pk.is_empty() {
            vec!["DB_ROW_ID"]
        } else {
            self.pk
                .iter()
                .map(|&c| self.columns[c].name.as_str())
                .collect()
        };
        v.extend(["DB_TRX_ID", "DB_ROLL_PTR"]);
        v.extend(self.slots.iter().map(|s| self.slot_column(s).name.as_str()));
        v
    }

    /// Checks a row against the columns and returns it in canonical form.
    pub fn validate<'a>(&self, values: &'a [Value]) -> Result<Vec<Cow<'a, Value>>, RowError> {
        if values.len() != self.columns.len() {
            return Err(RowError::WrongColumnCount {
                expected: self.columns.len(),
                found: values.len(),
            });
        }
        // Sized once: collecting `Result`s cannot know the length, and grew the vector
        // twice per row on every insert.
        let mut out = Vec::with_capacity(values.len());
        for (c, v) in self.columns.iter().zip(values) {
            out.push(c.canonical(v)?);
        }
        Ok(out)
    }

    /// [`RowLayout::validate`] in place: `values` becomes its canonical form, with no
    /// vector allocated and no value copied that is canonical already. On an error
    /// `values` may be partly canonicalized.
    pub fn canonicalize(&self, values: &mut [Value]) -> Result<(), RowError> {
        if values.len() != self.columns.len() {
            return Err(RowError::WrongColumnCount {
                expected: self.columns.len(),
                found: values.len(),
            });
        }
        for (c, v) in self.columns.iter().zip(values.iter_mut()) {
            if let Cow::Owned(n) = c.canonical(v)? {
                *v = n;
            }
        }
        Ok(())
    }

    /// Appends the clustered key of a row (all columns, or `row_id` without a PK).
    pub fn encode_key(
        &self,
        values: &[Value],
        row_id: Option<RowId>,
        limits: &RowLimits,
        out: &mut Vec<u8>,
    ) -> Result<(), RowError> {
        if self.pk.is_empty() {
            let id = row_id.ok_or_else(|| {
                RowError::Schema("a table without a primary key needs a DB_ROW_ID".into())
            })?;
            return self.key.encode(&[Value::UInt(id.0)], limits, out);
        }
        let kv: Vec<Value> = self
            .pk
            .iter()
            .map(|&c| values.get(c).cloned().unwrap_or(Value::Null))
            .collect();
        self.key.encode(&kv, limits, out)
    }

    fn var_bytes(v: &Value) -> &[u8] {
        match v {
            Value::Str(s) => s.as_bytes(),
            Value::Bytes(b) => b,
            _ => &[],
        }
    }

    fn header_bytes(&self) -> usize {
        OFF_KEY + SYS_SIZE + 2 + self.null_bytes + 2 * self.n_var + self.fixed_bytes
    }

    fn extern_field_bytes(&self, len: usize) -> usize {
        EXTERN_REF_SIZE + len.min(usize::from(self.extern_prefix))
    }

    /// Whether [`RowLayout::plan_off_page`] can ever choose a column under `limits`: some
    /// non-key variable-length column may be longer than `extern_threshold`, or the longest
    /// possible record (largest key, every variable-length value at its maximum) is over
    /// `max_record_bytes`. A table for which this is false never has an off-page value.
    pub fn can_store_off_page(&self, limits: &RowLimits) -> bool {
        let var_max: Vec<u64> = self
            .slots
            .iter()
            // A ghost slot always holds an empty value.
            .filter(|s| matches!(s.kind, SlotKind::Var(_)) && !self.is_ghost(s))
            .map(|s| self.columns[s.col].ty.max_bytes())
            .collect();
        let key_max = self.key.max_encoded_len().min(limits.max_key_bytes as u64);
        let longest = self.header_bytes() as u64 + key_max + var_max.iter().sum::<u64>();
        var_max.iter().any(|&m| m > limits.extern_threshold as u64)
            || longest > limits.max_record_bytes as u64
    }

    /// Validates a row and chooses the columns to store off-page: every variable-length
    /// value over `extern_threshold`, then the longest others until the record fits.
    pub fn plan_off_page(
        &self,
        values: &[Value],
        sys: &SysFields,
        limits: &RowLimits,
    ) -> Result<Vec<usize>, RowError> {
        let vals = self.validate(values)?;
        let mut key = Vec::new();
        self.encode_key(values, sys.row_id, limits, &mut key)?;
        self.plan_off_page_canonical(&vals, key.len(), limits)
    }

    /// [`RowLayout::plan_off_page`] for a row already in canonical form (as
    /// [`RowLayout::validate`] or [`RowLayout::canonicalize`] leave it) whose clustered key
    /// is `key_len` bytes long: nothing is validated or encoded again, and nothing is
    /// allocated when every value stays in the record (the common case).
    pub fn plan_off_page_canonical<V: std::borrow::Borrow<Value>>(
        &self,
        vals: &[V],
        key_len: usize,
        limits: &RowLimits,
    ) -> Result<Vec<usize>, RowError> {
        if vals.len() != self.columns.len() {
            return Err(RowError::WrongColumnCount {
                expected: self.columns.len(),
                found: vals.len(),
            });
        }
        // A primary key string stays in the record: the row is found by its key.
        let candidates = self.slots.iter().filter(|s| {
            matches!(s.kind, SlotKind::Var(_)) && !self.pk.contains(&s.col) && !self.is_ghost(s)
        });
        let len_of = |c: usize| Self::var_bytes(vals[c].borrow()).len();
        let mut total = self.header_bytes() + key_len;
        let mut off = Vec::new();
        for s in candidates.clone() {
            let len = len_of(s.col);
            if len > limits.extern_threshold {
                off.push(s.col);
                total += self.extern_field_bytes(len);
            } else {
                total += len;
            }
        }
        if total <= limits.max_record_bytes {
            off.sort_unstable();
            return Ok(off);
        }
        let mut var: Vec<(usize, usize)> = candidates
            .map(|s| (s.col, len_of(s.col)))
            .filter(|(c, _)| !off.contains(c))
            .collect();
        var.sort_by_key(|&(c, len)| (std::cmp::Reverse(len), c));
        for (c, len) in var {
            if total <= limits.max_record_bytes || len <= self.extern_field_bytes(len) {
                break;
            }
            off.push(c);
            total = total - len + self.extern_field_bytes(len);
        }
        if total > limits.max_record_bytes {
            return Err(RowError::RowTooLarge {
                len: total,
                max: limits.max_record_bytes,
            });
        }
        off.sort_unstable();
        Ok(off)
    }

    /// Appends the clustered record of `values` (every column, table order). The columns in
    /// `externs` are stored as references (their values were written to BLOB chains, see
    /// [`RowLayout::plan_off_page`]); `values` still holds them whole, for validation and
    /// the local prefix.
    pub fn encode(
        &self,
        values: &[Value],
        sys: &SysFields,
        externs: &[(usize, ExternRef)],
        limits: &RowLimits,
        out: &mut Vec<u8>,
    ) -> Result<(), RowError> {
        let vals = self.validate(values)?;
        if sys.trx_id > TrxId::MAX || sys.roll_ptr.0 >> 56 != 0 {
            return Err(RowError::Schema(
                "DB_TRX_ID or DB_ROLL_PTR out of range".into(),
            ));
        }
        let start = out.len();
        out.push(if externs.is_empty() { 0 } else { INFO_EXTERNAL });
        out.extend_from_slice(&[0, 0]);
        self.encode_key(values, sys.row_id, limits, out)?;
        let k = out.len() - start - OFF_KEY;
        out[start + 1..start + 3].copy_from_slice(&(k as u16).to_le_bytes());
        put_uint(out, sys.trx_id.0, TRX_ID_SIZE);
        put_uint(out, sys.roll_ptr.0, ROLL_PTR_SIZE);
        put_uint(out, self.slots.len() as u64, 2);
        let nulls_at = out.len();
        out.resize(nulls_at + self.null_bytes + 2 * self.n_var, 0);
        let ends_at = nulls_at + self.null_bytes;
        let fixed_at = out.len();
        out.resize(fixed_at + self.fixed_bytes, 0);
        let var_at = out.len();
        for s in &self.slots {
            let Some(v) = vals.get(s.col) else {
                // A ghost slot: NULL if its column was nullable, else zero bytes (already
                // there) or an empty value (its end offset is the current end).
                if let Some(bit) = s.null_bit {
                    out[nulls_at + bit / 8] |= 1 << (bit % 8);
                }
                if let SlotKind::Var(n) = s.kind {
                    let e = ((out.len() - var_at) as u16).to_le_bytes();
                    out[ends_at + 2 * n..ends_at + 2 * n + 2].copy_from_slice(&e);
                }
                continue;
            };
            if matches!(**v, Value::Null) {
                if let Some(bit) = s.null_bit {
                    out[nulls_at + bit / 8] |= 1 << (bit % 8);
                }
            }
            match s.kind {
                SlotKind::Fixed { off, size } => {
                    let at = fixed_at + off;
                    encode_fixed(&self.columns[s.col], v, &mut out[at..at + size]);
                }
                SlotKind::Var(n) => {
                    let bytes = Self::var_bytes(v);
                    let mut flag = 0;
                    if let Some((_, r)) = externs.iter().find(|(c, _)| *c == s.col) {
                        if r.len != bytes.len() as u64 || matches!(**v, Value::Null) {
                            return Err(RowError::Schema(format!(
                                "external reference for `{}` has the wrong length",
                                self.columns[s.col].name
                            )));
                        }
                        let p = bytes.len().min(usize::from(self.extern_prefix));
                        r.encode(&bytes[..p], out);
                        flag = VAR_EXTERNAL;
                    } else {
                        out.extend_from_slice(bytes);
                    }
                    let end = out.len() - var_at;
                    if end >= usize::from(VAR_EXTERNAL)
                        || out.len() - start > limits.max_record_bytes
                    {
                        let len = out.len() - start;
                        out.truncate(start);
                        return Err(RowError::RowTooLarge {
                            len,
                            max: limits.max_record_bytes,
                        });
                    }
                    let e = (end as u16 | flag).to_le_bytes();
                    out[ends_at + 2 * n..ends_at + 2 * n + 2].copy_from_slice(&e);
                }
            }
        }
        for (c, _) in externs {
            let ok = !self.pk.contains(c)
                && matches!(self.places.get(*c), Some(Place::Slot(s)) if matches!(self.slots[*s].kind, SlotKind::Var(_)));
            if !ok {
                out.truncate(start);
                return Err(RowError::Schema(format!(
                    "column {c} cannot be stored off-page"
                )));
            }
        }
        let len = out.len() - start;
        if len > limits.max_record_bytes {
            out.truncate(start);
            return Err(RowError::RowTooLarge {
                len,
                max: limits.max_record_bytes,
            });
        }
        Ok(())
    }

    fn parse<'a>(&self, rec: &'a [u8]) -> Result<Parsed<'a>, RowError> {
        let (info, k) = info_and_key_len(rec)?;
        let key = &rec[OFF_KEY..OFF_KEY + k];
        let sys = OFF_KEY + k;
        let n_at = sys + SYS_SIZE;
        let n = get_u16(rec, n_at)? as usize;
        let Some(&(null_bytes, n_var, fixed_bytes)) = n
            .checked_sub(self.min_slots)
            .and_then(|i| self.prefixes.get(i))
        else {
            return Err(RowError::Corrupt("field count differs from the table's"));
        };
        let nulls_at = n_at + 2;
        let ends_at = nulls_at + null_bytes;
        let fixed_at = ends_at + 2 * n_var;
        let var_at = fixed_at + fixed_bytes;
        if rec.len() < var_at {
            return Err(RowError::Corrupt("record too short"));
        }
        Ok(Parsed {
            n,
            info,
            key,
            sys,
            nulls: &rec[nulls_at..ends_at],
            ends: &rec[ends_at..fixed_at],
            fixed: &rec[fixed_at..var_at],
            var: &rec[var_at..],
        })
    }

    /// Decodes a whole clustered record.
    pub fn decode(&self, rec: &[u8]) -> Result<RecordFields, RowError> {
        let p = self.parse(rec)?;
        let last_end = match p.ends.len() / 2 {
            0 => 0,
            n => usize::from(end_at(p.ends, n - 1)? & !VAR_EXTERNAL),
        };
        if last_end != p.var.len() {
            return Err(RowError::Corrupt("record length differs from its fields"));
        }
        let keyvals = self.key.decode_parts(p.key)?;
        let row_id = match (self.pk.is_empty(), keyvals.first()) {
            (true, Some(Some(Value::UInt(id)))) => Some(RowId(*id)),
            (true, _) => return Err(RowError::Corrupt("bad DB_ROW_ID")),
            (false, _) => None,
        };
        let mut fields = Vec::with_capacity(self.columns.len());
        for (c, place) in self.places.iter().enumerate() {
            fields.push(match *place {
                Place::Key(n) => Stored::Inline(
                    keyvals
                        .get(n)
                        .cloned()
                        .flatten()
                        .ok_or(RowError::Corrupt("key too short"))?,
                ),
                Place::Slot(s) => self.read_slot(&p, s, c)?,
            });
        }
        let has_ext = fields.iter().any(|f| matches!(f, Stored::External { .. }));
        if has_ext != (p.info & INFO_EXTERNAL != 0) {
            return Err(RowError::Corrupt("external flag differs from the fields"));
        }
        Ok(RecordFields {
            fields,
            sys: SysFields {
                trx_id: TrxId(get_uint(rec, p.sys, TRX_ID_SIZE)?),
                roll_ptr: RollPtr(get_uint(rec, p.sys + TRX_ID_SIZE, ROLL_PTR_SIZE)?),
                row_id,
            },
            delete_marked: p.info & INFO_DELETED != 0,
        })
    }

    /// The values of a record straight from its bytes, for reads that hand rows to a
    /// caller: columns outside `cols` (`None`: every column is read) come back as NULL
    /// without being decoded, and an off-page value in `cols` is read with `fetch`.
    /// Skips [`RowLayout::decode`]'s intermediate fields and its copy of each key value:
    /// a read of 100 rows decodes 100 records, and this path was a fifth of
    /// oltp_read_only's instructions.
    pub fn decode_values<E: From<RowError>>(
        &self,
        rec: &[u8],
        cols: Option<&[bool]>,
        mut fetch: impl FnMut(&ExternRef) -> Result<Vec<u8>, E>,
    ) -> Result<Vec<Value>, E> {
        let p = self.parse(rec)?;
        let last_end = match p.ends.len() / 2 {
            0 => 0,
            n => usize::from(end_at(p.ends, n - 1)? & !VAR_EXTERNAL),
        };
        if last_end != p.var.len() {
            return Err(RowError::Corrupt("record length differs from its fields").into());
        }
        let wanted = |c: usize| cols.is_none_or(|m| m.get(c).copied().unwrap_or(true));
        // The key's values as a column asks for them: a one-part key (the common primary
        // key) read in place, a longer one decoded once (its parts are in key order, not
        // the columns').
        let mut keyvals: Vec<Option<Value>> = Vec::new();
        let mut key_part = |n: usize| -> Result<Option<Value>, RowError> {
            if self.key.parts().len() == 1 {
                return self.key.decode_part_at(p.key, n);
            }
            if keyvals.is_empty() {
                keyvals = self.key.decode_parts(p.key)?;
            }
            Ok(keyvals.get_mut(n).and_then(Option::take))
        };
        let mut out = Vec::with_capacity(self.columns.len());
        let mut has_ext = false;
        for (c, place) in self.places.iter().enumerate() {
            if !wanted(c) {
                out.push(Value::Null);
                continue;
            }
            out.push(match *place {
                Place::Key(n) => key_part(n)?.ok_or(RowError::Corrupt("key too short"))?,
                Place::Slot(s) => match self.read_slot(&p, s, c)? {
                    Stored::Inline(v) => v,
                    Stored::External { r, prefix } => {
                        has_ext = true;
                        let bytes = fetch(&r)?;
                        if bytes.len() as u64 != r.len || !bytes.starts_with(&prefix) {
                            return Err(RowError::Corrupt(
                                "off-page value differs from its reference",
                            )
                            .into());
                        }
                        self.bytes_to_value(c, bytes)?
                    }
                },
            });
        }
        // With every column read, the record's flag must agree with its fields (as in
        // `decode`); a projection may skip the off-page ones.
        if cols.is_none() && has_ext != (p.info & INFO_EXTERNAL != 0) {
            return Err(RowError::Corrupt("external flag differs from the fields").into());
        }
        Ok(out)
    }

    /// Decodes one column (table order) without decoding the others.
    pub fn field(&self, rec: &[u8], column: usize) -> Result<Stored, RowError> {
        let p = self.parse(rec)?;
        match self.places.get(column) {
            Some(Place::Key(n)) => Ok(Stored::Inline(
                self.key
                    .decode_part_at(p.key, *n)?
                    .ok_or(RowError::Corrupt("key part without its value"))?,
            )),
            Some(Place::Slot(s)) => self.read_slot(&p, *s, column),
            None => Err(RowError::Schema(format!("no column {column}"))),
        }
    }

    fn read_slot(&self, p: &Parsed<'_>, s: usize, col: usize) -> Result<Stored, RowError> {
        if s >= p.n {
            // Written before the column was added: its instant value (parse checked that
            // p.n >= min_slots).
            return self
                .instant
                .get(s - self.min_slots)
                .cloned()
                .map(Stored::Inline)
                .ok_or(RowError::Corrupt("field count differs from the table's"));
        }
        let slot = self.slots[s];
        let ty = self.columns[col].ty;
        let is_null = slot
            .null_bit
            .is_some_and(|b| p.nulls[b / 8] >> (b % 8) & 1 == 1);
        match slot.kind {
            SlotKind::Fixed { off, size } => {
                if is_null {
                    return Ok(Stored::Inline(Value::Null));
                }
                decode_fixed(&self.columns[col], &p.fixed[off..off + size]).map(Stored::Inline)
            }
            SlotKind::Var(n) => {
                let start = if n == 0 {
                    0
                } else {
                    usize::from(end_at(p.ends, n - 1)? & !VAR_EXTERNAL)
                };
                let e = end_at(p.ends, n)?;
                let end = usize::from(e & !VAR_EXTERNAL);
                if start > end || end > p.var.len() {
                    return Err(RowError::Corrupt("variable-length field offsets"));
                }
                let bytes = &p.var[start..end];
                if is_null {
                    return if bytes.is_empty() && e & VAR_EXTERNAL == 0 {
                        Ok(Stored::Inline(Value::Null))
                    } else {
                        Err(RowError::Corrupt("NULL field with bytes"))
                    };
                }
                if e & VAR_EXTERNAL != 0 {
                    let (r, prefix) = ExternRef::decode(bytes)?;
                    if r.len > ty.max_bytes() || prefix.len() > usize::from(self.extern_prefix) {
                        return Err(RowError::Corrupt("off-page value too long for its column"));
                    }
                    return Ok(Stored::External {
                        r,
                        prefix: prefix.to_vec(),
                    });
                }
                if bytes.len() as u64 > ty.max_bytes() {
                    return Err(RowError::Corrupt("value too long for its column"));
                }
                self.bytes_to_value(col, bytes.to_vec()).map(Stored::Inline)
            }
        }
    }

    fn bytes_to_value(&self, col: usize, bytes: Vec<u8>) -> Result<Value, RowError> {
        if self.columns.get(col).is_some_and(|c| c.ty.is_string()) {
            String::from_utf8(bytes)
                .map(Value::Str)
                .map_err(|_| RowError::Corrupt("string is not UTF-8"))
        } else {
            Ok(Value::Bytes(bytes))
        }
    }
}

fn row_id_column() -> Column {
    Column::new(
        "DB_ROW_ID",
        ColumnType::Int {
            width: IntWidth::Big,
            unsigned: true,
        },
    )
}

fn end_at(ends: &[u8], n: usize) -> Result<u16, RowError> {
    get_u16(ends, 2 * n)
}

/// The bytes a record holds for a (not NULL) value `v` of `col`: its fixed encoding, or the
/// string's UTF-8 or the binary's bytes. Used for an instantly added column's value in the
/// catalog ([`InstantValue::Field`]).
pub fn encode_field(col: &Column, v: &Value) -> Result<Vec<u8>, RowError> {
    let v = col.canonical(v)?;
    if matches!(*v, Value::Null) {
        return Err(RowError::Schema(format!(
            "column `{}`: NULL has no field bytes",
            col.name
        )));
    }
    Ok(match col.ty.fixed_size() {
        Some(size) => {
            let mut out = vec![0u8; size];
            encode_fixed(col, &v, &mut out);
            out
        }
        None => RowLayout::var_bytes(&v).to_vec(),
    })
}

/// The value of field bytes made by [`encode_field`], checked as a record's would be.
pub fn decode_field(col: &Column, b: &[u8]) -> Result<Value, RowError> {
    match col.ty.fixed_size() {
        Some(size) if size == b.len() => decode_fixed(col, b),
        Some(_) => Err(RowError::Corrupt("fixed-size field of the wrong length")),
        None if b.len() as u64 > col.ty.max_bytes() => {
            Err(RowError::Corrupt("value too long for its column"))
        }
        None if col.ty.is_string() => String::from_utf8(b.to_vec())
            .map(Value::Str)
            .map_err(|_| RowError::Corrupt("string is not UTF-8")),
        None => Ok(Value::Bytes(b.to_vec())),
    }
}

fn encode_fixed(col: &Column, v: &Value, out: &mut [u8]) {
    let (ty, n) = (col.ty, out.len());
    match v {
        // ENUM: the member's index (`canonical` made `v` a member or '').
        Value::Str(s) if ty.is_enum() => {
            let i = col.member_index(s).unwrap_or(0);
            out.copy_from_slice(&u64::from(i).to_le_bytes()[..n]);
        }
        // SET: the bitmask of its members (`canonical` made every part a member).
        Value::Str(s) if ty.is_set() => {
            let m = col.set_mask(s).unwrap_or(0);
            out.copy_from_slice(&m.to_le_bytes()[..n]);
        }
        Value::UInt(y) if ty == ColumnType::Year => out[0] = super::value::year_byte(*y),
        Value::Time(t) => out.copy_from_slice(&t.biased().to_le_bytes()[..n]),
        Value::Int(i) => out.copy_from_slice(&i.to_le_bytes()[..n]),
        Value::UInt(u) => out.copy_from_slice(&u.to_le_bytes()[..n]),
        Value::Double(d) if matches!(ty, ColumnType::Float) => {
            out.copy_from_slice(&(*d as f32).to_bits().to_le_bytes())
        }
        Value::Double(d) => out.copy_from_slice(&d.to_bits().to_le_bytes()),
        Value::Decimal(d) => out.copy_from_slice(&d.unscaled.to_le_bytes()[..n]),
        Value::Bytes(b) => out.copy_from_slice(b),
        Value::Date(d) => out.copy_from_slice(&d.packed().to_le_bytes()[..3]),
        Value::DateTime(dt) => out.copy_from_slice(&dt.packed().to_le_bytes()),
        // NULL: zeros. Nothing else reaches a fixed field after `canonical`.
        _ => debug_assert!(matches!(v, Value::Null), "{v:?} in a fixed field"),
    }
}

fn decode_fixed(col: &Column, b: &[u8]) -> Result<Value, RowError> {
    let (ty, n) = (col.ty, b.len());
    let mut a = [0u8; 16];
    a[..n.min(16)].copy_from_slice(&b[..n.min(16)]);
    let raw = u128::from_le_bytes(a);
    let signed = || {
        let shift = 128 - 8 * n as u32;
        ((raw << shift) as i128) >> shift
    };
    Ok(match ty {
        ColumnType::Int { unsigned: true, .. } => Value::UInt(raw as u64),
        ColumnType::Year => super::value::year_of_byte(raw as u8),
        ColumnType::Int { .. } => Value::Int(signed() as i64),
        ColumnType::Bit { bits } => {
            let u = raw as u64;
            if n != super::value::bit_bytes(bits) || u > super::value::bit_max(bits) {
                return Err(RowError::Corrupt("BIT value wider than its column"));
            }
            Value::UInt(u)
        }
        ColumnType::Time { .. } => Value::Time(
            super::value::Time::unbias(raw as u64).map_err(|_| RowError::Corrupt("bad TIME"))?,
        ),
        ColumnType::Float => {
            let f = f32::from_bits(raw as u32);
            if !f.is_finite() {
                return Err(RowError::Corrupt("non-finite FLOAT"));
            }
            Value::Double(f64::from(f))
        }
        ColumnType::Double => {
            let d = f64::from_bits(raw as u64);
            if !d.is_finite() {
                return Err(RowError::Corrupt("non-finite DOUBLE"));
            }
            Value::Double(d)
        }
        ColumnType::Decimal { precision, scale } => {
            debug_assert_eq!(n, decimal_bytes(precision));
            let u = signed();
            if u.abs() >= pow10(precision) {
                return Err(RowError::Corrupt("DECIMAL out of its precision"));
            }
            Value::Decimal(Decimal::new(u, scale))
        }
        ColumnType::Binary { .. } => Value::Bytes(b.to_vec()),
        ColumnType::Date => {
            Value::Date(Date::unpack(raw as u32).map_err(|_| RowError::Corrupt("bad DATE"))?)
        }
        ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => Value::DateTime(
            DateTime::unpack(raw as u64).map_err(|_| RowError::Corrupt("bad DATETIME"))?,
        ),
        ColumnType::Enum { .. } => enum_value(col, raw)?,
        ColumnType::Set { .. } => set_value(col, raw)?,
        _ => return Err(RowError::Corrupt("variable-length type in a fixed field")),
    })
}

/// The ENUM member at stored index `raw`.
pub(crate) fn enum_value(col: &Column, raw: u128) -> Result<Value, RowError> {
    u16::try_from(raw)
        .ok()
        .and_then(|i| col.member_name(i))
        .map(|m| Value::Str(m.to_string()))
        .ok_or(RowError::Corrupt("ENUM index past its members"))
}

/// The SET value of stored bitmask `raw`.
pub(crate) fn set_value(col: &Column, raw: u128) -> Result<Value, RowError> {
    u64::try_from(raw)
        .ok()
        .and_then(|m| col.set_text(m))
        .map(Value::Str)
        .ok_or(RowError::Corrupt("SET bit without a member"))
}

/// The info byte and key length of a record (clustered or secondary), bounds-checked.
pub(crate) fn info_and_key_len(rec: &[u8]) -> Result<(u8, usize), RowError> {
    let info = *rec.first().ok_or(RowError::Corrupt("empty record"))?;
    if info & !INFO_KNOWN != 0 {
        return Err(RowError::Corrupt("unknown info bits"));
    }
    let k = usize::from(get_u16(rec, 1)?);
    if rec.len() < OFF_KEY + k + TRX_ID_SIZE {
        return Err(RowError::Corrupt("key length past the record"));
    }
    Ok((info, k))
}

fn sys_at(rec: &[u8], extra: usize) -> Result<usize, RowError> {
    let (_, k) = info_and_key_len(rec)?;
    let at = OFF_KEY + k;
    if rec.len() < at + extra {
        return Err(RowError::Corrupt("record too short for its hidden columns"));
    }
    Ok(at)
}

/// The clustered key of a record, for `memcmp` against a search key.
pub fn key(rec: &[u8]) -> Result<&[u8], RowError> {
    let (_, k) = info_and_key_len(rec)?;
    Ok(&rec[OFF_KEY..OFF_KEY + k])
}

/// DB_TRX_ID, read in place.
pub fn trx_id(rec: &[u8]) -> Result<TrxId, RowError> {
    let at = sys_at(rec, SYS_SIZE)?;
    get_uint(rec, at, TRX_ID_SIZE).map(TrxId)
}

/// DB_ROLL_PTR, read in place.
pub fn roll_ptr(rec: &[u8]) -> Result<RollPtr, RowError> {
    let at = sys_at(rec, SYS_SIZE)? + TRX_ID_SIZE;
    get_uint(rec, at, ROLL_PTR_SIZE).map(RollPtr)
}

/// Overwrites DB_TRX_ID and DB_ROLL_PTR in place (an update that keeps the record's size).
pub fn set_sys(rec: &mut [u8], trx: TrxId, roll: RollPtr) -> Result<(), RowError> {
    debug_assert!(trx <= TrxId::MAX && roll.0 >> 56 == 0);
    let at = sys_at(rec, SYS_SIZE)?;
    rec[at..at + TRX_ID_SIZE].copy_from_slice(&trx.0.to_le_bytes()[..TRX_ID_SIZE]);
    rec[at + TRX_ID_SIZE..at + SYS_SIZE].copy_from_slice(&roll.0.to_le_bytes()[..ROLL_PTR_SIZE]);
    Ok(())
}

pub fn is_delete_marked(rec: &[u8]) -> Result<bool, RowError> {
    Ok(info_and_key_len(rec)?.0 & INFO_DELETED != 0)
}

/// Sets or clears the delete mark (MVCC: a DELETE marks, purge removes).
pub fn set_delete_marked(rec: &mut [u8], deleted: bool) -> Result<(), RowError> {
    info_and_key_len(rec)?;
    if deleted {
        rec[0] |= INFO_DELETED;
    } else {
        rec[0] &= !INFO_DELETED;
    }
    Ok(())
}

/// Some field is stored off-page.
pub fn has_external(rec: &[u8]) -> Result<bool, RowError> {
    Ok(info_and_key_len(rec)?.0 & INFO_EXTERNAL != 0)
}
