//! Numeric functions and the bit operators, as MariaDB 10.11 computes them.
//!
//! - Doubles round as C's `rint` (half to even: `ROUND(2.5e0)` is 2) through MySQL's
//!   `my_double_round`; decimals round half away from zero (`ROUND(2.5)` is 3).
//! - A result that is not a finite double is 1690 "DOUBLE value is out of range";
//!   a logarithm of a non-positive number, SQRT of a negative one, ASIN/ACOS outside
//!   [-1, 1] are NULL.
//! - Bit operators work on BIGINT UNSIGNED (a negative operand is its two's complement;
//!   a shift by 64 or more is 0).
//! - RAND(seed) is MySQL's generator (`my_rnd`): the same seed gives MariaDB's numbers. A
//!   constant seed starts one sequence per statement (each row takes the next number); a
//!   seed that depends on the row re-seeds on every row.

use std::cell::RefCell;
use std::collections::HashMap;

use quire_engine::row::{Decimal, Value};

use super::cast::{rint, to_f64, to_i64, to_int};
use super::{any_null, MathFn};
use crate::error::{Result, SqlError};
use crate::expr::Env;
use crate::types;

fn out_of_range(what: &str) -> SqlError {
    SqlError::ArithmeticOutOfRange {
        kind: "DOUBLE",
        expr: what.into(),
    }
}

fn double(f: f64, what: &str) -> Result<Value> {
    if f.is_finite() {
        Ok(Value::Double(f))
    } else {
        Err(out_of_range(what))
    }
}

/// A value as the unsigned 64 bits the bit operators work on.
fn bits(v: &Value, env: &dyn Env) -> Option<u64> {
    to_int(v, env).map(|n| n as u64)
}

/// MySQL's `my_double_round`: `value` rounded (or truncated) to `dec` decimals.
pub fn double_round(value: f64, dec: i64, truncate: bool) -> f64 {
    let abs_dec = dec.unsigned_abs().min(400) as i32;
    let tmp = 10f64.powi(abs_dec);
    let mul = value * tmp;
    let div = value / tmp;
    if dec < 0 && tmp.is_infinite() {
        0.0
    } else if dec >= 0 && mul.is_infinite() {
        value
    } else if truncate {
        if value >= 0.0 {
            if dec < 0 {
                div.floor() * tmp
            } else {
                mul.floor() / tmp
            }
        } else if dec < 0 {
            div.ceil() * tmp
        } else {
            mul.ceil() / tmp
        }
    } else if dec < 0 {
        rint(div) * tmp
    } else {
        rint(mul) / tmp
    }
}

/// ROUND / TRUNCATE of an exact number to `dec` digits (negative: left of the point).
fn round_exact(n: Decimal, dec: i64, truncate: bool) -> Decimal {
    if dec >= 0 {
        let dec = dec.min(38) as u8;
        let r = if truncate {
            if n.scale <= dec {
                n
            } else {
                let f = 10i128.pow(u32::from(n.scale - dec));
                Decimal::new(n.unscaled / f, dec)
            }
        } else {
            types::round_to_scale(n, dec).unwrap_or(n)
        };
        return r.rescale(dec).unwrap_or(r);
    }
    let places = (dec.unsigned_abs() as u32).saturating_add(u32::from(n.scale));
    let Some(f) = 10i128.checked_pow(places) else {
        return Decimal::new(0, 0);
    };
    let q = n.unscaled / f;
    let r = n.unscaled % f;
    let q = if !truncate && r.abs() * 2 >= f {
        q + n.unscaled.signum()
    } else {
        q
    };
    let back = 10i128.checked_pow(dec.unsigned_abs() as u32).unwrap_or(0);
    Decimal::new(q.saturating_mul(back), 0)
}

/// ROUND(x, d) and TRUNCATE(x, d): integers stay integers, decimals stay decimals (with d
/// digits), anything else is a double.
fn round(x: &Value, dec: i64, truncate: bool, env: &dyn Env) -> Result<Value> {
    Ok(match x {
        Value::Null => Value::Null,
        Value::Int(_) | Value::UInt(_) if dec >= 0 => x.clone(),
        Value::Int(i) => {
            let r = round_exact(Decimal::new(i128::from(*i), 0), dec, truncate);
            i64::try_from(r.unscaled).map_or(Value::Int(0), Value::Int)
        }
        Value::UInt(u) => {
            let r = round_exact(Decimal::new(i128::from(*u), 0), dec, truncate);
            u64::try_from(r.unscaled).map_or(Value::UInt(0), Value::UInt)
        }
        Value::Decimal(d) => Value::Decimal(round_exact(*d, dec, truncate)),
        other => match to_f64(other, env) {
            Some(f) => Value::Double(double_round(f, dec, truncate)),
            None => Value::Null,
        },
    })
}

