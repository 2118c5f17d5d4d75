//! Memcomparable keys: `memcmp` of two encoded tuples equals their SQL order
//! (docs/row-format.md, "Memcomparable keys").
//!
//! Every field encoding is prefix-free, so concatenating fields keeps the tuple order, and
//! inverting a field's bytes reverses its order exactly (descending key parts).

use super::collation::Collation;
use super::value::{decimal_bytes, pow10, Column, ColumnType, Date, DateTime, Decimal, Value};
use super::{RowError, RowLimits};

/// NULL marker of a nullable key part: sorts before [`NOT_NULL`].
pub const NULL: u8 = 0x00;
pub const NOT_NULL: u8 = 0x01;
/// A zero byte inside a string is written as `0x00 ESCAPE`.
pub const ESCAPE: u8 = 0xFF;
/// Strings end with `0x00 TERMINATOR`, below every continuation.
pub const TERMINATOR: u8 = 0x00;

/// One column of a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPart {
    pub column: Column,
    /// Index only the first `prefix` characters (strings) or bytes (binary). Required for
    /// TEXT/BLOB.
    pub prefix: Option<u32>,
    pub descending: bool,
}

impl KeyPart {
    pub fn new(column: Column) -> Self {
        KeyPart {
            column,
            prefix: None,
            descending: false,
        }
    }
    pub fn prefix(mut self, n: u32) -> Self {
        self.prefix = Some(n);
        self
    }
    pub fn descending(mut self) -> Self {
        self.descending = true;
        self
    }

    /// A string part: the key holds its collation's sort key, from which the value cannot
    /// be read back (the record keeps the value itself).
    pub fn holds_weights(&self) -> bool {
        self.column.ty.is_string() && !self.column.ty.has_members()
    }
}

/// The parts of one key, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyLayout {
    parts: Vec<KeyPart>,
}

impl KeyLayout {
    pub fn new(parts: Vec<KeyPart>) -> Result<Self, RowError> {
        for p in &parts {
            p.column.ty.check().map_err(RowError::Schema)?;
            if p.column.ty.is_lob() && p.prefix.is_none() {
                return Err(RowError::Schema(format!(
                    "TEXT/BLOB column `{}` can be indexed only by a prefix",
                    p.column.name
                )));
            }
            if p.prefix == Some(0) {
                return Err(RowError::Schema(format!(
                    "key prefix of `{}` is zero",
                    p.column.name
                )));
            }
            if p.prefix.is_some()
                && !matches!(
                    p.column.ty,
                    ColumnType::Char { .. }
                        | ColumnType::VarChar { .. }
                        | ColumnType::Text(_)
                        | ColumnType::Binary { .. }
                        | ColumnType::VarBinary { .. }
                        | ColumnType::Blob(_)
                )
            {
                return Err(RowError::Schema(format!(
                    "key prefix on non-string column `{}`",
                    p.column.name
                )));
            }
        }
        Ok(KeyLayout { parts })
    }

    pub fn parts(&self) -> &[KeyPart] {
        &self.parts
    }

    /// The longest encoding a key of this layout can have (before the `max_key_bytes`
    /// check): a NULL marker per nullable part, fixed widths, and strings with every byte
    /// escaped plus the terminator.
    pub fn max_encoded_len(&self) -> u64 {
        self.parts
            .iter()
            .map(|p| {
                let marker = u64::from(p.column.nullable);
                let body = match (p.column.ty.fixed_size(), p.prefix) {
                    (Some(n), None) => n as u64,
                    (_, prefix) if p.holds_weights() => {
                        let max_chars = match p.column.ty {
                            ColumnType::Char { max_chars } | ColumnType::VarChar { max_chars } => {
                                u64::from(max_chars)
                            }
                            // A character is at least a byte.
                            other => other.max_bytes(),
                        };
                        let chars = prefix.map_or(max_chars, |n| max_chars.min(u64::from(n)));
                        p.column.collation.max_sort_key_len(chars)
                    }
                    (_, prefix) => {
                        let max = p.column.ty.max_bytes();
                        let m = prefix.map_or(max, |n| max.min(u64::from(n)));
                        2 * m + 2
                    }
                };
                marker + body
            })
            .sum()
    }

