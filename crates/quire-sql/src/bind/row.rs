//! Row constructors and row subqueries: `(a, b) = (1, 2)`, `ROW(a, b) < (1, 3)`,
//! `(a, b) IN ((1, 2), (3, 4))`, `(a, b) = (SELECT x, y …)`, `(a, b) IN (SELECT x, y …)`.
//!
//! A row is an operand of a comparison or of IN only. Its values compare pair by pair
//! (`Expr::RowCmp`, `expr::compare_rows`), each pair in the collation a comparison of the
//! two values would use. Nested rows (`(1, (2, 3))`) are flattened once their shapes are
//! checked equal, which gives the same answers as MariaDB's nested comparators.
//!
//! Errors, as MariaDB 10.11 gives them: rows of different sizes are 1241 "Operand should
//! contain N column(s)" (N the left row's); a row against a value (or a value against a
//! row, or a row in arithmetic) is 4078 "Illegal parameter data types row and int for
//! operation '='"; a row anywhere else (the select list, a function's argument, NOT,
//! IS NULL, …) is 1241 with N = 1. `x IN (row, …)` is MariaDB's `=` of each member, so
//! its 4078 names `=`; a row IN a list of values names `in`.

use std::sync::Arc;

use quire_engine::row::{Collation, Column, ColumnType, Value};
use sqlparser::ast as sql;

use super::{comparison_collation, Binder, Coercibility};
use crate::error::{Result, SqlError};
use crate::expr::{BinOp, Expr, RowSide};
use crate::meta::FieldType;
use crate::subquery::{SubKind, Subquery};

/// A comparison operand, bound.
enum Operand {
    Value(Expr),
    Row(Vec<Operand>),
    /// A subquery of more than one column: a row of its columns.
    Sub(Arc<Subquery>),
}

impl Operand {
    /// How many columns it has (MariaDB's `cols()`).
    fn cols(&self) -> usize {
        match self {
            Operand::Value(_) => 1,
            Operand::Row(r) => r.len(),
            Operand::Sub(s) => s.plan.items.len(),
        }
    }
}

/// Whether `e` is written as a row: `(a, b)`, `ROW(a, b)`, or one in parentheses.
pub(crate) fn is_row_syntax(e: &sql::Expr) -> bool {
    match e {
        sql::Expr::Tuple(_) => true,
        sql::Expr::Nested(inner) => is_row_syntax(inner),
        sql::Expr::Function(f) => row_function(f).is_some(),
        _ => false,
    }
}

/// The arguments of `ROW(a, b, …)` (parse.rs refuses `ROW(a)` as MariaDB's grammar does).
fn row_function(f: &sql::Function) -> Option<Vec<&sql::Expr>> {
    let [sql::ObjectNamePart::Identifier(name)] = f.name.0.as_slice() else {
        return None;
    };
    if name.quote_style.is_some() || !name.value.eq_ignore_ascii_case("row") || f.over.is_some() {
        return None;
    }
    let sql::FunctionArguments::List(l) = &f.args else {
        return None;
    };
    l.args
        .iter()
        .map(|a| match a {
            sql::FunctionArg::Unnamed(sql::FunctionArgExpr::Expr(x)) => Some(x),
            _ => None,
        })
        .collect()
}

/// MariaDB's name of a value's type in a 4078 message (its type handler's name).
fn type_name(ft: FieldType, unsigned: bool) -> String {
    let name = match ft {
        FieldType::Tiny => "tinyint",
        FieldType::Short => "smallint",
        FieldType::Int24 => "mediumint",
        FieldType::Long => "int",
        FieldType::LongLong => "bigint",
        FieldType::NewDecimal => "decimal",
        FieldType::Float => "float",
        FieldType::Double => "double",
        FieldType::Null => "null",
        FieldType::String => "char",
        FieldType::Blob => "blob",
        FieldType::LongBlob => "longblob",
        FieldType::Date => "date",
        FieldType::DateTime => "datetime",
        FieldType::Timestamp => "timestamp",
        FieldType::Year => "year",
        _ => "varchar",
    };
    if unsigned
        && matches!(
            name,
            "tinyint" | "smallint" | "mediumint" | "int" | "bigint"
        )
    {
        format!("{name} unsigned")
    } else {
        name.to_string()
    }
}

