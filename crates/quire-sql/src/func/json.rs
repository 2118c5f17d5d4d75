//! JSON functions, as MariaDB 10.11 has them: JSON is text (a LONGTEXT utf8mb4_bin column
//! with `CHECK (json_valid(c))`), and each function parses its arguments.
//!
//! The parser keeps what MariaDB keeps of a document: a number's and a string's text as
//! written (`1.50` stays `1.50`, `"\u0041"` stays escaped), members in document order, and
//! duplicate keys. Results print in MariaDB's loose format (`{"a": 1, "b": [1, 2]}`), which
//! its JSON_EXTRACT, JSON_OBJECT, JSON_ARRAY and JSON_KEYS use.
//!
//! Why not serde_json (already in the build, through mysql_common): its `Value` keeps
//! neither a number's text (`1.50` would print `1.5`, `1e400` does not parse), nor a
//! string's escapes, nor duplicate keys, and its `arbitrary_precision` feature would change
//! `Number` for every crate of the workspace. MariaDB's grammar also differs from RFC 8259
//! where its answers show it: `1.` is a number, `\q` an escape, and nesting stops at 32.

use quire_engine::row::Value;

use crate::error::{Result, SqlError};
use crate::expr::Env;
use crate::types;

/// How a JSON function's value arguments go into the document: bit i of `json` set:
/// argument i is JSON already (a JSON function's result or a JSON column), inserted as is
/// rather than as a string; of `boolean`: a truth value (a comparison, NOT, IN, LIKE, IS
/// NULL, TRUE / FALSE), inserted as `true` / `false` rather than as 1 / 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ArgKinds {
    pub json: u64,
    pub boolean: u64,
}

impl ArgKinds {
    fn json(self, i: usize) -> bool {
        i < 64 && self.json >> i & 1 == 1
    }
    fn boolean(self, i: usize) -> bool {
        i < 64 && self.boolean >> i & 1 == 1
    }
}

/// What JSON_SET, JSON_INSERT and JSON_REPLACE do at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modify {
    /// Replace a value there, or add one.
    Set,
    /// Add a value where there is none.
    Insert,
    /// Replace a value there.
    Replace,
}

/// JSON functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonFn {
    Valid,
    /// `JSON_EXTRACT(doc, path, …)`.
    Extract,
    Unquote,
    Quote,
    Type,
    /// `JSON_LENGTH(doc[, path])`.
    Length,
    /// `JSON_KEYS(doc[, path])`.
    Keys,
    /// `JSON_CONTAINS(doc, candidate[, path])`.
    Contains,
    /// `JSON_CONTAINS_PATH(doc, 'one' | 'all', path, …)`.
    ContainsPath,
    /// `JSON_DEPTH(doc)`.
    Depth,
    /// `JSON_OBJECT(k, v, …)`.
    Object(ArgKinds),
    /// `JSON_ARRAY(v, …)`.
    Array(ArgKinds),
    /// `JSON_SET` / `JSON_INSERT` / `JSON_REPLACE(doc, path, value, …)`.
    Modify(Modify, ArgKinds),
    /// `JSON_REMOVE(doc, path, …)`.
    Remove,
    /// `JSON_ARRAY_APPEND(doc, path, value, …)`.
    ArrayAppend(ArgKinds),
    /// `JSON_ARRAY_INSERT(doc, path, value, …)`.
    ArrayInsert(ArgKinds),
    /// `JSON_MERGE_PATCH(doc, doc, …)`: RFC 7396.
    MergePatch,
    /// `JSON_MERGE_PRESERVE(doc, doc, …)` (and MariaDB's JSON_MERGE).
    MergePreserve,
    /// `JSON_SEARCH(doc, 'one' | 'all', pattern[, escape[, path, …]])`: strings matched
    /// as LIKE matches them in this collation (the pattern's).
    Search(quire_engine::row::Collation),
}

impl JsonFn {
    /// The SQL name, as MariaDB's messages write it.
    pub fn name(self) -> &'static str {
        match self {
            JsonFn::Valid => "json_valid",
            JsonFn::Extract => "json_extract",
            JsonFn::Unquote => "json_unquote",
            JsonFn::Quote => "json_quote",
            JsonFn::Type => "json_type",
            JsonFn::Length => "json_length",
            JsonFn::Keys => "json_keys",
            JsonFn::Contains => "json_contains",
            JsonFn::ContainsPath => "json_contains_path",
            JsonFn::Depth => "json_depth",
            JsonFn::Object(_) => "json_object",
            JsonFn::Array(_) => "json_array",
            JsonFn::Modify(Modify::Set, _) => "json_set",
            JsonFn::Modify(Modify::Insert, _) => "json_insert",
            JsonFn::Modify(Modify::Replace, _) => "json_replace",
            JsonFn::Remove => "json_remove",
            JsonFn::ArrayAppend(_) => "json_array_append",
            JsonFn::ArrayInsert(_) => "json_array_insert",
            JsonFn::MergePatch => "json_merge_patch",
            JsonFn::MergePreserve => "json_merge_preserve",
            JsonFn::Search(_) => "json_search",
        }
    }

    /// Whether the result is JSON text (JSON_OBJECT, JSON_SET, … take it as JSON, not as
    /// a string to quote), as MariaDB types it: JSON_KEYS, JSON_QUOTE and JSON_UNQUOTE
    /// give strings.
    pub fn returns_json(self) -> bool {
        matches!(
            self,
            JsonFn::Extract
                | JsonFn::Object(_)
                | JsonFn::Array(_)
                | JsonFn::Modify(..)
                | JsonFn::Remove
                | JsonFn::ArrayAppend(_)
                | JsonFn::ArrayInsert(_)
                | JsonFn::MergePatch
                | JsonFn::MergePreserve
                | JsonFn::Search(_)
        )
    }

    /// The value arguments' kinds of a function that takes values, with `kinds` set.
    pub fn with_kinds(self, kinds: ArgKinds) -> JsonFn {
        match self {
            JsonFn::Object(_) => JsonFn::Object(kinds),
            JsonFn::Array(_) => JsonFn::Array(kinds),
            JsonFn::Modify(m, _) => JsonFn::Modify(m, kinds),
            JsonFn::ArrayAppend(_) => JsonFn::ArrayAppend(kinds),
            JsonFn::ArrayInsert(_) => JsonFn::ArrayInsert(kinds),
            other => other,
        }
    }
}

