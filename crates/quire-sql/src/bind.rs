//! Binding: sqlparser expressions to [`Expr`], names resolved against the scope of the
//! statement's table, `?` placeholders numbered in text order, aggregates collected.

use std::collections::HashMap;

use quire_engine::row::{Collation, Column, Decimal, Value};
use sqlparser::ast::{self as sql, BinaryOperator, UnaryOperator};

use crate::error::{Result, SqlError};
use crate::expr::{AggFn, BinOp, Expr, Func, SessionFn};
use crate::types::{self, Num};

/// The columns a statement's expressions can name: one table (joins are step 8).
#[derive(Debug, Clone)]
pub struct Scope {
    /// The name the query uses for the table (its alias, or its name).
    pub alias: String,
    pub db: String,
    pub table: String,
    pub columns: Vec<Column>,
}

impl Scope {
    pub fn resolve(&self, qualifier: Option<&str>, name: &str, context: &str) -> Result<usize> {
        let unknown = || SqlError::UnknownColumn {
            column: match qualifier {
                Some(q) => format!("{q}.{name}"),
                None => name.into(),
            },
            context: context.into(),
        };
        if let Some(q) = qualifier {
            if !q.eq_ignore_ascii_case(&self.alias) && !q.eq_ignore_ascii_case(&self.table) {
                return Err(unknown());
            }
        }
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
            .ok_or_else(unknown)
    }
}

/// An aggregate call found while binding a select list, HAVING or ORDER BY.
#[derive(Debug, Clone, PartialEq)]
pub struct AggCall {
    pub f: AggFn,
    pub arg: Option<Expr>,
    pub distinct: bool,
    /// The collation MIN and MAX compare strings in (the argument's).
    pub coll: Collation,
}

/// Binds expressions of one statement.
pub struct Binder<'a> {
    pub scope: Option<&'a Scope>,
    /// Placeholder positions (line, column) → parameter number, from the tokenizer.
    pub params: &'a HashMap<(u64, u64), usize>,
    /// Where aggregates go; `None` where they are not allowed (WHERE, VALUES).
    pub aggs: Option<&'a mut Vec<AggCall>>,
    /// For UnknownColumn messages: "field list", "where clause", ...
    pub context: &'static str,
}

/// The collation of string literals and parameters (MariaDB's `collation_connection` after
/// `SET NAMES utf8mb4`; a session that changes it still gets this one, docs/sql.md).
pub const LITERAL_COLLATION: Collation = Collation::Utf8mb4GeneralCi;

/// How strongly an operand's collation binds (MySQL's coercibility: lower wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Coercibility {
    /// `COLLATE name`.
    Explicit = 0,
    /// A column.
    Implicit = 2,
    /// A literal, a parameter, a function of them.
    Coercible = 4,
    /// A number, a date, NULL: no string collation to offer.
    Numeric = 6,
}

/// The collation of expression `e` and how strongly it binds, with `columns` the scope's.
pub fn derive_collation(e: &Expr, columns: &[Column]) -> (Collation, Coercibility) {
    match e {
        Expr::Collate(_, c) => (*c, Coercibility::Explicit),
        Expr::Column(i) => match columns.get(*i) {
            Some(c) if c.ty.is_string() => (c.collation, Coercibility::Implicit),
            _ => (LITERAL_COLLATION, Coercibility::Numeric),
        },
        Expr::Lit(Value::Str(_)) | Expr::Param(_) => (LITERAL_COLLATION, Coercibility::Coercible),
        Expr::Func(_, args) => args
            .iter()
            .map(|a| derive_collation(a, columns))
            .min_by_key(|(_, k)| *k)
            .unwrap_or((LITERAL_COLLATION, Coercibility::Coercible)),
        Expr::Case {
            whens, otherwise, ..
        } => whens
            .iter()
            .map(|(_, t)| t)
            .chain(otherwise.as_deref())
            .map(|a| derive_collation(a, columns))
            .min_by_key(|(_, k)| *k)
            .unwrap_or((LITERAL_COLLATION, Coercibility::Numeric)),
        _ => (LITERAL_COLLATION, Coercibility::Numeric),
    }
}

