//! # Undo logs: TRX_SYS, rollback segments, undo pages, history lists
//!
//! Every undo page lives in the system space and changes only through mtrs, so redo
//! recovery restores undo exactly like any other page (docs/undo.md has the formats and the
//! crash analysis). A transaction writes its undo records into at most two logs, an
//! *insert* log (undo of inserts: only its own rollback reads it) and an *update* log
//! (undo of updates and deletes: old versions for MVCC readers and for purge), both in
//! the rollback segment `trx_id % 128`.
//!
//! ```text
//!  TRX_SYS (page 2)          rseg header page (one of 128, made on first use)
//!  ┌──────────────────┐      ┌─────────────────────────────────────────────┐
//!  │ max trx id       │      │ history: head, tail, length                 │
//!  │ rseg[0..128] ────┼─────►│ slots: first page of each ACTIVE log        │
//!  └──────────────────┘      └─────────────────────────────────────────────┘
//!  undo log = a log header at (page, offset) in a *header page*, its first records
//!  after it in that page, then continuation pages of its own. A header page holds the
//!  headers of several update logs one after another (InnoDB's cached undo pages): a
//!  committed update log's page with room left is handed to the next transaction of the
//!  rseg, so a million small transactions of history take thousands of pages, not a
//!  million. Records never span pages.
//! ```
//!
//! Invariants:
//! 1. A log is in its rseg's slots while ACTIVE, in its history list once COMMITTED with an
//!    update log (in the same mtr that marks it committed), and freed otherwise; never two.
//! 2. Every mtr that changes an rseg's slots or history list holds its header page X
//!    first, then the log pages it touches: rseg header → undo pages → allocation metadata
//!    (docs/mtr.md rule 2). So mtrs touching several logs of one rseg are serialized.
//! 3. A log is appended to only by its transaction; after commit it is immutable until
//!    purge removes it from the head of its history list.
//! 4. Within an rseg the history list is in commit order of the commit mtrs; for one row,
//!    that is trx_no order (row locks order the commits of its writers).
//! 5. The persisted trx-id high-water mark is above every id handed out (`trx::TrxSys`).
//! 6. A header page's `n_logs` counts the logs whose header it holds and that are not yet
//!    freed; it is freed when that count reaches 0. Only the newest log of a header page
//!    ever grows in it (the page is handed to one transaction at a time, through the
//!    rseg's in-memory cache, under the rseg mutex), so `page free == that log's end`.
//! 7. An rseg's *spare* page (`RS_SPARE` on disk, `Rseg::spare` in memory, always equal
//!    outside the rseg mutex) is a header page with `n_logs` 0 that no slot, history log or
//!    cache names. It is named in the mtr that frees the last log of its page, and
//!    un-named in the mtr that starts a log in it: a transaction's first undo record takes
//!    no page allocation while its rseg has a spare, and the page is never leaked by a
//!    crash.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

use crate::engine::{Engine, EngineError};
use crate::mtr::{Mtr, MtrError, Slot};
use crate::page::{Lsn, PageId, PageNo, PageType, SpaceId, HEADER_SIZE, TRAILER_SIZE};
use crate::row::{RollPtr, TrxId};

#[cfg(test)]
mod tests;

#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Mtr(#[from] MtrError),
    #[error(transparent)]
    Buffer(#[from] crate::buffer::BufferError),
    #[error("undo: corrupt page {page}: {what}")]
    Corrupt { page: PageNo, what: String },
    #[error("undo record of {0} bytes is too large (the limit is half a page)")]
    TooLarge(usize),
    #[error(
        "all {0} undo slots of a rollback segment are in use: too many concurrent transactions"
    )]
    NoSlot(usize),
    #[error("the system space has no TRX_SYS page at page 2 (a data directory from before transactions?)")]
    NoTrxSys,
}

pub type Result<T> = std::result::Result<T, UndoError>;

impl UndoError {
    /// The undo space could not grow: the disk is full.
    pub fn is_disk_full(&self) -> bool {
        match self {
            UndoError::Engine(e) => e.is_disk_full(),
            UndoError::Mtr(e) => e.is_disk_full(),
            UndoError::Buffer(e) => e.is_disk_full(),
            _ => false,
        }
    }
}

fn corrupt(page: PageNo, what: impl Into<String>) -> UndoError {
    UndoError::Corrupt {
        page,
        what: what.into(),
    }
}

/// TRX_SYS is the first page allocated after the catalog root (page 1).
pub const TRX_SYS_PAGE: PageNo = PageNo(2);
const RSEGS: usize = RollPtr::RSEGS as usize;
const NO_PAGE: u32 = 0;

// TRX_SYS layout (offsets from the page start).
const TS_MAGIC: usize = HEADER_SIZE;
const TS_MAX_TRX_ID: usize = TS_MAGIC + 4;
const TS_RSEGS: usize = TS_MAX_TRX_ID + 8;
const TS_MAGIC_VALUE: u32 = 0x5154_5253; // "QTRS"

// Rollback segment header layout. A log is named by (page u32, offset u16).
const RS_MAGIC: usize = HEADER_SIZE;
const RS_HIST_HEAD: usize = RS_MAGIC + 4;
const RS_HIST_TAIL: usize = RS_HIST_HEAD + 6;
const RS_HIST_LEN: usize = RS_HIST_TAIL + 6;
const RS_SLOTS: usize = RS_HIST_LEN + 8;
const SLOT_SIZE: usize = 6;
const RS_MAGIC_VALUE: u32 = 0x5152_5348; // "QRSH"
/// The spare page (u32, 0: none) sits in the last 4 bytes before the trailer, past the
/// slots (`UndoSys::open` sizes them to leave it room).
const RS_SPARE_SIZE: usize = 4;

// Every undo page: kind, flags, free offset, next continuation page, logs with a header here.
const UP_KIND: usize = HEADER_SIZE;
const UP_FLAGS: usize = UP_KIND + 2;
const UP_FREE: usize = UP_FLAGS + 2;
const UP_NEXT: usize = UP_FREE + 2;
const UP_NLOGS: usize = UP_NEXT + 4;
const UP_END: usize = UP_NLOGS + 2;
const FLAG_HEADER_PAGE: u16 = 1;

