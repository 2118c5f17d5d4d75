//! The small dispatch on leading keywords, for what sqlparser rejects or what is simpler to
//! read here: transaction control, SHOW, DESCRIBE, USE, KILL, SET, CHECK TABLE, FLUSH
//! TABLES … FOR EXPORT, UNLOCK TABLES, and `LOCK IN SHARE MODE` (stripped, then parsed).

/// A token of the keyword dispatch: a word (keyword or identifier, backquotes removed),
/// a quoted string, or punctuation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    Word(String),
    Quoted(String),
    Str(String),
    Punct(char),
}

impl Tok {
    pub fn is(&self, kw: &str) -> bool {
        matches!(self, Tok::Word(w) if w.eq_ignore_ascii_case(kw))
    }
    /// An identifier (plain word or backquoted).
    pub fn ident(&self) -> Option<&str> {
        match self {
            Tok::Word(w) | Tok::Quoted(w) => Some(w),
            _ => None,
        }
    }
}

/// Strips leading whitespace and comments (`/* */` except `/*! */`, `-- `, `#`).
pub fn skip_leading_comments(mut s: &str) -> &str {
    loop {
        let t = s.trim_start();
        if let Some(rest) = t.strip_prefix("/*") {
            let exec = rest.strip_prefix('!').or_else(|| rest.strip_prefix("M!"));
            if let Some(body) = exec {
                // An executable comment for a newer server is a comment here.
                let digits = body.bytes().take_while(u8::is_ascii_digit).count();
                let newer = digits > 0
                    && body[..digits]
                        .parse::<u32>()
                        .is_ok_and(|v| v > COMMENT_VERSION);
                if !newer {
                    return t;
                }
            }
            match rest.find("*/") {
                Some(i) => s = &rest[i + 2..],
                None => return "",
            }
        } else if t
            .strip_prefix("--")
            .is_some_and(|r| r.chars().next().is_none_or(char::is_whitespace))
            || t.starts_with('#')
        {
            match t.find('\n') {
                Some(i) => s = &t[i + 1..],
                None => return "",
            }
        } else {
            return t;
        }
    }
}

/// The server version executable comments compare with (`/*!40101 …*/` runs here, as in
/// MariaDB 10.11; `/*!110000 …*/` is a comment).
const COMMENT_VERSION: u32 = 101199;

/// The statement inside an executable comment that is the whole text (`/*!40101 SET
/// @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='' */`, as mariadb-dump writes them), so it is
/// dispatched as if written plainly; `Some("")` for one meant for a newer server (a
/// comment to it). `None`: not such a text.
pub fn executable_comment(text: &str) -> Option<&str> {
    let body = text
        .strip_prefix("/*!")
        .or_else(|| text.strip_prefix("/*M!"))?
        .strip_suffix("*/")?;
    if body.contains("*/") {
        return None;
    }
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    let inner = body[digits..].trim();
    if digits > 0 {
        let version: u32 = body[..digits].parse().ok()?;
        if version > COMMENT_VERSION {
            return Some("");
        }
    }
    Some(inner)
}

