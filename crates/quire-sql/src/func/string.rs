//! String functions, as MariaDB 10.11 computes them on utf8mb4.
//!
//! Positions and lengths count characters. A binary string argument (`x'…'`, CHAR(),
//! UNHEX(), CAST(… AS BINARY)) makes the function work on bytes and answer bytes: such a
//! string is carried here as one `char` per byte (U+0000..U+00FF) and turned back at the
//! end. Functions that compare (LOCATE, INSTR, FIELD, FIND_IN_SET, STRCMP) compare in the
//! collation the binder derived from their arguments; REPLACE, SUBSTRING_INDEX and TRIM
//! match bytes exactly, as MariaDB's do.

use std::cmp::Ordering;

use quire_engine::row::{Collation, Decimal, Value};

use super::cast::{to_decimal, to_f64, to_i64, to_int};
use super::{any_null, regexp, StrFn, TrimSide};
use crate::error::Result;
use crate::expr::Env;
use crate::types;

/// The largest string a function builds (MariaDB's max_allowed_packet default, 16 MiB):
/// beyond it, NULL with warning 1301.
const MAX_RESULT_BYTES: usize = 16 * 1024 * 1024;

/// A string argument: text, or bytes carried as one char per byte.
#[derive(Debug, Clone)]
struct Text {
    chars: Vec<char>,
    binary: bool,
}

impl Text {
    fn of(v: &Value) -> Text {
        match v {
            Value::Bytes(b) => Text {
                chars: b.iter().map(|&c| char::from(c)).collect(),
                binary: true,
            },
            other => Text {
                chars: types::to_text(other.clone()).chars().collect(),
                binary: false,
            },
        }
    }

    fn value(chars: Vec<char>, binary: bool) -> Value {
        if binary {
            Value::Bytes(chars.into_iter().map(|c| c as u32 as u8).collect())
        } else {
            Value::Str(chars.into_iter().collect())
        }
    }
}

/// Whether any of `vals` is a binary string (the result is one too).
fn binary(vals: &[&Value]) -> bool {
    vals.iter().any(|v| matches!(v, Value::Bytes(_)))
}

fn str_of(v: &Value) -> String {
    types::to_text(v.clone())
}

fn bytes_of(v: &Value) -> Vec<u8> {
    match v {
        Value::Bytes(b) => b.clone(),
        other => str_of(other).into_bytes(),
    }
}

fn too_big(env: &dyn Env, f: &str) -> Value {
    super::warn(
        env,
        "Warning",
        1301,
        format!(
            "Result of {f}() was larger than max_allowed_packet ({MAX_RESULT_BYTES}) - truncated"
        ),
    );
    Value::Null
}

/// Finds `needle` in `hay` from character `from`, characters equal by `eq`.
fn find(
    hay: &[char],
    needle: &[char],
    from: usize,
    eq: &dyn Fn(char, char) -> bool,
) -> Option<usize> {
    if needle.is_empty() {
        return (from <= hay.len()).then_some(from);
    }
    if needle.len() > hay.len() {
        return None;
    }
    (from..=hay.len() - needle.len()).find(|&i| {
        hay[i..i + needle.len()]
            .iter()
            .zip(needle)
            .all(|(a, b)| eq(*a, *b))
    })
}

fn eq_in(coll: Collation, binary: bool) -> impl Fn(char, char) -> bool {
    move |a, b| {
        if binary {
            a == b
        } else {
            coll.char_key(a) == coll.char_key(b)
        }
    }
}

/// Two strings compared in `coll` (PAD SPACE), or bytes exactly.
fn compare_in(a: &Value, b: &Value, coll: Collation) -> Ordering {
    if binary(&[a, b]) {
        bytes_of(a).cmp(&bytes_of(b))
    } else {
        coll.cmp(&str_of(a), &str_of(b))
    }
}