/// The collation two operands compare in: the more strongly bound one's; of two columns,
/// utf8mb4_bin; two different explicit ones are MySQL's error 1267.
pub fn comparison_collation(a: &Expr, b: &Expr, columns: &[Column], op: &str) -> Result<Collation> {
    let (ca, ka) = derive_collation(a, columns);
    let (cb, kb) = derive_collation(b, columns);
    if ka == kb && ca != cb && ka != Coercibility::Implicit && ka != Coercibility::Explicit {
        return Ok(LITERAL_COLLATION);
    }
    if ka == kb && ca != cb && ka == Coercibility::Implicit {
        // Two columns of one character set: its _bin collation wins (as in MariaDB).
        return Ok(Collation::Utf8mb4Bin);
    }
    if ka == kb && ca != cb {
        let kind = |k| match k {
            Coercibility::Explicit => "EXPLICIT",
            Coercibility::Implicit => "IMPLICIT",
            _ => "COERCIBLE",
        };
        return Err(SqlError::IllegalMixOfCollations(format!(
            "({},{}) and ({},{}) for operation '{op}'",
            ca.name(),
            kind(ka),
            cb.name(),
            kind(kb)
        )));
    }
    Ok(if ka <= kb { ca } else { cb })
}

/// The collation of a column declared with `charset` and `collation` (either may be
/// absent) in a table whose default is `default`: 1115 / 1273 for unknown names, 1253 for a
/// collation of another character set, 1235 for a character set Quire does not store.
pub fn column_collation(
    charset: Option<&str>,
    collation: Option<&str>,
    default: Collation,
) -> Result<Collation> {
    const OTHER_CHARSETS: [&str; 12] = [
        "latin1", "utf8", "utf8mb3", "ascii", "binary", "ucs2", "utf16", "utf32", "latin2",
        "cp1251", "gbk", "big5",
    ];
    if let Some(cs) = charset {
        let lower = cs.to_ascii_lowercase();
        if lower != "utf8mb4" {
            return Err(if OTHER_CHARSETS.contains(&lower.as_str()) {
                SqlError::Unsupported(format!("CHARACTER SET {cs}"))
            } else {
                SqlError::UnknownCharset(cs.into())
            });
        }
    }
    match (charset, collation) {
        (_, Some(name)) => {
            let lower = name.to_ascii_lowercase();
            let of_charset = |cs: &str| lower.starts_with(&format!("{cs}_"));
            if let Some(cs) = charset {
                let known = of_charset("utf8mb4") || OTHER_CHARSETS.iter().any(|c| of_charset(c));
                if known && !of_charset(&cs.to_ascii_lowercase()) {
                    return Err(SqlError::CollationCharsetMismatch {
                        collation: name.into(),
                        charset: cs.into(),
                    });
                }
            }
            if !of_charset("utf8mb4") && OTHER_CHARSETS.iter().any(|c| of_charset(c)) {
                return Err(SqlError::Unsupported(format!("COLLATE {name}")));
            }
            collation_named(name)
        }
        // A character set alone means its default collation.
        (Some(_), None) => Ok(Collation::Utf8mb4GeneralCi),
        (None, None) => Ok(default),
    }
}

/// A collation by name: ours, or 1273 (unknown) / 1235 (a utf8mb4 one Quire lacks).
pub fn collation_named(name: &str) -> Result<Collation> {
    if let Some(c) = Collation::from_name(name) {
        return Ok(c);
    }
    let lower = name.to_ascii_lowercase();
    if lower.starts_with("utf8mb4_") || lower == "binary" {
        return Err(SqlError::Unsupported(format!("COLLATE {name}")));
    }
    Err(SqlError::UnknownCollation(name.into()))
}

fn ident_name(i: &sql::Ident) -> String {
    i.value.clone()
}

/// The plain name parts of an object name (`db.t` → ["db", "t"]).
pub fn object_parts(n: &sql::ObjectName) -> Result<Vec<String>> {
    n.0.iter()
        .map(|p| match p {
            sql::ObjectNamePart::Identifier(i) => Ok(i.value.clone()),
            other => Err(SqlError::Unsupported(other.to_string())),
        })
        .collect()
}

/// A literal number as MySQL types it: integer, exact decimal, or double (with exponent).
pub fn number_literal(s: &str) -> Result<Value> {
    match types::parse_number(s) {
        Some(Num::Int(i)) => Ok(i64::try_from(i)
            .map(Value::Int)
            .or_else(|_| u64::try_from(i).map(Value::UInt))
            .unwrap_or_else(|_| Value::Decimal(Decimal::new(i, 0)))),
        Some(Num::Dec(d)) => Ok(Value::Decimal(d)),
        Some(Num::Float(f)) => Ok(Value::Double(f)),
        None => Err(SqlError::Parse {
            near: s.into(),
            line: 1,
        }),
    }
}

