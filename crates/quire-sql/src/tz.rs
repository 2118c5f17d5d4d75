//! Session time zones (`time_zone`, docs/sql.md "Time zones").
//!
//! A zone is a fixed offset from UTC: `SYSTEM` (Quire's system zone is UTC, whatever the
//! machine's: `@@system_time_zone`), `UTC`, or `+hh:mm` / `-hh:mm` as MariaDB reads one
//! (`str_to_offset` in sql/tztime.cc). Named zones with rules are 1298, as in a MariaDB
//! whose time zone tables are empty.
//!
//! Invariants:
//! 1. The engine holds TIMESTAMP values in UTC; every other value of the SQL layer (a row
//!    read, a literal, NOW()) is in the session's zone. A TIMESTAMP crosses between the two
//!    only through this module: [`RowZone::from_storage`] on every row read from a table,
//!    [`RowZone::to_storage`], [`pk_to_storage`] and [`key_to_storage`] on every row, key
//!    or bound handed to one, [`default_expr`] / [`default_to_storage`] for literal
//!    DEFAULTs, which the catalog keeps in UTC.
//! 2. A zero date ('0000-00-00 00:00:00', or one with a zero part) is the same in every
//!    zone: it is never shifted.
//! 3. With fixed offsets, local → UTC → local gives the value back exactly, so a row read
//!    and written back unchanged keeps its instant.

use quire_engine::row::{Column, ColumnType, DateTime, Value};

use crate::expr::{Expr, Func, SessionFn};
use crate::func::datetime::{from_unix_us, to_unix_us};
use crate::func::misc::MiscFn;
use crate::session::{Instance, SessVars};

/// MariaDB's range of offsets: -12:59 to +13:00 (tztime.cc, "prescribed by standard").
const OFFSET_MIN_S: i64 = -(12 * 3600 + 59 * 60);
const OFFSET_MAX_S: i64 = 13 * 3600;

/// A time zone: seconds east of UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Zone {
    offset_s: i32,
}

impl Zone {
    pub const UTC: Zone = Zone { offset_s: 0 };

    /// The zone a `time_zone` value names: SYSTEM (UTC), UTC, or an offset. `None`: 1298.
    pub fn parse(s: &str) -> Option<Zone> {
        if s.eq_ignore_ascii_case("system") || s.eq_ignore_ascii_case("utc") {
            return Some(Zone::UTC);
        }
        let offset_s = parse_offset(s)?;
        Some(Zone {
            offset_s: i32::try_from(offset_s).ok()?,
        })
    }

    /// The session's zone: its own `time_zone`, or the global one it has not set, as
    /// `@@time_zone` reads it (`run.rs`, `SessionFn::SysVar`).
    /// Read once per statement (`run::ExecEnv::new`): a session has its own value from
    /// connect on (`Session::new`), so the global is the fallback only.
    pub(crate) fn of_session(sv: &SessVars, inst: &Instance<'_>) -> Zone {
        let of = |v: &Value| match v {
            Value::Str(s) => Zone::parse(s).unwrap_or_default(),
            _ => Zone::UTC,
        };
        match sv.vars.get("time_zone") {
            Some(v) => of(v),
            None => crate::vars::global(inst, "time_zone").map_or(Zone::UTC, |v| of(&v)),
        }
    }

    pub fn offset_s(self) -> i64 {
        i64::from(self.offset_s)
    }

    pub fn is_utc(self) -> bool {
        self.offset_s == 0
    }

    /// A local time of this zone as UTC (invariant 2: zero dates unchanged; a value the
    /// shift would carry out of 0001..9999 is given back unchanged, for the caller's range
    /// check to refuse).
    pub fn to_utc(self, dt: DateTime) -> DateTime {
        self.shift(dt, -self.offset_s())
    }

    /// A UTC time as this zone's local time.
    pub fn from_utc(self, dt: DateTime) -> DateTime {
        self.shift(dt, self.offset_s())
    }

    fn shift(self, dt: DateTime, by_s: i64) -> DateTime {
        if by_s == 0 || dt.date.year == 0 || dt.date.month == 0 || dt.date.day == 0 {
            return dt;
        }
        let us = to_unix_us(&dt) + by_s * 1_000_000;
        // 0001-01-01 00:00:00 and 9999-12-31 23:59:59.999999 in microseconds since 1970.
        const MIN_US: i64 = -62_135_596_800_000_000;
        const MAX_US: i64 = 253_402_300_799_999_999;
        if !(MIN_US..=MAX_US).contains(&us) {
            return dt;
        }
        from_unix_us(us)
    }
}

