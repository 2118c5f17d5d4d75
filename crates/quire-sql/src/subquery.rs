//! Subqueries in expressions: a scalar `(SELECT …)`, `x IN (SELECT …)`, `EXISTS (SELECT …)`
//! and the quantified comparisons `x op ANY | SOME | ALL (SELECT …)`.
//!
//! ```text
//!   bind:  a name the subquery's own FROM lacks is looked up in the enclosing queries,
//!          innermost first ([`Outer::capture`]); found L levels up, it becomes
//!          Expr::Outer(k) and each query in between passes it down as one of its captures
//!   eval:  captures evaluated over the current row ──▶ Env::subquery ──▶ SubRunner:
//!          the statement's cache, or one run of the subquery's plan (exec::select) on
//!          the statement's read view
//! ```
//!
//! Invariants:
//! 1. A subquery's `captures` are expressions over the enclosing query's row; inside its
//!    plan, `Expr::Outer(k)` is the value of `captures[k]` for the run, and nothing else
//!    in it reads the enclosing row. So a subquery without captures is *uncorrelated*.
//! 2. A subquery runs at most once per statement for each distinct list of outer values
//!    (exact values, not collation-equal ones): an uncorrelated one at most once, at its
//!    first use (so one on an empty outer table never runs, as in MariaDB); a correlated
//!    one's results are kept up to [`CACHE_MAX`] entries (MariaDB's subquery cache).
//! 3. Every run of the statement's subqueries reads through one read view, chosen by
//!    the statement before it starts (`SubRunner::set_view`): the transaction's view
//!    inside a transaction (it sees the transaction's own changes), else one snapshot.
//!    A subquery never borrows the transaction, so it can run inside a locking scan.
//! 4. `x IN (S)` is MySQL's: FALSE for an empty S (whatever x), NULL for a NULL x, TRUE
//!    if some row equals x, else NULL if S holds a NULL, else FALSE. NOT IN is its NOT.
//!    `ANY` and `ALL` are the same three-valued OR and AND of the comparisons.

use std::cell::{Cell, OnceCell, RefCell};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use quire_engine::row::{Collation, Value};
use quire_engine::table::{Db, Snapshot, Table};

use crate::bind::Scope;
use crate::diag::Level;
use crate::error::{Result, SqlError};
use crate::exec::{self, SelectPlan, Txn};
use crate::expr::{BinOp, Env, Expr, Row, SessionFn};
use crate::func::types::Ty;
use crate::meta::{ColumnMeta, RowSink, SinkError};
use crate::types::{self, compare};

/// Correlated results kept per subquery (per statement); past it, runs are not cached.
pub const CACHE_MAX: usize = 4096;

/// A planned subquery.
#[derive(Debug)]
pub struct Subquery {
    pub plan: SelectPlan,
    /// What the enclosing row passes in: `Expr::Outer(k)` inside is `captures[k]`.
    pub captures: Vec<Expr>,
    /// The type of its first column (a scalar subquery's type).
    pub ty: Ty,
}

impl Subquery {
    pub fn correlated(&self) -> bool {
        !self.captures.is_empty()
    }
}

/// Plans compare by identity: two subqueries are never "the same expression" (a
/// subquery in the select list is not a GROUP BY expression by being equal to one).
impl PartialEq for Subquery {
    fn eq(&self, other: &Subquery) -> bool {
        std::ptr::eq(self, other)
    }
}

/// How an expression uses its subquery.
#[derive(Debug, Clone, PartialEq)]
pub enum SubKind {
    /// `(SELECT x …)`: its one value, NULL for no row, 1242 for more than one.
    Scalar,
    /// `EXISTS (SELECT …)`.
    Exists,
    /// `e IN (SELECT x …)` (NOT IN is `Expr::Not` of it).
    In { e: Box<Expr>, coll: Collation },
    /// `(e1, e2, …) IN (SELECT x1, x2, …)` and `= ANY`: true if a row equals the row,
    /// else NULL if a comparison was NULL, else false ([`crate::expr::compare_rows`]);
    /// `colls` is each column pair's collation.
    RowIn {
        es: Vec<Expr>,
        colls: Vec<Collation>,
    },
    /// `e op ANY (SELECT x …)`, or with `all` `e op ALL (…)`.
    Quantified {
        e: Box<Expr>,
        op: BinOp,
        all: bool,
        coll: Collation,
    },
}