pub fn eval(f: StrFn, coll: Collation, args: Vec<Value>, env: &dyn Env) -> Result<Value> {
    // SHA2(s, NULL) hashes with length 0, which means 256.
    let args = match (f, args.as_slice()) {
        (StrFn::Sha2, [s, Value::Null]) => vec![s.clone(), Value::Int(0)],
        _ => args,
    };
    let a = |i: usize| args.get(i).unwrap_or(&Value::Null);
    // Functions with their own NULL rules first.
    match f {
        StrFn::Field => return Ok(field(&args, coll, env)),
        StrFn::Elt => {
            let Some(n) = to_i64(a(0), env) else {
                return Ok(Value::Null);
            };
            return Ok(match usize::try_from(n) {
                Ok(n) if n >= 1 && n < args.len() => match a(n) {
                    Value::Null => Value::Null,
                    v @ Value::Bytes(_) => v.clone(),
                    v => Value::Str(str_of(v)),
                },
                _ => Value::Null,
            });
        }
        StrFn::Char | StrFn::CharUsing => {
            let mut out = Vec::new();
            for v in &args {
                let Some(n) = to_int(v, env) else { continue };
                let n = n as i64 as u32;
                // MySQL writes the integer's significant bytes, big-endian.
                let bytes = n.to_be_bytes();
                let skip = bytes.iter().take_while(|&&b| b == 0).count().min(3);
                out.extend_from_slice(&bytes[skip..]);
            }
            return Ok(if f == StrFn::CharUsing {
                match String::from_utf8(out) {
                    Ok(s) => Value::Str(s),
                    Err(_) => Value::Null,
                }
            } else {
                Value::Bytes(out)
            });
        }
        StrFn::Quote => {
            return Ok(match a(0) {
                Value::Null => Value::Str("NULL".into()),
                v => Value::Str(quote(&str_of(v))),
            })
        }
        StrFn::Regexp | StrFn::RegexpReplace | StrFn::RegexpSubstr | StrFn::RegexpInstr => {
            return regexp::eval(f, coll, &args)
        }
        _ => {}
    }
    if any_null(&args) {
        return Ok(Value::Null);
    }
    Ok(match f {
        StrFn::Uuid => Value::Str(uuid()),
        StrFn::SysGuid => Value::Str(uuid().replace('-', "")),
        StrFn::Substring => {
            let t = Text::of(a(0));
            let (Some(pos), len) = (to_i64(a(1), env), args.get(2).map(|v| to_i64(v, env))) else {
                return Ok(Value::Null);
            };
            let n = t.chars.len() as i64;
            let len = match len {
                Some(Some(l)) => l,
                Some(None) => return Ok(Value::Null),
                None => n,
            };
            let start = if pos > 0 {
                pos - 1
            } else if pos < 0 {
                n + pos
            } else {
                n
            };
            if start < 0 || start >= n || len <= 0 {
                return Ok(Text::value(Vec::new(), t.binary));
            }
            let end = (start.saturating_add(len)).min(n);
            Text::value(t.chars[start as usize..end as usize].to_vec(), t.binary)
        }
        StrFn::Left | StrFn::Right => {
            let t = Text::of(a(0));
            let Some(k) = to_int(a(1), env) else {
                return Ok(Value::Null);
            };
            let k = k.clamp(0, t.chars.len() as i128) as usize;
            let part = if f == StrFn::Left {
                t.chars[..k].to_vec()
            } else {
                t.chars[t.chars.len() - k..].to_vec()
            };
            Text::value(part, t.binary)
        }
        StrFn::Trim(side) => {
            let t = Text::of(a(0));
            let bin = binary(&[a(0), a(1)]);
            let rem: Vec<char> = if args.len() > 1 {
                Text::of(a(1)).chars
            } else {
                vec![' ']
            };
            Text::value(trim(&t.chars, &rem, side), bin)
        }
        StrFn::Replace => {
            let bin = binary(&[a(0), a(1), a(2)]);
            let s = Text::of(a(0)).chars;
            let from = Text::of(a(1)).chars;
            let to = Text::of(a(2)).chars;
            if from.is_empty() {
                return Ok(Text::value(s, bin));
            }
            let mut out = Vec::with_capacity(s.len());
            let mut i = 0;
            while i < s.len() {
                if s[i..].starts_with(&from) {
                    out.extend_from_slice(&to);
                    i += from.len();
                } else {
                    out.push(s[i]);
                    i += 1;
                }
                if out.len() * 4 > MAX_RESULT_BYTES {
                    return Ok(too_big(env, "replace"));
                }
            }
            Text::value(out, bin)
        }
        StrFn::LPad | StrFn::RPad => {
            let bin = binary(&[a(0), a(2)]);
            let s = Text::of(a(0)).chars;
            let Some(n) = to_int(a(1), env) else {
                return Ok(Value::Null);
            };
            let pad = if args.len() > 2 {
                Text::of(a(2)).chars
            } else {
                vec![' ']
            };
            if n < 0 {
                return Ok(Value::Null);
            }
            if n as usize * if bin { 1 } else { 4 } > MAX_RESULT_BYTES {
                return Ok(too_big(env, if f == StrFn::LPad { "lpad" } else { "rpad" }));
            }
            let n = n as usize;
            if n <= s.len() {
                return Ok(Text::value(s[..n].to_vec(), bin));
            }
            if pad.is_empty() {
                return Ok(Value::Null);
            }
            let fill: Vec<char> = pad.iter().cycle().take(n - s.len()).copied().collect();
            let out = if f == StrFn::LPad {
                [fill, s].concat()
            } else {
                [s, fill].concat()
            };
            Text::value(out, bin)
        }
        StrFn::Locate => {
            let bin = binary(&[a(0), a(1)]);
            let needle = Text::of(a(0)).chars;
            let hay = Text::of(a(1)).chars;
            let from = if args.len() > 2 {
                match to_i64(a(2), env) {
                    Some(p) if p >= 1 => (p - 1) as usize,
                    Some(_) => return Ok(Value::Int(0)),
                    None => return Ok(Value::Null),
                }
            } else {
                0
            };
            if from > hay.len() {
                return Ok(Value::Int(0));
            }
            // MariaDB's instr compares the haystack's bytes in runs as long as the
            // needle's: 'o' finds 'O' but not 'ö' under utf8mb4_general_ci.
            let eq = |a: char, b: char| {
                a.len_utf8() == b.len_utf8()
                    && (bin && a == b || !bin && coll.char_key(a) == coll.char_key(b))
            };
            Value::Int(find(&hay, &needle, from, &eq).map_or(0, |i| i as i64 + 1))
        }
        StrFn::Reverse => {
            let t = Text::of(a(0));
            Text::value(t.chars.into_iter().rev().collect(), t.binary)
        }
        StrFn::Space => {
            let n = to_int(a(0), env).unwrap_or(0).max(0);
            if n as usize > MAX_RESULT_BYTES {
                return Ok(too_big(env, "space"));
            }
            Value::Str(" ".repeat(n as usize))
        }
        StrFn::Ascii => Value::Int(bytes_of(a(0)).first().map_or(0, |b| i64::from(*b))),
        StrFn::Ord => {
            let b = bytes_of(a(0));
            let len = match a(0) {
                Value::Bytes(_) => 1.min(b.len()),
                _ => str_of(a(0)).chars().next().map_or(0, char::len_utf8),
            };
            Value::Int(b[..len].iter().fold(0i64, |n, c| n * 256 + i64::from(*c)))
        }
        StrFn::Hex => Value::Str(hex(a(0), env)),
        StrFn::Unhex => {
            let s = str_of(a(0));
            let s = s.as_bytes();
            let digit = |c: u8| (c as char).to_digit(16);
            let mut out = Vec::with_capacity(s.len() / 2 + 1);
            let mut i = 0;
            if s.len() % 2 == 1 {
                let Some(d) = digit(s[0]) else {
                    return Ok(Value::Null);
                };
                out.push(d as u8);
                i = 1;
            }
            while i < s.len() {
                match (digit(s[i]), digit(s[i + 1])) {
                    (Some(h), Some(l)) => out.push((h * 16 + l) as u8),
                    _ => return Ok(Value::Null),
                }
                i += 2;
            }
            Value::Bytes(out)
        }
        StrFn::Strcmp => Value::Int(match compare_in(a(0), a(1), coll) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        }),
        StrFn::FindInSet => {
            let bin = binary(&[a(0), a(1)]);
            let needle: Vec<char> = Text::of(a(0)).chars;
            let set: Vec<char> = Text::of(a(1)).chars;
            if needle.contains(&',') {
                return Ok(Value::Int(0));
            }
            let eq = eq_in(coll, bin);
            if set.is_empty() {
                return Ok(Value::Int(0));
            }
            let pos = set
                .split(|c| *c == ',')
                .position(|item| {
                    item.len() == needle.len() && item.iter().zip(&needle).all(|(x, y)| eq(*x, *y))
                })
                .map_or(0, |i| i as i64 + 1);
            Value::Int(pos)
        }
        StrFn::SubstringIndex => {
            let bin = binary(&[a(0), a(1)]);
            let s = Text::of(a(0)).chars;
            let delim = Text::of(a(1)).chars;
            let Some(count) = to_i64(a(2), env) else {
                return Ok(Value::Null);
            };
            if delim.is_empty() || count == 0 {
                return Ok(Text::value(Vec::new(), bin));
            }
            let eq = |x: char, y: char| x == y;
            let mut hits = Vec::new();
            let mut from = 0;
            while let Some(i) = find(&s, &delim, from, &eq) {
                hits.push(i);
                from = i + delim.len();
            }
            let out = if count > 0 {
                match hits.get(count as usize - 1) {
                    Some(&i) => s[..i].to_vec(),
                    None => s.clone(),
                }
            } else {
                let k = count.unsigned_abs() as usize;
                if k > hits.len() {
                    s.clone()
                } else {
                    s[hits[hits.len() - k] + delim.len()..].to_vec()
                }
            };
            Text::value(out, bin)
        }
        StrFn::Insert => {
            let bin = binary(&[a(0), a(3)]);
            let s = Text::of(a(0)).chars;
            let (Some(pos), Some(len)) = (to_i64(a(1), env), to_i64(a(2), env)) else {
                return Ok(Value::Null);
            };
            let new = Text::of(a(3)).chars;
            let n = s.len() as i64;
            if pos < 1 || pos > n {
                return Ok(Text::value(s, bin));
            }
            let start = (pos - 1) as usize;
            let end = if len < 0 || len > n - pos + 1 {
                s.len()
            } else {
                start + len as usize
            };
            Text::value([&s[..start], &new[..], &s[end..]].concat(), bin)
        }
        StrFn::Format => {
            // Quire formats numbers in en_US only: another locale is 1235, not a wrong text.
            if let Some(l) = args.get(2) {
                let l = str_of(l);
                if !l.eq_ignore_ascii_case("en_US") {
                    return Err(crate::error::SqlError::Unsupported(format!(
                        "FORMAT with locale '{l}'"
                    )));
                }
            }
            format(a(0), a(1), env)
        }
        StrFn::Md5 => Value::Str(to_hex_lower(&md5(&bytes_of(a(0))))),
        StrFn::Sha1 => {
            use sha1::Digest;
            Value::Str(to_hex_lower(&sha1::Sha1::digest(bytes_of(a(0)))))
        }
        StrFn::Sha2 => {
            use sha2::Digest;
            let b = bytes_of(a(0));
            // A NULL hash length is 0, which means 256.
            match to_i64(a(1), env) {
                Some(224) => Value::Str(to_hex_lower(&sha2::Sha224::digest(&b))),
                Some(256) | Some(0) => Value::Str(to_hex_lower(&sha2::Sha256::digest(&b))),
                Some(384) => Value::Str(to_hex_lower(&sha2::Sha384::digest(&b))),
                Some(512) => Value::Str(to_hex_lower(&sha2::Sha512::digest(&b))),
                _ => {
                    super::warn(env, "Warning", 1210, "Incorrect arguments to sha2".into());
                    Value::Null
                }
            }
        }
        StrFn::Crc32 => Value::UInt(u64::from(crc32fast::hash(&bytes_of(a(0))))),
        StrFn::ToBase64 => Value::Str(to_base64(&bytes_of(a(0)))),
        StrFn::FromBase64 => from_base64(&bytes_of(a(0))).map_or(Value::Null, Value::Bytes),
        StrFn::BitLength => Value::Int(bytes_of(a(0)).len() as i64 * 8),
        StrFn::Charset => Value::Str(
            match a(0) {
                Value::Str(_) => "utf8mb4",
                _ => "binary",
            }
            .into(),
        ),
        // Handled above.
        StrFn::Field
        | StrFn::Elt
        | StrFn::Char
        | StrFn::CharUsing
        | StrFn::Quote
        | StrFn::Regexp
        | StrFn::RegexpReplace
        | StrFn::RegexpSubstr
        | StrFn::RegexpInstr => Value::Null,
    })
}

