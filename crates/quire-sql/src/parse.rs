//! Parsing with sqlparser's MySQL dialect, and MySQL's 1064 message for what fails.

use std::collections::HashMap;

use quire_engine::table::ReadLock;
use sqlparser::ast::Statement;
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, Tokenizer};

use crate::error::{Result, SqlError};

/// MySQL quotes the statement from where parsing failed, up to 80 characters.
fn near(text: &str, line: u64, col: u64) -> String {
    let mut off = 0usize;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i as u64 + 1 == line {
            off += l
                .char_indices()
                .nth(col.saturating_sub(1) as usize)
                .map_or(l.len(), |(b, _)| b);
            break;
        }
        off += l.len();
    }
    let rest = text.get(off..).unwrap_or("");
    rest.chars().take(80).collect()
}

fn parse_error(text: &str, e: ParserError) -> SqlError {
    let msg = e.to_string();
    // sqlparser: "... at Line: 1, Column: 8"
    let pos = |key: &str| -> Option<u64> {
        let i = msg.rfind(key)? + key.len();
        msg[i..]
            .trim_start()
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    };
    match (pos("Line:"), pos("Column:")) {
        (Some(l), Some(c)) => {
            // The column points after the bad token's start; back up to its start.
            let mut n = near(text, l, c);
            if n.is_empty() {
                n = String::new();
            }
            SqlError::Parse { near: n, line: l }
        }
        _ => SqlError::Parse {
            near: text.chars().take(80).collect(),
            line: 1,
        },
    }
}

fn parse_all(text: &str) -> Result<Vec<Statement>> {
    let dialect = MySqlDialect {};
    Parser::new(&dialect)
        .try_with_sql(text)
        .and_then(|mut p| p.parse_statements())
        .map_err(|e| parse_error(text, e))
}

/// Where each `?` is (line, column) → its parameter number.
pub type ParamPositions = HashMap<(u64, u64), usize>;

/// One statement and the lock a `LOCK IN SHARE MODE` suffix asked for.
pub fn parse_one(text: &str) -> Result<(Statement, Option<ReadLock>)> {
    let (text, lock) = match crate::dispatch::strip_lock_in_share_mode(text) {
        Some(rest) => (rest, Some(ReadLock::Shared)),
        None => (text, None),
    };
    let mut stmts = parse_all(text)?;
    match stmts.len() {
        0 => Err(SqlError::EmptyQuery),
        1 => Ok((stmts.remove(0), lock)),
        _ => Err(SqlError::Unsupported(
            "several statements in one query".into(),
        )),
    }
}

/// A statement to prepare: also the positions of its `?` placeholders, numbered in text
/// order.
pub fn parse_prepared(text: &str) -> Result<(Statement, Option<ReadLock>, ParamPositions)> {
    let (stmt, lock) = parse_one(text)?;
    let stripped = crate::dispatch::strip_lock_in_share_mode(text).unwrap_or(text);
    let dialect = MySqlDialect {};
    let toks = Tokenizer::new(&dialect, stripped)
        .tokenize_with_location()
        .map_err(|e| SqlError::Parse {
            near: e.to_string(),
            line: 1,
        })?;
    let mut params = HashMap::new();
    for t in toks {
        if matches!(&t.token, Token::Placeholder(p) if p == "?") {
            let n = params.len();
            params.insert((t.span.start.line, t.span.start.column), n);
        }
    }
    Ok((stmt, lock, params))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_syntax_error_quotes_the_text_from_the_bad_token() {
        let Err(SqlError::Parse { near, line }) = parse_one("SELEC 1") else {
            panic!("expected a parse error");
        };
        assert_eq!(line, 1);
        assert!(near.starts_with("SELEC"), "{near}");
    }

    #[test]
    fn placeholders_are_numbered_in_text_order() {
        let (_, _, p) = parse_prepared("SELECT c FROM t WHERE id BETWEEN ? AND ?").expect("parses");
        let mut v: Vec<_> = p.into_iter().collect();
        v.sort();
        assert_eq!(v.iter().map(|(_, i)| *i).collect::<Vec<_>>(), vec![0, 1]);
    }
}
