//! # Off-page values through the table API
//!
//! docs/blob.md. A row change that involves off-page values goes:
//!
//! ```text
//!   plan        which columns go off-page (against the B-tree's record limit), which old
//!               chains an update keeps, which it frees, how much fits the record's mtr
//!   tails       the pages of each new chain that do not fit the record's mtr, tail first,
//!               in mtrs of their own
//!   record mtr  BTree::{insert,update,delete}_with: the heads of the new chains, the
//!               record naming them, then the first frees of the old chains
//!   frees       the rest of the old chains' pages, in mtrs of their own
//! ```
//!
//! Invariants:
//! 1. A record names a chain only once the whole chain is logged: the tail mtrs come first,
//!    the head is written in the record's own mtr (`btree::blob` invariant 3).
//! 2. A chain is freed in or after the mtr that removes its record's reference, never
//!    before, by the change that removed it, which holds the table's chain lock
//!    exclusively from reading the old record to its last free. A reader copies a chain
//!    only under that lock shared, after reading the record again under it
//!    ([`read_row`]). So no reader follows a freed chain.
//! 3. A record is planned against the B-tree's record limit for its key ([`row_limits`]),
//!    so a row the planner accepts always fits a leaf.
//! 4. A failed change leaves nothing allocated that no record names: the tails it wrote
//!    are freed before the error is returned (a crash is different: docs/blob.md).

use std::borrow::Cow;

use parking_lot::RwLockWriteGuard;

use super::{DbError, Result, TableState};
use crate::btree::blob::{self, FREE_REDO_MAX};
use crate::btree::{node, BTree, BTreeError, BTreeStore, LeafWork};
use crate::engine::Engine;
use crate::mtr::Mtr;
use crate::page::{Lsn, PageNo, SpaceId};
use crate::row::{
    record, ExternRef, RecordFields, RollPtr, RowError, RowId, RowLayout, RowLimits, Stored,
    SysFields, TrxId, Value,
};

/// The row limits for a record whose clustered key is `key_len` bytes: the row layer's,
/// with `max_record_bytes` lowered to what a leaf takes (the B-tree record holds the key
/// and then the row record, which holds it again).
pub(super) fn row_limits(limits: &RowLimits, page_size: usize, key_len: usize) -> RowLimits {
    let leaf = node::max_record(page_size).saturating_sub(node::REC_HEADER + key_len);
    RowLimits {
        max_record_bytes: limits.max_record_bytes.min(leaf),
        ..*limits
    }
}

/// Whether a row of this table can ever have an off-page value: then its updates and
/// deletes take the chain lock (invariant 2). Planned with the largest key the layout
/// allows, the tightest limit any of its rows gets.
pub(super) fn can_store_off_page(layout: &RowLayout, limits: &RowLimits, page_size: usize) -> bool {
    let key_max = layout
        .key_layout()
        .max_encoded_len()
        .min(limits.max_key_bytes as u64) as usize;
    layout.can_store_off_page(&row_limits(limits, page_size, key_max))
}

/// The chain lock for a change that may free chains (invariant 2); `None` for a table
/// that never stores values off-page.
pub(super) fn lock_for_change(t: &TableState) -> Option<RwLockWriteGuard<'_, ()>> {
    t.off_page.then(|| t.chains.write())
}

/// A value's bytes as a record stores them (strings as UTF-8).
fn var_bytes(v: &Value) -> &[u8] {
    match v {
        Value::Str(s) => s.as_bytes(),
        Value::Bytes(b) => b,
        _ => &[],
    }
}

fn too_large(e: RowError) -> DbError {
    match e {
        RowError::RowTooLarge { .. } => DbError::RowTooLarge(e.to_string()),
        e => e.into(),
    }
}

/// The value of an off-page reference.
pub(super) fn fetch(engine: &Engine, r: &ExternRef) -> Result<Vec<u8>> {
    Ok(blob::read(engine, r)?)
}

/// The values of a clustered record, reading off-page ones from their chains. The caller
/// keeps the chains alive: it holds the chain lock, or excludes every change (DDL).
pub(super) fn decode_row(engine: &Engine, layout: &RowLayout, rec: &[u8]) -> Result<Vec<Value>> {
    decode_row_columns(engine, layout, rec, None)
}

