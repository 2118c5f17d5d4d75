//! # Page allocation inside a space: extents, descriptors and free lists
//!
//! A space is cut into extents of 64 pages. Each extent has a 24-byte descriptor (state, owner,
//! list links, a bitmap of used pages) on the descriptor page of its group (page 0 for the first
//! `page_size` pages, then every `page_size` pages, as in InnoDB). Page 0 also holds the space
//! header with three lists of extents (layout: docs/space-format.md):
//!
//! ```text
//!   FREE       extents with no page in use          --alloc_page-->  FREE_FRAG
//!   FREE_FRAG  extents with some pages used singly  --last page-->   FULL_FRAG
//!   FULL_FRAG  extents with every page used singly  --free_page-->   FREE_FRAG --empty--> FREE
//!   (segment)  extents owned whole by an index      --free_extent--> FREE
//! ```
//!
//! Invariants (checked by [`Allocator::verify`], which `quire check` runs):
//! 1. Every extent below `free_limit` is in exactly the list its state names, or owned by a
//!    segment; extents at or above `free_limit` are free and in no list.
//! 2. A FREE extent's bitmap is empty; a FULL_FRAG extent's is full; a FREE_FRAG extent's is
//!    neither.
//! 3. List lengths and back links agree with the descriptors.
//! 4. `frag_used` equals the number of used pages in FREE_FRAG and FULL_FRAG extents.
//! 5. Descriptor pages are always marked used.
//! 6. `free_limit <= size_pages <=` the file's size in pages.
//!
//! All changes go through [`AllocPages`]: [`MtrPages`] makes each one a redo-logged change of
//! a mini-transaction (and each file extension a FILE_EXTEND record), so recovery applies an
//! allocation whole or not at all. Concurrency: callers hold page 0 exclusively for the whole
//! operation, which serializes allocation within one space (InnoDB does the same).

pub mod format;
mod mtr_pages;

use crate::page::{PageNo, PageSize, PageType, SpaceId};
use crate::space::EXTENT_PAGES;
pub use mtr_pages::MtrPages;

use format::{
    Descriptor, ExtentState, FormatError, Geometry, ListBase, SpaceHeader, NIL, OFF_SPACE_HEADER,
};

#[derive(Debug, thiserror::Error)]
pub enum AllocError {
    #[error("space {space}: {what}")]
    Corrupt { space: SpaceId, what: String },
    #[error("space {space}: page {page} is not allocated (double free?)")]
    NotAllocated { space: SpaceId, page: PageNo },
    #[error("space {space} is full: it cannot grow past {max_pages} pages")]
    SpaceFull { space: SpaceId, max_pages: u32 },
    #[error(transparent)]
    Space(#[from] crate::space::SpaceError),
    #[error(transparent)]
    Buffer(#[from] crate::buffer::BufferError),
    #[error("mini-transaction: {0}")]
    Mtr(String),
}

pub type Result<T> = std::result::Result<T, AllocError>;

impl AllocError {
    /// The space could not grow: the disk is full, or the space reached its largest size.
    /// Both are MySQL's "table is full" (1114), as InnoDB's DB_OUT_OF_FILE_SPACE.
    pub fn is_disk_full(&self) -> bool {
        match self {
            AllocError::SpaceFull { .. } => true,
            AllocError::Space(s) => s.is_disk_full(),
            AllocError::Buffer(b) => b.is_disk_full(),
            _ => false,
        }
    }
}

/// The pages the allocator reads and changes, latched exclusively for one operation.
pub trait AllocPages {
    fn space_id(&self) -> SpaceId;
    /// The current bytes of `page`.
    fn read(&mut self, page: PageNo) -> Result<&[u8]>;
    /// Changes `bytes.len()` bytes of `page` at `offset`.
    fn write(&mut self, page: PageNo, offset: usize, bytes: &[u8]) -> Result<()>;
    /// Starts a brand-new page of type `ty` without reading the old one.
    fn init_page(&mut self, page: PageNo, ty: PageType) -> Result<()>;
    /// Grows the file to hold at least `pages` pages; returns its new size in pages.
    fn extend(&mut self, pages: u32) -> Result<u32>;
}

/// Space usage, for `quire check` and statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    pub size_pages: u32,
    pub used_pages: u32,
    pub free_pages: u32,
}

/// The largest number of pages a space may have (the last page number is reserved as NULL).
pub const MAX_SPACE_PAGES: u32 = (u32::MAX / EXTENT_PAGES) * EXTENT_PAGES;

/// Allocation operations on one space.
pub struct Allocator<'a, P: AllocPages> {
    pages: &'a mut P,
    geo: Geometry,
}