impl SubKind {
    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        match self {
            SubKind::In { e, .. } | SubKind::Quantified { e, .. } => e.walk(f),
            SubKind::RowIn { es, .. } => es.iter().for_each(|e| e.walk(f)),
            SubKind::Scalar | SubKind::Exists => {}
        }
    }

    /// The rows a run needs to answer (the rest are not read).
    fn need(&self) -> usize {
        match self {
            SubKind::Exists => 1,
            SubKind::Scalar => 2,
            _ => usize::MAX,
        }
    }
}

/// A subquery's rows (or as many as were needed).
#[derive(Debug, Default)]
pub struct Materialized {
    pub rows: Vec<Vec<Value>>,
    /// The set of first-column values, hashed when they are all of one kind of value.
    set: OnceCell<InSet>,
}

#[derive(Debug)]
struct InSet {
    has_null: bool,
    /// The values' kind and their keys, if every non-NULL value is an exact number or
    /// every one is a string (then equality is equality of value keys).
    hashed: Option<(Kind, quire_engine::hash::Set<Vec<u8>>)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Exact,
    Text,
}

fn kind_of(v: &Value) -> Option<Kind> {
    match v {
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) => Some(Kind::Exact),
        Value::Str(_) => Some(Kind::Text),
        _ => None,
    }
}

impl Materialized {
    fn set(&self, coll: Collation) -> &InSet {
        self.set.get_or_init(|| {
            let firsts = self.rows.iter().filter_map(|r| r.first());
            let has_null = firsts.clone().any(|v| matches!(v, Value::Null));
            let mut kinds = firsts
                .clone()
                .filter(|v| !matches!(v, Value::Null))
                .map(kind_of);
            let kind = match kinds.next() {
                Some(Some(k)) if kinds.all(|x| x == Some(k)) => Some(k),
                _ => None,
            };
            let hashed = kind.map(|k| {
                let keys = firsts
                    .filter(|v| !matches!(v, Value::Null))
                    .map(|v| exec::value_key(std::slice::from_ref(v), &[coll]))
                    .collect();
                (k, keys)
            });
            InSet { has_null, hashed }
        })
    }
}