/// A literal value (no expression).
pub fn literal(v: &sql::ValueWithSpan, params: &HashMap<(u64, u64), usize>) -> Result<Expr> {
    use sql::Value as V;
    Ok(Expr::Lit(match &v.value {
        V::Number(n, _) => number_literal(n)?,
        V::SingleQuotedString(s) | V::DoubleQuotedString(s) | V::NationalStringLiteral(s) => {
            Value::Str(s.clone())
        }
        V::EscapedStringLiteral(s) => Value::Str(s.clone()),
        V::HexStringLiteral(h) => Value::Bytes(hex(h)?),
        V::SingleQuotedByteStringLiteral(s) | V::DoubleQuotedByteStringLiteral(s) => {
            Value::Bytes(s.clone().into_bytes())
        }
        V::Boolean(b) => Value::Int(i64::from(*b)),
        V::Null => Value::Null,
        V::Placeholder(p) if p == "?" => {
            let at = (v.span.start.line, v.span.start.column);
            return params.get(&at).map(|i| Expr::Param(*i)).ok_or_else(|| {
                SqlError::Unsupported("a placeholder the tokenizer did not see".into())
            });
        }
        other => return Err(SqlError::Unsupported(other.to_string())),
    }))
}

/// A string literal with a character set introducer (`_binary'…'`, `_utf8mb4 X'…'`):
/// Connector/J and go-sql-driver quote binary values as `_binary'…'`. Quire's strings are
/// utf8mb4, so it takes `_binary` (bytes), `_utf8mb4` and `_utf8mb3`/`_utf8` (text, which
/// must be UTF-8); other known character sets are 1235, unknown names 1115.
fn introduced(charset: &str, lit: Expr) -> Result<Expr> {
    let Expr::Lit(v) = lit else {
        return Err(SqlError::Unsupported(format!("_{charset}")));
    };
    let bytes = match v {
        Value::Str(s) => s.into_bytes(),
        Value::Bytes(b) => b,
        other => return Err(SqlError::Unsupported(format!("_{charset} {other:?}"))),
    };
    Ok(Expr::Lit(match charset.to_ascii_lowercase().as_str() {
        "binary" => Value::Bytes(bytes),
        "utf8mb4" | "utf8mb3" | "utf8" => match String::from_utf8(bytes) {
            Ok(s) => Value::Str(s),
            Err(_) => {
                return Err(SqlError::Unsupported(format!(
                    "_{charset} of bytes that are not UTF-8"
                )))
            }
        },
        other => {
            column_collation(Some(other), None, Collation::Utf8mb4GeneralCi)?;
            return Err(SqlError::UnknownCharset(charset.into()));
        }
    }))
}

fn hex(h: &str) -> Result<Vec<u8>> {
    let h = if h.len() % 2 == 1 {
        format!("0{h}")
    } else {
        h.to_string()
    };
    (0..h.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&h[i..i + 2], 16).map_err(|_| SqlError::Parse {
                near: h.clone(),
                line: 1,
            })
        })
        .collect()
}

fn sys_var(name: &str) -> Option<Expr> {
    let rest = name.strip_prefix("@@")?;
    let lower = rest.to_ascii_lowercase();
    let (global, var) = if let Some(v) = lower.strip_prefix("global.") {
        (true, v.to_string())
    } else if let Some(v) = lower
        .strip_prefix("session.")
        .or_else(|| lower.strip_prefix("local."))
    {
        (false, v.to_string())
    } else {
        (false, lower)
    };
    Some(Expr::Session(SessionFn::SysVar { name: var, global }))
}

