//! # Built-in functions
//!
//! The functions applications use beyond the few in `expr.rs`, one file per family:
//!
//! | file | what |
//! |---|---|
//! | `string.rs` | SUBSTRING, TRIM, LPAD, LOCATE, HEX, FIELD, FORMAT, hashes, base64, … |
//! | `regexp.rs` | REGEXP / RLIKE, REGEXP_REPLACE, REGEXP_SUBSTR, REGEXP_INSTR |
//! | `math.rs` | POW, LOG, trigonometry, TRUNCATE, RAND, CONV, bit operators |
//! | `datetime.rs` | the calendar: extraction, INTERVAL arithmetic, WEEK, DATE_FORMAT, … |
//! | `time.rs` | TIME: reading values as durations, TIMEDIFF, ADDTIME, SEC_TO_TIME, TIME_FORMAT, … |
//! | `cast.rs` | CAST / CONVERT, and MySQL's conversions of a value to a number or a date |
//! | `json.rs` | JSON_VALID, JSON_EXTRACT, JSON_OBJECT, … on JSON text, as MariaDB prints it |
//! | `syntax.rs` | binding of the special syntaxes (`SUBSTRING(s FROM p)`, `TRIM(… FROM …)`, `CAST`, `INTERVAL`, `&`, `<<`, …) |
//! | `types.rs` | the result column of an expression (type, length, decimals), as MariaDB 10.11 types it |
//!
//! Evaluation takes the arguments' values (every function here is strict: all arguments are
//! evaluated) and the [`Env`], which collects MySQL's warnings (1292 "Truncated incorrect
//! INTEGER value", …). Results follow MariaDB 10.11: NULL in, NULL out unless the function
//! says otherwise; positions count characters, not bytes; a binary string argument makes a
//! byte-wise function work on bytes.

pub mod cast;
pub mod datetime;
pub mod json;
pub mod math;
pub mod misc;
pub mod regexp;
pub mod string;
mod syntax;
pub mod time;
pub mod types;

use quire_engine::row::Value;

use crate::expr::Env;

/// String functions (`string.rs`, `regexp.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrFn {
    Substring,
    Left,
    Right,
    Trim(TrimSide),
    Replace,
    LPad,
    RPad,
    /// `LOCATE(substr, str[, pos])`; INSTR and POSITION bind to it.
    Locate,
    Reverse,
    Space,
    Ascii,
    Ord,
    /// `CHAR(n, …)`: a binary string.
    Char,
    /// `CHAR(n, … USING utf8mb4)`.
    CharUsing,
    Hex,
    Unhex,
    Strcmp,
    Field,
    Elt,
    FindInSet,
    SubstringIndex,
    Insert,
    Format,
    Quote,
    Md5,
    /// UUID(): a version 1 UUID, as MariaDB makes them (`string::uuid`).
    Uuid,
    /// SYS_GUID(): UUID() without its dashes.
    SysGuid,
    Sha1,
    Sha2,
    Crc32,
    ToBase64,
    FromBase64,
    BitLength,
    Charset,
    /// `s REGEXP p` (NOT REGEXP is `Not` of it).
    Regexp,
    RegexpReplace,
    RegexpSubstr,
    RegexpInstr,
}

/// Which ends TRIM removes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrimSide {
    Both,
    Leading,
    Trailing,
}

/// Numeric functions and the bit operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MathFn {
    Pow,
    Sqrt,
    Exp,
    Ln,
    /// `LOG(x)` (natural) or `LOG(base, x)`.
    Log,
    Log2,
    Log10,
    Sign,
    /// `ROUND(x[, d])`.
    Round,
    Truncate,
    Pi,
    Degrees,
    Radians,
    Sin,
    Cos,
    Tan,
    Cot,
    Asin,
    Acos,
    /// `ATAN(x)` or `ATAN(y, x)`; ATAN2 binds to it.
    Atan,
    Rand,
    Conv,
    Bin,
    Oct,
    BitAnd,
    BitOr,
    BitXor,
    BitNot,
    Shl,
    Shr,
    BitCount,
    /// A BIT(M) value as the binary string a string function sees: its big-endian bytes,
    /// ceil(M/8) of them (the binder puts it around BIT arguments, `func/syntax.rs`).
    BitBytes(u8),
}

