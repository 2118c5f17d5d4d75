//! Result sets on the wire: column definitions, then rows in the text protocol (COM_QUERY)
//! or the binary protocol (COM_STMT_EXECUTE), then the end marker.
//!
//! ```text
//!   column count (lenenc) │ column def × n │ [EOF] │ row × m │ EOF, or OK 0xFE under DEPRECATE_EOF
//! ```
//!
//! Rows go to the socket as the SQL layer produces them ([`ResultSink`] is its `RowSink`):
//! one buffer is reused per row and the packet writer flushes every ~64 KiB.

use std::borrow::Cow;
use std::io::{Read, Write};

use quire_engine::row::{Date, DateTime, Decimal, Time};
use quire_sql::{ColumnMeta, FieldType, RowSink, SinkError, Value};

use crate::charset::{self, WireCharset};
use crate::packet::PacketIo;
use crate::reply::{eof_packet, ok_packet, put_lenenc_int, put_lenenc_str, OkInfo};

/// `decimals` of a column whose values have no fixed number of decimals (MySQL's
/// NOT_FIXED_DEC): doubles print in their shortest form.
pub const NOT_FIXED_DEC: u8 = 31;

/// The protocol's type byte (`enum_field_types`).
pub fn type_byte(ty: FieldType) -> u8 {
    match ty {
        FieldType::Tiny => 1,
        FieldType::Short => 2,
        FieldType::Long => 3,
        FieldType::Float => 4,
        FieldType::Double => 5,
        FieldType::Null => 6,
        FieldType::Timestamp => 7,
        FieldType::LongLong => 8,
        FieldType::Int24 => 9,
        FieldType::Date => 10,
        FieldType::DateTime => 12,
        FieldType::Year => 13,
        FieldType::Time => 11,
        FieldType::Bit => 16,
        FieldType::NewDecimal => 246,
        FieldType::Blob => 252,
        FieldType::LongBlob => 251,
        FieldType::VarString => 253,
        FieldType::String => 254,
    }
}

/// How a connection's column definitions are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnWire {
    /// The connection's `character_set_results`: under latin1 the names are latin1, and a
    /// non-binary column is latin1_swedish_ci (8) with its length in latin1's one byte per
    /// character, as MariaDB sends them.
    pub cs: WireCharset,
    /// The client negotiated MariaDB's extended metadata (docs/protocol.md, "Extended
    /// metadata"): every definition carries the block, empty or not.
    pub extended: bool,
}

impl ColumnWire {
    /// utf8mb4 names, no extended metadata.
    pub const PLAIN: ColumnWire = ColumnWire {
        cs: WireCharset::Utf8,
        extended: false,
    };
}

/// MariaDB's extended metadata of a column: `(id, lenenc value)` pairs, id 1 the format
/// name; only `json` is sent.
fn extended_metadata(col: &ColumnMeta) -> &'static [u8] {
    if col.json {
        b"\x01\x04json"
    } else {
        b""
    }
}

/// A column definition packet (Protocol::ColumnDefinition41). `field_list` is only for
/// COM_FIELD_LIST, which appends the column's default value.
pub fn column_definition(col: &ColumnMeta, field_list: bool, wire: ColumnWire) -> Vec<u8> {
    let cs = wire.cs;
    let mut buf = Vec::with_capacity(48 + col.name.len() * 2);
    put_lenenc_str(&mut buf, b"def");
    put_lenenc_str(&mut buf, &cs.encode(&col.schema));
    put_lenenc_str(&mut buf, &cs.encode(&col.table));
    put_lenenc_str(&mut buf, &cs.encode(&col.org_table));
    put_lenenc_str(&mut buf, &cs.encode(&col.name));
    put_lenenc_str(&mut buf, &cs.encode(&col.org_name));
    if wire.extended {
        put_lenenc_str(&mut buf, extended_metadata(col));
    }
    buf.push(0x0C); // length of the fixed fields that follow
                    // A latin1 or ascii connection reads a text column in its own one-byte set.
    let (charset, length) = match cs.column_charset() {
        Some(number) if col.charset != charset::BINARY => {
            (number, col.length / mbmaxlen(col.charset))
        }
        _ => (col.charset, col.length),
    };
    buf.extend_from_slice(&charset.to_le_bytes());
    buf.extend_from_slice(&length.to_le_bytes());
    buf.push(type_byte(col.ty));
    buf.extend_from_slice(&col.flags.to_le_bytes());
    buf.push(col.decimals);
    buf.extend_from_slice(&[0, 0]);
    if field_list {
        // The default value is not in ColumnMeta: sent as NULL, as for most columns.
        buf.push(0xFB);
    }
    buf
}