fn trim(s: &[char], rem: &[char], side: TrimSide) -> Vec<char> {
    if rem.is_empty() {
        return s.to_vec();
    }
    let (mut start, mut end) = (0, s.len());
    if side != TrimSide::Trailing {
        while end - start >= rem.len() && s[start..start + rem.len()] == *rem {
            start += rem.len();
        }
    }
    if side != TrimSide::Leading {
        while end - start >= rem.len() && s[end - rem.len()..end] == *rem {
            end -= rem.len();
        }
    }
    s[start..end].to_vec()
}

/// FIELD(x, a, b, …): the position of the first argument equal to x, 0 if none (NULL never
/// matches). All strings: compared as strings in `coll`; all numbers: as numbers; mixed:
/// as doubles, as MySQL does.
fn field(args: &[Value], coll: Collation, env: &dyn Env) -> Value {
    let Some(x) = args.first() else {
        return Value::Int(0);
    };
    if matches!(x, Value::Null) {
        return Value::Int(0);
    }
    let is_str = |v: &Value| matches!(v, Value::Str(_) | Value::Bytes(_));
    let all_str = args.iter().all(|v| is_str(v) || matches!(v, Value::Null));
    let all_int = args
        .iter()
        .all(|v| matches!(v, Value::Int(_) | Value::UInt(_) | Value::Null));
    let all_num = args.iter().all(|v| !is_str(v));
    for (i, v) in args.iter().enumerate().skip(1) {
        if matches!(v, Value::Null) {
            continue;
        }
        let hit = if all_str {
            compare_in(x, v, coll) == Ordering::Equal
        } else if all_int {
            to_int(x, env) == to_int(v, env)
        } else if all_num {
            match (to_decimal(x, env), to_decimal(v, env)) {
                (Some(p), Some(q)) => {
                    types::compare(&Value::Decimal(p), &Value::Decimal(q), coll) == Ordering::Equal
                }
                _ => to_f64(x, env) == to_f64(v, env),
            }
        } else {
            to_f64(x, env) == to_f64(v, env)
        };
        if hit {
            return Value::Int(i as i64);
        }
    }
    Value::Int(0)
}

