//! SQL types on engine values: column metadata for the wire, and MySQL's conversions of a
//! value into a column (strict sql_mode: out-of-range and too-long values are errors).

use std::cmp::Ordering;

use quire_engine::row::{
    Charset, Collation, Column, ColumnType, Date, DateTime, Decimal, IntWidth, LobSize, Time, Value,
};

use crate::diag::Level;
use crate::error::{Result, SqlError};
use crate::expr::Env;
use crate::func::datetime::Tail;
use crate::meta::{charset, flags, ColumnMeta, FieldType};

/// The wire type and display length of a column type.
pub fn field_type(ty: ColumnType) -> (FieldType, u32, u8) {
    match ty {
        ColumnType::Int { width, unsigned } => {
            let (f, len) = match width {
                IntWidth::Tiny => (FieldType::Tiny, 4),
                IntWidth::Small => (FieldType::Short, 6),
                IntWidth::Medium => (FieldType::Int24, 9),
                IntWidth::Int => (FieldType::Long, 11),
                IntWidth::Big => (FieldType::LongLong, 20),
            };
            // An unsigned column has no place for a sign (BIGINT's 20 digits need it).
            let sign = u32::from(unsigned && width != IntWidth::Big);
            (f, len - sign, 0)
        }
        ColumnType::Float => (FieldType::Float, 12, 31),
        ColumnType::Double => (FieldType::Double, 22, 31),
        ColumnType::Decimal { precision, scale } => (
            FieldType::NewDecimal,
            u32::from(precision) + 1 + u32::from(scale > 0),
            scale,
        ),
        ColumnType::Char { max_chars } => (FieldType::String, max_chars * 4, 0),
        ColumnType::VarChar { max_chars } => (FieldType::VarString, max_chars * 4, 0),
        ColumnType::Binary { len } => (FieldType::String, len, 0),
        ColumnType::VarBinary { max_len } => (FieldType::VarString, max_len, 0),
        ColumnType::Text(s) | ColumnType::Blob(s) => {
            let len = match s {
                LobSize::Tiny => 255,
                LobSize::Regular => 65_535,
                LobSize::Medium => 16_777_215,
                LobSize::Long => u32::MAX,
            };
            (FieldType::Blob, len, 0)
        }
        ColumnType::Date => (FieldType::Date, 10, 0),
        ColumnType::DateTime { fsp } => (FieldType::DateTime, 19 + fsp_len(fsp), fsp),
        ColumnType::Timestamp { fsp } => (FieldType::Timestamp, 19 + fsp_len(fsp), fsp),
        // The length comes from the members: [`column_field_type`].
        ColumnType::Enum { .. } | ColumnType::Set { .. } => (FieldType::String, 0, 0),
        ColumnType::Year => (FieldType::Year, 4, 0),
        ColumnType::Time { fsp } => (FieldType::Time, 10 + fsp_len(fsp), fsp),
        ColumnType::Bit { bits } => (FieldType::Bit, u32::from(bits), 0),
    }
}

/// [`field_type`] of a column: an ENUM's or SET's length is its longest text's, in bytes.
pub fn column_field_type(col: &Column) -> (FieldType, u32, u8) {
    match col.ty {
        ColumnType::Enum { .. } | ColumnType::Set { .. } => {
            (FieldType::String, members_max_chars(col) * 4, 0)
        }
        // An integer's length is its display width, declared or default (`INT(5)`: 5).
        ColumnType::Int { .. } => {
            let (f, len, d) = field_type(col.ty);
            (f, col.display_width().map_or(len, u32::from), d)
        }
        // FLOAT(M,D): length M, D decimals.
        ColumnType::Float | ColumnType::Double if col.digits.is_some() => {
            let (f, len, d) = field_type(col.ty);
            col.digits
                .map_or((f, len, d), |(m, d)| (f, u32::from(m), d))
        }
        // An unsigned DECIMAL has no place for a sign.
        ColumnType::Decimal { .. } if col.unsigned => {
            let (f, len, d) = field_type(col.ty);
            (f, len - 1, d)
        }
        ty => field_type(ty),
    }
}

/// The longest text of an ENUM (its longest member) or a SET (every member and the commas
/// between), in characters: CHARACTER_MAXIMUM_LENGTH.
pub fn members_max_chars(col: &Column) -> u32 {
    let lens = col.members.iter().map(|m| m.chars().count() as u32);
    if col.ty.is_set() {
        lens.sum::<u32>() + (col.members.len() as u32).saturating_sub(1)
    } else {
        lens.max().unwrap_or(0)
    }
}

fn fsp_len(fsp: u8) -> u32 {
    if fsp == 0 {
        0
    } else {
        1 + u32::from(fsp)
    }
}

fn is_binary(ty: ColumnType) -> bool {
    !ty.is_string()
}

/// A table column as a result-set column. `key_flags`: PRI_KEY, UNIQUE_KEY, MULTIPLE_KEY,
/// PART_KEY and AUTO_INCREMENT as the table's keys give them. The other flags are
/// MariaDB 10.11's, measured: NOT_NULL; NO_DEFAULT_VALUE for a NOT NULL column without a
/// DEFAULT that is not AUTO_INCREMENT; BINARY for temporal types and binary strings (and
/// `_bin` collations), not for numbers; UNSIGNED for unsigned integers, YEAR, BIT and
/// TIMESTAMP; a TIMESTAMP with `DEFAULT current_timestamp()` or `ON UPDATE` also TIMESTAMP,
/// and ON_UPDATE_NOW with the latter. Never NUM ([`flags`]).
pub fn column_meta(db: &str, table: &str, alias: &str, col: &Column, key_flags: u16) -> ColumnMeta {
    let (ty, mut length, decimals) = column_field_type(col);
    if let ColumnType::Text(s) = col.ty {
        // MariaDB sends a TEXT column's bytes times the connection's utf8mb4 4, whatever
        // the column's set (measured: 262140 for a TEXT), capped at 32 bits.
        length = u32::try_from(s.max_bytes() * 4).unwrap_or(u32::MAX);
    }
    let mut f = key_flags;
    if col.ty.is_string() && !col.ty.is_enum() && !col.ty.is_set() && col.collation.is_bin() {
        // A `_bin` collation's column is flagged BINARY (measured from MariaDB 10.11).
        f |= flags::BINARY;
    }
    if col.ty.is_enum() {
        f |= flags::ENUM;
    }
    if col.ty.is_set() {
        f |= flags::SET;
    }
    if !col.nullable {
        f |= flags::NOT_NULL;
        if col.default.is_none() && f & flags::AUTO_INCREMENT == 0 {
            f |= flags::NO_DEFAULT_VALUE;
        }
    }
    if col.is_unsigned() {
        f |= flags::UNSIGNED;
    }
    if col.zerofill {
        // The text protocol pads its values to the length (`resultset::text_value`).
        f |= flags::ZEROFILL;
    }
    let numeric = matches!(
        col.ty,
        ColumnType::Int { .. }
            | ColumnType::Float
            | ColumnType::Double
            | ColumnType::Decimal { .. }
    );
    if col.ty == ColumnType::Year {
        // MariaDB's YEAR: UNSIGNED and ZEROFILL, not BINARY.
        f |= flags::UNSIGNED | flags::ZEROFILL;
    } else if matches!(col.ty, ColumnType::Bit { .. }) {
        // MariaDB's BIT: UNSIGNED, of the binary character set, without the BINARY flag.
        f |= flags::UNSIGNED;
    } else if is_binary(col.ty) && !numeric {
        // Temporal types and binary strings; a number is of the binary set but not
        // flagged (measured: an INT column 0, a DATETIME 128).
        f |= flags::BINARY;
    }
    if matches!(col.ty, ColumnType::Timestamp { .. }) {
        f |= flags::UNSIGNED;
        let now_default = col
            .default
            .as_deref()
            .is_some_and(|d| d.starts_with("current_timestamp"));
        if now_default || col.on_update {
            f |= flags::TIMESTAMP;
        }
        if col.on_update {
            f |= flags::ON_UPDATE_NOW;
        }
    }
    if col.ty.is_lob() {
        f |= flags::BLOB;
    }
    ColumnMeta {
        schema: db.into(),
        table: alias.into(),
        org_table: table.into(),
        name: col.name.clone(),
        org_name: col.name.clone(),
        charset: if is_binary(col.ty) {
            charset::BINARY
        } else if col.ty.is_string() {
            // A string column is sent converted to the connection's character set, under
            // that set's number, as MariaDB does (measured with character_set_results
            // utf8mb4: 45 for utf8mb4_bin, latin1 and utf8mb3 columns alike).
            charset::UTF8MB4_GENERAL_CI
        } else {
            charset::UTF8MB4_GENERAL_CI
        },
        length,
        ty,
        flags: f,
        decimals,
        json: col.json,
    }
}