/// A parsed JSON value. Numbers and strings keep their source text (a string's without
/// its quotes, escapes as written).
#[derive(Debug, Clone, PartialEq)]
pub enum J {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

/// Why a text is not JSON, with MariaDB's 1-based position where it says one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyntaxError {
    /// 4037: the text ends inside a value.
    End,
    /// 4038: an unexpected character at this position.
    At(usize),
    /// 4040: nesting reaches [`DEPTH_LIMIT`] at this position.
    Depth(usize),
}

/// Nesting MariaDB refuses (JSON_DEPTH_LIMIT): 31 levels parse, 32 do not.
const DEPTH_LIMIT: usize = 32;

type Parsed<T> = std::result::Result<T, SyntaxError>;

struct P<'a> {
    b: &'a [u8],
    i: usize,
}

impl P<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }
    /// The error at the current byte: the end of the text, or a character there.
    fn err<T>(&self) -> Parsed<T> {
        if self.i >= self.b.len() {
            Err(SyntaxError::End)
        } else {
            Err(SyntaxError::At(self.i + 1))
        }
    }
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn lit(&mut self, word: &[u8], v: J) -> Parsed<J> {
        for (k, w) in word.iter().enumerate() {
            match self.b.get(self.i + k) {
                None => return Err(SyntaxError::End),
                // MariaDB names the last good character of a misspelt literal.
                Some(c) if c != w => return Err(SyntaxError::At(self.i + k)),
                Some(_) => {}
            }
        }
        self.i += word.len();
        Ok(v)
    }
    fn value(&mut self, depth: usize) -> Parsed<J> {
        self.ws();
        match self.peek() {
            Some(b'{' | b'[') if depth + 1 >= DEPTH_LIMIT => Err(SyntaxError::Depth(self.i + 1)),
            Some(b'{') => {
                self.i += 1;
                let mut members = Vec::new();
                self.ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return Ok(J::Obj(members));
                }
                loop {
                    self.ws();
                    if self.peek() != Some(b'"') {
                        return self.err();
                    }
                    let k = self.string()?;
                    self.ws();
                    if self.peek() != Some(b':') {
                        return self.err();
                    }
                    self.i += 1;
                    let v = self.value(depth + 1)?;
                    members.push((k, v));
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(J::Obj(members));
                        }
                        _ => return self.err(),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                    return Ok(J::Arr(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(J::Arr(items));
                        }
                        _ => return self.err(),
                    }
                }
            }
            Some(b'"') => Ok(J::Str(self.string()?)),
            Some(b't') => self.lit(b"true", J::Bool(true)),
            Some(b'f') => self.lit(b"false", J::Bool(false)),
            Some(b'n') => self.lit(b"null", J::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => self.err(),
        }
    }
    /// A string at `"`: its text between the quotes, escapes checked and kept. MariaDB
    /// takes `\` before any character; `\u` needs four hex digits, and a high surrogate its
    /// low half.
    fn string(&mut self) -> Parsed<String> {
        self.i += 1;
        let start = self.i;
        loop {
            match self.peek() {
                None => return Err(SyntaxError::End),
                Some(b'"') => break,
                Some(b'\\') => {
                    self.i += 1;
                    match self.peek() {
                        None => return Err(SyntaxError::End),
                        Some(b'u') => {
                            let cp = self.hex4()?;
                            if (0xD800..0xDC00).contains(&cp) {
                                if self.b.get(self.i..self.i + 2) != Some(b"\\u") {
                                    return self.err();
                                }
                                self.i += 1;
                                if !(0xDC00..0xE000).contains(&self.hex4()?) {
                                    return self.err();
                                }
                            } else if (0xDC00..0xE000).contains(&cp) {
                                return self.err();
                            }
                        }
                        Some(_) => self.i += 1,
                    }
                }
                Some(c) if c < 0x20 => return self.err(),
                Some(_) => self.i += 1,
            }
        }
        let s = String::from_utf8_lossy(&self.b[start..self.i]).into_owned();
        self.i += 1;
        Ok(s)
    }
    /// At `u` of `\u`: the code unit of the four hex digits after it.
    fn hex4(&mut self) -> Parsed<u32> {
        self.i += 1;
        let mut cp = 0u32;
        for _ in 0..4 {
            match self.peek() {
                None => return Err(SyntaxError::End),
                Some(c) if c.is_ascii_hexdigit() => {
                    cp = cp * 16 + char::from(c).to_digit(16).unwrap_or(0);
                    self.i += 1;
                }
                Some(_) => return self.err(),
            }
        }
        Ok(cp)
    }
    /// `-? (0 | [1-9][0-9]*) (. [0-9]*)? ([eE] [+-]? [0-9]+)?`: MariaDB takes `1.`.
    fn number(&mut self) -> Parsed<J> {
        let start = self.i;
        let digits = |p: &mut Self| {
            let s = p.i;
            while p.peek().is_some_and(|c| c.is_ascii_digit()) {
                p.i += 1;
            }
            p.i - s
        };
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return self.err(),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            digits(self);
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if digits(self) == 0 {
                return self.err();
            }
        }
        Ok(J::Num(
            String::from_utf8_lossy(&self.b[start..self.i]).into_owned(),
        ))
    }
}

/// Parses a whole JSON text (white space around it allowed).
pub fn parse(s: &str) -> Parsed<J> {
    let mut p = P {
        b: s.as_bytes(),
        i: 0,
    };
    let v = p.value(0)?;
    p.ws();
    if p.i != p.b.len() {
        return Err(SyntaxError::At(p.i + 1));
    }
    Ok(v)
}

/// `v` in MariaDB's loose format: `{"a": 1, "b": [1, 2]}`.
pub fn print(v: &J) -> String {
    let mut out = String::new();
    print_into(v, &mut out);
    out
}

fn print_into(v: &J, out: &mut String) {
    match v {
        J::Null => out.push_str("null"),
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Num(n) => out.push_str(n),
        J::Str(s) => {
            out.push('"');
            out.push_str(s);
            out.push('"');
        }
        J::Arr(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                print_into(x, out);
            }
            out.push(']');
        }
        J::Obj(members) => {
            out.push('{');
            for (i, (k, x)) in members.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push('"');
                out.push_str(k);
                out.push_str("\": ");
                print_into(x, out);
            }
            out.push('}');
        }
    }
}

