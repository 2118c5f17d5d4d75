//! # The batch write path
//!
//! The pool hands every batch of dirty pages to a [`PageWriter`]. The default,
//! [`SpaceWriter`], writes them straight to their home locations. The doublewrite layer
//! (`crate::doublewrite`, above this one) replaces it with one that first writes the pages
//! recovery would need to read to the doublewrite file in one sequential write and one sync
//! (lesson 1, MDEV-16526), then writes the batch home the same way.
//!
//! Invariants:
//! 1. Every image handed to a writer is stamped (valid checksum) and its LSN is durable in the
//!    log (the pool calls [`super::WalGate::flush_up_to`] first).
//! 2. When `write_batch` returns `Ok`, every page of the batch is durable at its home
//!    location: each touched space was synced after its last write.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use quire_io::AlignedBuf;

use crate::page::{Lsn, PageId, PageNo};
use crate::space::{SpaceError, Spaces};

/// One page on its way to disk: a private, stamped copy, so the frame's latch is not held
/// during the I/O.
#[derive(Debug)]
pub struct FlushPage {
    pub id: PageId,
    /// The page LSN of the copy: the log must be durable up to here before the write.
    pub lsn: Lsn,
    pub image: AlignedBuf,
    /// The page's first change since its last write was a PAGE_INIT, logged (frame invariant
    /// 6): recovery rebuilds it from redo without reading it, so it may skip the doublewrite
    /// buffer (lesson 1). Writers that do not care ignore it.
    pub initialized: bool,
}

/// Writes batches of stamped pages durably (invariant 2).
pub trait PageWriter: Send + Sync {
    fn write_batch(&self, pages: &[FlushPage]) -> Result<(), SpaceError>;
}

/// The default writer: groups the batch by space, sorts by page number, writes each run of
/// adjacent pages with one vectored write (pwritev), then syncs each touched space once.
#[derive(Debug)]
pub struct SpaceWriter {
    spaces: Arc<Spaces>,
    writes: AtomicU64,
    syncs: AtomicU64,
}

impl SpaceWriter {
    pub fn new(spaces: Arc<Spaces>) -> SpaceWriter {
        SpaceWriter {
            spaces,
            writes: AtomicU64::new(0),
            syncs: AtomicU64::new(0),
        }
    }
    /// Write system calls issued (`Innodb_data_writes` counts these).
    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::Relaxed)
    }
    pub fn syncs(&self) -> u64 {
        self.syncs.load(Ordering::Relaxed)
    }
}

/// Splits `sorted` (by PageId) into runs of adjacent pages of one space.
pub fn adjacent_runs<'a>(sorted: &[&'a FlushPage]) -> Vec<Vec<&'a FlushPage>> {
    let mut runs: Vec<Vec<&FlushPage>> = Vec::new();
    for &p in sorted {
        match runs.last_mut() {
            Some(run)
                if run.last().is_some_and(|q| {
                    q.id.space == p.id.space
                        && q.id.page_no.0.checked_add(1) == Some(p.id.page_no.0)
                }) =>
            {
                run.push(p)
            }
            _ => runs.push(vec![p]),
        }
    }
    runs
}

/// Writes pages (sorted by id) to their home locations: one `pwritev` per run of adjacent
/// pages, then one sync per space. Calls `on_write(pages)` after each write and `on_sync()`
/// after each sync. Shared by the plain writer and the doublewrite layer's home writes.
pub fn write_home(
    spaces: &Spaces,
    sorted: &[&FlushPage],
    mut on_write: impl FnMut(usize),
    mut on_sync: impl FnMut(),
) -> Result<(), SpaceError> {
    debug_assert!(
        sorted.windows(2).all(|w| w[0].id < w[1].id),
        "pages not sorted"
    );
    let runs = adjacent_runs(sorted);
    let mut i = 0;
    while i < runs.len() {
        let space_id = runs[i][0].id.space;
        let space = spaces.get(space_id)?;
        while i < runs.len() && runs[i][0].id.space == space_id {
            let run = &runs[i];
            let bufs: Vec<&[u8]> = run.iter().map(|p| &p.image[..]).collect();
            let first: PageNo = run[0].id.page_no;
            for p in run.iter() {
                tracing::trace!(target: "quire::trace", "page write {} lsn {} init {}", p.id, p.lsn, p.initialized);
            }
            space.write_pages(first, &bufs)?;
            on_write(bufs.len());
            i += 1;
        }
        space.sync();
        on_sync();
    }
    Ok(())
}

impl PageWriter for SpaceWriter {
    fn write_batch(&self, pages: &[FlushPage]) -> Result<(), SpaceError> {
        let mut sorted: Vec<&FlushPage> = pages.iter().collect();
        sorted.sort_by_key(|p| p.id);
        write_home(
            &self.spaces,
            &sorted,
            |_| {
                self.writes.fetch_add(1, Ordering::Relaxed);
            },
            || {
                self.syncs.fetch_add(1, Ordering::Relaxed);
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::SpaceId;

    fn fp(space: u32, no: u32) -> FlushPage {
        FlushPage {
            id: PageId::new(SpaceId(space), PageNo(no)),
            lsn: Lsn(1),
            image: AlignedBuf::zeroed(16, 16),
            initialized: false,
        }
    }

    #[test]
    fn adjacent_pages_of_one_space_form_one_run() {
        let pages = [fp(1, 5), fp(2, 6), fp(1, 3), fp(1, 4), fp(1, 7), fp(2, 7)];
        let mut sorted: Vec<&FlushPage> = pages.iter().collect();
        sorted.sort_by_key(|p| p.id);
        let runs: Vec<Vec<(u32, u32)>> = adjacent_runs(&sorted)
            .iter()
            .map(|r| r.iter().map(|p| (p.id.space.0, p.id.page_no.0)).collect())
            .collect();
        assert_eq!(
            runs,
            vec![
                vec![(1, 3), (1, 4), (1, 5)],
                vec![(1, 7)],
                vec![(2, 6), (2, 7)]
            ]
        );
    }
}
