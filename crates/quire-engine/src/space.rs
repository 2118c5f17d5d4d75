//! # Tablespaces: one file of pages each
//!
//! A space is a file of fixed-size pages: the system space (space 0) and one file per table.
//! This layer reads, writes and extends pages; it knows nothing of what pages hold (that is
//! `alloc` for page 0 and the extent descriptors, and the B-tree above).
//!
//! Invariants:
//! 1. Every page read is verified ([`crate::page::verify`]); a corrupt page is an error naming
//!    the file and the page, never returned as data.
//! 2. Every page written carries a valid checksum (asserted before the write, checked again on
//!    read: "check it when it is written and when it is read").
//! 3. `size_pages` is whole extents, only grows, and the file is at least `size_pages` pages
//!    long. A file longer than that holds a partial extension (a crash during one, or a full
//!    disk that granted part of one): never used, ignored at open, covered by the next one.
//! 4. Creating or extending a space writes no zeros: the file system allocates the range
//!    (fallocate, lesson 5), and reads of never-written pages return zeros.
//!
//! Crash safety of extension: the file size changes without an fsync of its own. Until the redo
//! log exists (step 2), a crash may lose an extension whose pages were never synced; the pages
//! themselves were never durable either, so nothing committed is lost. With the redo log,
//! FILE_EXTEND records make recovery re-extend (docs/crash-analysis.md).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use quire_io::{FileHandle, IoError, OpenOptions, Vfs};

use crate::page::{self, PageCorruption, PageId, PageNo, PageSize, SpaceId};

/// Pages per extent: the unit of extension and of sequential allocation.
pub const EXTENT_PAGES: u32 = 64;
/// Extension grows the file by 1/8 of its size, within these bounds (bytes).
pub const EXTEND_MIN_BYTES: u64 = 1 << 20;
pub const EXTEND_MAX_BYTES: u64 = 64 << 20;

#[derive(Debug, thiserror::Error)]
pub enum SpaceError {
    #[error("{}: page {page_no}: {what}", path.display())]
    Corrupt {
        path: PathBuf,
        page_no: PageNo,
        what: PageCorruption,
    },
    #[error("{}: page {page_no} is past the end of the space ({size_pages} pages)", path.display())]
    OutOfRange {
        path: PathBuf,
        page_no: PageNo,
        size_pages: u32,
    },
    #[error("{}: file size {len} is not a multiple of the page size {page_size}", path.display())]
    BadLength {
        path: PathBuf,
        len: u64,
        page_size: u32,
    },
    #[error("space {0} is not open")]
    NotOpen(SpaceId),
    #[error(transparent)]
    Io(#[from] IoError),
}

pub type Result<T> = std::result::Result<T, SpaceError>;

impl SpaceError {
    /// The file system refused to grow the file (ENOSPC or EDQUOT): MySQL's "table is full".
    pub fn is_disk_full(&self) -> bool {
        matches!(self, SpaceError::Io(e) if e.kind == quire_io::ErrorKind::NoSpace)
    }
}

/// One open tablespace file.
#[derive(Debug)]
pub struct Space {
    id: SpaceId,
    page_size: PageSize,
    file: FileHandle,
    size_pages: AtomicU32,
    /// Serializes extensions (rare); reads and writes never take it.
    extend_lock: Mutex<()>,
    /// Whether changes to this space are redo-logged (default on). Off would be a bulk load
    /// without redo; the doublewrite buffer never skips a page of a space while it is off
    /// (lesson 1, docs/doublewrite.md). Change it through [`Spaces::set_redo_logging`].
    redo_logging: AtomicBool,
}

impl Space {
    /// Creates a new space file of `initial_pages` pages (rounded up to whole extents) by
    /// allocation, without writing zeros and without a sync (invariant 4).
    pub fn create(
        vfs: &dyn Vfs,
        path: &Path,
        id: SpaceId,
        page_size: PageSize,
        initial_pages: u32,
    ) -> Result<Space> {
        let file = FileHandle::new(vfs.open(path, OpenOptions::create_new().direct(true))?);
        let pages = initial_pages.max(1).div_ceil(EXTENT_PAGES) * EXTENT_PAGES;
        if let Err(e) = file.allocate(0, u64::from(pages) * page_size.get() as u64) {
            // The file is ours (create_new) and holds nothing: a full disk keeps no trace.
            drop(file);
            if let Err(d) = vfs.delete(path) {
                tracing::warn!(path = %path.display(), error = %d, "could not remove a space file that could not be allocated");
            }
            return Err(e.into());
        }
        Ok(Space {
            id,
            page_size,
            file,
            size_pages: AtomicU32::new(pages),
            extend_lock: Mutex::new(()),
            redo_logging: AtomicBool::new(true),
        })
    }