/// `s` as the text of a JSON string (without quotes), escaped as MariaDB's json_escape
/// does.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// The characters a JSON string's source text stands for (`parse` checked it).
pub fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = it.by_ref().take(4).collect();
                let mut cp = u32::from_str_radix(&hex, 16).unwrap_or(0xFFFD);
                // A surrogate pair: the low half follows as \uXXXX.
                if (0xD800..0xDC00).contains(&cp) {
                    let rest: String = it.clone().take(6).collect();
                    if let Some(low) = rest
                        .strip_prefix("\\u")
                        .and_then(|h| u32::from_str_radix(h, 16).ok())
                        .filter(|l| (0xDC00..0xE000).contains(l))
                    {
                        it.by_ref().take(6).for_each(drop);
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    }
                }
                out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
            }
            // `\"`, `\\`, `\/`, and MariaDB's `\q` for q.
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    AnyKey,
    Index(usize),
    AnyIndex,
}

/// Why a path is not one (4041, 4042), or is one Quire does not evaluate.
#[derive(Debug, Clone, PartialEq)]
enum PathError {
    End,
    At(usize),
    /// MariaDB's `**`, `[last]`, `[-n]` and `[m to n]`: 1235 rather than a wrong answer.
    Unsupported,
}

/// A path: `$`, then `.key` (up to the next `.` or `[`), `."key"`, `.*`, `[n]`, `[*]`.
fn parse_path(s: &str) -> std::result::Result<Vec<Step>, PathError> {
    let b = s.as_bytes();
    let at = |i: usize| {
        if i >= b.len() {
            PathError::End
        } else {
            PathError::At(i + 1)
        }
    };
    let mut i = 0;
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    if b.get(i) != Some(&b'$') {
        return Err(at(i));
    }
    i += 1;
    let mut steps = Vec::new();
    loop {
        match b.get(i) {
            None => return Ok(steps),
            Some(b'.') => {
                i += 1;
                match b.get(i) {
                    None => return Err(PathError::End),
                    Some(b'*') => {
                        i += 1;
                        if b.get(i) == Some(&b'*') {
                            return Err(PathError::Unsupported);
                        }
                        steps.push(Step::AnyKey);
                    }
                    Some(b'"') => {
                        let rest = &s[i + 1..];
                        let end = rest.find('"').ok_or(PathError::End)?;
                        steps.push(Step::Key(unescape(&rest[..end])));
                        i += end + 2;
                    }
                    Some(b'.' | b'[') => return Err(at(i)),
                    Some(_) => {
                        let rest = &s[i..];
                        let end = rest.find(['.', '[']).unwrap_or(rest.len());
                        steps.push(Step::Key(rest[..end].to_string()));
                        i += end;
                    }
                }
            }
            Some(b'[') => {
                i += 1;
                while b.get(i) == Some(&b' ') {
                    i += 1;
                }
                match b.get(i) {
                    None => return Err(PathError::End),
                    Some(b'*') => {
                        steps.push(Step::AnyIndex);
                        i += 1;
                    }
                    Some(c) if c.is_ascii_digit() => {
                        let start = i;
                        while b.get(i).is_some_and(u8::is_ascii_digit) {
                            i += 1;
                        }
                        let n = s[start..i].parse().map_err(|_| PathError::Unsupported)?;
                        steps.push(Step::Index(n));
                    }
                    Some(b'-' | b'l') => return Err(PathError::Unsupported),
                    Some(_) => return Err(at(i)),
                }
                while b.get(i) == Some(&b' ') {
                    i += 1;
                }
                match b.get(i) {
                    None => return Err(PathError::End),
                    Some(b']') => i += 1,
                    Some(b't') => return Err(PathError::Unsupported),
                    Some(_) => return Err(at(i)),
                }
            }
            Some(b'*') if b.get(i + 1) == Some(&b'*') => return Err(PathError::Unsupported),
            Some(_) => return Err(at(i)),
        }
    }
}

fn has_wildcard(p: &[Step]) -> bool {
    p.iter().any(|s| matches!(s, Step::AnyKey | Step::AnyIndex))
}

/// The values path `p` finds in `v`, in document order.
fn find<'a>(v: &'a J, p: &[Step], out: &mut Vec<&'a J>) {
    let Some((first, rest)) = p.split_first() else {
        out.push(v);
        return;
    };
    match (first, v) {
        (Step::Key(k), J::Obj(m)) => {
            // The first member of that name, as MariaDB finds it.
            if let Some((_, x)) = m.iter().find(|(n, _)| unescape(n) == *k) {
                find(x, rest, out);
            }
        }
        (Step::AnyKey, J::Obj(m)) => m.iter().for_each(|(_, x)| find(x, rest, out)),
        (Step::Index(i), J::Arr(a)) => {
            if let Some(x) = a.get(*i) {
                find(x, rest, out);
            }
        }
        // A scalar or an object is an array of one element for `[0]`.
        (Step::Index(0), x) => find(x, rest, out),
        (Step::AnyIndex, J::Arr(a)) => a.iter().for_each(|x| find(x, rest, out)),
        _ => {}
    }
}

/// MariaDB's type name of a value (JSON_TYPE): a number is DOUBLE when it has a fraction
/// part (`-1e3` is an INTEGER to MariaDB).
fn type_name(v: &J) -> &'static str {
    match v {
        J::Null => "NULL",
        J::Bool(_) => "BOOLEAN",
        J::Num(n) if n.contains('.') => "DOUBLE",
        J::Num(_) => "INTEGER",
        J::Str(_) => "STRING",
        J::Arr(_) => "ARRAY",
        J::Obj(_) => "OBJECT",
    }
}

