//! String collations: how two strings of a column compare, and the memcomparable sort key an
//! index holds for a string (docs/row-format.md, "Collations"; docs/collations.md).
//!
//! All are MariaDB's, PAD SPACE: a shorter string compares as if padded with spaces, so
//! `'a' = 'a  '`. A collation turns a string into a sequence of weights (its characters'
//! weights one after the other) and compares those; the padding compares against the weight
//! of a space.
//! - `utf8mb4_general_ci`: one 16-bit weight per character, from the table MariaDB 10.11
//!   reports through `WEIGHT_STRING()` (`general_ci_table.rs`): case and most accents fold
//!   (`'a' = 'A' = 'ä'`, `'ß' = 's'`), and every character above U+FFFF weighs U+FFFD.
//! - `utf8mb4_bin`: the weight of a character is its code point.
//! - `utf8mb4_unicode_ci` (UCA 4.0.0) and `utf8mb4_unicode_520_ci` (UCA 5.2.0): 0 to 8
//!   primary weights per character, measured from MariaDB 10.11 (`uca.rs`): ignorable
//!   characters weigh nothing (`'a\u{AD}b' = 'ab'`), expansions several (`'ß' = 'ss'`).
//!
//! Invariants (proptests in `row/tests.rs`):
//! 1. `memcmp(sort_key(a), sort_key(b)) == cmp(a, b)` for every pair of strings, so an index
//!    orders and finds strings exactly as a comparison in SQL does.
//! 2. A sort key is prefix-free (a string's key is never a proper prefix of another's), so
//!    key parts concatenate and invert (descending parts) without changing the order.
//! 3. No weight is 0, and every weight is at most 0x10FFFF (the sort key's weight encoding).

use std::cmp::Ordering;
use std::sync::OnceLock;

use super::byte_charset_table::{
    ASCII_GENERAL_CI, LATIN1_GENERAL_CI, LATIN1_GENERAL_CS, LATIN1_SWEDISH_CI, LATIN1_TO_UNICODE,
};
use super::general_ci_table::GENERAL_CI_EXCEPTIONS;
use super::uca::{self, UcaTable, MAX_WEIGHTS};

/// The weight of a space in utf8mb4_bin and utf8mb4_general_ci.
const SPACE: u32 = 0x20;

/// Sort-key token markers (see [`Collation::sort_key`]).
const LOW: u8 = 0x01;
const END: u8 = 0x02;
/// A high token whose space run is too long for the one-byte form: `0x80`, then the run
/// length inverted, big-endian.
const HIGH_LONG: u8 = 0x80;
/// Space runs shorter than this fit the high token's marker byte (`0xFF - run`).
const HIGH_SHORT_RUNS: u32 = 0x7F;

/// A character set: the characters a string column can hold. Values stay UTF-8 in the
/// executor and the engine; a column of a narrower set holds only its characters
/// (docs/collations.md, "Character sets").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Charset {
    /// All of Unicode, up to 4 bytes a character.
    Utf8mb4,
    /// The BMP (U+0000..U+FFFF), up to 3 bytes a character (`utf8` in MariaDB 10.11).
    Utf8mb3,
    /// MariaDB's latin1: cp1252, whose five holes are the C1 controls of the same number.
    Latin1,
    /// US ASCII: U+0000..U+007F.
    Ascii,
}

impl Charset {
    /// The character sets in SHOW CHARACTER SET's order (MariaDB's: by their default
    /// collation's id).
    pub const ALL: [Charset; 4] = [
        Charset::Latin1,
        Charset::Ascii,
        Charset::Utf8mb3,
        Charset::Utf8mb4,
    ];

    /// MariaDB's name.
    pub fn name(self) -> &'static str {
        match self {
            Charset::Utf8mb4 => "utf8mb4",
            Charset::Utf8mb3 => "utf8mb3",
            Charset::Latin1 => "latin1",
            Charset::Ascii => "ascii",
        }
    }

    /// The character set named `name` (any case; `utf8` is utf8mb3, as in MariaDB 10.11).
    pub fn from_name(name: &str) -> Option<Charset> {
        if name.eq_ignore_ascii_case("utf8") {
            return Some(Charset::Utf8mb3);
        }
        Charset::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name))
    }

    /// SHOW CHARACTER SET's description.
    pub fn description(self) -> &'static str {
        match self {
            Charset::Utf8mb4 | Charset::Utf8mb3 => "UTF-8 Unicode",
            Charset::Latin1 => "cp1252 West European",
            Charset::Ascii => "US ASCII",
        }
    }

    /// The most bytes a character takes in this set (`Maxlen`, CHARACTER_OCTET_LENGTH).
    pub fn max_bytes(self) -> u32 {
        match self {
            Charset::Utf8mb4 => 4,
            Charset::Utf8mb3 => 3,
            Charset::Latin1 | Charset::Ascii => 1,
        }
    }

    /// The collation a column of this set gets when it names none.
    pub fn default_collation(self) -> Collation {
        match self {
            Charset::Utf8mb4 => Collation::Utf8mb4GeneralCi,
            Charset::Utf8mb3 => Collation::Utf8mb3GeneralCi,
            Charset::Latin1 => Collation::Latin1SwedishCi,
            Charset::Ascii => Collation::AsciiGeneralCi,
        }
    }

    /// Whether the set holds `c`.
    pub fn holds(self, c: char) -> bool {
        match self {
            Charset::Utf8mb4 => true,
            Charset::Utf8mb3 => u32::from(c) <= 0xFFFF,
            Charset::Latin1 => latin1_byte(c).is_some(),
            Charset::Ascii => c.is_ascii(),
        }
    }

    /// `s` in this set's bytes (what LENGTH and HEX count), a character it does not hold as
    /// `?` (as MariaDB converts it).
    pub fn encode(self, s: &str) -> Vec<u8> {
        match self {
            Charset::Utf8mb4 | Charset::Utf8mb3 => s.as_bytes().to_vec(),
            Charset::Latin1 => s.chars().map(|c| latin1_byte(c).unwrap_or(b'?')).collect(),
            Charset::Ascii => s
                .chars()
                .map(|c| if c.is_ascii() { c as u8 } else { b'?' })
                .collect(),
        }
    }

    /// latin1 bytes as text (every byte is a latin1 character).
    pub fn latin1_text(b: &[u8]) -> String {
        b.iter()
            .map(|&x| char::from_u32(u32::from(LATIN1_TO_UNICODE[usize::from(x)])).unwrap_or('?'))
            .collect()
    }

    /// The length of `s` in this set's bytes.
    pub fn byte_len(self, s: &str) -> usize {
        match self {
            Charset::Utf8mb4 | Charset::Utf8mb3 => s.len(),
            Charset::Latin1 | Charset::Ascii => s.chars().count(),
        }
    }
}