/// Splits `s` into tokens; `None` on an unterminated quote. Comments are skipped, except the
/// text of an executable comment (`/*!NNNNN text */`, `/*M!NNNNNN text */`) whose version
/// is not above the server's, which is read as statement text (mariadb-admin sends
/// `show /*!40003 GLOBAL */ variables`, dumps `/*!40101 SET … */`).
pub fn lex(s: &str) -> Option<Vec<Tok>> {
    let mut out = Vec::new();
    let b: Vec<char> = s.chars().collect();
    let mut i = 0;
    let mut in_hint = false;
    while i < b.len() {
        let c = b[i];
        if in_hint && c == '*' && b.get(i + 1) == Some(&'/') {
            in_hint = false;
            i += 2;
        } else if c == '/' && b.get(i + 1) == Some(&'*') {
            let mut j = i + 2;
            if b.get(j) == Some(&'M') && b.get(j + 1) == Some(&'!') {
                j += 1;
            }
            if b.get(j) == Some(&'!') && !in_hint {
                j += 1;
                let start = j;
                while j < b.len() && b[j].is_ascii_digit() && j - start < 6 {
                    j += 1;
                }
                let version: u32 = b[start..j].iter().collect::<String>().parse().unwrap_or(0);
                if version <= COMMENT_VERSION {
                    in_hint = true;
                    i = j;
                    continue;
                }
            }
            // A comment (or a hint for a later version): to its end.
            match (i + 2..b.len().saturating_sub(1)).find(|&k| b[k] == '*' && b[k + 1] == '/') {
                Some(k) => i = k + 2,
                None => i = b.len(),
            }
        } else if c == '#'
            || (c == '-'
                && b.get(i + 1) == Some(&'-')
                && b.get(i + 2).is_none_or(|n| n.is_whitespace()))
        {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '`' || c == '\'' || c == '"' {
            let mut v = String::new();
            i += 1;
            loop {
                let ch = *b.get(i)?;
                if ch == c {
                    if b.get(i + 1) == Some(&c) {
                        v.push(c);
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                if ch == '\\' && c != '`' {
                    let n = *b.get(i + 1)?;
                    v.push(match n {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        'b' => '\u{8}',
                        'Z' => '\u{1a}',
                        '0' => '\0',
                        other => other,
                    });
                    i += 2;
                    continue;
                }
                v.push(ch);
                i += 1;
            }
            out.push(if c == '`' {
                Tok::Quoted(v)
            } else {
                Tok::Str(v)
            });
        } else if c.is_alphanumeric() || c == '_' || c == '@' || c == '$' || c == '.' {
            let st = i;
            while i < b.len() && (b[i].is_alphanumeric() || matches!(b[i], '_' | '@' | '$' | '.')) {
                i += 1;
            }
            out.push(Tok::Word(b[st..i].iter().collect()));
        } else {
            out.push(Tok::Punct(c));
            i += 1;
        }
    }
    Some(out)
}

/// `name` or `db.name` (as one dotted word or quoted parts) at `toks[i..]`; returns the
/// parts and the next index.
pub fn qualified_name(toks: &[Tok], mut i: usize) -> Option<(Option<String>, String, usize)> {
    let first = toks.get(i)?;
    let mut parts: Vec<String> = match first {
        Tok::Word(w) => w.split('.').map(str::to_string).collect(),
        Tok::Quoted(q) => vec![q.clone()],
        _ => return None,
    };
    i += 1;
    // `db`.`t` lexes as Quoted, Word("."), Quoted or Quoted, Punct... handle the dot forms.
    while let Some(Tok::Word(w)) = toks.get(i) {
        if w == "." {
            if let Some(n) = toks.get(i + 1).and_then(Tok::ident) {
                parts.push(n.to_string());
                i += 2;
                continue;
            }
        }
        if let Some(rest) = w.strip_prefix('.') {
            if !rest.is_empty() {
                parts.push(rest.to_string());
                i += 1;
                continue;
            }
        }
        break;
    }
    parts.retain(|p| !p.is_empty());
    match parts.len() {
        1 => Some((None, parts.pop()?, i)),
        2 => {
            let t = parts.pop()?;
            Some((parts.pop(), t, i))
        }
        _ => None,
    }
}

/// The text of a statement as it came off the wire. Statement text is utf8mb4, but a
/// client that quotes a binary value into it (mysqlclient, go-sql-driver with
/// `interpolateParams`, Connector/J's client-side prepared statements, PHP, …) puts the
/// value's raw bytes between the quotes: text that is not UTF-8. Each string literal whose
/// bytes are not UTF-8 becomes the hex literal of the bytes it stands for (its escapes
/// undone), which is what MariaDB keeps for it; an introducer before it (`_binary`) stays.
/// Other invalid bytes (outside string literals) are replaced, as before.
pub fn statement_text(b: &[u8]) -> std::borrow::Cow<'_, str> {
    if let Ok(s) = std::str::from_utf8(b) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out: Vec<u8> = Vec::with_capacity(b.len() * 2);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\'' | b'"' => {
                let start = i;
                let mut value = Vec::new();
                let mut j = i + 1;
                let mut closed = false;
                while j < b.len() {
                    match b[j] {
                        x if x == c && b.get(j + 1) == Some(&c) => {
                            value.push(c);
                            j += 2;
                        }
                        x if x == c => {
                            closed = true;
                            break;
                        }
                        b'\\' if j + 1 < b.len() => {
                            let e = b[j + 1];
                            match e {
                                b'0' => value.push(0),
                                b'b' => value.push(8),
                                b'n' => value.push(b'\n'),
                                b'r' => value.push(b'\r'),
                                b't' => value.push(b'\t'),
                                b'Z' => value.push(0x1a),
                                // LIKE's escapes keep their backslash.
                                b'%' | b'_' => value.extend_from_slice(&[b'\\', e]),
                                other => value.push(other),
                            }
                            j += 2;
                        }
                        x => {
                            value.push(x);
                            j += 1;
                        }
                    }
                }
                if !closed {
                    out.extend_from_slice(&b[start..]);
                    break;
                }
                let raw = &b[start + 1..j];
                if std::str::from_utf8(raw).is_ok() {
                    out.extend_from_slice(&b[start..=j]);
                } else {
                    // `_binary'…'` must not become the word `_binaryX`.
                    if out
                        .last()
                        .is_some_and(|p| p.is_ascii_alphanumeric() || *p == b'_')
                    {
                        out.push(b' ');
                    }
                    out.extend_from_slice(b"X'");
                    for v in value {
                        out.extend_from_slice(format!("{v:02x}").as_bytes());
                    }
                    out.push(b'\'');
                }
                i = j + 1;
            }
            // Quoted names and comments are copied as they are (a quote in them is no literal).
            b'`' | b'#' | b'-' | b'/' => {
                let rest = &b[i..];
                let end = if c == b'`' {
                    rest[1..].iter().position(|&x| x == b'`').map(|p| p + 2)
                } else if c == b'#' || rest.starts_with(b"-- ") {
                    Some(
                        rest.iter()
                            .position(|&x| x == b'\n')
                            .map_or(rest.len(), |p| p + 1),
                    )
                } else if rest.starts_with(b"/*") {
                    rest.windows(2)
                        .skip(2)
                        .position(|w| w == b"*/")
                        .map(|p| p + 4)
                } else {
                    Some(1)
                };
                let end = end.unwrap_or(rest.len());
                out.extend_from_slice(&rest[..end]);
                i += end;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    std::borrow::Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

/// The index of the quote that closes the one at `b[open]` (`b.len()` if none): inside `'`
/// and `"` a backslash escapes the next byte, inside a backquote it does not. A doubled
/// quote reads as a close and a new open, which skips the same text.
pub(crate) fn quoted_end(b: &[u8], open: usize) -> usize {
    let q = b[open];
    let mut i = open + 1;
    while i < b.len() && b[i] != q {
        i += if b[i] == b'\\' && q != b'`' { 2 } else { 1 };
    }
    i.min(b.len())
}

/// Splits a multi-statement query (CLIENT_MULTI_STATEMENTS) at the semicolons that end
/// statements: those outside quotes (`'…'`, `"…"`, `` `…` ``, with doubled quotes and, under
/// `backslash_escapes`, backslash escapes) and comments (`/* … */`, `-- `, `#`). Each piece
/// keeps its text as written, without the semicolon; a last piece of only whitespace and
/// comments is no statement. An unterminated quote or comment runs to the end (the statement
/// then fails to parse, as in MariaDB).
pub fn split_statements(s: &str, backslash_escapes: bool) -> Vec<&str> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < b.len() {
                    match b[i] {
                        c if c == q && b.get(i + 1) == Some(&q) => i += 2,
                        c if c == q => break,
                        b'\\' if q != b'`' && backslash_escapes => i += 2,
                        _ => i += 1,
                    }
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = s[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 1);
            }
            b'#' => i = s[i..].find('\n').map_or(b.len(), |p| i + p),
            b'-' if b.get(i + 1) == Some(&b'-')
                && b.get(i + 2).is_none_or(|c| c.is_ascii_whitespace()) =>
            {
                i = s[i..].find('\n').map_or(b.len(), |p| i + p);
            }
            b';' => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    let rest = &s[start.min(s.len())..];
    if !skip_leading_comments(rest).is_empty() || out.is_empty() {
        out.push(rest);
    }
    out
}

/// MariaDB's `SET STATEMENT a = 1, b = 'x' FOR statement`: the assignment list and the
/// statement (`None` for any other text, or with no `FOR` after the list). The list ends at
/// the first `FOR` word outside quotes and parentheses.
pub fn split_set_statement(s: &str) -> Option<(&str, &str)> {
    let t = s.trim_start();
    let word = |t: &str, w: &str| {
        t.get(..w.len()).is_some_and(|x| x.eq_ignore_ascii_case(w))
            && t[w.len()..].starts_with(|c: char| c.is_ascii_whitespace())
    };
    if !word(t, "set") {
        return None;
    }
    let t = t[3..].trim_start();
    if !word(t, "statement") {
        return None;
    }
    let list = t[9..].trim_start();
    let b = list.as_bytes();
    let (mut depth, mut i) = (0usize, 0);
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' | b'`' => i = quoted_end(b, i),
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            c if depth == 0
                && c.eq_ignore_ascii_case(&b'f')
                && i > 0
                && (b[i - 1].is_ascii_whitespace() || matches!(b[i - 1], b')' | b'\'' | b'"'))
                && word(&list[i..], "for") =>
            {
                let stmt = list[i + 3..].trim();
                return (!stmt.is_empty()).then(|| (list[..i].trim(), stmt));
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Splits `s` at its top-level commas (outside quotes and parentheses) into trimmed items;
/// `None` on an unterminated quote.
pub fn split_list(s: &str) -> Option<Vec<&str>> {
    let b = s.as_bytes();
    let (mut items, mut start, mut depth, mut i) = (Vec::new(), 0, 0usize, 0);
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                i += 1;
                loop {
                    match *b.get(i)? {
                        c if c == q && b.get(i + 1) == Some(&q) => i += 2,
                        c if c == q => break,
                        b'\\' if q != b'`' => i += 2,
                        _ => i += 1,
                    }
                }
            }
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                items.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    items.push(s[start..].trim());
    Some(items)
}

