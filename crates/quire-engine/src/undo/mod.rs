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
//!  undo log = chain of undo pages; its first page has the log header:
//!  kind, trx id, state (active/committed), trx_no, last page, next undo_no,
//!  next log in the history list. Records never span pages.
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

use std::collections::BTreeMap;
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
    #[error("all {0} undo slots of rollback segment are in use: too many concurrent transactions")]
    NoSlot(usize),
    #[error("the system space has no TRX_SYS page at page 2 (a data directory from before transactions?)")]
    NoTrxSys,
}

pub type Result<T> = std::result::Result<T, UndoError>;

fn corrupt(page: PageNo, what: impl Into<String>) -> UndoError {
    UndoError::Corrupt {
        page,
        what: what.into(),
    }
}

/// TRX_SYS is the first page allocated after the catalog root (page 1).
pub const TRX_SYS_PAGE: PageNo = PageNo(2);
const RSEGS: usize = RollPtr::RSEGS as usize;

// TRX_SYS layout (offsets from the page start).
const TS_MAGIC: usize = HEADER_SIZE;
const TS_MAX_TRX_ID: usize = TS_MAGIC + 4;
const TS_RSEGS: usize = TS_MAX_TRX_ID + 8;
const TS_MAGIC_VALUE: u32 = 0x5154_5253; // "QTRS"

// Rollback segment header layout.
const RS_MAGIC: usize = HEADER_SIZE;
const RS_HIST_HEAD: usize = RS_MAGIC + 4;
const RS_HIST_TAIL: usize = RS_HIST_HEAD + 4;
const RS_HIST_LEN: usize = RS_HIST_TAIL + 4;
const RS_SLOTS: usize = RS_HIST_LEN + 8;
const RS_MAGIC_VALUE: u32 = 0x5152_5347; // "QRSG"
const NO_PAGE: u32 = 0;

// Every undo page: kind, free offset, next page.
const UP_KIND: usize = HEADER_SIZE;
const UP_FREE: usize = UP_KIND + 2;
const UP_NEXT: usize = UP_FREE + 2;
const UP_END: usize = UP_NEXT + 4;
// The first page of a log also has the log header.
const LH_TRX: usize = UP_END;
const LH_STATE: usize = LH_TRX + 8;
const LH_TRX_NO: usize = LH_STATE + 8;
const LH_LAST: usize = LH_TRX_NO + 8;
const LH_NEXT_UNDO: usize = LH_LAST + 4;
const LH_HIST_NEXT: usize = LH_NEXT_UNDO + 8;
const LH_END: usize = LH_HIST_NEXT + 4;