/// The latin1 byte of `c`, if latin1 holds it.
pub fn latin1_byte(c: char) -> Option<u8> {
    let cp = u32::from(c);
    match u8::try_from(cp) {
        // 0x80..0x9F are cp1252's letters and signs, apart from its five holes.
        Ok(b)
            if !(0x80..=0x9F).contains(&b)
                || u32::from(LATIN1_TO_UNICODE[usize::from(b)]) == cp =>
        {
            Some(b)
        }
        _ => (0x80u8..=0x9F).find(|&b| u32::from(LATIN1_TO_UNICODE[usize::from(b)]) == cp),
    }
}

/// The collation of a string column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Collation {
    /// `utf8mb4_bin`: by code point (the engine's default: an embedded caller who names no
    /// collation gets exact comparisons).
    #[default]
    Utf8mb4Bin,
    /// `utf8mb4_general_ci`: case-insensitive (the SQL layer's default).
    Utf8mb4GeneralCi,
    /// `utf8mb4_unicode_ci`: UCA 4.0.0, primary level (case and accents fold, `'ß' = 'ss'`).
    Utf8mb4UnicodeCi,
    /// `utf8mb4_unicode_520_ci`: UCA 5.2.0, primary level.
    Utf8mb4Unicode520Ci,
    /// The utf8mb3 collations compare as their utf8mb4 twins (on the BMP, all they hold).
    Utf8mb3GeneralCi,
    Utf8mb3Bin,
    Utf8mb3UnicodeCi,
    Utf8mb3Unicode520Ci,
    /// The latin1 and ascii collations weigh a character by its byte, through the weights
    /// measured from MariaDB (`byte_charset_table.rs`).
    Latin1SwedishCi,
    Latin1Bin,
    Latin1GeneralCi,
    Latin1GeneralCs,
    AsciiGeneralCi,
    AsciiBin,
}

impl Collation {
    pub const ALL: [Collation; 14] = [
        Collation::Utf8mb4GeneralCi,
        Collation::Utf8mb4Bin,
        Collation::Utf8mb4UnicodeCi,
        Collation::Utf8mb4Unicode520Ci,
        Collation::Utf8mb3GeneralCi,
        Collation::Utf8mb3Bin,
        Collation::Utf8mb3UnicodeCi,
        Collation::Utf8mb3Unicode520Ci,
        Collation::Latin1SwedishCi,
        Collation::Latin1Bin,
        Collation::Latin1GeneralCi,
        Collation::Latin1GeneralCs,
        Collation::AsciiGeneralCi,
        Collation::AsciiBin,
    ];