impl<'a, P: AllocPages> Allocator<'a, P> {
    pub fn new(pages: &'a mut P, page_size: PageSize) -> Self {
        Allocator {
            pages,
            geo: Geometry::new(page_size),
        }
    }

    fn corrupt(&self, what: impl Into<String>) -> AllocError {
        AllocError::Corrupt {
            space: self.pages.space_id(),
            what: what.into(),
        }
    }

    fn fmt_err(&self, e: FormatError) -> AllocError {
        self.corrupt(e.to_string())
    }

    /// Writes a fresh space header on page 0 (which the caller has initialized) for a file of
    /// `size_pages` pages.
    pub fn format(&mut self, size_pages: u32) -> Result<()> {
        let h = SpaceHeader {
            space_id: self.pages.space_id(),
            page_size: self.geo.pages_per_group(),
            size_pages,
            free_limit: 0,
            free: ListBase::EMPTY,
            free_frag: ListBase::EMPTY,
            full_frag: ListBase::EMPTY,
            frag_used: 0,
        };
        self.put_header(&h)
    }

    pub fn header(&mut self) -> Result<SpaceHeader> {
        let b = self.pages.read(PageNo(0))?;
        SpaceHeader::decode(b).map_err(|e| self.fmt_err(e))
    }

    fn put_header(&mut self, h: &SpaceHeader) -> Result<()> {
        self.pages.write(PageNo(0), OFF_SPACE_HEADER, &h.encode())
    }

    fn desc(&mut self, extent: u32) -> Result<Descriptor> {
        let (page, off) = self.geo.locate(extent);
        let b = self.pages.read(page)?;
        Descriptor::decode(&b[off..off + format::DESCRIPTOR_SIZE], extent)
            .map_err(|e| self.fmt_err(e))
    }

    fn put_desc(&mut self, extent: u32, d: &Descriptor) -> Result<()> {
        let (page, off) = self.geo.locate(extent);
        self.pages.write(page, off, &d.encode())
    }

    fn list_mut(h: &mut SpaceHeader, state: ExtentState) -> &mut ListBase {
        match state {
            ExtentState::Free => &mut h.free,
            ExtentState::FreeFrag => &mut h.free_frag,
            ExtentState::FullFrag => &mut h.full_frag,
            ExtentState::Segment => unreachable!("segment extents are in no space list"),
        }
    }

    /// Appends `extent` (whose descriptor is `d`, state already set) to its state's list.
    fn push_back(&mut self, h: &mut SpaceHeader, extent: u32, d: &mut Descriptor) -> Result<()> {
        let list = *Self::list_mut(h, d.state);
        d.prev = list.last;
        d.next = NIL;
        if list.last != NIL {
            let mut last = self.desc(list.last)?;
            last.next = extent;
            self.put_desc(list.last, &last)?;
        }
        let l = Self::list_mut(h, d.state);
        if l.first == NIL {
            l.first = extent;
        }
        l.last = extent;
        l.len += 1;
        self.put_desc(extent, d)
    }

