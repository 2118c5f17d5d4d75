//! Date and time functions, on the engine's `Date` and `DateTime` (TIME's own functions
//! and conversions are in `func/time.rs`).
//!
//! The calendar is MySQL's (`sql-common/my_time.c`): day numbers count from year 0
//! (`TO_DAYS('0000-01-01')` is 1), weeks follow `calc_week` with its mode bits, INTERVAL
//! arithmetic follows `date_add_interval` (month arithmetic clamps the day to the month's
//! last; a result past 9999-12-31 or before 0001-01-01 is NULL with warning 1441).
//!
//! Strings and numbers become dates as `str_to_datetime` / `number_to_datetime` read them:
//! any punctuation between fields, two-digit years (70–99 → 19xx, 00–69 → 20xx), digits only
//! as YYYYMMDD[HHMMSS] or YYMMDD[HHMMSS]. A value that is no date is NULL with 1292
//! "Incorrect datetime value"; trailing garbage keeps the date with a 1292 "Truncated
//! incorrect … value" warning. Zero dates and zero parts ('0000-00-00', '2024-02-00') are
//! values, as in MariaDB's default sql_mode; the functions that need a real day (DAYNAME,
//! TO_DAYS, DATE_ADD, …) answer NULL with 1292 for them.
//!
//! NOW(), CURDATE(), CURTIME(), SYSDATE(), UNIX_TIMESTAMP(expr) and FROM_UNIXTIME read and
//! give local times of the session's zone (`tz.rs`, `Env::time_zone`); UTC_TIMESTAMP(),
//! UTC_DATE() and UTC_TIME() do not. UNIX_TIMESTAMP counts from 1970-01-01 00:00:00 UTC.

use quire_engine::row::{Date, DateTime, Decimal, Value};

use super::cast::{self, to_i64};
use super::{any_null, TimeFn, Unit};
use crate::error::Result;
use crate::expr::{Env, SessionFn};
use crate::types::display;

/// The largest day number (9999-12-31).
pub const MAX_DAY_NUMBER: i64 = 3_652_424;

const MONTH_NAMES: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAY_NAMES: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

// ---------------------------------------------------------------------------------------
// The calendar

pub fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

pub fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 31,
    }
}

fn days_in_year(year: i64) -> i64 {
    if is_leap(year) {
        366
    } else {
        365
    }
}

/// MySQL's `calc_daynr`: days since year 0 (0000-01-01 is day 1).
pub fn daynr(year: i64, month: i64, day: i64) -> i64 {
    if year == 0 && month == 0 {
        return 0;
    }
    let mut delsum = 365 * year + 31 * (month - 1) + day;
    let mut y = year;
    if month <= 2 {
        y -= 1;
    } else {
        delsum -= (month * 4 + 23) / 10;
    }
    // C's truncating division, as MySQL computes it (year -1 stays -1 / 4 == 0).
    let temp = ((y / 100 + 1) * 3) / 4;
    delsum + y / 4 - temp
}

/// MySQL's `get_date_from_daynr`: the date of a day number, 0000-00-00 outside
/// 366..=MAX_DAY_NUMBER.
pub fn from_daynr(n: i64) -> Date {
    if !(366..=MAX_DAY_NUMBER).contains(&n) {
        return Date::new(0, 0, 0);
    }
    let mut year = n * 100 / 36525;
    let temp = (((year - 1) / 100 + 1) * 3) / 4;
    let mut day_of_year = n - year * 365 - (year - 1) / 4 + temp;
    let mut diy = days_in_year(year);
    while day_of_year > diy {
        day_of_year -= diy;
        year += 1;
        diy = days_in_year(year);
    }
    let mut leap_day = 0;
    if diy == 366 && day_of_year > 31 + 28 {
        day_of_year -= 1;
        if day_of_year == 31 + 28 {
            leap_day = 1;
        }
    }
    let mut month = 1;
    loop {
        let dim = if month == 2 {
            28
        } else {
            days_in_month(2001, month)
        };
        if day_of_year <= dim {
            break;
        }
        day_of_year -= dim;
        month += 1;
    }
    Date::new(year as u16, month as u8, (day_of_year + leap_day) as u8)
}

fn date_daynr(d: &Date) -> i64 {
    daynr(i64::from(d.year), i64::from(d.month), i64::from(d.day))
}

/// MySQL's `calc_weekday`: 0 = Monday (or Sunday with `sunday_first`).
fn weekday(n: i64, sunday_first: bool) -> i64 {
    (n + 5 + i64::from(sunday_first)).rem_euclid(7)
}

const WEEK_MONDAY_FIRST: u32 = 1;
const WEEK_YEAR: u32 = 2;
const WEEK_FIRST_WEEKDAY: u32 = 4;

/// MySQL's `calc_week`: the week number of `d` and the year it belongs to.
fn calc_week(d: &Date, behaviour: u32) -> (i64, i64) {
    let n = date_daynr(d);
    let mut first = daynr(i64::from(d.year), 1, 1);
    let monday_first = behaviour & WEEK_MONDAY_FIRST != 0;
    let mut week_year = behaviour & WEEK_YEAR != 0;
    let first_weekday = behaviour & WEEK_FIRST_WEEKDAY != 0;
    let mut wd = weekday(first, !monday_first);
    let mut year = i64::from(d.year);
    if d.month == 1 && i64::from(d.day) <= 7 - wd {
        if !week_year && ((first_weekday && wd != 0) || (!first_weekday && wd >= 4)) {
            return (0, year);
        }
        week_year = true;
        year -= 1;
        let days = days_in_year(year);
        first -= days;
        wd = (wd + 53 * 7 - days) % 7;
    }
    let days = if (first_weekday && wd != 0) || (!first_weekday && wd >= 4) {
        n - (first + (7 - wd))
    } else {
        n - (first - wd)
    };
    if week_year && days >= 52 * 7 {
        wd = (wd + days_in_year(year)) % 7;
        if (!first_weekday && wd < 4) || (first_weekday && wd == 0) {
            return (1, year + 1);
        }
    }
    (days / 7 + 1, year)
}

/// MySQL's `week_mode`: the mode argument of WEEK() as `calc_week` bits.
fn week_mode(mode: i64) -> u32 {
    let mut f = (mode & 7) as u32;
    if f & WEEK_MONDAY_FIRST == 0 {
        f ^= WEEK_FIRST_WEEKDAY;
    }
    f
}

// ---------------------------------------------------------------------------------------
// Reading values as dates

/// A value read as a date and time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Temporal {
    pub dt: DateTime,
    /// It had a time of day (a DATETIME, or a string or number with one).
    pub has_time: bool,
}

/// Whether zero dates and zero parts are accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zeros {
    Allowed,
    /// NULL with 1292, as for functions that need a real day.
    Rejected,
}

fn zero_dt() -> DateTime {
    DateTime::new(Date::new(0, 0, 0), 0, 0, 0, 0)
}

/// What parsing left of a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tail {
    Clean,
    /// Garbage after the date: kept, with a "Truncated incorrect" warning.
    Garbage,
    /// More than 6 fractional digits: truncated, with a note.
    Fraction,
}

fn two_digit_year(y: i64, digits: usize) -> i64 {
    if digits <= 2 {
        if y < 70 {
            y + 2000
        } else {
            y + 1900
        }
    } else {
        y
    }
}

fn valid_parts(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64) -> bool {
    (0..=9999).contains(&y)
        && (0..=12).contains(&mo)
        && (0..=31).contains(&d)
        && (mo == 0 || d == 0 || d <= days_in_month(y, mo))
        && (0..=23).contains(&h)
        && (0..=59).contains(&mi)
        && (0..=59).contains(&s)
}

fn make_dt(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64, us: i64) -> DateTime {
    DateTime::new(
        Date::new(y as u16, mo as u8, d as u8),
        h as u8,
        mi as u8,
        s as u8,
        us as u32,
    )
}