    /// MariaDB's name.
    pub fn name(self) -> &'static str {
        match self {
            Collation::Utf8mb4Bin => "utf8mb4_bin",
            Collation::Utf8mb4GeneralCi => "utf8mb4_general_ci",
            Collation::Utf8mb4UnicodeCi => "utf8mb4_unicode_ci",
            Collation::Utf8mb4Unicode520Ci => "utf8mb4_unicode_520_ci",
            Collation::Utf8mb3GeneralCi => "utf8mb3_general_ci",
            Collation::Utf8mb3Bin => "utf8mb3_bin",
            Collation::Utf8mb3UnicodeCi => "utf8mb3_unicode_ci",
            Collation::Utf8mb3Unicode520Ci => "utf8mb3_unicode_520_ci",
            Collation::Latin1SwedishCi => "latin1_swedish_ci",
            Collation::Latin1Bin => "latin1_bin",
            Collation::Latin1GeneralCi => "latin1_general_ci",
            Collation::Latin1GeneralCs => "latin1_general_cs",
            Collation::AsciiGeneralCi => "ascii_general_ci",
            Collation::AsciiBin => "ascii_bin",
        }
    }

    /// MariaDB's collation id (column definitions on the wire, SHOW COLLATION).
    pub fn id(self) -> u16 {
        match self {
            Collation::Utf8mb4GeneralCi => 45,
            Collation::Utf8mb4Bin => 46,
            Collation::Utf8mb4UnicodeCi => 224,
            Collation::Utf8mb4Unicode520Ci => 246,
            Collation::Utf8mb3GeneralCi => 33,
            Collation::Utf8mb3Bin => 83,
            Collation::Utf8mb3UnicodeCi => 192,
            Collation::Utf8mb3Unicode520Ci => 214,
            Collation::Latin1SwedishCi => 8,
            Collation::Latin1Bin => 47,
            Collation::Latin1GeneralCi => 48,
            Collation::Latin1GeneralCs => 49,
            Collation::AsciiGeneralCi => 11,
            Collation::AsciiBin => 65,
        }
    }

    /// The collation named `name` (any case; `utf8_…` names the utf8mb3 one), if Quire has it.
    pub fn from_name(name: &str) -> Option<Collation> {
        let lower = name.to_ascii_lowercase();
        let name = match lower.strip_prefix("utf8_") {
            Some(rest) => format!("utf8mb3_{rest}"),
            None => lower,
        };
        Collation::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The collation with MariaDB id `id`, if Quire has it.
    pub fn from_id(id: u16) -> Option<Collation> {
        Collation::ALL.into_iter().find(|c| c.id() == id)
    }

    /// The catalog's code for this collation (docs/catalog.md). Codes are only ever added.
    pub fn code(self) -> u8 {
        match self {
            Collation::Utf8mb4Bin => 0,
            Collation::Utf8mb4GeneralCi => 1,
            Collation::Utf8mb4UnicodeCi => 2,
            Collation::Utf8mb4Unicode520Ci => 3,
            Collation::Utf8mb3GeneralCi => 4,
            Collation::Utf8mb3Bin => 5,
            Collation::Utf8mb3UnicodeCi => 6,
            Collation::Utf8mb3Unicode520Ci => 7,
            Collation::Latin1SwedishCi => 8,
            Collation::Latin1Bin => 9,
            Collation::Latin1GeneralCi => 10,
            Collation::Latin1GeneralCs => 11,
            Collation::AsciiGeneralCi => 12,
            Collation::AsciiBin => 13,
        }
    }

    pub fn from_code(code: u8) -> Option<Collation> {
        Collation::ALL.into_iter().find(|c| c.code() == code)
    }

    /// The character set of the collation.
    pub fn charset(self) -> Charset {
        match self {
            Collation::Utf8mb4Bin
            | Collation::Utf8mb4GeneralCi
            | Collation::Utf8mb4UnicodeCi
            | Collation::Utf8mb4Unicode520Ci => Charset::Utf8mb4,
            Collation::Utf8mb3GeneralCi
            | Collation::Utf8mb3Bin
            | Collation::Utf8mb3UnicodeCi
            | Collation::Utf8mb3Unicode520Ci => Charset::Utf8mb3,
            Collation::Latin1SwedishCi
            | Collation::Latin1Bin
            | Collation::Latin1GeneralCi
            | Collation::Latin1GeneralCs => Charset::Latin1,
            Collation::AsciiGeneralCi | Collation::AsciiBin => Charset::Ascii,
        }
    }

    /// The utf8mb4 collation that compares as this one does on the BMP (a utf8mb3
    /// collation's twin; the collation itself otherwise).
    pub fn utf8mb4_twin(self) -> Collation {
        match self {
            Collation::Utf8mb3GeneralCi => Collation::Utf8mb4GeneralCi,
            Collation::Utf8mb3Bin => Collation::Utf8mb4Bin,
            Collation::Utf8mb3UnicodeCi => Collation::Utf8mb4UnicodeCi,
            Collation::Utf8mb3Unicode520Ci => Collation::Utf8mb4Unicode520Ci,
            other => other,
        }
    }

    /// Whether the collation is its character set's `_bin` one (the BINARY column flag).
    pub fn is_bin(self) -> bool {
        matches!(
            self,
            Collation::Utf8mb4Bin
                | Collation::Utf8mb3Bin
                | Collation::Latin1Bin
                | Collation::AsciiBin
        )
    }

    /// Whether letters compare without case.
    pub fn is_ci(self) -> bool {
        !self.is_bin() && self != Collation::Latin1GeneralCs
    }

    /// The measured weight of each byte, for a one-byte character set's collation that has
    /// a table (the `_bin` ones weigh the byte).
    fn byte_weights(self) -> Option<&'static [u8]> {
        match self {
            Collation::Latin1SwedishCi => Some(&LATIN1_SWEDISH_CI),
            Collation::Latin1GeneralCi => Some(&LATIN1_GENERAL_CI),
            Collation::Latin1GeneralCs => Some(&LATIN1_GENERAL_CS),
            Collation::AsciiGeneralCi => Some(&ASCII_GENERAL_CI),
            _ => None,
        }
    }

    /// The weight of `c` in a one-byte character set's collation: its byte's weight plus
    /// one (invariant 3: no weight is 0, and MariaDB weighs byte 0 as 0); a character the set
    /// does not hold (only a value compared, never one stored) weighs above all of them,
    /// by code point.
    fn byte_weight(self, c: char) -> u32 {
        let byte = match self.charset() {
            Charset::Ascii => c.is_ascii().then_some(c as u8),
            _ => latin1_byte(c),
        };
        match byte {
            Some(b) => match self.byte_weights() {
                Some(t) => u32::from(t[usize::from(b)]) + 1,
                None => u32::from(b) + 1,
            },
            None => 0x100 + u32::from(c).min(0x10_FEFF),
        }
    }

    /// Whether the collation weighs a character by its byte (latin1, ascii).
    fn is_byte(self) -> bool {
        matches!(self.charset(), Charset::Latin1 | Charset::Ascii)
    }

    /// The UCA table of a UCA collation.
    fn uca(self) -> Option<&'static UcaTable> {
        match self.utf8mb4_twin() {
            Collation::Utf8mb4UnicodeCi => Some(uca::unicode_ci()),
            Collation::Utf8mb4Unicode520Ci => Some(uca::unicode_520_ci()),
            _ => None,
        }
    }

    /// The one weight of a character in a collation that has one per character.
    fn single_weight(self, c: char) -> u32 {
        match self.utf8mb4_twin() {
            this if this.is_byte() => this.byte_weight(c),
            Collation::Utf8mb4GeneralCi => match u16::try_from(u32::from(c)) {
                Ok(bmp) => u32::from(general_ci_weights()[usize::from(bmp)]),
                Err(_) => 0xFFFD,
            },
            _ => u32::from(c),
        }
    }

    /// A value equal for two characters exactly when their weights are equal, for matching
    /// character by character (LIKE, LOCATE, …: MariaDB compares the characters' whole
    /// weights there, so `'ß' LIKE 'ss'` is false even where `'ß' = 'ss'`).
    pub fn char_key(self, c: char) -> u128 {
        match self.uca() {
            // Weights are never 0 (invariant 3), so packing them high to low is one-to-one.
            Some(t) => t
                .weights(c)
                .as_slice()
                .iter()
                .enumerate()
                .fold(0u128, |k, (i, &w)| {
                    k | u128::from(w) << (16 * (MAX_WEIGHTS - 1 - i))
                }),
            None => u128::from(self.single_weight(c)),
        }
    }

    /// The weight of a space (what pads the shorter string).
    fn space(self) -> u32 {
        match self.uca() {
            Some(t) => u32::from(t.space),
            None if self.is_byte() => self.byte_weight(' '),
            None => SPACE,
        }
    }

    /// Calls `f` with the weights of `s`, in order, until it returns `Some`.
    fn weights_of<R>(self, s: &str, mut f: impl FnMut(u32) -> Option<R>) -> Option<R> {
        match self.uca() {
            Some(t) => {
                for c in s.chars() {
                    for &w in t.weights(c).as_slice() {
                        if let Some(r) = f(u32::from(w)) {
                            return Some(r);
                        }
                    }
                }
                None
            }
            None => s.chars().find_map(|c| f(self.single_weight(c))),
        }
    }

    /// Compares two strings (PAD SPACE).
    pub fn cmp(self, a: &str, b: &str) -> Ordering {
        let this = self.utf8mb4_twin();
        match this {
            Collation::Utf8mb4Bin => {
                // Code point order is UTF-8 byte order: only the padding needs care.
                let n = a.len().min(b.len());
                match a.as_bytes()[..n].cmp(&b.as_bytes()[..n]) {
                    Ordering::Equal => {}
                    o => return o,
                }
                pad_cmp(&a[n..], &b[n..], this)
            }
            _ => {
                // The common prefix of plain ASCII characters (one weight each, above a
                // space's) compares by a table look-up per byte, without decoding UTF-8:
                // ORDER BY on a CHAR column compared rows this way for most of a sort.
                let plain = plain_ascii_weights(this);
                let (x, y) = (a.as_bytes(), b.as_bytes());
                let mut i = 0;
                while let (Some(&p), Some(&q)) = (x.get(i), y.get(i)) {
                    let (Some(&p), Some(&q)) =
                        (plain.get(usize::from(p)), plain.get(usize::from(q)))
                    else {
                        break;
                    };
                    if p == 0 || q == 0 {
                        break;
                    }
                    if p != q {
                        return p.cmp(&q);
                    }
                    i += 1;
                }
                // Every byte before `i` is ASCII, so `i` is a character boundary in both.
                match (a.get(i..), b.get(i..)) {
                    (Some(a), Some(b)) => this.cmp_from(a, b),
                    _ => this.cmp_from(a, b), // unreachable: `i` is a boundary
                }
            }
        }
    }

    /// [`Collation::cmp`] of the collations with a table of weights, character by
    /// character.
    fn cmp_from(self, a: &str, b: &str) -> Ordering {
        match self.uca() {
            Some(t) => cmp_weights(
                a.chars().flat_map(|c| t.weights(c)),
                b.chars().flat_map(|c| t.weights(c)),
                u32::from(t.space),
            ),
            // general_ci and the one-byte sets: one weight a character.
            None => cmp_weights(
                a.chars().map(|c| self.single_weight(c)),
                b.chars().map(|c| self.single_weight(c)),
                self.space(),
            ),
        }
    }

    /// Whether two strings are equal in this collation.
    pub fn eq(self, a: &str, b: &str) -> bool {
        self.cmp(a, b) == Ordering::Equal
    }

    /// Appends the memcomparable sort key of `s`.
    ///
    /// The string's weights without the trailing spaces' are a sequence of tokens, each a run
    /// of `n` space weights and then one weight `w` other than a space's, and an end. Under
    /// PAD SPACE a token whose `w` is below a space's sorts below the end (the other string
    /// has a space there), and one above sorts above it; among low tokens a longer run sorts
    /// higher, among high tokens lower. So:
    /// ```text
    ///   low token    0x01, n (u32 big-endian), w
    ///   end          0x02
    ///   high token   0xFF - n (n < 127), or 0x80 and !n (u32 big-endian); then w
    ///   w            < 0x80: 1 byte; < 0x4000: 0x80|w>>8, w&0xFF; else 0xC0|w>>16, 2 bytes
    /// ```
    /// Plain text costs two bytes a character and one for the end (general_ci and bin; three
    /// in the UCA collations, whose letters weigh 0x0E33 and up).
    pub fn sort_key(self, s: &str, out: &mut Vec<u8>) {
        out.reserve(2 * s.len() + 1);
        self.sort_key_upto(s, out, usize::MAX);
    }

    /// The first 8 bytes of `s`'s sort key as a big-endian number, zeros after a shorter
    /// key: where two of these differ, the strings compare as they do (the keys are
    /// memcomparable and end in END, invariants 1 and 2), so a sort can compare these
    /// first and the strings only where they are equal.
    /// `scratch` is a buffer for the key's bytes, kept by the caller from string to string.
    pub fn sort_key_prefix(self, s: &str, scratch: &mut Vec<u8>) -> u64 {
        // Four plain ASCII characters first (most keys): their four short tokens.
        let plain = plain_ascii_weights(self.utf8mb4_twin());
        if let Some(&[a, b, c, d]) = s.as_bytes().first_chunk::<4>() {
            let w = |x: u8| plain.get(usize::from(x)).copied().unwrap_or(0);
            let (a, b, c, d) = (w(a), w(b), w(c), w(d));
            if a != 0 && b != 0 && c != 0 && d != 0 {
                return u64::from_be_bytes([0xFF, a, 0xFF, b, 0xFF, c, 0xFF, d]);
            }
        }
        let k = scratch;
        k.clear();
        self.sort_key_upto(s, k, 8);
        let mut b = [0u8; 8];
        let n = k.len().min(8);
        b[..n].copy_from_slice(&k[..n]);
        u64::from_be_bytes(b)
    }

    /// [`Collation::sort_key`] until at least `limit` bytes of it are written: what is
    /// written is always a prefix of the whole key (a token is written whole, and END only
    /// when the string has ended).
    fn sort_key_upto(self, s: &str, out: &mut Vec<u8>, limit: usize) {
        let start = out.len();
        let full = |out: &Vec<u8>| out.len() - start >= limit;
        let space = self.space();
        let mut spaces = 0u32;
        if self.uca().is_some() || self.is_byte() {
            if self
                .weights_of(s, |w| {
                    push_token(w, space, &mut spaces, out);
                    full(out).then_some(())
                })
                .is_some()
            {
                return;
            }
        } else {
            // One weight a character: read ASCII bytes without decoding UTF-8, and look
            // general_ci's table up once (DISTINCT and GROUP BY make a key per row and
            // string column; this loop was 15 % of oltp_read_only's instructions).
            let table =
                (self.utf8mb4_twin() == Collation::Utf8mb4GeneralCi).then(general_ci_weights);
            let plain = plain_ascii_weights(self.utf8mb4_twin());
            let b = s.as_bytes();
            let mut i = 0;
            while i < b.len() {
                if full(out) {
                    return;
                }
                // A run of plain ASCII (weights above a space's and below 0x80) with no
                // spaces pending: each character is the short token `0xFF, w`, written in
                // one pass over the run (what `push_token` would write, a third of the
                // instructions; DISTINCT of a CHAR(120) made one key a row).
                if spaces == 0 {
                    let room = limit.saturating_sub(out.len() - start).div_ceil(2);
                    let run = b[i..]
                        .iter()
                        .take(room)
                        .take_while(|&&c| plain.get(usize::from(c)).is_some_and(|&w| w != 0))
                        .count();
                    if run > 0 {
                        let at = out.len();
                        out.resize(at + 2 * run, 0xFF);
                        for (d, &c) in out[at..].chunks_exact_mut(2).zip(&b[i..i + run]) {
                            d[1] = plain[usize::from(c)];
                        }
                        i += run;
                        continue;
                    }
                }
                let w = if b[i] < 0x80 {
                    let c = usize::from(b[i]);
                    i += 1;
                    table.map_or(c as u32, |t| u32::from(t[c]))
                } else {
                    let Some(c) = s.get(i..).and_then(|r| r.chars().next()) else {
                        break;
                    };
                    i += c.len_utf8();
                    self.single_weight(c)
                };
                push_token(w, space, &mut spaces, out);
            }
        }
        out.push(END);
    }

    /// The length of the sort key at the start of `key`, reading each byte through `byte`
    /// (which undoes a descending part's inversion). `None`: not a sort key.
    pub(crate) fn sort_key_len(mut byte: impl FnMut(usize) -> Option<u8>) -> Option<usize> {
        let mut at = 0usize;
        loop {
            let m = byte(at)?;
            at += 1;
            match m {
                END => return Some(at),
                LOW | HIGH_LONG => at += 4,
                0x81..=0xFF => {}
                _ => return None,
            }
            let w0 = byte(at)?;
            at += match w0 {
                0x00..=0x7F => 1,
                0x80..=0xBF => 2,
                _ => 3,
            };
        }
    }

    /// The longest sort key of a string of `chars` characters.
    pub fn max_sort_key_len(self, chars: u64) -> u64 {
        // A token is at most 1 + 4 + 3 bytes (a long run is at least 127 spaces, which cost
        // nothing themselves, so 8 bytes a weight is a generous bound).
        let weights = if self.uca().is_some() {
            MAX_WEIGHTS as u64
        } else {
            1
        };
        8 * weights * chars + 1
    }
}

