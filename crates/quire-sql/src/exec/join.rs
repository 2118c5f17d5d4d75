//! Running a join: nested loops in join order, each joined row pushed into the SELECT
//! pipeline as soon as it is complete (so LIMIT stops the outer loop).
//!
//! ```text
//!   step 0 ──row──▶ step 1 ──row──▶ … ──▶ step n-1 ──▶ pipeline (group, sort, limit, sink)
//!   Loop:     read the step's key ranges, evaluated with the row so far (index lookups)
//!   Buffered: read once into memory, hashed on the equi-join keys; each row so far
//!             probes it. Past join_buffer_size: rows so far are gathered in blocks and
//!             the table is read again, in chunks, per block.
//! ```
//!
//! The joined row is one buffer: each step writes its table's columns at its offset, and
//! conditions read it. Invariants:
//! 1. When step k runs, the columns of every step before k hold the row being extended;
//!    columns of later steps are stale and no condition placed at k reads them (the
//!    planner places each condition at or after the last step it names).
//! 2. `found[n]` is true once some row has passed the whole of LEFT JOIN n's inner side
//!    (all its ON conditions) for the current row of the steps before it; it is reset
//!    where that side begins, and read where that side's first loop ends: no match means
//!    one row with the side's columns NULL.
//! 3. A step gathers earlier rows in blocks only if no LEFT JOIN begun before it is open
//!    (`JoinStep::blockable`), so the found flags it sets while a block is replayed belong
//!    to the block's own rows.

use std::rc::Rc;

use quire_engine::row::{Collation, Value};
use quire_engine::table::{ReadLock, Table};

use super::{open_range, value_key, value_ranges, Pipeline, Txn};
use crate::error::{Result, SqlError};
use crate::expr::{Env, Expr, Row, SessionFn};
use crate::plan::join::{JoinPlan, Member, Method};
use crate::types;

/// `join_buffer_size` when the session cannot say (MariaDB's default).
const JOIN_BUFFER_DEFAULT: usize = 256 * 1024;

/// What a held row costs in the hash beside itself (its key and the entry), an estimate.
const HASH_ENTRY_BYTES: usize = 48;

/// A buffered step's rows.
enum Buf {
    /// Not read yet (read at the first row that reaches the step).
    Unread,
    /// The whole table (its own conditions applied), fitting in the join buffer.
    Held(Rc<Held>),
    /// Too large to hold: rows of the steps before, gathered until the buffer is full.
    Blocks { rows: Vec<Vec<Value>>, bytes: usize },
}

/// Rows kept in memory, hashed on the step's keys (none: every row is a candidate).
struct Held {
    rows: Vec<Vec<Value>>,
    index: Option<quire_engine::hash::Map<Vec<u8>, Vec<u32>>>,
}

struct JoinRun<'a, 'd, 't, 'p> {
    j: &'a JoinPlan,
    /// Per step, its table (none for a sequence).
    tables: Vec<Option<&'a Table<'d>>>,
    /// Per step, a derived table's own tables, and its rows once read.
    derived_tables: Vec<&'a [Table<'d>]>,
    derived: Vec<Option<Rc<Vec<Vec<Value>>>>>,
    txn: &'a mut Txn<'t, 'd>,
    lock: Option<ReadLock>,
    env: &'a dyn Env,
    pipe: &'a mut Pipeline<'p>,
    row: Vec<Value>,
    found: Vec<bool>,
    bufs: Vec<Buf>,
    cap: usize,
}

