//! TIME: MariaDB's signed duration, -838:59:59.999999 to 838:59:59.999999 (the engine's
//! `Time`, microseconds in an `i64`). How values become TIMEs, as MariaDB reads them
//! (`str_to_time`, `number_to_time`), how a TIME prints, and the functions that make or
//! take one: TIME(), TIMEDIFF, TIME_TO_SEC, SEC_TO_TIME, ADDTIME/SUBTIME, MAKETIME,
//! TIME_FORMAT, CURTIME, TIMESTAMP(d, t), and TIME values in DATE_ADD.
//!
//! Reading a value as a TIME finds a value and a [`Status`]; what the status costs depends
//! on where the value goes:
//!
//! | status | in an expression (CAST, TIME(), …) | stored into a TIME column |
//! |---|---|---|
//! | clean | — | — |
//! | from a date or datetime ('2024-01-02 10:11:12') | — | Note 1265 |
//! | more than 6 fractional digits (cut) | Note 1292 "Truncated incorrect time value" | Note 1265 |
//! | garbage after the time ('12:00:00 x') | Warning 1292 "Truncated incorrect time value" | Warning 1265 (strict: 1292) |
//! | past 838:59:59 (clipped) | Warning 1292 "Truncated incorrect time value" | Warning 1264 (strict: 1292) |
//! | no time ('abc', '10:61:00', 160) | NULL, Warning 1292 "Incorrect time value" | 00:00:00, Warning 1265 (strict: 1292) |
//!
//! A TIME read where a DATETIME is needed (a comparison with one, CAST AS DATETIME,
//! TIMESTAMPDIFF) is that duration from today's midnight, as in MariaDB.

use quire_engine::row::{Date, DateTime, Decimal, Time, Value};

use super::datetime::{self, Zeros};
use super::{any_null, cast, TimeFn};
use crate::error::Result;
use crate::expr::Env;
use crate::types::display;

/// MariaDB's TIME_MAX_HOUR.
pub const MAX_HOURS: i64 = 838;

/// What reading a value as a TIME found besides the value (the module's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Clean,
    /// The time of day of a date or datetime.
    FromDate,
    /// Fractional digits past six, cut.
    Fraction,
    /// Something after the time, ignored.
    Garbage,
    /// Past 838:59:59.999999: clipped to it.
    Clipped,
}

/// A value read as MariaDB's `get_time` reads it: a duration, or (from a string with a date
/// and a time, or a DATETIME) a datetime, which TIMEDIFF and ADDTIME keep apart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Read {
    Time(Time, Status),
    DateTime(DateTime, Status),
    /// No time: NULL in an expression.
    Invalid,
}

/// ±838:59:59.999999, and whether `micros` had to be clipped to it.
pub fn clip(micros: i128) -> (Time, bool) {
    let max = i128::from(Time::MAX_MICROS);
    if micros.abs() > max {
        (Time::from_micros(micros.clamp(-max, max) as i64), true)
    } else {
        (Time::from_micros(micros as i64), false)
    }
}

/// `t` with its fraction cut to `fsp` digits (toward zero, as MariaDB truncates).
pub fn truncate(t: Time, fsp: u8) -> Time {
    let unit = 10i64.pow(6 - u32::from(fsp.min(6)));
    Time::from_micros(t.micros / unit * unit)
}

/// The time of day of `dt`, as a TIME.
pub fn of_datetime(dt: &DateTime) -> Time {
    Time::from_parts(
        false,
        i64::from(dt.hour),
        i64::from(dt.minute),
        i64::from(dt.second),
        i64::from(dt.micros),
    )
}

/// A TIME as text: `[-]HH:MM:SS` (hours at least two digits) and `fsp` fractional digits.
pub fn text(t: Time, fsp: u8) -> String {
    let mut s = format!(
        "{}{:02}:{:02}:{:02}",
        if t.is_negative() { "-" } else { "" },
        t.hours(),
        t.minute(),
        t.second()
    );
    if fsp > 0 {
        let f = format!("{:06}", t.fraction());
        s.push('.');
        s.push_str(&f[..usize::from(fsp.min(6))]);
    }
    s
}

