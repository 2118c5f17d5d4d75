//! Text INSERTs of literal rows, planned once per shape.
//!
//! Clients that quote values into the text (sysbench's oltp_insert, PHP's PDO with emulated
//! prepares, PyMySQL, mysqlclient) send an INSERT whose text differs in every execution, so
//! the COM_QUERY plan cache (keyed by the exact text) never hits, and each one is tokenized,
//! parsed and bound again: about half of the server's instructions per row under callgrind
//! (bench/results/suite.md). Here such a text is read by a small scanner into its *shape*,
//! the text with each literal replaced by `?`, and the literals' values. The shape is
//! planned once, as a prepared statement would be, and each text of that shape runs that
//! plan with its literals as the parameters, as COM_STMT_EXECUTE runs a prepared INSERT.
//!
//! A literal in a VALUES row is a value and nothing else (not a column position, a type's
//! length or a name), and MariaDB gives a prepared INSERT's parameters the literals'
//! semantics; so the two runs are the same statement. The scanner takes only what it can
//! read without doubt, and everything else goes the long way:
//!
//! ```text
//! INSERT [IGNORE] [INTO] name[.name] [(name, …)] VALUE[S] (lit, …)[, (lit, …)]…
//! lit: 'text' | digits[.digits] | -digits | NULL
//! ```
//!
//! A backslash in a string is read as MariaDB's escapes `\0 \' \" \b \n \r \t \Z \\`
//! (what mariadb-dump writes) unless NO_BACKSLASH_ESCAPES; any other escape (`\%`, `\_`,
//! `\x`), or a backslash under NO_BACKSLASH_ESCAPES, is left to the full parser.
//!
//! Not taken (the full parser reads them): comments, double-quoted text (its meaning
//! depends on ANSI_QUOTES), introducers,
//! hexadecimal and bit literals, exponents, expressions, DEFAULT, ON DUPLICATE KEY UPDATE,
//! SET, SELECT, RETURNING.
//!
//! A text longer than [`MAX_TEXT`] (a dump's extended INSERT, thousands of rows) is read
//! into the shape of its first row instead ([`insert_rows`]): every row must have that
//! row's arity, the one-row shape is planned (and kept: a dump's INSERTs into one table share
//! it, whatever their row counts), and the session repeats the plan's row for each row of
//! the text (`Session::rows_plan`). Before, sqlparser read each of the text's literals,
//! trying a data type first and formatting the error it discarded: with binding, three
//! quarters of a restore's instructions per row (bench/results/bulk-insert.md).

use quire_engine::row::Value;

/// The longest text read for its shape.
pub(crate) const MAX_TEXT: usize = 16 * 1024;

/// A text's shape and its literals' values, in text order (the parameters of the shape's
/// plan).
#[derive(Debug, PartialEq)]
pub(crate) struct Shape {
    pub text: String,
    pub values: Vec<Value>,
}

/// The shape of `text` if it is an INSERT of literal rows the scanner reads (module doc).
/// `escapes`: backslashes are escapes (sql_mode without NO_BACKSLASH_ESCAPES).
pub(crate) fn insert_values(text: &str, escapes: bool) -> Option<Shape> {
    if text.len() > MAX_TEXT {
        return None;
    }
    scan(text, false, escapes).map(|(shape, _)| shape)
}

/// A long INSERT of literal rows: the shape of its first row alone, every literal's value
/// (row after row), and the arity of its rows (all the same, or not taken).
pub(crate) fn insert_rows(text: &str, escapes: bool) -> Option<(Shape, usize)> {
    if text.len() <= MAX_TEXT {
        return None;
    }
    scan(text, true, escapes)
}

/// Reads `text` (module doc). `first_row_only`: the shape stops after the first row, and
/// every row must have its arity (returned with the shape; 0 otherwise).
fn scan(text: &str, first_row_only: bool, escapes: bool) -> Option<(Shape, usize)> {
    let mut s = Scanner {
        b: text.as_bytes(),
        at: 0,
        escapes,
    };
    s.keyword("insert")?;
    let _ = s.keyword("ignore");
    let _ = s.keyword("into");
    s.name()?;
    if s.punct(b'.') {
        s.name()?;
    }
    if s.punct(b'(') {
        loop {
            s.name()?;
            if s.punct(b')') {
                break;
            }
            s.punct(b',').then_some(())?;
        }
    }
    if s.keyword("values").is_none() {
        s.keyword("value")?;
    }
    let mut out = String::with_capacity(if first_row_only { 256 } else { text.len() });
    let mut values = Vec::new();
    let mut copied = 0;
    let mut arity = 0;
    let mut rows = 0usize;
    loop {
        s.punct(b'(').then_some(())?;
        let row_start = values.len();
        loop {
            s.skip_space();
            let start = s.at;
            values.push(s.literal()?);
            if rows == 0 || !first_row_only {
                out.push_str(text.get(copied..start)?);
                out.push('?');
                copied = s.at;
            }
            if s.punct(b')') {
                break;
            }
            s.punct(b',').then_some(())?;
        }
        if rows == 0 {
            arity = values.len();
            if first_row_only {
                // The shape ends with the first row's `)`.
                out.push_str(text.get(copied..s.at)?);
                copied = text.len();
            }
        } else if first_row_only && values.len() - row_start != arity {
            return None;
        }
        rows += 1;
        if !s.punct(b',') {
            break;
        }
    }
    s.skip_space();
    if s.at != s.b.len() {
        return None;
    }
    if let Some(rest) = text.get(copied..) {
        out.push_str(rest);
    }
    Some((
        Shape { text: out, values },
        if first_row_only { arity } else { 0 },
    ))
}

