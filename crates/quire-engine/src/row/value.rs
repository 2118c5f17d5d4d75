//! Column types, values, and the validation of a value against its column.

use std::borrow::Cow;

use super::collation::Collation;
use std::cmp::Ordering;
use std::fmt;

use super::RowError;

/// Width of an integer column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntWidth {
    Tiny,
    Small,
    Medium,
    Int,
    Big,
}

impl IntWidth {
    pub fn bytes(self) -> usize {
        match self {
            IntWidth::Tiny => 1,
            IntWidth::Small => 2,
            IntWidth::Medium => 3,
            IntWidth::Int => 4,
            IntWidth::Big => 8,
        }
    }
    fn bits(self) -> u32 {
        self.bytes() as u32 * 8
    }
    /// The range of a signed column of this width.
    pub fn signed_range(self) -> (i64, i64) {
        let b = self.bits();
        if b == 64 {
            (i64::MIN, i64::MAX)
        } else {
            (-(1i64 << (b - 1)), (1i64 << (b - 1)) - 1)
        }
    }
    /// The display width a column of this width shows when declared without one
    /// (MariaDB's: the characters of its longest value, sign included).
    pub fn default_display(self, unsigned: bool) -> u8 {
        let signed = match self {
            IntWidth::Tiny => 4,
            IntWidth::Small => 6,
            IntWidth::Medium => 9,
            IntWidth::Int => 11,
            // 20 digits unsigned; signed, 19 and the sign.
            IntWidth::Big => return 20,
        };
        signed - u8::from(unsigned)
    }
    /// The largest value of an unsigned column of this width.
    pub fn unsigned_max(self) -> u64 {
        let b = self.bits();
        if b == 64 {
            u64::MAX
        } else {
            (1u64 << b) - 1
        }
    }
}

/// TINY/regular/MEDIUM/LONG TEXT and BLOB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LobSize {
    Tiny,
    Regular,
    Medium,
    Long,
}

impl LobSize {
    /// Maximum length in bytes.
    pub fn max_bytes(self) -> u64 {
        match self {
            LobSize::Tiny => 255,
            LobSize::Regular => 65_535,
            LobSize::Medium => 16_777_215,
            LobSize::Long => 4_294_967_295,
        }
    }
}

/// Largest DECIMAL precision: what an `i128` holds exactly.
pub const DECIMAL_MAX_PRECISION: u8 = 38;
/// Largest fractional-seconds precision.
pub const FSP_MAX: u8 = 6;
/// Bytes per character a UTF-8 (utf8mb4) string may take.
pub const MAX_BYTES_PER_CHAR: u64 = 4;

/// The SQL type of a column (docs/row-format.md, "Column types and values").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColumnType {
    Int {
        width: IntWidth,
        unsigned: bool,
    },
    Float,
    Double,
    Decimal {
        precision: u8,
        scale: u8,
    },
    Char {
        max_chars: u32,
    },
    VarChar {
        max_chars: u32,
    },
    Binary {
        len: u32,
    },
    VarBinary {
        max_len: u32,
    },
    Text(LobSize),
    Blob(LobSize),
    Date,
    DateTime {
        fsp: u8,
    },
    Timestamp {
        fsp: u8,
    },
    /// ENUM of `members` names (kept in [`Column::members`]): stored as the 1-based index
    /// of the member, 0 for the error value `''`.
    Enum {
        members: u16,
    },
    /// SET of `members` names (1..=64, in [`Column::members`]): stored as the bitmask of
    /// the members present, bit i for member i + 1.
    Set {
        members: u8,
    },
    /// YEAR (MariaDB's YEAR(4)): `UInt` 0 (the zero year 0000) or 1901..=2155, stored in
    /// one byte as MariaDB does: 0, or the year - 1900.
    Year,
    /// TIME(fsp): a signed duration of at most 838:59:59.999999 (`Value::Time`), stored as
    /// its microseconds in 6 bytes.
    Time {
        fsp: u8,
    },
    /// BIT(M), 1 <= M <= 64: `UInt` below 2^M, stored in [`bit_bytes`] bytes.
    Bit {
        bits: u8,
    },
}

impl ColumnType {
    /// The record bytes of a fixed-size type, `None` for a variable-length one.
    pub fn fixed_size(self) -> Option<usize> {
        Some(match self {
            ColumnType::Int { width, .. } => width.bytes(),
            ColumnType::Float => 4,
            ColumnType::Double => 8,
            ColumnType::Decimal { precision, .. } => decimal_bytes(precision),
            ColumnType::Binary { len } => len as usize,
            ColumnType::Date => 3,
            ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => 8,
            ColumnType::Enum { members } => enum_bytes(members),
            ColumnType::Set { members } => set_bytes(members),
            ColumnType::Year => 1,
            ColumnType::Time { .. } => TIME_BYTES,
            ColumnType::Bit { bits } => bit_bytes(bits),
            ColumnType::Char { .. }
            | ColumnType::VarChar { .. }
            | ColumnType::VarBinary { .. }
            | ColumnType::Text(_)
            | ColumnType::Blob(_) => return None,
        })
    }