/// Runs join `j` over `tables` (its table members in FROM order), pushing rows into `pipe`.
pub(super) fn run<'d>(
    j: &JoinPlan,
    tables: &[Table<'d>],
    txn: &mut Txn<'_, 'd>,
    lock: Option<ReadLock>,
    env: &dyn Env,
    pipe: &mut Pipeline<'_>,
) -> Result<()> {
    // Table members in FROM order ↔ `tables` (a derived table's own come where it is).
    let mut slot = Vec::with_capacity(j.members.len());
    let mut derived_slot: Vec<&[Table<'d>]> = Vec::with_capacity(j.members.len());
    let mut next = 0;
    for m in &j.members {
        match m {
            Member::Table(_) => {
                next += 1;
                slot.push(tables.get(next - 1));
                derived_slot.push(&[]);
            }
            Member::Seq { .. } => {
                slot.push(None);
                derived_slot.push(&[]);
            }
            Member::Derived(d) => {
                let n = d.plan.source.tables().len();
                slot.push(None);
                derived_slot.push(tables.get(next..next + n).unwrap_or(&[]));
                next += n;
            }
        }
    }
    let cap = match env.session(&SessionFn::SysVar {
        name: "join_buffer_size".into(),
        global: false,
    }) {
        Ok(Value::Int(i)) if i > 0 => i as usize,
        Ok(Value::UInt(u)) if u > 0 => u as usize,
        _ => JOIN_BUFFER_DEFAULT,
    };
    let mut r = JoinRun {
        j,
        tables: j.steps.iter().map(|s| slot[s.member]).collect(),
        derived_tables: j.steps.iter().map(|s| derived_slot[s.member]).collect(),
        derived: j.steps.iter().map(|_| None).collect(),
        txn,
        lock,
        env,
        pipe,
        row: vec![Value::Null; j.width],
        found: vec![false; j.nests.len()],
        bufs: j.steps.iter().map(|_| Buf::Unread).collect(),
        cap,
    };
    if !r.step(0)? {
        return Ok(());
    }
    // Blocks still gathering: replay them, earliest step first (a replay may fill a
    // later step's block).
    for k in 0..j.steps.len() {
        if !r.flush(k)? {
            return Ok(());
        }
    }
    Ok(())
}

/// Bytes a row takes in a join buffer (an estimate: values and their heap parts).
fn row_bytes(r: &[Value]) -> usize {
    r.iter()
        .map(|v| {
            std::mem::size_of::<Value>()
                + match v {
                    Value::Str(s) => s.len(),
                    Value::Bytes(b) => b.len(),
                    _ => 0,
                }
        })
        .sum::<usize>()
        + std::mem::size_of::<Vec<Value>>()
}

/// Writes a table's row `r` at `offset` of the joined row (`len` columns; a row of another
/// width, which the plan rules out, is cut or padded with NULLs rather than trusted).
fn put(row: &mut [Value], offset: usize, len: usize, r: &[Value]) {
    debug_assert_eq!(r.len(), len, "a row of another width than its table's");
    let Some(slot) = row.get_mut(offset..offset + len) else {
        return;
    };
    for (i, v) in slot.iter_mut().enumerate() {
        v.clone_from(r.get(i).unwrap_or(&Value::Null));
    }
}

fn truthy(e: &Expr, row: &[Value], env: &dyn Env) -> Result<bool> {
    Ok(types::truthy(&e.eval(
        &Row {
            values: row,
            aggs: &[],
        },
        env,
    )?) == Some(true))
}

/// The value key of `es` over `row`, or `None` if one is NULL (equal to nothing).
fn key_of<'e>(
    es: impl Iterator<Item = (&'e Expr, Collation)>,
    row: &[Value],
    env: &dyn Env,
) -> Result<Option<Vec<u8>>> {
    let mut vals = Vec::new();
    let mut colls = Vec::new();
    for (e, c) in es {
        let v = e.eval(
            &Row {
                values: row,
                aggs: &[],
            },
            env,
        )?;
        if matches!(v, Value::Null) {
            return Ok(None);
        }
        vals.push(v);
        colls.push(c);
    }
    Ok(Some(value_key(&vals, &colls)))
}

/// The sequence values a range of evaluated bounds allows (inclusive, as f64).
fn seq_bound(es: &[Expr], row: &[Value], env: &dyn Env) -> Result<Option<f64>> {
    let Some(e) = es.first() else { return Ok(None) };
    let v = e.eval(
        &Row {
            values: row,
            aggs: &[],
        },
        env,
    )?;
    Ok(match v {
        Value::Null => Some(f64::NAN),
        v => Some(types::num(&v)),
    })
}

impl JoinRun<'_, '_, '_, '_> {
    /// The lock step `k` reads with.
    fn lock_for(&self, k: usize) -> Option<ReadLock> {
        if self.j.steps[k].exclusive {
            Some(ReadLock::Exclusive)
        } else {
            self.lock
        }
    }

    /// Extends the row with step `k`'s rows. False: stop (LIMIT reached).
    fn step(&mut self, k: usize) -> Result<bool> {
        let j = self.j;
        let Some(s) = j.steps.get(k) else {
            return self.pipe.push(self.row.clone());
        };
        if let Some(n) = s.nest_start {
            self.found[n] = false;
        }
        let nest_done = match s.method {
            Method::Loop => {
                if !self.loop_step(k)? {
                    return Ok(false);
                }
                false
            }
            Method::Buffered => match self.buffered_step(k)? {
                Some(done) => done,
                None => return Ok(false),
            },
        };
        if let (Some(n), false) = (s.nest_start, nest_done) {
            if !self.found[n] {
                return self.null_extend(n);
            }
        }
        Ok(true)
    }

    /// A row of step `k` read or found: written into the joined row, checked, extended.
    fn candidate(&mut self, k: usize, r: &[Value]) -> Result<bool> {
        if self.env.interrupted() {
            return Err(SqlError::Interrupted);
        }
        let s = &self.j.steps[k];
        put(&mut self.row, s.offset, s.len, r);
        if let Some(f) = &s.filter {
            if !truthy(f, &self.row, self.env)? {
                return Ok(true);
            }
        }
        self.complete(k, 0)
    }

    /// The row passed step `k`: the LEFT JOINs ending here (from `from` on, innermost
    /// first) have matched it; their after-conditions checked, the next step extends it.
    fn complete(&mut self, k: usize, from: usize) -> Result<bool> {
        let j = self.j;
        for &n in &j.steps[k].nests_end[from..] {
            self.found[n] = true;
            if let Some(a) = &j.nests[n].after {
                if !truthy(a, &self.row, self.env)? {
                    return Ok(true);
                }
            }
        }
        self.step(k + 1)
    }

    /// LEFT JOIN `n` found no row: its inner tables' columns are NULL for this row.
    fn null_extend(&mut self, n: usize) -> Result<bool> {
        let j = self.j;
        let nest = &j.nests[n];
        for s in &j.steps[nest.first..=nest.last] {
            self.row[s.offset..s.offset + s.len].fill(Value::Null);
        }
        let at = j.steps[nest.last]
            .nests_end
            .iter()
            .position(|&x| x == n)
            .unwrap_or(0);
        self.complete(nest.last, at)
    }

    /// Step `k`'s derived table's rows: its query run at the first call.
    fn derived_rows(&mut self, k: usize) -> Result<Rc<Vec<Vec<Value>>>> {
        if let Some(r) = &self.derived[k] {
            return Ok(r.clone());
        }
        let Member::Derived(d) = &self.j.members[self.j.steps[k].member] else {
            return Ok(Rc::new(Vec::new()));
        };
        let rows = Rc::new(super::select_rows(
            &d.plan,
            self.derived_tables[k],
            self.txn,
            self.env,
        )?);
        self.derived[k] = Some(rows.clone());
        Ok(rows)
    }

    /// Reads step `k` through its access, with key ranges of the row so far.
    fn loop_step(&mut self, k: usize) -> Result<bool> {
        let j = self.j;
        let s = &j.steps[k];
        match &j.members[s.member] {
            Member::Derived(_) => {
                let rows = self.derived_rows(k)?;
                for r in rows.iter() {
                    if !self.candidate(k, r)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Member::Seq { from, to, step } => {
                let ranges: Vec<(f64, f64)> = if s.access.ranges.is_empty() {
                    vec![(*from as f64, *to as f64)]
                } else {
                    let mut out = Vec::new();
                    for r in &s.access.ranges {
                        let b = |b: &std::ops::Bound<Vec<Expr>>, row: &[Value]| match b {
                            std::ops::Bound::Included(es) | std::ops::Bound::Excluded(es) => {
                                seq_bound(es, row, self.env)
                            }
                            std::ops::Bound::Unbounded => Ok(None),
                        };
                        let lo = b(&r.lo, &self.row)?.unwrap_or(*from as f64);
                        let hi = b(&r.hi, &self.row)?.unwrap_or(*to as f64);
                        if lo.is_nan() || hi.is_nan() {
                            // NULL: a point matches nothing, a range is checked row by row.
                            if r.is_point() {
                                continue;
                            }
                            out = vec![(*from as f64, *to as f64)];
                            break;
                        }
                        out.push((lo, hi));
                    }
                    out
                };
                for (lo, hi) in ranges {
                    // The first value of the sequence at or above lo.
                    let start = if lo <= *from as f64 {
                        *from
                    } else {
                        let skip = ((lo - *from as f64) / *step as f64).ceil() as u64;
                        match skip.checked_mul(*step).and_then(|d| d.checked_add(*from)) {
                            Some(v) => v,
                            None => continue,
                        }
                    };
                    let mut v = start;
                    while v <= *to && (v as f64) <= hi {
                        if !self.candidate(k, &[Value::UInt(v)])? {
                            return Ok(false);
                        }
                        v = match v.checked_add(*step) {
                            Some(n) => n,
                            None => break,
                        };
                    }
                }
                Ok(true)
            }
            Member::Table(t) => {
                let Some(table) = self.tables[k] else {
                    return Err(SqlError::NoSuchTable {
                        db: t.db.clone(),
                        table: t.name.clone(),
                    });
                };
                let lock = self.lock_for(k);
                for (lo, hi) in value_ranges(t, &s.access, self.env, &self.row)? {
                    let zone = self.env.time_zone();
                    let rows = open_range(table, t, &s.access, self.txn, lock, lo, hi, zone)?;
                    for r in rows {
                        if !self.candidate(k, &r?)? {
                            return Ok(false);
                        }
                    }
                }
                Ok(true)
            }
        }
    }

    /// Reads step `k`'s whole table (its own conditions applied) into memory, or learns
    /// that it does not fit (then gathers blocks).
    fn build(&mut self, k: usize) -> Result<()> {
        let j = self.j;
        let s = &j.steps[k];
        let mut rows = Vec::new();
        let mut bytes = 0;
        let cap = self.cap;
        let extra = if s.keys.is_empty() {
            0
        } else {
            HASH_ENTRY_BYTES
        };
        // Stops at the first row past the buffer.
        self.each_own_row(k, &mut |_, r| {
            bytes += row_bytes(&r) + extra;
            rows.push(r);
            Ok(bytes <= cap)
        })?;
        if bytes > cap {
            self.bufs[k] = Buf::Blocks {
                rows: Vec::new(),
                bytes: 0,
            };
            return Ok(());
        }
        let index = if s.keys.is_empty() {
            None
        } else {
            let mut map: quire_engine::hash::Map<Vec<u8>, Vec<u32>> = Default::default();
            for (i, r) in rows.iter().enumerate() {
                put(&mut self.row, s.offset, s.len, r);
                if let Some(key) =
                    key_of(s.keys.iter().map(|(_, e, c)| (e, *c)), &self.row, self.env)?
                {
                    map.entry(key).or_default().push(i as u32);
                }
            }
            Some(map)
        };
        self.bufs[k] = Buf::Held(Rc::new(Held { rows, index }));
        Ok(())
    }

    /// Calls `f` with each row of step `k` that passes its own conditions, stopping when
    /// it returns false. A buffered step's ranges are constants.
    fn each_own_row(
        &mut self,
        k: usize,
        f: &mut dyn FnMut(&mut Self, Vec<Value>) -> Result<bool>,
    ) -> Result<bool> {
        let j = self.j;
        let s = &j.steps[k];
        if let Member::Derived(_) = &j.members[s.member] {
            let rows = self.derived_rows(k)?;
            for r in rows.iter() {
                if let Some(own) = &s.own_filter {
                    put(&mut self.row, s.offset, s.len, r);
                    if !truthy(own, &self.row, self.env)? {
                        continue;
                    }
                }
                if !f(self, r.clone())? {
                    return Ok(false);
                }
            }
            return Ok(true);
        }
        let Member::Table(t) = &j.members[s.member] else {
            return Ok(true);
        };
        let Some(table) = self.tables[k] else {
            return Err(SqlError::NoSuchTable {
                db: t.db.clone(),
                table: t.name.clone(),
            });
        };
        let lock = self.lock_for(k);
        for (lo, hi) in value_ranges(t, &s.access, self.env, &self.row)? {
            let zone = self.env.time_zone();
            for r in open_range(table, t, &s.access, self.txn, lock, lo, hi, zone)? {
                let r = r?;
                if self.env.interrupted() {
                    return Err(SqlError::Interrupted);
                }
                if let Some(own) = &s.own_filter {
                    put(&mut self.row, s.offset, s.len, &r);
                    if !truthy(own, &self.row, self.env)? {
                        continue;
                    }
                }
                if !f(self, r)? {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// A buffered step: probe the held rows, or add the row so far to a block. `None`:
    /// stop; `Some(true)`: the LEFT JOIN starting here (if any) was decided here.
    fn buffered_step(&mut self, k: usize) -> Result<Option<bool>> {
        if matches!(self.bufs[k], Buf::Unread) {
            self.build(k)?;
        }
        let s = &self.j.steps[k];
        match &mut self.bufs[k] {
            Buf::Held(h) => {
                let h = h.clone();
                let go = self.probe(k, &h)?;
                Ok(go.then_some(false))
            }
            Buf::Blocks { rows, bytes } => {
                *bytes += row_bytes(&self.row);
                rows.push(self.row.clone());
                let full = !s.blockable || *bytes >= self.cap;
                if full && !self.flush(k)? {
                    return Ok(None);
                }
                Ok(Some(true))
            }
            Buf::Unread => Ok(Some(false)),
        }
    }

    /// The held rows of step `k` that the row so far may join with.
    fn probe(&mut self, k: usize, h: &Held) -> Result<bool> {
        let s = &self.j.steps[k];
        match &h.index {
            None => {
                for r in &h.rows {
                    if !self.candidate(k, r)? {
                        return Ok(false);
                    }
                }
            }
            Some(map) => {
                let Some(key) =
                    key_of(s.keys.iter().map(|(e, _, c)| (e, *c)), &self.row, self.env)?
                else {
                    return Ok(true);
                };
                if let Some(ids) = map.get(&key) {
                    for &i in ids {
                        if !self.candidate(k, &h.rows[i as usize])? {
                            return Ok(false);
                        }
                    }
                }
            }
        }
        Ok(true)
    }

    /// Joins the gathered rows of step `k` with its table, read again in chunks that fit
    /// the join buffer; then the rows no chunk matched, NULL-extended if a LEFT JOIN
    /// starts here.
    fn flush(&mut self, k: usize) -> Result<bool> {
        let Buf::Blocks { rows, bytes } = &mut self.bufs[k] else {
            return Ok(true);
        };
        let block = std::mem::take(rows);
        *bytes = 0;
        let Some(last) = block.last().cloned() else {
            return Ok(true);
        };
        let mut matched = vec![false; block.len()];
        let mut chunk: Vec<Vec<Value>> = Vec::new();
        let mut chunk_bytes = 0;
        let cap = self.cap;
        let extra = if self.j.steps[k].keys.is_empty() {
            0
        } else {
            HASH_ENTRY_BYTES
        };
        let go = self.each_own_row(k, &mut |run, r| {
            chunk_bytes += row_bytes(&r) + extra;
            chunk.push(r);
            if chunk_bytes < cap {
                return Ok(true);
            }
            chunk_bytes = 0;
            let c = std::mem::take(&mut chunk);
            run.join_block(k, &block, &c, &mut matched)
        })?;
        if !go || (!chunk.is_empty() && !self.join_block(k, &block, &chunk, &mut matched)?) {
            return Ok(false);
        }
        if let Some(n) = self.j.steps[k].nest_start {
            for (p, m) in block.iter().zip(&matched) {
                if !*m {
                    self.row.clone_from(p);
                    if !self.null_extend(n)? {
                        return Ok(false);
                    }
                }
            }
        }
        // The steps before k go on from the row they were at (invariant 1).
        self.row.clone_from(&last);
        Ok(true)
    }

    /// Every row of `block` against the rows of `chunk`.
    fn join_block(
        &mut self,
        k: usize,
        block: &[Vec<Value>],
        chunk: &[Vec<Value>],
        matched: &mut [bool],
    ) -> Result<bool> {
        let s = &self.j.steps[k];
        let mut index: Option<quire_engine::hash::Map<Vec<u8>, Vec<u32>>> = None;
        if !s.keys.is_empty() {
            let mut map: quire_engine::hash::Map<Vec<u8>, Vec<u32>> = Default::default();
            for (i, r) in chunk.iter().enumerate() {
                put(&mut self.row, s.offset, s.len, r);
                if let Some(key) =
                    key_of(s.keys.iter().map(|(_, e, c)| (e, *c)), &self.row, self.env)?
                {
                    map.entry(key).or_default().push(i as u32);
                }
            }
            index = Some(map);
        }
        let all: Vec<u32> = (0..chunk.len() as u32).collect();
        for (p, m) in block.iter().zip(matched.iter_mut()) {
            self.row.clone_from(p);
            let ids: &[u32] = match &index {
                None => &all,
                Some(map) => {
                    match key_of(s.keys.iter().map(|(e, _, c)| (e, *c)), &self.row, self.env)? {
                        Some(key) => map.get(&key).map_or(&[], |v| v.as_slice()),
                        None => &[],
                    }
                }
            };
            for &i in ids {
                if let Some(n) = s.nest_start {
                    self.found[n] = false;
                }
                // Each candidate starts from the block's row: a deeper step may have
                // written past this step's columns only.
                if !self.candidate(k, &chunk[i as usize])? {
                    return Ok(false);
                }
                if let Some(n) = s.nest_start {
                    *m |= self.found[n];
                }
            }
        }
        Ok(true)
    }
}