/// Bytes per character at most of a column's character set: 3 for utf8mb3's collations,
/// 4 for utf8mb4's (a column's length is its characters times this).
fn mbmaxlen(collation: u16) -> u32 {
    match collation {
        33 | 83 | 192..=223 => 3,
        _ => 4,
    }
}

// ---------------------------------------------------------------------------------------
// Text protocol

/// A DOUBLE as MariaDB prints it without fixed decimals (`my_gcvt`): the shortest digits
/// that read back to the same value, in plain notation for 1e-15 <= |x| < 1e15 and as
/// `<digits>e<exp>` outside (`1e20`, `1e-16`, `0.00000015`, `0.1`, `100`).
pub fn format_double(x: f64) -> String {
    if !x.is_finite() {
        // Not storable (the engine refuses them); printed as MariaDB prints them.
        return if x.is_nan() {
            "nan"
        } else if x > 0.0 {
            "inf"
        } else {
            "-inf"
        }
        .into();
    }
    shortest(x == 0.0, format!("{x:e}"), || format!("{x}"))
}

/// A FLOAT: the single's own shortest digits (0.1, not 0.10000000149011612).
pub fn format_float(x: f32) -> String {
    if !x.is_finite() {
        return format_double(f64::from(x));
    }
    shortest(x == 0.0, format!("{x:e}"), || format!("{x}"))
}

/// `sci` is Rust's shortest round-trip form ("1.2345e3"); `plain` the same digits without
/// an exponent.
fn shortest(zero: bool, sci: String, plain: impl FnOnce() -> String) -> String {
    if zero {
        return "0".into();
    }
    match sci.split_once('e').map(|(m, e)| (m, e.parse::<i32>())) {
        Some((_, Ok(exp))) if (-15..15).contains(&exp) => plain(),
        Some((m, Ok(exp))) => format!("{m}e{exp}"),
        _ => sci,
    }
}

/// A DOUBLE with `dec` fixed decimals, as MariaDB prints it: rounded when its shortest form
/// has more decimals, else that form padded with zeros (`PI() + 0.000000000000000000` is
/// `3.141592653589793000`, not the binary expansion's `…793116`).
pub fn fixed_decimals(x: f64, dec: usize) -> String {
    let shortest = format!("{x}");
    match shortest.split_once('.') {
        _ if !x.is_finite() => format_double(x),
        Some((_, frac)) if frac.len() > dec => format!("{x:.dec$}"),
        Some((_, frac)) => format!("{shortest}{}", "0".repeat(dec - frac.len())),
        None => format!("{shortest}.{}", "0".repeat(dec)),
    }
}

fn push_date(out: &mut String, d: &Date) {
    use std::fmt::Write as _;
    let _ = write!(out, "{:04}-{:02}-{:02}", d.year, d.month, d.day);
}

fn push_time(out: &mut String, dt: &DateTime, decimals: u8) {
    use std::fmt::Write as _;
    let _ = write!(out, " {:02}:{:02}:{:02}", dt.hour, dt.minute, dt.second);
    if (1..=6).contains(&decimals) {
        let frac = format!("{:06}", dt.micros);
        out.push('.');
        out.push_str(&frac[..usize::from(decimals)]);
    }
}

/// A TIME as MariaDB prints it in a column of this type: the column's fractional digits,
/// or, where they are not fixed (ADDTIME of strings), six when there is a fraction.
fn time_text(t: &Time, col: &ColumnMeta) -> String {
    let fsp = if col.decimals <= 6 {
        col.decimals
    } else {
        quire_sql::func::time::natural_fsp(*t)
    };
    quire_sql::func::time::text(*t, fsp)
}

/// A BIT value: a table's BIT column sends its value's big-endian bytes, ceil(M/8) of
/// them (`Field_bit`); a computed BIT (MAX(b), a derived value) sends its number.
fn bit_bytes(u: u64, col: &ColumnMeta) -> Vec<u8> {
    if col.org_name.is_empty() {
        return u.to_string().into_bytes();
    }
    let n = (col.length.clamp(1, 64) as usize).div_ceil(8);
    u.to_be_bytes()[8 - n..].to_vec()
}

/// Whether a column's integers are sent padded with zeros: a ZEROFILL integer column (its
/// length, the display width, is at most 255).
fn zero_filled(col: &ColumnMeta) -> bool {
    col.flags & quire_sql::flags::ZEROFILL != 0 && col.ty.is_integer() && col.length <= 255
}

/// One value in the text protocol, as MariaDB formats it for a column of this type
/// (`decimals` fixes the digits of DATETIME fractions and of fixed-point doubles).
pub fn text_value(v: &Value, col: &ColumnMeta) -> Option<Vec<u8>> {
    text_value_in(v, col, WireCharset::Utf8)
}