    /// TEXT and BLOB: indexable only by a prefix.
    pub fn is_lob(self) -> bool {
        matches!(self, ColumnType::Text(_) | ColumnType::Blob(_))
    }

    /// Holds `Value::Str` (as opposed to `Value::Bytes`) and has a collation: CHAR,
    /// VARCHAR, TEXT, and ENUM and SET (whose key part is a number, not a sort key).
    pub fn is_string(self) -> bool {
        matches!(
            self,
            ColumnType::Char { .. }
                | ColumnType::VarChar { .. }
                | ColumnType::Text(_)
                | ColumnType::Enum { .. }
                | ColumnType::Set { .. }
        )
    }

    /// ENUM: a string stored as a member number.
    pub fn is_enum(self) -> bool {
        matches!(self, ColumnType::Enum { .. })
    }

    /// SET: a string stored as a bitmask of members.
    pub fn is_set(self) -> bool {
        matches!(self, ColumnType::Set { .. })
    }

    /// ENUM or SET: a string of declared members, stored as a number.
    pub fn has_members(self) -> bool {
        self.is_enum() || self.is_set()
    }

    /// Largest value in bytes of a variable-length type.
    pub fn max_bytes(self) -> u64 {
        match self {
            ColumnType::Char { max_chars } | ColumnType::VarChar { max_chars } => {
                u64::from(max_chars) * MAX_BYTES_PER_CHAR
            }
            ColumnType::VarBinary { max_len } => u64::from(max_len),
            ColumnType::Text(s) | ColumnType::Blob(s) => s.max_bytes(),
            other => other.fixed_size().unwrap_or(0) as u64,
        }
    }

    /// Checks the type's own parameters.
    pub fn check(self) -> Result<(), String> {
        match self {
            ColumnType::Decimal { precision, scale } => {
                if precision == 0 || precision > DECIMAL_MAX_PRECISION {
                    return Err(format!(
                        "DECIMAL precision {precision} is outside 1..={DECIMAL_MAX_PRECISION}"
                    ));
                }
                if scale > precision {
                    return Err(format!(
                        "DECIMAL scale {scale} exceeds precision {precision}"
                    ));
                }
            }
            ColumnType::DateTime { fsp }
            | ColumnType::Timestamp { fsp }
            | ColumnType::Time { fsp }
                if fsp > FSP_MAX =>
            {
                return Err(format!("fractional seconds precision {fsp} exceeds 6"));
            }
            ColumnType::Binary { len } if len > 255 => {
                return Err(format!("BINARY({len}) exceeds 255"));
            }
            ColumnType::Char { max_chars } if max_chars > 255 => {
                return Err(format!("CHAR({max_chars}) exceeds 255"));
            }
            ColumnType::VarChar { max_chars } if max_chars > 16_383 => {
                return Err(format!("VARCHAR({max_chars}) exceeds 16383 characters"));
            }
            ColumnType::VarBinary { max_len } if max_len > 65_535 => {
                return Err(format!("VARBINARY({max_len}) exceeds 65535"));
            }
            ColumnType::Enum { members: 0 } => {
                return Err("ENUM has no members".into());
            }
            ColumnType::Bit { bits } if bits == 0 || bits > BIT_MAX_BITS => {
                return Err(format!("BIT({bits}) is outside 1..={BIT_MAX_BITS}"));
            }
            ColumnType::Set { members } if members == 0 || members > SET_MAX_MEMBERS => {
                return Err(format!(
                    "SET has {members} members, not 1..={SET_MAX_MEMBERS}"
                ));
            }
            _ => {}
        }
        Ok(())
    }
}

/// Record (and key) bytes of DECIMAL(p, _): the smallest width whose signed range holds
/// `±(10^p - 1)`.
pub fn decimal_bytes(precision: u8) -> usize {
    let max = pow10(precision.min(DECIMAL_MAX_PRECISION)) - 1;
    (1..=16usize)
        .find(|&n| n == 16 || max < (1i128 << (8 * n - 1)))
        .unwrap_or(16)
}

/// Record (and key) bytes of an ENUM of `members` members: the index, 0..=members.
pub fn enum_bytes(members: u16) -> usize {
    if members <= 255 {
        1
    } else {
        2
    }
}

/// Longest ENUM or SET member name, in characters (MariaDB's limit).
pub const ENUM_MEMBER_MAX_CHARS: usize = 255;

/// Most members a SET may have: one bit each in a u64.
pub const SET_MAX_MEMBERS: u8 = 64;

/// Record (and key) bytes of a SET of `members` members, as MariaDB packs it: 1, 2, 3, 4
/// or 8.
pub fn set_bytes(members: u8) -> usize {
    match usize::from(members).div_ceil(8) {
        n @ 0..=4 => n.max(1),
        _ => 8,
    }
}

