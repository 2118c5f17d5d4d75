//! # The doublewrite buffer: write twice only what recovery needs
//!
//! A [`PageWriter`] that protects page writes against tearing (docs/doublewrite.md has the
//! byte layout, the proof of the skip rule and the crash analysis):
//!
//! ```text
//!   batch ──► protect? ──yes──► slot k of dblwr.qdw: ONE pwritev + ONE fdatasync
//!               │ no (PAGE_INIT first, redo on: lesson 1)         │
//!               ▼                                                 ▼
//!             home locations: one pwritev per run of adjacent pages, fdatasync per space
//!                                                                 │
//!                                                           release slot k
//! ```
//!
//! Invariants:
//! 1. A protected page's home location is written only after its copy is durable in the
//!    doublewrite file (the slot's write was synced).
//! 2. A slot is held from its write until every home write it protects is durable, so the
//!    copies a crash may need are never overwritten while they are needed.
//! 3. A page skips the doublewrite only if its flush copy says `initialized` (its first change
//!    since its last write was a logged PAGE_INIT) and its space is redo-logged now.
//! 4. Every copy written is a stamped page image: self-identifying and checksummed, so recovery
//!    can tell a valid copy from a torn or garbage one without any other metadata.
//! 5. Recovery restores only copies whose LSN is at least the checkpoint LSN (older ones may be
//!    stale), and only over a home page that fails its check or is older than the copy.
//!
//! Slots: several, each with its own lock, so that concurrent flushers (the page cleaner,
//! threads evicting dirty pages, checkpoints) never queue on one mutex, which the seed blog
//! saw become InnoDB's hottest lock (lesson 2).

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};
use quire_io::{AlignedBuf, FileHandle, OpenOptions, Vfs};

use crate::buffer::{write_home, FlushPage, PageWriter};
use crate::page::{self, Header, Lsn, PageId, PageSize, SpaceId};
use crate::space::{SpaceError, Spaces};

/// The doublewrite file, in the data directory.
pub const DBLWR_FILE: &str = "dblwr.qdw";
/// Default number of batch slots (`quire_doublewrite_slots`).
pub const DEFAULT_SLOTS: u32 = 8;
/// At most this many slots, and pages per slot (one pwritev takes at most 1024 buffers).
pub const MAX_SLOTS: u32 = 64;
pub const MAX_SLOT_PAGES: u32 = 1024;

const MAGIC: &[u8; 4] = b"QDBW";
const VERSION: u32 = 1;
/// Header bytes covered by the header checksum.
const HEADER_LEN: usize = 64;
/// Memory alignment of every buffer that goes to the file (O_DIRECT).
const ALIGN: usize = 4096;
/// Blocks read per call when scanning the file at open.
const SCAN_CHUNK: usize = 64;

/// How far past a space's end a doublewrite copy may lie and still be a page of an
/// extension lost in the crash (sixteen of the largest extension steps); a copy further
/// out is damage and is skipped at restore.
pub const MAX_LOST_EXTENSION_BYTES: u64 = 1 << 30;
const _: () = assert!(MAX_LOST_EXTENSION_BYTES >= 16 * crate::space::EXTEND_MAX_BYTES);

/// One valid page copy found in the file.
#[derive(Debug)]
pub struct PageCopy {
    pub id: PageId,
    pub lsn: Lsn,
    pub image: AlignedBuf,
}

/// Counters, under InnoDB's status names where the meaning is the same.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DoublewriteStats {
    /// `Innodb_data_writes`: write calls to data files and the doublewrite file.
    pub data_writes: u64,
    /// `Innodb_data_written`: bytes written by them.
    pub data_written: u64,
    /// `Innodb_dblwr_writes`: batch writes to the doublewrite file.
    pub dblwr_writes: u64,
    /// `Innodb_dblwr_pages_written`.
    pub dblwr_pages_written: u64,
    /// `quire_dblwr_pages_skipped`: pages that skipped it by the PAGE_INIT rule while ON.
    pub pages_skipped: u64,
    /// `quire_dblwr_pages_restored`: pages recovery restored from it.
    pub pages_restored: u64,
}

#[derive(Default)]
struct Counters {
    data_writes: AtomicU64,
    data_written: AtomicU64,
    dblwr_writes: AtomicU64,
    dblwr_pages_written: AtomicU64,
    pages_skipped: AtomicU64,
    pages_restored: AtomicU64,
}