    /// Opens an existing space file.
    pub fn open(vfs: &dyn Vfs, path: &Path, id: SpaceId, page_size: PageSize) -> Result<Space> {
        let file = FileHandle::new(vfs.open(path, OpenOptions::existing().direct(true))?);
        let len = file.len()?;
        let whole =
            u32::try_from(len / page_size.get() as u64).map_err(|_| SpaceError::BadLength {
                path: path.to_path_buf(),
                len,
                page_size: page_size.get(),
            })?;
        // Invariant 3: a space is whole extents. A longer file holds a partial extension:
        // a crash during one on a file system without fallocate, or a fallocate that the
        // disk filled up part way (ext4 keeps what it allocated). No page of it was ever
        // used (the space header grows only after the extension succeeded), so the tail
        // is ignored, and the next extension covers it again.
        let pages = whole / EXTENT_PAGES * EXTENT_PAGES;
        if u64::from(pages) * page_size.get() as u64 != len {
            tracing::warn!(
                path = %path.display(),
                len,
                pages,
                "space file ends in a partial extension; its tail is ignored"
            );
        }
        Ok(Space {
            id,
            page_size,
            file,
            size_pages: AtomicU32::new(pages),
            extend_lock: Mutex::new(()),
            redo_logging: AtomicBool::new(true),
        })
    }

    pub fn id(&self) -> SpaceId {
        self.id
    }
    pub fn path(&self) -> &Path {
        self.file.path()
    }
    pub fn page_size(&self) -> PageSize {
        self.page_size
    }
    pub fn size_pages(&self) -> u32 {
        self.size_pages.load(Ordering::Acquire)
    }
    pub fn file(&self) -> &FileHandle {
        &self.file
    }
    /// Whether changes to this space are redo-logged now.
    pub fn redo_logging(&self) -> bool {
        self.redo_logging.load(Ordering::Acquire)
    }

    fn check_range(&self, page_no: PageNo, count: u32) -> Result<()> {
        let size = self.size_pages();
        if page_no.is_null() || u64::from(page_no.0) + u64::from(count) > u64::from(size) {
            return Err(SpaceError::OutOfRange {
                path: self.path().to_path_buf(),
                page_no,
                size_pages: size,
            });
        }
        Ok(())
    }

    /// Reads page `page_no` into `buf` (exactly one page) and verifies it (invariant 1).
    pub fn read_page(&self, page_no: PageNo, buf: &mut [u8]) -> Result<()> {
        self.read_page_unverified(page_no, buf)?;
        page::verify(buf, PageId::new(self.id, page_no)).map_err(|what| SpaceError::Corrupt {
            path: self.path().to_path_buf(),
            page_no,
            what,
        })
    }

    /// Reads a page without verifying it: for `quire check` and doublewrite recovery, which
    /// judge the bytes themselves.
    pub fn read_page_unverified(&self, page_no: PageNo, buf: &mut [u8]) -> Result<()> {
        debug_assert_eq!(buf.len(), self.page_size.bytes());
        self.check_range(page_no, 1)?;
        self.file
            .read_exact_at(buf, self.page_size.offset_of(page_no))?;
        Ok(())
    }

    /// Reads the adjacent pages `first ..` into `buf` (a whole number of pages) with one
    /// read, verifying none: recovery's read-ahead checks each page it keeps.
    pub fn read_pages_unverified(&self, first: PageNo, buf: &mut [u8]) -> Result<()> {
        let ps = self.page_size.bytes();
        debug_assert!(!buf.is_empty() && buf.len().is_multiple_of(ps));
        self.check_range(first, (buf.len() / ps) as u32)?;
        self.file
            .read_exact_at(buf, self.page_size.offset_of(first))?;
        Ok(())
    }

    /// Writes one stamped page (invariant 2). A failed write aborts the process.
    pub fn write_page(&self, page_no: PageNo, buf: &[u8]) -> Result<()> {
        self.write_pages(page_no, &[buf])
    }

    /// Writes adjacent stamped pages starting at `first` with one vectored write.
    pub fn write_pages(&self, first: PageNo, bufs: &[&[u8]]) -> Result<()> {
        self.check_range(first, bufs.len() as u32)?;
        for (i, b) in bufs.iter().enumerate() {
            assert_eq!(b.len(), self.page_size.bytes());
            let id = PageId::new(self.id, PageNo(first.0 + i as u32));
            // Invariant 2: never put a page on disk that would fail its own read check.
            assert_eq!(
                page::verify(b, id),
                Ok(()),
                "writing a bad image of page {id}"
            );
        }
        self.file
            .write_vectored_at(bufs, self.page_size.offset_of(first));
        Ok(())
    }

