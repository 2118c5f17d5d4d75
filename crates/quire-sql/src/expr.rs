//! Bound expressions: names resolved to column positions, parameters numbered, functions
//! known. Evaluation follows MySQL: three-valued logic, numeric promotion (integer →
//! decimal → double), strings compared in the collation the binder derived, and MariaDB's
//! warnings (division by zero 1365, a string that is not a number 1292) raised through
//! [`Env::warn`].

use std::cmp::Ordering;

use quire_engine::row::{Collation, Decimal, Value};

pub use crate::diag::Level;
use crate::error::{Result, SqlError};
use crate::types::{self, compare, num, to_decimal, truthy, NumKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    IntDiv,
    Mod,
    Eq,
    NullSafeEq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFn {
    CountStar,
    Count,
    Sum,
    Min,
    Max,
    Avg,
    BitAnd,
    BitOr,
    BitXor,
    GroupConcat,
    /// STD / STDDEV / STDDEV_POP (`root`, population), STDDEV_SAMP (`root`, `sample`),
    /// VARIANCE / VAR_POP, VAR_SAMP (`sample`): a DOUBLE from MariaDB's running mean and
    /// sum of squares (`exec.rs`, `AggState::Variance`).
    Variance {
        sample: bool,
        root: bool,
    },
    // Window functions only (`window.rs`): computed over a window of the result rows,
    // never over a group.
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    Ntile,
    Lag,
    Lead,
    FirstValue,
    LastValue,
    NthValue,
}

impl AggFn {
    /// STD, VARIANCE and their synonyms by their SQL names (lower case).
    pub fn variance_named(name: &str) -> Option<AggFn> {
        let (sample, root) = match name {
            "std" | "stddev" | "stddev_pop" => (false, true),
            "stddev_samp" => (true, true),
            "variance" | "var_pop" => (false, false),
            "var_samp" => (true, false),
            _ => return None,
        };
        Some(AggFn::Variance { sample, root })
    }
}

/// Values that come from the session, evaluated at execution (a cached plan stays right).
#[derive(Debug, Clone, PartialEq)]
pub enum SessionFn {
    Database,
    User,
    /// CURRENT_USER(): the account the login matched.
    CurrentUser,
    ConnectionId,
    LastInsertId,
    Now,
    CurDate,
    /// `@@name` / `@@session.name` / `@@global.name`.
    SysVar {
        name: String,
        global: bool,
    },
    RowCount,
    FoundRows,
    /// `@name`: a user variable (lower-cased: names are case-insensitive), with the kind it
    /// had when the statement was bound (`None`: unset), which types the result column as
    /// MariaDB does. The value is read at execution.
    UserVar {
        name: String,
        kind: Option<VarKind>,
    },
}

/// What a user variable holds, as MariaDB keeps it (`user_var_entry`): an integer (with
/// its signedness), a DECIMAL, a DOUBLE, or a string with its collation (binary strings
/// and NULL assigned from a NULL literal are of the binary character set). A date is kept
/// as its text. A NULL value keeps the kind of the expression that gave it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarKind {
    Int { unsigned: bool },
    Decimal,
    Double,
    Str(Collation),
    Binary,
}

