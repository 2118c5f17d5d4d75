//! Binding of the functions `bind.rs` does not know: calls by name, and the syntaxes
//! sqlparser gives their own AST nodes (`SUBSTRING(s FROM p FOR n)`, `TRIM(LEADING x FROM
//! s)`, `POSITION(x IN y)`, `CAST`, `CONVERT`, `EXTRACT`, `DATE '…'`, `REGEXP`, `d +
//! INTERVAL n unit`, the bit operators).

use quire_engine::row::{Collation, Column, Value};
use sqlparser::ast::{self as sql, BinaryOperator, DataType, DateTimeField, UnaryOperator};

use super::{by_name, cast, json::JsonFn, CastTo, MathFn, StrFn, TimeFn, TrimSide, Unit};
use crate::bind::Binder;
use crate::error::{Result, SqlError};
use crate::expr::{BinOp, Expr, Func};

/// Whether `e`'s value is JSON text: a JSON function's result or a JSON column.
fn is_json_expr(e: &Expr, cols: &[Column]) -> bool {
    match e {
        Expr::Func(Func::Json(f), _) => f.returns_json(),
        Expr::Column(i) => cols.get(*i).is_some_and(|c| c.json),
        _ => false,
    }
}

/// Whether `e` (written as `sql`) is a truth value, which MariaDB's JSON functions take
/// as `true` / `false`: a comparison, a logical operator, IN, LIKE, IS [NOT] NULL,
/// EXISTS, or TRUE / FALSE written as such.
fn is_truth_value(e: &Expr, sql: Option<&sql::Expr>) -> bool {
    if let Some(sql::Expr::Value(v)) = sql {
        if matches!(v.value, sql::Value::Boolean(_)) {
            return true;
        }
    }
    matches!(
        e,
        Expr::Cmp(..)
            | Expr::RowCmp { .. }
            | Expr::Not(_)
            | Expr::IsNull(..)
            | Expr::Between { .. }
            | Expr::InList { .. }
            | Expr::Like { .. }
            | Expr::Binary(BinOp::And | BinOp::Or | BinOp::Xor, ..)
            | Expr::Sub(
                crate::subquery::SubKind::In { .. }
                    | crate::subquery::SubKind::RowIn { .. }
                    | crate::subquery::SubKind::Exists
                    | crate::subquery::SubKind::Quantified { .. },
                _
            )
    )
}

fn parse_err(near: &str) -> SqlError {
    SqlError::Parse {
        near: near.into(),
        line: 1,
    }
}

/// An INTERVAL's unit. Compound units arrive as parse.rs rewrote them: `DAY TO HOUR`,
/// and with microseconds as a fractional precision of 6 (`DAY TO SECOND(6)`,
/// `SECOND(0, 6)`).
fn interval_unit(iv: &sql::Interval) -> Result<Unit> {
    use DateTimeField as F;
    let text = iv.to_string();
    let micro = iv.fractional_seconds_precision == Some(6);
    let Some(last) = &iv.last_field else {
        if micro && matches!(iv.leading_field, Some(F::Second)) {
            return Ok(Unit::SecondMicrosecond);
        }
        return unit_of(iv.leading_field.as_ref(), &text);
    };
    let first = unit_of(iv.leading_field.as_ref(), &text)?;
    let last = unit_of(Some(last), &text)?;
    Ok(match (first, last, micro) {
        (Unit::Day, Unit::Hour, false) => Unit::DayHour,
        (Unit::Day, Unit::Minute, false) => Unit::DayMinute,
        (Unit::Day, Unit::Second, false) => Unit::DaySecond,
        (Unit::Day, Unit::Second, true) => Unit::DayMicrosecond,
        (Unit::Hour, Unit::Minute, false) => Unit::HourMinute,
        (Unit::Hour, Unit::Second, false) => Unit::HourSecond,
        (Unit::Hour, Unit::Second, true) => Unit::HourMicrosecond,
        (Unit::Minute, Unit::Second, false) => Unit::MinuteSecond,
        (Unit::Minute, Unit::Second, true) => Unit::MinuteMicrosecond,
        (Unit::Year, Unit::Month, false) => Unit::YearMonth,
        _ => return Err(parse_err(&text)),
    })
}

