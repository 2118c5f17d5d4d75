//! Binding: sqlparser expressions to [`Expr`], names resolved against the scope of the
//! statement's table, `?` placeholders numbered in text order, aggregates collected.

use std::collections::HashMap;

use quire_engine::row::{Column, Decimal, Value};
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
                Expr::Binary(op, Box::new(self.bind(left)?), Box::new(self.bind(right)?))
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
            E::IsTrue(x) => Expr::Binary(
                BinOp::NullSafeEq,
                Box::new(Expr::Not(Box::new(Expr::Not(Box::new(self.bind(x)?))))),
                Box::new(Expr::Lit(Value::Int(1))),
            ),
            E::IsFalse(x) => Expr::Binary(
                BinOp::NullSafeEq,
                Box::new(Expr::Not(Box::new(self.bind(x)?))),
                Box::new(Expr::Lit(Value::Int(1))),
            ),
            E::Between {
                expr,
                negated,
                low,
                high,
            } => Expr::Between {
                e: Box::new(self.bind(expr)?),
                lo: Box::new(self.bind(low)?),
                hi: Box::new(self.bind(high)?),
                negated: *negated,
            },
            E::In {
                expr,
                target: sql::InTarget::List(list),
                negated,
                ..
            } => Expr::InList {
                e: Box::new(self.bind(expr)?),
                list: list.iter().map(|x| self.bind(x)).collect::<Result<_>>()?,
                negated: *negated,
            },
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
                Expr::Like {
                    e: Box::new(self.bind(expr)?),
                    pattern: Box::new(self.bind(pattern)?),
                    escape,
                    negated: *negated,
                }
            }
            E::Case {
                operand,
                conditions,
                else_result,
                ..
            } => Expr::Case {
                operand: match operand {
                    Some(o) => Some(Box::new(self.bind(o)?)),
                    None => None,
                },
                whens: conditions
                    .iter()
                    .map(|w| Ok((self.bind(&w.condition)?, self.bind(&w.result)?)))
                    .collect::<Result<_>>()?,
                otherwise: match else_result {
                    Some(o) => Some(Box::new(self.bind(o)?)),
                    None => None,
                },
            },
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
            let Some(aggs) = self.aggs.as_deref_mut() else {
                return Err(SqlError::InvalidGroupFunction);
            };
            let call = AggCall {
                f: af,
                arg,
                distinct,
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

/// The name MySQL gives a select-list expression without an alias: its text as written.
pub fn expr_name(e: &sql::Expr) -> String {
    match e {
        sql::Expr::Identifier(i) => i.value.clone(),
        sql::Expr::CompoundIdentifier(p) => p.last().map(|i| i.value.clone()).unwrap_or_default(),
        sql::Expr::Value(v) => match &v.value {
            sql::Value::SingleQuotedString(s) | sql::Value::DoubleQuotedString(s) => s.clone(),
            other => other.to_string(),
        },
        other => other.to_string(),
    }
}