/// The text `v` stores as in string column `col`: a character the column's character set
/// does not hold becomes `?`, with 1366 for the first (an error in strict mode), as
/// MariaDB's string copy does; `true` when it raised it. Bytes (a hex literal, a binary
/// string) are the set's bytes: latin1 reads any byte as its character.
fn in_charset(v: Value, col: &Column, at: &Target<'_>, env: &dyn Env) -> Result<(String, bool)> {
    let cs = col.collation.charset();
    let s = match v {
        Value::Bytes(b) if cs == Charset::Latin1 => return Ok((Charset::latin1_text(&b), false)),
        v => to_text(v),
    };
    // utf8mb4 holds every character: no scan of the text (every string stored passes here).
    if cs == Charset::Utf8mb4 {
        return Ok((s, false));
    }
    let Some(bad) = s.find(|c| !cs.holds(c)) else {
        return Ok((s, false));
    };
    env.warn(
        Level::Warning,
        1366,
        SqlError::IncorrectValue {
            kind: "string",
            value: printable_bytes(&s.as_bytes()[bad..]),
            db: at.db.into(),
            table: at.table.into(),
            column: col.name.clone(),
            row: at.row,
        }
        .to_string(),
    )?;
    let out = s
        .chars()
        .map(|c| if cs.holds(c) { c } else { '?' })
        .collect();
    Ok((out, true))
}

/// Bytes as MariaDB's `convert_to_printable` shows them in a message: at most 6, printable
/// ASCII as itself and any other byte as `\xNN`, and `...` when more follow.
pub fn printable_bytes(b: &[u8]) -> String {
    let mut out = String::new();
    for &x in b.iter().take(6) {
        if (0x20..0x7F).contains(&x) {
            out.push(char::from(x));
        } else {
            out.push_str(&format!("\\x{x:02X}"));
        }
    }
    if b.len() > 6 {
        out.push_str("...");
    }
    out
}

/// A JSON column's CHECK (json_valid(c)) on a value about to be stored: 4025 in every
/// sql_mode, as MariaDB fails a CHECK (also for a DEFAULT, checked at the store, not at
/// CREATE). A key range's bound (no table) is no store, and is not checked.
pub fn check_json(v: &Value, col: &Column, at: &Target<'_>) -> Result<()> {
    let bad = match v {
        Value::Str(s) => col.json && crate::func::json::parse(s).is_err(),
        _ => false,
    };
    if bad && !at.table.is_empty() {
        return Err(SqlError::ConstraintFailed {
            name: format!("{}.{}", at.table, col.name),
            db: at.db.into(),
            table: at.table.into(),
        });
    }
    Ok(())
}

/// The collations SHOW COLLATION and information_schema.COLLATIONS list, as MariaDB 10.11
/// lists them: name, character set, id, default for its character set, sort length.
pub(crate) const COLLATIONS: [(&str, &str, u16, &str, u8); 15] = [
    ("latin1_swedish_ci", "latin1", 8, "Yes", 1),
    ("latin1_bin", "latin1", 47, "", 1),
    ("latin1_general_ci", "latin1", 48, "", 1),
    ("latin1_general_cs", "latin1", 49, "", 1),
    ("ascii_general_ci", "ascii", 11, "Yes", 1),
    ("ascii_bin", "ascii", 65, "", 1),
    ("utf8mb3_general_ci", "utf8mb3", 33, "Yes", 1),
    ("utf8mb3_bin", "utf8mb3", 83, "", 1),
    ("utf8mb3_unicode_ci", "utf8mb3", 192, "", 8),
    ("utf8mb3_unicode_520_ci", "utf8mb3", 214, "", 8),
    ("utf8mb4_general_ci", "utf8mb4", 45, "Yes", 1),
    ("utf8mb4_bin", "utf8mb4", 46, "", 1),
    ("utf8mb4_unicode_ci", "utf8mb4", 224, "", 8),
    ("utf8mb4_unicode_520_ci", "utf8mb4", 246, "", 8),
    ("binary", "binary", 63, "Yes", 1),
];

/// The table's default collation as SHOW CREATE TABLE, ALTER and information_schema show
/// it: the one the catalog keeps, else the one every string column shares, else the
/// server's (`TableDef::default_collation`).
pub fn table_collation(def: &quire_engine::catalog::TableDef) -> Collation {
    def.default_collation()
}

/// The SQL text of a column's type, as SHOW CREATE TABLE and DESCRIBE print it (an
/// ENUM's members quoted as MariaDB quotes them).
pub fn column_type_sql(col: &Column) -> String {
    match col.ty {
        ColumnType::Enum { .. } | ColumnType::Set { .. } => {
            let ms: Vec<String> = col
                .members
                .iter()
                .map(|m| format!("'{}'", m.replace('\'', "''")))
                .collect();
            let kind = if col.ty.is_set() { "set" } else { "enum" };
            format!("{kind}({})", ms.join(","))
        }
        ColumnType::Int { width, unsigned } => format!(
            "{}({}){}{}",
            int_type_name(width),
            col.display
                .unwrap_or_else(|| width.default_display(unsigned)),
            if unsigned { " unsigned" } else { "" },
            if col.zerofill { " zerofill" } else { "" }
        ),
        // `float(7,4) unsigned`, `decimal(13,10) unsigned`.
        ty => {
            let mut t = type_sql(ty);
            if let Some((m, d)) = col.digits {
                t.push_str(&format!("({m},{d})"));
            }
            if col.unsigned {
                t.push_str(" unsigned");
            }
            t
        }
    }
}

fn int_type_name(width: IntWidth) -> &'static str {
    match width {
        IntWidth::Tiny => "tinyint",
        IntWidth::Small => "smallint",
        IntWidth::Medium => "mediumint",
        IntWidth::Int => "int",
        IntWidth::Big => "bigint",
    }
}

/// The SQL text of a type, as SHOW CREATE TABLE and DESCRIBE print it.
pub fn type_sql(ty: ColumnType) -> String {
    let u = |unsigned: bool| if unsigned { " unsigned" } else { "" };
    match ty {
        ColumnType::Int { width, unsigned } => format!(
            "{}({}){}",
            int_type_name(width),
            width.default_display(unsigned),
            u(unsigned)
        ),
        ColumnType::Float => "float".into(),
        ColumnType::Double => "double".into(),
        ColumnType::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
        ColumnType::Char { max_chars } => format!("char({max_chars})"),
        ColumnType::VarChar { max_chars } => format!("varchar({max_chars})"),
        ColumnType::Binary { len } => format!("binary({len})"),
        ColumnType::VarBinary { max_len } => format!("varbinary({max_len})"),
        ColumnType::Text(s) => format!("{}text", lob_prefix(s)),
        ColumnType::Blob(s) => format!("{}blob", lob_prefix(s)),
        ColumnType::Date => "date".into(),
        ColumnType::DateTime { fsp: 0 } => "datetime".into(),
        ColumnType::DateTime { fsp } => format!("datetime({fsp})"),
        ColumnType::Timestamp { fsp: 0 } => "timestamp".into(),
        ColumnType::Timestamp { fsp } => format!("timestamp({fsp})"),
        ColumnType::Year => "year(4)".into(),
        ColumnType::Time { fsp: 0 } => "time".into(),
        ColumnType::Time { fsp } => format!("time({fsp})"),
        ColumnType::Bit { bits } => format!("bit({bits})"),
        // Needs the members: [`column_type_sql`].
        ColumnType::Enum { .. } => "enum".into(),
        ColumnType::Set { .. } => "set".into(),
    }
}