/// How a locking read waits for a row lock another transaction holds: MariaDB's
/// `FOR UPDATE` / `LOCK IN SHARE MODE` followed by `WAIT n`, `NOWAIT` or `SKIP LOCKED`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LockWait {
    /// The session's `innodb_lock_wait_timeout`.
    #[default]
    Session,
    /// At most this many seconds (`WAIT n`; `NOWAIT` is `WAIT 0`): then 1205.
    Seconds(u64),
    /// Rows locked by others are passed over (`SKIP LOCKED`).
    SkipLocked,
}

/// Removes a trailing `WAIT n`, `NOWAIT` or `SKIP LOCKED` that follows `FOR UPDATE`,
/// `FOR SHARE` or `LOCK IN SHARE MODE`; returns the rest and how to wait. Anything else is
/// left to the parser (and its 1064), as MariaDB accepts these words only there.
pub fn strip_lock_wait(sql: &str) -> (&str, LockWait) {
    let t = sql.trim_end().trim_end_matches(';').trim_end();
    let lower = t.to_ascii_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    let n = words.len();
    let (wait, take) = match words.as_slice() {
        [.., "skip", "locked"] => (LockWait::SkipLocked, 2),
        [.., "nowait"] => (LockWait::Seconds(0), 1),
        [.., "wait", secs] => match secs.parse::<u64>() {
            Ok(s) => (LockWait::Seconds(s), 2),
            Err(_) => return (sql, LockWait::Session),
        },
        _ => return (sql, LockWait::Session),
    };
    let before = &words[..n - take];
    let after_lock = before.ends_with(&["for", "update"])
        || before.ends_with(&["for", "share"])
        || before.ends_with(&["lock", "in", "share", "mode"]);
    if !after_lock {
        return (sql, LockWait::Session);
    }
    // The byte where the option's first word starts: the `take`-th word from the end.
    let mut end = t.len();
    for _ in 0..take {
        let word_start = t[..end]
            .trim_end()
            .rfind(char::is_whitespace)
            .map_or(0, |i| i + 1);
        end = word_start;
    }
    (t[..end].trim_end(), wait)
}