struct Scanner<'t> {
    b: &'t [u8],
    at: usize,
    /// Backslashes in strings are escapes.
    escapes: bool,
}

impl Scanner<'_> {
    /// Skips white space; a comment makes the text not taken (its `/*!…*/` may be SQL).
    fn skip_space(&mut self) {
        while self.b.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.at).copied()
    }

    fn word_len(&self) -> usize {
        self.b[self.at..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_' || **c == b'$')
            .count()
    }

    /// The keyword `kw` (lower case) as a whole word.
    fn keyword(&mut self, kw: &str) -> Option<()> {
        self.skip_space();
        let n = self.word_len();
        (n == kw.len() && self.b[self.at..self.at + n].eq_ignore_ascii_case(kw.as_bytes()))
            .then(|| self.at += n)
    }

    /// A plain or backquoted name (checked by the full parser when the shape is planned:
    /// the shape keeps the text as written).
    fn name(&mut self) -> Option<()> {
        self.skip_space();
        if self.peek() == Some(b'`') {
            let close = self.b[self.at + 1..].iter().position(|&c| c == b'`')?;
            self.at += close + 2;
            // A doubled backquote is one inside the name: not taken, for simplicity.
            return (self.peek() != Some(b'`')).then_some(());
        }
        let n = self.word_len();
        let starts_with_letter = self
            .peek()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_' || c == b'$');
        (n > 0 && starts_with_letter).then(|| self.at += n)
    }

    fn punct(&mut self, c: u8) -> bool {
        self.skip_space();
        let here = self.peek() == Some(c);
        if here {
            self.at += 1;
        }
        here
    }

    /// A literal (module doc), as the binder reads it (`bind::literal`).
    fn literal(&mut self) -> Option<Value> {
        match self.peek()? {
            b'\'' => {
                let mut text = Vec::new();
                let mut i = self.at + 1;
                loop {
                    // Up to the next quote or backslash at once: the text between is taken
                    // as it is.
                    let run = memchr::memchr2(b'\'', b'\\', self.b.get(i..)?)?;
                    text.extend_from_slice(&self.b[i..i + run]);
                    i += run;
                    if self.b[i] == b'\\' {
                        if !self.escapes {
                            return None;
                        }
                        text.push(match self.b.get(i + 1)? {
                            b'0' => 0,
                            b'\'' => b'\'',
                            b'"' => b'"',
                            b'b' => 8,
                            b'n' => b'\n',
                            b'r' => b'\r',
                            b't' => b'\t',
                            b'Z' => 26,
                            b'\\' => b'\\',
                            // `\%` and `\_` keep their backslash, others lose it: the full
                            // parser's business.
                            _ => return None,
                        });
                        i += 2;
                        continue;
                    }
                    if self.b.get(i + 1) != Some(&b'\'') {
                        break;
                    }
                    // A doubled quote is one quote in the text.
                    text.push(b'\'');
                    i += 2;
                }
                self.at = i + 1;
                // Two literals side by side are one string in SQL: not taken.
                self.skip_space();
                if self.peek() == Some(b'\'') || self.peek() == Some(b'"') {
                    return None;
                }
                // The text is a `str`, and the quotes are ASCII: the slice is UTF-8.
                String::from_utf8(text).ok().map(Value::Str)
            }
            b'-' => {
                self.at += 1;
                let digits = self.digits(false)?;
                match crate::bind::number_literal(digits).ok()? {
                    // A positive i64 negates without overflow.
                    Value::Int(i) => Some(Value::Int(-i)),
                    _ => None,
                }
            }
            c if c.is_ascii_digit() => {
                let digits = self.digits(true)?;
                crate::bind::number_literal(digits).ok()
            }
            _ => {
                self.keyword("null")?;
                Some(Value::Null)
            }
        }
    }

    /// Digits (and one `.digits` if `fraction`) ending the word.
    fn digits(&mut self, fraction: bool) -> Option<&str> {
        let start = self.at;
        let run = |s: &Self, at: usize| s.b[at..].iter().take_while(|c| c.is_ascii_digit()).count();
        let mut end = start + run(self, start);
        if end == start {
            return None;
        }
        if fraction && self.b.get(end) == Some(&b'.') {
            let more = run(self, end + 1);
            if more == 0 {
                return None;
            }
            end += 1 + more;
        }
        // `1e5`, `0x1F`, `12abc`, `1.2.3`: not a plain number.
        if self
            .b
            .get(end)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'$' || *c == b'.')
        {
            return None;
        }
        self.at = end;
        std::str::from_utf8(&self.b[start..end]).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(t: &str) -> Option<(String, Vec<Value>)> {
        insert_values(t, true).map(|s| (s.text, s.values))
    }

    #[test]
    fn a_long_insert_is_read_into_its_first_rows_shape() {
        let row = |i: usize| format!("({i}, 'v{i}', NULL)");
        let body: Vec<String> = (0..2000).map(row).collect();
        let text = format!("INSERT INTO `t` (a, b, c) VALUES {}", body.join(",\n"));
        let (s, arity) = insert_rows(&text, true).expect("taken");
        assert_eq!(s.text, "INSERT INTO `t` (a, b, c) VALUES (?, ?, ?)");
        assert_eq!(arity, 3);
        assert_eq!(s.values.len(), 6000);
        assert_eq!(
            &s.values[3..6],
            &[Value::Int(1), Value::Str("v1".into()), Value::Null]
        );
        // Short texts keep the whole shape; rows of another arity, or anything after the
        // rows, are not taken.
        assert!(insert_rows("INSERT INTO t VALUES (1)", true).is_none());
        let ragged = format!("{text}, (1, 2)");
        assert!(insert_rows(&ragged, true).is_none());
        let trailing = format!("{text} ON DUPLICATE KEY UPDATE a = 1");
        assert!(insert_rows(&trailing, true).is_none());
    }

    #[test]
    fn sysbench_insert_is_read_into_its_shape() {
        let (text, values) = shape(
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES (0, 5014, '68487932199-96439406143', '2261')",
        )
        .expect("taken");
        assert_eq!(
            text,
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)"
        );
        assert_eq!(
            values,
            vec![
                Value::Int(0),
                Value::Int(5014),
                Value::Str("68487932199-96439406143".into()),
                Value::Str("2261".into())
            ]
        );
    }

    #[test]
    fn rows_names_and_literal_kinds() {
        let (text, values) = shape(
            "insert ignore `db`.t values(-7,'it''s',NULL , 1.50),\n (18446744073709551615, '', null, 3)",
        )
        .expect("taken");
        assert_eq!(
            text,
            "insert ignore `db`.t values(?,?,? , ?),\n (?, ?, ?, ?)"
        );
        assert_eq!(values[0], Value::Int(-7));
        assert_eq!(values[1], Value::Str("it's".into()));
        assert_eq!(values[2], Value::Null);
        assert!(matches!(values[3], Value::Decimal(_)));
        assert_eq!(values[4], Value::UInt(u64::MAX));
        assert_eq!(values[5], Value::Str(String::new()));
    }

    #[test]
    fn what_the_scanner_does_not_read_goes_to_the_parser() {
        for t in [
            "INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE a = 2",
            "INSERT INTO t VALUES (1 + 1)",
            "INSERT INTO t VALUES (DEFAULT)",
            "INSERT INTO t VALUES ('a\\%b')",
            "INSERT INTO t VALUES ('a\\_b')",
            "INSERT INTO t VALUES ('a\\xb')",
            "INSERT INTO t VALUES ('a\\')",
            "INSERT INTO t VALUES (\"a\")",
            "INSERT INTO t VALUES ('a' 'b')",
            "INSERT INTO t VALUES (1e5)",
            "INSERT INTO t VALUES (0x1F)",
            "INSERT INTO t VALUES (.5)",
            "INSERT INTO t VALUES (1.)",
            "INSERT INTO t VALUES (- 1)",
            "INSERT INTO t VALUES (-1.5)",
            "INSERT INTO t VALUES (_utf8mb4'a')",
            "INSERT INTO t VALUES (x'1F')",
            "INSERT INTO t VALUES (now())",
            "INSERT INTO t VALUES (1) /* c */",
            "INSERT INTO t VALUES ()",
            "INSERT INTO t SELECT 1",
            "INSERT INTO t SET a = 1",
            "INSERT INTO t VALUES (1) RETURNING a",
            "INSERT INTO t VALUES (1),",
            "INSERT INTO t VALUES (1",
            "INSERT INTO t VALUES ('a)",
            "INSERT INTO `a``b` VALUES (1)",
            "INSERT INTO 1t VALUES (1)",
            "REPLACE INTO t VALUES (1)",
            "INSERT LOW_PRIORITY INTO t VALUES (1)",
        ] {
            assert_eq!(shape(t), None, "{t}");
        }
        // mariadb-dump's escapes are read, unless NO_BACKSLASH_ESCAPES.
        let t = "INSERT INTO t VALUES ('it\\'s\\n\\\\')";
        assert_eq!(
            shape(t).map(|(_, v)| v),
            Some(vec![Value::Str("it's\n\\".into())])
        );
        assert_eq!(insert_values(t, false), None);
        assert_eq!(
            shape(&format!(
                "INSERT INTO t VALUES ('{}')",
                "x".repeat(MAX_TEXT)
            )),
            None
        );
    }

    #[test]
    fn the_shape_parses_as_a_statement_with_one_placeholder_per_literal() {
        for t in [
            "INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y')",
            "insert into t value (NULL)",
            "INSERT t VALUES (-3, 4.25, 'é ü')",
        ] {
            let s = insert_values(t, true).expect("taken");
            let p = crate::parse::parse_prepared(&s.text, Default::default()).expect("parses");
            assert_eq!(p.params.len(), s.values.len(), "{t}");
        }
    }

    /// A literal the scanner takes, as text.
    fn literal_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            any::<i64>().prop_map(|i| i.to_string()),
            any::<u64>().prop_map(|u| u.to_string()),
            "[0-9]{1,30}",
            "[0-9]{1,20}\\.[0-9]{1,20}",
            Just("NULL".to_string()),
            Just("null".to_string()),
            "[a-zA-Z0-9 ,()'é€😀\t\n_%-]{0,30}"
                .prop_map(|s| format!("'{}'", s.replace('\'', "''"))),
            // mariadb-dump's escapes.
            proptest::collection::vec(
                prop_oneof![
                    "[a-z é€]{1,3}",
                    Just("\\0".to_string()),
                    Just("\\'".to_string()),
                    Just("\\\"".to_string()),
                    Just("\\b".to_string()),
                    Just("\\n".to_string()),
                    Just("\\r".to_string()),
                    Just("\\t".to_string()),
                    Just("\\Z".to_string()),
                    Just("\\\\".to_string()),
                    Just("''".to_string()),
                ],
                0..8,
            )
            .prop_map(|parts| format!("'{}'", parts.concat())),
        ]
    }

    proptest::proptest! {
        /// Each value the scanner reads is the literal the full parser reads at its place.
        #[test]
        fn values_equal_the_parser_s_literals(
            rows in proptest::collection::vec(proptest::collection::vec(literal_text(), 1..5), 1..4),
        ) {
            use sqlparser::ast as sql;
            let width = rows[0].len();
            let rows: Vec<Vec<String>> = rows.into_iter().map(|mut r| { r.resize(width, "1".into()); r }).collect();
            let text = format!(
                "INSERT INTO t VALUES {}",
                rows.iter().map(|r| format!("({})", r.join(", "))).collect::<Vec<_>>().join(", ")
            );
            let Some(s) = insert_values(&text, true) else { panic!("not taken: {text}") };
            let (stmt, _) = crate::parse::parse_one(&text).expect("parses");
            let sql::Statement::Insert(ins) = stmt else { panic!("not an insert") };
            let source = ins.source.expect("values");
            let sql::SetExpr::Values(v) = *source.body else { panic!("not values") };
            let parsed: Vec<&sql::Expr> = v.rows.iter().flat_map(|r| r.iter()).collect();
            proptest::prop_assert_eq!(parsed.len(), s.values.len());
            for (e, got) in parsed.iter().zip(&s.values) {
                let want = match e {
                    sql::Expr::Value(v) => match crate::bind::literal(v, &Default::default()).expect("binds") {
                        crate::expr::Expr::Lit(v) => v,
                        other => panic!("{other:?}"),
                    },
                    sql::Expr::UnaryOp { op: sql::UnaryOperator::Minus, expr } => match &**expr {
                        sql::Expr::Value(sql::ValueWithSpan { value: sql::Value::Number(n, _), .. }) => {
                            match crate::bind::number_literal(n).expect("number") {
                                Value::Int(i) => Value::Int(-i),
                                other => panic!("{other:?}"),
                            }
                        }
                        other => panic!("{other:?}"),
                    },
                    other => panic!("{other:?}"),
                };
                proptest::prop_assert_eq!(&want, got, "{}", text);
            }
        }
    }
}