// A log header, at its offset in a header page.
const LH_TRX: usize = 0;
const LH_STATE: usize = 8;
const LH_KIND: usize = 9;
const LH_TRX_NO: usize = 10;
const LH_LAST: usize = 18;
const LH_CONT: usize = 22;
const LH_END: usize = 26;
const LH_NEXT_UNDO: usize = 28;
const LH_HIST_PAGE: usize = 36;
const LH_HIST_OFF: usize = 40;
const LH_SIZE: usize = 42;

const STATE_ACTIVE: u8 = 1;
const STATE_COMMITTED: u8 = 2;

/// Record header: kind u8, undo_no u64, table_id u64, payload length u16.
const REC_HEADER: usize = 1 + 8 + 8 + 2;

fn get_u16(p: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([p[at], p[at + 1]])
}
fn get_u32(p: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([p[at], p[at + 1], p[at + 2], p[at + 3]])
}
fn get_u64(p: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&p[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Which log of a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UndoKind {
    Insert,
    Update,
}

impl UndoKind {
    fn code(self) -> u8 {
        match self {
            UndoKind::Insert => 1,
            UndoKind::Update => 2,
        }
    }
    fn from_code(c: u8) -> Option<UndoKind> {
        match c {
            1 => Some(UndoKind::Insert),
            2 => Some(UndoKind::Update),
            _ => None,
        }
    }
    fn idx(self) -> usize {
        match self {
            UndoKind::Insert => 0,
            UndoKind::Update => 1,
        }
    }
}

/// One undo record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoRecord {
    pub kind: UndoKind,
    /// Its number within the transaction (both logs share the numbering).
    pub undo_no: u64,
    pub table_id: u64,
    pub payload: Vec<u8>,
}

/// Where a log is: its header's page and offset, and its last page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LogRef {
    page: PageNo,
    off: u16,
    last: PageNo,
}

/// A transaction's undo: its insert and update logs (made on first append).
#[derive(Debug)]
pub struct TrxUndo {
    trx: TrxId,
    rseg: u8,
    logs: [Option<LogRef>; 2],
    next_undo_no: u64,
}

impl TrxUndo {
    pub fn new(trx: TrxId) -> TrxUndo {
        TrxUndo {
            trx,
            rseg: (trx.0 % RSEGS as u64) as u8,
            logs: [None, None],
            next_undo_no: 0,
        }
    }
    pub fn trx(&self) -> TrxId {
        self.trx
    }
    /// No log was made: nothing to commit or roll back.
    pub fn is_empty(&self) -> bool {
        self.logs.iter().all(Option::is_none)
    }
    /// The number the next record gets.
    pub fn next_undo_no(&self) -> u64 {
        self.next_undo_no
    }
}

/// A committed update log in a history list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryLog {
    pub trx_id: TrxId,
    pub trx_no: u64,
    pub rseg: u8,
    pub first_page: PageNo,
    pub offset: u16,
}

/// A transaction whose logs were active at open.
pub struct RecoveredTrx {
    pub undo: TrxUndo,
}

/// What `UndoSys::open` found.
pub struct Recovered {
    pub max_trx_id: TrxId,
    pub max_trx_no: u64,
    pub active: Vec<RecoveredTrx>,
}

struct Rseg {
    /// Its header page, once made.
    page: Option<PageNo>,
    /// History length (the page has it too; this avoids a latch per status read).
    history: u64,
    /// A header page whose logs are all committed, with room for another log: the next
    /// update log of this rseg starts in it (invariant 6).
    cached: Option<PageNo>,
    /// An empty header page kept for the next log of either kind (invariant 7).
    spare: Option<PageNo>,
}

/// What freeing a log did to its header page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HeaderPage {
    /// Other logs still have their header in it.
    Kept,
    /// It was freed.
    Freed,
    /// It became its rseg's spare page (the caller sets `Rseg::spare` after the commit).
    Spared,
}

/// The undo system of an open data directory. Shared by every session (Send + Sync).
pub struct UndoSys {
    rsegs: Vec<Mutex<Rseg>>,
    history_len: AtomicU64,
    slots: usize,
    page_size: usize,
    /// Offset of `RS_SPARE` in an rseg header page.
    spare_at: usize,
}

fn sys(p: PageNo) -> PageId {
    PageId::new(SpaceId::SYSTEM, p)
}

fn parse_record(page_no: PageNo, p: &[u8], at: usize) -> Result<UndoRecord> {
    let end = p.len() - TRAILER_SIZE;
    if at + REC_HEADER > end {
        return Err(corrupt(page_no, format!("record at {at} past the page")));
    }
    let kind = UndoKind::from_code(p[at])
        .ok_or_else(|| corrupt(page_no, format!("record kind {} at {at}", p[at])))?;
    let undo_no = get_u64(p, at + 1);
    let table_id = get_u64(p, at + 9);
    let len = get_u16(p, at + 17) as usize;
    if at + REC_HEADER + len > end {
        return Err(corrupt(
            page_no,
            format!("record at {at} of {len} bytes past the page"),
        ));
    }
    Ok(UndoRecord {
        kind,
        undo_no,
        table_id,
        payload: p[at + REC_HEADER..at + REC_HEADER + len].to_vec(),
    })
}

/// The records in `p[from..to]`, with their offsets.
fn records_in(page_no: PageNo, p: &[u8], from: usize, to: usize) -> Result<Vec<(u16, UndoRecord)>> {
    if from > to || to > p.len() - TRAILER_SIZE {
        return Err(corrupt(page_no, format!("record area {from}..{to}")));
    }
    let mut out = Vec::new();
    let mut at = from;
    while at < to {
        let r = parse_record(page_no, p, at)?;
        let len = REC_HEADER + r.payload.len();
        out.push((at as u16, r));
        at += len;
    }
    if at != to {
        return Err(corrupt(page_no, "records overrun their area"));
    }
    Ok(out)
}

fn encode_record(kind: UndoKind, undo_no: u64, table_id: u64, payload: &[u8]) -> Vec<u8> {
    let mut r = Vec::with_capacity(REC_HEADER + payload.len());
    r.push(kind.code());
    r.extend_from_slice(&undo_no.to_le_bytes());
    r.extend_from_slice(&table_id.to_le_bytes());
    r.extend_from_slice(&(payload.len() as u16).to_le_bytes());
    r.extend_from_slice(payload);
    r
}