/// YEAR's range besides the zero year 0: 1901..=2155, what one byte of `year - 1900` holds.
pub const YEAR_MIN: u64 = 1901;
pub const YEAR_MAX: u64 = 2155;

/// YEAR's stored byte: 0 for the zero year, else `year - 1900` (order-preserving).
pub(crate) fn year_byte(year: u64) -> u8 {
    if year == 0 {
        0
    } else {
        (year.clamp(YEAR_MIN, YEAR_MAX) - 1900) as u8
    }
}

/// The YEAR of stored byte `b`.
pub(crate) fn year_of_byte(b: u8) -> Value {
    Value::UInt(if b == 0 { 0 } else { 1900 + u64::from(b) })
}

/// The widest BIT column: one u64.
pub const BIT_MAX_BITS: u8 = 64;

/// Record (and key) bytes of BIT(M): the fewest whole bytes holding M bits.
pub fn bit_bytes(bits: u8) -> usize {
    usize::from(bits.clamp(1, BIT_MAX_BITS)).div_ceil(8)
}

/// The largest value of BIT(M): M ones.
pub fn bit_max(bits: u8) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Record (and key) bytes of a TIME: a 48-bit signed count of microseconds (43 bits hold
/// the range).
pub const TIME_BYTES: usize = 6;

pub(crate) fn pow10(p: u8) -> i128 {
    10i128.pow(u32::from(p.min(DECIMAL_MAX_PRECISION)))
}

/// A column of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub ty: ColumnType,
    pub nullable: bool,
    /// The DEFAULT expression's SQL text (`'0'`, `NULL`, `CURRENT_TIMESTAMP`), kept in the
    /// catalog for the SQL layer, which evaluates it; the engine never does. At most
    /// [`DEFAULT_MAX_BYTES`].
    pub default: Option<String>,
    /// How the column's strings compare, in SQL and in keys (ignored for other types).
    pub collation: Collation,
    /// ENUM and SET: the members' names in declaration order (member i has index i + 1 /
    /// bit i); empty for every other type.
    pub members: Vec<String>,
    /// MariaDB's JSON: a LONGTEXT (utf8mb4_bin) whose values must be valid JSON, its
    /// implicit `CHECK (json_valid(c))`. The SQL layer checks values; the engine keeps the
    /// mark (catalog column flag 4) and stores the text as any LONGTEXT.
    pub json: bool,
    /// What rows written before this column was added read for it: set when the column was
    /// added instantly (ALTER TABLE … ADD COLUMN with no rebuild, catalog column flag 8),
    /// `None` when every record holds the column. Instantly added columns are the last of
    /// the table and never in a key (docs/row-format.md, "Instantly added columns").
    pub instant: Option<InstantValue>,
    /// `ON UPDATE current_timestamp()` (TIMESTAMP and DATETIME only, catalog column flag
    /// 16): an UPDATE that changes another column of the row and does not assign this one
    /// sets it to the statement's time. The SQL layer applies it; the engine keeps the mark.
    pub on_update: bool,
    /// The column's `COMMENT '…'` (catalog column flag 32); empty: none, as in MariaDB.
    pub comment: String,
    /// A number's attributes (catalog type tag 18; docs/sql.md, "Number attributes"), kept
    /// for the SQL layer; the engine stores the values as those of the bare type.
    ///
    /// An integer column's declared display width (`INT(5)`, `TINYINT(1)`), 1..=255;
    /// `None` for its type's default. It never limits the values: the SQL layer shows it
    /// (SHOW CREATE TABLE, the result column's length) and pads to it.
    pub display: Option<u8>,
    /// ZEROFILL on an integer column, which is then unsigned: the SQL layer sends its
    /// values padded with zeros to the display width.
    pub zerofill: bool,
    /// UNSIGNED on a FLOAT, DOUBLE or DECIMAL column (an integer's is in its type): the SQL
    /// layer stores no negative value in it.
    pub unsigned: bool,
    /// FLOAT(M,D) / DOUBLE(M,D): M digits in all, D (at most 30, at most M) of them after
    /// the point. The SQL layer rounds values to D decimals and keeps them below
    /// 10^(M-D). `None`: not fixed.
    pub digits: Option<(u8, u8)>,
}

/// The value that records written before an instant ADD COLUMN read for that column: the
/// column's DEFAULT as it was when the column was added, evaluated once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstantValue {
    Null,
    /// The value's bytes as a record field of the column ([`super::record::encode_field`]).
    Field(Vec<u8>),
}

/// The longest DEFAULT text a column may have (the catalog stores it with a u16 length).
pub const DEFAULT_MAX_BYTES: usize = u16::MAX as usize;

impl Column {
    /// A NOT NULL column.
    pub fn new(name: impl Into<String>, ty: ColumnType) -> Self {
        Column {
            name: name.into(),
            ty,
            nullable: false,
            default: None,
            collation: Collation::default(),
            members: Vec::new(),
            json: false,
            instant: None,
            on_update: false,
            comment: String::new(),
            display: None,
            zerofill: false,
            unsigned: false,
            digits: None,
        }
    }