    /// Appends the key of `values` (one per part, or fewer for a search prefix) to `out`.
    /// Values are validated against their columns; the whole key must fit `limits`.
    pub fn encode(
        &self,
        values: &[Value],
        limits: &RowLimits,
        out: &mut Vec<u8>,
    ) -> Result<(), RowError> {
        if values.len() > self.parts.len() {
            return Err(RowError::WrongColumnCount {
                expected: self.parts.len(),
                found: values.len(),
            });
        }
        let start = out.len();
        // Most keys are a few integers or short strings: one allocation instead of the
        // doubling from an empty vector (four per inserted row).
        out.reserve(16 * self.parts.len());
        for (p, v) in self.parts.iter().zip(values) {
            let v = p.column.canonical(v)?;
            encode_part(p, &v, out);
        }
        let len = out.len() - start;
        if len > limits.max_key_bytes {
            out.truncate(start);
            return Err(RowError::KeyTooLong {
                len,
                max: limits.max_key_bytes,
            });
        }
        Ok(())
    }

    /// Whether some part is a string, whose value the key does not hold
    /// ([`KeyPart::holds_weights`]).
    pub fn holds_weights(&self) -> bool {
        self.parts.iter().any(KeyPart::holds_weights)
    }

    /// Decodes a whole key (exactly `key`, nothing left over). Prefix parts decode to the
    /// prefix. A key with a string part is a schema error: read those from the record.
    pub fn decode(&self, key: &[u8]) -> Result<Vec<Value>, RowError> {
        self.decode_parts(key)?
            .into_iter()
            .zip(&self.parts)
            .map(|(v, p)| {
                v.ok_or_else(|| {
                    RowError::Schema(format!(
                        "key part `{}` holds collation weights, not the value",
                        p.column.name
                    ))
                })
            })
            .collect()
    }

    /// Decodes a whole key; `None` for the string parts, whose values it does not hold.
    pub fn decode_parts(&self, key: &[u8]) -> Result<Vec<Option<Value>>, RowError> {
        let mut r = Reader::new(key);
        let mut vals = Vec::with_capacity(self.parts.len());
        for p in &self.parts {
            vals.push(decode_part(p, &mut r)?);
        }
        if r.pos != key.len() {
            return Err(RowError::corrupt("trailing bytes after the key"));
        }
        Ok(vals)
    }

    /// Byte length of the first `n` parts of `key`, which starts with them.
    pub fn skip(&self, key: &[u8], n: usize) -> Result<usize, RowError> {
        let mut r = Reader::new(key);
        for p in self.parts.iter().take(n) {
            decode_part(p, &mut r)?;
        }
        Ok(r.pos)
    }

    /// Decodes the part at `index` only (`None`: a string part, see
    /// [`KeyPart::holds_weights`]).
    pub fn decode_part_at(&self, key: &[u8], index: usize) -> Result<Option<Value>, RowError> {
        let p = self
            .parts
            .get(index)
            .ok_or_else(|| RowError::Schema(format!("no key part {index}")))?;
        let off = self.skip(key, index)?;
        let mut r = Reader::new(key);
        r.pos = off;
        decode_part(p, &mut r)
    }
}

fn prefix_of(p: &KeyPart, v: &Value) -> Value {
    match (p.prefix, v) {
        (Some(n), Value::Str(s)) => match s.char_indices().nth(n as usize) {
            Some((cut, _)) => Value::Str(s[..cut].to_string()),
            None => v.clone(),
        },
        (Some(n), Value::Bytes(b)) if b.len() > n as usize => {
            Value::Bytes(b[..n as usize].to_vec())
        }
        _ => v.clone(),
    }
}