/// `time_zone`'s value as MariaDB shows it back: `SYSTEM`, `UTC`, or `±hh:mm` (`+5:3` is
/// `+05:03`; a zero offset is `+00:00`). `None`: 1298.
pub fn canonical_name(s: &str) -> Option<String> {
    if s.eq_ignore_ascii_case("system") {
        return Some("SYSTEM".into());
    }
    if s.eq_ignore_ascii_case("utc") {
        return Some("UTC".into());
    }
    let off = parse_offset(s)?;
    let sign = if off >= 0 { '+' } else { '-' };
    let abs = off.abs();
    Some(format!("{sign}{:02}:{:02}", abs / 3600, abs % 3600 / 60))
}

/// An offset as MariaDB's `str_to_offset` reads it: at least 4 characters, a sign, hour
/// digits (any number, none included), `:`, at least one more character, minute digits to
/// the end; minutes at most 59 and the whole within -12:59..+13:00. In seconds.
pub fn parse_offset(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 4 {
        return None;
    }
    let negative = match b[0] {
        b'+' => false,
        b'-' => true,
        _ => return None,
    };
    let mut i = 1;
    // Saturating: a long run of digits is out of range, never a wrapped small number.
    let digits = |i: &mut usize| {
        let mut n: i64 = 0;
        while let Some(d) = b.get(*i).filter(|d| d.is_ascii_digit()) {
            n = n.saturating_mul(10).saturating_add(i64::from(d - b'0'));
            *i += 1;
        }
        n
    };
    let hours = digits(&mut i);
    if i + 1 >= b.len() || b[i] != b':' {
        return None;
    }
    i += 1;
    let minutes = digits(&mut i);
    if i != b.len() || minutes > 59 {
        return None;
    }
    let mut off = hours
        .saturating_mul(60)
        .saturating_add(minutes)
        .saturating_mul(60);
    if negative {
        off = -off;
    }
    (OFFSET_MIN_S..=OFFSET_MAX_S).contains(&off).then_some(off)
}

fn is_timestamp(c: &Column) -> bool {
    matches!(c.ty, ColumnType::Timestamp { .. })
}

/// A table's TIMESTAMP slots and the session's zone: converts its rows between the engine
/// and the session (invariant 1). Empty, and free, when the zone is UTC or the table has
/// no TIMESTAMP.
#[derive(Debug, Clone, Default)]
pub struct RowZone {
    slots: Vec<usize>,
    zone: Zone,
}

impl RowZone {
    pub fn new(columns: &[Column], zone: Zone) -> RowZone {
        let slots = if zone.is_utc() {
            Vec::new()
        } else {
            (0..columns.len())
                .filter(|&i| is_timestamp(&columns[i]))
                .collect()
        };
        RowZone { slots, zone }
    }

    /// Whether rows need converting at all.
    pub fn is_identity(&self) -> bool {
        self.slots.is_empty()
    }

    fn convert(&self, row: &mut [Value], f: impl Fn(DateTime) -> DateTime) {
        for &i in &self.slots {
            if let Some(Value::DateTime(dt)) = row.get(i) {
                let local = f(*dt);
                row[i] = Value::DateTime(local);
            }
        }
    }

    /// A row as the engine holds it → as the session sees it.
    pub fn from_storage(&self, row: &mut [Value]) {
        self.convert(row, |dt| self.zone.from_utc(dt));
    }

    /// A row of the session's values → as the engine holds it.
    pub fn to_storage(&self, row: &mut [Value]) {
        self.convert(row, |dt| self.zone.to_utc(dt));
    }

    /// `to_storage` on a copy.
    pub fn stored(&self, row: &[Value]) -> Vec<Value> {
        let mut out = row.to_vec();
        self.to_storage(&mut out);
        out
    }
}

/// A primary key taken from a row of the session's values (`exec::pk_of`) → as the
/// engine holds it.
pub fn pk_to_storage(def: &quire_engine::catalog::TableDef, zone: Zone, pk: &mut [Value]) {
    let cols: Vec<&Column> = def
        .primary_key
        .iter()
        .filter_map(|&c| def.columns.get(c))
        .collect();
    key_to_storage(&cols, zone, pk);
}

