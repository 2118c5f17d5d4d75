//! Parsing with sqlparser's MySQL dialect, and MySQL's 1064 message for what fails.

use std::borrow::Cow;
use std::collections::HashMap;

use quire_engine::table::ReadLock;
use sqlparser::ast::Statement;
use sqlparser::dialect::MySqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

use crate::diag::SqlMode;
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

/// How many operators and opening parentheses one statement may hold. Binding, planning
/// and evaluating recurse on an expression's depth, which these bound; 10 000 fits the
/// connection threads' 64 MiB stacks with room (quire-server `CONNECTION_STACK_BYTES`:
/// 50 000 `+` overflowed it), and is far beyond what applications write (a generated
/// `a = 1 OR a = 2 OR …` of 3000 terms holds 6000).
pub const MAX_NESTING: usize = 10_000;

/// 1436 if `tokens` hold more operators and opening parentheses than [`MAX_NESTING`].
fn check_nesting(tokens: &[TokenWithSpan]) -> Result<()> {
    let n = tokens
        .iter()
        .filter(|t| match &t.token {
            Token::LParen
            | Token::Plus
            | Token::Minus
            | Token::Mul
            | Token::Div
            | Token::Mod
            | Token::Eq
            | Token::DoubleEq
            | Token::Neq
            | Token::Lt
            | Token::Gt
            | Token::LtEq
            | Token::GtEq
            | Token::Spaceship
            | Token::Caret
            | Token::Ampersand
            | Token::Pipe
            | Token::StringConcat
            | Token::ShiftLeft
            | Token::ShiftRight
            | Token::ExclamationMark
            | Token::Tilde => true,
            Token::Word(w) => matches!(
                w.keyword,
                Keyword::AND | Keyword::OR | Keyword::XOR | Keyword::NOT
            ),
            _ => false,
        })
        .count();
    if n > MAX_NESTING {
        return Err(SqlError::TooDeep(n, MAX_NESTING));
    }
    Ok(())
}

/// The longest name MariaDB gives a select item from its text, in bytes.
const MAX_ITEM_NAME: usize = 255;

/// Words that end a select item's text at its own nesting level.
const AFTER_ITEM: &[&str] = &[
    "FROM",
    "INTO",
    "WHERE",
    "GROUP",
    "HAVING",
    "ORDER",
    "LIMIT",
    "UNION",
    "EXCEPT",
    "INTERSECT",
    "MINUS",
    "WINDOW",
    "FOR",
    "LOCK",
    "PROCEDURE",
    "OFFSET",
    "FETCH",
    "RETURNING",
    "ON",
];

/// Words a select list's first item follows.
const BEFORE_ITEM: &[&str] = &[
    "SELECT",
    "DISTINCT",
    "DISTINCTROW",
    "ALL",
    "HIGH_PRIORITY",
    "STRAIGHT_JOIN",
    "SQL_SMALL_RESULT",
    "SQL_BIG_RESULT",
    "SQL_BUFFER_RESULT",
    "SQL_NO_CACHE",
    "SQL_CACHE",
    "SQL_CALC_FOUND_ROWS",
];

/// Whether MariaDB names an unaliased select item by its text: all but columns (named by
/// the column) and string literals (by their value), which `bind::expr_name` names.
fn named_by_text(e: &sqlparser::ast::Expr) -> bool {
    use sqlparser::ast::{Expr, Value};
    match e {
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => false,
        // `_utf8mb4'x'`: by the string's value; `(a)`: by the column.
        Expr::Prefixed { value, .. } | Expr::Nested(value) => named_by_text(value),
        Expr::Value(v) => !matches!(
            v.value,
            Value::SingleQuotedString(_)
                | Value::DoubleQuotedString(_)
                | Value::NationalStringLiteral(_)
        ),
        _ => true,
    }
}

/// MariaDB names a select item without an alias by its text as written (`a+1`,
/// `COUNT( * )`, `concat('a','b')`) where printing the parsed expression would say
/// `a + 1`, `COUNT(*)`, `concat('a', 'b')`. Each such item of every SELECT in `stmts` is
/// given that text as its alias: from its first token to its last, comments and all, cut
/// at 255 bytes. An alias is what the
/// name is in MariaDB too: a view or CREATE TABLE … SELECT names its column so, and
/// ``ORDER BY `a+1` `` finds the item.
///
/// sqlparser's spans give where an expression starts but not always where it ends (a
/// call's closing parenthesis, `IS NULL`, a CASE's END are left out), so the item's
/// extent is read from the tokens: back from the span's start to the `SELECT`, modifier
/// or comma before it, and on to the comma, closing parenthesis or clause word after it
/// at its own nesting level. Where the span is missing, the item keeps its printed name.
fn name_select_items(text: &str, stmts: &mut [Statement]) {
    use sqlparser::ast::{Query, SelectItem, SetExpr, VisitMut, VisitorMut};
    use std::ops::ControlFlow;

    struct Namer<'t> {
        text: &'t str,
        /// The text's tokens, read the first time an item needs them.
        tokens: Option<Vec<TokenWithSpan>>,
        line_starts: Vec<usize>,
    }

    impl Namer<'_> {
        fn body(&mut self, body: &mut SetExpr) {
            match body {
                SetExpr::Select(s) => {
                    for item in &mut s.projection {
                        let name = match item {
                            SelectItem::UnnamedExpr(e) if named_by_text(e) => self.item_text(e),
                            _ => None,
                        };
                        let Some(name) = name else { continue };
                        let placeholder = SelectItem::Wildcard(Default::default());
                        if let SelectItem::UnnamedExpr(expr) = std::mem::replace(item, placeholder)
                        {
                            *item = SelectItem::ExprWithAlias {
                                expr,
                                alias: sqlparser::ast::Ident::with_quote('`', name),
                            };
                        }
                    }
                }
                SetExpr::SetOperation { left, right, .. } => {
                    self.body(left);
                    self.body(right);
                }
                // Nested queries are visited on their own.
                _ => {}
            }
        }

        /// The byte offset of a tokenizer location (1-based line and column, in chars).
        fn offset(&self, l: sqlparser::tokenizer::Location) -> Option<usize> {
            let line = usize::try_from(l.line).ok()?.checked_sub(1)?;
            let start = *self.line_starts.get(line)?;
            let col = usize::try_from(l.column).ok()?.checked_sub(1)?;
            let rest = self.text.get(start..)?;
            if rest.as_bytes().get(..col).is_some_and(|p| p.is_ascii()) {
                return Some(start + col);
            }
            rest.char_indices()
                .map(|(b, _)| b)
                .chain(std::iter::once(rest.len()))
                .nth(col)
                .map(|b| start + b)
        }

        fn item_text(&mut self, e: &sqlparser::ast::Expr) -> Option<String> {
            use sqlparser::ast::Spanned;
            let span = e.span();
            if span.start.line == 0 {
                return None;
            }
            if self.tokens.is_none() {
                let dialect = MySqlDialect {};
                self.tokens = Tokenizer::new(&dialect, self.text)
                    .tokenize_with_location()
                    .ok();
            }
            let toks = self.tokens.as_deref()?;
            let at = |t: &TokenWithSpan| (t.span.start.line, t.span.start.column);
            let key = (span.start.line, span.start.column);
            let i = toks.partition_point(|t| at(t) < key);
            if toks.get(i).map(at) != Some(key) {
                return None;
            }
            let word_in = |t: &Token, list: &[&str]| match t {
                Token::Word(w) if w.quote_style.is_none() => {
                    list.iter().any(|k| w.value.eq_ignore_ascii_case(k))
                }
                _ => false,
            };
            let blank = |t: &Token| matches!(t, Token::Whitespace(_));
            // Back to the start of the item: an opening parenthesis not closed before the
            // span (`(1+2)`, `CAST(x …`) or a prefix (`- a`, `NOT a`) is the item's.
            let mut first = i;
            let mut depth = 0i64;
            for k in (0..i).rev() {
                let t = &toks[k].token;
                if blank(t) {
                    continue;
                }
                match t {
                    Token::RParen => depth += 1,
                    // Opened by the item itself: what is before it is outside.
                    Token::LParen if depth == 0 => {}
                    Token::LParen => depth -= 1,
                    Token::Comma if depth == 0 => break,
                    _ if depth == 0 && word_in(t, BEFORE_ITEM) => break,
                    _ => {}
                }
                first = k;
            }
            // On to its end.
            let mut last = i;
            let mut depth = 0i64;
            for (k, tw) in toks.iter().enumerate().skip(first) {
                let t = &tw.token;
                match t {
                    Token::LParen => depth += 1,
                    Token::RParen if depth == 0 => break,
                    Token::RParen => depth -= 1,
                    Token::Comma | Token::SemiColon | Token::EOF if depth == 0 => break,
                    Token::EOF => break,
                    _ if depth == 0 && word_in(t, AFTER_ITEM) => break,
                    _ => {}
                }
                if !blank(t) {
                    last = k;
                }
            }
            let (a, b) = (
                self.offset(toks[first].span.start)?,
                self.offset(toks[last].span.end)?,
            );
            let mut name = self.text.get(a..b)?.to_string();
            if name.len() > MAX_ITEM_NAME {
                let mut cut = MAX_ITEM_NAME;
                while !name.is_char_boundary(cut) {
                    cut -= 1;
                }
                name.truncate(cut);
            }
            (!name.is_empty()).then_some(name)
        }
    }

    impl VisitorMut for Namer<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
            self.body(&mut q.body);
            ControlFlow::Continue(())
        }
    }

    let mut namer = Namer {
        text,
        tokens: None,
        line_starts: std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect(),
    };
    for s in stmts {
        let _ = s.visit(&mut namer);
    }
}