    /// This column with ENUM members `m` (its type's `members` must be `m.len()`).
    pub fn with_members(mut self, m: Vec<String>) -> Self {
        self.members = m;
        self
    }

    /// The 1-based index of the ENUM member `s` equals in the column's collation (PAD
    /// SPACE: trailing spaces do not count); the exact name wins over a collation match.
    pub fn member_index(&self, s: &str) -> Option<u16> {
        let at = |i: usize| u16::try_from(i + 1).ok();
        if let Some(i) = self.members.iter().position(|m| m == s) {
            return at(i);
        }
        self.members
            .iter()
            .position(|m| self.collation.cmp(m, s) == Ordering::Equal)
            .and_then(at)
    }

    /// The member's name at 1-based `index`; `''` for 0, the error value.
    pub fn member_name(&self, index: u16) -> Option<&str> {
        match index {
            0 => Some(""),
            i => self.members.get(usize::from(i) - 1).map(String::as_str),
        }
    }

    /// Checks the member list against the type: ENUM and SET have exactly `members` names,
    /// each at most [`ENUM_MEMBER_MAX_CHARS`] characters (a SET's without a comma, which
    /// separates them in its text); other types none. A JSON column is a LONGTEXT.
    pub fn check_members(&self) -> Result<(), String> {
        self.check_display()?;
        if self.json && self.ty != ColumnType::Text(LobSize::Long) {
            return Err(format!("JSON column `{}` is not a LONGTEXT", self.name));
        }
        let n = match self.ty {
            ColumnType::Enum { members } => usize::from(members),
            ColumnType::Set { members } => usize::from(members),
            _ if !self.members.is_empty() => {
                return Err(format!(
                    "column `{}` has members but is no ENUM or SET",
                    self.name
                ));
            }
            _ => return Ok(()),
        };
        if self.members.len() != n {
            return Err(format!(
                "column `{}` has {} names for {n} members",
                self.name,
                self.members.len()
            ));
        }
        if self
            .members
            .iter()
            .any(|m| m.chars().count() > ENUM_MEMBER_MAX_CHARS)
        {
            return Err(format!("column `{}`: a member is too long", self.name));
        }
        if self.ty.is_set() && self.members.iter().any(|m| m.contains(',')) {
            return Err(format!("SET column `{}`: a member has a comma", self.name));
        }
        Ok(())
    }

    /// The display width the column shows: the declared one, else its type's default
    /// (`None` for a column that is no integer).
    pub fn display_width(&self) -> Option<u8> {
        match self.ty {
            ColumnType::Int { width, unsigned } => Some(
                self.display
                    .unwrap_or_else(|| width.default_display(unsigned)),
            ),
            _ => None,
        }
    }

    /// Checks a number's attributes against its type: a display width (1..=255) and
    /// ZEROFILL only on an integer, which ZEROFILL needs unsigned; UNSIGNED only on FLOAT,
    /// DOUBLE and DECIMAL; (M,D) only on FLOAT and DOUBLE, 1 <= M <= 255, D <= 30, D <= M.
    pub fn check_display(&self) -> Result<(), String> {
        let bad = |what: &str| Err(format!("column `{}`: {what}", self.name));
        let int = matches!(self.ty, ColumnType::Int { .. });
        let real = matches!(self.ty, ColumnType::Float | ColumnType::Double);
        if self.display == Some(0) {
            return bad("display width 0");
        }
        if (self.display.is_some() || self.zerofill) && !int {
            return bad("a display width or ZEROFILL on a type that is no integer");
        }
        if self.zerofill && !matches!(self.ty, ColumnType::Int { unsigned: true, .. }) {
            return bad("ZEROFILL on a signed integer");
        }
        if self.unsigned && !(real || matches!(self.ty, ColumnType::Decimal { .. })) {
            return bad("UNSIGNED attribute on a type that is no FLOAT, DOUBLE or DECIMAL");
        }
        match self.digits {
            Some(_) if !real => bad("(M,D) on a type that is no FLOAT or DOUBLE"),
            Some((m, d)) if m == 0 || d > 30 || d > m => bad("bad (M,D)"),
            _ => Ok(()),
        }
    }

    /// Whether the column takes no negative values: an unsigned integer, or UNSIGNED.
    pub fn is_unsigned(&self) -> bool {
        self.unsigned || matches!(self.ty, ColumnType::Int { unsigned: true, .. })
    }

    /// The bitmask of SET text `s` (members separated by commas, in any order, each equal
    /// to a member in the column's collation); `None` if a part is no member. `''` is 0.
    pub fn set_mask(&self, s: &str) -> Option<u64> {
        if s.is_empty() {
            return Some(0);
        }
        s.split(',').try_fold(0u64, |mask, part| {
            let i = self.member_index(part)?;
            Some(mask | 1u64 << (i - 1))
        })
    }