/// The fractional digits a TIME value shows when nothing fixes them: six if it has a
/// fraction, else none (as `display` prints a DATETIME).
pub fn natural_fsp(t: Time) -> u8 {
    if t.fraction() == 0 {
        0
    } else {
        6
    }
}

/// The fractional digits of a TIME written as a literal string ('10:00:00.5' → 1).
pub fn literal_fsp(s: &str) -> u8 {
    match parse_str(s) {
        Read::Time(..) | Read::DateTime(..) => s.trim().rsplit_once('.').map_or(0, |(_, f)| {
            f.bytes().take_while(u8::is_ascii_digit).count().min(6) as u8
        }),
        Read::Invalid => 6,
    }
}

/// Reads the digits at `b[*i..]` as a number (saturating), `None` if there are none.
fn digits(b: &[u8], i: &mut usize) -> Option<i64> {
    let start = *i;
    let mut n: i64 = 0;
    while *i < b.len() && b[*i].is_ascii_digit() {
        n = n.saturating_mul(10).saturating_add(i64::from(b[*i] - b'0'));
        *i += 1;
    }
    (*i > start).then_some(n)
}

/// MariaDB's `str_to_time`: `[-][D ]H:M[:S[.f]]`, `[-]HHMMSS[.f]` (also `MMSS`, `SS`), or,
/// for strings of twelve characters or more, a date with a time
/// ('2024-01-02 10:11:12', '20240102101112').
pub fn parse_str(s: &str) -> Read {
    let t = s.trim_start_matches(|c: char| c.is_ascii_whitespace());
    if t.len() >= 12 {
        if let Some((tm, tail)) = datetime::parse_full(t) {
            if tm.has_time {
                let status = match tail {
                    datetime::Tail::Clean => Status::Clean,
                    datetime::Tail::Fraction => Status::Fraction,
                    datetime::Tail::Garbage => Status::Garbage,
                };
                return Read::DateTime(tm.dt, status);
            }
        }
    }
    let (neg, body) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let b = body.as_bytes();
    let mut i = 0;
    let Some(first) = digits(b, &mut i) else {
        return Read::Invalid;
    };
    // `D H:…`: days, then hours, only when a colon follows the hours ('1 2' is one second
    // and garbage, as in MariaDB).
    let mut days = 0;
    let mut hours_form = i < b.len() && b[i] == b':';
    let mut hour = first;
    if i < b.len() && b[i] == b' ' {
        let mut j = i;
        while j < b.len() && b[j] == b' ' {
            j += 1;
        }
        let mut k = j;
        if let Some(h) = digits(b, &mut k) {
            if k < b.len() && b[k] == b':' {
                days = first;
                hour = h;
                hours_form = true;
                i = k;
            }
        }
    }
    let (mut minute, mut second) = (0, 0);
    if hours_form {
        if i < b.len() && b[i] == b':' {
            let mut k = i + 1;
            if let Some(m) = digits(b, &mut k) {
                minute = m;
                i = k;
                if i < b.len() && b[i] == b':' {
                    let mut k = i + 1;
                    if let Some(sec) = digits(b, &mut k) {
                        second = sec;
                        i = k;
                    }
                }
            }
        }
    } else {
        // HHMMSS, MMSS or SS.
        hour = first / 10_000;
        minute = first / 100 % 100;
        second = first % 100;
    }
    let mut status = Status::Clean;
    let mut frac = 0;
    if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
        let mut k = i + 1;
        let start = k;
        while k < b.len() && b[k].is_ascii_digit() {
            k += 1;
        }
        let ds = &b[start..k];
        for (n, d) in ds.iter().take(6).enumerate() {
            frac += i64::from(d - b'0') * 10i64.pow(5 - n as u32);
        }
        if ds.len() > 6 {
            status = Status::Fraction;
        }
        i = k;
    }
    if b[i..].iter().any(|c| !c.is_ascii_whitespace()) {
        status = Status::Garbage;
    }
    if minute > 59 || second > 59 {
        return Read::Invalid;
    }
    let hours = days.saturating_mul(24).saturating_add(hour);
    let micros = ((i128::from(hours) * 60 + i128::from(minute)) * 60 + i128::from(second))
        * 1_000_000
        + i128::from(frac);
    let (time, clipped) = clip(if neg { -micros } else { micros });
    if clipped {
        status = Status::Clipped;
    }
    Read::Time(time, status)
}