/// A single INTERVAL unit.
fn unit_of(field: Option<&DateTimeField>, text: &str) -> Result<Unit> {
    use DateTimeField as F;
    Ok(match field {
        Some(F::Microsecond | F::Microseconds) => Unit::Microsecond,
        Some(F::Second | F::Seconds) => Unit::Second,
        Some(F::Minute | F::Minutes) => Unit::Minute,
        Some(F::Hour | F::Hours) => Unit::Hour,
        Some(F::Day | F::Days) => Unit::Day,
        Some(F::Week(None) | F::Weeks) => Unit::Week,
        Some(F::Month | F::Months) => Unit::Month,
        Some(F::Quarter) => Unit::Quarter,
        Some(F::Year | F::Years) => Unit::Year,
        Some(F::Custom(i)) => unit_named(&i.value).ok_or_else(|| parse_err(text))?,
        _ => return Err(parse_err(text)),
    })
}

/// A unit by its SQL name (TIMESTAMPDIFF's first argument, compound INTERVAL units).
fn unit_named(name: &str) -> Option<Unit> {
    Some(match name.to_ascii_uppercase().as_str() {
        "MICROSECOND" | "FRAC_SECOND" => Unit::Microsecond,
        "SECOND" => Unit::Second,
        "MINUTE" => Unit::Minute,
        "HOUR" => Unit::Hour,
        "DAY" => Unit::Day,
        "WEEK" => Unit::Week,
        "MONTH" => Unit::Month,
        "QUARTER" => Unit::Quarter,
        "YEAR" => Unit::Year,
        "SECOND_MICROSECOND" => Unit::SecondMicrosecond,
        "MINUTE_MICROSECOND" => Unit::MinuteMicrosecond,
        "MINUTE_SECOND" => Unit::MinuteSecond,
        "HOUR_MICROSECOND" => Unit::HourMicrosecond,
        "HOUR_SECOND" => Unit::HourSecond,
        "HOUR_MINUTE" => Unit::HourMinute,
        "DAY_MICROSECOND" => Unit::DayMicrosecond,
        "DAY_SECOND" => Unit::DaySecond,
        "DAY_MINUTE" => Unit::DayMinute,
        "DAY_HOUR" => Unit::DayHour,
        "YEAR_MONTH" => Unit::YearMonth,
        _ => return None,
    })
}

/// The fractional-seconds precision argument of NOW(fsp) and friends.
fn fsp_arg(args: &[&sql::Expr], name: &str) -> Result<u8> {
    match args {
        [] => Ok(0),
        [sql::Expr::Value(v)] => match &v.value {
            sql::Value::Number(n, _) => match n.parse::<u64>() {
                Ok(p) if p <= 6 => Ok(p as u8),
                Ok(_) => Err(SqlError::TooBigPrecision {
                    what: name.to_ascii_lowercase(),
                    max: 6,
                }),
                Err(_) => Err(parse_err(n)),
            },
            other => Err(parse_err(&other.to_string())),
        },
        [other, ..] => Err(parse_err(&other.to_string())),
    }
}

fn length_of(l: &Option<sql::CharacterLength>) -> Result<Option<u32>> {
    match l {
        None => Ok(None),
        Some(sql::CharacterLength::IntegerLength { length, .. }) => u32::try_from(*length)
            .map(Some)
            .map_err(|_| SqlError::Unsupported(format!("CHAR({length})"))),
        Some(sql::CharacterLength::Max) => Err(SqlError::Unsupported("CHAR(MAX)".into())),
    }
}