/// QUOTE(s): single quotes around, and `\`, `'`, NUL and Ctrl-Z escaped.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\0' => out.push_str("\\0"),
            '\u{1a}' => out.push_str("\\Z"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// HEX(v): a number as its BIGINT's hex digits (negative as two's complement; decimals and
/// doubles rounded), anything else as the hex of its bytes.
fn hex(v: &Value, env: &dyn Env) -> String {
    match v {
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_) => {
            let n = match v {
                Value::Double(f) => super::cast::rint(*f) as i128,
                other => to_int(other, env).unwrap_or(0),
            };
            format!("{:X}", n as u64)
        }
        other => bytes_of(other).iter().map(|b| format!("{b:02X}")).collect(),
    }
}

fn to_hex_lower(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

/// FORMAT(x, d): rounded to d decimals (at most 38), with thousands separators (en_US).
fn format(x: &Value, d: &Value, env: &dyn Env) -> Value {
    let Some(dec) = to_i64(d, env) else {
        return Value::Null;
    };
    let dec = dec.clamp(0, 38) as u8;
    let text = match x {
        Value::Double(_) | Value::Str(_) | Value::Bytes(_) => {
            let Some(f) = to_f64(x, env) else {
                return Value::Null;
            };
            match super::cast::f64_to_decimal(f) {
                Some(dv) if dv.scale <= 38 => round_text(dv, dec),
                _ => format!("{f:.*}", usize::from(dec)),
            }
        }
        other => match to_decimal(other, env) {
            Some(dv) => round_text(dv, dec),
            None => return Value::Null,
        },
    };
    let (sign, body) = match text.strip_prefix('-') {
        Some(b) => ("-", b),
        None => ("", text.as_str()),
    };
    let (int, frac) = match body.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (body, None),
    };
    let mut grouped = String::with_capacity(int.len() + int.len() / 3);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let negative_zero = sign == "-"
        && int.bytes().all(|c| c == b'0')
        && frac.is_none_or(|f| f.bytes().all(|c| c == b'0'));
    let mut out = String::new();
    if !negative_zero {
        out.push_str(sign);
    }
    out.push_str(&grouped);
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    Value::Str(out)
}

