//! # Character sets at the wire
//!
//! Quire keeps and computes every string in UTF-8 (utf8mb4). A client whose
//! `character_set_client` is latin1 (its handshake named collation 8 or 47, or it ran
//! `SET NAMES latin1`) sends latin1 bytes, and one whose `character_set_results` is latin1
//! reads latin1 bytes, as with MariaDB 10.11. The conversion happens here, at the server's
//! boundary (docs/protocol.md, "Character sets"):
//!
//! - in: the text of COM_QUERY and COM_STMT_PREPARE, COM_INIT_DB's name, and the string
//!   parameters of COM_STMT_EXECUTE (not the BLOB-typed ones, which are bytes);
//! - out: the strings of text and binary result rows in non-binary columns, the names and
//!   the character set number (8, latin1_swedish_ci) and length of column definitions, and
//!   error messages.
//!
//! MariaDB's latin1 is Windows-1252: 0x80 is U+20AC (€), 0x81, 0x8D, 0x8F, 0x90 and 0x9D
//! are the C1 controls of the same number. A character latin1 cannot hold goes out as `?`.
//! An ascii connection (`SET NAMES ascii`) is converted the same way: its bytes 0x00..0x7F
//! are the characters of the same number, and a byte past 0x7F, which ascii does not have,
//! comes in as `?`.
//!
//! Invariants:
//! 1. Decoding latin1 or ascii never fails: every byte is one character, so what such a
//!    client sends is always text.
//! 2. Encoding then decoding is the identity for every character the set holds; any other
//!    character becomes exactly one `?` byte.
//! 3. A value in a binary column (character set 63) and a `_binary` literal go through
//!    untouched in both directions.

use std::borrow::Cow;

/// The character set of one direction of a connection, as far as the wire is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WireCharset {
    /// utf8mb4 or utf8mb3 (a subset): the bytes are Quire's own.
    #[default]
    Utf8,
    /// MariaDB's latin1 (Windows-1252).
    Latin1,
    /// ascii: 7-bit US-ASCII.
    Ascii,
}

/// MariaDB's latin1 for bytes 0x80..=0x9F (`ctype-latin1.c`); the other bytes are the code
/// points of the same number.
const HIGH: [char; 32] = [
    '\u{20AC}', '\u{0081}', '\u{201A}', '\u{0192}', '\u{201E}', '\u{2026}', '\u{2020}', '\u{2021}',
    '\u{02C6}', '\u{2030}', '\u{0160}', '\u{2039}', '\u{0152}', '\u{008D}', '\u{017D}', '\u{008F}',
    '\u{0090}', '\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}', '\u{2022}', '\u{2013}', '\u{2014}',
    '\u{02DC}', '\u{2122}', '\u{0161}', '\u{203A}', '\u{0153}', '\u{009D}', '\u{017E}', '\u{0178}',
];

/// The latin1 character set number of result columns (latin1_swedish_ci).
pub const LATIN1_SWEDISH_CI: u16 = 8;
/// The ascii character set number of result columns (ascii_general_ci).
pub const ASCII_GENERAL_CI: u16 = 11;
/// The binary character set's number: such columns are never converted.
pub const BINARY: u16 = 63;

impl WireCharset {
    /// The character set a `character_set_client` / `_results` value names; anything but
    /// latin1 and ascii is sent as stored (utf8mb4, utf8mb3, or NULL: no conversion).
    pub fn named(name: &str) -> WireCharset {
        if name.eq_ignore_ascii_case("latin1") {
            WireCharset::Latin1
        } else if name.eq_ignore_ascii_case("ascii") {
            WireCharset::Ascii
        } else {
            WireCharset::Utf8
        }
    }

    /// The number of a result column's character set on this connection, for a column
    /// that is not binary; `None`: the column's own (no conversion).
    pub fn column_charset(self) -> Option<u16> {
        match self {
            WireCharset::Utf8 => None,
            WireCharset::Latin1 => Some(LATIN1_SWEDISH_CI),
            WireCharset::Ascii => Some(ASCII_GENERAL_CI),
        }
    }