/// The doublewrite buffer and the batch write path of the buffer pool.
pub struct Doublewrite {
    spaces: Arc<Spaces>,
    file: FileHandle,
    page_size: PageSize,
    slot_pages: usize,
    slots: Box<[Mutex<()>]>,
    /// Where a flusher that found every slot busy waits (spread over the slots).
    next_wait: AtomicUsize,
    /// `innodb_doublewrite`. Read once per batch.
    enabled: AtomicBool,
    /// The newest valid copy of each page found when the file was opened, until recovery
    /// restores them ([`Doublewrite::restore`]).
    found: Mutex<HashMap<PageId, PageCopy>>,
    counters: Counters,
}

impl std::fmt::Debug for Doublewrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Doublewrite")
            .field("path", &self.file.path())
            .field("slots", &self.slots.len())
            .field("slot_pages", &self.slot_pages)
            .field("enabled", &self.enabled())
            .finish_non_exhaustive()
    }
}

/// The header block (docs/doublewrite.md).
fn header_block(page_size: PageSize, slots: u32, slot_pages: u32) -> AlignedBuf {
    let mut b = AlignedBuf::zeroed(page_size.bytes(), ALIGN);
    b[4..8].copy_from_slice(MAGIC);
    b[8..12].copy_from_slice(&VERSION.to_le_bytes());
    b[12..16].copy_from_slice(&page_size.get().to_le_bytes());
    b[16..20].copy_from_slice(&slots.to_le_bytes());
    b[20..24].copy_from_slice(&slot_pages.to_le_bytes());
    let crc = crc32c::crc32c(&b[4..HEADER_LEN]);
    b[0..4].copy_from_slice(&crc.to_le_bytes());
    b
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    let mut x = [0u8; 4];
    x.copy_from_slice(&b[off..off + 4]);
    u32::from_le_bytes(x)
}

/// `(page_size, slots, slot_pages)` of a valid header.
fn parse_header(b: &[u8]) -> Option<(u32, u32, u32)> {
    if b.len() < HEADER_LEN
        || &b[4..8] != MAGIC
        || u32_at(b, 8) != VERSION
        || u32_at(b, 0) != crc32c::crc32c(&b[4..HEADER_LEN])
    {
        return None;
    }
    Some((u32_at(b, 12), u32_at(b, 16), u32_at(b, 20)))
}

/// A block of the doublewrite file, if it is a valid page copy (invariant 4).
fn as_copy(block: &[u8]) -> Option<(PageId, Lsn)> {
    let h = Header::new(block);
    let id = h.page_id();
    page::verify(block, id).ok()?;
    Some((id, h.lsn()))
}

impl Doublewrite {
    /// The page size recorded in the doublewrite file's header, if it has a valid one: lets the
    /// engine know the data directory's page size when no space file can tell it.
    pub fn peek_page_size(vfs: &dyn Vfs, dir: &Path) -> Option<PageSize> {
        let f = vfs
            .open(
                &dir.join(DBLWR_FILE),
                OpenOptions {
                    read_only: true,
                    ..OpenOptions::existing()
                },
            )
            .ok()?;
        let mut b = [0u8; HEADER_LEN];
        f.read_exact_at(&mut b, 0).ok()?;
        parse_header(&b).and_then(|(ps, _, _)| PageSize::new(ps))
    }