/// A log's header.
#[derive(Debug, Clone, Copy)]
struct LogHeader {
    kind: UndoKind,
    trx: TrxId,
    state: u8,
    trx_no: u64,
    last: PageNo,
    cont: PageNo,
    end: u16,
    next_undo_no: u64,
    hist: (PageNo, u16),
}

fn log_header(page_no: PageNo, p: &[u8], off: u16) -> Result<LogHeader> {
    let o = off as usize;
    if get_u16(p, UP_FLAGS) & FLAG_HEADER_PAGE == 0 {
        return Err(corrupt(page_no, "not a header page of undo logs"));
    }
    if o < UP_END || o + LH_SIZE > p.len() - TRAILER_SIZE {
        return Err(corrupt(page_no, format!("a log header at offset {o}")));
    }
    let kind = UndoKind::from_code(p[o + LH_KIND])
        .ok_or_else(|| corrupt(page_no, format!("no log header at offset {o}")))?;
    let h = LogHeader {
        kind,
        trx: TrxId(get_u64(p, o + LH_TRX)),
        state: p[o + LH_STATE],
        trx_no: get_u64(p, o + LH_TRX_NO),
        last: PageNo(get_u32(p, o + LH_LAST)),
        cont: PageNo(get_u32(p, o + LH_CONT)),
        end: get_u16(p, o + LH_END),
        next_undo_no: get_u64(p, o + LH_NEXT_UNDO),
        hist: (
            PageNo(get_u32(p, o + LH_HIST_PAGE)),
            get_u16(p, o + LH_HIST_OFF),
        ),
    };
    if (h.end as usize) < o + LH_SIZE || h.end as usize > p.len() - TRAILER_SIZE {
        return Err(corrupt(page_no, format!("log at {o} ends at {}", h.end)));
    }
    Ok(h)
}

fn slot_at(s: usize) -> usize {
    RS_SLOTS + s * SLOT_SIZE
}

fn read_ref(p: &[u8], at: usize) -> (PageNo, u16) {
    (PageNo(get_u32(p, at)), get_u16(p, at + 4))
}

fn write_ref(mtr: &mut Mtr<'_>, s: Slot, at: usize, r: (PageNo, u16)) -> Result<()> {
    let mut b = [0u8; 6];
    b[..4].copy_from_slice(&r.0 .0.to_le_bytes());
    b[4..].copy_from_slice(&r.1.to_le_bytes());
    mtr.write(s, at, &b)?;
    Ok(())
}

const NO_REF: (PageNo, u16) = (PageNo(NO_PAGE), 0);

/// An rseg's header page and its live logs as (header page, offset, active).
type RsegLogs = (PageNo, Vec<(PageNo, u16, bool)>);

impl UndoSys {
    fn page_end(&self) -> usize {
        self.page_size - TRAILER_SIZE
    }
}

/// An undo page, S-latched, after checking its type.
fn undo_page(engine: &Engine, p: PageNo) -> Result<crate::buffer::PageRef<'_>> {
    let g = engine.pool().get_shared(sys(p))?;
    if crate::page::Header::new(&g).page_type() != Some(PageType::Undo) {
        return Err(corrupt(p, "not an undo page"));
    }
    Ok(g)
}

impl UndoSys {
    /// Opens TRX_SYS and the rsegs (creating TRX_SYS on a fresh directory), finds the
    /// active logs (transactions to roll back) and the history lists. Call after the
    /// catalog is open.
    pub fn open(engine: &Engine) -> Result<(UndoSys, Recovered)> {
        let page_size = engine.page_size().bytes();
        // The spare page's field ends where the trailer starts. At 8 KiB and up it is past
        // the 1024 slots; at 4 KiB it takes the room of a 672nd slot (docs/undo.md).
        let spare_at = page_size - TRAILER_SIZE - RS_SPARE_SIZE;
        let slots = ((spare_at - RS_SLOTS) / SLOT_SIZE).min(1024);
        let me = UndoSys {
            rsegs: (0..RSEGS)
                .map(|_| {
                    Mutex::new(Rseg {
                        page: None,
                        history: 0,
                        cached: None,
                        spare: None,
                    })
                })
                .collect(),
            history_len: AtomicU64::new(0),
            slots,
            page_size,
            spare_at,
        };
        if !engine.page_is_used(sys(TRX_SYS_PAGE))? {
            let mut mtr = engine.mtr();
            let p = engine.alloc_page(&mut mtr, SpaceId::SYSTEM)?;
            if p != TRX_SYS_PAGE {
                return Err(UndoError::NoTrxSys);
            }
            let s = mtr.create_page(sys(p), PageType::Undo)?;
            mtr.write_u32(s, TS_MAGIC, TS_MAGIC_VALUE)?;
            if let Some(lsn) = mtr.commit()? {
                engine.commit_wait(lsn);
            }
        }
        let ts = undo_page(engine, TRX_SYS_PAGE)?.to_vec();
        if get_u32(&ts, TS_MAGIC) != TS_MAGIC_VALUE {
            return Err(UndoError::NoTrxSys);
        }
        let mut max_id = get_u64(&ts, TS_MAX_TRX_ID);
        let mut max_no = 0u64;
        let mut active: BTreeMap<TrxId, TrxUndo> = BTreeMap::new();
        for r in 0..RSEGS {
            let pno = get_u32(&ts, TS_RSEGS + r * 4);
            if pno == NO_PAGE {
                continue;
            }
            let page = PageNo(pno);
            let h = undo_page(engine, page)?.to_vec();
            if get_u32(&h, RS_MAGIC) != RS_MAGIC_VALUE {
                return Err(corrupt(page, "not a rollback segment header"));
            }
            let mut len = 0;
            let mut at = read_ref(&h, RS_HIST_HEAD);
            while at.0 .0 != NO_PAGE {
                let g = undo_page(engine, at.0)?;
                let lh = log_header(at.0, &g, at.1)?;
                max_id = max_id.max(lh.trx.0);
                max_no = max_no.max(lh.trx_no);
                len += 1;
                at = lh.hist;
            }
            for s in 0..me.slots {
                let (lp, off) = read_ref(&h, slot_at(s));
                if lp.0 == NO_PAGE {
                    continue;
                }
                let g = undo_page(engine, lp)?;
                let lh = log_header(lp, &g, off)?;
                max_id = max_id.max(lh.trx.0);
                let u = active.entry(lh.trx).or_insert_with(|| TrxUndo::new(lh.trx));
                if u.rseg as usize != r {
                    return Err(corrupt(lp, "an active log in the wrong rollback segment"));
                }
                u.logs[lh.kind.idx()] = Some(LogRef {
                    page: lp,
                    off,
                    last: lh.last,
                });
                u.next_undo_no = u.next_undo_no.max(lh.next_undo_no);
            }
            let mut g = me.rsegs[r].lock();
            g.page = Some(page);
            g.history = len;
            let spare = get_u32(&h, spare_at);
            if spare != NO_PAGE {
                if get_u16(&undo_page(engine, PageNo(spare))?, UP_NLOGS) != 0 {
                    return Err(corrupt(PageNo(spare), "a spare undo page that holds logs"));
                }
                g.spare = Some(PageNo(spare));
            }
            me.history_len.fetch_add(len, Ordering::Relaxed);
        }
        Ok((
            me,
            Recovered {
                max_trx_id: TrxId(max_id),
                max_trx_no: max_no,
                active: active
                    .into_values()
                    .map(|undo| RecoveredTrx { undo })
                    .collect(),
            },
        ))
    }