fn parse_all(text: &str) -> Result<Vec<Statement>> {
    let dialect = MySqlDialect {};
    let tokens = Tokenizer::new(&dialect, text)
        .with_unescape(true)
        .tokenize_with_location()
        .map_err(|e| SqlError::Parse {
            near: e.to_string(),
            line: 1,
        })?;
    check_nesting(&tokens)?;
    reject_named_placeholders(text, &tokens)?;
    Parser::new(&dialect)
        .with_tokens_with_locations(insert_select_dual(delete_returning_first(mysql_tokens(
            tokens,
        ))))
        .parse_statements()
        .map(|mut stmts| {
            name_select_items(text, &mut stmts);
            stmts
        })
        .map_err(|e| match stored_program(text) {
            Some(what) => SqlError::Unsupported(what),
            None => parse_error(text, e),
        })
}

/// `:name` is no placeholder in MariaDB (only `?` is): its parser stops at the colon, a
/// 1064 near `:name`. sqlparser reads a colon directly followed by a word or a number as a
/// named placeholder, which would reach the binder as a feature Quire lacks (1235);
/// drivers with client-side named placeholders (mysql2's `namedPlaceholders`) rely on the
/// 1064 when theirs are off. A stored program's labels (`l1: LOOP`) are left to its 1235.
fn reject_named_placeholders(text: &str, tokens: &[TokenWithSpan]) -> Result<()> {
    let named = tokens.windows(2).find(|w| {
        w[0].token == Token::Colon
            && matches!(w[1].token, Token::Word(_) | Token::Number(..))
            && w[0].span.end == w[1].span.start
    });
    match named {
        Some(w) if stored_program(text).is_none() => Err(SqlError::Parse {
            near: near(text, w[0].span.start.line, w[0].span.start.column),
            line: w[0].span.start.line,
        }),
        _ => Ok(()),
    }
}

/// Stored programs (procedures, functions, triggers, events) are not in Quire yet: their
/// CREATE and ALTER are 1235 "not supported yet", whatever sqlparser makes of their bodies,
/// never a syntax error (issue 16). `CREATE [OR REPLACE] [DEFINER = user]
/// [AGGREGATE] {PROCEDURE | FUNCTION | TRIGGER | EVENT}` and `ALTER {PROCEDURE | FUNCTION
/// | EVENT}`: what to name in the message.
fn stored_program(text: &str) -> Option<String> {
    let toks = crate::dispatch::lex(text)?;
    let verb = match toks.first()? {
        crate::dispatch::Tok::Word(w) if w.eq_ignore_ascii_case("create") => "CREATE",
        crate::dispatch::Tok::Word(w) if w.eq_ignore_ascii_case("alter") => "ALTER",
        // DROP EVENT, which sqlparser does not read (DROP PROCEDURE, FUNCTION and TRIGGER
        // it does: `ddl.rs` answers them as MariaDB does for one that does not exist).
        crate::dispatch::Tok::Word(w)
            if w.eq_ignore_ascii_case("drop") && toks.get(1).is_some_and(|t| t.is("event")) =>
        {
            return Some("DROP EVENT".into())
        }
        _ => return None,
    };
    for t in toks.iter().skip(1).take(12) {
        let crate::dispatch::Tok::Word(w) = t else {
            continue;
        };
        let w = w.to_ascii_uppercase();
        match w.as_str() {
            "PROCEDURE" | "FUNCTION" | "TRIGGER" | "EVENT" => {
                return Some(format!("{verb} {w}"));
            }
            // Anything else that can follow CREATE / ALTER: not a stored program.
            "TABLE" | "VIEW" | "INDEX" | "DATABASE" | "SCHEMA" | "USER" | "ROLE" | "TEMPORARY"
            | "UNIQUE" | "SEQUENCE" | "SERVER" | "TABLESPACE" | "ALGORITHM" | "SQL" | "ONLINE"
            | "IGNORE" | "FULLTEXT" | "SPATIAL" | "PACKAGE" => return None,
            _ => {}
        }
    }
    None
}