/// [`text_value`] for a connection whose `character_set_results` is `cs`: a string of a
/// non-binary column is converted to it.
pub fn text_value_in(v: &Value, col: &ColumnMeta, cs: WireCharset) -> Option<Vec<u8>> {
    text_bytes(v, col, cs).map(Cow::into_owned)
}

/// [`text_value_in`] borrowing the bytes of a string that needs no conversion: the rows
/// written to the wire copy each string once, into the packet.
fn text_bytes<'v>(v: &'v Value, col: &ColumnMeta, cs: WireCharset) -> Option<Cow<'v, [u8]>> {
    let s = match v {
        Value::Null => return None,
        // A ZEROFILL integer column, YEAR among them: its digits padded with zeros to the
        // column's length (its display width; YEAR's 4, so the zero year is 0000), as
        // MariaDB sends them. An expression over one (MIN(y), c + 0) is not flagged, there
        // as here.
        Value::Int(i) if zero_filled(col) => format!("{i:0w$}", w = col.length as usize),
        Value::UInt(u) if zero_filled(col) => format!("{u:0w$}", w = col.length as usize),
        Value::UInt(u) if col.ty == FieldType::Bit => return Some(Cow::Owned(bit_bytes(*u, col))),
        Value::Int(i) if col.ty == FieldType::Bit && *i >= 0 => {
            return Some(Cow::Owned(bit_bytes(*i as u64, col)))
        }
        // An integer in a DECIMAL result of fixed decimals (`t3 + 0` of a TIME(3) without a
        // fraction) shows them, as MariaDB does.
        Value::Int(i) if col.ty == FieldType::NewDecimal && (1..=6).contains(&col.decimals) => {
            Decimal::new(i128::from(*i), 0)
                .rescale(col.decimals)
                .map_or_else(|| i.to_string(), |d| d.to_string())
        }
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Time(t) => time_text(t, col),
        Value::Double(d) => {
            if (1..NOT_FIXED_DEC).contains(&col.decimals) {
                fixed_decimals(*d, usize::from(col.decimals))
            } else if col.ty == FieldType::Float {
                // A FLOAT column holds a single: print the single's digits.
                format_float(*d as f32)
            } else {
                format_double(*d)
            }
        }
        // A TIME's number (`t3 + 0` of 01:02:03.500) has the fraction's own digits, not
        // its column's: padded to the result's fractional-second digits, as MariaDB shows
        // it. (A user variable's DECIMAL(65,38) shows its value's own: not padded.)
        Value::Decimal(d)
            if col.ty == FieldType::NewDecimal && col.decimals <= 6 && d.scale < col.decimals =>
        {
            d.rescale(col.decimals).unwrap_or(*d).to_string()
        }
        Value::Decimal(d) => d.to_string(),
        Value::Str(s) if col.charset != charset::BINARY => return Some(cs.encode(s)),
        Value::Str(s) => return Some(Cow::Borrowed(s.as_bytes())),
        Value::Bytes(b) => return Some(Cow::Borrowed(b)),
        Value::Date(d) => {
            let mut s = String::with_capacity(19);
            push_date(&mut s, d);
            if matches!(col.ty, FieldType::DateTime | FieldType::Timestamp) {
                let dt = DateTime {
                    date: *d,
                    hour: 0,
                    minute: 0,
                    second: 0,
                    micros: 0,
                };
                push_time(&mut s, &dt, col.decimals);
            }
            s
        }
        Value::DateTime(dt) => {
            let mut s = String::with_capacity(26);
            push_date(&mut s, &dt.date);
            if col.ty == FieldType::String && col.decimals >= NOT_FIXED_DEC && dt.micros != 0 {
                // A datetime as a string of "not fixed" decimals (ADDTIME of strings).
                push_time(&mut s, dt, 6);
            } else if col.ty != FieldType::Date {
                push_time(&mut s, dt, col.decimals);
            }
            s
        }
    };
    Some(Cow::Owned(s.into_bytes()))
}