fn lob_prefix(s: LobSize) -> &'static str {
    match s {
        LobSize::Tiny => "tiny",
        LobSize::Regular => "",
        LobSize::Medium => "medium",
        LobSize::Long => "long",
    }
}

/// Where a value is being stored: for messages, and how strictly.
pub struct Target<'a> {
    pub db: &'a str,
    pub table: &'a str,
    pub row: u64,
    /// Strict mode in an INSERT or UPDATE without IGNORE (MariaDB's abort_on_warning): a
    /// too-long string is 1406 and a bad date 1292 (the environment makes them errors);
    /// otherwise both are 1265 "Data truncated".
    pub strict: bool,
    /// ALTER TABLE's copy: a string cut is 1265 even in strict mode (where it is the error),
    /// while a bad date or time is 1292 as in an INSERT.
    pub cut_as_truncation: bool,
}

impl Target<'_> {
    fn truncated(&self, col: &Column) -> String {
        format!(
            "Data truncated for column '{}' at row {}",
            col.name, self.row
        )
    }
}

/// The number type a string converts to; MariaDB names it in 1292.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumKind {
    Double,
    Decimal,
}

impl NumKind {
    fn name(self) -> &'static str {
        match self {
            NumKind::Double => "DOUBLE",
            NumKind::Decimal => "DECIMAL",
        }
    }
}

/// Where the number a string starts with is, after leading white space, as MariaDB reads
/// '12abc' (12), '1e' (1) and '1.' (1): byte offsets (start, end); `None` if it starts with
/// none ('', 'abc', '.', '-').
pub fn number_prefix(s: &str) -> Option<(usize, usize)> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    let start = i;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        let mut k = i + 1;
        while k < b.len() && b[k].is_ascii_digit() {
            k += 1;
        }
        digits += k - (i + 1);
        if digits > 0 {
            i = k;
        }
    }
    if digits == 0 {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut k = i + 1;
        if k < b.len() && (b[k] == b'+' || b[k] == b'-') {
            k += 1;
        }
        let e0 = k;
        while k < b.len() && b[k].is_ascii_digit() {
            k += 1;
        }
        if k > e0 {
            i = k;
        }
    }
    Some((start, i))
}

/// What follows a string's number: nothing, white space only, or something else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rest {
    None,
    Spaces,
    Garbage,
}

fn rest_after(s: &str, end: usize) -> Rest {
    let rest = &s[end..];
    if rest.is_empty() {
        Rest::None
    } else if rest.bytes().all(|b| b.is_ascii_whitespace()) {
        Rest::Spaces
    } else {
        Rest::Garbage
    }
}

/// A string read as a number of `kind` in an expression: 1292 "Truncated incorrect DOUBLE
/// value: 's'", a Note when only white space follows the number, a Warning when anything
/// else does, when no number starts it, or when it overflows a DOUBLE.
pub fn check_numeric_string(s: &str, kind: NumKind, env: &dyn Env) -> Result<()> {
    let level = match number_prefix(s) {
        None => Some(Level::Warning),
        Some((start, end)) => match rest_after(s, end) {
            Rest::Garbage => Some(Level::Warning),
            _ if kind == NumKind::Double
                && s[start..end].parse::<f64>().is_ok_and(|f| f.is_infinite()) =>
            {
                Some(Level::Warning)
            }
            Rest::Spaces => Some(Level::Note),
            Rest::None => None,
        },
    };
    match level {
        Some(l) => env.warn(
            l,
            1292,
            format!("Truncated incorrect {} value: '{s}'", kind.name()),
        ),
        None => Ok(()),
    }
}

/// Whether `v` is a number (not a string, a date or NULL).
pub fn is_numeric(v: &Value) -> bool {
    matches!(
        v,
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_)
    )
}

/// A double as the exact decimal its shortest text is (`1.005e0` is 1.005, as MariaDB
/// converts it), or `None` past DECIMAL's 38 digits.
fn double_decimal(f: f64) -> Option<Decimal> {
    match parse_number(&format!("{f}"))? {
        Num::Int(i) => Some(Decimal::new(i, 0)),
        Num::Dec(d) => Some(d),
        Num::Float(_) => None,
    }
}

