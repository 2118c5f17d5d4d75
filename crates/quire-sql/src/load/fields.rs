//! Splits the bytes of a LOAD DATA file into rows of fields, as MariaDB's `READ_INFO` does,
//! reading the source as it comes (a file on the server, or the client's packets).
//!
//! Invariants:
//! 1. Memory is bounded by the window (`WINDOW` bytes, or a longer terminator) plus the row
//!    being read: the source is never read whole.
//! 2. The line terminator is looked for before the field terminator at each byte (MariaDB's
//!    order), so `FIELDS TERMINATED BY '\n'` with the default lines reads one field a line.
//! 3. A field is NULL when it is exactly the escape character then `N` (`\N`), or, with a
//!    non-empty ENCLOSED BY, the unenclosed word `NULL`; an empty field is an empty string.

use std::io::Read;

/// How much is read from the source at a time.
const WINDOW: usize = 64 * 1024;

/// The FIELDS and LINES options, as bytes in the file's character set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    pub field_term: Vec<u8>,
    pub enclosed: Option<u8>,
    pub escaped: Option<u8>,
    pub line_start: Vec<u8>,
    pub line_term: Vec<u8>,
}

impl Default for Format {
    /// MariaDB's defaults: tab-separated fields, newline-terminated lines, backslash escapes.
    fn default() -> Self {
        Format {
            field_term: b"\t".to_vec(),
            enclosed: None,
            escaped: Some(b'\\'),
            line_start: Vec::new(),
            line_term: b"\n".to_vec(),
        }
    }
}

/// One field: `None` is NULL.
pub type Field = Option<Vec<u8>>;

/// Reads rows from a source (invariant 1).
pub struct Rows<'r> {
    src: Box<dyn Read + 'r>,
    fmt: Format,
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
}

impl<'r> Rows<'r> {
    pub fn new(src: Box<dyn Read + 'r>, fmt: Format) -> Self {
        Rows {
            src,
            fmt,
            buf: Vec::with_capacity(WINDOW),
            pos: 0,
            eof: false,
        }
    }