/// The unit of an INTERVAL, TIMESTAMPDIFF or TIMESTAMPADD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Microsecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    SecondMicrosecond,
    MinuteMicrosecond,
    MinuteSecond,
    HourMicrosecond,
    HourSecond,
    HourMinute,
    DayMicrosecond,
    DaySecond,
    DayMinute,
    DayHour,
    YearMonth,
}

/// Date and time functions (`datetime.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeFn {
    /// NOW(fsp) / CURRENT_TIMESTAMP(fsp) / LOCALTIME(fsp): the statement's start.
    Now(u8),
    /// SYSDATE(fsp): the time of the call.
    SysDate(u8),
    UtcTimestamp(u8),
    UtcDate,
    Date,
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Microsecond,
    DayOfWeek,
    Weekday,
    DayOfYear,
    /// `WEEK(d[, mode])`.
    Week,
    /// `YEARWEEK(d[, mode])`.
    YearWeek,
    WeekOfYear,
    Quarter,
    MonthName,
    DayName,
    LastDay,
    /// `DATE_ADD(d, INTERVAL n unit)` / `d + INTERVAL …`; with `sub`, DATE_SUB / `-`.
    AddInterval {
        unit: Unit,
        sub: bool,
    },
    DateDiff,
    TimestampDiff(Unit),
    TimestampAdd(Unit),
    DateFormat,
    StrToDate,
    /// `UNIX_TIMESTAMP([d])`: with the fractional digits of `d`'s type (the binder sets
    /// them), a DECIMAL of that scale, else a BIGINT.
    /// UNIX_TIMESTAMP: the result's decimals, and whether the argument is a TIMESTAMP
    /// column (whose zero value is 0; any other zero date is NULL, as MariaDB's).
    UnixTimestamp(u8, bool),
    FromUnixtime,
    MakeDate,
    ToDays,
    FromDays,
    /// `EXTRACT(unit FROM d)`.
    Extract(Unit),
    /// A DATETIME(fsp) or TIME(fsp) argument as the text a string function sees: the
    /// binder puts it around temporal arguments of string functions (`func/syntax.rs`).
    Text(u8),
    /// CURTIME(fsp) / CURRENT_TIME: the statement's start in the session's zone, a TIME.
    CurTime(u8),
    /// UTC_TIME(fsp): the statement's start in UTC, a TIME.
    UtcTime(u8),
    /// TIME(expr): the value as a TIME (a datetime's time of day).
    TimePart,
    /// TIMEDIFF(a, b). This and the next three carry their result's fractional digits
    /// (the binder sets them from the result's type, `func/syntax.rs`): a result clipped
    /// to 838:59:59.999999 is cut to them, as MariaDB's is.
    TimeDiff(u8),
    /// ADDTIME(a, b), or SUBTIME with `sub`.
    AddTime {
        sub: bool,
        fsp: u8,
    },
    /// TIME_TO_SEC(t): seconds, a DECIMAL of the argument's fractional digits (the binder
    /// sets them) or a BIGINT without.
    TimeToSec(u8),
    SecToTime(u8),
    MakeTime(u8),
    TimeFormat,
    /// TIMESTAMP(d[, t]): `d` as a DATETIME, plus the TIME `t`.
    Timestamp,
}

/// The target of CAST / CONVERT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CastTo {
    Signed,
    Unsigned,
    Decimal {
        precision: u8,
        scale: u8,
    },
    Double,
    Float,
    /// `CHAR[(n)]`: a utf8mb4 string of at most n characters.
    Char(Option<u32>),
    /// `BINARY[(n)]`: bytes, zero-padded to n.
    Binary(Option<u32>),
    Date,
    DateTime(u8),
    /// `TIME[(fsp)]`.
    Time(u8),
    /// `CONVERT(x USING utf8mb4)`.
    Utf8mb4,
    /// A string's bytes in a one-byte character set: what LENGTH, OCTET_LENGTH, BIT_LENGTH
    /// and HEX of a latin1 or ascii column count (the binder adds it, `bind_function`).
    Bytes(quire_engine::row::Charset),
}

