//! # Pages: identity, LSNs, header, trailer and checksum
//!
//! Every page on disk, whatever its type, starts with the same 32-byte header and ends with an
//! 8-byte trailer (byte layout in `docs/page-format.md`):
//!
//! ```text
//!  0        4        8        12   14   16               24       28       32
//!  +--------+--------+--------+----+----+----------------+--------+--------+------ ... -----+----------+
//!  |checksum|space_id|page_no |type|flag|      lsn       |  prev  |  next  |     body       | lsn copy |
//!  +--------+--------+--------+----+----+----------------+--------+--------+------ ... -----+----------+
//!                                                                                  page_size-8  page_size
//! ```
//!
//! Invariants:
//! 1. The checksum is crc32c of bytes `[4, page_size)`, computed when the page is written
//!    ([`stamp`]) and verified on every read ([`verify`]).
//! 2. The header LSN equals the trailer LSN on every page written by [`stamp`]. A mismatch with
//!    a valid checksum cannot happen; a mismatch is the cheapest sign of a torn write.
//! 3. A page whose bytes are all zero was allocated but never written. It is reported as such,
//!    never served as data.
//! 4. The header names the page: a page read from the wrong place is corrupt.

use std::fmt;

/// A log sequence number: a byte offset in the logical, endless redo stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Lsn(pub u64);

impl Lsn {
    pub const ZERO: Lsn = Lsn(0);
}

impl fmt::Display for Lsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A tablespace id. Space 0 is the system space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SpaceId(pub u32);

impl SpaceId {
    pub const SYSTEM: SpaceId = SpaceId(0);
}

impl fmt::Display for SpaceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A page number inside one tablespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PageNo(pub u32);

impl PageNo {
    /// "No page": the end of a list.
    pub const NULL: PageNo = PageNo(u32::MAX);

    pub fn is_null(self) -> bool {
        self == PageNo::NULL
    }
}

impl fmt::Display for PageNo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A page's address: tablespace and page number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PageId {
    pub space: SpaceId,
    pub page_no: PageNo,
}

impl PageId {
    pub fn new(space: SpaceId, page_no: PageNo) -> Self {
        PageId { space, page_no }
    }
    /// A dense 64-bit form, for hashing and atomics.
    pub fn as_u64(self) -> u64 {
        (u64::from(self.space.0) << 32) | u64::from(self.page_no.0)
    }
    pub fn from_u64(v: u64) -> Self {
        PageId {
            space: SpaceId((v >> 32) as u32),
            page_no: PageNo(v as u32),
        }
    }
}

impl fmt::Display for PageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.space.0, self.page_no.0)
    }
}

/// The page size of a data directory, fixed when it is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PageSize(u32);

impl PageSize {
    pub const DEFAULT: PageSize = PageSize(16 * 1024);
    pub const MIN: u32 = 4 * 1024;
    pub const MAX: u32 = 64 * 1024;

    /// 4, 8, 16, 32 or 64 KiB.
    pub fn new(bytes: u32) -> Option<PageSize> {
        (bytes.is_power_of_two() && (Self::MIN..=Self::MAX).contains(&bytes))
            .then_some(PageSize(bytes))
    }
    pub fn bytes(self) -> usize {
        self.0 as usize
    }
    pub fn get(self) -> u32 {
        self.0
    }
    /// Byte offset of a page in its file.
    pub fn offset_of(self, page_no: PageNo) -> u64 {
        u64::from(page_no.0) * u64::from(self.0)
    }
}

impl Default for PageSize {
    fn default() -> Self {
        PageSize::DEFAULT
    }
}

/// What a page holds. Stored as a u16 in the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum PageType {
    /// Allocated, holds nothing yet.
    Allocated = 0,
    /// Page 0 of every space: the space header and the first extent descriptors.
    SpaceHeader = 1,
    /// Extent descriptors for a later group of extents.
    ExtentDescriptor = 2,
    /// B-tree node (clustered or secondary index).
    Index = 3,
    /// Undo log page.
    Undo = 4,
    /// Off-page column data.
    Blob = 5,
    /// A page written by tests and benchmarks: a header and opaque bytes.
    Raw = 6,
}

impl PageType {
    pub fn from_u16(v: u16) -> Option<PageType> {
        Some(match v {
            0 => PageType::Allocated,
            1 => PageType::SpaceHeader,
            2 => PageType::ExtentDescriptor,
            3 => PageType::Index,
            4 => PageType::Undo,
            5 => PageType::Blob,
            6 => PageType::Raw,
            _ => return None,
        })
    }
}

