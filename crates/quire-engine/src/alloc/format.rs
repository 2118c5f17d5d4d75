//! Byte layout of the space header and of extent descriptors (docs/space-format.md).
//!
//! Pure encoding and decoding; no I/O. Every structure has a fixed size and offset, checked at
//! compile time, and is little-endian like the page header.

use crate::page::{PageNo, PageSize, SpaceId, HEADER_SIZE};
use crate::space::EXTENT_PAGES;

/// "QSPC": marks page 0 of a Quire tablespace.
pub const SPACE_MAGIC: u32 = u32::from_le_bytes(*b"QSPC");
pub const FORMAT_VERSION: u32 = 1;

/// Offsets inside page 0.
pub const OFF_SPACE_HEADER: usize = HEADER_SIZE; // 32
pub const SPACE_HEADER_SIZE: usize = 64;
/// Descriptors start here on page 0 and on every descriptor page.
pub const OFF_DESCRIPTORS: usize = 128;
pub const DESCRIPTOR_SIZE: usize = 24;

const _: () = assert!(OFF_SPACE_HEADER + SPACE_HEADER_SIZE <= OFF_DESCRIPTORS);
const _: () = assert!(EXTENT_PAGES == 64, "the descriptor bitmap is one u64");

/// A "no extent" link.
pub const NIL: u32 = u32::MAX;

/// The head of a doubly linked list of extents (threaded through their descriptors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListBase {
    pub len: u32,
    pub first: u32,
    pub last: u32,
}

impl ListBase {
    pub const EMPTY: ListBase = ListBase {
        len: 0,
        first: NIL,
        last: NIL,
    };
}

/// The space header on page 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpaceHeader {
    pub space_id: SpaceId,
    pub page_size: u32,
    /// Pages the allocator may use. The file is at least this long.
    pub size_pages: u32,
    /// Extents below `free_limit / 64` have initialized descriptors and sit in exactly one list
    /// (or belong to a segment); extents at or above it are free and uninitialized.
    pub free_limit: u32,
    pub free: ListBase,
    pub free_frag: ListBase,
    pub full_frag: ListBase,
    /// Pages allocated one at a time from FREE_FRAG/FULL_FRAG extents (descriptor pages included).
    pub frag_used: u32,
}

fn get_u32(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}
fn put_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

fn get_list(b: &[u8], off: usize) -> ListBase {
    ListBase {
        len: get_u32(b, off),
        first: get_u32(b, off + 4),
        last: get_u32(b, off + 8),
    }
}
fn put_list(b: &mut [u8], off: usize, l: ListBase) {
    put_u32(b, off, l.len);
    put_u32(b, off + 4, l.first);
    put_u32(b, off + 8, l.last);
}

/// Why a space header or descriptor cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error("page 0 is not a Quire space header (magic {0:#010x})")]
    BadMagic(u32),
    #[error("unsupported space format version {0}")]
    BadVersion(u32),
    #[error("bad extent state {state} in the descriptor of extent {extent}")]
    BadState { extent: u32, state: u32 },
}

impl SpaceHeader {
    pub fn decode(page: &[u8]) -> Result<SpaceHeader, FormatError> {
        let o = OFF_SPACE_HEADER;
        let magic = get_u32(page, o);
        if magic != SPACE_MAGIC {
            return Err(FormatError::BadMagic(magic));
        }
        let version = get_u32(page, o + 4);
        if version != FORMAT_VERSION {
            return Err(FormatError::BadVersion(version));
        }
        Ok(SpaceHeader {
            space_id: SpaceId(get_u32(page, o + 8)),
            page_size: get_u32(page, o + 12),
            size_pages: get_u32(page, o + 16),
            free_limit: get_u32(page, o + 20),
            free: get_list(page, o + 24),
            free_frag: get_list(page, o + 36),
            full_frag: get_list(page, o + 48),
            frag_used: get_u32(page, o + 60),
        })
    }

    /// The encoded bytes, to be written at [`OFF_SPACE_HEADER`].
    pub fn encode(&self) -> [u8; SPACE_HEADER_SIZE] {
        let mut b = [0u8; SPACE_HEADER_SIZE];
        put_u32(&mut b, 0, SPACE_MAGIC);
        put_u32(&mut b, 4, FORMAT_VERSION);
        put_u32(&mut b, 8, self.space_id.0);
        put_u32(&mut b, 12, self.page_size);
        put_u32(&mut b, 16, self.size_pages);
        put_u32(&mut b, 20, self.free_limit);
        put_list(&mut b, 24, self.free);
        put_list(&mut b, 36, self.free_frag);
        put_list(&mut b, 48, self.full_frag);
        put_u32(&mut b, 60, self.frag_used);
        b
    }

