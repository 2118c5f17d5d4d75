//! # Crash recovery: scan the redo once, replay file operations, apply pages in parallel
//!
//! The procedure and the correctness argument are in docs/recovery.md. In short:
//!
//! 1. The log gives back the complete frames after the newest checkpoint (a torn tail ends
//!    the log; it is not an error).
//! 2. Each frame's payload is parsed into records; page records are grouped by page.
//! 3. File records are replayed in LSN order (create a missing file, extend a short one,
//!    rename, delete).
//! 4. Pages are applied on several threads. A page whose redo contains a PAGE_INIT is rebuilt
//!    from the last PAGE_INIT on and never read (lesson 1); any other page is read, and only
//!    the mtrs whose end LSN is above its page LSN are applied.
//!
//! Invariants:
//! 1. A record is applied to a page only if the page does not already contain it: its mtr's
//!    end LSN is above the page LSN (or the page was rebuilt from a later PAGE_INIT).
//! 2. Records of one page are applied in LSN order by one thread.
//! 3. A page read for recovery passes its checksum; a corrupt page stops recovery with an
//!    error naming the file and the page ([`RecoveryError::Unrepairable`]).
//! 4. No redo is applied before every page with a usable doublewrite copy is restored and
//!    synced (docs/doublewrite.md): a page torn by a write in flight at the crash is whole
//!    again before recovery reads it.
//! 5. The log is synced up to the end of what recovery will apply before recovery changes
//!    the directory or writes a page (a page may be evicted during apply): after a process
//!    crash the log's tail may be in the OS page cache only, and a power loss during
//!    recovery must not keep a page change whose redo it loses (half a mini-transaction).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use quire_io::{OpenOptions, Vfs};

use crate::buffer::{BufferError, BufferPool};
use crate::doublewrite::Doublewrite;
use crate::log::{Log, LogConfig, LogError};
use crate::mtr::record::{self, Parser, Record, RecordError};
use crate::page::{Lsn, PageId, PageSize, PageType, SpaceId};
use crate::space::{Space, SpaceError, Spaces};

#[derive(Debug, thiserror::Error)]
pub enum RecoveryError {
    #[error(transparent)]
    Log(#[from] LogError),
    #[error("redo frame at LSN {lsn}: {err}")]
    Record { lsn: Lsn, err: RecordError },
    #[error("recovering page {page}: {err}")]
    Page { page: PageId, err: BufferError },
    #[error(
        "{}: page {page_no} (page {page}) is torn or corrupt ({what}), and neither a valid \
         doublewrite copy nor a PAGE_INIT in the redo can rebuild it (innodb_doublewrite=OFF \
         is unsafe without atomic page writes)",
        path.display()
    )]
    Unrepairable {
        path: PathBuf,
        page: PageId,
        page_no: crate::page::PageNo,
        what: crate::page::PageCorruption,
    },
    #[error("restoring pages from the doublewrite buffer: {0}")]
    Doublewrite(SpaceError),
    #[error("redo for page {page} at LSN {lsn}: {err}")]
    Apply {
        page: PageId,
        lsn: Lsn,
        err: RecordError,
    },
    #[error("redo changes space {space}, but no file holds it and no FILE_CREATE names one")]
    MissingSpace { space: SpaceId },
    #[error("space {space} is created again at LSN {lsn}: space ids are never reused")]
    ReusedSpace { space: SpaceId, lsn: Lsn },
    #[error(transparent)]
    Space(#[from] SpaceError),
    #[error(transparent)]
    Io(#[from] quire_io::IoError),
}

pub type Result<T> = std::result::Result<T, RecoveryError>;

/// What recovery did, for the log and for tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryStats {
    pub checkpoint_lsn: Lsn,
    pub end_lsn: Lsn,
    pub frames: u64,
    pub bytes: u64,
    pub file_ops: u64,
    /// Pages that had redo.
    pub pages: u64,
    /// Of those, pages rebuilt from a PAGE_INIT without reading them.
    pub pages_initialized: u64,
    /// Pages read from disk to apply redo.
    pub pages_read: u64,
    /// Mtrs applied to pages (summed over pages).
    pub mtrs_applied: u64,
    /// Pages restored from the doublewrite file before applying redo.
    pub pages_restored: u64,
    /// Pages that read-ahead brought into the pool before an applier asked for them
    /// (pages with no redo between two that have some included).
    pub pages_read_ahead: u64,
    /// The largest space id a file record names (spaces deleted since the checkpoint
    /// included): the engine's floor for new space ids when the dictionary header is new.
    pub max_space_id: Option<SpaceId>,
}

/// The spaces recovery knows about: id → path relative to the data directory.
pub type SpaceFiles = HashMap<SpaceId, PathBuf>;

/// The scan hands the log to the grouping threads in blocks of about this size; a block
/// goes back to the scan for reuse once every grouper is done with it.
const BLOCK_BYTES: usize = 8 << 20;

/// Blocks in flight per grouping thread, at most (plus two for the scan). The scan reads far
/// faster than grouping goes, and a block it could not reuse was a new allocation: with no
/// bound the whole log piled up in blocks waiting for the groupers, and memory first touched
/// is expensive (on the 2-core test machine, zeroing fresh pages was most of recovery's CPU:
/// docs/recovery.md, step 2). With the bound the scan waits for a block to come back.
const BLOCKS_PER_SHARD: usize = 2;

/// How long the scan waits for a block to come back before it allocates one anyway. Blocks
/// come back within a grouper's work on one block (milliseconds); one that stopped with an
/// error never sends its blocks back, and the scan must still finish so that the error is
/// reported.
const BLOCK_WAIT: std::time::Duration = std::time::Duration::from_millis(200);

