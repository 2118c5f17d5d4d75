//! # BLOB chains: off-page values as linked lists of BLOB pages
//!
//! docs/blob.md. A value of `len` bytes is `n = ceil(len / M)` pages of type `Blob` (`M` =
//! [`RowLimits::blob_part_max`]), each holding one part ([`write_blob_part`]), linked by
//! the header's `next`:
//!
//! ```text
//!   ref{first_page, len} --> [p0: M bytes] --next--> [p1: M bytes] --> ... --> [p(n-1): rest] --> NULL
//! ```
//!
//! Invariants:
//! 1. A chain holds exactly `len` bytes in `n` pages: every page but the last holds `M`
//!    bytes, the last the rest (at least one). Each page has type `Blob` and `prev = NULL`;
//!    `next` is NULL exactly on the last. [`walk`] checks all of it and names the page.
//! 2. A page is allocated, created (PAGE_INIT), filled and linked in one mtr, and never
//!    written again: a reader sees whole pages only, and recovery rebuilds them from redo
//!    alone (lesson 1).
//! 3. A chain is written tail first ([`write_tail`], then [`write_pages`] for the head), so
//!    every mtr links only to pages already logged, and the head, which the record names,
//!    comes last. That is also why there are no back links: the page before is not written
//!    yet when a page is.
//! 4. Every mtr here is planned from the redo bounds below so that it fits one log frame,
//!    and is started with that much log room reserved ([`BTreeStore::mtr_with_room`]).
//!
//! Which record names a chain, and when a chain may be freed, is the caller's (the table
//! layer: docs/blob.md, "Readers and freeing").

use std::ops::Range;

use super::{commit, BTreeError, BTreeStore, Result};
use crate::mtr::Mtr;
use crate::page::{self, Header, Lsn, PageId, PageNo, PageType, SpaceId};
use crate::row::{read_blob_part, write_blob_part, ExternRef, RowLimits, BLOB_PART_HEADER};

/// Redo of one new BLOB page besides its data: PAGE_INIT, the WRITE header of the body, the
/// `next` link (each record is a type byte, varint page id, offset and length).
pub const PAGE_REDO_MAX: u64 = 128;
/// Redo of one page allocation at worst: bitmap and list moves, plus, when the free list
/// runs dry, eight extents' descriptors and a FILE_EXTEND (`alloc::fill_free_list`).
pub const ALLOC_REDO_MAX: u64 = 2048;
/// Redo of one page free at worst: bitmap, list moves and the space header.
pub const FREE_REDO_MAX: u64 = 1024;
/// Redo an mtr of its own keeps unplanned (frame overhead, rounding).
pub const MTR_SLACK: u64 = 4096;

// The bounds must leave room for the data, or planning by them would be meaningless.
const _: () = assert!(PAGE_REDO_MAX + ALLOC_REDO_MAX < MTR_SLACK);

/// Payload bytes of a BLOB page for this store's page size.
pub fn part_max<S: BTreeStore + ?Sized>(s: &S) -> usize {
    RowLimits::for_page(s.pool().config().page_size).blob_part_max
}

/// Pages of the chain of a `len`-byte value.
pub fn page_count(len: u64, part_max: usize) -> u64 {
    len.div_ceil(part_max.max(1) as u64)
}

/// Redo bound of allocating and writing one BLOB page.
pub fn page_redo<S: BTreeStore + ?Sized>(s: &S) -> u64 {
    s.pool().config().page_size.bytes() as u64 + PAGE_REDO_MAX + ALLOC_REDO_MAX
}

/// How many pages an mtr of its own may write, or free.
fn per_mtr<S: BTreeStore + ?Sized>(s: &S, cost: u64) -> Result<u64> {
    let max = s.mtr_redo_max();
    let n = max.saturating_sub(MTR_SLACK) / cost;
    if n == 0 {
        return Err(BTreeError::LogTooSmall {
            need: cost + MTR_SLACK,
            max,
        });
    }
    Ok(n)
}

fn corrupt(space: SpaceId, page: PageNo, what: String) -> BTreeError {
    BTreeError::CorruptBlob {
        page: PageId::new(space, page),
        what,
    }
}

