//! The window step (`window.rs` plans it): after GROUP BY and HAVING, the result rows
//! are kept ([`WinRow`]), each window specification sorts them by its (partition, order)
//! keys and computes its calls in one pass per partition, writing each call's value into
//! the row's aggregate slot; then the select list, DISTINCT, ORDER BY and LIMIT run on the
//! rows as usual.
//!
//! Invariants:
//! 1. Every kept row's `aggs` is as long as the query's aggregate list, and a window
//!    call's slot is written for every row before any row is projected.
//! 2. Within one partition, rows are in the specification's ORDER BY order (a stable
//!    sort: ties keep the order they came in), so peers (rows with equal ORDER BY keys)
//!    are contiguous.
//! 3. Neither end of a frame moves backwards as the current row advances (ROWS and RANGE
//!    alike), so a running or sliding aggregate adds and removes each row at most once:
//!    O(n) per partition for the default frame and for COUNT / SUM / AVG / BIT_XOR over
//!    any frame; MIN, MAX, BIT_AND and BIT_OR over a frame that does not start at the
//!    partition's first row are recomputed per row (O(n · frame)).
//!
//! Memory: the rows are held once, as the pipeline's ORDER BY and GROUP BY hold theirs
//! (whole, in memory); each specification adds its sort keys and an index per row.

use std::cmp::Ordering;

use quire_engine::row::Value;

use super::{agg_add, agg_init, agg_result, AggState};
use crate::bind::AggCall;
use crate::error::{Result, SqlError};
use crate::expr::{binary, AggFn, BinOp, Env, Expr, Row};
use crate::types::{self, compare};
use crate::window::{Bound, Over, Spec, WindowPlan};

/// A result row kept for the window step: its values, its aggregates (window slots
/// included), and the WITH ROLLUP level it is a super-aggregate of.
pub(crate) struct WinRow {
    pub row: Vec<Value>,
    pub aggs: Vec<Value>,
    pub level: Option<usize>,
}

/// Each row's partition keys and order keys.
type Keys = Vec<(Vec<Value>, Vec<Value>)>;

/// Computes every window call of `plan` into the rows' aggregate slots. Returns the rows'
/// order after the last specification's sort: the result's order when the query has no
/// ORDER BY (MariaDB's rows come out of its last window sort too).
pub(crate) fn compute(
    plan: &WindowPlan,
    aggs: &[AggCall],
    rows: &mut [WinRow],
    env: &dyn Env,
) -> Result<Vec<usize>> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    for spec in &plan.specs {
        let keys = keys_of(spec, rows, env)?;
        let mut idx: Vec<usize> = (0..rows.len()).collect();
        idx.sort_by(|&a, &b| cmp_keys(spec, &keys[a], &keys[b]));
        let mut s = 0;
        while s < idx.len() {
            if env.interrupted() {
                return Err(SqlError::Interrupted);
            }
            let mut e = s + 1;
            while e < idx.len() && same_partition(spec, &keys[idx[s]], &keys[idx[e]]) {
                e += 1;
            }
            let part = &idx[s..e];
            for &c in &spec.calls {
                let Some(call) = aggs.get(c) else { continue };
                let out = partition_values(call, spec, part, &keys, rows, env)?;
                for (&r, v) in part.iter().zip(out) {
                    if let Some(slot) = rows[r].aggs.get_mut(c) {
                        *slot = v;
                    }
                }
            }
            s = e;
        }
        order = idx;
    }
    Ok(order)
}

fn eval_on(e: &Expr, r: &WinRow, env: &dyn Env) -> Result<Value> {
    e.eval(
        &Row {
            values: &r.row,
            aggs: &r.aggs,
        },
        env,
    )
}