/// Threads that read pages ahead of the appliers. Reads are what apply waits for; these
/// threads mostly sleep in `pread`, so they cost little CPU and give the device a queue.
const READ_AHEAD_THREADS: usize = 16;

/// The most pages one read-ahead request reads (1 MiB of 16 KiB pages).
const READ_AHEAD_SPAN: u32 = 64;

/// Pages with no redo between two that need reading, which a request reads anyway.
const READ_AHEAD_GAP: u32 = 4;

/// One mini-transaction in a [`Block`].
#[derive(Debug, Clone, Copy)]
struct MtrRef {
    start: Lsn,
    end: Lsn,
    /// Its payload is `bytes[off..off + len]` of its block.
    off: u32,
    len: u32,
}

/// Consecutive mini-transactions' payloads, in LSN order.
struct Block {
    bytes: Vec<u8>,
    mtrs: Vec<MtrRef>,
}

impl Block {
    fn new() -> Block {
        Block {
            bytes: Vec::with_capacity(BLOCK_BYTES),
            mtrs: Vec::new(),
        }
    }

    fn push(&mut self, start: Lsn, end: Lsn, payload: &[u8]) {
        // Frames are far smaller than 4 GiB (MAX_PAYLOAD_BYTES), and a block holds one
        // frame past BLOCK_BYTES at most.
        self.mtrs.push(MtrRef {
            start,
            end,
            off: self.bytes.len() as u32,
            len: payload.len() as u32,
        });
        self.bytes.extend_from_slice(payload);
    }

    fn payload(&self, m: usize) -> &[u8] {
        let r = self.mtrs[m];
        &self.bytes[r.off as usize..(r.off + r.len) as usize]
    }
}

/// The first chunk of a page's redo, in bytes, and the most a later chunk has (each chunk
/// doubles the one before it up to this): a page with a few records takes little memory, and
/// one with many takes few chunks.
const CHUNK_MIN: usize = 256;
const CHUNK_MAX: usize = 64 << 10;

/// The most bytes an entry's header takes: two varints, then the u32 length.
const ENTRY_HEADER_MAX: usize = 10 + 10 + 4;

/// One page's redo, in LSN order, copied together while grouping: apply then reads one
/// page's records from contiguous memory instead of gathering them from all over the log
/// (a cache and TLB miss per record, measured as most of the apply time).
///
/// The redo is kept in chunks that are never grown or moved once allocated. It was one
/// vector growing by doubling: every page's redo was copied about once more, and the
/// memory touched was about twice the redo's size, most of it fresh pages the kernel had
/// to zero, which on the 2-core test machine was most of recovery's CPU
/// (bench/results/recovery.md, "Memory first touched").
#[derive(Debug, Default)]
struct PageWork {
    /// The type of the last PAGE_INIT, if the redo has one: the page is rebuilt from it and
    /// never read, and the redo starts with that PAGE_INIT's mtr, just after the record.
    init: Option<PageType>,
    /// Entries, each within one chunk: a varint (the mtr's start LSN minus the previous
    /// entry's, wrapping; the first entry's against 0), a varint (end LSN minus start LSN,
    /// wrapping), the u32 length of what follows, then this page's records of that mtr, in
    /// order. A record may elide its page id (SAME_PAGE): every record here is this page's.
    /// One mtr's records for the page may be split over two entries with the same LSNs
    /// when a chunk fills; apply treats them as one mtr applied in two steps.
    chunks: Vec<Vec<u8>>,
    /// The start LSN of the mtr of the last entry, whose length `open_len_at` holds (in the
    /// last chunk).
    open_mtr: Option<Lsn>,
    open_len_at: usize,
    /// The start LSN of the last entry: the next entry's is stored as a difference from it.
    base: Lsn,
}

impl PageWork {
    /// The last chunk, with room for `need` more bytes: a new chunk if the last has less.
    fn room(&mut self, need: usize) -> &mut Vec<u8> {
        let full = self
            .chunks
            .last()
            .is_none_or(|c| c.capacity() - c.len() < need);
        if full {
            let size = self
                .chunks
                .last()
                .map_or(CHUNK_MIN, |c| (c.capacity() * 2).min(CHUNK_MAX));
            self.chunks.push(Vec::with_capacity(size.max(need)));
        }
        let last = self.chunks.len() - 1;
        &mut self.chunks[last]
    }

    /// Opens an entry for the mtr `[start, end)` with room for a first record of `len` bytes.
    fn open_entry(&mut self, start: Lsn, end: Lsn, len: usize) {
        let base = self.base;
        let c = self.room(ENTRY_HEADER_MAX + len);
        record::put_varint(c, start.0.wrapping_sub(base.0));
        record::put_varint(c, end.0.wrapping_sub(start.0));
        let at = c.len();
        c.extend_from_slice(&0u32.to_le_bytes());
        self.open_len_at = at;
        self.open_mtr = Some(start);
        self.base = start;
    }

    /// Adds a record of the mtr `[start, end)`.
    fn push(&mut self, start: Lsn, end: Lsn, record: &[u8]) {
        let fits = self.open_mtr == Some(start)
            && self
                .chunks
                .last()
                .is_some_and(|c| c.capacity() - c.len() >= record.len());
        if !fits {
            self.open_entry(start, end, record.len());
        }
        let at = self.open_len_at;
        // The open entry is in the last chunk, which has room for the record: no growth.
        let c = self.room(record.len());
        debug_assert!(c.len() >= at + 4);
        c.extend_from_slice(record);
        let len = (c.len() - at - 4) as u32;
        c[at..at + 4].copy_from_slice(&len.to_le_bytes());
    }