/// MariaDB's `number_to_time`: `[-]HHMMSS[.ffffff]`; a number of ten digits or more is a
/// date and time (YYYYMMDDHHMMSS) whose time of day is taken.
pub fn parse_number(v: &Value) -> Read {
    let (neg, int, frac_us, more_digits): (bool, u128, i64, bool) = match v {
        Value::Int(i) => (*i < 0, u128::from(i.unsigned_abs()), 0, false),
        Value::UInt(u) => (false, u128::from(*u), 0, false),
        Value::Decimal(d) => {
            let unit = 10i128.pow(u32::from(d.scale));
            let a = d.unscaled.unsigned_abs();
            let frac = (a % unit.unsigned_abs()) as i128;
            let us = if d.scale >= 6 {
                frac / 10i128.pow(u32::from(d.scale) - 6)
            } else {
                frac * 10i128.pow(6 - u32::from(d.scale))
            };
            let more = d.scale > 6 && frac % 10i128.pow(u32::from(d.scale) - 6) != 0;
            (d.unscaled < 0, a / unit.unsigned_abs(), us as i64, more)
        }
        Value::Double(f) => {
            if !f.is_finite() {
                return Read::Invalid;
            }
            let a = f.abs();
            let us = ((a.fract() * 1e6) + 1e-7).floor() as i64;
            (
                *f < 0.0,
                a.trunc().min(1e30) as u128,
                us.min(999_999),
                false,
            )
        }
        _ => return Read::Invalid,
    };
    let status = if more_digits {
        Status::Fraction
    } else {
        Status::Clean
    };
    if int > 8_385_959 {
        if int >= 10_000_000_000 {
            return match datetime::parse_digits(int as i128, frac_us) {
                Some(dt) if !neg => Read::DateTime(dt, status),
                _ => Read::Invalid,
            };
        }
        let (t, _) = clip(if neg {
            -i128::from(Time::MAX_MICROS)
        } else {
            i128::from(Time::MAX_MICROS)
        });
        return Read::Time(t, Status::Clipped);
    }
    let n = int as i64;
    let (h, m, s) = (n / 10_000, n / 100 % 100, n % 100);
    if m > 59 || s > 59 {
        return Read::Invalid;
    }
    Read::Time(Time::from_parts(neg, h, m, s, frac_us), status)
}

/// Any value read as MariaDB's `get_time` reads it (no warning raised).
pub fn read(v: &Value) -> Read {
    match v {
        Value::Null => Read::Invalid,
        Value::Time(t) => Read::Time(*t, Status::Clean),
        Value::DateTime(dt) => Read::DateTime(*dt, Status::Clean),
        Value::Date(d) => Read::DateTime(DateTime::new(*d, 0, 0, 0, 0), Status::Clean),
        Value::Str(_) | Value::Bytes(_) => parse_str(&crate::types::to_text(v.clone())),
        other => parse_number(other),
    }
}

/// Raises the expression warnings of reading `v` (the module's table, middle column);
/// `false` for no time (the result is NULL).
fn warn_read(env: &dyn Env, v: &Value, status: Option<Status>) -> bool {
    let text = || crate::types::to_text(v.clone());
    match status {
        None => {
            super::warn(
                env,
                "Warning",
                1292,
                format!("Incorrect time value: '{}'", text()),
            );
            false
        }
        Some(Status::Clean | Status::FromDate) => true,
        Some(Status::Fraction) => {
            super::truncated(env, "Note", "time", &text());
            true
        }
        Some(Status::Garbage | Status::Clipped) => {
            super::truncated(env, "Warning", "time", &text());
            true
        }
    }
}

/// A value as a TIME in an expression (CAST, TIME(), HOUR(), …): a datetime's time of day,
/// `None` (NULL) with 1292 for no time.
pub fn to_time(v: &Value, env: &dyn Env) -> Option<Time> {
    match read(v) {
        Read::Invalid => {
            if !matches!(v, Value::Null) {
                warn_read(env, v, None);
            }
            None
        }
        Read::Time(t, s) => warn_read(env, v, Some(s)).then_some(t),
        Read::DateTime(dt, s) => warn_read(env, v, Some(s)).then_some(of_datetime(&dt)),
    }
}