// Per-thread RAND(seed) generators of the running statement, by call site.
thread_local! {
    static SEEDED: RefCell<HashMap<usize, Rnd>> = RefCell::new(HashMap::new());
    static UNSEEDED: RefCell<Option<Rnd>> = const { RefCell::new(None) };
}

/// A new statement starts: constant-seed RAND() sequences start again.
pub fn new_statement() {
    SEEDED.with(|s| s.borrow_mut().clear());
}

/// MySQL's `my_rnd_struct`.
#[derive(Debug, Clone, Copy)]
struct Rnd {
    seed1: u64,
    seed2: u64,
}

const RND_MAX: u64 = 0x3FFF_FFFF;

impl Rnd {
    /// `my_rnd_init(seed * 0x10001 + 55555555, seed * 0x10000001)` of Item_func_rand.
    fn seeded(seed: i64) -> Rnd {
        let s = seed as u32;
        let s1 = u64::from(s.wrapping_mul(0x10001).wrapping_add(55_555_555));
        let s2 = u64::from(s.wrapping_mul(0x1000_0001));
        Rnd {
            seed1: s1 % RND_MAX,
            seed2: s2 % RND_MAX,
        }
    }

    fn next(&mut self) -> f64 {
        self.seed1 = (self.seed1 * 3 + self.seed2) % RND_MAX;
        self.seed2 = (self.seed1 + self.seed2 + 33) % RND_MAX;
        self.seed1 as f64 / RND_MAX as f64
    }
}

/// RAND([seed]) at call site `site` (a stable address of the expression), with
/// `constant_seed` when the seed depends on no row.
pub fn rand(site: usize, constant_seed: bool, args: &[Value], env: &dyn Env) -> Value {
    let Some(seed) = args.first() else {
        let f = UNSEEDED.with(|u| {
            let mut u = u.borrow_mut();
            let r = u.get_or_insert_with(|| {
                let t = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as i64);
                Rnd::seeded(t ^ (site as i64))
            });
            r.next()
        });
        return Value::Double(f);
    };
    let seed = to_i64(seed, env).unwrap_or(0);
    if !constant_seed {
        return Value::Double(Rnd::seeded(seed).next());
    }
    Value::Double(SEEDED.with(|s| {
        s.borrow_mut()
            .entry(site)
            .or_insert_with(|| Rnd::seeded(seed))
            .next()
    }))
}

/// CONV(n, from, to): `None` (NULL) for a base outside 2..=36 (negative: signed).
fn conv(n: &Value, from: i64, to: i64, env: &dyn Env) -> Option<String> {
    if !(2..=36).contains(&from.abs()) || !(2..=36).contains(&to.abs()) {
        return None;
    }
    let bits: u64 = match n {
        Value::Int(i) => *i as u64,
        Value::UInt(u) => *u,
        other => {
            let s = types::to_text(other.clone());
            let t = s.trim_start();
            let (neg, digits) = match t.as_bytes().first() {
                Some(b'-') => (true, &t[1..]),
                Some(b'+') => (false, &t[1..]),
                _ => (false, t),
            };
            let base = from.unsigned_abs() as u32;
            let ds: Vec<u32> = digits.chars().map_while(|c| c.to_digit(base)).collect();
            if ds.is_empty() && digits.is_empty() {
                return None;
            }
            let mut v: u128 = 0;
            let mut over = false;
            for d in ds {
                v = v * u128::from(base) + u128::from(d);
                if v > u128::from(u64::MAX) {
                    over = true;
                    break;
                }
            }
            if from < 0 {
                let lim = if neg { 1u128 << 63 } else { (1u128 << 63) - 1 };
                let v = if over { lim } else { v.min(lim) };
                if neg {
                    (v as u64).wrapping_neg()
                } else {
                    v as u64
                }
            } else {
                let v = if over { u64::MAX } else { v as u64 };
                if neg {
                    v.wrapping_neg()
                } else {
                    v
                }
            }
        }
    };
    let _ = env;
    let (neg, mut mag) = if to < 0 && (bits as i64) < 0 {
        (true, (bits as i64).unsigned_abs())
    } else {
        (false, bits)
    };
    let base = to.unsigned_abs();
    let mut digits = Vec::new();
    loop {
        let d = (mag % base) as u32;
        digits.push(
            std::char::from_digit(d, 36)
                .unwrap_or('0')
                .to_ascii_uppercase(),
        );
        mag /= base;
        if mag == 0 {
            break;
        }
    }
    if neg {
        digits.push('-');
    }
    Some(digits.into_iter().rev().collect())
}

