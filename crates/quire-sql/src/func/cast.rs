//! CAST / CONVERT, and MySQL's conversions of any value to an integer, a double, a decimal
//! or a date, with the warnings MariaDB 10.11 gives:
//!
//! - a string that is not all number: 1292 "Truncated incorrect INTEGER value: 's'"
//!   (DOUBLE, DECIMAL likewise), a Warning; only trailing spaces make it a Note; the number
//!   it starts with is the value ('12abc' → 12, 'abc' → 0; '1e3' is 1 as an integer);
//! - a string or number that is no date: 1292 "Incorrect datetime value: 's'", and NULL;
//! - an integer out of range: clamped (strings), wrapped with note 1105 (CAST to SIGNED /
//!   UNSIGNED of an integer), or clamped with note 1916 (doubles).

use quire_engine::row::{Date, DateTime, Decimal, Value};

use super::{datetime, truncated, CastTo};
use crate::error::{Result, SqlError};
use crate::expr::Env;
use crate::types::{self, display};

/// How much of a string a number conversion used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rest {
    /// All of it.
    None,
    /// All but trailing spaces (a Note).
    Spaces,
    /// Not all (a Warning): garbage after the number, or no number at all.
    Garbage,
}

/// The number `s` starts with (after leading spaces): an integer, or with `float` also a
/// fraction and an exponent; and what follows it.
fn number_prefix(s: &str, float: bool) -> (&str, Rest) {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r']);
    let b = t.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    let digits_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut any = i > digits_start;
    if float && i < b.len() && b[i] == b'.' {
        let j = i + 1;
        let mut k = j;
        while k < b.len() && b[k].is_ascii_digit() {
            k += 1;
        }
        if k > j || any {
            any |= k > j;
            i = k;
        }
    }
    if float && any && i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut k = i + 1;
        if k < b.len() && (b[k] == b'-' || b[k] == b'+') {
            k += 1;
        }
        let ds = k;
        while k < b.len() && b[k].is_ascii_digit() {
            k += 1;
        }
        if k > ds {
            i = k;
        }
    }
    if !any {
        return ("", Rest::Garbage);
    }
    let rest = &t[i..];
    let r = if rest.is_empty() {
        Rest::None
    } else if rest.bytes().all(|c| c == b' ') {
        Rest::Spaces
    } else {
        Rest::Garbage
    };
    (&t[..i], r)
}

fn note_rest(env: &dyn Env, rest: Rest, kind: &str, s: &str) {
    match rest {
        Rest::None => {}
        Rest::Spaces => truncated(env, "Note", kind, s),
        Rest::Garbage => truncated(env, "Warning", kind, s),
    }
}

/// A string as an integer (MySQL's `val_int` of a string): the leading integer, clamped to
/// `[i64::MIN, u64::MAX]`, with 1292 when that is not the whole string or overflows.
pub fn str_to_int(s: &str, env: &dyn Env) -> i128 {
    let (num, rest) = number_prefix(s, false);
    let (neg, digits) = match num.as_bytes().first() {
        Some(b'-') => (true, &num[1..]),
        Some(b'+') => (false, &num[1..]),
        _ => (false, num),
    };
    let mut n: i128 = 0;
    let mut overflow = false;
    for c in digits.bytes() {
        n = n * 10 + i128::from(c - b'0');
        if n > i128::from(u64::MAX) {
            overflow = true;
            n = i128::from(u64::MAX);
            break;
        }
    }
    if neg {
        n = -n;
        if n < i128::from(i64::MIN) {
            overflow = true;
            n = i128::from(i64::MIN);
        }
    }
    if overflow {
        truncated(env, "Warning", "INTEGER", s);
    } else {
        note_rest(env, rest, "INTEGER", s);
    }
    n
}

/// A string as a double: its leading number, with 1292 when that is not the whole string.
pub fn str_to_f64(s: &str, env: &dyn Env) -> f64 {
    let (num, rest) = number_prefix(s, true);
    let f: f64 = num.parse().unwrap_or(0.0);
    if !f.is_finite() {
        truncated(env, "Warning", "DOUBLE", s);
        return if f > 0.0 { f64::MAX } else { f64::MIN };
    }
    note_rest(env, rest, "DOUBLE", s);
    f
}