impl Binder<'_> {
    /// An operand that may be a row.
    fn operand(&mut self, e: &sql::Expr) -> Result<Operand> {
        Ok(match e {
            sql::Expr::Nested(inner) => self.operand(inner)?,
            sql::Expr::Tuple(items) => Operand::Row(
                items
                    .iter()
                    .map(|x| self.operand(x))
                    .collect::<Result<_>>()?,
            ),
            sql::Expr::Function(f) if row_function(f).is_some() => {
                let args = row_function(f).unwrap_or_default();
                Operand::Row(
                    args.into_iter()
                        .map(|x| self.operand(x))
                        .collect::<Result<_>>()?,
                )
            }
            sql::Expr::Subquery(q) => {
                let s = self.subquery(q)?;
                if s.plan.items.len() == 1 {
                    Operand::Value(Expr::Sub(SubKind::Scalar, s))
                } else {
                    Operand::Sub(s)
                }
            }
            other => Operand::Value(self.bind(other)?),
        })
    }

    /// The 4078 name of an operand that is a value.
    fn operand_type(&self, o: &Operand) -> String {
        match o {
            Operand::Value(e) => {
                let aggs = self.aggs.as_deref().map_or(&[][..], |a| a.as_slice());
                let t = crate::func::types::infer(e, self.columns(), aggs);
                type_name(t.ft, t.unsigned)
            }
            _ => "row".into(),
        }
    }

    /// 4078 or 1241 unless `l` and `r` have the same shape: a row against a value is
    /// 4078 at the top and 1241 (the left member's columns) inside a row, as MariaDB.
    fn check_shapes(&self, l: &Operand, r: &Operand, op: &str, nested: bool) -> Result<()> {
        let is_row = |o: &Operand| !matches!(o, Operand::Value(_));
        match (l, r) {
            (Operand::Value(_), Operand::Value(_)) => Ok(()),
            _ if is_row(l) != is_row(r) && !nested => Err(SqlError::IllegalParameterTypes {
                left: self.operand_type(l),
                right: self.operand_type(r),
                op: op.into(),
            }),
            _ if l.cols() != r.cols() || is_row(l) != is_row(r) => {
                Err(SqlError::OperandColumns(l.cols()))
            }
            (Operand::Row(a), Operand::Row(b)) => {
                for (x, y) in a.iter().zip(b) {
                    self.check_shapes(x, y, op, true)?;
                }
                Ok(())
            }
            // A subquery's columns are values: a member that is a row is 1241.
            (Operand::Row(a), Operand::Sub(_)) => match a.iter().find(|x| is_row(x)) {
                Some(x) => Err(SqlError::OperandColumns(x.cols())),
                None => Ok(()),
            },
            (Operand::Sub(_), Operand::Row(a)) => match a.iter().find(|x| is_row(x)) {
                Some(_) => Err(SqlError::OperandColumns(1)),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// A checked row operand as the side of a comparison: its values flattened, or its
    /// subquery.
    fn side(o: Operand) -> Result<RowSide> {
        fn leaves(o: Operand, out: &mut Vec<Expr>) -> Result<()> {
            match o {
                Operand::Value(e) => out.push(e),
                Operand::Row(r) => {
                    for x in r {
                        leaves(x, out)?;
                    }
                }
                Operand::Sub(_) => {
                    return Err(SqlError::Unsupported(
                        "a row subquery inside a row constructor".into(),
                    ))
                }
            }
            Ok(())
        }
        match o {
            Operand::Sub(s) => Ok(RowSide::Sub(s)),
            other => {
                let mut out = Vec::new();
                leaves(other, &mut out)?;
                Ok(RowSide::Exprs(out))
            }
        }
    }

    /// Member `i` of a row side as an expression whose collation is the member's (a
    /// subquery's column stands in as a column of its collation, pushed onto `cols`).
    fn member(&self, side: &RowSide, i: usize, cols: &mut Vec<Column>) -> Expr {
        match side {
            RowSide::Exprs(es) => es.get(i).cloned().unwrap_or(Expr::Lit(Value::Null)),
            RowSide::Sub(s) => {
                let (coll, k) = s
                    .plan
                    .item_derived
                    .get(i)
                    .copied()
                    .unwrap_or((self.lit(), Coercibility::Numeric));
                match k {
                    Coercibility::Implicit => {
                        let mut c = Column::new("", ColumnType::VarChar { max_chars: 1 });
                        c.collation = coll;
                        cols.push(c);
                        Expr::Column(cols.len() - 1)
                    }
                    Coercibility::Explicit => Expr::Collate(Box::new(Expr::Lit(Value::Null)), coll),
                    Coercibility::Coercible => Expr::Lit(Value::Str(String::new())),
                    Coercibility::Numeric => Expr::Lit(Value::Int(0)),
                }
            }
        }
    }

    /// Each member pair's collation, as a comparison of the two would have it.
    fn member_collations(
        &self,
        l: &RowSide,
        r: &RowSide,
        n: usize,
        op: &str,
    ) -> Result<Vec<Collation>> {
        let mut cols = self.columns().to_vec();
        (0..n)
            .map(|i| {
                let a = self.member(l, i, &mut cols);
                let b = self.member(r, i, &mut cols);
                comparison_collation(&a, &b, &cols, op, self.lit())
            })
            .collect()
    }

    /// `left op right` where one side is written as a row (or both are subqueries): a
    /// row comparison, or `None` when both turn out to be values.
    pub(super) fn row_comparison(
        &mut self,
        left: &sql::Expr,
        op: BinOp,
        right: &sql::Expr,
    ) -> Result<Expr> {
        let name = super::op_text(op);
        let (l, r) = match (self.operand(left)?, self.operand(right)?) {
            (Operand::Value(a), Operand::Value(b)) => {
                let coll = comparison_collation(&a, &b, self.columns(), &name, self.lit())?;
                return Ok(Expr::Cmp(op, Box::new(a), Box::new(b), coll));
            }
            pair => pair,
        };
        self.check_shapes(&l, &r, &name, false)?;
        let (l, r) = (Self::side(l)?, Self::side(r)?);
        let n = match &l {
            RowSide::Exprs(e) => e.len(),
            RowSide::Sub(s) => s.plan.items.len(),
        };
        let colls = self.member_collations(&l, &r, n, &name)?;
        Ok(Expr::RowCmp { op, l, r, colls })
    }

    /// `left IN (list)` where the left side or a member is written as a row: the OR of
    /// the members' `=` (three-valued, as IN is), NOT of it for NOT IN.
    pub(super) fn row_in_list(
        &mut self,
        left: &sql::Expr,
        list: &[sql::Expr],
        negated: bool,
    ) -> Result<Expr> {
        let l = self.operand(left)?;
        let mut members = Vec::with_capacity(list.len());
        for x in list {
            let m = self.operand(x)?;
            // A row against values is IN's own error; a value against a row member is
            // the error of that member's `=`.
            let op = if matches!(m, Operand::Value(_)) {
                "in"
            } else {
                "="
            };
            self.check_shapes(&l, &m, op, false)?;
            members.push(m);
        }
        let left_side = match &l {
            Operand::Value(e) => RowSide::Exprs(vec![e.clone()]),
            _ => Self::side(l)?,
        };
        let mut out: Option<Expr> = None;
        for m in members {
            let r = Self::side(m)?;
            let n = match &r {
                RowSide::Exprs(e) => e.len(),
                RowSide::Sub(s) => s.plan.items.len(),
            };
            let colls = self.member_collations(&left_side, &r, n, "in")?;
            let cmp = Expr::RowCmp {
                op: BinOp::Eq,
                l: left_side.clone(),
                r,
                colls,
            };
            out = Some(match out {
                None => cmp,
                Some(prev) => Expr::Binary(BinOp::Or, Box::new(prev), Box::new(cmp)),
            });
        }
        let e = out.ok_or_else(|| SqlError::Parse {
            near: ")".into(),
            line: 1,
        })?;
        Ok(if negated { Expr::Not(Box::new(e)) } else { e })
    }

    /// `(a, b) IN (SELECT x, y …)` and `(a, b) = ANY (…)`; any other quantified
    /// comparison of a row is 1241, as MariaDB.
    pub(super) fn row_in_subquery(
        &mut self,
        left: &sql::Expr,
        q: &sql::Query,
        op: Option<(BinOp, bool)>,
    ) -> Result<Expr> {
        if !matches!(op, None | Some((BinOp::Eq, false))) {
            return Err(SqlError::OperandColumns(1));
        }
        let l = self.operand(left)?;
        let n = l.cols();
        let es = match Self::side(l)? {
            RowSide::Exprs(es) if es.len() == n => es,
            _ => return Err(SqlError::Unsupported("a nested row IN a subquery".into())),
        };
        let s = self.subquery(q)?;
        if s.plan.items.len() != n {
            return Err(SqlError::OperandColumns(n));
        }
        let colls = self.member_collations(
            &RowSide::Exprs(es.clone()),
            &RowSide::Sub(s.clone()),
            n,
            "in",
        )?;
        Ok(Expr::Sub(SubKind::RowIn { es, colls }, s))
    }

    /// A row in arithmetic: 4078 naming both operands' types.
    pub(super) fn row_arithmetic(
        &mut self,
        left: &sql::Expr,
        symbol: &str,
        right: &sql::Expr,
    ) -> Result<Expr> {
        let (l, r) = (self.operand(left)?, self.operand(right)?);
        Err(SqlError::IllegalParameterTypes {
            left: self.operand_type(&l),
            right: self.operand_type(&r),
            op: symbol.into(),
        })
    }
}