/// MySQL syntax sqlparser does not parse, rewritten in the token stream into forms it does
/// (each new token keeps the span of the one it replaces, so placeholders and error
/// positions stay where the client wrote them):
/// - `a MOD b` → `a % b`;
/// - compound INTERVAL units: `DAY_HOUR` → `DAY TO HOUR` (likewise DAY_MINUTE, DAY_SECOND,
///   HOUR_MINUTE, HOUR_SECOND, MINUTE_SECOND, YEAR_MONTH), and the ones with microseconds
///   as a fractional precision of 6, which the binder reads back: `X_MICROSECOND` →
///   `X TO SECOND(6)`, `SECOND_MICROSECOND` → `SECOND(0, 6)`;
/// - `CHAR(n, … USING utf8mb4)` → `CHAR_USING_UTF8MB4(n, …)`;
/// - `CAST(x AS CHAR CHARACTER SET utf8mb4)` → `CAST(x AS CHAR)` (utf8mb4 is the only
///   character set Quire has).
fn mysql_tokens(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let tokens = bang_not(tokens);
    let word = |t: &TokenWithSpan| match &t.token {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    };
    let mut out: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len());
    let mut i = 0;
    // Open CHAR( calls: the index in `out` of their name token, by parenthesis depth.
    let mut char_calls: Vec<(usize, usize)> = Vec::new();
    let mut depth = 0usize;
    let next_significant = |i: usize| {
        tokens[i + 1..]
            .iter()
            .find(|t| !matches!(t.token, Token::Whitespace(_)))
    };
    while i < tokens.len() {
        let t = &tokens[i];
        let span = t.span;
        let mk = |tok: Token| TokenWithSpan { token: tok, span };
        let w = word(t);
        // A quoted user variable name (`` @`a b` ``, `@'a'`, `@"a"`): one word, `@a b`,
        // that the binder reads as the variable.
        if t.token == Token::AtSign {
            let name = tokens.get(i + 1).and_then(|n| match &n.token {
                Token::Word(q) if q.quote_style == Some('`') => Some(q.value.clone()),
                Token::SingleQuotedString(q) | Token::DoubleQuotedString(q) => Some(q.clone()),
                _ => None,
            });
            if let Some(name) = name {
                out.push(mk(Token::make_word(&format!("@{name}"), None)));
                i += 2;
                continue;
            }
        }
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => {
                char_calls.retain(|(_, d)| *d < depth);
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
        // `0b0101`, which the tokenizer reads as a word (MySQL's numeric-prefix names):
        // MySQL's bit literal, as `b'0101'` is (an upper-case `0B…` stays a name).
        if let Token::Word(wd) = &t.token {
            let v = wd.value.as_str();
            if wd.quote_style.is_none()
                && v.len() > 2
                && v.starts_with("0b")
                && v[2..].bytes().all(|c| c == b'0' || c == b'1')
            {
                out.push(mk(Token::SingleQuotedByteStringLiteral(v[2..].to_string())));
                i += 1;
                continue;
            }
        }
        match w.as_deref() {
            // MariaDB's old type names `LONG VARCHAR` (MEDIUMTEXT) and `LONG VARBINARY` /
            // `LONG BYTE` (MEDIUMBLOB), in CREATE and ALTER TABLE (LONG is a reserved word,
            // so never a name): one word for sqlparser. `LONG` alone is MEDIUMTEXT (`ddl::column_type`).
            Some("LONG")
                if next_significant(i).is_some_and(|n| {
                    matches!(word(n).as_deref(), Some("VARCHAR" | "VARBINARY" | "BYTE"))
                }) =>
            {
                let blob = next_significant(i)
                    .and_then(&word)
                    .is_some_and(|n| n != "VARCHAR");
                out.push(mk(Token::make_keyword(if blob {
                    "MEDIUMBLOB"
                } else {
                    "MEDIUMTEXT"
                })));
                // Past the whitespace and the second word.
                i += 1;
                while tokens
                    .get(i)
                    .is_some_and(|t| matches!(t.token, Token::Whitespace(_)))
                {
                    i += 1;
                }
                i += 1;
                continue;
            }
            Some("MOD") if next_significant(i).is_none_or(|n| n.token != Token::LParen) => {
                out.push(mk(Token::Mod));
                i += 1;
                continue;
            }
            // A column's `CHARSET latin1` (MariaDB's synonym, which sqlparser reads only as
            // a table option, outside the parentheses): `CHARACTER SET latin1`.
            Some("CHARSET")
                if depth > 0
                    && next_significant(i).is_some_and(|n| matches!(n.token, Token::Word(_))) =>
            {
                out.push(mk(Token::make_keyword("CHARACTER")));
                out.push(mk(Token::Whitespace(
                    sqlparser::tokenizer::Whitespace::Space,
                )));
                out.push(mk(Token::make_keyword("SET")));
                i += 1;
                continue;
            }
            Some(
                u @ ("DAY_HOUR" | "DAY_MINUTE" | "DAY_SECOND" | "HOUR_MINUTE" | "HOUR_SECOND"
                | "MINUTE_SECOND" | "YEAR_MONTH"),
            ) => {
                let (a, b) = u.split_once('_').unwrap_or((u, u));
                out.push(mk(Token::make_word(a, None)));
                out.push(mk(Token::Whitespace(
                    sqlparser::tokenizer::Whitespace::Space,
                )));
                out.push(mk(Token::make_keyword("TO")));
                out.push(mk(Token::Whitespace(
                    sqlparser::tokenizer::Whitespace::Space,
                )));
                out.push(mk(Token::make_word(b, None)));
                i += 1;
                continue;
            }
            Some(u @ ("DAY_MICROSECOND" | "HOUR_MICROSECOND" | "MINUTE_MICROSECOND")) => {
                let a = u.split_once('_').map_or(u, |(a, _)| a);
                for tok in [
                    Token::make_word(a, None),
                    Token::Whitespace(sqlparser::tokenizer::Whitespace::Space),
                    Token::make_keyword("TO"),
                    Token::Whitespace(sqlparser::tokenizer::Whitespace::Space),
                    Token::make_word("SECOND", None),
                    Token::LParen,
                    Token::Number("6".into(), false),
                    Token::RParen,
                ] {
                    out.push(mk(tok));
                }
                i += 1;
                continue;
            }
            Some("SECOND_MICROSECOND") => {
                for tok in [
                    Token::make_word("SECOND", None),
                    Token::LParen,
                    Token::Number("0".into(), false),
                    Token::Comma,
                    Token::Number("6".into(), false),
                    Token::RParen,
                ] {
                    out.push(mk(tok));
                }
                i += 1;
                continue;
            }
            // `x REGEXP NULL`: sqlparser wants an expression it can start; `(NULL)` is one.
            Some("NULL")
                if out
                    .iter()
                    .rev()
                    .find(|t| !matches!(t.token, Token::Whitespace(_)))
                    .and_then(word)
                    .is_some_and(|w| w == "REGEXP" || w == "RLIKE") =>
            {
                out.push(mk(Token::LParen));
                out.push(t.clone());
                out.push(mk(Token::RParen));
                i += 1;
                continue;
            }
            // `BINARY x` binds tighter than any operator: `BINARY 'a' = 'A'` compares bytes.
            Some("BINARY")
                if next_significant(i).is_some_and(|n| {
                    matches!(
                        n.token,
                        Token::SingleQuotedString(_)
                            | Token::DoubleQuotedString(_)
                            | Token::Number(..)
                            | Token::Word(_)
                    ) && word(n).is_none_or(|w| !matches!(w.as_str(), "COLLATE" | "CHARACTER"))
                }) && !out
                    .iter()
                    .rev()
                    .find(|t| !matches!(t.token, Token::Whitespace(_)))
                    .and_then(word)
                    .is_some_and(|w| {
                        matches!(w.as_str(), "AS" | "COLLATE" | "SET" | "USING" | "CHARSET")
                    }) =>
            {
                // CAST(term AS BINARY), the term one token (a literal or a column name,
                // qualified or not).
                out.push(mk(Token::make_keyword("CAST")));
                out.push(mk(Token::LParen));
                i += 1;
                while i < tokens.len() && matches!(tokens[i].token, Token::Whitespace(_)) {
                    i += 1;
                }
                if i < tokens.len() {
                    out.push(tokens[i].clone());
                    i += 1;
                }
                while i + 1 < tokens.len()
                    && tokens[i].token == Token::Period
                    && matches!(tokens[i + 1].token, Token::Word(_))
                {
                    out.push(tokens[i].clone());
                    out.push(tokens[i + 1].clone());
                    i += 2;
                }
                for tok in [
                    Token::Whitespace(sqlparser::tokenizer::Whitespace::Space),
                    Token::make_keyword("AS"),
                    Token::Whitespace(sqlparser::tokenizer::Whitespace::Space),
                    Token::make_keyword("BINARY"),
                    Token::RParen,
                ] {
                    out.push(mk(tok));
                }
                continue;
            }
            Some("CHAR") if next_significant(i).is_some_and(|n| n.token == Token::LParen) => {
                char_calls.push((out.len(), depth + 1));
            }
            Some("USING") if char_calls.last().is_some_and(|(_, d)| *d == depth) => {
                let cs = next_significant(i).and_then(word);
                if cs.as_deref() == Some("UTF8MB4") {
                    if let Some((at, _)) = char_calls.pop() {
                        out[at].token = Token::make_word("CHAR_USING_UTF8MB4", None);
                    }
                    // Drop `USING utf8mb4`.
                    i += 1;
                    while i < tokens.len() && matches!(tokens[i].token, Token::Whitespace(_)) {
                        i += 1;
                    }
                    i += 1;
                    continue;
                }
            }
            Some("CHARACTER" | "CHARSET") => {
                // `CHAR CHARACTER SET utf8mb4` / `CHAR CHARSET utf8mb4` inside CAST.
                let prev = out
                    .iter()
                    .rev()
                    .find(|t| !matches!(t.token, Token::Whitespace(_)))
                    .and_then(word);
                if prev.as_deref() == Some("CHAR") {
                    let mut j = i + 1;
                    let mut rest = Vec::new();
                    while j < tokens.len() && rest.len() < 2 {
                        if !matches!(tokens[j].token, Token::Whitespace(_)) {
                            rest.push(j);
                        }
                        j += 1;
                    }
                    let (set, cs) = if w.as_deref() == Some("CHARSET") {
                        (None, rest.first().copied())
                    } else {
                        (rest.first().copied(), rest.get(1).copied())
                    };
                    let set_ok = set.is_none_or(|k| word(&tokens[k]).as_deref() == Some("SET"));
                    if let Some(k) = cs.filter(|_| set_ok) {
                        if word(&tokens[k]).as_deref() == Some("UTF8MB4") {
                            i = k + 1;
                            continue;
                        }
                    }
                }
            }
            _ => {}
        }
        out.push(t.clone());
        i += 1;
    }
    out
}