// Header field offsets. The on-disk layout is little-endian.
pub const OFF_CHECKSUM: usize = 0;
pub const OFF_SPACE_ID: usize = 4;
pub const OFF_PAGE_NO: usize = 8;
pub const OFF_PAGE_TYPE: usize = 12;
pub const OFF_FLAGS: usize = 14;
pub const OFF_LSN: usize = 16;
pub const OFF_PREV: usize = 24;
pub const OFF_NEXT: usize = 28;
/// First byte of the type-specific body.
pub const HEADER_SIZE: usize = 32;
/// The trailer: a copy of the LSN in the last 8 bytes.
pub const TRAILER_SIZE: usize = 8;

const _: () = assert!(OFF_NEXT + 4 == HEADER_SIZE);
const _: () = assert!(OFF_LSN.is_multiple_of(8), "the LSN is naturally aligned");

fn get_u16(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}
fn get_u32(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}
fn get_u64(b: &[u8], off: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[off..off + 8]);
    u64::from_le_bytes(a)
}

/// Read-only view of the common header of a page image.
#[derive(Clone, Copy)]
pub struct Header<'a>(&'a [u8]);

impl<'a> Header<'a> {
    pub fn new(page: &'a [u8]) -> Self {
        debug_assert!(page.len() >= HEADER_SIZE + TRAILER_SIZE);
        Header(page)
    }
    pub fn checksum(&self) -> u32 {
        get_u32(self.0, OFF_CHECKSUM)
    }
    pub fn page_id(&self) -> PageId {
        PageId::new(
            SpaceId(get_u32(self.0, OFF_SPACE_ID)),
            PageNo(get_u32(self.0, OFF_PAGE_NO)),
        )
    }
    pub fn page_type_raw(&self) -> u16 {
        get_u16(self.0, OFF_PAGE_TYPE)
    }
    pub fn page_type(&self) -> Option<PageType> {
        PageType::from_u16(self.page_type_raw())
    }
    pub fn lsn(&self) -> Lsn {
        Lsn(get_u64(self.0, OFF_LSN))
    }
    pub fn trailer_lsn(&self) -> Lsn {
        Lsn(get_u64(self.0, self.0.len() - TRAILER_SIZE))
    }
    pub fn prev(&self) -> PageNo {
        PageNo(get_u32(self.0, OFF_PREV))
    }
    pub fn next(&self) -> PageNo {
        PageNo(get_u32(self.0, OFF_NEXT))
    }
}

/// Writes a fresh header for `id` of type `ty` into `page`, with no LSN and no list links.
/// The body is left as it is.
pub fn init_header(page: &mut [u8], id: PageId, ty: PageType) {
    page[OFF_CHECKSUM..OFF_CHECKSUM + 4].fill(0);
    page[OFF_SPACE_ID..OFF_SPACE_ID + 4].copy_from_slice(&id.space.0.to_le_bytes());
    page[OFF_PAGE_NO..OFF_PAGE_NO + 4].copy_from_slice(&id.page_no.0.to_le_bytes());
    page[OFF_PAGE_TYPE..OFF_PAGE_TYPE + 2].copy_from_slice(&(ty as u16).to_le_bytes());
    page[OFF_FLAGS..OFF_FLAGS + 2].fill(0);
    set_lsn(page, Lsn::ZERO);
    set_prev(page, PageNo::NULL);
    set_next(page, PageNo::NULL);
}

/// Sets the page LSN in the header and the trailer.
pub fn set_lsn(page: &mut [u8], lsn: Lsn) {
    let n = page.len();
    page[OFF_LSN..OFF_LSN + 8].copy_from_slice(&lsn.0.to_le_bytes());
    page[n - TRAILER_SIZE..].copy_from_slice(&lsn.0.to_le_bytes());
}

pub fn set_prev(page: &mut [u8], p: PageNo) {
    page[OFF_PREV..OFF_PREV + 4].copy_from_slice(&p.0.to_le_bytes());
}

pub fn set_next(page: &mut [u8], p: PageNo) {
    page[OFF_NEXT..OFF_NEXT + 4].copy_from_slice(&p.0.to_le_bytes());
}

pub fn set_page_type(page: &mut [u8], ty: PageType) {
    page[OFF_PAGE_TYPE..OFF_PAGE_TYPE + 2].copy_from_slice(&(ty as u16).to_le_bytes());
}

/// crc32c of everything but the checksum field.
pub fn compute_checksum(page: &[u8]) -> u32 {
    crc32c::crc32c(&page[OFF_CHECKSUM + 4..])
}

/// Prepares a page image for writing: stores the checksum. Call on a private copy, after the
/// LSN has been set; asserts invariant 2.
pub fn stamp(page: &mut [u8]) {
    let h = Header::new(page);
    assert_eq!(
        h.lsn(),
        h.trailer_lsn(),
        "page {} has mismatched LSNs",
        h.page_id()
    );
    let c = compute_checksum(page);
    page[OFF_CHECKSUM..OFF_CHECKSUM + 4].copy_from_slice(&c.to_le_bytes());
}