fn round_text(d: Decimal, dec: u8) -> String {
    let r = types::round_to_scale(d, dec).unwrap_or(d);
    r.rescale(dec).unwrap_or(r).to_string()
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// TO_BASE64: MariaDB's, with a newline after every 76 characters.
fn to_base64(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len() * 4 / 3 + 4);
    let mut line = 0;
    for chunk in b.chunks(3) {
        if line == 76 {
            out.push('\n');
            line = 0;
        }
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(char::from(B64[(n >> (18 - 6 * k) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
        line += 4;
    }
    out
}

/// FROM_BASE64: spaces and newlines ignored; NULL for anything else that is not base64.
fn from_base64(b: &[u8]) -> Option<Vec<u8>> {
    let mut vals = Vec::with_capacity(b.len());
    let mut pad = 0;
    for &c in b {
        if c.is_ascii_whitespace() {
            continue;
        }
        if c == b'=' {
            pad += 1;
            continue;
        }
        if pad > 0 {
            return None;
        }
        vals.push(B64.iter().position(|&x| x == c)? as u32);
    }
    if pad > 2 || (vals.len() + pad) % 4 != 0 || vals.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(vals.len() * 3 / 4);
    for chunk in vals.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, v)| n | v << (18 - 6 * i));
        out.push((n >> 16) as u8);
        if chunk.len() > 2 {
            out.push((n >> 8) as u8);
        }
        if chunk.len() > 3 {
            out.push(n as u8);
        }
    }
    Some(out)
}

/// MD5 (RFC 1321).
fn md5(input: &[u8]) -> [u8; 16] {
    const S: [u32; 64] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5,
        9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10,
        15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ];
    let k: Vec<u32> = (0..64)
        .map(|i: i32| ((f64::from(i + 1)).sin().abs() * 4_294_967_296.0) as u32)
        .collect();
    let mut msg = input.to_vec();
    let bit_len = (input.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bit_len.to_le_bytes());
    let (mut a0, mut b0, mut c0, mut d0) = (
        0x6745_2301u32,
        0xefcd_ab89u32,
        0x98ba_dcfeu32,
        0x1032_5476u32,
    );
    for chunk in msg.chunks(64) {
        let m: Vec<u32> = chunk
            .chunks(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        let (mut a, mut b, mut c, mut d) = (a0, b0, c0, d0);
        for i in 0..64 {
            let (f, g) = match i / 16 {
                0 => ((b & c) | (!b & d), i),
                1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
                2 => (b ^ c ^ d, (3 * i + 5) % 16),
                _ => (c ^ (b | !d), (7 * i) % 16),
            };
            let f = f.wrapping_add(a).wrapping_add(k[i]).wrapping_add(m[g]);
            a = d;
            d = c;
            c = b;
            b = b.wrapping_add(f.rotate_left(S[i]));
        }
        a0 = a0.wrapping_add(a);
        b0 = b0.wrapping_add(b);
        c0 = c0.wrapping_add(c);
        d0 = d0.wrapping_add(d);
    }
    let mut out = [0u8; 16];
    for (i, w) in [a0, b0, c0, d0].iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&w.to_le_bytes());
    }
    out
}