    /// Unlinks `extent` from the list of its current state.
    fn unlink(&mut self, h: &mut SpaceHeader, extent: u32, d: &mut Descriptor) -> Result<()> {
        if d.prev != NIL {
            let mut p = self.desc(d.prev)?;
            p.next = d.next;
            self.put_desc(d.prev, &p)?;
        }
        if d.next != NIL {
            let mut n = self.desc(d.next)?;
            n.prev = d.prev;
            self.put_desc(d.next, &n)?;
        }
        let l = Self::list_mut(h, d.state);
        if l.first == extent {
            l.first = d.next;
        }
        if l.last == extent {
            l.last = d.prev;
        }
        if l.len == 0 {
            return Err(self.corrupt(format!("extent {extent} unlinked from an empty list")));
        }
        l.len -= 1;
        d.prev = NIL;
        d.next = NIL;
        Ok(())
    }

    /// Initializes descriptors for more extents (up to 4 groups' worth at once is plenty;
    /// InnoDB's fsp_fill_free_list does a few), growing the file when it is used up.
    fn fill_free_list(&mut self, h: &mut SpaceHeader) -> Result<()> {
        if h.free_limit >= h.size_pages {
            if h.size_pages >= MAX_SPACE_PAGES {
                return Err(AllocError::SpaceFull {
                    space: self.pages.space_id(),
                    max_pages: MAX_SPACE_PAGES,
                });
            }
            let want = h
                .size_pages
                .saturating_add(EXTENT_PAGES)
                .min(MAX_SPACE_PAGES);
            let got = self.pages.extend(want)?;
            h.size_pages = got.min(MAX_SPACE_PAGES);
        }
        // Initialize a handful of extents at a time, not the whole new range: the descriptor
        // writes are cheap, but there is no reason to touch far-away descriptor pages early.
        let mut added = 0;
        while h.free_limit < h.size_pages && added < 8 {
            let extent = h.free_limit / EXTENT_PAGES;
            let first_page = PageNo(h.free_limit);
            let mut d = Descriptor::free();
            if self.geo.is_descriptor_page(first_page) {
                if first_page.0 != 0 {
                    // Page 0 exists already; later descriptor pages start life here, rebuilt
                    // from nothing (no read: they were never written).
                    self.pages
                        .init_page(first_page, PageType::ExtentDescriptor)?;
                }
                d.state = ExtentState::FreeFrag;
                d.used = 1;
                h.frag_used += 1;
            }
            h.free_limit += EXTENT_PAGES;
            self.push_back(h, extent, &mut d)?;
            added += 1;
        }
        Ok(())
    }

    /// Takes one extent off the FREE list (filling it as needed) with `d.state` unchanged.
    fn take_free_extent(&mut self, h: &mut SpaceHeader) -> Result<(u32, Descriptor)> {
        // Each round initializes more extents or grows the file, so this ends (or fails with
        // SpaceFull). A round may add only a descriptor-page extent, which goes to FREE_FRAG.
        while h.free.first == NIL {
            self.fill_free_list(h)?;
        }
        let extent = h.free.first;
        let mut d = self.desc(extent)?;
        if d.state != ExtentState::Free || d.used != 0 {
            return Err(self.corrupt(format!("extent {extent} on the FREE list is {:?}", d.state)));
        }
        self.unlink(h, extent, &mut d)?;
        Ok((extent, d))
    }

    /// Allocates one page, preferring partly used extents so that whole extents stay free for
    /// segments that want contiguous space.
    pub fn alloc_page(&mut self) -> Result<PageNo> {
        let mut h = self.header()?;
        if h.free_frag.first == NIL {
            if h.free.first == NIL {
                self.fill_free_list(&mut h)?;
            }
            if h.free_frag.first == NIL {
                let (extent, mut d) = self.take_free_extent(&mut h)?;
                d.state = ExtentState::FreeFrag;
                self.push_back(&mut h, extent, &mut d)?;
            }
        }
        let extent = h.free_frag.first;
        let mut d = self.desc(extent)?;
        if d.state != ExtentState::FreeFrag || d.used == u64::MAX {
            return Err(self.corrupt(format!("extent {extent} on FREE_FRAG is {:?}", d.state)));
        }
        let bit = (!d.used).trailing_zeros();
        d.used |= 1u64 << bit;
        h.frag_used += 1;
        if d.used == u64::MAX {
            self.unlink(&mut h, extent, &mut d)?;
            d.state = ExtentState::FullFrag;
            self.push_back(&mut h, extent, &mut d)?;
        } else {
            self.put_desc(extent, &d)?;
        }
        self.put_header(&h)?;
        Ok(PageNo(extent * EXTENT_PAGES + bit))
    }