    /// The text of SET bitmask `mask`: its members in declaration order, joined by commas;
    /// `None` if a bit has no member.
    pub fn set_text(&self, mask: u64) -> Option<String> {
        let n = self.members.len();
        if n < 64 && mask >> n != 0 {
            return None;
        }
        let names: Vec<&str> = (0..n)
            .filter(|i| mask >> i & 1 == 1)
            .map(|i| self.members[i].as_str())
            .collect();
        Some(names.join(","))
    }

    /// This column with collation `c`.
    pub fn with_collation(mut self, c: Collation) -> Self {
        self.collation = c;
        self
    }

    /// This column with a DEFAULT (its SQL text).
    pub fn with_default(mut self, sql: impl Into<String>) -> Self {
        self.default = Some(sql.into());
        self
    }
    /// A nullable column.
    pub fn nullable(name: impl Into<String>, ty: ColumnType) -> Self {
        Column {
            nullable: true,
            ..Column::new(name, ty)
        }
    }

    /// Checks `v` for this column and returns it in canonical form: integers in the variant
    /// of the column's signedness, DECIMAL at the column's scale, FLOAT rounded to f32,
    /// BINARY zero-padded.
    pub fn canonical<'a>(&self, v: &'a Value) -> Result<Cow<'a, Value>, RowError> {
        let bad = |kind| RowError::value(&self.name, kind);
        if matches!(v, Value::Null) {
            return if self.nullable {
                Ok(Cow::Borrowed(v))
            } else {
                Err(RowError::NullNotAllowed {
                    column: self.name.clone(),
                })
            };
        }
        let wrong = || RowError::WrongType {
            column: self.name.clone(),
            expected: type_name(self.ty),
            found: v.kind(),
        };
        match (self.ty, v) {
            (ColumnType::Int { width, unsigned }, Value::Int(_) | Value::UInt(_)) => {
                let wide: i128 = match v {
                    Value::Int(i) => i128::from(*i),
                    Value::UInt(u) => i128::from(*u),
                    _ => return Err(wrong()),
                };
                if unsigned {
                    if wide < 0 || wide > i128::from(width.unsigned_max()) {
                        return Err(bad(ValueError::OutOfRange));
                    }
                    Ok(Cow::Owned(Value::UInt(wide as u64)))
                } else {
                    let (lo, hi) = width.signed_range();
                    if wide < i128::from(lo) || wide > i128::from(hi) {
                        return Err(bad(ValueError::OutOfRange));
                    }
                    Ok(Cow::Owned(Value::Int(wide as i64)))
                }
            }
            (ColumnType::Float, Value::Double(d)) => {
                if !d.is_finite() {
                    return Err(bad(ValueError::NotFinite));
                }
                let f = *d as f32;
                if !f.is_finite() {
                    return Err(bad(ValueError::OutOfRange));
                }
                Ok(Cow::Owned(Value::Double(f64::from(f))))
            }
            (ColumnType::Double, Value::Double(d)) => {
                if !d.is_finite() {
                    return Err(bad(ValueError::NotFinite));
                }
                Ok(Cow::Borrowed(v))
            }
            (ColumnType::Decimal { precision, scale }, Value::Decimal(d)) => {
                let r = d.rescale(scale).ok_or(bad(ValueError::DecimalScale {
                    scale,
                    found: d.scale,
                }))?;
                if r.unscaled.abs() >= pow10(precision) {
                    return Err(bad(ValueError::OutOfRange));
                }
                Ok(Cow::Owned(Value::Decimal(r)))
            }
            (ColumnType::Char { max_chars } | ColumnType::VarChar { max_chars }, Value::Str(s)) => {
                let n = s.chars().count() as u64;
                if n > u64::from(max_chars) {
                    return Err(RowError::TooLong {
                        column: self.name.clone(),
                        max: u64::from(max_chars),
                        len: n,
                        unit: "characters",
                    });
                }
                Ok(Cow::Borrowed(v))
            }
            (ColumnType::Text(size), Value::Str(s)) => {
                self.check_bytes(s.len(), size.max_bytes())?;
                Ok(Cow::Borrowed(v))
            }
            (ColumnType::Binary { len }, Value::Bytes(b)) => {
                self.check_bytes(b.len(), u64::from(len))?;
                let mut p = b.clone();
                p.resize(len as usize, 0);
                Ok(Cow::Owned(Value::Bytes(p)))
            }
            (ColumnType::VarBinary { max_len }, Value::Bytes(b)) => {
                self.check_bytes(b.len(), u64::from(max_len))?;
                Ok(Cow::Borrowed(v))
            }
            (ColumnType::Blob(size), Value::Bytes(b)) => {
                self.check_bytes(b.len(), size.max_bytes())?;
                Ok(Cow::Borrowed(v))
            }
            (ColumnType::Date, Value::Date(d)) => {
                d.check().map_err(bad)?;
                Ok(Cow::Borrowed(v))
            }
            (ColumnType::DateTime { fsp }, Value::DateTime(dt)) => {
                dt.check(fsp).map_err(bad)?;
                Ok(Cow::Borrowed(v))
            }
            (ColumnType::Enum { .. }, Value::Str(s)) => match self.member_index(s) {
                Some(i) => match self.member_name(i) {
                    Some(m) if m == s => Ok(Cow::Borrowed(v)),
                    Some(m) => Ok(Cow::Owned(Value::Str(m.to_string()))),
                    None => Err(bad(ValueError::NotAMember)),
                },
                // The error value: index 0.
                None if s.is_empty() => Ok(Cow::Borrowed(v)),
                None => Err(bad(ValueError::NotAMember)),
            },
            (ColumnType::Set { .. }, Value::Str(s)) => {
                let text = self
                    .set_mask(s)
                    .and_then(|m| self.set_text(m))
                    .ok_or_else(|| bad(ValueError::NotAMember))?;
                if text == *s {
                    Ok(Cow::Borrowed(v))
                } else {
                    Ok(Cow::Owned(Value::Str(text)))
                }
            }
            (ColumnType::Year, Value::Int(_) | Value::UInt(_)) => {
                let y = match v {
                    Value::Int(i) => u64::try_from(*i).ok(),
                    Value::UInt(u) => Some(*u),
                    _ => None,
                };
                match y {
                    Some(0) => Ok(Cow::Owned(Value::UInt(0))),
                    Some(y) if (YEAR_MIN..=YEAR_MAX).contains(&y) => Ok(Cow::Owned(Value::UInt(y))),
                    _ => Err(bad(ValueError::OutOfRange)),
                }
            }
            (ColumnType::Time { fsp }, Value::Time(t)) => {
                t.check(fsp).map_err(bad)?;
                Ok(Cow::Borrowed(v))
            }
            (ColumnType::Bit { bits }, Value::Int(_) | Value::UInt(_)) => {
                let u = match v {
                    Value::Int(i) => u64::try_from(*i).ok(),
                    Value::UInt(u) => Some(*u),
                    _ => None,
                };
                match u {
                    Some(u) if u <= bit_max(bits) => Ok(Cow::Owned(Value::UInt(u))),
                    _ => Err(bad(ValueError::OutOfRange)),
                }
            }
            (ColumnType::Timestamp { fsp }, Value::DateTime(dt)) => {
                dt.check(fsp).map_err(bad)?;
                // The zero timestamp (0000-00-00 00:00:00) is MariaDB's too.
                let zero = *dt == DateTime::new(Date::ZERO, 0, 0, 0, 0);
                if !zero && (dt.date.has_zero_part() || *dt < TIMESTAMP_MIN || *dt > TIMESTAMP_MAX)
                {
                    return Err(bad(ValueError::OutOfRange));
                }
                Ok(Cow::Borrowed(v))
            }
            _ => Err(wrong()),
        }
    }

    fn check_bytes(&self, len: usize, max: u64) -> Result<(), RowError> {
        if len as u64 > max {
            return Err(RowError::TooLong {
                column: self.name.clone(),
                max,
                len: len as u64,
                unit: "bytes",
            });
        }
        Ok(())
    }
}