impl VarKind {
    /// The value and kind a user variable keeps when `v` is assigned from an expression of
    /// kind `declared` (what the expression's type says; the value decides otherwise).
    pub fn store(v: Value, declared: VarKind) -> (Value, VarKind) {
        let coll = match declared {
            VarKind::Str(c) => c,
            _ => crate::bind::LITERAL_COLLATION,
        };
        match v {
            Value::Null => (Value::Null, declared),
            Value::Int(_) => (v, VarKind::Int { unsigned: false }),
            Value::UInt(_) => (v, VarKind::Int { unsigned: true }),
            Value::Decimal(_) => (v, VarKind::Decimal),
            Value::Double(_) => (v, VarKind::Double),
            Value::Str(_) => (v, VarKind::Str(coll)),
            Value::Bytes(_) => (v, VarKind::Binary),
            other => (Value::Str(types::display(&other)), VarKind::Str(coll)),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Lit(Value),
    Param(usize),
    Column(usize),
    /// The i-th aggregate of the query (after grouping).
    Agg(usize),
    Session(SessionFn),
    /// Arithmetic and logic (comparisons are [`Expr::Cmp`]).
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// A comparison (`=`, `<=>`, `<>`, `<`, `<=`, `>`, `>=`) of strings in a collation the
    /// binder derived from the operands (docs/sql.md, "Collations").
    Cmp(BinOp, Box<Expr>, Box<Expr>, Collation),
    /// `e COLLATE name`: the value of `e`, compared in `name`.
    Collate(Box<Expr>, Collation),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    IsNull(Box<Expr>, bool),
    Between {
        e: Box<Expr>,
        lo: Box<Expr>,
        hi: Box<Expr>,
        negated: bool,
        coll: Collation,
    },
    InList {
        e: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
        coll: Collation,
    },
    Like {
        e: Box<Expr>,
        pattern: Box<Expr>,
        escape: char,
        negated: bool,
        coll: Collation,
    },
    Case {
        operand: Option<Box<Expr>>,
        whens: Vec<(Expr, Expr)>,
        otherwise: Option<Box<Expr>>,
        coll: Collation,
    },
    Func(Func, Vec<Expr>),
    /// A function that compares strings (NULLIF, GREATEST, LEAST), in the collation the
    /// binder derived from its arguments.
    CollFunc(Func, Vec<Expr>, Collation),
    /// Inside a subquery: the k-th value the enclosing query passes in (a column of an
    /// outer query, `subquery.rs`); constant for one run of the subquery.
    /// The column is the outer value's type and collation (as the outer query sees it).
    Outer(usize, Box<quire_engine::row::Column>),
    /// A subquery used as a value, a set or a test (`subquery.rs`).
    Sub(
        crate::subquery::SubKind,
        std::sync::Arc<crate::subquery::Subquery>,
    ),
    /// A comparison of two rows (`(a, b) = (1, 2)`, `(a, b) < (SELECT x, y …)`), element
    /// by element as MariaDB's `compare_row` ([`compare_rows`]); nested rows are
    /// flattened (their shapes were checked equal), `colls` is each element pair's
    /// collation.
    RowCmp {
        op: BinOp,
        l: RowSide,
        r: RowSide,
        colls: Vec<Collation>,
    },
    /// `DEFAULT(col)`, `SET col = DEFAULT`, and DEFAULT in INSERT's VALUES: the column's
    /// DEFAULT expression `e` (a constant, or `current_timestamp()` evaluated per row),
    /// its value converted to the column's type, which is the result's type.
    Default {
        e: Box<Expr>,
        col: Box<quire_engine::row::Column>,
    },
    /// DEFAULT in INSERT's VALUES for a NOT NULL column without a DEFAULT: what a column
    /// left out gets, 1364 (an error in strict mode, else a warning and the type's
    /// implicit default), as MariaDB.
    NoDefault(Box<quire_engine::row::Column>),
    /// `@name := e`: assigns the user variable and gives the value; `kind` is what `e`'s
    /// type makes a NULL (MariaDB's `Item_func_set_user_var`).
    Assign {
        name: String,
        e: Box<Expr>,
        kind: VarKind,
    },
    /// `LAST_INSERT_ID(e)`: gives `e` as an integer and makes it what LAST_INSERT_ID()
    /// returns from now on (and the statement's OK packet's insert id, when no row got a
    /// generated one), as MariaDB; NULL gives NULL and sets 0.
    SetInsertId(Box<Expr>),
}

/// One side of a row comparison: its values, or the one row of a row subquery (none:
/// the comparison is NULL; more: 1242).
#[derive(Debug, Clone, PartialEq)]
pub enum RowSide {
    Exprs(Vec<Expr>),
    Sub(std::sync::Arc<crate::subquery::Subquery>),
}

impl RowSide {
    fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        match self {
            RowSide::Exprs(es) => es.iter().for_each(|e| e.walk(f)),
            RowSide::Sub(q) => q.captures.iter().for_each(|c| c.walk(f)),
        }
    }

    /// The row's values; `None` for a subquery with no row.
    pub fn eval(&self, row: &Row<'_>, env: &dyn Env) -> Result<Option<Vec<Value>>> {
        match self {
            RowSide::Exprs(es) => es
                .iter()
                .map(|e| e.eval(row, env))
                .collect::<Result<_>>()
                .map(Some),
            RowSide::Sub(q) => {
                let outer = q
                    .captures
                    .iter()
                    .map(|c| c.eval(row, env))
                    .collect::<Result<Vec<_>>>()?;
                let m = env.subquery(q, outer, 2)?;
                match m.rows.as_slice() {
                    [] => Ok(None),
                    [r] => Ok(Some(r.clone())),
                    _ => Err(SqlError::SubqueryRows),
                }
            }
        }
    }
}

/// Two rows compared with `op`, as MariaDB's `Arg_comparator::compare_row`: `<=>` is
/// true when every pair is (NULLs equal); `=` and `<>` skip a pair with a NULL and decide
/// on the first pair that differs, NULL if none differs but one had a NULL; `<`, `<=`,
/// `>`, `>=` decide on the first pair that differs, and are NULL at a pair with a NULL
/// before it. Each pair compares as two values do (collation, MySQL's conversions).
pub fn compare_rows(
    op: BinOp,
    x: &[Value],
    y: &[Value],
    colls: &[Collation],
    env: &dyn Env,
) -> Result<Value> {
    let truth = |o: Ordering| {
        let t = match op {
            BinOp::Eq | BinOp::NullSafeEq => o == Ordering::Equal,
            BinOp::Ne => o != Ordering::Equal,
            BinOp::Lt => o == Ordering::Less,
            BinOp::Le => o != Ordering::Greater,
            BinOp::Gt => o == Ordering::Greater,
            _ => o != Ordering::Less,
        };
        Value::Int(i64::from(t))
    };
    let mut was_null = false;
    for (i, (a, b)) in x.iter().zip(y).enumerate() {
        let coll = colls.get(i).copied().unwrap_or(Collation::Utf8mb4GeneralCi);
        let (an, bn) = (matches!(a, Value::Null), matches!(b, Value::Null));
        if an || bn {
            match op {
                BinOp::NullSafeEq if an && bn => continue,
                BinOp::NullSafeEq => return Ok(Value::Int(0)),
                BinOp::Eq | BinOp::Ne => {
                    was_null = true;
                    continue;
                }
                _ => return Ok(Value::Null),
            }
        }
        check_compared(a, b, env)?;
        let o = compare(a, b, coll);
        if o != Ordering::Equal {
            return Ok(truth(o));
        }
    }
    if was_null {
        return Ok(Value::Null);
    }
    Ok(truth(Ordering::Equal))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    Concat,
    ConcatWs,
    Length,
    CharLength,
    Upper,
    Lower,
    Coalesce,
    IfNull,
    If,
    NullIf,
    Abs,
    Version,
    Greatest,
    Least,
    Floor,
    Ceil,
    Sleep,
    Benchmark,
    /// GET_LOCK and its family (`user_locks.rs`), through [`Env::user_lock`].
    UserLock(UserLockFn),
    Repeat,
    /// A string function (`func/string.rs`); the collation is the one its arguments
    /// compare in (LOCATE, FIELD, REGEXP, …), derived by the binder.
    Str(crate::func::StrFn, Collation),
    /// A numeric function or bit operator (`func/math.rs`).
    Math(crate::func::MathFn),
    /// A date and time function (`func/datetime.rs`).
    Time(crate::func::TimeFn),
    /// `CAST(x AS type)` / `CONVERT(x, type)` (`func/cast.rs`).
    Cast(crate::func::CastTo),
    /// A JSON function (`func/json.rs`).
    Json(crate::func::json::JsonFn),
    /// IP address functions, MAKE_SET, EXPORT_SET, PASSWORD, UUID_SHORT (`func/misc.rs`).
    Misc(crate::func::misc::MiscFn),
}

/// The user-lock functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserLockFn {
    Get,
    Release,
    IsFree,
    IsUsed,
    ReleaseAll,
}

impl Func {
    pub fn by_name(name: &str) -> Option<(Func, usize, usize)> {
        Some(match name {
            "concat" => (Func::Concat, 1, usize::MAX),
            "concat_ws" => (Func::ConcatWs, 2, usize::MAX),
            "length" | "octet_length" => (Func::Length, 1, 1),
            "char_length" | "character_length" => (Func::CharLength, 1, 1),
            "upper" | "ucase" => (Func::Upper, 1, 1),
            "lower" | "lcase" => (Func::Lower, 1, 1),
            "coalesce" => (Func::Coalesce, 1, usize::MAX),
            "ifnull" | "nvl" => (Func::IfNull, 2, 2),
            "if" => (Func::If, 3, 3),
            "nullif" => (Func::NullIf, 2, 2),
            "abs" => (Func::Abs, 1, 1),
            "version" => (Func::Version, 0, 0),
            "greatest" => (Func::Greatest, 2, usize::MAX),
            "least" => (Func::Least, 2, usize::MAX),
            "floor" => (Func::Floor, 1, 1),
            "ceil" | "ceiling" => (Func::Ceil, 1, 1),
            "sleep" => (Func::Sleep, 1, 1),
            "benchmark" => (Func::Benchmark, 2, 2),
            "get_lock" => (Func::UserLock(UserLockFn::Get), 2, 2),
            "release_lock" => (Func::UserLock(UserLockFn::Release), 1, 1),
            "is_free_lock" => (Func::UserLock(UserLockFn::IsFree), 1, 1),
            "is_used_lock" => (Func::UserLock(UserLockFn::IsUsed), 1, 1),
            "release_all_locks" => (Func::UserLock(UserLockFn::ReleaseAll), 0, 0),
            "repeat" => (Func::Repeat, 2, 2),
            _ => return None,
        })
    }
}