/// Reads the fraction digits at the start of `b` as microseconds (truncating past six).
fn fraction(b: &[u8]) -> (i64, usize, bool) {
    let n = b.iter().take_while(|c| c.is_ascii_digit()).count();
    let mut us = 0i64;
    for (i, c) in b[..n].iter().enumerate().take(6) {
        us += i64::from(c - b'0') * 10i64.pow(5 - i as u32);
    }
    (us, n, n > 6)
}

/// A string as MySQL reads a date or datetime (lenient: '2024-2-9', '24/02/29 1:2:3'),
/// trailing garbage ignored; `None` if it is none.
pub fn parse_lenient(s: &str) -> Option<DateTime> {
    parse_str(s).map(|(t, _)| t.dt)
}

/// A number as MySQL reads a date (20240229, 240229, 20240229131415).
pub fn number_as_datetime(v: &Value) -> Option<DateTime> {
    let (n, frac) = match v {
        Value::Int(i) => (i128::from(*i), 0),
        Value::UInt(u) => (i128::from(*u), 0),
        Value::Decimal(d) => {
            let unit = 10i128.pow(u32::from(d.scale));
            (d.unscaled / unit, 0)
        }
        Value::Double(f) => (f.trunc() as i128, 0),
        _ => return None,
    };
    if n < 0 {
        return None;
    }
    parse_number(n, frac).map(|(t, _)| t.dt)
}

/// [`parse_str`] for the TIME reader (`func/time.rs`), which takes a date's time of day.
pub(crate) fn parse_full(s: &str) -> Option<(Temporal, Tail)> {
    parse_str(s)
}

/// A number of ten digits or more as a date and time (YYYYMMDDHHMMSS), for the TIME reader.
pub(crate) fn parse_digits(n: i128, frac_us: i64) -> Option<DateTime> {
    parse_number(n, frac_us).map(|(t, _)| t.dt)
}

/// MySQL's `str_to_datetime`, for the forms applications write.
fn parse_str(s: &str) -> Option<(Temporal, Tail)> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r']);
    let b = t.as_bytes();
    let lead = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if lead == 0 {
        return None;
    }
    // Digits only (with an optional fraction): YYYYMMDD[HHMMSS] or YYMMDD[HHMMSS].
    let after = &b[lead..];
    let digits_only = after.is_empty()
        || after[0] == b'.' && after[1..].iter().all(|c| c.is_ascii_digit())
        || after.iter().all(|c| *c == b' ');
    if digits_only && lead >= 5 {
        let ds = &t[..lead];
        let year_len = if lead == 8 || lead >= 14 { 4 } else { 2 };
        let mut parts = Vec::new();
        let mut i = year_len;
        parts.push(ds[..year_len].parse::<i64>().ok()?);
        while i < lead {
            let end = (i + 2).min(lead);
            parts.push(ds[i..end].parse::<i64>().ok()?);
            i = end;
        }
        if parts.len() > 6 {
            return None;
        }
        parts.resize(6, 0);
        let y = two_digit_year(parts[0], year_len);
        let has_time = lead > 8;
        let (us, frac_over) = match after.first() {
            Some(b'.') if has_time => {
                let (us, _, over) = fraction(&after[1..]);
                (us, over)
            }
            _ => (0, false),
        };
        if !valid_parts(y, parts[1], parts[2], parts[3], parts[4], parts[5]) {
            return None;
        }
        let tail = if frac_over {
            Tail::Fraction
        } else if !has_time && after.first() == Some(&b'.') {
            Tail::Garbage
        } else {
            Tail::Clean
        };
        return Some((
            Temporal {
                dt: make_dt(y, parts[1], parts[2], parts[3], parts[4], parts[5], us),
                has_time,
            },
            tail,
        ));
    }
    // Delimited: Y-M-D[( |T)h:m[:s[.f]]], any punctuation between fields.
    let mut i = 0;
    let num = |i: &mut usize, max: usize| -> Option<(i64, usize)> {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() && *i - start < max {
            *i += 1;
        }
        if *i == start {
            return None;
        }
        t[start..*i].parse::<i64>().ok().map(|n| (n, *i - start))
    };
    let (y, ylen) = num(&mut i, 4)?;
    let punct = |c: u8| c.is_ascii_punctuation();
    if i >= b.len() || !punct(b[i]) {
        return None;
    }
    i += 1;
    let (mo, _) = num(&mut i, 2)?;
    if i >= b.len() || !punct(b[i]) {
        return None;
    }
    i += 1;
    let (d, _) = num(&mut i, 2)?;
    let y = two_digit_year(y, ylen);
    let (mut h, mut mi, mut sec, mut us) = (0, 0, 0, 0);
    let mut has_time = false;
    let mut tail = Tail::Clean;
    // The time: after 'T' or spaces, hour, then minutes and seconds after punctuation.
    let mut j = i;
    if j < b.len() && (b[j] == b'T' || b[j] == b' ') {
        while j < b.len() && (b[j] == b' ' || b[j] == b'T') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            i = j;
            has_time = true;
            h = num(&mut i, 2)?.0;
            if i < b.len() && punct(b[i]) && b.get(i + 1).is_some_and(|c| c.is_ascii_digit()) {
                i += 1;
                mi = num(&mut i, 2)?.0;
                if i < b.len()
                    && punct(b[i])
                    && b[i] != b'.'
                    && b.get(i + 1).is_some_and(|c| c.is_ascii_digit())
                {
                    i += 1;
                    sec = num(&mut i, 2)?.0;
                    if i < b.len() && b[i] == b'.' {
                        let (u, n, over) = fraction(&b[i + 1..]);
                        us = u;
                        i += 1 + n;
                        if over {
                            tail = Tail::Fraction;
                        }
                    }
                }
            }
        }
    }
    if !valid_parts(y, mo, d, h, mi, sec) {
        return None;
    }
    if b[i..].iter().any(|c| !c.is_ascii_whitespace()) {
        tail = Tail::Garbage;
    }
    Some((
        Temporal {
            dt: make_dt(y, mo, d, h, mi, sec, us),
            has_time,
        },
        tail,
    ))
}

/// MySQL's `number_to_datetime`: 20240229 → 2024-02-29, 240229 → 2024-02-29,
/// 20240229131415 → 2024-02-29 13:14:15; `frac_us` is the fraction of a decimal or double.
fn parse_number(n: i128, frac_us: i64) -> Option<(Temporal, Tail)> {
    if n == 0 {
        return Some((
            Temporal {
                dt: zero_dt(),
                has_time: false,
            },
            Tail::Clean,
        ));
    }
    let n = if n < 101 {
        return None;
    } else if n <= 691_231 {
        (n + 20_000_000) * 1_000_000
    } else if n < 700_101 {
        return None;
    } else if n <= 991_231 {
        (n + 19_000_000) * 1_000_000
    } else if n < 10_000_101 {
        return None;
    } else if n <= 99_991_231 {
        n * 1_000_000
    } else if n < 101_000_000 {
        return None;
    } else if n <= 691_231_235_959 {
        n + 20_000_000_000_000
    } else if n < 700_101_000_000 {
        return None;
    } else if n <= 991_231_235_959 {
        n + 19_000_000_000_000
    } else if n <= 99_991_231_235_959 {
        n
    } else {
        return None;
    };
    let (p1, p2) = ((n / 1_000_000) as i64, (n % 1_000_000) as i64);
    let (y, mo, d) = (p1 / 10_000, p1 / 100 % 100, p1 % 100);
    let (h, mi, s) = (p2 / 10_000, p2 / 100 % 100, p2 % 100);
    if !valid_parts(y, mo, d, h, mi, s) {
        return None;
    }
    let has_time = p2 != 0 || n > 99_991_231 * 1_000_000;
    let tail = if frac_us != 0 && !has_time {
        Tail::Garbage
    } else {
        Tail::Clean
    };
    Some((
        Temporal {
            dt: make_dt(y, mo, d, h, mi, s, if has_time { frac_us } else { 0 }),
            has_time,
        },
        tail,
    ))
}