fn keys_of(spec: &Spec, rows: &[WinRow], env: &dyn Env) -> Result<Keys> {
    rows.iter()
        .map(|r| {
            let p = spec
                .partition
                .iter()
                .map(|(e, _)| eval_on(e, r, env))
                .collect::<Result<Vec<_>>>()?;
            let o = spec
                .order
                .iter()
                .map(|(e, _, _)| eval_on(e, r, env))
                .collect::<Result<Vec<_>>>()?;
            Ok((p, o))
        })
        .collect()
}

fn cmp_keys(spec: &Spec, a: &(Vec<Value>, Vec<Value>), b: &(Vec<Value>, Vec<Value>)) -> Ordering {
    for (i, (_, coll)) in spec.partition.iter().enumerate() {
        match compare(&a.0[i], &b.0[i], *coll) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    for (i, (_, desc, coll)) in spec.order.iter().enumerate() {
        let o = compare(&a.1[i], &b.1[i], *coll);
        let o = if *desc { o.reverse() } else { o };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

fn same_partition(spec: &Spec, a: &(Vec<Value>, Vec<Value>), b: &(Vec<Value>, Vec<Value>)) -> bool {
    spec.partition
        .iter()
        .enumerate()
        .all(|(i, (_, coll))| compare(&a.0[i], &b.0[i], *coll) == Ordering::Equal)
}

fn peers(spec: &Spec, a: &[Value], b: &[Value]) -> bool {
    spec.order
        .iter()
        .enumerate()
        .all(|(i, (_, _, coll))| compare(&a[i], &b[i], *coll) == Ordering::Equal)
}

/// An integer argument (NTILE's, LAG's offset, a ROWS offset).
fn int_of(v: &Value, env: &dyn Env) -> Option<i128> {
    crate::func::cast::to_int(v, env)
}

/// The values of window call `call` for the rows of one partition, `part` (indices into
/// `rows`, in the specification's order).
fn partition_values(
    call: &AggCall,
    spec: &Spec,
    part: &[usize],
    keys: &Keys,
    rows: &[WinRow],
    env: &dyn Env,
) -> Result<Vec<Value>> {
    let n = part.len();
    let default_over = Over::default();
    let over = call.over.as_deref().unwrap_or(&default_over);
    // Peer groups: [peer_start[i], peer_end[i]) are row i's peers (invariant 2).
    let mut peer_start = vec![0usize; n];
    let mut peer_end = vec![n; n];
    for i in 1..n {
        peer_start[i] = if peers(spec, &keys[part[i - 1]].1, &keys[part[i]].1) {
            peer_start[i - 1]
        } else {
            i
        };
    }
    for i in (0..n.saturating_sub(1)).rev() {
        peer_end[i] = if peers(spec, &keys[part[i]].1, &keys[part[i + 1]].1) {
            peer_end[i + 1]
        } else {
            i + 1
        };
    }
    let row = |i: usize| &rows[part[i]];
    let arg = |i: usize| -> Result<Value> {
        match &call.arg {
            Some(a) => eval_on(a, row(i), env),
            None => Ok(Value::Null),
        }
    };
    let mut out = Vec::with_capacity(n);
    match call.f {
        AggFn::RowNumber => (0..n).for_each(|i| out.push(Value::Int(i as i64 + 1))),
        AggFn::Rank => (0..n).for_each(|i| out.push(Value::Int(peer_start[i] as i64 + 1))),
        AggFn::DenseRank => {
            let mut rank = 0i64;
            for (i, &start) in peer_start.iter().enumerate() {
                if start == i {
                    rank += 1;
                }
                out.push(Value::Int(rank));
            }
        }
        AggFn::PercentRank => {
            for &s in &peer_start {
                out.push(Value::Double(if n > 1 {
                    s as f64 / (n - 1) as f64
                } else {
                    0.0
                }));
            }
        }
        AggFn::CumeDist => {
            for &e in &peer_end {
                out.push(Value::Double(e as f64 / n as f64));
            }
        }
        AggFn::Ntile => {
            for i in 0..n {
                let k = match int_of(&arg(i)?, env) {
                    Some(k) if k > 0 => k as usize,
                    _ => return Err(SqlError::NtileArgument),
                };
                out.push(Value::Int(ntile(i, n, k) as i64));
            }
        }
        AggFn::Lag | AggFn::Lead => {
            for i in 0..n {
                // A NULL offset is 0 (the current row), a negative one looks the other way,
                // as in MariaDB.
                let off = match call.more.first() {
                    Some(e) => Some(int_of(&eval_on(e, row(i), env)?, env).unwrap_or(0)),
                    None => Some(1),
                };
                let target = off.and_then(|o| {
                    let t = if call.f == AggFn::Lag {
                        i as i128 - o
                    } else {
                        i as i128 + o
                    };
                    usize::try_from(t).ok().filter(|&t| t < n)
                });
                out.push(match target {
                    Some(t) => arg(t)?,
                    None => match call.more.get(1) {
                        Some(d) => eval_on(d, row(i), env)?,
                        None => Value::Null,
                    },
                });
            }
        }
        _ => {
            let frames = frames(over, n, &peer_start, &peer_end, part, keys, env)?;
            match call.f {
                AggFn::FirstValue | AggFn::LastValue | AggFn::NthValue => {
                    for (i, &(fs, fe)) in frames.iter().enumerate() {
                        let at = match call.f {
                            AggFn::FirstValue => (fs < fe).then_some(fs),
                            AggFn::LastValue => (fs < fe).then(|| fe - 1),
                            _ => {
                                // NTH_VALUE(x, NULL) is the first, as in MariaDB; 0
                                // or less is NULL.
                                let k = match call.more.first() {
                                    Some(e) => int_of(&eval_on(e, row(i), env)?, env).or(Some(1)),
                                    None => None,
                                };
                                k.filter(|&k| k >= 1)
                                    .and_then(|k| usize::try_from(k - 1).ok())
                                    .map(|k| fs.saturating_add(k))
                                    .filter(|&j| j < fe)
                            }
                        };
                        out.push(match at {
                            Some(j) => arg(j)?,
                            None => Value::Null,
                        });
                    }
                }
                _ => out = framed_aggregate(call, &frames, n, &arg, env)?,
            }
        }
    }
    Ok(out)
}

/// NTILE(k)'s bucket (from 1) of row `i` of `n`: the first `n % k` buckets hold one row
/// more than the others.
fn ntile(i: usize, n: usize, k: usize) -> usize {
    let q = n / k;
    let rem = n % k;
    if q == 0 {
        return i + 1;
    }
    let big = rem * (q + 1);
    if i < big {
        i / (q + 1) + 1
    } else {
        (i - big) / q + rem + 1
    }
}

/// Each row's frame, `[start, end)` within the partition.
fn frames(
    over: &Over,
    n: usize,
    peer_start: &[usize],
    peer_end: &[usize],
    part: &[usize],
    keys: &Keys,
    env: &dyn Env,
) -> Result<Vec<(usize, usize)>> {
    let Some(f) = &over.frame else {
        // No frame: with ORDER BY, RANGE UNBOUNDED PRECEDING to the current row's last
        // peer; without, the whole partition.
        return Ok((0..n)
            .map(|i| {
                if over.order.is_empty() {
                    (0, n)
                } else {
                    (0, peer_end[i])
                }
            })
            .collect());
    };
    let none = Row {
        values: &[],
        aggs: &[],
    };
    let offset = |e: &Expr| -> Result<Value> { e.eval(&none, env) };
    let mut out = Vec::with_capacity(n);
    if f.rows {
        let k = |e: &Expr| -> Result<usize> {
            let v = offset(e)?;
            Ok(int_of(&v, env).map_or(0, |k| usize::try_from(k).unwrap_or(0)))
        };
        let (ks, ke) = (
            match &f.start {
                Bound::Preceding(e) | Bound::Following(e) => k(e)?,
                _ => 0,
            },
            match &f.end {
                Bound::Preceding(e) | Bound::Following(e) => k(e)?,
                _ => 0,
            },
        );
        for i in 0..n {
            let s = match &f.start {
                Bound::UnboundedPreceding => 0,
                Bound::Preceding(_) => i.saturating_sub(ks),
                Bound::CurrentRow => i,
                Bound::Following(_) => i.saturating_add(ks).min(n),
                Bound::UnboundedFollowing => n,
            };
            let e = match &f.end {
                Bound::UnboundedPreceding => 0,
                Bound::Preceding(_) => (i + 1).saturating_sub(ke),
                Bound::CurrentRow => i + 1,
                Bound::Following(_) => i.saturating_add(ke).saturating_add(1).min(n),
                Bound::UnboundedFollowing => n,
            };
            out.push((s, e.max(s)));
        }
        return Ok(out);
    }
    // RANGE: offsets move along the one numeric ORDER BY key (`window::plan` checked it).
    let desc = over.order.first().is_some_and(|o| o.1);
    let coll = over
        .order
        .first()
        .map_or(crate::bind::LITERAL_COLLATION, |o| o.2);
    let range = Range {
        keys,
        part,
        desc,
        coll,
    };
    let moved = |v: &Value, e: &Expr, preceding: bool| -> Result<Value> {
        let k = offset(e)?;
        // PRECEDING goes toward the start of the order: down ascending, up descending.
        let op = if preceding != desc {
            BinOp::Sub
        } else {
            BinOp::Add
        };
        let t = binary(op, v.clone(), k)?;
        // MariaDB stores the bound in the key's type: an integer key rounds it (`id + 1.5`
        // is `id + 2`).
        Ok(match v {
            Value::Int(_) | Value::UInt(_) => match crate::func::cast::to_int(&t, env) {
                Some(i) => i64::try_from(i).map_or(t, Value::Int),
                None => t,
            },
            _ => t,
        })
    };
    for i in 0..n {
        let v = range.key(i).clone();
        let null = matches!(v, Value::Null);
        let s = match &f.start {
            Bound::UnboundedPreceding => 0,
            Bound::CurrentRow => peer_start[i],
            Bound::UnboundedFollowing => n,
            Bound::Preceding(_) | Bound::Following(_) if null => peer_start[i],
            Bound::Preceding(e) => range.position(&moved(&v, e, true)?, false),
            Bound::Following(e) => range.position(&moved(&v, e, false)?, false),
        };
        let e = match &f.end {
            Bound::UnboundedPreceding => 0,
            Bound::CurrentRow => peer_end[i],
            Bound::UnboundedFollowing => n,
            Bound::Preceding(_) | Bound::Following(_) if null => peer_end[i],
            Bound::Preceding(x) => range.position(&moved(&v, x, true)?, true),
            Bound::Following(x) => range.position(&moved(&v, x, false)?, true),
        };
        out.push((s, e.max(s)));
    }
    Ok(out)
}

static NULL: Value = Value::Null;

/// One partition's rows as a RANGE frame sees them: by their one ORDER BY key.
struct Range<'k> {
    keys: &'k Keys,
    part: &'k [usize],
    desc: bool,
    coll: quire_engine::row::Collation,
}

impl Range<'_> {
    fn key(&self, j: usize) -> &Value {
        self.keys[self.part[j]].1.first().unwrap_or(&NULL)
    }

    /// The first row at value `t` or after it in the sort order (`after`: strictly after
    /// it): a binary search, the keys being sorted (invariant 2).
    fn position(&self, t: &Value, after: bool) -> usize {
        let before = |j: usize| -> bool {
            let k = self.key(j);
            if matches!(k, Value::Null) {
                // NULLs sort first ascending, last descending.
                return !self.desc;
            }
            let o = compare(k, t, self.coll);
            let o = if self.desc { o.reverse() } else { o };
            if after {
                o != Ordering::Greater
            } else {
                o == Ordering::Less
            }
        };
        let (mut lo, mut hi) = (0, self.part.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if before(mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// Whether a row can be taken out of `f`'s running state (a sliding frame).
fn removable(f: AggFn) -> bool {
    matches!(
        f,
        AggFn::CountStar | AggFn::Count | AggFn::Sum | AggFn::Avg | AggFn::BitXor
    )
}

/// An aggregate over each row's frame: a running state while frames start at the
/// partition's first row, a sliding one for COUNT / SUM / AVG / BIT_XOR, a recount
/// otherwise (invariant 3).
fn framed_aggregate(
    call: &AggCall,
    frames: &[(usize, usize)],
    n: usize,
    arg: &dyn Fn(usize) -> Result<Value>,
    env: &dyn Env,
) -> Result<Vec<Value>> {
    let vals: Vec<Option<Value>> = (0..n)
        .map(|j| {
            Ok(match call.f {
                AggFn::CountStar => None,
                _ => Some(arg(j)?),
            })
        })
        .collect::<Result<_>>()?;
    let mut out = Vec::with_capacity(n);
    let running = frames.iter().all(|&(s, _)| s == 0);
    if running || removable(call.f) {
        let mut state = agg_init(call);
        let (mut lo, mut hi) = (0usize, 0usize);
        for &(s, e) in frames {
            while hi < e {
                agg_add(call, &mut state, vals[hi].clone(), env)?;
                hi += 1;
            }
            while lo < s && lo < hi {
                remove(call, &mut state, vals[lo].clone())?;
                lo += 1;
            }
            if s > hi {
                // The frame starts past every row added: start over there.
                state = agg_init(call);
                lo = s;
                hi = s;
                while hi < e {
                    agg_add(call, &mut state, vals[hi].clone(), env)?;
                    hi += 1;
                }
            }
            out.push(agg_result(call, state.clone(), env)?);
        }
        return Ok(out);
    }
    for &(s, e) in frames {
        let mut state = agg_init(call);
        for v in &vals[s..e] {
            agg_add(call, &mut state, v.clone(), env)?;
        }
        out.push(agg_result(call, state, env)?);
    }
    Ok(out)
}

/// Takes a value added earlier out of a COUNT, SUM, AVG or BIT_XOR state.
fn remove(call: &AggCall, s: &mut AggState, v: Option<Value>) -> Result<()> {
    match (s, v) {
        (AggState::Count(n), None) => *n -= 1,
        (_, None) | (_, Some(Value::Null)) => {}
        (AggState::Count(n), Some(_)) => *n -= 1,
        (AggState::Sum(acc, n), Some(v)) => {
            // As `agg_add` converted it (its warning was raised when it was added).
            let v = match v {
                Value::Str(_) | Value::Bytes(_) => Value::Double(types::num(&v)),
                Value::Int(i) => Value::Decimal(quire_engine::row::Decimal::new(i128::from(i), 0)),
                Value::UInt(u) => Value::Decimal(quire_engine::row::Decimal::new(i128::from(u), 0)),
                other => other,
            };
            *n -= 1;
            *acc = match acc.take() {
                Some(a) if *n > 0 => Some(binary(BinOp::Sub, a, v)?),
                _ => None,
            };
        }
        (AggState::Bits(b), Some(v)) if call.f == AggFn::BitXor => {
            let x = crate::func::cast::to_int(&v, &crate::expr::Quiet).map_or(0, |n| n as u64);
            *b ^= x;
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::ntile;

    #[test]
    fn ntile_gives_the_first_buckets_one_row_more() {
        let b: Vec<usize> = (0..7).map(|i| ntile(i, 7, 3)).collect();
        assert_eq!(b, vec![1, 1, 1, 2, 2, 3, 3]);
        let b: Vec<usize> = (0..2).map(|i| ntile(i, 2, 5)).collect();
        assert_eq!(b, vec![1, 2]);
    }
}