/// MySQL's `!x`, which sqlparser's MySQL dialect does not read, rewritten in the token
/// stream as `(NOT (x))`. `!` binds tighter than any binary operator (MySQL's precedence
/// table: only BINARY, COLLATE and INTERVAL bind tighter), so `x` is the operand right after
/// it: a literal, a placeholder, a (qualified) name or function call, a parenthesised
/// group, a CASE … END, or another prefix operator and its operand. `!!x` is two. The new
/// tokens keep the span of the `!`.
fn bang_not(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    if !tokens.iter().any(|t| {
        matches!(
            t.token,
            Token::ExclamationMark | Token::DoubleExclamationMark | Token::ExclamationMarkTilde
        )
    }) {
        return tokens;
    }
    // `!!` is two `!`, and `!~` (PostgreSQL's operator to the tokenizer) `!` then `~`.
    let mut split = Vec::with_capacity(tokens.len() + 2);
    for t in tokens {
        let second = match t.token {
            Token::DoubleExclamationMark => Token::ExclamationMark,
            Token::ExclamationMarkTilde => Token::Tilde,
            _ => {
                split.push(t);
                continue;
            }
        };
        for token in [Token::ExclamationMark, second] {
            split.push(TokenWithSpan {
                token,
                span: t.span,
            });
        }
    }
    let mut out = Vec::with_capacity(split.len() + 8);
    bang_not_into(&split, &mut out);
    out
}

/// Copies `toks` into `out` with each `!` operand wrapped ([`bang_not`]).
fn bang_not_into(toks: &[TokenWithSpan], out: &mut Vec<TokenWithSpan>) {
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        if t.token != Token::ExclamationMark {
            out.push(t.clone());
            i += 1;
            continue;
        }
        let end = operand_end(toks, i + 1);
        let mk = |token: Token| TokenWithSpan {
            token,
            span: t.span,
        };
        out.push(mk(Token::LParen));
        out.push(mk(Token::make_keyword("NOT")));
        out.push(mk(Token::LParen));
        bang_not_into(&toks[i + 1..end], out);
        out.push(mk(Token::RParen));
        out.push(mk(Token::RParen));
        i = end;
    }
}

/// The index just past the operand of a prefix operator that starts at or after `i`
/// (whitespace skipped); `i` itself if there is none (the parser then reports the error).
fn operand_end(toks: &[TokenWithSpan], i: usize) -> usize {
    let skip_ws = |mut j: usize| {
        while j < toks.len() && matches!(toks[j].token, Token::Whitespace(_)) {
            j += 1;
        }
        j
    };
    // Past the parenthesis that closes the one at `j`.
    let close = |j: usize| {
        let mut depth = 0usize;
        for (k, t) in toks.iter().enumerate().skip(j) {
            match t.token {
                Token::LParen => depth += 1,
                Token::RParen => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return k + 1;
                    }
                }
                _ => {}
            }
        }
        toks.len()
    };
    let j = skip_ws(i);
    let Some(t) = toks.get(j) else {
        return i;
    };
    match &t.token {
        Token::ExclamationMark | Token::Minus | Token::Plus | Token::Tilde => {
            operand_end(toks, j + 1)
        }
        Token::LParen => close(j),
        // `@v`, `@@v`, `@@session.v` (when the tokenizer splits the `@`).
        Token::AtSign => {
            let mut k = j;
            while toks.get(k).is_some_and(|t| t.token == Token::AtSign) {
                k += 1;
            }
            operand_end(toks, k).max(k)
        }
        Token::Word(w) if w.quote_style.is_none() && w.keyword == Keyword::CASE => {
            let mut depth = 0usize;
            for (k, t) in toks.iter().enumerate().skip(j) {
                if let Token::Word(w) = &t.token {
                    if w.quote_style.is_none() && w.keyword == Keyword::CASE {
                        depth += 1;
                    } else if w.quote_style.is_none() && w.keyword == Keyword::END {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return k + 1;
                        }
                    }
                }
            }
            toks.len()
        }
        Token::Word(w) if w.quote_style.is_none() && w.keyword == Keyword::BINARY => {
            operand_end(toks, j + 1)
        }
        Token::Word(_) => {
            // A name, qualified (`db.t.c`), or a call (`f(…)`, `db.f(…)`).
            let mut k = j + 1;
            while k + 1 < toks.len()
                && toks[k].token == Token::Period
                && matches!(toks[k + 1].token, Token::Word(_) | Token::Mul)
            {
                k += 2;
            }
            let n = skip_ws(k);
            if toks.get(n).is_some_and(|t| t.token == Token::LParen) {
                return close(n);
            }
            k
        }
        _ => j + 1,
    }
}

/// `INSERT … SELECT 1, 2 ON DUPLICATE KEY UPDATE …`, a SELECT without FROM right before
/// the ON: sqlparser takes that ON for the last item's alias. `FROM DUAL` goes in front
/// of it (the same SELECT), with ON's span.
fn insert_select_dual(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let kw = |t: &TokenWithSpan| match &t.token {
        Token::Word(w) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    };
    let sig: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
        .collect();
    if sig.first().and_then(|&i| kw(&tokens[i])) != Some(Keyword::INSERT) {
        return tokens;
    }
    let mut depth = 0i32;
    let mut last_select_open = false;
    for (n, &i) in sig.iter().enumerate() {
        match tokens[i].token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            _ if depth != 0 => {}
            _ => match kw(&tokens[i]) {
                Some(Keyword::SELECT) => last_select_open = true,
                Some(
                    Keyword::FROM
                    | Keyword::WHERE
                    | Keyword::GROUP
                    | Keyword::HAVING
                    | Keyword::ORDER
                    | Keyword::LIMIT
                    | Keyword::WINDOW
                    | Keyword::INTO
                    | Keyword::FOR
                    | Keyword::LOCK,
                ) => last_select_open = false,
                Some(Keyword::ON)
                    if last_select_open
                        && sig
                            .get(n + 1)
                            .is_some_and(|&j| kw(&tokens[j]) == Some(Keyword::DUPLICATE)) =>
                {
                    let span = tokens[i].span;
                    let mk = |token: Token| TokenWithSpan { token, span };
                    let space = || Token::Whitespace(sqlparser::tokenizer::Whitespace::Space);
                    let dual = [
                        mk(Token::make_keyword("FROM")),
                        mk(space()),
                        mk(Token::make_word("DUAL", None)),
                        mk(space()),
                    ];
                    tokens.splice(i..i, dual);
                    return tokens;
                }
                _ => {}
            },
        }
    }
    tokens
}