fn encode_part(p: &KeyPart, v: &Value, out: &mut Vec<u8>) {
    let start = out.len();
    if p.column.nullable {
        if matches!(v, Value::Null) {
            out.push(NULL);
            invert_if(p.descending, &mut out[start..]);
            return;
        }
        out.push(NOT_NULL);
    }
    let v = prefix_of(p, v);
    match (p.column.ty, &v) {
        (ColumnType::Int { width, .. }, Value::Int(i)) => {
            // Two's complement in the column's width with its sign bit flipped: a bias of
            // 2^(8w-1), so negative values sort first.
            let w = width.bytes();
            let n = out.len();
            out.extend_from_slice(&(*i as u64).to_be_bytes()[8 - w..]);
            out[n] ^= 0x80;
        }
        (ColumnType::Int { width, .. }, Value::UInt(u)) => {
            out.extend_from_slice(&u.to_be_bytes()[8 - width.bytes()..]);
        }
        (ColumnType::Float, Value::Double(d)) => {
            let f = *d as f32;
            let f = if f == 0.0 { 0.0f32 } else { f };
            let b = f.to_bits();
            let b = if b >> 31 == 1 { !b } else { b ^ (1 << 31) };
            out.extend_from_slice(&b.to_be_bytes());
        }
        (ColumnType::Double, Value::Double(d)) => {
            let d = if *d == 0.0 { 0.0f64 } else { *d };
            let b = d.to_bits();
            let b = if b >> 63 == 1 { !b } else { b ^ (1 << 63) };
            out.extend_from_slice(&b.to_be_bytes());
        }
        (ColumnType::Decimal { precision, .. }, Value::Decimal(d)) => {
            let w = decimal_bytes(precision);
            let be = d.unscaled.to_be_bytes();
            let n = out.len();
            out.extend_from_slice(&be[16 - w..]);
            out[n] ^= 0x80;
        }
        (ColumnType::Binary { .. }, Value::Bytes(b)) if p.prefix.is_none() => {
            out.extend_from_slice(b);
        }
        (ColumnType::Year, Value::UInt(y)) => out.push(super::value::year_byte(*y)),
        (ColumnType::Bit { bits }, Value::UInt(u)) => {
            out.extend_from_slice(&u.to_be_bytes()[8 - super::value::bit_bytes(bits)..]);
        }
        (ColumnType::Time { .. }, Value::Time(t)) => {
            out.extend_from_slice(&t.biased().to_be_bytes()[8 - super::value::TIME_BYTES..]);
        }
        (ColumnType::Enum { members }, Value::Str(s)) => {
            let i = u64::from(p.column.member_index(s).unwrap_or(0));
            out.extend_from_slice(&i.to_be_bytes()[8 - super::value::enum_bytes(members)..]);
        }
        (ColumnType::Set { members }, Value::Str(s)) => {
            let m = p.column.set_mask(s).unwrap_or(0);
            out.extend_from_slice(&m.to_be_bytes()[8 - super::value::set_bytes(members)..]);
        }
        (_, Value::Str(s)) => p.column.collation.sort_key(s, out),
        (_, Value::Bytes(b)) => escape(b, out),
        (_, Value::Date(d)) => out.extend_from_slice(&d.packed().to_be_bytes()[1..]),
        (_, Value::DateTime(dt)) => out.extend_from_slice(&dt.packed().to_be_bytes()),
        // `canonical` guarantees the value matches the column.
        _ => debug_assert!(false, "value {v:?} does not match key part {p:?}"),
    }
    invert_if(p.descending, &mut out[start..]);
}

fn invert_if(descending: bool, bytes: &mut [u8]) {
    if descending {
        bytes.iter_mut().for_each(|b| *b = !*b);
    }
}

fn escape(bytes: &[u8], out: &mut Vec<u8>) {
    out.reserve(bytes.len() + 2);
    for &b in bytes {
        out.push(b);
        if b == 0 {
            out.push(ESCAPE);
        }
    }
    out.extend_from_slice(&[0, TERMINATOR]);
}

/// Reads a key, undoing the inversion of descending parts on the fly.
struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
    mask: u8,
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8]) -> Self {
        Reader { b, pos: 0, mask: 0 }
    }
    fn byte(&mut self) -> Result<u8, RowError> {
        let v = *self
            .b
            .get(self.pos)
            .ok_or_else(|| RowError::corrupt("key ends inside a field"))?;
        self.pos += 1;
        Ok(v ^ self.mask)
    }
    /// `n <= 16` bytes, big-endian, into the low bytes of a u128.
    fn be(&mut self, n: usize) -> Result<u128, RowError> {
        let mut v = 0u128;
        for _ in 0..n {
            v = v << 8 | u128::from(self.byte()?);
        }
        Ok(v)
    }
    fn bytes(&mut self, n: usize) -> Result<Vec<u8>, RowError> {
        (0..n).map(|_| self.byte()).collect()
    }
    fn unescape(&mut self) -> Result<Vec<u8>, RowError> {
        let mut v = Vec::new();
        loop {
            match self.byte()? {
                0 => match self.byte()? {
                    ESCAPE => v.push(0),
                    TERMINATOR => return Ok(v),
                    _ => return Err(RowError::corrupt("bad escape in a key string")),
                },
                b => v.push(b),
            }
        }
    }
}