/// The token of a weight `w` of a sort key (`Collation::sort_key`), after the `spaces`
/// weights of a space before it (counted here, and reset by a token).
#[inline(always)]
fn push_token(w: u32, space: u32, spaces: &mut u32, out: &mut Vec<u8>) {
    if w == space {
        *spaces += 1;
        return;
    }
    let run = std::mem::take(spaces);
    if run == 0 && w > space && w < 0x80 {
        // The common case, plain text: a short high token and a one-byte weight.
        out.extend_from_slice(&[0xFF, w as u8]);
        return;
    }
    if w < space {
        out.push(LOW);
        out.extend_from_slice(&run.to_be_bytes());
    } else if run < HIGH_SHORT_RUNS {
        out.push(0xFF - run as u8);
    } else {
        out.push(HIGH_LONG);
        out.extend_from_slice(&(!run).to_be_bytes());
    }
    push_weight(w, out);
}

fn push_weight(w: u32, out: &mut Vec<u8>) {
    debug_assert!(w <= 0x10_FFFF, "weights are code points at most");
    if w < 0x80 {
        out.push(w as u8);
    } else if w < 0x4000 {
        out.extend_from_slice(&[0x80 | (w >> 8) as u8, w as u8]);
    } else {
        out.extend_from_slice(&[0xC0 | (w >> 16) as u8, (w >> 8) as u8, w as u8]);
    }
}

