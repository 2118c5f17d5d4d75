//! # Offline consistency check (`quire check`)
//!
//! Reads every tablespace file of a data directory directly (no buffer pool, nothing written)
//! and reports every problem it finds, each naming the file, the page and what is wrong:
//!
//! * every page in use passes `page::verify` (checksum, torn LSN, identity, type);
//! * a page marked free is either never written (all zeros) or a valid page left behind;
//! * the allocation metadata keeps its invariants (`alloc::Allocator::verify`).
//!
//! Tables are checked above the engine, by `table::Db::open_for_check` and `Db::check`
//! (`quire check` runs them once the pages are clean): every table's B-trees
//! (`BTree::verify`), secondary indexes against the clustered rows, and the catalog against
//! the space files (docs/catalog.md).

use std::path::{Path, PathBuf};

use quire_io::{OpenOptions, Vfs, VfsFile};

use crate::alloc::format::SpaceHeader;
use crate::alloc::{AllocError, AllocPages, Allocator, Usage};
use crate::page::{self, PageCorruption, PageId, PageNo, PageSize, PageType, SpaceId};

/// File name suffix of tablespace files.
pub const SPACE_SUFFIX: &str = "qsp";

/// What `check` found in one file.
#[derive(Debug, Default)]
pub struct FileReport {
    pub path: PathBuf,
    pub pages_checked: u64,
    pub usage: Option<Usage>,
    pub problems: Vec<String>,
}

/// What `check` found in a data directory.
#[derive(Debug, Default)]
pub struct Report {
    pub files: Vec<FileReport>,
}

impl Report {
    pub fn is_clean(&self) -> bool {
        self.files.iter().all(|f| f.problems.is_empty())
    }
    pub fn problems(&self) -> impl Iterator<Item = &String> {
        self.files.iter().flat_map(|f| f.problems.iter())
    }
}

/// Read-only page access for the allocator's verifier; one page cached at a time would do,
/// but descriptor pages are few, so keep them all.
struct FilePages<'a> {
    file: &'a dyn VfsFile,
    space: SpaceId,
    ps: PageSize,
    cache: std::collections::HashMap<u32, Vec<u8>>,
}

impl AllocPages for FilePages<'_> {
    fn space_id(&self) -> SpaceId {
        self.space
    }
    fn read(&mut self, p: PageNo) -> Result<&[u8], AllocError> {
        if !self.cache.contains_key(&p.0) {
            let mut buf = vec![0u8; self.ps.bytes()];
            self.file
                .read_exact_at(&mut buf, self.ps.offset_of(p))
                .map_err(|e| AllocError::Corrupt {
                    space: self.space,
                    what: e.to_string(),
                })?;
            if let Err(what) = page::verify(&buf, PageId::new(self.space, p)) {
                return Err(AllocError::Corrupt {
                    space: self.space,
                    what: format!("descriptor page {p}: {what}"),
                });
            }
            self.cache.insert(p.0, buf);
        }
        Ok(self.cache.get(&p.0).map(Vec::as_slice).unwrap_or(&[]))
    }
    fn write(&mut self, p: PageNo, _: usize, _: &[u8]) -> Result<(), AllocError> {
        Err(AllocError::Corrupt {
            space: self.space,
            what: format!("check tried to write {p}"),
        })
    }
    fn init_page(&mut self, p: PageNo, _: PageType) -> Result<(), AllocError> {
        self.write(p, 0, &[])
    }
    fn extend(&mut self, _: u32) -> Result<u32, AllocError> {
        Err(AllocError::Corrupt {
            space: self.space,
            what: "check tried to extend".into(),
        })
    }
}

/// Checks one tablespace file.
pub fn check_space_file(vfs: &dyn Vfs, path: &Path) -> FileReport {
    let mut r = FileReport {
        path: path.to_path_buf(),
        ..Default::default()
    };
    let shown = path.display().to_string();
    let file = match vfs.open(
        path,
        OpenOptions {
            read_only: true,
            ..OpenOptions::existing()
        },
    ) {
        Ok(f) => f,
        Err(e) => {
            r.problems.push(format!("{shown}: cannot open: {e}"));
            return r;
        }
    };
    let mut head = [0u8; 64];
    if let Err(e) = file.read_exact_at(&mut head, 0) {
        r.problems.push(format!("{shown}: cannot read page 0: {e}"));
        return r;
    }
    let Some(ps) = SpaceHeader::peek_page_size(&head) else {
        r.problems
            .push(format!("{shown}: page 0 is not a Quire space header"));
        return r;
    };
    let space = page::Header::new(&head).page_id().space;
    let len = match file.len() {
        Ok(l) => l,
        Err(e) => {
            r.problems.push(format!("{shown}: {e}"));
            return r;
        }
    };
    let file_pages = (len / ps.get() as u64) as u32;
    let mut pages = FilePages {
        file: file.as_ref(),
        space,
        ps,
        cache: Default::default(),
    };
    let mut alloc = Allocator::new(&mut pages, ps);
    match alloc.verify(file_pages) {
        Ok(u) => r.usage = Some(u),
        Err(ps) => r
            .problems
            .extend(ps.into_iter().map(|p| format!("{shown}: {p}"))),
    }
    let mut buf = vec![0u8; ps.bytes()];
    for p in 0..file_pages {
        let page_no = PageNo(p);
        let used = match alloc.is_used(page_no) {
            Ok(u) => u,
            Err(e) => {
                r.problems.push(format!("{shown}: page {p}: {e}"));
                break;
            }
        };
        if let Err(e) = file.read_exact_at(&mut buf, ps.offset_of(page_no)) {
            r.problems.push(format!("{shown}: page {p}: {e}"));
            continue;
        }
        r.pages_checked += 1;
        match page::verify(&buf, PageId::new(space, page_no)) {
            Ok(()) => {}
            // Free pages may be never written; used ones may not.
            Err(PageCorruption::NeverWritten) if !used => {}
            Err(what) if used => r
                .problems
                .push(format!("{shown}: page {p} (in use): {what}")),
            Err(what) => r.problems.push(format!("{shown}: page {p} (free): {what}")),
        }
    }
    r
}

/// Checks every tablespace file in `dir`. (Per-database subdirectories arrive with the catalog
/// in step 4, which will list the files it expects; then a missing file is a problem too.)
pub fn check_data_dir(vfs: &dyn Vfs, dir: &Path) -> Result<Report, quire_io::IoError> {
    let mut report = Report::default();
    for name in vfs.list_dir(dir)? {
        let p = dir.join(&name);
        if p.extension().is_some_and(|x| x == SPACE_SUFFIX) {
            report.files.push(check_space_file(vfs, &p));
        }
    }
    Ok(report)
}