fn sign_extend(v: u128, bytes: usize) -> i128 {
    let shift = 128 - 8 * bytes as u32;
    ((v << shift) as i128) >> shift
}

fn decode_part(p: &KeyPart, r: &mut Reader<'_>) -> Result<Option<Value>, RowError> {
    r.mask = if p.descending { 0xFF } else { 0 };
    let v = decode_part_inner(p, r);
    r.mask = 0;
    v
}

fn decode_part_inner(p: &KeyPart, r: &mut Reader<'_>) -> Result<Option<Value>, RowError> {
    if p.column.nullable {
        match r.byte()? {
            NULL => return Ok(Some(Value::Null)),
            NOT_NULL => {}
            _ => return Err(RowError::corrupt("bad NULL marker in a key")),
        }
    }
    if p.holds_weights() {
        let (b, pos, mask) = (r.b, r.pos, r.mask);
        let n = Collation::sort_key_len(|i| b.get(pos + i).map(|x| x ^ mask))
            .ok_or_else(|| RowError::corrupt("bad string sort key in a key"))?;
        if pos + n > b.len() {
            return Err(RowError::corrupt("key ends inside a field"));
        }
        r.pos += n;
        return Ok(None);
    }
    Ok(Some(match p.column.ty {
        ColumnType::Int { width, unsigned } => {
            let w = width.bytes();
            let raw = r.be(w)?;
            if unsigned {
                Value::UInt(raw as u64)
            } else {
                let biased = raw ^ (1u128 << (8 * w - 1));
                Value::Int(sign_extend(biased, w) as i64)
            }
        }
        ColumnType::Float => {
            let b = r.be(4)? as u32;
            let b = if b >> 31 == 1 { b ^ (1 << 31) } else { !b };
            let f = f32::from_bits(b);
            if !f.is_finite() {
                return Err(RowError::corrupt("non-finite FLOAT in a key"));
            }
            Value::Double(f64::from(f))
        }
        ColumnType::Double => {
            let b = r.be(8)? as u64;
            let b = if b >> 63 == 1 { b ^ (1 << 63) } else { !b };
            let d = f64::from_bits(b);
            if !d.is_finite() {
                return Err(RowError::corrupt("non-finite DOUBLE in a key"));
            }
            Value::Double(d)
        }
        ColumnType::Decimal { precision, scale } => {
            let w = decimal_bytes(precision);
            let raw = r.be(w)? ^ (1u128 << (8 * w - 1));
            let u = sign_extend(raw, w);
            if u.abs() >= pow10(precision) {
                return Err(RowError::corrupt("DECIMAL out of its precision in a key"));
            }
            Value::Decimal(Decimal::new(u, scale))
        }
        ColumnType::Binary { len } if p.prefix.is_none() => Value::Bytes(r.bytes(len as usize)?),
        ColumnType::Binary { .. } | ColumnType::VarBinary { .. } | ColumnType::Blob(_) => {
            Value::Bytes(r.unescape()?)
        }
        ColumnType::Date => Value::Date(
            Date::unpack(r.be(3)? as u32).map_err(|_| RowError::corrupt("bad DATE in a key"))?,
        ),
        ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => Value::DateTime(
            DateTime::unpack(r.be(8)? as u64)
                .map_err(|_| RowError::corrupt("bad DATETIME in a key"))?,
        ),
        ColumnType::Enum { members } => {
            super::record::enum_value(&p.column, r.be(super::value::enum_bytes(members))?)?
        }
        ColumnType::Year => super::value::year_of_byte(r.be(1)? as u8),
        ColumnType::Bit { bits } => {
            let u = r.be(super::value::bit_bytes(bits))? as u64;
            if u > super::value::bit_max(bits) {
                return Err(RowError::corrupt(
                    "BIT value wider than its column in a key",
                ));
            }
            Value::UInt(u)
        }
        ColumnType::Time { .. } => Value::Time(
            super::value::Time::unbias(r.be(super::value::TIME_BYTES)? as u64)
                .map_err(|_| RowError::corrupt("bad TIME in a key"))?,
        ),
        ColumnType::Set { members } => {
            super::record::set_value(&p.column, r.be(super::value::set_bytes(members))?)?
        }
        ColumnType::Char { .. } | ColumnType::VarChar { .. } | ColumnType::Text(_) => {
            return Err(RowError::corrupt("string key part read as a value"))
        }
    }))
}