/// Compares two weight sequences, the shorter padded with `space` (PAD SPACE).
fn cmp_weights(
    mut x: impl Iterator<Item = u32>,
    mut y: impl Iterator<Item = u32>,
    space: u32,
) -> Ordering {
    loop {
        match (x.next(), y.next()) {
            (Some(p), Some(q)) => match p.cmp(&q) {
                Ordering::Equal => {}
                o => return o,
            },
            (None, None) => return Ordering::Equal,
            (Some(p), None) => return tail_vs_spaces(std::iter::once(p).chain(x), space),
            (None, Some(q)) => return tail_vs_spaces(std::iter::once(q).chain(y), space).reverse(),
        }
    }
}

/// Compares what remains of two utf8mb4_bin strings whose common part is equal: at most one
/// is non-empty.
fn pad_cmp(a: &str, b: &str, coll: Collation) -> Ordering {
    if !a.is_empty() {
        tail_vs_spaces(a.chars().map(|c| coll.single_weight(c)), SPACE)
    } else if !b.is_empty() {
        tail_vs_spaces(b.chars().map(|c| coll.single_weight(c)), SPACE).reverse()
    } else {
        Ordering::Equal
    }
}

/// How the tail of the longer string's weights compares with the spaces that pad the
/// shorter one.
fn tail_vs_spaces(tail: impl Iterator<Item = u32>, space: u32) -> Ordering {
    for w in tail {
        match w.cmp(&space) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    Ordering::Equal
}

/// The weight of each ASCII character in a collation of one weight a character, where it
/// is above a space's and below 0x80 (the sort key's short token); 0 for the others.
fn plain_ascii_weights(coll: Collation) -> &'static [u8; 128] {
    static GENERAL: OnceLock<[u8; 128]> = OnceLock::new();
    static BIN: OnceLock<[u8; 128]> = OnceLock::new();
    let build = |weight: &dyn Fn(u8) -> u32| {
        let mut t = [0u8; 128];
        for (c, w) in (0u8..128).zip(t.iter_mut()) {
            let x = weight(c);
            if x > SPACE && x < 0x80 {
                *w = x as u8;
            }
        }
        t
    };
    match coll {
        Collation::Utf8mb4GeneralCi => {
            GENERAL.get_or_init(|| build(&|c| u32::from(general_ci_weights()[usize::from(c)])))
        }
        Collation::Utf8mb4Bin => BIN.get_or_init(|| build(&u32::from)),
        // No fast path: every character goes through `push_token`.
        _ => &[0; 128],
    }
}