/// The target of CAST / CONVERT; `arg` is the cast expression's text (1426's message).
fn cast_target(t: &DataType, arg: &str) -> Result<CastTo> {
    use sql::ExactNumberInfo as N;
    Ok(match t {
        DataType::Signed
        | DataType::SignedInteger
        | DataType::Int(None)
        | DataType::Integer(None) => CastTo::Signed,
        DataType::Unsigned | DataType::UnsignedInteger => CastTo::Unsigned,
        DataType::Decimal(info) | DataType::Dec(info) | DataType::Numeric(info) => {
            let (p, s) = match info {
                N::None => (10, 0),
                N::Precision(p) => (*p, 0),
                N::PrecisionAndScale(p, s) => (
                    *p,
                    u64::try_from(*s).map_err(|_| parse_err(&s.to_string()))?,
                ),
            };
            let (precision, scale) = cast::check_decimal(p, s, arg)?;
            CastTo::Decimal { precision, scale }
        }
        DataType::Double(sql::ExactNumberInfo::None) | DataType::DoublePrecision => CastTo::Double,
        // MariaDB has no CAST AS REAL.
        DataType::Real => return Err(parse_err("REAL)")),
        DataType::Float(sql::ExactNumberInfo::None) => CastTo::Float,
        DataType::Char(l) | DataType::Character(l) | DataType::Varchar(l) => {
            CastTo::Char(length_of(l)?)
        }
        DataType::Binary(n) => CastTo::Binary(match n {
            Some(n) => {
                Some(u32::try_from(*n).map_err(|_| SqlError::Unsupported(format!("BINARY({n})")))?)
            }
            None => None,
        }),
        DataType::Date => CastTo::Date,
        DataType::Datetime(fsp) => {
            let fsp = fsp.unwrap_or(0);
            if fsp > 6 {
                return Err(SqlError::TooBigPrecision {
                    what: arg.into(),
                    max: 6,
                });
            }
            CastTo::DateTime(fsp as u8)
        }
        DataType::Custom(n, _) if n.to_string().eq_ignore_ascii_case("nchar") => CastTo::Char(None),
        DataType::Time(fsp, _) => {
            let fsp = fsp.unwrap_or(0);
            if fsp > 6 {
                return Err(SqlError::TooBigPrecision {
                    what: arg.into(),
                    max: 6,
                });
            }
            CastTo::Time(fsp as u8)
        }
        other => return Err(SqlError::Unsupported(format!("CAST AS {other}"))),
    })
}

/// A `DATE '…'` / `TIMESTAMP '…'` literal (MariaDB's 1525 for a value that is no date).
fn typed_literal(t: &DataType, s: &str) -> Result<Value> {
    let bad = |kind: &'static str| SqlError::IncorrectLiteral {
        kind,
        value: s.into(),
    };
    let parsed = crate::types::parse_datetime(s);
    Ok(match t {
        DataType::Date => match parsed {
            Some(dt) if !s.trim().contains([' ', 'T']) => Value::Date(dt.date),
            _ => return Err(bad("DATE")),
        },
        DataType::Timestamp(..) | DataType::Datetime(_) => match parsed {
            Some(dt) => Value::DateTime(dt),
            None => return Err(bad("DATETIME")),
        },
        // A TIME literal must be a clean time ('10:00', '1 10:00:00.5', '-10:00').
        DataType::Time(..) => match super::time::parse_str(s) {
            super::time::Read::Time(t, super::time::Status::Clean) => Value::Time(t),
            _ => return Err(bad("TIME")),
        },
        other => return Err(SqlError::Unsupported(format!("{other} literals"))),
    })
}

/// Whether `f` reads its arguments as strings (a DATETIME(n) argument is then its text with
/// n fractional digits).
fn takes_text(f: Func) -> bool {
    match f {
        Func::Concat
        | Func::ConcatWs
        | Func::Length
        | Func::CharLength
        | Func::Upper
        | Func::Lower
        | Func::Repeat => true,
        Func::Str(s, _) => !matches!(
            s,
            StrFn::Elt | StrFn::Field | StrFn::Char | StrFn::CharUsing
        ),
        Func::Cast(CastTo::Char(_) | CastTo::Binary(_) | CastTo::Utf8mb4) => true,
        _ => false,
    }
}