/// MariaDB's DELETE puts RETURNING last (`DELETE FROM t WHERE … ORDER BY … LIMIT n
/// RETURNING …`); sqlparser reads it only before ORDER BY and LIMIT: in each DELETE, a
/// RETURNING at the top level after an ORDER BY or LIMIT is moved in front of them. The
/// tokens keep their spans, so placeholders keep their numbers.
fn delete_returning_first(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let kw = |t: &TokenWithSpan| match &t.token {
        Token::Word(w) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    };
    if !tokens.iter().any(|t| kw(t) == Some(Keyword::RETURNING)) {
        return tokens;
    }
    let mut out = Vec::with_capacity(tokens.len());
    // One statement at a time: the tokens up to and with each top-level `;`.
    let mut rest = tokens.as_slice();
    while !rest.is_empty() {
        let mut depth = 0i32;
        let end = rest
            .iter()
            .position(|t| {
                match t.token {
                    Token::LParen => depth += 1,
                    Token::RParen => depth -= 1,
                    _ => {}
                }
                depth == 0 && t.token == Token::SemiColon
            })
            .map_or(rest.len(), |i| i + 1);
        let (stmt, after) = rest.split_at(end);
        rest = after;
        let first = stmt
            .iter()
            .find(|t| !matches!(t.token, Token::Whitespace(_) | Token::SemiColon));
        if first.and_then(kw) != Some(Keyword::DELETE) {
            out.extend_from_slice(stmt);
            continue;
        }
        let (mut depth, mut tail, mut ret) = (0i32, None, None);
        for (i, t) in stmt.iter().enumerate() {
            match t.token {
                Token::LParen => depth += 1,
                Token::RParen => depth -= 1,
                _ if depth == 0 => match kw(t) {
                    Some(Keyword::ORDER | Keyword::LIMIT) if tail.is_none() => tail = Some(i),
                    Some(Keyword::RETURNING) if ret.is_none() => ret = Some(i),
                    _ => {}
                },
                _ => {}
            }
        }
        let (Some(tail), Some(ret)) = (tail, ret) else {
            out.extend_from_slice(stmt);
            continue;
        };
        if ret < tail {
            out.extend_from_slice(stmt);
            continue;
        }
        // RETURNING's list ends at the statement's `;` (kept last).
        let semi = stmt
            .iter()
            .rposition(|t| t.token == Token::SemiColon)
            .filter(|&i| i > ret)
            .unwrap_or(stmt.len());
        out.extend_from_slice(&stmt[..tail]);
        out.extend_from_slice(&stmt[ret..semi]);
        out.push(TokenWithSpan {
            token: Token::Whitespace(sqlparser::tokenizer::Whitespace::Space),
            span: stmt[ret].span,
        });
        out.extend_from_slice(&stmt[tail..ret]);
        out.extend_from_slice(&stmt[semi..]);
    }
    out
}

/// Where each `?` is (line, column) → its parameter number.
pub type ParamPositions = HashMap<(u64, u64), usize>;

/// The text as sqlparser's MySQL dialect reads it under `mode`: with ANSI_QUOTES a
/// "double-quoted" name becomes a `backquoted` one; with NO_BACKSLASH_ESCAPES a backslash
/// in a string is itself (doubled, so the tokenizer's escape gives it back). Comments and
/// other quotes are copied as they are.
pub fn for_mode(text: &str, mode: SqlMode) -> Cow<'_, str> {
    let ansi = mode.has(SqlMode::ANSI_QUOTES);
    let raw = mode.has(SqlMode::NO_BACKSLASH_ESCAPES);
    let changes = (ansi && text.contains('"')) || (raw && text.contains('\\'));
    if !changes {
        return Cow::Borrowed(text);
    }
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch == '#' || (ch == '-' && next == Some('-')) {
            while i < c.len() && c[i] != '\n' {
                out.push(c[i]);
                i += 1;
            }
        } else if ch == '/' && next == Some('*') {
            let start = i;
            i += 2;
            while i < c.len() && !(c[i] == '*' && c.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i = (i + 2).min(c.len());
            out.extend(&c[start..i]);
        } else if ch == '`' || ch == '\'' || ch == '"' {
            let ident = ch == '`' || (ansi && ch == '"');
            // The quoted text, its doubled quotes and (unless raw) escapes kept.
            let mut body = String::new();
            i += 1;
            while i < c.len() {
                if c[i] == ch && c.get(i + 1) == Some(&ch) {
                    body.push(ch);
                    body.push(ch);
                    i += 2;
                } else if c[i] == ch {
                    break;
                } else if c[i] == '\\' && !ident && raw {
                    body.push_str("\\\\");
                    i += 1;
                } else if c[i] == '\\' && !ident && i + 1 < c.len() {
                    body.push(c[i]);
                    body.push(c[i + 1]);
                    i += 2;
                } else {
                    body.push(c[i]);
                    i += 1;
                }
            }
            i += 1;
            if ch == '"' && ansi {
                out.push('`');
                out.push_str(&body.replace("\"\"", "\"").replace('`', "``"));
                out.push('`');
            } else {
                out.push(ch);
                out.push_str(&body);
                if i <= c.len() {
                    out.push(ch);
                }
            }
        } else {
            out.push(ch);
            i += 1;
        }
    }
    Cow::Owned(out)
}

/// A client's statement as `mode` reads it: also how its locking read waits.
pub fn parse_query_in(
    text: &str,
    mode: SqlMode,
) -> Result<(Statement, Option<ReadLock>, crate::dispatch::LockWait)> {
    parse_text(&for_mode(text, mode)).map(|(s, l, w, _)| (s, l, w))
}

/// [`parse_one`] of the text as `mode` reads it ([`for_mode`]).
pub fn parse_one_in(text: &str, mode: SqlMode) -> Result<(Statement, Option<ReadLock>)> {
    parse_one(&for_mode(text, mode))
}

/// MySQL's multi-table `UPDATE t1, t2 SET …`, which sqlparser does not read, rewritten as
/// `UPDATE t1 FROM t2 SET …` (sqlparser's form with a FROM list before SET; `None`: not
/// that statement). The planner joins `t1` and the FROM list as a comma list, so `t2`'s
/// joins keep their scope.
fn update_commas(text: &str) -> Option<String> {
    let dialect = MySqlDialect {};
    let toks = Tokenizer::new(&dialect, text).tokenize().ok()?;
    let mut out = String::with_capacity(text.len() + 8);
    let (mut depth, mut seen_update, mut changed) = (0i32, false, false);
    for t in &toks {
        match t {
            Token::Whitespace(_) => {}
            Token::Word(w) if !seen_update => {
                if w.keyword != Keyword::UPDATE {
                    return None;
                }
                seen_update = true;
            }
            _ if !seen_update => return None,
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Word(w) if !changed && depth == 0 && w.keyword == Keyword::SET => return None,
            Token::Comma if !changed && depth == 0 => {
                out.push_str(" FROM ");
                changed = true;
                continue;
            }
            _ => {}
        }
        out.push_str(&t.to_string());
    }
    changed.then_some(out)
}

/// MariaDB's 1064 for a statement its grammar refuses at `kw`: near the first `kw` outside
/// parentheses (near nothing if there is none, or the text does not tokenize).
fn error_near_keyword(text: &str, kw: Keyword) -> SqlError {
    let dialect = MySqlDialect {};
    let toks = match Tokenizer::new(&dialect, text).tokenize_with_location() {
        Ok(t) => t,
        Err(e) => {
            return SqlError::Parse {
                near: e.to_string(),
                line: 1,
            }
        }
    };
    let mut depth = 0i32;
    for t in toks {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Word(w) if depth == 0 && w.keyword == kw => {
                return SqlError::Parse {
                    near: near(text, t.span.start.line, t.span.start.column),
                    line: t.span.start.line,
                };
            }
            _ => {}
        }
    }
    SqlError::Parse {
        near: String::new(),
        line: 1,
    }
}