    /// A PAGE_INIT in the mtr `[start, end)`: what came before is overwritten (the first
    /// chunk's memory is kept).
    fn init(&mut self, page_type: PageType, start: Lsn, end: Lsn) {
        self.init = Some(page_type);
        self.chunks.truncate(1);
        if let Some(c) = self.chunks.first_mut() {
            c.clear();
        }
        self.base = Lsn::ZERO;
        self.open_entry(start, end, 0);
    }

    /// The entries, in order.
    fn entries(&self) -> Entries<'_> {
        Entries {
            chunks: &self.chunks,
            chunk: 0,
            pos: 0,
            base: Lsn::ZERO,
        }
    }
}

/// One entry of a [`PageWork`]: the mtr's LSNs, and its records for the page, which are
/// `chunk[from..]`.
struct Entry<'a> {
    start: Lsn,
    end: Lsn,
    chunk: &'a [u8],
    from: usize,
}

struct Entries<'a> {
    chunks: &'a [Vec<u8>],
    chunk: usize,
    pos: usize,
    base: Lsn,
}

/// A varint `PageWork` wrote in this process (whole and well formed), and the position
/// after it.
fn get_varint(b: &[u8], mut at: usize) -> (u64, usize) {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let byte = b[at];
        at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 || shift >= 63 {
            return (v, at);
        }
        shift += 7;
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = Entry<'a>;

    fn next(&mut self) -> Option<Entry<'a>> {
        loop {
            let c = self.chunks.get(self.chunk)?;
            if self.pos >= c.len() {
                self.chunk += 1;
                self.pos = 0;
                continue;
            }
            let (delta, at) = get_varint(c, self.pos);
            let (span, at) = get_varint(c, at);
            let mut len = [0u8; 4];
            len.copy_from_slice(&c[at..at + 4]);
            let from = at + 4;
            let to = from + u32::from_le_bytes(len) as usize;
            self.pos = to;
            let start = Lsn(self.base.0.wrapping_add(delta));
            self.base = start;
            return Some(Entry {
                start,
                end: Lsn(start.0.wrapping_add(span)),
                chunk: &c[..to],
                from,
            });
        }
    }
}

/// What one grouping thread found.
struct Shard {
    /// The pages of this shard, in no order.
    pages: Vec<(PageId, PageWork)>,
    /// Shard 0 only: the payloads of the mtrs that hold file records, in LSN order.
    file_mtrs: Vec<(Lsn, Vec<u8>)>,
    /// Page records of this shard.
    records: u64,
}

/// FxHash's mixing step: page ids are not adversarial, and SipHash was a measurable share
/// of grouping millions of records.
#[derive(Default)]
struct PageHasher(u64);

impl std::hash::Hasher for PageHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type PageMap<V> = HashMap<PageId, V, std::hash::BuildHasherDefault<PageHasher>>;

/// Which grouping thread owns `page` (a mix independent of the hash map's).
fn shard_of(page: PageId, shards: usize) -> usize {
    let key = (u64::from(page.space.0) << 32) | u64::from(page.page_no.0);
    ((key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) % shards as u64) as usize
}

/// A grouping thread: parses every block it is sent, in order, and copies the records of
/// the pages in its shard into their [`PageWork`]. Every shard parses everything (parsing
/// is cheap next to grouping), so each sees its pages' records in LSN order with no merge.
/// The last grouper done with a block sends it back to the scan on `recycle`.
fn group(
    rx: crossbeam::channel::Receiver<Arc<Block>>,
    recycle: crossbeam::channel::Sender<Block>,
    shard: usize,
    shards: usize,
    max: PageSize,
) -> Result<Shard> {
    let mut index: PageMap<u32> = PageMap::default();
    let mut pages: Vec<(PageId, PageWork)> = Vec::new();
    let mut file_mtrs = Vec::new();
    let mut records = 0u64;
    for block in rx {
        for (m, mtr) in block.mtrs.iter().enumerate() {
            let payload = block.payload(m);
            let mut p = Parser::new(payload, max);
            // The last page looked up in this mtr: records of one page are usually adjacent.
            let mut last: Option<(PageId, usize)> = None;
            loop {
                let at = p.position();
                let r = match p.next_record() {
                    Ok(Some(r)) => r,
                    Ok(None) => break,
                    Err(err) => {
                        return Err(RecoveryError::Record {
                            lsn: mtr.start,
                            err,
                        })
                    }
                };
                let Some(page) = r.page() else {
                    if shard == 0 && file_mtrs.last().map(|(l, _)| *l) != Some(mtr.start) {
                        file_mtrs.push((mtr.start, payload.to_vec()));
                    }
                    continue;
                };
                if shard_of(page, shards) != shard {
                    continue;
                }
                records += 1;
                let i = match last {
                    Some((lp, i)) if lp == page => i,
                    _ => {
                        let i = *index.entry(page).or_insert_with(|| {
                            pages.push((page, PageWork::default()));
                            (pages.len() - 1) as u32
                        }) as usize;
                        last = Some((page, i));
                        i
                    }
                };
                let w = &mut pages[i].1;
                match r {
                    Record::PageInit { page_type, .. } => w.init(page_type, mtr.start, mtr.end),
                    _ => w.push(mtr.start, mtr.end, &payload[at..p.position()]),
                }
            }
        }
        if let Some(mut b) = Arc::into_inner(block) {
            b.bytes.clear();
            b.mtrs.clear();
            // The scan may be done and gone: then the block is simply freed.
            let _ = recycle.send(b);
        }
    }
    Ok(Shard {
        pages,
        file_mtrs,
        records,
    })
}