/// Converts `v` into a value of column `col` as MariaDB does, raising its conditions through
/// `env`: under strict mode (`at.strict`, with an environment that makes warnings errors)
/// an out-of-range, truncated or invalid value fails the statement; otherwise the value is
/// clamped, cut or zeroed with a warning. Notes (a DECIMAL rounded, a time cut from a
/// DATE, trailing spaces cut) are notes in every mode.
pub fn coerce(v: Value, col: &Column, at: &Target<'_>, env: &dyn Env) -> Result<Value> {
    if matches!(v, Value::Null) {
        return Ok(v);
    }
    let out_of_range = || -> Result<()> {
        env.warn(
            Level::Warning,
            1264,
            SqlError::OutOfRange {
                column: col.name.clone(),
                row: at.row,
            }
            .to_string(),
        )
    };
    let truncated = |level: Level| env.warn(level, 1265, at.truncated(col));
    let incorrect = |kind: &'static str, v: &Value| -> Result<()> {
        env.warn(
            Level::Warning,
            1366,
            SqlError::IncorrectValue {
                kind,
                value: display(v),
                db: at.db.into(),
                table: at.table.into(),
                column: col.name.clone(),
                row: at.row,
            }
            .to_string(),
        )
    };
    let bad_time = |kind: &'static str, v: &Value| -> Result<()> {
        if at.strict {
            env.warn(
                Level::Warning,
                1292,
                SqlError::IncorrectTime {
                    kind,
                    value: display(v),
                    db: at.db.into(),
                    table: at.table.into(),
                    column: col.name.clone(),
                    row: at.row,
                }
                .to_string(),
            )
        } else {
            truncated(Level::Warning)
        }
    };
    let too_long = || -> Result<()> {
        if at.strict && !at.cut_as_truncation {
            env.warn(
                Level::Warning,
                1406,
                SqlError::DataTooLong {
                    column: col.name.clone(),
                    row: at.row,
                }
                .to_string(),
            )
        } else {
            truncated(Level::Warning)
        }
    };
    // A string's number and what follows it; `None`: 1366 raised, the value is zero.
    let string_number = |s: &str, kind: &'static str, v: &Value| -> Result<Option<(Num, Rest)>> {
        match number_prefix(s) {
            None => {
                incorrect(kind, v)?;
                Ok(None)
            }
            Some((start, end)) => {
                let n = parse_number(&s[start..end])
                    .or_else(|| s[start..end].parse::<f64>().ok().map(Num::Float))
                    .unwrap_or(Num::Int(0));
                Ok(Some((n, rest_after(s, end))))
            }
        }
    };
    let report_rest = |rest: Rest| -> Result<()> {
        match rest {
            Rest::None => Ok(()),
            Rest::Spaces => truncated(Level::Note),
            Rest::Garbage => truncated(Level::Warning),
        }
    };
    // A date or datetime stored into a number is its number, as MySQL's `val_int` /
    // `val_decimal` make it: YYYYMMDD, YYYYMMDDHHMMSS[.ffffff].
    let numeric_target = matches!(
        col.ty,
        ColumnType::Int { .. }
            | ColumnType::Float
            | ColumnType::Double
            | ColumnType::Decimal { .. }
    );
    let v = match v {
        Value::Date(d) if numeric_target => Value::Int(crate::func::cast::date_number(&d) as i64),
        Value::DateTime(dt) if numeric_target && dt.micros == 0 => {
            Value::Int(crate::func::cast::datetime_number(&dt) as i64)
        }
        Value::DateTime(dt) if numeric_target => Value::Decimal(quire_engine::row::Decimal::new(
            crate::func::cast::datetime_number(&dt) * 1_000_000 + i128::from(dt.micros),
            6,
        )),
        v => v,
    };
    match col.ty {
        ColumnType::Int { width, unsigned } => {
            let (lo, hi): (i128, i128) = if unsigned {
                (0, i128::from(width.unsigned_max()))
            } else {
                let (l, h) = width.signed_range();
                (i128::from(l), i128::from(h))
            };
            let (n, rest): (i128, Rest) = match &v {
                Value::Int(i) => (i128::from(*i), Rest::None),
                Value::UInt(u) => (i128::from(*u), Rest::None),
                Value::Double(d) => (double_to_i128(*d), Rest::None),
                Value::Decimal(d) => (round_decimal(*d), Rest::None),
                Value::Str(s) => match string_number(s, "integer", &v)? {
                    None => (0, Rest::None),
                    Some((Num::Int(i), r)) => (i, r),
                    Some((Num::Dec(d), r)) => (round_decimal(d), r),
                    Some((Num::Float(f), r)) => (double_to_i128(f), r),
                },
                Value::Bytes(_) | Value::Date(_) | Value::DateTime(_) => {
                    incorrect("integer", &v)?;
                    (0, Rest::None)
                }
                Value::Time(t) => (
                    crate::func::cast::to_int(&Value::Time(*t), env).unwrap_or(0),
                    Rest::None,
                ),
                Value::Null => return Ok(Value::Null),
            };
            let c = n.clamp(lo, hi);
            if c != n {
                out_of_range()?;
            } else {
                report_rest(rest)?;
            }
            Ok(if unsigned {
                Value::UInt(c as u64)
            } else {
                Value::Int(c as i64)
            })
        }
        ColumnType::Float | ColumnType::Double => {
            let max = if col.ty == ColumnType::Float {
                f64::from(f32::MAX)
            } else {
                f64::MAX
            };
            let (f, rest) = match &v {
                Value::Int(i) => (*i as f64, Rest::None),
                Value::UInt(u) => (*u as f64, Rest::None),
                Value::Double(d) => (*d, Rest::None),
                Value::Decimal(d) => (decimal_f64(*d), Rest::None),
                Value::Time(t) => (crate::func::time::as_f64(*t), Rest::None),
                Value::Str(s) => match string_number(s, "double", &v)? {
                    None => (0.0, Rest::None),
                    Some((n, r)) => (n.as_f64(), r),
                },
                _ => {
                    incorrect("double", &v)?;
                    (0.0, Rest::None)
                }
            };
            if f.is_nan() {
                out_of_range()?;
                return Ok(Value::Double(0.0));
            }
            // MariaDB's `truncate_double`: UNSIGNED first, then FLOAT(M,D)'s rounding to D
            // decimals and its range below 10^(M-D), then the type's own range.
            if col.unsigned && f < 0.0 {
                out_of_range()?;
                return Ok(Value::Double(0.0));
            }
            // The rounding itself is silent, as in MariaDB.
            let (mut c, mut out) = (f, false);
            if let Some((m, d)) = col.digits {
                let scale = 10f64.powi(i32::from(d));
                let limit = 10f64.powi(i32::from(m - d)) - 1.0 / scale;
                if c.is_finite() {
                    let whole = c.floor();
                    c = whole + ((c - whole) * scale).round_ties_even() / scale;
                }
                if c.abs() > limit {
                    c = limit.copysign(c);
                    out = true;
                }
            }
            if c.abs() > max {
                c = max.copysign(c);
                out = true;
            }
            if out {
                out_of_range()?;
            } else {
                report_rest(rest)?;
            }
            Ok(Value::Double(c))
        }
        ColumnType::Decimal { precision, scale } => {
            let max = 10i128.pow(u32::from(precision)) - 1;
            let (d, rest) = match &v {
                Value::Int(i) => (Some(Decimal::new(i128::from(*i), 0)), Rest::None),
                Value::UInt(u) => (Some(Decimal::new(i128::from(*u), 0)), Rest::None),
                Value::Decimal(d) => (Some(*d), Rest::None),
                Value::Double(f) => (double_decimal(*f), Rest::None),
                Value::Time(_) => (crate::func::cast::to_decimal(&v, env), Rest::None),
                Value::Str(s) => match string_number(s, "decimal", &v)? {
                    None => (Some(Decimal::new(0, 0)), Rest::None),
                    Some((Num::Int(i), r)) => (Some(Decimal::new(i, 0)), r),
                    Some((Num::Dec(d), r)) => (Some(d), r),
                    Some((Num::Float(f), r)) => (double_decimal(f), r),
                },
                _ => {
                    incorrect("decimal", &v)?;
                    (Some(Decimal::new(0, 0)), Rest::None)
                }
            };
            if col.unsigned && d.map_or(sign(&v) < 0, |d| d.unscaled < 0) {
                // DECIMAL UNSIGNED: a negative value is out of range, stored as 0.
                out_of_range()?;
                return Ok(Value::Decimal(Decimal::new(0, scale)));
            }
            let rounded = d.and_then(|d| round_to_scale(d, scale).map(|r| (d, r)));
            let (exact, r) = match rounded {
                Some((d, r)) if r.unscaled.abs() <= max => (
                    compare(
                        &Value::Decimal(d),
                        &Value::Decimal(r),
                        Collation::Utf8mb4Bin,
                    ) == Ordering::Equal,
                    r,
                ),
                other => {
                    // Out of range: the largest value of the value's sign.
                    out_of_range()?;
                    let neg = other.map_or_else(|| sign(&v) < 0, |(d, _)| d.unscaled < 0);
                    let m = if neg { -max } else { max };
                    return Ok(Value::Decimal(Decimal::new(m, scale)));
                }
            };
            if rest != Rest::None {
                report_rest(rest)?;
            } else if !exact {
                truncated(Level::Note)?;
            }
            Ok(Value::Decimal(r))
        }
        ColumnType::Char { max_chars } | ColumnType::VarChar { max_chars } => {
            let (mut s, converted) = in_charset(v, col, at, env)?;
            if col.ty == (ColumnType::Char { max_chars }) {
                // CHAR is PAD SPACE: trailing spaces are not part of the value.
                let t = s.trim_end_matches(' ').len();
                s.truncate(t);
            }
            if let Some((cut, _)) = s.char_indices().nth(max_chars as usize) {
                if s[cut..].bytes().all(|b| b == b' ') {
                    truncated(Level::Note)?;
                } else if !converted {
                    // MariaDB reports the first of the two: a character converted (1366).
                    too_long()?;
                }
                s.truncate(cut);
            }
            Ok(Value::Str(s))
        }
        ColumnType::Text(_) => {
            let (mut s, converted) = in_charset(v, col, at, env)?;
            let max = col.ty.max_bytes();
            if s.len() as u64 > max {
                if !converted {
                    too_long()?;
                }
                let mut cut = max as usize;
                while !s.is_char_boundary(cut) {
                    cut -= 1;
                }
                s.truncate(cut);
            }
            let v = Value::Str(s);
            check_json(&v, col, at)?;
            Ok(v)
        }
        ColumnType::Binary { .. } | ColumnType::VarBinary { .. } | ColumnType::Blob(_) => {
            let mut b = to_bytes(v);
            let max = col.ty.max_bytes();
            if b.len() as u64 > max {
                too_long()?;
                b.truncate(max as usize);
            }
            Ok(Value::Bytes(b))
        }
        ColumnType::Enum { .. } => {
            // MariaDB's Field_enum::store: a name (in the column's collation, trailing
            // spaces aside), else a string that is a number, or a number, is a member's
            // index; anything else is the error value '' with 1265.
            let index: Option<i128> = match &v {
                Value::Int(i) => Some(i128::from(*i)),
                Value::UInt(u) => Some(i128::from(*u)),
                Value::Double(d) => Some(d.trunc().clamp(-1e30, 1e30) as i128),
                Value::Decimal(d) => Some(d.unscaled / 10i128.pow(u32::from(d.scale))),
                other => {
                    let t = to_text(other.clone());
                    if let Some(i) = col.member_index(&t) {
                        return Ok(Value::Str(
                            col.member_name(i).unwrap_or_default().to_string(),
                        ));
                    }
                    // A short all-digit string is an index ('3' on a column without a
                    // member named '3').
                    let digits = t.trim_end_matches(' ');
                    if !digits.is_empty()
                        && digits.len() < 6
                        && digits.bytes().all(|b| b.is_ascii_digit())
                    {
                        digits.parse::<i128>().ok()
                    } else {
                        None
                    }
                }
            };
            match index
                .and_then(|i| u16::try_from(i).ok())
                .filter(|i| *i > 0)
                .and_then(|i| col.member_name(i))
            {
                Some(m) => Ok(Value::Str(m.to_string())),
                None => {
                    truncated(Level::Warning)?;
                    Ok(Value::Str(String::new()))
                }
            }
        }
        ColumnType::Set { .. } => {
            // MariaDB's Field_set::store: the members a string names (parts that are no
            // member dropped with 1265), else a short all-digit string or a number as the
            // bitmask (bits without a member dropped with 1265).
            let all = match col.members.len() {
                n if n >= 64 => u64::MAX,
                n => (1u64 << n) - 1,
            };
            let number: Option<u64> = match &v {
                Value::Int(i) => Some(*i as u64),
                Value::UInt(u) => Some(*u),
                Value::Double(d) => Some(d.trunc().clamp(-9.2e18, 1.8e19) as i128 as u64),
                Value::Decimal(d) => Some((d.unscaled / 10i128.pow(u32::from(d.scale))) as u64),
                other => {
                    let t = to_text(other.clone());
                    let (mut mask, mut bad) = (0u64, false);
                    if !t.is_empty() {
                        for part in t.split(',') {
                            match col.member_index(part) {
                                Some(i) => mask |= 1u64 << (i - 1),
                                None => bad = true,
                            }
                        }
                    }
                    let digits = t.trim_end_matches(' ');
                    if bad
                        && mask == 0
                        && !digits.is_empty()
                        && digits.len() < 22
                        && digits.bytes().all(|b| b.is_ascii_digit())
                    {
                        match digits.parse::<u64>() {
                            Ok(n) if n & !all == 0 => Some(n),
                            _ => {
                                truncated(Level::Warning)?;
                                Some(0)
                            }
                        }
                    } else {
                        if bad {
                            truncated(Level::Warning)?;
                        }
                        Some(mask)
                    }
                }
            };
            let mut mask = number.unwrap_or(0);
            if mask & !all != 0 {
                truncated(Level::Warning)?;
                mask &= all;
            }
            Ok(Value::Str(col.set_text(mask).unwrap_or_default()))
        }
        ColumnType::Year => {
            // MariaDB's Field_year::store: the value as an integer (a double rounded half
            // to even, a string read as an INT column reads it, with 1366 / 1265), then 0
            // is the zero year (but 2000 from a string of other than 4 characters: '0',
            // '00'), 1..=69 20xx, 70..=99 19xx, 1901..=2155 itself; anything else is 1264
            // and the zero year.
            let (n, rest, text_len): (Option<i128>, Rest, Option<usize>) = match &v {
                Value::Int(i) => (Some(i128::from(*i)), Rest::None, None),
                Value::UInt(u) => (Some(i128::from(*u)), Rest::None, None),
                Value::Double(d) => (year_double(*d), Rest::None, None),
                Value::Decimal(d) => (year_double(decimal_f64(*d)), Rest::None, None),
                Value::Str(s) => match string_number(s, "integer", &v)? {
                    // Not a number: the zero year (MariaDB stores 0 before the 2000 rule).
                    None => return Ok(Value::UInt(0)),
                    Some((Num::Int(i), r)) => (Some(i), r, Some(s.len())),
                    Some((Num::Dec(d), r)) => (Some(round_decimal(d)), r, Some(s.len())),
                    Some((Num::Float(f), r)) => (year_double(f), r, Some(s.len())),
                },
                Value::Bytes(_) | Value::Date(_) | Value::DateTime(_) | Value::Time(_) => {
                    incorrect("integer", &v)?;
                    return Ok(Value::UInt(0));
                }
                Value::Null => return Ok(Value::Null),
            };
            let year = match n {
                Some(0) if text_len.is_none_or(|l| l == 4) => 0,
                Some(n @ 0..=69) => 2000 + n,
                Some(n @ 70..=99) => 1900 + n,
                Some(n @ 1901..=2155) => n,
                _ => {
                    out_of_range()?;
                    return Ok(Value::UInt(0));
                }
            };
            report_rest(rest)?;
            Ok(Value::UInt(year as u64))
        }
        ColumnType::Time { fsp } => {
            // MariaDB's Field_time::store (`func/time.rs`, the table's last column): a
            // datetime gives its time of day with a note, garbage and no time are 1265 (1292
            // in strict mode), past 838:59:59 is clipped with 1264 (1292 in strict mode).
            use crate::func::time::{self, Read, Status};
            let (t, status) = match time::read(&v) {
                Read::Time(t, st) => (t, st),
                Read::DateTime(dt, Status::Clean) => (time::of_datetime(&dt), Status::FromDate),
                Read::DateTime(dt, st) => (time::of_datetime(&dt), st),
                Read::Invalid => {
                    bad_time("time", &v)?;
                    return Ok(Value::Time(Time::from_micros(0)));
                }
            };
            match status {
                Status::Clean => {}
                Status::FromDate | Status::Fraction => truncated(Level::Note)?,
                Status::Garbage => bad_time("time", &v)?,
                Status::Clipped if at.strict => bad_time("time", &v)?,
                Status::Clipped => out_of_range()?,
            }
            // The fraction is cut to the column's precision, silently, as for DATETIME.
            Ok(Value::Time(time::truncate(t, fsp)))
        }
        ColumnType::Bit { bits } => {
            // MariaDB's Field_bit::store: a number is stored as its 8 big-endian bytes, a
            // string as its bytes; leading zero bytes aside, what does not fit M bits is M
            // ones with 1406 in strict mode, else 1264.
            let bytes: Vec<u8> = match &v {
                Value::Str(_) | Value::Bytes(_) => to_bytes(v.clone()),
                Value::Double(d) => {
                    (double_to_i128(*d).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64)
                        .to_be_bytes()
                        .to_vec()
                }
                Value::Decimal(d) => {
                    (round_decimal(*d).clamp(i128::from(i64::MIN), i128::from(u64::MAX)) as u64)
                        .to_be_bytes()
                        .to_vec()
                }
                Value::UInt(u) => u.to_be_bytes().to_vec(),
                Value::Int(i) => i.to_be_bytes().to_vec(),
                other => (crate::func::cast::to_int(other, env).unwrap_or(0) as i64)
                    .to_be_bytes()
                    .to_vec(),
            };
            let lead = bytes.iter().take_while(|b| **b == 0).count();
            let rest = &bytes[lead..];
            let max = quire_engine::row::bit_max(bits);
            let fits = rest.len() <= 8 && {
                let n = rest.iter().fold(0u64, |n, b| n << 8 | u64::from(*b));
                n <= max
            };
            if !fits {
                if at.strict {
                    // 1406 in strict mode, ALTER TABLE's copy included.
                    env.warn(
                        Level::Warning,
                        1406,
                        SqlError::DataTooLong {
                            column: col.name.clone(),
                            row: at.row,
                        }
                        .to_string(),
                    )?;
                } else {
                    out_of_range()?;
                }
                return Ok(Value::UInt(max));
            }
            Ok(Value::UInt(
                rest.iter().fold(0u64, |n, b| n << 8 | u64::from(*b)),
            ))
        }
        ColumnType::Date => match v {
            Value::Date(d) => Ok(Value::Date(d)),
            // A TIME is that long from today's midnight, as MariaDB stores one.
            Value::Time(t) => Ok(Value::Date(
                crate::func::time::on_day(t, crate::func::time::today(env))
                    .map_or(zero_date(), |dt| dt.date),
            )),
            Value::DateTime(dt) => {
                if dt.hour != 0 || dt.minute != 0 || dt.second != 0 || dt.micros != 0 {
                    truncated(Level::Note)?;
                }
                Ok(Value::Date(dt.date))
            }
            Value::Int(0) | Value::UInt(0) => Ok(Value::Date(zero_date())),
            ref other => match read_temporal(other, env, false) {
                Read::Date(dt, tail) => {
                    if tail == Tail::Garbage {
                        bad_time("date", other)?;
                    }
                    if dt.hour != 0 || dt.minute != 0 || dt.second != 0 || dt.micros != 0 {
                        truncated(Level::Note)?;
                    }
                    Ok(Value::Date(dt.date))
                }
                Read::Bad => {
                    bad_time("date", other)?;
                    Ok(Value::Date(zero_date()))
                }
            },
        },
        ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp } => {
            let zero = DateTime::new(zero_date(), 0, 0, 0, 0);
            let dt = match &v {
                Value::DateTime(dt) => *dt,
                Value::Date(d) => DateTime::new(*d, 0, 0, 0, 0),
                Value::Time(t) => {
                    crate::func::time::on_day(*t, crate::func::time::today(env)).unwrap_or(zero)
                }
                Value::Int(0) | Value::UInt(0) => zero,
                other => {
                    let timestamp = matches!(col.ty, ColumnType::Timestamp { .. });
                    match read_temporal(other, env, timestamp) {
                        Read::Date(dt, tail) => {
                            match tail {
                                Tail::Garbage => bad_time("datetime", other)?,
                                Tail::Fraction => truncated(Level::Note)?,
                                Tail::Clean => {}
                            }
                            dt
                        }
                        Read::Bad => {
                            bad_time("datetime", other)?;
                            zero
                        }
                    }
                }
            };
            // A TIMESTAMP's range is UTC's; the value is a local time of the session's zone
            // (it is converted on its way to the engine: `tz.rs`).
            let outside = dt != zero
                && matches!(col.ty, ColumnType::Timestamp { .. })
                && !(quire_engine::row::TIMESTAMP_MIN..=quire_engine::row::TIMESTAMP_MAX)
                    .contains(&env.time_zone().to_utc(dt));
            if outside {
                // Strict: 1292 quoting the value given; otherwise 1264 and the zero value.
                if at.strict {
                    bad_time("datetime", &v)?;
                } else {
                    out_of_range()?;
                }
                return Ok(Value::DateTime(zero));
            }
            // The fraction is cut to the column's precision, silently (MariaDB 10.11
            // without TIME_ROUND_FRACTIONAL).
            let unit = 10u32.pow(6 - u32::from(fsp.min(6)));
            let mut dt = dt;
            dt.micros = dt.micros / unit * unit;
            Ok(Value::DateTime(dt))
        }
    }
}