/// [`decode_row`] of the columns in `cols` only (the others NULL; `None`: every column).
pub(super) fn decode_row_columns(
    engine: &Engine,
    layout: &RowLayout,
    rec: &[u8],
    cols: Option<&[bool]>,
) -> Result<Vec<Value>> {
    layout.decode_values::<DbError>(rec, cols, |r| fetch(engine, r))
}

/// The pages of every chain clustered record `rec` names in `space`. A chain in another
/// space belongs to a version from before a TRUNCATE TABLE (the old space is gone, and
/// its pages with it): it is skipped, never freed in the new space.
pub(super) fn record_chain_pages(
    engine: &Engine,
    layout: &RowLayout,
    space: SpaceId,
    rec: &[u8],
) -> Result<Vec<PageNo>> {
    if !record::has_external(rec)? {
        return Ok(Vec::new());
    }
    let mut pages = Vec::new();
    for f in &layout.decode(rec)?.fields {
        if let Stored::External { r, .. } = f {
            if r.space == space {
                pages.extend(blob::pages(engine, r)?);
            }
        }
    }
    Ok(pages)
}

/// Whether clustered record `rec` names a chain outside `space`: a version from before a
/// TRUNCATE TABLE, whose space (and every page it had) is gone.
pub(super) fn from_another_space(layout: &RowLayout, space: SpaceId, rec: &[u8]) -> Result<bool> {
    if !record::has_external(rec)? {
        return Ok(false);
    }
    Ok(layout
        .decode(rec)?
        .fields
        .iter()
        .any(|f| matches!(f, Stored::External { r, .. } if r.space != space)))
}

/// Frees chain pages in mtrs of their own (rollback and purge free an old version's
/// chains once nothing can read them).
pub(super) fn free_in_mtrs_pub(engine: &Engine, space: SpaceId, pages: &[PageNo]) -> Result<Lsn> {
    if pages.is_empty() {
        return Ok(Lsn::ZERO);
    }
    Ok(blob::free_in_mtrs(engine, space, pages)?)
}

/// The pages of every chain a record names.
fn chain_pages(engine: &Engine, fields: &RecordFields) -> Result<Vec<PageNo>> {
    let mut pages = Vec::new();
    for f in &fields.fields {
        if let Stored::External { r, .. } = f {
            pages.extend(blob::pages(engine, r)?);
        }
    }
    Ok(pages)
}

/// Pages of old chains to free: the first `now` inside the record's mtr, the rest after.
struct Frees<'a> {
    engine: &'a Engine,
    space: SpaceId,
    pages: Vec<PageNo>,
    now: usize,
}

impl Frees<'_> {
    fn redo_bytes(&self) -> u64 {
        self.now as u64 * FREE_REDO_MAX
    }
    fn in_mtr(&self, mtr: &mut Mtr<'_>) -> crate::btree::Result<()> {
        blob::free_pages(self.engine, mtr, self.space, &self.pages[..self.now])
    }
    /// Frees the pages the record's mtr had no room for.
    fn rest(&self) -> Result<Lsn> {
        Ok(blob::free_in_mtrs(
            self.engine,
            self.space,
            &self.pages[self.now..],
        )?)
    }
}

/// A delete's work in its mtr: the first frees.
impl LeafWork for Frees<'_> {
    fn redo_bytes(&self) -> u64 {
        Frees::redo_bytes(self)
    }
    fn value(&mut self, _mtr: &mut Mtr<'_>) -> crate::btree::Result<Cow<'_, [u8]>> {
        Err(BTreeError::Invariant(
            "a delete's work was asked for a value",
        ))
    }
    fn after(&mut self, mtr: &mut Mtr<'_>) -> crate::btree::Result<()> {
        self.in_mtr(mtr)
    }
}

/// A new chain of column `col`: `pages` in all, the first `head` written in the record's
/// mtr, the others (`tail`) before it.
struct NewChain {
    col: usize,
    pages: u64,
    head: u64,
    tail: Vec<PageNo>,
    head_written: Vec<PageNo>,
}

