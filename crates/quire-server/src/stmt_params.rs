//! COM_STMT_EXECUTE's parameters: the NULL bitmap, the types (sent with
//! `new_params_bound_flag = 1`, else those of the previous execution) and the values.
//!
//! ```text
//!   0x17 │ stmt id (4) │ flags (1) │ iteration count (4) │ NULL bitmap ((n+7)/8)
//!        │ new_params_bound (1) │ [type (1) + flags (1)] × n │ values of non-NULL params
//! ```
//!
//! A parameter that received COM_STMT_SEND_LONG_DATA has no value in the packet: its value
//! is the data accumulated for it.

use quire_engine::row::{Date, DateTime, Time};
use quire_sql::{FieldType, Value};

use crate::reply::{Malformed, Reader};
use crate::resultset::decimal_from_text;

/// The "unsigned" bit in a parameter's type flags.
const UNSIGNED: u8 = 0x80;

/// One parameter's type as the client sent it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamType {
    pub ty: u8,
    pub unsigned: bool,
}

/// The header of COM_STMT_EXECUTE (after the command byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecuteHeader {
    pub stmt_id: u32,
    /// CURSOR_TYPE_* (cursors are not opened: the result is sent whole, see docs).
    pub flags: u8,
}

/// The parameters' bound types as the SQL layer types a result column that is a bare
/// `?` by them (`quire_sql::param_types`): the type byte as a field type, VARCHAR for the
/// ones it leaves as planned.
pub fn bound_types(types: &[ParamType]) -> Vec<quire_sql::param_types::ParamType> {
    types
        .iter()
        .map(|t| quire_sql::param_types::ParamType {
            ty: match t.ty {
                1 => FieldType::Tiny,
                2 => FieldType::Short,
                3 => FieldType::Long,
                8 => FieldType::LongLong,
                5 => FieldType::Double,
                12 => FieldType::DateTime,
                _ => FieldType::VarString,
            },
            unsigned: t.unsigned,
        })
        .collect()
}

pub fn parse_header(r: &mut Reader<'_>) -> Result<ExecuteHeader, Malformed> {
    let stmt_id = r.u32()?;
    let flags = r.u8()?;
    let _iterations = r.u32()?;
    Ok(ExecuteHeader { stmt_id, flags })
}

/// Decodes `count` parameters. `types` holds the previous execution's types and is
/// replaced when the packet binds new ones; `long_data[i]` is the data sent for parameter
/// i, if any.
pub fn decode_params(
    r: &mut Reader<'_>,
    count: usize,
    types: &mut Vec<ParamType>,
    long_data: &[Option<Vec<u8>>],
) -> Result<Vec<Value>, Malformed> {
    if count == 0 {
        return Ok(Vec::new());
    }
    let bitmap = r.bytes(count.div_ceil(8))?;
    // Some clients end the packet after the bitmap when every parameter is NULL and the
    // types are unchanged.
    let new_bound = if r.remaining() == 0 { 0 } else { r.u8()? };
    if new_bound == 1 {
        types.clear();
        for _ in 0..count {
            let ty = r.u8()?;
            let flags = r.u8()?;
            types.push(ParamType {
                ty,
                unsigned: flags & UNSIGNED != 0,
            });
        }
    }
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let is_null = bitmap[i / 8] & (1 << (i % 8)) != 0;
        if is_null {
            out.push(Value::Null);
            continue;
        }
        if let Some(Some(data)) = long_data.get(i) {
            out.push(string_value(data));
            continue;
        }
        // Types never bound: the client broke the protocol.
        let t = types.get(i).copied().ok_or(Malformed)?;
        out.push(decode_value(r, t)?);
    }
    Ok(out)
}

/// Text in UTF-8 stays a string (compared with VARCHAR columns); other bytes stay bytes.
fn string_value(b: &[u8]) -> Value {
    match std::str::from_utf8(b) {
        Ok(s) => Value::Str(s.to_owned()),
        Err(_) => Value::Bytes(b.to_vec()),
    }
}

fn int(v: i64, u: u64, unsigned: bool) -> Value {
    if unsigned {
        Value::UInt(u)
    } else {
        Value::Int(v)
    }
}

/// One value of binary-protocol type `t`.
pub fn decode_value(r: &mut Reader<'_>, t: ParamType) -> Result<Value, Malformed> {
    Ok(match t.ty {
        // TINY
        1 => {
            let b = r.u8()?;
            int(i64::from(b as i8), u64::from(b), t.unsigned)
        }
        // SHORT, YEAR
        2 | 13 => {
            let n = r.u16()?;
            int(i64::from(n as i16), u64::from(n), t.unsigned)
        }
        // LONG, INT24
        3 | 9 => {
            let n = r.u32()?;
            int(i64::from(n as i32), u64::from(n), t.unsigned)
        }
        // LONGLONG
        8 => {
            let n = r.u64()?;
            int(n as i64, n, t.unsigned)
        }
        // FLOAT
        4 => Value::Double(f64::from(f32::from_bits(r.u32()?))),
        // DOUBLE
        5 => Value::Double(f64::from_bits(r.u64()?)),
        // NULL
        6 => Value::Null,
        // TIMESTAMP, DATE, DATETIME, NEWDATE
        7 | 10 | 12 | 14 => decode_datetime(r, t.ty == 10)?,
        // TIME: sign, days, hours, minutes, seconds, microseconds.
        11 => Value::Time(decode_time(r)?),
        // DECIMAL, NEWDECIMAL
        0 | 246 => {
            let b = r.lenenc_bytes()?;
            let s = std::str::from_utf8(b).map_err(|_| Malformed)?;
            match decimal_from_text(s) {
                Some(d) => Value::Decimal(d),
                None => Value::Str(s.to_owned()),
            }
        }
        // VARCHAR, BIT, JSON, ENUM, SET, the BLOBs, VAR_STRING, STRING, GEOMETRY
        15 | 16 | 245 | 247..=255 => string_value(r.lenenc_bytes()?),
        _ => return Err(Malformed),
    })
}