/// MariaDB's zero date, what a bad date becomes outside strict mode.
fn zero_date() -> Date {
    Date::ZERO
}

/// A string or number stored into a DATE, DATETIME or TIMESTAMP column, as MariaDB reads
/// it (`str_to_datetime`, `number_to_datetime`: any punctuation between the fields,
/// `20200115`, two-digit years, `T` before the time, `func::datetime::parse_full`).
enum Read {
    /// A date (what follows it, if anything: `Tail`).
    Date(DateTime, Tail),
    /// No date at all, or one sql_mode refuses: the zero date with 1292 (strict) or 1265.
    Bad,
}

/// [`Read`] of `v`: the zero date unless NO_ZERO_DATE; a date with a zero month or day
/// (`2020-00-15`) unless NO_ZERO_IN_DATE, and never for a TIMESTAMP (`timestamp`), whose
/// range has no such day.
fn read_temporal(v: &Value, env: &dyn Env, timestamp: bool) -> Read {
    let read = match v {
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_) => {
            crate::func::datetime::number_as_datetime(v).map(|dt| (dt, Tail::Clean))
        }
        other => {
            crate::func::datetime::parse_full(&to_text(other.clone())).map(|(t, tail)| (t.dt, tail))
        }
    };
    let Some((dt, tail)) = read else {
        return Read::Bad;
    };
    let d = dt.date;
    if d == Date::ZERO {
        if no_zero_date(env) {
            return Read::Bad;
        }
    } else if (d.month == 0 || d.day == 0) && (timestamp || sql_mode_has(env, "NO_ZERO_IN_DATE")) {
        return Read::Bad;
    }
    Read::Date(dt, tail)
}