/// [`read`] with its warnings: a duration or a datetime (TIMEDIFF, ADDTIME keep them apart).
fn to_time_or_datetime(v: &Value, env: &dyn Env) -> Read {
    let r = read(v);
    let ok = match r {
        Read::Invalid if matches!(v, Value::Null) => false,
        Read::Invalid => warn_read(env, v, None),
        Read::Time(_, s) | Read::DateTime(_, s) => warn_read(env, v, Some(s)),
    };
    if ok {
        r
    } else {
        Read::Invalid
    }
}

/// The current date (the statement's, from `@@timestamp`): what a TIME is counted from
/// when it is read as a DATETIME.
pub fn today(env: &dyn Env) -> Date {
    datetime::statement_now(env)
        .map(|dt| dt.date)
        .unwrap_or_else(|_| wall_today())
}

/// Today from the wall clock (UTC), where no statement is at hand (comparisons).
pub fn wall_today() -> Date {
    let us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64);
    datetime::from_unix_us(us).date
}

/// A TIME as a DATETIME: `t` from midnight of `day` (a negative one goes back days, one
/// past 24 hours forward); `None` outside the calendar.
pub fn on_day(t: Time, day: Date) -> Option<DateTime> {
    let iv = datetime::Interval {
        neg: t.is_negative(),
        hour: t.hours(),
        minute: t.minute(),
        second: t.second(),
        micros: t.fraction(),
        ..datetime::Interval::default()
    };
    datetime::add_interval(DateTime::new(day, 0, 0, 0, 0), &iv, false)
}

/// A TIME as the number MariaDB makes of it: `[-]HHMMSS`, an integer without a fraction,
/// else a DECIMAL.
pub fn number(t: Time) -> Value {
    let hhmmss = t.hours() * 10_000 + t.minute() * 100 + t.second();
    let sign = if t.is_negative() { -1 } else { 1 };
    if t.fraction() == 0 {
        return Value::Int(sign * hhmmss);
    }
    // The fraction's own digits (01:02:03.456 is 10203.456): the value has no column's
    // precision to pad to.
    let mut us = i128::from(t.fraction());
    let mut scale = 6u8;
    while us % 10 == 0 {
        us /= 10;
        scale -= 1;
    }
    Value::Decimal(Decimal::new(
        i128::from(sign) * (i128::from(hhmmss) * 10i128.pow(u32::from(scale)) + us),
        scale,
    ))
}

/// `HHMMSS.ffffff` as a double (comparisons with numbers, SUM).
pub fn as_f64(t: Time) -> f64 {
    let hhmmss =
        (t.hours() * 10_000 + t.minute() * 100 + t.second()) as f64 + t.fraction() as f64 / 1e6;
    if t.is_negative() {
        -hhmmss
    } else {
        hhmmss
    }
}

fn overflow(env: &dyn Env) {
    super::warn(
        env,
        "Warning",
        1441,
        "Datetime function: time field overflow".into(),
    );
}

/// A duration that may leave the TIME range, clipped with "Truncated incorrect time value"
/// naming it as MariaDB prints the unclipped value.
fn clip_warn(micros: i128, env: &dyn Env) -> Time {
    let (t, clipped) = clip(micros);
    if clipped {
        let a = micros.unsigned_abs();
        let secs = a / 1_000_000;
        let mut s = format!(
            "{}{:02}:{:02}:{:02}",
            if micros < 0 { "-" } else { "" },
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        );
        if !a.is_multiple_of(1_000_000) {
            s.push_str(&format!(".{:06}", a % 1_000_000));
        }
        super::truncated(env, "Warning", "time", &s);
    }
    t
}

fn micros_of(dt: &DateTime) -> i128 {
    let days = i128::from(datetime::daynr(
        i64::from(dt.date.year),
        i64::from(dt.date.month),
        i64::from(dt.date.day),
    ));
    ((days * 24 + i128::from(dt.hour)) * 60 + i128::from(dt.minute)) * 60_000_000
        + i128::from(dt.second) * 1_000_000
        + i128::from(dt.micros)
}

