//! Window functions, as MariaDB 10.11 has them: `f(…) OVER ([w] [PARTITION BY …]
//! [ORDER BY …] [frame])`, `OVER w` and `WINDOW w AS (…)`.
//!
//! ```text
//!   FROM / WHERE ─▶ GROUP BY + aggregates ─▶ HAVING ─▶ ┌ window step ┐ ─▶ select list
//!                                                     │ per Spec:    │    ─▶ DISTINCT
//!                                                     │  sort rows   │    ─▶ ORDER BY
//!                                                     │  by (P, O),  │    ─▶ LIMIT
//!                                                     │  one pass    │
//!                                                     │  per part.   │
//!                                                     └──────────────┘
//! ```
//!
//! Binding (`bind/window.rs`) puts each call in the query's aggregate list with its
//! [`Over`]; [`plan`] resolves window names, checks what MariaDB checks, and groups the
//! calls by their (partition, order) keys into [`Spec`]s: one sort each. Execution is
//! `exec/window.rs`.

use quire_engine::row::{Collation, Column};

use crate::bind::AggCall;
use crate::error::{Result, SqlError};
use crate::expr::{AggFn, Expr};
use crate::func::types::infer;
use crate::meta::FieldType;

/// A window specification as one call (or one `WINDOW w AS (…)`) writes it, bound.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Over {
    /// `OVER w` or `OVER (w …)`: the named window it starts from.
    pub name: Option<String>,
    /// `OVER w` (no parentheses): the named window as it is.
    pub bare: bool,
    /// PARTITION BY keys, each with the collation it compares in.
    pub partition: Vec<(Expr, Collation)>,
    /// ORDER BY keys: key, descending, collation.
    pub order: Vec<(Expr, bool, Collation)>,
    pub frame: Option<Frame>,
}

/// `ROWS | RANGE BETWEEN start AND end` (`ROWS start` ends at the current row).
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub rows: bool,
    pub start: Bound,
    pub end: Bound,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Bound {
    UnboundedPreceding,
    /// `n PRECEDING`: `n` a constant expression.
    Preceding(Expr),
    CurrentRow,
    Following(Expr),
    UnboundedFollowing,
}

impl Bound {
    /// MariaDB's order of bound kinds (its `precedence_type`).
    fn kind(&self) -> u8 {
        match self {
            Bound::UnboundedPreceding | Bound::Preceding(_) => 0,
            Bound::CurrentRow => 1,
            Bound::Following(_) | Bound::UnboundedFollowing => 2,
        }
    }
}

/// The window step of a SELECT: its specifications in the order they are computed.
#[derive(Debug, Clone)]
pub struct WindowPlan {
    pub specs: Vec<Spec>,
}

/// Window calls that share PARTITION BY and ORDER BY: one sort of the rows serves them
/// all (each call keeps its own frame, in its `Over`).
#[derive(Debug, Clone)]
pub struct Spec {
    pub partition: Vec<(Expr, Collation)>,
    pub order: Vec<(Expr, bool, Collation)>,
    /// Indices into the query's aggregate list.
    pub calls: Vec<usize>,
}

/// The name MariaDB's messages give a window function.
pub fn fn_name(f: AggFn) -> &'static str {
    match f {
        AggFn::RowNumber => "row_number",
        AggFn::Rank => "rank",
        AggFn::DenseRank => "dense_rank",
        AggFn::PercentRank => "percent_rank",
        AggFn::CumeDist => "cume_dist",
        AggFn::Ntile => "ntile",
        AggFn::Lag => "lag",
        AggFn::Lead => "lead",
        AggFn::FirstValue => "first_value",
        AggFn::LastValue => "last_value",
        AggFn::NthValue => "nth_value",
        AggFn::CountStar | AggFn::Count => "count",
        AggFn::Sum => "sum",
        AggFn::Avg => "avg",
        AggFn::Min => "min",
        AggFn::Max => "max",
        AggFn::BitAnd => "bit_and",
        AggFn::BitOr => "bit_or",
        AggFn::BitXor => "bit_xor",
        AggFn::GroupConcat => "group_concat",
        AggFn::Variance {
            sample: false,
            root: true,
        } => "std",
        AggFn::Variance {
            sample: true,
            root: true,
        } => "stddev_samp",
        AggFn::Variance {
            sample: false,
            root: false,
        } => "variance",
        AggFn::Variance {
            sample: true,
            root: false,
        } => "var_samp",
    }
}