/// Why a page image read from disk cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageCorruption {
    #[error("page was allocated but never written (all zeros)")]
    NeverWritten,
    #[error("checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    Checksum { stored: u32, computed: u32 },
    #[error("header LSN {header} differs from trailer LSN {trailer} (torn write)")]
    TornLsn { header: Lsn, trailer: Lsn },
    #[error("page claims to be {found}, expected {expected}")]
    WrongPage { expected: PageId, found: PageId },
    #[error("unknown page type {0}")]
    UnknownType(u16),
    /// The checksum holds but the page's own structure is broken (a slot or record outside
    /// the page, ...): found by the check the layer that owns the page type registers with
    /// the buffer pool (`BufferPool::set_structure_check`).
    #[error("damaged page structure: {0}")]
    Structure(String),
}

/// Checks a page image read from disk for `expected` (invariants 1–4).
pub fn verify(page: &[u8], expected: PageId) -> Result<(), PageCorruption> {
    let h = Header::new(page);
    let stored = h.checksum();
    let computed = compute_checksum(page);
    if stored != computed {
        if stored == 0 && page.iter().all(|&b| b == 0) {
            return Err(PageCorruption::NeverWritten);
        }
        // Report the cheaper, more telling symptom of a torn write when there is one.
        if h.lsn() != h.trailer_lsn() {
            return Err(PageCorruption::TornLsn {
                header: h.lsn(),
                trailer: h.trailer_lsn(),
            });
        }
        return Err(PageCorruption::Checksum { stored, computed });
    }
    if h.lsn() != h.trailer_lsn() {
        return Err(PageCorruption::TornLsn {
            header: h.lsn(),
            trailer: h.trailer_lsn(),
        });
    }
    if h.page_id() != expected {
        return Err(PageCorruption::WrongPage {
            expected,
            found: h.page_id(),
        });
    }
    if h.page_type().is_none() {
        return Err(PageCorruption::UnknownType(h.page_type_raw()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(size: usize) -> (Vec<u8>, PageId) {
        let id = PageId::new(SpaceId(7), PageNo(42));
        let mut p = vec![0u8; size];
        init_header(&mut p, id, PageType::Raw);
        for (i, b) in p[HEADER_SIZE..size - TRAILER_SIZE].iter_mut().enumerate() {
            *b = (i * 31 % 251) as u8;
        }
        set_lsn(&mut p, Lsn(123_456));
        stamp(&mut p);
        (p, id)
    }

    #[test]
    fn stamped_page_verifies_at_every_page_size() {
        for kib in [4, 8, 16, 32, 64] {
            let (p, id) = sample(kib * 1024);
            assert_eq!(verify(&p, id), Ok(()));
            assert_eq!(Header::new(&p).lsn(), Lsn(123_456));
        }
    }

    #[test]
    fn every_single_bit_flip_is_detected() {
        let (p, id) = sample(4096);
        for byte in 0..p.len() {
            for bit in 0..8 {
                let mut q = p.clone();
                q[byte] ^= 1 << bit;
                assert!(
                    verify(&q, id).is_err(),
                    "flip of bit {bit} in byte {byte} undetected"
                );
            }
        }
    }

    #[test]
    fn torn_write_is_detected_at_every_sector_boundary() {
        let (old, id) = sample(16384);
        let mut new = old.clone();
        set_lsn(&mut new, Lsn(999_999));
        new[100] ^= 0xff;
        stamp(&mut new);
        for sectors in 1..(16384 / 512) {
            let mut torn = old.clone();
            torn[..sectors * 512].copy_from_slice(&new[..sectors * 512]);
            assert!(
                verify(&torn, id).is_err(),
                "tear after {sectors} sectors undetected"
            );
        }
    }

    #[test]
    fn all_zero_page_is_reported_as_never_written() {
        let p = vec![0u8; 16384];
        let id = PageId::new(SpaceId(1), PageNo(3));
        assert_eq!(verify(&p, id), Err(PageCorruption::NeverWritten));
    }

    #[test]
    fn page_read_from_the_wrong_place_is_rejected() {
        let (p, _) = sample(8192);
        let other = PageId::new(SpaceId(7), PageNo(43));
        assert!(matches!(
            verify(&p, other),
            Err(PageCorruption::WrongPage { .. })
        ));
    }

    #[test]
    fn page_sizes_outside_4_to_64_kib_are_refused() {
        for ok in [4096, 8192, 16384, 32768, 65536] {
            assert!(PageSize::new(ok).is_some());
        }
        for bad in [0, 512, 2048, 12288, 131072] {
            assert!(PageSize::new(bad).is_none());
        }
    }

    #[test]
    fn page_id_round_trips_through_u64() {
        let id = PageId::new(SpaceId(0xdead_beef), PageNo(0x1234_5678));
        assert_eq!(PageId::from_u64(id.as_u64()), id);
    }
}