fn is_zero_date(d: &Date) -> bool {
    d.year == 0 && d.month == 0 && d.day == 0
}

fn has_zero_part(d: &Date) -> bool {
    d.month == 0 || d.day == 0
}

fn incorrect(env: &dyn Env, text: &str) {
    super::warn(
        env,
        "Warning",
        1292,
        format!("Incorrect datetime value: '{text}'"),
    );
}

/// Any value as a date and time, `None` for NULL or a value that is no date (with 1292).
/// `kind` names the type in "Truncated incorrect {kind} value" ("datetime", "date").
pub fn to_temporal(v: &Value, env: &dyn Env, zeros: Zeros, kind: &str) -> Option<Temporal> {
    let (t, tail, text) = match v {
        Value::Null => return None,
        Value::Date(d) => (
            Temporal {
                dt: DateTime::new(*d, 0, 0, 0, 0),
                has_time: false,
            },
            Tail::Clean,
            None,
        ),
        Value::DateTime(dt) => (
            Temporal {
                dt: *dt,
                has_time: true,
            },
            Tail::Clean,
            None,
        ),
        // A TIME is that long after today's midnight, as MariaDB reads one as a DATETIME.
        Value::Time(t) => match super::time::on_day(*t, super::time::today(env)) {
            Some(dt) => (Temporal { dt, has_time: true }, Tail::Clean, None),
            None => {
                incorrect(env, &display(v));
                return None;
            }
        },
        Value::Str(_) | Value::Bytes(_) => {
            let s = crate::types::to_text(v.clone());
            match parse_str(&s) {
                Some((t, tail)) => (t, tail, Some(s)),
                None => {
                    incorrect(env, &s);
                    return None;
                }
            }
        }
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_) => {
            let (n, frac) = match v {
                Value::Decimal(d) => {
                    let unit = 10i128.pow(u32::from(d.scale));
                    let frac = (d.unscaled % unit).abs();
                    let us = if d.scale >= 6 {
                        frac / 10i128.pow(u32::from(d.scale) - 6)
                    } else {
                        frac * 10i128.pow(6 - u32::from(d.scale))
                    };
                    (d.unscaled / unit, us as i64)
                }
                Value::Double(f) => (f.trunc() as i128, ((f.fract().abs()) * 1e6) as i64),
                other => (cast::to_int(other, env).unwrap_or(0), 0),
            };
            let text = display(v);
            match if n < 0 { None } else { parse_number(n, frac) } {
                Some((t, tail)) => (t, tail, Some(text)),
                None => {
                    incorrect(env, &text);
                    return None;
                }
            }
        }
    };
    if let Some(text) = &text {
        match tail {
            Tail::Clean => {}
            Tail::Garbage if matches!(v, Value::Decimal(_) | Value::Double(_)) => super::warn(
                env,
                "Note",
                1292,
                format!("Truncated incorrect date value: '{text}'"),
            ),
            Tail::Garbage => super::warn(
                env,
                "Warning",
                1292,
                format!("Truncated incorrect {kind} value: '{text}'"),
            ),
            Tail::Fraction => super::warn(
                env,
                "Note",
                1292,
                format!("Truncated incorrect {kind} value: '{text}'"),
            ),
        }
    }
    if zeros == Zeros::Rejected && has_zero_part(&t.dt.date) {
        incorrect(env, &text.unwrap_or_else(|| display(v)));
        return None;
    }
    Some(t)
}

/// [`to_temporal`] for functions on dates ("datetime" in its warnings).
pub fn to_datetime(v: &Value, env: &dyn Env, zeros: Zeros) -> Option<Temporal> {
    to_temporal(v, env, zeros, "datetime")
}

/// `dt` with its fraction cut to `fsp` digits.
pub fn truncate_fsp(mut dt: DateTime, fsp: u8) -> DateTime {
    let unit = 10u32.pow(6 - u32::from(fsp.min(6)));
    dt.micros = dt.micros / unit * unit;
    dt
}

// ---------------------------------------------------------------------------------------
// INTERVAL arithmetic

/// An interval as MySQL's `INTERVAL` struct: all parts non-negative, the sign apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Interval {
    pub neg: bool,
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
    pub micros: i64,
}

impl Unit {
    /// Whether the unit moves the date only (DATE + it stays a DATE).
    pub fn is_date_only(self) -> bool {
        matches!(
            self,
            Unit::Day | Unit::Week | Unit::Month | Unit::Quarter | Unit::Year | Unit::YearMonth
        )
    }

    /// Whether the unit has microseconds (the result has 6 fractional digits).
    pub fn has_micros(self) -> bool {
        matches!(
            self,
            Unit::Microsecond
                | Unit::SecondMicrosecond
                | Unit::MinuteMicrosecond
                | Unit::HourMicrosecond
                | Unit::DayMicrosecond
        )
    }

    /// The unit's SQL name.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Microsecond => "MICROSECOND",
            Unit::Second => "SECOND",
            Unit::Minute => "MINUTE",
            Unit::Hour => "HOUR",
            Unit::Day => "DAY",
            Unit::Week => "WEEK",
            Unit::Month => "MONTH",
            Unit::Quarter => "QUARTER",
            Unit::Year => "YEAR",
            Unit::SecondMicrosecond => "SECOND_MICROSECOND",
            Unit::MinuteMicrosecond => "MINUTE_MICROSECOND",
            Unit::MinuteSecond => "MINUTE_SECOND",
            Unit::HourMicrosecond => "HOUR_MICROSECOND",
            Unit::HourSecond => "HOUR_SECOND",
            Unit::HourMinute => "HOUR_MINUTE",
            Unit::DayMicrosecond => "DAY_MICROSECOND",
            Unit::DaySecond => "DAY_SECOND",
            Unit::DayMinute => "DAY_MINUTE",
            Unit::DayHour => "DAY_HOUR",
            Unit::YearMonth => "YEAR_MONTH",
        }
    }
}