/// A string as a decimal: its leading number, with 1292 when that is not the whole string.
pub fn str_to_decimal(s: &str, env: &dyn Env) -> Decimal {
    let (num, rest) = number_prefix(s, true);
    note_rest(env, rest, "DECIMAL", s);
    match types::parse_number(num) {
        Some(types::Num::Int(i)) => Decimal::new(i, 0),
        Some(types::Num::Dec(d)) => d,
        Some(types::Num::Float(f)) => f64_to_decimal(f).unwrap_or(Decimal::new(0, 0)),
        None => Decimal::new(0, 0),
    }
}

/// A double as the exact decimal of its shortest form (`0.1` → 0.1), if it fits 38 digits.
pub fn f64_to_decimal(f: f64) -> Option<Decimal> {
    if !f.is_finite() {
        return None;
    }
    // Plain notation: Rust's Display never uses an exponent.
    let s = format!("{f}");
    match types::parse_number(&s) {
        Some(types::Num::Int(i)) => Some(Decimal::new(i, 0)),
        Some(types::Num::Dec(d)) => Some(d),
        _ => None,
    }
}

/// `d` rounded half away from zero to an integer.
pub fn round_decimal(d: Decimal) -> i128 {
    types::round_to_scale(d, 0).map_or(0, |d| d.unscaled)
}

/// A double rounded as C's `rint` (half to even), MySQL's double-to-integer.
pub fn rint(f: f64) -> f64 {
    let r = f.round();
    if (f - f.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
        r - f.signum()
    } else {
        r
    }
}

/// A date as MySQL's number YYYYMMDD.
pub fn date_number(d: &Date) -> i128 {
    i128::from(d.year) * 10_000 + i128::from(d.month) * 100 + i128::from(d.day)
}

/// A datetime as MySQL's number YYYYMMDDHHMMSS.
pub fn datetime_number(dt: &DateTime) -> i128 {
    date_number(&dt.date) * 1_000_000
        + i128::from(dt.hour) * 10_000
        + i128::from(dt.minute) * 100
        + i128::from(dt.second)
}

/// Any value as an integer (MySQL's `val_int`), `None` for NULL: decimals round half away
/// from zero, doubles half to even (clamped to BIGINT), strings take their leading integer
/// (1292 if there is more), dates are YYYYMMDD[HHMMSS].
pub fn to_int(v: &Value, env: &dyn Env) -> Option<i128> {
    Some(match v {
        Value::Null => return None,
        Value::Int(i) => i128::from(*i),
        Value::UInt(u) => i128::from(*u),
        Value::Decimal(d) => round_decimal(*d),
        Value::Double(f) => double_to_i64(*f),
        Value::Str(s) => str_to_int(s, env),
        Value::Bytes(b) => str_to_int(&String::from_utf8_lossy(b), env),
        Value::Date(d) => date_number(d),
        Value::DateTime(dt) => datetime_number(dt),
        // [-]HHMMSS, the fraction rounded half away from zero.
        Value::Time(t) => match super::time::number(*t) {
            Value::Int(i) => i128::from(i),
            Value::Decimal(d) => round_decimal(d),
            _ => 0,
        },
    })
}

fn double_to_i64(f: f64) -> i128 {
    let r = rint(f);
    if r >= 9.223_372_036_854_776e18 {
        i128::from(i64::MAX)
    } else if r <= -9.223_372_036_854_776e18 {
        i128::from(i64::MIN)
    } else {
        r as i128
    }
}

/// [`to_int`] as an i64 (an unsigned value above i64::MAX wraps, as MySQL's `longlong`).
pub fn to_i64(v: &Value, env: &dyn Env) -> Option<i64> {
    to_int(v, env).map(|n| n as i64)
}

/// Any value as a double (MySQL's `val_real`), `None` for NULL.
pub fn to_f64(v: &Value, env: &dyn Env) -> Option<f64> {
    Some(match v {
        Value::Null => return None,
        Value::Str(s) => str_to_f64(s, env),
        Value::Bytes(b) => str_to_f64(&String::from_utf8_lossy(b), env),
        other => types::num(other),
    })
}