    /// Opens (or creates) `dir/dblwr.qdw`. An existing file is scanned block by block, whatever
    /// its header says, and the newest valid copy of each page is kept in memory for
    /// [`Doublewrite::restore`]; nothing in the file changes until then except a header that
    /// is invalid or describes another geometry, which is rewritten (slots are not touched).
    /// `fresh`: a new data directory; any old file is discarded.
    #[allow(clippy::too_many_arguments)]
    pub fn open(
        vfs: &dyn Vfs,
        dir: &Path,
        page_size: PageSize,
        slots: u32,
        slot_pages: u32,
        enabled: bool,
        spaces: Arc<Spaces>,
        fresh: bool,
    ) -> Result<Doublewrite, SpaceError> {
        assert!(
            (1..=MAX_SLOTS).contains(&slots) && (1..=MAX_SLOT_PAGES).contains(&slot_pages),
            "doublewrite geometry {slots} x {slot_pages} out of range"
        );
        let path = dir.join(DBLWR_FILE);
        if fresh && vfs.exists(&path)? {
            vfs.delete(&path)?;
        }
        let ps = page_size.bytes();
        let mut found: HashMap<PageId, PageCopy> = HashMap::new();
        let file = if vfs.exists(&path)? {
            let file = FileHandle::new(vfs.open(&path, OpenOptions::existing().direct(true))?);
            let blocks = file.len()? / ps as u64;
            let mut buf = AlignedBuf::zeroed(ps * SCAN_CHUNK, ALIGN);
            let mut header_ok = false;
            let mut b = 0u64;
            while b < blocks {
                let n = (blocks - b).min(SCAN_CHUNK as u64) as usize;
                file.read_exact_at(&mut buf[..n * ps], b * ps as u64)?;
                for i in 0..n {
                    let block = &buf[i * ps..(i + 1) * ps];
                    if b + i as u64 == 0 {
                        header_ok =
                            parse_header(block) == Some((page_size.get(), slots, slot_pages));
                        continue;
                    }
                    let Some((id, lsn)) = as_copy(block) else {
                        continue;
                    };
                    if found.get(&id).is_some_and(|c| c.lsn >= lsn) {
                        continue;
                    }
                    let mut image = AlignedBuf::zeroed(ps, ALIGN);
                    image.copy_from_slice(block);
                    found.insert(id, PageCopy { id, lsn, image });
                }
                b += n as u64;
            }
            if !header_ok {
                // Torn at creation, or another geometry: only block 0 changes, so the copies
                // just read stay in the file until recovery has restored them.
                tracing::info!(file = %path.display(), "rewriting the doublewrite file header");
                file.write_all_at(&header_block(page_size, slots, slot_pages), 0);
                file.sync_data();
            }
            if !found.is_empty() {
                tracing::info!(
                    file = %path.display(),
                    "doublewrite: {} valid page copies found",
                    found.len()
                );
            }
            file
        } else {
            let file = FileHandle::new(vfs.open(&path, OpenOptions::create_new().direct(true))?);
            file.write_all_at(&header_block(page_size, slots, slot_pages), 0);
            file.sync_data();
            vfs.sync_dir(dir)?;
            file
        };
        // Every slot's room is reserved now (fallocate: no zeros written), so a batch never
        // grows the file: on a full disk a page write must not fail, since a failed page
        // write is fatal (quire_io's FileHandle) while a failed allocation is only an error
        // of the statement that needed it. Never shrinks a bigger file of an old geometry.
        let bytes = (1 + u64::from(slots) * u64::from(slot_pages)) * ps as u64;
        file.allocate(0, bytes)?;
        Ok(Doublewrite {
            spaces,
            file,
            page_size,
            slot_pages: slot_pages as usize,
            slots: (0..slots).map(|_| Mutex::new(())).collect(),
            next_wait: AtomicUsize::new(0),
            enabled: AtomicBool::new(enabled),
            found: Mutex::new(found),
            counters: Counters::default(),
        })
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// `innodb_doublewrite`.
    pub fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Acquire)
    }

    /// Switches `innodb_doublewrite` at run time. Batches in flight finish with the value they
    /// started with. OFF is unsafe unless page writes are atomic (docs/doublewrite.md).
    pub fn set_enabled(&self, on: bool) {
        self.enabled.store(on, Ordering::Release);
    }

    pub fn stats(&self) -> DoublewriteStats {
        let c = &self.counters;
        DoublewriteStats {
            data_writes: c.data_writes.load(Ordering::Relaxed),
            data_written: c.data_written.load(Ordering::Relaxed),
            dblwr_writes: c.dblwr_writes.load(Ordering::Relaxed),
            dblwr_pages_written: c.dblwr_pages_written.load(Ordering::Relaxed),
            pages_skipped: c.pages_skipped.load(Ordering::Relaxed),
            pages_restored: c.pages_restored.load(Ordering::Relaxed),
        }
    }

    /// The valid copies of page 0 found at open whose LSN is at least `checkpoint` (the only
    /// ones [`Doublewrite::restore`] would restore), by space: recovery uses them to identify
    /// a space file whose page 0 is too damaged to name its space.
    pub fn page0_copies(&self, checkpoint: Lsn) -> Vec<(SpaceId, Vec<u8>)> {
        let found = self.found.lock();
        let mut v: Vec<(SpaceId, Vec<u8>)> = found
            .values()
            .filter(|c| c.id.page_no.0 == 0 && c.lsn >= checkpoint)
            .map(|c| (c.id.space, c.image.to_vec()))
            .collect();
        v.sort_by_key(|(s, _)| *s);
        v
    }

    /// Recovery, before any redo is applied: restores every page whose newest valid copy has
    /// an LSN of at least `checkpoint` and whose home page fails its check or is older
    /// (invariant 5), then syncs the spaces written. Copies of spaces that are not open
    /// (dropped) are ignored. Returns the pages restored.
    pub fn restore(&self, checkpoint: Lsn) -> Result<u64, SpaceError> {
        let found = std::mem::take(&mut *self.found.lock());
        let mut copies: Vec<PageCopy> = found.into_values().collect();
        copies.sort_by_key(|c| c.id);
        let ps = self.page_size.bytes();
        let mut home = AlignedBuf::zeroed(ps, ALIGN);
        let mut touched: Vec<SpaceId> = Vec::new();
        let mut restored = 0u64;
        for c in &copies {
            if c.lsn < checkpoint {
                continue; // may be stale: the page's newer changes could be lost under it
            }
            let Ok(space) = self.spaces.get(c.id.space) else {
                continue;
            };
            let size = space.size_pages();
            if u64::from(c.id.page_no.0) >= u64::from(size) + MAX_LOST_EXTENSION_BYTES / ps as u64 {
                // Not a lost extension but a damaged block that passed its checksum
                // (docs/doublewrite.md, "A copy far past its space's end").
                tracing::warn!(
                    "{}: the doublewrite copy of page {} lies far beyond the end of the space \
                     ({size} pages): ignored",
                    space.path().display(),
                    c.id.page_no
                );
                continue;
            }
            if c.id.page_no.0 >= size {
                // The copy proves the page existed; its extension was lost in the crash.
                space.extend_to_include(c.id.page_no)?;
            }
            space.read_page_unverified(c.id.page_no, &mut home)?;
            let why = match page::verify(&home, c.id) {
                Err(e) => e.to_string(),
                Ok(()) if Header::new(&home).lsn() < c.lsn => {
                    format!("LSN {} older than the copy's", Header::new(&home).lsn())
                }
                Ok(()) => continue,
            };
            tracing::warn!(
                "{}: page {}: {why}; restoring it from the doublewrite buffer (LSN {})",
                space.path().display(),
                c.id.page_no,
                c.lsn
            );
            space.write_page(c.id.page_no, &c.image)?;
            self.count_data_write(ps);
            restored += 1;
            if touched.last() != Some(&c.id.space) {
                touched.push(c.id.space);
            }
        }
        for id in touched {
            self.spaces.get(id)?.sync();
        }
        self.counters
            .pages_restored
            .fetch_add(restored, Ordering::Relaxed);
        Ok(restored)
    }

    fn count_data_write(&self, bytes: usize) {
        self.counters.data_writes.fetch_add(1, Ordering::Relaxed);
        self.counters
            .data_written
            .fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// A free slot: the lowest one whose lock is free (so that one flusher keeps using slot 0
    /// and the file stays small), else wait on one, spreading the waiters.
    fn acquire_slot(&self) -> (usize, MutexGuard<'_, ()>) {
        for (i, s) in self.slots.iter().enumerate() {
            if let Some(g) = s.try_lock() {
                return (i, g);
            }
        }
        let i = self.next_wait.fetch_add(1, Ordering::Relaxed) % self.slots.len();
        (i, self.slots[i].lock())
    }

    /// One chunk (at most a slot's worth, sorted by page id): the protocol of the module doc.
    fn write_chunk(&self, chunk: &[&FlushPage]) -> Result<(), SpaceError> {
        debug_assert!(chunk.len() <= self.slot_pages);
        let ps = self.page_size.bytes();
        let mut protect: Vec<&[u8]> = Vec::new();
        if self.enabled() {
            let mut skipped = 0u64;
            for p in chunk {
                // Invariant 3: the flag alone is not enough; redo logging must be on now.
                if p.initialized && self.spaces.redo_logging(p.id.space) {
                    skipped += 1;
                } else {
                    debug_assert_eq!(as_copy(&p.image).map(|c| c.0), Some(p.id));
                    protect.push(&p.image[..]);
                }
            }
            self.counters
                .pages_skipped
                .fetch_add(skipped, Ordering::Relaxed);
        }
        // Invariant 2: held until the home writes below are durable.
        let _slot = if protect.is_empty() {
            None
        } else {
            let (i, g) = self.acquire_slot();
            let offset = (1 + i * self.slot_pages) as u64 * ps as u64;
            self.file.write_vectored_at(&protect, offset);
            // Invariant 1: the copies are durable before any home write.
            self.file.sync_data();
            self.count_data_write(ps * protect.len());
            self.counters.dblwr_writes.fetch_add(1, Ordering::Relaxed);
            self.counters
                .dblwr_pages_written
                .fetch_add(protect.len() as u64, Ordering::Relaxed);
            Some(g)
        };
        write_home(
            &self.spaces,
            chunk,
            |pages| self.count_data_write(ps * pages),
            || {},
        )?;
        Ok(())
    }
}