/// Whether `doc` contains `cand`, as MariaDB's JSON_CONTAINS decides: scalars by equal
/// value, an array when it contains every element of the candidate (a scalar candidate:
/// one element), an object when it has every key of the candidate with a containing value.
fn contains(doc: &J, cand: &J) -> bool {
    match (doc, cand) {
        (J::Obj(d), J::Obj(c)) => c.iter().all(|(k, cv)| {
            let k = unescape(k);
            d.iter()
                .find(|(n, _)| unescape(n) == k)
                .is_some_and(|(_, dv)| contains(dv, cv))
        }),
        (J::Obj(_), _) => false,
        (J::Arr(d), J::Arr(c)) => c.iter().all(|cv| d.iter().any(|dv| contains(dv, cv))),
        (J::Arr(d), c) => d.iter().any(|dv| contains(dv, c)),
        (J::Num(a), J::Num(b)) => match (a.parse::<f64>(), b.parse::<f64>()) {
            (Ok(x), Ok(y)) => x == y,
            _ => a == b,
        },
        (J::Str(a), J::Str(b)) => unescape(a) == unescape(b),
        (a, b) => a == b,
    }
}

/// An SQL value as a JSON value (the value arguments of JSON_OBJECT, JSON_ARRAY, JSON_SET,
/// …): NULL null, a number its text, a truth value (`boolean`) true or false, anything
/// else a string; `as_json`: text that is JSON already.
fn from_sql(v: &Value, as_json: bool, boolean: bool) -> J {
    match v {
        Value::Null => J::Null,
        _ if boolean => J::Bool(types::truthy(v) == Some(true)),
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_) => {
            J::Num(types::display(v))
        }
        other => {
            let s = types::display(other);
            if as_json {
                if let Ok(j) = parse(&s) {
                    return j;
                }
            }
            J::Str(escape(&s))
        }
    }
}

/// Argument `i` of `args` as a JSON value, as `kinds` says it goes in.
fn value_arg(args: &[Value], i: usize, kinds: ArgKinds) -> J {
    from_sql(
        args.get(i).unwrap_or(&Value::Null),
        kinds.json(i),
        kinds.boolean(i),
    )
}

/// Raises MariaDB's warning for a text that is not JSON in argument `i` (1-based) of `f`.
fn warn_syntax(f: JsonFn, e: SyntaxError, i: usize, env: &dyn Env) {
    let (code, message) = match e {
        SyntaxError::End => (
            4037,
            format!(
                "Unexpected end of JSON text in argument {i} to function '{}'",
                f.name()
            ),
        ),
        SyntaxError::At(at) => (
            4038,
            format!(
                "Syntax error in JSON text in argument {i} to function '{}' at position {at}",
                f.name()
            ),
        ),
        SyntaxError::Depth(at) => (
            4040,
            format!(
                "Limit of {DEPTH_LIMIT} on JSON nested structures depth is reached in \
                 argument {i} to function '{}' at position {at}",
                f.name()
            ),
        ),
    };
    super::warn(env, "Warning", code, message);
}

/// Parses argument `i` (1-based) of `f` as a JSON document: on a syntax error, MariaDB's
/// warning and `None` (the function returns NULL).
fn doc_arg(f: JsonFn, v: &Value, i: usize, env: &dyn Env) -> Option<J> {
    match parse(&types::display(v)) {
        Ok(j) => Some(j),
        Err(e) => {
            warn_syntax(f, e, i, env);
            None
        }
    }
}

/// Parses argument `i` of `f` as a path: on a bad one, Warning 4041/4042 and `None`.
fn path_arg(f: JsonFn, v: &Value, i: usize, env: &dyn Env) -> Result<Option<Vec<Step>>> {
    let s = types::display(v);
    let (code, message) = match parse_path(&s) {
        Ok(p) => return Ok(Some(p)),
        Err(PathError::Unsupported) => {
            return Err(SqlError::Unsupported(format!(
                "the JSON path '{s}' (`**`, `last`, negative indexes and ranges)"
            )))
        }
        Err(PathError::End) => (
            4041,
            format!(
                "Unexpected end of JSON path in argument {i} to function '{}'",
                f.name()
            ),
        ),
        Err(PathError::At(at)) => (
            4042,
            format!(
                "Syntax error in JSON path in argument {i} to function '{}' at position {at}",
                f.name()
            ),
        ),
    };
    super::warn(env, "Warning", code, message);
    Ok(None)
}

/// The value at path argument `p` (1-based `i`) of `doc`, or `doc` itself without one;
/// `Ok(None)`: the path finds nothing or is bad (warned).
fn target<'a>(
    f: JsonFn,
    doc: &'a J,
    p: Option<&Value>,
    i: usize,
    env: &dyn Env,
) -> Result<Option<&'a J>> {
    let Some(p) = p else {
        return Ok(Some(doc));
    };
    let Some(p) = path_arg(f, p, i, env)? else {
        return Ok(None);
    };
    let mut found = Vec::new();
    find(doc, &p, &mut found);
    Ok(found.first().copied())
}

/// Parses argument `i` (1-based) of `f` as a path that must name one place: a path with
/// `*` is Warning 4044 and `None` (the function returns NULL), as in MariaDB.
fn single_path_arg(f: JsonFn, v: &Value, i: usize, env: &dyn Env) -> Result<Option<Vec<Step>>> {
    let Some(p) = path_arg(f, v, i, env)? else {
        return Ok(None);
    };
    if has_wildcard(&p) {
        super::warn(
            env,
            "Warning",
            4044,
            format!(
                "Wildcards or range in JSON path not allowed in argument {i} to function '{}'",
                f.name()
            ),
        );
        return Ok(None);
    }
    Ok(Some(p))
}

/// The value path `p` (no wildcards) names in `v`, to change it: a key's first member, an
/// array's element, and `[0]` of a value that is not an array is the value itself.
fn find_mut<'a>(v: &'a mut J, p: &[Step]) -> Option<&'a mut J> {
    let Some((first, rest)) = p.split_first() else {
        return Some(v);
    };
    match (first, v) {
        (Step::Key(k), J::Obj(m)) => m
            .iter_mut()
            .find(|(n, _)| unescape(n) == *k)
            .and_then(|(_, x)| find_mut(x, rest)),
        (Step::Index(i), J::Arr(a)) => a.get_mut(*i).and_then(|x| find_mut(x, rest)),
        (Step::Index(0), x) => find_mut(x, rest),
        _ => None,
    }
}