fn type_name(t: ColumnType) -> &'static str {
    match t {
        ColumnType::Int { .. } | ColumnType::Year | ColumnType::Bit { .. } => "integer",
        ColumnType::Float | ColumnType::Double => "floating point",
        ColumnType::Decimal { .. } => "decimal",
        ColumnType::Char { .. }
        | ColumnType::VarChar { .. }
        | ColumnType::Text(_)
        | ColumnType::Enum { .. }
        | ColumnType::Set { .. } => "string",
        ColumnType::Binary { .. } | ColumnType::VarBinary { .. } | ColumnType::Blob(_) => "bytes",
        ColumnType::Date => "date",
        ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => "datetime",
        ColumnType::Time { .. } => "time",
    }
}

/// Why a value does not fit its column (the column is named by [`RowError::Value`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    #[error("value is out of range")]
    OutOfRange,
    #[error("NaN and infinity cannot be stored")]
    NotFinite,
    #[error("decimal with scale {found} does not fit scale {scale} exactly")]
    DecimalScale { scale: u8, found: u8 },
    #[error("invalid date")]
    InvalidDate,
    #[error("invalid time of day")]
    InvalidTime,
    #[error("fractional seconds finer than the column's precision {fsp}")]
    TooPrecise { fsp: u8 },
    #[error("not a member of the ENUM or SET")]
    NotAMember,
}

/// An exact decimal: `unscaled * 10^-scale`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Decimal {
    pub unscaled: i128,
    pub scale: u8,
}

