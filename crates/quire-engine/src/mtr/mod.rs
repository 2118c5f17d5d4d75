//! # Mini-transactions: the unit of atomic page change
//!
//! An mtr latches pages, changes them, and describes each change as a redo record
//! ([`record`]). Every change is made by *applying its own redo record* to the page
//! ([`record::apply`]), the same function recovery uses, so the log can never say something
//! other than what was done. At commit the records become one frame of the redo log; recovery
//! applies whole mtrs only (docs/mtr.md).
//!
//! Invariants:
//! 1. A page is changed only under its X latch, held from the change until commit.
//! 2. Every change to a page has a redo record in the same mtr, in the order made.
//! 3. A page changed by this mtr is on the flush list, with an oldest modification no later
//!    than this mtr's start LSN, before the mtr's LSN range is reserved (so no checkpoint can
//!    pass the change while it is only in the log; see [`Mtr::commit`]).
//! 4. At commit every changed page gets page LSN = the mtr's end LSN.
//! 5. Page latches are taken in the global order of docs/mtr.md (asserted in debug builds).
//! 6. A rollback-enabled mtr ([`Mtr::enable_rollback`]) holds, for every page it changed,
//!    the bytes the page had before its first change (none for a page it created that was
//!    not resident: nothing was read). [`Mtr::rollback`], or dropping it uncommitted, puts
//!    them back and logs nothing, so either all of its changes reach the log or none does.
//! 7. An mtr holds a log reservation ([`LogReservation`], from `Log::free_check`) made before
//!    its first latch, and appends inside it at commit: it never waits for log space while
//!    holding latches (log invariant 8; an append past the reservation takes the excess from
//!    the log's overdraft, see docs/mtr.md). The reservation is given back when the latches
//!    are released.

pub mod record;

use crate::buffer::{BufferError, BufferPool, PageMut, PageRef, PageSx};
use crate::log::{Log, LogError, LogReservation};
use crate::page::{Lsn, PageId, PageType};
use record::{Record, RecordWriter};

#[derive(Debug, thiserror::Error)]
pub enum MtrError {
    #[error(transparent)]
    Buffer(#[from] BufferError),
    #[error(transparent)]
    Log(#[from] LogError),
    #[error("page {page}: {what}")]
    Misuse { page: PageId, what: &'static str },
    /// The change would take the mtr past the largest log frame (`Log::max_payload`: a
    /// quarter of `innodb_log_buffer_size` and of `innodb_log_file_size`, at most 4 MiB).
    #[error(
        "a mini-transaction needs more than {max} bytes of redo (it had {have} and wanted \
         {more} more): raise innodb_log_buffer_size and innodb_log_file_size"
    )]
    TooLarge {
        have: usize,
        more: usize,
        max: usize,
    },
}

impl MtrError {
    /// A file the mini-transaction needed to grow could not: the disk is full.
    pub fn is_disk_full(&self) -> bool {
        match self {
            MtrError::Buffer(b) => b.is_disk_full(),
            MtrError::Log(l) => l.is_disk_full(),
            _ => false,
        }
    }
}

pub type Result<T> = std::result::Result<T, MtrError>;

enum Latch<'a> {
    S(PageRef<'a>),
    /// Shared-exclusive: readers pass, writers and other SX wait. Read-only in the mtr (a
    /// B-tree structure change that leaves the root alone holds it this way).
    Sx(PageSx<'a>),
    X(PageMut<'a>),
}

struct Held<'a> {
    id: PageId,
    latch: Latch<'a>,
    modified: bool,
    /// Made by `create_page` in this mtr.
    created: bool,
    /// Invariant 6: the page before this mtr's first change (rollback-enabled mtrs only).
    before: Option<Box<[u8]>>,
}

/// A handle to a page latched by an [`Mtr`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot(usize);

/// A mini-transaction. Create with [`Mtr::new`], latch and change pages, then [`Mtr::commit`].
/// Dropping an mtr that changed pages commits it: an applied change must never be left
/// without its redo. A rollback-enabled mtr is rolled back instead (invariant 6).
pub struct Mtr<'a> {
    pool: &'a BufferPool,
    log: &'a Log,
    held: Vec<Held<'a>>,
    records: RecordWriter,
    committed: bool,
    /// Keep before-images so that the mtr can be rolled back (invariant 6).
    rollback_enabled: bool,
    /// Invariant 7: log space for the commit, held until the latches are released.
    reservation: Option<LogReservation<'a>>,
    /// Debug builds check the latch order (invariant 5): the last allocation-metadata page
    /// latched, if any.
    #[cfg(debug_assertions)]
    last_meta: Option<PageId>,
}

impl<'a> Mtr<'a> {
    /// Starts an mtr with the log space `reservation` made by `log.free_check` before
    /// latching anything (done by `Engine::mtr`; invariant 7).
    pub fn new(pool: &'a BufferPool, log: &'a Log, reservation: LogReservation<'a>) -> Self {
        Mtr {
            pool,
            log,
            // Most mtrs latch one to four pages: one allocation instead of three growths.
            held: Vec::with_capacity(4),
            records: RecordWriter::new(),
            committed: false,
            rollback_enabled: false,
            reservation: Some(reservation),
            #[cfg(debug_assertions)]
            last_meta: None,
        }
    }