impl Binder<'_> {
    /// The scope's columns (none without a table).
    fn columns(&self) -> &[Column] {
        self.scope.map_or(&[], |s| s.columns.as_slice())
    }

    fn column(&self, qualifier: Option<&str>, name: &str) -> Result<Expr> {
        match self.scope {
            Some(s) => s.resolve(qualifier, name, self.context).map(Expr::Column),
            None => Err(SqlError::UnknownColumn {
                column: name.into(),
                context: self.context.into(),
            }),
        }
    }

    pub fn bind(&mut self, e: &sql::Expr) -> Result<Expr> {
        use sql::Expr as E;
        Ok(match e {
            E::Identifier(i) => {
                if i.value.starts_with("@@") && i.quote_style.is_none() {
                    return sys_var(&i.value).ok_or_else(|| SqlError::Unsupported(i.value.clone()));
                }
                if i.value.starts_with('@') && i.quote_style.is_none() {
                    return Err(SqlError::Unsupported("user variables".into()));
                }
                self.column(None, &ident_name(i))?
            }
            E::CompoundIdentifier(parts) => {
                let names: Vec<String> = parts.iter().map(ident_name).collect();
                if names[0].starts_with("@@") {
                    return sys_var(&names.join("."))
                        .ok_or_else(|| SqlError::Unsupported(e.to_string()));
                }
                match names.as_slice() {
                    [t, c] => self.column(Some(t), c)?,
                    [_db, t, c] => self.column(Some(t), c)?,
                    _ => return Err(SqlError::Unsupported(e.to_string())),
                }
            }
            E::Value(v) => literal(v, self.params)?,
            E::Prefixed { prefix, value } if prefix.value.starts_with('_') => {
                introduced(&prefix.value[1..], self.bind(value)?)?
            }
            E::Nested(inner) => self.bind(inner)?,
            E::BinaryOp { left, op, right } => {
                let op = match op {
                    BinaryOperator::Plus => BinOp::Add,
                    BinaryOperator::Minus => BinOp::Sub,
                    BinaryOperator::Multiply => BinOp::Mul,
                    BinaryOperator::Divide => BinOp::Div,
                    BinaryOperator::Modulo => BinOp::Mod,
                    BinaryOperator::MyIntegerDivide => BinOp::IntDiv,
                    BinaryOperator::Eq => BinOp::Eq,
                    BinaryOperator::Spaceship => BinOp::NullSafeEq,
                    BinaryOperator::NotEq => BinOp::Ne,
                    BinaryOperator::Lt => BinOp::Lt,
                    BinaryOperator::LtEq => BinOp::Le,
                    BinaryOperator::Gt => BinOp::Gt,
                    BinaryOperator::GtEq => BinOp::Ge,
                    BinaryOperator::And => BinOp::And,
                    BinaryOperator::Or => BinOp::Or,
                    BinaryOperator::Xor => BinOp::Xor,
                    other => return Err(SqlError::Unsupported(format!("operator {other}"))),
                };
                let (l, r) = (self.bind(left)?, self.bind(right)?);
                if crate::expr::is_comparison(op) {
                    let coll = comparison_collation(&l, &r, self.columns(), &op_text(op))?;
                    Expr::Cmp(op, Box::new(l), Box::new(r), coll)
                } else {
                    Expr::Binary(op, Box::new(l), Box::new(r))
                }
            }
            E::UnaryOp { op, expr } => match op {
                UnaryOperator::Not | UnaryOperator::BangNot => {
                    Expr::Not(Box::new(self.bind(expr)?))
                }
                UnaryOperator::Minus => match self.bind(expr)? {
                    Expr::Lit(Value::Int(i)) => Expr::Lit(Value::Int(-i)),
                    Expr::Lit(Value::UInt(u)) if u == i64::MAX as u64 + 1 => {
                        Expr::Lit(Value::Int(i64::MIN))
                    }
                    Expr::Lit(Value::Decimal(d)) => {
                        Expr::Lit(Value::Decimal(Decimal::new(-d.unscaled, d.scale)))
                    }
                    Expr::Lit(Value::Double(d)) => Expr::Lit(Value::Double(-d)),
                    other => Expr::Neg(Box::new(other)),
                },
                UnaryOperator::Plus => self.bind(expr)?,
                other => return Err(SqlError::Unsupported(format!("operator {other}"))),
            },
            E::IsNull(x) => Expr::IsNull(Box::new(self.bind(x)?), false),
            E::IsNotNull(x) => Expr::IsNull(Box::new(self.bind(x)?), true),
            E::IsTrue(x) => Expr::Cmp(
                BinOp::NullSafeEq,
                Box::new(Expr::Not(Box::new(Expr::Not(Box::new(self.bind(x)?))))),
                Box::new(Expr::Lit(Value::Int(1))),
                LITERAL_COLLATION,
            ),
            E::IsFalse(x) => Expr::Cmp(
                BinOp::NullSafeEq,
                Box::new(Expr::Not(Box::new(self.bind(x)?))),
                Box::new(Expr::Lit(Value::Int(1))),
                LITERAL_COLLATION,
            ),
            E::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let (e, lo, hi) = (self.bind(expr)?, self.bind(low)?, self.bind(high)?);
                let c1 = comparison_collation(&e, &lo, self.columns(), "between")?;
                let c2 = comparison_collation(&e, &hi, self.columns(), "between")?;
                let coll = if derive_collation(&hi, self.columns()).1
                    < derive_collation(&lo, self.columns()).1
                {
                    c2
                } else {
                    c1
                };
                Expr::Between {
                    e: Box::new(e),
                    lo: Box::new(lo),
                    hi: Box::new(hi),
                    negated: *negated,
                    coll,
                }
            }
            E::In {
                expr,
                target: sql::InTarget::List(list),
                negated,
                ..
            } => {
                let e = self.bind(expr)?;
                let list: Vec<Expr> = list.iter().map(|x| self.bind(x)).collect::<Result<_>>()?;
                let mut coll = derive_collation(&e, self.columns());
                for x in &list {
                    let c = comparison_collation(&e, x, self.columns(), "in")?;
                    let k = derive_collation(x, self.columns()).1;
                    if k < coll.1 {
                        coll = (c, k);
                    }
                }
                Expr::InList {
                    e: Box::new(e),
                    list,
                    negated: *negated,
                    coll: coll.0,
                }
            }
            E::Collate { expr, collation } => {
                let name = object_parts(collation)?.join(".");
                Expr::Collate(Box::new(self.bind(expr)?), collation_named(&name)?)
            }
            E::Like {
                negated,
                expr,
                pattern,
                escape_char,
                any: false,
            } => {
                let escape = match escape_char.as_deref() {
                    None => '\\',
                    Some(x) => match self.bind(x)? {
                        Expr::Lit(Value::Str(s)) if s.chars().count() == 1 => {
                            s.chars().next().unwrap_or('\\')
                        }
                        _ => return Err(SqlError::WrongArguments("ESCAPE".into())),
                    },
                };
                let (e, pattern) = (self.bind(expr)?, self.bind(pattern)?);
                let coll = comparison_collation(&e, &pattern, self.columns(), "like")?;
                Expr::Like {
                    e: Box::new(e),
                    pattern: Box::new(pattern),
                    escape,
                    negated: *negated,
                    coll,
                }
            }
            E::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let operand = match operand {
                    Some(o) => Some(Box::new(self.bind(o)?)),
                    None => None,
                };
                let whens: Vec<(Expr, Expr)> = conditions
                    .iter()
                    .map(|w| Ok((self.bind(&w.condition)?, self.bind(&w.result)?)))
                    .collect::<Result<_>>()?;
                let coll = match &operand {
                    Some(o) => derive_collation(o, self.columns()).0,
                    None => LITERAL_COLLATION,
                };
                Expr::Case {
                    operand,
                    whens,
                    otherwise: match else_result {
                        Some(o) => Some(Box::new(self.bind(o)?)),
                        None => None,
                    },
                    coll,
                }
            }
            E::Function(f) => self.function(f)?,
            E::Floor { expr, .. } => Expr::Func(Func::Floor, vec![self.bind(expr)?]),
            E::Ceil { expr, .. } => Expr::Func(Func::Ceil, vec![self.bind(expr)?]),
            E::TypedString(_) => {
                return Err(SqlError::Unsupported(format!("{e}")));
            }
            other => return Err(SqlError::Unsupported(format!("{other}"))),
        })
    }

    fn function(&mut self, f: &sql::Function) -> Result<Expr> {
        let parts = object_parts(&f.name)?;
        let name = parts
            .last()
            .cloned()
            .unwrap_or_default()
            .to_ascii_lowercase();
        if f.over.is_some() {
            return Err(SqlError::Unsupported("window functions".into()));
        }
        let (args, distinct, star) = match &f.args {
            sql::FunctionArguments::None => (Vec::new(), false, false),
            sql::FunctionArguments::Subquery(_) => {
                return Err(SqlError::Unsupported("subqueries".into()))
            }
            sql::FunctionArguments::List(l) => {
                let distinct = matches!(
                    l.duplicate_treatment,
                    Some(sql::DuplicateTreatment::Distinct)
                );
                let mut star = false;
                let mut args = Vec::new();
                for a in &l.args {
                    match a {
                        sql::FunctionArg::Unnamed(sql::FunctionArgExpr::Expr(x)) => args.push(x),
                        sql::FunctionArg::Unnamed(sql::FunctionArgExpr::Wildcard) => star = true,
                        other => return Err(SqlError::Unsupported(other.to_string())),
                    }
                }
                (args, distinct, star)
            }
        };
        let agg = match name.as_str() {
            "count" if star => Some(AggFn::CountStar),
            "count" => Some(AggFn::Count),
            "sum" => Some(AggFn::Sum),
            "min" => Some(AggFn::Min),
            "max" => Some(AggFn::Max),
            "avg" => Some(AggFn::Avg),
            _ => None,
        };
        if let Some(af) = agg {
            if af != AggFn::CountStar && args.len() != 1 {
                return Err(SqlError::WrongParamCount(name.to_uppercase()));
            }
            let arg = match args.first() {
                Some(a) => {
                    let saved = self.aggs.take();
                    let r = self.bind(a);
                    self.aggs = saved;
                    Some(r?)
                }
                None => None,
            };
            let coll = arg
                .as_ref()
                .map_or(LITERAL_COLLATION, |a| derive_collation(a, self.columns()).0);
            let Some(aggs) = self.aggs.as_deref_mut() else {
                return Err(SqlError::InvalidGroupFunction);
            };
            let call = AggCall {
                f: af,
                arg,
                distinct,
                coll,
            };
            let i = match aggs.iter().position(|c| *c == call) {
                Some(i) => i,
                None => {
                    aggs.push(call);
                    aggs.len() - 1
                }
            };
            return Ok(Expr::Agg(i));
        }
        if star {
            return Err(SqlError::Parse {
                near: format!("*) {}", ""),
                line: 1,
            });
        }
        let session = match name.as_str() {
            "database" | "schema" => Some(SessionFn::Database),
            "user" | "current_user" | "session_user" | "system_user" => Some(SessionFn::User),
            "connection_id" => Some(SessionFn::ConnectionId),
            "last_insert_id" if args.is_empty() => Some(SessionFn::LastInsertId),
            "now" | "current_timestamp" | "sysdate" | "localtime" | "localtimestamp" => {
                Some(SessionFn::Now)
            }
            "curdate" | "current_date" => Some(SessionFn::CurDate),
            "row_count" => Some(SessionFn::RowCount),
            "found_rows" => Some(SessionFn::FoundRows),
            _ => None,
        };
        if let Some(s) = session {
            return Ok(Expr::Session(s));
        }
        let Some((func, min, max)) = Func::by_name(&name) else {
            return Err(SqlError::NoSuchFunction(name));
        };
        if args.len() < min || args.len() > max {
            return Err(SqlError::WrongParamCount(name));
        }
        let bound = args
            .iter()
            .map(|a| self.bind(a))
            .collect::<Result<Vec<_>>>()?;
        Ok(Expr::Func(func, bound))
    }
}

/// An operator as MySQL's messages name it.
fn op_text(op: BinOp) -> String {
    match op {
        BinOp::Eq => "=",
        BinOp::NullSafeEq => "<=>",
        BinOp::Ne => "<>",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
        _ => "?",
    }
    .into()
}

/// The name MySQL gives a select-list expression without an alias: its text as written.
pub fn expr_name(e: &sql::Expr) -> String {
    match e {
        sql::Expr::Identifier(i) => i.value.clone(),
        // `@@session.x` keeps its whole name, as MariaDB names the column.
        sql::Expr::CompoundIdentifier(p)
            if p.first().is_some_and(|i| i.value.starts_with("@@")) =>
        {
            p.iter()
                .map(|i| i.value.as_str())
                .collect::<Vec<_>>()
                .join(".")
        }
        sql::Expr::CompoundIdentifier(p) => p.last().map(|i| i.value.clone()).unwrap_or_default(),
        sql::Expr::Value(v) => match &v.value {
            sql::Value::SingleQuotedString(s) | sql::Value::DoubleQuotedString(s) => s.clone(),
            other => other.to_string(),
        },
        other => other.to_string(),
    }
}