/// VERSION() and @@version. The `MariaDB` token is what applications and ORMs look for to pick
/// MariaDB's dialect (SQLAlchemy, Django, Connector/J: with it missing they take a 10.11 for a
/// MySQL 10, newer than 8.0, and send MySQL 8's SQL such as `@@transaction_isolation`); the
/// part after it names Quire, where MariaDB's own builds name their distribution.
pub const VERSION: &str = "10.11.99-MariaDB-Quire-0.1.0";

/// What evaluation reads besides the row: parameters, aggregates, the session.
pub trait Env {
    fn param(&self, i: usize) -> Result<Value>;
    fn session(&self, f: &SessionFn) -> Result<Value>;
    /// `@name := v` (and `SET @name = v`): only a session's environment has user variables.
    fn set_user_var(&self, name: &str, v: Value, kind: VarKind) -> Result<()> {
        let _ = (v, kind);
        Err(SqlError::Unsupported(format!("assigning @{name} here")))
    }
    /// `LAST_INSERT_ID(v)`: only a session's environment keeps it.
    fn set_last_insert_id(&self, v: u64) -> Result<()> {
        let _ = v;
        Err(SqlError::Unsupported("LAST_INSERT_ID(expr) here".into()))
    }
    /// The session's time zone (`tz.rs`): read from `@@time_zone` unless the environment
    /// keeps it at hand.
    fn time_zone(&self) -> crate::tz::Zone {
        match self.session(&SessionFn::SysVar {
            name: "time_zone".into(),
            global: false,
        }) {
            Ok(Value::Str(s)) => crate::tz::Zone::parse(&s).unwrap_or_default(),
            _ => crate::tz::Zone::UTC,
        }
    }
    /// KILL QUERY / KILL reached this statement: it stops at the next row (1317).
    fn interrupted(&self) -> bool {
        false
    }
    /// GET_LOCK and its family, for the session: `args` evaluated (`user_locks.rs`).
    fn user_lock(&self, f: UserLockFn, args: Vec<Value>) -> Result<Value> {
        let _ = args;
        Err(SqlError::Unsupported(format!("{f:?} lock functions here")))
    }
    /// Raises a condition of the running statement (SHOW WARNINGS). `Err` is the statement's
    /// error instead: strict mode makes a Warning raised while an INSERT or UPDATE runs an
    /// error (MariaDB's abort_on_warning). The session also drops 1365 unless `sql_mode`
    /// has ERROR_FOR_DIVISION_BY_ZERO.
    fn warn(&self, level: Level, code: u16, message: String) -> Result<()> {
        let _ = (level, code, message);
        Ok(())
    }
    /// The rows of an information_schema table, now (`infoschema/`): only a session's
    /// environment has them.
    fn virtual_rows(&self, t: crate::infoschema::InfoTable) -> Result<Vec<Vec<Value>>> {
        Err(SqlError::Unsupported(format!(
            "information_schema.{} here",
            t.name()
        )))
    }
    /// The rows of work table `id` (a recursive CTE's last round, `exec/recursive.rs`):
    /// only the environment a recursive member runs in has them.
    fn work_rows(&self, id: usize) -> Result<std::rc::Rc<Vec<Vec<Value>>>> {
        let _ = id;
        Err(SqlError::Unsupported("a recursive reference here".into()))
    }
    /// The k-th outer value of the subquery being run ([`Expr::Outer`]).
    fn outer(&self, k: usize) -> Result<Value> {
        let _ = k;
        Err(SqlError::Unsupported("an outer reference here".into()))
    }
    /// Runs subquery `q` with `outer` as its outer values, or answers from the statement's
    /// cache; `need` rows are enough (EXISTS: 1, a scalar: 2; `usize::MAX`: all).
    fn subquery(
        &self,
        q: &crate::subquery::Subquery,
        outer: Vec<Value>,
        need: usize,
    ) -> Result<std::rc::Rc<crate::subquery::Materialized>> {
        let _ = (q, outer, need);
        Err(SqlError::Unsupported("subqueries here".into()))
    }
}

/// An environment with no parameters, no session and no warnings: constant expressions
/// evaluated outside a statement.
pub struct Quiet;

impl Env for Quiet {
    fn param(&self, _: usize) -> Result<Value> {
        Err(SqlError::WrongArguments("mysqld_stmt_execute".into()))
    }
    fn session(&self, f: &SessionFn) -> Result<Value> {
        Err(SqlError::Unsupported(format!("{f:?} here")))
    }
}

/// Raises 1365 "Division by 0" (the result is NULL).
fn division_by_zero(env: &dyn Env) -> Result<Value> {
    env.warn(Level::Warning, 1365, "Division by 0".into())?;
    Ok(Value::Null)
}

/// A string operand converted to a number of `kind`: 1292 if it is not one.
fn check_number(v: &Value, kind: NumKind, env: &dyn Env) -> Result<()> {
    match v {
        Value::Str(s) => types::check_numeric_string(s, kind, env),
        Value::Bytes(b) => types::check_numeric_string(&String::from_utf8_lossy(b), kind, env),
        _ => Ok(()),
    }
}

/// A comparison of a string with a number converts the string: to DECIMAL against an
/// integer, to DOUBLE against a DECIMAL or DOUBLE (MariaDB 10.11's choice), with 1292 when
/// it is not a number.
pub(crate) fn check_compared(x: &Value, y: &Value, env: &dyn Env) -> Result<()> {
    let is_str = |v: &Value| matches!(v, Value::Str(_) | Value::Bytes(_));
    let kind = |v: &Value| match v {
        Value::Int(_) | Value::UInt(_) => Some(NumKind::Decimal),
        Value::Decimal(_) | Value::Double(_) => Some(NumKind::Double),
        _ => None,
    };
    if is_str(x) {
        if let Some(k) = kind(y) {
            return check_number(x, k, env);
        }
    } else if is_str(y) {
        if let Some(k) = kind(x) {
            return check_number(y, k, env);
        }
    }
    Ok(())
}

/// Truth of a value in an expression (AND, OR, NOT, IF, CASE WHEN): a string is read as a
/// DOUBLE, with 1292 when it is not a number.
pub fn truth(v: &Value, env: &dyn Env) -> Result<Option<bool>> {
    check_number(v, NumKind::Double, env)?;
    Ok(truthy(v))
}