/// GREATEST / LEAST's result in the type of all its arguments (`func/types.rs`): a double
/// if any is one or strings meet numbers, a decimal at the largest scale if any is one.
pub fn in_common_type(v: Value, all: &[Value]) -> Value {
    let is_str = |x: &Value| matches!(x, Value::Str(_) | Value::Bytes(_));
    // A TIME among strings: they compared as TIMEs, and the result is one.
    if all.iter().any(|x| matches!(x, Value::Time(_)))
        && all.iter().all(|x| matches!(x, Value::Time(_)) || is_str(x))
    {
        return match super::time::read(&v) {
            super::time::Read::Time(t, _) => Value::Time(t),
            super::time::Read::DateTime(dt, _) => Value::Time(super::time::of_datetime(&dt)),
            super::time::Read::Invalid => v,
        };
    }
    let all_str = all.iter().all(is_str);
    if all_str {
        return v;
    }
    let any_double = all.iter().any(|x| matches!(x, Value::Double(_)));
    if any_double || all.iter().any(is_str) {
        return Value::Double(types::num(&v));
    }
    let scale = all
        .iter()
        .filter_map(|x| match x {
            Value::Decimal(d) => Some(d.scale),
            _ => None,
        })
        .max();
    match (scale, crate::types::to_decimal(&v)) {
        (Some(s), Some(d)) => Value::Decimal(d.rescale(s).unwrap_or(d)),
        _ => v,
    }
}