    /// fdatasync of the file. A failure aborts the process.
    pub fn sync(&self) {
        self.file.sync_data();
    }

    /// Makes sure page `page_no` exists, growing the file by at least 1/8 of its size (between
    /// 1 MiB and 64 MiB, in whole extents) so that extensions are rare. Returns the new size.
    pub fn extend_to_include(&self, page_no: PageNo) -> Result<u32> {
        if page_no.0 < self.size_pages() {
            return Ok(self.size_pages());
        }
        let _g = self.extend_lock.lock();
        let cur = self.size_pages();
        if page_no.0 < cur {
            return Ok(cur);
        }
        let new = next_size(cur, page_no.0 + 1, self.page_size);
        debug_assert!(
            cur.is_multiple_of(EXTENT_PAGES) && new.is_multiple_of(EXTENT_PAGES),
            "invariant 3: space {} of {cur} pages grows to {new}",
            self.id
        );
        let ps = self.page_size.get() as u64;
        if let Err(e) = self
            .file
            .allocate(u64::from(cur) * ps, u64::from(new - cur) * ps)
        {
            // A full disk may have granted part of the range (ext4 does): give it back, so
            // the file stays whole extents (invariant 3) and the space it took is free for
            // whoever frees space next. If even that fails, `open` ignores the tail.
            if let Err(t) = self.file.set_len(u64::from(cur) * ps) {
                tracing::warn!(space = %self.id, error = %t, "could not cut a failed extension back");
            }
            return Err(e.into());
        }
        self.size_pages.store(new, Ordering::Release);
        tracing::debug!(space = %self.id, from = cur, to = new, "extended space");
        Ok(new)
    }
}

/// The size (in pages) to grow a space of `cur` pages to, so that it holds at least `need`.
pub fn next_size(cur: u32, need: u32, page_size: PageSize) -> u32 {
    let ps = page_size.get() as u64;
    let step_bytes = (u64::from(cur) * ps / 8).clamp(EXTEND_MIN_BYTES, EXTEND_MAX_BYTES);
    let step = (step_bytes / ps) as u32;
    let target = need.max(cur.saturating_add(step));
    target.div_ceil(EXTENT_PAGES).saturating_mul(EXTENT_PAGES)
}

/// The open spaces, by id. Lookups take a read lock on a small map; opening and closing
/// spaces (DDL) takes the write lock.
#[derive(Debug, Default)]
pub struct Spaces {
    map: RwLock<HashMap<SpaceId, Arc<Space>>>,
    /// How many open spaces have redo logging off: lets the buffer pool skip the per-space
    /// lookup on every page change while it is zero (the normal case).
    redo_off: AtomicUsize,
}

impl Spaces {
    pub fn new() -> Self {
        Spaces::default()
    }
    pub fn insert(&self, space: Arc<Space>) {
        self.map.write().insert(space.id(), space);
    }
    pub fn remove(&self, id: SpaceId) -> Option<Arc<Space>> {
        let sp = self.map.write().remove(&id);
        if let Some(sp) = &sp {
            if !sp.redo_logging.swap(true, Ordering::AcqRel) {
                self.redo_off.fetch_sub(1, Ordering::AcqRel);
            }
        }
        sp
    }
    /// Switches redo logging of a space on or off (docs/doublewrite.md: the skip rule never
    /// applies to a page changed while it is off).
    pub fn set_redo_logging(&self, id: SpaceId, on: bool) -> Result<()> {
        let sp = self.get(id)?;
        let was = sp.redo_logging.swap(on, Ordering::AcqRel);
        match (was, on) {
            (true, false) => {
                self.redo_off.fetch_add(1, Ordering::AcqRel);
            }
            (false, true) => {
                self.redo_off.fetch_sub(1, Ordering::AcqRel);
            }
            _ => {}
        }
        Ok(())
    }
    /// Whether any open space has redo logging off.
    pub fn any_redo_off(&self) -> bool {
        self.redo_off.load(Ordering::Acquire) != 0
    }
    /// Whether space `id` is redo-logged; an unknown space counts as not logged.
    pub fn redo_logging(&self, id: SpaceId) -> bool {
        !self.any_redo_off() || self.get(id).is_ok_and(|s| s.redo_logging())
    }
    pub fn get(&self, id: SpaceId) -> Result<Arc<Space>> {
        self.map
            .read()
            .get(&id)
            .cloned()
            .ok_or(SpaceError::NotOpen(id))
    }
    pub fn ids(&self) -> Vec<SpaceId> {
        let mut v: Vec<_> = self.map.read().keys().copied().collect();
        v.sort();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::{init_header, set_lsn, stamp, Lsn, PageType};
    use quire_io::os::OsVfs;
    use quire_io::AlignedBuf;

    /// O_DIRECT needs aligned buffers: the OS grants it on this file system.
    fn buf(ps: PageSize) -> AlignedBuf {
        AlignedBuf::zeroed(ps.bytes(), 4096)
    }

    fn page(id: PageId, ps: PageSize, fill: u8) -> AlignedBuf {
        let mut p = buf(ps);
        p.fill(fill);
        init_header(&mut p, id, PageType::Raw);
        set_lsn(&mut p, Lsn(1));
        stamp(&mut p);
        p
    }

    #[test]
    fn growth_is_an_eighth_within_bounds_in_whole_extents() {
        let ps = PageSize::DEFAULT; // 16 KiB: 1 MiB = 64 pages, 64 MiB = 4096 pages
        assert_eq!(next_size(64, 65, ps), 128);
        assert_eq!(next_size(8 * 1024, 8 * 1024 + 1, ps), 9 * 1024);
        assert_eq!(next_size(1 << 20, (1 << 20) + 1, ps), (1 << 20) + 4096);
        assert_eq!(next_size(64, 10_000, ps) % EXTENT_PAGES, 0);
        assert!(next_size(64, 10_000, ps) >= 10_000);
    }

    #[test]
    fn written_page_reads_back_and_corruption_names_file_and_page() {
        let dir = tempfile::tempdir().expect("tempdir");
        let vfs = OsVfs::new();
        let path = dir.path().join("t.qsp");
        let ps = PageSize::new(8192).expect("size");
        let sp = Space::create(&vfs, &path, SpaceId(3), ps, 1).expect("create");
        assert_eq!(sp.size_pages(), EXTENT_PAGES);
        let id = PageId::new(SpaceId(3), PageNo(5));
        sp.write_page(PageNo(5), &page(id, ps, 0xab))
            .expect("write");
        let mut buf = buf(ps);
        sp.read_page(PageNo(5), &mut buf).expect("read");
        assert_eq!(&buf[..], &page(id, ps, 0xab)[..]);

        // Flip one bit behind the engine's back.
        let raw = vfs.open(&path, OpenOptions::existing()).expect("open");
        let mut b = [0u8; 1];
        let off = ps.offset_of(PageNo(5)) + 1000;
        raw.read_exact_at(&mut b, off).expect("read");
        raw.write_all_at(&[b[0] ^ 4], off).expect("write");
        let err = sp
            .read_page(PageNo(5), &mut buf)
            .expect_err("corrupt page served");
        let msg = err.to_string();
        assert!(msg.contains("t.qsp") && msg.contains("page 5"), "{msg}");

        let err = sp
            .read_page(PageNo(6), &mut buf)
            .expect_err("never-written page served");
        assert!(err.to_string().contains("never written"), "{err}");
        let err = sp
            .read_page(PageNo(64), &mut buf)
            .expect_err("read past end");
        assert!(matches!(err, SpaceError::OutOfRange { .. }));
    }

    #[test]
    fn extension_grows_the_file_and_keeps_pages() {
        let dir = tempfile::tempdir().expect("tempdir");
        let vfs = OsVfs::new();
        let path = dir.path().join("t.qsp");
        let ps = PageSize::DEFAULT;
        let sp = Space::create(&vfs, &path, SpaceId(1), ps, 64).expect("create");
        let id = PageId::new(SpaceId(1), PageNo(0));
        sp.write_page(PageNo(0), &page(id, ps, 1)).expect("write");
        let n = sp.extend_to_include(PageNo(64)).expect("extend");
        assert_eq!(n, 128);
        assert_eq!(sp.file().len().expect("len"), 128 * ps.get() as u64);
        let reopened = Space::open(&vfs, &path, SpaceId(1), ps).expect("open");
        assert_eq!(reopened.size_pages(), 128);
        let mut buf = buf(ps);
        reopened.read_page(PageNo(0), &mut buf).expect("read");
    }

    #[test]
    fn creating_and_extending_a_space_writes_no_zeros() {
        let vfs = quire_io::sim::SimVfs::new(1);
        vfs.create_dir_all(Path::new("/d")).expect("mkdir");
        let sp = Space::create(
            &vfs,
            Path::new("/d/t.qsp"),
            SpaceId(2),
            PageSize::DEFAULT,
            640,
        )
        .expect("create");
        sp.extend_to_include(PageNo(10_000)).expect("extend");
        let st = vfs.stats();
        assert_eq!(st.bytes_written, 0, "{st:?}");
        assert_eq!(st.syncs, 0, "no sync per extension: {st:?}");
        assert_eq!(st.allocates, 2);
        assert!(sp.size_pages() > 10_000);
    }
}