/// A text-protocol row: each value a length-encoded string, NULL as 0xFB.
pub fn text_row(buf: &mut Vec<u8>, row: &[Value], cols: &[ColumnMeta], cs: WireCharset) {
    for (i, v) in row.iter().enumerate() {
        let fallback;
        let col = match cols.get(i) {
            Some(c) => c,
            None => {
                fallback = ColumnMeta::computed("", FieldType::VarString, 0, NOT_FIXED_DEC);
                &fallback
            }
        };
        match text_bytes(v, col, cs) {
            None => buf.push(0xFB),
            Some(s) => put_lenenc_str(buf, &s),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Binary protocol

fn as_i64(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        Value::UInt(u) => *u as i64,
        Value::Double(d) => *d as i64,
        Value::Decimal(d) => d
            .unscaled
            .checked_div(10i128.pow(u32::from(d.scale)))
            .unwrap_or(0) as i64,
        Value::Str(s) => s.trim().parse().unwrap_or(0),
        _ => 0,
    }
}

fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::UInt(u) => *u as f64,
        Value::Double(d) => *d,
        Value::Decimal(d) => d.to_string().parse().unwrap_or(0.0),
        Value::Str(s) => s.trim().parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

/// MYSQL_TIME in the binary protocol: a length byte, then 0, 4, 7 or 11 bytes.
fn put_binary_datetime(buf: &mut Vec<u8>, dt: &DateTime, date_only: bool) {
    let d = &dt.date;
    let time_zero = dt.hour == 0 && dt.minute == 0 && dt.second == 0;
    let len: u8 = if date_only || (time_zero && dt.micros == 0) {
        if d.year == 0 && d.month == 0 && d.day == 0 {
            0
        } else {
            4
        }
    } else if dt.micros == 0 {
        7
    } else {
        11
    };
    buf.push(len);
    if len >= 4 {
        buf.extend_from_slice(&d.year.to_le_bytes());
        buf.push(d.month);
        buf.push(d.day);
    }
    if len >= 7 {
        buf.extend_from_slice(&[dt.hour, dt.minute, dt.second]);
    }
    if len == 11 {
        buf.extend_from_slice(&dt.micros.to_le_bytes());
    }
}

/// MYSQL_TIME of a TIME in the binary protocol: a length byte (0, 8, or 12 with
/// microseconds), then is_negative, days (u32), hours (0..=23), minutes, seconds and the
/// microseconds (u32).
fn put_binary_time(buf: &mut Vec<u8>, t: &Time) {
    let (h, m, s, us) = (t.hours(), t.minute(), t.second(), t.fraction());
    let len: u8 = if t.micros == 0 {
        0
    } else if us == 0 {
        8
    } else {
        12
    };
    buf.push(len);
    if len >= 8 {
        buf.push(u8::from(t.is_negative()));
        buf.extend_from_slice(&((h / 24) as u32).to_le_bytes());
        buf.extend_from_slice(&[(h % 24) as u8, m as u8, s as u8]);
    }
    if len == 12 {
        buf.extend_from_slice(&(us as u32).to_le_bytes());
    }
}

/// One non-NULL value in the binary protocol, encoded as the column's type says.
pub fn binary_value(buf: &mut Vec<u8>, v: &Value, col: &ColumnMeta, cs: WireCharset) {
    match col.ty {
        FieldType::Tiny => buf.push(as_i64(v) as u8),
        // YEAR is a 2-byte integer in the binary protocol, as SMALLINT.
        FieldType::Short | FieldType::Year => {
            buf.extend_from_slice(&(as_i64(v) as u16).to_le_bytes())
        }
        FieldType::Int24 | FieldType::Long => {
            buf.extend_from_slice(&(as_i64(v) as u32).to_le_bytes())
        }
        FieldType::LongLong => {
            let n = match v {
                Value::UInt(u) => *u,
                v => as_i64(v) as u64,
            };
            buf.extend_from_slice(&n.to_le_bytes())
        }
        FieldType::Float => buf.extend_from_slice(&(as_f64(v) as f32).to_le_bytes()),
        FieldType::Double => buf.extend_from_slice(&as_f64(v).to_le_bytes()),
        FieldType::Date | FieldType::DateTime | FieldType::Timestamp => {
            let date_only = col.ty == FieldType::Date;
            match v {
                Value::Date(d) => put_binary_datetime(
                    buf,
                    &DateTime {
                        date: *d,
                        hour: 0,
                        minute: 0,
                        second: 0,
                        micros: 0,
                    },
                    date_only,
                ),
                Value::DateTime(dt) => put_binary_datetime(buf, dt, date_only),
                // Not a date: a zero date rather than a packet the client misreads.
                _ => buf.push(0),
            }
        }
        FieldType::Time => match v {
            Value::Time(t) => put_binary_time(buf, t),
            // A datetime in a TIME column: its time of day.
            Value::DateTime(dt) => put_binary_time(buf, &quire_sql::func::time::of_datetime(dt)),
            _ => buf.push(0),
        },
        FieldType::Null => {}
        FieldType::Bit
        | FieldType::NewDecimal
        | FieldType::String
        | FieldType::VarString
        | FieldType::Blob
        | FieldType::LongBlob => match text_bytes(v, col, cs) {
            Some(s) => put_lenenc_str(buf, &s),
            None => put_lenenc_str(buf, b""),
        },
    }
}

/// A binary-protocol row: header 0x00, the NULL bitmap (bit i + 2 for column i), then the
/// non-NULL values.
pub fn binary_row(buf: &mut Vec<u8>, row: &[Value], cols: &[ColumnMeta], cs: WireCharset) {
    buf.push(0x00);
    let start = buf.len();
    let n = cols.len().max(row.len());
    buf.resize(start + (n + 7 + 2) / 8, 0);
    for (i, v) in row.iter().enumerate() {
        if matches!(v, Value::Null) {
            let bit = i + 2;
            buf[start + bit / 8] |= 1 << (bit % 8);
        }
    }
    for (i, v) in row.iter().enumerate() {
        if matches!(v, Value::Null) {
            continue;
        }
        match cols.get(i) {
            Some(col) => binary_value(buf, v, col, cs),
            None => {
                let col = ColumnMeta::computed("", FieldType::VarString, 0, NOT_FIXED_DEC);
                binary_value(buf, v, &col, cs)
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The sink

/// Text (COM_QUERY) or binary (COM_STMT_EXECUTE) rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowFormat {
    Text,
    Binary,
}

/// The SQL layer's [`RowSink`] for one statement: writes column definitions and rows to
/// the connection as they come.
pub struct ResultSink<'c, S> {
    io: &'c mut PacketIo<S>,
    format: RowFormat,
    deprecate_eof: bool,
    cols: Vec<ColumnMeta>,
    started: bool,
    rowbuf: Vec<u8>,
    /// Rows sent (the slow log's `Rows_sent`).
    rows: u64,
    /// The connection's `character_set_results` (the `charset` module), which rows are
    /// written in too, and whether definitions carry MariaDB's extended metadata.
    wire: ColumnWire,
    /// The client sends files for LOAD DATA LOCAL (CLIENT_LOCAL_FILES).
    local_files: bool,
}

fn sink_err(e: std::io::Error) -> SinkError {
    SinkError(e.to_string())
}

impl<'c, S: Read + Write> ResultSink<'c, S> {
    pub fn new(io: &'c mut PacketIo<S>, format: RowFormat, deprecate_eof: bool) -> Self {
        ResultSink {
            io,
            format,
            deprecate_eof,
            cols: Vec::new(),
            started: false,
            rowbuf: Vec::with_capacity(256),
            local_files: false,
            rows: 0,
            wire: ColumnWire::PLAIN,
        }
    }

    /// Columns and rows go to a client as `wire` says (its `character_set_results`, and
    /// whether it negotiated extended metadata).
    pub fn with_wire(mut self, wire: ColumnWire) -> Self {
        self.wire = wire;
        self
    }

    /// Whether the client agreed to send files (CLIENT_LOCAL_FILES): `local_infile`.
    pub fn with_local_files(mut self, on: bool) -> Self {
        self.local_files = on;
        self
    }

    /// The results' character set (for the ERR that ends a statement).
    pub fn charset(&self) -> WireCharset {
        self.wire.cs
    }

    /// Rows sent so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The connection, for the OK or ERR that ends a statement without rows.
    pub fn io(&mut self) -> &mut PacketIo<S> {
        self.io
    }

    /// Whether column definitions went out (so the result needs its end marker).
    pub fn started(&self) -> bool {
        self.started
    }

    /// Ends the result set: EOF, or OK with header 0xFE under CLIENT_DEPRECATE_EOF.
    pub fn finish(self, status: u16, warnings: u16) -> std::io::Result<()> {
        let end = if self.deprecate_eof {
            ok_packet(
                &OkInfo {
                    status,
                    warnings,
                    ..OkInfo::default()
                },
                0xFE,
            )
        } else {
            eof_packet(status, warnings)
        };
        self.io.write_message(&end)
    }
}

impl<S: Read + Write> RowSink for ResultSink<'_, S> {
    fn columns(&mut self, cols: &[ColumnMeta]) -> Result<(), SinkError> {
        if self.started {
            return Err(SinkError("columns sent twice for one result set".into()));
        }
        if cols.is_empty() {
            // A column count of 0 would read as an OK packet: no result set, the statement
            // ends with OK.
            return Ok(());
        }
        self.started = true;
        self.cols = cols.to_vec();
        let mut count = Vec::with_capacity(9);
        put_lenenc_int(&mut count, cols.len() as u64);
        self.io.write_message(&count).map_err(sink_err)?;
        for c in cols {
            self.io
                .write_message(&column_definition(c, false, self.wire))
                .map_err(sink_err)?;
        }
        if !self.deprecate_eof {
            // The EOF between definitions and rows carries no meaningful status.
            self.io.write_message(&eof_packet(0, 0)).map_err(sink_err)?;
        }
        Ok(())
    }

    fn row(&mut self, row: &[Value]) -> Result<(), SinkError> {
        if !self.started {
            return Err(SinkError("row before columns".into()));
        }
        self.rowbuf.clear();
        match self.format {
            RowFormat::Text => text_row(&mut self.rowbuf, row, &self.cols, self.wire.cs),
            RowFormat::Binary => binary_row(&mut self.rowbuf, row, &self.cols, self.wire.cs),
        }
        self.rows += 1;
        self.io.write_message(&self.rowbuf).map_err(sink_err)
    }

    /// LOCAL INFILE (docs/protocol.md): asks the client for `name` with a 0xFB packet and
    /// reads its packets as they come.
    fn local_infile(&mut self, name: &str) -> Option<Box<dyn Read + '_>> {
        if !self.local_files {
            return None;
        }
        let mut req = Vec::with_capacity(1 + name.len());
        req.push(0xFB);
        req.extend_from_slice(name.as_bytes());
        let sent = self.io.write_message(&req).and_then(|()| self.io.flush());
        Some(Box::new(InfileReader {
            io: &mut *self.io,
            packet: Vec::new(),
            pos: 0,
            // A failed write: the connection is gone, read nothing.
            done: sent.is_err(),
        }))
    }
}

/// The client's file as it streams in: one packet at a time (at most
/// `max_allowed_packet` held), ended by an empty packet.
///
/// Invariant: the reader is not done until the empty packet (or a broken connection) was
/// read; dropping it earlier reads and discards the rest, so that the statement's answer
/// follows the client's last packet whatever the SQL layer stopped at.
struct InfileReader<'a, S: Read + Write> {
    io: &'a mut PacketIo<S>,
    packet: Vec<u8>,
    pos: usize,
    done: bool,
}

impl<S: Read + Write> Read for InfileReader<'_, S> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.pos == self.packet.len() {
            if self.done {
                return Ok(0);
            }
            match self.io.read_message() {
                Ok(m) if m.is_empty() => {
                    self.done = true;
                    return Ok(0);
                }
                Ok(m) => {
                    self.packet = m;
                    self.pos = 0;
                }
                Err(e) => {
                    self.done = true;
                    return Err(std::io::Error::other(format!(
                        "reading the client's file: {e}"
                    )));
                }
            }
        }
        let n = out.len().min(self.packet.len() - self.pos);
        out[..n].copy_from_slice(&self.packet[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

impl<S: Read + Write> Drop for InfileReader<'_, S> {
    fn drop(&mut self) {
        while !self.done {
            match self.io.read_message() {
                Ok(m) if !m.is_empty() => {}
                _ => self.done = true,
            }
        }
    }
}

/// Decimal text, for tests and parameter decoding.
pub fn decimal_from_text(s: &str) -> Option<Decimal> {
    let s = s.trim();
    let (neg, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) || frac.len() > 38 {
        return None;
    }
    let mut unscaled: i128 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        unscaled = unscaled
            .checked_mul(10)?
            .checked_add(i128::from(b - b'0'))?;
    }
    Some(Decimal {
        unscaled: if neg { -unscaled } else { unscaled },
        scale: u8::try_from(frac.len()).ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(ty: FieldType, decimals: u8) -> ColumnMeta {
        ColumnMeta::computed("c", ty, 20, decimals)
    }

    fn text(v: Value, ty: FieldType, decimals: u8) -> String {
        String::from_utf8(text_value(&v, &col(ty, decimals)).unwrap()).unwrap()
    }

    #[test]
    fn doubles_print_in_mysql_shortest_form() {
        assert_eq!(format_double(1e20), "1e20");
        assert_eq!(format_double(0.1), "0.1");
        assert_eq!(format_double(100.0), "100");
        assert_eq!(format_double(-2.5), "-2.5");
        // MariaDB 10.11.19: `SELECT 1.5e-7` is 0.00000015, `SELECT 1e-16 + 0` is 1e-16.
        assert_eq!(format_double(1.5e-7), "0.00000015");
        assert_eq!(format_double(-1e-10), "-0.0000000001");
        assert_eq!(format_double(1e-15), "0.000000000000001");
        assert_eq!(format_double(1e-16), "1e-16");
        assert_eq!(format_double(0.0001), "0.0001");
        assert_eq!(format_double(123456789012345.0), "123456789012345");
        assert_eq!(format_double(1e15), "1e15");
        assert_eq!(format_double(0.0), "0");
        assert_eq!(text(Value::Double(1.0 / 3.0), FieldType::Double, 2), "0.33");
        assert_eq!(
            text(
                Value::Double(0.1f32 as f64),
                FieldType::Float,
                NOT_FIXED_DEC
            ),
            "0.1"
        );
    }

    #[test]
    fn dates_and_datetimes_print_with_the_column_decimals() {
        let d = Date {
            year: 2024,
            month: 2,
            day: 9,
        };
        let dt = DateTime {
            date: d,
            hour: 7,
            minute: 5,
            second: 3,
            micros: 120_000,
        };
        assert_eq!(text(Value::Date(d), FieldType::Date, 0), "2024-02-09");
        assert_eq!(
            text(Value::DateTime(dt), FieldType::DateTime, 0),
            "2024-02-09 07:05:03"
        );
        assert_eq!(
            text(Value::DateTime(dt), FieldType::DateTime, 3),
            "2024-02-09 07:05:03.120"
        );
        assert_eq!(
            text(Value::DateTime(dt), FieldType::Timestamp, 6),
            "2024-02-09 07:05:03.120000"
        );
        assert_eq!(
            text(Value::Date(d), FieldType::DateTime, 0),
            "2024-02-09 00:00:00"
        );
    }

    #[test]
    fn text_row_encodes_null_as_fb() {
        let cols = [col(FieldType::LongLong, 0), col(FieldType::VarString, 0)];
        let mut buf = Vec::new();
        text_row(
            &mut buf,
            &[Value::Null, Value::Str("ab".into())],
            &cols,
            WireCharset::Utf8,
        );
        assert_eq!(buf, [0xFB, 2, b'a', b'b']);
        buf.clear();
        text_row(
            &mut buf,
            &[
                Value::Int(-12),
                Value::Decimal(Decimal {
                    unscaled: -5,
                    scale: 2,
                }),
            ],
            &[col(FieldType::Long, 0), col(FieldType::NewDecimal, 2)],
            WireCharset::Utf8,
        );
        assert_eq!(buf, b"\x03-12\x05-0.05");
    }

    #[test]
    fn latin1_results_convert_text_columns_only() {
        let mut text = col(FieldType::VarString, 0);
        text.charset = 45;
        text.length = 40;
        let mut bin = col(FieldType::VarString, 0);
        bin.charset = 63;
        let mut buf = Vec::new();
        let row = [Value::Str("é€Ω".into()), Value::Str("é".into())];
        text_row(
            &mut buf,
            &row,
            &[text.clone(), bin.clone()],
            WireCharset::Latin1,
        );
        assert_eq!(buf, b"\x03\xe9\x80?\x02\xc3\xa9");
        buf.clear();
        binary_row(&mut buf, &row[..1], &[text.clone()], WireCharset::Latin1);
        assert_eq!(buf, b"\x00\x00\x03\xe9\x80?");
        text.name = "né".into();
        let latin1 = ColumnWire {
            cs: WireCharset::Latin1,
            extended: false,
        };
        let d = column_definition(&text, false, latin1);
        assert_eq!(&d[..10], b"\x03def\x00\x00\x00\x02n\xe9");
        // After org_name: latin1_swedish_ci, and 40 bytes of utf8mb4 are 10 characters.
        let fixed = 11 + usize::from(d[10]);
        assert_eq!(&d[fixed..fixed + 7], &[0x0C, 8, 0, 10, 0, 0, 0]);
    }

    #[test]
    fn binary_row_has_null_bitmap_at_offset_two() {
        let cols = [
            col(FieldType::Long, 0),
            col(FieldType::VarString, 0),
            col(FieldType::Tiny, 0),
        ];
        let mut buf = Vec::new();
        binary_row(
            &mut buf,
            &[Value::Int(258), Value::Null, Value::Int(-1)],
            &cols,
            WireCharset::Utf8,
        );
        // header, bitmap (column 1 → bit 3), LONG 258, TINY -1
        assert_eq!(buf, [0x00, 0b0000_1000, 2, 1, 0, 0, 0xFF]);
    }

    #[test]
    fn binary_datetime_uses_the_shortest_length() {
        let d = Date {
            year: 2024,
            month: 12,
            day: 31,
        };
        let mut buf = Vec::new();
        binary_value(
            &mut buf,
            &Value::Date(d),
            &col(FieldType::Date, 0),
            WireCharset::Utf8,
        );
        assert_eq!(buf, [4, 0xE8, 0x07, 12, 31]);
        buf.clear();
        let dt = DateTime {
            date: d,
            hour: 23,
            minute: 59,
            second: 58,
            micros: 1,
        };
        binary_value(
            &mut buf,
            &Value::DateTime(dt),
            &col(FieldType::DateTime, 6),
            WireCharset::Utf8,
        );
        assert_eq!(buf, [11, 0xE8, 0x07, 12, 31, 23, 59, 58, 1, 0, 0, 0]);
    }

    /// A stream that records writes and has nothing to read.
    struct Sent(Vec<u8>);
    impl std::io::Read for Sent {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Ok(0)
        }
    }
    impl std::io::Write for Sent {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The payloads of the packets written.
    fn packets(mut wire: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        while wire.len() >= 4 {
            let len = usize::from(wire[0]) | usize::from(wire[1]) << 8 | usize::from(wire[2]) << 16;
            out.push(wire[4..4 + len].to_vec());
            wire = &wire[4 + len..];
        }
        out
    }

    fn stream_result(deprecate_eof: bool) -> Vec<Vec<u8>> {
        let mut io = PacketIo::new(Sent(Vec::new()), 1 << 20);
        let mut sink = ResultSink::new(&mut io, RowFormat::Text, deprecate_eof);
        sink.columns(&[col(FieldType::LongLong, 0)]).unwrap();
        sink.row(&[Value::Int(1)]).unwrap();
        sink.row(&[Value::Null]).unwrap();
        assert!(sink.started());
        sink.finish(0x0002, 3).unwrap();
        io.flush().unwrap();
        packets(&io.stream().0)
    }

    #[test]
    fn result_set_ends_with_ok_fe_under_deprecate_eof() {
        let p = stream_result(true);
        assert_eq!(p.len(), 5, "{p:?}"); // count, definition, 2 rows, OK 0xFE
        assert_eq!(p[0], [1]);
        assert_eq!(p[2], [1, b'1']);
        assert_eq!(p[3], [0xFB]);
        assert_eq!(p[4], [0xFE, 0, 0, 2, 0, 3, 0]);
    }

    #[test]
    fn result_set_has_two_eofs_without_deprecate_eof() {
        let p = stream_result(false);
        assert_eq!(p.len(), 6, "{p:?}"); // count, definition, EOF, 2 rows, EOF
        assert_eq!(p[2], [0xFE, 0, 0, 0, 0]);
        assert_eq!(p[5], [0xFE, 3, 0, 2, 0]);
    }

    #[test]
    fn column_definition_layout() {
        let mut c = col(FieldType::VarString, 0);
        c.schema = "db".into();
        c.table = "t".into();
        c.name = "n".into();
        c.length = 400;
        let d = column_definition(&c, false, ColumnWire::PLAIN);
        let mut expect = vec![
            3, b'd', b'e', b'f', 2, b'd', b'b', 1, b't', 0, 1, b'n', 0, 0x0C,
        ];
        expect.extend_from_slice(&45u16.to_le_bytes());
        expect.extend_from_slice(&400u32.to_le_bytes());
        expect.extend_from_slice(&[253, 0, 0, 0, 0, 0]);
        assert_eq!(d, expect);
    }

    /// As MariaDB 10.11 sends them to a client that negotiated extended metadata
    /// (measured): after org_name, `00` for a plain column, `06 01 04 'json'` for a JSON
    /// one.
    #[test]
    fn extended_metadata_follows_org_name() {
        let ext = ColumnWire {
            cs: WireCharset::Utf8,
            extended: true,
        };
        let mut c = col(FieldType::LongBlob, 0);
        c.name = "j".into();
        c.org_name = "j".into();
        let head: &[u8] = &[3, b'd', b'e', b'f', 0, 0, 0, 1, b'j', 1, b'j'];
        let plain = column_definition(&c, false, ext);
        assert_eq!(&plain[..head.len()], head);
        assert_eq!(&plain[head.len()..head.len() + 2], &[0x00, 0x0C]);
        assert_eq!(
            plain.len(),
            column_definition(&c, false, ColumnWire::PLAIN).len() + 1
        );
        c.json = true;
        let json = column_definition(&c, false, ext);
        assert_eq!(&json[..head.len()], head);
        assert_eq!(&json[head.len()..head.len() + 8], b"\x06\x01\x04json\x0C");
        // Without the capability a JSON column's definition has no block.
        let without_block: Vec<u8> = plain[..head.len()]
            .iter()
            .chain(&plain[head.len() + 1..])
            .copied()
            .collect();
        assert_eq!(
            column_definition(&c, false, ColumnWire::PLAIN),
            without_block
        );
    }

    #[test]
    fn decimal_text_parses() {
        assert_eq!(
            decimal_from_text("-12.340"),
            Some(Decimal {
                unscaled: -12340,
                scale: 3
            })
        );
        assert_eq!(
            decimal_from_text("7"),
            Some(Decimal {
                unscaled: 7,
                scale: 0
            })
        );
        assert_eq!(decimal_from_text("1e3"), None);
        assert_eq!(decimal_from_text("."), None);
    }
}