/// Truth of a WHERE or HAVING condition: a string is read as a DECIMAL (MariaDB 10.11's
/// 1292 names that type there).
pub fn condition(v: &Value, env: &dyn Env) -> Result<Option<bool>> {
    check_number(v, NumKind::Decimal, env)?;
    Ok(truthy(v))
}

/// Evaluation input: the current row and the aggregates of its group.
pub struct Row<'a> {
    pub values: &'a [Value],
    pub aggs: &'a [Value],
}

impl Expr {
    /// Visits every sub-expression (pre-order).
    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Binary(_, a, b) | Expr::Cmp(_, a, b, _) => {
                a.walk(f);
                b.walk(f);
            }
            Expr::RowCmp { l, r, .. } => {
                l.walk(f);
                r.walk(f);
            }
            Expr::Not(a)
            | Expr::Neg(a)
            | Expr::IsNull(a, _)
            | Expr::Collate(a, _)
            | Expr::Default { e: a, .. }
            | Expr::Assign { e: a, .. }
            | Expr::SetInsertId(a) => a.walk(f),
            Expr::Between { e, lo, hi, .. } => {
                e.walk(f);
                lo.walk(f);
                hi.walk(f);
            }
            Expr::InList { e, list, .. } => {
                e.walk(f);
                list.iter().for_each(|x| x.walk(f));
            }
            Expr::Like { e, pattern, .. } => {
                e.walk(f);
                pattern.walk(f);
            }
            Expr::Case {
                operand,
                whens,
                otherwise,
                ..
            } => {
                if let Some(o) = operand {
                    o.walk(f);
                }
                for (w, t) in whens {
                    w.walk(f);
                    t.walk(f);
                }
                if let Some(o) = otherwise {
                    o.walk(f);
                }
            }
            Expr::Func(_, args) | Expr::CollFunc(_, args, _) => args.iter().for_each(|x| x.walk(f)),
            // The outer values a subquery reads are expressions of this row; its own
            // expressions are over its own rows.
            Expr::Sub(kind, q) => {
                kind.walk(f);
                q.captures.iter().for_each(|x| x.walk(f));
            }
            Expr::Lit(_)
            | Expr::Param(_)
            | Expr::Column(_)
            | Expr::Agg(_)
            | Expr::Session(_)
            | Expr::NoDefault(_)
            | Expr::Outer(..) => {}
        }
    }

    /// Whether the value depends on no row (literals, parameters, session values).
    pub fn is_constant(&self) -> bool {
        let mut c = true;
        self.walk(&mut |e| {
            // An assignment is a side effect per row: never folded into a key bound.
            if matches!(
                e,
                Expr::Column(_) | Expr::Agg(_) | Expr::Assign { .. } | Expr::SetInsertId(_)
            ) {
                c = false;
            }
        });
        c
    }

    pub fn eval(&self, row: &Row<'_>, env: &dyn Env) -> Result<Value> {
        Ok(match self {
            Expr::Lit(v) => v.clone(),
            Expr::Param(i) => env.param(*i)?,
            Expr::Column(i) => row.values.get(*i).cloned().unwrap_or(Value::Null),
            Expr::Agg(i) => row.aggs.get(*i).cloned().unwrap_or(Value::Null),
            Expr::Session(f) => env.session(f)?,
            Expr::Cmp(op, a, b, coll) => {
                let x = a.eval(row, env)?;
                let y = b.eval(row, env)?;
                if !matches!(x, Value::Null) && !matches!(y, Value::Null) {
                    check_compared(&x, &y, env)?;
                }
                compare_op(*op, &x, &y, *coll)
            }
            Expr::Collate(a, _) => a.eval(row, env)?,
            Expr::Binary(op, a, b) => {
                let x = a.eval(row, env)?;
                match op {
                    BinOp::And => {
                        let l = truth(&x, env)?;
                        if l == Some(false) {
                            return Ok(Value::Int(0));
                        }
                        let r = truth(&b.eval(row, env)?, env)?;
                        return Ok(match (l, r) {
                            (_, Some(false)) => Value::Int(0),
                            (Some(true), Some(true)) => Value::Int(1),
                            _ => Value::Null,
                        });
                    }
                    BinOp::Or => {
                        let l = truth(&x, env)?;
                        if l == Some(true) {
                            return Ok(Value::Int(1));
                        }
                        let r = truth(&b.eval(row, env)?, env)?;
                        return Ok(match (l, r) {
                            (_, Some(true)) => Value::Int(1),
                            (Some(false), Some(false)) => Value::Int(0),
                            _ => Value::Null,
                        });
                    }
                    _ => {}
                }
                let y = b.eval(row, env)?;
                binary_in(*op, x, y, env).map_err(|e| self.named_in(e))?
            }
            Expr::Not(a) => match truth(&a.eval(row, env)?, env)? {
                None => Value::Null,
                Some(t) => Value::Int(i64::from(!t)),
            },
            Expr::Neg(a) => match numeric(a.eval(row, env)?, NumKind::Double, env)? {
                Value::Null => Value::Null,
                Value::Int(i) => i
                    .checked_neg()
                    .map(Value::Int)
                    .ok_or_else(|| self.named_in(range_err("BIGINT", "-")))?,
                Value::UInt(u) => {
                    if u <= i64::MAX as u64 + 1 {
                        Value::Int((u as i64).wrapping_neg())
                    } else {
                        return Err(self.named_in(range_err("BIGINT", "-")));
                    }
                }
                Value::Decimal(d) => Value::Decimal(Decimal::new(-d.unscaled, d.scale)),
                other => Value::Double(-num(&other)),
            },
            Expr::IsNull(a, negated) => {
                let n = matches!(a.eval(row, env)?, Value::Null);
                Value::Int(i64::from(n != *negated))
            }
            Expr::Between {
                e,
                lo,
                hi,
                negated,
                coll,
            } => {
                let v = e.eval(row, env)?;
                let l = lo.eval(row, env)?;
                let h = hi.eval(row, env)?;
                if matches!(v, Value::Null) || matches!(l, Value::Null) || matches!(h, Value::Null)
                {
                    return Ok(Value::Null);
                }
                // The operand is converted once, as MariaDB's comparator caches it.
                check_compared(&v, if types::is_numeric(&l) { &l } else { &h }, env)?;
                let inside = compare(&v, &l, *coll) != Ordering::Less
                    && compare(&v, &h, *coll) != Ordering::Greater;
                Value::Int(i64::from(inside != *negated))
            }
            Expr::InList {
                e,
                list,
                negated,
                coll,
            } => {
                let v = e.eval(row, env)?;
                if matches!(v, Value::Null) {
                    return Ok(Value::Null);
                }
                let mut saw_null = false;
                let mut checked = false;
                for x in list {
                    let w = x.eval(row, env)?;
                    // A string operand is converted once; a string in the list, each
                    // time it is compared.
                    if types::is_numeric(&v) {
                        check_compared(&v, &w, env)?;
                    } else if !checked && types::is_numeric(&w) {
                        check_compared(&v, &w, env)?;
                        checked = true;
                    }
                    if matches!(w, Value::Null) {
                        saw_null = true;
                    } else if compare(&v, &w, *coll) == Ordering::Equal {
                        return Ok(Value::Int(i64::from(!*negated)));
                    }
                }
                if saw_null {
                    Value::Null
                } else {
                    Value::Int(i64::from(*negated))
                }
            }
            Expr::Like {
                e,
                pattern,
                escape,
                negated,
                coll,
            } => {
                let v = e.eval(row, env)?;
                let p = pattern.eval(row, env)?;
                if matches!(v, Value::Null) || matches!(p, Value::Null) {
                    return Ok(Value::Null);
                }
                let m = like(&types::to_text(v), &types::to_text(p), *escape, *coll);
                Value::Int(i64::from(m != *negated))
            }
            Expr::Case {
                operand,
                whens,
                otherwise,
                coll,
            } => {
                let op = match operand {
                    Some(o) => Some(o.eval(row, env)?),
                    None => None,
                };
                for (w, t) in whens {
                    let hit = match &op {
                        Some(v) => {
                            let w = w.eval(row, env)?;
                            if matches!(v, Value::Null) || matches!(w, Value::Null) {
                                false
                            } else {
                                check_compared(v, &w, env)?;
                                compare(v, &w, *coll) == Ordering::Equal
                            }
                        }
                        None => truth(&w.eval(row, env)?, env)? == Some(true),
                    };
                    if hit {
                        return t.eval(row, env);
                    }
                }
                match otherwise {
                    Some(o) => o.eval(row, env)?,
                    None => Value::Null,
                }
            }
            Expr::Func(f, args) => func(*f, args, row, env).map_err(|e| self.named_in(e))?,
            Expr::CollFunc(f, args, coll) => coll_func(*f, args, *coll, row, env)?,
            Expr::Outer(k, _) => env.outer(*k)?,
            Expr::Sub(kind, q) => crate::subquery::eval(kind, q, row, env)?,
            Expr::Assign { name, e, kind } => {
                let v = e.eval(row, env)?;
                env.set_user_var(name, v.clone(), *kind)?;
                v
            }
            Expr::SetInsertId(e) => {
                let v = e.eval(row, env)?;
                // MariaDB's val_int, as a BIGINT UNSIGNED keeps it.
                let n = crate::func::cast::to_int(&v, env).map(|i| i as u64);
                env.set_last_insert_id(n.unwrap_or(0))?;
                n.map_or(Value::Null, Value::UInt)
            }
            Expr::RowCmp { op, l, r, colls } => {
                let x = l.eval(row, env)?;
                let y = r.eval(row, env)?;
                match (x, y) {
                    (Some(x), Some(y)) => compare_rows(*op, &x, &y, colls, env)?,
                    _ => Value::Null,
                }
            }
            Expr::Default { e, col } => {
                let v = e.eval(row, env)?;
                // A DEFAULT was checked against its column at CREATE: converting it raises
                // nothing an INSERT should fail on.
                let at = types::Target {
                    db: "",
                    table: "",
                    row: 1,
                    strict: false,
                    cut_as_truncation: false,
                };
                types::coerce(v, col, &at, env)?
            }
            Expr::NoDefault(col) => crate::exec::column_default(col, false, env)?,
        })
    }

    /// A 1690 raised by this node's own operation names the expression as MariaDB prints
    /// it; columns are left as markers for the statement to name ([`name_columns`]).
    fn named_in(&self, e: SqlError) -> SqlError {
        match e {
            SqlError::ArithmeticOutOfRange { kind, expr } if !expr.contains('\u{1}') => {
                // `expr` is only the operator here: the node knows its operands.
                let _ = expr;
                SqlError::ArithmeticOutOfRange {
                    kind,
                    expr: self.print(),
                }
            }
            other => other,
        }
    }

    /// How tightly the printed form binds (MariaDB's precedence: higher binds tighter).
    fn precedence(&self) -> u8 {
        match self {
            Expr::Binary(BinOp::Add | BinOp::Sub, ..) => 10,
            Expr::Binary(BinOp::Mul | BinOp::Div | BinOp::IntDiv | BinOp::Mod, ..) => 11,
            Expr::Binary(..) | Expr::Cmp(..) => 5,
            Expr::Neg(_) => 13,
            _ => 20,
        }
    }

    fn print_in(&self, parent: u8) -> String {
        let s = self.print();
        if self.precedence() < parent {
            format!("({s})")
        } else {
            s
        }
    }

    /// The expression as MariaDB's messages print it, with `\u{1}N\u{1}` for column N
    /// (named by [`name_columns`]).
    pub fn print(&self) -> String {
        match self {
            Expr::Lit(Value::Str(s)) => format!("'{}'", s.replace('\'', "\\'")),
            Expr::Lit(v) => types::display(v),
            Expr::Param(_) => "?".into(),
            Expr::Column(i) => format!("\u{1}{i}\u{1}"),
            Expr::Binary(op, a, b) => {
                let p = self.precedence();
                format!("{} {} {}", a.print_in(p), op_symbol(*op), b.print_in(p + 1))
            }
            Expr::Neg(a) => format!("-{}", a.print_in(self.precedence())),
            Expr::Func(f, args) | Expr::CollFunc(f, args, _) => format!(
                "{}({})",
                format!("{f:?}").to_ascii_lowercase(),
                args.iter().map(Expr::print).collect::<Vec<_>>().join(",")
            ),
            Expr::Collate(a, _) => a.print(),
            Expr::Session(SessionFn::UserVar { name, .. }) => format!("@`{name}`"),
            _ => "?".into(),
        }
    }
}