/// MySQL's `get_interval_value`: `v` read as an interval of `unit`, `None` for NULL.
pub fn interval(v: &Value, unit: Unit, env: &dyn Env) -> Option<Interval> {
    let mut iv = Interval::default();
    if matches!(v, Value::Null) {
        return None;
    }
    // SECOND takes a fraction; the other single units an integer.
    let single = |iv: &mut Interval, n: i64| {
        iv.neg = n < 0;
        let n = n.unsigned_abs() as i64;
        match unit {
            Unit::Microsecond => iv.micros = n,
            Unit::Second => iv.second = n,
            Unit::Minute => iv.minute = n,
            Unit::Hour => iv.hour = n,
            Unit::Day => iv.day = n,
            Unit::Week => iv.day = n * 7,
            Unit::Month => iv.month = n,
            Unit::Quarter => iv.month = n * 3,
            Unit::Year => iv.year = n,
            _ => {}
        }
    };
    let parts = match unit {
        Unit::YearMonth => 2,
        Unit::DayHour | Unit::HourMinute | Unit::MinuteSecond | Unit::SecondMicrosecond => 2,
        Unit::DayMinute | Unit::HourSecond | Unit::MinuteMicrosecond => 3,
        Unit::DaySecond | Unit::HourMicrosecond => 4,
        Unit::DayMicrosecond => 5,
        Unit::Second => {
            let d = cast::to_decimal(v, env)?;
            let us = crate::types::round_to_scale(d, 6)?.rescale(6)?.unscaled;
            iv.neg = us < 0;
            let us = us.abs();
            iv.second = (us / 1_000_000) as i64;
            iv.micros = (us % 1_000_000) as i64;
            return Some(iv);
        }
        _ => {
            single(&mut iv, to_i64(v, env)?);
            return Some(iv);
        }
    };
    // Compound units: a string of numbers separated by anything, right-aligned.
    let s = crate::types::to_text(v.clone());
    let t = s.trim_start();
    iv.neg = t.starts_with('-');
    let b = t.as_bytes();
    let mut nums: Vec<(i64, usize)> = Vec::new();
    let mut i = 0;
    while i < b.len() && nums.len() < parts {
        while i < b.len() && !b[i].is_ascii_digit() {
            i += 1;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i > start {
            nums.push((t[start..i].parse().unwrap_or(i64::MAX), i - start));
        }
    }
    if b[i..].iter().any(|c| c.is_ascii_digit()) {
        super::warn(
            env,
            "Warning",
            1292,
            format!("Truncated incorrect INTERVAL value: '{s}'"),
        );
    }
    let mut vals = vec![0i64; parts - nums.len()];
    let with_micros = unit.has_micros();
    let last_len = nums.last().map_or(0, |n| n.1);
    vals.extend(nums.iter().map(|n| n.0));
    if with_micros && vals.len() == parts {
        // The microseconds are a fraction: '1.5' SECOND_MICROSECOND is 1.500000 s.
        if let Some(us) = vals.last_mut() {
            if last_len < 6 {
                *us *= 10i64.pow(6 - last_len as u32);
            }
        }
    }
    let f = |k: usize| vals.get(k).copied().unwrap_or(0);
    match unit {
        Unit::YearMonth => {
            iv.year = f(0);
            iv.month = f(1);
        }
        Unit::DayHour => {
            iv.day = f(0);
            iv.hour = f(1);
        }
        Unit::DayMinute => {
            (iv.day, iv.hour, iv.minute) = (f(0), f(1), f(2));
        }
        Unit::DaySecond => {
            (iv.day, iv.hour, iv.minute, iv.second) = (f(0), f(1), f(2), f(3));
        }
        Unit::DayMicrosecond => {
            (iv.day, iv.hour, iv.minute, iv.second, iv.micros) = (f(0), f(1), f(2), f(3), f(4));
        }
        Unit::HourMinute => (iv.hour, iv.minute) = (f(0), f(1)),
        Unit::HourSecond => (iv.hour, iv.minute, iv.second) = (f(0), f(1), f(2)),
        Unit::HourMicrosecond => {
            (iv.hour, iv.minute, iv.second, iv.micros) = (f(0), f(1), f(2), f(3));
        }
        Unit::MinuteSecond => (iv.minute, iv.second) = (f(0), f(1)),
        Unit::MinuteMicrosecond => (iv.minute, iv.second, iv.micros) = (f(0), f(1), f(2)),
        Unit::SecondMicrosecond => (iv.second, iv.micros) = (f(0), f(1)),
        _ => {}
    }
    Some(iv)
}

/// MySQL's `date_add_interval`: `None` when the result leaves 0001-01-01 .. 9999-12-31.
pub fn add_interval(dt: DateTime, iv: &Interval, sub: bool) -> Option<DateTime> {
    let sign: i64 = if iv.neg != sub { -1 } else { 1 };
    let d = dt.date;
    if iv.year != 0 || iv.month != 0 {
        if iv.day != 0 || iv.hour != 0 || iv.minute != 0 || iv.second != 0 || iv.micros != 0 {
            return None;
        }
        let period =
            i64::from(d.year) * 12 + sign * iv.year * 12 + i64::from(d.month) - 1 + sign * iv.month;
        if !(12..120_000).contains(&period) {
            return None;
        }
        let (y, m) = (period / 12, period % 12 + 1);
        let day = i64::from(d.day).min(days_in_month(y, m));
        let mut out = dt;
        out.date = Date::new(y as u16, m as u8, day as u8);
        return Some(out);
    }
    let usec = i64::from(dt.micros) + sign * iv.micros;
    let sec = (i64::from(d.day) - 1) * 86_400
        + i64::from(dt.hour) * 3600
        + i64::from(dt.minute) * 60
        + i64::from(dt.second)
        + sign * (iv.day * 86_400 + iv.hour * 3600 + iv.minute * 60 + iv.second);
    let total_us = sec
        .checked_mul(1_000_000)
        .and_then(|s| s.checked_add(usec))?;
    let days = total_us.div_euclid(86_400_000_000);
    let rem = total_us.rem_euclid(86_400_000_000);
    let n = daynr(i64::from(d.year), i64::from(d.month), 1).checked_add(days)?;
    if !(366..=MAX_DAY_NUMBER).contains(&n) {
        return None;
    }
    let date = from_daynr(n);
    let secs = rem / 1_000_000;
    Some(DateTime::new(
        date,
        (secs / 3600) as u8,
        (secs / 60 % 60) as u8,
        (secs % 60) as u8,
        (rem % 1_000_000) as u32,
    ))
}

fn overflow(env: &dyn Env) {
    super::warn(
        env,
        "Warning",
        1441,
        "Datetime function: datetime field overflow".into(),
    );
}

/// DATE_ADD / DATE_SUB / ADDDATE / `+ INTERVAL`: a DATE stays a DATE when the unit moves
/// days or more, otherwise the result is a DATETIME (the column type says how a string
/// argument's result prints).
fn date_add(d: &Value, n: &Value, unit: Unit, sub: bool, env: &dyn Env) -> Value {
    // A TIME moves as a duration and stays a TIME (MariaDB's Item_date_add_interval).
    if let Value::Time(t) = d {
        return match interval(n, unit, env) {
            Some(iv) => super::time::add_interval(*t, &iv, sub, env),
            None => Value::Null,
        };
    }
    let Some(t) = to_datetime(d, env, Zeros::Rejected) else {
        return Value::Null;
    };
    let Some(iv) = interval(n, unit, env) else {
        return Value::Null;
    };
    match add_interval(t.dt, &iv, sub) {
        None => {
            overflow(env);
            Value::Null
        }
        Some(r) if !t.has_time && unit.is_date_only() => Value::Date(r.date),
        Some(r) => Value::DateTime(r),
    }
}

// ---------------------------------------------------------------------------------------
// Differences

/// MySQL's TIMESTAMPDIFF(unit, a, b): b − a in whole units.
fn timestamp_diff(unit: Unit, a: &DateTime, b: &DateTime) -> i64 {
    let us = |dt: &DateTime| -> i128 {
        let days = i128::from(date_daynr(&dt.date));
        ((days * 86_400
            + i128::from(dt.hour) * 3600
            + i128::from(dt.minute) * 60
            + i128::from(dt.second))
            * 1_000_000)
            + i128::from(dt.micros)
    };
    let diff = us(b) - us(a);
    let neg = diff < 0;
    let sign: i64 = if neg { -1 } else { 1 };
    let adiff = diff.abs();
    let seconds = (adiff / 1_000_000) as i64;
    match unit {
        Unit::Year | Unit::Quarter | Unit::Month => {
            let (beg, end) = if neg { (b, a) } else { (a, b) };
            let (yb, ye) = (i64::from(beg.date.year), i64::from(end.date.year));
            let (mb, me) = (i64::from(beg.date.month), i64::from(end.date.month));
            let (db, de) = (i64::from(beg.date.day), i64::from(end.date.day));
            let sec = |t: &DateTime| {
                i64::from(t.hour) * 3600 + i64::from(t.minute) * 60 + i64::from(t.second)
            };
            let (sb, se) = (sec(beg), sec(end));
            let (ub, ue) = (i64::from(beg.micros), i64::from(end.micros));
            let mut years = ye - yb;
            if me < mb || (me == mb && de < db) {
                years -= 1;
            }
            let mut months = 12 * years;
            if me < mb || (me == mb && de < db) {
                months += 12 - (mb - me);
            } else {
                months += me - mb;
            }
            if de < db || (de == db && (se < sb || (se == sb && ue < ub))) {
                months -= 1;
            }
            match unit {
                Unit::Year => months / 12 * sign,
                Unit::Quarter => months / 3 * sign,
                _ => months * sign,
            }
        }
        Unit::Week => seconds / 86_400 / 7 * sign,
        Unit::Day => seconds / 86_400 * sign,
        Unit::Hour => seconds / 3600 * sign,
        Unit::Minute => seconds / 60 * sign,
        Unit::Second => seconds * sign,
        _ => (adiff as i64) * sign,
    }
}

// ---------------------------------------------------------------------------------------
// DATE_FORMAT and STR_TO_DATE

fn suffix(day: u32) -> &'static str {
    match day {
        11..=13 => "th",
        _ => match day % 10 {
            1 => "st",
            2 => "nd",
            3 => "rd",
            _ => "th",
        },
    }
}