    /// Persists the trx-id high-water mark (one mtr).
    pub fn persist_max_trx_id(&self, engine: &Engine, id: TrxId) -> Result<Lsn> {
        let mut mtr = engine.mtr();
        let s = mtr.x_latch(sys(TRX_SYS_PAGE))?;
        mtr.write_u64(s, TS_MAX_TRX_ID, id.0)?;
        Ok(mtr.commit()?.unwrap_or(Lsn::ZERO))
    }

    /// The header page of rseg `r`, made on first use. Called with the rseg's mutex held.
    fn rseg_page(&self, engine: &Engine, g: &mut Rseg, r: u8) -> Result<PageNo> {
        if let Some(p) = g.page {
            return Ok(p);
        }
        let mut mtr = engine.mtr();
        let ts = mtr.x_latch(sys(TRX_SYS_PAGE))?;
        let p = engine.alloc_page(&mut mtr, SpaceId::SYSTEM)?;
        let s = mtr.create_page(sys(p), PageType::Undo)?;
        mtr.write_u32(s, RS_MAGIC, RS_MAGIC_VALUE)?;
        mtr.write_u32(ts, TS_RSEGS + r as usize * 4, p.0)?;
        mtr.commit()?;
        g.page = Some(p);
        Ok(p)
    }

    /// Appends one record to the transaction's log of `kind`.
    pub fn append(
        &self,
        engine: &Engine,
        undo: &mut TrxUndo,
        kind: UndoKind,
        table_id: u64,
        payload: &[u8],
    ) -> Result<(RollPtr, Lsn)> {
        if payload.len() > self.page_size / 2 {
            return Err(UndoError::TooLarge(payload.len()));
        }
        let rec = encode_record(kind, undo.next_undo_no, table_id, payload);
        let next_no = undo.next_undo_no + 1;
        let (page, at, lsn) = match undo.logs[kind.idx()] {
            None => self.create_log(engine, undo, kind, &rec, next_no)?,
            Some(log) => {
                let mut mtr = engine.mtr();
                let h = mtr.x_latch(sys(log.page))?;
                let o = log.off as usize;
                let last = if log.last == log.page {
                    h
                } else {
                    mtr.x_latch(sys(log.last))?
                };
                let free = get_u16(mtr.page(last), UP_FREE) as usize;
                let placed = if free + rec.len() <= self.page_end() {
                    mtr.write(last, free, &rec)?;
                    let end = ((free + rec.len()) as u16).to_le_bytes();
                    mtr.write(last, UP_FREE, &end)?;
                    if log.last == log.page {
                        // Invariant 6: this log is the newest of its header page.
                        debug_assert_eq!(get_u16(mtr.page(h), o + LH_END) as usize, free);
                        mtr.write(h, o + LH_END, &end)?;
                    }
                    (log.last, free)
                } else {
                    // A continuation page of this log's own.
                    let p = engine.alloc_page(&mut mtr, SpaceId::SYSTEM)?;
                    let s = mtr.create_page(sys(p), PageType::Undo)?;
                    mtr.write(s, UP_KIND, &u16::from(kind.code()).to_le_bytes())?;
                    mtr.write(s, UP_FREE, &((UP_END + rec.len()) as u16).to_le_bytes())?;
                    mtr.write(s, UP_END, &rec)?;
                    if log.last == log.page {
                        mtr.write_u32(h, o + LH_CONT, p.0)?;
                    } else {
                        mtr.write_u32(last, UP_NEXT, p.0)?;
                    }
                    mtr.write_u32(h, o + LH_LAST, p.0)?;
                    undo.logs[kind.idx()] = Some(LogRef { last: p, ..log });
                    (p, UP_END)
                };
                mtr.write_u64(h, o + LH_NEXT_UNDO, next_no)?;
                let lsn = mtr.commit()?.unwrap_or(Lsn::ZERO);
                (placed.0, placed.1, lsn)
            }
        };
        undo.next_undo_no = next_no;
        Ok((
            RollPtr::new(kind == UndoKind::Insert, undo.rseg, page, at as u16),
            lsn,
        ))
    }