const STATE_ACTIVE: u64 = 1;
const STATE_COMMITTED: u64 = 2;

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
    fn code(self) -> u16 {
        match self {
            UndoKind::Insert => 1,
            UndoKind::Update => 2,
        }
    }
    fn from_code(c: u16) -> Option<UndoKind> {
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

#[derive(Debug, Clone, Copy)]
struct LogRef {
    first: PageNo,
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
}

/// The undo system of an open data directory. Shared by every session (Send + Sync).
pub struct UndoSys {
    rsegs: Vec<Mutex<Rseg>>,
    history_len: AtomicU64,
    slots: usize,
    page_size: usize,
}

fn sys(p: PageNo) -> PageId {
    PageId::new(SpaceId::SYSTEM, p)
}

/// The records of one log page, in order, with their offsets.
fn page_records(page_no: PageNo, p: &[u8]) -> Result<Vec<(u16, UndoRecord)>> {
    let kind = UndoKind::from_code(get_u16(p, UP_KIND) & 0xFF)
        .ok_or_else(|| corrupt(page_no, "not an undo log page"))?;
    let free = get_u16(p, UP_FREE) as usize;
    let start = if first_flag(p) { LH_END } else { UP_END };
    if free < start || free > p.len() - TRAILER_SIZE {
        return Err(corrupt(page_no, format!("free offset {free}")));
    }
    let mut out = Vec::new();
    let mut at = start;
    while at < free {
        let r = parse_record(page_no, p, at)?;
        if r.kind != kind {
            return Err(corrupt(page_no, "a record of the other log kind"));
        }
        let len = REC_HEADER + r.payload.len();
        out.push((at as u16, r));
        at += len;
    }
    if at != free {
        return Err(corrupt(page_no, "records overrun the free offset"));
    }
    Ok(out)
}

/// The first page of a log carries bit 0x100 in its kind field.
fn first_flag(p: &[u8]) -> bool {
    p[UP_KIND + 1] & 0x01 != 0
}

fn parse_record(page_no: PageNo, p: &[u8], at: usize) -> Result<UndoRecord> {
    let end = p.len() - TRAILER_SIZE;
    if at + REC_HEADER > end {
        return Err(corrupt(page_no, format!("record at {at} past the page")));
    }
    let kind = match p[at] {
        1 => UndoKind::Insert,
        2 => UndoKind::Update,
        k => return Err(corrupt(page_no, format!("record kind {k} at {at}"))),
    };
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

fn encode_record(kind: UndoKind, undo_no: u64, table_id: u64, payload: &[u8]) -> Vec<u8> {
    let mut r = Vec::with_capacity(REC_HEADER + payload.len());
    r.push(kind.code() as u8);
    r.extend_from_slice(&undo_no.to_le_bytes());
    r.extend_from_slice(&table_id.to_le_bytes());
    r.extend_from_slice(&(payload.len() as u16).to_le_bytes());
    r.extend_from_slice(payload);
    r
}

/// A log's header, read from its first page.
#[derive(Debug, Clone, Copy)]
struct LogHeader {
    kind: UndoKind,
    trx: TrxId,
    state: u64,
    trx_no: u64,
    last: PageNo,
    next_undo_no: u64,
    hist_next: PageNo,
}

fn log_header(page_no: PageNo, p: &[u8]) -> Result<LogHeader> {
    if !first_flag(p) {
        return Err(corrupt(page_no, "not the first page of an undo log"));
    }
    let kind = UndoKind::from_code(get_u16(p, UP_KIND) & 0xFF)
        .ok_or_else(|| corrupt(page_no, "not an undo log page"))?;
    Ok(LogHeader {
        kind,
        trx: TrxId(get_u64(p, LH_TRX)),
        state: get_u64(p, LH_STATE),
        trx_no: get_u64(p, LH_TRX_NO),
        last: PageNo(get_u32(p, LH_LAST)),
        next_undo_no: get_u64(p, LH_NEXT_UNDO),
        hist_next: PageNo(get_u32(p, LH_HIST_NEXT)),
    })
}

impl UndoSys {
    fn max_record(&self) -> usize {
        self.page_size - TRAILER_SIZE - LH_END
    }

    fn read_page(&self, engine: &Engine, p: PageNo) -> Result<Vec<u8>> {
        let g = engine.pool().get_shared(sys(p))?;
        let h = crate::page::Header::new(&g);
        if h.page_type() != Some(PageType::Undo) {
            return Err(corrupt(p, "not an undo page"));
        }
        Ok(g.to_vec())
    }

    /// Opens TRX_SYS and the rsegs (creating TRX_SYS on a fresh directory), finds the
    /// active logs (transactions to roll back) and the history lists. Call after the
    /// catalog is open.
    pub fn open(engine: &Engine) -> Result<(UndoSys, Recovered)> {
        let page_size = engine.page_size().bytes();
        let slots = ((page_size - TRAILER_SIZE - RS_SLOTS) / 4).min(1024);
        let me = UndoSys {
            rsegs: (0..RSEGS)
                .map(|_| {
                    Mutex::new(Rseg {
                        page: None,
                        history: 0,
                    })
                })
                .collect(),
            history_len: AtomicU64::new(0),
            slots,
            page_size,
        };
        if !engine.page_is_used(sys(TRX_SYS_PAGE))? {
            let mut mtr = engine.mtr();
            let p = engine.alloc_page(&mut mtr, SpaceId::SYSTEM)?;
            if p != TRX_SYS_PAGE {
                return Err(UndoError::NoTrxSys);
            }
            let s = mtr.create_page(sys(p), PageType::Undo)?;
            mtr.write_u32(s, TS_MAGIC, TS_MAGIC_VALUE)?;
            mtr.write_u64(s, TS_MAX_TRX_ID, 0)?;
            if let Some(lsn) = mtr.commit()? {
                engine.commit_wait(lsn);
            }
        }
        let ts = me.read_page(engine, TRX_SYS_PAGE)?;
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
            let h = me.read_page(engine, page)?;
            if get_u32(&h, RS_MAGIC) != RS_MAGIC_VALUE {
                return Err(corrupt(page, "not a rollback segment header"));
            }
            let mut len = 0;
            let mut at = PageNo(get_u32(&h, RS_HIST_HEAD));
            while at.0 != NO_PAGE {
                let lp = me.read_page(engine, at)?;
                let lh = log_header(at, &lp)?;
                max_id = max_id.max(lh.trx.0);
                max_no = max_no.max(lh.trx_no);
                len += 1;
                at = lh.hist_next;
            }
            for s in 0..me.slots {
                let first = get_u32(&h, RS_SLOTS + s * 4);
                if first == NO_PAGE {
                    continue;
                }
                let first = PageNo(first);
                let lp = me.read_page(engine, first)?;
                let lh = log_header(first, &lp)?;
                max_id = max_id.max(lh.trx.0);
                let u = active.entry(lh.trx).or_insert_with(|| TrxUndo::new(lh.trx));
                if u.rseg as usize != r {
                    return Err(corrupt(
                        first,
                        "an active log in the wrong rollback segment",
                    ));
                }
                u.logs[lh.kind.idx()] = Some(LogRef {
                    first,
                    last: lh.last,
                });
                u.next_undo_no = u.next_undo_no.max(lh.next_undo_no);
            }
            let mut g = me.rsegs[r].lock();
            g.page = Some(page);
            g.history = len;
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

    /// The header page of rseg `r`, made on first use.
    fn rseg_page(&self, engine: &Engine, r: u8) -> Result<PageNo> {
        let mut g = self.rsegs[r as usize].lock();
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
        let rec = encode_record(kind, undo.next_undo_no, table_id, payload);
        if rec.len() > self.max_record() || payload.len() > self.page_size / 2 {
            return Err(UndoError::TooLarge(payload.len()));
        }
        let next_no = undo.next_undo_no + 1;
        let (ptr, lsn) = match undo.logs[kind.idx()] {
            None => self.create_log(engine, undo, kind, &rec, next_no)?,
            Some(log) => {
                let mut mtr = engine.mtr();
                let first = mtr.x_latch(sys(log.first))?;
                let last = if log.last == log.first {
                    first
                } else {
                    mtr.x_latch(sys(log.last))?
                };
                let free = get_u16(mtr.page(last), UP_FREE) as usize;
                let end = self.page_size - TRAILER_SIZE;
                let (page, at) = if free + rec.len() <= end {
                    mtr.write(last, free, &rec)?;
                    mtr.write(last, UP_FREE, &((free + rec.len()) as u16).to_le_bytes())?;
                    (log.last, free)
                } else {
                    // A new page at the end of the log.
                    let p = engine.alloc_page(&mut mtr, SpaceId::SYSTEM)?;
                    let s = mtr.create_page(sys(p), PageType::Undo)?;
                    mtr.write(s, UP_KIND, &kind.code().to_le_bytes())?;
                    mtr.write(s, UP_FREE, &((UP_END + rec.len()) as u16).to_le_bytes())?;
                    mtr.write(s, UP_END, &rec)?;
                    mtr.write_u32(last, UP_NEXT, p.0)?;
                    mtr.write_u32(first, LH_LAST, p.0)?;
                    undo.logs[kind.idx()] = Some(LogRef {
                        first: log.first,
                        last: p,
                    });
                    (p, UP_END)
                };
                mtr.write_u64(first, LH_NEXT_UNDO, next_no)?;
                let lsn = mtr.commit()?.unwrap_or(Lsn::ZERO);
                (
                    RollPtr::new(kind == UndoKind::Insert, undo.rseg, page, at as u16),
                    lsn,
                )
            }
        };
        undo.next_undo_no = next_no;
        Ok((ptr, lsn))
    }

    /// Makes the log of `kind` with its first record, registered in a free slot.
    fn create_log(
        &self,
        engine: &Engine,
        undo: &mut TrxUndo,
        kind: UndoKind,
        rec: &[u8],
        next_no: u64,
    ) -> Result<(RollPtr, Lsn)> {
        let rpage = self.rseg_page(engine, undo.rseg)?;
        let mut mtr = engine.mtr();
        let rs = mtr.x_latch(sys(rpage))?;
        let slot = (0..self.slots)
            .find(|s| get_u32(mtr.page(rs), RS_SLOTS + s * 4) == NO_PAGE)
            .ok_or(UndoError::NoSlot(self.slots))?;
        let p = engine.alloc_page(&mut mtr, SpaceId::SYSTEM)?;
        let s = mtr.create_page(sys(p), PageType::Undo)?;
        write_first_header(&mut mtr, s, kind, undo.trx, p, next_no, rec.len())?;
        mtr.write(s, LH_END, rec)?;
        mtr.write_u32(rs, RS_SLOTS + slot * 4, p.0)?;
        let lsn = mtr.commit()?.unwrap_or(Lsn::ZERO);
        undo.logs[kind.idx()] = Some(LogRef { first: p, last: p });
        Ok((
            RollPtr::new(kind == UndoKind::Insert, undo.rseg, p, LH_END as u16),
            lsn,
        ))
    }

    /// Reads one record (version building, rollback).
    pub fn read(&self, engine: &Engine, ptr: RollPtr) -> Result<UndoRecord> {
        let g = engine.pool().get_shared(sys(ptr.page_no()))?;
        let h = crate::page::Header::new(&g);
        if h.page_type() != Some(PageType::Undo) {
            return Err(corrupt(
                ptr.page_no(),
                "a roll pointer into a page that is not undo",
            ));
        }
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

    /// The pages of a log, first to last.
    fn log_pages(&self, engine: &Engine, first: PageNo) -> Result<Vec<PageNo>> {
        let mut out = vec![first];
        let mut at = first;
        loop {
            let g = engine.pool().get_shared(sys(at))?;
            let next = get_u32(&g, UP_NEXT);
            if next == NO_PAGE {
                return Ok(out);
            }
            at = PageNo(next);
            if out.len() > 1 << 24 {
                return Err(corrupt(first, "an undo log that does not end"));
            }
            out.push(at);
        }
    }

    /// The records of a log, oldest first.
    fn log_records(&self, engine: &Engine, first: PageNo) -> Result<Vec<(RollPtr, UndoRecord)>> {
        // The rseg part of the roll pointers is filled in by `with_rseg`.
        let mut out = Vec::new();
        for p in self.log_pages(engine, first)? {
            let g = engine.pool().get_shared(sys(p))?;
            for (at, r) in page_records(p, &g)? {
                let insert = r.kind == UndoKind::Insert;
                out.push((RollPtr::new(insert, 0, p, at), r));
            }
        }
        Ok(out)
    }

    fn with_rseg(mut recs: Vec<(RollPtr, UndoRecord)>, rseg: u8) -> Vec<(RollPtr, UndoRecord)> {
        for (p, _) in &mut recs {
            *p = RollPtr::new(p.is_insert(), rseg, p.page_no(), p.offset());
        }
        recs
    }

    /// Every record of the transaction (both logs), newest first.
    pub fn records_rev(
        &self,
        engine: &Engine,
        undo: &TrxUndo,
    ) -> Result<Vec<(RollPtr, UndoRecord)>> {
        let mut all = Vec::new();
        for log in undo.logs.iter().flatten() {
            all.extend(Self::with_rseg(
                self.log_records(engine, log.first)?,
                undo.rseg,
            ));
        }
        all.sort_by_key(|r| std::cmp::Reverse(r.1.undo_no));
        Ok(all)
    }

    /// Commit, in one mtr: the insert log is freed, the update log marked committed with
    /// `trx_no` and appended to its rseg's history list. `None`: nothing was written.
    pub fn commit(&self, engine: &Engine, undo: TrxUndo, trx_no: u64) -> Result<Option<Lsn>> {
        if undo.is_empty() {
            return Ok(None);
        }
        let rpage = self.rseg_page(engine, undo.rseg)?;
        let insert_pages = match undo.logs[0] {
            Some(l) => self.log_pages(engine, l.first)?,
            None => Vec::new(),
        };
        let mut mtr = engine.mtr();
        let rs = mtr.x_latch(sys(rpage))?;
        if let Some(l) = undo.logs[1] {
            let f = mtr.x_latch(sys(l.first))?;
            mtr.write_u64(f, LH_STATE, STATE_COMMITTED)?;
            mtr.write_u64(f, LH_TRX_NO, trx_no)?;
            mtr.write_u32(f, LH_HIST_NEXT, NO_PAGE)?;
            let tail = get_u32(mtr.page(rs), RS_HIST_TAIL);
            if tail == NO_PAGE {
                mtr.write_u32(rs, RS_HIST_HEAD, l.first.0)?;
            } else {
                let t = mtr.x_latch(sys(PageNo(tail)))?;
                mtr.write_u32(t, LH_HIST_NEXT, l.first.0)?;
            }
            mtr.write_u32(rs, RS_HIST_TAIL, l.first.0)?;
            let len = get_u64(mtr.page(rs), RS_HIST_LEN);
            mtr.write_u64(rs, RS_HIST_LEN, len + 1)?;
            self.clear_slot(&mut mtr, rs, l.first)?;
        }
        if let Some(l) = undo.logs[0] {
            self.clear_slot(&mut mtr, rs, l.first)?;
            for p in &insert_pages {
                engine.free_page(&mut mtr, sys(*p))?;
            }
        }
        let lsn = mtr.commit()?;
        if undo.logs[1].is_some() {
            self.rsegs[undo.rseg as usize].lock().history += 1;
            self.history_len.fetch_add(1, Ordering::Relaxed);
        }
        Ok(lsn)
    }

    fn clear_slot(&self, mtr: &mut Mtr<'_>, rs: Slot, first: PageNo) -> Result<()> {
        let slot = (0..self.slots)
            .find(|s| get_u32(mtr.page(rs), RS_SLOTS + s * 4) == first.0)
            .ok_or_else(|| corrupt(first, "an active log missing from its rseg's slots"))?;
        mtr.write_u32(rs, RS_SLOTS + slot * 4, NO_PAGE)?;
        Ok(())
    }

    /// After a rollback to a savepoint: drops the records numbered `keep_from` and up
    /// (their space is reused by later appends).
    pub fn truncate(&self, engine: &Engine, undo: &mut TrxUndo, keep_from: u64) -> Result<()> {
        for k in 0..2 {
            let Some(log) = undo.logs[k] else { continue };
            let pages = self.log_pages(engine, log.first)?;
            // The first record to drop, as (page index, offset).
            let mut cut: Option<(usize, usize)> = None;
            for (i, p) in pages.iter().enumerate() {
                let g = engine.pool().get_shared(sys(*p))?;
                if let Some((at, _)) = page_records(*p, &g)?
                    .into_iter()
                    .find(|(_, r)| r.undo_no >= keep_from)
                {
                    cut = Some((i, at as usize));
                    break;
                }
            }
            let Some((i, at)) = cut else { continue };
            let mut mtr = engine.mtr();
            let first = mtr.x_latch(sys(log.first))?;
            let keep = if i == 0 {
                first
            } else {
                mtr.x_latch(sys(pages[i]))?
            };
            mtr.write(keep, UP_FREE, &(at as u16).to_le_bytes())?;
            mtr.write_u32(keep, UP_NEXT, NO_PAGE)?;
            mtr.write_u32(first, LH_LAST, pages[i].0)?;
            mtr.write_u64(first, LH_NEXT_UNDO, keep_from)?;
            for p in &pages[i + 1..] {
                engine.free_page(&mut mtr, sys(*p))?;
            }
            mtr.commit()?;
            undo.logs[k] = Some(LogRef {
                first: log.first,
                last: pages[i],
            });
        }
        undo.next_undo_no = undo.next_undo_no.min(keep_from);
        Ok(())
    }

    /// After a full rollback: frees both logs and clears their slots, in one mtr.
    pub fn discard(&self, engine: &Engine, undo: TrxUndo) -> Result<Option<Lsn>> {
        if undo.is_empty() {
            return Ok(None);
        }
        let rpage = self.rseg_page(engine, undo.rseg)?;
        let mut pages = Vec::new();
        for l in undo.logs.iter().flatten() {
            pages.push((l.first, self.log_pages(engine, l.first)?));
        }
        let mut mtr = engine.mtr();
        let rs = mtr.x_latch(sys(rpage))?;
        for (first, ps) in &pages {
            self.clear_slot(&mut mtr, rs, *first)?;
            for p in ps {
                engine.free_page(&mut mtr, sys(*p))?;
            }
        }
        Ok(mtr.commit()?)
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
        let header = |r: usize, at: PageNo| -> Result<Option<(HistoryLog, PageNo)>> {
            if at.0 == NO_PAGE {
                return Ok(None);
            }
            let g = engine.pool().get_shared(sys(at))?;
            let lh = log_header(at, &g)?;
            if lh.trx_no >= below_trx_no {
                return Ok(None);
            }
            Ok(Some((
                HistoryLog {
                    trx_id: lh.trx,
                    trx_no: lh.trx_no,
                    rseg: r as u8,
                    first_page: at,
                },
                lh.hist_next,
            )))
        };
        // The next candidate of each rseg, with the page after it.
        let mut heads: Vec<(HistoryLog, PageNo)> = Vec::new();
        for (r, m) in self.rsegs.iter().enumerate() {
            let (page, len) = {
                let g = m.lock();
                (g.page, g.history)
            };
            let Some(page) = page else { continue };
            if len == 0 {
                continue;
            }
            let head = {
                let h = engine.pool().get_shared(sys(page))?;
                PageNo(get_u32(&h, RS_HIST_HEAD))
            };
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
        Ok(Self::with_rseg(
            self.log_records(engine, log.first_page)?,
            log.rseg,
        ))
    }

    /// Removes a history log (the head of its rseg's list) and frees its pages, in one mtr.
    pub fn history_remove(&self, engine: &Engine, log: &HistoryLog) -> Result<Lsn> {
        let rpage = self.rseg_page(engine, log.rseg)?;
        let pages = self.log_pages(engine, log.first_page)?;
        let mut mtr = engine.mtr();
        let rs = mtr.x_latch(sys(rpage))?;
        let head = get_u32(mtr.page(rs), RS_HIST_HEAD);
        if head != log.first_page.0 {
            return Err(corrupt(
                log.first_page,
                format!("history removal of a log that is not the head (head {head})"),
            ));
        }
        let f = mtr.x_latch(sys(log.first_page))?;
        let next = get_u32(mtr.page(f), LH_HIST_NEXT);
        mtr.write_u32(rs, RS_HIST_HEAD, next)?;
        if next == NO_PAGE {
            mtr.write_u32(rs, RS_HIST_TAIL, NO_PAGE)?;
        }
        let len = get_u64(mtr.page(rs), RS_HIST_LEN);
        mtr.write_u64(rs, RS_HIST_LEN, len.saturating_sub(1))?;
        for p in &pages {
            engine.free_page(&mut mtr, sys(*p))?;
        }
        let lsn = mtr.commit()?.unwrap_or(Lsn::ZERO);
        let mut g = self.rsegs[log.rseg as usize].lock();
        g.history = g.history.saturating_sub(1);
        self.history_len.fetch_sub(1, Ordering::Relaxed);
        Ok(lsn)
    }

    /// Every page the undo system uses: TRX_SYS, rseg headers, every log's pages.
    pub fn pages(&self, engine: &Engine) -> Result<Vec<PageNo>> {
        let mut out = vec![TRX_SYS_PAGE];
        for m in &self.rsegs {
            let Some(page) = m.lock().page else { continue };
            out.push(page);
            let h = engine.pool().get_shared(sys(page))?.to_vec();
            let mut firsts = Vec::new();
            for s in 0..self.slots {
                let f = get_u32(&h, RS_SLOTS + s * 4);
                if f != NO_PAGE {
                    firsts.push(PageNo(f));
                }
            }
            let mut at = PageNo(get_u32(&h, RS_HIST_HEAD));
            while at.0 != NO_PAGE {
                firsts.push(at);
                let g = engine.pool().get_shared(sys(at))?;
                at = log_header(at, &g)?.hist_next;
            }
            for f in firsts {
                out.extend(self.log_pages(engine, f)?);
            }
        }
        out.sort();
        Ok(out)
    }

    /// Structural check: magic numbers, page kinds, records parse, list lengths and
    /// states agree, no page twice. Problems name page numbers.
    pub fn verify(&self, engine: &Engine) -> Result<Vec<String>> {
        let mut problems = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (r, m) in self.rsegs.iter().enumerate() {
            let Some(page) = m.lock().page else { continue };
            let h = engine.pool().get_shared(sys(page))?.to_vec();
            if get_u32(&h, RS_MAGIC) != RS_MAGIC_VALUE {
                problems.push(format!("undo: rseg {r} header page {page}: bad magic"));
                continue;
            }
            let mut logs = Vec::new();
            let mut at = PageNo(get_u32(&h, RS_HIST_HEAD));
            let mut n = 0u64;
            let mut last = NO_PAGE;
            while at.0 != NO_PAGE {
                let g = engine.pool().get_shared(sys(at))?;
                match log_header(at, &g) {
                    Ok(lh) => {
                        if lh.state != STATE_COMMITTED || lh.kind != UndoKind::Update {
                            problems.push(format!(
                                "undo: history log at page {at} is not a committed update log"
                            ));
                        }
                        logs.push(at);
                        last = at.0;
                        n += 1;
                        at = lh.hist_next;
                    }
                    Err(e) => {
                        problems.push(format!("undo: rseg {r} history: {e}"));
                        break;
                    }
                }
                if n > 1 << 32 {
                    problems.push(format!("undo: rseg {r}: the history list does not end"));
                    break;
                }
            }
            if n != get_u64(&h, RS_HIST_LEN) {
                problems.push(format!(
                    "undo: rseg {r}: history length {} but {n} logs listed",
                    get_u64(&h, RS_HIST_LEN)
                ));
            }
            if last != get_u32(&h, RS_HIST_TAIL) {
                problems.push(format!(
                    "undo: rseg {r}: history tail {} but the list ends at {last}",
                    get_u32(&h, RS_HIST_TAIL)
                ));
            }
            for s in 0..self.slots {
                let f = get_u32(&h, RS_SLOTS + s * 4);
                if f == NO_PAGE {
                    continue;
                }
                let g = engine.pool().get_shared(sys(PageNo(f)))?;
                match log_header(PageNo(f), &g) {
                    Ok(lh) if lh.state == STATE_ACTIVE => logs.push(PageNo(f)),
                    Ok(_) => problems.push(format!(
                        "undo: slot {s} of rseg {r}: log at page {f} is not active"
                    )),
                    Err(e) => problems.push(format!("undo: rseg {r} slot {s}: {e}")),
                }
            }
            for f in logs {
                match self.log_pages(engine, f) {
                    Ok(ps) => {
                        for p in ps {
                            if !seen.insert(p) {
                                problems.push(format!("undo: page {p} is in two logs"));
                            }
                            let g = engine.pool().get_shared(sys(p))?;
                            if let Err(e) = page_records(p, &g) {
                                problems.push(format!("undo: {e}"));
                            }
                        }
                    }
                    Err(e) => problems.push(format!("undo: {e}")),
                }
            }
        }
        Ok(problems)
    }
}

/// Writes the page and log header of a new log's first page holding one record of `rec_len`.
fn write_first_header(
    mtr: &mut Mtr<'_>,
    s: Slot,
    kind: UndoKind,
    trx: TrxId,
    page: PageNo,
    next_no: u64,
    rec_len: usize,
) -> Result<()> {
    // Kind in the low byte; bit 0 of the high byte marks a first page.
    mtr.write(s, UP_KIND, &(kind.code() | 0x100).to_le_bytes())?;
    mtr.write(s, UP_FREE, &((LH_END + rec_len) as u16).to_le_bytes())?;
    mtr.write_u64(s, LH_TRX, trx.0)?;
    mtr.write_u64(s, LH_STATE, STATE_ACTIVE)?;
    mtr.write_u32(s, LH_LAST, page.0)?;
    mtr.write_u64(s, LH_NEXT_UNDO, next_no)?;
    Ok(())
}