/// Names the column markers of a 1690 message ([`Expr::print`]) with `name(i)`: MariaDB
/// prints a column as `db`.`alias`.`column` (the alias is the table's name without one).
pub fn name_columns(e: SqlError, name: &dyn Fn(usize) -> String) -> SqlError {
    match e {
        SqlError::ArithmeticOutOfRange { kind, expr } if expr.contains('\u{1}') => {
            let mut out = String::new();
            for (i, part) in expr.split('\u{1}').enumerate() {
                match part.parse::<usize>() {
                    Ok(c) if i % 2 == 1 => out.push_str(&name(c)),
                    _ => out.push_str(part),
                }
            }
            SqlError::ArithmeticOutOfRange { kind, expr: out }
        }
        other => other,
    }
}

fn op_symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::IntDiv => "DIV",
        BinOp::Mod => "%",
        BinOp::Eq => "=",
        BinOp::NullSafeEq => "<=>",
        BinOp::Ne => "<>",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
        BinOp::And => "and",
        BinOp::Or => "or",
        BinOp::Xor => "xor",
    }
}

fn range_err(kind: &'static str, expr: &str) -> SqlError {
    SqlError::ArithmeticOutOfRange {
        kind,
        expr: expr.into(),
    }
}

fn is_int(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::UInt(_))
}