/// MariaDB has no `UPDATE … FROM` (sqlparser reads it): 1064 near the FROM, as MariaDB.
fn reject_update_from(text: &str, stmt: &Statement) -> Result<()> {
    let Statement::Update(u) = stmt else {
        return Ok(());
    };
    if u.from.is_none() {
        return Ok(());
    }
    Err(error_near_keyword(text, Keyword::FROM))
}

/// RETURNING where MariaDB's grammar has none (sqlparser reads it in any UPDATE and
/// DELETE): an UPDATE's, a multi-table DELETE's; 1064 near the RETURNING, as MariaDB.
fn reject_returning(text: &str, stmt: &Statement) -> Result<()> {
    let refused = match stmt {
        Statement::Update(u) => u.returning.is_some(),
        Statement::Delete(d) => {
            let from = match &d.from {
                sqlparser::ast::FromTable::WithFromKeyword(v)
                | sqlparser::ast::FromTable::WithoutKeyword(v) => v,
            };
            d.returning.is_some()
                && (!d.tables.is_empty()
                    || d.using.is_some()
                    || from.len() != 1
                    || from.iter().any(|f| !f.joins.is_empty()))
        }
        _ => false,
    };
    if !refused {
        return Ok(());
    }
    Err(error_near_keyword(text, Keyword::RETURNING))
}

/// Calls sqlparser reads that MariaDB's grammar refuses, 1064 where MariaDB's parser
/// stops: STD, STDDEV, STDDEV_POP, STDDEV_SAMP, VARIANCE, VAR_POP and VAR_SAMP take
/// exactly one argument and no DISTINCT (near the DISTINCT, the `*` or the `)` of an empty
/// call, or after the comma of a second argument); ROW takes two or more (near the `)` of
/// `ROW(x)`).
fn reject_mariadb_grammar(text: &str) -> Result<()> {
    let lower = text.to_ascii_lowercase();
    if !lower.contains("std") && !lower.contains("var") && !lower.contains("row") {
        return Ok(());
    }
    let dialect = MySqlDialect {};
    let Ok(toks) = Tokenizer::new(&dialect, text).tokenize_with_location() else {
        return Ok(());
    };
    let sig: Vec<&TokenWithSpan> = toks
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let err = |line: u64, col: u64| {
        Err(SqlError::Parse {
            near: near(text, line, col),
            line,
        })
    };
    for (i, t) in sig.iter().enumerate() {
        let Token::Word(w) = &t.token else { continue };
        if w.quote_style.is_some() || sig.get(i + 1).map(|n| &n.token) != Some(&Token::LParen) {
            continue;
        }
        let name = w.value.to_ascii_lowercase();
        if name == "row" {
            // ROW(x): one member and the `)` where MariaDB's grammar wants a comma.
            let mut depth = 0usize;
            let mut commas = 0;
            for n in &sig[i + 1..] {
                match n.token {
                    Token::LParen => depth += 1,
                    Token::Comma if depth == 1 => commas += 1,
                    Token::RParen => {
                        depth -= 1;
                        if depth == 0 {
                            if commas == 0 {
                                return err(n.span.start.line, n.span.start.column);
                            }
                            break;
                        }
                    }
                    _ => {}
                }
            }
            continue;
        }
        if crate::expr::AggFn::variance_named(&name).is_none() {
            continue;
        }
        let Some(first) = sig.get(i + 2) else {
            continue;
        };
        match &first.token {
            Token::Word(d) if d.keyword == Keyword::DISTINCT => {
                return err(first.span.start.line, first.span.start.column)
            }
            Token::RParen | Token::Mul => {
                return err(first.span.start.line, first.span.start.column)
            }
            _ => {}
        }
        let mut depth = 0usize;
        for n in &sig[i + 1..] {
            match n.token {
                Token::LParen => depth += 1,
                Token::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                Token::Comma if depth == 1 => return err(n.span.end.line, n.span.end.column),
                _ => {}
            }
        }
    }
    Ok(())
}

/// A parsed statement: the statement, the lock a `LOCK IN SHARE MODE` suffix asked for,
/// how its locking read waits, and the text parsed (placeholder positions are in it).
type Parsed<'t> = (
    Statement,
    Option<ReadLock>,
    crate::dispatch::LockWait,
    std::borrow::Cow<'t, str>,
);

/// The byte offset in `text` of a tokenizer location (1-based line and column, in chars).
fn byte_offset(text: &str, line: u64, col: u64) -> usize {
    let mut off = 0usize;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i as u64 + 1 == line {
            return off
                + l.char_indices()
                    .nth(col.saturating_sub(1) as usize)
                    .map_or(l.len(), |(b, _)| b);
        }
        off += l.len();
    }
    off
}

/// The name of the optimizer hint that marks a DELETE as `DELETE IGNORE` (sqlparser's
/// Delete has no field for it). A parsed hint's prefix is alphanumeric, so no client text
/// makes this one.
pub const DELETE_IGNORE_HINT: &str = "quire-ignore";

/// `UPDATE [LOW_PRIORITY] [IGNORE] …` and `DELETE [LOW_PRIORITY] [QUICK] [IGNORE] …`,
/// whose modifiers sqlparser's MySQL dialect does not read (it takes `IGNORE` for a table
/// name): the text with them blanked out (spaces of their length, so placeholders and
/// error positions keep their places), and whether IGNORE was there. The caller marks the
/// parsed statement ([`mark_ignore`]); LOW_PRIORITY and QUICK change nothing in InnoDB.
/// Only unquoted modifiers right after the verb count: anywhere else the words are left to
/// the parser, as MariaDB reads them only there.
pub fn strip_dml_ignore(text: &str) -> (Cow<'_, str>, bool) {
    let lower_start = text.trim_start().get(..6).map(str::to_ascii_lowercase);
    let has = |word: &[u8]| {
        text.as_bytes()
            .windows(word.len())
            .any(|w| w.eq_ignore_ascii_case(word))
    };
    if !matches!(lower_start.as_deref(), Some("update" | "delete"))
        || !(has(b"ignore") || has(b"quick") || has(b"low_priority"))
    {
        return (Cow::Borrowed(text), false);
    }
    let dialect = MySqlDialect {};
    let Ok(toks) = Tokenizer::new(&dialect, text).tokenize_with_location() else {
        return (Cow::Borrowed(text), false);
    };
    let mut words = toks
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)));
    let verb = match words.next().map(|t| &t.token) {
        Some(Token::Word(w)) if w.quote_style.is_none() => w.keyword,
        _ => return (Cow::Borrowed(text), false),
    };
    // Byte ranges of the modifiers, in order.
    let mut blank: Vec<(usize, usize)> = Vec::new();
    let mut ignore = false;
    for t in words {
        let Token::Word(w) = &t.token else { break };
        if w.quote_style.is_some() {
            break;
        }
        let upper = w.value.to_ascii_uppercase();
        let known = match upper.as_str() {
            "LOW_PRIORITY" => !ignore,
            "QUICK" => verb == Keyword::DELETE && !ignore,
            "IGNORE" => !std::mem::replace(&mut ignore, true),
            _ => false,
        };
        if !known {
            break;
        }
        let at = byte_offset(text, t.span.start.line, t.span.start.column);
        blank.push((at, at + w.value.len()));
    }
    if blank.is_empty() {
        return (Cow::Borrowed(text), false);
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (a, b) in blank {
        let (Some(keep), Some(word)) = (text.get(from..a), text.get(a..b)) else {
            return (Cow::Borrowed(text), false);
        };
        out.push_str(keep);
        out.extend(std::iter::repeat_n(' ', word.len()));
        from = b;
    }
    out.push_str(text.get(from..).unwrap_or(""));
    (Cow::Owned(out), ignore)
}