    /// Makes the log of `kind` with its first record, registered in a free slot: an update
    /// log in the rseg's cached header page when it has room, else in a new page.
    fn create_log(
        &self,
        engine: &Engine,
        undo: &mut TrxUndo,
        kind: UndoKind,
        rec: &[u8],
        next_no: u64,
    ) -> Result<(PageNo, usize, Lsn)> {
        let mut g = self.rsegs[undo.rseg as usize].lock();
        let rpage = self.rseg_page(engine, &mut g, undo.rseg)?;
        let need = LH_SIZE + rec.len();
        let mut mtr = engine.mtr();
        let rs = mtr.x_latch(sys(rpage))?;
        let slot = (0..self.slots)
            .find(|s| get_u32(mtr.page(rs), slot_at(*s)) == NO_PAGE)
            .ok_or(UndoError::NoSlot(self.slots))?;
        let mut place = None;
        if kind == UndoKind::Update {
            if let Some(c) = g.cached {
                let h = mtr.x_latch(sys(c))?;
                let free = get_u16(mtr.page(h), UP_FREE) as usize;
                if free + need <= self.page_end() {
                    let n = get_u16(mtr.page(h), UP_NLOGS);
                    mtr.write(h, UP_NLOGS, &(n + 1).to_le_bytes())?;
                    place = Some((c, h, free));
                }
                // Taken (or full): nobody else starts a log in it now.
                g.cached = None;
            }
        }
        if place.is_none() {
            if let Some(sp) = g.spare {
                // Invariant 7: the spare page is un-named in the mtr that starts a log in it.
                let h = mtr.x_latch(sys(sp))?;
                debug_assert_eq!(get_u16(mtr.page(h), UP_NLOGS), 0);
                mtr.write(h, UP_KIND, &u16::from(kind.code()).to_le_bytes())?;
                mtr.write(h, UP_NLOGS, &1u16.to_le_bytes())?;
                mtr.write_u32(rs, self.spare_at, NO_PAGE)?;
                g.spare = None;
                place = Some((sp, h, UP_END));
            }
        }
        let (page, h, o) = match place {
            Some(p) => p,
            None => {
                let p = engine.alloc_page(&mut mtr, SpaceId::SYSTEM)?;
                let s = mtr.create_page(sys(p), PageType::Undo)?;
                mtr.write(s, UP_KIND, &u16::from(kind.code()).to_le_bytes())?;
                mtr.write(s, UP_FLAGS, &FLAG_HEADER_PAGE.to_le_bytes())?;
                mtr.write(s, UP_NLOGS, &1u16.to_le_bytes())?;
                (p, s, UP_END)
            }
        };
        let end = o + need;
        let mut hdr = [0u8; LH_SIZE];
        hdr[LH_TRX..LH_TRX + 8].copy_from_slice(&undo.trx.0.to_le_bytes());
        hdr[LH_STATE] = STATE_ACTIVE;
        hdr[LH_KIND] = kind.code();
        hdr[LH_LAST..LH_LAST + 4].copy_from_slice(&page.0.to_le_bytes());
        hdr[LH_END..LH_END + 2].copy_from_slice(&(end as u16).to_le_bytes());
        hdr[LH_NEXT_UNDO..LH_NEXT_UNDO + 8].copy_from_slice(&next_no.to_le_bytes());
        let mut bytes = hdr.to_vec();
        bytes.extend_from_slice(rec);
        mtr.write(h, o, &bytes)?;
        mtr.write(h, UP_FREE, &(end as u16).to_le_bytes())?;
        write_ref(&mut mtr, rs, slot_at(slot), (page, o as u16))?;
        let lsn = mtr.commit()?.unwrap_or(Lsn::ZERO);
        drop(g);
        undo.logs[kind.idx()] = Some(LogRef {
            page,
            off: o as u16,
            last: page,
        });
        Ok((page, o + LH_SIZE, lsn))
    }

    /// Reads one record (version building, rollback).
    pub fn read(&self, engine: &Engine, ptr: RollPtr) -> Result<UndoRecord> {
        let g = undo_page(engine, ptr.page_no())?;
        let at = ptr.offset() as usize;
        let free = get_u16(&g, UP_FREE) as usize;
        if at < UP_END || at >= free {
            return Err(corrupt(
                ptr.page_no(),
                format!("a roll pointer to offset {at}"),
            ));
        }
        parse_record(ptr.page_no(), &g, at)
    }

    /// A log's continuation pages, in order.
    fn cont_pages(&self, engine: &Engine, first: PageNo) -> Result<Vec<PageNo>> {
        let mut out = Vec::new();
        let mut at = first;
        while at.0 != NO_PAGE {
            if out.len() > 1 << 24 {
                return Err(corrupt(first, "an undo log that does not end"));
            }
            out.push(at);
            at = PageNo(get_u32(&undo_page(engine, at)?, UP_NEXT));
        }
        Ok(out)
    }

    /// The records of the log at (page, off), oldest first (rseg part of the pointers 0).
    fn log_records(
        &self,
        engine: &Engine,
        page: PageNo,
        off: u16,
        rseg: u8,
    ) -> Result<Vec<(RollPtr, UndoRecord)>> {
        let (cont, mut out) = {
            let g = undo_page(engine, page)?;
            let lh = log_header(page, &g, off)?;
            let recs = records_in(page, &g, off as usize + LH_SIZE, lh.end as usize)?;
            let out: Vec<(RollPtr, UndoRecord)> = recs
                .into_iter()
                .map(|(at, r)| (RollPtr::new(r.kind == UndoKind::Insert, rseg, page, at), r))
                .collect();
            (lh.cont, out)
        };
        for p in self.cont_pages(engine, cont)? {
            let g = undo_page(engine, p)?;
            let free = get_u16(&g, UP_FREE) as usize;
            for (at, r) in records_in(p, &g, UP_END, free)? {
                out.push((RollPtr::new(r.kind == UndoKind::Insert, rseg, p, at), r));
            }
        }
        Ok(out)
    }

    /// Every record of the transaction (both logs), newest first.
    pub fn records_rev(
        &self,
        engine: &Engine,
        undo: &TrxUndo,
    ) -> Result<Vec<(RollPtr, UndoRecord)>> {
        let mut all = Vec::new();
        for log in undo.logs.iter().flatten() {
            all.extend(self.log_records(engine, log.page, log.off, undo.rseg)?);
        }
        all.sort_by_key(|r| std::cmp::Reverse(r.1.undo_no));
        Ok(all)
    }

    /// Frees a log's pages within `mtr`: its continuation pages, and its header page when
    /// no other log has a header there (invariant 6). That page becomes the rseg's spare
    /// instead when `spare_to` (the latched rseg header) is given: the caller gives it when
    /// the rseg has no spare (invariant 7).
    fn free_log(
        &self,
        engine: &Engine,
        mtr: &mut Mtr<'_>,
        h: Slot,
        log: LogRef,
        conts: &[PageNo],
        spare_to: Option<Slot>,
    ) -> Result<HeaderPage> {
        for p in conts {
            engine.free_page(mtr, sys(*p))?;
        }
        let n = get_u16(mtr.page(h), UP_NLOGS);
        if n > 1 {
            mtr.write(h, UP_NLOGS, &(n - 1).to_le_bytes())?;
            return Ok(HeaderPage::Kept);
        }
        match spare_to {
            Some(rs) => {
                mtr.write(h, UP_NLOGS, &0u16.to_le_bytes())?;
                mtr.write(h, UP_FREE, &(UP_END as u16).to_le_bytes())?;
                mtr.write_u32(rs, self.spare_at, log.page.0)?;
                Ok(HeaderPage::Spared)
            }
            None => {
                engine.free_page(mtr, sys(log.page))?;
                Ok(HeaderPage::Freed)
            }
        }
    }