/// Integer arithmetic in i128, then back to BIGINT (signed if it fits, else unsigned).
fn int_result(n: i128, op: &str) -> Result<Value> {
    if let Ok(i) = i64::try_from(n) {
        Ok(Value::Int(i))
    } else if let Ok(u) = u64::try_from(n) {
        Ok(Value::UInt(u))
    } else {
        Err(range_err("BIGINT", op))
    }
}

fn as_i128(v: &Value) -> i128 {
    match v {
        Value::Int(i) => i128::from(*i),
        Value::UInt(u) => i128::from(*u),
        _ => 0,
    }
}

/// A string operand in arithmetic: its number, integer if it is one; 1292 (read as
/// `kind`) if it is not a number.
fn numeric(v: Value, kind: NumKind, env: &dyn Env) -> Result<Value> {
    check_number(&v, kind, env)?;
    Ok(match v {
        Value::Str(ref s) => match types::parse_number(s.trim()) {
            Some(types::Num::Int(i)) => {
                i64::try_from(i).map_or(Value::Double(i as f64), Value::Int)
            }
            Some(types::Num::Dec(_)) | Some(types::Num::Float(_)) | None => Value::Double(num(&v)),
        },
        Value::Bytes(_) => Value::Double(num(&v)),
        Value::Date(_) | Value::DateTime(_) => Value::Double(num(&v)),
        Value::Time(t) => crate::func::time::number(t),
        other => other,
    })
}

/// A comparison operator on two values, strings compared in `coll`.
pub fn compare_op(op: BinOp, x: &Value, y: &Value, coll: Collation) -> Value {
    use BinOp::*;
    match op {
        NullSafeEq => {
            let r = match (x, y) {
                (Value::Null, Value::Null) => true,
                (Value::Null, _) | (_, Value::Null) => false,
                _ => compare(x, y, coll) == Ordering::Equal,
            };
            Value::Int(i64::from(r))
        }
        _ => {
            if matches!(x, Value::Null) || matches!(y, Value::Null) {
                return Value::Null;
            }
            let o = compare(x, y, coll);
            let r = match op {
                Eq => o == Ordering::Equal,
                Ne => o != Ordering::Equal,
                Lt => o == Ordering::Less,
                Le => o != Ordering::Greater,
                Gt => o == Ordering::Greater,
                _ => o != Ordering::Less,
            };
            Value::Int(i64::from(r))
        }
    }
}

/// Whether `op` is a comparison (bound as [`Expr::Cmp`]).
pub fn is_comparison(op: BinOp) -> bool {
    use BinOp::*;
    matches!(op, Eq | NullSafeEq | Ne | Lt | Le | Gt | Ge)
}

/// `x op y` outside a statement: no warnings (aggregates' sums, constant folding).
pub fn binary(op: BinOp, x: Value, y: Value) -> Result<Value> {
    binary_in(op, x, y, &Quiet)
}

/// `x op y`, raising MariaDB's warnings through `env`: 1365 for division by zero, 1292 for
/// a string operand that is not a number.
pub fn binary_in(op: BinOp, x: Value, y: Value, env: &dyn Env) -> Result<Value> {
    use BinOp::*;
    match op {
        // The binder makes comparisons `Expr::Cmp`, with their collation; one reaching here
        // (a caller combining two values) compares strings as literals do.
        Eq | Ne | Lt | Le | Gt | Ge | NullSafeEq => {
            return Ok(compare_op(op, &x, &y, Collation::Utf8mb4GeneralCi));
        }
        Xor => {
            return Ok(match (truth(&x, env)?, truth(&y, env)?) {
                (Some(a), Some(b)) => Value::Int(i64::from(a != b)),
                _ => Value::Null,
            })
        }
        // `eval` short-circuits AND and OR before it calls here; as plain operators on two
        // evaluated values they are the same three-valued logic.
        And | Or => {
            let (a, b) = (truthy(&x), truthy(&y));
            return Ok(match (op, a, b) {
                (And, Some(false), _) | (And, _, Some(false)) => Value::Int(0),
                (And, Some(true), Some(true)) => Value::Int(1),
                (Or, Some(true), _) | (Or, _, Some(true)) => Value::Int(1),
                (Or, Some(false), Some(false)) => Value::Int(0),
                _ => Value::Null,
            });
        }
        _ => {}
    }
    if matches!(x, Value::Null) || matches!(y, Value::Null) {
        return Ok(Value::Null);
    }
    // DIV reads a string as a DECIMAL, the other operators as a DOUBLE (MariaDB's 1292).
    let kind = if op == IntDiv {
        NumKind::Decimal
    } else {
        NumKind::Double
    };
    let (x, y) = (numeric(x, kind, env)?, numeric(y, kind, env)?);
    let sym = match op {
        Add => "+",
        Sub => "-",
        Mul => "*",
        Div => "/",
        IntDiv => "DIV",
        _ => "%",
    };
    if is_int(&x) && is_int(&y) {
        let (a, b) = (as_i128(&x), as_i128(&y));
        // MySQL: signed op signed is BIGINT; with an unsigned operand, BIGINT UNSIGNED.
        let unsigned = matches!(x, Value::UInt(_)) || matches!(y, Value::UInt(_));
        let fit = |n: i128| -> Result<Value> {
            if unsigned {
                u64::try_from(n)
                    .map(Value::UInt)
                    .map_err(|_| range_err("BIGINT UNSIGNED", sym))
            } else {
                i64::try_from(n)
                    .map(Value::Int)
                    .map_err(|_| range_err("BIGINT", sym))
            }
        };
        return match op {
            Add => fit(a + b),
            Sub => fit(a - b),
            Mul => a.checked_mul(b).map_or(Err(range_err("BIGINT", sym)), fit),
            IntDiv | Mod if b == 0 => division_by_zero(env),
            IntDiv => fit(a / b),
            Mod => fit(a % b),
            _ => {
                if b == 0 {
                    return division_by_zero(env);
                }
                // MySQL: integer / integer is DECIMAL with 4 more digits of scale.
                let d = Decimal::new(a * 10_000, 4);
                Ok(Value::Decimal(div_decimal(d, Decimal::new(b, 0), 4)))
            }
        };
    }
    if let (Some(a), Some(b)) = (to_decimal(&x), to_decimal(&y)) {
        let s = a.scale.max(b.scale);
        if let (Some(a2), Some(b2)) = (a.rescale(s), b.rescale(s)) {
            let r = match op {
                Add => a2
                    .unscaled
                    .checked_add(b2.unscaled)
                    .map(|u| Decimal::new(u, s)),
                Sub => a2
                    .unscaled
                    .checked_sub(b2.unscaled)
                    .map(|u| Decimal::new(u, s)),
                Mul => a
                    .unscaled
                    .checked_mul(b.unscaled)
                    .map(|u| Decimal::new(u, a.scale + b.scale)),
                Div => {
                    if b.unscaled == 0 {
                        return division_by_zero(env);
                    }
                    Some(div_decimal(a, b, a.scale + 4))
                }
                IntDiv => {
                    if b2.unscaled == 0 {
                        return division_by_zero(env);
                    }
                    return int_result(a2.unscaled / b2.unscaled, sym);
                }
                _ => {
                    if b2.unscaled == 0 {
                        return division_by_zero(env);
                    }
                    Some(Decimal::new(a2.unscaled % b2.unscaled, s))
                }
            };
            if let Some(r) = r {
                return Ok(Value::Decimal(r));
            }
        }
    }
    let (a, b) = (num(&x), num(&y));
    let r = match op {
        Add => a + b,
        Sub => a - b,
        Mul => a * b,
        Div | IntDiv | Mod if b == 0.0 => return division_by_zero(env),
        Div => a / b,
        IntDiv => return int_result((a / b).trunc() as i128, sym),
        _ => a % b,
    };
    if !r.is_finite() {
        return Err(range_err("DOUBLE", sym));
    }
    Ok(Value::Double(r))
}