/// Marks a statement read from text [`strip_dml_ignore`] blanked as `… IGNORE`: an
/// UPDATE by sqlparser's `UPDATE OR IGNORE`, a DELETE by the [`DELETE_IGNORE_HINT`] hint.
fn mark_ignore(stmt: &mut Statement) {
    match stmt {
        Statement::Update(u) => u.or = Some(sqlparser::ast::SqliteOnConflict::Ignore),
        Statement::Delete(d) => d.optimizer_hints.push(sqlparser::ast::OptimizerHint {
            prefix: DELETE_IGNORE_HINT.into(),
            text: String::new(),
            style: sqlparser::ast::OptimizerHintStyle::MultiLine,
        }),
        _ => {}
    }
}

/// Whether the UPDATE was written `UPDATE IGNORE` ([`mark_ignore`]).
pub fn update_is_ignore(u: &sqlparser::ast::Update) -> bool {
    u.or == Some(sqlparser::ast::SqliteOnConflict::Ignore)
}

/// Whether the DELETE was written `DELETE IGNORE` ([`mark_ignore`]).
pub fn delete_is_ignore(d: &sqlparser::ast::Delete) -> bool {
    d.optimizer_hints
        .iter()
        .any(|h| h.prefix == DELETE_IGNORE_HINT)
}

fn parse_text(text: &str) -> Result<Parsed<'_>> {
    match strip_dml_ignore(text) {
        (Cow::Borrowed(t), _) => parse_stripped(t),
        (Cow::Owned(t), ignore) => {
            let (mut stmt, lock, wait, parsed) = parse_stripped(&t)?;
            if ignore {
                mark_ignore(&mut stmt);
            }
            Ok((stmt, lock, wait, Cow::Owned(parsed.into_owned())))
        }
    }
}

fn parse_stripped(text: &str) -> Result<Parsed<'_>> {
    let (text, wait) = crate::dispatch::strip_lock_wait(text);
    let (text, lock) = match crate::dispatch::strip_lock_in_share_mode(text) {
        Some(rest) => (rest, Some(ReadLock::Shared)),
        None => (text, None),
    };
    let (mut stmts, parsed) = match parse_all(text) {
        Ok(s) => {
            if let Some(st) = s.first() {
                reject_update_from(text, st)?;
                reject_returning(text, st)?;
            }
            reject_mariadb_grammar(text)?;
            (s, std::borrow::Cow::Borrowed(text))
        }
        Err(e) => match update_commas(text) {
            Some(t) => match parse_all(&t) {
                Ok(s) => (s, std::borrow::Cow::Owned(t)),
                Err(_) => return Err(e),
            },
            None => return Err(e),
        },
    };
    match stmts.len() {
        0 => Err(SqlError::EmptyQuery),
        1 => Ok((stmts.remove(0), lock, wait, parsed)),
        // Several statements where the client did not ask for multi-statements: MariaDB's
        // 1064 near the second one (the server splits them when the client asked).
        _ => {
            let second = crate::dispatch::split_statements(text, true)
                .get(1)
                .map(|p| p.trim_start())
                .unwrap_or("");
            let at = (second.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
            let line = 1 + text.get(..at).unwrap_or("").matches('\n').count() as u64;
            Err(SqlError::Parse {
                near: second.chars().take(80).collect(),
                line,
            })
        }
    }
}

/// One expression (the value of a `SET @x = …` item), as `mode` reads it: 1064 if the
/// text is not exactly one expression.
pub fn parse_expr_in(text: &str, mode: SqlMode) -> Result<sqlparser::ast::Expr> {
    let text = &*for_mode(text, mode);
    let dialect = MySqlDialect {};
    let tokens = Tokenizer::new(&dialect, text)
        .with_unescape(true)
        .tokenize_with_location()
        .map_err(|e| SqlError::Parse {
            near: e.to_string(),
            line: 1,
        })?;
    check_nesting(&tokens)?;
    let mut p = Parser::new(&dialect).with_tokens_with_locations(mysql_tokens(tokens));
    let e = p.parse_expr().map_err(|e| parse_error(text, e))?;
    let next = p.peek_token();
    if next.token != Token::EOF {
        return Err(SqlError::Parse {
            near: near(text, next.span.start.line, next.span.start.column),
            line: next.span.start.line,
        });
    }
    Ok(e)
}