impl Decimal {
    pub fn new(unscaled: i128, scale: u8) -> Self {
        Decimal { unscaled, scale }
    }
    /// The same number at `scale`, if that is exact and fits 38 digits.
    pub fn rescale(self, scale: u8) -> Option<Decimal> {
        if scale > DECIMAL_MAX_PRECISION {
            return None;
        }
        match scale.cmp(&self.scale) {
            Ordering::Equal => Some(self),
            Ordering::Greater => self
                .unscaled
                .checked_mul(pow10(scale - self.scale))
                .map(|u| Decimal::new(u, scale)),
            Ordering::Less => {
                let f = pow10(self.scale - scale);
                (self.unscaled % f == 0).then(|| Decimal::new(self.unscaled / f, scale))
            }
        }
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.unscaled.unsigned_abs().to_string();
        let sign = if self.unscaled < 0 { "-" } else { "" };
        let s = usize::from(self.scale);
        if s == 0 {
            return write!(f, "{sign}{digits}");
        }
        let padded = format!("{digits:0>width$}", width = s + 1);
        let (int, frac) = padded.split_at(padded.len() - s);
        write!(f, "{sign}{int}.{frac}")
    }
}

/// A calendar date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    pub year: u16,
    pub month: u8,
    pub day: u8,
}

impl Date {
    pub fn new(year: u16, month: u8, day: u8) -> Self {
        Date { year, month, day }
    }
    /// MariaDB's zero date, 0000-00-00: what a date that is not one becomes outside strict
    /// mode. It packs to 0, so it sorts before every real date.
    pub const ZERO: Date = Date {
        year: 0,
        month: 0,
        day: 0,
    };

    /// The zero date, and a date with a zero month or day (`2020-00-15`, which MariaDB
    /// stores in a DATE or DATETIME unless sql_mode has NO_ZERO_IN_DATE), are values; a
    /// month past 12 or a day past its month's last is not.
    fn check(self) -> Result<(), ValueError> {
        let day_fits = self.day <= 31
            && (self.month == 0
                || self.day == 0
                || self.day <= days_in_month(self.year, self.month));
        if self.year > 9999 || self.month > 12 || !day_fits {
            return Err(ValueError::InvalidDate);
        }
        Ok(())
    }

    /// A zero month or day in a date that is not the zero date (`2020-00-15`): no day of
    /// the calendar, so no TIMESTAMP.
    pub fn has_zero_part(self) -> bool {
        self != Date::ZERO && (self.month == 0 || self.day == 0)
    }
    /// `year<<9 | month<<5 | day`: order-preserving, 23 bits.
    pub(crate) fn packed(self) -> u32 {
        u32::from(self.year) << 9 | u32::from(self.month) << 5 | u32::from(self.day)
    }
    pub(crate) fn unpack(p: u32) -> Result<Date, ValueError> {
        if p >> 23 != 0 {
            return Err(ValueError::InvalidDate);
        }
        let d = Date::new((p >> 9) as u16, (p >> 5 & 0xF) as u8, (p & 0x1F) as u8);
        d.check()?;
        Ok(d)
    }
}

fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        _ => 31,
    }
}

/// A date and time of day (DATETIME, and TIMESTAMP in UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DateTime {
    pub date: Date,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub micros: u32,
}

/// MySQL's TIMESTAMP range (UTC).
pub const TIMESTAMP_MIN: DateTime = DateTime {
    date: Date {
        year: 1970,
        month: 1,
        day: 1,
    },
    hour: 0,
    minute: 0,
    second: 1,
    micros: 0,
};
pub const TIMESTAMP_MAX: DateTime = DateTime {
    date: Date {
        year: 2038,
        month: 1,
        day: 19,
    },
    hour: 3,
    minute: 14,
    second: 7,
    micros: 999_999,
};

impl DateTime {
    pub fn new(date: Date, hour: u8, minute: u8, second: u8, micros: u32) -> Self {
        DateTime {
            date,
            hour,
            minute,
            second,
            micros,
        }
    }
    fn check(self, fsp: u8) -> Result<(), ValueError> {
        self.date.check()?;
        if self.hour > 23 || self.minute > 59 || self.second > 59 || self.micros > 999_999 {
            return Err(ValueError::InvalidTime);
        }
        let unit = 10u32.pow(u32::from(FSP_MAX - fsp.min(FSP_MAX)));
        if !self.micros.is_multiple_of(unit) {
            return Err(ValueError::TooPrecise { fsp });
        }
        Ok(())
    }
    /// `((date<<17 | hour<<12 | minute<<6 | second) << 20) | micros`: order-preserving.
    pub(crate) fn packed(self) -> u64 {
        let secs = u64::from(self.date.packed()) << 17
            | u64::from(self.hour) << 12
            | u64::from(self.minute) << 6
            | u64::from(self.second);
        secs << 20 | u64::from(self.micros)
    }
    pub(crate) fn unpack(p: u64) -> Result<DateTime, ValueError> {
        let micros = (p & 0xF_FFFF) as u32;
        let secs = p >> 20;
        let date = Date::unpack(u32::try_from(secs >> 17).map_err(|_| ValueError::InvalidDate)?)?;
        let dt = DateTime::new(
            date,
            (secs >> 12 & 0x1F) as u8,
            (secs >> 6 & 0x3F) as u8,
            (secs & 0x3F) as u8,
            micros,
        );
        dt.check(FSP_MAX)?;
        Ok(dt)
    }
}