/// DATE_ADD / DATE_SUB on a TIME: the interval's days and smaller parts move it (a day is
/// 24 hours); a month or year interval, or a result past 838 hours, is NULL with 1441.
pub fn add_interval(t: Time, iv: &datetime::Interval, sub: bool, env: &dyn Env) -> Value {
    if iv.year != 0 || iv.month != 0 {
        overflow(env);
        return Value::Null;
    }
    let d = ((((i128::from(iv.day) * 24 + i128::from(iv.hour)) * 60 + i128::from(iv.minute)) * 60
        + i128::from(iv.second))
        * 1_000_000)
        + i128::from(iv.micros);
    let d = if iv.neg != sub { -d } else { d };
    let r = i128::from(t.micros) + d;
    if r.abs() > i128::from(Time::MAX_MICROS) {
        overflow(env);
        return Value::Null;
    }
    Value::Time(Time::from_micros(r as i64))
}

/// TIME_FORMAT: DATE_FORMAT's hour, minute, second and fraction specifiers on a duration
/// (hours past 23 print whole: `%H` of 100:00:00 is 100); a date specifier makes it NULL.
/// A negative TIME starts with '-'. With `zero_date` (DATE_FORMAT of a TIME) the date
/// specifiers of numbers print the zero date's (`%Y` is 0000), the names are NULL.
pub fn time_format(t: Time, fmt: &str, zero_date: bool) -> Option<String> {
    let mut out = String::new();
    if t.is_negative() {
        out.push('-');
    }
    let (h, m, s, us) = (t.hours(), t.minute(), t.second(), t.fraction());
    let h12 = if h % 12 == 0 { 12 } else { h % 12 };
    let ampm = if h % 24 < 12 { "AM" } else { "PM" };
    let mut it = fmt.chars();
    while let Some(c) = it.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(f) = it.next() else {
            break;
        };
        match f {
            'H' => out.push_str(&format!("{h:02}")),
            'k' => out.push_str(&h.to_string()),
            'h' | 'I' => out.push_str(&format!("{h12:02}")),
            'l' => out.push_str(&h12.to_string()),
            'i' => out.push_str(&format!("{m:02}")),
            'S' | 's' => out.push_str(&format!("{s:02}")),
            'f' => out.push_str(&format!("{us:06}")),
            'p' => out.push_str(ampm),
            'r' => out.push_str(&format!("{h12:02}:{m:02}:{s:02} {ampm}")),
            'T' => out.push_str(&format!("{h:02}:{m:02}:{s:02}")),
            'Y' if zero_date => out.push_str("0000"),
            'y' | 'm' | 'd' if zero_date => out.push_str("00"),
            'c' | 'e' if zero_date => out.push('0'),
            'a' | 'b' | 'c' | 'D' | 'd' | 'e' | 'j' | 'M' | 'm' | 'U' | 'u' | 'V' | 'v' | 'W'
            | 'w' | 'X' | 'x' | 'Y' | 'y' => return None,
            other => out.push(other),
        }
    }
    Some(out)
}