fn div_decimal(a: Decimal, b: Decimal, scale: u8) -> Decimal {
    // a / b at `scale`: (a.unscaled * 10^(scale + b.scale - a.scale)) / b.unscaled, rounded.
    let shift = i32::from(scale) + i32::from(b.scale) - i32::from(a.scale);
    let num = if shift >= 0 {
        a.unscaled
            .saturating_mul(10i128.saturating_pow(shift as u32 + 1))
    } else {
        a.unscaled / 10i128.pow((-shift) as u32) * 10
    };
    let q = num / b.unscaled;
    let q = if q % 10 >= 5 {
        q / 10 + 1
    } else if q % 10 <= -5 {
        q / 10 - 1
    } else {
        q / 10
    };
    Decimal::new(q, scale)
}

/// SQL LIKE with `%`, `_` and an escape character; characters match when their weights in
/// `coll` are equal (no PAD SPACE: LIKE counts trailing spaces, as MariaDB's does).
pub fn like(s: &str, p: &str, escape: char, coll: Collation) -> bool {
    let s: Vec<u128> = s.chars().map(|c| coll.char_key(c)).collect();
    let p: Vec<char> = p.chars().collect();
    fn go(s: &[u128], p: &[char], esc: char, coll: Collation) -> bool {
        let (mut si, mut pi) = (0, 0);
        let (mut star_p, mut star_s) = (None::<usize>, 0);
        while si < s.len() {
            if pi < p.len() {
                let c = p[pi];
                if c == '%' {
                    star_p = Some(pi);
                    star_s = si;
                    pi += 1;
                    continue;
                }
                let (lit, adv) = if c == esc && pi + 1 < p.len() {
                    (Some(p[pi + 1]), 2)
                } else if c == '_' {
                    (None, 1)
                } else {
                    (Some(c), 1)
                };
                if lit.is_none_or(|l| coll.char_key(l) == s[si]) {
                    si += 1;
                    pi += adv;
                    continue;
                }
            }
            match star_p {
                Some(sp) => {
                    pi = sp + 1;
                    star_s += 1;
                    si = star_s;
                }
                None => return false,
            }
        }
        while pi < p.len() && p[pi] == '%' {
            pi += 1;
        }
        pi == p.len()
    }
    go(&s, &p, escape, coll)
}

fn eval_all(args: &[Expr], row: &Row<'_>, env: &dyn Env) -> Result<Vec<Value>> {
    args.iter().map(|a| a.eval(row, env)).collect()
}