/// Runs recovery on the data directory `dir`. `files` holds the spaces found on disk (id →
/// relative path) and `orphans` the space files whose page 0 does not name their space;
/// recovery adds the spaces FILE_CREATE names and the orphans a doublewrite copy of page 0
/// identifies (taking them out of `orphans`), opens them all into `spaces` and applies the
/// redo through `pool`. Returns the log, ready for appends.
#[allow(clippy::too_many_arguments)]
pub fn recover(
    vfs: &Arc<dyn Vfs>,
    dir: &Path,
    log_config: LogConfig,
    page_size: PageSize,
    files: &mut SpaceFiles,
    orphans: &mut Vec<PathBuf>,
    spaces: &Spaces,
    pool: &BufferPool,
    dblwr: Option<&Doublewrite>,
    threads: usize,
) -> Result<(Log, RecoveryStats)> {
    let started = Instant::now();
    let mut rec = Log::open_for_recovery(vfs.clone(), dir, log_config)?;
    let mut stats = RecoveryStats {
        checkpoint_lsn: rec.checkpoint_lsn(),
        ..RecoveryStats::default()
    };

    // 1 and 2. Scan on this thread; parse and group on `shards` others, while the scan goes
    // on. Payloads are copied once, into blocks that stay put until the end.
    let max = PageSize::new(PageSize::MAX).unwrap_or(page_size);
    let shards = threads.clamp(1, 64);
    let mut scan_done = started;
    let mut last_end = None;
    let (recycle_tx, recycle_rx) = crossbeam::channel::unbounded::<Block>();
    let (scanned, grouped) = std::thread::scope(|s| {
        let (senders, handles): (Vec<_>, Vec<_>) = (0..shards)
            .map(|shard| {
                let (tx, rx) = crossbeam::channel::unbounded::<Arc<Block>>();
                let recycle = recycle_tx.clone();
                (tx, s.spawn(move || group(rx, recycle, shard, shards, max)))
            })
            .unzip();
        let ship = |block: Block| {
            if block.mtrs.is_empty() {
                return;
            }
            let block = Arc::new(block);
            for tx in &senders {
                // A grouper that stopped has an error to report at join.
                let _ = tx.send(Arc::clone(&block));
            }
        };
        // A block the groupers are done with, or a new one while fewer than the bound
        // exist; past the bound, wait for one to come back.
        let mut blocks = 0usize;
        let mut fresh = || {
            if let Ok(b) = recycle_rx.try_recv() {
                return b;
            }
            if blocks < shards * BLOCKS_PER_SHARD + 2 {
                blocks += 1;
                return Block::new();
            }
            recycle_rx
                .recv_timeout(BLOCK_WAIT)
                .unwrap_or_else(|_| Block::new())
        };
        let scanned = (|| -> Result<()> {
            let mut cur = fresh();
            let mut next_report = 64u64 << 20;
            let capacity = rec.capacity();
            while let Some(f) = rec.next_ref() {
                let f = f?;
                stats.bytes += f.end.0 - f.start.0;
                stats.frames += 1;
                last_end = Some(f.end);
                if stats.bytes >= next_report {
                    // Where the log ends is known only when the scan gets there; the
                    // capacity bounds it.
                    tracing::info!(
                        "recovery: scanned {} MiB of redo ({:.0}% of the {} MiB log file)",
                        stats.bytes >> 20,
                        stats.bytes as f64 * 100.0 / capacity.max(1) as f64,
                        capacity >> 20
                    );
                    next_report += 64 << 20;
                }
                if !cur.mtrs.is_empty() && cur.bytes.len() + f.payload.len() > BLOCK_BYTES {
                    ship(std::mem::replace(&mut cur, fresh()));
                }
                cur.push(f.start, f.end, f.payload);
            }
            ship(cur);
            Ok(())
        })();
        scan_done = Instant::now();
        drop(senders);
        let grouped: Vec<Result<Shard>> = handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    quire_io::fatal::fatal("a recovery thread panicked");
                })
            })
            .collect();
        (scanned, grouped)
    });
    drop((recycle_tx, recycle_rx));
    scanned?;
    let shards: Vec<Shard> = grouped.into_iter().collect::<Result<_>>()?;
    let group_done = Instant::now();
    stats.end_lsn = last_end.unwrap_or(stats.checkpoint_lsn);
    // Invariant 5: what is applied is durable before anything is written because of it.
    if stats.frames > 0 {
        rec.sync_read_frames();
        let records: u64 = shards.iter().map(|s| s.records).sum();
        tracing::info!(
            "recovery: {:.1} MiB of redo ({} mini-transactions, {records} page records) from LSN {} to {}; scanned in {:.2} s, grouped by page on {} threads {:.2} s after the scan",
            stats.bytes as f64 / (1 << 20) as f64,
            stats.frames,
            stats.checkpoint_lsn,
            stats.end_lsn,
            (scan_done - started).as_secs_f64(),
            shards.len(),
            (group_done - scan_done).as_secs_f64(),
        );
    }
    // File records, in LSN order (shard 0 kept the mtrs that hold them).
    let mut file_mtrs: Vec<(Lsn, Vec<u8>)> = Vec::new();
    let mut pages: Vec<(PageId, PageWork)> = Vec::new();
    for shard in shards {
        if !shard.file_mtrs.is_empty() {
            file_mtrs = shard.file_mtrs;
        }
        pages.extend(shard.pages);
    }
    let mut file_ops: Vec<(Lsn, Record<'_>)> = Vec::new();
    for (lsn, payload) in &file_mtrs {
        let mut p = Parser::new(payload, max);
        while let Some(r) = p
            .next_record()
            .map_err(|err| RecoveryError::Record { lsn: *lsn, err })?
        {
            if r.page().is_none() {
                file_ops.push((*lsn, r));
            }
        }
    }

    // 3. File operations. Replaying them one by one against whatever the directory shows
    // would be wrong (re-creating a file that was created and then renamed leaves two), so
    // first work out each space's history, then make the directory match its final state.
    #[derive(Default)]
    struct History<'r> {
        /// Every name the space had in the log, in order (the FILE_CREATE path first).
        names: Vec<&'r str>,
        /// (initial pages) if the log holds its creation.
        created: Option<u32>,
        deleted: bool,
    }
    let mut history: HashMap<SpaceId, History<'_>> = HashMap::new();
    let mut deleted_at: HashMap<SpaceId, Lsn> = HashMap::new();
    let mut extend_to: HashMap<SpaceId, u32> = HashMap::new();
    for (lsn, r) in &file_ops {
        stats.file_ops += 1;
        if let Some(space) = r.file_space() {
            stats.max_space_id = stats.max_space_id.max(Some(space));
        }
        match *r {
            Record::FileCreate {
                space,
                initial_pages,
                path,
                ..
            } => {
                let h = history.entry(space).or_default();
                if h.deleted || h.created.is_some() {
                    return Err(RecoveryError::ReusedSpace { space, lsn: *lsn });
                }
                h.created = Some(initial_pages);
                h.names.push(path);
                // The file may exist with its allocation lost (fallocate is not synced).
                let e = extend_to.entry(space).or_insert(0);
                *e = (*e).max(initial_pages);
            }
            Record::FileExtend { space, size_pages } => {
                let e = extend_to.entry(space).or_insert(0);
                *e = (*e).max(size_pages);
            }
            Record::FileRename { space, from, to } => {
                let h = history.entry(space).or_default();
                if h.names.last() != Some(&from) {
                    h.names.push(from);
                }
                h.names.push(to);
            }
            Record::FileDelete { space, path } => {
                let h = history.entry(space).or_default();
                if h.names.last() != Some(&path) {
                    h.names.push(path);
                }
                h.deleted = true;
                deleted_at.insert(space, *lsn);
            }
            _ => {}
        }
    }
    // Space files whose page 0 is too damaged to name their space (garbage over its
    // first sector, from a write in flight at the crash). A file the log names is that
    // space's file, and is left to the file step below: only the others are matched to a
    // doublewrite copy of page 0, and only to a copy of a space that neither a file nor the
    // log accounts for. Done here, once the log's names are known, and not before: a page 0
    // whose first write skipped the doublewrite (PAGE_INIT in the FILE_CREATE mtr) has no
    // copy, and matching its file to another space's copy made the file step find its name
    // taken and create it again ("file exists"; docs/recovery.md, step 4).
    if let Some(d) = dblwr {
        let in_log = InLog {
            spaces: history.keys().copied().collect(),
            names: history
                .values()
                .flat_map(|h| h.names.iter().map(PathBuf::from))
                .collect(),
        };
        identify_by_doublewrite(
            vfs.as_ref(),
            dir,
            page_size,
            d,
            stats.checkpoint_lsn,
            &in_log,
            files,
            orphans,
        );
    }

    // A name may be reused by another space (dropped `a`, then a new `a`): never touch a file
    // under a name that another live space ends up with, or that page 0 identifies as another
    // space's.
    let mut final_names: HashMap<PathBuf, SpaceId> = files
        .iter()
        .filter(|(id, _)| {
            !history
                .get(id)
                .is_some_and(|h| h.deleted || !h.names.is_empty())
        })
        .map(|(id, p)| (p.clone(), *id))
        .collect();
    for (id, h) in &history {
        if let (false, Some(last)) = (h.deleted, h.names.last()) {
            final_names.insert(PathBuf::from(last), *id);
        }
    }
    let discovered = files.clone();
    let others = |name: &str, me: SpaceId| {
        final_names.get(Path::new(name)).is_some_and(|id| *id != me)
            || discovered
                .iter()
                .any(|(id, p)| *id != me && p.as_path() == Path::new(name))
    };
    let mut dir_changed = false;
    // Deleted spaces first: a dropped space's file may still hold the name a live space
    // ends up with (ALTER's rebuild: the old `d.a` deleted, `d.a~alter` renamed to `d.a`,
    // and only the old file's directory entry durable at the crash).
    let mut ids: Vec<SpaceId> = history.keys().copied().collect();
    ids.sort_by_key(|id| (!history[id].deleted, *id));
    for space in ids {
        let h = &history[&space];
        // A file whose page 0 names this space is its own, whatever name it is under.
        let mine = |name: &str| {
            discovered
                .get(&space)
                .is_some_and(|p| p.as_path() == Path::new(name))
        };
        let mut existing = Vec::new();
        for name in &h.names {
            if !existing.contains(name)
                && (mine(name) || !others(name, space))
                && vfs.exists(&dir.join(name))?
            {
                existing.push(*name);
            }
        }
        if h.deleted {
            for name in existing {
                vfs.delete(&dir.join(name))?;
                dir_changed = true;
            }
            files.remove(&space);
            continue;
        }
        let Some(&last) = h.names.last() else {
            continue;
        };
        if !existing.contains(&last) {
            // The latest name is missing: the file is under an earlier name (a rename whose
            // directory change was lost), or was never durably created.
            match existing.last() {
                Some(&older) => vfs.rename(&dir.join(older), &dir.join(last))?,
                None => match h.created {
                    Some(pages) => {
                        Space::create(vfs.as_ref(), &dir.join(last), space, page_size, pages)?;
                    }
                    None => return Err(RecoveryError::MissingSpace { space }),
                },
            }
            dir_changed = true;
        }
        // Any other name still present is a copy the log says was renamed away.
        for name in existing.iter().filter(|n| **n != last) {
            if vfs.exists(&dir.join(name))? {
                vfs.delete(&dir.join(name))?;
                dir_changed = true;
            }
        }
        files.retain(|id, p| *id == space || p.as_path() != Path::new(last));
        files.insert(space, PathBuf::from(last));
    }
    if dir_changed {
        vfs.sync_dir(dir)?;
    }
    // Page records of a space deleted later in the log have nothing left to change.
    pages.retain(|(id, _)| !deleted_at.contains_key(&id.space));

    // Open every known space; extend the ones the log says are longer.
    for (id, rel) in files.iter() {
        if spaces.get(*id).is_ok() {
            continue;
        }
        let sp = Space::open(vfs.as_ref(), &dir.join(rel), *id, page_size)?;
        if let Some(&n) = extend_to.get(id) {
            if sp.size_pages() < n {
                sp.extend_to_include(crate::page::PageNo(n - 1))?;
            }
        }
        spaces.insert(Arc::new(sp));
    }
    for (id, _) in &pages {
        if spaces.get(id.space).is_err() {
            return Err(RecoveryError::MissingSpace { space: id.space });
        }
    }

    let files_done = Instant::now();
    // Invariant 4: torn pages are whole again before anything reads them.
    if let Some(d) = dblwr {
        stats.pages_restored = d
            .restore(stats.checkpoint_lsn)
            .map_err(RecoveryError::Doublewrite)?;
    }

    let dblwr_done = Instant::now();

    // 4. Apply, in parallel, in page order; reader threads fetch the pages that must be read
    // ahead of the appliers, so the device sees many reads at once.
    stats.pages = pages.len() as u64;
    pages.sort_unstable_by_key(|(id, _)| *id);
    let total = pages.len();
    let threads = threads.clamp(1, 64).min(total.max(1));
    let to_read = pages.iter().filter(|(_, w)| w.init.is_none()).count();
    // Read-ahead stays this many pages ahead of the appliers at most, and has no more than
    // this many frames pinned at once, so that a small pool neither runs out of frames nor
    // evicts what it has just read before it is used.
    let window = (pool.frames() / 4).clamp(16, 4096);
    let span_max = (window as u32 / 4).clamp(1, READ_AHEAD_SPAN);
    let spans = read_spans(&pages, span_max);
    let readers = if to_read > threads {
        READ_AHEAD_THREADS
            .min(window / span_max as usize)
            .min(spans.len())
    } else {
        0
    };
    let next = AtomicUsize::new(0);
    let ahead = AtomicUsize::new(0);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let done = AtomicU64::new(0);
    let initialized = AtomicU64::new(0);
    let read = AtomicU64::new(0);
    let read_ahead = AtomicU64::new(0);
    let applied = AtomicU64::new(0);
    let report_every = (total as u64 / 10).max(10_000);
    if total > 0 {
        tracing::info!(
            "recovery: {total} pages to recover ({to_read} to read, in {} requests), on {threads} threads, {readers} reading ahead",
            spans.len()
        );
    }
    let pages = &pages;
    let results: Vec<Result<()>> = std::thread::scope(|s| {
        for _ in 0..readers {
            let (next, ahead, stop, read_ahead) = (&next, &ahead, &stop, &read_ahead);
            let spans = &spans;
            s.spawn(move || loop {
                let Some(span) = spans.get(ahead.fetch_add(1, Ordering::Relaxed)) else {
                    return;
                };
                while span.at >= next.load(Ordering::Relaxed) + window {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                // An error here is met again, and reported, by the applier.
                if let Ok(n) = pool.read_ahead(span.space, span.first, span.pages) {
                    read_ahead.fetch_add(n as u64, Ordering::Relaxed);
                }
            });
        }
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (next, stop, done, initialized, read, applied) =
                    (&next, &stop, &done, &initialized, &read, &applied);
                s.spawn(move || -> Result<()> {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some((id, work)) = pages.get(i) else {
                            return Ok(());
                        };
                        let (init, n) = match apply_page(pool, max, *id, work) {
                            Ok(r) => r,
                            Err(e) => {
                                stop.store(true, Ordering::Relaxed);
                                return Err(e);
                            }
                        };
                        if init {
                            initialized.fetch_add(1, Ordering::Relaxed);
                        } else {
                            read.fetch_add(1, Ordering::Relaxed);
                        }
                        applied.fetch_add(n, Ordering::Relaxed);
                        let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                        if d % report_every == 0 {
                            tracing::info!(
                                "recovery: applied redo to {}% of {total} pages",
                                d * 100 / (total as u64).max(1)
                            );
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    quire_io::fatal::fatal("a recovery thread panicked");
                })
            })
            .collect()
    });
    for r in results {
        r?;
    }
    stats.pages_initialized = initialized.into_inner();
    stats.pages_read = read.into_inner();
    stats.mtrs_applied = applied.into_inner();
    stats.pages_read_ahead = read_ahead.into_inner();
    let apply_done = Instant::now();
    drop(file_ops);

    let log = rec.into_log()?;
    if stats.frames > 0 {
        let secs = |a: Instant, b: Instant| (b - a).as_secs_f64();
        tracing::info!(
            "recovery: done in {:.2} s: {} pages ({} rebuilt without reading, {} read, {} of them read ahead), {} file operations, {} pages restored from the doublewrite buffer; phases: scan {:.2} s, grouping after the scan {:.2} s, file operations {:.2} s, doublewrite {:.2} s, apply {:.2} s, reopening the log {:.2} s",
            started.elapsed().as_secs_f64(),
            stats.pages,
            stats.pages_initialized,
            stats.pages_read,
            stats.pages_read_ahead,
            stats.file_ops,
            stats.pages_restored,
            secs(started, scan_done),
            secs(scan_done, group_done),
            secs(group_done, files_done),
            secs(files_done, dblwr_done),
            secs(dblwr_done, apply_done),
            apply_done.elapsed().as_secs_f64(),
        );
    }
    Ok((log, stats))
}

