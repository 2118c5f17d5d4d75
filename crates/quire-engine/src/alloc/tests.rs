//! Allocator tests on an in-memory page set, and a property test against a set model.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::*;
use crate::page::{init_header, PageId};

/// Pages in memory; `extend` grows the "file".
struct MemPages {
    space: SpaceId,
    ps: PageSize,
    pages: Vec<Vec<u8>>,
    max_pages: u32,
}

impl MemPages {
    fn new(ps: PageSize, initial: u32) -> Self {
        let mut m = MemPages {
            space: SpaceId(5),
            ps,
            pages: Vec::new(),
            max_pages: u32::MAX,
        };
        m.pages.resize(initial as usize, vec![0u8; ps.bytes()]);
        let id = PageId::new(m.space, PageNo(0));
        init_header(&mut m.pages[0], id, PageType::SpaceHeader);
        m
    }
}

impl AllocPages for MemPages {
    fn space_id(&self) -> SpaceId {
        self.space
    }
    fn read(&mut self, page: PageNo) -> Result<&[u8]> {
        Ok(&self.pages[page.0 as usize])
    }
    fn write(&mut self, page: PageNo, offset: usize, bytes: &[u8]) -> Result<()> {
        self.pages[page.0 as usize][offset..offset + bytes.len()].copy_from_slice(bytes);
        Ok(())
    }
    fn init_page(&mut self, page: PageNo, ty: PageType) -> Result<()> {
        let p = &mut self.pages[page.0 as usize];
        p.fill(0);
        init_header(p, PageId::new(self.space, page), ty);
        Ok(())
    }
    fn extend(&mut self, pages: u32) -> Result<u32> {
        if pages > self.max_pages {
            return Err(AllocError::SpaceFull {
                space: self.space,
                max_pages: self.max_pages,
            });
        }
        let n = crate::space::next_size(self.pages.len() as u32, pages, self.ps);
        self.pages.resize(n as usize, vec![0u8; self.ps.bytes()]);
        Ok(n)
    }
}

fn fresh(ps: PageSize) -> MemPages {
    let mut m = MemPages::new(ps, 64);
    Allocator::new(&mut m, ps).format(64).expect("format");
    m
}

#[test]
fn pages_are_allocated_once_and_never_the_descriptor_page() {
    let ps = PageSize::new(4096).expect("ps");
    let mut m = fresh(ps);
    let mut a = Allocator::new(&mut m, ps);
    let mut seen = BTreeSet::new();
    for _ in 0..10_000 {
        let p = a.alloc_page().expect("alloc");
        assert!(!p.0.is_multiple_of(4096), "descriptor page {p} handed out");
        assert!(seen.insert(p), "page {p} handed out twice");
    }
    let u = verify_mem(&mut m, ps).expect("clean");
    assert_eq!(u.used_pages, 10_000 + 3); // + descriptor pages 0, 4096, 8192
}

#[test]
fn allocation_grows_the_file_in_increments_and_initializes_descriptor_pages() {
    let ps = PageSize::new(4096).expect("ps");
    let mut m = fresh(ps);
    let mut a = Allocator::new(&mut m, ps);
    for _ in 0..5000 {
        a.alloc_page().expect("alloc");
    }
    let h = a.header().expect("header");
    assert!(h.size_pages >= 5001);
    // The second group's descriptor page was initialized, not read.
    assert_eq!(
        crate::page::Header::new(&m.pages[4096]).page_type(),
        Some(PageType::ExtentDescriptor)
    );
}

#[test]
fn freed_pages_are_reused_and_empty_extents_return_to_free() {
    let ps = PageSize::DEFAULT;
    let mut m = fresh(ps);
    let mut a = Allocator::new(&mut m, ps);
    let pages: Vec<_> = (0..200).map(|_| a.alloc_page().expect("alloc")).collect();
    for p in &pages {
        a.free_page(*p).expect("free");
    }
    let h = a.header().expect("header");
    assert_eq!(h.frag_used, 1, "only the descriptor page stays used");
    assert_eq!(h.full_frag.len, 0);
    verify_mem(&mut m, ps).expect("clean");
}

#[test]
fn double_free_is_an_error() {
    let ps = PageSize::DEFAULT;
    let mut m = fresh(ps);
    let mut a = Allocator::new(&mut m, ps);
    let p = a.alloc_page().expect("alloc");
    a.free_page(p).expect("free");
    assert!(matches!(
        a.free_page(p),
        Err(AllocError::NotAllocated { .. })
    ));
    assert!(matches!(
        a.free_page(PageNo(0)),
        Err(AllocError::NotAllocated { .. })
    ));
}