/// Evaluates a subquery expression over `row` (invariant 4).
pub fn eval(kind: &SubKind, q: &Arc<Subquery>, row: &Row<'_>, env: &dyn Env) -> Result<Value> {
    let left = match kind {
        SubKind::In { e, .. } | SubKind::Quantified { e, .. } => Some(e.eval(row, env)?),
        _ => None,
    };
    let left_row = match kind {
        SubKind::RowIn { es, .. } => es
            .iter()
            .map(|e| e.eval(row, env))
            .collect::<Result<Vec<_>>>()?,
        _ => Vec::new(),
    };
    let outer = q
        .captures
        .iter()
        .map(|c| c.eval(row, env))
        .collect::<Result<Vec<_>>>()?;
    let m = env.subquery(q, outer, kind.need())?;
    let first = |r: &Vec<Value>| r.first().cloned().unwrap_or(Value::Null);
    Ok(match kind {
        SubKind::Scalar => match m.rows.as_slice() {
            [] => Value::Null,
            [r] => first(r),
            _ => return Err(SqlError::SubqueryRows),
        },
        SubKind::Exists => Value::Int(i64::from(!m.rows.is_empty())),
        SubKind::RowIn { colls, .. } => {
            let mut saw_null = false;
            for r in &m.rows {
                match crate::expr::compare_rows(BinOp::Eq, &left_row, r, colls, env)? {
                    Value::Null => saw_null = true,
                    v if types::truthy(&v) == Some(true) => return Ok(Value::Int(1)),
                    _ => {}
                }
            }
            if saw_null {
                Value::Null
            } else {
                Value::Int(0)
            }
        }
        SubKind::In { coll, .. } => {
            let v = left.unwrap_or(Value::Null);
            if m.rows.is_empty() {
                return Ok(Value::Int(0));
            }
            if matches!(v, Value::Null) {
                return Ok(Value::Null);
            }
            let set = m.set(*coll);
            let found = match &set.hashed {
                Some((k, keys)) if kind_of(&v) == Some(*k) => {
                    keys.contains(&exec::value_key(std::slice::from_ref(&v), &[*coll]))
                }
                _ => {
                    let mut found = false;
                    for w in m.rows.iter().filter_map(|r| r.first()) {
                        if matches!(w, Value::Null) {
                            continue;
                        }
                        crate::expr::check_compared(&v, w, env)?;
                        if compare(&v, w, *coll) == Ordering::Equal {
                            found = true;
                            break;
                        }
                    }
                    found
                }
            };
            if found {
                Value::Int(1)
            } else if set.has_null {
                Value::Null
            } else {
                Value::Int(0)
            }
        }
        SubKind::Quantified { op, all, coll, .. } => {
            let v = left.unwrap_or(Value::Null);
            if m.rows.is_empty() {
                return Ok(Value::Int(i64::from(*all)));
            }
            if matches!(v, Value::Null) {
                return Ok(Value::Null);
            }
            let mut saw_null = false;
            for w in m.rows.iter().filter_map(|r| r.first()) {
                if matches!(w, Value::Null) {
                    saw_null = true;
                    continue;
                }
                crate::expr::check_compared(&v, w, env)?;
                let t = types::truthy(&crate::expr::compare_op(*op, &v, w, *coll));
                match (t, *all) {
                    (Some(true), false) => return Ok(Value::Int(1)),
                    (Some(false), true) => return Ok(Value::Int(0)),
                    (None, _) => saw_null = true,
                    _ => {}
                }
            }
            if saw_null {
                Value::Null
            } else {
                Value::Int(i64::from(*all))
            }
        }
    })
}

/// The environment of one run of a subquery: its outer values; the rest is the
/// statement's.
pub struct SubEnv<'e> {
    pub parent: &'e dyn Env,
    pub outer: &'e [Value],
}

impl Env for SubEnv<'_> {
    fn set_last_insert_id(&self, v: u64) -> Result<()> {
        self.parent.set_last_insert_id(v)
    }
    fn param(&self, i: usize) -> Result<Value> {
        self.parent.param(i)
    }
    fn session(&self, f: &SessionFn) -> Result<Value> {
        self.parent.session(f)
    }
    fn time_zone(&self) -> crate::tz::Zone {
        self.parent.time_zone()
    }
    fn interrupted(&self) -> bool {
        self.parent.interrupted()
    }
    fn virtual_rows(&self, t: crate::infoschema::InfoTable) -> Result<Vec<Vec<Value>>> {
        self.parent.virtual_rows(t)
    }
    fn warn(&self, level: Level, code: u16, message: String) -> Result<()> {
        self.parent.warn(level, code, message)
    }
    fn outer(&self, k: usize) -> Result<Value> {
        self.outer
            .get(k)
            .cloned()
            .ok_or_else(|| SqlError::Unsupported("an outer reference out of range".into()))
    }
    fn subquery(&self, q: &Subquery, outer: Vec<Value>, need: usize) -> Result<Rc<Materialized>> {
        self.parent.subquery(q, outer, need)
    }
    fn work_rows(&self, id: usize) -> Result<Rc<Vec<Vec<Value>>>> {
        self.parent.work_rows(id)
    }
}

/// Collects a run's rows, stopping (with an error it recognizes) past `need`.
struct Collect {
    rows: Vec<Vec<Value>>,
    need: usize,
    stopped: bool,
}

impl RowSink for Collect {
    fn columns(&mut self, _: &[ColumnMeta]) -> std::result::Result<(), SinkError> {
        Ok(())
    }
    fn row(&mut self, row: &[Value]) -> std::result::Result<(), SinkError> {
        self.rows.push(row.to_vec());
        if self.rows.len() >= self.need {
            self.stopped = true;
            return Err(SinkError("enough rows".into()));
        }
        Ok(())
    }
}