    /// Commit, in one mtr: the insert log is freed, the update log marked committed with
    /// `trx_no` and appended to its rseg's history list; its header page, if it has room
    /// left, becomes the rseg's cached page. `None`: nothing was written.
    pub fn commit(&self, engine: &Engine, undo: TrxUndo, trx_no: u64) -> Result<Option<Lsn>> {
        if undo.is_empty() {
            return Ok(None);
        }
        let insert_conts = match undo.logs[0] {
            Some(l) => {
                let g = undo_page(engine, l.page)?;
                let cont = log_header(l.page, &g, l.off)?.cont;
                drop(g);
                self.cont_pages(engine, cont)?
            }
            None => Vec::new(),
        };
        let mut g = self.rsegs[undo.rseg as usize].lock();
        let rpage = self.rseg_page(engine, &mut g, undo.rseg)?;
        let mut mtr = engine.mtr();
        let rs = mtr.x_latch(sys(rpage))?;
        let mut cache = None;
        if let Some(l) = undo.logs[1] {
            let h = mtr.x_latch(sys(l.page))?;
            let o = l.off as usize;
            let mut b = [0u8; 9];
            b[0] = STATE_COMMITTED;
            b[1..].copy_from_slice(&trx_no.to_le_bytes());
            mtr.write(h, o + LH_STATE, &b[..1])?;
            mtr.write(h, o + LH_TRX_NO, &b[1..])?;
            let tail = read_ref(mtr.page(rs), RS_HIST_TAIL);
            if tail.0 .0 == NO_PAGE {
                write_ref(&mut mtr, rs, RS_HIST_HEAD, (l.page, l.off))?;
            } else {
                let t = if tail.0 == l.page {
                    h
                } else {
                    mtr.x_latch(sys(tail.0))?
                };
                write_ref(&mut mtr, t, tail.1 as usize + LH_HIST_PAGE, (l.page, l.off))?;
            }
            write_ref(&mut mtr, rs, RS_HIST_TAIL, (l.page, l.off))?;
            let len = get_u64(mtr.page(rs), RS_HIST_LEN);
            mtr.write_u64(rs, RS_HIST_LEN, len + 1)?;
            self.clear_slot(&mut mtr, rs, (l.page, l.off))?;
            // Room for another small log: the next update log of this rseg starts here.
            let free = get_u16(mtr.page(h), UP_FREE) as usize;
            if free + self.page_size / 8 <= self.page_end() {
                cache = Some(l.page);
            }
        }
        let mut spared = None;
        if let Some(l) = undo.logs[0] {
            let h = mtr.x_latch(sys(l.page))?;
            self.clear_slot(&mut mtr, rs, (l.page, l.off))?;
            let spare_to = g.spare.is_none().then_some(rs);
            if self.free_log(engine, &mut mtr, h, l, &insert_conts, spare_to)? == HeaderPage::Spared
            {
                spared = Some(l.page);
            }
        }
        let lsn = mtr.commit()?;
        if spared.is_some() {
            g.spare = spared;
        }
        if undo.logs[1].is_some() {
            g.history += 1;
            self.history_len.fetch_add(1, Ordering::Relaxed);
            if g.cached.is_none() {
                g.cached = cache;
            }
        }
        Ok(lsn)
    }

    fn clear_slot(&self, mtr: &mut Mtr<'_>, rs: Slot, log: (PageNo, u16)) -> Result<()> {
        let slot = (0..self.slots)
            .find(|s| read_ref(mtr.page(rs), slot_at(*s)) == log)
            .ok_or_else(|| corrupt(log.0, "an active log missing from its rseg's slots"))?;
        write_ref(mtr, rs, slot_at(slot), NO_REF)
    }

    /// After a rollback to a savepoint: drops the records numbered `keep_from` and up
    /// (their space is reused by later appends).
    pub fn truncate(&self, engine: &Engine, undo: &mut TrxUndo, keep_from: u64) -> Result<()> {
        for k in 0..2 {
            let Some(log) = undo.logs[k] else { continue };
            let recs = self.log_records(engine, log.page, log.off, undo.rseg)?;
            let Some((cut, _)) = recs.iter().find(|(_, r)| r.undo_no >= keep_from) else {
                continue;
            };
            let (cut_page, cut_at) = (cut.page_no(), cut.offset());
            let cont = {
                let g = undo_page(engine, log.page)?;
                log_header(log.page, &g, log.off)?.cont
            };
            let conts = self.cont_pages(engine, cont)?;
            let mut mtr = engine.mtr();
            let h = mtr.x_latch(sys(log.page))?;
            let o = log.off as usize;
            let at = cut_at.to_le_bytes();
            let (drop_from, last) = if cut_page == log.page {
                mtr.write(h, UP_FREE, &at)?;
                mtr.write(h, o + LH_END, &at)?;
                mtr.write_u32(h, o + LH_CONT, NO_PAGE)?;
                (0, log.page)
            } else {
                let i = conts
                    .iter()
                    .position(|p| *p == cut_page)
                    .ok_or_else(|| corrupt(cut_page, "a record in no page of its log"))?;
                let c = mtr.x_latch(sys(cut_page))?;
                mtr.write(c, UP_FREE, &at)?;
                mtr.write_u32(c, UP_NEXT, NO_PAGE)?;
                (i + 1, cut_page)
            };
            mtr.write_u32(h, o + LH_LAST, last.0)?;
            mtr.write_u64(h, o + LH_NEXT_UNDO, keep_from)?;
            for p in &conts[drop_from..] {
                engine.free_page(&mut mtr, sys(*p))?;
            }
            mtr.commit()?;
            undo.logs[k] = Some(LogRef { last, ..log });
        }
        undo.next_undo_no = undo.next_undo_no.min(keep_from);
        Ok(())
    }

