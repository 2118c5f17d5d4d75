//! A view's query as MariaDB prints it (SHOW CREATE VIEW, information_schema.VIEWS):
//! every column qualified by its table (`` `t`.`a` ``), every select item named (`` AS `a` ``),
//! `*` expanded to the columns of the time of CREATE VIEW, joins in parentheses, keywords in
//! lower case, functions under MariaDB's own names (`ucase`, `substr`, `count(0)`).
//!
//! The printed text is also what is stored and parsed again to use the view, so it must
//! be SQL that binds to the same query. A construct this printer does not know is
//! [`Unknown`]: the caller then keeps the text as written (docs/sql.md, "Views").

use sqlparser::ast as sql;

/// A construct the printer does not render (the caller falls back to the written text).
#[derive(Debug)]
pub struct Unknown;

type R<T> = std::result::Result<T, Unknown>;

/// One table of a FROM clause, for resolving column names.
#[derive(Debug, Clone)]
pub struct Source {
    /// How a column of it is qualified: its alias, or its name.
    pub qualifier: String,
    /// Its database, when it is a base table or view not under an alias.
    pub db: Option<String>,
    pub columns: Vec<String>,
}

/// What the printer needs from the catalog.
pub trait Catalog {
    /// The columns of table or view `db`.`name` (`db` is already resolved).
    fn columns(&self, db: &str, name: &str) -> Option<Vec<String>>;
    /// The result column names of a derived table's query.
    fn query_columns(&self, q: &sql::Query) -> Option<Vec<String>>;
}

pub struct Printer<'a> {
    pub cat: &'a dyn Catalog,
    /// The database unqualified tables are in (the session's at CREATE VIEW).
    pub current_db: &'a str,
    /// The view's database: a table of another database is printed with its database.
    pub view_db: &'a str,
    /// information_schema.VIEWS' form: every base table and column with its database.
    pub full: bool,
}