/// A subquery (by address: plans are shared, not copied, while a statement runs) and its
/// outer values ([`exact_key`]).
type CacheKey = (usize, Vec<u8>);

/// Runs a statement's subqueries (invariants 2 and 3).
pub struct SubRunner<'d> {
    db: &'d Db,
    /// `None`: not chosen yet (a snapshot is taken at the first run); `Some(None)`: the
    /// newest versions (READ UNCOMMITTED).
    view: RefCell<Option<Option<Snapshot>>>,
    tables: RefCell<HashMap<usize, Rc<Vec<Table<'d>>>>>,
    cache: RefCell<HashMap<CacheKey, Rc<Materialized>>>,
    runs: Cell<u64>,
    /// The instance's count of runs.
    total: Option<&'d std::sync::atomic::AtomicU64>,
}

impl<'d> SubRunner<'d> {
    pub fn new(db: &'d Db, total: Option<&'d std::sync::atomic::AtomicU64>) -> SubRunner<'d> {
        SubRunner {
            total,
            db,
            view: RefCell::new(None),
            tables: RefCell::new(HashMap::new()),
            cache: RefCell::new(HashMap::new()),
            runs: Cell::new(0),
        }
    }

    /// The read view of the statement's subqueries (`None`: the newest versions).
    pub fn set_view(&self, view: Option<Snapshot>) {
        *self.view.borrow_mut() = Some(view);
    }

    /// How many times a subquery plan was run (not answered from the cache).
    pub fn runs(&self) -> u64 {
        self.runs.get()
    }

    fn open(&self, id: usize, plan: &SelectPlan) -> Result<Rc<Vec<Table<'d>>>> {
        if let Some(t) = self.tables.borrow().get(&id) {
            return Ok(t.clone());
        }
        let mut opened = Vec::new();
        for t in plan.source.tables() {
            opened.push(self.db.table(&t.db, &t.name).map_err(|e| match e {
                quire_engine::table::DbError::NoSuchTable(_)
                | quire_engine::table::DbError::NoSuchDatabase(_) => SqlError::NoSuchTable {
                    db: t.db.clone(),
                    table: t.name.clone(),
                },
                e => e.into(),
            })?);
        }
        let opened = Rc::new(opened);
        self.tables.borrow_mut().insert(id, opened.clone());
        Ok(opened)
    }

    /// Subquery `q`'s rows for `outer` (at least `need` of them, if it has that many).
    pub fn run(
        &self,
        q: &Subquery,
        outer: Vec<Value>,
        need: usize,
        env: &dyn Env,
    ) -> Result<Rc<Materialized>> {
        let id = q as *const Subquery as usize;
        let key = (id, exact_key(&outer));
        if let Some(m) = self.cache.borrow().get(&key) {
            return Ok(m.clone());
        }
        let tables = self.open(id, &q.plan)?;
        let view = self
            .view
            .borrow_mut()
            .get_or_insert_with(|| Some(self.db.snapshot()))
            .clone();
        let sub_env = SubEnv {
            parent: env,
            outer: &outer,
        };
        let mut sink = Collect {
            rows: Vec::new(),
            need,
            stopped: false,
        };
        let r = exec::select(
            &q.plan,
            &tables,
            &mut Txn::Snapshot(view),
            &sub_env,
            &mut sink,
        );
        if let Err(e) = r {
            if !sink.stopped {
                return Err(e);
            }
        }
        self.runs.set(self.runs.get() + 1);
        if let Some(t) = self.total {
            t.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let m = Rc::new(Materialized {
            rows: sink.rows,
            set: OnceCell::new(),
        });
        let mut cache = self.cache.borrow_mut();
        if !q.correlated() || cache.len() < CACHE_MAX {
            cache.insert(key, m.clone());
        }
        Ok(m)
    }
}

/// A key equal only for identical values ('a' and 'A', 1 and 1.0 differ): a subquery may
/// tell them apart.
fn exact_key(vals: &[Value]) -> Vec<u8> {
    let mut k = Vec::new();
    for v in vals {
        k.extend_from_slice(format!("{v:?}").as_bytes());
        k.push(0);
    }
    k
}