    /// After a full rollback: frees both logs and clears their slots, in one mtr.
    pub fn discard(&self, engine: &Engine, undo: TrxUndo) -> Result<Option<Lsn>> {
        if undo.is_empty() {
            return Ok(None);
        }
        let mut conts = Vec::new();
        for l in undo.logs.iter().flatten() {
            let cont = {
                let g = undo_page(engine, l.page)?;
                log_header(l.page, &g, l.off)?.cont
            };
            conts.push((*l, self.cont_pages(engine, cont)?));
        }
        let mut g = self.rsegs[undo.rseg as usize].lock();
        let rpage = self.rseg_page(engine, &mut g, undo.rseg)?;
        let mut mtr = engine.mtr();
        let rs = mtr.x_latch(sys(rpage))?;
        // Every header page before the allocation metadata that freeing latches.
        let mut latched = Vec::new();
        for (l, _) in &conts {
            latched.push(mtr.x_latch(sys(l.page))?);
        }
        let mut spared = None;
        for ((l, cs), h) in conts.iter().zip(latched) {
            self.clear_slot(&mut mtr, rs, (l.page, l.off))?;
            let spare_to = (g.spare.is_none() && spared.is_none()).then_some(rs);
            match self.free_log(engine, &mut mtr, h, *l, cs, spare_to)? {
                HeaderPage::Kept => {
                    // Other logs' headers are in the page: give back this log's space (it
                    // was the newest there, invariant 6) and offer the page for the next log.
                    mtr.write(h, UP_FREE, &l.off.to_le_bytes())?;
                    if g.cached.is_none() {
                        g.cached = Some(l.page);
                    }
                }
                HeaderPage::Spared => spared = Some(l.page),
                HeaderPage::Freed => {}
            }
        }
        let lsn = mtr.commit()?;
        if spared.is_some() {
            g.spare = spared;
        }
        Ok(lsn)
    }

    /// Innodb_history_list_length.
    pub fn history_len(&self) -> u64 {
        self.history_len.load(Ordering::Relaxed)
    }

    /// Up to `n` of the oldest history logs with trx_no below `below_trx_no`: each rseg's
    /// list from its head (in list order), merged across rsegs by trx_no. Reads one log
    /// header per rseg, then one per log taken (a lazy k-way merge).
    pub fn history_batch(
        &self,
        engine: &Engine,
        n: usize,
        below_trx_no: u64,
    ) -> Result<Vec<HistoryLog>> {
        let header = |r: usize, at: (PageNo, u16)| -> Result<Option<(HistoryLog, (PageNo, u16))>> {
            if at.0 .0 == NO_PAGE {
                return Ok(None);
            }
            let g = undo_page(engine, at.0)?;
            let lh = log_header(at.0, &g, at.1)?;
            if lh.trx_no >= below_trx_no {
                return Ok(None);
            }
            Ok(Some((
                HistoryLog {
                    trx_id: lh.trx,
                    trx_no: lh.trx_no,
                    rseg: r as u8,
                    first_page: at.0,
                    offset: at.1,
                },
                lh.hist,
            )))
        };
        let mut heads = Vec::new();
        for (r, m) in self.rsegs.iter().enumerate() {
            let (page, len) = {
                let g = m.lock();
                (g.page, g.history)
            };
            let Some(page) = page else { continue };
            if len == 0 {
                continue;
            }
            let head = read_ref(&undo_page(engine, page)?, RS_HIST_HEAD);
            if let Some(c) = header(r, head)? {
                heads.push(c);
            }
        }
        let mut out = Vec::new();
        while out.len() < n {
            let Some(best) = heads
                .iter()
                .enumerate()
                .min_by_key(|(_, (h, _))| h.trx_no)
                .map(|(i, _)| i)
            else {
                break;
            };
            let (log, next) = heads.swap_remove(best);
            let r = log.rseg as usize;
            out.push(log);
            if out.len() < n {
                if let Some(c) = header(r, next)? {
                    heads.push(c);
                }
            }
        }
        Ok(out)
    }

    /// The records of a history log, oldest first.
    pub fn history_records(
        &self,
        engine: &Engine,
        log: &HistoryLog,
    ) -> Result<Vec<(RollPtr, UndoRecord)>> {
        self.log_records(engine, log.first_page, log.offset, log.rseg)
    }

    /// Removes a history log (the head of its rseg's list) and frees its pages, in one
    /// mtr (its header page only once no other log's header is in it).
    pub fn history_remove(&self, engine: &Engine, log: &HistoryLog) -> Result<Lsn> {
        let cont = {
            let g = undo_page(engine, log.first_page)?;
            log_header(log.first_page, &g, log.offset)?.cont
        };
        let conts = self.cont_pages(engine, cont)?;
        let mut g = self.rsegs[log.rseg as usize].lock();
        let rpage = self.rseg_page(engine, &mut g, log.rseg)?;
        let mut mtr = engine.mtr();
        let rs = mtr.x_latch(sys(rpage))?;
        let me = (log.first_page, log.offset);
        let head = read_ref(mtr.page(rs), RS_HIST_HEAD);
        if head != me {
            return Err(corrupt(
                log.first_page,
                format!("history removal of a log that is not the head ({head:?})"),
            ));
        }
        let h = mtr.x_latch(sys(log.first_page))?;
        let next = log_header(log.first_page, mtr.page(h), log.offset)?.hist;
        write_ref(&mut mtr, rs, RS_HIST_HEAD, next)?;
        if next.0 .0 == NO_PAGE {
            write_ref(&mut mtr, rs, RS_HIST_TAIL, NO_REF)?;
        }
        let len = get_u64(mtr.page(rs), RS_HIST_LEN);
        mtr.write_u64(rs, RS_HIST_LEN, len.saturating_sub(1))?;
        // Mark the header gone (a verify or a second removal would see it).
        mtr.write(h, log.offset as usize + LH_STATE, &[0])?;
        let lref = LogRef {
            page: log.first_page,
            off: log.offset,
            last: log.first_page,
        };
        let spare_to = g.spare.is_none().then_some(rs);
        let page = self.free_log(engine, &mut mtr, h, lref, &conts, spare_to)?;
        let lsn = mtr.commit()?.unwrap_or(Lsn::ZERO);
        if page != HeaderPage::Kept && g.cached == Some(log.first_page) {
            g.cached = None;
        }
        if page == HeaderPage::Spared {
            g.spare = Some(log.first_page);
        }
        g.history = g.history.saturating_sub(1);
        self.history_len.fetch_sub(1, Ordering::Relaxed);
        Ok(lsn)
    }