    /// Allocation metadata: page 0 of a space and the descriptor page that starts every
    /// group of `page_size` pages (docs/space-format.md).
    #[cfg(debug_assertions)]
    fn is_alloc_metadata(&self, id: PageId) -> bool {
        id.page_no
            .0
            .is_multiple_of(self.pool.config().page_size.get())
    }

    /// Latch order (docs/mtr.md): allocation metadata comes last, page 0 before the
    /// descriptor pages of its space, spaces in ascending order; after metadata, only pages
    /// being created (unreachable until this mtr commits) may be latched. Debug builds only.
    #[cfg(debug_assertions)]
    fn assert_latch_order(&mut self, id: PageId, creating: bool) {
        let meta = self.is_alloc_metadata(id);
        if let Some(last) = self.last_meta {
            if meta {
                // Under its space's page 0, a descriptor page may come in any order: page
                // 0's X latch serializes allocation in the space, so no other mtr holds one
                // or waits for one (an mtr allocating several pages in a space of several
                // descriptor groups goes back and forth between them).
                let under_page_0 = id.page_no.0 != 0
                    && self
                        .find(PageId::new(id.space, crate::page::PageNo(0)))
                        .is_some_and(|i| matches!(self.held[i].latch, Latch::X(_)));
                assert!(
                    under_page_0 || (id.space, id.page_no) > (last.space, last.page_no),
                    "latch order: metadata page {id} after {last}"
                );
            } else {
                assert!(
                    creating,
                    "latch order: page {id} latched after metadata page {last}"
                );
            }
        }
        if meta {
            self.last_meta = Some(match self.last_meta {
                Some(last) if (last.space, last.page_no) > (id.space, id.page_no) => last,
                _ => id,
            });
        }
    }

    #[cfg(not(debug_assertions))]
    fn assert_latch_order(&mut self, _id: PageId, _creating: bool) {}

    fn find(&self, id: PageId) -> Option<usize> {
        self.held.iter().position(|h| h.id == id)
    }

    /// Makes this mtr able to roll back (invariant 6): from now on each page keeps its
    /// bytes from before its first change. Call it before the first change. It costs a page
    /// copy per changed page, so it is for mtrs that may fail half-way through a plan that
    /// cannot be checked up front (B-tree structure changes), not for every small change.
    pub fn enable_rollback(&mut self) {
        debug_assert!(self.records.is_empty(), "enable_rollback after a change");
        self.rollback_enabled = true;
    }

    /// Undoes every change of a rollback-enabled mtr (invariant 6) and releases its latches;
    /// nothing reaches the log. Pages it created that were not resident before keep their
    /// fresh, clean frames (they are free again in their space's metadata, which is rolled
    /// back with the rest).
    pub fn rollback(mut self) -> Result<()> {
        self.rollback_inner()
    }

    fn rollback_inner(&mut self) -> Result<()> {
        if !self.rollback_enabled && !self.records.is_empty() {
            return Err(MtrError::Misuse {
                page: self.held.first().map_or(
                    PageId::new(crate::page::SpaceId(u32::MAX), crate::page::PageNo::NULL),
                    |h| h.id,
                ),
                what: "rollback of an mtr without before-images",
            });
        }
        self.committed = true;
        for h in self.held.iter_mut().rev() {
            let Latch::X(g) = &mut h.latch else { continue };
            match (&h.before, h.created) {
                (Some(b), _) => g.restore(b),
                (None, true) => g.forget_creation(),
                (None, false) => debug_assert!(!h.modified, "changed page without image"),
            }
            h.modified = false;
        }
        self.release();
        Ok(())
    }

    /// Latches `id` exclusively (reading it if needed). Latching a page this mtr already
    /// holds X returns the same slot; holding it S or SX is a misuse (upgrading could
    /// deadlock: a reader holding the page S may be waiting for a latch this mtr holds).
    pub fn x_latch(&mut self, id: PageId) -> Result<Slot> {
        if let Some(i) = self.find(id) {
            return match self.held[i].latch {
                Latch::X(_) => Ok(Slot(i)),
                Latch::S(_) | Latch::Sx(_) => Err(MtrError::Misuse {
                    page: id,
                    what: "X after S or SX in one mtr",
                }),
            };
        }
        self.assert_latch_order(id, false);
        let g = self.pool.get_exclusive(id)?;
        Ok(self.hold(id, Latch::X(g), false, None))
    }