/// A function that is not in `expr.rs`'s small set: its kind and argument counts.
pub fn by_name(name: &str) -> Option<(crate::expr::Func, usize, usize)> {
    use crate::expr::Func;
    use quire_engine::row::Collation;
    let s = |f: StrFn| Func::Str(f, Collation::Utf8mb4GeneralCi);
    let m = Func::Math;
    let t = Func::Time;
    let j = Func::Json;
    use json::JsonFn;
    const N: usize = usize::MAX;
    if let Some((f, min, max)) = misc::MiscFn::by_name(name) {
        return Some((Func::Misc(f), min, max));
    }
    Some(match name {
        "substring" | "substr" | "mid" => (s(StrFn::Substring), 2, 3),
        "left" => (s(StrFn::Left), 2, 2),
        "right" => (s(StrFn::Right), 2, 2),
        "trim" => (s(StrFn::Trim(TrimSide::Both)), 1, 1),
        "ltrim" => (s(StrFn::Trim(TrimSide::Leading)), 1, 1),
        "rtrim" => (s(StrFn::Trim(TrimSide::Trailing)), 1, 1),
        "replace" => (s(StrFn::Replace), 3, 3),
        "lpad" => (s(StrFn::LPad), 2, 3),
        "rpad" => (s(StrFn::RPad), 2, 3),
        "locate" => (s(StrFn::Locate), 2, 3),
        // INSTR(str, substr): the binder swaps the arguments into LOCATE's order.
        "instr" => (s(StrFn::Locate), 2, 2),
        "reverse" => (s(StrFn::Reverse), 1, 1),
        "space" => (s(StrFn::Space), 1, 1),
        "ascii" => (s(StrFn::Ascii), 1, 1),
        "ord" => (s(StrFn::Ord), 1, 1),
        "char" => (s(StrFn::Char), 1, N),
        // CHAR(n, … USING utf8mb4), as parse.rs rewrites it.
        "char_using_utf8mb4" => (s(StrFn::CharUsing), 1, N),
        "hex" => (s(StrFn::Hex), 1, 1),
        "unhex" => (s(StrFn::Unhex), 1, 1),
        "strcmp" => (s(StrFn::Strcmp), 2, 2),
        "field" => (s(StrFn::Field), 2, N),
        "elt" => (s(StrFn::Elt), 2, N),
        "find_in_set" => (s(StrFn::FindInSet), 2, 2),
        "json_valid" => (j(JsonFn::Valid), 1, 1),
        "json_extract" => (j(JsonFn::Extract), 2, N),
        "json_unquote" => (j(JsonFn::Unquote), 1, 1),
        "json_quote" => (j(JsonFn::Quote), 1, 1),
        "json_type" => (j(JsonFn::Type), 1, 1),
        "json_length" => (j(JsonFn::Length), 1, 2),
        "json_keys" => (j(JsonFn::Keys), 1, 2),
        "json_contains" => (j(JsonFn::Contains), 2, 3),
        "json_contains_path" => (j(JsonFn::ContainsPath), 3, N),
        "json_depth" => (j(JsonFn::Depth), 1, 1),
        // The binder sets which arguments are JSON already or truth values
        // (`func/syntax.rs`), and JSON_SEARCH's collation.
        "json_object" => (j(JsonFn::Object(Default::default())), 0, N),
        "json_array" => (j(JsonFn::Array(Default::default())), 0, N),
        "json_set" => (
            j(JsonFn::Modify(json::Modify::Set, Default::default())),
            3,
            N,
        ),
        "json_insert" => (
            j(JsonFn::Modify(json::Modify::Insert, Default::default())),
            3,
            N,
        ),
        "json_replace" => (
            j(JsonFn::Modify(json::Modify::Replace, Default::default())),
            3,
            N,
        ),
        "json_remove" => (j(JsonFn::Remove), 2, N),
        "json_array_append" => (j(JsonFn::ArrayAppend(Default::default())), 3, N),
        "json_array_insert" => (j(JsonFn::ArrayInsert(Default::default())), 3, N),
        "json_merge_patch" => (j(JsonFn::MergePatch), 2, N),
        "json_merge_preserve" | "json_merge" => (j(JsonFn::MergePreserve), 2, N),
        "json_search" => (j(JsonFn::Search(Collation::Utf8mb4GeneralCi)), 3, N),
        "substring_index" => (s(StrFn::SubstringIndex), 3, 3),
        "insert" => (s(StrFn::Insert), 4, 4),
        "format" => (s(StrFn::Format), 2, 3),
        "quote" => (s(StrFn::Quote), 1, 1),
        "md5" => (s(StrFn::Md5), 1, 1),
        "uuid" => (s(StrFn::Uuid), 0, 0),
        "sys_guid" => (s(StrFn::SysGuid), 0, 0),
        "sha1" | "sha" => (s(StrFn::Sha1), 1, 1),
        "sha2" => (s(StrFn::Sha2), 2, 2),
        "crc32" => (s(StrFn::Crc32), 1, 1),
        "to_base64" => (s(StrFn::ToBase64), 1, 1),
        "from_base64" => (s(StrFn::FromBase64), 1, 1),
        "bit_length" => (s(StrFn::BitLength), 1, 1),
        "charset" => (s(StrFn::Charset), 1, 1),
        "regexp_replace" => (s(StrFn::RegexpReplace), 3, 3),
        "regexp_substr" => (s(StrFn::RegexpSubstr), 2, 2),
        "regexp_instr" => (s(StrFn::RegexpInstr), 2, 2),
        "pow" | "power" => (m(MathFn::Pow), 2, 2),
        "sqrt" => (m(MathFn::Sqrt), 1, 1),
        "exp" => (m(MathFn::Exp), 1, 1),
        "ln" => (m(MathFn::Ln), 1, 1),
        "log" => (m(MathFn::Log), 1, 2),
        "log2" => (m(MathFn::Log2), 1, 1),
        "log10" => (m(MathFn::Log10), 1, 1),
        "sign" => (m(MathFn::Sign), 1, 1),
        "round" => (m(MathFn::Round), 1, 2),
        "truncate" => (m(MathFn::Truncate), 2, 2),
        "pi" => (m(MathFn::Pi), 0, 0),
        "degrees" => (m(MathFn::Degrees), 1, 1),
        "radians" => (m(MathFn::Radians), 1, 1),
        "sin" => (m(MathFn::Sin), 1, 1),
        "cos" => (m(MathFn::Cos), 1, 1),
        "tan" => (m(MathFn::Tan), 1, 1),
        "cot" => (m(MathFn::Cot), 1, 1),
        "asin" => (m(MathFn::Asin), 1, 1),
        "acos" => (m(MathFn::Acos), 1, 1),
        "atan" => (m(MathFn::Atan), 1, 2),
        "atan2" => (m(MathFn::Atan), 2, 2),
        "rand" => (m(MathFn::Rand), 0, 1),
        "conv" => (m(MathFn::Conv), 3, 3),
        "bin" => (m(MathFn::Bin), 1, 1),
        "oct" => (m(MathFn::Oct), 1, 1),
        "bit_count" => (m(MathFn::BitCount), 1, 1),
        "utc_timestamp" => (t(TimeFn::UtcTimestamp(0)), 0, 1),
        "utc_date" => (t(TimeFn::UtcDate), 0, 0),
        "date" => (t(TimeFn::Date), 1, 1),
        "year" => (t(TimeFn::Year), 1, 1),
        "month" => (t(TimeFn::Month), 1, 1),
        "day" | "dayofmonth" => (t(TimeFn::Day), 1, 1),
        "hour" => (t(TimeFn::Hour), 1, 1),
        "minute" => (t(TimeFn::Minute), 1, 1),
        "second" => (t(TimeFn::Second), 1, 1),
        "microsecond" => (t(TimeFn::Microsecond), 1, 1),
        "dayofweek" => (t(TimeFn::DayOfWeek), 1, 1),
        "weekday" => (t(TimeFn::Weekday), 1, 1),
        "dayofyear" => (t(TimeFn::DayOfYear), 1, 1),
        "week" => (t(TimeFn::Week), 1, 2),
        "yearweek" => (t(TimeFn::YearWeek), 1, 2),
        "weekofyear" => (t(TimeFn::WeekOfYear), 1, 1),
        "quarter" => (t(TimeFn::Quarter), 1, 1),
        "monthname" => (t(TimeFn::MonthName), 1, 1),
        "dayname" => (t(TimeFn::DayName), 1, 1),
        "last_day" => (t(TimeFn::LastDay), 1, 1),
        "datediff" => (t(TimeFn::DateDiff), 2, 2),
        "date_format" => (t(TimeFn::DateFormat), 2, 3),
        "str_to_date" => (t(TimeFn::StrToDate), 2, 2),
        "unix_timestamp" => (t(TimeFn::UnixTimestamp(0, false)), 0, 1),
        "from_unixtime" => (t(TimeFn::FromUnixtime), 1, 2),
        "makedate" => (t(TimeFn::MakeDate), 2, 2),
        "to_days" => (t(TimeFn::ToDays), 1, 1),
        "time" => (t(TimeFn::TimePart), 1, 1),
        "timediff" => (t(TimeFn::TimeDiff(6)), 2, 2),
        "addtime" => (t(TimeFn::AddTime { sub: false, fsp: 6 }), 2, 2),
        "subtime" => (t(TimeFn::AddTime { sub: true, fsp: 6 }), 2, 2),
        "time_to_sec" => (t(TimeFn::TimeToSec(0)), 1, 1),
        "sec_to_time" => (t(TimeFn::SecToTime(6)), 1, 1),
        "maketime" => (t(TimeFn::MakeTime(6)), 3, 3),
        "time_format" => (t(TimeFn::TimeFormat), 2, 2),
        "timestamp" => (t(TimeFn::Timestamp), 1, 2),
        "from_days" => (t(TimeFn::FromDays), 1, 1),
        // ADDDATE(d, n) / SUBDATE(d, n): n days (the INTERVAL form binds in syntax.rs).
        "adddate" => (
            t(TimeFn::AddInterval {
                unit: Unit::Day,
                sub: false,
            }),
            2,
            2,
        ),
        "subdate" => (
            t(TimeFn::AddInterval {
                unit: Unit::Day,
                sub: true,
            }),
            2,
            2,
        ),
        _ => return None,
    })
}