fn q(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// MariaDB's precedence classes (`enum precedence`, item.h): higher binds tighter.
mod prec {
    pub const OR: u8 = 1;
    pub const XOR: u8 = 2;
    pub const AND: u8 = 3;
    pub const NOT: u8 = 4;
    pub const CMP: u8 = 6;
    pub const BITOR: u8 = 7;
    pub const BITAND: u8 = 8;
    pub const SHIFT: u8 = 9;
    pub const ADD: u8 = 10;
    pub const MUL: u8 = 11;
    pub const BITXOR: u8 = 12;
    pub const UNARY: u8 = 13;
    pub const HIGHEST: u8 = 20;
}

/// A catalog with no tables: for texts that name none (a column's DEFAULT expression).
pub struct NoTables;

impl Catalog for NoTables {
    fn columns(&self, _: &str, _: &str) -> Option<Vec<String>> {
        None
    }
    fn query_columns(&self, _: &sql::Query) -> Option<Vec<String>> {
        None
    }
}

/// A column's DEFAULT expression as MariaDB prints it in SHOW CREATE TABLE and
/// information_schema.COLUMNS: a function call as it is (`uuid()`, `concat('x','y')`),
/// anything else in parentheses (`(1 + 2)`). `None` if the printer does not know a part.
pub fn default_expression(e: &sql::Expr) -> Option<String> {
    let mut inner = e;
    while let sql::Expr::Nested(x) = inner {
        inner = x;
    }
    let p = Printer {
        cat: &NoTables,
        current_db: "",
        view_db: "",
        full: false,
    };
    let s = p.expr(inner, &[], &[], 0).ok()?;
    Some(if matches!(inner, sql::Expr::Function(_)) {
        s
    } else {
        format!("({s})")
    })
}

impl Printer<'_> {
    /// A whole query; `names` are the top level's item names (the view's columns).
    pub fn query(&self, query: &sql::Query, names: Option<&[String]>) -> R<String> {
        self.query_in(query, names, &[])
    }

    fn query_in(
        &self,
        query: &sql::Query,
        names: Option<&[String]>,
        outer: &[Vec<Source>],
    ) -> R<String> {
        if query.with.is_some() || !query.locks.is_empty() || query.fetch.is_some() {
            return Err(Unknown);
        }
        let mut out = self.set_expr(&query.body, names, outer, true)?;
        if let Some(ob) = &query.order_by {
            // ORDER BY names the first SELECT's tables.
            let scope = match &*query.body {
                sql::SetExpr::Select(s) => self.scope_of(&s.from)?,
                _ => Vec::new(),
            };
            let sql::OrderByKind::Expressions(es) = &ob.kind else {
                return Err(Unknown);
            };
            let mut parts = Vec::new();
            for o in es {
                let mut s = self.expr(&o.expr, &scope, outer, 0)?;
                if matches!(o.options.sort, Some(sql::OrderBySort::Desc)) {
                    s.push_str(" desc");
                }
                parts.push(s);
            }
            out.push_str(" order by ");
            out.push_str(&parts.join(","));
        }
        match &query.limit_clause {
            None => {}
            Some(sql::LimitClause::LimitOffset {
                limit,
                offset,
                limit_by,
            }) => {
                if !limit_by.is_empty() {
                    return Err(Unknown);
                }
                let lim = limit
                    .as_ref()
                    .map(|l| self.expr(l, &[], outer, 0))
                    .transpose()?;
                let off = offset
                    .as_ref()
                    .map(|o| self.expr(&o.value, &[], outer, 0))
                    .transpose()?;
                match (lim, off) {
                    (Some(l), Some(o)) => out.push_str(&format!(" limit {o},{l}")),
                    (Some(l), None) => out.push_str(&format!(" limit {l}")),
                    _ => return Err(Unknown),
                }
            }
            Some(sql::LimitClause::OffsetCommaLimit { offset, limit }) => {
                let l = self.expr(limit, &[], outer, 0)?;
                let o = self.expr(offset, &[], outer, 0)?;
                out.push_str(&format!(" limit {o},{l}"));
            }
        }
        Ok(out)
    }

    fn set_expr(
        &self,
        body: &sql::SetExpr,
        names: Option<&[String]>,
        outer: &[Vec<Source>],
        named: bool,
    ) -> R<String> {
        match body {
            sql::SetExpr::Select(s) => self.select(s, names, outer, named),
            sql::SetExpr::Query(inner) => Ok(format!("({})", self.query_in(inner, names, outer)?)),
            sql::SetExpr::SetOperation {
                op: sql::SetOperator::Union,
                set_quantifier,
                left,
                right,
            } => {
                let l = self.set_expr(left, names, outer, named)?;
                // Later members' items are named by their own expressions.
                let r = self.set_expr(right, None, outer, named)?;
                let kw = match set_quantifier {
                    sql::SetQuantifier::All => "union all",
                    sql::SetQuantifier::None | sql::SetQuantifier::Distinct => "union",
                    _ => return Err(Unknown),
                };
                Ok(format!("{l} {kw} {r}"))
            }
            _ => Err(Unknown),
        }
    }

    /// The tables of FROM, in order.
    fn scope_of(&self, from: &[sql::TableWithJoins]) -> R<Vec<Source>> {
        let mut out = Vec::new();
        for twj in from {
            self.factor_sources(&twj.relation, &mut out)?;
            for j in &twj.joins {
                self.factor_sources(&j.relation, &mut out)?;
            }
        }
        Ok(out)
    }

    fn factor_sources(&self, f: &sql::TableFactor, out: &mut Vec<Source>) -> R<()> {
        match f {
            sql::TableFactor::Table { name, alias, .. } => {
                let (db, t) = self.table_name(name)?;
                let columns = self.cat.columns(&db, &t).ok_or(Unknown)?;
                match alias {
                    Some(a) if a.columns.is_empty() => out.push(Source {
                        qualifier: a.name.value.clone(),
                        db: None,
                        columns,
                    }),
                    Some(_) => return Err(Unknown),
                    None => out.push(Source {
                        qualifier: t,
                        db: Some(db),
                        columns,
                    }),
                }
            }
            sql::TableFactor::Derived {
                subquery,
                alias: Some(a),
                lateral: false,
                ..
            } if a.columns.is_empty() => out.push(Source {
                qualifier: a.name.value.clone(),
                db: None,
                columns: self.cat.query_columns(subquery).ok_or(Unknown)?,
            }),
            sql::TableFactor::NestedJoin {
                table_with_joins,
                alias: None,
            } => {
                self.factor_sources(&table_with_joins.relation, out)?;
                for j in &table_with_joins.joins {
                    self.factor_sources(&j.relation, out)?;
                }
            }
            _ => return Err(Unknown),
        }
        Ok(())
    }

    fn table_name(&self, name: &sql::ObjectName) -> R<(String, String)> {
        let parts = crate::bind::object_parts(name).map_err(|_| Unknown)?;
        match parts.as_slice() {
            [t] => Ok((self.current_db.to_string(), t.clone())),
            [d, t] => Ok((d.clone(), t.clone())),
            _ => Err(Unknown),
        }
    }

    fn select(
        &self,
        s: &sql::Select,
        names: Option<&[String]>,
        outer: &[Vec<Source>],
        named: bool,
    ) -> R<String> {
        if s.top.is_some()
            || s.into.is_some()
            || !s.lateral_views.is_empty()
            || s.prewhere.is_some()
            || !s.cluster_by.is_empty()
            || !s.distribute_by.is_empty()
            || !s.sort_by.is_empty()
            || !s.named_window.is_empty()
            || s.qualify.is_some()
            || !s.connect_by.is_empty()
        {
            return Err(Unknown);
        }
        let scope = self.scope_of(&s.from)?;
        let mut out = String::from("select ");
        match &s.distinct {
            None | Some(sql::Distinct::All) => {}
            Some(sql::Distinct::Distinct) => out.push_str("distinct "),
            Some(_) => return Err(Unknown),
        }
        let mut items = Vec::new();
        for it in &s.projection {
            match it {
                sql::SelectItem::Wildcard(opts) if *opts == Default::default() => {
                    if s.from.iter().any(|t| {
                        t.joins.iter().any(|j| {
                            matches!(
                                j.join_operator,
                                sql::JoinOperator::Join(sql::JoinConstraint::Using(_))
                                    | sql::JoinOperator::Join(sql::JoinConstraint::Natural)
                                    | sql::JoinOperator::Inner(sql::JoinConstraint::Using(_))
                                    | sql::JoinOperator::Inner(sql::JoinConstraint::Natural)
                                    | sql::JoinOperator::Left(sql::JoinConstraint::Using(_))
                                    | sql::JoinOperator::Left(sql::JoinConstraint::Natural)
                                    | sql::JoinOperator::LeftOuter(sql::JoinConstraint::Using(_))
                                    | sql::JoinOperator::LeftOuter(sql::JoinConstraint::Natural)
                            )
                        })
                    }) {
                        // USING / NATURAL merge columns: `*` is not every table's columns.
                        return Err(Unknown);
                    }
                    for src in &scope {
                        for c in &src.columns {
                            items.push((self.column(src, c), c.clone()));
                        }
                    }
                }
                sql::SelectItem::QualifiedWildcard(
                    sql::SelectItemQualifiedWildcardKind::ObjectName(n),
                    opts,
                ) if *opts == Default::default() => {
                    let parts = crate::bind::object_parts(n).map_err(|_| Unknown)?;
                    let last = parts.last().ok_or(Unknown)?;
                    let src = scope.iter().find(|s| s.qualifier == *last).ok_or(Unknown)?;
                    for c in &src.columns {
                        items.push((self.column(src, c), c.clone()));
                    }
                }
                sql::SelectItem::UnnamedExpr(e) => {
                    items.push((self.expr(e, &scope, outer, 0)?, crate::bind::expr_name(e)));
                }
                sql::SelectItem::ExprWithAlias { expr, alias } => {
                    items.push((self.expr(expr, &scope, outer, 0)?, alias.value.clone()));
                }
                _ => return Err(Unknown),
            }
        }
        if let Some(n) = names {
            if n.len() != items.len() {
                return Err(Unknown);
            }
            for (it, name) in items.iter_mut().zip(n) {
                it.1 = name.clone();
            }
        }
        let list: Vec<String> = items
            .into_iter()
            .map(|(e, n)| {
                if named {
                    format!("{e} AS {}", q(&n))
                } else {
                    e
                }
            })
            .collect();
        out.push_str(&list.join(","));
        if !s.from.is_empty() {
            out.push_str(" from ");
            let mut parts = Vec::new();
            for twj in &s.from {
                parts.push(self.joined(twj, &scope, outer)?);
            }
            // A comma list is an inner join: MariaDB prints `(a join b)`.
            if parts.len() == 1 {
                out.push_str(&parts[0]);
            } else {
                out.push_str(&format!("({})", parts.join(" join ")));
            }
        }
        if let Some(w) = &s.selection {
            out.push_str(" where ");
            out.push_str(&self.expr(w, &scope, outer, 0)?);
        }
        match &s.group_by {
            sql::GroupByExpr::Expressions(es, mods) if mods.is_empty() => {
                if !es.is_empty() {
                    let g: Vec<String> = es
                        .iter()
                        .map(|e| self.expr(e, &scope, outer, 0))
                        .collect::<R<_>>()?;
                    out.push_str(" group by ");
                    out.push_str(&g.join(","));
                }
            }
            _ => return Err(Unknown),
        }
        if let Some(h) = &s.having {
            out.push_str(" having ");
            out.push_str(&self.expr(h, &scope, outer, 0)?);
        }
        Ok(out)
    }

    fn joined(
        &self,
        twj: &sql::TableWithJoins,
        scope: &[Source],
        outer: &[Vec<Source>],
    ) -> R<String> {
        let mut left = self.factor(&twj.relation, outer)?;
        for j in &twj.joins {
            let right = self.factor(&j.relation, outer)?;
            use sql::JoinOperator as J;
            let (kind, c, swap) = match &j.join_operator {
                J::Join(c) | J::Inner(c) | J::CrossJoin(c) => ("join", c, false),
                J::Left(c) | J::LeftOuter(c) => ("left join", c, false),
                J::Right(c) | J::RightOuter(c) => ("left join", c, true),
                _ => return Err(Unknown),
            };
            let cond = match c {
                sql::JoinConstraint::None => String::new(),
                sql::JoinConstraint::On(e) => format!(" on({})", self.expr(e, scope, outer, 0)?),
                _ => return Err(Unknown),
            };
            left = if swap {
                format!("({right} {kind} {left}{cond})")
            } else {
                format!("({left} {kind} {right}{cond})")
            };
        }
        Ok(left)
    }

    fn factor(&self, f: &sql::TableFactor, outer: &[Vec<Source>]) -> R<String> {
        match f {
            sql::TableFactor::Table { name, alias, .. } => {
                let (db, t) = self.table_name(name)?;
                let mut s = if self.full || db != self.view_db {
                    format!("{}.{}", q(&db), q(&t))
                } else {
                    q(&t)
                };
                if let Some(a) = alias {
                    s.push(' ');
                    s.push_str(&q(&a.name.value));
                }
                Ok(s)
            }
            sql::TableFactor::Derived {
                subquery,
                alias: Some(a),
                ..
            } => Ok(format!(
                "({}) {}",
                self.query_in(subquery, None, outer)?,
                q(&a.name.value)
            )),
            sql::TableFactor::NestedJoin {
                table_with_joins,
                alias: None,
            } => {
                let scope = self.scope_of(std::slice::from_ref(table_with_joins))?;
                self.joined(table_with_joins, &scope, outer)
            }
            _ => Err(Unknown),
        }
    }

    fn column(&self, src: &Source, c: &str) -> String {
        match (&src.db, self.full) {
            (Some(db), true) => format!("{}.{}.{}", q(db), q(&src.qualifier), q(c)),
            _ => format!("{}.{}", q(&src.qualifier), q(c)),
        }
    }

    /// Column `name`, qualified by `qual` or not: in this SELECT's tables, then outward.
    fn resolve(
        &self,
        qual: Option<&str>,
        name: &str,
        scope: &[Source],
        outer: &[Vec<Source>],
    ) -> R<String> {
        for level in std::iter::once(scope).chain(outer.iter().map(Vec::as_slice)) {
            for src in level {
                if qual.is_some_and(|qq| qq != src.qualifier) {
                    continue;
                }
                if let Some(c) = src.columns.iter().find(|c| c.eq_ignore_ascii_case(name)) {
                    return Ok(self.column(src, c));
                }
            }
        }
        Err(Unknown)
    }

    fn sub(&self, query: &sql::Query, scope: &[Source], outer: &[Vec<Source>]) -> R<String> {
        let mut levels = vec![scope.to_vec()];
        levels.extend(outer.iter().cloned());
        self.query_in_unnamed(query, &levels)
    }

    /// A subquery in an expression: its items carry no `AS`.
    fn query_in_unnamed(&self, query: &sql::Query, outer: &[Vec<Source>]) -> R<String> {
        if query.order_by.is_some() || query.limit_clause.is_some() || query.with.is_some() {
            return Err(Unknown);
        }
        self.set_expr(&query.body, None, outer, false)
    }

    fn wrap(s: String, mine: u8, parent: u8) -> String {
        if mine < parent {
            format!("({s})")
        } else {
            s
        }
    }

    /// Expression `e` inside an operator of precedence `parent`.
    fn expr(
        &self,
        e: &sql::Expr,
        scope: &[Source],
        outer: &[Vec<Source>],
        parent: u8,
    ) -> R<String> {
        use sql::Expr as E;
        let p = |e: &sql::Expr, at: u8| self.expr(e, scope, outer, at);
        Ok(match e {
            E::Identifier(i) => self.resolve(None, &i.value, scope, outer)?,
            E::CompoundIdentifier(parts) => match parts.as_slice() {
                [t, c] => self.resolve(Some(&t.value), &c.value, scope, outer)?,
                [_, t, c] => self.resolve(Some(&t.value), &c.value, scope, outer)?,
                _ => return Err(Unknown),
            },
            E::Value(v) => match &v.value {
                sql::Value::Number(n, _) => n.clone(),
                sql::Value::SingleQuotedString(s) | sql::Value::DoubleQuotedString(s) => {
                    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
                }
                sql::Value::Boolean(b) => if *b { "1" } else { "0" }.into(),
                sql::Value::Null => "NULL".into(),
                _ => return Err(Unknown),
            },
            E::Nested(inner) => p(inner, parent)?,
            E::BinaryOp { left, op, right } => {
                use sql::BinaryOperator as B;
                let (sym, pr) = match op {
                    B::Plus => ("+", prec::ADD),
                    B::Minus => ("-", prec::ADD),
                    B::Multiply => ("*", prec::MUL),
                    B::Divide => ("/", prec::MUL),
                    B::MyIntegerDivide => ("DIV", prec::MUL),
                    B::Modulo => ("MOD", prec::MUL),
                    B::Eq => ("=", prec::CMP),
                    B::NotEq => ("<>", prec::CMP),
                    B::Lt => ("<", prec::CMP),
                    B::LtEq => ("<=", prec::CMP),
                    B::Gt => (">", prec::CMP),
                    B::GtEq => (">=", prec::CMP),
                    B::Spaceship => ("<=>", prec::CMP),
                    B::And => ("and", prec::AND),
                    B::Or => ("or", prec::OR),
                    B::Xor => ("xor", prec::XOR),
                    B::BitwiseAnd => ("&", prec::BITAND),
                    B::BitwiseOr => ("|", prec::BITOR),
                    B::BitwiseXor => ("^", prec::BITXOR),
                    B::PGBitwiseShiftLeft => ("<<", prec::SHIFT),
                    B::PGBitwiseShiftRight => (">>", prec::SHIFT),
                    _ => return Err(Unknown),
                };
                // Left-associative: the right operand needs parentheses at equal precedence,
                // except for AND / OR, which MariaDB flattens.
                let rp = if matches!(op, B::And | B::Or) {
                    pr
                } else {
                    pr + 1
                };
                Self::wrap(
                    format!("{} {sym} {}", p(left, pr)?, p(right, rp)?),
                    pr,
                    parent,
                )
            }
            E::UnaryOp { op, expr } => match op {
                sql::UnaryOperator::Minus => {
                    Self::wrap(format!("-{}", p(expr, prec::UNARY)?), prec::UNARY, parent)
                }
                sql::UnaryOperator::Plus => p(expr, parent)?,
                sql::UnaryOperator::Not => {
                    let mut inner: &sql::Expr = expr;
                    while let E::Nested(x) = inner {
                        inner = x;
                    }
                    // MariaDB folds NOT into a comparison it can negate.
                    if let E::BinaryOp { left, op, right } = inner {
                        use sql::BinaryOperator as B;
                        let neg = match op {
                            B::Eq => Some(B::NotEq),
                            B::NotEq => Some(B::Eq),
                            B::Lt => Some(B::GtEq),
                            B::GtEq => Some(B::Lt),
                            B::Gt => Some(B::LtEq),
                            B::LtEq => Some(B::Gt),
                            _ => None,
                        };
                        if let Some(op) = neg {
                            return p(
                                &E::BinaryOp {
                                    left: left.clone(),
                                    op,
                                    right: right.clone(),
                                },
                                parent,
                            );
                        }
                    }
                    // NOT of a column or a call is `x = 0`; of IS [NOT] NULL / UNKNOWN the
                    // opposite test.
                    match inner {
                        E::Identifier(_) | E::CompoundIdentifier(_) | E::Function(_) => {
                            return p(
                                &E::BinaryOp {
                                    left: Box::new(inner.clone()),
                                    op: sql::BinaryOperator::Eq,
                                    right: Box::new(E::value(sql::Value::Number(
                                        "0".into(),
                                        false,
                                    ))),
                                },
                                parent,
                            );
                        }
                        E::IsNull(x) | E::IsUnknown(x) => {
                            return p(&E::IsNotNull(x.clone()), parent)
                        }
                        E::IsNotNull(x) | E::IsNotUnknown(x) => {
                            return p(&E::IsNull(x.clone()), parent)
                        }
                        _ => {}
                    }
                    Self::wrap(format!("!({})", p(inner, 0)?), prec::NOT, parent)
                }
                _ => return Err(Unknown),
            },
            E::IsTrue(x) | E::IsNotTrue(x) | E::IsFalse(x) | E::IsNotFalse(x) => {
                let test = match e {
                    E::IsTrue(_) => "is true",
                    E::IsNotTrue(_) => "is not true",
                    E::IsFalse(_) => "is false",
                    _ => "is not false",
                };
                Self::wrap(
                    format!("{} {test}", p(x, prec::CMP + 1)?),
                    prec::CMP,
                    parent,
                )
            }
            E::IsUnknown(x) => p(&E::IsNull(x.clone()), parent)?,
            E::IsNotUnknown(x) => p(&E::IsNotNull(x.clone()), parent)?,
            E::IsNull(x) => Self::wrap(
                format!("{} is null", p(x, prec::CMP + 1)?),
                prec::CMP,
                parent,
            ),
            E::IsNotNull(x) => Self::wrap(
                format!("{} is not null", p(x, prec::CMP + 1)?),
                prec::CMP,
                parent,
            ),
            E::In {
                expr,
                target,
                negated,
                global: false,
            } => {
                let lhs = p(expr, prec::CMP + 1)?;
                let s = match target {
                    sql::InTarget::List(list) if *negated && list.len() == 1 => {
                        format!("{lhs} <> {}", p(&list[0], prec::CMP + 1)?)
                    }
                    sql::InTarget::List(list) => {
                        let vs: Vec<String> = list.iter().map(|v| p(v, 0)).collect::<R<_>>()?;
                        let kw = if *negated { "not in" } else { "in" };
                        format!("{lhs} {kw} ({})", vs.join(","))
                    }
                    sql::InTarget::Subquery(sq) => {
                        let kw = if *negated { "not in" } else { "in" };
                        format!("{lhs} {kw} ({})", self.sub(sq, scope, outer)?)
                    }
                    _ => return Err(Unknown),
                };
                Self::wrap(s, prec::CMP, parent)
            }
            E::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let kw = if *negated { "not between" } else { "between" };
                Self::wrap(
                    format!(
                        "{} {kw} {} and {}",
                        p(expr, prec::CMP + 1)?,
                        p(low, prec::CMP + 1)?,
                        p(high, prec::CMP + 1)?
                    ),
                    prec::CMP,
                    parent,
                )
            }
            E::Like {
                negated,
                any: false,
                expr,
                pattern,
                escape_char,
            } => {
                // MariaDB prints NOT LIKE with two spaces before `not`.
                let kw = if *negated { " not like" } else { "like" };
                let mut s = format!(
                    "{} {kw} {}",
                    p(expr, prec::CMP + 1)?,
                    p(pattern, prec::CMP + 1)?
                );
                if let Some(esc) = escape_char {
                    s.push_str(&format!(" escape {}", p(esc, prec::HIGHEST)?));
                }
                Self::wrap(s, prec::CMP, parent)
            }
            E::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let mut s = String::from("case ");
                if let Some(o) = operand {
                    s.push_str(&p(o, 0)?);
                    s.push(' ');
                }
                for w in conditions {
                    s.push_str(&format!(
                        "when {} then {} ",
                        p(&w.condition, 0)?,
                        p(&w.result, 0)?
                    ));
                }
                if let Some(e) = else_result {
                    s.push_str(&format!("else {} ", p(e, 0)?));
                }
                s.push_str("end");
                s
            }
            E::Cast {
                kind: sql::CastKind::Cast,
                expr,
                data_type,
                format: None,
            } => {
                let ty = match data_type {
                    sql::DataType::Signed | sql::DataType::SignedInteger => "signed".to_string(),
                    sql::DataType::Unsigned | sql::DataType::UnsignedInteger => {
                        "unsigned".to_string()
                    }
                    sql::DataType::Char(None) => "char charset utf8mb4".to_string(),
                    sql::DataType::Date => "date".to_string(),
                    sql::DataType::Datetime(None) => "datetime".to_string(),
                    _ => return Err(Unknown),
                };
                format!("cast({} as {ty})", p(expr, 0)?)
            }
            E::Exists { subquery, negated } => {
                let s = format!("exists({} limit 1)", self.sub(subquery, scope, outer)?);
                if *negated {
                    format!("!({s})")
                } else {
                    s
                }
            }
            E::Subquery(sq) => format!("({})", self.sub(sq, scope, outer)?),
            E::Function(f) => self.function(f, scope, outer)?,
            // `interval 1 day`, as MariaDB prints an INTERVAL operand.
            E::Interval(i)
                if i.last_field.is_none() && i.fractional_seconds_precision.is_none() =>
            {
                let unit = i.leading_field.as_ref().ok_or(Unknown)?;
                format!(
                    "interval {} {}",
                    p(&i.value, prec::HIGHEST)?,
                    unit.to_string().to_ascii_lowercase()
                )
            }
            _ => return Err(Unknown),
        })
    }

    fn function(&self, f: &sql::Function, scope: &[Source], outer: &[Vec<Source>]) -> R<String> {
        if f.over.is_some() || f.filter.is_some() || !f.within_group.is_empty() {
            return Err(Unknown);
        }
        let name = crate::bind::object_parts(&f.name)
            .map_err(|_| Unknown)?
            .join(".")
            .to_ascii_lowercase();
        // MariaDB prints some functions under another of their names.
        let printed = match name.as_str() {
            "upper" => "ucase",
            "lower" => "lcase",
            "substring" | "mid" => "substr",
            "length" => "octet_length",
            "now" | "localtime" | "localtimestamp" => "current_timestamp",
            "curdate" | "current_date" => "curdate",
            "curtime" | "current_time" => "curtime",
            "character_length" => "char_length",
            "pow" => "pow",
            other => other,
        }
        .to_string();
        let list = match &f.args {
            sql::FunctionArguments::None => return Ok(format!("{printed}()")),
            sql::FunctionArguments::List(l) => l,
            sql::FunctionArguments::Subquery(_) => return Err(Unknown),
        };
        if !list.clauses.is_empty() {
            return Err(Unknown);
        }
        let mut args = Vec::new();
        for a in &list.args {
            match a {
                sql::FunctionArg::Unnamed(sql::FunctionArgExpr::Expr(e)) => {
                    args.push(self.expr(e, scope, outer, 0)?)
                }
                sql::FunctionArg::Unnamed(sql::FunctionArgExpr::Wildcard) if name == "count" => {
                    args.push("0".into())
                }
                _ => return Err(Unknown),
            }
        }
        let distinct = match list.duplicate_treatment {
            Some(sql::DuplicateTreatment::Distinct) => "distinct ",
            _ => "",
        };
        let mut body = format!("{distinct}{}", args.join(","));
        if name == "group_concat" {
            body.push_str(" separator ','");
        }
        Ok(format!("{printed}({body})"))
    }
}