/// A version 1 (time-based) UUID as MariaDB's UUID() makes them: the time in 100 ns since
/// 1582-10-15, a clock sequence and a node chosen at random once per process (with the
/// multicast bit set, RFC 4122's mark of a node that is no MAC address). The time never
/// repeats within the process: a second call in the same 100 ns takes the next tick.
fn uuid() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;
    static LAST: AtomicU64 = AtomicU64::new(0);
    static NODE: OnceLock<(u16, u64)> = OnceLock::new();
    // Between 1582-10-15 and 1970-01-01, in 100 ns.
    const GREGORIAN_OFFSET: u64 = 0x01B2_1DD2_1381_4000;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| (d.as_nanos() / 100) as u64)
        + GREGORIAN_OFFSET;
    let mut ts = now;
    let _ = LAST.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |last| {
        ts = now.max(last + 1);
        Some(ts)
    });
    let (clock_seq, node) = *NODE.get_or_init(|| {
        let r: u64 = rand::random();
        (
            (r >> 48) as u16 & 0x3fff,
            (r & 0xffff_ffff_ffff) | 0x0100_0000_0000,
        )
    });
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        ts & 0xffff_ffff,
        (ts >> 32) & 0xffff,
        0x1000 | ((ts >> 48) & 0x0fff),
        0x8000 | clock_seq,
        node
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_matches_the_rfc_vectors() {
        assert_eq!(to_hex_lower(&md5(b"")), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(
            to_hex_lower(&md5(b"testing")),
            "ae2b1fca515949e5d54fb22b8ed95575"
        );
        let long = vec![b'a'; 1000];
        assert_eq!(
            to_hex_lower(&md5(&long)),
            "cabe45dcc9ae5b66ba86600cca6b8ba8"
        );
    }

    #[test]
    fn base64_round_trips_and_wraps_at_76() {
        for n in 0..100 {
            let b: Vec<u8> = (0..n as u8).collect();
            assert_eq!(from_base64(to_base64(&b).as_bytes()), Some(b));
        }
        assert!(to_base64(&[b'x'; 60]).contains('\n'));
        assert_eq!(from_base64(b"!!"), None);
    }
}