impl Binder<'_> {
    /// Wraps the DATETIME(n > 0) and TIME(n > 0) arguments of a string function in their
    /// text form, and BIT arguments in their bytes.
    pub(crate) fn text_args(&self, f: Func, args: Vec<Expr>) -> Vec<Expr> {
        if !takes_text(f) {
            return args;
        }
        args.into_iter()
            .map(|a| {
                let t = super::types::infer(&a, self.cols(), &[]);
                if matches!(
                    t.ft,
                    crate::meta::FieldType::DateTime | crate::meta::FieldType::Time
                ) && (1..=6).contains(&t.dec)
                {
                    Expr::Func(Func::Time(TimeFn::Text(t.dec)), vec![a])
                } else if t.ft == crate::meta::FieldType::Bit
                    && !matches!(f, Func::Str(StrFn::Hex, _))
                {
                    // A BIT is its bytes to a string function (CONCAT(b), LENGTH(b)).
                    let m = t.len.clamp(1, 64) as u8;
                    Expr::Func(Func::Math(MathFn::BitBytes(m)), vec![a])
                } else {
                    a
                }
            })
            .collect()
    }

    fn cols(&self) -> &[Column] {
        self.scope.map_or(&[], |s| s.columns.as_slice())
    }

    fn bind_all(&mut self, args: &[&sql::Expr]) -> Result<Vec<Expr>> {
        args.iter().map(|a| self.bind(a)).collect()
    }

    /// A string function with the collation its arguments compare in, derived as for
    /// NULLIF or GREATEST (two columns of different collations: utf8mb4_bin; 1267 for two
    /// different explicit ones).
    fn str_call(&self, f: StrFn, args: Vec<Expr>) -> Result<Expr> {
        let coll = self.args_collation(&args, &format!("{f:?}").to_lowercase())?;
        Ok(Expr::Func(
            Func::Str(f, coll),
            self.text_args(Func::Str(f, coll), args),
        ))
    }

    /// A call of a function `expr.rs` does not know, its arguments still unbound.
    /// LENGTH, OCTET_LENGTH, BIT_LENGTH and HEX of a column of a one-byte character set
    /// (latin1, ascii) count and show its bytes in that set, as MariaDB does ('é' is one
    /// byte, E9); `None` for anything else. Only a bare column is looked at, so binding it
    /// twice is harmless.
    pub(crate) fn of_column_bytes(&mut self, name: &str, arg: &sql::Expr) -> Result<Option<Expr>> {
        if !matches!(
            arg,
            sql::Expr::Identifier(_) | sql::Expr::CompoundIdentifier(_)
        ) {
            return Ok(None);
        }
        let a = self.bind(arg)?;
        let (c, k) = crate::bind::derive_collation(&a, self.columns(), self.conn.coll);
        let cs = c.charset();
        if k == crate::bind::Coercibility::Numeric || cs.max_bytes() != 1 {
            return Ok(None);
        }
        let bytes = Expr::Func(Func::Cast(CastTo::Bytes(cs)), vec![a]);
        let f = match name {
            "hex" => Func::Str(StrFn::Hex, Collation::Utf8mb4GeneralCi),
            "bit_length" => Func::Str(StrFn::BitLength, Collation::Utf8mb4GeneralCi),
            _ => Func::Length,
        };
        Ok(Some(Expr::Func(f, vec![bytes])))
    }

    pub(crate) fn bind_function(&mut self, name: &str, args: &[&sql::Expr]) -> Result<Expr> {
        let n = args.len();
        if let ([arg], "bit_length" | "hex") = (args, name) {
            if let Some(e) = self.of_column_bytes(name, arg)? {
                return Ok(e);
            }
        }
        let interval = |e: &sql::Expr| match e {
            sql::Expr::Interval(iv) => Some(iv.clone()),
            _ => None,
        };
        match name {
            "now" | "current_timestamp" | "localtime" | "localtimestamp" => {
                return Ok(Expr::Func(
                    Func::Time(TimeFn::Now(fsp_arg(args, name)?)),
                    vec![],
                ))
            }
            "sysdate" => {
                return Ok(Expr::Func(
                    Func::Time(TimeFn::SysDate(fsp_arg(args, name)?)),
                    vec![],
                ))
            }
            "utc_timestamp" => {
                return Ok(Expr::Func(
                    Func::Time(TimeFn::UtcTimestamp(fsp_arg(args, name)?)),
                    vec![],
                ))
            }
            "curtime" | "current_time" => {
                return Ok(Expr::Func(
                    Func::Time(TimeFn::CurTime(fsp_arg(args, name)?)),
                    vec![],
                ))
            }
            "utc_time" => {
                return Ok(Expr::Func(
                    Func::Time(TimeFn::UtcTime(fsp_arg(args, name)?)),
                    vec![],
                ))
            }
            "date_add" | "date_sub" | "adddate" | "subdate" if n == 2 => {
                let sub = name == "date_sub" || name == "subdate";
                if let Some(iv) = interval(args[1]) {
                    let unit = interval_unit(&iv)?;
                    let d = self.bind(args[0])?;
                    let v = self.bind(&iv.value)?;
                    return Ok(Expr::Func(
                        Func::Time(TimeFn::AddInterval { unit, sub }),
                        vec![d, v],
                    ));
                }
                if name.starts_with("date_") {
                    return Err(parse_err(&args[1].to_string()));
                }
            }
            "timestampdiff" | "timestampadd" if n == 3 => {
                let unit = match args[0] {
                    sql::Expr::Identifier(i) => unit_named(&i.value),
                    _ => None,
                }
                .ok_or_else(|| parse_err(&args[0].to_string()))?;
                let rest = self.bind_all(&args[1..])?;
                let f = if name == "timestampdiff" {
                    TimeFn::TimestampDiff(unit)
                } else {
                    TimeFn::TimestampAdd(unit)
                };
                return Ok(Expr::Func(Func::Time(f), rest));
            }
            "mod" if n == 2 => {
                let (a, b) = (self.bind(args[0])?, self.bind(args[1])?);
                return Ok(Expr::Binary(BinOp::Mod, Box::new(a), Box::new(b)));
            }
            _ => {}
        }
        let Some((func, min, max)) = by_name(name) else {
            return Err(SqlError::NoSuchFunction(name.into()));
        };
        if n < min || n > max {
            // Keywords as function names: a wrong count is a syntax error in MariaDB.
            if matches!(name, "left" | "right" | "insert" | "replace") {
                return Err(parse_err(")"));
            }
            return Err(SqlError::WrongParamCount(name.to_uppercase()));
        }
        let mut bound = self.bind_all(args)?;
        if func == Func::Math(MathFn::BitCount) {
            // BIT_COUNT(b'0111') counts the literal's bits (a bit literal is a number here).
            if let [sql::Expr::Value(v)] = args {
                if let sql::Value::SingleQuotedByteStringLiteral(b) = &v.value {
                    let n = u64::from_str_radix(b, 2).unwrap_or(if b.is_empty() {
                        0
                    } else {
                        u64::MAX
                    });
                    bound = vec![Expr::Lit(Value::UInt(n))];
                }
            }
        }
        Ok(match func {
            // FIND_IN_SET of a string in a SET column is the string's member number in the
            // column's definition when the value has it, as MariaDB answers it.
            Func::Str(StrFn::FindInSet, _) => {
                let set_col = match (bound.first(), bound.get(1)) {
                    (Some(Expr::Lit(Value::Str(m))), Some(Expr::Column(c)))
                        if self.cols().get(*c).is_some_and(|c| c.ty.is_set()) =>
                    {
                        Some((m.clone(), *c))
                    }
                    _ => None,
                };
                match set_col {
                    Some((m, c)) => {
                        let index = self
                            .cols()
                            .get(c)
                            .and_then(|col| col.member_index(&m))
                            .unwrap_or(0);
                        let present = Expr::Cmp(
                            BinOp::Gt,
                            Box::new(self.str_call(StrFn::FindInSet, bound)?),
                            Box::new(Expr::Lit(Value::Int(0))),
                            quire_engine::row::Collation::Utf8mb4Bin,
                        );
                        Expr::Func(
                            Func::If,
                            vec![
                                Expr::IsNull(Box::new(Expr::Column(c)), false),
                                Expr::Lit(Value::Null),
                                Expr::Func(
                                    Func::If,
                                    vec![
                                        present,
                                        Expr::Lit(Value::Int(i64::from(index))),
                                        Expr::Lit(Value::Int(0)),
                                    ],
                                ),
                            ],
                        )
                    }
                    None => self.str_call(StrFn::FindInSet, bound)?,
                }
            }
            Func::Str(f, _) => {
                if name == "instr" {
                    bound.swap(0, 1);
                }
                self.str_call(f, bound)?
            }
            // The result's fractional digits, from its type: what a clipped result is cut to.
            Func::Time(
                f @ (TimeFn::TimeDiff(_)
                | TimeFn::SecToTime(_)
                | TimeFn::MakeTime(_)
                | TimeFn::AddTime { .. }),
            ) => {
                let e = Expr::Func(func, bound);
                let fsp = super::types::infer(&e, self.cols(), &[]).dec.min(6);
                let Expr::Func(_, bound) = e else {
                    return Err(SqlError::Unsupported(name.into()));
                };
                let f = match f {
                    TimeFn::TimeDiff(_) => TimeFn::TimeDiff(fsp),
                    TimeFn::SecToTime(_) => TimeFn::SecToTime(fsp),
                    TimeFn::MakeTime(_) => TimeFn::MakeTime(fsp),
                    TimeFn::AddTime { sub, .. } => TimeFn::AddTime { sub, fsp },
                    other => other,
                };
                Expr::Func(Func::Time(f), bound)
            }
            Func::Time(TimeFn::TimeToSec(_)) => {
                let t = super::types::infer(&bound[0], self.cols(), &[]);
                let dec = super::types::time_dec(&bound[0], t);
                Expr::Func(Func::Time(TimeFn::TimeToSec(dec)), bound)
            }
            Func::Time(TimeFn::UnixTimestamp(..)) if !bound.is_empty() => {
                let t = super::types::infer(&bound[0], self.cols(), &[]);
                let dec = super::types::temporal_dec(&bound[0], t);
                let ts = matches!(bound[0], Expr::Column(_))
                    && t.ft == crate::meta::FieldType::Timestamp;
                Expr::Func(Func::Time(TimeFn::UnixTimestamp(dec, ts)), bound)
            }
            Func::Json(JsonFn::Search(_)) => {
                // The pattern matches in its own collation.
                let coll = crate::bind::derive_collation(&bound[2], self.cols(), self.conn.coll).0;
                Expr::Func(Func::Json(JsonFn::Search(coll)), bound)
            }
            Func::Json(
                f @ (JsonFn::Object(_)
                | JsonFn::Array(_)
                | JsonFn::Modify(..)
                | JsonFn::ArrayAppend(_)
                | JsonFn::ArrayInsert(_)),
            ) => {
                let pairs = match f {
                    JsonFn::Object(_) => bound.len() % 2 == 0,
                    JsonFn::Array(_) => true,
                    // The document, then (path, value) pairs.
                    _ => bound.len() % 2 == 1,
                };
                // A TIME(n) or DATETIME(n) goes in as its text with n fractional digits.
                let bound: Vec<Expr> = bound
                    .into_iter()
                    .map(|a| {
                        let t = super::types::infer(&a, self.cols(), &[]);
                        if matches!(
                            t.ft,
                            crate::meta::FieldType::DateTime | crate::meta::FieldType::Time
                        ) && (1..=6).contains(&t.dec)
                        {
                            Expr::Func(Func::Time(TimeFn::Text(t.dec)), vec![a])
                        } else {
                            a
                        }
                    })
                    .collect();
                if !pairs {
                    return Err(SqlError::WrongParamCount(name.to_uppercase()));
                }
                // Arguments that are JSON already go in as JSON, truth values as
                // true / false, the rest as strings and numbers.
                let mut kinds = super::json::ArgKinds::default();
                for (i, a) in bound.iter().enumerate().take(64) {
                    if is_json_expr(a, self.cols()) {
                        kinds.json |= 1 << i;
                    }
                    if is_truth_value(a, args.get(i).copied()) {
                        kinds.boolean |= 1 << i;
                    }
                }
                Expr::Func(Func::Json(f.with_kinds(kinds)), bound)
            }
            other => Expr::Func(other, bound),
        })
    }

    /// `a op b` where `op` is a bit operator, or `+`/`-` with an INTERVAL operand; `None`
    /// for the operators `bind.rs` binds.
    pub(crate) fn bind_operator(
        &mut self,
        left: &sql::Expr,
        op: &BinaryOperator,
        right: &sql::Expr,
    ) -> Result<Option<Expr>> {
        let bit = match op {
            BinaryOperator::BitwiseAnd => Some(MathFn::BitAnd),
            BinaryOperator::BitwiseOr => Some(MathFn::BitOr),
            BinaryOperator::BitwiseXor | BinaryOperator::PGBitwiseXor => Some(MathFn::BitXor),
            BinaryOperator::PGBitwiseShiftLeft => Some(MathFn::Shl),
            BinaryOperator::PGBitwiseShiftRight => Some(MathFn::Shr),
            _ => None,
        };
        // MySQL's `c -> path` and `c ->> path` (MariaDB 10.11 has neither): JSON_EXTRACT,
        // and JSON_UNQUOTE of it, as MySQL defines them.
        if matches!(op, BinaryOperator::Arrow | BinaryOperator::LongArrow) {
            let (a, b) = (self.bind(left)?, self.bind(right)?);
            let extract = Expr::Func(Func::Json(JsonFn::Extract), vec![a, b]);
            return Ok(Some(if matches!(op, BinaryOperator::LongArrow) {
                Expr::Func(Func::Json(JsonFn::Unquote), vec![extract])
            } else {
                extract
            }));
        }
        // A hexadecimal or bit literal is a number in arithmetic (`0xa + 1` is 11).
        let arith = matches!(
            op,
            BinaryOperator::Plus
                | BinaryOperator::Minus
                | BinaryOperator::Multiply
                | BinaryOperator::Divide
                | BinaryOperator::Modulo
                | BinaryOperator::MyIntegerDivide
        );
        let hex = |e: &sql::Expr| match e {
            sql::Expr::Value(v) => match &v.value {
                sql::Value::HexStringLiteral(h) => {
                    Some(u64::from_str_radix(h, 16).unwrap_or(u64::MAX))
                }
                // A bit literal likewise (`b'0101' + 0` is 5).
                sql::Value::SingleQuotedByteStringLiteral(b) if !b.is_empty() => {
                    Some(u64::from_str_radix(b, 2).unwrap_or(u64::MAX))
                }
                sql::Value::SingleQuotedByteStringLiteral(_) => Some(0),
                _ => None,
            },
            _ => None,
        };
        if let Some(f) = bit {
            // An ENUM or SET is its number here (`s | 4` adds a member); a hexadecimal or
            // bit literal too (`b'0101' | 0` is 5).
            let side = |b: &mut Self, e: &sql::Expr| match hex(e) {
                Some(n) => Ok(Expr::Lit(Value::UInt(n))),
                None => b.bind(e),
            };
            let (a, b) = (side(self, left)?, side(self, right)?);
            let cols = self.columns();
            let (a, b) = (
                crate::bind::enum_number(a, cols),
                crate::bind::enum_number(b, cols),
            );
            return Ok(Some(Expr::Func(Func::Math(f), vec![a, b])));
        }
        if arith && (hex(left).is_some() || hex(right).is_some()) {
            let side = |b: &mut Self, e: &sql::Expr| match hex(e) {
                Some(n) => Ok(Expr::Lit(Value::UInt(n))),
                None => b.bind(e),
            };
            let (a, b) = (side(self, left)?, side(self, right)?);
            let op = match op {
                BinaryOperator::Plus => BinOp::Add,
                BinaryOperator::Minus => BinOp::Sub,
                BinaryOperator::Multiply => BinOp::Mul,
                BinaryOperator::Divide => BinOp::Div,
                BinaryOperator::Modulo => BinOp::Mod,
                _ => BinOp::IntDiv,
            };
            return Ok(Some(Expr::Binary(op, Box::new(a), Box::new(b))));
        }
        if matches!(op, BinaryOperator::Regexp) {
            let (a, b) = (self.bind(left)?, self.bind(right)?);
            return Ok(Some(self.str_call(StrFn::Regexp, vec![a, b])?));
        }
        let sub = match op {
            BinaryOperator::Plus => false,
            BinaryOperator::Minus => true,
            _ => return Ok(None),
        };
        let (date, iv) = match (left, right) {
            (d, sql::Expr::Interval(iv)) => (d, iv),
            (sql::Expr::Interval(iv), d) if !sub => (d, iv),
            (sql::Expr::Interval(_), _) => return Err(parse_err(&right.to_string())),
            _ => return Ok(None),
        };
        let unit = interval_unit(iv)?;
        let d = self.bind(date)?;
        let v = self.bind(&iv.value)?;
        Ok(Some(Expr::Func(
            Func::Time(TimeFn::AddInterval { unit, sub }),
            vec![d, v],
        )))
    }

    /// The expression kinds of the function syntaxes; `None` for anything else.
    pub(crate) fn bind_syntax(&mut self, e: &sql::Expr) -> Result<Option<Expr>> {
        use sql::Expr as E;
        Ok(Some(match e {
            E::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let Some(from) = substring_from else {
                    return Err(parse_err(&e.to_string()));
                };
                let mut args = vec![self.bind(expr)?, self.bind(from)?];
                if let Some(f) = substring_for {
                    args.push(self.bind(f)?);
                }
                self.str_call(StrFn::Substring, args)?
            }
            E::Trim {
                trim_where,
                trim_what,
                expr,
                trim_characters,
            } => {
                if trim_characters.is_some() {
                    return Err(parse_err(&e.to_string()));
                }
                let side = match trim_where {
                    None | Some(sql::TrimWhereField::Both) => TrimSide::Both,
                    Some(sql::TrimWhereField::Leading) => TrimSide::Leading,
                    Some(sql::TrimWhereField::Trailing) => TrimSide::Trailing,
                };
                let mut args = vec![self.bind(expr)?];
                if let Some(w) = trim_what {
                    args.push(self.bind(w)?);
                }
                self.str_call(StrFn::Trim(side), args)?
            }
            E::Position { expr, r#in } => {
                let args = vec![self.bind(expr)?, self.bind(r#in)?];
                self.str_call(StrFn::Locate, args)?
            }
            E::Cast {
                kind: sql::CastKind::Cast,
                expr,
                data_type,
                format: None,
            } => {
                let to = cast_target(data_type, &expr.to_string())?;
                let mut arg = self.bind(expr)?;
                if matches!(
                    to,
                    CastTo::Signed | CastTo::Unsigned | CastTo::Decimal { .. } | CastTo::Double
                ) {
                    // An ENUM as a number is its member index.
                    arg = crate::bind::enum_number(arg, self.columns());
                }
                let mut args = self.text_args(Func::Cast(to), vec![arg]);
                if matches!(to, CastTo::Decimal { .. }) {
                    // The name 1264 gives the value: the expression as written.
                    args.push(Expr::Lit(Value::Str(e.to_string())));
                }
                Expr::Func(Func::Cast(to), args)
            }
            E::Convert {
                is_try: false,
                expr,
                data_type,
                charset,
                target_before_value: false,
                styles,
            } if styles.is_empty() => {
                let to = match (data_type, charset) {
                    (Some(t), None) => cast_target(t, &expr.to_string())?,
                    (None, Some(cs)) => {
                        let name = cs.to_string().to_ascii_lowercase();
                        match name.as_str() {
                            "utf8mb4" => CastTo::Utf8mb4,
                            "binary" => CastTo::Binary(None),
                            other => {
                                return Err(SqlError::Unsupported(format!(
                                    "CONVERT(… USING {other})"
                                )))
                            }
                        }
                    }
                    _ => return Err(parse_err(&e.to_string())),
                };
                let arg = vec![self.bind(expr)?];
                Expr::Func(Func::Cast(to), self.text_args(Func::Cast(to), arg))
            }
            E::Extract { field, expr, .. } => {
                let unit = unit_of(Some(field), &e.to_string())?;
                Expr::Func(Func::Time(TimeFn::Extract(unit)), vec![self.bind(expr)?])
            }
            E::TypedString(ts) => {
                let s = match &ts.value.value {
                    sql::Value::SingleQuotedString(s) | sql::Value::DoubleQuotedString(s) => s,
                    other => return Err(parse_err(&other.to_string())),
                };
                Expr::Lit(typed_literal(&ts.data_type, s)?)
            }
            E::RLike {
                negated,
                expr,
                pattern,
                ..
            } => {
                let args = vec![self.bind(expr)?, self.bind(pattern)?];
                let m = self.str_call(StrFn::Regexp, args)?;
                if *negated {
                    Expr::Not(Box::new(m))
                } else {
                    m
                }
            }
            E::UnaryOp {
                op: UnaryOperator::BitwiseNot,
                expr,
            } => Expr::Func(Func::Math(MathFn::BitNot), vec![self.bind(expr)?]),
            E::Interval(_) => return Err(parse_err(&e.to_string())),
            // Character set introducers: `_binary 'x'` is bytes, `_utf8mb4 'x'` text.
            E::Prefixed { prefix, value } => {
                let cs = prefix.value.to_ascii_lowercase();
                match (cs.as_str(), self.bind(value)?) {
                    ("_binary", Expr::Lit(Value::Str(s))) => {
                        Expr::Lit(Value::Bytes(s.into_bytes()))
                    }
                    ("_binary", Expr::Lit(v @ Value::Bytes(_))) => Expr::Lit(v),
                    ("_utf8mb4", Expr::Lit(v @ Value::Str(_))) => Expr::Lit(v),
                    ("_utf8mb4", Expr::Lit(Value::Bytes(b))) => {
                        Expr::Lit(Value::Str(String::from_utf8_lossy(&b).into_owned()))
                    }
                    _ => return Err(SqlError::Unsupported(format!("{prefix} introducer"))),
                }
            }
            _ => return Ok(None),
        }))
    }
}