fn func(f: Func, args: &[Expr], row: &Row<'_>, env: &dyn Env) -> Result<Value> {
    let ev =
        |i: usize| -> Result<Value> { args.get(i).map_or(Ok(Value::Null), |a| a.eval(row, env)) };
    Ok(match f {
        Func::Concat => {
            let mut s = String::new();
            for a in args {
                match a.eval(row, env)? {
                    Value::Null => return Ok(Value::Null),
                    v => s.push_str(&types::to_text(v)),
                }
            }
            Value::Str(s)
        }
        Func::ConcatWs => {
            let sep = match ev(0)? {
                Value::Null => return Ok(Value::Null),
                v => types::to_text(v),
            };
            let mut parts = Vec::new();
            for a in &args[1..] {
                match a.eval(row, env)? {
                    Value::Null => {}
                    v => parts.push(types::to_text(v)),
                }
            }
            Value::Str(parts.join(&sep))
        }
        Func::Length => match ev(0)? {
            Value::Null => Value::Null,
            Value::Bytes(b) => Value::Int(b.len() as i64),
            v => Value::Int(types::to_text(v).len() as i64),
        },
        Func::CharLength => match ev(0)? {
            Value::Null => Value::Null,
            Value::Bytes(b) => Value::Int(b.len() as i64),
            v => Value::Int(types::to_text(v).chars().count() as i64),
        },
        // One character for one (MariaDB's case tables: 'ß' stays 'ß'); bytes unchanged.
        Func::Upper | Func::Lower => match ev(0)? {
            Value::Null => Value::Null,
            v @ Value::Bytes(_) => v,
            v => Value::Str(
                types::to_text(v)
                    .chars()
                    .map(|c| {
                        let mut m: Vec<char> = if f == Func::Upper {
                            c.to_uppercase().collect()
                        } else {
                            c.to_lowercase().collect()
                        };
                        if m.len() == 1 {
                            m.pop().unwrap_or(c)
                        } else {
                            c
                        }
                    })
                    .collect(),
            ),
        },
        Func::Coalesce => {
            for a in args {
                let v = a.eval(row, env)?;
                if !matches!(v, Value::Null) {
                    return Ok(v);
                }
            }
            Value::Null
        }
        Func::IfNull => match ev(0)? {
            Value::Null => ev(1)?,
            v => v,
        },
        Func::If => {
            if truth(&ev(0)?, env)? == Some(true) {
                ev(1)?
            } else {
                ev(2)?
            }
        }
        Func::NullIf | Func::Greatest | Func::Least => {
            // Bound as `Expr::CollFunc`; here only if built without a collation.
            return coll_func(f, args, Collation::Utf8mb4GeneralCi, row, env);
        }
        Func::Abs => match numeric(ev(0)?, NumKind::Double, env)? {
            Value::Null => Value::Null,
            Value::Int(i) => i
                .checked_abs()
                .map(Value::Int)
                .ok_or_else(|| range_err("BIGINT", "abs"))?,
            Value::UInt(u) => Value::UInt(u),
            Value::Decimal(d) => Value::Decimal(Decimal::new(d.unscaled.abs(), d.scale)),
            v => Value::Double(num(&v).abs()),
        },
        Func::Version => Value::Str(VERSION.into()),
        Func::Floor | Func::Ceil => {
            let floor = f == Func::Floor;
            let v = ev(0)?;
            // A TIME stays one, to whole seconds (toward minus or plus infinity).
            if let Value::Time(t) = v {
                let s = if floor {
                    t.micros.div_euclid(1_000_000)
                } else {
                    -(-t.micros).div_euclid(1_000_000)
                };
                return Ok(Value::Time(
                    crate::func::time::clip(i128::from(s) * 1_000_000).0,
                ));
            }
            match numeric(v, NumKind::Double, env)? {
                Value::Null => Value::Null,
                v @ (Value::Int(_) | Value::UInt(_)) => v,
                Value::Decimal(d) => {
                    let unit = 10i128.pow(u32::from(d.scale));
                    let q = d.unscaled.div_euclid(unit);
                    let r = d.unscaled.rem_euclid(unit);
                    let n = if r != 0 && !floor { q + 1 } else { q };
                    int_result(n, if floor { "floor" } else { "ceiling" })?
                }
                v => {
                    let x = num(&v);
                    Value::Double(if floor { x.floor() } else { x.ceil() })
                }
            }
        }
        Func::Repeat => match (ev(0)?, ev(1)?) {
            (Value::Null, _) | (_, Value::Null) => Value::Null,
            (s, n) => {
                let s = types::to_text(s);
                let n = num(&n).max(0.0) as usize;
                // max_allowed_packet bounds a result in MySQL (NULL with a warning past it).
                if s.len().saturating_mul(n) > 16 * 1024 * 1024 {
                    Value::Null
                } else {
                    Value::Str(s.repeat(n))
                }
            }
        },
        Func::Str(f, coll) => {
            let v = crate::func::string::eval(f, coll, eval_all(args, row, env)?, env)?;
            crate::func::take_raised()?;
            v
        }
        Func::Math(crate::func::MathFn::Rand) => {
            // The arguments' address identifies this call site's sequence (func/math.rs).
            let constant = args.iter().all(Expr::is_constant);
            let vals = eval_all(args, row, env)?;
            crate::func::math::rand(args.as_ptr() as usize, constant, &vals, env)
        }
        Func::Math(f) => {
            let v = crate::func::math::eval(f, eval_all(args, row, env)?, env)?;
            crate::func::take_raised()?;
            v
        }
        Func::Time(f) => {
            let v = crate::func::datetime::eval(f, eval_all(args, row, env)?, env)?;
            crate::func::take_raised()?;
            v
        }
        Func::Json(f) => {
            let v = crate::func::json::eval(f, eval_all(args, row, env)?, env)?;
            crate::func::take_raised()?;
            v
        }
        Func::Cast(to) => {
            let v = crate::func::cast::eval(to, eval_all(args, row, env)?, env)?;
            crate::func::take_raised()?;
            v
        }
        Func::UserLock(f) => env.user_lock(f, eval_all(args, row, env)?)?,
        Func::Misc(f) => crate::func::misc::eval(f, eval_all(args, row, env)?, env)?,
        Func::Sleep => {
            // In slices, so that KILL (QUERY or CONNECTION, a client gone) ends it at once
            // rather than after up to an hour, with 1317 as in MariaDB.
            let secs = num(&ev(0)?).clamp(0.0, 3600.0);
            let end = std::time::Instant::now() + std::time::Duration::from_secs_f64(secs);
            loop {
                if env.interrupted() {
                    return Err(SqlError::Interrupted);
                }
                let left = end.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    break Value::Int(0);
                }
                std::thread::sleep(left.min(std::time::Duration::from_millis(50)));
            }
        }
        Func::Benchmark => {
            // BENCHMARK(count, expr): evaluates expr count times, answers 0; NULL for a
            // NULL or negative count (MariaDB warns 1411 for a negative one).
            let count = match ev(0)? {
                Value::Null => return Ok(Value::Null),
                v => num(&v),
            };
            if count < 0.0 {
                env.warn(
                    crate::diag::Level::Warning,
                    1411,
                    format!(
                        "Incorrect count value: '{}' for function benchmark",
                        count as i64
                    ),
                )?;
                return Ok(Value::Null);
            }
            for i in 0..count as u64 {
                if i % 1024 == 0 && env.interrupted() {
                    break;
                }
                ev(1)?;
            }
            Value::Int(0)
        }
    })
}

/// NULLIF, GREATEST and LEAST: strings compared in `coll` (the binder's, from the
/// arguments' collations).
fn coll_func(
    f: Func,
    args: &[Expr],
    coll: Collation,
    row: &Row<'_>,
    env: &dyn Env,
) -> Result<Value> {
    if f == Func::NullIf {
        let a = args.first().map_or(Ok(Value::Null), |a| a.eval(row, env))?;
        let b = args.get(1).map_or(Ok(Value::Null), |a| a.eval(row, env))?;
        if matches!(a, Value::Null) || matches!(b, Value::Null) {
            return Ok(a);
        }
        check_compared(&a, &b, env)?;
        return Ok(if compare(&a, &b, coll) == Ordering::Equal {
            Value::Null
        } else {
            a
        });
    }
    let vals = args
        .iter()
        .map(|a| a.eval(row, env))
        .collect::<Result<Vec<_>>>()?;
    if vals.iter().any(|v| matches!(v, Value::Null)) {
        return Ok(Value::Null);
    }
    // With a number among them, the strings compare as DOUBLEs (1292 if not numbers).
    if vals.iter().any(types::is_numeric) {
        for v in &vals {
            check_number(v, NumKind::Double, env)?;
        }
    }
    let mut best: Option<&Value> = None;
    for v in &vals {
        best = Some(match best {
            None => v,
            Some(b) => {
                let o = compare(v, b, coll);
                let take = if f == Func::Greatest {
                    o == Ordering::Greater
                } else {
                    o == Ordering::Less
                };
                if take {
                    v
                } else {
                    b
                }
            }
        });
    }
    // The result has the type of all the arguments (func/types.rs): 2 of GREATEST(1.5, 2)
    // is 2.0, LEAST(d, f) of a DECIMAL and a DOUBLE a double.
    Ok(match best {
        Some(b) => crate::func::math::in_common_type(b.clone(), &vals),
        None => Value::Null,
    })
}