/// A TIME: a signed duration in microseconds, at most [`Time::MAX`] either way (MariaDB's
/// -838:59:59.999999 .. 838:59:59.999999). Hours may pass 23; a day is 24 hours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time {
    pub micros: i64,
}

impl Time {
    /// 838:59:59.999999 in microseconds.
    pub const MAX_MICROS: i64 = ((838 * 60 + 59) * 60 + 59) * 1_000_000 + 999_999;

    pub fn from_micros(micros: i64) -> Self {
        Time { micros }
    }

    /// `[-]h:m:s.us`: parts as written, not checked.
    pub fn from_parts(neg: bool, hours: i64, minute: i64, second: i64, micros: i64) -> Self {
        let m = ((hours * 60 + minute) * 60 + second) * 1_000_000 + micros;
        Time {
            micros: if neg { -m } else { m },
        }
    }

    pub fn is_negative(self) -> bool {
        self.micros < 0
    }

    /// Hours of the absolute value (0..=838 in range).
    pub fn hours(self) -> i64 {
        self.micros.unsigned_abs() as i64 / 3_600_000_000
    }
    pub fn minute(self) -> i64 {
        self.micros.unsigned_abs() as i64 / 60_000_000 % 60
    }
    pub fn second(self) -> i64 {
        self.micros.unsigned_abs() as i64 / 1_000_000 % 60
    }
    /// The fraction of the absolute value, in microseconds.
    pub fn fraction(self) -> i64 {
        self.micros.unsigned_abs() as i64 % 1_000_000
    }

    fn check(self, fsp: u8) -> Result<(), ValueError> {
        if self.micros.abs() > Time::MAX_MICROS {
            return Err(ValueError::OutOfRange);
        }
        let unit = 10i64.pow(u32::from(FSP_MAX - fsp.min(FSP_MAX)));
        if self.micros % unit != 0 {
            return Err(ValueError::TooPrecise { fsp });
        }
        Ok(())
    }

    /// The key and record integer: the microseconds biased by 2^47, so that unsigned order
    /// is signed order.
    pub(crate) fn biased(self) -> u64 {
        (self.micros as u64).wrapping_add(1 << 47) & ((1 << 48) - 1)
    }
    pub(crate) fn unbias(raw: u64) -> Result<Time, ValueError> {
        let t = Time {
            micros: (raw & ((1 << 48) - 1)) as i64 - (1 << 47),
        };
        t.check(FSP_MAX)?;
        Ok(t)
    }
}

/// A column value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    UInt(u64),
    Double(f64),
    Decimal(Decimal),
    Str(String),
    Bytes(Vec<u8>),
    Date(Date),
    DateTime(DateTime),
    Time(Time),
}

impl Value {
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "NULL",
            Value::Int(_) => "integer",
            Value::UInt(_) => "unsigned integer",
            Value::Double(_) => "floating point",
            Value::Decimal(_) => "decimal",
            Value::Str(_) => "string",
            Value::Bytes(_) => "bytes",
            Value::Date(_) => "date",
            Value::DateTime(_) => "datetime",
            Value::Time(_) => "time",
        }
    }

    /// The SQL order of two canonical values of one column (binary collation; NULL first;
    /// -0.0 equals 0.0). Values of different kinds compare by kind name: never used for a
    /// valid column.
    pub fn cmp_sql(&self, other: &Value) -> Ordering {
        self.cmp_in(other, Collation::Utf8mb4Bin)
    }

    /// [`Value::cmp_sql`] with strings compared in collation `coll`.
    pub fn cmp_in(&self, other: &Value, coll: Collation) -> Ordering {
        match (self, other) {
            (Value::Null, Value::Null) => Ordering::Equal,
            (Value::Null, _) => Ordering::Less,
            (_, Value::Null) => Ordering::Greater,
            (Value::Int(a), Value::Int(b)) => a.cmp(b),
            (Value::UInt(a), Value::UInt(b)) => a.cmp(b),
            (Value::Double(a), Value::Double(b)) => a.partial_cmp(b).unwrap_or(Ordering::Equal),
            (Value::Decimal(a), Value::Decimal(b)) => {
                let s = a.scale.max(b.scale);
                match (a.rescale(s), b.rescale(s)) {
                    (Some(x), Some(y)) => x.unscaled.cmp(&y.unscaled),
                    _ => Ordering::Equal,
                }
            }
            (Value::Str(a), Value::Str(b)) => coll.cmp(a, b),
            (Value::Bytes(a), Value::Bytes(b)) => a.cmp(b),
            (Value::Date(a), Value::Date(b)) => a.cmp(b),
            (Value::DateTime(a), Value::DateTime(b)) => a.cmp(b),
            (Value::Time(a), Value::Time(b)) => a.cmp(b),
            (a, b) => a.kind().cmp(b.kind()),
        }
    }
}