/// One clustered record to write, with the chains it needs and the ones it replaces.
pub(super) struct RowWrite<'a> {
    engine: &'a Engine,
    layout: &'a RowLayout,
    row: &'a [Value],
    sys: SysFields,
    limits: RowLimits,
    space: SpaceId,
    key: Vec<u8>,
    rec_len: usize,
    /// The record itself when it needs no new chain (the plan's encoding is final then).
    rec: Option<Vec<u8>>,
    new: Vec<NewChain>,
    /// Off-page values an update leaves unchanged: their chains stay (no write, no free).
    kept: Vec<(usize, ExternRef)>,
    frees: Frees<'a>,
    /// `value()` finished: the record may name the chains now, so they must not be freed.
    produced: bool,
}

impl<'a> RowWrite<'a> {
    /// Plans the record of `row` (canonical, every column) under clustered key `key`,
    /// written by transaction `trx.0` with DB_ROLL_PTR `trx.1`. Every version gets fresh
    /// chains: an older version in the undo log keeps its own until purge frees them
    /// (docs/blob.md, "Versions").
    pub(super) fn plan(
        engine: &'a Engine,
        t: &'a TableState,
        limits: &RowLimits,
        row: &'a [Value],
        row_id: Option<RowId>,
        trx: (TrxId, RollPtr),
    ) -> Result<RowWrite<'a>> {
        let old: Option<&[u8]> = None;
        let page_size = engine.page_size().bytes();
        let sys = SysFields {
            row_id,
            trx_id: trx.0,
            roll_ptr: trx.1,
        };
        let mut key = Vec::new();
        t.layout.encode_key(row, row_id, limits, &mut key)?;
        let limits = row_limits(limits, page_size, key.len());
        // `row` is canonical (the caller's contract) and its key is encoded: no need to
        // validate and encode it again; `encode` below validates it once.
        let off = t
            .layout
            .plan_off_page_canonical(row, key.len(), &limits)
            .map_err(too_large)?;
        let old = old.map(|o| t.layout.decode(o)).transpose()?;
        let part_max = blob::part_max(engine);
        let (mut new, mut kept) = (Vec::new(), Vec::new());
        for c in off {
            let bytes = var_bytes(&row[c]);
            if let Some(Stored::External { r, .. }) = old.as_ref().and_then(|o| o.fields.get(c)) {
                if blob::equals(engine, r, bytes)? {
                    kept.push((c, *r));
                    continue;
                }
            }
            new.push(NewChain {
                col: c,
                pages: blob::page_count(bytes.len() as u64, part_max),
                head: 0,
                tail: Vec::new(),
                head_written: Vec::new(),
            });
        }
        let mut free = Vec::new();
        if let Some(o) = &old {
            for (c, f) in o.fields.iter().enumerate() {
                if let Stored::External { r, .. } = f {
                    if !kept.iter().any(|(kc, kr)| *kc == c && kr == r) {
                        free.extend(blob::pages(engine, r)?);
                    }
                }
            }
        }
        // The record's mtr spends at most half a frame on chains; new pages get at least
        // half of that when there are frees too (docs/blob.md, "Size of an mtr").
        let budget = engine.mtr_redo_max() / 2;
        let cost = blob::page_redo(engine);
        let free_all = free.len() as u64 * FREE_REDO_MAX;
        let mut heads = (budget - free_all.min(budget / 2)) / cost;
        let mut used = 0;
        for ch in &mut new {
            ch.head = ch.pages.min(heads);
            heads -= ch.head;
            used += ch.head * cost;
        }
        let now = ((budget - used) / FREE_REDO_MAX).min(free.len() as u64) as usize;
        // The record's length does not depend on where the chains are: plan it now, with
        // stand-in page numbers, so the B-tree can decide the fit before any work is done.
        let mut refs = kept.clone();
        refs.extend(new.iter().map(|ch| {
            let len = var_bytes(&row[ch.col]).len() as u64;
            (ch.col, ExternRef::new(t.def.space, PageNo(0), len))
        }));
        // Room for a typical OLTP row at once (the vector is kept when the record is).
        let mut rec = Vec::with_capacity(256);
        t.layout
            .encode(row, &sys, &refs, &limits, &mut rec)
            .map_err(too_large)?;
        Ok(RowWrite {
            engine,
            layout: &t.layout,
            row,
            sys,
            limits,
            space: t.def.space,
            key,
            rec_len: rec.len(),
            rec: new.is_empty().then_some(rec),
            new,
            kept,
            frees: Frees {
                engine,
                space: t.def.space,
                pages: free,
                now,
            },
            produced: false,
        })
    }

    /// Writes the part of every new chain that does not fit the record's mtr.
    fn write_tails(&mut self) -> Result<Lsn> {
        let mut lsn = Lsn::ZERO;
        let row = self.row;
        for i in 0..self.new.len() {
            let (col, head) = (self.new[i].col, self.new[i].head);
            let bytes = var_bytes(&row[col]);
            match blob::write_tail(self.engine, self.space, bytes, head) {
                Ok((pages, l)) => {
                    self.new[i].tail = pages;
                    lsn = lsn.max(l);
                }
                Err(e) => {
                    self.free_tails();
                    return Err(e.into());
                }
            }
        }
        Ok(lsn)
    }

    /// Frees the tails written, after a change that failed before its record named them.
    fn free_tails(&mut self) {
        let pages: Vec<PageNo> = self
            .new
            .iter_mut()
            .flat_map(|ch| std::mem::take(&mut ch.tail))
            .collect();
        // Best effort: the error being returned is the one that matters; what cannot be
        // freed stays allocated, a leak `Db::check` reports.
        let _ = blob::free_in_mtrs(self.engine, self.space, &pages);
    }

    /// Runs the whole change with `op` as the record's mtr (invariants 1 and 4).
    fn run(
        mut self,
        op: impl FnOnce(&[u8], usize, &mut Self) -> crate::btree::Result<Lsn>,
    ) -> Result<Lsn> {
        let mut lsn = self.write_tails()?;
        let key = std::mem::take(&mut self.key);
        let rec_len = self.rec_len;
        match op(&key, rec_len, &mut self) {
            Ok(l) => {
                lsn = lsn.max(l).max(self.frees.rest()?);
                Ok(lsn)
            }
            Err(e) => {
                if !self.produced {
                    self.free_tails();
                }
                Err(match e {
                    // The caller, which has the row, names the entry.
                    BTreeError::DuplicateKey => DbError::DuplicateKey {
                        index: super::PRIMARY.into(),
                        entry: String::new(),
                    },
                    BTreeError::NotFound => DbError::RowNotFound,
                    e => e.into(),
                })
            }
        }
    }

    /// Inserts the record (a present key is `DuplicateKey` on PRIMARY).
    pub(super) fn insert(self, tree: &BTree) -> Result<Lsn> {
        let engine = self.engine;
        self.run(|key, len, w| tree.insert_with(engine, key, len, w))
    }

    /// Replaces the record with the same key, setting its delete mark to `deleted`
    /// (`RowNotFound` if there is none).
    pub(super) fn replace(self, tree: &BTree, deleted: bool) -> Result<Lsn> {
        let engine = self.engine;
        self.run(|key, len, w| tree.replace_with(engine, key, len, deleted, w))
    }
}