    /// Reads only the page size from the first bytes of page 0, before the page size is known.
    pub fn peek_page_size(first_bytes: &[u8]) -> Option<PageSize> {
        if first_bytes.len() < OFF_SPACE_HEADER + 16
            || get_u32(first_bytes, OFF_SPACE_HEADER) != SPACE_MAGIC
        {
            return None;
        }
        PageSize::new(get_u32(first_bytes, OFF_SPACE_HEADER + 12))
    }
}

/// The dictionary header: high-water marks of ids that are never handed out twice, in the
/// spare bytes of the system space's page 0 between the space header and the descriptors
/// (docs/space-format.md). Other spaces leave these bytes zero.
pub const OFF_DICT_HEADER: usize = OFF_SPACE_HEADER + SPACE_HEADER_SIZE; // 96
pub const DICT_HEADER_SIZE: usize = 32;
/// "QDIC": the dictionary header is initialized. Zero: a data directory from before it.
pub const DICT_MAGIC: u32 = u32::from_le_bytes(*b"QDIC");

const _: () = assert!(OFF_DICT_HEADER + DICT_HEADER_SIZE <= OFF_DESCRIPTORS);

/// The decoded dictionary header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DictHeader {
    /// Every space id handed out is below this.
    pub next_space_id: u32,
    /// Every table id handed out is below this; 0 until the catalog first sets it.
    pub next_table_id: u64,
}

impl DictHeader {
    /// `None` if page 0 has no dictionary header yet (its bytes are zero).
    pub fn decode(page: &[u8]) -> Option<DictHeader> {
        let o = OFF_DICT_HEADER;
        if get_u32(page, o) != DICT_MAGIC {
            return None;
        }
        Some(DictHeader {
            next_space_id: get_u32(page, o + 4),
            next_table_id: u64::from_le_bytes(page[o + 8..o + 16].try_into().ok()?),
        })
    }

    /// The encoded bytes, to be written at [`OFF_DICT_HEADER`].
    pub fn encode(&self) -> [u8; DICT_HEADER_SIZE] {
        let mut b = [0u8; DICT_HEADER_SIZE];
        put_u32(&mut b, 0, DICT_MAGIC);
        put_u32(&mut b, 4, self.next_space_id);
        b[8..16].copy_from_slice(&self.next_table_id.to_le_bytes());
        b
    }
}

/// The state of one extent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtentState {
    /// In the FREE list: no page used.
    Free,
    /// In the FREE_FRAG list: some pages used one at a time, some free.
    FreeFrag,
    /// In the FULL_FRAG list: every page used one at a time.
    FullFrag,
    /// Owned whole by a segment (an index); in no space-level list.
    Segment,
}

impl ExtentState {
    fn to_u32(self) -> u32 {
        match self {
            ExtentState::Free => 1,
            ExtentState::FreeFrag => 2,
            ExtentState::FullFrag => 3,
            ExtentState::Segment => 4,
        }
    }
    fn from_u32(v: u32) -> Option<Self> {
        Some(match v {
            1 => ExtentState::Free,
            2 => ExtentState::FreeFrag,
            3 => ExtentState::FullFrag,
            4 => ExtentState::Segment,
            _ => return None,
        })
    }
}

/// One extent descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Descriptor {
    pub state: ExtentState,
    /// Owning segment for [`ExtentState::Segment`], else 0.
    pub owner: u32,
    pub prev: u32,
    pub next: u32,
    /// Bit i set: page i of the extent is in use.
    pub used: u64,
}

impl Descriptor {
    pub fn free() -> Self {
        Descriptor {
            state: ExtentState::Free,
            owner: 0,
            prev: NIL,
            next: NIL,
            used: 0,
        }
    }