/// Window functions that take no frame (MariaDB's `is_frame_prohibited`): 4017.
fn frame_prohibited(f: AggFn) -> bool {
    matches!(
        f,
        AggFn::RowNumber
            | AggFn::Rank
            | AggFn::DenseRank
            | AggFn::PercentRank
            | AggFn::CumeDist
            | AggFn::Ntile
            | AggFn::Lag
            | AggFn::Lead
    )
}

/// Window functions that need ORDER BY in their window (MariaDB's `requires_order`): 4018.
/// (NTILE does not: over no order its buckets follow the rows' order.)
fn order_required(f: AggFn) -> bool {
    matches!(
        f,
        AggFn::Rank
            | AggFn::DenseRank
            | AggFn::PercentRank
            | AggFn::CumeDist
            | AggFn::Lag
            | AggFn::Lead
    )
}

fn is_number(ft: FieldType) -> bool {
    matches!(
        ft,
        FieldType::Tiny
            | FieldType::Short
            | FieldType::Int24
            | FieldType::Long
            | FieldType::LongLong
            | FieldType::NewDecimal
            | FieldType::Float
            | FieldType::Double
    )
}

fn is_integer(ft: FieldType) -> bool {
    matches!(
        ft,
        FieldType::Tiny
            | FieldType::Short
            | FieldType::Int24
            | FieldType::Long
            | FieldType::LongLong
    )
}

/// `over` completed from the named window it references, as MariaDB's
/// `check_window_names`: the named one's partition and order are taken (4011 if both have
/// a partition list, 4012 if both an order list), and it may have no frame (4013).
fn resolve(over: &Over, named: &[(String, Over)]) -> Result<Over> {
    let Some(name) = &over.name else {
        return Ok(over.clone());
    };
    let Some((_, w)) = named.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) else {
        return Err(SqlError::WindowName(name.clone()));
    };
    if over.bare {
        return Ok(Over {
            name: None,
            ..w.clone()
        });
    }
    if !over.partition.is_empty() {
        return Err(SqlError::WindowRefPartition(name.clone()));
    }
    if !w.order.is_empty() && !over.order.is_empty() {
        return Err(SqlError::WindowRefOrder(name.clone()));
    }
    if w.frame.is_some() {
        return Err(SqlError::WindowRefFrame(name.clone()));
    }
    Ok(Over {
        name: None,
        bare: false,
        partition: w.partition.clone(),
        order: if over.order.is_empty() {
            w.order.clone()
        } else {
            over.order.clone()
        },
        frame: over.frame.clone(),
    })
}

/// The checks MariaDB's `setup_windows` makes of one specification's frame.
fn check_frame(over: &Over, cols: &[Column], aggs: &[AggCall]) -> Result<()> {
    let Some(f) = &over.frame else { return Ok(()) };
    let bad = matches!(f.start, Bound::UnboundedFollowing)
        || matches!(f.end, Bound::UnboundedPreceding)
        || (f.start.kind() == 1 && f.end.kind() == 0)
        || (f.end.kind() == 1 && f.start.kind() == 2);
    if bad {
        return Err(SqlError::FrameBounds);
    }
    let offsets = [&f.start, &f.end].into_iter().filter_map(|b| match b {
        Bound::Preceding(e) | Bound::Following(e) => Some(e),
        _ => None,
    });
    if f.rows {
        for e in offsets {
            if !is_integer(infer(e, cols, aggs).ft) {
                return Err(SqlError::RowsFrameType);
            }
        }
    } else {
        // MariaDB checks the ORDER BY of a RANGE frame only when a bound has an offset
        // (`RANGE UNBOUNDED PRECEDING` takes any ORDER BY, or none).
        let offsets: Vec<&Expr> = offsets.collect();
        if offsets.is_empty() {
            return Ok(());
        }
        if over.order.len() != 1 {
            return Err(SqlError::RangeFrameOrderBy);
        }
        if !is_number(infer(&over.order[0].0, cols, aggs).ft) {
            return Err(SqlError::RangeFrameType);
        }
        for e in offsets {
            if !is_number(infer(e, cols, aggs).ft) {
                return Err(SqlError::RangeFrameType);
            }
        }
    }
    Ok(())
}