    /// Every live log of rseg `r` as (page, offset, active), and the header page.
    fn logs_of(&self, engine: &Engine, r: usize) -> Result<Option<RsegLogs>> {
        let Some(page) = self.rsegs[r].lock().page else {
            return Ok(None);
        };
        let h = undo_page(engine, page)?.to_vec();
        let mut out = Vec::new();
        for s in 0..self.slots {
            let (p, o) = read_ref(&h, slot_at(s));
            if p.0 != NO_PAGE {
                out.push((p, o, true));
            }
        }
        let mut at = read_ref(&h, RS_HIST_HEAD);
        let mut n = 0u64;
        while at.0 .0 != NO_PAGE {
            out.push((at.0, at.1, false));
            n += 1;
            if n > 1 << 32 {
                return Err(corrupt(page, "a history list that does not end"));
            }
            let g = undo_page(engine, at.0)?;
            at = log_header(at.0, &g, at.1)?.hist;
        }
        Ok(Some((page, out)))
    }

    /// Every page the undo system uses: TRX_SYS, rseg headers, every log's pages.
    pub fn pages(&self, engine: &Engine) -> Result<Vec<PageNo>> {
        let mut out: BTreeSet<PageNo> = BTreeSet::from([TRX_SYS_PAGE]);
        for r in 0..RSEGS {
            let Some((page, logs)) = self.logs_of(engine, r)? else {
                continue;
            };
            out.insert(page);
            {
                let g = self.rsegs[r].lock();
                out.extend(g.cached);
                out.extend(g.spare);
            }
            for (p, o, _) in logs {
                out.insert(p);
                let cont = log_header(p, &undo_page(engine, p)?, o)?.cont;
                out.extend(self.cont_pages(engine, cont)?);
            }
        }
        Ok(out.into_iter().collect())
    }

    /// Structural check: magic numbers, headers, records parse, list lengths and states
    /// agree, each header page's log count matches, no page in two logs. Problems name
    /// page numbers.
    pub fn verify(&self, engine: &Engine) -> Result<Vec<String>> {
        let mut problems = Vec::new();
        let mut conts_seen = BTreeSet::new();
        let mut headers: HashMap<PageNo, u16> = HashMap::new();
        let mut spares = Vec::new();
        for r in 0..RSEGS {
            // The spare as the rseg has it and as its header page names it, read together
            // under the rseg mutex (a live server changes both under it: invariant 7).
            let (page, spare, on_disk) = {
                let g = self.rsegs[r].lock();
                let Some(page) = g.page else { continue };
                let on_disk = get_u32(&undo_page(engine, page)?, self.spare_at);
                (page, g.spare, PageNo(on_disk))
            };
            let h = undo_page(engine, page)?.to_vec();
            if get_u32(&h, RS_MAGIC) != RS_MAGIC_VALUE {
                problems.push(format!("undo: rseg {r} header page {page}: bad magic"));
                continue;
            }
            if spare.unwrap_or(PageNo(NO_PAGE)) != on_disk {
                problems.push(format!(
                    "undo: rseg {r}: spare page {on_disk} on disk, {spare:?} in memory"
                ));
            }
            if on_disk.0 != NO_PAGE {
                spares.push(on_disk);
            }
            let logs = match self.logs_of(engine, r) {
                Ok(Some((_, l))) => l,
                Ok(None) => continue,
                Err(e) => {
                    problems.push(format!("undo: rseg {r}: {e}"));
                    continue;
                }
            };
            let n_hist = logs.iter().filter(|l| !l.2).count() as u64;
            if n_hist != get_u64(&h, RS_HIST_LEN) {
                problems.push(format!(
                    "undo: rseg {r}: history length {} but {n_hist} logs listed",
                    get_u64(&h, RS_HIST_LEN)
                ));
            }
            let last_hist = logs.iter().rev().find(|l| !l.2).map(|l| (l.0, l.1));
            if last_hist.unwrap_or(NO_REF) != read_ref(&h, RS_HIST_TAIL) {
                problems.push(format!(
                    "undo: rseg {r}: the history tail is not the list's end"
                ));
            }
            for (p, o, active) in logs {
                *headers.entry(p).or_default() += 1;
                let g = undo_page(engine, p)?;
                let lh = match log_header(p, &g, o) {
                    Ok(lh) => lh,
                    Err(e) => {
                        problems.push(format!("undo: {e}"));
                        continue;
                    }
                };
                let want = if active {
                    STATE_ACTIVE
                } else {
                    STATE_COMMITTED
                };
                if lh.state != want || (!active && lh.kind != UndoKind::Update) {
                    problems.push(format!(
                        "undo: log at page {p} offset {o}: state {} kind {:?}",
                        lh.state, lh.kind
                    ));
                }
                if let Err(e) = records_in(p, &g, o as usize + LH_SIZE, lh.end as usize) {
                    problems.push(format!("undo: {e}"));
                }
                drop(g);
                match self.cont_pages(engine, lh.cont) {
                    Ok(cs) => {
                        for c in cs {
                            if !conts_seen.insert(c) {
                                problems.push(format!("undo: page {c} is in two logs"));
                            }
                            let g = undo_page(engine, c)?;
                            let free = get_u16(&g, UP_FREE) as usize;
                            if let Err(e) = records_in(c, &g, UP_END, free) {
                                problems.push(format!("undo: {e}"));
                            }
                        }
                    }
                    Err(e) => problems.push(format!("undo: {e}")),
                }
            }
        }
        for (&p, &n) in &headers {
            let have = get_u16(&undo_page(engine, p)?, UP_NLOGS);
            if have != n {
                problems.push(format!(
                    "undo: header page {p} counts {have} logs, {n} are listed"
                ));
            }
            if conts_seen.contains(&p) {
                problems.push(format!(
                    "undo: page {p} is both a header and a continuation page"
                ));
            }
        }
        // Invariant 7: a spare page holds no log and is in no log.
        let mut seen_spares = BTreeSet::new();
        for p in spares {
            if !seen_spares.insert(p) || headers.contains_key(&p) || conts_seen.contains(&p) {
                problems.push(format!("undo: spare page {p} is also used elsewhere"));
            }
            let n = get_u16(&undo_page(engine, p)?, UP_NLOGS);
            if n != 0 {
                problems.push(format!("undo: spare page {p} counts {n} logs"));
            }
        }
        Ok(problems)
    }
}