    pub fn decode(b: &[u8], extent: u32) -> Result<Descriptor, FormatError> {
        let raw = get_u32(b, 0);
        let state =
            ExtentState::from_u32(raw).ok_or(FormatError::BadState { extent, state: raw })?;
        let mut used = [0u8; 8];
        used.copy_from_slice(&b[16..24]);
        Ok(Descriptor {
            state,
            owner: get_u32(b, 4),
            prev: get_u32(b, 8),
            next: get_u32(b, 12),
            used: u64::from_le_bytes(used),
        })
    }

    pub fn encode(&self) -> [u8; DESCRIPTOR_SIZE] {
        let mut b = [0u8; DESCRIPTOR_SIZE];
        put_u32(&mut b, 0, self.state.to_u32());
        put_u32(&mut b, 4, self.owner);
        put_u32(&mut b, 8, self.prev);
        put_u32(&mut b, 12, self.next);
        b[16..24].copy_from_slice(&self.used.to_le_bytes());
        b
    }

    pub fn used_count(&self) -> u32 {
        self.used.count_ones()
    }
}

/// Where descriptors live: one descriptor page per group of `page_size` pages (as InnoDB),
/// at the first page of the group; group 0's is page 0 itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    page_size: PageSize,
}

impl Geometry {
    pub fn new(page_size: PageSize) -> Self {
        let g = Geometry { page_size };
        // Every descriptor of a group fits in its descriptor page.
        assert!(
            OFF_DESCRIPTORS + g.extents_per_group() as usize * DESCRIPTOR_SIZE
                <= page_size.bytes() - crate::page::TRAILER_SIZE
        );
        g
    }
    pub fn pages_per_group(&self) -> u32 {
        self.page_size.get()
    }
    pub fn extents_per_group(&self) -> u32 {
        self.pages_per_group() / EXTENT_PAGES
    }
    /// The descriptor page for `extent`, and the byte offset of its entry there.
    pub fn locate(&self, extent: u32) -> (PageNo, usize) {
        let group = extent / self.extents_per_group();
        let idx = extent % self.extents_per_group();
        (
            PageNo(group * self.pages_per_group()),
            OFF_DESCRIPTORS + idx as usize * DESCRIPTOR_SIZE,
        )
    }
    /// Is `page` a descriptor page (page 0 or the first page of a later group)?
    pub fn is_descriptor_page(&self, page: PageNo) -> bool {
        page.0.is_multiple_of(self.pages_per_group())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn space_header_round_trips() {
        let h = SpaceHeader {
            space_id: SpaceId(9),
            page_size: 16384,
            size_pages: 4096,
            free_limit: 128,
            free: ListBase {
                len: 1,
                first: 1,
                last: 1,
            },
            free_frag: ListBase {
                len: 2,
                first: 0,
                last: 3,
            },
            full_frag: ListBase::EMPTY,
            frag_used: 17,
        };
        let mut page = vec![0u8; 16384];
        page[OFF_SPACE_HEADER..OFF_SPACE_HEADER + SPACE_HEADER_SIZE].copy_from_slice(&h.encode());
        assert_eq!(SpaceHeader::decode(&page), Ok(h));
        assert_eq!(
            SpaceHeader::peek_page_size(&page[..64]),
            PageSize::new(16384)
        );
    }

    #[test]
    fn foreign_page_zero_is_rejected() {
        let page = vec![0u8; 4096];
        assert_eq!(SpaceHeader::decode(&page), Err(FormatError::BadMagic(0)));
    }

    #[test]
    fn descriptor_round_trips_and_bad_state_is_an_error() {
        let d = Descriptor {
            state: ExtentState::FullFrag,
            owner: 0,
            prev: 4,
            next: NIL,
            used: u64::MAX,
        };
        assert_eq!(Descriptor::decode(&d.encode(), 3), Ok(d));
        assert_eq!(
            Descriptor::decode(&[9u8; 24], 3),
            Err(FormatError::BadState {
                extent: 3,
                state: 0x0909_0909
            })
        );
    }

    #[test]
    fn descriptors_fit_their_page_at_every_page_size() {
        for kib in [4, 8, 16, 32, 64] {
            let ps = PageSize::new(kib * 1024).expect("size");
            let g = Geometry::new(ps);
            let last = g.extents_per_group() * 3 - 1;
            let (page, off) = g.locate(last);
            assert_eq!(page, PageNo(2 * ps.get()));
            assert!(off + DESCRIPTOR_SIZE <= ps.bytes() - 8);
            assert!(g.is_descriptor_page(page));
        }
    }
}
