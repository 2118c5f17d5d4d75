//! The weight tables of `utf8mb4_unicode_ci` (UCA 4.0.0) and `utf8mb4_unicode_520_ci`
//! (UCA 5.2.0), measured from MariaDB 10.11 by `scripts/gen-uca-weights.py` and compiled in
//! (`uca/*.bin`; the format and where the data came from: docs/collations.md).
//!
//! A character weighs a sequence of 0 to [`MAX_WEIGHTS`] primary weights of 16 bits: none for
//! an ignorable character (U+0000, U+00AD, most controls, combining marks), one for most, more
//! for an expansion (`'ß'` weighs as `"ss"`). The root collations have no contractions (the
//! generator checks a sample of pairs), so a string's weights are its characters' weights one
//! after the other.
//!
//! Invariants (checked when a table is parsed, and by the generator against MariaDB):
//! 1. Every code point has an entry; a weight is never 0.
//! 2. No character weighs more than [`MAX_WEIGHTS`] weights.

use std::sync::OnceLock;

/// The most weights one character has (MariaDB's longest expansions, e.g. U+FDFA, have 8).
pub(super) const MAX_WEIGHTS: usize = 8;

const MAGIC: &[u8; 4] = b"QUCA";
const VERSION: u16 = 1;
/// Pages of 256 code points up to U+10FFFF.
const PAGES: usize = 0x1100;
/// Entry values with a meaning of their own; any other entry is the character's one weight.
const IGNORABLE: u16 = 0x0000;
const EXPANSION: u16 = 0xFFFF;
/// Implicit weights: `[base + (cp >> 15), (cp & 0x7FFF) | 0x8000]`, as UCA derives them for
/// CJK ideographs (0xFB40, 0xFB80) and characters the table does not list (0xFBC0).
const IMPLICIT_BASES: [u16; 3] = [0xFB40, 0xFB80, 0xFBC0];

/// The weights of one character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct CharWeights {
    w: [u16; MAX_WEIGHTS],
    n: u8,
}

impl CharWeights {
    pub(super) fn as_slice(&self) -> &[u16] {
        &self.w[..usize::from(self.n)]
    }
}

impl IntoIterator for CharWeights {
    type Item = u32;
    type IntoIter =
        std::iter::Map<std::iter::Take<std::array::IntoIter<u16, MAX_WEIGHTS>>, fn(u16) -> u32>;

    fn into_iter(self) -> Self::IntoIter {
        self.w.into_iter().take(usize::from(self.n)).map(u32::from)
    }
}

/// One collation's parsed table.
pub(super) struct UcaTable {
    /// The page of each block of 256 code points.
    index: Vec<u16>,
    /// Pages of 256 entries, back to back.
    entries: Vec<u16>,
    /// The expanded characters, sorted by code point: (code point, start in `pool`, count).
    expansions: Vec<(u32, u32, u8)>,
    pool: Vec<u16>,
    /// The weight of U+0020, which pads the shorter string (PAD SPACE).
    pub(super) space: u16,
}

impl UcaTable {
    pub(super) fn weights(&self, c: char) -> CharWeights {
        let cp = u32::from(c);
        let page = self.index[(cp >> 8) as usize];
        let e = self.entries[usize::from(page) * 256 + (cp & 0xFF) as usize];
        let mut out = CharWeights {
            w: [0; MAX_WEIGHTS],
            n: 0,
        };
        let mut push = |w: u16| {
            out.w[usize::from(out.n)] = w;
            out.n += 1;
        };
        match e {
            IGNORABLE => {}
            EXPANSION => {
                // Parsing checked that every EXPANSION entry has its list (invariant 1).
                if let Ok(i) = self.expansions.binary_search_by_key(&cp, |x| x.0) {
                    let (_, start, n) = self.expansions[i];
                    let start = start as usize;
                    for &w in &self.pool[start..start + usize::from(n)] {
                        push(w);
                    }
                }
            }
            e if IMPLICIT_BASES.contains(&e) => {
                push(e + (cp >> 15) as u16);
                push((cp & 0x7FFF) as u16 | 0x8000);
            }
            e => push(e),
        }
        out
    }