/// MySQL's `make_date_time`: `None` where a specifier needs a real date and `dt` has zero
/// parts (weekday names of '2024-00-00').
pub fn date_format(dt: &DateTime, fmt: &str) -> Option<String> {
    let d = &dt.date;
    let mut out = String::with_capacity(fmt.len() * 2);
    let mut it = fmt.chars();
    let hour12 = |h: u8| if h.is_multiple_of(12) { 12 } else { h % 12 };
    let real = !has_zero_part(d);
    while let Some(c) = it.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(f) = it.next() else {
            break;
        };
        // Weekday names need a real day; week numbers a year.
        let weekday_of_zero = matches!(f, 'a' | 'W' | 'w');
        let week_of_zero = matches!(f, 'U' | 'u' | 'V' | 'v' | 'X' | 'x' | 'j') && d.year == 0;
        if !real && (weekday_of_zero || week_of_zero) {
            return None;
        }
        let n = date_daynr(d);
        match f {
            'M' => {
                if d.month == 0 {
                    return None;
                }
                out.push_str(MONTH_NAMES[usize::from(d.month) - 1]);
            }
            'b' => {
                if d.month == 0 {
                    return None;
                }
                out.push_str(&MONTH_NAMES[usize::from(d.month) - 1][..3]);
            }
            'W' => out.push_str(DAY_NAMES[weekday(n, false) as usize]),
            'a' => out.push_str(&DAY_NAMES[weekday(n, false) as usize][..3]),
            'D' => {
                out.push_str(&d.day.to_string());
                out.push_str(suffix(u32::from(d.day)));
            }
            'Y' => out.push_str(&format!("{:04}", d.year)),
            'y' => out.push_str(&format!("{:02}", d.year % 100)),
            'm' => out.push_str(&format!("{:02}", d.month)),
            'c' => out.push_str(&d.month.to_string()),
            'd' => out.push_str(&format!("{:02}", d.day)),
            'e' => out.push_str(&d.day.to_string()),
            'f' => out.push_str(&format!("{:06}", dt.micros)),
            'H' => out.push_str(&format!("{:02}", dt.hour)),
            'h' | 'I' => out.push_str(&format!("{:02}", hour12(dt.hour))),
            'i' => out.push_str(&format!("{:02}", dt.minute)),
            'j' => {
                let doy = n - daynr(i64::from(d.year), 1, 1) + 1;
                out.push_str(&format!("{doy:03}"));
            }
            'k' => out.push_str(&dt.hour.to_string()),
            'l' => out.push_str(&hour12(dt.hour).to_string()),
            'p' => out.push_str(if dt.hour < 12 { "AM" } else { "PM" }),
            'r' => out.push_str(&format!(
                "{:02}:{:02}:{:02} {}",
                hour12(dt.hour),
                dt.minute,
                dt.second,
                if dt.hour < 12 { "AM" } else { "PM" }
            )),
            'S' | 's' => out.push_str(&format!("{:02}", dt.second)),
            'T' => out.push_str(&format!("{:02}:{:02}:{:02}", dt.hour, dt.minute, dt.second)),
            'U' => out.push_str(&format!("{:02}", calc_week(d, WEEK_FIRST_WEEKDAY).0)),
            'u' => out.push_str(&format!("{:02}", calc_week(d, 0).0)),
            'V' => out.push_str(&format!(
                "{:02}",
                calc_week(d, WEEK_YEAR | WEEK_FIRST_WEEKDAY).0
            )),
            'v' => out.push_str(&format!(
                "{:02}",
                calc_week(d, WEEK_YEAR | WEEK_MONDAY_FIRST).0
            )),
            'X' => out.push_str(&format!(
                "{:04}",
                calc_week(d, WEEK_YEAR | WEEK_FIRST_WEEKDAY).1
            )),
            'x' => out.push_str(&format!(
                "{:04}",
                calc_week(d, WEEK_YEAR | WEEK_MONDAY_FIRST).1
            )),
            'w' => out.push_str(&weekday(n, true).to_string()),
            other => out.push(other),
        }
    }
    Some(out)
}

/// What a STR_TO_DATE format yields: MariaDB types the result by the specifiers present.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatKind {
    Date,
    DateTime {
        fsp: u8,
    },
    /// Time specifiers only: a TIME.
    Time,
}

/// The result type of STR_TO_DATE with format `fmt` (MySQL's `get_date_time_result_type`).
pub fn format_kind(fmt: &str) -> FormatKind {
    let (mut date, mut time, mut frac) = (false, false, false);
    let mut it = fmt.chars();
    while let Some(c) = it.next() {
        if c != '%' {
            continue;
        }
        match it.next() {
            Some(
                'a' | 'b' | 'c' | 'D' | 'd' | 'e' | 'j' | 'M' | 'm' | 'U' | 'u' | 'V' | 'v' | 'W'
                | 'w' | 'X' | 'x' | 'Y' | 'y',
            ) => date = true,
            Some('f') => {
                time = true;
                frac = true;
            }
            Some('H' | 'h' | 'I' | 'i' | 'k' | 'l' | 'p' | 'r' | 'S' | 's' | 'T') => time = true,
            _ => {}
        }
    }
    match (date, time) {
        (true, false) => FormatKind::Date,
        (false, true) => FormatKind::Time,
        _ => FormatKind::DateTime {
            fsp: if frac { 6 } else { 0 },
        },
    }
}