    /// One byte from the client as a character (latin1 and ascii: invariant 1).
    fn char_of(self, b: u8) -> char {
        match self {
            WireCharset::Latin1 => latin1_char(b),
            _ if b.is_ascii() => char::from(b),
            _ => '?',
        }
    }

    /// Bytes from the client as text (invariant 1); UTF-8 that is not valid is replaced.
    pub fn decode(self, b: &[u8]) -> Cow<'_, str> {
        match self {
            WireCharset::Utf8 => String::from_utf8_lossy(b),
            WireCharset::Latin1 if b.is_ascii() => {
                // ASCII is the same in both: no copy.
                Cow::Borrowed(std::str::from_utf8(b).unwrap_or_default())
            }
            WireCharset::Ascii if b.is_ascii() => {
                Cow::Borrowed(std::str::from_utf8(b).unwrap_or_default())
            }
            WireCharset::Latin1 | WireCharset::Ascii => {
                Cow::Owned(b.iter().map(|&x| self.char_of(x)).collect())
            }
        }
    }

    /// Text for the client (invariant 2).
    pub fn encode(self, s: &str) -> Cow<'_, [u8]> {
        match self {
            WireCharset::Utf8 => Cow::Borrowed(s.as_bytes()),
            WireCharset::Latin1 if s.is_ascii() => Cow::Borrowed(s.as_bytes()),
            WireCharset::Latin1 => Cow::Owned(s.chars().map(latin1_byte).collect()),
            WireCharset::Ascii if s.is_ascii() => Cow::Borrowed(s.as_bytes()),
            WireCharset::Ascii => Cow::Owned(
                s.chars()
                    .map(|c| if c.is_ascii() { c as u8 } else { b'?' })
                    .collect(),
            ),
        }
    }
}

fn latin1_char(b: u8) -> char {
    match b {
        0x80..=0x9F => HIGH[usize::from(b - 0x80)],
        _ => char::from(b),
    }
}

fn latin1_byte(c: char) -> u8 {
    match u32::from(c) {
        n @ (0..=0x7F | 0xA0..=0xFF) => n as u8,
        _ => HIGH
            .iter()
            .position(|&h| h == c)
            .map_or(b'?', |i| 0x80 + i as u8),
    }
}

/// A latin1 client's statement as text: `statement_text_in` latin1.
pub fn latin1_statement_text(b: &[u8]) -> String {
    statement_text_in(b, WireCharset::Latin1)
}

/// A latin1 or ascii client's statement as text: each byte decoded in `cs` (invariant 1),
/// except that a `_binary` string literal holding non-ASCII bytes becomes the hex literal
/// of its bytes (its escapes undone), so that it stays those bytes (invariant 3), as
/// PyMySQL's `_binary'…'` parameters are meant.
pub fn statement_text_in(b: &[u8], cs: WireCharset) -> String {
    let mut out = String::with_capacity(b.len() + 16);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'\'' || c == b'"' {
            let (value, end, closed) = literal(b, i);
            let binary = out
                .trim_end()
                .get(out.trim_end().len().saturating_sub(7)..)
                .is_some_and(|w| w.eq_ignore_ascii_case("_binary"));
            let raw = &b[i..end];
            if closed && binary && !raw.is_ascii() {
                // `_binary'…'` must not become the word `_binaryX`.
                if out.ends_with(|p: char| p.is_ascii_alphanumeric() || p == '_') {
                    out.push(' ');
                }
                out.push_str("X'");
                for x in &value {
                    out.push_str(&format!("{x:02X}"));
                }
                out.push('\'');
            } else {
                out.extend(raw.iter().map(|&x| cs.char_of(x)));
            }
            i = end;
            continue;
        }
        // Quoted names and comments are text as they are (a quote in them is no literal).
        let rest = &b[i..];
        let len = match c {
            b'`' => rest[1..].iter().position(|&x| x == b'`').map(|p| p + 2),
            b'#' => Some(line_len(rest)),
            b'-' if rest.starts_with(b"-- ") => Some(line_len(rest)),
            b'/' if rest.starts_with(b"/*") => rest
                .windows(2)
                .skip(2)
                .position(|w| w == b"*/")
                .map(|p| p + 4),
            _ => Some(1),
        }
        .unwrap_or(rest.len());
        out.extend(rest[..len].iter().map(|&x| cs.char_of(x)));
        i += len;
    }
    out
}