/// JSON_SET / JSON_INSERT / JSON_REPLACE of `value` at `p` in `doc` (MariaDB's rules: an
/// index past an array's end appends; `[n]` past a value that is not an array makes it an
/// array of it and the new value, `[0]` of it is the value itself; a missing parent
/// changes nothing).
fn modify(doc: &mut J, p: &[Step], value: J, how: Modify) {
    let Some((last, parent_path)) = p.split_last() else {
        if how != Modify::Insert {
            *doc = value;
        }
        return;
    };
    let Some(parent) = find_mut(doc, parent_path) else {
        return;
    };
    match (last, parent) {
        (Step::Key(k), J::Obj(m)) => match m.iter_mut().find(|(n, _)| unescape(n) == *k) {
            Some((_, x)) if how != Modify::Insert => *x = value,
            Some(_) => {}
            None if how != Modify::Replace => m.push((escape(k), value)),
            None => {}
        },
        (Step::Key(_), _) => {}
        (Step::Index(i), J::Arr(a)) => match a.get_mut(*i) {
            Some(x) if how != Modify::Insert => *x = value,
            Some(_) => {}
            None if how != Modify::Replace => a.push(value),
            None => {}
        },
        (Step::Index(0), x) => {
            if how != Modify::Insert {
                *x = value;
            }
        }
        (Step::Index(_), x) => {
            if how != Modify::Replace {
                let old = std::mem::replace(x, J::Null);
                *x = J::Arr(vec![old, value]);
            }
        }
        (Step::AnyKey | Step::AnyIndex, _) => {}
    }
}

/// JSON_REMOVE of what `p` names (its first key of that name); nothing if it names
/// nothing.
fn remove(doc: &mut J, p: &[Step]) {
    let Some((last, parent_path)) = p.split_last() else {
        return;
    };
    let Some(parent) = find_mut(doc, parent_path) else {
        return;
    };
    match (last, parent) {
        (Step::Key(k), J::Obj(m)) => {
            if let Some(i) = m.iter().position(|(n, _)| unescape(n) == *k) {
                m.remove(i);
            }
        }
        (Step::Index(i), J::Arr(a)) if *i < a.len() => {
            a.remove(*i);
        }
        _ => {}
    }
}