    /// Latches `id` shared-exclusive: other readers may still enter; writers and other SX
    /// holders wait. The page cannot be changed through this mtr.
    pub fn sx_latch(&mut self, id: PageId) -> Result<Slot> {
        if let Some(i) = self.find(id) {
            return match self.held[i].latch {
                Latch::Sx(_) | Latch::X(_) => Ok(Slot(i)),
                Latch::S(_) => Err(MtrError::Misuse {
                    page: id,
                    what: "SX after S in one mtr",
                }),
            };
        }
        self.assert_latch_order(id, false);
        let g = self.pool.get_sx(id)?;
        Ok(self.hold(id, Latch::Sx(g), false, None))
    }

    /// Whether this mtr holds `s` exclusively (so may change it).
    pub fn is_x(&self, s: Slot) -> bool {
        matches!(self.held[s.0].latch, Latch::X(_))
    }

    /// Latches `id` shared.
    pub fn s_latch(&mut self, id: PageId) -> Result<Slot> {
        if let Some(i) = self.find(id) {
            return Ok(Slot(i));
        }
        self.assert_latch_order(id, false);
        let g = self.pool.get_shared(id)?;
        Ok(self.hold(id, Latch::S(g), false, None))
    }

    fn hold(
        &mut self,
        id: PageId,
        latch: Latch<'a>,
        created: bool,
        before: Option<Box<[u8]>>,
    ) -> Slot {
        self.held.push(Held {
            id,
            latch,
            modified: created,
            created,
            before,
        });
        Slot(self.held.len() - 1)
    }

    /// Starts page `id` from nothing as type `ty` (PAGE_INIT): it is never read from disk, and
    /// recovery rebuilds it from redo alone (lesson 1).
    pub fn create_page(&mut self, id: PageId, ty: PageType) -> Result<Slot> {
        if self.find(id).is_some() {
            return Err(MtrError::Misuse {
                page: id,
                what: "create of a page already latched",
            });
        }
        self.assert_latch_order(id, true);
        let (g, before) = if self.rollback_enabled {
            self.pool.create_keeping_old(id, ty)?
        } else {
            (self.pool.create(id, ty)?, None)
        };
        self.hold(id, Latch::X(g), true, before);
        // The pool already initialized the frame exactly as PAGE_INIT does; log it.
        self.records.push(&Record::PageInit {
            page: id,
            page_type: ty,
        });
        Ok(Slot(self.held.len() - 1))
    }

    pub fn page_id(&self, s: Slot) -> PageId {
        self.held[s.0].id
    }

    /// The bytes of a latched page.
    pub fn page(&self, s: Slot) -> &[u8] {
        match &self.held[s.0].latch {
            Latch::S(g) => g,
            Latch::Sx(g) => g,
            Latch::X(g) => g,
        }
    }

    /// Logs `rec` and applies it to the X-latched page in `s` (invariants 1 and 2). Every
    /// check happens before the page is touched, so an error leaves page and redo unchanged.
    fn change(&mut self, s: Slot, rec: Record<'_>) -> Result<()> {
        let h = &mut self.held[s.0];
        let Latch::X(g) = &mut h.latch else {
            return Err(MtrError::Misuse {
                page: h.id,
                what: "change without an X latch",
            });
        };
        let mark = self.records.mark();
        self.records.push(&rec);
        let max = self.log.max_payload() as usize;
        if self.records.len() > max {
            let more = self.records.len() - mark.0;
            self.records.rollback(mark);
            return Err(MtrError::TooLarge {
                have: self.records.len(),
                more,
                max,
            });
        }
        if self.rollback_enabled && h.before.is_none() && !h.created {
            h.before = Some(Box::from(&g[..]));
        }
        if record::apply(&rec, g).is_err() {
            self.records.rollback(mark);
            return Err(MtrError::Misuse {
                page: h.id,
                what: "change outside the page body",
            });
        }
        h.modified = true;
        Ok(())
    }

    /// Writes `data` at `offset` of the page.
    pub fn write(&mut self, s: Slot, offset: usize, data: &[u8]) -> Result<()> {
        let page = self.page_id(s);
        self.change(
            s,
            Record::Write {
                page,
                offset: offset as u32,
                data,
            },
        )
    }

    pub fn write_u32(&mut self, s: Slot, offset: usize, v: u32) -> Result<()> {
        self.write(s, offset, &v.to_le_bytes())
    }

    pub fn write_u64(&mut self, s: Slot, offset: usize, v: u64) -> Result<()> {
        self.write(s, offset, &v.to_le_bytes())
    }