    /// Frees a page allocated by [`Allocator::alloc_page`].
    pub fn free_page(&mut self, page: PageNo) -> Result<()> {
        let mut h = self.header()?;
        let space = self.pages.space_id();
        if page.0 >= h.free_limit || self.geo.is_descriptor_page(page) {
            return Err(AllocError::NotAllocated { space, page });
        }
        let extent = page.0 / EXTENT_PAGES;
        let bit = 1u64 << (page.0 % EXTENT_PAGES);
        let mut d = self.desc(extent)?;
        if !matches!(d.state, ExtentState::FreeFrag | ExtentState::FullFrag) || d.used & bit == 0 {
            return Err(AllocError::NotAllocated { space, page });
        }
        let was_full = d.state == ExtentState::FullFrag;
        d.used &= !bit;
        h.frag_used -= 1;
        if was_full || d.used == 0 {
            self.unlink(&mut h, extent, &mut d)?;
            d.state = if d.used == 0 {
                ExtentState::Free
            } else {
                ExtentState::FreeFrag
            };
            self.push_back(&mut h, extent, &mut d)?;
        } else {
            self.put_desc(extent, &d)?;
        }
        self.put_header(&h)
    }

    /// Allocates a whole extent for segment `owner`; returns its first page.
    pub fn alloc_extent(&mut self, owner: u32) -> Result<PageNo> {
        let mut h = self.header()?;
        let (extent, mut d) = self.take_free_extent(&mut h)?;
        d.state = ExtentState::Segment;
        d.owner = owner;
        d.used = u64::MAX;
        self.put_desc(extent, &d)?;
        self.put_header(&h)?;
        Ok(PageNo(extent * EXTENT_PAGES))
    }

    /// Returns a segment's extent (given by its first page) to the FREE list.
    pub fn free_extent(&mut self, first_page: PageNo) -> Result<()> {
        let space = self.pages.space_id();
        let mut h = self.header()?;
        if !first_page.0.is_multiple_of(EXTENT_PAGES) || first_page.0 >= h.free_limit {
            return Err(AllocError::NotAllocated {
                space,
                page: first_page,
            });
        }
        let extent = first_page.0 / EXTENT_PAGES;
        let mut d = self.desc(extent)?;
        if d.state != ExtentState::Segment {
            return Err(AllocError::NotAllocated {
                space,
                page: first_page,
            });
        }
        d = Descriptor::free();
        self.push_back(&mut h, extent, &mut d)?;
        self.put_header(&h)
    }

    /// Is `page` in use (allocated singly, owned by a segment, or a descriptor page)?
    pub fn is_used(&mut self, page: PageNo) -> Result<bool> {
        let h = self.header()?;
        if page.0 >= h.free_limit {
            return Ok(false);
        }
        let d = self.desc(page.0 / EXTENT_PAGES)?;
        Ok(d.used & (1u64 << (page.0 % EXTENT_PAGES)) != 0)
    }

    /// Every page in use (allocated singly, in a segment's extent, or a descriptor page),
    /// ascending: the page accounting of `Db::check`.
    pub fn used_pages(&mut self) -> Result<Vec<PageNo>> {
        let h = self.header()?;
        let mut pages = Vec::new();
        for e in 0..h.free_limit / EXTENT_PAGES {
            let d = self.desc(e)?;
            pages.extend(
                (0..EXTENT_PAGES)
                    .filter(|b| d.used >> b & 1 == 1)
                    .map(|b| PageNo(e * EXTENT_PAGES + b)),
            );
        }
        Ok(pages)
    }