    fn parse(b: &[u8]) -> Result<UcaTable, &'static str> {
        let mut at = 0usize;
        let mut take = |n: usize| -> Result<&[u8], &'static str> {
            let s = b.get(at..at + n).ok_or("truncated")?;
            at += n;
            Ok(s)
        };
        let u16s = |s: &[u8]| -> Vec<u16> {
            s.chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect()
        };
        if take(4)? != MAGIC {
            return Err("bad magic");
        }
        let head = u16s(take(4)?);
        if head[0] != VERSION {
            return Err("unknown version");
        }
        let n_pages = usize::from(head[1]);
        let index = u16s(take(2 * PAGES)?);
        if index.iter().any(|&p| usize::from(p) >= n_pages) {
            return Err("page number out of range");
        }
        let entries = u16s(take(512 * n_pages)?);
        let n_exp = u32::from_le_bytes(take(4)?.try_into().map_err(|_| "truncated")?);
        let (mut expansions, mut pool) = (Vec::new(), Vec::new());
        for _ in 0..n_exp {
            let h = take(5)?;
            let cp = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
            let n = h[4];
            if usize::from(n) > MAX_WEIGHTS {
                return Err("expansion too long (invariant 2)");
            }
            let ws = u16s(take(2 * usize::from(n))?);
            if ws.contains(&0) {
                return Err("zero weight");
            }
            if expansions.last().is_some_and(|&(p, _, _)| p >= cp) {
                return Err("expansions out of order");
            }
            expansions.push((cp, pool.len() as u32, n));
            pool.extend(ws);
        }
        if at != b.len() {
            return Err("trailing bytes");
        }
        let mut t = UcaTable {
            index,
            entries,
            expansions,
            pool,
            space: 0,
        };
        // Invariant 1: each EXPANSION entry has its list.
        for cp in 0..=0x10_FFFFu32 {
            let page = t.index[(cp >> 8) as usize];
            if t.entries[usize::from(page) * 256 + (cp & 0xFF) as usize] == EXPANSION
                && t.expansions.binary_search_by_key(&cp, |x| x.0).is_err()
            {
                return Err("expansion entry without its weights");
            }
        }
        t.space = match t.weights(' ').as_slice() {
            [w] => *w,
            _ => return Err("a space must weigh one weight"),
        };
        Ok(t)
    }
}

fn load(bytes: &[u8], name: &str) -> UcaTable {
    match UcaTable::parse(bytes) {
        Ok(t) => t,
        // The table is compiled in and checked by a unit test: a bad one is a build bug.
        Err(e) => panic!("the compiled-in {name} weight table is corrupt: {e}"),
    }
}

/// utf8mb4_unicode_ci's table (UCA 4.0.0), parsed at first use.
pub(super) fn unicode_ci() -> &'static UcaTable {
    static T: OnceLock<UcaTable> = OnceLock::new();
    T.get_or_init(|| {
        load(
            include_bytes!("uca/utf8mb4_unicode_ci.bin"),
            "utf8mb4_unicode_ci",
        )
    })
}

/// utf8mb4_unicode_520_ci's table (UCA 5.2.0), parsed at first use.
pub(super) fn unicode_520_ci() -> &'static UcaTable {
    static T: OnceLock<UcaTable> = OnceLock::new();
    T.get_or_init(|| {
        load(
            include_bytes!("uca/utf8mb4_unicode_520_ci.bin"),
            "utf8mb4_unicode_520_ci",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_in_tables_parse() {
        assert_eq!(unicode_ci().space, 0x0209);
        assert_eq!(unicode_520_ci().space, 0x020A);
    }

    #[test]
    fn corrupt_tables_are_refused() {
        let good = include_bytes!("uca/utf8mb4_unicode_ci.bin");
        assert!(UcaTable::parse(&good[..good.len() - 1]).is_err());
        let mut extra = good.to_vec();
        extra.push(0);
        assert!(UcaTable::parse(&extra).is_err());
        let mut magic = good.to_vec();
        magic[0] = b'X';
        assert!(UcaTable::parse(&magic).is_err());
    }
}