/// Adjacent pages that read-ahead fetches with one request.
struct Span {
    /// The index in the sorted page list of the span's first page.
    at: usize,
    space: SpaceId,
    first: crate::page::PageNo,
    pages: u32,
}

/// The spaces the redo log's file records mention, and every file name they give them.
struct InLog {
    spaces: HashSet<SpaceId>,
    names: HashSet<PathBuf>,
}

/// Matches space files whose page 0 is too damaged to name their space (garbage in its first
/// sector, left by a write in flight at the crash) to a valid page-0 copy in the doublewrite
/// file, by elimination: only files the redo log does not name, and only copies (with an LSN
/// of at least the checkpoint, the ones restore uses) of spaces that no file on disk claims
/// and that the log does not mention (`in_log`).
/// Of those, the copy with the most 512-byte sectors equal to the file's page 0 wins (sectors
/// of zeros, which every page 0 has, do not count); a tie is not guessed, and a copy names at
/// most one file. An unmatched file stays an orphan (`Engine::open` then reports it as
/// damaged or removes it if it was never written). Recovery's restore then repairs page 0
/// from the copy.
#[allow(clippy::too_many_arguments)]
fn identify_by_doublewrite(
    vfs: &dyn Vfs,
    dir: &Path,
    page_size: PageSize,
    dblwr: &Doublewrite,
    checkpoint: Lsn,
    in_log: &InLog,
    files: &mut SpaceFiles,
    orphans: &mut Vec<PathBuf>,
) {
    const SECTOR: usize = 512;
    let mut copies: Vec<(SpaceId, Vec<u8>)> = dblwr
        .page0_copies(checkpoint)
        .into_iter()
        .filter(|(s, _)| !files.contains_key(s) && !in_log.spaces.contains(s))
        .collect();
    let ro = OpenOptions {
        read_only: true,
        ..OpenOptions::existing()
    };
    let mut i = 0;
    while i < orphans.len() && !copies.is_empty() {
        if in_log.names.contains(&orphans[i]) {
            // The log names this file: the file step knows whose it is.
            i += 1;
            continue;
        }
        let path = dir.join(&orphans[i]);
        let mut page0 = vec![0u8; page_size.bytes()];
        let read = vfs
            .open(&path, ro)
            .and_then(|f| f.read_exact_at(&mut page0, 0));
        let mut best: Option<(usize, usize)> = None;
        let mut tie = false;
        if read.is_ok() {
            for (c, (_, img)) in copies.iter().enumerate() {
                let same = page0
                    .chunks(SECTOR)
                    .zip(img.chunks(SECTOR))
                    .filter(|(a, b)| a == b && a.iter().any(|&x| x != 0))
                    .count();
                match best {
                    Some((n, _)) if n > same => {}
                    Some((n, _)) if n == same => tie = true,
                    _ => {
                        best = Some((same, c));
                        tie = false;
                    }
                }
            }
        }
        match best {
            Some((_, c)) if !tie => {
                let (space, _) = copies.remove(c);
                tracing::warn!(
                    file = %path.display(),
                    "page 0 does not name its space; the doublewrite buffer's copy of page 0 \
                     of space {space} matches it best"
                );
                files.insert(space, orphans.remove(i));
            }
            _ => i += 1,
        }
    }
}

