//! SQL-level prepared statements: `PREPARE name FROM 'text' | @var | expr`, `EXECUTE name
//! [USING e, …]`, `DEALLOCATE PREPARE name` / `DROP PREPARE name`. A statement is kept as
//! COM_STMT_PREPARE keeps one (`Kept`: its plan, its parameter count, the collation and
//! sql_mode it was bound under; planned again after a DDL), under its name instead of an id,
//! and run by the same code (`Session::run_kept`).
//!
//! Invariants:
//! 1. A name (case-insensitive: kept lower-cased) names at most one statement. PREPARE of
//!    a name in use drops the old statement first, so a PREPARE that fails leaves the name
//!    unused, as in MariaDB.
//! 2. EXECUTE passes exactly as many values as the statement has `?` (1210 otherwise);
//!    each USING item is evaluated when EXECUTE runs (a user variable gives its value,
//!    NULL if unset).
//! 3. Every statement kept (here or by COM_STMT_PREPARE) counts once in the instance's
//!    `prepared_count` while it is kept: at most `max_prepared_stmt_count` (1461).
//! 4. Named statements live until DEALLOCATE, a new PREPARE of the name, COM_RESET_CONNECTION
//!    or the end of the session; the binary protocol's statements (by id) are apart.

use quire_engine::row::Value;

use crate::error::{Result, SqlError};
use crate::meta::RowSink;
use crate::session::{Outcome, Session};

/// The first word of `s` (an identifier, backquotes removed) and the rest of the text.
fn name_and_rest(s: &str) -> Option<(String, &str)> {
    let s = s.trim_start();
    if let Some(r) = s.strip_prefix('`') {
        let end = r.find('`')?;
        return Some((r[..end].to_string(), &r[end + 1..]));
    }
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(s.len());
    if end == 0 {
        return None;
    }
    Some((s[..end].to_string(), &s[end..]))
}

/// `s` without the leading keyword `kw` (any case) and the white space after it.
fn keyword<'t>(s: &'t str, kw: &str) -> Option<&'t str> {
    let s = s.trim_start();
    let head = s.get(..kw.len())?;
    let rest = &s[kw.len()..];
    let boundary = rest
        .chars()
        .next()
        .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
    (head.eq_ignore_ascii_case(kw) && boundary).then_some(rest)
}