    /// Makes at least `n` bytes available from `pos` unless the source ends first.
    fn fill(&mut self, n: usize) -> std::io::Result<()> {
        while self.buf.len() - self.pos < n && !self.eof {
            if self.pos > 0 {
                self.buf.drain(..self.pos);
                self.pos = 0;
            }
            let have = self.buf.len();
            self.buf.resize(have + WINDOW.max(n), 0);
            let got = loop {
                match self.src.read(&mut self.buf[have..]) {
                    Ok(k) => break k,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        self.buf.truncate(have);
                        return Err(e);
                    }
                }
            };
            self.buf.truncate(have + got);
            if got == 0 {
                self.eof = true;
            }
        }
        Ok(())
    }

    fn peek(&mut self) -> std::io::Result<Option<u8>> {
        self.fill(1)?;
        Ok(self.buf.get(self.pos).copied())
    }

    /// Whether `pat` (non-empty) is next; consumes it if so.
    fn take(&mut self, pat: &[u8]) -> std::io::Result<bool> {
        if pat.is_empty() {
            return Ok(false);
        }
        if self.buf.get(self.pos) != Some(&pat[0]) {
            // The common case answers from the first byte without a refill.
            if self.pos < self.buf.len() {
                return Ok(false);
            }
        }
        self.fill(pat.len())?;
        if self.buf[self.pos..].starts_with(pat) {
            self.pos += pat.len();
            return Ok(true);
        }
        Ok(false)
    }

    /// Skips `n` lines (IGNORE n LINES): raw line terminators, escapes respected.
    pub fn skip_lines(&mut self, n: u64) -> std::io::Result<()> {
        for _ in 0..n {
            loop {
                let line_term = std::mem::take(&mut self.fmt.line_term);
                let at_end = self.take(&line_term);
                self.fmt.line_term = line_term;
                if at_end? {
                    break;
                }
                match self.peek()? {
                    None => return Ok(()),
                    Some(b) => {
                        self.pos += 1;
                        if Some(b) == self.fmt.escaped && self.peek()?.is_some() {
                            self.pos += 1;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The next row's fields, or `None` at the end of the source.
    pub fn next_row(&mut self) -> std::io::Result<Option<Vec<Field>>> {
        if !self.fmt.line_start.is_empty() {
            // Lines without the prefix are skipped, and what precedes it on a line.
            let start = self.fmt.line_start.clone();
            loop {
                if self.take(&start)? {
                    break;
                }
                if self.peek()?.is_none() {
                    return Ok(None);
                }
                self.pos += 1;
            }
        } else if self.peek()?.is_none() {
            return Ok(None);
        }
        let mut row = Vec::new();
        loop {
            let (field, more) = self.field()?;
            row.push(field);
            if !more {
                return Ok(Some(row));
            }
        }
    }

    /// One field and whether another follows on the line.
    fn field(&mut self) -> std::io::Result<(Field, bool)> {
        let (ft, lt) = (
            std::mem::take(&mut self.fmt.field_term),
            std::mem::take(&mut self.fmt.line_term),
        );
        let r = self.field_with(&ft, &lt);
        self.fmt.field_term = ft;
        self.fmt.line_term = lt;
        r
    }

    fn field_with(&mut self, ft: &[u8], lt: &[u8]) -> std::io::Result<(Field, bool)> {
        let mut v = Vec::new();
        let enc = self.fmt.enclosed;
        let esc = self.fmt.escaped;
        if enc.is_some() && self.peek()? == enc {
            self.pos += 1;
            loop {
                let Some(b) = self.peek()? else {
                    return Ok((Some(v), false));
                };
                self.pos += 1;
                if Some(b) == esc && Some(b) != enc {
                    match self.peek()? {
                        Some(c) => {
                            self.pos += 1;
                            v.push(unescape(c));
                        }
                        None => v.push(b),
                    }
                } else if Some(b) == enc {
                    if self.peek()? == enc {
                        self.pos += 1;
                        v.push(b);
                    } else if self.take(lt)? || self.peek()?.is_none() {
                        return Ok((Some(v), false));
                    } else if self.take(ft)? {
                        return Ok((Some(v), true));
                    } else {
                        // A quote inside the field, not before a terminator: kept.
                        v.push(b);
                    }
                } else {
                    v.push(b);
                }
            }
        }
        let mut raw_null = false;
        loop {
            if self.take(lt)? {
                return Ok((finish(v, raw_null, enc.is_some()), false));
            }
            if self.take(ft)? {
                return Ok((finish(v, raw_null, enc.is_some()), true));
            }
            let Some(b) = self.peek()? else {
                return Ok((finish(v, raw_null, enc.is_some()), false));
            };
            self.pos += 1;
            if Some(b) == esc {
                match self.peek()? {
                    Some(c) => {
                        self.pos += 1;
                        raw_null = v.is_empty() && c == b'N';
                        v.push(unescape(c));
                    }
                    None => v.push(b),
                }
            } else {
                raw_null = false;
                v.push(b);
            }
        }
    }
}

/// Invariant 3: `\N` alone (the last byte read was its `N`), or the word NULL when fields
/// may be enclosed.
fn finish(v: Vec<u8>, raw_null: bool, enclosing: bool) -> Field {
    if (raw_null && v == b"N") || (enclosing && v == b"NULL") {
        None
    } else {
        Some(v)
    }
}

/// The character an escape sequence stands for (MariaDB's `unescape`).
fn unescape(c: u8) -> u8 {
    match c {
        b'0' => 0,
        b'b' => 8,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'Z' => 26,
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &[u8], fmt: Format) -> Vec<Vec<Field>> {
        let mut r = Rows::new(Box::new(std::io::Cursor::new(text.to_vec())), fmt);
        let mut out = Vec::new();
        while let Some(row) = r.next_row().expect("in memory") {
            out.push(row);
        }
        out
    }

    fn s(x: &str) -> Field {
        Some(x.as_bytes().to_vec())
    }

    #[test]
    fn tab_separated_lines_with_escapes_and_null() {
        let got = rows(b"1\ta\\tb\n2\t\\N\n\n3", Format::default());
        assert_eq!(
            got,
            vec![
                vec![s("1"), s("a\tb")],
                vec![s("2"), None],
                vec![s("")],
                vec![s("3")]
            ]
        );
    }

    #[test]
    fn enclosed_fields_keep_terminators_and_doubled_quotes() {
        let fmt = Format {
            field_term: b",".to_vec(),
            enclosed: Some(b'"'),
            line_term: b"\r\n".to_vec(),
            ..Format::default()
        };
        let got = rows(b"\"a,b\",\"x\"\"y\",NULL,\"NULL\"\r\n7,\"\",8\r\n", fmt);
        assert_eq!(
            got,
            vec![
                vec![s("a,b"), s("x\"y"), None, s("NULL")],
                vec![s("7"), s(""), s("8")]
            ]
        );
    }

    #[test]
    fn line_prefixes_skip_lines_without_them() {
        let fmt = Format {
            line_start: b"xxx".to_vec(),
            field_term: b",".to_vec(),
            ..Format::default()
        };
        let got = rows(b"xxx1,a\nsomething\nyyyxxx2,b\n", fmt);
        assert_eq!(got, vec![vec![s("1"), s("a")], vec![s("2"), s("b")]]);
    }

    #[test]
    fn rows_longer_than_the_window_are_read_whole() {
        let big = "z".repeat(WINDOW * 3 + 17);
        let text = format!("1\t{big}\n2\tq\n");
        let got = rows(text.as_bytes(), Format::default());
        assert_eq!(got, vec![vec![s("1"), s(&big)], vec![s("2"), s("q")]]);
    }

    #[test]
    fn ignore_lines_skips_headers() {
        let mut r = Rows::new(
            Box::new(std::io::Cursor::new(b"h1\nh2\n1\n".to_vec())),
            Format::default(),
        );
        r.skip_lines(2).expect("in memory");
        assert_eq!(r.next_row().expect("in memory"), Some(vec![s("1")]));
        assert_eq!(r.next_row().expect("in memory"), None);
    }
}