impl LeafWork for RowWrite<'_> {
    fn redo_bytes(&self) -> u64 {
        let heads: u64 = self.new.iter().map(|ch| ch.head).sum();
        heads * blob::page_redo(self.engine) + self.frees.redo_bytes()
    }

    /// Writes the head of every new chain, linked to its tail, then the record naming them.
    fn value(&mut self, mtr: &mut Mtr<'_>) -> crate::btree::Result<Cow<'_, [u8]>> {
        if let Some(rec) = &self.rec {
            self.produced = true;
            return Ok(Cow::Borrowed(rec));
        }
        let mut refs = self.kept.clone();
        let row = self.row;
        for i in 0..self.new.len() {
            let (col, head) = (self.new[i].col, self.new[i].head);
            let bytes = var_bytes(&row[col]);
            let tail = self.new[i].tail.first().copied().unwrap_or(PageNo::NULL);
            let first = if head == 0 {
                tail
            } else {
                match blob::write_pages(self.engine, mtr, self.space, bytes, 0..head, tail) {
                    Ok(p) => {
                        let first = p.first().copied().unwrap_or(PageNo::NULL);
                        self.new[i].head_written = p;
                        first
                    }
                    Err(e) => {
                        // Give back the heads of the chains before this one (this one's
                        // pages write_pages freed itself); the tails are the caller's.
                        let earlier: Vec<PageNo> = self
                            .new
                            .iter_mut()
                            .flat_map(|c| std::mem::take(&mut c.head_written))
                            .collect();
                        let _ = blob::free_pages(self.engine, mtr, self.space, &earlier);
                        return Err(e);
                    }
                }
            };
            if first.is_null() {
                return Err(BTreeError::Invariant("a new chain with no page"));
            }
            refs.push((col, ExternRef::new(self.space, first, bytes.len() as u64)));
        }
        let mut rec = Vec::with_capacity(self.rec_len);
        self.layout
            .encode(self.row, &self.sys, &refs, &self.limits, &mut rec)
            .map_err(|_| BTreeError::Invariant("a planned record failed to encode"))?;
        self.produced = true;
        Ok(Cow::Owned(rec))
    }

    fn after(&mut self, mtr: &mut Mtr<'_>) -> crate::btree::Result<()> {
        self.frees.in_mtr(mtr)
    }

    /// The structure change that ran `value` was rolled back: the heads it wrote are free
    /// again and no record names the tails, so an error now leaves them to `free_tails`.
    fn rolled_back(&mut self) {
        self.produced = false;
        for ch in &mut self.new {
            ch.head_written.clear();
        }
    }
}

