//! Binding: sqlparser expressions to [`Expr`], names resolved against the scope of the
//! statement's tables ([`from`] binds FROM and its joins), `?` placeholders numbered in
//! text order, aggregates collected.

pub mod from;
mod row;
mod window;

use std::collections::HashMap;

use quire_engine::row::{Charset, Collation, Column, ColumnType, Decimal, Value};
use sqlparser::ast::{self as sql, BinaryOperator, UnaryOperator};

use crate::diag::SqlMode;
use crate::error::{Result, SqlError};
use crate::expr::{AggFn, BinOp, Expr, Func, SessionFn, VarKind};
use crate::types::{self, Num};

thread_local! {
    /// The kinds of the session's user variables while one of its statements is bound
    /// ([`with_user_vars`]): `@x` types its result column by its kind at that moment, as
    /// MariaDB does. A session runs on one thread, and binding never outlives the call.
    static USER_VARS: std::cell::RefCell<HashMap<String, VarKind>> =
        std::cell::RefCell::new(HashMap::new());
    /// The session's `group_concat_max_len` while it binds a statement (GROUP_CONCAT's
    /// result type and cut depend on it).
    static GROUP_CONCAT_MAX_LEN: std::cell::Cell<u64> =
        const { std::cell::Cell::new(GROUP_CONCAT_MAX_LEN_DEFAULT) };
    /// The table an INSERT's VALUES are bound for ([`with_insert_target`]): `DEFAULT(c)`
    /// there names its columns.
    static INSERT_TARGET: std::cell::RefCell<Option<Scope>> = const { std::cell::RefCell::new(None) };
    /// While ON DUPLICATE KEY UPDATE's assignments are bound ([`with_insert_values`]): the
    /// target table's width, where the row the statement would insert starts in the row
    /// they read (`VALUES(c)` is column `width + c`). Unset inside their subqueries.
    static INSERT_VALUES: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` (binding ON DUPLICATE KEY UPDATE's assignments) with `VALUES(c)` reading
/// column `width + c` of the row they are evaluated over (`stmt::OnDuplicate`).
pub(crate) fn with_insert_values<T>(width: usize, f: impl FnOnce() -> T) -> T {
    let saved = INSERT_VALUES.with(|c| c.replace(Some(width)));
    let r = f();
    INSERT_VALUES.with(|c| c.set(saved));
    r
}

/// Runs `f` (binding an INSERT's VALUES) with `target` the table `DEFAULT(c)` reads.
pub(crate) fn with_insert_target<T>(target: Scope, f: impl FnOnce() -> T) -> T {
    let saved = INSERT_TARGET.with(|t| t.borrow_mut().replace(target));
    let r = f();
    INSERT_TARGET.with(|t| *t.borrow_mut() = saved);
    r
}

/// An ENUM or SET column where MariaDB reads it as a number (arithmetic, a comparison
/// with a number, ORDER BY, CAST to a number): an ENUM's member index, as
/// `FIELD(e, 'a', 'b', …)` (the value is always a member's exact name or the error value
/// '', which FIELD makes 0); a SET's bitmask, as the sum of `(FIND_IN_SET('a', s) > 0) * 1`,
/// `… * 2`, …. NULL stays NULL. Anything else as is.
pub(crate) fn enum_number(e: Expr, columns: &[Column]) -> Expr {
    let (members, set) = match &e {
        Expr::Column(i) => match columns.get(*i) {
            Some(c) if c.ty.has_members() => (c.members.clone(), c.ty.is_set()),
            _ => return e,
        },
        _ => return e,
    };
    let lit = |s: String| Expr::Lit(Value::Str(s));
    let number = if set {
        let mut sum: Option<Expr> = None;
        for (i, m) in members.into_iter().enumerate() {
            let find = Expr::Func(
                Func::Str(crate::func::StrFn::FindInSet, Collation::Utf8mb4Bin),
                vec![lit(m), e.clone()],
            );
            let present = Expr::Cmp(
                BinOp::Gt,
                Box::new(find),
                Box::new(Expr::Lit(Value::Int(0))),
                Collation::Utf8mb4Bin,
            );
            let bit = match i {
                63 => Value::UInt(1u64 << 63),
                _ => Value::Int(1i64 << i),
            };
            let term = Expr::Binary(BinOp::Mul, Box::new(present), Box::new(Expr::Lit(bit)));
            sum = Some(match sum {
                None => term,
                Some(s) => Expr::Binary(BinOp::Add, Box::new(s), Box::new(term)),
            });
        }
        sum.unwrap_or(Expr::Lit(Value::Int(0)))
    } else {
        let mut args = Vec::with_capacity(members.len() + 1);
        args.push(e.clone());
        args.extend(members.into_iter().map(lit));
        Expr::Func(
            Func::Str(crate::func::StrFn::Field, Collation::Utf8mb4Bin),
            args,
        )
    };
    Expr::Func(
        Func::If,
        vec![
            Expr::IsNull(Box::new(e), false),
            Expr::Lit(Value::Null),
            number,
        ],
    )
}

/// A literal compared with a YEAR column, as the YEAR MariaDB reads it
/// ([`crate::types::year_of_constant`]); a hexadecimal or bit literal compared with a BIT
/// column, as the number it is (`b = b'1111'` compares 15); anything else as is.
fn year_literal(e: Expr, other: &Expr, columns: &[Column]) -> Expr {
    let col_ty = match other {
        Expr::Column(i) => columns.get(*i).map(|c| c.ty),
        _ => None,
    };
    if let (Some(ColumnType::Bit { .. }), Expr::Lit(Value::Bytes(b))) = (col_ty, &e) {
        if b.len() <= 8 {
            let n = b.iter().fold(0u64, |n, x| n << 8 | u64::from(*x));
            return Expr::Lit(Value::UInt(n));
        }
    }
    let year_col = col_ty == Some(ColumnType::Year);
    match &e {
        Expr::Lit(v) if year_col => match crate::types::year_of_constant(v) {
            Some(y) => Expr::Lit(Value::UInt(y)),
            None => e,
        },
        _ => e,
    }
}

fn is_number_literal(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Lit(Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_))
    )
}

/// MariaDB's default `group_concat_max_len`.
pub const GROUP_CONCAT_MAX_LEN_DEFAULT: u64 = 1_048_576;

/// Runs `f` (binding a statement) with the kinds of the session's user variables visible
/// to the binder.
pub(crate) fn with_user_vars<T>(kinds: HashMap<String, VarKind>, f: impl FnOnce() -> T) -> T {
    let saved = USER_VARS.with(|u| std::mem::replace(&mut *u.borrow_mut(), kinds));
    let r = f();
    USER_VARS.with(|u| *u.borrow_mut() = saved);
    r
}

/// Runs `f` (binding a statement) under the session's `group_concat_max_len`.
pub(crate) fn with_group_concat_max_len<T>(n: u64, f: impl FnOnce() -> T) -> T {
    let saved = GROUP_CONCAT_MAX_LEN.with(|c| c.replace(n));
    let r = f();
    GROUP_CONCAT_MAX_LEN.with(|c| c.set(saved));
    r
}

/// `@name` (unquoted, or the text of a quoted name), lower-cased: user variable names are
/// case-insensitive.
fn user_var(name: &str) -> Expr {
    let name = name.to_lowercase();
    let kind = USER_VARS.with(|u| u.borrow().get(&name).copied());
    Expr::Session(SessionFn::UserVar { name, kind })
}

/// The kind a NULL assigned from an expression of type `e` keeps (MariaDB types the
/// variable by the expression's result type).
pub(crate) fn declared_kind(e: &Expr, columns: &[Column], lit: Collation) -> VarKind {
    let t = crate::func::types::infer(e, columns, &[]);
    use crate::meta::FieldType as F;
    match t.ft {
        F::Tiny | F::Short | F::Int24 | F::Long | F::LongLong => VarKind::Int {
            unsigned: t.unsigned,
        },
        F::NewDecimal => VarKind::Decimal,
        F::Float | F::Double => VarKind::Double,
        F::Null => VarKind::Binary,
        _ if t.binary && t.is_string() => VarKind::Binary,
        _ => VarKind::Str(derive_collation(e, columns, lit).0),
    }
}

/// The columns a statement's expressions can name: the tables of FROM, their rows
/// concatenated in FROM order (`Expr::Column(i)` is `columns[i]` of that joined row).
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Every column of the joined row.
    pub columns: Vec<Column>,
    /// The tables in FROM order, each with where its columns start.
    pub tables: Vec<ScopeTable>,
    /// The columns an unqualified name resolves against, in `SELECT *` order: a column
    /// merged by USING or NATURAL appears once (its outer side's).
    pub visible: Vec<usize>,
}

/// One table (or sequence) of a [`Scope`].
#[derive(Debug, Clone)]
pub struct ScopeTable {
    /// The name the query uses for it: its alias, or its name.
    pub alias: String,
    pub db: String,
    pub table: String,
    /// `alias` is an alias: the table's own name no longer qualifies its columns.
    pub aliased: bool,
    /// Its columns are `columns[offset..offset + len]`.
    pub offset: usize,
    pub len: usize,
    /// Its AUTO_INCREMENT column, counted from `offset` (its DEFAULT is 0, not 1364).
    pub auto_increment: Option<usize>,
}

impl ScopeTable {
    /// Whether `db.q` (or `q`) names this table. Aliases are case-sensitive, as in MariaDB
    /// with `lower_case_table_names=0`.
    pub fn named(&self, db: Option<&str>, q: &str) -> bool {
        match db {
            Some(d) => !self.aliased && d == self.db && q == self.table,
            None => q == self.alias,
        }
    }
}

impl Scope {
    /// The scope of one table.
    pub fn single(alias: &str, db: &str, table: &str, columns: Vec<Column>) -> Scope {
        let len = columns.len();
        Scope {
            tables: vec![ScopeTable {
                alias: alias.into(),
                db: db.into(),
                table: table.into(),
                aliased: alias != table,
                offset: 0,
                len,
                auto_increment: None,
            }],
            visible: (0..len).collect(),
            columns,
        }
    }

    /// The DEFAULT of joined-row column `i` ([`column_default_expr`]).
    pub(crate) fn default_of(
        &self,
        i: usize,
        params: &HashMap<(u64, u64), usize>,
        conn: Conn,
    ) -> Result<Expr> {
        let col = self
            .columns
            .get(i)
            .ok_or_else(|| SqlError::Unsupported("a column out of range".into()))?;
        column_default_expr(col, self.is_auto_increment(i), params, conn)
    }

    /// Whether joined-row column `i` is its table's AUTO_INCREMENT column.
    pub(crate) fn is_auto_increment(&self, i: usize) -> bool {
        self.table_of(i).is_some_and(|t| {
            let t = &self.tables[t];
            t.auto_increment.is_some_and(|a| t.offset + a == i)
        })
    }

    /// The table whose columns include joined-row column `col`.
    pub fn table_of(&self, col: usize) -> Option<usize> {
        self.tables
            .iter()
            .position(|t| col >= t.offset && col < t.offset + t.len)
    }

    pub fn resolve(&self, qualifier: Option<&str>, name: &str, context: &str) -> Result<usize> {
        self.resolve_in(None, qualifier, name, context)
    }

    /// `[db.][qualifier.]name`: 1054 if nothing has it, 1052 if an unqualified name is in
    /// two tables (and not merged by USING / NATURAL).
    pub fn resolve_in(
        &self,
        db: Option<&str>,
        qualifier: Option<&str>,
        name: &str,
        context: &str,
    ) -> Result<usize> {
        let unknown = || SqlError::UnknownColumn {
            column: match (db, qualifier) {
                (Some(d), Some(q)) => format!("{d}.{q}.{name}"),
                (_, Some(q)) => format!("{q}.{name}"),
                _ => name.into(),
            },
            context: context.into(),
        };
        let named = |i: &usize| self.columns[*i].name.eq_ignore_ascii_case(name);
        if let Some(q) = qualifier {
            let t = self
                .tables
                .iter()
                .find(|t| t.named(db, q))
                .ok_or_else(unknown)?;
            return (t.offset..t.offset + t.len).find(named).ok_or_else(unknown);
        }
        let mut found = self.visible.iter().filter(|i| named(i));
        let first = *found.next().ok_or_else(unknown)?;
        if found.next().is_some() {
            return Err(SqlError::AmbiguousColumn {
                column: name.into(),
                context: context.into(),
            });
        }
        Ok(first)
    }
}

/// Sort keys of GROUP_CONCAT's ORDER BY: key, descending, collation.
pub type OrderKeys = Vec<(Expr, bool, Collation)>;

/// An aggregate call found while binding a select list, HAVING or ORDER BY.
#[derive(Debug, Clone, PartialEq)]
pub struct AggCall {
    pub f: AggFn,
    pub arg: Option<Expr>,
    /// The arguments after the first: COUNT(DISTINCT a, b, …), GROUP_CONCAT(a, b, …).
    pub more: Vec<Expr>,
    pub distinct: bool,
    /// The collation MIN and MAX compare strings in (the argument's); DISTINCT compares
    /// every argument in its own (`colls`).
    pub coll: Collation,
    pub colls: Vec<Collation>,
    /// GROUP_CONCAT's ORDER BY.
    pub order: OrderKeys,
    /// GROUP_CONCAT's SEPARATOR (',' by default).
    pub separator: String,
    /// GROUP_CONCAT's result is cut at this many bytes (`group_concat_max_len` when the
    /// statement was bound).
    pub max_len: u64,
    /// `OVER (…)`: a window function, computed after grouping over the result rows
    /// (`window.rs`), never part of a group's aggregates.
    pub over: Option<Box<crate::window::Over>>,
}

impl AggCall {
    /// Every argument, the first included.
    pub fn args(&self) -> impl Iterator<Item = &Expr> {
        self.arg.iter().chain(self.more.iter())
    }
}

/// What binding a subquery needs: the statement's context, and the query levels around
/// the one being bound (`None` at the top level).
pub struct SubCtx<'a> {
    pub ctx: &'a crate::stmt::Ctx<'a>,
    pub outer: Option<&'a crate::subquery::Outer<'a>>,
    /// The subqueries bound at this level, in text order (their tables are the
    /// statement's too: metadata locks, EXPLAIN).
    pub found: std::cell::RefCell<Vec<std::sync::Arc<crate::subquery::Subquery>>>,
}

impl<'a> SubCtx<'a> {
    pub fn new(
        ctx: &'a crate::stmt::Ctx<'a>,
        outer: Option<&'a crate::subquery::Outer<'a>>,
    ) -> SubCtx<'a> {
        SubCtx {
            ctx,
            outer,
            found: Default::default(),
        }
    }

    pub fn take(&self) -> Vec<std::sync::Arc<crate::subquery::Subquery>> {
        std::mem::take(&mut *self.found.borrow_mut())
    }
}

/// Binds expressions of one statement.
pub struct Binder<'a> {
    /// Where subqueries may appear: their context (`None`: 1235 for a subquery here).
    pub sub: Option<&'a SubCtx<'a>>,
    pub scope: Option<&'a Scope>,
    /// Placeholder positions (line, column) → parameter number, from the tokenizer.
    pub params: &'a HashMap<(u64, u64), usize>,
    /// Where aggregates go; `None` where they are not allowed (WHERE, VALUES).
    pub aggs: Option<&'a mut Vec<AggCall>>,
    /// For UnknownColumn messages, as MariaDB 10.11 names the clause: "SELECT", "WHERE", ...
    pub context: &'static str,
    /// The session's collation_connection and sql_mode when the statement was bound.
    pub conn: Conn,
}

/// What binding takes from the session: string literals and parameters compare in
/// `collation_connection`, and `sql_mode` changes what some syntax means (PIPES_AS_CONCAT,
/// ONLY_FULL_GROUP_BY). A plan bound under one `Conn` is not reused under another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conn {
    pub coll: Collation,
    pub mode: SqlMode,
}

impl Default for Conn {
    fn default() -> Conn {
        Conn {
            coll: LITERAL_COLLATION,
            mode: SqlMode::parse(SqlMode::DEFAULT_TEXT).unwrap_or_default(),
        }
    }
}

impl Conn {
    /// The part of a session's settings a plan depends on (the plan cache's key).
    pub fn plan_key(self) -> (Collation, u64) {
        (self.coll, self.mode.0 & SqlMode::PLAN_MODES)
    }
}

/// The default `collation_connection` (after `SET NAMES utf8mb4`); sorting and grouping
/// fall back to it for values of no collation.
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

/// The collation of expression `e` and how strongly it binds, with `columns` the scope's
/// and `lit` the collation of literals and parameters (`collation_connection`).
pub fn derive_collation(e: &Expr, columns: &[Column], lit: Collation) -> (Collation, Coercibility) {
    match e {
        Expr::Collate(_, c) => (*c, Coercibility::Explicit),
        Expr::Column(i) => match columns.get(*i) {
            Some(c) if c.ty.is_string() => (c.collation, Coercibility::Implicit),
            _ => (lit, Coercibility::Numeric),
        },
        Expr::Outer(_, c) if c.ty.is_string() => (c.collation, Coercibility::Implicit),
        Expr::Default { col, .. } | Expr::NoDefault(col) if col.ty.is_string() => {
            (col.collation, Coercibility::Implicit)
        }
        Expr::Sub(crate::subquery::SubKind::Scalar, q) => q
            .plan
            .item_derived
            .first()
            .copied()
            .unwrap_or((lit, Coercibility::Numeric)),
        Expr::Lit(Value::Str(_)) | Expr::Param(_) => (lit, Coercibility::Coercible),
        // A user variable's collation binds as a column's does (COERCIBILITY(@s) is 2).
        Expr::Session(SessionFn::UserVar {
            kind: Some(VarKind::Str(c)),
            ..
        }) => (*c, Coercibility::Implicit),
        Expr::Assign { e, .. } => derive_collation(e, columns, lit),
        Expr::Func(_, args) | Expr::CollFunc(_, args, _) => args
            .iter()
            .map(|a| derive_collation(a, columns, lit))
            .min_by_key(|(_, k)| *k)
            .unwrap_or((lit, Coercibility::Coercible)),
        Expr::Case {
            whens, otherwise, ..
        } => whens
            .iter()
            .map(|(_, t)| t)
            .chain(otherwise.as_deref())
            .map(|a| derive_collation(a, columns, lit))
            .min_by_key(|(_, k)| *k)
            .unwrap_or((lit, Coercibility::Numeric)),
        _ => (lit, Coercibility::Numeric),
    }
}

/// The collation two operands compare in: the more strongly bound one's; of two columns,
/// utf8mb4_bin if either has it; two other different collations of one strength (explicit,
/// or two columns) are MySQL's error 1267.
pub fn comparison_collation(
    a: &Expr,
    b: &Expr,
    columns: &[Column],
    op: &str,
    lit: Collation,
) -> Result<Collation> {
    let (ca, ka) = derive_collation(a, columns, lit);
    let (cb, kb) = derive_collation(b, columns, lit);
    let mix = || {
        let kind = |k| match k {
            Coercibility::Explicit => "EXPLICIT",
            Coercibility::Implicit => "IMPLICIT",
            _ => "COERCIBLE",
        };
        SqlError::IllegalMixOfCollations(format!(
            "({},{}) and ({},{}) for operation '{op}'",
            ca.name(),
            kind(ka),
            cb.name(),
            kind(kb)
        ))
    };
    if ca.charset() != cb.charset() && ka != Coercibility::Numeric && kb != Coercibility::Numeric {
        return charset_mix((a, ca, ka), (b, cb, kb)).ok_or_else(mix);
    }
    if ka == kb && ca != cb && ka != Coercibility::Implicit && ka != Coercibility::Explicit {
        return Ok(lit);
    }
    if ka == kb && ca != cb && ka == Coercibility::Implicit && (ca.is_bin() || cb.is_bin()) {
        // Two columns of one character set: its _bin collation wins (as in MariaDB); two
        // other collations are an illegal mix, below.
        return Ok(if ca.is_bin() { ca } else { cb });
    }
    if ka == kb && ca != cb {
        return Err(mix());
    }
    Ok(if ka <= kb { ca } else { cb })
}

/// How wide a character set is: each holds every character of the narrower ones (ascii ⊂
/// latin1 ⊂ utf8mb3 ⊂ utf8mb4).
fn charset_width(c: Charset) -> u8 {
    match c {
        Charset::Ascii => 0,
        Charset::Latin1 => 1,
        Charset::Utf8mb3 => 2,
        Charset::Utf8mb4 => 3,
    }
}

/// Two operands of different character sets (MariaDB's `DTCollation::aggregate`, measured):
/// of two equally bound ones (two columns) the wider set's collation wins, the narrower
/// operand converted up (`latin1_col = utf8mb4_col` compares in utf8mb4); a more strongly
/// bound operand's wins when it is the wider, or when the other is a literal that converts
/// to its set without loss (`latin1_col = 'ä'`; `latin1_col = '日本'` and `utf8mb3_col =
/// '😀'` are 1267, as MariaDB will not compare a literal it cannot convert). `None`: 1267.
fn charset_mix(
    a: (&Expr, Collation, Coercibility),
    b: (&Expr, Collation, Coercibility),
) -> Option<Collation> {
    let width = |c: Collation| charset_width(c.charset());
    if a.2 == b.2 {
        if a.2 == Coercibility::Explicit {
            return None;
        }
        return Some(if width(a.1) >= width(b.1) { a.1 } else { b.1 });
    }
    let (strong, weak) = if a.2 < b.2 { (a, b) } else { (b, a) };
    if width(strong.1) >= width(weak.1) {
        return Some(strong.1);
    }
    if weak.2 < Coercibility::Coercible {
        return None;
    }
    match weak.0 {
        Expr::Lit(Value::Str(s)) if !s.chars().all(|c| strong.1.charset().holds(c)) => None,
        _ => Some(strong.1),
    }
}

/// The collation of a column declared with `charset` and `collation` (either may be
/// absent) in a table whose default is `default`: 1115 / 1273 for unknown names, 1253 for a
/// collation of another character set, 1235 for a character set Quire does not store.
pub fn column_collation(
    charset: Option<&str>,
    collation: Option<&str>,
    default: Collation,
) -> Result<Collation> {
    let cs = match charset {
        Some(name) => Some(Charset::from_name(name).ok_or_else(|| {
            if OTHER_CHARSETS.contains(&name.to_ascii_lowercase().as_str()) {
                SqlError::Unsupported(format!("CHARACTER SET {name}"))
            } else {
                SqlError::UnknownCharset(name.into())
            }
        })?),
        None => None,
    };
    match (cs, collation) {
        (_, Some(name)) => {
            if let (Some(cs), Some(of)) = (cs, charset_of_collation_name(name)) {
                if of != cs.name() {
                    return Err(SqlError::CollationCharsetMismatch {
                        collation: name.into(),
                        // MariaDB names the set by its own name (`utf8` is utf8mb3).
                        charset: cs.name().into(),
                    });
                }
            }
            collation_named(name)
        }
        // A character set alone means its default collation.
        (Some(cs), None) => Ok(cs.default_collation()),
        (None, None) => Ok(default),
    }
}

/// Character sets MariaDB has and Quire does not store (1235 rather than 1115).
const OTHER_CHARSETS: [&str; 8] = [
    "binary", "ucs2", "utf16", "utf32", "latin2", "cp1251", "gbk", "big5",
];

/// The character set a collation name belongs to by its prefix (`utf8_…` is utf8mb3's),
/// if it is one MariaDB has.
fn charset_of_collation_name(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    let prefix = lower.split_once('_')?.0;
    if prefix == "utf8" {
        return Some("utf8mb3");
    }
    Charset::ALL
        .into_iter()
        .map(|c| c.name())
        .chain(OTHER_CHARSETS)
        .find(|c| *c == prefix)
}

/// A collation by name: ours, or 1273 (unknown) / 1235 (one of a known character set that
/// Quire lacks: a tailoring, a `_nopad_` one).
pub fn collation_named(name: &str) -> Result<Collation> {
    if let Some(c) = Collation::from_name(name) {
        return Ok(c);
    }
    if charset_of_collation_name(name).is_some() || name.eq_ignore_ascii_case("binary") {
        return Err(SqlError::Unsupported(format!("COLLATE {name}")));
    }
    Err(SqlError::UnknownCollation(name.into()))
}

/// A collation `collation_connection` can be: literals compare in it, and they are utf8mb4
/// (a utf8mb3 name is taken by the caller, as its twin); another set's is 1235.
pub fn connection_collation(name: &str, default: Collation) -> Result<Collation> {
    let c = column_collation(None, Some(name), default)?;
    if c.charset() != Charset::Utf8mb4 {
        return Err(SqlError::Unsupported(format!("COLLATE {name}")));
    }
    Ok(c)
}

/// A DEFAULT kept in the catalog as SQL text, bound (literals in `conn`'s collation).
pub(crate) fn bind_default_text(
    text: &str,
    params: &HashMap<(u64, u64), usize>,
    conn: Conn,
) -> Result<Expr> {
    let dialect = sqlparser::dialect::MySqlDialect {};
    let e = sqlparser::parser::Parser::new(&dialect)
        .try_with_sql(text)
        .and_then(|mut p| p.parse_expr())
        .map_err(|_| SqlError::InvalidDefault(text.into()))?;
    Binder {
        sub: None,
        scope: None,
        params,
        aggs: None,
        context: "VALUES",
        conn,
    }
    .bind(&e)
}

/// `DEFAULT(col)` and `SET col = DEFAULT`: the column's DEFAULT as a value of its type;
/// without one, NULL for a nullable column and the implicit 0 for an AUTO_INCREMENT one,
/// and 1364 "Field 'c' doesn't have a default value" for any other (when binding, in every
/// sql_mode, as MariaDB's Item_default_value).
pub(crate) fn column_default_expr(
    col: &Column,
    auto_increment: bool,
    params: &HashMap<(u64, u64), usize>,
    conn: Conn,
) -> Result<Expr> {
    let e = match &col.default {
        Some(text) => crate::tz::default_expr(col, bind_default_text(text, params, conn)?),
        None if col.nullable => Expr::Lit(Value::Null),
        None if auto_increment => Expr::Lit(crate::exec::implicit_default(col)),
        None => return Err(SqlError::NoDefault(col.name.clone())),
    };
    Ok(Expr::Default {
        e: Box::new(e),
        col: Box::new(col.clone()),
    })
}

/// DEFAULT in INSERT's VALUES: what the column gets when the statement leaves it out (a
/// NOT NULL column without a DEFAULT: 1364 when the row is stored, in strict mode an
/// error; an ENUM its first member; an AUTO_INCREMENT column its next value).
pub(crate) fn insert_default_expr(
    col: &Column,
    auto_increment: bool,
    params: &HashMap<(u64, u64), usize>,
    conn: Conn,
) -> Result<Expr> {
    if auto_increment && col.default.is_none() {
        return Ok(Expr::Lit(Value::Null));
    }
    if col.default.is_none() && !col.nullable {
        if col.ty.is_enum() {
            return Ok(Expr::Lit(crate::exec::implicit_default(col)));
        }
        return Ok(Expr::NoDefault(Box::new(col.clone())));
    }
    column_default_expr(col, false, params, conn)
}

/// Whether `e` is the bare keyword DEFAULT (sqlparser reads it as a name).
pub(crate) fn is_default_keyword(e: &sql::Expr) -> bool {
    matches!(e, sql::Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default"))
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
        // `b'0101'` and `0b0101` (parse.rs): bits, a binary string of ceil(n/8) bytes.
        V::SingleQuotedByteStringLiteral(s) | V::DoubleQuotedByteStringLiteral(s) => {
            Value::Bytes(bits(s)?)
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
            // 1115 for a name MariaDB lacks, 1235 for its other sets (latin1, ascii, …).
            column_collation(Some(other), None, Collation::Utf8mb4GeneralCi)?;
            return Err(SqlError::Unsupported(format!("_{charset}")));
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

/// The bytes of a bit literal's digits, big-endian, the first byte holding what does not
/// fill a whole one (`b'100000001'` is 0x01 0x01); 1064 for anything but 0 and 1.
fn bits(digits: &str) -> Result<Vec<u8>> {
    if !digits.bytes().all(|c| c == b'0' || c == b'1') {
        return Err(SqlError::Parse {
            near: format!("b'{digits}'"),
            line: 1,
        });
    }
    let d = digits.as_bytes();
    let first = d.len() % 8;
    let mut out = Vec::with_capacity(d.len().div_ceil(8));
    let mut chunks: Vec<&[u8]> = Vec::new();
    if first > 0 {
        chunks.push(&d[..first]);
    }
    chunks.extend(d[first..].chunks(8));
    for c in chunks {
        out.push(c.iter().fold(0u8, |b, bit| b << 1 | (bit - b'0')));
    }
    Ok(out)
}

fn sys_var(name: &str) -> Option<Result<Expr>> {
    let rest = name.strip_prefix("@@")?;
    let lower = rest.to_ascii_lowercase();
    let (global, var) = if let Some(v) = lower.strip_prefix("global.") {
        (true, v.to_string())
    } else if let Some(v) = lower
        .strip_prefix("session.")
        .or_else(|| lower.strip_prefix("local."))
    {
        // `@@SESSION.x` of a global-only variable is 1238 (read as `@@x`, it is the global).
        if crate::vars::is_global_only(v) {
            return Some(Err(SqlError::GlobalVariableRead(v.to_string())));
        }
        (false, v.to_string())
    } else {
        (false, lower)
    };
    Some(Ok(Expr::Session(SessionFn::SysVar { name: var, global })))
}

impl Binder<'_> {
    /// The scope's columns (none without a table).
    pub(crate) fn columns(&self) -> &[Column] {
        self.scope.map_or(&[], |s| s.columns.as_slice())
    }

    /// `x IS TRUE` (`want`) or `x IS FALSE`: x's truth (NOT NOT x, or NOT x) `<=>` 1, so
    /// NULL is neither.
    fn truth_is(&mut self, x: &sql::Expr, want: bool) -> Result<Expr> {
        let mut t = Expr::Not(Box::new(self.bind(x)?));
        if want {
            t = Expr::Not(Box::new(t));
        }
        Ok(Expr::Cmp(
            BinOp::NullSafeEq,
            Box::new(t),
            Box::new(Expr::Lit(Value::Int(1))),
            self.lit(),
        ))
    }

    /// The collation of literals and parameters here.
    fn lit(&self) -> Collation {
        self.conn.coll
    }

    /// The collation a function of several arguments compares strings in (NULLIF,
    /// GREATEST, LEAST): that of the most strongly bound arguments, as for a comparison.
    pub(crate) fn args_collation(&self, args: &[Expr], name: &str) -> Result<Collation> {
        let derived: Vec<(Collation, Coercibility)> = args
            .iter()
            .map(|a| derive_collation(a, self.columns(), self.lit()))
            .collect();
        let Some(k) = derived.iter().map(|d| d.1).min() else {
            return Ok(self.lit());
        };
        let mut strongest = derived.iter().filter(|d| d.1 == k).map(|d| d.0);
        let first = strongest.next().unwrap_or(self.lit());
        match strongest.find(|c| *c != first) {
            None => Ok(first),
            Some(other) => match k {
                Coercibility::Implicit => Ok(Collation::Utf8mb4Bin),
                Coercibility::Explicit => Err(SqlError::IllegalMixOfCollations(format!(
                    "({},EXPLICIT) and ({},EXPLICIT) for operation '{name}'",
                    first.name(),
                    other.name()
                ))),
                _ => Ok(self.lit()),
            },
        }
    }

    fn column(&self, db: Option<&str>, qualifier: Option<&str>, name: &str) -> Result<Expr> {
        let r = match self.scope {
            Some(s) => s
                .resolve_in(db, qualifier, name, self.context)
                .map(Expr::Column),
            None => Err(SqlError::UnknownColumn {
                column: match (db, qualifier) {
                    (Some(d), Some(q)) => format!("{d}.{q}.{name}"),
                    (_, Some(q)) => format!("{q}.{name}"),
                    _ => name.into(),
                },
                context: self.context.into(),
            }),
        };
        // Inside a subquery, a name its own FROM lacks may be an enclosing query's.
        match (r, self.sub.and_then(|s| s.outer)) {
            (Err(e @ SqlError::UnknownColumn { .. }), Some(outer)) => {
                match outer.capture(db, qualifier, name, self.context)? {
                    Some(x) => Ok(x),
                    None => Err(e),
                }
            }
            (r, _) => r,
        }
    }

    /// `DEFAULT(col)`: the column's DEFAULT ([`column_default_expr`]).
    fn default_of(&mut self, f: &sql::Function) -> Result<Expr> {
        let arg = match &f.args {
            sql::FunctionArguments::List(l) if l.args.len() == 1 => match &l.args[0] {
                sql::FunctionArg::Unnamed(sql::FunctionArgExpr::Expr(x)) => Some(x),
                _ => None,
            },
            _ => None,
        };
        let (db, q, name) = match arg {
            Some(sql::Expr::Identifier(i)) => (None, None, i.value.clone()),
            Some(sql::Expr::CompoundIdentifier(p)) => match p.as_slice() {
                [t, c] => (None, Some(t.value.clone()), c.value.clone()),
                [d, t, c] => (
                    Some(d.value.clone()),
                    Some(t.value.clone()),
                    c.value.clone(),
                ),
                _ => return Err(SqlError::Unsupported(f.to_string())),
            },
            // MariaDB's grammar takes a column name only (parse.rs says where).
            _ => {
                return Err(SqlError::Parse {
                    near: f.to_string(),
                    line: 1,
                })
            }
        };
        // In INSERT's VALUES (no scope of its own) the column is the target table's.
        let target = INSERT_TARGET.with(|t| t.borrow().clone());
        let Some(scope) = self.scope.or(target.as_ref()) else {
            return Err(SqlError::UnknownColumn {
                column: name,
                context: self.context.into(),
            });
        };
        let i = scope.resolve_in(db.as_deref(), q.as_deref(), &name, self.context)?;
        scope.default_of(i, self.params, self.conn)
    }

    /// `VALUES(c)` / `VALUE(c)`: in ON DUPLICATE KEY UPDATE, the value the statement would
    /// have inserted into column `c`; elsewhere NULL (MariaDB's `VALUE(c)`; `VALUES(c)` is a
    /// syntax error there, the word starting a table value constructor). The argument is a
    /// column name only, as in MariaDB's grammar.
    fn insert_value(&mut self, f: &sql::Function, name: &str) -> Result<Expr> {
        let arg = match &f.args {
            sql::FunctionArguments::List(l) if l.args.len() == 1 => match &l.args[0] {
                sql::FunctionArg::Unnamed(sql::FunctionArgExpr::Expr(x)) => Some(x),
                _ => None,
            },
            _ => None,
        };
        let column = match arg {
            Some(x @ (sql::Expr::Identifier(_) | sql::Expr::CompoundIdentifier(_))) => x,
            _ => {
                return Err(SqlError::Parse {
                    near: f.to_string(),
                    line: 1,
                })
            }
        };
        let Some(width) = INSERT_VALUES.with(|c| c.get()) else {
            if name == "values" {
                return Err(SqlError::Parse {
                    near: f.to_string(),
                    line: 1,
                });
            }
            // The column must exist (1054), its value is not read.
            self.bind(column)?;
            return Ok(Expr::Lit(Value::Null));
        };
        match self.bind(column)? {
            Expr::Column(i) if i < width => Ok(Expr::Column(width + i)),
            _ => Err(SqlError::UnknownColumn {
                column: column.to_string(),
                context: self.context.into(),
            }),
        }
    }

    /// Plans subquery `q` as one level below this binder's.
    fn subquery(&self, q: &sql::Query) -> Result<std::sync::Arc<crate::subquery::Subquery>> {
        let Some(sub) = self.sub else {
            return Err(SqlError::Unsupported("a subquery here".into()));
        };
        let outer = crate::subquery::Outer::new(self.scope, sub.outer);
        // VALUES(c) of ON DUPLICATE KEY UPDATE reads the statement's row, not a subquery's.
        let saved = INSERT_VALUES.with(|c| c.take());
        let plan = crate::stmt::select_in(sub.ctx, q, None, Some(&outer));
        INSERT_VALUES.with(|c| c.set(saved));
        let plan = plan?;
        let ty = plan
            .item_tys
            .first()
            .copied()
            .unwrap_or_else(|| crate::func::types::infer(&Expr::Lit(Value::Null), &[], &[]));
        let s = std::sync::Arc::new(crate::subquery::Subquery {
            plan,
            captures: outer.captures.into_inner(),
            ty,
        });
        sub.found.borrow_mut().push(s.clone());
        Ok(s)
    }

    /// A subquery used as a value or a set: one column (1241 otherwise).
    fn one_column(&self, q: &sql::Query) -> Result<std::sync::Arc<crate::subquery::Subquery>> {
        let s = self.subquery(q)?;
        if s.plan.items.len() != 1 {
            return Err(SqlError::OperandColumns(1));
        }
        Ok(s)
    }

    /// `e IN (SELECT …)` and `e op ANY | ALL (SELECT …)`.
    fn set_comparison(
        &mut self,
        e: &sql::Expr,
        q: &sql::Query,
        op: Option<(BinOp, bool)>,
    ) -> Result<Expr> {
        if row::is_row_syntax(e) {
            return self.row_in_subquery(e, q, op);
        }
        let left = self.bind(e)?;
        let s = self.one_column(q)?;
        // The collation: the two operands' as for a comparison (the subquery's column is
        // a column of its scope, so derive it from its type's collation).
        let coll = self.subquery_collation(&left, &s, op.map_or(BinOp::Eq, |o| o.0))?;
        let kind = match op {
            None => crate::subquery::SubKind::In {
                e: Box::new(left),
                coll,
            },
            Some((op, all)) => crate::subquery::SubKind::Quantified {
                e: Box::new(left),
                op,
                all,
                coll,
            },
        };
        Ok(Expr::Sub(kind, s))
    }

    /// The collation `left` compares with subquery `s`'s column in.
    fn subquery_collation(
        &self,
        left: &Expr,
        s: &crate::subquery::Subquery,
        op: BinOp,
    ) -> Result<Collation> {
        let (coll, k) = s
            .plan
            .item_derived
            .first()
            .copied()
            .unwrap_or((self.lit(), Coercibility::Numeric));
        // Stand the subquery's column in as a column of that collation.
        let mut cols: Vec<Column> = self.columns().to_vec();
        let stand_in = match k {
            Coercibility::Implicit => {
                let mut c =
                    Column::new("", quire_engine::row::ColumnType::VarChar { max_chars: 1 });
                c.collation = coll;
                cols.push(c);
                Expr::Column(cols.len() - 1)
            }
            Coercibility::Explicit => Expr::Collate(Box::new(Expr::Lit(Value::Null)), coll),
            Coercibility::Coercible => Expr::Lit(Value::Str(String::new())),
            Coercibility::Numeric => Expr::Lit(Value::Int(0)),
        };
        comparison_collation(left, &stand_in, &cols, &op_text(op), self.lit())
    }

    pub fn bind(&mut self, e: &sql::Expr) -> Result<Expr> {
        use sql::Expr as E;
        Ok(match e {
            E::Identifier(i) => {
                if i.value.starts_with("@@") && i.quote_style.is_none() {
                    return sys_var(&i.value)
                        .unwrap_or_else(|| Err(SqlError::Unsupported(i.value.clone())));
                }
                if let Some(name) = i
                    .value
                    .strip_prefix('@')
                    .filter(|_| i.quote_style.is_none())
                {
                    return Ok(user_var(name));
                }
                // A reserved word in MariaDB: CURRENT_USER without parentheses is the call.
                if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("current_user") {
                    return Ok(Expr::Session(SessionFn::CurrentUser));
                }
                self.column(None, None, &ident_name(i))?
            }
            E::CompoundIdentifier(parts) => {
                let names: Vec<String> = parts.iter().map(ident_name).collect();
                if names[0].starts_with("@@") {
                    return sys_var(&names.join("."))
                        .unwrap_or_else(|| Err(SqlError::Unsupported(e.to_string())));
                }
                match names.as_slice() {
                    [t, c] => self.column(None, Some(t), c)?,
                    [db, t, c] => self.column(Some(db), Some(t), c)?,
                    _ => return Err(SqlError::Unsupported(e.to_string())),
                }
            }
            E::Value(v) => literal(v, self.params)?,
            E::Prefixed { prefix, value } if prefix.value.starts_with('_') => {
                introduced(&prefix.value[1..], self.bind(value)?)?
            }
            E::Nested(inner) => self.bind(inner)?,
            E::BinaryOp {
                left,
                op: BinaryOperator::Assignment,
                right,
            } => {
                let name = match left.as_ref() {
                    E::Identifier(i) if i.quote_style.is_none() && !i.value.starts_with("@@") => {
                        i.value.strip_prefix('@')
                    }
                    _ => None,
                };
                let Some(name) = name else {
                    return Err(SqlError::Parse {
                        near: format!(":= {right}"),
                        line: 1,
                    });
                };
                let e = self.bind(right)?;
                let kind = declared_kind(&e, self.columns(), self.lit());
                Expr::Assign {
                    name: name.to_lowercase(),
                    e: Box::new(e),
                    kind,
                }
            }
            E::BinaryOp { left, op, right }
                if row::is_row_syntax(left)
                    || row::is_row_syntax(right)
                    || matches!(
                        (left.as_ref(), right.as_ref()),
                        (E::Subquery(_), E::Subquery(_))
                    ) =>
            {
                let cmp = match op {
                    BinaryOperator::Eq => Some(BinOp::Eq),
                    BinaryOperator::Spaceship => Some(BinOp::NullSafeEq),
                    BinaryOperator::NotEq => Some(BinOp::Ne),
                    BinaryOperator::Lt => Some(BinOp::Lt),
                    BinaryOperator::LtEq => Some(BinOp::Le),
                    BinaryOperator::Gt => Some(BinOp::Gt),
                    BinaryOperator::GtEq => Some(BinOp::Ge),
                    _ => None,
                };
                let arithmetic = match op {
                    BinaryOperator::Plus => Some("+"),
                    BinaryOperator::Minus => Some("-"),
                    BinaryOperator::Multiply => Some("*"),
                    BinaryOperator::Divide => Some("/"),
                    BinaryOperator::Modulo => Some("%"),
                    BinaryOperator::MyIntegerDivide => Some("DIV"),
                    _ => None,
                };
                match (cmp, arithmetic) {
                    (Some(op), _) => self.row_comparison(left, op, right)?,
                    (None, Some(sym)) if row::is_row_syntax(left) || row::is_row_syntax(right) => {
                        self.row_arithmetic(left, sym, right)?
                    }
                    // A row is one value nowhere else (AND, OR, …).
                    _ if row::is_row_syntax(left) || row::is_row_syntax(right) => {
                        return Err(SqlError::OperandColumns(1))
                    }
                    _ => self.bind_binary(left, op, right)?,
                }
            }
            E::BinaryOp { left, op, right } => self.bind_binary(left, op, right)?,
            E::Tuple(_) => return Err(SqlError::OperandColumns(1)),
            E::In {
                expr,
                target: sql::InTarget::List(list),
                negated,
                ..
            } if row::is_row_syntax(expr) || list.iter().any(row::is_row_syntax) => {
                self.row_in_list(expr, list, *negated)?
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
                    other => Expr::Neg(Box::new(enum_number(other, self.columns()))),
                },
                UnaryOperator::Plus => self.bind(expr)?,
                UnaryOperator::BitwiseNot => Expr::Func(
                    Func::Math(crate::func::MathFn::BitNot),
                    vec![self.bind(expr)?],
                ),
                other => return Err(SqlError::Unsupported(format!("operator {other}"))),
            },
            E::IsNull(x) => Expr::IsNull(Box::new(self.bind(x)?), false),
            E::IsNotNull(x) => Expr::IsNull(Box::new(self.bind(x)?), true),
            // `x IS [NOT] TRUE | FALSE`: x's truth compared with `<=>`, never NULL; `x IS
            // [NOT] UNKNOWN` is `x IS [NOT] NULL` (MariaDB's Item_func_truth).
            E::IsTrue(x) => self.truth_is(x, true)?,
            E::IsFalse(x) => self.truth_is(x, false)?,
            E::IsNotTrue(x) => Expr::Not(Box::new(self.truth_is(x, true)?)),
            E::IsNotFalse(x) => Expr::Not(Box::new(self.truth_is(x, false)?)),
            E::IsUnknown(x) => Expr::IsNull(Box::new(self.bind(x)?), false),
            E::IsNotUnknown(x) => Expr::IsNull(Box::new(self.bind(x)?), true),
            E::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let (e, lo, hi) = (self.bind(expr)?, self.bind(low)?, self.bind(high)?);
                let lo = year_literal(lo, &e, self.columns());
                let hi = year_literal(hi, &e, self.columns());
                let lit = self.lit();
                let c1 = comparison_collation(&e, &lo, self.columns(), "between", lit)?;
                let c2 = comparison_collation(&e, &hi, self.columns(), "between", lit)?;
                let coll = if derive_collation(&hi, self.columns(), lit).1
                    < derive_collation(&lo, self.columns(), lit).1
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
                let list: Vec<Expr> = list
                    .iter()
                    .map(|x| Ok(year_literal(self.bind(x)?, &e, self.columns())))
                    .collect::<Result<_>>()?;
                let lit = self.lit();
                let mut coll = derive_collation(&e, self.columns(), lit);
                for x in &list {
                    let c = comparison_collation(&e, x, self.columns(), "in", lit)?;
                    let k = derive_collation(x, self.columns(), lit).1;
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
                let e = self.bind(expr)?;
                let coll = collation_named(&name)?;
                // A COLLATE of another character set than its operand's is 1253 (a literal
                // is the connection's utf8mb4, so only a utf8mb4 collation fits it).
                let (of, k) = derive_collation(&e, self.columns(), self.lit());
                if k != Coercibility::Numeric
                    && of.charset() != coll.charset()
                    && (of.charset() != Charset::Utf8mb4 || coll.charset() != Charset::Utf8mb4)
                {
                    return Err(SqlError::CollationCharsetMismatch {
                        collation: name,
                        charset: of.charset().name().into(),
                    });
                }
                Expr::Collate(Box::new(e), coll)
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
                let coll = comparison_collation(&e, &pattern, self.columns(), "like", self.lit())?;
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
                    Some(o) => derive_collation(o, self.columns(), self.lit()).0,
                    None => self.lit(),
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
            E::Subquery(q) => Expr::Sub(crate::subquery::SubKind::Scalar, self.one_column(q)?),
            E::Exists { subquery, negated } => {
                let s = self.subquery(subquery)?;
                let x = Expr::Sub(crate::subquery::SubKind::Exists, s);
                if *negated {
                    Expr::Not(Box::new(x))
                } else {
                    x
                }
            }
            E::In {
                expr,
                target: sql::InTarget::Subquery(q),
                negated,
                ..
            } => {
                let x = self.set_comparison(expr, q, None)?;
                if *negated {
                    Expr::Not(Box::new(x))
                } else {
                    x
                }
            }
            E::AnyOp {
                left,
                compare_op,
                right,
                ..
            }
            | E::AllOp {
                left,
                compare_op,
                right,
            } => {
                let all = matches!(e, E::AllOp { .. });
                let sql::Expr::Subquery(q) = right.as_ref() else {
                    return Err(SqlError::Unsupported(format!("{e}")));
                };
                let op = match compare_op {
                    BinaryOperator::Eq => BinOp::Eq,
                    BinaryOperator::NotEq => BinOp::Ne,
                    BinaryOperator::Lt => BinOp::Lt,
                    BinaryOperator::LtEq => BinOp::Le,
                    BinaryOperator::Gt => BinOp::Gt,
                    BinaryOperator::GtEq => BinOp::Ge,
                    other => return Err(SqlError::Unsupported(format!("{other} ANY"))),
                };
                self.set_comparison(left, q, Some((op, all)))?
            }
            E::Function(f) => self.function(f)?,
            E::Floor { expr, .. } => Expr::Func(Func::Floor, vec![self.bind(expr)?]),
            E::Ceil { expr, .. } => Expr::Func(Func::Ceil, vec![self.bind(expr)?]),
            other => match self.bind_syntax(other)? {
                Some(x) => x,
                None => return Err(SqlError::Unsupported(format!("{other}"))),
            },
        })
    }

    /// A binary operator (both operands values).
    fn bind_binary(
        &mut self,
        left: &sql::Expr,
        op: &BinaryOperator,
        right: &sql::Expr,
    ) -> Result<Expr> {
        if let Some(x) = self.bind_operator(left, op, right)? {
            return Ok(x);
        }
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
            // `||` is OR, or CONCAT under PIPES_AS_CONCAT.
            BinaryOperator::StringConcat if self.conn.mode.has(SqlMode::PIPES_AS_CONCAT) => {
                let args = vec![self.bind(left)?, self.bind(right)?];
                return Ok(Expr::Func(Func::Concat, args));
            }
            BinaryOperator::StringConcat => BinOp::Or,
            other => return Err(SqlError::Unsupported(format!("operator {other}"))),
        };
        let (mut l, mut r) = (self.bind(left)?, self.bind(right)?);
        if crate::expr::is_comparison(op) {
            let coll = comparison_collation(&l, &r, self.columns(), &op_text(op), self.lit())?;
            r = year_literal(r, &l, self.columns());
            l = year_literal(l, &r, self.columns());
            // An ENUM compared with a number compares its index.
            if is_number_literal(&r) {
                l = enum_number(l, self.columns());
            } else if is_number_literal(&l) {
                r = enum_number(r, self.columns());
            }
            Ok(Expr::Cmp(op, Box::new(l), Box::new(r), coll))
        } else {
            if matches!(
                op,
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::IntDiv | BinOp::Mod
            ) {
                l = enum_number(l, self.columns());
                r = enum_number(r, self.columns());
            }
            Ok(Expr::Binary(op, Box::new(l), Box::new(r)))
        }
    }

    fn function(&mut self, f: &sql::Function) -> Result<Expr> {
        let parts = object_parts(&f.name)?;
        let name = parts
            .last()
            .cloned()
            .unwrap_or_default()
            .to_ascii_lowercase();
        if let Some(over) = &f.over {
            return self.window_function(f, &name, over);
        }
        if name == "default" && parts.len() == 1 {
            return self.default_of(f);
        }
        if (name == "values" || name == "value") && parts.len() == 1 {
            return self.insert_value(f, &name);
        }
        if row::is_row_syntax(&sql::Expr::Function(f.clone())) {
            // A row where one value goes.
            return Err(SqlError::OperandColumns(1));
        }
        let mut clauses: &[sql::FunctionArgumentClause] = &[];
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
                clauses = &l.clauses;
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
            "bit_and" => Some(AggFn::BitAnd),
            "bit_or" => Some(AggFn::BitOr),
            "bit_xor" => Some(AggFn::BitXor),
            "group_concat" => Some(AggFn::GroupConcat),
            other => AggFn::variance_named(other),
        };
        if let Some(af) = agg {
            // COUNT(DISTINCT a, b, …) and GROUP_CONCAT take several arguments; COUNT(a, b)
            // is a syntax error in MariaDB.
            let several = af == AggFn::GroupConcat || (af == AggFn::Count && distinct);
            if af != AggFn::CountStar && (args.is_empty() || (args.len() > 1 && !several)) {
                return Err(if af == AggFn::Count {
                    SqlError::Parse {
                        near: format!(
                            "{})",
                            args.last().map(|a| a.to_string()).unwrap_or_default()
                        ),
                        line: 1,
                    }
                } else {
                    SqlError::WrongParamCount(name.to_uppercase())
                });
            }
            // Aggregates do not nest: their arguments bind without an aggregate list.
            let saved = self.aggs.take();
            let bound = (|| -> Result<(Vec<Expr>, OrderKeys, String)> {
                let mut bound: Vec<Expr> =
                    args.iter().map(|a| self.bind(a)).collect::<Result<_>>()?;
                if af == AggFn::GroupConcat {
                    // Values joined as text: a TIME(3) or DATETIME(3) with its three
                    // fractional digits, a BIT as its bytes (as CONCAT sees them).
                    bound = self.text_args(Func::Concat, bound);
                }
                let mut order = Vec::new();
                let mut separator = ",".to_string();
                for c in clauses {
                    match c {
                        sql::FunctionArgumentClause::OrderBy(obs) if af == AggFn::GroupConcat => {
                            for o in obs {
                                let e = self.bind(&o.expr)?;
                                let coll = derive_collation(&e, self.columns(), self.lit()).0;
                                let desc = matches!(o.options.sort, Some(sql::OrderBySort::Desc));
                                order.push((e, desc, coll));
                            }
                        }
                        sql::FunctionArgumentClause::Separator(v) if af == AggFn::GroupConcat => {
                            separator = match &v.value {
                                sql::Value::SingleQuotedString(s)
                                | sql::Value::DoubleQuotedString(s) => s.clone(),
                                other => {
                                    return Err(SqlError::Parse {
                                        near: other.to_string(),
                                        line: 1,
                                    })
                                }
                            };
                        }
                        other => return Err(SqlError::Unsupported(other.to_string())),
                    }
                }
                Ok((bound, order, separator))
            })();
            self.aggs = saved;
            // A window function in an aggregate's arguments (MariaDB's 4074).
            let (mut bound, order, separator) = bound.map_err(|e| match e {
                SqlError::WindowPlacement => SqlError::WindowAsArgument,
                e => e,
            })?;
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
            let mut arg = bound.pop();
            // MIN and MAX of an ENUM compare member indexes, as MariaDB's: the aggregate
            // takes the index, and ELT names the member back ('' for index 0).
            let mut members_back: Option<Vec<String>> = None;
            if matches!(af, AggFn::Min | AggFn::Max) {
                if let Some(Expr::Column(c)) = &arg {
                    if let Some(col) = self.columns().get(*c).filter(|c| c.ty.is_enum()) {
                        members_back = Some(col.members.clone());
                        arg = arg.map(|a| enum_number(a, self.columns()));
                    }
                }
            }
            let Some(aggs) = self.aggs.as_deref_mut() else {
                return Err(SqlError::InvalidGroupFunction);
            };
            let call = AggCall {
                f: af,
                arg,
                more,
                distinct,
                coll,
                colls,
                order,
                separator,
                max_len: GROUP_CONCAT_MAX_LEN.with(|c| c.get()),
                over: None,
            };
            let i = match aggs.iter().position(|c| *c == call) {
                Some(i) => i,
                None => {
                    aggs.push(call);
                    aggs.len() - 1
                }
            };
            if let Some(members) = members_back {
                // ELT(index + 1, '', m1, m2, …): NULL stays NULL.
                let mut args = vec![
                    Expr::Binary(
                        BinOp::Add,
                        Box::new(Expr::Agg(i)),
                        Box::new(Expr::Lit(Value::Int(1))),
                    ),
                    Expr::Lit(Value::Str(String::new())),
                ];
                args.extend(members.into_iter().map(|m| Expr::Lit(Value::Str(m))));
                return Ok(Expr::Func(
                    Func::Str(crate::func::StrFn::Elt, Collation::Utf8mb4Bin),
                    args,
                ));
            }
            return Ok(Expr::Agg(i));
        }
        if star {
            return Err(SqlError::Parse {
                near: format!("*) {}", ""),
                line: 1,
            });
        }
        if name == "collation" && parts.len() == 1 && args.len() == 1 {
            // Known when binding: the collation the argument's value would compare in.
            let e = self.bind(args[0])?;
            let name = match derive_collation(&e, self.columns(), self.lit()) {
                (_, Coercibility::Numeric) => "binary",
                (c, _) => c.name(),
            };
            return Ok(Expr::Lit(Value::Str(name.into())));
        }
        let session = match name.as_str() {
            "database" | "schema" => Some(SessionFn::Database),
            "user" | "session_user" | "system_user" => Some(SessionFn::User),
            "current_user" => Some(SessionFn::CurrentUser),
            "connection_id" => Some(SessionFn::ConnectionId),
            "last_insert_id" if args.is_empty() => Some(SessionFn::LastInsertId),
            "now" | "current_timestamp" | "localtime" | "localtimestamp" if args.is_empty() => {
                Some(SessionFn::Now)
            }
            "curdate" | "current_date" if args.is_empty() => Some(SessionFn::CurDate),
            "row_count" => Some(SessionFn::RowCount),
            "found_rows" => Some(SessionFn::FoundRows),
            _ => None,
        };
        if let Some(s) = session {
            return Ok(Expr::Session(s));
        }
        if name == "last_insert_id" && args.len() == 1 {
            let e = self.bind(args[0])?;
            return Ok(Expr::SetInsertId(Box::new(e)));
        }
        if let ([arg], "length" | "octet_length") = (args.as_slice(), name.as_str()) {
            if let Some(e) = self.of_column_bytes(&name, arg)? {
                return Ok(e);
            }
        }
        let Some((func, min, max)) = Func::by_name(&name) else {
            return self.bind_function(&name, &args);
        };
        if args.len() < min || args.len() > max {
            return Err(SqlError::WrongParamCount(name));
        }
        let bound = args
            .iter()
            .map(|a| self.bind(a))
            .collect::<Result<Vec<_>>>()?;
        if matches!(func, Func::NullIf | Func::Greatest | Func::Least) {
            let coll = self.args_collation(&bound, &name)?;
            return Ok(Expr::CollFunc(func, bound, coll));
        }
        if matches!(func, Func::Concat | Func::ConcatWs) {
            self.charsets_mix(&bound, &name)?;
        }
        Ok(Expr::Func(func, self.text_args(func, bound)))
    }

    /// The string arguments of `name` taken together as MariaDB aggregates their
    /// collations across character sets (`charset_mix`, pair by pair): 1267 when a
    /// column's set cannot hold a literal's characters (`CONCAT(latin1_col, '日')`).
    fn charsets_mix(&self, args: &[Expr], name: &str) -> Result<()> {
        let mut acc: Option<(&Expr, Collation, Coercibility)> = None;
        for a in args {
            let (c, k) = derive_collation(a, self.columns(), self.lit());
            if k == Coercibility::Numeric {
                continue;
            }
            acc = Some(match acc {
                Some(p) if p.1.charset() != c.charset() => {
                    let won = charset_mix(p, (a, c, k)).ok_or_else(|| {
                        let kind = |k| match k {
                            Coercibility::Explicit => "EXPLICIT",
                            Coercibility::Implicit => "IMPLICIT",
                            _ => "COERCIBLE",
                        };
                        SqlError::IllegalMixOfCollations(format!(
                            "({},{}) and ({},{}) for operation '{}'",
                            p.1.name(),
                            kind(p.2),
                            c.name(),
                            kind(k),
                            name.to_ascii_lowercase()
                        ))
                    })?;
                    if won == p.1 {
                        p
                    } else {
                        (a, c, k.min(p.2))
                    }
                }
                Some(p) if p.2 <= k => p,
                _ => (a, c, k),
            });
        }
        Ok(())
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
        sql::Expr::Prefixed { value, .. } if matches!(**value, sql::Expr::Value(_)) => {
            expr_name(value)
        }
        sql::Expr::Nested(inner) => expr_name(inner),
        // A string is named by its value, leading spaces left out (without a warning, as
        // MariaDB 10.11 does).
        sql::Expr::Value(v) => match &v.value {
            sql::Value::SingleQuotedString(s)
            | sql::Value::DoubleQuotedString(s)
            | sql::Value::NationalStringLiteral(s) => s.trim_start().to_string(),
            other => other.to_string(),
        },
        other => other.to_string(),
    }
}