/// The utf8mb4_general_ci weight of every BMP code point, built once from the exceptions.
fn general_ci_weights() -> &'static [u16] {
    static TABLE: OnceLock<Vec<u16>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t: Vec<u16> = (0..=u16::MAX).collect();
        for &(c, w) in GENERAL_CI_EXCEPTIONS {
            t[usize::from(c)] = w;
        }
        t
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(c: Collation, s: &str) -> Vec<u8> {
        let mut v = Vec::new();
        c.sort_key(s, &mut v);
        v
    }

    #[test]
    fn general_ci_folds_case_and_accents_as_mariadb_does() {
        let ci = Collation::Utf8mb4GeneralCi;
        assert!(ci.eq("abc", "ABC"));
        assert!(ci.eq("a", "ä"));
        assert!(ci.eq("ß", "s"));
        assert!(
            ci.eq("😀", "😁"),
            "above the BMP every character weighs U+FFFD"
        );
        assert!(ci.eq("a", "a   "));
        assert_eq!(ci.cmp("a\t", "a"), Ordering::Less, "PAD SPACE: tab < space");
        assert_eq!(ci.cmp("a", "B"), Ordering::Less);
        let bin = Collation::Utf8mb4Bin;
        assert!(!bin.eq("a", "A"));
        assert!(bin.eq("a", "a "));
        assert_eq!(bin.cmp("B", "a"), Ordering::Less);
        assert_eq!(bin.cmp("a\t", "a"), Ordering::Less);
    }

    #[test]
    fn sort_keys_follow_pad_space() {
        for c in Collation::ALL {
            let words = [
                "", "a", "a ", "a\t", "a \t", "a !", "a  b", "a b", "ab", "a\u{1}", "b",
            ];
            for x in words {
                for y in words {
                    assert_eq!(
                        key(c, x).cmp(&key(c, y)),
                        c.cmp(x, y),
                        "{c:?}: {x:?} vs {y:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn sort_key_len_reads_back_every_token_kind() {
        let long_run = format!("a{}b\u{1}{}c\u{10FFFF}", " ".repeat(300), " ".repeat(3));
        for s in ["", "abc", "é", "\u{4000}", long_run.as_str()] {
            for c in Collation::ALL {
                let mut k = key(c, s);
                let n = k.len();
                k.extend_from_slice(&[7, 7]);
                assert_eq!(
                    Collation::sort_key_len(|i| k.get(i).copied()),
                    Some(n),
                    "{s:?}"
                );
                assert!(n as u64 <= c.max_sort_key_len(s.chars().count() as u64));
            }
        }
    }

    /// The weights of `s` as MariaDB's `HEX(WEIGHT_STRING(s))` prints them.
    fn weight_hex(c: Collation, s: &str) -> String {
        let mut out = String::new();
        c.weights_of(s, |w| {
            out.push_str(&format!("{w:04X}"));
            None::<()>
        });
        out
    }

    #[test]
    fn uca_weights_match_mariadb_samples() {
        use super::super::uca_samples::SAMPLES;
        for &(s, ci, ci520) in SAMPLES {
            assert_eq!(
                weight_hex(Collation::Utf8mb4UnicodeCi, s),
                ci,
                "unicode_ci {s:?}"
            );
            assert_eq!(
                weight_hex(Collation::Utf8mb4Unicode520Ci, s),
                ci520,
                "520 {s:?}"
            );
        }
    }

    #[test]
    fn uca_comparisons_and_sort_keys_match_mariadb_strcmp() {
        use super::super::uca_samples::{CMP_UNICODE_520_CI, CMP_UNICODE_CI, SAMPLES};
        for (c, want) in [
            (Collation::Utf8mb4UnicodeCi, CMP_UNICODE_CI),
            (Collation::Utf8mb4Unicode520Ci, CMP_UNICODE_520_CI),
        ] {
            let mut want = want.chars();
            for &(a, ..) in SAMPLES {
                for &(b, ..) in SAMPLES {
                    let o = match want.next() {
                        Some('<') => Ordering::Less,
                        Some('=') => Ordering::Equal,
                        Some('>') => Ordering::Greater,
                        other => panic!("bad sample table: {other:?}"),
                    };
                    assert_eq!(c.cmp(a, b), o, "{c:?}: {a:?} vs {b:?}");
                    assert_eq!(key(c, a).cmp(&key(c, b)), o, "{c:?} keys: {a:?} vs {b:?}");
                }
            }
            assert_eq!(want.next(), None);
        }
    }

    #[test]
    fn unicode_ci_folds_as_mariadb_does() {
        for c in [Collation::Utf8mb4UnicodeCi, Collation::Utf8mb4Unicode520Ci] {
            assert!(c.eq("Straße", "STRASSE"), "{c:?}: expansions");
            // MariaDB gives U+00AD (soft hyphen) a punctuation weight: not ignorable.
            assert!(!c.eq("co\u{AD}op", "coop"), "{c:?}: soft hyphen");
            assert!(
                c.eq("e\u{301}", "é"),
                "{c:?}: a combining mark weighs nothing"
            );
            assert!(c.eq("a\0", "a"), "{c:?}: U+0000 is ignorable");
            assert!(c.eq("abc", "ABC  "), "{c:?}: PAD SPACE");
            assert_eq!(
                c.cmp("a\t", "a"),
                Ordering::Less,
                "{c:?}: a tab weighs below a space"
            );
            assert!(!c.eq("ß", "s"));
            // MariaDB matches LIKE character by character, on whole weights.
            assert_ne!(c.char_key('ß'), c.char_key('s'));
            assert_eq!(c.char_key('ä'), c.char_key('A'));
        }
        assert!(Collation::Utf8mb4GeneralCi.eq("ß", "s"));
        // UCA 4.0.0 gives every character above U+FFFF one weight; 5.2.0 tells them apart.
        assert!(Collation::Utf8mb4UnicodeCi.eq("😀", "😁"));
        assert!(!Collation::Utf8mb4Unicode520Ci.eq("😀", "😁"));
        assert!(!Collation::Utf8mb4UnicodeCi.eq("æ", "ae"));
        assert!(Collation::Utf8mb4Unicode520Ci.eq("æ", "ae"));
    }

    /// Strings over the characters where the UCA collations are tricky: expansions (ß,
    /// U+FDFA's eight weights), ignorables (U+0000), combining marks, characters below a
    /// space (tab) or weighing as one (U+00A0), implicit weights (CJK, emoji), and any.
    fn uca_string() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop::collection::vec(
            prop_oneof![
                Just(' '),
                Just('\t'),
                Just('a'),
                Just('A'),
                Just('s'),
                Just('ß'),
                Just('\0'),
                Just('\u{AD}'),
                Just('\u{301}'),
                Just('\u{A0}'),
                Just('\u{FDFA}'),
                Just('中'),
                Just('😀'),
                any::<char>(),
            ],
            0..12,
        )
        .prop_map(|v| v.into_iter().collect())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]

        /// Invariants 1 and 2 for the UCA collations.
        #[test]
        fn uca_sort_keys_order_as_cmp_and_are_prefix_free(a in uca_string(), b in uca_string()) {
            for c in [Collation::Utf8mb4UnicodeCi, Collation::Utf8mb4Unicode520Ci] {
                let (ka, kb) = (key(c, &a), key(c, &b));
                proptest::prop_assert_eq!(ka.cmp(&kb), c.cmp(&a, &b), "{:?}: {:?} vs {:?}", c, a, b);
                proptest::prop_assert!(ka == kb || !(ka.starts_with(&kb) || kb.starts_with(&ka)));
                proptest::prop_assert_eq!(Collation::sort_key_len(|i| ka.get(i).copied()), Some(ka.len()));
            }
        }

        /// general_ci and bin: the key orders as `cmp`, and the plain-ASCII fast path writes
        /// exactly what a token a character writes.
        #[test]
        fn one_weight_sort_keys_order_as_cmp_and_match_token_by_token(
            a in plain_string(),
            b in plain_string(),
        ) {
            for c in [Collation::Utf8mb4GeneralCi, Collation::Utf8mb4Bin] {
                let (ka, kb) = (key(c, &a), key(c, &b));
                proptest::prop_assert_eq!(ka.cmp(&kb), c.cmp(&a, &b), "{:?}: {:?} vs {:?}", c, a, b);
                proptest::prop_assert_eq!(&ka, &token_by_token(c, &a), "{:?}: {:?}", c, a);
                proptest::prop_assert_eq!(Collation::sort_key_len(|i| ka.get(i).copied()), Some(ka.len()));
            }
        }

        /// Where two strings' key prefixes differ, the strings compare as they do.
        #[test]
        fn sort_key_prefixes_order_as_cmp(a in plain_string(), b in plain_string(), u in uca_string(), v in uca_string()) {
            for c in [Collation::Utf8mb4GeneralCi, Collation::Utf8mb4Bin, Collation::Latin1SwedishCi, Collation::Utf8mb4UnicodeCi] {
                for (x, y) in [(&a, &b), (&u, &v), (&a, &u)] {
                    let mut scratch = Vec::new();
                    let (p, q) = (c.sort_key_prefix(x, &mut scratch), c.sort_key_prefix(y, &mut scratch));
                    let mut k = Vec::new();
                    c.sort_key(x, &mut k);
                    k.resize(8, 0);
                    let pb = p.to_be_bytes();
                    proptest::prop_assert_eq!(&pb[..], &k[..8], "{:?}: {:?}", c, x);
                    if p != q {
                        proptest::prop_assert_eq!(p.cmp(&q), c.cmp(x, y), "{:?}: {:?} vs {:?}", c, x, y);
                    }
                }
            }
        }

        /// `cmp`'s plain-ASCII prefix gives what comparing every character's weight gives.
        #[test]
        fn cmp_with_the_ascii_prefix_matches_character_by_character(
            a in plain_string(),
            b in plain_string(),
        ) {
            for c in [Collation::Utf8mb4GeneralCi, Collation::Utf8mb3GeneralCi, Collation::Latin1SwedishCi] {
                proptest::prop_assert_eq!(c.cmp(&a, &b), c.utf8mb4_twin().cmp_from(&a, &b), "{:?}: {:?} vs {:?}", c, a, b);
            }
        }
    }

    /// The sort key of a one-weight collation, one `push_token` a character.
    fn token_by_token(c: Collation, s: &str) -> Vec<u8> {
        let mut out = Vec::new();
        let mut spaces = 0;
        for ch in s.chars() {
            push_token(c.single_weight(ch), SPACE, &mut spaces, &mut out);
        }
        out.push(END);
        out
    }

    /// Strings of ASCII runs (letters of both cases, digits, punctuation, DEL) broken by
    /// spaces, characters below a space, accented letters and emoji.
    fn plain_string() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop::collection::vec(
            prop_oneof![
                Just(' '),
                Just('\t'),
                Just('\u{7F}'),
                Just('!'),
                Just('a'),
                Just('Z'),
                Just('7'),
                Just('-'),
                Just('é'),
                Just('É'),
                Just('😀'),
                any::<char>(),
            ],
            0..16,
        )
        .prop_map(|v| v.into_iter().collect())
    }

    /// `HEX(WEIGHT_STRING(CONVERT(s USING latin1) COLLATE c))` from MariaDB 10.11.19, for
    /// s = 'Aa äÅæ€ŸÿßÐðþ_1' (the ascii ones for 'Aa~z\t').
    const BYTE_WEIGHT_SAMPLES: [(Collation, &str, &str); 6] = [
        (
            Collation::Latin1SwedishCi,
            "Aa äÅæ€ŸÿßÐðþ_1",
            "4141205C5B5C809FFFDF4444DE5F31",
        ),
        (
            Collation::Latin1GeneralCi,
            "Aa äÅæ€ŸÿßÐðþ_1",
            "4141204B4D4FC0DFAE975959B1B731",
        ),
        (
            Collation::Latin1GeneralCs,
            "Aa äÅæ€ŸÿßÐðþ_1",
            "4142204C4D50C0DFAE97595AB2B731",
        ),
        (
            Collation::Latin1Bin,
            "Aa äÅæ€ŸÿßÐðþ_1",
            "416120E4C5E6809FFFDFD0F0FE5F31",
        ),
        (Collation::AsciiGeneralCi, "Aa~z\t", "41417E5A09"),
        (Collation::AsciiBin, "Aa~z\t", "41617E7A09"),
    ];

    #[test]
    fn byte_collation_weights_match_mariadb_samples() {
        for (c, s, want) in BYTE_WEIGHT_SAMPLES {
            // Quire's weights are the byte's plus one (invariant 3).
            let got: String = s
                .chars()
                .map(|ch| format!("{:02X}", c.single_weight(ch) - 1))
                .collect();
            assert_eq!(got, want, "{c:?}");
        }
    }

    #[test]
    fn latin1_orders_as_mariadb_does() {
        let sw = Collation::Latin1SwedishCi;
        // Measured in tests/sql/charsets.test: ü weighs as y, ð as d, ä as æ; å ä ö after z.
        assert!(sw.eq("ü", "Y"));
        assert!(sw.eq("ð", "d"));
        assert!(sw.eq("ä", "Æ"));
        assert_eq!(sw.cmp("z", "å"), Ordering::Less);
        assert_eq!(sw.cmp("å", "ä"), Ordering::Less);
        assert!(sw.eq("b", "b  "), "PAD SPACE");
        // latin1_bin: by the cp1252 byte, so € (0x80) < Ÿ (0x9F) < ä (0xE4).
        let bin = Collation::Latin1Bin;
        assert_eq!(bin.cmp("€", "Ÿ"), Ordering::Less);
        assert_eq!(bin.cmp("Ÿ", "ä"), Ordering::Less);
        assert_eq!(bin.cmp("Z", "a"), Ordering::Less);
        assert!(!Collation::Latin1GeneralCs.eq("a", "A"));
        assert!(Collation::Latin1GeneralCi.eq("a", "A"));
        // utf8mb3 compares as its utf8mb4 twin.
        assert!(
            Collation::Utf8mb3GeneralCi.eq("Straße", "STRASSE")
                == Collation::Utf8mb4GeneralCi.eq("Straße", "STRASSE")
        );
        assert!(Collation::Utf8mb3UnicodeCi.eq("Straße", "STRASSE"));
        assert!(!Collation::Utf8mb3Bin.eq("a", "A"));
    }

    #[test]
    fn charsets_hold_and_encode_their_characters() {
        assert!(Charset::Utf8mb3.holds('\u{FFFF}') && !Charset::Utf8mb3.holds('😀'));
        assert!(Charset::Latin1.holds('€') && Charset::Latin1.holds('\u{81}'));
        assert!(!Charset::Latin1.holds('\u{80}'), "0x80 is € in cp1252");
        assert!(!Charset::Latin1.holds('日') && !Charset::Ascii.holds('é'));
        assert_eq!(Charset::Latin1.encode("€é日"), [0x80, 0xE9, b'?']);
        assert_eq!(Charset::latin1_text(&[0x80, 0xE9, 0x81]), "€é\u{81}");
        for b in 0..=255u8 {
            let c = Charset::latin1_text(&[b]);
            assert_eq!(
                Charset::Latin1.encode(&c),
                [b],
                "latin1 round-trips byte {b:#x}"
            );
        }
    }

    /// Strings over latin1's tricky characters (the cp1252 letters of 0x80..0x9F, the ones
    /// that fold together, a tab and a space), a character latin1 lacks, and any.
    fn latin1_string() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop::collection::vec(
            prop_oneof![
                Just(' '),
                Just('\t'),
                Just('\0'),
                Just('a'),
                Just('A'),
                Just('ä'),
                Just('æ'),
                Just('ü'),
                Just('y'),
                Just('€'),
                Just('Ÿ'),
                Just('\u{81}'),
                Just('ÿ'),
                Just('日'),
                (0u8..=255).prop_map(|b| Charset::latin1_text(&[b]).chars().next().unwrap_or('a')),
                any::<char>(),
            ],
            0..10,
        )
        .prop_map(|v| v.into_iter().collect())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]

        /// Invariants 1 and 2 for the one-byte sets' collations and utf8mb3's.
        #[test]
        fn byte_and_utf8mb3_sort_keys_order_as_cmp(a in latin1_string(), b in latin1_string()) {
            for c in Collation::ALL.into_iter().filter(|c| c.charset() != Charset::Utf8mb4) {
                let (ka, kb) = (key(c, &a), key(c, &b));
                proptest::prop_assert_eq!(ka.cmp(&kb), c.cmp(&a, &b), "{:?}: {:?} vs {:?}", c, a, b);
                proptest::prop_assert!(ka == kb || !(ka.starts_with(&kb) || kb.starts_with(&ka)));
                proptest::prop_assert_eq!(Collation::sort_key_len(|i| ka.get(i).copied()), Some(ka.len()));
            }
        }
    }

    #[test]
    fn names_and_ids_round_trip() {
        assert_eq!(Collation::from_id(224), Some(Collation::Utf8mb4UnicodeCi));
        assert_eq!(
            Collation::from_id(246),
            Some(Collation::Utf8mb4Unicode520Ci)
        );
        assert_eq!(
            Collation::from_code(14),
            None,
            "an unknown catalog code is no collation"
        );
        assert_eq!(
            Collation::from_name("UTF8_unicode_ci"),
            Some(Collation::Utf8mb3UnicodeCi),
            "utf8_ names are utf8mb3's"
        );
        assert_eq!(Charset::from_name("utf8"), Some(Charset::Utf8mb3));
        // Codes are the catalog's: never renumbered (docs/catalog.md).
        let codes: Vec<u8> = Collation::ALL.iter().map(|c| c.code()).collect();
        assert_eq!(codes, [1, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
        for c in Collation::ALL {
            assert_eq!(Collation::from_name(&c.name().to_uppercase()), Some(c));
            assert_eq!(Collation::from_id(c.id()), Some(c));
            assert_eq!(Collation::from_code(c.code()), Some(c));
        }
    }
}