/// Any value as a decimal (MySQL's `val_decimal`), `None` for NULL (or a double beyond 38
/// digits, which MySQL would also refuse).
pub fn to_decimal(v: &Value, env: &dyn Env) -> Option<Decimal> {
    match v {
        Value::Null => None,
        Value::Int(i) => Some(Decimal::new(i128::from(*i), 0)),
        Value::UInt(u) => Some(Decimal::new(i128::from(*u), 0)),
        Value::Decimal(d) => Some(*d),
        Value::Double(f) => f64_to_decimal(*f),
        Value::Str(s) => Some(str_to_decimal(s, env)),
        Value::Bytes(b) => Some(str_to_decimal(&String::from_utf8_lossy(b), env)),
        Value::Date(d) => Some(Decimal::new(date_number(d), 0)),
        Value::DateTime(dt) => {
            let n = datetime_number(dt) * 1_000_000 + i128::from(dt.micros);
            Some(Decimal::new(n, 6))
        }
        Value::Time(t) => match super::time::number(*t) {
            Value::Int(i) => Some(Decimal::new(i128::from(i), 0)),
            Value::Decimal(d) => Some(d),
            _ => None,
        },
    }
}

/// Any value as text, `None` for NULL.
pub fn to_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        other => Some(types::to_text(other.clone())),
    }
}

fn signed_range(n: i128) -> bool {
    (i128::from(i64::MIN)..=i128::from(i64::MAX)).contains(&n)
}

/// CAST(v AS to); `args` is the value, then for DECIMAL the cast's text (for 1264).
pub fn eval(to: CastTo, args: Vec<Value>, env: &dyn Env) -> Result<Value> {
    let mut it = args.into_iter();
    let v = it.next().unwrap_or(Value::Null);
    let name = match it.next() {
        Some(Value::Str(s)) => s,
        _ => "CAST".into(),
    };
    if matches!(v, Value::Null) {
        return Ok(Value::Null);
    }
    Ok(match to {
        CastTo::Signed => Value::Int(cast_signed(&v, env)),
        CastTo::Unsigned => Value::UInt(cast_unsigned(&v, env)),
        CastTo::Decimal { precision, scale } => {
            cast_decimal(&v, precision, scale, &name, env).map_or(Value::Null, Value::Decimal)
        }
        CastTo::Double => to_f64(&v, env).map_or(Value::Null, Value::Double),
        CastTo::Float => {
            to_f64(&v, env).map_or(Value::Null, |f| Value::Double(f64::from(f as f32)))
        }
        CastTo::Char(n) => {
            let s = match &v {
                Value::Double(f) => types::format_double(*f),
                other => types::to_text(other.clone()),
            };
            match n {
                Some(n) if s.chars().count() > n as usize => {
                    super::warn(
                        env,
                        "Warning",
                        1292,
                        format!("Truncated incorrect CHAR({n}) value: '{s}'"),
                    );
                    Value::Str(s.chars().take(n as usize).collect())
                }
                _ => Value::Str(s),
            }
        }
        CastTo::Bytes(cs) => match v {
            Value::Str(s) => Value::Bytes(cs.encode(&s)),
            Value::Bytes(b) => Value::Bytes(b),
            other => Value::Bytes(display(&other).into_bytes()),
        },
        CastTo::Utf8mb4 => match v {
            Value::Bytes(b) => Value::Str(String::from_utf8_lossy(&b).into_owned()),
            other => Value::Str(types::to_text(other)),
        },
        CastTo::Binary(n) => {
            let mut b = match v {
                Value::Bytes(b) => b,
                Value::Str(s) => s.into_bytes(),
                Value::Double(f) => types::format_double(f).into_bytes(),
                other => display(&other).into_bytes(),
            };
            if let Some(n) = n {
                let n = n as usize;
                if b.len() > n {
                    super::warn(
                        env,
                        "Warning",
                        1292,
                        format!(
                            "Truncated incorrect BINARY({n}) value: '{}'",
                            String::from_utf8_lossy(&b)
                        ),
                    );
                    b.truncate(n);
                } else {
                    b.resize(n, 0);
                }
            }
            Value::Bytes(b)
        }
        CastTo::Date => match datetime::to_datetime(&v, env, datetime::Zeros::Allowed) {
            Some(t) => Value::Date(t.dt.date),
            None => Value::Null,
        },
        CastTo::DateTime(fsp) => match datetime::to_datetime(&v, env, datetime::Zeros::Allowed) {
            Some(t) => Value::DateTime(datetime::truncate_fsp(t.dt, fsp)),
            None => Value::Null,
        },
        CastTo::Time(fsp) => match super::time::to_time(&v, env) {
            Some(t) => Value::Time(super::time::truncate(t, fsp)),
            None => Value::Null,
        },
    })
}