/// Whether the session's sql_mode has NO_ZERO_DATE (TRADITIONAL sets it): then the zero
/// date is a bad date (1292 in strict mode). An environment without a session (a column's
/// DEFAULT checked at CREATE TABLE) answers no.
fn no_zero_date(env: &dyn Env) -> bool {
    sql_mode_has(env, "NO_ZERO_DATE")
}

/// Whether the session's sql_mode has `mode` (TRADITIONAL's are spelled out in it).
fn sql_mode_has(env: &dyn Env, mode: &str) -> bool {
    matches!(
        env.session(&crate::expr::SessionFn::SysVar {
            name: "sql_mode".into(),
            global: false,
        }),
        Ok(Value::Str(m)) if m.split(',').any(|w| w.eq_ignore_ascii_case(mode))
    )
}

/// The sign of a number (for clamping what does not fit a DECIMAL at all).
fn sign(v: &Value) -> i32 {
    match v {
        Value::Int(i) => i.signum() as i32,
        Value::Double(f) if *f < 0.0 => -1,
        Value::Str(s) if s.trim_start().starts_with('-') => -1,
        _ => 1,
    }
}

/// The YEAR a constant compared with a YEAR column stands for, as MariaDB stores the
/// constant into the column before comparing (`y = 69` is `y = 2069`, `y < 1` is `y <
/// 2001`, `y = '0'` is `y = 2000`); `None` where the store would fail (out of range, not a
/// number), and the comparison stays numeric (`y > 100`).
pub fn year_of_constant(v: &Value) -> Option<u64> {
    let (n, text_len) = match v {
        Value::Int(i) => (i128::from(*i), None),
        Value::UInt(u) => (i128::from(*u), None),
        Value::Double(d) => (year_double(*d)?, None),
        Value::Decimal(d) => (year_double(decimal_f64(*d))?, None),
        Value::Str(s) => {
            let t = s.trim();
            let n = match t.parse::<i128>() {
                Ok(n) => n,
                Err(_) => year_double(t.parse::<f64>().ok()?)?,
            };
            (n, Some(s.len()))
        }
        _ => return None,
    };
    Some(match n {
        0 if text_len.is_none_or(|l| l == 4) => 0,
        0..=69 => 2000 + n as u64,
        70..=99 => 1900 + n as u64,
        1901..=2155 => n as u64,
        _ => return None,
    })
}

/// A double as YEAR reads it: rounded half to even (`rint`), `None` outside 0..=2155.
fn year_double(d: f64) -> Option<i128> {
    let r = d.round_ties_even();
    (0.0..=2155.0).contains(&r).then_some(r as i128)
}

/// A double rounded to an integer, saturating (the range check clamps it after).
fn double_to_i128(d: f64) -> i128 {
    let r = d.round();
    if r >= 1e30 {
        i128::MAX / 2
    } else if r <= -1e30 {
        i128::MIN / 2
    } else {
        r as i128
    }
}

fn round_decimal(d: Decimal) -> i128 {
    round_to_scale(d, 0).map_or(0, |d| d.unscaled)
}

/// `d` rounded half away from zero to `scale` digits.
pub fn round_to_scale(d: Decimal, scale: u8) -> Option<Decimal> {
    if d.scale <= scale {
        return d.rescale(scale);
    }
    let f = 10i128.checked_pow(u32::from(d.scale - scale))?;
    let q = d.unscaled / f;
    let r = d.unscaled % f;
    let q = if r.abs() * 2 >= f {
        q + d.unscaled.signum()
    } else {
        q
    };
    Some(Decimal::new(q, scale))
}