/// The bytes page `i` of the chain of `data` holds.
fn part(data: &[u8], i: u64, m: usize) -> &[u8] {
    let start = (i as usize).saturating_mul(m).min(data.len());
    let end = start.saturating_add(m).min(data.len());
    &data[start..end]
}

/// Writes pages `range` of the chain of `data` in `mtr`: allocates them, then creates, fills
/// and links each, the last one to `next` (the first page of the part written before, or
/// NULL for the end of the chain). Returns the pages in chain order. On an error the pages
/// allocated here are freed again in the same mtr, so it leaves nothing allocated.
pub fn write_pages<S: BTreeStore + ?Sized>(
    s: &S,
    mtr: &mut Mtr<'_>,
    space: SpaceId,
    data: &[u8],
    range: Range<u64>,
    next: PageNo,
) -> Result<Vec<PageNo>> {
    let m = part_max(s);
    let n = page_count(data.len() as u64, m);
    if range.is_empty() || range.end > n {
        return Err(BTreeError::Invariant("BLOB page range outside the chain"));
    }
    let mut pages = Vec::with_capacity((range.end - range.start) as usize);
    let redo_before = mtr.redo_len();
    let r = (|| -> Result<()> {
        // Allocation first, creation after: allocation metadata, then pages being created,
        // is the latch order (docs/mtr.md rule 3).
        for _ in range.clone() {
            pages.push(s.alloc_page(mtr, space).map_err(BTreeError::Alloc)?);
        }
        let mut scratch = vec![0u8; s.pool().config().page_size.bytes()];
        for (j, i) in range.clone().enumerate() {
            let slot = mtr.create_page(PageId::new(space, pages[j]), PageType::Blob)?;
            let bytes = part(data, i, m);
            let put = write_blob_part(&mut scratch, bytes);
            debug_assert_eq!(put, bytes.len(), "a part is at most one page's payload");
            let body = page::HEADER_SIZE..page::HEADER_SIZE + BLOB_PART_HEADER + put;
            mtr.write(slot, body.start, &scratch[body])?;
            let link = pages.get(j + 1).copied().unwrap_or(next);
            if !link.is_null() {
                mtr.write_u32(slot, page::OFF_NEXT, link.0)?;
            }
        }
        Ok(())
    })();
    match r {
        Ok(()) => {
            // The plans of every caller rest on this bound (invariant 4).
            debug_assert!(
                (mtr.redo_len() - redo_before) as u64 <= pages.len() as u64 * page_redo(s),
                "BLOB pages wrote more redo than their bound"
            );
            Ok(pages)
        }
        Err(e) => {
            // Best effort: the original error is the one to report.
            let _ = free_pages(s, mtr, space, &pages);
            Err(e)
        }
    }
}

/// Writes pages `from..n` of the chain of `data` in mtrs of their own, the last pages first
/// (invariant 3). Returns the pages written, in chain order (empty when `from` is `n`), and
/// the last commit LSN. On an error, frees what it wrote before returning it.
pub fn write_tail<S: BTreeStore + ?Sized>(
    s: &S,
    space: SpaceId,
    data: &[u8],
    from: u64,
) -> Result<(Vec<PageNo>, Lsn)> {
    let n = page_count(data.len() as u64, part_max(s));
    let cost = page_redo(s);
    let per = per_mtr(s, cost)?;
    let mut written: Vec<Vec<PageNo>> = Vec::new();
    let mut end = n;
    let mut lsn = Lsn::ZERO;
    while end > from {
        let start = end.saturating_sub(per).max(from);
        let next = written
            .last()
            .and_then(|w| w.first().copied())
            .unwrap_or(PageNo::NULL);
        let mut mtr = s.mtr_with_room((end - start) * cost);
        match write_pages(s, &mut mtr, space, data, start..end, next) {
            Ok(p) => {
                lsn = commit(mtr)?;
                written.push(p);
                end = start;
            }
            Err(e) => {
                drop(mtr);
                let all: Vec<PageNo> = written.into_iter().rev().flatten().collect();
                let _ = free_in_mtrs(s, space, &all);
                return Err(e);
            }
        }
    }
    Ok((written.into_iter().rev().flatten().collect(), lsn))
}