/// The time functions' results (`func/types.rs` types them).
pub fn eval(f: TimeFn, args: Vec<Value>, env: &dyn Env) -> Result<Value> {
    let a = |i: usize| args.get(i).cloned().unwrap_or(Value::Null);
    Ok(match f {
        TimeFn::CurTime(fsp) => {
            let now = datetime::statement_now(env)?;
            Value::Time(truncate(of_datetime(&now), fsp))
        }
        TimeFn::UtcTime(fsp) => {
            let now = datetime::statement_utc(env)?;
            Value::Time(truncate(of_datetime(&now), fsp))
        }
        TimeFn::TimePart => to_time(&a(0), env).map_or(Value::Null, Value::Time),
        TimeFn::TimeDiff(fsp) => {
            if any_null(&args) {
                return Ok(Value::Null);
            }
            match (
                to_time_or_datetime(&a(0), env),
                to_time_or_datetime(&a(1), env),
            ) {
                (Read::Time(x, _), Read::Time(y, _)) => Value::Time(truncate(
                    clip_warn(i128::from(x.micros) - i128::from(y.micros), env),
                    fsp,
                )),
                (Read::DateTime(x, _), Read::DateTime(y, _)) => {
                    Value::Time(truncate(clip_warn(micros_of(&x) - micros_of(&y), env), fsp))
                }
                _ => Value::Null,
            }
        }
        TimeFn::AddTime { sub, fsp } => {
            if any_null(&args) {
                return Ok(Value::Null);
            }
            let first = to_time_or_datetime(&a(0), env);
            let Some(d) = (match to_time_or_datetime(&a(1), env) {
                Read::Time(t, _) => Some(t),
                _ => None,
            }) else {
                return Ok(Value::Null);
            };
            let d = if sub {
                -i128::from(d.micros)
            } else {
                i128::from(d.micros)
            };
            match first {
                Read::Time(t, _) => {
                    Value::Time(truncate(clip_warn(i128::from(t.micros) + d, env), fsp))
                }
                Read::DateTime(dt, _) => {
                    let iv = datetime::Interval {
                        neg: d < 0,
                        micros: (d.unsigned_abs() % 1_000_000) as i64,
                        second: (d.unsigned_abs() / 1_000_000) as i64,
                        ..datetime::Interval::default()
                    };
                    match datetime::add_interval(dt, &iv, false) {
                        Some(r) => Value::DateTime(r),
                        None => Value::Null,
                    }
                }
                Read::Invalid => Value::Null,
            }
        }
        TimeFn::TimeToSec(dec) => match to_time(&a(0), env) {
            None => Value::Null,
            // Seconds with the argument's fractional digits: a DECIMAL, or a BIGINT without.
            Some(t) if dec == 0 => Value::Int(t.micros / 1_000_000),
            Some(t) => {
                let d = Decimal::new(i128::from(t.micros), 6);
                Value::Decimal(crate::types::round_to_scale(d, dec.min(6)).unwrap_or(d))
            }
        },
        TimeFn::SecToTime(fsp) => {
            let v = a(0);
            if matches!(v, Value::Null) {
                return Ok(Value::Null);
            }
            let Some(d) = cast::to_decimal(&v, env) else {
                return Ok(Value::Null);
            };
            let us = match crate::types::round_to_scale(d, 6).and_then(|d| d.rescale(6)) {
                Some(d) => d.unscaled,
                None => i128::MAX / 2 * d.unscaled.signum(),
            };
            let (t, clipped) = clip(us);
            if clipped {
                super::truncated(env, "Warning", "seconds", &display(&v));
            }
            Value::Time(truncate(t, fsp))
        }
        TimeFn::MakeTime(fsp) => {
            if any_null(&args) {
                return Ok(Value::Null);
            }
            let (Some(h), Some(m)) = (cast::to_i64(&a(0), env), cast::to_i64(&a(1), env)) else {
                return Ok(Value::Null);
            };
            let Some(s) = cast::to_decimal(&a(2), env) else {
                return Ok(Value::Null);
            };
            let s_us = crate::types::round_to_scale(s, 6)
                .and_then(|d| d.rescale(6))
                .map_or(i128::MAX, |d| d.unscaled);
            if !(0..=59).contains(&m) || !(0..60_000_000).contains(&s_us) {
                return Ok(Value::Null);
            }
            let micros = (i128::from(h.unsigned_abs()) * 3600 + i128::from(m) * 60)
                .saturating_mul(1_000_000)
                .saturating_add(s_us);
            let micros = if h < 0 { -micros } else { micros };
            let (t, clipped) = clip(micros);
            if clipped {
                let text = format!(
                    "{}{}:{:02}:{:02}",
                    if h < 0 { "-" } else { "" },
                    h.unsigned_abs(),
                    m,
                    s_us / 1_000_000
                );
                super::truncated(env, "Warning", "time", &text);
            }
            Value::Time(truncate(t, fsp))
        }
        TimeFn::TimeFormat => {
            if any_null(&args) {
                return Ok(Value::Null);
            }
            let Some(t) = to_time(&a(0), env) else {
                return Ok(Value::Null);
            };
            time_format(t, &crate::types::to_text(a(1)), false).map_or(Value::Null, Value::Str)
        }
        TimeFn::Timestamp => {
            if any_null(&args) {
                return Ok(Value::Null);
            }
            let Some(base) = datetime::to_datetime(&a(0), env, Zeros::Allowed) else {
                return Ok(Value::Null);
            };
            if args.len() < 2 {
                return Ok(Value::DateTime(base.dt));
            }
            let Some(t) = to_time(&a(1), env) else {
                return Ok(Value::Null);
            };
            let iv = datetime::Interval {
                neg: t.is_negative(),
                hour: t.hours(),
                minute: t.minute(),
                second: t.second(),
                micros: t.fraction(),
                ..datetime::Interval::default()
            };
            datetime::add_interval(base.dt, &iv, false).map_or(Value::Null, Value::DateTime)
        }
        _ => Value::Null,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> (String, Status) {
        match parse_str(s) {
            Read::Time(t, st) => (text(t, natural_fsp(t)), st),
            Read::DateTime(dt, st) => (text(of_datetime(&dt), 0), st),
            Read::Invalid => ("invalid".into(), Status::Clean),
        }
    }

    #[test]
    fn strings_read_as_mariadb_str_to_time() {
        assert_eq!(t("12:34:56"), ("12:34:56".into(), Status::Clean));
        assert_eq!(t("1 02:03:04"), ("26:03:04".into(), Status::Clean));
        assert_eq!(t("-838:59:59"), ("-838:59:59".into(), Status::Clean));
        assert_eq!(t("  10:11"), ("10:11:00".into(), Status::Clean));
        assert_eq!(t("1 2"), ("00:00:01".into(), Status::Garbage));
        assert_eq!(t("1234"), ("00:12:34".into(), Status::Clean));
        assert_eq!(t("123456.789"), ("12:34:56.789000".into(), Status::Clean));
        assert_eq!(t("839:00:00"), ("838:59:59.999999".into(), Status::Clipped));
        assert_eq!(t("35 00:00:00").1, Status::Clipped);
        assert_eq!(t("1:2:3:4"), ("01:02:03".into(), Status::Garbage));
        assert_eq!(t("2024-01-02 10:11:12"), ("10:11:12".into(), Status::Clean));
        assert_eq!(t("2024-01-01"), ("00:20:24".into(), Status::Garbage));
        assert_eq!(t("10:61:00").0, "invalid");
        assert_eq!(t("").0, "invalid");
        assert_eq!(t("-").0, "invalid");
        assert_eq!(t("00:00:00.1234567").1, Status::Fraction);
    }

    #[test]
    fn numbers_read_as_mariadb_number_to_time() {
        let n = |v: Value| match parse_number(&v) {
            Read::Time(t, st) => (text(t, natural_fsp(t)), st),
            Read::DateTime(dt, st) => (text(of_datetime(&dt), 0), st),
            Read::Invalid => ("invalid".into(), Status::Clean),
        };
        assert_eq!(n(Value::Int(123456)).0, "12:34:56");
        assert_eq!(n(Value::Int(-1)).0, "-00:00:01");
        assert_eq!(n(Value::Int(160)).0, "invalid");
        assert_eq!(n(Value::Int(8_390_000)).1, Status::Clipped);
        assert_eq!(n(Value::Int(20_240_101_101_112)).0, "10:11:12");
        assert_eq!(
            n(Value::Decimal(Decimal::new(-1_234_565, 1))).0,
            "-12:34:56.500000"
        );
        assert_eq!(n(Value::Double(1e3)).0, "00:10:00");
    }

    #[test]
    fn times_print_with_their_sign_and_fraction() {
        assert_eq!(
            text(Time::from_parts(true, 838, 59, 59, 0), 0),
            "-838:59:59"
        );
        assert_eq!(
            text(Time::from_parts(false, 1, 2, 3, 456_000), 3),
            "01:02:03.456"
        );
        assert_eq!(
            time_format(Time::from_parts(true, 100, 0, 0, 0), "%H %k %h", false).as_deref(),
            Some("-100 100 04")
        );
        assert_eq!(time_format(Time::from_micros(0), "%Y", false), None);
        assert_eq!(
            time_format(Time::from_parts(true, 2, 0, 0, 0), "%Y %H", true).as_deref(),
            Some("-0000 02")
        );
    }
}