fn line_len(rest: &[u8]) -> usize {
    rest.iter()
        .position(|&x| x == b'\n')
        .map_or(rest.len(), |p| p + 1)
}

/// The string literal opening at `b[start]` (a quote): its value with escapes undone, the
/// index after it, and whether it was closed.
fn literal(b: &[u8], start: usize) -> (Vec<u8>, usize, bool) {
    let q = b[start];
    let mut value = Vec::new();
    let mut j = start + 1;
    while j < b.len() {
        match b[j] {
            x if x == q && b.get(j + 1) == Some(&q) => {
                value.push(q);
                j += 2;
            }
            x if x == q => return (value, j + 1, true),
            b'\\' if j + 1 < b.len() => {
                value.push(match b[j + 1] {
                    b'0' => 0,
                    b'b' => 8,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'Z' => 0x1a,
                    other => other,
                });
                j += 2;
            }
            x => {
                value.push(x);
                j += 1;
            }
        }
    }
    (value, j, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_round_trips_every_byte_and_replaces_what_it_cannot_hold() {
        let all: Vec<u8> = (0..=255).collect();
        let text = WireCharset::Latin1.decode(&all).into_owned();
        assert_eq!(text.chars().count(), 256);
        assert_eq!(WireCharset::Latin1.encode(&text).as_ref(), &all[..]);
        assert_eq!(&text[..3], "\0\u{1}\u{2}");
        assert!(text.contains('€') && text.contains('é') && text.contains('ÿ'));
        assert_eq!(
            WireCharset::Latin1.encode("Ω ok é €").as_ref(),
            b"? ok \xe9 \x80"
        );
        assert_eq!(WireCharset::Latin1.encode("😀").as_ref(), b"?");
    }

    #[test]
    fn ascii_replaces_what_it_cannot_hold_both_ways() {
        assert_eq!(WireCharset::Ascii.decode(b"ok \x80\xff").as_ref(), "ok ??");
        assert_eq!(WireCharset::Ascii.encode("é ok 😀").as_ref(), b"? ok ?");
        let all: Vec<u8> = (0..=127).collect();
        let text = WireCharset::Ascii.decode(&all).into_owned();
        assert_eq!(WireCharset::Ascii.encode(&text).as_ref(), &all[..]);
        assert_eq!(
            statement_text_in(b"SELECT '\xe9', _binary'\xe9'", WireCharset::Ascii),
            "SELECT '?', _binary X'E9'"
        );
        assert_eq!(WireCharset::named("ASCII"), WireCharset::Ascii);
        assert_eq!(WireCharset::Ascii.column_charset(), Some(ASCII_GENERAL_CI));
    }

    #[test]
    fn binary_literals_of_a_latin1_statement_keep_their_bytes() {
        let sql = b"INSERT INTO t VALUES ('caf\xe9', _binary'\xe9\\0\xff', _binary 'ab')";
        assert_eq!(
            latin1_statement_text(sql),
            "INSERT INTO t VALUES ('café', _binary X'E900FF', _binary 'ab')"
        );
        // An unclosed literal is decoded as text (the parser reports it).
        assert_eq!(latin1_statement_text(b"SELECT '\xe9"), "SELECT 'é");
        // A quote in a comment or a quoted name opens no literal.
        assert_eq!(
            latin1_statement_text(b"SELECT `a'\xe9` /* it's */, _binary'\xff'"),
            "SELECT `a'é` /* it's */, _binary X'FF'"
        );
    }
}