fn cast_signed(v: &Value, env: &dyn Env) -> i64 {
    match v {
        Value::Double(f) => {
            let r = rint(*f);
            if !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&r) {
                super::warn(
                    env,
                    "Note",
                    1916,
                    format!(
                        "Got overflow when converting '{}' to SIGNED BIGINT. Value truncated",
                        types::format_double(*f)
                    ),
                );
            }
            double_to_i64(*f) as i64
        }
        // An unsigned BIGINT keeps its bits (MariaDB says nothing).
        Value::UInt(u) => *u as i64,
        other => {
            let n = to_int(other, env).unwrap_or(0);
            if n > i128::from(i64::MAX) && n <= i128::from(u64::MAX) && !signed_range(n) {
                // A string that reads as an unsigned BIGINT: its bits, as MySQL gives them.
                let s = matches!(other, Value::Str(_) | Value::Bytes(_));
                if s && n != i128::from(u64::MAX) {
                    super::warn(env,
                        "Note",
                        1105,
                        "Cast to signed converted positive out-of-range integer to it's negative complement".into(),
                    );
                }
            }
            n as i64
        }
    }
}

fn cast_unsigned(v: &Value, env: &dyn Env) -> u64 {
    let complement = || {
        super::warn(
            env,
            "Note",
            1105,
            "Cast to unsigned converted negative integer to it's positive complement".into(),
        )
    };
    match v {
        Value::Double(f) => {
            let r = rint(*f);
            if !(0.0..1.844_674_407_370_955_2e19).contains(&r) {
                super::warn(
                    env,
                    "Note",
                    1916,
                    format!(
                        "Got overflow when converting '{}' to UNSIGNED BIGINT. Value truncated",
                        types::format_double(*f)
                    ),
                );
                return if r < 0.0 { 0 } else { u64::MAX };
            }
            r as u64
        }
        Value::Decimal(d) if d.unscaled < 0 => {
            // MySQL clamps a negative decimal to 0 (with 1916).
            let n = round_decimal(*d);
            if n < 0 {
                super::warn(
                    env,
                    "Note",
                    1916,
                    format!(
                        "Got overflow when converting '{d}' to UNSIGNED BIGINT. Value truncated"
                    ),
                );
                return 0;
            }
            n as u64
        }
        other => {
            let n = to_int(other, env).unwrap_or(0);
            if n < 0 {
                complement();
            }
            n as u64
        }
    }
}

/// CAST(v AS DECIMAL(p, s)): rounded half away from zero to `s`; beyond `p` digits, the
/// largest value of the type with 1264 "Out of range value for column 'CAST(…)' at row 1"
/// (the cast as sqlparser prints it: MariaDB keeps the case the client wrote).
fn cast_decimal(v: &Value, precision: u8, scale: u8, name: &str, env: &dyn Env) -> Option<Decimal> {
    let d = match v {
        Value::Double(f) if f.abs() >= 1e38 => {
            super::warn(
                env,
                "Warning",
                1916,
                "Got overflow when converting '' to DECIMAL. Value truncated".into(),
            );
            Decimal::new(if *f < 0.0 { -1 } else { 1 } * 10i128.pow(38), 0)
        }
        other => to_decimal(other, env)?,
    };
    let max = 10i128.pow(u32::from(precision)) - 1;
    match types::round_to_scale(d, scale) {
        Some(r) if r.unscaled.abs() <= max => Some(r),
        _ => {
            super::warn(
                env,
                "Warning",
                1264,
                format!("Out of range value for column '{name}' at row 1"),
            );
            Some(Decimal::new(if d.unscaled < 0 { -max } else { max }, scale))
        }
    }
}

/// Checks a DECIMAL(p, s) of CAST on the expression written `arg`: 1426 when p > 65
/// (MariaDB's maximum; Quire's is 38, which is 1235 beyond), 1427 when s > p.
pub fn check_decimal(precision: u64, scale: u64, arg: &str) -> Result<(u8, u8)> {
    if precision > 65 {
        return Err(SqlError::TooBigPrecision {
            what: arg.into(),
            max: 65,
        });
    }
    if scale > precision {
        return Err(SqlError::ScaleAbovePrecision(String::new()));
    }
    if precision > 38 {
        return Err(SqlError::Unsupported(format!(
            "DECIMAL({precision},{scale}) beyond 38 digits"
        )));
    }
    Ok((precision as u8, scale as u8))
}