impl PageWriter for Doublewrite {
    fn write_batch(&self, pages: &[FlushPage]) -> Result<(), SpaceError> {
        let mut sorted: Vec<&FlushPage> = pages.iter().collect();
        sorted.sort_by_key(|p| p.id);
        for chunk in sorted.chunks(self.slot_pages) {
            self.write_chunk(chunk)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::{init_header, set_lsn, stamp, PageNo, PageType};
    use crate::space::Space;
    use quire_io::sim::SimVfs;

    const PS: usize = 4096;

    fn setup(slots: u32) -> (SimVfs, Arc<Spaces>, Doublewrite) {
        let vfs = SimVfs::new(3);
        let dir = Path::new("/d");
        vfs.create_dir_all(dir).expect("mkdir");
        let ps = PageSize::new(PS as u32).expect("size");
        let spaces = Arc::new(Spaces::new());
        let sp = Space::create(&vfs, &dir.join("t.qsp"), SpaceId(1), ps, 64).expect("space");
        spaces.insert(Arc::new(sp));
        let d =
            Doublewrite::open(&vfs, dir, ps, slots, 4, true, spaces.clone(), true).expect("open");
        (vfs, spaces, d)
    }

    fn fp(no: u32, lsn: u64, initialized: bool) -> FlushPage {
        let id = PageId::new(SpaceId(1), PageNo(no));
        let mut image = AlignedBuf::zeroed(PS, ALIGN);
        init_header(&mut image, id, PageType::Raw);
        image[100] = no as u8;
        set_lsn(&mut image, Lsn(lsn));
        stamp(&mut image);
        FlushPage {
            id,
            lsn: Lsn(lsn),
            image,
            initialized,
        }
    }

    #[test]
    fn header_round_trips_and_rejects_damage() {
        let ps = PageSize::new(PS as u32).expect("size");
        let mut h = header_block(ps, 8, 128);
        assert_eq!(parse_header(&h), Some((PS as u32, 8, 128)));
        h[17] ^= 1;
        assert_eq!(parse_header(&h), None, "a damaged header is not trusted");
    }

    #[test]
    fn a_busy_slot_sends_the_next_batch_to_another_slot() {
        let (vfs, _spaces, d) = setup(2);
        let path = Path::new("/d").join(DBLWR_FILE);
        // Another flusher holds slot 0 for the whole of its batch.
        let (held, _g) = d.acquire_slot();
        assert_eq!(held, 0);
        d.write_batch(&[fp(3, 10, false)]).expect("write");
        let file = vfs.live_contents(&path).expect("file");
        let slot1 = (1 + 4) * PS;
        assert_eq!(
            as_copy(&file[slot1..slot1 + PS]),
            Some((PageId::new(SpaceId(1), PageNo(3)), Lsn(10)))
        );
        assert_eq!(d.stats().dblwr_writes, 1);
    }

    #[test]
    fn batch_is_one_dblwr_write_and_sync_then_combined_home_writes() {
        let (vfs, _spaces, d) = setup(2);
        vfs.reset_stats();
        // Pages 3, 4, 5 adjacent, 9 apart; 4 was (re)initialized and skips.
        let batch = [
            fp(5, 12, false),
            fp(3, 10, false),
            fp(4, 11, true),
            fp(9, 13, false),
        ];
        d.write_batch(&batch).expect("write");
        let st = vfs.stats();
        // 1 dblwr write + 2 home runs; 1 dblwr sync + 1 space sync.
        assert_eq!((st.writes, st.syncs), (3, 2), "{st:?}");
        let s = d.stats();
        assert_eq!(
            (s.dblwr_writes, s.dblwr_pages_written, s.pages_skipped),
            (1, 3, 1)
        );
        assert_eq!(s.data_writes, 3);
        assert_eq!(s.data_written, 7 * PS as u64);
    }
}