pub fn eval(f: MathFn, args: Vec<Value>, env: &dyn Env) -> Result<Value> {
    let a = |i: usize| args.get(i).unwrap_or(&Value::Null);
    if f == MathFn::Pi {
        return Ok(Value::Double(std::f64::consts::PI));
    }
    if f == MathFn::Round || f == MathFn::Truncate {
        let dec = if args.len() > 1 {
            match to_i64(a(1), env) {
                Some(d) => d,
                None => return Ok(Value::Null),
            }
        } else {
            0
        };
        // A TIME rounds (or is cut) to `dec` fractional digits and stays a TIME.
        if let Value::Time(t) = a(0) {
            let unit = 10i64.pow(6 - dec.clamp(0, 6) as u32);
            let m = t.micros.unsigned_abs() as i64;
            let r = if f == MathFn::Round {
                (m + unit / 2) / unit * unit
            } else {
                m / unit * unit
            };
            let r = if t.is_negative() { -r } else { r };
            return Ok(Value::Time(super::time::clip(i128::from(r)).0));
        }
        let x = match a(0) {
            Value::Str(_) | Value::Bytes(_) => match to_f64(a(0), env) {
                Some(f) => Value::Double(f),
                None => Value::Null,
            },
            v => v.clone(),
        };
        return round(&x, dec, f == MathFn::Truncate, env);
    }
    if any_null(&args) {
        return Ok(Value::Null);
    }
    let x = || to_f64(a(0), env).unwrap_or(0.0);
    Ok(match f {
        MathFn::Pow => {
            let (b, e) = (x(), to_f64(a(1), env).unwrap_or(0.0));
            double(b.powf(e), "pow")?
        }
        MathFn::Sqrt => {
            let v = x();
            if v < 0.0 {
                Value::Null
            } else {
                Value::Double(v.sqrt())
            }
        }
        MathFn::Exp => double(x().exp(), "exp")?,
        MathFn::Ln | MathFn::Log2 | MathFn::Log10 | MathFn::Log => {
            let (base, v) = if f == MathFn::Log && args.len() == 2 {
                (Some(x()), to_f64(a(1), env).unwrap_or(0.0))
            } else {
                (None, x())
            };
            if v <= 0.0 {
                return Ok(Value::Null);
            }
            match (f, base) {
                (MathFn::Log2, _) => Value::Double(v.log2()),
                (MathFn::Log10, _) => Value::Double(v.log10()),
                (_, Some(b)) => {
                    if b <= 0.0 || b == 1.0 {
                        Value::Null
                    } else {
                        Value::Double(v.ln() / b.ln())
                    }
                }
                _ => Value::Double(v.ln()),
            }
        }
        MathFn::Sign => Value::Int(match a(0) {
            Value::Int(i) => i.signum(),
            Value::UInt(u) => i64::from(*u > 0),
            Value::Decimal(d) => d.unscaled.signum() as i64,
            other => {
                let v = to_f64(other, env).unwrap_or(0.0);
                if v > 0.0 {
                    1
                } else if v < 0.0 {
                    -1
                } else {
                    0
                }
            }
        }),
        MathFn::Degrees => Value::Double(x().to_degrees()),
        MathFn::Radians => Value::Double(x().to_radians()),
        MathFn::Sin => Value::Double(x().sin()),
        MathFn::Cos => Value::Double(x().cos()),
        MathFn::Tan => double(x().tan(), "tan")?,
        MathFn::Cot => {
            let t = x().tan();
            if t == 0.0 {
                return Err(out_of_range("cot"));
            }
            double(1.0 / t, "cot")?
        }
        MathFn::Asin | MathFn::Acos => {
            let v = x();
            if !(-1.0..=1.0).contains(&v) {
                Value::Null
            } else if f == MathFn::Asin {
                Value::Double(v.asin())
            } else {
                Value::Double(v.acos())
            }
        }
        MathFn::Atan => {
            if args.len() == 2 {
                Value::Double(x().atan2(to_f64(a(1), env).unwrap_or(0.0)))
            } else {
                Value::Double(x().atan())
            }
        }
        MathFn::Conv | MathFn::Bin | MathFn::Oct => {
            let (from, to) = match f {
                MathFn::Bin => (10, 2),
                MathFn::Oct => (10, 8),
                _ => match (to_i64(a(1), env), to_i64(a(2), env)) {
                    (Some(p), Some(q)) => (p, q),
                    _ => return Ok(Value::Null),
                },
            };
            conv(a(0), from, to, env).map_or(Value::Null, Value::Str)
        }
        MathFn::BitAnd | MathFn::BitOr | MathFn::BitXor | MathFn::Shl | MathFn::Shr => {
            let (Some(p), Some(q)) = (bits(a(0), env), bits(a(1), env)) else {
                return Ok(Value::Null);
            };
            Value::UInt(match f {
                MathFn::BitAnd => p & q,
                MathFn::BitOr => p | q,
                MathFn::BitXor => p ^ q,
                MathFn::Shl => p.checked_shl(u32::try_from(q).unwrap_or(64)).unwrap_or(0),
                _ => p.checked_shr(u32::try_from(q).unwrap_or(64)).unwrap_or(0),
            })
        }
        MathFn::BitNot => bits(a(0), env).map_or(Value::Null, |p| Value::UInt(!p)),
        MathFn::BitCount => {
            bits(a(0), env).map_or(Value::Null, |p| Value::Int(i64::from(p.count_ones())))
        }
        MathFn::BitBytes(m) => match a(0) {
            Value::UInt(u) => {
                let n = quire_engine::row::bit_bytes(m);
                Value::Bytes(u.to_be_bytes()[8 - n..].to_vec())
            }
            other => other.clone(),
        },
        MathFn::Pi | MathFn::Rand | MathFn::Round | MathFn::Truncate => Value::Null,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rand_with_a_seed_is_mysqls_generator() {
        assert_eq!(Rnd::seeded(1).next(), 0.405_403_537_121_977_24);
        assert_eq!(Rnd::seeded(3).next(), 0.905_769_755_976_060_1);
        assert_eq!(Rnd::seeded(0).next(), 0.155_220_427_694_935_74);
    }

    #[test]
    fn doubles_round_half_to_even_and_decimals_half_away() {
        assert_eq!(double_round(2.5, 0, false), 2.0);
        assert_eq!(double_round(3.5, 0, false), 4.0);
        assert_eq!(double_round(1.005, 2, false), 1.0);
        assert_eq!(double_round(123.456, -1, false), 120.0);
        assert_eq!(
            round_exact(Decimal::new(25, 1), 0, false),
            Decimal::new(3, 0)
        );
        assert_eq!(
            round_exact(Decimal::new(1250, 0), -2, false),
            Decimal::new(1300, 0)
        );
        assert_eq!(
            round_exact(Decimal::new(-1999, 3), 1, true),
            Decimal::new(-19, 1)
        );
    }

    #[test]
    fn conv_follows_mysql_bases_and_signs() {
        struct NoEnv;
        impl Env for NoEnv {
            fn param(&self, _: usize) -> Result<Value> {
                Ok(Value::Null)
            }
            fn session(&self, _: &crate::expr::SessionFn) -> Result<Value> {
                Ok(Value::Null)
            }
        }
        let s = |v: &str| Value::Str(v.into());
        assert_eq!(conv(&s("a"), 16, 2, &NoEnv).as_deref(), Some("1010"));
        assert_eq!(
            conv(&Value::Int(-17), 10, -18, &NoEnv).as_deref(),
            Some("-H")
        );
        assert_eq!(
            conv(&s("-1"), 10, 16, &NoEnv).as_deref(),
            Some("FFFFFFFFFFFFFFFF")
        );
        assert_eq!(conv(&s("zz"), 36, 10, &NoEnv).as_deref(), Some("1295"));
        assert_eq!(conv(&s("10"), 1, 10, &NoEnv), None);
    }
}
