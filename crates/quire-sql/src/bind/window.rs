//! Binding a window function call, `f(…) OVER (…)` or `f(…) OVER w`, and a window
//! specification (also a named one of `WINDOW w AS (…)`). The call becomes an [`AggCall`]
//! with `over` set, in the query's aggregate list: its value is read as `Expr::Agg(i)`,
//! but `exec/window.rs` computes it after grouping, never a group's aggregate. Names of
//! windows are resolved later (`window::plan`), when the query's named windows are known.

use quire_engine::row::Collation;
use sqlparser::ast as sql;

use super::{derive_collation, AggCall, Binder, GROUP_CONCAT_MAX_LEN};
use crate::error::{Result, SqlError};
use crate::expr::{AggFn, Expr};
use crate::window::{Bound, Frame, Over};

/// The window function a name is, with its arguments' count (min, max).
fn window_fn(name: &str, star: bool) -> Option<(AggFn, usize, usize)> {
    Some(match name {
        "row_number" => (AggFn::RowNumber, 0, 0),
        "rank" => (AggFn::Rank, 0, 0),
        "dense_rank" => (AggFn::DenseRank, 0, 0),
        "percent_rank" => (AggFn::PercentRank, 0, 0),
        "cume_dist" => (AggFn::CumeDist, 0, 0),
        "ntile" => (AggFn::Ntile, 1, 1),
        // MariaDB 10.11's LAG / LEAD take no default (a third argument is 1064).
        "lag" => (AggFn::Lag, 1, 2),
        "lead" => (AggFn::Lead, 1, 2),
        "first_value" => (AggFn::FirstValue, 1, 1),
        "last_value" => (AggFn::LastValue, 1, 1),
        "nth_value" => (AggFn::NthValue, 2, 2),
        "count" if star => (AggFn::CountStar, 0, 0),
        "count" => (AggFn::Count, 1, 1),
        "sum" => (AggFn::Sum, 1, 1),
        "avg" => (AggFn::Avg, 1, 1),
        "min" => (AggFn::Min, 1, 1),
        "max" => (AggFn::Max, 1, 1),
        "bit_and" => (AggFn::BitAnd, 1, 1),
        "bit_or" => (AggFn::BitOr, 1, 1),
        "bit_xor" => (AggFn::BitXor, 1, 1),
        other => (AggFn::variance_named(other)?, 1, 1),
    })
}

/// How many of `aggs` are window functions (a nested one shows as a new entry).
fn windows_in(aggs: &Option<&mut Vec<AggCall>>) -> usize {
    aggs.as_deref()
        .map_or(0, |a| a.iter().filter(|c| c.over.is_some()).count())
}