/// Groups the pages to read (sorted by id) into requests of at most `span_max` pages,
/// reading through gaps of up to [`READ_AHEAD_GAP`] pages: one larger read costs less than
/// two.
fn read_spans(pages: &[(PageId, PageWork)], span_max: u32) -> Vec<Span> {
    let mut spans: Vec<Span> = Vec::new();
    for (i, (id, w)) in pages.iter().enumerate() {
        if w.init.is_some() {
            continue;
        }
        let p = id.page_no.0;
        match spans.last_mut() {
            Some(sp)
                if sp.space == id.space
                    && p >= sp.first.0 + sp.pages
                    && p - (sp.first.0 + sp.pages) <= READ_AHEAD_GAP
                    && p - sp.first.0 < span_max =>
            {
                sp.pages = p - sp.first.0 + 1;
            }
            _ => spans.push(Span {
                at: i,
                space: id.space,
                first: id.page_no,
                pages: 1,
            }),
        }
    }
    spans
}

/// Applies the records of one mtr to the page, from the parser's position to its end.
fn apply_records(p: &mut Parser<'_>, page: &mut [u8]) -> std::result::Result<(), RecordError> {
    while let Some(r) = p.next_record()? {
        record::apply(&r, page)?;
    }
    Ok(())
}

/// Applies one page's redo; returns whether it was rebuilt from a PAGE_INIT, and how many
/// mtrs were applied.
fn apply_page(
    pool: &BufferPool,
    max: PageSize,
    id: PageId,
    work: &PageWork,
) -> Result<(bool, u64)> {
    let page_err = |err| RecoveryError::Page { page: id, err };
    let mut g = match work.init {
        // Rebuilt from redo alone: never read (lesson 1).
        Some(page_type) => pool.create(id, page_type).map_err(page_err)?,
        None => match pool.get_exclusive(id) {
            Ok(g) => g,
            Err(BufferError::Space(SpaceError::Corrupt {
                path,
                page_no,
                what,
            })) => {
                return Err(RecoveryError::Unrepairable {
                    path,
                    page: id,
                    page_no,
                    what,
                })
            }
            Err(e) => return Err(page_err(e)),
        },
    };
    let rebuilt = work.init.is_some();
    let page_lsn = g.lsn();
    let mut first: Option<Lsn> = None;
    let mut last = Lsn::ZERO;
    let mut n = 0u64;
    for Entry {
        start,
        end,
        chunk,
        from,
    } in work.entries()
    {
        if !rebuilt && end <= page_lsn {
            continue; // invariant 1: already on the page
        }
        let apply_err = |err| RecoveryError::Apply {
            page: id,
            lsn: start,
            err,
        };
        let mut p = Parser::resume(chunk, max, from, id);
        if let Err(err) = apply_records(&mut p, &mut g) {
            // Redo damaged behind its checksum: recovery fails, and a page it was rebuilding
            // from a PAGE_INIT stays an unlogged, clean frame that is never written (found
            // by tests/redo_damaged_behind_its_checksum_is_an_error.rs).
            g.forget_creation();
            return Err(apply_err(err));
        }
        // An mtr split over two entries (a chunk filled) counts once.
        if first.is_none() || end != last {
            n += 1;
        }
        first.get_or_insert(start);
        last = end;
    }
    if let Some(start) = first {
        g.mark_dirty(start.max(page_lsn), last);
    }
    tracing::trace!(target: "quire::trace", "recovery apply {id}: rebuilt {rebuilt}, page LSN {page_lsn}, {n} mtrs, first {first:?}, last {last}");
    Ok((rebuilt, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::PageNo;

    fn page(space: u32, no: u32, init: bool) -> (PageId, PageWork) {
        let w = PageWork {
            init: init.then_some(PageType::Raw),
            ..PageWork::default()
        };
        (PageId::new(SpaceId(space), PageNo(no)), w)
    }

    #[test]
    fn read_requests_cover_small_gaps_skip_rebuilt_pages_and_respect_the_limit() {
        let pages = [
            page(1, 1, false),
            page(1, 2, false),
            page(1, 4, false),  // one page of gap: same request
            page(1, 10, false), // five pages of gap: a new one
            page(1, 11, true),  // rebuilt, never read
            page(1, 12, false),
            page(2, 13, false), // another space
        ];
        let got: Vec<(usize, u32, u32, u32)> = read_spans(&pages, 64)
            .iter()
            .map(|s| (s.at, s.space.0, s.first.0, s.pages))
            .collect();
        assert_eq!(got, [(0, 1, 1, 4), (3, 1, 10, 3), (6, 2, 13, 1)]);
        let got: Vec<(u32, u32)> = read_spans(&pages, 2)
            .iter()
            .map(|s| (s.first.0, s.pages))
            .collect();
        assert_eq!(got, [(1, 2), (4, 1), (10, 1), (12, 1), (13, 1)]);
    }

    #[test]
    fn page_redo_keeps_one_entry_per_mtr_and_restarts_at_a_page_init() {
        let lsns = |w: &PageWork| -> Vec<(u64, u64, Vec<u8>)> {
            w.entries()
                .map(|e| (e.start.0, e.end.0, e.chunk[e.from..].to_vec()))
                .collect()
        };
        let mut w = PageWork::default();
        w.push(Lsn(10), Lsn(20), b"ab");
        w.push(Lsn(10), Lsn(20), b"c");
        w.push(Lsn(20), Lsn(30), b"d");
        assert_eq!(
            lsns(&w),
            [(10, 20, b"abc".to_vec()), (20, 30, b"d".to_vec())]
        );
        w.init(PageType::Raw, Lsn(30), Lsn(40));
        w.push(Lsn(30), Lsn(40), b"e");
        assert_eq!(w.init, Some(PageType::Raw));
        assert_eq!(lsns(&w), [(30, 40, b"e".to_vec())]);
        assert_eq!(w.chunks.len(), 1);
    }

    #[test]
    fn page_redo_fills_chunks_without_moving_them_and_splits_an_mtr_that_does_not_fit() {
        let mut w = PageWork::default();
        let record = [7u8; 100];
        let mut want = Vec::new();
        // LSNs far apart (long varints) and an mtr of many records, across many chunks.
        for m in 0..2_000u64 {
            let start = Lsn((1 << 40) + m * 1_000_003);
            let end = Lsn(start.0 + 900);
            for _ in 0..(1 + m % 7) {
                w.push(start, end, &record);
            }
            want.push((start.0, end.0, 100 * (1 + m % 7) as usize));
        }
        assert!(w.chunks.len() > 4, "{} chunks", w.chunks.len());
        // Some mtr was split where a chunk filled up (else this tests nothing of it).
        assert!(w.entries().count() > want.len());
        for c in &w.chunks {
            assert!(c.capacity() <= CHUNK_MAX.max(ENTRY_HEADER_MAX + record.len()));
        }
        // Entries of one mtr merged back: the same LSNs and all its bytes, in order.
        let mut got: Vec<(u64, u64, usize)> = Vec::new();
        for e in w.entries() {
            assert!(e.chunk[e.from..].iter().all(|&b| b == 7));
            match got.last_mut() {
                Some(last) if last.0 == e.start.0 => {
                    assert_eq!(last.1, e.end.0);
                    last.2 += e.chunk.len() - e.from;
                }
                _ => got.push((e.start.0, e.end.0, e.chunk.len() - e.from)),
            }
        }
        assert_eq!(got, want);
        // A record larger than a chunk gets a chunk of its own size.
        let big = vec![1u8; CHUNK_MAX * 2];
        w.push(Lsn(1 << 50), Lsn((1 << 50) + 10), &big);
        let e = w
            .entries()
            .last()
            .map(|e| (e.start, e.chunk.len() - e.from));
        assert_eq!(e, Some((Lsn(1 << 50), big.len())));
    }
}