/// Follows the chain `r` names, checking invariant 1 against it, and calls `f` with each
/// page and its part. Reads one page at a time under its S latch and holds nothing else:
/// the caller keeps the chain alive (docs/blob.md).
pub fn walk<S: BTreeStore + ?Sized>(
    s: &S,
    r: &ExternRef,
    mut f: impl FnMut(PageNo, &[u8]),
) -> Result<()> {
    let m = part_max(s);
    let n = page_count(r.len, m);
    if n == 0 {
        return Err(corrupt(
            r.space,
            r.first_page,
            "a reference of length 0".into(),
        ));
    }
    let mut p = r.first_page;
    let mut left = r.len;
    for i in 0..n {
        let id = PageId::new(r.space, p);
        let g = s.pool().get_shared(id)?;
        let h = Header::new(&g);
        let bad = |what: String| corrupt(r.space, p, format!("part {i} of {n}: {what}"));
        if h.page_type() != Some(PageType::Blob) {
            return Err(bad(format!("page type {} is not BLOB", h.page_type_raw())));
        }
        if !h.prev().is_null() {
            return Err(bad("has a prev link".into()));
        }
        let bytes = read_blob_part(&g).map_err(|e| bad(e.to_string()))?;
        let want = left.min(m as u64);
        if bytes.len() as u64 != want {
            return Err(bad(format!(
                "holds {} bytes where the reference ({} bytes) needs {want}",
                bytes.len(),
                r.len
            )));
        }
        f(p, bytes);
        left -= want;
        let next = h.next();
        match (i + 1 == n, next.is_null()) {
            (true, false) => return Err(bad("the chain goes on past the value's length".into())),
            (false, true) => return Err(bad("the chain ends before the value's length".into())),
            _ => p = next,
        }
    }
    Ok(())
}

/// The value `r` names.
pub fn read<S: BTreeStore + ?Sized>(s: &S, r: &ExternRef) -> Result<Vec<u8>> {
    // The length comes from disk: trust it for the capacity only up to a sane amount, and
    // let the walk (which checks every part) grow the buffer past it.
    let mut out = Vec::with_capacity(r.len.min(64 << 20) as usize);
    walk(s, r, |_, b| out.extend_from_slice(b))?;
    Ok(out)
}

/// The pages of the chain `r` names, in order (checked as [`walk`] does).
pub fn pages<S: BTreeStore + ?Sized>(s: &S, r: &ExternRef) -> Result<Vec<PageNo>> {
    let mut v = Vec::new();
    walk(s, r, |p, _| v.push(p))?;
    Ok(v)
}

/// Whether the chain `r` names holds exactly `data` (without copying the chain).
pub fn equals<S: BTreeStore + ?Sized>(s: &S, r: &ExternRef, data: &[u8]) -> Result<bool> {
    if r.len != data.len() as u64 {
        return Ok(false);
    }
    let (mut at, mut same) = (0usize, true);
    walk(s, r, |_, b| {
        same = same && data.get(at..at + b.len()) == Some(b);
        at += b.len();
    })?;
    Ok(same)
}

/// Frees `pages` in `mtr` (allocation metadata only: the pages themselves are not latched).
pub fn free_pages<S: BTreeStore + ?Sized>(
    s: &S,
    mtr: &mut Mtr<'_>,
    space: SpaceId,
    pages: &[PageNo],
) -> Result<()> {
    let redo_before = mtr.redo_len();
    for &p in pages {
        s.free_page(mtr, PageId::new(space, p))
            .map_err(BTreeError::Alloc)?;
    }
    debug_assert!(
        (mtr.redo_len() - redo_before) as u64 <= pages.len() as u64 * FREE_REDO_MAX,
        "page frees wrote more redo than their bound"
    );
    Ok(())
}

/// Frees `pages` in mtrs of their own; returns the last commit LSN.
pub fn free_in_mtrs<S: BTreeStore + ?Sized>(
    s: &S,
    space: SpaceId,
    pages: &[PageNo],
) -> Result<Lsn> {
    let per = per_mtr(s, FREE_REDO_MAX)? as usize;
    let mut lsn = Lsn::ZERO;
    for batch in pages.chunks(per) {
        let mut mtr = s.mtr_with_room(batch.len() as u64 * FREE_REDO_MAX);
        free_pages(s, &mut mtr, space, batch)?;
        lsn = lsn.max(commit(mtr)?);
    }
    Ok(lsn)
}