/// The query levels a subquery's names may reach beyond its own FROM: the enclosing
/// query's scope, and (if that one is a subquery too) its own [`Outer`].
pub struct Outer<'a> {
    pub scope: Option<&'a Scope>,
    pub up: Option<&'a Outer<'a>>,
    /// The subquery's captures: expressions over the enclosing query's row.
    pub captures: RefCell<Vec<Expr>>,
}

impl<'a> Outer<'a> {
    pub fn new(scope: Option<&'a Scope>, up: Option<&'a Outer<'a>>) -> Outer<'a> {
        Outer {
            scope,
            up,
            captures: RefCell::new(Vec::new()),
        }
    }

    /// `[db.][qualifier.]name` as an outer reference (`Expr::Outer`), if an enclosing
    /// query has it; 1052 if one has it twice.
    pub fn capture(
        &self,
        db: Option<&str>,
        qualifier: Option<&str>,
        name: &str,
        context: &str,
    ) -> Result<Option<Expr>> {
        let here = match self.scope {
            Some(s) => match s.resolve_in(db, qualifier, name, context) {
                Ok(c) => Some((Expr::Column(c), s.columns[c].clone())),
                Err(SqlError::UnknownColumn { .. }) => None,
                Err(e) => return Err(e),
            },
            None => None,
        };
        let (e, col) = match here {
            Some(x) => x,
            None => match self.up {
                Some(up) => match up.capture(db, qualifier, name, context)? {
                    Some(Expr::Outer(k, col)) => (Expr::Outer(k, col.clone()), *col),
                    Some(other) => return Ok(Some(other)),
                    None => return Ok(None),
                },
                None => return Ok(None),
            },
        };
        let mut caps = self.captures.borrow_mut();
        let k = match caps.iter().position(|c| *c == e) {
            Some(k) => k,
            None => {
                caps.push(e);
                caps.len() - 1
            }
        };
        Ok(Some(Expr::Outer(k, Box::new(col))))
    }
}

/// Every table plan `p` reads, its subqueries', derived tables' and union members'
/// included (metadata locks, the 1093 check).
pub fn plan_tables<'p>(p: &'p SelectPlan, out: &mut Vec<&'p exec::TableRef>) {
    use crate::plan::join::Member;
    match &p.source {
        exec::Source::Table(t) => out.push(t),
        exec::Source::Join(j) => {
            for m in &j.members {
                match m {
                    Member::Table(t) => out.push(t),
                    Member::Derived(d) => plan_tables(&d.plan, out),
                    Member::Seq { .. } => {}
                }
            }
        }
        exec::Source::Union(u) => u.members.iter().for_each(|m| plan_tables(m, out)),
        exec::Source::Recursive(r) => r
            .anchors
            .iter()
            .chain(&r.steps)
            .for_each(|m| plan_tables(m, out)),
        exec::Source::Dual
        | exec::Source::Seq { .. }
        | exec::Source::Virtual(_)
        | exec::Source::WorkTable(_) => {}
    }
    for q in &p.subqueries {
        plan_tables(&q.plan, out);
    }
}

/// The plans of every subquery in an expression reachable from `p` (in its derived tables
/// and union members too, and nested).
pub fn subquery_plans<'p>(p: &'p SelectPlan, out: &mut Vec<&'p SelectPlan>) {
    use crate::plan::join::Member;
    match &p.source {
        exec::Source::Join(j) => {
            for m in &j.members {
                if let Member::Derived(d) = m {
                    subquery_plans(&d.plan, out);
                }
            }
        }
        exec::Source::Union(u) => u.members.iter().for_each(|m| subquery_plans(m, out)),
        exec::Source::Recursive(r) => r
            .anchors
            .iter()
            .chain(&r.steps)
            .for_each(|m| subquery_plans(m, out)),
        _ => {}
    }
    for q in &p.subqueries {
        out.push(&q.plan);
        subquery_plans(&q.plan, out);
    }
}

/// Whether running `p` evaluates a subquery in an expression.
pub fn has_subqueries(p: &SelectPlan) -> bool {
    let mut v = Vec::new();
    subquery_plans(p, &mut v);
    !v.is_empty()
}