thread_local! {
    /// A warning that strict mode made the statement's error (`Env::warn` answered `Err`),
    /// raised deep in a conversion that returns a value: `expr.rs` takes it
    /// ([`take_raised`]) when the function returns, and fails the statement with it.
    static RAISED: std::cell::RefCell<Option<crate::error::SqlError>> =
        const { std::cell::RefCell::new(None) };
}

/// Every condition the functions raise goes through here: "Warning" or "Note", then
/// MySQL's code and text.
pub(crate) fn warn(env: &dyn Env, level: &'static str, code: u16, message: String) {
    let level = if level == "Note" {
        crate::expr::Level::Note
    } else {
        crate::expr::Level::Warning
    };
    if let Err(e) = env.warn(level, code, message) {
        RAISED.with(|r| {
            r.borrow_mut().get_or_insert(e);
        });
    }
}

/// The error a warning of the function just evaluated became, if any.
pub(crate) fn take_raised() -> crate::error::Result<()> {
    match RAISED.with(|r| r.borrow_mut().take()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// A warning about a value that did not convert whole: MySQL's 1292 with the value quoted.
pub(crate) fn truncated(env: &dyn Env, level: &'static str, kind: &str, value: &str) {
    warn(
        env,
        level,
        1292,
        format!("Truncated incorrect {kind} value: '{value}'"),
    );
}

/// The result of a function that is NULL when any argument is.
pub(crate) fn any_null(args: &[Value]) -> bool {
    args.iter().any(|v| matches!(v, Value::Null))
}