/// MariaDB's JSON_DEPTH: a scalar or an empty array or object is 1, else one more than
/// its deepest member.
fn depth(v: &J) -> i64 {
    match v {
        J::Arr(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        J::Obj(m) => 1 + m.iter().map(|(_, x)| depth(x)).max().unwrap_or(0),
        _ => 1,
    }
}

/// `v` with the null members of its objects removed, at every depth (a patch merged into
/// nothing, RFC 7396).
fn without_nulls(v: J) -> J {
    match v {
        J::Obj(m) => J::Obj(
            m.into_iter()
                .filter(|(_, x)| *x != J::Null)
                .map(|(k, x)| (k, without_nulls(x)))
                .collect(),
        ),
        other => other,
    }
}

/// RFC 7396's merge of `patch` into `target`, as MariaDB keeps members: the target's in
/// order (a null in the patch removes one, a value merges into it), then the patch's
/// names the target lacks, duplicates included.
fn merge_patch(target: J, patch: J) -> J {
    let J::Obj(p) = patch else {
        return patch;
    };
    let t = match target {
        J::Obj(t) => t,
        _ => Vec::new(),
    };
    let mut out = Vec::with_capacity(t.len() + p.len());
    for (k, v) in &t {
        let name = unescape(k);
        match p.iter().find(|(n, _)| unescape(n) == name) {
            Some((_, J::Null)) => {}
            Some((_, pv)) => out.push((k.clone(), merge_patch(v.clone(), pv.clone()))),
            None => out.push((k.clone(), v.clone())),
        }
    }
    for (k, pv) in p {
        let name = unescape(&k);
        if pv == J::Null || t.iter().any(|(n, _)| unescape(n) == name) {
            continue;
        }
        out.push((k, without_nulls(pv)));
    }
    J::Obj(out)
}

/// JSON_MERGE_PRESERVE of two values: arrays concatenated, objects merged by name (the
/// values of a name in both merged the same way), anything else as one-element arrays.
fn merge_preserve(a: J, b: J) -> J {
    match (a, b) {
        (J::Obj(mut x), J::Obj(y)) => {
            for (k, v) in y {
                let name = unescape(&k);
                match x.iter_mut().find(|(n, _)| unescape(n) == name) {
                    Some((_, old)) => {
                        let prev = std::mem::replace(old, J::Null);
                        *old = merge_preserve(prev, v);
                    }
                    None => x.push((k, v)),
                }
            }
            J::Obj(x)
        }
        (a, b) => {
            let mut items = match a {
                J::Arr(x) => x,
                other => vec![other],
            };
            match b {
                J::Arr(y) => items.extend(y),
                other => items.push(other),
            }
            J::Arr(items)
        }
    }
}

/// A path as JSON_SEARCH prints it: `$`, `.name` (as written, unquoted), `[i]`.
fn path_text(p: &[PathPart]) -> String {
    let mut s = String::from("$");
    for part in p {
        match part {
            PathPart::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            PathPart::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// One step of a concrete path (JSON_SEARCH's answers).
#[derive(Debug, Clone)]
enum PathPart {
    Key(String),
    Index(usize),
}

/// Whether concrete path `at` lies under `filter` (a path that may have wildcards).
fn under(at: &[PathPart], filter: &[Step]) -> bool {
    filter.len() <= at.len()
        && filter.iter().zip(at).all(|(f, a)| match (f, a) {
            (Step::Key(k), PathPart::Key(n)) => unescape(n) == *k,
            (Step::AnyKey, PathPart::Key(_)) => true,
            (Step::Index(i), PathPart::Index(j)) => i == j,
            (Step::AnyIndex, PathPart::Index(_)) => true,
            _ => false,
        })
}

/// JSON_SEARCH's walk: the paths of the scalars of `v` (in document order) whose text
/// matches `pattern` and that lie under one of `filters` (all, without filters).
#[allow(clippy::too_many_arguments)]
fn search(
    v: &J,
    at: &mut Vec<PathPart>,
    pattern: &str,
    escape_char: char,
    coll: quire_engine::row::Collation,
    filters: &[Vec<Step>],
    one: bool,
    out: &mut Vec<String>,
) {
    if one && !out.is_empty() {
        return;
    }
    match v {
        J::Arr(a) => {
            for (i, x) in a.iter().enumerate() {
                at.push(PathPart::Index(i));
                search(x, at, pattern, escape_char, coll, filters, one, out);
                at.pop();
            }
        }
        J::Obj(m) => {
            for (k, x) in m {
                at.push(PathPart::Key(k.clone()));
                search(x, at, pattern, escape_char, coll, filters, one, out);
                at.pop();
            }
        }
        scalar => {
            let text = match scalar {
                J::Str(s) => unescape(s),
                other => print(other),
            };
            if (filters.is_empty() || filters.iter().any(|f| under(at, f)))
                && crate::expr::like(&text, pattern, escape_char, coll)
            {
                out.push(path_text(at));
            }
        }
    }
}

/// `'one'` or `'all'` (argument `i`, any case) of JSON_CONTAINS_PATH and JSON_SEARCH:
/// `Some(true)` for one; anything else is Warning 4046 and `None`.
fn one_or_all(f: JsonFn, v: &Value, i: usize, env: &dyn Env) -> Option<bool> {
    match types::display(v).to_ascii_lowercase().as_str() {
        "one" => Some(true),
        "all" => Some(false),
        _ => {
            super::warn(
                env,
                "Warning",
                4046,
                format!(
                    "Argument {i} to function '{}' must be \"one\" or \"all\".",
                    f.name()
                ),
            );
            None
        }
    }
}

/// Evaluates JSON function `f` on its arguments' values.
pub fn eval(f: JsonFn, args: Vec<Value>, env: &dyn Env) -> Result<Value> {
    let arg = |i: usize| args.get(i).unwrap_or(&Value::Null);
    // A NULL document or path is a NULL answer; a value may be NULL (JSON null), and so
    // may JSON_SEARCH's escape.
    let null_answer = match f {
        JsonFn::Object(_) | JsonFn::Array(_) => false,
        JsonFn::Modify(..) | JsonFn::ArrayAppend(_) | JsonFn::ArrayInsert(_) => args
            .iter()
            .enumerate()
            .any(|(i, v)| (i == 0 || i % 2 == 1) && matches!(v, Value::Null)),
        JsonFn::Search(_) => args
            .iter()
            .enumerate()
            .any(|(i, v)| i != 3 && matches!(v, Value::Null)),
        _ => super::any_null(&args),
    };
    if null_answer {
        return Ok(Value::Null);
    }
    Ok(match f {
        JsonFn::Valid => Value::Int(i64::from(parse(&types::display(arg(0))).is_ok())),
        JsonFn::Quote => match arg(0) {
            Value::Str(s) => Value::Str(format!("\"{}\"", escape(s))),
            Value::Bytes(b) => Value::Str(format!("\"{}\"", escape(&String::from_utf8_lossy(b)))),
            // MariaDB quotes strings only.
            _ => Value::Null,
        },
        JsonFn::Unquote => {
            let s = types::display(arg(0));
            if !s.starts_with('"') {
                return Ok(Value::Str(s));
            }
            match parse(&s) {
                Ok(J::Str(inner)) => Value::Str(unescape(&inner)),
                Ok(_) => Value::Str(s),
                Err(e) => {
                    warn_syntax(f, e, 1, env);
                    Value::Str(s)
                }
            }
        }
        JsonFn::Type => match doc_arg(f, arg(0), 1, env) {
            Some(j) => Value::Str(type_name(&j).into()),
            None => Value::Null,
        },
        JsonFn::Extract => {
            let Some(doc) = doc_arg(f, arg(0), 1, env) else {
                return Ok(Value::Null);
            };
            let mut paths = Vec::new();
            for (i, p) in args.iter().enumerate().skip(1) {
                match path_arg(f, p, i + 1, env)? {
                    Some(p) => paths.push(p),
                    None => return Ok(Value::Null),
                }
            }
            let multiple = paths.len() > 1 || paths.iter().any(|p| has_wildcard(p));
            let mut found = Vec::new();
            for p in &paths {
                find(&doc, p, &mut found);
            }
            match (multiple, found.as_slice()) {
                (_, []) => Value::Null,
                (false, [one]) => Value::Str(print(one)),
                _ => Value::Str(print(&J::Arr(found.into_iter().cloned().collect()))),
            }
        }
        JsonFn::Length | JsonFn::Keys => {
            let Some(doc) = doc_arg(f, arg(0), 1, env) else {
                return Ok(Value::Null);
            };
            match (f, target(f, &doc, args.get(1), 2, env)?) {
                (_, None) => Value::Null,
                (JsonFn::Keys, Some(J::Obj(m))) => {
                    // Each name once, in first-seen order.
                    let mut keys: Vec<&String> = Vec::new();
                    for (k, _) in m {
                        if !keys.contains(&k) {
                            keys.push(k);
                        }
                    }
                    Value::Str(print(&J::Arr(
                        keys.into_iter().map(|k| J::Str(k.clone())).collect(),
                    )))
                }
                (JsonFn::Keys, Some(_)) => Value::Null,
                (_, Some(J::Arr(a))) => Value::Int(a.len() as i64),
                (_, Some(J::Obj(m))) => Value::Int(m.len() as i64),
                (_, Some(_)) => Value::Int(1),
            }
        }
        JsonFn::Contains => {
            let Some(doc) = doc_arg(f, arg(0), 1, env) else {
                return Ok(Value::Null);
            };
            let Some(cand) = doc_arg(f, arg(1), 2, env) else {
                return Ok(Value::Null);
            };
            match target(f, &doc, args.get(2), 3, env)? {
                None => Value::Null,
                Some(t) => Value::Int(i64::from(contains(t, &cand))),
            }
        }
        JsonFn::Object(kinds) => {
            let mut members = Vec::new();
            for (i, pair) in args.chunks(2).enumerate() {
                // A NULL name is MariaDB's "".
                let k = match &pair[0] {
                    Value::Null => String::new(),
                    k => escape(&types::display(k)),
                };
                members.push((k, value_arg(&args, 2 * i + 1, kinds)));
            }
            Value::Str(print(&J::Obj(members)))
        }
        JsonFn::Array(kinds) => Value::Str(print(&J::Arr(
            (0..args.len())
                .map(|i| value_arg(&args, i, kinds))
                .collect(),
        ))),
        JsonFn::ContainsPath => {
            let Some(doc) = doc_arg(f, arg(0), 1, env) else {
                return Ok(Value::Null);
            };
            let Some(one) = one_or_all(f, arg(1), 2, env) else {
                return Ok(Value::Null);
            };
            let mut found = Vec::with_capacity(args.len().saturating_sub(2));
            for (i, p) in args.iter().enumerate().skip(2) {
                let Some(p) = path_arg(f, p, i + 1, env)? else {
                    return Ok(Value::Null);
                };
                let mut hits = Vec::new();
                find(&doc, &p, &mut hits);
                found.push(!hits.is_empty());
            }
            let yes = if one {
                found.iter().any(|x| *x)
            } else {
                found.iter().all(|x| *x)
            };
            Value::Int(i64::from(yes))
        }
        JsonFn::Depth => match doc_arg(f, arg(0), 1, env) {
            Some(j) => Value::Int(depth(&j)),
            None => Value::Null,
        },
        JsonFn::Modify(how, kinds) => {
            let Some(mut doc) = doc_arg(f, arg(0), 1, env) else {
                return Ok(Value::Null);
            };
            for i in (1..args.len()).step_by(2) {
                let Some(p) = single_path_arg(f, &args[i], i + 1, env)? else {
                    return Ok(Value::Null);
                };
                modify(&mut doc, &p, value_arg(&args, i + 1, kinds), how);
            }
            Value::Str(print(&doc))
        }
        JsonFn::Remove => {
            let Some(mut doc) = doc_arg(f, arg(0), 1, env) else {
                return Ok(Value::Null);
            };
            for (i, p) in args.iter().enumerate().skip(1) {
                let Some(p) = single_path_arg(f, p, i + 1, env)? else {
                    return Ok(Value::Null);
                };
                if p.is_empty() {
                    super::warn(
                        env,
                        "Warning",
                        4051,
                        format!(
                            "Path expression '$' is not allowed in argument {} to function '{}'.",
                            i + 1,
                            f.name()
                        ),
                    );
                    return Ok(Value::Null);
                }
                remove(&mut doc, &p);
            }
            Value::Str(print(&doc))
        }
        JsonFn::ArrayAppend(kinds) => {
            let Some(mut doc) = doc_arg(f, arg(0), 1, env) else {
                return Ok(Value::Null);
            };
            for i in (1..args.len()).step_by(2) {
                let Some(p) = single_path_arg(f, &args[i], i + 1, env)? else {
                    return Ok(Value::Null);
                };
                // A path that names nothing makes the answer NULL, as in MariaDB.
                let Some(t) = find_mut(&mut doc, &p) else {
                    return Ok(Value::Null);
                };
                let value = value_arg(&args, i + 1, kinds);
                match t {
                    J::Arr(a) => a.push(value),
                    other => {
                        let old = std::mem::replace(other, J::Null);
                        *other = J::Arr(vec![old, value]);
                    }
                }
            }
            Value::Str(print(&doc))
        }
        JsonFn::ArrayInsert(kinds) => {
            let Some(mut doc) = doc_arg(f, arg(0), 1, env) else {
                return Ok(Value::Null);
            };
            for i in (1..args.len()).step_by(2) {
                let Some(p) = single_path_arg(f, &args[i], i + 1, env)? else {
                    return Ok(Value::Null);
                };
                // The path must end at an array element.
                let Some((Step::Index(at), parent_path)) = p.split_last() else {
                    return Ok(Value::Null);
                };
                let value = value_arg(&args, i + 1, kinds);
                if let Some(J::Arr(a)) = find_mut(&mut doc, parent_path) {
                    let at = (*at).min(a.len());
                    a.insert(at, value);
                }
            }
            Value::Str(print(&doc))
        }
        JsonFn::MergePatch | JsonFn::MergePreserve => {
            let mut out: Option<J> = None;
            for (i, v) in args.iter().enumerate() {
                let Some(j) = doc_arg(f, v, i + 1, env) else {
                    return Ok(Value::Null);
                };
                out = Some(match out {
                    None => j,
                    Some(prev) if f == JsonFn::MergePatch => merge_patch(prev, j),
                    Some(prev) => merge_preserve(prev, j),
                });
            }
            match out {
                Some(j) => Value::Str(print(&j)),
                None => Value::Null,
            }
        }
        JsonFn::Search(coll) => {
            let Some(doc) = doc_arg(f, arg(0), 1, env) else {
                return Ok(Value::Null);
            };
            let Some(one) = one_or_all(f, arg(1), 2, env) else {
                return Ok(Value::Null);
            };
            let pattern = types::display(arg(2));
            // The escape character: `\\` when NULL or empty, else exactly one (1210).
            let escape_char = match args.get(3) {
                None | Some(Value::Null) => '\\',
                Some(v) => {
                    let e = types::display(v);
                    let mut chars = e.chars();
                    match (chars.next(), chars.next()) {
                        (None, _) => '\\',
                        (Some(c), None) => c,
                        _ => return Err(SqlError::WrongArguments("ESCAPE".into())),
                    }
                }
            };
            let mut filters = Vec::new();
            for (i, p) in args.iter().enumerate().skip(4) {
                match path_arg(f, p, i + 1, env)? {
                    Some(p) => filters.push(p),
                    None => return Ok(Value::Null),
                }
            }
            let mut out = Vec::new();
            search(
                &doc,
                &mut Vec::new(),
                &pattern,
                escape_char,
                coll,
                &filters,
                one,
                &mut out,
            );
            let quoted = |s: &String| J::Str(escape(s));
            match out.as_slice() {
                [] => Value::Null,
                [p] => Value::Str(print(&quoted(p))),
                many => Value::Str(print(&J::Arr(many.iter().map(quoted).collect()))),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_print_in_mariadb_loose_format_keeping_source_text() {
        let j = parse(r#" {"a":1.50,"b" : [1,2,{"c":"x\u0041"}],"a":null} "#).expect("valid");
        assert_eq!(
            print(&j),
            r#"{"a": 1.50, "b": [1, 2, {"c": "x\u0041"}], "a": null}"#
        );
        assert_eq!(print(&parse("1e400").expect("valid")), "1e400");
    }

    #[test]
    fn invalid_documents_say_where_as_mariadb_does() {
        use SyntaxError::{At, Depth, End};
        for (s, e) in [
            ("{", End),
            ("[1,2,]", At(6)),
            ("01", At(2)),
            ("[1 2]", At(4)),
            ("\"a", End),
            ("tru", End),
            ("trx", At(2)),
            ("  x", At(3)),
            ("[1] 2", At(5)),
            ("\"\\u12\"", At(6)),
            ("\"\\ud800\"", At(8)),
            ("", End),
        ] {
            assert_eq!(parse(s), Err(e), "{s:?}");
        }
        for ok in ["1.", "-0", "\"\\q\"", "\"\\ud83d\\ude00\"", " [1] "] {
            assert!(parse(ok).is_ok(), "{ok:?}");
        }
        let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(parse(&nest(31)).is_ok());
        assert_eq!(parse(&nest(32)), Err(Depth(32)));
    }

    #[test]
    fn paths_find_keys_indexes_and_wildcards() {
        let j = parse(r#"{"a": [10, 20, {"b": 3}], "c d": 4}"#).expect("valid");
        let get = |p: &str| {
            let mut out = Vec::new();
            find(&j, &parse_path(p).expect(p), &mut out);
            out.into_iter().map(print).collect::<Vec<_>>()
        };
        assert_eq!(get("$.a[1]"), ["20"]);
        assert_eq!(get("$.a[2].b"), ["3"]);
        assert_eq!(get("$.\"c d\""), ["4"]);
        assert_eq!(get("$.c d"), ["4"]);
        assert_eq!(get("$.a[*]"), ["10", "20", r#"{"b": 3}"#]);
        assert_eq!(get("$.*").len(), 2);
        assert!(get("$.x").is_empty());
        assert_eq!(parse_path("a.b"), Err(PathError::At(1)));
        assert_eq!(parse_path("$ .a"), Err(PathError::At(2)));
        assert_eq!(parse_path("$[a]"), Err(PathError::At(3)));
        assert_eq!(parse_path("$.a[0"), Err(PathError::End));
        assert_eq!(parse_path("$."), Err(PathError::End));
        for p in ["$[last]", "$[0 to 1]", "$**.b", "$[-1]"] {
            assert_eq!(parse_path(p), Err(PathError::Unsupported), "{p}");
        }
    }

    #[test]
    fn set_insert_and_replace_follow_mariadb_at_the_edges() {
        let run = |doc: &str, path: &str, how: Modify| {
            let mut d = parse(doc).expect(doc);
            modify(
                &mut d,
                &parse_path(path).expect(path),
                J::Num("9".into()),
                how,
            );
            print(&d)
        };
        use Modify::{Insert, Replace, Set};
        assert_eq!(run("[1, 2]", "$[5]", Set), "[1, 2, 9]");
        assert_eq!(run("[1, 2]", "$[5]", Replace), "[1, 2]");
        assert_eq!(run("[1, 2]", "$[0]", Insert), "[1, 2]");
        assert_eq!(run("1", "$[1]", Set), "[1, 9]");
        assert_eq!(run("1", "$[0]", Set), "9");
        assert_eq!(run(r#"{"a": 1}"#, "$.b", Insert), r#"{"a": 1, "b": 9}"#);
        assert_eq!(run(r#"{"a": 1}"#, "$.b", Replace), r#"{"a": 1}"#);
        assert_eq!(run(r#"{"a": 1}"#, "$.x.y", Set), r#"{"a": 1}"#);
        assert_eq!(run("[1]", "$", Set), "9");
        assert_eq!(run("[1]", "$", Insert), "[1]");
    }

    #[test]
    fn merge_patch_removes_nulls_and_keeps_the_targets_order() {
        let m = |a: &str, b: &str| print(&merge_patch(parse(a).expect(a), parse(b).expect(b)));
        assert_eq!(
            m(r#"{"a": 1, "b": 2}"#, r#"{"b": null, "c": 3}"#),
            r#"{"a": 1, "c": 3}"#
        );
        assert_eq!(m(r#"{"a": 1}"#, r#"{"a": {"b": null}}"#), r#"{"a": {}}"#);
        assert_eq!(m("[1]", r#"{"a": 1}"#), r#"{"a": 1}"#);
        assert_eq!(m(r#"{"a": [1, 2]}"#, r#"{"a": [3]}"#), r#"{"a": [3]}"#);
        assert_eq!(
            print(&merge_preserve(
                parse(r#"{"a": 1}"#).expect("a"),
                parse(r#"{"a": 2, "b": 3}"#).expect("b")
            )),
            r#"{"a": [1, 2], "b": 3}"#
        );
    }

    #[test]
    fn depth_counts_levels_of_non_empty_containers() {
        for (doc, d) in [
            ("1", 1),
            ("[]", 1),
            ("[[]]", 2),
            ("[1, [2]]", 3),
            (r#"{"a": {"b": [1]}}"#, 4),
        ] {
            assert_eq!(depth(&parse(doc).expect(doc)), d, "{doc}");
        }
    }

    #[test]
    fn strings_escape_and_unescape_both_ways() {
        let s = "a\"b\\c\nd\u{1}é😀";
        assert_eq!(unescape(&escape(s)), s);
        assert_eq!(unescape(r"\ud83d\ude00"), "😀");
        assert_eq!(unescape(r"\q"), "q");
    }

    #[test]
    fn containment_follows_mariadb() {
        let c = |d: &str, x: &str| contains(&parse(d).expect(d), &parse(x).expect(x));
        assert!(c("[1, 2, [3]]", "1"));
        assert!(c("[1, 2, [3]]", "[2, 1]"));
        assert!(c(r#"{"a": 1, "b": {"c": 2}}"#, r#"{"b": {"c": 2}}"#));
        assert!(c(r#"{"a": [1, 2]}"#, r#"{"a": 1}"#));
        assert!(!c(r#"{"a": 1}"#, r#"{"a": 2}"#));
        assert!(!c(r#"{"a": 1}"#, "1"));
        assert!(c("1.0", "1"));
        assert!(!c(r#""1""#, "1"));
    }
}