/// EXECUTE IMMEDIATE's text split at its USING keyword (outside quotes and parentheses):
/// the source expression and the argument list.
fn split_using(s: &str) -> (&str, Option<&str>) {
    let b = s.as_bytes();
    let (mut i, mut depth) = (0, 0usize);
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' | b'`' => i = crate::dispatch::quoted_end(b, i),
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            _ if depth == 0
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                if let Some(rest) = keyword(&s[i..], "using") {
                    return (&s[..i], Some(rest));
                }
            }
            _ => {}
        }
        i += 1;
    }
    (s, None)
}

fn syntax(text: &str) -> SqlError {
    SqlError::Parse {
        near: text.trim().chars().take(80).collect(),
        line: 1,
    }
}

impl Session<'_> {
    /// PREPARE, EXECUTE, DEALLOCATE PREPARE and DROP PREPARE; `None` for any other
    /// statement (`first` is its first word, lower-cased).
    pub(crate) fn sql_prepare_command(
        &mut self,
        first: &str,
        text: &str,
        sink: &mut dyn RowSink,
    ) -> Result<Option<Outcome>> {
        let after_first = &text[first.len().min(text.len())..];
        match first {
            "prepare" => {
                let (name, rest) = name_and_rest(after_first).ok_or_else(|| syntax(text))?;
                let source = keyword(rest, "from").ok_or_else(|| syntax(rest))?;
                self.sql_prepare(&name.to_lowercase(), source).map(Some)
            }
            "execute" => {
                let (name, rest) = name_and_rest(after_first).ok_or_else(|| syntax(text))?;
                if name.eq_ignore_ascii_case("immediate")
                    && !rest.trim().is_empty()
                    && keyword(rest, "using").is_none()
                {
                    let (source, list) = split_using(rest);
                    let args = match list {
                        Some(l) => crate::dispatch::split_list(l).ok_or_else(|| syntax(l))?,
                        None => Vec::new(),
                    };
                    return self.execute_immediate(source, &args, sink).map(Some);
                }
                let args = match keyword(rest, "using") {
                    Some(list) => crate::dispatch::split_list(list).ok_or_else(|| syntax(list))?,
                    None if rest.trim().is_empty() => Vec::new(),
                    None => return Err(syntax(rest)),
                };
                self.sql_execute(&name.to_lowercase(), &args, sink)
                    .map(Some)
            }
            "deallocate" | "drop" => {
                let Some(rest) = keyword(after_first, "prepare") else {
                    return if first == "drop" {
                        Ok(None)
                    } else {
                        Err(syntax(after_first))
                    };
                };
                let (name, tail) = name_and_rest(rest).ok_or_else(|| syntax(rest))?;
                self.count_com("Com_stmt_close");
                if !tail.trim().is_empty() {
                    return Err(syntax(tail));
                }
                if self.named.remove(&name.to_lowercase()).is_none() {
                    return Err(SqlError::UnknownStatementName {
                        name,
                        what: "DEALLOCATE PREPARE",
                    });
                }
                self.release_prepared(1);
                Ok(Some(Outcome::ok(0)))
            }
            _ => Ok(None),
        }
    }

    /// PREPARE name FROM source: the text is the source's value as a string (a NULL or a
    /// number is its printed form, which fails to parse as MariaDB's does).
    fn sql_prepare(&mut self, name: &str, source: &str) -> Result<Outcome> {
        self.count_com("Com_stmt_prepare");
        // Invariant 1: the old statement of this name is gone whatever follows.
        if self.named.remove(name).is_some() {
            self.release_prepared(1);
        }
        let kept = self.kept_from_source(source)?;
        self.reserve_prepared()?;
        self.named.insert(name.to_string(), kept);
        Ok(Outcome::ok(0))
    }

    /// `EXECUTE IMMEDIATE source [USING …]`: PREPARE and EXECUTE of a statement with no
    /// name, which is gone afterwards.
    fn execute_immediate(
        &mut self,
        source: &str,
        args: &[&str],
        sink: &mut dyn RowSink,
    ) -> Result<Outcome> {
        let k = self.kept_from_source(source)?;
        let params = self.execute_args(&k, args)?;
        self.run_kept(&k, &params, sink)
    }

    /// The values of EXECUTE's USING list for statement `k` (invariant 2).
    fn execute_args(&self, k: &crate::session::Kept, args: &[&str]) -> Result<Vec<Value>> {
        if args.len() != usize::from(k.params) {
            return Err(SqlError::WrongArguments("EXECUTE".into()));
        }
        args.iter()
            .map(|a| self.eval_expr_text(a).map(|(v, _)| v))
            .collect()
    }

    /// The statement PREPARE's source gives, prepared.
    fn kept_from_source(&self, source: &str) -> Result<crate::session::Kept> {
        let (v, _) = self.eval_expr_text(source)?;
        let text = match v {
            Value::Null => "NULL".to_string(),
            Value::Str(s) => s,
            Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
            other => crate::types::display(&other),
        };
        let text = crate::dispatch::skip_leading_comments(&text)
            .trim_end()
            .trim_end_matches(';')
            .trim_end()
            .to_string();
        let first = text
            .split(|c: char| c.is_whitespace() || c == '(')
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        let drop_prepare = first == "drop" && {
            let rest = &text[first.len()..];
            keyword(rest, "prepare").is_some()
        };
        if matches!(first.as_str(), "prepare" | "execute" | "deallocate") || drop_prepare {
            return Err(SqlError::NotPreparable);
        }
        self.make_kept(&text, self.sv.conn())
    }

    /// EXECUTE name USING args.
    fn sql_execute(
        &mut self,
        name: &str,
        args: &[&str],
        sink: &mut dyn RowSink,
    ) -> Result<Outcome> {
        let Some(k) = self.named.get(name) else {
            return Err(SqlError::UnknownStatementName {
                name: name.to_string(),
                what: "EXECUTE",
            });
        };
        let k = k.clone();
        let params = self.execute_args(&k, args)?;
        let gen = self
            .inst
            .generation
            .load(std::sync::atomic::Ordering::Acquire);
        let mut k = k;
        if !k.current(gen, self.inst.db) || k.db != self.sv.db {
            // A DDL since PREPARE: planned again from its text, under its own settings.
            k = self.make_kept(&k.sql, k.conn)?;
            self.named.insert(name.to_string(), k.clone());
        }
        self.count_com("Com_stmt_execute");
        if let Some(name) = k.com {
            self.count_com(name);
        }
        self.run_kept(&k, &params, sink)
    }

    /// COM_RESET_CONNECTION: the named statements are gone.
    pub fn clear_named_statements(&mut self) {
        self.release_prepared(self.named.len());
        self.named.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statement_names_and_keywords_are_read_as_mariadb_reads_them() {
        assert_eq!(
            name_and_rest(" s FROM 'x'"),
            Some(("s".into(), " FROM 'x'"))
        );
        assert_eq!(
            name_and_rest("`a b` USING 1"),
            Some(("a b".into(), " USING 1"))
        );
        assert_eq!(keyword(" FROM @q", "from"), Some(" @q"));
        assert_eq!(keyword(" FROMAGE", "from"), None);
        assert_eq!(keyword(" using 1, 2", "USING"), Some(" 1, 2"));
        assert_eq!(
            split_using(" 'SELECT ? USING' USING @a, 2"),
            (" 'SELECT ? USING'", Some(" @a, 2"))
        );
        assert_eq!(
            split_using(" CONCAT('a', 'b')"),
            (" CONCAT('a', 'b')", None)
        );
    }
}
