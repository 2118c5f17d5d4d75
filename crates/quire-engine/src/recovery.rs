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

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use quire_io::Vfs;

use crate::buffer::{BufferError, BufferPool};
use crate::doublewrite::Doublewrite;
use crate::log::{Frame, Log, LogConfig, LogError};
use crate::mtr::record::{self, Parser, Record, RecordError};
use crate::page::{Lsn, PageId, PageSize, SpaceId};
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
    /// The largest space id a file record names (spaces deleted since the checkpoint
    /// included): the engine's floor for new space ids when the dictionary header is new.
    pub max_space_id: Option<SpaceId>,
}

/// The spaces recovery knows about: id → path relative to the data directory.
pub type SpaceFiles = HashMap<SpaceId, PathBuf>;

/// One mtr's records for one page.
struct PageRedo<'f> {
    start: Lsn,
    end: Lsn,
    records: Vec<Record<'f>>,
}

/// Runs recovery on the data directory `dir`. `files` holds the spaces found on disk (id →
/// relative path); recovery adds the ones FILE_CREATE names, opens them all into `spaces`
/// and applies the redo through `pool`. Returns the log, ready for appends.
#[allow(clippy::too_many_arguments)]
pub fn recover(
    vfs: &Arc<dyn Vfs>,
    dir: &Path,
    log_config: LogConfig,
    page_size: PageSize,
    files: &mut SpaceFiles,
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

    // 1. Scan.
    let mut frames: Vec<Frame> = Vec::new();
    let mut next_report = 64u64 << 20;
    while let Some(f) = rec.next() {
        let f = f?;
        stats.bytes += f.end.0 - f.start.0;
        if stats.bytes >= next_report {
            // Where the log ends is known only when the scan gets there; the capacity bounds it.
            tracing::info!(
                "recovery: scanned {} MiB of redo ({:.0}% of the {} MiB log file)",
                stats.bytes >> 20,
                stats.bytes as f64 * 100.0 / rec.capacity().max(1) as f64,
                rec.capacity() >> 20
            );
            next_report += 64 << 20;
        }
        frames.push(f);
    }
    stats.frames = frames.len() as u64;
    stats.end_lsn = frames.last().map(|f| f.end).unwrap_or(stats.checkpoint_lsn);
    // Invariant 5: what is applied is durable before anything is written because of it.
    if !frames.is_empty() {
        rec.sync_read_frames();
    }
    if !frames.is_empty() {
        tracing::info!(
            "recovery: {:.1} MiB of redo ({} mini-transactions) from LSN {} to {}",
            stats.bytes as f64 / (1 << 20) as f64,
            stats.frames,
            stats.checkpoint_lsn,
            stats.end_lsn
        );
    }

    // 2. Parse; group page records; collect file records in order. Records are parsed with
    // the largest page size; `apply` checks the real page's bounds again.
    let mut by_page: HashMap<PageId, Vec<PageRedo<'_>>> = HashMap::new();
    let mut file_ops: Vec<(Lsn, Record<'_>)> = Vec::new();
    let max = PageSize::new(PageSize::MAX).unwrap_or(page_size);
    for f in &frames {
        let mut p = Parser::new(&f.payload, max);
        loop {
            let r = match p.next_record() {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(err) => return Err(RecoveryError::Record { lsn: f.start, err }),
            };
            match r.page() {
                Some(page) => {
                    let list = by_page.entry(page).or_default();
                    match list.last_mut() {
                        Some(last) if last.start == f.start => last.records.push(r),
                        _ => list.push(PageRedo {
                            start: f.start,
                            end: f.end,
                            records: vec![r],
                        }),
                    }
                }
                None => file_ops.push((f.start, r)),
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
    let mut ids: Vec<SpaceId> = history.keys().copied().collect();
    ids.sort();
    for space in ids {
        let h = &history[&space];
        let mut existing = Vec::new();
        for name in &h.names {
            if !existing.contains(name) && !others(name, space) && vfs.exists(&dir.join(name))? {
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
    by_page.retain(|id, _| !deleted_at.contains_key(&id.space));

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
    for id in by_page.keys() {
        if spaces.get(id.space).is_err() {
            return Err(RecoveryError::MissingSpace { space: id.space });
        }
    }

    // Invariant 4: torn pages are whole again before anything reads them.
    if let Some(d) = dblwr {
        stats.pages_restored = d
            .restore(stats.checkpoint_lsn)
            .map_err(RecoveryError::Doublewrite)?;
    }

    // 4. Apply, in parallel.
    stats.pages = by_page.len() as u64;
    let mut work: Vec<(PageId, Vec<PageRedo<'_>>)> = by_page.into_iter().collect();
    work.sort_by_key(|(id, _)| *id);
    let threads = threads.clamp(1, 64).min(work.len().max(1));
    let done = AtomicU64::new(0);
    let initialized = AtomicU64::new(0);
    let read = AtomicU64::new(0);
    let applied = AtomicU64::new(0);
    let total = work.len() as u64;
    let report_every = (total / 10).max(10_000);
    if total > 0 {
        tracing::info!("recovery: {total} pages to recover, on {threads} threads");
    }
    let chunks: Vec<&[(PageId, Vec<PageRedo<'_>>)]> =
        work.chunks(work.len().div_ceil(threads).max(1)).collect();
    let results: Vec<Result<()>> = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                let (done, initialized, read, applied) = (&done, &initialized, &read, &applied);
                s.spawn(move || -> Result<()> {
                    for (id, redo) in chunk.iter() {
                        let (init, n) = apply_page(pool, *id, redo)?;
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
                                d * 100 / total.max(1)
                            );
                        }
                    }
                    Ok(())
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
    drop(work);
    drop(file_ops);
    drop(frames);

    let log = rec.into_log()?;
    if stats.frames > 0 {
        tracing::info!(
            "recovery: done in {:.2} s: {} pages ({} rebuilt without reading, {} read), {} file operations, {} pages restored from the doublewrite buffer",
            started.elapsed().as_secs_f64(),
            stats.pages,
            stats.pages_initialized,
            stats.pages_read,
            stats.file_ops,
            stats.pages_restored
        );
    }
    Ok((log, stats))
}

/// Applies one page's redo; returns whether it was rebuilt from a PAGE_INIT, and how many
/// mtrs were applied.
fn apply_page(pool: &BufferPool, id: PageId, redo: &[PageRedo<'_>]) -> Result<(bool, u64)> {
    let page_err = |err| RecoveryError::Page { page: id, err };
    // The last mtr with a PAGE_INIT, and the position of its last PAGE_INIT.
    let init = redo.iter().enumerate().rev().find_map(|(i, m)| {
        m.records
            .iter()
            .rposition(|r| matches!(r, Record::PageInit { .. }))
            .map(|j| (i, j))
    });
    let (mut g, from, rebuilt) = match init {
        Some((i, j)) => {
            let Record::PageInit { page_type, .. } = redo[i].records[j] else {
                unreachable!("found by rposition above")
            };
            // Rebuilt from redo alone: never read (lesson 1).
            let g = pool.create(id, page_type).map_err(page_err)?;
            (g, Some((i, j)), true)
        }
        None => match pool.get_exclusive(id) {
            Ok(g) => (g, None, false),
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
    let page_lsn = g.lsn();
    let mut first: Option<Lsn> = None;
    let mut last = Lsn::ZERO;
    let mut n = 0u64;
    let start_mtr = from.map(|(i, _)| i).unwrap_or(0);
    for (i, m) in redo.iter().enumerate().skip(start_mtr) {
        let skip_records = match from {
            Some((fi, fj)) if fi == i => fj + 1, // the PAGE_INIT itself was done by create
            _ => 0,
        };
        if from.is_none() && m.end <= page_lsn {
            continue; // invariant 1: already on the page
        }
        for r in &m.records[skip_records..] {
            record::apply(r, &mut g).map_err(|err| RecoveryError::Apply {
                page: id,
                lsn: m.start,
                err,
            })?;
        }
        first.get_or_insert(m.start);
        last = m.end;
        n += 1;
    }
    if let Some(start) = first {
        g.mark_dirty(start.max(page_lsn), last);
    }
    Ok((rebuilt, n))
}
