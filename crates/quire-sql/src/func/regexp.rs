//! REGEXP / RLIKE and the REGEXP_* functions, on Rust's `regex` crate.
//!
//! MariaDB uses PCRE2. The two agree on what applications write (classes, `[[:digit:]]`,
//! anchors, repetition, alternation, `(?i)`), with these differences:
//! - `regex` has no backreferences and no look-around: a pattern using them answers 1235
//!   (not a wrong answer); other patterns that do not compile answer 1139 with `regex`'s
//!   message rather than PCRE's;
//! - `\w`, `\d`, `\s` and `.` are Unicode-aware in `regex`; PCRE's default (without
//!   `(*UCP)`) makes `\w` and `\d` ASCII-only;
//! - a pattern matches case-insensitively when the comparison's collation is `_ci` (as
//!   MariaDB's), and `.` does not match a newline, nor `^`/`$` a line end, in both.
//!
//! Compiled patterns are kept per thread (a small cache keyed by pattern and case), so a
//! pattern from a literal is compiled once per connection thread, not once per row.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use quire_engine::row::{Collation, Value};
use regex::{Regex, RegexBuilder};

use super::StrFn;
use crate::error::{Result, SqlError};
use crate::types;

/// Compiled patterns a thread keeps.
const CACHE_MAX: usize = 64;

thread_local! {
    static CACHE: RefCell<HashMap<(String, bool), Arc<Regex>>> = RefCell::new(HashMap::new());
}

/// `pattern` compiled (case-insensitively with `ci`), from the thread's cache.
fn compile(pattern: &str, ci: bool) -> Result<Arc<Regex>> {
    let key = (pattern.to_string(), ci);
    if let Some(r) = CACHE.with(|c| c.borrow().get(&key).cloned()) {
        return Ok(r);
    }
    let r = RegexBuilder::new(pattern)
        .case_insensitive(ci)
        .size_limit(1 << 24)
        .build()
        .map_err(|e| {
            let msg = e.to_string();
            if msg.contains("look-around") || msg.contains("backreference") {
                SqlError::Unsupported(format!(
                    "REGEXP with look-around or backreferences: {pattern}"
                ))
            } else {
                let last = msg.lines().last().unwrap_or("").trim();
                SqlError::Regex(last.trim_start_matches("error: ").to_string())
            }
        })?;
    let r = Arc::new(r);
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= CACHE_MAX {
            c.clear();
        }
        c.insert(key, r.clone());
    });
    Ok(r)
}

/// MariaDB's replacement text (`\1` for a group, `\\` for a backslash) in `regex`'s syntax.
fn replacement(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\\' => match it.next() {
                Some(d) if d.is_ascii_digit() => {
                    out.push_str("${");
                    out.push(d);
                    out.push('}');
                }
                Some('$') => out.push_str("$$"),
                Some(other) => out.push(other),
                None => out.push('\\'),
            },
            '$' => out.push_str("$$"),
            c => out.push(c),
        }
    }
    out
}

pub fn eval(f: StrFn, coll: Collation, args: &[Value]) -> Result<Value> {
    if super::any_null(args) {
        return Ok(Value::Null);
    }
    let s = types::to_text(args[0].clone());
    let p = types::to_text(args[1].clone());
    let binary = args.iter().any(|v| matches!(v, Value::Bytes(_)));
    let ci = !binary && coll.is_ci();
    let re = compile(&p, ci)?;
    Ok(match f {
        StrFn::Regexp => Value::Int(i64::from(re.is_match(&s))),
        StrFn::RegexpReplace => {
            // MariaDB replaces non-empty matches only ('^' replaces nothing).
            let with = replacement(&types::to_text(args[2].clone()));
            let mut out = String::with_capacity(s.len());
            let mut last = 0;
            for caps in re.captures_iter(&s) {
                let Some(m) = caps.get(0) else { continue };
                if m.is_empty() {
                    continue;
                }
                out.push_str(&s[last..m.start()]);
                caps.expand(&with, &mut out);
                last = m.end();
            }
            out.push_str(&s[last..]);
            Value::Str(out)
        }
        StrFn::RegexpSubstr => Value::Str(re.find(&s).map_or(String::new(), |m| m.as_str().into())),
        StrFn::RegexpInstr => Value::Int(
            re.find(&s)
                .map_or(0, |m| s[..m.start()].chars().count() as i64 + 1),
        ),
        _ => Value::Null,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mariadb_replacement_syntax_becomes_regex_syntax() {
        assert_eq!(replacement("[\\1]"), "[${1}]");
        assert_eq!(replacement("$5 \\\\"), "$$5 \\");
    }

    #[test]
    fn unsupported_pattern_features_are_1235_not_a_wrong_answer() {
        assert!(matches!(
            compile("(a)\\1", false),
            Err(SqlError::Unsupported(_))
        ));
        assert!(matches!(compile("(", false), Err(SqlError::Regex(_))));
    }
}