/// The window step of a query whose aggregate list is `aggs` and whose named windows are
/// `named` (`WINDOW …`, in order): window names resolved in each call's `Over`, MariaDB's
/// checks made, calls grouped by their keys. `None` when the query has no window function.
pub fn plan(
    aggs: &mut [AggCall],
    named: &[(String, Over)],
    cols: &[Column],
) -> Result<Option<WindowPlan>> {
    // Named windows first, each against those before it (MariaDB's order of checks).
    let mut resolved: Vec<(String, Over)> = Vec::with_capacity(named.len());
    for (n, w) in named {
        if resolved.iter().any(|(m, _)| m.eq_ignore_ascii_case(n)) {
            return Err(SqlError::DuplicateWindowName(n.clone()));
        }
        let w = resolve(w, &resolved)?;
        check_frame(&w, cols, aggs)?;
        resolved.push((n.clone(), w));
    }
    let snapshot: Vec<AggCall> = aggs.to_vec();
    let mut specs: Vec<Spec> = Vec::new();
    for (i, call) in aggs.iter_mut().enumerate() {
        let Some(over) = call.over.as_deref() else {
            continue;
        };
        let over = resolve(over, &resolved)?;
        check_frame(&over, cols, &snapshot)?;
        if over.frame.is_some() && frame_prohibited(call.f) {
            return Err(SqlError::WindowFrameNotAllowed(fn_name(call.f).into()));
        }
        if over.order.is_empty() && order_required(call.f) {
            return Err(SqlError::WindowNoOrder(fn_name(call.f).into()));
        }
        match specs
            .iter_mut()
            .find(|s| s.partition == over.partition && s.order == over.order)
        {
            Some(s) => s.calls.push(i),
            None => specs.push(Spec {
                partition: over.partition.clone(),
                order: over.order.clone(),
                calls: vec![i],
            }),
        }
        call.over = Some(Box::new(over));
    }
    Ok((!specs.is_empty()).then_some(WindowPlan { specs }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use quire_engine::row::Value;

    fn call(f: AggFn, over: Over) -> AggCall {
        AggCall {
            f,
            arg: None,
            more: Vec::new(),
            distinct: false,
            coll: Collation::Utf8mb4GeneralCi,
            colls: Vec::new(),
            order: Vec::new(),
            separator: String::new(),
            max_len: 0,
            over: Some(Box::new(over)),
        }
    }

    fn by(c: usize) -> Over {
        Over {
            order: vec![(Expr::Column(c), false, Collation::Utf8mb4GeneralCi)],
            ..Over::default()
        }
    }

    #[test]
    fn calls_with_the_same_keys_share_one_sort() {
        let mut aggs = vec![
            call(AggFn::RowNumber, by(0)),
            call(AggFn::Rank, by(0)),
            call(AggFn::RowNumber, by(1)),
        ];
        let p = plan(&mut aggs, &[], &[]).ok().flatten();
        let specs = p.map(|p| p.specs).unwrap_or_default();
        assert_eq!(specs.len(), 2);
        assert_eq!(specs[0].calls, vec![0, 1]);
        assert_eq!(specs[1].calls, vec![2]);
    }

    #[test]
    fn a_named_window_gives_its_partition_and_order() {
        let w = Over {
            partition: vec![(Expr::Column(2), Collation::Utf8mb4GeneralCi)],
            ..by(0)
        };
        let mut aggs = vec![call(
            AggFn::Sum,
            Over {
                name: Some("W".into()),
                ..Over::default()
            },
        )];
        let p = plan(&mut aggs, &[("w".into(), w.clone())], &[]);
        assert!(p.is_ok());
        let got = aggs[0].over.as_deref().cloned().unwrap_or_default();
        assert_eq!(got.partition, w.partition);
        assert_eq!(got.order, w.order);
    }

    #[test]
    fn window_errors_are_mariadbs() {
        let mut aggs = vec![call(AggFn::Rank, Over::default())];
        assert!(matches!(
            plan(&mut aggs, &[], &[]),
            Err(SqlError::WindowNoOrder(_))
        ));
        let mut aggs = vec![call(
            AggFn::Sum,
            Over {
                name: Some("nope".into()),
                ..Over::default()
            },
        )];
        assert!(matches!(
            plan(&mut aggs, &[], &[]),
            Err(SqlError::WindowName(_))
        ));
        let backwards = Over {
            frame: Some(Frame {
                rows: true,
                start: Bound::CurrentRow,
                end: Bound::Preceding(Expr::Lit(Value::Int(1))),
            }),
            ..by(0)
        };
        let mut aggs = vec![call(AggFn::Sum, backwards)];
        assert!(matches!(
            plan(&mut aggs, &[], &[]),
            Err(SqlError::FrameBounds)
        ));
        let dup = [("w".to_string(), by(0)), ("W".to_string(), by(1))];
        assert!(matches!(
            plan(&mut [], &dup, &[]),
            Err(SqlError::DuplicateWindowName(_))
        ));
    }
}