    pub fn memset(&mut self, s: Slot, offset: usize, len: usize, byte: u8) -> Result<()> {
        let page = self.page_id(s);
        self.change(
            s,
            Record::Memset {
                page,
                offset: offset as u32,
                len: len as u32,
                byte,
            },
        )
    }

    pub fn memmove(&mut self, s: Slot, dst: usize, src: usize, len: usize) -> Result<()> {
        let page = self.page_id(s);
        self.change(
            s,
            Record::Memmove {
                page,
                dst: dst as u32,
                src: src as u32,
                len: len as u32,
            },
        )
    }

    /// Logs a file operation (FILE_CREATE, FILE_EXTEND, ...). The caller performs it after
    /// the commit LSN is durable.
    pub fn log_file_op(&mut self, rec: Record<'_>) -> Result<()> {
        debug_assert!(rec.page().is_none(), "log_file_op takes file records");
        let mark = self.records.mark();
        self.records.push(&rec);
        let max = self.log.max_payload() as usize;
        if self.records.len() > max {
            let more = self.records.len() - mark.0;
            self.records.rollback(mark);
            return Err(MtrError::TooLarge {
                have: self.records.len(),
                more,
                max,
            });
        }
        Ok(())
    }

    /// Bytes of redo this mtr has so far.
    pub fn redo_len(&self) -> usize {
        self.records.len()
    }

    /// The most redo one mtr may hold (one log frame): callers that write many pages plan
    /// against it, since a change past it fails with the earlier ones already applied.
    pub fn redo_max(&self) -> usize {
        self.log.max_payload() as usize
    }

    /// Whether this mtr has changes to commit.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Commits: appends the redo as one log frame, stamps and dirties the changed pages,
    /// releases the latches. Returns the end LSN (what a transaction waits on), or `None` if
    /// nothing was changed.
    ///
    /// Order (invariant 3): the changed pages go on the flush list with oldest modification
    /// `lsn0 = log.current_lsn()` *before* the LSN range is reserved. Any reservation after
    /// reading `lsn0` starts at or after it, so `lsn0 <= start`: conservative, hence safe.
    /// The checkpointer reads the log's current LSN *then* the flush list's oldest, and takes
    /// the smaller: a page missing from the flush list it saw belongs to an mtr that reserved
    /// later, at or after the current LSN it read.
    pub fn commit(mut self) -> Result<Option<Lsn>> {
        self.commit_inner()
    }

    fn commit_inner(&mut self) -> Result<Option<Lsn>> {
        self.committed = true;
        if self.records.is_empty() {
            self.release();
            return Ok(None);
        }
        let lsn0 = self.log.current_lsn();
        for h in self.held.iter_mut().filter(|h| h.modified) {
            if let Latch::X(g) = &mut h.latch {
                g.mark_dirty(lsn0, lsn0);
            }
        }
        // The size was checked at every change, so append cannot refuse this payload; if it
        // did, the pages would hold changes without redo: a broken invariant, not an error.
        // Inside the reservation (invariant 7), the append waits for no checkpoint.
        let appended = match self.reservation.as_mut() {
            Some(r) => self.log.append_reserved(self.records.as_bytes(), r),
            None => quire_io::fatal::fatal("mtr invariant 7: a commit without a log reservation"),
        };
        let range = match appended {
            Ok(r) => r,
            Err(e) => quire_io::fatal::fatal(&format!("redo append of a checked mtr failed: {e}")),
        };
        debug_assert!(range.start >= lsn0);
        for h in self.held.iter_mut().filter(|h| h.modified) {
            if let Latch::X(g) = &mut h.latch {
                g.mark_dirty(lsn0, range.end);
            }
        }
        self.release();
        Ok(Some(range.end))
    }

    /// Releases latches in reverse order of acquisition, then the log reservation.
    fn release(&mut self) {
        while let Some(h) = self.held.pop() {
            drop(h);
        }
        self.records.clear();
        self.reservation = None;
    }
}

impl Drop for Mtr<'_> {
    fn drop(&mut self) {
        if self.committed || self.records.is_empty() {
            self.release();
            return;
        }
        if self.rollback_enabled {
            // Invariant 6: an error path undoes the changes rather than logging half a plan.
            if let Err(e) = self.rollback_inner() {
                quire_io::fatal::fatal(&format!("mini-transaction rollback failed: {e}"));
            }
            return;
        }
        // Changes were applied to pages: they must reach the log, whatever the caller's
        // error path. Failing that, the pages in memory say something the log does not.
        if let Err(e) = self.commit_inner() {
            quire_io::fatal::fatal(&format!(
                "mini-transaction dropped and could not commit: {e}"
            ));
        }
    }
}