pub fn decimal_f64(d: Decimal) -> f64 {
    d.unscaled as f64 / 10f64.powi(i32::from(d.scale))
}

/// A number parsed from SQL text or a string value.
#[derive(Debug, Clone, Copy)]
pub enum Num {
    Int(i128),
    Dec(Decimal),
    Float(f64),
}

impl Num {
    pub fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Dec(d) => decimal_f64(d),
            Num::Float(f) => f,
        }
    }
}

/// Parses a whole string as a number (MySQL's literal forms: `12`, `-1.50`, `1e3`).
pub fn parse_number(s: &str) -> Option<Num> {
    if s.is_empty() {
        return None;
    }
    if s.contains(['e', 'E']) {
        return s.parse::<f64>().ok().map(Num::Float);
    }
    let (neg, body) = match s.as_bytes()[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    match body.split_once('.') {
        None => {
            let n: i128 = body.parse().ok()?;
            Some(Num::Int(if neg { -n } else { n }))
        }
        Some((i, f)) => {
            if f.contains('.') || (i.is_empty() && f.is_empty()) {
                return None;
            }
            if f.len() > 38 || i.len() + f.len() > 38 {
                return s.parse::<f64>().ok().map(Num::Float);
            }
            let digits = format!("{i}{f}");
            let n: i128 = if digits.is_empty() {
                0
            } else {
                digits.parse().ok()?
            };
            Some(Num::Dec(Decimal::new(
                if neg { -n } else { n },
                f.len() as u8,
            )))
        }
    }
}

/// `YYYY-MM-DD[ HH:MM:SS[.ffffff]]` (also with `T`).
pub fn parse_datetime(s: &str) -> Option<DateTime> {
    let s = s.trim();
    let (d, t) = match s.find([' ', 'T']) {
        Some(i) => (&s[..i], Some(s[i + 1..].trim())),
        None => (s, None),
    };
    let mut dp = d.split('-');
    let year: u16 = dp.next()?.parse().ok()?;
    let month: u8 = dp.next()?.parse().ok()?;
    let day: u8 = dp.next()?.parse().ok()?;
    if dp.next().is_some() {
        return None;
    }
    let date = Date::new(year, month, day);
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) || year > 9999 {
        return None;
    }
    let (mut h, mut m, mut sec, mut micros) = (0u8, 0u8, 0u8, 0u32);
    if let Some(t) = t.filter(|t| !t.is_empty()) {
        let (hms, frac) = match t.split_once('.') {
            Some((a, b)) => (a, Some(b)),
            None => (t, None),
        };
        let mut tp = hms.split(':');
        h = tp.next()?.parse().ok()?;
        m = tp.next().unwrap_or("0").parse().ok()?;
        sec = tp.next().unwrap_or("0").parse().ok()?;
        if h > 23 || m > 59 || sec > 59 {
            return None;
        }
        if let Some(f) = frac {
            if f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let f6: String = format!("{f:0<6}").chars().take(6).collect();
            micros = f6.parse().ok()?;
        }
    }
    Some(DateTime::new(date, h, m, sec, micros))
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

/// A value as text (CONCAT, string columns, messages).
pub fn to_text(v: Value) -> String {
    match v {
        Value::Str(s) => s,
        Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
        other => display(&other),
    }
}

fn to_bytes(v: Value) -> Vec<u8> {
    match v {
        Value::Bytes(b) => b,
        Value::Str(s) => s.into_bytes(),
        other => display(&other).into_bytes(),
    }
}

/// MySQL's text form of a value (as the text protocol sends it).
pub fn display(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Double(d) => format_double(*d),
        Value::Decimal(d) => d.to_string(),
        Value::Str(s) => s.clone(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Date(d) => format!("{:04}-{:02}-{:02}", d.year, d.month, d.day),
        Value::Time(t) => crate::func::time::text(*t, crate::func::time::natural_fsp(*t)),
        Value::DateTime(dt) => {
            let mut s = format!(
                "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
                dt.date.year, dt.date.month, dt.date.day, dt.hour, dt.minute, dt.second
            );
            if dt.micros != 0 {
                s.push_str(&format!(".{:06}", dt.micros));
            }
            s
        }
    }
}

/// Doubles as MariaDB prints them (`my_gcvt`): the shortest round-trip digits, in fixed
/// notation for decimal exponents -15 to 14 (`0.0000000001`, `0.000000000000001`), with an
/// exponent otherwise (`1e-16`, `1e15`, `1.5e16`).
pub fn format_double(d: f64) -> String {
    if d == d.trunc() && d.abs() < 1e15 {
        return format!("{d:.0}");
    }
    let sci = format!("{d:e}");
    let exp: i32 = sci
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    if (-15..=14).contains(&exp) {
        format!("{d}")
    } else {
        sci
    }
}

/// Compares two values with MySQL's rules across types: numbers numerically, strings in
/// collation `coll` (PAD SPACE), bytes exactly, a number against a string as numbers. NULL
/// is handled by the caller (three-valued logic); here it sorts first.
pub fn compare(a: &Value, b: &Value, coll: Collation) -> Ordering {
    use Value::*;
    match (a, b) {
        (Null, Null) => Ordering::Equal,
        (Null, _) => Ordering::Less,
        (_, Null) => Ordering::Greater,
        (Int(x), Int(y)) => x.cmp(y),
        (UInt(x), UInt(y)) => x.cmp(y),
        (Int(x), UInt(y)) => i128::from(*x).cmp(&i128::from(*y)),
        (UInt(x), Int(y)) => i128::from(*x).cmp(&i128::from(*y)),
        // The same order as the index keys' (the engine's sort keys, docs/row-format.md).
        (Str(x), Str(y)) => coll.cmp(x, y),
        (Bytes(x), Bytes(y)) => x.cmp(y),
        (Str(x), Bytes(y)) => x.as_bytes().cmp(y),
        (Bytes(x), Str(y)) => x.as_slice().cmp(y.as_bytes()),
        (Date(_) | DateTime(_), Date(_) | DateTime(_)) => as_datetime(a).cmp(&as_datetime(b)),
        // A date against a string or a number: the other side read as a date, as MySQL
        // reads it ('2024-2-9', 20240209); one that is no date compares as text / number.
        (Date(_) | DateTime(_), Str(s)) => match crate::func::datetime::parse_lenient(s) {
            Some(d) => as_datetime(a).cmp(&d),
            None => display(a).cmp(s),
        },
        (Str(s), Date(_) | DateTime(_)) => compare(b, &Str(s.clone()), coll).reverse(),
        (Date(_) | DateTime(_), Int(_) | UInt(_) | Decimal(_) | Double(_)) => {
            match crate::func::datetime::number_as_datetime(b) {
                Some(d) => as_datetime(a).cmp(&d),
                None => num(a).partial_cmp(&num(b)).unwrap_or(Ordering::Equal),
            }
        }
        (Int(_) | UInt(_) | Decimal(_) | Double(_), Date(_) | DateTime(_)) => {
            compare(b, a, coll).reverse()
        }
        (Time(x), Time(y)) => x.cmp(y),
        // A TIME against a string or a number: the other side read as a TIME (a datetime
        // string as a DATETIME, below); against a date, both as DATETIMEs, the TIME from
        // today's midnight (MariaDB's rule).
        (Time(x), Str(_) | Bytes(_) | Int(_) | UInt(_) | Decimal(_) | Double(_)) => {
            use crate::func::time::{read, Read};
            match read(b) {
                Read::Time(y, _) => x.cmp(&y),
                Read::DateTime(dt, _) => compare(a, &DateTime(dt), coll),
                Read::Invalid => display(a).as_str().cmp(to_text(b.clone()).as_str()),
            }
        }
        (Time(t), Date(_) | DateTime(_)) => {
            match crate::func::time::on_day(*t, crate::func::time::wall_today()) {
                Some(dt) => dt.cmp(&as_datetime(b)),
                None => t.micros.cmp(&0),
            }
        }
        (_, Time(_)) => compare(b, a, coll).reverse(),
        (Decimal(x), Decimal(y)) => {
            let s = x.scale.max(y.scale);
            match (x.rescale(s), y.rescale(s)) {
                (Some(p), Some(q)) => p.unscaled.cmp(&q.unscaled),
                _ => decimal_f64(*x).total_cmp(&decimal_f64(*y)),
            }
        }
        (Int(_) | UInt(_), Decimal(_)) | (Decimal(_), Int(_) | UInt(_)) => {
            match (to_decimal(a), to_decimal(b)) {
                (Some(x), Some(y)) => compare(&Decimal(x), &Decimal(y), coll),
                _ => num(a).total_cmp(&num(b)),
            }
        }
        _ => num(a).partial_cmp(&num(b)).unwrap_or(Ordering::Equal),
    }
}

fn as_datetime(v: &Value) -> DateTime {
    match v {
        Value::DateTime(d) => *d,
        Value::Date(d) => DateTime::new(*d, 0, 0, 0, 0),
        _ => DateTime::new(Date::new(0, 0, 0), 0, 0, 0, 0),
    }
}

pub fn to_decimal(v: &Value) -> Option<Decimal> {
    match v {
        Value::Int(i) => Some(Decimal::new(i128::from(*i), 0)),
        Value::UInt(u) => Some(Decimal::new(i128::from(*u), 0)),
        Value::Decimal(d) => Some(*d),
        _ => None,
    }
}

/// A value as a double (arithmetic on mixed types, comparisons of numbers and strings).
pub fn num(v: &Value) -> f64 {
    match v {
        Value::Null => 0.0,
        Value::Int(i) => *i as f64,
        Value::UInt(u) => *u as f64,
        Value::Double(d) => *d,
        Value::Decimal(d) => decimal_f64(*d),
        Value::Str(s) => leading_number(s),
        Value::Bytes(b) => leading_number(&String::from_utf8_lossy(b)),
        Value::Date(d) => {
            f64::from(u32::from(d.year) * 10_000 + u32::from(d.month) * 100 + u32::from(d.day))
        }
        Value::Time(t) => crate::func::time::as_f64(*t),
        Value::DateTime(dt) => {
            let d = &dt.date;
            (u64::from(d.year) * 10_000_000_000
                + u64::from(d.month) * 100_000_000
                + u64::from(d.day) * 1_000_000
                + u64::from(dt.hour) * 10_000
                + u64::from(dt.minute) * 100
                + u64::from(dt.second)) as f64
        }
    }
}

/// The number a string starts with, as MySQL reads '12abc' (12) and 'abc' (0).
fn leading_number(s: &str) -> f64 {
    let s = s.trim_start();
    let mut end = 0;
    let b = s.as_bytes();
    let mut seen_dot = false;
    let mut seen_e = false;
    while end < b.len() {
        let c = b[end];
        let ok = c.is_ascii_digit()
            || (end == 0 && (c == b'-' || c == b'+'))
            || (c == b'.' && !seen_dot && !seen_e)
            || ((c == b'e' || c == b'E') && !seen_e && end > 0)
            || ((c == b'-' || c == b'+') && end > 0 && (b[end - 1] == b'e' || b[end - 1] == b'E'));
        if !ok {
            break;
        }
        seen_dot |= c == b'.';
        seen_e |= c == b'e' || c == b'E';
        end += 1;
    }
    while end > 0 {
        if let Ok(f) = s[..end].parse::<f64>() {
            // '1e400' reads as the largest double, as MariaDB's strtod does.
            return f.clamp(f64::MIN, f64::MAX);
        }
        end -= 1;
    }
    0.0
}

/// Truthiness for WHERE: NULL and 0 are false.
pub fn truthy(v: &Value) -> Option<bool> {
    match v {
        Value::Null => None,
        Value::Int(i) => Some(*i != 0),
        Value::UInt(u) => Some(*u != 0),
        other => Some(num(other) != 0.0),
    }
}

/// `s` as a SQL string literal with backslash escapes (`\\`, `\'`, newline, carriage return,
/// NUL), as MariaDB prints a string in a CHECK constraint and as the slow log writes it.
pub fn quote_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn every_collation_quire_has_is_listed_with_its_id() {
        for c in Collation::ALL {
            assert!(
                COLLATIONS.iter().any(|&(name, cs, id, ..)| name == c.name()
                    && cs == c.charset().name()
                    && id == c.id()),
                "{c:?}"
            );
        }
    }

    use super::*;

    fn at() -> Target<'static> {
        Target {
            db: "d",
            table: "t",
            row: 1,
            strict: true,
            cut_as_truncation: false,
        }
    }

    /// Strict mode's environment: a warning is the statement's error.
    struct Strict;
    impl Env for Strict {
        fn param(&self, _: usize) -> Result<Value> {
            Ok(Value::Null)
        }
        fn session(&self, _: &crate::expr::SessionFn) -> Result<Value> {
            Ok(Value::Null)
        }
        fn warn(&self, level: Level, code: u16, message: String) -> Result<()> {
            if level == Level::Warning {
                return Err(SqlError::Raised { code, message });
            }
            Ok(())
        }
    }

    #[test]
    fn strings_convert_to_integer_columns_and_range_is_checked() {
        let c = Column::new(
            "k",
            ColumnType::Int {
                width: IntWidth::Int,
                unsigned: false,
            },
        );
        assert_eq!(
            coerce(Value::Str("0".into()), &c, &at(), &Strict).expect("ok"),
            Value::Int(0)
        );
        assert_eq!(
            coerce(Value::Str(" 42 ".into()), &c, &at(), &Strict).expect("ok"),
            Value::Int(42)
        );
        assert!(matches!(
            coerce(Value::Int(1 << 40), &c, &at(), &Strict),
            Err(SqlError::Raised { code: 1264, .. })
        ));
        assert!(matches!(
            coerce(Value::Str("abc".into()), &c, &at(), &Strict),
            Err(SqlError::Raised { code: 1366, .. })
        ));
        assert!(matches!(
            coerce(Value::Str("12abc".into()), &c, &at(), &Strict),
            Err(SqlError::Raised { code: 1265, .. })
        ));
    }

    #[test]
    fn char_is_pad_space_and_length_is_checked_in_characters() {
        let c = Column::new("c", ColumnType::Char { max_chars: 3 });
        assert_eq!(
            coerce(Value::Str("ab  ".into()), &c, &at(), &Strict).expect("ok"),
            Value::Str("ab".into())
        );
        assert_eq!(
            coerce(Value::Str("äöü".into()), &c, &at(), &Strict).expect("ok"),
            Value::Str("äöü".into())
        );
        assert!(matches!(
            coerce(Value::Str("abcd".into()), &c, &at(), &Strict),
            Err(SqlError::Raised { code: 1406, .. })
        ));
    }

    #[test]
    fn decimals_round_half_away_from_zero() {
        let c = Column::new(
            "d",
            ColumnType::Decimal {
                precision: 5,
                scale: 2,
            },
        );
        assert_eq!(
            coerce(Value::Str("1.005".into()), &c, &at(), &Strict).expect("ok"),
            Value::Decimal(Decimal::new(101, 2))
        );
        assert!(coerce(Value::Int(1000), &c, &at(), &Strict).is_err());
        assert_eq!(format_double(1.5), "1.5");
        assert_eq!(format_double(3.0), "3");
    }

    #[test]
    fn doubles_use_an_exponent_outside_1e_minus_15_to_1e15_as_mariadb() {
        assert_eq!(format_double(-1e-10), "-0.0000000001");
        assert_eq!(format_double(1.5e-7), "0.00000015");
        assert_eq!(format_double(1e-16), "1e-16");
        assert_eq!(format_double(1e15), "1e15");
        assert_eq!(format_double(1.5e16), "1.5e16");
        assert_eq!(format_double(123456789012345.0), "123456789012345");
    }
}