/// A comma-separated list of expressions (DO's), as `mode` reads it, and where its `?`
/// placeholders are: 1064 near what follows the list if it is not the end (`DO 1 FROM
/// t`), or near the end for no list.
pub fn parse_expr_list_in(
    text: &str,
    mode: SqlMode,
) -> Result<(Vec<sqlparser::ast::Expr>, ParamPositions)> {
    let text = &*for_mode(text, mode);
    let dialect = MySqlDialect {};
    let tokens = Tokenizer::new(&dialect, text)
        .with_unescape(true)
        .tokenize_with_location()
        .map_err(|e| SqlError::Parse {
            near: e.to_string(),
            line: 1,
        })?;
    let mut params = HashMap::new();
    for t in &tokens {
        if matches!(&t.token, Token::Placeholder(p) if p == "?") {
            let n = params.len();
            params.insert((t.span.start.line, t.span.start.column), n);
        }
    }
    check_nesting(&tokens)?;
    let mut p = Parser::new(&dialect).with_tokens_with_locations(mysql_tokens(tokens));
    let mut list = Vec::new();
    loop {
        list.push(p.parse_expr().map_err(|e| parse_error(text, e))?);
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    let next = p.peek_token();
    if next.token != Token::EOF {
        return Err(SqlError::Parse {
            near: near(text, next.span.start.line, next.span.start.column),
            line: next.span.start.line,
        });
    }
    Ok((list, params))
}

/// One statement and the lock a `LOCK IN SHARE MODE` suffix asked for.
pub fn parse_one(text: &str) -> Result<(Statement, Option<ReadLock>)> {
    parse_text(text).map(|(s, l, _, _)| (s, l))
}

/// A statement to prepare, its read lock and lock wait, and the positions of its `?`
/// placeholders, numbered in text order.
pub struct Prepared {
    pub stmt: Statement,
    pub lock: Option<ReadLock>,
    pub wait: crate::dispatch::LockWait,
    pub params: ParamPositions,
}

/// A statement to prepare ([`Prepared`]).
pub fn parse_prepared(text: &str, mode: SqlMode) -> Result<Prepared> {
    let text = &*for_mode(text, mode);
    let (stmt, lock, wait, parsed) = parse_text(text)?;
    let dialect = MySqlDialect {};
    let toks = Tokenizer::new(&dialect, &parsed)
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
    Ok(Prepared {
        stmt,
        lock,
        wait,
        params,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_programs_are_not_supported_rather_than_bad_syntax() {
        for (text, what) in [
            (
                "create procedure p() begin select 1; end",
                "CREATE PROCEDURE",
            ),
            (
                "CREATE DEFINER=`root`@`%` PROCEDURE p() SELECT 1",
                "CREATE PROCEDURE",
            ),
            (
                "create or replace function f() returns int return 1",
                "CREATE FUNCTION",
            ),
            (
                "CREATE FUNCTION ed25519_password RETURNS STRING SONAME 'x.so'",
                "CREATE FUNCTION",
            ),
            (
                "create trigger tr before insert on t for each row set new.a = 1",
                "CREATE TRIGGER",
            ),
            (
                "CREATE EVENT e ON SCHEDULE EVERY 1 HOUR DO DELETE FROM t",
                "CREATE EVENT",
            ),
            ("alter procedure p comment 'x'", "ALTER PROCEDURE"),
        ] {
            match parse_one(text) {
                Err(SqlError::Unsupported(w)) => assert_eq!(w, what, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        // A real syntax error stays one.
        assert!(matches!(
            parse_one("create table t (a int,)"),
            Err(SqlError::Parse { .. })
        ));
        assert!(matches!(
            parse_one("create view v as select function from t where"),
            Err(SqlError::Parse { .. })
        ));
    }

    #[test]
    fn a_syntax_error_quotes_the_text_from_the_bad_token() {
        let Err(SqlError::Parse { near, line }) = parse_one("SELEC 1") else {
            panic!("expected a parse error");
        };
        assert_eq!(line, 1);
        assert!(near.starts_with("SELEC"), "{near}");
    }

    #[test]
    fn update_with_a_comma_list_of_tables_reads_the_rest_as_a_from_list() {
        let Prepared {
            stmt, params: p, ..
        } = parse_prepared(
            "UPDATE a, b SET a.x = ?, b.s = 'x,y' WHERE a.id = b.id AND b.k IN (?, 1)",
            SqlMode::default(),
        )
        .expect("parses");
        let text = stmt.to_string();
        assert!(text.starts_with("UPDATE a FROM b SET"), "{text}");
        assert!(text.contains("'x,y'"), "{text}");
        assert_eq!(p.len(), 2);
        assert!(parse_one("SELECT a, b FROM t").is_ok());
        // Written by the client, UPDATE … FROM is MariaDB's syntax error.
        // `:name` is not a placeholder: 1064 near it, as MariaDB's parser stops there.
        let Err(SqlError::Parse { near, line }) =
            parse_one("SELECT a FROM t\nWHERE a = :named AND b = 1")
        else {
            panic!("a named placeholder is a syntax error");
        };
        assert_eq!((near.as_str(), line), (":named AND b = 1", 2));
        assert!(matches!(
            parse_one("SELECT :1"),
            Err(SqlError::Parse { .. })
        ));
        // `:=` is an assignment, `: ` no placeholder.
        assert!(parse_one("SELECT @a:=1").is_ok());
        let Err(SqlError::Parse { near, .. }) = parse_one("UPDATE a SET x = 1 FROM b") else {
            panic!("UPDATE … FROM parsed");
        };
        assert_eq!(near, "FROM b");
        assert!(matches!(
            parse_one("SELEC a, b"),
            Err(SqlError::Parse { .. })
        ));
    }

    #[test]
    fn update_and_delete_ignore_are_read_as_flags_with_placeholders_in_place() {
        let Prepared {
            stmt, params: p, ..
        } = parse_prepared("UPDATE IGNORE t SET a = ? WHERE id = ?", SqlMode::default())
            .expect("parses");
        let Statement::Update(u) = &stmt else {
            panic!("not an UPDATE: {stmt}");
        };
        assert!(update_is_ignore(u));
        assert_eq!(u.table.to_string(), "t");
        let mut cols: Vec<_> = p.keys().map(|(_, c)| *c).collect();
        cols.sort();
        // `?` at columns 25 and 38 of the text as written.
        assert_eq!(cols, vec![25, 38]);
        for text in [
            "DELETE IGNORE FROM t WHERE a = 1",
            "delete quick ignore t1 FROM t1 JOIN t2 ON t1.a = t2.a",
        ] {
            let (stmt, _) = parse_one(text).expect("parses");
            let Statement::Delete(d) = &stmt else {
                panic!("not a DELETE: {stmt}");
            };
            assert!(delete_is_ignore(d), "{text}");
        }
        let (stmt, _) = parse_one("UPDATE `ignore` SET a = 1").expect("parses");
        let Statement::Update(u) = &stmt else {
            panic!("not an UPDATE");
        };
        assert!(!update_is_ignore(u));
        assert!(matches!(
            parse_one("UPDATE ignore SET a = 1"),
            Err(SqlError::Parse { .. })
        ));
    }

    #[test]
    fn unaliased_items_are_named_by_their_text_as_written() {
        let names = |text: &str| -> Vec<String> {
            let (stmt, _) = parse_one(text).expect("parses");
            let Statement::Query(q) = stmt else {
                panic!("{text}")
            };
            let sqlparser::ast::SetExpr::Select(s) = &*q.body else {
                panic!("{text}")
            };
            s.projection
                .iter()
                .map(|i| match i {
                    sqlparser::ast::SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
                    other => format!("unnamed {other}"),
                })
                .collect()
        };
        assert_eq!(
            names("SELECT a  +  1, COUNT( * ),concat('é','b') x, a, 'z', (a), ((a+1)) FROM t"),
            [
                "a  +  1",
                "COUNT( * )",
                "x",
                "unnamed a",
                "unnamed 'z'",
                "unnamed (a)",
                "((a+1))"
            ]
        );
        assert_eq!(
            names("SELECT DISTINCT CASE WHEN a THEN 1 END, a IS NULL\n, - a FROM t WHERE 1"),
            ["CASE WHEN a THEN 1 END", "a IS NULL", "- a"]
        );
        assert_eq!(
            names("SELECT (SELECT b+1 FROM u), CAST(a AS CHAR), 1 -- c\n + 2 FROM t FOR UPDATE"),
            ["(SELECT b+1 FROM u)", "CAST(a AS CHAR)", "1 -- c\n + 2"]
        );
        let long = format!("SELECT {}", vec!["1"; 200].join("+"));
        assert_eq!(names(&long)[0].len(), MAX_ITEM_NAME);
    }

    #[test]
    fn bang_binds_tighter_than_binary_operators() {
        let (stmt, _) = parse_one(
            "SELECT !a > 0, ! 2 + 1, !(a > 1), !!a, !t.a * 2, !abs(a) - 1, !@v, !@@autocommit, !~a",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let text = stmt.to_string();
        assert!(text.contains("(NOT (a)) > 0"), "{text}");
        assert!(text.contains("(NOT (2)) + 1"), "{text}");
        assert!(text.contains("(NOT ((a > 1)))"), "{text}");
        assert!(text.contains("(NOT ((NOT (a))))"), "{text}");
        assert!(text.contains("(NOT (t.a)) * 2"), "{text}");
        assert!(text.contains("(NOT (abs(a))) - 1"), "{text}");
        assert!(parse_one("SELECT a != 1").is_ok());
    }

    #[test]
    fn insert_select_without_from_takes_on_duplicate_key_update() {
        let (stmt, _) = parse_one("INSERT INTO t SELECT 1, 2 ON DUPLICATE KEY UPDATE c = 3")
            .unwrap_or_else(|e| panic!("{e}"));
        let text = stmt.to_string();
        assert!(text.contains("FROM DUAL ON DUPLICATE KEY UPDATE"), "{text}");
    }

    #[test]
    fn placeholders_are_numbered_in_text_order() {
        let Prepared { params: p, .. } = parse_prepared(
            "SELECT c FROM t WHERE id BETWEEN ? AND ?",
            SqlMode::default(),
        )
        .expect("parses");
        let mut v: Vec<_> = p.into_iter().collect();
        v.sort();
        assert_eq!(v.iter().map(|(_, i)| *i).collect::<Vec<_>>(), vec![0, 1]);
    }

    #[test]
    fn ansi_quotes_and_no_backslash_escapes_rewrite_only_what_they_change() {
        let ansi = SqlMode(SqlMode::ANSI_QUOTES);
        assert_eq!(
            for_mode(r#"SELECT "a""b", 'x"y' FROM t -- "c""#, ansi),
            r#"SELECT `a"b`, 'x"y' FROM t -- "c""#
        );
        let raw = SqlMode(SqlMode::NO_BACKSLASH_ESCAPES);
        assert_eq!(
            for_mode(r"SELECT 'a\nb', 'c\'", raw),
            r"SELECT 'a\\nb', 'c\\'"
        );
        assert_eq!(
            for_mode(r"SELECT 'a\'b'", SqlMode::default()),
            r"SELECT 'a\'b'"
        );
    }
}