/// The frees of a removed record whose bytes are `old`: every page of its chains, walked
/// now (before the removal latches anything), as many freed in the removal's mtr as fit.
fn frees_of<'a>(engine: &'a Engine, t: &TableState, old: &[u8]) -> Result<Frees<'a>> {
    let pages = if record::has_external(old)? {
        chain_pages(engine, &t.layout.decode(old)?)?
    } else {
        Vec::new()
    };
    let now = ((engine.mtr_redo_max() / 2) / FREE_REDO_MAX).min(pages.len() as u64) as usize;
    Ok(Frees {
        engine,
        space: t.def.space,
        pages,
        now,
    })
}

/// Deletes the record with `key`, whose current bytes are `old`, and frees its chains: as
/// many as fit in the delete's mtr, the rest after. The caller holds the chain lock.
pub(super) fn delete(engine: &Engine, t: &TableState, key: &[u8], old: &[u8]) -> Result<Lsn> {
    let mut frees = frees_of(engine, t, old)?;
    let lsn = match t.clustered.delete_with(engine, key, &mut frees) {
        Err(BTreeError::NotFound) => return Err(DbError::RowNotFound),
        r => r?,
    };
    Ok(lsn.max(frees.rest()?))
}

/// Deletes the record with `key` if `decide(value, delete_marked)`, asked under the leaf's
/// X latch, says so, and then frees the chains of `old`, the bytes the caller read the
/// record as: `decide` must accept only a record with exactly those bytes. The chains are
/// walked before the latch is taken, and freed in the removal's mtr and after it (purge:
/// no BLOB page is read under a leaf latch). Returns whether the record was removed. The
/// caller holds the chain lock.
pub(super) fn delete_if(
    engine: &Engine,
    t: &TableState,
    key: &[u8],
    old: &[u8],
    decide: &mut dyn FnMut(&[u8], bool) -> bool,
) -> Result<bool> {
    let mut frees = frees_of(engine, t, old)?;
    let mut exact = |v: &[u8], marked: bool| {
        let yes = decide(v, marked);
        // The pages freed are `old`'s: removing any other record would free the wrong ones.
        debug_assert!(
            !yes || v == old,
            "delete_if accepted a record it did not read"
        );
        yes && v == old
    };
    if !t.clustered.delete_if(engine, key, &mut exact, &mut frees)? {
        return Ok(false);
    }
    frees.rest()?;
    Ok(true)
}