#[test]
fn extents_for_segments_are_whole_and_come_back() {
    let ps = PageSize::DEFAULT;
    let mut m = fresh(ps);
    let mut a = Allocator::new(&mut m, ps);
    let e1 = a.alloc_extent(7).expect("extent");
    let e2 = a.alloc_extent(7).expect("extent");
    assert_eq!(e1.0 % 64, 0);
    assert_ne!(e1, e2);
    assert!(a.is_used(PageNo(e1.0 + 63)).expect("used"));
    a.free_extent(e1).expect("free");
    assert!(!a.is_used(PageNo(e1.0 + 5)).expect("used"));
    assert!(a.free_extent(e1).is_err(), "double free of an extent");
    verify_mem(&mut m, ps).expect("clean");
}

#[test]
fn full_space_is_a_clear_error() {
    let ps = PageSize::DEFAULT;
    let mut m = fresh(ps);
    m.max_pages = 64;
    let mut a = Allocator::new(&mut m, ps);
    for _ in 0..63 {
        a.alloc_page().expect("alloc");
    }
    let err = a.alloc_page().expect_err("allocated past the limit");
    assert!(err.to_string().contains("full"), "{err}");
}

#[test]
fn verify_reports_a_broken_list() {
    let ps = PageSize::DEFAULT;
    let mut m = fresh(ps);
    let mut a = Allocator::new(&mut m, ps);
    for _ in 0..70 {
        a.alloc_page().expect("alloc");
    }
    let mut h = a.header().expect("header");
    h.frag_used += 1;
    a.put_header(&h).expect("write");
    let problems = verify_mem(&mut m, ps).expect_err("corruption missed");
    assert!(
        problems.iter().any(|p| p.contains("frag_used")),
        "{problems:?}"
    );
}

#[derive(Debug, Clone)]
enum Op {
    Alloc,
    Free(usize),
    AllocExtent,
    FreeExtent(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => Just(Op::Alloc),
        4 => any::<usize>().prop_map(Op::Free),
        1 => Just(Op::AllocExtent),
        1 => any::<usize>().prop_map(Op::FreeExtent),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The allocator agrees with a set model: it never hands out a used page, frees exactly
    /// what it handed out, and keeps its invariants after every operation.
    #[test]
    fn allocator_matches_a_set_model(ops in proptest::collection::vec(op(), 1..400)) {
        let ps = PageSize::new(4096).expect("ps");
        let mut m = fresh(ps);
        let mut pages: Vec<PageNo> = Vec::new();
        let mut extents: Vec<PageNo> = Vec::new();
        let mut used: BTreeSet<u32> = BTreeSet::new();
        for op in ops {
            let mut a = Allocator::new(&mut m, ps);
            match op {
                Op::Alloc => {
                    let p = a.alloc_page().expect("alloc");
                    prop_assert!(used.insert(p.0), "page {} handed out twice", p);
                    pages.push(p);
                }
                Op::Free(i) if !pages.is_empty() => {
                    let p = pages.swap_remove(i % pages.len());
                    a.free_page(p).expect("free");
                    used.remove(&p.0);
                }
                Op::AllocExtent => {
                    let e = a.alloc_extent(1).expect("extent");
                    for p in e.0..e.0 + 64 {
                        prop_assert!(used.insert(p), "extent page {} already used", p);
                    }
                    extents.push(e);
                }
                Op::FreeExtent(i) if !extents.is_empty() => {
                    let e = extents.swap_remove(i % extents.len());
                    a.free_extent(e).expect("free extent");
                    for p in e.0..e.0 + 64 {
                        used.remove(&p);
                    }
                }
                _ => {}
            }
            let n = m.pages.len() as u32;
            let u = Allocator::new(&mut m, ps).verify(n);
            prop_assert!(u.is_ok(), "{:?}", u);
            // Descriptor pages exist for the groups whose extents are initialized.
            let free_limit = Allocator::new(&mut m, ps).header().expect("header").free_limit;
            let descriptor_pages = free_limit.div_ceil(4096);
            prop_assert_eq!(u.map(|u| u.used_pages).unwrap_or(0), used.len() as u32 + descriptor_pages);
        }
    }
}

fn verify_mem(m: &mut MemPages, ps: PageSize) -> std::result::Result<Usage, Vec<String>> {
    let n = m.pages.len() as u32;
    Allocator::new(m, ps).verify(n)
}