/// MySQL's `extract_date_time`: `None` when `s` does not match `fmt`.
fn str_to_date(s: &str, fmt: &str) -> Option<DateTime> {
    let (mut y, mut mo, mut d, mut h, mut mi, mut sec, mut us) = (0i64, 0, 0, 0, 0, 0, 0);
    let mut yday: Option<i64> = None;
    let mut pm: Option<bool> = None;
    let mut weekday_seen = false;
    let v = s.as_bytes();
    let mut i = 0;
    let f = fmt.as_bytes();
    let mut k = 0;
    let num = |i: &mut usize, max: usize| -> Option<i64> {
        let start = *i;
        let mut neg = false;
        if *i < v.len() && (v[*i] == b'-' || v[*i] == b'+') {
            neg = v[*i] == b'-';
            *i += 1;
        }
        let ds = *i;
        while *i < v.len() && v[*i].is_ascii_digit() && *i - ds < max {
            *i += 1;
        }
        if *i == ds {
            *i = start;
            return None;
        }
        let n: i64 = std::str::from_utf8(&v[ds..*i]).ok()?.parse().ok()?;
        Some(if neg { -n } else { n })
    };
    let word = |i: &mut usize, names: &[&str], abbr: bool| -> Option<usize> {
        let rest = &s[*i..];
        for (idx, name) in names.iter().enumerate() {
            let n = if abbr { &name[..3] } else { name };
            if rest.len() >= n.len() && rest[..n.len()].eq_ignore_ascii_case(n) {
                *i += n.len();
                return Some(idx);
            }
        }
        None
    };
    while k < f.len() && i <= v.len() {
        while i < v.len() && v[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= v.len() {
            break;
        }
        if f[k] == b'%' && k + 1 < f.len() {
            k += 1;
            match f[k] {
                b'Y' => {
                    let start = i;
                    y = num(&mut i, 4)?;
                    if i - start <= 2 {
                        y = two_digit_year(y, 2);
                    }
                }
                b'y' => y = two_digit_year(num(&mut i, 2)?, 2),
                b'm' | b'c' => mo = num(&mut i, 2)?,
                b'M' => mo = word(&mut i, &MONTH_NAMES, false)? as i64 + 1,
                b'b' => mo = word(&mut i, &MONTH_NAMES, true)? as i64 + 1,
                b'd' | b'e' => d = num(&mut i, 2)?,
                b'D' => {
                    d = num(&mut i, 2)?;
                    i = (i + 2).min(v.len());
                }
                b'H' | b'k' | b'h' | b'I' | b'l' => h = num(&mut i, 2)?,
                b'i' => mi = num(&mut i, 2)?,
                b's' | b'S' => sec = num(&mut i, 2)?,
                b'f' => {
                    let (u, n, _) = fraction(&v[i..]);
                    if n == 0 {
                        return None;
                    }
                    us = u;
                    i += n;
                }
                b'p' => {
                    let rest = &s[i..];
                    if rest.len() >= 2 && rest[..2].eq_ignore_ascii_case("AM") {
                        pm = Some(false);
                    } else if rest.len() >= 2 && rest[..2].eq_ignore_ascii_case("PM") {
                        pm = Some(true);
                    } else {
                        return None;
                    }
                    i += 2;
                }
                b'W' => {
                    word(&mut i, &DAY_NAMES, false)?;
                    weekday_seen = true;
                }
                b'a' => {
                    word(&mut i, &DAY_NAMES, true)?;
                    weekday_seen = true;
                }
                b'j' => yday = Some(num(&mut i, 3)?),
                b'T' => {
                    h = num(&mut i, 2)?;
                    (i < v.len() && v[i] == b':').then_some(())?;
                    i += 1;
                    mi = num(&mut i, 2)?;
                    (i < v.len() && v[i] == b':').then_some(())?;
                    i += 1;
                    sec = num(&mut i, 2)?;
                }
                b'r' => {
                    h = num(&mut i, 2)?;
                    (i < v.len() && v[i] == b':').then_some(())?;
                    i += 1;
                    mi = num(&mut i, 2)?;
                    (i < v.len() && v[i] == b':').then_some(())?;
                    i += 1;
                    sec = num(&mut i, 2)?;
                    while i < v.len() && v[i].is_ascii_whitespace() {
                        i += 1;
                    }
                    let rest = &s[i..];
                    if rest.len() >= 2 && rest[..2].eq_ignore_ascii_case("PM") {
                        pm = Some(true);
                        i += 2;
                    } else if rest.len() >= 2 && rest[..2].eq_ignore_ascii_case("AM") {
                        pm = Some(false);
                        i += 2;
                    }
                }
                b'%' => {
                    (v[i] == b'%').then_some(())?;
                    i += 1;
                }
                other => {
                    (v[i] == other).then_some(())?;
                    i += 1;
                }
            }
            k += 1;
        } else if f[k].is_ascii_whitespace() {
            k += 1;
        } else {
            (v[i] == f[k]).then_some(())?;
            i += 1;
            k += 1;
        }
    }
    let _ = weekday_seen;
    if let Some(p) = pm {
        if !(1..=12).contains(&h) {
            return None;
        }
        h = h % 12 + if p { 12 } else { 0 };
    }
    if let Some(doy) = yday {
        let n = daynr(y, 1, 1) + doy - 1;
        if doy <= 0 || n > MAX_DAY_NUMBER {
            return None;
        }
        let dd = from_daynr(n);
        (mo, d) = (i64::from(dd.month), i64::from(dd.day));
    }
    // STR_TO_DATE does not check the day against the month (2013-02-30 stays).
    if !(0..=9999).contains(&y)
        || !(0..=12).contains(&mo)
        || !(0..=31).contains(&d)
        || !(0..=23).contains(&h)
        || !(0..=59).contains(&mi)
        || !(0..=59).contains(&sec)
    {
        return None;
    }
    Some(make_dt(y, mo, d, h, mi, sec, us))
}

// ---------------------------------------------------------------------------------------
// Unix time

/// The statement's start as microseconds since the epoch (from `@@timestamp`).
fn statement_us(env: &dyn Env) -> Result<i64> {
    let v = env.session(&SessionFn::SysVar {
        name: "timestamp".into(),
        global: false,
    })?;
    Ok(match v {
        Value::Double(f) => (f * 1e6).round() as i64,
        Value::Decimal(d) => {
            let s = d.rescale(6).map_or(0, |d| d.unscaled);
            s as i64
        }
        other => crate::types::num(&other) as i64 * 1_000_000,
    })
}

/// The statement's start as a DATETIME in the session's zone (NOW()).
pub(crate) fn statement_now(env: &dyn Env) -> Result<DateTime> {
    Ok(env.time_zone().from_utc(statement_utc(env)?))
}

/// The statement's start as a DATETIME in UTC (UTC_TIMESTAMP()).
pub(crate) fn statement_utc(env: &dyn Env) -> Result<DateTime> {
    Ok(from_unix_us(statement_us(env)?))
}

/// The current wall-clock time in microseconds since the epoch (INNODB_TRX).
pub(crate) fn wall_now_us() -> i64 {
    wall_us()
}

/// The current wall-clock time in microseconds since the epoch (SYSDATE).
fn wall_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// Microseconds since 1970-01-01 00:00:00 UTC as a DATETIME.
pub fn from_unix_us(us: i64) -> DateTime {
    let days = us.div_euclid(86_400_000_000);
    let rem = us.rem_euclid(86_400_000_000);
    let date = from_daynr(days + daynr(1970, 1, 1));
    let secs = rem / 1_000_000;
    DateTime::new(
        date,
        (secs / 3600) as u8,
        (secs / 60 % 60) as u8,
        (secs % 60) as u8,
        (rem % 1_000_000) as u32,
    )
}

/// A DATETIME as microseconds since the epoch (UTC).
pub fn to_unix_us(dt: &DateTime) -> i64 {
    let days = date_daynr(&dt.date) - daynr(1970, 1, 1);
    (days * 86_400 + i64::from(dt.hour) * 3600 + i64::from(dt.minute) * 60 + i64::from(dt.second))
        * 1_000_000
        + i64::from(dt.micros)
}

/// The TIMESTAMP range UNIX_TIMESTAMP and FROM_UNIXTIME accept, in seconds.
const UNIX_MAX: i64 = 2_147_483_647;

// ---------------------------------------------------------------------------------------
// Evaluation

fn int(n: i64) -> Value {
    Value::Int(n)
}

/// Evaluates `f` on its arguments' values.
pub fn eval(f: TimeFn, args: Vec<Value>, env: &dyn Env) -> Result<Value> {
    let a = |i: usize| args.get(i).cloned().unwrap_or(Value::Null);
    let date_of = |v: &Value, zeros| to_datetime(v, env, zeros);
    Ok(match f {
        TimeFn::Now(fsp) => Value::DateTime(truncate_fsp(statement_now(env)?, fsp)),
        TimeFn::UtcTimestamp(fsp) => Value::DateTime(truncate_fsp(statement_utc(env)?, fsp)),
        TimeFn::SysDate(fsp) => {
            let now = env.time_zone().from_utc(from_unix_us(wall_us()));
            Value::DateTime(truncate_fsp(now, fsp))
        }
        TimeFn::UtcDate => Value::Date(statement_utc(env)?.date),
        TimeFn::Date => match date_of(&a(0), Zeros::Allowed) {
            Some(t) => Value::Date(t.dt.date),
            None => Value::Null,
        },
        TimeFn::Year | TimeFn::Month | TimeFn::Day | TimeFn::Quarter => {
            match date_of(&a(0), Zeros::Allowed) {
                None => Value::Null,
                Some(t) => int(match f {
                    TimeFn::Year => i64::from(t.dt.date.year),
                    TimeFn::Month => i64::from(t.dt.date.month),
                    TimeFn::Day => i64::from(t.dt.date.day),
                    _ => (i64::from(t.dt.date.month) + 2) / 3,
                }),
            }
        }
        TimeFn::Hour | TimeFn::Minute | TimeFn::Second | TimeFn::Microsecond => {
            match super::time::to_time(&a(0), env) {
                None => Value::Null,
                Some(t) => int(match f {
                    TimeFn::Hour => t.hours(),
                    TimeFn::Minute => t.minute(),
                    TimeFn::Second => t.second(),
                    _ => t.fraction(),
                }),
            }
        }
        TimeFn::DayOfWeek | TimeFn::Weekday | TimeFn::DayOfYear | TimeFn::DayName => {
            match date_of(&a(0), Zeros::Rejected) {
                None => Value::Null,
                Some(t) => {
                    let n = date_daynr(&t.dt.date);
                    match f {
                        TimeFn::DayOfWeek => int(weekday(n, true) + 1),
                        TimeFn::Weekday => int(weekday(n, false)),
                        TimeFn::DayOfYear => int(n - daynr(i64::from(t.dt.date.year), 1, 1) + 1),
                        _ => Value::Str(DAY_NAMES[weekday(n, false) as usize].into()),
                    }
                }
            }
        }
        TimeFn::MonthName => match date_of(&a(0), Zeros::Allowed) {
            Some(t) if t.dt.date.month > 0 => {
                Value::Str(MONTH_NAMES[usize::from(t.dt.date.month) - 1].into())
            }
            _ => Value::Null,
        },
        TimeFn::Week | TimeFn::YearWeek | TimeFn::WeekOfYear => {
            let Some(t) = date_of(&a(0), Zeros::Rejected) else {
                return Ok(Value::Null);
            };
            let mode = match f {
                TimeFn::WeekOfYear => 3,
                _ if args.len() > 1 => to_i64(&a(1), env).unwrap_or(0),
                _ => 0,
            };
            match f {
                TimeFn::YearWeek => {
                    let (w, y) = calc_week(&t.dt.date, week_mode(mode) | WEEK_YEAR);
                    int(y * 100 + w)
                }
                _ => int(calc_week(&t.dt.date, week_mode(mode)).0),
            }
        }
        TimeFn::LastDay => match date_of(&a(0), Zeros::Allowed) {
            Some(t) if t.dt.date.month > 0 => {
                let d = t.dt.date;
                let last = days_in_month(i64::from(d.year), i64::from(d.month));
                Value::Date(Date::new(d.year, d.month, last as u8))
            }
            Some(t) => {
                incorrect(env, &display(&Value::Date(t.dt.date)));
                Value::Null
            }
            None => Value::Null,
        },
        TimeFn::AddInterval { unit, sub } => date_add(&a(0), &a(1), unit, sub, env),
        TimeFn::TimestampAdd(unit) => date_add(&a(1), &a(0), unit, false, env),
        TimeFn::DateDiff => {
            if any_null(&args) {
                return Ok(Value::Null);
            }
            match (
                date_of(&a(0), Zeros::Rejected),
                date_of(&a(1), Zeros::Rejected),
            ) {
                (Some(x), Some(y)) => int(date_daynr(&x.dt.date) - date_daynr(&y.dt.date)),
                _ => Value::Null,
            }
        }
        TimeFn::TimestampDiff(unit) => {
            if any_null(&args) {
                return Ok(Value::Null);
            }
            match (
                date_of(&a(0), Zeros::Rejected),
                date_of(&a(1), Zeros::Rejected),
            ) {
                (Some(x), Some(y)) => int(timestamp_diff(unit, &x.dt, &y.dt)),
                _ => Value::Null,
            }
        }
        TimeFn::DateFormat => {
            if any_null(&args) {
                return Ok(Value::Null);
            }
            // A TIME formats as a duration on the zero date, its sign first (MariaDB's).
            if let Value::Time(t) = a(0) {
                let fmt = crate::types::to_text(a(1));
                return Ok(super::time::time_format(t, &fmt, true).map_or(Value::Null, Value::Str));
            }
            let Some(t) = date_of(&a(0), Zeros::Allowed) else {
                return Ok(Value::Null);
            };
            if is_zero_date(&t.dt.date) {
                return Ok(Value::Null);
            }
            let fmt = crate::types::to_text(a(1));
            date_format(&t.dt, &fmt).map_or(Value::Null, Value::Str)
        }
        TimeFn::StrToDate => {
            if any_null(&args) {
                return Ok(Value::Null);
            }
            let s = crate::types::to_text(a(0));
            let fmt = crate::types::to_text(a(1));
            match str_to_date(&s, &fmt) {
                None => {
                    super::warn(
                        env,
                        "Warning",
                        1411,
                        format!("Incorrect datetime value: '{s}' for function str_to_date"),
                    );
                    Value::Null
                }
                Some(dt) => match format_kind(&fmt) {
                    FormatKind::Date => Value::Date(dt.date),
                    FormatKind::Time => Value::Time(super::time::of_datetime(&dt)),
                    _ => Value::DateTime(dt),
                },
            }
        }
        TimeFn::UnixTimestamp(..) if args.is_empty() => {
            int(statement_us(env)?.div_euclid(1_000_000))
        }
        TimeFn::UnixTimestamp(scale, timestamp) => {
            let v = a(0);
            let Some(t) = date_of(&v, Zeros::Allowed) else {
                return Ok(Value::Null);
            };
            // A TIMESTAMP column's zero value is the epoch's 0; any other zero date, or a
            // date with a zero month or day, has no time: NULL (MariaDB 10.11).
            if is_zero_date(&t.dt.date) && timestamp {
                return Ok(int(0));
            }
            if has_zero_part(&t.dt.date) {
                return Ok(Value::Null);
            }
            // The value is a local time of the session's zone.
            let us = to_unix_us(&env.time_zone().to_utc(t.dt));
            if !(0..=UNIX_MAX * 1_000_000 + 999_999).contains(&us) {
                return Ok(Value::Null);
            }
            unix_value(us, scale)
        }
        TimeFn::FromUnixtime => {
            let v = a(0);
            let Some(d) = cast::to_decimal(&v, env) else {
                return Ok(Value::Null);
            };
            let Some(us) = crate::types::round_to_scale(d, 6).and_then(|d| d.rescale(6)) else {
                return Ok(Value::Null);
            };
            if us.unscaled < 0 || us.unscaled > i128::from(UNIX_MAX) * 1_000_000 + 999_999 {
                return Ok(Value::Null);
            }
            let dt = env.time_zone().from_utc(from_unix_us(us.unscaled as i64));
            if args.len() > 1 {
                match a(1) {
                    Value::Null => Value::Null,
                    f => {
                        date_format(&dt, &crate::types::to_text(f)).map_or(Value::Null, Value::Str)
                    }
                }
            } else {
                Value::DateTime(dt)
            }
        }
        TimeFn::MakeDate => {
            let (Some(y), Some(doy)) = (to_i64(&a(0), env), to_i64(&a(1), env)) else {
                return Ok(Value::Null);
            };
            if doy <= 0 || !(0..=9999).contains(&y) {
                return Ok(Value::Null);
            }
            let y = if y < 100 { two_digit_year(y, 2) } else { y };
            let n = daynr(y, 1, 1) + doy - 1;
            if n > MAX_DAY_NUMBER {
                return Ok(Value::Null);
            }
            Value::Date(from_daynr(n))
        }
        TimeFn::ToDays => match date_of(&a(0), Zeros::Rejected) {
            Some(t) => int(date_daynr(&t.dt.date)),
            None => Value::Null,
        },
        TimeFn::FromDays => match to_i64(&a(0), env) {
            Some(n) => Value::Date(from_daynr(n)),
            None => Value::Null,
        },
        TimeFn::Extract(unit) => extract(unit, &a(0), env),
        TimeFn::Text(fsp) => match a(0) {
            Value::DateTime(dt) => Value::Str(text(&dt, fsp)),
            Value::Time(t) => Value::Str(super::time::text(t, fsp)),
            other => other,
        },
        TimeFn::CurTime(_)
        | TimeFn::UtcTime(_)
        | TimeFn::TimePart
        | TimeFn::TimeDiff(_)
        | TimeFn::AddTime { .. }
        | TimeFn::TimeToSec(_)
        | TimeFn::SecToTime(_)
        | TimeFn::MakeTime(_)
        | TimeFn::TimeFormat
        | TimeFn::Timestamp => return super::time::eval(f, args, env),
    })
}

/// UNIX_TIMESTAMP's value: an integer, or a DECIMAL with `scale` fractional digits.
fn unix_value(us: i64, scale: u8) -> Value {
    if scale == 0 {
        return Value::Int(us.div_euclid(1_000_000));
    }
    let d = Decimal::new(i128::from(us), 6);
    Value::Decimal(crate::types::round_to_scale(d, scale).unwrap_or(d))
}

/// EXTRACT(unit FROM v).
fn extract(unit: Unit, v: &Value, env: &dyn Env) -> Value {
    // A string or a number read for a time unit is read as a TIME ('10:11:12' is ten
    // o'clock, not 2010-11-12), as MariaDB does.
    let time_unit = matches!(
        unit,
        Unit::Hour
            | Unit::Minute
            | Unit::Second
            | Unit::Microsecond
            | Unit::HourMinute
            | Unit::HourSecond
            | Unit::HourMicrosecond
            | Unit::MinuteSecond
            | Unit::MinuteMicrosecond
            | Unit::SecondMicrosecond
    );
    if time_unit
        && !matches!(
            v,
            Value::Null | Value::Date(_) | Value::DateTime(_) | Value::Time(_)
        )
    {
        return match super::time::to_time(v, env) {
            Some(t) => extract(unit, &Value::Time(t), env),
            None => Value::Null,
        };
    }
    // A TIME's parts carry its sign (EXTRACT(HOUR FROM '-01:00:00') is -1); it has no date.
    if let Value::Time(t) = v {
        let sign = if t.is_negative() { -1 } else { 1 };
        let (h, mi, s, us) = (t.hours(), t.minute(), t.second(), t.fraction());
        let (dd, h) = (h / 24, h % 24);
        return Value::Int(
            sign * match unit {
                Unit::Year | Unit::Quarter | Unit::Month | Unit::Week | Unit::YearMonth => 0,
                Unit::Day => dd,
                Unit::Hour => h,
                Unit::Minute => mi,
                Unit::Second => s,
                Unit::Microsecond => us,
                Unit::DayHour => dd * 100 + h,
                Unit::DayMinute => (dd * 100 + h) * 100 + mi,
                Unit::DaySecond => ((dd * 100 + h) * 100 + mi) * 100 + s,
                Unit::DayMicrosecond => (((dd * 100 + h) * 100 + mi) * 100 + s) * 1_000_000 + us,
                Unit::HourMinute => h * 100 + mi,
                Unit::HourSecond => (h * 100 + mi) * 100 + s,
                Unit::HourMicrosecond => ((h * 100 + mi) * 100 + s) * 1_000_000 + us,
                Unit::MinuteSecond => mi * 100 + s,
                Unit::MinuteMicrosecond => (mi * 100 + s) * 1_000_000 + us,
                Unit::SecondMicrosecond => s * 1_000_000 + us,
            },
        );
    }
    let Some(t) = to_datetime(v, env, Zeros::Allowed) else {
        return Value::Null;
    };
    let dt = t.dt;
    let d = dt.date;
    let (y, mo, dd) = (i64::from(d.year), i64::from(d.month), i64::from(d.day));
    let (h, mi, s, us) = (
        i64::from(dt.hour),
        i64::from(dt.minute),
        i64::from(dt.second),
        i64::from(dt.micros),
    );
    Value::Int(match unit {
        Unit::Year => y,
        Unit::Quarter => (mo + 2) / 3,
        Unit::Month => mo,
        Unit::Week => calc_week(&d, week_mode(0)).0,
        Unit::Day => dd,
        Unit::Hour => h,
        Unit::Minute => mi,
        Unit::Second => s,
        Unit::Microsecond => us,
        Unit::YearMonth => y * 100 + mo,
        Unit::DayHour => dd * 100 + h,
        Unit::DayMinute => (dd * 100 + h) * 100 + mi,
        Unit::DaySecond => ((dd * 100 + h) * 100 + mi) * 100 + s,
        Unit::DayMicrosecond => (((dd * 100 + h) * 100 + mi) * 100 + s) * 1_000_000 + us,
        Unit::HourMinute => h * 100 + mi,
        Unit::HourSecond => (h * 100 + mi) * 100 + s,
        Unit::HourMicrosecond => ((h * 100 + mi) * 100 + s) * 1_000_000 + us,
        Unit::MinuteSecond => mi * 100 + s,
        Unit::MinuteMicrosecond => (mi * 100 + s) * 1_000_000 + us,
        Unit::SecondMicrosecond => s * 1_000_000 + us,
    })
}

/// The number of fractional digits a constant string date has ('… 10:11:12.5' → 1; six for
/// a string that is no date, as MariaDB decides at fix time).
pub fn literal_fraction_digits(s: &str) -> u8 {
    match parse_str(s) {
        Some((t, _)) if t.has_time => match s.trim().rsplit_once('.') {
            Some((_, f)) => f.bytes().take_while(|c| c.is_ascii_digit()).count().min(6) as u8,
            None => 0,
        },
        Some(_) => 0,
        None => 6,
    }
}

/// A DATETIME as text with exactly `fsp` fractional digits (what a DATETIME(fsp) value
/// is as a string: CONCAT, LENGTH, CAST AS CHAR).
pub fn text(dt: &DateTime, fsp: u8) -> String {
    let mut s = format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        dt.date.year, dt.date.month, dt.date.day, dt.hour, dt.minute, dt.second
    );
    if fsp > 0 {
        let f = format!("{:06}", dt.micros);
        s.push('.');
        s.push_str(&f[..usize::from(fsp.min(6))]);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn day_numbers_match_mysql_calc_daynr() {
        assert_eq!(daynr(0, 1, 1), 1);
        assert_eq!(daynr(1, 1, 1), 366);
        assert_eq!(daynr(2007, 10, 7), 733_321);
        assert_eq!(daynr(9999, 12, 31), MAX_DAY_NUMBER);
        for n in [366, 730_669, 739_310, MAX_DAY_NUMBER] {
            let d = from_daynr(n);
            assert_eq!(date_daynr(&d), n, "{d:?}");
        }
        assert_eq!(from_daynr(730_669), Date::new(2000, 7, 3));
    }

    #[test]
    fn week_modes_follow_calc_week() {
        let d = Date::new(2000, 1, 1);
        let w: Vec<i64> = (0..8).map(|m| calc_week(&d, week_mode(m)).0).collect();
        assert_eq!(w, vec![0, 0, 52, 52, 0, 0, 52, 52]);
        assert_eq!(calc_week(&Date::new(2008, 2, 20), week_mode(1)).0, 8);
    }

    #[test]
    fn month_arithmetic_clamps_to_the_last_day() {
        let dt = DateTime::new(Date::new(2024, 1, 31), 0, 0, 0, 0);
        let iv = Interval {
            month: 1,
            ..Interval::default()
        };
        assert_eq!(
            add_interval(dt, &iv, false).map(|d| d.date),
            Some(Date::new(2024, 2, 29))
        );
    }

    #[test]
    fn strings_parse_as_mysql_reads_dates() {
        let p = |s: &str| parse_str(s).map(|(t, _)| (display(&Value::DateTime(t.dt)), t.has_time));
        assert_eq!(p("2024-2-9"), Some(("2024-02-09 00:00:00".into(), false)));
        assert_eq!(p("24-02-29"), Some(("2024-02-29 00:00:00".into(), false)));
        assert_eq!(
            p("2024/02/29 1:2:3"),
            Some(("2024-02-29 01:02:03".into(), true))
        );
        assert_eq!(p("20240229"), Some(("2024-02-29 00:00:00".into(), false)));
        assert_eq!(p("2024-02-30"), None);
        assert_eq!(p("x"), None);
    }
}