/// Removes a trailing `INTO @a, @b, …` (MariaDB's other place for a SELECT's INTO, after
/// FROM, WHERE, ORDER BY and LIMIT); returns the rest and the variables' names (lower-cased,
/// as user variables are). A quoted name (`` @`a b` ``) is left to the parser.
pub fn strip_trailing_into(sql: &str) -> (&str, Option<Vec<String>>) {
    let t = sql.trim_end().trim_end_matches(';').trim_end();
    let lower = t.to_ascii_lowercase();
    let Some(at) = lower.rfind(" into ") else {
        return (sql, None);
    };
    let list = &t[at + " into ".len()..];
    let mut names = Vec::new();
    for item in list.split(',') {
        let item = item.trim();
        let Some(name) = item.strip_prefix('@') else {
            return (sql, None);
        };
        let plain = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '.'));
        if !plain {
            return (sql, None);
        }
        names.push(name.to_lowercase());
    }
    (t[..at].trim_end(), Some(names))
}

/// Removes a trailing `LOCK IN SHARE MODE` (MySQL's old FOR SHARE); returns the rest.
pub fn strip_lock_in_share_mode(sql: &str) -> Option<&str> {
    let t = sql.trim_end().trim_end_matches(';').trim_end();
    let lower = t.to_ascii_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    let n = words.len();
    if n >= 4 && words[n - 4..] == ["lock", "in", "share", "mode"] {
        let idx = lower.rfind("lock")?;
        return Some(&t[..idx]);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_statement_is_split_at_the_first_for_outside_quotes_and_parentheses() {
        assert_eq!(
            split_set_statement("SET STATEMENT sql_mode = '' FOR INSERT INTO t VALUES (1)"),
            Some(("sql_mode = ''", "INSERT INTO t VALUES (1)"))
        );
        assert_eq!(
            split_set_statement(
                "  set\tstatement a = 'for x', b = (SELECT 1 for) for\nselect 'for'"
            ),
            Some(("a = 'for x', b = (SELECT 1 for)", "select 'for'"))
        );
        assert_eq!(
            split_set_statement("SET STATEMENT max_statement_time=1 FOR"),
            None
        );
        assert_eq!(split_set_statement("SET STATEMENT a = 1 SELECT 1"), None);
        assert_eq!(split_set_statement("SET sql_mode = '' FOR x"), None);
        assert_eq!(split_set_statement("SET STATEMENTS = 1 FOR x"), None);
        assert_eq!(
            split_set_statement("SET STATEMENT a = before FOR SELECT 1"),
            Some(("a = before", "SELECT 1"))
        );
    }

    #[test]
    fn multi_statements_split_only_at_semicolons_outside_quotes_and_comments() {
        let split = |s| split_statements(s, true);
        assert_eq!(split("SELECT 1"), vec!["SELECT 1"]);
        assert_eq!(split("SELECT 1;"), vec!["SELECT 1"]);
        assert_eq!(split("SELECT 1; SELECT 2"), vec!["SELECT 1", " SELECT 2"]);
        assert_eq!(split("SELECT 1;  -- done\n"), vec!["SELECT 1"]);
        assert_eq!(
            split("SELECT ';', \"a;\", `x;y` FROM t; DO 1"),
            vec!["SELECT ';', \"a;\", `x;y` FROM t", " DO 1"]
        );
        assert_eq!(
            split("SELECT 'it''s;' ;DO 2"),
            vec!["SELECT 'it''s;' ", "DO 2"]
        );
        assert_eq!(
            split("SELECT 'a\\';' ;DO 2"),
            vec!["SELECT 'a\\';' ", "DO 2"]
        );
        // NO_BACKSLASH_ESCAPES: the backslash is a character, the quote ends the string.
        assert_eq!(
            split_statements("SELECT 'a\\';DO 2", false),
            vec!["SELECT 'a\\'", "DO 2"]
        );
        assert_eq!(
            split("SELECT 1 /* ; */; # x;y\nSELECT 2 -- ;\n;"),
            vec!["SELECT 1 /* ; */", " # x;y\nSELECT 2 -- ;\n"]
        );
        // --x is not a comment (minus minus x).
        assert_eq!(split("SELECT 1--1;DO 3"), vec!["SELECT 1--1", "DO 3"]);
        assert_eq!(split("SELECT 'open;"), vec!["SELECT 'open;"]);
        assert_eq!(split(""), vec![""]);
    }

    #[test]
    fn names_lex_in_every_quoting() {
        let t = lex("SHOW INDEX FROM `my db`.`t 1`").expect("lexes");
        assert!(t[0].is("show"));
        let (db, name, _) = qualified_name(&t, 3).expect("name");
        assert_eq!(db.as_deref(), Some("my db"));
        assert_eq!(name, "t 1");
        let t = lex("DESCRIBE shop.items").expect("lexes");
        let (db, name, _) = qualified_name(&t, 1).expect("name");
        assert_eq!((db.as_deref(), name.as_str()), (Some("shop"), "items"));
    }

    #[test]
    fn string_literals_of_raw_bytes_become_hex_literals() {
        // mysqlclient's escaping of b"\x00\xff'\\" with a LIKE escape and a doubled quote.
        let wire = b"INSERT INTO t VALUES ('\\0\xff\\'\\\\', _binary'\xfe''\\%', 'ok \xc3\xa9', `a'b`) -- it's\n";
        assert_eq!(
            statement_text(wire),
            "INSERT INTO t VALUES (X'00ff275c', _binary X'fe275c25', 'ok \u{e9}', `a'b`) -- it's\n"
        );
        assert_eq!(statement_text(b"SELECT 'plain'"), "SELECT 'plain'");
        // An unterminated literal is left for the parser to refuse.
        assert_eq!(statement_text(b"SELECT '\xff"), "SELECT '\u{fffd}");
    }

    #[test]
    fn lists_split_at_top_level_commas_only() {
        assert_eq!(
            split_list("a = CONCAT(@@a, ',x'), b = 'it''s, \\' ,', NAMES utf8mb4"),
            Some(vec![
                "a = CONCAT(@@a, ',x')",
                "b = 'it''s, \\' ,'",
                "NAMES utf8mb4"
            ])
        );
        assert_eq!(split_list("`a,b` = 1"), Some(vec!["`a,b` = 1"]));
        assert_eq!(split_list("a = 'open, "), None);
    }

    #[test]
    fn lock_wait_options_are_stripped_only_after_a_lock_clause() {
        assert_eq!(
            strip_lock_wait("SELECT * FROM t FOR UPDATE SKIP LOCKED;"),
            ("SELECT * FROM t FOR UPDATE", LockWait::SkipLocked)
        );
        assert_eq!(
            strip_lock_wait("select 1 from t lock in share mode  nowait"),
            ("select 1 from t lock in share mode", LockWait::Seconds(0))
        );
        assert_eq!(
            strip_lock_wait("SELECT 1 FROM t WHERE a = 1 FOR UPDATE WAIT 5"),
            (
                "SELECT 1 FROM t WHERE a = 1 FOR UPDATE",
                LockWait::Seconds(5)
            )
        );
        for untouched in [
            "SELECT nowait FROM t",
            "SELECT 1 FROM t WAIT 5",
            "SELECT 1 FROM t FOR UPDATE WAIT x",
            "SELECT 'for update skip locked'",
        ] {
            assert_eq!(strip_lock_wait(untouched), (untouched, LockWait::Session));
        }
    }

    #[test]
    fn a_trailing_into_of_user_variables_is_stripped() {
        assert_eq!(
            strip_trailing_into("SELECT a, b FROM t WHERE c = 1 INTO @x, @Y;"),
            (
                "SELECT a, b FROM t WHERE c = 1",
                Some(vec!["x".into(), "y".into()])
            )
        );
        for untouched in [
            "SELECT a INTO @x FROM t",
            "INSERT INTO t VALUES (1)",
            "SELECT 1 INTO OUTFILE '/tmp/x'",
            "SELECT 'a into @b'",
        ] {
            assert_eq!(
                strip_trailing_into(untouched),
                (untouched, None),
                "{untouched}"
            );
        }
    }

    #[test]
    fn lock_in_share_mode_is_stripped() {
        assert_eq!(
            strip_lock_in_share_mode("SELECT 1 FROM t LOCK IN SHARE MODE;").map(str::trim),
            Some("SELECT 1 FROM t")
        );
        assert_eq!(strip_lock_in_share_mode("SELECT 1"), None);
        assert_eq!(skip_leading_comments("/* x */ -- y\n SELECT 1"), "SELECT 1");
        let words = |s: &str| -> Vec<String> {
            lex(s)
                .unwrap_or_default()
                .into_iter()
                .map(|t| match t {
                    Tok::Word(w) | Tok::Quoted(w) | Tok::Str(w) => w,
                    Tok::Punct(c) => c.to_string(),
                })
                .collect()
        };
        assert_eq!(
            words("show /*!40003 GLOBAL */ variables"),
            ["show", "GLOBAL", "variables"]
        );
        assert_eq!(
            words("SET /*M!100000 x=1 */ # gone"),
            ["SET", "x", "=", "1"]
        );
        assert_eq!(words("show /* GLOBAL */ -- x\n status"), ["show", "status"]);
        assert_eq!(words("show /*!110000 GLOBAL */ status"), ["show", "status"]);
    }
}