fn decode_datetime(r: &mut Reader<'_>, date_only: bool) -> Result<Value, Malformed> {
    let len = r.u8()?;
    let (mut year, mut month, mut day) = (0u16, 0u8, 0u8);
    let (mut hour, mut minute, mut second, mut micros) = (0u8, 0u8, 0u8, 0u32);
    match len {
        0 => {}
        4 | 7 | 11 => {
            year = r.u16()?;
            month = r.u8()?;
            day = r.u8()?;
            if len >= 7 {
                hour = r.u8()?;
                minute = r.u8()?;
                second = r.u8()?;
            }
            if len == 11 {
                micros = r.u32()?;
            }
        }
        _ => return Err(Malformed),
    }
    let date = Date { year, month, day };
    if date_only || (len <= 4) {
        Ok(Value::Date(date))
    } else {
        Ok(Value::DateTime(DateTime {
            date,
            hour,
            minute,
            second,
            micros,
        }))
    }
}

/// MYSQL_TIME of a TIME parameter; a duration past 838:59:59.999999 is clipped to it, as
/// MariaDB stores one into a TIME.
fn decode_time(r: &mut Reader<'_>) -> Result<Time, Malformed> {
    let len = r.u8()?;
    match len {
        0 => Ok(Time::from_micros(0)),
        8 | 12 => {
            let neg = r.u8()? == 1;
            let days = r.u32()?;
            let (h, m, s) = (r.u8()?, r.u8()?, r.u8()?);
            if m > 59 || s > 59 {
                return Err(Malformed);
            }
            let us = if len == 12 { r.u32()? } else { 0 };
            if us > 999_999 {
                return Err(Malformed);
            }
            let micros = ((i128::from(days) * 24 + i128::from(h)) * 3600
                + i128::from(m) * 60
                + i128::from(s))
                * 1_000_000
                + i128::from(us);
            let micros = if neg { -micros } else { micros };
            Ok(quire_sql::func::time::clip(micros).0)
        }
        _ => Err(Malformed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(
        buf: &[u8],
        count: usize,
        types: &mut Vec<ParamType>,
    ) -> Result<Vec<Value>, Malformed> {
        decode_params(&mut Reader::new(buf), count, types, &[])
    }

    #[test]
    fn params_decode_with_their_types_and_null_bitmap() {
        let mut buf = vec![0b0000_0010, 1]; // param 1 is NULL; new types follow
        buf.extend_from_slice(&[8, 0, 253, 0, 1, 0x80]); // LONGLONG, VAR_STRING, TINY unsigned
        buf.extend_from_slice(&(-7i64).to_le_bytes());
        buf.push(200);
        let mut types = Vec::new();
        let v = decode(&buf, 3, &mut types).unwrap();
        assert_eq!(v, [Value::Int(-7), Value::Null, Value::UInt(200)]);
        assert_eq!(types.len(), 3);
    }

    #[test]
    fn unbound_execution_reuses_the_previous_types() {
        let mut types = vec![ParamType {
            ty: 253,
            unsigned: false,
        }];
        let v = decode(&[0, 0, 2, b'h', b'i'], 1, &mut types).unwrap();
        assert_eq!(v, [Value::Str("hi".into())]);
    }

    #[test]
    fn long_data_replaces_the_inline_value() {
        let mut types = Vec::new();
        let buf = [0, 1, 252, 0];
        let v = decode_params(
            &mut Reader::new(&buf),
            1,
            &mut types,
            &[Some(b"long".to_vec())],
        )
        .unwrap();
        assert_eq!(v, [Value::Str("long".into())]);
    }

    #[test]
    fn dates_decimals_and_doubles_decode() {
        let mut types = Vec::new();
        let mut buf = vec![0, 1, 10, 0, 12, 0, 246, 0, 5, 0];
        buf.extend_from_slice(&[4, 0xE8, 0x07, 1, 2]);
        buf.extend_from_slice(&[7, 0xE8, 0x07, 1, 2, 3, 4, 5]);
        buf.extend_from_slice(&[4, b'1', b'.', b'2', b'5']);
        buf.extend_from_slice(&0.5f64.to_le_bytes());
        let v = decode(&buf, 4, &mut types).unwrap();
        assert_eq!(v[0], Value::Date(Date::new(2024, 1, 2)));
        assert!(matches!(v[1], Value::DateTime(dt) if dt.hour == 3 && dt.second == 5));
        assert_eq!(v[2].to_string_lossy_for_test(), "1.25");
        assert_eq!(v[3], Value::Double(0.5));
    }

    #[test]
    fn truncated_or_unknown_types_are_malformed_not_panics() {
        let mut types = Vec::new();
        assert_eq!(decode(&[0, 1, 8, 0, 1, 2], 1, &mut types), Err(Malformed));
        let mut types = Vec::new();
        assert_eq!(decode(&[0, 1, 100, 0, 1], 1, &mut types), Err(Malformed));
        let mut types = Vec::new();
        assert_eq!(decode(&[0, 0], 1, &mut types), Err(Malformed));
        assert_eq!(decode(&[], 1, &mut types), Err(Malformed));
    }

    trait ForTest {
        fn to_string_lossy_for_test(&self) -> String;
    }
    impl ForTest for Value {
        fn to_string_lossy_for_test(&self) -> String {
            match self {
                Value::Decimal(d) => d.to_string(),
                other => format!("{other:?}"),
            }
        }
    }
}