impl Binder<'_> {
    /// `f(args) OVER …`: allowed only where aggregates are and not in HAVING (4015).
    pub(super) fn window_function(
        &mut self,
        f: &sql::Function,
        name: &str,
        over: &sql::WindowType,
    ) -> Result<Expr> {
        if self.aggs.is_none() || self.context == "HAVING" {
            return Err(SqlError::WindowPlacement);
        }
        let (args, distinct, star) = match &f.args {
            sql::FunctionArguments::None => (Vec::new(), false, false),
            sql::FunctionArguments::Subquery(_) => {
                return Err(SqlError::Unsupported(
                    "a subquery as a window function".into(),
                ))
            }
            sql::FunctionArguments::List(l) => {
                if !l.clauses.is_empty() {
                    return Err(SqlError::Unsupported(format!("{f}")));
                }
                let mut star = false;
                let mut args = Vec::new();
                for a in &l.args {
                    match a {
                        sql::FunctionArg::Unnamed(sql::FunctionArgExpr::Expr(x)) => args.push(x),
                        sql::FunctionArg::Unnamed(sql::FunctionArgExpr::Wildcard) => star = true,
                        other => return Err(SqlError::Unsupported(other.to_string())),
                    }
                }
                let distinct = matches!(
                    l.duplicate_treatment,
                    Some(sql::DuplicateTreatment::Distinct)
                );
                (args, distinct, star)
            }
        };
        if f.filter.is_some() || f.null_treatment.is_some() || !f.within_group.is_empty() {
            return Err(SqlError::Unsupported(format!("{f}")));
        }
        let Some((af, min, max)) = window_fn(name, star) else {
            return Err(match name {
                "group_concat" => SqlError::MariaDbUnsupported(
                    "GROUP_CONCAT() aggregate as window function".into(),
                ),
                // MariaDB's grammar has no other window function.
                _ => SqlError::Parse {
                    near: format!("{over}"),
                    line: 1,
                },
            });
        };
        if args.len() < min || args.len() > max {
            // MariaDB's grammar fixes each window function's arguments: 1064.
            return Err(SqlError::Parse {
                near: format!("{f}"),
                line: 1,
            });
        }
        if distinct {
            // MariaDB 10.11 has no DISTINCT aggregate over a window either.
            return Err(SqlError::MariaDbUnsupported(format!(
                "{}(DISTINCT) aggregate as window function",
                name.to_uppercase()
            )));
        }
        // Arguments may hold aggregates (`SUM(SUM(x)) OVER ()`, over the groups), not
        // another window function.
        let before = windows_in(&self.aggs);
        let mut bound = args
            .iter()
            .map(|a| self.bind(a))
            .collect::<Result<Vec<_>>>()?;
        if windows_in(&self.aggs) != before {
            return Err(SqlError::WindowAsArgument);
        }
        let spec = match over {
            sql::WindowType::NamedWindow(w) => Over {
                name: Some(w.value.clone()),
                bare: true,
                ..Over::default()
            },
            sql::WindowType::WindowSpec(s) => self.window_spec(s)?,
        };
        let colls: Vec<Collation> = bound
            .iter()
            .map(|a| derive_collation(a, self.columns(), self.lit()).0)
            .collect();
        let coll = colls.first().copied().unwrap_or(self.lit());
        let more = if bound.len() > 1 {
            bound.split_off(1)
        } else {
            Vec::new()
        };
        let arg = bound.pop();
        let Some(aggs) = self.aggs.as_deref_mut() else {
            return Err(SqlError::WindowPlacement);
        };
        aggs.push(AggCall {
            f: af,
            arg,
            more,
            distinct: false,
            coll,
            colls,
            order: Vec::new(),
            separator: String::new(),
            max_len: GROUP_CONCAT_MAX_LEN.with(|c| c.get()),
            over: Some(Box::new(spec)),
        });
        Ok(Expr::Agg(aggs.len() - 1))
    }

    /// A window specification: its keys bound in this binder's scope (aggregates allowed,
    /// window functions not: 4015, as MariaDB), its frame's offsets as expressions.
    pub(crate) fn window_spec(&mut self, s: &sql::WindowSpec) -> Result<Over> {
        let before = windows_in(&self.aggs);
        let mut partition = Vec::new();
        for e in &s.partition_by {
            let b = self.bind(e)?;
            let c = derive_collation(&b, self.columns(), self.lit()).0;
            partition.push((b, c));
        }
        let mut order = Vec::new();
        for o in &s.order_by {
            let b = self.bind(&o.expr)?;
            let c = derive_collation(&b, self.columns(), self.lit()).0;
            let desc = matches!(o.options.sort, Some(sql::OrderBySort::Desc));
            order.push((b, desc, c));
        }
        let frame = match &s.window_frame {
            None => None,
            Some(f) => {
                let rows = match f.units {
                    sql::WindowFrameUnits::Rows => true,
                    sql::WindowFrameUnits::Range => false,
                    sql::WindowFrameUnits::Groups => {
                        return Err(SqlError::Parse {
                            near: format!("{}", f.units),
                            line: 1,
                        })
                    }
                };
                let start = self.frame_bound(&f.start_bound)?;
                let end = match &f.end_bound {
                    Some(b) => self.frame_bound(b)?,
                    None => Bound::CurrentRow,
                };
                Some(Frame { rows, start, end })
            }
        };
        if windows_in(&self.aggs) != before {
            return Err(SqlError::WindowPlacement);
        }
        Ok(Over {
            name: s.window_name.as_ref().map(|n| n.value.clone()),
            bare: false,
            partition,
            order,
            frame,
        })
    }

    fn frame_bound(&mut self, b: &sql::WindowFrameBound) -> Result<Bound> {
        Ok(match b {
            sql::WindowFrameBound::CurrentRow => Bound::CurrentRow,
            sql::WindowFrameBound::Preceding(None) => Bound::UnboundedPreceding,
            sql::WindowFrameBound::Following(None) => Bound::UnboundedFollowing,
            sql::WindowFrameBound::Preceding(Some(e)) => Bound::Preceding(self.offset(e)?),
            sql::WindowFrameBound::Following(Some(e)) => Bound::Following(self.offset(e)?),
        })
    }

    /// A frame offset: a constant (MariaDB's grammar takes an unsigned literal or a
    /// parameter: anything else, `-1` too, is 1064).
    fn offset(&mut self, e: &sql::Expr) -> Result<Expr> {
        let b = self.bind(e)?;
        if !b.is_constant() || matches!(e, sql::Expr::UnaryOp { .. }) {
            return Err(SqlError::Parse {
                near: format!("{e}"),
                line: 1,
            });
        }
        Ok(b)
    }
}