    /// Checks invariants 1–6; returns the usage, or every problem found.
    pub fn verify(&mut self, file_pages: u32) -> std::result::Result<Usage, Vec<String>> {
        let mut problems = Vec::new();
        let h = match self.header() {
            Ok(h) => h,
            Err(e) => return Err(vec![e.to_string()]),
        };
        if h.free_limit > h.size_pages || h.size_pages > file_pages {
            problems.push(format!(
                "free_limit {} / size {} / file size {} pages out of order",
                h.free_limit, h.size_pages, file_pages
            ));
        }
        if !h.free_limit.is_multiple_of(EXTENT_PAGES) {
            problems.push(format!("free_limit {} is not extent-aligned", h.free_limit));
        }
        let n_ext = h.free_limit / EXTENT_PAGES;
        let mut descs = Vec::with_capacity(n_ext as usize);
        for e in 0..n_ext {
            match self.desc(e) {
                Ok(d) => descs.push(d),
                Err(err) => {
                    problems.push(err.to_string());
                    return Err(problems);
                }
            }
        }
        let mut seen = vec![false; n_ext as usize];
        for (name, state, base) in [
            ("FREE", ExtentState::Free, h.free),
            ("FREE_FRAG", ExtentState::FreeFrag, h.free_frag),
            ("FULL_FRAG", ExtentState::FullFrag, h.full_frag),
        ] {
            let mut prev = NIL;
            let mut cur = base.first;
            let mut count = 0u32;
            while cur != NIL {
                if cur >= n_ext || seen[cur as usize] {
                    problems.push(format!(
                        "{name} list reaches extent {cur} twice or out of range"
                    ));
                    break;
                }
                seen[cur as usize] = true;
                let d = descs[cur as usize];
                if d.state != state {
                    problems.push(format!("extent {cur} on {name} has state {:?}", d.state));
                }
                if d.prev != prev {
                    problems.push(format!(
                        "extent {cur} on {name}: back link {} != {prev}",
                        d.prev
                    ));
                }
                count += 1;
                prev = cur;
                cur = d.next;
            }
            if count != base.len || prev != base.last {
                problems.push(format!(
                    "{name} list: header says len {} last {}, walk found {count} ending at {prev}",
                    base.len, base.last
                ));
            }
        }
        let mut frag_used = 0;
        let mut used_pages = 0;
        for (e, d) in descs.iter().enumerate() {
            let e = e as u32;
            match d.state {
                ExtentState::Segment if seen[e as usize] => {
                    problems.push(format!("segment extent {e} is on a free list"))
                }
                ExtentState::Segment => {}
                _ if !seen[e as usize] => problems.push(format!("extent {e} is in no list")),
                ExtentState::Free if d.used != 0 => {
                    problems.push(format!("FREE extent {e} has used pages {:#x}", d.used))
                }
                ExtentState::FullFrag if d.used != u64::MAX => {
                    problems.push(format!("FULL_FRAG extent {e} has free pages"))
                }
                ExtentState::FreeFrag if d.used == 0 || d.used == u64::MAX => {
                    problems.push(format!("FREE_FRAG extent {e} is empty or full"))
                }
                _ => {}
            }
            if matches!(d.state, ExtentState::FreeFrag | ExtentState::FullFrag) {
                frag_used += d.used_count();
            }
            if self.geo.is_descriptor_page(PageNo(e * EXTENT_PAGES)) && d.used & 1 == 0 {
                problems.push(format!(
                    "descriptor page {} is marked free",
                    e * EXTENT_PAGES
                ));
            }
            used_pages += d.used_count();
        }
        if frag_used != h.frag_used {
            problems.push(format!(
                "frag_used is {}, descriptors count {frag_used}",
                h.frag_used
            ));
        }
        if problems.is_empty() {
            Ok(Usage {
                size_pages: h.size_pages,
                used_pages,
                free_pages: h.size_pages - used_pages,
            })
        } else {
            Err(problems)
        }
    }
}

#[cfg(test)]
mod tests;