/// A TIMESTAMP's literal DEFAULT, as the catalog keeps it (`'2001-01-01 00:00:00'`, UTC,
/// as MariaDB keeps it in its record of defaults), read in the session's zone: wrapped in
/// CONVERT_TZ(…, '+00:00', @@time_zone), evaluated at each insert so that a plan made
/// under one zone and run under another is right. Any other default is `e` itself.
pub fn default_expr(col: &Column, e: Expr) -> Expr {
    if !is_timestamp(col) || !matches!(e, Expr::Lit(_)) {
        return e;
    }
    Expr::Func(
        Func::Misc(MiscFn::ConvertTz),
        vec![
            e,
            Expr::Lit(Value::Str("+00:00".into())),
            Expr::Session(SessionFn::SysVar {
                name: "time_zone".into(),
                global: false,
            }),
        ],
    )
}

/// A TIMESTAMP's literal DEFAULT, given in the session's zone, as the catalog keeps it.
pub fn default_to_storage(col: &Column, zone: Zone, v: Value) -> Value {
    match v {
        Value::DateTime(dt) if is_timestamp(col) => Value::DateTime(zone.to_utc(dt)),
        v => v,
    }
}

/// Columns as SHOW CREATE TABLE, DESCRIBE and information_schema show them to the session:
/// TIMESTAMPs' literal DEFAULTs in its zone.
pub fn shown_columns(columns: &mut [Column], zone: Zone) {
    if zone.is_utc() {
        return;
    }
    for c in columns.iter_mut().filter(|c| is_timestamp(c)) {
        let Some(text) = &c.default else { continue };
        let Some(dt) = text
            .strip_prefix('\'')
            .and_then(|t| t.strip_suffix('\''))
            .and_then(crate::types::parse_datetime)
        else {
            continue;
        };
        let local = Value::DateTime(zone.from_utc(dt));
        c.default = Some(crate::ddl::column_literal_sql(&local, c));
    }
}

/// Key values (of `columns`, in the key's order) → as the engine holds them.
pub fn key_to_storage(columns: &[&Column], zone: Zone, key: &mut [Value]) {
    if zone.is_utc() {
        return;
    }
    for (c, v) in columns.iter().zip(key.iter_mut()) {
        if let (true, Value::DateTime(dt)) = (is_timestamp(c), &*v) {
            *v = Value::DateTime(zone.to_utc(*dt));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_read_as_mariadb_reads_them() {
        assert_eq!(parse_offset("+00:00"), Some(0));
        assert_eq!(parse_offset("-0:00"), Some(0));
        assert_eq!(parse_offset("+1:00"), Some(3600));
        assert_eq!(parse_offset("+5:3"), Some(5 * 3600 + 3 * 60));
        assert_eq!(parse_offset("+005:30"), Some(19_800));
        assert_eq!(parse_offset("+:30"), Some(1800));
        assert_eq!(parse_offset("+1:030"), Some(5400));
        assert_eq!(parse_offset("-0:30"), Some(-1800));
        assert_eq!(parse_offset("-12:59"), Some(-46_740));
        assert_eq!(parse_offset("+13:00"), Some(46_800));
        for bad in [
            "+15:00",
            "+14:00",
            "+13:01",
            "-13:00",
            "abc",
            "+00:60",
            "+05:30:00",
            "+0530",
            " +05:30",
            "+05:30 ",
            "+ 5:30",
            "+1:",
            "+1",
            "1:00",
            "",
            "+99999999999999999999999:00",
        ] {
            assert_eq!(parse_offset(bad), None, "{bad}");
        }
    }

    #[test]
    fn names_read_back_as_mariadb_shows_them() {
        assert_eq!(canonical_name("system").as_deref(), Some("SYSTEM"));
        assert_eq!(canonical_name("+5:3").as_deref(), Some("+05:03"));
        assert_eq!(canonical_name("-00:00").as_deref(), Some("+00:00"));
        assert_eq!(canonical_name("-0:30").as_deref(), Some("-00:30"));
        assert_eq!(canonical_name("+1:030").as_deref(), Some("+01:30"));
        assert_eq!(canonical_name("Europe/Berlin"), None);
    }

    #[test]
    fn local_times_round_trip_through_utc_and_zero_dates_stay() {
        let z = Zone::parse("+05:30").unwrap_or_default();
        let local = from_unix_us(1_710_052_200_000_000 + 19_800_000_000);
        let utc = z.to_utc(local);
        assert_eq!(to_unix_us(&utc), 1_710_052_200_000_000);
        assert_eq!(z.from_utc(utc), local);
        let zero = DateTime::new(quire_engine::row::Date::new(0, 0, 0), 0, 0, 0, 0);
        assert_eq!(z.to_utc(zero), zero);
        assert_eq!(z.from_utc(zero), zero);
    }
}
